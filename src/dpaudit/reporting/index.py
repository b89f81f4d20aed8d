"""The machine-readable index of a report directory (``DIR/index.json``, schema ``dpaudit.report/1``).

Schema (fields may be added, never renamed)::

    {"schema": "dpaudit.report/1",
     "claims": [{"id": "jkt12-colt/pigd", "paper": "jkt12", "theorem": "Theorem 7",
                 "claimed": {"epsilon": 3.0, "delta": 2e-05},
                 "verdict": "holds|violated|inconclusive",
                 "worst_case": {"parameters": {}, "epsilon_exact": null,
                                "epsilon_accountant": null, "epsilon_lower_bound": null},
                 "lemmas": [{"statement": "...", "status": "holds|violated|inconclusive",
                             "method": "sampled|smt-proved|smt-refuted|smt-unknown|...",
                             "worst_ratio": null}],
                 "report": "jkt12-colt/pigd.html"}]}

Added fields: top level ``dpaudit_version`` and ``counts`` (claims per verdict); per claim
``reason`` (the verdict's one-sentence reason), ``version`` (of the paper), ``markdown`` and
``json`` (paths of the other two files, relative to DIR), ``budget``, ``seed``, ``alpha``;
``worst_case.claimed_epsilon`` (the claim instantiated at the worst point); ``violation_region``
(where the refuting points lie), ``formula`` (the claimed privacy over the claim's parameters),
``citation``, ``paper_page`` (``papers/<paper>.html``), ``worst_case.exact_kind``, ``source_file``
(the text file of the paper the claim was read from, e.g. ``jkt12-colt.txt``).

``paper`` is the paper's key (:func:`~dpaudit.reporting.view.paper_key`: ``jkt12`` for both
``jkt12-colt/*`` and ``jkt12-arxiv/*``; a user claim's whole namespace), so that grouping the
index by it gives one group per paper, as the paper pages do (it held the source file
name, which split jkt12 in two).

``claimed`` is the claim instantiated at the worst audited point (what the verdict compares the
evidence with; the same as ``worst_case.claimed_*``); ``claimed_example`` is the claim's default
instance (the representative (epsilon, delta) of its declaration, e.g. epsilon = 1 for a claim
stated for every epsilon). ``readings``: one entry per reading of an ambiguous passage (name,
primary, verdict, worst point), present when the claim declares reading choices; the claim's
``verdict`` is the primary reading's. Top level ``partial: true`` and ``missing`` (claim ids asked
for but not finished) when the run that wrote the index was interrupted or lost its scheduler.
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
