"""POCP for an unknown horizon T (Algorithm 7, COLT 2012 version only).

Jain, Kothari & Thakurta, COLT 2012, Section 6.2 and Appendix F (Algorithm 7, Theorem 13); this
algorithm is absent from the arXiv version. With k = floor(log2 t), step t adds

    b_{t+1} ~ N(0, beta_t^2 / t^2 I),
    beta_t = lambda_A sqrt( 2^{k+1}/eps * (ln(2^k / delta) + sqrt(eps / 2^k)) )   (Alg. 7 line 7)

to the output x_{t+1} of the non-private OCP algorithm A, and releases x^_{t+1} = Pi_C(x~_{t+1}).
The noise makes step t (sqrt(eps/2^k), delta/2^k)-DP (App. F); Theorem 13 claims
(3 eps log2 T, delta log2 T + 2/T^{2 eps})-DP for the first T outputs.
"""

from __future__ import annotations

import math

import numpy as np

from dpaudit._validation import (check_delta, check_epsilon, check_int,
                                 check_positive)
from dpaudit.learners.base import OnlineLearner
from dpaudit.learners.domains import Domain
from dpaudit.learners.losses import Loss
from dpaudit.learners.pocp import OutputPerturbation, check_base_and_domain
from dpaudit.learners.starting_points import StartingPoint, check_starting_point
from dpaudit.mechanisms.gaussian import sample_gaussian

__all__ = ["doubling_beta", "POCPDoubling"]


def _check_open_delta(delta: object) -> float:
    delta = check_delta(delta)
    if delta == 0.0:
        raise ValueError("delta must be in (0, 1), got 0")
    return delta


def doubling_beta(t: int, lam: float, epsilon: float, delta: float) -> float:
    """beta_t of Algorithm 7 line 7 (noise at step t: N(0, beta_t^2/t^2 I)).

    ``beta_t = lambda sqrt(2^{k+1}/eps (ln(2^k/delta) + sqrt(eps/2^k)))``, k = floor(log2 t).

    Parameters
    ----------
    t : int
        Step, >= 1.
    lam : float
        lambda_A of assumption (1), > 0.
    epsilon : float
        > 0.
    delta : float
        In (0, 1).
    """
    t = check_int(t, "t", minimum=1)
    lam = check_positive(lam, "lam")
    epsilon = check_epsilon(epsilon)
    delta = _check_open_delta(delta)
    k = t.bit_length() - 1
    p = float(2 ** k)
    return lam * math.sqrt(2.0 * p / epsilon * (math.log(p / delta) + math.sqrt(epsilon / p)))


class POCPDoubling(OutputPerturbation):
    """Algorithm 7: POCP whose noise doubles its privacy budget schedule, for unknown T.

    Parameters
    ----------
    base : OnlineLearner
        The non-private OCP algorithm A.
    domain : Ball, Box or None
        C (``None``: R^d, no projection; needs a fixed ``x1_hat``).
    lam : float
        lambda_A, > 0.
    epsilon, delta : float
        eps > 0, delta in (0, 1).
    x1_hat : ``"uniform"`` or array_like, shape (d,)
        The first released point.
    """

    name = "POCP-doubling"
    private = True

    def __init__(self, base: OnlineLearner, domain: Domain | None, lam: float, epsilon: float,
                 delta: float, x1_hat: StartingPoint = "uniform") -> None:
        check_base_and_domain(base, domain)
        self.base = base
        self.domain = domain
        self.lam = check_positive(lam, "lam")
        self.epsilon = check_epsilon(epsilon)
        self.delta = _check_open_delta(delta)
        self.x1_hat = check_starting_point(x1_hat, domain, base.dim)
        self._point: np.ndarray | None = None
        self._rng: np.random.Generator | None = None
        self._t = 0

    def noise_std(self, t: int) -> float:
        """beta_t / t, the per-coordinate standard deviation of b_{t+1}."""
        return doubling_beta(t, self.lam, self.epsilon, self.delta) / check_int(t, "t", minimum=1)

    def learn(self, loss: Loss) -> None:
        if self._point is None or self._rng is None:
            raise RuntimeError("call reset(n_runs, rng) before learn()")
        if loss.dim != self.dim:
            raise ValueError(f"loss dimension {loss.dim} != learner dimension {self.dim}")
        t = self._t
        self.base.learn(loss)
        x_next = self.base.predict()
        noisy = x_next + sample_gaussian(self.noise_std(t), x_next.shape, self._rng)
        self._point = noisy if self.domain is None else self.domain.project(noisy)
        self._t += 1
