"""Reports never contradict themselves: every figure against the JSON its table is rendered from.

Runs on every golden record (``tests/golden/*.json``: the real audits of every bundled claim at the
quick budget, seed 0), so a new paper's figures are held against its tables with no extra test.
For each record the figures are drawn (:func:`dpaudit.reporting.plots.render_plots` returns the
values actually plotted next to the PNG) and the page is rendered; the test checks

* the evidence chart: each drawn ratio equals the point's epsilon / claimed epsilon in the JSON;
* the privacy curve: drawn at the worst point, the claimed marker is the worst point's claimed
  (epsilon, delta), the table markers are the worst point's exact and accountant epsilons, and the
  curves at the claimed delta equal those (or the caption warns that they differ);
* the histogram: drawn at an audited point with an empirical test, and captioned "at the worst
  audited point" only when it is the worst point;
* the sensitivity figure: its largest drawn ratio is the lemma table's worst ratio, or the caption
  says which example is drawn and gives both numbers;
* the figures fit a laptop window: no PNG is wider than a page section at 800 px, so the browser
  never scales it down and legends stay at least 10 px tall; a histogram's axis names its score,
  never calling a score that goes negative a "likelihood ratio", with TeX subscripts drawn;
* the page: evidence columns (claimed, delta, exact/certified, accountant, lower bound, ratio) are
  the first columns of the evidence table; exact vs certified is labelled as in the JSON; the
  verdict never says "every lemma held" when a lemma was not checked; no Python repr in any text;
  no JSON embedded in the HTML and no cut JSON block in the Markdown.
"""

from __future__ import annotations

import html.parser
import json
import math
import re
from pathlib import Path
from typing import Any, Mapping

import pytest

from dpaudit.reporting import plots, view
from dpaudit.reporting.html import render_claim_html
from dpaudit.reporting.markdown import render_claim_markdown

GOLDEN = sorted((Path(__file__).with_name("golden")).glob("*.json"))
CERTIFIED = "certified lower bound (numerical)"
RTOL = 1e-9  # the figures draw the JSON's own floats: only float formatting may differ

#: Python reprs that must never reach a reader: dict/list syntax with quoted keys, function and
#: object reprs, numpy scalar reprs, local-function qualnames.
REPR_PATTERNS = [re.compile(p) for p in (
    r"\{'[^']*': ", r"<locals>", r"<function ", r" object at 0x", r"np\.float64\(",
    r"\barray\(\[", r"\bdict_keys\(", r"\bNone\b, 'statistic'")]


def close(a: float | None, b: float | None, rtol: float = RTOL) -> bool:
    if a is None or b is None:
        return a is b
    if math.isinf(a) or math.isinf(b):
        return a == b
    return math.isclose(a, b, rel_tol=rtol, abs_tol=1e-300)


@pytest.fixture(scope="module", params=GOLDEN, ids=[p.stem for p in GOLDEN])
def rendered(request) -> tuple[dict[str, Any], dict[str, plots.Plot], str, str]:
    record = json.loads(request.param.read_text(encoding="utf-8"))
    drawn, problems = plots.render_plots(record)
    # A one-point figure is replaced by a sentence with its numbers; nothing else may be missing.
    assert not [p for p in problems if not plots.is_replacement(p)], problems
    return (record, {p.name: p for p in drawn}, render_claim_html(record, drawn),
            render_claim_markdown(record, drawn))


def test_there_are_golden_records_to_check() -> None:
    assert len(GOLDEN) >= 10


def test_evidence_chart_draws_the_tables_ratios(rendered) -> None:
    record, figs, _, _ = rendered
    data = figs["evidence"].data
    varying = view.varying_parameters(record["points"])
    rows = view.evidence_table(record).rows
    assert data["labels"], "the evidence chart drew no point"
    for i, label in enumerate(data["labels"]):
        # "#n parameters": row n of the evidence table, with that row's parameters.
        number, _, params = label.partition(" ")
        n = int(number.lstrip("#"))
        point = record["points"][n - 1]
        assert rows[n - 1]["number"] == n and params == rows[n - 1]["label"], (label, rows[n - 1])
        assert params == view.format_parameters({k: point["parameters"][k] for k in varying
                                                 if k in point["parameters"]})
        claimed = point["claimed_epsilon"]
        for key in ("epsilon_exact", "epsilon_accountant", "epsilon_lower_bound"):
            value = view.as_float(point.get(key))
            expected = None if value is None else value / claimed
            assert close(data[key][i], expected), (label, key, data[key][i], expected)


def test_privacy_curve_is_the_worst_points_and_agrees_with_the_table(rendered) -> None:
    record, figs, _, _ = rendered
    if "privacy_curve" not in figs:
        pytest.skip("no privacy curve in this record")
    spec, plot = record["figures"]["privacy_curve"], figs["privacy_curve"]
    worst = record["worst_case"]
    assert spec.get("parameters") == worst["parameters"], "curve is not at the worst point"
    assert plot.data["claimed"] == [worst["claimed_epsilon"], worst["claimed_delta"]]
    table = plot.data.get("table")
    assert table is not None, "the curve carries no table values to be held against"
    assert close(table["delta"], worst["claimed_delta"])
    assert close(table["epsilon_exact"], view.as_float(worst["epsilon_exact"]))
    assert close(table["epsilon_accountant"], view.as_float(worst["epsilon_accountant"]))
    if worst.get("epsilon_lower_bound") is not None and plot.data["lower_bound"] is not None:
        assert close(plot.data["lower_bound"][0], view.as_float(worst["epsilon_lower_bound"]))
    # The curves at the claimed delta are the table's numbers, or the caption says they are not.
    deltas = plot.data["deltas"]
    at = [i for i, d in enumerate(deltas) if d is not None and close(d, worst["claimed_delta"], 1e-12)]
    disagree = []
    for i in at:
        for key in ("epsilon_exact", "epsilon_accountant"):
            series, value = plot.data.get(key), view.as_float(worst[key])
            if series and series[i] is not None and value is not None \
                    and not close(series[i], value, plots.FIGURE_RTOL):
                disagree.append(key)
    if disagree:
        assert "WARNING" in plot.caption and "table is authoritative" in plot.caption, disagree
    else:
        assert "WARNING" not in plot.caption
    # "Exact" means exact: a certified bracket is labelled as such in the figure too.
    if worst.get("exact_kind") == CERTIFIED:
        assert spec.get("exact_kind") == CERTIFIED and "certified" in plot.caption


def test_histogram_is_captioned_truthfully(rendered) -> None:
    record, figs, _, _ = rendered
    if "histogram" not in figs:
        pytest.skip("no histogram in this record")
    shown = figs["histogram"].data["parameters"]
    tested = [p["parameters"] for p in record["points"] if p.get("epsilon_lower_bound") is not None]
    if tested:  # drawn at a point whose empirical test it illustrates
        assert any(all(p.get(k) == v for k, v in shown.items()) for p in tested), shown
    caption = figs["histogram"].caption
    is_worst = shown == record["worst_case"]["parameters"]
    assert ("at the worst audited point" in caption) == is_worst, caption
    if not is_worst:
        assert view.format_parameters(record["worst_case"]["parameters"]) in caption


def test_sensitivity_figure_agrees_with_the_lemma_table(rendered) -> None:
    record, figs, _, _ = rendered
    if "sensitivity" not in figs:
        pytest.skip("no sensitivity trace in this record")
    spec, plot = record["figures"]["sensitivity"], figs["sensitivity"]
    # The checks of the drawn statement: as printed or under a stated reading ("... [reading]").
    # Only checks that measured a ratio (a search); an SMT proof of the statement has none.
    checks = [lem for lem in record["lemmas"] if lem["status"] != "not checked"
              and lem.get("worst_ratio") is not None
              and (lem["statement"] == spec["statement"]
                   or lem["statement"].startswith(spec["statement"] + " ["))]
    assert checks, "the sensitivity figure draws a statement no lemma check evaluated"
    peak = max(r for r in plot.data["ratio"] if math.isfinite(r))
    same = [lem for lem in checks if close(peak, lem["worst_ratio"], plots.FIGURE_RTOL)]
    if same:
        assert "the lemma table's worst ratio for it" in plot.caption
        lemma = same[0]
    else:  # a different example (the shrunk counterexample): both numbers in the caption
        lemma = max(checks, key=lambda lem: lem["worst_ratio"])
        assert f"{peak:.4g}x" in plot.caption and f"{lemma['worst_ratio']:.4g}x" in plot.caption
    assert f"{peak:.4g}x" in plot.caption
    if lemma["status"] == "violated":  # a violation is visible on the ratio axis
        assert peak > 1


def test_a_one_point_sensitivity_figure_is_a_sentence_with_its_numbers(rendered) -> None:
    # A trace of one round (T = 2 gives t = 1 only) is one dot on an axis: it is replaced by a
    # sentence whose numbers are the trace's (observed / claimed from the JSON) and which, like
    # the figure's caption, holds the ratio against the lemma table's worst ratio.
    record, figs, _, _ = rendered
    spec = (record.get("figures") or {}).get("sensitivity")
    if not spec or len(spec["t"]) != 1:
        pytest.skip("no one-round sensitivity trace in this record")
    assert "sensitivity" not in figs
    _, problems = plots.render_plots(record)
    [sentence] = [p for p in problems if plots.is_replacement(p)]
    ratio = spec["observed"][0] / spec["claimed"][0]
    assert f"{spec['observed'][0]:.4g} against the claimed sensitivity " \
           f"{spec['claimed'][0]:.4g}, {ratio:.4g}x the bound" in sentence
    checks = [lem["worst_ratio"] for lem in record["lemmas"] if lem.get("worst_ratio") is not None
              and (lem["statement"] == spec["statement"]
                   or lem["statement"].startswith(spec["statement"] + " ["))]
    if checks and not any(close(ratio, r, plots.FIGURE_RTOL) for r in checks):
        assert f"{max(checks):.4g}x" in sentence
    drawn, problems = plots.render_plots(record)
    page = render_claim_html(record, drawn, problems).replace("&#39;", "'")
    assert sentence in page and sentence in render_claim_markdown(record, drawn, problems)


class _Text(html.parser.HTMLParser):
    """Visible text of a page (outside <pre>, <style> and <script>) and the evidence header."""

    def __init__(self) -> None:
        super().__init__()
        self.text: list[str] = []
        self.skip = 0
        self.in_evidence_head = False
        self.evidence_headers: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag in ("pre", "style", "script"):
            self.skip += 1
        if tag == "table" and "evidence" in (dict(attrs).get("class") or "").split():
            self.in_evidence_head = True
        if tag == "th" and self.in_evidence_head:
            self.evidence_headers.append("")

    def handle_endtag(self, tag):
        if tag in ("pre", "style", "script"):
            self.skip -= 1
        if tag == "thead":
            self.in_evidence_head = False

    def handle_data(self, data):
        if self.in_evidence_head and self.evidence_headers:
            self.evidence_headers[-1] += data
        if not self.skip:
            self.text.append(data)


def test_page_puts_evidence_first_labels_exact_kinds_and_has_no_python_reprs(rendered) -> None:
    record, figs, page, md = rendered
    parser = _Text()
    parser.feed(page)
    headers = [h.strip() for h in parser.evidence_headers]
    kinds = {p.get("exact_kind") for p in record["points"] if p.get("epsilon_exact") is not None}
    exact_header = {frozenset({CERTIFIED}): "certified lower bound ε (numerical)",
                    frozenset({"exact", CERTIFIED}): "exact or certified ε"}.get(
                        frozenset(kinds), "exact ε")
    assert headers[:6] == ["claimed ε", "δ", exact_header, "accountant ε", "lower bound ε",
                           "ratio"], headers
    text = " ".join(parser.text)
    for pattern in REPR_PATTERNS:
        assert not pattern.search(text), (pattern.pattern, pattern.search(text))
        # Markdown outside fenced code blocks too.
        prose = re.sub(r"```.*?```", "", md, flags=re.S)
        assert not pattern.search(prose), (pattern.pattern, pattern.search(prose))
    for plot in figs.values():
        for pattern in REPR_PATTERNS:
            assert not pattern.search(plot.caption), plot.caption
    # "every lemma held" only when every lemma of the claim was checked and held.
    if any(lem["status"] == "not checked" for lem in record["lemmas"]):
        assert "every lemma held" not in text and "every lemma held" not in md


#: Width of a page section's content at an 800 px wide window: the window minus main's padding
#: (2 x 12 px), the section's padding (2 x 14 px) and its border (2 x 1 px) in style.css's narrow
#: layout. Images are shown at their natural size up to this width.
SECTION_PX_AT_800 = 800 - 2 * 12 - 2 * 14 - 2


def _png_width(png: bytes) -> int:
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    return int.from_bytes(png[16:20], "big")


def test_figures_fit_a_laptop_window_with_legible_legends(rendered) -> None:
    _, figs, _, _ = rendered
    css = (Path(plots.__file__).with_name("templates") / "style.css").read_text(encoding="utf-8")
    assert "@media (max-width: 1000px)" in css and "padding: 16px 12px 32px" in css
    for plot in figs.values():
        width = _png_width(plot.png)
        assert width <= plots.FIGURE_MAX_PX <= SECTION_PX_AT_800, (plot.name, width)
        shown = min(1.0, SECTION_PX_AT_800 / width)
        legend_px = plots.LEGEND_PT * plots._DPI / 72 * shown
        assert legend_px >= 10, (plot.name, legend_px)


def test_histogram_axis_says_what_the_score_is(rendered) -> None:
    _, figs, _, _ = rendered
    if "histogram" not in figs:
        pytest.skip("no histogram in this record")
    data = figs["histogram"].data
    label = data["xlabel"]
    assert label.startswith("score: ")
    outside_math = re.sub(r"\$[^$]*\$", "", label)
    assert "_{" not in outside_math, label  # TeX subscripts are drawn, not printed raw
    if min(data["edges"]) < 0:
        words = " ".join(label.split())
        assert "likelihood ratio" not in words.replace("log-likelihood ratio", "").replace(
            "log likelihood ratio", ""), label


def test_pages_embed_no_json(rendered) -> None:
    record, _, page, md = rendered
    assert "<pre><code>{" not in page.split("Sensitivity lemmas")[0]
    assert f'href="{record["id"].rsplit("/", 1)[-1]}.json"' in page
    assert "more characters" not in md and "more characters" not in page


def _render(record: dict[str, Any]) -> tuple[dict[str, Any], dict[str, plots.Plot], str, str]:
    drawn, _ = plots.render_plots(record)
    return (record, {p.name: p for p in drawn}, render_claim_html(record, drawn),
            render_claim_markdown(record, drawn))


def test_the_checks_catch_a_figure_that_contradicts_its_table() -> None:
    """Each check above fails on a record whose figure and table disagree (they can fail)."""
    base = json.loads((Path(__file__).with_name("golden") / "jkt12-colt__pigd.json").read_text())

    def fresh() -> dict[str, Any]:
        return json.loads(json.dumps(base))

    # A table value changed after the evidence chart was drawn.
    record, figs, page, md = _render(fresh())
    record["points"][0]["epsilon_accountant"] *= 2
    with pytest.raises(AssertionError):
        test_evidence_chart_draws_the_tables_ratios((record, figs, page, md))
    # The curve passes elsewhere than the table at the claimed delta (the old jkt12 bug: ~790 vs
    # 2829) while the record claims agreement: no warning in the caption, so the check fails.
    record = fresh()
    curve = record["figures"]["privacy_curve"]
    i = curve["deltas"].index(record["worst_case"]["claimed_delta"])
    curve["epsilon_exact"][i] = 790.0
    with pytest.raises(AssertionError):
        test_privacy_curve_is_the_worst_points_and_agrees_with_the_table(_render(record))
    # ... and passes once the record says the curve disagrees (the caption then warns).
    curve["table"]["agrees"] = False
    curve["table"]["mismatches"] = [{"series": "epsilon_exact", "curve": 790.0,
                                     "table": record["worst_case"]["epsilon_exact"]}]
    test_privacy_curve_is_the_worst_points_and_agrees_with_the_table(_render(record))
    # A histogram of another point captioned as the worst point's.
    record = fresh()
    record["figures"]["histogram"]["parameters"] = dict(record["points"][0]["parameters"])
    record["figures"]["histogram"]["worst_point"] = True
    with pytest.raises(AssertionError):
        test_histogram_is_captioned_truthfully(_render(record))
    # A lemma table whose worst ratio is not the one the caption states.
    record, figs, page, md = _render(fresh())
    drawn = record["figures"]["sensitivity"]["statement"]
    next(lem for lem in record["lemmas"] if lem["statement"] == drawn
         and lem.get("worst_ratio") is not None)["worst_ratio"] = 7.0
    with pytest.raises(AssertionError):
        test_sensitivity_figure_agrees_with_the_lemma_table((record, figs, page, md))
    # A Python repr in a finding (dict literals of parameters are rewritten as k=v, reprs of
    # functions cannot be).
    record = fresh()
    record["findings"].append("statistic <function tree_node_statistic.<locals>.statistic>")
    with pytest.raises(AssertionError):
        test_page_puts_evidence_first_labels_exact_kinds_and_has_no_python_reprs(_render(record))
