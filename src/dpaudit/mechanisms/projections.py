"""Euclidean projections and clipping onto the convex sets the papers use.

All functions are vectorised over leading axes: ``x`` has shape ``(..., d)`` and the projection acts
on the last axis. They are deterministic post-processing and never read randomness.
"""

from __future__ import annotations

import numpy as np

from dpaudit._validation import check_finite_array, check_positive

__all__ = ["project_l2_ball", "project_box", "project_simplex", "clip_l2", "clip_scalar"]


def project_l2_ball(x: np.ndarray, radius: float, center: np.ndarray | None = None) -> np.ndarray:
    """Euclidean projection of ``x`` (shape ``(..., d)``) onto ``{z : ||z - center||_2 <= radius}``."""
    return _project_l2_ball(x, radius, center, "radius")


def _project_l2_ball(x: np.ndarray, radius: float, center: np.ndarray | None, name: str) -> np.ndarray:
    radius = check_positive(radius, name)
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
