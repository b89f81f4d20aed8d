"""The vectorised per-coordinate work of the learned vector statistics equals the per-coordinate
definitions exactly (vectorised for speed; the audit's results must not change).

Each test recomputes one quantity coordinate by coordinate with the plain definition (binary search
per coordinate, scipy's G-test, numpy's 1-D median/quantile/mean) and asserts equality bit for bit
on data built to hit the edge cases: values exactly on bin edges, outside the grid, atoms
(repeated values), ties that are not atoms, constant coordinates, tiny and huge spreads.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpaudit.blackbox.fitters_binned import ATOM_FRACTION, NB_BINS, NaiveBayesFitter, _Binning, _g_test, _screen
from dpaudit.blackbox.fitters_location import LOCATION_MIN_CONTINUOUS, LocationShiftFitter


def _awkward(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Two (n, 9) samples: continuous, shifted, sentinel atoms, rounded, sparse ties, constant,
    tiny spread, large offset, heavy tail."""
    cols0, cols1 = [], []
    for shift in (0.0, 0.4):
        a = np.empty((n, 9))
        a[:, 0] = rng.normal(size=n)
        a[:, 1] = rng.laplace(size=n) + shift
        v = rng.laplace(size=n) + shift
        a[:, 2] = np.where(v > 0.3, v, -1.0)            # sentinel atom
        a[:, 3] = np.round(rng.normal(size=n) * 2)       # all atoms
        a[:, 4] = rng.normal(size=n)
        a[::97, 4] = 0.5                                 # ties, not atoms
        a[:, 5] = 7.0                                    # constant
        a[:, 6] = rng.normal(size=n) * 1e-300            # spread too small for a grid step
        a[:, 7] = rng.normal(size=n) + 1e15              # coarse floats
        a[:, 8] = rng.standard_cauchy(size=n)            # heavy tail
        (cols0 if shift == 0.0 else cols1).append(a)
    return cols0[0], cols1[0]


def _binning_reference(v: np.ndarray, bins: int) -> _Binning:
    return _Binning.from_values(v, bins)


def test_naive_bayes_bins_counts_and_scores_equal_the_per_coordinate_definition() -> None:
    rng = np.random.default_rng(11)
    a, b = _awkward(rng, 3000)
    p = 1000
    fit = NaiveBayesFitter()
    fit.prepare(a[:p], b[:p])
    pooled = np.concatenate([a[:p], b[:p]])
    ref = [_binning_reference(pooled[:, j], NB_BINS) for j in range(a.shape[1])]
    for j, (got, want) in enumerate(zip(fit._binnings, ref)):
        assert np.array_equal(got.atoms, want.atoms) and np.array_equal(got.edges, want.edges), j
    # Values exactly on the edges must fall in the bin searchsorted(side="left") gives.
    on_edges = np.array([[r.edges[k % max(r.edges.size, 1)] if r.edges.size else 0.0
                          for r in ref] for k in range(NB_BINS)])
    chunks = [(a[p:2000], 0), (b[p:2000], 1), (on_edges, 0)]
    counts = [np.zeros((2, r.size)) for r in ref]
    for x, label in chunks:
        fit.update(x, label)
        for j, r in enumerate(ref):
            counts[j][label] += np.bincount(r.index(x[:, j]), minlength=r.size)
    for j in range(len(ref)):
        assert np.array_equal(fit._counts[j], counts[j]), j
    test = np.concatenate([a[2000:], b[2000:], on_edges])
    for scorer in fit.finish():
        s = np.zeros(test.shape[0])
        for j in scorer.used:
            s += scorer.log_ratios[j][ref[j].index(test[:, j])]
        assert np.array_equal(scorer(test).view(np.int64), s.view(np.int64)), scorer.name


def test_location_shift_grid_and_prepare_equal_the_per_coordinate_definition() -> None:
    rng = np.random.default_rng(12)
    a, b = _awkward(rng, 3000)
    p = 1000
    fit = LocationShiftFitter()
    fit.prepare(a[:p], b[:p])
    pooled = np.concatenate([a[:p], b[:p]])
    for j in range(a.shape[1]):
        v = pooled[:, j]
        uniq, counts = np.unique(v, return_counts=True)
        atoms = uniq[counts >= max(2, ATOM_FRACTION * v.size)]
        rest = v[~np.isin(v, atoms)] if atoms.size else v
        edges, scale = None, 1.0
        if rest.size >= LOCATION_MIN_CONTINUOUS:
            med = float(np.median(rest))
            mad = float(np.mean(np.abs(rest - med)))
            lo, hi = np.quantile(rest, [0.005, 0.995])
            if mad > 0 and hi > lo:
                edges, scale = np.linspace(lo, hi, fit.grid + 1), mad
        assert np.array_equal(fit._atoms[j], atoms), j
        assert (fit._edges[j] is None) == (edges is None), j
        if edges is not None:
            assert np.array_equal(fit._edges[j], edges), j
        assert fit._scale[j] == scale, j
    assert fit._fast is not None and fit._fast.size >= 3  # the vectorised path is exercised
    # Rows made of grid edges (exactly on them, side="right"), and far outside the grid.
    grid_rows = np.array([[e[k] if e is not None else 0.0 for e in fit._edges]
                          for k in range(0, fit.grid + 1, 97)])
    outside = np.array([[1e300 if k % 2 else -1e300] * a.shape[1] for k in range(4)])
    hist = [None if e is None else np.zeros((2, fit.grid + 2)) for e in fit._edges]
    for x, label in ((a[p:], 0), (b[p:], 1), (grid_rows, 1), (outside, 0)):
        fit.update(x, label)
        for j, e in enumerate(fit._edges):
            v = x[:, j]
            if e is None:
                continue
            if fit._atoms[j].size:
                v = v[~np.isin(v, fit._atoms[j])]
            hist[j][label] += np.bincount(np.searchsorted(e, v, side="right"),
                                          minlength=fit.grid + 2)
    for j, h in enumerate(hist):
        if h is not None:
            assert np.array_equal(fit._hist[j], h), j


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_vectorised_screen_keeps_exactly_the_g_test_coordinates(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(60):
        d = int(rng.integers(1, 30))
        tables = []
        for _ in range(d):
            k = int(rng.integers(1, 18))
            p0 = rng.dirichlet(np.ones(k))
            p1 = p0 * np.exp(rng.normal(0.0, rng.choice([0.0, 0.05, 0.3]), k))
            n = int(rng.choice([0, 5, 60, 4000]))
            c = np.stack([rng.multinomial(n, p0),
                          rng.multinomial(int(rng.choice([0, n, n + 3])), p1 / p1.sum())])
            if rng.random() < 0.3:
                c[:, int(rng.integers(0, k))] = 0          # an empty bin
            tables.append(c.astype(float))
        level = 1.0 / d
        pvals = np.array([_g_test(c) for c in tables])
        keep, fallback = _screen(tables, level)
        assert np.array_equal(keep, np.flatnonzero(pvals < level))
        if keep.size == 0:
            assert np.array_equal(fallback, pvals)
