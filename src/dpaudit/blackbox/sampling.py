"""Drawing the runs of a mechanism: chunked output streams with their checks, input checks and the
memory budget of an audit.

A mechanism is called as ``mechanism(data, n, rng)`` and must return an array whose leading axis
has length ``n`` (one row per independent run); :class:`Stream` draws the runs of one input in
chunks, each chunk from its own spawned generator, and rejects outputs that cannot be audited
(wrong shape, NaN, None, complex values) with a message naming the mechanism and the run.
"""

from __future__ import annotations

import decimal
import fractions
import inspect
import math
import numbers
import os
import sys
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Literal, Sequence

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    pass

from dpaudit.blackbox.statistics import (outcome_keys)
from dpaudit.release_outputs import is_structured, plain_arrays, release_table
from dpaudit.execution.executors import reseed_global_state


#: Rows of the first chunk of each input (the probe that decides how outputs are scored).
PROBE_ROWS = 4_096
#: Default cap on the rows and bytes of one chunk of outputs.
MAX_CHUNK_ROWS = 1 << 17
MAX_CHUNK_BYTES = 1 << 23
#: Numeric outputs with at most this many distinct values in the probe are treated as discrete.
MAX_DISCRETE_OUTCOMES = 256

OutputKind = Literal["auto", "discrete", "continuous"]

class _NotGiven:
    """Default of ``data0``/``data1``: tells an omitted input from an input that is ``None``."""

    def __repr__(self) -> str:
        return "<required unless pairs= is given>"


def callable_name(fn: Any) -> str:
    """A short name of a user callable for error messages (its qualified name or its class)."""
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None)
    if not isinstance(name, str):
        name = type(fn).__name__
    return name


#: Bytes of memory the engine holds per training run per input (the selection split's scores,
#: their concatenation, the sort and the threshold sweep), a generous upper estimate.
BYTES_PER_TRAINING_RUN = 64


def available_memory_bytes() -> int | None:
    """Memory this process can still use: ``MemAvailable`` of ``/proc/meminfo`` (Linux), else
    free physical pages; None when unknown."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return None


def check_memory_budget(samples: int, n_train: int, available: int | None = None) -> None:
    """Refuse an audit whose training split cannot fit in memory (ValueError naming ``samples``).

    The test split is streamed in chunks and costs no memory per run; the selection split's scores
    are held to choose the event, about :data:`BYTES_PER_TRAINING_RUN` bytes per run and input,
    plus one chunk of outputs. With the default cap on the training split
    (:data:`~dpaudit.blackbox.empirical_audit.MAX_TRAIN_SAMPLES`) every ``samples`` passes; only an
    uncapped or explicitly huge training split (``max_train_samples=None``, a huge
    ``pilot_samples``) can be refused.
    """
    if available is None:
        available = available_memory_bytes()
    if available is None:
        return
    need = 2 * n_train * BYTES_PER_TRAINING_RUN + 2 * MAX_CHUNK_BYTES
    if need > available:
        raise ValueError(
            f"samples={samples} cannot run on this machine: its training split ({n_train} runs "
            f"per input) needs about {need / 2**30:.3g} GiB of memory and {available / 2**30:.3g} "
            f"GiB are available; lower samples (or train_fraction)")


def _check_arity(fn: Callable[..., Any], param: str, n_args: int, expected: str) -> None:
    """TypeError when ``fn`` cannot be called with ``n_args`` positional arguments."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):  # builtins without a signature: find out when called
        return
    try:
        sig.bind(*([None] * n_args))
    except TypeError:
        raise TypeError(f"{param} must be callable as {expected}; {callable_name(fn)}{sig} does "
                        f"not take {n_args} positional argument{'s' if n_args > 1 else ''}"
                        ) from None


def _exact_fraction(value: Any) -> Any:
    """The exact value of a real number: an ``int`` when it is integral, else a ``Fraction``."""
    if isinstance(value, (bool, np.bool_)):
        return int(value)
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, fractions.Fraction):
        frac = value
    elif isinstance(value, decimal.Decimal):
        frac = fractions.Fraction(value)
    else:
        frac = fractions.Fraction(*value.as_integer_ratio())
    return frac.numerator if frac.denominator == 1 else frac


_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


def check_callables(mechanism: Any, statistic: Any) -> None:
    """TypeError unless ``mechanism(data, n, rng)`` and (when given) ``statistic(outputs)`` are
    callable with those arguments (shared by ``audit`` and ``sequential_audit``)."""
    if not callable(mechanism):
        raise TypeError(f"mechanism must be callable as mechanism(data, n, rng), "
                        f"got {type(mechanism).__name__}")
    if statistic is not None and not callable(statistic):
        raise TypeError(f"statistic must be callable as statistic(outputs) -> scores, "
                        f"got {type(statistic).__name__}")
    _check_arity(mechanism, "mechanism", 3,
                 "mechanism(data, n, rng) -> array of the outputs of n runs (leading axis n)")
    if statistic is not None:
        _check_arity(statistic, "statistic", 1,
                     "statistic(outputs) -> one real score per run (shape (n,))")


def _coerce_objects(arr: np.ndarray, who: str, first_run: int, exact: bool = False,
                    seen: set[str] | None = None) -> np.ndarray:
    """Object outputs: numbers become a numeric array; None/NaN/inf anywhere is an error.

    Object arrays of numbers would otherwise be scored as discrete outcomes (every float its own
    outcome) and give a meaningless bound; ``None`` or NaN among them would be counted as outcomes.
    Other objects (strings, tuples) stay discrete outcomes.

    Numbers become int64 or float64 only when *every* value is exactly representable there
    (``2**64`` and ``2**64 + 1``, ``Fraction(1, 3)`` and ``1/3 + 1e-30``, Decimals with
    more digits than a double were merged into one outcome, hiding a violation); a Decimal that is
    the shortest decimal spelling of a double (``Decimal(str(x))``) is read as that double, which
    is one-to-one, unless plain floats sit beside it. Otherwise they
    stay an object array of exact values (``int`` or ``Fraction``, so that equal numbers of
    different types are one outcome and different numbers are never merged), audited as discrete
    outcomes; so do integers outside int64, and all numbers when ``exact`` (a stream whose other
    input needed exact values: :func:`to_exact_objects`).
    """
    n = arr.shape[0]
    flat = arr.reshape(n, -1)
    numeric = True
    integral = True
    fits_int64 = True
    exact_float = True
    plain_float = rounded_decimal = False
    for run, row in enumerate(flat):
        for value in row:
            if value is None:
                raise ValueError(f"{who} returned None in run {first_run + run} (row {run} of this "
                                 "call); outputs must be finite numbers or discrete labels")
            if isinstance(value, (bool, np.bool_)):
                continue
            if isinstance(value, numbers.Integral):
                v = int(value)
                if not _INT64_MIN <= v <= _INT64_MAX:
                    fits_int64 = False
                if exact_float:
                    try:
                        exact_float = float(v) == v
                    except OverflowError:
                        exact_float = False
                continue
            integral = False
            if isinstance(value, (numbers.Real, decimal.Decimal)):
                try:
                    finite = math.isfinite(float(value))
                except OverflowError:  # a huge Fraction or Decimal: finite, not a double
                    finite = value == value and not (isinstance(value, decimal.Decimal)
                                                     and value.is_infinite())
                if not finite:
                    raise ValueError(f"{who} returned {float(value)} in run {first_run + run} "
                                     f"(row {run} of this call); outputs must be finite numbers "
                                     f"({_NON_FINITE_HINT})")
                if isinstance(value, (float, np.floating)) and not isinstance(value,
                                                                               np.longdouble):
                    plain_float = True
                elif exact_float:
                    try:
                        if float(value) == value:
                            plain_float = plain_float or not isinstance(value, decimal.Decimal)
                        elif (isinstance(value, decimal.Decimal)
                              and decimal.Decimal(repr(float(value))) == value):
                            rounded_decimal = True  # Decimal(str(x)) of a double x: read as x
                        else:
                            exact_float = False
                    except OverflowError:
                        exact_float = False
                continue
            numeric = False
    if not numeric:
        return arr
    if not exact and integral and fits_int64:
        return arr.astype(np.int64)
    if rounded_decimal and plain_float:  # Decimal("0.1") and the double 0.1 would merge
        exact_float = False
    if seen is not None and numeric and not integral and exact_float and not exact:
        # Remembered across chunks and both inputs (a stream's ``seen``): Decimals read as
        # doubles in one chunk and doubles in another would merge Decimal("0.1") and 0.1.
        seen.update(k for k, on in (("rounded-decimal", rounded_decimal),
                                    ("plain-float", plain_float)) if on)
        if {"rounded-decimal", "plain-float"} <= seen:
            raise TypeError(f"{who} returned Decimals and floats (by run {first_run + n - 1}); "
                            "a Decimal such as Decimal('0.1') and the double 0.1 are different "
                            "numbers that would be counted as one outcome: return one type")
    if not exact and exact_float and not integral:
        return arr.astype(np.float64)
    return to_exact_objects(arr)


def to_exact_objects(arr: np.ndarray) -> np.ndarray:
    """A numeric (or object) array of real numbers as an object array of exact ``int`` and
    ``Fraction`` values (see :func:`_coerce_objects`)."""
    n = arr.shape[0]
    flat = arr.reshape(n, -1)
    out = np.empty(arr.shape, dtype=object)
    out_flat = out.reshape(n, -1)
    for run, row in enumerate(flat):
        for k, value in enumerate(row):
            out_flat[run, k] = _exact_fraction(value.item() if isinstance(value, np.generic)
                                               else value)
    return out


def harmonize_exact(streams: Sequence[Any], probes: list[np.ndarray]) -> None:
    """When one input's object outputs had to stay exact objects and the other's fitted int64 or
    float64, keep the other's exact too (in place), so that the two inputs' outcomes compare."""
    kinds = [p.dtype.kind for p in probes]
    if kinds.count("O") != 1:
        return
    j = 1 - kinds.index("O")
    if kinds[j] in "biuf" and streams[j].raw_objects:
        streams[j].exact_objects = True
        probes[j] = to_exact_objects(probes[j])
        streams[j].dtype = probes[j].dtype


def check_comparable(mechanism: Any, probes: Sequence[np.ndarray]) -> None:
    """ValueError unless the first outputs on data0 and data1 have one row shape and one kind of
    dtype (after :func:`harmonize_exact`): events are sets of outputs, counted on both inputs."""
    if probes[0].shape[1:] != probes[1].shape[1:] or probes[0].dtype.kind != probes[1].dtype.kind:
        raise ValueError(f"mechanism {callable_name(mechanism)}: its outputs on data0 (shape "
                         f"{probes[0].shape[1:]}, dtype "
                         f"{probes[0].dtype}) and data1 (shape {probes[1].shape[1:]}, dtype "
                         f"{probes[1].dtype}) differ in shape or type; they must be comparable")


def _check_strings(out: Any, arr: np.ndarray, who: str, first_run: int) -> None:
    """Labels ending in NUL characters given as a list: numpy drops trailing NULs when it builds a
    string array, which would merge ``"x"`` and ``"x\\x00"`` into one outcome."""
    if isinstance(out, np.ndarray) or arr.dtype.kind not in "US":
        return
    objs = np.asarray(out, dtype=object).reshape(arr.shape[0], -1)
    for run, row in enumerate(objs):
        for value in row:
            if isinstance(value, (str, bytes)) and value.endswith("\x00" if isinstance(value, str)
                                                                   else b"\x00"):
                raise ValueError(f"{who} returned the label {value!r} in run {first_run + run} "
                                 f"(row {run} of this call), which ends in a NUL character: "
                                 "numpy string arrays drop trailing NULs, so it would be merged "
                                 "with another label; return labels without trailing NULs, or "
                                 "an object array")


#: How to release a missing or unbounded entry instead of NaN/inf (a NaN is not an outcome
#: that can be compared, and infinities break every learned statistic).
_NON_FINITE_HINT = ("to release a missing entry (padding of a variable-length output) or an "
                    "unbounded one, use a finite sentinel outside the release's range, e.g. -1 "
                    "or a large finite value")

#: Kinds of outputs that must not change between the calls of one audit (numpy dtype kinds).
_KIND_CLASS = {"b": "boolean", "i": "integer", "u": "integer", "f": "floating-point",
               "U": "string", "S": "bytes", "O": "object", "V": "structured"}


NOT_GIVEN: Any = _NotGiven()

# ----------------------------------------------------------------------------------------------
# Sampling
# ----------------------------------------------------------------------------------------------

@dataclass
class Stream:
    """The runs on one input: chunks drawn in order, each from its own spawned generator."""

    mechanism: Callable[..., Any]
    data: Any
    label: int
    seed_seq: np.random.SeedSequence
    clock: list[float]
    row_shape: tuple[int, ...] | None = None
    dtype: np.dtype | None = None
    drawn: int = 0  # runs drawn so far on this input (run indices in messages count from 0)
    #: Reseed numpy's and Python's global RNGs from each chunk's seed (a mechanism that ignores
    #: its rng; dpaudit.blackbox.rng_probe).
    reseed_globals: bool = False
    raw_objects: bool = False  # the mechanism returned Python objects (coerced to numbers)
    #: Kinds of object numbers read as doubles so far (shared by the two inputs' streams).
    seen: set = field(default_factory=set)
    exact_objects: bool = False  # keep numbers as exact objects (the other input needed them)
    #: A structured release (dicts, per-run records, tuples of arrays): how its first call was
    #: read and the names of its columns (dpaudit.release_outputs); None for plain arrays.
    layout: str | None = None
    columns: tuple[str, ...] | None = None
    #: The dtype of the release's own first output (numpy, jax or torch array), by name
    #: (``"float32"``), before any conversion; None for lists, scalars and structured outputs.
    release_dtype: str | None = None

    def draw(self, n: int) -> np.ndarray:
        child = self.seed_seq.spawn(1)[0]
        if self.reseed_globals:
            reseed_global_state(child)
        rng = np.random.default_rng(child)
        t0 = time.perf_counter()
        out = self.mechanism(self.data, n, rng)
        self.clock[0] += time.perf_counter() - t0
        if self.release_dtype is None and getattr(out, "dtype", None) is not None:
            self.release_dtype = str(out.dtype).replace("torch.", "")
        arr = self._check(out, n)
        self.drawn += n
        return arr

    def _check(self, out: Any, n: int) -> np.ndarray:
        name = callable_name(self.mechanism)
        who = f"mechanism {name}(data{self.label}, n={n}, rng)"
        out = plain_arrays(out)  # torch tensors and jax arrays as numpy
        if self.layout is not None or is_structured(out, n):
            # Dicts, per-run records, tuples of arrays: their numbers, one named column each
            # (an object array of dicts would make every run its own outcome: no power).
            table = release_table(out, n, layout=self.layout, who=who)
            if self.columns is not None and table.columns != self.columns:
                raise TypeError(f"{who} released the columns {list(table.columns)[:8]}..., "
                                f"earlier calls {list(self.columns)[:8]}...; every call must "
                                "release the same fields in the same shapes")
            self.layout, self.columns = table.layout, table.columns
            out = table.values
        try:
            arr = np.asarray(out)
        except (TypeError, ValueError, OverflowError) as exc:
            ragged = " (its rows differ in length: pad them to one length with a finite " \
                     "sentinel such as -1)" if "inhomogeneous" in str(exc) else ""
            raise TypeError(f"{who} must return an array-like with leading axis n{ragged}"
                            ) from exc
        if (n == 1 and self.row_shape is not None and arr.shape != (1,) + self.row_shape
                and arr.size == math.prod(self.row_shape)):
            # One run whose axes of length 1 were squeezed away (``out.squeeze()`` in the
            # mechanism: shape () or (d,) for n = 1): its values are that run's row, whose shape
            # earlier calls fixed. A chunk of one run happens at the end of a split.
            arr = arr.reshape((1,) + self.row_shape)
        if arr.ndim == 0 or arr.shape[0] != n:
            got = (f"a scalar ({type(out).__name__})" if arr.ndim == 0
                   else f"leading axis {arr.shape[0]}")
            raise ValueError(f"{who} returned {got} (shape {arr.shape}); it must return an array "
                             f"whose leading axis has length n = {n}, one row per independent run")
        if arr.size == 0:
            raise ValueError(f"{who} returned rows of shape {arr.shape[1:]} with no values; every "
                             "run must output at least one value")
        if arr.dtype.kind == "f" and arr.dtype.itemsize > 8:
            # long double: more precision than the float64 outcomes are keyed on
            self.raw_objects = True  # like object numbers: may be kept exact (harmonize_exact)
            as64 = arr.astype(np.float64)
            exact64 = np.array_equal(as64, arr) or not np.isfinite(arr).all()
            arr = as64 if exact64 and not self.exact_objects else to_exact_objects(arr)
        if arr.dtype.kind == "V":
            raise TypeError(f"{who} returned structured outputs (dtype {arr.dtype}); return a "
                            "plain array instead: the numeric fields side by side (e.g. "
                            "np.column_stack([out[f] for f in out.dtype.names])), or discrete "
                            "labels")
        if arr.dtype.kind == "c":
            raise TypeError(f"{who} returned complex outputs; only real, integer, boolean, string "
                            "or object outputs can be audited")
        if arr.dtype.kind == "O":
            self.raw_objects = True
            arr = _coerce_objects(arr, who, self.drawn, self.exact_objects, self.seen)
            if (arr.dtype.kind == "i" and self.dtype is not None and self.dtype.kind == "f"
                    and np.abs(arr).max() <= 2**53):  # object numbers that happen to be integral
                arr = arr.astype(np.float64)
        _check_strings(out, arr, who, self.drawn)
        if arr.dtype.kind == "f":
            finite = np.isfinite(arr)
            if not finite.all():
                run = int(np.argwhere(~finite)[0][0])
                value = arr.reshape(n, -1)[run][~finite.reshape(n, -1)[run]][0]
                raise ValueError(f"{who} returned {value} in run {self.drawn + run} (row {run} of "
                                 f"this call); outputs must be finite numbers ({_NON_FINITE_HINT})")
        if self.row_shape is None:
            self.row_shape, self.dtype = arr.shape[1:], arr.dtype
        elif arr.shape[1:] != self.row_shape:
            raise ValueError(f"{who} returned rows of shape {arr.shape[1:]}, earlier calls "
                             f"returned {self.row_shape}; every run must have the same output "
                             "shape")
        elif (self.dtype is not None and _KIND_CLASS.get(arr.dtype.kind, arr.dtype.kind)
              != _KIND_CLASS.get(self.dtype.kind, self.dtype.kind)):
            was = _KIND_CLASS.get(self.dtype.kind, str(self.dtype))
            now = _KIND_CLASS.get(arr.dtype.kind, str(arr.dtype))
            raise TypeError(f"{who} returned {now} outputs (dtype {arr.dtype}) in runs "
                            f"{self.drawn}..{self.drawn + n - 1}; its earlier calls returned {was} "
                            f"outputs (dtype {self.dtype}); every run must have the same output "
                            "type (numbers too large or too precise for int64/float64 are kept "
                            "as exact objects)")
        return arr

    def chunks(self, total: int, chunk_rows: int):
        done = 0
        while done < total:
            m = min(chunk_rows, total - done)
            yield self.draw(m)
            done += m

def as_output_array(out: Any, n: int) -> np.ndarray:
    """What a mechanism returned for ``n`` runs as an array (a structured release as its table of
    numbers, :func:`~dpaudit.release_outputs.release_table`), for quick comparisons outside the
    streams' checks."""
    out = plain_arrays(out)
    return release_table(out, n).values if is_structured(out, n) else np.asarray(out)


def is_discrete(probe0: np.ndarray, probe1: np.ndarray, output_kind: OutputKind) -> bool:
    """Whether the outputs are audited as discrete outcomes: ``output_kind`` when it is not
    ``"auto"``, else string/object outputs and numeric outputs with at most
    ``min(MAX_DISCRETE_OUTCOMES, probe size / 4)`` distinct rows among both probes."""
    if output_kind != "auto":
        return output_kind == "discrete"
    if probe0.dtype.kind in "OUSV":
        return True
    keys = np.concatenate([outcome_keys(probe0), outcome_keys(probe1)])
    return np.unique(keys).size <= min(MAX_DISCRETE_OUTCOMES, max(2, keys.size // 4))


def default_chunk_rows(probe: np.ndarray, chunk_size: int | None) -> int:
    """Runs per mechanism call: ``chunk_size`` when given, else as many rows of ``probe``'s size
    as fill ``MAX_CHUNK_BYTES`` (at least 1, at most ``MAX_CHUNK_ROWS``)."""
    if chunk_size is not None:
        return chunk_size
    row_bytes = max(1, probe.nbytes // max(1, probe.shape[0]))
    return int(min(MAX_CHUNK_ROWS, max(1, MAX_CHUNK_BYTES // row_bytes)))


def is_strategy(obj: Any) -> bool:
    """A Hypothesis strategy? (Checked without importing Hypothesis: a caller holding a strategy
    has imported it already.)"""
    hyp = sys.modules.get("hypothesis.strategies")
    return hyp is not None and isinstance(obj, hyp.SearchStrategy)



def describe_input(x: Any) -> Any:
    """A JSON-friendly record of one input found by a pair search (lists for arrays, else repr)."""
    if isinstance(x, np.ndarray) and x.size <= 1000:
        return x.tolist()
    if isinstance(x, (bool, int, float, str)) or x is None:
        return x
    r = repr(x)
    return r if len(r) <= 2000 else r[:2000] + "..."


def check_pairs(data0: Any, data1: Any, pairs: Sequence[tuple[Any, Any]] | None
                ) -> list[tuple[Any, Any]]:
    """The neighbouring pairs an audit runs on: ``[(data0, data1)]``, or ``pairs`` as a list of
    2-tuples. TypeError for a missing input (``NOT_GIVEN``), ValueError for both inputs ``None``,
    inputs and ``pairs`` together, an empty ``pairs`` or an item that is not a pair."""
    if pairs is None:
        missing = [name for name, d in (("data0", data0), ("data1", data1)) if d is NOT_GIVEN]
        if missing:
            raise TypeError(f"audit() needs two neighbouring inputs: pass data0 and data1, or "
                            f"pairs=[(data0, data1), ...]; missing: {', '.join(missing)}")
        if data0 is None and data1 is None:
            raise ValueError("data0 and data1 are both None: two identical inputs make a vacuous "
                             "audit (was an input omitted by a wrapper?); pass the two "
                             "neighbouring inputs, or pairs=[(data0, data1), ...]")
        return [(data0, data1)]
    # None is accepted here as "not given": wrappers forward their own None defaults.
    if any(d is not NOT_GIVEN and d is not None for d in (data0, data1)):
        raise ValueError("give either data0 and data1 or pairs, not both")
    try:
        out = [tuple(p) for p in pairs]
    except TypeError as exc:
        raise TypeError("pairs must be a sequence of (data0, data1) pairs") from exc
    if not out:
        raise ValueError("pairs must contain at least one (data0, data1) pair")
    for i, p in enumerate(out):
        if len(p) != 2:
            raise ValueError(f"pairs[{i}] must be a (data0, data1) pair, got {len(p)} items")
    return out
