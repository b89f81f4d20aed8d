"""Local linear optimisation oracles (LLOO) for the simplex and the box, vectorised over runs.

pfcoco (``pfcoco-window-tree.txt``, Web Intelligence 2020), Assumption 1: an LLOO with parameter
``rho`` maps a point ``x`` of the polytope ``P``, a radius ``r`` and a direction ``c`` to a point
``p`` of ``P`` that minimises ``<., c>`` over ``B(x, r) ∩ P`` (1) with ``||x - p||_2 <= rho r``
(2). Simplex: the construction of Garber & Hazan (SIAM J. Optim. 26(3), 2016), moving mass
``min(sqrt(d) r / 2, 1)`` greedily from the largest-``c`` coordinates to the smallest, an LLOO
with ``rho = sqrt(d)``. Box ``[lo, hi]^d``: ``p_i = clip(x_i - r sign(c_i), lo, hi)``, also
``rho = sqrt(d)``. The tests check property 1 against ``scipy.optimize.linprog`` and property 2
directly.

Why each construction has both properties: docs/paper-readings.md#pfcoco-local-linear-oracles.
"""

from __future__ import annotations

import abc
import math
from dataclasses import dataclass

import numpy as np

from dpaudit._validation import check_finite_array, check_nonnegative
from dpaudit.learners.domains import Box, Domain, Simplex

__all__ = ["LocalLinearOracle", "SimplexLLOO", "BoxLLOO", "lloo_for"]


class LocalLinearOracle(abc.ABC):
    """An LLOO (pfcoco Assumption 1) over a polytope ``domain`` with parameter :attr:`rho`."""

    domain: Domain

    @property
    @abc.abstractmethod
    def rho(self) -> float:
        """The locality parameter: ``||x - p||_2 <= rho r``."""

    @abc.abstractmethod
    def _solve(self, x: np.ndarray, r: float, c: np.ndarray) -> np.ndarray:
        """The oracle on validated inputs of shape ``(n, d)``."""

    def __call__(self, x: np.ndarray, r: float, c: np.ndarray) -> np.ndarray:
        """``p = LLOO(x, r, c)`` row by row; ``x``, ``c`` of shape ``(d,)`` or ``(n, d)``.

        ``x`` must lie in the domain (``ValueError`` otherwise), ``r >= 0``.
        """
        d = self.domain.dim
        x = check_finite_array(x, "x", ndim=(1, 2))
        c = check_finite_array(c, "c", ndim=(1, 2))
        if x.shape[-1] != d or c.shape[-1] != d:
            raise ValueError(f"x and c must have last axis d={d}, got {x.shape} and {c.shape}")
        r = check_nonnegative(r, "r")
        if not np.all(self.domain.contains(x, tol=1e-7)):
            raise ValueError("x must lie in the domain")
        x2, c2 = np.broadcast_arrays(np.atleast_2d(x), np.atleast_2d(c))
        out = self._solve(np.array(x2, dtype=float), r, np.array(c2, dtype=float))
        return out if (x.ndim == 2 or c.ndim == 2) else out[0]


@dataclass(frozen=True)
class SimplexLLOO(LocalLinearOracle):
    """Garber-Hazan LLOO for the probability simplex, ``rho = sqrt(d)``.

    Why it is an LLOO: docs/paper-readings.md#pfcoco-local-linear-oracles.
    """

    domain: Simplex

    def __post_init__(self) -> None:
        if not isinstance(self.domain, Simplex):
            raise TypeError(f"domain must be a Simplex, got {type(self.domain).__name__}")

    @property
    def rho(self) -> float:
        return math.sqrt(self.domain.dim)

    def mass(self, r: float) -> float:
        """``Delta = min(sqrt(d) r / 2, 1)``, the mass moved."""
        return min(math.sqrt(self.domain.dim) * check_nonnegative(r, "r") / 2.0, 1.0)

    def _solve(self, x: np.ndarray, r: float, c: np.ndarray) -> np.ndarray:
        delta = self.mass(r)
        n = x.shape[0]
        rows = np.arange(n)[:, None]
        order = np.argsort(-c, axis=1, kind="stable")  # largest c first
        xs = x[rows, order]
        before = np.cumsum(xs, axis=1) - xs  # mass already taken from larger-c coordinates
        take = np.clip(delta - before, 0.0, xs)
        removed = np.zeros_like(x)
        removed[rows, order] = take
        p = x - removed
        p[np.arange(n), np.argmin(c, axis=1)] += take.sum(axis=1)
        return np.maximum(p, 0.0)


@dataclass(frozen=True)
class BoxLLOO(LocalLinearOracle):
    """LLOO for the box ``[lo, hi]^d``: the minimiser over the l_inf ball, ``rho = sqrt(d)``."""

    domain: Box

    def __post_init__(self) -> None:
        if not isinstance(self.domain, Box):
            raise TypeError(f"domain must be a Box, got {type(self.domain).__name__}")

    @property
    def rho(self) -> float:
        return math.sqrt(self.domain.dim)

    def _solve(self, x: np.ndarray, r: float, c: np.ndarray) -> np.ndarray:
        return np.clip(x - r * np.sign(c), self.domain.lower, self.domain.upper)


def lloo_for(domain: Domain) -> LocalLinearOracle:
    """The LLOO of a supported polytope (:class:`Simplex`, :class:`Box`), else ``TypeError``."""
    if isinstance(domain, Simplex):
        return SimplexLLOO(domain)
    if isinstance(domain, Box):
        return BoxLLOO(domain)
    raise TypeError(f"no local linear oracle for {type(domain).__name__}; "
                    "WDP-COCOL needs a polytope (Simplex or Box)")
