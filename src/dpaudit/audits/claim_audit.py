"""Results of auditing one published claim: evidence per parameter point, lemma checks, verdict.

This is the record the CLI saves as JSON and the reports render; its ``to_dict`` is a superset of
one row of ``index.json`` (schema ``dpaudit.report/1``).

Verdict rules (issue 4, AUDIT-METHOD section 2), applied by :func:`decide_verdict`:

* ``"violated"``: some audited point has a formal counterexample (exact epsilon of a realisable
  neighbouring pair above the claim, beyond floating-point tolerance) or a statistically valid
  empirical lower bound above the claim.
* ``"holds"``: no counterexample, every audited point has an accountant (or exact worst-case) epsilon
  at or below the claim, and every sensitivity lemma held.
* ``"inconclusive"``: otherwise (e.g. the accountant is above the claim but no realisable pair
  exceeds it, or a lemma failed without a privacy counterexample, or no accountant exists).

Lemma methods (issue 13): an SMT counterexample (``method="smt-refuted"``, replayed through the
implementation) fails a lemma exactly like a shrunk Hypothesis counterexample; an SMT proof
(``"smt-proved"``) is named in the ``holds`` reason; an SMT call that timed out
(``"smt-unknown"``, status ``inconclusive``) is absent evidence: it never passes a lemma and does
not by itself fail one.

Conventions for ``GridPoint.evidence`` and ``ClaimAudit.figures`` (free-form, but reporting
understands these keys; every value must be JSON-serialisable):

* ``figures["histogram"]``: ``{"edges": [...], "counts0": [...], "counts1": [...],
  "threshold": float | None, "statistic": str, "parameters": {...}}``: the 1-D statistic of the
  empirical audit on both neighbouring streams (test split), with the chosen event.
* ``figures["privacy_curve"]``: ``{"deltas": [...], "epsilon_accountant": [...],
  "epsilon_exact": [...], "claimed": [eps, delta], "lower_bound": [eps_lb, delta]}``.
* ``figures["sensitivity"]``: ``{"t": [...], "observed": [...], "claimed": [...], "statement": str}``.
* ``figures["regret"]``: ``{"T": [...], "series": {name: [...]}, "ylabel": str}``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal, Mapping

from dpaudit.claims import PrivacyClaim

__all__ = ["GridPoint", "LemmaCheck", "LemmaMethod", "LEMMA_METHODS", "ClaimAudit",
           "decide_verdict", "format_parameters", "Verdict", "EXACT_TOLERANCE", "EXACT", "CERTIFIED",
           "EXACT_KINDS", "NOT_CHECKED", "exact_label", "violation_region"]

Verdict = Literal["holds", "violated", "inconclusive"]
LemmaStatus = Literal["holds", "violated", "inconclusive", "not checked"]

#: ``GridPoint.exact_kind``: what the formal value ``epsilon_exact`` is. ``EXACT``: a closed form
#: (or an exact composition) of the release on the pair; ``CERTIFIED``: a rigorous lower end of a
#: numerical bracket (e.g. an optimistic privacy-loss distribution of a projected release). Both
#: refute a claim they exceed; only the first is "the" epsilon of the pair.
EXACT = "exact"
CERTIFIED = "certified lower bound (numerical)"
EXACT_KINDS = (EXACT, CERTIFIED)
#: ``LemmaCheck.status`` of a lemma the claim relies on but no check evaluated (``note`` says why).
NOT_CHECKED = "not checked"


def exact_label(kind: str | None) -> str:
    """``"exact epsilon"`` or ``"certified lower bound on epsilon (numerical)"`` for sentences."""
    return ("certified lower bound on epsilon (numerical)" if kind == CERTIFIED
            else "exact epsilon")

#: Relative tolerance on exact (floating-point) epsilon comparisons: an exact epsilon must exceed the
#: claim by more than this factor to be a formal counterexample.
EXACT_TOLERANCE = 1e-6


def _num(x: float | None) -> float | None:
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else (math.inf if x > 0 else -math.inf)


def _json_float(x: float | None) -> float | str | None:
    if x is None:
        return None
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return float(x)


@dataclass(frozen=True)
class GridPoint:
    """Evidence at one point of the claim's parameter range.

    ``parameters``: the point (e.g. ``{"epsilon": 1.0, "T": 64, "alpha": 0.1, "d": 1}``);
    ``claimed_epsilon``/``claimed_delta``: the claim instantiated at that point;
    ``epsilon_exact``: exact epsilon(delta) of the implemented mechanism on the worst realisable
    pair found (formal evidence); ``epsilon_accountant``: dp-accounting epsilon of the implemented
    noise schedule under worst-case sensitivity; ``epsilon_lower_bound``: valid empirical lower
    bound (statistical evidence, with ``alpha`` its level); ``evidence``: anything else
    (counts, events, samples, seeds, pair description); ``exact_kind``: :data:`EXACT` when
    ``epsilon_exact`` is a closed form, :data:`CERTIFIED` when it is the certified lower end of a
    numerical bracket.
    """

    parameters: Mapping[str, Any]
    claimed_epsilon: float
    claimed_delta: float
    epsilon_exact: float | None = None
    epsilon_accountant: float | None = None
    epsilon_lower_bound: float | None = None
    evidence: Mapping[str, Any] = field(default_factory=dict)
    exact_kind: str = EXACT

    def __post_init__(self) -> None:
        if self.exact_kind not in EXACT_KINDS:
            raise ValueError(f"exact_kind must be one of {EXACT_KINDS}, got {self.exact_kind!r}")

    def counterexample(self, tol: float = EXACT_TOLERANCE) -> str | None:
        """Why this point refutes the claim, or None."""
        c = self.claimed_epsilon
        if self.epsilon_exact is not None and self.epsilon_exact > c * (1 + tol):
            return f"{exact_label(self.exact_kind)} {self.epsilon_exact:.6g} > claimed {c:.6g}"
        if self.epsilon_lower_bound is not None and self.epsilon_lower_bound > c:
            return f"empirical lower bound {self.epsilon_lower_bound:.6g} > claimed {c:.6g}"
        return None

    def refutation_ratio(self) -> float:
        """Strength of the counterexample evidence (exact epsilon or empirical lower bound, never the
        accountant, which is an upper bound) relative to the claim."""
        vals = [v for v in (self.epsilon_exact, self.epsilon_lower_bound) if v is not None]
        return max(vals, default=0.0) / self.claimed_epsilon

    def worst_ratio(self) -> float:
        """Largest evidence / claimed ratio at this point (for choosing the worst point)."""
        vals = [v for v in (self.epsilon_exact, self.epsilon_lower_bound, self.epsilon_accountant)
                if v is not None]
        return max(vals, default=0.0) / self.claimed_epsilon

    def to_dict(self) -> dict[str, Any]:
        return {"parameters": dict(self.parameters), "claimed_epsilon": self.claimed_epsilon,
                "claimed_delta": self.claimed_delta,
                "epsilon_exact": _json_float(self.epsilon_exact),
                "exact_kind": None if self.epsilon_exact is None else self.exact_kind,
                "epsilon_accountant": _json_float(self.epsilon_accountant),
                "epsilon_lower_bound": _json_float(self.epsilon_lower_bound),
                "evidence": dict(self.evidence)}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "GridPoint":
        def f(k: str) -> float | None:
            v = d.get(k)
            return None if v is None else float(v)
        return cls(d["parameters"], d["claimed_epsilon"], d["claimed_delta"], f("epsilon_exact"),
                   f("epsilon_accountant"), f("epsilon_lower_bound"), d.get("evidence", {}),
                   d.get("exact_kind") or EXACT)


#: How a lemma was checked. ``sampled``: a search over examples (Hypothesis, or exact evaluation
#: at grid points): it can refute, never prove; ``smt-proved``: the SMT solver found no
#: counterexample over the encoded class (:mod:`dpaudit.audits.symbolic`); ``smt-refuted``: an SMT
#: counterexample, replayed through the implementation; ``smt-unknown``: the solver timed out or
#: could not decide (never a pass); ``symbolic-explored``: a property explored by symbolic
#: execution (e.g. CrossHair), stronger than sampling, not a proof.
LemmaMethod = Literal["sampled", "smt-proved", "smt-refuted", "smt-unknown", "symbolic-explored"]
LEMMA_METHODS: tuple[str, ...] = ("sampled", "smt-proved", "smt-refuted", "smt-unknown",
                                  "symbolic-explored")


@dataclass(frozen=True)
class LemmaCheck:
    """Outcome of a check of one sensitivity lemma (``method``: how it was checked, see
    :data:`LemmaMethod`; ``details``: method-specific record, e.g. the SMT solver and encoding).

    ``status`` :data:`NOT_CHECKED` records a lemma the claim relies on that no check evaluated;
    ``note`` then says why (reports print it; the verdict rules treat it as "not evidence").
    """

    statement: str
    status: LemmaStatus
    worst_ratio: float | None = None
    examples: int = 0
    counterexample: Mapping[str, Any] | None = None
    method: LemmaMethod = "sampled"
    details: Mapping[str, Any] | None = None
    note: str = ""

    def __post_init__(self) -> None:
        if self.method not in LEMMA_METHODS:
            raise ValueError(f"method must be one of {', '.join(LEMMA_METHODS)}, "
                             f"got {self.method!r}")

    def to_dict(self) -> dict[str, Any]:
        out = {"statement": self.statement, "status": self.status,
               "worst_ratio": _json_float(self.worst_ratio), "examples": self.examples,
               "counterexample": None if self.counterexample is None else dict(self.counterexample),
               "method": self.method}
        if self.details is not None:
            out["details"] = dict(self.details)
        if self.note:
            out["note"] = self.note
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "LemmaCheck":
        wr = d.get("worst_ratio")
        return cls(d["statement"], d["status"], None if wr is None else float(wr),
                   d.get("examples", 0), d.get("counterexample"), d.get("method", "sampled"),
                   d.get("details"), d.get("note", ""))


def format_parameters(parameters: Mapping[str, Any]) -> str:
    """``{"epsilon": 1.0, "T": 64}`` -> ``"epsilon=1, T=64"`` (for sentences in reports)."""
    def fmt(v: Any) -> str:
        return f"{v:g}" if isinstance(v, float) else str(v)
    return ", ".join(f"{k}={fmt(v)}" for k, v in parameters.items()) or "(no parameters)"


def _fmt_value(v: Any) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


def violation_region(points: list[GridPoint]) -> str:
    """Where the refuting points lie among the audited ones, in words.

    ``"at every audited point (9 of 9)"``; ``"only for epsilon >= 818 (3 of 9 audited points)"``
    when one numeric parameter separates the refuting points from the others (the first such
    parameter in the points' order); else ``"at 4 of 9 audited points"``. Empty when nothing
    refutes the claim.
    """
    bad = [p.counterexample() is not None for p in points]
    k, n = sum(bad), len(points)
    if k == 0:
        return ""
    if k == n:
        return f"at every audited point ({n} of {n})"
    names: list[str] = []
    for p in points:
        names += [x for x in p.parameters if x not in names]
    for name in names:
        vals = [p.parameters.get(name) for p in points]
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in vals):
            continue
        refuting = [v for v, b in zip(vals, bad) if b]
        other = [v for v, b in zip(vals, bad) if not b]
        if min(refuting) > max(other):
            return (f"only for {name} >= {_fmt_value(min(refuting))} ({k} of {n} audited "
                    "points)")
        if max(refuting) < min(other):
            return (f"only for {name} <= {_fmt_value(max(refuting))} ({k} of {n} audited "
                    "points)")
    return f"at {k} of {n} audited points"


def deciding_number(point: GridPoint) -> str:
    """What would decide an inconclusive point, in one sentence: the bracket the implemented
    release's epsilon is known to lie in there (largest lower evidence, the accountant above) and
    the claimed value inside it that decides the claim, with the empirical test's power at this
    budget when it ran."""
    c, acc = point.claimed_epsilon, point.epsilon_accountant
    lower: list[tuple[float, str]] = []
    if point.epsilon_exact is not None:
        lower.append((point.epsilon_exact, "certified lower bound of the worst pair found"
                      if point.exact_kind == CERTIFIED else "exact epsilon of the worst pair found"))
    if point.epsilon_lower_bound is not None:
        lower.append((point.epsilon_lower_bound, "empirical lower bound"))
    if lower:
        lo, source = max(lower, key=lambda t: t[0])
        bracket = f"between {max(lo, 0.0):.4g} ({source}) and {acc:.4g} (accountant)"
    else:
        bracket = f"at most {acc:.4g} (accountant; no lower evidence at this point)"
    text = (f"What decides it: there the implemented release's epsilon is {bracket}, and the "
            f"claim fails iff it exceeds {c:.4g}; a realisable pair with exact or certified "
            f"epsilon, or a valid empirical lower bound, above {c:.4g} would refute it, an upper "
            f"bound at or below {c:.4g} (tighter than the accountant) would certify it there.")
    emp = point.evidence.get("empirical") if isinstance(point.evidence, Mapping) else None
    power = emp.get("power") if isinstance(emp, Mapping) else None
    if isinstance(power, Mapping) and power.get("detectable_epsilon") is not None:
        d = _num(float(power["detectable_epsilon"]))
        if d is not None and math.isfinite(d):
            text += (f" This budget's empirical test would detect epsilon >= {d:.4g} there with "
                     f"probability {power.get('power', 0.8):g}"
                     + (", so more runs or a stronger event are needed to refute it empirically."
                        if d > c else "."))
        else:
            text += (" With its chosen event, this budget's empirical test cannot detect any finite "
                     f"epsilon there with probability {power.get('power', 0.8):g}, so an empirical "
                     "refutation needs a different event or pair.")
    return text


def decide_verdict(points: list[GridPoint], lemmas: list[LemmaCheck]) -> tuple[Verdict, str]:
    """Apply the verdict rules of the module docstring; return (verdict, one-sentence reason).

    Lemmas with status :data:`NOT_CHECKED` are not evidence either way: they never turn a verdict
    into "inconclusive", and a "holds" reason says how many were not checked instead of claiming
    that every lemma held.
    """
    refuting = [p for p in points if p.counterexample() is not None]
    if refuting:  # state the strongest refutation (the report's worst point)
        p = max(refuting, key=lambda q: q.refutation_ratio())
        return "violated", (f"Violated {violation_region(points)}; strongest at "
                            f"{format_parameters(p.parameters)}: {p.counterexample()}.")
    if not points:
        return "inconclusive", "No parameter point was audited."
    no_acc = [p for p in points if p.epsilon_accountant is None]
    over = [p for p in points if p.epsilon_accountant is not None
            and p.epsilon_accountant > p.claimed_epsilon * (1 + EXACT_TOLERANCE)]
    checked = [lem for lem in lemmas if lem.status != NOT_CHECKED]
    unchecked = len(lemmas) - len(checked)
    # An SMT call that timed out is absent evidence, not a failed lemma (it never passes either).
    undecided = [lem for lem in checked if lem.status != "holds" and lem.method == "smt-unknown"]
    bad_lemmas = [lem for lem in checked if lem.status != "holds" and lem.method != "smt-unknown"]
    if over:
        p = max(over, key=lambda q: q.epsilon_accountant / q.claimed_epsilon)
        return ("inconclusive", f"No realisable counterexample found, but the accountant gives "
                f"epsilon {p.epsilon_accountant:.4g} > claimed {p.claimed_epsilon:.4g} at "
                f"{format_parameters(p.parameters)}" + (f" (and at {len(over) - 1} other of the "
                f"{len(points)} audited points)" if len(over) > 1 else "") + ". "
                + deciding_number(p))
    if bad_lemmas:
        return ("inconclusive", f"No privacy counterexample found, but lemma "
                f"'{bad_lemmas[0].statement}' is {bad_lemmas[0].status}.")
    if no_acc:
        return ("inconclusive", f"No counterexample found, but {len(no_acc)} of {len(points)} "
                "points have no accountant bound to certify the claim.")
    held = len(checked) - len(undecided)
    if unchecked or undecided:
        gaps = "; ".join(x for x in (
            f"{unchecked} of the claim's lemmas not checked" if unchecked else "",
            f"{len(undecided)} undecided by the SMT solver" if undecided else "") if x)
        lemma_text = (f"each of the {held} checked lemmas held ({gaps}; the lemma table says why)"
                      if held else f"no lemma was checked and held ({gaps}; the lemma table says "
                      "why)")
    else:
        lemma_text = "every lemma held" if checked else "the claim relies on no lemma"
    proved = sum(1 for lem in lemmas if lem.method == "smt-proved")
    return "holds", (f"No counterexample at {len(points)} audited points; the accountant is at or "
                     f"below the claim at every point and {lemma_text}"
                     + (f" ({proved} proved by SMT over the encoded class)." if proved else "."))


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

    @property
    def verdict_and_reason(self) -> tuple[Verdict, str]:
        return decide_verdict(self.points, self.lemmas)

    @property
    def verdict(self) -> Verdict:
        return self.verdict_and_reason[0]

    def worst_point(self) -> GridPoint | None:
        if not self.points:
            return None
        bad = [p for p in self.points if p.counterexample() is not None]
        if bad:  # the strongest refutation, judged by refuting evidence only
            return max(bad, key=lambda p: p.refutation_ratio())
        return max(self.points, key=lambda p: p.worst_ratio())

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
            "violation_region": violation_region(self.points),
            "worst_case": {
                "parameters": {} if w is None else dict(w.parameters),
                "claimed_epsilon": None if w is None else w.claimed_epsilon,
                "claimed_delta": None if w is None else w.claimed_delta,
                "epsilon_exact": None if w is None else _json_float(w.epsilon_exact),
                "exact_kind": None if w is None or w.epsilon_exact is None else w.exact_kind,
                "epsilon_accountant": None if w is None else _json_float(w.epsilon_accountant),
                "epsilon_lower_bound": None if w is None else _json_float(w.epsilon_lower_bound),
            },
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
        }

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
