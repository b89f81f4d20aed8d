"""Noise schedules with an explicit neighbouring relation, and the exact laws dpaudit computes from.

Every expected value here is derived independently of the code under test: the Gaussian
mechanism's delta(epsilon) from its closed form (Balle & Wang 2018, Thm 8) evaluated with
scipy.stats.norm, randomized response by hand, Laplace by hand.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import norm

from dpaudit import exact, noise
from dpaudit.claims.evidence import CERTIFIED, EXACT


def gaussian_delta(mu: float, eps: float) -> float:
    """Balle & Wang (2018), Thm 8: delta(eps) of the Gaussian mechanism with shift mu."""
    return norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * norm.cdf(-eps / mu - mu / 2)


@pytest.mark.parametrize("relation,mu", [("replace-one", 2.0), ("add-remove", 1.0)])
def test_gaussian_schedule_doubles_the_sensitivity_under_replace_one_only(relation, mu) -> None:
    # sigma 2, a record contributing at most 1 to each of 4 releases:
    # mu = sqrt(4) * (2 or 1) * 1 / 2.
    sched = noise.GaussianNoise(sigma=2.0, sensitivity=1.0, releases=4)
    assert sched.mu(neighbours=relation) == pytest.approx(mu, rel=1e-15)
    eps = sched.epsilon(1e-5, neighbours=relation)
    assert gaussian_delta(mu, eps) == pytest.approx(1e-5, rel=1e-6)


def test_leaving_the_relation_out_is_a_type_error_naming_it() -> None:
    sched = noise.GaussianNoise(sigma=1.0, sensitivity=1.0)
    with pytest.raises(TypeError, match="neighbours"):
        sched.epsilon(1e-5)  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="replace-one, add-remove"):
        sched.epsilon(1e-5, neighbours="replace one")


def test_an_add_remove_calibrated_dp_ftrl_is_flagged_under_replace_one() -> None:
    # DP-FTRL with tree aggregation over T = 8 (4 nodes per leaf), clip C = 1, calibrated with the
    # classical Gaussian bound for eps = 1, delta = 1e-5 but with the add/remove sensitivity
    # C sqrt(4) instead of 2C sqrt(4): mu = 2 / sqrt(2 ln(1.25e5)) = 0.413 under replace-one.
    C, T, eps, delta = 1.0, 8, 1.0, 1e-5
    sigma = C * math.sqrt(4) * math.sqrt(2 * math.log(1.25 / delta)) / eps
    sched = noise.gaussian_tree(sigma=sigma, sensitivity=C, T=T)
    assert sched.releases == 4
    mu = 2 * C * 2 / sigma
    flagged = sched.epsilon(delta, neighbours="replace-one")
    assert gaussian_delta(mu, flagged) == pytest.approx(delta, rel=1e-6)
    assert flagged > 1.5  # 1.61: the claim of eps = 1 fails
    assert sched.epsilon(delta, neighbours="add-remove") < eps  # what the author believed


@pytest.mark.parametrize("T,depth", [(1, 1), (2, 2), (3, 3), (4, 3), (5, 4), (8, 4), (9, 5)])
def test_tree_depth(T, depth) -> None:
    assert noise.tree_depth(T) == depth


def test_laplace_schedule_pure_composition_is_the_sum() -> None:
    sched = noise.LaplaceNoise(scale=2.0, sensitivity=1.0, releases=3)
    assert sched.epsilon(0.0, neighbours="replace-one") == pytest.approx(3 * 2 * 1 / 2)
    assert sched.epsilon(0.0, neighbours="add-remove") == pytest.approx(3 * 1 / 2)
    # With delta > 0 composition is never worse than the pure sum.
    assert sched.epsilon(1e-6, neighbours="add-remove") <= 1.5 + 1e-12


def test_matrix_factorization_uses_the_largest_strategy_column() -> None:
    C = np.array([[1.0, 0.0], [1.0, 1.0]])  # columns of norm sqrt(2) and 1
    sched = noise.matrix_factorization(C, sigma=1.0, sensitivity=0.5)
    assert sched.sensitivity == pytest.approx(0.5 * math.sqrt(2))


def test_linear_gaussian_mu_with_isotropic_and_correlated_noise() -> None:
    law = exact.LinearGaussian(mean=lambda d: np.asarray(d, dtype=float), sigma=2.0)
    assert law.mu([0.0, 0.0], [3.0, 4.0]) == pytest.approx(5.0 / 2.0)
    cov = np.diag([1.0, 4.0])
    law = exact.LinearGaussian(mean=lambda d: np.asarray(d, dtype=float), covariance=cov)
    assert law.mu([0.0, 0.0], [1.0, 2.0]) == pytest.approx(math.sqrt(1 + 4 / 4))
    value = law.epsilon([0.0, 0.0], [1.0, 2.0], 1e-5)
    assert value.kind == EXACT
    assert gaussian_delta(math.sqrt(2), value.value) == pytest.approx(1e-5, rel=1e-6)
    singular = exact.LinearGaussian(mean=lambda d: np.asarray(d, dtype=float),
                                    covariance=np.diag([1.0, 0.0]))
    assert math.isinf(singular.mu([0.0, 0.0], [0.0, 1.0]))  # a noiseless coordinate moved
    assert singular.mu([0.0, 0.0], [1.0, 0.0]) == pytest.approx(1.0)


def test_discrete_law_randomized_response() -> None:
    # Binary randomized response keeping the bit with probability 3/4: eps(0) = ln 3; the
    # hockey-stick divergence is 3/4 - e^eps / 4, so eps(0.1) = ln 2.6.
    law = exact.DiscreteLaw(lambda b: {b: 0.75, 1 - b: 0.25})
    assert law.epsilon(0, 1, 0.0).value == pytest.approx(math.log(3))
    assert law.epsilon(0, 1, 0.1).value == pytest.approx(math.log(2.6), rel=1e-12)
    assert law.hockey_stick(0, 1, 0.0) == pytest.approx(0.5)
    disjoint = exact.DiscreteLaw(lambda b: {b: 1.0})
    assert math.isinf(disjoint.epsilon(0, 1, 0.0).value)
    with pytest.raises(ValueError, match="sum to 1"):
        exact.DiscreteLaw(lambda b: {0: 0.5}).epsilon(0, 1, 0.0)


def test_product_laplace_pure_and_bracketed() -> None:
    law = exact.ProductLaplace(mean=lambda d: np.asarray(d, dtype=float), scale=[1.0, 2.0])
    assert law.epsilon([0.0, 0.0], [1.0, 1.0], 0.0).value == pytest.approx(1.0 + 0.5)
    v = law.epsilon([0.0, 0.0], [1.0, 1.0], 1e-3)
    assert v.kind == CERTIFIED and v.value <= v.upper <= 1.5 + 1e-12
    # One Laplace coordinate with shift/b = 1: delta(eps) = 1 - exp((eps - 1) / 2), so
    # eps(1e-3) = 1 + 2 ln(1 - 1e-3).
    one = exact.ProductLaplace(mean=lambda d: [float(d)], scale=1.0).epsilon(0.0, 1.0, 1e-3)
    truth = 1 + 2 * math.log(1 - 1e-3)
    assert one.value <= truth + 1e-9 <= one.upper + 2e-3
    # The certified end is a lower bound without slack: it sits a grid step (1e-3) below the
    # truth, while the pessimistic upper end is within 1e-10 of it (not a lower bound).
    assert truth - 2e-3 < one.value < truth - 1e-4
    assert truth - one.value < 0.01


# ----------------------------------------------------------------------------------------------
# Accounting any event with the relation explicit; sparse vector and exponential
# mechanism schedules. Expected values: the Gaussian closed form above and the optimal composition
# of k eps0-DP pieces written out here (Kairouz, Oh & Viswanath 2015, Thm 3.3 / Murtagh & Vadhan
# 2016): delta(eps) = sum_l C(k, l) max(0, e^{(k-l) eps0} - e^{eps + l eps0}) / (1 + e^{eps0})^k.
# ----------------------------------------------------------------------------------------------

def kov_delta(eps0: float, k: int, eps: float) -> float:
    total = sum(math.comb(k, i) * max(0.0, math.exp((k - i) * eps0) - math.exp(eps + i * eps0))
                for i in range(k + 1))
    return total / (1.0 + math.exp(eps0)) ** k


def test_epsilon_of_refuses_a_missing_relation_or_reading() -> None:
    import dp_accounting

    ev = dp_accounting.GaussianDpEvent(2.0)
    with pytest.raises(TypeError, match="neighbours"):
        noise.epsilon_of(ev, 1e-5, sensitivity_is="distance")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="sensitivity_is"):
        noise.epsilon_of(ev, 1e-5, neighbours="replace-one")  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="contribution"):
        noise.epsilon_of(ev, 1e-5, neighbours="replace-one", sensitivity_is="l2")
    with pytest.raises(TypeError, match="neighbours"):
        noise.delta_of(ev, 1.0, sensitivity_is="distance")  # type: ignore[call-arg]


@pytest.mark.parametrize("relation,reading,mu", [("replace-one", "contribution", 1.0),
                                                 ("add-remove", "contribution", 0.5),
                                                 ("replace-one", "distance", 0.5),
                                                 ("add-remove", "distance", 0.5)])
def test_epsilon_of_counts_the_factor_of_two_once(relation, reading, mu) -> None:
    import dp_accounting

    # noise multiplier 2 on a composition of 4 (2 explicit x 2 self-composed): one piece has
    # mu = 1 / 2 per unit of distance; four compose to mu = 1 (distance) or 2 (replace-one
    # contribution): sqrt(4) * (1 or 2) / 2.
    piece = dp_accounting.GaussianDpEvent(2.0)
    ev = dp_accounting.ComposedDpEvent([dp_accounting.SelfComposedDpEvent(piece, 2), piece, piece])
    eps = noise.epsilon_of(ev, 1e-5, neighbours=relation, sensitivity_is=reading)
    assert gaussian_delta(2 * mu, eps) == pytest.approx(1e-5, rel=1e-6)
    d = noise.delta_of(ev, eps, neighbours=relation, sensitivity_is=reading)
    assert d == pytest.approx(1e-5, rel=1e-6)


def test_epsilon_of_matches_dp_accountings_replace_one_for_a_contribution() -> None:
    # AUDIT-METHOD section 4: GaussianDpEvent(2.0) at 1e-5 is 4.377 under dp-accounting's
    # REPLACE_ONE (which doubles the shift) and 1.993 under ADD_OR_REMOVE_ONE.
    import dp_accounting

    ev = dp_accounting.GaussianDpEvent(2.0)
    assert noise.epsilon_of(ev, 1e-5, neighbours="replace-one",
                            sensitivity_is="contribution") == pytest.approx(4.377, abs=2e-3)
    assert noise.epsilon_of(ev, 1e-5, neighbours="replace-one",
                            sensitivity_is="distance") == pytest.approx(1.993, abs=2e-3)


def test_laplace_pieces_of_a_contribution_double_under_replace_one() -> None:
    import dp_accounting

    ev = dp_accounting.ComposedDpEvent([dp_accounting.LaplaceDpEvent(4.0)] * 3)
    assert noise.epsilon_of(ev, 0.0, neighbours="replace-one",
                            sensitivity_is="contribution") == pytest.approx(3 * 2 / 4)
    assert noise.epsilon_of(ev, 0.0, neighbours="add-remove",
                            sensitivity_is="contribution") == pytest.approx(3 / 4)


@pytest.mark.parametrize("k,delta", [(1, 1e-6), (10, 1e-6), (30, 1e-5)])
def test_sparse_vector_composes_its_runs_exactly(k, delta) -> None:
    # Lyu, Su & Li (2017) Alg. 1: one run is (d / b1 + 2 c d / b2)-DP; here b1 = 4, b2 = 16,
    # c = 2 and a contribution of 1: d = 2 under replace-one, run epsilon = 0.5 + 0.5 = 1.0.
    sched = noise.SparseVector(threshold_scale=4.0, query_scale=16.0, sensitivity=1.0, cutoff=2,
                               releases=k)
    eps0 = 2 / 4 + 2 * 2 * 2 / 16
    assert sched.run_epsilon(neighbours="replace-one") == pytest.approx(eps0, rel=1e-15)
    assert sched.run_epsilon(neighbours="add-remove") == pytest.approx(eps0 / 2, rel=1e-15)
    assert sched.epsilon(0.0, neighbours="replace-one") == pytest.approx(k * eps0, rel=1e-15)
    eps = sched.epsilon(delta, neighbours="replace-one")
    assert eps <= k * eps0 + 1e-12
    # The accountant's answer is the optimal composition: delta is met there and not 1e-3 below.
    assert kov_delta(eps0, k, eps) <= delta * (1 + 1e-6)
    if eps < k * eps0 - 1e-6:
        assert kov_delta(eps0, k, eps - 1e-3) > delta
    mono = noise.SparseVector(threshold_scale=4.0, query_scale=16.0, sensitivity=1.0, cutoff=2,
                              monotonic=True)
    assert mono.run_epsilon(neighbours="replace-one") == pytest.approx(2 / 4 + 2 * 2 / 16)


def test_exponential_mechanism_selections_compose_exactly_and_guard_the_rr_pitfall() -> None:
    import dp_accounting

    # beta = 0.025, contribution 1, replace-one: each selection is 2 * 0.025 * 2 = 0.1-DP; ten of
    # them at delta = 0 are exactly 1.0, and at delta = 1e-6 the optimal composition.
    sched = noise.ExponentialMechanism(beta=0.025, sensitivity=1.0, releases=10)
    assert sched.selection_epsilon(neighbours="replace-one") == pytest.approx(0.1)
    assert sched.epsilon(0.0, neighbours="replace-one") == pytest.approx(1.0)
    eps = sched.epsilon(1e-6, neighbours="replace-one")
    assert kov_delta(0.1, 10, eps) <= 1e-6 * (1 + 1e-6)
    assert eps == pytest.approx(1.0, abs=1e-3)  # ten 0.1-pieces: nothing to gain at delta 1e-6
    # dp-accounting's PLDAccountant drops the count of self-composed randomized response (the
    # same pieces): it reports one piece, 0.1. The schedule must not.
    p = 2 / (1 + math.exp(0.1))  # binary RR with epsilon 0.1
    acc = dp_accounting.pld.PLDAccountant(dp_accounting.NeighboringRelation.REPLACE_ONE)
    acc.compose(dp_accounting.RandomizedResponseDpEvent(p, 2), 10)
    assert acc.get_epsilon(1e-6) < 0.2 < eps
    assert noise.ExponentialMechanism(beta=0.025, sensitivity=1.0, monotonic=True
                                      ).selection_epsilon(neighbours="add-remove") \
        == pytest.approx(0.025)


def test_new_schedules_refuse_a_missing_relation() -> None:
    for sched in (noise.SparseVector(1.0, 1.0, 1.0), noise.ExponentialMechanism(1.0, 1.0)):
        with pytest.raises(TypeError, match="neighbours"):
            sched.epsilon(1e-6)  # type: ignore[call-arg]


def test_discrete_law_takes_the_larger_of_both_orders() -> None:
    # P = (1/2, 1/2), Q = (9/10, 1/10): at eps = ln 2, P - 2Q gives (0.5 - 0.2) = 0.3 and
    # Q - 2P gives 0, so delta(ln 2) = 0.3 whichever input comes first; eps(0) = ln 5 (by hand).
    law = exact.DiscreteLaw(lambda x: {0: 0.5, 1: 0.5} if x == "P" else {0: 0.9, 1: 0.1})
    assert law.hockey_stick("P", "Q", math.log(2)) == pytest.approx(0.3, rel=1e-12)
    assert law.hockey_stick("Q", "P", math.log(2)) == pytest.approx(0.3, rel=1e-12)
    assert law.epsilon("Q", "P", 0.0).value == pytest.approx(math.log(5), rel=1e-12)
