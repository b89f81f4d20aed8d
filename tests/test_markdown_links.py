"""No dead link in Markdown (the committed ``reports/*.md`` once held 82 links to ``.html``
pages that ``.gitignore`` keeps out of git, dead on GitHub).

Two checks: the report writer's Markdown links only files that are kept with it (Markdown, JSON,
PNG figures: never the HTML pages, which are generated on demand), and every relative link in a
git-tracked Markdown file resolves to a tracked file or folder. The second reads the committed
``reports/``: after a change to the writer it passes once the reports are regenerated.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

from dpaudit.reporting.writer import load_report_directory, write_claim_report, write_index

ROOT = Path(__file__).resolve().parents[1]
_LINK = re.compile(r"\]\(([^)\s]+)\)")


def relative_links(markdown: str) -> list[str]:
    """Link targets of ``markdown`` outside fenced code, without anchors, that are relative paths."""
    text = re.sub(r"^ *```.*?^ *```", " ", markdown, flags=re.S | re.M)
    text = re.sub(r"`[^`\n]*`", " ", text)
    out = []
    for target in _LINK.findall(text):
        if "://" in target or target.startswith(("#", "mailto:")):
            continue
        out.append(target.split("#", 1)[0])
    return [t for t in out if t]


def dead_links(files: list[Path], exists) -> list[str]:
    """``file: target`` for every relative link whose target ``exists`` (a predicate on the
    normalised path) rejects."""
    dead = []
    for f in files:
        for target in relative_links(f.read_text(encoding="utf-8")):
            path = os.path.normpath(f.parent / target)
            if not exists(path):
                dead.append(f"{f}: {target}")
    return dead


def test_the_link_finder_finds_a_planted_dead_link(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("[ok](b.md) [gone](c.html) `[code](x.html)` [web](https://x)\n"
                                   "```\n[fenced](y.html)\n```\n")
    (tmp_path / "b.md").write_text("[back](a.md#top)\n")
    dead = dead_links(sorted(tmp_path.glob("*.md")), os.path.exists)
    assert dead == [f"{tmp_path / 'a.md'}: c.html"]


def test_the_writers_markdown_links_only_files_kept_beside_it(tmp_path: Path) -> None:
    """Render reports, delete the HTML pages (as the committed reports/ are kept), and follow
    every Markdown link: none is dead and none names an .html page."""
    from test_reporting import holding_audit, laplace_figures, violated_audit

    write_claim_report(tmp_path, violated_audit(laplace_figures(np.random.default_rng(1))))
    write_claim_report(tmp_path, holding_audit())
    write_index(tmp_path, load_report_directory(tmp_path), display_dir="reports")
    for page in tmp_path.rglob("*.html"):
        page.unlink()
    pages = sorted(tmp_path.rglob("*.md"))
    assert len(pages) >= 4  # index, a paper page, two claims
    links = [t for p in pages for t in relative_links(p.read_text(encoding="utf-8"))]
    assert any(t.endswith(".png") for t in links) and any(t.endswith(".json") for t in links)
    assert not [t for t in links if t.endswith(".html")]
    assert dead_links(pages, os.path.exists) == []


def _tracked() -> set[str]:
    try:
        out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return set(out.split())


def test_committed_markdown_has_no_dead_link() -> None:
    tracked = _tracked()
    folders = {os.path.dirname(p) for p in tracked}
    folders |= {f for d in list(folders) for f in _parents(d)}
    markdown = sorted(ROOT / p for p in tracked if p.endswith(".md"))

    def exists(path: str) -> bool:
        rel = os.path.relpath(path, ROOT)
        return rel in tracked or rel in folders

    dead = dead_links(markdown, exists)
    assert not dead, (f"{len(dead)} links in committed Markdown name files that are not in git "
                      "(HTML pages are .gitignored):\n" + "\n".join(dead[:20]))


def _parents(folder: str) -> list[str]:
    parts = folder.split("/")
    return ["/".join(parts[:i]) for i in range(1, len(parts))]
