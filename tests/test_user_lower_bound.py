"""A user-supplied lower bound (``Claim.lower_bound``) and one label per user number.

The release is Laplace(1/eps) noise on a sum clipped to [0, 1]: under add/remove a record moves
the sum by at most 1, so the mechanism is exactly eps-DP and the pair ``[0, 1]`` vs ``[0]``
attains it (Dwork-Roth 2014, Thm 3.6); dpaudit's accountant gives eps. A user's rigorous lower
bound on the release's epsilon is a number dpaudit does not check: above the claim it refutes the
claim (the verdict says it rests on a user-supplied number), above the accountant the accountant
certifies nothing, and it never makes a claim hold. Every number a user hands in carries one
label wherever it shows: "user-supplied lower bound", "user-supplied exact epsilon",
"user-supplied accountant epsilon".
"""

from __future__ import annotations

import json
import math
import random

import numpy as np
import pytest

import dpaudit
from dpaudit import Claim, Source
from dpaudit.claims.registry import unregister
from dpaudit.reporting.html import render_claim_html
from dpaudit.reporting.markdown import render_claim_markdown
from dpaudit.reporting.terminal import summary_table

LABEL = "user-supplied lower bound"
IDS = ("lb/above", "lb/below", "lb/between", "lb/no-accountant", "lb/user-exact")


def clipped_sum(data) -> float:
    return float(np.clip(np.asarray(data, dtype=float), 0.0, 1.0).sum())


def _release(p):
    def mechanism(data, n, rng):
        return clipped_sum(data) + rng.laplace(0.0, 1.0 / p["epsilon"], size=n)
    return mechanism


def laplace_claim(claim_id: str, **extra) -> Claim:
    kwargs = dict(
        id=claim_id, statement="The clipped sum with Laplace(1/eps) noise is eps-DP.",
        source=Source(title="clipped-sum note", kind="design doc", location="Sec. 2"),
        claimed=lambda p: (p["epsilon"], 0.0), neighbours="add-remove",
        grid=[{"epsilon": 0.5}, {"epsilon": 1.0}], release=_release,
        pairs=lambda p: [([0.0, 1.0], [0.0])],
        accountant=lambda p: dpaudit.noise.LaplaceNoise(1.0 / p["epsilon"], sensitivity=1.0),
        samples=5_000)
    kwargs.update(extra)
    return Claim(**kwargs)


@pytest.fixture(autouse=True)
def _forget():
    yield
    for cid in IDS:
        unregister(cid)


def _audit(claim: Claim, tmp_path) -> tuple[object, dict]:
    result = dpaudit.audit_claim(claim, budget="quick", seed=0, out=tmp_path)
    ns, name = claim.id.split("/")
    # The written record (validated against the claim schema by the writer).
    record = json.loads((tmp_path / ns / f"{name}.json").read_text(encoding="utf-8"))
    return result, record


def test_a_user_lower_bound_above_the_claim_violates_it_and_says_so_everywhere(tmp_path) -> None:
    # 2 eps > eps = claim = accountant = exact: refuted by the user's number alone (dpaudit's
    # own evidence agrees with the claim exactly), and above dpaudit's accountant.
    result, record = _audit(laplace_claim("lb/above", lower_bound=lambda p: 2 * p["epsilon"]),
                            tmp_path)
    verdict, reason = result.verdict_and_reason
    assert verdict == "violated"
    assert f"{LABEL} 1 > claimed 0.5" in reason
    assert "resting on a user-supplied number" in reason and "not computed by dpaudit" in reason
    for point in record["points"]:  # JSON: the field, and the label in the evidence
        assert point["epsilon_user_lower_bound"] == pytest.approx(2 * point["claimed_epsilon"])
        assert point["evidence"]["user_lower_bound"].startswith(LABEL)
        # dpaudit's own numbers are the closed form: they do not refute.
        assert point["epsilon_exact"] == pytest.approx(point["claimed_epsilon"], rel=1e-9)
    assert record["worst_case"]["epsilon_user_lower_bound"] == pytest.approx(1.0)
    findings = " ".join(record["findings"])
    assert f"The {LABEL} at 2 point(s) (Claim.lower_bound) is not computed by dpaudit" in findings
    assert f"INCONSISTENCY at (epsilon=0.5): the {LABEL} 1 (not computed by dpaudit)" in findings
    assert f"{LABEL} 1." in record["findings"][0]        # the summary sentence
    terminal = " ".join(summary_table([record]).split())
    assert "1 (user)" in terminal and f"(user): {LABEL}, not computed by dpaudit" in terminal
    html = render_claim_html(record)
    assert f"{LABEL} ε (not computed by dpaudit)" in html      # the headline card
    assert f"1 ({LABEL})" in html                              # the evidence table
    assert f"{LABEL} 1 (not computed by dpaudit)" in render_claim_markdown(record)


def test_a_user_lower_bound_below_the_claim_is_no_violation(tmp_path) -> None:
    # 0.25 <= both claims (0.5 and 1) and both accountants: the verdict is the one without it.
    result, record = _audit(laplace_claim("lb/below", lower_bound=0.25), tmp_path)
    baseline = dpaudit.audit_claim(laplace_claim("lb/no-accountant"), budget="quick", seed=0)
    assert baseline.verdict == "holds"
    assert result.verdict == "holds"
    assert result.verdict_and_reason[1] == baseline.verdict_and_reason[1]
    assert all(p["epsilon_user_lower_bound"] == 0.25 for p in record["points"])
    assert not any("INCONSISTENCY" in f for f in record["findings"])
    assert any(f"The {LABEL} at 2 point(s)" in f and "above the claim at 0 of them" in f
               for f in record["findings"])


def test_a_user_lower_bound_above_the_accountant_takes_its_certificate_away(tmp_path) -> None:
    # Claimed 2 eps, accountant eps, user's bound 1.5 eps: no refutation, but the user's number
    # and the accountant contradict each other, so the accountant certifies nothing.
    result, _ = _audit(laplace_claim("lb/between", claimed=lambda p: (2 * p["epsilon"], 0.0),
                                     lower_bound=lambda p: 1.5 * p["epsilon"]), tmp_path)
    verdict, reason = result.verdict_and_reason
    assert verdict == "inconclusive"
    # Both points exceed by 1.5x; the sentence names the first of them (eps = 0.5).
    assert (f"at epsilon=0.5 the {LABEL} 0.75 (not computed by dpaudit) exceeds the "
            "accountant's 0.5") in reason
    assert "certifies nothing" in reason


def test_a_user_lower_bound_never_makes_a_claim_hold() -> None:
    # No accountant: inconclusive with or without a lower bound below the claim.
    result = dpaudit.audit_claim(laplace_claim("lb/no-accountant", accountant=None,
                                               lower_bound=0.1), budget="quick", seed=0)
    assert result.verdict == "inconclusive"
    assert "no accountant bound" in result.verdict_and_reason[1]


@pytest.mark.parametrize("value, error, match", [
    (-0.5, ValueError, "Claim.lower_bound must be a finite number >= 0"),
    (math.nan, ValueError, "Claim.lower_bound must be a finite number >= 0"),
    (math.inf, ValueError, "Claim.lower_bound must be a finite number >= 0"),
    ("1.0", TypeError, "Claim.lower_bound must be a number or a callable"),
    (True, TypeError, "Claim.lower_bound must be a number or a callable"),
])
def test_bad_lower_bounds_are_refused_with_the_fields_name(value, error, match) -> None:
    with pytest.raises(error, match=match):
        laplace_claim("lb/below", lower_bound=value)


def test_a_bad_value_returned_by_the_callable_names_the_field_and_the_point() -> None:
    claim = laplace_claim("lb/below", lower_bound=lambda p: -p["epsilon"])
    with pytest.raises(ValueError, match=r"Claim.lower_bound .* at \{'epsilon': 0.5\}, got -0.5"):
        claim.lower_bound_at({"epsilon": 0.5})
    with pytest.raises(ValueError, match="Claim.lower_bound"):
        dpaudit.audit_claim(claim, budget="quick", seed=0)


def _global_rng_release(p):
    # Python's random module: no draw source reads it, so no law is derived from the code and
    # the user's exact number is the exact evidence.
    def mechanism(data, n, rng):
        draw = random.Random(int(rng.integers(2**32)))
        b = 1.0 / p["epsilon"]
        return clipped_sum(data) + np.array([b * (draw.expovariate(1.0) - draw.expovariate(1.0))
                                             for _ in range(n)])
    return mechanism


def test_a_user_exact_epsilon_carries_one_label_in_verdict_findings_and_reports(tmp_path) -> None:
    # 3 eps handed in as the exact epsilon: the verdict, the summary finding (which called it a
    # "certified lower bound (numerical)"), the card and the JSON all name it one way.
    result, record = _audit(laplace_claim("lb/user-exact", release=_global_rng_release,
                                          exact_value=lambda p, d0, d1: 3 * p["epsilon"]),
                            tmp_path)
    label = "user-supplied exact epsilon"
    assert result.verdict == "violated"
    assert f"{label} (not computed by dpaudit) 1.5 > claimed 0.5" in result.verdict_and_reason[1]
    summary = record["findings"][0]
    assert f"{label}/claimed in [3, 3]" in summary and f"{label} 1.5," in summary
    assert "certified lower bound" not in summary
    assert any(f"The {label} at 2 point(s) (Claim.exact_value) is not computed by dpaudit" in f
               for f in record["findings"])
    assert all(p["exact_kind"] == "user-supplied" for p in record["points"])
    assert "user-supplied exact ε" in render_claim_html(record)


def test_a_holds_sentence_names_the_user_supplied_accountant_epsilon() -> None:
    result = dpaudit.audit_claim(laplace_claim("lb/below", accountant=lambda p: p["epsilon"]),
                                 budget="quick", seed=0)
    assert result.verdict == "holds"
    assert ("the accountant (user-supplied accountant epsilon at 2 of 2 points, not computed by "
            "dpaudit) is at or below the claim") in result.verdict_and_reason[1]
    assert any("The user-supplied accountant epsilon at 2 point(s)" in f for f in result.findings)


def test_the_claim_api_pages_lower_bound_example_runs() -> None:
    # docs/claim-api.md's "Your own lower bound" example, run as written.
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "docs" / "claim-api.md").read_text()
    section = text.split("## Your own lower bound", 1)[1]
    block = re.search(r"```python\n(.*?)\n```", section, re.S).group(1)
    scope: dict = {"__name__": "claim_api_lower_bound"}
    try:
        exec(compile(block, "docs/claim-api.md", "exec"), scope)
    finally:
        unregister("lower-bound-example/sum")
    assert scope["verdict"] == "violated"
