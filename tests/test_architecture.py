"""The package's layering, checked from the source: one package per kind of evidence.

* No import cycle between dpaudit's modules, counting imports inside functions (a lazy import may
  keep ``import dpaudit`` cheap, never hide a cycle), and none between its packages either: two
  packages whose modules import each other (``formal.smt -> claims.evidence`` while
  ``claims.user_claims -> formal.noise_schedules``) form a cycle the module graph does not show.
* Imports flow one way (:data:`ALLOWED`, the same table as docs/layout.md): base modules (with
  the evidence records, ``dpaudit.evidence``) <- mechanisms <- learners <- engine (black-box,
  formal, claims, execution) <- papers <- the top layers (``api``, ``noise``, ``exact``,
  ``reporting``, ``cli``, ``testing``). Nothing imports ``dpaudit.papers``; the engine and the
  papers never import the reports or the CLI; the ``dpaudit.audits`` shims of the old layout are
  gone (removed after their one release, docs/layout.md's changelog).
* The resume hash covers every module the engine imports.
* The black-box statistics and the accountant live in different packages, and neither imports the
  other.
* No source file over 1000 lines.
"""

from __future__ import annotations

import ast
import functools
import re
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


def _package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The import graph among dpaudit's top-level packages and modules (``claims``, ``formal``,
    ``api``, ``evidence``, ...): an edge wherever one module of a package imports one of another,
    at module level or inside a function. ``""`` is the ``dpaudit`` package itself."""
    out: dict[str, set[str]] = {}
    for module, targets in graph.items():
        out.setdefault(_layer(module), set()).update(
            _layer(t) for t in targets if _layer(t) != _layer(module))
    return out


#: Package cycles tolerated for now, each with its reason (empty: there is none).
KNOWN_PACKAGE_CYCLES: dict[tuple[str, ...], str] = {}


def test_the_package_graph_sees_a_cycle_the_module_graph_does_not() -> None:
    # formal.a -> claims.x and claims.y -> formal.b: no module cycle, one package cycle.
    modules = {"dpaudit.formal.a": {"dpaudit.claims.x"}, "dpaudit.claims.x": set(),
               "dpaudit.claims.y": {"dpaudit.formal.b"}, "dpaudit.formal.b": set()}
    assert _cycles(modules) == []
    assert _cycles(_package_graph(modules)) == [["claims", "formal"]]


def test_no_import_cycle_between_packages_counting_imports_inside_functions() -> None:
    packages = _package_graph(_graph())
    assert {"claims", "formal", "blackbox", "evidence", "api", "cli"} <= set(packages)
    found = {tuple(c): [f"{m} -> {t}" for m, ts in sorted(_graph().items()) for t in sorted(ts)
                        if _layer(m) in c and _layer(t) in c and _layer(m) != _layer(t)]
             for c in _cycles(packages)}
    unexplained = {c: edges for c, edges in found.items() if c not in KNOWN_PACKAGE_CYCLES}
    assert unexplained == {}, "package cycles (the module imports that make them):\n" + "\n".join(
        f"{' <-> '.join(c)}: {edges}" for c, edges in unexplained.items())
    assert set(KNOWN_PACKAGE_CYCLES) <= set(found), "a listed known cycle is gone: remove it"


#: What each layer may import (besides itself and the base modules that import nothing of dpaudit).
ALLOWED = {
    "mechanisms": set(),
    "learners": {"mechanisms"},
    "execution": set(),
    "claims": {"blackbox", "formal", "execution", "greybox"},
    # Evidence drawn from the code itself: below claims, above the formal laws.
    "greybox": {"formal"},
    # The evidence records live in the base module ``dpaudit.evidence``, below formal and claims.
    "formal": {"mechanisms", "learners"},
    "blackbox": {"execution"},
    "papers": {"mechanisms", "learners", "blackbox", "formal", "claims", "execution"},
    "reporting": {"claims"},
    # The one runner of audits into a report directory, below both the CLI and the API.
    "runner": {"claims", "execution", "reporting"},
    "testing": {"blackbox", "formal", "claims", "execution", "api", "reporting"},
    "cli": {"mechanisms", "learners", "blackbox", "formal", "claims", "execution", "reporting",
            "runner"},
    # The public facade and the pytest plugin are top layers, like the CLI; the API never
    # imports the CLI (it once built an argv and called the CLI's main: two ways into one run).
    "api": {"claims", "reporting", "runner"},
    "noise": {"formal"},
    "exact": {"formal"},
}
BASE = {"", "_validation", "_rowwise", "_version", "neighbours", "hypothesis_seeding", "__main__",
        "evidence", "evidence_records", "release_outputs"}


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


def test_the_layout_page_states_the_rule_this_file_enforces() -> None:
    # docs/layout.md's table "package | holds | may import" is ALLOWED, row for row.
    page = (SRC.parent / "docs" / "layout.md").read_text(encoding="utf-8")
    table = page[page.index("| package | holds | may import |"):].split("\n\n")[0]
    stated: dict[str, set[str]] = {}
    for row in table.splitlines()[2:]:
        packages, _, may = [c.strip() for c in row.strip("|").split(" | ")]
        allowed = set() if may == "base modules only" else {m.strip() for m in may.split(",")}
        for name in re.findall(r"`dpaudit\.(\w+)`", packages):
            stated[name] = allowed
    assert stated == ALLOWED


def test_base_modules_import_nothing_of_the_engine() -> None:
    graph = _graph()
    for base in ("dpaudit._validation", "dpaudit._rowwise", "dpaudit.neighbours",
                 "dpaudit.hypothesis_seeding", "dpaudit.evidence", "dpaudit.evidence_records"):
        assert not {t for t in graph[base] if _layer(t) not in BASE}, base


def test_blackbox_and_accountant_live_apart() -> None:
    graph = _graph()
    assert "dpaudit.formal.accounting" in graph and "dpaudit.blackbox.empirical_audit" in graph
    for module, targets in graph.items():
        if _layer(module) == "blackbox":
            assert not any(_layer(t) == "formal" for t in targets), module


def _private_imports(path: Path) -> list[tuple[str, str]]:
    """``(module, name)`` for every underscore name ``path`` imports from another dpaudit module
    (``from dpaudit.x import _name``, at module level or inside functions)."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("dpaudit"):
            out += [(node.module, a.name) for a in node.names
                    if a.name.startswith("_") and not a.name.startswith("__")]
    return out


def test_the_private_import_finder_finds_a_planted_one(tmp_path: Path) -> None:
    planted = tmp_path / "m.py"
    planted.write_text("from dpaudit.blackbox.sampling import Stream, _hidden\n"
                       "def f():\n    from dpaudit.x import _y, z\n", encoding="utf-8")
    assert sorted(_private_imports(planted)) == [("dpaudit.blackbox.sampling", "_hidden"),
                                                 ("dpaudit.x", "_y")]


def test_the_blackbox_modules_import_no_private_names() -> None:
    # What one black-box module needs of another has a public name in it: an underscore name is
    # its module's own business and may change without notice to the rest of the package.
    found = {str(p.relative_to(SRC)): hits for p in sorted((PACKAGE / "blackbox").glob("*.py"))
             if (hits := _private_imports(p))}
    assert found == {}


def test_no_source_file_over_1000_lines() -> None:
    long = {str(p.relative_to(SRC)): n for p in PACKAGE.rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 1000}
    assert long == {}


def test_the_old_import_paths_are_removed() -> None:
    # dpaudit.audits.* forwarded to the new layout for one release; that release is over, so the
    # old paths must fail at import (a shim left behind would keep warning and hide stale code).
    import importlib

    for old in ("dpaudit.audits", "dpaudit.audits.empirical", "dpaudit.audits.registry"):
        with pytest.raises(ModuleNotFoundError):
            importlib.import_module(old)
    assert not (PACKAGE / "audits").exists()


#: The packages whose source decides a claim's result (besides the claim's own module).
ENGINE = ("mechanisms", "learners", "execution", "blackbox", "formal", "claims")


def test_the_resume_hash_covers_every_module_the_engine_imports() -> None:
    # A rerun reuses a saved result only when audit_code_hash is unchanged; a module the engine
    # imports but the hash leaves out (a verdict tolerance in dpaudit.evidence) could change the
    # result without invalidating it.
    from dpaudit.claims.resume_key import ENGINE_SOURCES

    graph = _graph()
    needed, todo = set(), [m for m in graph if _layer(m) in ENGINE]
    while todo:
        module = todo.pop()
        if module in needed:
            continue
        needed.add(module)
        todo.extend(graph[module])
    covered = {part.removesuffix(".py") for part in ENGINE_SOURCES}
    missing = sorted(m for m in needed if m != "dpaudit" and _layer(m) not in covered)
    assert missing == []
