"""Accounting for common noise schedules: Laplace compositions, pure-DP compositions, tree
aggregation leaves, and calibration of Gaussian and Laplace noise to a target (epsilon, delta)
(``dp_accounting.mechanism_calibration`` over the guarded accountant).

Conventions and tolerances: see :mod:`dpaudit.formal.accounting`.
"""

from __future__ import annotations

import collections
import math
from typing import Callable, Literal, Sequence

import dp_accounting
import numpy as np
from dp_accounting import mechanism_calibration

from dpaudit.mechanisms.events import EpsilonDeltaDpEvent
from dpaudit._validation import (
    check_delta,
    check_epsilon,
    check_finite_array,
    check_int,
    check_positive,
)
from dpaudit.formal.accounting.closed_forms import (MAX_BRACKET_STEPS, gaussian_epsilon,
                                                   homogeneous_pure_composition_epsilon)
from dpaudit.formal.accounting.closed_forms import DEFAULT_VALUE_DISCRETIZATION_INTERVAL as _H
from dpaudit.formal.accounting.dp_accounting_bridge import GuardedAccountant, Method, epsilon_of_event



def _positive_list(values: object, name: str) -> list[float]:
    arr = check_finite_array(values, name, ndim=1)
    if arr.size == 0:
        raise ValueError(f"{name} must contain at least one value")
    if np.any(arr <= 0):
        raise ValueError(f"{name} must contain only values in (0, inf)")
    return [float(v) for v in arr]


def _counted(event_of: Callable[[float], dp_accounting.DpEvent],
             values: list[float]) -> dp_accounting.DpEvent:
    counts = collections.Counter(values)
    return dp_accounting.ComposedDpEvent(
        [dp_accounting.SelfComposedDpEvent(event_of(v), c) for v, c in sorted(counts.items())])


def laplace_epsilon(noise_multipliers: Sequence[float] | np.ndarray, delta: float, *,
                    method: Method = "auto", value_discretization_interval: float = _H) -> float:
    """Exact epsilon(delta) of a composition of Laplace mechanisms.

    Noise multiplier b_i = (Laplace scale) / (l1 sensitivity). At delta = 0 the answer is exactly
    sum_i 1/b_i; for delta > 0 it is the pessimistic PLD of the composition
    (``from_laplace_mechanism``, connect-the-dots), capped by that sum, so strictly below it
    whenever delta > 0 is large enough to be resolved. The shift is taken along one coordinate; for
    a multi-coordinate shift of the same l1 norm the composition of per-coordinate Laplace losses
    has the same epsilon at delta = 0 and, numerically at the points we checked, no larger epsilon
    at delta > 0 (not proven here).

    Parameters
    ----------
    noise_multipliers : sequence of float, shape (k,)
        Each > 0.
    delta : float
        In [0, 1).
    method : {"auto", "pld", "rdp"}
        For delta > 0, as for :func:`epsilon_of_event` (``"rdp"`` for a looser cross-check).
    value_discretization_interval : float
        PLD grid step.
    """
    bs = _positive_list(noise_multipliers, "noise_multipliers")
    delta = check_delta(delta)
    if delta == 0.0:
        return math.fsum(1.0 / b for b in bs)
    return epsilon_of_event(_counted(dp_accounting.LaplaceDpEvent, bs), delta, method=method,
                            value_discretization_interval=value_discretization_interval)


def pure_composition_epsilon(epsilons: Sequence[float] | np.ndarray, delta: float, *,
                             method: Method = "auto",
                             value_discretization_interval: float = _H) -> float:
    """Exact optimal epsilon(delta) of composing pure epsilon_i-DP mechanisms.

    Basic composition sum_i epsilon_i at delta = 0 (exact). For delta > 0, the composition of the
    pieces' dominating pairs (binary randomized response; Murtagh & Vadhan 2016), grouped by equal
    epsilons. With ``"auto"``: one group, the closed form
    :func:`homogeneous_pure_composition_epsilon` (Kairouz, Oh & Viswanath 2015); a few groups (at
    most 2^20 joint outcomes prod_g (k_g + 1)), the exact enumeration of the joint privacy loss,
    inverted in closed form between its atoms; more groups, the PLD below, capped by the sum. All
    of these are upper bounds, the exact ones within ~1e-10 relative. With ``method="pld"``: the
    pessimistic connect-the-dots PLD of each group (composed explicitly with ``self_compose``,
    never through PLDAccountant's count path), on a grid refined to 1/100 of the smallest epsilon
    (down to ``value_discretization_interval / 100``): an upper bound, within 1e-3 relative of the
    exact value in our checks (docs/benchmarks.md#exact-accounting-accuracy-and-cost).

    Parameters
    ----------
    epsilons : sequence of float, shape (k,)
        Each > 0.
    delta : float
        In [0, 1).
    method : {"auto", "pld", "rdp"}
        For delta > 0, as for :func:`epsilon_of_event`.
    value_discretization_interval : float
        PLD grid step before refinement.
    """
    es = _positive_list(epsilons, "epsilons")
    delta = check_delta(delta)
    if delta == 0.0:
        return math.fsum(es)
    return epsilon_of_event(_counted(EpsilonDeltaDpEvent, es), delta, method=method,
                            value_discretization_interval=value_discretization_interval)


def tree_leaf_epsilon(node_noise_kind: Literal["gaussian", "laplace", "l2-laplace"], scale: float,
                      sensitivity: float, nodes_per_leaf: int, delta: float, *,
                      value_discretization_interval: float = _H) -> float:
    """epsilon(delta) protecting one leaf of a tree aggregation: the composition of its nodes.

    A change of one leaf (one loss) shifts each of the ``nodes_per_leaf`` = k nodes containing it
    by at most ``sensitivity``; nodes get independent noise of the given kind and ``scale``.

    * ``"gaussian"`` (scale = standard deviation sigma): one Gaussian with
      mu = sqrt(k) * sensitivity / sigma, exact closed form (:func:`gaussian_epsilon`).
    * ``"laplace"`` (scale = per-coordinate Laplace scale b, sensitivity in l1): k-fold Laplace with
      noise multiplier b / sensitivity (:func:`laplace_epsilon`; exact at delta = 0, pessimistic PLD
      otherwise).
    * ``"l2-laplace"`` (scale s of the density proportional to exp(-||z||_2 / s), sensitivity in
      l2, as in Smith & Thakurta 2013, Alg 2): each node's privacy loss is bounded by
      sensitivity / s (triangle inequality), but its privacy loss distribution is not the Laplace
      one. We use the optimal composition of k pure (sensitivity / s)-DP mechanisms
      (:func:`homogeneous_pure_composition_epsilon`): exact at delta = 0 (k * sensitivity / s) and
      an upper bound for delta > 0.

    Parameters
    ----------
    node_noise_kind : {"gaussian", "laplace", "l2-laplace"}
    scale : float
        > 0, as above.
    sensitivity : float
        > 0, the shift of one node when one leaf changes (already a replace-one distance).
    nodes_per_leaf : int
        k >= 1. For a binary tree over T leaves the exact count is
        ``dpaudit.mechanisms.tree_aggregation.max_nodes_per_leaf(T)`` = floor(log2 T) + 1 (the
        papers' ceil(log2 T) + 1 overcounts by one when T is not a power of two); for the window
        tree, ``window_tree.max_window_nodes_per_leaf(W, T, layout)``.
    delta : float
        In [0, 1).
    value_discretization_interval : float
        PLD grid step (Laplace only).
    """
    if node_noise_kind not in ("gaussian", "laplace", "l2-laplace"):
        raise ValueError(f"node_noise_kind must be 'gaussian', 'laplace' or 'l2-laplace', "
                         f"got {node_noise_kind!r}")
    scale = check_positive(scale, "scale")
    sensitivity = check_positive(sensitivity, "sensitivity")
    k = check_int(nodes_per_leaf, "nodes_per_leaf", minimum=1)
    delta = check_delta(delta)
    if node_noise_kind == "gaussian":
        return gaussian_epsilon(math.sqrt(k) * sensitivity / scale, delta)
    if node_noise_kind == "laplace":
        return laplace_epsilon([scale / sensitivity] * k, delta,
                               value_discretization_interval=value_discretization_interval)
    return homogeneous_pure_composition_epsilon(sensitivity / scale, k, delta)


# --------------------------------------------------------------------------------------------------
# Calibration: what noise WOULD deliver a claim
# --------------------------------------------------------------------------------------------------


def _calibrate(make_event: Callable[[float], dp_accounting.DpEvent], epsilon: float, delta: float,
               tol: float) -> float:
    """Smallest noise parameter x with epsilon(make_event(x)) <= epsilon (decreasing in x)."""

    def gap(x: float) -> float:
        return GuardedAccountant().compose(make_event(x)).get_epsilon(delta) - epsilon

    lo = hi = 1.0
    for _ in range(MAX_BRACKET_STEPS):
        if gap(lo) > 0.0:
            break
        lo /= 2.0
    else:
        raise ValueError("could not bracket the calibration from below")
    for _ in range(MAX_BRACKET_STEPS):
        if gap(hi) <= 0.0:
            break
        hi *= 2.0
    else:
        raise ValueError("could not bracket the calibration from above")
    return float(mechanism_calibration.calibrate_dp_mechanism(
        GuardedAccountant, make_event, epsilon, delta,
        bracket_interval=mechanism_calibration.ExplicitBracketInterval(lo, hi), tol=tol))


def calibrate_gaussian_noise_multiplier(epsilon: float, delta: float, count: int = 1, *,
                                        tol: float = 1e-9) -> float:
    """Smallest noise multiplier sigma / Delta making ``count`` Gaussian releases (eps, delta)-DP.

    Uses ``dp_accounting.mechanism_calibration.calibrate_dp_mechanism`` with a
    :class:`GuardedAccountant` (so the Gaussian closed form, one sensitivity per release). The
    result is within ``tol`` of the exact value sqrt(count) / :func:`gaussian_mu` (epsilon, delta)
    and always meets the target.

    Parameters
    ----------
    epsilon : float
        > 0.
    delta : float
        In (0, 1).
    count : int
        Number of releases, >= 1.
    tol : float
        Absolute tolerance on the multiplier, > 0.
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    if delta == 0.0:
        raise ValueError("delta must be in (0, 1) for a Gaussian mechanism, got 0")
    count = check_int(count, "count", minimum=1)
    tol = check_positive(tol, "tol")
    return _calibrate(
        lambda z: dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(z), count),
        epsilon, delta, tol)


def calibrate_laplace_scale(epsilon: float, delta: float, count: int = 1,
                            sensitivity: float = 1.0, *, tol: float = 1e-6) -> float:
    """Smallest Laplace scale b making ``count`` Laplace releases (epsilon, delta)-DP.

    Each release has l1 sensitivity ``sensitivity``. delta = 0: exactly
    count * sensitivity / epsilon. delta > 0: ``dp_accounting.mechanism_calibration.
    calibrate_dp_mechanism`` on the noise multiplier with a :class:`GuardedAccountant` (pessimistic
    PLD, so the returned scale meets the target).

    Parameters
    ----------
    epsilon : float
        > 0.
    delta : float
        In [0, 1).
    count : int
        Number of releases, >= 1.
    sensitivity : float
        l1 sensitivity of each release, > 0.
    tol : float
        Absolute tolerance on the noise multiplier b / sensitivity, > 0.
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    count = check_int(count, "count", minimum=1)
    sensitivity = check_positive(sensitivity, "sensitivity")
    tol = check_positive(tol, "tol")
    if delta == 0.0:
        return count * sensitivity / epsilon
    multiplier = _calibrate(
        lambda b: dp_accounting.SelfComposedDpEvent(dp_accounting.LaplaceDpEvent(b), count),
        epsilon, delta, tol)
    return multiplier * sensitivity
