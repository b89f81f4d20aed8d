"""Per-cell unit tests of the exact joint test's bound (each cell's bound on its own).

The module bounds ``sup_{q in cell} P_{p(q), q}[T(X, Y) >= t_obs]`` on cells of the nuisance
parameter, ``p(q) = min(1, e^eps q + delta)``. Here the same probability is computed by brute
force, independently of the module: the Clopper-Pearson ends of the statistic are roots of
mpmath's regularized incomplete beta function at 40 digits (small n), or scipy.stats.beta's
quantiles (large n); the rejection region ``{T >= t_obs}`` is enumerated pair by pair and its
probability summed with binomial pmfs. Ties: a pair whose ``T`` is within 1e-9 of ``t_obs`` (other
than the observed pair itself, which the region must contain) is counted in ``upper`` and not in
``lower``, so the module's bound must be at least ``lower`` (it is an upper bound, every step
rounded up) and, on a cell of zero width with blocks of one ``y`` (small n: the module's sum is
then the exact sum), at most ``upper`` plus the module's stated allowances: rounding
(``ROUND_REL`` relative, ``ROUND_ABS`` absolute), ``GROUP_SLACK`` of the level per group of
``GROUP`` blocks summed at the group's first block (where the summand barely varies), plus 1e-13
for float sums.
"""

from __future__ import annotations

import functools
import math

import mpmath
import numpy as np
import pytest
from scipy import stats

from dpaudit.blackbox.joint_test import GROUP, GROUP_SLACK, ROUND_ABS, ROUND_REL, JointTest

mpmath.mp.dps = 40


@functools.lru_cache(maxsize=None)
def _cp_mpmath(n: int, a: float) -> tuple[np.ndarray, np.ndarray]:
    """One-sided Clopper-Pearson ends at level ``a``: ``L(x)`` solves ``I_L(x, n - x + 1) = a``,
    ``U(y)`` solves ``I_U(y + 1, n - y) = 1 - a`` (L(0) = 0, U(n) = 1), by bisection."""
    def root(fun):
        lo, hi = mpmath.mpf(0), mpmath.mpf(1)
        for _ in range(64):  # width 2^-64: far below the 1e-9 tie margin
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if fun(mid) < 0 else (lo, mid)
        return float((lo + hi) / 2)

    lower = [0.0] + [root(lambda u, x=x: mpmath.betainc(x, n - x + 1, 0, u, regularized=True)
                          - a) for x in range(1, n + 1)]
    upper = [root(lambda u, y=y: mpmath.betainc(y + 1, n - y, 0, u, regularized=True)
                  - (1 - a)) for y in range(n)] + [1.0]
    return np.array(lower), np.array(upper)


def _cp_scipy(n: int, a: float) -> tuple[np.ndarray, np.ndarray]:
    k = np.arange(n + 1)
    lower = np.where(k > 0, stats.beta.ppf(a, np.maximum(k, 1), n - k + 1), 0.0)
    upper = np.where(k < n, stats.beta.isf(a, k + 1, np.maximum(n - k, 1)), 1.0)
    return lower, upper


def _brute(jt: JointTest, lower_cp, upper_cp, p: float, q: float) -> tuple[float, float]:
    """(lower, upper) brute-force values of ``P_{p, q}[T >= t_obs]`` (ties as in the docstring)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(lower_cp[:, None] > jt.delta,
                     np.log((lower_cp[:, None] - jt.delta) / upper_cp[None, :]), -np.inf)
    t_obs = t[jt.x, jt.y]
    sure = t >= t_obs + 1e-9
    sure[jt.x, jt.y] = True
    maybe = t >= t_obs - 1e-9
    px = stats.binom.pmf(np.arange(jt.n_p + 1), jt.n_p, p)
    py = stats.binom.pmf(np.arange(jt.n_q + 1), jt.n_q, q)
    return float(px @ sure @ py), float(px @ maybe @ py)


SMALL = [  # (x, n_p, y, n_q, delta, alpha)
    (9, 12, 2, 12, 0.0, 0.05), (7, 10, 3, 12, 0.05, 0.1), (12, 12, 0, 12, 0.0, 0.2),
    (5, 8, 1, 11, 0.01, 0.05)]


@pytest.mark.parametrize("x,n_p,y,n_q,delta,alpha", SMALL)
def test_cell_bound_is_the_exact_probability_on_a_point_and_never_below_it(
        x, n_p, y, n_q, delta, alpha):
    jt = JointTest(x, n_p, y, n_q, delta, alpha)
    lower_cp, _ = _cp_mpmath(n_p, jt.a)
    _, upper_cp = _cp_mpmath(n_q, jt.a)
    # the statistic agrees with its independent computation
    assert jt.t_obs == pytest.approx(math.log((lower_cp[x] - delta) / upper_cp[y]), abs=1e-10)
    groups = jt._block_grid()[2] // GROUP
    slack = groups * GROUP_SLACK * (alpha - jt.gamma)
    for eps in (0.0, 0.4, max(jt.t_obs, 0.0), 1.5):
        qs = np.r_[np.geomspace(1e-4, 0.05, 8), np.linspace(0.06, 0.95, 15)]
        qs = qs[qs * math.exp(eps) + delta <= 1.0]
        got = jt.cell_bounds(qs, qs, eps)
        for q, g in zip(qs, got):
            lo, hi = _brute(jt, lower_cp, upper_cp, min(1.0, math.exp(eps) * q + delta), q)
            assert g >= lo, (eps, q, g, lo)  # conservative: never below the exact value
            assert g <= hi * (1 + ROUND_REL) + ROUND_ABS + slack + 1e-13, (eps, q, g, hi)


@pytest.mark.parametrize("x,n_p,y,n_q,delta,alpha", SMALL[:2])
def test_cell_bound_covers_the_whole_cell_and_the_pvalue_covers_the_nuisance_set(
        x, n_p, y, n_q, delta, alpha):
    jt = JointTest(x, n_p, y, n_q, delta, alpha)
    lower_cp, _ = _cp_mpmath(n_p, jt.a)
    _, upper_cp = _cp_mpmath(n_q, jt.a)
    eps = 0.3
    edges = np.linspace(0.02, 0.6, 9)
    got = jt.cell_bounds(edges[:-1], edges[1:], eps)
    for (q0, q1), g in zip(zip(edges[:-1], edges[1:]), got):
        inside = max(_brute(jt, lower_cp, upper_cp, math.exp(eps) * q + delta, q)[0]
                     for q in np.linspace(q0, q1, 25))
        assert g >= inside
    # Berger-Boos: the nuisance set is the two-sided (1 - gamma) Clopper-Pearson interval of q
    g2 = jt.gamma / 2
    ends = (float(stats.beta.ppf(g2, y, n_q - y + 1)) if y > 0 else 0.0,
            float(stats.beta.isf(g2, y + 1, n_q - y)) if y < n_q else 1.0)
    assert jt.q_range == pytest.approx(ends, rel=1e-9, abs=1e-15)
    # the p-value bound is at least gamma + the exact sup over the nuisance set (on a grid)
    for e in (0.0, 0.3, 0.8):
        qs = np.linspace(ends[0], ends[1], 60)
        qs = qs[qs * math.exp(e) + delta <= 1.0]
        exact = max(_brute(jt, lower_cp, upper_cp, math.exp(e) * q + delta, q)[0] for q in qs)
        assert jt.pvalue_upper(e) >= exact + jt.gamma


def test_cell_bound_with_blocks_at_large_n_is_above_the_exact_sum_and_close_to_it():
    # n = 20,000: blocks of sd/6 consecutive y (here 7). The exact sum over all 20,001 values of
    # y (scipy.stats.beta quantiles for the ends, binomial pmfs) is below the module's bound and
    # within 25% of it near the level (alpha = 0.01): the blocks' looseness (each block summed at
    # its smallest f, about half a block's shift of y), measured 19-21% at p-values 0.003-0.004,
    # 16-18% at 0.009-0.013 and 13-15% at 0.03-0.04 here (28% further out, at 1.6e-4).
    n = 20_000
    jt = JointTest(6_000, n, 2_250, n, 0.0, 0.01)
    lower_cp, upper_cp = _cp_scipy(n, jt.a)
    t_obs = math.log(lower_cp[jt.x] / upper_cp[jt.y])
    assert jt.t_obs == pytest.approx(t_obs, abs=1e-9)
    # the region {T >= t_obs} as x >= f(y), from the independent ends (lower_cp increases)
    f = np.searchsorted(lower_cp, math.exp(t_obs) * upper_cp * (1 - 1e-9), side="left")
    q_lo, q_hi = jt.q_range
    for eps, q in [(0.92, q_lo), (0.93, 0.5 * (q_lo + q_hi)), (0.93, q_hi), (0.94, q_lo)]:
        sf = np.where(f > n, 0.0, stats.binom.sf(f - 1, n, math.exp(eps) * q))
        exact = float(stats.binom.pmf(np.arange(n + 1), n, q) @ sf)
        got = float(jt.cell_bounds(np.array([q]), np.array([q]), eps)[0])
        assert exact <= got <= exact * 1.25 + 1e-12, (eps, q, exact, got)


def test_binomial_tails_are_accurate_far_below_the_rounding_allowance_at_a_million_runs():
    """The cell bounds' rounding allowance (``ROUND_REL`` relative, ``ROUND_ABS`` absolute) must
    cover the float error of the binomial tails they sum. At n = 10^6 scipy.special's cephes
    ``bdtrc`` is off by up to 3.3e-9 relative (review of this module), far above 1e-9: the module
    uses Boost's tails instead. Checked here against exact sums at 40 digits (mpmath), upper tails
    1-6 standard deviations out and one lower tail; the margin 1e-11 relative is 100 times below
    ``ROUND_REL`` and 100 times above Boost's documented ~1e-13."""
    import mpmath

    from dpaudit.blackbox.joint_test import _binom_cdf, _binom_sf

    mpmath.mp.dps = 40
    n = 1_000_000
    for q in (0.05, 0.3):
        mq = mpmath.mpf(q)  # the float q exactly, and 1 - q exactly (not 1 - q rounded)
        r = mq / (1 - mq)
        sd = math.sqrt(n * q * (1 - q))
        for z in (1.0, 3.0, 6.0):
            k = int(n * q + z * sd)
            # P[X > k]: terms from k + 1 upwards by the pmf's ratio, until negligible.
            t = mpmath.binomial(n, k + 1) * mq ** (k + 1) * (1 - mq) ** (n - k - 1)
            total, j = mpmath.mpf(0), k + 1
            while t > total * mpmath.mpf(10) ** -30 or j == k + 1:
                total += t
                t *= mpmath.mpf(n - j) / (j + 1) * r
                j += 1
            got = float(_binom_sf(np.array([k]), n, np.array([q]))[0])
            assert abs(got - float(total)) <= 1e-11 * float(total), (q, z, got, float(total))
            assert ROUND_REL >= 100 * 1e-11
        # a lower tail, P[X <= k] 3 sd below the mean
        k = int(n * q - 3 * sd)
        t = mpmath.binomial(n, k) * mq ** k * (1 - mq) ** (n - k)
        total, j = mpmath.mpf(0), k
        while t > total * mpmath.mpf(10) ** -30 or j == k:
            total += t
            t *= mpmath.mpf(j) / (n - j + 1) / r
            j -= 1
        got = float(_binom_cdf(np.array([k]), n, np.array([q]))[0])
        assert abs(got - float(total)) <= 1e-11 * float(total), (q, got, float(total))
