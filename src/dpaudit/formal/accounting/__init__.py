"""Exact privacy accounting: closed forms, and dp-accounting's PLD behind guards.

This package turns a noise schedule into epsilon(delta) (AUDIT-METHOD section 2, evidence 1). Its
modules share one set of conventions (one sensitivity per Gaussian/Laplace piece, never
REPLACE_ONE; every inversion on the safe side) and one event walker, which is what makes the two
dp-accounting pitfalls impossible through the API; this facade re-exports their public names.
Modules: :mod:`.closed_forms`, :mod:`.dp_accounting_bridge` (the guarded event walker and
:class:`GuardedAccountant`), :mod:`.schedules` (Laplace, pure compositions, trees, calibration).
It has three layers:

* **Closed forms** (exact up to root-finding tolerance ~1e-15 relative, every inversion returned
  on the safe side): the Gaussian mechanism (Balle & Wang 2018), heterogeneous Gaussian
  composition and deterministic trajectories plus Gaussian noise (Dong, Roth & Su 2022), the
  optimal composition of k identical pure-DP mechanisms (Kairouz, Oh & Viswanath 2015), advanced
  composition (Dwork, Rothblum & Vadhan 2010).
* **Exact enumeration** of compositions of a Gaussian with a few groups of two-point pieces
  (pure or (epsilon, delta)-DP pieces through their dominating pairs, binary randomized
  response): the joint privacy loss takes prod_g (k_g + 1) values, all enumerated.
* **Privacy loss distributions** (dp-accounting 0.6.0 ``pld.privacy_loss_distribution``; Meiser &
  Mohammadi 2018, Doroshenko et al. 2022) for everything else: compositions of Laplace, k-ary
  randomized response, discrete Laplace, and two-point pieces in too many distinct groups.
* **A guarded entry point** :func:`epsilon_of_event` / :func:`delta_of_event` for any
  ``dp_accounting.DpEvent`` made of the supported pieces, and :class:`GuardedAccountant`, a
  ``dp_accounting.PrivacyAccountant`` built on it (used for calibration).

Conventions and guards (AUDIT-METHOD section 4)
-----------------------------------------------
dpaudit's sensitivities are already the distance between neighbouring outputs under the paper's
relation (replace one loss). A ``GaussianDpEvent(z)`` or ``LaplaceDpEvent(b)`` therefore means
"shift of exactly one sensitivity", which is dp-accounting's ``ADD_OR_REMOVE_ONE`` reading.
dp-accounting's ``REPLACE_ONE`` would count the shift twice (``GaussianDpEvent(2.0)`` at
delta = 1e-5: 1.993 under ADD_OR_REMOVE_ONE, 4.377 under REPLACE_ONE). Nothing in this module
accepts a neighbouring relation: Gaussian and Laplace pieces are always accounted with one
sensitivity. Randomized response has no sensitivity: its one natural neighbouring pair is "the input
bucket changes", which dp-accounting calls REPLACE_ONE for this mechanism only; that is used.

dp-accounting's ``PLDAccountant`` ignores the count of a ``SelfComposedDpEvent`` (or of
``compose(event, count=k)``) whose inner event is ``RandomizedResponseDpEvent`` (ten-fold
RR(epsilon = 0.1) comes out as 0.100 instead of about 1.0). This module never uses
``PLDAccountant``: it walks Composed/SelfComposed events itself, multiplies counts down the tree,
and composes every piece's PLD explicitly ``count`` times.

Tolerances
----------
Every number returned is an upper bound on the exact epsilon (a lower bound would understate the
privacy loss; PLDs: up to their resolution, below). Root-finding inversions
(:func:`gaussian_epsilon`, :func:`gaussian_mu`, :func:`homogeneous_pure_composition_epsilon`, the
exact enumeration) return the end of the final bracket that meets the target, with a relative
margin on delta covering evaluation error (1e-10; 1e-12 for the enumeration of pure pieces): they
are never below the exact value by more than float rounding, and above it by ~1e-10 relative at
most. The Gaussian delta itself is evaluated to ~1e-11 relative for every mu > 0 and epsilon >= 0
(including the near-cancelling regimes of tiny mu, see
``dpaudit.mechanisms.gaussian.log_gaussian_delta``).

PLDs are pessimistic: Gaussian, Laplace and discrete-Laplace pieces use dp-accounting's
discretisation (connect-the-dots where available) on the grid ``value_discretization_interval``
(default 1e-4); two-point pieces (pure, (epsilon, delta), binary randomized response) use a
pessimistic connect-the-dots PLD built here (:func:`~.dp_accounting_bridge._two_point_pld`;
dp-accounting's ``from_privacy_parameters`` rounds each piece's epsilon up to the grid, which for
1000 pieces of 1.05e-3 overstated epsilon(1e-6) by 40%). Without a Gaussian part the grid is
refined to at most 1/100 of the smallest two-point epsilon, down to
``value_discretization_interval / 100``. Observed
accuracy: two-point compositions within 1e-3 relative of the exact value (worst when pieces of
epsilon ~1e-5 hit the refinement floor), with a Gaussian part ~1e-4 absolute (one grid step).
dp-accounting's FFT composition and tail-mass truncation (1e-15) limit any PLD to ~1e-15 absolute
in delta: deltas below ~1e-12 are not resolved. The PLD's cost grows with the range of the privacy
loss over the grid step (a Gaussian with mu = 20 takes ~15 s).

Where an exact answer exists the ``"auto"`` method uses it instead: compositions of Gaussian
pieces collapse into one Gaussian evaluated in closed form; k identical pure pieces use the
Kairouz-Oh-Viswanath closed form; a Gaussian with a few groups of two-point pieces uses the exact
enumeration (up to 2^20 joint outcomes without a Gaussian, 2^17 with one); and at delta = 0 a
composition of pure-DP pieces has exactly the sum of the pieces' epsilons. Use ``method="pld"`` to
force the PLD (for cross-checks) and ``method="rdp"`` for the (looser) Renyi-DP upper bound
(Mironov 2017).

References
----------
B. Balle, Y.-X. Wang. Improving the Gaussian Mechanism for Differential Privacy: Analytical
Calibration and Optimal Denoising. ICML 2018, Theorem 8.
J. Dong, A. Roth, W. Su. Gaussian Differential Privacy. JRSS-B 2022, Corollary 3.3.
P. Kairouz, S. Oh, P. Viswanath. The Composition Theorem for Differential Privacy. ICML 2015,
Theorem 3.3.
J. Murtagh, S. Vadhan. The Complexity of Computing the Optimal Composition of Differential Privacy.
TCC 2016.
C. Dwork, G. Rothblum, S. Vadhan. Boosting and Differential Privacy. FOCS 2010, Theorem III.3.
S. Meiser, E. Mohammadi. Tight on Budget? Tight Bounds for r-Fold Approximate Differential Privacy.
CCS 2018.
V. Doroshenko, B. Ghazi, P. Kamath, R. Kumar, P. Manurangsi. Connect the Dots: Tighter Discrete
Approximations of Privacy Loss Distributions. PETS 2022.
I. Mironov. Renyi Differential Privacy. CSF 2017.
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
