"""Counting one test chunk without sorting it: the watched events' counts and the histogram's bins.

The test split (:func:`dpaudit.blackbox.empirical_audit.audit`, step 4) reduces each chunk of
scores to a few integers: every watched threshold event's count and the report histogram's bins
(:class:`~dpaudit.blackbox.statistics.HistogramAccumulator`). The reference way sorts the chunk and
answers by binary search (:meth:`HistogramAccumulator.update_sorted`,
:meth:`ThresholdEvent.count_sorted`); :class:`ChunkCounter` gets the same integers, bit for bit,
in a few linear passes over reused buffers: event counts by comparison, and equally spaced bins by
a floating-point floor whose rounding error ``dev`` is bounded from the edges themselves, scores
within ``tol >= dev`` of an edge (and NaN, overflowing scores) falling back to binary search.
Other edges, non-finite ones or a NaN threshold fall back to sorting. ``tests/test_chunk_counts.py``
checks the equality on random chunks with ties, signed zeros, infinities and NaN.

Why the floor gives the sorted rule's bin exactly: docs/blackbox-notes.md#chunk-counts.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from dpaudit.blackbox.statistics import HistogramAccumulator, ThresholdEvent

__all__ = ["ChunkCounter", "MAX_EDGE_DEVIATION"]

#: Largest ``max_i |F(e_i) - i|`` (in bins) for which the histogram is binned arithmetically; a
#: larger one means the edges are not equally spaced and the chunk is sorted instead.
MAX_EDGE_DEVIATION = 1e-6


class ChunkCounter:
    """Counts chunks of scores (at most ``rows`` each) into ``events`` and a histogram with
    ``edges``; :meth:`count` returns what the sorted rule gives."""

    def __init__(self, events: Sequence[ThresholdEvent], edges: np.ndarray, rows: int) -> None:
        self.events = tuple(events)
        self.edges = np.asarray(edges, dtype=np.float64)
        self.thresholds = np.array([e.threshold for e in self.events], dtype=np.float64)
        self.upper = np.array([e.tail == "upper" for e in self.events], dtype=bool)
        self.bins = self.edges.size - 1
        self.interior = self.edges[1:-1]
        self.rows = max(1, int(rows))
        self.tol = self._tolerance()
        self._buffers: dict[str, np.ndarray] = {}

    def _tolerance(self) -> float | None:
        """The ambiguity band ``tol`` of the arithmetic binning, or None to sort (module
        docstring)."""
        e = self.edges
        if np.isnan(self.thresholds).any() or self.bins < 1:
            return None
        if not np.isfinite(e).all() or np.any(e[1:] < e[:-1]):
            return None
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            inv = self.bins / (e[-1] - e[0])
            if not (np.isfinite(inv) and inv > 0):
                return None
            self.inv = float(inv)
            f = np.subtract(self.interior, e[0]) * self.inv
        dev = float(np.max(np.abs(f - np.arange(1, self.bins)))) if f.size else 0.0
        if not dev <= MAX_EDGE_DEVIATION:
            return None
        return max(2.0 * dev, 1e-12)

    def _buffer(self, name: str, n: int, dtype: type) -> np.ndarray:
        buf = self._buffers.get(name)
        if buf is None or buf.size < n:
            buf = self._buffers[name] = np.empty(max(n, self.rows), dtype=dtype)
        return buf[:n]

    def count(self, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
        """``(event counts, histogram counts, clipped)`` of one chunk of scores (1-D float64)."""
        x = np.asarray(scores, dtype=np.float64)
        if self.tol is None:
            return self._count_sorted(x)
        n = x.size
        mask = self._buffer("mask", n, bool)
        counts = np.empty(len(self.events), dtype=np.int64)
        for i, t in enumerate(self.thresholds):
            le = np.count_nonzero(np.less_equal(x, t, out=mask))
            counts[i] = n - le if self.upper[i] else le
        below = np.count_nonzero(np.less(x, self.edges[0], out=mask))
        above = n - np.count_nonzero(np.less_equal(x, self.edges[-1], out=mask))
        with np.errstate(over="ignore", invalid="ignore"):
            f = np.subtract(x, self.edges[0], out=self._buffer("f", n, np.float64))
            f *= self.inv
            r = np.rint(f, out=self._buffer("r", n, np.float64))
            r -= f
            np.abs(r, out=r)
            # Not "r < tol": NaN (a NaN or overflowing score) must count as ambiguous.
            np.greater(r, self.tol, out=mask)
            np.logical_not(mask, out=mask)
            np.clip(f, 0, self.bins - 1, out=f)
            idx = self._buffer("idx", n, np.intp)
            np.copyto(idx, f, casting="unsafe")
        if mask.any():
            amb = np.flatnonzero(mask)
            idx[amb] = np.searchsorted(self.interior, x[amb], side="right")
        hist = np.bincount(idx, minlength=self.bins)
        return counts, hist, below + above

    def _count_sorted(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
        """The reference rule: one sort, binary searches."""
        s = np.sort(x)
        hist = HistogramAccumulator(self.edges)
        hist.update_sorted(s, 0)
        counts = np.array([ev.count_sorted(s) for ev in self.events], dtype=np.int64)
        return counts, hist.counts[0].copy(), int(hist.clipped[0])
