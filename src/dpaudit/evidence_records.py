"""The nested records of a point's evidence, and the enums of its vocabulary.

A point's :class:`~dpaudit.evidence.PointEvidence` holds these frozen records (the black-box
test's ``empirical``, the grey box's ``derivation`` and ``evidence_origin``, the ``invariance``
check, the named ``primitives`` and a paper's ``severity`` entry) instead of string-keyed dicts,
as dp-accounting 0.4's events (``dp_event.py``) are immutable values serialised only where they
leave the library: :meth:`JsonRecord.to_dict` writes the JSON dict these records have always
been, with the same keys in the same order. Each is also a read-only mapping over that dict, and
each is read from one (:meth:`JsonRecord.of`), so dicts built by a paper or a user still work.
:class:`ExactKind` and :class:`NoiseFamily` are ``str`` enums whose values are the JSON words.
See docs/layout.md#typed-evidence.
"""

from __future__ import annotations

import dataclasses
import enum
import numbers
from dataclasses import dataclass, field
from typing import Any, ClassVar, Iterator, Mapping, Sequence

__all__ = ["ExactKind", "NoiseFamily", "JsonView", "JsonRecord", "BonferroniShare", "EmpiricalRecord",
           "DerivationRecord", "EvidenceOrigins", "InvarianceRecord", "PrimitivesRecord",
           "SeverityEntry"]


class ExactKind(enum.StrEnum):
    """What a point's formal value ``epsilon_exact`` is (its value is the JSON word of
    ``exact_kind``). ``EXACT``: a closed form (or an exact composition) of the release on the
    pair; ``CERTIFIED``: the rigorous lower end of a numerical bracket; ``USER_SUPPLIED``: a
    number the user computed (``dpaudit.Claim(exact_value=...)``), not dpaudit's evidence."""

    EXACT = "exact"
    CERTIFIED = "certified lower bound (numerical)"
    USER_SUPPLIED = "user-supplied"


class NoiseFamily(enum.StrEnum):
    """The family of a standardised noise draw: what the grey box replays (``GAUSSIAN``,
    ``LAPLACE``) and what a named primitive may declare (also ``DISCRETE_LAPLACE``)."""

    GAUSSIAN = "gaussian"
    LAPLACE = "laplace"
    DISCRETE_LAPLACE = "discrete laplace"


_STR = (str,)
_BOOL = (bool,)
_INT = (numbers.Integral,)
_NUMBER = (numbers.Real,)
_SEQ = (list, tuple)
_MAP = (Mapping,)


def _accepts(types: tuple[type, ...], value: Any) -> bool:
    return isinstance(value, types) and not (isinstance(value, bool) and bool not in types)


def _json(value: Any) -> Any:
    """The JSON value of a typed field: a record's dict, an enum's word, anything else as is."""
    if isinstance(value, JsonRecord):
        return value.to_dict()
    if isinstance(value, enum.Enum):
        return value.value
    return value


class JsonView(Mapping[str, Any]):
    """A read-only mapping over a record's JSON dict, held as ``_view`` (set once, when the
    frozen record is built): a record reads as the dict it is written to."""

    __slots__ = ()

    def __getitem__(self, key: str) -> Any:
        return self._view[key]  # type: ignore[attr-defined]

    def __iter__(self) -> Iterator[str]:
        return iter(self._view)  # type: ignore[attr-defined]

    def __len__(self) -> int:
        return len(self._view)  # type: ignore[attr-defined]


@dataclass(frozen=True, eq=False, kw_only=True)
class JsonRecord(JsonView):
    """A frozen record with a JSON dict form (the base of this module's records).

    A subclass declares its typed fields (``None``: absent) and ``_TYPES`` (field -> the JSON
    types it accepts; a field's name is its JSON key). ``extra`` holds every other key of the
    dict it was read from; ``key_order`` remembers the order the keys were written in (a field
    set later goes last, as a dict update does). ``_ALWAYS``: fields written as JSON null when
    ``None`` (the producer has always written them); ``_COERCE``: field -> the type a JSON word
    is read into (an enum or a nested record).
    """

    _TYPES: ClassVar[dict[str, tuple[type, ...]]] = {}
    _ALWAYS: ClassVar[frozenset[str]] = frozenset()
    _COERCE: ClassVar[dict[str, Any]] = {}

    extra: Mapping[str, Any] = field(default_factory=dict)
    key_order: tuple[str, ...] = field(default=(), repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.extra, Mapping):
            raise TypeError(f"extra must be a mapping, got {type(self.extra).__name__}")
        for name, types in self._TYPES.items():
            value = getattr(self, name)
            coerce = self._COERCE.get(name)
            if coerce is not None and value is not None and not isinstance(value, coerce):
                value = coerce.of(value) if issubclass(coerce, JsonRecord) else coerce(value)
                object.__setattr__(self, name, value)
            if value is not None and not _accepts(types, value):
                raise TypeError(f"{type(self).__name__}.{name} must be "
                                f"{' or '.join(t.__name__ for t in types)} or None, got "
                                f"{type(value).__name__}")
        typed = {name: _json(getattr(self, name)) for name in self._TYPES
                 if getattr(self, name) is not None or name in self._ALWAYS}
        clash = sorted(set(typed) & set(self.extra))
        if clash:
            raise ValueError(f"extra must not hold the keys of typed fields, got {clash}")
        merged = typed | dict(self.extra)
        view = {k: merged[k] for k in dict.fromkeys(self.key_order) if k in merged}
        view.update((k, v) for k, v in merged.items() if k not in view)
        object.__setattr__(self, "key_order", tuple(view))
        object.__setattr__(self, "_view", view)

    @classmethod
    def of(cls, record: "Mapping[str, Any] | JsonRecord") -> Any:
        """The record of a JSON dict: every key a typed field accepts goes to that field, every
        other key (or a value of another type, or a null) to ``extra``; the key order is kept,
        so ``cls.of(d).to_dict() == d`` in keys, values and order."""
        if isinstance(record, cls):
            return record
        if not isinstance(record, Mapping):
            raise TypeError(f"{cls.__name__} is read from a mapping, got "
                            f"{type(record).__name__}")
        rest = dict(record)
        fields: dict[str, Any] = {}
        for name, types in cls._TYPES.items():
            if name not in rest:
                continue
            value = rest[name]
            if value is None:
                if name in cls._ALWAYS:
                    del rest[name]
                continue
            coerce = cls._COERCE.get(name)
            if coerce is not None and not isinstance(value, coerce):
                try:
                    value = coerce.of(value) if issubclass(coerce, JsonRecord) else coerce(value)
                except (TypeError, ValueError):
                    continue  # outside the vocabulary (an older record): kept as written
            if _accepts(types, value):
                fields[name] = value
                del rest[name]
        return cls(**fields, extra=rest, key_order=tuple(record))

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: the keys this record has always carried, in writing order."""
        return dict(self._view)  # type: ignore[attr-defined]

    def with_(self, **changes: Any) -> Any:
        """This record with the typed fields in ``changes`` set: a field set for the first time
        goes last in the JSON, one already set keeps its place (as a dict update does)."""
        return dataclasses.replace(self, **changes)


@dataclass(frozen=True, eq=False, kw_only=True)
class BonferroniShare(JsonRecord):
    """One test's share of a claim's family alpha (the driver's ``bonferroni`` entry):
    ``family_alpha`` split over ``tests``, ``per_test_alpha`` received, the ``test``'s rank,
    ``what`` it tests and the ``note`` stating the joint guarantee."""

    _TYPES: ClassVar[dict[str, tuple[type, ...]]] = {
        "family_alpha": _NUMBER, "tests": _INT, "per_test_alpha": _NUMBER, "test": _INT,
        "what": _STR, "note": _STR}

    family_alpha: float | None = None
    tests: int | None = None
    per_test_alpha: float | None = None
    test: int | None = None
    what: str | None = None
    note: str | None = None


@dataclass(frozen=True, eq=False, kw_only=True)
class EmpiricalRecord(JsonRecord):
    """The black-box test's record at a point (``PointEvidence.empirical``): the audit result's
    JSON (:meth:`dpaudit.blackbox.result.AuditResult.to_dict` without its histogram; the keys the
    engine reads are typed, the rest is ``extra``) and what the driver adds: the
    ``statistic_name`` in words, the audited ``pair`` in one line (user claims) and the test's
    ``bonferroni`` share."""

    _TYPES: ClassVar[dict[str, tuple[type, ...]]] = {
        "verdict": _STR, "epsilon_lower_bound": _NUMBER, "output_kind": _STR, "power": _MAP,
        "samples": _MAP, "event": _MAP, "release_dtype": _STR, "statistic_name": _STR,
        "pair": _STR, "statistic": _MAP, "bonferroni": _MAP}
    _COERCE: ClassVar[dict[str, Any]] = {"bonferroni": BonferroniShare}

    verdict: str | None = None
    epsilon_lower_bound: float | None = None
    output_kind: str | None = None
    power: Mapping[str, Any] | None = None
    samples: Mapping[str, Any] | None = None
    event: Mapping[str, Any] | None = None
    release_dtype: str | None = None
    statistic_name: str | None = None
    pair: str | None = None
    statistic: Mapping[str, Any] | None = None
    bonferroni: BonferroniShare | None = None


@dataclass(frozen=True, eq=False, kw_only=True)
class DerivationRecord(JsonRecord):
    """Whether the release's law was derived by replay (:mod:`dpaudit.greybox.derivation`):
    ``derivable``, on how many ``pairs`` ``of`` the declared ones, the noise ``family``, the
    ``noise_draws`` per run and the ``replays`` run; ``reason`` why a pair is not derivable."""

    _TYPES: ClassVar[dict[str, tuple[type, ...]]] = {
        "derivable": _BOOL, "pairs": _INT, "of": _INT, "family": (NoiseFamily,),
        "noise_draws": _INT, "replays": _INT, "reason": _STR}
    _COERCE: ClassVar[dict[str, Any]] = {"family": NoiseFamily}

    derivable: bool | None = None
    pairs: int | None = None
    of: int | None = None  # type: ignore[assignment]  # the JSON key; JsonRecord.of is the class's
    family: NoiseFamily | None = None
    noise_draws: int | None = None
    replays: int | None = None
    reason: str | None = None


# ``of`` is both a JSON key of the derivation and the classmethod reading a record: the field's
# class attribute must not hide the classmethod.
DerivationRecord.of = classmethod(JsonRecord.of.__func__)  # type: ignore[assignment,attr-defined]


@dataclass(frozen=True, eq=False, kw_only=True)
class EvidenceOrigins(JsonRecord):
    """Which evidence of a point is drawn from the code and which is declared, one sentence per
    kind (``PointEvidence.origins``, JSON key ``evidence_origin``)."""

    _TYPES: ClassVar[dict[str, tuple[type, ...]]] = {
        "empirical": _STR, "accountant": _STR, "exact": _STR, "declared_law": _STR,
        "primitives": _STR}

    empirical: str | None = None
    accountant: str | None = None
    exact: str | None = None
    declared_law: str | None = None
    primitives: str | None = None


@dataclass(frozen=True, eq=False, kw_only=True)
class InvarianceRecord(JsonRecord):
    """The invariance check of a point's declared pairs (:mod:`dpaudit.greybox.invariance`): a
    clean check's ``invariant``, ``pairs``, ``calls``, ``sources`` and ``failures``, or the
    first pair with a finding (``pair``) as :meth:`~dpaudit.greybox.invariance.Invariance.to_dict`
    writes it (``public_values``, ``failure``, ``findings``)."""

    _TYPES: ClassVar[dict[str, tuple[type, ...]]] = {
        "invariant": _BOOL, "pairs": _INT, "calls": _INT, "sources": _SEQ, "failures": _SEQ,
        "public_values": _INT, "failure": _STR, "findings": _SEQ, "pair": _INT}

    invariant: bool | None = None
    pairs: int | None = None
    calls: int | None = None
    sources: Sequence[str] | None = None
    failures: Sequence[str] | None = None
    public_values: int | None = None
    failure: str | None = None
    findings: Sequence[Mapping[str, Any]] | None = None
    pair: int | None = None


@dataclass(frozen=True, eq=False, kw_only=True)
class PrimitivesRecord(JsonRecord):
    """The named primitives' record at a point (:func:`dpaudit.claims.primitive_check.
    primitive_evidence`): the ``primitives`` described, ``pairs`` checked, the ``origin`` of
    their laws, the ``calls`` per input, the ``called`` indices and the ``missing`` paths, the
    ``invariance`` / ``sensitivity`` / ``reach`` / ``postprocessing`` findings, ``worst_ratio``,
    the accounted ``epsilon`` (always written, null when nothing is accounted), a ``failure``,
    and the accountant's ``pieces`` and description (``accountant``)."""

    _TYPES: ClassVar[dict[str, tuple[type, ...]]] = {
        "primitives": _SEQ, "pairs": _INT, "origin": _STR, "calls": _SEQ, "called": _SEQ,
        "missing": _SEQ, "invariance": _SEQ, "sensitivity": _SEQ, "reach": _SEQ,
        "postprocessing": _SEQ, "worst_ratio": _NUMBER, "epsilon": _NUMBER, "failure": _STR,
        "pieces": _SEQ, "accountant": _STR}
    _ALWAYS: ClassVar[frozenset[str]] = frozenset({"epsilon"})

    primitives: Sequence[str] | None = None
    pairs: int | None = None
    origin: str | None = None
    calls: Sequence[int] | None = None
    called: Sequence[int] | None = None
    missing: Sequence[str] | None = None
    invariance: Sequence[Mapping[str, Any]] | None = None
    sensitivity: Sequence[Mapping[str, Any]] | None = None
    reach: Sequence[Mapping[str, Any]] | None = None
    postprocessing: Sequence[Mapping[str, Any]] | None = None
    worst_ratio: float | None = None
    epsilon: float | None = None
    failure: str | None = None
    pieces: Sequence[Any] | None = None
    accountant: str | None = None


@dataclass(frozen=True, eq=False, kw_only=True)
class SeverityEntry(JsonRecord):
    """What a declaration measured about its witness (``PointEvidence.severity``, read by
    :mod:`dpaudit.claims.severity`): the ``delta_from`` which it refutes, ``where`` (in words),
    ``holds_up_to_delta``, the witnessing ``event`` with ``event_log10_probability_upper`` or
    ``event_probability_lower``, and a ``calibration_caveat``."""

    _TYPES: ClassVar[dict[str, tuple[type, ...]]] = {
        "delta_from": _NUMBER, "where": _STR, "holds_up_to_delta": _NUMBER,
        "event_log10_probability_upper": _NUMBER, "event": _STR,
        "event_probability_lower": _NUMBER, "calibration_caveat": _STR}

    delta_from: float | None = None
    where: str | None = None
    holds_up_to_delta: float | None = None
    event_log10_probability_upper: float | None = None
    event: str | None = None
    event_probability_lower: float | None = None
    calibration_caveat: str | None = None
