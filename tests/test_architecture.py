"""The package's layering, checked from the source (issue 22: one package per kind of evidence).

* No import cycle between dpaudit's modules, counting imports inside functions (a lazy import may
  keep ``import dpaudit`` cheap, never hide a cycle).
* Imports flow one way: base modules <- mechanisms <- learners <- engine (black-box, formal,
  claims, execution) <- papers; nothing imports ``dpaudit.papers``, ``dpaudit.reporting`` or
  ``dpaudit.cli`` except the CLI (and the reports for themselves); the deprecated
  ``dpaudit.audits`` shims are imported by nothing.
* The black-box statistics and the accountant live in different packages, and neither imports the
  other.
* No source file over 1000 lines.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "dpaudit"


def _module_name(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in PACKAGE.rglob("*.py")}


def _imports(name: str, path: Path, known: set[str]) -> set[str]:
    """Every dpaudit module ``name`` imports, at module level or inside functions."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(tree):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            targets = [module] + [f"{module}.{a.name}" for a in node.names]
        out.update(t for t in targets if t in known and t != name)
    return out


def _graph() -> dict[str, set[str]]:
    """The import graph of the source tree (parsed once per process; each caller gets a copy)."""
    return {name: set(targets) for name, targets in _parsed_graph().items()}


@functools.cache
def _parsed_graph() -> dict[str, frozenset[str]]:
    mods = _modules()
    known = set(mods)
    return {name: frozenset(_imports(name, path, known)) for name, path in mods.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            for w in children:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    component = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        component.append(w)
                        if w == v:
                            break
                    if len(component) > 1:
                        out.append(sorted(component))
    return out


def test_the_cycle_finder_finds_a_planted_cycle() -> None:
    # The checker itself must be able to fail: a -> b -> c -> a is one component.
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle_counting_imports_inside_functions() -> None:
    assert _cycles(_graph()) == []


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


#: What each layer may import (besides itself and the base modules that import nothing of dpaudit).
ALLOWED = {
    "mechanisms": set(),
    "learners": {"mechanisms"},
    "execution": set(),
    "claims": {"blackbox", "formal", "execution", "greybox"},
    # Evidence drawn from the code itself (issue 34): below claims, above the formal laws.
    "greybox": {"formal"},
    "formal": {"mechanisms", "learners", "claims"},
    "blackbox": {"execution"},
    "papers": {"mechanisms", "learners", "blackbox", "formal", "claims", "execution"},
    "reporting": {"claims"},
    "testing": {"blackbox", "formal", "claims", "execution", "api", "reporting"},
    "cli": {"mechanisms", "learners", "blackbox", "formal", "claims", "execution", "reporting"},
    # The public facade and the pytest plugin are top layers, like the CLI.
    "api": {"claims", "reporting", "cli"},
    "noise": {"formal"},
    "exact": {"formal"},
}
BASE = {"", "_validation", "_rowwise", "_version", "neighbours", "hypothesis_seeding", "__main__"}


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_imports_flow_one_way(layer: str) -> None:
    graph = _graph()
    bad = []
    for module, targets in graph.items():
        if _layer(module) != layer:
            continue
        for t in targets:
            other = _layer(t)
            if other in BASE or other == layer:
                continue
            if other not in ALLOWED[layer]:
                bad.append(f"{module} -> {t}")
    assert not bad, "imports against the layering:\n" + "\n".join(sorted(bad))


def test_base_modules_import_nothing_of_the_engine() -> None:
    graph = _graph()
    for base in ("dpaudit._validation", "dpaudit._rowwise", "dpaudit.neighbours",
                 "dpaudit.hypothesis_seeding"):
        assert not {t for t in graph[base] if _layer(t) not in BASE}, base


def test_the_deprecated_shims_are_imported_by_nothing() -> None:
    graph = _graph()
    users = sorted(m for m, targets in graph.items() if not m.startswith("dpaudit.audits")
                   and any(t.startswith("dpaudit.audits") for t in targets))
    assert users == []


def test_blackbox_and_accountant_live_apart() -> None:
    graph = _graph()
    assert "dpaudit.formal.accounting" in graph and "dpaudit.blackbox.empirical_audit" in graph
    for module, targets in graph.items():
        if _layer(module) == "blackbox":
            assert not any(_layer(t) == "formal" for t in targets), module


def test_no_source_file_over_1000_lines() -> None:
    long = {str(p.relative_to(SRC)): n for p in PACKAGE.rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 1000}
    assert long == {}


def test_old_import_paths_still_work_and_warn() -> None:
    import importlib
    import sys
    import warnings

    for old, name in [("dpaudit.audits.empirical", "audit"),
                      ("dpaudit.audits.accounting", "gaussian_epsilon"),
                      ("dpaudit.audits.registry", "BUDGETS"),
                      ("dpaudit.audits.claim_audit", "decide_verdict")]:
        sys.modules.pop(old, None)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            module = importlib.import_module(old)
        assert any(issubclass(w.category, DeprecationWarning) for w in caught), old
        assert callable(getattr(module, name)) or isinstance(getattr(module, name), dict)
