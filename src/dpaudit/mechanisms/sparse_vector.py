"""Sparse vector technique: AboveThreshold (c = 1) and Sparse (c >= 1 "above" answers).

Dwork & Roth, *The Algorithmic Foundations of Differential Privacy* (2014), Sec. 3.6: Algorithm 1,
AboveThreshold (Theorem 3.23, epsilon-DP: threshold noise ``Lap(2 Delta / eps)`` once, query noise
``Lap(4 Delta / eps)`` fresh, halt at the first "above"), and Algorithm 2, Sparse (Theorem 3.25:
up to ``c`` "above" answers, ``sigma = 2 c Delta / eps`` at ``delta = 0`` and
``sqrt(32 c ln(1/delta)) Delta / eps`` otherwise, the threshold noise redrawn after every "above"
but the last). ``Delta`` bounds every query's sensitivity; with ``c = 1, delta = 0`` Sparse is
AboveThreshold. The online-learning papers use it as a stream: AFKT23 (ICML 2023) Alg 1 and
Alg 5, ``InitializeSparseVec`` with ``AddQuery`` / ``TestAboThr`` (``afkt23.txt`` Sec. 2, Lemma
2.3). Comparisons use ``>=`` as printed. Floating-point Laplace noise is not exactly DP (Mironov
2012).

Both algorithms as printed: docs/paper-readings.md#sparse-vector-technique.
"""

from __future__ import annotations

import functools
import math

import dp_accounting
import numpy as np
from scipy import integrate

from dpaudit._validation import (
    check_delta,
    check_epsilon,
    check_finite_array,
    check_generator,
    check_int,
    check_positive,
)
from dpaudit.neighbours import NeighbourRelation
from dpaudit.mechanisms.base import Mechanism, Sensitivity
from dpaudit.mechanisms.events import EpsilonDeltaDpEvent
from dpaudit.mechanisms.laplace import sample_laplace

__all__ = [
    "sparse_vector_scales",
    "AboveThreshold",
    "SparseVectorMechanism",
    "first_above_probabilities",
]


def sparse_vector_scales(epsilon: float, sensitivity: float = 1.0, max_above: int = 1,
                         delta: float = 0.0) -> tuple[float, float]:
    """``(threshold_scale, query_scale)`` of Dwork-Roth Alg 2 (Alg 1 for ``max_above = 1``).

    ``sigma = 2 c Delta / eps`` if ``delta = 0`` else ``sqrt(32 c ln(1/delta)) Delta / eps``;
    returns ``(sigma, 2 sigma)``. For ``c = 1, delta = 0``: ``(2 Delta / eps, 4 Delta / eps)``.
    """
    epsilon = check_epsilon(epsilon)
    sensitivity = check_positive(sensitivity, "sensitivity")
    c = check_int(max_above, "max_above", minimum=1)
    delta = check_delta(delta)
    if delta == 0.0:
        sigma = 2.0 * c * sensitivity / epsilon
    else:
        sigma = math.sqrt(32.0 * c * math.log(1.0 / delta)) * sensitivity / epsilon
    return sigma, 2.0 * sigma


class AboveThreshold:
    """Streaming sparse vector (Dwork-Roth Alg 1 / Alg 2) for ``n_runs`` independent runs.

    Parameters
    ----------
    epsilon : float
        Privacy parameter, > 0.
    threshold : float
        The public threshold ``T`` (finite).
    sensitivity : float
        Sensitivity ``Delta`` of every query, > 0.
    n_runs : int
        Number of independent runs, >= 1.
    rng : numpy.random.Generator
        Source of all noise.
    max_above : int, optional
        ``c``, the number of "above" answers before halting (default 1: AboveThreshold).
    delta : float, optional
        0 (default) for the epsilon-DP calibration, in (0, 1) for the (epsilon, delta) one.

    Notes
    -----
    Halting semantics: once a run has given ``c`` "above" answers it is *halted*: every later
    :meth:`query` returns False for it, draws no noise and does not count as answered; read
    :attr:`halted` to tell "below" from "halted". :meth:`restart` starts a fresh instance (new
    threshold noise, zero "above" answers) for chosen runs, as AFKT23 Alg 1 does after each switch.
    """

    def __init__(self, epsilon: float, threshold: float, sensitivity: float, n_runs: int,
                 rng: np.random.Generator, *, max_above: int = 1, delta: float = 0.0) -> None:
        self._epsilon = check_epsilon(epsilon)
        self._threshold = float(check_finite_array(threshold, "threshold", ndim=0))
        self._sensitivity = check_positive(sensitivity, "sensitivity")
        self._n = check_int(n_runs, "n_runs", minimum=1)
        self._rng = check_generator(rng)
        self._c = check_int(max_above, "max_above", minimum=1)
        self._delta = check_delta(delta)
        self._threshold_scale, self._query_scale = sparse_vector_scales(
            self._epsilon, self._sensitivity, self._c, self._delta)
        self._noisy_threshold = np.empty(self._n)
        self._above = np.zeros(self._n, dtype=np.int64)
        self._halted = np.zeros(self._n, dtype=bool)
        self._answered = np.zeros(self._n, dtype=np.int64)
        self._threshold_draws = np.zeros(self._n, dtype=np.int64)
        self._query_draws = np.zeros(self._n, dtype=np.int64)
        self._draw_threshold(np.arange(self._n))

    def _draw_threshold(self, runs: np.ndarray) -> None:
        if runs.size:
            self._noisy_threshold[runs] = self._threshold + sample_laplace(
                self._threshold_scale, runs.size, self._rng)
            self._threshold_draws[runs] += 1

    @property
    def epsilon(self) -> float:
        return self._epsilon

    @property
    def delta(self) -> float:
        return self._delta

    @property
    def threshold(self) -> float:
        return self._threshold

    @property
    def sensitivity(self) -> float:
        return self._sensitivity

    @property
    def n_runs(self) -> int:
        return self._n

    @property
    def max_above(self) -> int:
        return self._c

    @property
    def threshold_scale(self) -> float:
        """Scale of the Laplace threshold noise (``sigma``)."""
        return self._threshold_scale

    @property
    def query_scale(self) -> float:
        """Scale of the Laplace query noise (``2 sigma``)."""
        return self._query_scale

    @property
    def halted(self) -> np.ndarray:
        """Runs that have given ``max_above`` "above" answers, bool ``(n_runs,)`` (a copy)."""
        return self._halted.copy()

    @property
    def above_count(self) -> np.ndarray:
        """"Above" answers per run since the last (re)start, int ``(n_runs,)``."""
        return self._above.copy()

    @property
    def queries_answered(self) -> np.ndarray:
        """Queries answered (not refused as halted) per run, int ``(n_runs,)``."""
        return self._answered.copy()

    @property
    def threshold_draws(self) -> np.ndarray:
        """Threshold-noise draws per run, int ``(n_runs,)``."""
        return self._threshold_draws.copy()

    @property
    def query_draws(self) -> np.ndarray:
        """Query-noise draws per run, int ``(n_runs,)`` (one per answered query)."""
        return self._query_draws.copy()

    @property
    def noise_draws(self) -> np.ndarray:
        """All Laplace draws per run (threshold + query), int ``(n_runs,)``."""
        return self._threshold_draws + self._query_draws

    def query(self, values: np.ndarray | float) -> np.ndarray:
        """Answer one query in every run; returns bool ``(n_runs,)``, True = "above".

        ``values`` is the query's true value ``f_i(D)``, a scalar (same in every run) or shape
        ``(n_runs,)``. Halted runs return False and draw no noise.
        """
        v = check_finite_array(values, "values", ndim=(0, 1))
        if v.ndim == 1 and v.shape != (self._n,):
            raise ValueError(f"values must be a scalar or have shape ({self._n},), got {v.shape}")
        v = np.broadcast_to(v, (self._n,))
        out = np.zeros(self._n, dtype=bool)
        active = np.flatnonzero(~self._halted)
        if active.size == 0:
            return out
        nu = sample_laplace(self._query_scale, active.size, self._rng)
        fire = v[active] + nu >= self._noisy_threshold[active]
        self._query_draws[active] += 1
        self._answered[active] += 1
        out[active] = fire
        fired = active[fire]
        self._above[fired] += 1
        done = self._above[fired] >= self._c
        self._halted[fired[done]] = True
        self._draw_threshold(fired[~done])
        return out

    def restart(self, runs: np.ndarray | None = None) -> None:
        """Start a fresh instance in ``runs`` (bool mask ``(n_runs,)`` or indices; None = all).

        Draws new threshold noise and resets the "above" count and halted flag of those runs; the
        draw counters keep counting.
        """
        if runs is None:
            idx = np.arange(self._n)
        else:
            arr = np.asarray(runs)
            if arr.ndim == 1 and arr.size == 0:
                return
            if arr.dtype == bool:
                if arr.shape != (self._n,):
                    raise ValueError(f"runs mask must have shape ({self._n},), got {arr.shape}")
                idx = np.flatnonzero(arr)
            elif np.issubdtype(arr.dtype, np.integer) and arr.ndim == 1:
                if arr.size and (arr.min() < 0 or arr.max() >= self._n):
                    raise ValueError(f"runs indices must be in [0, {self._n - 1}]")
                # np.unique sorts; indices already strictly increasing (np.flatnonzero's, as the
                # experts learners pass) are their own unique sorted set.
                idx = arr if np.all(arr[1:] > arr[:-1]) else np.unique(arr)
            else:
                raise TypeError("runs must be None, a bool mask or a 1-D integer index array")
        self._above[idx] = 0
        self._halted[idx] = False
        self._draw_threshold(idx)


class SparseVectorMechanism(Mechanism):
    """Sparse vector on a fixed list of query values, as a batch mechanism.

    ``sample(query_values, n, rng)``, ``query_values`` of shape ``(k,)`` (the true answers
    ``f_1(D), ..., f_k(D)``), returns per run the 0-based indices of the "above" answers, ``k``
    standing for "none": shape ``(n,)`` for ``max_above = 1`` (the first "above", or ``k``), shape
    ``(n, max_above)`` otherwise (increasing indices, padded with ``k``). This is the whole output
    of Dwork-Roth Alg 1/2 (the "below" answers are implied by the indices).

    Privacy: ``EpsilonDeltaDpEvent(epsilon, delta)`` for queries of sensitivity ``sensitivity``
    (Theorems 3.23 and 3.25).
    """

    name = "sparse-vector"

    def __init__(self, epsilon: float, threshold: float, sensitivity: float = 1.0, *,
                 max_above: int = 1, delta: float = 0.0) -> None:
        self._epsilon = check_epsilon(epsilon)
        self._threshold = float(check_finite_array(threshold, "threshold", ndim=0))
        self._c = check_int(max_above, "max_above", minimum=1)
        self._delta = check_delta(delta)
        self._sensitivity = Sensitivity(
            check_positive(sensitivity, "sensitivity"), norm="count",
            relation=NeighbourRelation.REPLACE_ONE,
            description="largest change of any query value between neighbours")

    @property
    def epsilon(self) -> float:
        return self._epsilon

    @property
    def delta(self) -> float:
        return self._delta

    @property
    def threshold(self) -> float:
        return self._threshold

    @property
    def max_above(self) -> int:
        return self._c

    @property
    def sensitivity(self) -> Sensitivity:
        return self._sensitivity

    def sample(self, data: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        """Indices of the "above" answers of ``n`` runs on query values ``data``, shape ``(k,)``."""
        values = check_finite_array(data, "query_values", ndim=1)
        n = check_int(n, "n", minimum=1)
        k = values.shape[0]
        svt = AboveThreshold(self._epsilon, self._threshold, self._sensitivity.bound, n, rng,
                             max_above=self._c, delta=self._delta)
        out = np.full((n, self._c), k, dtype=np.int64)
        for i in range(k):
            fired = np.flatnonzero(svt.query(values[i]))
            if fired.size:
                out[fired, svt._above[fired] - 1] = i
            if svt._halted.all():
                break
        return out[:, 0] if self._c == 1 else out

    def dp_event(self) -> dp_accounting.DpEvent:
        return EpsilonDeltaDpEvent(self._epsilon, self._delta)


def _laplace_cdf(x: np.ndarray | float, scale: float) -> np.ndarray:
    """CDF of Lap(0, scale), computed without cancellation on either side."""
    x = np.asarray(x, dtype=np.float64)
    half_tail = 0.5 * np.exp(-np.abs(x) / scale)
    return np.where(x < 0, half_tail, 1.0 - half_tail)


def first_above_probabilities(query_values: np.ndarray, threshold: float,
                              threshold_scale: float, query_scale: float) -> np.ndarray:
    """Exact law of the first "above" of one AboveThreshold instance, by numerical integration.

    With ``rho ~ Lap(b1)`` (``threshold_scale``) and ``nu_i ~ Lap(b2)`` (``query_scale``), and
    ``F`` the Lap(b2) CDF, conditioning on ``rho = r`` makes the queries independent:

        P[first above at i] = int f_rho(r) prod_{j<i} F(T + r - q_j) (1 - F(T + r - q_i)) dr,
        P[no above]         = int f_rho(r) prod_{j<k} F(T + r - q_j) dr,

    integrated with ``scipy.integrate.quad`` piecewise between the kinks ``r = 0`` and
    ``r = q_j - T`` (absolute error ~1e-12). This is the output law of Alg 1 (``b1 = 2 Delta/eps``,
    ``b2 = 4 Delta/eps``) and of each segment of Alg 2 between "above" answers.

    Parameters
    ----------
    query_values : array, shape ``(k,)``, k >= 1
    threshold : float
    threshold_scale, query_scale : float
        > 0.

    Returns
    -------
    numpy.ndarray, shape ``(k + 1,)``
        Entry ``i < k``: P[first "above" at query i (0-based)]; entry ``k``: P[no "above"].
    """
    q = check_finite_array(query_values, "query_values", ndim=1)
    if q.shape[0] < 1:
        raise ValueError("query_values must contain at least one query")
    thr = float(check_finite_array(threshold, "threshold", ndim=0))
    b1 = check_positive(threshold_scale, "threshold_scale")
    b2 = check_positive(query_scale, "query_scale")
    # A pure function of its arguments, asked for the same law many times by one audit (Alg 1's
    # exact epsilon asks ~5 times per distinct law): memoised on the exact bits of the inputs, so
    # a cached answer is the one the integration would give; callers get their own copy.
    key = np.concatenate([np.asarray(q, dtype=np.float64), [thr, b1, b2]]).tobytes()
    return _first_above_law(key).copy()


@functools.lru_cache(maxsize=4096)
def _first_above_law(key: bytes) -> np.ndarray:
    """:func:`first_above_probabilities` on ``key``: the bytes of (q..., threshold, b1, b2)."""
    values = np.frombuffer(key, dtype=np.float64)
    q = values[:-3]
    thr, b1, b2 = (float(v) for v in values[-3:])
    k = q.shape[0]
    shifts = thr - q  # below at j  <=>  nu_j < shifts[j] + r
    kinks = np.unique(np.concatenate([[0.0], -shifts]))
    pieces = [(-np.inf, kinks[0])] + list(zip(kinks[:-1], kinks[1:])) + [(kinks[-1], np.inf)]

    def integrand(r: float, i: int) -> float:
        below = _laplace_cdf(shifts[:i] + r, b2)
        value = math.exp(-abs(r) / b1) / (2.0 * b1) * float(np.prod(below))
        if i < k:
            value *= float(_laplace_cdf(-(shifts[i] + r), b2))  # survival, by symmetry
        return value

    probs = np.empty(k + 1)
    for i in range(k + 1):
        total = 0.0
        for lo, hi in pieces:
            if lo == hi:
                continue
            val, _ = integrate.quad(integrand, lo, hi, args=(i,), epsabs=1e-13, epsrel=1e-10,
                                    limit=200)
            total += val
        probs[i] = total
    return probs
