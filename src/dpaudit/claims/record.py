"""Results of auditing one published claim: evidence per parameter point, lemma checks, verdict.

This is the record the CLI saves as JSON and the reports render; its ``to_dict`` is a superset of
one row of ``index.json`` (schema ``dpaudit.report/1``). :func:`decide_verdict` applies the verdict
rules (AUDIT-METHOD section 2): ``"violated"`` on a formal counterexample or a valid empirical
lower bound above the claim; ``"holds"`` when there is none, every point has an accountant (or
exact worst-case) epsilon within the claim and every lemma held; ``"inconclusive"`` otherwise. An
SMT counterexample fails a lemma as a Hypothesis one does, an SMT proof is named in the ``holds``
reason, and a timed-out SMT call is absent evidence. ``GridPoint.evidence`` and
``ClaimAudit.figures`` are free-form and JSON-serialisable, with keys the reports understand.

The rules, the lemma methods and the figure keys in full: docs/reports.md#claim-audit-record
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from dpaudit.claims.model import PrivacyClaim

from dpaudit.claims.evidence import (GridPoint, LemmaCheck, Verdict,
                                     json_float)
from dpaudit.claims.severity import assess_severity
from dpaudit.claims.verdict import decide_verdict, violation_region

__all__ = ["ClaimAudit"]


@dataclass
class ClaimAudit:
    """Everything an audit of one claim produced (JSON-serialisable via ``to_dict``)."""

    claim: PrivacyClaim
    points: list[GridPoint]
    lemmas: list[LemmaCheck] = field(default_factory=list)
    findings: list[str] = field(default_factory=list)
    recommended_calibration: str | None = None
    figures: dict[str, Any] = field(default_factory=dict)
    seed: int = 0
    budget: str = "standard"
    alpha: float = 0.05
    seconds: float = 0.0
    reproduce: str = ""

    # -- readings ---------------------------------------------------------------------------
    def _reading_key(self, point: GridPoint) -> tuple[Any, ...]:
        return tuple(point.parameters.get(r.parameter, r.primary) for r in self.claim.readings)

    def _primary_key(self) -> tuple[Any, ...]:
        return tuple(r.primary for r in self.claim.readings)

    def primary_points(self) -> list[GridPoint]:
        """The points the claim's verdict rests on: those audited under the primary reading of
        every :class:`~dpaudit.claims.model.ReadingChoice` (a point without the reading's
        parameter does not depend on it and counts). All points when the claim has no readings."""
        if not self.claim.readings:
            return list(self.points)
        key = self._primary_key()
        return [p for p in self.points if self._reading_key(p) == key]

    def reading_verdicts(self) -> list[dict[str, Any]]:
        """One entry per reading audited: ``name``, ``parameters`` (the reading's values),
        ``primary`` (exactly one true), ``verdict``, ``reason``, ``points`` audited and the
        ``worst_point``. Empty when the claim declares no reading choice."""
        if not self.claim.readings and not self.claim.range_readings:
            return []
        groups: dict[tuple[Any, ...], list[GridPoint]] = {self._primary_key(): []}
        for p in self.points:
            groups.setdefault(self._reading_key(p), []).append(p)
        out = []
        for key, pts in groups.items():
            primary = key == self._primary_key()
            verdict, reason = decide_verdict(pts, self.lemmas)
            worst = _worst(pts)
            out.append({
                "name": "; ".join(r.label(v) for r, v in zip(self.claim.readings, key)),
                "parameters": {r.parameter: v for r, v in zip(self.claim.readings, key)},
                "primary": primary, "verdict": verdict, "reason": reason, "points": len(pts),
                "worst_point": None if worst is None else _summary(worst),
                "rationale": ("; ".join(r.rationale for r in self.claim.readings) if primary
                              else "")})
        primary_pts = self.primary_points()
        for rr in self.claim.range_readings:
            # the primary points inside the range (a point without the parameter is kept: it
            # does not depend on it)
            pts = [p for p in primary_pts if rr.parameter not in p.parameters
                   or rr.contains(p.parameters[rr.parameter])]
            verdict, reason = decide_verdict(pts, self.lemmas)
            worst = _worst(pts)
            out.append({
                "name": rr.name, "parameters": {rr.parameter: rr.stated}, "primary": False,
                "range": True, "verdict": verdict, "reason": reason, "points": len(pts),
                "excluded_points": len(primary_pts) - len(pts),
                "worst_point": None if worst is None else _summary(worst),
                "rationale": rr.rationale})
        return out

    @property
    def verdict_and_reason(self) -> tuple[Verdict, str]:
        verdict, reason = decide_verdict(self.primary_points(), self.lemmas)
        if not self.claim.readings and not self.claim.range_readings:
            return verdict, reason
        primary = "; ".join(r.label(r.primary) for r in self.claim.readings)
        others = [r for r in self.reading_verdicts() if not r["primary"]]
        text = (f"{verdict.capitalize()} under the primary reading ({primary}). {reason}"
                if primary else reason)
        if others:
            # A reading's name joins its choices with "; ": written with commas here, so that
            # the readings stay apart (not "holds under a=1; b=2; holds under a=2; ...").
            text += " Other readings: " + "; ".join(
                f"{r['verdict']} under {r['name'].replace('; ', ', ')}" for r in others) + "."
        return verdict, text

    @property
    def verdict(self) -> Verdict:
        return self.verdict_and_reason[0]

    def worst_point(self) -> GridPoint | None:
        return _worst(self.primary_points())

    def severity(self) -> dict[str, Any] | None:
        """How much the verdict matters (:func:`dpaudit.claims.severity.assess_severity`): the
        delta and parameter range of a violation, the witness's probability, the privacy curve
        against the claim; for a ``holds`` on a calibration the paper does not print, that caveat.
        ``None`` when there is nothing to add. Its ``sentence`` is the reports' headline."""
        return assess_severity(self.verdict, self.primary_points(), self.reading_verdicts(),
                               self.figures.get("privacy_curve"))

    def to_dict(self) -> dict[str, Any]:
        verdict, reason = self.verdict_and_reason
        w = self.worst_point()
        prov = self.claim.provenance
        return {
            "id": self.claim.id,
            "paper": prov.paper,
            "theorem": prov.theorem,
            "claimed": {"epsilon": self.claim.epsilon, "delta": self.claim.delta},
            "verdict": verdict,
            "reason": reason,
            "violation_region": violation_region(self.primary_points()),
            "severity": self.severity(),
            "worst_case": {
                "parameters": {} if w is None else dict(w.parameters),
                "claimed_epsilon": None if w is None else w.claimed_epsilon,
                "claimed_delta": None if w is None else w.claimed_delta,
                "epsilon_exact": None if w is None else json_float(w.epsilon_exact),
                "exact_kind": None if w is None or w.epsilon_exact is None else w.exact_kind.value,
                "epsilon_accountant": None if w is None else json_float(w.epsilon_accountant),
                "epsilon_lower_bound": None if w is None else json_float(w.epsilon_lower_bound),
            } | ({} if w is None else w.user_lower_bound_fields()),
            "lemmas": [lem.to_dict() for lem in self.lemmas],
            "claim": self.claim.to_dict(),
            "points": [p.to_dict() for p in self.points],
            "findings": list(self.findings),
            "recommended_calibration": self.recommended_calibration,
            "figures": self.figures,
            "seed": self.seed,
            "budget": self.budget,
            "alpha": self.alpha,
            "seconds": self.seconds,
            "reproduce": self.reproduce,
        } | ({"readings": self.reading_verdicts()} if self.claim.readings else {})

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "ClaimAudit":
        return cls(
            claim=PrivacyClaim.from_dict(d["claim"]),
            points=[GridPoint.from_dict(p) for p in d.get("points", [])],
            lemmas=[LemmaCheck.from_dict(x) for x in d.get("lemmas", [])],
            findings=list(d.get("findings", [])),
            recommended_calibration=d.get("recommended_calibration"),
            figures=dict(d.get("figures", {})),
            seed=d.get("seed", 0), budget=d.get("budget", "standard"), alpha=d.get("alpha", 0.05),
            seconds=d.get("seconds", 0.0), reproduce=d.get("reproduce", ""),
        )


def _worst(points: list[GridPoint]) -> GridPoint | None:
    if not points:
        return None
    bad = [p for p in points if p.counterexample() is not None]
    if bad:  # the strongest refutation, judged by refuting evidence only
        return max(bad, key=lambda p: p.refutation_ratio())
    return max(points, key=lambda p: p.worst_ratio())


def _summary(p: GridPoint) -> dict[str, Any]:
    return {"parameters": dict(p.parameters), "claimed_epsilon": p.claimed_epsilon,
            "claimed_delta": p.claimed_delta, "epsilon_exact": json_float(p.epsilon_exact),
            "exact_kind": None if p.epsilon_exact is None else p.exact_kind.value,
            "epsilon_accountant": json_float(p.epsilon_accountant),
            "epsilon_lower_bound": json_float(p.epsilon_lower_bound)} | p.user_lower_bound_fields()
