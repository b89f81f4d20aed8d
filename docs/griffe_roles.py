"""A griffe extension for ``make docs``: dpaudit's docstrings cross-reference with Sphinx roles
(``:class:`~dpaudit.evidence.GridPoint```, ``:func:`epsilon_of```); mkdocstrings renders Markdown.

Every role in every docstring of the package is resolved the way Sphinx would (a dotted path from
``dpaudit``, or a name looked up from the documented object outwards: its class, its module, the
modules above) and rewritten as an optional cross-reference (a link when the target is on a page
of the site, code otherwise; ``~`` shows the last name only). A role naming something in dpaudit
that does not exist is a warning, so ``mkdocs build --strict`` fails on a stale name in a docstring.
Roles naming other libraries (``numpy.random.Generator``) are left as code.
"""

from __future__ import annotations

import importlib
import logging
import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:func|class|mod|meth|data|attr|exc|obj):`(?P<target>[^`]+)`")
PACKAGE = "dpaudit"
_log = logging.getLogger("mkdocs.plugins.dpaudit_roles")


def _member(obj: Any, name: str) -> Any | None:
    try:  # a class's own and inherited members
        members = obj.all_members if obj.is_class else obj.members
    except Exception:  # an alias to another library that griffe did not load
        return None
    return members.get(name)


def _walk(obj: Any, parts: list[str]) -> Any | None:
    for part in parts:
        obj = _member(obj, part)
        if obj is None:
            return None
    return obj


def _canonical(obj: Any, fallback: str) -> str:
    """Where ``obj`` is defined (an alias's target), so the link goes to its documentation."""
    try:
        return obj.final_target.path if obj.is_alias else obj.path
    except Exception:  # an alias into another library
        return fallback


def resolve(pkg: Any, scope: Any, target: str) -> str | None:
    """The full path of ``target`` seen from ``scope``, or None when it is not in the package."""
    if target.startswith(PACKAGE + ".") or target == PACKAGE:
        found = _walk(pkg, target.split(".")[1:]) if target != PACKAGE else pkg
        return None if found is None else _canonical(found, target)
    if target.startswith("."):
        module = scope if scope.is_module else scope.module
        base = module if module.is_init_module else module.parent
        rel = target.lstrip(".")
        for _ in range(len(target) - len(rel) - 1):
            base = base.parent
        found = _walk(base, rel.split("."))
        return None if found is None else _canonical(found, f"{base.path}.{rel}")
    head, *rest = target.split(".")
    node = scope
    while node is not None:
        first = _member(node, head)
        found = _walk(first, rest) if first is not None else None
        if found is not None:
            return _canonical(found, f"{node.path}.{target}")
        if node.is_module and _at_runtime(node.path, target.split(".")):
            return f"{node.path}.{target}"
        node = node.parent
    return None


def _at_runtime(module: str, names: list[str]) -> bool:
    """Whether the imported module has ``names`` (griffe does not see every binding, e.g. the
    constants of a tuple assignment ``A, B = 1, 2``)."""
    try:
        obj: Any = importlib.import_module(module)
    except Exception:
        return False
    for name in names:
        if not hasattr(obj, name):
            return False
        obj = getattr(obj, name)
    return True


class SphinxRoles(griffe.Extension):
    """Rewrite the Sphinx roles of dpaudit's docstrings as mkdocs-autorefs cross-references."""

    def on_package(self, *, pkg: Any, **kwargs: Any) -> None:
        if pkg.path != PACKAGE:
            return
        self._visit(pkg, pkg, set())

    def _visit(self, pkg: Any, obj: Any, seen: set[str]) -> None:
        if obj.path in seen:
            return
        seen.add(obj.path)
        if obj.docstring is not None:
            text = literal_blocks(obj.docstring.value)
            obj.docstring.value = ROLE.sub(lambda m: self._rewrite(pkg, obj, m), text)
        for member in list(obj.members.values()):
            if not member.is_alias:
                self._visit(pkg, member, seen)

    def _rewrite(self, pkg: Any, obj: Any, match: re.Match[str]) -> str:
        raw = match.group("target").strip()
        short = raw.startswith("~")
        target = re.sub(r"\s+", "", raw.lstrip("~")).rstrip("()")
        shown = target.rsplit(".", 1)[-1] if short else target.lstrip(".")
        full = resolve(pkg, obj, target)
        if full is None:
            mentioned_here = target.startswith(PACKAGE + ".") or target.startswith(".")
            if mentioned_here or _looks_local(target):
                _log.warning("%s: the docstring names %s, which is not in %s",
                             obj.path, match.group(0), PACKAGE)
            return f"`{shown}`"
        return f'<autoref identifier="{full}" optional><code>{shown}</code></autoref>'


def literal_blocks(text: str) -> str:
    """reST literal blocks (a paragraph ending in ``::``, then an indented block) as fenced code,
    at the indentation of the paragraph's text (inside a list item too; ``pymdownx.superfences``)."""
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.rstrip()
        if not stripped.endswith("::") or stripped.endswith(":::"):
            out.append(line)
            i += 1
            continue
        indent = len(line) - len(line.lstrip())
        marker = re.match(r"[*-] ", line.lstrip())
        base = indent + (2 if marker else 0)
        j = i + 1
        while j < len(lines) and not lines[j].strip():
            j += 1
        block_end = j
        while block_end < len(lines) and (not lines[block_end].strip()
                                          or len(lines[block_end]) - len(lines[block_end].lstrip()) > base):
            block_end += 1
        while block_end > j and not lines[block_end - 1].strip():
            block_end -= 1
        if block_end == j:  # no indented block follows: a plain colon
            out.append(stripped[:-1])
            i += 1
            continue
        head = stripped[:-2].rstrip()
        if head.strip():
            out.append(head + ":")
        cut = min(len(b) - len(b.lstrip()) for b in lines[j:block_end] if b.strip())
        pad = " " * base
        out.extend(["", pad + "```"])
        out.extend((pad + b[cut:]) if b.strip() else "" for b in lines[j:block_end])
        out.extend([pad + "```", ""])
        i = block_end
    return "\n".join(out)


def _looks_local(target: str) -> bool:
    """A bare name (no package prefix) is ours; a dotted one is another library's
    (``numpy.random.Generator``, ``dp_accounting.DpEvent``)."""
    return "." not in target
