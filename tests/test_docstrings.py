"""Docstrings a maintainer can read: numpydoc parameters in the papers, no tracker numbers.

Checked on the source text (AST), not on any audit's output:

* every public function and public-class method of ``dpaudit.papers`` has a docstring that
  opens with a one-line summary and, when it takes parameters, a numpydoc ``Parameters``
  section (the convention of :func:`dpaudit.blackbox.audit`) that names each of them;
* no file of ``src/`` or ``tests/`` refers to the tracker by number: a bare number means nothing
  to a maintainer without the tracker, so the text says what is pinned and why instead;
* every module docstring of ``src/dpaudit`` states its idea and source in at most
  :data:`MODULE_DOCSTRING_LINES` lines, except the (shrinking) exemption list; the arguments it
  used to hold are in ``docs/``, and every ``docs/<page>.md#<anchor>`` pointer in ``src/`` (and
  every anchored link between the pages) names an existing heading.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAPERS_DIR = ROOT / "src" / "dpaudit" / "papers"

#: A tracker reference: "issue" or "issues", a space, a number.
TRACKER_NUMBER = re.compile(r"\b[Ii]ssues? [0-9]+")
#: The same reference wrapped onto the next line of a comment or docstring ("(issue" / "# 35").
TRACKER_NUMBER_WRAPPED = re.compile(r"\b[Ii]ssues?[ \t]*\n[ \t]*(?:#[ \t]*)?[0-9]+")

_SECTION = re.compile(r"^Parameters\n-{10,}\n(.*?)(?:\n\n[A-Z][A-Za-z ]*\n-{4,}\n|\Z)",
                      re.S | re.M)


def _parameters(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    a = fn.args
    names = [x.arg for x in a.posonlyargs + a.args + a.kwonlyargs]
    names += [x.arg for x in (a.vararg, a.kwarg) if x is not None]
    return [n for n in names if n not in ("self", "cls")]


def _public_functions(tree: ast.AST, prefix: str = ""):
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            yield from _public_functions(node, f"{prefix}{node.name}.")
        elif (isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
              and not node.name.startswith("_")):
            yield prefix + node.name, node


def _documented(doc: str) -> set[str] | None:
    """The names a numpydoc ``Parameters`` section documents (``a, b`` and ``a : type`` lines);
    None when there is no such section."""
    m = _SECTION.search(doc)
    if m is None:
        return None
    names: set[str] = set()
    for line in m.group(1).splitlines():
        if line and not line[0].isspace():
            names.update(n.strip().lstrip("*") for n in line.split(":")[0].split(","))
    return names


def _undocumented(path: Path) -> list[str]:
    out = []
    for name, fn in _public_functions(ast.parse(path.read_text(encoding="utf-8"))):
        where = f"{path.relative_to(PAPERS_DIR)}:{fn.lineno} {name}"
        doc = ast.get_docstring(fn) or ""
        if not doc.strip():
            out.append(f"{where}: no docstring")
            continue
        if "\n" in doc.split("\n\n", 1)[0].strip():
            out.append(f"{where}: the summary runs over more than one line")
        params = _parameters(fn)
        if not params:
            continue
        names = _documented(doc)
        if names is None:
            out.append(f"{where}: no Parameters section")
        elif set(params) - names:
            out.append(f"{where}: {sorted(set(params) - names)} not in its Parameters section")
    return out


def test_every_public_papers_function_has_a_summary_and_documents_its_parameters() -> None:
    missing = [line for path in sorted(PAPERS_DIR.rglob("*.py")) for line in _undocumented(path)]
    assert not missing, "docstrings short of the convention:\n" + "\n".join(missing)


def test_the_section_parser_reads_numpydoc() -> None:
    doc = ("Summary.\n\nParameters\n----------\na, b\n    Two.\nc : int\n    One.\n*args\n"
           "    Rest.\n\nReturns\n-------\nint\n    Not a parameter.\n")
    assert _documented(doc) == {"a", "b", "c", "args"}
    assert _documented("Summary.\n\n``a``: prose, not numpydoc.") is None


def test_no_tracker_numbers_in_src_or_tests() -> None:
    hits = []
    for top in (ROOT / "src", ROOT / "tests"):
        for path in sorted(top.rglob("*")):
            if not path.is_file() or "__pycache__" in path.parts:
                continue
            try:
                text = path.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                continue
            hits += [f"{path.relative_to(ROOT)}:{i}"
                     for i, line in enumerate(text.splitlines(), 1) if TRACKER_NUMBER.search(line)]
            hits += [f"{path.relative_to(ROOT)}:{text.count(chr(10), 0, m.start()) + 1} (wrapped)"
                     for m in TRACKER_NUMBER_WRAPPED.finditer(text)]
    assert not hits, "tracker numbers (say what and why instead): " + ", ".join(hits)


def test_the_tracker_pattern_catches_a_number_and_nothing_else() -> None:
    assert TRACKER_NUMBER.search("see " + "issue" + " 45") and TRACKER_NUMBER.search(
        "Issues" + " 12 and 13")
    assert not TRACKER_NUMBER.search("an issue with 3 pairs")
    assert TRACKER_NUMBER_WRAPPED.search("height (" + "issue\n    # 35: labels)")
    assert TRACKER_NUMBER_WRAPPED.search("audit (" + "issue\n    35: empty)")
    assert not TRACKER_NUMBER_WRAPPED.search("an issue\n    with 3 pairs")
    assert not TRACKER_NUMBER.search("tissue 4")


#: The most lines a module docstring of ``src/dpaudit`` may have (its idea and its source; the
#: prose, derivations and proofs live in ``docs/``, linked from the docstring).
MODULE_DOCSTRING_LINES = 20
SRC_DIR = ROOT / "src" / "dpaudit"

#: Module docstrings still longer than :data:`MODULE_DOCSTRING_LINES`: ``user_claims``, whose
#: runnable example alone is longer and is rendered on the API page from the docstring (``Claim``'s docstring points to it,
#: tests/test_docs_api.py pins it). The list may only shrink: an entry whose docstring fits fails
#: :func:`test_the_long_docstring_exemptions_are_still_needed`.
LONG_DOCSTRING_EDITED_ELSEWHERE = (
    "claims/user_claims.py",
)


def _module_docstring_lines(path: Path) -> int:
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")), clean=True)
    return len(doc.splitlines()) if doc else 0


def test_module_docstrings_state_the_idea_in_a_few_lines() -> None:
    exempt = set(LONG_DOCSTRING_EDITED_ELSEWHERE)
    long = [f"{path.relative_to(SRC_DIR).as_posix()}: {n} lines"
            for path in sorted(SRC_DIR.rglob("*.py"))
            if path.relative_to(SRC_DIR).as_posix() not in exempt
            and (n := _module_docstring_lines(path)) > MODULE_DOCSTRING_LINES]
    assert not long, (f"module docstrings over {MODULE_DOCSTRING_LINES} lines (keep the idea and "
                      "the source; move the argument to docs/ and link it):\n" + "\n".join(long))


def test_the_long_docstring_exemptions_are_still_needed() -> None:
    exempt = LONG_DOCSTRING_EDITED_ELSEWHERE
    assert len(set(exempt)) == len(exempt), "an exemption is listed twice"
    for rel in exempt:
        path = SRC_DIR / rel
        assert path.is_file(), f"{rel} is exempt but does not exist: remove it from the list"
        assert _module_docstring_lines(path) > MODULE_DOCSTRING_LINES, (
            f"{rel}'s module docstring fits: remove it from the list")


#: A pointer into the documentation from a docstring or comment: ``docs/<page>.md#<anchor>``.
DOCS_POINTER = re.compile(r"docs/([\w-]+\.md)#([\w-]+)")
_HEADING = re.compile(r"^#{1,6} +(.+?) *#*$", re.M)


def _anchors(page: Path) -> set[str]:
    """The heading anchors of a page as MkDocs' ``toc`` extension makes them (its default
    slugify: markup and punctuation dropped, lower case, runs of spaces as one ``-``)."""
    text = re.sub(r"^```.*?^```", "", page.read_text(encoding="utf-8"), flags=re.S | re.M)
    out = set()
    for heading in _HEADING.findall(text):
        slug = re.sub(r"[^\w\s-]", "", heading.replace("`", "")).strip().lower()
        out.add(re.sub(r"[-\s]+", "-", slug))
    return out


def test_every_docs_pointer_in_src_names_a_page_and_a_heading() -> None:
    bad = []
    for path in sorted(SRC_DIR.rglob("*.py")):
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for page, anchor in DOCS_POINTER.findall(line):
                target = ROOT / "docs" / page
                if not target.is_file() or anchor not in _anchors(target):
                    bad.append(f"{path.relative_to(ROOT)}:{i} docs/{page}#{anchor}")
    assert not bad, "pointers to a page or heading that does not exist: " + ", ".join(bad)


def test_every_anchored_link_between_pages_names_a_heading() -> None:
    bad = []
    for page in sorted((ROOT / "docs").glob("*.md")):
        for target, anchor in re.findall(r"\]\(([\w-]+\.md)#([\w-]+)\)",
                                         page.read_text(encoding="utf-8")):
            linked = ROOT / "docs" / target
            if not linked.is_file() or anchor not in _anchors(linked):
                bad.append(f"{page.name}: {target}#{anchor}")
    assert not bad, "links to a heading that does not exist: " + ", ".join(bad)


def test_the_anchor_rule_is_mkdocs_toc_slugify() -> None:
    page = ROOT / "docs" / "formal-notes.md"
    assert "exact-accounting" in _anchors(page) and "accounting-tolerances" in _anchors(page)
    assert DOCS_POINTER.findall("see docs/engine.md#verdict-rules-in-full.") == [
        ("engine.md", "verdict-rules-in-full")]
    assert "verdict-rules-in-full" in _anchors(ROOT / "docs" / "engine.md")
