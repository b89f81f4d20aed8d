"""Hypothesis strategies for the loss classes, domains and neighbouring streams the papers use.

Every strategy generates members of the declared class only (AUDIT-METHOD section 1: the class
constants are public and enforced): a loss drawn from ``losses(loss_class)`` always satisfies
``loss_class.violations(loss) == []``. Members are constructed inside the class, never filtered,
and the search is biased toward the extremes that make sensitivity bounds tight (norms at their
bound, opposite-sign replacements, the first or last position). Classes covered: linear (JKT12,
ST13, PFCOCO) and experts' loss vectors (AFKT23, :func:`experts_class`); squared + ridge,
including JKT12's quadratic regression class (arXiv version, eq. (19); :func:`regression_class`);
logistic and hinge + ridge; domains: l2 ball, box, probability simplex (:func:`domains`,
:func:`points`). The checker is :func:`dpaudit.formal.sensitivity.check_sensitivity`.

The classes in full and a usage example: docs/formal-notes.md#hypothesis-strategies.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Literal, Sequence

import numpy as np
from hypothesis import strategies as st

from dpaudit._validation import check_int, check_nonnegative, check_positive
from dpaudit.learners.domains import Ball, Box, Domain, Simplex
from dpaudit.learners.losses import (HingeLoss, LinearLoss, LogisticLoss, Loss, LossClass,
                                     LossKind, SquaredLoss)

__all__ = [
    "fractions",
    "unit_vectors",
    "domains",
    "points",
    "losses",
    "opposite_loss",
    "extreme_losses",
    "extreme_pairs",
    "loss_streams",
    "NeighbouringPair",
    "neighbouring_streams",
    "loss_classes",
    "experts_class",
    "regression_class",
    "DomainKind",
]

DomainKind = Literal["ball", "box", "simplex"]

#: Norms below this are treated as zero when normalising a generated direction (``||u||`` is
#: computed as 0 once ``||u||^2`` underflows, below about 1e-154).
_TINY_NORM = 1e-100


_FRACTIONS = st.one_of(st.just(1.0), st.just(0.0),
                       st.floats(0.0, 1.0, allow_nan=False, allow_subnormal=False))
_UNIT_COORD = st.one_of(st.just(1.0), st.just(0.0), st.floats(0.0, 1.0, allow_subnormal=False))
_SIGNS = st.sampled_from((1.0, -1.0))


def fractions() -> st.SearchStrategy[float]:
    """Numbers in [0, 1], with the extremes 1 and 0 tried first.

    ``1.0`` is the first branch, so Hypothesis shrinks toward it: shrunk counterexamples sit at the
    bound, which is where sensitivity lemmas are tight.
    """
    return _FRACTIONS


def _normalise(coords: list[float]) -> np.ndarray:
    u = np.array(coords, dtype=float)
    n = float(np.linalg.norm(u))
    if n <= _TINY_NORM:
        u = np.zeros(len(coords))
        u[0] = 1.0
        return u
    return u / n


@functools.lru_cache(maxsize=None)
def unit_vectors(d: int) -> st.SearchStrategy[np.ndarray]:
    """Unit vectors in R^d, shape ``(d,)`` (coordinate axes are reached by shrinking)."""
    d = check_int(d, "d", minimum=1)
    return st.lists(st.floats(-1.0, 1.0, allow_nan=False, allow_subnormal=False),
                    min_size=d, max_size=d).map(_normalise)


# ---------------------------------------------------------------------------------------------
# Domains
# ---------------------------------------------------------------------------------------------


@st.composite
def _ball(draw: st.DrawFn, d: int) -> Ball:
    radius = draw(st.one_of(st.just(1.0), st.floats(0.01, 100.0, allow_nan=False)))
    return Ball(d, radius)


@st.composite
def _box(draw: st.DrawFn, d: int) -> Box:
    lower = draw(st.one_of(st.just(-1.0), st.floats(-10.0, 10.0, allow_nan=False)))
    width = draw(st.one_of(st.just(2.0), st.floats(0.01, 20.0, allow_nan=False)))
    return Box(d, lower, lower + width)


def domains(kinds: Sequence[DomainKind] = ("ball", "box", "simplex"), min_dim: int = 1,
            max_dim: int = 5) -> st.SearchStrategy[Domain]:
    """Domains of the given kinds with dimension in ``[min_dim, max_dim]``.

    Balls have radius in [0.01, 100] (1 first), boxes ``[lower, lower + width]^d`` with lower in
    [-10, 10] and width in [0.01, 20] (``[-1, 1]^d`` first), simplices the probability simplex.
    """
    min_dim = check_int(min_dim, "min_dim", minimum=1)
    max_dim = check_int(max_dim, "max_dim", minimum=min_dim)
    builders = {"ball": _ball, "box": _box, "simplex": lambda d: st.just(Simplex(d))}
    kinds = tuple(kinds)
    if not kinds or any(k not in builders for k in kinds):
        raise ValueError(f"kinds must be a non-empty subset of {tuple(builders)}, got {kinds!r}")
    dims = st.integers(min_dim, max_dim)
    return st.one_of(*(dims.flatmap(builders[k]) for k in kinds))


@st.composite
def points(draw: st.DrawFn, domain: Domain) -> np.ndarray:
    """Points of ``domain``, shape ``(domain.dim,)``, including extreme points.

    Ball: ``r u`` with ``u`` a unit vector and ``r / radius`` from :func:`fractions` (boundary
    first); box: each coordinate at a corner value or uniform between; simplex: normalised non-negative
    weights (vertices reached by shrinking).
    """
    d = domain.dim
    if isinstance(domain, Ball):
        return draw(fractions()) * domain.radius * draw(unit_vectors(d))
    if isinstance(domain, Box):
        coord = st.one_of(st.just(domain.upper), st.just(domain.lower),
                          st.floats(domain.lower, domain.upper, allow_nan=False))
        return np.array(draw(st.lists(coord, min_size=d, max_size=d)), dtype=float)
    if isinstance(domain, Simplex):
        w = np.array(draw(st.lists(fractions(), min_size=d, max_size=d)), dtype=float)
        s = float(w.sum())
        if s <= 0.0:
            w = np.zeros(d)
            w[0] = 1.0
            return w
        return w / s
    raise TypeError(f"domain must be a Ball, Box or Simplex, got {type(domain).__name__}")


# ---------------------------------------------------------------------------------------------
# Losses
# ---------------------------------------------------------------------------------------------


def _check_class(loss_class: LossClass, nonnegative: bool) -> None:
    """Reject declared classes with no member (the strategy could not generate anything valid)."""
    if not isinstance(loss_class, LossClass):
        raise TypeError(f"loss_class must be a LossClass, got {type(loss_class).__name__}")
    L, alpha, D = loss_class.lipschitz, loss_class.strong_convexity, loss_class.domain.radius
    R = loss_class.data_bound
    if loss_class.kind == "linear":
        if alpha > 0:
            raise ValueError(f"the linear class has no member: linear losses have strong convexity "
                             f"0 < declared alpha={alpha:g}")
    elif alpha * D > L * (1 + 1e-9):  # same relative tolerance as LossClass.violations
        raise ValueError(f"the {loss_class.kind} class has no member: the ridge term alone has "
                         f"Lipschitz constant alpha * radius = {alpha * D:g} > declared L={L:g}")
    if nonnegative and loss_class.kind != "linear":
        raise ValueError("nonnegative=True applies to linear (experts) classes only")


def _ridges(loss_class: LossClass, vary_ridge: bool) -> st.SearchStrategy[float]:
    alpha = loss_class.strong_convexity
    if not vary_ridge:
        return st.just(alpha)
    r_max = loss_class.lipschitz / loss_class.domain.radius
    return st.one_of(st.just(0.0), st.floats(0.0, 1.0)).map(
        lambda f: min(r_max, alpha + f * (r_max - alpha)))


def _cap_norm(x: np.ndarray, cap: float) -> np.ndarray:
    n = float(np.linalg.norm(x))
    return x * (cap / n) if n > cap else x


def _linear_cap(loss_class: LossClass) -> float:
    cap = loss_class.lipschitz
    if loss_class.data_bound is not None:
        cap = min(cap, loss_class.data_bound)
    return cap


def _linear_member(loss_class: LossClass, nonnegative: bool, frac: float,
                   direction: np.ndarray) -> LinearLoss:
    """Signed: ``g = frac * min(L, R) * direction``; experts: ``direction`` in [0, 1]^d, capped."""
    cap = _linear_cap(loss_class)
    if nonnegative:
        return LinearLoss(_cap_norm(np.asarray(direction, dtype=float), cap))
    return LinearLoss(frac * cap * direction)


def _linear(loss_class: LossClass, nonnegative: bool) -> st.SearchStrategy[LinearLoss]:
    d = loss_class.domain.dim
    if nonnegative:
        return st.lists(_UNIT_COORD, min_size=d, max_size=d).map(
            lambda g: _linear_member(loss_class, True, 1.0, np.array(g, dtype=float)))
    return st.tuples(_FRACTIONS, unit_vectors(d)).map(
        lambda fu: _linear_member(loss_class, False, fu[0], fu[1]))


def _squared_member(loss_class: LossClass, ridge: float, fa: float, sign: float, fy: float,
                    u: np.ndarray) -> SquaredLoss:
    """``||v|| = fa * a_max``, ``y = sign * fy * y_max(||v||)``: inside the class by construction.

    Lipschitz over the domain (losses.py): ``(|y| + ||v|| D) ||v|| + ridge D <= L``; the data budget
    ``B = L - ridge D`` is split between ``||v|| = a <= min(R, sqrt(B / D))`` and
    ``|y| <= min(R, (B - a^2 D) / a)``.
    """
    D, R, L = loss_class.domain.radius, loss_class.data_bound, loss_class.lipschitz
    budget = max(0.0, L - ridge * D)
    a_max = math.sqrt(budget / D)
    if R is not None:
        a_max = min(a_max, R)
    a = fa * a_max
    y_max = (budget - a * a * D) / a if a > 0 else L
    if R is not None:
        y_max = min(y_max, R)
    return SquaredLoss(a * u, sign * fy * max(0.0, y_max), ridge)


def _squared(loss_class: LossClass, vary_ridge: bool) -> st.SearchStrategy[SquaredLoss]:
    return st.tuples(_ridges(loss_class, vary_ridge), _FRACTIONS, _SIGNS, _FRACTIONS,
                     unit_vectors(loss_class.domain.dim)).map(
        lambda args: _squared_member(loss_class, *args))


def _classification_member(loss_class: LossClass, ridge: float, fv: float, y: float,
                           u: np.ndarray) -> Loss:
    """``||v|| = fv * min(R, L - ridge D)``: the Lipschitz bound ``||v|| + ridge D <= L`` holds."""
    D, R, L = loss_class.domain.radius, loss_class.data_bound, loss_class.lipschitz
    v_max = max(0.0, L - ridge * D)
    if R is not None:
        v_max = min(v_max, R)
    cls = LogisticLoss if loss_class.kind == "logistic" else HingeLoss
    return cls(fv * v_max * u, y, ridge)


def _classification(loss_class: LossClass, vary_ridge: bool) -> st.SearchStrategy[Loss]:
    return st.tuples(_ridges(loss_class, vary_ridge), _FRACTIONS, _SIGNS,
                     unit_vectors(loss_class.domain.dim)).map(
        lambda args: _classification_member(loss_class, *args))


def _is_experts(loss_class: LossClass, nonnegative: bool | None) -> bool:
    if not isinstance(loss_class, LossClass):
        raise TypeError(f"loss_class must be a LossClass, got {type(loss_class).__name__}")
    if nonnegative is None:
        return loss_class.kind == "linear" and isinstance(loss_class.domain, Simplex)
    return bool(nonnegative)


def losses(loss_class: LossClass, *, vary_ridge: bool = False,
           nonnegative: bool | None = None) -> st.SearchStrategy[Loss]:
    """One member of ``loss_class`` (kind, dimension, Lipschitz constant, alpha and R all hold).

    Parameters
    ----------
    loss_class
        The declared class. Its domain fixes the dimension d and the radius D over which the
        Lipschitz constant is computed.
    vary_ridge
        False (default): ridge = the declared alpha exactly, as in the papers' classes
        ``f_t = data term + alpha/2 ||x||^2`` (JKT12 Sec. 5, PQFTL eq. (19)). True: any ridge in
        ``[alpha, L / D]`` (still alpha-strongly convex and L-Lipschitz).
    nonnegative
        Linear classes only: draw ``g in [0, 1]^d`` (experts' loss vectors, AFKT23), scaled down
        when ``||g||`` exceeds ``min(L, R)``. Default: True exactly when the domain is a
        :class:`~dpaudit.learners.domains.Simplex`.

    Raises
    ------
    ValueError
        If the declared class is empty (e.g. alpha * radius > L).
    """
    experts = _is_experts(loss_class, nonnegative)
    _check_class(loss_class, experts)
    if loss_class.kind == "linear":
        return _linear(loss_class, experts)
    if loss_class.kind == "squared":
        return _squared(loss_class, bool(vary_ridge))
    if loss_class.kind in ("logistic", "hinge"):
        return _classification(loss_class, bool(vary_ridge))
    raise ValueError(f"unsupported loss kind {loss_class.kind!r}")  # pragma: no cover


def opposite_loss(loss: Loss, loss_class: LossClass, *, nonnegative: bool | None = None) -> Loss:
    """The member of ``loss_class`` that pulls the other way from ``loss``.

    Linear: ``-g``; experts (``nonnegative``, default as in :func:`losses`): ``1 - g`` (every
    expert's loss flipped), scaled to ``||.|| <= min(L, R)``; squared: ``y -> -y`` (at ``x = 0`` the
    gradient ``-y v`` flips sign); logistic and hinge: label ``y -> -y``. These replacements
    maximise ``||grad f - grad f'||`` at the extremes, which is where 2L-type sensitivity bounds
    are attained. The result is a member whenever ``loss`` is.
    """
    if loss.kind != loss_class.kind:
        raise ValueError(f"loss kind {loss.kind!r} != declared {loss_class.kind!r}")
    if isinstance(loss, LinearLoss):
        if _is_experts(loss_class, nonnegative):
            return LinearLoss(_cap_norm(np.clip(1.0 - loss.g, 0.0, 1.0), _linear_cap(loss_class)))
        return LinearLoss(-loss.g)
    if isinstance(loss, (SquaredLoss, LogisticLoss, HingeLoss)):
        return type(loss)(loss.v.copy(), -loss.y, loss.ridge)
    raise TypeError(f"unsupported loss type {type(loss).__name__}")  # pragma: no cover


def extreme_losses(loss_class: LossClass, *, nonnegative: bool | None = None) -> list[Loss]:
    """A few members on the boundary of the class (ridge = alpha, direction e_1).

    Linear: ``g = min(L, R) e_1``; experts: the all-ones vector (capped) and ``e_1`` (one expert
    loses); squared: ``||v||`` at 1, 1/2 and 1/8 of its maximum with ``y`` at its maximum given
    ``||v||`` (the budget ``(|y| + ||v|| D) ||v||`` can sit in ``v`` or in ``y``); logistic and
    hinge: ``||v|| = min(R, L - alpha D)``, ``y = +1``. With :func:`opposite_loss` they make the
    canonical worst cases of 2L-type sensitivity bounds (:func:`extreme_pairs`).
    """
    experts = _is_experts(loss_class, nonnegative)
    _check_class(loss_class, experts)
    d, alpha = loss_class.domain.dim, loss_class.strong_convexity
    e1 = np.zeros(d)
    e1[0] = 1.0
    if loss_class.kind == "linear":
        if experts:
            return [_linear_member(loss_class, True, 1.0, np.ones(d)),
                    _linear_member(loss_class, True, 1.0, e1)]
        return [_linear_member(loss_class, False, 1.0, e1)]
    if loss_class.kind == "squared":
        return [_squared_member(loss_class, alpha, fa, 1.0, 1.0, e1) for fa in (1.0, 0.5, 0.125)]
    return [_classification_member(loss_class, alpha, 1.0, 1.0, e1)]


def extreme_pairs(loss_class: LossClass, T: int, *,
                  nonnegative: bool | None = None) -> list[NeighbouringPair]:
    """Canonical worst-case candidates of length T: a constant stream of an extreme member with
    its opposite at the first, second, middle, second-to-last and last positions.

    :func:`~dpaudit.formal.sensitivity.check_sensitivity` evaluates these before its Hypothesis
    search, so that small search budgets still test the textbook extremes.
    """
    T = check_int(T, "T", minimum=1)
    positions = sorted({p for p in (0, 1, T // 2, T - 2, T - 1) if 0 <= p < T})
    out = []
    for f in extreme_losses(loss_class, nonnegative=nonnegative):
        g = opposite_loss(f, loss_class, nonnegative=nonnegative)
        out.extend(NeighbouringPair((f,) * T, p, g) for p in positions)
    return out


def loss_streams(loss_class: LossClass, min_T: int = 1, max_T: int = 32, *,
                 vary_ridge: bool = False,
                 nonnegative: bool | None = None) -> st.SearchStrategy[list[Loss]]:
    """Streams ``[f_1, ..., f_T]`` of members of ``loss_class`` with ``min_T <= T <= max_T``."""
    min_T = check_int(min_T, "min_T", minimum=1)
    max_T = check_int(max_T, "max_T", minimum=min_T)
    return st.lists(losses(loss_class, vary_ridge=vary_ridge, nonnegative=nonnegative),
                    min_size=min_T, max_size=max_T)


@dataclass(frozen=True, eq=False)
class NeighbouringPair:
    """Two neighbouring streams: ``stream`` and ``stream`` with ``stream[position]`` replaced.

    ``position`` is 0-based (the replaced loss is f_{position+1}); the neighbour relation is the
    papers' replace-one relation.
    """

    stream: tuple[Loss, ...]
    position: int
    replacement: Loss

    def __post_init__(self) -> None:
        object.__setattr__(self, "stream", tuple(self.stream))
        check_int(self.position, "position", minimum=0, maximum=len(self.stream) - 1)

    @property
    def T(self) -> int:
        """Length of both streams."""
        return len(self.stream)

    def neighbour(self) -> tuple[Loss, ...]:
        """The neighbouring stream (``stream`` with the replacement at ``position``)."""
        out = list(self.stream)
        out[self.position] = self.replacement
        return tuple(out)

    def __repr__(self) -> str:
        return (f"NeighbouringPair(T={self.T}, position={self.position}, "
                f"replaced={self.stream[self.position]!r}, replacement={self.replacement!r})")


@functools.lru_cache(maxsize=4096)
def _positions(T: int) -> st.SearchStrategy[int]:
    return st.one_of(st.just(0), st.just(T - 1), st.integers(0, T - 1))


@st.composite
def _neighbouring(draw: st.DrawFn, loss_class: LossClass, streams: st.SearchStrategy[list[Loss]],
                  members: st.SearchStrategy[Loss], nonnegative: bool) -> NeighbouringPair:
    stream = draw(streams)
    position = draw(_positions(len(stream)))
    if draw(st.booleans()):
        replacement = draw(members)
    else:
        replacement = opposite_loss(stream[position], loss_class, nonnegative=nonnegative)
    return NeighbouringPair(tuple(stream), position, replacement)


def neighbouring_streams(loss_class: LossClass, min_T: int = 1, max_T: int = 32, *,
                         vary_ridge: bool = False,
                         nonnegative: bool | None = None) -> st.SearchStrategy[NeighbouringPair]:
    """Neighbouring pairs (stream, position, replacement) under the replace-one relation.

    The stream is drawn by :func:`loss_streams`; the position is the first, the last, or any index
    (in that order of preference); the replacement is the :func:`opposite_loss` of the replaced
    loss (shrinking prefers it) or an independent member of the class.
    """
    members = losses(loss_class, vary_ridge=vary_ridge, nonnegative=nonnegative)
    streams = loss_streams(loss_class, min_T, max_T, vary_ridge=vary_ridge, nonnegative=nonnegative)
    return _neighbouring(loss_class, streams, members, _is_experts(loss_class, nonnegative))


# ---------------------------------------------------------------------------------------------
# Classes
# ---------------------------------------------------------------------------------------------


def experts_class(d: int) -> LossClass:
    """The experts' class of AFKT23: linear losses ``g in [0, 1]^d`` on the simplex.

    Declared L = sqrt(d) (the largest ||g||_2 over the cube), so every loss vector in [0, 1]^d is a
    member and :func:`losses` draws from the whole cube.
    """
    d = check_int(d, "d", minimum=1)
    return LossClass("linear", Simplex(d), lipschitz=math.sqrt(d))


def regression_class(domain: Domain, data_bound: float, strong_convexity: float) -> LossClass:
    """JKT12 quadratic regression class ``1/2 (y - <v, x>)^2 + alpha/2 ||x||^2``, |y|, ||v|| <= R.

    (JKT12 arXiv, eq. (19) and Theorem 6.) The paper declares R and alpha, not L; the declared
    Lipschitz constant is set to the largest one the class attains over ``domain``,
    ``L = (R + R D) R + alpha D`` with D the domain radius, so that the Lipschitz constraint
    does not cut into the R-box and :func:`losses` covers every ``(y, v)`` with ``|y|, ||v|| <= R``.
    """
    R = check_positive(data_bound, "data_bound")
    alpha = check_nonnegative(strong_convexity, "strong_convexity")
    D = domain.radius
    return LossClass("squared", domain, lipschitz=(R + R * D) * R + alpha * D,
                     strong_convexity=alpha, data_bound=R)


@st.composite
def loss_classes(draw: st.DrawFn, kinds: Sequence[LossKind] = ("linear", "squared", "logistic",
                                                                 "hinge"),
                 domain_strategy: st.SearchStrategy[Domain] | None = None,
                 declare_data_bound: bool | None = None) -> LossClass:
    """Non-empty declared classes over a range of constants (for testing across a claim's range).

    L in [0.01, 100], alpha in [0, L / D] (0 for linear), R (when declared) in [1, 100] (the
    labelled classes need R >= 1 for labels +-1). ``declare_data_bound``: None = sometimes.
    """
    kind = draw(st.sampled_from(tuple(kinds)))
    domain = draw(domains() if domain_strategy is None else domain_strategy)
    L = draw(st.one_of(st.just(1.0), st.floats(0.01, 100.0, allow_nan=False)))
    alpha = 0.0
    if kind != "linear":
        alpha = draw(fractions()) * L / domain.radius
    declare = draw(st.booleans()) if declare_data_bound is None else declare_data_bound
    R = draw(st.one_of(st.just(1.0), st.floats(1.0, 100.0, allow_nan=False))) if declare else None
    return LossClass(kind, domain, lipschitz=L, strong_convexity=alpha, data_bound=R)
