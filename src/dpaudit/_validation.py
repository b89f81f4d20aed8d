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
    "check_alpha",
    "check_int",
    "check_finite_array",
    "check_generator",
]


def _real(value: object, name: str, allowed: str) -> float:
    """``value`` as a float; ``allowed`` (e.g. "(0, inf)") is quoted in the error messages."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number in {allowed}, got {type(value).__name__}")
    value = float(value)
    if math.isnan(value):
        raise ValueError(f"{name} must not be NaN: allowed range {allowed}")
    return value


def check_epsilon(epsilon: object, name: str = "epsilon", allow_inf: bool = False) -> float:
    """Return ``epsilon`` as a float; it must be > 0 (and finite unless ``allow_inf``)."""
    allowed = "(0, inf]" if allow_inf else "(0, inf)"
    eps = _real(epsilon, name, allowed)
    if eps <= 0 or (math.isinf(eps) and not allow_inf):
        raise ValueError(f"{name} must be in {allowed}, got {epsilon!r}")
    return eps


def check_delta(delta: object, name: str = "delta") -> float:
    """Return ``delta`` as a float in [0, 1)."""
    d = _real(delta, name, "[0, 1)")
    if not 0.0 <= d < 1.0:
        raise ValueError(f"{name} must be in [0, 1), got {delta!r}")
    return d


def check_probability(p: object, name: str, open_interval: bool = True) -> float:
    """Return ``p`` as a float in (0, 1) (or [0, 1] when ``open_interval`` is False)."""
    allowed = "(0, 1)" if open_interval else "[0, 1]"
    v = _real(p, name, allowed)
    if open_interval and not 0.0 < v < 1.0:
        raise ValueError(f"{name} must be in (0, 1), got {p!r}")
    if not open_interval and not 0.0 <= v <= 1.0:
        raise ValueError(f"{name} must be in [0, 1], got {p!r}")
    return v


#: Smallest level an audit accepts: below it ``1 / alpha`` and the per-interval levels of a
#: Bonferroni split underflow or overflow double precision (``alpha=5e-324`` was
#: reported as "got 0.0" by an internal check).
MIN_ALPHA = 1e-300


def check_alpha(alpha: object, name: str = "alpha") -> float:
    """Return ``alpha`` as a float in [:data:`MIN_ALPHA`, 1)."""
    v = check_probability(alpha, name)
    if v < MIN_ALPHA:
        raise ValueError(f"{name} must be in (0, 1) and at least {MIN_ALPHA:g} (smaller levels "
                         f"underflow double precision), got {alpha!r}")
    return v


def check_positive(value: object, name: str, allow_inf: bool = False) -> float:
    """Return ``value`` as a float; it must be > 0 and finite (unless ``allow_inf``)."""
    allowed = "(0, inf]" if allow_inf else "(0, inf)"
    v = _real(value, name, allowed)
    if v <= 0 or (math.isinf(v) and not allow_inf):
        raise ValueError(f"{name} must be in {allowed}, got {value!r}")
    return v


def check_nonnegative(value: object, name: str) -> float:
    """Return ``value`` as a finite float >= 0."""
    v = _real(value, name, "[0, inf)")
    if v < 0 or math.isinf(v):
        raise ValueError(f"{name} must be in [0, inf), got {value!r}")
    return v


def check_int(value: object, name: str, minimum: int | None = None, maximum: int | None = None) -> int:
    """Return ``value`` as an int within [minimum, maximum] (bounds optional)."""
    lo = "-inf" if minimum is None else str(minimum)
    hi = "inf" if maximum is None else str(maximum)
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer in [{lo}, {hi}], got {type(value).__name__}")
    v = int(value)
    if (minimum is not None and v < minimum) or (maximum is not None and v > maximum):
        raise ValueError(f"{name} must be an integer in [{lo}, {hi}], got {value!r}")
    return v


# dtype kinds accepted by check_finite_array: bool, signed/unsigned integers, floats. Object arrays
# are accepted only when every element is a real number (e.g. Python ints or Fractions).
_REAL_KINDS = frozenset("biuf")


def check_finite_array(x: object, name: str, ndim: int | tuple[int, ...] | None = None,
                       shape: tuple[int | None, ...] | None = None) -> np.ndarray:
    """Return ``x`` as a float64 array; reject NaN/inf, wrong ``ndim`` or wrong ``shape``.

    ``shape`` may contain ``None`` for axes of any length. Complex input (its imaginary part would
    be dropped), strings, ragged nested sequences and object arrays holding anything but real
    numbers raise ``TypeError``.
    """
    try:
        raw = np.asarray(x)
    except (TypeError, ValueError) as exc:  # e.g. ragged nested sequences
        raise TypeError(f"{name} must be array-like of finite real numbers") from exc
    kind = raw.dtype.kind
    if kind == "c":
        raise TypeError(f"{name} must be array-like of finite real numbers, got complex values "
                        f"(dtype {raw.dtype})")
    if kind == "O":
        if not all(isinstance(v, numbers.Real) for v in raw.flat):
            bad = next(v for v in raw.flat if not isinstance(v, numbers.Real))
            raise TypeError(f"{name} must be array-like of finite real numbers, got an element "
                            f"of type {type(bad).__name__}")
    elif kind not in _REAL_KINDS:
        raise TypeError(f"{name} must be array-like of finite real numbers, got dtype {raw.dtype}")
    try:
        arr = np.asarray(raw, dtype=np.float64)  # no copy for float64 input
    except OverflowError as exc:  # e.g. a Python int beyond the float64 range
        raise ValueError(f"{name} must contain only finite values (no NaN or inf), got a value "
                         f"beyond the float64 range") from exc
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be array-like of finite real numbers") from exc
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
