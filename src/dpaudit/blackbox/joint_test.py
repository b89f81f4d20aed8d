"""Exact unconditional joint test of ``P[M(D) in S] <= e^eps P[M(D') in S] + delta`` (issue 36).

An audit observes one event's count ``X ~ Bin(n_p, p)`` on ``D`` and ``Y ~ Bin(n_q, q)`` on
``D'`` (independent). The product of two Clopper-Pearson intervals
(:func:`dpaudit.blackbox.confidence.epsilon_lower_bound`) turns them into a valid lower bound on
epsilon, but it spends the level twice: each interval may fail with probability ``a = 1 -
sqrt(1 - alpha)``, and the bound exceeds the truth only when *both* estimates err far enough in
opposite directions, which at the boundary of the null happens far less often than ``alpha``.
:func:`joint_epsilon_lower_bound` calibrates the same statistic exactly on the two counts jointly
(an unconditional test in the sense of Barnard, Biometrika 34, 1947, and Boschloo, Statistica
Neerlandica 24, 1970: the nuisance parameter is maximised over, not conditioned on), as
``../shared/AUDIT-METHOD.md`` section 3 allows.

The test. Statistic: the Clopper-Pearson product bound itself,
``T(x, y) = ln((L_a(x) - delta) / U_a(y))`` (``-inf`` when ``L_a(x) <= delta``), with ``L_a``,
``U_a`` the one-sided Clopper-Pearson ends at ``a = 1 - sqrt(1 - alpha)``. ``T`` is non-decreasing
in ``x`` and non-increasing in ``y``. The null ``H0(eps): p <= e^eps q + delta`` is tested with the
p-value ``pi(eps) = sup_{(p, q) in H0(eps)} P_{p,q}[T(X, Y) >= t_obs]``; the lower bound is
``max(T(x, y), sup{eps : pi_hat(eps) <= alpha})`` with ``pi_hat >= pi`` the computed upper bound
below.

Validity (the bound exceeds the true epsilon with probability at most ``alpha``). Let the
mechanism satisfy ``H0(eps*)`` at the true ``(p, q)``.
(i) ``pi`` is non-decreasing in eps: the nulls are nested. (ii) ``pi(eps*)`` is a valid p-value:
``P[pi(eps*) <= alpha] <= P[P_{p,q}[T >= t_obs] <= alpha] <= alpha`` (the survival function of
``T`` evaluated at ``T`` is super-uniform). (iii) If the returned bound exceeds ``eps*`` through
the joint part, then ``pi_hat(e) <= alpha`` for some ``e > eps*``, so ``pi(eps*) <= pi(e) <=
pi_hat(e) <= alpha``. (iv) If it exceeds ``eps*`` through ``T = t_obs > eps*``, then for every
``(p', q')`` in ``H0(eps*)`` ``P_{p',q'}[T >= t_obs] <= P_{p',q'}[T > eps*] <= alpha`` (the product
of Clopper-Pearson intervals is itself a valid bound: the two independent intervals hold jointly
with probability ``(1 - a)^2 = 1 - alpha``, and when both hold ``T <= eps*``), so again
``pi(eps*) <= alpha``. Both ways lie in the event ``{pi(eps*) <= alpha}`` of probability at most
``alpha``: the bound dominates the Clopper-Pearson product and is valid, with nothing asymptotic.

Computing ``pi_hat``. The null's supremum is on its boundary ``p = min(1, e^eps q + delta)``
(``P[T >= t]`` rises with ``p``). The rejection region is ``{x >= f(y)}`` with ``f`` non-decreasing
(``f(y)`` = smallest ``x`` with ``L_a(x) >= delta + e^t U_a(y)``, found by bisection on the same
``L_a``). ``q`` is parametrised by ``theta = arcsin(sqrt(q))`` on ``[0, pi/2]`` and cut into cells;
on a cell ``[q0, q1]``, ``P[X >= f(Y)] <= P_{p(q1), q0}[X >= f(Y)]`` (largest ``p``, smallest
``q``), and that sum over ``y`` is bounded by blocks of consecutive ``y``: on ``[y0, y1]``,
``P[X >= f(y)] <= P[X >= f(y0)]``; the mass of ``Y`` beyond the ``1e-12`` quantiles is counted as
rejection. Every step can only increase the computed value, so ``pi_hat >= pi``. Cells whose bound
exceeds ``alpha`` are split (down to 1/10 of a standard error of ``arcsin sqrt(Y/n_q)``); an
undecided cell at the finest level counts as "not rejected".

Level checks: ``tests/test_joint_test.py`` enumerates all count pairs at small ``n`` and computes
the exact rejection probability at the boundary of the null over a grid of ``q`` (it must stay at
or below ``alpha``), before the engine uses the test.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special, stats

from dpaudit._validation import check_delta, check_int, check_probability
from dpaudit.blackbox.confidence import Bonferroni, clopper_pearson_lower, clopper_pearson_upper

__all__ = ["joint_epsilon_lower_bound", "JointTest"]

#: Quantile of ``Y`` beyond which its mass is counted as rejection (conservative).
_TAIL = 1e-12
#: Blocks of consecutive ``y`` per cell.
_BLOCKS = 32
#: Initial cells in ``theta = arcsin(sqrt(q))`` across the nuisance set.
_CELLS = 16
#: Berger and Boos's gamma as a fraction of alpha: the nuisance set's error probability.
GAMMA_FRACTION = 0.02
#: Finest cell width, in standard errors of ``arcsin sqrt(Y / n_q)`` (``1 / (2 sqrt(n_q))``).
_FINEST = 0.1
#: Cells evaluated per p-value before it is declared "not rejected" (a cost cap; conservative).
_MAX_CELLS = 4000


class JointTest:
    """The exact joint test for one observed pair of counts (see the module docstring).

    ``pvalue_upper(eps)`` returns an upper bound on the p-value of ``H0(eps)`` that is exact
    enough to decide at ``alpha``; :meth:`lower_bound` inverts it.
    """

    def __init__(self, count_p: int, nobs_p: int, count_q: int, nobs_q: int, delta: float,
                 alpha: float) -> None:
        self.n_p = check_int(nobs_p, "nobs_p", minimum=1)
        self.n_q = check_int(nobs_q, "nobs_q", minimum=1)
        self.x = check_int(count_p, "count_p", minimum=0, maximum=self.n_p)
        self.y = check_int(count_q, "count_q", minimum=0, maximum=self.n_q)
        self.delta = check_delta(delta)
        self.alpha = check_probability(alpha, "alpha")
        #: Berger-Boos: the nuisance q is restricted to a (1 - gamma) Clopper-Pearson set.
        self.gamma = self.alpha * GAMMA_FRACTION
        self.a = Bonferroni(self.alpha - self.gamma).per_interval_alpha
        self.t_obs = self.statistic(self.x, self.y)
        g = self.gamma / 2
        q_lo = float(clopper_pearson_lower(self.y, self.n_q, g))
        q_hi = float(clopper_pearson_upper(self.y, self.n_q, g))
        self.theta = (math.asin(math.sqrt(q_lo)), math.asin(math.sqrt(q_hi)))
        self._cache: dict[int, int] = {}

    def statistic(self, x: int, y: int) -> float:
        """``T(x, y) = ln((L_a(x) - delta) / U_a(y))``, ``-inf`` when ``L_a(x) <= delta``."""
        lo = float(clopper_pearson_lower(x, self.n_p, self.a))
        hi = float(clopper_pearson_upper(y, self.n_q, self.a))
        return math.log((lo - self.delta) / hi) if lo > self.delta else -math.inf

    # -- the rejection region {x >= f(y)} of T >= t_obs ----------------------------------------
    def _lower(self, x: np.ndarray) -> np.ndarray:
        """``L_a(x)`` for integer ``x`` in ``[1, n_p]`` (the statistic's own function)."""
        xf = x.astype(np.float64)
        return special.betaincinv(xf, self.n_p - xf + 1.0, self.a)

    def _f_of(self, ys: np.ndarray) -> np.ndarray:
        """``f(y)``: smallest ``x`` in ``[1, n_p]`` with ``L_a(x) >= delta + e^t U_a(y)``, or
        ``n_p + 1`` when there is none. A start from the binomial quantile
        (``L_a(x) >= c`` iff ``P_c[X >= x] <= a``) is corrected with ``L_a`` itself, so ``f``
        agrees exactly with the statistic as computed."""
        uniq, inv = np.unique(ys, return_inverse=True)
        known = np.array([int(v) in self._cache for v in uniq], dtype=bool)
        out = np.empty(uniq.size, dtype=np.int64)
        out[known] = [self._cache[int(v)] for v in uniq[known]]
        if not np.all(known):
            out[~known] = self._compute_f(uniq[~known])
            for v, fv in zip(uniq[~known], out[~known]):
                self._cache[int(v)] = int(fv)
        return out[inv]

    def _compute_f(self, uniq: np.ndarray) -> np.ndarray:
        # The region {T >= t_obs} must contain the observed point itself, whose T was rounded
        # through exp(log(.)): a relative slack of 1e-9 (which only enlarges the region, so only
        # raises the p-value) absorbs the rounding.
        target = self.delta + math.exp(self.t_obs) * (1.0 - 1e-9) * np.asarray(
            clopper_pearson_upper(uniq, self.n_q, self.a), dtype=np.float64).reshape(-1)
        f = np.full(uniq.size, self.n_p + 1, dtype=np.int64)
        live = target < 1.0
        if np.any(live):
            t = target[live]
            g = np.asarray(stats.binom.isf(self.a, self.n_p, t), dtype=np.float64)
            g = np.clip(np.nan_to_num(g, nan=self.n_p) + 1, 1, self.n_p + 1).astype(np.int64)
            for _ in range(64):  # move up while L_a(g) < target, down while L_a(g - 1) >= target
                up = (g <= self.n_p) & (self._lower(np.minimum(g, self.n_p)) < t)
                down = (g >= 2) & (self._lower(np.maximum(g - 1, 1)) >= t)
                down &= ~up
                if not (np.any(up) or np.any(down)):
                    break
                g = g + up - down
            else:  # pragma: no cover - the quantile start is within a few steps
                raise RuntimeError("joint test: the rejection boundary did not converge")
            f[live] = g
        return f

    def _cell_bounds(self, q0: np.ndarray, q1: np.ndarray, eps: float) -> np.ndarray:
        """Upper bounds on ``sup P[X >= f(Y)]`` over each cell ``[q0, q1]`` of the boundary."""
        p1 = np.minimum(1.0, math.exp(eps) * q1 + self.delta)
        pos = q0 > 0
        lo = np.where(pos, stats.binom.ppf(_TAIL, self.n_q, np.where(pos, q0, 0.5)), 0)
        hi = np.where(pos, stats.binom.isf(_TAIL, self.n_q, np.where(pos, q0, 0.5)), 0)
        lo = np.clip(np.nan_to_num(lo), 0, self.n_q)
        hi = np.clip(np.nan_to_num(hi, nan=self.n_q), lo, self.n_q)
        frac = np.linspace(0.0, 1.0, _BLOCKS + 1)[None, :]
        edges = np.floor(lo[:, None] + frac * (hi - lo + 1)[:, None]).astype(np.int64)
        edges = np.maximum.accumulate(edges, axis=1)
        # P[Y <= edge - 1] (scipy.special.bdtr is the binomial CDF; 0 below the support)
        k = edges - 1
        cdf = np.where(k < 0, 0.0, special.bdtr(np.maximum(k, 0), self.n_q, q0[:, None]))
        mass = np.clip(np.diff(cdf, axis=1), 0.0, 1.0)
        outside = cdf[:, 0] + (1.0 - cdf[:, -1])
        f = self._f_of(edges[:, :-1].ravel()).reshape(edges.shape[0], _BLOCKS)
        # P[X >= f] = bdtrc(f - 1) (1 for f <= 0, 0 for f > n_p)
        sf = np.where(f > self.n_p, 0.0,
                      np.where(f <= 0, 1.0, special.bdtrc(np.clip(f - 1, 0, self.n_p), self.n_p,
                                                          p1[:, None])))
        return np.sum(mass * sf, axis=1) + outside

    def pvalue_upper(self, eps: float) -> float:
        """An upper bound on ``pi(eps)``, refined until it decides ``pi(eps) <= alpha``; when it
        cannot (the finest cells or the cost cap are reached) a value above ``alpha``."""
        if not math.isfinite(self.t_obs):
            return 1.0
        finest = _FINEST / (2.0 * math.sqrt(self.n_q))
        th = np.linspace(self.theta[0], self.theta[1], _CELLS + 1)
        cells = list(zip(th[:-1], th[1:]))
        worst, evaluated = 0.0, 0
        while cells:
            a0 = np.array([c[0] for c in cells])
            a1 = np.array([c[1] for c in cells])
            b = self._cell_bounds(np.sin(a0) ** 2, np.sin(a1) ** 2, eps)
            evaluated += len(cells)
            nxt = []
            level = self.alpha - self.gamma
            for (c0, c1), v in zip(cells, b):
                if v <= level:
                    worst = max(worst, v)
                elif c1 - c0 <= finest or evaluated > _MAX_CELLS:
                    return float(v) + self.gamma
                else:
                    s = np.linspace(c0, c1, 5)
                    nxt.extend(zip(s[:-1], s[1:]))
            cells = nxt
        return worst + self.gamma

    def lower_bound(self, evaluations: int = 12, tolerance: float = 1e-3) -> float:
        """``max(T, sup{eps : pvalue_upper(eps) <= alpha})``, clamped at 0.

        The crossing of ``pvalue_upper(eps) = alpha`` is bracketed and found by bisection to
        within ``tolerance`` of the distance from ``T``, or after ``evaluations`` p-values (the
        p-value of small counts is a step function, where interpolation stalls); the value
        returned is always a point where the computed
        p-value was at most ``alpha`` (or ``T`` itself), which is all the validity argument
        needs."""
        base = max(0.0, self.t_obs) if math.isfinite(self.t_obs) else 0.0
        if self.t_obs <= 0 or not math.isfinite(self.t_obs):
            return base
        log_alpha = math.log(self.alpha)

        def h(eps: float) -> float:
            return math.log(max(self.pvalue_upper(eps), 1e-300)) - log_alpha

        lo = base
        # an eps where the test should not reject: the plug-in log ratio at median-unbiased counts
        med = float(clopper_pearson_lower(self.x, self.n_p, 0.5))
        up = float(clopper_pearson_upper(self.y, self.n_q, 0.5))
        hi = math.log((med - self.delta) / up) if med > self.delta else lo
        hi = max(hi, lo + 1e-6)
        step = max(hi - lo, 1e-3)
        for _ in range(40):
            if h(hi) > 0:
                break
            lo, hi, step = hi, hi + step, 2 * step
        else:
            return lo
        for _ in range(evaluations):
            if hi - lo <= tolerance * max(hi - base, 1e-12):
                break
            mid = 0.5 * (lo + hi)
            if h(mid) <= 0:
                lo = mid
            else:
                hi = mid
        return lo


def joint_epsilon_lower_bound(count_p: int, nobs_p: int, count_q: int, nobs_q: int,
                              delta: float = 0.0, alpha: float = 0.05) -> float:
    """One-sided ``(1 - alpha)`` lower confidence bound on epsilon from one event's two counts,
    by the exact joint test of this module; never below
    :func:`~dpaudit.blackbox.confidence.epsilon_lower_bound` at the same ``alpha`` (it calibrates
    that bound's statistic exactly, see the module docstring for the proof).

    Parameters are those of :func:`~dpaudit.blackbox.confidence.epsilon_lower_bound`; the event
    must have been chosen independently of these counts, and the two counts must come from
    independent runs.
    """
    return JointTest(count_p, nobs_p, count_q, nobs_q, delta, alpha).lower_bound()
