"""Exact confidence bounds and the privacy lower bounds built on them (dpaudit.blackbox.confidence).

The coverage tests are exact: they sum binomial probabilities over every possible count instead of
simulating, so they have no statistical error and check the stated level itself.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from dpaudit.blackbox.confidence import (Bonferroni, clopper_pearson_lower, clopper_pearson_upper,
                                       epsilon_lower_bound, gdp_mu_lower_bound,
                                       log_ratio_lower_bound, proportion_bound, wilson_lower,
                                       wilson_upper)


@pytest.mark.parametrize("alpha", [0.01, 0.05, 0.2])
@pytest.mark.parametrize("n", [1, 7, 50, 1000, 10**6])
def test_clopper_pearson_matches_statsmodels_one_sided(n: int, alpha: float) -> None:
    ks = np.unique(np.linspace(0, n, 13).round().astype(int))
    for k in ks:
        # statsmodels' two-sided interval at 2*alpha has one-sided ends at alpha each.
        lo, hi = proportion_confint(int(k), n, alpha=2 * alpha, method="beta")
        assert clopper_pearson_lower(int(k), n, alpha) == pytest.approx(lo, rel=1e-9, abs=1e-15)
        assert clopper_pearson_upper(int(k), n, alpha) == pytest.approx(hi, rel=1e-9, abs=1e-15)


def test_clopper_pearson_closed_forms_at_the_ends() -> None:
    # k = 0: upper = 1 - alpha^(1/n); k = n: lower = alpha^(1/n) (Clopper and Pearson 1934).
    for n in (1, 3, 100, 12345):
        for a in (0.025, 0.1):
            assert clopper_pearson_lower(0, n, a) == 0.0
            assert clopper_pearson_upper(n, n, a) == 1.0
            assert clopper_pearson_upper(0, n, a) == pytest.approx(1 - a ** (1 / n), rel=1e-10)
            assert clopper_pearson_lower(n, n, a) == pytest.approx(a ** (1 / n), rel=1e-10)


def test_clopper_pearson_is_vectorised_and_monotone() -> None:
    k = np.arange(0, 101)
    lo = clopper_pearson_lower(k, 100, 0.05)
    hi = clopper_pearson_upper(k, 100, 0.05)
    assert lo.shape == hi.shape == (101,)
    assert np.all(np.diff(lo) > 0) and np.all(np.diff(hi) > 0)
    assert np.all(lo <= k / 100) and np.all(hi >= k / 100)


@pytest.mark.parametrize("n", [5, 40, 300])
@pytest.mark.parametrize("alpha", [0.05, 0.2])
def test_clopper_pearson_exact_coverage(n: int, alpha: float) -> None:
    # P[lower(K) <= p] and P[upper(K) >= p] with K ~ Bin(n, p), summed exactly, on a p grid that
    # includes the points just above/below the bounds where coverage is lowest.
    k = np.arange(n + 1)
    lo = clopper_pearson_lower(k, n, alpha)
    hi = clopper_pearson_upper(k, n, alpha)
    grid = np.concatenate([np.linspace(1e-4, 1 - 1e-4, 199), lo[1:] + 1e-12, hi[:-1] - 1e-12])
    for p in grid:
        pmf = stats.binom.pmf(k, n, p)
        assert pmf[lo <= p].sum() >= 1 - alpha - 1e-9
        assert pmf[hi >= p].sum() >= 1 - alpha - 1e-9


def test_bonferroni_bookkeeping() -> None:
    b = Bonferroni(0.05, 4)
    assert b.per_event_alpha == pytest.approx(0.0125)
    # Two independent intervals at level a hold jointly with probability (1 - a)^2 = 1 - alpha/m.
    assert (1 - b.per_interval_alpha) ** 2 == pytest.approx(1 - 0.0125, rel=1e-14)
    assert b.per_interval_alpha > 0.0125 / 2
    assert Bonferroni(0.05).m == 1
    with pytest.raises(ValueError, match="m"):
        Bonferroni(0.05, 0)
    with pytest.raises(ValueError, match="alpha"):
        Bonferroni(1.0)


def _union_noncoverage_at_endpoints(n: int, a: float) -> np.ndarray:
    """Exact P[p_lo(Kp) > p or q_hi(Kq) < q], Kp ~ Bin(n, p), Kq ~ Bin(n, q) independent.

    On the grid of all (p, q) with p just below a lower end ``p_lo(k)`` and q just above an upper
    end ``q_hi(k)``: between two ends the non-coverage of one interval grows towards the next end,
    so its supremum over p (or q) is approached there. Each one-sided probability is an exact
    binomial tail sum (``sf``/``cdf``); independence gives the union as ``A + B - A B``.
    """
    k = np.arange(n + 1)
    lo = np.asarray(clopper_pearson_lower(k, n, a))
    hi = np.asarray(clopper_pearson_upper(k, n, a))
    p = lo[1:] * (1.0 - 1e-9)                     # just below each lower end
    q = hi[:-1] + (1.0 - hi[:-1]) * 1e-9          # just above each upper end
    # p_lo(K) > p iff K >= j (first index with lo > p); q_hi(K) < q iff K <= i (last with hi < q).
    j = np.searchsorted(lo, p, side="right")
    i = np.searchsorted(hi, q, side="left") - 1
    miss_p = stats.binom.sf(j - 1, n, p)
    miss_q = stats.binom.cdf(i, n, q)
    return miss_p[:, None] + miss_q[None, :] - miss_p[:, None] * miss_q[None, :]


@pytest.mark.parametrize("m", [1, 4])
@pytest.mark.parametrize("alpha", [0.05, 0.3])
@pytest.mark.parametrize("n", [20, 300, 3000])
def test_bonferroni_pair_of_intervals_has_exact_union_level(n: int, alpha: float, m: int) -> None:
    # The two intervals of one event must fail together with probability at most alpha / m, and
    # that supremum is attained (up to the grid offset): about alpha / m when the per-interval
    # level is right, about 2 alpha / m with the bug "each interval at alpha / m instead of about
    # alpha / (2 m)". Verified: with Bonferroni.per_interval_alpha monkeypatched to return
    # per_event_alpha, every case of this test fails (worst union 0.0975 > 0.05 at m = 1).
    b = Bonferroni(alpha, m)
    union = _union_noncoverage_at_endpoints(n, b.per_interval_alpha)
    worst = float(union.max())
    assert worst <= alpha / m + 1e-12
    assert worst == pytest.approx(alpha / m, rel=1e-5)
    if m == 1:
        # The public bound uses exactly these intervals.
        a = b.per_interval_alpha
        kp, kq = (3 * n) // 4, n // 4
        assert epsilon_lower_bound(kp, n, kq, n, 0.0, alpha) == pytest.approx(max(0.0, math.log(
            clopper_pearson_lower(kp, n, a) / clopper_pearson_upper(kq, n, a))), rel=1e-12)


def test_epsilon_lower_bound_formula_and_clamping() -> None:
    a = Bonferroni(0.05).per_interval_alpha
    p_lo = clopper_pearson_lower(600, 1000, a)
    q_hi = clopper_pearson_upper(200, 1000, a)
    assert epsilon_lower_bound(600, 1000, 200, 1000, delta=0.0, alpha=0.05) == pytest.approx(
        math.log(p_lo / q_hi), rel=1e-12)
    assert epsilon_lower_bound(600, 1000, 200, 1000, delta=0.1, alpha=0.05) == pytest.approx(
        math.log((p_lo - 0.1) / q_hi), rel=1e-12)
    # No evidence: reported as 0, the unclamped value is negative or -inf.
    assert epsilon_lower_bound(100, 1000, 100, 1000) == 0.0
    assert log_ratio_lower_bound(0.1, 0.2) == pytest.approx(math.log(0.5))
    assert log_ratio_lower_bound(0.1, 0.2, delta=0.1) == -math.inf
    assert epsilon_lower_bound(5, 1000, 0, 1000, delta=0.5) == 0.0


def _exact_exceedance(n: int, p: float, q: float, delta: float, alpha: float,
                      transform) -> float:
    """P[bound(Kp, Kq) > truth] for Kp ~ Bin(n, p), Kq ~ Bin(n, q) independent, summed exactly."""
    a = Bonferroni(alpha).per_interval_alpha
    k = np.arange(n + 1)
    p_lo = clopper_pearson_lower(k, n, a)
    q_hi = clopper_pearson_upper(k, n, a)
    truth = transform(np.array(p), np.array(q), delta)
    bound = transform(p_lo[:, None], q_hi[None, :], delta)
    joint = stats.binom.pmf(k, n, p)[:, None] * stats.binom.pmf(k, n, q)[None, :]
    return float(joint[bound > truth + 1e-12].sum())


@pytest.mark.parametrize("p,q,delta", [(0.5, 0.5 / math.e, 0.0), (0.05, 0.01, 0.0),
                                       (0.3, 0.1, 0.02), (0.9, 0.02, 0.0), (0.2, 0.2, 0.0)])
@pytest.mark.parametrize("n", [30, 200])
def test_epsilon_bound_exact_coverage(n: int, p: float, q: float, delta: float) -> None:
    # If the mechanism satisfies P <= e^eps Q + delta with equality-defining eps = ln((p-delta)/q),
    # the bound may exceed that eps with probability at most alpha (exact double sum).
    def transform(pl, qh, d):
        return np.asarray(log_ratio_lower_bound(pl, qh, d))
    for alpha in (0.05, 0.3):
        assert _exact_exceedance(n, p, q, delta, alpha, transform) <= alpha + 1e-12
    # And the public function agrees with the transform used here.
    assert epsilon_lower_bound(int(n * p), n, int(n * q), n, delta, 0.05) == pytest.approx(
        max(0.0, float(log_ratio_lower_bound(
            clopper_pearson_lower(int(n * p), n, Bonferroni(0.05).per_interval_alpha) ,
            clopper_pearson_upper(int(n * q), n, Bonferroni(0.05).per_interval_alpha), delta))))


@pytest.mark.parametrize("mu,t", [(1.0, 0.5), (1.0, 2.5), (0.3, -1.0), (2.0, 1.0)])
def test_gdp_mu_bound_exact_coverage_on_gaussian_tradeoff(mu: float, t: float) -> None:
    # Event {x > t} for N(0,1) (data0) vs N(mu,1) (data1): p = sf(t - mu), q = sf(t), and
    # Phi^-1(p) - Phi^-1(q) = mu exactly, so the bound must exceed mu with probability <= alpha.
    p, q = stats.norm.sf(t - mu), stats.norm.sf(t)
    assert stats.norm.ppf(p) - stats.norm.ppf(q) == pytest.approx(mu, rel=1e-9)

    def transform(pl, qh, d):
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.nan_to_num(stats.norm.ppf(pl) - stats.norm.ppf(qh), nan=-np.inf)
    for alpha in (0.05, 0.3):
        assert _exact_exceedance(150, p, q, 0.0, alpha, transform) <= alpha + 1e-12


def test_gdp_mu_bound_value() -> None:
    a = Bonferroni(0.05).per_interval_alpha
    kp, kq, n = 6915, 3085, 10_000
    expected = (stats.norm.ppf(1 - clopper_pearson_upper(kq, n, a))
                - stats.norm.ppf(1 - clopper_pearson_lower(kp, n, a)))
    assert gdp_mu_lower_bound(kp, n, kq, n, alpha=0.05) == pytest.approx(expected, rel=1e-12)
    assert 0.9 < expected < 1.0  # rates of N(0,1) vs N(1,1) at t = 0.5, mu = 1
    assert gdp_mu_lower_bound(50, 100, 50, 100) == 0.0


def test_proportion_bound_record() -> None:
    b = proportion_bound(3, 10, 0.05)
    assert b.estimate == 0.3 and b.lower < 0.3 < b.upper
    d = b.to_dict()
    assert d["count"] == 3 and d["nobs"] == 10 and d["one_sided_alpha"] == 0.05


def test_wilson_brackets_the_rate_and_approaches_clopper_pearson() -> None:
    rates = np.array([0.0, 0.01, 0.3, 0.5, 1.0])
    lo, hi = wilson_lower(rates, 1000, 0.05), wilson_upper(rates, 1000, 0.05)
    assert np.all(lo <= rates) and np.all(hi >= rates) and np.all(lo >= 0) and np.all(hi <= 1)
    n = 10**6
    k = np.array([3 * 10**5, 10**5])
    assert np.allclose(wilson_lower(k / n, n, 0.05), clopper_pearson_lower(k, n, 0.05), rtol=1e-3)
    assert np.allclose(wilson_upper(k / n, n, 0.05), clopper_pearson_upper(k, n, 0.05), rtol=1e-3)


def test_input_validation() -> None:
    with pytest.raises(ValueError, match="count"):
        clopper_pearson_lower(11, 10, 0.05)
    with pytest.raises(ValueError, match="nobs"):
        clopper_pearson_upper(0, 0, 0.05)
    with pytest.raises(TypeError, match="count"):
        clopper_pearson_lower(1.5, 10, 0.05)
    with pytest.raises(ValueError, match="alpha"):
        clopper_pearson_lower(1, 10, 1.5)
    with pytest.raises(ValueError, match="delta"):
        epsilon_lower_bound(1, 10, 1, 10, delta=1.0)
    with pytest.raises(TypeError, match="count"):
        proportion_bound(2.0, 10, 0.05)
