"""Report pages a reader can use in a laptop window: short evidence tables, readable parameters,
no embedded or cut JSON, one citation per paper, verdict counts in words, no repeated sentences.

Rendered from small synthetic :class:`ClaimAudit` records whose content is known; the pixel-level
checks (figure widths, legend sizes) run on every golden record in
``tests/test_report_consistency.py``.
"""

from __future__ import annotations

import json
import re

import pytest

from dpaudit.claims.record import ClaimAudit
from dpaudit.claims.evidence import GridPoint, LemmaCheck
from dpaudit.claims import PrivacyClaim, Provenance, SensitivityLemma
from dpaudit.reporting import plots, view
from dpaudit.reporting.html import render_claim_html, render_index_html, render_paper_html
from dpaudit.reporting.markdown import (render_claim_markdown, render_index_markdown,
                                        render_paper_markdown)
from dpaudit.reporting.writer import claim_record

CITATION = "Doe, Roe: A Long Paper Title on Private Learning, COLT 2099"
LEMMA = SensitivityLemma("step sensitivity <= 2L/t (Lemma 4)",
                         Provenance("demo.txt", "COLT 2099", "Lemma 4"))


def _record(claim_id: str, points: list[GridPoint], lemmas: list[LemmaCheck] | None = None,
            citation: str = CITATION) -> dict:
    claim = PrivacyClaim(claim_id, 1.0, 0.0, Provenance("demo.txt", "COLT 2099", "Theorem 3"),
                         citation=citation, lemmas=(LEMMA,) if lemmas else ())
    audit = ClaimAudit(claim, points, lemmas or [], seed=0, budget="quick", alpha=0.05,
                       seconds=1.0)
    return json.loads(json.dumps(claim_record(audit)))


def _grid(n: int, bad: set[int]) -> list[GridPoint]:
    """``n`` points at epsilon 1; the ones in ``bad`` have exact epsilon 2 + i/100 (violated)."""
    evidence = {"pair": "e1 vs -e1", "noise_scale": 0.5,
                "empirical": {"statistic_name": "sum of the releases", "runs": 1000},
                "search_positions": list(range(64)), "nested": {"deep": {"x": 1}}}
    return [GridPoint({"epsilon": 1.0, "T": 2 ** i}, 1.0, 0.0,
                      epsilon_exact=(2 + i / 100) if i in bad else 0.5,
                      epsilon_accountant=0.9, epsilon_lower_bound=0.1, evidence=evidence)
            for i in range(n)]


@pytest.mark.parametrize("count, verdict, text", [
    (1, "holds", "1 claim holds"), (8, "holds", "8 claims hold"),
    (0, "inconclusive", "0 claims are inconclusive"), (1, "violated", "1 claim is violated"),
    (22, "violated", "22 claims are violated")])
def test_count_phrase_has_the_right_plural(count: int, verdict: str, text: str) -> None:
    assert view.count_phrase(count, verdict) == text


def test_long_evidence_table_shows_the_worst_rows_and_the_rest_behind_a_toggle() -> None:
    record = _record("demo-colt/long", _grid(30, bad={3, 17, 29}))
    table = view.evidence_table(record)
    assert len(table.rows) == 30 and len(table.top) == view.WORST_ROWS
    assert len(table.top) + len(table.rest) == 30
    numbers = [r["number"] for r in table.top]
    assert numbers == sorted(numbers)  # grid order, so #n matches the evidence chart
    assert {4, 18, 30} <= set(numbers)  # every counterexample is among the rows shown first
    assert any(r["worst"] for r in table.top)
    page = render_claim_html(record)
    assert '<details class="all-points"><summary>All 30 audited points</summary>' in page
    md = render_claim_markdown(record)
    assert "<details><summary>All 30 audited points</summary>" in md
    assert "8 of 30 audited points shown" in md


def test_short_evidence_table_has_no_toggle() -> None:
    record = _record("demo-colt/short", _grid(view.SHORT_TABLE, bad={1}))
    assert len(view.evidence_table(record).rest) == 0
    assert '<details class="all-points"' not in render_claim_html(record)


def test_parameters_and_evidence_are_tables_and_the_json_is_only_linked() -> None:
    record = _record("demo-colt/params", _grid(3, bad={0}))
    page = render_claim_html(record)
    assert "<th>T</th><td>4</td>" in page
    assert "<th>empirical.statistic_name</th><td>sum of the releases</td>" in page
    assert "<th>search_positions</th><td>list of 64 values (in the JSON file)</td>" in page
    assert "<th>nested.deep</th><td>1 field (in the JSON file)</td>" in page
    assert 'href="params.json"' in page and "points[0]" in page
    assert "<pre><code>{" not in page and '"search_positions"' not in page
    md = render_claim_markdown(record)
    assert "```json" not in md
    assert "| `empirical.runs` | 1000 |" in md


def test_a_long_lemma_counterexample_is_pointed_to_never_cut() -> None:
    big = {"losses": [[0.125 * i, -1.0] for i in range(2000)], "position": 3}
    short = {"losses": [[0.5, -1.0]], "position": 3}
    for ce, shown in ((big, False), (short, True)):
        lemma = LemmaCheck(LEMMA.statement, "violated", 1.1, 300, ce)
        record = _record("demo-colt/lemma", _grid(2, bad=set()), [lemma])
        md = render_claim_markdown(record)
        page = render_claim_html(record)
        assert "more characters" not in md and "more characters" not in page
        # Shown as a readable field / value table, never as a JSON block.
        assert ("| position | 3 |" in md) == shown
        assert ("<th>position</th><td>3</td>" in page) == shown
        assert '"position": 3' not in md and '"position": 3' not in page
        if shown:
            assert "| losses | [[0.5, -1]] |" in md
        if not shown:
            assert "lemmas[0].counterexample of the saved JSON file" in md
            assert "lemmas[0].counterexample of the saved JSON file" in page


def _violated(claim_id: str) -> dict:
    record = _record(claim_id, _grid(3, bad={0, 1}))
    # As the claim driver words them (dpaudit.claims: decide_verdict).
    record["verdict"] = "violated"
    record["violation_region"] = "at 2 of 3 audited points"
    record["reason"] = ("Violated at 2 of 3 audited points; strongest at epsilon=1, T=2: exact "
                        "epsilon 2.01 > claimed 1.")
    return record


def _two_papers() -> list[dict]:
    return [_violated("demo-colt/a"), _violated("demo-colt/b"),
            _record("demo-colt/c", _grid(3, bad=set())),
            _record("other/x", _grid(3, bad=set()), citation="Other: Another Paper, 2098")]


def test_index_names_each_claims_paper_and_cites_it_once() -> None:
    records = _two_papers()
    for page in (render_index_html(records), render_index_markdown(records)):
        assert page.count(CITATION) == 1
    page = render_index_html(records)
    assert page.count('href="papers/demo.html"') >= 4  # papers table + one per claim row


def test_badges_show_the_verdict_word_and_counts_are_in_words() -> None:
    records = _two_papers()
    page = render_index_html(records)
    assert re.search(r'<span class="badge holds">holds</span> 2 claims hold', page)
    assert re.search(r'<span class="badge violated">violated</span> 2 claims are violated', page)
    assert "0 claims are inconclusive" in page
    paper = [p for p in view.paper_sections(records) if p["key"] == "other"][0]
    assert "1 claim holds" in render_paper_html(paper, records)
    assert "1 claim holds" in render_paper_markdown(paper, records)
    assert ">1 hold<" not in render_paper_html(paper, records)


def test_paper_page_states_where_a_claim_is_violated_once() -> None:
    records = _two_papers()
    paper = [p for p in view.paper_sections(records) if p["key"] == "demo"][0]
    for page in (render_paper_html(paper, records), render_paper_markdown(paper, records)):
        assert page.lower().count("at 2 of 3 audited points") == 2  # claims a and b, once each
        assert "Strongest at" in page


def test_reason_detail_drops_only_the_region_prefix() -> None:
    reason = "Violated at 7 of 14 audited points; strongest at T=64: exact epsilon 6.7 > claimed 4."
    assert view.reason_detail(reason, "at 7 of 14 audited points") == (
        "Strongest at T=64: exact epsilon 6.7 > claimed 4.")
    assert view.reason_detail("No counterexample.", "") == "No counterexample."


def test_tex_subscripts_in_axis_labels_are_drawn_as_mathtext() -> None:
    assert plots._math_text("read off x_{2^j+1}") == "read off $x_{2^j+1}$"
    assert plots._math_text("no subscripts here") == "no subscripts here"
