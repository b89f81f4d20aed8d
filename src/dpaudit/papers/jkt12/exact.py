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
from dpaudit.audits.accounting import gaussian_epsilon, heterogeneous_gaussian_mu

__all__ = ["ReleaseEpsilon", "release_epsilon", "release_epsilon_curve"]

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
