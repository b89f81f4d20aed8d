"""Algorithm 5's calibration at any gamma of Theorems 6 and 7, not only gamma = 1/d.

Asi, Feldman, Koren & Talwar, ICML 2023 (``afkt23.txt``), App. C: Theorem 6 runs Algorithm 5 with
``K = 2 log 1/gamma``, ``eps_0 = eps/K`` and ``eta = eps_0/(56 log T)``, gamma the prior mass of
Lemma C.3 (so ``0 < gamma < 1``); Theorem 7 the same with ``eps_0 = eps/sqrt(K) log 1/delta``. This
module gives the calibration at any gamma, the gammas where the number of phases ``ceil(K)`` jumps,
and the reading :data:`SCOPE_HYPOTHESIS` (privacy only for pairs meeting Theorem 6's hypothesis
``L*(gamma) <= log^2 1/gamma log T/eps``) beside the primary :data:`SCOPE_ALL`. Why gamma is read
so, and what the hypothesis reading admits, are in ``README.md`` beside this file (Evidence,
"Algorithm 5 at any gamma").
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Sequence

import numpy as np

from dpaudit.learners.experts import log_of
from dpaudit.learners.potential_experts import Algorithm5Parameters, algorithm5_parameters
from dpaudit.learners.sparse_vector_experts import selection_cap

__all__ = ["algorithm5_parameters_at_gamma", "phase_jump_gamma", "GAMMA_EXTREME", "GAMMA_JUMPS",
           "GAMMA_EXTREME_APPROX", "GAMMA_RANGE_SENTENCE", "PAIR_EVERY_EXPERT_LOSES", "GAMMA_NEAR_ONE",
           "GAMMA_POINTS_NEAR_ONE", "near_one_gamma_finding", "gamma_text",
           "GAMMA_POINTS_PURE", "GAMMA_POINTS_APPROX", "gamma_finding", "gamma_severity",
           "SCOPE_ALL", "SCOPE_HYPOTHESIS", "HYPOTHESIS_POINTS", "l_star", "hypothesis_bound",
           "pairs_meeting_hypothesis", "hypothesis_finding"]

#: The upper end of gamma's range audited (K = 2 ln(1/0.99) = 0.0201: one phase, eps_0 = 49.75 eps).
#: The lower end is the grid's gamma = 1/d at d = 2^20 (standard budget) or 1024 (quick).
GAMMA_EXTREME = 0.99
#: Both sides of the jumps of ceil(K): K = 0.989 | 1.022 (1 | 2 phases), K = 1.989 | 2.043 (2 | 3).
GAMMA_JUMPS = (0.61, 0.6, 0.37, 0.36)

#: Where the range of gamma comes from: the paper prints no range; Theorems 6-7 set "K = 2 log
#: 1/gamma", which is positive only for gamma < 1, and Lemma C.3 introduces gamma as a prior mass
#: ("For some gamma > 0, let L*(gamma) be such that Pr_{x ~ mu}[...] >= gamma").
GAMMA_RANGE_SENTENCE = ("Theorems 6-7 imply gamma in (0, 1) without printing the range: their 'K = 2 "
                        "log 1/gamma' is positive only for gamma < 1, and Lemma C.3 introduces "
                        "gamma as a prior mass ('For some gamma > 0, let L*(gamma) be such that "
                        "Pr_{x ~ mu}[...] >= gamma'); gamma = 1/d only 'in particular' for DP-OPE")

_PAIR_T6 = dict(d=2, T=6, eps0_reading="eps0-formula")
#: Theorem 6: the exact law at T = 6, d = 2 where the loop allows one phase (gamma = 0.99, 0.61);
#: the best d = 2 pair (audit.LARGE_EPS_STREAM, eps = 3000) just above the jump to two phases
#: (gamma = 0.6: eps_0 = eps/1.022, two switches); the accountant at T = 4096 across K = 2.
GAMMA_POINTS_PURE: tuple[dict[str, Any], ...] = (
    dict(epsilon=1.0, gamma=GAMMA_EXTREME, **_PAIR_T6),
    dict(epsilon=1.0, gamma=0.61, **_PAIR_T6),
    dict(epsilon=3000.0, d=2, T=10, eps0_reading="eps0-formula", pair="two switches", gamma=0.6),
    dict(epsilon=1.0, d=2, T=4096, eps0_reading="eps0-formula", gamma=0.37),
    dict(epsilon=1.0, d=2, T=4096, eps0_reading="eps0-formula", gamma=0.36),
)
#: Theorem 7's eps_0 = eps/(sqrt(K) log 1/delta) exceeds eps only for K < 1/log^2(1/delta), gamma >
#: 0.99738 at delta = 1e-6 (the eta-formula's eps/sqrt(2 K log 1/delta) for gamma > 0.982): the upper
#: end of gamma for alg5-approx, audited by exact laws at T = 6, d = 2, eps = 0.9, delta = 1e-6.
GAMMA_EXTREME_APPROX = 0.99999
#: Theorem 7 (primary eps0-formula reading, delta = 1e-6): the accountant at the same gammas, and
#: the exact law near gamma = 1 (primary: 0.9999, within the claim, and 0.99999, eps_0 = 16.2 eps;
#: eta-formula: 0.9999, eps_0 = 13.5 eps).
GAMMA_POINTS_APPROX: tuple[dict[str, Any], ...] = tuple(
    dict(epsilon=0.9, d=2, T=4096, eps0_reading="eps0-formula", delta=1e-6, gamma=g)
    for g in (GAMMA_EXTREME, *GAMMA_JUMPS)) + tuple(
    dict(epsilon=0.9, d=2, T=6, eps0_reading=r, delta=1e-6, gamma=g)
    for r, g in (("eps0-formula", 0.9999), ("eps0-formula", GAMMA_EXTREME_APPROX),
                 ("eta-formula", 0.9999)))

#: The label of the points that audit gamma close to 1 with both pair families (``pair`` key): the
#: zero-loss-expert pairs of :func:`~dpaudit.papers.afkt23.pairs.threshold_pairs` and the pairs in
#: which every expert loses every round (:func:`~dpaudit.papers.afkt23.pairs.losing_pairs`). Near
#: gamma = 1 the first family's epsilon is not monotone in gamma and drops to 0 (from about gamma =
#: 1 - 1e-7 on: nothing comes near the threshold), which the second family covers.
PAIR_EVERY_EXPERT_LOSES = "every expert loses"
#: Theorem 7 near gamma = 1 (eps0-formula, eps = 0.9, delta = 1e-6, T = 6, d = 2), both families.
GAMMA_NEAR_ONE = (0.99995, 0.99999, 0.999999, 1.0 - 1e-7, 1.0 - 1e-8)
GAMMA_POINTS_NEAR_ONE: tuple[dict[str, Any], ...] = tuple(
    dict(epsilon=0.9, d=2, T=6, eps0_reading="eps0-formula", delta=1e-6, gamma=g,
         pair=PAIR_EVERY_EXPERT_LOSES) for g in GAMMA_NEAR_ONE)

#: The two readings of Theorem 6's "If L*(gamma) <= log^2 1/gamma log T/eps, then this algorithm
#: satisfies eps-DP" (grid parameter ``scope``; a point without it is under the primary reading).
SCOPE_ALL, SCOPE_HYPOTHESIS = "all pairs", "hypothesis pairs"
#: The other reading's points (exact laws at T = 6, d = 2, no sampling): gamma = 0.99 at eps = 1e-4
#: (bound 1.81: unit losses admitted) and eps = 1 (bound 1.8e-4: the primary's refuting pair is
#: excluded, its scaled copy is audited), and gamma = 1/d = 1/2 (L*(1/2) is the smaller expert's
#: loss, 0 on every realizable pair: the same pairs as the primary reading's).
HYPOTHESIS_POINTS: tuple[dict[str, Any], ...] = tuple(
    dict(epsilon=e, gamma=g, d=2, T=6, eps0_reading="eps0-formula", scope=SCOPE_HYPOTHESIS)
    for e, g in ((1e-4, GAMMA_EXTREME), (1.0, GAMMA_EXTREME), (1.0, 0.5)))


def l_star(losses: Any, gamma: float) -> float:
    """AFKT23 Lemma C.3's ``L*(gamma)`` (the smallest one) under the uniform prior over experts.

    The smallest ``L`` with ``#{x : sum_t l_t(x) <= L} >= gamma d`` (ICML 2023, App. C): the
    ``ceil(gamma d)``-th smallest total loss of the ``d`` experts (``gamma d`` rounded up with a
    1e-9 slack, at least the first).

    Parameters
    ----------
    losses
        A ``(T, d)`` loss stream (rows: rounds, columns: experts).
    gamma
        The prior mass, in ``(0, 1]``.

    Returns
    -------
    float
        ``L*(gamma)``.

    Raises
    ------
    ValueError
        If ``losses`` is not 2-D with at least one column, or ``gamma`` is outside ``(0, 1]`` (or
        a bool).
    """
    a = np.asarray(losses, dtype=float)
    if a.ndim != 2 or a.shape[1] < 1:
        raise ValueError(f"losses must be a (T, d) array, got shape {a.shape}")
    if isinstance(gamma, bool) or not 0.0 < gamma <= 1.0:
        raise ValueError(f"gamma must be in (0, 1], got {gamma!r}")
    totals = np.sort(a.sum(axis=0))
    return float(totals[max(1, math.ceil(gamma * a.shape[1] - 1e-9)) - 1])


def hypothesis_bound(epsilon: float, gamma: float, T: int) -> float:
    """AFKT23 Theorem 6's hypothesis bound ``log^2(1/gamma) log T / eps`` (natural logs).

    Theorem 6 (ICML 2023, App. C): "If ``L*(gamma) <= log^2 1/gamma log T/eps``, then this
    algorithm satisfies eps-DP".

    Parameters
    ----------
    epsilon
        The privacy parameter (> 0).
    gamma
        The prior mass, in ``(0, 1)``.
    T
        Horizon (>= 2).

    Returns
    -------
    float
        The bound on ``L*(gamma)``.

    Raises
    ------
    ValueError
        If a parameter is outside its range.
    """
    if not epsilon > 0 or not 0.0 < gamma < 1.0 or T < 2:
        raise ValueError(f"need epsilon > 0, gamma in (0, 1), T >= 2; got {epsilon!r}, {gamma!r}, "
                         f"{T!r}")
    return math.log(1.0 / gamma) ** 2 * math.log(T) / epsilon


def pairs_meeting_hypothesis(pairs: Sequence[tuple[str, Any, Any]], epsilon: float, gamma: float,
                             T: int) -> list[tuple[str, Any, Any]]:
    """``pairs`` brought within AFKT23 Theorem 6's hypothesis (:data:`SCOPE_HYPOTHESIS` reading).

    A pair whose streams both have :func:`l_star` at most :func:`hypothesis_bound` is kept as it
    is; otherwise both streams are scaled by ``bound / max(L*)`` and the name says so (``L*``
    scales with the losses, and the scaled streams still differ in one round only).

    Parameters
    ----------
    pairs
        ``(name, losses, neighbour's losses)`` triples of ``(T, d)`` streams.
    epsilon, gamma, T
        The point's parameters of :func:`hypothesis_bound`.

    Returns
    -------
    list of tuple
        One ``(name, losses, neighbour's losses)`` per input pair, in order, each meeting the
        hypothesis.

    Raises
    ------
    ValueError
        If :func:`hypothesis_bound` or :func:`l_star` rejects a parameter.
    """
    bound = hypothesis_bound(epsilon, gamma, T)
    out = []
    for name, a, b in pairs:
        worst = max(l_star(a, gamma), l_star(b, gamma))
        if worst <= bound:
            out.append((name, a, b))
        else:
            s = bound / worst
            out.append((f"{name} scaled by {s:.3g}", np.asarray(a) * s, np.asarray(b) * s))
    return out


def hypothesis_finding(plans: Sequence[Any]) -> list[str]:
    """The finding on the points of AFKT23 Theorem 6's other reading (:data:`SCOPE_HYPOTHESIS`).

    Parameters
    ----------
    plans
        The claim's :class:`~dpaudit.claims.declaration.PointPlan` objects; those with
        ``scope="hypothesis pairs"`` and an exact value are reported (their ``hypothesis`` and
        ``exact_pair`` details).

    Returns
    -------
    list of str
        One sentence listing each such point's bound and exact epsilon, or ``[]`` if none.
    """
    pts = [x for x in plans if x.parameters.get("scope") == SCOPE_HYPOTHESIS and x.exact is not None]
    if not pts:
        return []
    rows = [f"eps = {x.parameters['epsilon']:g}, gamma = {x.parameters['gamma']:g} (bound "
            f"{x.evidence.details['hypothesis']['bound']:.3g}): exact epsilon {x.exact:.4g} = "
            f"{x.exact / x.claimed_epsilon:.3g}x the claim on the {x.evidence.details['exact_pair']} pair"
            for x in pts]
    return ["Other reading of Theorem 6 ('If L*(gamma) <= log^2 1/gamma log T/eps, then this "
            "algorithm satisfies eps-DP'): privacy only for pairs whose streams both satisfy the "
            "hypothesis (L*(gamma) of the uniform prior). eps_0 times the bound is K log T/4 "
            "whatever eps, so at small eps the admitted losses reach a whole unit while the claim "
            "shrinks. Audited: " + "; ".join(rows) + "."]


def phase_jump_gamma(n: int) -> float:
    """The gamma at which AFKT23 Theorem 6's ``K = 2 ln(1/gamma)`` equals the integer ``n``.

    There the loop's ``ceil(K)`` phases jump from ``n`` (gamma above) to ``n + 1`` (gamma below).

    Parameters
    ----------
    n
        The number of phases, an integer >= 1.

    Returns
    -------
    float
        ``e^{-n/2}``.

    Raises
    ------
    ValueError
        If ``n`` is not an integer >= 1 (a bool is refused).
    """
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise ValueError(f"n must be an integer >= 1, got {n!r}")
    return math.exp(-n / 2.0)


def algorithm5_parameters_at_gamma(epsilon: float, d: int, T: int, gamma: float | None = None, *,
                                   delta: float = 0.0, eps0_reading: str = "eps0-formula"
                                   ) -> Algorithm5Parameters:
    """AFKT23 Algorithm 5's calibration by Theorem 6 or 7 at any prior mass gamma (App. C).

    ``K = 2 ln(1/gamma)``, ``ceil(K)`` phases (the loop ``k < K`` as printed), ``eps_0 =
    eps/K`` (Theorem 6, ``delta = 0``), ``eps/(sqrt(K) ln(1/delta))`` (Theorem 7, "eps0-formula")
    or ``eps/sqrt(2 K ln(1/delta))`` ("eta-formula"), ``eta = eps_0/(56 ln T)``; the other fields
    (``alpha``, ``beta``, log base) are those of
    :func:`~dpaudit.learners.potential_experts.algorithm5_parameters` over ``d`` experts with a
    uniform prior.

    Parameters
    ----------
    epsilon
        The privacy parameter (> 0).
    d
        Number of experts.
    T
        Horizon.
    gamma
        The prior mass of Lemma C.3, in ``(0, 1)``; ``None`` or the base's ``1/d`` returns the
        DP-OPE corollary's calibration unchanged.
    delta
        0 for Theorem 6, else Theorem 7's delta.
    eps0_reading
        ``"eps0-formula"`` or ``"eta-formula"``: the two readings of Theorem 7's ``eps_0``.

    Returns
    -------
    Algorithm5Parameters
        The calibration at ``gamma``.

    Raises
    ------
    ValueError
        If ``gamma`` is not a number in ``(0, 1)``, or ``algorithm5_parameters`` rejects a
        parameter.
    """
    base = algorithm5_parameters(epsilon, d, T, delta=delta,
                                 eps0_reading=eps0_reading)  # type: ignore[arg-type]
    if gamma is None or gamma == base.gamma:
        return base
    if isinstance(gamma, bool) or not isinstance(gamma, (int, float)) or not 0.0 < gamma < 1.0:
        raise ValueError(f"gamma must be in (0, 1) (Lemma C.3's prior mass, K = 2 log(1/gamma) > 0), "
                         f"got {gamma!r}")
    K = 2.0 * log_of(1.0 / gamma, base.log_base)
    if base.delta == 0.0:
        eps0 = base.epsilon / K
    elif eps0_reading == "eps0-formula":
        eps0 = base.epsilon / (math.sqrt(K) * log_of(1.0 / base.delta, base.log_base))
    else:
        eps0 = base.epsilon / math.sqrt(2.0 * K * log_of(1.0 / base.delta, base.log_base))
    return dataclasses.replace(base, gamma=float(gamma), K=K,
                               selections=selection_cap(K, base.k_reading), epsilon0=eps0,
                               eta=eps0 / (56.0 * log_of(T, base.log_base)))


def gamma_finding(plans: Sequence[Any]) -> list[str]:
    """The finding on the points of AFKT23 Theorems 6-7 audited at a gamma other than ``1/d``.

    Parameters
    ----------
    plans
        The claim's :class:`~dpaudit.claims.declaration.PointPlan` objects; those with a
        ``gamma`` parameter whose calibration's gamma is not ``1/d`` are reported, except the
        first-switch-statistic follow-ups, the :data:`SCOPE_HYPOTHESIS` points and the
        :data:`PAIR_EVERY_EXPERT_LOSES` points (their own findings).

    Returns
    -------
    list of str
        One sentence (gamma's range, then each point's K, phases, ``eps_0`` and accountant, and
        its exact or certified epsilon, largest ratio to the claim first), or ``[]`` if none.
    """
    pts = [x for x in plans if "gamma" in x.parameters and "statistic" not in x.parameters
           and "scope" not in x.parameters
           and x.parameters.get("pair") != PAIR_EVERY_EXPERT_LOSES
           and x.evidence.details["calibration"]["gamma"] != 1.0 / x.parameters["d"]]
    if not pts:
        return []
    rows = []
    for x in sorted(pts, key=lambda x: -max(x.exact or 0.0, 0.0) / x.claimed_epsilon):
        cal = x.evidence.details["calibration"]
        lower = ("" if x.exact is None else
                 f", {'certified' if 'path_bound' in x.evidence.details else 'exact'} epsilon "
                 f"{x.exact:.4g}{' > ' if x.exact > x.claimed_epsilon else ' <= '}"
                 f"{x.claimed_epsilon:g}")
        rows.append(f"gamma = {gamma_text(cal['gamma'])} (eps = {x.parameters['epsilon']:g}, T = "
                    f"{x.parameters['T']}: K = {cal['K']:.4g}, {cal['selections']} phase(s) of "
                    f"eps_0 = {cal['epsilon0'] / x.parameters['epsilon']:.4g} eps; accountant "
                    f"{x.accountant:.4g}{lower})")
    return [GAMMA_RANGE_SENTENCE + ": at the upper end eps_0 = eps/K grows without bound, "
            "and where K crosses an integer the loop 'k < K' gains a phase (ceil(K)) while the "
            "proof charges K. Audited: " + "; ".join(rows) + "."]


def gamma_severity(params: Algorithm5Parameters) -> dict[str, Any]:
    """The severity record of an AFKT23 Algorithm 5 point at a gamma other than ``1/d``.

    What gamma does to the calibration there (Theorems 6-7's ``K = 2 ln(1/gamma)``, the phases
    the loop runs, ``eps_0`` relative to eps), for the headline of a violation
    (:func:`dpaudit.claims.severity.assess_severity`).

    Parameters
    ----------
    params
        The point's calibration (:func:`algorithm5_parameters_at_gamma`).

    Returns
    -------
    dict
        ``{"where": sentence}``, or ``{}`` at ``gamma = 1/d``: the point's ``severity``
        (:class:`~dpaudit.evidence.PointEvidence`) when not empty.
    """
    if params.gamma == 1.0 / params.d:
        return {}
    return {"where": (f"gamma = {gamma_text(params.gamma)} (Theorems 6-7 imply gamma in (0, 1); 1/d only for "
                      f"DP-OPE) gives K = 2 ln(1/gamma) = {params.K:.4g}, {params.selections} "
                      f"phase(s) ('k < K') of eps_0 = {params.epsilon0 / params.epsilon:.4g} eps")}


def gamma_text(gamma: float) -> str:
    """``gamma`` in a sentence: ``%g``, or ``1 - 1e-07`` where ``%g`` would round it to 1.

    Parameters
    ----------
    gamma
        The prior mass of AFKT23 Lemma C.3.

    Returns
    -------
    str
        ``f"{gamma:g}"``, or ``"1 - x"`` with ``x = 1 - gamma`` to two significant digits.
    """
    text = f"{gamma:g}"
    if text == "1" and gamma != 1.0:
        return f"1 - {1.0 - gamma:.2g}"
    return text


def near_one_gamma_finding(plans: Sequence[Any]) -> list[str]:
    """The finding on AFKT23 Theorem 7 near gamma = 1 (the :data:`PAIR_EVERY_EXPERT_LOSES` points).

    Parameters
    ----------
    plans
        The claim's :class:`~dpaudit.claims.declaration.PointPlan` objects; those with
        ``pair="every expert loses"`` and an exact value are reported, by increasing gamma.

    Returns
    -------
    list of str
        One sentence: per gamma, both pair families' best exact epsilon and pair and the ratio to
        the claim, then the audited gammas at which the claim is refuted and those at which it
        is not, as found; ``[]`` if there are no such points.
    """
    pts = sorted((x for x in plans if x.parameters.get("pair") == PAIR_EVERY_EXPERT_LOSES
                  and x.exact is not None), key=lambda x: x.parameters["gamma"])
    if not pts:
        return []
    rows, bad, good = [], [], []
    for x in pts:
        fam = x.evidence.details["pair_families"]
        g = gamma_text(x.parameters["gamma"])
        (bad if x.exact > x.claimed_epsilon else good).append(g)
        eps0 = x.evidence.details["calibration"]["epsilon0"] / x.parameters["epsilon"]
        rows.append(f"gamma = {g} (eps_0 = {eps0:.4g}"
                    f" eps): zero-loss-expert pairs {fam['zero-loss expert']['exact']:.4g} "
                    f"({fam['zero-loss expert']['pair']}), every-expert-loses pairs "
                    f"{fam['every expert loses']['exact']:.4g} ({fam['every expert loses']['pair']}): "
                    f"{x.exact / x.claimed_epsilon:.3g}x the claim")
    x0 = pts[0]
    found = (f"refuted at gamma in {{{', '.join(bad)}}}" if bad else "refuted at no audited gamma")
    found += f", not at {{{', '.join(good)}}}" if good else ""
    return [f"Theorem 7 near gamma = 1 (eps = {x0.parameters['epsilon']:g}, delta = "
            f"{x0.claimed_delta:g}, T = {x0.parameters['T']}, d = {x0.parameters['d']}; exact laws "
            "of both pair families): the pairs that keep a zero-loss expert are not monotone in "
            "gamma and give epsilon 0 once nothing comes near the threshold; pairs in which every "
            "expert loses every round keep refuting. " + "; ".join(rows) + ". As found: " + found
            + " (the audited gammas only; no claim is made between them)."]
