"""The power statement attached to "not violated" results (dpaudit.blackbox.power).

Margins: Monte Carlo comparisons use fixed seeds and 5 standard errors; the detection-rate check
uses an exact binomial test at 1e-3 (a correct implementation fails it with probability 1e-3).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpaudit.blackbox.confidence import Bonferroni, clopper_pearson_lower, clopper_pearson_upper
from dpaudit.blackbox.empirical_audit import audit
from dpaudit.blackbox.power import (detection_probability, power_statement,
                                  smallest_detectable_epsilon)


@pytest.mark.parametrize("n,p,q,eps,delta", [(2_000, 0.3, 0.08, 1.0, 0.0),
                                             (500, 0.6, 0.2, 0.5, 0.01),
                                             (20_000, 0.02, 0.004, 1.0, 1e-3)])
def test_detection_probability_matches_simulation(n, p, q, eps, delta) -> None:
    a = Bonferroni(0.05).per_interval_alpha
    g = np.random.default_rng(0)
    reps = 200_000
    kp, kq = g.binomial(n, p, reps), g.binomial(n, q, reps)
    k = np.arange(n + 1)
    lo, hi = clopper_pearson_lower(k, n, a), clopper_pearson_upper(k, n, a)
    with np.errstate(divide="ignore", invalid="ignore"):
        alarm = np.log(np.maximum(lo[kp] - delta, 0.0) / hi[kq]) > eps
    sim = float(alarm.mean())
    exact = detection_probability(p, q, n, n, a, eps, delta)
    se = math.sqrt(max(exact * (1 - exact), 1e-6) / reps)
    assert abs(sim - exact) < 5 * se + 1e-9


def test_detection_probability_increases_with_the_loss() -> None:
    a = Bonferroni(0.05).per_interval_alpha
    probs = [detection_probability(min(1.0, math.exp(e) * 0.1), 0.1, 5_000, 5_000, a, 1.0)
             for e in np.linspace(0.8, 2.0, 13)]
    assert all(x <= y + 1e-12 for x, y in zip(probs, probs[1:]))
    assert probs[0] < 0.05 and probs[-1] > 0.99


def test_a_loss_at_the_stated_epsilon_is_detected_with_the_stated_probability() -> None:
    # Binary mechanism: outcome 1 with probability q on data1 and p = e^e* q on data0, where e*
    # is the power statement's epsilon for rate q at this budget. The engine's event is {1}, so
    # the verdict is violated with probability power = 0.8 (up to the bisection tolerance, which
    # makes it >= 0.8). Over 300 audits the rate must be consistent with >= 0.8: a binomial
    # test at 1e-3 against 0.8 (one-sided, lower).
    samples, q, alpha = 2_000, 0.2, 0.05
    r0 = audit(lambda d, n, g: (g.random(n) < q).astype(np.int64), 0, 1, epsilon=1.0,
               samples=samples, seed=0)
    n = r0.n_test
    a = Bonferroni(alpha).per_interval_alpha
    e_star = smallest_detectable_epsilon(q, n, n, a, 1.0)
    assert 1.0 < e_star < math.log(1 / q)
    p = math.exp(e_star) * q

    def mech(d, m, g):
        return (g.random(m) < (p if d == 0 else q)).astype(np.int64)
    hits = sum(audit(mech, 0, 1, epsilon=1.0, samples=samples, seed=s).verdict == "violated"
               for s in range(300))
    print(f"e* = {e_star:.3f}: detected {hits}/300")
    assert stats.binomtest(hits, 300, 0.8, alternative="less").pvalue > 1e-3
    # Just below e*, the exact probability is below 0.8.
    below = detection_probability(math.exp(e_star - 0.05) * q, q, n, n, a, 1.0)
    assert below < 0.8


def test_power_is_attached_to_every_pass_and_only_to_passes() -> None:
    lap = lambda d, n, g: d + g.laplace(0.0, 1.0, size=n)  # noqa: E731
    ok = audit(lap, 0.0, 1.0, epsilon=1.0, samples=20_000, seed=0)
    assert ok.verdict == "not violated" and ok.power is not None
    d = ok.to_dict()["power"]
    assert 1.0 < d["detectable_epsilon"] < 1.5 and d["power"] == 0.8
    assert "not a proof of privacy" in d["statement"]
    bad = audit(lap, 0.0, 1.0, epsilon=0.5, samples=20_000, seed=0)
    assert bad.verdict == "violated" and bad.power is None and bad.to_dict()["power"] is None
    # A tiny budget: the statement says how weak the pass is.
    tiny = audit(lap, 0.0, 1.0, epsilon=3.0, samples=40, seed=0)
    st = power_statement(tiny.event.q.count, tiny.n_test, tiny.bonferroni.per_interval_alpha,
                         3.0, 0.0)
    assert st.detectable_epsilon > 3.0


def test_huge_claims_do_not_overflow() -> None:
    # Claims far beyond exp's range (some grid points of bundled claims reach them): nothing is
    # detectable, and the answer is a number, not an OverflowError.
    from dpaudit.blackbox.power import detection_probability, smallest_detectable_epsilon
    assert detection_probability(0.5, 0.01, 10_000, 10_000, 0.05, 1_000.0) == 0.0
    assert smallest_detectable_epsilon(0.01, 10_000, 10_000, 0.05, 1_000.0) == math.inf
    assert smallest_detectable_epsilon(0.01, 10_000, 10_000, 0.05, 800.0, delta=0.01) == math.inf


def test_cached_interpolated_lower_ends_match_exact_clopper_pearson() -> None:
    # The detector interpolates the Clopper-Pearson lower ends of long windows on a sparse aligned
    # grid and caches them across bisection calls; relative error must stay below 1e-8.
    from dpaudit.blackbox.power import _cp_lower, _Detector, _window
    for n, p in [(900_000, 0.3), (9_000_000, 0.2), (900_000, 0.01), (50_000, 0.2)]:
        det = _Detector(p, n, n, 0.05, 1.0, 0.0)
        for shift in (0.0, 0.001, -0.002):
            kp = _window(n, p + shift)
            exact = _cp_lower(kp, n, 0.05)
            approx = det._p_lo(kp)
            assert np.max(np.abs(approx - exact) / np.maximum(exact, 1e-300)) < 1e-8


def test_log_gamma_binomial_pmf_matches_scipy() -> None:
    from dpaudit.blackbox.power import _binom_pmf, _window
    for n, p in [(10, 0.3), (2_000, 0.5), (900_000, 0.3), (10_000_000, 0.01), (50, 0.0),
                 (50, 1.0)]:
        k = _window(n, p)
        ref = stats.binom.pmf(k, n, p)
        got = _binom_pmf(k, n, p)
        big = ref > 1e-300
        assert np.allclose(got[big], ref[big], rtol=1e-7, atol=0.0)
        assert np.all(got[~big] < 1e-290)
