"""WDP-COCOL (pfcoco Algorithm 2, projection-free) and its non-private baseline, vectorised.

Paper: "Projection-free window-DP COCO" (Web Intelligence 2020, ``pfcoco-window-tree.txt``),
Sec. III-D, eqs. (17)-(18), Assumption 1, Algorithm 2, Theorem 5. Algorithm 2 keeps the private
gradient sum of the window tree (as WDP-COCOP: :class:`~dpaudit.learners.wdp_cocop.WindowTreeSum`)
and, instead of minimising eq. (18) exactly, makes one local-linear-oracle step from ``x~_t``
(lines 7-8). The constants on lines 1-3 and 6 are garbled in the OCR: the oracle direction
(``direction``) is a reading, and the constants (:class:`COCOLConstants`, every one a parameter)
default to a self-consistent schedule derived here (``alpha = 1 / (2 rho^2)``,
``C0 = 8 rho^2``, ``C1 = 128 rho^4 G^2 / mu``, ``C_W`` from :func:`noise_increment_bound`). Privacy
depends on none of these: the learner touches the losses only through the window tree's clipped
inputs ``grad f_t(x~_t)``. Released: ``x~_1, ..., x~_{T+1}``.

The oracle direction, the derivation of the constants and the invariant they keep:
docs/paper-readings.md#pfcoco-wdp-cocol.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, Sequence

import numpy as np
from scipy import stats

from dpaudit._validation import (
    check_generator,
    check_int,
    check_nonnegative,
    check_positive,
    check_probability,
)
from dpaudit.learners.base import OnlineLearner
from dpaudit.learners.domains import Domain
from dpaudit.learners.ftal import first_point
from dpaudit.learners.lloo import LocalLinearOracle, lloo_for
from dpaudit.learners.losses import Loss
from dpaudit.learners.wdp_cocop import PrivacyOption, WindowTreeSum
from dpaudit.mechanisms.projections import clip_l2
from dpaudit.mechanisms.tree_aggregation import NodeNoise
from dpaudit.mechanisms.window_tree import WindowLayout

__all__ = ["OracleDirection", "COCOLConstants", "noise_increment_bound", "derived_constants",
           "OnlineCG", "WDPCOCOL"]

OracleDirection = Literal["gradient", "printed"]


@dataclass(frozen=True)
class COCOLConstants:
    """Algorithm 2's constants: ``rho``, ``alpha``, ``C0``, ``C1``, ``C_W``.

    Their derivation: docs/paper-readings.md#pfcoco-wdp-cocol.
    """

    rho: float
    alpha: float
    C0: float
    C1: float
    C_W: float = 0.0

    def __post_init__(self) -> None:
        check_positive(self.rho, "rho")
        a = check_positive(self.alpha, "alpha")
        if a > 1.0:
            raise ValueError(f"alpha must be in (0, 1], got {a}")
        check_nonnegative(self.C0, "C0")
        check_nonnegative(self.C1, "C1")
        check_nonnegative(self.C_W, "C_W")

    def radius(self, t: int, strong_convexity: float) -> float:
        """``r_t = sqrt(2 C1 / mu) / (t + C0)``."""
        t = check_int(t, "t", minimum=1)
        mu = check_positive(strong_convexity, "strong_convexity")
        return math.sqrt(2.0 * self.C1 / mu) / (t + self.C0)


def noise_increment_bound(noise: NodeNoise, d: int, W: int, sensitivity: float, *,
                          beta: float = 0.05) -> float:
    """``C_W``: a ``1 - beta`` bound on ``||noise(g~_t) - noise(g~_{t-1})||`` over ``L + mu D``.

    Union bound over ``m = 2 (ceil(log2 W) + 1)`` node noises (two covers of the window), each
    below its ``1 - beta / m`` norm quantile: ``Gamma(d, s)`` (l2-Laplace, scale ``s``) or
    ``sigma chi_d`` (Gaussian). ``NodeNoise.none()`` gives 0.
    """
    d = check_int(d, "d", minimum=1)
    W = check_int(W, "W", minimum=1)
    sensitivity = check_positive(sensitivity, "sensitivity")
    beta = check_probability(beta, "beta")
    m = 2 * ((W - 1).bit_length() + 1)
    if noise.kind == "none":
        return 0.0
    if noise.kind == "l2-laplace":
        per_node = noise.scale * stats.gamma.ppf(1.0 - beta / m, d)
    elif noise.kind == "gaussian":
        per_node = noise.scale * math.sqrt(stats.chi2.ppf(1.0 - beta / m, d))
    else:
        raise ValueError(f"noise kind {noise.kind!r} is not used by WDP-COCOL")
    return m * per_node / sensitivity


def derived_constants(rho: float, lipschitz: float, strong_convexity: float, diameter: float,
                      C_W: float = 0.0) -> COCOLConstants:
    """The self-consistent defaults derived in docs/paper-readings.md#pfcoco-wdp-cocol.

    ``alpha = 1/(2 rho^2)``, ``C0 = 8 rho^2``, ``C1 = 128 rho^4 G^2 / mu`` with
    ``G = (L + mu D)(1 + C_W)``.
    """
    rho = check_positive(rho, "rho")
    L = check_positive(lipschitz, "lipschitz")
    mu = check_positive(strong_convexity, "strong_convexity")
    D = check_nonnegative(diameter, "diameter")
    C_W = check_nonnegative(C_W, "C_W")
    G = (L + mu * D) * (1.0 + C_W)
    return COCOLConstants(rho=rho, alpha=min(1.0, 1.0 / (2.0 * rho**2)), C0=8.0 * rho**2,
                          C1=128.0 * rho**4 * G**2 / mu, C_W=C_W)


def _check_direction(direction: object) -> str:
    if direction not in ("gradient", "printed"):
        raise ValueError(f"direction must be 'gradient' or 'printed', got {direction!r}")
    return str(direction)


class OnlineCG(OnlineLearner):
    """Non-private online conditional gradient of Algorithm 2 (exact ``g_t``): the baseline.

    Parameters
    ----------
    domain : Domain
        The polytope ``P`` (:class:`~dpaudit.learners.domains.Simplex` or ``Box``).
    strong_convexity : float
        ``mu`` > 0.
    lipschitz : float
        ``L`` > 0; gradients are clipped to l2 norm ``L``.
    constants : COCOLConstants, optional
        Default :func:`derived_constants` with the oracle's ``rho`` and ``C_W = 0``.
    direction : {"gradient", "printed"}
        The oracle argument (docs/paper-readings.md#pfcoco-wdp-cocol).
    oracle : LocalLinearOracle, optional
        Default :func:`~dpaudit.learners.lloo.lloo_for` ``(domain)``.
    initial_point : array, optional
        ``x~_1``; default ``Pi_P(0)``.
    """

    name = "online CG (non-private)"
    private = False

    def __init__(self, domain: Domain, strong_convexity: float, lipschitz: float, *,
                 constants: COCOLConstants | None = None, direction: OracleDirection = "gradient",
                 oracle: LocalLinearOracle | None = None,
                 initial_point: np.ndarray | None = None) -> None:
        self._x1 = first_point(domain, initial_point)
        self._domain = domain
        self._mu = check_positive(strong_convexity, "strong_convexity")
        self._L = check_positive(lipschitz, "lipschitz")
        self._oracle = lloo_for(domain) if oracle is None else oracle
        self._constants = (self._default_constants() if constants is None else constants)
        if not isinstance(self._constants, COCOLConstants):
            raise TypeError("constants must be a COCOLConstants")
        self._direction = _check_direction(direction)
        self._x: np.ndarray | None = None
        self._t = 0

    def _default_constants(self) -> COCOLConstants:
        return derived_constants(self._oracle.rho, self._L, self._mu, self._domain.diameter)

    @property
    def dim(self) -> int:
        return self._domain.dim

    @property
    def constants(self) -> COCOLConstants:
        return self._constants

    @property
    def t(self) -> int:
        return self._t

    def _start(self, n_runs: int, rng: np.random.Generator) -> None:
        self._g = np.zeros((n_runs, self.dim))

    def _accumulate(self, z: np.ndarray) -> np.ndarray:
        self._g = self._g + z
        return self._g

    def reset(self, n_runs: int, rng: np.random.Generator) -> None:
        n_runs = check_int(n_runs, "n_runs", minimum=1)
        check_generator(rng)
        self._x = np.broadcast_to(self._x1, (n_runs, self.dim)).copy()
        self._S = self._x.copy()
        self._t = 1
        self._start(n_runs, rng)

    def predict(self) -> np.ndarray:
        if self._x is None:
            raise RuntimeError("call reset(n_runs, rng) before predict() or learn()")
        return self._x.copy()

    def oracle_direction(self, g: np.ndarray) -> np.ndarray:
        """``c_t`` for the current round from the gradient sum ``g`` (see ``direction``)."""
        x, S, t, C0, mu = self._x, self._S, self._t, self._constants.C0, self._mu
        if self._direction == "gradient":
            return g + mu * (t + C0) * x - mu * (S + C0 * self._x1)
        return S + C0 * x - g / mu

    def learn(self, loss: Loss) -> None:
        if self._x is None:
            raise RuntimeError("call reset(n_runs, rng) before predict() or learn()")
        if not isinstance(loss, Loss):
            raise TypeError(f"loss must be a Loss, got {type(loss).__name__}")
        if loss.dim != self.dim:
            raise ValueError(f"loss dimension {loss.dim} != domain dimension {self.dim}")
        g = self._accumulate(clip_l2(loss.grad(self._x), self._L))
        r = self._constants.radius(self._t, self._mu)
        p = self._oracle(self._x, r, self.oracle_direction(g))
        a = self._constants.alpha
        x_next = (1.0 - a) * self._x + a * p
        self._S += x_next  # the learner's own array: in place, the same sum
        self._x = x_next
        self._t += 1

    def release(self, losses: Sequence[Loss], n_runs: int, rng: np.random.Generator) -> np.ndarray:
        """The paper's release ``x~_1, ..., x~_{T+1}``, shape ``(n_runs, T + 1, d)``."""
        out = self.run(losses, n_runs, rng)
        return np.concatenate([out, self.predict()[:, None, :]], axis=1)


class WDPCOCOL(WindowTreeSum, OnlineCG):
    """WDP-COCOL, pfcoco Algorithm 2 (Option I or II), vectorised over runs.

    Parameters as :class:`OnlineCG` plus ``horizon``, ``window`` (``None``: ``W = T``),
    ``option``, ``epsilon``, ``delta``, ``log_power``, ``layout``, ``sensitivity``, ``noise`` as
    :class:`~dpaudit.learners.wdp_cocop.WDPCOCOP`; ``beta`` is the failure probability of the
    default ``C_W`` (:func:`noise_increment_bound`).
    """

    name = "WDP-COCOL"
    private = True

    def __init__(self, domain: Domain, strong_convexity: float, lipschitz: float, horizon: int,
                 window: int | None, *, option: PrivacyOption = "I", epsilon: float = 1.0,
                 delta: float = 0.0, log_power: Literal[1, 2] = 2, layout: WindowLayout = "exact",
                 sensitivity: float | None = None, noise: NodeNoise | None = None,
                 constants: COCOLConstants | None = None, direction: OracleDirection = "gradient",
                 oracle: LocalLinearOracle | None = None, beta: float = 0.05,
                 initial_point: np.ndarray | None = None) -> None:
        self._init_window_tree(domain, strong_convexity, lipschitz, horizon, window, option,
                               epsilon, delta, log_power, layout, sensitivity, noise)
        self._beta = check_probability(beta, "beta")
        OnlineCG.__init__(self, domain, strong_convexity, lipschitz, constants=constants,
                          direction=direction, oracle=oracle, initial_point=initial_point)

    def _default_constants(self) -> COCOLConstants:
        C_W = noise_increment_bound(self._noise, self._domain.dim, self._W, self._sensitivity,
                                    beta=self._beta)
        return derived_constants(self._oracle.rho, self._L, self._mu, self._domain.diameter, C_W)
