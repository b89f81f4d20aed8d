"""The exact joint test of dpaudit.blackbox.joint_test: its level, computed exactly, before use.

For small ``n`` every pair of counts ``(x, y)`` is enumerated, the bound is computed for each, and
the probability that the bound exceeds ``eps0`` is summed exactly (scipy's binomial pmf, an
independent computation) at points ``(p, q)`` on the boundary of the null,
``p = min(1, e^eps0 q + delta)``, over a grid of the nuisance parameter ``q``. A valid
``(1 - alpha)`` bound keeps this at or below ``alpha`` everywhere (no sampling: no margin is
needed beyond float rounding, 1e-9). The same enumeration shows the point of the test: its exact
size is much closer to ``alpha`` than that of the product of two Clopper-Pearson intervals, and its
bound is never below that product's at the statistic's own level.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpaudit.blackbox.confidence import epsilon_lower_bound
from dpaudit.blackbox.joint_test import GAMMA_FRACTION, JointTest, joint_epsilon_lower_bound


def _bounds(n_p: int, n_q: int, delta: float, alpha: float, fn) -> np.ndarray:
    out = np.zeros((n_p + 1, n_q + 1))
    for x in range(1, n_p + 1):
        for y in range(n_q + 1):
            out[x, y] = fn(x, n_p, y, n_q, delta, alpha)
    return out


def _size(bounds: np.ndarray, eps0: float, delta: float, qs: np.ndarray) -> np.ndarray:
    """Exact P[bound > eps0] at (min(1, e^eps0 q + delta), q) for each q (independent binomial
    pmfs over the enumerated counts)."""
    n_p, n_q = bounds.shape[0] - 1, bounds.shape[1] - 1
    reject = (bounds > eps0).astype(float)
    out = []
    for q in qs:
        p = min(1.0, math.exp(eps0) * q + delta)
        px = stats.binom.pmf(np.arange(n_p + 1), n_p, p)
        py = stats.binom.pmf(np.arange(n_q + 1), n_q, q)
        out.append(float(px @ reject @ py))
    return np.array(out)


QS = np.r_[np.linspace(1e-4, 0.02, 20), np.linspace(0.02, 0.98, 97)]


def test_exact_level_at_the_boundary_of_the_null_small_n():
    # n_p = 10, n_q = 12 (unequal sizes), delta = 0.05, alpha = 0.1: all 143 count pairs.
    alpha, delta = 0.1, 0.05
    joint = _bounds(10, 12, delta, alpha, joint_epsilon_lower_bound)
    cp = _bounds(10, 12, delta, alpha, epsilon_lower_bound)
    for eps0 in (0.0, 0.3, 1.0):
        size = _size(joint, eps0, delta, QS[QS * math.exp(eps0) + delta <= 1.0])
        assert size.max() <= alpha + 1e-9, (eps0, size.max())
    # the joint test is the sharper one: larger bounds where the product certifies anything
    assert np.all(joint >= cp - 0.05)  # (the statistic's level is alpha - gamma, see below)
    assert joint[cp > 0].mean() > cp[cp > 0].mean()


def test_dominates_the_product_at_its_own_level():
    # The statistic is the Clopper-Pearson product at alpha - gamma: the bound is never below it.
    alpha = 0.05
    gamma = alpha * GAMMA_FRACTION
    for x, n, y, m, d in [(50, 200, 20, 200, 0.0), (488, 10_000, 0, 10_000, 0.0),
                          (900, 2_000, 300, 2_500, 0.01), (3, 50, 0, 50, 0.0)]:
        jt = JointTest(x, n, y, m, d, alpha)
        cp = epsilon_lower_bound(x, n, y, m, delta=d, alpha=alpha - gamma)
        assert jt.lower_bound() >= cp - 1e-12
        assert math.isclose(max(0.0, jt.t_obs), cp, rel_tol=1e-12, abs_tol=1e-12)


def test_the_observed_point_lies_in_its_own_rejection_region():
    # T(x, y) >= t_obs at the observed (x, y) itself: f(y) <= x (a rounding of t_obs through
    # exp(log(.)) once left it out, and the exact size at n = 30 reached 0.074 > alpha = 0.05).
    for n in (30, 1000, 10**6):
        for x, y in [(n, (7 * n) // 10), (n // 2, n // 3), (n // 10, n // 20), (n // 3, 0)]:
            jt = JointTest(x, n, y, n, 0.0, 0.05)
            if math.isfinite(jt.t_obs):
                assert jt._f_of(np.array([y]))[0] <= x, (n, x, y)


def test_no_information_gives_zero_and_bad_input_is_refused():
    assert joint_epsilon_lower_bound(0, 100, 50, 100) == 0.0
    assert joint_epsilon_lower_bound(10, 100, 50, 100) == 0.0
    with pytest.raises(ValueError, match="count_p"):
        joint_epsilon_lower_bound(101, 100, 5, 100)
    with pytest.raises(ValueError, match="alpha"):
        joint_epsilon_lower_bound(10, 100, 5, 100, alpha=1.5)


@pytest.mark.slow
@pytest.mark.parametrize("delta,alpha", [(0.0, 0.05), (0.01, 0.05), (0.0, 0.2)])
def test_exact_level_campaign_n30(delta, alpha):
    # All 31 x 31 count pairs at n = 30, eps0 over a grid, q over 117 points.
    joint = _bounds(30, 30, delta, alpha, joint_epsilon_lower_bound)
    cp = _bounds(30, 30, delta, alpha, epsilon_lower_bound)
    worst_joint, worst_cp = 0.0, 0.0
    for eps0 in (0.0, 0.2, 0.5, 1.0, 2.0):
        qs = QS[QS * math.exp(eps0) + delta <= 1.0]
        s = _size(joint, eps0, delta, qs)
        worst_joint = max(worst_joint, s.max())
        worst_cp = max(worst_cp, _size(cp, eps0, delta, qs).max())
    print(f"delta {delta} alpha {alpha}: exact size joint {worst_joint:.4f}, "
          f"Clopper-Pearson product {worst_cp:.4f}")
    assert worst_joint <= alpha + 1e-9
    assert worst_joint > worst_cp
