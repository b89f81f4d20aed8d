"""Generalized Infinitesimal Gradient Ascent (GIGA), the non-private learner behind PGIGA.

Zinkevich (ICML 2003), in the form Jain, Kothari & Thakurta use it: COLT 2012 Appendix C,
Algorithm 3 lines 2-7; arXiv version Section 3.4, Algorithm 3 (identical in both versions)::

    t_q = 2 L_G^2 / alpha^2                        (burn-in; Algorithm 3 line 2)
    x_1, ..., x_{t_q} chosen randomly from C        (line 3; see the reading below)
    x_{t+1} = Pi_C(x_t - eta_t grad f_t(x_t)),  eta_t = 2 / (alpha t),  for t = t_q, ..., T - 1.

Reading choices (the printed algorithm is ambiguous):

* ``t_q = 2 L_G^2/alpha^2`` is not an integer in general; dpaudit uses ``ceil(2 L_G^2/alpha^2)``.
* Line 3 chooses x_1..x_{t_q - 1} at random but the loop starts at t = t_q and needs x_{t_q}; the
  base case of Lemma 5 ("x_1, ..., x_{t_q} are selected randomly") is followed: x_1..x_{t_q} are all
  random (independent uniform points of C, or the fixed point ``x1``), and the losses
  f_1..f_{t_q - 1} are never used.
"""

from __future__ import annotations

import math

import numpy as np

from dpaudit._validation import check_generator, check_int, check_positive
from dpaudit.learners.base import RoundCounting, StoredPointRelease
from dpaudit.learners.domains import Ball, Box, Domain
from dpaudit.learners.losses import HingeLoss, LinearLoss, LogisticLoss, Loss, SquaredLoss
from dpaudit.learners.starting_points import StartingPoint, check_starting_point, starting_points

__all__ = ["GIGA", "gradient_lipschitz", "giga_burn_in"]


def gradient_lipschitz(loss: Loss) -> float:
    """L_G: the Lipschitz constant of grad f over R^d (exact for these quadratic-type losses).

    linear: ridge (0); squared: ||v||^2 + ridge; logistic: ||v||^2 / 4 + ridge. The hinge loss is
    not differentiable and has no L_G (JKT12 App. C requires differentiable losses).
    """
    ridge = float(getattr(loss, "ridge", 0.0))
    if isinstance(loss, LinearLoss):
        return ridge
    if isinstance(loss, SquaredLoss):
        return float(loss.v @ loss.v) + ridge
    if isinstance(loss, LogisticLoss):
        return float(loss.v @ loss.v) / 4.0 + ridge
    if isinstance(loss, HingeLoss):
        raise ValueError("the hinge loss is not differentiable: GIGA needs a Lipschitz gradient "
                         "(JKT12 COLT App. C / arXiv Sec. 3.4)")
    raise TypeError(f"unsupported loss type {type(loss).__name__}")


def giga_burn_in(alpha: float, smoothness: float) -> int:
    """t_q = ceil(2 L_G^2 / alpha^2) (JKT12 Algorithm 3 line 2; ceiling is dpaudit's reading)."""
    alpha = check_positive(alpha, "alpha")
    smoothness = check_positive(smoothness, "smoothness")
    if smoothness < alpha * (1 - 1e-12):
        raise ValueError(f"smoothness L_G={smoothness!r} must be >= alpha={alpha!r} (an "
                         "alpha-strongly convex function has an at least alpha-Lipschitz gradient)")
    # Guard the ceiling against floating-point noise (2 * (1.0)^2 must give 2, not 3).
    q = 2.0 * (smoothness / alpha) ** 2
    return max(1, math.ceil(q - 1e-9 * q))


class GIGA(StoredPointRelease, RoundCounting):
    """Projected gradient descent with ``eta_t = 2/(alpha t)`` after a random burn-in.

    Parameters
    ----------
    domain : Ball or Box
        The convex set C.
    alpha : float
        Strong-convexity parameter, > 0.
    smoothness : float
        L_G, the declared Lipschitz constant of the gradients, >= alpha; sets the burn-in t_q.
    x1 : ``"uniform"`` or array_like, shape (d,)
        How the burn-in points x_1..x_{t_q} are chosen: independently uniform on C per run, or all
        equal to a fixed point of C.

    Notes
    -----
    ``predict()`` returns x_t, shape ``(n_runs, d)``. ``learn(f_t)`` ignores f_t for t < t_q.
    """

    name = "GIGA"
    private = False

    def __init__(self, domain: Domain, alpha: float, smoothness: float,
                 x1: StartingPoint = "uniform") -> None:
        if not isinstance(domain, (Ball, Box)):
            raise TypeError(f"domain must be a Ball or a Box, got {type(domain).__name__}")
        self.domain = domain
        self.alpha = check_positive(alpha, "alpha")
        self.smoothness = check_positive(smoothness, "smoothness")
        self.t_q = giga_burn_in(self.alpha, self.smoothness)
        self.x1 = check_starting_point(x1, domain, domain.dim)
        self._point: np.ndarray | None = None
        self._rng: np.random.Generator | None = None
        self._t = 0

    @property
    def dim(self) -> int:
        return self.domain.dim

    def learning_rate(self, t: int) -> float:
        """eta_t = 2 / (alpha t) (Algorithm 3 line 6)."""
        t = check_int(t, "t", minimum=1)
        return 2.0 / (self.alpha * t)

    def reset(self, n_runs: int, rng: np.random.Generator) -> None:
        n_runs = check_int(n_runs, "n_runs", minimum=1)
        self._rng = check_generator(rng)
        self._point = starting_points(self.x1, self.domain, n_runs, self.dim, self._rng)
        self._t = 1

    def learn(self, loss: Loss) -> None:
        if self._point is None or self._rng is None:
            raise RuntimeError("call reset(n_runs, rng) before learn()")
        if loss.dim != self.dim:
            raise ValueError(f"loss dimension {loss.dim} != learner dimension {self.dim}")
        gradient_lipschitz(loss)  # rejects non-differentiable losses
        t = self._t
        if t + 1 <= self.t_q:
            # Burn-in: x_{t+1} is another random point of C (line 3, Lemma 5's base case).
            self._point = starting_points(self.x1, self.domain, self._point.shape[0], self.dim,
                                          self._rng)
        else:
            step = self._point - self.learning_rate(t) * loss.grad(self._point)
            self._point = self.domain.project(step)
        self._t += 1
