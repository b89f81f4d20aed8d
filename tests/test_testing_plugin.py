"""The pytest plugin (``dpaudit.testing``): ``assert_dp``, the ``dp_auditor`` fixture, ``dp_slow``.

Users' test files are run with pytest's own ``pytester``; the plugin is picked up from its
``pytest11`` entry point exactly as in a user's CI. The mechanisms are Laplace noise on a counting
query (sensitivity 1): at scale 1 it is exactly 1-DP, at scale 1/2 it is 2-DP, so a 1-DP claim is
violated by a factor of 2, which the engine detects with a few thousand samples. Mechanisms that
must pass get slack (scale 2: 0.5-DP, claimed 1) unless the test is about the exact case.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from dpaudit.blackbox.empirical_audit import audit
from dpaudit.testing import DEFAULT_SAMPLES, DPAuditor, assert_dp, derive_seed

pytest_plugins = ["pytester"]

README = Path(__file__).resolve().parents[1] / "README.md"
EXAMPLE = re.compile(r"```python\n(# test_my_mechanism\.py\n.*?)```", re.S)

MECHANISMS = '''
import numpy as np
from dpaudit.testing import assert_dp

def laplace_count(scale):
    def mechanism(data, n, rng):
        return np.sum(data) + rng.laplace(0.0, scale, size=n)
    return mechanism
'''


def laplace_count(scale: float):
    def mechanism(data, n, rng):
        return np.sum(data) + rng.laplace(0.0, scale, size=n)
    return mechanism


# ------------------------------------------------------------------------------------------------
# assert_dp as a plain function
# ------------------------------------------------------------------------------------------------

def test_assert_dp_passes_a_correct_mechanism_and_returns_the_result() -> None:
    # Exactly 1-DP: a valid engine reports "violated" with probability <= alpha = 0.05; at this
    # fixed seed the outcome is deterministic. Other tests give correct mechanisms slack instead.
    result = assert_dp(laplace_count(1.0), [1, 0, 1], [1, 0, 0], epsilon=1.0, samples=20_000)
    assert result.verdict == "not violated"
    assert 0.0 <= result.epsilon_lower_bound <= 1.0
    assert result.seed == 0 and result.samples == 20_000


def test_assert_dp_fails_a_violation_with_a_readable_message() -> None:
    with pytest.raises(AssertionError) as info:
        assert_dp(laplace_count(0.5), [1, 0, 1], [1, 0, 0], epsilon=1.0, samples=20_000)
    message = str(info.value)
    lines = message.splitlines()
    assert re.fullmatch(r"\(1, 0\)-DP claim violated: empirical epsilon lower bound (\d\.\d+) > "
                        r"claimed epsilon 1 \(one-sided 95% confidence, exact one-sided "
                        r"Clopper-Pearson intervals, Bonferroni factor 1\)\.", lines[0])
    bound = float(re.search(r"lower bound (\d\.\d+)", lines[0]).group(1))
    assert 1.0 < bound <= 2.0  # valid lower bound on the true epsilon 2
    labels = [ln.split(":")[0].strip() for ln in lines[1:]]
    assert labels[:4] == ["event", "counts", "bound", "samples"] and labels[-1] == "reproduce"
    counts = re.search(r"counts: +(\d+) / (\d+) runs on data0, (\d+) / (\d+) runs on data1",
                       message)
    # The counts are the engine's test-split counts of the chosen event, for the same call.
    same = audit(laplace_count(0.5), [1, 0, 1], [1, 0, 0], epsilon=1.0, samples=20_000, seed=0)
    assert counts and tuple(map(int, counts.groups())) == (
        same.event.test_counts[0], same.n_test, same.event.test_counts[1], same.n_test)
    assert f"lower bound {same.epsilon_lower_bound:.4g} >" in lines[0]
    assert ("reproduce: assert_dp(mechanism, data0, data1, epsilon=1.0, delta=0.0, "
            "samples=20000, alpha=0.05, seed=0)") in message


def test_assert_dp_is_deterministic_and_seeded() -> None:
    a = assert_dp(laplace_count(1.0), 1, 0, epsilon=1.5, samples=5_000, seed=11)
    b = assert_dp(laplace_count(1.0), 1, 0, epsilon=1.5, samples=5_000, seed=11)
    c = assert_dp(laplace_count(1.0), 1, 0, epsilon=1.5, samples=5_000, seed=12)
    assert a.epsilon_lower_bound == b.epsilon_lower_bound != c.epsilon_lower_bound


def test_assert_dp_passes_engine_options_and_rejects_bad_claims() -> None:
    result = assert_dp(laplace_count(2.0), pairs=[(1, 1), (1, 0)], epsilon=1.0, samples=20_000)
    assert result.pair_index == 1  # the pilot picks the pair that differs
    with pytest.raises(ValueError, match="epsilon"):
        assert_dp(laplace_count(1.0), 1, 0, epsilon=0.0)
    with pytest.raises(TypeError):
        assert_dp(laplace_count(1.0), 1, 0)  # the claim is required, there is no default epsilon


def test_derived_seeds_are_fixed_and_distinct() -> None:
    assert derive_seed(0, "tests/test_x.py::test_a") == derive_seed(0, "tests/test_x.py::test_a")
    seeds = {derive_seed(b, t, k) for b in (0, 1) for t in ("t::a", "t::b") for k in (0, 1)}
    assert len(seeds) == 8 and all(0 <= s < 2**32 for s in seeds)
    auditor = DPAuditor("t::a", base_seed=0, samples=5_000)
    first = auditor.audit(laplace_count(1.0), 1, 0, epsilon=1.0)
    second = auditor.audit(laplace_count(1.0), 1, 0, epsilon=1.0)
    assert (first.seed, second.seed) == (derive_seed(0, "t::a", 0), derive_seed(0, "t::a", 1))
    assert first.samples == 5_000


# ------------------------------------------------------------------------------------------------
# The plugin in a user's pytest run
# ------------------------------------------------------------------------------------------------

def test_plugin_fails_only_the_violating_test(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_user=MECHANISMS + '''
def test_correct():
    assert_dp(laplace_count(2.0), [1, 0, 1], [1, 0, 0], epsilon=1.0, samples=20_000)

def test_too_little_noise():
    assert_dp(laplace_count(0.5), [1, 0, 1], [1, 0, 0], epsilon=1.0, samples=20_000)
''')
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    # pytest shows the user's call (assert_dp's own frames are hidden) and the whole message.
    result.stdout.fnmatch_lines([
        "*def test_too_little_noise():",
        ">*assert_dp(laplace_count(0.5), [[]1, 0, 1], [[]1, 0, 0], epsilon=1.0, samples=20_000)",
        "E*AssertionError: (1, 0)-DP claim violated: empirical epsilon lower bound * > claimed "
        "epsilon 1 *",
        "E*event:*score*",
        "E*counts:*runs on data0*runs on data1*",
        "E*reproduce: assert_dp(mechanism, data0, data1, epsilon=1.0, delta=0.0, samples=20000, "
        "alpha=0.05, seed=0)",
    ])
    assert "dpaudit/testing.py" not in result.stdout.str()


def test_fixture_seeds_each_test_from_its_id(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_fix=MECHANISMS + '''
def test_ok(dp_auditor):
    result = dp_auditor.assert_dp(laplace_count(2.0), 1, 0, epsilon=1.0)
    print("SEED", result.seed, result.samples)

def test_bad(dp_auditor):
    dp_auditor.assert_dp(laplace_count(0.5), 1, 0, epsilon=1.0, samples=20_000)
''')
    first = pytester.runpytest("-p", "no:cacheprovider", "-s", "--dp-samples", "5000")
    first.assert_outcomes(passed=1, failed=1)
    seed = derive_seed(0, "test_fix.py::test_ok", 0)
    first.stdout.fnmatch_lines([f"*SEED {seed} 5000*"])
    bad_seed = derive_seed(0, "test_fix.py::test_bad", 0)
    first.stdout.fnmatch_lines([f"E*reproduce: assert_dp(*samples=20000, alpha=0.05, "
                                f"seed={bad_seed})",
                                "E*or rerun: pytest 'test_fix.py::test_bad' --dp-seed=0"])
    again = pytester.runpytest("-p", "no:cacheprovider", "-s", "--dp-samples", "5000")
    again.stdout.fnmatch_lines([f"*SEED {seed} 5000*"])  # deterministic by default
    other = pytester.runpytest("-p", "no:cacheprovider", "-s", "--dp-seed", "7", "-k", "ok")
    other.stdout.fnmatch_lines([f"*SEED {derive_seed(7, 'test_fix.py::test_ok', 0)} "
                                f"{DEFAULT_SAMPLES}*"])


def test_dp_slow_marker_is_registered_and_selectable(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_slow=MECHANISMS + '''
import pytest

@pytest.mark.dp_slow
def test_long_audit():
    assert_dp(laplace_count(2.0), 1, 0, epsilon=1.0, samples=5_000)

def test_short():
    pass
''')
    result = pytester.runpytest("-p", "no:cacheprovider", "--strict-markers")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["dpaudit: dp_auditor base seed 0 (--dp-seed)*"])
    quick = pytester.runpytest("-p", "no:cacheprovider", "--strict-markers", "-m", "not dp_slow")
    quick.assert_outcomes(passed=1, deselected=1)
    markers = pytester.runpytest("--markers")
    markers.stdout.fnmatch_lines(["@pytest.mark.dp_slow: a slow differential-privacy audit*"])


def test_bad_plugin_options_are_usage_errors(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--dp-seed", "-3")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--dp-seed: expected a non-negative integer, got '-3'*"])
    result = pytester.runpytest("--dp-samples", "5")
    result.stderr.fnmatch_lines(["*--dp-samples: expected at least 10 samples, got '5'*"])


def test_readme_example_runs_as_written(pytester: pytest.Pytester) -> None:
    example = EXAMPLE.search(README.read_text()) if README.is_file() else None
    if example is None:
        pytest.skip("README.md has no '# test_my_mechanism.py' plugin example yet")
    code = example.group(1)
    assert len(code.strip().splitlines()) <= 12
    pytester.makepyfile(test_my_mechanism=code)
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=2)


# ------------------------------------------------------------------------------------------------
# The assertions without pytest (`from dpaudit.testing import assert_dp` once needed it)
# ------------------------------------------------------------------------------------------------

NO_PYTEST = r'''
import importlib.abc, sys

class NoPytest(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("pytest", "_pytest"):
            raise ImportError(f"No module named {name!r} (blocked by the test)")
        return None

sys.meta_path.insert(0, NoPytest())
for name in [m for m in sys.modules if m.split(".")[0] in ("pytest", "_pytest")]:
    del sys.modules[name]

import numpy as np
from dpaudit.testing import assert_claim, assert_dp, assert_sensitivity

def laplace_count(scale):
    def mechanism(data, n, rng):
        return np.sum(data) + rng.laplace(0.0, scale, size=n)
    return mechanism

# 0.5-DP claimed 1: passes; scale 1/2 is 2-DP claimed 1: fails (as in the tests above).
assert assert_dp(laplace_count(2.0), [1, 0, 1], [1, 0, 0], epsilon=1.0, samples=5_000
                 ).verdict == "not violated"
try:
    assert_dp(laplace_count(0.5), [1, 0, 1], [1, 0, 0], epsilon=1.0, samples=20_000)
except AssertionError as exc:
    assert "claim violated" in str(exc)
else:
    raise SystemExit("assert_dp did not fail a 2-DP mechanism claimed 1-DP")
try:  # the sequential gate runs without pytest too
    assert_dp(laplace_count(0.5), [1, 0, 1], [1, 0, 0], epsilon=1.0, sequential=True,
              max_samples=20_000)
except AssertionError as exc:
    assert "sequential gate stopped" in str(exc)
else:
    raise SystemExit("assert_dp(sequential=True) did not fail a 2-DP mechanism claimed 1-DP")
assert not any(m.split(".")[0] in ("pytest", "_pytest") for m in sys.modules)
print("ok")
'''


def test_the_assertions_import_and_work_without_pytest() -> None:
    """In a fresh interpreter where importing pytest fails, the assertions import and work."""
    import subprocess
    import sys

    blocked = subprocess.run([sys.executable, "-c", "import sys\n" + NO_PYTEST.split(
        "for name")[0] + "import pytest"], capture_output=True, text=True, timeout=60)
    assert blocked.returncode != 0 and "blocked by the test" in blocked.stderr  # the block works
    proc = subprocess.run([sys.executable, "-c", NO_PYTEST], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-2000:]
