"""The sequential CI gate on a claim's black-box pairs (what ``dpaudit gate`` runs).

:func:`gate_claim` plans a declared claim exactly as the claim driver does
(:mod:`dpaudit.claims.driver`; the tested points and their follow-ups chosen from the plans only)
and runs the anytime-valid :func:`dpaudit.blackbox.sequential_gate.sequential_gate` on every
neighbouring pair the driver's black-box step would test, instead of the fixed-budget audit. The
gates share ``ctx.alpha`` equally (Bonferroni, fixed before sampling), so a false alarm on a claim
that holds has probability at most ``alpha``; each may stop at its first conclusive evidence
(Ville's inequality). A gate that stops says the claim fails at that point; one that does not is
not evidence that it holds, and the gate gives no lower bound and no verdict (``dpaudit audit``
does).

Which pairs are gated, and what a gate is not: docs/blackbox-notes.md#claim-gate
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from dpaudit._validation import check_int
from dpaudit.claims.context import AuditContext
from dpaudit.claims.declaration import Declaration, PointPlan, Skip
from dpaudit.claims.verdict import format_parameters
from dpaudit.hypothesis_seeding import independent_of_loaded_modules

__all__ = ["GatedPair", "NotGated", "ClaimGate", "gate_claim", "claim_declaration"]


@dataclass(frozen=True)
class GatedPair:
    """One gate run: the grid point, which pair, the alpha it got and the gate's result."""

    parameters: Mapping[str, Any]
    what: str
    pair: str
    alpha: float
    result: Any  # dpaudit.blackbox.sequential.SequentialResult

    @property
    def violated(self) -> bool:
        return self.result.verdict == "violated"

    def to_dict(self) -> dict[str, Any]:
        return {"parameters": dict(self.parameters), "what": self.what, "pair": self.pair,
                "alpha": self.alpha, "evidence": "sequential gate (anytime-valid)",
                "gate": self.result.to_dict()}


@dataclass(frozen=True)
class NotGated:
    """A black-box test the gate could not run, and why."""

    parameters: Mapping[str, Any]
    what: str
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"parameters": dict(self.parameters), "what": self.what, "reason": self.reason}


@dataclass(frozen=True)
class ClaimGate:
    """The gates of one claim: ``violated`` iff any gate stopped (family level ``alpha``)."""

    claim_id: str
    alpha: float
    gated: tuple[GatedPair, ...]
    not_gated: tuple[NotGated, ...]

    @property
    def violated(self) -> bool:
        return any(g.violated for g in self.gated)

    def to_dict(self) -> dict[str, Any]:
        return {"claim": self.claim_id, "alpha": self.alpha,
                "outcome": "violated" if self.violated else "not violated",
                "note": ("violated: a gate's wealth reached 1/(its alpha), so the claim fails at "
                         "that point (family level alpha, Bonferroni over the gated pairs); not "
                         "violated is not evidence that the claim holds"),
                "gated": [g.to_dict() for g in self.gated],
                "not_gated": [n.to_dict() for n in self.not_gated]}


def _selected(decl: Declaration, ctx: AuditContext) -> list[PointPlan]:
    """The plans whose black-box test the driver would run, in its order (its step 3)."""
    plans: list[PointPlan] = []
    for params in list(decl.grid(ctx)):
        planned = decl.plan(params, ctx)
        if not isinstance(planned, Skip):
            plans.append(planned)
    added = decl.more_points(list(plans), ctx)
    plans.extend(added.plans)
    candidates = [i for i, p in enumerate(plans) if p.empirical is not None]
    k = decl.tested_points(ctx.budget)
    if k is not None:
        candidates = sorted(candidates, key=lambda i: -plans[i].ratio())[:k]
    followups = list(plans[candidates[0]].followups) if candidates else []
    return [plans[i] for i in candidates] + [f for f in followups if f.empirical is not None]


def _pairs(plan: PointPlan) -> tuple[list[tuple[Any, Any]], str | None]:
    """The fixed pairs to gate for ``plan``, or a reason why there is none."""
    from dpaudit.blackbox.sampling import is_strategy

    emp = plan.empirical
    assert emp is not None
    if emp.pairs is None:
        return [(emp.data0, emp.data1)], None
    if is_strategy(emp.pairs):
        seeds = list(emp.pair_seeds or [])
        if not seeds:
            return [], ("a pair search over a Hypothesis strategy: the gate bets on fixed pairs "
                        "(`dpaudit audit` runs the search)")
        return seeds, None
    return list(emp.pairs), None


def gate_claim(declaration: Any, ctx: AuditContext, *, max_samples: int | None = None
               ) -> ClaimGate:
    """Run the sequential gate on every black-box pair of ``declaration`` (module docstring).

    Parameters
    ----------
    declaration
        A claim declaration (:class:`dpaudit.claims.declaration.Declaration`), as
        :func:`dpaudit.claims.driver.run_claim` takes.
    ctx : AuditContext
        Budget (the grid, and each gate's runs per input unless ``max_samples`` is given; a plan's
        own ``samples`` overrides the budget's as in the driver), seed and the family's alpha.
    max_samples : int >= 100, optional
        Largest number of runs per input of every gate.

    Returns
    -------
    ClaimGate
    """
    from dpaudit.blackbox.pair_search import describe_pair
    from dpaudit.blackbox.sequential_gate import sequential_gate

    if max_samples is not None:
        max_samples = check_int(max_samples, "max_samples", minimum=100)
    claim_id = declaration.claim.id
    with independent_of_loaded_modules():
        plans = _selected(declaration, ctx)
    todo: list[tuple[PointPlan, int, tuple[Any, Any], int]] = []
    not_gated: list[NotGated] = []
    for rank, plan in enumerate(plans):
        pairs, reason = _pairs(plan)
        assert plan.empirical is not None
        if reason is not None:
            not_gated.append(NotGated(dict(plan.parameters), plan.empirical.what, reason))
        todo.extend((plan, rank, pair, j) for j, pair in enumerate(pairs))
    a_gate = ctx.alpha / len(todo) if todo else ctx.alpha
    gated: list[GatedPair] = []
    for n, (plan, rank, (d0, d1), j) in enumerate(todo):
        emp = plan.empirical
        assert emp is not None
        budget = (max_samples if max_samples is not None else
                  ctx.budget.samples if emp.samples is None else emp.samples)
        pair = describe_pair(d0, d1)
        ctx.progress(n, len(todo), f"gate {n + 1} of {len(todo)}: "
                                   f"({format_parameters(plan.parameters)}), {pair}")
        result = sequential_gate(emp.mechanism, d0, d1, epsilon=plan.claimed_epsilon,
                                 delta=plan.claimed_delta, alpha=a_gate,
                                 max_samples=budget,
                                 seed=ctx.seed_for(claim_id, "gate", rank, j))
        gated.append(GatedPair(dict(plan.parameters), emp.what, pair, a_gate, result))
    ctx.progress(len(todo), len(todo), "done")
    return ClaimGate(claim_id, ctx.alpha, tuple(gated), tuple(not_gated))


def claim_declaration(claim_id: str) -> Any:
    """The declaration the claim driver runs for a registered claim; ValueError when its audit is
    a custom function (the gate needs the declared black-box pairs)."""
    from dpaudit.claims.registry import get

    registered = get(claim_id)
    audit = registered.audit
    decl = getattr(audit, "declaration", None) or getattr(getattr(audit, "wrapped", None),
                                                          "declaration", None)
    if decl is None:
        raise ValueError(f"claim {claim_id!r} is audited by a custom function, not by a claim "
                         "declaration: it has no declared black-box pairs to gate")
    return decl
