"""Black-box pair search from a Hypothesis strategy (dpaudit.blackbox.pair_search).

Margins: fixed seeds. The detection checks compare a pair that leaks epsilon 5 (or more) with a
default pair that leaks at most 1, far beyond seed noise; bounds are also checked against the true
epsilon of the chosen pair (the bound's own 1 - alpha guarantee).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import strategies as st

from dpaudit.blackbox.empirical_audit import audit
from dpaudit.blackbox.pair_search import search_pairs, statdp_patterns


def test_statdp_patterns_are_the_published_ones_in_both_orders() -> None:
    seen = set()
    search_pairs(statdp_patterns(4), lambda a, b: seen.add((tuple(a), tuple(b))) or 0.0,
                 100, seed=0)
    one = (1.0,) * 4
    expected = {(one, (0.0, 1, 1, 1)), (one, (2.0, 1, 1, 1)), (one, (2.0, 0, 0, 0)),
                (one, (0.0, 2, 2, 2)), (one, (2.0, 2, 0, 0)), (one, (2.0,) * 4),
                (one, (0.0,) * 4), ((1.0, 1, 0, 0), (0.0, 0, 1, 1))}
    expected |= {(b, a) for a, b in expected}
    assert seen == expected  # 16 distinct pairs, each piloted once
    seen.clear()
    search_pairs(statdp_patterns(3, component_wise=False),
                 lambda a, b: seen.add((tuple(a), tuple(b))) or 0.0, 100, seed=0)
    assert len(seen) == 4
    with pytest.raises(ValueError, match="dimensions"):
        statdp_patterns(0)


def sum_query(d, n, g):
    """Releases the sum of the answers with Laplace(1) noise, calibrated for one answer changing
    by 1 (claim epsilon 1); under component-wise neighbours the sum moves by up to dim."""
    return np.asarray(d, float).sum() + g.laplace(0.0, 1.0, size=n)


def test_strategy_search_finds_the_leaking_pair() -> None:
    # On (1,1,1,1) vs (0,1,1,1) the sum moves by 1 (epsilon 1); the search must find an
    # "all above"/"all below" pair where it moves by 4 (true epsilon 4).
    one = audit(sum_query, np.ones(4), np.r_[0.0, 1, 1, 1], epsilon=1.0, samples=50_000, seed=0)
    found = audit(sum_query, epsilon=1.0, samples=50_000, seed=0, pairs=statdp_patterns(4))
    assert one.verdict == "not violated"
    assert found.verdict == "violated" and 2.5 < found.epsilon_lower_bound <= 4.0
    rec = found.to_dict()["pairs"]
    best = rec["pilot"][rec["pair_index"]]["pair"]
    assert abs(sum(best[0]) - sum(best[1])) == 4.0   # all above / all below, either order
    # Pairs that cannot differ are not piloted: the 4 pairs whose sums are equal (half half and
    # the X shape, both orders) give identical outputs under a common seed and are dropped.
    assert len(rec["pilot"]) == 16 - len(found.to_dict()["dropped_pairs"])
    dropped = found.to_dict()["dropped_pairs"]
    assert len(dropped) == 4 and all("outputs were identical" in d["reason"] for d in dropped)
    json.dumps(rec)


def test_search_is_reproducible_and_keeps_the_most_leaking_pilot() -> None:
    # Continuous input space: shift s in [0, 3] on one answer; Laplace(1) noise, so the pair's
    # epsilon is s. The main audit must run on a pair well above the median draw (12 pilots is
    # too few for the targeting phase to matter much; the pilot ranking does the work).
    pairs = st.floats(0.0, 3.0).map(lambda s: (0.0, s))
    mech = lambda d, n, g: d + g.laplace(0.0, 1.0, size=n)  # noqa: E731
    a = audit(mech, epsilon=1.0, samples=20_000, seed=3, pairs=pairs, pair_candidates=12)
    b = audit(mech, epsilon=1.0, samples=20_000, seed=3, pairs=pairs, pair_candidates=12)
    assert a.to_dict()["pairs"] == b.to_dict()["pairs"]
    assert a.epsilon_lower_bound == b.epsilon_lower_bound
    chosen = a.to_dict()["pairs"]["pilot"][a.pair_index]["pair"]
    assert chosen[1] >= 2.0 and a.verdict == "violated"
    assert a.epsilon_lower_bound <= chosen[1]


def test_strategy_validation() -> None:
    mech = lambda d, n, g: d + g.laplace(0.0, 1.0, size=n)  # noqa: E731
    with pytest.raises(ValueError, match="pair_candidates"):
        audit(mech, 0.0, 1.0, samples=1_000, pair_candidates=4)
    with pytest.raises(ValueError, match="not both"):
        audit(mech, 0.0, 1.0, samples=1_000, pairs=st.just((0.0, 1.0)))
    with pytest.raises(ValueError, match="pair_candidates"):
        audit(mech, samples=1_000, pairs=st.just((0.0, 1.0)), pair_candidates=0)
    with pytest.raises(TypeError, match="pairs strategy"):
        audit(mech, samples=1_000, pairs=st.just(0.0), pair_candidates=2)
    r = audit(mech, samples=1_000, pairs=st.just((0.0, 1.0)), pair_candidates=1)
    assert r.pilot_runs == 0 and r.pair_index == 0


def test_search_does_not_depend_on_loaded_modules(tmp_path, monkeypatch) -> None:
    # Hypothesis mixes literal constants of loaded local modules into float draws; the search
    # must not (a user's import would otherwise change which pairs are piloted).
    pairs = st.floats(0.0, 3.0).map(lambda s: (0.0, s))
    seen_a: list[float] = []
    search_pairs(pairs, lambda a, b: seen_a.append(b) or b, 8, seed=1)
    (tmp_path / "dpaudit_user_constants.py").write_text("A = 2.718281828\nB = 0.123456789\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import importlib
    importlib.import_module("dpaudit_user_constants")
    seen_b: list[float] = []
    search_pairs(pairs, lambda a, b: seen_b.append(b) or b, 8, seed=1)
    assert seen_a == seen_b
