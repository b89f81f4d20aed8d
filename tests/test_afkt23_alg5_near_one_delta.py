"""alg5-approx fails at delta close to 1 (Theorem 7 restricts only eps < 1): the certified value of
``exact.alg5_first_switch_bound`` at the audited point, recomputed here from the definitions, and
checked against the learner by Monte Carlo at the same pair.

Point: eps = 0.9, d = 1000, T = 6, delta = 0.997, eps_0 = eps / (sqrt(K) ln(1/delta)) (K = 2 ln d),
eta = eps_0 / (56 ln T). Pair: experts 1..999 lose (0.75, 0.75, 1, 1, 0, 0), expert 0 never; the
neighbour zeroes round 3. With one zero-loss expert, log phi(t) = log((1 + (d-1) e^{-eta C_t}) / d),
C_t the common cumulative loss of the others, and phase 1's query is -log phi(t) / eta - 2.
Event S = "the released expert first changes at round 4". P_D(S) >= (1 - 1/d) P[halt at query 3];
P_D'(S) <= P[phase 1 fires at a query <= 3]; epsilon(delta) >= ln((P_D(S) - delta) / P_D'(S)).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from sparse_vector_law import halting_law

from dpaudit.learners.potential_experts import PotentialExperts, algorithm5_parameters
from dpaudit.papers.afkt23.plans import (NEAR_ONE_DELTA_J, NEAR_ONE_DELTA_POINT,
                                         NEAR_ONE_DELTA_REPLACED, NEAR_ONE_DELTA_ROWS)
from dpaudit.papers.afkt23.exact import alg5_first_switch_bound

EPS, D, T, DELTA = 0.9, 1000, 6, 0.997


def _by_hand():
    K = 2 * math.log(D)
    e0 = EPS / (math.sqrt(K) * math.log(1 / DELTA))
    eta = e0 / (56 * math.log(T))
    b1, b2 = 2 / e0, 4 / e0

    def queries(rows):
        C = np.cumsum(rows)[:3]
        return [-math.log((1 + (D - 1) * math.exp(-eta * c)) / D) / eta - 2 for c in C]

    rows = [0.75, 0.75, 1.0, 1.0, 0.0, 0.0]
    alt = list(rows)
    alt[2] = 0.0
    p = (1 - 1 / D) * halting_law(queries(rows), b1, b2)[2]
    q = 1 - halting_law(queries(alt), b1, b2)[3]
    return p, q, math.log((p - DELTA) / q)


def test_point_and_pair_are_the_documented_ones():
    assert NEAR_ONE_DELTA_POINT == dict(epsilon=EPS, d=D, T=T, eps0_reading="eps0-formula",
                                        delta=DELTA, pair="first switch")
    assert (NEAR_ONE_DELTA_ROWS, NEAR_ONE_DELTA_REPLACED, NEAR_ONE_DELTA_J) == (
        [0.75, 0.75, 1.0, 1.0, 0.0, 0.0], 2, 3)


def test_certified_value_by_hand():
    p, q, cert = _by_hand()
    got = alg5_first_switch_bound(algorithm5_parameters(EPS, D, T, delta=DELTA),
                                  NEAR_ONE_DELTA_ROWS, NEAR_ONE_DELTA_REPLACED, 0.0, NEAR_ONE_DELTA_J)
    assert got.p_lower == pytest.approx(p, abs=1e-8) and got.q_upper == pytest.approx(q, abs=1e-8)
    assert got.certified == pytest.approx(cert, abs=1e-4)
    assert got.certified > 3.5 > EPS                       # about 3.60


def test_learner_at_the_same_pair_by_monte_carlo():
    params = algorithm5_parameters(EPS, D, T, delta=DELTA)
    fb = alg5_first_switch_bound(params, NEAR_ONE_DELTA_ROWS, NEAR_ONE_DELTA_REPLACED, 0.0,
                                 NEAR_ONE_DELTA_J)
    rng = np.random.default_rng(27)
    n, chunk = 20_000, 5_000
    counts = []
    for L in fb.streams:
        hits = 0
        for _ in range(n // chunk):
            out = PotentialExperts(params).run(L, chunk, rng)
            first_change = (out[:, 1:] != out[:, :-1]).argmax(axis=1) + 2
            changed = (out[:, 1:] != out[:, :-1]).any(axis=1)
            hits += int(np.sum(changed & (first_change == 4)))
        counts.append(hits)
    # D: P(S) >= p_lower, so misses should not be too many (one-sided exact binomial, level 1e-3)
    assert stats.binom.sf(n - counts[0] - 1, n, 1 - fb.p_lower) > 1e-3, counts
    # D': P(S) <= q_upper (about 5e-5: about one run in 20000)
    assert stats.binom.sf(counts[1] - 1, n, fb.q_upper) > 1e-3, counts
    assert counts[0] > 0.99 * n and counts[1] < 0.001 * n


def test_first_switch_law_of_the_learner_matches_the_quadrature_at_moderate_delta():
    """At delta = 0.98 (eps_0 about 12) the first internal switch round is spread over rounds 2-5:
    the learner's law (its switch record, 20000 runs) against the quadrature written here, by
    chi-square at level 1e-3: the law the certified value is computed from is the code's."""
    delta = 0.98
    params = algorithm5_parameters(EPS, D, T, delta=delta)
    K = 2 * math.log(D)
    e0 = EPS / (math.sqrt(K) * math.log(1 / delta))
    eta = e0 / (56 * math.log(T))
    assert params.epsilon0 == pytest.approx(e0) and params.eta == pytest.approx(eta)
    rows = np.array(NEAR_ONE_DELTA_ROWS)
    C = np.cumsum(rows)
    v = [-math.log((1 + (D - 1) * math.exp(-eta * c)) / D) / eta - 2 for c in C[:T - 1]]
    law = halting_law(v, 2 / e0, 4 / e0)            # fire at query 1..T-1 -> switch at 2..T; never
    L = np.zeros((T, D))
    L[:, 1:] = rows[:, None]
    rng = np.random.default_rng(2027)
    firsts = []
    for _ in range(4):
        learner = PotentialExperts(params)
        learner.run(L, 5_000, rng)
        sw = learner.record.switch_rounds
        firsts.append(np.where(sw.any(axis=1), sw.argmax(axis=1) + 1, 0))
    first = np.concatenate(firsts)
    obs = np.array([np.sum(first == h) for h in range(2, T + 1)] + [np.sum(first == 0)], float)
    exp = np.array(law) * first.size
    keep = exp >= 5
    obs_k = np.r_[obs[keep], obs[~keep].sum()]
    exp_k = np.r_[exp[keep], exp[~keep].sum()]
    if exp_k[-1] < 5:
        obs_k, exp_k = obs_k[:-1], exp_k[:-1]
        exp_k *= obs_k.sum() / exp_k.sum()
    assert keep.sum() >= 3
    assert stats.chisquare(obs_k, exp_k).pvalue > 1e-3, (obs, exp)
