"""AFKT23 claim audits can fail: planted bugs run through the claim driver.

Each test takes a registered AFKT23 declaration unchanged (grid point, neighbouring pair, statistic,
exact value, accountant) and swaps only the released mechanism for a buggy one, as a developer's
broken implementation would be audited. The driver must then say so: a ``violated`` verdict (an
empirical lower bound above the claim) and/or an INCONSISTENCY finding (a lower bound above the
exact epsilon of the printed mechanism). The same restricted grid with the correct mechanism is the
control and must do neither.

Margins: every bug is sized so that its true epsilon on the declared pair is at least ~5 times the
claim (stated at each test), so the engine's one-sided 95% Clopper-Pearson bound at the quick
budget's 20,000 samples per input clears the claim by a wide margin; the controls' exact epsilon is
at most the claim, so a control fails only with probability <= alpha = 0.05 per test (fixed seed 0).
Lemma checks are not re-run here (they have their own tests in ``test_afkt23_audits.py``).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Mapping

import pytest

from dpaudit.claims.evidence import LemmaOutcome
from dpaudit.claims.declaration import Declaration
from dpaudit.claims.driver import PointPlan, run_claim
from dpaudit.claims.context import BUDGETS, AuditContext
from dpaudit.learners.dp_ftrl import DpFtrl
from dpaudit.learners.potential_experts import PotentialExperts
from dpaudit.mechanisms.sparse_vector import SparseVectorMechanism
from dpaudit.mechanisms.tree_aggregation import NodeNoise, TreeAggregationMechanism
from dpaudit.papers.afkt23.audit import DECLARATIONS


@dataclasses.dataclass(frozen=True)
class _Planted(Declaration):
    """A registered declaration restricted to the points ``keep`` accepts, whose empirical
    mechanism is replaced by ``bug(mechanism)`` (``None``: the control, mechanism unchanged)."""

    base: Any
    keep: Callable[[Mapping[str, Any]], bool]
    bug: Callable[[Any], Any] | None
    samples: int | None = None

    @property
    def claim(self) -> Any:
        return self.base.claim

    def grid(self, ctx: AuditContext) -> list[dict[str, Any]]:
        pts = [p for p in self.base.grid(ctx) if self.keep(p)]
        assert pts, "the planted-bug point is no longer on the declared grid"
        return pts

    def plan(self, params: Mapping[str, Any], ctx: AuditContext) -> PointPlan:
        pl = self.base.plan(params, ctx)
        emp = pl.empirical
        assert emp is not None
        if self.bug is not None:
            emp = dataclasses.replace(emp, mechanism=self.bug(emp.mechanism))
        if self.samples is not None:
            emp = dataclasses.replace(emp, samples=self.samples)
        return dataclasses.replace(pl, empirical=emp, followups=())

    def tested_points(self, budget: Any) -> int | None:
        return None

    def lemmas(self, ctx: AuditContext, parameters: Any) -> LemmaOutcome:
        return LemmaOutcome()


def _audit(claim_id: str, keep: Callable[[Mapping[str, Any]], bool], bug: Callable[[Any], Any] | None,
           samples: int | None = None) -> Any:
    ctx = AuditContext(seed=0, budget=BUDGETS["quick"])
    return run_claim(_Planted(DECLARATIONS[claim_id], keep, bug, samples), ctx)


def _inconsistent(audit: Any) -> bool:
    return any(f.startswith("INCONSISTENCY") for f in audit.findings)


def test_above_threshold_audit_catches_too_little_noise():
    # Bug: AboveThreshold calibrated at 10 eps (noise scales 2/(10 eps), 4/(10 eps)). On the
    # declared pair (base 4/eps, earlier queries -1, last +1) its exact epsilon is ~10x the printed
    # mechanism's 0.966 eps; at eps = 0.1 the bound must clear 0.1.
    keep = lambda p: p == {"epsilon": 0.1, "queries": 8}
    bad = _audit("afkt23/above-threshold", keep, lambda m: SparseVectorMechanism(10 * m.epsilon, 0.0))
    good = _audit("afkt23/above-threshold", keep, None)
    assert bad.verdict == "violated" and bad.points[0].epsilon_lower_bound > 0.1
    assert good.verdict == "holds" and good.points[0].epsilon_lower_bound <= 0.1


def test_binary_tree_audit_catches_node_noise_without_the_depth_factor():
    # Bug: node noise Lap(1/eps) instead of Lap(h/eps), h = 5 at T = 16: each of the 5 nodes that
    # contain leaf 1 moves by 1, true epsilon 5 eps = 0.5 against the claim 0.1.
    keep = lambda p: p == {"epsilon": 0.1, "T": 16}

    def bug(m: TreeAggregationMechanism) -> TreeAggregationMechanism:
        return TreeAggregationMechanism(16, 1, NodeNoise.laplace(1 / 0.1), 1.0)

    bad = _audit("afkt23/binary-tree", keep, bug)
    good = _audit("afkt23/binary-tree", keep, None)
    assert bad.verdict == "violated" and bad.points[0].epsilon_lower_bound > 0.1
    assert good.verdict == "holds"


def test_dp_ftrl_audit_catches_a_quarter_of_the_noise():
    # The Delta = 2L reading holds (accountant 0.82 eps); the bug keeps a quarter of its sigma, so
    # the Gaussian shift on the pair is 4x larger (true epsilon ~5 at claim 1).
    keep = lambda p: p["reading"] == "2L" and p["D"] == 1e4 and p["epsilon"] == 1.0
    bad = _audit("afkt23/dp-ftrl", keep,
                 lambda m: DpFtrl(dataclasses.replace(m.params, sigma=m.params.sigma / 4)))
    good = _audit("afkt23/dp-ftrl", keep, None)
    assert bad.verdict == "violated" and _inconsistent(bad)
    assert good.verdict == "holds" and not _inconsistent(good)


def test_alg5_audit_catches_a_sparse_vector_with_too_little_noise():
    # Bug: Algorithm 5's sparse vector run at 20 eps_0. On the exact-worst realisable pair at
    # (eps, d, T) = (1, 2, 6) the printed mechanism's exact epsilon is 0.08; the bug's lower bound
    # exceeds it (inversion: the code is not the mechanism analysed) and the claim 1.
    # (primary reading only: the 'hypothesis pairs' points are exact-only, no empirical test)
    keep = lambda p: (p["T"] == 6 and p["epsilon"] == 1.0 and p["gamma"] == 1 / p["d"]
                      and "scope" not in p)
    bad = _audit("afkt23/alg5", keep,
                 lambda m: PotentialExperts(dataclasses.replace(m.params, epsilon0=20 * m.params.epsilon0)))
    good = _audit("afkt23/alg5", keep, None)
    assert _inconsistent(bad) and bad.points[0].epsilon_lower_bound > 1.0
    assert not _inconsistent(good)
    # the control is still "inconclusive": Theorem 6's accountant is above the claim (see README)
    assert good.verdict == "inconclusive"
