"""AFKT23 Algorithm 3: DP-FTRL (Kairouz et al. 2021) with Gaussian tree aggregation, Theorem 4.

Asi, Feldman, Koren & Talwar, ICML 2023 (``afkt23.txt``), Sec. 4.2, Algorithm 3: play
``x_t = argmin_{x in X} <gbar_{t-1}, x> + (lambda/2) ||x||^2``, i.e. the projection of
``-gbar_{t-1} / lambda`` on the l2 ball of radius ``D``, with ``gbar_{t-1}`` a binary tree estimate
of the gradient sum; Theorem 4 gives ``lambda`` and states "(eps, delta)-DP" but defers the noise
calibration to Kairouz et al. (2021, arXiv:2103.00039, App. B.1). The calibration taken from them
is a reading: gradients clipped to ``L``, ``N(0, sigma^2 I)`` per node, at most
``floor(log2 T) + 1`` nodes per example (:func:`max_nodes_per_leaf`), ``rho``-zCDP converted by
Bun & Steinke (2016, Prop. 1.3); ``sensitivity_reading`` takes the node shift as ``L`` (Kairouz et
al.) or ``2L`` (AFKT23's replace-one neighbours). Released: ``x_1..x_T``, shape ``(n_runs, T, d)``.

The algorithm, Theorem 4 and the calibration in full: docs/paper-readings.md#afkt23-dp-ftrl.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Literal, Sequence

import numpy as np

from dpaudit._rowwise import mul_rows, row_norm
from dpaudit._validation import check_delta, check_epsilon, check_generator, check_int, check_positive
from dpaudit.learners.losses import Loss
from dpaudit.mechanisms.projections import project_l2_ball
from dpaudit.mechanisms.tree_aggregation import NodeNoise, TreeAggregator, max_nodes_per_leaf

__all__ = ["SensitivityReading", "DpFtrlParameters", "dp_ftrl_parameters", "zcdp_rho_for",
           "DpFtrl"]

SensitivityReading = Literal["L", "2L"]


def zcdp_rho_for(epsilon: float, delta: float) -> float:
    """The ``rho`` with ``rho + 2 sqrt(rho ln(1/delta)) = epsilon`` (Bun & Steinke 2016, Prop. 1.3)."""
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    if delta == 0.0:
        raise ValueError("delta must be > 0 for a zCDP conversion")
    a = math.log(1.0 / delta)
    return (math.sqrt(a + epsilon) - math.sqrt(a)) ** 2


@dataclass(frozen=True)
class DpFtrlParameters:
    """Theorem 4's ``lambda`` and our Kairouz et al. noise calibration."""

    epsilon: float
    delta: float
    T: int
    d: int
    L: float
    D: float
    beta: float
    lam: float
    sigma: float
    nodes_per_leaf: int
    sensitivity_reading: str

    def to_dict(self) -> dict:
        return asdict(self)


def dp_ftrl_parameters(epsilon: float, delta: float, T: int, d: int, *, L: float = 1.0, D: float = 1.0,
                       beta: float = 1.0, sensitivity_reading: SensitivityReading = "L") -> DpFtrlParameters:
    """Theorem 4's ``lambda`` (natural logs) and ``sigma`` from the zCDP calibration.

    The calibration: docs/paper-readings.md#afkt23-dp-ftrl.
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    if delta == 0.0:
        raise ValueError("delta must lie in (0, 1) (Theorem 4 is an (eps, delta) claim)")
    T = check_int(T, "T", minimum=2)
    d = check_int(d, "d", minimum=1)
    L = check_positive(L, "L")
    D = check_positive(D, "D")
    beta = check_positive(beta, "beta")
    if sensitivity_reading not in ("L", "2L"):
        raise ValueError(f"sensitivity_reading must be 'L' or '2L', got {sensitivity_reading!r}")
    lam = 32 * beta + ((beta / epsilon**2) * (L / D) ** 2 * T * d * math.log(T) * math.log(1 / delta)) ** (1 / 3)
    h = max_nodes_per_leaf(T)
    shift = L if sensitivity_reading == "L" else 2 * L
    sigma = shift * math.sqrt(h / (2 * zcdp_rho_for(epsilon, delta)))
    return DpFtrlParameters(epsilon=epsilon, delta=delta, T=T, d=d, L=L, D=D, beta=beta, lam=lam,
                            sigma=sigma, nodes_per_leaf=h, sensitivity_reading=sensitivity_reading)


class DpFtrl:
    """Algorithm 3, vectorised over runs. ``sigma = 0`` (``noiseless=True``) is non-private FTRL,
    i.e. lazy projected online gradient descent with step ``1/lambda``."""

    name = "AFKT23-Alg3-DP-FTRL"
    private = True

    def __init__(self, params: DpFtrlParameters, *, noiseless: bool = False) -> None:
        if not isinstance(params, DpFtrlParameters):
            raise TypeError("params must be a DpFtrlParameters (use dp_ftrl_parameters(...))")
        self.params = params
        self.noiseless = bool(noiseless)

    def _clip(self, g: np.ndarray) -> np.ndarray:
        """``g * min(1, L / max(||g||, 1e-300))`` row-wise (the factor computed in place)."""
        factor = row_norm(g)
        np.maximum(factor, 1e-300, out=factor)
        np.divide(self.params.L, factor, out=factor)
        np.minimum(1.0, factor, out=factor)
        return mul_rows(g, factor)

    def run(self, losses: Sequence[Loss], n_runs: int, rng: np.random.Generator) -> np.ndarray:
        """Released points, shape ``(n_runs, T, d)``."""
        p = self.params
        n_runs = check_int(n_runs, "n_runs", minimum=1)
        rng = check_generator(rng)
        losses = list(losses)
        if len(losses) != p.T:
            raise ValueError(f"losses must contain T={p.T} losses, got {len(losses)}")
        for f in losses:
            if not isinstance(f, Loss) or f.dim != p.d:
                raise TypeError(f"every loss must be a dpaudit Loss of dimension d={p.d}")
        noise = NodeNoise.none() if self.noiseless else NodeNoise.gaussian(p.sigma)
        tree = TreeAggregator(p.T, p.d, noise, n_runs, rng)
        out = np.empty((n_runs, p.T, p.d))
        x = np.zeros((n_runs, p.d))
        for t, f in enumerate(losses):
            out[:, t] = x
            tree.add(self._clip(f.grad(x)))
            pre = tree.prefix_sum()  # a fresh copy: scaled in place (-a / lam == a / -lam exactly)
            x = project_l2_ball(np.divide(pre, -p.lam, out=pre), p.D)
        return out

    def __call__(self, losses: Sequence[Loss], n: int, rng: np.random.Generator) -> np.ndarray:
        return self.run(losses, n, rng)
