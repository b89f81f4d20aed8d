"""The empirical auditor, audited: contract, validity (false alarms), tightness, detection.

Statistical margins. Every test runs at fixed seeds, so it is deterministic; the comments say how
likely a *correct* auditor would be to fail it at a random seed. False-alarm counts over ``R``
repetitions are compared with ``binom(R, alpha).ppf(0.999)``: a valid auditor (false-alarm
probability <= alpha per repetition) exceeds it with probability < 1e-3.

Single-audit range checks ``lower < bound <= true epsilon``: the upper side is the bound's own
(1 - alpha) guarantee, so at a random seed a correct auditor would break it with probability at
most alpha (0.05); the lower sides lie below what the fixed seeds give and below the exact
value, and guard against a collapse of power rather than pin a seed's value.
"""

from __future__ import annotations

import functools
import json
import math

import numpy as np
import pytest
from scipy import optimize, special, stats

import dpaudit
from dpaudit.blackbox.confidence import Bonferroni, clopper_pearson_lower, clopper_pearson_upper
from dpaudit.blackbox.confidence import epsilon_lower_bound as bound_from_counts
from dpaudit.blackbox.empirical_audit import MIN_PILOT_SAMPLES, PILOT_FRACTION, audit
from dpaudit.blackbox.result import AuditResult
from dpaudit.blackbox.statistics import (LikelihoodRatioFitter, LinearDiscriminantFitter,
                                       ThresholdEvent, ThresholdSweep, UserScorer,
                                       sweep_thresholds)
from dpaudit.mechanisms.exponential import ExponentialMechanism
from dpaudit.mechanisms.gaussian import GaussianMechanism
from dpaudit.mechanisms.laplace import LaplaceMechanism
from dpaudit.mechanisms.sparse_vector import SparseVectorMechanism, first_above_probabilities

# ----------------------------------------------------------------------------------------------
# Reference mechanisms (correctly calibrated unless the name says otherwise)
# ----------------------------------------------------------------------------------------------


def laplace(scale: float) -> LaplaceMechanism:
    """Laplace mechanism on a sensitivity-1 query: data + Lap(scale); eps = 1 / scale."""
    return LaplaceMechanism(1.0, scale)


def gaussian(sigma: float) -> GaussianMechanism:
    """Gaussian mechanism on a sensitivity-1 query: data + N(0, sigma^2); mu = 1 / sigma."""
    return GaussianMechanism(1.0, sigma)


def gaussian_delta(eps: float, mu: float) -> float:
    """Exact delta(eps) of the Gaussian mechanism with shift/sigma = mu (Balle, Wang 2018)."""
    return stats.norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * stats.norm.cdf(-eps / mu - mu / 2)


def gaussian_mu_for(eps: float, delta: float) -> float:
    """The shift/sigma at which the Gaussian mechanism is exactly (eps, delta)-DP."""
    return optimize.brentq(lambda m: gaussian_delta(eps, m) - delta, 1e-3, 20.0)


def randomized_response(eps: float):
    """Binary randomized response: report the bit with probability e^eps / (1 + e^eps)."""
    keep = math.exp(eps) / (1 + math.exp(eps))
    return lambda bit, n, rng: np.where(rng.random(n) < keep, bit, 1 - bit).astype(np.int64)


def above_threshold_without_query_noise(eps: float, threshold: float = 0.5):
    """Faulty AboveThreshold (Dwork and Roth 2014, Alg. 1, sensitivity-1 queries) that adds no
    noise to the queries: noisy threshold T + Lap(2/eps), output the index of the first query at
    or above it, or len(q) if none (the output format of SparseVectorMechanism)."""
    def mech(q, n, rng):
        q = np.asarray(q, dtype=float)
        t_hat = threshold + rng.laplace(0.0, 2.0 / eps, size=(n, 1))
        above = q[None, :] >= t_hat
        return np.where(above.any(axis=1), above.argmax(axis=1), q.size)
    return mech


def noisy_max_with_value(eps: float):
    """Faulty report-noisy-max: Lap(1/eps) noise on sensitivity-1 counts, releases the argmax
    *and* the noisy maximum (only the argmax is eps-DP for monotone counts)."""
    def mech(counts, n, rng):
        noisy = np.asarray(counts, float) + rng.laplace(0.0, 1.0 / eps, size=(n, len(counts)))
        i = noisy.argmax(axis=1)
        return np.stack([i.astype(float), noisy[np.arange(n), i]], axis=1)
    return mech


def tree_prefix_sums_renoised(eps: float, T: int):
    """Faulty binary-tree aggregation (continual counting over T steps, x_t in [0, 1]).

    Correct tree: each of the log2(T) + 1 levels' nodes is noised once with Lap(levels / eps) and
    every released prefix sum reuses the stored node noise (an element is in ``levels`` nodes, so
    the release is eps-DP). Faulty variant: at every step t the prefix sums S_1..S_t are
    re-released, and each query redraws the noise of the popcount(i) nodes that make up S_i, so
    repeated queries average the noise out. Output: the T(T+1)/2 answers, shape (n, T(T+1)/2).
    """
    levels = int(math.log2(T)) + 1
    b = levels / eps
    prefix = np.array([i for t in range(1, T + 1) for i in range(1, t + 1)])
    nodes = np.array([bin(i).count("1") for i in prefix])
    mask = np.arange(nodes.max())[None, :] < nodes[:, None]

    def mech(x, n, rng):
        s = np.cumsum(np.asarray(x, float))[prefix - 1]
        noise = (rng.laplace(0.0, b, size=(n, prefix.size, nodes.max())) * mask).sum(axis=2)
        return s + noise
    return mech


def _false_alarm_ppf(reps: int, alpha: float) -> int:
    # A valid auditor has <= alpha false-alarm probability per repetition; more than this many in
    # `reps` independent repetitions happens with probability < 1e-3.
    return int(stats.binom(reps, alpha).ppf(0.999))


def _poisson_binomial_pvalue(observed: int, probs: np.ndarray) -> float:
    """Two-sided exact p-value of ``observed`` successes among independent Bernoulli(probs).

    Same rule as ``scipy.stats.binomtest``: the total probability of outcomes no more likely than
    the one observed.
    """
    pmf = np.array([1.0])
    for p in probs:
        pmf = np.convolve(pmf, [1.0 - p, p])
    return float(pmf[pmf <= pmf[observed] * (1 + 1e-7)].sum())


def _interval_ends(n: int, a: float) -> tuple[np.ndarray, np.ndarray]:
    """Clopper-Pearson ends ``p_lo(k)``, ``q_hi(k)`` for every count ``k`` of ``n`` runs."""
    k = np.arange(n + 1)
    return (np.asarray(clopper_pearson_lower(k, n, a)),
            np.asarray(clopper_pearson_upper(k, n, a)))


# ----------------------------------------------------------------------------------------------
# Contract
# ----------------------------------------------------------------------------------------------

def test_contract_on_a_user_mechanism_written_in_a_few_lines() -> None:
    def noisy_count(data, n, rng):
        return np.sum(data) + rng.laplace(0.0, 1.0, size=n)   # sensitivity 1, eps = 1

    result = dpaudit.audit(noisy_count, [1, 0, 1], [1, 1, 1], epsilon=1.0, delta=0.0,
                           samples=50_000, alpha=0.05, seed=0)
    assert isinstance(result, AuditResult)
    assert isinstance(result.epsilon_lower_bound, float)
    assert 0.8 < result.epsilon_lower_bound <= 1.0
    assert result.verdict == "not violated"
    d = json.loads(json.dumps(result.to_dict()))
    for key in ("claim", "epsilon_lower_bound", "verdict", "mu_lower_bound", "event", "confidence",
                "samples", "seed", "timing", "histogram", "statistic"):
        assert key in d
    assert d["claim"] == {"epsilon": 1.0, "delta": 0.0}
    assert d["samples"]["per_input"] == 50_000 and d["seed"] == 0
    ev = d["event"]
    assert {"count0", "count1", "nobs0", "nobs1"} <= set(ev["test"])
    # The mu statement is outside the Bonferroni correction of the epsilon statement.
    conf = d["confidence"]
    assert conf["epsilon_statement_level"] == conf["mu_statement_level"] == 0.95
    assert conf["joint_level_at_least"] == pytest.approx(0.9)
    assert d["pairs"]["pilot_runs_total"] == 0 and result.pilot_runs == 0
    assert {"count0", "count1", "nobs0", "nobs1"} <= set(ev["train"])
    assert ev["p_interval"]["lower"] <= ev["p_interval"]["estimate"]
    assert ev["q_interval"]["upper"] >= ev["q_interval"]["estimate"]
    assert d["timing"]["seconds"] >= d["timing"]["sampling_seconds"] > 0
    assert dpaudit.AuditResult is AuditResult


def test_reproducible_from_the_seed_and_sensitive_to_it() -> None:
    mech = laplace(1.0)
    a = audit(mech, 0.0, 1.0, samples=20_000, seed=7).to_dict()
    b = audit(mech, 0.0, 1.0, samples=20_000, seed=7).to_dict()
    c = audit(mech, 0.0, 1.0, samples=20_000, seed=8).to_dict()
    for d in (a, b, c):
        d.pop("timing")
    assert a == b
    assert a["event"]["test"] != c["event"]["test"]


def test_reported_bound_is_recomputable_from_reported_counts() -> None:
    r = audit(laplace(0.8), 0.0, 1.0, epsilon=1.0, samples=30_000, seed=3)
    ev = r.event
    assert ev.p.alpha == r.bonferroni.per_interval_alpha
    assert r.epsilon_lower_bound == pytest.approx(
        bound_from_counts(ev.p.count, ev.p.nobs, ev.q.count, ev.q.nobs, 0.0, r.alpha), rel=1e-12)
    c0, c1 = ev.test_counts
    assert (c1, c0) == ((ev.p.count, ev.q.count) if ev.event.numerator == 1
                        else (ev.q.count, ev.p.count))
    assert r.n_fit + r.n_select + r.n_test == r.samples
    assert r.train_fraction == pytest.approx((r.n_fit + r.n_select) / r.samples)
    h = r.histogram
    assert sum(h["counts0"]) == sum(h["counts1"]) == r.n_test
    assert len(h["edges"]) == len(h["counts0"]) + 1


def test_sampling_uses_fresh_generators_in_chunks() -> None:
    calls = []

    def mech(d, n, rng):
        assert isinstance(rng, np.random.Generator)
        calls.append((d, n, rng, rng.bit_generator.state["state"]["state"]))
        return d + rng.normal(size=n)

    r = audit(mech, 0.0, 1.0, samples=5_000, seed=1, chunk_size=700, rng_probe=False)
    assert sum(n for d, n, _, _ in calls if d == 0.0) == 5_000
    assert sum(n for d, n, _, _ in calls if d == 1.0) == 5_000
    assert max(n for _, n, _, _ in calls[2:]) <= 700 and r.chunk_size == 700
    assert len({id(g) for _, _, g, _ in calls}) == len(calls)
    # Every chunk starts from its own spawned seed: all initial generator states differ.
    assert len({state for *_, state in calls}) == len(calls)


@pytest.mark.parametrize("kwargs,exc,word", [
    ({"epsilon": 0.0}, ValueError, "epsilon"),
    ({"epsilon": -1.0}, ValueError, "epsilon"),
    ({"delta": 1.0}, ValueError, "delta"),
    ({"delta": -0.1}, ValueError, "delta"),
    ({"alpha": 0.0}, ValueError, "alpha"),
    ({"alpha": 1.0}, ValueError, "alpha"),
    ({"samples": 5}, ValueError, "samples"),
    ({"samples": 1000.5}, TypeError, "samples"),
    ({"seed": -1}, ValueError, "seed"),
    ({"train_fraction": 1.0}, ValueError, "train_fraction"),
    ({"test_events": 5}, ValueError, "test_events"),
    ({"output_kind": "ordinal"}, ValueError, "output_kind"),
    ({"chunk_size": 0}, ValueError, "chunk_size"),
    ({"statistic": 3}, TypeError, "statistic"),
])
def test_parameter_validation(kwargs, exc, word) -> None:
    with pytest.raises(exc, match=word):
        audit(laplace(1.0), 0.0, 1.0, **{"samples": 1000, **kwargs})


def test_pairs_validation() -> None:
    with pytest.raises(ValueError, match="pairs"):
        audit(laplace(1.0), 0.0, 1.0, samples=1000, pairs=[(0.0, 1.0)])
    with pytest.raises(ValueError, match="pairs"):
        audit(laplace(1.0), samples=1000, pairs=[])
    with pytest.raises(ValueError, match="pairs\\[0\\]"):
        audit(laplace(1.0), samples=1000, pairs=[(0.0, 1.0, 2.0)])
    with pytest.raises(TypeError, match="mechanism"):
        audit("laplace", 0.0, 1.0, samples=1000)


@pytest.mark.parametrize("mech,match", [
    (lambda d, n, rng: rng.normal(size=n + 1), "leading axis"),
    (lambda d, n, rng: 0.5, "scalar"),
    (lambda d, n, rng: np.full(n, np.nan), "returned nan in run 0"),
    (lambda d, n, rng: np.full(n, np.inf), "returned inf in run 0"),
    (lambda d, n, rng: rng.normal(size=(n, 2 if d == 0 else 3)), "differ"),
    (lambda d, n, rng: rng.normal(size=(n, 1 + (n % 2))), "same output shape"),
])
def test_bad_mechanism_outputs_are_named(mech, match) -> None:
    with pytest.raises(ValueError, match=match):
        audit(mech, 0, 1, samples=1000, chunk_size=333)


# ----------------------------------------------------------------------------------------------
# Built-in statistics and output kinds
# ----------------------------------------------------------------------------------------------

def test_threshold_sweep_counts_match_brute_force() -> None:
    g = np.random.default_rng(5)
    s0 = g.integers(0, 12, size=300).astype(float)
    s1 = g.integers(3, 15, size=250).astype(float)
    sweep = sweep_thresholds(s0, s1, n_test0=1000, n_test1=1000, alpha=0.025)
    assert sweep.n_candidates == 4 * sweep.thresholds.size
    assert np.array_equal(sweep.thresholds, np.unique(np.r_[s0, s1])[:-1])
    for f, (tail, num) in enumerate(ThresholdSweep.FAMILIES):
        for i, t in enumerate(sweep.thresholds):
            ev = ThresholdEvent(tail, t, num)
            assert sweep.count0[f, i] == ev.indicator(s0).sum()
            assert sweep.count1[f, i] == ev.indicator(s1).sum()
    best = sweep.best(4)
    assert len({(r.event.tail, r.event.numerator) for r in best}) == 4
    assert [r.rank_value for r in best] == sorted([r.rank_value for r in best], reverse=True)
    # data1 is shifted up: the best event is an upper tail with data1 as numerator, or its mirror.
    assert (best[0].event.tail, best[0].event.numerator) in {("upper", 1), ("lower", 0)}


def test_threshold_sweep_thins_the_middle_but_keeps_both_tails() -> None:
    g = np.random.default_rng(0)
    s0, s1 = g.normal(size=50_000), g.normal(size=50_000)
    sweep = sweep_thresholds(s0, s1, n_test0=10**6, n_test1=10**6, alpha=0.025,
                             max_thresholds=1000)
    allu = np.unique(np.r_[s0, s1])[:-1]
    assert sweep.thresholds.size <= 1000
    assert np.array_equal(sweep.thresholds[:20], allu[:20])
    assert np.array_equal(sweep.thresholds[-20:], allu[-20:])


def test_linear_discriminant_matches_batch_formula() -> None:
    g = np.random.default_rng(1)
    a = g.normal(size=(4, 4))
    x0 = g.normal(size=(3000, 4)) @ a + 5.0
    x1 = g.normal(size=(2000, 4)) @ a + 5.0 + np.array([1.0, 0.0, -1.0, 0.5])
    fit = LinearDiscriminantFitter()
    for chunk in np.array_split(x0, 3):
        fit.update(chunk, 0)
    for chunk in np.array_split(x1, 4):
        fit.update(chunk, 1)
    (scorer,) = fit.finish()  # one scorer, as every fitter returns a list
    diff = x1.mean(0) - x0.mean(0)
    pooled = ((x0 - x0.mean(0)).T @ (x0 - x0.mean(0)) + (x1 - x1.mean(0)).T @ (x1 - x1.mean(0)))
    pooled /= x0.shape[0] + x1.shape[0] - 2
    assert scorer.whitening == "full"
    assert np.allclose(scorer.weights, np.linalg.solve(pooled, diff), rtol=1e-6)
    # Above max_full_dim, pooled per-coordinate variances replace the matrix.
    diag = LinearDiscriminantFitter(max_full_dim=2)
    diag.update(x0, 0)
    diag.update(x1, 1)
    (d,) = diag.finish()
    assert d.whitening == "diagonal"
    assert np.allclose(d.weights, diff / np.diag(pooled), rtol=1e-6)


def test_likelihood_ratio_scores_outcomes() -> None:
    fit = LikelihoodRatioFitter()
    fit.update(np.array([0, 0, 0, 1]), 0)
    fit.update(np.array([1, 1, 1, 2]), 1)
    (scorer,) = fit.finish()
    # K = 3 outcomes, N0 = N1 = 4: ln((n1 + 1/2) / (n0 + 1/2)).
    expected = np.log(np.array([0.5 / 3.5, 3.5 / 1.5, 1.5 / 0.5]))
    assert np.allclose(scorer(np.array([0, 1, 2, 7])), np.r_[expected, 0.0])

def test_discrete_labels_and_strings() -> None:
    def rr_strings(bit, n, rng):
        keep = rng.random(n) < math.exp(2.0) / (1 + math.exp(2.0))
        return np.where(keep == bool(bit), "yes", "no")
    r = audit(rr_strings, 1, 0, epsilon=1.0, samples=20_000, seed=0)
    assert r.output_kind == "discrete" and r.verdict == "violated"
    assert 1.5 < r.epsilon_lower_bound <= 2.0

    def labels(bit, n, rng):
        out = np.empty(n, dtype=object)
        # None is refused as an output (it is how a broken mechanism says "no value").
        out[:] = [("a", 1) if x else "none" for x in rng.random(n) < (0.7 if bit else 0.3)]
        return out
    r = audit(labels, 1, 0, epsilon=1.0, samples=20_000, seed=0)
    assert r.output_kind == "discrete" and 0.6 < r.epsilon_lower_bound <= math.log(0.7 / 0.3)


def test_discrete_event_is_a_set_of_outcomes_and_the_result_prints_short() -> None:
    def rr_strings(bit, n, rng):
        keep = rng.random(n) < math.exp(2.0) / (1 + math.exp(2.0))
        return np.where(keep == bool(bit), "yes", "no")
    r = audit(rr_strings, 1, 0, epsilon=1.0, samples=20_000, seed=0)
    # Randomised response: the event is one answer, more likely on data0 (bit 1 says "yes").
    assert r.event_outcomes == {"outcomes": ["yes"], "count": 1, "includes_unseen": False,
                                "description": "the set of 1 outcome {'yes'}"}
    assert r.to_dict()["event_outcomes"] == r.event_outcomes
    text = str(r)
    assert text.startswith(f"AuditResult: epsilon >= {r.epsilon_lower_bound:.4g} (95% one-sided")
    assert "  = the set of 1 outcome {'yes'}" in text and "violated" in text.splitlines()[0]
    assert len(text.splitlines()) <= 7 and max(map(len, text.splitlines())) <= 160
    assert r._repr_html_().startswith("<div><b>AuditResult</b>") and "&#x27;yes&#x27;" in \
        r._repr_html_()


def test_discrete_row_outcomes_are_described_as_rows_not_key_bytes() -> None:
    # Rows of integers or booleans are keyed by their bytes (outcome_keys); the event's
    # description must show the rows themselves. Both inputs release two independent coins that
    # land on 1 with probability 0.8 (data1) or 0.2 (data0): the outcomes (1, 1) and (0, 0)
    # have ratio 16, one in each direction, and the chosen event holds one of them.
    def coins(bit, n, rng):
        return (rng.random((n, 2)) < (0.8 if bit else 0.2)).astype(np.int32)
    r = audit(coins, 1, 0, epsilon=1.0, samples=20_000, seed=0)
    assert r.output_kind == "discrete"
    assert {"(1, 1)", "(0, 0)"} & set(r.event_outcomes["outcomes"])
    assert all(o in {"(0, 0)", "(0, 1)", "(1, 0)", "(1, 1)"} for o in r.event_outcomes["outcomes"])
    assert "\\x" not in r.event_outcomes["description"]
    assert r.event_outcomes["description"].startswith(
        f"the set of {r.event_outcomes['count']} outcome")
    bools = audit(lambda b, n, rng: coins(b, n, rng).astype(bool), 1, 0, epsilon=1.0,
                  samples=20_000, seed=0)
    assert bools.event_outcomes["outcomes"] == r.event_outcomes["outcomes"]


def test_discrete_tuples_pick_the_likelihood_ratio_prefix_set() -> None:
    # Outcomes (a, b) with a, b in {0, 1, 2}: data1 moves mass to (2, 2); the best event is
    # {(2, 2)} with ratio 3 (every other outcome has ratio 3/4).
    p0 = np.full(9, 1 / 9)
    p1 = np.r_[np.full(8, 1 / 12), 3 / 9]
    grid = np.array([(a, b) for a in range(3) for b in range(3)])

    def mech(which, n, rng):
        return grid[rng.choice(9, size=n, p=p1 if which else p0)]
    r = audit(mech, 0, 1, epsilon=2.0, samples=200_000, seed=2)
    assert r.output_kind == "discrete"
    assert math.log(3) * 0.9 < r.epsilon_lower_bound <= math.log(3)


def test_vector_outputs_use_a_whitened_discriminant() -> None:
    # N(0, S) vs N(m, S) with strongly correlated S: the exact Gaussian-DP parameter is the
    # Mahalanobis distance; a plain difference of means would give a much smaller mu.
    rng = np.random.default_rng(0)
    a = rng.normal(size=(6, 6))
    cov = a @ a.T + 0.05 * np.eye(6)
    chol = np.linalg.cholesky(cov)
    shift = np.array([1.0, -1.0, 0.5, 0.0, 0.3, 0.2])
    scale = 1.0 / math.sqrt(shift @ np.linalg.solve(cov, shift))
    shift = shift * scale  # exact mu = 1
    naive_mu = (shift @ shift) / math.sqrt(shift @ cov @ shift)

    def mech(which, n, g):
        return which * shift + g.normal(size=(n, 6)) @ chol.T
    r = audit(mech, 0, 1, epsilon=5.0, samples=300_000, seed=1, statistics=["linear"])
    assert r.statistic["whitening"] == "full"
    # Valid bound at or below 1; 0.93 is within the bound's sampling noise at 2.7e5 test runs
    # (the interval half-width on mu is about 0.01).
    assert 0.93 < r.mu_lower_bound <= 1.0
    # The default family chooses the whitened direction's fit-split halfspaces here (epsilon
    # bound 3.23 against the discriminant's 2.62 at this seed); their Gaussian-DP event is a
    # tail event, so its mu bound is looser (0.916 at this seed) but still valid.
    d = audit(mech, 0, 1, epsilon=5.0, samples=300_000, seed=1)
    assert d.statistic["name"].startswith("whitened mean-difference direction")
    assert d.epsilon_lower_bound > r.epsilon_lower_bound
    assert 0.85 < d.mu_lower_bound <= 1.0
    assert naive_mu < 0.8


def test_trajectories_are_flattened_and_user_statistic_replaces_builtin() -> None:
    def traj(which, n, g):  # (n, T, d) trajectory; the change enters coordinate 0 at every step
        x = g.normal(size=(n, 8, 2))
        x[:, :, 0] += 0.25 * which
        return x
    r = audit(traj, 0, 1, epsilon=5.0, samples=100_000, seed=0)
    assert r.statistic["dimension"] == 16
    # Exact mu = 0.25 * sqrt(8) = 0.707.
    assert 0.6 < r.mu_lower_bound <= 0.75
    u = audit(traj, 0, 1, epsilon=5.0, samples=100_000, seed=0,
              statistic=lambda out: out[:, :, 0].sum(axis=1))
    assert u.output_kind == "user" and u.n_fit == 0
    assert 0.6 < u.mu_lower_bound <= 0.75
    with pytest.raises(ValueError, match="1-D array"):
        audit(traj, 0, 1, samples=1_000, statistic=lambda out: out[:, 0, :])


def test_user_statistic_must_act_row_wise() -> None:
    def null(d, n, g):
        return g.normal(size=n)
    # A statistic of the whole chunk makes the counts non-binomial. Before this check, this one
    # gave positive bounds in 53 of 200 audits of the null mechanism at alpha = 0.05 (chunks of
    # 100 runs); now it is rejected on the probe, whatever the chunk size.
    with pytest.raises(ValueError, match="row-wise.*one batch"):
        audit(null, 0, 1, samples=2_000, seed=0, statistic=lambda o: o + 10 * o.mean(),
              chunk_size=100)
    with pytest.raises(ValueError, match="row-wise"):   # ranks within the batch
        audit(null, 0, 1, samples=2_000, seed=0,
              statistic=lambda o: np.argsort(np.argsort(o)) / o.size)
    noise = np.random.default_rng(0)
    with pytest.raises(ValueError, match="row-wise"):   # its own randomness
        audit(null, 0, 1, samples=2_000, seed=0,
              statistic=lambda o: o + noise.normal(size=o.shape[0]))
    # Depends on the row position with period 2: the probes (250 runs each) are split at an even
    # row, so only the permutation check sees it.
    with pytest.raises(ValueError, match="permuted order"):
        audit(null, 0, 1, samples=2_000, seed=0, statistic=lambda o: o + np.arange(o.size) % 2)
    # Row-wise statistics pass, including through a matrix product (BLAS may reorder sums).
    ok = audit(null, 0, 1, samples=2_000, seed=0,
               statistic=lambda o: np.stack([o, o ** 2, o ** 3], axis=1) @ np.array([1, .3, .1]))
    assert ok.output_kind == "user" and ok.epsilon_lower_bound == 0.0
    scorer = UserScorer(lambda o: 2.0 * o[:, 0])
    s0, s1 = scorer.check_row_wise(np.ones((3, 2)), np.zeros((4, 2)))
    assert np.array_equal(s0, np.full(3, 2.0)) and np.array_equal(s1, np.zeros(4))


def test_inputs_are_required() -> None:
    mech = laplace(1.0)
    with pytest.raises(TypeError, match="missing: data0, data1"):
        audit(mech)
    with pytest.raises(TypeError, match="missing: data1"):
        audit(mech, 0.0, samples=1_000)
    with pytest.raises(ValueError, match="both None"):
        audit(lambda d, n, g: g.normal(size=n), None, None, samples=1_000)
    with pytest.raises(ValueError, match="not both"):
        audit(mech, 0.0, 1.0, pairs=[(0.0, 1.0)], samples=1_000)
    # Wrappers that forward None defaults together with pairs= keep working, and None is a
    # legitimate value for one input.
    via = audit(mech, None, None, pairs=[(0.0, 1.0)], samples=1_000, seed=1)
    assert via.epsilon_lower_bound == audit(mech, 0.0, 1.0, samples=1_000,
                                            seed=1).epsilon_lower_bound
    r = audit(lambda d, n, g: (d or 0.0) + g.laplace(size=n), None, 1.0, samples=1_000)
    assert r.epsilon_lower_bound <= 1.0


def test_deterministic_mechanism_gives_bound_limited_only_by_samples() -> None:
    r = audit(lambda d, n, g: np.full(n, float(d)), 0, 1, samples=10_000, seed=0)
    # Perfect separation: p_lo close to 1, q_hi = 1 - a^(1/n) on ~9000 test runs: ln(n / 3.7).
    assert r.epsilon_lower_bound > 7.0 and r.verdict == "violated"
    same = audit(lambda d, n, g: np.zeros(n), 0, 1, samples=1_000, seed=0)
    assert same.epsilon_lower_bound == 0.0 and same.event is None
    # No event exists: the record still has every key, with counts 0 and null intervals.
    full, empty = r.to_dict(), json.loads(json.dumps(same.to_dict()))
    for key in ("event", "gdp_event"):
        assert set(empty[key]) == set(full[key]) | {"note"}
        assert set(empty[key]["test"]) == set(full[key]["test"])
        assert empty[key]["test"] == {"count0": 0, "count1": 0, "nobs0": same.n_test,
                                      "nobs1": same.n_test}
        assert empty[key]["p_interval"] is None and empty[key]["q_interval"] is None
        assert empty[key]["epsilon_lower_bound"] == 0.0
    assert empty["evaluated_events"] == []
    piloted = audit(lambda d, n, g: np.zeros(n), pairs=[(0, 1), (1, 0)], samples=1_000)
    for rec in piloted.to_dict()["pairs"]["pilot"]:
        assert rec["event"]["count0"] == rec["event"]["count1"] == 0
        assert rec["event"]["projected_bound"] == "-inf"


def test_multiple_test_events_are_bonferroni_corrected() -> None:
    r = audit(laplace(1.0), 0.0, 1.0, samples=100_000, seed=0, test_events=4)
    assert r.bonferroni.m == r.bonferroni_factor == 4 == len(r.evaluated_events)
    assert r.bonferroni.per_interval_alpha == pytest.approx(1 - math.sqrt(1 - 0.05 / 4))
    assert all(e.p.alpha == r.bonferroni.per_interval_alpha for e in r.evaluated_events)
    assert r.epsilon_lower_bound == max(e.epsilon_lower_bound for e in r.evaluated_events)
    families = {(e.event.tail, e.event.numerator) for e in r.evaluated_events}
    assert len(families) == 4


def test_candidate_pairs_pilot_then_fresh_main_run() -> None:
    mech = laplace(1.0)
    r = audit(mech, pairs=[(0.0, 0.0), (0.0, 0.2), (0.0, 1.0), (0.5, 0.5)], epsilon=1.0,
              samples=100_000, seed=4)
    assert r.pair_index == 2
    # Default pilot: 20% of samples in total across the 4 pairs.
    assert len(r.pilot) == 4 and r.pilot_samples == int(PILOT_FRACTION * 100_000) // 4 == 5_000
    assert r.pilot_runs == 2 * 4 * 5_000
    assert r.to_dict()["pairs"]["pilot_fraction_of_samples"] == 0.2
    projected = [p["projected_log_ratio_bound"] for p in r.pilot]
    assert max(projected) == projected[2]
    assert 0.85 < r.epsilon_lower_bound <= 1.0
    # The main run uses stream 0 whatever the pilot did: a single pair reproduces data0/data1.
    single = audit(mech, pairs=[(0.0, 1.0)], samples=20_000, seed=4)
    plain = audit(mech, 0.0, 1.0, samples=20_000, seed=4)
    assert single.epsilon_lower_bound == plain.epsilon_lower_bound and single.pilot == ()
    assert json.dumps(r.to_dict())


def test_pilot_budget_and_disjoint_seed_streams() -> None:
    # Record the SeedSequence spawn key of every mechanism call: (run, input, chunk) with run 0
    # the main run and run 1 + j the pilot of pair j.
    calls: list[tuple[float, int, tuple[int, ...]]] = []

    def mech(d, n, rng):
        calls.append((d, n, rng.bit_generator.seed_seq.spawn_key))
        return d + rng.laplace(size=n)
    pairs = [(0.0, 0.5), (0.0, 1.0), (0.0, 2.0)]
    r = audit(mech, pairs=pairs, samples=30_000, seed=3, chunk_size=2_000, rng_probe=False)
    n_pilot = int(PILOT_FRACTION * 30_000) // 3
    assert r.pilot_samples == n_pilot == 2_000
    d = r.to_dict()["pairs"]
    assert d["pilot_runs_per_input"] == 3 * n_pilot and d["pilot_runs_total"] == r.pilot_runs
    assert r.pilot_runs == 2 * 3 * n_pilot and d["pilot_fraction_of_samples"] == PILOT_FRACTION
    keys = [k for _, _, k in calls]
    assert len(set(keys)) == len(keys)                  # every chunk has its own stream
    assert {k[0] for k in keys} == {0, 1, 2, 3}
    for run in range(4):
        data = pairs[r.pair_index] if run == 0 else pairs[run - 1]
        budget = 30_000 if run == 0 else n_pilot
        for j in (0, 1):
            mine = [(x, n, k) for x, n, k in calls if k[:2] == (run, j)]
            assert all(x == data[j] for x, _, _ in mine)
            assert sum(n for _, n, _ in mine) == budget
            assert [k[2] for _, _, k in mine] == list(range(len(mine)))  # drawing order
    main = {k for k in keys if k[0] == 0}
    pilot = {k for k in keys if k[0] != 0}
    assert main and pilot and not main & pilot
    # The main run is the plain audit of the chosen pair: the pilot never touches stream 0.
    plain = audit(lambda x, n, g: x + g.laplace(size=n), *pairs[r.pair_index], samples=30_000,
                  seed=3, chunk_size=2_000)
    assert plain.event.test_counts == r.event.test_counts
    # With many pairs for the budget the documented per-pair floor binds.
    few = audit(mech, pairs=pairs, samples=1_000, seed=0)
    assert int(PILOT_FRACTION * 1_000) // 3 < MIN_PILOT_SAMPLES == few.pilot_samples == 100


# ----------------------------------------------------------------------------------------------
# Validity: false alarms on correctly calibrated mechanisms (worst-case neighbours)
# ----------------------------------------------------------------------------------------------

_MU_1E5 = gaussian_mu_for(1.0, 1e-5)
_MU_5E2 = gaussian_mu_for(1.0, 0.05)
_K = 10
# Utilities (maximised), P[i] ~ exp(eps u_i / 2) with sensitivity 1 (McSherry and Talwar 2007).
_EXPONENTIAL = ExponentialMechanism.from_epsilon(1.0, 1.0, form="half", maximize=True)
_U0, _U1 = np.r_[1.0, np.zeros(_K - 1)], np.r_[0.0, np.ones(_K - 1)]
CALIBRATED = {
    # name: (mechanism, data0, data1, delta); each pair attains (or nearly attains) the claim.
    "laplace": (laplace(1.0), 0.0, 1.0, 0.0),
    "gaussian-delta-1e-5": (gaussian(1 / _MU_1E5), 0.0, 1.0, 1e-5),
    "gaussian-delta-0.05": (gaussian(1 / _MU_5E2), 0.0, 1.0, 0.05),
    "randomized-response": (randomized_response(1.0), 1, 0, 0.0),
    # Below-then-above queries: exact epsilon 0.981 (test_sparse_vector_pair_is_nearly_tight).
    "sparse-vector": (SparseVectorMechanism(1.0, 0.5), [0] * 9 + [1], [1] * 9 + [0], 0.0),
    # Utility of outcome 0 up by 1, all others down by 1: ratio e^{eps/2} Z/Z' -> e^eps as k
    # grows; exact epsilon 0.897 at k = 10 (test_exponential_pair_is_nearly_tight).
    "exponential": (_EXPONENTIAL, _U0, _U1, 0.0),
}


def test_sparse_vector_pair_is_nearly_tight() -> None:
    # The exact output law of AboveThreshold (numerical integration) on the false-alarm pair: its
    # largest log ratio is 0.981 of the claimed epsilon = 1, so the pair is nearly worst case.
    # That alone gives test_false_alarm_rate_at_most_alpha little power on it: at 10^4 runs the
    # bound averages about 0.14, far below the claim, so that test only catches gross errors
    # (e.g. a train/test leak on rare outcomes). The level itself is checked by the exact-rate
    # tests (*_matches_exact_calculation) and the exact interval coverage of test_confidence.py.
    p = first_above_probabilities(np.array([0.0] * 9 + [1.0]), 0.5, 2.0, 4.0)
    q = first_above_probabilities(np.array([1.0] * 9 + [0.0]), 0.5, 2.0, 4.0)
    assert np.max(np.abs(np.log(p / q))) == pytest.approx(0.981, abs=1e-3)


def test_exponential_pair_is_nearly_tight() -> None:
    lp0, lp1 = _EXPONENTIAL.log_probabilities(_U0), _EXPONENTIAL.log_probabilities(_U1)
    w = math.exp(0.5)
    assert np.max(np.abs(lp0 - lp1)) == pytest.approx(
        math.log(w * (1 + (_K - 1) * w) / (w + _K - 1)), rel=1e-12)
    assert np.max(np.abs(lp0 - lp1)) == pytest.approx(0.897, abs=1e-3)


@pytest.mark.parametrize("name", sorted(CALIBRATED))
def test_false_alarm_rate_at_most_alpha(name: str) -> None:
    mech, d0, d1, delta = CALIBRATED[name]
    # Power: at alpha = 0.25 per audit (validity must hold at every level; a larger
    # level makes alarms frequent enough to count), R = 80 audits and the rule "fail when more than
    # c = binom(80, 0.25).ppf(0.999) = 33 alarms": false-failure probability for a valid auditor
    # binom(80, 0.25).sf(33) = 4.6e-4; power against an auditor at 2x the nominal rate (0.5 per
    # audit) binom(80, 0.5).sf(33) = 0.927. (The former 200 audits at alpha = 0.05 had power
    # binom(200, 0.10).sf(21) = 0.35 against 2x.)
    reps, alpha = 80, 0.25
    bounds = np.array([audit(mech, d0, d1, epsilon=1.0, delta=delta, samples=10_000, alpha=alpha,
                             seed=s).epsilon_lower_bound for s in range(reps)])
    false_alarms = int(np.sum(bounds > 1.0))
    print(f"{name}: {false_alarms}/{reps} false alarms, mean bound {bounds.mean():.3f}")
    assert false_alarms <= _false_alarm_ppf(reps, alpha)


@pytest.mark.parametrize("kind", ["discrete-64", "vector-30"])
def test_null_mechanism_shows_no_privacy_loss_beyond_alpha(kind: str) -> None:
    # Identical output laws on both inputs: the true epsilon is 0, so any positive bound is a false
    # alarm. Many outcomes / many dimensions make a train-test leak show up at once (the best of
    # dozens of noisy events would look significant).
    if kind == "discrete-64":
        def mech(d, n, g):
            return g.integers(0, 64, size=n)
    else:
        def mech(d, n, g):
            return g.normal(size=(n, 30))
    # Power: at alpha = 0.25 per audit (validity must hold at every level; a larger
    # level makes positive bounds frequent enough to count), R = 80 audits and the rule "fail when more than
    # c = binom(80, 0.25).ppf(0.999) = 33 positive bounds": false-failure probability for a valid auditor
    # binom(80, 0.25).sf(33) = 4.6e-4; power against an auditor at 2x the nominal rate (0.5 per
    # audit) binom(80, 0.5).sf(33) = 0.927. (The former 200 audits at alpha = 0.05 had power
    # binom(200, 0.10).sf(21) = 0.35 against 2x.)
    # A train/test leak is caught deterministically by test_null_power.test_test_split_runs_are_fresh
    # (false-failure probability ~0, power 1 against reuse of the training runs).
    reps, alpha = 80, 0.25
    positives = sum(audit(mech, 0, 1, samples=2_000, alpha=alpha, seed=s).epsilon_lower_bound > 0
                    for s in range(reps))
    print(f"{kind}: {positives}/{reps} positive bounds")
    assert positives <= _false_alarm_ppf(reps, alpha)


def test_randomized_response_false_alarm_rate_matches_exact_calculation() -> None:
    # For binary RR every sensible event is {reported bit = true bit} (or its mirror image, with the
    # same two probabilities), so the false-alarm probability is an exact double binomial sum. The
    # measured rate must match it: too many means anti-conservative intervals, too few means
    # wasted level (e.g. a Bonferroni factor counted twice). alpha = 0.3 makes the rate large
    # enough to measure.
    eps, alpha, samples, reps = 1.0, 0.3, 2_000, 400
    keep = math.exp(eps) / (1 + math.exp(eps))
    results = [audit(randomized_response(eps), 1, 0, epsilon=eps, samples=samples, alpha=alpha,
                     seed=s) for s in range(reps)]
    n = results[0].n_test
    assert all(r.event.p.count > r.event.q.count for r in results)
    a = 1.0 - math.sqrt(1.0 - alpha)  # written out, so that a level error in Bonferroni shows
    k = np.arange(n + 1)
    p_lo = clopper_pearson_lower(k, n, a)
    q_hi = clopper_pearson_upper(k, n, a)
    # Violation iff p_lo(Kp) > e^eps q_hi(Kq); q_hi is increasing in Kq.
    kq_max = np.searchsorted(q_hi, p_lo / math.exp(eps), side="left") - 1
    exact = float(np.sum(stats.binom.pmf(k, n, keep) * stats.binom.cdf(kq_max, n, 1 - keep)))
    observed = sum(r.verdict == "violated" for r in results)
    print(f"RR: observed {observed}/{reps}, exact probability {exact:.4f}")
    assert exact <= alpha
    # Two-sided exact binomial test: a correct auditor fails it with probability 1e-3.
    assert stats.binomtest(observed, reps, exact).pvalue > 1e-3


def test_four_test_events_false_alarm_rate_matches_exact_calculation() -> None:
    # Binary RR with test_events = 4: the four evaluated events are {1} and {0}, each in both
    # directions, and all are functions of the test counts (c0, c1) of outcome 1 on data0 and
    # data1, so P[false alarm] is an exact double binomial sum over (c0, c1). Each interval is at
    # a = 1 - sqrt(1 - alpha / 4), written out here (not taken from Bonferroni) so that a level
    # error anywhere in the engine shows. alpha = 0.8 makes the rate measurable: exact 0.082;
    # with every interval at alpha / 4 it would be 0.20, with the factor 4 applied twice 0.010,
    # without the factor 0.69; a 400-repetition binomial test at 1e-3 catches each of these with
    # probability > 0.9998. Verified by monkeypatching Bonferroni (intervals at alpha / m, at
    # alpha / (4 m), factor m applied twice): the rate test alone fails for each.
    eps, alpha, samples, reps, m = 1.0, 0.8, 2_000, 400, 4
    keep = math.exp(eps) / (1 + math.exp(eps))
    results = [audit(randomized_response(eps), 1, 0, epsilon=eps, samples=samples, alpha=alpha,
                     seed=s, test_events=m) for s in range(reps)]
    n = results[0].n_test
    a = 1.0 - math.sqrt(1.0 - alpha / m)
    p_lo, q_hi = _interval_ends(n, a)
    # alarm[kp, kq]: the event with kp occurrences on the numerator input and kq on the other
    # gives a bound above eps.
    alarm = p_lo[:, None] > math.exp(eps) * q_hi[None, :]
    # Union over ({1}, num 0), ({1}, num 1), ({0}, num 0), ({0}, num 1) at counts (c0, c1).
    any_alarm = alarm | alarm.T | alarm[::-1, ::-1] | alarm.T[::-1, ::-1]
    k = np.arange(n + 1)
    exact = float(stats.binom.pmf(k, n, keep) @ any_alarm @ stats.binom.pmf(k, n, 1 - keep))
    for r in results:
        assert r.bonferroni.m == len(r.evaluated_events) == m
        assert all(e.p.alpha == pytest.approx(a, rel=1e-12) for e in r.evaluated_events)
        c0, c1 = r.evaluated_events[0].test_counts
        counts = sorted(e.test_counts for e in r.evaluated_events)
        assert counts == sorted([(c0, c1), (c0, c1), (n - c0, n - c1), (n - c0, n - c1)])
        # The verdict is exactly the union computed here (any_alarm is symmetric under
        # complementing the event, so either set's counts index it).
        assert (r.verdict == "violated") == bool(any_alarm[c0, c1])
    observed = sum(r.verdict == "violated" for r in results)
    print(f"RR, 4 test events: observed {observed}/{reps}, exact probability {exact:.4f}")
    assert exact <= alpha
    assert stats.binomtest(observed, reps, exact).pvalue > 1e-3


def tight_with_delta(eps: float, delta: float):
    """Three outcomes, P0 = [delta, e a, a], P1 = [0, a, e a + delta] with e = e^eps and
    a = (1 - delta) / (1 + e): exactly (eps, delta)-DP, tight in both directions ({0, 1} from
    data0, {2} from data1 both have P = e Q + delta, and so has {0} from data0: P = delta,
    Q = 0)."""
    e = math.exp(eps)
    a = (1 - delta) / (1 + e)
    laws = (np.array([delta, e * a, a]), np.array([0.0, a, e * a + delta]))
    return (lambda which, n, rng: rng.choice(3, size=n, p=laws[which])), laws


def test_tight_delta_mechanism_is_exactly_eps_delta_dp() -> None:
    _, (p0, p1) = tight_with_delta(1.0, 0.05)
    assert p0.sum() == pytest.approx(1.0) and p1.sum() == pytest.approx(1.0)
    subsets = [np.array([i in s for i in range(3)]) for s in
               ((0,), (1,), (2,), (0, 1), (0, 2), (1, 2))]
    slack = [min(math.e * q[s].sum() + 0.05 - p[s].sum() for s in subsets)
             for p, q in ((p0, p1), (p1, p0))]
    assert slack == pytest.approx([0.0, 0.0], abs=1e-12)


def test_delta_false_alarm_rate_matches_exact_calculation() -> None:
    # Exactly (1, 0.05)-tight three-outcome mechanism; identity scores (output_kind="continuous"),
    # so every threshold event is a set of outcomes with known probabilities (p, q). The event
    # depends on the training split only, so given it the verdict is Bernoulli with the exact
    # probability F(p, q) = P[p_lo(Kp) - delta > e q_hi(Kq)]; the count over the repetitions is
    # Poisson-binomial. At alpha = 0.3 the rate is 0.097 for both tight events; with each interval
    # at alpha it would be 0.24, at alpha / 4 0.029, ignoring delta 0.59, subtracting it twice
    # 0.002: a 400-repetition test at 1e-3 catches each with probability > 0.99. Verified by
    # monkeypatching (intervals at alpha, at alpha / 4, delta dropped from ln((p_lo - delta) /
    # q_hi)): the rate test alone fails for each.
    eps, delta, alpha, samples, reps = 1.0, 0.05, 0.3, 2_000, 400
    mech, laws = tight_with_delta(eps, delta)
    results = [audit(mech, 0, 1, epsilon=eps, delta=delta, samples=samples, alpha=alpha, seed=s,
                     output_kind="continuous") for s in range(reps)]
    n = results[0].n_test
    a = 1.0 - math.sqrt(1.0 - alpha)
    p_lo, q_hi = _interval_ends(n, a)
    k = np.arange(n + 1)
    # Violation iff q_hi(Kq) < (p_lo(Kp) - delta) / e^eps; q_hi is increasing in Kq.
    kq_max = np.searchsorted(q_hi, (p_lo - delta) / math.exp(eps), side="left") - 1
    outcomes = np.arange(3)
    probs = []
    for r in results:
        ev = r.event.event
        in_set = outcomes > ev.threshold if ev.tail == "upper" else outcomes <= ev.threshold
        p, q = laws[ev.numerator][in_set].sum(), laws[1 - ev.numerator][in_set].sum()
        probs.append(float(np.sum(stats.binom.pmf(k, n, p) * stats.binom.cdf(kq_max, n, q))))
        kp, kq = r.event.p.count, r.event.q.count
        assert (r.verdict == "violated") == bool(p_lo[kp] - delta > math.exp(eps) * q_hi[kq])
    probs = np.array(probs)
    observed = sum(r.verdict == "violated" for r in results)
    print(f"(1, {delta}) tight: observed {observed}/{reps}, exact expectation {probs.sum():.1f}, "
          f"per-event probabilities {sorted({round(float(x), 4) for x in probs})}")
    assert probs.max() <= alpha
    assert _poisson_binomial_pvalue(observed, probs) > 1e-3


def symmetric_tight_with_delta(eps: float, delta: float, c: float = 0.4):
    """Three outcomes, P0 = [delta + e w, c, w] and P1 = its mirror image [w, c, delta + e w]
    (e = e^eps, w from normalisation): exactly (eps, delta)-DP and tight only on {0} from data0
    and its mirror {2} from data1 ({0, 1} has P0 - e P1 = delta - (e - 1) c), so the pooled
    mirrored pair of the two (PooledEvent) is tight too, with twice the runs: p = delta + e w,
    q = w."""
    e = math.exp(eps)
    w = (1 - delta - c) / (1 + e)
    p0 = np.array([delta + e * w, c, w])
    laws = (p0, p0[::-1].copy())
    return (lambda which, n, rng: rng.choice(3, size=n, p=laws[which])), laws


def _multinomial_pmf2(n: int, pa: float, pb: float) -> np.ndarray:
    """pmf[a, b] of the counts of two disjoint events (probabilities pa, pb) in n runs."""
    k = np.arange(n + 1, dtype=float)
    a, b = k[:, None], k[None, :]
    rest = n - a - b
    ok = rest >= 0
    r = np.where(ok, rest, 0.0)
    logp = (special.gammaln(n + 1) - special.gammaln(a + 1) - special.gammaln(b + 1)
            - special.gammaln(r + 1) + special.xlogy(a, pa) + special.xlogy(b, pb)
            + special.xlogy(r, 1.0 - pa - pb))
    return np.where(ok, np.exp(logp), 0.0)


def test_pooled_mirrored_events_false_alarm_rate_matches_exact_calculation(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # A symmetric, exactly (1, 0.05)-tight four-outcome mechanism with identity scores: the
    # selection split mostly picks a pooled mirrored pair (an outcome set from data1 together
    # with its mirror image from data0), whose statement uses Kp = #data1 runs in the first
    # event + #data0 runs in the second over 2n runs, and Kq the other way round. Given the
    # chosen events (functions of the training split only), the alarm probability is exact:
    # (#data0 in first, #data0 in second) and (#data1 in first, #data1 in second) are
    # independent multinomial pairs, so the joint law of (Kp, Kq) is the 2-D convolution of two
    # multinomial pmfs, and an alarm is p_lo(Kp) - delta > e^eps q_hi(Kq) with the binomial
    # Clopper-Pearson ends over 2n runs at a = 1 - sqrt(1 - alpha) (written out here). The count
    # over repetitions is Poisson-binomial. alpha = 0.3 makes the rate measurable: 0.118 for the
    # pooled pair {2} from data1 + {0} from data0 (checked against 2e5 simulated count pairs:
    # 0.119), 0.086 for the single event {0}. By the same exact calculation, pooled intervals at
    # alpha instead of 1 - sqrt(1 - alpha) would give 0.26 and dropping delta 0.84: with ~200
    # pooled repetitions the rate test fails for either. (Seeds 300-1099: 55 alarms in 559
    # pooled repetitions, 21 in 241 single ones.)
    # The hedge events (training.HEDGE_RANKINGS) are switched off here so that one event is
    # evaluated per audit; test_hedge_events_false_alarm_rate_matches_exact_calculation covers
    # them.
    from scipy import signal

    from dpaudit.blackbox import training
    from dpaudit.blackbox.statistics import PooledEvent

    monkeypatch.setattr(training, "HEDGE_RANKINGS", ())
    eps, delta, alpha, samples, reps = 1.0, 0.05, 0.3, 2_000, 300
    mech, laws = symmetric_tight_with_delta(eps, delta)
    results = [audit(mech, 0, 1, epsilon=eps, delta=delta, samples=samples, alpha=alpha, seed=s,
                     output_kind="continuous") for s in range(reps)]
    n = results[0].n_test
    a = 1.0 - math.sqrt(1.0 - alpha)
    outcomes = np.arange(3)

    def in_set(ev) -> np.ndarray:
        return outcomes > ev.threshold if ev.tail == "upper" else outcomes <= ev.threshold

    cache: dict[str, float] = {}
    probs = []
    pooled = 0
    for r in results:
        ev = r.event.event
        key = json.dumps(ev.to_dict(), sort_keys=True)
        if isinstance(ev, PooledEvent):
            pooled += 1
            e1, e2 = in_set(ev.first), in_set(ev.second)
            assert not np.any(e1 & e2)
            c = r.event.components
            assert r.event.p.count == c[0][1] + c[1][0] and r.event.q.count == c[0][0] + c[1][1]
            assert r.event.p.nobs == r.event.q.nobs == 2 * n
            assert r.event.p.alpha == pytest.approx(a, rel=1e-12)
            if key not in cache:
                # data0: (A0 = #first -> Kq, B0 = #second -> Kp); data1: (A1 -> Kp, B1 -> Kq).
                m0 = _multinomial_pmf2(n, laws[0][e2].sum(), laws[0][e1].sum())  # [B0, A0]
                m1 = _multinomial_pmf2(n, laws[1][e1].sum(), laws[1][e2].sum())  # [A1, B1]
                joint = np.clip(signal.fftconvolve(m0, m1), 0.0, None)  # [Kp, Kq]
                lo, hi = _interval_ends(2 * n, a)
                lo = np.where(np.arange(2 * n + 1) >= 2, lo, 0.0)
                hi = np.where(np.arange(2 * n + 1) <= 2 * n - 2, hi, 1.0)
                alarm = (lo[:, None] - delta) > math.exp(eps) * hi[None, :]
                cache[key] = float(np.sum(joint * alarm))
        elif key not in cache:
            s_ = in_set(ev)
            p, q = laws[ev.numerator][s_].sum(), laws[1 - ev.numerator][s_].sum()
            lo, hi = _interval_ends(n, a)
            kq_max = np.searchsorted(hi, (lo - delta) / math.exp(eps), side="left") - 1
            k = np.arange(n + 1)
            cache[key] = float(np.sum(stats.binom.pmf(k, n, p) * stats.binom.cdf(kq_max, n, q)))
        probs.append(cache[key])
    probs = np.array(probs)
    observed = sum(r.verdict == "violated" for r in results)
    print(f"pooled (1, {delta}) tight: {pooled}/{reps} pooled, observed {observed}, exact "
          f"expectation {probs.sum():.1f}, per-event {sorted({round(x, 4) for x in probs})}")
    assert pooled >= reps // 2  # the rule under test is the one exercised
    assert probs.max() <= alpha
    assert _poisson_binomial_pvalue(observed, probs) > 1e-3


@functools.cache
def _poisoned_gaussian_audits() -> tuple[AuditResult, AuditResult, AuditResult]:
    """Gaussian (1, 1e-5) audited three times with the same seed: clean; with every test-split
    output shifted (+7 sigma on data1, -7 on data0); and with the shift starting 200 runs before
    the end of training (the control). Shared by the no-peek tests of pooled and hedge events."""
    from dpaudit.blackbox.audit_config import split_sizes

    sigma = 1 / _MU_1E5
    inner = gaussian(sigma)
    samples = 40_000
    n_train, _ = split_sizes(samples, None)

    def poisoned(start: int, active: bool):
        drawn: dict[object, int] = {}

        def mech(d, n, g):
            out = np.asarray(inner(d, n, g)).copy()
            first = drawn.get(d, 0)
            idx = np.arange(first, first + n) >= start
            if active and idx.any():
                out[idx] += 7 * sigma if d == 1.0 else -7 * sigma
            drawn[d] = first + n
            return out
        return mech

    clean, test, train = (audit(poisoned(start, active), 0.0, 1.0, epsilon=1.0, delta=1e-5,
                                samples=samples, seed=2, chunk_size=3_000, rng_probe=False)
                          for start, active in ((n_train, False), (n_train, True),
                                                (n_train - 200, True)))
    return clean, test, train


def test_pooled_event_choice_never_peeks_at_the_test_split() -> None:
    # The chosen pooled pair and its selection counts must be the same whether or not every
    # test-split output is poisoned; the test counts must change (the poison is live); poisoning
    # from 200 runs before the end of training must change the choice (control).
    from dpaudit.blackbox.statistics import PooledEvent

    clean, test, train = _poisoned_gaussian_audits()
    assert isinstance(clean.event.event, PooledEvent)
    assert clean.event.train.to_dict() == test.event.train.to_dict()
    assert clean.event.components != test.event.components
    assert clean.event.train.to_dict() != train.event.train.to_dict()


def _pooled_alarm_probability(n: int, law0: np.ndarray, law1: np.ndarray, first: np.ndarray,
                              second: np.ndarray, a: float, eps: float, delta: float) -> float:
    """Exact probability that a pooled pair (``first`` from data1 with ``second`` from data0,
    outcome masks) raises an alarm at per-interval level ``a`` over ``n`` test runs per input
    (the calculation of test_pooled_mirrored_events_false_alarm_rate_matches_exact_calculation)."""
    from scipy import signal

    m0 = _multinomial_pmf2(n, law0[second].sum(), law0[first].sum())  # [B0 -> Kp, A0 -> Kq]
    m1 = _multinomial_pmf2(n, law1[first].sum(), law1[second].sum())  # [A1 -> Kp, B1 -> Kq]
    joint = np.clip(signal.fftconvolve(m0, m1), 0.0, None)  # [Kp, Kq]
    lo, hi = _interval_ends(2 * n, a)
    lo = np.where(np.arange(2 * n + 1) >= 2, lo, 0.0)
    hi = np.where(np.arange(2 * n + 1) <= 2 * n - 2, hi, 1.0)
    return float(np.sum(joint * ((lo[:, None] - delta) > math.exp(eps) * hi[None, :])))


def _single_alarm_probability(n: int, p: float, q: float, a: float, eps: float,
                              delta: float) -> float:
    """Exact probability that one threshold event (rates ``p`` on the numerator input, ``q`` on
    the other) raises an alarm at per-interval level ``a`` over ``n`` test runs per input."""
    lo, hi = _interval_ends(n, a)
    kq_max = np.searchsorted(hi, (lo - delta) / math.exp(eps), side="left") - 1
    k = np.arange(n + 1)
    return float(np.sum(stats.binom.pmf(k, n, p) * stats.binom.cdf(kq_max, n, q)))


def _tight_discretised_gaussian(delta: float, k: int = 12):
    """``k`` outcomes: P0 a Gaussian (mean -0.5, sd 1) discretised on ``k`` points of [-4, 4] and
    P1 its mirror image, with the exact epsilon at ``delta`` (both directions are equal by
    symmetry): a tight (eps, delta) pair whose best events lie in sparse tails, where the
    engine's rankings disagree."""
    grid = np.linspace(-4.0, 4.0, k)
    w = stats.norm.pdf(grid, -0.5, 1.0)
    p0 = w / w.sum()
    laws = (p0, p0[::-1].copy())
    eps = optimize.brentq(
        lambda e: np.maximum(laws[1] - math.exp(e) * laws[0], 0.0).sum() - delta, 1e-3, 20.0)
    return (lambda which, n, rng: rng.choice(k, size=n, p=laws[which]).astype(float)), laws, eps


def test_hedge_events_false_alarm_rate_matches_exact_calculation() -> None:
    # Hedge events (training.HEDGE_RANKINGS): a delta > 0 audit evaluates up to three events
    # (the main pick and the picks of two more rankings of the same selection split), each at
    # alpha / m. On an exactly (eps, 0.01)-tight 12-outcome pair, given the evaluated events
    # (functions of the training split only), each event's alarm probability at its level is
    # exact (single events: two binomials; pooled pairs: the 2-D convolution of two multinomial
    # pmfs); the audit's alarm is their union, whose probability lies between the largest and
    # the sum. So the count over repetitions is stochastically between two Poisson-binomials,
    # and the observed count must not be improbably high for the upper (sum) one nor
    # improbably low for the lower (max) one. alpha = 0.43 (the largest whose single-event level
    # 1 - sqrt(1 - alpha) stays within POOLED_MAX_ALPHA) makes the rates measurable. Measured
    # (seeds 0-599): 295 repetitions with hedge events, 33 alarms, exact bracket [23.3, 25.5]
    # expected alarms; every event at alpha (no Bonferroni split) would give at least 48.0,
    # which fails the upper-tail check (> 1e-3 needs at most about 42 alarms) with probability
    # about 0.8.
    from dpaudit.blackbox.statistics import PooledEvent

    delta, alpha, samples, reps = 0.01, 0.43, 2_000, 600
    mech, laws, eps = _tight_discretised_gaussian(delta)
    outcomes = np.arange(laws[0].size, dtype=float)

    def in_set(ev) -> np.ndarray:
        return outcomes > ev.threshold if ev.tail == "upper" else outcomes <= ev.threshold

    cache: dict[tuple[str, float], float] = {}

    def alarm(ev, n: int, a: float) -> float:
        key = (json.dumps(ev.to_dict(), sort_keys=True), a)
        if key not in cache:
            if isinstance(ev, PooledEvent):
                e1, e2 = in_set(ev.first), in_set(ev.second)
                assert not np.any(e1 & e2)
                cache[key] = _pooled_alarm_probability(n, laws[0], laws[1], e1, e2, a, eps,
                                                       delta)
            else:
                s_ = in_set(ev)
                cache[key] = _single_alarm_probability(
                    n, laws[ev.numerator][s_].sum(), laws[1 - ev.numerator][s_].sum(), a, eps,
                    delta)
        return cache[key]

    lower, upper, nobonf = [], [], []
    hedged = observed = 0
    for s in range(reps):
        # The threshold statistics this exact calculation reads its events from: every one of
        # the 12 outcomes repeats, so the default family's atom statistic (events on its +-1
        # scores, not on the outputs) may be chosen too; its level has its own campaign
        # (tests/test_atom_statistics.py).
        r = audit(mech, 0, 1, epsilon=eps, delta=delta, samples=samples, alpha=alpha, seed=s,
                  output_kind="continuous", statistics=("identity", "histogram"))
        m = len(r.evaluated_events)
        assert r.bonferroni.m == m
        a = 1.0 - math.sqrt(1.0 - alpha / m)
        assert all(e.p.alpha == pytest.approx(a, rel=1e-12) for e in r.evaluated_events)
        keys = [json.dumps(e.event.to_dict(), sort_keys=True) for e in r.evaluated_events]
        assert len(set(keys)) == m  # hedges are added only when they differ
        hedged += m > 1
        per = [alarm(e.event, r.n_test, a) for e in r.evaluated_events]
        lower.append(max(per))
        upper.append(sum(per))
        full = 1.0 - math.sqrt(1.0 - alpha)
        nobonf.append(max(alarm(e.event, r.n_test, full) for e in r.evaluated_events))
        observed += r.verdict == "violated"
    lower_a, upper_a = np.array(lower), np.array(upper)
    print(f"hedged ({eps:.3f}, {delta}) tight: {hedged}/{reps} with hedge events, observed "
          f"{observed}, exact bracket [{lower_a.sum():.1f}, {upper_a.sum():.1f}], without "
          f"Bonferroni >= {sum(nobonf):.1f}")
    assert hedged >= reps // 4  # the rule under test is the one exercised
    assert upper_a.max() <= alpha
    assert _poisson_binomial_tail(observed, upper_a, upper=True) > 1e-3
    assert _poisson_binomial_tail(observed, lower_a, upper=False) > 1e-3


def _poisson_binomial_tail(observed: int, probs: np.ndarray, upper: bool) -> float:
    """P[X >= observed] (``upper``) or P[X <= observed] for X a sum of independent
    Bernoulli(probs)."""
    pmf = np.array([1.0])
    for p in probs:
        pmf = np.convolve(pmf, [1.0 - p, p])
    return float(pmf[observed:].sum() if upper else pmf[:observed + 1].sum())


def test_hedge_event_choice_never_peeks_at_the_test_split() -> None:
    # With hedge events: every evaluated event and its selection counts must be the same whether
    # or not every test-split output is poisoned; the test counts must change (the poison is
    # live); poisoning from 200 runs before the end of training must change the choice (control).
    clean, test, train = _poisoned_gaussian_audits()

    def chosen(r):
        return [e.train.to_dict() for e in r.evaluated_events]

    assert len(clean.evaluated_events) >= 2  # hedge events are exercised
    assert chosen(clean) == chosen(test)
    assert [e.p.count for e in clean.evaluated_events] != [e.p.count
                                                           for e in test.evaluated_events]
    assert chosen(clean) != chosen(train)


# ----------------------------------------------------------------------------------------------
# Tightness (ratio of the lower bound to the exact epsilon)
# ----------------------------------------------------------------------------------------------

def test_tightness_laplace_eps_1() -> None:
    r = audit(laplace(1.0), 0.0, 1.0, epsilon=1.0, samples=1_000_000, seed=0)
    print(f"Laplace eps=1, 1e6 samples: ratio {r.epsilon_lower_bound:.4f}")
    # Interval half-widths at ~4.5e5 events are < 0.5%: 0.95 leaves a wide margin.
    assert 0.95 <= r.epsilon_lower_bound <= 1.0


def test_tightness_gaussian_dp_mu_1() -> None:
    r = audit(gaussian(1.0), 0.0, 1.0, epsilon=1.0, samples=1_000_000, seed=0)
    print(f"Gaussian mu=1, 1e6 samples: mu ratio {r.mu_lower_bound:.4f}")
    assert 0.95 <= r.mu_lower_bound <= 1.0


def test_tightness_gaussian_mechanism_delta_1e5() -> None:
    mu = _MU_1E5
    r = audit(gaussian(1 / mu), 0.0, 1.0, epsilon=1.0, delta=1e-5, samples=1_000_000, seed=0)
    # Ceiling for a threshold event at 9e5 test runs: max_t ln((p_lo - 1e-5) / q_hi) with the
    # exact tail probabilities plugged in is 0.762 (at t = 3.2 sigma); seeds 0-7 give 0.60-0.75.
    # The floor 0.55 sits below that whole spread (it guards against a collapse of tightness, not
    # a particular seed's value); the ceiling 1.0 is the exact epsilon (validity).
    print(f"Gaussian (1, 1e-5), 1e6 samples: ratio {r.epsilon_lower_bound:.4f}")
    assert 0.55 <= r.epsilon_lower_bound <= 1.0


@pytest.mark.slow
def test_tightness_laplace_eps_0_1() -> None:
    r = audit(laplace(10.0), 0.0, 1.0, epsilon=0.1, samples=10_000_000, seed=0)
    print(f"Laplace eps=0.1, 1e7 samples: ratio {r.epsilon_lower_bound / 0.1:.4f}")
    assert 0.9 <= r.epsilon_lower_bound / 0.1 <= 1.0


# ----------------------------------------------------------------------------------------------
# Detection of broken mechanisms (each at its claimed epsilon with a stated budget)
# ----------------------------------------------------------------------------------------------

DETECTION = {
    # name: (mechanism, data0, data1, claimed epsilon, claimed delta, samples per input)
    "laplace-half-scale": (laplace(0.5), 0.0, 1.0, 1.0, 0.0, 20_000),
    # Claimed (1, 1e-5) with sigma = 1; exact epsilon(1e-5) of sigma = 1 is about 4.4.
    "gaussian-sigma-too-small": (gaussian(1.0), 0.0, 1.0, 1.0, 1e-5, 100_000),
    # All four counts move by one; the released maximum is 4-eps-DP in its lower tail.
    "noisy-max-with-value": (noisy_max_with_value(1.0), np.zeros(4), np.ones(4), 1.0, 0.0, 20_000),
    # Query pattern (0, 1, 1, 1) vs (1, 0, 0, 0): outcome "index 1" is impossible on data1.
    "sparse-vector-no-query-noise": (above_threshold_without_query_noise(1.0), [0, 1, 1, 1],
                                     [1, 0, 0, 0], 1.0, 0.0, 20_000),
    "tree-renoised-per-query": (tree_prefix_sums_renoised(1.0, 8), np.zeros(8), np.eye(8)[0],
                                1.0, 0.0, 50_000),
}


@pytest.mark.parametrize("name", sorted(DETECTION))
def test_detects_broken_mechanism(name: str) -> None:
    mech, d0, d1, eps, delta, samples = DETECTION[name]
    r = audit(mech, d0, d1, epsilon=eps, delta=delta, samples=samples, seed=0)
    print(f"{name}: lower bound {r.epsilon_lower_bound:.3f} vs claimed {eps}")
    assert r.verdict == "violated"
    assert r.epsilon_lower_bound > eps


# ----------------------------------------------------------------------------------------------
# Long campaigns
# ----------------------------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CALIBRATED))
def test_false_alarm_campaign(name: str) -> None:
    # Campaign: binom(R, alpha).ppf(0.999) rule; at R = 1000, alpha = 0.05 (c = 73) the
    # false-failure probability is binom(1000, 0.05).sf(73) = 6.5e-4 and the power against an
    # auditor at 2x the nominal rate binom(1000, 0.10).sf(73) = 0.998.
    mech, d0, d1, delta = CALIBRATED[name]
    reps, alpha = 1_000, 0.05
    bounds = np.array([audit(mech, d0, d1, epsilon=1.0, delta=delta, samples=20_000, alpha=alpha,
                             seed=10_000 + s).epsilon_lower_bound for s in range(reps)])
    false_alarms = int(np.sum(bounds > 1.0))
    print(f"{name}: {false_alarms}/{reps} false alarms, mean bound {bounds.mean():.3f}")
    assert false_alarms <= _false_alarm_ppf(reps, alpha)


def test_discrete_event_choice_never_peeks_at_the_test_split() -> None:
    # Discrete selection at level 1/C: an 11-outcome mechanism (a sparse-vector first
    # "above" position). The chosen prefix set and its selection counts must be the same whether
    # or not every test-split output is replaced by outcome 0 on data0 and outcome 5 on data1
    # (a huge fake ratio); the test counts must change (the poison is live); poisoning from 300
    # runs before the end of training must change the choice (control).
    from dpaudit.blackbox.audit_config import split_sizes

    p0 = first_above_probabilities(np.r_[np.zeros(5), np.ones(5)], 0.5, 2.0, 4.0)
    p1 = first_above_probabilities(np.r_[np.ones(5), np.zeros(5)], 0.5, 2.0, 4.0)
    samples = 40_000
    n_train, _ = split_sizes(samples, None)

    def poisoned(start: int, active: bool):
        drawn: dict[object, int] = {}

        def mech(d, n, g):
            law = p0 if d == 0 else p1
            out = g.choice(law.size, size=n, p=law / law.sum())
            first = drawn.get(d, 0)
            idx = np.arange(first, first + n) >= start
            if active and idx.any():
                out[idx] = 0 if d == 0 else 5
            drawn[d] = first + n
            return out
        return mech

    recs = {}
    for label, start, active in (("clean", n_train, False), ("test", n_train, True),
                                 ("train", n_train - 300, True)):
        recs[label] = audit(poisoned(start, active), 0, 1, epsilon=1.0, samples=samples, seed=3,
                            rng_probe=False,
                            chunk_size=2_000)
    clean, test, train = recs["clean"], recs["test"], recs["train"]
    assert clean.output_kind == "discrete"
    assert clean.event.train.to_dict() == test.event.train.to_dict()
    assert clean.event_outcomes == test.event_outcomes
    assert clean.event.test_counts != test.event.test_counts
    assert clean.event.train.to_dict() != train.event.train.to_dict()


def test_discrete_selection_level_is_one_over_candidates() -> None:
    # statistics.DISCRETE_SELECTION_LEVEL: with selection_level="one-lucky" every candidate's
    # selection rates are bounded at level 1 / C (C = 4 x thresholds), then projected to the test
    # size at alpha; checked against the two Wilson stages written out.
    from dpaudit.blackbox.confidence import wilson_lower, wilson_upper
    from dpaudit.blackbox.statistics import sweep_thresholds

    rng = np.random.default_rng(5)
    s0 = rng.integers(0, 6, size=4_000).astype(float)
    s1 = np.minimum(rng.integers(0, 6, size=4_000) + (rng.random(4_000) < 0.2), 5).astype(float)
    sw = sweep_thresholds(s0, s1, n_test0=90_000, n_test1=90_000, alpha=0.02,
                          selection_level="one-lucky")
    c = 4 * sw.thresholds.size
    top = sw.best(1)[0]
    cp, cq = (top.count1, top.count0) if top.event.numerator == 1 else (top.count0, top.count1)
    p_lo = wilson_lower(wilson_lower(np.asarray(cp / 4_000), 4_000, 1 / c), 90_000, 0.02)
    q_hi = wilson_upper(wilson_upper(np.asarray(cq / 4_000), 4_000, 1 / c), 90_000, 0.02)
    assert top.rank_value == pytest.approx(float(np.log(p_lo / q_hi)), rel=1e-12)
    assert sw.rank.max() == pytest.approx(top.rank_value)
    with pytest.raises(ValueError, match="selection_level"):
        sweep_thresholds(s0, s1, n_test0=10, n_test1=10, alpha=0.02, selection_level="x")
