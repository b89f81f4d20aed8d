"""Laws of the l2-Laplace sampler and mechanism (dpaudit.mechanisms.l2_laplace).

Density ∝ exp(-||x||_2 / s) in R^d means: norm ~ Gamma(shape d, scale s), direction uniform on the
sphere and independent of the norm; in d = 1 it is Laplace(s). Each law is tested separately.
Statistical tests use fixed seeds and require p-values > 1e-3 (Bonferroni-divided within a family):
a correct sampler fails with probability at most 1e-3; the seed makes the outcome deterministic.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpaudit.mechanisms.events import EpsilonDeltaDpEvent
from dpaudit.mechanisms.l2_laplace import (
    L2LaplaceMechanism,
    sample_l2_laplace,
    sample_uniform_direction,
)

ALPHA = 1e-3
N = 20_000


@pytest.mark.parametrize("d, scale", [(1, 0.3), (2, 1.0), (5, 2.5), (40, 0.1)])
def test_norm_is_gamma_d_scale(d: int, scale: float) -> None:
    x = sample_l2_laplace(scale, N, d, np.random.default_rng(100 + d))
    assert x.shape == (N, d)
    r = np.linalg.norm(x, axis=1)
    assert stats.kstest(r, stats.gamma(a=d, scale=scale).cdf).pvalue > ALPHA / 4


def test_direction_in_three_dimensions_projects_to_uniform() -> None:
    # Archimedes: the projection of a uniform point on S^2 onto any fixed axis is Uniform(-1, 1).
    x = sample_l2_laplace(1.7, N, 3, np.random.default_rng(7))
    u = x / np.linalg.norm(x, axis=1, keepdims=True)
    axis = np.array([1.0, 2.0, -2.0]) / 3.0
    for proj in (u[:, 0], u @ axis):  # Bonferroni over the two axes
        assert stats.kstest(proj, stats.uniform(loc=-1.0, scale=2.0).cdf).pvalue > ALPHA / 2


@pytest.mark.parametrize("d", [2, 5, 12])
def test_direction_is_rotation_invariant(d: int) -> None:
    # For u uniform on S^{d-1} and any fixed unit vector v, (u . v)^2 ~ Beta(1/2, (d-1)/2). Checked
    # on a coordinate axis and on a random fixed direction (Bonferroni over 2 axes x 3 dimensions).
    rng = np.random.default_rng(30 + d)
    x = sample_l2_laplace(0.5, N, d, rng)
    u = x / np.linalg.norm(x, axis=1, keepdims=True)
    v = rng.normal(size=d)
    v /= np.linalg.norm(v)
    law = stats.beta(0.5, (d - 1) / 2.0).cdf
    for proj in (u[:, 0], u @ v):
        assert stats.kstest(proj ** 2, law).pvalue > ALPHA / 6
    # Sign symmetry: the sign of u . v is a fair coin (exact binomial test).
    assert stats.binomtest(int(np.sum(u @ v > 0)), N).pvalue > ALPHA / 3


def test_norm_and_direction_are_independent() -> None:
    # Chi-square test of independence on a 3 x 3 table of (norm tercile, u_1^2 tercile).
    x = sample_l2_laplace(1.0, N, 4, np.random.default_rng(12))
    r = np.linalg.norm(x, axis=1)
    c = (x[:, 0] / r) ** 2
    r_bin = np.searchsorted(np.quantile(r, [1 / 3, 2 / 3]), r)
    c_bin = np.searchsorted(np.quantile(c, [1 / 3, 2 / 3]), c)
    table = np.zeros((3, 3))
    np.add.at(table, (r_bin, c_bin), 1)
    assert stats.chi2_contingency(table).pvalue > ALPHA


def test_one_dimension_is_laplace() -> None:
    x = sample_l2_laplace(2.0, N, 1, np.random.default_rng(2))
    assert stats.kstest(x[:, 0], stats.laplace(scale=2.0).cdf).pvalue > ALPHA
    # The mechanism on scalar data is the Laplace mechanism with the same scale.
    out = L2LaplaceMechanism(1.0, 2.0).sample(-3.0, N, np.random.default_rng(6))
    assert out.shape == (N,)
    assert stats.kstest(out, stats.laplace(loc=-3.0, scale=2.0).cdf).pvalue > ALPHA


def test_uniform_direction_rows_have_unit_norm() -> None:
    u = sample_uniform_direction(1000, 7, np.random.default_rng(0))
    np.testing.assert_allclose(np.linalg.norm(u, axis=1), 1.0, rtol=1e-14)
    signs = sample_uniform_direction(2000, 1, np.random.default_rng(1))[:, 0]
    assert set(np.unique(signs)) == {-1.0, 1.0}
    assert sample_l2_laplace(1.0, 0, 3, np.random.default_rng(0)).shape == (0, 3)


def test_mechanism_privacy_statement_and_shapes() -> None:
    mech = L2LaplaceMechanism.from_epsilon(sensitivity=2.0, epsilon=0.5)
    assert mech.scale == pytest.approx(4.0, rel=1e-15)
    assert mech.epsilon == pytest.approx(0.5, rel=1e-15)
    assert mech.sensitivity.norm == "l2"
    assert mech.dp_event() == EpsilonDeltaDpEvent(0.5, 0.0)
    data = np.array([1.0, 2.0, 3.0])
    out = mech.sample(data, N, np.random.default_rng(3))
    assert out.shape == (N, 3)
    r = np.linalg.norm(out - data, axis=1)
    assert stats.kstest(r, stats.gamma(a=3, scale=4.0).cdf).pvalue > ALPHA
    d = mech.describe()
    assert d["name"] == "l2-laplace" and d["epsilon"] == pytest.approx(0.5)


def test_density_ratio_on_neighbours_is_bounded_by_epsilon_and_attained() -> None:
    # log p(y - f) - log p(y - f') = (||y - f'|| - ||y - f||) / s, in [-Delta/s, Delta/s] by the
    # triangle inequality, with equality on the ray from f' through f beyond f.
    mech = L2LaplaceMechanism(sensitivity=1.0, scale=0.8)
    rng = np.random.default_rng(5)
    f = rng.normal(size=4)
    step = rng.normal(size=4)
    f_prime = f + step / np.linalg.norm(step)  # ||f - f'|| = Delta = 1
    y = f + sample_l2_laplace(0.8, 5_000, 4, rng)
    log_ratio = (np.linalg.norm(y - f_prime, axis=1) - np.linalg.norm(y - f, axis=1)) / mech.scale
    assert np.max(np.abs(log_ratio)) <= mech.epsilon + 1e-12
    on_ray = f + 3.0 * (f - f_prime)
    attained = (np.linalg.norm(on_ray - f_prime) - np.linalg.norm(on_ray - f)) / mech.scale
    assert attained == pytest.approx(mech.epsilon, rel=1e-12)


def test_bad_inputs_raise() -> None:
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="scale"):
        sample_l2_laplace(0.0, 3, 2, rng)
    with pytest.raises(ValueError, match="d"):
        sample_l2_laplace(1.0, 3, 0, rng)
    with pytest.raises(ValueError, match="n"):
        sample_l2_laplace(1.0, -1, 2, rng)
    with pytest.raises(TypeError, match="rng"):
        sample_l2_laplace(1.0, 3, 2, "seed")
    with pytest.raises(ValueError, match="sensitivity"):
        L2LaplaceMechanism(-1.0, 1.0)
    with pytest.raises(ValueError, match="epsilon"):
        L2LaplaceMechanism.from_epsilon(1.0, 0.0)
    mech = L2LaplaceMechanism(1.0, 1.0)
    with pytest.raises(ValueError, match="data"):
        mech.sample([1.0, math.nan], 3, rng)
    with pytest.raises(ValueError, match="data"):
        mech.sample(np.zeros((2, 3)), 3, rng)
    with pytest.raises(ValueError, match="n"):
        mech.sample([1.0, 2.0], 0, rng)
