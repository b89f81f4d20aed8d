"""The sequential CI gate (dpaudit.blackbox.sequential_gate): subtle bugs caught within 10^5 runs,
false alarms at most alpha.

Instances built here (independent of the benchmarks): a sparse vector that releases the noisy
value of the query found above the threshold (Lyu, Su and Li, PVLDB 2017, Alg 3: rho ~ Lap(2/eps),
nu_i ~ Lap(2c/eps), c = 1, release (index, q_i + nu_i); claim eps = 1, queries ones(10) against
(2^5, 0^5)) and a binary-tree counter that redraws its node noise at every release (T = 8, node
scale (floor(log2 T) + 1)/eps = 4, leaf 1 moved by 1: true epsilon T eps / levels = 2 against the
claim 1). The single-instrument ``sequential_audit`` misses both at 10^5 (measured: final log
wealth -1.5 and -0.3); the gate's mixture of re-chosen bettors stopped at 4.0-8.0 x 10^3 (sparse
vector) and 1.5-3.4 x 10^4 (tree) runs per input on seeds 0-2.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpaudit.blackbox.sequential import sequential_audit
from dpaudit.blackbox.sequential_gate import sequential_gate
from dpaudit.mechanisms import LaplaceMechanism

LEAF0 = np.zeros(8)
LEAF1 = np.r_[1.0, np.zeros(7)]


def svt_noisy_values(eps: float):
    """Lyu-Su-Li Alg 3 with c = 1: (index of the first noisy answer above the noisy threshold, or
    k; its noisy value, or 0)."""
    def m(a, n, g):
        x = np.asarray(a, float)[None, :]
        rho = g.laplace(0.0, 2 / eps, size=(n, 1))
        v = x + g.laplace(0.0, 2 / eps, size=(n, x.shape[1]))
        above = v >= rho + 1.0
        idx = np.where(above.any(axis=1), np.argmax(above, axis=1), x.shape[1])
        val = np.where(idx < x.shape[1], v[np.arange(n), np.minimum(idx, x.shape[1] - 1)], 0.0)
        return np.c_[idx.astype(float), val]
    return m


def tree_redraw(T: int = 8, node_scale: float = 4.0):
    """Binary-mechanism prefix sums whose node noise is drawn afresh at every release: release t
    is prefix_t plus popcount(t) fresh Laplace(node_scale) draws."""
    def m(data, n, g):
        prefix = np.cumsum(np.asarray(data, float))
        out = np.empty((n, T))
        for t in range(1, T + 1):
            k = bin(t).count("1")
            out[:, t - 1] = prefix[t - 1] + g.laplace(0.0, node_scale, size=(n, k)).sum(axis=1)
        return out
    return m


SVT_PAIR = (np.ones(10), np.r_[np.full(5, 2.0), np.zeros(5)])


def test_noisy_value_sparse_vector_caught_within_1e4_runs():
    r = sequential_gate(svt_noisy_values(1.0), *SVT_PAIR, epsilon=1.0, max_samples=100_000,
                        seed=0)
    assert r.verdict == "violated"
    assert r.stopped_at is not None and r.runs_per_input <= 20_000  # measured 8,972 at seed 0
    assert r.log_wealth >= math.log(1 / 0.05)
    assert len(r.statistic["bettors"]) >= 2  # a mixture, fixed before sampling


def test_single_event_sequential_audit_on_the_noisy_value_sparse_vector():
    # The one-event sequential audit did not cross at 10^5 on this release before the halting
    # cells (dpaudit.blackbox.halting_cells: one event on (halting index x released value)
    # cells fixed on all training runs); with them it crosses at seed 0 (measured 6,171 runs
    # per input) and still misses seeds 1 and 2 at 10^5, where the mixture gate is needed.
    r = sequential_audit(svt_noisy_values(1.0), *SVT_PAIR, epsilon=1.0, max_samples=100_000,
                         seed=0)
    assert r.verdict == "violated"
    assert r.statistic["name"] == "halting pattern x released-value cells"
    r = sequential_audit(svt_noisy_values(1.0), *SVT_PAIR, epsilon=1.0, max_samples=100_000,
                         seed=1)
    assert r.verdict == "not violated"


def test_correct_laplace_not_violated_and_bad_input_refused():
    r = sequential_gate(LaplaceMechanism(1.0, 1.0).sample, 0.0, 1.0, epsilon=1.0,
                        max_samples=5_000, seed=3)
    assert r.verdict == "not violated" and r.runs_per_input == 5_000
    with pytest.raises(ValueError, match="epsilon"):
        sequential_gate(LaplaceMechanism(1.0, 1.0).sample, 0.0, 1.0, epsilon=-1.0)
    with pytest.raises(ValueError, match="train_samples"):
        sequential_gate(LaplaceMechanism(1.0, 1.0).sample, 0.0, 1.0, epsilon=1.0,
                        max_samples=1_000, train_samples=995)


@pytest.mark.slow
def test_detection_campaign_both_subtle_bugs_within_1e5():
    # Seeds 0-9 each: every run must stop within 10^5 runs per input (the target).
    stops = {}
    for name, mech, pair in (("svt-noisy-values", svt_noisy_values(1.0), SVT_PAIR),
                             ("tree-redraw", tree_redraw(), (LEAF0, LEAF1))):
        stops[name] = [sequential_gate(mech, *pair, epsilon=1.0, max_samples=100_000,
                                       seed=s).stopped_at for s in range(10)]
        print(name, "runs to detection, seeds 0-9:", stops[name])
    for name, s in stops.items():
        assert all(x is not None for x in s), (name, s)


@pytest.mark.slow
def test_false_alarm_campaign_1000_correct_laplace_gates():
    # 1000 gates on Laplace(1) with claim eps = 1: the pair attains the claim exactly (the hardest
    # correct case), 10^4 runs per input each. Ville's bound: P[false alarm] <= alpha = 0.05; the
    # test fails only if the one-sided 99% Clopper-Pearson lower bound of the rate exceeds alpha.
    mech = LaplaceMechanism(1.0, 1.0).sample
    alarms = sum(sequential_gate(mech, 0.0, 1.0, epsilon=1.0, max_samples=10_000,
                                 seed=s).verdict == "violated" for s in range(1000))
    lower = stats.beta.ppf(0.01, alarms, 1000 - alarms + 1) if alarms else 0.0
    print(f"false alarms: {alarms} / 1000 (99% lower bound of the rate {lower:.4f})")
    assert lower <= 0.05


@pytest.mark.slow
def test_false_alarm_campaign_300_correct_histogram_gates():
    # Vector outputs, five bettors: Laplace(2) on two histogram bins that both move by 1
    # (replace-one), exactly 1-DP against the claim 1. Measured today: 0 of seeds 40-339 at
    # 2 x 10^4 runs per input (about 9 min on the shared machine); Ville: rate <= 0.05.
    def hist(a, n, g):
        a = np.asarray(a, float)
        return a[None, :] + g.laplace(0.0, 2.0, size=(n, a.size))
    d0, d1 = np.r_[1.0, np.zeros(4)], np.r_[0.0, 1.0, np.zeros(3)]
    alarms = sum(sequential_gate(hist, d0, d1, epsilon=1.0, max_samples=20_000,
                                 seed=s).verdict == "violated" for s in range(40, 340))
    lower = stats.beta.ppf(0.01, alarms, 300 - alarms + 1) if alarms else 0.0
    print(f"false alarms: {alarms} / 300")
    assert lower <= 0.05


def test_both_sequential_tests_default_their_training_runs_alike() -> None:
    # The gate documents min(1000, max(20, max_samples // 4)); sequential_audit documents
    # min(1000, max_samples // 4). With max_samples >= 100 the floor of 20 never binds, so the
    # one shared check gives both, for every budget (and 1000 from max_samples = 4000 on).
    from dpaudit.blackbox.sequential import check_sequential_arguments
    for m in list(range(100, 4100, 7)) + [10**6]:
        got = check_sequential_arguments(1.0, 0.0, 0.05, m, 0, None)[5]
        assert got == min(1000, max(20, m // 4)) == min(1000, m // 4)
    with pytest.raises(ValueError):
        check_sequential_arguments(1.0, 0.0, 0.05, 99, 0, None)
    with pytest.raises(ValueError):
        check_sequential_arguments(1.0, 0.0, 0.05, 1000, 0, 991)  # above max_samples - 10
