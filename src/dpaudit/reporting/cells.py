"""How one value of a saved claim audit reads in a report: numbers, parameters, table cells.

The shared vocabulary of the renderers (:mod:`dpaudit.reporting.view` builds its presentation
model from it, :mod:`~dpaudit.reporting.plots` its labels): epsilons and deltas to a few
significant digits with the infinity sign, parameters as ``T=64, alpha=0.1``, a JSON scalar as
cell text and a container by its size, a counterexample as ``(field, value)`` rows, and compact
JSON for a code block. Its input is the saved JSON (``None``: no such evidence; ``"inf"``:
an infinite epsilon), never a live object. See docs/layout.md#the-source-tree.
"""

from __future__ import annotations

import json
import math
from typing import Any, Mapping

__all__ = ["as_float", "format_epsilon", "format_delta", "format_value", "format_parameters",
           "format_privacy", "scalar_text", "container_text", "readable_value",
           "counterexample_rows", "compact_json", "pretty_json", "COUNTEREXAMPLE_ITEMS"]


def as_float(x: Any) -> float | None:
    """A JSON number (or ``"inf"``/``"-inf"``/``None``) as a float or ``None``."""
    if x is None:
        return None
    if isinstance(x, str):
        try:
            return float(x)
        except ValueError:
            return None
    if isinstance(x, bool):
        return float(x)
    if isinstance(x, (int, float)):
        return float(x)
    return None


def format_epsilon(x: Any, digits: int = 4) -> str:
    """An epsilon for a table cell: 4 significant digits, ``inf`` as the infinity sign, None as a dash."""
    v = as_float(x)
    if v is None:
        return "—"
    if math.isinf(v):
        return "∞" if v > 0 else "−∞"
    if math.isnan(v):
        return "nan"
    return f"{v:.{digits}g}"


def format_delta(x: Any) -> str:
    """A delta: ``0`` stays ``0``, small values in scientific notation."""
    v = as_float(x)
    if v is None:
        return "—"
    if v == 0:
        return "0"
    return f"{v:.3g}"


def format_value(x: Any) -> str:
    """A parameter value: floats to 4 significant digits, everything else via ``str``."""
    if isinstance(x, bool):
        return str(x)
    if isinstance(x, float):
        if math.isinf(x):
            return "∞" if x > 0 else "−∞"
        text = f"{x:.4g}"
        # 4 digits turn 0.99999 into "1", a value outside a range such as (0, 1): more digits
        return f"{x:.12g}" if text in ("1", "-1") and x not in (1.0, -1.0) else text
    if isinstance(x, (list, tuple)):
        return "(" + ", ".join(format_value(v) for v in x) + ")"
    return str(x)


def format_parameters(params: Mapping[str, Any] | None) -> str:
    """``{"T": 64, "alpha": 0.1}`` as ``T=64, alpha=0.1`` (empty mapping: a dash)."""
    if not params:
        return "—"
    return ", ".join(f"{k}={format_value(v)}" for k, v in params.items())


def format_privacy(epsilon: Any, delta: Any) -> str:
    """``(epsilon, delta)`` as ``(3, 2e-05)``."""
    return f"({format_epsilon(epsilon)}, {format_delta(delta)})"


def scalar_text(value: Any) -> str | None:
    """A JSON scalar as table text (``None`` for containers)."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return format_epsilon(value, 6)
    if isinstance(value, (int, str)):
        return " ".join(str(value).split())
    return None


def container_text(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return f"list of {len(value)} value{'' if len(value) == 1 else 's'} (in the JSON file)"
    if isinstance(value, Mapping):
        return f"{len(value)} field{'' if len(value) == 1 else 's'} (in the JSON file)"
    return str(value)


#: Items of a list shown in a counterexample cell before "... (N in all)"; the JSON has them all.
COUNTEREXAMPLE_ITEMS = 8


def readable_value(value: Any, depth: int = 0) -> str:
    """A JSON value as short readable text: numbers to 6 significant digits, lists in brackets
    (the first :data:`COUNTEREXAMPLE_ITEMS` items), objects as ``key=value, ...``."""
    if isinstance(value, Mapping):
        if depth >= 2:
            return f"{{{len(value)} fields}}"
        return ", ".join(f"{k}={readable_value(v, depth + 1)}" for k, v in value.items())
    if isinstance(value, (list, tuple)):
        if depth >= 3:
            return f"[{len(value)} items]"
        shown = [readable_value(v, depth + 1) for v in value[:COUNTEREXAMPLE_ITEMS]]
        inner = "; " if any(isinstance(v, Mapping) for v in value) else ", "
        more = f"{inner}... ({len(value)} in all)" if len(value) > COUNTEREXAMPLE_ITEMS else ""
        return "[" + inner.join(shown) + more + "]"
    text = scalar_text(value)
    return text if text is not None else str(value)


def counterexample_rows(counterexample: Any) -> tuple[tuple[str, str], ...]:
    """A lemma's counterexample as ``(field, readable value)`` rows for a two-column table, never
    raw JSON (a JSON block widened the lemma table to 990-1186 px inside a 746 px
    column). Long lists are cut to their first items; the saved JSON keeps the whole."""
    if isinstance(counterexample, Mapping):
        return tuple((str(k), readable_value(v)) for k, v in counterexample.items())
    return (("value", readable_value(counterexample)),)


def compact_json(value: Any, indent: int) -> str:
    pad, inner = " " * indent, " " * (indent + 2)
    flat = json.dumps(value, default=str, ensure_ascii=False)
    if len(flat) + indent <= 100 or not isinstance(value, (dict, list)) or not value:
        return flat
    if isinstance(value, dict):
        items = [f"{inner}{json.dumps(str(k), ensure_ascii=False)}: {compact_json(v, indent + 2)}"
                 for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if all(not isinstance(v, (dict, list)) for v in value):
        # A long list of scalars: wrap it in lines of about 100 characters, not one per line.
        lines, line = [], ""
        for v in value:
            token = json.dumps(v, default=str, ensure_ascii=False)
            if line and len(line) + len(token) + indent > 96:
                lines.append(line.rstrip())
                line = ""
            line += token + ", "
        lines.append(line.rstrip().rstrip(","))
        return "[\n" + ",\n".join(inner + ln.rstrip(",") for ln in lines) + "\n" + pad + "]"
    items = [inner + compact_json(v, indent + 2) for v in value]
    return "[\n" + ",\n".join(items) + "\n" + pad + "]"


def pretty_json(value: Any, max_chars: int = 6000) -> str:
    """Readable JSON for a code block (short containers on one line), truncated to ``max_chars``."""
    text = compact_json(value, 0)
    if len(text) > max_chars:
        text = text[:max_chars] + f"\n... ({len(text) - max_chars} more characters in the JSON file)"
    return text
