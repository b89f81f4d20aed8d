"""Private Quadratic Follow The Leader (PQFTL, Algorithm 4).

Jain, Kothari & Thakurta: COLT 2012 Section 4 and Appendix D.1 (Algorithm 4, Theorem 3); arXiv
version Section 3.5 (Algorithm 4, Theorem 7), with identical pseudo-code: private sums of
``v_t v_t^T`` and ``y_t v_t`` (PrivateSum, lines 7-8) and
``x^_{t+1} = (t alpha I + V^_t)^{-1} u^_t`` (line 9). The versions differ only through
PrivateSum's sigma (:func:`dpaudit.mechanisms.private_sum.private_sum_sigma`). Released:
``x^_1, ..., x^_T``. Readings: ``R`` is a public, declared bound enforced on every loss (computing
it from the data would make the noise scale data-dependent); line 8's bound ``R`` for vectors of
norm up to ``R^2`` is implemented as printed (the audit checks the consequence); the losses use
the 1/2 form of Theorem 3.

The pseudo-code and the readings in full: docs/paper-readings.md#jkt12-pqftl.
"""

from __future__ import annotations

import numpy as np

from dpaudit._validation import (check_delta, check_epsilon, check_generator, check_int,
                                 check_positive)
from dpaudit.learners.base import RoundCounting, StoredPointRelease
from dpaudit.learners.losses import Loss
from dpaudit.learners.pocp import Version, check_version
from dpaudit.mechanisms.private_sum import LogReading, PrivateSumTree, private_sum_sigma
from dpaudit.learners.qftl import check_quadratic_loss

__all__ = ["PQFTL", "pqftl_sigmas"]


def pqftl_sigmas(version: Version, T: int, R: float, epsilon: float, delta: float,
                 log_reading: LogReading = "tree") -> tuple[float, float]:
    """Node noise (sigma_V, sigma_u) of PQFTL's two trees (Algorithm 4 lines 7-8).

    sigma_V = PrivateSum sigma with bound R^2 and (eps/2, delta/2); sigma_u the same with bound R.
    """
    sigma_V = private_sum_sigma(version, T, R * R, epsilon / 2.0, delta / 2.0, log_reading)
    sigma_u = private_sum_sigma(version, T, R, epsilon / 2.0, delta / 2.0, log_reading)
    return sigma_V, sigma_u


class PQFTL(StoredPointRelease, RoundCounting):
    """Algorithm 4, vectorised over runs.

    Parameters
    ----------
    dim : int
        d >= 1.
    T : int
        Horizon, >= 2 (the trees are built for T vectors).
    alpha : float
        The ridge of the quadratic losses, > 0 (each ``SquaredLoss`` must have ``ridge == alpha``).
    R : float
        Declared bound on ``|y_t|`` and ``||v_t||``, > 0.
    epsilon : float
        > 0; the claim is (epsilon, delta)-DP (Theorem 3 COLT / Theorem 7 arXiv).
    delta : float
        In (0, 1).
    version : {"colt", "arxiv"}
    log_reading : {"tree", "natural"}
        Reading of "log" in PrivateSum's sigma.
    """

    name = "PQFTL"
    private = True

    def __init__(self, dim: int, T: int, alpha: float, R: float, epsilon: float, delta: float,
                 version: Version = "colt", log_reading: LogReading = "tree") -> None:
        self._dim = check_int(dim, "dim", minimum=1)
        self.T = check_int(T, "T", minimum=2)
        self.alpha = check_positive(alpha, "alpha")
        self.R = check_positive(R, "R")
        self.epsilon = check_epsilon(epsilon)
        self.delta = check_delta(delta)
        if self.delta == 0.0:
            raise ValueError("delta must be in (0, 1), got 0")
        self.version = check_version(version)
        self.log_reading = log_reading
        self.sigma_V, self.sigma_u = pqftl_sigmas(self.version, self.T, self.R, self.epsilon,
                                                  self.delta, log_reading)
        self._tree_V = PrivateSumTree(self._dim * self._dim, self.T, self.sigma_V)
        self._tree_u = PrivateSumTree(self._dim, self.T, self.sigma_u)
        self._point: np.ndarray | None = None
        self._t = 0

    @property
    def dim(self) -> int:
        return self._dim

    def reset(self, n_runs: int, rng: np.random.Generator) -> None:
        n_runs = check_int(n_runs, "n_runs", minimum=1)
        rng = check_generator(rng)
        self._tree_V.reset(n_runs, rng)
        self._tree_u.reset(n_runs, rng)
        self._point = np.zeros((n_runs, self._dim))
        self._t = 1

    def learn(self, loss: Loss) -> None:
        if self._point is None:
            raise RuntimeError("call reset(n_runs, rng) before learn()")
        t = self._t
        if t > self.T:
            raise RuntimeError(f"the learner was built for T={self.T} rounds; round {t} is "
                               "beyond it")
        loss = check_quadratic_loss(loss, self._dim, self.alpha, self.R)
        if t <= self.T - 1:
            n, d = self._point.shape
            V_hat = self._tree_V.update(np.outer(loss.v, loss.v).reshape(-1)).reshape(n, d, d)
            u_hat = self._tree_u.update(loss.y * loss.v)
            A = t * self.alpha * np.eye(d) + V_hat
            self._point = np.linalg.solve(A, u_hat[..., None])[..., 0]
        self._t += 1
