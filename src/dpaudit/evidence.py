"""Evidence records of a claim audit: :class:`GridPoint` (the evidence at one parameter point, with
its :class:`PointEvidence`) and :class:`LemmaCheck` (the outcome of checking one sensitivity lemma),
with the vocabulary they use
(:data:`EXACT`, :data:`CERTIFIED`, :data:`USER_SUPPLIED`, :data:`EXACT_TOLERANCE`).

Plain immutable data, JSON-serialisable through ``to_dict``/``from_dict``. It imports nothing of
dpaudit and sits below every package that uses it: the formal evidence package
(:mod:`dpaudit.formal`) produces these records and the claim machinery (:mod:`dpaudit.claims`)
decides on them, so neither imports the other for them. :mod:`dpaudit.claims.evidence` re-exports
every name for the papers and user code that import it from there.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field
from typing import Any, Literal, Mapping, Sequence

from dpaudit.evidence_records import (DerivationRecord, EmpiricalRecord, EvidenceOrigins,
                                      ExactKind, InvarianceRecord, JsonRecord, JsonView,
                                      PrimitivesRecord, SeverityEntry)


Verdict = Literal["holds", "violated", "inconclusive"]
LemmaStatus = Literal["holds", "violated", "inconclusive", "not checked"]

#: ``GridPoint.exact_kind``: what the formal value ``epsilon_exact`` is. ``EXACT``: a closed form
#: (or an exact composition) of the release on the pair; ``CERTIFIED``: a rigorous lower end of a
#: numerical bracket (e.g. an optimistic privacy-loss distribution of a projected release). Both
#: refute a claim they exceed; only the first is "the" epsilon of the pair.
EXACT = ExactKind.EXACT
CERTIFIED = ExactKind.CERTIFIED
#: ``USER_SUPPLIED``: a number the user computed and handed in (``dpaudit.Claim(exact_value=...)``),
#: not dpaudit's own evidence; it decides like an exact value but is labelled so everywhere.
USER_SUPPLIED = ExactKind.USER_SUPPLIED  # == EvidenceOrigin.USER_SUPPLIED.value (below)
EXACT_KINDS = (EXACT, CERTIFIED, USER_SUPPLIED)


def exact_kind_of(kind: "ExactKind | str") -> ExactKind:
    """``kind`` (an :class:`ExactKind` or its JSON word) as an :class:`ExactKind`; a
    ``ValueError`` naming the kinds for any other word."""
    try:
        return ExactKind(kind)
    except ValueError:
        raise ValueError(f"exact_kind must be one of {tuple(k.value for k in EXACT_KINDS)}, "
                         f"got {kind!r}") from None
#: The one label of each number a user hands in, wherever it shows (verdict sentence, findings,
#: report card, terminal table, JSON): the user's exact epsilon of a pair
#: (``Claim.exact_value``), the user's accountant epsilon (``Claim.accountant`` returning a
#: number) and the user's rigorous lower bound on the release's epsilon (``Claim.lower_bound``).
USER_EXACT_LABEL = "user-supplied exact epsilon"
USER_ACCOUNTANT_LABEL = "user-supplied accountant epsilon"
USER_LOWER_BOUND_LABEL = "user-supplied lower bound"
#: What every sentence adds to a user's number: dpaudit did not compute it.
NOT_COMPUTED = "not computed by dpaudit"


class EvidenceOrigin(enum.StrEnum):
    """Where a point's exact value or accountant comes from (its value is the JSON word).

    The vocabulary of ``evidence["exact_source"]`` and ``evidence["accountant_source"]``: one
    enum instead of sentences retyped in every module that reads them. The records
    :class:`ExactSource` and :class:`AccountantSource` carry it and write the JSON words only at
    the JSON edge (:meth:`ExactSource.to_evidence`), as dp-accounting's events are immutable
    values serialised by ``to_named_tuple`` only where they leave the library.
    """

    DERIVED = "derived from the code"
    """A law dpaudit derived by replaying the release's draws (:mod:`dpaudit.greybox`)."""
    DECLARED = "declared law"
    """A law the claim declared (``Claim.exact``), tested against runs of the release."""
    USER_SUPPLIED = "user-supplied"
    """A number the user computed and handed in (``Claim.exact_value``, a float accountant)."""
    DPAUDIT = "dpaudit"
    """dpaudit's accountant of the noise schedule the claim declared (``Claim.accountant``)."""
    TRUSTED_PRIMITIVES = "trusted primitives"
    """Accounted from the laws of the primitives the claim named, not read from their code."""
    PAPER = "paper module"
    """A bundled paper's own closed form (the paper modules write no ``exact_source``)."""

    @classmethod
    def of(cls, evidence: Mapping[str, Any] | None, key: str) -> "EvidenceOrigin | None":
        """The origin a point's (saved or planned) evidence records under ``key``, or ``None``
        when it records none or a word outside this vocabulary (an older record)."""
        value = evidence.get(key) if isinstance(evidence, Mapping) else None
        try:
            return None if value is None else cls(value)
        except ValueError:
            return None


@dataclass(frozen=True)
class ExactSource:
    """Where a point's exact epsilon comes from: ``origin``, the ``pair`` it is attained on (in
    words) and the ``method`` that computed it (``None``: not recorded, as in a record read back
    that carries only the origin)."""

    origin: EvidenceOrigin
    pair: str | None
    method: str | None

    def __post_init__(self) -> None:
        object.__setattr__(self, "origin", EvidenceOrigin(self.origin))

    def to_evidence(self) -> dict[str, str]:
        """The JSON form, the keys a point's evidence has always carried."""
        out = {"exact_pair": self.pair, "exact_method": self.method,
               "exact_source": self.origin.value}
        return {k: v for k, v in out.items() if v is not None}

    @classmethod
    def of(cls, evidence: Mapping[str, Any] | None) -> "ExactSource | None":
        """The record back from a point's evidence (``None`` without an ``exact_source``)."""
        return PointEvidence.of(evidence if isinstance(evidence, Mapping) else None).exact_source


#: The evidence keys of an :class:`ExactSource` (what a rejected law's point loses).
EXACT_SOURCE_KEYS = ("exact_source", "exact_pair", "exact_method")


@dataclass(frozen=True)
class AccountantSource:
    """Where a point's accountant epsilon comes from: ``origin`` and ``description`` (the
    schedule in words, or who supplied the number; ``None``: not recorded)."""

    origin: EvidenceOrigin
    description: str | None

    def __post_init__(self) -> None:
        object.__setattr__(self, "origin", EvidenceOrigin(self.origin))

    def to_evidence(self) -> dict[str, str]:
        """The JSON form, the keys a point's evidence has always carried."""
        out = {"accountant_source": self.origin.value}
        return out if self.description is None else out | {"accountant": self.description}

    @classmethod
    def of(cls, evidence: Mapping[str, Any] | None) -> "AccountantSource | None":
        """The record back from a point's evidence (``None`` without an
        ``accountant_source``)."""
        return PointEvidence.of(
            evidence if isinstance(evidence, Mapping) else None).accountant_source


#: ``LemmaCheck.status`` of a lemma the claim relies on but no check evaluated (``note`` says why).
NOT_CHECKED = "not checked"


def exact_label(kind: str | None) -> str:
    """``"exact epsilon"``, ``"certified lower bound on epsilon (numerical)"`` or ``"user-supplied
    exact epsilon"`` for sentences."""
    if kind == CERTIFIED:
        return "certified lower bound on epsilon (numerical)"
    if kind == USER_SUPPLIED:
        return f"{USER_EXACT_LABEL} ({NOT_COMPUTED})"
    return "exact epsilon"

#: Relative tolerance on exact (floating-point) epsilon comparisons: an exact epsilon must exceed the
#: claim by more than this factor to be a formal counterexample.
EXACT_TOLERANCE = 1e-6


def num(x: float | None) -> float | None:
    """``x`` as a float, non-finite values mapped to +-inf (NaN to -inf); ``None`` stays."""
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else (math.inf if x > 0 else -math.inf)


def json_float(x: float | None) -> float | str | None:
    """``x`` for JSON: a float, ``"inf"``/``"-inf"`` for infinities, ``None`` stays."""
    if x is None:
        return None
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return float(x)


#: The typed fields of :class:`PointEvidence` that hold one JSON value each: field name ->
#: (its JSON key, the JSON types it accepts). A saved value of another type stays in
#: ``details`` under its key (an older or hand-written record loses nothing).
_MAP = (Mapping,)
_SEQ = (list, tuple)
_NUMBER = (int, float)
_SINGLE_FIELDS: dict[str, tuple[str, tuple[type, ...]]] = {
    "neighbours": ("neighbours", (str,)),
    "origins": ("evidence_origin", _MAP),
    "derivation": ("derivation", _MAP),
    "declared_vs_derived": ("declared_vs_derived", _SEQ),
    "declared_exact": ("declared_exact", _NUMBER),
    "user_supplied_exact": ("user_supplied_exact", _NUMBER),
    "code_findings": ("code_findings", _SEQ),
    "primitives": ("primitives", _MAP),
    "user_lower_bound": ("user_lower_bound", (str,)),
    "invariance": ("invariance", _MAP),
    "rng_guard": ("rng_guard", (str,)),
    "noise_transforms": ("noise_transforms", _SEQ),
    "empirical_skipped": ("empirical_skipped", (str,)),
    "severity": ("severity", _MAP),
    "declared_law": ("declared_law", _MAP),
    "law_verification": ("derived_law_verification", _MAP),
    "declared_exact_rejected": ("declared_exact_rejected", _NUMBER),
    "derived_exact_rejected": ("derived_exact_rejected", _NUMBER),
    "derived_exact_unconfirmed": ("derived_exact_unconfirmed", _NUMBER),
    "empirical": ("empirical", _MAP),
}
#: The JSON keys of the two source records (:meth:`ExactSource.to_evidence`,
#: :meth:`AccountantSource.to_evidence`).
_SOURCE_KEYS = {"exact_source": EXACT_SOURCE_KEYS,
                "accountant_source": ("accountant_source", "accountant")}


#: The typed fields that hold a nested record (a mapping given for one is read into it).
_RECORDS: dict[str, type[JsonRecord]] = {
    "origins": EvidenceOrigins, "derivation": DerivationRecord, "primitives": PrimitivesRecord,
    "invariance": InvarianceRecord, "severity": SeverityEntry, "empirical": EmpiricalRecord}


def _accepts(types: tuple[type, ...], value: Any) -> bool:
    return isinstance(value, types) and not (isinstance(value, bool) and bool not in types)


@dataclass(frozen=True, eq=False)
class PointEvidence(JsonView):
    """Everything a grid point's numbers rest on, as a frozen record (``GridPoint.evidence``).

    The fields the engine writes and reads are typed: ``exact_source`` / ``accountant_source``
    (where the exact value and the accountant come from, with an :class:`EvidenceOrigin`), the
    user claim's records (``neighbours``, ``origins``: which evidence is drawn from the code and
    which declared, ``derivation``, ``declared_vs_derived``, ``declared_exact``,
    ``user_supplied_exact``, ``code_findings``, ``primitives``, ``user_lower_bound``,
    ``invariance``, ``rng_guard``, ``noise_transforms``, ``empirical_skipped``), the paper's
    ``severity`` entry (keys of :data:`dpaudit.claims.severity.SEVERITY_EVIDENCE_KEYS`) and what
    the claim driver adds (``declared_law``, ``law_verification``, the withdrawn exact values
    ``declared_exact_rejected`` / ``derived_exact_rejected`` / ``derived_exact_unconfirmed``,
    and ``empirical``, the black-box test's record). ``None`` means absent. ``details`` holds the
    declaration's own record (a paper's calibration, pairs, counterexamples), which only that
    declaration reads.

    The JSON form (:meth:`to_dict`) is the dict a point's evidence has always been, with the
    same keys in the same order: ``key_order`` remembers the order the keys were written in
    (:meth:`of` takes it from the dict, :meth:`with_` appends a new key as a dict update does),
    because the reports list a point's evidence in that order. As dp-accounting's events
    (dp-accounting 0.4, ``dp_event.py``) are immutable values serialised only where they leave
    the library, the words of the JSON are written only there. The record is also a read-only
    mapping over that JSON form, so code written against the dict (``point.evidence["empirical"]``)
    reads the same values. The nested records (``empirical``, ``primitives``, ``invariance``,
    ``derivation``, ``origins``, ``severity``) are frozen records of
    :mod:`dpaudit.evidence_records`; a plain dict given for one is read into it
    (:meth:`~dpaudit.evidence_records.JsonRecord.of`) and written back as it was.
    """

    exact_source: ExactSource | None = None
    accountant_source: AccountantSource | None = None
    neighbours: str | None = None
    origins: EvidenceOrigins | None = None
    derivation: DerivationRecord | None = None
    declared_vs_derived: Sequence[Mapping[str, Any]] | None = None
    declared_exact: float | None = None
    user_supplied_exact: float | None = None
    code_findings: Sequence[str] | None = None
    primitives: PrimitivesRecord | None = None
    user_lower_bound: str | None = None
    invariance: InvarianceRecord | None = None
    rng_guard: str | None = None
    noise_transforms: Sequence[str] | None = None
    empirical_skipped: str | None = None
    severity: SeverityEntry | None = None
    declared_law: Mapping[str, Any] | None = None
    law_verification: Mapping[str, Any] | None = None
    declared_exact_rejected: float | None = None
    derived_exact_rejected: float | None = None
    derived_exact_unconfirmed: float | None = None
    empirical: EmpiricalRecord | None = None
    details: Mapping[str, Any] = field(default_factory=dict)
    key_order: tuple[str, ...] = field(default=(), repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.details, Mapping):
            raise TypeError(f"details must be a mapping, got {type(self.details).__name__}")
        for name, kind in (("exact_source", ExactSource), ("accountant_source", AccountantSource)):
            value = getattr(self, name)
            if value is not None and not isinstance(value, kind):
                raise TypeError(f"{name} must be a {kind.__name__} or None, got "
                                f"{type(value).__name__}")
        for name, record in _RECORDS.items():  # a plain dict (a paper's, a user's) is read in
            value = getattr(self, name)
            if isinstance(value, Mapping) and not isinstance(value, record):
                object.__setattr__(self, name, record.of(value))
        for name, (key, types) in _SINGLE_FIELDS.items():
            value = getattr(self, name)
            if value is not None and not _accepts(types, value):
                raise TypeError(f"{name} (evidence key {key!r}) must be "
                                f"{' or '.join(t.__name__ for t in types)} or None, got "
                                f"{type(value).__name__}")
        typed = self._typed()
        clash = sorted(set(typed) & set(self.details))
        if clash:
            raise ValueError(f"details must not hold the keys of typed fields, got {clash}")
        merged = dict(self.details) | typed  # built directly: the declaration's entries first
        view = {k: merged[k] for k in dict.fromkeys(self.key_order) if k in merged}
        view.update((k, v) for k, v in merged.items() if k not in view)
        object.__setattr__(self, "key_order", tuple(view))
        object.__setattr__(self, "_view", view)

    def _typed(self) -> dict[str, Any]:
        """The JSON entries of the typed fields (in the order of the fields)."""
        out: dict[str, Any] = {}
        if self.exact_source is not None:
            out.update(self.exact_source.to_evidence())
        if self.accountant_source is not None:
            out.update(self.accountant_source.to_evidence())
        for name, (key, _) in _SINGLE_FIELDS.items():
            value = getattr(self, name)
            if value is not None:
                out[key] = value.to_dict() if isinstance(value, JsonRecord) else value
        return out

    @classmethod
    def of(cls, evidence: "Mapping[str, Any] | PointEvidence | None") -> "PointEvidence":
        """The record of a point's evidence dict (planned, or read back from JSON): every key a
        typed field accepts goes to that field, every other key to ``details``; the key order is
        kept, so ``PointEvidence.of(d).to_dict() == d`` in keys, values and order."""
        if isinstance(evidence, PointEvidence):
            return evidence
        if evidence is None:
            return cls()
        if not isinstance(evidence, Mapping):
            raise TypeError(f"evidence must be a mapping, got {type(evidence).__name__}")
        rest = dict(evidence)
        fields: dict[str, Any] = {}

        def text(key: str) -> str | None:  # a sentence of a source record, taken out of rest
            return rest.pop(key) if isinstance(rest.get(key), str) else None

        origin = EvidenceOrigin.of(rest, "exact_source")
        if origin is not None:
            del rest["exact_source"]
            fields["exact_source"] = ExactSource(origin, text("exact_pair"), text("exact_method"))
        origin = EvidenceOrigin.of(rest, "accountant_source")
        if origin is not None:
            del rest["accountant_source"]
            fields["accountant_source"] = AccountantSource(origin, text("accountant"))
        for name, (key, types) in _SINGLE_FIELDS.items():
            if key in rest and rest[key] is not None and _accepts(types, rest[key]):
                fields[name] = rest.pop(key)
        return cls(**fields, details=rest, key_order=tuple(evidence))

    @classmethod
    def saved(cls, point: Mapping[str, Any]) -> "PointEvidence":
        """The record of a saved (JSON) point's ``evidence``, empty when it has none."""
        evidence = point.get("evidence")
        return cls.of(evidence if isinstance(evidence, Mapping) else None)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: the keys a point's evidence has always carried, in writing order."""
        return dict(self._view)  # type: ignore[attr-defined]

    def with_(self, **changes: Any) -> "PointEvidence":
        """This record with the typed fields in ``changes`` set (``None`` removes one): a field
        set for the first time goes last in the JSON, one already set keeps its place (as a dict
        update does)."""
        unknown = sorted(set(changes) - set(_SINGLE_FIELDS) - set(_SOURCE_KEYS))
        if unknown:
            raise TypeError(f"with_ sets the typed fields of PointEvidence, not {unknown} (use "
                            "with_details for a declaration's own keys)")
        d = self.to_dict()
        for name, value in changes.items():
            # the keys the field wrote and will write (a source record writes only those it has)
            old = PointEvidence(**{name: getattr(self, name)}).to_dict()
            new = {} if value is None else PointEvidence(**{name: value}).to_dict()
            for k in old.keys() - new.keys():
                del d[k]
            d.update(new)
        return PointEvidence.of(d)

    def with_details(self, **entries: Any) -> "PointEvidence":
        """This record with a declaration's own ``entries`` added (last in the JSON unless
        already present; an entry of a typed field's key and type sets that field, as
        :meth:`of` reads it)."""
        return self.merged(entries)

    def merged(self, entries: Mapping[str, Any]) -> "PointEvidence":
        """This record updated with another producer's JSON ``entries`` (e.g. the grey box's
        record of a point), read as :meth:`of` reads them, in the order of a dict update."""
        return PointEvidence.of(self.to_dict() | dict(entries))

    @property
    def exact_origin(self) -> EvidenceOrigin | None:
        """Where the exact value comes from (``exact_source.origin``), or ``None`` when the
        point records none (a bundled paper's own closed form, or no exact value)."""
        return None if self.exact_source is None else self.exact_source.origin

    @property
    def accountant_origin(self) -> EvidenceOrigin | None:
        """Where the accountant comes from (``accountant_source.origin``), or ``None``."""
        return None if self.accountant_source is None else self.accountant_source.origin



@dataclass(frozen=True)
class GridPoint:
    """Evidence at one point of the claim's parameter range.

    ``parameters``: the point (e.g. ``{"epsilon": 1.0, "T": 64, "alpha": 0.1, "d": 1}``);
    ``claimed_epsilon``/``claimed_delta``: the claim instantiated at that point;
    ``epsilon_exact``: exact epsilon(delta) of the implemented mechanism on the worst realisable
    pair found (formal evidence); ``epsilon_accountant``: dp-accounting epsilon of the implemented
    noise schedule under worst-case sensitivity; ``epsilon_lower_bound``: valid empirical lower
    bound (statistical evidence, with ``alpha`` its level); ``evidence``: what the numbers
    rest on, a :class:`PointEvidence` (a mapping given here is read into one with
    :meth:`PointEvidence.of`); ``exact_kind``: :data:`EXACT` when
    ``epsilon_exact`` is a closed form, :data:`CERTIFIED` when it is the certified lower end of a
    numerical bracket, :data:`USER_SUPPLIED` when the user computed it;
    ``epsilon_user_lower_bound``: a rigorous lower bound on the release's epsilon at the claimed
    delta that the user supplied (``dpaudit.Claim(lower_bound=...)``, e.g. from a published
    attack or the user's own proof), labelled :data:`USER_LOWER_BOUND_LABEL`. It refutes the claim
    it exceeds, like a certified lower bound, and the sentence says it rests on a user-supplied
    number; it never makes a claim hold. It is in the JSON only when given.
    """

    parameters: Mapping[str, Any]
    claimed_epsilon: float
    claimed_delta: float
    epsilon_exact: float | None = None
    epsilon_accountant: float | None = None
    epsilon_lower_bound: float | None = None
    evidence: PointEvidence = field(default_factory=PointEvidence)
    exact_kind: ExactKind = EXACT
    epsilon_user_lower_bound: float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "evidence", PointEvidence.of(self.evidence))
        object.__setattr__(self, "exact_kind", exact_kind_of(self.exact_kind))

    def counterexample(self, tol: float = EXACT_TOLERANCE) -> str | None:
        """Why this point refutes the claim, or None."""
        c = self.claimed_epsilon
        if self.epsilon_exact is not None and self.epsilon_exact > c * (1 + tol):
            return f"{exact_label(self.exact_kind)} {self.epsilon_exact:.6g} > claimed {c:.6g}"
        u = self.epsilon_user_lower_bound
        if u is not None and u > c * (1 + tol):
            return (f"{USER_LOWER_BOUND_LABEL} {u:.6g} > claimed {c:.6g} (resting on a "
                    f"user-supplied number, {NOT_COMPUTED})")
        if self.epsilon_lower_bound is not None and self.epsilon_lower_bound > c:
            return f"empirical lower bound {self.epsilon_lower_bound:.6g} > claimed {c:.6g}"
        return None

    def accountant_below_exact(self, tol: float = EXACT_TOLERANCE) -> bool:
        """Whether the exact (or certified, or user-supplied) epsilon of a realisable pair exceeds
        the accountant's epsilon here: an inversion of formal evidence (the accountant is meant
        to be an upper bound over every pair)."""
        return (self.epsilon_exact is not None and self.epsilon_accountant is not None
                and self.epsilon_exact > self.epsilon_accountant * (1 + tol) + 1e-12)

    def accountant_below_user_lower_bound(self, tol: float = EXACT_TOLERANCE) -> bool:
        """Whether the user-supplied lower bound exceeds the accountant's epsilon here: the
        user's number and the accountant cannot both be right, so the accountant certifies
        nothing (as for an exact value above it)."""
        u, acc = self.epsilon_user_lower_bound, self.epsilon_accountant
        return u is not None and acc is not None and u > acc * (1 + tol) + 1e-12

    def refutation_ratio(self) -> float:
        """Strength of the counterexample evidence (exact epsilon or empirical lower bound, never the
        accountant, which is an upper bound) relative to the claim."""
        vals = [v for v in (self.epsilon_exact, self.epsilon_lower_bound,
                            self.epsilon_user_lower_bound) if v is not None]
        return max(vals, default=0.0) / self.claimed_epsilon

    def worst_ratio(self) -> float:
        """Largest evidence / claimed ratio at this point (for choosing the worst point)."""
        vals = [v for v in (self.epsilon_exact, self.epsilon_lower_bound, self.epsilon_accountant,
                            self.epsilon_user_lower_bound) if v is not None]
        return max(vals, default=0.0) / self.claimed_epsilon

    def to_dict(self) -> dict[str, Any]:
        return {"parameters": dict(self.parameters), "claimed_epsilon": self.claimed_epsilon,
                "claimed_delta": self.claimed_delta,
                "epsilon_exact": json_float(self.epsilon_exact),
                "exact_kind": None if self.epsilon_exact is None else self.exact_kind.value,
                "epsilon_accountant": json_float(self.epsilon_accountant),
                "epsilon_lower_bound": json_float(self.epsilon_lower_bound),
                "evidence": self.evidence.to_dict()} | self.user_lower_bound_fields()

    def user_lower_bound_fields(self) -> dict[str, Any]:
        """``{"epsilon_user_lower_bound": x}`` when the user supplied one, else ``{}`` (records
        of claims without one keep their schema)."""
        if self.epsilon_user_lower_bound is None:
            return {}
        return {"epsilon_user_lower_bound": json_float(self.epsilon_user_lower_bound)}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "GridPoint":
        def f(k: str) -> float | None:
            v = d.get(k)
            return None if v is None else float(v)
        return cls(d["parameters"], d["claimed_epsilon"], d["claimed_delta"], f("epsilon_exact"),
                   f("epsilon_accountant"), f("epsilon_lower_bound"), d.get("evidence", {}),
                   d.get("exact_kind") or EXACT, f("epsilon_user_lower_bound"))


#: How a lemma was checked. ``sampled``: a search over examples (Hypothesis, or exact evaluation
#: at grid points): it can refute, never prove; ``smt-proved``: the SMT solver found no
#: counterexample over the encoded class (:mod:`dpaudit.formal.smt`); ``smt-refuted``: an SMT
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
    #: Non-empty when the lemma fails but the accountant does not rest on it: what it rests on
    #: instead (a sensitivity dpaudit proved, and how). A failed lemma with a proof gap leaves
    #: "holds" possible, stated as a proof gap; without it a failed lemma blocks "holds".
    proof_gap: str = ""

    def __post_init__(self) -> None:
        if self.method not in LEMMA_METHODS:
            raise ValueError(f"method must be one of {', '.join(LEMMA_METHODS)}, "
                             f"got {self.method!r}")

    def to_dict(self) -> dict[str, Any]:
        out = {"statement": self.statement, "status": self.status,
               "worst_ratio": json_float(self.worst_ratio), "examples": self.examples,
               "counterexample": None if self.counterexample is None else dict(self.counterexample),
               "method": self.method}
        if self.details is not None:
            out["details"] = dict(self.details)
        if self.note:
            out["note"] = self.note
        if self.proof_gap:
            out["proof_gap"] = self.proof_gap
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "LemmaCheck":
        wr = d.get("worst_ratio")
        return cls(d["statement"], d["status"], None if wr is None else float(wr),
                   d.get("examples", 0), d.get("counterexample"), d.get("method", "sampled"),
                   d.get("details"), d.get("note", ""), d.get("proof_gap", ""))


@dataclass(frozen=True)
class LemmaOutcome:
    """What a paper's lemma checks return: the checks, the trace for the sensitivity figure
    (``figures["sensitivity"]`` convention of :mod:`dpaudit.claims.record`) and prose.

    ``not_checked``: statement of a lemma of the claim -> why no check evaluates it. Every lemma of
    the claim with no check of the same statement is recorded as ``"not checked"`` with this
    reason (or :data:`DEFAULT_NOT_CHECKED`), so a report never says "every lemma held" for a lemma
    nobody looked at.
    """

    checks: tuple[LemmaCheck, ...] = ()
    sensitivity_trace: Mapping[str, Any] | None = None
    findings: tuple[str, ...] = ()
    not_checked: Mapping[str, str] = field(default_factory=dict)


#: Why a lemma of the claim is "not checked" when the declaration gives no reason.
DEFAULT_NOT_CHECKED = ("no check of this statement as printed is declared for this claim (the "
                       "checks that ran test the statements listed with them)")
