"""The held-out zoo campaign (benchmarks/heldout_zoo.py): regression tests for what it
found in both audit modes, its true epsilons against independent computations, and (slow) the
zoo's verdicts.

Found by the zoo and fixed: vector outputs near 1e300 crashed ``dpaudit.audit`` (numpy's
"Eigenvalues did not converge" from the linear discriminant's overflowing covariance) and flooded
the gate with overflow warnings; ``sequential_gate`` bet on a self-seeded mechanism's repeated
"runs" (and stopped "violated", an invalid verdict) instead of refusing it as ``audit`` does, and
did not reseed the global RNGs of a mechanism that ignores its rng (runs not reproducible);
``sequential_gate(max_samples=100)`` failed on its own default ``train_samples=1000``; a mechanism
that squeezes its output (``.squeeze()``: shape () or (d,) for one run) failed when a split ended
in a chunk of one run; the gate crashed in numpy on outputs whose shape depends on the input
(``audit`` refuses them with a clear message; the gate now does the same).
"""

from __future__ import annotations

import math
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from scipy import integrate, stats

import dpaudit
from dpaudit.blackbox.sequential_gate import sequential_gate

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import heldout_zoo as hz  # noqa: E402

DIAG = np.full(3, 1 / 3)


def huge_vector(scale: float):
    """1e300 x (x + Laplace(scale) per coordinate) on R^3; the pair 0 vs (1/3, 1/3, 1/3) moves
    the l1 norm by 1, so its epsilon is 1/scale (scaling is post-processing)."""
    def m(x, n, g):
        return 1e300 * (np.asarray(x, float)[None, :] + g.laplace(0.0, scale, size=(n, 3)))
    return m


def test_huge_vector_outputs_are_audited_without_crash_or_warning():
    # Before the fix: LinAlgError. Broken (true eps 2) at 2 x 10^4 runs: the best event of the
    # location/naive-Bayes statistics certifies about 1.8 (measured 1.81); the margin to the claim
    # 1 is large. Correct (true eps exactly 1): the bound is valid, so "violated" has probability
    # <= alpha; fixed seed.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bad = dpaudit.audit(huge_vector(0.5), np.zeros(3), DIAG, epsilon=1.0, samples=20_000,
                            seed=0)
        ok = dpaudit.audit(huge_vector(1.0), np.zeros(3), DIAG, epsilon=1.0, samples=20_000,
                           seed=0)
    assert bad.verdict == "violated" and 1.0 < bad.epsilon_lower_bound <= 2.0
    assert ok.verdict == "not violated" and ok.epsilon_lower_bound <= 1.0
    assert math.isfinite(ok.epsilon_lower_bound)


def test_gate_on_huge_vector_outputs_no_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = sequential_gate(huge_vector(0.5), np.zeros(3), DIAG, epsilon=1.0,
                            max_samples=20_000, seed=0)
    assert r.verdict == "violated"
    assert all(math.isfinite(b["log_wealth"]) for b in r.statistic["bettors"])


def test_gate_refuses_a_self_seeded_mechanism_like_audit():
    def self_seeded(x, n, g):
        return float(x) + np.random.default_rng(7).laplace(0.0, 1.0, n)

    for run in (lambda: dpaudit.audit(self_seeded, 0.0, 1.0, epsilon=1.0, samples=2_000),
                lambda: sequential_gate(self_seeded, 0.0, 1.0, epsilon=1.0, max_samples=2_000)):
        with pytest.raises(ValueError, match="seeds its own generator"):
            run()


def test_gate_reseeds_the_global_rng_of_a_mechanism_that_ignores_its_rng():
    # Laplace(1/2) from numpy's global RNG: 2-DP against the claim 1. Reproducible from the seed
    # (the global state is reseeded per round), whatever the global state was before, and
    # reported in the result.
    def global_laplace(x, n, g):
        return float(x) + np.random.laplace(0.0, 0.5, n)

    np.random.seed(1)
    a = sequential_gate(global_laplace, 0.0, 1.0, epsilon=1.0, max_samples=5_000, seed=3)
    np.random.seed(2)
    b = sequential_gate(global_laplace, 0.0, 1.0, epsilon=1.0, max_samples=5_000, seed=3)
    assert a.verdict == "violated"
    assert (a.stopped_at, a.log_wealth) == (b.stopped_at, b.log_wealth)
    assert a.rng["rng_ignored"] and a.rng["globals_reseeded"]
    assert a.to_dict()["rng"]["rng_ignored"]


def test_gate_small_budget_uses_a_quarter_for_training():
    mech = hz.randomized_response(math.e / (1 + math.e))
    r = sequential_gate(mech, 0, 1, epsilon=1.0, max_samples=100, seed=0)
    assert (r.train_runs, r.runs_per_input) == (25, 100)
    assert sequential_gate(mech, 0, 1, epsilon=1.0, max_samples=5_000).train_runs == 1_000
    with pytest.raises(ValueError, match="train_samples"):
        sequential_gate(mech, 0, 1, epsilon=1.0, max_samples=100, train_samples=95)


@pytest.mark.parametrize("value", [np.nan, -np.inf])
def test_non_finite_outputs_refused_with_a_sentinel_hint(value):
    def padded(x, n, g):
        out = np.column_stack([float(x) + g.laplace(0.0, 1.0, n), np.zeros(n)])
        out[::2, 1] = value
        return out

    for run in (lambda: dpaudit.audit(padded, 0.0, 1.0, epsilon=1.0, samples=1_000),
                lambda: sequential_gate(padded, 0.0, 1.0, epsilon=1.0, max_samples=1_000)):
        with pytest.raises(ValueError, match="finite sentinel"):
            run()


def _squeezed(x, n, g):
    # (n, 1, 2) -> .squeeze(): shape (n, 2), but (2,) when n = 1
    return (np.asarray(x, float) + g.laplace(0.0, 1.0, size=(n, 1, 2))).squeeze()


def test_a_squeezed_single_run_chunk_is_read_as_one_row():
    # A split that ends in a chunk of one run (n_test = 9001 in chunks of 1000; the gate's last
    # round of 1 run) used to fail after all the sampling: "returned leading axis 2".
    r = dpaudit.audit(_squeezed, np.zeros(2), np.ones(2), epsilon=5.0, samples=10_001,
                      train_fraction=0.1, chunk_size=1_000)
    assert r.n_test == 9_001 and r.verdict == "not violated"  # true epsilon 2 < 5
    g = sequential_gate(_squeezed, np.zeros(2), np.ones(2), epsilon=5.0, max_samples=2_001,
                        train_samples=1_000)
    assert g.runs_per_input == 2_001 and g.verdict == "not violated"


def test_gate_refuses_outputs_that_differ_in_shape_or_type_between_inputs_like_audit():
    # The gate used to crash in numpy ("Invalid type promotion with void datatypes") on outputs
    # whose length depends on the input, and to bet on int vs bool outputs as if comparable.
    def length_of_input(x, n, g):
        return np.asarray(x, float)[None, :] + g.laplace(0.0, 1.0, size=(n, len(x)))

    def type_of_input(x, n, g):
        v = g.random(n) < 0.5
        return v if x else v.astype(np.int64)

    for mech, d0, d1 in ((length_of_input, np.zeros(2), np.zeros(3)), (type_of_input, 0, 1)):
        for run in (lambda: dpaudit.audit(mech, d0, d1, epsilon=1.0, samples=2_000),
                    lambda: sequential_gate(mech, d0, d1, epsilon=1.0, max_samples=2_000)):
            with pytest.raises(ValueError, match="differ in shape or type"):
                run()


def test_ragged_rows_are_refused_with_a_padding_hint():
    with pytest.raises(TypeError, match="pad them to one length"):
        dpaudit.audit(lambda d, n, g: [[1.0] * (1 + i % 2) for i in range(n)], 0, 1,
                      epsilon=1.0, samples=1_000)


def test_returned_non_array_is_named():
    # A dict is a structured release (dpaudit.release_outputs): one whose field holds one number
    # for all n runs is refused, naming the field and what to return.
    with pytest.raises(TypeError, match=r"field 'count' has a scalar .*leading axis n = "):
        dpaudit.audit(lambda d, n, g: {"count": n}, 0, 1, epsilon=1.0, samples=1_000)


# --- the zoo's true epsilons, against independent computations --------------------------------


def test_zoo_is_consistent():
    zoo = hz.zoo()
    assert len({c.name for c in zoo}) == len(zoo) >= 16
    assert sum(c.broken for c in zoo) >= 8 and sum(not c.broken for c in zoo) >= 8
    for c in zoo:
        if c.expect != "refused":
            assert c.expect == ("violated" if c.broken else "not violated"), c.name


def test_closed_forms_against_exact_laws():
    e = 1.0
    # forced response with the Warner p: P[1 | 1] = (1 + p)/2, P[1 | 0] = (1 - p)/2
    p = math.exp(e) / (1 + math.exp(e))
    assert math.log((1 + p) / (1 - p)) == pytest.approx(math.log(1 + 2 * math.e), rel=1e-12)
    # sign x geometric magnitude: pmf on a wide support, largest log ratio of count 0 vs 1
    a = math.exp(-e)
    z = np.arange(-60, 61)
    pmf = np.where(z == 0, 1 - a, (1 - a) * a ** np.abs(z) / 2)
    lr = np.abs(np.log(pmf[1:]) - np.log(pmf[:-1]))
    assert lr.max() == pytest.approx(e + math.log(2), rel=1e-12)
    # k-RR with the binary formula: true label p, others (1 - p)/3
    assert math.log(p / ((1 - p) / 3)) == pytest.approx(e + math.log(3), rel=1e-12)
    # exponential mechanism: direct probabilities
    w0 = np.exp(0.5 * hz.EXP_U0) / np.exp(0.5 * hz.EXP_U0).sum()
    w1 = np.exp(0.5 * hz.EXP_U1) / np.exp(0.5 * hz.EXP_U1).sum()
    assert hz.softmax_pair_epsilon(0.5, hz.EXP_U0, hz.EXP_U1) == pytest.approx(
        np.abs(np.log(w0 / w1)).max(), rel=1e-12)
    # indices above threshold: the two moved bins' outcome ratios, by Laplace tails
    b = 1.0
    up1, up0 = stats.laplace.sf(0.5 - 1, scale=b), stats.laplace.sf(0.5, scale=b)
    assert hz.indices_pair_epsilon(b) == pytest.approx(2 * math.log(up1 / up0), rel=1e-12)


def test_noisy_gap_pair_epsilon_tends_to_2_over_b():
    # Density of D = L1 - L0 by numerical convolution of two Laplace(b) densities (split at the
    # kinks 0 and -x, relative tolerance only): the ratio f_D(g - 1)/f_D(g + 1) matches the
    # docstring's closed form and increases towards e^{2/b}, never reaching it.
    for b in (0.5, 1.0):
        def f(x):
            pts = sorted({0.0, -x})
            lo, hi = pts[0] - 80 * b, pts[-1] + 80 * b
            return integrate.quad(lambda t: stats.laplace.pdf(t, scale=b)
                                  * stats.laplace.pdf(x + t, scale=b), lo, hi, points=pts,
                                  epsabs=0.0, epsrel=1e-11, limit=200)[0]
        gs = np.array([0.5, 2.0, 6.0, 12.0])
        r = np.array([math.log(f(g - 1) / f(g + 1)) for g in gs])
        closed = np.log((b + gs[1:] - 1) / (b + gs[1:] + 1)) + 2 / b  # for g >= 1
        assert r[1:] == pytest.approx(closed, rel=1e-7)
        assert np.all(r < 2 / b) and np.all(np.diff(r) > 0) and r[-1] > 2 / b - 0.2


def test_restarted_above_threshold_law_against_simulation():
    # The grid law of the reused-noise AboveThreshold against 2 x 10^5 simulated runs on its most
    # informative outcome (0^6 1^2, probability 0.0073 on data0): binomial sd 1.9e-4, the margin
    # is 5 sd. Its pair epsilon exceeds the claim 1 (the case is broken).
    law = hz.restarted_above_threshold_law(hz.AT_A0, hz.AT_T, hz.AT_C, 2.0, 4.0)
    assert sum(law.values()) == pytest.approx(1.0, abs=1e-5)
    key = (0,) * 6 + (1, 1)
    out = hz.above_threshold_reused_noise(1.0)(hz.AT_A0, 200_000, np.random.default_rng(5))
    freq = np.mean(np.all(out == np.array(key), axis=1))
    assert abs(freq - law[key]) < 5 * math.sqrt(law[key] / 200_000)
    eps = hz.restarted_above_threshold_pair_epsilon(hz.AT_A0, hz.AT_A1, hz.AT_T, hz.AT_C, 2.0,
                                                    4.0)
    assert 1.3 < eps < 1.5  # Lyu-Su-Li's upper bound for this design: (1 + c)/2 eps = 1.5


# --- the campaign ----------------------------------------------------------------------------

#: Broken mechanisms a mode is allowed to miss at these budgets (power, not validity), with the
#: reason measured in docs/benchmarks.md ("A held-out zoo").
ALLOWED_MISSES = {
    "audit": {"above-threshold-reused-noise"},
    "gate": {"above-threshold-reused-noise"},
}


@pytest.mark.slow
def test_heldout_zoo_verdicts_both_modes():
    # Every mechanism at 10^5 runs per input (fixed budget) and a 10^5 gate, seed 0, alpha 0.05:
    # no crash, no false alarm, the right refusals, and every broken mechanism caught except the
    # documented power misses. About 2 min on the shared machine.
    bad = []
    for c in hz.zoo():
        for mode, r in (("audit", hz.run_fixed(c, 100_000)), ("gate", hz.run_gate(c, 100_000))):
            ok = {"caught", "right", "refused (right)"}
            if r["outcome"] not in ok and not (r["outcome"] == "missed"
                                               and c.name in ALLOWED_MISSES[mode]):
                bad.append((c.name, mode, r["outcome"], repr(r["error"])))
    assert not bad, bad


@pytest.mark.slow
def test_false_alarm_campaign_1000_gates_on_randomized_response_at_its_epsilon():
    # Discrete outputs, the outcome-likelihood-ratio bettor: Warner randomized response with keep
    # probability e/(1 + e) is exactly 1-DP on the pair 0/1 and both outcomes attain the ratio e
    # (the boundary of the null). 1000 gates, 10^4 runs per input each. Ville: P[false alarm]
    # <= alpha = 0.05; the test fails only if the one-sided 99% Clopper-Pearson lower bound of
    # the rate exceeds alpha (at a true rate of 0.05 that happens with probability <= 0.01).
    alarms, _, _ = hz.false_alarm_campaign(1000, 10_000)
    lower = stats.beta.ppf(0.01, alarms, 1000 - alarms + 1) if alarms else 0.0
    print(f"false alarms: {alarms} / 1000")
    assert lower <= 0.05


def test_docs_table_agrees_with_the_zoo_and_with_itself():
    # The recorded table of docs/benchmarks.md ("A held-out zoo, both modes"): one row per zoo
    # mechanism with its true epsilon and expectation; every outcome follows from its bound (or
    # stop) and the claim 1; no bound exceeds the true epsilon shown (3 digits); the summary
    # counts its rows.
    doc = (Path(__file__).resolve().parents[1] / "docs" / "benchmarks.md").read_text("utf-8")
    lines = doc.splitlines()
    start = lines.index(next(x for x in lines if x.startswith("| mechanism | output | true eps")))
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.strip().strip("|").split("|")])
    zoo = {c.name: c for c in hz.zoo()}
    assert [r[0] for r in rows] == list(zoo)
    caught = {"1e+05": 0, "1e+06": 0, "gate": 0}
    for name, _out, true, expect, *cells in rows:
        c = zoo[name]
        assert expect == c.expect and (true == "inf" or float(true) == pytest.approx(
            c.true_epsilon, rel=5e-3)), name
        for col, cell in zip(("1e+05", "1e+06", "gate"), cells):
            outcome = cell.split(",")[0].split(":")[0]
            if expect == "refused":
                assert outcome == "refused (right)", (name, cell)
                continue
            if col == "gate":
                runs = int(cell.split(", ")[1].split()[0])
                stopped = runs < 100_000
                assert outcome == ("caught" if stopped and c.broken else "right" if not c.broken
                                   and not stopped else "missed"), (name, cell)
                caught[col] += outcome == "caught"
                continue
            bound = float(cell.split(", ")[1].split()[0])
            assert bound <= (c.true_epsilon if math.isfinite(c.true_epsilon) else bound) * 1.005
            assert outcome == ("caught" if bound > 1 and c.broken else "right" if not c.broken
                               and bound <= 1 else "missed"), (name, cell)
            caught[col] += outcome == "caught"
    n_broken = sum(c.expect == "violated" for c in zoo.values())
    text = " ".join(doc.split())
    assert f"Fixed budget at 10^5: {caught['1e+05']} of the {n_broken} broken" in text
    assert f"Gate at 10^5: {caught['gate']} of {n_broken} caught" in text
    assert caught["1e+06"] == n_broken and "at 10^6: all 12 caught" in text


def test_gate_rounds_are_capped_in_bytes_for_wide_outputs(monkeypatch):
    # Wide outputs (a 1,000-value gradient per run) held 200,000 runs of history and rounds of
    # 65,536 runs per input: 3.2 GB of history alone. Rounds and history are now capped in bytes
    # as well; here the round cap is set to 1,000 runs of 100 float64 values, so 19,000 betting
    # runs take 19 rounds (uncapped: 1000, 1500, 2250, 3375, 5062, 5813 = 6 rounds).
    import dpaudit.blackbox.sequential_gate as sg

    def wide(x, n, g):
        return float(x) / 100 + g.laplace(0.0, 1.0, size=(n, 100))  # l1 shift 1: exactly 1-DP

    base = sequential_gate(wide, 0.0, 1.0, epsilon=1.0, max_samples=20_000, seed=0,
                           statistics=["linear"])
    monkeypatch.setattr(sg, "GATE_MAX_ROUND_BYTES", 1_000 * 100 * 8)
    capped = sequential_gate(wide, 0.0, 1.0, epsilon=1.0, max_samples=20_000, seed=0,
                             statistics=["linear"])
    assert (base.rounds, capped.rounds) == (6, 19)
    assert base.verdict == capped.verdict == "not violated"
