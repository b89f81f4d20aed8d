"""Plain-text (ASCII) formatting of audit results for the terminal: summary tables and counts.
"""

from __future__ import annotations

import math
import textwrap
from typing import Any, Iterable, Sequence

from dpaudit.evidence import NOT_COMPUTED, USER_LOWER_BOUND_LABEL

__all__ = ["SUMMARY_WIDTH", "ascii_text", "counts_sentence", "one_line_error", "summary_table",
           "text_table"]


# ------------------------------------------------------------------------------------------------
# Plain-text formatting for the terminal (ASCII only)
# ------------------------------------------------------------------------------------------------

def _num(x: Any) -> str:
    if x is None:
        return "-"
    if isinstance(x, str):
        return x
    x = float(x)
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return f"{x:.4g}"


def text_table(header: Sequence[str], rows: Iterable[Sequence[str]],
               first_width: int | None = None) -> str:
    """Left-aligned columns two spaces apart; ``first_width`` caps the first column's width (a
    longer cell overflows it)."""
    rows = [list(map(str, r)) for r in rows]
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(header)]
    if first_width is not None and widths:
        widths[0] = min(widths[0], max(first_width, len(header[0])))
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip()]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    return "\n".join(lines)


#: Widest line of the terminal summary: it must read unwrapped in a 100-column terminal or CI log
#: (prop-a6's formula made it 172 columns).
SUMMARY_WIDTH = 100


#: The exact column's tag for where the value comes from (spelled out in the table's note).
_ORIGIN_TAG = {"derived from the code": "code", "declared": "declared",
               "user-supplied": "user-supplied"}


def summary_table(records: Sequence[dict[str, Any]], width: int = SUMMARY_WIDTH) -> str:
    """One row per claim: the claim instantiated at its worst audited point, then the evidence
    there (">=": a certified lower bound from a numerical bracket) and the verdict.

    No line is wider than ``width``: the claimed formulas (one can be 70 characters) are left to
    ``dpaudit list`` and the reports, a claim id too long for its column gets a line of its own
    above its row, and the note is wrapped."""
    from dpaudit.reporting.view import exact_kind, exact_origin, worst_claimed, worst_point_record

    header = ["claim", "claimed at worst", "exact eps", "accountant", "lower bound", "verdict"]
    rows = []
    certified = user_lower = False
    origins: set[str] = set()
    for r in records:
        w = r.get("worst_case", {})
        eps, delta = worst_claimed(r)
        exact = _num(w.get("epsilon_exact"))
        if w.get("epsilon_exact") is not None and exact_kind(w) != "exact":
            exact, certified = ">=" + exact, True
        origin = exact_origin(worst_point_record(r))
        if origin:  # which evidence the number is: read from the code, declared, or the user's
            exact += f" ({_ORIGIN_TAG[origin]})"
            origins.add(origin)
        lower = _num(w.get("epsilon_lower_bound"))
        if w.get("epsilon_user_lower_bound") is not None:  # the user's own, tagged as such
            lower = (f"{lower}, " if w.get("epsilon_lower_bound") is not None else "") + \
                f"{_num(w['epsilon_user_lower_bound'])} (user)"
            user_lower = True
        rows.append([str(r["id"]), f"({_num(eps)}, {_num(delta)})", exact,
                     _num(w.get("epsilon_accountant")), lower, str(r["verdict"])])
    rest = [max([len(h)] + [len(row[i]) for row in rows]) for i, h in enumerate(header)][1:]
    budget = width - sum(rest) - 2 * len(rest)
    id_width = max([len(header[0])] + [len(row[0]) for row in rows if len(row[0]) <= budget])
    table_rows: list[list[str]] = []
    for row in rows:
        if len(row[0]) > id_width:  # its own line (ids are copied whole, never cut)
            table_rows.append([row[0]] + [""] * len(rest))
            row = [""] + row[1:]
        table_rows.append(row)
    lines = text_table(header, table_rows, first_width=id_width).splitlines()
    note = ("claimed at worst: the claim at its worst audited point, where the evidence columns "
            "are read; the claimed formulas are in dpaudit list and the reports")
    if certified:
        note += "; >= x: certified lower bound (numerical)"
    for origin in sorted(origins):
        note += f"; ({_ORIGIN_TAG[origin]}): {origin}"
    note += "; lower bound - : not run, 0: ran without evidence"
    if user_lower:
        note += f"; (user): {USER_LOWER_BOUND_LABEL}, {NOT_COMPUTED}"
    return "\n".join(lines + textwrap.wrap(f"({note})", width))


def counts_sentence(records: Sequence[dict[str, Any]]) -> str:
    """``3 claims: 1 violated, 0 inconclusive, 2 hold.`` for the report records ``records``."""
    n = {v: sum(1 for r in records if r["verdict"] == v) for v in ("violated", "inconclusive",
                                                                    "holds")}
    total = len(records)
    return (f"{total} claim{'s' if total != 1 else ''}: {n['violated']} violated, "
            f"{n['inconclusive']} inconclusive, {n['holds']} hold{'s' if n['holds'] == 1 else ''}.")


def ascii_text(text: str) -> str:
    """``text`` with the reports' non-ASCII symbols (dashes, infinity, minus, epsilon) spelled in
    ASCII, for terminals and CI logs that cannot show them."""
    return text.replace("—", "-").replace("∞", "inf").replace("−", "-").replace("ε", "eps")


def one_line_error(exc: BaseException) -> str:
    """``exc`` as one line: an ``OSError``'s reason and file, otherwise its type and message."""
    if isinstance(exc, OSError) and exc.strerror:
        target = f" {exc.filename}" if exc.filename else ""
        return f"{exc.strerror}{':' if target else ''}{target}"
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
