"""Private Follow the Approximate Leader (PFTAL): Smith & Thakurta, NeurIPS 2013, Alg. 1 and App. C.

Algorithm 1 (strongly convex losses) passes each ``grad f_t(w^_t)`` to the tree-based aggregation
of Algorithm 2 (:class:`~dpaudit.mechanisms.st13_tree_aggregation.ST13TreeAggregator`) and plays
``w^_{t+1} = Pi_C(mean(w^_1..w^_t) - v^_t / (H t))`` (line 4, eq. (5); closed form:
:mod:`.ftal`); the release is ``w^_1, ..., w^_T``, and the losses reach it only through the tree
(post-processing; App. B.1). The tree's bound ``mu`` has two readings (Alg. 1's ``L``, or Lemma
8's ``L + H ||C||_2``): ``tree_bound`` chooses, and every tree input is clipped to ``mu``. App. C
(general convex Lipschitz losses) runs Algorithm 1 on ``f_t + H/2 ||w||^2``
(:class:`L2Regularised`, :class:`PFTALConvex`); Theorem 11's regulariser is
:func:`theorem11_regularisation`. Source: ``st13.txt``, Alg. 1, eqs. (3)-(5), Theorems 3-4,
App. B (Lemma 8, Claim 10), App. C (eqs. (16)-(18), Theorem 11).

The algorithm as printed and both readings of the tree bound: docs/paper-readings.md#st13-pftal.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np

from dpaudit._rowwise import row_sum
from dpaudit._validation import (
    check_epsilon,
    check_int,
    check_nonnegative,
    check_positive,
)
from dpaudit.learners.domains import Domain
from dpaudit.learners.ftal import FTAL
from dpaudit.learners.losses import Loss, LossKind
from dpaudit.mechanisms.st13_tree_aggregation import ST13TreeAggregator

__all__ = [
    "TreeBoundReading",
    "L2Regularised",
    "PFTAL",
    "PFTALConvex",
    "pftal_tree_bound",
    "theorem11_regularisation",
    "theorem4_regret_bound",
]

TreeBoundReading = Literal["lipschitz", "lipschitz+H|C|"]
_READINGS = ("lipschitz", "lipschitz+H|C|")


@dataclass(frozen=True, eq=False)
class L2Regularised(Loss):
    """``h(w) = f(w) + H/2 ||w||^2`` (ST13 App. C; App. E.3 for the bandit version).

    ``value``/``grad`` add the regulariser to the wrapped loss; ``lipschitz(domain)`` is the
    wrapped loss's constant plus ``H * radius``; the strong convexity is the wrapped loss's plus
    ``H``. ``kind`` is the wrapped loss's kind.
    """

    base: Loss
    regularisation: float

    def __post_init__(self) -> None:
        if not isinstance(self.base, Loss):
            raise TypeError(f"base must be a Loss, got {type(self.base).__name__}")
        object.__setattr__(self, "regularisation",
                           check_nonnegative(self.regularisation, "regularisation"))

    @property
    def kind(self) -> LossKind:  # type: ignore[override]
        return self.base.kind

    @property
    def ridge(self) -> float:  # type: ignore[override]
        return self.base.ridge + self.regularisation

    @property
    def dim(self) -> int:
        return self.base.dim

    def value(self, x: np.ndarray) -> np.ndarray:
        x = self._x(x)
        return self.base.value(x) + 0.5 * self.regularisation * row_sum(x * x)  # np.sum(., -1)

    def grad(self, x: np.ndarray) -> np.ndarray:
        x = self._x(x)
        return self.base.grad(x) + self.regularisation * x

    def lipschitz(self, domain: Domain) -> float:
        return self.base.lipschitz(domain) + self.regularisation * domain.radius

    @property
    def strong_convexity(self) -> float:
        return self.base.strong_convexity + self.regularisation


def pftal_tree_bound(reading: TreeBoundReading | float, lipschitz: float, strong_convexity: float,
                     domain: Domain) -> float:
    """The ``mu`` passed to Algorithm 2 under a reading (docs/paper-readings.md#st13-pftal).

    ``"lipschitz"``: ``L``; ``"lipschitz+H|C|"``: ``L + H ||C||_2`` (``||C||_2`` = the domain
    radius); a number: that number (> 0).
    """
    L = check_positive(lipschitz, "lipschitz")
    H = check_nonnegative(strong_convexity, "strong_convexity")
    if isinstance(reading, str):
        if reading == "lipschitz":
            return L
        if reading == "lipschitz+H|C|":
            return L + H * domain.radius
        raise ValueError(f"tree_bound must be one of {_READINGS} or a positive number, "
                         f"got {reading!r}")
    return check_positive(reading, "tree_bound")


class Algorithm2Sum:
    """The private gradient sum of ST13's learners: Algorithm 2, one tree per
    :meth:`~dpaudit.learners.base.OnlineLearner.reset`.

    Mixed in before an FTAL-type learner (:class:`PFTAL`, Alg. 1;
    :class:`~dpaudit.learners.bandit_ftal.PrivateBanditFTAL`, Alg. 3): it replaces the exact
    gradient sum of the learner's ``_start`` / ``_accumulate`` hooks by the noisy partial sums of
    an :class:`~dpaudit.mechanisms.st13_tree_aggregation.ST13TreeAggregator` over the horizon ``T`` with bound
    ``mu`` (every input is clipped to ``mu``), and refuses to learn more than ``T`` losses. The
    learner's ``__init__`` calls :meth:`_init_algorithm2` and sets ``_mu``.
    """

    _epsilon: float
    _T: int
    _mu: float
    _record: bool
    _tree: ST13TreeAggregator | None

    def _init_algorithm2(self, epsilon: float, horizon: int, record: bool) -> None:
        self._epsilon = check_epsilon(epsilon)
        self._T = check_int(horizon, "horizon", minimum=1)
        self._record = bool(record)
        self._tree = None

    @property
    def epsilon(self) -> float:
        return self._epsilon

    @property
    def horizon(self) -> int:
        """``T``."""
        return self._T

    @property
    def tree_bound(self) -> float:
        """``mu``, the l2 bound given to (and enforced by) Algorithm 2."""
        return self._mu

    @property
    def tree(self) -> ST13TreeAggregator:
        """The tree of the current runs (after
        :meth:`~dpaudit.learners.base.OnlineLearner.reset`)."""
        if self._tree is None:
            raise RuntimeError("call reset(n_runs, rng) first")
        return self._tree

    def _start(self, n_runs: int, rng: np.random.Generator) -> None:
        self._tree = ST13TreeAggregator(self._T, self.dim, self._mu, self._epsilon, n_runs, rng,
                                        record=self._record)

    def _accumulate(self, z: np.ndarray) -> np.ndarray:
        return self.tree.add(z)  # clips z to mu, returns the noisy partial sum v^_t

    def learn(self, loss: Loss) -> None:
        if self._tree is not None and self._tree.t >= self._T:
            raise ValueError(f"learn() called more than horizon T = {self._T} times")
        super().learn(loss)


class PFTAL(Algorithm2Sum, FTAL):
    """Private FTAL, ST13 Algorithm 1 (strongly convex Lipschitz losses), vectorised over runs.

    Parameters
    ----------
    domain : Domain
        The convex set ``C`` (dimension ``p = d``).
    strong_convexity : float
        ``H`` > 0.
    lipschitz : float
        ``L`` > 0, the declared Lipschitz constant of the losses over ``C``.
    epsilon : float
        The privacy parameter passed to Algorithm 2.
    horizon : int
        ``T`` >= 1 (Algorithm 2 builds its tree over ``T`` leaves).
    tree_bound : {"lipschitz", "lipschitz+H|C|"} or float
        ``mu`` of Algorithm 2 (docs/paper-readings.md#st13-pftal); default ``"lipschitz"``
        (``mu = L``, as printed in Alg. 1 lines 2 and 5).
    initial_point : array, shape ``(d,)``, optional
        ``w^_1``; default ``Pi_C(0)``.
    record : bool
        Build the tree with ``record=True`` (structural audits; memory ``T n_runs d``).

    Notes
    -----
    Releases ``w^_1, ..., w^_T``, shape ``(n_runs, T, d)`` from :meth:`run`. The tree of the
    current runs is :attr:`tree`. Learning more than ``T`` losses raises ``ValueError``.
    """

    name = "PFTAL"
    private = True

    def __init__(self, domain: Domain, strong_convexity: float, lipschitz: float, epsilon: float,
                 horizon: int, *, tree_bound: TreeBoundReading | float = "lipschitz",
                 initial_point: np.ndarray | None = None, record: bool = False) -> None:
        super().__init__(domain, strong_convexity, initial_point=initial_point)
        self._L = check_positive(lipschitz, "lipschitz")
        self._init_algorithm2(epsilon, horizon, record)
        self._tree_bound_reading = tree_bound
        self._mu = pftal_tree_bound(tree_bound, self._L, self._tree_regularity(), domain)

    def _tree_regularity(self) -> float:
        """The ``H`` in ``L + H||C||``: the strong convexity for Alg. 1."""
        return self._H

    @property
    def lipschitz(self) -> float:
        """``L``."""
        return self._L

    @property
    def tree_bound_reading(self) -> TreeBoundReading | float:
        return self._tree_bound_reading


class PFTALConvex(PFTAL):
    """PFTAL for general convex Lipschitz losses (ST13 App. C): Alg. 1 run on ``h_t``.

    ``h_t(w) = f_t(w) + H/2 ||w||^2`` (:class:`L2Regularised`). The learner receives the ``f_t``;
    the regularisation is applied internally.

    Parameters
    ----------
    domain : Domain
        ``C``.
    lipschitz : float
        ``L`` > 0, the Lipschitz constant of the ``f_t`` over ``C``.
    regularisation : float
        ``H`` > 0 (Theorem 11: :func:`theorem11_regularisation`).
    epsilon, horizon, initial_point, record
        As for :class:`PFTAL`.
    tree_bound : {"lipschitz+H|C|", "lipschitz"} or float
        The bound Algorithm 2 is calibrated with (the paper leaves it open): default
        ``"lipschitz+H|C|"``, the Lipschitz constant of ``h_t``; ``"lipschitz"`` passes the ``L``
        of ``f_t`` (inputs ``grad h_t`` are then clipped to ``L``).
    """

    name = "PFTAL-convex"

    def __init__(self, domain: Domain, lipschitz: float, regularisation: float, epsilon: float,
                 horizon: int, *, tree_bound: TreeBoundReading | float = "lipschitz+H|C|",
                 initial_point: np.ndarray | None = None, record: bool = False) -> None:
        super().__init__(domain, regularisation, lipschitz, epsilon, horizon,
                         tree_bound=tree_bound, initial_point=initial_point, record=record)

    @property
    def regularisation(self) -> float:
        """``H``."""
        return self._H

    def learn(self, loss: Loss) -> None:
        self._check_loss(loss)
        super().learn(L2Regularised(loss, self._H))


def theorem11_regularisation(d: int, T: int, epsilon: float) -> float:
    """Theorem 11's regulariser ``H = sqrt(p log^2.5 T / (eps T))`` (ST13 App. C, proof).

    ``log`` is the natural logarithm (the paper does not say; only constants change). Sec. 2.1.1
    states a different setting, ``H = O(p log^2.5 T / (eps sqrt(T)))``; the appendix's is used.
    ``T = 1`` gives ``log 1 = 0`` and hence ``H = 0``, which is rejected (the horizon must be >= 2).
    """
    d = check_int(d, "d", minimum=1)
    T = check_int(T, "T", minimum=2)
    epsilon = check_epsilon(epsilon)
    return math.sqrt(d * math.log(T) ** 2.5 / (epsilon * T))


def theorem4_regret_bound(T: int, d: int, lipschitz: float, strong_convexity: float,
                          radius: float, epsilon: float) -> float:
    """The expected-regret bound of Theorem 4 with the constants of its proof (ST13 App. B.2).

    Claim 10 and Fact 9 give ``2 (L + H||C||)^2 log T / H`` for the noise-free leader; Lemma 8 adds
    ``4 p (L + H||C||)^2 log^2.5 T / (eps H)`` for the tree noise. ``log`` is natural. The
    theorem itself states ``O(p (L + H||C||)^2 log^2.5 T / (eps H))``.
    """
    T = check_int(T, "T", minimum=1)
    d = check_int(d, "d", minimum=1)
    L = check_positive(lipschitz, "lipschitz")
    H = check_positive(strong_convexity, "strong_convexity")
    R = check_nonnegative(radius, "radius")
    epsilon = check_epsilon(epsilon)
    G2 = (L + H * R) ** 2
    lt = math.log(T)
    return 2.0 * G2 * lt / H + 4.0 * d * G2 * lt ** 2.5 / (epsilon * H)
