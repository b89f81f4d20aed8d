"""What the claim driver does with a law derived from the code: verify it on the code's runs,
carry its residual into the verdict, and refuse ``holds`` to a release whose randomness the replay
does not own.

* :func:`verify_derived_laws` runs each point's ``law_verification`` (its share of the claim's
  family, like a declared-law test). A departure on any run drops an exact value derived from the
  code (it certifies nothing) and fails :data:`~dpaudit.greybox.verification.VERIFIED_STATEMENT`,
  which blocks ``holds``. A clean pass on ``n`` runs leaves a law that may still be wrong on an
  event of probability ``p``; the code's delta is then within ``p (1 + e^eps)`` of the law's
  (:mod:`dpaudit.greybox.verification`), so an exact epsilon above the claim decides ``violated``
  only when the residual-robust lower bound is above it too; otherwise the point keeps that robust
  bound as a certified lower bound, and a sentence says so.
* :func:`guarded_randomness` fails :data:`GUARD_STATEMENT` for a release that reached the bits
  behind the rng (a second generator on them, a raw draw, a copied state outside the replay):
  neither a derived law nor a declared accountant describes it, so only the black box may decide.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Sequence

from dpaudit.claims.evidence import (CERTIFIED, EXACT, EvidenceOrigin, GridPoint, LemmaCheck,
                                     PointEvidence)
from dpaudit.claims.verdict import format_parameters
from dpaudit.greybox.invariance import INVARIANCE_STATEMENT
from dpaudit.greybox.verification import VERIFIED_STATEMENT

__all__ = ["verify_derived_laws", "drop_exact", "guarded_randomness", "noise_as_drawn", "invariance",
           "GUARD_STATEMENT", "AS_DRAWN_STATEMENT", "VERIFIED_STATEMENT", "INVARIANCE_STATEMENT"]

#: The statement of the check that the replay owns the release's randomness.
GUARD_STATEMENT = ("the release draws its randomness only through the rng's noise methods (no "
                   "access to the bits behind it)")

#: The statement of the check that the noise is added as drawn (what an additive accountant needs).
AS_DRAWN_STATEMENT = ("each noise draw reaches the output as drawn: added, rescaled or summed "
                      "before any non-linear step (no clip, comparison or branch on the draw)")

_KIND = "law derived from the code, checked on runs of the code"


def _num(x: float) -> str:
    return f"{x:.4g}"


def drop_exact(plan: Any, ev: PointEvidence, why: str, *,
               rejected_field: str = "derived_exact_rejected") -> Any:
    """``plan`` with evidence ``ev`` and without its exact value, which a rejected law (derived
    from the code, or declared) no longer certifies: the value is kept in ``ev``'s
    ``rejected_field`` (``derived_exact_rejected`` or ``declared_exact_rejected``), its
    ``exact_source`` goes, the ``origins`` say ``"none: <why>"`` of the exact value, and a
    recommendation computed from the derived law goes with it."""
    if rejected_field not in ("derived_exact_rejected", "declared_exact_rejected"):
        raise ValueError("rejected_field must be 'derived_exact_rejected' or "
                         f"'declared_exact_rejected', got {rejected_field!r}")
    # A missing value is still recorded (as JSON null), as the evidence always has.
    ev = (ev.with_(**{rejected_field: plan.exact}) if plan.exact is not None
          else ev.with_details(**{rejected_field: None}))
    ev = ev.with_(exact_source=None)
    if ev.origins is not None:
        ev = ev.with_(origins=ev.origins.with_(exact="none: " + why))
    return replace(plan, exact=None, exact_upper=None, exact_kind=EXACT, evidence=ev,
                   recommendation=_without_derived(plan.recommendation))


def _without_derived(recommendation: Any) -> Any:
    """A recommendation computed from the derived law goes with it (claims.recalibration)."""
    return None if getattr(recommendation, "rests_on_derived_law", False) else recommendation


def verify_derived_laws(plans: list[Any], points: list[GridPoint], indices: Sequence[int],
                        ctx: Any, claim_id: str, alpha: float, n_tests: int,
                        findings: list[str]) -> list[LemmaCheck]:
    """Run the verifications of ``plans[indices]`` (module docstring), updating ``plans`` and
    ``points`` in place and appending sentences to ``findings``; one check of
    :data:`VERIFIED_STATEMENT` (none when no point has a derived law)."""
    if not indices:
        return []
    rejected: list[tuple[Any, Any]] = []
    passed: list[tuple[Any, Any, float]] = []
    unconfirmed: list[tuple[Any, float, float, int | None]] = []
    runs = 0
    for i in indices:
        plan = plans[i]
        res = plan.law_verification(alpha, ctx.seed_for(claim_id, "law-verification", i))
        runs += int(res.runs) * int(res.inputs)
        record = dict(res.to_dict())
        record["bonferroni"] = {"family_alpha": ctx.alpha, "tests": n_tests,
                                "per_test_alpha": alpha}
        from_code = plan.evidence.exact_origin is EvidenceOrigin.DERIVED
        if res.rejected:
            rejected.append((plan, res))
            ev = plan.evidence.with_(law_verification=record)
            plan = (drop_exact(plan, ev, "the law derived from the code departs from runs of "
                                "the code") if from_code else replace(plan, evidence=ev))
        else:
            eps = plan.exact if plan.exact is not None else plan.claimed_epsilon
            r = res.delta_residual(eps)
            record["delta_residual"] = r
            passed.append((plan, res, r))
            robust = None
            if from_code and plan.exact is not None and plan.exact > plan.claimed_epsilon:
                robust = res.robust_epsilon(plan.claimed_delta)
                record["robust_epsilon"] = robust
            ev = plan.evidence.with_(law_verification=record)
            if robust is not None and robust <= plan.claimed_epsilon:
                ev = ev.with_(derived_exact_unconfirmed=plan.exact)
                unconfirmed.append((plan, plan.exact, robust, res.confirm_runs))
                plan = replace(plan, exact=robust, exact_kind=CERTIFIED, exact_upper=None,
                               recommendation=_without_derived(plan.recommendation),
                               evidence=ev)
            else:
                plan = replace(plan, evidence=ev)
        plans[i] = plan
        points[i] = plan.grid_point()
    if rejected:
        plan, res = rejected[0]
        findings.append(
            f"The law derived from the code does not describe the code at {len(rejected)} of "
            f"{len(indices)} point(s); at ({format_parameters(plan.parameters)}): "
            f"{res.detail()}. It certifies nothing, and no exact value is taken from it.")
        return [LemmaCheck(VERIFIED_STATEMENT, "violated", examples=runs,
                           counterexample={"parameters": dict(plan.parameters),
                                           "detail": res.detail()},
                           details={"kind": _KIND, "points": len(indices),
                                    "rejected_at": len(rejected)})]
    plan, res, r = max(passed, key=lambda x: x[2] / max(x[0].claimed_delta, 1e-300))
    reach = ("below" if r < plan.claimed_delta else "not below")
    findings.append(
        f"The law derived from the code matched every run checked at {len(passed)} point(s) "
        f"(at least {res.runs:,} runs of each input): a departure of probability above "
        f"{res.residual:.3g} would have shown with probability at least {1 - alpha:g}, and a "
        f"law wrong on such an event moves delta by at most {r:.3g}, {reach} the claimed delta "
        f"{plan.claimed_delta:g} at ({format_parameters(plan.parameters)})"
        + ("." if r < plan.claimed_delta else
           ": there the exact epsilon rests on the law holding on events rarer than the runs "
           "could show."))
    for plan, law_eps, robust, need in unconfirmed:
        findings.append(
            f"At ({format_parameters(plan.parameters)}) the law derived from the code gives "
            f"epsilon {_num(law_eps)} > claimed {_num(plan.claimed_epsilon)}, but it does not "
            "survive the verification's residual: the code's epsilon is certified only >= "
            f"{_num(robust)} at the claimed delta, which does not refute the claim"
            + (f" (confirming it would take about {need:,} verified runs per input, beyond this "
               "budget)." if need else "."))
    return [LemmaCheck(VERIFIED_STATEMENT, "holds", examples=runs,
                       details={"kind": _KIND, "points": len(indices),
                                "residual_probability": res.residual,
                                "delta_residual": r})]


def invariance(plans: Sequence[Any], findings: list[str]) -> list[LemmaCheck]:
    """One failed check of :data:`INVARIANCE_STATEMENT` (:mod:`dpaudit.greybox.invariance`)
    when any point's noise calls or public values differ between a declared pair's inputs given
    the same draws (``PointEvidence.invariance``), which blocks ``holds``; else none (a clean check
    is recorded in the point's evidence, like the guard's)."""
    checked = [p for p in plans if p.evidence.invariance is not None]
    hit = [p for p in checked if p.evidence.invariance.invariant is False]
    if not hit:
        return []
    rec = hit[0].evidence.invariance
    words = "; ".join(f["what"] for f in (rec.findings or [])[:3])
    findings.append(f"At ({format_parameters(hit[0].parameters)}), replaying data0's draws on "
                    f"data1 of declared pair {int(rec.pair or 0) + 1}: {words}. A fixed "
                    "noise schedule does not describe such a release, so no holds can rest on "
                    "the accountant.")
    return [LemmaCheck(INVARIANCE_STATEMENT, "violated", counterexample={
        "parameters": dict(hit[0].parameters), "detail": words,
        "findings": list(rec.findings or [])},
        details={"kind": "one input's draws replayed on its neighbour", "points": len(hit)})]


def guarded_randomness(plans: Sequence[Any], findings: list[str]) -> list[LemmaCheck]:
    """One failed check of :data:`GUARD_STATEMENT` when any point's release reached the bits
    behind its rng (``PointEvidence.rng_guard``), else none; followed by the :func:`invariance`
    check (both are the replay's guards on what the accountant assumes of the code)."""
    hit = [p for p in plans if p.evidence.rng_guard]
    if not hit:
        return invariance(plans, findings)
    reason = hit[0].evidence.rng_guard
    findings.append(f"At ({format_parameters(hit[0].parameters)}) {reason}; no holds can rest "
                    "on the accountant.")
    return [LemmaCheck(GUARD_STATEMENT, "violated", counterexample={
        "parameters": dict(hit[0].parameters), "detail": reason},
        details={"kind": "the replay's guard on the rng", "points": len(hit)})] + invariance(
        plans, findings)


def noise_as_drawn(plans: Sequence[Any], findings: list[str]) -> list[LemmaCheck]:
    """One failed check of :data:`AS_DRAWN_STATEMENT` when the trace of any point saw a
    non-linear operation on a draw before its addition (``PointEvidence.noise_transforms``; see
    :mod:`dpaudit.greybox.noise_transforms`), else none."""
    hit = [p for p in plans if p.evidence.noise_transforms]
    if not hit:
        return []
    seen = list(hit[0].evidence.noise_transforms)
    findings.append(
        f"At ({format_parameters(hit[0].parameters)}) the code applies "
        f"{'; '.join(seen[:3])} before adding it: the noise is not what the accountant "
        "describes (a clip or a branch on the draw puts atoms or raw values into the output "
        "with small probability), so no holds can rest on the accountant.")
    return [LemmaCheck(AS_DRAWN_STATEMENT, "violated", counterexample={
        "parameters": dict(hit[0].parameters), "detail": "; ".join(seen)},
        details={"kind": "noise draws traced in the code", "points": len(hit)})]
