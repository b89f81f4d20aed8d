"""Binned log-likelihood-ratio statistics: the histogram ratio of scalars and the naive-Bayes sum of
per-coordinate binned ratios (with atoms, i.e. repeated values, in bins of their own).

Members of the learned family of :mod:`dpaudit.blackbox.learned_statistics` (see its docstring for
the family, the fit/selection/test discipline and the references).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np
from scipy import special, stats

from dpaudit.blackbox.sorting import sort_scores
from dpaudit.blackbox.statistic_protocol import Fitter, Scorer
from dpaudit.blackbox.statistics import (flatten_outputs)


#: A value that makes up at least this fraction of the pooled probe of a coordinate is an atom
#: (a discrete value with a bin of its own), e.g. a sentinel "no value released".
ATOM_FRACTION = 0.01
#: Histogram resolutions (bins per scalar) compared for scalar outputs; each needs about
#: ``MIN_PER_BIN`` fit runs per bin and input to be used.
SCALAR_BINS = (16, 64)
MIN_PER_BIN = 40
#: Bins per coordinate of the naive-Bayes statistic (continuous part).
NB_BINS = 16

def smoothed_log_ratio(c0: np.ndarray, c1: np.ndarray) -> np.ndarray:
    """``ln((c1 + 1/2) / (N1 + K/2)) - ln((c0 + 1/2) / (N0 + K/2))`` over the last axis (K bins)."""
    k = c0.shape[-1]
    n0 = c0.sum(axis=-1, keepdims=True)
    n1 = c1.sum(axis=-1, keepdims=True)
    return np.log((c1 + 0.5) / (n1 + 0.5 * k)) - np.log((c0 + 0.5) / (n0 + 0.5 * k))


# ----------------------------------------------------------------------------------------------
# Binning of one coordinate: atoms + quantile bins
# ----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Binning:
    """Bins of one real coordinate: ``atoms`` (exact values, own bins) then quantile bins.

    Bin ``i < len(edges) + 1`` is the continuous interval ``(edges[i-1], edges[i]]`` (open-ended at
    both extremes); bin ``len(edges) + 1 + a`` is atom ``a``.
    """

    atoms: np.ndarray
    edges: np.ndarray

    @property
    def size(self) -> int:
        return self.edges.size + 1 + self.atoms.size

    def index(self, x: np.ndarray) -> np.ndarray:
        idx = np.searchsorted(self.edges, x, side="left")
        if self.atoms.size:
            a = np.searchsorted(self.atoms, x)
            a_c = np.minimum(a, self.atoms.size - 1)
            hit = self.atoms[a_c] == x
            idx = np.where(hit, self.edges.size + 1 + a_c, idx)
        return idx

    @classmethod
    def from_values(cls, values: np.ndarray, bins: int) -> "_Binning":
        v = np.asarray(values, dtype=np.float64)
        uniq, counts = np.unique(v, return_counts=True)
        atoms = uniq[counts >= max(2, ATOM_FRACTION * v.size)]
        rest = v[~np.isin(v, atoms)] if atoms.size else v
        if rest.size == 0 or bins <= 1:
            edges = np.empty(0)
        else:
            q = np.quantile(rest, np.linspace(0.0, 1.0, bins + 1)[1:-1])
            edges = np.unique(q)
        return cls(atoms, edges)

    def to_dict(self) -> dict[str, Any]:
        return {"atoms": int(self.atoms.size), "bins": int(self.edges.size + 1)}


# Speed (whole audit <= 2 x sampling time for trajectories). The vector statistics bin
# every coordinate; the helpers below do the per-coordinate work on the whole (runs x coordinates)
# block at once with the SAME results as the per-coordinate code (which stays the path for
# coordinates with atoms): the fitted statistics and the audit's outputs are bit-identical.

def sorted_columns(pooled: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``pooled`` (rows x coordinates) as contiguous columns, each column sorted, and which columns
    have no repeated value at all (so no atoms, and the continuous part is the whole column).

    On such columns medians and quantiles are computed for all columns in one call on the sorted
    rows: numpy's quantile/median use only the order statistics, so each row gets exactly the
    values of the 1-D call on the unsorted column; a row mean of the contiguous (unsorted) columns
    sums each row in the same pairwise order as the 1-D mean.
    """
    cols = np.ascontiguousarray(pooled.T)
    srt = np.sort(cols, axis=1)
    distinct = ~(srt[:, 1:] == srt[:, :-1]).any(axis=1)
    return cols, srt, distinct


#: Most edges per coordinate binned by comparisons (one pass over the block per edge); coordinates
#: with more edges are located by binary search (``_Binning.index``).
EDGE_TABLE_MAX = 64


@dataclass(frozen=True)
class _EdgeTable:
    """``_Binning.index`` for several atom-free coordinates at once.

    For a binning without atoms the bin of ``x`` is ``searchsorted(edges, x, side="left")``, the
    number of edges strictly below ``x``: counted here with one comparison per edge over the
    whole (rows x coordinates) block, edges padded with +inf (below no finite output), so the
    indices are exactly the per-coordinate ones.
    """

    cols: np.ndarray      # coordinate indices (ascending)
    edges: np.ndarray     # (K, m): edge k of each of the m coordinates, +inf padded
    stride: int           # K + 1: bins reserved per coordinate in flattened tables
    all_cols: bool        # cols is every coordinate 0..D-1 in order

    @classmethod
    def of(cls, binnings: Sequence[_Binning], cols: Sequence[int] | np.ndarray
           ) -> "_EdgeTable | None":
        use = [int(j) for j in cols if binnings[j].atoms.size == 0
               and binnings[j].edges.size <= EDGE_TABLE_MAX]
        if not use:
            return None
        k = max(binnings[j].edges.size for j in use)
        edges = np.full((k, len(use)), np.inf)
        for i, j in enumerate(use):
            e = binnings[j].edges
            edges[:e.size, i] = e
        arr = np.asarray(use, dtype=np.intp)
        return cls(arr, edges, k + 1,
                   bool(arr.size == len(binnings) and np.array_equal(arr, np.arange(arr.size))))

    def index(self, x: np.ndarray) -> np.ndarray:
        """Bin indices (rows x m, unsigned integers) of the table's coordinates of ``x``."""
        v = x if self.all_cols else x[:, self.cols]
        idx = np.zeros(v.shape, dtype=np.uint8 if self.stride <= 255 else np.uint16)
        tmp = np.empty(v.shape, dtype=bool)
        for e in self.edges:
            np.greater(v, e, out=tmp)
            idx += tmp.view(np.uint8)
        return idx

    def flat_index(self, x: np.ndarray) -> np.ndarray:
        """Indices into a (m x stride) table flattened: coordinate ``i``'s bin ``b`` is
        ``i * stride + b``."""
        return self.index(x).astype(np.intp) + np.arange(self.cols.size) * self.stride


# ----------------------------------------------------------------------------------------------
# Scalars: histogram density ratio
# ----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class BinnedRatioScorer(Scorer):
    """Scalar outputs: the estimated log ratio ``ln(P1 / P0)`` of the bin the output falls in."""

    binning: _Binning
    log_ratios: np.ndarray
    name: str = "histogram density ratio"

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        x = flatten_outputs(outputs)[:, 0].astype(np.float64, copy=False)
        return self.log_ratios[self.binning.index(x)]

    def score_sorted(self, sorted_outputs: np.ndarray) -> np.ndarray:
        """``np.sort(self(x))`` for scalar outputs ``x`` sorted ascending, bit for bit: without
        atoms, bin ``k`` holds the outputs in ``(edges[k-1], edges[k]]``, so the sorted scores are
        each bin's log ratio repeated by its count, the bins in the order of their ratios (the
        engine uses selection scores as a multiset). Atoms, or a zero or NaN
        ratio (whose tie order is the sort's), take ``np.sort(self(x))``."""
        x = flatten_outputs(sorted_outputs)[:, 0].astype(np.float64, copy=False)
        lr = self.log_ratios
        if self.binning.atoms.size or np.any(lr == 0) or np.isnan(lr).any():
            return np.sort(self(x))
        cuts = np.searchsorted(x, self.binning.edges, side="right")
        counts = np.diff(np.concatenate([[0], cuts, [x.size]]))
        order = np.argsort(lr, kind="stable")
        return np.repeat(lr[order], counts[order])

    def to_dict(self) -> dict[str, Any]:
        b = self.binning
        return {"name": self.name, **b.to_dict(),
                "fingerprint": [float(v) for v in np.r_[b.atoms, b.edges, self.log_ratios]],
                "description": (f"estimated log likelihood ratio of the bin the output falls in "
                                f"({b.edges.size + 1} equal-mass bins of the fit split, "
                                f"{b.atoms.size} repeated values in bins of their own; add-1/2 "
                                "smoothing); events are unions of bins sorted by ratio, so "
                                "intervals and non-monotone ratios are reachable")}


@dataclass
class HistogramRatioFitter(Fitter):
    """Keeps the (scalar) fit split; ``finish()`` gives one :class:`BinnedRatioScorer` per
    resolution in ``bins`` that has at least ``MIN_PER_BIN`` fit runs per bin and input."""

    bins: tuple[int, ...] = SCALAR_BINS
    _x: list[list[np.ndarray]] = field(default_factory=lambda: [[], []])

    def prepare(self, probe0: np.ndarray, probe1: np.ndarray) -> None:
        pass

    def update(self, outputs: np.ndarray, label: int) -> None:
        self._x[label].append(flatten_outputs(outputs)[:, 0].astype(np.float64))

    def finish(self) -> list[BinnedRatioScorer]:
        x = [np.concatenate(v) if v else np.empty(0) for v in self._x]
        if min(a.size for a in x) == 0:
            raise ValueError("the histogram statistic needs fit samples from both inputs")
        n = min(a.size for a in x)
        pooled = sort_scores(np.concatenate(x))  # = np.sort (blackbox.sorting)
        # Atoms: values repeated in at least ATOM_FRACTION of the pooled fit split (one pass over
        # the sorted values, shared by every resolution).
        starts = np.flatnonzero(np.r_[True, pooled[1:] != pooled[:-1]])
        runs = np.diff(np.r_[starts, pooled.size])
        big = runs >= max(2, ATOM_FRACTION * pooled.size)
        atoms = pooled[starts[big]]
        rest = pooled if not atoms.size else pooled[np.repeat(~big, runs)]
        out = []
        for b in self.bins:
            if b > SCALAR_BINS[0] and n < MIN_PER_BIN * b:
                continue
            if rest.size:
                pos = np.linspace(0.0, rest.size - 1, b + 1)[1:-1].astype(np.int64)
                edges = np.unique(rest[pos])
            else:
                edges = np.empty(0)
            binning = _Binning(atoms, edges)
            if atoms.size:
                c = [np.bincount(binning.index(a), minlength=binning.size).astype(float)
                     for a in x]
            else:
                c = [_atom_free_counts(v, binning).astype(float) for v in self._x]
            out.append(BinnedRatioScorer(binning, smoothed_log_ratio(c[0], c[1]),
                                         name=f"histogram density ratio ({binning.edges.size + 1}"
                                              " bins)"))
        return out


def _atom_free_counts(chunks: Sequence[np.ndarray], binning: _Binning) -> np.ndarray:
    """``bincount(binning.index(concatenate(chunks)))`` for a binning without atoms, where bin
    ``k`` is ``(edges[k-1], edges[k]]``: a sorted chunk (the engine feeds the scalar fit split
    sorted) is counted by binary searches of the edges, any other chunk bin by bin (the same counts, without locating 10^5 runs)."""
    total = np.zeros(binning.size, dtype=np.int64)
    for a in chunks:
        if a.size > 1 and not np.any(a[1:] < a[:-1]) and not np.isnan(a).any():
            cuts = np.searchsorted(a, binning.edges, side="right")
            total += np.diff(np.concatenate([[0], cuts, [a.size]]))
        else:
            total += np.bincount(binning.index(a), minlength=binning.size)
    return total


# ----------------------------------------------------------------------------------------------
# Vectors: naive-Bayes log likelihood ratio with a discrete/continuous split per coordinate
# ----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class NaiveBayesScorer(Scorer):
    """Sum over the used coordinates of the estimated per-coordinate log ratio of the output's
    bin (atoms or quantile bins); ``transform`` maps outputs to the coordinates first."""

    binnings: tuple[_Binning, ...]
    log_ratios: tuple[np.ndarray, ...]
    used: np.ndarray
    transform: Callable[[np.ndarray], np.ndarray] | None = None
    name: str = "naive-Bayes log likelihood ratio"
    # Speed: the atom-free used coordinates binned at once, their log ratios in one flat table
    # (coordinate i's bin b at i * stride + b), and each used coordinate's column in it (-1: none).
    _table: Any = field(default=None, init=False, repr=False, compare=False)
    _lr_flat: Any = field(default=None, init=False, repr=False, compare=False)
    _pos: Any = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        t = _EdgeTable.of(self.binnings, self.used)
        pos = np.full(len(self.binnings), -1, dtype=np.intp)
        if t is not None:
            lr = np.zeros((t.cols.size, t.stride))
            for i, j in enumerate(t.cols):
                lr[i, :self.log_ratios[j].size] = self.log_ratios[j]
                pos[j] = i
            object.__setattr__(self, "_lr_flat", lr.ravel())
        object.__setattr__(self, "_table", t)
        object.__setattr__(self, "_pos", pos)

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        x = (self.transform(outputs) if self.transform is not None
             else flatten_outputs(outputs)).astype(np.float64, copy=False)
        s = np.zeros(x.shape[0])
        g = None if self._table is None else self._lr_flat[self._table.flat_index(x)]
        # Summed coordinate by coordinate in the order of ``used`` (as the loop always did).
        for j in self.used:
            i = self._pos[j]
            if i >= 0:
                s += g[:, i]
            else:
                s += self.log_ratios[j][self.binnings[j].index(x[:, j])]
        return s

    def to_dict(self) -> dict[str, Any]:
        atoms = sum(int(self.binnings[j].atoms.size > 0) for j in self.used)
        fp = [float(v) for j in self.used for v in np.r_[self.binnings[j].atoms,
                                                          self.binnings[j].edges,
                                                          self.log_ratios[j]]]
        return {"name": self.name, "dimension": len(self.binnings),
                "coordinates_used": int(self.used.size), "coordinates_with_atoms": atoms,
                "fingerprint": fp,
                "description": (f"{self.name}: sum over {self.used.size} of {len(self.binnings)} "
                                f"coordinates of the estimated log ratio of the coordinate's bin "
                                f"(repeated values in bins of their own, {NB_BINS} equal-mass bins "
                                "of the rest, from the fit split; add-1/2 smoothing)")}


@dataclass
class NaiveBayesFitter(Fitter):
    """Streaming per-coordinate histograms; bins from the pooled probes (the first fit runs).

    ``finish()`` gives the full naive-Bayes scorer and, when it keeps fewer coordinates, a screened
    one (coordinates whose two fit-split histograms differ by a G-test at level ``1 / D``; the
    best coordinate if none does).
    """

    bins: int = NB_BINS
    transform: Callable[[np.ndarray], np.ndarray] | None = None
    name: str = "naive-Bayes log likelihood ratio"
    _binnings: list[_Binning] | None = None
    _counts: list[np.ndarray] = field(default_factory=list)
    _table: _EdgeTable | None = None
    _slow: list[int] = field(default_factory=list)

    def _x(self, outputs: np.ndarray) -> np.ndarray:
        return (self.transform(outputs) if self.transform is not None
                else flatten_outputs(outputs)).astype(np.float64, copy=False)

    def prepare(self, probe0: np.ndarray, probe1: np.ndarray) -> None:
        pooled = np.concatenate([self._x(probe0), self._x(probe1)])
        d = pooled.shape[1]
        binnings: list[_Binning | None] = [None] * d
        if self.bins > 1 and pooled.shape[0] > 0:
            # Columns without repeated values have no atoms: their quantile edges for all such
            # columns in one call (the same values as _Binning.from_values, see sorted_columns).
            _, srt, distinct = sorted_columns(pooled)
            fast = np.flatnonzero(distinct)
            if fast.size:
                q = np.quantile(srt[fast], np.linspace(0.0, 1.0, self.bins + 1)[1:-1], axis=1)
                for i, j in enumerate(fast):
                    binnings[j] = _Binning(np.empty(0), np.unique(q[:, i]))
        self._binnings = [b if b is not None else _Binning.from_values(pooled[:, j], self.bins)
                          for j, b in enumerate(binnings)]
        self._counts = [np.zeros((2, b.size)) for b in self._binnings]
        self._table = _EdgeTable.of(self._binnings, range(d))
        in_table = set() if self._table is None else set(self._table.cols.tolist())
        self._slow = [j for j in range(d) if j not in in_table]

    def update(self, outputs: np.ndarray, label: int) -> None:
        if self._binnings is None:
            raise RuntimeError("NaiveBayesFitter.prepare must be called before update")
        x = self._x(outputs)
        t = self._table
        if t is not None:
            c = np.bincount(t.flat_index(x).ravel(), minlength=t.cols.size * t.stride
                            ).reshape(t.cols.size, t.stride)
            for i, j in enumerate(t.cols):
                self._counts[j][label] += c[i, :self._binnings[j].size]
        # (_slow is set by prepare; binnings set without it are all binned one by one)
        slow = self._slow if t is not None or self._slow else range(len(self._binnings))
        for j in slow:
            b = self._binnings[j]
            self._counts[j][label] += np.bincount(b.index(x[:, j]), minlength=b.size)

    def finish(self) -> list[NaiveBayesScorer]:
        if self._binnings is None or not self._counts:
            raise ValueError("the naive-Bayes statistic needs fit samples from both inputs")
        lr = tuple(smoothed_log_ratio(c[0], c[1]) for c in self._counts)
        d = len(self._binnings)
        full = NaiveBayesScorer(tuple(self._binnings), lr, np.arange(d), self.transform, self.name)
        keep, pvals = _screen(self._counts, 1.0 / max(d, 1))
        if keep.size == 0:
            keep = np.array([int(np.argmin(pvals))])
        out = [full]
        if keep.size < d:
            out.append(NaiveBayesScorer(tuple(self._binnings), lr, keep, self.transform,
                                        f"{self.name}, screened coordinates"))
        return out

def _g_test(c: np.ndarray) -> float:
    """p-value of the G-test of homogeneity of the two rows of the 2 x K table ``c``."""
    c = c[:, c.sum(axis=0) > 0]
    if c.shape[1] < 2 or min(c.sum(axis=1)) == 0:
        return 1.0
    _, p, _, _ = stats.chi2_contingency(c, lambda_="log-likelihood")
    return float(p)


#: Relative distance to the screening level within which the vectorised G-test p-value is
#: replaced by scipy's (:func:`_g_test`), so that the screen keeps exactly the coordinates that
#: ``_g_test(c) < level`` keeps (the two computations agree to ~1e-13 relative).
SCREEN_RECHECK = 1e-6


def _screen(counts: Sequence[np.ndarray], level: float) -> tuple[np.ndarray, np.ndarray | None]:
    """Indices ``j`` with ``_g_test(counts[j]) < level``, and, when there are none, every
    ``_g_test`` p-value (for the argmin fallback; else None).

    The G statistic of all 2 x K tables at once (zero columns masked), its chi-square p-value at
    ``K' - 1`` degrees of freedom (``K'`` non-empty columns); tables that scipy treats specially
    (one degree of freedom: Yates' correction) and p-values within :data:`SCREEN_RECHECK` of
    ``level`` go through :func:`_g_test` itself, so the kept set is exactly the old one.
    """
    d = len(counts)
    if d == 0:
        return np.empty(0, dtype=np.intp), np.empty(0)
    k = max(c.shape[1] for c in counts)
    obs = np.zeros((d, 2, k))
    for j, c in enumerate(counts):
        obs[j, :, :c.shape[1]] = c
    col = obs.sum(axis=1)                      # (d, k)
    nz = col > 0
    kk = nz.sum(axis=1)
    row = obs.sum(axis=2)                      # (d, 2)
    total = row.sum(axis=1)
    trivial = (kk < 2) | (row.min(axis=1) == 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        exp = row[:, :, None] * col[:, None, :] / np.where(total > 0, total, 1.0)[:, None, None]
        terms = np.where(nz[:, None, :], 2.0 * special.xlogy(obs, obs / exp), 0.0)
    stat = terms.reshape(d, -1).sum(axis=1)
    p = np.ones(d)
    ok = ~trivial
    p[ok] = stats.chi2.sf(stat[ok], kk[ok] - 1)
    exact = np.flatnonzero(ok & ((kk == 2) | (np.abs(p - level) <= SCREEN_RECHECK * level)))
    for j in exact:
        p[j] = _g_test(counts[j])
    keep = np.flatnonzero(p < level)
    if keep.size:
        return keep, None
    return keep, np.array([_g_test(c) for c in counts])


# ----------------------------------------------------------------------------------------------
# Vectors: classifier scores
# ----------------------------------------------------------------------------------------------
