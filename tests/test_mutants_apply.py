"""Every mutant of ``scripts/mutants.py`` still applies to the source it names.

A mutant is one exact, unique substring of one file replaced by another; when the code it targets
moves to another module (a split) or is reworded, ``apply`` refuses it at ``make mutants`` time,
which is a slow target run by hand. This fast check keeps the list honest in the default suite:
each mutant's ``old`` text occurs exactly once in its file, its edit changes the file, and the
mutated file still parses (a mutant that is a syntax error would be killed by every test and
measure nothing).
"""

from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _mutants():
    spec = importlib.util.spec_from_file_location("dpaudit_mutants", ROOT / "scripts" / "mutants.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("dpaudit_mutants", module)
    spec.loader.exec_module(module)
    return module.MUTANTS


MUTANTS = _mutants()


def test_mutant_names_are_unique() -> None:
    names = [m.name for m in MUTANTS]
    assert len(names) == len(set(names)) and len(names) >= 100


@pytest.mark.parametrize("mutant", MUTANTS, ids=lambda m: m.name)
def test_the_mutant_applies_exactly_once_and_parses(mutant) -> None:
    path = ROOT / "src" / "dpaudit" / mutant.file
    assert path.is_file(), f"{mutant.name}: {mutant.file} does not exist"
    text = path.read_text(encoding="utf-8")
    assert text.count(mutant.old) == 1, (f"{mutant.name}: {mutant.old!r} occurs "
                                         f"{text.count(mutant.old)} times in {mutant.file}")
    mutated = text.replace(mutant.old, mutant.new)
    assert mutated != text
    ast.parse(mutated)
