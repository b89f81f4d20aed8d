"""What a reviewer reads first on the index: the violated claims, most severe first, and each
claim's "where" in one short line (the full sentence stays on the claim page and under the row).

Severity is read from the saved record (``severity``, :mod:`dpaudit.claims.severity`): a claim
refuted at a small delta comes before one refuted only near delta = 1 (``severity.delta_from``),
and within each group the larger factor (largest evidence / claimed epsilon) first.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

from dpaudit.reporting.view import as_float, format_delta, readable_reason

__all__ = ["WHERE_WIDTH", "where_short", "start_here"]

#: Longest "where" cell of the index, in characters (about one line of the column at 1400 px).
WHERE_WIDTH = 60


def _factor(record: Mapping[str, Any]) -> float | None:
    factor = as_float((record.get("severity") or {}).get("factor"))
    return factor if factor is not None and math.isfinite(factor) and factor > 0 else None


def where_short(record: Mapping[str, Any], width: int = WHERE_WIDTH) -> str:
    """One short line: ``factor 2 · only for alpha <= 0.01`` for a violated claim, the violation
    region otherwise; at most ``width`` characters (the counts in parentheses go first, then the
    line is cut with an ellipsis). The claim page carries the full sentence."""
    sev = record.get("severity") or {}
    region = readable_reason(str(record.get("violation_region") or ""))
    parts = []
    factor = _factor(record)
    if record.get("verdict") == "violated" and factor is not None:
        parts.append(f"factor {factor:.3g}" if factor < 1000 else f"factor {factor:,.0f}")
    if record.get("verdict") == "violated" and as_float(sev.get("delta_from")) is not None:
        parts.append(f"only for δ ≥ {format_delta(sev['delta_from'])}")
    if region:
        parts.append(region)
    text = " · ".join(parts)
    if len(text) > width and "(" in text:
        text = " · ".join(p.split(" (")[0] for p in parts)
    return text if len(text) <= width else text[:width - 1].rstrip() + "…"


def _rank(record: Mapping[str, Any]) -> tuple[int, float, str]:
    near_one = as_float((record.get("severity") or {}).get("delta_from")) is not None
    factor = _factor(record)
    return (1 if near_one else 0, -(factor if factor is not None else 0.0), record["id"])


def start_here(records: Sequence[Mapping[str, Any]]) -> list[dict[str, str]]:
    """The violated claims in reading order (most severe first: refuted at small delta before
    refuted only near delta = 1, then by factor), each with its link target and short "where"."""
    violated = sorted((r for r in records if r.get("verdict") == "violated"), key=_rank)
    return [{"id": r["id"], "where": where_short(r)} for r in violated]
