"""Readings are not parameters: a claim's verdict is its primary reading's; every other reading gets
its own verdict beside it. And a false lemma that the accountant does not rest on is a proof gap,
not a blocked verdict. Points are built by hand here, so every expected verdict follows from the
verdict rules' text (README, "What a verdict means"), not from the code's output."""

from __future__ import annotations

import pytest

from dpaudit.claims.evidence import GridPoint, LemmaCheck
from dpaudit.claims.model import PrivacyClaim, Provenance, ReadingChoice
from dpaudit.claims.record import ClaimAudit
from dpaudit.claims.verdict import decide_verdict

PROV = Provenance("paper.txt", "v1", "Thm 1")
READING = ReadingChoice("reading", "2L", "the paper's replace-one Definition 2.1 (line 3)",
                        labels={"2L": "Delta = 2L", "L": "Delta = L"})


def claim(readings=(READING,)) -> PrivacyClaim:
    return PrivacyClaim("p/c", 1.0, 1e-5, PROV, readings=readings)


def point(reading: str | None, exact: float | None, acc: float | None) -> GridPoint:
    params = {"epsilon": 1.0} | ({} if reading is None else {"reading": reading})
    return GridPoint(params, 1.0, 1e-5, exact, acc, None)


def test_the_claim_verdict_is_the_primary_readings_and_the_others_are_reported() -> None:
    # Under Delta = 2L everything is below the claim (holds); under Delta = L the exact epsilon
    # 1.7 of a pair exceeds it (violated). A reading-free point belongs to the primary reading.
    audit = ClaimAudit(claim(), [point("2L", 0.6, 0.9), point(None, 0.5, 0.8),
                                 point("L", 1.7, 1.9)])
    verdict, reason = audit.verdict_and_reason
    assert verdict == "holds"
    assert reason.startswith("Holds under the primary reading (Delta = 2L).")
    assert "violated under Delta = L" in reason
    readings = audit.to_dict()["readings"]
    assert [r["primary"] for r in readings] == [True, False]
    assert readings[0]["verdict"] == "holds" and readings[0]["points"] == 2
    assert readings[1]["verdict"] == "violated"
    assert readings[1]["worst_point"]["epsilon_exact"] == 1.7
    assert audit.to_dict()["worst_case"]["parameters"] == {"epsilon": 1.0, "reading": "2L"} or \
        audit.to_dict()["worst_case"]["parameters"] == {"epsilon": 1.0}
    assert audit.to_dict()["violation_region"] == ""


def test_a_primary_violation_is_the_claims_verdict() -> None:
    audit = ClaimAudit(claim(), [point("2L", 1.2, 1.3), point("L", 0.5, 0.7)])
    assert audit.verdict == "violated"
    assert "holds under Delta = L" in audit.verdict_and_reason[1]


def test_without_readings_nothing_changes() -> None:
    pts = [point(None, 0.5, 0.8)]
    audit = ClaimAudit(claim(readings=()), pts)
    assert audit.verdict_and_reason == decide_verdict(pts, [])
    assert "readings" not in audit.to_dict()


def test_reading_choices_round_trip_through_json() -> None:
    c = claim()
    assert PrivacyClaim.from_dict(c.to_dict()) == c
    with pytest.raises(ValueError, match="rationale"):
        ReadingChoice("reading", "2L", "")


def lemma(status: str, gap: str = "") -> LemmaCheck:
    return LemmaCheck("sensitivity <= L + mu D", status, worst_ratio=1.9, proof_gap=gap)


def test_a_false_lemma_blocks_holds_unless_the_accountant_rests_elsewhere() -> None:
    pts = [point(None, None, 0.49)]  # accountant 0.49 <= claimed 1 at the only point
    assert decide_verdict(pts, [lemma("violated")])[0] == "inconclusive"
    verdict, reason = decide_verdict(
        pts, [lemma("violated", "the sensitivity 2L proved by SMT for every d")])
    assert verdict == "holds"
    assert "proof gap" in reason and "proved by SMT for every d" in reason
    # A proof gap never rescues a claim the evidence refutes.
    assert decide_verdict([point(None, 1.5, 0.49)],
                          [lemma("violated", "2L (proved)")])[0] == "violated"


def test_the_proof_gap_sentence_does_not_run_on() -> None:
    """The sentence once read "... (lemma table) (1 more such gap(s)) (6 proved by SMT ...)":
    three parentheses in a row. Now clauses and sentences, with singular and plural right."""
    pts = [point(None, None, 0.49)]
    gaps = [lemma("violated", f"sensitivity {i}") for i in range(3)]
    proved = [LemmaCheck(f"proved {i}", "holds", method="smt-proved") for i in range(2)]
    _, reason = decide_verdict(pts, gaps[:2] + proved)
    assert ") (" not in reason and "gap(s)" not in reason
    assert reason.endswith("rests on sensitivity 0; 1 more proof gap of this kind is in the "
                           "lemma table. 2 of the lemmas were proved by SMT over the encoded "
                           "class.")
    _, reason = decide_verdict(pts, gaps + proved[:1])
    assert "; 2 more proof gaps of this kind are in the lemma table. 1 of the lemmas was proved" \
        in reason


def test_other_readings_are_listed_apart() -> None:
    """A reading's name joins its choices with '; ', the readings are listed with '; ' too: the
    sentence writes each reading's choices with commas, so the two separators never collide."""
    c = PrivacyClaim("p/x", 1.0, 0.0, PROV, readings=(
        ReadingChoice("a", 1, "the literal text"), ReadingChoice("b", 1, "the literal text")))
    pts = [GridPoint({"a": a, "b": b}, 1.0, 0.0, None, 0.5, None) for a in (1, 2) for b in (1, 2)]
    _, reason = ClaimAudit(c, pts).verdict_and_reason
    assert reason.endswith("Other readings: holds under a=1, b=2; holds under a=2, b=1; holds "
                           "under a=2, b=2.")


def test_an_accountant_below_an_exact_value_certifies_nothing() -> None:
    verdict, reason = decide_verdict([point(None, 0.92, 0.75)], [])
    assert verdict == "inconclusive" and "does not describe this release" in reason


def test_index_rows_put_the_worst_points_claim_first_and_mark_a_partial_run() -> None:
    import json
    from pathlib import Path

    from dpaudit.reporting.index import build_index

    # afkt23/dp-ftrl's default instance is epsilon 1, its worst audited point claims more: the
    # index's 'claimed' must be the worst point's (what the verdict compared), the default kept as
    # 'claimed_example'.
    record = json.loads((Path(__file__).with_name("golden") / "afkt23__dp-ftrl.json").read_text())
    index = build_index([record], missing=["afkt23/alg2"])
    row = index["claims"][0]
    assert row["claimed"]["epsilon"] == record["worst_case"]["claimed_epsilon"]
    assert row["claimed_example"]["epsilon"] == record["claimed"]["epsilon"]
    assert index["partial"] is True and index["missing"] == ["afkt23/alg2"]
    assert "partial" not in build_index([record])
