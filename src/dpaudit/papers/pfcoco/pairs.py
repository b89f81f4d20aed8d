"""Neighbouring streams for the pfcoco audits: only at positions the claim protects.

Window DP (Def. 6; Web Intelligence 2020) protects entry ``i`` up to horizon ``T`` only while
``T - i < W`` (strict reading) or ``T - i <= W`` (inclusive). Every pair built here is checked
against a :class:`~dpaudit.claims.WindowScope`: a pair at an expired position raises
``ValueError``, so the leakage of an expired entry is never called a violation; only
:func:`expired_tree_pair` builds one, to *measure* what the relaxation leaks. The audited position
is the oldest protected entry (:func:`oldest_protected`). Learner pairs (:func:`learner_pair`)
follow ST13's construction, ``f_+-(x) = +-a <e_1, x> + mu/2 ||x - c||^2`` with ``a = L - mu R``,
arranged so that the first stream's clean trajectory sits at the domain's centre after the
replaced round; membership of every loss in the declared class is asserted.

The construction in full: docs/paper-readings.md#pfcoco-neighbouring-streams
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpaudit._validation import check_int, check_positive
from dpaudit.claims import WindowScope
from dpaudit.learners.domains import Ball, Box, Domain, Simplex
from dpaudit.learners.losses import Loss
from dpaudit.mechanisms.tree_aggregation import mirrored_leaf_streams

__all__ = ["oldest_protected", "check_protected", "tree_pair", "expired_tree_pair",
           "CentredQuadratic", "domain_centre", "centre_radius", "LearnerPair", "learner_pair"]


def oldest_protected(scope: WindowScope, W: int, T: int) -> int:
    """The oldest entry protected at horizon ``T`` (it lies in the most releases).

    Parameters
    ----------
    scope
        The window-DP scope (its boundary reading decides which positions are protected).
    W
        Window length (>= 1).
    T
        Horizon (>= 1).

    Returns
    -------
    int
        Its 1-based position.
    """
    return scope.protected_positions(T, W)[0]


def check_protected(scope: WindowScope, position: int, W: int, T: int) -> int:
    """``position`` if the scope protects it at horizon ``T``.

    Parameters
    ----------
    scope
        The window-DP scope (its boundary reading decides which positions are protected).
    position
        1-based position of the replaced entry.
    W
        Window length (>= 1).
    T
        Horizon (>= 1).

    Returns
    -------
    int
        ``position``.

    Raises
    ------
    ValueError
        If the position has expired: its leakage is not a violation of window DP.
    """
    if not scope.protects(position, T, W):
        raise ValueError(f"position {position} has expired at horizon T={T} with window W={W} "
                         f"({scope.boundary.value} reading): its leakage is not a violation of "
                         "window DP; use expired_tree_pair to measure it")
    return position


def _tree_streams(position: int, T: int, d: int, sensitivity: float
                  ) -> tuple[np.ndarray, np.ndarray]:
    s = check_positive(sensitivity, "sensitivity")
    return mirrored_leaf_streams(position, T, d, s / 2.0)


def tree_pair(scope: WindowScope, W: int, T: int, d: int, sensitivity: float,
              position: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Two leaf streams of shape ``(T, d)`` differing at a protected position by ``sensitivity``.

    Leaf ``position`` (default :func:`oldest_protected`) is ``+-sensitivity/2 e_1``, every other
    leaf 0.

    Parameters
    ----------
    scope
        The window-DP scope (its boundary reading decides which positions are protected).
    W
        Window length (>= 1).
    T
        Horizon (>= 1).
    d
        Dimension of every leaf (>= 1).
    sensitivity
        l2 distance between the two replaced leaves (> 0).
    position
        1-based protected position; ``None``: :func:`oldest_protected`.

    Returns
    -------
    tuple
        The two ``(T, d)`` leaf streams.

    Raises
    ------
    ValueError
        If a parameter is out of its range or the position is not protected.
    """
    T = check_int(T, "T", minimum=1)
    d = check_int(d, "d", minimum=1)
    i = oldest_protected(scope, W, T) if position is None else position
    check_protected(scope, i, W, T)
    return _tree_streams(i, T, d, sensitivity)


def expired_tree_pair(scope: WindowScope, W: int, T: int, d: int, sensitivity: float,
                      position: int) -> tuple[np.ndarray, np.ndarray]:
    """Like :func:`tree_pair` at an *expired* position (``ValueError`` if it is protected).

    For measuring what window DP gives up, never for a verdict.

    Parameters
    ----------
    scope
        The window-DP scope (its boundary reading decides which positions are protected).
    W
        Window length (>= 1).
    T
        Horizon (>= 1).
    d
        Dimension of every leaf (>= 1).
    sensitivity
        l2 distance between the two replaced leaves (> 0).
    position
        1-based expired position, in ``[1, T]``.

    Returns
    -------
    tuple
        The two ``(T, d)`` leaf streams.

    Raises
    ------
    ValueError
        If a parameter is out of its range or the position is still protected.
    """
    T = check_int(T, "T", minimum=1)
    i = check_int(position, "position", minimum=1, maximum=T)
    if scope.protects(i, T, W):
        raise ValueError(f"position {i} is still protected at T={T}, W={W}")
    return _tree_streams(i, T, check_int(d, "d", minimum=1), sensitivity)


def domain_centre(domain: Domain) -> np.ndarray:
    """The centre used by the learner pairs: 0 (ball), the box midpoint, the simplex barycentre.

    Parameters
    ----------
    domain
        A :class:`~dpaudit.learners.domains.Ball`, ``Box`` or ``Simplex``.

    Returns
    -------
    numpy.ndarray
        The centre, shape ``(domain.dim,)``.

    Raises
    ------
    TypeError
        If the domain is of another type.
    """
    if isinstance(domain, Ball):
        return np.zeros(domain.dim)
    if isinstance(domain, Box):
        return np.full(domain.dim, (domain.lower + domain.upper) / 2.0)
    if isinstance(domain, Simplex):
        return np.full(domain.dim, 1.0 / domain.dim)
    raise TypeError(f"unsupported domain {type(domain).__name__}")


def centre_radius(domain: Domain) -> float:
    """``max_{x in C} ||x - centre||`` for the centre of :func:`domain_centre`.

    Parameters
    ----------
    domain
        A :class:`~dpaudit.learners.domains.Ball`, ``Box`` or ``Simplex``.

    Returns
    -------
    float
        The radius around the centre.

    Raises
    ------
    TypeError
        If the domain is of another type.
    """
    if isinstance(domain, Ball):
        return domain.radius
    if isinstance(domain, Box):
        return domain.diameter / 2.0
    if isinstance(domain, Simplex):
        return math.sqrt(1.0 - 1.0 / domain.dim)
    raise TypeError(f"unsupported domain {type(domain).__name__}")


@dataclass(frozen=True, eq=False)
class CentredQuadratic(Loss):
    """``f(x) = <g, x> + mu/2 ||x - c||^2`` (pfcoco pairs; Lipschitz constant on the domain)."""

    g: np.ndarray
    mu: float
    centre: np.ndarray
    kind = "squared"

    def __post_init__(self) -> None:
        object.__setattr__(self, "g", np.asarray(self.g, dtype=float))
        object.__setattr__(self, "centre", np.asarray(self.centre, dtype=float))

    @property
    def ridge(self) -> float:  # type: ignore[override]
        """The strong convexity ``mu`` (the :class:`Loss` ridge)."""
        return self.mu

    @property
    def dim(self) -> int:
        """The dimension ``d`` of ``g``."""
        return self.g.shape[0]

    def value(self, x: np.ndarray) -> np.ndarray:
        """The loss ``<g, x> + mu/2 ||x - c||^2`` at ``x``.

        Parameters
        ----------
        x
            One point ``(d,)`` or a batch ``(..., d)``.

        Returns
        -------
        numpy.ndarray
            The values, one per point.

        Raises
        ------
        ValueError
            If the last axis of ``x`` is not of length ``d``.
        """
        x = self._x(x)
        return x @ self.g + 0.5 * self.mu * np.sum((x - self.centre) ** 2, axis=-1)

    def grad(self, x: np.ndarray) -> np.ndarray:
        """The gradient ``g + mu (x - c)`` at ``x``.

        Parameters
        ----------
        x
            One point ``(d,)`` or a batch ``(..., d)``.

        Returns
        -------
        numpy.ndarray
            The gradients, of the shape of ``x``.

        Raises
        ------
        ValueError
            If the last axis of ``x`` is not of length ``d``.
        """
        x = self._x(x)
        return self.g + self.mu * (x - self.centre)

    def lipschitz(self, domain: Domain) -> float:
        """The loss's Lipschitz constant on ``domain``, around its centre.

        ``max_{x in C} ||g + mu (x - c)||`` (exact for the centre of :func:`domain_centre`
        when ``g`` is along a coordinate axis; an upper bound otherwise).

        Parameters
        ----------
        domain
            The domain C; the loss's centre must be its :func:`domain_centre`.

        Returns
        -------
        float
            ``||g|| + mu * centre_radius(domain)``.

        Raises
        ------
        ValueError
            If the loss is not centred on the domain's centre.
        """
        if not np.allclose(self.centre, domain_centre(domain)):
            raise ValueError("CentredQuadratic.lipschitz needs the domain's own centre")
        return float(np.linalg.norm(self.g)) + self.mu * centre_radius(domain)


@dataclass(frozen=True)
class LearnerPair:
    """Two loss streams and what they are: the replaced round, the gradient gap."""

    losses0: tuple[Loss, ...]
    losses1: tuple[Loss, ...]
    position: int
    gradient_gap: float
    lipschitz: float
    strong_convexity: float


def learner_pair(scope: WindowScope, W: int, T: int, domain: Domain, lipschitz: float,
                 strong_convexity: float, position: int | None = None) -> LearnerPair:
    """The worst-case pair of the module docstring at a protected round ``position >= 2``.

    Default position: :func:`oldest_protected`, moved to 2 if it is 1 (``T >= 2`` required).
    ``ValueError`` if the class is empty (``mu R > L``) or the position is not protected.

    Parameters
    ----------
    scope
        The window-DP scope (its boundary reading decides which positions are protected).
    W
        Window length (>= 1).
    T
        Horizon (>= 2).
    domain
        The domain C (ball, box or simplex).
    lipschitz
        The class's Lipschitz bound ``L`` (> 0).
    strong_convexity
        The class's strong convexity ``mu`` (> 0).
    position
        1-based protected round, in ``[2, T]``; ``None``: the default above.

    Returns
    -------
    LearnerPair
        The two streams, the replaced round and the gradient gap ``2 (L - mu R)``.

    Raises
    ------
    ValueError
        If the class is empty, a parameter is out of its range or the position is not protected.
    TypeError
        If the domain is not a ball, box or simplex.
    """
    T = check_int(T, "T", minimum=2)
    L = check_positive(lipschitz, "lipschitz")
    mu = check_positive(strong_convexity, "strong_convexity")
    R = centre_radius(domain)
    a = L - mu * R
    if a < 0:
        raise ValueError(f"no L-Lipschitz mu-strongly convex loss centred on this domain: mu R = "
                         f"{mu * R:.4g} > L = {L:.4g}")
    i = max(2, oldest_protected(scope, W, T)) if position is None else position
    i = check_int(i, "position", minimum=2, maximum=T)
    check_protected(scope, i, W, T)
    c = domain_centre(domain)
    e1 = np.zeros(domain.dim)
    e1[0] = 1.0
    plus, minus = CentredQuadratic(a * e1, mu, c), CentredQuadratic(-a * e1, mu, c)
    zero = CentredQuadratic(np.zeros(domain.dim), mu, c)
    base = [zero] * T
    base[i - 2] = minus
    s0, s1 = list(base), list(base)
    s0[i - 1], s1[i - 1] = plus, minus
    for f in (plus, minus, zero):  # membership in the declared class (invalid => false alarm)
        assert f.lipschitz(domain) <= L * (1 + 1e-12) and f.strong_convexity >= mu
    return LearnerPair(tuple(s0), tuple(s1), i, 2.0 * a, L, mu)
