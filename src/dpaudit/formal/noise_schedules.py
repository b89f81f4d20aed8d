"""Noise schedules with the neighbouring relation explicit: the accountant's side of a user's claim.

A schedule says what noise the release adds and how much one record can move each noisy output,
in the user's terms: ``sensitivity`` is a record's largest contribution (a clip norm), and every
method takes the relation as a required keyword (``neighbours="replace-one"`` doubles it,
``"add-remove"`` keeps it). The schedule hands dp-accounting the distance and never a relation, so
the factor is counted exactly once and an add/remove calibration claimed under replace-one shows
as an accountant epsilon above the claim (AUDIT-METHOD section 4). Schedules, after
dp-accounting's events: :class:`GaussianNoise` (Dong, Roth & Su 2022, Cor. 3.3; Balle & Wang 2018,
Thm 8), :func:`gaussian_tree`, :class:`LaplaceNoise`, :func:`laplace_tree`,
:func:`matrix_factorization`, :class:`SparseVector` (Lyu, Su & Li 2017, Alg. 1),
:class:`ExponentialMechanism` (McSherry & Talwar 2007) and :func:`compose`; pure pieces go through
:func:`dpaudit.formal.accounting.epsilon_of_event`, never ``PLDAccountant``. :func:`epsilon_of` /
:func:`delta_of` account a ``dp_accounting.DpEvent`` of your own.

Each schedule's law and the two readings of ``sensitivity_is``:
docs/formal-notes.md#noise-schedules.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from dpaudit._validation import check_delta, check_int, check_positive
from dpaudit.formal.accounting import epsilon_of_event, gaussian_epsilon

__all__ = ["Relation", "distance_factor", "GaussianNoise", "LaplaceNoise", "gaussian_tree",
           "laplace_tree", "matrix_factorization", "tree_depth", "SparseVector",
           "ExponentialMechanism", "epsilon_of", "delta_of", "SensitivityReading",
           "as_distance_event", "ComposedNoise", "compose", "CROSS_CHECK_TOLERANCE"]

Relation = Literal["replace-one", "add-remove"]
_RELATIONS = ("replace-one", "add-remove")
SensitivityReading = Literal["contribution", "distance"]
_READINGS = ("contribution", "distance")


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


# ----------------------------------------------------------------------------------------------
# Pure-epsilon compositions: sparse vector and the exponential mechanism
# ----------------------------------------------------------------------------------------------

def _pure_composition(eps0: float, releases: int, delta: float) -> float:
    """epsilon(delta) of ``releases`` eps0-DP pieces through the guarded accountant (explicit list:
    never a self-composed randomized response handed to ``PLDAccountant``)."""
    from dpaudit.mechanisms.events import EpsilonDeltaDpEvent

    delta = check_delta(delta)
    if delta == 0.0:
        return releases * eps0
    event = _composed([EpsilonDeltaDpEvent(eps0, 0.0)] * releases)
    return min(releases * eps0, epsilon_of_event(event, delta))


def _composed(events: list[Any]) -> Any:
    import dp_accounting

    return dp_accounting.ComposedDpEvent(events)


@dataclass(frozen=True)
class SparseVector:
    """``releases`` runs of the sparse vector technique (Lyu, Su & Li, VLDB 2017, Alg. 1).

    One run: noisy threshold ``T + Laplace(threshold_scale)``, each query answer gets fresh
    ``Laplace(query_scale)`` noise and is compared with it, and the run stops after ``cutoff``
    answers above it. ``sensitivity`` is what one record can change a query answer (and the
    threshold, if data-dependent) by, read as its largest contribution (``neighbours=
    "replace-one"`` doubles it: right for a vector sum of records with norm at most the
    sensitivity; for counting queries, whose answers move by at most 1 under either relation,
    state ``sensitivity=0.5`` or pass the distance through :func:`epsilon_of`). One run is
    ``eps_run = d / threshold_scale + k * cutoff * d / query_scale``-DP with ``d`` the distance and
    ``k = 2`` (``k = 1`` for ``monotonic`` queries, which all move in the same direction); the
    ``releases`` runs compose as pure pieces.
    """

    threshold_scale: float
    query_scale: float
    sensitivity: float
    cutoff: int = 1
    releases: int = 1
    monotonic: bool = False

    def __post_init__(self) -> None:
        for name in ("threshold_scale", "query_scale", "sensitivity"):
            object.__setattr__(self, name, check_positive(getattr(self, name), name))
        object.__setattr__(self, "cutoff", check_int(self.cutoff, "cutoff", minimum=1))
        object.__setattr__(self, "releases", check_int(self.releases, "releases", minimum=1))

    def run_epsilon(self, *, neighbours: Relation) -> float:
        """The pure epsilon of one run under ``neighbours``."""
        d = distance_factor(neighbours) * self.sensitivity
        k = 1.0 if self.monotonic else 2.0
        return d / self.threshold_scale + k * self.cutoff * d / self.query_scale

    def epsilon(self, delta: float, *, neighbours: Relation) -> float:
        """epsilon(delta) of the ``releases`` runs (``releases * eps_run`` at delta = 0)."""
        return _pure_composition(self.run_epsilon(neighbours=neighbours), self.releases, delta)

    def describe(self, *, neighbours: Relation) -> str:
        return (f"sparse vector: threshold noise Laplace({self.threshold_scale:.6g}), query noise "
                f"Laplace({self.query_scale:.6g}), cutoff {self.cutoff}, "
                f"{'monotonic' if self.monotonic else 'general'} queries moved by at most "
                f"{distance_factor(neighbours):g} x {self.sensitivity:.6g} under {neighbours}: "
                f"{self.run_epsilon(neighbours=neighbours):.6g}-DP per run, {self.releases} "
                "run(s) composed exactly (pure pieces)")


@dataclass(frozen=True)
class ExponentialMechanism:
    """``releases`` independent selections, each ``P[r] proportional to exp(beta * u(data, r))``,
    where one record changes every utility ``u(., r)`` by at most ``sensitivity`` (its largest
    contribution; doubled under replace-one). Each selection is ``2 * beta * d``-DP with ``d`` the
    distance (McSherry & Talwar 2007), ``beta * d`` when the utilities are ``monotonic`` (all move
    in the same direction between neighbours); the selections compose as pure pieces. The usual
    calibration ``exp(eps * u / (2 * Delta))`` is ``beta = eps / (2 * Delta)``.
    """

    beta: float
    sensitivity: float
    releases: int = 1
    monotonic: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "beta", check_positive(self.beta, "beta"))
        object.__setattr__(self, "sensitivity", check_positive(self.sensitivity, "sensitivity"))
        object.__setattr__(self, "releases", check_int(self.releases, "releases", minimum=1))

    def selection_epsilon(self, *, neighbours: Relation) -> float:
        """The pure epsilon of one selection under ``neighbours``."""
        d = distance_factor(neighbours) * self.sensitivity
        return (1.0 if self.monotonic else 2.0) * self.beta * d

    def epsilon(self, delta: float, *, neighbours: Relation) -> float:
        """epsilon(delta) of the ``releases`` selections."""
        return _pure_composition(self.selection_epsilon(neighbours=neighbours), self.releases,
                                 delta)

    def describe(self, *, neighbours: Relation) -> str:
        return (f"exponential mechanism: beta = {self.beta:.6g}, utilities moved by at most "
                f"{distance_factor(neighbours):g} x {self.sensitivity:.6g} under {neighbours}"
                f"{' (monotonic)' if self.monotonic else ''}: "
                f"{self.selection_epsilon(neighbours=neighbours):.6g}-DP per selection, "
                f"{self.releases} selection(s) composed exactly (pure pieces)")


# ----------------------------------------------------------------------------------------------
# Any dp_accounting event, with the relation explicit
# ----------------------------------------------------------------------------------------------

def _check_reading(sensitivity_is: Any) -> str:
    if sensitivity_is not in _READINGS:
        raise ValueError(f"sensitivity_is must be 'contribution' (a record's largest "
                         f"contribution; doubled under replace-one) or 'distance' (already the "
                         f"distance between neighbouring outputs), got {sensitivity_is!r}")
    return str(sensitivity_is)


def as_distance_event(event: Any, *, neighbours: Relation, sensitivity_is: SensitivityReading
                      ) -> Any:
    """``event`` with every Gaussian / Laplace / discrete-Laplace piece's sensitivity turned into
    the distance between neighbouring outputs under ``neighbours`` (what the guarded accountant
    reads). ``sensitivity_is="distance"`` leaves it as is; ``"contribution"`` multiplies it by
    :func:`distance_factor` (2 under replace-one): a noise multiplier ``z = sigma / sensitivity``
    becomes ``z / 2``. Randomized response and ``EpsilonDeltaDpEvent`` pieces carry no
    sensitivity (their guarantee is already stated per neighbouring pair) and are kept."""
    import dp_accounting

    f = distance_factor(neighbours)
    if _check_reading(sensitivity_is) == "distance" or f == 1.0:
        return event

    def walk(ev: Any) -> Any:
        if isinstance(ev, dp_accounting.ComposedDpEvent):
            return dp_accounting.ComposedDpEvent([walk(e) for e in ev.events])
        if isinstance(ev, dp_accounting.SelfComposedDpEvent):
            return dp_accounting.SelfComposedDpEvent(walk(ev.event), ev.count)
        if isinstance(ev, dp_accounting.GaussianDpEvent):
            return dp_accounting.GaussianDpEvent(ev.noise_multiplier / f)
        if isinstance(ev, dp_accounting.LaplaceDpEvent):
            return dp_accounting.LaplaceDpEvent(ev.noise_multiplier / f)
        if isinstance(ev, dp_accounting.dp_event.DiscreteLaplaceDpEvent):
            return dp_accounting.dp_event.DiscreteLaplaceDpEvent(ev.noise_parameter,
                                                                  int(ev.sensitivity * f))
        return ev

    return walk(event)


def epsilon_of(event: Any, delta: float, *, neighbours: Relation,
               sensitivity_is: SensitivityReading, method: str = "auto") -> float:
    """epsilon(delta) of a ``dp_accounting.DpEvent`` under an explicit neighbouring relation.

    ``neighbours`` (``"replace-one"`` / ``"add-remove"``) and ``sensitivity_is``
    (``"contribution"`` / ``"distance"``) are required keywords: leaving one out is a TypeError
    naming it. The convention: a ``GaussianDpEvent(z)`` is noise ``sigma = z * s`` for a
    sensitivity ``s``; with ``"contribution"``, ``s`` is a record's largest contribution and
    neighbouring outputs are ``distance_factor(neighbours) * s`` apart (replace-one: twice); with
    ``"distance"``, ``s`` already is that distance. The event is rewritten to distances
    (:func:`as_distance_event`) and accounted by the guarded walker
    (:func:`dpaudit.formal.accounting.epsilon_of_event`: counts multiplied down the tree, never
    dp-accounting's REPLACE_ONE, so the factor of two is counted exactly once). dp-accounting's
    ``REPLACE_ONE`` relation corresponds to ``sensitivity_is="contribution",
    neighbours="replace-one"`` for Gaussian and Laplace pieces.
    """
    return epsilon_of_event(as_distance_event(event, neighbours=neighbours,
                                              sensitivity_is=sensitivity_is), delta,
                            method=method)  # type: ignore[arg-type]


def delta_of(event: Any, epsilon: float, *, neighbours: Relation,
             sensitivity_is: SensitivityReading, method: str = "auto") -> float:
    """delta(epsilon) of a ``dp_accounting.DpEvent``; the counterpart of :func:`epsilon_of`."""
    from dpaudit.formal.accounting import delta_of_event

    return delta_of_event(as_distance_event(event, neighbours=neighbours,
                                            sensitivity_is=sensitivity_is), epsilon,
                          method=method)  # type: ignore[arg-type]


# ----------------------------------------------------------------------------------------------
# Several different noise pieces in one release: their composition
# ----------------------------------------------------------------------------------------------

#: Largest relative excess of the primary accountant over the RDP cross-check (and of a piece's
#: own epsilon over the whole composition's) that is read as rounding; more is an error. The
#: pessimistic PLD adds about one grid step (1e-4 in epsilon) to an exact answer; RDP's
#: conversion is looser than that wherever both are correct.
CROSS_CHECK_TOLERANCE = 1e-3

_SCHEDULE_TYPES = ("GaussianNoise", "LaplaceNoise", "SparseVector", "ExponentialMechanism",
                   "ComposedNoise")


def _distance_event(schedule: Any, neighbours: Relation) -> Any:
    """The ``dp_accounting`` event of one schedule with its sensitivity turned into the distance
    between neighbouring outputs (what :func:`epsilon_of_event` reads)."""
    import dp_accounting

    from dpaudit.mechanisms.events import EpsilonDeltaDpEvent

    if isinstance(schedule, ComposedNoise):
        return schedule.dp_event(neighbours=neighbours)
    if isinstance(schedule, GaussianNoise):  # releases Gaussian pieces = one with their mu
        return dp_accounting.GaussianDpEvent(1.0 / schedule.mu(neighbours=neighbours))
    if isinstance(schedule, LaplaceNoise):
        eps0 = distance_factor(neighbours) * schedule.sensitivity / schedule.scale
        return _composed([dp_accounting.LaplaceDpEvent(1.0 / eps0)] * schedule.releases)
    if isinstance(schedule, SparseVector):
        return _composed([EpsilonDeltaDpEvent(schedule.run_epsilon(neighbours=neighbours), 0.0)]
                         * schedule.releases)
    if isinstance(schedule, ExponentialMechanism):
        eps0 = schedule.selection_epsilon(neighbours=neighbours)
        return _composed([EpsilonDeltaDpEvent(eps0, 0.0)] * schedule.releases)
    raise TypeError(f"cannot compose {type(schedule).__name__}: a piece must be one of "
                    f"{', '.join(_SCHEDULE_TYPES)} (dpaudit.noise)")


@dataclass(frozen=True)
class ComposedNoise:
    """One release made of several independent noise pieces (each a schedule of this module: a
    Gaussian tree of gradients plus a Laplace count plus an exponential-mechanism selection ...),
    accounted as one composition; build it with :func:`compose`.

    Every piece states a record's largest contribution in its own terms; under the relation
    each is turned into the distance between neighbouring outputs, exactly as the piece alone
    does, and the pieces compose (all of one record's influence, across pieces: the sequential
    composition theorem; Dwork & Roth 2014, Thm 3.16 for pure pieces, the PLD composition of
    Koskela et al. / dp-accounting in general).

    ``epsilon(delta, neighbours=)`` is the guarded accountant's answer
    (:func:`dpaudit.formal.accounting.epsilon_of_event`: exact closed forms where they exist:
    only Gaussian pieces, or Gaussian plus pure pieces by exact enumeration; otherwise the
    pessimistic PLD of dp-accounting), cross-checked as AUDIT-METHOD section 4 asks against a
    second method, the RDP accountant (an upper bound the first must not exceed), and against
    each piece alone (a piece is a post-processing of the whole, so none may need a larger
    epsilon). A failed cross-check is a ``RuntimeError`` naming both numbers, never a number.
    """

    pieces: tuple[Any, ...]

    def __post_init__(self) -> None:
        pieces = tuple(self.pieces)
        if not pieces:
            raise ValueError("compose() needs at least one noise schedule")
        for i, piece in enumerate(pieces):
            if not isinstance(piece, (GaussianNoise, LaplaceNoise, SparseVector,
                                      ExponentialMechanism, ComposedNoise)):
                kinds = ", ".join(_SCHEDULE_TYPES)
                raise TypeError(f"piece {i} of compose() is a {type(piece).__name__}; each "
                                f"piece must be a dpaudit.noise schedule ({kinds}); a float "
                                "epsilon of your own cannot be composed by dpaudit")
        object.__setattr__(self, "pieces", pieces)

    def dp_event(self, *, neighbours: Relation) -> Any:
        """The ``dp_accounting.ComposedDpEvent`` of the pieces, sensitivities as distances under
        ``neighbours`` (read it with :func:`dpaudit.formal.accounting.epsilon_of_event`, or with
        dp-accounting's accountants under ADD_OR_REMOVE_ONE: never REPLACE_ONE, which would
        double them again)."""
        distance_factor(neighbours)  # ValueError for an unknown relation, before any work
        return _composed([_distance_event(p, neighbours) for p in self.pieces])

    def epsilon(self, delta: float, *, neighbours: Relation) -> float:
        """epsilon(delta) of the composition (an upper bound; exact where a closed form exists),
        cross-checked (see the class docstring)."""
        return self.accounted(delta, neighbours=neighbours)["epsilon"]

    def accounted(self, delta: float, *, neighbours: Relation) -> dict[str, float]:
        """``{"epsilon", "epsilon_rdp", "largest_piece"}``: the accountant's epsilon(delta), the
        RDP cross-check's, and the largest epsilon(delta) of a piece alone."""
        delta = check_delta(delta)
        event = self.dp_event(neighbours=neighbours)
        eps = epsilon_of_event(event, delta)
        pieces = max(p.epsilon(delta, neighbours=neighbours) for p in self.pieces)
        if delta == 0.0:  # pure: the sum of the pieces' epsilons is exact; RDP has no delta = 0
            rdp = eps
        else:
            rdp = epsilon_of_event(event, delta, method="rdp")
        slack = 1.0 + CROSS_CHECK_TOLERANCE
        if not (eps <= rdp * slack + 1e-9):
            raise RuntimeError(f"the accountant's epsilon {eps:.6g} of the composition exceeds "
                               f"the RDP cross-check's {rdp:.6g} at delta={delta:g}: one of them "
                               "is wrong; not reported")
        if not (pieces <= eps * slack + 1e-9):
            raise RuntimeError(f"a piece alone needs epsilon {pieces:.6g} but the composition "
                               f"only {eps:.6g} at delta={delta:g}: the accountant is wrong; not "
                               "reported")
        return {"epsilon": float(eps), "epsilon_rdp": float(rdp), "largest_piece": float(pieces)}

    def describe(self, *, neighbours: Relation) -> str:
        parts = "; ".join(f"({i + 1}) {p.describe(neighbours=neighbours)}"
                          for i, p in enumerate(self.pieces))
        return (f"composition of {len(self.pieces)} independent noise piece(s), accounted "
                f"together by dpaudit (dp-accounting PLD or an exact closed form, cross-checked "
                f"with RDP): {parts}")


def compose(*schedules: Any) -> ComposedNoise:
    """The composition of several noise schedules of one release, accounted as one:
    ``compose(gaussian_tree(...), LaplaceNoise(...))`` or ``compose([a, b, c])``. See
    :class:`ComposedNoise`."""
    if len(schedules) == 1 and isinstance(schedules[0], (list, tuple)):
        schedules = tuple(schedules[0])
    return ComposedNoise(tuple(schedules))
