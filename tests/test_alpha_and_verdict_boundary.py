"""What the engine actually receives, and where the verdict rule's boundary is.

* The Bonferroni split is tested on the ``alpha`` argument the black-box engine receives (the
  engine's ``audit`` is wrapped and every call recorded), not on the driver's bookkeeping
  (``evidence["empirical"]["bonferroni"]``), which is computed separately: a driver that passes
  ``ctx.alpha`` to every test while writing ``alpha / tests`` in the record must fail here.
* The verdict rule (AUDIT-METHOD section 2) is pinned at its boundary: an empirical lower bound
  above the claim by any margin refutes it; an exact epsilon refutes it beyond a relative 1e-6
  (floating-point tolerance) and not below; an accountant above the claim by 1e-4 relative is not
  "at or below the claim". A tolerance of 1e-3 anywhere in the rule fails one of these.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import dpaudit.blackbox.empirical_audit as engine
from dpaudit.claims.context import BUDGETS, AuditContext
from dpaudit.claims.declaration import Declaration
from dpaudit.claims.driver import run_claim
from dpaudit.claims.evidence import GridPoint, LemmaCheck
from dpaudit.claims.registry import get
from dpaudit.claims.verdict import decide_verdict
from test_claim_driver import TINY, ToyDeclaration


def _recording(monkeypatch: pytest.MonkeyPatch, cheap: bool) -> list[float]:
    """Wrap the engine's ``audit`` (the driver imports it at call time); with ``cheap`` the
    mechanism is replaced by a 1000-run Laplace toy so that a bundled claim's tests cost nothing:
    only the ``alpha`` received matters here."""
    real, seen = engine.audit, []

    def wrapped(mechanism: Any, *args: Any, alpha: float, **kwargs: Any) -> Any:
        seen.append(alpha)
        if not cheap:
            return real(mechanism, *args, alpha=alpha, **kwargs)
        return real(lambda d, n, rng: d + rng.laplace(0.0, 1.0, size=n), 0.0, 1.0,
                    epsilon=kwargs["epsilon"], delta=kwargs["delta"], samples=1000, alpha=alpha,
                    seed=0, statistic=lambda y: np.asarray(y))

    monkeypatch.setattr(engine, "audit", wrapped)
    return seen


def test_engine_receives_alpha_split_over_every_test(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = _recording(monkeypatch, cheap=False)
    audit = run_claim(ToyDeclaration(), AuditContext(TINY, seed=1, alpha=0.06))
    assert seen == pytest.approx([0.02, 0.02, 0.02])
    # the record says what the engine did
    assert [p.evidence["empirical"]["alpha"] if "alpha" in p.evidence["empirical"]
            else p.evidence["empirical"]["bonferroni"]["per_test_alpha"]
            for p in audit.points] == pytest.approx(seen)


def test_engine_alpha_with_top_k_and_followups(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = _recording(monkeypatch, cheap=False)
    run_claim(ToyDeclaration(k=2, followup=True), AuditContext(TINY, seed=1, alpha=0.06))
    # two top-ranked points and the follow-up of the first: three tests share alpha
    assert seen == pytest.approx([0.02, 0.02, 0.02])


@pytest.mark.parametrize("claim_id", ["st13/tree-aggregation", "pfcoco/standard-tree"])
def test_bundled_claim_engine_alphas_sum_to_the_family_alpha(
        monkeypatch: pytest.MonkeyPatch, claim_id: str) -> None:
    """A bundled declaration at the quick budget: every engine call gets alpha / (number of
    calls), so the lower bounds hold jointly with probability >= 1 - alpha."""
    seen = _recording(monkeypatch, cheap=True)
    decl = get(claim_id).audit.declaration
    run_claim(_NoLemmas(decl), AuditContext(BUDGETS["quick"], seed=0, alpha=0.05))
    assert len(seen) >= 2, seen
    assert seen == pytest.approx([0.05 / len(seen)] * len(seen))
    assert sum(seen) == pytest.approx(0.05)


class _NoLemmas(Declaration):
    """A bundled declaration without its lemma checks (they do not touch alpha and cost time)."""

    def __init__(self, decl: Declaration) -> None:
        self._decl = decl
        self.claim = decl.claim

    def grid(self, ctx: AuditContext) -> Any:
        return self._decl.grid(ctx)

    def plan(self, params: Any, ctx: AuditContext) -> Any:
        return self._decl.plan(params, ctx)

    def tested_points(self, budget: Any) -> int | None:
        return self._decl.tested_points(budget)

    def more_points(self, plans: Any, ctx: AuditContext) -> Any:
        return self._decl.more_points(plans, ctx)

    def findings(self, run: Any) -> list[str]:
        return self._decl.findings(run)


# -- the verdict rule at its boundary -------------------------------------------------------------

def _verdict(**kw: Any) -> str:
    base = dict(parameters={"epsilon": 1.0}, claimed_epsilon=1.0, claimed_delta=0.0)
    return decide_verdict([GridPoint(**{**base, **kw})], [LemmaCheck("l", "holds", 1.0, 1)])[0]


def test_empirical_lower_bound_refutes_above_the_claim_by_any_margin() -> None:
    assert _verdict(epsilon_accountant=2.0, epsilon_lower_bound=1.0005) == "violated"
    assert _verdict(epsilon_accountant=2.0, epsilon_lower_bound=1.0 + 1e-9) == "violated"
    assert _verdict(epsilon_accountant=2.0, epsilon_lower_bound=1.0) == "inconclusive"


def test_exact_epsilon_refutes_beyond_floating_point_tolerance_only() -> None:
    assert _verdict(epsilon_exact=1.0005, epsilon_accountant=2.0) == "violated"
    assert _verdict(epsilon_exact=1.0 + 1e-5, epsilon_accountant=2.0) == "violated"
    assert _verdict(epsilon_exact=1.0 + 1e-7, epsilon_accountant=1.0 + 1e-7) == "holds"


def test_accountant_above_the_claim_by_a_hair_is_not_holds() -> None:
    assert _verdict(epsilon_exact=0.5, epsilon_accountant=1.0001) == "inconclusive"
    assert _verdict(epsilon_exact=0.5, epsilon_accountant=1.0 + 1e-5) == "inconclusive"
    assert _verdict(epsilon_exact=0.5, epsilon_accountant=1.0) == "holds"


def test_exact_above_accountant_by_a_hair_certifies_nothing() -> None:
    assert _verdict(epsilon_exact=0.9001, epsilon_accountant=0.9) == "inconclusive"
