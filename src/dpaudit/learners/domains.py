"""Convex decision sets C the papers use: l2 ball, box, probability simplex.

A domain is a small immutable value with a vectorised Euclidean projection (last axis = coordinates)
and the constants the papers' bounds use (``radius`` = max_{x in C} ||x||_2, ``diameter``).
"""

from __future__ import annotations

import abc
import math
from dataclasses import dataclass

import numpy as np

from dpaudit._rowwise import row_norm
from dpaudit._validation import check_finite_array, check_int, check_positive
from dpaudit.mechanisms.projections import project_box, project_l2_ball, project_simplex

__all__ = ["Domain", "Ball", "Box", "Simplex"]


class Domain(abc.ABC):
    """A closed convex set in R^dim."""

    dim: int

    @abc.abstractmethod
    def project(self, x: np.ndarray) -> np.ndarray:
        """Euclidean projection of ``x`` (shape ``(..., dim)``) onto the set."""

    @property
    @abc.abstractmethod
    def radius(self) -> float:
        """max_{x in C} ||x||_2 (the papers' ||C||_2 when C contains 0)."""

    @property
    @abc.abstractmethod
    def diameter(self) -> float:
        """max_{x, y in C} ||x - y||_2."""

    def contains(self, x: np.ndarray, tol: float = 1e-9) -> np.ndarray:
        """Boolean array ``(...,)``: whether each point lies in the set (up to ``tol``)."""
        x = np.asarray(x, dtype=float)
        # row_norm: np.linalg.norm(., axis=-1) bit for bit, without numpy's per-row reduction
        return row_norm(self.project(x) - x) <= tol * max(1.0, self.radius)

    def _check_point(self, x: np.ndarray) -> np.ndarray:
        arr = check_finite_array(x, "x")
        if arr.ndim == 0 or arr.shape[-1] != self.dim:
            raise ValueError(f"x must have last axis of length dim={self.dim}, got shape {arr.shape}")
        return arr


@dataclass(frozen=True)
class Ball(Domain):
    """``{x : ||x||_2 <= radius}`` in R^dim."""

    dim: int
    radius_: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "dim", check_int(self.dim, "dim", minimum=1))
        object.__setattr__(self, "radius_", check_positive(self.radius_, "radius"))

    def project(self, x: np.ndarray) -> np.ndarray:
        return project_l2_ball(self._check_point(x), self.radius_)

    @property
    def radius(self) -> float:
        return self.radius_

    @property
    def diameter(self) -> float:
        return 2.0 * self.radius_


@dataclass(frozen=True)
class Box(Domain):
    """``[lower, upper]^dim`` (scalar bounds, the same on every coordinate)."""

    dim: int
    lower: float = -1.0
    upper: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "dim", check_int(self.dim, "dim", minimum=1))
        lo = float(check_finite_array(self.lower, "lower"))
        hi = float(check_finite_array(self.upper, "upper"))
        if not lo < hi:
            raise ValueError(f"lower must be < upper, got lower={lo}, upper={hi}")
        object.__setattr__(self, "lower", lo)
        object.__setattr__(self, "upper", hi)

    def project(self, x: np.ndarray) -> np.ndarray:
        return project_box(self._check_point(x), self.lower, self.upper)

    @property
    def radius(self) -> float:
        return math.sqrt(self.dim) * max(abs(self.lower), abs(self.upper))

    @property
    def diameter(self) -> float:
        return math.sqrt(self.dim) * (self.upper - self.lower)


@dataclass(frozen=True)
class Simplex(Domain):
    """The probability simplex ``{x >= 0, sum x = 1}`` in R^dim (experts' weights)."""

    dim: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "dim", check_int(self.dim, "dim", minimum=1))

    def project(self, x: np.ndarray) -> np.ndarray:
        return project_simplex(self._check_point(x))

    @property
    def radius(self) -> float:
        return 1.0

    @property
    def diameter(self) -> float:
        return math.sqrt(2.0) if self.dim > 1 else 0.0
