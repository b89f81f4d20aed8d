"""Each component of a declared-law test has power of its own (dpaudit.greybox.law_tests).

For every component (linear-Gaussian: mean, whitened total variance, variance along a pair's
direction, per-coordinate variance, movement in the law's null space, shape along a pair's
direction, shape of the pooled whitened coordinates; product-Laplace: scale, distribution;
discrete: support, outcome probability; any law: non-finite outputs) a wrong law is built that
is right in what the other components test and wrong in what this one tests, and the test
asserts that this component rejects it (and, where the design makes them blind, that the others
do not). A mutant of law_tests.py that takes one component's power away is killed here
(scripts/mutants.py, the law-test block).

Every case runs at level alpha = 0.01 with seed 0. The margins: each target departure is set at
5 to 10 standard deviations of its statistic (computed in each comment), so the target rejects
with probability > 0.999; a component the design leaves exactly at its null rejects with
probability at most its Bonferroni level, and one left near it (a shift of a fraction of a
standard deviation) barely more. Measured by rerunning each statistical test at seeds 0..39
(same sizes): every target rejected at all 40 seeds, and every test passed at all 40 except the
support test at seed 36, where a declared outcome's count is 2.95 standard deviations off (a ~1 %
event for its four binomial tests at their level). Seed 0 was fixed before these reruns; the
rank-0 and non-finite tests are deterministic.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import dpaudit
from dpaudit.greybox.law_tests import check_declared_law

ALPHA = 0.01
H = math.sqrt(3.0)  # U(-H, H) has variance 1, fourth moment 9/5 < 3: not Gaussian, light-tailed


#: Each component kind and how its description starts (law_tests' wording).
KINDS = {"mean": "mean (", "total": "whitened total variance",
         "direction": "variance along the discriminating direction",
         "coordinate": "variance of coordinate", "null": "movement along a direction",
         "projection": "shape along the discriminating direction",
         "pooled": "shape of the whitened coordinates", "scale": "scale of coordinate",
         "distribution": "distribution (", "support": "outcome ",
         "probability": "probability of outcome", "finite": "output not finite"}


def _kind(c) -> str:
    (kind,) = [k for k, head in KINDS.items() if c.what.startswith(head)]
    return kind


def _rejecting(res) -> set[str]:
    return {_kind(c) for c in res.rejecting}


def _smallest(res, kind: str) -> float:
    ps = [c.p_value for c in res.components if _kind(c) == kind]
    assert ps, f"no {kind} component"
    return min(ps)


def _iso(sigma: float = 1.0):
    return dpaudit.exact.LinearGaussian(mean=lambda x: np.asarray(x, float), sigma=sigma)


def _gauss(S):
    L = np.linalg.cholesky(S)
    return lambda x, n, rng: np.asarray(x) + rng.standard_normal((n, len(S))) @ L.T


def _check(law, mech, inputs, runs, pairs=((0, 1),)):
    return check_declared_law(law, mech, inputs, alpha=ALPHA, runs=runs, seed=0,
                              pairs=list(pairs))


# ---------------------------------------------------------------- linear-Gaussian laws


def test_only_the_mean_test_sees_opposite_shifts_off_the_pairs_direction() -> None:
    # Declared N(0, I_3); the code shifts coordinates 1 and 2 by +d and -d, d = 5 / sqrt(n):
    # N ||xbar_W||^2 ~ ncx2(3, 2 n d^2 = 50), mean 53 against the 0.01/18 quantile of chi2(3)
    # (~ 17.5): rejected. The shifts are off the pair's direction e_0; they add d^2 = 25 / n to
    # two coordinates' variances (0.18 standard deviations of chi2(n)); and opposite shifts move
    # the pooled CDF only to second order, (Phi(x - d) + Phi(x + d)) / 2 - Phi(x) ~ d^2 Phi''/2.
    n = 20_000
    shift = 5.0 / math.sqrt(n) * np.array([0.0, 1.0, -1.0])
    mech = lambda x, n, rng: np.asarray(x) + shift + rng.standard_normal((n, 3))  # noqa: E731
    res = _check(_iso(), mech, [np.eye(3)[0], np.zeros(3)], n)
    assert _smallest(res, "mean") <= res.component_alpha
    assert _rejecting(res) == {"mean"}


def test_only_the_whitened_total_sees_a_correlation_error_with_right_variances() -> None:
    # Coordinate 0 independent (the pair's direction); coordinates 1..15 equicorrelated,
    # rho = 0.5 declared, 0.49 true. Every coordinate's variance is 1 in both (diagonal exact),
    # the pair's direction e_0 is exact, the mean is exact. Whitened, 14 coordinates have variance
    # (1 - 0.49) / (1 - 0.5) = 1.02 and one (1 + 14 * 0.49) / (1 + 14 * 0.5) = 0.9825: the total
    # is 1.0164 r, 6.6 standard deviations of chi2(n r) above r. (The pooled shape test sees the
    # 1 % scale change too, rarely: it is not asserted either way.)
    def equi(rho):
        S = np.eye(16)
        S[1:, 1:] = rho
        np.fill_diagonal(S, 1.0)
        return S
    law = dpaudit.exact.LinearGaussian(mean=lambda x: np.asarray(x, float), covariance=equi(0.5))
    res = _check(law, _gauss(equi(0.49)), [np.eye(16)[0], np.zeros(16)], 20_000)
    assert _smallest(res, "total") <= res.component_alpha
    assert _rejecting(res) - {"pooled"} == {"total"}


def test_only_the_direction_test_sees_a_variance_error_along_the_pairs_direction() -> None:
    # Declared N(0, I_2); true covariance [[1, e], [e, 1]], e = 9 / sqrt(n): each coordinate has
    # variance 1 and the total is exactly 2, but along the pair's direction (1, 1) / sqrt 2 (the
    # direction the exact epsilon rests on) the variance is 1 + e, 6.4 standard deviations of
    # chi2(n). (The projection's shape test sees the scale change too, sometimes: not asserted.)
    n = 40_000
    e = 9.0 / math.sqrt(n)
    res = _check(_iso(), _gauss(np.array([[1.0, e], [e, 1.0]])), [np.ones(2), np.zeros(2)], n)
    assert _smallest(res, "direction") <= res.component_alpha
    assert _rejecting(res) - {"projection"} == {"direction"}


def test_only_the_coordinate_tests_see_variances_that_trade_off() -> None:
    # Declared N(0, I_3); true diag(1, 1.08, 0.92): total exact (3), the pair's direction e_0
    # exact, but coordinates 1 and 2 are 8 % off, 8 standard deviations of chi2(n) each. Pooled,
    # the two scale errors cancel to first order in the CDF.
    res = _check(_iso(), _gauss(np.diag([1.0, 1.08, 0.92])), [np.eye(3)[0], np.zeros(3)], 20_000)
    assert _smallest(res, "coordinate") <= res.component_alpha
    assert _rejecting(res) == {"coordinate"}
    assert {c.what for c in res.rejecting} == {"variance of coordinate 1",
                                               "variance of coordinate 2"}


def test_only_the_null_space_test_sees_noise_where_the_law_gives_none() -> None:
    # Declared covariance diag(1, 0): the second coordinate must never move. The code adds noise
    # of standard deviation 1e-6 there, invisible to every whitened statistic (they live on the
    # range of the covariance), but not to the null-space check.
    law = dpaudit.exact.LinearGaussian(mean=lambda x: np.asarray(x, float),
                                       covariance=np.diag([1.0, 0.0]))
    mech = lambda x, n, rng: np.asarray(x) + rng.standard_normal((n, 2)) * [1.0, 1e-6]  # noqa
    res = _check(law, mech, [np.eye(2)[0], np.zeros(2)], 2000)
    assert _smallest(res, "null") == 0.0
    assert _rejecting(res) == {"null"}


def test_only_the_pooled_shape_test_sees_a_non_gaussian_coordinate_off_the_direction() -> None:
    # Declared N(0, I_2); coordinate 1 is U(-sqrt 3, sqrt 3): its mean and variance are right,
    # its fourth moment is lighter (so no variance test is inflated), it is off the pair's
    # direction e_0 (the projection is exactly N(0, 1)), and its CDF is 0.053 from Phi, so the
    # pooled CDF is 0.026 away against a critical distance of ~0.009 at 2n = 40,000 values.
    mech = lambda x, n, rng: np.asarray(x) + np.column_stack(  # noqa: E731
        [rng.standard_normal(n), rng.uniform(-H, H, n)])
    res = _check(_iso(), mech, [np.eye(2)[0], np.zeros(2)], 20_000)
    assert _smallest(res, "pooled") <= res.component_alpha
    assert _rejecting(res) == {"pooled"}


def test_only_the_projection_shape_test_sees_a_non_gaussian_pairs_direction() -> None:
    # 64 coordinates; the pair's direction e_0 is U(-sqrt 3, sqrt 3), the other 63 N(0, 1). Along
    # the direction the CDF is 0.053 from Phi against a critical distance of ~0.029 at n = 5000;
    # pooled over 64 coordinates the distance is 0.053 / 64 against ~0.0036: only the projection,
    # which keeps the full power of n, sees it. Moments are right (variance 1, lighter tails).
    p, n = 64, 5000
    mech = lambda x, n, rng: np.asarray(x) + np.column_stack(  # noqa: E731
        [rng.uniform(-H, H, n), rng.standard_normal((n, p - 1))])
    res = _check(_iso(), mech, [np.eye(p)[0], np.zeros(p)], n)
    assert _smallest(res, "projection") <= res.component_alpha
    assert _rejecting(res) == {"projection"}


def test_a_non_finite_output_rejects_a_gaussian_or_laplace_law_and_is_never_a_nan_p() -> None:
    # One run in a thousand returns NaN: a silent NaN p-value would never compare <= alpha and
    # the law would pass. It must reject instead, and every p-value must be a number.
    def mech(x, n, rng):
        out = np.asarray(x) + rng.standard_normal((n, 2))
        out[::1000, 1] = np.nan
        return out
    lap = dpaudit.exact.ProductLaplace(mean=lambda x: np.asarray(x, float), scale=1.0)
    for law in (_iso(), lap):
        res = _check(law, mech, [np.eye(2)[0], np.zeros(2)], 2000)
        assert res.rejected and _rejecting(res) == {"finite"}
        assert all(np.isfinite(c.p_value) for c in res.components)
        assert "not finite" in res.detail()


def test_a_law_with_no_noise_at_all_is_tested_by_its_null_space_without_nan() -> None:
    # Covariance 0 (rank 0): a deterministic release. Nothing is whitened, so the only test is
    # that no run moves; before, the mean and total tests ran on chi2(0) and returned NaN.
    law = dpaudit.exact.LinearGaussian(mean=lambda x: np.asarray(x, float),
                                       covariance=np.zeros((2, 2)))
    fixed = _check(law, lambda x, n, rng: np.tile(np.asarray(x, float), (n, 1)),
                   [np.eye(2)[0], np.zeros(2)], 50)
    assert not fixed.rejected and not fixed.components
    moving = _check(law, lambda x, n, rng: np.asarray(x) + rng.standard_normal((n, 2)),
                    [np.eye(2)[0], np.zeros(2)], 50)
    assert _rejecting(moving) == {"null"}
    assert all(np.isfinite(c.p_value) for c in fixed.components + moving.components)


# ---------------------------------------------------------------- product-Laplace laws


def test_the_scale_test_sees_a_laplace_scale_five_percent_off() -> None:
    # Lap(1.05) declared Lap(1): sum |X| / b ~ Gamma(n) has mean n and sd sqrt(n) under the law;
    # here its mean is 1.05 n, 7 standard deviations up at n = 20,000. (A scale error is also a
    # sup-distance of 0.009 for the distribution test, which may or may not see it.)
    law = dpaudit.exact.ProductLaplace(mean=lambda x: np.asarray(x, float), scale=1.0)
    mech = lambda x, n, rng: np.asarray(x) + rng.laplace(0.0, 1.05, (n, 1))  # noqa: E731
    res = _check(law, mech, [np.ones(1), np.zeros(1)], 20_000, pairs=())
    assert _smallest(res, "scale") <= res.component_alpha
    assert _rejecting(res) - {"distribution"} == {"scale"}


def test_only_the_distribution_test_sees_a_gaussian_with_the_laplace_mean_absolute_value() -> None:
    # N(0, pi / 2) declared Lap(1): E|X| = sqrt(pi / 2) sqrt(2 / pi) = 1 exactly, so the scale
    # test is at its null (with a smaller variance of |X|: 0.57 vs 1), while the CDFs are 0.042
    # apart in sup-distance (on a grid here, independently), against a critical distance of
    # ~0.013 at n = 20,000.
    x = np.linspace(-10, 10, 200001)
    gap = float(np.max(np.abs(stats.norm(scale=math.sqrt(math.pi / 2)).cdf(x)
                              - stats.laplace.cdf(x))))
    assert gap == pytest.approx(0.0419, abs=1e-4)
    law = dpaudit.exact.ProductLaplace(mean=lambda x: np.asarray(x, float), scale=1.0)
    mech = lambda x, n, rng: np.asarray(x) + rng.normal(0.0, math.sqrt(math.pi / 2), (n, 1))  # noqa
    res = _check(law, mech, [np.ones(1), np.zeros(1)], 20_000, pairs=())
    assert _smallest(res, "distribution") <= res.component_alpha
    assert _rejecting(res) == {"distribution"}


# ---------------------------------------------------------------- discrete laws


def test_only_the_support_test_sees_a_rare_outcome_outside_the_support() -> None:
    # Declared {x: 1/2, 1 - x: 1/2}; the code returns 2 with probability 0.002 (about 40 times in
    # 20,000 runs; never, with probability e^-40). The declared outcomes' frequencies drop to
    # 0.499 each, 0.28 standard deviations of their binomial tests: only the support check sees
    # the extra outcome.
    law = dpaudit.exact.DiscreteLaw(lambda x: {x: 0.5, 1 - x: 0.5})

    def mech(x, n, rng):
        return rng.choice([x, 1 - x, 2], p=[0.499, 0.499, 0.002], size=(n, 1))
    res = _check(law, mech, [0, 1], 20_000, pairs=())
    assert _smallest(res, "support") == 0.0
    assert _rejecting(res) == {"support"}


def test_the_probability_tests_see_an_outcome_two_points_off() -> None:
    # Declared P(x) = 0.5, the code uses 0.52: 5.7 standard deviations of the binomial count at
    # n = 20,000; the support is right.
    law = dpaudit.exact.DiscreteLaw(lambda x: {x: 0.5, 1 - x: 0.5})
    mech = lambda x, n, rng: np.where(rng.random(n) < 0.52, x, 1 - x)[:, None]  # noqa: E731
    res = _check(law, mech, [0, 1], 20_000, pairs=())
    assert _smallest(res, "probability") <= res.component_alpha
    assert _rejecting(res) == {"probability"}
