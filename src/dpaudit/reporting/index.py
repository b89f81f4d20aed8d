"""The machine-readable index of a report directory (``DIR/index.json``, schema ``dpaudit.report/1``).

One entry per claim: its id, its paper's key (:func:`~dpaudit.reporting.view.paper_key`, one
group per paper page), theorem, the claim instantiated at the worst audited point, the verdict
and its reason, the worst case's exact, accountant and lower-bound epsilons, the lemmas with
their status and method, and the paths of the claim's reports; ``readings`` when the claim
declares reading choices (the verdict is the primary reading's); ``partial`` and ``missing`` when
the run that wrote it was interrupted. Fields may be added, never renamed; the published JSON
Schema is ``dpaudit/reporting/schemas/report-1.schema.json``.

The schema and every added field: docs/reports.md#the-index-schema-field-by-field.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from dpaudit._version import __version__
from dpaudit.reporting.view import (citation, claim_formula, exact_kind, paper_key, paper_page,
                                    verdict_counts)

__all__ = ["INDEX_SCHEMA", "build_index", "index_entry"]

INDEX_SCHEMA = "dpaudit.report/1"


def index_entry(record: Mapping[str, Any]) -> dict[str, Any]:
    """The ``index.json`` row of one saved claim audit (paths relative to the report directory)."""
    worst = record.get("worst_case", {})
    return {
        "id": record["id"],
        "paper": paper_key(record),
        "source_file": record["paper"],
        "theorem": record["theorem"],
        "claimed": ({"epsilon": worst["claimed_epsilon"], "delta": worst["claimed_delta"]}
                    if worst.get("claimed_epsilon") is not None
                    else {"epsilon": record["claimed"]["epsilon"],
                          "delta": record["claimed"]["delta"]}),
        "claimed_example": {"epsilon": record["claimed"]["epsilon"],
                            "delta": record["claimed"]["delta"]},
        "verdict": record["verdict"],
        "worst_case": {
            "parameters": dict(worst.get("parameters") or {}),
            "epsilon_exact": worst.get("epsilon_exact"),
            "exact_kind": (exact_kind(worst) if worst.get("epsilon_exact") is not None
                           else None),
            "epsilon_accountant": worst.get("epsilon_accountant"),
            "epsilon_lower_bound": worst.get("epsilon_lower_bound"),
            "claimed_epsilon": worst.get("claimed_epsilon"),
            "claimed_delta": worst.get("claimed_delta"),
        },
        "lemmas": [{"statement": lem["statement"], "status": lem["status"],
                    "worst_ratio": lem.get("worst_ratio"), "method": lem.get("method", "sampled")}
                   for lem in record.get("lemmas", [])],
        "report": f"{record['id']}.html",
        "markdown": f"{record['id']}.md",
        "json": f"{record['id']}.json",
        "reason": record.get("reason", ""),
        "violation_region": str(record.get("violation_region") or ""),
        "severity": record.get("severity"),
        "formula": claim_formula(record),
        "citation": citation(record),
        "paper_page": paper_page(record),
        "version": record.get("claim", {}).get("provenance", {}).get("version", ""),
        "budget": record.get("budget"),
        "seed": record.get("seed"),
        "alpha": record.get("alpha"),
    } | ({"readings": [{k: r[k] for k in ("name", "primary", "verdict", "worst_point")}
                       for r in record["readings"]]} if record.get("readings") else {})


def build_index(records: Sequence[Mapping[str, Any]],
                missing: Sequence[str] | None = None) -> dict[str, Any]:
    """``index.json`` for these saved claim audits, one row per claim sorted by id; ``missing``
    (claims asked for that did not finish) marks the index ``partial``."""
    ordered = sorted(records, key=lambda r: r["id"])
    out = {"schema": INDEX_SCHEMA, "dpaudit_version": __version__,
           "counts": verdict_counts(ordered),
           "claims": [index_entry(r) for r in ordered]}
    if missing:
        out |= {"partial": True, "missing": sorted(missing)}
    return out
