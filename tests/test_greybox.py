"""Evidence drawn from the code: replay, derived laws, declared-law tests, noise sites.

Every expected value is derived here by hand (a few lines of numpy/scipy), never read back from
dpaudit's own output.
"""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from scipy import optimize, stats

import dpaudit
from dpaudit.greybox import DERIVED, NotDerivable, ReplayGenerator, derive_law, derive_pair
from dpaudit.greybox.law_tests import check_declared_law
from dpaudit.greybox.noise_sites import calibration_ratio, site_distances


def gaussian_epsilon_by_hand(mu: float, delta: float) -> float:
    """Balle & Wang (2018) Thm 8: the eps with Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)
    = delta, by root finding (scipy only)."""
    def f(eps: float) -> float:
        return (stats.norm.cdf(-eps / mu + mu / 2)
                - math.exp(eps) * stats.norm.cdf(-eps / mu - mu / 2) - delta)
    return optimize.brentq(f, 0.0, 50.0, xtol=1e-13)


# ---------------------------------------------------------------- replay


def test_a_recording_generator_draws_what_a_plain_generator_draws() -> None:
    g, plain = ReplayGenerator(11), np.random.Generator(np.random.PCG64(11))
    a = np.concatenate([g.normal(1.0, 2.0, size=3), g.standard_normal(2), g.laplace(0, 3, 2)])
    b = np.concatenate([plain.normal(1.0, 2.0, size=3), plain.standard_normal(2),
                        plain.laplace(0, 3, 2)])
    assert isinstance(g, np.random.Generator)
    np.testing.assert_array_equal(a, b)
    assert [d.method for d in g.draws] == ["normal", "standard_normal", "laplace"]
    assert [d.offset for d in g.draws] == [0, 3, 5]
    # The standardised draws are (value - loc) / scale.
    np.testing.assert_allclose(g.draws[0].z, (b[:3] - 1.0) / 2.0, rtol=1e-12)
    g.integers(0, 5)
    assert g.foreign == ["integers"]


# ---------------------------------------------------------------- derived laws


def test_the_derived_law_of_a_correlated_gaussian_release_is_its_map_and_covariance() -> None:
    # out = M x + B z: z ~ N(0, I_3) by hand; the replay must give mean M x and A = B.
    M = np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 2.0]])
    B = np.array([[0.5, 0.0, 0.0], [0.5, 0.3, 0.0], [0.0, 0.3, 0.7]])

    def mechanism(x, n, rng):
        z = rng.standard_normal((n, 3))
        return np.asarray(x) @ M.T + z @ B.T

    law = derive_law(mechanism, np.array([1.0, -2.0]))
    assert not isinstance(law, NotDerivable)
    np.testing.assert_allclose(law.mean, M @ [1.0, -2.0], atol=1e-12)
    np.testing.assert_allclose(law.A, B, atol=1e-12)
    pair = derive_pair(mechanism, np.array([1.0, 0.0]), np.array([-1.0, 0.0]))
    shift = M @ [2.0, 0.0]
    mu = math.sqrt(shift @ np.linalg.solve(B @ B.T, shift))
    assert pair.epsilon(1e-5).value == pytest.approx(gaussian_epsilon_by_hand(mu, 1e-5),
                                                     rel=1e-8)


def test_the_derived_law_of_an_additive_laplace_release_gives_the_pure_epsilon() -> None:
    # Two coordinates, scales 1 and 2, shift (1, 1): eps(0) = 1/1 + 1/2 by hand.
    def mechanism(x, n, rng):
        return np.asarray(x, dtype=float) + rng.laplace(0.0, [1.0, 2.0], size=(n, 2))

    pair = derive_pair(mechanism, np.array([1.0, 1.0]), np.array([0.0, 0.0]))
    assert pair.family == "laplace"
    assert pair.epsilon(0.0).value == pytest.approx(1.5, rel=1e-12)


@pytest.mark.parametrize("mechanism,words", [
    (lambda x, n, rng: np.clip(x + rng.normal(0, 1, size=(n, 1)), -1, 1), "not affine"),
    # python's random module is not a draw source dpaudit intercepts (numpy's global functions
    # are: tests/test_draw_sources.py)
    (lambda x, n, rng: x + np.array([[random.gauss(0, 1)] for _ in range(n)]),
     "does not intercept"),
    (lambda x, n, rng: x + rng.uniform(size=(n, 1)), "rng.uniform"),
    (lambda x, n, rng: x + rng.normal(size=(n, 1)) + rng.laplace(size=(n, 1)), "mixes"),
])
def test_a_release_whose_law_cannot_be_derived_says_why_in_one_sentence(mechanism, words):
    res = derive_law(mechanism, np.array([0.5]))
    assert isinstance(res, NotDerivable)
    assert words in res.reason and res.reason.count(". ") == 0


def test_a_noise_map_that_depends_on_the_data_is_not_derived() -> None:
    def mechanism(x, n, rng):  # the noise scale grows with the data: not one Gaussian pair law
        return x + (1 + abs(float(x[0]))) * rng.normal(size=(n, 1))
    res = derive_pair(mechanism, np.array([1.0]), np.array([0.0]))
    assert isinstance(res, NotDerivable) and "depends on the data" in res.reason


def test_the_law_derived_from_privatesum_agrees_with_the_hand_derived_jkt12_module() -> None:
    # The bundled PrivateSum (JKT12 Alg. 5) and its exact module's shift: w_1 moved by 2R shifts
    # released_node_count(1, T) independent nodes (papers/jkt12/exact.py, tree_mu).
    from dpaudit.mechanisms.private_sum import PrivateSum
    from dpaudit.papers.jkt12.exact import tree_mu

    for T in (4, 6, 8):
        mech = PrivateSum(dim=1, T=T, R=1.0, epsilon=1.0, delta=1e-5)
        w0, w1 = np.zeros((T, 1)), np.zeros((T, 1))
        w0[0, 0], w1[0, 0] = 1.0, -1.0
        pair = derive_pair(mech.sample, w0, w1)
        mu_hand = tree_mu(T, 2.0, mech.sigma)
        assert pair.epsilon(1e-5).value == pytest.approx(gaussian_epsilon_by_hand(mu_hand, 1e-5),
                                                         rel=1e-7)


# ---------------------------------------------------------------- declared-law tests


def _gauss_mech(sigma_true):
    def mechanism(x, n, rng):
        return np.asarray(x, dtype=float) + rng.normal(0.0, sigma_true, size=(n, 2))
    return mechanism


def test_a_true_linear_gaussian_law_is_not_rejected_and_a_wrong_variance_is() -> None:
    law = dpaudit.exact.LinearGaussian(mean=lambda x: x, sigma=1.0)
    inputs, pairs = [np.array([1.0, 0.0]), np.array([0.0, 0.0])], [(0, 1)]
    # Level 0.05: seed 0 chosen before looking; a true law is rejected with probability <= 0.05.
    ok = check_declared_law(law, _gauss_mech(1.0), inputs, alpha=0.05, runs=4000, seed=0,
                            pairs=pairs)
    assert not ok.rejected
    # True variance 1.1^2 = 1.21 vs 1: the power sentence's band must exclude 1.21 at this size;
    # the band is computed here from chi2 quantiles, independently.
    a = 0.05 / len(ok.components)
    hi = stats.chi2(4000).ppf(1 - a / 2) / stats.chi2(4000).ppf(0.2)
    assert hi < 1.21 and f"{hi:.4g}" in ok.power
    bad = check_declared_law(law, _gauss_mech(1.1), inputs, alpha=0.05, runs=4000, seed=0,
                             pairs=pairs)
    assert bad.rejected and "declared" in bad.detail() and "observed" in bad.detail()


def test_the_whitened_total_variance_p_value_is_the_chi2_law() -> None:
    law = dpaudit.exact.LinearGaussian(mean=lambda x: np.zeros(2), sigma=2.0)
    res = check_declared_law(law, lambda x, n, rng: np.full((n, 2), 1.0), [0], alpha=0.05,
                             runs=50, seed=0)
    # Every run at (1, 1), sigma 2: whitened sum of squares 50 * 2 * 0.25 = 25 ~ chi2(100).
    comp = next(c for c in res.components if c.what == "whitened total variance")
    assert comp.p_value == pytest.approx(2 * stats.chi2(100).cdf(25.0), rel=1e-9)


def test_a_declared_laplace_scale_and_a_declared_pmf_are_tested() -> None:
    lap = dpaudit.exact.ProductLaplace(mean=lambda x: [x], scale=1.0)
    mech = lambda scale: (lambda x, n, rng: x + rng.laplace(0.0, scale, size=(n, 1)))  # noqa: E731
    assert not check_declared_law(lap, mech(1.0), [0.0, 1.0], alpha=0.05, runs=5000,
                                  seed=1).rejected
    assert check_declared_law(lap, mech(1.3), [0.0, 1.0], alpha=0.05, runs=5000,
                              seed=1).rejected
    # Randomised response with p(truth) = 0.75 declared, the code uses 0.6.
    law = dpaudit.exact.DiscreteLaw(lambda x: {x: 0.75, 1 - x: 0.25})

    def rr(p):
        return lambda x, n, rng: np.where(rng.random(n) < p, x, 1 - x)[:, None]
    assert not check_declared_law(law, rr(0.75), [0, 1], alpha=0.05, runs=4000, seed=2).rejected
    res = check_declared_law(law, rr(0.6), [0, 1], alpha=0.05, runs=4000, seed=2)
    assert res.rejected
    outside = check_declared_law(law, lambda x, n, rng: np.full((n, 1), 2), [0], alpha=0.05,
                                 runs=20, seed=0)
    assert outside.rejected and "outside the declared support" in outside.detail()


def test_the_dkw_massart_p_value_is_computed_by_hand() -> None:
    lap = dpaudit.exact.ProductLaplace(mean=lambda x: [0.0], scale=1.0)
    res = check_declared_law(lap, lambda x, n, rng: np.zeros((n, 1)), [0], alpha=0.05, runs=100,
                             seed=0)
    # All runs at the median: F = 1/2 for all 100, D = 1/2, p = 2 exp(-2 * 100 / 4).
    comp = next(c for c in res.components if c.what.startswith("distribution"))
    assert comp.p_value == pytest.approx(2 * math.exp(-50.0), rel=1e-9)


# ---------------------------------------------------------------- noise sites


def _tree_release(variant: str, C: float = 1.0, sigma: float = 3.0):
    """Two-leaf tree, nodes: leaf 1, leaf 2, root; calibrated for a node moving by 2C."""
    def mechanism(g, n, rng):
        g = np.asarray(g, dtype=float)
        if variant != "noclip":
            g = np.clip(g, -C, C)
        s = sigma / 2 if variant == "addremove" else sigma
        leaf1 = g[0] + rng.normal(0.0, s, size=n)
        root = g[0] + g[1] + rng.normal(0.0, s, size=n)
        return np.stack([leaf1, root], axis=1)
    return mechanism


@pytest.mark.parametrize("variant,ratio", [("correct", 1.0), ("addremove", 2.0),
                                           ("noclip", 5.0)])
def test_what_reaches_each_noise_call_against_the_calibration(variant, ratio) -> None:
    # Pair g = (5, 0) vs (-5, 0) under replace-one: clipped, each node moves by 2C = 2; the
    # schedule (sigma 3 for contribution C = 1, doubled) assumes 2 at scale 3. addremove draws at
    # scale 1.5, so it assumes 1 (ratio 2); noclip moves each node by 10 (ratio 5).
    per_unit = calibration_ratio(dpaudit.noise.gaussian_tree(sigma=3.0, sensitivity=1.0, T=2),
                                 2.0)
    sites = site_distances(_tree_release(variant), [5.0, 0.0], [-5.0, 0.0], seed=0,
                           per_unit=per_unit)
    assert len(sites) == 2 and {s.draws for s in sites} == {1}
    assert max(s.ratio for s in sites) == pytest.approx(ratio, rel=1e-12)


def test_derived_evidence_is_labelled_in_a_claim_with_no_law() -> None:
    claim = dpaudit.Claim(
        id="test-greybox/no-law", statement="two-leaf tree", source=dpaudit.Source(title="t"),
        claimed=lambda p: (1.0, 1e-5), neighbours="replace-one", grid=[{"sigma": 20.0}],
        release=lambda p: _tree_release("correct", sigma=p["sigma"]),
        pairs=lambda p: [([5.0, 0.0], [-5.0, 0.0])],
        accountant=lambda p: dpaudit.noise.gaussian_tree(sigma=p["sigma"], sensitivity=1.0, T=2),
        samples=2000)
    result = dpaudit.audit_claim(claim, budget="quick")
    (p,) = result.points
    # Both nodes move by 2 against sigma 20: mu = sqrt(2) * 2 / 20, independent nodes (by hand).
    assert p.epsilon_exact == pytest.approx(gaussian_epsilon_by_hand(math.sqrt(2) / 10, 1e-5),
                                            rel=1e-8)
    assert p.evidence["exact_source"] == DERIVED
    assert p.evidence["evidence_origin"]["exact"].startswith("drawn from the code")
    assert result.verdict == "holds"


def test_batched_and_one_by_one_impulses_give_the_same_map() -> None:
    # Same release, noise drawn with a leading run axis (batched impulses) or as one flat vector
    # per call (no run axis: one call per impulse); the map is B = diag(1, 2) either way.
    def with_axis(x, n, rng):
        return x + rng.normal(0.0, [1.0, 2.0], size=(n, 2))

    def flat(x, n, rng):
        return np.stack([x + rng.normal(0.0, [1.0, 2.0]) for _ in range(n)])

    a, b = derive_law(with_axis, np.zeros(2)), derive_law(flat, np.zeros(2))
    np.testing.assert_allclose(a.A, np.diag([1.0, 2.0]), atol=1e-12)
    np.testing.assert_allclose(b.A, np.diag([1.0, 2.0]), atol=1e-12)
    assert a.replays == 7 and b.replays == 2 + 2 + 3  # batched vs record, zero, 2 impulses, 3


def test_a_release_that_mixes_its_runs_falls_back_to_one_call_per_impulse() -> None:
    # Adding the mean over the batch couples the runs: batched impulses would be wrong, the
    # batched random check sees it, and the one-by-one map (n = 1: identity) is used.
    def coupled(x, n, rng):
        z = rng.normal(size=(n, 1))
        return x + z + (z.mean(axis=0) if n > 1 else 0.0) * 5.0
    law = derive_law(coupled, np.zeros(1))
    np.testing.assert_allclose(law.A, [[1.0]], atol=1e-12)


def test_a_non_injective_image_of_laplace_draws_is_not_derived() -> None:
    # Two Laplace nodes summed into one output: the law is a convolution, not product Laplace.
    def mechanism(x, n, rng):
        return x + rng.laplace(size=(n, 1)) + rng.laplace(size=(n, 1))
    res = derive_pair(mechanism, np.array([1.0]), np.array([0.0]))
    assert isinstance(res, NotDerivable) and "non-injective" in res.reason


def test_a_rejected_declared_law_certifies_nothing_and_shares_the_family() -> None:
    # python's random module (not a draw source dpaudit intercepts): no law can be derived, so
    # the declared law is the only exact evidence.
    # It says sigma = 0.1 while the code draws sigma = 1: its epsilon on (1 vs 0) (mu = 10, eps
    # ~ 50) would refute the claim of 10, but the runs reject it (variance 1 vs 0.01), so it is
    # dropped; the code's true eps (mu = 1, ~4.2) is below 10: not violated.
    claim = dpaudit.Claim(
        id="test-greybox/wrong-law", statement="x + N(0, 1)", source=dpaudit.Source(title="t"),
        claimed=lambda p: (10.0, 1e-5), neighbours="add-remove", grid=[{}],
        release=lambda p: (lambda x, n, rng: x + np.array([[random.gauss(0.0, 1.0)]
                                                           for _ in range(n)])),
        pairs=lambda p: [(np.array([1.0]), np.array([0.0]))],
        # The data is the released statistic itself (a sum), not a list of records.
        neighbour_check=False,
        accountant=lambda p: dpaudit.noise.GaussianNoise(sigma=0.1, sensitivity=1.0),
        exact=lambda p: dpaudit.exact.LinearGaussian(mean=lambda x: x, sigma=0.1), samples=2000)
    result = dpaudit.audit_claim(claim, budget="quick")
    (p,) = result.points
    assert p.epsilon_exact is None and p.evidence["declared_exact_rejected"] > 10.0
    assert "exact_source" not in p.evidence
    assert p.evidence["evidence_origin"]["exact"].startswith("none: the declared law was rejected")
    assert p.evidence["declared_law"]["rejected"] is True
    # One empirical test and one law test: Bonferroni over two (alpha 0.05 / 2 each).
    assert p.evidence["declared_law"]["bonferroni"]["tests"] == 2
    assert p.evidence["empirical"]["bonferroni"]["per_test_alpha"] == pytest.approx(0.025)
    assert p.evidence["declared_law"]["component_alpha"] == pytest.approx(
        0.025 / p.evidence["declared_law"]["tests"])
    assert result.verdict == "inconclusive"


def test_a_value_passed_as_the_noise_calls_loc_is_what_reaches_it() -> None:
    # rng.normal(value, sigma): the value is the draw's loc. Unclipped sums 3 vs -3 at scale 1,
    # calibrated (Laplace-free Gaussian schedule sigma 1, contribution 1, replace-one) for 2.
    def mechanism(x, n, rng):
        return rng.normal(float(np.sum(x)), 1.0, size=(n, 1))
    sites = site_distances(mechanism, [3.0], [-3.0], seed=0,
                           per_unit=calibration_ratio(dpaudit.noise.GaussianNoise(1.0, 1.0), 2.0))
    assert [s.ratio for s in sites] == [pytest.approx(3.0, rel=1e-12)]


def test_a_multivariate_normal_draw_gives_its_covariance() -> None:
    # x + N(0, S) drawn with rng.multivariate_normal: the derived covariance is S (A A^T = S).
    S = np.array([[2.0, 0.6], [0.6, 1.0]])

    def mechanism(x, n, rng):
        return x + rng.multivariate_normal(np.zeros(2), S, size=n)
    law = derive_law(mechanism, np.zeros(2))
    np.testing.assert_allclose(law.A @ law.A.T, S, atol=1e-12)
    plain = np.random.Generator(np.random.PCG64(5)).multivariate_normal(np.zeros(2), S, size=3)
    np.testing.assert_allclose(ReplayGenerator(5).multivariate_normal(np.zeros(2), S, size=3),
                               plain, rtol=1e-12)


def test_the_law_derived_from_the_bundled_tree_aggregation_matches_its_node_count() -> None:
    # dpaudit.mechanisms' binary mechanism with Gaussian nodes: its dp_event composes the
    # max_nodes_per_leaf(T) nodes containing a leaf (hand-derived in that module); for a change
    # of leaf 1 by 2 (every prefix sum moves, all of leaf 1's nodes are released) the derived law
    # must give that Gaussian mechanism, mu = sqrt(k) * 2 / sigma, k = ceil(log2 T) + 1.
    from dpaudit.mechanisms.tree_aggregation import (NodeNoise, TreeAggregationMechanism,
                                                     max_nodes_per_leaf)

    for T in (4, 8):
        mech = TreeAggregationMechanism(T, 1, NodeNoise.gaussian(3.0), sensitivity=2.0)
        x0, x1 = np.zeros((T, 1)), np.zeros((T, 1))
        x0[0, 0], x1[0, 0] = 1.0, -1.0
        pair = derive_pair(mech.sample, x0, x1)
        k = math.ceil(math.log2(T)) + 1
        assert max_nodes_per_leaf(T) == k
        assert pair.epsilon(1e-5).value == pytest.approx(
            gaussian_epsilon_by_hand(math.sqrt(k) * 2.0 / 3.0, 1e-5), rel=1e-7)


def _mf_claim(clip: float | None) -> dpaudit.Claim:
    B = np.array([[1.0, 0.0], [0.5, 1.0]])

    def release(x, n, rng):
        out = x + rng.standard_normal((n, 2)) @ B.T
        return out if clip is None else np.clip(out, -clip, clip)
    return dpaudit.Claim(
        id="test-greybox/mf", statement="x + B z", source=dpaudit.Source(title="t"),
        claimed=lambda p: (5.0, 1e-5), neighbours="add-remove", grid=[{}],
        release=lambda p: release, pairs=lambda p: [(np.array([1.0, 0.0]), np.zeros(2))],
        neighbour_check=False,  # a vector statistic, not a list of records
        accountant=lambda p: dpaudit.noise.GaussianNoise(sigma=1.0, sensitivity=1.0),
        samples=2000)


def _site_check(result):
    (site,) = [c for c in result.lemmas if c.statement.startswith("what the data moves over all")]
    return site


def test_noise_through_a_matrix_product_is_judged_by_the_derived_law() -> None:
    # out = x + B z, B = [[1, 0], [0.5, 1]]: no draw is added to a visible value, but the law is
    # derivable, so it decides. By hand: B^{-1} (1, 0) = (1, -0.5), mu^2 = 1 + 0.25 = 1.25; the
    # schedule (independent N(0, 1) per coordinate, distance 1 under add/remove) allows mu = 1.
    site = _site_check(dpaudit.audit_claim(_mf_claim(None), budget="quick", seed=0))
    assert site.status == "violated"
    assert site.worst_ratio == pytest.approx(math.sqrt(1.25), rel=1e-9)
    assert site.details["whole"]["method"] == "derived law"


def test_noise_through_a_matrix_product_leaves_the_site_check_not_checked() -> None:
    # The same with a clip after the noise: no law is derived, and no draw is added to a value the
    # tracer sees, so nothing can be held against the calibration: "not checked" with the
    # reason, never a vacuous "holds".
    site = _site_check(dpaudit.audit_claim(_mf_claim(2.0), budget="quick", seed=0))
    assert site.status == "not checked" and "matrix product" in site.note


@pytest.mark.parametrize("kind", ["gaussian", "laplace", "discrete"])
def test_a_true_declared_law_is_rejected_at_most_at_the_stated_level(kind) -> None:
    # 200 independent tests (seeds 0..199) of a true law at alpha = 0.1 with 40 runs per input:
    # every component is exact, so the rejection count is at most Binomial(200, 0.1) (fewer:
    # Bonferroni is conservative); its 99.9% quantile (34) is the margin asserted.
    S = np.array([[1.0, 0.5], [0.5, 2.0]])
    L = np.linalg.cholesky(S)
    if kind == "gaussian":
        law = dpaudit.exact.LinearGaussian(mean=lambda x: np.asarray(x, float), covariance=S)
        mech = lambda x, n, rng: np.asarray(x) + rng.standard_normal((n, 2)) @ L.T  # noqa: E731
        inputs = [np.array([1.0, 0.0]), np.zeros(2)]
    elif kind == "laplace":
        law = dpaudit.exact.ProductLaplace(mean=lambda x: np.asarray(x, float), scale=[1.0, 3.0])
        mech = lambda x, n, rng: np.asarray(x) + rng.laplace(0, [1.0, 3.0], (n, 2))  # noqa: E731
        inputs = [np.array([1.0, 0.0]), np.zeros(2)]
    else:
        law = dpaudit.exact.DiscreteLaw(lambda x: {x: 0.7, 1 - x: 0.2, 2: 0.1})
        mech = lambda x, n, rng: rng.choice([x, 1 - x, 2], p=[0.7, 0.2, 0.1], size=(n, 1))  # noqa
        inputs = [0, 1]
    rejected = sum(check_declared_law(law, mech, inputs, alpha=0.1, runs=40, seed=s,
                                      pairs=[(0, 1)]).rejected for s in range(200))
    assert rejected <= stats.binom(200, 0.1).ppf(0.999)
