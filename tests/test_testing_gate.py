"""The sequential CI gate from pytest: ``assert_dp(..., sequential=True)``, ``--dp-sequential``.

The mechanisms are Laplace noise on a counting query (sensitivity 1), as in
``tests/test_testing_plugin.py``: scale 1 is exactly 1-DP, scale 0.1 is 10-DP (a gross bug against
the claim 1), scale 2 is 0.5-DP (slack for tests that must pass whatever the seed).
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from dpaudit.blackbox.sequential import BET_CAP, SequentialResult
from dpaudit.blackbox.sequential_gate import sequential_gate
from dpaudit.testing import DPAuditor, assert_dp, derive_seed

pytest_plugins = ["pytester"]

MECHANISMS = '''
import numpy as np
from dpaudit.testing import assert_dp

def laplace_count(scale):
    def mechanism(data, n, rng):
        return np.sum(data) + rng.laplace(0.0, scale, size=n)
    return mechanism
'''

D0, D1 = [1, 0, 1], [1, 0, 0]


def laplace_count(scale: float):
    def mechanism(data, n, rng):
        return np.sum(data) + rng.laplace(0.0, scale, size=n)
    return mechanism


def _gross_bug_runs_bound(alpha: float = 0.05, bettors: int = 2) -> float:
    """Betting runs per input within which the gate catches Laplace(0.1) against epsilon 1.

    Independent derivation: on the event S = {output <= 1.5} (outputs centred at 1 on D1, at 2 on
    D0) p = P[S | D1] = 1 - e^-5 / 2 and q = P[S | D0] = e^-5 / 2 (Laplace CDF at scale 0.1). The
    gate's bet is capped at lambda = BET_CAP / e^eps, so one run multiplies a bettor's wealth by
    1 + lambda Z, Z = 1[Y in S] - e 1[X in S]; its expected log is g ~ 0.166 (below), with
    standard deviation 0.033 per run. The average of ``bettors`` bettors reaches 1/alpha once the
    best one has log-wealth ln(bettors / alpha) = 3.69: about 22 runs. The bound returned is 10 times
    that: the sum of 220 runs' log-factors is 36.6 +- 0.5, so a gate holding an event of this
    quality misses it with probability far below 1e-9.
    """
    e = math.e
    p, q = 1 - math.exp(-5) / 2, math.exp(-5) / 2
    lam = BET_CAP / e
    g = (p * (1 - q) * math.log1p(lam) + p * q * math.log1p(lam * (1 - e))
         + (1 - p) * q * math.log1p(-lam * e))
    return 10 * math.log(bettors / alpha) / g


# ------------------------------------------------------------------------------------------------
# assert_dp(sequential=True)
# ------------------------------------------------------------------------------------------------

def test_sequential_assert_dp_fails_a_gross_bug_fast_with_a_readable_message() -> None:
    bound = _gross_bug_runs_bound()
    assert 150 < bound < 300
    with pytest.raises(AssertionError) as info:
        assert_dp(laplace_count(0.1), D0, D1, epsilon=1.0, sequential=True, max_samples=20_000)
    message = str(info.value)
    lines = message.splitlines()
    m = re.fullmatch(r"\(1, 0\)-DP claim violated: the sequential gate stopped after (\d+) betting "
                     r"runs per input \((\d+) in all, 1000 training runs never bet on\): "
                     r"log-wealth ([\d.]+) >= ln\(1/alpha\) = 2\.996 \(anytime-valid at level "
                     r"alpha = 0\.05, Ville's inequality\)\.", lines[0])
    assert m, lines[0]
    stopped, total, log_wealth = int(m.group(1)), int(m.group(2)), float(m.group(3))
    # Caught within the training runs plus a few hundred: "a few thousand runs" with room.
    assert 0 < stopped <= bound and total == 1000 + stopped
    assert log_wealth >= math.log(20)
    labels = [ln.split(":")[0].strip() for ln in lines[1:]]
    assert labels == ["event", "bettors", "samples", "reproduce"]
    assert re.search(r"event: +score (<=|>) [-\d.]+, more likely on data[01] .*\(bettor: \w+ "
                     r"statistic, bet 0\.1839", message)  # the capped bet 0.5 / e
    assert "samples:   at most 20000 runs per input, seed 0" in message
    assert message.endswith("reproduce: assert_dp(mechanism, data0, data1, epsilon=1.0, "
                            "delta=0.0, sequential=True, max_samples=20000, alpha=0.05, seed=0)")
    # The message reports the gate's own result for the same call.
    same = sequential_gate(laplace_count(0.1), D0, D1, epsilon=1.0, max_samples=20_000, seed=0)
    assert (same.verdict, same.stopped_at, same.runs_per_input) == ("violated", stopped, total)


def test_sequential_assert_dp_passes_a_correct_laplace_and_returns_the_gate_result() -> None:
    # Exactly 1-DP (the boundary of the null): the gate raises an alarm with probability <= 0.05
    # (Ville); at this fixed seed the outcome is deterministic, and it costs the whole budget.
    result = assert_dp(laplace_count(1.0), D0, D1, epsilon=1.0, sequential=True,
                       max_samples=20_000)
    assert isinstance(result, SequentialResult)
    assert result.verdict == "not violated" and result.stopped_at is None
    assert result.runs_per_input == 20_000 and result.max_log_wealth < math.log(20)
    # max_samples defaults to samples=.
    assert assert_dp(laplace_count(2.0), 1, 0, epsilon=1.0, samples=2_000,
                     sequential=True).runs_per_input == 2_000


@pytest.mark.parametrize("kwargs, exc, match", [
    (dict(sequential=True, max_samples=0), ValueError, r"max_samples must be an integer in \[100"),
    (dict(sequential=True, max_samples=-5), ValueError, r"max_samples must be an integer in \[100"),
    (dict(sequential=True, max_samples=99), ValueError, r"max_samples must be an integer in \[100"),
    (dict(sequential=True, max_samples=2.5), TypeError, r"max_samples must be an integer"),
    (dict(sequential=True, samples=50), ValueError, r"samples must be an integer in \[100"),
    (dict(max_samples=5_000), TypeError, r"max_samples .* pass sequential=True"),
    (dict(sequential="yes"), TypeError, r"sequential must be True or False, got 'yes'"),
    (dict(sequential=True, statistic=np.abs), TypeError, r"not statistic"),
    (dict(sequential=True, epsilon=0.0), ValueError, r"epsilon"),
    (dict(sequential=True, alpha=1.5), ValueError, r"alpha"),
])
def test_sequential_assert_dp_rejects_bad_input_naming_the_parameter(kwargs, exc, match) -> None:
    args = dict(epsilon=1.0) | kwargs
    with pytest.raises(exc, match=match):
        assert_dp(laplace_count(1.0), D0, D1, **args)


def test_sequential_assert_dp_takes_one_pair_not_a_pair_search() -> None:
    with pytest.raises(TypeError, match=r"one pair \(data0, data1\).*not pairs"):
        assert_dp(laplace_count(1.0), pairs=[(1, 0)], epsilon=1.0, sequential=True)


def test_fixture_object_runs_the_gate_when_told_and_seeds_it_from_the_test_id() -> None:
    auditor = DPAuditor("t::gate", base_seed=3, samples=2_000, sequential=True)
    first = auditor.assert_dp(laplace_count(2.0), 1, 0, epsilon=1.0)
    assert isinstance(first, SequentialResult)
    assert (first.seed, first.runs_per_input) == (derive_seed(3, "t::gate", 0), 2_000)
    plain = auditor.assert_dp(laplace_count(2.0), 1, 0, epsilon=1.0, sequential=False)
    assert not isinstance(plain, SequentialResult) and plain.samples == 2_000
    with pytest.raises(AssertionError, match=r"or rerun: pytest 't::gate' --dp-seed=3 "
                                             r"--dp-sequential"):
        auditor.assert_dp(laplace_count(0.1), 1, 0, epsilon=1.0)


# ------------------------------------------------------------------------------------------------
# --dp-sequential in a user's pytest run
# ------------------------------------------------------------------------------------------------

def test_dp_sequential_option_makes_the_fixture_run_the_gate(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_gate=MECHANISMS + '''
def test_ok(dp_auditor):
    result = dp_auditor.assert_dp(laplace_count(2.0), 1, 0, epsilon=1.0)
    print("RESULT", type(result).__name__, getattr(result, "runs_per_input", None), result.seed)

def test_bad(dp_auditor):
    dp_auditor.assert_dp(laplace_count(0.1), 1, 0, epsilon=1.0)

def test_plain_function_keeps_its_own_mode():
    r = assert_dp(laplace_count(2.0), 1, 0, epsilon=1.0, samples=2_000)
    print("PLAIN", type(r).__name__)
''')
    result = pytester.runpytest("-p", "no:cacheprovider", "-s", "--dp-sequential",
                                "--dp-samples", "3000")
    result.assert_outcomes(passed=2, failed=1)
    seed = derive_seed(0, "test_gate.py::test_ok", 0)
    bad_seed = derive_seed(0, "test_gate.py::test_bad", 0)
    result.stdout.fnmatch_lines([
        "dpaudit: dp_auditor base seed 0 (--dp-seed), sequential gate (--dp-sequential), at most "
        "3000 (--dp-samples)*",
        f"*RESULT SequentialResult 3000 {seed}*",  # --dp-samples is the gate's budget
        "*PLAIN AuditResult*",
        "E*AssertionError: (1, 0)-DP claim violated: the sequential gate stopped after * betting "
        "runs per input*",
        "E*event:*bettor:*",
        f"E*reproduce: assert_dp(*sequential=True, max_samples=3000, alpha=0.05, seed={bad_seed})",
        "E*or rerun: pytest 'test_gate.py::test_bad' --dp-seed=0 --dp-sequential",
    ])
    assert "dpaudit/testing.py" not in result.stdout.str()
    # Without the option the same fixture runs the fixed-budget audit.
    plain = pytester.runpytest("-p", "no:cacheprovider", "-s", "--dp-samples", "3000", "-k", "ok")
    plain.assert_outcomes(passed=1, deselected=2)
    plain.stdout.fnmatch_lines([f"*RESULT AuditResult None {seed}*"])


def test_dp_sequential_needs_at_least_100_samples(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--dp-sequential", "--dp-samples", "50")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--dp-samples must be at least 100 with --dp-sequential*50*"])
