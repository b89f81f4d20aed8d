"""Private Quadratic Follow The Leader (PQFTL, Algorithm 4).

Jain, Kothari & Thakurta: COLT 2012 Section 4 and Appendix D.1 (Algorithm 4, Theorem 3); arXiv
version Section 3.5 (Algorithm 4, Theorem 7). Identical pseudo-code in both versions::

    x^_1 = 0
    for t = 1..T-1:
        (V^_t, B^V) = PrivateSum(v_t v_t^T, B^V, t, R^2, eps/2, delta/2, T)     (line 7)
        (u^_t, B^u) = PrivateSum(y_t v_t,   B^u, t, R,   eps/2, delta/2, T)     (line 8)
        x^_{t+1} = (t alpha I + V^_t)^{-1} u^_t                                   (line 9)

The versions differ only through PrivateSum's sigma (see
:func:`dpaudit.mechanisms.private_sum.private_sum_sigma`). Released: x^_1, ..., x^_T; the noisy sums
V^_t, u^_t are internal state and never returned.

Reading choices:

* R (line 2: "R = max(max_t ||v_t||, max_t |y_t|)") is a public, declared bound, enforced on every
  loss (losses with ``|y_t| > R`` or ``||v_t|| > R`` are rejected). Computing R from the data, as a
  literal reading of line 2 would, makes the noise scale itself depend on the data.
* Line 8 passes the bound R for the vectors y_t v_t, whose norm can reach R^2; it is implemented as
  printed (the audit checks the consequence).
* Lines 1 and 6 write the cost without the 1/2 of Theorem 3's ``1/2 (y - <v, x>)^2``; the update of
  line 9 is FTL for the 1/2 form (eq. (4)), which the losses here use (``SquaredLoss``).
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
