"""The one claim driver: its rules, tested on a toy Laplace claim with known answers.

The toy claim: "adding Laplace(b) noise to a sum of values in [0, 1] is (1 / b)-DP". Its exact
epsilon on the pair (0, 1) is 1 / b; a declaration can lie about the scale (a planted bug) or about
the exact value (an inversion), which the driver must report.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np
import pytest

from dpaudit.claims.declaration import Declaration
from dpaudit.claims.evidence import LemmaCheck
from dpaudit.claims.driver import MIRONOV_CAVEAT, AddedPoints, ClaimRun, EmpiricalPlan, PointPlan, Skip, run_claim
from dpaudit.claims.evidence import LemmaOutcome
from dpaudit.claims.context import AuditContext, Budget
from dpaudit.claims import PrivacyClaim, Provenance, SensitivityLemma

TINY = Budget("tiny", samples=20_000, sensitivity_examples=10, grid="coarse", max_T=8)
CLAIM = PrivacyClaim("toy/laplace", 1.0, 0.0, Provenance("toy.txt", "v1", "Theorem 1"))


def laplace_sum(scale: float):
    def mechanism(data: Any, n: int, rng: np.random.Generator) -> np.ndarray:
        return float(np.sum(data)) + rng.laplace(0.0, scale, size=n)
    return mechanism


@dataclass(frozen=True)
class ToyDeclaration(Declaration):
    """Grid over the claimed epsilon; ``true_scale_factor`` < 1 plants a too-small noise."""

    epsilons: tuple[float, ...] = (0.5, 1.0, 2.0)
    true_scale_factor: float = 1.0
    exact_lie: float | None = None  # a declared exact value below the truth (inversion)
    k: int | None = None
    skip_eps: tuple[float, ...] = ()
    followup: bool = False
    lemma_status: str = "holds"
    seen: dict[str, Any] = field(default_factory=dict)
    claim: PrivacyClaim = CLAIM

    def grid(self, ctx: AuditContext) -> list[dict[str, Any]]:
        return [{"epsilon": e} for e in self.epsilons + self.skip_eps]

    def tested_points(self, budget: Budget) -> int | None:
        return self.k

    def plan(self, params: Mapping[str, Any], ctx: AuditContext) -> PointPlan | Skip:
        eps = params["epsilon"]
        if eps in self.skip_eps:
            return Skip(params, "toy skip")
        scale = 1.0 / eps * self.true_scale_factor
        exact = 1.0 / scale  # sensitivity 1 on the pair (0, 1)
        emp = EmpiricalPlan(mechanism=laplace_sum(scale), data0=[0.0], data1=[1.0],
                            statistic=lambda y: np.asarray(y), statistic_name="the released sum")
        follow = ()
        if self.followup:
            follow = (PointPlan(parameters={**params, "test": "again"}, claimed_epsilon=eps,
                                claimed_delta=0.0, accountant=exact,
                                empirical=EmpiricalPlan(mechanism=laplace_sum(scale),
                                                        data0=[0.0], data1=[1.0],
                                                        what="second look")),)
        return PointPlan(parameters=dict(params), claimed_epsilon=eps, claimed_delta=0.0,
                         exact=self.exact_lie if self.exact_lie is not None else exact,
                         accountant=exact, empirical=emp, followups=follow,
                         curve=lambda: {"deltas": [0.0], "epsilon_accountant": [exact]},
                         recommendation=lambda: f"use scale {1.0 / eps:g}")

    def lemmas(self, ctx: AuditContext, parameters: Sequence[Mapping[str, Any]]) -> LemmaOutcome:
        self.seen["lemma_parameters"] = [dict(p) for p in parameters]
        return LemmaOutcome((LemmaCheck("toy lemma", self.lemma_status, 1.0, 1),),
                            {"t": [1], "observed": [1.0], "claimed": [1.0], "statement": "toy"},
                            ("a lemma finding",))

    def findings(self, run: ClaimRun) -> list[str]:
        self.seen["tested"] = [(t.index, t.rank) for t in run.tested]
        return ["a paper finding"]


def _bonferroni(point) -> dict[str, Any]:
    return point.evidence["empirical"]["bonferroni"]


def test_correct_claim_holds_with_alpha_split_over_every_tested_point() -> None:
    decl = ToyDeclaration()
    audit = run_claim(decl, AuditContext(TINY, seed=1, alpha=0.06))
    assert audit.verdict == "holds"
    assert audit.recommended_calibration is None  # only where the claim fails
    for p in audit.points:
        b = _bonferroni(p)
        assert b["tests"] == 3 and b["per_test_alpha"] == pytest.approx(0.02)
        assert p.epsilon_lower_bound is not None and p.epsilon_lower_bound <= p.epsilon_exact
    assert sorted(b["test"] for b in map(_bonferroni, audit.points)) == [1, 2, 3]
    # One summary first, the paper's and the lemmas' prose, one caveat last.
    assert audit.findings[0].startswith("toy/laplace: 3 grid points, 0 with")
    assert audit.findings[-1] == MIRONOV_CAVEAT and audit.findings.count(MIRONOV_CAVEAT) == 1
    assert "a paper finding" in audit.findings and "a lemma finding" in audit.findings
    assert audit.reproduce.endswith("--seed 1 --alpha 0.06")


def test_planted_half_scale_is_violated_with_recommendation_and_worst_histogram() -> None:
    # Noise at half the declared scale: exact epsilon 2 eps; the declared exact says so too.
    decl = ToyDeclaration(true_scale_factor=0.5)
    audit = run_claim(decl, AuditContext(TINY, seed=0))
    assert audit.verdict == "violated"
    w = audit.worst_point()
    assert w.epsilon_exact == pytest.approx(2 * w.claimed_epsilon)
    # 20,000 runs per input at alpha/3: the bound is far above the claim at every eps here
    # (Laplace eps = 1 at 10^6 runs reaches 0.99 of exact; at 2e4 runs a ratio of 2 is far off).
    assert w.epsilon_lower_bound > w.claimed_epsilon
    assert audit.recommended_calibration == f"use scale {1.0 / w.claimed_epsilon:g}"
    hist = audit.figures["histogram"]
    assert hist["worst_point"] is True and hist["parameters"] == dict(w.parameters)
    assert hist["statistic"] == "the released sum"
    curve = audit.figures["privacy_curve"]
    assert curve["claimed"] == [w.claimed_epsilon, 0.0]
    assert curve["lower_bound"] == [w.epsilon_lower_bound, 0.0]


def test_inversion_is_a_finding_for_every_paper() -> None:
    # A declared exact value far below the truth (2 at eps = 2): the lower bound exceeds it.
    decl = ToyDeclaration(epsilons=(2.0,), exact_lie=0.5)
    audit = run_claim(decl, AuditContext(TINY, seed=0))
    assert any(f.startswith("INCONSISTENCY at (epsilon=2)") for f in audit.findings)
    honest = run_claim(ToyDeclaration(epsilons=(2.0,)), AuditContext(TINY, seed=0))
    assert not any("INCONSISTENCY" in f for f in honest.findings)


def test_top_k_selection_skip_and_followups_share_alpha() -> None:
    decl = ToyDeclaration(epsilons=(0.5, 1.0, 2.0), true_scale_factor=0.5, k=1,
                          skip_eps=(9.0,), followup=True)
    audit = run_claim(decl, AuditContext(TINY, seed=0, alpha=0.05))
    tested = [p for p in audit.points if "empirical" in p.evidence]
    # One grid point (all ratios equal: the first of the largest) and its follow-up: 2 tests.
    assert len(tested) == 2
    assert {_bonferroni(p)["tests"] for p in tested} == {2}
    assert [p.parameters.get("test") for p in tested] == [None, "again"]
    assert decl.seen["tested"] == [(0, 0), (3, 1)]
    # Skipped points get no alpha and are named; lemma checks see grid and skipped points, not
    # the follow-up test.
    assert any(f.startswith("Skipped grid point (epsilon=9)") for f in audit.findings)
    assert decl.seen["lemma_parameters"] == [{"epsilon": e} for e in (0.5, 1.0, 2.0, 9.0)]


def test_same_seed_same_record_and_points_seeded_by_claim_and_point() -> None:
    def record(seed: int) -> str:
        d = run_claim(ToyDeclaration(), AuditContext(TINY, seed=seed)).to_dict()
        d.pop("seconds")
        for p in d["points"]:
            p["evidence"]["empirical"].pop("timing", None)
        return json.dumps(d, sort_keys=True)

    assert record(5) == record(5)
    assert record(5) != record(6)
    ctx = AuditContext(TINY, seed=5)
    assert ctx.seed_for("toy/laplace", "empirical", 0) != ctx.seed_for("toy/laplace", "empirical", 1)
    assert 0 <= ctx.seed_for("x") < 2 ** 62


def test_a_failed_lemma_without_counterexample_is_inconclusive() -> None:
    audit = run_claim(ToyDeclaration(lemma_status="violated"), AuditContext(TINY, seed=0))
    assert audit.verdict == "inconclusive"
    assert audit.figures["sensitivity"]["statement"] == "toy"


def test_more_points_are_audited_and_their_notes_reach_findings() -> None:
    @dataclass(frozen=True)
    class WithMore(ToyDeclaration):
        def more_points(self, plans: Sequence[PointPlan], ctx: AuditContext) -> AddedPoints:
            extra = self.plan({"epsilon": 4.0}, ctx)
            return AddedPoints((extra,), {"why": "boundary"})

        def findings(self, run: ClaimRun) -> list[str]:
            return [f"notes: {run.notes['why']}"]

    audit = run_claim(WithMore(epsilons=(1.0,)), AuditContext(TINY, seed=0))
    assert [p.parameters["epsilon"] for p in audit.points] == [1.0, 4.0]
    assert "notes: boundary" in audit.findings
    assert all(math.isfinite(p.epsilon_lower_bound) for p in audit.points)


@dataclass(frozen=True)
class LemmaToy(ToyDeclaration):
    """The toy claim relying on four lemmas, of which the declaration checks some."""

    claim: PrivacyClaim = PrivacyClaim(
        "toy/lemmas", 1.0, 0.0, Provenance("toy.txt", "v1", "Theorem 1"),
        lemmas=tuple(SensitivityLemma(s, Provenance("toy.txt", "v1", "Lemma"))
                     for s in ("toy lemma", "bound b", "Lemma 2: as printed", "nobody looked")))

    def lemmas(self, ctx: AuditContext, parameters: Sequence[Mapping[str, Any]]) -> LemmaOutcome:
        return LemmaOutcome((LemmaCheck("toy lemma", "holds", 1.0, 1),
                             LemmaCheck("bound b [read as b = 1]", "holds", 0.5, 1),
                             LemmaCheck("Lemma 2: restated", "holds", 0.9, 1)),
                            not_checked={"nobody looked": "needs a proof assistant"})


def test_lemmas_nobody_checked_are_recorded_with_why_and_never_said_to_hold() -> None:
    audit = run_claim(LemmaToy(), AuditContext(TINY, seed=0))
    status = {lem.statement: (lem.status, lem.note) for lem in audit.lemmas}
    # Checked as printed, or under a stated reading ("statement [reading]"): no extra row.
    assert "toy lemma" in status and "bound b" not in status
    assert status["nobody looked"] == ("not checked", "needs a proof assistant")
    st, note = status["Lemma 2: as printed"]
    assert st == "not checked" and "a restated form ran: 'Lemma 2: restated' (holds)" in note
    verdict, reason = audit.verdict, audit.to_dict()["reason"]
    assert verdict == "holds" and "every lemma held" not in reason
    assert "each of the 3 checked lemmas held (2 of the claim's lemmas not checked" in reason


def test_declaration_protocol_defaults_and_duck_typed_objects_are_refused() -> None:
    # Only the essentials are abstract: a declaration with grid and plan runs on the defaults
    # (every planned point tested, no derived points, no lemma checks, no paper findings).
    @dataclass(frozen=True)
    class Minimal(Declaration):
        claim: PrivacyClaim = CLAIM

        def grid(self, ctx: AuditContext) -> list[dict[str, Any]]:
            return [{"epsilon": 1.0}]

        def plan(self, params: Mapping[str, Any], ctx: AuditContext) -> PointPlan:
            return ToyDeclaration().plan(params, ctx)

    audit = run_claim(Minimal(), AuditContext(TINY, seed=0))
    assert len(audit.points) == 1 and audit.points[0].epsilon_lower_bound is not None
    assert Minimal().tested_points(TINY) is None and Minimal().findings(None) == []  # type: ignore[arg-type]

    class NoPlan(Declaration):
        claim = CLAIM

        def grid(self, ctx: AuditContext) -> list[dict[str, Any]]:
            return []

    with pytest.raises(TypeError):
        NoPlan()  # type: ignore[abstract]

    class DuckTyped:  # the old protocol: probed by getattr, now refused by name
        claim = CLAIM
        grid = Minimal.grid
        plan = Minimal.plan

    with pytest.raises(TypeError, match="decl must be a dpaudit.claims.declaration.Declaration"):
        run_claim(DuckTyped(), AuditContext(TINY, seed=0))  # type: ignore[arg-type]
    from dpaudit.claims import registry
    with pytest.raises(TypeError, match="must subclass dpaudit.claims.declaration.Declaration"):
        registry.register(PrivacyClaim("toy/duck", 1.0, 0.0, Provenance("toy.txt", "v1", "T1")),
                          DuckTyped())
