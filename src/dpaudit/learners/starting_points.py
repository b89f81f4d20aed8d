"""Starting points of the online learners: "choose x_1 randomly from C", or a fixed point.

JKT12 (COLT 2012 and arXiv) Algorithms 1, 2, 3, 6 and 7 start with "Choose x_1 (and x^_1) randomly
from C" without naming a distribution. dpaudit reads this as the uniform distribution on C
(``"uniform"``) and also accepts any fixed point of C: a point mass is one admissible "random"
choice, and the privacy theorems must hold for it too (the audits use it, so that the noise-free
trajectories are deterministic).
"""

from __future__ import annotations

from typing import Literal, Union

import numpy as np

from dpaudit._validation import check_finite_array, check_generator, check_int
from dpaudit.learners.domains import Ball, Box, Domain, Simplex

__all__ = ["StartingPoint", "check_starting_point", "starting_points", "sample_uniform"]

#: ``"uniform"`` (uniform on C, independently per run) or a fixed point of C, shape (d,).
StartingPoint = Union[Literal["uniform"], np.ndarray]


def check_starting_point(x1: object, domain: Domain | None, dim: int) -> StartingPoint:
    """Validate ``x1``: ``"uniform"`` (needs a bounded domain) or a point of ``domain``."""
    if isinstance(x1, str):
        if x1 != "uniform":
            raise ValueError(f"x1 must be 'uniform' or a point of the domain, got {x1!r}")
        if domain is None:
            raise ValueError("x1='uniform' needs a bounded domain; pass a fixed starting point")
        return "uniform"
    point = check_finite_array(x1, "x1", shape=(dim,))
    if domain is not None and not bool(domain.contains(point)):
        raise ValueError(f"x1 must lie in the domain {domain!r}, got {point!r}")
    point = point.copy()
    point.setflags(write=False)
    return point


def sample_uniform(domain: Domain, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` independent uniform points of ``domain``, shape ``(n, d)``.

    Ball: uniform direction times ``radius * U^(1/d)``; box: independent uniform coordinates;
    simplex: Dirichlet(1, ..., 1).
    """
    n = check_int(n, "n", minimum=1)
    rng = check_generator(rng)
    d = domain.dim
    if isinstance(domain, Ball):
        g = rng.standard_normal((n, d))
        norms = np.linalg.norm(g, axis=1, keepdims=True)
        g /= np.where(norms > 0, norms, 1.0)
        return g * (domain.radius * rng.random((n, 1)) ** (1.0 / d))
    if isinstance(domain, Box):
        return domain.lower + (domain.upper - domain.lower) * rng.random((n, d))
    if isinstance(domain, Simplex):
        return rng.dirichlet(np.ones(d), size=n)
    raise TypeError(f"cannot sample uniformly from {type(domain).__name__}")


def starting_points(x1: StartingPoint, domain: Domain | None, n: int, dim: int,
                    rng: np.random.Generator) -> np.ndarray:
    """Starting points of ``n`` runs, shape ``(n, dim)`` (a copy of the fixed point, or uniform)."""
    if isinstance(x1, str):
        assert domain is not None  # enforced by check_starting_point
        return sample_uniform(domain, n, rng)
    return np.broadcast_to(x1, (n, dim)).copy()
