"""The halting-pattern + pooled-released-values statistic (dpaudit.blackbox.halting_statistics)."""

from __future__ import annotations

import numpy as np

from dpaudit.blackbox.halting_statistics import HaltingValueFitter

SENTINEL = -1000.0


def _rows(shift: float, n: int, rng: np.random.Generator, p_above: float) -> np.ndarray:
    # Four positions; each "above" independently with probability p_above, releasing shift +
    # Lap(1); a below releases 0 (an atom); after the second above the rest is the sentinel.
    above = rng.random((n, 4)) < p_above
    vals = shift + rng.laplace(0.0, 1.0, size=(n, 4))
    out = np.where(above, vals, 0.0)
    after = np.cumsum(above, axis=1) - above >= 2
    out[after] = SENTINEL
    return out


def test_the_scores_are_the_fitted_pattern_and_value_ratios() -> None:
    # The score of a row is lr_pattern[its pattern] + sum over its released values of
    # lr_value[bin]: checked against a direct recomputation from the fitted tables.
    rng = np.random.default_rng(0)
    x0, x1 = _rows(0.0, 4000, rng, 0.3), _rows(0.5, 4000, rng, 0.4)
    f = HaltingValueFitter()
    f.prepare(x0[:500], x1[:500])
    f.update(x0, 0)
    f.update(x1, 1)
    scorers = f.finish()
    assert [s.edges.size + 1 for s in scorers] == [2, 4, 16] * 2
    assert not np.any(scorers[4].lr_pattern) and np.any(scorers[1].lr_pattern)
    s = scorers[1]
    np.testing.assert_array_equal(s.coding.atoms, [SENTINEL, 0.0])
    y = _rows(0.2, 50, rng, 0.35)
    want = np.empty(50)
    for i, row in enumerate(y):
        code = np.where(row == SENTINEL, 0, np.where(row == 0.0, 1, -1)).astype(np.int16)
        key = code.view(np.dtype((np.void, code.itemsize * 4)))[0]
        pos = np.flatnonzero(s.coding.patterns == key)
        pid = int(pos[0]) if pos.size else s.coding.patterns.size
        vals = row[code < 0]
        want[i] = s.lr_pattern[pid] + s.lr_value[np.searchsorted(s.edges, vals)].sum()
    np.testing.assert_allclose(s(y), want, rtol=0, atol=1e-12)


def test_pooled_value_ratio_recovers_a_small_shift() -> None:
    # Released values shifted by 0.5 under Lap(1): at two bins split near the pooled median
    # (about 0.25), P0[v > 0.25] = 0.5 e^-0.25 = 0.389 and P1[v > 0.25] = 1 - 0.5 e^-0.25 = 0.611,
    # so the upper bin's log ratio is ln(0.611 / 0.389) = 0.452 and the lower bin's -0.452. With
    # about 1.4 x 10^4 released values per input over 4 x 10^4 rows, each fitted log ratio has a
    # standard error near 0.025: a tolerance of 0.1 is 4 standard errors (the split point's own
    # noise moves the exact ratios by less than 0.01).
    rng = np.random.default_rng(1)
    x0, x1 = _rows(0.0, 40_000, rng, 0.2), _rows(0.5, 40_000, rng, 0.2)
    f = HaltingValueFitter()
    f.prepare(x0[:1000], x1[:1000])
    f.update(x0, 0)
    f.update(x1, 1)
    two = f.finish()[0]
    t = float(two.edges[0])
    assert t > 0  # the split lies between the two medians 0 and 0.5
    want_hi = np.log((0.5 * np.exp(0.5 - t) if t >= 0.5 else 1 - 0.5 * np.exp(t - 0.5))
                     / (0.5 * np.exp(-t)))
    want_lo = np.log((0.5 * np.exp(t - 0.5) if t < 0.5 else 1 - 0.5 * np.exp(0.5 - t))
                     / (1 - 0.5 * np.exp(-t)))
    np.testing.assert_allclose(two.lr_value, [want_lo, want_hi], atol=0.1)
    # The same pattern law on both inputs: every known pattern's log ratio is near 0.
    assert np.max(np.abs(two.lr_pattern[:-1][np.isfinite(two.lr_pattern[:-1])])) < 0.5


def test_no_scorer_without_atoms_or_without_values() -> None:
    rng = np.random.default_rng(2)
    g = rng.normal(size=(400, 3))
    f = HaltingValueFitter()
    f.prepare(g, g + 1)
    assert f.finish() == []
    b = rng.integers(0, 2, size=(400, 3)).astype(float)
    f = HaltingValueFitter()
    f.prepare(b, b)
    f.update(b, 0)
    f.update(b, 1)
    assert f.finish() == []
