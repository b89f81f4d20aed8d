"""Euclidean projections and clipping onto the convex sets the papers use.

All functions are vectorised over leading axes: ``x`` has shape ``(..., d)`` and the projection acts
on the last axis. They are deterministic post-processing and never read randomness.
"""

from __future__ import annotations

import numpy as np

from dpaudit._rowwise import row_max_abs
from dpaudit._validation import check_finite_array, check_positive

__all__ = ["project_l2_ball", "project_box", "project_simplex", "clip_l2", "clip_scalar"]


def project_l2_ball(x: np.ndarray, radius: float, center: np.ndarray | None = None) -> np.ndarray:
    """Euclidean projection of ``x`` (shape ``(..., d)``) onto ``{z : ||z - center||_2 <= radius}``."""
    return _project_l2_ball(x, radius, center, "radius")


def _project_l2_ball(x: np.ndarray, radius: float, center: np.ndarray | None, name: str) -> np.ndarray:
    radius = check_positive(radius, name)
    raw = np.asarray(x)
    if center is None and raw.dtype == np.float64 and raw.ndim >= 2 and 1 <= raw.shape[-1] <= 7:
        return _project_rows_to_ball(raw, radius)
    x = check_finite_array(x, "x")
    if x.ndim == 0:
        raise ValueError("x must have at least one axis (the coordinate axis)")
    c = 0.0 if center is None else check_finite_array(center, "center")
    y = x - c
    # Scale before taking the norm so that huge coordinates cannot overflow it.
    big = np.max(np.abs(y), axis=-1, keepdims=True)
    safe = np.where(big > 0, big, 1.0)
    norm = big * np.linalg.norm(y / safe, axis=-1, keepdims=True)
    scale = np.ones_like(norm)
    np.divide(radius, norm, out=scale, where=norm > radius)
    return c + y * scale


def _project_rows_to_ball(y: np.ndarray, radius: float) -> np.ndarray:
    """The general path above for a float64 batch of short rows (``1 <= d <= 7``) and no center,
    bit for bit, computed column by column over the batch.

    numpy reduces and broadcasts along a short last axis one row at a time, which costs ~10x the
    arithmetic; here every operation runs over a whole column. The float operations are the same,
    in the same order: ``x - 0.0`` is ``x``; the row maximum is exact in any order; the sum of
    squares is ``((0.0 + u_0^2) + u_1^2) + ...``, the order in which ``np.linalg.norm`` adds fewer
    than 8 terms (see :mod:`dpaudit._rowwise`, whose tests pin it); ``radius / max(norm, radius)``
    is ``radius / norm`` where ``norm > radius`` and exactly 1 elsewhere; and ``0.0 + y * scale``
    turns a ``-0.0`` coordinate into ``+0.0`` as before. Finiteness is checked on the row maxima
    (NaN and inf propagate into them) with the message of :func:`check_finite_array`.
    """
    d = y.shape[-1]
    cols = [y[..., k] for k in range(d)]
    big = row_max_abs(y)  # exact in any order, so the same on either of its paths
    if not np.isfinite(big).all():
        raise ValueError("x must contain only finite values (no NaN or inf)")
    if d == 1:
        # One coordinate: y / safe is exactly +-1 or +-0, its square 1 or 0, the square root
        # the same, so the scaled norm big * sqrt(.) is exactly big = |y|: skip those steps.
        norm = big
    else:
        norm = _scaled_norm(cols, big, np.empty_like(big))
    scale = np.maximum(norm, radius, out=norm)
    np.divide(radius, scale, out=scale)
    out = np.empty(y.shape)
    for k, c in enumerate(cols):
        np.multiply(c, scale, out=out[..., k])
    out += 0.0
    return out


def _scaled_norm(cols: list[np.ndarray], big: np.ndarray, tmp: np.ndarray) -> np.ndarray:
    """``big * sqrt(((0.0 + u_0^2) + u_1^2) + ...)``, ``u_k = col_k / safe`` (see above)."""
    safe = np.where(big > 0, big, 1.0)
    sumsq = None
    for c in cols:
        np.divide(c, safe, out=tmp)
        np.multiply(tmp, tmp, out=tmp)
        if sumsq is None:
            sumsq = tmp.copy()
        else:
            sumsq += tmp
    norm = np.sqrt(sumsq, out=sumsq)
    return np.multiply(big, norm, out=norm)


def project_box(x: np.ndarray, lower: float | np.ndarray, upper: float | np.ndarray) -> np.ndarray:
    """Euclidean projection onto the box ``[lower, upper]^d`` (coordinate-wise clipping)."""
    x = check_finite_array(x, "x")
    lo = check_finite_array(lower, "lower")
    hi = check_finite_array(upper, "upper")
    if np.any(lo > hi):
        raise ValueError("lower must be <= upper in every coordinate")
    return np.clip(x, lo, hi)


def project_simplex(x: np.ndarray, total: float = 1.0) -> np.ndarray:
    """Euclidean projection onto the simplex ``{z >= 0, sum z = total}`` along the last axis.

    Sort-based algorithm of Held, Wolfe and Crowder (1974) / Duchi et al. (2008), O(d log d).
    """
    total = check_positive(total, "total")
    x = check_finite_array(x, "x")
    if x.ndim == 0 or x.shape[-1] == 0:
        raise ValueError("x must have at least one axis with at least one coordinate")
    d = x.shape[-1]
    # The projection commutes with shifts along (1, ..., 1); removing the maximum keeps the
    # arithmetic on the scale of `total` when coordinates are huge.
    x = x - np.max(x, axis=-1, keepdims=True)
    u = -np.sort(-x, axis=-1)
    css = np.cumsum(u, axis=-1) - total
    k = np.arange(1, d + 1)
    cond = u - css / k > 0
    cond[..., 0] = True  # always true in exact arithmetic; guards rounding for huge |x|
    rho = d - 1 - np.argmax(cond[..., ::-1], axis=-1)  # last index where cond holds
    theta = np.take_along_axis(css, rho[..., None], axis=-1) / (rho[..., None] + 1)
    return np.maximum(x - theta, 0.0)


def clip_l2(x: np.ndarray, bound: float) -> np.ndarray:
    """Scale each vector (last axis) down to l2 norm at most ``bound``; same as ball projection."""
    return _project_l2_ball(x, bound, None, "bound")


def clip_scalar(x: np.ndarray | float, lower: float, upper: float) -> np.ndarray:
    """Clip scalars to ``[lower, upper]``."""
    x = check_finite_array(x, "x")
    if not lower <= upper:
        raise ValueError(f"lower must be <= upper, got lower={lower!r}, upper={upper!r}")
    return np.clip(x, lower, upper)
