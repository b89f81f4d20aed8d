"""The exact joint test's level at the sizes the engine uses, by an independent exact p-value.

Enumerating every count pair (tests/test_joint_test_level.py, n = 300) is out of reach at the
engine's test sizes (15,000 runs per input at the quick budget, 180,000 at the standard one,
900,000 at ``audit()``'s default, 1.8 x 10^6 at the thorough one). The module's proof reduces the
level to one fact per observed pair ``(x, y)``: the bound ``b(x, y)`` it returns is a point where
the Berger-Boos p-value ``pi(b) = gamma + sup_{q in C(y)} P_{p(q), q}[T(X, Y) >= T(x, y)]`` is at
most ``alpha`` (``pi`` is non-decreasing in epsilon, so it then rejects every ``H0(eps)`` with
``eps <= b``, and ``P[pi(eps*) <= alpha] <= alpha`` at the true ``eps*``). That fact is checked
here at those sizes for count pairs drawn at the engine's typical rates (a common event, a rare
one, delta = 0 and delta > 0, the per-event levels of one and of three events), with ``pi``
computed independently of the module: Clopper-Pearson ends from scipy's beta quantiles, the
rejection region ``{x >= f(y)}`` by a vectorised bisection on ``x`` for every ``y`` within 12
standard deviations of ``Y`` (the mass outside counted as rejection), the binomial sums from
scipy, the supremum over ``q`` on 600 points of the nuisance set. Ties are resolved towards
rejection (a relative slack of 1e-12), so the value computed here is at least the exact one on
those points. Each p-value must stay at or below ``alpha`` (margin 1e-9 for the float sums).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpaudit.blackbox.joint_test import GAMMA_FRACTION, joint_epsilon_lower_bound


def _cp_lower(x: np.ndarray, n: int, a: float) -> np.ndarray:
    x = np.asarray(x, dtype=float)
    return np.where(x > 0, stats.beta.ppf(a, np.maximum(x, 1), n - x + 1), 0.0)


def _cp_upper(y: np.ndarray, n: int, a: float) -> np.ndarray:
    y = np.asarray(y, dtype=float)
    return np.where(y < n, stats.beta.ppf(1 - a, y + 1, np.maximum(n - y, 1)), 1.0)


def _first_rejecting_x(target: np.ndarray, n_p: int, a: float) -> np.ndarray:
    """Smallest ``x`` in ``[0, n_p + 1]`` with ``L_a(x) >= target`` (``n_p + 1``: none)."""
    lo = np.zeros(target.size, dtype=np.int64)  # L(lo) < target unless target <= 0
    hi = np.full(target.size, n_p + 1, dtype=np.int64)  # "L(n_p + 1) = inf"
    done = target <= 0
    hi[done] = 0
    while np.any(hi - lo > 1):
        mid = (lo + hi) // 2
        ok = _cp_lower(np.minimum(mid, n_p), n_p, a) >= target
        hi = np.where(ok & ~done, mid, hi)
        lo = np.where(~ok & ~done, mid, lo)
    return hi


def exact_pvalue(x: int, y: int, n: int, delta: float, alpha: float, eps: float) -> float:
    """``gamma + max_q P_{min(1, e^eps q + delta), q}[T(X, Y) >= T(x, y)]`` over 600 points of
    the nuisance set ``C(y)`` (module docstring), computed without the module."""
    gamma = alpha * GAMMA_FRACTION
    a = 1.0 - math.sqrt(1.0 - (alpha - gamma))  # each Clopper-Pearson end of the statistic
    lo_x, hi_y = float(_cp_lower(x, n, a)), float(_cp_upper(y, n, a))
    assert lo_x > delta
    t_obs = math.log((lo_x - delta) / hi_y)
    q0 = float(stats.beta.ppf(gamma / 2, y, n - y + 1)) if y > 0 else 0.0
    q1 = float(stats.beta.ppf(1 - gamma / 2, y + 1, n - y)) if y < n else 1.0
    th = np.linspace(math.asin(math.sqrt(q0)), math.asin(math.sqrt(q1)), 600)
    qs = np.sin(th) ** 2
    qs = qs[np.exp(eps) * qs + delta <= 1.0]
    sd = math.sqrt(n * qs.max() * (1 - qs.min())) + 1.0
    ys = np.arange(max(0, int(n * qs.min() - 12 * sd)), min(n, int(n * qs.max() + 12 * sd)) + 1)
    target = (delta + math.exp(t_obs) * _cp_upper(ys, n, a)) * (1 - 1e-12)
    f = _first_rejecting_x(target, n, a)
    worst = 0.0
    for q in qs:
        p = min(1.0, math.exp(eps) * q + delta)
        inside = stats.binom.pmf(ys, n, q)
        outside = max(0.0, 1.0 - float(inside.sum()))
        reject = np.where(f <= n, stats.binom.sf(f - 1, n, p), 0.0)
        worst = max(worst, float(np.dot(inside, reject)) + outside)
    return gamma + worst


#: (runs per input on the test split, event rates (p, q) on data0/data1, delta, per-event alpha):
#: a common event of Laplace(1) on (0, 1) (X > 0.5: 0.303 vs 0.112, ratio e), a rarer one
#: (X > 3: 0.041 vs 0.0092, below e^1.5), a delta > 0 claim's sparse tail, at the levels of one
#: event (0.05) and three (0.05 / 3), and a claim driver's small share (0.005).
CASES = [
    (15_000, 0.3033, 0.1116, 0.0, 0.05),
    (15_000, 0.0410, 0.0092, 0.0, 0.05 / 3),
    (15_000, 0.0020, 0.00005, 1e-4, 0.05 / 3),
    (180_000, 0.3033, 0.1116, 0.0, 0.005),
    (180_000, 0.0410, 0.0092, 0.0, 0.05),
    (180_000, 0.00012, 0.00001, 1e-5, 0.05 / 3),
    (900_000, 0.3033, 0.1116, 0.0, 0.05),
    (900_000, 0.0410, 0.0092, 0.0, 0.05 / 3),
    (900_000, 0.00005, 0.000004, 1e-5, 0.05),
    pytest.param(1_800_000, 0.3033, 0.1116, 0.0, 0.05 / 3, marks=pytest.mark.slow),
]


@pytest.mark.parametrize("n,p,q,delta,alpha", CASES)
def test_the_joint_bound_is_a_rejection_of_the_exact_test_at_engine_sizes(n, p, q, delta,
                                                                         alpha) -> None:
    # Two count pairs per case, drawn at the rates (seed fixed): the bound of each must be an
    # epsilon the exact test rejects. The margin 1e-9 covers float summation only; the module's
    # own rounding up is far larger, so a failure here is a bound above what its p-value allows.
    rng = np.random.default_rng(20261202)
    for _ in range(2):
        x, y = int(rng.binomial(n, p)), int(rng.binomial(n, q))
        b = joint_epsilon_lower_bound(x, n, y, n, delta=delta, alpha=alpha)
        if b <= 0:
            continue
        assert exact_pvalue(x, y, n, delta, alpha, b) <= alpha * (1 + 1e-9), (x, y, b)


def test_the_independent_pvalue_rejects_far_below_and_not_above_the_truth() -> None:
    # Its own sanity: for counts at the rates of an exactly e^1 ratio, H0(0) is rejected with a
    # p-value that is Berger and Boos's gamma (0.02 alpha) plus almost nothing, and H0(eps) for
    # eps well above ln(p/q) = 1 is not (p-value near 1).
    n, x, y = 180_000, int(0.3033 * 180_000), int(0.1116 * 180_000)
    assert exact_pvalue(x, y, n, 0.0, 0.05, 0.0) < 0.05 * GAMMA_FRACTION + 1e-6
    assert exact_pvalue(x, y, n, 0.0, 0.05, 1.1) > 0.5


def test_the_check_would_catch_a_bound_slightly_too_high() -> None:
    # Its power: at n = 180,000 the module's bound on the common event is 0.98619, where the
    # exact p-value is 0.037 (the module's blocks and cells are conservative); 0.005 higher the
    # exact p-value is 0.13, so a bound 0.005 above what the test allows fails the check above.
    n, x, y = 180_000, int(0.3033 * 180_000), int(0.1116 * 180_000)
    b = joint_epsilon_lower_bound(x, n, y, n, delta=0.0, alpha=0.05)
    assert exact_pvalue(x, y, n, 0.0, 0.05, b) <= 0.05
    assert exact_pvalue(x, y, n, 0.0, 0.05, b + 0.005) > 0.05
