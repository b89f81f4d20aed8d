"""A claim page audited under several readings says one point count and one meaning of WORST
(pfcoco/wdp-cocop-gaussian's header once said "48 audited points", its verdict "12"; the row
badged WORST had ratio 0.108 while rows below showed 0.493, the worst of the *primary* reading,
which nothing said). Rendered from the golden record (the quick audit), no figures."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from dpaudit.reporting import view
from dpaudit.reporting.html import render_claim_html
from dpaudit.reporting.markdown import render_claim_markdown
from dpaudit.reporting.writer import claim_record

GOLDEN = Path(__file__).with_name("golden")


def record(name: str) -> dict:
    return claim_record(json.loads((GOLDEN / f"{name}.json").read_text(encoding="utf-8")))


def _counts(rec: dict) -> tuple[int, int]:
    """(points of the primary reading, all points), counted from the record's own points: the
    grid grows when a stated range's ends are added, the page must follow it."""
    primary = next(r for r in rec["readings"] if r["primary"])
    mine = [p for p in rec["points"]
            if all(p["parameters"].get(k) == v for k, v in primary["parameters"].items())]
    return len(mine), len(rec["points"])


def test_the_table_knows_the_primary_readings_points_and_its_worst() -> None:
    rec = record("pfcoco__wdp-cocop-gaussian")
    primary = next(r for r in rec["readings"] if r["primary"])
    n_mine, n_all = _counts(rec)
    assert 0 < n_mine < n_all  # the case the header got wrong: 12 of 48 at the time
    table = view.evidence_table(rec)
    assert table.primary_reading == primary["name"]
    assert table.primary_points == primary["points"] == n_mine and len(table.rows) == n_all
    mine = [r for r in table.rows if not r["reading"]]
    assert len(mine) == n_mine
    for row, point in zip(table.rows, rec["points"]):
        under = all(point["parameters"].get(k) == v for k, v in primary["parameters"].items())
        assert (row["reading"] == "") == under
    [worst] = [r for r in table.rows if r["worst"]]
    assert not worst["reading"]
    # The worst is the largest ratio of the primary reading; larger ratios are other readings'.
    ratio = float(worst["ratio"])
    assert ratio == max(float(r["ratio"]) for r in mine)
    assert all(r["reading"] for r in table.rows if float(r["ratio"]) > ratio)
    assert any(float(r["ratio"]) > ratio for r in table.rows)  # the case the issue saw
    # The rows a reader sees first are the primary reading's.
    assert all(not r["reading"] for r in table.top)


@pytest.mark.parametrize("render", [render_claim_markdown, render_claim_html])
def test_the_page_states_one_point_count_and_what_worst_means(render) -> None:
    rec = record("pfcoco__wdp-cocop-gaussian")
    n_mine, n_all = _counts(rec)
    text = render(rec)
    verdict_count = int(re.search(r"No counterexample at (\d+) audited points", text).group(1))
    assert verdict_count == n_mine
    # Every "N audited points" the page prints is the whole grid said with its primary share,
    # or the primary share itself in the verdict: never a bare, unexplained whole-grid count.
    assert re.search(rf"{n_all} audited points,? \(?{n_mine} (?:under|of them under) the primary "
                     "reading", text) or (f"Of the {n_all} audited points, the verdict rests on "
                                          f"the {n_mine} of the primary reading") in text
    assert "primary reading" in text.split("Evidence at every audited point")[1][:3000]
    if render is render_claim_html:
        assert "worst (primary reading)" in text and "other reading" in text
        assert (f"{n_all} audited points ({n_mine} under the primary reading, on which the "
                "verdict rests)") in text
    else:
        assert "▶ marks its worst point, ○ the rows audited under another reading" in text


def test_a_claim_without_readings_is_unchanged() -> None:
    rec = record("afkt23__binary-tree")
    table = view.evidence_table(rec)
    assert table.primary_reading == "" and table.primary_points == len(table.rows)
    assert all(r["reading"] == "" for r in table.rows)
    text = render_claim_html(rec)
    assert "primary reading" not in text and "other reading" not in text
