"""Laws and calibrations of the Gaussian sampler and mechanism (dpaudit.mechanisms.gaussian).

Statistical tests use fixed seeds and require KS p-values > 1e-3 (Bonferroni-divided within a
family): a correct sampler fails with probability at most 1e-3, and the seed makes it deterministic.
The calibration tests are exact identities against the Balle & Wang (ICML 2018, Theorem 8) closed
form, computed here independently of the module under test.
"""

from __future__ import annotations

import math

import dp_accounting
import numpy as np
import pytest
from scipy import special, stats

from dpaudit.formal.accounting import gaussian_delta
from dpaudit.mechanisms.gaussian import (
    GaussianMechanism,
    analytic_sigma,
    classical_sigma,
    sample_gaussian,
)

ALPHA = 1e-3


def exact_delta(mu: float, epsilon: float) -> float:
    """delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2), in log space for large eps."""
    a = special.log_ndtr(-epsilon / mu + mu / 2.0)
    b = epsilon + special.log_ndtr(-epsilon / mu - mu / 2.0)
    return float(math.exp(a) * -math.expm1(b - a))


def test_exact_delta_helper_matches_plain_formula() -> None:
    # The log-space helper equals the textbook expression where the latter is well conditioned.
    mu, eps = 0.8, 0.3
    plain = stats.norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * stats.norm.cdf(-eps / mu - mu / 2)
    assert exact_delta(mu, eps) == pytest.approx(plain, rel=1e-12)


@pytest.mark.parametrize("sigma", [0.01, 1.0, 42.0])
def test_sample_gaussian_ks_against_scipy_law(sigma: float) -> None:
    x = sample_gaussian(sigma, 20_000, np.random.default_rng(21))
    assert x.shape == (20_000,)
    assert stats.kstest(x, stats.norm(scale=sigma).cdf).pvalue > ALPHA / 3


def test_mechanism_vector_output_is_data_plus_iid_gaussian() -> None:
    mech = GaussianMechanism(sensitivity=1.0, sigma=2.5)
    data = np.array([0.0, 5.0, -1.0, 2.0])
    out = mech.sample(data, 20_000, np.random.default_rng(9))
    assert out.shape == (20_000, 4)
    noise = out - data
    for j in range(4):  # Bonferroni over coordinates
        assert stats.kstest(noise[:, j], stats.norm(scale=2.5).cdf).pvalue > ALPHA / 4
    # Isotropy: ||noise||^2 / sigma^2 ~ chi^2_4 (fails for correlated or unequal coordinates).
    assert stats.kstest((noise ** 2).sum(axis=1) / 2.5 ** 2, stats.chi2(4).cdf).pvalue > ALPHA
    scalar = mech.sample(3.0, 7, np.random.default_rng(0))
    assert scalar.shape == (7,)


def test_classical_sigma_value_at_known_point() -> None:
    # Dwork & Roth Thm A.1 at Delta = 1, eps = 0.5, delta = 1e-5: sqrt(2 ln 125000) / 0.5.
    # ln 125000 = 5 ln 10 + ln 1.25 = 11.51292546497023 + 0.22314355131420976.
    assert classical_sigma(1.0, 0.5, 1e-5) == pytest.approx(
        2.0 * math.sqrt(2.0 * (11.51292546497023 + 0.22314355131420976)), rel=1e-14)
    assert classical_sigma(1.0, 0.5, 1e-5) == pytest.approx(9.689610525210778, rel=1e-13)
    # Linear in the sensitivity, inversely proportional to epsilon.
    assert classical_sigma(3.0, 0.25, 1e-5) == pytest.approx(6.0 * classical_sigma(1.0, 0.5, 1e-5),
                                                             rel=1e-14)


def test_classical_sigma_is_not_refused_for_large_epsilon() -> None:
    # The theorem is only proved for eps < 1, but papers use it beyond; the audit must test it.
    sigma = classical_sigma(1.0, 4.0, 1e-5)
    assert sigma == pytest.approx(math.sqrt(2.0 * math.log(1.25e5)) / 4.0, rel=1e-14)
    mech = GaussianMechanism.classical(1.0, 4.0, 1e-5)
    assert mech.sigma == sigma
    assert mech.describe()["calibration"] == "classical"


# A grid over the claim range: small and large epsilon, small and large delta.
ANALYTIC_GRID = [(0.01, 1e-5), (0.1, 1e-6), (0.5, 1e-9), (1.0, 1e-5), (3.0, 0.1), (8.0, 1e-7)]


@pytest.mark.parametrize("epsilon, delta", ANALYTIC_GRID)
def test_analytic_sigma_meets_delta_exactly_by_closed_form(epsilon: float, delta: float) -> None:
    sigma = analytic_sigma(1.0, epsilon, delta)
    achieved = exact_delta(1.0 / sigma, epsilon)
    assert abs(achieved - delta) <= 1e-6 * delta
    # Same answer from the accountant's own closed form (second implementation).
    assert gaussian_delta(1.0 / sigma, epsilon) == pytest.approx(achieved, rel=1e-10)
    # Smallest: 1e-4 less noise is no longer (epsilon, delta)-DP.
    assert exact_delta(1.0 / (sigma * (1.0 - 1e-4)), epsilon) > delta


@pytest.mark.parametrize("epsilon, delta", [(0.05, 1e-5), (0.5, 1e-8), (0.9, 1e-3)])
def test_analytic_sigma_is_below_classical_for_epsilon_below_one(epsilon: float, delta: float) -> None:
    assert analytic_sigma(1.0, epsilon, delta) < classical_sigma(1.0, epsilon, delta)


def test_analytic_sigma_is_linear_in_sensitivity_and_mechanism_records_it() -> None:
    base = analytic_sigma(1.0, 1.0, 1e-5)
    assert analytic_sigma(2.5, 1.0, 1e-5) == pytest.approx(2.5 * base, rel=1e-12)
    mech = GaussianMechanism.analytic(2.5, 1.0, 1e-5)
    assert mech.sigma == pytest.approx(2.5 * base, rel=1e-12)
    assert mech.mu == pytest.approx(1.0 / base, rel=1e-12)
    d = mech.describe()
    assert d["calibration"] == "analytic" and d["target_delta"] == 1e-5 and d["norm"] == "l2"


def test_dp_event_is_one_shift_of_one_sensitivity() -> None:
    mech = GaussianMechanism(sensitivity=2.0, sigma=3.0)
    assert mech.dp_event() == dp_accounting.GaussianDpEvent(noise_multiplier=1.5)
    assert mech.sensitivity.norm == "l2"
    assert GaussianMechanism(1.0, 1.0).describe()["name"] == "gaussian"


@pytest.mark.parametrize("delta", [0.0, 1.0, -1e-5, 1.5, math.nan])
def test_calibrations_reject_delta_outside_open_unit_interval(delta: float) -> None:
    for calibrate in (classical_sigma, analytic_sigma):
        with pytest.raises(ValueError, match="delta"):
            calibrate(1.0, 1.0, delta)


@pytest.mark.parametrize("epsilon", [0.0, -1.0, math.inf, math.nan])
def test_calibrations_reject_bad_epsilon(epsilon: float) -> None:
    for calibrate in (classical_sigma, analytic_sigma):
        with pytest.raises(ValueError, match="epsilon"):
            calibrate(1.0, epsilon, 1e-5)


def test_bad_inputs_raise() -> None:
    rng = np.random.default_rng(0)
    for sensitivity in (0.0, -2.0):
        with pytest.raises(ValueError, match="sensitivity"):
            GaussianMechanism(sensitivity, 1.0)
        with pytest.raises(ValueError, match="sensitivity"):
            classical_sigma(sensitivity, 1.0, 1e-5)
    with pytest.raises(ValueError, match="sigma"):
        GaussianMechanism(1.0, 0.0)
    with pytest.raises(ValueError, match="sigma"):
        sample_gaussian(-1.0, 3, rng)
    with pytest.raises(ValueError, match="value_discretization_interval"):
        analytic_sigma(1.0, 1.0, 1e-5, value_discretization_interval=0.0)
    mech = GaussianMechanism(1.0, 1.0)
    with pytest.raises(ValueError, match="data"):
        mech.sample([0.0, math.inf], 5, rng)
    with pytest.raises(ValueError, match="data"):
        mech.sample(np.ones((3, 1)), 5, rng)
    with pytest.raises(ValueError, match="n"):
        mech.sample(0.0, -1, rng)
    with pytest.raises(TypeError, match="rng"):
        mech.sample(0.0, 5, None)


def mp_delta(mu: float, epsilon: float) -> float:
    """Exact delta(eps) of N(0,1) vs N(mu,1) in high-precision arithmetic (mpmath, a dependency of
    dp-accounting): Phi(a) - e^eps Phi(b) with enough digits to survive the cancellation."""
    import mpmath

    digits = 40 + int(2 * max(0.0, -math.log10(mu))) + int(math.log10(1.0 + epsilon / mu**2))
    with mpmath.workdps(digits):
        m, e = mpmath.mpf(mu), mpmath.mpf(epsilon)
        return float(mpmath.ncdf(-e / m + m / 2) - mpmath.exp(e) * mpmath.ncdf(-e / m - m / 2))


@pytest.mark.parametrize("epsilon, delta", [(1.0, 1e-16), (1.0, 1e-20), (0.01, 1e-18),
                                            (5.0, 1e-13), (0.3, 1e-100)])
def test_analytic_sigma_for_tiny_delta_uses_the_exact_closed_form(epsilon, delta) -> None:
    # Below delta = 1e-12 the PLD (tail truncation 1e-15) cannot resolve the target; the calibration
    # must still return a sigma that is exactly (epsilon, delta)-DP and not more than ~1e-10
    # conservative in delta (checked in 40+ digit arithmetic, independently of the module).
    sigma = analytic_sigma(2.0, epsilon, delta)
    achieved = mp_delta(2.0 / sigma, epsilon)
    assert delta * (1 - 1e-8) <= achieved <= delta * (1 + 1e-12)


def test_analytic_sigma_is_continuous_across_the_closed_form_switch() -> None:
    # Near 1e-12 the PLD calibration is slightly conservative (its tail truncation; ~4e-6 relative
    # in sigma here), the closed form exact: both meet their targets and agree to 1e-5.
    above = analytic_sigma(1.0, 1.0, 1.0001e-12)  # PLD calibration
    below = analytic_sigma(1.0, 1.0, 0.9999e-12)  # closed form
    assert below == pytest.approx(above, rel=1e-5)
    for sigma, delta in ((above, 1.0001e-12), (below, 0.9999e-12)):
        assert mp_delta(1.0 / sigma, 1.0) <= delta * (1 + 1e-12)
