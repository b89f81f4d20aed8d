"""The grid and point plans of AFKT23's experts learners: Algorithms 1, 2 and 5, and net OCO.

Asi, Feldman, Koren & Talwar, ICML 2023 (``afkt23.txt``), Theorems 1-3, 6 and 7. For each claim a
grid function (the points audited at a budget) and a plan builder: at small ``T`` and ``d`` the
exact epsilon(delta) of the released index sequence on the threshold pairs of
:mod:`~dpaudit.papers.afkt23.pairs` (or a certified bound from one witness), the accountant of the
implemented noise, the engine's test on the exact-worst pair and the point's evidence, a
:class:`~dpaudit.evidence.PointEvidence` with the paper's own entries (calibration, pairs,
counterexamples) in ``details`` and the witness's ``severity``. :mod:`~dpaudit.papers.afkt23.audit`
declares them; DP-FTRL and the mechanisms are in :mod:`~dpaudit.papers.afkt23.mechanism_plans`.
How each number is obtained: ``README.md`` beside this file (Evidence).
"""

from __future__ import annotations

import math
from typing import Any, Callable, Mapping, Sequence

import numpy as np
from scipy import stats

from dpaudit.claims.context import AuditContext, coarse
from dpaudit.claims.curve_deltas import DECADES
from dpaudit.claims.declaration import EmpiricalPlan, PointPlan
from dpaudit.claims.evidence import CERTIFIED, EXACT, PointEvidence
from dpaudit.claims.verdict import format_parameters
from dpaudit.formal.accounting import pure_composition_epsilon
from dpaudit.learners.expert_streams import killing_stream
from dpaudit.learners.losses import HingeLoss
from dpaudit.learners.net_oco import NetOco
from dpaudit.learners.potential_experts import PotentialExperts
from dpaudit.learners.sparse_vector_experts import (AdaptiveSparseVectorExperts, SparseVectorExperts,
                                                    algorithm1_parameters, algorithm2_parameters)
from dpaudit.papers.afkt23 import claims as C
from dpaudit.papers.afkt23.exact import (ALG5_QUERY_SENSITIVITY_BOUND, MIN_MASS, alg1_accountant,
                                         alg1_law, alg2_accountant, alg2_alternating_bound,
                                         alg5_accountant, alg5_first_switch_bound, alg5_law,
                                         alg5_two_switch_log_probability, discrete_epsilon,
                                         law_arrays, max_selections)
from dpaudit.papers.afkt23.gamma import (GAMMA_POINTS_APPROX, GAMMA_POINTS_NEAR_ONE,
                                         GAMMA_POINTS_PURE, HYPOTHESIS_POINTS,
                                         PAIR_EVERY_EXPERT_LOSES, SCOPE_HYPOTHESIS,
                                         algorithm5_parameters_at_gamma, gamma_severity,
                                         hypothesis_bound, l_star, pairs_meeting_hypothesis)
from dpaudit.papers.afkt23.pairs import losing_pairs, threshold_pairs
from dpaudit.papers.afkt23.severity import alg2_event_severity, alg5_delta_severity
from dpaudit.papers.afkt23.statistics import first_switch_round

__all__ = ["CURVE_DELTAS", "EXACT_T", "EXACT_D", "ALG1_ACCOUNTANT_NOTE", "LARGE_EPS_POINT",
           "LARGE_EPS_STREAM", "LARGE_EPS_REPLACEMENT", "LARGE_EPS_PATH", "NEAR_ONE_DELTA_POINT",
           "NEAR_ONE_DELTA_ROWS", "NEAR_ONE_DELTA_REPLACED", "NEAR_ONE_DELTA_J",
           "alg1_grid", "alg1_plan", "net_grid", "net_plan", "alg2_grid", "alg2_plan",
           "alg5_grid", "alg5_plan"]

#: The deltas of every afkt23 privacy curve (the claims layer's decades, as a list).
CURVE_DELTAS = list(DECADES)
SEQ_STATISTIC = "engine's estimated log-likelihood ratio of the whole released index sequence"
SWITCH_STATISTIC = "first visible switch round (0 = never switched); threshold chosen on the training split"
#: Largest (T, d) for which the exact law is enumerated at a grid point.
EXACT_T, EXACT_D = 6, 3


# --- helpers --------------------------------------------------------------------------------------

def _switch_followup(params: Mapping[str, Any], plan_kwargs: dict[str, Any], mechanism: Any,
                     a: np.ndarray, b: np.ndarray) -> tuple[PointPlan, ...]:
    """The same point and pair, tested again with the first-switch-round statistic (a separate
    audited point with its own share of alpha)."""
    return (PointPlan(parameters={**params, "statistic": "first switch round"},
                      empirical=EmpiricalPlan(mechanism=mechanism, data0=a, data1=b,
                                              statistic=first_switch_round,
                                              statistic_name=SWITCH_STATISTIC,
                                              what="first-switch statistic"),
                      **plan_kwargs),)


def _pair_candidates(T: int, d: int, rounds: Sequence[int] | None = None
                     ) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """The pairs of :func:`threshold_pairs` replaced at ``rounds`` (default: the first and the last
    informative round)."""
    out = []
    for r in sorted(set(rounds) if rounds is not None else {1, max(1, T - 2)}):
        out += [(f"{name} (round {r})", a, b) for name, a, b in threshold_pairs(T, d, r)]
    return out


def _law_epsilon(law0: dict, law1: dict, delta: float) -> tuple[float, np.ndarray, np.ndarray]:
    """Exact epsilon(delta) of two index-sequence laws (outcomes below ``MIN_MASS`` left out at
    delta = 0, as quadrature cannot resolve them), with the laws as aligned arrays."""
    _, p, q = law_arrays(law0, law1)
    return discrete_epsilon(p, q, delta, min_mass=MIN_MASS if delta == 0 else 0.0), p, q


def _best_exact(law_fn: Callable[[np.ndarray], dict], T: int, d: int, delta: float,
                rounds: Sequence[int] | None = None, pairs: Sequence[tuple] | None = None
                ) -> tuple[float, str, np.ndarray, np.ndarray, dict]:
    """Largest exact epsilon(delta) over the candidate pairs (both directions), or over ``pairs``."""
    best = (-1.0, "", None, None, {})
    for name, a, b in (_pair_candidates(T, d, rounds) if pairs is None else pairs):
        e, p, q = _law_epsilon(law_fn(a), law_fn(b), delta)
        if e > best[0]:
            best = (e, name, a, b, {"p": p, "q": q})
    return best  # type: ignore[return-value]


def _zero_if_rounding(x: float) -> float:
    return 0.0 if abs(x) < 1e-12 else x


def _curve_from(p: np.ndarray | None, q: np.ndarray | None,
                accountant: Callable[[float], float]) -> Callable[[], dict[str, Any]]:
    def curve() -> dict[str, Any]:
        out: dict[str, Any] = {"deltas": CURVE_DELTAS,
                               "epsilon_accountant": [accountant(dl) for dl in CURVE_DELTAS]}
        # An epsilon below 1e-12 is floating-point rounding of 0 (e.g. 4e-16 where delta exceeds
        # the laws' total variation); it is drawn as 0, never as evidence on a log axis.
        out["epsilon_exact"] = (None if p is None else
                                [_zero_if_rounding(discrete_epsilon(p, q, dl))
                                 for dl in CURVE_DELTAS])
        return out
    return curve


# --- Algorithm 1 (pure and approximate) and Theorem 3 --------------------------------------------

ALG1_ACCOUNTANT_NOTE = (
    "accountant = the one sparse-vector instance that reads the replaced loss at eps/4 "
    "(exact.alg1_svt_epsilon: inside an instance the expert is fixed, so one replaced loss moves "
    "every later query by the same c, |c| <= 1; shifting the threshold noise by c costs c eps/4) "
    "composed with min(ceil(K), floor(T/2)) draws of eta; 'accountant_generic_svt' charges Lemma "
    "2.3's eps/2 for arbitrary 1-sensitive queries instead")


def _with_delta(points: list[dict[str, Any]], delta: float) -> list[dict[str, Any]]:
    """``points`` with ``delta`` set on each when it is positive (a pure claim's points carry
    none), in place."""
    if delta > 0:
        for p in points:
            p["delta"] = delta
    return points


def alg1_grid(delta: float) -> Callable[[AuditContext], list[dict[str, Any]]]:
    """The grid of AFKT23 Theorem 1's claim on Algorithm 1 (ICML 2023, Sec. 3), pure or approximate.

    Exact laws at ``T = EXACT_T``: (eps, d, beta) = (1, 2, 0.25), (128, 2, 0.49), (128, 3, 0.49),
    and at the standard budget ``d = 2, beta = 0.1`` at eps 0.1 and 20. The accountant alone at
    ``T = 4096``, ``d = 2``, ``beta = 0.49``, eps 0.1, 1, 10 under both readings of the loop
    ``k < K`` (``k_reading`` "printed" and "integer"), and at the standard budget ``d`` 16, 1024,
    ``T`` 256, 2^20, ``beta`` 0.01, 0.49. At ``delta > 0`` also the near-one end of delta's range
    (``delta = 0.99``, eps = 0.1, ``T = 4096``).

    Parameters
    ----------
    delta
        The claim's delta: 0 for ``alg1-pure``, its printed delta for ``alg1-approx`` (set on
        every point).

    Returns
    -------
    callable
        ``grid(ctx)``: the points at ``ctx``'s budget (fewer at the coarse grid), dicts of
        ``epsilon, d, T, beta, k_reading`` and, when ``delta > 0``, ``delta``.
    """
    def grid(ctx: AuditContext) -> list[dict[str, Any]]:
        pts = [dict(epsilon=e, d=d, T=EXACT_T, beta=b, k_reading="printed")
               for e, d, b in ((1.0, 2, 0.25), (128.0, 2, 0.49), (128.0, 3, 0.49))]
        big = [dict(epsilon=e, d=2, T=4096, beta=0.49, k_reading=k)
               for e in (0.1, 1.0, 10.0) for k in ("printed", "integer")]
        if not coarse(ctx.budget):
            pts += [dict(epsilon=e, d=2, T=EXACT_T, beta=0.1, k_reading="printed")
                    for e in (0.1, 20.0)]
            big += [dict(epsilon=1.0, d=d, T=T, beta=b, k_reading="printed")
                    for d in (16, 1024) for T in (256, 2 ** 20) for b in (0.01, 0.49)]
        _with_delta(pts + big, delta)
        if delta > 0:  # the near-one end of delta's range (claims.ALG1_APPROX.ranges says why)
            big.append(dict(epsilon=0.1, d=2, T=4096, beta=0.49, k_reading="printed", delta=0.99))
        return pts + big
    return grid


def alg1_plan(params: dict[str, Any], ctx: AuditContext) -> PointPlan:
    """One point of AFKT23 Theorem 1's claim on Algorithm 1 (ICML 2023, Sec. 3, Algorithm 1).

    The calibration of Theorem 1 (``eta = eps/(2K)`` pure, ``eps/sqrt(32 K log(1/delta))``
    approximate), :func:`~dpaudit.papers.afkt23.exact.alg1_accountant` (and its generic-SVT
    variant as evidence). At ``T <= EXACT_T`` and ``d <= EXACT_D`` the exact epsilon(delta) of the
    released sequence, largest over the threshold pairs replaced at the first and last informative
    rounds; the engine's test on that pair, with a first-switch-round follow-up point.

    Parameters
    ----------
    params
        The grid point (``epsilon, d, T, beta, k_reading``, optional ``delta``; see
        :func:`alg1_grid`).
    ctx
        The audit context (unused: the point is the same at every budget).

    Returns
    -------
    PointPlan
        Exact epsilon (``None`` above the exact sizes), accountant, empirical test, privacy curve,
        the recommendation that would deliver the claim, and the evidence (``details``:
        calibration, draws allowed, the printed and implemented sums, ``exact_pair``).

    Raises
    ------
    KeyError
        If ``params`` lacks a key of the grid.
    ValueError
        If a parameter is outside the range ``algorithm1_parameters`` accepts.
    """
    delta = params.get("delta", 0.0)
    p = algorithm1_parameters(params["epsilon"], params["d"], params["T"], beta=params["beta"],
                              delta=delta, k_reading=params["k_reading"])
    acc = alg1_accountant(p)
    draws = max_selections(p.T, p.selections)
    details: dict[str, Any] = {"calibration": p.to_dict(), "max_selections": draws,
                               "printed_accounting": p.svt_epsilon + p.K * p.eta,
                               "implemented_pure_sum": p.svt_epsilon + draws * p.eta,
                               "accountant_generic_svt": alg1_accountant(p, svt="generic"),
                               "accountant_note": ALG1_ACCOUNTANT_NOTE}
    exact = None
    emp = None
    followups: tuple[PointPlan, ...] = ()
    pq = (None, None)
    if p.T <= EXACT_T and p.d <= EXACT_D:
        e, name, a, b, laws = _best_exact(lambda L: alg1_law(L, p), p.T, p.d, delta)
        exact, pq = e, (laws["p"], laws["q"])
        details["exact_pair"] = name
        details["exact_note"] = ("exact over outcomes of probability >= 1e-10 (quadrature)"
                                 if delta == 0 else "exact epsilon(delta) of the two discrete laws")
        emp = EmpiricalPlan(mechanism=SparseVectorExperts(p), data0=a, data1=b,
                            statistic_name=SEQ_STATISTIC, what=f"exact-worst pair {name}")
        followups = _switch_followup(params, dict(claimed_epsilon=params["epsilon"],
                                                  claimed_delta=delta, exact=exact,
                                                  accountant=acc,
                                                  evidence=PointEvidence(details=details)),
                                     SparseVectorExperts(p), a, b)
    evidence = PointEvidence(details=details)
    return PointPlan(parameters=params, claimed_epsilon=params["epsilon"], claimed_delta=delta,
                     exact=exact, accountant=acc, empirical=emp, evidence=evidence,
                     followups=followups,
                     curve=_curve_from(pq[0], pq[1], lambda dl: alg1_accountant(p, dl)),
                     recommendation=lambda: _alg1_recommendation(p))


def _alg1_recommendation(p: Any, where: str | None = None) -> str:
    where = where or f"d={p.d}"
    return (f"At eps={p.epsilon:g}, {where}, T={p.T}, beta={p.beta:g}: the loop 'k < K' with K = "
            f"{p.K:.4g} allows {p.selections} = ceil(K) draws of eta = eps/(2K) each; either stop "
            f"after floor(K) = {math.floor(p.K)} draws (k_reading='integer') or set eta = "
            f"eps/(2 ceil(K)) = {p.epsilon / (2 * math.ceil(p.K)):.6g}.")


def net_grid(ctx: AuditContext) -> list[dict[str, Any]]:
    """The grid of AFKT23 Theorem 3's claim on net OCO (ICML 2023, Sec. 3.2: Algorithm 1 over a net).

    Exact laws at ``T = 4`` (``d = 1``, and ``d = 2`` at eps = 128), the accountant at ``T = 256``
    and the near-one end of delta's range (``delta = 0.99``); the standard budget adds ``T = 1024``,
    more ``d = 2`` points and ``T = 1`` (the end of the stated ``T >= 1``).

    Parameters
    ----------
    ctx
        The audit context (the standard budget adds the ``T = 1024``, ``d = 2`` and
        ``T = 1`` points).

    Returns
    -------
    list of dict
        The points, dicts of ``epsilon, delta, d, T``.
    """
    pts = [dict(epsilon=e, delta=dl, d=1, T=4) for e in (1.0, 128.0) for dl in (0.0, 1e-6)]
    pts.append(dict(epsilon=128.0, delta=0.0, d=2, T=4))
    pts += [dict(epsilon=1.0, delta=dl, d=1, T=256) for dl in (0.0, 1e-6)]
    pts.append(dict(epsilon=0.1, delta=0.99, d=1, T=256))  # the near-one end of delta's range
    if not coarse(ctx.budget):
        pts += [dict(epsilon=e, delta=0.0, d=1, T=1024) for e in (0.1, 10.0)]
        pts += [dict(epsilon=e, delta=dl, d=2, T=4) for e in (1.0, 128.0) for dl in (0.0, 1e-6)
                if (e, dl) != (128.0, 0.0)]
        pts.append(dict(epsilon=1.0, delta=0.0, d=1, T=1))  # T = 1 closes the stated T >= 1
    return pts


def _net_pair(d: int, T: int) -> tuple[list[Any], list[Any]]:
    v = np.zeros(d)
    v[0] = 1.0
    s0 = [HingeLoss(v=v, y=1.0) for _ in range(T)]
    s1 = list(s0)
    s1[0] = HingeLoss(v=-v, y=1.0)
    return s0, s1


def net_plan(params: dict[str, Any], ctx: AuditContext) -> PointPlan:
    """One point of AFKT23 Theorem 3's claim: Algorithm 1 run over a net of the unit ball.

    The net learner (``beta = 0.25``) and its Algorithm 1 calibration; the accountant
    :func:`~dpaudit.papers.afkt23.exact.alg1_accountant`. At ``T <= 4`` the exact epsilon(delta)
    of the released net indices on the hinge pair (``max(0, 1 - <e1, x>)`` every round vs round 1
    replaced by ``max(0, 1 + <e1, x>)``) and the engine's test on it.

    Parameters
    ----------
    params
        The grid point (``epsilon, delta, d, T``; see :func:`net_grid`).
    ctx
        The audit context (unused).

    Returns
    -------
    PointPlan
        Exact epsilon (``None`` at ``T > 4``), accountant, empirical test, privacy curve,
        recommendation and evidence (``details``: net size, ``rho``, calibration, the pair).

    Raises
    ------
    KeyError
        If ``params`` lacks a key of the grid.
    """
    oco = NetOco(params["epsilon"], params["T"], params["d"], delta=params["delta"], beta=0.25)
    p = oco.params
    delta = params["delta"]
    acc = alg1_accountant(p)
    evidence = PointEvidence(details={
        "net_size": int(oco.net.shape[0]), "rho": oco.rho, "calibration": p.to_dict(),
        "accountant_generic_svt": alg1_accountant(p, svt="generic"),
        "accountant_note": ALG1_ACCOUNTANT_NOTE,
        "max_selections": max_selections(p.T, p.selections),
        "pair": "hinge max(0, 1 - <e1, x>) every round vs round 1 replaced by "
                "max(0, 1 + <e1, x>); losses / (2 L D)"})
    exact = None
    emp = None
    pq = (None, None)
    if p.T <= 4:
        s0, s1 = _net_pair(params["d"], params["T"])
        exact, pp, qq = _law_epsilon(alg1_law(oco.expert_losses(s0), p),
                                     alg1_law(oco.expert_losses(s1), p), delta)
        pq = (pp, qq)
        emp = EmpiricalPlan(mechanism=lambda data, n, rng: oco.run_indices(data, n, rng),
                            data0=s0, data1=s1, statistic_name=SEQ_STATISTIC,
                            what="hinge pair on the net")
    return PointPlan(parameters=params, claimed_epsilon=params["epsilon"], claimed_delta=delta,
                     exact=exact, accountant=acc, empirical=emp, evidence=evidence,
                     curve=_curve_from(pq[0], pq[1], lambda dl: alg1_accountant(p, dl)),
                     recommendation=lambda: _alg1_recommendation(
                         p, f"d={params['d']} (a net of {p.d} experts)"))


# --- Algorithm 2 ----------------------------------------------------------------------------------

def alg2_grid(ctx: AuditContext) -> list[dict[str, Any]]:
    """The grid of AFKT23 Theorem 2's claim on Algorithm 2 (ICML 2023, Sec. 3.1, Algorithm 2).

    ``d = 2``, ``beta = 0.1``, eps 0.1, 1, 10 at ``T`` 64 and 2^30 (the standard budget adds
    ``T = 2``, the end of the stated ``T >= 2``), restarts uncapped as printed (``cap="none"``) and
    capped at log2 T applications as App. B.2's proof assumes; the standard budget adds
    ``d = 1024`` at ``T`` 2^12, 2^20 and ``beta`` 0.01, 0.49, uncapped.

    Parameters
    ----------
    ctx
        The audit context (the standard budget adds ``T = 2`` and the ``d = 1024`` points).

    Returns
    -------
    list of dict
        The points, dicts of ``epsilon, d, T, beta, cap``.
    """
    # standard grid: T = 2 closes the stated T >= 2 (claims.ALG2.ranges)
    Ts = (64, 2 ** 30) if coarse(ctx.budget) else (2, 64, 2 ** 30)
    pts = [dict(epsilon=e, d=d, T=T, beta=0.1, cap=cap)
           for e in (0.1, 1.0, 10.0) for d in (2,) for T in Ts for cap in ("none", "log2 T")]
    if not coarse(ctx.budget):
        pts += [dict(epsilon=1.0, d=1024, T=T, beta=b, cap="none") for T in (2 ** 12, 2 ** 20)
                for b in (0.01, 0.49)]
    return pts


def alg2_plan(params: dict[str, Any], ctx: AuditContext) -> PointPlan:
    """One point of AFKT23 Theorem 2's claim on Algorithm 2 (ICML 2023, Sec. 3.1, App. B.2).

    The calibration of Theorem 2 (``eps_0 = eps/(2 log2 T)``, Laplace(K/eps_0) counts),
    :func:`~dpaudit.papers.afkt23.exact.alg2_accountant`, the probability that one doubling test
    passes on a zero count and, at ``T <= ctx.budget.max_T``, the restart bookkeeping of 2000 runs
    on a stream that kills one expert after another. Uncapped (``d >= 2``): the certified
    log-ratio of the alternating sequence on the pair "round 1 all ones vs all zeros"
    (:func:`~dpaudit.papers.afkt23.exact.alg2_alternating_bound`) as the exact value, with its
    severity (:func:`~dpaudit.papers.afkt23.severity.alg2_event_severity`). No empirical test:
    the witness is a sequence of rare events.

    Parameters
    ----------
    params
        The grid point (``epsilon, d, T, beta, cap``; see :func:`alg2_grid`).
    ctx
        The audit context: its budget's ``max_T`` and the seed of the bookkeeping runs.

    Returns
    -------
    PointPlan
        Certified value (``None`` when capped), accountant, recommendation and evidence
        (``details``: calibration, pass probability, application budget, bookkeeping,
        ``counterexample``; ``severity``).

    Raises
    ------
    KeyError
        If ``params`` lacks a key of the grid.
    """
    cap = None if params["cap"] == "none" else int(math.ceil(math.log2(params["T"])))
    p = algorithm2_parameters(params["epsilon"], params["d"], params["T"], beta=params["beta"],
                              max_applications=cap)
    acc = alg2_accountant(p)
    # probability that one doubling test passes for a draw with zero observed loss
    pass_prob = float(stats.laplace.sf(-p.doubling_margin + 1.0, scale=p.laplace_scale))
    details: dict[str, Any] = {"calibration": p.to_dict(),
                               "doubling_test_pass_probability": pass_prob,
                               "application_budget_log2_T": p.application_budget}
    if params["T"] <= ctx.budget.max_T:
        # restart bookkeeping on a realizable stream that kills one expert after another
        T, d = params["T"], params["d"]
        kills = np.linspace(1, T, d, endpoint=False).astype(int) + 1
        learner = AdaptiveSparseVectorExperts(p)
        learner.run(killing_stream(T, d, kills, survivor=d - 1), 2000,
                    ctx.rng(C.ALG2.id, "bookkeeping", T))
        details["bookkeeping_killing_stream"] = learner.record.summary()
    exact = None
    severity = None
    if cap is None and params["d"] >= 2:
        cx = alg2_alternating_bound(p)
        exact = cx.certified
        details["counterexample"] = {
            "pair": "D: round 1's loss vector all ones, every other loss 0; D': all losses 0 (both "
                    "realizable)",
            "output": f"the two experts alternate every round, T' = {cx.T} rounds (one internal "
                      "path: every round a draw or a restart, every doubling test passed)",
            "passes": cx.passes, "tail_passes": cx.tail_passes,
            "laplace_scale": cx.laplace_scale, "doubling_margin": cx.doubling_margin,
            "per_tail_pass": cx.per_pass, "certified_log_ratio": cx.certified,
            "log_ratio_with_early_passes": cx.log_ratio,
            "derivation": "exact.alg2_alternating_bound: only the tests differ (count 1 vs 0); a "
                          "pass with Lbar* = 2^n >= margin + 1 is an upper-tail Laplace event in "
                          "both streams, ratio exactly e^{1/b}, b = K/eps_0; earlier passes ratio "
                          ">= 1; bound = tail_passes / b",
            "float_caveat": "exact arithmetic (Algorithm 2 as printed): the float64 learner's Lbar* "
                            "overflows to inf after 1024 doublings, after which nothing fires; the "
                            "path needs " + str(cx.passes) + " doublings"}
        severity = alg2_event_severity(p, cx.passes)
    return PointPlan(parameters=params, claimed_epsilon=params["epsilon"], claimed_delta=0.0,
                     exact=exact, exact_kind=CERTIFIED, accountant=acc,
                     evidence=PointEvidence(details=details, severity=severity),
                     recommendation=lambda: (f"Cap the applications of Algorithm 1 at log2 T = "
                                             f"{p.application_budget:.4g} (max_applications) as "
                                             "the proof in App. B.2 assumes."))


# --- Algorithm 5 ----------------------------------------------------------------------------------

def alg5_grid(delta: float) -> Callable[[AuditContext], list[dict[str, Any]]]:
    """The grid of AFKT23 Theorem 6 (pure) or 7 (approximate) on Algorithm 5 (ICML 2023, App. C).

    Exact laws at ``T = EXACT_T``, ``d = 2`` (eps 1, 8 pure; 0.5 approximate, under both
    ``eps0_reading`` at the standard budget), the accountant at ``T = 4096``, ``d`` 2 and 1024; the
    standard budget adds ``d`` 16, 2^20 at ``T`` 64, 2^20 and ``T = 2`` (the end of the stated
    ``T >= 2``). Then the special points: pure, :data:`LARGE_EPS_POINT` and the
    ``gamma.HYPOTHESIS_POINTS``; approximate, :data:`NEAR_ONE_DELTA_POINT` and the
    ``gamma.GAMMA_POINTS_NEAR_ONE``; both, the ``gamma.GAMMA_POINTS_PURE`` or
    ``gamma.GAMMA_POINTS_APPROX`` (gamma near 1 and both sides of the jumps of ``ceil(K)``). Every
    point without a gamma gets the DP-OPE corollary's ``gamma = 1/d``.

    Parameters
    ----------
    delta
        The claim's delta: 0 for ``alg5`` (Theorem 6), its printed delta for ``alg5-approx``
        (Theorem 7; set on the regular points).

    Returns
    -------
    callable
        ``grid(ctx)``: the points at ``ctx``'s budget, dicts of ``epsilon, d, T, eps0_reading,
        gamma`` with ``delta``, ``pair`` or ``scope`` where they apply.
    """
    def grid(ctx: AuditContext) -> list[dict[str, Any]]:
        readings = ("eps0-formula", "eta-formula") if delta > 0 else ("eps0-formula",)
        eps_small = (0.5,) if delta > 0 else (1.0, 8.0)
        pts = [dict(epsilon=e, d=2, T=EXACT_T, eps0_reading=r) for e in eps_small
               for r in (readings[:1] if coarse(ctx.budget) else readings)]
        big_eps = (0.1, 0.9) if delta > 0 else (0.1, 1.0, 10.0)
        pts += [dict(epsilon=e, d=d, T=4096, eps0_reading=r) for e in big_eps for d in (2, 1024)
                for r in readings]
        if not coarse(ctx.budget):
            pts += [dict(epsilon=big_eps[-1], d=d, T=T, eps0_reading=readings[0])
                    for d in (16, 2 ** 20) for T in (64, 2 ** 20)]
            # T = 2 closes the stated T >= 2 (claims._ALG5_T), by the exact laws at d = 2
            pts.append(dict(epsilon=eps_small[0], d=2, T=2, eps0_reading=readings[0]))
        _with_delta(pts, delta)
        if delta == 0:
            pts.append(dict(LARGE_EPS_POINT))
        if delta > 0:
            # Theorem 7 restricts only eps < 1: its eps_0 = eps / (sqrt(K) log(1/delta)) grows
            # without bound as delta -> 1 and the sparse vector becomes nearly deterministic
            pts.append(dict(NEAR_ONE_DELTA_POINT))
        for p in pts:  # the DP-OPE corollary's gamma = 1/d, stated on every point
            p.setdefault("gamma", 1.0 / p["d"])
        # Theorems 6-7 imply gamma in (0, 1) (gamma.GAMMA_RANGE_SENTENCE): its extreme near 1 and
        # both sides of the jumps of ceil(K) at K = 1 and K = 2
        pts += [dict(g) for g in (GAMMA_POINTS_APPROX if delta > 0 else GAMMA_POINTS_PURE)]
        if delta > 0:  # gamma close to 1, with pairs in which every expert loses every round too
            pts += [dict(g) for g in GAMMA_POINTS_NEAR_ONE]
        if delta == 0:  # Theorem 6's other reading: privacy only for pairs meeting its hypothesis
            pts += [dict(g) for g in HYPOTHESIS_POINTS]
        return pts
    return grid


#: alg5's best pair found (README "Why alg5 stays open"): a search over streams for the largest
#: log-ratio as eps -> infinity (rate functions) found this d = 2, T = 10 pair (1.258 eps_0 in the
#: limit, 1.203 eps_0 here, against the claim's K eps_0 = 1.386 eps_0). D' replaces round 1.
LARGE_EPS_POINT = dict(epsilon=3000.0, d=2, T=10, eps0_reading="eps0-formula", pair="two switches")
LARGE_EPS_STREAM = [[0, 1], [1, 1], [1, 0], [1, 1], [0, 1], [1, 1], [0, 1], [0, 0], [1, 0], [0, 0]]
LARGE_EPS_REPLACEMENT = (0, [1, 0])
#: The released sequence: expert 0, expert 1 from round 4, expert 0 from round 10.
LARGE_EPS_PATH = dict(x0=0, h1=4, y1=1, h2=10, y2=0)

#: The grid point of alg5-approx where Theorem 7's calibration fails: delta close to 1 (in the
#: printed range, which restricts only eps < 1); see exact.alg5_first_switch_bound.
NEAR_ONE_DELTA_POINT = dict(epsilon=0.9, d=1000, T=6, eps0_reading="eps0-formula", delta=0.997,
                            pair="first switch")
#: Its pair: experts 1..d-1 lose these amounts in rounds 1..6 (expert 0 never loses); the
#: neighbour zeroes round 3, so the phase-1 query crosses the threshold 2 at round 3 (value 2.5)
#: under D and at round 4 under D' (1.5, then 2.5).
NEAR_ONE_DELTA_ROWS = [0.75, 0.75, 1.0, 1.0, 0.0, 0.0]
NEAR_ONE_DELTA_REPLACED, NEAR_ONE_DELTA_J = 2, 3


def alg5_plan(params: dict[str, Any], ctx: AuditContext) -> PointPlan:
    """One point of AFKT23 Theorem 6 or 7's claim on Algorithm 5 (ICML 2023, App. C, Algorithm 5).

    The calibration at the point's gamma (:func:`~dpaudit.papers.afkt23.gamma.
    algorithm5_parameters_at_gamma`), :func:`~dpaudit.papers.afkt23.exact.alg5_accountant` (with
    the paper's own sum and the accountant at query sensitivity 1 and 2 as evidence) and, off
    ``gamma = 1/d``, :func:`~dpaudit.papers.afkt23.gamma.gamma_severity`. The exact value by the
    point's kind: ``pair="two switches"``, the certified log-ratio of one released sequence on
    :data:`LARGE_EPS_STREAM` (``path_bound``); ``pair="first switch"``, the certified
    ``ln((P_D(S) - delta)/P_D'(S))`` of :data:`NEAR_ONE_DELTA_ROWS` (``counterexample``, with
    :func:`~dpaudit.papers.afkt23.severity.alg5_delta_severity`); ``pair="every expert loses"``,
    the exact laws of both pair families (``pair_families``); ``scope="hypothesis pairs"``, the
    exact laws on the pairs meeting Theorem 6's hypothesis (``hypothesis``); otherwise, at
    ``T <= EXACT_T`` and ``d <= EXACT_D``, the exact laws on the threshold pairs, the engine's
    test on the worst one and a first-switch-round follow-up point.

    Parameters
    ----------
    params
        The grid point (see :func:`alg5_grid`).
    ctx
        The audit context (its budget: the replaced rounds of the candidate pairs).

    Returns
    -------
    PointPlan
        Exact or certified value (``None`` at the large points), accountant, empirical test where
        there is one, privacy curve, recommendation and evidence.

    Raises
    ------
    ValueError
        If ``pair="every expert loses"`` or ``scope="hypothesis pairs"`` is asked above the exact
        sizes (or the latter at ``delta > 0``), or a parameter is outside the calibration's range.
    """
    delta = params.get("delta", 0.0)
    p = algorithm5_parameters_at_gamma(params["epsilon"], params["d"], params["T"],
                                       params.get("gamma"), delta=delta,
                                       eps0_reading=params["eps0_reading"])
    acc = alg5_accountant(p)
    printed = pure_composition_epsilon([p.epsilon0 + p.eta] * p.selections, delta)
    evidence = PointEvidence(
        details={"calibration": p.to_dict(), "paper_accounting_with_ceil_K": printed,
                 "accountant_with_sensitivity_1": alg5_accountant(p, query_sensitivity=1.0),
                 "accountant_with_sensitivity_2": alg5_accountant(
                     p, query_sensitivity=ALG5_QUERY_SENSITIVITY_BOUND)},
        severity=gamma_severity(p) or None)
    exact = None
    exact_kind = EXACT
    emp = None
    followups: tuple[PointPlan, ...] = ()
    pq = (None, None)
    if params.get("pair") == "two switches":
        D = np.array(LARGE_EPS_STREAM, dtype=float)
        Dp = D.copy()
        Dp[LARGE_EPS_REPLACEMENT[0]] = LARGE_EPS_REPLACEMENT[1]
        lp0 = alg5_two_switch_log_probability(D, p, **LARGE_EPS_PATH)
        lp1 = alg5_two_switch_log_probability(Dp, p, **LARGE_EPS_PATH)
        # one output's log-ratio: a lower bound on the pair's pure epsilon (quadrature at relative
        # tolerance 1e-11, so 1e-6 absolute is ample)
        exact, exact_kind = abs(lp0 - lp1) - 1e-6, CERTIFIED
        evidence = evidence.with_details(path_bound={
            "pair": f"{LARGE_EPS_STREAM} vs round {LARGE_EPS_REPLACEMENT[0] + 1} replaced by "
                    f"{LARGE_EPS_REPLACEMENT[1]}",
            "output": "expert 0, then expert 1 from round 4, expert 0 from round 10 (two visible "
                      "switches = the two draws the loop allows: one internal path)",
            "log_P_D": lp0, "log_P_Dprime": lp1, "ratio_over_eps0": abs(lp0 - lp1) / p.epsilon0,
            "derivation": "exact.alg5_two_switch_log_probability (log-space quadrature; equals the "
                          "enumerated law at eps = 10, 20: tests/test_afkt23_alg5_bound.py)"})
    elif params.get("pair") == "first switch":
        fb = alg5_first_switch_bound(p, NEAR_ONE_DELTA_ROWS, NEAR_ONE_DELTA_REPLACED, 0.0,
                                     NEAR_ONE_DELTA_J)
        exact, exact_kind = fb.certified, CERTIFIED
        event = f"the released expert first changes at round {NEAR_ONE_DELTA_J + 1}"
        severity = alg5_delta_severity(p.epsilon, p.d, p.T, delta, params.get("gamma"),
                                       p.eps0_reading, NEAR_ONE_DELTA_ROWS,
                                       NEAR_ONE_DELTA_REPLACED, NEAR_ONE_DELTA_J)
        evidence = evidence.with_details(counterexample={
            "pair": f"experts 1..{p.d - 1} lose {NEAR_ONE_DELTA_ROWS} in rounds 1..{p.T}, expert 0 "
                    f"never (realizable, L*(gamma) = 0); the neighbour zeroes round "
                    f"{NEAR_ONE_DELTA_REPLACED + 1}",
            "event": event, "P_D_lower": fb.p_lower, "P_Dprime_upper": fb.q_upper,
            "certified_epsilon": fb.certified,
            "derivation": "exact.alg5_first_switch_bound: P_D(S) >= (1 - 1/d) P[phase 1 halts at "
                          "query j]; P_D'(S) <= P[phase 1 fires at a query <= j]; epsilon(delta) "
                          ">= ln((P_D(S) - delta) / P_D'(S))"},
        ).with_(severity=severity | {"event": event, "event_probability_lower": fb.p_lower})
    elif params.get("pair") == PAIR_EVERY_EXPERT_LOSES:  # exact laws of both pair families
        if p.T > EXACT_T or p.d > EXACT_D:
            raise ValueError(f"pair={PAIR_EVERY_EXPERT_LOSES!r} is audited by exact laws at T <= "
                             f"{EXACT_T}, d <= {EXACT_D}; got {params!r}")
        rounds = sorted({1, max(1, p.T - 2)})
        families = {"zero-loss expert": _pair_candidates(p.T, p.d, rounds),
                    "every expert loses": [tuple(x) for r in rounds
                                           for x in losing_pairs(p.T, p.d, r)]}
        found: dict[str, Any] = {}
        best: tuple[float, str, dict] = (-1.0, "", {})
        for family, pairs in families.items():
            e, name, _, _, laws = _best_exact(lambda L: alg5_law(L, p), p.T, p.d, delta,
                                              pairs=pairs)
            found[family] = {"exact": e, "pair": name}
            if e > best[0]:
                best = (e, name, laws)
        exact = best[0]
        pq = (best[2]["p"], best[2]["q"])
        evidence = evidence.with_details(pair_families=found, exact_pair=best[1])
    elif params.get("scope") == SCOPE_HYPOTHESIS:  # exact laws only, on the admitted pairs
        if delta > 0 or p.T > EXACT_T or p.d > EXACT_D:
            raise ValueError("scope='hypothesis pairs' is Theorem 6's (delta = 0), audited by exact "
                             f"laws at T <= {EXACT_T}, d <= {EXACT_D}; got {params!r}")
        pairs = pairs_meeting_hypothesis(_pair_candidates(p.T, p.d, (1,) if coarse(ctx.budget)
                                                          else None), p.epsilon, p.gamma, p.T)
        exact, name, a, b, laws = _best_exact(lambda L: alg5_law(L, p), p.T, p.d, 0.0, pairs=pairs)
        pq = (laws["p"], laws["q"])
        evidence = evidence.with_details(
            exact_pair=name, hypothesis={"bound": hypothesis_bound(p.epsilon, p.gamma, p.T),
                                         "L_star": [l_star(a, p.gamma), l_star(b, p.gamma)]})
    elif p.T <= EXACT_T and p.d <= EXACT_D:
        e, name, a, b, laws = _best_exact(lambda L: alg5_law(L, p), p.T, p.d, delta,
                                          rounds=(1,) if coarse(ctx.budget) else None)
        exact, pq = e, (laws["p"], laws["q"])
        evidence = evidence.with_details(exact_pair=name)
        emp = EmpiricalPlan(mechanism=PotentialExperts(p), data0=a, data1=b,
                            statistic_name=SEQ_STATISTIC, what=f"exact-worst pair {name}")
        followups = _switch_followup(params, dict(claimed_epsilon=p.epsilon, claimed_delta=delta,
                                                  exact=exact, accountant=acc, evidence=evidence),
                                     PotentialExperts(p), a, b)
    return PointPlan(parameters=params, claimed_epsilon=p.epsilon, claimed_delta=delta,
                     exact=exact, exact_kind=exact_kind, accountant=acc, empirical=emp,
                     evidence=evidence, followups=followups,
                     curve=_curve_from(pq[0], pq[1], lambda dl: alg5_accountant(p, dl)),
                     recommendation=lambda: _alg5_recommendation(params, p))


def _alg5_recommendation(params: dict[str, Any], p: Any) -> str:
    """What would deliver the claim at ``params`` (calibration ``p``): the proof charges K phases
    of eps_0 (1-sensitive queries, eta per draw), the code runs ceil(K), its queries are up to
    2-sensitive and a draw costs 2 eta. Below K = 1 (gamma > e^(-1/2)) the loop still runs one
    phase and eps_0 itself is what must shrink."""
    svt = ("calibrate the sparse vector for query sensitivity 2 (threshold noise Lap(4/eps_0), "
           "query noise Lap(8/eps_0))")
    if math.floor(p.K) >= 1:
        return (f"At ({format_parameters(params)}): run at most floor(K) = {math.floor(p.K)} "
                f"phases, charge the draw exp(-eta s) as 2 eta, and {svt}.")
    return (f"At ({format_parameters(params)}): K = 2 ln(1/gamma) = {p.K:.3g} < 1, so the loop "
            f"runs one phase, and its eps_0 = {p.epsilon0 / p.epsilon:.4g} eps alone exceeds the "
            f"claim: choose eps_0 with eps_0 + 2 eta <= eps (eta = eps_0/(56 ln T)), i.e. eps_0 <= "
            f"{p.epsilon / (1 + 2 / (56 * math.log(p.T))):.4g}, and {svt}.")
