"""Classifier statistics: logistic regression on likelihood-ratio basis features, scikit-learn
classifiers, and the sequence-feature statistic for discrete trajectories (see
:mod:`dpaudit.blackbox.learned_statistics` for the family and its discipline).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from dpaudit.blackbox.statistic_protocol import Fitter, Scorer
from dpaudit.blackbox.statistics import (flatten_outputs)
from dpaudit.blackbox.fitters_binned import NaiveBayesFitter, NaiveBayesScorer


#: Cap on rows x features of the logistic regression's fit (per input), for time.
LOGISTIC_CELLS = 500_000
#: Values per coordinate (over the probe) up to which a vector output is a discrete sequence.
SEQUENCE_MAX_VALUES = 16

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
class FeatureLinearScorer(Scorer):
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
class _RowKeeper(Fitter):
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
class ClassifierScorer(Scorer):
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
class SequenceFeatureFitter(Fitter):
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
