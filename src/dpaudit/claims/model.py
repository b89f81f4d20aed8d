"""Privacy claims as immutable data.

A published privacy theorem is a *claim* to be tested (``../shared/AUDIT-METHOD.md`` section 1):
for all parameters in a stated range and all neighbouring streams, the released output is
(epsilon, delta)-DP. A :class:`PrivacyClaim` records exactly what was printed, where, and the
sensitivity statements the proof relies on, so reports can quote it and JSON can carry it.
"""

from __future__ import annotations

import enum
import math
import re
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Mapping

from dpaudit._validation import check_delta, check_epsilon, check_int
from dpaudit.neighbours import NeighbourRelation

__all__ = ["NeighbourRelation", "Release", "WindowBoundary", "WindowScope", "Provenance",
           "SensitivityLemma", "ReadingChoice", "RangeReading", "ParameterRange", "PARAMETER_ROLES",
           "PrivacyClaim"]


class Release(str, enum.Enum):
    """What the mechanism releases, i.e. what the adversary sees."""

    FULL_SEQUENCE = "full-sequence"
    """The whole output sequence (every released point x_1..x_T)."""
    FINAL = "final"
    """Only the final output."""
    WINDOW = "window"
    """Window DP: the outputs while the changed element is inside the protected window
    (:class:`WindowScope` says which positions are protected at which horizon)."""


class WindowBoundary(str, enum.Enum):
    """Which horizons still protect an entry at the edge of the window (a reading choice).

    Window DP (pfcoco Def. 6, after Bolot et al. ICDT 2013) weighs the privacy loss of entry ``i``
    at horizon ``T`` by ``w(T - i)``: ``w = 1`` inside the window, ``w = inf`` (no protection)
    outside. The OCR prints ``w(i) = 1 for i < W, w(i) = inf for i > W``, leaving ``T - i = W``
    open.
    """

    STRICT = "strict"
    """Protected iff ``T - i < W``: exactly the last ``W`` entries (``i = T - W + 1 .. T``)."""
    INCLUSIVE = "inclusive"
    """Protected iff ``T - i <= W``: the last ``W + 1`` entries."""


@dataclass(frozen=True)
class WindowScope:
    """The scope of a window-DP claim: which entry is protected by which released prefix.

    ``window`` names the window-size parameter of the claim (``"W"``); ``boundary`` is the reading
    of Def. 6 at ``T - i = W`` (:class:`WindowBoundary`). Positions and horizons are 1-based: the
    entry ``i`` is the ``i``-th loss; the horizon ``T`` means the outputs released after the first
    ``T`` losses (and every earlier output).
    """

    window: str = "W"
    boundary: WindowBoundary = WindowBoundary.STRICT

    def __post_init__(self) -> None:
        if not isinstance(self.window, str) or not self.window:
            raise ValueError(f"window must be a non-empty parameter name, got {self.window!r}")
        object.__setattr__(self, "boundary", WindowBoundary(self.boundary))

    def protects(self, position: int, horizon: int, W: int) -> bool:
        """Whether entry ``position`` is protected by the outputs released up to ``horizon``.

        ``1 <= position <= horizon`` and ``W >= 1`` are required (``ValueError`` otherwise).
        """
        i = _check_index(position, "position", 1)
        T = _check_index(horizon, "horizon", i)
        W = _check_index(W, "W", 1)
        return T - i < W if self.boundary is WindowBoundary.STRICT else T - i <= W

    def last_protected_horizon(self, position: int, W: int) -> int:
        """The largest horizon ``T`` at which entry ``position`` is still protected."""
        i = _check_index(position, "position", 1)
        W = _check_index(W, "W", 1)
        return i + W - 1 if self.boundary is WindowBoundary.STRICT else i + W

    def protected_positions(self, horizon: int, W: int) -> range:
        """The entries protected at ``horizon`` (1-based, increasing)."""
        T = _check_index(horizon, "horizon", 1)
        W = _check_index(W, "W", 1)
        first = T - W + 1 if self.boundary is WindowBoundary.STRICT else T - W
        return range(max(1, first), T + 1)

    def describe(self) -> str:
        """The scope in plain words, for reports."""
        n = self.window
        if self.boundary is WindowBoundary.STRICT:
            which, edge = f"the last {n} losses", f"T - i < {n}"
        else:
            which, edge = f"the last {n} + 1 losses", f"T - i <= {n}"
        return (f"window {n} protects only {which}: the loss at position i is protected in the "
                f"outputs released up to horizon T while {edge}, and not at all afterwards "
                "(older losses may be released through exact sums)")

    def to_dict(self) -> dict[str, str]:
        return {"window": self.window, "boundary": self.boundary.value,
                "description": self.describe()}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "WindowScope":
        return cls(window=d.get("window", "W"),
                   boundary=WindowBoundary(d.get("boundary", "strict")))


def _check_index(value: object, name: str, minimum: int) -> int:
    return check_int(value, name, minimum=minimum)


@dataclass(frozen=True)
class Provenance:
    """Where a claim or lemma was stated.

    For the bundled papers ``paper`` is a file name in ``../shared/seeds`` (e.g.
    ``"jkt12-colt.txt"``); ``version`` names the version of the paper (``"COLT 2012"``, ``"arXiv
    v2"``); ``theorem`` the statement number; ``equation`` the printed calibration or equation it
    relies on, verbatim where readable. For a user's claim (:class:`dpaudit.Source`) ``paper`` is
    the document's title, ``kind`` says what it is (``"design doc"``, ``"library documentation"``,
    ...) and ``url`` links to it; both are omitted from the JSON when they keep their defaults.
    """

    paper: str
    version: str
    theorem: str
    equation: str = ""
    location: str = ""
    kind: str = "paper"
    url: str = ""

    def to_dict(self) -> dict[str, str]:
        out = {"paper": self.paper, "version": self.version, "theorem": self.theorem,
               "equation": self.equation, "location": self.location}
        if self.kind != "paper":
            out["kind"] = self.kind
        if self.url:
            out["url"] = self.url
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Provenance":
        return cls(**{k: d.get(k, "") for k in ("paper", "version", "theorem", "equation",
                                                 "location", "url")},
                   kind=d.get("kind", "paper") or "paper")


@dataclass(frozen=True)
class SensitivityLemma:
    """A sensitivity statement a privacy proof relies on, e.g. ``IGD sensitivity <= 2L/(alpha t)``.

    ``statement`` is the human-readable claim as it appears in reports; ``provenance`` where it was
    printed. Lemmas are audited in their own right (Hypothesis sensitivity checks).
    """

    statement: str
    provenance: Provenance

    def to_dict(self) -> dict[str, Any]:
        return {"statement": self.statement, "provenance": self.provenance.to_dict()}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "SensitivityLemma":
        return cls(d["statement"], Provenance.from_dict(d["provenance"]))


@dataclass(frozen=True)
class ReadingChoice:
    """A passage of the source that admits more than one reading, and which reading decides.

    ``parameter``: the grid parameter whose values are the readings (e.g. ``"boundary"`` with
    values ``"strict"`` and ``"inclusive"``); ``primary``: the value the claim's verdict rests on:
    the paper's literal text, or, where the paper prints nothing, the reading consistent with its
    own definitions; ``rationale``: one sentence saying why, quoting the line it rests on;
    ``labels``: optional words for each value (``{"L": "Delta = L (add/remove sensitivity)"}``).
    Every other value gets its own verdict, reported beside the claim's.
    """

    parameter: str
    primary: Any
    rationale: str
    labels: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.parameter, str) or not self.parameter:
            raise ValueError("ReadingChoice.parameter must name a grid parameter")
        if not isinstance(self.rationale, str) or not self.rationale.strip():
            raise ValueError("ReadingChoice.rationale must say why the primary reading decides")
        object.__setattr__(self, "labels", _freeze(self.labels))

    def label(self, value: Any) -> str:
        return self.labels.get(str(value), f"{self.parameter}={value}")

    def to_dict(self) -> dict[str, Any]:
        out = {"parameter": self.parameter, "primary": self.primary, "rationale": self.rationale}
        if self.labels:
            out["labels"] = dict(self.labels)
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "ReadingChoice":
        return cls(d["parameter"], d["primary"], d["rationale"], d.get("labels", {}))


@dataclass(frozen=True)
class RangeReading:
    """An auditor's reading that restricts one parameter of a claim to a narrower range than the
    claim states (e.g. a range printed only in a proposition the proof rests on, read as a
    precondition of the theorem).

    ``parameter``: the grid key (``"epsilon"``); ``stated``: the range in symbols, parsed like
    :attr:`ParameterRange.stated` (``"(0, 1)"``); ``rationale``: one sentence saying where the
    range is printed and why it is a reading; ``label``: words for it in verdict sentences
    (default ``"<parameter> in <stated>"``). Its verdict is decided on the primary reading's
    points whose value lies in the range and is reported beside the claim's; it never decides
    the claim's own verdict.
    """

    parameter: str
    stated: str
    rationale: str
    label: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.parameter, str) or not self.parameter:
            raise ValueError("RangeReading.parameter must name a grid parameter")
        if ParameterRange(self.parameter, self.stated, note="range reading").stated_ends() is None:
            raise ValueError(f"RangeReading.stated must be a numeric range such as '(0, 1)', "
                             f"got {self.stated!r}")
        if not isinstance(self.rationale, str) or not self.rationale.strip():
            raise ValueError("RangeReading.rationale must say where the range is printed")

    @property
    def name(self) -> str:
        return self.label or f"{self.parameter} in {self.stated}"

    def contains(self, value: Any) -> bool:
        """Whether the numeric ``value`` lies in the range (a symbolic end admits nothing)."""
        ends = ParameterRange(self.parameter, self.stated, note="range reading").stated_ends()
        assert ends is not None
        (lo, lo_closed), (hi, hi_closed) = ends
        if isinstance(lo, str) or isinstance(hi, str) or not isinstance(value, (int, float)):
            return False
        return ((value > lo or (lo_closed and value == lo))
                and (value < hi or (hi_closed and value == hi)))

    def to_dict(self) -> dict[str, Any]:
        return {"parameter": self.parameter, "stated": self.stated, "rationale": self.rationale,
                "label": self.label}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "RangeReading":
        return cls(d["parameter"], d["stated"], d["rationale"], d.get("label", ""))


#: What a grid key of a claim is: a parameter the claim is quantified over, a reading of an
#: ambiguous passage (:class:`ReadingChoice`), or a label of the audited point (the pair, the
#: statistic, the setting a point reproduces), which is no parameter of the claim.
PARAMETER_ROLES = ("parameter", "reading", "label")


@dataclass(frozen=True)
class ParameterRange:
    """The stated range of one grid parameter of a claim, the text it rests on, and the grid values
    that audit it: every parameter's stated range is audited, its extremes included.

    ``name``: the grid key (``"gamma"``); ``stated``: the range in symbols (``"(0, 1)"``);
    ``quote``: the paper's words the range rests on, verbatim from the source text (whitespace
    aside), or empty when the paper states nothing and ``note`` says what the range is read from;
    ``extremes``: the grid values that audit the range's ends (for an open or unbounded end, the
    value chosen to stand for it, and ``note`` says why); ``breakpoints``: grid values on both sides
    of every point where the algorithm's discrete choices change (a ceiling or an integer count
    jumps); ``role``: one of :data:`PARAMETER_ROLES`; ``note``: one sentence on the choices.

    The ends of a numeric range are machine-readable from ``stated`` (:meth:`stated_ends`): it
    begins with ``(a, b)``, ``[a, b]`` (any mix of brackets), ``>= a``, ``> a``, ``<= b``,
    ``< b`` or ``<expression> in [a, b)``, where ``a`` and ``b`` are numbers, fractions (``1/2``),
    ``inf`` or a symbol (``r``); whatever follows is comment. A closed end (the ``2`` of
    ``(0, 2]``, the ``1`` of ``>= 1``) is audited on the grid, or ``note`` names it
    (``"T = 1 ..."``) and says why it cannot be (``tests/test_parameter_ranges.py``).
    """

    name: str
    stated: str
    quote: str = ""
    extremes: tuple[Any, ...] = ()
    breakpoints: tuple[Any, ...] = ()
    role: str = "parameter"
    note: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError("ParameterRange.name must name a grid parameter")
        if self.role not in PARAMETER_ROLES:
            raise ValueError(f"ParameterRange.role must be one of {PARAMETER_ROLES}, got "
                             f"{self.role!r}")
        if not self.quote.strip() and not self.note.strip():
            raise ValueError(f"ParameterRange {self.name!r}: quote the paper or say in note what "
                             "the range is read from")
        object.__setattr__(self, "extremes", tuple(self.extremes))
        object.__setattr__(self, "breakpoints", tuple(self.breakpoints))

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "stated": self.stated, "role": self.role}
        for key in ("quote", "note"):
            if getattr(self, key):
                out[key] = getattr(self, key)
        for key in ("extremes", "breakpoints"):
            if getattr(self, key):
                out[key] = list(getattr(self, key))
        return out

    def stated_ends(self) -> tuple[tuple[float | str, bool], tuple[float | str, bool]] | None:
        """The ends of ``stated`` as ``((low, closed), (high, closed))``, or ``None`` when it is
        not a numeric range (alternatives ``"1 | 2"``, a label, a set in words).

        An end is a float (``inf`` for an unbounded side, which is never closed) or, when the
        paper states it through another symbol (``(r, inf)``), that symbol as a string.
        """
        text = self.stated.strip()
        m = _ONE_SIDED.match(text)
        if m:
            op, value = m.group(1), _end_value(m.group(2))
            if op.startswith(">"):
                return (value, op == ">="), (math.inf, False)
            return (-math.inf, False), (value, op == "<=")
        m = _INTERVAL.match(text)
        if not m:
            return None
        low, high = _end_value(m.group(2)), _end_value(m.group(3))
        return ((low, m.group(1) == "[" and low != -math.inf),
                (high, m.group(4) == "]" and high != math.inf))

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "ParameterRange":
        return cls(d["name"], d.get("stated", ""), d.get("quote", ""),
                   tuple(d.get("extremes", ())), tuple(d.get("breakpoints", ())),
                   d.get("role", "parameter"), d.get("note", ""))


_NUMBER = r"-?(?:inf|\d+(?:\.\d*)?(?:e-?\d+)?(?:\s*/\s*\d+)?)"
_ONE_SIDED = re.compile(r"^(>=|>|<=|<)\s*(" + _NUMBER + r"|[A-Za-z_]\w*)(?![\w.])")
_INTERVAL = re.compile(r"^(?:[^()\[\],]*\bin\s+)?([(\[])\s*([^,()\[\]]+?)\s*,\s*"
                       r"([^,()\[\]]+?)\s*([)\]])")


def _end_value(text: str) -> float | str:
    """One end of a stated range: a number, a fraction ``a/b``, ``inf``, or the symbol as text."""
    t = text.strip()
    if re.fullmatch(_NUMBER, t):
        if "/" in t:
            a, b = t.split("/")
            return float(a) / float(b)
        return float(t)
    return t


def _freeze(mapping: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return MappingProxyType(dict(mapping or {}))


@dataclass(frozen=True, eq=True)
class PrivacyClaim:
    """A published (epsilon, delta)-DP claim, exactly as printed.

    Parameters
    ----------
    id:
        Stable identifier, ``"<paper-version>/<algorithm>"``, e.g. ``"jkt12-colt/pigd"``.
    epsilon, delta:
        The claimed privacy parameters. When the paper states the claim for any user-chosen
        epsilon, these are the representative values audited by default and ``parameter_range``
        says the claim is universally quantified over epsilon.
    provenance:
        Where the theorem is printed.
    calibration:
        The printed noise calibration, verbatim (e.g. ``"sigma^2 = 4 L^2 ... / (alpha^2 eps^2)"``).
    parameter_range:
        Name -> human description of the range over which the claim is stated
        (``{"alpha": "(0, inf)", "T": ">= 1"}``).
    neighbour, release:
        The neighbour relation and the released object.
    lemmas:
        Sensitivity statements the proof relies on.
    notes:
        Reading choices made where the printed text is ambiguous or garbled.
    formula:
        The claimed privacy as the paper states it, over its parameters, in plain text (e.g.
        ``"(3 eps, 2 delta)"``): the one statement of the claim that ``dpaudit list``, the CLI
        summary, the index and the verdict sentence print; each audited point gives an instance.
        Empty: the claim is the fixed ``(epsilon, delta)``.
    citation:
        The paper in words (authors, title, venue, version), printed in the index and paper pages
        instead of the file name.
    ranges:
        One :class:`ParameterRange` per grid parameter: the stated range, the paper's words and
        the grid values that audit its extremes and discrete jumps (checked against the grid by
        ``tests/test_parameter_ranges.py``). Empty for a user's claim that declares none.
    window:
        For window-DP claims (``release=Release.WINDOW``) the :class:`WindowScope`; ``None``
        otherwise. A window claim without an explicit scope gets the default (strict) one.
    range_readings:
        :class:`RangeReading` objects: narrower ranges of a parameter an auditor may read the
        claim under (a range printed only in a proposition the proof uses); each gets its own
        verdict beside the claim's, on the primary points inside it.
    """

    id: str
    epsilon: float
    delta: float
    provenance: Provenance
    calibration: str = ""
    parameter_range: Mapping[str, str] = field(default_factory=dict)
    neighbour: NeighbourRelation = NeighbourRelation.REPLACE_ONE
    release: Release = Release.FULL_SEQUENCE
    lemmas: tuple[SensitivityLemma, ...] = ()
    notes: str = ""
    formula: str = ""
    citation: str = ""
    window: WindowScope | None = None
    statement: str = ""
    readings: tuple[ReadingChoice, ...] = ()
    ranges: tuple[ParameterRange, ...] = ()
    range_readings: tuple[RangeReading, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or "/" not in self.id:
            raise ValueError(f"id must look like '<paper>/<algorithm>', got {self.id!r}")
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        object.__setattr__(self, "delta", check_delta(self.delta))
        object.__setattr__(self, "parameter_range", _freeze(self.parameter_range))
        object.__setattr__(self, "lemmas", tuple(self.lemmas))
        object.__setattr__(self, "readings", tuple(self.readings))
        for r in self.readings:
            if not isinstance(r, ReadingChoice):
                raise TypeError(f"readings must hold ReadingChoice objects, got {type(r).__name__}")
        object.__setattr__(self, "range_readings", tuple(self.range_readings))
        if any(not isinstance(r, RangeReading) for r in self.range_readings):
            raise TypeError("range_readings must hold RangeReading objects")
        object.__setattr__(self, "ranges", tuple(self.ranges))
        names = [r.name for r in self.ranges]
        if any(not isinstance(r, ParameterRange) for r in self.ranges):
            raise TypeError("ranges must hold ParameterRange objects")
        if len(set(names)) != len(names):
            raise ValueError(f"ranges declares a parameter twice: {names}")
        object.__setattr__(self, "neighbour", NeighbourRelation(self.neighbour))
        object.__setattr__(self, "release", Release(self.release))
        if self.window is not None and not isinstance(self.window, WindowScope):
            raise TypeError("window must be a WindowScope or None, got "
                            f"{type(self.window).__name__}")
        if self.release is Release.WINDOW and self.window is None:
            object.__setattr__(self, "window", WindowScope())
        if self.window is not None and self.release is not Release.WINDOW:
            raise ValueError("a WindowScope needs release=Release.WINDOW, got "
                             f"release={self.release.value!r}")

    def __hash__(self) -> int:
        return hash((self.id, self.epsilon, self.delta))

    @property
    def paper(self) -> str:
        return self.provenance.paper

    @property
    def privacy_statement(self) -> str:
        """The claimed privacy as stated: :attr:`formula`, or ``(epsilon, delta)`` when fixed."""
        return self.formula or f"({self.epsilon:.4g}, {self.delta:.3g})"

    def with_privacy(self, epsilon: float, delta: float | None = None) -> "PrivacyClaim":
        """The same claim instantiated at another (epsilon, delta) in its stated range."""
        from dataclasses import replace

        return replace(self, epsilon=epsilon, delta=self.delta if delta is None else delta)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "provenance": self.provenance.to_dict(),
            "calibration": self.calibration,
            "parameter_range": dict(self.parameter_range),
            "neighbour": self.neighbour.value,
            "release": self.release.value,
            "lemmas": [lem.to_dict() for lem in self.lemmas],
            "notes": self.notes,
            "formula": self.formula,
            "citation": self.citation,
        } | ({} if self.window is None else {"window": self.window.to_dict()}) | (
            {"statement": self.statement} if self.statement else {}) | (
            {"readings": [r.to_dict() for r in self.readings]} if self.readings else {}) | (
            {"ranges": [r.to_dict() for r in self.ranges]} if self.ranges else {}) | (
            {"range_readings": [r.to_dict() for r in self.range_readings]}
            if self.range_readings else {})

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "PrivacyClaim":
        return cls(
            id=d["id"], epsilon=d["epsilon"], delta=d["delta"],
            provenance=Provenance.from_dict(d["provenance"]),
            calibration=d.get("calibration", ""),
            parameter_range=d.get("parameter_range", {}),
            neighbour=NeighbourRelation(d.get("neighbour", "replace-one")),
            release=Release(d.get("release", "full-sequence")),
            lemmas=tuple(SensitivityLemma.from_dict(x) for x in d.get("lemmas", [])),
            notes=d.get("notes", ""),
            formula=d.get("formula", ""),
            citation=d.get("citation", ""),
            window=None if d.get("window") is None else WindowScope.from_dict(d["window"]),
            statement=d.get("statement", ""),
            readings=tuple(ReadingChoice.from_dict(r) for r in d.get("readings", [])),
            ranges=tuple(ParameterRange.from_dict(r) for r in d.get("ranges", [])),
            range_readings=tuple(RangeReading.from_dict(r) for r in d.get("range_readings", [])),
        )

    def range_of(self, name: str) -> ParameterRange | None:
        """The declared :class:`ParameterRange` of grid parameter ``name`` (``None``: undeclared)."""
        return next((r for r in self.ranges if r.name == name), None)
