"""Laws of the Laplace sampler and mechanism (dpaudit.mechanisms.laplace).

Statistical tests use fixed seeds and require KS p-values > 1e-3 (divided by the number of tests
in a family, Bonferroni): a correct sampler fails such a test with probability at most 1e-3, and with
the fixed seed the outcome is deterministic.
"""

from __future__ import annotations

import math

import dp_accounting
import numpy as np
import pytest
from scipy import stats

from dpaudit.formal.accounting import epsilon_of_event
from dpaudit.claims import NeighbourRelation
from dpaudit.mechanisms.laplace import LaplaceMechanism, sample_laplace

ALPHA = 1e-3


@pytest.mark.parametrize("scale", [0.05, 1.0, 17.0])
def test_sample_laplace_ks_against_scipy_law(scale: float) -> None:
    x = sample_laplace(scale, 20_000, np.random.default_rng(11))
    assert x.shape == (20_000,)
    # Bonferroni over the three scales.
    assert stats.kstest(x, stats.laplace(scale=scale).cdf).pvalue > ALPHA / 3


def test_sample_laplace_shapes_and_reproducibility() -> None:
    a = sample_laplace(2.0, (3, 4, 5), np.random.default_rng(5))
    b = sample_laplace(2.0, (3, 4, 5), np.random.default_rng(5))
    assert a.shape == (3, 4, 5) and a.dtype == np.float64
    np.testing.assert_array_equal(a, b)
    # Zero-length draws are allowed (callers draw noise for an empty set of active runs).
    assert sample_laplace(1.0, 0, np.random.default_rng(0)).shape == (0,)
    assert sample_laplace(1.0, np.int64(3), np.random.default_rng(0)).shape == (3,)


def test_mechanism_vector_output_is_data_plus_iid_laplace_per_coordinate() -> None:
    mech = LaplaceMechanism(sensitivity=2.0, scale=0.7)
    data = np.array([1.0, -3.0, 10.0])
    out = mech.sample(data, 30_000, np.random.default_rng(3))
    assert out.shape == (30_000, 3)
    noise = out - data
    law = stats.laplace(scale=0.7).cdf
    for j in range(3):  # Bonferroni over the three coordinates
        assert stats.kstest(noise[:, j], law).pvalue > ALPHA / 3
    # Independent coordinates: the sample Pearson correlation is ~ N(0, 1/n), so
    # |r| < 4 / sqrt(n) fails with probability ~6e-5 for a correct sampler.
    r = np.corrcoef(noise[:, 0], noise[:, 1])[0, 1]
    assert abs(r) < 4.0 / math.sqrt(noise.shape[0])


def test_mechanism_scalar_data_gives_flat_output() -> None:
    out = LaplaceMechanism(1.0, 1.0).sample(4.5, 10_000, np.random.default_rng(8))
    assert out.shape == (10_000,)
    assert stats.kstest(out, stats.laplace(loc=4.5, scale=1.0).cdf).pvalue > ALPHA
    # Calling the mechanism is sampling.
    np.testing.assert_array_equal(LaplaceMechanism(1.0, 1.0)(4.5, 5, np.random.default_rng(1)),
                                  LaplaceMechanism(1.0, 1.0).sample(4.5, 5, np.random.default_rng(1)))


def test_from_epsilon_calibration_and_privacy_statement() -> None:
    mech = LaplaceMechanism.from_epsilon(sensitivity=3.0, epsilon=0.25)
    assert mech.scale == pytest.approx(12.0, rel=1e-15)
    assert mech.epsilon == pytest.approx(0.25, rel=1e-15)
    assert mech.sensitivity.norm == "l1"
    assert mech.sensitivity.relation is NeighbourRelation.REPLACE_ONE
    assert mech.dp_event() == dp_accounting.LaplaceDpEvent(noise_multiplier=4.0)
    # The accountant reads the event as one shift of one sensitivity: pure epsilon at delta = 0.
    assert epsilon_of_event(mech.dp_event(), 0.0) == pytest.approx(0.25, rel=1e-9)
    d = mech.describe()
    assert d["name"] == "laplace" and d["epsilon"] == pytest.approx(0.25) and d["norm"] == "l1"


def test_privacy_loss_of_the_law_is_bounded_by_epsilon_and_attained() -> None:
    # Exact density ratio of the output law on neighbouring answers at l1 distance Delta: the log
    # ratio sum_i (|y_i - f'_i| - |y_i - f_i|) / b lies in [-eps, eps] and equals eps when every y_i
    # is beyond f_i on the far side from f'_i (Dwork & Roth 2014, Thm 3.6).
    mech = LaplaceMechanism(sensitivity=1.5, scale=0.5)
    rng = np.random.default_rng(4)
    f = np.array([0.0, 1.0])
    shift = rng.normal(size=2)
    f_prime = f + 1.5 * shift / np.abs(shift).sum()  # ||f - f'||_1 = Delta
    y = rng.normal(scale=3.0, size=(5_000, 2))
    law = stats.laplace(scale=mech.scale)
    log_ratio = (law.logpdf(y - f) - law.logpdf(y - f_prime)).sum(axis=1)
    assert np.max(np.abs(log_ratio)) <= mech.epsilon + 1e-12
    far = f + 10.0 * np.sign(f - f_prime)
    attained = (law.logpdf(far - f) - law.logpdf(far - f_prime)).sum()
    assert attained == pytest.approx(mech.epsilon, rel=1e-12)


@pytest.mark.parametrize("kwargs, error", [
    ({"sensitivity": 0.0, "scale": 1.0}, ValueError),
    ({"sensitivity": -1.0, "scale": 1.0}, ValueError),
    ({"sensitivity": 1.0, "scale": 0.0}, ValueError),
    ({"sensitivity": 1.0, "scale": math.inf}, ValueError),
    ({"sensitivity": math.nan, "scale": 1.0}, ValueError),
    ({"sensitivity": "1", "scale": 1.0}, TypeError),
])
def test_constructor_rejects_bad_parameters(kwargs: dict, error: type) -> None:
    with pytest.raises(error):
        LaplaceMechanism(**kwargs)


@pytest.mark.parametrize("epsilon", [0.0, -0.5, math.inf, math.nan])
def test_from_epsilon_rejects_bad_epsilon(epsilon: float) -> None:
    with pytest.raises(ValueError, match="epsilon"):
        LaplaceMechanism.from_epsilon(1.0, epsilon)


def test_sample_rejects_bad_inputs() -> None:
    mech = LaplaceMechanism(1.0, 1.0)
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="data"):
        mech.sample([1.0, math.nan], 3, rng)
    with pytest.raises(ValueError, match="data"):
        mech.sample(np.zeros((2, 2)), 3, rng)
    with pytest.raises(ValueError, match="data"):
        mech.sample(np.zeros(0), 3, rng)
    with pytest.raises(ValueError, match="n"):
        mech.sample(1.0, 0, rng)
    with pytest.raises(TypeError, match="n"):
        mech.sample(1.0, 2.5, rng)
    with pytest.raises(TypeError, match="rng"):
        mech.sample(1.0, 3, np.random.RandomState(0))
    with pytest.raises(ValueError, match="size"):
        sample_laplace(1.0, -1, rng)
    with pytest.raises(ValueError, match="scale"):
        sample_laplace(-1.0, 3, rng)
    with pytest.raises(TypeError, match="rng"):
        sample_laplace(1.0, 3, 42)
