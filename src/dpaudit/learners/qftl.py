"""Quadratic Follow The Leader (QFTL), the non-private learner behind PQFTL.

Jain, Kothari & Thakurta: COLT 2012 Section 4 eq. (4); arXiv version Section 3.5 eq. (21)
(identical in both versions). For the quadratic losses

    f_t(x) = 1/2 (y_t - <v_t, x>)^2 + alpha/2 ||x||^2                 (COLT eq. (3), arXiv eq. (19))

and C = R^d, Follow The Leader has the closed form

    x_{t+1} = (t alpha I + V_t)^{-1} u_t,   V_t = V_{t-1} + v_t v_t^T,  u_t = u_{t-1} + y_t v_t,

with V_0 = 0, u_0 = 0; the first point is x_1 = 0 (as PQFTL, Algorithm 4 line 3).
"""

from __future__ import annotations

import numpy as np

from dpaudit._validation import check_generator, check_int, check_positive
from dpaudit.learners.base import RoundCounting
from dpaudit.learners.losses import Loss, SquaredLoss

__all__ = ["QFTL", "check_quadratic_loss"]


def check_quadratic_loss(loss: Loss, dim: int, alpha: float,
                         data_bound: float | None = None) -> SquaredLoss:
    """Require ``loss`` to be ``1/2 (y - <v, x>)^2 + alpha/2 ||x||^2`` with ``|y|, ||v|| <= R``."""
    if not isinstance(loss, SquaredLoss):
        raise TypeError(f"QFTL needs SquaredLoss costs (JKT12 eq. (3)), got {type(loss).__name__}")
    if loss.dim != dim:
        raise ValueError(f"loss dimension {loss.dim} != learner dimension {dim}")
    if not np.isclose(loss.ridge, alpha, rtol=1e-12, atol=0.0):
        raise ValueError(f"the loss's ridge {loss.ridge!r} must equal alpha={alpha!r}: the closed "
                         "form (t alpha I + V_t)^{-1} u_t is FTL only for f_t = 1/2 (y - <v,x>)^2 "
                         "+ alpha/2 ||x||^2")
    if data_bound is not None:
        R = data_bound * (1 + 1e-12)
        if abs(loss.y) > R or float(np.linalg.norm(loss.v)) > R:
            raise ValueError(f"|y| = {abs(loss.y):.6g} or ||v|| = {np.linalg.norm(loss.v):.6g} "
                             f"exceeds the declared bound R={data_bound!r}")
    return loss


class QFTL(RoundCounting):
    """FTL for quadratic losses in closed form, vectorised over runs (all runs coincide).

    Parameters
    ----------
    dim : int
        d >= 1.
    alpha : float
        The ridge of every loss, > 0 (each ``SquaredLoss`` must have ``ridge == alpha``).
    """

    name = "QFTL"
    private = False

    def __init__(self, dim: int, alpha: float) -> None:
        self._dim = check_int(dim, "dim", minimum=1)
        self.alpha = check_positive(alpha, "alpha")
        self._n_runs = 0
        self._t = 0
        self._V = np.zeros((self._dim, self._dim))
        self._u = np.zeros(self._dim)
        self._x = np.zeros(self._dim)

    @property
    def dim(self) -> int:
        return self._dim

    def reset(self, n_runs: int, rng: np.random.Generator) -> None:
        self._n_runs = check_int(n_runs, "n_runs", minimum=1)
        check_generator(rng)
        self._t = 1
        self._V = np.zeros((self._dim, self._dim))
        self._u = np.zeros(self._dim)
        self._x = np.zeros(self._dim)

    def predict(self) -> np.ndarray:
        if self._t == 0:
            raise RuntimeError("call reset(n_runs, rng) before predict()")
        return np.broadcast_to(self._x, (self._n_runs, self._dim)).copy()

    def learn(self, loss: Loss) -> None:
        if self._t == 0:
            raise RuntimeError("call reset(n_runs, rng) before learn()")
        loss = check_quadratic_loss(loss, self._dim, self.alpha)
        self._V = self._V + np.outer(loss.v, loss.v)
        self._u = self._u + loss.y * loss.v
        t = self._t
        self._x = np.linalg.solve(t * self.alpha * np.eye(self._dim) + self._V, self._u)
        self._t += 1
