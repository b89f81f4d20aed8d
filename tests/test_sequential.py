"""Anytime-valid sequential audit (dpaudit.blackbox.sequential).

Margins: false-alarm counts over R repetitions are compared with binom(R, alpha).ppf(0.999) (a
valid test exceeds it with probability < 1e-3); the cost checks compare run counts with budgets
far above what the fixed seeds use (they guard against a collapse, not a seed's value).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpaudit.blackbox.sequential import sequential_audit


def laplace(scale: float):
    return lambda d, n, g: d + g.laplace(0.0, scale, size=n)


def test_clear_violation_costs_hundreds_or_thousands_of_runs() -> None:
    r = sequential_audit(laplace(0.5), 0.0, 1.0, epsilon=1.0, max_samples=1_000_000, seed=0)
    assert r.verdict == "violated"
    assert r.runs_per_input <= 5_000 and r.stopped_at is not None
    assert r.log_wealth >= math.log(20)
    d = r.to_dict()
    assert d["runs_per_input"] == r.train_runs + r.betting_runs
    assert "anytime-valid" in d["validity"]


def test_correct_mechanism_spends_the_budget_and_passes() -> None:
    r = sequential_audit(laplace(1.0), 0.0, 1.0, epsilon=1.0, max_samples=50_000, seed=0)
    assert r.verdict == "not violated" and r.runs_per_input == 50_000 and r.stopped_at is None


def test_validation() -> None:
    with pytest.raises(ValueError, match="max_samples"):
        sequential_audit(laplace(1.0), 0.0, 1.0, epsilon=1.0, max_samples=10)
    with pytest.raises(ValueError, match="epsilon"):
        sequential_audit(laplace(1.0), 0.0, 1.0, epsilon=0.0)
    with pytest.raises(ValueError, match="train_samples"):
        sequential_audit(laplace(1.0), 0.0, 1.0, epsilon=1.0, max_samples=1_000,
                         train_samples=995)


def _binary(p: float, q: float):
    return lambda d, n, g: (g.random(n) < (p if d == 0 else q)).astype(np.int64)


@pytest.mark.parametrize("name,mech,delta", [
    # Exactly tight: P0[1] = e P1[1].
    ("tight-binary", _binary(math.e * 0.2, 0.2), 0.0),
    ("tight-laplace", laplace(1.0), 0.0),
    # (1, 0.05)-tight: P0[1] = e * 0.2 + 0.05.
    ("tight-delta", _binary(math.e * 0.2 + 0.05, 0.2), 0.05),
])
def test_false_alarm_rate_at_most_alpha(name, mech, delta) -> None:
    # Power: at alpha = 0.25 per audit (validity must hold at every level; a larger
    # level makes alarms frequent enough to count), R = 80 audits and the rule "fail when more than
    # c = binom(80, 0.25).ppf(0.999) = 33 alarms": false-failure probability for a valid auditor
    # binom(80, 0.25).sf(33) = 4.6e-4; power against an auditor at 2x the nominal rate (0.5 per
    # audit) binom(80, 0.5).sf(33) = 0.927. (The former 200 audits at alpha = 0.05 had power
    # binom(200, 0.10).sf(21) = 0.35 against 2x.)
    reps, alpha = 80, 0.25
    alarms = sum(sequential_audit(mech, 0, 1, epsilon=1.0, delta=delta, alpha=alpha,
                                  max_samples=10_000, seed=s).verdict == "violated"
                 for s in range(reps))
    print(f"{name}: {alarms}/{reps}")
    assert alarms <= int(stats.binom(reps, alpha).ppf(0.999))


@pytest.mark.slow
@pytest.mark.parametrize("name,mech,delta", [
    ("tight-binary", _binary(math.e * 0.2, 0.2), 0.0),
    ("tight-laplace", laplace(1.0), 0.0),
    ("tight-delta", _binary(math.e * 0.2 + 0.05, 0.2), 0.05),
])
def test_false_alarm_campaign(name, mech, delta) -> None:
    # R = 1000, alpha = 0.05, c = binom(1000, 0.05).ppf(0.999) = 73: false-failure probability
    # 6.5e-4, power against 2x the nominal rate binom(1000, 0.10).sf(73) = 0.998.
    reps, alpha = 1_000, 0.05
    alarms = sum(sequential_audit(mech, 0, 1, epsilon=1.0, delta=delta, alpha=alpha,
                                  max_samples=100_000, seed=10_000 + s).verdict == "violated"
                 for s in range(reps))
    print(f"{name}: {alarms}/{reps}")
    assert alarms <= int(stats.binom(reps, alpha).ppf(0.999))


def test_delta_violation_and_slight_violation_are_caught() -> None:
    # P0[1] = e * 0.2 + 0.15 against a (1, 0.05) claim: a delta violation of 0.10.
    r = sequential_audit(_binary(math.e * 0.2 + 0.15, 0.2), 0, 1, epsilon=1.0, delta=0.05,
                         max_samples=200_000, seed=0)
    assert r.verdict == "violated" and r.runs_per_input < 200_000
    # Laplace scale 0.9: true epsilon 1.11 against a claim of 1, a 11% violation.
    r = sequential_audit(laplace(0.9), 0.0, 1.0, epsilon=1.0, max_samples=1_000_000, seed=0)
    assert r.verdict == "violated" and r.runs_per_input < 100_000


def test_top_level_export() -> None:
    import dpaudit
    from dpaudit.blackbox.sequential import SequentialResult
    from dpaudit.blackbox.sequential_gate import sequential_gate

    assert dpaudit.sequential_audit is sequential_audit
    # The CI gate and the result type both share, lazily like the rest.
    assert dpaudit.sequential_gate is sequential_gate
    assert dpaudit.SequentialResult is SequentialResult
    assert {"sequential_audit", "sequential_gate", "SequentialResult"} <= set(dpaudit.__all__)
    assert set(dpaudit.__all__) <= set(dir(dpaudit))
