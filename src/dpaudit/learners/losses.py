"""Loss functions of the classes the papers use, vectorised over points.

Each loss is a small immutable value ``f_t``; ``value(x)`` and ``grad(x)`` accept ``x`` of shape
``(..., d)`` (e.g. ``(n_runs, d)``: one point per independent run) and return ``(...)`` and
``(..., d)``. ``grad`` returns a subgradient where ``f_t`` is not differentiable (hinge kink: 0).

Conventions (chosen to match JKT12 COLT eq. (3) and the arXiv version's quadratic loss):

* :class:`LinearLoss`: ``f(x) = <g, x>``.
* :class:`SquaredLoss`: ``f(x) = 1/2 (y - <v, x>)^2 + ridge/2 ||x||^2``.
* :class:`LogisticLoss`: ``f(x) = log(1 + exp(-y <v, x>)) + ridge/2 ||x||^2``, ``y in {-1, +1}``.
* :class:`HingeLoss`: ``f(x) = max(0, 1 - y <v, x>) + ridge/2 ||x||^2``, ``y in {-1, +1}``.

:class:`LossClass` carries the *declared* constants of a claim (Lipschitz constant L, strong
convexity alpha, data bound R, domain) and rejects losses outside the class (AUDIT-METHOD
section 1: constants are public and enforced).
"""

from __future__ import annotations

import abc
from dataclasses import dataclass, field
from typing import Literal, Sequence

import numpy as np
from scipy.special import expit

from dpaudit._rowwise import add_outer, row_sum
from dpaudit._validation import check_finite_array, check_nonnegative, check_positive
from dpaudit.learners.domains import Domain

__all__ = ["Loss", "LinearLoss", "AffineLoss", "SquaredLoss", "ShiftedSquaredLoss", "LogisticLoss", "HingeLoss",
           "LossClass", "LossKind", "RecordingLoss"]

LossKind = Literal["linear", "squared", "logistic", "hinge"]


class Loss(abc.ABC):
    """One convex loss f_t: R^d -> R."""

    kind: LossKind
    ridge: float = 0.0

    @property
    @abc.abstractmethod
    def dim(self) -> int:
        """The dimension d."""

    @abc.abstractmethod
    def value(self, x: np.ndarray) -> np.ndarray:
        """f(x) for x of shape (..., d); returns shape (...)."""

    @abc.abstractmethod
    def grad(self, x: np.ndarray) -> np.ndarray:
        """A (sub)gradient at x, shape (..., d)."""

    @abc.abstractmethod
    def lipschitz(self, domain: Domain) -> float:
        """An upper bound on ||grad f|| over ``domain`` (tight for the linear and ridge parts)."""

    @property
    def strong_convexity(self) -> float:
        """The strong-convexity modulus guaranteed by the ridge term (data terms add >= 0)."""
        return self.ridge

    def _x(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        if x.ndim == 0 or x.shape[-1] != self.dim:
            raise ValueError(f"x must have last axis of length d={self.dim}, got shape {x.shape}")
        return x


def _vec(v: object, name: str) -> np.ndarray:
    arr = check_finite_array(v, name, ndim=1)
    if arr.size == 0:
        raise ValueError(f"{name} must have at least one coordinate")
    arr.setflags(write=False)
    return arr


def _label(y: object) -> float:
    y = float(y)
    if y not in (-1.0, 1.0):
        raise ValueError(f"y must be -1 or +1 for classification losses, got {y!r}")
    return y


@dataclass(frozen=True, eq=False)
class LinearLoss(Loss):
    """``f(x) = <g, x>`` (online linear optimisation; experts when g in [0,1]^d on the simplex)."""

    g: np.ndarray
    kind: LossKind = "linear"

    def __post_init__(self) -> None:
        object.__setattr__(self, "g", _vec(self.g, "g"))

    @property
    def dim(self) -> int:
        return self.g.shape[0]

    def value(self, x: np.ndarray) -> np.ndarray:
        return self._x(x) @ self.g

    def grad(self, x: np.ndarray) -> np.ndarray:
        x = self._x(x)
        return np.broadcast_to(self.g, x.shape).copy()

    def lipschitz(self, domain: Domain) -> float:
        return float(np.linalg.norm(self.g))


@dataclass(frozen=True, eq=False)
class _LabelledLoss(Loss):
    v: np.ndarray
    y: float
    ridge: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "v", _vec(self.v, "v"))
        object.__setattr__(self, "ridge", check_nonnegative(self.ridge, "ridge"))

    @property
    def dim(self) -> int:
        return self.v.shape[0]

    def _ridge_value(self, x: np.ndarray) -> np.ndarray:
        return 0.5 * self.ridge * row_sum(x * x)  # np.sum(x * x, axis=-1), bit for bit


@dataclass(frozen=True, eq=False)
class SquaredLoss(_LabelledLoss):
    """``f(x) = 1/2 (y - <v, x>)^2 + ridge/2 ||x||^2`` (JKT12 COLT eq. (3) with ridge = alpha)."""

    kind: LossKind = "squared"

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "y", float(check_finite_array(self.y, "y", ndim=0)))

    def value(self, x: np.ndarray) -> np.ndarray:
        x = self._x(x)
        r = self.y - x @ self.v
        return 0.5 * r * r + self._ridge_value(x)

    def grad(self, x: np.ndarray) -> np.ndarray:
        x = self._x(x)
        r = self.y - x @ self.v
        # -r[..., None] * v + ridge * x, bit for bit (a + b == b + a), column by column
        return add_outer(self.ridge * x, -r, self.v)

    def lipschitz(self, domain: Domain) -> float:
        D = domain.radius
        nv = float(np.linalg.norm(self.v))
        return (abs(self.y) + nv * D) * nv + self.ridge * D


@dataclass(frozen=True, eq=False)
class ShiftedSquaredLoss(SquaredLoss):
    """``1/2 (y - <v, x>)^2 - 1/2 reference^2 + ridge/2 ||x||^2``: a :class:`SquaredLoss` minus
    the constant ``reference^2 / 2``.

    The gradient, hence every iterate of IGD (whose implicit step only uses y, v and the ridge),
    GIGA and QFTL, is that of the unshifted loss. The value is computed as
    ``1/2 (r - reference)(r + reference)`` with ``r = y - <v, x>``, which avoids the cancellation
    of two huge squares (|y| ~ G/nu). Used to put POL's near-linear pair in the class of COLT
    Sec. 5 (``l: C x Z -> R^+``) and arXiv Sec. 4.2 (also ``l(0; z) <= 1``).
    """

    reference: float = 0.0

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "reference",
                           float(check_finite_array(self.reference, "reference", ndim=0)))

    @property
    def offset(self) -> float:
        """The constant added to the squared loss: ``-reference^2 / 2``."""
        return -0.5 * self.reference ** 2

    def value(self, x: np.ndarray) -> np.ndarray:
        x = self._x(x)
        r = self.y - x @ self.v
        return 0.5 * (r - self.reference) * (r + self.reference) + self._ridge_value(x)


@dataclass(frozen=True, eq=False)
class LogisticLoss(_LabelledLoss):
    """``f(x) = log(1 + exp(-y <v, x>)) + ridge/2 ||x||^2``."""

    kind: LossKind = "logistic"

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "y", _label(self.y))

    def value(self, x: np.ndarray) -> np.ndarray:
        x = self._x(x)
        return np.logaddexp(0.0, -self.y * (x @ self.v)) + self._ridge_value(x)

    def grad(self, x: np.ndarray) -> np.ndarray:
        x = self._x(x)
        s = expit(-self.y * (x @ self.v))
        # (-y s)[..., None] * v + ridge * x, bit for bit, column by column
        return add_outer(self.ridge * x, -self.y * s, self.v)

    def lipschitz(self, domain: Domain) -> float:
        return float(np.linalg.norm(self.v)) + self.ridge * domain.radius


@dataclass(frozen=True, eq=False)
class HingeLoss(_LabelledLoss):
    """``f(x) = max(0, 1 - y <v, x>) + ridge/2 ||x||^2`` (subgradient 0 at the kink)."""

    kind: LossKind = "hinge"

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "y", _label(self.y))

    def value(self, x: np.ndarray) -> np.ndarray:
        x = self._x(x)
        return np.maximum(0.0, 1.0 - self.y * (x @ self.v)) + self._ridge_value(x)

    def grad(self, x: np.ndarray) -> np.ndarray:
        x = self._x(x)
        active = (1.0 - self.y * (x @ self.v)) > 0
        return np.where(active[..., None], -self.y * self.v, 0.0) + self.ridge * x

    def lipschitz(self, domain: Domain) -> float:
        return float(np.linalg.norm(self.v)) + self.ridge * domain.radius


@dataclass(frozen=True)
class LossClass:
    """The declared class of a claim: loss kind, domain and public constants.

    ``lipschitz``: L, a bound on ||grad f_t|| over the domain; ``strong_convexity``: alpha, the
    modulus every f_t must have (0 for merely convex classes); ``data_bound``: R, a bound on
    ||v_t|| and |y_t| (quadratic/regression classes) or on ||g_t|| (linear); ``None`` = not declared.
    """

    kind: LossKind
    domain: Domain
    lipschitz: float
    strong_convexity: float = 0.0
    data_bound: float | None = None

    def __post_init__(self) -> None:
        check_positive(self.lipschitz, "lipschitz")
        check_nonnegative(self.strong_convexity, "strong_convexity")
        if self.data_bound is not None:
            check_positive(self.data_bound, "data_bound")

    def violations(self, loss: Loss, tol: float = 1e-9) -> list[str]:
        """Reasons ``loss`` is outside the class (empty list: it is a member)."""
        out = []
        if loss.kind != self.kind:
            out.append(f"kind {loss.kind!r} != declared {self.kind!r}")
        if loss.dim != self.domain.dim:
            out.append(f"dimension {loss.dim} != domain dimension {self.domain.dim}")
            return out
        lip = loss.lipschitz(self.domain)
        if lip > self.lipschitz * (1 + tol):
            out.append(f"Lipschitz constant {lip:.6g} over the domain exceeds declared L="
                       f"{self.lipschitz:.6g}")
        if loss.strong_convexity < self.strong_convexity * (1 - tol):
            out.append(f"strong convexity {loss.strong_convexity:.6g} below declared alpha="
                       f"{self.strong_convexity:.6g}")
        if self.data_bound is not None:
            R = self.data_bound * (1 + tol)
            if isinstance(loss, LinearLoss):
                if np.linalg.norm(loss.g) > R:
                    out.append(f"||g|| exceeds declared R={self.data_bound:.6g}")
            elif isinstance(loss, SquaredLoss):
                if np.linalg.norm(loss.v) > R or abs(loss.y) > R:
                    out.append(f"||v|| or |y| exceeds declared R={self.data_bound:.6g}")
            elif isinstance(loss, _LabelledLoss):  # labels are +-1; R bounds the features only
                if np.linalg.norm(loss.v) > R:
                    out.append(f"||v|| exceeds declared R={self.data_bound:.6g}")
        return out

    def check(self, losses: Sequence[Loss]) -> None:
        """Raise ``ValueError`` naming the first loss outside the declared class."""
        for t, loss in enumerate(losses):
            bad = self.violations(loss)
            if bad:
                raise ValueError(f"loss at position {t} is outside the declared class: "
                                 + "; ".join(bad))

    def __repr__(self) -> str:  # short, for reports
        return (f"LossClass({self.kind}, L={self.lipschitz:g}, alpha={self.strong_convexity:g}, "
                f"R={self.data_bound}, domain={self.domain!r})")


@dataclass(frozen=True, eq=False)
class AffineLoss(Loss):
    """``f(w) = <g, w> + c``: convex, ``||g||``-Lipschitz (constants are 0-Lipschitz).

    Used for the bandit pairs, whose worst case is a change of the loss *value* (ST13 Alg. 3
    passes ``(p/beta) f_t(w^_t) u_t``).
    """

    g: np.ndarray
    c: float = 0.0

    def __post_init__(self) -> None:
        g = check_finite_array(self.g, "g", ndim=1).copy()
        if g.size == 0:
            raise ValueError("g must have at least one coordinate")
        g.setflags(write=False)
        object.__setattr__(self, "g", g)
        object.__setattr__(self, "c", float(check_finite_array(self.c, "c", ndim=0)))

    @property
    def kind(self) -> LossKind:  # type: ignore[override]
        return "linear"

    @property
    def dim(self) -> int:
        return self.g.shape[0]

    def value(self, x: np.ndarray) -> np.ndarray:
        return self._x(x) @ self.g + self.c

    def grad(self, x: np.ndarray) -> np.ndarray:
        x = self._x(x)
        return np.broadcast_to(self.g, x.shape).copy()

    def lipschitz(self, domain: Domain) -> float:
        return float(np.linalg.norm(self.g))


@dataclass(frozen=True, eq=False)
class RecordingLoss(Loss):
    """Wraps a loss and records every point at which it is evaluated, in order, in ``calls``
    (``("value" | "grad", x)``): the papers' data-access checks use it to show that an algorithm
    touches f_t only where its pseudocode says (e.g. ST13 Algorithm 1 and the pfcoco learners
    evaluate only gradients at released points)."""

    inner: Loss
    calls: list = field(default_factory=list)

    @property
    def kind(self) -> LossKind:  # type: ignore[override]
        return self.inner.kind

    @property
    def dim(self) -> int:
        return self.inner.dim

    def value(self, x: np.ndarray) -> np.ndarray:
        self.calls.append(("value", np.array(x)))
        return self.inner.value(x)

    def grad(self, x: np.ndarray) -> np.ndarray:
        self.calls.append(("grad", np.array(x)))
        return self.inner.grad(x)

    def lipschitz(self, domain: Domain) -> float:
        return self.inner.lipschitz(domain)
