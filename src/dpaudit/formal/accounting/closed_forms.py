"""Closed-form privacy accounting (exact up to root-finding tolerance, every inversion on the safe
side): the Gaussian mechanism (Balle & Wang 2018, Theorem 8), heterogeneous Gaussian composition and
deterministic trajectories plus Gaussian noise (Dong, Roth & Su 2022, Corollary 3.3), the optimal
composition of k identical pure-DP mechanisms (Kairouz, Oh & Viswanath 2015, Theorem 3.3) and
advanced composition (Dwork, Rothblum & Vadhan 2010, Theorem III.3).

Conventions and tolerances: see :mod:`dpaudit.formal.accounting`.
"""

from __future__ import annotations

import math
from typing import Sequence

import dp_accounting
import numpy as np
from dp_accounting.pld import privacy_loss_distribution as pld_lib
from scipy import special

from dpaudit.mechanisms.gaussian import LOG_DELTA_SLACK, log_gaussian_delta, safe_monotone_root
from dpaudit._validation import (
    check_delta,
    check_epsilon,
    check_finite_array,
    check_int,
    check_nonnegative,
    check_positive,
)


#: Default PLD grid step (refined automatically for small two-point pieces;
#: docs/formal-notes.md#accounting-tolerances).
DEFAULT_VALUE_DISCRETIZATION_INTERVAL = 1e-4
_H = DEFAULT_VALUE_DISCRETIZATION_INTERVAL
#: The neighbouring relation of the privacy loss distributions built here (and in the bridge).
ADD_OR_REMOVE = dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE

#: Most halvings or doublings of a bracket before a root search stops widening it.
MAX_BRACKET_STEPS = 2000

# --------------------------------------------------------------------------------------------------
# Gaussian mechanism: closed form (Balle & Wang 2018, Theorem 8)
# --------------------------------------------------------------------------------------------------


def gaussian_delta(mu: float, epsilon: float) -> float:
    """Exact delta(epsilon) of the Gaussian mechanism with shift ``mu`` = Delta / sigma.

    delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)
    (Balle & Wang, ICML 2018, Theorem 8), evaluated in log space with ``scipy.special.log_ndtr`` so
    that it stays accurate for large epsilon; where the two terms nearly cancel (tiny mu, or
    mu^2 << epsilon) from an equivalent integral with a positive integrand, and at epsilon = 0 as
    erf(mu / (2 sqrt 2)). Relative accuracy ~1e-11 for every mu > 0 and epsilon >= 0.

    Parameters
    ----------
    mu : float
        Shift in units of the noise standard deviation, > 0.
    epsilon : float
        >= 0 (epsilon = 0 gives the total variation distance 2 Phi(mu/2) - 1).

    Returns
    -------
    float
        delta in [0, 1).
    """
    mu = check_positive(mu, "mu")
    epsilon = check_nonnegative(epsilon, "epsilon")
    return math.exp(log_gaussian_delta(mu, epsilon))


def finite_log(x: float) -> float:
    """``x``, or -1e300 for ``-inf``: brentq needs finite function values, and a delta that
    underflows is "far below the target"."""
    return x if math.isfinite(x) else -1e300


def gaussian_epsilon(mu: float, delta: float) -> float:
    """Exact epsilon(delta) of the Gaussian mechanism with shift ``mu`` = Delta / sigma.

    Inverts the monotone closed form :func:`gaussian_delta` (Balle & Wang 2018, Theorem 8) by
    Brent's method on log delta, to relative tolerance ~1e-15, and returns the end of the final
    bracket that meets the target: delta(returned epsilon) <= ``delta`` (with a 1e-10 relative
    margin covering the evaluation error), so the result is never below the exact epsilon by more
    than float rounding.

    Parameters
    ----------
    mu : float
        Shift in units of the noise standard deviation, > 0.
    delta : float
        In [0, 1). delta = 0 gives ``inf`` (no Gaussian mechanism is pure DP).

    Returns
    -------
    float
        The smallest epsilon >= 0 with delta(epsilon) <= ``delta``.
    """
    mu = check_positive(mu, "mu")
    delta = check_delta(delta)
    if delta == 0.0:
        return math.inf
    log_target = math.log(delta) - LOG_DELTA_SLACK

    def gap(eps: float) -> float:
        return finite_log(log_gaussian_delta(mu, eps)) - log_target

    if gap(0.0) <= 0.0:
        return 0.0
    # Phi(-eps/mu + mu/2) <= exp(-(eps/mu - mu/2)^2 / 2), so this epsilon already meets delta.
    hi = mu * mu / 2.0 + mu * math.sqrt(2.0 * math.log(1.0 / delta)) + 1.0
    for _ in range(MAX_BRACKET_STEPS):
        if gap(hi) <= 0.0:
            break
        hi *= 2.0
    return safe_monotone_root(gap, 0.0, hi, safe_side="hi")


def gaussian_mu(epsilon: float, delta: float) -> float:
    """The largest shift mu = Delta / sigma for which the Gaussian mechanism is (epsilon, delta)-DP.

    Analytic calibration of Balle & Wang (ICML 2018, Theorem 8): the root in mu of
    :func:`gaussian_delta` (mu, epsilon) = delta, which is increasing in mu. A Gaussian mechanism
    with sensitivity Delta composed ``count`` times needs sigma = Delta * sqrt(count) / mu. Found to
    relative tolerance ~1e-15 (also for tiny roots, e.g. mu ~ 2.5e-20 at epsilon = 0,
    delta = 1e-20) and returned on the safe side: delta(returned mu) <= ``delta`` (with a 1e-10
    relative margin covering the evaluation error).

    Parameters
    ----------
    epsilon : float
        >= 0.
    delta : float
        In (0, 1).

    Returns
    -------
    float
        mu > 0.
    """
    epsilon = check_nonnegative(epsilon, "epsilon")
    delta = check_delta(delta)
    if delta == 0.0:
        raise ValueError("delta must be in (0, 1) for a Gaussian mechanism, got 0")
    log_target = math.log(delta) - LOG_DELTA_SLACK

    def gap(mu: float) -> float:
        return finite_log(log_gaussian_delta(mu, epsilon)) - log_target

    lo = hi = 1.0
    for _ in range(MAX_BRACKET_STEPS):
        if gap(lo) <= 0.0:
            break
        lo /= 2.0
    for _ in range(MAX_BRACKET_STEPS):
        if gap(hi) > 0.0:
            break
        hi *= 2.0
    return safe_monotone_root(gap, lo, hi, safe_side="lo")


def gaussian_epsilon_pld(mu: float, delta: float, *,
                         value_discretization_interval: float = _H) -> float:
    """epsilon(delta) of the Gaussian mechanism with shift ``mu`` from dp-accounting's PLD.

    The cross-check of :func:`gaussian_epsilon`: pessimistic PLD of N(0, (1/mu)^2) with sensitivity
    one under ADD_OR_REMOVE_ONE (``pld.privacy_loss_distribution.from_gaussian_mechanism``); it
    exceeds the closed form by at most ~``value_discretization_interval``.

    Parameters
    ----------
    mu : float
        > 0.
    delta : float
        In [0, 1).
    value_discretization_interval : float
        PLD grid step, > 0 (default :data:`DEFAULT_VALUE_DISCRETIZATION_INTERVAL`).
    """
    mu = check_positive(mu, "mu")
    delta = check_delta(delta)
    h = check_positive(value_discretization_interval, "value_discretization_interval")
    pld = pld_lib.from_gaussian_mechanism(standard_deviation=1.0 / mu, sensitivity=1.0,
                                          value_discretization_interval=h,
                                          neighboring_relation=ADD_OR_REMOVE)
    return float(max(pld.get_epsilon_for_delta(delta), 0.0))


def heterogeneous_gaussian_mu(shifts: np.ndarray | Sequence[float],
                              sigmas: float | np.ndarray | Sequence[float]) -> float:
    """Combined shift of independent Gaussian releases: mu = sqrt(sum_t ||Delta_t||^2 / sigma_t^2).

    Releasing y_t = x_t + N(0, sigma_t^2 I) for t = 1..T on two inputs whose noise-free outputs
    differ by Delta_t is, as a whole, one Gaussian mechanism with this shift (the likelihood ratio
    only depends on the projection of y onto the whitened difference; Dong, Roth & Su 2022,
    Corollary 3.3; AUDIT-METHOD section 2).

    Parameters
    ----------
    shifts : array_like, shape (T,) or (T, d)
        Either the norms ||Delta_t|| (or, for d = 1, the signed scalar differences) or the
        difference vectors Delta_t.
    sigmas : float or array_like, shape (), (T,) or (T, d)
        Noise standard deviations, > 0: one for all steps, one per step, or (only with (T, d)
        shifts) one per step and coordinate (independent coordinates).

    Returns
    -------
    float
        mu >= 0 (0 when the trajectories coincide).
    """
    s = check_finite_array(shifts, "shifts", ndim=(1, 2))
    if s.shape[0] == 0:
        raise ValueError("shifts must contain at least one step (T >= 1)")
    sig = check_finite_array(sigmas, "sigmas", ndim=(0, 1, 2))
    if np.any(sig <= 0):
        raise ValueError("sigmas must be in (0, inf)")
    if sig.ndim == 1:
        if sig.shape[0] != s.shape[0]:
            raise ValueError(
                f"sigmas must have shape ({s.shape[0]},) to match shifts, got {sig.shape}")
        if s.ndim == 2:
            sig = sig[:, None]
    elif sig.ndim == 2 and sig.shape != s.shape:
        raise ValueError(
            f"sigmas of ndim 2 must have the shape of shifts {s.shape}, got {sig.shape}")
    z = s / sig
    scale = float(np.max(np.abs(z)))
    if scale == 0.0:
        return 0.0
    # Rescale before squaring so that huge or tiny ratios neither overflow nor underflow.
    return scale * math.sqrt(float(np.sum((z / scale) ** 2)))


def _trajectory_mu(traj0: object, traj1: object, sigmas: object) -> float:
    a = check_finite_array(traj0, "traj0", ndim=(1, 2))
    b = check_finite_array(traj1, "traj1", ndim=(1, 2))
    if a.shape != b.shape:
        raise ValueError(f"traj0 and traj1 must have the same shape, got {a.shape} and {b.shape}")
    return heterogeneous_gaussian_mu(b - a, sigmas)


def trajectory_gaussian_epsilon(traj0: np.ndarray, traj1: np.ndarray,
                                sigmas: float | np.ndarray | Sequence[float],
                                delta: float) -> float:
    """Exact epsilon(delta) of releasing traj + N(0, sigma_t^2 I) for two noise-free trajectories.

    Exact for the pair (no worst case over inputs is taken): epsilon = :func:`gaussian_epsilon` of
    mu = :func:`heterogeneous_gaussian_mu` (traj1 - traj0, sigmas). An epsilon above a claim on a
    realisable pair of neighbouring streams is a proof that the claim fails (AUDIT-METHOD
    section 2).

    Parameters
    ----------
    traj0, traj1 : array_like, shape (T, d) or (T,)
        The noise-free released points x_1..x_T on the two neighbouring streams.
    sigmas : float or array_like, shape (), (T,) or (T, d)
        Noise standard deviation per step (see :func:`heterogeneous_gaussian_mu`).
    delta : float
        In [0, 1).

    Returns
    -------
    float
        epsilon >= 0; 0 if the trajectories coincide, ``inf`` if delta = 0 and they differ.
    """
    mu = _trajectory_mu(traj0, traj1, sigmas)
    delta = check_delta(delta)
    return 0.0 if mu == 0.0 else gaussian_epsilon(mu, delta)


def trajectory_gaussian_delta(traj0: np.ndarray, traj1: np.ndarray,
                              sigmas: float | np.ndarray | Sequence[float],
                              epsilon: float) -> float:
    """Exact delta(epsilon) of the pair in :func:`trajectory_gaussian_epsilon`."""
    mu = _trajectory_mu(traj0, traj1, sigmas)
    epsilon = check_nonnegative(epsilon, "epsilon")
    return 0.0 if mu == 0.0 else gaussian_delta(mu, epsilon)


# --------------------------------------------------------------------------------------------------
# Pure-DP composition: closed forms
# --------------------------------------------------------------------------------------------------


def homogeneous_pure_composition_delta(epsilon0: float, count: int, epsilon: float) -> float:
    """Exact optimal delta(epsilon) of the ``count``-fold composition of epsilon0-DP mechanisms.

    The hockey-stick divergence of ``count``-fold binary randomized response with ratio e^epsilon0,
    the dominating pair of epsilon0-DP (Kairouz, Oh & Viswanath, ICML 2015, Theorem 3.3, which
    states it at epsilon = (k - 2i) epsilon0; Murtagh & Vadhan, TCC 2016, for all epsilon)::

        delta(eps) = sum_{i : (k-2i) eps0 > eps} C(k, i) [e^{(k-i) eps0} - e^{eps + i eps0}]
                     / (1 + e^{eps0})^k

    evaluated as a log-sum-exp so that k in the thousands is fine.

    Parameters
    ----------
    epsilon0 : float
        Per-mechanism epsilon, > 0.
    count : int
        k >= 1.
    epsilon : float
        >= 0.
    """
    eps0 = check_epsilon(epsilon0, "epsilon0")
    k = check_int(count, "count", minimum=1)
    epsilon = check_nonnegative(epsilon, "epsilon")
    return float(min(math.exp(_log_kov_delta(eps0, k, epsilon)), 1.0))


def binomial_log_pmf(k: int, log_q: float, log_1mq: float, i: np.ndarray) -> np.ndarray:
    """log C(k, i) + i log q + (k - i) log(1 - q), every term <= 0 (no cancellation)."""
    return (special.gammaln(k + 1.0) - special.gammaln(i + 1.0) - special.gammaln(k - i + 1.0)
            + i * log_q + (k - i) * log_1mq)


def _log_kov_delta(eps0: float, k: int, epsilon: float) -> float:
    """log of :func:`homogeneous_pure_composition_delta` (``-inf`` when delta = 0)."""
    i = np.arange(k + 1, dtype=np.float64)
    i = i[(k - 2.0 * i) * eps0 > epsilon]
    if i.size == 0:
        return -math.inf
    loss = (k - 2.0 * i) * eps0
    # i = number of pieces whose loss is -eps0, probability q = 1 / (1 + e^eps0) each.
    log_terms = (binomial_log_pmf(k, -float(np.logaddexp(0.0, eps0)),
                                  -float(np.logaddexp(0.0, -eps0)), i)
                 + np.log(-np.expm1(epsilon - loss)))
    return float(special.logsumexp(log_terms))


def homogeneous_pure_composition_epsilon(epsilon0: float, count: int, delta: float) -> float:
    """Exact optimal epsilon(delta) of the ``count``-fold composition of epsilon0-DP mechanisms.

    Inverse of :func:`homogeneous_pure_composition_delta` (Kairouz, Oh & Viswanath 2015,
    Theorem 3.3) by Brent's method on log delta to relative tolerance ~1e-15, returned on the safe
    side (delta(returned epsilon) <= ``delta``, with a 1e-10 relative margin for evaluation
    error); ``count * epsilon0`` at delta = 0 (basic composition, which is then exact).
    """
    eps0 = check_epsilon(epsilon0, "epsilon0")
    k = check_int(count, "count", minimum=1)
    delta = check_delta(delta)
    top = k * eps0
    if delta == 0.0:
        return top
    log_target = math.log(delta) - LOG_DELTA_SLACK

    def gap(eps: float) -> float:
        return finite_log(_log_kov_delta(eps0, k, eps)) - log_target

    if gap(0.0) <= 0.0:
        return 0.0
    return safe_monotone_root(gap, 0.0, top, safe_side="hi")


def advanced_composition_epsilon(epsilon0: float, count: int, delta: float) -> float:
    """Advanced composition bound for ``count`` epsilon0-DP mechanisms at slack ``delta``.

    eps = sqrt(2 k ln(1/delta)) eps0 + k eps0 (e^eps0 - 1)
    (Dwork, Rothblum & Vadhan, FOCS 2010, Theorem III.3; Dwork & Roth 2014, Theorem 3.20). An upper
    bound on :func:`homogeneous_pure_composition_epsilon`; not capped at the basic bound k eps0.

    Parameters
    ----------
    epsilon0 : float
        > 0.
    count : int
        k >= 1.
    delta : float
        In (0, 1).
    """
    eps0 = check_epsilon(epsilon0, "epsilon0")
    k = check_int(count, "count", minimum=1)
    delta = check_delta(delta)
    if delta == 0.0:
        raise ValueError("delta must be in (0, 1) for advanced composition, got 0")
    return math.sqrt(2.0 * k * math.log(1.0 / delta)) * eps0 + k * eps0 * math.expm1(eps0)


# --------------------------------------------------------------------------------------------------
# The guarded event walker
# --------------------------------------------------------------------------------------------------
