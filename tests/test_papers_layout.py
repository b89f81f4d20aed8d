"""The four paper packages read alike: the same parts in the same places, one boundary between
modules, one lemma-search profile, docstrings without tracker numbers.

Structural laws checked on the source (AST and text), not on any audit's output:

* no module of ``dpaudit.papers`` imports another module's underscore name (what a module needs
  from another has a public name in its defining module);
* every paper's ``__init__`` docstring lists the common modules in one order, then every other
  module of the package, and every listed module exists; every paper's ``README.md`` has the same
  ``##`` sections in the same order;
* every Hypothesis ``settings(...)`` call in a paper takes the engine's profile
  (``LEMMA_SEARCH_SETTINGS``) or afkt23's ``LEMMA_SEARCH_PROFILE``, which differs from it in
  ``report_multiple_bugs`` alone;
* afkt23's stated ranges live in ``ranges.py`` as the other papers' do, one entry per claim;
* no "issue N" reference in ``src/dpaudit/papers``.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PAPERS_DIR = Path(__file__).resolve().parents[1] / "src" / "dpaudit" / "papers"
PAPERS = ("afkt23", "jkt12", "pfcoco", "st13")
#: The modules every paper package has, in the order its docstring lists them.
COMMON = ("claims", "ranges", "pairs", "exact", "lemmas", "smt_lemmas", "plans", "audit")
#: The README sections of every paper, in order.
SECTIONS = ("Claims", "Modules", "Reading choices", "Readings: one primary reading per claim",
            "Evidence: how each number is obtained", "Verdicts", "Limits of the evidence")


def _sources() -> list[Path]:
    return sorted(PAPERS_DIR.rglob("*.py"))


def test_no_papers_module_imports_another_modules_underscore_name() -> None:
    found = []
    for path in _sources():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.level > 0 or (
                    node.module or "").startswith("dpaudit.papers")):
                found += [f"{path.relative_to(PAPERS_DIR)}:{node.lineno} {a.name}"
                          for a in node.names if a.name.startswith("_")]
    assert not found, "underscore names imported across papers modules: " + ", ".join(found)


@pytest.mark.parametrize("paper", PAPERS)
def test_the_package_docstring_lists_its_modules_in_the_common_order(paper: str) -> None:
    folder = PAPERS_DIR / paper
    doc = ast.get_docstring(ast.parse((folder / "__init__.py").read_text(encoding="utf-8"))) or ""
    listed = re.findall(r"^\* ``(\w+)``:", doc, flags=re.M)
    modules = {p.stem for p in folder.glob("*.py")} - {"__init__"}
    assert tuple(listed[:len(COMMON)]) == COMMON, listed
    assert set(listed) == modules, (f"listed but missing: {set(listed) - modules}; "
                                    f"present but not listed: {modules - set(listed)}")
    assert len(listed) == len(set(listed))


@pytest.mark.parametrize("paper", PAPERS)
def test_every_readme_has_the_same_sections_in_the_same_order(paper: str) -> None:
    text = (PAPERS_DIR / paper / "README.md").read_text(encoding="utf-8")
    assert tuple(re.findall(r"^## (.+)$", text, flags=re.M)) == SECTIONS


def _settings_calls(tree: ast.AST) -> list[ast.Call]:
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
            if name == "settings":
                out.append(node)
    return out


def test_every_paper_lemma_search_uses_the_shared_profile() -> None:
    allowed = {"LEMMA_SEARCH_SETTINGS", "LEMMA_SEARCH_PROFILE"}
    calls = 0
    for path in _sources():
        for call in _settings_calls(ast.parse(path.read_text(encoding="utf-8"))):
            calls += 1
            kwargs = {k.arg for k in call.keywords}
            spread = {k.value.id for k in call.keywords
                      if k.arg is None and isinstance(k.value, ast.Name)}
            assert kwargs - {None} <= {"max_examples"} and spread & allowed, (
                f"{path.relative_to(PAPERS_DIR)}:{call.lineno}: a lemma search sets its own "
                "Hypothesis settings instead of the shared profile")
    assert calls >= 4  # afkt23's query search, pfcoco's gradient search, st13's two searches


def test_afkt23_profile_differs_from_the_shared_one_only_where_documented() -> None:
    from dpaudit.formal.sensitivity import LEMMA_SEARCH_SETTINGS
    from dpaudit.papers.afkt23.lemmas import LEMMA_SEARCH_PROFILE

    differ = {k for k in set(LEMMA_SEARCH_SETTINGS) | set(LEMMA_SEARCH_PROFILE)
              if LEMMA_SEARCH_SETTINGS.get(k) != LEMMA_SEARCH_PROFILE.get(k)}
    assert differ == {"report_multiple_bugs"}
    assert LEMMA_SEARCH_PROFILE["report_multiple_bugs"] is True


def test_afkt23_ranges_live_in_ranges_py_one_entry_per_claim() -> None:
    from dpaudit.papers.afkt23.claims import AFKT23_CLAIMS
    from dpaudit.papers.afkt23.ranges import AFKT23_RANGES

    assert set(AFKT23_RANGES) == {c.id for c in AFKT23_CLAIMS}
    for claim in AFKT23_CLAIMS:
        assert claim.ranges == AFKT23_RANGES[claim.id] and claim.ranges


def test_no_issue_numbers_in_the_papers() -> None:
    pattern = re.compile(r"[Ii]ssues? [0-9]+")
    hits = [f"{p.relative_to(PAPERS_DIR)}:{i}" for p in sorted(PAPERS_DIR.rglob("*"))
            if p.suffix in (".py", ".md")
            for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
            if pattern.search(line)]
    assert not hits, "issue numbers (say what and why instead): " + ", ".join(hits)
