"""The whitened mean-difference direction of a correlated vector release, from few runs.

For a release ``y = m_b + A z`` with Gaussian noise the most powerful test is a halfspace along
``Sigma^{-1} (m_1 - m_0)`` (Neyman-Pearson; Dong, Roth & Su 2022, Cor. 3.3). The plug-in linear
discriminant fails on learners' releases at audit budgets: degenerate coordinates make the sample
covariance singular, and covariance and mean-difference noise swamp the shift. Here coordinates
constant on both inputs' probes are dropped, the covariance is the Ledoit-Wolf shrinkage estimate
(J. Multivariate Anal. 88, 2004) from streamed moments (:func:`pooled_ledoit_wolf`), and the mean
difference is whitened by its lower Cholesky factor (a causal release's innovations, few of which
a changed input moves) and hard-thresholded at ``sqrt(2 ln p)`` standard errors (Donoho &
Johnstone, Biometrika 81, 1994). :class:`WhitenedDirectionFitter` emits that score and, when it
differs, the unthresholded one; nothing unless every kept coordinate is continuous, the dimension
is at most :data:`MAX_DIRECTION_DIM` and some probe correlation is significant. Everything is fixed
on the probe and fit split: a wrong choice costs power, never validity.

The argument, its measurements and the conditions in full: docs/blackbox-notes.md#whitened-direction
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.special import ndtr

from dpaudit.blackbox.confidence import log_ratio_lower_bound, wilson_lower, wilson_upper
from dpaudit.blackbox.statistic_protocol import Fitter, Scorer
from dpaudit.blackbox.statistics import (PooledEvent, RankedEvent, ThresholdEvent,
                                         flatten_outputs, projected_log_ratio)

__all__ = ["WhitenedDirectionFitter", "DirectionScorer", "GaussianEventScorer", "StreamedMoments",
           "pooled_ledoit_wolf", "sparse_direction", "gaussian_shift_cut",
           "whitened_excess_kurtosis", "MAX_DIRECTION_DIM", "DIRECTION_MIN_Z",
           "MAX_EXCESS_KURTOSIS"]

#: Largest flattened dimension fitted (its moments are ``p x p`` per input; its Cholesky
#: factor is ``O(p^3)``).
MAX_DIRECTION_DIM = 1024
#: Offered only if some probe correlation exceeds this many standard errors ``1 / sqrt(n)``
#: (the gate of ``coordinate_statistics.WhitenedShiftFitter``: Bonferroni-sized for up to
#: ~10^4 coordinate pairs at level 10^-6).
DIRECTION_MIN_Z = 6.0
#: Offered only if the probe's whitened coordinates look Gaussian: their mean excess kurtosis
#: within this of 0 (Laplace innovations: 3; its standard error under a Gaussian law is
#: ``sqrt(24 / (2 n p))`` for ``n`` probe runs per input and ``p`` coordinates, below 0.08 at the
#: engine's 4096 probe runs).
MAX_EXCESS_KURTOSIS = 1.0
#: Fewest probe runs per input (per kept coordinate the standardisation needs a deviation).
MIN_PROBE_ROWS = 16


@dataclass
class StreamedMoments:
    """Per-input moments of rows ``u`` (already centred near their mean and standardised), enough
    for the pooled sample covariance and its Ledoit-Wolf shrinkage: ``n``, ``sum u``,
    ``sum u u^T``, ``sum a``, ``sum a u`` and ``sum a^2`` with ``a = ||u||^2``."""

    dim: int
    n: int = 0
    s1: np.ndarray = field(init=False)
    s2: np.ndarray = field(init=False)
    sa: float = 0.0
    sau: np.ndarray = field(init=False)
    saa: float = 0.0

    def __post_init__(self) -> None:
        self.s1 = np.zeros(self.dim)
        self.s2 = np.zeros((self.dim, self.dim))
        self.sau = np.zeros(self.dim)

    def add(self, u: np.ndarray) -> None:
        a = np.einsum("ij,ij->i", u, u)
        self.n += u.shape[0]
        self.s1 += u.sum(axis=0)
        self.s2 += u.T @ u
        self.sa += float(a.sum())
        self.sau += a @ u
        self.saa += float(a @ a)

    def mean(self) -> np.ndarray:
        return self.s1 / self.n

    def scatter(self) -> np.ndarray:
        """``sum_k (u_k - mean)(u_k - mean)^T``."""
        m = self.mean()
        return self.s2 - self.n * np.outer(m, m)

    def fourth(self) -> float:
        """``sum_k ||u_k - mean||^4``, expanded in the streamed moments: with ``v`` the mean and
        ``b = u^T v``, ``||u - v||^2 = a - 2 b + |v|^2``, whose square sums to
        ``sum a^2 + 4 v^T S2 v + n |v|^4 - 4 v^T (sum a u) + 2 |v|^2 sum a - 4 |v|^2 v^T s1``."""
        v = self.mean()
        vv = float(v @ v)
        return (self.saa + 4.0 * float(v @ self.s2 @ v) + self.n * vv * vv
                - 4.0 * float(v @ self.sau) + 2.0 * vv * self.sa - 4.0 * vv * float(v @ self.s1))


def pooled_ledoit_wolf(moments: tuple[StreamedMoments, StreamedMoments]
                       ) -> tuple[np.ndarray, float]:
    """Ledoit-Wolf shrinkage estimate of the pooled within-input covariance and its intensity.

    With ``w_k`` the rows centred at their own input's mean (``N = n_0 + n_1`` rows),
    ``S = sum_k w_k w_k^T / N``, ``m = tr(S) / p``, ``d^2 = ||S - m I||_F^2`` and
    ``b^2 = min(d^2, sum_k ||w_k w_k^T - S||_F^2 / N^2)``, where the sum is
    ``sum_k ||w_k||^4 - N ||S||_F^2``; the estimate is ``(b^2/d^2) m I + (1 - b^2/d^2) S``
    (Ledoit & Wolf 2004, Lemma 3.2 and Theorem 3.4; what
    ``sklearn.covariance.ledoit_wolf(w, assume_centered=True)`` computes from the rows)."""
    big_n = moments[0].n + moments[1].n
    if moments[0].n < 2 or moments[1].n < 2:
        raise ValueError("pooled_ledoit_wolf needs at least 2 rows per input")
    s = (moments[0].scatter() + moments[1].scatter()) / big_n
    p = s.shape[0]
    m = float(np.trace(s)) / p
    d2 = float(np.sum((s - m * np.eye(p)) ** 2))
    fro2 = float(np.sum(s * s))
    b2 = (moments[0].fourth() + moments[1].fourth() - big_n * fro2) / big_n ** 2
    b2 = min(max(b2, 0.0), d2)
    shrink = b2 / d2 if d2 > 0 else 1.0
    return shrink * m * np.eye(p) + (1.0 - shrink) * s, shrink


def whitened_excess_kurtosis(u0: np.ndarray, u1: np.ndarray) -> float:
    """Mean over coordinates of the excess kurtosis of rows whitened by the Cholesky factor of
    their pooled Ledoit-Wolf covariance (each input centred at its own mean): about 0 for a
    linear image of Gaussian noise, 3 for Laplace innovations."""
    mom = (StreamedMoments(u0.shape[1]), StreamedMoments(u1.shape[1]))
    mom[0].add(u0)
    mom[1].add(u1)
    cov, _ = pooled_ledoit_wolf(mom)
    chol = np.linalg.cholesky(cov)
    w = np.concatenate([np.linalg.solve(chol, (u - u.mean(axis=0)).T).T for u in (u0, u1)])
    m2 = np.mean(w * w, axis=0)
    m4 = np.mean(w ** 4, axis=0)
    return float(np.mean(m4 / m2 ** 2 - 3.0))


def sparse_direction(shift: np.ndarray, se: float) -> np.ndarray:
    """Hard threshold of a whitened shift estimate (noise ``N(0, se^2)`` per coordinate) at the
    universal threshold ``se sqrt(2 ln p)`` (Donoho & Johnstone 1994): coordinates below it set to
    0, the others kept as they are."""
    v = np.asarray(shift, dtype=np.float64)
    if v.ndim != 1 or v.size == 0:
        raise ValueError("shift must be a non-empty 1-D array")
    if not (se > 0 and math.isfinite(se)):
        raise ValueError(f"se must be positive and finite, got {se!r}")
    tau = se * math.sqrt(2.0 * math.log(max(v.size, 2)))
    return np.where(np.abs(v) > tau, v, 0.0)


#: Grid of the standardised cut of :func:`gaussian_shift_cut` (step, largest value).
CUT_STEP, CUT_MAX = 0.005, 10.0


def gaussian_shift_cut(mu: float, n_test: int, alpha: float, delta: float, pooled: bool
                       ) -> tuple[float, float]:
    """The cut ``c >= 0`` of the best mirrored pair of halfspaces of a Gaussian shift ``mu``
    (scores ``N(-mu/2, 1)`` on one input, ``N(mu/2, 1)`` on the other; events ``t >= c`` and
    ``t <= -c``), by the bound the test split would give at its model rates: numerator rate
    ``Phibar(c - mu/2)``, denominator ``Phibar(c + mu/2)``, Wilson ends at one-sided level
    ``alpha`` on ``n_test`` runs (``2 n_test`` for the pooled mirrored pair of a ``delta > 0``
    claim, which the symmetric law makes as strong as each half), ``ln((p - delta) / q)``
    (falling back to ``delta = 0`` where ``p <= delta``, as the engine's sweep does). Returns
    (cut, the model's projected bound). The oracle of ``benchmarks/oracle_ratio.py`` chooses its
    event the same way from the exact law."""
    if not (mu > 0 and math.isfinite(mu)):
        raise ValueError(f"mu must be positive and finite, got {mu!r}")
    c = np.arange(0.0, CUT_MAX + CUT_STEP / 2, CUT_STEP)
    n = 2 * n_test if pooled and delta > 0 else n_test
    p, q = ndtr(mu / 2 - c), ndtr(-c - mu / 2)
    lo, hi = wilson_lower(p, n, alpha), wilson_upper(q, n, alpha)
    with np.errstate(divide="ignore", invalid="ignore"):
        v = np.asarray(log_ratio_lower_bound(lo, hi, delta), dtype=np.float64)
        v0 = np.asarray(log_ratio_lower_bound(lo, hi, 0.0), dtype=np.float64)
    v = np.where(np.isfinite(v), v, v0)
    v = np.where(np.isnan(v), -np.inf, v)
    i = int(np.argmax(v))
    return float(c[i]), float(v[i])


@dataclass(frozen=True)
class GaussianEventScorer(Scorer):
    """``+1`` if ``inner(x) >= cut``, ``-1`` if ``inner(x) <= -cut``, else 0: the mirrored pair of
    halfspaces along a fitted direction, its cut fixed on the fit split from the Gaussian-shift
    model of the score (:func:`gaussian_shift_cut`); the engine's events on it are the two
    halfspaces, their pooled pair and complements, ranked at their selection rates
    (``events_fixed_on_fit``: no threshold is chosen on the selection split). Its Gaussian-DP
    event is one of these tail events, so its ``mu`` bound is looser than a central halfspace's
    (a four-level score with the central halfspace added gave the ``mu`` back but let a lucky
    single tail win the selection over the pooled pair on DP-FTRL: kept out).

    For a claim whose audit pools mirrored pairs the engine tests one event only, the pair
    :meth:`mirrored_pair` (``{+1}`` on data1 with ``{-1}`` on data0): the score's law is that of
    a Gaussian shift, symmetric under swapping the inputs, so on the model the pair is as strong
    as each half on twice the runs. Ranking it against its own halves on the selection split
    chose a half on 3 of 5 DP-FTRL audits at Delta = 2L (2 x 10^5 runs; selection counts near
    40 against 24, whose log ratio is known to +-0.25, against the pair's advantage of about
    0.04), and the hedge rankings added a complement that halved the level; both cost about a
    tenth of the bound (docs/benchmarks.md, the learner table)."""

    inner: "DirectionScorer"
    cut: float
    mu_fit: float
    events_fixed_on_fit: bool = True

    def mirrored_pair(self, scores0: np.ndarray, scores1: np.ndarray, *, n_test: int,
                      alpha: float, delta: float) -> RankedEvent:
        """The pooled mirrored pair of the two halfspaces, ranked on the selection scores.

        The event is ``PooledEvent(score > 0 with numerator data1, score <= -1 with numerator
        data0)``: both halfspaces in the fit split's orientation (the direction is
        ``m_1 - m_0``, so data1 scores high), fixed on the fit split. Its rank is the sweep's
        value of a pooled pair whose event was fixed on the fit split
        (:func:`~dpaudit.blackbox.statistics.projected_log_ratio` at selection level 1/2 on the
        pooled counts over ``n_0 + n_1`` selection runs, projected to ``2 n_test`` test runs).

        Parameters
        ----------
        scores0, scores1 : array, shape (n0,), (n1,)
            This scorer's values on the selection runs of data0 and data1.
        n_test : int
            Test runs per input.
        alpha : float
            One-sided level of each test interval.
        delta : float
            The claim's delta.
        """
        s0 = np.asarray(scores0, dtype=np.float64)
        s1 = np.asarray(scores1, dtype=np.float64)
        if s0.ndim != 1 or s1.ndim != 1 or s0.size == 0 or s1.size == 0:
            raise ValueError("scores0 and scores1 must be non-empty 1-D arrays")
        if n_test < 1:
            raise ValueError(f"n_test must be a positive integer, got {n_test!r}")
        event = PooledEvent(ThresholdEvent("upper", 0.0, 1), ThresholdEvent("lower", -1.0, 0))
        kp = int(np.count_nonzero(s1 > 0) + np.count_nonzero(s0 <= -1))
        kq = int(np.count_nonzero(s0 > 0) + np.count_nonzero(s1 <= -1))
        n = s0.size + s1.size
        rank = projected_log_ratio(kp, n, kq, n, 2 * n_test, 2 * n_test, alpha=alpha,
                                   delta=delta, candidates=1, selection_alpha=0.5)
        return RankedEvent(event, kq, kp, n, n, rank)

    @property
    def name(self) -> str:
        return f"{self.inner.name}, Gaussian-DP halfspaces cut on the fit split"

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        s = self.inner(outputs)
        return (s >= self.cut).astype(np.float64) - (s <= -self.cut).astype(np.float64)

    def to_dict(self) -> dict[str, Any]:
        d = dict(self.inner.to_dict())
        d["name"] = self.name
        d["fingerprint"] = list(d["fingerprint"]) + [float(self.cut)]
        d["description"] = (f"+1 if the score >= {self.cut:.6g}, -1 if <= {-self.cut:.6g}, else "
                            "0; the cut the best mirrored pair of halfspaces of a Gaussian shift "
                            f"of the fit split's debiased separation {self.mu_fit:.4g}; the "
                            "score: " + d["description"])
        return d


@dataclass(frozen=True)
class DirectionScorer(Scorer):
    """The linear score ``<weights, x - centre>`` of the flattened output ``x``: a direction in
    whitened coordinates mapped back to the output (``weights = D^{-1} L^{-T} w`` on the kept
    coordinates, 0 on the dropped ones)."""

    weights: np.ndarray
    centre: np.ndarray
    kept: int
    nonzero: int
    shrinkage: float
    name: str

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        flat = flatten_outputs(outputs).astype(np.float64, copy=False)
        # einsum, not BLAS (as LinearScorer: BLAS worker threads slow the next sampling chunk)
        return np.einsum("ij,j->i", flat, self.weights) - float(self.centre @ self.weights)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "dimension": int(self.weights.size),
                "fingerprint": [float(v) for v in np.r_[self.weights, self.centre]],
                "description": (f"{self.name}: linear score along the mean difference of the fit "
                                "split whitened by the Cholesky factor (release order) of the "
                                "Ledoit-Wolf shrinkage covariance (intensity "
                                f"{self.shrinkage:.3g}) of {self.kept} non-constant output "
                                f"coordinates; {self.nonzero} whitened coordinates kept")}


@dataclass
class WhitenedDirectionFitter(Fitter):
    """The whitened mean-difference direction with a shrinkage covariance (module text).

    ``prepare`` decides from the probes whether the statistic applies (if not, ``update`` is a
    no-op and ``finish`` emits nothing) and fixes the kept coordinates, the reference centre and
    the per-coordinate scale; ``update`` streams the fit split's moments; ``finish`` emits the
    thresholded direction and, where it differs, the unthresholded one."""

    max_dim: int = MAX_DIRECTION_DIM
    min_z: float = DIRECTION_MIN_Z
    max_kurtosis: float = MAX_EXCESS_KURTOSIS
    #: the test the engine will run (``configure``); only the Gaussian event's cut depends on it
    n_test: int | None = None
    alpha: float = 0.025
    delta: float = 0.0
    pooled: bool = False
    _kept: np.ndarray | None = None
    _center: np.ndarray | None = None
    _scale: np.ndarray | None = None
    _dim: int = 0
    _moments: list[StreamedMoments] = field(default_factory=list)

    def configure(self, *, n_test: int, alpha: float, delta: float, pooled: bool) -> None:
        """The test split's size per input, the one-sided level of each of its intervals, the
        claim's delta and whether mirrored pairs are pooled (power only: the cut of the Gaussian
        event)."""
        self.n_test, self.alpha, self.delta, self.pooled = int(n_test), alpha, delta, pooled

    def prepare(self, probe0: np.ndarray, probe1: np.ndarray) -> None:
        self._kept = None
        p = [flatten_outputs(q).astype(np.float64) for q in (probe0, probe1)]
        d = p[0].shape[1]
        n = min(p[0].shape[0], p[1].shape[0])
        if d < 2 or d > self.max_dim or n < MIN_PROBE_ROWS or p[1].shape[1] != d:
            return
        if not (np.all(np.isfinite(p[0])) and np.all(np.isfinite(p[1]))):
            return
        lo = np.minimum(p[0].min(axis=0), p[1].min(axis=0))
        hi = np.maximum(p[0].max(axis=0), p[1].max(axis=0))
        kept = np.flatnonzero(hi > lo)  # the others: one value on every probe run of both inputs
        if kept.size < 2:
            return
        for q in p:
            srt = np.sort(q[:, kept], axis=0)
            if np.any(srt[1:] == srt[:-1]):
                return  # atoms (or a coordinate constant on one input only): not this statistic's
        with np.errstate(over="ignore", invalid="ignore"):
            center = 0.5 * (p[0][:, kept].mean(axis=0) + p[1][:, kept].mean(axis=0))
            u = [(q[:, kept] - q[:, kept].mean(axis=0)) for q in p]
            scale = np.sqrt(0.5 * (u[0].var(axis=0) + u[1].var(axis=0)))
        if not (np.all(np.isfinite(scale)) and np.all(scale > 0) and np.all(np.isfinite(center))):
            return
        z = [v / scale for v in u]
        corr = (z[0].T @ z[0] + z[1].T @ z[1]) / (z[0].shape[0] + z[1].shape[0])
        off = np.abs(corr[~np.eye(kept.size, dtype=bool)])
        if not off.max() * math.sqrt(n) >= self.min_z:
            return
        if not abs(whitened_excess_kurtosis(z[0], z[1])) <= self.max_kurtosis:
            return  # not Gaussian-shaped: the location-shift statistics' domain (module text)
        self._kept, self._center, self._scale, self._dim = kept, center, scale, d
        self._moments = [StreamedMoments(kept.size), StreamedMoments(kept.size)]

    def update(self, outputs: np.ndarray, label: int) -> None:
        if self._kept is None:
            return
        x = flatten_outputs(outputs).astype(np.float64, copy=False)
        self._moments[label].add((x[:, self._kept] - self._center) / self._scale)

    def finish(self) -> list[DirectionScorer]:
        if self._kept is None or min(m.n for m in self._moments) < 2:
            return []
        cov, shrink = pooled_ledoit_wolf((self._moments[0], self._moments[1]))
        chol = np.linalg.cholesky(cov)  # positive definite: shrinkage toward m I, m > 0
        m0, m1 = self._moments[0].mean(), self._moments[1].mean()
        shift = np.linalg.solve(chol, m1 - m0)  # L^{-1} (m1 - m0): the whitened shift
        se = math.sqrt(1.0 / self._moments[0].n + 1.0 / self._moments[1].n)
        sparse = sparse_direction(shift, se)
        directions = []
        if np.any(sparse != 0):
            directions.append((sparse, "whitened mean-difference direction (thresholded)"))
        if not np.array_equal(sparse, shift):
            directions.append((shift, "whitened mean-difference direction (shrinkage "
                                      "discriminant)"))
        out: list[Any] = []
        mid = 0.5 * (m0 + m1)
        for k, (w, name) in enumerate(directions):
            a = np.linalg.solve(chol.T, w) / self._scale  # score = a^T (x_kept - c) - ...
            weights = np.zeros(self._dim)
            weights[self._kept] = a
            centre = np.zeros(self._dim)
            centre[self._kept] = self._center + self._scale * mid
            scorer = DirectionScorer(weights, centre, int(self._kept.size),
                                     int(np.count_nonzero(w)), float(shrink), name)
            if k == 0 and np.any(sparse != 0):
                # The separation of the score on the fit split, ||w||, is biased up by the noise
                # of the kept coordinates (each adds se^2 to w^T v); its estimate of the true
                # w^T s / ||w|| subtracts it.
                norm = float(np.linalg.norm(w))
                mu = (norm ** 2 - np.count_nonzero(w) * se ** 2) / norm
                n_test = (self.n_test if self.n_test is not None
                          else 18 * min(m.n for m in self._moments))
                if mu > 0:
                    cut, _ = gaussian_shift_cut(mu, n_test, self.alpha, self.delta, self.pooled)
                    out.append(GaussianEventScorer(scorer, cut * norm, float(mu)))
            out.append(scorer)
        return out
