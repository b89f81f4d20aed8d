"""Numbers and parameter points as they appear in the sentences of a claim's findings.

One home for the two formats every declaration's prose uses, so that the same value reads the same
in every paper's report: :func:`fmt` (a number to 4 significant digits) and
:func:`format_parameters` (a grid point as ``epsilon=1, T=64``).
"""

from __future__ import annotations

from typing import Any, Mapping

__all__ = ["fmt", "format_value", "format_parameters"]


def fmt(x: float | None) -> str:
    """A number for report prose: 4 significant digits, ``n/a`` for a missing value.

    Parameters
    ----------
    x : float or None
        The number.

    Returns
    -------
    str
        ``f"{x:.4g}"``, or ``"n/a"`` when ``x`` is ``None``.
    """
    return "n/a" if x is None else f"{x:.4g}"


def format_value(v: Any) -> str:
    """A parameter value: a float in ``g`` format (``1.0`` -> ``1``), anything else as ``str``."""
    return f"{v:g}" if isinstance(v, float) else str(v)


def format_parameters(parameters: Mapping[str, Any]) -> str:
    """``{"epsilon": 1.0, "T": 64}`` -> ``"epsilon=1, T=64"`` (for sentences in reports).

    Parameters
    ----------
    parameters : Mapping[str, Any]
        A grid point.

    Returns
    -------
    str
        The ``key=value`` pairs in order, or ``"(no parameters)"`` for an empty point.
    """
    return ", ".join(f"{k}={_parameter_value(v)}" for k, v in parameters.items()) \
        or "(no parameters)"


def _parameter_value(v: Any) -> str:
    """:func:`format_value`, except that a float ``g`` would print as ``1`` or ``-1`` keeps its
    digits: ``%g`` keeps 6, so 1 - 1e-7 would read "1", a value outside a range such as (0, 1)."""
    text = format_value(v)
    if isinstance(v, float) and text in ("1", "-1") and v not in (1.0, -1.0):
        return f"{v:.12g}"
    return text
