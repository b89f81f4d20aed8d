"""ChunkCounter gives the test split's integers of the sorted rule, bit for bit.

The audit's test split used to sort every chunk and answer event counts and histogram bins by
binary search. ChunkCounter bins arithmetically; the audit's results are unchanged only if its
integers are exactly the sorted rule's, for every chunk. The reference here is written from the
definitions (numpy's sort and searchsorted, np.histogram of the clipped scores), not from the
engine, on chunks built to hit every corner: scores exactly on edges and thresholds, one ulp on
either side of them, signed zeros, infinities, NaN, huge values whose offsets overflow.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpaudit.blackbox.chunk_counts import ChunkCounter
from dpaudit.blackbox.statistics import HistogramAccumulator, ThresholdEvent


def reference(scores: np.ndarray, events: list[ThresholdEvent], edges: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray, int]:
    """Event counts, histogram counts and clipped count of the sorted rule, from definitions."""
    s = np.sort(scores)  # NaN last
    n = s.size
    counts = []
    for e in events:
        le = int(np.searchsorted(s, e.threshold, side="right"))
        counts.append(n - le if e.tail == "upper" else le)
    finite = s[~np.isnan(s)]
    lo, hi = edges[0], edges[-1]
    hist, _ = np.histogram(np.clip(finite, lo, hi), bins=edges)
    hist[-1] += n - finite.size  # NaN sorts last: the last bin, and clipped
    clipped = int(np.count_nonzero(finite < lo) + np.count_nonzero(finite > hi)) + n - finite.size
    return np.array(counts, dtype=np.int64), hist.astype(np.int64), clipped


def tricky_chunk(rng: np.random.Generator, edges: np.ndarray, thresholds: np.ndarray, n: int,
                 specials: bool) -> np.ndarray:
    """Laplace scores spread over the edges, with many exactly on edges / thresholds, one ulp
    either side of them, signed zeros and (``specials``) infinities, NaN and huge values."""
    span = edges[-1] - edges[0]
    x = edges[0] + span * (0.5 + 0.3 * rng.laplace(size=n))
    marks = np.concatenate([edges, thresholds, [0.0, -0.0]])
    pick = rng.choice(marks, size=max(1, n // 4))
    step = rng.integers(-2, 3, size=pick.size)
    with np.errstate(over="ignore"):
        pick = np.where(step < 0, np.nextafter(pick, -np.inf), pick)
        pick = np.where(step > 0, np.nextafter(pick, np.inf), pick)
    x[rng.choice(n, size=pick.size, replace=False)] = pick
    if specials:
        extra = np.array([np.inf, -np.inf, np.nan, 1e308, -1e308, 1.7e308, np.nan, -0.0])
        extra = extra[rng.permutation(extra.size)[:n]]
        x[rng.choice(n, size=extra.size, replace=False)] = extra
    return x


def edge_sets(rng: np.random.Generator) -> list[np.ndarray]:
    """The kinds of edges HistogramAccumulator.from_training makes (equal width, lattice,
    discrete midpoints), from training scores, plus equal-width edges far from zero."""
    cont = rng.laplace(size=20_000)
    lattice = np.round(rng.laplace(0.0, 300.0, size=20_000))
    discrete = rng.choice([-1.3, 0.0, 0.2, 2.5, 7.0], size=2_000)
    far = 1e6 + rng.normal(0.0, 1e-3, size=20_000)
    out = []
    for v in (cont, lattice, discrete, far, -cont * 1e-9):
        out.append(HistogramAccumulator.from_training(v, v[::-1] + 0.1).edges)
    return out


@pytest.mark.parametrize("specials", [False, True])
def test_chunk_counter_equals_the_sorted_rule(specials: bool) -> None:
    rng = np.random.default_rng(20261128)
    fast_paths = 0
    for edges in edge_sets(rng):
        thresholds = np.r_[rng.choice(edges, 2), rng.uniform(edges[0], edges[-1], 2), 0.0,
                           np.inf, -np.inf]
        events = [ThresholdEvent(tail, float(t), int(rng.integers(2)))
                  for t in thresholds for tail in ("upper", "lower")]
        counter = ChunkCounter(events, edges, 5_000)
        fast_paths += counter.tol is not None
        for n in (1, 7, 5_000, 3_000):
            x = tricky_chunk(rng, edges, thresholds, n, specials)
            got = counter.count(x)
            want = reference(x, events, edges)
            assert np.array_equal(got[0], want[0])
            assert np.array_equal(got[1], want[1])
            assert got[2] == want[2]
            # ...and equal to the engine's own sorted path (the fallback).
            slow = counter._count_sorted(x)
            assert np.array_equal(got[0], slow[0]) and np.array_equal(got[1], slow[1])
            assert got[2] == slow[2]
    # Equal-width, lattice and far-from-zero edges take the arithmetic path; the discrete
    # statistic's midpoints (unequal gaps) fall back to sorting.
    assert fast_paths == 4


def test_chunk_counter_sorts_when_it_cannot_bin_arithmetically() -> None:
    edges = np.array([0.0, 1.0, 3.0, 3.5])  # unequal bins
    assert ChunkCounter([], edges, 10).tol is None
    eq = np.linspace(0.0, 1.0, 5)
    assert ChunkCounter([], eq, 10).tol is not None
    assert ChunkCounter([ThresholdEvent("upper", float("nan"), 1)], eq, 10).tol is None
    assert ChunkCounter([], np.array([0.0, np.inf]), 10).tol is None
    x = np.array([0.5, 2.0, np.nan, 3.5, -1.0, 3.0])
    got = ChunkCounter([ThresholdEvent("upper", 1.0, 1)], edges, 10).count(x)
    want = reference(x, [ThresholdEvent("upper", 1.0, 1)], edges)
    assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
    assert got[2] == want[2]
