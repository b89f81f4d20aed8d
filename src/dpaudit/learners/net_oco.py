"""AFKT23 Theorem 3: DP-OCO by running Algorithm 1 on a rho-net of the ball.

Asi, Feldman, Koren & Talwar, ICML 2023 (``afkt23.txt``), Sec. 4.1, Theorem 3: ``X`` the l2 ball
of radius ``D`` in R^d, losses non-negative, convex, ``L``-Lipschitz; "running Algorithm 1 over
X_experts^rho with rho = 1/(LT) is (eps, delta)-DP". Readings, since the theorem does not spell
them out: the net is a square grid of spacing ``2 rho / sqrt(d)`` projected onto the ball
(practical for ``d <= 2``); expert losses are ``l_t(x^i) / (2 L D)``, clipped to ``[0, 1]``;
Algorithm 1 runs with Theorem 1's pure calibration at ``delta = 0``, its approximate one
otherwise. Released: the net points played, ``(n_runs, T, d)`` (:meth:`NetOco.run`), or their
indices (:meth:`NetOco.run_indices`).

Why the net covers the ball and the losses fit [0, 1]: docs/paper-readings.md#afkt23-net-oco.
"""

from __future__ import annotations

import itertools
import math
from typing import Sequence

import numpy as np

from dpaudit._validation import check_generator, check_int, check_positive
from dpaudit.learners.losses import Loss
from dpaudit.learners.sparse_vector_experts import (KReading, SparseVectorExperts,
                                                    algorithm1_parameters)
from dpaudit.mechanisms.projections import project_l2_ball

__all__ = ["ball_net", "NetOco"]


def ball_net(d: int, D: float, rho: float) -> np.ndarray:
    """A ``rho``-net of the l2 ball of radius ``D`` in R^d, shape ``(M, d)``.

    Why it covers the ball: docs/paper-readings.md#afkt23-net-oco.
    """
    d = check_int(d, "d", minimum=1, maximum=3)
    D = check_positive(D, "D")
    rho = check_positive(rho, "rho")
    h = 2.0 * rho / math.sqrt(d)
    m = int(math.ceil(D / h))
    axis = np.linspace(-m * h, m * h, 2 * m + 1)
    grid = np.array(list(itertools.product(axis, repeat=d)))
    pts = project_l2_ball(grid, D)
    return np.unique(np.round(pts, 12), axis=0)


class NetOco:
    """Theorem 3's learner: Algorithm 1 over :func:`ball_net` ``(d, D, 1/(L T))``."""

    name = "AFKT23-Thm3-net"
    private = True

    def __init__(self, epsilon: float, T: int, d: int, *, delta: float = 0.0, L: float = 1.0,
                 D: float = 1.0, beta: float = 0.1, L_star: float = 0.0, rho: float | None = None,
                 k_reading: KReading = "printed", noiseless: bool = False) -> None:
        self.T = check_int(T, "T", minimum=1)
        self.d = check_int(d, "d", minimum=1, maximum=2)
        self.L = check_positive(L, "L")
        self.D = check_positive(D, "D")
        self.rho = 1.0 / (self.L * self.T) if rho is None else check_positive(rho, "rho")
        self.net = ball_net(self.d, self.D, self.rho)
        self.params = algorithm1_parameters(epsilon, self.net.shape[0], self.T, beta=beta,
                                            L_star=L_star, delta=delta, k_reading=k_reading)
        self.experts = SparseVectorExperts(self.params, noiseless=noiseless)
        self.clipped_entries = 0

    def expert_losses(self, losses: Sequence[Loss]) -> np.ndarray:
        """Net losses scaled by ``1 / (2 L D)`` and clipped to [0, 1], shape ``(T, M)``."""
        losses = list(losses)
        if len(losses) != self.T:
            raise ValueError(f"losses must contain T={self.T} losses, got {len(losses)}")
        vals = np.stack([np.asarray(f.value(self.net), dtype=float) for f in losses])
        scaled = vals / (2.0 * self.L * self.D)
        self.clipped_entries = int(np.count_nonzero((scaled < 0) | (scaled > 1)))
        return np.clip(scaled, 0.0, 1.0)

    def run_indices(self, losses: Sequence[Loss], n_runs: int, rng: np.random.Generator) -> np.ndarray:
        """Indices into :attr:`net` of the points played, int64 ``(n_runs, T)``."""
        return self.experts.run(self.expert_losses(losses), n_runs, check_generator(rng))

    def run(self, losses: Sequence[Loss], n_runs: int, rng: np.random.Generator) -> np.ndarray:
        """Points played, ``(n_runs, T, d)``."""
        # np.take gathers whole rows; net[idx] (the same values) is ~10x slower for short rows.
        return np.take(self.net, self.run_indices(losses, n_runs, rng), axis=0)
