"""What a pass is worth: the power of an audit that did not find a violation.

A "not violated" verdict only says that the chosen event's test-split counts gave no lower bound
above the claim. For that event this module finds the smallest epsilon' such that a mechanism
whose privacy loss on it is epsilon' (``p = min(1, e^epsilon' q + delta)`` on the numerator
input, ``q`` the event's observed rate on the other) would be reported ``violated`` with
probability at least ``power`` (default 0.8) at this test size and Bonferroni level. The detection
probability is computed exactly from the two binomial laws and the engine's one-sided
Clopper-Pearson bounds (``Kp`` summed within 9 standard deviations, all but ~1e-18 of the mass),
and ``epsilon'`` found by bisection. It is a statement about the chosen event only, never changes
a verdict, and is reported so that "not violated" is never read as "private".

The statement and its computation: docs/blackbox-notes.md#power-of-a-pass.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import special, stats

from dpaudit._validation import check_delta, check_int, check_probability

__all__ = ["detection_probability", "smallest_detectable_epsilon", "PowerStatement",
           "power_statement", "DEFAULT_POWER"]

#: Detection probability of the power statement.
DEFAULT_POWER = 0.8


def _cp_lower(k: np.ndarray, n: int, a: float) -> np.ndarray:
    k = k.astype(np.float64)
    with np.errstate(invalid="ignore"):
        lo = special.betaincinv(np.maximum(k, 1.0), n - k + 1.0, a)
    return np.where(k > 0, lo, 0.0)


def _cp_upper(k: np.ndarray, n: int, a: float) -> np.ndarray:
    k = k.astype(np.float64)
    with np.errstate(invalid="ignore"):
        hi = special.betaincinv(k + 1.0, np.maximum(n - k, 1.0), 1.0 - a)
    return np.where(k < n, hi, 1.0)


def _smooth(bound: Any, k: np.ndarray, n: int, a: float) -> np.ndarray:
    """``bound(k, n, a)`` on a long window of counts: the Clopper-Pearson ends are smooth and
    monotone in k, so they are computed exactly at every 16th count (and the first 64, where the
    curvature is largest) and interpolated linearly in between (relative error ~1e-9, far below
    anything reported)."""
    if k.size <= 4096:
        return bound(k, n, a)
    grid = np.unique(np.r_[k[:64], k[::16], k[-1]])
    return np.interp(k, grid, bound(grid, n, a))


def _binom_pmf(k: np.ndarray, n: int, p: float, logc: np.ndarray | None = None) -> np.ndarray:
    """Binomial pmf through log-gamma (about 10x faster than scipy.stats.binom.pmf on long
    windows; relative error ~1e-9 at n = 10^7, tested against scipy). ``logc``: the log binomial
    coefficients :func:`_log_binom_coef` ``(k, n)``, when the caller has them."""
    if p <= 0.0 or p >= 1.0:
        return (k == (0 if p <= 0.0 else n)).astype(np.float64)
    kf = k.astype(np.float64)
    if logc is None:
        logc = _log_binom_coef(k, n)
    return np.exp(logc + kf * math.log(p) + (n - kf) * math.log1p(-p))


def _log_binom_coef(k: np.ndarray, n: int) -> np.ndarray:
    """``ln C(n, k)`` elementwise, through log-gamma (the same values whatever array ``k`` is
    part of: the functions are elementwise)."""
    kf = k.astype(np.float64)
    return special.gammaln(n + 1.0) - special.gammaln(kf + 1.0) - special.gammaln(n - kf + 1.0)


def _window(n: int, p: float, width: float = 9.0) -> np.ndarray:
    sd = math.sqrt(max(n * p * (1 - p), 1.0))
    lo = max(0, int(math.floor(n * p - width * sd)) - 2)
    hi = min(n, int(math.ceil(n * p + width * sd)) + 2)
    return np.arange(lo, hi + 1)


class _Detector:
    """Detection probability as a function of ``p`` for fixed ``q``, sizes, level and claim (the
    neighbour's Clopper-Pearson ends and binomial CDF are computed once)."""

    def __init__(self, q: float, n_p: int, n_q: int, interval_alpha: float, epsilon: float,
                 delta: float) -> None:
        self.n_p, self.a, self.epsilon, self.delta = n_p, interval_alpha, epsilon, delta
        kq = _window(n_q, q)
        if kq[0] < 64:
            kq = np.arange(0, kq[-1] + 1)
        self.kq = kq
        self.q_hi = _smooth(_cp_upper, kq, n_q, interval_alpha)
        self.cdf = stats.binom.cdf(kq, n_q, q)
        # Clopper-Pearson lower ends by count, shared by the calls of a bisection (their windows
        # overlap): betaincinv dominated the cost of a power statement.
        self._lo_cache: dict[int, float] = {}
        # ln C(n_p, k) on the counts [_logc_start, _logc_start + _logc.size), likewise shared (the
        # three log-gamma calls per count were a fifth of a power statement); elementwise, so the
        # pmf is the same as computed afresh on each window.
        self._logc_start = 0
        self._logc = np.empty(0)

    def _log_coef(self, kp: np.ndarray) -> np.ndarray:
        """:func:`_log_binom_coef` ``(kp, n_p)`` for a window of consecutive counts, cached (a
        window overlapping the cached counts extends them, a disjoint one replaces them)."""
        a, b = int(kp[0]), int(kp[-1]) + 1
        s, e = self._logc_start, self._logc_start + self._logc.size
        if b <= s or a >= e:  # disjoint (the bisection's first steps): start afresh
            self._logc_start, self._logc = a, _log_binom_coef(kp, self.n_p)
        elif a < s or b > e:
            lo, hi = min(a, s), max(b, e)
            self._logc = np.concatenate([_log_binom_coef(np.arange(lo, s), self.n_p), self._logc,
                                         _log_binom_coef(np.arange(e, hi), self.n_p)])
            self._logc_start = lo
        return self._logc[a - self._logc_start:b - self._logc_start]

    def _p_lo(self, kp: np.ndarray) -> np.ndarray:
        """``_smooth(_cp_lower, kp, ...)`` with the grid of a long window aligned to multiples of
        16 (so consecutive windows share it) and every computed end cached."""
        if kp.size <= 4096:
            grid = kp
        else:
            # Stride: a power of 2 giving ~128 grid points (aligned, so windows share them); the
            # ends are smooth in k, interpolation error < 1e-9 relative (tests/test_power.py).
            stride = max(16, 1 << int(math.log2(max(kp.size // 128, 1))))
            aligned = np.arange(kp[0] + (-kp[0]) % stride, kp[-1] + 1, stride)
            # Dense first 64 counts only near 0, where the curvature is (as in _smooth).
            head = kp[:64] if kp[0] < 4096 else kp[:1]
            grid = np.unique(np.r_[head, aligned, kp[-1]])
        cache = self._lo_cache
        missing = np.array([k for k in grid.tolist() if k not in cache], dtype=np.int64)
        if missing.size:
            cache.update(zip(missing.tolist(), _cp_lower(missing, self.n_p, self.a).tolist()))
        vals = np.array([cache[k] for k in grid.tolist()])
        return vals if grid is kp else np.interp(kp, grid, vals)

    def __call__(self, p: float) -> float:
        kp = _window(self.n_p, p)
        pmf = _binom_pmf(kp, self.n_p, p, None if p <= 0.0 or p >= 1.0 else self._log_coef(kp))
        # An alarm needs q_hi(Kq) < need; q_hi increases with Kq.
        p_lo = self._p_lo(kp)
        # exp(-epsilon) underflows to 0 for huge claims (nothing is then detectable); exp(+eps)
        # would overflow.
        need = (p_lo - self.delta) * math.exp(-self.epsilon)
        idx = np.searchsorted(self.q_hi, need, side="left") - 1
        # idx = -1: no Kq in the window qualifies (the CDF below the window is < 1e-18);
        # idx = last: every Kq up to the window's end qualifies (the CDF there is 1 - 1e-18).
        cdf = np.where(idx >= 0, self.cdf[np.clip(idx, 0, self.kq.size - 1)], 0.0)
        cdf = np.where(idx >= self.kq.size - 1, 1.0, cdf)
        cdf = np.where(need <= 0, 0.0, cdf)
        return float(np.clip(np.sum(pmf * cdf), 0.0, 1.0))


def detection_probability(p: float, q: float, n_p: int, n_q: int, interval_alpha: float,
                          epsilon: float, delta: float = 0.0) -> float:
    """Exact probability that an event with rates ``p`` (numerator input) and ``q`` (other input)
    gives ``ln((p_lo - delta) / q_hi) > epsilon`` on ``n_p`` and ``n_q`` fresh runs, with
    one-sided Clopper-Pearson bounds at ``interval_alpha`` each."""
    n_p = check_int(n_p, "n_p", minimum=1)
    n_q = check_int(n_q, "n_q", minimum=1)
    interval_alpha = check_probability(interval_alpha, "interval_alpha")
    delta = check_delta(delta)
    if not (0.0 <= p <= 1.0 and 0.0 <= q <= 1.0):
        raise ValueError(f"p and q must be probabilities, got p={p}, q={q}")
    return _Detector(q, n_p, n_q, interval_alpha, epsilon, delta)(p)


def smallest_detectable_epsilon(q: float, n_p: int, n_q: int, interval_alpha: float,
                                epsilon: float, delta: float = 0.0,
                                power: float = DEFAULT_POWER) -> float:
    """Smallest ``epsilon'`` whose event with ``p = min(1, e^epsilon' q + delta)`` is detected
    (bound above ``epsilon``) with probability at least ``power``; ``inf`` if even ``p = 1`` is
    not (the event is too frequent on the neighbour, or the test split too small)."""
    power = check_probability(power, "power")
    q = min(max(q, 0.5 / n_q), 1.0)
    top = math.log(max((1.0 - delta) / q, 1.0))
    det = _Detector(q, n_p, n_q, interval_alpha, epsilon, delta)
    if det(1.0) < power:
        return math.inf
    lo, hi = epsilon, max(top, epsilon)

    def rate(e: float) -> float:  # min(1, e^e q + delta) without overflow for huge claims
        return 1.0 if e >= math.log((1.0 - delta) / q) else min(1.0, math.exp(e) * q + delta)

    if det(rate(lo)) >= power:
        return lo
    for _ in range(50):
        mid = 0.5 * (lo + hi)
        p = rate(mid)
        if det(p) >= power:
            hi = mid
        else:
            lo = mid
        if hi - lo < 1e-3 * max(1.0, hi):
            break
    return hi


@dataclass(frozen=True)
class PowerStatement:
    """The power statement attached to a "not violated" result."""

    detectable_epsilon: float
    power: float
    q: float
    n_test: int
    interval_alpha: float
    claimed_epsilon: float
    claimed_delta: float

    def describe(self) -> str:
        if math.isinf(self.detectable_epsilon):
            return (f"Not violated is weak evidence here: even a privacy loss that made the chosen "
                    f"event certain on one input (rate {self.q:.3g} on the other) would not be "
                    f"detected with probability {self.power:g} at {self.n_test} test runs per "
                    "input; increase samples")
        return (f"Power of this pass: a mechanism whose privacy loss on the chosen event (rate "
                f"{self.q:.3g} on the neighbour, estimated on the test split) were epsilon' >= "
                f"{self.detectable_epsilon:.4g} would have been reported violated with "
                f"probability >= {self.power:g} at this budget ({self.n_test} test runs per input). "
                "It says nothing about larger losses on events the audit did not choose; "
                "'not violated' is not a proof of privacy")

    def to_dict(self) -> dict[str, Any]:
        d = self.detectable_epsilon
        return {"detectable_epsilon": d if math.isfinite(d) else "inf", "power": self.power,
                "event_rate_on_neighbour": self.q, "test_runs_per_input": self.n_test,
                "per_interval_alpha": self.interval_alpha,
                "method": ("exact binomial detection probability of the chosen event, bisection; the "
                           "event's rate on the neighbour is the test-split estimate (plug-in)"),
                "statement": self.describe()}


def power_statement(q_count: int, n_test: int, interval_alpha: float, epsilon: float,
                    delta: float, power: float = DEFAULT_POWER) -> PowerStatement:
    """The statement for an event counted ``q_count`` times in ``n_test`` test runs on the
    neighbour (the denominator input)."""
    q = q_count / n_test
    d = smallest_detectable_epsilon(q, n_test, n_test, interval_alpha, epsilon, delta, power)
    return PowerStatement(d, power, q, n_test, interval_alpha, epsilon, delta)
