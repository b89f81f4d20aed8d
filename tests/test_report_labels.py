"""Where each number comes from, and a user claim in its own words, wherever a reader looks.

One real user claim (a Laplace count at half its stated scale: exact epsilon 2 x the claim, from
the closed form of the Laplace mechanism, |f(D) - f(D')| / b = 1 / (0.5 / eps)) is audited once;
its exact value is read from the code by replay, so every place that prints that value (the
terminal table, the claim page's headline card in HTML and Markdown, the index in HTML and
Markdown, ``assert_claim``'s message) must say "derived from the code". Its page and ``dpaudit
list`` must show its own statement and its :class:`dpaudit.Source` fields under their own labels.
A bundled paper's claim keeps its paper labels ("Statement", "Equation").
"""

from __future__ import annotations

import io
import json
from argparse import Namespace
from pathlib import Path

import numpy as np
import pytest

import dpaudit
from dpaudit import Claim, Source
from dpaudit.claims import registry
from dpaudit.reporting import view
from dpaudit.reporting.html import render_claim_html, render_index_html
from dpaudit.reporting.markdown import render_claim_markdown, render_index_markdown
from dpaudit.reporting.terminal import summary_table
from dpaudit.reporting.triage import WHERE_WIDTH, start_here, where_short

STATEMENT = "The noisy count is eps-DP under add/remove neighbours"


def _release(p):
    def mechanism(data, n, rng):
        return float(np.sum(data)) + rng.laplace(0.0, 0.5 / p["epsilon"], size=n)
    return mechanism


CLAIM = Claim(id="labels/half-count", statement=STATEMENT,
              source=Source(title="count design note", kind="design doc", version="v0",
                            location="Sec. 1", quote="Laplace(1/eps) noise makes it eps-DP.",
                            url="https://example.org/note"),
              claimed=lambda p: (p["epsilon"], 0.0), neighbours="add-remove",
              grid=[{"epsilon": 0.5}, {"epsilon": 1.0}], release=_release,
              pairs=lambda p: [([1, 0, 1], [1, 0])],
              accountant=lambda p: dpaudit.noise.LaplaceNoise(1.0 / p["epsilon"], sensitivity=1.0))


@pytest.fixture(scope="module")
def record(tmp_path_factory) -> dict:
    out = tmp_path_factory.mktemp("labels")
    try:
        result = dpaudit.audit_claim(CLAIM, budget="quick", seed=0, out=out)
    finally:
        registry.unregister(CLAIM.id)
    assert result.verdict == "violated"
    return json.loads((out / "labels" / "half-count.json").read_text(encoding="utf-8"))


def test_the_exact_value_is_the_closed_form_and_derived_from_the_code(record) -> None:
    for point in record["points"]:
        assert point["epsilon_exact"] == pytest.approx(2 * point["claimed_epsilon"], rel=1e-9)
        assert view.exact_origin(point) == "derived from the code"


def test_every_place_that_prints_the_exact_value_says_where_it_comes_from(record) -> None:
    assert "1 (code)" in summary_table([record])
    assert "(code): derived from the code" in " ".join(summary_table([record]).split())
    assert "exact ε (derived from the code)" in render_claim_html(record)
    assert "exact ε (derived from the code) 1," in render_claim_markdown(record)
    assert '<div class="small muted">derived from the code</div>' in render_index_html([record])
    assert "| 1 (derived from the code) |" in render_index_markdown([record])


def test_assert_claims_message_says_derived_from_the_code() -> None:
    from dpaudit.testing import assert_claim

    try:
        with pytest.raises(AssertionError) as info:
            assert_claim(CLAIM, budget="quick")
    finally:
        registry.unregister(CLAIM.id)
    assert "exact 1 (exact, derived from the code)" in str(info.value)


def test_declared_and_user_supplied_labels() -> None:
    assert view.exact_origin({"epsilon_exact": 1.0,
                              "evidence": {"exact_source": "declared law"}}) == "declared"
    assert view.exact_origin({"epsilon_exact": 1.0, "exact_kind": "user-supplied"}) == \
        "user-supplied"
    assert view.exact_origin({"epsilon_exact": None,
                              "evidence": {"exact_source": "declared law"}}) == ""
    assert view.exact_origin({"epsilon_exact": 2.0}) == ""      # a paper's own closed form


def test_a_user_claims_page_quotes_its_statement_and_source_fields(record) -> None:
    md = render_claim_markdown(record)
    assert f"> {STATEMENT}. (Stated in count design note, v0, Sec. 1.)" in md
    for label, value in (("Source", "count design note, v0"), ("Kind", "design doc"),
                         ("Location", "Sec. 1"), ("Quote", "Laplace(1/eps) noise makes it eps-DP."),
                         ("URL", "https://example.org/note")):
        assert f"| {label} | {value} |" in md
    assert "| Statement |" not in md and "| Equation |" not in md
    assert "one loss replaced" not in md


def test_dpaudit_list_shows_a_user_claims_statement(capsys) -> None:
    from dpaudit.cli.listing import cmd_list

    dpaudit.register_claim(CLAIM)
    try:
        out = io.StringIO()
        cmd_list(Namespace(json=False, long=True), out, io.StringIO())
    finally:
        registry.unregister(CLAIM.id)
    line = next(ln for ln in out.getvalue().splitlines() if CLAIM.id in ln)
    # The statement column is what a 96-column table leaves after the longest registered id, and
    # other test files in the same worker may have registered longer ones: check its head only.
    assert "The noisy count" in line and "Sec. 1 (v0)" not in line
    assert "quote: Laplace(1/eps)" in out.getvalue()


def test_a_papers_claim_keeps_its_paper_labels() -> None:
    golden = Path(__file__).with_name("golden") / "st13__tree-aggregation.json"
    rec = json.loads(golden.read_text(encoding="utf-8"))
    md = render_claim_markdown(rec)
    assert "| Statement |" in md and "| Paper |" in md and "| Kind |" not in md


def test_where_is_one_short_line_and_start_here_orders_by_severity() -> None:
    folder = Path(__file__).with_name("golden")
    records = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.json"))]
    records = [r for r in records if "id" in r]
    for r in records:
        assert len(where_short(r)) <= WHERE_WIDTH and "\n" not in where_short(r)
    order = [s["id"] for s in start_here(records)]
    violated = {r["id"]: r for r in records if r["verdict"] == "violated"}
    assert sorted(order) == sorted(violated)
    # Refuted at small delta first (by decreasing factor), refuted only near delta = 1 last.
    near_one = [cid for cid in order if violated[cid]["severity"].get("delta_from") is not None]
    assert order[len(order) - len(near_one):] == near_one
    factors = [violated[cid]["severity"]["factor"] for cid in order[:len(order) - len(near_one)]]
    assert factors == sorted(factors, reverse=True)


def test_parameters_near_one_do_not_print_as_one() -> None:
    """A gamma of 1 - 1e-7 lies inside (0, 1); %g (6 digits) and the reports' 4 digits would print
    it as "1", the excluded end. Other values keep their short form."""
    from dpaudit.claims.verdict import format_parameters as sentence_form
    from dpaudit.reporting.view import format_parameters as report_form

    params = {"gamma": 1 - 1e-7, "g2": 0.99999, "eps": 1064.4783885006582, "one": 1.0}
    assert sentence_form(params) == "gamma=0.9999999, g2=0.99999, eps=1064.48, one=1"
    assert report_form(params) == "gamma=0.9999999, g2=0.99999, eps=1064, one=1"


def test_verdict_sentence_quotes_the_claim_at_the_failing_point(record) -> None:
    """The claim's epsilon varies over its grid (0.5, then 1): the sentence speaks of the worst
    point, so it quotes the claim there, (1, 0) at epsilon=1, not the first grid point's (0.5, 0)."""
    import copy

    rec = copy.deepcopy(record)
    at = next(p for p in rec["points"] if p["parameters"] == {"epsilon": 1.0})
    rec["worst_case"] = {**rec["worst_case"], "parameters": dict(at["parameters"]),
                         "claimed_epsilon": at["claimed_epsilon"],
                         "claimed_delta": at["claimed_delta"]}
    sentence = view.verdict_sentence(rec)
    assert sentence.startswith("The claimed (1, 0)-DP guarantee of labels/half-count at "
                               "(epsilon=1) is ")
    first = copy.deepcopy(record)
    first["worst_case"] = {**first["worst_case"], "parameters": {"epsilon": 0.5},
                           "claimed_epsilon": 0.5, "claimed_delta": 0.0}
    assert view.verdict_sentence(first).startswith(
        "The claimed (0.5, 0)-DP guarantee of labels/half-count is ")


def test_a_user_claim_citing_a_paper_keeps_its_statement_and_source_labels(record) -> None:
    """Source(kind="paper") on a user's claim: still the user's statement and the Source's own
    labels (location under Location, quote under Quote), not the bundled papers' template."""
    import copy

    rec = copy.deepcopy(record)
    rec["claim"]["provenance"]["kind"] = "paper"
    md = render_claim_markdown(rec)
    assert f"> {STATEMENT}." in md
    assert "| Location | Sec. 1 |" in md and "| Quote | Laplace(1/eps) noise makes it eps-DP. |" in md
    assert "| Statement |" not in md and "| Equation |" not in md


def test_the_float_caveat_names_a_float32_release(tmp_path, record) -> None:
    """A release returning float32 (as jax's and torch's do by default): its dtype is recorded
    with the empirical evidence and the floating-point caveat (finding and report) names it;
    a float64 release (the module's claim) keeps the doubles wording and no dtype key."""
    def release32(p):
        def mechanism(data, n, rng):
            return (float(np.sum(data)) + rng.laplace(0.0, 1.0 / p["epsilon"], size=n)).astype(
                np.float32)
        return mechanism

    claim = Claim(id="labels/count-f32", statement=STATEMENT, source=Source(title="note"),
                  claimed=lambda p: (p["epsilon"], 0.0), neighbours="add-remove",
                  grid=[{"epsilon": 1.0}], release=release32, pairs=lambda p: [([1, 0, 1], [1, 0])])
    try:
        dpaudit.audit_claim(claim, budget="quick", seed=0, out=tmp_path)
    finally:
        registry.unregister(claim.id)
    rec = json.loads((tmp_path / "labels" / "count-f32.json").read_text(encoding="utf-8"))
    assert rec["points"][0]["evidence"]["empirical"]["release_dtype"] == "float32"
    assert any("this release returns float32, not float64" in f for f in rec["findings"])
    assert "the release audited here returns float32, not IEEE-754 doubles" in \
        view.caveats_for(rec)[0]
    assert all("release_dtype" not in p["evidence"].get("empirical", {}) for p in record["points"])
    assert view.caveats_for(record) == view.CAVEATS
