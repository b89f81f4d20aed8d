"""Algorithm 2 (restarts uncapped, as printed) is not eps-DP: the certified counterexample of
``exact.alg2_alternating_bound``, pinned by a computation written here from the paper's formulas,
and its path law checked against the learner by Monte Carlo at parameters where the path is
frequent.

Pair: ``D`` has round 1's loss vector all ones and every other loss 0, ``D'`` all zeros. Output: the
two experts alternate every round. That output has one internal path (draw, restart, draw, restart,
...: every test passed), and along it only the doubling tests differ, with counts 1 vs 0. Once
``Lbar* = 2^n >= m + 1`` (``m`` the printed margin ``5 K log(1/beta_0) / eps_0``) a pass is an
upper-tail event of ``Lap(b)``, ``b = K / eps_0``, under both streams, and
``P(1 + zeta > 2^n - m) / P(zeta > 2^n - m) = e^{1/b}`` exactly; earlier ratios are >= 1. So
``epsilon >= (N - n0) eps_0 / K`` with ``N = (T' - 1)/2`` passes (``T'`` = the largest odd
``<= T``) and ``n0 = ceil(log2(m + 1))``.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from scipy import stats

from dpaudit.learners.sparse_vector_experts import AdaptiveSparseVectorExperts, algorithm2_parameters
from dpaudit.papers.afkt23.exact import (alg2_alternating_bound,
                                         alg2_alternating_path_log_probability)


def test_certified_bound_from_the_printed_formulas():
    """eps = 0.1, d = 2, T = 2^30, beta = 0.1: eps_0 = 0.1 / (2 * 30), beta_0 = 0.1 / 2^30,
    K = 6 ceil(log2 2) + 24 ln(1/beta_0), m = 5 K ln(1/beta_0) / eps_0."""
    T, eps = 2 ** 30, 0.1
    eps0 = eps / (2 * 30)
    lb0 = math.log(2 ** 30 / 0.1)
    K = 6 + 24 * lb0
    m = 5 * K * lb0 / eps0
    N = (T - 2) // 2                       # T' = 2^30 - 1
    n0 = math.ceil(math.log2(m + 1))
    bound = (N - n0) * eps0 / K
    assert N == 2 ** 29 - 1 and 20 < n0 < 40
    assert bound > 1000 * eps                # about 1597 against the claimed 0.1
    got = alg2_alternating_bound(algorithm2_parameters(eps, 2, T, beta=0.1))
    assert got.passes == N and got.tail_passes == N - n0
    assert got.certified == pytest.approx(bound, rel=1e-12)
    assert got.log_ratio >= got.certified


def test_no_counterexample_from_this_output_at_small_T():
    p = algorithm2_parameters(1.0, 2, 64)
    assert alg2_alternating_bound(p).certified < 1.0


def _small_params(T: int):
    # not the claim's calibration: threshold offset 0, Laplace scale 1, margin 2, so that the
    # alternating sequence is frequent enough to count
    return dataclasses.replace(algorithm2_parameters(1.0, 2, T), threshold_offset=0.0,
                               laplace_scale=1.0, doubling_margin=2.0)


def test_path_law_matches_the_learner_by_monte_carlo():
    T, n = 5, 200_000
    p = _small_params(T)
    o = np.array([0, 1, 0, 1, 0])
    D = np.zeros((T, 2))
    D[0] = 1.0
    Dp = np.zeros((T, 2))
    rng = np.random.default_rng(20261127)
    for losses, count in ((D, 1.0), (Dp, 0.0)):
        out = AdaptiveSparseVectorExperts(p).run(losses, n, rng)
        hits = int(np.all(out == o, axis=1).sum())
        prob = math.exp(alg2_alternating_path_log_probability(p, count))
        # two-sided exact binomial test at level 1e-3
        assert stats.binomtest(hits, n, prob).pvalue > 1e-3, (count, hits, n * prob)
        assert hits > 300
    # the ratio at these parameters, by hand: tests n = 0, 1 with Lbar* = 1, 2, m = 2, b = 1:
    # P(zeta > -2) P(zeta > -1) / (P(zeta > -1) P(zeta > 0)) = (1 - e^{-2}/2) / (1/2)
    lr = (alg2_alternating_path_log_probability(p, 1.0)
          - alg2_alternating_path_log_probability(p, 0.0))
    assert lr == pytest.approx(math.log((1 - 0.5 * math.exp(-2)) / 0.5), rel=1e-9)
