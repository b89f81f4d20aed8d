"""What a reviewer reads: the presentation model of one saved claim audit.

The Markdown and HTML renderers (:mod:`dpaudit.reporting.markdown`, :mod:`dpaudit.reporting.html`)
share this model so the two formats always say the same thing. Its input is the JSON a
:class:`dpaudit.claims.record.ClaimAudit` saved (``ClaimAudit.to_dict()`` plus the fields added
by :func:`dpaudit.reporting.writer.claim_record`), never a live object: ``dpaudit report DIR``
re-renders reports from disk without recomputing anything.

Numbers in that JSON follow ``claim_audit``'s conventions: ``None`` means "no such evidence" and
infinite epsilons are stored as the strings ``"inf"`` / ``"-inf"``.
"""

from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from dpaudit.evidence import (CERTIFIED, EXACT, USER_EXACT_LABEL, USER_LOWER_BOUND_LABEL,
                              USER_SUPPLIED, EvidenceOrigin, PointEvidence)
from dpaudit.reporting.caveats import CAVEATS, caveats_for, release_dtypes
from dpaudit.reporting.cells import (as_float, compact_json, container_text, counterexample_rows,
                                     format_delta, format_epsilon, format_parameters,
                                     format_privacy, format_value, pretty_json, scalar_text)
from dpaudit.reporting.commands import (index_reproduce_command, needed_plugins,
                                        recorded_command, reproduce_command)


__all__ = [
    "CLAIM_SCHEMA",
    "CAVEATS",
    "caveats_for",
    "release_dtypes",
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
    "needed_plugins",
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
    "claim_formula",
    "citation",
    "exact_kind",
    "exact_header",
    "format_exact",
    "lower_bound_state",
    "varying_parameters",
    "paper_key",
    "paper_version",
    "paper_page",
    "paper_sections",
    "claim_formula_at_worst",
    "run_settings",
    "count_phrase",
    "reason_detail",
    "evidence_rows",
    "WORST_ROWS",
    "SHORT_TABLE",
]

#: Schema tag of a saved claim audit (``DIR/<claim id>.json``).
CLAIM_SCHEMA = "dpaudit.claim/1"

_VERDICT_TEXT = {
    "violated": "violated",
    "holds": "holds",
    "inconclusive": "inconclusive",
}


def _algorithm_name(claim_id: str) -> str:
    return claim_id.rsplit("/", 1)[-1]


def claim_formula(record: Mapping[str, Any]) -> str:
    """The one statement of the claimed privacy: the paper's formula (``"(3 eps, 2 delta)"``) or,
    for a claim with fixed parameters, ``"(1, 1e-05)"``. Printed the same way by ``dpaudit list``,
    the CLI summary, the index and the verdict sentence."""
    claim = record.get("claim", {})
    formula = str(claim.get("formula") or "").strip()
    if formula:
        return formula
    return format_privacy(claim.get("epsilon", record["claimed"]["epsilon"]),
                          claim.get("delta", record["claimed"]["delta"]))


def claim_formula_at_worst(record: Mapping[str, Any]) -> tuple[str, str]:
    """The claim as the verdict sentence quotes it, ``(formula, where)``: the formula when the
    claim has one (``where`` empty), else the ``(epsilon, delta)`` claimed at the point the
    sentence speaks of (the worst audited point) and, when that differs from the claim's
    representative value (a claim whose epsilon varies over its grid, e.g. a library's accountant
    at each setting), ``where`` = ``" at (parameters)"`` of that point."""
    claim = record.get("claim", {})
    if str(claim.get("formula") or "").strip():
        return claim_formula(record), ""
    eps, delta = worst_claimed(record)
    rep = (claim.get("epsilon", record["claimed"]["epsilon"]),
           claim.get("delta", record["claimed"]["delta"]))
    if eps is None or delta is None or (as_float(eps), as_float(delta)) == (
            as_float(rep[0]), as_float(rep[1])):
        return claim_formula(record), ""
    params = (record.get("worst_case") or {}).get("parameters") or {}
    return format_privacy(eps, delta), (f" at ({format_parameters(params)})" if params else "")


def citation(record: Mapping[str, Any]) -> str:
    """The paper in words (authors, title, venue, version); the file name when none was given."""
    claim = record.get("claim", {})
    prov = claim.get("provenance", {})
    text = str(claim.get("citation") or "").strip()
    if text:
        return text
    paper = prov.get("paper", "") or record.get("paper", "")
    version = prov.get("version", "")
    return f"{paper} ({version})" if version else paper


def is_paper_claim(record: Mapping[str, Any]) -> bool:
    """Whether the claim is stated in a paper (the bundled papers), not in a design document, a
    library's documentation or code (a :class:`dpaudit.Source` of another ``kind``)."""
    return record.get("claim", {}).get("provenance", {}).get("kind", "paper") == "paper"


def claim_statement(record: Mapping[str, Any]) -> str:
    """The claim as a sentence a reviewer can check against the paper.

    Example: ``Theorem 7 (PIGD Privacy) of Jain, Kothari, Thakurta: Differentially Private Online
    Learning, COLT 2012 states that pigd is (3 eps, 2 delta)-differentially private for every
    parameter in its stated range, under replace-one neighbours, ...``
    """
    claim = record["claim"]
    prov = claim.get("provenance", {})
    own = str(claim.get("statement") or "").strip()
    if own:
        # A user's (or a library's) claim is quoted in its own words, then where it is stated
        # (whatever its Source's kind: a user claim citing a paper keeps its own statement).
        where = ", ".join(x for x in (citation(record), prov.get("theorem", "")) if x)
        return f"{own}{'' if own.endswith('.') else '.'} (Stated in {where}.)" if where else own
    where = prov.get("theorem") or "A statement"
    src = citation(record)
    src = f" of {src}" if src else ""
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
    scope = " for every parameter in its stated range" if claim.get("formula") else ""
    return (f"{where}{src} states that {_algorithm_name(claim['id'])} is "
            f"{claim_formula(record)}-differentially private{scope}, under "
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
    """The verdict in one sentence: the claim's formula, the verdict, where, and the decisive reason.

    ``The claimed (3 eps, 2 delta)-DP guarantee of jkt12-colt/pocp is violated only for
    epsilon >= 818 (3 of 9 audited points); strongest at epsilon=1000, ...: exact epsilon ... >
    claimed 3000.``
    """
    verdict = _VERDICT_TEXT.get(record.get("verdict", ""), str(record.get("verdict")))
    reason = readable_reason(str(record.get("reason", "")).strip())
    formula, where = claim_formula_at_worst(record)
    head = f"The claimed {formula}-DP guarantee of {record['id']}{where}"
    if verdict == "violated" and reason.startswith("Violated "):
        return f"{head} is v{reason[1:]}"
    head = f"{head} {_verdict_verb(verdict)}"
    if re.match(r"[A-Z][a-z]", reason):  # "...: no counterexample", not "...: No counterexample"
        reason = reason[0].lower() + reason[1:]
    return f"{head}: {reason}" if reason else f"{head}."


def _verdict_verb(verdict: str) -> str:
    if verdict == "violated":
        return "is violated"
    if verdict == "holds":
        return "holds at every audited point"
    return "could not be confirmed or refuted"


def exact_kind(point: Mapping[str, Any]) -> str:
    """``"exact"`` or ``"certified lower bound (numerical)"`` for a saved point (old records:
    exact)."""
    return CERTIFIED if point.get("exact_kind") == CERTIFIED else EXACT


def exact_header(points: Sequence[Mapping[str, Any]]) -> str:
    """Column title of the formal value: by the kinds present among ``points``."""
    kinds = {exact_kind(p) for p in points if as_float(p.get("epsilon_exact")) is not None}
    if kinds == {CERTIFIED}:
        return "certified lower bound ε (numerical)"
    if kinds == {EXACT, CERTIFIED}:
        return "exact or certified ε"
    return "exact ε"


#: What a point's exact origin (``PointEvidence.exact_origin``) says, in the reports' words.
_EXACT_ORIGIN = {EvidenceOrigin.DERIVED: "derived from the code", EvidenceOrigin.DECLARED:
                 "declared", EvidenceOrigin.USER_SUPPLIED: "user-supplied"}


def exact_origin(point: Mapping[str, Any]) -> str:
    """Where a point's exact value comes from: ``"derived from the code"`` (a law dpaudit read by
    replaying the release's draws), ``"declared"`` (a law the claim declared, tested against runs
    of the release), ``"user-supplied"`` (a number the user computed) or ``""`` (dpaudit's own
    closed form of a bundled paper's mechanism, or no exact value)."""
    if as_float(point.get("epsilon_exact")) is None:
        return ""
    if point.get("exact_kind") == USER_SUPPLIED:
        return "user-supplied"
    return _EXACT_ORIGIN.get(PointEvidence.saved(point).exact_origin, "")


def accountant_origin(point: Mapping[str, Any]) -> str:
    """``"trusted primitives"`` when a point's accountant was composed from the laws of the
    primitives the claim named (``Claim(primitives=...)``: taken on trust, not read from their
    code), else ``""`` (the claim's noise schedule, or a user-supplied number, said elsewhere)."""
    origin = PointEvidence.saved(point).accountant_origin
    return origin.value if origin is EvidenceOrigin.TRUSTED_PRIMITIVES else ""


def worst_point_record(record: Mapping[str, Any]) -> Mapping[str, Any]:
    """The saved point the record's ``worst_case`` summarises (with its evidence), or the
    ``worst_case`` itself when no point matches."""
    worst = record.get("worst_case", {}) or {}
    for point in record.get("points", []) or []:
        if (point.get("parameters") == worst.get("parameters")
                and point.get("claimed_epsilon") == worst.get("claimed_epsilon")):
            return point
    return worst


def format_exact(point: Mapping[str, Any]) -> str:
    """The formal value of a point: ``2829`` when exact, ``≥ 2829`` when a certified lower bound."""
    v = format_epsilon(point.get("epsilon_exact"))
    if as_float(point.get("epsilon_exact")) is not None and exact_kind(point) == CERTIFIED:
        return f"≥ {v}"
    return v


def format_user_lower_bound(point: Mapping[str, Any]) -> str:
    """A saved point's user-supplied lower bound (``Claim.lower_bound``), or ``""`` if none."""
    value = as_float(point.get("epsilon_user_lower_bound"))
    return "" if value is None else format_epsilon(value)


def lower_bound_state(point: Mapping[str, Any]) -> str:
    """``"not run"`` (no empirical test at the point), ``"no evidence"`` (ran, bound 0) or
    ``"evidence"`` (ran, bound above 0)."""
    lb = as_float(point.get("epsilon_lower_bound"))
    if lb is None:
        return "not run"
    return "evidence" if lb > 0 else "no evidence"


def evidence_epsilon(worst_case: Mapping[str, Any]) -> tuple[str, str]:
    """The best formal evidence at the worst point: ``(formatted epsilon, kind)`` with kind
    ``"exact"``, ``"certified lower bound (numerical)"``, ``"accountant"`` or ``""``."""
    exact = as_float(worst_case.get("epsilon_exact"))
    if exact is not None:
        return format_epsilon(exact), exact_kind(worst_case)
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
    """The grid points of an audit as table rows, evidence first.

    ``parameter_names``: the union of parameter names, in first-seen order; ``varying``: those
    that differ between points (the row label); ``exact_header``: the title of the formal column
    (exact, certified lower bound, or both); ``rows``: one dict per point with ``label`` (the
    varying parameters), ``parameters`` (formatted values by name), ``parameters_text`` (all of
    them), ``claimed``, ``delta``, ``exact`` (``≥ x`` for a certified lower bound),
    ``exact_kind``, ``accountant``, ``lower_bound`` and ``lower_bound_state`` (``"not run"``:
    ``—``; ``"no evidence"``: ran, bound 0; ``"evidence"``), ``ratio`` (largest evidence /
    claimed), ``counterexample`` (why the point refutes the claim, or ``""``), ``worst``,
    ``parameter_rows`` (``(name, value)`` of every parameter), ``evidence_rows`` and
    ``evidence_omitted`` (the point's other evidence as ``(field, value)`` rows, see
    :func:`evidence_rows`). ``top`` holds the rows a reader sees first (at most
    :data:`WORST_ROWS`: the worst point, then the counterexamples and the largest ratios, in grid
    order; every row when there are at most :data:`SHORT_TABLE`); ``rest`` the others, which the
    pages put behind a toggle.

    A claim audited under several readings of an ambiguous passage rests its verdict on the
    primary reading's points only (the page said "48 audited points" in its header and
    "12" in its verdict, and badged WORST a row of ratio 0.108 above rows of 0.493): then
    ``primary_reading`` names it, ``primary_points`` counts its points, the ``worst`` row is the
    primary reading's worst point, and each row's ``reading`` is ``""`` under the primary reading,
    else the name of the reading it was audited under.
    """

    parameter_names: tuple[str, ...]
    rows: tuple[dict[str, Any], ...]
    varying: tuple[str, ...] = ()
    exact_header: str = "exact ε"
    has_certified: bool = False
    has_not_run: bool = False
    has_no_evidence: bool = False
    top: tuple[dict[str, Any], ...] = ()
    rest: tuple[dict[str, Any], ...] = ()
    primary_reading: str = ""
    primary_points: int = 0


#: How many evidence rows a claim page shows before the "all audited points" toggle.
WORST_ROWS = 8
#: Tables of at most this many rows are shown whole (a toggle hiding a few rows helps nobody).
SHORT_TABLE = 12


def _worst_first(rows: Sequence[dict[str, Any]], ratios: Sequence[float | None],
                 limit: int = WORST_ROWS) -> tuple[tuple[dict[str, Any], ...],
                                                   tuple[dict[str, Any], ...]]:
    """Split ``rows`` into the ``limit`` a reader must see (worst point, counterexamples, largest
    ratio; rows of the primary reading before others) and the rest, both in grid order."""
    if len(rows) <= max(limit, SHORT_TABLE):
        return tuple(rows), ()
    def key(i: int) -> tuple[bool, bool, bool, float, int]:
        r = ratios[i]
        score = -math.inf if r is None or math.isnan(r) else r
        # Under several readings, the primary reading's rows (the verdict's) come first.
        return (not rows[i]["worst"], not rows[i]["counterexample"], bool(rows[i].get("reading")),
                -score, i)

    rank = sorted(range(len(rows)), key=key)
    keep = set(rank[:limit])
    return (tuple(r for i, r in enumerate(rows) if i in keep),
            tuple(r for i, r in enumerate(rows) if i not in keep))


def evidence_rows(evidence: Mapping[str, Any] | None,
                  limit: int = 16) -> tuple[tuple[tuple[str, str], ...], int]:
    """A point's other evidence as readable ``(field, value)`` rows, never raw JSON.

    Scalars are shown as they are (long strings in full), one level of nested objects with
    dotted names (``empirical.statistic_name``); lists and deeper objects are named with their
    size and left to the saved JSON file. Returns the first ``limit`` rows and how many fields
    were left out.
    """
    rows: list[tuple[str, str]] = []
    for key, value in (evidence or {}).items():
        text = scalar_text(value)
        if text is not None:
            rows.append((str(key), text))
        elif isinstance(value, Mapping):
            for sub, inner in value.items():
                inner_text = scalar_text(inner)
                rows.append((f"{key}.{sub}", inner_text if inner_text is not None
                             else container_text(inner)))
        else:
            rows.append((str(key), container_text(value)))
    return tuple(rows[:limit]), max(0, len(rows) - limit)


def _counterexample(point: Mapping[str, Any]) -> str:
    # Mirrors GridPoint.counterexample on the saved (JSON) form of a point.
    claimed = float(point["claimed_epsilon"])
    exact = as_float(point.get("epsilon_exact"))
    lb = as_float(point.get("epsilon_lower_bound"))
    if exact is not None and exact > claimed * (1 + 1e-6):
        what = ("certified lower bound on epsilon (numerical)" if exact_kind(point) == CERTIFIED
                else USER_EXACT_LABEL if point.get("exact_kind") == USER_SUPPLIED
                else "exact epsilon")
        return f"{what} {format_epsilon(exact)} > claimed {format_epsilon(claimed)}"
    user = as_float(point.get("epsilon_user_lower_bound"))
    if user is not None and user > claimed * (1 + 1e-6):
        return (f"{USER_LOWER_BOUND_LABEL} {format_epsilon(user)} > claimed "
                f"{format_epsilon(claimed)} (resting on a user-supplied number)")
    if lb is not None and lb > claimed:
        return f"empirical lower bound {format_epsilon(lb)} > claimed {format_epsilon(claimed)}"
    return ""


def _ratio(point: Mapping[str, Any]) -> float | None:
    vals = [as_float(point.get(k)) for k in ("epsilon_exact", "epsilon_accountant",
                                             "epsilon_lower_bound", "epsilon_user_lower_bound")]
    vals = [v for v in vals if v is not None]
    if not vals:
        return None
    return max(vals) / float(point["claimed_epsilon"])


def varying_parameters(points: Sequence[Mapping[str, Any]]) -> list[str]:
    """Parameter names whose value differs between ``points`` (all names when none differs)."""
    names: list[str] = []
    for p in points:
        names += [k for k in (p.get("parameters") or {}) if k not in names]
    varying = [k for k in names
               if len({repr((p.get("parameters") or {}).get(k)) for p in points}) > 1]
    return varying or names


def evidence_table(record: Mapping[str, Any]) -> EvidenceTable:
    """Rows of the three kinds of evidence (exact, accountant, lower bound) per audited point."""
    points = list(record.get("points", []))
    names: list[str] = []
    for p in points:
        for k in p.get("parameters", {}):
            if k not in names:
                names.append(k)
    varying = varying_parameters(points)
    worst_params = record.get("worst_case", {}).get("parameters")
    readings = [r for r in record.get("readings") or [] if isinstance(r, Mapping)]
    primary = next((r for r in readings if r.get("primary")), None)
    rows = []
    ratios: list[float | None] = []
    worst_marked = False
    for number, p in enumerate(points, start=1):
        params = p.get("parameters", {})
        is_worst = bool(worst_params) and not worst_marked and dict(params) == dict(worst_params)
        worst_marked = worst_marked or is_worst
        ratio = _ratio(p)
        ratios.append(ratio)
        state = lower_bound_state(p)
        ev_rows, ev_omitted = evidence_rows(p.get("evidence"))
        rows.append({
            "number": number,  # the point's label in the evidence chart (#number)
            "label": format_parameters({k: params[k] for k in varying if k in params}),
            "parameters": {k: format_value(params[k]) if k in params else "" for k in names},
            "parameters_text": format_parameters(params),
            "parameter_rows": tuple((k, format_value(v)) for k, v in params.items()),
            "claimed": format_epsilon(p["claimed_epsilon"]),
            "delta": format_delta(p.get("claimed_delta")),
            "exact": format_exact(p),
            "exact_kind": exact_kind(p) if as_float(p.get("epsilon_exact")) is not None else "",
            "accountant": format_epsilon(p.get("epsilon_accountant")),
            "lower_bound": format_epsilon(p.get("epsilon_lower_bound")),
            "lower_bound_state": state,
            "user_lower_bound": format_user_lower_bound(p),
            "ratio": "—" if ratio is None else format_epsilon(ratio, 3),
            "counterexample": _counterexample(p),
            "worst": is_worst,
            "evidence_rows": ev_rows,
            "evidence_omitted": ev_omitted,
            "reading": _reading_of(params, readings, primary),
        })
    top, rest = _worst_first(rows, ratios)
    return EvidenceTable(tuple(names), tuple(rows), tuple(varying), exact_header(points),
                         any(r["exact_kind"] == CERTIFIED for r in rows),
                         any(r["lower_bound_state"] == "not run" for r in rows),
                         any(r["lower_bound_state"] == "no evidence" for r in rows),
                         top, rest,
                         str(primary.get("name", "")) if primary and len(readings) > 1 else "",
                         sum(1 for r in rows if not r["reading"]) if primary else len(rows))


def _reading_of(params: Mapping[str, Any], readings: Sequence[Mapping[str, Any]],
                primary: Mapping[str, Any] | None) -> str:
    """``""`` for a point under the primary reading (or of a claim without readings), else the
    name of the reading whose choices the point's parameters make (a point without a reading's
    parameter counts under every value of it, as :meth:`ClaimAudit.primary_points` reads it)."""
    def under(reading: Mapping[str, Any]) -> bool:
        choices = reading.get("parameters") or {}
        return all(params.get(k, v) == v for k, v in choices.items())

    if primary is None or under(primary):
        return ""
    return next((str(r.get("name", "")) for r in readings if under(r)), "another reading")


#: A lemma counterexample longer than this (characters of JSON) is left to the JSON file.
COUNTEREXAMPLE_CHARS = 6000


def lemma_rows(record: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Lemma checks with the provenance of the lemma (matched by statement) and the counterexample
    (whole, or a ``counterexample_note`` pointing to the JSON file when it is too long to show)."""
    provenance = {lem["statement"]: lem.get("provenance", {})
                  for lem in record.get("claim", {}).get("lemmas", [])}
    rows = []
    for number, lem in enumerate(record.get("lemmas", [])):
        # SMT checks name the encoded dimension/constants in a trailing " [...]"
        prov = (provenance.get(lem["statement"])
                or provenance.get(lem["statement"].split(" [")[0], {}))
        where = ", ".join(x for x in (prov.get("theorem", ""), prov.get("paper", ""),
                                      prov.get("version", "")) if x)
        ce = lem.get("counterexample")
        ce_text = compact_json(ce, 0) if ce else ""
        ce_note = ""
        if len(ce_text) > COUNTEREXAMPLE_CHARS:  # shown whole or not at all: never cut JSON
            ce_note = (f"The counterexample is {len(ce_text)} characters of JSON; it is the field "
                       f"lemmas[{number}].counterexample of the saved JSON file.")
            ce_text = ""
        rows.append({
            "statement": lem["statement"],
            "where": where,
            "status": lem.get("status", "inconclusive"),
            "worst_ratio": format_epsilon(lem.get("worst_ratio"), 4),
            "examples": lem.get("examples", 0),
            "counterexample": ce_text,
            "counterexample_rows": counterexample_rows(ce) if ce_text else (),
            "counterexample_field": f"lemmas[{number}].counterexample",
            "counterexample_note": ce_note,
            "note": lem.get("note", ""),
            "method": "—" if lem.get("status") == "not checked" else lem.get("method", "sampled"),
            "how": _lemma_how(lem),
        })
    # Lemmas the claim relies on that were not checked are listed too, so nothing is silently absent.
    checked = {lem["statement"] for lem in record.get("lemmas", [])}
    checked |= {x.split(" [")[0] for x in checked}
    for statement, prov in provenance.items():
        if statement not in checked:
            where = ", ".join(x for x in (prov.get("theorem", ""), prov.get("paper", ""),
                                          prov.get("version", "")) if x)
            rows.append({"statement": statement, "where": where, "status": "not checked",
                         "worst_ratio": "—", "examples": 0, "counterexample": "",
                         "counterexample_note": "",
                         "note": "no check of this statement is recorded in this audit",
                         "method": "—", "how": ""})
    return rows


def _lemma_how(lem: Mapping[str, Any]) -> str:
    """How an SMT lemma was checked (solver, encoding, time, outcome), in one line."""
    d = lem.get("details") or {}
    if not str(lem.get("method", "")).startswith("smt"):
        return ""
    parts = [str(d.get("solver", "")), str(d.get("encoding", "")),
             f"{d.get('seconds', 0):.2f} s (each call <= {d.get('timeout_s', 0):g} s)",
             str(d.get("reason", ""))]
    return "; ".join(p for p in parts if p)


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
    reproduce = reproduce_command(record)  # a command, or a note when none reproduces it
    note = reproduce[1:-1] if reproduce.startswith("(") and reproduce.endswith(")") else ""
    # A dpaudit.Source's fields under their own labels (title, kind, version, location, quote,
    # url); a paper's provenance under the paper's (statement number, equation, location).
    source_rows = ((("Source", citation(record)), ("Kind", prov.get("kind", "")),
                    ("Version", prov.get("version", "")), ("Location", prov.get("theorem", "")),
                    ("Quote", prov.get("equation", "")), ("URL", prov.get("location", "")))
                   if not is_paper_claim(record) or claim.get("statement") else
                   (("Paper", citation(record)), ("Source file", prov.get("paper", "")),
                    ("Version", prov.get("version", "")), ("Statement", prov.get("theorem", "")),
                    ("Equation", prov.get("equation", "")), ("Location", prov.get("location", ""))))
    provenance_rows = [(label, value) for label, value in (
        *source_rows,
        ("Printed calibration", claim.get("calibration", "")),
        ("Neighbouring inputs", claim.get("neighbour", "")),
        ("Released", claim.get("release", "")),
        ("Window scope", claim.get("window", {}).get("description", "")),
    ) if value]
    code_labels = {"Equation", "Printed calibration"}
    wclaimed = worst_claimed(record)
    claimed_at_worst = as_float(wclaimed[0])
    lb = as_float(worst.get("epsilon_lower_bound"))
    exact_v = as_float(worst.get("epsilon_exact"))
    user_exact = exact_v is not None and worst.get("exact_kind") == USER_SUPPLIED
    user_lb = as_float(worst.get("epsilon_user_lower_bound"))
    return {
        "id": record["id"],
        "formula": claim_formula(record),
        "citation": citation(record),
        "paper_key": paper_key(record),
        "version_name": str(prov.get("version", "")),
        "region": str(record.get("violation_region") or ""),
        "severity": str((record.get("severity") or {}).get("sentence") or ""),
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
            "claimed": format_epsilon(wclaimed[0]),
            "claimed_pair": format_privacy(*wclaimed),
            "exact": format_exact(worst),
            "exact_label": ("certified lower bound ε (numerical)"
                            if exact_v is not None and exact_kind(worst) == CERTIFIED
                            else "user-supplied exact ε" if user_exact else "exact ε"),
            "exact_origin": "" if user_exact else exact_origin(worst_point_record(record)),
            "user_lower_bound": format_user_lower_bound(worst),
            "user_lower_bound_bad": (user_lb is not None and claimed_at_worst is not None
                                     and user_lb > claimed_at_worst * (1 + 1e-6)),
            "exact_bad": (exact_v is not None and claimed_at_worst is not None
                          and exact_v > claimed_at_worst * (1 + 1e-6)),
            "lower_bound_bad": (lb is not None and claimed_at_worst is not None
                                and lb > claimed_at_worst),
            "lower_bound_state": lower_bound_state(worst),
            "accountant": format_epsilon(worst.get("epsilon_accountant")),
            "accountant_origin": accountant_origin(worst_point_record(record)),
            "lower_bound": format_epsilon(worst.get("epsilon_lower_bound")),
            "evidence": ev,
            "evidence_kind": ev_kind,
        },
        "n_points": len(record.get("points", [])),
        "table": evidence_table(record),
        "lemmas": lemma_rows(record),
        "findings": [readable_reason(str(f)) for f in record.get("findings", [])],
        "recommended_calibration": record.get("recommended_calibration") or "",
        "reproduce": "" if note else reproduce,
        "reproduce_note": note[0].upper() + note[1:] + "." if note else "",
        "budget": record.get("budget", ""),
        "seed": record.get("seed", ""),
        "alpha": format_value(float(record.get("alpha", 0.05))),
        "confidence": format_value(100 * (1 - float(record.get("alpha", 0.05)))),
        "seconds": f"{float(record.get('seconds', 0.0)):.1f}",
        "version": record.get("dpaudit_version", ""),
        "caveats": caveats_for(record),
        "index_prefix": _depth_prefix(record["id"]),
        "basename": record["id"].rsplit("/", 1)[-1],
    }


def paper_key(record: Mapping[str, Any]) -> str:
    """The paper a claim belongs to, all versions together: ``jkt12-colt/pigd`` -> ``jkt12``.

    Only a bundled paper's namespace is read as ``<paper>-<version>``; a user's claim (its source
    is not a paper: ``provenance.kind``) is grouped by its whole namespace, hyphens included
    (``own-learner/dpftrl`` -> ``own-learner``)."""
    namespace = record["id"].split("/", 1)[0]
    kind = record.get("claim", {}).get("provenance", {}).get("kind", "paper")
    return namespace.split("-", 1)[0] if kind == "paper" else namespace


def paper_version(record: Mapping[str, Any]) -> str:
    """The version of the paper a claim is printed in (``COLT 2012``, ``arXiv``, ...)."""
    prov = record.get("claim", {}).get("provenance", {})
    return prov.get("version", "") or record["id"].split("/", 1)[0]


def paper_page(record: Mapping[str, Any]) -> str:
    """Path of the claim's paper page, relative to the report directory."""
    return f"papers/{paper_key(record)}.html"


def _lemma_counts(record: Mapping[str, Any]) -> tuple[int, int, int]:
    lemmas = record.get("lemmas", [])
    not_checked = sum(1 for lem in lemmas if lem.get("status") == "not checked")
    failed = sum(1 for lem in lemmas if lem.get("status") not in ("holds", "not checked"))
    return len(lemmas) - not_checked, failed, not_checked


def index_rows(records: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One formatted row per claim for the index tables, in the order given."""
    rows = []
    for r in records:
        worst = r.get("worst_case", {})
        checked, failed, unchecked = _lemma_counts(r)
        rows.append({
            "id": r["id"],
            "paper": r.get("paper", ""),
            "citation": citation(r),
            "paper_key": paper_key(r),
            "paper_page": paper_page(r),
            "version": paper_version(r),
            "theorem": r.get("theorem", ""),
            "claimed": claim_formula(r),
            "worst_claimed": format_privacy(*worst_claimed(r)),
            "exact": format_exact(worst),
            "exact_kind": (exact_kind(worst) if as_float(worst.get("epsilon_exact")) is not None
                           else ""),
            "exact_origin": exact_origin(worst_point_record(r)),
            "accountant": format_epsilon(worst.get("epsilon_accountant")),
            "lower_bound": format_epsilon(worst.get("epsilon_lower_bound")),
            "lower_bound_state": lower_bound_state(worst),
            "worst_parameters": format_parameters(worst.get("parameters")),
            "verdict": r["verdict"],
            "region": str(r.get("violation_region") or ""),
            "severity": str((r.get("severity") or {}).get("sentence") or ""),
            "reason": readable_reason(r.get("reason", "")),
            "reason_detail": reason_detail(readable_reason(r.get("reason", "")),
                                           str(r.get("violation_region") or "")),
            "verdict_sentence": verdict_sentence(r),
            "lemmas_failed": failed,
            "lemmas": checked,
            "lemmas_not_checked": unchecked,
            "budget": r.get("budget", ""),
            "seed": r.get("seed", ""),
            "recommended_calibration": r.get("recommended_calibration") or "",
        })
    return rows


def run_settings(records: Sequence[Mapping[str, Any]]) -> str:
    """``budget standard, seed 0, alpha 0.05`` when all claims share them, else a per-claim note."""
    keys = {(r.get("budget"), r.get("seed"), r.get("alpha")) for r in records}
    if len(keys) == 1:
        budget, seed, alpha = next(iter(keys))
        return (f"budget {budget}, seed {seed}, alpha {format_value(float(alpha or 0.05))} "
                "(every claim)")
    return "mixed budgets or seeds: see each claim's row"


def paper_sections(records: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The paper-level view: one entry per paper with its claims grouped by algorithm/theorem.

    Each entry: ``key``, ``citations`` (one per version), ``versions`` (in first-seen order),
    ``counts`` (verdicts), ``groups`` (one per algorithm: ``name`` and ``cells``, one per version
    with the row of :func:`index_rows` or ``None`` when that version states no such claim),
    ``recommendations`` (``(claim id, text)``) and ``page`` (path relative to the report dir).
    """
    by_paper: dict[str, list[Mapping[str, Any]]] = {}
    for r in sorted(records, key=lambda r: r["id"]):
        by_paper.setdefault(paper_key(r), []).append(r)
    out = []
    for key, recs in by_paper.items():
        rows = index_rows(recs)
        versions: list[str] = []
        for row in rows:
            if row["version"] not in versions:
                versions.append(row["version"])
        groups: dict[str, dict[str, Any]] = {}
        for row in rows:
            algo = row["id"].rsplit("/", 1)[-1]
            g = groups.setdefault(algo, {"name": algo, "cells": {v: None for v in versions}})
            g["cells"][row["version"]] = row
        citations: list[str] = []
        for row in rows:
            if row["citation"] not in citations:
                citations.append(row["citation"])
        out.append({
            "key": key,
            "citations": citations,
            "versions": versions,
            "counts": verdict_counts(recs),
            "groups": [{"name": g["name"], "cells": [g["cells"][v] for v in versions]}
                       for g in groups.values()],
            "recommendations": [(row["id"], row["recommended_calibration"]) for row in rows
                                if row["recommended_calibration"]],
            "page": f"papers/{key}.html",
            "rows": rows,
        })
    return out


_COUNT_VERBS = {"violated": ("is violated", "are violated"),
                "inconclusive": ("is inconclusive", "are inconclusive"),
                "holds": ("holds", "hold")}


def count_phrase(count: int, verdict: str) -> str:
    """``8 claims hold``, ``1 claim holds``, ``22 claims are violated``: the count of a verdict as
    a sentence fragment with the right plural (badges show the verdict word itself, fixed)."""
    one, many = _COUNT_VERBS.get(verdict, (f"is {verdict}", f"are {verdict}"))
    return f"{count} claim {one}" if count == 1 else f"{count} claims {many}"


def reason_detail(reason: str, region: str) -> str:
    """The verdict reason without its leading ``Violated <region>;``, for pages that already
    print the region (``"Strongest at epsilon=4, ...: exact epsilon 6.65 > claimed 4."``)."""
    reason = str(reason).strip()
    head = f"Violated {region}".strip()
    if region and reason.startswith(head):
        rest = reason[len(head):].lstrip(";:,. ")
        return rest[:1].upper() + rest[1:] if rest else ""
    return reason


def verdict_counts(records: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """How many claims got each verdict (all three keys always present)."""
    counts = {"violated": 0, "inconclusive": 0, "holds": 0}
    for r in records:
        counts[r["verdict"]] = counts.get(r["verdict"], 0) + 1
    return counts
