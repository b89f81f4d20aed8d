"""Input validation shared by every public function.

Bad input raises ``ValueError`` or ``TypeError`` naming the parameter and the allowed range;
nothing in dpaudit returns a silent NaN.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

__all__ = [
    "check_epsilon",
    "check_delta",
    "check_positive",
    "check_nonnegative",
    "check_probability",
    "check_int",
    "check_finite_array",
    "check_generator",
]


def _real(value: object, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    value = float(value)
    if math.isnan(value):
        raise ValueError(f"{name} must not be NaN")
    return value


def check_epsilon(epsilon: object, name: str = "epsilon", allow_inf: bool = False) -> float:
    """Return ``epsilon`` as a float; it must be > 0 (and finite unless ``allow_inf``)."""
    eps = _real(epsilon, name)
    if eps <= 0 or (math.isinf(eps) and not allow_inf):
        raise ValueError(f"{name} must be in (0, inf), got {epsilon!r}")
    return eps


def check_delta(delta: object, name: str = "delta") -> float:
    """Return ``delta`` as a float in [0, 1)."""
    d = _real(delta, name)
    if not 0.0 <= d < 1.0:
        raise ValueError(f"{name} must be in [0, 1), got {delta!r}")
    return d


def check_probability(p: object, name: str, open_interval: bool = True) -> float:
    """Return ``p`` as a float in (0, 1) (or [0, 1] when ``open_interval`` is False)."""
    v = _real(p, name)
    if open_interval and not 0.0 < v < 1.0:
        raise ValueError(f"{name} must be in (0, 1), got {p!r}")
    if not open_interval and not 0.0 <= v <= 1.0:
        raise ValueError(f"{name} must be in [0, 1], got {p!r}")
    return v


def check_positive(value: object, name: str, allow_inf: bool = False) -> float:
    """Return ``value`` as a float; it must be > 0 and finite (unless ``allow_inf``)."""
    v = _real(value, name)
    if v <= 0 or (math.isinf(v) and not allow_inf):
        raise ValueError(f"{name} must be in (0, inf), got {value!r}")
    return v


def check_nonnegative(value: object, name: str) -> float:
    """Return ``value`` as a finite float >= 0."""
    v = _real(value, name)
    if v < 0 or math.isinf(v):
        raise ValueError(f"{name} must be in [0, inf), got {value!r}")
    return v


def check_int(value: object, name: str, minimum: int | None = None, maximum: int | None = None) -> int:
    """Return ``value`` as an int within [minimum, maximum] (bounds optional)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    v = int(value)
    lo = "-inf" if minimum is None else str(minimum)
    hi = "inf" if maximum is None else str(maximum)
    if (minimum is not None and v < minimum) or (maximum is not None and v > maximum):
        raise ValueError(f"{name} must be an integer in [{lo}, {hi}], got {value!r}")
    return v


def check_finite_array(x: object, name: str, ndim: int | tuple[int, ...] | None = None,
                       shape: tuple[int | None, ...] | None = None) -> np.ndarray:
    """Return ``x`` as a float64 array; reject NaN/inf, wrong ``ndim`` or wrong ``shape``.

    ``shape`` may contain ``None`` for axes of any length.
    """
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be array-like of real numbers") from exc
    if ndim is not None:
        allowed = (ndim,) if isinstance(ndim, int) else tuple(ndim)
        if arr.ndim not in allowed:
            raise ValueError(f"{name} must have ndim in {allowed}, got shape {arr.shape}")
    if shape is not None:
        if arr.ndim != len(shape) or any(s is not None and s != a for s, a in zip(shape, arr.shape)):
            want = tuple("*" if s is None else s for s in shape)
            raise ValueError(f"{name} must have shape {want}, got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must contain only finite values (no NaN or inf)")
    return arr


def check_generator(rng: object, name: str = "rng") -> np.random.Generator:
    """Require a ``numpy.random.Generator``; dpaudit never reads global random state."""
    if not isinstance(rng, np.random.Generator):
        raise TypeError(
            f"{name} must be a numpy.random.Generator (e.g. numpy.random.default_rng(seed)), "
            f"got {type(rng).__name__}"
        )
    return rng
