"""Follow the Approximate Leader (FTAL), non-private, as in Smith & Thakurta, NeurIPS 2013, eq. (4).

FTAL (Hazan, Agarwal & Kale, Machine Learning 69, 2007, in the form of ST13 Sec. 2.1) replaces
each loss by its quadratic lower bound at the point played (ST13 eq. (3)) and plays the leader of
these approximations (eq. (4)): ``argmin_{w in C} <v_t, w> + H/2 sum_{tau<=t} ||w - w_tau||^2``
with ``v_t`` the gradient sum. Completing the square gives the closed form used by every FTAL-type
learner of the project, the projection ``w_{t+1} = Pi_C(m_t - v_t / (H t))`` of the running mean
``m_t`` of the points played shifted by ``v_t / (H t)``: :func:`ftal_argmin`, which the tests
check against a numerical argmin (scipy). Source: ``st13.txt``, Sec. 2.1, eqs. (3)-(5).

The derivation of the closed form: docs/paper-readings.md#st13-ftal.
"""

from __future__ import annotations

import numpy as np

from dpaudit._validation import (
    check_finite_array,
    check_generator,
    check_int,
    check_positive,
)
from dpaudit.learners.base import RoundCounting
from dpaudit.learners.domains import Domain
from dpaudit.learners.losses import Loss

__all__ = ["ftal_argmin", "FTALBase", "FTAL"]


def ftal_argmin(point_sum: np.ndarray, gradient_sum: np.ndarray, t: int, strong_convexity: float,
                domain: Domain) -> np.ndarray:
    """``argmin_{w in C} <v, w> + H/2 sum_{tau<=t} ||w - w_tau||^2`` in closed form (ST13 eq. (4)).

    Parameters
    ----------
    point_sum : array, shape ``(..., d)``
        ``S_t = sum_{tau=1}^{t} w_tau`` (one row per run).
    gradient_sum : array, shape ``(..., d)``
        ``v_t``: the (exact or noisy) sum of the gradients ``grad f_tau(w_tau)``, ``tau <= t``.
    t : int
        Number of points in the sum, >= 1.
    strong_convexity : float
        ``H`` > 0.
    domain : Domain
        The convex set ``C``.

    Returns
    -------
    numpy.ndarray, shape ``(..., d)``
        ``Pi_C(S_t / t - v_t / (H t))`` (the derivation: docs/paper-readings.md#st13-ftal).
    """
    t = check_int(t, "t", minimum=1)
    H = check_positive(strong_convexity, "strong_convexity")
    S = check_finite_array(point_sum, "point_sum")
    v = check_finite_array(gradient_sum, "gradient_sum")
    if S.shape != v.shape:
        raise ValueError(f"point_sum and gradient_sum must have the same shape, got {S.shape} "
                         f"and {v.shape}")
    return domain.project(S / t - v / (H * t))


def first_point(domain: Domain, initial_point: object | None) -> np.ndarray:
    """The first point played: ``initial_point`` (must lie in C) or ``Pi_C(0)``."""
    if not isinstance(domain, Domain):
        raise TypeError(f"domain must be a Domain, got {type(domain).__name__}")
    if initial_point is None:
        return domain.project(np.zeros(domain.dim))
    w = check_finite_array(initial_point, "initial_point", shape=(domain.dim,))
    if not bool(domain.contains(w)):
        raise ValueError("initial_point must lie in the domain C")
    return w


class FTALBase(RoundCounting):
    """What full-information and bandit FTAL share (ST13 eqs. (4) and (8)).

    The set ``C`` (``_domain``), the curvature ``H`` (``_H``), the first point ``_w1``, the
    current points ``_w`` (``None`` before :meth:`reset`) and their sum ``_S``, and the running
    gradient sum ``v_t`` kept by two hooks, :meth:`_start` and :meth:`_accumulate`, which the
    private variants replace with the noisy sums of Algorithm 2
    (:class:`~dpaudit.learners.pftal.Algorithm2Sum`).
    """

    _domain: Domain
    _H: float
    _w1: np.ndarray
    _w: np.ndarray | None = None
    _S: np.ndarray | None = None

    @property
    def dim(self) -> int:
        return self._domain.dim

    @property
    def domain(self) -> Domain:
        return self._domain

    @property
    def strong_convexity(self) -> float:
        """``H``."""
        return self._H

    def _start(self, n_runs: int, rng: np.random.Generator) -> None:
        """Initialise the gradient-sum machinery for ``n_runs`` runs."""
        self._v = np.zeros((n_runs, self.dim))

    def _accumulate(self, z: np.ndarray) -> np.ndarray:
        """Add ``z`` to the running sum and return the sum ``v_t`` (exact here)."""
        self._v = self._v + z
        return self._v

    def reset(self, n_runs: int, rng: np.random.Generator) -> None:
        """Start ``n_runs`` runs at ``w_1`` (``_w1``), with the point sum ``S`` (``_S``) at
        ``w_1`` and a fresh gradient sum (:meth:`_start`)."""
        n_runs = check_int(n_runs, "n_runs", minimum=1)
        check_generator(rng)
        self._w = np.broadcast_to(self._w1, (n_runs, self.dim)).copy()
        self._S = self._w.copy()
        self._t = 1
        self._start(n_runs, rng)

    def _require_started(self) -> np.ndarray:
        if self._w is None:
            raise RuntimeError("call reset(n_runs, rng) before predict() or learn()")
        return self._w

    def _check_loss(self, loss: Loss) -> None:
        if not isinstance(loss, Loss):
            raise TypeError(f"loss must be a Loss, got {type(loss).__name__}")
        if loss.dim != self.dim:
            raise ValueError(f"loss dimension {loss.dim} != domain dimension {self.dim}")


class FTAL(FTALBase):
    """Non-private Follow the Approximate Leader (ST13 eq. (4)), vectorised over runs.

    Parameters
    ----------
    domain : Domain
        The convex set ``C`` (dimension ``d``).
    strong_convexity : float
        ``H`` > 0, the strong convexity of the losses (the curvature of the approximations (3)).
    initial_point : array, shape ``(d,)``, optional
        ``w_1`` ("any vector from C"); default ``Pi_C(0)`` (the origin for balls and boxes).

    Notes
    -----
    Round ``t``: :meth:`predict` returns ``w_t`` (shape ``(n_runs, d)``); :meth:`learn` evaluates
    ``grad f_t(w_t)``, adds it to the running sum and moves to ``w_{t+1}`` = :func:`ftal_argmin`.
    No randomness is used (``rng`` is accepted for the common interface and ignored).
    """

    name = "FTAL"
    private = False

    def __init__(self, domain: Domain, strong_convexity: float, *,
                 initial_point: np.ndarray | None = None) -> None:
        self._w1 = first_point(domain, initial_point)
        self._domain = domain
        self._H = check_positive(strong_convexity, "strong_convexity")
        self._w: np.ndarray | None = None
        self._S: np.ndarray | None = None
        self._t = 0

    @property
    def initial_point(self) -> np.ndarray:
        return self._w1.copy()

    # -- hooks for the private and regularised variants ------------------------------------------
    def _tree_input(self, loss: Loss, w: np.ndarray) -> np.ndarray:
        """The vector whose running sum the learner keeps: ``grad f_t(w_t)``, shape (n_runs, d)."""
        return loss.grad(w)

    # -- OnlineLearner ---------------------------------------------------------------------------
    def predict(self) -> np.ndarray:
        return self._require_started().copy()

    def learn(self, loss: Loss) -> None:
        w = self._require_started()
        self._check_loss(loss)
        z = self._tree_input(loss, w)
        v = self._accumulate(z)
        w_next = ftal_argmin(self._S, v, self._t, self._H, self._domain)
        self._S = self._S + w_next
        self._w = w_next
        self._t += 1
