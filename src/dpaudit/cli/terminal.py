"""Plain-text (ASCII) formatting of audit results for the terminal: summary tables and counts.
"""

from __future__ import annotations

import math
from typing import Any, Iterable, Sequence




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


def _table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    rows = [list(map(str, r)) for r in rows]
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(header)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip()]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    return "\n".join(lines)


def _summary_table(records: Sequence[dict[str, Any]]) -> str:
    """One row per claim: its claimed formula, then the evidence at its worst point next to the
    instance of the claim there (">=": a certified lower bound from a numerical bracket)."""
    from dpaudit.reporting.view import claim_formula, exact_kind, worst_claimed

    rows = []
    certified = False
    for r in records:
        w = r.get("worst_case", {})
        eps, delta = worst_claimed(r)
        exact = _num(w.get("epsilon_exact"))
        if w.get("epsilon_exact") is not None and exact_kind(w) != "exact":
            exact, certified = ">=" + exact, True
        rows.append([r["id"], claim_formula(r), f"({_num(eps)}, {_num(delta)})", exact,
                     _num(w.get("epsilon_accountant")), _num(w.get("epsilon_lower_bound")),
                     r["verdict"]])
    note = "(eps, delta) at worst point and the evidence columns are at the worst audited point"
    if certified:
        note += "; >= x: certified lower bound (numerical)"
    note += "; lower bound - : not run, 0: ran without evidence"
    return _table(["claim", "claimed", "at worst point", "exact eps", "accountant eps",
                   "lower bound", "verdict"], rows) + f"\n({note})"


def _counts_sentence(records: Sequence[dict[str, Any]]) -> str:
    n = {v: sum(1 for r in records if r["verdict"] == v) for v in ("violated", "inconclusive",
                                                                    "holds")}
    total = len(records)
    return (f"{total} claim{'s' if total != 1 else ''}: {n['violated']} violated, "
            f"{n['inconclusive']} inconclusive, {n['holds']} hold{'s' if n['holds'] == 1 else ''}.")

def _ascii(text: str) -> str:
    return text.replace("—", "-").replace("∞", "inf").replace("−", "-").replace("ε", "eps")


def _one_line(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        target = f" {exc.filename}" if exc.filename else ""
        return f"{exc.strerror}{':' if target else ''}{target}"
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
