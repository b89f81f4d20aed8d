"""Bandit Follow the Approximate Leader, non-private and private (Smith & Thakurta, NeurIPS 2013).

ST13 Sec. 3: ``rB^p subset C subset RB^p``, losses with ``|f_t(w)| <= B`` on ``C``, and only the
value of ``f_t`` at the played point observed. The one-point gradient estimate
``(p / beta) f_t(w~_t + beta u_t) u_t`` (Flaxman, Kalai & McMahan, SODA 2005) feeds FTAL over the
shrunk set ``(1 - xi) C`` (Sec. 3.1, eq. (8)); the private learner replaces its sum with the noisy
partial sums of Algorithm 2, each input clipped to ``pB/beta`` (Sec. 3.2, eq. (9), App. E.1
Algorithm 3). The release is the played points ``w^_t = w^dagger_t + beta u_t`` only (Sec. 3.1
step 2; ``u_t`` and ``w^dagger_t`` stay secret). App. E.3 runs it on ``f_t + H/2 ||w||^2`` with
the tree's bound a reading (``tree_bound``). Parameter schedules: :func:`theorem12_schedule`,
:func:`theorem6_schedule`, :func:`theorem17_schedule` (Theorems 12, 6, 17).

The updates as printed and the reading choices: docs/paper-readings.md#st13-bandit-ftal.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np

from dpaudit._rowwise import div_rows, mul_rows, row_norm
from dpaudit._validation import (
    check_epsilon,
    check_finite_array,
    check_generator,
    check_int,
    check_nonnegative,
    check_positive,
)
from dpaudit.learners.domains import Ball, Box, Domain
from dpaudit.learners.ftal import FTALBase
from dpaudit.learners.losses import Loss
from dpaudit.learners.pftal import L2Regularised, Algorithm2Sum

__all__ = [
    "Adversary",
    "BanditTreeBoundReading",
    "BanditSchedule",
    "inner_radius",
    "sample_unit_sphere",
    "one_point_gradient",
    "project_shrunk",
    "theorem12_schedule",
    "theorem6_schedule",
    "theorem17_schedule",
    "theorem6_regret_bound",
    "BanditFTAL",
    "PrivateBanditFTAL",
    "PrivateBanditFTALConvex",
]

Adversary = Literal["oblivious", "adaptive"]
BanditTreeBoundReading = Literal["loss-bound", "regularised"]


def inner_radius(domain: Domain) -> float:
    """The largest ``r`` with ``r B^p subset C`` (balls about the origin), for balls and boxes.

    Ball of radius ``rho``: ``rho``. Box ``[lo, hi]^p`` with ``lo < 0 < hi``: ``min(-lo, hi)``.
    Other sets (and boxes not containing the origin in their interior) raise ``ValueError``: the
    bandit algorithms need ``0`` in the interior of ``C`` (ST13 Sec. 3, Theorems 6 and 12).

    Theorems 6, 12 and 17 assume ``r B^p subset C subset R B^p`` with ``0 < r < R`` (strictly).
    ``r`` and ``R`` are the radii of two sandwiching balls, not the in- and circumradius of ``C``:
    the outer inclusion holds for every ``R`` at least the largest norm in ``C``. So for the ball
    ``C = rho B^p`` the pair ``r = rho`` with any ``R > rho`` meets the hypothesis, and ``r = rho``
    is admissible (and the largest admissible inner radius). The algorithms use ``r`` only
    (``xi = beta / r``); ``R`` enters only the regret bounds (``chi``, ``xi R L T``), and
    Theorem 5, the privacy claim, has no hypothesis on ``r`` or ``R`` at all. The same holds for a
    box. Pass ``inner_radius`` to the learners to use a smaller ``r``.
    """
    if isinstance(domain, Ball):
        return domain.radius
    if isinstance(domain, Box):
        if not domain.lower < 0.0 < domain.upper:
            raise ValueError("the bandit algorithms need a box containing the origin in its "
                             f"interior, got [{domain.lower}, {domain.upper}]^{domain.dim}")
        return min(-domain.lower, domain.upper)
    raise ValueError(f"no inner ball about the origin is known for {type(domain).__name__}; the "
                     "bandit algorithms need r B^p subset C (pass inner_radius explicitly)")


def sample_unit_sphere(n: int, d: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` independent uniform points of the unit sphere ``S^(d-1)``, shape ``(n, d)``.

    Normalised standard Gaussian vectors (uniform by rotation invariance); ``d = 1`` gives fair
    random signs.
    """
    n = check_int(n, "n", minimum=1)
    d = check_int(d, "d", minimum=1)
    rng = check_generator(rng)
    if d == 1:
        return np.where(rng.random((n, 1)) < 0.5, -1.0, 1.0)
    while True:
        g = rng.standard_normal((n, d))
        norms = row_norm(g)  # np.linalg.norm(g, axis=1), bit for bit
        if np.all(norms > 0):  # probability-one event; redraw the batch otherwise
            return div_rows(g, norms)  # g / norms[:, None], bit for bit


def one_point_gradient(values: np.ndarray, directions: np.ndarray, sampling_radius: float
                       ) -> np.ndarray:
    """The one-point gradient estimate ``(p / beta) f(w + beta u) u`` (FKM05; ST13 Sec. 3).

    Parameters
    ----------
    values : array, shape ``(n,)``
        ``f(w + beta u)`` for each run (the bandit feedback).
    directions : array, shape ``(n, p)``
        The unit vectors ``u``.
    sampling_radius : float
        ``beta`` > 0.

    Returns
    -------
    numpy.ndarray, shape ``(n, p)``
        Unbiased for the gradient of the smoothed loss ``f^ = f * U(beta B^p)`` at ``w`` when ``u``
        is uniform on the sphere (Stokes' theorem, ST13 Sec. 3).
    """
    beta = check_positive(sampling_radius, "sampling_radius")
    u = check_finite_array(directions, "directions", ndim=2)
    vals = check_finite_array(values, "values", shape=(u.shape[0],))
    return mul_rows(u, (u.shape[1] / beta) * vals)  # ((p / beta) vals)[:, None] * u, bit for bit


def project_shrunk(x: np.ndarray, domain: Domain, shrink: float) -> np.ndarray:
    """Euclidean projection onto ``(1 - xi) C``: ``(1 - xi) Pi_C(x / (1 - xi))``.

    ``shrink`` = ``xi`` in [0, 1).
    """
    xi = check_nonnegative(shrink, "shrink")
    if xi >= 1.0:
        raise ValueError(f"shrink must be in [0, 1), got {shrink!r}")
    c = 1.0 - xi
    return c * domain.project(np.asarray(x, dtype=float) / c)


@dataclass(frozen=True)
class BanditSchedule:
    """A theorem's parameter setting: sampling radius ``beta``, shrinkage ``xi = beta / r`` and,
    where the theorem fixes it, the regulariser ``H`` (Theorem 17)."""

    beta: float
    xi: float
    regularisation: float | None
    source: str


def _schedule(beta: float, r: float, source: str, regularisation: float | None = None
              ) -> BanditSchedule:
    xi = beta / r
    if not xi < 1.0:
        raise ValueError(f"{source} gives beta = {beta:.6g} >= r = {r:.6g}, so xi = beta/r >= 1 "
                         "and the shrunk set (1 - xi) C is empty; the schedule needs a longer "
                         "horizon or a larger inner radius")
    return BanditSchedule(beta, xi, regularisation, source)


def _adversary(adversary: str) -> str:
    if adversary not in ("oblivious", "adaptive"):
        raise ValueError(f"adversary must be 'oblivious' or 'adaptive', got {adversary!r}")
    return adversary


def theorem12_schedule(d: int, T: int, r: float, adversary: Adversary) -> BanditSchedule:
    """Non-private bandit FTAL (ST13 Theorem 12, App. D): ``beta = p^(2/3) / T^(1/4)`` (adaptive)
    or ``p^(2/3) / T^(1/3)`` (oblivious), ``xi = beta / r``."""
    d = check_int(d, "d", minimum=1)
    T = check_int(T, "T", minimum=1)
    r = check_positive(r, "r")
    power = 0.25 if _adversary(adversary) == "adaptive" else 1.0 / 3.0
    return _schedule(d ** (2.0 / 3.0) / T ** power, r, f"Theorem 12 ({adversary})")


def theorem6_schedule(d: int, T: int, r: float, adversary: Adversary) -> BanditSchedule:
    """Private bandit FTAL (ST13 Theorem 6 and App. E.2): ``beta = p / T^(1/4)`` (adaptive) or
    ``p / T^(1/3)`` (oblivious), ``xi = beta / r``."""
    d = check_int(d, "d", minimum=1)
    T = check_int(T, "T", minimum=1)
    r = check_positive(r, "r")
    power = 0.25 if _adversary(adversary) == "adaptive" else 1.0 / 3.0
    return _schedule(d / T ** power, r, f"Theorem 6 ({adversary})")


def theorem17_schedule(d: int, T: int, r: float) -> BanditSchedule:
    """Private bandit FTAL for general convex losses (ST13 Theorem 17, App. E.3):
    ``H = 1 / T^(1/4)``, ``beta = p / T^(1/4)``, ``xi = beta / r``."""
    d = check_int(d, "d", minimum=1)
    T = check_int(T, "T", minimum=1)
    r = check_positive(r, "r")
    return _schedule(d / T ** 0.25, r, "Theorem 17", regularisation=1.0 / T ** 0.25)


def theorem6_regret_bound(T: int, d: int, lipschitz: float, strong_convexity: float,
                          loss_bound: float, R: float, r: float, epsilon: float, beta: float,
                          adversary: Adversary) -> float:
    """The explicit regret inequality that ends ST13 App. E.2 (proof of Theorem 6).

    ``3 beta L T + xi R L T + 2 (H||C|| + pB/beta)^2 log T / H
    + 2 p (pB/beta + H||C||)^2 log^2.5 T / (beta eps H) + gamma``, with ``xi = beta/r``,
    ``||C|| = R`` and ``gamma = 2 p B R sqrt(T) / beta`` (adaptive) or 0 (oblivious). ``log`` is
    natural.
    """
    T = check_int(T, "T", minimum=1)
    d = check_int(d, "d", minimum=1)
    L = check_positive(lipschitz, "lipschitz")
    H = check_positive(strong_convexity, "strong_convexity")
    B = check_positive(loss_bound, "loss_bound")
    R = check_positive(R, "R")
    r = check_positive(r, "r")
    epsilon = check_epsilon(epsilon)
    beta = check_positive(beta, "beta")
    xi = beta / r
    lt = math.log(T)
    G = H * R + d * B / beta
    gamma = 2.0 * d * B * R * math.sqrt(T) / beta if _adversary(adversary) == "adaptive" else 0.0
    return (3.0 * beta * L * T + xi * R * L * T + 2.0 * G ** 2 * lt / H
            + 2.0 * d * G ** 2 * lt ** 2.5 / (beta * epsilon * H) + gamma)


class BanditFTAL(FTALBase):
    """Non-private bandit FTAL (ST13 Sec. 3.1, eq. (8)), vectorised over runs.

    Parameters
    ----------
    domain : Domain
        ``C``, with ``r B^p subset C`` (:func:`inner_radius`).
    strong_convexity : float
        ``H`` > 0.
    loss_bound : float
        ``B`` > 0, ``|f_t| <= B`` on ``C`` (used by the private variants' tree bound).
    sampling_radius : float
        ``beta`` > 0 (schedules: :func:`theorem12_schedule`).
    shrink : float, optional
        ``xi`` in [0, 1); default ``beta / r``.
    inner_radius : float, optional
        ``r``, in ``(0, radius of C]``; default :func:`inner_radius` ``(domain)``, the largest
        admissible value (``r = rho`` on the ball ``rho B^p``: Theorems 6, 12 and 17's
        ``0 < r < R`` holds with any outer radius ``R > rho``; see :func:`inner_radius`).
        ``beta <= xi r`` is required so that the played points stay in ``C``.
    initial_point : array, shape ``(d,)``, optional
        ``w~_1``, in ``(1 - xi) C``; default the origin projected onto ``(1 - xi) C``.

    Notes
    -----
    :meth:`predict` returns the played points ``w~_t + beta u_t``; :meth:`learn` reads
    ``loss.value`` at those points only, then moves to ``w~_{t+1}`` and draws ``u_{t+1}``.
    """

    name = "BanditFTAL"
    private = False

    def __init__(self, domain: Domain, strong_convexity: float, loss_bound: float,
                 sampling_radius: float, *, shrink: float | None = None,
                 inner_radius: float | None = None,
                 initial_point: np.ndarray | None = None) -> None:
        if not isinstance(domain, Domain):
            raise TypeError(f"domain must be a Domain, got {type(domain).__name__}")
        self._domain = domain
        self._H = check_positive(strong_convexity, "strong_convexity")
        self._B = check_positive(loss_bound, "loss_bound")
        self._beta = check_positive(sampling_radius, "sampling_radius")
        r = _inner(domain, inner_radius)
        self._r = r
        xi = self._beta / r if shrink is None else check_nonnegative(shrink, "shrink")
        if not xi < 1.0:
            raise ValueError(f"shrink xi must be in [0, 1) (xi = beta / r = {xi:.6g} by default); "
                             "reduce the sampling radius beta")
        if self._beta > xi * r * (1.0 + 1e-12):
            raise ValueError(f"sampling_radius beta = {self._beta:.6g} exceeds "
                             f"xi r = {xi * r:.6g}: played points w~ + beta u could leave C "
                             "(ST13 Sec. 3.1 needs xi = beta / r)")
        self._xi = xi
        if initial_point is None:
            w1 = project_shrunk(np.zeros(domain.dim), domain, xi)
        else:
            w1 = check_finite_array(initial_point, "initial_point", shape=(domain.dim,))
            if np.linalg.norm(project_shrunk(w1, domain, xi) - w1) > 1e-9 * max(1.0, domain.radius):
                raise ValueError("initial_point must lie in the shrunk set (1 - xi) C")
        self._w1 = w1
        self._w: np.ndarray | None = None
        self._S: np.ndarray | None = None
        self._u: np.ndarray | None = None
        self._rng: np.random.Generator | None = None
        self._t = 0

    @property
    def loss_bound(self) -> float:
        """``B``."""
        return self._B

    @property
    def sampling_radius(self) -> float:
        """``beta``."""
        return self._beta

    @property
    def shrink(self) -> float:
        """``xi``."""
        return self._xi

    @property
    def inner_radius(self) -> float:
        """``r``."""
        return self._r

    @property
    def initial_point(self) -> np.ndarray:
        """``w~_1`` (public: the secret part of ``w^_1`` is ``beta u_1`` only)."""
        return self._w1.copy()

    # -- hooks (and those of FTALBase) -----------------------------------------------------------
    def _observe(self, loss: Loss, played: np.ndarray) -> np.ndarray:
        """The bandit feedback at the played points, shape ``(n_runs,)``."""
        return loss.value(played)

    # -- OnlineLearner ---------------------------------------------------------------------------
    def reset(self, n_runs: int, rng: np.random.Generator) -> None:
        super().reset(n_runs, rng)  # checks n_runs and rng
        self._rng = rng
        self._u = sample_unit_sphere(self._require_started().shape[0], self.dim, rng)

    def predict(self) -> np.ndarray:
        w = self._require_started()
        return w + self._beta * self._u

    def learn(self, loss: Loss) -> None:
        w = self._require_started()
        self._check_loss(loss)
        played = w + self._beta * self._u
        z = one_point_gradient(self._observe(loss, played), self._u, self._beta)
        v = self._accumulate(z)
        t = self._t
        w_next = project_shrunk(self._S / t - v / (self._H * t), self._domain, self._xi)
        self._S = self._S + w_next
        self._w = w_next
        self._t = t + 1
        self._u = sample_unit_sphere(w.shape[0], self.dim, self._rng)


def _inner(domain: Domain, r: float | None) -> float:
    if r is None:
        return inner_radius(domain)
    r = check_positive(r, "inner_radius")
    if r > domain.radius * (1.0 + 1e-12):
        raise ValueError(f"inner_radius {r:.6g} exceeds the domain radius {domain.radius:.6g}")
    return r


class PrivateBanditFTAL(Algorithm2Sum, BanditFTAL):
    """Private bandit FTAL, ST13 Algorithm 3 (App. E.1), vectorised over runs.

    Parameters
    ----------
    domain, strong_convexity, loss_bound, sampling_radius, shrink, inner_radius, initial_point
        As for :class:`BanditFTAL` (schedules: :func:`theorem6_schedule`).
    epsilon : float
        Privacy parameter passed to Algorithm 2.
    horizon : int
        ``T`` >= 1.
    tree_bound : float, optional
        ``mu`` of Algorithm 2; default ``p B / beta`` (Alg. 3 lines 3 and 7). Tree inputs
        ``(p/beta) f_t(w^_t) u_t`` are clipped to it.
    record : bool
        Build the tree with ``record=True``.

    Notes
    -----
    Releases the played points ``w^_t = w^dagger_t + beta u_t`` only.
    """

    name = "PrivateBanditFTAL"
    private = True

    def __init__(self, domain: Domain, strong_convexity: float, loss_bound: float,
                 sampling_radius: float, epsilon: float, horizon: int, *,
                 tree_bound: float | None = None, shrink: float | None = None,
                 inner_radius: float | None = None, initial_point: np.ndarray | None = None,
                 record: bool = False) -> None:
        super().__init__(domain, strong_convexity, loss_bound, sampling_radius, shrink=shrink,
                         inner_radius=inner_radius, initial_point=initial_point)
        self._init_algorithm2(epsilon, horizon, record)
        self._mu = (self.dim * self._B / self._beta if tree_bound is None
                    else check_positive(tree_bound, "tree_bound"))


class PrivateBanditFTALConvex(PrivateBanditFTAL):
    """Private bandit FTAL for general convex losses (ST13 App. E.3): Algorithm 3 on
    ``h_t = f_t + H/2 ||w||^2``.

    Parameters
    ----------
    domain, loss_bound, sampling_radius, epsilon, horizon, shrink, inner_radius, initial_point,
    record
        As for :class:`PrivateBanditFTAL` (Theorem 17: :func:`theorem17_schedule`).
    regularisation : float
        ``H`` > 0 (Theorem 17: ``1 / T^(1/4)``).
    tree_bound : {"loss-bound", "regularised"} or float
        ``"loss-bound"``: ``p B / beta`` (Algorithm 3 as printed, the default); ``"regularised"``:
        ``p (B + H R^2 / 2) / beta`` with ``R`` the domain radius (the bound on ``|h_t|``).
    """

    name = "PrivateBanditFTAL-convex"

    def __init__(self, domain: Domain, regularisation: float, loss_bound: float,
                 sampling_radius: float, epsilon: float, horizon: int, *,
                 tree_bound: BanditTreeBoundReading | float = "loss-bound",
                 shrink: float | None = None, inner_radius: float | None = None,
                 initial_point: np.ndarray | None = None, record: bool = False) -> None:
        if not isinstance(domain, Domain):
            raise TypeError(f"domain must be a Domain, got {type(domain).__name__}")
        H = check_positive(regularisation, "regularisation")
        B = check_positive(loss_bound, "loss_bound")
        beta = check_positive(sampling_radius, "sampling_radius")
        if isinstance(tree_bound, str):
            if tree_bound == "loss-bound":
                mu = domain.dim * B / beta
            elif tree_bound == "regularised":
                mu = domain.dim * (B + 0.5 * H * domain.radius ** 2) / beta
            else:
                raise ValueError("tree_bound must be 'loss-bound', 'regularised' or a positive "
                                 f"number, got {tree_bound!r}")
        else:
            mu = check_positive(tree_bound, "tree_bound")
        self._tree_bound_reading = tree_bound
        super().__init__(domain, H, B, beta, epsilon, horizon, tree_bound=mu, shrink=shrink,
                         inner_radius=inner_radius, initial_point=initial_point, record=record)

    @property
    def regularisation(self) -> float:
        """``H``."""
        return self._H

    @property
    def tree_bound_reading(self) -> BanditTreeBoundReading | float:
        return self._tree_bound_reading

    def learn(self, loss: Loss) -> None:
        self._check_loss(loss)
        super().learn(L2Regularised(loss, self._H))
