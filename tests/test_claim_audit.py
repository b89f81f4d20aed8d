"""Verdict rules and the JSON contract of a claim audit (index.json schema dpaudit.report/1)."""

import json
import math

import pytest

from dpaudit.claims.record import ClaimAudit
from dpaudit.claims.evidence import GridPoint, LemmaCheck
from dpaudit.claims.verdict import decide_verdict
from dpaudit.claims.context import BUDGETS, AuditContext
from dpaudit.claims import PrivacyClaim, Provenance

CLAIM = PrivacyClaim("paper-v1/alg", 1.0, 1e-5, Provenance("p.txt", "v1", "Theorem 1"))


def point(**kw):
    return GridPoint({"T": 8}, 1.0, 1e-5, **kw)


def test_exact_epsilon_above_claim_is_a_violation():
    v, why = decide_verdict([point(epsilon_exact=1.2, epsilon_accountant=0.9)], [])
    assert v == "violated" and "exact epsilon 1.2" in why


def test_exact_epsilon_within_float_tolerance_is_not_a_violation():
    v, _ = decide_verdict([point(epsilon_exact=1.0 + 1e-9, epsilon_accountant=1.0)], [])
    assert v == "holds"


def test_empirical_bound_above_claim_is_a_violation():
    v, why = decide_verdict([point(epsilon_lower_bound=1.01, epsilon_accountant=0.5)], [])
    assert v == "violated" and "empirical lower bound" in why


def test_accountant_above_claim_without_counterexample_is_inconclusive():
    v, why = decide_verdict([point(epsilon_accountant=3.0, epsilon_lower_bound=0.2)], [])
    assert v == "inconclusive" and "accountant" in why


def test_inconclusive_reason_states_the_bracket_and_the_number_that_decides_it():
    """An inconclusive verdict names the interval the release's epsilon is known to lie
    in at the deciding point (largest lower evidence .. accountant) and the claimed value inside
    it, and what the test at this budget could detect there."""
    power = {"detectable_epsilon": 1.7, "power": 0.8}
    pts = [point(epsilon_accountant=3.0, epsilon_lower_bound=0.2, epsilon_exact=0.6,
                 exact_kind="certified lower bound (numerical)",
                 evidence={"empirical": {"power": power}}),
           GridPoint({"T": 16}, 1.0, 1e-5, epsilon_accountant=1.5)]
    v, why = decide_verdict(pts, [])
    assert v == "inconclusive"
    assert "accountant gives epsilon 3 > claimed 1 at T=8 (and at 1 other of the 2" in why
    # One sentence: the number that decides it, its known bracket, the claimed value.
    assert ("The one number that decides it: the implemented release's epsilon there, known to be "
            "between 0.6 (certified lower bound of the worst pair found) and 3 (accountant); "
            "above 1 the claim fails, at or below it the claim holds there.") in why
    assert "detects epsilon >= 1.7 there with probability 0.8" in why
    _, why = decide_verdict([point(epsilon_accountant=3.0)], [])
    assert "known to be at most 3 (accountant; no lower evidence at this point)" in why
    power["detectable_epsilon"] = "inf"
    _, why = decide_verdict(pts[:1], [])
    assert "detects no finite epsilon there" in why


def test_failed_lemma_without_privacy_counterexample_is_inconclusive():
    lem = LemmaCheck("s <= 2L/(alpha t)", "violated", worst_ratio=2.0, examples=10)
    v, _ = decide_verdict([point(epsilon_accountant=0.5)], [lem])
    assert v == "inconclusive"


def test_missing_accountant_is_inconclusive_and_no_points_is_inconclusive():
    assert decide_verdict([point(epsilon_lower_bound=0.3)], [])[0] == "inconclusive"
    assert decide_verdict([], [])[0] == "inconclusive"


def test_holds_needs_accountant_everywhere_and_lemmas():
    lem = LemmaCheck("s <= 2L/(alpha t)", "holds", worst_ratio=0.99, examples=10)
    assert decide_verdict([point(epsilon_accountant=1.0, epsilon_lower_bound=0.7)], [lem])[0] == "holds"


def test_to_dict_has_index_schema_fields_and_round_trips():
    audit = ClaimAudit(CLAIM, [point(epsilon_accountant=0.8, epsilon_lower_bound=0.5),
                               GridPoint({"T": 64}, 1.0, 1e-5, epsilon_exact=math.inf,
                                         epsilon_accountant=math.inf)],
                       lemmas=[LemmaCheck("lemma", "holds", 0.5, 3)])
    d = json.loads(json.dumps(audit.to_dict()))
    assert d["id"] == "paper-v1/alg" and d["paper"] == "p.txt" and d["theorem"] == "Theorem 1"
    assert d["claimed"] == {"epsilon": 1.0, "delta": 1e-5}
    assert d["verdict"] == "violated"
    assert d["worst_case"]["parameters"] == {"T": 64}
    assert d["worst_case"]["epsilon_exact"] == "inf"
    assert d["lemmas"][0]["status"] == "holds"
    again = ClaimAudit.from_dict(d)
    assert again.verdict == "violated" and again.points[1].epsilon_exact == math.inf


def test_context_rng_is_reproducible_and_keyed():
    ctx = AuditContext(BUDGETS["quick"], seed=3)
    a = ctx.rng("claim", 1).random(3)
    assert (a == AuditContext(BUDGETS["quick"], seed=3).rng("claim", 1).random(3)).all()
    assert not (a == ctx.rng("claim", 2).random(3)).any()
    with pytest.raises(ValueError, match="seed"):
        AuditContext(BUDGETS["quick"], seed=-1)
    with pytest.raises(ValueError, match="alpha"):
        AuditContext(BUDGETS["quick"], alpha=1.5)


def test_worst_point_among_refutations_ignores_the_accountant():
    # A refuting point with a modest bound must beat a non-refuting point whose accountant is huge,
    # and among refuting points the strongest refutation (not the largest upper bound) is reported.
    refuted_weak = GridPoint({"T": 64}, 1.0, 0.0, epsilon_accountant=9.0, epsilon_lower_bound=1.01)
    refuted_strong = GridPoint({"T": 9}, 1.0, 0.0, epsilon_accountant=1.7, epsilon_lower_bound=1.19)
    unrefuted = GridPoint({"T": 2}, 1.0, 0.0, epsilon_accountant=50.0, epsilon_lower_bound=0.5)
    audit = ClaimAudit(CLAIM, [refuted_weak, refuted_strong, unrefuted])
    assert audit.worst_point() is refuted_strong
    assert ClaimAudit(CLAIM, [unrefuted, point(epsilon_accountant=0.5)]).worst_point() is unrefuted


def test_verdict_sentence_names_the_strongest_refutation():
    weak = GridPoint({"T": 9}, 1.0, 0.0, epsilon_exact=1.14, epsilon_accountant=1.6)
    strong = GridPoint({"T": 33}, 1.0, 0.0, epsilon_exact=1.357, epsilon_accountant=1.7)
    audit = ClaimAudit(CLAIM, [weak, strong])
    verdict, why = audit.verdict_and_reason
    assert verdict == "violated" and "strongest at T=33:" in why and audit.worst_point() is strong
