"""The griffe extension of ``make docs`` (docs/griffe_roles.py): every Sphinx role in dpaudit's
docstrings resolves, and a stale one is a warning (which ``mkdocs build --strict`` turns into a
failed build). Needs the ``docs`` extra (``make docs`` installs it); skipped without it."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

griffe = pytest.importorskip("griffe")

ROOT = Path(__file__).resolve().parents[1]
EXTENSION = f"{ROOT / 'docs' / 'griffe_roles.py'}:SphinxRoles"
LOGGER = "mkdocs.plugins.dpaudit_roles"


def _load(search: Path) -> object:
    return griffe.load("dpaudit", search_paths=[str(search)], resolve_aliases=True,
                       extensions=griffe.load_extensions(EXTENSION))


@pytest.mark.slow  # ~10 s (imports the package for the runtime fallback); `make docs` checks it too
def test_every_role_in_dpaudits_docstrings_resolves(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        pkg = _load(ROOT / "src")
    assert [r.getMessage() for r in caplog.records if r.name == LOGGER] == []
    # The roles became cross-references to where the names are defined.
    doc = pkg["noise"].docstring.value
    assert ':func:' not in doc
    assert '<autoref identifier="dpaudit.formal.noise_schedules.epsilon_of" optional>' in doc


def test_a_stale_role_is_a_warning(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    pkg_dir = tmp_path / "dpaudit"
    pkg_dir.mkdir()
    (pkg_dir / "__init__.py").write_text(
        '"""See :func:`real`, :func:`~dpaudit.sub.helper`, :func:`gone`, :class:`numpy.random.Generator`."""\n'
        "def real():\n    pass\n")
    (pkg_dir / "sub.py").write_text('"""Helpers; :func:`.renamed` was moved."""\ndef helper():\n    pass\n')
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        pkg = _load(tmp_path)
    warned = sorted(r.getMessage() for r in caplog.records if r.name == LOGGER)
    assert warned == ["dpaudit.sub: the docstring names :func:`.renamed`, which is not in dpaudit",
                      "dpaudit: the docstring names :func:`gone`, which is not in dpaudit"]
    doc = pkg.docstring.value
    assert '<autoref identifier="dpaudit.real" optional><code>real</code></autoref>' in doc
    assert '<autoref identifier="dpaudit.sub.helper" optional><code>helper</code></autoref>' in doc
    assert "`numpy.random.Generator`" in doc  # another library's name: code, no warning


def test_rest_literal_blocks_become_fenced_code() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("griffe_roles", ROOT / "docs" / "griffe_roles.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    text = "Usage::\n\n    x = 1\n      y = 2\n\nAfter.\n* item, e.g.::\n\n      z = 3\n\nA ratio 1::2 stays."
    assert module.literal_blocks(text).split("\n") == [
        "Usage:", "", "```", "x = 1", "  y = 2", "```", "", "", "After.",
        "* item, e.g.:", "", "  ```", "  z = 3", "  ```", "", "", "A ratio 1::2 stays."]
    assert module.literal_blocks("Ends with a colon::") == "Ends with a colon:"
