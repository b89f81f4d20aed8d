"""Exact privacy of JKT12 releases: Gaussian steps, optionally clipped to an interval.

The POCP family (Algorithms 1, 2, 3, 6, 7 of Jain, Kothari & Thakurta 2012) releases
``x^ = Pi_C(x + b)`` with a deterministic x on each neighbouring stream and independent Gaussian
b. With C = R^d the whole release is one Gaussian mechanism (AUDIT-METHOD section 2). With C a box
``[-D, D]^d`` and streams that differ along one coordinate, the other coordinates have the same law
on both streams and are independent of it, so the release is equivalent to the sequence of 1-D
*clipped* Gaussians ``clip(m_t + b_t, -D, D)`` of that coordinate; the projection is
post-processing, so it can only lower epsilon.

:func:`release_epsilon` returns a bracket on epsilon(delta) of such a release:

* ``upper``: the Gaussian mechanism without the clipping (exact; valid by post-processing);
* ``lower``: a rigorous lower bound on the clipped release, from dp-accounting privacy loss
  distributions built with *optimistic* rounding (``pessimistic_estimate=False``) of a binned
  output (binning is post-processing) for every step whose clipping matters, composed with the
  exact Gaussian of the steps whose clipping probability is negligible; the total-variation cost of
  ignoring that clipping is added to delta. When there are more clipped steps than
  ``max_clipped_steps``, the least informative are left out (ignoring outputs is post-processing).

Without clipping, ``lower == upper`` is the closed-form Gaussian epsilon.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from dp_accounting.pld import privacy_loss_distribution as pld_lib
from scipy.special import log_ndtr

from dpaudit._validation import check_delta, check_finite_array, check_int, check_positive
from dpaudit.formal.accounting import gaussian_epsilon, heterogeneous_gaussian_mu
from dpaudit.formal.accounting import gaussian_epsilon_pld
from dpaudit.learners.pqftl import pqftl_sigmas
from dpaudit.mechanisms.private_sum import LogReading, Version, private_sum_sigma, released_node_count, released_noise_matrix

__all__ = ["ReleaseEpsilon", "release_epsilon", "release_epsilon_curve", "igd_step_sensitivity",
           "pigd_accountant"]

#: Largest PLD grid of the lower bound (optimistic rounding loses at most one grid step of privacy
#: loss per composed piece); the grid is refined to 1% of the target epsilon over the pieces.
LOWER_VALUE_INTERVAL = 1e-3
#: Bin width of the discretised clipped output, in units of the step's noise std.
BIN_WIDTH = 0.05
#: Half-width (in noise stds) of the finely binned window around the two means.
WINDOW = 9.0


@dataclass(frozen=True)
class ReleaseEpsilon:
    """Bracket on the epsilon(delta) of a (clipped) Gaussian release of one neighbouring pair."""

    lower: float
    upper: float
    mu: float
    delta: float
    clipped_steps: int = 0
    dropped_steps: int = 0
    negligible_clip_mass: float = 0.0
    notes: tuple[str, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, Any]:
        return {"lower": self.lower, "upper": self.upper, "mu_unclipped": self.mu,
                "delta": self.delta, "clipped_steps": self.clipped_steps,
                "dropped_steps": self.dropped_steps,
                "negligible_clip_mass": self.negligible_clip_mass, "notes": list(self.notes)}


def _log_sub(la: np.ndarray, lb: np.ndarray) -> np.ndarray:
    """log(e^la - e^lb) for la >= lb (elementwise); -inf where equal."""
    with np.errstate(divide="ignore", invalid="ignore"):
        out = la + np.log(-np.expm1(lb - la))
    return np.where(la > lb, out, -np.inf)


def _log_interval_mass(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """log P(a < N(0,1) <= b), accurate in both tails (a <= b elementwise)."""
    left = log_ndtr(b), log_ndtr(a)
    right = log_ndtr(-a), log_ndtr(-b)
    with np.errstate(divide="ignore", invalid="ignore"):
        middle = np.log1p(-np.exp(left[1]) - np.exp(right[1]))
    return np.where(b <= 0, _log_sub(*left), np.where(a >= 0, _log_sub(*right), middle))


def _step_log_pmf(m: float, sigma: float, edges: np.ndarray, D: float) -> dict[Any, float]:
    """Log-pmf of clip(m + N(0, sigma^2), -D, D) on the partition {-D}, bins of ``edges``, {D}."""
    z = (edges - m) / sigma
    out: dict[Any, float] = {"atom-": float(log_ndtr((-D - m) / sigma)),
                             "atom+": float(log_ndtr((m - D) / sigma))}
    zlo = (-D - m) / sigma
    zhi = (D - m) / sigma
    # Gaps between the atoms and the binned window (empty when the window reaches the atom).
    if edges[0] > -D:
        out["gap-"] = float(_log_interval_mass(np.array([zlo]), z[:1])[0])
    if edges[-1] < D:
        out["gap+"] = float(_log_interval_mass(z[-1:], np.array([zhi]))[0])
    bins = _log_interval_mass(z[:-1], z[1:])
    for i, v in enumerate(bins):
        out[i] = float(v)
    return {k: v for k, v in out.items() if math.isfinite(v)}


#: Outcomes (and Gaussian tails) of log-probability below this are dropped from the lower bound
#: (dropping mass only lowers the divergence, so the bound stays valid).
LOG_MASS_TRUNCATION = -50.0
#: Largest support of the composed lower-bound PLD (the grid is coarsened to stay below it).
MAX_PLD_POINTS = 200_000


def _clipped_step_pmfs(m0: float, m1: float, sigma: float, D: float
                       ) -> tuple[dict[Any, float], dict[Any, float], float]:
    """Binned log-pmfs of one clipped step and the largest |privacy loss| among kept outcomes."""
    lo = max(-D, min(m0, m1) - WINDOW * sigma)
    hi = min(D, max(m0, m1) + WINDOW * sigma)
    n_bins = int(min(4000, max(1, math.ceil((hi - lo) / (BIN_WIDTH * sigma)))))
    edges = np.linspace(lo, hi, n_bins + 1)
    p0 = _step_log_pmf(m0, sigma, edges, D)
    p1 = _step_log_pmf(m1, sigma, edges, D)
    kept = [k for k, v in p0.items() if v >= LOG_MASS_TRUNCATION]
    span = max((abs(p0[k] - p1.get(k, -math.inf)) for k in kept), default=0.0)
    return p0, p1, span


def _clip_probability(m: np.ndarray, sigma: np.ndarray, D: float) -> np.ndarray:
    return np.exp(log_ndtr((-D - m) / sigma)) + np.exp(log_ndtr((m - D) / sigma))


def _lower_pld(a: np.ndarray, b: np.ndarray, s: np.ndarray, D: float, budget: float,
               max_clipped_steps: int, target_epsilon: float):
    """Optimistic PLD of the informative part of the clipped release (see the module docstring)."""
    clip_p = np.maximum(_clip_probability(a, s, D), _clip_probability(b, s, D))
    order = np.argsort(clip_p)
    cum = np.cumsum(clip_p[order])
    n_gauss = int(np.searchsorted(cum, budget, side="right"))
    gauss_idx = order[:n_gauss]
    clipped_idx = order[n_gauss:]
    negligible = float(cum[n_gauss - 1]) if n_gauss else 0.0
    informative = np.abs(a - b)[clipped_idx] / s[clipped_idx]
    keep = clipped_idx[np.argsort(-informative)[:max_clipped_steps]]
    dropped = len(clipped_idx) - len(keep)
    keep = keep[np.abs(a - b)[keep] > 0]
    pmfs = [_clipped_step_pmfs(float(a[i]), float(b[i]), float(s[i]), D) for i in keep]
    mu_g = heterogeneous_gaussian_mu((a - b)[gauss_idx], s[gauss_idx]) if n_gauss else 0.0
    # Support of the composition: the sum of the pieces' loss ranges (Gaussian: mu^2/2 + mu
    # sqrt(-2 LOG_MASS_TRUNCATION) on each side).
    span = sum(p[2] for p in pmfs) + (mu_g * mu_g / 2 + mu_g * math.sqrt(-2 * LOG_MASS_TRUNCATION)
                                       if mu_g > 0 else 0.0)
    pieces = len(pmfs) + (1 if mu_g > 0 else 0)
    interval = min(LOWER_VALUE_INTERVAL, max(1e-9, 0.01 * target_epsilon / max(1, pieces)))
    interval = max(interval, 2.0 * span / MAX_PLD_POINTS)
    plds: list[pld_lib.PrivacyLossDistribution] = []
    if mu_g > 0:
        plds.append(pld_lib.from_gaussian_mechanism(
            standard_deviation=1.0 / mu_g, sensitivity=1.0, pessimistic_estimate=False,
            value_discretization_interval=interval, use_connect_dots=False,
            log_mass_truncation_bound=LOG_MASS_TRUNCATION))
    for p0, p1, _ in pmfs:
        plds.append(pld_lib.from_two_probability_mass_functions(
            p1, p0, pessimistic_estimate=False, value_discretization_interval=interval,
            log_mass_truncation_bound=LOG_MASS_TRUNCATION))
    while len(plds) > 1:
        plds = [plds[i].compose(plds[i + 1]) if i + 1 < len(plds) else plds[i]
                for i in range(0, len(plds), 2)]
    notes = [f"{len(keep)} clipped steps composed with optimistic PLDs "
             f"(grid {interval:.3g}), {n_gauss} steps as an exact Gaussian"]
    if dropped:
        notes.append(f"{dropped} clipped steps left out of the lower bound (post-processing)")
    return (plds[0] if plds else None), negligible, len(keep), dropped, tuple(notes)


def release_epsilon_curve(m0: np.ndarray, m1: np.ndarray, sigmas: np.ndarray,
                          deltas: np.ndarray | list[float], half_width: float | None = None, *,
                          max_clipped_steps: int = 128) -> list[ReleaseEpsilon]:
    """:func:`release_epsilon` at several deltas (one PLD, queried at each delta)."""
    a = check_finite_array(m0, "m0", ndim=1)
    b = check_finite_array(m1, "m1", shape=(a.shape[0],))
    s = check_finite_array(sigmas, "sigmas", shape=(a.shape[0],))
    if a.shape[0] == 0:
        raise ValueError("m0 must contain at least one step")
    if np.any(s <= 0):
        raise ValueError("sigmas must be in (0, inf)")
    ds = [check_delta(x, "deltas") for x in np.atleast_1d(np.asarray(deltas, dtype=float))]
    if not ds or min(ds) <= 0.0:
        raise ValueError("deltas must be a non-empty list of values in (0, 1)")
    max_clipped_steps = check_int(max_clipped_steps, "max_clipped_steps", minimum=0)
    mu = heterogeneous_gaussian_mu(a - b, s)
    uppers = [0.0 if mu == 0.0 else gaussian_epsilon(mu, d) for d in ds]
    if half_width is None:
        return [ReleaseEpsilon(u, u, mu, d, notes=("no projection: exact Gaussian",))
                for u, d in zip(uppers, ds)]
    D = check_positive(half_width, "half_width")
    if np.any(np.abs(a) > D * (1 + 1e-12)) or np.any(np.abs(b) > D * (1 + 1e-12)):
        raise ValueError("the noise-free values must lie in [-D, D]")
    if mu == 0.0:
        return [ReleaseEpsilon(0.0, 0.0, 0.0, d) for d in ds]
    # Steps whose clipping is negligible are treated as Gaussian; the total variation between the
    # clipped and the unclipped product is at most the summed clipping probability p, which moves
    # the hockey-stick divergence by at most (1 + e^eps) p (eps <= the upper bound).
    growth = 1.0 + math.exp(min(max(uppers), 700.0))
    budget = min(ds) * 1e-3 / growth
    pld, negligible, n_clipped, dropped, notes = _lower_pld(a, b, s, D, budget, max_clipped_steps,
                                                            max(min(uppers), 1e-12))
    out = []
    for u, d in zip(uppers, ds):
        if pld is None:
            lower = 0.0
        else:
            target = min(d + growth * negligible, 1.0 - 1e-15)
            with warnings.catch_warnings():
                # dp-accounting's epsilon search divides by vanishing masses on its way.
                warnings.simplefilter("ignore", RuntimeWarning)
                lower = float(max(0.0, pld.get_epsilon_for_delta(target)))
        out.append(ReleaseEpsilon(min(lower, u), u, mu, d, n_clipped, dropped, negligible, notes))
    return out


def release_epsilon(m0: np.ndarray, m1: np.ndarray, sigmas: np.ndarray, delta: float,
                    half_width: float | None = None, *, max_clipped_steps: int = 128
                    ) -> ReleaseEpsilon:
    """Bracket on epsilon(delta) of releasing ``clip(m_t + N(0, sigma_t^2), -D, D)``, t = 1..n.

    Parameters
    ----------
    m0, m1 : array_like, shape (n,)
        Noise-free values of the coordinate along which the two streams differ (every other
        coordinate must have the same law on both streams).
    sigmas : array_like, shape (n,)
        Noise standard deviations, > 0.
    delta : float
        In (0, 1).
    half_width : float or None
        D of the box ``[-D, D]^d`` the noisy points are projected onto; ``None``: no projection.
        Requires ``|m| <= D``.
    max_clipped_steps : int
        Largest number of clipped steps composed exactly in the lower bound.

    Returns
    -------
    ReleaseEpsilon
        ``lower <= epsilon(delta) of the release <= upper``.
    """
    delta = check_delta(delta)
    if delta == 0.0:
        raise ValueError("delta must be in (0, 1), got 0")
    return release_epsilon_curve(m0, m1, sigmas, [delta], half_width,
                                 max_clipped_steps=max_clipped_steps)[0]


# Values the JKT12 auditors derive in closed form

#: Clipped steps composed exactly when a point's lower bound is refined (see ``_run_family``).
REFINED_CLIPPED_STEPS = 4096

#: Deltas of the privacy-curve figure.
CURVE_DELTAS = [10.0 ** -k for k in range(10, 0, -1)]


def c_zero_epsilon(delta: float) -> float:
    """eps = (1/2) ln(2/delta): COLT's c = ln((1/(2 eps)) ln(2/delta)) / (2 ln T) is 0 there.

    c >= 0 (needed by App. A.2's step 2 eps / T^{2c} <= 2 eps) iff eps <= this value.
    """
    return 0.5 * math.log(2.0 / delta)


def _cross_check(mu: float, delta: float) -> str:
    """Closed-form Gaussian epsilon vs dp-accounting's PLD (grid coarsened for large mu)."""
    interval = 1e-4 * max(1.0, mu * mu / 4.0)
    pld = gaussian_epsilon_pld(mu, delta, value_discretization_interval=interval)
    return (f"Cross-check at the worst point (mu = {mu:.6g}, delta = {delta:.3g}): closed-form "
            f"Gaussian epsilon {gaussian_epsilon(mu, delta):.6g} vs dp-accounting PLD {pld:.6g} "
            f"(grid {interval:.2g}).")


def _lr_weights_tree(horizon: int, shift: float) -> np.ndarray:
    """Sigma^{-1} Delta for the released prefix sums (per coordinate, up to 1/sigma^2)."""
    M, _ = released_noise_matrix(horizon)
    return np.linalg.solve(M @ M.T, np.full(horizon, shift))


def _tree_mu(horizon: int, shift: float, sigma: float) -> float:
    """Exact shift of the released prefix sums when w_1 moves by ``shift`` (node count)."""
    return shift * math.sqrt(released_node_count(1, horizon)) / sigma


def privatesum_step_mu(R: float, sigma: float) -> float:
    """Shift of the worst single output W^_t: 2R / sigma.

    W^_t sums the noisy nodes of the binary decomposition of t; when t is a power of two that is
    one node, which contains every w_s with s <= t, so replacing w_s (||w_s - w'_s|| <= 2R) moves
    W^_t by 2R against noise N(0, sigma^2 I). Every other t sums more nodes (more noise).
    """
    return 2.0 * R / sigma


def pqftl_state_mu(version: Version, T: int, R: float, epsilon: float, delta: float,
                   log_reading: LogReading, d: int, u_bound: float | None = None
                   ) -> dict[str, float]:
    """Shifts of PQFTL's state (V^_t, u^_t)_{t <= T-1} when one loss is replaced.

    Worst case: the u-tree's nodes move by up to 2R^2 (|y| ||v|| <= R^2) and the V-tree's by
    R^2 sqrt(2) (d >= 2: e.g. v = R e_1 -> R e_2) or R^2 (d = 1), each in
    ``released_node_count(1, T-1)`` released nodes, composed: ``"worst"``. The label flip
    y_1 = +-R, v_1 = R e_1 (V identical): ``"flip"``. Label and direction changed together:
    ``"mixed"``. ``u_bound`` replaces the bound R that Algorithm 4 line 8 passes to the u-tree
    (e.g. R^2, the true bound on ||y_t v_t||) to show what the printed argument costs.
    """
    sV, su = pqftl_sigmas(version, T, R, epsilon, delta, log_reading)
    if u_bound is not None:
        su = private_sum_sigma(version, T, u_bound, epsilon / 2.0, delta / 2.0, log_reading)
    n = released_node_count(1, T - 1)
    dV = R * R * (math.sqrt(2.0) if d >= 2 else 1.0)
    worst = math.sqrt(n) * math.hypot(2.0 * R * R / su, dV / sV)
    flip = math.sqrt(n) * 2.0 * R * R / su
    mixed = (math.sqrt(n) * math.hypot(math.sqrt(2.0) * R * R / su, math.sqrt(2.0) * R * R / sV)
             if d >= 2 else math.sqrt(n) * math.hypot(R * R / su, R * R / sV))
    return {"worst": worst, "flip": flip, "mixed": mixed, "sigma_V": sV, "sigma_u": su,
            "nodes": float(n)}


def _pgiga_accountant(T: int, t_q: int, G: float, alpha: float, beta: float) -> tuple[float, int]:
    """max over the replaced position tau >= t_q of the worst-case mu, and the maximiser.

    A loss replaced at round tau moves x_{tau+1} by at most eta_tau 2G = 4G/(alpha tau); a gradient
    step of an alpha-strongly convex L_G-smooth loss contracts by max(|1 - eta alpha|,
    |1 - eta L_G|) = 1 - 2/s for s >= t_q (since 2 L_G/(alpha s) <= alpha/L_G <= 1), so
    ||x_{t+1} - x'_{t+1}|| <= 4G (tau - 1)/(alpha (t - 1) t) for t >= tau, and with sigma_t = beta/t
    mu(tau)^2 = (4G (tau - 1)/(alpha beta))^2 sum_{j = tau-1}^{T-2} 1/j^2.
    """
    taus = np.arange(max(t_q, 2), T, dtype=float)
    if taus.size == 0:
        return 0.0, t_q
    j = np.arange(1, T - 1, dtype=float)
    tail = np.cumsum((1.0 / j ** 2)[::-1])[::-1]  # tail[k] = sum_{j >= k+1} 1/j^2 (j <= T-2)
    sums = tail[(taus - 2).astype(int)]
    mus = 4.0 * G * (taus - 1.0) / (alpha * beta) * np.sqrt(sums)
    k = int(np.argmax(mus))
    return float(mus[k]), int(taus[k])


def igd_step_sensitivity(t: int | np.ndarray, L: float, alpha: float) -> float | np.ndarray:
    """2L/(alpha (t+2)): how far replacing f_t can move IGD's x_{t+1} (eta_t = 1/(alpha t)).

    Proof (any convex C, any d, any alpha-strongly convex losses that are L-Lipschitz on C;
    sub-gradients allowed). Let x, x' be the minimisers over C of f(z) + alpha t/2 ||z - x_t||^2
    and f'(z) + alpha t/2 ||z - x_t||^2, r = ||x' - x||, u = (x' - x)/r, and restrict both losses
    to the segment [x, x'] (inside C by convexity): phi(s) = f(x + s u), psi(s) = f'(x + s u),
    s in [0, r]. Optimality of x along u and of x' along -u gives
    phi'_+(0) + alpha t <x - x_t, u> >= 0 >= psi'_-(r) + alpha t <x' - x_t, u>; subtracting,
    alpha t r <= phi'_+(0) - psi'_-(r). Strong convexity on the segment gives
    phi'_+(0) <= phi'_-(r) - alpha r and psi'_-(r) >= psi'_+(0) + alpha r, and the Lipschitz bound
    on the segment |phi'_-(r)|, |psi'_+(0)| <= L; so alpha t r <= 2L - 2 alpha r, i.e.
    r <= 2L/(alpha (t+2)). (Lemma 4 and the earlier accountant used 2L/(alpha t) and
    2L/(alpha (t+1)): they use strong convexity of the proximal term only, not of f and f'.)
    The bound is attained in d = 1 by f, f' = -+G z + alpha/2 z^2 on C = [-D, D] with
    D = L/(alpha (t+2)), G = L - alpha D (:func:`~dpaudit.papers.jkt12.pairs._igd_design`).
    """
    return 2.0 * L / (alpha * (np.asarray(t, dtype=float) + 2.0))


def pigd_accountant(T: int, L: float, alpha: float, beta: float) -> tuple[float, int]:
    """Worst-case Gaussian shift mu of PIGD's released trajectory, and the replaced round.

    A loss replaced at round tau (1 <= tau <= T-1) moves x_{tau+1} by at most
    2L/(alpha (tau+2)) (:func:`igd_step_sensitivity`); every later implicit step with the same
    loss f_t is the proximal map of (1/(alpha t)) f_t + the indicator of C, a (1/t)-strongly
    convex function, hence a 1/(1 + 1/t) = t/(t+1) contraction; so for t >= tau
    ||x_{t+1} - x'_{t+1}|| <= 2L (tau+1)/(alpha (tau+2) (t+1)) (and 0 before tau). The released
    x^_{t+1} = Pi_C(x_{t+1} + b_{t+1}), b_{t+1} ~ N(0, (beta/t)^2 I), is post-processing of the
    unprojected Gaussian release, whose epsilon(delta) for one pair is that of a Gaussian
    mechanism with mu(tau)^2 = (2L (tau+1)/(alpha (tau+2) beta))^2 sum_{t=tau}^{T-1} (t/(t+1))^2
    (rotation invariance of the isotropic noise; a data-independent random x_1 is a mixture,
    which the hockey-stick divergence's joint convexity bounds by the worst fixed x_1). The
    maximum over tau is the worst case over every neighbouring pair, every C and every d.
    """
    if T < 2:
        return 0.0, 1
    t = np.arange(1, T, dtype=float)               # t = 1..T-1
    terms = (t / (t + 1.0)) ** 2
    tail = np.cumsum(terms[::-1])[::-1]            # tail[k] = sum_{t >= k+1} (t/(t+1))^2
    taus = t
    mus = 2.0 * L * (taus + 1.0) / (alpha * (taus + 2.0) * beta) * np.sqrt(tail)
    k = int(np.argmax(mus))
    return float(mus[k]), int(taus[k])
