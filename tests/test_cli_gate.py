"""``dpaudit gate``: the sequential CI gate from the command line (exit 1 violated / 0 otherwise).

The mechanisms are Laplace noise on a count (sensitivity 1 under add/remove): scale 0.1 against
a claim of epsilon 1 is 10-DP, a gross bug the gate catches right after its 1,000 training runs
(tests/test_testing_gate.py derives the bound: about 22 betting runs, asserted within 220);
scale 1 is exactly 1-DP and, at these fixed seeds, not flagged (a false alarm has probability
<= alpha by Ville's inequality, and the seed makes the outcome deterministic).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from dpaudit.claims import registry
from dpaudit.cli import main

MODULE = textwrap.dedent('''
    import numpy as np
    import dpaudit
    from dpaudit import Claim, Source

    def _release(factor):
        def make(params):
            def mechanism(data, n, rng):
                return float(np.sum(data)) + rng.laplace(0.0, factor / params["epsilon"], size=n)
            return mechanism
        return make

    for name, factor in (("good", 1.0), ("bad", 0.1)):
        dpaudit.register_claim(Claim(
            id=f"gatecli/{name}", statement="The noisy count is eps-DP.",
            source=Source(title="count note", kind="code", location="count()"),
            claimed=lambda p: (p["epsilon"], 0.0), neighbours="add-remove",
            grid=[{"epsilon": 1.0}], release=_release(factor),
            pairs=lambda p: [([1.0, 1.0], [1.0]), ([1.0], [])], samples=5_000))

    def bad_count(data, n, rng):
        return np.sum(data) + rng.laplace(0.0, 0.1, size=n)

    def good_count(data, n, rng):
        return np.sum(data) + rng.laplace(0.0, 1.0, size=n)
''')


@pytest.fixture
def user_module(tmp_path: Path) -> Path:
    path = tmp_path / "gate_user.py"
    path.write_text(MODULE)
    return path


def run(*argv: str, cwd: Path | None = None) -> tuple[int, str, str]:
    """The real console script in a fresh interpreter, as a CI step runs it."""
    proc = subprocess.run([sys.executable, "-m", "dpaudit", *argv], capture_output=True,
                          text=True, timeout=600, cwd=cwd)
    return proc.returncode, proc.stdout, proc.stderr


def test_gate_on_a_claim_exits_1_on_a_gross_bug_and_0_on_a_correct_release(user_module,
                                                                             capsys) -> None:
    code, out, err = run("gate", "gatecli/bad", "--plugin", str(user_module), "--quiet")
    assert code == 1, err
    lines = out.splitlines()
    # Two declared pairs: two gates, each at alpha / 2 (Bonferroni over the gated pairs).
    assert len(lines) == 3
    for line in lines[:2]:
        assert line.startswith("violated      after 10") and "[alpha 0.025," in line
        assert "gatecli/bad at (epsilon=1)" in line
    assert lines[2].startswith("gatecli/bad: 2 of 2 gated pairs violated (alpha 0.05 shared")
    assert "not evidence that the claim holds" in lines[2]
    assert err == ""  # --quiet

    # In process (one interpreter start is enough), unregistering what the plugin registered.
    try:
        code = main(["gate", "gatecli/good", "--plugin", str(user_module), "--json"])
        out, err = capsys.readouterr()
    finally:
        for name in ("gatecli/good", "gatecli/bad"):
            registry.unregister(name)
        for name in [m for m in sys.modules if m.startswith("dpaudit_plugin_gate_user")]:
            del sys.modules[name]
        registry._PLUGINS[:] = [p for p in registry._PLUGINS if p != str(user_module.resolve())]
    assert code == 0, err
    record = json.loads(out)
    assert record["outcome"] == "not violated" and record["alpha"] == 0.05
    assert "not violated is not evidence that the claim holds" in record["note"]
    assert [g["evidence"] for g in record["gated"]] == ["sequential gate (anytime-valid)"] * 2
    for g in record["gated"]:
        # The claim's own samples= is each gate's budget, and the gate ran all of it.
        assert g["alpha"] == 0.025 and g["gate"]["alpha"] == 0.025
        assert g["gate"]["verdict"] == "not violated" and g["gate"]["stopped_at"] is None
        assert g["gate"]["runs_per_input"] == 5_000
    assert {g["pair"] for g in record["gated"]} == {"data0=[1.0, 1.0], data1=[1.0]",
                                                    "data0=[1.0], data1=[]"}
    assert "gate 1 of 2" in err  # progress on stderr


def test_gate_on_a_mechanism_in_process(user_module, capsys, monkeypatch) -> None:
    monkeypatch.chdir(user_module.parent)
    monkeypatch.syspath_prepend(str(user_module.parent))
    code = main(["gate", "--mechanism", "gate_user:bad_count", "--data0", "[1, 0, 1]",
                 "--data1", "[1, 0, 0]", "--epsilon", "1"])
    out = capsys.readouterr().out
    assert code == 1
    assert out.startswith("violated      after 10") and "ln(1/alpha) = 2.996" in out
    assert "[alpha 0.05, seed 0] gate_user:bad_count data0=[1, 0, 1] data1=[1, 0, 0] claim (1, 0)" \
        in out
    code = main(["gate", "--mechanism", f"{user_module}:good_count", "--data0", "[1, 0, 1]",
                 "--data1", "[1, 0, 0]", "--epsilon", "1", "--max-samples", "3000", "--json"])
    record = json.loads(capsys.readouterr().out)
    assert code == 0
    assert record["evidence"] == "sequential gate (anytime-valid)"
    assert record["gate"]["verdict"] == "not violated"
    assert record["gate"]["runs_per_input"] == 3_000 and record["gate"]["max_samples"] == 3_000


@pytest.mark.parametrize("argv, message", [
    (["gate"], "needs either a CLAIM_ID or --mechanism"),
    (["gate", "x/y", "--mechanism", "m:f"], "needs either a CLAIM_ID or --mechanism"),
    (["gate", "--mechanism", "nocolon", "--data0", "1", "--data1", "0", "--epsilon", "1"],
     "--mechanism must be MODULE:FUNCTION"),
    (["gate", "--mechanism", "gate_user:bad_count", "--data1", "0", "--epsilon", "1"],
     "needs --data0"),
    (["gate", "--mechanism", "gate_user:bad_count", "--data0", "[1, 0", "--data1", "0",
      "--epsilon", "1"], "--data0 must be a Python literal"),
    (["gate", "--mechanism", "gate_user:nothing", "--data0", "1", "--data1", "0",
      "--epsilon", "1"], "has no function 'nothing'"),
    (["gate", "--mechanism", "no_such_module_xyz:f", "--data0", "1", "--data1", "0",
      "--epsilon", "1"], "failed to import"),
    (["gate", "afkt23/alg2", "--epsilon", "1"], "only go with --mechanism"),
])
def test_gate_usage_errors_exit_2_with_one_sentence(argv, message, user_module, capsys,
                                                     monkeypatch) -> None:
    monkeypatch.chdir(user_module.parent)
    monkeypatch.syspath_prepend(str(user_module.parent))
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("dpaudit: error:") and message in err


@pytest.mark.parametrize("option, value, message", [
    ("--max-samples", "0", "--max-samples: must be an integer >= 100, got '0'"),
    ("--max-samples", "99", "--max-samples: must be an integer >= 100, got '99'"),
    ("--epsilon", "-1", "--epsilon: must be a positive number, got '-1'"),
    ("--delta", "1", "--delta: must be a number in [0, 1), got '1'"),
    ("--alpha", "0", "--alpha: must be a number in (0, 1), got '0'"),
])
def test_gate_bad_numbers_are_rejected_naming_the_option(option, value, message, capsys) -> None:
    assert main(["gate", "--mechanism", "m:f", option, value]) == 2
    assert message in capsys.readouterr().err


def test_gate_without_pairs_to_bet_on_says_so(capsys) -> None:
    """A claim audited by a custom function has no declared pairs: a usage error, not a pass."""
    from dpaudit.claims.model import PrivacyClaim

    bundled = next(iter(registry.all_claims())).claim
    claim = PrivacyClaim(**{**bundled.__dict__, "id": "gatecli/custom"}) \
        if hasattr(bundled, "__dict__") else None
    if claim is None:
        pytest.skip("PrivacyClaim is not a plain dataclass")
    registry.register(claim, lambda ctx: None)
    try:
        assert main(["gate", "gatecli/custom"]) == 2
        assert "audited by a custom function" in capsys.readouterr().err
    finally:
        registry.unregister("gatecli/custom")


# ------------------------------------------------------------------------------------------------
# The library step (dpaudit.claims.claim_gate), without the command line
# ------------------------------------------------------------------------------------------------

def _count_claim(scale: float, **pairs):
    import numpy as np

    from dpaudit import Claim, Source

    def release(p):
        def mechanism(data, n, rng):
            return float(np.sum(data)) + rng.laplace(0.0, scale / p["epsilon"], size=n)
        return mechanism

    return Claim(id="gatecli/lib", statement="The noisy count is eps-DP.",
                 source=Source(title="count note", kind="code", location="count()"),
                 claimed=lambda p: (p["epsilon"], 0.0), neighbours="add-remove",
                 grid=[{"epsilon": 1.0}, {"epsilon": 2.0}], release=release, samples=2_000,
                 **pairs)


def test_gate_claim_shares_alpha_over_every_pair_of_every_point() -> None:
    from dpaudit.claims.claim_gate import gate_claim
    from dpaudit.claims.context import BUDGETS, AuditContext
    from dpaudit.claims.user_claims import declaration_of

    decl = declaration_of(_count_claim(0.1, pairs=lambda p: [([1.0], [])]))
    gate = gate_claim(decl, AuditContext(BUDGETS["quick"], seed=0, alpha=0.05))
    # Two grid points, one pair each: two gates at alpha / 2; a 10x too small noise at both.
    assert [g.parameters["epsilon"] for g in gate.gated] == [1.0, 2.0]
    assert all(g.alpha == 0.025 and g.result.alpha == 0.025 for g in gate.gated)
    assert gate.violated and all(g.violated for g in gate.gated) and not gate.not_gated
    assert all(g.result.runs_per_input < 2_000 for g in gate.gated)
    assert gate.to_dict()["outcome"] == "violated"
    with pytest.raises(ValueError, match=r"max_samples must be an integer in \[100"):
        gate_claim(decl, AuditContext(BUDGETS["quick"]), max_samples=0)


def test_gate_claim_reports_a_strategy_search_it_cannot_gate() -> None:
    from hypothesis import strategies as st

    from dpaudit.claims.claim_gate import gate_claim
    from dpaudit.claims.context import BUDGETS, AuditContext
    from dpaudit.claims.user_claims import declaration_of

    strategy = st.just(([1.0], []))
    decl = declaration_of(_count_claim(1.0, pair_search=lambda p: strategy))
    gate = gate_claim(decl, AuditContext(BUDGETS["quick"]))
    assert gate.gated == () and not gate.violated
    assert [n.parameters["epsilon"] for n in gate.not_gated] == [1.0, 2.0]
    assert all("Hypothesis strategy" in n.reason for n in gate.not_gated)
