"""The SMT engine (dpaudit.formal.smt): proofs, replayed refutations, unknown never passes,
and the lemma ``method`` field with the verdict rules (SMT-proved, SMT-refuted, unknown, sampled)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
import z3

from dpaudit.claims.evidence import GridPoint, LemmaCheck
from dpaudit.claims.verdict import decide_verdict
from dpaudit.formal.smt import (Obligation, Replay, SmtLemma, absolute, check_lemma, clip,
                                     evaluate, quadratic_loss_1d, real, to_float)
from dpaudit.learners.domains import Box
from dpaudit.learners.igd import IGD
from dpaudit.learners.losses import LossClass, SquaredLoss
from dpaudit.papers.jkt12.smt_lemmas import igd_step

L, ALPHA, D = 2.0, 0.05, 1.0  # the audit's IGD class (squared + ridge on [-1, 1])


def _igd_lemma(factor: Fraction) -> SmtLemma:
    """'A replaced loss at round t moves x_{t+1} by at most factor * 2L/(alpha (t+1))', x_t = 0.

    factor = 1 is the tight bound the PIGD accountant uses (true); factor = 1/2 is the planted
    wrong lemma (bound halved)."""
    Lz, az, Dz = (z3.RealVal(Fraction(v)) for v in (L, ALPHA, D))
    t = real("t")
    f0 = quadratic_loss_1d("f", lipschitz=Lz, strong_convexity=az, radius=Dz)
    f1 = quadratic_loss_1d("f'", lipschitz=Lz, strong_convexity=az, radius=Dz)
    bound = z3.RealVal(factor) * 2 * Lz / (az * (t + 1))
    zero = z3.RealVal(0)
    # Rounds 1..8 and 2^k: the clip to [-D, D] hides the halved bound until t ~ 40.
    rounds = list(range(1, 9)) + [2 ** k for k in range(4, 11)]
    ob = Obligation("x_t = 0, t in 1..8 or 2^k", f0.constraints + f1.constraints
                    + (z3.Or(*[t == k for k in rounds]),),
                    absolute(igd_step(zero, f0, 1 / (az * t), Dz)
                             - igd_step(zero, f1, 1 / (az * t), Dz))
                    > bound, {"t": t, **f0.variables(), **f1.variables()})

    def replay(m: dict[str, float]) -> Replay:
        tt = int(round(m["t"]))
        dom = Box(1, -D, D)
        filler = SquaredLoss(np.zeros(1), 0.0, ALPHA)
        ends = []
        losses = []
        for f in (f0, f1):
            r = f.realise(m)
            loss = SquaredLoss(np.array([r["v"]]), r["y"], r["ridge"])
            losses.append(loss)
            traj = IGD(dom, ALPHA, np.zeros(1)).run([filler] * (tt - 1) + [loss, filler], 1,
                                                    np.random.default_rng(0))[0]
            ends.append(traj[tt, 0])
        cls = LossClass("squared", dom, L, ALPHA)
        return Replay(abs(ends[0] - ends[1]), float(factor) * 2 * L / (ALPHA * (tt + 1)),
                      {"t": tt, "violations": [cls.violations(f) for f in losses]})

    return SmtLemma(f"IGD step <= {factor} * 2L/(alpha (t+1))", "test encoding", (ob,), ob, replay)


def test_planted_wrong_lemma_is_refuted_with_a_replayable_counterexample() -> None:
    res = check_lemma(_igd_lemma(Fraction(1, 2)), timeout_s=30)
    assert res.status == "smt-refuted"
    assert res.replay is not None and res.replay.ratio > 1.0
    # The replay ran the real IGD on losses of the declared class.
    assert res.replay.details["violations"] == [[], []]
    # Replaying the reported counterexample again gives the same numbers (it is deterministic).
    again = _igd_lemma(Fraction(1, 2)).replay(res.counterexample)  # type: ignore[misc]
    assert again.observed == res.replay.observed
    check = res.to_lemma_check()
    assert (check.status, check.method) == ("violated", "smt-refuted")
    assert check.counterexample["replayed"] is True and check.worst_ratio > 1.0


def test_true_lemma_is_proved() -> None:
    res = check_lemma(_igd_lemma(Fraction(1)), timeout_s=30)
    assert res.status == "smt-proved", res.reason
    assert res.solver.startswith("z3 ") and res.encoding == "test encoding"
    check = res.to_lemma_check()
    assert (check.status, check.method) == ("holds", "smt-proved")
    assert check.details["queries"][0]["answer"] == "unsat"


def test_timeout_is_unknown_never_a_pass() -> None:
    # A hard degree-4 problem (QFTL over aggregates) with a 10 ms budget cannot be decided.
    from dpaudit.papers.jkt12.smt_lemmas import qftl_assumption_lemma
    res = check_lemma(qftl_assumption_lemma(), timeout_s=0.01)
    assert res.status == "unknown"
    check = res.to_lemma_check()
    assert (check.status, check.method) == ("inconclusive", "smt-unknown")


def test_a_counterexample_that_does_not_replay_is_not_a_refutation() -> None:
    x = real("x")
    ob = Obligation("x > 1", (x <= 2,), x > 1, {"x": x})
    # The "implementation" disagrees with the encoding (it never exceeds the claim).
    lemma = SmtLemma("drifted", "x in (1, 2]", (), ob, lambda m: Replay(0.5, 1.0))
    res = check_lemma(lemma, timeout_s=5)
    assert res.status == "unknown" and "did not reproduce" in res.reason
    lemma2 = SmtLemma("drifted", "x in (1, 2]", (Obligation("x > 3", (x <= 2,), x > 3),), ob,
                      lambda m: Replay(0.5, 1.0))
    assert check_lemma(lemma2, timeout_s=5).status == "unknown"


def test_evaluate_is_exact_piecewise_arithmetic() -> None:
    a = real("a")
    assert evaluate(clip(a, -1, 1), {a: 3.5}) == 1.0
    assert evaluate(clip(a, -1, 1), {a: -0.25}) == -0.25
    assert evaluate(absolute(a) * 3, {a: -0.1}) == pytest.approx(0.3, rel=1e-15)
    assert to_float(z3.RealVal(Fraction(1, 3))) == 1 / 3
    with pytest.raises(ValueError, match="free variables"):
        evaluate(a + real("b"), {a: 1.0})


def test_invalid_inputs_are_rejected() -> None:
    with pytest.raises(ValueError, match="timeout_s"):
        check_lemma(_igd_lemma(Fraction(1)), timeout_s=0)
    with pytest.raises(ValueError, match="proof obligations or a refutation"):
        SmtLemma("s", "e")
    with pytest.raises(ValueError, match="replay"):
        SmtLemma("s", "e", (), Obligation("o", (), z3.BoolVal(True)))


# ---------------------------------------------------------------------------------------------
# The method field and the verdict rules
# ---------------------------------------------------------------------------------------------


def _point() -> GridPoint:
    return GridPoint({"T": 4}, 1.0, 0.0, 0.5, 0.9, 0.1)


def test_lemma_method_round_trips_and_is_validated() -> None:
    lem = LemmaCheck("s", "holds", None, 0, None, method="smt-proved",
                     details={"solver": "z3", "queries": [{"answer": "unsat"}]})
    d = lem.to_dict()
    assert d["method"] == "smt-proved" and d["details"]["solver"] == "z3"
    assert LemmaCheck.from_dict(d) == lem
    old = {"statement": "s", "status": "holds", "worst_ratio": 1.0, "examples": 3,
           "counterexample": None}
    assert LemmaCheck.from_dict(old).method == "sampled"  # records saved before the field
    assert "details" not in LemmaCheck("s", "holds").to_dict()
    with pytest.raises(ValueError, match="method"):
        LemmaCheck("s", "holds", method="proved")


def test_verdict_rules_for_smt_lemmas() -> None:
    proved = LemmaCheck("a", "holds", method="smt-proved")
    sampled = LemmaCheck("b", "holds", 0.9, 100)
    verdict, reason = decide_verdict([_point()], [proved, sampled])
    assert verdict == "holds" and "1 proved by SMT" in reason
    # An SMT counterexample counts like a shrunk one: the lemma fails.
    refuted = LemmaCheck("c", "violated", 1.5, 0, {"replayed": True}, method="smt-refuted")
    verdict, reason = decide_verdict([_point()], [sampled, refuted])
    assert verdict == "inconclusive" and "'c' is violated" in reason
    # A timeout is absent evidence: it neither passes nor fails the lemma.
    unknown = LemmaCheck("d", "inconclusive", method="smt-unknown")
    assert decide_verdict([_point()], [sampled, unknown])[0] == "holds"
    assert "proved" not in decide_verdict([_point()], [sampled, unknown])[1]


def test_reports_show_the_method_the_solver_and_the_replay() -> None:
    from dpaudit.claims.record import ClaimAudit
    from dpaudit.claims import PrivacyClaim, Provenance, SensitivityLemma
    from dpaudit.reporting.html import render_claim_html
    from dpaudit.reporting.markdown import render_claim_markdown

    refuted = check_lemma(_igd_lemma(Fraction(1, 2)), timeout_s=30).to_lemma_check()
    proved = check_lemma(_igd_lemma(Fraction(1)), timeout_s=30).to_lemma_check()
    claim = PrivacyClaim("demo/igd", 1.0, 1e-5, Provenance("demo.txt", "v1", "Theorem 1"),
                         lemmas=(SensitivityLemma(refuted.statement,
                                                  Provenance("demo.txt", "v1", "Lemma 4")),))
    audit = ClaimAudit(claim, [_point()], lemmas=[refuted, proved], budget="quick")
    record = ClaimAudit.from_dict(audit.to_dict()).to_dict()  # through JSON, as the CLI does
    md = render_claim_markdown(record)
    assert "| **violated** | smt-refuted |" in md and "| **holds** | smt-proved |" in md
    assert "found by the SMT solver, replayed through the implementation" in md
    assert "z3 " in md and "test encoding" in md
    html = render_claim_html(record)
    assert "smt-refuted" in html and "SMT counterexample, replayed through the implementation" \
        in html


# ---------------------------------------------------------------------------------------------
# The JSON schemas and the SMT evidence in claim audits
# ---------------------------------------------------------------------------------------------


def test_published_schemas_list_exactly_the_lemma_methods() -> None:
    from dpaudit.claims.evidence import LEMMA_METHODS
    from dpaudit.reporting.schema import load_schema, schema_errors

    claim = load_schema("dpaudit.claim/1")
    assert tuple(claim["properties"]["lemmas"]["items"]["properties"]["method"]["enum"]) \
        == LEMMA_METHODS
    index = load_schema("dpaudit.report/1")
    entry = index["properties"]["claims"]["items"]["properties"]["lemmas"]["items"]
    assert tuple(entry["properties"]["method"]["enum"]) == LEMMA_METHODS
    # A record with an SMT lemma validates; an unknown method does not.
    from dpaudit.claims.record import ClaimAudit
    from dpaudit.claims import PrivacyClaim, Provenance

    claim_obj = PrivacyClaim("demo/igd", 1.0, 1e-5, Provenance("demo.txt", "v1", "Theorem 1"))
    proved = check_lemma(_igd_lemma(Fraction(1)), timeout_s=30).to_lemma_check()
    from dpaudit.reporting.writer import claim_record

    record = claim_record(ClaimAudit(claim_obj, [_point()], lemmas=[proved], budget="quick"))
    assert schema_errors(record, "dpaudit.claim/1") == []
    record["lemmas"][0]["method"] = "proved"
    assert schema_errors(record, "dpaudit.claim/1")


def _lem(statement: str, status: str, method: str = "sampled", ratio: float | None = None
         ) -> LemmaCheck:
    return LemmaCheck(statement, status, ratio, 50 if method == "sampled" else 0, None,
                      method=method)


def test_agreement_findings_pair_smt_with_sampled_checks_of_the_same_statement() -> None:
    from dpaudit.formal.smt import agreement_findings, statement_base

    assert statement_base("Lemma 6: B <= R [d = 2, R = 1]") == "Lemma 6: B <= R"
    sampled = [_lem("A", "violated", ratio=2.0), _lem("B", "holds"),
               _lem("C", "violated", ratio=1.4), _lem("E", "holds")]
    smt = [_lem("A [d = 1]", "violated", "smt-refuted", 2.0),
           _lem("B [d = 1]", "holds", "smt-proved"),
           _lem("C [d = 1]", "holds", "smt-proved"),
           _lem("C [d = 2]", "violated", "smt-refuted", 1.4),
           _lem("E [d = 1]", "violated", "smt-refuted", 1.5),
           _lem("F, needed bound [d = 1]", "holds", "smt-proved"),
           _lem("G [d = 1]", "inconclusive", "smt-unknown")]
    out = agreement_findings(sampled, smt)
    assert "3 proved over the encoded class, 3 refuted" in out[0] and "1 undecided" in out[0]
    # A, B, C agree in kind (C: proved in d = 1 only, refuted in d = 2 like the sampled check);
    # E is refuted where sampling found nothing: explained, not counted as agreement.
    assert "3 of the 4 statements checked both ways agree" in out[0]
    assert any(s.startswith("'C': SMT proves it for [d = 1] and refutes it for [d = 2]")
               for s in out)
    assert any(s.startswith("'E': SMT refutes it ([d = 1], replayed ratio 1.5) where the sampled "
                            "search found nothing in 50 examples") for s in out)
    # A proof where sampling found a counterexample is flagged as a disagreement.
    out2 = agreement_findings([_lem("B", "violated", ratio=1.2)], [smt[1]])
    assert any(s.startswith("DISAGREEMENT on 'B'") and "1.2" in s for s in out2)
    assert agreement_findings(sampled, []) == []


def test_claim_audits_carry_smt_evidence_after_the_sampled_checks() -> None:
    from dpaudit.claims.evidence import LemmaOutcome
    from dpaudit.claims.context import BUDGETS, AuditContext
    from dpaudit.papers.st13.smt_lemmas import smt_evidence

    sampled = LemmaOutcome((_lem("x", "holds"),), None, ("a finding",))
    out = smt_evidence("st13/tree-aggregation", AuditContext(BUDGETS["quick"], 0, 0.05), sampled)
    assert out.checks[0] == sampled.checks[0] and out.findings[0] == "a finding"
    smt = out.checks[1:]
    assert smt and all(c.method == "smt-proved" and c.status == "holds" for c in smt)
    assert all(c.details["solver"].startswith("z3 ") and c.details["encoding"] for c in smt)
    assert out.findings[1].startswith("SMT tier (z3")


def test_answers_and_counterexamples_do_not_depend_on_earlier_solver_calls() -> None:
    # Golden records are made in one process and re-checked in fresh ones: each solver call runs
    # in its own z3 context, so what the process asked z3 before cannot change the model.
    from dpaudit.papers.jkt12.smt_lemmas import node_count_lemmas, private_sum_node_lemmas

    lemma = node_count_lemmas()[0]
    first = check_lemma(lemma, timeout_s=30)
    for other in private_sum_node_lemmas(2) + [_igd_lemma(Fraction(1, 2))]:
        check_lemma(other, timeout_s=30)
    z3.simplify(z3.BitVec("noise", 32) * 3 + z3.BitVec("tau", 32))  # new terms in the context
    again = check_lemma(node_count_lemmas()[0], timeout_s=30)
    assert first.status == again.status == "smt-refuted"
    assert first.counterexample == again.counterexample
