"""Public functions and privacy-relevant methods no other test ran.

Each is tested against an independent statement of what it must return (a closed form, a count,
or another public function it duplicates), not against its own earlier output.
"""

from __future__ import annotations

import math

import dp_accounting
import numpy as np
import pytest
from hypothesis import strategies as st
from scipy import optimize, stats


def _gaussian_delta(mu: float, eps: float) -> float:
    return float(stats.norm.cdf(mu / 2 - eps / mu) - math.exp(eps) * stats.norm.cdf(-mu / 2 - eps / mu))


def _gaussian_epsilon(mu: float, delta: float) -> float:
    return float(optimize.brentq(lambda e: _gaussian_delta(mu, e) - delta, 0.0, 200.0, xtol=1e-13))


def test_results_in_order_restores_item_order() -> None:
    from dpaudit.execution.executors import Executor, LocalExecutor, results_in_order

    class Reversed(LocalExecutor):
        def map_unordered(self, fn, items, shared=None):  # completes in reverse order
            return reversed(list(super().map_unordered(fn, items, shared)))

    assert issubclass(Reversed, Executor)
    items = [3, 1, 4, 1, 5]
    assert results_in_order(Reversed(), lambda s, x: (s, x * x), items, shared="k") == [
        ("k", 9), ("k", 1), ("k", 16), ("k", 1), ("k", 25)]


def test_pair_search_is_strategy_agrees_with_the_samplers_check() -> None:
    from dpaudit.blackbox.pair_search import is_strategy
    from dpaudit.blackbox.sampling import is_strategy as sampling_is_strategy

    for obj in (st.integers(), st.tuples(st.floats(), st.floats()), st.just(1).map(str)):
        assert is_strategy(obj) and sampling_is_strategy(obj)
    for obj in (1, [st.integers()], None, "st.integers()", [(0, 1)]):
        assert not is_strategy(obj) and not sampling_is_strategy(obj)


def test_private_sum_sensitivity_and_dp_event() -> None:
    """PrivateSum (JKT12 Alg 5): replace-one moves w_1 by at most 2R; its event is the
    composition of released_node_count(1, T) Gaussian releases at noise multiplier sigma / (2R),
    i.e. one Gaussian mechanism with mu = 2R sqrt(count) / sigma (count = floor(log2 T) + 1 for the
    prefix sums of a T-leaf tree: 4 at T = 8)."""
    from dpaudit.formal.accounting import epsilon_of_event
    from dpaudit.mechanisms.private_sum import PrivateSum

    m = PrivateSum(1, 8, 2.0, 1.0, 1e-5, version="colt")
    assert m.sensitivity.bound == pytest.approx(4.0)
    ev = m.dp_event()
    assert isinstance(ev, dp_accounting.SelfComposedDpEvent) and ev.count == 4
    assert ev.event.noise_multiplier == pytest.approx(m.sigma / 4.0)
    mu = 4.0 * math.sqrt(4) / m.sigma
    assert epsilon_of_event(ev, 1e-5) == pytest.approx(_gaussian_epsilon(mu, 1e-5), rel=2e-3)


def test_pol_sensitivity_and_dp_event() -> None:
    """POL (JKT12 Alg 6): the printed sensitivity 2 (L + alpha ||x*||) ln T / T, alpha =
    eps_g / ||x*||^2, and one Gaussian release at noise multiplier beta / sensitivity."""
    from dpaudit.learners.pol import POL

    T, L, eps_g, xs = 100, 1.0, 0.01, 1.0
    m = POL(1, T, L, eps_g, xs, 1.0, 1e-5)
    alpha = eps_g / xs ** 2
    bound = 2.0 * (L + alpha * xs) * math.log(T) / T
    assert m.sensitivity.bound == pytest.approx(bound, rel=1e-12)
    ev = m.dp_event()
    assert isinstance(ev, dp_accounting.GaussianDpEvent)
    assert ev.noise_multiplier == pytest.approx(m.beta / bound, rel=1e-12)


def test_guarded_accountant_get_delta_matches_the_gaussian_closed_form() -> None:
    from dpaudit.formal.accounting import GuardedAccountant

    acc = GuardedAccountant()
    acc.compose(dp_accounting.GaussianDpEvent(2.0), 2)  # two releases at sigma 2: mu = sqrt(2)/2
    mu = math.sqrt(2) / 2.0
    for eps in (0.5, 1.0, 3.0):
        assert acc.get_delta(eps) == pytest.approx(_gaussian_delta(mu, eps), rel=5e-3, abs=1e-12)
    assert acc.get_epsilon(acc.get_delta(1.0)) == pytest.approx(1.0, rel=5e-3)


def test_exact_epsilon_alg5_on_a_pair() -> None:
    """Identical streams have epsilon 0; a replaced loss gives a finite positive epsilon at or
    below Algorithm 5's accountant (an upper bound over every pair)."""
    from dpaudit.learners.potential_experts import algorithm5_parameters
    from dpaudit.papers.afkt23.exact import alg5_accountant, exact_epsilon_alg5

    p = algorithm5_parameters(1.0, 2, 6)
    l0 = np.zeros((6, 2))
    l1 = l0.copy()
    l1[0, 0] = 1.0
    assert exact_epsilon_alg5(l0, l0, p) == pytest.approx(0.0, abs=1e-12)
    e = exact_epsilon_alg5(l0, l1, p)
    assert 0.0 < e <= alg5_accountant(p) * (1 + 1e-9)


def test_afkt23_play_statistics() -> None:
    from dpaudit.papers.afkt23.statistics import first_plays_code, plays_of

    out = np.array([[0, 1, 1, 2], [2, 2, 2, 2]])
    assert plays_of(1)(out).tolist() == [2.0, 0.0]
    assert plays_of(2)(out).tolist() == [1.0, 4.0]
    assert first_plays_code(2)(out).tolist() == [0 + 1 * 64, 2 + 2 * 64]
    with pytest.raises(ValueError):
        plays_of(0)(np.zeros(3))


def test_pfcoco_standard_tree_structure() -> None:
    """Release s_t of the standard binary tree sums the nodes of t's binary decomposition:
    popcount(t) nodes; leaf 1 lies in the nodes [1, 2^j] (floor(log2 T) + 1 of them)."""
    from dpaudit.papers.pfcoco.exact import release_structure, standard_tree_structure

    for T in (1, 4, 8, 13):
        B, nodes = standard_tree_structure(T)
        B2, nodes2 = release_structure(None, T)
        assert np.array_equal(B, B2) and nodes == nodes2
        assert B.shape[0] == T
        assert B.sum(axis=1).tolist() == [bin(t).count("1") for t in range(1, T + 1)]


def test_sensitivity_png_is_a_png() -> None:
    from dpaudit.reporting.plots import sensitivity_png

    png = sensitivity_png({"t": [1, 2, 3], "observed": [0.5, 1.0, 0.8], "claimed": [1.0, 1.0, 1.0],
                           "statement": "||x_t - x'_t|| <= 2L/(alpha t)"})
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 1000
