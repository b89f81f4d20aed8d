"""Invariants every bundled audit record must satisfy.

The records checked are the golden records (``tests/golden/*.json``, quick budget, seed 0) and the
committed reviewer reports (``reports/<paper>/<claim>.json``, standard budget). Regenerating either
cannot make these tests pass by construction: each invariant is a statement about the evidence
(AUDIT-METHOD section 2) checked with a few lines written here, not a comparison with an earlier
output of the code.

1. No record carries an ``INCONSISTENCY`` finding (an empirical lower bound above an upper value, or
   an exact epsilon above the accountant): such a finding means the code is not the mechanism
   that was analysed, which is a bug to fix, not a result to ship.
2. The three kinds of evidence are in order where they are comparable: at every point, the
   empirical lower bound <= the accountant (an upper bound over every neighbouring pair), and the
   exact/certified epsilon of a realisable pair <= the accountant. (The empirical bound is *not*
   compared with a point's exact value: the test may use another pair, e.g. the candidate-pair
   search, and a certified value is a lower bound itself.)
3. The verdict equals the verdict recomputed from the evidence table by the independent rule
   :func:`expected_verdict` below (the rules of AUDIT-METHOD section 2, without dpaudit's code).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = sorted((ROOT / "tests" / "golden").glob("*.json"))
# The bundled claims' saved audits (reports/<paper>/<claim>.json); reports/libraries holds user-side
# library claims with their own index and manifest, checked by their own tests.
REPORTS = sorted(p for p in (ROOT / "reports").glob("*/*.json")
                 if p.parent.name not in ("papers", "utility", "libraries"))
RECORDS = GOLDEN + REPORTS
#: Relative float tolerance of the comparisons (the engine's EXACT_TOLERANCE is 1e-6; a record
#: written with a looser or tighter one is caught by test_verdict_boundary in test_claim_driver_alpha).
RTOL = 1e-6


def _ids(paths: list[Path]) -> list[str]:
    return [f"{p.parent.name}/{p.name}" for p in paths]


def _f(x: Any) -> float | None:
    if x is None:
        return None
    if isinstance(x, str):
        return math.inf if x == "inf" else -math.inf if x == "-inf" else float(x)
    return float(x)


def _load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def _primary_points(rec: dict[str, Any]) -> list[dict[str, Any]]:
    """The points the verdict rests on: all of them, or (when the claim declares reading choices)
    those at the primary value of every reading parameter (a point without the parameter
    does not depend on the reading)."""
    readings = rec.get("claim", {}).get("readings") or []
    pts = rec["points"]
    for r in readings:
        pts = [p for p in pts if p["parameters"].get(r["parameter"], r["primary"]) == r["primary"]]
    return pts


def expected_verdict(rec: dict[str, Any]) -> str:
    """AUDIT-METHOD section 2, written independently of dpaudit.claims.verdict:

    * violated: some point's exact (or certified, or user-supplied) epsilon or user-supplied
      lower bound exceeds the claim (beyond a relative 1e-6), or its empirical lower bound
      exceeds the claim;
    * holds: otherwise, if every point has an accountant at or below the claim (relative 1e-6),
      no exact value or user-supplied lower bound exceeds its accountant, and every lemma that was checked held (a failed lemma
      counts only when it is not marked as a proof gap, and an SMT timeout is absent evidence);
    * inconclusive: otherwise.
    """
    pts = _primary_points(rec)
    for p in pts:
        c = _f(p["claimed_epsilon"])
        ex, lb = _f(p.get("epsilon_exact")), _f(p.get("epsilon_lower_bound"))
        user = _f(p.get("epsilon_user_lower_bound"))
        if ((ex is not None and ex > c * (1 + RTOL)) or (lb is not None and lb > c)
                or (user is not None and user > c * (1 + RTOL))):
            return "violated"
    if not pts:
        return "inconclusive"
    for p in pts:
        c, acc, ex = (_f(p["claimed_epsilon"]), _f(p.get("epsilon_accountant")),
                      _f(p.get("epsilon_exact")))
        if acc is None or acc > c * (1 + RTOL):
            return "inconclusive"
        user = _f(p.get("epsilon_user_lower_bound"))
        if any(v is not None and v > acc * (1 + RTOL) + 1e-12 for v in (ex, user)):
            return "inconclusive"
    for lem in rec.get("lemmas", []):
        if lem["status"] in ("holds", "not checked") or lem.get("method") == "smt-unknown":
            continue
        if not lem.get("proof_gap"):
            return "inconclusive"
    return "holds"


def test_the_invariants_see_every_claim() -> None:
    assert len(GOLDEN) == 37, _ids(GOLDEN)
    assert len(REPORTS) == 37, _ids(REPORTS)


@pytest.mark.parametrize("path", RECORDS, ids=_ids(RECORDS))
def test_no_record_carries_an_inconsistency_finding(path: Path) -> None:
    rec = _load(path)
    bad = [f for f in rec.get("findings", [])
           if f.startswith("INCONSISTENCY") or "inversion" in f.lower()]
    assert not bad, f"{path}: {bad}"


@pytest.mark.parametrize("path", RECORDS, ids=_ids(RECORDS))
def test_evidence_is_in_order(path: Path) -> None:
    """lower bound <= accountant and exact <= accountant at every point that carries both."""
    rec, out = _load(path), []
    for p in rec["points"]:
        acc = _f(p.get("epsilon_accountant"))
        if acc is None:
            continue
        lb, ex = _f(p.get("epsilon_lower_bound")), _f(p.get("epsilon_exact"))
        if lb is not None and lb > acc * (1 + 1e-9) + 1e-12:
            out.append(f"lower bound {lb} > accountant {acc} at {p['parameters']}")
        if ex is not None and ex > acc * (1 + RTOL) + 1e-12:
            out.append(f"{p.get('exact_kind')} {ex} > accountant {acc} at {p['parameters']}")
    assert not out, f"{path}: " + "; ".join(out)


@pytest.mark.parametrize("path", RECORDS, ids=_ids(RECORDS))
def test_verdict_follows_from_the_evidence_table(path: Path) -> None:
    rec = _load(path)
    assert rec["verdict"] == expected_verdict(rec), (
        f"{path}: recorded {rec['verdict']!r}, the evidence table gives "
        f"{expected_verdict(rec)!r}")


def test_the_independent_rule_on_hand_made_tables() -> None:
    def point(c: float, ex: float | None = None, acc: float | None = None,
              lb: float | None = None) -> dict[str, Any]:
        return {"parameters": {}, "claimed_epsilon": c, "epsilon_exact": ex,
                "epsilon_accountant": acc, "epsilon_lower_bound": lb}

    assert expected_verdict({"points": [point(1.0, 1.0, 1.0)], "lemmas": []}) == "holds"
    assert expected_verdict({"points": [point(1.0, 1.001, 2.0)], "lemmas": []}) == "violated"
    assert expected_verdict({"points": [point(1.0, None, 2.0, 1.01)], "lemmas": []}) == "violated"
    assert expected_verdict({"points": [point(1.0, 0.5, 1.2)], "lemmas": []}) == "inconclusive"
    assert expected_verdict({"points": [point(1.0, 0.5, 0.9)],
                             "lemmas": [{"status": "violated", "method": "sampled"}]}
                            ) == "inconclusive"
    assert expected_verdict({"points": [point(1.0, 0.5, 0.9)],
                             "lemmas": [{"status": "violated", "method": "sampled",
                                         "proof_gap": "Lemma X"}]}) == "holds"
    readings = {"claim": {"readings": [{"parameter": "r", "primary": "a"}]}, "lemmas": [],
                "points": [dict(point(1.0, 2.0, 2.0), parameters={"r": "b"}),
                           dict(point(1.0, 0.5, 0.9), parameters={"r": "a"})]}
    assert expected_verdict(readings) == "holds"


@pytest.mark.parametrize("path", RECORDS, ids=_ids(RECORDS))
def test_bonferroni_shares_sum_to_the_family_alpha(path: Path) -> None:
    """Every empirical test of a record ran at family alpha / tests, there are exactly ``tests`` of
    them, and their levels sum to the record's alpha (all lower bounds hold jointly with
    probability >= 1 - alpha)."""
    rec = _load(path)
    shares = [p["evidence"]["empirical"]["bonferroni"] for p in rec["points"]
              if isinstance(p.get("evidence"), dict) and "empirical" in p["evidence"]
              and "bonferroni" in p["evidence"]["empirical"]]
    if not shares:
        pytest.skip("no empirical test in this record")
    n = shares[0]["tests"]
    assert all(b["tests"] == n and b["family_alpha"] == rec["alpha"] for b in shares)
    assert len(shares) == n, f"{len(shares)} tests recorded, the split counted {n}"
    assert sorted(b["test"] for b in shares) == list(range(1, n + 1))
    assert sum(b["per_test_alpha"] for b in shares) == pytest.approx(rec["alpha"], rel=1e-12)
