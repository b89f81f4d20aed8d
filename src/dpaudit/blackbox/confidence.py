"""Exact one-sided confidence bounds and the privacy lower bounds derived from event counts.

For one fixed event ``S`` observed ``k_p`` times in ``n_p`` runs on one input and ``k_q`` times in
``n_q`` runs on its neighbour, every function here makes a statement that holds with probability
at least ``1 - alpha`` over the sampling (``../shared/AUDIT-METHOD.md`` section 3):
:func:`clopper_pearson_lower` / :func:`clopper_pearson_upper` (Clopper & Pearson, Biometrika 1934;
equal to statsmodels' ``proportion_confint(method="beta")`` at level ``2 a``); :class:`Bonferroni`,
which shares ``alpha`` over ``m`` events at ``a = 1 - sqrt(1 - alpha / m)`` per interval (two
independent intervals per event); :func:`epsilon_lower_bound`, ``ln((p_lo - delta) / q_hi)``
from ``P[M(D) in S] <= e^eps P[M(D') in S] + delta``; and :func:`gdp_mu_lower_bound`,
``Phi^-1(p) - Phi^-1(q)`` (Dong, Roth & Su, JRSS-B 2022, Def. 2.6), valid for any mechanism but
never deciding a verdict. Public bounds at or below zero are reported as ``0.0``
(:func:`log_ratio_lower_bound` gives the unclamped value). :func:`wilson_lower` /
:func:`wilson_upper` are approximate, for ranking candidate events only.

Each bound and why it holds: docs/blackbox-notes.md#confidence-bounds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special, stats

from dpaudit._validation import check_delta, check_int, check_probability

__all__ = [
    "Bonferroni",
    "ProportionBound",
    "clopper_pearson_lower",
    "clopper_pearson_upper",
    "proportion_bound",
    "pooled_proportion_bound",
    "POOLED_MAX_ALPHA",
    "log_ratio_lower_bound",
    "epsilon_lower_bound",
    "gdp_mu_lower_bound",
    "gdp_mu_from_bounds",
    "wilson_lower",
    "wilson_upper",
]


def _counts(k: object, n: object) -> tuple[np.ndarray, np.ndarray]:
    k_arr = np.asarray(k)
    n_arr = np.asarray(n)
    for name, arr in (("count", k_arr), ("nobs", n_arr)):
        integral_float = (arr.dtype.kind == "f" and bool(np.all(np.isfinite(arr)))
                          and bool(np.all(arr == np.round(arr))))
        if arr.dtype.kind not in "iu" and not integral_float:
            raise TypeError(f"{name} must be integer-valued, got dtype {arr.dtype}")
    k_arr = k_arr.astype(np.float64)
    n_arr = n_arr.astype(np.float64)
    if np.any(n_arr < 1):
        raise ValueError("nobs must be an integer in [1, inf)")
    if np.any(k_arr < 0) or np.any(k_arr > n_arr):
        raise ValueError("count must be an integer in [0, nobs]")
    return k_arr, n_arr


def _scalar_or_array(x: np.ndarray) -> float | np.ndarray:
    return float(x) if x.ndim == 0 else x


def clopper_pearson_lower(count: int | np.ndarray, nobs: int | np.ndarray,
                          alpha: float) -> float | np.ndarray:
    """Exact one-sided ``(1 - alpha)`` Clopper-Pearson lower bound on a binomial proportion.

    Parameters
    ----------
    count, nobs : int or integer array (broadcast together)
        Successes ``k`` and trials ``n``, ``0 <= k <= n``, ``n >= 1``.
    alpha : float in (0, 1)
        One-sided error probability: ``P[lower <= p] >= 1 - alpha`` for every ``p``.

    Returns
    -------
    float or array
        ``Beta(alpha; k, n - k + 1)`` quantile, and ``0`` when ``k = 0``.
    """
    alpha = check_probability(alpha, "alpha")
    k, n = _counts(count, nobs)
    with np.errstate(invalid="ignore"):
        lo = special.betaincinv(np.maximum(k, 1.0), n - k + 1.0, alpha)
    return _scalar_or_array(np.where(k > 0, lo, 0.0))


def clopper_pearson_upper(count: int | np.ndarray, nobs: int | np.ndarray,
                          alpha: float) -> float | np.ndarray:
    """Exact one-sided ``(1 - alpha)`` Clopper-Pearson upper bound on a binomial proportion.

    Parameters
    ----------
    count, nobs : int or integer array (broadcast together)
        Successes ``k`` and trials ``n``, ``0 <= k <= n``, ``n >= 1``.
    alpha : float in (0, 1)
        One-sided error probability: ``P[upper >= p] >= 1 - alpha`` for every ``p``.

    Returns
    -------
    float or array
        ``Beta(1 - alpha; k + 1, n - k)`` quantile, and ``1`` when ``k = n``.
    """
    alpha = check_probability(alpha, "alpha")
    k, n = _counts(count, nobs)
    with np.errstate(invalid="ignore"):
        hi = special.betaincinv(k + 1.0, np.maximum(n - k, 1.0), 1.0 - alpha)
    return _scalar_or_array(np.where(k < n, hi, 1.0))


@dataclass(frozen=True)
class ProportionBound:
    """An observed count with its exact one-sided Clopper-Pearson bounds.

    ``lower`` and ``upper`` are each one-sided at level ``1 - alpha`` (so ``[lower, upper]`` is a
    two-sided ``1 - 2 alpha`` interval).
    """

    count: int
    nobs: int
    alpha: float
    lower: float
    upper: float

    @property
    def estimate(self) -> float:
        """The plain frequency ``count / nobs``."""
        return self.count / self.nobs

    def to_dict(self) -> dict[str, float | int | str]:
        return {"count": self.count, "nobs": self.nobs, "estimate": self.estimate,
                "one_sided_alpha": self.alpha, "lower": self.lower, "upper": self.upper,
                "method": "Clopper-Pearson (exact), one-sided"}


def proportion_bound(count: int, nobs: int, alpha: float) -> ProportionBound:
    """Both one-sided ``(1 - alpha)`` Clopper-Pearson bounds for ``count`` successes in ``nobs``."""
    nobs = check_int(nobs, "nobs", minimum=1)
    count = check_int(count, "count", minimum=0, maximum=nobs)
    lower = float(clopper_pearson_lower(count, nobs, alpha))
    upper = float(clopper_pearson_upper(count, nobs, alpha))
    return ProportionBound(count, nobs, float(alpha), lower, upper)


#: Largest one-sided level at which :func:`pooled_proportion_bound` is offered (see its proof).
POOLED_MAX_ALPHA = 0.25


def pooled_proportion_bound(count: int, nobs: int, alpha: float) -> ProportionBound:
    """Clopper-Pearson ends for a count that is a *sum of independent binomials* (a pooled event).

    ``count = X + Y`` with ``X ~ Bin(n_a, a)``, ``Y ~ Bin(n_b, b)`` independent and
    ``nobs = n_a + n_b`` is a Poisson-binomial count (``nobs`` independent trials with mean rate
    ``r = (n_a a + n_b b) / nobs``). The binomial Clopper-Pearson ends of ``count / nobs`` are
    returned, except that the lower end is 0 when ``count < 2`` and the upper end is 1 when
    ``count > nobs - 2``; with these two guards both ends are valid one-sided ``(1 - alpha)``
    bounds on ``r`` for every ``alpha <= 1/4``:

    * Hoeffding (Ann. Math. Statist. 27, 1956, Theorem 4): a Poisson-binomial ``S`` with mean
      ``m r`` has ``P[S <= c] <= Bin(m, r)[S <= c]`` for ``c <= m r - 1`` and (by the second part,
      read for ``S >= k = c + 1``) ``P[S >= k] <= Bin(m, r)[S >= k]`` for ``k >= m r + 1``.
    * Lower end: it exceeds ``r`` iff ``count >= k*`` with ``k*`` the smallest ``k`` such that
      ``Bin(m, r)[S >= k] < alpha`` (and ``k >= 2`` by the guard). If ``m r <= 1``, ``k* >= 2 >=
      m r + 1``. If ``m r > 1`` and ``k* < m r + 1``, then ``k* <= ceil(m r)`` and
      ``Bin(m, r)[S >= k*] >= Bin(m, r)[S >= m r] > 1/4`` (Greenberg and Mohri, Stat. Probab.
      Lett. 86, 2014), contradicting ``< alpha <= 1/4``. So Hoeffding applies at ``k*``:
      ``P[count >= k*] <= alpha``.
    * Upper end: symmetric, with ``m - S`` (a Poisson binomial of mean ``m (1 - r)``) and the
      guard ``count <= m - 2``.

    Parameters are as in :func:`proportion_bound`; ``alpha`` must be at most
    :data:`POOLED_MAX_ALPHA`.
    """
    nobs = check_int(nobs, "nobs", minimum=1)
    count = check_int(count, "count", minimum=0, maximum=nobs)
    alpha = check_probability(alpha, "alpha")
    if alpha > POOLED_MAX_ALPHA:
        raise ValueError(f"alpha must be in (0, {POOLED_MAX_ALPHA}] for a pooled count, got "
                         f"{alpha}")
    lower = float(clopper_pearson_lower(count, nobs, alpha)) if count >= 2 else 0.0
    upper = float(clopper_pearson_upper(count, nobs, alpha)) if count <= nobs - 2 else 1.0
    return ProportionBound(count, nobs, float(alpha), lower, upper)


@dataclass(frozen=True)
class Bonferroni:
    """Confidence-level bookkeeping for ``m`` events evaluated on a fresh split.

    ``alpha`` is the total error probability of the reported bound (the maximum over the ``m``
    per-event bounds): each event gets ``alpha / m`` (Bonferroni), and within an event the two
    intervals on independent samples each get ``1 - sqrt(1 - alpha / m)`` so that they hold jointly
    with probability ``1 - alpha / m`` exactly.
    """

    alpha: float
    m: int = 1

    def __post_init__(self) -> None:
        object.__setattr__(self, "alpha", check_probability(self.alpha, "alpha"))
        object.__setattr__(self, "m", check_int(self.m, "m", minimum=1))

    @property
    def per_event_alpha(self) -> float:
        """Error probability allotted to one event: ``alpha / m``."""
        return self.alpha / self.m

    @property
    def per_interval_alpha(self) -> float:
        """One-sided error probability of each of an event's two independent intervals."""
        return -math.expm1(0.5 * math.log1p(-self.per_event_alpha))

    def to_dict(self) -> dict[str, float | int]:
        return {"alpha": self.alpha, "m": self.m, "per_event_alpha": self.per_event_alpha,
                "per_interval_alpha": self.per_interval_alpha}


def log_ratio_lower_bound(p_lower: float | np.ndarray, q_upper: float | np.ndarray,
                          delta: float = 0.0) -> float | np.ndarray:
    """Unclamped ``ln((p_lower - delta) / q_upper)``; ``-inf`` where ``p_lower <= delta``.

    ``q_upper`` must be positive (a Clopper-Pearson upper bound always is).
    """
    p = np.asarray(p_lower, dtype=np.float64)
    q = np.asarray(q_upper, dtype=np.float64)
    num = p - delta
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(num > 0, np.log(np.where(num > 0, num, 1.0)) - np.log(q), -np.inf)
    return _scalar_or_array(out)


def epsilon_lower_bound(count_p: int, nobs_p: int, count_q: int, nobs_q: int,
                        delta: float = 0.0, alpha: float = 0.05) -> float:
    """One-sided ``(1 - alpha)`` lower confidence bound on epsilon from one event's counts.

    Parameters
    ----------
    count_p, nobs_p : int
        Occurrences of the event in ``nobs_p`` runs on the input where it is *more* likely (D).
    count_q, nobs_q : int
        Occurrences of the same event in ``nobs_q`` independent runs on the neighbour (D').
    delta : float in [0, 1)
        The delta of the (epsilon, delta) claim being audited.
    alpha : float in (0, 1)
        Total error probability; each of the two intervals is at ``1 - sqrt(1 - alpha)``.

    Returns
    -------
    float
        ``max(0, ln((p_lo - delta) / q_hi))`` with exact Clopper-Pearson ``p_lo``, ``q_hi``
        (AUDIT-METHOD section 3). The event must have been chosen independently of these counts.
    """
    delta = check_delta(delta)
    a = Bonferroni(alpha).per_interval_alpha
    p_lo = proportion_bound(count_p, nobs_p, a).lower
    q_hi = proportion_bound(count_q, nobs_q, a).upper
    return max(0.0, float(log_ratio_lower_bound(p_lo, q_hi, delta)))


def gdp_mu_from_bounds(p_lower: float | np.ndarray, q_upper: float | np.ndarray
                       ) -> float | np.ndarray:
    """Unclamped ``Phi^-1(p_lower) - Phi^-1(q_upper)`` (``-inf`` where ``p_lower <= 0`` or
    ``q_upper >= 1``): the mu bound of :func:`gdp_mu_lower_bound` from given interval ends."""
    return _gdp_mu(p_lower, q_upper)


def _gdp_mu(p_lower: float | np.ndarray, q_upper: float | np.ndarray) -> float | np.ndarray:
    p = np.asarray(p_lower, dtype=np.float64)
    q = np.asarray(q_upper, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        mu = stats.norm.ppf(p) - stats.norm.ppf(q)
    mu = np.where((p <= 0) | (q >= 1), -np.inf, mu)
    return _scalar_or_array(mu)


def gdp_mu_lower_bound(count_p: int, nobs_p: int, count_q: int, nobs_q: int,
                       alpha: float = 0.05) -> float:
    """One-sided ``(1 - alpha)`` lower confidence bound on the Gaussian-DP parameter mu.

    Parameters are as in :func:`epsilon_lower_bound`: the event is the rejection region of a test
    of "the output came from D'" against "from D", so ``FPR = q`` (runs on D') and
    ``FNR = 1 - p`` (runs on D).

    Returns
    -------
    float
        ``max(0, Phi^-1(1 - FPR_hi) - Phi^-1(FNR_hi))`` with both error rates upper-bounded by
        exact Clopper-Pearson (Dong, Roth and Su 2022, Def. 2.6 and Prop. 2.5 read backwards).
        Valid for any mechanism as a bound on mu; converting mu to (epsilon, delta) assumes the
        trade-off curve is Gaussian.
    """
    a = Bonferroni(alpha).per_interval_alpha
    fnr_hi = 1.0 - proportion_bound(count_p, nobs_p, a).lower
    fpr_hi = proportion_bound(count_q, nobs_q, a).upper
    return max(0.0, float(_gdp_mu(1.0 - fnr_hi, fpr_hi)))


def _wilson(rate: np.ndarray, nobs: float | np.ndarray, alpha: float, sign: float) -> np.ndarray:
    z = -special.ndtri(alpha)  # = stats.norm.isf(alpha), without its per-call overhead
    rate = np.clip(np.asarray(rate, dtype=np.float64), 0.0, 1.0)
    n = np.asarray(nobs, dtype=np.float64)
    z2n = z * z / n
    centre = (rate + 0.5 * z2n) / (1.0 + z2n)
    half = z / (1.0 + z2n) * np.sqrt(rate * (1.0 - rate) / n + 0.25 * z2n / n)
    bound = np.clip(centre + sign * half, 0.0, 1.0)
    # Exact ends: an all-success rate has upper bound 1, an all-failure rate lower bound 0.
    if sign > 0:
        return np.where(rate >= 1.0, 1.0, np.maximum(bound, rate))
    return np.where(rate <= 0.0, 0.0, np.minimum(bound, rate))


def wilson_lower(rate: np.ndarray, nobs: float | np.ndarray, alpha: float) -> np.ndarray:
    """Approximate one-sided Wilson score lower bound for an observed ``rate`` over ``nobs`` trials.

    ``nobs`` may be fractional (an effective sample size). For ranking candidate events only.
    """
    return _wilson(rate, nobs, alpha, -1.0)


def wilson_upper(rate: np.ndarray, nobs: float | np.ndarray, alpha: float) -> np.ndarray:
    """Approximate one-sided Wilson score upper bound; see :func:`wilson_lower`."""
    return _wilson(rate, nobs, alpha, 1.0)
