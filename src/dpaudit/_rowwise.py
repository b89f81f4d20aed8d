"""Row-wise (last-axis) operations that give numpy's results bit for bit, faster for short rows.

numpy reduces and broadcasts along a short last axis (the coordinate axis ``d`` of a
``(n_runs, d)`` batch) one row at a time, which costs far more than the arithmetic when ``d`` is
small. For ``1 <= d <= 7``, ``np.add.reduce(a, axis=-1)`` adds the coordinates left to right from
+0.0 (``((0.0 + a0) + a1) + ...``; from ``d = 8`` on it switches to pairwise summation with eight
accumulators), so the same sum computed column by column over the whole batch is bit-identical
and vectorised over runs. Maxima and logical ors are exact in any order; element-wise products
and quotients are the same operations whichever way they are looped. Longer rows, and batches too
small for the column loop to pay, go to numpy itself. ``tests/test_rowwise.py`` checks every
identity against numpy on adversarial data (mixed magnitudes, signed zeros), so a numpy that
changed its summation order would fail there rather than silently change audit records.
"""

from __future__ import annotations

import numpy as np

__all__ = ["row_sum", "row_norm", "row_max_abs", "row_any", "add_outer", "mul_rows", "div_rows"]

#: Longest last axis that numpy's add.reduce sums strictly left to right (pairwise from 8 on).
_MAX_SEQUENTIAL = 7
#: Fewest rows for which the column-by-column path pays (below, numpy's own call is cheaper than
#: one Python-level operation per column; both give the same bits).
_MIN_ROWS = 128


def _columns_pay(a: np.ndarray) -> bool:
    """Whether ``a`` (float64 or bool) takes the column path: >= 2 axes, a short last axis and
    enough rows."""
    d = a.shape[-1] if a.ndim else 0
    return a.ndim >= 2 and 1 <= d <= _MAX_SEQUENTIAL and a.size >= _MIN_ROWS * d


def row_sum(a: np.ndarray, keepdims: bool = False) -> np.ndarray:
    """``np.add.reduce(a, axis=-1, keepdims=keepdims)``, bit for bit (``a`` float64, ndim >= 1)."""
    if not _columns_pay(a) or a.dtype != np.float64:
        return np.add.reduce(a, axis=-1, keepdims=keepdims)
    d = a.shape[-1]
    idx = (slice(k, k + 1) for k in range(d)) if keepdims else range(d)
    cols = [a[..., k] for k in idx]
    out = np.add(cols[0], 0.0)  # numpy starts from the identity +0.0: -0.0 sums to +0.0
    for c in cols[1:]:
        out += c
    return out


def row_norm(a: np.ndarray, keepdims: bool = False) -> np.ndarray:
    """``np.linalg.norm(a, axis=-1, keepdims=keepdims)`` for real float64 ``a``, bit for bit
    (numpy computes ``sqrt(add.reduce(a * a, axis=-1))``)."""
    if not _columns_pay(a) or a.dtype != np.float64:
        return np.linalg.norm(a, axis=-1, keepdims=keepdims)
    d = a.shape[-1]
    idx = [slice(k, k + 1) for k in range(d)] if keepdims else list(range(d))
    c = a[..., idx[0]]
    out = c * c
    if d > 1:
        tmp = np.empty_like(out)
        for k in idx[1:]:
            c = a[..., k]
            np.multiply(c, c, out=tmp)
            out += tmp
    return np.sqrt(out, out=out)


def row_max_abs(a: np.ndarray, keepdims: bool = False) -> np.ndarray:
    """``np.max(np.abs(a), axis=-1, keepdims=keepdims)`` for float64 ``a`` (maxima are exact;
    NaN propagates as in numpy)."""
    if not _columns_pay(a) or a.dtype != np.float64:
        return np.max(np.abs(a), axis=-1, keepdims=keepdims)
    d = a.shape[-1]
    idx = [slice(k, k + 1) for k in range(d)] if keepdims else list(range(d))
    out = np.abs(a[..., idx[0]])
    if d > 1:
        tmp = np.empty_like(out)
        for k in idx[1:]:
            np.abs(a[..., k], out=tmp)
            np.maximum(out, tmp, out=out)
    return out


def row_any(mask: np.ndarray) -> np.ndarray:
    """``np.any(mask, axis=-1)`` for a boolean ``mask`` (exact: a logical or of the columns)."""
    d = mask.shape[-1]
    if mask.ndim < 2 or not 1 <= d <= _MAX_SEQUENTIAL or mask.dtype != np.bool_:
        return np.any(mask, axis=-1)
    out = mask[..., 0].copy()
    for k in range(1, d):
        out |= mask[..., k]
    return out


def add_outer(c: np.ndarray, w: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``c + w[..., None] * v`` (``c`` of shape ``(..., d)``, ``w`` of shape ``(...)``, ``v`` of
    shape ``(d,)``; float64), bit for bit: the same two operations per element, a column at a
    time instead of numpy's row-by-row broadcast."""
    d = c.shape[-1] if c.ndim else 0
    if (not _columns_pay(c) or c.dtype != np.float64 or w.shape != c.shape[:-1]
            or v.shape != (d,)):
        return c + w[..., None] * v
    out = np.empty(c.shape)
    tmp = np.empty(w.shape)
    for k in range(d):
        np.multiply(w, v[k], out=tmp)
        np.add(c[..., k], tmp, out=out[..., k])
    return out


def mul_rows(a: np.ndarray, s: np.ndarray) -> np.ndarray:
    """``a * s[..., None]`` (each row of ``a`` times its own scalar; float64), bit for bit, a
    column at a time (``s[..., None] * a`` too: multiplication commutes exactly)."""
    return _rows_op(np.multiply, a, s)


def div_rows(a: np.ndarray, s: np.ndarray) -> np.ndarray:
    """``a / s[..., None]`` (each row of ``a`` divided by its own scalar; float64), bit for bit,
    a column at a time."""
    return _rows_op(np.divide, a, s)


def _rows_op(op: np.ufunc, a: np.ndarray, s: np.ndarray) -> np.ndarray:
    if (not _columns_pay(a) or a.dtype != np.float64 or s.shape != a.shape[:-1]
            or s.dtype != np.float64):
        return op(a, s[..., None])
    d = a.shape[-1]
    out = np.empty(a.shape)
    for k in range(d):
        op(a[..., k], s, out=out[..., k])
    return out
