"""Private Offline Learning (POL, Algorithm 6): IGD's average iterate plus Gaussian noise.

Jain, Kothari & Thakurta: COLT 2012 Section 5, Algorithm 6 (Appendix E), Theorem 5; arXiv version
Section 4.2, Algorithm 6, Theorem 10. Identical pseudo-code and calibration in both versions::

    C = {||x|| <= ||x*||} if C = R^d                                         (line 3)
    alpha = eps_g / ||x*||^2                                                  (line 5)
    x_{t+1} = argmin_C 1/2 ||x - x_t||^2 + eta_t (l(x; z_t) + alpha/2 ||x||^2),  eta_t = 1/(alpha t)
    x~ = (x_1 + ... + x_T) / T                                                (lines 6, 10, 12)
    x^ = Pi_C(x~ + b),  b ~ N(0, beta^2 I),
    beta = 2 sqrt(2) (L + alpha ||x*||) ln T / (T eps_p) * sqrt(ln(1/delta) + eps_p)   (line 13)

The released output is the single point x^ (``Release.FINAL``). The proof (COLT eq. (37), arXiv
eq. (35)) bounds the sensitivity of x~ by ``2 L' ln T / T`` with ``L' = L + alpha ||x*||`` (the
arXiv version ends the chain with ``2 L ln T / T``).
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import dp_accounting
import numpy as np

from dpaudit._validation import (check_delta, check_epsilon, check_generator, check_int,
                                 check_positive)
from dpaudit.neighbours import NeighbourRelation
from dpaudit.learners.domains import Ball, Box, Domain
from dpaudit.learners.igd import IGD
from dpaudit.learners.losses import Loss
from dpaudit.learners.starting_points import StartingPoint, check_starting_point
from dpaudit.mechanisms.base import Mechanism, Sensitivity
from dpaudit.mechanisms.gaussian import sample_gaussian

__all__ = ["pol_alpha", "pol_beta", "pol_printed_sensitivity", "POL"]


def pol_alpha(epsilon_g: float, x_star_norm: float) -> float:
    """alpha = eps_g / ||x*||^2 (Algorithm 6 line 5)."""
    return check_positive(epsilon_g, "epsilon_g") / check_positive(x_star_norm, "x_star_norm") ** 2


def pol_printed_sensitivity(T: int, L: float, alpha: float, x_star_norm: float) -> float:
    """The printed sensitivity of x~: ``2 L' ln T / T``, ``L' = L + alpha ||x*||`` (COLT (37))."""
    T = check_int(T, "T", minimum=2)
    lp = check_positive(L, "L") + check_positive(alpha, "alpha") * check_positive(x_star_norm,
                                                                                  "x_star_norm")
    return 2.0 * lp * math.log(T) / T


def pol_beta(T: int, L: float, alpha: float, x_star_norm: float, epsilon_p: float,
             delta: float) -> float:
    """beta of Algorithm 6 line 13 (both versions).

    ``beta = 2 sqrt(2) (L + alpha ||x*||) ln T / (T eps_p) * sqrt(ln(1/delta) + eps_p)``.
    """
    T = check_int(T, "T", minimum=2)
    epsilon_p = check_epsilon(epsilon_p, "epsilon_p")
    delta = check_delta(delta)
    if delta == 0.0:
        raise ValueError("delta must be in (0, 1), got 0")
    lp = check_positive(L, "L") + check_positive(alpha, "alpha") * check_positive(x_star_norm,
                                                                                  "x_star_norm")
    return (2.0 * math.sqrt(2.0) * lp * math.log(T) / (T * epsilon_p)
            * math.sqrt(math.log(1.0 / delta) + epsilon_p))


class POL(Mechanism):
    """Algorithm 6 as a mechanism on datasets of T losses ``l(.; z_t)``.

    ``sample(data, n, rng)`` takes the T losses and returns the released x^ of ``n`` independent
    runs, shape ``(n, d)``.

    Parameters
    ----------
    dim : int
        d >= 1.
    T : int
        Number of training points, >= 2.
    L : float
        Declared Lipschitz constant of the loss l over C, > 0 (enforced).
    epsilon_g : float
        Generalisation-error parameter, > 0 (sets alpha = eps_g / ||x*||^2).
    x_star_norm : float
        The public bound on ||x*||, > 0.
    epsilon_p : float
        Privacy parameter, > 0; the claim is (eps_p, delta)-DP (Theorem 5 COLT / 10 arXiv).
    delta : float
        In (0, 1).
    domain : Ball, Box or None
        C; ``None`` is R^d, replaced by the ball of radius ||x*|| (line 3).
    x1 : ``"uniform"`` or array_like, shape (d,)
        x_1 ("choose x_1 randomly from C").
    """

    name = "POL"

    def __init__(self, dim: int, T: int, L: float, epsilon_g: float, x_star_norm: float,
                 epsilon_p: float, delta: float, domain: Domain | None = None,
                 x1: StartingPoint = "uniform") -> None:
        self.dim = check_int(dim, "dim", minimum=1)
        self.T = check_int(T, "T", minimum=2)
        self.L = check_positive(L, "L")
        self.epsilon_g = check_positive(epsilon_g, "epsilon_g")
        self.x_star_norm = check_positive(x_star_norm, "x_star_norm")
        self.epsilon_p = check_epsilon(epsilon_p, "epsilon_p")
        self.delta = check_delta(delta)
        if domain is None:
            domain = Ball(self.dim, self.x_star_norm)
        if not isinstance(domain, (Ball, Box)):
            raise TypeError(f"domain must be a Ball, a Box or None, got {type(domain).__name__}")
        if domain.dim != self.dim:
            raise ValueError(f"domain dimension {domain.dim} != dim {self.dim}")
        self.domain = domain
        self.alpha = pol_alpha(self.epsilon_g, self.x_star_norm)
        self.beta = pol_beta(self.T, self.L, self.alpha, self.x_star_norm, self.epsilon_p,
                             self.delta)
        self.x1 = check_starting_point(x1, domain, self.dim)

    @property
    def sensitivity(self) -> Sensitivity:
        """The printed sensitivity of x~ (COLT eq. (37) / arXiv eq. (35)), which the audit tests."""
        return Sensitivity(pol_printed_sensitivity(self.T, self.L, self.alpha, self.x_star_norm),
                           "l2", NeighbourRelation.REPLACE_ONE,
                           "printed: ||x~ - x~'|| <= 2 (L + alpha ||x*||) ln T / T")

    def dp_event(self) -> dp_accounting.DpEvent:
        """One Gaussian release with noise multiplier beta / (printed sensitivity)."""
        return dp_accounting.GaussianDpEvent(self.beta / self.sensitivity.bound)

    def igd(self) -> IGD:
        """The IGD of lines 7-11 (eta_t = 1/(alpha t), ridge alpha added to every loss)."""
        return IGD(self.domain, self.alpha, self.x1, extra_ridge=self.alpha)

    def _check_data(self, data: Any) -> list[Loss]:
        losses = list(data) if isinstance(data, Sequence) else None
        if losses is None or len(losses) != self.T:
            raise ValueError(f"data must be a sequence of T={self.T} losses")
        for t, loss in enumerate(losses):
            if not isinstance(loss, Loss):
                raise TypeError(f"data[{t}] must be a dpaudit Loss, got {type(loss).__name__}")
            if loss.dim != self.dim:
                raise ValueError(f"data[{t}] has dimension {loss.dim} != {self.dim}")
            lip = loss.lipschitz(self.domain)
            if lip > self.L * (1 + 1e-9):
                raise ValueError(f"data[{t}] is outside the declared class: Lipschitz constant "
                                 f"{lip:.6g} over C exceeds the declared L={self.L:.6g}")
        return losses

    def average_iterate(self, data: Sequence[Loss], n: int, rng: np.random.Generator) -> np.ndarray:
        """The secret x~ = (x_1 + ... + x_T)/T of ``n`` runs, shape ``(n, d)`` (never released)."""
        losses = self._check_data(data)
        n = check_int(n, "n", minimum=1)
        rng = check_generator(rng)
        runs = n if isinstance(self.x1, str) else 1
        xs = self.igd().run(losses, runs, rng)
        return np.broadcast_to(xs.mean(axis=1), (n, self.dim)).copy()

    def sample(self, data: Any, n: int, rng: np.random.Generator) -> np.ndarray:
        rng = check_generator(rng)
        x_tilde = self.average_iterate(data, n, rng)
        return self.domain.project(x_tilde + sample_gaussian(self.beta, x_tilde.shape, rng))
