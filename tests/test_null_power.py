"""No-peek tests with stated error probabilities and power.

``test_test_split_runs_are_fresh`` is deterministic: a mechanism that returns independent
continuous draws records every value the engine asks for; the test split must consist of runs never
returned before (the training split's). False-failure probability: 0 (two float64 normal draws
coincide with probability ~0; 2^-53 per pair at most, ~1e-8 over the 4e4 x 4e4 pairs here).
Power against the named leak (the test split drawn from the training split's generators, so the
event is counted on the runs it was chosen on): 1, since every test run repeats a training run.
"""

from __future__ import annotations

import numpy as np

from dpaudit.blackbox.empirical_audit import audit


def test_test_split_runs_are_fresh() -> None:
    drawn: dict[int, list[np.ndarray]] = {0: [], 1: []}

    def mech(d: int, n: int, g: np.random.Generator) -> np.ndarray:
        out = g.normal(size=n)
        drawn[d].append(out.copy())
        return out

    # rng_probe=False: the probe calls the mechanism twice with one seed on purpose (64 repeated
    # runs that never enter training or testing); this test records every run it returns.
    res = audit(mech, 0, 1, epsilon=1.0, samples=20_000, alpha=0.05, seed=3, chunk_size=3_000,
                rng_probe=False)
    for d in (0, 1):
        values = np.concatenate(drawn[d])
        assert values.size >= 20_000
        assert np.unique(values).size == values.size, (
            f"input {d}: {values.size - np.unique(values).size} runs returned twice: the test "
            "split reuses training runs")
    assert res.epsilon_lower_bound >= 0.0


def test_the_stated_power_numbers() -> None:
    """The numbers the false-alarm and no-peek tests state in their comments (so they cannot rot):
    default-suite tests run R = 80 audits at alpha = 0.25 and fail above c = 33 alarms; the slow
    campaigns run R = 1000 at alpha = 0.05 and fail above c = 73."""
    from scipy import stats
    c = int(stats.binom(80, 0.25).ppf(0.999))
    assert c == 33
    assert stats.binom(80, 0.25).sf(c) < 1e-3          # false failure of a valid auditor
    assert stats.binom(80, 0.50).sf(c) >= 0.9          # power against 2x the nominal rate
    c = int(stats.binom(30, 0.4).ppf(0.999))  # test_false_alarm_campaign's smoke test
    assert c == 20
    assert stats.binom(30, 0.4).sf(c) < 1e-3 and stats.binom(30, 0.8).sf(c) >= 0.9
    c = int(stats.binom(1000, 0.05).ppf(0.999))
    assert c == 73
    assert stats.binom(1000, 0.05).sf(c) < 1e-3
    assert stats.binom(1000, 0.10).sf(c) >= 0.99
