"""Range readings (``dpaudit.claims.RangeReading``): an auditor's narrower range of one parameter
gets its own verdict beside the claim's, and an inconclusive headline says at which values of that
parameter the open points sit. The pfcoco Gaussian learners declare Proposition A3's eps in (0, 1).
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from dpaudit.claims import Provenance, PrivacyClaim, RangeReading
from dpaudit.claims.evidence import GridPoint
from dpaudit.claims.record import ClaimAudit

REPO = Path(__file__).resolve().parents[1]
PAPER = Path("/work/shared/seeds/pfcoco-window-tree.txt")


def test_range_reading_contains_and_rejects() -> None:
    r = RangeReading("epsilon", "(0, 1)", "printed in a proposition")
    assert [r.contains(x) for x in (0.0, 1e-9, 0.5, 0.999, 1.0, 10.0)] == [
        False, True, True, True, False, False]
    assert RangeReading("W", "[1, 4]", "why").contains(4) and RangeReading("W", "[1, 4]", "why").contains(1)
    assert r.name == "epsilon in (0, 1)"
    with pytest.raises(ValueError, match="numeric range"):
        RangeReading("epsilon", "small", "why")
    with pytest.raises(ValueError, match="rationale"):
        RangeReading("epsilon", "(0, 1)", " ")
    claim = PrivacyClaim("x/y", 1.0, 1e-5, Provenance("p", "v", "Thm 1", "eq"),
                         range_readings=(r,))
    assert PrivacyClaim.from_dict(claim.to_dict()) == claim
    with pytest.raises(TypeError, match="RangeReading"):
        PrivacyClaim("x/y", 1.0, 1e-5, Provenance("p", "v", "Thm 1", "eq"), range_readings=("a",))


def _point(eps: float, acc: float, delta: float = 1e-5) -> GridPoint:
    return GridPoint(parameters={"epsilon": eps, "delta": delta}, claimed_epsilon=eps,
                     claimed_delta=delta, epsilon_accountant=acc)


def test_inconclusive_headline_names_the_hinge_and_the_range_verdict() -> None:
    """Constructed points: the accountant exceeds the claim only at eps = 10 (2.5x, 1.2x); the
    points with eps in (0, 1) are at 0.1x and 0.15x. So: inconclusive as stated, holds under the
    range reading on its 2 points (accountant at most 0.15x), and the headline names eps = 10."""
    r = RangeReading("epsilon", "(0, 1)", "printed in Prop. A3", label="eps in (0, 1) (Prop. A3)")
    claim = PrivacyClaim("x/y", 1.0, 1e-5, Provenance("p", "v", "Thm 2", "eq"), range_readings=(r,))
    pts = [_point(0.1, 0.01), _point(0.5, 0.075), _point(1.0, 0.9), _point(10.0, 25.0, 0.99),
           _point(10.0, 12.0)]
    audit = ClaimAudit(claim, pts)
    verdict, reason = audit.verdict_and_reason
    assert verdict == "inconclusive"
    assert reason.endswith("Other readings: holds under eps in (0, 1) (Prop. A3).")
    (rv,) = [x for x in audit.reading_verdicts() if x.get("range")]
    assert (rv["verdict"], rv["points"], rv["excluded_points"]) == ("holds", 2, 3)
    assert audit.severity()["sentence"] == (
        "Inconclusive only through 2 of 5 audited point(s) whose accountant is above the claim (up "
        "to 2.5x) with no counterexample; it hinges on epsilon = 10, outside (0, 1); under eps in "
        "(0, 1) (Prop. A3) it holds (accountant at most 0.15x the claim).")


def test_claims_without_range_readings_keep_their_headline() -> None:
    claim = PrivacyClaim("x/y", 1.0, 1e-5, Provenance("p", "v", "Thm 2", "eq"))
    audit = ClaimAudit(claim, [_point(10.0, 25.0)])
    assert audit.severity() is None and audit.reading_verdicts() == []


@pytest.mark.skipif(not PAPER.exists(), reason="paper text not available")
def test_prop_a3_range_is_the_only_one_printed_in_the_chain() -> None:
    """Theorems 2 and 5 (OCR) print no range for eps; Proposition A3 prints '(0,1)'."""
    text = PAPER.read_text()
    thm2 = text[text.index("Theorem 2: (window (e, §)-DP"):text.index("Regret Analysis: The regret")]
    thm5 = text[text.index("Theorem 5: (window differential"):text.index("Regret Analysis: We")]
    assert "(0,1)" not in thm2 + thm5 and "(0, 1)" not in thm2 + thm5
    assert "Proposition A3: For any € € (0,1), if ¢* > 21n(1.25/6)" in text


@pytest.mark.parametrize("claim_id, open_points", [("pfcoco/wdp-cocop-gaussian", 2),
                                                    ("pfcoco/wdp-cocol-gaussian", 4)])
def test_pfcoco_gaussian_learners_hinge_on_eps_10(claim_id: str, open_points: int) -> None:
    """The committed standard-budget record (reports/), re-read under the claim as now declared:
    its open points (accountant above the claim, no counterexample), counted here from the JSON,
    are all at eps = 10, outside Prop. A3's (0, 1); its primary points with eps < 1, also picked
    here from the JSON, have accountant / claim <= 0.19 (the referee's bound), so that reading
    holds."""
    from dpaudit.claims.registry import get

    path = REPO / "reports" / f"{claim_id}.json"
    if not path.exists():
        pytest.skip("committed report not available")
    rec = json.loads(path.read_text())
    audit = ClaimAudit.from_dict(rec)
    audit.claim = get(claim_id).claim
    primary = {r.parameter: r.primary for r in audit.claim.readings}
    prim = [p for p in rec["points"]
            if all(p["parameters"].get(k, v) == v for k, v in primary.items())]
    opened = [p for p in prim if p["epsilon_accountant"] is not None
              and p["epsilon_accountant"] > p["claimed_epsilon"]]
    assert len(opened) == open_points and {p["parameters"]["epsilon"] for p in opened} == {10.0}
    inside = [p for p in prim if 0 < p["parameters"]["epsilon"] < 1]
    ratio = max(p["epsilon_accountant"] / p["claimed_epsilon"] for p in inside)
    assert ratio <= 0.19
    (rv,) = [x for x in audit.reading_verdicts() if x.get("range")]
    assert rv["verdict"] == "holds" and rv["points"] == len(inside)
    sentence = audit.severity()["sentence"]
    assert sentence.startswith(f"Inconclusive only through {open_points} of {len(prim)} audited "
                               "point(s) whose accountant is above the claim")
    assert ("it hinges on epsilon = 10, outside (0, 1); under epsilon in (0, 1) (Prop. A3's range "
            f"as a precondition of the theorem) it holds (accountant at most {ratio:.3g}x the "
            "claim)") in sentence
