"""The public claim API: a user's claim is audited by the same engine, verdict rules and reports.

The mechanisms here are Laplace releases of a clipped sum, whose exact epsilon is known by hand:
a sum of values clipped to [0, 1] moves by at most 1 under add/remove, so Laplace noise of scale
1/eps is exactly eps-DP (the pair [0, 1] vs [0] attains it), and scale 1/(2 eps) is exactly 2 eps.
"""

from __future__ import annotations

import json
import math
import random

import numpy as np
import pytest
from hypothesis import strategies as st

import dpaudit
from dpaudit import Claim, Lemma, Source
from dpaudit.claims.registry import get, unregister

SOURCE = Source(title="clipped-sum note", kind="design doc", location="Sec. 2")


def clipped_sum(data) -> float:
    return float(np.clip(np.asarray(data, dtype=float), 0.0, 1.0).sum())


def laplace_claim(claim_id: str, scale_factor: float, **extra) -> Claim:
    """Laplace(scale_factor / eps) noise on the clipped sum, claimed eps-DP (add/remove)."""
    def release(p):
        def mechanism(data, n, rng):
            return clipped_sum(data) + rng.laplace(0.0, scale_factor / p["epsilon"], size=n)
        return mechanism

    kwargs = dict(
        id=claim_id, statement="The clipped sum with Laplace noise is eps-DP.", source=SOURCE,
        claimed=lambda p: (p["epsilon"], 0.0), neighbours="add-remove",
        grid=[{"epsilon": 0.5}, {"epsilon": 1.0}], release=release,
        pairs=lambda p: [([0.0, 1.0], [0.0]), ([0.0, 0.5], [0.0])],
        accountant=lambda p: dpaudit.noise.LaplaceNoise(scale_factor / p["epsilon"],
                                                        sensitivity=1.0),
        exact=lambda p: dpaudit.exact.ProductLaplace(mean=lambda d: [clipped_sum(d)],
                                                     scale=scale_factor / p["epsilon"]),
        samples=20_000)
    kwargs.update(extra)
    return Claim(**kwargs)


@pytest.fixture(autouse=True)
def _forget():
    yield
    for cid in ("test-api/laplace-ok", "test-api/laplace-half", "test-api/laplace-user",
                "test-api/lemma"):
        unregister(cid)


def test_correct_claim_holds_with_dpaudits_own_exact_value() -> None:
    result = dpaudit.audit_claim(laplace_claim("test-api/laplace-ok", 1.0), budget="quick")
    assert result.verdict == "holds"
    worst = result.worst_point()
    # exact = accountant = eps on the pair [0, 1] vs [0] (by hand, module docstring).
    assert worst.epsilon_exact == pytest.approx(worst.claimed_epsilon, rel=1e-12)
    assert worst.exact_kind == "exact"
    assert worst.epsilon_accountant == pytest.approx(worst.claimed_epsilon, rel=1e-12)


def test_half_the_noise_is_violated_by_the_exact_epsilon() -> None:
    result = dpaudit.audit_claim(laplace_claim("test-api/laplace-half", 0.5), budget="quick")
    assert result.verdict == "violated"
    worst = result.worst_point()
    assert worst.epsilon_exact == pytest.approx(2 * worst.claimed_epsilon, rel=1e-12)
    assert "exact epsilon" in result.verdict_and_reason[1]


def _global_rng_release(p):
    # Draws from python's random module (Laplace as a difference of two exponentials), a source
    # dpaudit does not intercept (numpy's global functions it does: tests/test_draw_sources.py),
    # so no law is derived from its code and the user's number is the only exact evidence.
    def mechanism(data, n, rng):
        b = 1.0 / p["epsilon"]
        return clipped_sum(data) + np.array([b * (random.expovariate(1.0) - random.expovariate(1.0))
                                             for _ in range(n)])
    return mechanism


def test_a_user_supplied_exact_value_is_labelled_and_an_inversion_is_a_finding() -> None:
    # The user's own number (3 eps) is above the accountant (eps): an inversion, reported, and
    # the verdict names the value as user-supplied.
    claim = laplace_claim("test-api/laplace-user", 1.0, exact=None, release=_global_rng_release,
                          exact_value=lambda p, d0, d1: 3 * p["epsilon"])
    result = dpaudit.audit_claim(claim, budget="quick")
    record = result.to_dict()
    assert result.verdict == "violated"
    assert "user-supplied" in result.verdict_and_reason[1]
    assert all(p["exact_kind"] == "user-supplied" for p in record["points"])
    assert any(f.startswith("INCONSISTENCY") and "user-supplied" in f
               for f in record["findings"])
    assert any("user-supplied" in f and "not computed by dpaudit" in f
               for f in record["findings"])
    # The record says which evidence was drawn from the code and which was declared.
    origin = record["points"][0]["evidence"]["evidence_origin"]
    assert origin["exact"] == "declared (user-supplied number)"
    assert "not derivable" not in origin["exact"]
    assert "a source dpaudit does not intercept" in \
        record["points"][0]["evidence"]["derivation"]["reason"]


def test_a_user_supplied_value_the_code_contradicts_certifies_nothing() -> None:
    # The same wrong number (3 eps) on a release that draws from dpaudit's rng: the law derived
    # from the code gives eps on [0, 1] vs [0] (by hand, module docstring), which decides; the
    # user's number is a finding.
    claim = laplace_claim("test-api/laplace-user", 1.0, exact=None,
                          exact_value=lambda p, d0, d1: 3 * p["epsilon"])
    result = dpaudit.audit_claim(claim, budget="quick")
    assert result.verdict == "holds"
    for p in result.points:
        assert p.epsilon_exact == pytest.approx(p.claimed_epsilon, rel=1e-12)
        assert p.evidence["exact_source"] == "derived from the code"
        assert p.evidence["user_supplied_exact"] == pytest.approx(3 * p.claimed_epsilon)
    assert any("user-supplied exact epsilon 3" in f and "differs from the 1 derived" in f
               for f in result.findings)


def test_lemma_counterexample_is_shrunk_and_fails_the_claim_lemma() -> None:
    pairs = st.tuples(st.floats(0, 10), st.floats(0, 10)).map(lambda ab: ([ab[0]], [ab[1]]))
    lemma = Lemma(statement="the unclipped sum moves by at most 1", pairs=pairs,
                  quantity=lambda d0, d1, p: abs(sum(d0) - sum(d1)), bound=1.0)
    result = dpaudit.audit_claim(laplace_claim("test-api/lemma", 1.0, lemmas=[lemma]),
                                 budget="quick")
    (check,) = [c for c in result.lemmas if c.statement == lemma.statement]
    assert check.status == "violated"
    # Hypothesis shrinks towards the smallest failing pair: |a - b| just above 1.
    assert 1.0 < check.counterexample["observed"] <= 2.0
    assert check.counterexample["parameters"] in ({"epsilon": 0.5}, {"epsilon": 1.0})


def test_audit_claim_writes_the_clis_reports(tmp_path) -> None:
    result = dpaudit.audit_claim(laplace_claim("test-api/laplace-ok", 1.0), budget="quick",
                                 out=tmp_path)
    saved = json.loads((tmp_path / "test-api" / "laplace-ok.json").read_text())
    assert saved["verdict"] == result.verdict == "holds"
    assert (tmp_path / "test-api" / "laplace-ok.html").exists()
    assert (tmp_path / "index.json").exists()
    # Registered by this test module's code: the reproduce command names its file as a plugin.
    assert "--plugin" in saved["reproduce"] and "test_claim_api.py" in saved["reproduce"]
    assert saved["claim"]["provenance"]["kind"] == "design doc"
    assert get("test-api/laplace-ok").origin.kind == "code"


def test_audit_claim_with_out_never_runs_the_command_line(tmp_path) -> None:
    # audit_claim(out=...) once built an argv and called the CLI's main in-process. It now
    # calls the runner the CLI calls; in a fresh interpreter the CLI is never even imported.
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent(f"""
        import sys
        import dpaudit
        from dpaudit.noise import LaplaceNoise
        claim = dpaudit.Claim(
            id="test-api/no-cli", statement="x + Laplace(1)", source=dpaudit.Source(title="t"),
            claimed=lambda p: (1.0, 0.0), neighbours="add-remove", grid=[{{}}],
            release=lambda p: (lambda x, n, rng: sum(x) + rng.laplace(0.0, 1.0, size=(n, 1))),
            pairs=lambda p: [([1.0], [])], accountant=lambda p: LaplaceNoise(1.0, sensitivity=1.0))
        result = dpaudit.audit_claim(claim, budget="quick", out={str(tmp_path)!r})
        assert result.verdict == "holds", result.verdict
        loaded = sorted(m for m in sys.modules if m == "dpaudit.cli" or m.startswith("dpaudit.cli."))
        print(loaded)
    """)
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]"
    assert json.loads((tmp_path / "test-api" / "no-cli.json").read_text())["verdict"] == "holds"
    # A report directory the runner refuses is a ValueError naming it, as before.
    (tmp_path / "file").write_text("x")
    with pytest.raises(ValueError, match="not a directory"):
        dpaudit.audit_claim(laplace_claim("test-api/laplace-ok", 1.0), budget="quick",
                            out=tmp_path / "file")


@pytest.mark.parametrize("bad,match", [
    (dict(id="no-namespace"), "namespace"),
    (dict(id="a/../b"), "namespace"),
    (dict(neighbours="replace one"), "replace-one, add-remove"),
    (dict(grid=[]), "at least one"),
    (dict(source="a paper"), "dpaudit.Source"),
    (dict(release=5), "release"),
    (dict(exact_value=lambda p, a, b: 1.0), "not both"),
])
def test_bad_claims_are_refused_with_the_field_named(bad, match) -> None:
    with pytest.raises((TypeError, ValueError), match=match):
        laplace_claim("test-api/bad", 1.0, **bad)


def test_the_neighbouring_relation_has_no_default() -> None:
    with pytest.raises(TypeError, match="neighbours"):
        Claim(id="a/b", statement="s", source=SOURCE, claimed=lambda p: (1.0, 0.0),
              grid=[{}], release=lambda p: None)  # type: ignore[call-arg]


def test_claimed_values_out_of_range_name_the_point() -> None:
    claim = laplace_claim("test-api/bad", 1.0, claimed=lambda p: (-1.0, 0.0))
    with pytest.raises(ValueError, match="epsilon"):
        claim.claimed_at({"epsilon": 1.0})
    assert math.isfinite(laplace_claim("test-api/ok", 1.0).claimed_at({"epsilon": 2.0})[0])
