"""The proof's regime of JKT12's POCP exponent c (COLT: c < 0 for eps > (1/2) ln(2/delta)).

COLT's c = ln((1/(2 eps)) ln(2/delta)) / (2 ln T) is negative for eps > (1/2) ln(2/delta), where
App. A.2's step 2 eps / T^{2c} <= 2 eps fails; the theorems state no bound on eps, so such points
stay in the claim, and the audit adds the c = 0 boundary point and the smallest failing epsilon
(bisection, :func:`_threshold`) at the worst failing point's other parameters, and reports the
verdict restricted to c >= 0 as a finding. arXiv's c is positive iff delta < 2 e^-2 (Lemma 1
assumes c > 0); every audited arXiv point is inside.
"""

from __future__ import annotations


import math
from typing import Any, Sequence

import numpy as np

from dpaudit.formal.accounting import gaussian_epsilon
from dpaudit.claims.evidence import EXACT_TOLERANCE, GridPoint, LemmaCheck
from dpaudit.claims.verdict import decide_verdict, format_parameters
from dpaudit.papers.jkt12.exact import release_epsilon
from dpaudit.papers.jkt12.exact import PLD_REL_ERROR, REFINED_CLIPPED_STEPS, c_zero_epsilon
from dpaudit.papers.jkt12.plans import audit_point, exact_point, with_evidence
from dpaudit.papers.jkt12.plans import Family


#: Epsilons scanned (log-spaced) between the c = 0 boundary and the failing point before bisecting.
THRESHOLD_SCAN = 12

#: Relative width of the final bisection brackets on epsilon, by grid ("coarse": the tiny and
#: quick budgets, "full": standard and above). The crossing of a realisable pair's epsilon is
#: bracketed on both sides: certified not to exceed the claim below (upper bound of the pair) and
#: certified to exceed it above (lower bound), so a coarser tolerance only widens the reported
#: bracket, it never makes it wrong.
THRESHOLD_REL_TOLS = {"coarse": 1e-2, "full": 1e-3}
THRESHOLD_REL_TOL = THRESHOLD_REL_TOLS["full"]

#: PLD grid of the first, cheap evaluation of the pair's bracket during the bisection.
COARSE_PLD_REL_ERROR = 2e-3


def _exceeds(point: GridPoint, kind: str) -> bool:
    value = point.epsilon_exact if kind == "exact" else point.epsilon_accountant
    return value is not None and value > point.claimed_epsilon * (1 + EXACT_TOLERANCE)


def _grid_params(point: GridPoint, derived: Sequence[str]) -> dict[str, Any]:
    return {k: v for k, v in point.parameters.items() if k not in derived}

#: Keys the models add to a grid point's parameters (recomputed at every epsilon).
_DERIVED_KEYS = ("c", "tau", "box_half_width", "t_q", "lambda_A", "setting", "x1")


def _threshold(fam: Family, base: dict[str, Any], kind: str, eps_lo: float, eps_hi: float,
               rel_tol: float = THRESHOLD_REL_TOL, known_below: float | None = None
               ) -> dict[str, Any] | None:
    """Where ``kind`` ("exact": the audited pair's epsilon; "accountant") crosses the claim in
    (eps_lo, eps_hi], the other parameters fixed.

    Each evaluation gives a certified bracket [lo, up] on the value (exact: the certified lower
    bound and the pessimistic upper bound of the projected release, every clipped step composed
    (REFINED_CLIPPED_STEPS); unprojected releases and the accountant: lo = up). Two bisections
    share the evaluations: the smallest epsilon whose *lower* end exceeds the claim
    (``lower_crossing``) and the largest whose *upper* end does not (``upper_crossing``), each to
    a relative bracket width ``rel_tol``; so a crossing of the true value lies in
    [``epsilon_below``, ``epsilon_above``] = [upper_crossing[0], lower_crossing[1]], both ends
    certified. ``known_below``: an epsilon at which the value is known not to exceed the claim
    (the accountant's bracket, an upper bound for every pair), which replaces the log-spaced
    scan from ``eps_lo``. None when the value exceeds the claim already at eps_lo (or nowhere up
    to eps_hi).
    """
    def evaluate(eps: float) -> tuple[float, float, float, float]:
        """(c, lower end, upper end, claimed epsilon) at ``eps``."""
        if kind == "accountant" and fam.accountant is not None:
            # The worst-case accountant needs no pair (no learner simulation).
            c, mu, (eps_c, delta_c) = fam.accountant(dict(base, epsilon=eps))
            v = gaussian_epsilon(mu, delta_c) if mu > 0 else 0.0
            return c, v, v, eps_c
        model = fam.model(dict(base, epsilon=eps), 0)
        assert model is not None
        eps_c, delta_c = model.claimed
        if kind == "exact":
            # A coarse PLD grid first (cheap; its bracket is just as rigorous, only wider), the
            # fine one only where the coarse bracket straddles the claim.
            for rel_error in (COARSE_PLD_REL_ERROR, PLD_REL_ERROR):
                ex = release_epsilon(model.m0, model.m1, model.sigmas, delta_c,
                                     model.half_width, max_clipped_steps=REFINED_CLIPPED_STEPS,
                                     projected_upper=model.half_width is not None,
                                     rel_error=rel_error)
                lo = ex.lower
                up = ex.upper if ex.upper_projected is None else ex.upper_projected
                if exceeds(lo, eps_c) or not exceeds(up, eps_c):
                    break
        else:
            lo = up = (gaussian_epsilon(model.accountant_mu, delta_c) if model.accountant_mu > 0
                       else 0.0)
        return model.params["c"], lo, up, eps_c

    def exceeds(value: float, claimed: float) -> bool:
        return value > claimed * (1 + EXACT_TOLERANCE)

    # Known points: (eps, c, lower, upper, claimed).
    below_u: tuple | None = None   # largest eps with upper <= claim
    above_u: tuple | None = None   # smallest eps with upper > claim
    below_l: tuple | None = None   # largest eps with lower <= claim
    above_l: tuple | None = None   # smallest eps with lower > claim
    evaluations = 0

    def record(eps: float) -> None:
        nonlocal below_u, above_u, below_l, above_l, evaluations
        m, lo, up, c = evaluate(eps)
        evaluations += 1
        pt = (eps, m, lo, up, c)
        if exceeds(lo, c):
            if above_l is None or eps < above_l[0]:
                above_l = pt
        elif below_l is None or eps > below_l[0]:
            below_l = pt
        if exceeds(up, c):
            if above_u is None or eps < above_u[0]:
                above_u = pt
        elif below_u is None or eps > below_u[0]:
            below_u = pt

    if known_below is not None and eps_lo < known_below < eps_hi:
        record(known_below)
        record(eps_hi)
    else:
        for eps in np.geomspace(eps_lo, eps_hi, THRESHOLD_SCAN):
            record(float(eps))
            if above_l is not None:
                break
    if below_u is None or above_l is None:
        return None
    if above_u is None or above_u[0] > above_l[0]:
        above_u = above_l
    if below_l is None or below_l[0] < below_u[0]:
        below_l = below_u
    while True:
        r_l = above_l[0] / below_l[0]
        r_u = above_u[0] / below_u[0]
        if max(r_l, r_u) <= 1 + rel_tol:
            break
        lo_e, hi_e = ((below_l[0], above_l[0]) if r_l >= r_u else (below_u[0], above_u[0]))
        record(math.sqrt(lo_e * hi_e))
    return {"kind": kind, "epsilon_below": below_u[0], "epsilon_above": above_l[0],
            "value_below": below_u[3], "claimed_below": below_u[4],
            "value_above": above_l[2], "claimed_above": above_l[4],
            "c_below": below_u[1], "c_above": above_l[1],
            "lower_crossing": [below_l[0], above_l[0]],
            "upper_crossing": [below_u[0], above_u[0]],
            "rel_tol": rel_tol, "evaluations": evaluations,
            "method": (f"{'bisection from the accountant crossing (an upper bound for every pair)' if known_below is not None else f'log-spaced scan of {THRESHOLD_SCAN} epsilons from the c = 0 boundary'} "
                       f"to the failing point, then bisection of where the certified lower end "
                       f"and the certified upper end of the value cross the claim, each to a "
                       f"relative bracket width {rel_tol:g}; the other parameters fixed; "
                       f"value_below is the upper end at epsilon_below, value_above the lower "
                       f"end at epsilon_above")}


def regime_points(fam: Family, points: list[GridPoint], max_T: int,
                   rel_tol: float = THRESHOLD_REL_TOL) -> dict[str, Any]:
    """Points added for COLT's c: the c = 0 boundary and the smallest failing epsilon.

    The base is the worst c < 0 point (the strongest formal counterexample if one exists, else the
    largest accountant/claimed ratio above 1): at its other parameters, a point at
    eps = (1/2) ln(2/delta)
    (c = 0) and, for the exact value of the realised pair and for the accountant (each if some
    c < 0 point exceeds the claim on it), a point just above the smallest epsilon where it exceeds
    the claim (:func:`_threshold`).

    Parameters
    ----------
    fam
        The claim family (its model, grid and step check).
    points
        The audited grid points so far.
    max_T
        Largest horizon the budget audits.
    rel_tol
        Relative width to which each end of a threshold is bisected.

    Returns
    -------
    dict[str, Any]
        ``added`` (the new points' parameters), ``thresholds`` (one record per bisected kind, with
        both certified ends) and ``base`` (the parameters they share; ``None`` when no c < 0 point
        fails).
    """
    outside = [i for i, p in enumerate(points) if p.parameters["c"] < 0]
    refuting = [i for i in outside if _exceeds(points[i], "exact")]
    failing = [i for i in outside if _exceeds(points[i], "accountant")]
    out: dict[str, Any] = {"added": [], "thresholds": [], "base": None}
    pool = refuting or failing
    if not pool:
        return out
    # The same choice as ClaimAudit.worst_point: strongest refutation, else largest ratio.
    b = max(pool, key=lambda i: points[i].refutation_ratio() if refuting
            else points[i].worst_ratio())
    base = _grid_params(points[b], _DERIVED_KEYS)
    out["base"] = dict(base)
    e0 = c_zero_epsilon(base["delta"])
    m0, p0 = audit_point(fam, dict(base, epsilon=e0, setting="c = 0 boundary"), max_T,
                          REFINED_CLIPPED_STEPS)
    if m0 is not None and p0 is not None:
        p0 = with_evidence(p0, c=m0.params["c"], regime="c = 0: eps = (1/2) ln(2/delta)")
        out["added"].append((m0, p0))
    # The accountant first: it bounds every pair from above, so where it does not exceed the
    # claim neither does the audited pair, and the pair's bisection starts there.
    acc = _threshold(fam, base, "accountant", e0, float(base["epsilon"]), rel_tol)
    found = {"accountant": acc}
    if refuting:
        found["exact"] = _threshold(fam, base, "exact", e0, float(base["epsilon"]), rel_tol,
                                    known_below=None if acc is None else acc["epsilon_below"])
    for kind in (["exact"] if refuting else []) + ["accountant"]:
        th = found[kind]
        if th is None:
            out["thresholds"].append({"kind": kind, "epsilon_below": None,
                                      "epsilon_above": e0, "c_above": 0.0})
            continue
        out["thresholds"].append(th)
        if kind == "accountant" and refuting and any(
                t["epsilon_above"] == th["epsilon_above"]
                for t in out["thresholds"] if t["kind"] == "exact" and t["epsilon_above"]):
            continue  # the exact threshold's point already shows it
        setting = f"smallest eps with {kind} > claim (bisection)"
        model = fam.model(dict(base, epsilon=th["epsilon_above"], setting=setting), max_T)
        assert model is not None
        point, _ = exact_point(model, REFINED_CLIPPED_STEPS)
        out["added"].append((model, with_evidence(point, c=model.params["c"],
                                                   violation_threshold=th)))
    return out


def regime_analysis(fam: Family, points: list[GridPoint], lemmas: list[LemmaCheck],
                     regime: dict[str, Any] | None) -> list[str]:
    """The verdict restricted to the proof's regime c >= 0 (POCP-family claims), as findings.

    COLT's App. A.2 needs ``c >= 0`` (eps <= (1/2) ln(2/delta)) although the theorems state no bound
    on eps; arXiv's Lemma 1 assumes ``c > 0`` (delta < 2 e^-2). The verdict as stated is decided on
    every point; the restricted one on the ``c >= 0`` points with the per-step lemma re-evaluated
    there.

    Parameters
    ----------
    fam
        The claim family; ``fam.c_depends_on_epsilon`` tells COLT's c from arXiv's.
    points
        Every audited point, the :func:`regime_points` included.
    lemmas
        The claim's lemma checks (the last is the per-step check when the family has one).
    regime
        What :func:`regime_points` returned, or ``None``.

    Returns
    -------
    list[str]
        The findings: the regime, the verdict as stated and restricted, and (COLT, when some c < 0
        point fails) the thresholds in eps.
    """
    inside = [p for p in points if p.parameters["c"] >= 0]
    outside = [p for p in points if p.parameters["c"] < 0]
    step_lemmas = lemmas
    if fam.step_check is not None:
        step_lemmas = lemmas[:-1] + ([fam.step_check([p.parameters for p in inside])]
                                     if inside else [])
    verdict, reason = decide_verdict(points, lemmas)
    if inside:
        v_in, why_in = decide_verdict(inside, step_lemmas)
        r_ex = max((p.epsilon_exact / p.claimed_epsilon for p in inside
                    if p.epsilon_exact is not None), default=0.0)
        r_acc = max((p.epsilon_accountant / p.claimed_epsilon for p in inside
                     if p.epsilon_accountant is not None), default=0.0)
        inside_text = (f"within the proof's regime (the {len(inside)} audited points with "
                       f"c >= 0) it {'holds' if v_in == 'holds' else 'is ' + v_in}: "
                       f"{why_in.rstrip('.')} "
                       f"(there exact/claimed <= {r_ex:.3g}, accountant/claimed <= {r_acc:.3g})")
    else:
        inside_text = "no audited point has c >= 0"
    c_min = min(p.parameters["c"] for p in points)
    if not fam.c_depends_on_epsilon:
        if not outside:
            return [f"Proof regime (arXiv): Lemma 1 assumes c > 0; the printed "
                    f"c = ln((1/2) ln(2/delta)) / (2 ln T) is positive iff delta < 2 e^-2 = "
                    f"{2 * math.exp(-2):.4g}, whatever eps. Every audited point has c > 0 "
                    f"(smallest c = {c_min:.3g}), so the grid stays inside the proof's regime "
                    f"and the verdict ({verdict}) needs no restriction."]
        return [f"Proof regime (arXiv): Lemma 1 assumes c > 0 (delta < 2 e^-2). As audited: "
                f"{verdict}; {inside_text}."]
    texts = [f"Proof regime (COLT): the theorem states no bound on eps, but App. A.2's step "
             f"2 eps / T^{{2c}} <= 2 eps needs c >= 0, i.e. eps <= (1/2) ln(2/delta) (the arXiv "
             f"version's Lemma 1 assumes c > 0 explicitly). The paper's own experiments "
             f"(App. G.2: eps = 10, 20 at delta = 0.01) run with c < 0, so such points are "
             f"covered by the claim as stated. {verdict.capitalize()} as stated ({reason}); "
             f"{inside_text}."]
    if outside and regime is not None and regime["base"] is not None:
        base = regime["base"]
        parts = []
        for th in regime["thresholds"]:
            what = ("the realised pair's exact epsilon" if th["kind"] == "exact"
                    else "the worst-case accountant")
            if th["epsilon_below"] is None:
                parts.append(f"{what} exceeds the claim already at the c = 0 boundary "
                             f"eps = {th['epsilon_above']:.4g}")
            else:
                parts.append(f"{what} crosses the claim between eps = "
                             f"{th['epsilon_below']:.6g} and {th['epsilon_above']:.6g} "
                             f"(c = {th['c_above']:.3g}; certified at both ends: "
                             f"{th['value_below']:.6g} <= {th['claimed_below']:.6g} below, "
                             f"{th['value_above']:.6g} > {th['claimed_above']:.6g} above; "
                             f"bisection to a relative width {th.get('rel_tol', 0):g} per end, "
                             f"{th.get('evaluations', 0)} evaluations)")
        others = {k: v for k, v in base.items() if k != "epsilon"}
        n_bad = sum(p.counterexample() is not None for p in outside)
        n_acc = sum(_exceeds(p, "accountant") for p in outside)
        texts.append(f"Outside the regime (c < 0): {n_bad} of {len(outside)} points refute the "
                     f"claim and {n_acc} have the accountant above it. At "
                     f"({format_parameters(others)}), where c = 0 at eps = "
                     f"{c_zero_epsilon(base['delta']):.4g}: " + "; ".join(parts) + ".")
    return texts
