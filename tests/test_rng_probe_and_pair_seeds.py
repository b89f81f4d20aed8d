"""Mechanisms that ignore their rng, pair seeds / dedup / the chosen pair in one line."""

from __future__ import annotations

import os
import random

import numpy as np
import pytest
from hypothesis import strategies as st
from scipy.stats import binomtest

import dpaudit
from dpaudit.blackbox.rng_probe import probe_rng
from dpaudit.execution.executors import ProcessExecutor


def global_rng_mechanism(data, n, rng):
    """Ignores rng: numpy's legacy global state (what many library samplers do)."""
    return float(data) + np.random.normal(size=n)


def python_random_mechanism(data, n, rng):
    return np.array([float(data) + random.gauss(0.0, 1.0) for _ in range(n)])


def good_mechanism(data, n, rng):
    return float(data) + rng.normal(size=n)


def _own_generator():
    gen = np.random.default_rng(1234)

    def own_generator_mechanism(data, n, rng):
        return float(data) + gen.normal(size=n)
    return own_generator_mechanism


def test_probe_tells_rng_users_from_global_and_own_generators() -> None:
    assert not probe_rng(good_mechanism, 0.0, 0).rng_ignored
    for mech in (global_rng_mechanism, python_random_mechanism):
        p = probe_rng(mech, 0.0, 0)
        assert p.rng_ignored and p.globals_reseedable
        assert "not reproducible from the seed" in p.note
    p = probe_rng(_own_generator(), 0.0, 0)
    assert p.rng_ignored and not p.globals_reseedable
    # The probe leaves the global states as it found them.
    np.random.seed(7)
    expected = np.random.normal()
    np.random.seed(7)
    probe_rng(global_rng_mechanism, 0.0, 0)
    assert np.random.normal() == expected


def _first_draw_logger(path):
    def mechanism(data, n, rng):
        out = np.random.normal(size=n)
        with open(path, "a", encoding="ascii") as fh:
            fh.write(f"{os.getpid()} {out[0]!r}\n")
        return float(data) + out
    return mechanism


def test_forked_workers_repeat_global_draws_unless_reseeded(tmp_path) -> None:
    # The premise: without reseeding, forked workers inherit one global state and repeat draws.
    def draw(_shared, _item):
        return float(np.random.normal())
    with ProcessExecutor(workers=2) as ex:
        firsts = [v for _, v in ex.map_unordered(draw, list(range(4)), None)]
    assert len(set(firsts)) == 1


def test_global_rng_mechanism_under_processes_gives_independent_chunks(tmp_path) -> None:
    log = tmp_path / "draws.txt"
    mech = _first_draw_logger(str(log))
    kw = dict(epsilon=1.0, samples=4000, seed=3, chunk_size=250, train_fraction=0.25)
    res = dpaudit.audit(mech, 0.0, 1.0, executor="processes", **kw)
    assert res.rng_ignored and "not reproducible from the seed" in res.rng["note"]
    assert res.rng["globals_reseeded"]
    assert "not reproducible from the seed" in str(res)
    lines = log.read_text().splitlines()[4:]  # after the probe's 4 calls (global seeds 1, 2, 1, 1)
    firsts = [line.split()[1] for line in lines]
    pids = {line.split()[0] for line in lines}
    assert len(pids) > 2                      # chunks did run in forked workers
    assert len(firsts) > 20 and len(set(firsts)) == len(firsts)  # every chunk its own draws
    # Reseeded from each chunk's seed: the same result as a local run, bit for bit.
    local = dpaudit.audit(_first_draw_logger(str(tmp_path / "local.txt")), 0.0, 1.0,
                          executor="local", **kw)
    assert local.to_dict()["event"] == res.to_dict()["event"]
    # The counts are binomial: the test-split count of the chosen event on data0 agrees with
    # the event's probability under N(0, 1) (two-sided exact binomial test).
    ev = res.event
    from scipy.stats import norm
    t = ev.event.threshold
    p0 = norm.sf(t) if ev.event.tail == "upper" else norm.cdf(t)
    assert binomtest(ev.test_counts[0], ev.test_nobs[0], p0).pvalue > 1e-3


def test_own_generator_is_refused_in_parallel_and_flagged_locally() -> None:
    mech = _own_generator()
    with pytest.raises(ValueError, match="executor='local'"):
        dpaudit.audit(mech, 0.0, 1.0, epsilon=1.0, samples=200, executor="processes")
    res = dpaudit.audit(mech, 0.0, 1.0, epsilon=1.0, samples=200)
    assert res.rng_ignored and not res.rng["globals_reseeded"]


def test_batch_turns_a_one_draw_sampler_into_a_mechanism() -> None:
    mech = dpaudit.batch(lambda x, rng: x + rng.laplace(), takes_rng=True)
    out = mech(2.0, 5, np.random.default_rng(0))
    assert out.shape == (5,)
    assert np.array_equal(out, 2.0 + np.random.default_rng(0).laplace(size=5)) or out.std() > 0
    assert not probe_rng(mech, 0.0, 0).rng_ignored
    glob = dpaudit.batch(lambda x: x + np.random.laplace())
    assert glob(0.0, 3, np.random.default_rng(0)).shape == (3,)
    assert probe_rng(glob, 0.0, 0).rng_ignored


def laplace_count(data, n, rng):
    return float(np.sum(data)) + rng.laplace(0.0, 1.0, size=n)


def test_pair_seeds_are_piloted_first_and_vacuous_pairs_dropped() -> None:
    seeds = [(np.array([1.0, 1.0]), np.array([1.0, 1.0])),      # identical inputs: dropped
             (np.array([0.0, 0.0]), np.array([5.0, 0.0])),      # the extreme pair
             (np.array([0.0, 0.0]), np.array([5.0, 0.0])),      # duplicate: piloted once
             (np.array([1.0, 2.0]), np.array([2.0, 1.0]))]      # same sum: identical outputs
    strategy = st.tuples(st.floats(0, 1), st.floats(0, 1)).map(
        lambda ab: (np.array([ab[0], 0.0]), np.array([ab[1], 0.0])))
    res = dpaudit.audit(laplace_count, epsilon=1.0, samples=2000, seed=0, pairs=strategy,
                        pair_seeds=seeds, pair_candidates=3)
    assert res.pilot[0]["pair"] == [[0.0, 0.0], [5.0, 0.0]]
    reasons = [d["reason"] for d in res.dropped_pairs]
    assert any("identical" in r and "inputs" in r for r in reasons)
    assert any("outputs were identical" in r for r in reasons)
    assert res.pair_index == 0
    assert res.chosen_pair.startswith("data0=[0.0, 0.0], data1=[5.0, 0.0]")
    assert "seed pair" in res.chosen_pair
    assert "\n" not in res.chosen_pair
    assert res.verdict == "violated"  # a shift of 5 under Laplace(1) is not 1-DP
    from dpaudit.testing import violation_message
    assert "pair:      data0=[0.0, 0.0]" in violation_message(res, "reproduce")


def test_claim_pairs_seed_its_pair_search() -> None:
    from dpaudit.claims.context import BUDGETS, AuditContext
    from dpaudit.claims.user_claims import declaration_of

    pair = (np.array([0.0, 1.0]), np.array([0.0]))  # add-remove: one record more
    claim = dpaudit.Claim(
        id="t/seeded", statement="Laplace(1) count is 1-DP", source=dpaudit.Source(title="t"),
        claimed=lambda p: (1.0, 0.0), neighbours="add-remove", grid=[{}],
        release=lambda p: laplace_count, pairs=lambda p: [pair],
        pair_search=lambda p: st.floats(0, 1).map(lambda a: (np.array([0.0, a]),
                                                             np.array([0.0]))))
    plan = declaration_of(claim).plan({}, AuditContext(BUDGETS["quick"], 0, 0.05))
    assert plan.empirical.pair_seeds == [pair]
    assert "seeding" in plan.empirical.what
    assert plan.empirical.state_pair  # the report states the audited pair (evidence pair)
