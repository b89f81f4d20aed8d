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
* :class:`LogisticFitter` (vectors): logistic regression (scikit-learn) on basis features
  ``[x, |x - m0|, |x - m1|, ||x - m0||_2, ||x - m1||_2]`` with ``m0``, ``m1`` the coordinate-wise
  fit-split medians of the two inputs. Its span contains the exact log likelihood ratio of a shift
  under Gaussian noise (linear), product Laplace noise (``|x_j - m0_j| - |x_j - m1_j|``) and
  l2-Laplace noise (``||x - m0|| - ||x - m1||``); in the spirit of DP-Sniper's classifier and of
  classifier-based auditors. :class:`SklearnClassifierFitter` gives a gradient-boosted or k-NN
  classifier (option, not in the default family: costly to evaluate on 10^6 test runs).
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
from scipy import stats
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
    "FeatureLinearScorer",
    "LogisticFitter",
    "SklearnClassifierFitter",
    "SequenceFeatureFitter",
    "Candidate",
    "Choice",
    "candidates_for",
    "choose",
    "check_statistics",
]

#: Names accepted by ``audit(..., statistics=[...])``.
STATISTIC_NAMES = ("identity", "histogram", "linear", "naive-bayes", "logistic", "sequence",
                   "gradient-boosting", "knn")
#: Default family for scalar continuous outputs.
DEFAULT_SCALAR = ("identity", "histogram")
#: Default family for vector / trajectory outputs.
DEFAULT_VECTOR = ("linear", "naive-bayes", "logistic", "sequence")

#: A value that makes up at least this fraction of the pooled probe of a coordinate is an atom
#: (a discrete value with a bin of its own), e.g. a sentinel "no value released".
ATOM_FRACTION = 0.01
#: Histogram resolutions (bins per scalar) compared for scalar outputs; each needs about
#: ``MIN_PER_BIN`` fit runs per bin and input to be used.
SCALAR_BINS = (16, 64)
MIN_PER_BIN = 40
#: Bins per coordinate of the naive-Bayes statistic (continuous part).
NB_BINS = 16
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

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        x = (self.transform(outputs) if self.transform is not None
             else flatten_outputs(outputs)).astype(np.float64, copy=False)
        s = np.zeros(x.shape[0])
        for j in self.used:
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

    def _x(self, outputs: np.ndarray) -> np.ndarray:
        return (self.transform(outputs) if self.transform is not None
                else flatten_outputs(outputs)).astype(np.float64, copy=False)

    def prepare(self, probe0: np.ndarray, probe1: np.ndarray) -> None:
        pooled = np.concatenate([self._x(probe0), self._x(probe1)])
        self._binnings = [_Binning.from_values(pooled[:, j], self.bins)
                          for j in range(pooled.shape[1])]
        self._counts = [np.zeros((2, b.size)) for b in self._binnings]

    def update(self, outputs: np.ndarray, label: int) -> None:
        if self._binnings is None:
            raise RuntimeError("NaiveBayesFitter.prepare must be called before update")
        x = self._x(outputs)
        for j, b in enumerate(self._binnings):
            self._counts[j][label] += np.bincount(b.index(x[:, j]), minlength=b.size)

    def finish(self) -> list[NaiveBayesScorer]:
        if self._binnings is None or not self._counts:
            raise ValueError("the naive-Bayes statistic needs fit samples from both inputs")
        lr = tuple(_smoothed_log_ratio(c[0], c[1]) for c in self._counts)
        d = len(self._binnings)
        full = NaiveBayesScorer(tuple(self._binnings), lr, np.arange(d), self.transform, self.name)
        pvals = np.array([_g_test(c) for c in self._counts])
        keep = np.flatnonzero(pvals < 1.0 / max(d, 1))
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


# ----------------------------------------------------------------------------------------------
# Vectors: classifier scores
# ----------------------------------------------------------------------------------------------

def _basis(x: np.ndarray, m0: np.ndarray, m1: np.ndarray) -> np.ndarray:
    a0, a1 = np.abs(x - m0), np.abs(x - m1)
    n0 = np.sqrt(np.einsum("ij,ij->i", x - m0, x - m0))[:, None]
    n1 = np.sqrt(np.einsum("ij,ij->i", x - m1, x - m1))[:, None]
    return np.concatenate([x, a0, a1, n0, n1], axis=1)


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
        f = (_basis(x, self.m0, self.m1) - self.mean) / self.scale
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
    """Logistic regression (scikit-learn) on :func:`_basis` features of the first fit rows."""

    def finish(self) -> list[FeatureLinearScorer]:
        from sklearn.linear_model import LogisticRegression

        x0, x1 = self.rows()
        m0, m1 = np.median(x0, axis=0), np.median(x1, axis=0)
        f = np.concatenate([_basis(x0, m0, m1), _basis(x1, m0, m1)])
        y = np.r_[np.zeros(x0.shape[0]), np.ones(x1.shape[0])]
        mean = f.mean(axis=0)
        scale = f.std(axis=0)
        scale = np.where(scale > 0, scale, 1.0)
        z = (f - mean) / scale
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
    logistic regression, sequence features. ``statistics`` restricts or extends the family (names
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
        elif s == "logistic":
            out.append(Candidate(s, LogisticFitter()))
        elif s == "sequence" and not scalar:
            out.append(Candidate(s, SequenceFeatureFitter()))
        elif s in ("gradient-boosting", "knn"):
            out.append(Candidate(s, SklearnClassifierFitter(kind=s)))
    if not out:
        raise ValueError(f"statistics={list(names)} has no statistic for "
                         f"{'scalar' if scalar else 'vector'} outputs")
    return out


@dataclass(frozen=True)
class Choice:
    """The statistic chosen on the selection split, with every candidate's projected bound."""

    index: int
    scorer: Any
    fitted: bool
    table: tuple[dict[str, Any], ...]


#: A learned statistic replaces the engine's classical one (the first candidate: the identity for
#: scalars, the linear discriminant for vectors) only if its projected bound is higher by more than
#: this many standard errors of the difference (delta method on the selection counts of the two
#: events). Projections of close candidates differ mostly by selection noise, and the classical
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


def choose(scorers: Sequence[Any], fitted: Sequence[bool], select0: Sequence[np.ndarray],
           select1: Sequence[np.ndarray], *, n_test: int, alpha: float, delta: float) -> Choice:
    """Pick the statistic whose best selection-split event projects the highest test bound.

    ``select0[i]``/``select1[i]`` are the selection-split scores of ``scorers[i]`` on data0/data1;
    ``scorers[0]`` is the engine's classical statistic. Each statistic's best event is found by
    :func:`~dpaudit.audits.statistics.sweep_thresholds` (epsilon objective); the events are then
    compared at one common selection penalty (that of the statistic with the most thresholds), so
    a coarse statistic (a histogram has few distinct scores) is not favoured merely for comparing
    fewer thresholds. The best challenger replaces ``scorers[0]`` only if it is ahead by more than
    :data:`SWITCH_MARGIN_SE` standard errors. All of this uses the selection split only.
    """
    sweeps = [sweep_thresholds(select0[i], select1[i], n_test0=n_test, n_test1=n_test,
                               alpha=alpha, delta=delta, objective="epsilon")
              for i in range(len(scorers))]
    tops = [sw.best(1) for sw in sweeps]
    n_max = max([sw.thresholds.size for sw in sweeps] + [1])
    values = []
    for i, top in enumerate(tops):
        if not top:
            values.append(-math.inf)
            continue
        r = top[0]
        cp, npp = (r.count1, r.nobs1) if r.event.numerator == 1 else (r.count0, r.nobs0)
        cq, nq = (r.count0, r.nobs0) if r.event.numerator == 1 else (r.count1, r.nobs1)
        values.append(float(projected_log_ratio(cp, npp, cq, nq, n_test, n_test, alpha=alpha,
                                                delta=delta, candidates=4 * n_max)))
    best_i = 0
    challengers = [i for i in range(1, len(scorers)) if values[i] > -math.inf]
    if challengers:
        c = max(challengers, key=lambda i: (values[i], -i))
        if not tops[0] or values[0] == -math.inf:
            best_i = c if values[c] > -math.inf else 0
        else:
            se = math.hypot(_log_ratio_se(tops[0][0]), _log_ratio_se(tops[c][0]))
            if values[c] > values[0] + SWITCH_MARGIN_SE * se:
                best_i = c
    table = []
    for i, sc in enumerate(scorers):
        info = sc.to_dict() if hasattr(sc, "to_dict") else {"name": repr(sc)}
        v = values[i]
        table.append({"name": info.get("name", ""),
                      "projected_log_ratio_bound": v if math.isfinite(v)
                      else ("-inf" if v < 0 else "inf"),
                      "chosen": i == best_i})
    return Choice(best_i, scorers[best_i], bool(fitted[best_i]), tuple(table))
