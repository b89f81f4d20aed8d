"""What a reviewer reads: the presentation model of one saved claim audit.

The Markdown and HTML renderers (:mod:`dpaudit.reporting.markdown`, :mod:`dpaudit.reporting.html`)
share this model so the two formats always say the same thing. Its input is the JSON a
:class:`dpaudit.audits.claim_audit.ClaimAudit` saved (``ClaimAudit.to_dict()`` plus the fields added
by :func:`dpaudit.reporting.writer.claim_record`), never a live object: ``dpaudit report DIR``
re-renders reports from disk without recomputing anything.

Numbers in that JSON follow ``claim_audit``'s conventions: ``None`` means "no such evidence" and
infinite epsilons are stored as the strings ``"inf"`` / ``"-inf"``.
"""

from __future__ import annotations

import ast
import json
import math
import re
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

__all__ = [
    "CLAIM_SCHEMA",
    "CAVEATS",
    "as_float",
    "format_epsilon",
    "format_delta",
    "format_value",
    "format_parameters",
    "format_privacy",
    "claim_statement",
    "verdict_sentence",
    "reproduce_command",
    "index_reproduce_command",
    "evidence_epsilon",
    "EvidenceTable",
    "evidence_table",
    "lemma_rows",
    "pretty_json",
    "validate_claim_record",
    "claim_context",
    "index_rows",
    "verdict_counts",
    "worst_claimed",
    "readable_reason",
]

#: Schema tag of a saved claim audit (``DIR/<claim id>.json``).
CLAIM_SCHEMA = "dpaudit.claim/1"

#: Caveats printed in every report (AUDIT-METHOD sections 3 and 5).
CAVEATS: tuple[str, ...] = (
    "Floating-point samplers are not exactly differentially private (Mironov 2012, \"On "
    "significance of the least significant bits for differential privacy\", CCS 2012): the "
    "mechanisms audited here draw noise in IEEE-754 doubles, so every epsilon on this page is that "
    "of the idealised real-valued mechanism; an attacker who sees the raw bits of the outputs can "
    "do better. No claim in the audited papers addresses this.",
    "Exact and accountant epsilons are computed in floating point; an exact epsilon counts as a "
    "counterexample only when it exceeds the claim by more than a relative 1e-6.",
    "An empirical lower bound is a one-sided (1 - alpha) Clopper-Pearson bound with the event chosen "
    "on a training split and evaluated on a fresh split (Bonferroni-corrected). It is valid for the "
    "implementation as run, and a claim can fail in ways a finite sample does not reveal: a bound "
    "at or below the claim is not evidence that the claim holds.",
    "Gaussian-DP (mu) summaries, where shown, assume a Gaussian trade-off curve and are never used "
    "to declare a claim violated.",
)

_VERDICT_TEXT = {
    "violated": "violated",
    "holds": "holds",
    "inconclusive": "inconclusive",
}


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
        return f"{x:.4g}"
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


def _algorithm_name(claim_id: str) -> str:
    return claim_id.rsplit("/", 1)[-1]


def claim_statement(record: Mapping[str, Any]) -> str:
    """The claim as a sentence a reviewer can check against the paper.

    Example: ``Theorem 7 of jkt12-colt.txt (COLT 2012) states that pigd is (3, 2e-05)-differentially
    private under replace-one neighbours, releasing the full-sequence.``
    """
    claim = record["claim"]
    prov = claim.get("provenance", {})
    where = prov.get("theorem") or "A statement"
    paper = prov.get("paper", "")
    version = prov.get("version", "")
    src = f" of {paper}" if paper else ""
    if version:
        src += f" ({version})"
    release = {
        "full-sequence": "the whole output sequence released",
        "final": "only the final output released",
        "window": "the outputs while the changed element is in the protected window released",
    }.get(claim.get("release", ""), f"release: {claim.get('release', '')}")
    if claim.get("window", {}).get("description"):  # window DP (claims.WindowScope)
        release = f"window-DP scope: {claim['window']['description']}"
    neighbour = {
        "replace-one": "replace-one neighbours (one loss replaced by any other in the class)",
        "add-remove": "add/remove-one neighbours",
    }.get(claim.get("neighbour", ""), f"{claim.get('neighbour', '')} neighbours")
    return (f"{where}{src} states that {_algorithm_name(claim['id'])} is "
            f"{format_privacy(claim['epsilon'], claim['delta'])}-differentially private under "
            f"{neighbour}, with {release}.")


_DICT_LITERAL = re.compile(r"\{[^{}]*\}")


def readable_reason(reason: str) -> str:
    """A verdict reason with Python dict literals of parameters written as ``k=v, ...``.

    ``decide_verdict`` names points as ``{'epsilon': 1.0, 'T': 64}``; reports print
    ``epsilon=1, T=64`` (4 significant digits). Anything that is not a dict literal is left as is.
    """
    def replace(match: re.Match[str]) -> str:
        try:
            value = ast.literal_eval(match.group(0))
        except (ValueError, SyntaxError):
            return match.group(0)
        return format_parameters(value) if isinstance(value, dict) and value else match.group(0)

    return _DICT_LITERAL.sub(replace, str(reason))


def verdict_sentence(record: Mapping[str, Any]) -> str:
    """The verdict in one sentence: the verdict word followed by the decisive reason."""
    verdict = _VERDICT_TEXT.get(record.get("verdict", ""), str(record.get("verdict")))
    reason = readable_reason(str(record.get("reason", "")).strip())
    claimed = format_privacy(record["claimed"]["epsilon"], record["claimed"]["delta"])
    head = f"The claimed {claimed}-DP guarantee of {record['id']} {_verdict_verb(verdict)}"
    return f"{head}: {reason}" if reason else f"{head}."


def _verdict_verb(verdict: str) -> str:
    if verdict == "violated":
        return "is violated"
    if verdict == "holds":
        return "holds at every audited point"
    return "could not be confirmed or refuted"


def reproduce_command(record: Mapping[str, Any]) -> str:
    """The shell command that recomputes this claim's audit bit for bit."""
    return (f"dpaudit audit {record['id']} --budget {record.get('budget', 'standard')} "
            f"--seed {record.get('seed', 0)} --alpha {format_value(float(record.get('alpha', 0.05)))}")


def index_reproduce_command(records: Sequence[Mapping[str, Any]], out: str = "DIR") -> str:
    """The command regenerating an index, when all its claims share budget, seed and alpha."""
    keys = {(r.get("budget"), r.get("seed"), r.get("alpha")) for r in records}
    if len(keys) != 1:
        return ""
    budget, seed, alpha = next(iter(keys))
    ids = " ".join(r["id"] for r in records)
    return (f"dpaudit audit-claims {ids} --budget {budget} --seed {seed} "
            f"--alpha {format_value(float(alpha))} --out {out}")


def evidence_epsilon(worst_case: Mapping[str, Any]) -> tuple[str, str]:
    """The best formal evidence at the worst point: ``(formatted epsilon, "exact"|"accountant"|"")``."""
    exact = as_float(worst_case.get("epsilon_exact"))
    if exact is not None:
        return format_epsilon(exact), "exact"
    acc = as_float(worst_case.get("epsilon_accountant"))
    if acc is not None:
        return format_epsilon(acc), "accountant"
    return "—", ""


def worst_claimed(record: Mapping[str, Any]) -> tuple[Any, Any]:
    """The claim instantiated at the worst audited point: ``(epsilon, delta)``.

    A claim stated for every epsilon is audited at several; the evidence at the worst point must be
    compared with the epsilon claimed *there*, not with the claim's representative value.
    """
    worst = record.get("worst_case", {})
    params = worst.get("parameters")
    eps = worst.get("claimed_epsilon")
    for p in record.get("points", []):
        if params and dict(p.get("parameters", {})) == dict(params):
            return p.get("claimed_epsilon", eps), p.get("claimed_delta")
    return (eps if eps is not None else record["claimed"]["epsilon"]), record["claimed"]["delta"]


@dataclass(frozen=True)
class EvidenceTable:
    """The grid points of an audit as table rows.

    ``parameter_names``: the union of parameter names, in first-seen order; ``rows``: one dict per
    point with ``parameters`` (formatted values by name), ``claimed``, ``delta``, ``exact``,
    ``accountant``, ``lower_bound``, ``ratio`` (largest evidence / claimed), ``counterexample`` (the
    reason the point refutes the claim, or ``""``), ``worst`` (whether it is the report's worst point)
    and ``evidence`` (pretty JSON of the point's other evidence, truncated).
    """

    parameter_names: tuple[str, ...]
    rows: tuple[dict[str, Any], ...]


def _counterexample(point: Mapping[str, Any]) -> str:
    # Mirrors GridPoint.counterexample on the saved (JSON) form of a point.
    claimed = float(point["claimed_epsilon"])
    exact = as_float(point.get("epsilon_exact"))
    lb = as_float(point.get("epsilon_lower_bound"))
    if exact is not None and exact > claimed * (1 + 1e-6):
        return f"exact epsilon {format_epsilon(exact)} > claimed {format_epsilon(claimed)}"
    if lb is not None and lb > claimed:
        return f"empirical lower bound {format_epsilon(lb)} > claimed {format_epsilon(claimed)}"
    return ""


def _ratio(point: Mapping[str, Any]) -> float | None:
    vals = [as_float(point.get(k)) for k in ("epsilon_exact", "epsilon_accountant",
                                             "epsilon_lower_bound")]
    vals = [v for v in vals if v is not None]
    if not vals:
        return None
    return max(vals) / float(point["claimed_epsilon"])


def evidence_table(record: Mapping[str, Any], evidence_chars: int = 3000) -> EvidenceTable:
    """Rows of the three kinds of evidence (exact, accountant, lower bound) per audited point."""
    points = list(record.get("points", []))
    names: list[str] = []
    for p in points:
        for k in p.get("parameters", {}):
            if k not in names:
                names.append(k)
    worst_params = record.get("worst_case", {}).get("parameters")
    rows = []
    worst_marked = False
    for p in points:
        params = p.get("parameters", {})
        is_worst = bool(worst_params) and not worst_marked and dict(params) == dict(worst_params)
        worst_marked = worst_marked or is_worst
        ratio = _ratio(p)
        rows.append({
            "parameters": {k: format_value(params[k]) if k in params else "" for k in names},
            "claimed": format_epsilon(p["claimed_epsilon"]),
            "delta": format_delta(p.get("claimed_delta")),
            "exact": format_epsilon(p.get("epsilon_exact")),
            "accountant": format_epsilon(p.get("epsilon_accountant")),
            "lower_bound": format_epsilon(p.get("epsilon_lower_bound")),
            "ratio": "—" if ratio is None else format_epsilon(ratio, 3),
            "counterexample": _counterexample(p),
            "worst": is_worst,
            "evidence": pretty_json(p.get("evidence", {}), evidence_chars) if p.get("evidence") else "",
        })
    return EvidenceTable(tuple(names), tuple(rows))


def lemma_rows(record: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Lemma checks with the provenance of the lemma (matched by statement) and the counterexample."""
    provenance = {lem["statement"]: lem.get("provenance", {})
                  for lem in record.get("claim", {}).get("lemmas", [])}
    rows = []
    for lem in record.get("lemmas", []):
        prov = provenance.get(lem["statement"], {})
        where = ", ".join(x for x in (prov.get("theorem", ""), prov.get("paper", ""),
                                      prov.get("version", "")) if x)
        ce = lem.get("counterexample")
        rows.append({
            "statement": lem["statement"],
            "where": where,
            "status": lem.get("status", "inconclusive"),
            "worst_ratio": format_epsilon(lem.get("worst_ratio"), 4),
            "examples": lem.get("examples", 0),
            "counterexample": pretty_json(ce) if ce else "",
        })
    # Lemmas the claim relies on that were not checked are listed too, so nothing is silently absent.
    checked = {lem["statement"] for lem in record.get("lemmas", [])}
    for statement, prov in provenance.items():
        if statement not in checked:
            where = ", ".join(x for x in (prov.get("theorem", ""), prov.get("paper", ""),
                                          prov.get("version", "")) if x)
            rows.append({"statement": statement, "where": where, "status": "not checked",
                         "worst_ratio": "—", "examples": 0, "counterexample": ""})
    return rows


def _compact(value: Any, indent: int) -> str:
    pad, inner = " " * indent, " " * (indent + 2)
    flat = json.dumps(value, default=str, ensure_ascii=False)
    if len(flat) + indent <= 100 or not isinstance(value, (dict, list)) or not value:
        return flat
    if isinstance(value, dict):
        items = [f"{inner}{json.dumps(str(k), ensure_ascii=False)}: {_compact(v, indent + 2)}"
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
    items = [inner + _compact(v, indent + 2) for v in value]
    return "[\n" + ",\n".join(items) + "\n" + pad + "]"


def pretty_json(value: Any, max_chars: int = 6000) -> str:
    """Readable JSON for a code block (short containers on one line), truncated to ``max_chars``."""
    text = _compact(value, 0)
    if len(text) > max_chars:
        text = text[:max_chars] + f"\n... ({len(text) - max_chars} more characters in the JSON file)"
    return text


_REQUIRED = ("id", "paper", "theorem", "claimed", "verdict", "worst_case", "lemmas", "claim",
             "points")


def validate_claim_record(record: Any, source: str = "record") -> Mapping[str, Any]:
    """Check that ``record`` is a saved claim audit; ``ValueError`` naming ``source`` otherwise."""
    if not isinstance(record, Mapping):
        raise ValueError(f"{source} is not a JSON object")
    if record.get("schema") != CLAIM_SCHEMA:
        raise ValueError(f"{source} is not a dpaudit claim audit (schema {CLAIM_SCHEMA!r} expected, "
                         f"got {record.get('schema')!r})")
    missing = [k for k in _REQUIRED if k not in record]
    if missing:
        raise ValueError(f"{source} lacks the field(s) {', '.join(missing)}")
    if record["verdict"] not in ("holds", "violated", "inconclusive"):
        raise ValueError(f"{source} has an unknown verdict {record['verdict']!r}")
    from dpaudit.reporting.schema import check_against_schema

    check_against_schema(record, CLAIM_SCHEMA, source)
    return record


def _depth_prefix(claim_id: str) -> str:
    return "../" * claim_id.count("/")


def claim_context(record: Mapping[str, Any]) -> dict[str, Any]:
    """Everything the claim templates print, formatted once (shared by Markdown and HTML)."""
    claim = record["claim"]
    prov = claim.get("provenance", {})
    worst = record.get("worst_case", {})
    ev, ev_kind = evidence_epsilon(worst)
    reproduce = reproduce_command(record)
    extra = str(record.get("reproduce") or "").strip()
    provenance_rows = [(label, value) for label, value in (
        ("Paper", prov.get("paper", "")),
        ("Version", prov.get("version", "")),
        ("Statement", prov.get("theorem", "")),
        ("Equation", prov.get("equation", "")),
        ("Location", prov.get("location", "")),
        ("Printed calibration", claim.get("calibration", "")),
        ("Neighbouring inputs", claim.get("neighbour", "")),
        ("Released", claim.get("release", "")),
        ("Window scope", claim.get("window", {}).get("description", "")),
    ) if value]
    code_labels = {"Equation", "Printed calibration"}
    return {
        "id": record["id"],
        "verdict": record["verdict"],
        "reason": readable_reason(record.get("reason", "")),
        "verdict_sentence": verdict_sentence(record),
        "statement": claim_statement(record),
        "claimed": format_privacy(record["claimed"]["epsilon"], record["claimed"]["delta"]),
        "provenance_rows": [{"label": k, "value": v, "code": k in code_labels}
                            for k, v in provenance_rows],
        "parameter_range": [{"name": k, "range": v}
                            for k, v in (claim.get("parameter_range") or {}).items()],
        "notes": claim.get("notes", ""),
        "worst": {
            "parameters": format_parameters(worst.get("parameters")),
            "claimed": format_epsilon(worst_claimed(record)[0]),
            "claimed_pair": format_privacy(*worst_claimed(record)),
            "exact": format_epsilon(worst.get("epsilon_exact")),
            "accountant": format_epsilon(worst.get("epsilon_accountant")),
            "lower_bound": format_epsilon(worst.get("epsilon_lower_bound")),
            "evidence": ev,
            "evidence_kind": ev_kind,
        },
        "n_points": len(record.get("points", [])),
        "table": evidence_table(record),
        "lemmas": lemma_rows(record),
        "findings": [str(f) for f in record.get("findings", [])],
        "recommended_calibration": record.get("recommended_calibration") or "",
        "reproduce": reproduce,
        "reproduce_extra": extra if extra and extra != reproduce else "",
        "budget": record.get("budget", ""),
        "seed": record.get("seed", ""),
        "alpha": format_value(float(record.get("alpha", 0.05))),
        "confidence": format_value(100 * (1 - float(record.get("alpha", 0.05)))),
        "seconds": f"{float(record.get('seconds', 0.0)):.1f}",
        "version": record.get("dpaudit_version", ""),
        "caveats": CAVEATS,
        "index_prefix": _depth_prefix(record["id"]),
        "basename": record["id"].rsplit("/", 1)[-1],
    }


def index_rows(records: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One formatted row per claim for the index tables, in the order given."""
    rows = []
    for r in records:
        worst = r.get("worst_case", {})
        prov = r.get("claim", {}).get("provenance", {})
        rows.append({
            "id": r["id"],
            "paper": r.get("paper", ""),
            "version": prov.get("version", ""),
            "theorem": r.get("theorem", ""),
            "claimed": format_privacy(r["claimed"]["epsilon"], r["claimed"]["delta"]),
            "worst_claimed": format_privacy(*worst_claimed(r)),
            "exact": format_epsilon(worst.get("epsilon_exact")),
            "accountant": format_epsilon(worst.get("epsilon_accountant")),
            "lower_bound": format_epsilon(worst.get("epsilon_lower_bound")),
            "worst_parameters": format_parameters(worst.get("parameters")),
            "verdict": r["verdict"],
            "reason": readable_reason(r.get("reason", "")),
            "lemmas_failed": sum(1 for lem in r.get("lemmas", []) if lem.get("status") != "holds"),
            "lemmas": len(r.get("lemmas", [])),
            "budget": r.get("budget", ""),
            "seed": r.get("seed", ""),
        })
    return rows


def verdict_counts(records: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """How many claims got each verdict (all three keys always present)."""
    counts = {"violated": 0, "inconclusive": 0, "holds": 0}
    for r in records:
        counts[r["verdict"]] = counts.get(r["verdict"], 0) + 1
    return counts
