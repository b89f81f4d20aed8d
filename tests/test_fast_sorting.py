"""The training step's fast paths give numpy's own arrays, bit for bit.

``sort_scores`` must be ``np.sort``, ``unique_sorted`` must be ``np.unique`` and
``BinnedRatioScorer.score_sorted`` must be ``np.sort(scorer(x))``: the audit's events, thresholds
and histogram edges are read off these arrays, and its results are unchanged only if the arrays
are. Compared by bytes on purpose (same process, same kernels): a signed zero or a NaN payload in
another place would change a threshold's printed sign, which a tolerance would not see.
"""

from __future__ import annotations

import numpy as np

from dpaudit.blackbox.fitters_binned import HistogramRatioFitter
from dpaudit.blackbox.sorting import sort_scores, unique_sorted


def _runs(rng: np.random.Generator) -> list[np.ndarray]:
    """Arrays the engine sorts: sorted runs behind a random head, ties, signed zeros, NaN, inf."""
    a = rng.laplace(size=3000)
    s = np.sort(a)
    ties = np.round(rng.laplace(size=3000), 1)
    out = [np.r_[a[:200], s, np.sort(rng.laplace(size=2000))], s, a, np.sort(ties),
           np.r_[ties[:100], np.sort(ties)], np.r_[0.0, -0.0, s, -0.0], np.r_[s, np.nan],
           np.r_[-np.inf, s, np.inf], np.array([1.0]), np.empty(0), s[::-1]]
    return [x.astype(np.float64) for x in out]


def test_sort_scores_is_np_sort_bit_for_bit() -> None:
    rng = np.random.default_rng(7)
    for x in _runs(rng):
        assert sort_scores(x).tobytes() == np.sort(x).tobytes()


def test_unique_sorted_is_np_unique() -> None:
    rng = np.random.default_rng(8)
    for a in (rng.integers(0, 50, 1000), rng.integers(-5, 5, 7), np.array([3]),
              np.empty(0, dtype=np.int64), np.floor(np.geomspace(1, 1e5, 4096)).astype(np.int64)):
        assert np.array_equal(unique_sorted(a), np.unique(a))
        assert unique_sorted(a).dtype == np.unique(a).dtype


def test_binned_scores_of_sorted_outputs_are_the_sorted_scores() -> None:
    rng = np.random.default_rng(9)
    for atoms in (False, True):
        x0 = rng.laplace(size=20_000)
        x1 = rng.laplace(size=20_000) + 0.7
        if atoms:
            x0[::7] = 2.0
        fitter = HistogramRatioFitter()
        fitter.update(x0, 0)
        fitter.update(x1, 1)
        for scorer in fitter.finish():
            edges = scorer.binning.edges
            # Selection outputs with many exactly on the edges and one ulp either side.
            y = np.r_[rng.laplace(size=5000), edges, np.nextafter(edges, np.inf),
                      np.nextafter(edges, -np.inf), 2.0, 2.0, -1e9, 1e9]
            y = np.sort(y)
            assert scorer.score_sorted(y).tobytes() == np.sort(scorer(y)).tobytes()


def test_histogram_counts_by_binary_search_equal_bincount() -> None:
    """HistogramRatioFitter.finish counts an atom-free binning's sorted chunks of fit runs by
    binary searches (the edges are fit values, so runs sit exactly on them); its log ratios must
    be those of bincount(binning.index(x)) over all runs."""
    from dpaudit.blackbox.fitters_binned import smoothed_log_ratio

    rng = np.random.default_rng(10)
    x0 = np.r_[rng.laplace(size=4096), np.sort(rng.laplace(size=30_000))]
    x1 = np.r_[rng.laplace(size=4096) + 1, np.sort(rng.laplace(size=30_000) + 1)]
    fitter = HistogramRatioFitter()
    for x, label in ((x0, 0), (x1, 1)):  # as the engine feeds it: the probe, then sorted runs
        fitter.update(x[:4096], label)
        fitter.update(x[4096:], label)
    scorers = fitter.finish()
    assert len(scorers) == 2 and all(s.binning.atoms.size == 0 for s in scorers)
    for scorer in scorers:
        b = scorer.binning
        c = [np.bincount(b.index(a), minlength=b.size).astype(float) for a in (x0, x1)]
        assert scorer.log_ratios.tobytes() == smoothed_log_ratio(c[0], c[1]).tobytes()


def _censored(data: float, n: int, rng: np.random.Generator) -> np.ndarray:
    """Laplace clipped to [-1, 2]: atoms at both ends (the atoms statistic and atom bins apply)."""
    return np.clip(data + rng.laplace(0.0, 1.0, n), -1.0, 2.0)


def _laplace(data: float, n: int, rng: np.random.Generator) -> np.ndarray:
    return data + rng.laplace(0.0, 1.0, n)


def test_the_fit_split_sorted_as_one_array_fits_the_same_statistics(monkeypatch) -> None:
    # The scalar fit split is fed to an order-free family as one sorted array (probe included)
    # instead of the probe plus each chunk's part sorted; both feedings hold the same multiset, so
    # the whole result must be the same record. ATOM_MAX_VALUES = 0 forces the old feeding; small
    # chunks and half the runs for training make the fit split span the probe and two chunks.
    import json

    import dpaudit
    from dpaudit.blackbox import training

    def record(mech, **kw) -> str:
        r = dpaudit.audit(mech, 0.0, 1.0, epsilon=1.0, samples=30_000, seed=3, chunk_size=2_500,
                          train_fraction=0.5,
                          **kw)
        d = r.to_dict()
        for k in ("seconds", "sampling_seconds", "timing"):
            d.pop(k, None)
        return json.dumps(d, sort_keys=True, default=str)

    for mech, kw in ((_laplace, {}), (_censored, {}), (_laplace, {"delta": 1e-3})):
        new = record(mech, **kw)
        monkeypatch.setattr(training, "ATOM_MAX_VALUES", 0)
        old = record(mech, **kw)
        monkeypatch.undo()
        assert new == old, mech.__name__
