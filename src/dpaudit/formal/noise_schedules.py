"""Noise schedules with the neighbouring relation explicit: the accountant's side of a user's claim.

A schedule says what noise the release adds and how much one record can move each noisy output,
in the user's own terms: ``sensitivity`` is *a record's largest contribution* (the clip norm of a
clipped gradient, the bound on a record's value), not a distance between neighbouring outputs.
Turning it into a distance is the schedule's job and depends on the neighbouring relation, which
every method takes as a required keyword (``neighbours="replace-one"`` or ``"add-remove"``;
leaving it out is a ``TypeError`` naming it):

* add/remove one record moves each output it enters by at most ``sensitivity``;
* replacing one record by another moves it by at most ``2 * sensitivity`` (the old contribution
  leaves, the new one enters), and the schedule doubles it itself.

dp-accounting's ``REPLACE_ONE`` relation doubles a Gaussian or Laplace event's sensitivity inside
the accountant (AUDIT-METHOD section 4); the schedules never pass a relation to dp-accounting, they
hand it the distance, so the factor is counted exactly once. A calibration made for add/remove
neighbours and claimed under replace-one therefore shows up as an accountant epsilon above the
claim.

Schedules (small immutable objects, after dp-accounting's events):

* :class:`GaussianNoise`: ``releases`` outputs, each with independent ``N(0, sigma^2)`` noise per
  coordinate, a record entering each with l2 norm at most ``sensitivity``: one Gaussian
  mechanism with ``mu = sqrt(releases) * distance / sigma`` (Dong, Roth & Su 2022, Cor. 3.3),
  epsilon(delta) in closed form (Balle & Wang 2018, Thm 8).
* :func:`gaussian_tree`: Gaussian tree aggregation (binary or k-ary) over ``T`` leaves: a record
  enters the ``ceil(log_k T) + 1`` nodes on its leaf's path, each with fresh node noise (Dwork et
  al. 2010; Chan, Shi & Song 2011; used by DP-FTRL, Kairouz et al. 2021).
* :class:`LaplaceNoise`: ``releases`` outputs with independent ``Laplace(scale)`` noise per
  coordinate, a record entering each with l1 norm at most ``sensitivity``; composed by the guarded
  accountant (:func:`dpaudit.formal.accounting.epsilon_of_event`).
* :func:`laplace_tree`: the same on a tree (the composition of the path's nodes).
* :func:`matrix_factorization`: ``A x + B z`` with ``z`` Gaussian: the sensitivity of the
  strategy ``C = B^{-1} A`` (largest column l2 norm times the record's contribution, under the
  single-participation assumption) gives one Gaussian mechanism.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from dpaudit._validation import check_delta, check_int, check_positive
from dpaudit.formal.accounting import epsilon_of_event, gaussian_epsilon

__all__ = ["Relation", "distance_factor", "GaussianNoise", "LaplaceNoise", "gaussian_tree",
           "laplace_tree", "matrix_factorization", "tree_depth"]

Relation = Literal["replace-one", "add-remove"]
_RELATIONS = ("replace-one", "add-remove")


def distance_factor(neighbours: Any) -> float:
    """How far neighbouring outputs can be, in units of a record's largest contribution: 2 under
    replace-one, 1 under add/remove. Anything else is a ValueError naming the allowed values."""
    value = getattr(neighbours, "value", neighbours)
    if value not in _RELATIONS:
        raise ValueError(f"neighbours must be one of {', '.join(_RELATIONS)}, got {neighbours!r}")
    return 2.0 if value == "replace-one" else 1.0


def tree_depth(T: int, arity: int = 2) -> int:
    """Nodes on a leaf's path in a complete ``arity``-ary tree over ``T`` leaves:
    ``ceil(log_arity T) + 1`` (1 for ``T = 1``)."""
    T = check_int(T, "T", minimum=1)
    arity = check_int(arity, "arity", minimum=2)
    depth, leaves = 1, 1
    while leaves < T:
        leaves *= arity
        depth += 1
    return depth


@dataclass(frozen=True)
class GaussianNoise:
    """``releases`` noisy outputs, each ``f(data) + N(0, sigma^2 I)``, where one record changes
    each ``f`` by at most ``sensitivity`` in l2 norm (its largest contribution, e.g. a clip norm)."""

    sigma: float
    sensitivity: float
    releases: int = 1

    def __post_init__(self) -> None:
        object.__setattr__(self, "sigma", check_positive(self.sigma, "sigma"))
        object.__setattr__(self, "sensitivity", check_positive(self.sensitivity, "sensitivity"))
        object.__setattr__(self, "releases", check_int(self.releases, "releases", minimum=1))

    def mu(self, *, neighbours: Relation) -> float:
        """The Gaussian-DP parameter of the whole schedule under ``neighbours``."""
        shift = distance_factor(neighbours) * self.sensitivity
        return math.sqrt(self.releases) * shift / self.sigma

    def epsilon(self, delta: float, *, neighbours: Relation) -> float:
        """epsilon(delta) of the schedule (exact closed form, returned on the safe side)."""
        delta = check_delta(delta)
        mu = self.mu(neighbours=neighbours)
        return math.inf if delta == 0.0 else gaussian_epsilon(mu, delta)

    def describe(self, *, neighbours: Relation) -> str:
        f = distance_factor(neighbours)
        return (f"Gaussian noise sigma = {self.sigma:.6g} on {self.releases} release(s), a record "
                f"contributing at most {self.sensitivity:.6g} (l2) to each; {neighbours} "
                f"neighbours move each by {f:g} x {self.sensitivity:.6g}: mu = "
                f"{self.mu(neighbours=neighbours):.6g}")


@dataclass(frozen=True)
class LaplaceNoise:
    """``releases`` noisy outputs, each ``f(data) + Laplace(0, scale)`` per coordinate, where one
    record changes each ``f`` by at most ``sensitivity`` in l1 norm."""

    scale: float
    sensitivity: float
    releases: int = 1

    def __post_init__(self) -> None:
        object.__setattr__(self, "scale", check_positive(self.scale, "scale"))
        object.__setattr__(self, "sensitivity", check_positive(self.sensitivity, "sensitivity"))
        object.__setattr__(self, "releases", check_int(self.releases, "releases", minimum=1))

    def epsilon(self, delta: float, *, neighbours: Relation) -> float:
        """epsilon(delta): ``releases * distance / scale`` at delta = 0, else the guarded
        accountant's composition of the Laplace pieces (an upper bound)."""
        import dp_accounting

        delta = check_delta(delta)
        eps0 = distance_factor(neighbours) * self.sensitivity / self.scale
        if delta == 0.0:
            return self.releases * eps0
        event = dp_accounting.ComposedDpEvent([dp_accounting.LaplaceDpEvent(1.0 / eps0)]
                                              * self.releases)
        return min(self.releases * eps0, epsilon_of_event(event, delta))

    def describe(self, *, neighbours: Relation) -> str:
        f = distance_factor(neighbours)
        return (f"Laplace noise b = {self.scale:.6g} on {self.releases} release(s), a record "
                f"contributing at most {self.sensitivity:.6g} (l1) to each; {neighbours} "
                f"neighbours move each by {f:g} x {self.sensitivity:.6g}")


def gaussian_tree(sigma: float, sensitivity: float, T: int, arity: int = 2) -> GaussianNoise:
    """Gaussian tree aggregation over ``T`` leaves: every node has fresh ``N(0, sigma^2)`` noise and
    a record (one leaf) enters the ``tree_depth(T, arity)`` nodes on its path."""
    return GaussianNoise(sigma, sensitivity, tree_depth(T, arity))


def laplace_tree(scale: float, sensitivity: float, T: int, arity: int = 2) -> LaplaceNoise:
    """Laplace tree aggregation over ``T`` leaves (node noise ``Laplace(scale)``)."""
    return LaplaceNoise(scale, sensitivity, tree_depth(T, arity))


def matrix_factorization(strategy: Any, sigma: float, sensitivity: float) -> GaussianNoise:
    """The matrix mechanism ``B (C x + z)`` with ``z ~ N(0, sigma^2 I)`` and strategy matrix ``C``
    (``A = B C``), each record entering one column of ``x`` once (single participation): the
    release is one Gaussian mechanism whose shift is at most ``max_j ||C[:, j]||_2`` times the
    distance between neighbouring records (Choquette-Choo et al. 2023, Sec. 2)."""
    c = np.asarray(strategy, dtype=np.float64)
    if c.ndim != 2 or c.size == 0 or not np.all(np.isfinite(c)):
        raise ValueError("strategy must be a finite 2-D matrix")
    col = float(np.max(np.linalg.norm(c, axis=0)))
    if col <= 0:
        raise ValueError("strategy must have a non-zero column")
    return GaussianNoise(sigma, sensitivity * col, 1)
