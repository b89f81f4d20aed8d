"""AFKT23 Algorithm 5: the potential-based experts algorithm (App. C), with Theorems 6 and 7.

Asi, Feldman, Koren & Talwar, ICML 2023 (``afkt23.txt``), Appendix C, Algorithm 5 "Potential-based
Algorithm for Experts" (measure ``mu`` uniform over the ``d`` experts)::

    1: k = 0, t*(0) = 0, x_0 ~ mu
    2: for t = 1 to T:
    3:   if k < K:
    4:     Q = InitializeSparseVec(eps_0, 2 alpha, beta / T)
    5:     while Q.TestAboThr() = False:
    6-11:    x_t = x_{t-1}; q_t = (1/eta)(log phi_eta(t*(k)) - log phi_eta(t)); Q.AddQuery(q_t);
             receive l_t; pay; t = t + 1
    12:    sample x_t with P(x_t = x) = e^{-eta sum_{i<t} l_i(x)} mu(x) / phi_eta(t - 1)
    13-14: k = k + 1; t*(k) = t - 1
    15:  else: x_t = x_{t-1}; receive l_t; pay
    phi_eta(t) = int exp(-eta sum_{i<=t} l_i(x)) mu(dx)

Theorem 6 (pure): ``alpha = 1``, ``beta = 1/T^2``, ``K = 2 log(1/gamma)``, ``eps_0 = eps/K``,
``eta = eps_0 / (56 log T)``; ``gamma = 1/d`` for DP-OPE. Theorem 7 (approximate, ``eps < 1``): as
Theorem 6 but ``eps_0 = eps / sqrt(K) log(1/delta)`` and ``eta = eps_0 / (56 log T) =
eps / (112 log T sqrt(log(1/gamma) log(1/delta)))``. The two printed forms of ``eps_0`` disagree:
the ``eta`` identity gives ``eps_0 = eps / sqrt(2 K log(1/delta))``; ``eps0_reading`` selects
``"eps0-formula"`` (``eps / (sqrt(K) log(1/delta))``) or ``"eta-formula"``.
The privacy paragraph before Theorem 6: "each phase of the algorithm satisfies (eta + eps_0)-DP".

Reading choices:

* **Query timing.** ``q_t`` needs ``phi_eta(t)``, i.e. ``l_t``, which line 9 receives after line 7
  defines the query: we evaluate ``q_t`` when it is tested (line 5, after ``l_t`` is received). A
  query of round ``t`` at or above the threshold makes round ``t + 1`` draw from the distribution with
  the losses up to ``t`` (line 12 at ``t + 1``), and ``t*`` becomes ``t``.
* **Round of the draw.** The expert drawn at line 12 is played at that round (receive, pay) before the
  ``for`` loop advances, as in Algorithm 1 lines 16-18; the literal ``for``-loop increment would skip
  that round's loss.
* **K non-integer** (``K = 2 ln d``): ``k < K`` allows ``ceil(K)`` draws (``k_reading="printed"``) or
  ``floor(K)`` (``"integer"``).
* **Log bases**: natural logs by default (``K = 2 log(1/gamma)`` must satisfy ``e^{-K alpha} <= gamma``
  in Lemma C.3's proof; ``56 log T`` and ``log(1/delta)`` come from Laplace tails).
* The sparse vector treats the queries as 1-sensitive (Lemma 2.3's assumption); whether they are is
  checked by the lemma audit (``papers/afkt23/lemmas.py``).
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
    """AFKT23 Algorithm 5 over ``d`` experts with uniform ``mu``; see the module docstring.

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
