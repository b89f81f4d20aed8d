"""How much a verdict matters, from the evidence the audit already has.

AUDIT-METHOD section 2, "How much a violation matters": "violated only for delta >= 0.996" and
"violated at delta = 1e-5 by a factor of 2" are both ``violated``; a reviewer must tell them apart
at a glance. The verdict rule (:mod:`dpaudit.claims.verdict`) is unchanged: this module says what
the verdict *says*, never what it *is*. :func:`assess_severity` reads, for a claim's
primary-reading points, the refuting points and the parameter that separates them
(:func:`~dpaudit.claims.verdict.violation_region`), the worst refuting point's factor and privacy
curve, what a declaration measured about its witness (:data:`SEVERITY_EVIDENCE_KEYS`) and the
other readings' verdicts, and returns a JSON-serialisable dict whose ``sentence`` is the headline
the reports print next to the verdict (``None`` when there is nothing to say).

What it reads and what the headline says, in full: docs/engine.md#severity
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

from dpaudit.claims.evidence import GridPoint, SeverityEntry, json_float
from dpaudit.claims.model import RangeReading
from dpaudit.claims.verdict import format_parameters, violation_region

__all__ = ["SEVERITY_EVIDENCE_KEYS", "PURE_DP_NEGLIGIBLE_LOG10", "assess_severity",
           "curve_violation_deltas", "probability_text"]

#: The keys a declaration may put in ``PointEvidence.severity`` (all optional).
SEVERITY_EVIDENCE_KEYS = ("delta_from", "where", "holds_up_to_delta",
                          "event_log10_probability_upper", "event", "event_probability_lower",
                          "calibration_caveat")

#: Below this log10 probability a witnessing event is printed as "< 1e-300" (the smallest positive
#: normal float64 is 2.2e-308: no delta anyone would state is that small).
PURE_DP_NEGLIGIBLE_LOG10 = -300.0


def probability_text(log10_p: float) -> str:
    """An upper bound on a probability, from its log10, in words: ``"< 1e-300"`` below
    :data:`PURE_DP_NEGLIGIBLE_LOG10`, else ``"<= 3.2e-12"``."""
    if not math.isfinite(log10_p) and log10_p > 0:
        raise ValueError(f"log10_p must be a finite number or -inf, got {log10_p!r}")
    if log10_p < PURE_DP_NEGLIGIBLE_LOG10:
        return "< 1e-300"
    return f"<= {10.0 ** log10_p:.2g}"


def curve_violation_deltas(curve: Mapping[str, Any] | None, claimed_epsilon: float
                           ) -> list[float]:
    """The deltas of a privacy-curve figure (``figures["privacy_curve"]``) at which the worst pair's
    exact (or certified) epsilon(delta) is above ``claimed_epsilon``; empty without such a series."""
    if not curve:
        return []
    deltas, exact = curve.get("deltas") or [], curve.get("epsilon_exact") or []
    return [float(d) for d, e in zip(deltas, exact)
            if e is not None and d is not None and float(e) > claimed_epsilon]


def _delta_span(points: Sequence[GridPoint]) -> tuple[float, float] | None:
    """``(lo, hi)`` of the claimed delta over the refuting points when every refuting point has a
    larger claimed delta than every other point (the violation is confined to large delta)."""
    bad = [p.claimed_delta for p in points if p.counterexample() is not None]
    good = [p.claimed_delta for p in points if p.counterexample() is None]
    if bad and good and min(bad) > max(good):
        return min(bad), max(bad)
    return None


def _num(x: Any) -> float | None:
    return None if x is None else json_float(float(x))


def assess_severity(verdict: str, points: Sequence[GridPoint],
                    readings: Sequence[Mapping[str, Any]] = (),
                    curve: Mapping[str, Any] | None = None) -> dict[str, Any] | None:
    """How much ``verdict`` matters, from the primary-reading ``points`` (their evidence),
    the other ``readings`` (:meth:`ClaimAudit.reading_verdicts`) and the worst point's privacy
    ``curve``; see the module docstring. ``None`` when there is nothing to add to the verdict."""
    others = [r for r in readings if not r.get("primary")]
    if verdict == "violated":
        return _violated(points, others, curve)
    if verdict == "holds":
        return _holds_on_own_calibration(points, others)
    if verdict == "inconclusive":
        return _inconclusive_hinge(points, others)
    return None


def _inconclusive_hinge(points: Sequence[GridPoint], others: Sequence[Mapping[str, Any]]
                        ) -> dict[str, Any] | None:
    """For an ``inconclusive`` claim with a range reading (``others`` entries with ``range``):
    which values of that parameter the open points (accountant above the claim, no
    counterexample) sit at, and the range reading's verdict. ``None`` without either."""
    ranged = [r for r in others if r.get("range")]
    open_pts = [p for p in points if p.counterexample() is None
                and p.epsilon_accountant is not None and p.epsilon_accountant > p.claimed_epsilon]
    if not ranged or not open_pts:
        return None
    factor = max(p.epsilon_accountant / p.claimed_epsilon for p in open_pts)  # type: ignore[operator]
    parts = []
    for r in ranged:
        (param, stated), = r["parameters"].items()
        values = sorted({p.parameters[param] for p in open_pts if param in p.parameters})
        where = ", ".join(f"{v:g}" if isinstance(v, float) else str(v) for v in values)
        w = r.get("worst_point") or {}
        acc, c = w.get("epsilon_accountant"), w.get("claimed_epsilon")
        verb = "it holds" if r["verdict"] == "holds" else f"it is {r['verdict']}"
        if r["verdict"] == "holds" and isinstance(acc, (int, float)) and c:
            verb += f" (accountant at most {float(acc) / float(c):.3g}x the claim)"
        rng = RangeReading(param, stated, r.get("rationale") or "range reading")
        outside = values and not any(rng.contains(v) for v in values)
        parts.append(f"it hinges on {param} = {where}" + (f", outside {stated}" if outside else "")
                     + f"; under {r['name']} {verb}")
    sentence = (f"Inconclusive only through {len(open_pts)} of {len(points)} audited point(s) "
                f"whose accountant is above the claim (up to {factor:.3g}x) with no "
                f"counterexample; " + "; ".join(parts))
    rest = [r for r in others if not r.get("range")]
    if rest:
        sentence += "; " + _other_readings_text(rest)
    return {"sentence": sentence + ".", "factor": _num(factor),
            "other_readings": [{"name": r["name"], "verdict": r["verdict"],
                                "factor": _num(_reading_factor(r))} for r in others]}


def _reading_factor(reading: Mapping[str, Any]) -> float | None:
    w = reading.get("worst_point") or {}
    c = w.get("claimed_epsilon")
    vals = [w.get(k) for k in ("epsilon_exact", "epsilon_lower_bound")]
    vals = [float(v) for v in vals if isinstance(v, (int, float))]
    if not c or not vals:
        return None
    return max(vals) / float(c)


def _other_readings_text(others: Sequence[Mapping[str, Any]]) -> str:
    parts = []
    for r in others:
        f = _reading_factor(r) if r.get("verdict") == "violated" else None
        verb = "it holds" if r.get("verdict") == "holds" else f"it is {r['verdict']}"
        parts.append(f"under {r['name']} {verb}"
                     + (f" (up to {f:.3g}x the claim)" if f is not None else ""))
    return "; ".join(parts)


def _event_log10(point: GridPoint) -> float | None:
    """The upper bound on log10 of the probability of ``point``'s witnessing event, if declared."""
    ev = point.evidence.severity
    value = ev.event_log10_probability_upper if ev is not None else None
    return None if value is None else float(value)


def _at_smallest_delta(refuting: Sequence[GridPoint], worst: GridPoint) -> str:
    """Where the worst refutation sits at a larger delta than others do: the factor at the
    smallest refuted delta too. A headline naming only a degenerate calibration (sigma ~
    sqrt(log 1/delta) -> 0 as delta -> 1, thousands of times the claim) would hide how much the
    violation matters at the deltas a deployment uses."""
    smallest = min(p.claimed_delta for p in refuting)
    if worst.claimed_delta <= smallest:
        return ""
    at = max((p for p in refuting if p.claimed_delta == smallest),
             key=lambda p: p.refutation_ratio())
    return (f"; at the smallest refuted delta, {smallest:.3g}, by a factor of "
            f"{at.refutation_ratio():.3g} at ({format_parameters(at.parameters)})")


def _violated(points: Sequence[GridPoint], others: Sequence[Mapping[str, Any]],
              curve: Mapping[str, Any] | None) -> dict[str, Any]:
    refuting = [p for p in points if p.counterexample() is not None]
    worst = max(refuting, key=lambda p: p.refutation_ratio())
    factor = worst.refutation_ratio()
    ev = worst.evidence.severity or SeverityEntry()
    region = violation_region(list(points))
    span = _delta_span(points)
    curve_deltas = curve_violation_deltas(curve, worst.claimed_epsilon)
    log10_p = ev.event_log10_probability_upper
    delta_from = ev.delta_from
    where = f"({format_parameters(worst.parameters)})"
    if log10_p is not None:
        ptext = probability_text(float(log10_p))
        # "No audited evidence refutes (eps, delta)" holds only when every refuting point's
        # witness is such an event: then the largest of their probabilities is what delta absorbs.
        bounds = [_event_log10(p) for p in refuting]
        every = all(b is not None for b in bounds)
        top = max(b for b in bounds if b is not None) if every else float(log10_p)
        absorbed = "1e-300" if top < PURE_DP_NEGLIGIBLE_LOG10 else f"{10.0 ** top:.2g}"
        sentence = (f"violated for pure DP through {ev.event or 'one event'} of probability "
                    f"{ptext} (log10 P <= {float(log10_p):.4g}) at {where}; any delta >= "
                    f"{absorbed} absorbs this witness")
        if every:
            sentence += (f", and every refuting point's witness is such an event, so no audited "
                         f"evidence refutes (eps, delta >= {absorbed})")
        else:
            sentence += (f"; {sum(b is None for b in bounds)} other refuting point(s) rest on "
                         "other evidence")
    elif delta_from is not None:
        others_bad = [p for p in refuting if p.claimed_delta < float(delta_from)]
        # refuting points below the witness's delta: never "only", and say where the worst is
        sentence = f"violated {'' if others_bad else 'only '}for delta >= {float(delta_from):.3g}"
        if ev.where:
            sentence += f", where {ev.where}"
        if ev.holds_up_to_delta is not None:
            sentence += (f"; the accountant is within the claim for delta <= "
                         f"{float(ev.holds_up_to_delta):.3g} at the same other parameters")
        if ev.event and ev.event_probability_lower is not None:
            sentence += (f"; the witness is one event, {ev.event}, of probability >= "
                         f"{float(ev.event_probability_lower):.4g} at {where}")
        if others_bad:
            wb = max(others_bad, key=lambda p: p.refutation_ratio())
            wev = wb.evidence.severity
            sentence += (f"; also refuted at {len(others_bad)} point(s) with smaller delta, worst "
                         f"by a factor of {wb.refutation_ratio():.3g} at "
                         f"({format_parameters(wb.parameters)})")
            if wev is not None and wev.where:
                sentence += f", where {wev.where}"
    elif span is not None:
        head = (region if region.startswith("only for delta") else
                f"only for delta >= {span[0]:.3g} ({region})")
        sentence = f"violated {head}; strongest by a factor of {factor:.3g} at {where}"
    else:
        sentence = f"violated by a factor of {factor:.3g} at {where}, {region}"
        if ev.where:
            sentence += f"; there {ev.where}"
        sentence += _at_smallest_delta(refuting, worst)
    if curve_deltas and log10_p is None:
        lo, hi = min(curve_deltas), max(curve_deltas)
        span_text = (f"at delta = {lo:.3g} only" if lo == hi else
                     f"for delta from {lo:.3g}{' (pure DP)' if lo == 0 else ''} to {hi:.3g}")
        sentence += (f"; the worst pair's epsilon(delta) is above the claimed "
                     f"{worst.claimed_epsilon:.4g} {span_text} (privacy curve)")
    if others:
        sentence += "; " + _other_readings_text(others)
    return {
        "sentence": sentence[0].upper() + sentence[1:] + ".",
        "factor": _num(factor),
        "worst_parameters": dict(worst.parameters),
        "parameter_region": region,
        "claimed_delta_range": None if span is None else [span[0], span[1]],
        "delta_from": _num(delta_from),
        "holds_up_to_delta": _num(ev.holds_up_to_delta),
        "where": ev.get("where", ""),  # as written (a null stays null)
        "event_log10_probability_upper": _num(log10_p),
        "event_probability_lower": _num(ev.event_probability_lower),
        "curve_violation_deltas": (None if not curve_deltas
                                   else [min(curve_deltas), max(curve_deltas)]),
        "other_readings": [{"name": r["name"], "verdict": r["verdict"],
                            "factor": _num(_reading_factor(r))} for r in others],
    }


def _holds_on_own_calibration(points: Sequence[GridPoint], others: Sequence[Mapping[str, Any]]
                              ) -> dict[str, Any] | None:
    caveats = [p.evidence.severity.calibration_caveat for p in points
               if p.evidence.severity is not None and p.evidence.severity.calibration_caveat]
    if not caveats:
        return None
    ratio = max((p.worst_ratio() for p in points), default=float("nan"))
    sentence = (f"Holds under dpaudit's own calibration, which the paper does not print: "
                f"{caveats[0]} (accountant at most {ratio:.3g}x the claim)")
    if others:
        sentence += "; " + _other_readings_text(others)
    return {"sentence": sentence + ".", "calibration_caveat": caveats[0],
            "factor": _num(ratio),
            "other_readings": [{"name": r["name"], "verdict": r["verdict"],
                                "factor": _num(_reading_factor(r))} for r in others]}
