"""AFKT23 Algorithms 1 and 2: sparse-vector experts for known and unknown L*.

Asi, Feldman, Koren & Talwar, ICML 2023 (``afkt23.txt``), Sec. 3, Algorithm 1 "Sparse-Vector for
zero loss experts" with Theorem 1, and Sec. 3.1, Algorithm 2 "Adaptive Sparse-Vector for low-loss
experts" with Theorem 2 (privacy proof: App. B.2). Algorithm 1 runs a sparse vector on the losses
since the last switch and, when it fires, draws a new expert by the exponential mechanism, at most
``K`` times; Algorithm 2 restarts it with a doubled estimate of ``L*`` whenever a Laplace-noised
count exceeds the estimate. Each reading of the text where it is ambiguous or not executable
(test timing, a non-integer ``K``, log bases, threshold margin, restarts) is a parameter whose
default is the printed text. The sparse vector is
:class:`dpaudit.mechanisms.sparse_vector.AboveThreshold` (Dwork-Roth Alg 1), the selection
:class:`dpaudit.mechanisms.exponential.ExponentialMechanism` in the half form. Floating-point noise
is not exactly DP (Mironov 2012).

The algorithms as printed, Theorem 1's constants and every reading choice:
docs/paper-readings.md#afkt23-sparse-vector-experts.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Literal

import numpy as np

from dpaudit._validation import (check_delta, check_epsilon, check_int, check_nonnegative,
                                 check_probability)
from dpaudit.learners.experts import (ExpertsLearner, LogBase, SwitchRecord, cumulative_losses,
                                      log_of, uniform_argmin_rows)
from dpaudit.mechanisms.exponential import ExponentialMechanism
from dpaudit.mechanisms.laplace import sample_laplace
from dpaudit.mechanisms.sparse_vector import AboveThreshold

__all__ = ["KReading", "Margin", "Algorithm1Parameters", "algorithm1_parameters",
           "Algorithm2Parameters", "algorithm2_parameters", "NoiselessThreshold",
           "SparseVectorExperts", "AdaptiveSparseVectorExperts", "selection_cap"]

KReading = Literal["printed", "integer"]
Margin = Literal["printed", "svt-accuracy"]


def selection_cap(K: float, k_reading: KReading) -> int:
    """Exponential-mechanism draws the loop condition allows: ``ceil(K)`` (``k < K``) or ``floor(K)``."""
    if k_reading == "printed":
        return int(math.ceil(K - 1e-12))
    if k_reading == "integer":
        return int(math.floor(K + 1e-12))
    raise ValueError(f"k_reading must be 'printed' (k < K, ceil(K) draws) or 'integer' (floor(K)), got {k_reading!r}")


@dataclass(frozen=True)
class Algorithm1Parameters:
    """Every number Algorithm 1 uses, with the reading choices that produced it."""

    epsilon: float
    delta: float
    d: int
    T: int
    beta: float
    L_star: float
    K: float
    selections: int
    eta: float
    B: float
    threshold: float
    svt_epsilon: float
    k_reading: str
    margin: str
    log_d_base: str
    log_base: str

    def to_dict(self) -> dict:
        return asdict(self)


def _ceil_log_d(d: int, base: LogBase) -> int:
    return int(math.ceil(log_of(d, base) - 1e-12)) if d > 1 else 0


def algorithm1_parameters(epsilon: float, d: int, T: int, *, beta: float = 0.1, L_star: float = 0.0,
                          delta: float = 0.0, k_reading: KReading = "printed",
                          margin: Margin = "printed", log_d_base: LogBase = "binary",
                          log_base: LogBase = "natural") -> Algorithm1Parameters:
    """Theorem 1's calibration of Algorithm 1 (pure for ``delta = 0``, approximate otherwise).

    ``beta`` must lie in (0, 1/2) (Theorem 1); ``L_star >= 0``; ``delta`` in [0, 1).
    """
    epsilon = check_epsilon(epsilon)
    d = check_int(d, "d", minimum=1)
    T = check_int(T, "T", minimum=1)
    beta = check_probability(beta, "beta")
    if not beta < 0.5:
        raise ValueError(f"beta must lie in (0, 1/2) (Theorem 1), got {beta}")
    L_star = check_nonnegative(L_star, "L_star")
    delta = check_delta(delta)
    lg = _ceil_log_d(d, log_d_base)
    K = 6 * lg + 24 * log_of(1.0 / beta, log_base)
    if delta == 0.0:
        eta = epsilon / (12 * lg + 48 * log_of(1.0 / beta, log_base))
    else:
        eta = epsilon / math.sqrt(32 * K * log_of(1.0 / delta, log_base))
    B = log_of(2.0 * T * T / beta, log_base)
    factor = {"printed": 8.0, "svt-accuracy": 16.0}.get(margin)
    if factor is None:
        raise ValueError(f"margin must be 'printed' (8B/eps) or 'svt-accuracy' (16B/eps), got {margin!r}")
    threshold = L_star + 4.0 / eta + factor * B / epsilon
    return Algorithm1Parameters(epsilon=epsilon, delta=delta, d=d, T=T, beta=beta, L_star=L_star, K=K,
                                selections=selection_cap(K, k_reading), eta=eta, B=B,
                                threshold=threshold, svt_epsilon=epsilon / 2.0,
                                k_reading=k_reading, margin=margin, log_d_base=log_d_base,
                                log_base=log_base)


@dataclass(frozen=True)
class Algorithm2Parameters:
    """Every number Algorithm 2 uses (``threshold_offset`` = ``L - Lbar*`` = ``4/eta + 8B/eps_0``)."""

    epsilon: float
    d: int
    T: int
    beta: float
    epsilon0: float
    beta0: float
    K: float
    selections: int
    eta: float
    B: float
    threshold_offset: float
    laplace_scale: float
    doubling_margin: float
    application_budget: float
    max_applications: int | None
    k_reading: str
    log_T_base: str
    log_d_base: str
    log_base: str

    def to_dict(self) -> dict:
        return asdict(self)


def algorithm2_parameters(epsilon: float, d: int, T: int, *, beta: float = 0.1,
                          k_reading: KReading = "printed", log_T_base: LogBase = "binary",
                          log_d_base: LogBase = "binary", log_base: LogBase = "natural",
                          max_applications: int | None = None) -> Algorithm2Parameters:
    """Algorithm 2's printed calibration (lines 1-3). ``T >= 2`` (``log T > 0``)."""
    epsilon = check_epsilon(epsilon)
    d = check_int(d, "d", minimum=1)
    T = check_int(T, "T", minimum=2)
    beta = check_probability(beta, "beta")
    if not beta < 0.5:
        raise ValueError(f"beta must lie in (0, 1/2) (Theorem 2), got {beta}")
    if max_applications is not None:
        max_applications = check_int(max_applications, "max_applications", minimum=1)
    logT = log_of(T, log_T_base)
    eps0 = epsilon / (2.0 * logT)
    beta0 = beta / T
    K = 6 * _ceil_log_d(d, log_d_base) + 24 * log_of(1.0 / beta0, log_base)
    eta = eps0 / (2.0 * K)
    B = log_of(2.0 * T * T / beta0, log_base)
    return Algorithm2Parameters(
        epsilon=epsilon, d=d, T=T, beta=beta, epsilon0=eps0, beta0=beta0, K=K,
        selections=selection_cap(K, k_reading), eta=eta, B=B,
        threshold_offset=4.0 / eta + 8.0 * B / eps0, laplace_scale=K / eps0,
        doubling_margin=5.0 * K * log_of(1.0 / beta0, log_base) / eps0, application_budget=logT,
        max_applications=max_applications, k_reading=k_reading, log_T_base=log_T_base,
        log_d_base=log_d_base, log_base=log_base)


class NoiselessThreshold:
    """The ``epsilon -> infinity`` limit of :class:`AboveThreshold`: "above" iff ``value >= threshold``.

    Same interface and halting semantics (``query``, ``restart``, ``halted``); draws no noise.
    """

    def __init__(self, threshold: float, n_runs: int) -> None:
        self.threshold = float(threshold)
        self._halted = np.zeros(n_runs, dtype=bool)

    @property
    def halted(self) -> np.ndarray:
        return self._halted.copy()

    def query(self, values: np.ndarray) -> np.ndarray:
        v = np.broadcast_to(np.asarray(values, dtype=float), self._halted.shape)
        out = ~self._halted & (v >= self.threshold)
        self._halted |= out
        return out

    def restart(self, runs: np.ndarray) -> None:
        self._halted[np.asarray(runs)] = False


class _SparseVectorCore(ExpertsLearner):
    """Shared round loop of Algorithms 1 and 2 (Algorithm 1 = no Laplace check, one application)."""

    private = True

    def __init__(self, *, eta: float, svt_epsilon: float, selections: int, noiseless: bool,
                 clip: bool) -> None:
        super().__init__(clip=clip)
        self.noiseless = bool(noiseless)
        self._eta = eta
        self._svt_epsilon = svt_epsilon
        self._cap = selections
        self._em = ExponentialMechanism(1.0, eta, form="half")

    # --- hooks (tests plant bugs by overriding these) -------------------------------------------
    def _new_sparse_vector(self, n_runs: int, rng: np.random.Generator) -> AboveThreshold | NoiselessThreshold:
        """The sparse vector: queries are passed as ``q - L``, so the public threshold is 0."""
        if self.noiseless:
            return NoiselessThreshold(0.0, n_runs)
        return AboveThreshold(self._svt_epsilon, 0.0, 1.0, n_runs, rng)

    def _select(self, scores: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One exponential-mechanism draw per row of ``scores`` ``(m, d)``."""
        if self.noiseless:
            return uniform_argmin_rows(scores, rng)
        return self._em.sample(scores, scores.shape[0], rng)

    # --- adaptive part (Algorithm 2 overrides) -------------------------------------------------
    def _floor(self) -> np.ndarray:
        return self._floors

    def _threshold(self) -> np.ndarray:
        raise NotImplementedError

    def _after_selection(self, idx: np.ndarray, chosen: np.ndarray, C: np.ndarray, t: int,
                         rng: np.random.Generator) -> np.ndarray:
        """Runs (subset of ``idx``) that restart Algorithm 1 after this draw; none for Algorithm 1."""
        return np.zeros(idx.size, dtype=bool)

    def _init_state(self, n_runs: int) -> None:
        raise NotImplementedError

    def _run(self, losses: np.ndarray, n_runs: int, rng: np.random.Generator) -> np.ndarray:
        T, d = losses.shape
        C = cumulative_losses(losses)
        self._init_state(n_runs)
        # Round-major while running (a row per round is one contiguous write; a column of an
        # (n_runs, T) array touches a cache line per run), run-major when returned.
        out_by_round = np.empty((T, n_runs), dtype=np.int64)
        C_flat = C.reshape(-1)
        x = rng.integers(d, size=n_runs)
        a = np.ones(n_runs, dtype=np.int64)        # first round whose loss enters the queries
        qstart = np.ones(n_runs, dtype=np.int64)   # first query round of the current instance
        origin = np.ones(n_runs, dtype=np.int64)   # first round of the current application
        k = np.zeros(n_runs, dtype=np.int64)       # draws in the current application
        total = np.zeros(n_runs, dtype=np.int64)   # draws over all applications
        restarts = np.zeros(n_runs, dtype=np.int64)
        switch_rounds = np.zeros((n_runs, T), dtype=bool)
        fired = np.zeros(n_runs, dtype=bool)
        svt = self._new_sparse_vector(n_runs, rng)
        for t in range(1, T + 1):
            sw = fired & (k < self._cap)
            restart_now = np.zeros(n_runs, dtype=bool)
            if sw.any():
                idx = np.flatnonzero(sw)
                base = C[t - 1][None, :] - C[origin[idx] - 1]
                scores = np.maximum(base, self._floor()[idx, None])
                chosen = self._select(scores, rng)
                x[idx] = chosen
                k[idx] += 1
                total[idx] += 1
                switch_rounds[idx, t - 1] = True
                a[idx] = t
                qstart[idx] = t + 1
                again = self._after_selection(idx, chosen, C, t, rng)
                restart_now[idx[again]] = True
            out_by_round[t - 1] = x
            if restart_now.any():   # a fresh application of Algorithm 1 from round t + 1
                r = np.flatnonzero(restart_now)
                x[r] = rng.integers(d, size=r.size)
                a[r] = t + 1
                qstart[r] = t + 1
                origin[r] = t + 1
                k[r] = 0
                restarts[r] += 1
            if t > 1:
                fresh = np.flatnonzero((qstart == t) & (k < self._cap))
                if fresh.size:
                    svt.restart(fresh)
            # C[t - 1, x] - C[a - 1, x], gathered from rows / flat indices (same values, faster)
            q = C[t - 1].take(x) - C_flat.take((a - 1) * d + x)
            fired = svt.query(q - self._threshold())
        self.record = self._make_record(total, switch_rounds, restarts)
        return np.ascontiguousarray(out_by_round.T)

    def _make_record(self, total: np.ndarray, switch_rounds: np.ndarray,
                     restarts: np.ndarray) -> SwitchRecord:
        raise NotImplementedError


class SparseVectorExperts(_SparseVectorCore):
    """AFKT23 Algorithm 1 (known ``L*``), vectorised over runs.

    The algorithm as printed and its readings: docs/paper-readings.md#afkt23-sparse-vector-experts.

    Parameters
    ----------
    params : Algorithm1Parameters
        From :func:`algorithm1_parameters` (Theorem 1's calibration and the reading choices).
    noiseless : bool
        The ``eps -> infinity`` limit (deterministic threshold, uniform choice among minimisers): equal
        to :class:`dpaudit.learners.experts_baselines.LazyFollowTheLeader` with the same threshold.
    clip : bool
        Clip losses to [0, 1] (default) or reject losses outside it.
    """

    name = "AFKT23-Alg1"

    def __init__(self, params: Algorithm1Parameters, *, noiseless: bool = False, clip: bool = True) -> None:
        if not isinstance(params, Algorithm1Parameters):
            raise TypeError("params must be an Algorithm1Parameters (use algorithm1_parameters(...))")
        super().__init__(eta=params.eta, svt_epsilon=params.svt_epsilon, selections=params.selections,
                         noiseless=noiseless, clip=clip)
        self.params = params

    def _init_state(self, n_runs: int) -> None:
        self._floors = np.full(n_runs, self.params.L_star)
        self._thresholds = np.full(n_runs, self.params.threshold)

    def _threshold(self) -> np.ndarray:
        return self._thresholds

    def _run(self, losses: np.ndarray, n_runs: int, rng: np.random.Generator) -> np.ndarray:
        if losses.shape[1] != self.params.d:
            raise ValueError(f"losses must have d={self.params.d} columns, got {losses.shape[1]}")
        return super()._run(losses, n_runs, rng)

    def _make_record(self, total: np.ndarray, switch_rounds: np.ndarray,
                     restarts: np.ndarray) -> SwitchRecord:
        return SwitchRecord(selections=total, selection_budget=self.params.K, switch_rounds=switch_rounds,
                            selection_cap=self._cap)


class AdaptiveSparseVectorExperts(_SparseVectorCore):
    """AFKT23 Algorithm 2 (unknown ``L*``, doubling with Laplace-noised counts).

    The algorithm as printed and its readings: docs/paper-readings.md#afkt23-sparse-vector-experts.
    """

    name = "AFKT23-Alg2"

    def __init__(self, params: Algorithm2Parameters, *, noiseless: bool = False, clip: bool = True) -> None:
        if not isinstance(params, Algorithm2Parameters):
            raise TypeError("params must be an Algorithm2Parameters (use algorithm2_parameters(...))")
        super().__init__(eta=params.eta, svt_epsilon=params.epsilon0 / 2.0, selections=params.selections,
                         noiseless=noiseless, clip=clip)
        self.params = params

    def _init_state(self, n_runs: int) -> None:
        self._floors = np.ones(n_runs)   # Lbar* = 1
        self._applications = np.ones(n_runs, dtype=np.int64)
        self._laplace = np.zeros(n_runs, dtype=np.int64)

    def _threshold(self) -> np.ndarray:
        return self._floors + self.params.threshold_offset

    def _after_selection(self, idx: np.ndarray, chosen: np.ndarray, C: np.ndarray, t: int,
                         rng: np.random.Generator) -> np.ndarray:
        p = self.params
        count = C[t - 1, chosen]
        if not self.noiseless:
            count = count + sample_laplace(p.laplace_scale, idx.size, rng)
        self._laplace[idx] += 1
        double = count > self._floors[idx] - p.doubling_margin
        if p.max_applications is not None:
            double &= self._applications[idx] < p.max_applications
        self._floors[idx[double]] *= 2.0
        self._applications[idx[double]] += 1
        return double

    def _run(self, losses: np.ndarray, n_runs: int, rng: np.random.Generator) -> np.ndarray:
        if losses.shape != (self.params.T, self.params.d):
            raise ValueError(f"losses must have shape (T, d) = ({self.params.T}, {self.params.d}), "
                             f"got {losses.shape}")
        return super()._run(losses, n_runs, rng)

    def _make_record(self, total: np.ndarray, switch_rounds: np.ndarray,
                     restarts: np.ndarray) -> SwitchRecord:
        return SwitchRecord(selections=total, selection_budget=self.params.K * self.params.application_budget,
                            switch_rounds=switch_rounds, restarts=restarts, selection_cap=None,
                            restart_budget=self.params.application_budget,
                            laplace_draws=self._laplace.copy(),
                            extra={"final_L_estimate_max": float(self._floors.max())})
