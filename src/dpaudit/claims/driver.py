"""The one claim driver: grid -> per-point evidence -> worst point -> verdict -> findings.

Every paper declares *what* to audit, as a :class:`~dpaudit.claims.declaration.Declaration`
(``dpaudit.papers.<paper>.audit``); this module decides *how*, identically for every paper: the
declaration's grid and frozen per-point plans (a :class:`PointPlan` with everything known before
any sample is drawn, or a :class:`Skip`), the empirical tests fixed from the plans only, with
``ctx.alpha`` split equally over them (Bonferroni) and a seed per claim and point
(:meth:`AuditContext.seed_for`), inversions (a lower bound above an exact upper value or the
accountant) as findings, the lemma outcome, and the worst point, figures, summary and
recommendation assembled into the :class:`~dpaudit.claims.record.ClaimAudit`: one runner loop, as
DP-Auditorium has, over small immutable plans, as dp-accounting's events are.

The six steps in full: docs/engine.md#the-claim-driver
"""

from __future__ import annotations

import math
import time
from dataclasses import replace
from typing import Any, Mapping, Sequence

from dpaudit.claims.declaration import (AddedPoints, ClaimRun, Declaration, EmpiricalPlan,
                                        PointPlan, Skip, TestedPoint)
from dpaudit.claims.evidence import (CERTIFIED, DEFAULT_NOT_CHECKED, EXACT, NOT_CHECKED,
                                     EvidenceOrigin,
                                     NOT_COMPUTED, USER_EXACT_LABEL, USER_LOWER_BOUND_LABEL,
                                     USER_SUPPLIED, BonferroniShare, EmpiricalRecord,
                                     GridPoint, LemmaCheck, LemmaOutcome, exact_label)
from dpaudit.claims.record import ClaimAudit
from dpaudit.claims.formatting import fmt, format_parameters
from dpaudit.claims.context import AuditContext, coarse
from dpaudit.hypothesis_seeding import independent_of_loaded_modules
from dpaudit.claims.model import PrivacyClaim
from dpaudit.claims.derived_law_check import (drop_exact, guarded_randomness, noise_as_drawn,
                                              verify_derived_laws)
from dpaudit.claims.primitive_check import primitive_checks

__all__ = ["EmpiricalPlan", "PointPlan", "Skip", "LemmaOutcome", "Declaration", "ClaimDeclaration",
           "ClaimRun", "TestedPoint", "AddedPoints", "run_claim", "coarse", "fmt", "MIRONOV_CAVEAT",
           "mironov_caveat", "BONFERRONI_NOTE", "LAW_STATEMENT"]

#: The former name of :class:`~dpaudit.claims.declaration.Declaration`.
ClaimDeclaration = Declaration

#: The caveat every report carries once (AUDIT-METHOD section 5).
MIRONOV_CAVEAT = ("Floating-point samplers are not exactly differentially private (Mironov, CCS "
                  "2012); the empirical bounds are about the mechanisms as implemented and "
                  "sampled.")

def mironov_caveat(points: Sequence[GridPoint]) -> str:
    """:data:`MIRONOV_CAVEAT`, naming the release's dtype when its outputs are floating point of
    another width than float64 (``PointEvidence.empirical.release_dtype``: a float32 jax or torch
    release rounds its noise to a 24-bit significand, far coarser than the doubles Mironov's
    attack is usually stated for)."""
    dtypes = sorted({str(p.evidence.empirical.release_dtype) for p in points
                     if p.evidence.empirical is not None and p.evidence.empirical.release_dtype})
    if not dtypes:
        return MIRONOV_CAVEAT
    return (f"Floating-point samplers are not exactly differentially private (Mironov, CCS 2012), "
            f"and this release returns {' and '.join(dtypes)}, not float64: its noise is rounded "
            "to far fewer bits, which widens the gap between the idealised mechanism and the one "
            "implemented; the empirical bounds are about the mechanism as implemented and sampled.")


BONFERRONI_NOTE = ("every empirical lower bound of this claim is a (1 - alpha/tests) statement, so "
                   "all of them hold jointly with probability >= 1 - alpha (Bonferroni; the number "
                   "of tests is fixed from the exact and accountant evidence before any sample is "
                   "drawn)")

#: Relative slack before a lower bound above an upper value is called an inversion.
INVERSION_RTOL = 1e-9


def _bonferroni(ctx: AuditContext, n_tests: int, rank: int, what: str,
                per_test_alpha: float) -> BonferroniShare:
    # per_test_alpha is the alpha the engine received (not recomputed here), so the record says
    # what was done even if the split above were wrong.
    return BonferroniShare(family_alpha=ctx.alpha, tests=n_tests, per_test_alpha=per_test_alpha,
                           test=rank + 1, what=what, note=BONFERRONI_NOTE)


def _run_test(plan: PointPlan, ctx: AuditContext, claim_id: str, key: tuple[Any, ...],
              alpha: float) -> Any:
    from dpaudit.blackbox.empirical_audit import audit

    emp = plan.empirical
    assert emp is not None
    samples = ctx.budget.samples if emp.samples is None else emp.samples
    seed = ctx.seed_for(claim_id, "empirical", *key)
    common = dict(epsilon=plan.claimed_epsilon, delta=plan.claimed_delta, samples=samples,
                  alpha=alpha, seed=seed, statistic=emp.statistic,
                  train_fraction=emp.train_fraction,
                  executor=ctx.executor if ctx.executor is not None else "local")
    if emp.pair_seeds:
        common["pair_seeds"] = list(emp.pair_seeds)
    if emp.pairs is not None:
        from dpaudit.blackbox.sampling import is_strategy

        pairs = emp.pairs if is_strategy(emp.pairs) else list(emp.pairs)
        return audit(emp.mechanism, pairs=pairs, **common)
    return audit(emp.mechanism, emp.data0, emp.data1, **common)


#: The statement of the check that a declared law describes the code (a failed one blocks "holds").
LAW_STATEMENT = "the declared law of the release (Claim.exact) describes the code's runs"


def _test_declared_laws(plans: list[PointPlan], points: list[GridPoint], indices: Sequence[int],
                        ctx: AuditContext, claim_id: str, alpha: float, n_tests: int,
                        findings: list[str]) -> list[LemmaCheck]:
    """Run each plan's ``law_test`` (its share of the family's alpha), record it in the point's
    evidence, drop an exact value taken from a rejected law, and return one check of
    :data:`LAW_STATEMENT` (violated when any point's law is rejected)."""
    if not indices:
        return []
    rejected_at: list[tuple[PointPlan, Any]] = []
    runs = 0
    for rank, i in enumerate(indices):
        plan = plans[i]
        assert plan.law_test is not None
        res = plan.law_test(alpha, ctx.seed_for(claim_id, "law-test", i))
        runs += int(getattr(res, "runs", 0)) * int(getattr(res, "inputs", 0))
        record = dict(res.to_dict())
        record["bonferroni"] = BonferroniShare(family_alpha=ctx.alpha, tests=n_tests,
                                               per_test_alpha=alpha,
                                               note=BONFERRONI_NOTE).to_dict()
        ev = plan.evidence.with_(declared_law=record)
        if res.rejected:
            rejected_at.append((plan, res))
            if ev.exact_origin is EvidenceOrigin.DECLARED:
                plan = drop_exact(plan, ev, "the declared law was rejected by runs of the code",
                                  rejected_field="declared_exact_rejected")
            else:
                plan = replace(plan, evidence=ev)
        else:
            plan = replace(plan, evidence=ev)
        plans[i] = plan
        points[i] = plan.grid_point()
    if not rejected_at:
        return [LemmaCheck(LAW_STATEMENT, "holds", examples=runs,
                           details={"kind": "declared law tested against runs of the release",
                                    "points": len(indices)})]
    plan, res = rejected_at[0]
    findings.append(
        f"The declared law does not describe the code at {len(rejected_at)} of {len(indices)} "
        f"point(s); at ({format_parameters(plan.parameters)}): {res.detail()}. Its exact value "
        "certifies nothing, nor does the description of the noise it shares with the accountant.")
    return [LemmaCheck(LAW_STATEMENT, "violated", examples=runs,
                       counterexample={"parameters": dict(plan.parameters),
                                       "detail": res.detail()},
                       details={"kind": "declared law tested against runs of the release",
                                "points": len(indices), "rejected_at": len(rejected_at),
                                "power": res.power})]


#: How the summary sentence names each kind of exact value (one label per user number: a
#: user's exact epsilon reads as it does in the verdict sentence).
_EXACT_WORD = {EXACT: "exact", CERTIFIED: CERTIFIED, USER_SUPPLIED: USER_EXACT_LABEL}


def _summary(claim_id: str, points: Sequence[GridPoint], worst: GridPoint) -> str:
    ratios_exact = [p.epsilon_exact / p.claimed_epsilon for p in points
                    if p.epsilon_exact is not None]
    kinds = {p.exact_kind for p in points if p.epsilon_exact is not None}
    exact_name = (_EXACT_WORD[next(iter(kinds))] if len(kinds) == 1
                  else "exact or certified" if USER_SUPPLIED not in kinds
                  else "exact, certified or user-supplied")
    ratios_acc = [p.epsilon_accountant / p.claimed_epsilon for p in points
                  if p.epsilon_accountant is not None]
    n_bad = sum(p.counterexample() is not None for p in points)
    parts = [f"{claim_id}: {len(points)} grid points, {n_bad} with a formal or statistical "
             "counterexample;"]
    if ratios_exact:
        parts.append(f"{exact_name}/claimed in [{min(ratios_exact):.3g}, "
                     f"{max(ratios_exact):.3g}];")
    if ratios_acc:
        parts.append(f"accountant/claimed in [{min(ratios_acc):.3g}, {max(ratios_acc):.3g}].")
    exact_word = _EXACT_WORD.get(worst.exact_kind, CERTIFIED)
    user_lb = ("" if worst.epsilon_user_lower_bound is None else
               f", {USER_LOWER_BOUND_LABEL} {fmt(worst.epsilon_user_lower_bound)}")
    parts.append(f"Worst point ({format_parameters(worst.parameters)}): claimed "
                 f"{fmt(worst.claimed_epsilon)}, {exact_word} {fmt(worst.epsilon_exact)}, accountant "
                 f"{fmt(worst.epsilon_accountant)}, empirical lower bound "
                 f"{fmt(worst.epsilon_lower_bound)}{user_lb}.")
    return " ".join(parts)


def _is_checked(statement: str, checks: Sequence[LemmaCheck]) -> bool:
    """Whether a check evaluates the claim's lemma ``statement``: a check of the same statement,
    or of the statement under a stated reading (``statement + " [reading]"``, e.g. st13's
    ``"... [tree_bound = lipschitz]"``: one check per reading of the printed bound)."""
    return any(c.statement == statement or c.statement.startswith(statement + " [")
               for c in checks)


def _label(statement: str) -> str:
    """The statement's label, e.g. ``"Lemma 1"`` of ``"Lemma 1: each noisy output ..."``."""
    head, sep, _ = statement.partition(":")
    return head.strip() if sep and len(head) <= 40 else ""


def _not_checked_note(statement: str, outcome: LemmaOutcome, checks: Sequence[LemmaCheck]) -> str:
    """Why a lemma of the claim is not checked: the declaration's reason, else the default, naming
    a check of a restated form (same label, e.g. "Lemma 1") when one ran."""
    if statement in outcome.not_checked:
        return outcome.not_checked[statement]
    label = _label(statement)
    restated = [c for c in checks if label and _label(c.statement) == label]
    if restated:
        return (f"the printed statement is not checked as such; a restated form ran: "
                f"'{restated[0].statement}' ({restated[0].status})")
    return DEFAULT_NOT_CHECKED


#: Relative tolerance when a figure's value at the claimed delta is held against the table's.
FIGURE_RTOL = 1e-6


def _table_check(curve: Mapping[str, Any], wp: GridPoint) -> dict[str, Any]:
    """The table's values at the worst point next to the curve's at the claimed delta.

    ``agrees`` is ``True`` when the curve is evaluated at the claimed delta and gives the table's
    exact and accountant epsilons there (relative ``FIGURE_RTOL``), ``False`` when it gives other
    values (the figure's caption then says so), ``None`` when the claimed delta is not on the
    curve's grid (the figure marks the table's values as points).
    """
    deltas = list(curve.get("deltas") or [])
    out: dict[str, Any] = {"delta": wp.claimed_delta, "epsilon_exact": wp.epsilon_exact,
                           "exact_kind": wp.exact_kind.value,
                           "epsilon_accountant": wp.epsilon_accountant, "agrees": None,
                           "mismatches": []}
    idx = next((i for i, d in enumerate(deltas)
                if d is not None and math.isclose(float(d), wp.claimed_delta, rel_tol=1e-12,
                                                  abs_tol=0.0)), None)
    if idx is None:
        return out
    agrees = True
    for key, table in (("epsilon_exact", wp.epsilon_exact),
                       ("epsilon_accountant", wp.epsilon_accountant)):
        series = curve.get(key)
        if table is None or not series or series[idx] is None:
            continue
        value = float(series[idx])
        if not (value == table or math.isclose(value, table, rel_tol=FIGURE_RTOL, abs_tol=1e-12)):
            agrees = False
            out["mismatches"].append({"series": key, "curve": value, "table": table})
    out["agrees"] = agrees
    return out


def run_claim(decl: Declaration, ctx: AuditContext) -> ClaimAudit:
    """Audit one declared claim (the steps of the module docstring).

    Every Hypothesis search a declaration runs (lemma checks, sensitivity points) runs inside
    :func:`~dpaudit.formal.sensitivity.independent_of_loaded_modules`, so a claim's report is a
    function of its seed and budget, not of which other papers or user modules are imported.
    """
    if not isinstance(decl, Declaration):
        raise TypeError("decl must be a dpaudit.claims.declaration.Declaration (subclass it and "
                        f"implement grid and plan), got {type(decl).__name__}")
    with independent_of_loaded_modules():
        return _run_claim(decl, ctx)


def _run_claim(decl: Declaration, ctx: AuditContext) -> ClaimAudit:
    start = time.perf_counter()
    claim = decl.claim
    grid = list(decl.grid(ctx))
    total = len(grid) + 3
    plans: list[PointPlan] = []
    skipped: list[Skip] = []
    for i, params in enumerate(grid):
        ctx.progress(i, total, f"point {i + 1} of {len(grid)}: exact and accountant epsilon")
        planned = decl.plan(params, ctx)
        if isinstance(planned, Skip):
            skipped.append(planned)
        else:
            plans.append(planned)
    added = decl.more_points(list(plans), ctx)
    plans.extend(added.plans)
    # The lemma checks see every planned and skipped point, not the follow-up tests.
    lemma_parameters = ([dict(p.parameters) for p in plans] +
                        [dict(s.parameters) for s in skipped])

    # Which points get an empirical test: fixed here, from the plans only.
    candidates = [i for i, p in enumerate(plans) if p.empirical is not None]
    k = decl.tested_points(ctx.budget)
    if k is not None:
        candidates = sorted(candidates, key=lambda i: -plans[i].ratio())[:k]
    followups = list(plans[candidates[0]].followups) if candidates else []
    followups = [f for f in followups if f.empirical is not None]
    law_tested = [i for i, p in enumerate(plans) if p.law_test is not None]
    verified = [i for i, p in enumerate(plans) if p.law_verification is not None]
    n_tests = len(candidates) + len(followups) + len(law_tested) + len(verified)
    a_test = ctx.alpha / n_tests if n_tests else ctx.alpha
    total = len(grid) + n_tests + 3
    done = [len(grid)]
    points = [p.grid_point() for p in plans]
    tested: list[TestedPoint] = []
    findings_tail: list[str] = []
    law_checks = _test_declared_laws(plans, points, law_tested, ctx, claim.id, a_test, n_tests,
                                     findings_tail)
    law_checks += verify_derived_laws(plans, points, verified, ctx, claim.id, a_test, n_tests,
                                      findings_tail)
    law_checks += guarded_randomness(plans, findings_tail)
    law_checks += noise_as_drawn(plans, findings_tail)
    law_checks += primitive_checks(plans, findings_tail)

    def record(index: int, plan: PointPlan, key: tuple[Any, ...], rank: int) -> GridPoint:
        assert plan.empirical is not None
        ctx.progress(done[0], total, f"empirical test {rank + 1} of {n_tests} "
                                     f"({plan.empirical.what})")
        res = _run_test(plan, ctx, claim.id, key, a_test)
        done[0] += 1
        emp = EmpiricalRecord.of({k: v for k, v in res.to_dict().items() if k != "histogram"})
        emp = emp.with_(statistic_name=plan.empirical.statistic_name)
        if plan.empirical.state_pair:  # the audited pair in one line (user claims)
            emp = emp.with_(pair=res.chosen_pair)
        if plan.empirical.statistic is not None:  # name it in words, not by its Python qualname
            emp = emp.with_(statistic=dict(emp.statistic or {},
                                           description=plan.empirical.statistic_name))
        emp = emp.with_(bonferroni=_bonferroni(ctx, n_tests, rank, plan.empirical.what, a_test))
        ev = plan.evidence.with_(empirical=emp)
        tested.append(TestedPoint(index, plan, res, rank))
        ref = plan.upper_reference()
        lb = res.epsilon_lower_bound
        if ref is not None and lb > ref * (1 + INVERSION_RTOL) + 1e-12:
            findings_tail.append(
                f"INCONSISTENCY at ({format_parameters(plan.parameters)}): empirical lower bound "
                f"{lb:.4g} exceeds {ref:.4g}, an upper value of the epsilon of this release (the "
                "code is not the mechanism analysed).")
        return plan.grid_point(lb, ev)

    for rank, i in enumerate(candidates):
        points[i] = record(i, plans[i], (i,), rank)
    for j, fplan in enumerate(followups):
        plans.append(fplan)
        points.append(record(len(plans) - 1, fplan, (candidates[0], "followup", j),
                             len(candidates) + j))

    for plan in plans:  # exact above accountant: an inversion of the formal evidence
        gp = plan.grid_point()
        if gp.accountant_below_exact():
            findings_tail.append(
                f"INCONSISTENCY at ({format_parameters(plan.parameters)}): the "
                f"{exact_label(plan.exact_kind)} {gp.epsilon_exact:.4g} of a realisable pair "
                f"exceeds the accountant's {gp.epsilon_accountant:.4g}, an upper bound over every "
                "pair (the accountant's schedule is not what this release does).")
        if gp.accountant_below_user_lower_bound():
            findings_tail.append(
                f"INCONSISTENCY at ({format_parameters(plan.parameters)}): the "
                f"{USER_LOWER_BOUND_LABEL} {gp.epsilon_user_lower_bound:.4g} ({NOT_COMPUTED}) "
                f"exceeds the accountant's {gp.epsilon_accountant:.4g}, an upper bound over every "
                "pair: the user's number and the accountant cannot both describe this release.")
    ctx.progress(done[0], total, "checking the sensitivity lemmas")
    outcome = decl.lemmas(ctx, lemma_parameters)
    lemmas = list(outcome.checks) + law_checks
    lemmas += [LemmaCheck(lem.statement, NOT_CHECKED,
                          note=_not_checked_note(lem.statement, outcome, lemmas))
               for lem in claim.lemmas if not _is_checked(lem.statement, lemmas)]

    ctx.progress(done[0] + 1, total, "worst point, figures and findings")
    run = ClaimRun(claim, ctx, plans, points, tested, lemmas, skipped, dict(added.notes))
    audit = ClaimAudit(claim=claim, points=points, lemmas=lemmas, seed=ctx.seed,
                       budget=ctx.budget.name, alpha=ctx.alpha)
    figures: dict[str, Any] = {}
    findings: list[str] = []
    w = run.worst_index()
    if w is not None:
        wp, wplan = points[w], plans[w]
        findings.append(_summary(claim.id, points, wp))
        shown = next((t for t in tested if t.index == w), None)
        if shown is None and tested:
            shown = min(tested, key=lambda t: t.rank)
        if shown is not None:
            hist = dict(shown.result.histogram)
            hist["parameters"] = dict(shown.plan.parameters)
            hist["statistic"] = shown.plan.empirical.statistic_name
            hist["worst_point"] = shown.index == w
            hist["worst_parameters"] = dict(wp.parameters)
            as_dict = shown.result.to_dict()
            chosen = as_dict.get("event") or {}
            if as_dict.get("event_outcomes"):
                hist["event_outcomes"] = as_dict["event_outcomes"]["description"]
            hist["event"] = (chosen.get("event") or {}).get("description")
            hist["event_tail"] = (chosen.get("event") or {}).get("tail")
            if hist["event_tail"] == "pooled":  # both tails of the pooled mirrored pair
                hist["event_parts"] = [[e.get("tail"), e.get("threshold")]
                                       for e in (chosen.get("event") or {}).get("events", [])]
            hist["event_test_counts"] = chosen.get("test")
            figures["histogram"] = hist
        if wplan.curve is not None:
            curve = dict(wplan.curve())
            curve["claimed"] = [wp.claimed_epsilon, wp.claimed_delta]
            curve["lower_bound"] = (None if wp.epsilon_lower_bound is None
                                    else [wp.epsilon_lower_bound, wp.claimed_delta])
            curve["parameters"] = dict(wp.parameters)
            curve["exact_kind"] = wp.exact_kind.value
            curve["table"] = _table_check(curve, wp)
            figures["privacy_curve"] = curve
        if (wplan.recommendation is not None and audit.verdict != "holds"
                and (wp.counterexample() is not None
                     or (wp.epsilon_accountant or 0.0) > wp.claimed_epsilon)):
            audit.recommended_calibration = wplan.recommendation()
    if outcome.sensitivity_trace is not None:
        figures["sensitivity"] = dict(outcome.sensitivity_trace)
    findings.extend(decl.findings(run))
    findings.extend(outcome.findings)
    findings.extend(f"Skipped grid point ({format_parameters(s.parameters)}), not audited and no "
                    f"share of alpha: {s.reason}." for s in skipped)
    findings.extend(findings_tail)
    findings.append(mironov_caveat(run.points))
    audit.findings = findings
    audit.figures = figures
    audit.points = run.points
    audit.seconds = time.perf_counter() - start
    audit.reproduce = (f"dpaudit audit {claim.id} --budget {ctx.budget.name} --seed {ctx.seed} "
                       f"--alpha {ctx.alpha}")
    ctx.progress(total, total, "done")
    return audit

