"""AFKT23 Algorithm 5: the potential-based experts algorithm (App. C), with Theorems 6 and 7.

Asi, Feldman, Koren & Talwar, ICML 2023 (``afkt23.txt``), Appendix C, Algorithm 5
"Potential-based Algorithm for Experts" (measure ``mu`` uniform over the ``d`` experts): a sparse
vector on the drop of the log potential ``phi_eta`` since the last switch and, when it fires, a draw
from the exponentially weighted distribution, at most ``K`` times. Theorem 6 (pure) and Theorem 7
(approximate) fix its constants; the two printed forms of Theorem 7's ``eps_0`` disagree, and
``eps0_reading`` selects one. The other readings (query timing, the round of the draw, a
non-integer ``K``, log bases) are parameters or fixed as documented; the queries' 1-sensitivity
(Lemma 2.3's assumption) is checked by the lemma audit (``papers/afkt23/lemmas.py``).

The algorithm as printed, the theorems' constants and the reading choices:
docs/paper-readings.md#afkt23-potential-experts.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Literal

import numpy as np
from scipy import special

from dpaudit._validation import check_delta, check_epsilon, check_int, check_nonnegative, check_positive
from dpaudit.learners.experts import ExpertsLearner, LogBase, SwitchRecord, cumulative_losses, log_of, uniform_argmin_rows
from dpaudit.learners.sparse_vector_experts import KReading, NoiselessThreshold, selection_cap
from dpaudit.mechanisms.exponential import ExponentialMechanism
from dpaudit.mechanisms.sparse_vector import AboveThreshold

__all__ = ["Eps0Reading", "Algorithm5Parameters", "algorithm5_parameters", "log_potential",
           "PotentialExperts"]

Eps0Reading = Literal["eps0-formula", "eta-formula"]


@dataclass(frozen=True)
class Algorithm5Parameters:
    """Every number Algorithm 5 uses (Theorem 6 for ``delta = 0``, Theorem 7 otherwise)."""

    epsilon: float
    delta: float
    d: int
    T: int
    alpha: float
    beta: float
    gamma: float
    K: float
    selections: int
    epsilon0: float
    eta: float
    k_reading: str
    eps0_reading: str
    log_base: str

    @property
    def threshold(self) -> float:
        """The sparse vector's threshold ``2 alpha``."""
        return 2.0 * self.alpha

    def to_dict(self) -> dict:
        return asdict(self) | {"threshold": self.threshold}


def algorithm5_parameters(epsilon: float, d: int, T: int, *, delta: float = 0.0,
                          alpha: float = 1.0, k_reading: KReading = "printed",
                          eps0_reading: Eps0Reading = "eps0-formula",
                          log_base: LogBase = "natural") -> Algorithm5Parameters:
    """Theorem 6 (``delta = 0``) or Theorem 7 (``delta > 0``) calibration with ``gamma = 1/d``.

    ``d >= 2`` (``K = 2 log d > 0``), ``T >= 2`` (``log T > 0``).
    """
    epsilon = check_epsilon(epsilon)
    d = check_int(d, "d", minimum=2)
    T = check_int(T, "T", minimum=2)
    delta = check_delta(delta)
    alpha = check_nonnegative(alpha, "alpha")
    gamma = 1.0 / d
    K = 2.0 * log_of(1.0 / gamma, log_base)
    if delta == 0.0:
        eps0 = epsilon / K
    elif eps0_reading == "eps0-formula":
        eps0 = epsilon / (math.sqrt(K) * log_of(1.0 / delta, log_base))
    elif eps0_reading == "eta-formula":
        eps0 = epsilon / math.sqrt(2.0 * K * log_of(1.0 / delta, log_base))
    else:
        raise ValueError(f"eps0_reading must be 'eps0-formula' or 'eta-formula', got {eps0_reading!r}")
    eta = eps0 / (56.0 * log_of(T, log_base))
    return Algorithm5Parameters(epsilon=epsilon, delta=delta, d=d, T=T, alpha=alpha, beta=1.0 / T**2,
                                gamma=gamma, K=K, selections=selection_cap(K, k_reading),
                                epsilon0=eps0, eta=eta, k_reading=k_reading,
                                eps0_reading=eps0_reading, log_base=log_base)


def log_potential(losses: np.ndarray, eta: float) -> np.ndarray:
    """``log phi_eta(t)`` for ``t = 0..T`` with ``mu`` uniform over the experts; shape ``(T + 1,)``.

    ``phi_eta(t) = (1/d) sum_x exp(-eta sum_{i<=t} l_i(x))``, by log-sum-exp.
    """
    eta = check_positive(eta, "eta")
    C = cumulative_losses(np.asarray(losses, dtype=float))
    return special.logsumexp(-eta * C, axis=1) - math.log(C.shape[1])


class PotentialExperts(ExpertsLearner):
    """AFKT23 Algorithm 5 over ``d`` experts with uniform ``mu``.

    The algorithm as printed and its readings: docs/paper-readings.md#afkt23-potential-experts.

    ``noiseless=True``: deterministic threshold test (``q_t >= 2 alpha``); the draws at line 12 are
    kept (they are the algorithm's sampling, not privacy noise). With ``alpha = 0`` this equals
    :class:`dpaudit.learners.experts_baselines.MultiplicativeWeights` with ``resample_every=2``.
    """

    name = "AFKT23-Alg5"
    private = True

    def __init__(self, params: Algorithm5Parameters, *, noiseless: bool = False, clip: bool = True) -> None:
        super().__init__(clip=clip)
        if not isinstance(params, Algorithm5Parameters):
            raise TypeError("params must be an Algorithm5Parameters (use algorithm5_parameters(...))")
        self.params = params
        self.noiseless = bool(noiseless)
        self._em = ExponentialMechanism(1.0, params.eta, form="full")

    def _new_sparse_vector(self, n_runs: int, rng: np.random.Generator) -> AboveThreshold | NoiselessThreshold:
        if self.noiseless:
            return NoiselessThreshold(0.0, n_runs)
        return AboveThreshold(self.params.epsilon0, 0.0, 1.0, n_runs, rng)

    def _select(self, scores: np.ndarray, m: int, rng: np.random.Generator) -> np.ndarray:
        return self._em.sample(scores, m, rng)

    def _run(self, losses: np.ndarray, n_runs: int, rng: np.random.Generator) -> np.ndarray:
        p = self.params
        T, d = losses.shape
        if d != p.d:
            raise ValueError(f"losses must have d={p.d} columns, got {d}")
        C = cumulative_losses(losses)
        logphi = log_potential(losses, p.eta)
        out = np.empty((n_runs, T), dtype=np.int64)
        x = rng.integers(d, size=n_runs)
        tstar = np.zeros(n_runs, dtype=np.int64)
        qstart = np.ones(n_runs, dtype=np.int64)
        k = np.zeros(n_runs, dtype=np.int64)
        switch_rounds = np.zeros((n_runs, T), dtype=bool)
        fired = np.zeros(n_runs, dtype=bool)
        svt = self._new_sparse_vector(n_runs, rng)
        for t in range(1, T + 1):
            sw = fired & (k < p.selections)
            if sw.any():
                idx = np.flatnonzero(sw)
                x[idx] = self._select(C[t - 1], idx.size, rng)
                k[idx] += 1
                tstar[idx] = t - 1
                qstart[idx] = t + 1
                switch_rounds[idx, t - 1] = True
            out[:, t - 1] = x
            if t > 1:
                fresh = np.flatnonzero((qstart == t) & (k < p.selections))
                if fresh.size:
                    svt.restart(fresh)
            q = (logphi[tstar] - logphi[t]) / p.eta
            fired = svt.query(q - p.threshold)
        self.record = SwitchRecord(selections=k, selection_budget=p.K, switch_rounds=switch_rounds,
                                   selection_cap=p.selections)
        return out
