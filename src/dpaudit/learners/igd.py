"""Implicit Gradient Descent (IGD), the non-private learner behind PIGD and POL.

Kulis & Bartlett (ICML 2010) as used by Jain, Kothari & Thakurta, *Differentially Private Online
Learning*: COLT 2012 eq. (20) and Algorithm 2 line 7; arXiv version eq. (13) and Algorithm 2 line 7
(identical in both versions)::

    x_{t+1} = argmin_{x in C} 1/2 ||x - x_t||^2 + eta_t f_t(x),     eta_t = 1 / (alpha t),

with alpha the smallest strong-convexity modulus of the losses. The step is solved by
:func:`dpaudit.learners.implicit_step.implicit_step` (exact, or to its stated tolerance).
"""

from __future__ import annotations

import numpy as np

from dpaudit._validation import check_generator, check_int, check_nonnegative, check_positive
from dpaudit.learners.base import RoundCounting, StoredPointRelease
from dpaudit.learners.domains import Ball, Box, Domain
from dpaudit.learners.implicit_step import DEFAULT_TOLERANCE, implicit_step
from dpaudit.learners.losses import Loss
from dpaudit.learners.starting_points import StartingPoint, check_starting_point, starting_points

__all__ = ["IGD"]


class IGD(StoredPointRelease, RoundCounting):
    """Implicit gradient descent with ``eta_t = 1/(alpha t)``, vectorised over runs.

    Parameters
    ----------
    domain : Ball or Box
        The convex set C.
    alpha : float
        Strong-convexity parameter used in the learning rate, > 0.
    x1 : ``"uniform"`` or array_like, shape (d,)
        Starting point: uniform on C per run (the papers' "choose x_1 randomly from C") or a fixed
        point of C.
    extra_ridge : float
        A ridge ``extra_ridge/2 ||x||^2`` added to every loss, >= 0 (0 for IGD as in Algorithm 2;
        POL, Algorithm 6 line 9, adds ``alpha``).
    tol : float
        Tolerance of the implicit-step solver.

    Notes
    -----
    ``predict()`` returns x_t, shape ``(n_runs, d)``; ``learn(f_t)`` computes x_{t+1}.
    """

    name = "IGD"
    private = False

    def __init__(self, domain: Domain, alpha: float, x1: StartingPoint = "uniform", *,
                 extra_ridge: float = 0.0, tol: float = DEFAULT_TOLERANCE) -> None:
        if not isinstance(domain, (Ball, Box)):
            raise TypeError(f"domain must be a Ball or a Box, got {type(domain).__name__}")
        self.domain = domain
        self.alpha = check_positive(alpha, "alpha")
        self.x1 = check_starting_point(x1, domain, domain.dim)
        self.extra_ridge = check_nonnegative(extra_ridge, "extra_ridge")
        self.tol = check_positive(tol, "tol")
        self._point: np.ndarray | None = None
        self._t = 0

    @property
    def dim(self) -> int:
        return self.domain.dim

    def learning_rate(self, t: int) -> float:
        """eta_t = 1 / (alpha t) (Algorithm 2 line 6)."""
        t = check_int(t, "t", minimum=1)
        return 1.0 / (self.alpha * t)

    def reset(self, n_runs: int, rng: np.random.Generator) -> None:
        n_runs = check_int(n_runs, "n_runs", minimum=1)
        rng = check_generator(rng)
        self._point = starting_points(self.x1, self.domain, n_runs, self.dim, rng)
        self._t = 1

    def learn(self, loss: Loss) -> None:
        if self._point is None:
            raise RuntimeError("call reset(n_runs, rng) before learn()")
        if loss.dim != self.dim:
            raise ValueError(f"loss dimension {loss.dim} != learner dimension {self.dim}")
        eta = self.learning_rate(self._t)
        self._point = implicit_step(loss, self._point, eta, self.domain,
                                    extra_ridge=self.extra_ridge, tol=self.tol)
        self._t += 1
