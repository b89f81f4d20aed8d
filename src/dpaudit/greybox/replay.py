"""A numpy Generator that records every noise draw of a mechanism and can substitute the draws.

dpaudit passes every mechanism its own ``rng``, so a :class:`ReplayGenerator` passed there sees
each Gaussian and Laplace draw the code makes (method, line, location, scale, shape). It can
**record** (draw as a plain ``Generator`` would, and log), **substitute** (return
``loc + scale * z`` for supplied standardised ``z``; :mod:`dpaudit.greybox.derivation`) and
**trace** (return :class:`TracedNoise` arrays that record the value each draw is added to;
:mod:`dpaudit.greybox.noise_sites`). The replay must own every draw: other randomness is served
and listed in :attr:`ReplayGenerator.foreign` (no law is derived), and any access to the bits
behind the rng is listed in :attr:`ReplayGenerator.guarded` (such code can replay or cancel its
own noise, so neither a derived law nor a declared accountant describes it). The approach is
dp-recorder's (PETS 2026), applied to the numpy ``Generator`` interface.

The three modes, what is foreign and what is guarded: docs/greybox-notes.md#replay.
"""

from __future__ import annotations

import bisect
import sys
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from dpaudit.evidence_records import NoiseFamily

__all__ = ["Draw", "ReplayGenerator", "TracedNoise", "StateToken", "STANDARD_FAMILY",
           "GUARD_SENTENCE", "GENERATOR_SOURCE", "INTERNAL_MODULES", "describe_foreign",
           "Mechanism"]

#: What the grey box replays: a release ``mechanism(data, n, rng)`` returning the outputs of
#: ``n`` runs, all of its noise drawn from ``rng`` (where a :class:`ReplayGenerator` goes).
Mechanism = Callable[[Any, int, np.random.Generator], Any]

#: The name of the draw source of the rng dpaudit passes (``Draw.source``).
GENERATOR_SOURCE = "numpy Generator (the rng dpaudit passes)"

#: Modules whose frames are not the drawing code (a noise site is the first frame outside them).
INTERNAL_MODULES: set[str] = {__name__}

#: The standardised law of each substitutable method's ``z`` (``loc + scale * z``).
STANDARD_FAMILY = {"normal": NoiseFamily.GAUSSIAN, "standard_normal": NoiseFamily.GAUSSIAN,
                   "laplace": NoiseFamily.LAPLACE, "multivariate_normal": NoiseFamily.GAUSSIAN}

#: Generator methods that draw randomness dpaudit does not substitute (served, and listed).
_FOREIGN = ("random", "uniform", "integers", "choice", "permutation", "permuted", "shuffle",
            "binomial", "poisson", "exponential", "standard_exponential", "gamma",
            "standard_gamma", "beta", "chisquare", "geometric", "gumbel", "logistic",
            "lognormal", "multinomial", "negative_binomial",
            "noncentral_chisquare", "noncentral_f", "pareto", "rayleigh", "standard_cauchy",
            "standard_t", "triangular", "vonmises", "wald", "weibull", "zipf", "hypergeometric",
            "dirichlet", "logseries", "power", "f", "bytes")

#: Why an access to the bits behind the rng leaves the release undescribed (one clause).
GUARD_SENTENCE = ("code that reaches the bits behind the rng can replay, correlate or cancel its "
                  "own noise, so neither a law derived from its noise calls nor a declared "
                  "accountant describes it and only the black box can decide it")

#: A supplier of standardised draws: ``supply(offset, shape, family) -> array of that shape``
#: (``offset``: how many scalars were drawn before this call).
Supply = Callable[[int, tuple[int, ...], str], np.ndarray]

_BIT_GENERATOR = np.random.Generator.bit_generator  # the base class's descriptor
_SCALARS = (int, float, np.float64, np.int64)


@dataclass(frozen=True)
class Draw:
    """One noise call: ``method`` (``"normal"``, ``"standard_normal"``, ``"laplace"``), its standard
    ``family`` (``"gaussian"`` / ``"laplace"``), ``offset`` (scalars drawn before it), ``shape``,
    ``loc`` and ``scale`` (broadcast to ``shape``), ``site`` (``file:line`` of the calling code)
    and ``z`` (the standardised values returned)."""

    method: str
    family: NoiseFamily
    offset: int
    shape: tuple[int, ...]
    loc: np.ndarray
    scale: np.ndarray
    site: str
    z: np.ndarray
    #: The draw source that made the call (:mod:`dpaudit.greybox.sources`).
    source: str = GENERATOR_SOURCE

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))


@dataclass
class _Record:
    """What a generator, its copies and its spawned children log, shared between them.

    Each generator reads a *stream* (its own, or a copy's of its parent's) at a *cursor* (scalars
    drawn so far on that stream). A draw at ``(stream, cursor)`` is fresh the first time (it gets
    the next ``offset``, the index of its first standardised value) and a re-draw of the same
    values afterwards (a copy of the rng, or a state read and written back, replays them).
    """

    draws: list[Draw] = field(default_factory=list)
    foreign: list[str] = field(default_factory=list)
    guarded: list[str] = field(default_factory=list)
    added: list[tuple[int, float, np.ndarray]] = field(default_factory=list)
    #: ``(draw index, ufunc)`` of each non-linear operation applied to a traced draw.
    transforms: list[tuple[int, str]] = field(default_factory=list)
    offset: int = 0
    #: ``(stream, cursor) -> (offset, size, family)`` of every block drawn.
    blocks: dict[tuple[int, int], tuple[int, int, str]] = field(default_factory=dict)
    streams: int = 1
    state_reads: int = 0
    #: Scalar ``rng.integers`` values drawn (candidate seeds of another draw source).
    seed_candidates: list[int] = field(default_factory=list)
    #: ``(source, seed)`` of every seed a draw source was given in the release.
    seeds: list[tuple[str, int]] = field(default_factory=list)
    #: ``(source, seed)`` of the seeds drawn from the rng and consumed by a draw source.
    seeded: list[tuple[str, int]] = field(default_factory=list)
    #: ``(name, value, site)`` of every value the code marked public (``greybox.same``).
    public: list[tuple[str, Any, str]] = field(default_factory=list)
    #: The largest machine epsilon of a draw's dtype below float64 (0: every draw float64); a
    #: draw source that returns float32 noise sets it (its arithmetic then rounds at that level).
    precision: float = 0.0

    def place(self, stream: int, cursor: int, size: int, family: str) -> int | None:
        """The offset of a draw of ``size`` at ``(stream, cursor)``: a new one, the earlier
        block's for a re-draw, or None for a re-draw that does not line up with the first."""
        key = (stream, cursor)
        blocks = self.blocks
        end = self._ends.get(stream, 0)
        if cursor >= end:  # fresh ground (the common case): nothing to overlap
            self._starts.setdefault(stream, []).append(cursor)
            self._ends[stream] = cursor + size
        else:
            if key in blocks:
                offset, first, fam = blocks[key]
                return offset if (first, fam) == (size, family) else None
            starts = self._starts[stream]
            i = bisect.bisect_right(starts, cursor)
            if i > 0 and starts[i - 1] + blocks[(stream, starts[i - 1])][1] > cursor:
                return None
            if i < len(starts) and starts[i] < cursor + size:
                return None
            bisect.insort(starts, cursor)
            self._ends[stream] = max(end, cursor + size)
        offset = self.offset
        blocks[key] = (offset, size, family)
        self.offset = offset + size
        return offset

    def __post_init__(self) -> None:
        self._starts: dict[int, list[int]] = {}
        self._ends: dict[int, int] = {}


@dataclass(frozen=True)
class StateToken:
    """What ``rng.bit_generator.state`` returns under replay: the position in the replayed
    stream (and the real state, for recorded runs). Written back into a replaying generator of
    the same record it replays the same draws; it is not a numpy state, so a plain generator
    refuses it."""

    record: int
    stream: int
    cursor: int
    real: Any = field(repr=False)


class _Bits:
    """The bits behind a :class:`ReplayGenerator`: ``state`` is read and written as a
    :class:`StateToken` (a replay the record follows); any other attribute (``random_raw``,
    ``jumped``, ``advance``, ``capsule`` for a second ``Generator`` or ``RandomState``, ...) is
    served from the real bits and listed as a guarded access."""

    def __init__(self, owner: "ReplayGenerator") -> None:
        object.__setattr__(self, "_owner", owner)

    @property
    def state(self) -> StateToken:
        g = self._owner
        g._record.state_reads += 1
        return StateToken(id(g._record), g._stream, g._cursor, _BIT_GENERATOR.__get__(g).state)

    @state.setter
    def state(self, value: Any) -> None:
        g = self._owner
        if isinstance(value, StateToken) and value.record == id(g._record):
            g._stream, g._cursor = value.stream, value.cursor
            _BIT_GENERATOR.__get__(g).state = value.real
            return
        g._guard("a state written into bit_generator.state from outside the replay")
        _BIT_GENERATOR.__get__(g).state = value

    def __getattr__(self, name: str) -> Any:
        g = self._owner
        g._guard(f"bit_generator.{name}")
        return getattr(_BIT_GENERATOR.__get__(g), name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "state":
            type(self).state.fset(self, value)  # type: ignore[attr-defined]
            return
        g = self._owner
        g._guard(f"bit_generator.{name} written")
        setattr(_BIT_GENERATOR.__get__(g), name, value)


def describe_foreign(entry: str) -> str:
    """A foreign entry in words: a bare name is a method of the rng (``rng.uniform``); a draw
    source lists its own phrase (``np.random.random_sample (numpy's global RNG)``)."""
    return f"rng.{entry}" if entry.isidentifier() else entry


def _caller_site() -> str:
    frame = sys._getframe(2)  # the frame that called the Generator method
    while frame is not None and frame.f_globals.get("__name__") in INTERNAL_MODULES:
        frame = frame.f_back
    if frame is None:
        return "<unknown>"
    return f"{frame.f_code.co_filename}:{frame.f_lineno}"


#: Ufuncs that keep a draw linear in the noise (sums, rescaling, matrix products).
_LINEAR = (np.add, np.subtract, np.multiply, np.true_divide, np.negative, np.positive,
           np.matmul)


class TracedNoise(np.ndarray):
    """A noise draw that records what it is added to (``np.add`` / ``np.subtract``) and follows
    scalar rescaling (``c * z`` keeps the trace with ``scale * |c|``). The first arithmetic result
    is a plain ndarray: tracing stops there."""

    _draw_index: int
    _factor: float
    _log: list
    _transforms: list

    def __array_finalize__(self, obj: Any) -> None:
        self._draw_index = getattr(obj, "_draw_index", -1)
        self._factor = getattr(obj, "_factor", 1.0)
        self._log = getattr(obj, "_log", [])
        self._transforms = getattr(obj, "_transforms", [])

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        traced = [x for x in inputs if isinstance(x, TracedNoise)]
        plain = tuple(np.asarray(x) if isinstance(x, TracedNoise) else x for x in inputs)
        if "out" in kwargs:
            kwargs["out"] = tuple(np.asarray(o) if isinstance(o, TracedNoise) else o
                                  for o in kwargs["out"])
        result = getattr(ufunc, method)(*plain, **kwargs)
        if ufunc not in _LINEAR or method != "__call__" or (
                ufunc in (np.multiply, np.true_divide, np.matmul) and len(traced) > 1) or (
                ufunc is np.true_divide and isinstance(inputs[-1], TracedNoise)):
            me = traced[0]
            me._transforms.append((me._draw_index, f"{ufunc.__name__}"
                                   + ("" if method == "__call__" else f".{method}")))
        if method != "__call__" or len(traced) != 1 or len(inputs) != 2:
            return result
        me = traced[0]
        other = inputs[1] if inputs[0] is me else inputs[0]
        if ufunc in (np.add, np.subtract):
            value = np.asarray(other, dtype=np.float64)
            me._log.append((me._draw_index, me._factor, value.copy()))
        elif ufunc is np.multiply and np.ndim(other) == 0 and isinstance(result, np.ndarray):
            out = result.view(TracedNoise)
            out._draw_index, out._log = me._draw_index, me._log
            out._transforms = me._transforms
            out._factor = me._factor * abs(float(other))
            return out
        return result


class ReplayGenerator(np.random.Generator):
    """A ``numpy.random.Generator`` (``isinstance`` holds) whose ``normal``, ``standard_normal``,
    ``laplace`` and ``multivariate_normal`` draws are logged in :attr:`draws` and, when ``supply``
    is given, replaced by ``loc + scale * supply(offset, shape, family)``; ``trace=True`` returns
    :class:`TracedNoise` draws whose additions are logged in :attr:`added` as ``(draw index,
    factor, value)``.

    Parameters
    ----------
    seed
        An integer seed (a ``PCG64`` is made from it) or a bit generator to draw from.
    supply
        Standardised draws to substitute (None: record real draws).
    trace
        Return traced draws (the noise-site check).
    """

    def __init__(self, seed: int | np.random.BitGenerator, supply: Supply | None = None,
                 trace: bool = False, *, _record: _Record | None = None) -> None:
        bits = seed if isinstance(seed, np.random.BitGenerator) else np.random.PCG64(seed)
        super().__init__(bits)
        self.supply = supply
        self.trace = trace
        self._record = _Record() if _record is None else _record
        self._stream = 0
        self._cursor = 0
        self._side: np.random.Generator | None = None

    # -- the record ------------------------------------------------------------------------

    @property
    def draws(self) -> list[Draw]:
        """The noise calls, in order (children's included)."""
        return self._record.draws

    @property
    def foreign(self) -> list[str]:
        """Randomness served but not substituted (a method name, or a guarded access)."""
        return self._record.foreign

    @property
    def guarded(self) -> list[str]:
        """Accesses to the bits behind the rng (also listed in :attr:`foreign`)."""
        return self._record.guarded

    @property
    def added(self) -> list[tuple[int, float, np.ndarray]]:
        """Traced additions ``(draw index, factor, value)``."""
        return self._record.added

    @property
    def transforms(self) -> list[tuple[int, str]]:
        """Non-linear operations applied to traced draws, ``(draw index, ufunc name)``."""
        return self._record.transforms

    @property
    def state_reads(self) -> int:
        """How often ``bit_generator.state`` was read (a replayed position each time)."""
        return self._record.state_reads

    @property
    def seeded(self) -> list[tuple[str, int]]:
        """``(source, seed)`` of each ``rng.integers`` value the release used only to seed a
        draw source (:mod:`dpaudit.greybox.sources`)."""
        return self._record.seeded

    @property
    def public(self) -> list[tuple[str, Any, str]]:
        """``(name, value, site)`` of each value the code marked public (``greybox.same``)."""
        return self._record.public

    @property
    def scalars(self) -> int:
        """Distinct standardised values drawn so far (a re-draw adds none)."""
        return self._record.offset

    def _guard(self, what: str) -> None:
        self._record.guarded.append(what)
        self._record.foreign.append(what)

    def bits_state(self) -> Any:
        """The bit generator's state, read without counting as the code's access (for the
        derivation's check that substituted runs consume no bits)."""
        return _BIT_GENERATOR.__get__(self).state

    # -- guarded access to the bits ----------------------------------------------------------

    @property  # type: ignore[override]
    def bit_generator(self) -> Any:
        """The bits behind the rng, behind a guard: its ``state`` is a replayed position (a
        :class:`StateToken`); anything else is served and listed as a guarded access."""
        return _Bits(self)

    def _child(self, bits: np.random.BitGenerator, stream: int, cursor: int
               ) -> "ReplayGenerator":
        child = ReplayGenerator(bits, self.supply, self.trace, _record=self._record)
        child._stream, child._cursor = stream, cursor
        return child

    def __repr__(self) -> str:
        return f"ReplayGenerator({type(_BIT_GENERATOR.__get__(self)).__name__})"

    __str__ = __repr__

    def __getstate__(self) -> Any:
        self._guard("a copy of its state (__getstate__)")
        return np.random.Generator.__getstate__(self)

    def __setstate__(self, state: Any) -> None:
        self._guard("a write of its state (__setstate__)")
        np.random.Generator.__setstate__(self, state)

    def __reduce__(self) -> Any:
        self._guard("a copy of the rng (copy or pickle)")
        return np.random.Generator.__reduce__(self)

    def __copy__(self) -> "ReplayGenerator":
        """A replaying copy: it re-draws this generator's next draws (same record)."""
        return self._child(_copied_bits(self), self._stream, self._cursor)

    def __deepcopy__(self, memo: Any) -> "ReplayGenerator":
        return self.__copy__()

    def spawn(self, n_children: int) -> list["ReplayGenerator"]:  # type: ignore[override]
        """Replaying children (independent streams from the seed sequence) that log their
        draws, substituted or recorded, into this generator's record."""
        bits = _BIT_GENERATOR.__get__(self)
        rec = self._record
        out = []
        for ss in bits.seed_seq.spawn(n_children):
            out.append(self._child(type(bits)(ss), rec.streams, 0))
            rec.streams += 1
        return out

    # -- noise calls -------------------------------------------------------------------------

    def _place(self, size: int, family: str) -> int:
        """The offset of the next draw (fresh or a re-draw), advancing the cursor."""
        offset = self._record.place(self._stream, self._cursor, size, family)
        if offset is None:
            self._guard("a re-draw from a copied state that does not line up with the first "
                        "draw")
            offset = self._record.offset
            self._record.offset += size
        self._cursor += size
        return offset

    def _log(self, method: str, family: str, shape: tuple[int, ...], loc: np.ndarray,
             scale: np.ndarray, site: str, z: np.ndarray, value: Any, offset: int,
             source: str = GENERATOR_SOURCE) -> Any:
        rec = self._record
        rec.draws.append(Draw(method, family, offset, shape, loc, scale, site, z, source))
        if self.trace:
            if method != "multivariate_normal" and np.any(loc != 0):
                # rng.normal(value, scale): the draw is added to its loc
                rec.added.append((len(rec.draws) - 1, 1.0, np.array(loc)))
            out = np.array(value, dtype=np.float64).view(TracedNoise)
            out._draw_index, out._factor, out._log = len(rec.draws) - 1, 1.0, rec.added
            out._transforms = rec.transforms
            return out
        return value

    def source_draw(self, source: str, method: str, loc: Any, scale: Any, size: Any,
                    real: Callable[[], Any]) -> Any:
        """A noise call of another draw source (:mod:`dpaudit.greybox.sources`) routed through
        this replay: recorded, substituted or traced like the rng's own, named ``source``;
        ``real()`` makes the real draw (record mode)."""
        return self._draw(method, loc, scale, size, real, source)

    def _draw(self, method: str, loc: Any, scale: Any, size: Any, real: Callable[[], Any],
              source: str = GENERATOR_SOURCE) -> Any:
        family = STANDARD_FAMILY[method]
        if size is None and not self.trace and type(loc) in _SCALARS and type(scale) in _SCALARS:
            return self._scalar_draw(method, family, float(loc), float(scale), real, source)
        loc_a = np.asarray(loc, dtype=np.float64)
        scale_a = np.asarray(scale, dtype=np.float64)
        if size is None:
            shape = np.broadcast_shapes(loc_a.shape, scale_a.shape)
        else:
            shape = tuple(int(s) for s in np.atleast_1d(size))
        site = _caller_site()
        offset = self._place(int(np.prod(shape, dtype=np.int64)), family)
        if self.supply is None:
            value = np.asarray(real(), dtype=np.float64)
            if scale_a.ndim == 0 and loc_a.ndim == 0:
                z = ((value - float(loc_a)) / float(scale_a) if scale_a != 0
                     else np.zeros(shape))
                z = np.array(z, dtype=np.float64).reshape(shape)
            else:
                with np.errstate(divide="ignore", invalid="ignore"):
                    z = np.where(scale_a != 0, (value - loc_a) / np.where(scale_a != 0, scale_a,
                                                                          1), 0.0)
                z = np.broadcast_to(z, shape).copy()
        else:
            z = np.asarray(self.supply(offset, shape, family), dtype=np.float64)
            if z.shape != shape:
                raise ValueError(f"supply returned shape {z.shape} for a draw of shape {shape}")
            value = loc_a + scale_a * z
        loc_b = np.array(np.broadcast_to(loc_a, shape))  # copies: the code may reuse its arrays
        scale_b = np.array(np.broadcast_to(scale_a, shape))
        out = self._log(method, family, shape, loc_b, scale_b, site, z, value, offset, source)
        if self.trace:
            return out
        return value if size is not None or np.ndim(value) else float(value)

    def _scalar_draw(self, method: str, family: str, loc: float, scale: float,
                     real: Callable[[], Any], source: str = GENERATOR_SOURCE) -> float:
        """The common case of one scalar draw at a scalar location and scale, without the
        array bookkeeping (the replay's cost per draw is what makes long loops affordable)."""
        site = _caller_site()
        offset = self._place(1, family)
        if self.supply is None:
            value = float(real())
            z = (value - loc) / scale if scale != 0 else 0.0
        else:
            z = float(self.supply(offset, (), family))
            value = loc + scale * z
        f64 = np.float64
        self._record.draws.append(Draw(method, family, offset, (), f64(loc), f64(scale), site,
                                       f64(z), source))
        return value

    def integers(self, low: Any, high: Any = None, size: Any = None, dtype: Any = np.int64,
                 endpoint: bool = False) -> Any:
        """``Generator.integers``, served and listed in ``foreign``; a scalar draw is also kept
        as a candidate seed: when the release passes it to a draw source's seed (glue that only
        seeds numpy's global RNG, a ``RandomState`` or a ``Generator`` from the rng), the source
        owns the randomness it drives and the draw is taken off ``foreign``
        (:func:`dpaudit.greybox.sources.intercepting`). With draws substituted, a scalar draw is
        served from a side stream of the seed, so that the bits behind the rng stay untouched
        (the check that a substituted run consumes none keeps its meaning)."""
        if self.supply is not None and size is None:
            if self._side is None:
                bits = _BIT_GENERATOR.__get__(self)
                ss = getattr(bits, "seed_seq", None)
                key = ss.generate_state(4) if hasattr(ss, "generate_state") else [0]
                self._side = np.random.Generator(np.random.PCG64([0x5EED, self._stream, *key]))
            value = self._side.integers(low, high, size, dtype, endpoint)
        else:
            value = np.random.Generator.integers(self, low, high, size, dtype, endpoint)
        self.foreign.append("integers")
        if size is None and np.ndim(value) == 0:
            self._record.seed_candidates.append(int(value))
        return value

    def normal(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None) -> Any:  # noqa: D102
        return self._draw("normal", loc, scale, size,
                          lambda: super(ReplayGenerator, self).normal(loc, scale, size))

    def standard_normal(self, size: Any = None, dtype: Any = np.float64,
                        out: Any = None) -> Any:  # noqa: D102
        if out is not None or np.dtype(dtype) != np.float64:
            self.foreign.append("standard_normal(out=/dtype=)")
            return super().standard_normal(size, dtype=dtype, out=out)
        return self._draw("standard_normal", 0.0, 1.0, size,
                          lambda: super(ReplayGenerator, self).standard_normal(size))

    def laplace(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None) -> Any:  # noqa: D102
        return self._draw("laplace", loc, scale, size,
                          lambda: super(ReplayGenerator, self).laplace(loc, scale, size))

    def multivariate_normal(self, mean: Any, cov: Any, size: Any = None,  # noqa: D417
                            check_valid: str = "warn", tol: float = 1e-8, *,
                            method: str = "svd") -> Any:
        """``mean + z @ F`` with ``z`` standard normal and ``F = sqrt(s) V^T`` from the SVD of
        ``cov`` (numpy's own construction for ``method="svd"``); ``z`` is recorded or
        substituted like any other draw."""
        if method != "svd":
            self.foreign.append(f"multivariate_normal(method={method!r})")
            return np.random.Generator.multivariate_normal(self, mean, cov, size, check_valid,
                                                           tol, method=method)
        mean_a = np.asarray(mean, dtype=np.float64)
        cov_a = np.asarray(cov, dtype=np.float64)
        _, s, vh = np.linalg.svd(cov_a)
        factor = np.sqrt(s)[:, None] * vh
        lead = () if size is None else tuple(int(x) for x in np.atleast_1d(size))
        shape = lead + (mean_a.shape[-1],)
        site = _caller_site()
        offset = self._place(int(np.prod(shape, dtype=np.int64)), NoiseFamily.GAUSSIAN)
        if self.supply is None:
            z = np.asarray(np.random.Generator.standard_normal(self, shape), dtype=np.float64)
        else:
            z = np.asarray(self.supply(offset, shape, NoiseFamily.GAUSSIAN), dtype=np.float64)
            if z.shape != shape:
                raise ValueError(f"supply returned shape {z.shape} for a draw of shape {shape}")
        value = mean_a + z @ factor
        return self._log("multivariate_normal", NoiseFamily.GAUSSIAN, shape,
                         np.broadcast_to(mean_a, shape),
                         np.broadcast_to(np.sqrt(np.diag(cov_a)), shape), site, z, value,
                         offset)


def _copied_bits(g: ReplayGenerator) -> np.random.BitGenerator:
    bits = _BIT_GENERATOR.__get__(g)
    copy = type(bits)()
    copy.state = bits.state
    return copy


def _foreign_method(name: str) -> Callable[..., Any]:
    def method(self: ReplayGenerator, *args: Any, **kwargs: Any) -> Any:
        self.foreign.append(name)
        return getattr(np.random.Generator, name)(self, *args, **kwargs)
    method.__name__ = name
    method.__doc__ = f"``Generator.{name}``, served and listed in ``foreign``."
    return method


for _name in _FOREIGN:
    if _name == "integers":
        continue
    if hasattr(np.random.Generator, _name):
        setattr(ReplayGenerator, _name, _foreign_method(_name))
