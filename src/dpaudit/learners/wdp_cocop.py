"""FTAL base scheme (pfcoco eqs. (6)-(10)) and WDP-COCOP (Algorithm 1), vectorised over runs.

Paper: "Projection-free window-DP COCO" (Web Intelligence 2020, ``pfcoco-window-tree.txt``).
The FTAL base scheme (Sec. II-C) plays the minimiser of eq. (8) over ``C``; the private version
replaces the gradient sum by the release of the window tree mechanism
(:mod:`dpaudit.mechanisms.window_tree`) on the clipped leaves ``grad f_tau(x~_tau)``: Option I,
l2-Laplace ("Gamma") node noise of Theorem 1 eq. (15); Option II, Gaussian node noise of Theorem 2
eq. (16), with the OCR'd power of ``ln`` a reading (``log_power``). The update is a reading
(``update``): eq. (9)'s exact minimiser ``Pi_C(mean(x~_1..x~_t) - g~_t / (mu t))`` (default) or
eq. (10) as printed, without the ``1/t``; privacy is post-processing of the gradient sums either
way. Released: ``x~_1, ..., x~_{T+1}`` (Sec. II-B); ``window=None`` (``W >= T``) is the
non-expiring private FTAL.

The scheme, both readings and the noise calibrations: docs/paper-readings.md#pfcoco-wdp-cocop.
"""

from __future__ import annotations

from typing import Literal, Sequence

import numpy as np

from dpaudit._validation import (
    check_delta,
    check_epsilon,
    check_finite_array,
    check_int,
    check_positive,
)
from dpaudit.learners.domains import Domain
from dpaudit.learners.ftal import FTAL
from dpaudit.learners.losses import Loss
from dpaudit.mechanisms.projections import clip_l2
from dpaudit.mechanisms.tree_aggregation import NodeNoise
from dpaudit.mechanisms.window_tree import (
    WindowLayout,
    WindowTreeAggregator,
    paper_gamma_noise,
    paper_gaussian_noise,
)

__all__ = ["FTALUpdate", "PrivacyOption", "pfcoco_ftal_update", "printed_sensitivity",
           "option_noise", "FTALScheme", "WindowTreeSum", "WDPCOCOP"]

FTALUpdate = Literal["exact", "printed"]
PrivacyOption = Literal["I", "II"]


def _check_update(update: object) -> str:
    if update not in ("exact", "printed"):
        raise ValueError(f"update must be 'exact' or 'printed', got {update!r}")
    return str(update)


def pfcoco_ftal_update(point_sum: np.ndarray, gradient_sum: np.ndarray, t: int,
                       strong_convexity: float, domain: Domain,
                       update: FTALUpdate = "exact") -> np.ndarray:
    """``x~_{t+1}`` from ``S_t = sum_{tau<=t} x~_tau`` and ``g~_t`` (pfcoco eqs. (9)-(10)).

    ``"exact"``: ``Pi_C(S_t / t - g~_t / (mu t))``, the minimiser of eq. (9);
    ``"printed"``: ``Pi_C(S_t - g~_t / mu)``, eq. (10) / Alg. 1 line 3 as printed.
    Shapes ``(..., d)``.
    """
    update = _check_update(update)
    t = check_int(t, "t", minimum=1)
    mu = check_positive(strong_convexity, "strong_convexity")
    S = check_finite_array(point_sum, "point_sum")
    g = check_finite_array(gradient_sum, "gradient_sum")
    if S.shape != g.shape:
        raise ValueError(f"point_sum and gradient_sum must have the same shape, got {S.shape} "
                         f"and {g.shape}")
    return _ftal_update(S, g, t, mu, domain, update)


def _ftal_update(S: np.ndarray, g: np.ndarray, t: int, mu: float, domain: Domain,
                 update: str) -> np.ndarray:
    """:func:`pfcoco_ftal_update` on arguments already validated (the learners' round loop: ``t``,
    ``mu`` and ``update`` are checked at construction, ``S`` and ``g`` are their own finite
    arrays; the domain's projection still rejects a non-finite argument)."""
    arg = S / t - g / (mu * t) if update == "exact" else S - g / mu
    return domain.project(arg)


def printed_sensitivity(lipschitz: float, strong_convexity: float, domain: Domain) -> float:
    """``L + mu D``: the l2 sensitivity the paper gives the window tree (Theorems 1, 2, 5)."""
    return (check_positive(lipschitz, "lipschitz")
            + check_positive(strong_convexity, "strong_convexity") * domain.diameter)


def option_noise(option: PrivacyOption, epsilon: float, delta: float, sensitivity: float, W: int,
                 *, log_power: Literal[1, 2] = 2) -> NodeNoise:
    """The printed node noise: Option I (Lemma 1 / Thm 1) or Option II (Lemma 3 / Thm 2)."""
    if option == "I":
        return paper_gamma_noise(epsilon, sensitivity, W)
    if option == "II":
        return paper_gaussian_noise(epsilon, delta, sensitivity, W, log_power=log_power)
    raise ValueError(f"option must be 'I' (Gamma) or 'II' (Gaussian), got {option!r}")


class FTALScheme(FTAL):
    """Non-private FTAL of pfcoco eqs. (6)-(10): the baseline of WDP-COCOP.

    Parameters
    ----------
    domain : Domain
        ``C``.
    strong_convexity : float
        ``mu`` > 0.
    lipschitz : float
        ``L`` > 0; every gradient is clipped to l2 norm ``L``.
    update : {"exact", "printed"}
        Eq. (9)'s exact minimiser (default) or eq. (10) as printed
        (docs/paper-readings.md#pfcoco-wdp-cocop).
    initial_point : array, shape ``(d,)``, optional
        ``x_1``; default ``Pi_C(0)``.
    """

    name = "FTAL (pfcoco eqs. 6-10)"
    private = False

    def __init__(self, domain: Domain, strong_convexity: float, lipschitz: float, *,
                 update: FTALUpdate = "exact", initial_point: np.ndarray | None = None) -> None:
        super().__init__(domain, strong_convexity, initial_point=initial_point)
        self._L = check_positive(lipschitz, "lipschitz")
        self._update = _check_update(update)

    @property
    def lipschitz(self) -> float:
        return self._L

    @property
    def update(self) -> str:
        return self._update

    def _tree_input(self, loss: Loss, w: np.ndarray) -> np.ndarray:
        return clip_l2(loss.grad(w), self._L)

    def learn(self, loss: Loss) -> None:
        w = self._require_started()
        self._check_loss(loss)
        g = self._accumulate(self._tree_input(loss, w))
        w_next = _ftal_update(self._S, g, self._t, self._H, self._domain, self._update)
        self._S += w_next  # the learner's own array: in place, the same sum
        self._w = w_next
        self._t += 1

    def release(self, losses: Sequence[Loss], n_runs: int, rng: np.random.Generator) -> np.ndarray:
        """The paper's release ``x~_1, ..., x~_{T+1}``, shape ``(n_runs, T + 1, d)``."""
        out = self.run(losses, n_runs, rng)
        return np.concatenate([out, self.predict()[:, None, :]], axis=1)


class WindowTreeSum:
    """The private gradient sum of pfcoco's learners: one window tree per
    :meth:`~dpaudit.learners.base.OnlineLearner.reset`.

    Mixed in before a learner whose ``_start`` / ``_accumulate`` hooks keep the gradient sum
    (:class:`WDPCOCOP`, :class:`~dpaudit.learners.wdp_cocol.WDPCOCOL`): it replaces the exact sum
    by the window tree's release ``g~_t`` (Alg. 1 line 2, Alg. 2 line 5) and refuses to learn
    more than ``T`` losses. The learner's ``__init__`` calls :meth:`_init_window_tree`.
    """

    dim: int
    _tree: WindowTreeAggregator | None = None

    def _init_window_tree(self, domain: Domain, strong_convexity: float, lipschitz: float,
                          horizon: int, window: int | None, option: PrivacyOption,
                          epsilon: float, delta: float, log_power: Literal[1, 2],
                          layout: WindowLayout, sensitivity: float | None,
                          noise: NodeNoise | None) -> None:
        self._T = check_int(horizon, "horizon", minimum=1)
        self._W = self._T if window is None else check_int(window, "window", minimum=1)
        self._epsilon = check_epsilon(epsilon)
        self._delta = check_delta(delta)
        self._option = option
        self._layout = layout
        self._sensitivity = (printed_sensitivity(lipschitz, strong_convexity, domain)
                             if sensitivity is None else check_positive(sensitivity, "sensitivity"))
        if noise is None:
            noise = option_noise(option, self._epsilon, self._delta, self._sensitivity, self._W,
                                 log_power=log_power)
        elif not isinstance(noise, NodeNoise):
            raise TypeError(f"noise must be a NodeNoise, got {type(noise).__name__}")
        self._noise = noise
        self._tree = None

    @property
    def horizon(self) -> int:
        return self._T

    @property
    def window(self) -> int:
        """``W`` (equal to ``T`` for the non-expiring baseline)."""
        return self._W

    @property
    def option(self) -> str:
        return self._option

    @property
    def noise(self) -> NodeNoise:
        return self._noise

    @property
    def sensitivity(self) -> float:
        """The l2 sensitivity the node noise is calibrated to."""
        return self._sensitivity

    @property
    def tree(self) -> WindowTreeAggregator:
        if self._tree is None:
            raise RuntimeError("call reset(n_runs, rng) first")
        return self._tree

    def _start(self, n_runs: int, rng: np.random.Generator) -> None:
        self._tree = WindowTreeAggregator(self._T, self._W, self.dim, self._noise, n_runs, rng,
                                          layout=self._layout)

    def _accumulate(self, z: np.ndarray) -> np.ndarray:
        tree = self.tree
        if tree.t >= self._T:
            raise ValueError(f"learn() called more than horizon T = {self._T} times")
        tree.add(z)
        return tree.prefix_sum()


class WDPCOCOP(WindowTreeSum, FTALScheme):
    """WDP-COCOP, pfcoco Algorithm 1 (Option I or II), vectorised over runs.

    Parameters
    ----------
    domain, strong_convexity, lipschitz, update, initial_point
        As for :class:`FTALScheme`.
    horizon : int
        ``T`` >= 1 (the window tree is built over ``T`` leaves).
    window : int or None
        ``W`` >= 1; ``None`` means ``W = T`` (the non-expiring baseline: the ordinary tree).
    option : {"I", "II"}
        Gamma (Theorem 1) or Gaussian (Theorem 2) node noise.
    epsilon, delta : float
        The claimed privacy parameters (``delta`` only for Option II, in (0, 1)).
    log_power : {1, 2}
        Option II: the power of ``ln(2/delta)`` in eq. (16) (default 2, the OCR reading).
    layout : {"exact", "power_of_two"}
        Window tree layout for ``W`` not a power of two (:mod:`dpaudit.mechanisms.window_tree`).
    sensitivity : float, optional
        The l2 sensitivity the noise is calibrated to; default the printed ``L + mu D``.
    noise : NodeNoise, optional
        Overrides the node noise entirely (tests: ``NodeNoise.none()``; planted bugs).
    """

    name = "WDP-COCOP"
    private = True

    def __init__(self, domain: Domain, strong_convexity: float, lipschitz: float, horizon: int,
                 window: int | None, *, option: PrivacyOption = "I", epsilon: float = 1.0,
                 delta: float = 0.0, log_power: Literal[1, 2] = 2,
                 update: FTALUpdate = "exact", layout: WindowLayout = "exact",
                 sensitivity: float | None = None, noise: NodeNoise | None = None,
                 initial_point: np.ndarray | None = None) -> None:
        FTALScheme.__init__(self, domain, strong_convexity, lipschitz, update=update,
                            initial_point=initial_point)
        self._init_window_tree(domain, strong_convexity, lipschitz, horizon, window, option,
                               epsilon, delta, log_power, layout, sensitivity, noise)
