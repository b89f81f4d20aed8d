"""Discrete Laplace and discrete Gaussian noise (Canonne, Kamath & Steinke 2020): laws and audits.

Law tests compare sampled counts with the exact pmf by a chi-square test at fixed seeds; the
threshold is the 1e-4 upper quantile, so a correct sampler fails one of them at a random seed with
probability about 1e-4 each. The audits use the engine at its default alpha = 0.05.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from dpaudit.blackbox.empirical_audit import audit
from dpaudit.mechanisms.discrete import (bernoulli_exp_neg, discrete_gaussian_delta,
                                         discrete_gaussian_pmf, discrete_gaussian_sigma_for,
                                         discrete_laplace_pmf, sample_discrete_gaussian,
                                         sample_discrete_laplace)
from dpaudit.mechanisms.gaussian import GaussianMechanism
from dpaudit.mechanisms.laplace import LaplaceMechanism
from dpaudit.mechanisms.tree_aggregation import (NodeNoise, TreeAggregationMechanism,
                                                 max_nodes_per_leaf)


def _chi_square_pvalue(samples: np.ndarray, pmf) -> float:
    """Chi-square goodness of fit over the integers, tails pooled so every cell expects >= 5."""
    n = samples.size
    lo, hi = int(samples.min()), int(samples.max())
    z = np.arange(lo - 50, hi + 51)
    expected = pmf(z) * n
    observed = np.bincount(samples - (lo - 50), minlength=z.size)[: z.size]
    keep = expected >= 5
    first, last = np.flatnonzero(keep)[[0, -1]]
    obs = np.r_[observed[: first + 1].sum(), observed[first + 1: last], observed[last:].sum()]
    exp = np.r_[expected[: first + 1].sum(), expected[first + 1: last], expected[last:].sum()]
    exp *= obs.sum() / exp.sum()  # mass beyond +-50 of the sample range is negligible
    return float(stats.chisquare(obs, exp).pvalue)


@pytest.mark.parametrize("num, den", [(0, 1), (1, 3), (1, 1), (5, 2), (7, 100)])
def test_bernoulli_exp_neg_has_probability_exp_minus_gamma(num, den) -> None:
    rng = np.random.default_rng(1)
    n = 200_000
    draws = bernoulli_exp_neg(np.full(n, num, np.int64), den, rng)
    p = math.exp(-num / den)
    # Two-sided exact binomial test at 1e-4.
    assert stats.binomtest(int(draws.sum()), n, p).pvalue > 1e-4


@pytest.mark.parametrize("t", [Fraction(1, 3), Fraction(1), Fraction(7, 2), Fraction(20)])
def test_discrete_laplace_law(t) -> None:
    x = sample_discrete_laplace(t, 200_000, np.random.default_rng(2))
    assert x.dtype == np.int64
    assert _chi_square_pvalue(x, lambda z: discrete_laplace_pmf(z, float(t))) > 1e-4


@pytest.mark.parametrize("sigma2", [Fraction(1, 4), Fraction(1), Fraction(9), Fraction(1000, 7)])
def test_discrete_gaussian_law(sigma2) -> None:
    x = sample_discrete_gaussian(sigma2, 200_000, np.random.default_rng(3))
    s = math.sqrt(float(sigma2))
    assert _chi_square_pvalue(x, lambda z: discrete_gaussian_pmf(z, s)) > 1e-4


def test_discrete_gaussian_delta_matches_cks20_theorem_7() -> None:
    # CKS20 Thm 7: delta = P[Y > eps s^2/D - D/2] - e^eps P[Y > eps s^2/D + D/2], Y ~ N_Z(0, s^2).
    s, shift, eps = 2.5, 1, 0.7
    z = np.arange(-200, 201)
    pmf = discrete_gaussian_pmf(z, s)
    closed = (pmf[z > eps * s * s / shift - shift / 2].sum()
              - math.exp(eps) * pmf[z > eps * s * s / shift + shift / 2].sum())
    assert discrete_gaussian_delta(eps, s, shift) == pytest.approx(closed, rel=1e-10)


def test_mechanisms_release_grid_values_and_state_their_privacy() -> None:
    lap = LaplaceMechanism(1.0, 2.0, noise="discrete", granularity=0.5)
    out = lap.sample(0.3, 1_000, np.random.default_rng(0))
    assert np.all(out / 0.5 == np.round(out / 0.5))            # on the grid 0.5 Z
    assert lap.epsilon == pytest.approx(0.5) and lap.noise == "discrete"
    sigma = discrete_gaussian_sigma_for(1.0, 1e-5, 1.0, 0.25)
    gau = GaussianMechanism(1.0, sigma, noise="discrete", granularity=0.25)
    assert gau.exact_delta(1.0) <= 1e-5 < gau.exact_delta(0.99)
    with pytest.raises(TypeError, match="granularity"):
        LaplaceMechanism(1.0, 1.0, noise="discrete")
    with pytest.raises(ValueError, match="noise must be"):
        GaussianMechanism(1.0, 1.0, noise="exact")
    with pytest.raises(ValueError, match="granularity"):
        LaplaceMechanism(1.0, 1e9, noise="discrete", granularity=1e-3)


def test_audit_of_discrete_laplace_is_tight_and_catches_half_scale() -> None:
    # Calibrated: 1-DP on the grid 0.25 Z; the pair (0, 1) attains it. The bound is valid at
    # 95% (so <= 1 but for a 5% chance) and close to 1 at 2 x 10^5 runs.
    good = LaplaceMechanism(1.0, 1.0, noise="discrete", granularity=0.25)
    r = audit(good.sample, 0.0, 1.0, epsilon=1.0, samples=200_000, seed=0)
    assert r.verdict == "not violated" and 0.9 < r.epsilon_lower_bound <= 1.0
    bad = LaplaceMechanism(1.0, 0.5, noise="discrete", granularity=0.25)  # truly 2-DP
    r = audit(bad.sample, 0.0, 1.0, epsilon=1.0, samples=50_000, seed=0)
    assert r.verdict == "violated" and 1.5 < r.epsilon_lower_bound <= 2.0


def test_discrete_tree_aggregation_is_audited_like_the_float_one() -> None:
    T = 4
    k = max_nodes_per_leaf(T)
    noise = NodeNoise.discrete_gaussian(2.0, 0.5)
    tree = TreeAggregationMechanism(T, 1, NodeNoise.discrete_laplace(k / 1.0, 0.5), 1.0)
    out = tree.sample(np.eye(T)[:, :1], 200, np.random.default_rng(0))
    assert np.all(out * 2 == np.round(out * 2))
    r = audit(tree.sample, np.zeros((T, 1)), np.eye(T)[:, :1], epsilon=1.0, samples=50_000,
              seed=0)
    assert r.verdict == "not violated"
    assert noise.coordinate_variance(1) == pytest.approx(4.0, rel=1e-3)  # ~sigma^2 for sigma >> g
    assert NodeNoise.laplace(1.0).granularity is None
