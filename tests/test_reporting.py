"""Reviewer reports: per-claim Markdown/HTML/JSON, figures, the index and its schema.

The reports are rendered from synthetic :class:`ClaimAudit` records whose numbers are known, so the
tests can check that every required piece of content is there, that the HTML is standalone and
well formed, that nothing from a paper is interpreted as markup, that figures appear exactly when
their data does, and that re-rendering the saved JSON reproduces the same files.
"""

from __future__ import annotations

import base64
import html.parser
import json
import math
import re
import shutil
import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpaudit.claims.record import ClaimAudit
from dpaudit.claims.evidence import GridPoint, LemmaCheck
from dpaudit.claims import PrivacyClaim, Provenance, SensitivityLemma
from dpaudit.reporting import plots, view
from dpaudit.reporting.html import render_claim_html, render_index_html
from dpaudit.reporting.index import INDEX_SCHEMA, build_index
from dpaudit.reporting.markdown import markdown_cell, markdown_code, render_index_markdown
from dpaudit.reporting.writer import (atomic_write, claim_paths, claim_record,
                                      load_report_directory, rerender_directory,
                                      write_claim_report, write_index)

REPO = Path(__file__).resolve().parents[1]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

LEMMA = SensitivityLemma("IGD sensitivity <= 2L/(alpha t) (Lemma 4)",
                         Provenance("jkt12-colt.txt", "COLT 2012", "Lemma 4"))


def laplace_figures(rng: np.random.Generator) -> dict:
    """Figure data in the ClaimAudit conventions, for a Laplace mechanism with shift 1, scale 0.5."""
    edges = np.linspace(-4.0, 6.0, 41)
    c0, _ = np.histogram(rng.laplace(0.0, 0.5, 20_000), edges)
    c1, _ = np.histogram(rng.laplace(1.0, 0.5, 20_000), edges)
    deltas = np.logspace(-8, -1, 15)
    return {
        "histogram": {"edges": edges.tolist(), "counts0": c0.tolist(), "counts1": c1.tolist(),
                      "threshold": 0.5, "statistic": "output x", "parameters": {"epsilon": 1.0}},
        # Laplace with sensitivity/scale = 2: epsilon(delta) = 2 + 2 ln(1 - delta).
        "privacy_curve": {"deltas": deltas.tolist(), "epsilon_accountant": [1.0] * 15,
                          "epsilon_exact": (2 + 2 * np.log1p(-deltas)).tolist(),
                          "claimed": [1.0, 0.0], "lower_bound": [1.62, 0.0]},
        "sensitivity": {"t": list(range(1, 33)), "observed": [22.0 / t for t in range(1, 33)],
                        "claimed": [20.0 / t for t in range(1, 33)],
                        "statement": LEMMA.statement},
        "regret": {"T": [16, 64, 256], "series": {"PIGD": [3.0, 7.0, 15.0],
                                                  "IGD": [1.0, 2.0, 3.0]}, "ylabel": "regret"},
    }


def violated_audit(figures: dict | None = None, notes: str = "Read the garbled 2 as a factor.") -> ClaimAudit:
    """Laplace noise at half the printed scale: exact epsilon 2 * eps at every point (violated)."""
    claim = PrivacyClaim(
        "demo-colt/half-laplace", 1.0, 0.0,
        Provenance("demo.txt", "COLT 2012", "Theorem 3", "b = Delta / (2 eps) | see `eq. 7`",
                   "Section 4.1"),
        calibration="Lap(Delta/(2*epsilon))", parameter_range={"epsilon": "(0, inf)", "T": ">= 1"},
        lemmas=(LEMMA,), notes=notes)
    points = [GridPoint({"epsilon": e, "T": t}, e, 0.0, epsilon_exact=2 * e, epsilon_accountant=e,
                        epsilon_lower_bound=1.6 * e, evidence={"counts": [2639, 343], "T": t})
              for e in (0.5, 1.0, 4.0) for t in (1, 64)]
    lemma = LemmaCheck(LEMMA.statement, "violated", 1.1, 300,
                       {"losses": [[0.5, -1.0]], "position": 3, "observed": 0.3, "claimed": 0.25})
    return ClaimAudit(claim, points, [lemma], findings=["The printed scale is half of what the "
                                                        "proof needs."],
                      recommended_calibration="Lap(Delta/epsilon)",
                      figures=figures if figures is not None else {}, seed=7, budget="quick",
                      alpha=0.05, seconds=1.5)


def holding_audit() -> ClaimAudit:
    claim = PrivacyClaim("demo-arxiv/gauss", 2.0, 1e-5, Provenance("demo.txt", "arXiv v2",
                                                                   "Theorem 9"))
    return ClaimAudit(claim, [GridPoint({"T": 8}, 2.0, 1e-5, None, 1.9, 1.2)], seed=7,
                      budget="quick")


class TagChecker(html.parser.HTMLParser):
    """Checks that non-void tags are balanced and collects resource URLs."""

    VOID = {"meta", "img", "br", "hr", "link", "input", "source", "wbr", "col", "area", "base"}

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.urls: list[tuple[str, str]] = []
        self.images: list[str] = []
        self.scripts = 0

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "script":
            self.scripts += 1
        if tag == "img":
            self.images.append(attrs.get("src", ""))
        for key in ("src", "href"):
            if key in attrs:
                self.urls.append((tag, attrs[key]))
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"unexpected </{tag}> with open {self.stack[-3:]}")
        else:
            self.stack.pop()


def check_html(text: str) -> TagChecker:
    checker = TagChecker()
    checker.feed(text)
    checker.close()
    assert not checker.errors, checker.errors[:5]
    assert checker.stack == [], checker.stack
    return checker


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == PNG_MAGIC
    width, height = struct.unpack(">II", data[16:24])
    return width, height


@pytest.fixture(scope="module")
def rendered(tmp_path_factory) -> Path:
    """A report directory with both synthetic claims, rendered once (read-only for tests)."""
    root = tmp_path_factory.mktemp("reports")
    write_claim_report(root, violated_audit(laplace_figures(np.random.default_rng(1))))
    write_claim_report(root, holding_audit())
    write_index(root, load_report_directory(root), display_dir="reports")
    return root


@pytest.fixture
def report_dir(rendered: Path, tmp_path: Path) -> Path:
    """A private copy of :func:`rendered` for tests that change files."""
    return Path(shutil.copytree(rendered, tmp_path / "reports"))


# ------------------------------------------------------------------------------------------------
# Files and the JSON they are rendered from
# ------------------------------------------------------------------------------------------------

def test_files_are_written_at_claim_id_paths(rendered: Path) -> None:
    for stem in ("demo-colt/half-laplace", "demo-arxiv/gauss"):
        for ext in ("json", "md", "html"):
            assert (rendered / f"{stem}.{ext}").is_file()
    for ext in ("json", "md", "html"):
        assert (rendered / f"index.{ext}").is_file()
    figures = sorted(p.name for p in (rendered / "demo-colt").glob("*.png"))
    assert figures == [f"half-laplace.{n}.png" for n in
                       sorted(["evidence", "histogram", "privacy_curve", "sensitivity", "regret"])]
    # No temporary files are left behind by the atomic writes.
    assert not [p for p in rendered.rglob(".*") if p.is_file()]


def test_saved_json_round_trips_to_the_same_audit(rendered: Path) -> None:
    original = violated_audit(laplace_figures(np.random.default_rng(1)))
    saved = json.loads((rendered / "demo-colt/half-laplace.json").read_text())
    assert saved["schema"] == view.CLAIM_SCHEMA
    restored = ClaimAudit.from_dict(saved)
    assert restored.claim == original.claim
    assert restored.verdict_and_reason == original.verdict_and_reason == (saved["verdict"],
                                                                          saved["reason"])
    assert [p.to_dict() for p in restored.points] == [p.to_dict() for p in original.points]
    assert saved["seed"] == 7 and saved["budget"] == "quick"


def test_non_finite_and_numpy_values_are_saved_as_strict_json(tmp_path: Path) -> None:
    audit = holding_audit()
    audit.figures = {"misc": {"a": np.float64(np.inf), "b": np.arange(3), "c": float("nan")}}
    audit.points[0] = GridPoint({"T": np.int64(8)}, 2.0, 1e-5, math.inf, 1.9, None)
    paths = write_claim_report(tmp_path, audit)
    text = paths.json.read_text()
    saved = json.loads(text, parse_constant=lambda c: pytest.fail(f"non-strict JSON token {c}"))
    assert saved["figures"]["misc"] == {"a": "inf", "b": [0, 1, 2], "c": "nan"}
    assert saved["points"][0]["epsilon_exact"] == "inf"
    assert saved["verdict"] == "violated"  # an infinite exact epsilon refutes the claim
    assert "∞" in paths.markdown.read_text()


def test_report_rerenders_identically_from_json(report_dir: Path) -> None:
    before = {p: p.read_bytes() for p in report_dir.rglob("*") if p.is_file()}
    for p in report_dir.rglob("*"):
        if p.is_file() and p.suffix in (".md", ".html", ".png"):
            p.unlink()
    records, _ = rerender_directory(report_dir, display_dir="reports")
    assert [r["id"] for r in records] == ["demo-arxiv/gauss", "demo-colt/half-laplace"]
    after = {p: p.read_bytes() for p in report_dir.rglob("*") if p.is_file()}
    assert after.keys() == before.keys()
    changed = [str(p) for p in before if before[p] != after[p]]
    assert changed == []


def test_stale_figures_are_removed_when_their_data_is_gone(tmp_path: Path) -> None:
    write_claim_report(tmp_path, violated_audit(laplace_figures(np.random.default_rng(1))))
    assert (tmp_path / "demo-colt/half-laplace.histogram.png").exists()
    write_claim_report(tmp_path, violated_audit({}))
    assert not (tmp_path / "demo-colt/half-laplace.histogram.png").exists()
    assert (tmp_path / "demo-colt/half-laplace.evidence.png").exists()


@pytest.mark.parametrize("bad", ["nopaper", "../escape/x", "a/../../x", "/abs/x", "a/b c",
                                 "a//b", "a/.hidden"])
def test_claim_paths_reject_ids_that_are_not_safe_relative_paths(tmp_path: Path, bad: str) -> None:
    with pytest.raises(ValueError, match="claim id"):
        claim_paths(tmp_path, bad)


def test_load_report_directory_ignores_foreign_json_and_rejects_misplaced_audits(
        report_dir: Path) -> None:
    (report_dir / "notes.json").write_text('{"hello": 1}')
    assert [r["id"] for r in load_report_directory(report_dir)] == ["demo-arxiv/gauss",
                                                                   "demo-colt/half-laplace"]
    # Invalid JSON may be a truncated claim: an error naming it, never silently skipped.
    (report_dir / "broken.json").write_text("{not json")
    with pytest.raises(ValueError, match="broken.json is not valid JSON"):
        load_report_directory(report_dir)
    (report_dir / "broken.json").unlink()
    shutil.copy(report_dir / "demo-arxiv/gauss.json", report_dir / "demo-arxiv/copy.json")
    with pytest.raises(ValueError, match="belongs at"):
        load_report_directory(report_dir)


def test_claim_record_rejects_unknown_verdicts() -> None:
    data = holding_audit().to_dict()
    data["verdict"] = "fine"
    with pytest.raises(ValueError, match="unknown verdict"):
        claim_record(data)


def test_atomic_write_replaces_whole_files(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "f.txt"
    atomic_write(target, "first")
    atomic_write(target, b"second")
    assert target.read_text() == "second"
    assert [p.name for p in target.parent.iterdir()] == ["f.txt"]


# ------------------------------------------------------------------------------------------------
# Content of a claim report
# ------------------------------------------------------------------------------------------------

def test_markdown_report_has_every_required_section(rendered: Path) -> None:
    md = (rendered / "demo-colt/half-laplace.md").read_text()
    # The claim quoted with its provenance.
    assert ("Theorem 3 of demo.txt (COLT 2012) states that half-laplace is (1, 0)-differentially "
            "private") in md
    for text in ("| Paper | demo.txt (COLT 2012) |", "| Source file | demo.txt |",
                 "| Version | COLT 2012 |", "| Location | Section 4.1 |",
                 "`Lap(Delta/(2*epsilon))`", "`epsilon` | (0, inf)", "Read the garbled 2"):
        assert text in md
    assert "`` b = Delta / (2 eps) \\| see `eq. 7` ``" in md  # pipes and backticks survive
    # Verdict in one sentence, worst point, evidence table with one row per point.
    # The claim is quoted where the sentence speaks: (0.5, 0) at the worst point, not the
    # representative (1, 0) of the first grid point.
    assert ("**Verdict.** The claimed (0.5, 0)-DP guarantee of demo-colt/half-laplace at "
            "(epsilon=0.5, T=1) is violated at every audited point (6 of 6); strongest at "
            "epsilon=0.5, T=1: exact epsilon 1 > claimed 0.5.") in md
    assert "At **epsilon=0.5, T=1**, where the claim (1, 0) is (0.5, 0)-DP: exact ε 1, accountant " \
           "epsilon 0.5, empirical lower bound 0.8 (one-sided 95%)." in md
    # Evidence columns first (claimed, delta, exact, accountant, lower bound, ratio), then the point.
    table = [ln for ln in md.splitlines() if re.match(r"^\| (▶)?✗? \| [\d.]+ \| [\d.e-]+ \|", ln)]
    assert len(table) == 6 and table[0].startswith("| ▶✗ | 0.5 | 0 | 1 | 0.5 | 0.8 | 2 | ")
    # Lemma checks with the counterexample, findings, recommendation, reproduction, caveats.
    assert "| IGD sensitivity <= 2L/(alpha t) (Lemma 4) | Lemma 4, jkt12-colt.txt, COLT 2012 | " \
           "**violated** | sampled | 1.1 | 300 |" in md
    assert "| position | 3 |" in md  # the counterexample, as a readable field / value table
    assert "- The printed scale is half of what the proof needs." in md
    # The recommendation sits under the verdict, before the claim, not below the figures.
    assert "**Recommended recalibration.** Lap(Delta/epsilon)" in md
    assert md.index("**Recommended recalibration.**") < md.index("## The claim")
    assert "dpaudit audit demo-colt/half-laplace --budget quick --seed 7 --alpha 0.05" in md
    assert "Mironov 2012" in md
    # Figures are linked as the PNG files next to the page.
    for name in ("evidence", "histogram", "privacy_curve", "sensitivity", "regret"):
        assert f"](half-laplace.{name}.png)" in md
    assert "[Index of all audited claims](../index.md)" in md


def test_report_of_a_claim_without_figure_data_draws_only_the_evidence_chart(
        rendered: Path) -> None:
    md = (rendered / "demo-arxiv/gauss.md").read_text()
    assert "](gauss.evidence.png)" in md
    assert "histogram" not in md.lower() and "regret" not in md.lower()
    assert "holds at every audited point" in md
    page = check_html((rendered / "demo-arxiv/gauss.html").read_text())
    assert len(page.images) == 1


def test_html_report_is_standalone_and_well_formed(rendered: Path) -> None:
    text = (rendered / "demo-colt/half-laplace.html").read_text()
    page = check_html(text)
    assert page.scripts == 0
    assert len(page.images) == 5
    for src in page.images:
        assert src.startswith("data:image/png;base64,")
        width, height = png_size(base64.b64decode(src.split(",", 1)[1]))
        assert 400 <= width <= 1400 and 250 <= height <= 1500
    # Every link is relative (opens offline): back to the index, the paper page and the siblings.
    hrefs = {u for tag, u in page.urls if tag == "a"}
    assert hrefs == {"../index.html", "../papers/demo.html", "half-laplace.md",
                     "half-laplace.json"}
    assert "<style>" in text and "stylesheet" not in text
    for text_piece in ("Theorem 3 of demo.txt (COLT 2012)", "Lap(Delta/epsilon)",
                       "dpaudit audit demo-colt/half-laplace --budget quick --seed 7",
                       "Mironov 2012", "counterexample", "IGD sensitivity &lt;= 2L/(alpha t)"):
        assert text_piece in text


def test_text_from_papers_is_escaped_in_html(tmp_path: Path) -> None:
    audit = violated_audit(notes='<script>alert("x")</script> & <b>bold</b>')
    page = render_claim_html(claim_record(audit))
    assert "<script>" not in page and "<b>bold</b>" not in page
    assert "&lt;script&gt;" in page and "&amp; &lt;b&gt;bold" in page
    assert check_html(page).scripts == 0


def test_malformed_figure_data_is_reported_not_fatal() -> None:
    audit = holding_audit()
    audit.figures = {"histogram": {"edges": [0, 1], "counts0": [1, 2], "counts1": [1]},
                     "regret": "not an object"}
    record = claim_record(audit)
    drawn, problems = plots.render_plots(record)
    assert [p.name for p in drawn] == ["evidence"]
    assert len(problems) == 2 and "histogram figure was not drawn" in problems[0]
    assert "The histogram figure was not drawn" in render_claim_html(record, drawn, problems)


def test_plots_are_deterministic_pngs(rendered: Path) -> None:
    figs = laplace_figures(np.random.default_rng(1))  # the data of the rendered report
    assert plots.histogram_png(figs["histogram"]) == (
        rendered / "demo-colt/half-laplace.histogram.png").read_bytes()
    for name in ("histogram", "privacy_curve", "sensitivity", "regret"):
        png = (rendered / f"demo-colt/half-laplace.{name}.png").read_bytes()
        # Cropped to everything drawn (bbox_inches="tight"): about 6.6 x 3.7 inches at 110 dpi
        # plus the legend outside the axes.
        width, height = png_size(png)
        assert 600 <= width <= 1300 and 300 <= height <= 700
        assert b"matplotlib" not in png  # no software stamp: committed reports do not churn


def test_privacy_curve_accepts_delta_zero_and_missing_curves() -> None:
    png = plots.privacy_curve_png({"deltas": [], "claimed": [1.0, 0.0],
                                   "lower_bound": [0.7, 0.0]})
    assert png[:8] == PNG_MAGIC
    png = plots.privacy_curve_png({"deltas": [1e-6, 1e-3], "epsilon_accountant": ["inf", 2.0],
                                   "claimed": [1.0, 1e-5], "lower_bound": None})
    assert png[:8] == PNG_MAGIC
    with pytest.raises(plots.PlotError, match="nothing to draw"):
        plots.privacy_curve_png({"deltas": []})


def test_evidence_chart_keeps_the_points_with_the_largest_ratios() -> None:
    points = [GridPoint({"i": i}, 1.0, 0.0, None, 0.5 + i / 100, None).to_dict()
              for i in range(100)]
    png = plots.evidence_png(points, max_points=40)
    assert png_size(png)[1] <= 16 * 110 + 1  # at most 16 inches tall at 110 dpi
    with pytest.raises(plots.PlotError):
        plots.evidence_png([GridPoint({}, 1.0, 0.0).to_dict()])


# ------------------------------------------------------------------------------------------------
# Presentation helpers
# ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("value, text", [(None, "—"), ("inf", "∞"), (math.inf, "∞"),
                                         ("-inf", "−∞"), (1.23456, "1.235"), (3, "3"),
                                         (2e-5, "2e-05")])
def test_format_epsilon(value, text) -> None:
    assert view.format_epsilon(value) == text


def test_markdown_escaping() -> None:
    assert markdown_cell("a | b\n c") == "a \\| b c"
    assert markdown_code("x|y") == "`x\\|y`"
    assert markdown_code("use `q` here") == "``use `q` here``"
    assert markdown_code("`edge`") == "`` `edge` ``"
    assert markdown_code("") == ""


def test_reasons_name_points_readably() -> None:
    assert view.readable_reason("At {'epsilon': 0.5, 'T': 64, 'x': 0.333333333}: exact epsilon "
                                "1 > claimed 0.5.") == ("At epsilon=0.5, T=64, x=0.3333: exact "
                                                        "epsilon 1 > claimed 0.5.")
    assert view.readable_reason("lemma '{x_t}' is {not a dict}") == "lemma '{x_t}' is {not a dict}"


def test_pretty_json_is_compact_and_truncated() -> None:
    assert view.pretty_json({"a": [1, 2], "b": "x"}) == '{"a": [1, 2], "b": "x"}'
    long = view.pretty_json({"x": list(range(2000))}, max_chars=300)
    assert long.endswith("more characters in the JSON file)")
    assert max(len(line) for line in long.splitlines()) <= 100


finite = st.floats(min_value=1e-3, max_value=1e3)
maybe = st.none() | finite


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(claimed=finite, exact=maybe, acc=maybe, lb=maybe)
def test_report_counterexample_marks_agree_with_grid_point(claimed, exact, acc, lb) -> None:
    # The table's counterexample mark is computed from saved JSON; it must agree with the rule the
    # verdict uses (GridPoint.counterexample) on every point.
    point = GridPoint({"x": 1}, claimed, 0.0, exact, acc, lb)
    record = ClaimAudit(PrivacyClaim("p/q", claimed, 0.0, Provenance("p.txt", "v1", "T1")),
                        [point]).to_dict()
    row = view.evidence_table(record).rows[0]
    assert bool(row["counterexample"]) == (point.counterexample() is not None)
    assert row["worst"]


# ------------------------------------------------------------------------------------------------
# The index
# ------------------------------------------------------------------------------------------------

def test_index_json_follows_the_schema(rendered: Path) -> None:
    index = json.loads((rendered / "index.json").read_text())
    assert index["schema"] == INDEX_SCHEMA == "dpaudit.report/1"
    assert index["counts"] == {"violated": 1, "inconclusive": 0, "holds": 1}
    required = {"id", "paper", "theorem", "claimed", "verdict", "worst_case", "lemmas", "report"}
    rows = index["claims"]
    assert [r["id"] for r in rows] == ["demo-arxiv/gauss", "demo-colt/half-laplace"]
    for row in rows:
        assert required <= row.keys()
        assert set(row["claimed"]) == {"epsilon", "delta"}
        assert {"parameters", "epsilon_exact", "epsilon_accountant",
                "epsilon_lower_bound"} <= row["worst_case"].keys()
        assert row["verdict"] in ("holds", "violated", "inconclusive")
        for lem in row["lemmas"]:
            assert {"statement", "status", "worst_ratio"} <= lem.keys()
        assert (rendered / row["report"]).is_file()
        assert row["report"] == f"{row['id']}.html"
    bad = rows[1]
    # 'claimed' is the claim at the worst point (epsilon 0.5 there), the default instance is
    # 'claimed_example' (the worst point and the default instance may differ).
    # 'paper' is the paper's key, one for both versions (it once held the source file name,
    # so grouping the index by it split a paper); the file is 'source_file'.
    assert {r["paper"] for r in rows} == {"demo"}
    assert bad["source_file"] == "demo.txt"
    assert bad == {**bad, "paper": "demo", "theorem": "Theorem 3",
                   "claimed": {"epsilon": 0.5, "delta": 0.0},
                   "claimed_example": {"epsilon": 1.0, "delta": 0.0}, "verdict": "violated"}
    assert bad["worst_case"]["parameters"] == {"epsilon": 0.5, "T": 1}
    assert bad["worst_case"]["epsilon_exact"] == 1.0
    assert bad["lemmas"] == [{"statement": LEMMA.statement, "status": "violated",
                              "worst_ratio": 1.1, "method": "sampled"}]


def test_index_pages_have_one_row_per_claim(rendered: Path) -> None:
    records = load_report_directory(rendered)
    md = render_index_markdown(records, "reports")
    rows = [ln for ln in md.splitlines() if ln.startswith("| `demo-")]
    assert rows == [
        "| `demo-arxiv/gauss` | **holds** |  | (2, 1e-05) | (2, 1e-05) | — | 1.9 | 1.2 | "
        "[demo](papers/demo.md) | Theorem 9 | [md](demo-arxiv/gauss.md) · [json](demo-arxiv/gauss.json) |",
        # "where" is one short line; the full severity sentence is on the claim page.
        "| `demo-colt/half-laplace` | **violated** | factor 2 · at every audited point (6 of 6) "
        "| (1, 0) | "
        "(0.5, 0) | 1 | 0.5 | 0.8 | [demo](papers/demo.md) | Theorem 3 | "
        "[md](demo-colt/half-laplace.md) · [json](demo-colt/half-laplace.json) |",
    ]
    # The claim rows name the paper; its citation is printed once, in the papers table.
    assert md.count("demo.txt (COLT 2012)") == 1
    assert ("dpaudit audit-claims demo-arxiv/gauss demo-colt/half-laplace --budget quick --seed 7 "
            "--alpha 0.05 --out reports") in md
    page = check_html(render_index_html(records, "reports"))
    links = [u for tag, u in page.urls if tag == "a" and u.startswith("demo-")]
    # "Start here" links the violated claim first, then the claims table links every claim.
    assert links == ["demo-colt/half-laplace.html", "demo-arxiv/gauss.html",
                     "demo-colt/half-laplace.html"]


def test_reproduce_commands_of_plugin_and_script_claims() -> None:
    """The page and the index print the command that works as pasted (the plugin a
    claim needs named), or say how a script's claim is reproduced, never a command that fails."""
    base = {"budget": "quick", "seed": 0, "alpha": 0.05}
    plugin = {**base, "id": "mine/a", "reproduce": "dpaudit audit mine/a --budget quick --seed 0 "
              "--alpha 0.05 --plugin '/x/my claims.py'"}
    bundled = {**base, "id": "demo/b", "reproduce": "dpaudit audit demo/b --budget quick --seed 0 "
               "--alpha 0.05"}
    script = {**base, "id": "mine/c", "reproduce": "(registered by the script /x/c.py as it ran: "
              "reproduce it by running python /x/c.py again)"}
    assert view.reproduce_command(plugin) == plugin["reproduce"]
    assert view.needed_plugins(plugin) == ["/x/my claims.py"] and view.needed_plugins(bundled) == []
    assert view.index_reproduce_command([plugin, bundled], "out") == (
        "dpaudit audit-claims mine/a demo/b --budget quick --seed 0 --alpha 0.05 --out out "
        "--plugin '/x/my claims.py'")
    assert view.needed_plugins(script) is None
    assert view.index_reproduce_command([plugin, script], "out") == ""
    # A crafted "reproduce" field never reaches the page: the bare command is printed instead.
    for text in ("dpaudit audit x; rm -rf ~", "dpaudit audit other/claim --plugin evil.py"):
        crafted = {**base, "id": "demo/d", "reproduce": text}
        assert view.reproduce_command(crafted) == ("dpaudit audit demo/d --budget quick --seed 0 "
                                                   "--alpha 0.05")


def test_index_of_mixed_settings_has_no_single_reproduce_command() -> None:
    other_seed = holding_audit()
    other_seed.seed = 8
    a = claim_record(other_seed)
    b = claim_record(violated_audit())
    assert view.index_reproduce_command([a, b]) == ""
    assert build_index([b, a])["claims"][0]["id"] == "demo-arxiv/gauss"


# ------------------------------------------------------------------------------------------------
# Headless Chromium: the pages render as a reader sees them
# ------------------------------------------------------------------------------------------------

@pytest.mark.skipif(shutil.which("chromium") is None, reason="chromium is not installed")
def test_html_renders_in_headless_chromium(rendered: Path, tmp_path_factory) -> None:
    from matplotlib.image import imread

    shots = tmp_path_factory.mktemp("shots")
    proc = subprocess.run(["sh", str(REPO / "scripts/check_html.sh"), "-o", str(shots),
                           "--desktop-only", str(rendered / "demo-colt/half-laplace.html")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    image = imread(shots / "half-laplace.png")
    assert image.shape[1] == 1400
    # A rendered page, not a blank or error page: dark text on the light background, the red
    # verdict band, and the embedded figures (many distinct colours).
    pixels = image[::4, ::4, :3].reshape(-1, 3)  # every 16th pixel is plenty for these checks
    assert (pixels.mean(axis=1) < 0.3).mean() > 0.002
    assert ((pixels[:, 0] > 0.9) & (pixels[:, 1] < 0.95) & (pixels[:, 2] < 0.95)).mean() > 0.01
    codes = (pixels * 15).round().astype(int) @ np.array([256, 16, 1])
    assert np.unique(codes).size > 100


def test_histogram_bins_of_a_lattice_statistic_have_no_empty_holes() -> None:
    """A count statistic with more distinct values than bins gets bins of whole lattice steps with
    edges halfway between lattice points: every bin holds a lattice point, so a bin is empty only
    when the data are, never because equal-width bins straddle no integer (a dip a reviewer would
    read as data). A continuous statistic keeps equal-width bins."""
    from dpaudit.blackbox.statistics import HistogramAccumulator

    rng = np.random.default_rng(7)
    a = rng.binomial(200, 0.5, 20_000).astype(float)
    b = rng.binomial(200, 0.45, 20_000).astype(float)
    hist = HistogramAccumulator.from_training(a, b)
    edges = hist.edges
    assert edges.size - 1 <= 40
    widths = np.diff(edges)
    assert np.allclose(widths, widths[0]) and widths[0] == np.round(widths[0]) >= 1
    assert np.allclose(edges - np.floor(edges), 0.5)  # halfway between integers
    hist.update(a, 0)
    hist.update(b, 1)
    assert (hist.counts.sum(axis=0) > 0).all()
    assert hist.counts.sum() == a.size + b.size
    c = rng.normal(size=5_000)
    assert HistogramAccumulator.from_training(c, c + 0.1).edges.size == 41


def test_a_pooled_event_is_drawn_with_both_tails_and_its_pooled_counts() -> None:
    # A pooled mirrored pair has no single threshold: both of its lines are drawn, the legend
    # gives its pooled counts (not per-input "on D / on D'" counts) and the caption says how to
    # read it; a figure that shaded nothing would disagree with its table.
    from dpaudit.reporting import plots

    base = {"edges": [0.0, 1.0, 2.0, 3.0], "counts0": [5, 10, 1], "counts1": [1, 10, 5],
            "threshold": None, "statistic": "s", "parameters": {"epsilon": 1}}
    pooled = {**base, "event_tail": "pooled", "event_parts": [["lower", 1.0], ["upper", 2.0]],
              "event": "pooled mirrored pair: [s <= 1 on data1 or s > 2 on data0] vs [...]",
              "event_test_counts": {"count0": 6, "nobs0": 32, "count1": 10, "nobs1": 32}}
    png, _ = plots._histogram(pooled)
    assert png != plots._histogram(base)[0]  # something is drawn
    label = plots._event_label(pooled, 1.0)
    assert "10 of 32 (first bracket)" in label and "6 of 32 (second bracket)" in label
    assert "on D" not in label
    assert "pooled mirrored pair" in plots._histogram_caption({}, pooled)
    assert "shaded side of the dashed line" in plots._histogram_caption({}, base)
