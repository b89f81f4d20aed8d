"""Every bundled claim declares the stated range of every parameter its grid sweeps, and the grid
audits each range at its extremes and on both sides of every discrete jump.

AUDIT-METHOD section 1: an audit "covers the claim's parameter range (a grid or a search that
includes the extremes ...), not one convenient point". Each :class:`~dpaudit.claims.ParameterRange`
quotes the paper's words (checked verbatim against the seed text, whitespace collapsed) and names
the grid values that stand for the range's ends and jumps; these tests hold the declarations
against the standard budget's grid (the quick grid is a subset, checked only for undeclared keys).
"""

from __future__ import annotations

import importlib.metadata
import math
import re
from pathlib import Path
from typing import Any

import pytest

from dpaudit.claims import ParameterRange, PrivacyClaim, Provenance
from dpaudit.claims.context import BUDGETS, AuditContext
from dpaudit.claims.registry import all_claims

#: The seed texts: ``shared/seeds`` beside the repository (CI's clone and a developer's checkout)
#: or this workplace's copy.
SEEDS = next((p for p in (Path(__file__).resolve().parents[2] / "shared" / "seeds",
                          Path("/work/shared/seeds")) if p.is_dir()), Path("shared/seeds"))
#: dpaudit's own papers, from its entry points. The registry's origin cannot say it: a test
#: module that imports a paper's audit module directly registers its claims as "code", so which
#: claims look "bundled" depended on which test files the worker had collected first (28 of 37).
PAPER_KEYS = {ep.name for ep in importlib.metadata.entry_points(group="dpaudit.claims")
              if ep.dist is not None and ep.dist.name == "dpaudit"}
BUNDLED = sorted((rc for rc in all_claims() if rc.claim.id.split("/")[0].split("-")[0]
                  in PAPER_KEYS), key=lambda rc: rc.claim.id)


def _grid(rc: Any, budget: str) -> list[dict[str, Any]]:
    decl = rc.audit.declaration
    return [dict(p) for p in decl.grid(AuditContext(BUDGETS[budget], seed=0, alpha=0.05))]


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=0.0)
    return a == b


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def test_there_are_37_bundled_claims_each_with_a_declared_range() -> None:
    assert len(BUNDLED) == 37
    assert all(rc.claim.ranges for rc in BUNDLED), [rc.claim.id for rc in BUNDLED
                                                    if not rc.claim.ranges]


@pytest.mark.parametrize("rc", BUNDLED, ids=lambda rc: rc.claim.id)
def test_every_grid_parameter_is_declared_and_every_extreme_is_audited(rc: Any) -> None:
    claim = rc.claim
    for budget in ("quick", "standard"):
        undeclared = {k for p in _grid(rc, budget) for k in p} - {r.name for r in claim.ranges}
        assert not undeclared, f"{claim.id} ({budget} grid): undeclared grid parameter(s) {undeclared}"
    grid = _grid(rc, "standard")
    for r in claim.ranges:
        values = [p[r.name] for p in grid if r.name in p]
        assert values, f"{claim.id}: {r.name} is declared but never on the grid"
        if r.role != "parameter":
            continue
        assert r.extremes, f"{claim.id}: {r.name} declares no extremes"
        for v in r.extremes + r.breakpoints:
            assert any(_same(v, x) for x in values), (
                f"{claim.id}: {r.name} = {v!r} (declared extreme or jump) is not on the standard "
                f"grid, which has {sorted(set(values), key=str)}")
        numeric = [x for x in values if isinstance(x, (int, float)) and not isinstance(x, bool)]
        if numeric and all(isinstance(v, (int, float)) for v in r.extremes):
            # the declared extremes really are the grid's smallest and largest values
            assert _same(min(numeric), min(r.extremes)) and _same(max(numeric), max(r.extremes)), (
                f"{claim.id}: {r.name} grid spans [{min(numeric)}, {max(numeric)}], declared "
                f"extremes {r.extremes}")


@pytest.mark.parametrize("rc", BUNDLED, ids=lambda rc: rc.claim.id)
def test_every_quote_is_in_the_paper(rc: Any) -> None:
    paper = SEEDS / rc.claim.provenance.paper
    if not paper.exists():
        pytest.skip(f"paper text {paper} not available")
    text = _norm(paper.read_text(encoding="utf-8"))
    for r in rc.claim.ranges:
        assert r.quote or r.note, (rc.claim.id, r.name)
        if r.quote:
            assert _norm(r.quote) in text, f"{rc.claim.id}: {r.name}'s quote not in {paper.name}: {r.quote!r}"


def test_a_grid_parameter_without_a_declaration_fails_the_check() -> None:
    """The check above is not vacuous: a claim whose grid sweeps an undeclared key is caught."""
    claim = PrivacyClaim("demo/x", 1.0, 0.0, Provenance("demo.txt", "v1", "Theorem 1"),
                         ranges=(ParameterRange("epsilon", "(0, inf)", note="any"),))
    grid = [{"epsilon": 0.1, "T": 4}]
    undeclared = {k for p in grid for k in p} - {r.name for r in claim.ranges}
    assert undeclared == {"T"} and claim.range_of("T") is None
    assert claim.range_of("epsilon").stated == "(0, inf)"


def test_parameter_range_validates_and_round_trips() -> None:
    r = ParameterRange("gamma", "(0, 1)", "For some gamma > 0", (1e-6, 0.99), (0.61, 0.6))
    assert ParameterRange.from_dict(r.to_dict()) == r
    with pytest.raises(ValueError, match="role"):
        ParameterRange("x", "(0, 1)", "q", role="constant")
    with pytest.raises(ValueError, match="quote the paper"):
        ParameterRange("x", "(0, 1)")
    claim = PrivacyClaim("demo/x", 1.0, 0.0, Provenance("demo.txt", "v1", "Theorem 1"), ranges=(r,))
    assert PrivacyClaim.from_dict(claim.to_dict()) == claim
    with pytest.raises(ValueError, match="twice"):
        PrivacyClaim("demo/x", 1.0, 0.0, Provenance("demo.txt", "v1", "Theorem 1"), ranges=(r, r))


def _numeric(values: list[Any]) -> bool:
    return bool(values) and all(isinstance(x, (int, float)) and not isinstance(x, bool)
                                for x in values)


def _names_end(note: str, name: str, value: float) -> bool:
    """Whether ``note`` names the end ``name = value`` (``"T = 1"``, ``"muD_over_L = 2"``)."""
    forms = {f"{value:g}", repr(value)} | ({str(int(value))} if float(value).is_integer() else set())
    return any(re.search(rf"(?<![\w.]){re.escape(name)} = {re.escape(f)}(?![\w.])", note)
               for f in forms)


def _missing_closed_ends(r: ParameterRange, values: list[Any]) -> list[str]:
    """The closed ends of ``r``'s stated range that are neither among ``values`` nor named (with
    the reason) in ``r.note``; a closed end stated only through a symbol is reported too."""
    ends = r.stated_ends()
    if ends is None:
        return [f"{r.name}: stated range {r.stated!r} has no machine-readable ends"]
    out = []
    for value, closed in ends:
        if not closed:
            continue
        if isinstance(value, str):
            out.append(f"{r.name}: closed end {value!r} of {r.stated!r} is a symbol; state it as "
                       "the number the grid uses")
        elif not any(_same(value, x) for x in values) and not _names_end(r.note, r.name, value):
            out.append(f"{r.name} = {value:g} (closed end of {r.stated!r}) is not on the standard "
                       f"grid ({sorted(set(values))}) and the note does not say why")
    return out


@pytest.mark.parametrize("rc", BUNDLED, ids=lambda rc: rc.claim.id)
def test_every_closed_end_of_a_stated_range_is_audited(rc: Any) -> None:
    """The declared extremes stand for the *stated* range: each closed end (the 2 of (0, 2], the
    1 of T >= 1) is on the standard grid, or the range's note names it and says why it cannot be
    ("audit the stated range, extremes included", for every parameter); and no grid
    value lies outside the stated range."""
    grid = _grid(rc, "standard")
    problems = []
    for r in rc.claim.ranges:
        values = [p[r.name] for p in grid if r.name in p]
        if r.role != "parameter" or not _numeric(values):
            continue
        problems += _missing_closed_ends(r, values)
        ends = r.stated_ends()
        if ends is None:
            continue
        (lo, lo_closed), (hi, hi_closed) = ends
        for x in values:
            below = isinstance(lo, float) and (x < lo or (x == lo and not lo_closed))
            above = isinstance(hi, float) and (x > hi or (x == hi and not hi_closed))
            if below or above:
                problems.append(f"{r.name} = {x} on the grid lies outside the stated {r.stated!r}")
    assert not problems, f"{rc.claim.id}: " + "; ".join(problems)


def test_the_closed_end_check_is_not_vacuous() -> None:
    """A range whose closed end is missing from the grid fails unless its note names that end."""
    r = ParameterRange("muD_over_L", "(0, 2] (mu D <= 2L)", note="small and near-largest")
    assert r.stated_ends() == ((0.0, False), (2.0, True))
    assert _missing_closed_ends(r, [0.01, 1.5]) and not _missing_closed_ends(r, [0.01, 2.0])
    t = ParameterRange("T", ">= 1", note="T = 1 has no neighbouring stream that differs inside "
                       "the window after it")
    assert t.stated_ends() == ((1.0, True), (math.inf, False)) and not _missing_closed_ends(t, [8])
    assert _missing_closed_ends(ParameterRange("T", ">= 1", note="T = 10 is enough"), [8])
    assert _missing_closed_ends(ParameterRange("H", "(0, L / R]", note="n"), [0.5])
    assert _missing_closed_ends(ParameterRange("x", "a set in words", note="n"), [1.0])
    assert ParameterRange("g", "L_G / alpha in [1, inf)", note="n").stated_ends() == (
        (1.0, True), (math.inf, False))
    assert ParameterRange("k", "1 | 2", note="n").stated_ends() is None
