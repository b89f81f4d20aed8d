"""Exact privacy of JKT12 releases: Gaussian steps, optionally clipped to an interval.

Jain, Kothari & Thakurta, *Differentially Private Online Learning* (COLT 2012 and arXiv versions):
the POCP family (Algorithms 1, 2, 3, 6, 7) releases ``x^ = Pi_C(x + b)`` with a deterministic x on
each neighbouring stream and independent Gaussian b. With C = R^d the release is one Gaussian
mechanism; with C a box and streams that differ along one coordinate it is a sequence of 1-D
clipped Gaussians, and the projection, being post-processing, can only lower epsilon.
:func:`release_epsilon` brackets epsilon(delta): the unclipped Gaussian above, optimistic
dp-accounting PLDs of the clipped steps below (``lower == upper`` without clipping). The bracket's
construction and why treating steps of negligible clipping mass as unclipped costs only that mass
in delta are in ``README.md`` beside this file (Evidence, "The exact tier's bracket").
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from dp_accounting.pld import pld_pmf
from dp_accounting.pld import privacy_loss_distribution as pld_lib
from scipy import signal
from scipy.special import log_ndtr

from dpaudit._validation import check_delta, check_finite_array, check_int, check_positive
from dpaudit.claims.curve_deltas import DECADES
from dpaudit.formal.accounting import gaussian_epsilon, heterogeneous_gaussian_mu
from dpaudit.learners.pqftl import pqftl_sigmas
from dpaudit.mechanisms.private_sum import LogReading, Version, private_sum_sigma, released_node_count, released_noise_matrix

__all__ = ["ReleaseEpsilon", "release_epsilon", "release_epsilon_curve", "igd_step_sensitivity",
           "pigd_accountant", "pgiga_accountant", "tree_mu", "lr_weights_tree", "cross_check"]

#: The PLD grid is refined until the pieces' total rounding (one grid step each) is at most
#: PLD_REL_ERROR of the release's epsilon scale (:func:`_grid_interval`).
PLD_REL_ERROR = 1e-4
#: Standardised first-input tail (each side) left out of a step's PLD (mass < 2e-33).
Z_TAIL = 12.0
#: Largest total number of grid cells of the composed pieces (:func:`_grid_interval`).
MAX_PLD_CELLS = 8_000_000
#: Tail mass cut at each composition (dp-accounting's default rule, :func:`_compose`).
COMPOSE_TAIL_MASS = 1e-15
#: Largest total first-input clipping mass of the steps treated as unclipped in the lower bound
#: (it is added to delta; delta-independent, so one PLD serves every delta of a curve).
NEGLIGIBLE_CLIP_MASS = 1e-12


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
    #: Upper bound on the clipped release itself (pessimistic PLD), when requested.
    upper_projected: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """The bracket as a JSON-ready dict, for the audit record."""
        out = {"lower": self.lower, "upper": self.upper, "mu_unclipped": self.mu,
               "delta": self.delta, "clipped_steps": self.clipped_steps,
               "dropped_steps": self.dropped_steps,
               "negligible_clip_mass": self.negligible_clip_mass, "notes": list(self.notes)}
        if self.upper_projected is not None:
            out["upper_projected"] = self.upper_projected
        return out


def _log_sub(la: np.ndarray, lb: np.ndarray) -> np.ndarray:
    """log(e^la - e^lb) for la >= lb (elementwise); -inf where equal."""
    with np.errstate(divide="ignore", invalid="ignore"):
        out = la + np.log(-np.expm1(lb - la))
    return np.where(la > lb, out, -np.inf)


#: Outcomes (and Gaussian tails) of log-probability below this are dropped from the lower bound
#: (dropping mass only lowers the divergence, so the bound stays valid).
LOG_MASS_TRUNCATION = -50.0


def _log_clip_probability(m: np.ndarray, sigma: np.ndarray, D: float) -> np.ndarray:
    """log P(m + N(0, sigma^2) is outside (-D, D)), in log space (no underflow to 0)."""
    return np.logaddexp(log_ndtr((-D - m) / sigma), log_ndtr((m - D) / sigma))


def _split_steps(a: np.ndarray, s: np.ndarray, D: float, log_budget: float
                 ) -> tuple[np.ndarray, np.ndarray, float]:
    """Steps treated as unclipped Gaussians and steps kept clipped, and the log of the clipping
    mass under the *first* input ``a`` of the former (at most ``exp(log_budget)``).

    The steps with the smallest first-input clipping probability are taken while their total
    (summed in log space) stays within the budget.
    """
    lp = _log_clip_probability(a, s, D)
    order = np.argsort(lp, kind="stable")
    cum = np.logaddexp.accumulate(lp[order]) if len(order) else np.zeros(0)
    n_gauss = int(np.searchsorted(cum, log_budget, side="right"))
    log_mass = float(cum[n_gauss - 1]) if n_gauss else -math.inf
    return order[:n_gauss], order[n_gauss:], log_mass


def _grid_interval(mu: float, shifts: np.ndarray, rel_error: float = 1e-4) -> float:
    """PLD grid: rounding each composed piece's privacy loss down (optimistic) or up (pessimistic)
    to the grid moves it by less than one grid step, so the composition's epsilon by less than
    ``pieces * interval = rel_error * max(1, mu^2/2 + mu)`` (mu: the unclipped shift, whose
    epsilon is about mu^2/2 + z mu), unless the pieces' loss ranges (2 Z_TAIL |r| each, r the
    standardised shifts) would need more than MAX_PLD_CELLS cells, when the grid is coarsened
    (the bound stays rigorous, only looser). Independent of delta, so one PLD serves every
    delta."""
    scale = max(1.0, mu * mu / 2.0 + mu)
    width = float(np.sum(2.0 * Z_TAIL * np.abs(shifts)))
    return max(1e-9, rel_error * scale / max(1, len(shifts)), width / MAX_PLD_CELLS)


def _compose(plds: list[Any], tail_mass: float = COMPOSE_TAIL_MASS) -> Any:
    """Pairwise (tree) composition of dense single-direction PLDs with dp-accounting's tail rule,
    vectorised: a prefix and a suffix of mass <= tail_mass/2 each are cut; an optimistic PLD
    drops the prefix and moves the suffix onto its last kept loss (rounded down), a pessimistic
    one moves the prefix onto its first kept loss (rounded up) and the suffix to infinity."""
    pmfs = [p._pmf_remove for p in plds]  # pylint: disable=protected-access

    def pair(x: Any, y: Any) -> Any:
        probs = np.maximum(signal.convolve(x._probs, y._probs), 0.0)
        lower = x._lower_loss + y._lower_loss
        inf = x._infinity_mass + y._infinity_mass - x._infinity_mass * y._infinity_mass
        cum = np.cumsum(probs)
        left = int(np.searchsorted(cum, tail_mass / 2.0, side="right"))
        rcum = np.cumsum(probs[::-1])
        right = len(probs) - int(np.searchsorted(rcum, tail_mass / 2.0, side="right"))
        right = max(right, left + 1)
        kept = probs[left:right].copy()
        lmass, rmass = float(probs[:left].sum()), float(probs[right:].sum())
        if x._pessimistic_estimate:
            kept[0] += lmass
            inf += rmass
        else:
            kept[-1] += rmass
        return pld_pmf.DensePLDPmf(x._discretization, lower + left, kept, inf,
                                   x._pessimistic_estimate)

    while len(pmfs) > 1:
        pmfs = [pair(pmfs[i], pmfs[i + 1]) if i + 1 < len(pmfs) else pmfs[i]
                for i in range(0, len(pmfs), 2)]
    return pld_lib.PrivacyLossDistribution(pmfs[0]) if pmfs else None


def _log_cell_masses(edges: np.ndarray) -> np.ndarray:
    """log P(edges[k] < N(0,1) <= edges[k+1]) for increasing edges, accurate in both tails
    (two ``log_ndtr`` per edge: left tail differences below 0, right tail above, the middle
    cell by complement)."""
    lo_tail = log_ndtr(edges)      # log P(Z <= e)
    hi_tail = log_ndtr(-edges)     # log P(Z > e)
    a, b = edges[:-1], edges[1:]
    out = np.empty(len(a))
    left = b <= 0
    right = a >= 0
    mid = ~(left | right)
    out[left] = _log_sub(lo_tail[1:][left], lo_tail[:-1][left])
    out[right] = _log_sub(hi_tail[:-1][right], hi_tail[1:][right])
    if mid.any():
        with np.errstate(divide="ignore"):
            out[mid] = np.log1p(-np.exp(lo_tail[:-1][mid]) - np.exp(hi_tail[1:][mid]))
    return out


def _step_plds(m0: float, m1: float, sigma: float, D: float | None, interval: float,
               which: tuple[bool, ...]) -> list[pld_lib.PrivacyLossDistribution]:
    """PLDs of one step ``clip(m + N(0, sigma^2), -D, D)`` (``D=None``: no clipping), first input
    m0, with every privacy loss rounded *down* to the grid (``False`` in ``which``: the
    hockey-stick divergence E_P0[(1 - e^{eps - L})_+] can only fall, a lower bound) or *up*
    (``True``: an upper bound).

    In the standardised coordinate z = (o - m0)/sigma of the first input the interior loss is
    affine, l(z) = r z + r^2/2 with r = (m0 - m1)/sigma; the outputs whose loss lies in the grid
    cell [j h, (j+1) h) form an interval of z, whose first-input mass is computed in log space
    (``log_ndtr``). The atoms at -D and D carry their exact loss
    log P0(atom) - log P1(atom). Mass beyond |z| > Z_TAIL, and atoms lighter than
    exp(LOG_MASS_TRUNCATION), are dropped (lower bound) or put at infinite loss (upper bound).
    """
    r = (m0 - m1) / sigma
    zlo, zhi = -Z_TAIL, Z_TAIL
    cells: list[tuple[np.ndarray, np.ndarray]] = []   # (floor index, log mass)
    atoms: list[tuple[float, float]] = []             # (exact loss, log mass)
    if D is not None:
        za, zb = (-D - m0) / sigma, (D - m0) / sigma
        zlo, zhi = max(zlo, za), min(zhi, zb)
        for lp0, lp1 in ((float(log_ndtr(za)), float(log_ndtr((-D - m1) / sigma))),
                         (float(log_ndtr(-zb)), float(log_ndtr((m1 - D) / sigma)))):
            if lp0 >= LOG_MASS_TRUNCATION:
                atoms.append((lp0 - lp1, lp0))
    if zhi > zlo:
        if r == 0.0:
            cells.append((np.array([0]), _log_cell_masses(np.array([zlo, zhi]))))
        else:
            l_a, l_b = sorted((r * zlo + r * r / 2.0, r * zhi + r * r / 2.0))
            j0, j1 = math.floor(l_a / interval), math.floor(l_b / interval)
            le = np.clip(np.arange(j0, j1 + 2) * interval, l_a, l_b)
            ze = (le - r * r / 2.0) / r
            lm = _log_cell_masses(ze) if r > 0 else _log_cell_masses(ze[::-1])[::-1]
            cells.append((np.arange(j0, j1 + 1), lm))
    out = []
    for pessimistic in which:
        idx = [c[0] + (1 if pessimistic else 0) for c in cells]
        idx += [np.array([math.ceil(l / interval) if pessimistic else math.floor(l / interval)])
                for l, _ in atoms]
        all_idx = np.concatenate(idx)
        mass = np.exp(np.concatenate([c[1] for c in cells] + [np.array([m]) for _, m in atoms]))
        lo = int(all_idx.min())
        probs = np.bincount(all_idx - lo, weights=mass)
        infinity = max(0.0, 1.0 - float(mass.sum())) if pessimistic else 0.0
        out.append(pld_lib.PrivacyLossDistribution(
            pld_pmf.DensePLDPmf(interval, lo, probs, infinity, pessimistic)))
    return out


def _release_plds(a: np.ndarray, b: np.ndarray, s: np.ndarray, D: float, max_clipped_steps: int,
                  rel_error: float, projected_upper: bool):
    """Optimistic PLD of the informative part of the clipped release (see the module docstring)
    and, when ``projected_upper``, the pessimistic PLD of the whole clipped release: the kept
    clipped steps as clipped, every other step as its unclipped Gaussian (clipping is
    post-processing, so this can only raise the divergence)."""
    gauss_idx, clipped_idx, log_p0 = _split_steps(a, s, D, math.log(NEGLIGIBLE_CLIP_MASS))
    informative = np.abs(a - b)[clipped_idx] / s[clipped_idx]
    keep = clipped_idx[np.argsort(-informative, kind="stable")[:max_clipped_steps]]
    dropped_idx = np.setdiff1d(clipped_idx, keep)
    keep = keep[np.abs(a - b)[keep] > 0]
    rest = np.concatenate([gauss_idx, dropped_idx]).astype(int)
    mu_g = heterogeneous_gaussian_mu((a - b)[gauss_idx], s[gauss_idx]) if len(gauss_idx) else 0.0
    mu_r = heterogeneous_gaussian_mu((a - b)[rest], s[rest]) if len(rest) else 0.0
    shifts = np.append(np.abs(a - b)[keep] / s[keep], max(mu_g, mu_r))
    interval = _grid_interval(heterogeneous_gaussian_mu(a - b, s), shifts, rel_error)
    which = (False, True) if projected_upper else (False,)
    low: list[Any] = []
    up: list[Any] = []
    if mu_g > 0:
        low.append(_step_plds(mu_g, 0.0, 1.0, None, interval, (False,))[0])
    if projected_upper and mu_r > 0:
        up.append(_step_plds(mu_r, 0.0, 1.0, None, interval, (True,))[0])
    for i in keep:
        pl = _step_plds(float(a[i]), float(b[i]), float(s[i]), D, interval, which)
        low.append(pl[0])
        if projected_upper:
            up.append(pl[1])
    notes = [f"lower bound: {len(keep)} clipped steps composed exactly (losses rounded down to a "
             f"grid of {interval:.3g}), {len(gauss_idx)} steps as an unclipped Gaussian "
             f"restricted to interior outputs (their clipping mass under the first input, "
             f"{math.exp(log_p0):.3g}, is added to delta)"]
    if len(dropped_idx):
        notes.append(f"{len(dropped_idx)} clipped steps left out of the lower bound "
                     f"(post-processing)")
    return (_compose(low), _compose(up) if projected_upper else None, math.exp(log_p0),
            len(keep), len(dropped_idx), tuple(notes))


def _epsilon_for_delta(pld: Any, delta: float) -> float:
    """Smallest eps >= 0 with delta(eps) <= ``delta`` for a dense single-direction PLD, in log
    space.

    delta(eps) = inf_mass + sum_{l > eps} p_l (1 - e^{eps - l}); on [l_{i-1}, l_i) it is
    U_i - e^eps W_i with U_i = inf_mass + sum_{k >= i} p_k and W_i = sum_{k >= i} p_k e^{-l_k},
    so eps = log(U_i - delta) - log W_i, with log W_i a running ``logaddexp`` of log p_k - l_k.
    dp-accounting's own ``get_epsilon_for_delta`` (0.6.0) accumulates ``exp(-loss) * prob`` in
    linear space: for losses beyond ~745 that underflows to 0 and it returns the loss at which
    the tail mass reaches delta, the delta-quantile of the privacy loss, which is *above* the
    epsilon (by about 1 at eps ~ 1e3, mu ~ 43) and so not a lower bound of an optimistic PLD.
    """
    pmf = pld._pmf_remove  # pylint: disable=protected-access
    if isinstance(pmf, pld_pmf.SparsePLDPmf):
        pmf = pmf.to_dense_pmf()
    inf_mass = float(pmf._infinity_mass)  # pylint: disable=protected-access
    if inf_mass > delta:
        return math.inf
    probs = np.asarray(pmf._probs, dtype=float)  # pylint: disable=protected-access
    losses = (pmf._lower_loss + np.arange(len(probs))) * pmf._discretization  # pylint: disable=protected-access
    with np.errstate(divide="ignore"):
        logp = np.log(probs)
    # Suffix sums U_i and log W_i (index i: losses l_i, l_{i+1}, ...).
    U = inf_mass + np.cumsum(probs[::-1])[::-1]
    logW = np.logaddexp.accumulate((logp - losses)[::-1])[::-1]
    # delta at eps = l_i: the losses above l_i, i.e. U_{i+1} - e^{l_i} W_{i+1}.
    U_next = np.append(U[1:], inf_mass)
    logW_next = np.append(logW[1:], -np.inf)
    with np.errstate(over="ignore", invalid="ignore"):
        d_at = U_next - np.exp(losses + logW_next)
    d_at = np.where(np.isfinite(d_at), d_at, U_next)
    ok = np.nonzero(d_at <= delta)[0]
    if len(ok) == 0:
        return math.inf
    i = int(ok[0])
    # eps in [l_{i-1}, l_i]: U_i - e^eps W_i = delta.
    if U[i] <= delta:
        eps = float(losses[i - 1]) if i > 0 else 0.0
    else:
        eps = math.log(U[i] - delta) - float(logW[i])
        eps = min(eps, float(losses[i]))
        if i > 0:
            eps = max(eps, float(losses[i - 1]))
    return max(0.0, eps)


def release_epsilon_curve(m0: np.ndarray, m1: np.ndarray, sigmas: np.ndarray,
                          deltas: np.ndarray | list[float], half_width: float | None = None, *,
                          max_clipped_steps: int = 128, projected_upper: bool = False,
                          rel_error: float = PLD_REL_ERROR) -> list[ReleaseEpsilon]:
    """:func:`release_epsilon` at several deltas, from one PLD queried at each delta.

    The PLD does not depend on the deltas, so every entry equals the single-delta call.

    Parameters
    ----------
    m0, m1, sigmas, half_width, max_clipped_steps, projected_upper, rel_error
        As in :func:`release_epsilon`.
    deltas
        Non-empty list of deltas, each in (0, 1).

    Returns
    -------
    list of ReleaseEpsilon
        One bracket per delta, in the order given.

    Raises
    ------
    ValueError
        If an array is empty, non-finite or of the wrong shape, a sigma is not positive, a delta is
        outside (0, 1), or a noise-free value lies outside ``[-D, D]``.
    """
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
    # Lower bound (module docstring): events restricted to outputs whose unclipped-treated steps
    # are interior, where the clipped and the unclipped releases coincide, so
    # delta_clipped(eps) >= delta_hybrid(eps) - p0 with p0 the clipping mass of those steps under
    # the first input alone (no e^eps factor), hence eps_clipped(delta) >= eps_hybrid(delta + p0).
    pld, upld, p0, n_clipped, dropped, notes = _release_plds(
        a, b, s, D, max_clipped_steps, rel_error, projected_upper)
    # epsilon(delta) of the pair is the larger of its two orders (the PLDs are of P0 against P1):
    # the upper end must cover both, the lower end may use either. A pair that is the mirror
    # image of itself (m1 = -m0 in the symmetric box) has the same PLD both ways.
    rev = None
    if not np.array_equal(a, -b):
        rev = _release_plds(b, a, s, D, max_clipped_steps, rel_error, projected_upper)
    out = []
    for u, d in zip(uppers, ds):
        lower = 0.0 if pld is None else _epsilon_for_delta(pld, d + p0)
        if rev is not None and rev[0] is not None:
            lower = max(lower, _epsilon_for_delta(rev[0], d + rev[2]))
        up_proj = None if upld is None else min(u, max(
            _epsilon_for_delta(upld, d),
            0.0 if rev is None or rev[1] is None else _epsilon_for_delta(rev[1], d)))
        out.append(ReleaseEpsilon(min(lower, u), u, mu, d, n_clipped, dropped, p0, notes,
                                  up_proj))
    return out


def release_epsilon(m0: np.ndarray, m1: np.ndarray, sigmas: np.ndarray, delta: float,
                    half_width: float | None = None, *, max_clipped_steps: int = 128,
                    projected_upper: bool = False, rel_error: float = PLD_REL_ERROR
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
    projected_upper : bool
        Also compute ``upper_projected`` (a second, pessimistic PLD).
    rel_error : float
        PLD grid: the pieces' total rounding is at most this fraction of the epsilon scale
        (:func:`_grid_interval`); a coarser grid is cheaper and only loosens the bracket.

    Returns
    -------
    ReleaseEpsilon
        ``lower <= epsilon(delta) of the release <= upper_projected <= upper``.
    """
    delta = check_delta(delta)
    if delta == 0.0:
        raise ValueError("delta must be in (0, 1), got 0")
    return release_epsilon_curve(m0, m1, sigmas, [delta], half_width,
                                 max_clipped_steps=max_clipped_steps,
                                 projected_upper=projected_upper, rel_error=rel_error)[0]


# Values the JKT12 auditors derive in closed form

#: Clipped steps composed exactly when a point's lower bound is refined (see ``_run_family``).
REFINED_CLIPPED_STEPS = 4096

#: Deltas of the privacy-curve figure.
CURVE_DELTAS = DECADES


def c_zero_epsilon(delta: float) -> float:
    """eps = (1/2) ln(2/delta): COLT's c = ln((1/(2 eps)) ln(2/delta)) / (2 ln T) is 0 there.

    c >= 0 (needed by App. A.2's step 2 eps / T^{2c} <= 2 eps) iff eps <= this value.

    Parameters
    ----------
    delta
        The input delta, in (0, 1).

    Returns
    -------
    float
        ``(1/2) ln(2/delta)``.
    """
    return 0.5 * math.log(2.0 / delta)


def cross_check(mu: float, delta: float) -> str:
    """A sentence comparing the closed-form Gaussian epsilon with dp-accounting's PLD at one point.

    The PLD is dp-accounting's pessimistic Gaussian PLD (grid coarsened for large ``mu``), its
    epsilon read in log space by :func:`_epsilon_for_delta`: the library's own reading underflows
    beyond a privacy loss of about 745, where it returns the delta-quantile of the loss.

    Parameters
    ----------
    mu
        The Gaussian mechanism's ``mu`` at the point (> 0).
    delta
        The delta at which both epsilons are read.

    Returns
    -------
    str
        The finding printed with the audit's worst point.
    """
    interval = 1e-4 * max(1.0, mu * mu / 4.0)
    pld = _epsilon_for_delta(pld_lib.from_gaussian_mechanism(
        standard_deviation=1.0 / mu, sensitivity=1.0, value_discretization_interval=interval),
        delta)
    return (f"Cross-check at the worst point (mu = {mu:.6g}, delta = {delta:.3g}): closed-form "
            f"Gaussian epsilon {gaussian_epsilon(mu, delta):.6g} vs dp-accounting PLD {pld:.6g} "
            f"(pessimistic, grid {interval:.2g}, epsilon read in log space).")


def lr_weights_tree(horizon: int, shift: float) -> np.ndarray:
    """Likelihood-ratio weights ``(M M^T)^{-1} Delta`` of PrivateSum's released prefix sums.

    ``M`` is the 0/1 matrix "prefix sum t contains node j's noise" (:func:`~dpaudit.mechanisms.
    private_sum.released_noise_matrix`); the sums' covariance is ``sigma^2 M M^T`` per coordinate,
    so the Gaussian log likelihood ratio of a pair whose first input differs by ``shift`` is linear
    in the sums with these weights (up to the factor ``1/sigma^2``).

    Parameters
    ----------
    horizon
        Number of released prefix sums.
    shift
        Difference of the two streams' first inputs along the tested coordinate.

    Returns
    -------
    numpy.ndarray
        One weight per released prefix sum, shape ``(horizon,)``.
    """
    M, _ = released_noise_matrix(horizon)
    return np.linalg.solve(M @ M.T, np.full(horizon, shift))


def tree_mu(horizon: int, shift: float, sigma: float) -> float:
    """Gaussian mu of PrivateSum's released prefix sums when ``w_1`` moves by ``shift``.

    Leaf 1 lies in ``released_node_count(1, horizon)`` independent released nodes, each moved by
    ``shift`` and noised with standard deviation ``sigma`` (JKT12 Algorithm 5; the node count is
    Theorem 11 COLT / 9 arXiv's "log T nodes" as implemented), so the release is one Gaussian
    mechanism with ``mu = shift sqrt(count) / sigma``.

    Parameters
    ----------
    horizon
        Number of rounds T whose prefix sums are released.
    shift
        l2 distance between the two streams' first inputs (``2R`` for ``w_1 = +-R e_1``).
    sigma
        Standard deviation of every node's noise.

    Returns
    -------
    float
        The Gaussian mechanism's ``mu``.
    """
    return shift * math.sqrt(released_node_count(1, horizon)) / sigma


def privatesum_step_mu(R: float, sigma: float) -> float:
    """Shift of the worst single output W^_t: 2R / sigma.

    W^_t sums the noisy nodes of the binary decomposition of t; when t is a power of two that is
    one node, which contains every w_s with s <= t, so replacing w_s (||w_s - w'_s|| <= 2R) moves
    W^_t by 2R against noise N(0, sigma^2 I). Every other t sums more nodes (more noise).

    Parameters
    ----------
    R
        Bound on every input's l2 norm.
    sigma
        Standard deviation of every node's noise.

    Returns
    -------
    float
        ``2R / sigma``.
    """
    return 2.0 * R / sigma


def pqftl_state_mu(version: Version, T: int, R: float, epsilon: float, delta: float,
                   log_reading: LogReading, d: int, u_bound: float | None = None
                   ) -> dict[str, float]:
    """Gaussian shifts of PQFTL's state (V^_t, u^_t)_{t <= T-1} when one loss is replaced.

    Worst case (JKT12 Algorithm 4): the u-tree's nodes move by up to 2R^2 (|y| ||v|| <= R^2) and the
    V-tree's by R^2 sqrt(2) (d >= 2: e.g. v = R e_1 -> R e_2) or R^2 (d = 1), each in
    ``released_node_count(1, T-1)`` released nodes, composed: ``"worst"``. The label flip y_1 = +-R,
    v_1 = R e_1 (V identical): ``"flip"``. Label and direction changed together: ``"mixed"``.
    ``u_bound`` replaces the bound R that Algorithm 4 line 8 passes to the u-tree (e.g. R^2, the
    true bound on ||y_t v_t||) to show what the printed argument costs.

    Parameters
    ----------
    version
        ``"colt"`` or ``"arxiv"``: the paper version whose noise scales are used.
    T
        Horizon (the state is released for ``t <= T - 1``).
    R
        Bound on the inputs (``|y| <= R``, ``||v|| <= R``).
    epsilon, delta
        The algorithm's input privacy parameters.
    log_reading
        The reading of the unprinted log base of the noise scales.
    d
        Dimension (``d = 1`` has no direction change).
    u_bound
        The bound passed to the u-tree instead of ``R``; ``None`` keeps the printed ``R``.

    Returns
    -------
    dict
        ``{"worst", "flip", "mixed"}``: the three shifts; ``"sigma_V"``, ``"sigma_u"``: the two
        trees' noise; ``"nodes"``: released nodes containing leaf 1.
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


def pgiga_accountant(T: int, t_q: int, G: float, alpha: float, beta: float) -> tuple[float, int]:
    """Worst-case Gaussian mu of PGIGA (JKT12 Algorithm 3, Lemma 5) over the replaced round.

    A loss replaced at round tau moves x_{tau+1} by at most eta_tau 2G = 4G/(alpha tau); a gradient
    step of an alpha-strongly convex L_G-smooth loss contracts by max(|1 - eta alpha|,
    |1 - eta L_G|) = 1 - 2/s for s >= t_q (since 2 L_G/(alpha s) <= alpha/L_G <= 1), so
    ||x_{t+1} - x'_{t+1}|| <= 4G (tau - 1)/(alpha (t - 1) t) for t >= tau, and with sigma_t = beta/t
    mu(tau)^2 = (4G (tau - 1)/(alpha beta))^2 sum_{j = tau-1}^{T-2} 1/j^2.

    Parameters
    ----------
    T
        Horizon.
    t_q
        First round of the private phase (earlier points are chosen without the data).
    G
        Gradient bound of the loss class.
    alpha
        Strong convexity of the losses.
    beta
        Noise scale: round t is noised with standard deviation ``beta / t``.

    Returns
    -------
    tuple[float, int]
        The largest ``mu(tau)`` over ``tau >= max(t_q, 2)`` and the ``tau`` attaining it
        (``(0.0, t_q)`` when no round is replaceable).
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
    D = L/(alpha (t+2)), G = L - alpha D (:func:`~dpaudit.papers.jkt12.pairs.igd_design`).

    Parameters
    ----------
    t
        Round(s) ``t >= 1`` (scalar or array).
    L
        Lipschitz constant of the losses on C.
    alpha
        Strong convexity of the losses.

    Returns
    -------
    float or numpy.ndarray
        ``2L / (alpha (t + 2))``, of the shape of ``t``.
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

    Parameters
    ----------
    T
        Horizon.
    L
        Lipschitz constant of the losses on C.
    alpha
        Strong convexity of the losses.
    beta
        Noise scale: round ``t`` is noised with standard deviation ``beta / t``.

    Returns
    -------
    tuple[float, int]
        The largest ``mu(tau)`` and the ``tau`` attaining it (``(0.0, 1)`` when ``T < 2``).
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
