"""A family of learned test statistics for the black-box audit (issue 15), and how one is picked.

The engine (:mod:`dpaudit.audits.empirical`) reduces every output to one real score and then uses a
threshold event on it. With a fixed score family it misses bugs whose likelihood ratio is not
shaped like the score: a threshold on a scalar cannot isolate a region where the ratio is large
unless that region is a tail (non-monotone ratios: a density vanishing at a point, two-sided
effects); a linear discriminant is far from the likelihood ratio of heavy-tailed or non-Gaussian
vector noise; outcome counting is too sparse for long discrete sequences. This module holds a
*family* of statistics, each an estimate of the log likelihood ratio ``ln(P1[o] / P0[o])`` of a
different shape, and the bookkeeping that lets the engine pick one:

* :class:`HistogramRatioFitter` (scalars): equal-mass bins of the pooled fit split, repeated
  values ("atoms", e.g. a sentinel) in bins of their own, add-1/2 smoothed log ratio per bin, at
  several resolutions. Thresholds on the score are unions of bins sorted by ratio, so intervals
  and non-monotone ratios are reachable (the density-ratio idea of DP-Sniper, Bichsel et al.,
  IEEE S&P 2021, Sec. V, with a histogram as the density estimator).
* :class:`NaiveBayesFitter` (vectors, trajectories, mixed outputs): the same binned log ratio per
  coordinate, summed (a naive-Bayes log likelihood ratio); each coordinate is split into its
  atoms (discrete part, e.g. the sentinel of a sparse-vector variant that releases values) and
  quantile bins of the rest (continuous part). A screened variant keeps only the coordinates
  whose fit-split histograms differ (G-test at level ``1 / D``), so that coordinates without
  signal do not add estimation noise.
* :class:`LocationShiftFitter` (vectors, mixed outputs): per coordinate, the atoms get their
  count-based log ratio as in naive Bayes, and the continuous part a *parametric* log ratio: the
  exact log likelihood ratio of a location shift under Laplace noise,
  ``(|x - m0| - |x - m1|) / b`` with ``m0``, ``m1`` the fit-split medians of the coordinate's
  continuous values on each input and ``b`` their mean absolute deviation (plus the log ratio of
  the coordinate being continuous at all). Two numbers per coordinate are estimated from all fit
  runs instead of one ratio per bin, so a small shift under wide noise (20 coordinates of
  Laplace(200) shifted by 1: per-bin ratios of 0.005 drowned by a standard error of 0.008 at
  5 x 10^5 fit runs) is still resolved; for small shifts the score is the weighted sign test
  ``sum_j (m1_j - m0_j) / b_j * sign(x_j - (m0_j + m1_j) / 2)``, which is the most powerful
  per-coordinate statistic for Laplace noise (asymptotic efficiency 2 relative to the mean) and
  robust to any heavy tail. Medians come from a fine streaming histogram (``LOCATION_GRID``
  bins over the probe's central 99% per coordinate), so memory does not grow with the fit split.
* :class:`LogisticFitter` (vectors): logistic regression (scikit-learn) on basis features
  ``[x, |x - m0|, |x - m1|, ||x - m0||_2, ||x - m1||_2]`` with ``m0``, ``m1`` the coordinate-wise
  fit-split medians of the two inputs. Its span contains the exact log likelihood ratio of a shift
  under Gaussian noise (linear), product Laplace noise (``|x_j - m0_j| - |x_j - m1_j|``) and
  l2-Laplace noise (``||x - m0|| - ||x - m1||``); in the spirit of DP-Sniper's classifier and of
  classifier-based auditors. :class:`SklearnClassifierFitter` gives a gradient-boosted or k-NN
  classifier (option, not in the default family: costly to evaluate on 10^6 test runs).
* :class:`~dpaudit.audits.pattern_statistics.PatternHistogramFitter` (mixed discrete/continuous
  vectors): the log ratio of the row's pattern of atoms and continuous coordinates plus, per
  continuous coordinate, the log ratio of its bin *given the pattern* (the joint law that naive
  Bayes, a product over coordinates, cannot represent; e.g. the first "above" position of a
  sparse-vector variant and the value released there). Opt-in (``statistics=[..., "pattern"]``),
  not in the default family: see :mod:`dpaudit.audits.pattern_statistics` for why.
* :class:`SequenceFeatureFitter` (discrete trajectories: which branch, expert or flag at each
  round): the sequence is summarised by counts of each value, the first change time, the first
  and last value and the first time each value occurs, and scored by naive Bayes on these
  features.

Discipline (``../shared/AUDIT-METHOD.md`` section 3). Every fitter sees the *fit* split only
(``prepare`` gets the probes, which are the first rows of the fit split, and ``update`` the rest of
it); the engine scores the *selection* split with every fitted statistic and keeps the statistic
and event with the highest projected bound (:func:`choose`); only then does it draw the test
split, on which only the chosen statistic's events are counted. The choice among statistics is
made on data independent of the test split, so it costs no Bonferroni factor: the number of events
evaluated on the test split (``test_events``) is unchanged. ``tests/test_learned_statistics.py``
fails if any statistic's fit or choice depends on test-split outputs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np
from scipy import special, stats
from threadpoolctl import threadpool_limits

from dpaudit.audits.statistics import (IdentityScorer, LikelihoodRatioFitter,
                                       LinearDiscriminantFitter, RankedEvent, flatten_outputs,
                                       projected_log_ratio, sweep_thresholds)

__all__ = [
    "STATISTIC_NAMES",
    "DEFAULT_SCALAR",
    "DEFAULT_VECTOR",
    "BinnedRatioScorer",
    "HistogramRatioFitter",
    "NaiveBayesScorer",
    "NaiveBayesFitter",
    "LocationShiftScorer",
    "LocationShiftFitter",
    "FeatureLinearScorer",
    "LogisticFitter",
    "SklearnClassifierFitter",
    "SequenceFeatureFitter",
    "Candidate",
    "Choice",
    "candidates_for",
    "choose",
    "plug_in_test_bound",
    "check_statistics",
]

#: Names accepted by ``audit(..., statistics=[...])``.
STATISTIC_NAMES = ("identity", "histogram", "linear", "naive-bayes", "location-shift",
                   "logistic", "sequence", "pattern", "gradient-boosting", "knn")
#: Default family for scalar continuous outputs.
DEFAULT_SCALAR = ("identity", "histogram")
#: Default family for vector / trajectory outputs.
DEFAULT_VECTOR = ("linear", "naive-bayes", "location-shift", "logistic", "sequence")

#: A value that makes up at least this fraction of the pooled probe of a coordinate is an atom
#: (a discrete value with a bin of its own), e.g. a sentinel "no value released".
ATOM_FRACTION = 0.01
#: Histogram resolutions (bins per scalar) compared for scalar outputs; each needs about
#: ``MIN_PER_BIN`` fit runs per bin and input to be used.
SCALAR_BINS = (16, 64)
MIN_PER_BIN = 40
#: Bins per coordinate of the naive-Bayes statistic (continuous part).
NB_BINS = 16
#: Location-shift statistic: bins of the streaming histogram whose interpolated quantiles give
#: the medians (over the probe's central 99% per coordinate; at Laplace(200) noise a bin is
#: 0.65 wide, and linear interpolation inside it leaves an error far below the median's own
#: sampling error of about 0.3 at 5 x 10^5 runs), and the fewest continuous values a coordinate
#: needs in the pooled probe to get the parametric part.
LOCATION_GRID = 4096
LOCATION_MIN_CONTINUOUS = 32
#: Cap on rows x features of the logistic regression's fit (per input), for time.
LOGISTIC_CELLS = 500_000
#: Values per coordinate (over the probe) up to which a vector output is a discrete sequence.
SEQUENCE_MAX_VALUES = 16


def _smoothed_log_ratio(c0: np.ndarray, c1: np.ndarray) -> np.ndarray:
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


# Speed (issue 15: whole audit <= 2 x sampling time for trajectories). The vector statistics bin
# every coordinate; the helpers below do the per-coordinate work on the whole (runs x coordinates)
# block at once with the SAME results as the per-coordinate code (which stays the path for
# coordinates with atoms): the fitted statistics and the audit's outputs are bit-identical.

def _sorted_columns(pooled: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
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
class BinnedRatioScorer:
    """Scalar outputs: the estimated log ratio ``ln(P1 / P0)`` of the bin the output falls in."""

    binning: _Binning
    log_ratios: np.ndarray
    name: str = "histogram density ratio"

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        x = flatten_outputs(outputs)[:, 0].astype(np.float64, copy=False)
        return self.log_ratios[self.binning.index(x)]

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
class HistogramRatioFitter:
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
        pooled = np.sort(np.concatenate(x))
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
            c = [np.bincount(binning.index(a), minlength=binning.size).astype(float) for a in x]
            out.append(BinnedRatioScorer(binning, _smoothed_log_ratio(c[0], c[1]),
                                         name=f"histogram density ratio ({binning.edges.size + 1}"
                                              " bins)"))
        return out


# ----------------------------------------------------------------------------------------------
# Vectors: naive-Bayes log likelihood ratio with a discrete/continuous split per coordinate
# ----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class NaiveBayesScorer:
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
class NaiveBayesFitter:
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
            # columns in one call (the same values as _Binning.from_values, see _sorted_columns).
            _, srt, distinct = _sorted_columns(pooled)
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
        lr = tuple(_smoothed_log_ratio(c[0], c[1]) for c in self._counts)
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


@dataclass(frozen=True)
class LocationShiftScorer:
    """Sum over coordinates of: the log ratio of the output's atom (count-based), or for a
    continuous value the log ratio of "continuous" plus ``(|x - m0| - |x - m1|) / b``."""

    atoms: tuple[np.ndarray, ...]
    log_ratios: tuple[np.ndarray, ...]
    m0: np.ndarray
    m1: np.ndarray
    scale: np.ndarray
    parametric: np.ndarray
    name: str = "location-shift log likelihood ratio (Laplace form, atoms apart)"

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        x = flatten_outputs(outputs).astype(np.float64, copy=False)
        # Continuous part of every coordinate at once (rows x coordinates), then the atoms of
        # the coordinates that have any overwrite their entries.
        # |x - m0| - |x - m1| = sign(m1 - m0) (2 clip(x, lo, hi) - lo - hi), lo/hi = min/max of
        # m0, m1: written with clip, the two plateaus are exactly constant in floating point (the
        # plateaus carry probability mass, and an event's threshold may sit on one).
        cont_lr = np.array([lr[-1] for lr in self.log_ratios])
        par = self.parametric
        sgn = np.where(par, np.sign(self.m1 - self.m0), 0.0)
        w = sgn / self.scale
        lo = np.where(par, np.minimum(self.m0, self.m1), 0.0)
        hi = np.where(par, np.maximum(self.m0, self.m1), 0.0)
        # (2 clip(x) - (lo + hi)) * w + cont_lr, the same operations in place (no temporaries)
        terms = np.clip(x, lo, hi)
        terms *= 2.0
        terms -= lo + hi
        terms *= w
        terms += cont_lr
        for j, atoms in enumerate(self.atoms):
            if atoms.size:
                v = x[:, j]
                a_c = np.minimum(np.searchsorted(atoms, v), atoms.size - 1)
                hit = atoms[a_c] == v
                terms[:, j] = np.where(hit, self.log_ratios[j][a_c], terms[:, j])
        return terms.sum(axis=1)

    def to_dict(self) -> dict[str, Any]:
        fp = [float(v) for j in range(len(self.atoms))
              for v in np.r_[self.atoms[j], self.log_ratios[j], self.m0[j], self.m1[j],
                             self.scale[j]]]
        return {"name": self.name, "dimension": len(self.atoms),
                "coordinates_parametric": int(np.count_nonzero(self.parametric)),
                "coordinates_with_atoms": int(sum(a.size > 0 for a in self.atoms)),
                "fingerprint": fp,
                "description": (f"{self.name}: sum over {len(self.atoms)} coordinates of the "
                                "log ratio of the coordinate's atom (repeated values, add-1/2 "
                                "smoothed counts) or, for a continuous value x, the log ratio "
                                "of 'continuous' plus (|x - m0| - |x - m1|) / b, with m0, m1 "
                                "the fit-split medians of the continuous values on each input "
                                "and b their mean absolute deviation (the exact log likelihood "
                                "ratio of a location shift under Laplace noise)")}


@dataclass
class LocationShiftFitter:
    """Streaming fit of :class:`LocationShiftScorer` over the fit split.

    ``prepare`` (the pooled probes, the first fit runs) fixes per coordinate the atoms (values
    with at least ``ATOM_FRACTION`` of the probe), the scale ``b`` (mean absolute deviation of the
    pooled continuous probe values from their median) and a grid of ``LOCATION_GRID`` bins over
    their central 99%; ``update`` counts atoms, continuous values and the grid histogram per
    input; ``finish`` reads each input's median off its histogram (linear interpolation inside
    the bin; values outside the grid are counted in end bins, so the median is exact in rank).
    """

    grid: int = LOCATION_GRID
    _atoms: list[np.ndarray] = field(default_factory=list)
    _edges: list[np.ndarray | None] = field(default_factory=list)
    _scale: np.ndarray | None = None
    _counts: list[np.ndarray] = field(default_factory=list)
    _hist: list[np.ndarray | None] = field(default_factory=list)
    # Speed: the coordinates without atoms that have a grid, binned all at once (_grid_bins);
    # their histograms are views of one (2, m, grid + 2) array.
    _fast: np.ndarray | None = None
    _fast_hist: np.ndarray | None = None
    _fast_table: np.ndarray | None = None
    _fast_lo: np.ndarray | None = None
    _fast_inv: np.ndarray | None = None

    def prepare(self, probe0: np.ndarray, probe1: np.ndarray) -> None:
        pooled = np.concatenate([flatten_outputs(probe0), flatten_outputs(probe1)]
                                ).astype(np.float64)
        d = pooled.shape[1]
        self._atoms, self._edges, self._counts, self._hist = [], [], [], []
        self._scale = np.ones(d)
        # Columns without repeated values (no atoms, continuous part = the column): median, mean
        # absolute deviation and central 99% of all of them at once, the same values as below
        # (see _sorted_columns).
        pre: dict[int, tuple[float, float, Any, Any]] = {}
        if pooled.shape[0] >= LOCATION_MIN_CONTINUOUS:
            cols, srt, distinct = _sorted_columns(pooled)
            fast = np.flatnonzero(distinct)
            if fast.size:
                med = np.median(srt[fast], axis=1)
                mad = np.mean(np.abs(cols[fast] - med[:, None]), axis=1)
                lohi = np.quantile(srt[fast], [0.005, 0.995], axis=1)
                for i, j in enumerate(fast):
                    pre[int(j)] = (float(med[i]), float(mad[i]), lohi[0, i], lohi[1, i])
        for j in range(d):
            v = pooled[:, j]
            if j in pre:
                atoms = np.empty(0)
                _, b, lo, hi = pre[j]
                has_grid = True
            else:
                uniq, counts = np.unique(v, return_counts=True)
                atoms = uniq[counts >= max(2, ATOM_FRACTION * v.size)]
                rest = v[~np.isin(v, atoms)] if atoms.size else v
                has_grid = rest.size >= LOCATION_MIN_CONTINUOUS
                if has_grid:
                    med = float(np.median(rest))
                    b = float(np.mean(np.abs(rest - med)))
                    lo, hi = np.quantile(rest, [0.005, 0.995])
            edges = None
            if has_grid and b > 0 and hi > lo:
                edges = np.linspace(lo, hi, self.grid + 1)
                self._scale[j] = b
            self._atoms.append(atoms)
            self._edges.append(edges)
            self._counts.append(np.zeros((2, atoms.size + 1)))
            self._hist.append(None if edges is None else np.zeros((2, self.grid + 2)))
        fast_cols = [j for j in range(d) if self._atoms[j].size == 0
                     and self._edges[j] is not None
                     and np.isfinite(self.grid / (self._edges[j][-1] - self._edges[j][0]))]
        self._fast = None
        if fast_cols:
            m = len(fast_cols)
            self._fast = np.asarray(fast_cols, dtype=np.intp)
            self._fast_hist = np.zeros((2, m, self.grid + 2))
            table = np.empty((m, self.grid + 3))
            table[:, 0], table[:, -1] = -np.inf, np.inf
            for i, j in enumerate(fast_cols):
                table[i, 1:-1] = self._edges[j]
                self._hist[j] = self._fast_hist[:, i, :]
            self._fast_table = table.ravel()
            lo = np.array([self._edges[j][0] for j in fast_cols])
            hi = np.array([self._edges[j][-1] for j in fast_cols])
            self._fast_lo = lo[:, None]
            self._fast_inv = (self.grid / (hi - lo))[:, None]

    def _grid_bins(self, xt: np.ndarray) -> np.ndarray:
        """``searchsorted(edges_j, v, side="right")`` for the fast coordinates, as flat indices
        ``i * (grid + 3) + bin`` (``xt``: fast coordinates x rows, contiguous). The bin is guessed
        from the grid's spacing and then corrected against the grid's own edges until
        ``edges[bin - 1] <= v < edges[bin]`` (edges padded with -inf and +inf), the definition of
        searchsorted's answer, so it is exact whatever the rounding of the guess."""
        g = self.grid
        off = (np.arange(xt.shape[0]) * (g + 3))[:, None]
        with np.errstate(over="ignore"):  # far outside the grid: +-inf, clipped to the ends
            t = xt - self._fast_lo
            t *= self._fast_inv
        np.clip(t, -1.0, g + 1.0, out=t)
        np.floor(t, out=t)
        k = t.astype(np.intp)
        k += 1
        np.clip(k, 0, g + 1, out=k)
        k += off
        table = self._fast_table
        for _ in range(8):
            down = table[k] > xt
            up = table[k + 1] <= xt
            if not (down.any() or up.any()):
                return k
            k += up
            k -= down
        # The guess was far off (only for extreme spacings): binary search, coordinate-wise.
        rows = [np.searchsorted(self._edges[j], xt[i], side="right") + off[i, 0]
                for i, j in enumerate(self._fast)]
        return np.stack(rows)

    def update(self, outputs: np.ndarray, label: int) -> None:
        if self._scale is None:
            raise RuntimeError("LocationShiftFitter.prepare must be called before update")
        x = flatten_outputs(outputs).astype(np.float64, copy=False)
        skip: set[int] = set()
        if self._fast is not None and x.shape[0]:
            f, g = self._fast, self.grid
            xt = np.ascontiguousarray((x if f.size == x.shape[1] else x[:, f]).T)
            h = np.bincount(self._grid_bins(xt).ravel(), minlength=f.size * (g + 3))
            self._fast_hist[label] += h.reshape(f.size, g + 3)[:, :g + 2]
            for j in f:
                self._counts[j][label][0] += x.shape[0]
            skip = set(f.tolist())
        for j, atoms in enumerate(self._atoms):
            if j in skip:
                continue
            v = x[:, j]
            if atoms.size:
                a = np.searchsorted(atoms, v)
                a_c = np.minimum(a, atoms.size - 1)
                hit = atoms[a_c] == v
                idx = np.where(hit, a_c, atoms.size)
                v = v[~hit]
            else:
                idx = np.full(v.shape, 0)
            self._counts[j][label] += np.bincount(idx, minlength=atoms.size + 1)
            edges = self._edges[j]
            if edges is not None and v.size:
                # bin 0: below the grid, 1..grid: inside, grid + 1: above
                b = np.searchsorted(edges, v, side="right")
                self._hist[j][label] += np.bincount(b, minlength=self.grid + 2)

    def _median(self, h: np.ndarray, edges: np.ndarray) -> float:
        total = h.sum()
        cum = np.cumsum(h)
        k = int(np.searchsorted(cum, 0.5 * total))  # first bin reaching half the mass
        if k == 0:
            return float(edges[0])
        if k >= h.size - 1:
            return float(edges[-1])
        before = cum[k - 1]
        frac = (0.5 * total - before) / h[k] if h[k] > 0 else 0.5
        return float(edges[k - 1] + frac * (edges[k] - edges[k - 1]))

    def finish(self) -> list[LocationShiftScorer]:
        if self._scale is None or not self._counts:
            raise ValueError("the location-shift statistic needs fit samples from both inputs")
        d = len(self._atoms)
        m0, m1 = np.zeros(d), np.zeros(d)
        parametric = np.zeros(d, dtype=bool)
        for j in range(d):
            h, edges = self._hist[j], self._edges[j]
            if h is not None and min(h.sum(axis=1)) > 0:
                m0[j] = self._median(h[0], edges)
                m1[j] = self._median(h[1], edges)
                parametric[j] = True
        lr = tuple(_smoothed_log_ratio(c[0], c[1]) for c in self._counts)
        return [LocationShiftScorer(tuple(self._atoms), lr, m0, m1, self._scale.copy(),
                                    parametric)]


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

def _fill_basis(x: np.ndarray, m0: np.ndarray, m1: np.ndarray, out: np.ndarray) -> np.ndarray:
    """The logistic statistic's basis features of each row, ``[x, |x - m0|, |x - m1|,
    ||x - m0||, ||x - m1||]`` (width ``3 d + 2``), written into ``out`` without temporaries of
    the full width."""
    d = x.shape[1]
    out[:, :d] = x
    for k, m in enumerate((m0, m1)):
        dm = x - m
        out[:, 3 * d + k] = np.sqrt(np.einsum("ij,ij->i", dm, dm))
        np.abs(dm, out=out[:, (k + 1) * d:(k + 2) * d])
    return out


@dataclass(frozen=True)
class FeatureLinearScorer:
    """Score ``<w, (phi(x) - mean) / scale>`` with the basis ``phi`` of :class:`LogisticFitter`."""

    m0: np.ndarray
    m1: np.ndarray
    mean: np.ndarray
    scale: np.ndarray
    weights: np.ndarray
    name: str = "logistic regression on basis features"

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        x = flatten_outputs(outputs).astype(np.float64, copy=False)
        # (basis features - mean) / scale, built in one array in place
        f = _fill_basis(x, self.m0, self.m1, np.empty((x.shape[0], 3 * x.shape[1] + 2)))
        f -= self.mean
        f /= self.scale
        return np.einsum("ij,j->i", f, self.weights)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "features": int(self.weights.size),
                "fingerprint": [float(v) for v in np.r_[self.m0, self.m1, self.weights]],
                "description": ("logistic regression (scikit-learn, L2, C = 1) on the features "
                                "[x, |x - m0|, |x - m1|, ||x - m0||, ||x - m1||] with m0, m1 the "
                                "fit-split coordinate medians; its span holds the exact log "
                                "likelihood ratio of a shift under Gaussian, Laplace and "
                                "l2-Laplace noise")}


@dataclass
class _RowKeeper:
    """Keeps the first ``cap`` fit rows of each input (for fitters that need rows)."""

    cap: int | None = None
    _rows: list[list[np.ndarray]] = field(default_factory=lambda: [[], []])
    _n: list[int] = field(default_factory=lambda: [0, 0])

    def prepare(self, probe0: np.ndarray, probe1: np.ndarray) -> None:
        if self.cap is None:
            d = flatten_outputs(probe0).shape[1]
            self.cap = max(500, LOGISTIC_CELLS // (3 * d + 2))

    def update(self, outputs: np.ndarray, label: int) -> None:
        room = (self.cap or 0) - self._n[label]
        if room > 0:
            x = flatten_outputs(outputs)[:room].astype(np.float64)
            self._rows[label].append(x)
            self._n[label] += x.shape[0]

    def rows(self) -> list[np.ndarray]:
        if min(self._n) == 0:
            raise ValueError("a classifier statistic needs fit samples from both inputs")
        return [np.concatenate(r) for r in self._rows]


@dataclass
class LogisticFitter(_RowKeeper):
    """Logistic regression (scikit-learn) on :func:`_fill_basis` features of the first fit rows."""

    def finish(self) -> list[FeatureLinearScorer]:
        from sklearn.linear_model import LogisticRegression

        x0, x1 = self.rows()
        m0, m1 = np.median(x0, axis=0), np.median(x1, axis=0)
        n0, d = x0.shape
        f = np.empty((n0 + x1.shape[0], 3 * d + 2))  # basis features of both inputs
        _fill_basis(x0, m0, m1, f[:n0])
        _fill_basis(x1, m0, m1, f[n0:])
        y = np.r_[np.zeros(x0.shape[0]), np.ones(x1.shape[0])]
        mean = f.mean(axis=0)
        scale = f.std(axis=0)
        scale = np.where(scale > 0, scale, 1.0)
        z = f
        z -= mean
        z /= scale
        clf = LogisticRegression(C=1.0, max_iter=300)
        with threadpool_limits(limits=1):  # idle BLAS/OpenMP workers spin on a shared machine
            clf.fit(z, y)
        return [FeatureLinearScorer(m0, m1, mean, scale, clf.coef_[0].astype(np.float64))]


@dataclass(frozen=True)
class ClassifierScorer:
    """Score = the fitted scikit-learn classifier's probability of input 1."""

    model: Any
    name: str

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        x = flatten_outputs(outputs).astype(np.float64, copy=False)
        with threadpool_limits(limits=1):
            return self.model.predict_proba(x)[:, 1].astype(np.float64)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "description": f"{self.name} (scikit-learn) fitted on the "
                                                  "fit split; score = P(input 1 | output)"}


@dataclass
class SklearnClassifierFitter(_RowKeeper):
    """Gradient-boosted trees or k-nearest neighbours (scikit-learn); options, not defaults."""

    kind: str = "gradient-boosting"

    def finish(self) -> list[ClassifierScorer]:
        x0, x1 = self.rows()
        x = np.concatenate([x0, x1])
        y = np.r_[np.zeros(x0.shape[0]), np.ones(x1.shape[0])]
        if self.kind == "gradient-boosting":
            from sklearn.ensemble import HistGradientBoostingClassifier
            model = HistGradientBoostingClassifier(max_iter=100, early_stopping=False,
                                                   random_state=0)
            name = "gradient-boosted trees"
        else:
            from sklearn.neighbors import KNeighborsClassifier
            model = KNeighborsClassifier(n_neighbors=max(5, int(math.sqrt(x.shape[0]) / 4)))
            name = "k-nearest-neighbour classifier"
        with threadpool_limits(limits=1):
            model.fit(x, y)
        return [ClassifierScorer(model, name)]


# ----------------------------------------------------------------------------------------------
# Discrete trajectories: sequence features
# ----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class SequenceFeatures:
    """Row-wise summary of a discrete sequence ``x_0..x_{D-1}`` over the value set ``values``:
    count of each value, first change time (``D`` if none), first and last value, first time each
    value occurs (``D`` if never)."""

    values: np.ndarray

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        x = flatten_outputs(outputs).astype(np.float64, copy=False)
        d = x.shape[1]
        eq = x[:, :, None] == self.values[None, None, :]
        counts = eq.sum(axis=1)
        first_time = np.where(eq.any(axis=1), eq.argmax(axis=1), d)
        change = x != x[:, :1]
        first_change = np.where(change.any(axis=1), change.argmax(axis=1), d)
        return np.concatenate([counts, first_time, first_change[:, None], x[:, :1], x[:, -1:]],
                              axis=1).astype(np.float64)


@dataclass
class SequenceFeatureFitter:
    """Naive Bayes on :class:`SequenceFeatures` (all features discrete: every value an atom)."""

    _nb: NaiveBayesFitter | None = None
    _ok: bool = False

    def prepare(self, probe0: np.ndarray, probe1: np.ndarray) -> None:
        pooled = np.concatenate([flatten_outputs(probe0), flatten_outputs(probe1)])
        self._ok = (pooled.shape[1] >= 2 and pooled.dtype.kind in "biuf"
                    and np.unique(pooled[:8]).size <= SEQUENCE_MAX_VALUES)
        values = np.unique(pooled) if self._ok else np.empty(0)
        self._ok = self._ok and values.size <= SEQUENCE_MAX_VALUES
        if self._ok:
            feats = SequenceFeatures(values.astype(np.float64))
            self._nb = NaiveBayesFitter(bins=pooled.shape[1] + 1, transform=feats,
                                        name="naive-Bayes log likelihood ratio of sequence "
                                             "features (counts, first change, first/last value, "
                                             "first time of each value)")
            self._nb.prepare(probe0, probe1)

    def update(self, outputs: np.ndarray, label: int) -> None:
        if self._ok and self._nb is not None:
            self._nb.update(outputs, label)

    def finish(self) -> list[NaiveBayesScorer]:
        if not self._ok or self._nb is None:
            return []
        return self._nb.finish()


# ----------------------------------------------------------------------------------------------
# Wrappers of the engine's original statistics, and the choice
# ----------------------------------------------------------------------------------------------

@dataclass
class _Fixed:
    """A statistic that needs no fitting (identity)."""

    scorer: Any

    def prepare(self, probe0: np.ndarray, probe1: np.ndarray) -> None:
        pass

    def update(self, outputs: np.ndarray, label: int) -> None:
        pass

    def finish(self) -> list[Any]:
        return [self.scorer]


@dataclass
class _Wrapped:
    """A single-scorer streaming fitter of :mod:`dpaudit.audits.statistics`."""

    fitter: Any

    def prepare(self, probe0: np.ndarray, probe1: np.ndarray) -> None:
        pass

    def update(self, outputs: np.ndarray, label: int) -> None:
        self.fitter.update(outputs, label)

    def finish(self) -> list[Any]:
        return [self.fitter.finish()]


@dataclass
class Candidate:
    """One family member: its fitter and whether its scores depend on the fit split."""

    name: str
    fitter: Any
    fitted: bool = True


def check_statistics(statistics: Sequence[str] | None) -> tuple[str, ...] | None:
    """Validate ``audit(..., statistics=...)``: None (automatic) or names from
    :data:`STATISTIC_NAMES`."""
    if statistics is None:
        return None
    if isinstance(statistics, str):
        statistics = (statistics,)
    try:
        names = tuple(statistics)
    except TypeError as exc:
        raise TypeError("statistics must be a sequence of names from "
                        f"{', '.join(STATISTIC_NAMES)}") from exc
    if not names:
        raise ValueError("statistics must name at least one statistic")
    for s in names:
        if s not in STATISTIC_NAMES:
            raise ValueError(f"statistics: unknown statistic {s!r}; allowed: "
                             f"{', '.join(STATISTIC_NAMES)}")
    return names


def candidates_for(dimension: int, statistics: tuple[str, ...] | None) -> list[Candidate]:
    """The family compared for continuous outputs of flattened ``dimension``.

    Scalars: identity and histogram ratios by default; vectors: linear discriminant, naive Bayes,
    location shift, logistic regression, sequence features. ``statistics`` restricts or extends the family (names
    that do not apply to the output shape are ignored; if none applies, ValueError).
    """
    scalar = dimension == 1
    names = statistics if statistics is not None else (DEFAULT_SCALAR if scalar
                                                       else DEFAULT_VECTOR)
    out: list[Candidate] = []
    for s in names:
        if s == "identity" and scalar:
            out.append(Candidate(s, _Fixed(IdentityScorer()), fitted=False))
        elif s == "histogram" and scalar:
            out.append(Candidate(s, HistogramRatioFitter()))
        elif s == "linear" and not scalar:
            out.append(Candidate(s, _Wrapped(LinearDiscriminantFitter())))
        elif s == "naive-bayes" and not scalar:
            out.append(Candidate(s, NaiveBayesFitter()))
        elif s == "location-shift" and not scalar:
            out.append(Candidate(s, LocationShiftFitter()))
        elif s == "logistic":
            out.append(Candidate(s, LogisticFitter()))
        elif s == "sequence" and not scalar:
            out.append(Candidate(s, SequenceFeatureFitter()))
        elif s == "pattern" and not scalar:
            # Imported here: pattern_statistics builds on this module's atoms and smoothing.
            from dpaudit.audits.pattern_statistics import PatternHistogramFitter
            out.append(Candidate(s, PatternHistogramFitter()))
        elif s in ("gradient-boosting", "knn"):
            out.append(Candidate(s, SklearnClassifierFitter(kind=s)))
    if not out:
        raise ValueError(f"statistics={list(names)} has no statistic for "
                         f"{'scalar' if scalar else 'vector'} outputs")
    # The classical statistic (identity, linear discriminant) leads whatever order the names came
    # in: choose() keeps candidate 0 unless a challenger is ahead by its margin.
    out.sort(key=lambda c: c.name not in ("identity", "linear"))
    return out


@dataclass(frozen=True)
class Choice:
    """The statistic chosen on the selection split, with every candidate's projected bound."""

    index: int
    scorer: Any
    fitted: bool
    table: tuple[dict[str, Any], ...]


#: A learned statistic replaces the engine's classical one (the first candidate: the identity for
#: scalars, the linear discriminant for vectors) only if its plug-in test bound is higher by more
#: than this many standard errors of the difference (delta method on the selection counts of the
#: two events). Projections of close candidates differ mostly by selection noise, and the classical
#: statistic is the better-understood choice when they are close: on Laplace eps = 1 at 10^6
#: runs, taking the largest projection picked a 128-bin histogram (test bound 0.949) over the
#: identity (0.993). Only power is at stake; validity comes from the untouched test split.
SWITCH_MARGIN_SE = 1.0


def _log_ratio_se(r: RankedEvent) -> float:
    """Delta-method standard error of ``ln(p / q)`` from an event's selection counts."""
    cp, cq = (r.count1, r.count0) if r.event.numerator == 1 else (r.count0, r.count1)
    npp, nq = (r.nobs1, r.nobs0) if r.event.numerator == 1 else (r.nobs0, r.nobs1)
    p, q = (cp + 0.5) / (npp + 1.0), (cq + 0.5) / (nq + 1.0)
    return math.sqrt((1 - p) / (npp * p) + (1 - q) / (nq * q))


def _difference_se(a: RankedEvent, b: RankedEvent, scores_a: tuple[np.ndarray, np.ndarray],
                   scores_b: tuple[np.ndarray, np.ndarray]) -> float:
    """Delta-method standard error of ``ln(p_a / q_a) - ln(p_b / q_b)`` for two events counted on
    the SAME selection runs (``scores_a[k]``, ``scores_b[k]``: the two statistics' scores of the
    runs on input ``k``, row-aligned). Each log ratio is ``+-ln(rate on input k)`` summed over
    k; on one input ``Var(ln ra - ln rb) = ((1 - ra)/ra + (1 - rb)/rb - 2 (rab - ra rb)/(ra rb)) / n``
    with ``rab`` the rate of both events, so events that mostly coincide differ by little noise
    (treating them as independent, as :func:`_log_ratio_se` does, overstates it)."""
    var = 0.0
    for k in (0, 1):
        ia = a.event.indicator(scores_a[k])
        ib = b.event.indicator(scores_b[k])
        n = ia.size
        if n == 0 or ib.size != n:
            return math.hypot(_log_ratio_se(a), _log_ratio_se(b))
        sa = 1.0 if a.event.numerator == k else -1.0
        sb = 1.0 if b.event.numerator == k else -1.0
        ra = (np.count_nonzero(ia) + 0.5) / (n + 1.0)
        rb = (np.count_nonzero(ib) + 0.5) / (n + 1.0)
        rab = np.count_nonzero(ia & ib) / n
        cov = (rab - ra * rb) / (ra * rb)
        var += ((1 - ra) / ra + (1 - rb) / rb - 2 * sa * sb * cov) / n
    return math.sqrt(max(var, 0.0))


def plug_in_test_bound(r: RankedEvent, n_test: int, *, alpha: float, delta: float) -> float:
    """The bound the test split (``n_test`` runs per input, one-sided level ``alpha`` per rate)
    would give the event ``r`` if its rates were its selection-split rates (Wilson
    approximation; falls back to ``delta = 0`` like the sweep when ``p_lo <= delta``)."""
    cp, npp = (r.count1, r.nobs1) if r.event.numerator == 1 else (r.count0, r.nobs0)
    cq, nq = (r.count0, r.nobs0) if r.event.numerator == 1 else (r.count1, r.nobs1)
    # The projection at selection level 1/2: a Wilson bound at level 1/2 is the rate itself.
    return projected_log_ratio(cp, npp, cq, nq, n_test, n_test, alpha=alpha, delta=delta,
                               candidates=1, selection_alpha=0.5)


def choose(scorers: Sequence[Any], fitted: Sequence[bool], select0: Sequence[np.ndarray],
           select1: Sequence[np.ndarray], *, n_test: int, alpha: float, delta: float,
           scalar: bool) -> Choice:
    """Pick the statistic whose best selection-split event promises the highest test bound.

    ``select0[i]``/``select1[i]`` are the selection-split scores of ``scorers[i]`` on data0/data1;
    ``scorers[0]`` is the engine's classical statistic when the family has it
    (:func:`candidates_for` puts it first). Each statistic's best event is found by
    :func:`~dpaudit.audits.statistics.sweep_thresholds` (epsilon objective): the event the engine
    counts on the test split if that statistic is chosen, when it evaluates one event without
    pooled or hedge events (those are added after the choice, from the same selection split).

    Vector outputs (``scalar`` false; the classical statistic is the linear discriminant): the statistics
    are compared by :func:`plug_in_test_bound`, the bound the test split would give that event at
    its selection-split rates. (The sweep's own projection, which first lowers each selection rate to
    a conservative bound at level ``alpha / C**0.25`` and is kept in the table as
    ``projected_log_ratio_bound``, is made to rank thousands of thresholds of one statistic; used
    to compare statistics it charges the selection split's noise twice, most for the rare,
    strong events that the test split, 18 times larger, resolves well: on DP-Sniper's SVT3 and
    numerical SVT at 10^7 runs it kept the linear discriminant, test bounds 0.138 and 0.027,
    over the location-shift statistic, 0.164 and 0.043.) The selection noise of the comparison
    itself is handled by the margin: the best challenger replaces ``scorers[0]`` only if it is
    ahead by more than :data:`SWITCH_MARGIN_SE` standard errors of the difference of the two
    events' log ratios, computed on the same selection runs (:func:`_difference_se`).

    Scalar outputs (``scalar`` true; the classical statistic, the identity, is not fitted, and its event is
    chosen on all training runs, twice the runs compared here): the projection and a margin
    with the events treated as independent, as before. There the identity's tail events are
    what the histograms approximate, and the in-sample plug-in favours the histogram that got
    luckiest on the selection split (Laplace eps = 1 at 10^6 runs, seed 0: a 64-bin histogram
    at 1.029 over the identity at 1.005, and the test bound fell from 0.993 to 0.987).
    All of this uses the selection split only.
    """
    sweeps = [sweep_thresholds(select0[i], select1[i], n_test0=n_test, n_test1=n_test,
                               alpha=alpha, delta=delta, objective="epsilon")
              for i in range(len(scorers))]
    tops = [sw.best(1) for sw in sweeps]
    n_max = max([sw.thresholds.size for sw in sweeps] + [1])
    projected, values = [], []
    for i, top in enumerate(tops):
        if not top:
            projected.append(-math.inf)
            values.append(-math.inf)
            continue
        r = top[0]
        cp, npp = (r.count1, r.nobs1) if r.event.numerator == 1 else (r.count0, r.nobs0)
        cq, nq = (r.count0, r.nobs0) if r.event.numerator == 1 else (r.count1, r.nobs1)
        projected.append(float(projected_log_ratio(cp, npp, cq, nq, n_test, n_test, alpha=alpha,
                                                   delta=delta, candidates=4 * n_max)))
        values.append(plug_in_test_bound(r, n_test, alpha=alpha, delta=delta))
    # Scalars: compare by the projection and the independent-events margin, the rule validated
    # on Laplace (see SWITCH_MARGIN_SE). Decided by the output's shape, not by which candidate
    # came first.
    conservative = scalar
    rank = projected if conservative else values
    best_i = 0
    challengers = [i for i in range(1, len(scorers)) if rank[i] > -math.inf]
    if challengers:
        c = max(challengers, key=lambda i: (rank[i], -i))
        if not tops[0] or rank[0] == -math.inf:
            best_i = c if rank[c] > -math.inf else 0
        else:
            se = (math.hypot(_log_ratio_se(tops[0][0]), _log_ratio_se(tops[c][0])) if conservative
                  else _difference_se(tops[0][0], tops[c][0], (select0[0], select1[0]),
                                      (select0[c], select1[c])))
            if rank[c] > rank[0] + SWITCH_MARGIN_SE * se:
                best_i = c
    table = []
    for i, sc in enumerate(scorers):
        info = sc.to_dict() if hasattr(sc, "to_dict") else {"name": repr(sc)}
        v, w = projected[i], values[i]
        table.append({"name": info.get("name", ""),
                      "projected_log_ratio_bound": v if math.isfinite(v)
                      else ("-inf" if v < 0 else "inf"),
                      "plug_in_test_bound": w if math.isfinite(w)
                      else ("-inf" if w < 0 else "inf"),
                      "chosen": i == best_i})
    return Choice(best_i, scorers[best_i], bool(fitted[best_i]), tuple(table))
