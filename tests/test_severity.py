"""How much a verdict matters: the generic severity computation on hand-made evidence,
and the headline numbers of afkt23/alg5-approx, alg2 and dp-ftrl against derivations written here
(numpy/scipy and tests/sparse_vector_law.py; no dpaudit code for the decisive numbers).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from expected_verdicts_support import driver_verdict, gaussian_epsilon, plan, released_nodes_containing
from scipy import optimize
from sparse_vector_law import halting_law

from dpaudit.claims.evidence import CERTIFIED, GridPoint
from dpaudit.claims.severity import (assess_severity, curve_violation_deltas, probability_text)


# -- the generic computation ---------------------------------------------------------------------

def _pt(delta: float, exact: float | None, claimed: float = 1.0, **evidence) -> GridPoint:
    return GridPoint({"epsilon": claimed, "delta": delta}, claimed, delta, exact, 2.0 * claimed,
                     None, evidence, CERTIFIED)


def test_a_violation_confined_to_large_delta_says_so() -> None:
    """Two points hold (delta 1e-6, 1e-3), one refutes at delta = 0.5 by 3/1: the delta span of
    the refuting points is [0.5, 0.5], above every other point's delta."""
    sev = assess_severity("violated", [_pt(1e-6, 0.4), _pt(1e-3, 0.5), _pt(0.5, 3.0)])
    assert sev["claimed_delta_range"] == [0.5, 0.5] and sev["factor"] == pytest.approx(3.0)
    assert sev["sentence"] == ("Violated only for delta >= 0.5 (1 of 3 audited points); strongest "
                               "by a factor of 3 at (epsilon=1, delta=0.5).")


def test_a_declared_witness_delta_and_accountant_delta_are_the_headline() -> None:
    sev = assess_severity("violated", [_pt(1e-6, 0.4), _pt(0.99, 2.0, severity={
        "delta_from": 0.9731, "where": "the noise vanishes", "holds_up_to_delta": 0.5})])
    assert sev["sentence"] == ("Violated only for delta >= 0.973, where the noise vanishes; the "
                               "accountant is within the claim for delta <= 0.5 at the same other "
                               "parameters.")
    assert sev["delta_from"] == 0.9731 and sev["holds_up_to_delta"] == 0.5


def test_a_declared_witness_delta_is_not_called_only_when_smaller_deltas_refute_too() -> None:
    """The witness refutes from delta = 0.973 on, and a point at delta = 1e-6 refutes by 1.5 (with
    its own 'where'): the headline drops 'only' and names that point, its factor and its 'where'."""
    sev = assess_severity("violated", [_pt(1e-6, 1.5, severity={"where": "gamma is near 1"}),
                                       _pt(0.99, 2.0, severity={"delta_from": 0.9731,
                                                                "where": "the noise vanishes"})])
    assert sev["sentence"] == ("Violated for delta >= 0.973, where the noise vanishes; also refuted "
                               "at 1 point(s) with smaller delta, worst by a factor of 1.5 at "
                               "(epsilon=1, delta=1e-06), where gamma is near 1.")


def test_a_violation_at_every_delta_also_names_the_factor_at_the_smallest_one() -> None:
    """Refuted at delta 1e-5 by 1.5 and 1.2, and by 3914 at delta 0.99 (a calibration whose noise
    vanishes as delta -> 1): the headline's worst is the 0.99 point, and it also names the largest
    factor among the delta = 1e-5 points (1.5 / 1), so the degenerate end does not hide it."""
    sev = assess_severity("violated", [_pt(1e-5, 1.5), _pt(1e-5, 1.2), _pt(0.99, 3914.0)])
    assert sev["factor"] == pytest.approx(3914.0)
    assert sev["sentence"].startswith("Violated by a factor of 3.91e+03 at (epsilon=1, delta=0.99)")
    assert sev["sentence"].endswith("; at the smallest refuted delta, 1e-05, by a factor of 1.5 "
                                    "at (epsilon=1, delta=1e-05).")
    # The worst already at the smallest delta: nothing added.
    one = assess_severity("violated", [_pt(1e-5, 2.0), _pt(0.5, 1.5)])
    assert "smallest refuted delta" not in one["sentence"]


def test_a_rare_event_witness_is_named_with_its_probability() -> None:
    log10_p = -400.0
    sev = assess_severity("violated", [_pt(0.0, 5.0, severity={
        "event_log10_probability_upper": log10_p, "event": "one released sequence"})])
    assert "pure DP through one released sequence of probability < 1e-300" in sev["sentence"]
    assert "any delta >= 1e-300 absorbs this witness" in sev["sentence"]
    assert "every refuting point's witness is such an event" in sev["sentence"]
    assert probability_text(-400.0) == "< 1e-300" and probability_text(-2.0) == "<= 0.01"
    # A second refuting point with no such witness: no claim that nothing refutes (eps, delta).
    mixed = assess_severity("violated", [
        _pt(0.0, 5.0, severity={"event_log10_probability_upper": log10_p, "event": "one event"}),
        _pt(0.0, 1.5)])
    assert "no audited evidence refutes" not in mixed["sentence"]
    assert "1 other refuting point(s) rest on other evidence" in mixed["sentence"]
    # Two rare-event witnesses: the more likely one decides the delta that absorbs both.
    two = assess_severity("violated", [
        _pt(0.0, 5.0, severity={"event_log10_probability_upper": -400.0}),
        _pt(0.0, 1.5, severity={"event_log10_probability_upper": -4.0})])
    assert "any delta >= 0.0001 absorbs this witness" in two["sentence"]


def test_the_privacy_curve_against_the_claim() -> None:
    """The worst pair's epsilon(delta) above the claimed 1 at the two smallest deltas only."""
    curve = {"deltas": [1e-10, 1e-6, 1e-2], "epsilon_exact": [1.5, 1.1, 0.3]}
    assert curve_violation_deltas(curve, 1.0) == [1e-10, 1e-6]
    sev = assess_severity("violated", [_pt(1e-6, 1.1)], curve=curve)
    assert sev["curve_violation_deltas"] == [1e-10, 1e-6]
    assert "above the claimed 1 for delta from 1e-10 to 1e-06" in sev["sentence"]


def test_nothing_to_say_for_inconclusive_or_plain_holds() -> None:
    assert assess_severity("inconclusive", [_pt(1e-6, 0.5)]) is None
    assert assess_severity("holds", [_pt(1e-6, 0.5)]) is None
    sev = assess_severity("holds", [_pt(1e-6, 0.5, severity={"calibration_caveat": "ours"})],
                          readings=[{"name": "other", "primary": False, "verdict": "violated",
                                     "worst_point": {"claimed_epsilon": 2.0,
                                                     "epsilon_exact": 3.0}}])
    assert sev["sentence"] == ("Holds under dpaudit's own calibration, which the paper does not "
                               "print: ours (accountant at most 2x the claim); under other it is "
                               "violated (up to 1.5x the claim).")


# -- afkt23/alg5-approx: violated only for delta >= 0.996 ----------------------------------------

EPS, D, T = 0.9, 1000, 6
ROWS = [0.75, 0.75, 1.0, 1.0, 0.0, 0.0]


def _certified(delta: float) -> float:
    """Theorem 7 (eps0-formula) at delta, the first-switch pair of the near-one-delta point:
    ln((P_D(S) - delta) / P_D'(S)) (test_afkt23_alg5_near_one_delta.py's derivation)."""
    K = 2 * math.log(D)
    e0 = EPS / (math.sqrt(K) * math.log(1 / delta))
    eta = e0 / (56 * math.log(T))

    def queries(rows: list[float]) -> list[float]:
        C = np.cumsum(rows)[:3]
        return [-math.log((1 + (D - 1) * math.exp(-eta * c)) / D) / eta - 2 for c in C]
    alt = list(ROWS)
    alt[2] = 0.0
    p = (1 - 1 / D) * halting_law(queries(ROWS), 2 / e0, 4 / e0)[2]
    q = 1 - halting_law(queries(alt), 2 / e0, 4 / e0)[3]
    return math.log((p - delta) / q) if p > delta else -math.inf


def test_alg5_approx_headline_delta_from_independent_bisection() -> None:
    """The same pair's certified bound crosses the claimed 0.9 at delta* = 0.99584 (brentq on the
    quadrature above): below it the witness refutes nothing, from it on it does, with eps_0 =
    eps/(sqrt(2 ln 1000) ln(1/delta*)) = 58.2 = 64.6 eps there."""
    star = optimize.brentq(lambda dl: _certified(dl) - EPS, 0.9955, 0.997, xtol=1e-6)
    assert star == pytest.approx(0.99584, abs=2e-5)
    e0 = EPS / (math.sqrt(2 * math.log(D)) * math.log(1 / star))
    p = plan("afkt23/alg5-approx", dict(epsilon=EPS, d=D, T=T, eps0_reading="eps0-formula",
                                        delta=0.997, pair="first switch"))
    sev = p.evidence["severity"]
    assert sev["delta_from"] == pytest.approx(star, abs=1e-6)
    assert f"exceeds {e0:.3g} (= {e0 / EPS:.3g} eps)" in sev["where"]
    assert 0.8 < sev["holds_up_to_delta"] < star
    from test_afkt23_alg5_near_one_delta import _by_hand
    p_lo = _by_hand()[0]                      # P_D(S) >= (1 - 1/d) P[halt at query 3] = 0.99894
    assert sev["event_probability_lower"] == pytest.approx(p_lo, abs=1e-8)
    sentence = assess_severity("violated", [p.grid_point()])["sentence"]
    assert f"of probability >= {p_lo:.4g}" in sentence and "first changes at round 4" in sentence
    assert sentence.startswith(
        "Violated only for delta >= 0.996, where eps_0 = eps / (sqrt(K) log(1/delta)) exceeds 58.2")


# -- afkt23/alg2: pure DP through an event of probability < 1e-300 --------------------------------

def _laplace_difference_log_sf(t: float, b1: float, b2: float) -> float:
    """log P(nu2 - nu1 > t), t >= 0, nu1 ~ Lap(b1), nu2 ~ Lap(b2), b2 > b1: the closed form
    (b2^2 e^(-t/b2) - b1^2 e^(-t/b1)) / (2 (b2^2 - b1^2)) (convolution of the two densities),
    taken in logs so that it stays exact far below the float range."""
    assert t >= 0 and b2 > b1
    return (-t / b2 + 2 * math.log(b2) + math.log1p(-(b1 / b2) ** 2 * math.exp(t / b2 - t / b1))
            - math.log(2 * (b2 ** 2 - b1 ** 2)))


def test_laplace_difference_tail_closed_form() -> None:
    """The closed form above against a Monte Carlo estimate where the tail is not tiny (t = b1:
    P ~ 0.36; 200000 draws give a standard error ~0.0011, so 0.006 is over 5 sigma)."""
    rng = np.random.default_rng(7)
    b1, b2, t = 1.0, 2.0, 1.0
    x = rng.laplace(0, b2, 200_000) - rng.laplace(0, b1, 200_000)
    assert abs(np.mean(x > t) - math.exp(_laplace_difference_log_sf(t, b1, b2))) < 0.006


def test_alg2_headline_event_probability() -> None:
    """The witnessing sequence alternates two experts over T' = 2^30 - 1 rounds (T = 2^30, odd
    part): it needs the first expert (1/2 at d = 2), and at each of the N = (T' - 1)/2 = 2^29 - 1
    passes the drawn expert among equal scores (1/2) and the restart's fresh x_0 (1/2) to be the
    other one, and the pass's sparse vector (Lap(4/eps_0) threshold noise, Lap(8/eps_0) query
    noise at eps_0/2, eps_0 = eps/(2 log2 T)) to fire on a zero query against 2^n + 4/eta +
    8B/eps_0 >= 1 + 4/eta + 8B/eps_0 (eta = eps_0/(2K), K = 6 ceil(log2 d) + 24 ln(T/beta), B =
    ln(2 T^3/beta)): at eps = 10, threshold 30034.94 and log10 P <= -1.4631e11."""
    T, eps, beta, d = 2 ** 30, 10.0, 0.1, 2
    N = (T - 1 - 1) // 2
    eps0 = eps / (2 * math.log2(T))
    K = 6 * math.ceil(math.log2(d)) + 24 * math.log(T / beta)
    eta = eps0 / (2 * K)
    B = math.log(2 * T ** 3 / beta)
    threshold = 1 + 4 / eta + 8 * B / eps0
    assert threshold == pytest.approx(30034.94, abs=0.01)
    b1, b2 = 2 / (eps0 / 2), 4 / (eps0 / 2)
    log_fire = _laplace_difference_log_sf(threshold, b1, b2)
    bound = (math.log(0.5) + N * (2 * math.log(0.5) + log_fire)) / math.log(10)
    assert bound == pytest.approx(-1.46312e11, rel=1e-5)
    assert bound < -(2 * N + 1) * math.log10(2)   # tighter than the coin flips alone
    p = plan("afkt23/alg2", dict(epsilon=eps, d=d, T=T, beta=beta, cap="none"))
    assert p.evidence["severity"]["event_log10_probability_upper"] == pytest.approx(bound, rel=1e-9)
    sev = assess_severity("violated", [p.grid_point()])
    assert sev["sentence"].startswith("Violated for pure DP through one released sequence (the two "
                                      "experts alternate every round; each of its 536870911 draws "
                                      "also needs the sparse vector to fire on a zero query "
                                      "against a threshold >= 30035")
    assert "of probability < 1e-300 (log10 P <= -1.463e+11)" in sev["sentence"]


# -- afkt23/dp-ftrl: holds on dpaudit's own calibration ------------------------------------------

def test_dp_ftrl_headline_names_its_calibration_and_the_other_reading() -> None:
    """Delta = L (Kairouz et al.'s sigma read as one clipped gradient) under replace-one: sigma
    from rho = h L^2/(2 sigma^2), h = 7 at T = 64, rho + 2 sqrt(rho ln 1e5) = eps; the pair's shift
    2L in the used nodes containing leaf 1 (released prefixes 1..63): mu = 2 sqrt(used)/sigma. At
    eps = 4 the pair's epsilon(1e-5) is 6.6529 = 1.663 eps, the largest ratio of the quick grid."""
    h, eps = 7, 4.0
    rho = (math.sqrt(math.log(1e5) + eps) - math.sqrt(math.log(1e5))) ** 2
    sigma = math.sqrt(h / (2 * rho))
    mu = 2 * math.sqrt(released_nodes_containing(1, 63)) / sigma
    ratio = gaussian_epsilon(mu, 1e-5) / eps
    assert ratio == pytest.approx(1.6632, rel=1e-3)
    audit = driver_verdict("afkt23/dp-ftrl", None, lemmas=False)
    assert audit.verdict == "holds"
    sentence = audit.severity()["sentence"]
    assert sentence.startswith("Holds under dpaudit's own calibration, which the paper does not "
                               "print: AFKT23 prints no sigma")
    assert f"it is violated (up to {ratio:.3g}x the claim)" in sentence


def test_a_curve_that_exceeds_the_claim_only_at_pure_dp_says_so() -> None:
    curve = {"deltas": [0.0, 1e-6], "epsilon_exact": [1.2, 0.9]}
    sev = assess_severity("violated", [_pt(0.0, 1.2)], curve=curve)
    assert "above the claimed 1 at delta = 0 only (privacy curve)" in sev["sentence"]
    curve = {"deltas": [0.0, 1e-6, 1e-3], "epsilon_exact": [1.5, 1.2, 0.9]}
    sev = assess_severity("violated", [_pt(0.0, 1.5)], curve=curve)
    assert "for delta from 0 (pure DP) to 1e-06" in sev["sentence"]
