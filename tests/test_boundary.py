"""The internal boundary between dpaudit's modules, checked from the source and from the objects.

* No module imports another module's underscore name (``from dpaudit.x import _helper``): what
  another module needs gets a public name in its own module (or moves where it belongs), so that
  an underscore name can be changed by reading one file.
* ``dpaudit``'s lazy facade resolves every name of its ``__all__`` and binds nothing public
  outside it; every package's ``__all__`` resolves too (a stale entry breaks ``import *``).
"""

from __future__ import annotations

import ast
import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "dpaudit"



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
        leaks += [f"{where}:{line}: from {module} import {name}"
                  for line, module, name in private_imports(path.read_text(encoding="utf-8"))]
    assert leaks == [], ("give these names a public name in their module (or move them where "
                         "they belong):\n" + "\n".join(leaks))

# ------------------------------------------------------------------------------------------------
# The facade and the subpackages' __all__
# ------------------------------------------------------------------------------------------------

def test_every_name_of_the_facade_resolves() -> None:
    import dpaudit

    assert len(set(dpaudit.__all__)) == len(dpaudit.__all__), "a name is listed twice"
    missing = [name for name in dpaudit.__all__ if not hasattr(dpaudit, name)]
    assert missing == []
    # Each resolves to the object its defining module holds, not to a copy or a stale alias.
    assert dpaudit.audit_claim is importlib.import_module("dpaudit.api").audit_claim
    assert dpaudit.Claim is importlib.import_module("dpaudit.claims.user_claims").Claim
    assert dpaudit.noise is importlib.import_module("dpaudit.noise")


def test_the_facade_exports_nothing_outside_its_all() -> None:
    # Everything dpaudit binds that is not a dunder, a private helper or a submodule (an import
    # of dpaudit.x binds x on the package) must be in __all__: `from dpaudit import Any` working
    # by accident is an export nobody chose.
    import types

    import dpaudit

    for name in dpaudit.__all__:
        getattr(dpaudit, name)  # every lazy name bound, so that all of them are seen below
    # (pytest's assertion rewriting may add names such as '@py_builtins': not identifiers.)
    bound = {name for name, value in vars(dpaudit).items() if name.isidentifier()
             and not name.startswith("_")
             and not (isinstance(value, types.ModuleType)
                      and value.__name__ == f"dpaudit.{name}")}
    assert bound <= set(dpaudit.__all__), sorted(bound - set(dpaudit.__all__))
    shown = {name for name in dir(dpaudit) if not name.startswith("__")}
    assert shown == set(dpaudit.__all__) - {"__version__"}
    with pytest.raises(AttributeError, match="no_such_name"):
        dpaudit.no_such_name  # noqa: B018
    # The type checkers' view (the TYPE_CHECKING imports) is the same list.
    tree = ast.parse((PACKAGE / "__init__.py").read_text(encoding="utf-8"))
    block = next(node for node in tree.body if isinstance(node, ast.If))
    typed = {alias.asname or alias.name for node in block.body
             if isinstance(node, ast.ImportFrom) for alias in node.names}
    assert typed == set(dpaudit.__all__) - {"__version__"}


def test_a_fresh_import_of_the_facade_is_cheap_and_complete() -> None:
    # In a fresh interpreter (this one has imported everything): `import dpaudit` loads no
    # scipy, and `from dpaudit import *` binds exactly __all__.
    code = ("import sys, dpaudit\n"
            "assert 'scipy' not in sys.modules, 'import dpaudit loaded scipy'\n"
            "ns = {}\n"
            "exec('from dpaudit import *', ns)\n"
            "assert set(ns) - {'__builtins__'} == set(dpaudit.__all__), set(ns)\n")
    env = {**os.environ, "PYTHONPATH": str(SRC) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr


def _packages_with_all() -> list[str]:
    """Every package of dpaudit (a folder with an ``__init__.py``) whose ``__init__.py`` assigns
    ``__all__``, by dotted name (read from the source, so that collecting imports nothing)."""
    out = []
    for init in PACKAGE.rglob("__init__.py"):
        tree = ast.parse(init.read_text(encoding="utf-8"))
        if any(isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign))
               and "__all__" in {getattr(t, "id", None) for t in getattr(node, "targets", [])
                                 + [getattr(node, "target", None)]} for node in tree.body):
            out.append(".".join(init.parent.relative_to(SRC).parts))
    return sorted(out)


def test_the_packages_with_an_all_are_found() -> None:
    assert {"dpaudit", "dpaudit.runner", "dpaudit.cli", "dpaudit.greybox"} <= set(
        _packages_with_all())


@pytest.mark.parametrize("package", _packages_with_all())
def test_every_subpackages_all_resolves(package: str) -> None:
    module = importlib.import_module(package)
    names = module.__all__
    assert len(set(names)) == len(names), f"{package}.__all__ lists a name twice"
    missing = [name for name in names if not hasattr(module, name)]
    assert missing == [], f"{package}.__all__ lists names it does not define: {missing}"


# ------------------------------------------------------------------------------------------------
# One definition of the release's signature
# ------------------------------------------------------------------------------------------------



def test_the_mechanism_alias_is_defined_once() -> None:
    # `Mechanism = Callable[[data, n, rng], outputs]`, the release the grey box replays, lives in
    # greybox/replay.py (beside the rng it is handed); the other modules import it.
    from dpaudit.claims import declaration
    from dpaudit.greybox import derivation, law_tests, noise_sites, replay

    defined = []
    for path in sorted(PACKAGE.rglob("*.py")):
        where = path.relative_to(SRC).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if any(isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "Mechanism"
                                                    for t in node.targets)
               for node in tree.body):
            defined.append(where)
    assert defined == ["dpaudit/greybox/replay.py"]
    assert (derivation.Mechanism is law_tests.Mechanism is noise_sites.Mechanism
            is declaration.Mechanism is replay.Mechanism)
