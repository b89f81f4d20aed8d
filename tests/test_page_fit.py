"""Pages fit an 800 px window with their details open, and figures keep their labels apart
(an opened lemma counterexample once widened its table to 990-1186 px inside a 746 px
column and was raw JSON; evidence-chart labels overlapped on claims with many points;
`make check-html` shot 4000 px of pages that run to 10000 px)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from dpaudit.reporting import plots, view
from dpaudit.reporting.writer import claim_record, render_claim_files

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "golden"


def golden(name: str) -> dict:
    return claim_record(json.loads((GOLDEN / f"{name}.json").read_text(encoding="utf-8")))


# ------------------------------------------------------------------------------------------------
# Evidence chart: labels never overlap
# ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["pfcoco__wdp-cocop-gaussian", "pfcoco__wdp-cocol-gamma",
                                  "jkt12-colt__pocp-doubling", "afkt23__alg5"])
def test_evidence_chart_labels_do_not_overlap(name: str) -> None:
    _, data = plots._evidence(golden(name)["points"])
    assert data["label_overlap_px"] == 0.0


def test_the_overlap_measure_catches_squeezed_labels(monkeypatch) -> None:
    """Rows half as tall as their three-line labels overlap, and the measure says so."""
    full = plots._label_row_inches
    monkeypatch.setattr(plots, "_label_row_inches", lambda lines, pt: full(lines, pt) / 2)
    _, data = plots._evidence(golden("pfcoco__wdp-cocop-gaussian")["points"])
    assert data["label_overlap_px"] > 5.0


def test_a_chart_with_more_points_than_fit_says_how_many_are_left_out() -> None:
    points = golden("pfcoco__wdp-cocop-gaussian")["points"]
    _, data = plots._evidence(points)
    shown = len(data["labels"])
    lines = 3  # these labels wrap onto three lines
    rows_fit = int((plots._EVIDENCE_MAX_IN - plots._EVIDENCE_FRAME_IN)
                   / ((lines * 1.2 * 7.5 + 4.0) / 72.0))
    assert shown == min(40, rows_fit) < len(points)


# ------------------------------------------------------------------------------------------------
# Lemma counterexamples: a readable table, not JSON
# ------------------------------------------------------------------------------------------------

def test_counterexample_rows_are_readable_and_cut_long_lists() -> None:
    ce = {"claimed": 1.0, "observed": 1.008818841071856, "replayed": True,
          "smt_model": {"v[0]": -0.5, "y'": 0.875}, "v": [-0.5, 0.0],
          "stream": [{"kind": "linear", "g": [float(i)]} for i in range(20)]}
    rows = dict(view.counterexample_rows(ce))
    assert rows["claimed"] == "1" and rows["observed"] == "1.00882" and rows["replayed"] == "true"
    assert rows["smt_model"] == "v[0]=-0.5, y'=0.875" and rows["v"] == "[-0.5, 0]"
    assert rows["stream"].startswith("[kind=linear, g=[0]; kind=linear, g=[1];")
    assert rows["stream"].endswith("... (20 in all)]")
    assert not any(c in "".join(rows.values()) for c in '{}"')
    assert view.counterexample_rows([1.0, 2.5]) == (("value", "[1, 2.5]"),)


def test_lemma_pages_show_no_json_block() -> None:
    record = golden("jkt12-colt__pqftl")
    from dpaudit.reporting.html import render_claim_html
    from dpaudit.reporting.markdown import render_claim_markdown

    page, md = render_claim_html(record), render_claim_markdown(record)
    assert 'class="mini ce"' in page and "<pre><code>{" not in page
    assert "```json" not in md and "| smt_model |" in md


# ------------------------------------------------------------------------------------------------
# Full-height screenshots at 800 and 1400 px, details open, nothing wider than the page
# ------------------------------------------------------------------------------------------------

CHROMIUM = next((c for c in ("chromium", "chromium-browser", "google-chrome") if shutil.which(c)),
                None)


@pytest.mark.slow  # about 35 s: four headless Chromium runs per width
@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")
def test_check_html_shoots_whole_pages_with_details_open_and_nothing_overflows(
        tmp_path: Path) -> None:
    """A claim page with lemma counterexamples, rendered and shot by scripts/check_html.sh: the
    screenshots are as tall as the opened page (taller than the old fixed 4000 px) and no element
    is wider than 800 px. A planted overflow is reported and fails the script."""
    from PIL import Image

    record = golden("jkt12-colt__pqftl")
    paths = render_claim_files(tmp_path / "reports", record)
    shots = tmp_path / "shots"
    proc = subprocess.run(["bash", str(ROOT / "scripts" / "check_html.sh"), "-o", str(shots),
                           str(paths.html)], capture_output=True, text=True, timeout=300,
                          env={"PATH": "/usr/bin:/bin", "MAX_HEIGHT": "30000",
                               "HOME": str(tmp_path)})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "overflow" not in proc.stderr
    wide, narrow = Image.open(shots / "pqftl.png"), Image.open(shots / "pqftl.narrow.png")
    assert wide.size[0] == 1400 and narrow.size[0] == 800
    # Full height: the opened page, taller than what was shot before.
    assert wide.size[1] > 4000 and narrow.size[1] > wide.size[1]
    assert f"({narrow.size[1]} px tall)" in proc.stdout
    # A planted overflow (a 1200 px wide block) is found at 800 px and fails the script.
    page = paths.html.read_text(encoding="utf-8").replace(
        "</main>", '<div style="width:1200px">wide</div></main>', 1)
    paths.html.write_text(page, encoding="utf-8")
    proc = subprocess.run(["bash", str(ROOT / "scripts" / "check_html.sh"), "-o", str(shots),
                           "--desktop-only", str(paths.html)], capture_output=True, text=True,
                          timeout=300, env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path),
                                            "WIDE": "800"})
    assert proc.returncode == 1 and "overflow:" in proc.stderr
    reach = int(re.search(r"reaches (\d+) px of 800", proc.stderr).group(1))
    assert reach >= 1200  # the planted block (plus the page's left padding)
