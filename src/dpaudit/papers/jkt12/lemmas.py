"""Sensitivity-lemma checks of the JKT12 claims (Hypothesis searches and exact evaluations).

Every printed sensitivity statement is checked by :func:`dpaudit.formal.sensitivity.check_sensitivity`
over several loss classes, domains, dimensions, alphas and horizons; statements that are exact
facts about a construction (node counts, the per-step privacy of Lemma 1) are evaluated exactly over
the audited grid. Each ``*_lemmas`` factory returns ``lemmas(ctx) -> (checks, trace, findings)``.
"""

from __future__ import annotations


import math
from typing import Any, Callable, Sequence

import numpy as np

from dpaudit.formal.accounting import gaussian_epsilon
from dpaudit.claims.evidence import LemmaCheck
from dpaudit.claims.context import AuditContext
from dpaudit.formal.sensitivity import SensitivityReport, check_sensitivity
from dpaudit.formal.strategies import regression_class
from dpaudit.learners.domains import Ball, Box
from dpaudit.learners.giga import GIGA, giga_burn_in
from dpaudit.learners.igd import IGD
from dpaudit.papers.jkt12.claims import get_claim
from dpaudit.learners.losses import Loss, LossClass
from dpaudit.learners.pocp import Version, pgiga_beta, pigd_beta, pocp_c
from dpaudit.learners.pol import pol_alpha, pol_printed_sensitivity
from dpaudit.mechanisms.private_sum import tree_depth
from dpaudit.learners.qftl import QFTL
from dpaudit.papers.jkt12.plans import pol_grid
from dpaudit.papers.jkt12.pairs import pol_bounds, pocp_qftl_lambda


def _merge_reports(statement: str, reports: Sequence[tuple[str, SensitivityReport]]) -> LemmaCheck:
    """One LemmaCheck for a statement checked over several classes: worst ratio, first failure."""
    examples = sum(r.examples for _, r in reports)
    worst_label, worst = max(reports, key=lambda lr: lr[1].worst_ratio)
    failed = [(lab, r) for lab, r in reports if not r.holds]
    if failed:
        lab, r = max(failed, key=lambda lr: lr[1].worst_ratio)
        check = r.to_lemma_check(statement)
        cex = dict(check.counterexample or {})
        cex["class"] = lab
        return LemmaCheck(statement, "violated", worst.worst_ratio, examples, cex)
    return LemmaCheck(statement, "holds", worst.worst_ratio, examples, None)


def _exact_lemma(statement: str, ratios: Sequence[tuple[dict[str, Any], float]],
                 what: str) -> LemmaCheck:
    """A statement evaluated exactly at each grid point: observed/claimed ratios."""
    worst_params, worst = max(ratios, key=lambda pr: pr[1])
    if worst <= 1.0 + 1e-9:
        return LemmaCheck(statement, "holds", worst, len(ratios), None)
    return LemmaCheck(statement, "violated", worst, len(ratios),
                      {"parameters": worst_params, "ratio": worst, "evaluated": what})

_LemmaFn = Callable[[AuditContext], tuple[list[LemmaCheck], Any, list[str]]]


def lemma1_ratio(mu_step: float, eps_step: float, delta_step: float) -> float:
    """Exact epsilon of one Gaussian step over the per-step epsilon claimed (JKT12 Lemma 1).

    Parameters
    ----------
    mu_step
        The step's Gaussian ``mu`` (sensitivity over noise standard deviation).
    eps_step, delta_step
        The per-step privacy the proof assigns to the step.

    Returns
    -------
    float
        ``epsilon(delta_step) / eps_step``; above 1 the per-step statement fails.
    """
    return gaussian_epsilon(mu_step, delta_step) / eps_step


def _sens_trace(reports: Sequence[tuple[str, str, SensitivityReport]]) -> dict[str, Any] | None:
    """figures['sensitivity'] from the report with the largest ratio."""
    if not reports:
        return None
    statement, label, rep = max(reports, key=lambda x: x[2].worst_ratio)
    which = "counterexample" if rep.counterexample is not None else "worst"
    trace = rep.trace(statement, which)
    trace["class"] = label
    return trace


def _iterates(factory: Callable[[], Any]) -> Callable[[Sequence[Loss]], np.ndarray]:
    def trajectory(losses: Sequence[Loss]) -> np.ndarray:
        return factory().run(list(losses), 1, np.random.default_rng(0))[0]
    return trajectory


def exact_step_check(statement: str, ratio: Callable[[dict[str, Any]], float]
                     ) -> Callable[[Sequence[dict[str, Any]]], LemmaCheck]:
    """The per-step privacy statement evaluated exactly at every audited point (``Family``).

    Parameters
    ----------
    statement
        The lemma as printed.
    ratio
        ``ratio(point_parameters)``: the step's exact epsilon over the claimed one (e.g. by
        :func:`lemma1_ratio`).

    Returns
    -------
    Callable[[Sequence[dict[str, Any]]], LemmaCheck]
        ``check(points)``: ``violated`` where some point's ratio exceeds 1, ``holds`` otherwise.
    """
    def check(params: Sequence[dict[str, Any]]) -> LemmaCheck:
        return _exact_lemma(statement, [(dict(p), ratio(p)) for p in params],
                            "exact Gaussian epsilon of one step at the printed noise")
    return check


def pocp_lemmas() -> _LemmaFn:
    """The generic POCP claims' lemma: QFTL's assumption (1), ``S(QFTL, t) <= lambda_A / t``.

    Checked by :func:`~dpaudit.formal.sensitivity.check_sensitivity` on regression classes; the
    per-step lemma is the family's ``step_check``.

    Returns
    -------
    Callable[[AuditContext], tuple[list[LemmaCheck], Any, list[str]]]
        ``lemmas(ctx) -> (checks, trace, findings)``: the checks in the claim's lemma order, the
        sensitivity figure's trace of the worst search (or ``None``) and the findings to print.
    """

    def lemmas(ctx: AuditContext) -> tuple[list[LemmaCheck], dict[str, Any] | None, list[str]]:
        reports = []
        lam_of = {}
        for j, (d, R, alpha) in enumerate([(1, 0.5, 1.0), (3, 1.0, 0.5)]):
            cls = regression_class(Ball(d, 2.0 * R / alpha), R, alpha)
            lam = pocp_qftl_lambda(R, alpha)
            lam_of[(d, R, alpha)] = lam
            rep = check_sensitivity(_iterates(lambda d=d, a=alpha: QFTL(d, a)),
                                    lambda t, T, lam=lam: lam / t, cls, T=(2, 12),
                                    examples=ctx.budget.sensitivity_examples,
                                    seed=ctx.seed_for("lemma-qftl", j, 0))
            reports.append((f"QFTL, d={d}, R={R}, alpha={alpha}", rep))
        stmt_a = ("Assumption (1) instantiated for QFTL on |y|, ||v|| <= R: "
                  "||x_{t+1} - x'_{t+1}|| <= (2R^2/alpha)(1 + R^2/(2 alpha)) / t (derived bound)")
        checks = [_merge_reports(stmt_a, reports)]
        trace = _sens_trace([(stmt_a, lab, r) for lab, r in reports])
        return checks, trace, []
    return lemmas


def _igd_lemma_classes(grid: str) -> list[tuple[str, LossClass]]:
    base = [("squared", Box(1, -1.0, 1.0), 2.0, 0.05), ("logistic", Ball(3, 1.0), 1.5, 1.0),
            ("hinge", Box(2, -1.0, 1.0), 3.0, 0.5)]
    if grid != "coarse":
        base += [("squared", Ball(2, 0.5), 1.0, 0.01), ("logistic", Box(1, -2.0, 2.0), 30.0, 10.0),
                 ("hinge", Ball(4, 1.0), 2.0, 1.5)]
    return [(f"{k}+ridge, {dom!r}, L={L}, alpha={a}", LossClass(k, dom, L, a))
            for k, dom, L, a in base]


def pigd_lemmas(version: Version) -> _LemmaFn:
    """PIGD's lemma: IGD's sensitivity (Lemma 4; COLT ``2L/(alpha t)``, arXiv ``2L/t``).

    Parameters
    ----------
    version
        ``"colt"`` or ``"arxiv"``: which printed constant is checked.

    Returns
    -------
    Callable[[AuditContext], tuple[list[LemmaCheck], Any, list[str]]]
        ``lemmas(ctx) -> (checks, trace, findings)``: the checks in the claim's lemma order, the
        sensitivity figure's trace of the worst search (or ``None``) and the findings to print.
    """
    colt = version == "colt"

    def lemmas(ctx: AuditContext) -> tuple[list[LemmaCheck], Any, list[str]]:
        statement = get_claim(f"jkt12-{version}/pigd").lemmas[0].statement
        reports = []
        for j, (label, cls) in enumerate(_igd_lemma_classes(ctx.budget.grid)):
            L, alpha = cls.lipschitz, cls.strong_convexity
            bound = (lambda t, T, L=L, a=alpha: 2 * L / (a * t)) if colt else \
                (lambda t, T, L=L: 2 * L / t)
            rep = check_sensitivity(_iterates(lambda c=cls: IGD(c.domain, c.strong_convexity,
                                                                np.zeros(c.domain.dim))),
                                    bound, cls, T=(2, 16 if ctx.budget.grid == "coarse" else 32),
                                    examples=ctx.budget.sensitivity_examples,
                                    seed=ctx.seed_for(f"lemma-igd-{version}", j, 0))
            reports.append((label, rep))
        checks = [_merge_reports(statement, reports)]
        trace = _sens_trace([(statement, lab, r) for lab, r in reports])
        # The bound the accountant (exact.pigd_accountant) uses, checked on the implementation.
        acc_reports = []
        # Plus a box small enough (D = L/(alpha (tau+2)) at tau = 2) for the bound to be attained
        # within the searched horizons by -+G x + alpha/2 x^2 (squared loss, small v).
        tight = ("squared+ridge, Box(1, -0.25, 0.25), L=1.0, alpha=1.0 (bound attainable)",
                 LossClass("squared", Box(1, -0.25, 0.25), 1.0, 1.0))
        # Not the squared loss on a ball: implicit_step overflows to inf/nan there for members
        # such as v = (3e-308, 0), y = 3e307 (|y v| ~ 1), which this search reaches (reported as
        # a learner bug; the Lemma 4 search above does not reach it at its seeds).
        classes = [(lab, c) for lab, c in _igd_lemma_classes(ctx.budget.grid)
                   if not (c.kind == "squared" and isinstance(c.domain, Ball))] + [tight]
        for j, (label, cls) in enumerate(classes):
            L, alpha = cls.lipschitz, cls.strong_convexity
            rep = check_sensitivity(_iterates(lambda c=cls: IGD(c.domain, c.strong_convexity,
                                                                np.zeros(c.domain.dim))),
                                    lambda t, T, L=L, a=alpha: 2 * L / (a * (t + 2)), cls,
                                    T=(2, 16 if ctx.budget.grid == "coarse" else 32),
                                    distance=_igd_trajectory_distance,
                                    examples=ctx.budget.sensitivity_examples,
                                    seed=ctx.seed_for(f"lemma-igd-accountant-{version}", j, 0))
            acc_reports.append((label, rep))
        checks.append(_merge_reports(IGD_ACCOUNTANT_STATEMENT, acc_reports))
        return checks, trace, []
    return lemmas


#: The sensitivity statement behind the PIGD accountant (exact.pigd_accountant), both versions.
IGD_ACCOUNTANT_STATEMENT = (
    "IGD, bound the PIGD accountant uses: with f_tau replaced, ||x_{t+1} - x'_{t+1}|| <= "
    "2L (tau+1)/(alpha (tau+2) (t+1)) for every t >= tau (one step 2L/(alpha (tau+2)), then "
    "t/(t+1) contractions); checked as ||x_{t+1} - x'_{t+1}|| (tau+2)(t+1)/((tau+1)(t+2)) <= "
    "2L/(alpha (t+2)), tau the first round whose output differs")


def _igd_trajectory_distance(traj0: np.ndarray, traj1: np.ndarray) -> np.ndarray:
    """Row k (x_{k+1}): ||x_{k+1} - x'_{k+1}|| (tau+2)(k+1)/((tau+1)(k+2)), tau the first row
    that differs (the rounds before the replaced one see identical losses and give bit-identical
    iterates), so that the accountant's trajectory bound reads 2L/(alpha (k+2)) at every row."""
    a = np.asarray(traj0, dtype=float).reshape(len(traj0), -1)
    b = np.asarray(traj1, dtype=float).reshape(len(traj1), -1)
    diff = np.linalg.norm(a - b, axis=1)
    moved = np.flatnonzero(diff > 0)
    if moved.size == 0:
        return diff
    tau = float(max(moved[0], 1))
    k = np.arange(len(diff), dtype=float)
    return diff * (tau + 2.0) * (k + 1.0) / ((tau + 1.0) * (k + 2.0))


def instance_step_check(claim_id: str, version: Version, constant: str
                         ) -> Callable[[Sequence[dict[str, Any]]], LemmaCheck]:
    """A check of JKT12 Lemma 1 for PIGD or PGIGA: one noisy step at the printed beta.

    Lemma 1 for PIGD (``constant="L"``) or PGIGA (``"G"``): one step at the printed beta with
    the lemma's own sensitivity (COLT 2K/(alpha t), arXiv 2K/t; K = L or G).

    Parameters
    ----------
    claim_id
        The claim whose printed lemma statement is checked.
    version
        ``"colt"`` or ``"arxiv"``.
    constant
        ``"L"`` (PIGD) or ``"G"`` (PGIGA): the grid parameter holding the loss bound.

    Returns
    -------
    Callable[[Sequence[dict[str, Any]]], LemmaCheck]
        As for :func:`exact_step_check`.
    """
    def ratio(p: dict[str, Any]) -> float:
        eps, dl, T, K, alpha = p["epsilon"], p["delta"], p["T"], p[constant], p["alpha"]
        beta = (pigd_beta if constant == "L" else pgiga_beta)(version, T, K, alpha, eps, dl)
        lam = 2 * K / alpha if version == "colt" else 2 * K
        c = pocp_c(version, T, eps, dl)
        return lemma1_ratio(lam / beta, math.sqrt(eps) / T ** (0.5 + c), dl / T)
    return exact_step_check(get_claim(claim_id).lemmas[1].statement, ratio)


def pgiga_lemmas(version: Version) -> _LemmaFn:
    """PGIGA's lemma: GIGA's sensitivity (Lemma 5, ``2G/(alpha t)`` in both versions).

    Parameters
    ----------
    version
        ``"colt"`` or ``"arxiv"`` (the claim whose printed statement is checked).

    Returns
    -------
    Callable[[AuditContext], tuple[list[LemmaCheck], Any, list[str]]]
        ``lemmas(ctx) -> (checks, trace, findings)``: the checks in the claim's lemma order, the
        sensitivity figure's trace of the worst search (or ``None``) and the findings to print.
    """
    def lemmas(ctx: AuditContext) -> tuple[list[LemmaCheck], Any, list[str]]:
        statement = get_claim(f"jkt12-{version}/pgiga").lemmas[0].statement
        # alpha D / G well below 1/2 leaves room for the step 2/(alpha tau) * 2|y| ||v||; the
        # burn-in t_q = 2 (L_G/alpha)^2 with L_G = G/D (the squared class's largest ||v||^2 + alpha)
        # stays short.
        configs = [("squared", Ball(1, 1.0), 1.0, 0.3), ("squared", Ball(2, 1.0), 1.0, 0.35)]
        if ctx.budget.grid != "coarse":
            configs += [("logistic", Ball(2, 1.0), 1.0, 0.5),
                        ("squared", Box(1, -1.0, 1.0), 1.0, 0.4)]
        reports = []
        for j, (kind, dom, G, alpha) in enumerate(configs):
            cls = LossClass(kind, dom, G, alpha)
            D = dom.radius
            smooth = G / D if kind == "squared" else (G - alpha * D) ** 2 / 4.0 + alpha
            smooth = max(smooth, alpha)
            t_q = giga_burn_in(alpha, smooth)
            rep = check_sensitivity(
                _iterates(lambda dom=dom, a=alpha, s=smooth: GIGA(dom, a, s, np.zeros(dom.dim))),
                lambda t, T, G=G, a=alpha: 2 * G / (a * t), cls, T=(t_q + 1, t_q + 16),
                examples=ctx.budget.sensitivity_examples,
                seed=ctx.seed_for(f"lemma-giga-{version}", j, 0))
            reports.append((f"{kind}+ridge, {dom!r}, G={G}, alpha={alpha}, L_G={smooth:.4g}, "
                            f"t_q={t_q}", rep))
        checks = [_merge_reports(statement, reports)]
        findings = ["GIGA's step eta_t = 2/(alpha t) moves x_{tau+1} by up to eta_tau * 2G = "
                    "4G/(alpha tau) when f_tau is replaced: Lemma 5's first case uses "
                    "1/(alpha tau)."]
        return checks, _sens_trace([(statement, lab, r) for lab, r in reports]), findings
    return lemmas


def pol_lemmas(version: Version) -> _LemmaFn:
    """POL's lemma: the averaged iterate's sensitivity (COLT eq. (37) / arXiv eq. (35)).

    Parameters
    ----------
    version
        ``"colt"`` or ``"arxiv"``.

    Returns
    -------
    Callable[[AuditContext], tuple[list[LemmaCheck], Any, list[str]]]
        ``lemmas(ctx) -> (checks, trace, findings)``: the checks in the claim's lemma order, the
        sensitivity figure's trace of the worst search (or ``None``) and the findings to print.
    """
    def lemmas(ctx: AuditContext) -> tuple[list[LemmaCheck], Any, list[str]]:
        statement = get_claim(f"jkt12-{version}/pol").lemmas[0].statement
        configs = [("logistic", 1, 1.0, 0.1), ("hinge", 2, 1.0, 0.5), ("squared", 1, 2.0, 0.05)]
        if ctx.budget.grid != "coarse":
            configs += [("logistic", 3, 1.0, 0.01), ("hinge", 1, 3.0, 1.0)]
        reports = []
        for j, (kind, d, L, eg) in enumerate(configs):
            xs = 1.0
            dom = Ball(d, xs)
            alpha = pol_alpha(eg, xs)
            cls = LossClass(kind, dom, L, 0.0)

            def mean_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
                return np.array([np.linalg.norm(a.mean(axis=0) - b.mean(axis=0))])

            rep = check_sensitivity(
                _iterates(lambda dom=dom, a=alpha: IGD(dom, a, np.zeros(dom.dim), extra_ridge=a)),
                lambda t, T, L=L, a=alpha: pol_printed_sensitivity(max(T, 2), L, a, xs), cls,
                T=(2, 16 if ctx.budget.grid == "coarse" else 48), offset=0,
                distance=mean_distance, examples=ctx.budget.sensitivity_examples,
                seed=ctx.seed_for(f"lemma-pol-{version}", j, 0))
            reports.append((f"{kind}, d={d}, L={L}, eps_g={eg}, alpha={alpha:g}", rep))
        findings = ["The printed sensitivity of x~ drops the 1/alpha of Lemma 4 (COLT) and bounds "
                    "sum_{t=2}^T 1/(t-1) = H_{T-1} by ln T; the correct bound is "
                    "2 L'(H_T - 1)/(alpha T)."]
        # The constructed pairs attain the shift of pol_bounds (exactly with G = L - nu^2 ||x*||,
        # checked in the tests; the limit nu -> 0 is used here): shift / printed bound per point.
        ratios = []
        for p in pol_grid(ctx.budget.grid):
            T, L, xs = p["T"], p["L"], p["x_star_norm"]
            alpha = pol_alpha(p["epsilon_g"], xs)
            _, shifts = pol_bounds(T, L, alpha, xs)
            ratios.append((p, float(shifts.max()) / pol_printed_sensitivity(T, L, alpha, xs)))
        exact_check = _exact_lemma(statement + " [constructed pairs over the audit grid]", ratios,
                                   "||x~ - x~'|| of the constructed pair (nu -> 0) / printed bound")
        return ([_merge_reports(statement, reports), exact_check],
                _sens_trace([(statement, lab, r) for lab, r in reports]), findings)
    return lemmas


def tree_lemmas(version: Version, claim: str) -> _LemmaFn:
    """The lemma hook of PrivateSum's and PQFTL's claims: sampled checks of the tree lemmas.

    PrivateSum's and PQFTL's lemmas: every tree node moves by at most the printed bound, and a
    leaf lies in the printed number of nodes (Lemma 6; Theorem 11 COLT / 9 arXiv); for PQFTL also
    the u- and V-trees' input bounds ``R`` and ``R^2`` (Algorithm 4 lines 7-8).

    Parameters
    ----------
    version
        ``"colt"`` or ``"arxiv"``.
    claim
        The claim id (``jkt12-<version>/privatesum`` or ``/pqftl``) whose lemmas are checked.

    Returns
    -------
    Callable[[AuditContext], tuple[list[LemmaCheck], Any, list[str]]]
        ``lemmas(ctx) -> (checks, trace, findings)``: the checks in the claim's lemma order, the
        sensitivity figure's trace of the worst search (or ``None``) and the findings to print.
    """
    def lemmas(ctx: AuditContext) -> tuple[list[LemmaCheck], Any, list[str]]:
        c = get_claim(claim)
        checks: list[LemmaCheck] = []
        traces = []
        ex = ctx.budget.sensitivity_examples

        def prefix_sums(f: Callable[[Loss], np.ndarray]) -> Callable[[Sequence[Loss]], np.ndarray]:
            return lambda losses: np.cumsum(np.array([f(l) for l in losses]), axis=0)

        if claim.endswith("pqftl"):
            u_reports, v_reports = [], []
            for j, (d, R) in enumerate([(1, 2.0), (2, 1.0)] if ctx.budget.grid == "coarse"
                                       else [(1, 2.0), (2, 1.0), (3, 0.5), (2, 10.0)]):
                cls = regression_class(Ball(d, 1.0), R, 1.0)
                u_reports.append((f"regression d={d}, R={R}", check_sensitivity(
                    prefix_sums(lambda l: l.y * l.v), lambda t, T, R=R: R, cls, T=(1, 6), offset=0,
                    examples=ex, seed=ctx.seed_for(f"lemma-u-{version}", j, 0))))
                v_reports.append((f"regression d={d}, R={R}", check_sensitivity(
                    prefix_sums(lambda l: np.outer(l.v, l.v).ravel()), lambda t, T, R=R: R * R, cls,
                    T=(1, 6), offset=0, examples=ex, seed=ctx.seed_for(f"lemma-V-{version}", j, 0))))
            checks.append(_merge_reports(c.lemmas[0].statement, u_reports))
            checks.append(_merge_reports(c.lemmas[1].statement, v_reports))
            traces += [(c.lemmas[0].statement, lab, r) for lab, r in u_reports]
        reports = []
        for j, (d, R) in enumerate([(1, 1.0), (3, 2.0)]):
            cls = LossClass("linear", Ball(d, 1.0), R)
            reports.append((f"w_t = g_t, ||g_t|| <= R, d={d}, R={R}", check_sensitivity(
                prefix_sums(lambda l: l.g), lambda t, T, R=R: R, cls, T=(1, 8), offset=0,
                examples=ex, seed=ctx.seed_for(f"lemma-node-{version}", j, 0))))
        node_stmt = [lem for lem in c.lemmas if lem.statement.startswith("Lemma 6")][0].statement
        checks.append(_merge_reports(node_stmt, reports))
        traces += [(node_stmt, lab, r) for lab, r in reports]
        count_stmt = next(lem.statement for lem in c.lemmas
                          if "at most log T nodes" in lem.statement)
        ratios = []
        for T in (2, 3, 4, 8, 64, 1000, 1024, 2 ** 20):
            for reading, log_T in (("log2", math.log2(T)), ("ln", math.log(T))):
                # Populated nodes containing w_1 by time T: the leaf and every complete ancestor.
                nodes = sum(1 for h in range(tree_depth(T) + 1) if 2 ** h <= T)
                ratios.append(({"T": T, "log": reading, "nodes": nodes, "log T": log_T},
                               nodes / log_T))
        checks.append(_exact_lemma(count_stmt, ratios, "nodes of B(D) containing w_1 vs log T"))
        findings = ["Replacing w_t by another vector of norm <= R moves every node containing it "
                    "by up to 2R (Lemma 6 uses R), and the leaf plus its complete ancestors are "
                    "floor(log2 T) + 1 nodes (the proof composes over log T)."]
        return checks, _sens_trace(traces), findings
    return lemmas
