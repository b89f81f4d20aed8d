"""Sparse vector: exact output law, halting semantics, calibration and noise accounting."""

import math

import numpy as np
import pytest
from scipy import stats

from dpaudit.mechanisms.events import EpsilonDeltaDpEvent
from dpaudit.mechanisms.sparse_vector import (
    AboveThreshold,
    SparseVectorMechanism,
    first_above_probabilities,
    sparse_vector_scales,
)

QUERIES = np.array([0.0, 1.5, -1.0, 3.0, 0.5])
THRESHOLD = 2.0


def test_scales_follow_dwork_roth():
    assert sparse_vector_scales(0.5) == pytest.approx((4.0, 8.0))  # Alg 1: 2/eps, 4/eps
    assert sparse_vector_scales(0.5, sensitivity=3.0) == pytest.approx((12.0, 24.0))
    assert sparse_vector_scales(1.0, 1.0, max_above=3) == pytest.approx((6.0, 12.0))  # 2c/eps
    sigma = math.sqrt(32 * 3 * math.log(1e5)) * 2.0 / 0.8
    assert sparse_vector_scales(0.8, 2.0, 3, 1e-5) == pytest.approx((sigma, 2 * sigma))


def survival_of_difference(z, b_query, b_threshold):
    # P[nu - rho >= z] for nu ~ Lap(b_query), rho ~ Lap(b_threshold), b_query != b_threshold:
    # the density of nu - rho is (b2 e^{-|z|/b2} - b1 e^{-|z|/b1}) / (2 (b2^2 - b1^2)).
    b1, b2 = b_threshold, b_query
    a = abs(z)
    tail = (b2**2 * math.exp(-a / b2) - b1**2 * math.exp(-a / b1)) / (2 * (b2**2 - b1**2))
    return tail if z >= 0 else 1 - tail


def test_exact_probabilities_closed_form_and_normalisation():
    b1, b2 = sparse_vector_scales(1.0)
    for q in (-3.0, 0.0, 1.9, 2.0, 7.5):
        p = first_above_probabilities([q], THRESHOLD, b1, b2)
        expected = survival_of_difference(THRESHOLD - q, b2, b1)
        assert p[0] == pytest.approx(expected, abs=1e-10)
        assert p[1] == pytest.approx(1 - expected, abs=1e-10)
    p = first_above_probabilities(QUERIES, THRESHOLD, b1, b2)
    assert p.shape == (6,) and np.all(p > 0)
    assert p.sum() == pytest.approx(1.0, abs=1e-9)
    # A huge query fires at once; a hopeless stream never fires.
    assert first_above_probabilities([1e4, 0.0], 0.0, 1.0, 2.0)[0] == pytest.approx(1.0)
    assert first_above_probabilities([-1e4] * 3, 0.0, 1.0, 2.0)[3] == pytest.approx(1.0)


def test_above_threshold_matches_exact_law():
    eps, n = 1.0, 200_000
    mech = SparseVectorMechanism(eps, THRESHOLD)
    idx = mech.sample(QUERIES, n, np.random.default_rng(2024))
    assert idx.shape == (n,) and idx.dtype.kind == "i"
    counts = np.bincount(idx, minlength=len(QUERIES) + 1)
    b1, b2 = sparse_vector_scales(eps)
    p = first_above_probabilities(QUERIES, THRESHOLD, b1, b2)
    # Chi-square goodness of fit, p-value > 1e-3 at a fixed seed: a correct sampler fails this
    # with probability 1e-3. Expected counts here are all > 5000.
    assert stats.chisquare(counts, n * p).pvalue > 1e-3


def test_sparse_with_two_answers_matches_exact_joint_law():
    # Alg 2 with c = 2: the first "above" is AboveThreshold with scales (sigma, 2 sigma); after it
    # a fresh threshold starts an independent AboveThreshold on the remaining queries. So
    # P[i1, i2] = P1(i1) * P(first above of queries i1+1.. at i2).
    eps, n, k = 2.0, 200_000, len(QUERIES)
    mech = SparseVectorMechanism(eps, THRESHOLD, max_above=2)
    out = mech.sample(QUERIES, n, np.random.default_rng(7))
    assert out.shape == (n, 2)
    b1, b2 = sparse_vector_scales(eps, max_above=2)
    p1 = first_above_probabilities(QUERIES, THRESHOLD, b1, b2)
    cells, expected = [], []
    for i1 in range(k):
        rest = QUERIES[i1 + 1:]
        p2 = first_above_probabilities(rest, THRESHOLD, b1, b2) if rest.size else np.ones(1)
        for j, q in enumerate(p2):
            i2 = i1 + 1 + j  # j == rest.size means "no second above" (index k)
            cells.append((i1, i2))
            expected.append(p1[i1] * q)
    cells.append((k, k))
    expected.append(p1[k])
    expected = np.array(expected)
    assert expected.sum() == pytest.approx(1.0, abs=1e-8)
    observed = np.array([np.sum((out[:, 0] == a) & (out[:, 1] == b)) for a, b in cells])
    assert observed.sum() == n  # every outcome is one of the cells: increasing, padded with k
    # Pool cells with expected count < 5 before the chi-square test (p > 1e-3 at a fixed seed).
    small = expected * n < 5
    obs = np.append(observed[~small], observed[small].sum())
    exp = np.append(expected[~small], expected[small].sum()) * n
    if not small.any():
        obs, exp = obs[:-1], exp[:-1]
    assert stats.chisquare(obs, exp).pvalue > 1e-3


def test_halting_semantics_and_draw_counts():
    n = 4
    svt = AboveThreshold(1.0, 0.0, 1.0, n, np.random.default_rng(0))
    assert svt.threshold_scale == 2.0 and svt.query_scale == 4.0
    big, low = 1e6, -1e6
    # Run-specific query values: runs 0, 2 certainly fire, runs 1, 3 certainly stay below.
    fired = svt.query(np.array([big, low, big, low]))
    np.testing.assert_array_equal(fired, [True, False, True, False])
    np.testing.assert_array_equal(svt.halted, [True, False, True, False])
    # Halted runs answer False, draw nothing and are not counted, even for a certain "above".
    again = svt.query(big)
    np.testing.assert_array_equal(again, [False, True, False, True])
    np.testing.assert_array_equal(svt.queries_answered, [1, 2, 1, 2])
    np.testing.assert_array_equal(svt.query_draws, [1, 2, 1, 2])
    np.testing.assert_array_equal(svt.threshold_draws, [1, 1, 1, 1])  # no redraw after halting
    np.testing.assert_array_equal(svt.noise_draws, [2, 3, 2, 3])
    assert svt.halted.all()
    assert not svt.query(big).any()
    np.testing.assert_array_equal(svt.queries_answered, [1, 2, 1, 2])
    # restart: a fresh instance for chosen runs (new threshold noise)
    svt.restart(np.array([True, False, False, False]))
    np.testing.assert_array_equal(svt.halted, [False, True, True, True])
    np.testing.assert_array_equal(svt.threshold_draws, [2, 1, 1, 1])
    np.testing.assert_array_equal(svt.query(big), [True, False, False, False])
    svt.restart()
    assert not svt.halted.any()
    np.testing.assert_array_equal(svt.above_count, [0, 0, 0, 0])


def test_sparse_counts_answers_and_redraws_threshold():
    svt = AboveThreshold(1.0, 0.0, 1.0, 3, np.random.default_rng(1), max_above=3)
    for step in range(3):
        assert svt.query(1e6).all()
        np.testing.assert_array_equal(svt.above_count, [step + 1] * 3)
        assert svt.halted.all() == (step == 2)
    # fresh threshold after each "above" except the last
    np.testing.assert_array_equal(svt.threshold_draws, [3, 3, 3])
    assert not svt.query(1e6).any()


def test_mechanism_outputs_and_privacy_statement():
    mech = SparseVectorMechanism(0.5, 1.0, sensitivity=2.0, max_above=3, delta=1e-6)
    assert mech.dp_event() == EpsilonDeltaDpEvent(0.5, 1e-6)
    assert SparseVectorMechanism(0.3, 0.0).dp_event() == EpsilonDeltaDpEvent(0.3, 0.0)
    assert mech.sensitivity.norm == "count" and mech.sensitivity.bound == 2.0
    values = np.linspace(-5, 5, 9)
    out = mech(values, 1000, np.random.default_rng(3))
    assert out.shape == (1000, 3) and out.min() >= 0 and out.max() <= 9
    # indices strictly increase until the padding value k = 9
    for row in out:
        real = row[row < 9]
        assert np.all(np.diff(real) > 0) and np.all(row[len(real):] == 9)
    # never fires on hopeless queries
    assert np.all(SparseVectorMechanism(1.0, 0.0)(np.full(4, -1e6), 50,
                                                   np.random.default_rng(0)) == 4)


def test_bad_inputs_raise():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="epsilon"):
        AboveThreshold(0.0, 0.0, 1.0, 2, rng)
    with pytest.raises(ValueError, match="sensitivity"):
        AboveThreshold(1.0, 0.0, -1.0, 2, rng)
    with pytest.raises(ValueError, match="n_runs"):
        AboveThreshold(1.0, 0.0, 1.0, 0, rng)
    with pytest.raises(ValueError, match="max_above"):
        AboveThreshold(1.0, 0.0, 1.0, 2, rng, max_above=0)
    with pytest.raises(ValueError, match="delta"):
        AboveThreshold(1.0, 0.0, 1.0, 2, rng, delta=1.0)
    with pytest.raises(ValueError, match="finite"):
        AboveThreshold(1.0, math.nan, 1.0, 2, rng)
    with pytest.raises(TypeError, match="Generator"):
        AboveThreshold(1.0, 0.0, 1.0, 2, 42)
    svt = AboveThreshold(1.0, 0.0, 1.0, 2, rng)
    with pytest.raises(ValueError, match="shape"):
        svt.query(np.zeros(3))
    with pytest.raises(ValueError, match="finite"):
        svt.query(np.array([0.0, np.inf]))
    with pytest.raises(ValueError, match="mask"):
        svt.restart(np.array([True, False, True]))
    with pytest.raises(ValueError, match="indices"):
        svt.restart(np.array([2]))
    mech = SparseVectorMechanism(1.0, 0.0)
    with pytest.raises(ValueError, match="ndim"):
        mech(np.zeros((2, 2)), 3, rng)
    with pytest.raises(ValueError, match="n"):
        mech(np.zeros(2), 0, rng)
    with pytest.raises(ValueError, match="threshold_scale"):
        first_above_probabilities([0.0], 0.0, 0.0, 1.0)
    with pytest.raises(ValueError, match="at least one"):
        first_above_probabilities([], 0.0, 1.0, 1.0)
