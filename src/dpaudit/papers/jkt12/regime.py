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
from dpaudit.papers.jkt12.exact import REFINED_CLIPPED_STEPS, c_zero_epsilon
from dpaudit.papers.jkt12.models import _Model, _audit_point, _exact_point, _with_evidence
from dpaudit.papers.jkt12.models import _Family


#: Epsilons scanned (log-spaced) between the c = 0 boundary and the failing point before bisecting.
THRESHOLD_SCAN = 12

#: Relative width of the final bisection bracket on epsilon.
THRESHOLD_REL_TOL = 1e-3


def _exceeds(point: GridPoint, kind: str) -> bool:
    value = point.epsilon_exact if kind == "exact" else point.epsilon_accountant
    return value is not None and value > point.claimed_epsilon * (1 + EXACT_TOLERANCE)


def _grid_params(point: GridPoint, derived: Sequence[str]) -> dict[str, Any]:
    return {k: v for k, v in point.parameters.items() if k not in derived}

#: Keys the models add to a grid point's parameters (recomputed at every epsilon).
_DERIVED_KEYS = ("c", "tau", "box_half_width", "t_q", "lambda_A", "setting", "x1")


def _threshold(fam: _Family, base: dict[str, Any], kind: str, eps_lo: float, eps_hi: float
               ) -> dict[str, Any] | None:
    """Smallest epsilon in (eps_lo, eps_hi] at which ``kind`` ("exact" or "accountant") exceeds
    the claim, the other parameters fixed: a log-spaced scan, then bisection of the first
    crossing to a relative bracket width THRESHOLD_REL_TOL. The exact value is evaluated with
    every clipped step composed (REFINED_CLIPPED_STEPS). None when the value exceeds the claim
    already at eps_lo (or nowhere up to eps_hi).
    """
    def evaluate(eps: float) -> tuple[_Model, float, float]:
        model = fam.model(dict(base, epsilon=eps), 0)
        assert model is not None
        eps_c, delta_c = model.claimed
        if kind == "exact":
            value = release_epsilon(model.m0, model.m1, model.sigmas, delta_c, model.half_width,
                                    max_clipped_steps=REFINED_CLIPPED_STEPS).lower
        else:
            value = gaussian_epsilon(model.accountant_mu, delta_c) if model.accountant_mu > 0 \
                else 0.0
        return model, value, eps_c

    def exceeds(value: float, claimed: float) -> bool:
        return value > claimed * (1 + EXACT_TOLERANCE)

    below: tuple[float, _Model, float, float] | None = None
    above: tuple[float, _Model, float, float] | None = None
    for eps in np.geomspace(eps_lo, eps_hi, THRESHOLD_SCAN):
        m, v, c = evaluate(float(eps))
        if exceeds(v, c):
            above = (float(eps), m, v, c)
            break
        below = (float(eps), m, v, c)
    if below is None or above is None:
        return None
    while above[0] / below[0] > 1 + THRESHOLD_REL_TOL:
        mid = math.sqrt(below[0] * above[0])
        m, v, c = evaluate(mid)
        if exceeds(v, c):
            above = (mid, m, v, c)
        else:
            below = (mid, m, v, c)
    return {"kind": kind, "epsilon_below": below[0], "epsilon_above": above[0],
            "value_below": below[2], "claimed_below": below[3],
            "value_above": above[2], "claimed_above": above[3],
            "c_below": below[1].params["c"], "c_above": above[1].params["c"],
            "method": f"log-spaced scan of {THRESHOLD_SCAN} epsilons from the c = 0 boundary to "
                      f"the failing point, then bisection to a relative bracket width "
                      f"{THRESHOLD_REL_TOL:g}; the other parameters fixed"}


def _regime_points(fam: _Family, points: list[GridPoint], models: list[_Model], max_T: int
                   ) -> dict[str, Any]:
    """Points added for COLT's c: the c = 0 boundary and the smallest failing epsilon.

    The base is the worst c < 0 point (the strongest formal counterexample if one exists, else the
    largest accountant/claimed ratio above 1): at its other parameters, a point at
    eps = (1/2) ln(2/delta)
    (c = 0) and, for the exact value of the realised pair and for the accountant (each if some
    c < 0 point exceeds the claim on it), a point just above the smallest epsilon where it exceeds
    the claim (:func:`_threshold`).
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
    m0, p0 = _audit_point(fam, dict(base, epsilon=e0, setting="c = 0 boundary"), max_T,
                          REFINED_CLIPPED_STEPS)
    if m0 is not None and p0 is not None:
        p0 = _with_evidence(p0, c=m0.params["c"], regime="c = 0: eps = (1/2) ln(2/delta)")
        out["added"].append((m0, p0))
    kinds = (["exact"] if refuting else []) + ["accountant"]
    for kind in kinds:
        th = _threshold(fam, base, kind, e0, float(base["epsilon"]))
        if th is None:
            out["thresholds"].append({"kind": kind, "epsilon_below": None,
                                      "epsilon_above": e0, "c_above": 0.0})
            continue
        out["thresholds"].append(th)
        if kind == "accountant" and refuting and any(
                abs(math.log(t["epsilon_above"] / th["epsilon_above"])) < 2 * THRESHOLD_REL_TOL
                for t in out["thresholds"] if t["kind"] == "exact" and t["epsilon_above"]):
            continue  # the exact threshold's point already shows it
        setting = f"smallest eps with {kind} > claim (bisection)"
        model = fam.model(dict(base, epsilon=th["epsilon_above"], setting=setting), max_T)
        assert model is not None
        point, _ = _exact_point(model, REFINED_CLIPPED_STEPS)
        out["added"].append((model, _with_evidence(point, c=model.params["c"],
                                                   violation_threshold=th)))
    return out


def _regime_analysis(fam: _Family, points: list[GridPoint], lemmas: list[LemmaCheck],
                     regime: dict[str, Any] | None) -> list[str]:
    """The verdict restricted to the proof's regime c >= 0 (POCP-family claims)."""
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
                parts.append(f"{what} exceeds the claim from eps ~ {th['epsilon_above']:.4g} "
                             f"(c = {th['c_above']:.3g}; bracket [{th['epsilon_below']:.5g}, "
                             f"{th['epsilon_above']:.5g}]: {th['value_below']:.5g} <= "
                             f"{th['claimed_below']:.5g} below, {th['value_above']:.5g} > "
                             f"{th['claimed_above']:.5g} above)")
        others = {k: v for k, v in base.items() if k != "epsilon"}
        n_bad = sum(p.counterexample() is not None for p in outside)
        n_acc = sum(_exceeds(p, "accountant") for p in outside)
        texts.append(f"Outside the regime (c < 0): {n_bad} of {len(outside)} points refute the "
                     f"claim and {n_acc} have the accountant above it. At "
                     f"({format_parameters(others)}), where c = 0 at eps = "
                     f"{c_zero_epsilon(base['delta']):.4g}: " + "; ".join(parts) + ".")
    return texts
