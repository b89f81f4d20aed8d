"""The whitened mean-difference direction (dpaudit.blackbox.direction_statistics).

Pinned against independent derivations: scikit-learn's Ledoit-Wolf estimator on the rows, the
streamed fourth moment against the rows, the Gaussian-shift cut against a brute-force search
with scipy's normal law, and the fitted directions' separation against the exact ``mu`` of a
linear-Gaussian release (``||L^{-1} Delta||`` from the release's own map).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpaudit import audit
from dpaudit.blackbox.statistics import PooledEvent, ThresholdEvent
from dpaudit.blackbox.direction_statistics import (DirectionScorer, GaussianEventScorer,
                                                   StreamedMoments, WhitenedDirectionFitter,
                                                   gaussian_shift_cut, pooled_ledoit_wolf,
                                                   sparse_direction, whitened_excess_kurtosis)


def _moments(rows: list[np.ndarray], chunks: int = 1) -> tuple[StreamedMoments, StreamedMoments]:
    out = []
    for x in rows:
        m = StreamedMoments(x.shape[1])
        for part in np.array_split(x, chunks):
            m.add(part)
        out.append(m)
    return out[0], out[1]


def test_streamed_fourth_moment_equals_the_rows() -> None:
    g = np.random.default_rng(0)
    x = g.normal(2.0, 1.5, size=(300, 5)) @ g.normal(size=(5, 5))
    m = StreamedMoments(5)
    for part in np.array_split(x, 7):
        m.add(part)
    w = x - x.mean(axis=0)
    assert m.fourth() == pytest.approx(float(np.sum(np.sum(w * w, axis=1) ** 2)), rel=1e-10)
    assert np.allclose(m.scatter(), w.T @ w, rtol=1e-10, atol=1e-9)


@pytest.mark.parametrize("n, p", [(40, 30), (500, 10), (25, 60)])
def test_pooled_ledoit_wolf_is_sklearns_on_the_centred_rows(n: int, p: int) -> None:
    from sklearn.covariance import ledoit_wolf
    g = np.random.default_rng(n + p)
    a = g.normal(size=(p, p)) / math.sqrt(p)
    x0 = g.normal(size=(n, p)) @ a.T
    x1 = g.normal(size=(n + 7, p)) @ a.T + 3.0
    cov, shrink = pooled_ledoit_wolf(_moments([x0, x1], chunks=3))
    w = np.concatenate([x0 - x0.mean(axis=0), x1 - x1.mean(axis=0)])
    ref, ref_shrink = ledoit_wolf(w, assume_centered=True)
    assert shrink == pytest.approx(ref_shrink, rel=1e-8, abs=1e-12)
    assert np.allclose(cov, ref, rtol=1e-8, atol=1e-10)


def test_sparse_direction_is_the_universal_hard_threshold() -> None:
    se = 0.1
    tau = se * math.sqrt(2 * math.log(4))  # 4 coordinates
    v = np.array([tau * 1.01, -tau * 0.99, -tau * 1.5, 0.0])
    assert sparse_direction(v, se).tolist() == [v[0], 0.0, v[2], 0.0]
    with pytest.raises(ValueError, match="se"):
        sparse_direction(v, 0.0)
    with pytest.raises(ValueError, match="shift"):
        sparse_direction(np.zeros((2, 2)), 1.0)


@pytest.mark.parametrize("mu, n, delta, pooled", [(0.378, 180_000, 1e-5, True),
                                                  (1.0, 10_000, 0.0, False),
                                                  (3.0, 50_000, 1e-2, True)])
def test_gaussian_shift_cut_is_the_best_wilson_projection(mu: float, n: int, delta: float,
                                                          pooled: bool) -> None:
    # Independent derivation: the normal law's tails from scipy.stats, the Wilson ends written
    # out, a finer grid; the function's cut must be within one grid step of the best.
    alpha = 0.025
    c, value = gaussian_shift_cut(mu, n, alpha, delta, pooled)
    m = 2 * n if pooled and delta > 0 else n
    z = stats.norm.isf(alpha)

    def wilson(p: np.ndarray, sign: float) -> np.ndarray:
        centre = p + z * z / (2 * m)
        half = z * np.sqrt(p * (1 - p) / m + z * z / (4 * m * m))
        return (centre + sign * half) / (1 + z * z / m)

    cuts = np.linspace(0.0, 10.0, 20_001)
    lo = wilson(stats.norm.sf(cuts - mu / 2), -1.0)
    hi = wilson(stats.norm.sf(cuts + mu / 2), 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        v = np.where(lo > delta, np.log((lo - delta) / hi), np.log(lo / hi))
    best = int(np.nanargmax(v))
    assert value == pytest.approx(float(v[best]), abs=2e-3)
    assert abs(c - cuts[best]) <= 0.05
    with pytest.raises(ValueError, match="mu"):
        gaussian_shift_cut(0.0, n, alpha, delta, pooled)


def _tree_release(T: int, sigma: float, shift: float):
    """A causal linear-Gaussian release: y_t = sum of the dyadic nodes covering [1, t] (each
    node N(0, sigma^2)), plus a shift of the nodes over [1, 2^j] (the pair changes leaf 1), plus
    a leading constant coordinate (x_1 = 0 of a learner). Returns (mechanism, A, Delta)."""
    nodes = [(s, e) for k in range(int(math.log2(T)) + 1) for s in range(1, T + 1, 2 ** k)
             for e in [s + 2 ** k - 1] if e <= T]
    A = np.zeros((T + 1, len(nodes)))
    for t in range(1, T + 1):
        rest, start = t, 1
        for k in range(int(math.log2(T)), -1, -1):
            if rest >= 2 ** k:
                A[t, nodes.index((start, start + 2 ** k - 1))] = sigma
                start, rest = start + 2 ** k, rest - 2 ** k
    hit = np.array([1.0 if s == 1 else 0.0 for s, _ in nodes])
    delta = (A / sigma) @ (shift * hit)

    def mech(d, n, g):
        return g.normal(size=(n, len(nodes))) @ A.T + d * delta
    return mech, A, delta


def _true_mu(w: np.ndarray, A: np.ndarray, delta: np.ndarray) -> float:
    return abs(float(w @ delta)) / math.sqrt(float(w @ A @ A.T @ w))


def test_thresholded_direction_reaches_the_exact_mu_of_a_tree_release() -> None:
    # T 64: 64 noisy nodes reach the release, leaf 1 in 7 of them; mu = shift sqrt(7) / sigma =
    # 0.265. At 10^4 fit runs per input the whitened shift's noise has standard error
    # se = sqrt(2 / 10^4) = 0.014 per coordinate: the unthresholded direction keeps noise of
    # variance 64 se^2 = 0.0128 against mu^2 = 0.07 (cosine 0.92); the threshold
    # se sqrt(2 ln 64) = 0.041 keeps each of the 7 shifted nodes (0.1, 4.2 se above it: all kept
    # with probability 1 - 1e-4) and each other one with probability 0.004, so its cosine is
    # about 0.99. Seeds 0-2; 0.95 and "4% better than the unthresholded" sit between the two.
    mech, A, delta = _tree_release(64, 1.0, 0.1)
    mu = float(np.linalg.norm(np.linalg.lstsq(A, delta, rcond=None)[0]))
    assert mu == pytest.approx(0.1 * math.sqrt(7), rel=1e-9)
    for seed in range(3):
        g = np.random.default_rng(seed)
        x0, x1 = mech(0, 10_000, g), mech(1, 10_000, g)
        f = WhitenedDirectionFitter()
        f.prepare(x0[:1000], x1[:1000])
        f.update(x0, 0)
        f.update(x1, 1)
        out = f.finish()
        names = [type(o).__name__ for o in out]
        assert names == ["GaussianEventScorer", "DirectionScorer", "DirectionScorer"]
        thr, dense = out[1], out[2]
        assert thr.weights[0] == 0.0 and dense.weights[0] == 0.0  # the constant coordinate
        assert thr.kept == 64
        assert _true_mu(thr.weights, A, delta) >= 0.95 * mu
        assert _true_mu(thr.weights, A, delta) >= 1.04 * _true_mu(dense.weights, A, delta)
        ev = out[0]
        assert ev.inner is thr and ev.events_fixed_on_fit
        s, t = ev(x1[:200]), thr(x1[:200])
        assert ev.cut > 0
        expected = [1.0 if v >= ev.cut else -1.0 if v <= -ev.cut else 0.0 for v in t]
        assert s.tolist() == expected


def test_no_direction_without_correlation_gaussian_shape_or_continuity() -> None:
    g = np.random.default_rng(4)
    f = WhitenedDirectionFitter()
    # independent coordinates: the linear discriminant's diagonal whitening is this already
    f.prepare(g.normal(size=(2000, 8)), g.normal(size=(2000, 8)) + 0.1)
    assert f.finish() == []
    # Laplace innovations (prefix sums): not Gaussian-shaped
    lap = [np.cumsum(g.laplace(size=(2000, 8)), axis=1) for _ in range(2)]
    assert abs(whitened_excess_kurtosis(lap[0], lap[1]) - 3.0) < 0.5
    f.prepare(lap[0], lap[1])
    assert f.finish() == []
    # atoms in a varying coordinate
    gau = [np.cumsum(g.normal(size=(2000, 8)), axis=1) for _ in range(2)]
    assert abs(whitened_excess_kurtosis(gau[0], gau[1])) < 0.3
    for q in gau:
        q[::3, 4] = 0.0
    f.prepare(gau[0], gau[1])
    assert f.finish() == []


def test_direction_is_in_the_default_vector_family_but_not_the_gate() -> None:
    from dpaudit.blackbox.learned_statistics import candidates_for
    assert [c.name for c in candidates_for(8, None)][0] == "whitened-direction"
    assert "whitened-direction" not in [c.name for c in candidates_for(8, None,
                                                                       default_atoms=False)]
    assert "whitened-direction" not in [c.name for c in candidates_for(1, None)]


def test_audit_of_a_correlated_gaussian_release_uses_the_halfspaces() -> None:
    # The tree release above at T 32 (leaf 1 in 6 nodes: mu = 0.1 sqrt(6) = 0.245), claim
    # (1, 1e-5), 10^5 runs per input, seed 0. The exact epsilon of the pair is the Gaussian-shift
    # curve's at 1e-5 (0.906): the bound must stay below it. The oracle (the best event of the
    # exact law, all 10^5 runs on the test; benchmarks/oracle_ratio.oracle_cp) gets 0.584 in the
    # mean, with a test-split spread of about 0.04 (counts near 550 and 260); the default family
    # without this statistic gets 0.355 at this seed (location shift) and the linear discriminant
    # alone 0.268. The halfspaces' pooled pair alone gives 0.551 at this seed (0.504-0.628 on
    # seeds 0-5). 0.45 is three spreads below the oracle and well above both.
    from dpaudit.formal.accounting.closed_forms import gaussian_epsilon
    mech, _, _ = _tree_release(32, 1.0, 0.1)
    exact = gaussian_epsilon(0.1 * math.sqrt(6), 1e-5)
    assert exact == pytest.approx(0.906, abs=1e-3)
    r = audit(mech, 0, 1, epsilon=exact, delta=1e-5, samples=100_000, seed=0)
    assert r.statistic["name"].startswith("whitened mean-difference direction (thresholded), "
                                          "Gaussian-DP")
    assert 0.45 <= r.epsilon_lower_bound <= exact


def test_mirrored_pair_counts_both_halfspaces_and_ranks_at_the_selection_rates() -> None:
    # A hand-made selection split of a three-level score: data1 has 7 scores +1 and 2 scores -1
    # among 40, data0 has 3 scores +1 and 5 scores -1 among 30. The pair {+1 on data1, -1 on
    # data0} counts 7 + 5 = 12 on its numerator side and 3 + 2 = 5 on the other, each over the
    # 70 runs of both inputs. Its rank is the projection at the selection rates (a level-1/2
    # bound is the rate itself) onto 2 n_test test runs: Wilson ends written out from scipy's
    # normal quantile, ln((p_lo - delta) / q_hi).
    inner = DirectionScorer(np.array([1.0, 0.0]), np.zeros(2), 2, 1, 0.1, "d")
    ev = GaussianEventScorer(inner, cut=1.0, mu_fit=0.3)
    s1 = np.array([1.0] * 7 + [-1.0] * 2 + [0.0] * 31)
    s0 = np.array([1.0] * 3 + [-1.0] * 5 + [0.0] * 22)
    n_test, alpha, delta = 500, 0.025, 1e-3
    r = ev.mirrored_pair(s0, s1, n_test=n_test, alpha=alpha, delta=delta)
    assert isinstance(r.event, PooledEvent)
    assert (r.event.first.tail, r.event.first.threshold, r.event.first.numerator) == ("upper", 0, 1)
    assert (r.event.second.tail, r.event.second.threshold, r.event.second.numerator) == (
        "lower", -1, 0)
    assert (r.count1, r.count0, r.nobs0, r.nobs1) == (12, 5, 70, 70)
    m, z = 2 * n_test, stats.norm.isf(alpha)

    def wilson(p: float, sign: float) -> float:
        return (p + z * z / (2 * m) + sign * z * math.sqrt(p * (1 - p) / m + z * z / (4 * m * m))
                ) / (1 + z * z / m)
    expected = math.log((wilson(12 / 70, -1.0) - delta) / wilson(5 / 70, 1.0))
    assert r.rank_value == pytest.approx(expected, rel=1e-9)
    # the event is the scorer's two halfspaces: +1 on x >= cut, -1 on x <= -cut
    x = np.array([[2.0, 0.0], [1.0, 5.0], [0.5, 0.0], [-1.0, 0.0], [-3.0, 0.0]])
    scores = ev(x)
    assert r.event.first.indicator(scores).tolist() == [True, True, False, False, False]
    assert r.event.second.indicator(scores).tolist() == [False, False, False, True, True]
    with pytest.raises(ValueError, match="scores0"):
        ev.mirrored_pair(np.zeros(0), s1, n_test=n_test, alpha=alpha, delta=delta)
    with pytest.raises(ValueError, match="n_test"):
        ev.mirrored_pair(s0, s1, n_test=0, alpha=alpha, delta=delta)


def test_audit_tests_the_pooled_pair_alone_when_it_pools() -> None:
    # The tree release of the audit test above. With delta > 0 (pooled mirrored pairs) the
    # halfspaces' audit evaluates one event, their pooled pair, over both inputs' test runs, at
    # the full level alpha (no half and no hedge beside it); with delta = 0 nothing is pooled and
    # the event is one of the two halfspaces.
    mech, _, _ = _tree_release(32, 1.0, 0.1)
    r = audit(mech, 0, 1, epsilon=1.0, delta=1e-5, samples=40_000, seed=3)
    assert r.statistic["name"].startswith("whitened mean-difference direction (thresholded), "
                                          "Gaussian-DP")
    assert len(r.evaluated_events) == 1 and r.bonferroni.m == 1
    e = r.evaluated_events[0]
    assert isinstance(e.event, PooledEvent)
    assert e.event.first == ThresholdEvent("upper", 0.0, 1)
    assert e.event.second == ThresholdEvent("lower", -1.0, 0)
    assert e.p.nobs == e.q.nobs == 2 * r.n_test
    # a second requested event comes from the ranking, after the pair (Bonferroni over both)
    r2 = audit(mech, 0, 1, epsilon=1.0, delta=1e-5, samples=40_000, seed=3, test_events=2)
    assert r2.bonferroni.m == 2 and len(r2.evaluated_events) == 2
    assert r2.evaluated_events[0].event == e.event
    assert r2.evaluated_events[1].event != e.event
    r0 = audit(mech, 0, 1, epsilon=1.0, delta=0.0, samples=40_000, seed=3)
    assert r0.statistic["name"] == r.statistic["name"]
    assert all(isinstance(e.event, ThresholdEvent) for e in r0.evaluated_events)


def _correlated_gaussian64():
    """A correct 64-dimensional correlated Gaussian release: an AR(1) trajectory,
    ``y = C z + d Delta`` with ``C[i, j] = 0.8^(i - j)`` below the diagonal (neighbouring
    correlations near 0.8, significant on the smallest probe), and a shift of Mahalanobis length 1
    in a fixed random direction, so the pair is exactly a Gaussian shift ``mu = 1``."""
    g0 = np.random.default_rng(7)
    p = 64
    i = np.arange(p)
    c = np.tril(0.8 ** np.abs(i[:, None] - i[None, :]).astype(np.float64))
    z = g0.normal(size=p)
    shift = c @ (z / np.linalg.norm(z))

    def mech(d, n, g):
        return g.normal(size=(n, p)) @ c.T + d * shift
    return mech, 1.0


@pytest.mark.slow
@pytest.mark.parametrize("release", ["dp-ftrl-like tree", "correlated gaussian 64"])
def test_false_alarm_campaign_whitened_direction(release: str) -> None:
    # 1000 audits at 2000 runs per input (the small budget at which the shrinkage and the
    # threshold matter most: 250 fit runs per input against 64 coordinates) of two correct
    # releases, each claimed at its pair's exact epsilon (Gaussian-shift curve at delta 1e-5):
    # a DP-FTRL-like tree (64 noisy nodes, leaf 1 in 7, mu = 0.3 sqrt(7)) and a correlated
    # 64-dimensional Gaussian (mu = 1). A valid auditor is wrong with probability <= alpha = 0.05
    # per audit: more than binom(1000, 0.05).ppf(0.999) = 73 false alarms has probability
    # 6.5e-4 under the null; an auditor at twice the level exceeds it with probability 0.998.
    # Measured (seeds 100000-100999): 0/1000 on both (direction chosen in 969 and 937); see
    # docs/benchmarks.md.
    from dpaudit.formal.accounting.closed_forms import gaussian_epsilon
    if release == "dp-ftrl-like tree":
        mech, _, _ = _tree_release(64, 1.0, 0.3)
        mu = 0.3 * math.sqrt(7)
    else:
        mech, mu = _correlated_gaussian64()
    eps = gaussian_epsilon(mu, 1e-5)
    reps, alpha = 1_000, 0.05
    alarms = chosen = paired = 0
    bounds = []
    for s in range(reps):
        r = audit(mech, 0, 1, epsilon=eps, delta=1e-5, samples=2_000, alpha=alpha,
                  seed=100_000 + s)
        alarms += r.verdict == "violated"
        chosen += r.statistic["name"].startswith("whitened mean-difference")
        # the halfspaces' audits test their pooled mirrored pair alone
        paired += (r.statistic["name"].endswith("Gaussian-DP halfspaces cut on the fit split")
                   and len(r.evaluated_events) == 1
                   and isinstance(r.evaluated_events[0].event, PooledEvent))
        bounds.append(r.epsilon_lower_bound)
    print(f"{release}: {alarms}/{reps} violated, direction chosen in {chosen}, the pooled pair "
          f"alone in {paired}, mean bound {np.mean(bounds):.4g} (claim {eps:.4g})")
    assert chosen >= reps // 2  # the statistic under test is the one exercised
    assert alarms <= int(stats.binom(reps, alpha).ppf(0.999))
