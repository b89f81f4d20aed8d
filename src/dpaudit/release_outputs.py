"""Structured releases as a table: what ``mechanism(data, n, rng)`` returns, as an ``(n, d)`` float
array with one named column per released number.

A release is audited on its *whole* output (AUDIT-METHOD section 1: "the paper's own output"), so
the engine must see every number a run releases. Releases written for people rather than for the
engine return structures: a dict of arrays (``{"w": (n, d), "loss": (n,)}``), a list of ``n``
per-run records (``[{"w": ..., "loss": ...}, ...]``), a tuple of arrays (``(weights, bias)``).
Read as a numpy array these become an object array of dicts, each dict its own "outcome" (no
event can ever repeat, so the black box has no power), or fail outright. :func:`release_table`
turns them into the numbers they contain, with the names a report can print (``"loss"``,
``"w[0]"``, ``"w[1, 2]"``, ``"[1]"``).

This module sits below the black box and the grey box (it imports only numpy); both call
:func:`release_table` on what a release returns. Plain arrays, and the discrete outputs the black
box audits as outcomes (integers, booleans, strings, exact numbers as objects), are *not*
structured (:func:`is_structured` is false) and keep their own path in the engine; the function
still tabulates a numeric plain array for callers that want one table for every release.
"""

from __future__ import annotations

import numbers
from typing import Any, Literal, Mapping, NamedTuple, Sequence

import numpy as np

__all__ = ["ReleaseTable", "Layout", "release_table", "is_structured", "MAX_COLUMN_NAMES",
           "short_columns", "RETURN_HINT", "plain_arrays"]

#: How the top level of a release is read: ``"array"`` (a plain array, leading axis n),
#: ``"fields"`` (a mapping of fields, each with leading axis n), ``"records"`` (a list or tuple of
#: n per-run records), ``"arrays"`` (a tuple or list of arrays, each with leading axis n).
Layout = Literal["array", "fields", "records", "arrays"]

#: What a release may return, said in every refusal.
RETURN_HINT = ("return an array with leading axis n, a dict of numeric arrays each with leading "
               "axis n, a tuple of such arrays (e.g. (weights, bias)), or a list of n per-run "
               "records (dicts, tuples or lists of numbers or numeric arrays) of one shape and one "
               "set of keys in every run; for discrete outcomes return an array of labels")

#: Column names kept in an audit's record (:func:`short_columns`).
MAX_COLUMN_NAMES = 64


class ReleaseTable(NamedTuple):
    """The numbers of ``n`` runs of a release.

    Attributes
    ----------
    values : numpy.ndarray
        ``(n, d)`` float64, one row per run, one column per released number.
    columns : tuple of str
        The ``d`` column names, in the order of ``values``' columns.
    layout : str
        How the top level was read (:data:`Layout`); pass it back as ``layout=`` on later calls
        of the same release so that a small ``n`` (where a tuple of ``n`` arrays and ``n``
        per-run records look alike) is read the same way.
    """

    values: np.ndarray
    columns: tuple[str, ...]
    layout: str


def _array_module(x: Any) -> str:
    """``"torch"`` / ``"jax"`` for a tensor or array of those libraries (read from its type's
    module, so neither is imported here), else ``""``."""
    mod = (type(x).__module__ or "").split(".")[0]
    if mod == "torch" and hasattr(x, "detach") and hasattr(x, "numpy"):
        return "torch"
    if mod in ("jax", "jaxlib") and hasattr(x, "__array__") and hasattr(x, "shape"):
        return "jax"
    return ""


def plain_arrays(out: Any) -> Any:
    """``out`` with every torch tensor and jax array in it (at the top, or inside dicts, lists
    and tuples) as a numpy array: a tensor is detached from autograd and moved to the CPU first
    (``bfloat16``, which numpy lacks, as float32; exact). Everything else is returned as it is,
    the same object when nothing was converted. Neither library is imported."""
    if isinstance(out, np.ndarray) or _is_number(out):
        return out
    kind = _array_module(out)
    if kind == "torch":
        t = out.detach().cpu()
        if str(t.dtype) == "torch.bfloat16":
            t = t.float()
        return t.numpy()
    if kind == "jax":
        return np.asarray(out)
    if isinstance(out, Mapping):
        items = {k: plain_arrays(v) for k, v in out.items()}
        return items if any(items[k] is not out[k] for k in out) else out
    if isinstance(out, (list, tuple)):
        conv = [plain_arrays(v) for v in out]
        if all(a is b for a, b in zip(conv, out)):
            return out
        return tuple(conv) if isinstance(out, tuple) else conv
    return out


def _is_number(x: Any) -> bool:
    """A real number a float64 column holds as it is: bool, int, float or a numpy real scalar
    (not a Fraction or Decimal, which a double would round)."""
    return isinstance(x, (bool, int, float, np.bool_, np.integer, np.floating))


#: Integers beyond this magnitude are not exact in float64.
_EXACT_INT = 2 ** 53


def _is_container(x: Any) -> bool:
    return isinstance(x, (Mapping, list, tuple, np.ndarray))


def is_structured(out: Any, n: int) -> bool:
    """Whether ``out`` (returned for ``n`` runs) is a structured release that
    :func:`release_table` must read, rather than an array (or array-like of numbers or labels)
    with leading axis ``n``.

    Structured: a mapping; a list or tuple one of whose items is a mapping; a list or tuple whose
    items are containers that do not stack into one homogeneous array (ragged parts such as
    ``(weights, bias)`` per run); a tuple or list of ``k != n`` arrays each with leading axis
    ``n``. Everything else (arrays, scalars, lists of numbers, of labels, of equal-length tuples of
    numbers) is not.
    """
    if isinstance(out, Mapping):
        return True
    if not isinstance(out, (list, tuple)) or not out:
        return False
    if any(isinstance(x, Mapping) for x in out):
        return True
    if not any(_is_container(x) for x in out):
        return False
    try:
        arr = np.asarray(out)
    except (ValueError, TypeError):
        return True
    if arr.dtype.kind == "O":
        return True
    return arr.ndim >= 2 and arr.shape[0] != n and len(out) != n and all(
        isinstance(x, np.ndarray) and x.ndim >= 1 and x.shape[0] == n for x in out)


def _join(prefix: str, key: str) -> str:
    return key if not prefix else f"{prefix}.{key}"


def _index_names(prefix: str, shape: tuple[int, ...]) -> list[str]:
    if not shape:
        return [prefix or "[0]"]
    return [f"{prefix}[{', '.join(str(i) for i in idx)}]" for idx in np.ndindex(*shape)]


def _where(prefix: str) -> str:
    return f"field {prefix!r}" if prefix else "the release"


def _numeric(arr: np.ndarray, prefix: str, who: str) -> np.ndarray:
    if arr.dtype.kind in "iu" and arr.size and np.abs(arr.astype(np.float64)).max() > _EXACT_INT:
        raise TypeError(f"{who}: {_where(prefix)} holds integers beyond 2**53, which a float64 "
                        f"table would round; release them as an array of their own (discrete "
                        f"outcomes) or scaled to floats. {RETURN_HINT}")
    if arr.dtype.kind == "f" and arr.dtype.itemsize > 8:
        raise TypeError(f"{who}: {_where(prefix)} holds long doubles, more precise than the "
                        f"float64 table; return float64. {RETURN_HINT}")
    if arr.dtype.kind in "biuf":
        return arr.astype(np.float64, copy=False)
    if arr.dtype.kind == "O":
        items = arr.reshape(-1)
        if all(_is_number(v) for v in items):
            if any(isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))
                   and abs(int(v)) > _EXACT_INT for v in items):
                return _numeric(np.array([_EXACT_INT * 2]), prefix, who)
            return np.array([float(v) for v in items], dtype=np.float64).reshape(arr.shape)
    kinds = {"U": "strings", "S": "bytes", "c": "complex numbers", "O": "objects",
             "M": "dates", "m": "time deltas", "V": "structured values"}
    raise TypeError(f"{who}: {_where(prefix)} holds {kinds.get(arr.dtype.kind, arr.dtype)} "
                    f"(dtype {arr.dtype}); a structured release must hold only real numbers "
                    f"(strings or labels beside numbers cannot be audited as one output). "
                    f"{RETURN_HINT}")


def _keys(rec: Mapping, prefix: str, who: str) -> list[str]:
    keys = list(rec.keys())
    for k in keys:
        if not isinstance(k, str):
            raise TypeError(f"{who}: {_where(prefix)} has the key {k!r} of type "
                            f"{type(k).__name__}; keys of a structured release must be strings. "
                            f"{RETURN_HINT}")
    return keys


def _columns(value: Any, n: int, prefix: str, who: str, top: Layout | None = None
             ) -> tuple[list[str], list[np.ndarray], str]:
    """Names and ``(n, k)`` float blocks of ``value``, the data of ``n`` runs; and the layout."""
    if isinstance(value, Mapping):
        names: list[str] = []
        blocks: list[np.ndarray] = []
        keys = _keys(value, prefix, who)
        if not keys:
            raise TypeError(f"{who}: {_where(prefix)} is an empty mapping; every run must "
                            f"release at least one number. {RETURN_HINT}")
        for k in keys:
            nm, bl, _ = _columns(value[k], n, _join(prefix, k), who)
            names += nm
            blocks += bl
        return names, blocks, "fields"
    if isinstance(value, (list, tuple)):
        if not value:
            raise TypeError(f"{who}: {_where(prefix)} is empty; it must hold the data of n = {n} "
                            f"runs. {RETURN_HINT}")
        items = list(value)
        as_arrays = all(isinstance(x, np.ndarray) and x.ndim >= 1 and x.shape[0] == n
                        for x in items)
        per_run = len(items) == n
        if top == "arrays" or (top is None and as_arrays and not per_run):
            if not as_arrays:
                raise TypeError(f"{who}: earlier calls returned a tuple of arrays, each with "
                                f"leading axis n; this call's items are not all arrays with "
                                f"leading axis n = {n}. {RETURN_HINT}")
            names, blocks = [], []
            for i, x in enumerate(items):
                nm, bl, _ = _columns(x, n, f"{prefix}[{i}]", who)
                names += nm
                blocks += bl
            return names, blocks, "arrays"
        if not per_run:
            raise TypeError(f"{who}: {_where(prefix)} is a {type(value).__name__} of "
                            f"{len(items)} items, which is neither n = {n} per-run records nor "
                            f"a tuple of arrays each with leading axis n. {RETURN_HINT}")
        return _records(items, n, prefix, who) + ("records",)
    if isinstance(value, np.ndarray) or _is_number(value):
        arr = np.asarray(value)
        if arr.ndim == 0 or arr.shape[0] != n:
            got = "a scalar" if arr.ndim == 0 else f"leading axis {arr.shape[0]}"
            raise TypeError(f"{who}: {_where(prefix)} has {got} (shape {arr.shape}); each field "
                            f"must hold one value or array per run, leading axis n = {n}. "
                            f"{RETURN_HINT}")
        arr = _numeric(arr, prefix, who)
        return _index_names(prefix, arr.shape[1:]), [arr.reshape(n, -1)], "array"
    raise TypeError(f"{who}: {_where(prefix)} is a {type(value).__name__}, which is not a "
                    f"number, an array, a dict, a list or a tuple. {RETURN_HINT}")


def _records(items: Sequence[Any], n: int, prefix: str, who: str
             ) -> tuple[list[str], list[np.ndarray]]:
    """The ``n`` per-run records ``items`` (one run each), column by column."""
    first = items[0]
    if isinstance(first, Mapping):
        keys = _keys(first, prefix, who)
        for run, rec in enumerate(items):
            if not isinstance(rec, Mapping) or len(rec) != len(keys) or set(rec) != set(keys):
                got = (sorted(map(str, rec)) if isinstance(rec, Mapping)
                       else type(rec).__name__)
                raise TypeError(f"{who}: run {run}'s record at {_where(prefix)} has keys {got}, "
                                f"run 0's has {sorted(keys)}; every run must release the same "
                                f"keys. {RETURN_HINT}")
        names: list[str] = []
        blocks: list[np.ndarray] = []
        for k in keys:
            nm, bl = _records([rec[k] for rec in items], n, _join(prefix, k), who)
            names += nm
            blocks += bl
        return names, blocks
    if all(_is_number(x) for x in items):
        arr = _numeric(np.asarray(items, dtype=object), prefix, who)
        return _index_names(prefix, ()), [arr.reshape(n, 1)]
    if isinstance(first, (list, tuple, np.ndarray)):
        try:
            arr = np.asarray(items)
            stacked = arr.dtype.kind != "O" and arr.shape[0] == n
        except (ValueError, TypeError):
            stacked = False
        if stacked:
            arr = _numeric(arr, prefix, who)
            return _index_names(prefix, arr.shape[1:]), [arr.reshape(n, -1)]
        if all(isinstance(x, (list, tuple)) for x in items):
            width = len(first)
            for run, rec in enumerate(items):
                if len(rec) != width:
                    raise TypeError(f"{who}: run {run}'s record at {_where(prefix)} has "
                                    f"{len(rec)} items, run 0's has {width}; records must not be "
                                    f"ragged (pad them to one length). {RETURN_HINT}")
            names, blocks = [], []
            for i in range(width):
                nm, bl = _records([rec[i] for rec in items], n, f"{prefix}[{i}]", who)
                names += nm
                blocks += bl
            return names, blocks
        shapes = {np.shape(x) for x in items if isinstance(x, np.ndarray)}
        raise TypeError(f"{who}: the runs' values at {_where(prefix)} differ in shape or kind "
                        f"({', '.join(str(s) for s in sorted(shapes)) or 'mixed types'}); "
                        f"records must not be ragged (pad them to one length). {RETURN_HINT}")
    kinds = sorted({type(x).__name__ for x in items})
    raise TypeError(f"{who}: the runs' values at {_where(prefix)} are of types "
                    f"{', '.join(kinds)}; a structured release must hold only real numbers and "
                    f"arrays of them. {RETURN_HINT}")


def release_table(out: Any, n: int, *, layout: str | None = None,
                  who: str = "the release") -> ReleaseTable:
    """The numbers ``out`` releases for ``n`` runs, as an ``(n, d)`` float64 table with names.

    Parameters
    ----------
    out : any
        What ``mechanism(data, n, rng)`` returned. Accepted, at the top level:

        * an array (or nested list of numbers) with leading axis ``n``: row ``i`` is run ``i``,
          its trailing axes flattened in C order (columns ``"[j]"``, ``"[t, j]"``; a scalar per
          run is the single column ``"[0]"``);
        * a mapping of fields (``{"loss": (n,), "w": (n, 2, 3)}``), each an array (or nested
          structure of such) with leading axis ``n`` (columns ``"loss"``, ``"w[0, 0]"`` ...,
          nested mappings joined by a dot: ``"opt.lr"``);
        * a list or tuple of ``n`` per-run records, each a mapping, a tuple or list of numbers or
          arrays, or a number, nested in any way, of one shape and one set of keys in every run
          (columns named as above, tuple positions as ``"[1]"``);
        * a tuple or list of ``k`` arrays each with leading axis ``n`` (``(weights, bias)``:
          columns ``"[0][j]"``, ``"[1]"``).

        **Disambiguation rule.** A list or tuple of length ``n`` is read as ``n`` per-run
        records; one of another length whose items are all arrays with leading axis ``n`` is a
        tuple of arrays. Only for ``k == n`` do the two agree in shape; pass the ``layout`` of an
        earlier call of the same release to read every call alike.
    n : int
        The number of runs asked for.
    layout : {"array", "fields", "records", "arrays"}, optional
        The layout of an earlier call (:attr:`ReleaseTable.layout`); a call that does not fit it
        is a TypeError.
    who : str
        How messages name the release (e.g. ``"mechanism m(data0, n=4096, rng)"``).

    Returns
    -------
    ReleaseTable
        ``values`` of shape ``(n, d)`` (float64; integers and booleans converted exactly up to
        2^53), ``columns`` (``d`` names), ``layout``. Non-finite values are kept: the caller
        decides (the black box refuses NaN and infinities naming the run).

    Raises
    ------
    TypeError
        Anything else, with what to return (:data:`RETURN_HINT`): strings, labels, ``None`` or
        other objects beside numbers; ragged records; keys that differ between runs; non-string
        keys; fields whose leading axis is not ``n``; a layout other than the earlier calls'.
    ValueError
        ``n`` not a positive integer.
    """
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1:
        raise ValueError(f"n must be a positive integer (the number of runs), got {n!r}")
    n = int(n)
    if layout is not None and layout not in ("array", "fields", "records", "arrays"):
        raise ValueError(f"layout must be 'array', 'fields', 'records', 'arrays' or None, got "
                         f"{layout!r}")
    structured = is_structured(out, n) or layout in ("fields", "records", "arrays")
    if not structured:
        try:
            arr = np.asarray(out)
        except (ValueError, TypeError) as exc:
            raise TypeError(f"{who} returned a {type(out).__name__} that is not an array. "
                            f"{RETURN_HINT}") from exc
        if arr.ndim == 0 or arr.shape[0] != n:
            got = "a scalar" if arr.ndim == 0 else f"leading axis {arr.shape[0]}"
            raise TypeError(f"{who} returned {got} (shape {arr.shape}); it must have leading "
                            f"axis n = {n}. {RETURN_HINT}")
        arr = _numeric(arr, "", who)
        return ReleaseTable(arr.reshape(n, -1), tuple(_index_names("", arr.shape[1:])), "array")
    top: Layout | None = None if layout in (None, "array") else layout  # type: ignore[assignment]
    if top == "fields" and not isinstance(out, Mapping):
        raise TypeError(f"{who}: earlier calls returned a dict of fields, this call a "
                        f"{type(out).__name__}; every call must return the same structure. "
                        f"{RETURN_HINT}")
    names, blocks, got = _columns(out, n, "", who, top)
    if top is not None and got != top:
        raise TypeError(f"{who}: earlier calls were read as {top}, this call as {got}; every call "
                        f"must return the same structure. {RETURN_HINT}")
    values = np.concatenate(blocks, axis=1) if len(blocks) > 1 else blocks[0]
    if values.shape[1] == 0:
        raise TypeError(f"{who} releases no numbers (every field is empty). {RETURN_HINT}")
    return ReleaseTable(np.ascontiguousarray(values, dtype=np.float64), tuple(names), got)


def short_columns(columns: Sequence[str], limit: int = MAX_COLUMN_NAMES) -> list[str]:
    """At most ``limit`` column names for a record: the first ``limit - 1``, then
    ``"... (k more)"`` when there are more."""
    cols = list(columns)
    if len(cols) <= limit:
        return cols
    return cols[:limit - 1] + [f"... ({len(cols) - limit + 1} more)"]
