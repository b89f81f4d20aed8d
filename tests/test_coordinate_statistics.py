"""Pooled and whitened location-shift statistics (dpaudit.blackbox.coordinate_statistics).

Expected values come from independent derivations in the tests (enumeration, closed-form binomial
laws, the James-Stein formula written out), never from the module's own output.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from dpaudit.blackbox.coordinate_statistics import (PooledShiftFitter, SignEventScorer,
                                                    WhitenedShiftFitter, best_sign_cut,
                                                    pool_shifts, sign_law)
from dpaudit.blackbox.empirical_audit import audit


def test_pool_shifts_is_james_stein_toward_the_weighted_mean() -> None:
    d = np.array([1.0, 2.0, 0.5, 1.5, 3.0])
    v = np.array([1.0, 0.5, 2.0, 1.0, 4.0])
    js, common = pool_shifts(d, v)
    m = (1 / 1 + 4 + 0.25 + 1.5 + 0.75) / (1 + 2 + 0.5 + 1 + 0.25)  # sum(d/v) / sum(1/v)
    s = ((1 - m) ** 2 / 1 + (2 - m) ** 2 / 0.5 + (0.5 - m) ** 2 / 2 + (1.5 - m) ** 2 / 1
         + (3 - m) ** 2 / 4)
    lam = max(0.0, 1 - 2 / s)  # k - 3 = 2
    assert np.allclose(common, m, rtol=1e-12)
    assert np.allclose(js, m + lam * (d - m), rtol=1e-12)
    # Shifts far apart against their noise are left almost alone (factor 1 - 2/S near 1) ...
    far = np.array([0.0, 10.0, -10.0, 5.0])
    js_far, _ = pool_shifts(far, np.full(4, 0.01))
    assert np.allclose(js_far, far, atol=0.01)
    # ... and shifts within their noise of each other collapse onto the mean (S <= k - 3).
    near = np.array([1.0, 1.1, 0.9, 1.05, 0.95])
    js_near, common_near = pool_shifts(near, np.full(5, 1.0))
    assert np.allclose(js_near, common_near)
    with pytest.raises(ValueError, match="coordinates"):
        pool_shifts(np.ones(3), np.ones(3))


def test_sign_law_matches_enumeration() -> None:
    units = np.array([3, -1, 2, 1])
    p_up = np.array([0.3, 0.6, 0.5, 0.9])
    law, lo = sign_law(units, p_up)
    brute: dict[int, float] = {}
    for signs in itertools.product((-1, 1), repeat=4):
        v = int(np.dot(units, signs))
        pr = float(np.prod([p if s == 1 else 1 - p for s, p in zip(signs, p_up)]))
        brute[v] = brute.get(v, 0.0) + pr
    assert lo == -7
    for v, pr in brute.items():
        assert law[v - lo] == pytest.approx(pr, abs=1e-12)
    assert law.sum() == pytest.approx(1.0, abs=1e-12)


def test_best_sign_cut_picks_the_closed_form_best_binomial_tail() -> None:
    # Two binomial laws on the lattice 0..20: the cut must be the argmax of the same plug-in
    # bound computed here directly.
    law0 = stats.binom(20, 0.48).pmf(np.arange(21))
    law1 = stats.binom(20, 0.52).pmf(np.arange(21))
    i, upper, value = best_sign_cut(law0, law1, 10**6, alpha=0.05)
    z = stats.norm.isf(0.05)
    k = np.arange(21)
    p, q = stats.binom(20, 0.52).sf(k - 1), stats.binom(20, 0.48).sf(k - 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        lb = np.log((p - z * np.sqrt(p * (1 - p) / 1e6)) / (q + z * np.sqrt(q * (1 - q) / 1e6)))
    lb = np.where(np.isfinite(lb), lb, -np.inf)
    assert upper and i == int(np.argmax(lb)) and value == pytest.approx(lb.max(), rel=1e-9)


def test_whitening_recovers_prefix_sum_increments() -> None:
    # y = cumsum(increments): the Cholesky factor of Cov(y) = L L^T with L lower-triangular ones
    # (unit-variance increments) is exactly that cumsum map, so the whitened output is the
    # increments (up to the probe's estimation error, about 1/sqrt(n) per coefficient).
    g = np.random.default_rng(0)
    inc = [g.laplace(0.0, 1 / math.sqrt(2), size=(4096, 6)) for _ in range(2)]
    f = WhitenedShiftFitter()
    f.prepare(np.cumsum(inc[0], axis=1), np.cumsum(inc[1] + 0.5, axis=1))
    assert f._transform is not None
    z = f._whiten(np.cumsum(inc[0], axis=1))
    for j in range(6):
        assert np.corrcoef(z[:, j], inc[0][:, j])[0, 1] > 0.99
    # Independent coordinates: nothing to whiten, no candidate.
    g2 = WhitenedShiftFitter()
    g2.prepare(inc[0], inc[1])
    assert g2._transform is None and g2.finish() == []


def _laplace_parallel(d, n, g, D: int = 20, s: float = 0.02):
    return s * float(d) + g.laplace(0.0, 1.0, size=(n, D))


def test_pooled_sign_event_finds_a_small_shift_spread_over_many_coordinates() -> None:
    # 20 coordinates of Laplace(1), data1 shifted by 0.02 in each (pair epsilon 0.4). At 2 x 10^5
    # runs the fit split (10^4 per input) estimates each coordinate's shift with standard error
    # 0.014 (median of Laplace(1): 1/sqrt(n)), so a per-coordinate statistic is mostly noise;
    # the common shift is known to 0.014/sqrt(20) = 0.003. Closed form of the best sign event:
    # the count of coordinates above the midpoint 0.01 is Binomial(20, pi) with pi1 = 1 -
    # e^-0.01/2 on data1 and pi0 = e^-0.01/2 on data0; its best tail at 1.8 x 10^5 test runs
    # ({count >= 15}: p = 0.0230, q = 0.0186) projects a bound of 0.150 with standard deviation
    # 0.023 (computed below). Margin: the audit must reach 0.150 - 4 sd = 0.058 (missed with
    # probability ~3e-5 if the right event is chosen; its selection-split log ratio, 0.21 +-
    # 0.06, is 3.5 sd above 0). Seeds 0-3 give 0.150, 0.162, 0.144, 0.129.
    D, s, n_test = 20, 0.02, 180_000
    pi1, pi0 = 1 - 0.5 * math.exp(-s / 2), 0.5 * math.exp(-s / 2)
    k = np.arange(D + 1)
    p, q = stats.binom(D, pi1).sf(k - 1), stats.binom(D, pi0).sf(k - 1)
    z = stats.norm.isf(1 - math.sqrt(1 - 0.05))
    with np.errstate(invalid="ignore"):
        lb = np.log((p - z * np.sqrt(p * (1 - p) / n_test)) / (q + z * np.sqrt(q * (1 - q)
                                                                             / n_test)))
    lb = np.where(np.isfinite(lb), lb, -np.inf)
    i = int(np.argmax(lb))
    sd = math.sqrt((1 - p[i]) / (n_test * p[i]) + (1 - q[i]) / (n_test * q[i]))
    assert 0.13 < lb[i] < 0.17 and sd < 0.03
    r = audit(_laplace_parallel, 0, 1, epsilon=1.0, samples=200_000, alpha=0.05, seed=0,
              statistics=("linear", "pooled-shift"))
    assert r.statistic["name"] != "linear discriminant"
    assert lb[i] - 4 * sd <= r.epsilon_lower_bound <= D * s


def test_sign_event_scorer_is_the_indicator_of_its_weighted_sign_count() -> None:
    sc = SignEventScorer(np.zeros(3), np.array([1.0, 0.5, -1.0]), 0.5, True)
    x = np.array([[1.0, 1.0, -1.0],    # 1 + 0.5 + 1 = 2.5 >= 0.5
                  [-1.0, 1.0, -1.0],   # -1 + 0.5 + 1 = 0.5 >= 0.5
                  [-1.0, -1.0, 1.0]])  # -2.5
    assert sc(x).tolist() == [1.0, 1.0, 0.0]
    lower = SignEventScorer(np.zeros(3), np.array([1.0, 0.5, -1.0]), 0.5, False)
    assert lower(x).tolist() == [0.0, 1.0, 1.0]


def test_pooled_fitter_below_four_coordinates_emits_only_the_laplace_form_event() -> None:
    g = np.random.default_rng(1)
    f = PooledShiftFitter()
    a, b = g.laplace(size=(500, 3)), g.laplace(size=(500, 3)) + 0.1
    f.prepare(a, b)
    f.update(a, 0)
    f.update(b, 1)
    out = f.finish()
    assert [type(o).__name__ for o in out] == ["ScoreEventScorer"]


def test_laplace_form_event_is_the_top_cell_of_a_large_shift() -> None:
    # Three coordinates of Laplace(1), data1 shifted by 1 in each (exactly 3-DP). The Laplace
    # log likelihood ratio is +3 exactly when every coordinate is at or above its shifted
    # median 1: P1 = (1/2)^3 = 0.125, P0 = (e^-1 / 2)^3 = 0.00622, ratio e^3, the largest cell.
    # The event cut on the fit split's product law (2 x 10^4 fit runs per input) must be that
    # cell or its mirror (every coordinate at or below 0, the same probabilities swapped), up
    # to the lattice's rounding; checked on 2 x 10^5 fresh runs.
    g = np.random.default_rng(2)
    f = PooledShiftFitter()
    a, b = g.laplace(size=(20_000, 3)), 1.0 + g.laplace(size=(20_000, 3))
    f.prepare(a[:4096], b[:4096])
    f.update(a, 0)
    f.update(b, 1)
    ev = [o for o in f.finish() if type(o).__name__ == "ScoreEventScorer"]
    assert len(ev) == 1
    n = 200_000
    r0 = ev[0](g.laplace(size=(n, 3))).mean()
    r1 = ev[0](1.0 + g.laplace(size=(n, 3))).mean()
    if not ev[0].upper:  # the mirror cell, every coordinate at or below 0: same ratio, e^3
        r0, r1 = r1, r0
    # The cut sits half a lattice step (3/64) below the top value, so the event also holds the
    # sliver of outputs whose score is within 0.023 of 3 (measured: P1 = 0.132 instead of
    # 0.125); its log ratio is then between 2.9 and 3 (3 is the largest any event can have), and
    # with ~1300 runs of the rarer input behind r0 its sampling error is about 0.03.
    assert 0.125 <= r1 < 0.15
    assert 2.8 < math.log(r1 / r0) < 3.1
