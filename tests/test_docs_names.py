"""Every name the documentation mentions exists, so the pages cannot go stale silently.

The pages read: the README, ``docs/*.md``, each bundled paper's ``README.md`` and each example's.
In them:

* every dotted name ``dpaudit.x.y`` resolves: the longest prefix that imports as a module, then
  ``getattr`` for the rest (``dpaudit.blackbox.empirical.HEDGE_RANKINGS`` fails: the module is
  ``empirical_audit``); so do names written without the prefix (``formal.smt``, and in a paper's
  README its own modules' names, ``exact.alg5_accountant``);
* every repository path (``src/...``, ``tests/...``, ``docs/...``, ``benchmarks/...``,
  ``scripts/...``, ``examples/...``, ``reports/...``, ``.ci/...``) exists, and a pytest node id
  ``tests/test_x.py::test_y`` names a test defined in that file; every relative Markdown link
  ``[text](target)`` points at an existing file (resolved from the page's folder);
* no heading names an issue number;
* every page of ``docs/`` is in ``mkdocs.yml``'s navigation, and every entry there is a page;
* the removed ``dpaudit.audits`` paths (and bare ``audits.x`` names) appear only in
  ``docs/layout.md``'s changelog, and there none of them imports (they were removed, not moved).

Placeholders (``<paper>``, ``X``) and wildcards are left out or globbed; a path under a folder
that ``.gitignore`` excludes (``out/``) is not a repository path and is not checked.
"""

from __future__ import annotations

import importlib
import re
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md"),
                *(ROOT / "src" / "dpaudit" / "papers").glob("*/README.md"),
                *(ROOT / "examples").glob("*/README.md")])

DOTTED = re.compile(r"(?<![\w./-])dpaudit(?:\.[A-Za-z_][A-Za-z_0-9]*)+(?![\w/])")
PATH = re.compile(r"(?<![\w./-])((?:src|tests|docs|benchmarks|scripts|examples|reports|\.ci)/"
                  r"[\w./*<>-]*[\w*>/])(::[\w\[\]-]+)?")
LINK = re.compile(r"\]\(([^)\s#]+)(?:#[^)]*)?\)")
BARE_OLD = re.compile(r"(?<![\w.])(?:dpaudit\.)?audits\.[A-Za-z_]")
#: The one page that may name the removed import paths: its changelog maps them to the new ones.
OLD_PATHS_PAGE = ROOT / "docs" / "layout.md"


def _rel(page: Path) -> str:
    return str(page.relative_to(ROOT))


def dotted_names(text: str) -> set[str]:
    """The ``dpaudit.x.y`` names in ``text`` (a trailing ``.`` of a sentence is not part of one)."""
    return {m.group(0) for m in DOTTED.finditer(text)}


def repository_paths(text: str) -> set[tuple[str, str | None]]:
    """``(path, pytest node suffix or None)`` for every repository path mentioned in ``text``."""
    out = set()
    for m in PATH.finditer(text):
        path = m.group(1).rstrip(".")
        out.add((path, m.group(2)[2:] if m.group(2) else None))
    return out


#: Packages a page may name without the ``dpaudit.`` prefix (```formal.smt```).
SUBPACKAGES = ("mechanisms", "learners", "blackbox", "formal", "claims", "execution", "reporting",
               "cli")
SHORT = re.compile(r"`([A-Za-z_]\w*)\.([A-Za-z_][\w.]*?)(?:\(\))?`")


def short_names(page: Path, text: str) -> set[str]:
    """Backticked names written without ``dpaudit.``, made full: in a paper's README a module of
    that paper (```exact.alg5_accountant``` is ``dpaudit.papers.afkt23.exact.alg5_accountant``),
    elsewhere a dpaudit package (```formal.smt```). File names (```claims.py```) are paths."""
    paper_modules = ({f.stem for f in page.parent.glob("*.py")}
                     if page.parent.parent.name == "papers" else set())
    out = set()
    for head, rest in SHORT.findall(text):
        if rest == "py":
            continue
        if head in paper_modules:
            out.add(f"dpaudit.papers.{page.parent.name}.{head}.{rest}")
        elif head in SUBPACKAGES:
            out.add(f"dpaudit.{head}.{rest}")
    return out


def markdown_links(text: str) -> set[str]:
    """Relative link targets of ``[text](target)`` (web addresses and pure anchors left out)."""
    return {t for t in LINK.findall(text) if "://" not in t and not t.startswith("mailto:")}


def resolves(name: str) -> bool:
    """Whether ``name`` (``dpaudit.a.b.C``) is an importable module or an attribute of one."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                obj = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attr in parts[cut:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


def path_exists(path: str, base: Path = ROOT) -> bool:
    """Whether a mentioned path exists; ``<placeholder>`` segments and ``*`` match any name."""
    pattern = re.sub(r"<[^>]*>", "*", path).rstrip("/")
    if "*" in pattern:
        return any(base.glob(pattern))
    return (base / pattern).exists()


def test_the_checks_find_planted_stale_names() -> None:
    text = ("`dpaudit.blackbox.empirical.HEDGE_RANKINGS` and dpaudit.blackbox.empirical_audit."
            "HEDGE_RANKINGS, see tests/test_nope.py and tests/test_architecture.py::test_missing, "
            "[a page](gone.md), `audits.accounting.pure_composition_epsilon`.")
    names = dotted_names(text)
    assert names == {"dpaudit.blackbox.empirical.HEDGE_RANKINGS",
                     "dpaudit.blackbox.empirical_audit.HEDGE_RANKINGS"}
    assert [resolves(n) for n in sorted(names)] == [False, True]
    assert not resolves("dpaudit.no_such_module")
    paths = dict(repository_paths(text))
    assert paths == {"tests/test_nope.py": None, "tests/test_architecture.py": "test_missing"}
    assert not path_exists("tests/test_nope.py") and path_exists("tests/test_architecture.py")
    assert path_exists("src/dpaudit/papers/<paper>/README.md")
    assert markdown_links(text) == {"gone.md"}
    afkt23 = ROOT / "src" / "dpaudit" / "papers" / "afkt23" / "README.md"
    assert short_names(afkt23, "`exact.alg5_accountant`, `claims.py`, `formal.smt`, `x.y`") == {
        "dpaudit.papers.afkt23.exact.alg5_accountant", "dpaudit.formal.smt"}
    assert not resolves("dpaudit.papers.afkt23.exact.alg5_accountant_gone")
    assert BARE_OLD.search(text)


@pytest.mark.parametrize("page", PAGES, ids=_rel)
def test_every_dotted_name_resolves(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    names = dotted_names(text) | short_names(page, text)
    removed = {n for n in names if n == "dpaudit.audits" or n.startswith("dpaudit.audits.")}
    if page == OLD_PATHS_PAGE:  # the changelog names the removed paths: they must stay removed
        assert removed and not any(resolves(n) for n in removed)
    missing = sorted(n for n in names - removed if not resolves(n))
    assert missing == [], f"{_rel(page)} names what does not exist"


@pytest.mark.parametrize("page", PAGES, ids=_rel)
def test_every_repository_path_and_test_exists(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    bad = []
    for path, node in sorted(repository_paths(text), key=str):
        if not (path_exists(path) or path_exists(path, page.parent)):  # an example's own src/
            bad.append(path)
        elif node is not None:
            source = (ROOT / path).read_text(encoding="utf-8")  # node ids name the root's tests/
            if not re.search(rf"^\s*(?:async )?def {re.escape(node.split('[')[0])}\(", source, re.M):
                bad.append(f"{path}::{node}")
    for target in sorted(markdown_links(text)):
        if not path_exists(target, page.parent):
            bad.append(f"link {target}")
    assert bad == [], f"{_rel(page)} mentions what is not in the repository"


@pytest.mark.parametrize("page", PAGES, ids=_rel)
def test_old_import_paths_only_in_the_table_of_old_paths(page: Path) -> None:
    if page == OLD_PATHS_PAGE:
        return
    lines = [line for line in page.read_text(encoding="utf-8").splitlines() if BARE_OLD.search(line)]
    assert lines == [], f"{_rel(page)} names removed dpaudit.audits paths"


def test_every_page_is_read() -> None:
    # The pages above are the ones a user reads; a renamed folder must not empty the list.
    names = {_rel(p) for p in PAGES}
    assert {"README.md", "docs/engine.md", "docs/cli.md", "src/dpaudit/papers/afkt23/README.md"} <= names
    assert len(names) >= 14


ISSUE_IN_HEADING = re.compile(r"^#+ .*\bissues? #?\d+", re.I | re.M)


@pytest.mark.parametrize("page", PAGES, ids=_rel)
def test_no_heading_names_an_issue_number(page: Path) -> None:
    # A heading says what the section is about; the issue that brought it is the history's business.
    assert ISSUE_IN_HEADING.findall(page.read_text(encoding="utf-8")) == []
    # The pattern must still catch a tracker number in a heading (built so this file has none).
    assert ISSUE_IN_HEADING.search("## Code dpaudit did not write (" + "issue" + " 24)")


CLI_PAGE = ROOT / "docs" / "cli.md"


def _parser_options() -> dict[str, set[str]]:
    """Every option string of the ``dpaudit`` parser, per command (``""``: the top level)."""
    import argparse

    from dpaudit.cli.parser import build_parser

    parser = build_parser()
    out = {"": {s for a in parser._actions for s in a.option_strings}}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                out[name] = {s for a in sub._actions for s in a.option_strings}
    return out


def _pytest_plugin_options() -> set[str]:
    from dpaudit import testing

    seen: set[str] = set()

    class Group:
        def addoption(self, *names: str, **kwargs: object) -> None:
            seen.update(names)

    class Parser:
        def getgroup(self, *args: object) -> Group:
            return Group()

    testing.pytest_addoption(Parser())  # type: ignore[arg-type]
    return seen


def _make_targets() -> set[str]:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    phony = re.search(r"^\.PHONY:(.*)$", makefile, re.M)
    assert phony, "the Makefile declares its targets .PHONY"
    return set(phony.group(1).split())


def test_cli_page_names_every_option_of_every_command() -> None:
    text = CLI_PAGE.read_text(encoding="utf-8")
    options = _parser_options()
    assert {"list", "audit", "audit-claims", "report", "float-audit"} <= set(options)
    assert {"--version", "--json", "--sampler", "-j"} <= set().union(*options.values())
    missing = sorted(f"{cmd or 'dpaudit'} {opt}" for cmd, opts in options.items() for opt in opts
                     if opt not in ("-h", "--help") and not re.search(rf"`{re.escape(opt)}\b", text))
    assert missing == [], "docs/cli.md does not name these options"


def test_cli_page_names_every_pytest_option_and_make_target() -> None:
    text = CLI_PAGE.read_text(encoding="utf-8")
    options = _pytest_plugin_options()
    assert {"--dp-seed", "--dp-report"} <= options
    assert sorted(o for o in options if not re.search(rf"`{re.escape(o)}\b", text)) == []
    targets = _make_targets()
    assert {"test", "audit", "docs"} <= targets
    assert sorted(t for t in targets if f"`make {t}`" not in text) == []


def _sentences(text: str) -> list[str]:
    """Long sentences of a page, whitespace normalised (code blocks and tables left out)."""
    prose = re.sub(r"```.*?```", " ", text, flags=re.S)
    prose = "\n".join(line for line in prose.splitlines()
                      if not line.lstrip().startswith(("|", "#")))
    return [s for s in re.split(r"(?<=[.!?])\s+", " ".join(prose.split())) if len(s) >= 100]


def test_no_long_sentence_is_pasted_into_two_pages() -> None:
    # One fact, one page: the same paragraph pasted at the top of five docs drifted apart.
    where: dict[str, list[str]] = {}
    for page in PAGES:
        for sentence in set(_sentences(page.read_text(encoding="utf-8"))):
            where.setdefault(sentence, []).append(_rel(page))
    assert {s[:80]: pages for s, pages in where.items() if len(pages) > 1} == {}
    pasted = "Engine modules are named here by the packages of the engine layout: `dpaudit.blackbox` " \
             "(black-box statistics), and the old import paths keep working for one release."
    assert _sentences(f"# A\n\n{pasted}\n\n| a | b |\n") == [pasted]


def test_every_page_of_docs_is_in_the_site_navigation() -> None:
    # A page missing from mkdocs.yml's nav is built but reachable only by a link; the site's
    # navigation is how a maintainer finds the notes a module docstring points at.
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    nav = config.split("\nnav:\n", 1)[1].split("\n# ", 1)[0]
    listed = set(re.findall(r"^  - .*:\s*([\w-]+\.md)\s*$", nav, re.M))
    pages = {p.name for p in (ROOT / "docs").glob("*.md")}
    assert pages - listed == set(), "pages not in mkdocs.yml's nav"
    assert listed - pages == set(), "nav entries without a page"
