"""The generalised-Pareto tail event of scalar outputs (dpaudit.blackbox.fitters_tail).

Pinned against independent derivations: the closed-form law of the maximum of exponentials (its
lower tail ``((t - a) / b)^5`` near the end of its support, generalised Pareto shape ``-1/5``),
the Laplace law's exponential tails (shape 0), and, for validity, a correct release with a
bounded tail whose exact epsilon is a quadrature of its density ratio.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats

from dpaudit import audit
from dpaudit.blackbox.fitters_tail import (MIN_TAIL_RUNS, TailEventFitter, TailEventScorer,
                                          fit_tail)

SCALE = 20.0


def _max_exp(a: float, n: int, g: np.random.Generator) -> np.ndarray:
    return a + g.exponential(SCALE, size=(n, 5)).max(axis=1)


def _max_exp_cdf(a: float, t: float) -> float:
    return float(max(0.0, -math.expm1(-(t - a) / SCALE)) ** 5)


def test_fit_tail_recovers_the_bounded_tail_of_a_maximum() -> None:
    # The maximum of five Exp(20) has CDF (1 - e^{-(t-a)/20})^5 ~ ((t - a)/20)^5 at its support's
    # end: generalised Pareto shape -1/5 in the limit. At the 3% tail the law is not yet a power
    # (the fitted shape is biased to about -0.3: seeds 0-5 gave -0.27 to -0.32, standard error
    # (1 + xi)/sqrt(k) = 0.018), so the test asks for a clearly bounded shape in (-0.4, -0.15)
    # and pins what the event choice uses, the modelled rates against the closed form: within a
    # factor 2 at 5e-4 and at 5e-5 (2.5 expected runs, which counting cannot resolve; seeds 0-5
    # gave ratios 1.00-1.32 and 0.57-1.59). Seed 0 fixed.
    g = np.random.default_rng(0)
    x = np.sort(_max_exp(1.0, 50_000, g))
    f = fit_tail(x, 1_500)
    assert f is not None
    assert -0.4 < f.shape < -0.15
    assert f.bounded
    for p in (5e-4, 5e-5):
        t = 1.0 + SCALE * -math.log1p(-p ** 0.2)  # exact P(X <= t) = p
        assert _max_exp_cdf(1.0, t) == pytest.approx(p, rel=1e-9)
        model = float(f.lower_rate(np.array([t]), x)[0])
        assert 0.5 < model / p < 2.0
    # Inside the bulk the rate is the empirical one.
    u = float(x[3_000])
    assert float(f.lower_rate(np.array([u]), x)[0]) == pytest.approx(3_001 / 50_000)


def test_laplace_tails_are_not_bounded() -> None:
    # Laplace tails are exponential (shape 0): the gate xi + 2 SE < 0 passes by chance with
    # probability about 2.3% per tail; on this fixed seed none of the four tails of two inputs
    # passes, and the fitter offers no candidate.
    g = np.random.default_rng(1)
    xs = [np.sort(g.laplace(m, SCALE, size=50_000)) for m in (0.0, 1.0)]
    for x in xs:
        for y in (x, np.sort(-x)):
            f = fit_tail(y, 1_500)
            assert f is not None and abs(f.shape) < 0.1 and not f.bounded
    fit = TailEventFitter()
    fit.configure(n_test=900_000, delta=0.0, pooled=False, alpha=0.05)
    for j, x in enumerate(xs):
        fit.update(x[:, None], j)
    assert fit.finish() == []


def _tail_fitter_on_max_exp(delta: float) -> list[TailEventScorer]:
    g = np.random.default_rng(2)
    fit = TailEventFitter()
    fit.configure(n_test=900_000, delta=delta, pooled=False, alpha=0.05)
    for j, a in enumerate((1.0, 2.0)):
        for _ in range(5):
            fit.update(_max_exp(a, 10_000, g)[:, None], j)
    return fit.finish()


def test_the_fixed_event_is_a_rare_lower_tail_of_the_input_with_the_earlier_end() -> None:
    # 1 + max Exp against 2 + max Exp: the ratio ((t-1)/(t-2))^5 grows without bound towards 2,
    # so the event is {x <= t}, more likely on data0, deep in the tail: the oracle's best event
    # at 9 x 10^5 test runs has P(data0) = 4.85e-5 (t = 3.9); we ask for P(data0) in
    # [1e-5, 5e-4], well below the 1.4e-3 event that counting on the training split keeps.
    (sc,) = _tail_fitter_on_max_exp(0.0)
    assert sc.tail == "lower" and sc.numerator == 0 and sc.events_fixed_on_fit
    assert 1e-5 < _max_exp_cdf(1.0, sc.threshold) < 5e-4
    assert _max_exp_cdf(1.0, sc.threshold) > 2 * _max_exp_cdf(2.0, sc.threshold)
    # Row-wise 0/1 score, the threshold included.
    x = np.array([sc.threshold - 1.0, sc.threshold, sc.threshold + 1e-9, 50.0])
    assert sc(x[:, None]).tolist() == [1.0, 1.0, 0.0, 0.0]
    up = TailEventScorer("upper", 3.0, 1, -0.2)
    assert up(np.array([[2.0], [3.0], [4.0]])).tolist() == [0.0, 1.0, 1.0]
    assert "output <= " in sc.to_dict()["description"]


def test_no_candidate_for_delta_claims_or_small_fits() -> None:
    assert _tail_fitter_on_max_exp(1e-5) == []
    fit = TailEventFitter()
    g = np.random.default_rng(3)
    for j, a in enumerate((1.0, 2.0)):
        fit.update(_max_exp(a, MIN_TAIL_RUNS, g)[:, None], j)  # k = n: nothing beyond the tail
    assert fit.finish() == []
    vec = TailEventFitter()
    vec.update(np.zeros((10, 2)), 0)
    vec.update(np.zeros((10, 2)), 1)
    assert vec.finish() == []


def test_audit_of_report_noisy_max_value_uses_the_tail_event() -> None:
    # DP-Sniper's ReportNoisyMax4 (five queries, exponential noise of scale 2/0.1, the value
    # released), 10^6 runs, seed 0: before this statistic the audit kept a lower-tail threshold
    # of probability 1.4e-3 and tested 0.572; the oracle's mean bound at this budget is 1.105.
    # The tail event tests above 0.9 (measured 1.166).
    def rnm4(d: float, n: int, g: np.random.Generator) -> np.ndarray:
        return d + g.exponential(SCALE, size=(n, 5)).max(axis=1)
    r = audit(rnm4, 1.0, 2.0, epsilon=0.1, samples=1_000_000, alpha=0.1, seed=0)
    assert r.statistic["name"] == "tail event (generalised Pareto)"
    assert r.epsilon_lower_bound > 0.9


# ------------------------------------------------------------------------------------------------
# False alarms
# ------------------------------------------------------------------------------------------------

TILT = 4.0


def _tilted_z() -> float:
    return integrate.quad(lambda x: 5 * x ** 4 * math.exp(TILT * x), 0.0, 1.0, epsabs=0,
                          epsrel=1e-12)[0]


def _bounded_release(d: int, n: int, g: np.random.Generator) -> np.ndarray:
    """data0: the maximum of five uniforms (density 5 x^4 on [0, 1], lower tail x^5, shape -1/5);
    data1: the same tilted by e^{TILT x} (rejection sampling), so the log density ratio is
    ``TILT x - ln Z`` on the common support: finite epsilon, bounded lower tails on both."""
    if d == 0:
        return g.random(n) ** 0.2
    out: list[np.ndarray] = []
    need = n
    while need > 0:
        x = g.random(2 * need + 16) ** 0.2
        x = x[g.random(x.size) < np.exp(TILT * (x - 1.0))][:need]
        out.append(x)
        need -= x.size
    return np.concatenate(out)


def test_bounded_release_law() -> None:
    # The sampler against its density: the tilted law's CDF by quadrature (Kolmogorov-Smirnov at
    # 2 x 10^4 runs; p > 0.001 on this seed), and the exact epsilon ln Z against a closed form
    # of the integral (repeated integration by parts).
    z = _tilted_z()
    a = TILT
    closed = 5 * (math.exp(a) * (1 / a - 4 / a ** 2 + 12 / a ** 3 - 24 / a ** 4 + 24 / a ** 5)
                  - 24 / a ** 5)
    assert z == pytest.approx(closed, rel=1e-10)
    g = np.random.default_rng(4)
    x1 = _bounded_release(1, 20_000, g)

    def cdf1(t: float) -> float:
        return integrate.quad(lambda x: 5 * x ** 4 * math.exp(TILT * x), 0.0, t)[0] / z
    assert stats.kstest(x1, np.vectorize(cdf1)).pvalue > 1e-3
    assert stats.kstest(_bounded_release(0, 20_000, g), lambda t: np.clip(t, 0, 1) ** 5
                        ).pvalue > 1e-3


@pytest.mark.slow
def test_false_alarm_campaign_tail_event() -> None:
    # 1000 audits at 10^5 runs per input of a correct release whose lower tails are bounded (the
    # tail event is offered and often chosen: its best events are rare lower tails, ratio up to
    # Z at the support's end, where the generalised Pareto fit extrapolates), claimed at its
    # exact epsilon max(ln Z, TILT - ln Z) = ln Z = 3.46 (with the 3-SE gate on both inputs'
    # tails it is chosen in 106 of the 1000). A valid auditor is wrong with probability <= alpha = 0.05 per audit: more than binom(1000, 0.05).ppf(0.999) = 73
    # false alarms has probability 6.5e-4 under the null; an auditor at twice the level exceeds
    # it with probability 0.998. Measured (seeds 100000-100999): see docs/benchmarks.md.
    z = _tilted_z()
    eps = max(math.log(z), TILT - math.log(z))
    reps, alpha = 1_000, 0.05
    alarms = chosen = 0
    for s in range(reps):
        r = audit(_bounded_release, 0, 1, epsilon=eps, samples=100_000, alpha=alpha,
                  seed=100_000 + s)
        alarms += r.verdict == "violated"
        chosen += r.statistic["name"] == "tail event (generalised Pareto)"
    assert chosen >= reps // 10, chosen  # the statistic under test is exercised
    assert alarms <= int(stats.binom(reps, alpha).ppf(0.999)), (alarms, chosen)
    print(f"tail campaign: {alarms}/{reps} violated, tail event chosen in {chosen}")
