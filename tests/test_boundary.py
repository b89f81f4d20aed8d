"""The internal boundary between dpaudit's modules, checked from the source.

* No module imports another module's underscore name (``from dpaudit.x import _helper``): what
  another module needs gets a public name in its own module (or moves where it belongs), so that
  an underscore name can be changed by reading one file.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "dpaudit"

#: Temporary: these packages are being reworked on other branches (one declaration protocol for
#: the papers, typed evidence, the black-box split) and still import underscore names across
#: modules (evidence.py has none today, but is being rewritten). The integrator drops each entry
#: once its branch has merged and the scan is clean, and then this list.
EXEMPT = ("dpaudit/claims/", "dpaudit/evidence.py", "dpaudit/papers/", "dpaudit/blackbox/")


def private_imports(source: str) -> list[tuple[int, str, str]]:
    """``(line, module, name)`` for every ``from dpaudit... import _name`` (absolute or relative,
    at module level or inside a function) in ``source``; dunder names are not private."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.ImportFrom):
            continue
        module = "." * node.level + (node.module or "")
        if not (node.level or module == "dpaudit" or module.startswith("dpaudit.")):
            continue
        for alias in node.names:
            if alias.name.startswith("_") and not alias.name.startswith("__"):
                found.append((node.lineno, module, alias.name))
    return found


def test_the_scan_finds_planted_private_imports() -> None:
    # The checker must be able to fail: absolute, relative and function-level imports are found;
    # public names, dunders and other packages' private names are not dpaudit's boundary.
    source = ("from dpaudit.runner.task import Task\n"
              "from dpaudit.mechanisms.laplace import _helper, check_size\n"
              "from . import _sibling\n"
              "from dpaudit import __version__\n"
              "from numpy.random import _pickle\n"
              "def f():\n"
              "    from dpaudit.greybox.sources.base import _LOCK\n")
    assert private_imports(source) == [(2, "dpaudit.mechanisms.laplace", "_helper"),
                                       (3, ".", "_sibling"),
                                       (7, "dpaudit.greybox.sources.base", "_LOCK")]


def test_no_module_imports_another_modules_underscore_names() -> None:
    leaks = []
    for path in sorted(PACKAGE.rglob("*.py")):
        where = path.relative_to(SRC).as_posix()
        if where.startswith(EXEMPT):
            continue
        leaks += [f"{where}:{line}: from {module} import {name}"
                  for line, module, name in private_imports(path.read_text(encoding="utf-8"))]
    assert leaks == [], ("give these names a public name in their module (or move them where "
                         "they belong):\n" + "\n".join(leaks))

