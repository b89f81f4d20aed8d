"""Exact privacy accounting: closed forms, and dp-accounting's PLD behind guards.

This package turns a noise schedule into epsilon(delta) (AUDIT-METHOD section 2, evidence 1):
closed forms for the Gaussian mechanism (Balle & Wang, ICML 2018, Thm 8), Gaussian compositions
and trajectories (Dong, Roth & Su, JRSS-B 2022, Cor. 3.3), k identical pure-DP pieces (Kairouz,
Oh & Viswanath, ICML 2015, Thm 3.3) and advanced composition (Dwork, Rothblum & Vadhan, FOCS
2010, Thm III.3); exact enumeration of a Gaussian with a few groups of two-point pieces; and
privacy loss distributions (dp-accounting 0.6.0; Meiser & Mohammadi 2018, Doroshenko et al.
2022) for the rest, behind :func:`epsilon_of_event`, :func:`delta_of_event` and
:class:`GuardedAccountant`. Every number returned is an upper bound on the exact epsilon (a PLD's
up to its resolution). Gaussian and Laplace pieces always shift by one sensitivity
(dp-accounting's ADD_OR_REMOVE_ONE, never REPLACE_ONE), and the package walks composed events
itself (dp-accounting's ``PLDAccountant`` drops the count of self-composed randomized response).
Modules: :mod:`.closed_forms`, :mod:`.dp_accounting_bridge` (the guarded event walker),
:mod:`.schedules` (Laplace, pure compositions, trees, calibration); this facade re-exports their
public names.

The conventions, guards, tolerances and references in full:
docs/formal-notes.md#exact-accounting.
"""

from __future__ import annotations

from dpaudit.formal.accounting.closed_forms import (
    DEFAULT_VALUE_DISCRETIZATION_INTERVAL, advanced_composition_epsilon, gaussian_delta,
    gaussian_epsilon, gaussian_epsilon_pld, gaussian_mu, heterogeneous_gaussian_mu,
    homogeneous_pure_composition_delta, homogeneous_pure_composition_epsilon,
    trajectory_gaussian_delta, trajectory_gaussian_epsilon)
from dpaudit.formal.accounting.dp_accounting_bridge import (
    GuardedAccountant, Method, UnsupportedEventError, delta_of_event, epsilon_of_event,
    privacy_curve)
from dpaudit.formal.accounting.schedules import (
    calibrate_gaussian_noise_multiplier, calibrate_laplace_scale, laplace_epsilon,
    pure_composition_epsilon, tree_leaf_epsilon)
from dpaudit.mechanisms.events import EpsilonDeltaDpEvent

__all__ = [
    "DEFAULT_VALUE_DISCRETIZATION_INTERVAL",
    "Method",
    "UnsupportedEventError",
    "EpsilonDeltaDpEvent",
    "GuardedAccountant",
    "gaussian_delta",
    "gaussian_epsilon",
    "gaussian_mu",
    "gaussian_epsilon_pld",
    "heterogeneous_gaussian_mu",
    "trajectory_gaussian_epsilon",
    "trajectory_gaussian_delta",
    "laplace_epsilon",
    "pure_composition_epsilon",
    "homogeneous_pure_composition_delta",
    "homogeneous_pure_composition_epsilon",
    "advanced_composition_epsilon",
    "tree_leaf_epsilon",
    "epsilon_of_event",
    "delta_of_event",
    "privacy_curve",
    "calibrate_gaussian_noise_multiplier",
    "calibrate_laplace_scale",
]
