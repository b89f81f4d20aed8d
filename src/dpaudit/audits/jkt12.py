"""Auditors of the thirteen privacy claims of Jain, Kothari & Thakurta (2012).

Importing this module registers one audit function per claim id of
:data:`dpaudit.learners.jkt12_claims.CLAIM_IDS` with :func:`dpaudit.audits.registry.register`.
Each audit function ``audit_fn(ctx: AuditContext) -> ClaimAudit`` gathers the four kinds of
evidence of issue 4 over a grid of the claim's parameter range (``ctx.budget.grid``: ``"coarse"``
= a handful of points with the extremes and the paper's experiment settings; ``"full"`` = a
product grid):

1. **Exact** (formal): a neighbouring pair built from the structure of the algorithm (one loss
   replaced, every other loss a "filler" that keeps the difference alive), the learner's own
   noise-free trajectories on both streams (simulated for up to :data:`SIMULATED_STEPS` steps, then
   continued with the filler's closed-form recursion, which the tests check against the learner),
   and the epsilon(delta) of the *released* outputs: exact Gaussian when nothing is projected, and
   a rigorous lower bound (with the unprojected Gaussian as upper bound) when the noisy points are
   projected onto a box (:mod:`dpaudit.audits.jkt12_exact`). ``GridPoint.epsilon_exact`` is that
   lower bound: above the claim it is a proof that the claim fails.
2. **Accountant**: the epsilon of the implemented noise schedule under the worst-case sensitivity
   (the correct bound, derived in each section below, not the printed one), i.e. an upper bound
   over every pair of the class (the projection only lowers it).
3. **Empirical**: :func:`dpaudit.audit` on the constructed pair with the likelihood-ratio statistic
   (the noisy outputs projected on the mean shift, weighted by 1/sigma_t^2), at points with
   T <= ``ctx.budget.max_T``; plus one candidate-pair search with the engine's own statistic.
4. **Sensitivity**: Hypothesis checks (:func:`dpaudit.audits.sensitivity.check_sensitivity`) of
   every printed sensitivity statement, over several loss classes, domains, dimensions, alphas
   and horizons; statements that are exact facts about a construction (node counts, per-step
   privacy of Lemma 1) are evaluated exactly over the grid.

Worst-case pairs:

* strongly convex Lipschitz classes (PIGD, PGIGA, POL): the replaced loss is
  ``1/2 (y - <nu e_1, x>)^2 + alpha/2 ||x||^2`` with ``y = +-G/nu`` and ``nu`` small, i.e. a linear
  term ``-+G x_1`` plus the ridge up to O(nu^2) (a member of the squared + ridge class; dpaudit's
  ``LinearLoss`` carries no ridge), the fillers are ``alpha/2 ||x||^2``
  (``SquaredLoss(0, 0, alpha)``), and C is a box ``[-D, D]^d``. The replaced round tau and D are
  chosen so that x_{tau+1} lands on the boundary of C while the replaced loss meets the declared
  Lipschitz (or gradient) bound exactly; tau is the log-spaced candidate that keeps the most
  information after clipping (POL: the one maximising the shift of the averaged iterate, whose C
  is fixed by ||x*||);
* the generic POCP claims and the doubling variant: QFTL (an OCP algorithm the paper itself puts
  in the framework) on C = R^d with ``f_1 = 1/2 (+-R - <R e_1, x>)^2 + alpha/2 ||x||^2``, whose
  sensitivity ``2R^2/(t alpha + R^2)`` nearly attains the constant
  ``lambda_A = (2R^2/alpha)(1 + R^2/(2 alpha))`` of assumption (1) for the regression class;
* PrivateSum: ``w_1 = +-R e_1`` and zero vectors; PQFTL: the label flip ``y_1 = +-R`` with
  ``v_1 = R e_1``.

All randomness of grid point ``i`` comes from ``ctx.rng(claim_id, i)``.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

import dpaudit
from dpaudit.audits.accounting import (calibrate_gaussian_noise_multiplier, gaussian_epsilon,
                                       gaussian_epsilon_pld, heterogeneous_gaussian_mu)
from dpaudit.audits.claim_audit import ClaimAudit, GridPoint, LemmaCheck, format_parameters
from dpaudit.audits.jkt12_exact import release_epsilon, release_epsilon_curve
from dpaudit.audits.registry import AuditContext, register
from dpaudit.audits.sensitivity import SensitivityReport, check_sensitivity
from dpaudit.audits.strategies import regression_class
from dpaudit.learners.domains import Ball, Box
from dpaudit.learners.giga import GIGA, giga_burn_in
from dpaudit.learners.igd import IGD
from dpaudit.learners.jkt12_claims import CLAIM_IDS, claimed_privacy, get_claim
from dpaudit.learners.losses import Loss, LossClass, SquaredLoss
from dpaudit.learners.pocp import (PGIGA, PIGD, POCP, Version, pgiga_beta, pigd_beta, pocp_beta,
                                   pocp_c)
from dpaudit.learners.pocp_doubling import POCPDoubling, doubling_beta
from dpaudit.learners.pol import POL, pol_alpha, pol_beta, pol_printed_sensitivity
from dpaudit.learners.pqftl import PQFTL, pqftl_sigmas
from dpaudit.learners.private_sum import (PrivateSum, private_sum_sigma, released_node_count,
                                          released_noise_matrix, tree_depth)
from dpaudit.learners.qftl import QFTL

__all__ = ["AUDITORS", "SIMULATED_STEPS", "PAPER_PIGD_T", "PAPER_PQFTL_T", "near_linear_loss",
           "filler_loss", "pocp_qftl_lambda"]

#: Steps simulated with the learner itself before the closed-form continuation of the fillers.
SIMULATED_STEPS = 512
#: Forest covertype (COLT App. G.2 / arXiv Sec. 5.2): 581,012 points, 10% held out for testing.
PAPER_PIGD_T = 522_911
#: Synthetic online linear regression (COLT App. G.1 / arXiv Sec. 5.1): T = 100,000, d = 10.
PAPER_PQFTL_T = 100_000
#: Scale of the near-linear emulation (nu^2 / alpha <= 1e-8).
NEAR_LINEAR_NU = 1e-4
#: The regression pair of the generic POCP audits: R and alpha (scale-free: only R^2/alpha enters).
QFTL_R, QFTL_ALPHA = 0.01, 1.0
#: Clipped steps composed exactly when a point's lower bound is refined (see ``_run_family``).
REFINED_CLIPPED_STEPS = 4096
#: Deltas of the privacy-curve figure.
CURVE_DELTAS = [10.0 ** -k for k in range(10, 0, -1)]


# ==================================================================================================
# Pairs
# ==================================================================================================


def near_linear_loss(d: int, G: float, ridge: float, sign: float, nu: float) -> SquaredLoss:
    """``1/2 (sign G/nu - <nu e_1, x>)^2 + ridge/2 ||x||^2``.

    Up to a constant and O(nu^2) terms this is ``-sign G x_1 + ridge/2 ||x||^2``.
    """
    v = np.zeros(d)
    v[0] = nu
    return SquaredLoss(v, sign * G / nu, ridge)


def filler_loss(d: int, ridge: float) -> SquaredLoss:
    """``ridge/2 ||x||^2`` (``SquaredLoss(0, 0, ridge)``): keeps a difference alive, adds none."""
    return SquaredLoss(np.zeros(d), 0.0, ridge)


def _pair(T: int, position: int, loss0: Loss, loss1: Loss, filler: Loss) -> tuple[list, list]:
    s0 = [filler] * T
    s1 = [filler] * T
    s0[position] = loss0
    s1[position] = loss1
    return s0, s1


def pocp_qftl_lambda(R: float, alpha: float) -> float:
    """lambda_A of QFTL on the regression class ``|y|, ||v|| <= R`` (assumption (1)).

    With A_t = t alpha I + V_t:
    x_{t+1} - x'_{t+1} = A_t^{-1} [(u_t - u'_t) + (V'_t - V_t) x'_{t+1}],
    ||A_t^{-1}|| <= 1/(t alpha), ||u_t - u'_t|| <= 2R^2, ||V_t - V'_t|| <= R^2 and
    ||x'_{t+1}|| <= t R^2/(t alpha), so S(QFTL, t) <= (2R^2/alpha)(1 + R^2/(2 alpha)) / t.
    """
    return 2.0 * R * R / alpha * (1.0 + R * R / (2.0 * alpha))


def _first_coordinates(factory: Callable[[], Any], stream: Sequence[Loss], T: int,
                       ratio: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """x_{t+1}[0] for t = 1..T-1: the learner for min(T, SIMULATED_STEPS) rows, then the filler map.

    ``ratio(t)`` is the closed form x_{t+1} = ratio(t) x_t of the filler step at round t.
    """
    n_sim = min(T, SIMULATED_STEPS)
    xs = factory().run(list(stream[:n_sim]), 1, np.random.default_rng(0))[0, :, 0]
    out = np.empty(T - 1)
    out[: n_sim - 1] = xs[1:n_sim]
    if T > n_sim:
        t = np.arange(n_sim, T, dtype=float)
        out[n_sim - 1:] = xs[n_sim - 1] * np.cumprod(ratio(t))
    return out


# ==================================================================================================
# The model of one grid point of a POCP-type claim, and its evaluation
# ==================================================================================================


@dataclass
class _Model:
    """Everything the four kinds of evidence need at one grid point of a Gaussian-release claim.

    ``steps``: the rounds t whose release x^_{t+1} (row t of the released trajectory) is noisy;
    ``sigmas``: their noise stds; ``m0``/``m1``: first coordinate of the noise-free x_{t+1} on the
    two streams; ``bound``: the worst-case sensitivity of those steps (for the accountant; only
    ``accountant_mu`` is used when given); ``half_width``: D of the box C (None: C = R^d).
    """

    params: dict[str, Any]
    claimed: tuple[float, float]
    steps: np.ndarray
    sigmas: np.ndarray
    m0: np.ndarray
    m1: np.ndarray
    half_width: float | None
    accountant_mu: float
    accountant_note: str
    factory: Callable[[], Any] | None = None
    streams: tuple[Any, Any] | None = None
    noise_name: str = "beta"
    noise_value: float = math.nan
    evidence: dict[str, Any] = field(default_factory=dict)
    output: str = "trajectory"  # or "point" (POL: one released point)
    search_pairs: list[tuple[Any, Any]] | None = None


def _json(x: float | None) -> float | str | None:
    if x is None:
        return None
    return float(x) if math.isfinite(x) else ("inf" if x > 0 else "-inf")


def _exact_point(model: _Model, max_clipped: int) -> tuple[GridPoint, dict[str, Any]]:
    eps_c, delta_c = model.claimed
    ex = release_epsilon(model.m0, model.m1, model.sigmas, delta_c, model.half_width,
                         max_clipped_steps=max_clipped)
    eps_acc = gaussian_epsilon(model.accountant_mu, delta_c) if model.accountant_mu > 0 else 0.0
    evidence = dict(model.evidence)
    evidence.update({
        "exact_release": ex.to_dict(),
        "accountant": {"mu": model.accountant_mu, "epsilon": eps_acc,
                       "sensitivity": model.accountant_note},
        model.noise_name: model.noise_value,
        "noisy_steps": int(len(model.steps)),
        "box_half_width": model.half_width,
    })
    point = GridPoint(model.params, eps_c, delta_c, epsilon_exact=ex.lower,
                      epsilon_accountant=eps_acc, evidence=evidence)
    return point, {"exact": ex}


def _lr_statistic(model: _Model) -> Callable[[np.ndarray], np.ndarray]:
    """Projection of the noisy outputs on the mean shift, weighted by 1 / sigma_t^2."""
    w = (model.m0 - model.m1) / model.sigmas ** 2
    if model.output == "point":
        return lambda y: np.asarray(y)[:, 0] * float(w[0])
    rows = model.steps.astype(int)
    return lambda y: np.asarray(y)[:, rows, 0] @ w


def _seed(ctx: AuditContext, claim_id: str, index: int, salt: int = 0) -> int:
    return int(ctx.rng(claim_id, index, salt).integers(0, 2 ** 62))


def _empirical(model: _Model, ctx: AuditContext, claim_id: str, index: int,
               samples: int) -> Any:
    if model.factory is None or model.streams is None:
        return None
    eps_c, delta_c = model.claimed
    return dpaudit.audit(_mechanism(model), model.streams[0], model.streams[1], epsilon=eps_c,
                         delta=delta_c, samples=samples, alpha=ctx.alpha,
                         seed=_seed(ctx, claim_id, index, 1), statistic=_lr_statistic(model))


def _mechanism(model: _Model) -> Callable[[Any, int, np.random.Generator], np.ndarray]:
    factory = model.factory
    assert factory is not None
    if model.output == "point":
        return lambda data, n, rng: factory().sample(data, n, rng)
    return lambda data, n, rng: factory().run(data, n, rng)


def _search(model: _Model, ctx: AuditContext, claim_id: str, index: int, samples: int) -> Any:
    """The engine's candidate-pair search with its own (learned) statistic."""
    if model.factory is None or not model.search_pairs:
        return None
    eps_c, delta_c = model.claimed
    return dpaudit.audit(_mechanism(model), pairs=model.search_pairs, epsilon=eps_c, delta=delta_c,
                         samples=samples, alpha=ctx.alpha, seed=_seed(ctx, claim_id, index, 2))


def _privacy_curve(model: _Model, eps_lb: float | None, max_clipped: int) -> dict[str, Any]:
    eps_c, delta_c = model.claimed
    curve = release_epsilon_curve(model.m0, model.m1, model.sigmas, CURVE_DELTAS,
                                  model.half_width, max_clipped_steps=max_clipped)
    acc = [gaussian_epsilon(model.accountant_mu, d) if model.accountant_mu > 0 else 0.0
           for d in CURVE_DELTAS]
    return {"deltas": CURVE_DELTAS, "epsilon_accountant": acc,
            "epsilon_exact": [c.lower for c in curve],
            "epsilon_exact_unprojected": [c.upper for c in curve],
            "claimed": [eps_c, delta_c],
            "lower_bound": None if eps_lb is None else [eps_lb, delta_c],
            "parameters": dict(model.params)}


def _recommendation(model: _Model) -> str | None:
    """The dp-accounting calibration that delivers the claim at this point (scale of the noise)."""
    eps_c, delta_c = model.claimed
    if model.accountant_mu <= 0 or not (0 < delta_c < 1):
        return None
    z = calibrate_gaussian_noise_multiplier(eps_c, delta_c, 1)
    factor = model.accountant_mu * z
    if factor <= 1.0:
        return None
    return (f"At ({format_parameters(model.params)}): multiply the printed noise by {factor:.4g} "
            f"({model.noise_name} = {model.noise_value * factor:.6g} instead of "
            f"{model.noise_value:.6g}) to make the release ({eps_c:.4g}, {delta_c:.3g})-DP under "
            "the "
            f"worst-case sensitivity ({model.accountant_note}); calibrated with "
            f"dp_accounting.mechanism_calibration (noise multiplier {z:.6g} for one Gaussian "
            f"release of unit shift).")


# ==================================================================================================
# Lemma checks
# ==================================================================================================


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


def _lemma1_ratio(mu_step: float, eps_step: float, delta_step: float) -> float:
    """Exact epsilon(delta_step) of one step with shift mu_step, over the claimed eps_step."""
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


# ==================================================================================================
# Driver
# ==================================================================================================


@dataclass
class _Family:
    """How to audit one claim: its grid, point models, lemma checks and findings."""

    claim_id: str
    grid: Callable[[str], list[dict[str, Any]]]
    model: Callable[[dict[str, Any], int], _Model | None]
    lemmas: _LemmaFn
    max_clipped: Callable[[str], int] = lambda grid: 256
    extra: Callable[[AuditContext, list[GridPoint]], list[str]] | None = None
    skip_reason: str = "the claim is vacuous there"


def _worst_index(points: list[GridPoint]) -> int:
    bad = [i for i, p in enumerate(points) if p.counterexample() is not None]
    pool = bad or list(range(len(points)))
    return max(pool, key=lambda i: points[i].worst_ratio())


def _run_family(fam: _Family, ctx: AuditContext) -> ClaimAudit:
    start = time.perf_counter()
    claim = get_claim(fam.claim_id)
    grid = fam.grid(ctx.budget.grid)
    total = len(grid) + 3
    points: list[GridPoint] = []
    models: list[_Model | None] = []
    findings: list[str] = []
    max_clipped = fam.max_clipped(ctx.budget.grid)
    for i, params in enumerate(grid):
        ctx.progress(i, total, f"{fam.claim_id}: exact {params}")
        model = fam.model(params, ctx.budget.max_T)
        models.append(model)
        if model is None:
            findings.append(f"Point ({format_parameters(params)}) skipped: {fam.skip_reason}.")
            continue
        point, _ = _exact_point(model, max_clipped)
        rel = point.evidence["exact_release"]
        if (rel["dropped_steps"] and point.counterexample() is None
                and max(rel["upper"], point.epsilon_accountant or 0.0) > point.claimed_epsilon):
            # A point that decides between "violated" and "inconclusive": compose every clipped
            # step (up to REFINED_CLIPPED_STEPS) in the lower bound.
            point, _ = _exact_point(model, REFINED_CLIPPED_STEPS)
        points.append(point)
    kept = [m for m in models if m is not None]
    # Empirical evidence: the worst point among those with T <= max_T (and a second, different one
    # when the budget is not "coarse").
    ctx.progress(len(grid), total, f"{fam.claim_id}: empirical")
    figures: dict[str, Any] = {}
    candidates = [i for i, m in enumerate(kept) if m.streams is not None]
    n_emp = 1 if ctx.budget.grid == "coarse" else 2
    order = sorted(candidates, key=lambda i: -points[i].worst_ratio())[:n_emp]
    for rank, i in enumerate(order):
        model = kept[i]
        res = _empirical(model, ctx, fam.claim_id, i, ctx.budget.samples)
        if res is None:
            continue
        ev = dict(points[i].evidence)
        ev["empirical"] = {k: v for k, v in res.to_dict().items() if k != "histogram"}
        points[i] = GridPoint(points[i].parameters, points[i].claimed_epsilon,
                              points[i].claimed_delta, points[i].epsilon_exact,
                              points[i].epsilon_accountant, res.epsilon_lower_bound, ev)
        if rank == 0:
            hist = dict(res.histogram)
            hist["parameters"] = dict(model.params)
            hist["statistic"] = "likelihood ratio: mean-shift projection weighted by 1/sigma_t^2"
            figures["histogram"] = hist
            found = _search(model, ctx, fam.claim_id, i, ctx.budget.samples)
            if found is not None:
                ev["empirical_search"] = {
                    "epsilon_lower_bound": found.epsilon_lower_bound,
                    "pair_index": found.pair_index, "pilot_samples": found.pilot_samples,
                    "pilot": [dict(x) for x in found.pilot],
                    "statistic": dict(found.statistic),
                    "pairs": "replaced round: " + ", ".join(
                        str(x) for x in model.evidence.get("search_positions", []))}
                findings.append(f"Candidate-pair search at ({format_parameters(model.params)}) "
                                f"(engine statistic, "
                                f"{len(model.search_pairs or [])} pairs): lower bound "
                                f"{found.epsilon_lower_bound:.4g} (structured pair with the "
                                f"likelihood-ratio statistic: {res.epsilon_lower_bound:.4g}).")
                # Reported next to the structured pair's bound, not merged with it: each is a
                # separate (1 - alpha) statement.
                points[i] = GridPoint(points[i].parameters, points[i].claimed_epsilon,
                                      points[i].claimed_delta, points[i].epsilon_exact,
                                      points[i].epsilon_accountant, res.epsilon_lower_bound, ev)
        upper = ev["exact_release"]["upper"]
        if res.epsilon_lower_bound > upper * (1 + 1e-9) + 1e-12:
            findings.append(f"INCONSISTENCY at ({format_parameters(model.params)}): empirical "
                            f"lower bound "
                            f"{res.epsilon_lower_bound:.4g} exceeds the exact epsilon {upper:.4g} "
                            "of the unprojected release (the code is not the mechanism analysed).")
    ctx.progress(len(grid) + 1, total, f"{fam.claim_id}: sensitivity lemmas")
    lemmas, trace, lemma_findings = fam.lemmas(ctx)
    findings.extend(lemma_findings)
    if trace is not None:
        figures["sensitivity"] = trace
    recommended = None
    if points:
        w = _worst_index(points)
        model = kept[w]
        emp = points[w].epsilon_lower_bound
        figures["privacy_curve"] = _privacy_curve(model, emp, max_clipped)
        wp = points[w]
        findings.insert(0, _summary(fam.claim_id, points, wp))
        # Cross-check of the closed form with dp-accounting's PLD at the worst point.
        mu = wp.evidence["exact_release"]["mu_unclipped"]
        if mu > 0:
            findings.append(_cross_check(mu, wp.claimed_delta))
        if any(p.counterexample() is not None or (p.epsilon_accountant or 0) > p.claimed_epsilon
               for p in points):
            recommended = _recommendation(model)
    if fam.extra is not None:
        findings.extend(fam.extra(ctx, points))
    ctx.progress(total, total, f"{fam.claim_id}: done")
    return ClaimAudit(claim=claim, points=points, lemmas=lemmas, findings=findings,
                      recommended_calibration=recommended, figures=figures, seed=ctx.seed,
                      budget=ctx.budget.name, alpha=ctx.alpha,
                      seconds=time.perf_counter() - start,
                      reproduce=f"dpaudit audit {fam.claim_id} --budget {ctx.budget.name} "
                                f"--seed {ctx.seed}")


def _cross_check(mu: float, delta: float) -> str:
    """Closed-form Gaussian epsilon vs dp-accounting's PLD (grid coarsened for large mu)."""
    interval = 1e-4 * max(1.0, mu * mu / 4.0)
    pld = gaussian_epsilon_pld(mu, delta, value_discretization_interval=interval)
    return (f"Cross-check at the worst point (mu = {mu:.6g}, delta = {delta:.3g}): closed-form "
            f"Gaussian epsilon {gaussian_epsilon(mu, delta):.6g} vs dp-accounting PLD {pld:.6g} "
            f"(grid {interval:.2g}).")


def _fmt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.4g}"


def _summary(claim_id: str, points: list[GridPoint], worst: GridPoint) -> str:
    ratios_exact = [p.epsilon_exact / p.claimed_epsilon for p in points
                    if p.epsilon_exact is not None]
    ratios_acc = [p.epsilon_accountant / p.claimed_epsilon for p in points
                  if p.epsilon_accountant is not None]
    n_bad = sum(p.counterexample() is not None for p in points)
    parts = [f"{claim_id}: {len(points)} grid points, {n_bad} with a formal or statistical "
             "counterexample;"]
    if ratios_exact:
        parts.append(f"exact/claimed in [{min(ratios_exact):.3g}, {max(ratios_exact):.3g}];")
    if ratios_acc:
        parts.append(f"accountant/claimed in [{min(ratios_acc):.3g}, {max(ratios_acc):.3g}].")
    parts.append(f"Worst point ({format_parameters(worst.parameters)}): claimed "
                 f"{_fmt(worst.claimed_epsilon)}, exact {_fmt(worst.epsilon_exact)}, accountant "
                 f"{_fmt(worst.epsilon_accountant)}, empirical lower bound "
                 f"{_fmt(worst.epsilon_lower_bound)}.")
    return " ".join(parts)


# ==================================================================================================
# POCP generic (Algorithm 1, Theorem 1) and the doubling variant (Algorithm 7, Theorem 13)
# ==================================================================================================


def _qftl_ratio(t: np.ndarray) -> np.ndarray:
    # x_{t+1} = u_1 / (t alpha + R^2) once only fillers follow the change at round 1.
    return ((t - 1.0) * QFTL_ALPHA + QFTL_R ** 2) / (t * QFTL_ALPHA + QFTL_R ** 2)


def _qftl_pair(d: int, T: int, position: int = 0) -> tuple[list, list]:
    v = np.zeros(d)
    v[0] = QFTL_R
    return _pair(T, position, SquaredLoss(v, QFTL_R, QFTL_ALPHA),
                 SquaredLoss(v, -QFTL_R, QFTL_ALPHA), filler_loss(d, QFTL_ALPHA))


def _search_positions(T: int, first: int = 0) -> list[int]:
    """0-based replaced positions of the candidate-pair search: first, middle, last useful."""
    return sorted({first, max(first, T // 2), max(first, T - 2)})


def _qftl_means(d: int, T: int) -> tuple[np.ndarray, np.ndarray]:
    s0, s1 = _qftl_pair(d, T)
    factory = lambda: QFTL(d, QFTL_ALPHA)  # noqa: E731
    return (_first_coordinates(factory, s0, T, _qftl_ratio),
            _first_coordinates(factory, s1, T, _qftl_ratio))


def _pocp_grid(grid: str) -> list[dict[str, Any]]:
    if grid == "coarse":
        return [dict(epsilon=1e-3, delta=1e-5, T=64, d=1),
                dict(epsilon=0.01, delta=1e-5, T=64, d=1),
                dict(epsilon=1.0, delta=1e-5, T=64, d=2), dict(epsilon=1.0, delta=1e-5, T=2, d=1),
                dict(epsilon=1000.0, delta=1e-5, T=64, d=1),
                dict(epsilon=1000.0, delta=0.01, T=1024, d=1),
                dict(epsilon=0.1, delta=0.01, T=PAPER_PQFTL_T, d=1)]
    eps = [1e-3, 1e-2, 0.1, 1.0, 10.0, 100.0, 1000.0]
    return [dict(epsilon=e, delta=dl, T=T, d=d) for e in eps for dl in (1e-6, 1e-5, 1e-2)
            for T in (2, 16, 64, 1024, PAPER_PQFTL_T) for d in (1, 4)]


def _pocp_model(version: Version) -> Callable[[dict[str, Any], int], _Model]:
    def model(p: dict[str, Any], max_T: int) -> _Model:
        eps, dl, T, d = p["epsilon"], p["delta"], p["T"], p["d"]
        lam = pocp_qftl_lambda(QFTL_R, QFTL_ALPHA)
        beta = pocp_beta(version, T, lam, eps, dl)
        t = np.arange(1, T, dtype=float)
        m0, m1 = _qftl_means(d, T)
        sig = beta / t
        mu_acc = heterogeneous_gaussian_mu(lam / t, sig)
        streams = _qftl_pair(d, T) if T <= max_T else None
        positions = _search_positions(T)
        search = [_qftl_pair(d, T, k) for k in positions] if T <= max_T else None
        return _Model(dict(p, lambda_A=lam, c=pocp_c(version, T, eps, dl)),
                      claimed_privacy(f"jkt12-{version}/pocp", eps, dl), t, sig, m0, m1, None,
                      mu_acc, "assumption (1) with equality: lambda_A / t at every t",
                      lambda: POCP(QFTL(d, QFTL_ALPHA), None, T, eps, dl, lam, version,
                                   x1_hat=np.zeros(d)),
                      streams, "beta", beta,
                      {"pair": f"QFTL on C = R^d, f_1 = 1/2(+-R - <R e_1, x>)^2 + alpha/2||x||^2, "
                               f"R = {QFTL_R}, alpha = {QFTL_ALPHA}, fillers alpha/2||x||^2",
                       "search_positions": [k + 1 for k in positions]},
                      search_pairs=search)
    return model


def _pocp_lemmas(version: Version, step_ratio: Callable[[dict[str, Any]], float],
                 grid: Callable[[str], list[dict[str, Any]]], statement: str
                 ) -> _LemmaFn:
    """Assumption (1) for QFTL (Hypothesis) and the per-step privacy lemma (exact over the grid)."""

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
                                    seed=_seed(ctx, "lemma-qftl", j))
            reports.append((f"QFTL, d={d}, R={R}, alpha={alpha}", rep))
        stmt_a = ("Assumption (1) instantiated for QFTL on |y|, ||v|| <= R: "
                  "||x_{t+1} - x'_{t+1}|| <= (2R^2/alpha)(1 + R^2/(2 alpha)) / t (derived bound)")
        checks = [_merge_reports(stmt_a, reports)]
        ratios = [(p, step_ratio(p)) for p in grid(ctx.budget.grid)]
        checks.append(_exact_lemma(statement, ratios,
                                   "exact Gaussian epsilon of one step at the printed noise"))
        trace = _sens_trace([(stmt_a, lab, r) for lab, r in reports])
        return checks, trace, []
    return lemmas


def _pocp_family(version: Version) -> _Family:
    def per_step(p: dict[str, Any]) -> float:
        eps, dl, T = p["epsilon"], p["delta"], p["T"]
        c = pocp_c(version, T, eps, dl)
        beta = pocp_beta(version, T, 1.0, eps, dl)
        return _lemma1_ratio(1.0 / beta, math.sqrt(eps) / T ** (0.5 + c), dl / T)

    stmt = ("Lemma 1: with ||x_{t+1} - x'_{t+1}|| = lambda_A/t and the printed beta, one noisy "
            "output is (sqrt(eps)/T^{0.5+c}, delta/T)-DP")
    return _Family(f"jkt12-{version}/pocp", _pocp_grid, _pocp_model(version),
                   _pocp_lemmas(version, per_step, _pocp_grid, stmt))


def _doubling_grid(grid: str) -> list[dict[str, Any]]:
    if grid == "coarse":
        return [dict(epsilon=0.1, delta=1e-5, T=64, d=1), dict(epsilon=1.0, delta=1e-5, T=64, d=2),
                dict(epsilon=1.0, delta=1e-5, T=2, d=1),
                dict(epsilon=1000.0, delta=1e-5, T=64, d=1),
                dict(epsilon=1000.0, delta=0.01, T=1024, d=1),
                dict(epsilon=0.5, delta=1e-6, T=PAPER_PQFTL_T, d=1)]
    return [dict(epsilon=e, delta=dl, T=T, d=d) for e in (0.05, 0.1, 0.5, 1.0, 10.0, 1000.0)
            for dl in (1e-6, 1e-5, 1e-3) for T in (2, 16, 64, 1024, PAPER_PQFTL_T) for d in (1, 4)]


def _doubling_model(p: dict[str, Any], max_T: int) -> _Model | None:
    eps, dl, T, d = p["epsilon"], p["delta"], p["T"], p["d"]
    claimed = claimed_privacy("jkt12-colt/pocp-doubling", eps, dl, T)
    if claimed[1] >= 1.0:
        return None
    lam = pocp_qftl_lambda(QFTL_R, QFTL_ALPHA)
    t = np.arange(1, T)
    k = np.floor(np.log2(t)).astype(int)
    per_k = np.array([doubling_beta(2 ** j, lam, eps, dl) for j in range(int(k.max()) + 1)])
    betas = per_k[k]
    m0, m1 = _qftl_means(d, T)
    sig = betas / t
    mu_acc = heterogeneous_gaussian_mu(lam / t, sig)
    streams = _qftl_pair(d, T) if T <= max_T else None
    positions = _search_positions(T)
    search = [_qftl_pair(d, T, k) for k in positions] if T <= max_T else None
    return _Model(dict(p, lambda_A=lam), claimed, t.astype(float), sig, m0, m1, None, mu_acc,
                  "assumption (1) with equality: lambda_A / t at every t",
                  lambda: POCPDoubling(QFTL(d, QFTL_ALPHA), None, lam, eps, dl, x1_hat=np.zeros(d)),
                  streams, "beta_1", float(betas[0]),
                  {"pair": f"QFTL on C = R^d, R = {QFTL_R}, alpha = {QFTL_ALPHA} (as for POCP)",
                   "search_positions": [k + 1 for k in positions]},
                  search_pairs=search)


def _doubling_family() -> _Family:
    def per_step(p: dict[str, Any]) -> float:
        # Every block k = floor(log2 t) of the rounds t = 1..T-1 has its own per-step budget.
        eps, dl, T = p["epsilon"], p["delta"], p["T"]
        return max(_lemma1_ratio(1.0 / doubling_beta(2 ** k, 1.0, eps, dl),
                                 math.sqrt(eps / 2 ** k), dl / 2 ** k)
                   for k in range((T - 1).bit_length()))

    stmt = ("App. F: step t is (sqrt(eps/2^k), delta/2^k)-DP at the printed beta_t, "
            "k = floor(log2 t)")
    return _Family("jkt12-colt/pocp-doubling", _doubling_grid, _doubling_model,
                   _pocp_lemmas("colt", per_step, _doubling_grid, stmt),
                   skip_reason="the claimed delta is >= 1 (a vacuous claim)")


# ==================================================================================================
# PIGD (Algorithm 2; Theorem 7 COLT / Theorem 3 arXiv)
# ==================================================================================================


def _igd_design(L: float, alpha: float, d: int, nu: float, tau: int) -> tuple[float, float]:
    """Box half-width D and linear coefficient G of a replaced loss at round ``tau``.

    With x_tau = 0 (fillers before), the implicit step on ``-+G x_1 + alpha/2||x||^2`` moves
    x_{tau+1} = +-G/(alpha (tau+1)) e_1 (up to O(nu^2)). Putting x_{tau+1} on the boundary of
    [-D, D]^d while the replaced loss's Lipschitz constant G + (alpha + nu^2) sqrt(d) D over the
    box equals the declared L gives D = L / (alpha (tau+1) + (alpha + nu^2) sqrt(d)),
    G = alpha (tau+1) D. The later shift is 2D (tau+1)/(t+1) at x_{t+1} (fillers contract by
    t/(t+1)), so a late change trades horizon for a G closer to L.
    """
    D = L / (alpha * (tau + 1) + (alpha + nu * nu) * math.sqrt(d))
    return D, alpha * (tau + 1) * D


def _clip_aware_score(m: np.ndarray, sigmas: np.ndarray, D: float) -> float:
    """sum_t (2 m_t / sigma_t)^2 P(no clipping at mean m_t): a proxy for the released information."""
    from scipy.special import ndtr

    keep = ndtr((D - m) / sigmas) - ndtr((-D - m) / sigmas)
    return float(np.sum((2.0 * m / sigmas) ** 2 * keep))


def _candidate_rounds(first: int, T: int) -> np.ndarray:
    """Replaced rounds tried by the pair designs: log-spaced in [first, min(T-1, window-1)]."""
    last = min(T - 1, SIMULATED_STEPS - 1)
    if last < first:
        return np.array([], dtype=int)
    return np.unique(np.round(np.geomspace(first, last, 24)).astype(int))


def _best_igd_round(L: float, alpha: float, d: int, nu: float, T: int, beta: float) -> int:
    """The replaced round tau whose design keeps the most information after clipping.

    For the design of :func:`_igd_design` the noise-free shift is m_{t+1} = D (tau+1)/(t+1) for
    t >= tau and the noise std is beta/t; the score is :func:`_clip_aware_score`.
    """
    t = np.arange(1, T, dtype=float)
    best, best_tau = -1.0, 1
    for tau in _candidate_rounds(1, T):
        D, _ = _igd_design(L, alpha, d, nu, int(tau))
        tt = t[tau - 1:]
        score = _clip_aware_score(D * (tau + 1) / (tt + 1), beta / tt, D)
        if score > best:
            best, best_tau = score, int(tau)
    return best_tau


def _pigd_grid(grid: str) -> list[dict[str, Any]]:
    paper = [dict(epsilon=e, delta=0.01, T=PAPER_PIGD_T, alpha=1.0, L=1.0, d=54,
                  setting="paper G.2")
             for e in ((0.1, 20.0) if grid == "coarse" else (0.1, 1.0, 10.0, 20.0))]
    if grid == "coarse":
        return [dict(epsilon=1e-3, delta=1e-5, T=64, alpha=1.0, L=1.0, d=1),
                dict(epsilon=1.0, delta=1e-5, T=64, alpha=0.01, L=1.0, d=1),
                dict(epsilon=1.0, delta=1e-5, T=64, alpha=100.0, L=1.0, d=2),
                dict(epsilon=1.0, delta=1e-5, T=2, alpha=1.0, L=1.0, d=1),
                dict(epsilon=1000.0, delta=0.01, T=1024, alpha=1.0, L=1.0, d=1)] + paper
    return paper + [dict(epsilon=e, delta=dl, T=T, alpha=a, L=1.0, d=d)
                    for e in (1e-3, 0.1, 1.0, 20.0, 1000.0) for dl in (1e-5, 1e-2)
                    for T in (2, 64, 1024) for a in (0.01, 1.0, 100.0) for d in (1, 3)]


def _pigd_model(version: Version) -> Callable[[dict[str, Any], int], _Model]:
    def model(p: dict[str, Any], max_T: int) -> _Model:
        eps, dl, T, alpha, L, d = p["epsilon"], p["delta"], p["T"], p["alpha"], p["L"], p["d"]
        nu = NEAR_LINEAR_NU * min(1.0, math.sqrt(alpha))
        beta = pigd_beta(version, T, L, alpha, eps, dl)
        tau = _best_igd_round(L, alpha, d, nu, T, beta)
        D, G = _igd_design(L, alpha, d, nu, tau)
        box = Box(d, -D, D)
        lossm, lossp, fill = (near_linear_loss(d, G, alpha, -1.0, nu),
                              near_linear_loss(d, G, alpha, 1.0, nu), filler_loss(d, alpha))
        s0, s1 = _pair(T, tau - 1, lossm, lossp, fill)
        factory = lambda: IGD(box, alpha, np.zeros(d))  # noqa: E731
        ratio = lambda t: t / (t + 1.0)  # noqa: E731 - IGD on alpha/2||x||^2: x_{t+1} = t x_t/(t+1)
        m0 = _first_coordinates(factory, s0, T, ratio)
        m1 = _first_coordinates(factory, s1, T, ratio)
        t = np.arange(1, T, dtype=float)
        sig = beta / t
        # Correct worst-case sensitivity (Lemma 4's induction without slack): the implicit step of
        # an alpha-strongly convex function is a 1/(1 + eta alpha) = t/(t+1) contraction and a
        # replaced loss moves x_{t+1} by at most 2 L eta/(1 + eta alpha) = 2L/(alpha (t+1)).
        mu_acc = heterogeneous_gaussian_mu(2.0 * L / (alpha * (t + 1.0)), sig)
        streams = (s0, s1) if T <= max_T else None
        positions = _search_positions(T)
        search = [_pair(T, k, lossm, lossp, fill) for k in positions] if T <= max_T else None
        return _Model(dict(p, tau=tau, box_half_width=D),
                      claimed_privacy(f"jkt12-{version}/pigd", eps, dl),
                      t, sig, m0, m1, D, mu_acc, "2L/(alpha (t+1)) for x_{t+1} (tight Lemma 4)",
                      lambda: PIGD(box, T, L, alpha, eps, dl, version, np.zeros(d)),
                      streams, "beta", beta,
                      {"pair": f"f_tau = -+{G:.6g} x_1 + alpha/2||x||^2 at tau = {tau} (squared "
                               f"loss, nu = {nu:.1e}), fillers alpha/2||x||^2, "
                               f"C = [-{D:.6g}, {D:.6g}]^{d}",
                       "search_positions": [k + 1 for k in positions]},
                      search_pairs=search)
    return model


def _igd_lemma_classes(grid: str) -> list[tuple[str, LossClass]]:
    base = [("squared", Box(1, -1.0, 1.0), 2.0, 0.05), ("logistic", Ball(3, 1.0), 1.5, 1.0),
            ("hinge", Box(2, -1.0, 1.0), 3.0, 0.5)]
    if grid != "coarse":
        base += [("squared", Ball(2, 0.5), 1.0, 0.01), ("logistic", Box(1, -2.0, 2.0), 30.0, 10.0),
                 ("hinge", Ball(4, 1.0), 2.0, 1.5)]
    return [(f"{k}+ridge, {dom!r}, L={L}, alpha={a}", LossClass(k, dom, L, a))
            for k, dom, L, a in base]


def _pigd_lemmas(version: Version) -> _LemmaFn:
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
                                    seed=_seed(ctx, f"lemma-igd-{version}", j))
            reports.append((label, rep))
        checks = [_merge_reports(statement, reports)]
        ratios = []
        for p in _pigd_grid(ctx.budget.grid):
            eps, dl, T, L, alpha = p["epsilon"], p["delta"], p["T"], p["L"], p["alpha"]
            beta = pigd_beta(version, T, L, alpha, eps, dl)
            lam = 2 * L / alpha if colt else 2 * L
            c = pocp_c(version, T, eps, dl)
            ratios.append((p, _lemma1_ratio(lam / beta, math.sqrt(eps) / T ** (0.5 + c), dl / T)))
        checks.append(_exact_lemma(get_claim(f"jkt12-{version}/pigd").lemmas[1].statement, ratios,
                                   "exact Gaussian epsilon of one step at the printed noise"))
        trace = _sens_trace([(statement, lab, r) for lab, r in reports])
        return checks, trace, []
    return lemmas


def _pigd_family(version: Version) -> _Family:
    return _Family(f"jkt12-{version}/pigd", _pigd_grid, _pigd_model(version), _pigd_lemmas(version))


# ==================================================================================================
# PGIGA (Algorithm 3; Theorem 9 COLT / Theorem 5 arXiv)
# ==================================================================================================


def _pgiga_grid(grid: str) -> list[dict[str, Any]]:
    if grid == "coarse":
        return [dict(epsilon=1e-3, delta=1e-5, T=64, alpha=1.0, G=1.0, smoothness_ratio=1.0, d=1),
                dict(epsilon=1.0, delta=1e-5, T=64, alpha=0.01, G=1.0, smoothness_ratio=1.0, d=1),
                dict(epsilon=1.0, delta=1e-5, T=64, alpha=100.0, G=1.0, smoothness_ratio=2.0, d=2),
                dict(epsilon=1000.0, delta=1e-5, T=64, alpha=1.0, G=1.0, smoothness_ratio=1.0, d=1),
                dict(epsilon=1000.0, delta=0.01, T=1024, alpha=1.0, G=1.0, smoothness_ratio=1.0,
                     d=1),
                dict(epsilon=0.1, delta=0.01, T=PAPER_PQFTL_T, alpha=1.0, G=1.0,
                     smoothness_ratio=1.0, d=1)]
    return ([dict(epsilon=e, delta=dl, T=T, alpha=a, G=1.0, smoothness_ratio=1.0, d=1)
             for e in (1e-3, 0.1, 1.0, 20.0, 1000.0) for dl in (1e-5, 1e-2)
             for T in (16, 64, 1024, PAPER_PQFTL_T) for a in (0.01, 1.0, 100.0)]
            + [dict(epsilon=e, delta=1e-5, T=64, alpha=a, G=1.0, smoothness_ratio=r, d=3)
               for e in (1e-3, 1.0, 1000.0) for a in (0.01, 1.0, 100.0) for r in (1.0, 2.0)])


def _pgiga_accountant(T: int, t_q: int, G: float, alpha: float, beta: float) -> tuple[float, int]:
    """max over the replaced position tau >= t_q of the worst-case mu, and the maximiser.

    A loss replaced at round tau moves x_{tau+1} by at most eta_tau 2G = 4G/(alpha tau); a gradient
    step of an alpha-strongly convex L_G-smooth loss contracts by max(|1 - eta alpha|,
    |1 - eta L_G|) = 1 - 2/s for s >= t_q (since 2 L_G/(alpha s) <= alpha/L_G <= 1), so
    ||x_{t+1} - x'_{t+1}|| <= 4G (tau - 1)/(alpha (t - 1) t) for t >= tau, and with sigma_t = beta/t
    mu(tau)^2 = (4G (tau - 1)/(alpha beta))^2 sum_{j = tau-1}^{T-2} 1/j^2.
    """
    taus = np.arange(max(t_q, 2), T, dtype=float)
    if taus.size == 0:
        return 0.0, t_q
    j = np.arange(1, T - 1, dtype=float)
    tail = np.cumsum((1.0 / j ** 2)[::-1])[::-1]  # tail[k] = sum_{j >= k+1} 1/j^2 (j <= T-2)
    sums = tail[(taus - 2).astype(int)]
    mus = 4.0 * G * (taus - 1.0) / (alpha * beta) * np.sqrt(sums)
    k = int(np.argmax(mus))
    return float(mus[k]), int(taus[k])


def _pgiga_model(version: Version) -> Callable[[dict[str, Any], int], _Model | None]:
    def model(p: dict[str, Any], max_T: int) -> _Model | None:
        eps, dl, T, alpha, Gd, d = (p["epsilon"], p["delta"], p["T"], p["alpha"], p["G"], p["d"])
        nu = NEAR_LINEAR_NU * min(1.0, math.sqrt(alpha))
        smooth = p["smoothness_ratio"] * alpha + nu * nu
        t_q = giga_burn_in(alpha, smooth)
        if T - 1 < t_q:
            return None
        beta = pgiga_beta(version, T, Gd, alpha, eps, dl)
        mu_acc, tau_acc = _pgiga_accountant(T, t_q, Gd, alpha, beta)
        best: _Model | None = None
        # Replaced rounds: the two (of log-spaced candidates in the simulated window, where the
        # learner itself computes the changed step) that keep the most information after clipping.
        t_all = np.arange(1, T, dtype=float)

        def design(tau: int) -> tuple[float, float]:
            D = 2.0 * Gd / (alpha * tau + 2.0 * (alpha + nu * nu) * math.sqrt(d))
            return D, alpha * tau * D / 2.0

        def score(tau: int) -> float:
            D, _ = design(tau)
            tt = t_all[tau - 1:]  # x_{t+1} = D (tau-1) tau / ((t-1) t) for t >= tau >= t_q >= 2
            return _clip_aware_score(D * (tau - 1) * tau / ((tt - 1.0) * tt), beta / tt, D)

        taus = _candidate_rounds(t_q, T)
        ranked = sorted(taus, key=lambda k: -score(int(k)))[:2]
        for tau in sorted({int(k) for k in ranked}):
            # x_tau = 0 (burn-in at the fixed point 0 and fillers); the replaced loss moves
            # x_{tau+1} = +-2 G_g/(alpha tau) e_1, on the boundary of [-D, D]^d with
            # G_g + (alpha + nu^2) sqrt(d) D = G (the declared gradient bound over C).
            D, G = design(tau)
            box = Box(d, -D, D)
            s0, s1 = _pair(T, tau - 1, near_linear_loss(d, G, alpha, -1.0, nu),
                           near_linear_loss(d, G, alpha, 1.0, nu), filler_loss(d, alpha))
            factory = lambda box=box: GIGA(box, alpha, smooth, np.zeros(d))  # noqa: E731
            ratio = lambda t: 1.0 - 2.0 / t  # noqa: E731 - gradient step on alpha/2||x||^2
            m0 = _first_coordinates(factory, s0, T, ratio)[t_q - 1:]
            m1 = _first_coordinates(factory, s1, T, ratio)[t_q - 1:]
            t = np.arange(t_q, T, dtype=float)
            sig = beta / t
            cand = _Model(dict(p, tau=tau, t_q=t_q, box_half_width=D),
                          claimed_privacy(f"jkt12-{version}/pgiga", eps, dl), t, sig, m0, m1, D,
                          mu_acc, f"4G(tau-1)/(alpha(t-1)t) after a change at tau, worst tau = "
                                  f"{tau_acc}",
                          lambda box=box: PGIGA(box, T, Gd, alpha, smooth, eps, dl, version,
                                                np.zeros(d)),
                          (s0, s1) if T <= max_T else None, "beta", beta,
                          {"pair": f"f_tau = -+{G:.6g} x_1 + alpha/2||x||^2 at tau = {tau}, "
                                   f"fillers alpha/2||x||^2, C = [-{D:.6g}, {D:.6g}]^{d}, "
                                   f"t_q = {t_q}",
                           "search_positions": [k + 1 for k in _search_positions(T, t_q - 1)]},
                          search_pairs=[_pair(T, k, near_linear_loss(d, G, alpha, -1.0, nu),
                                              near_linear_loss(d, G, alpha, 1.0, nu),
                                              filler_loss(d, alpha))
                                        for k in _search_positions(T, t_q - 1)]
                          if T <= max_T else None)
            if best is None or heterogeneous_gaussian_mu(cand.m0 - cand.m1, cand.sigmas) > \
                    heterogeneous_gaussian_mu(best.m0 - best.m1, best.sigmas):
                best = cand
        return best
    return model


def _pgiga_lemmas(version: Version) -> _LemmaFn:
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
                seed=_seed(ctx, f"lemma-giga-{version}", j))
            reports.append((f"{kind}+ridge, {dom!r}, G={G}, alpha={alpha}, L_G={smooth:.4g}, "
                            f"t_q={t_q}", rep))
        checks = [_merge_reports(statement, reports)]
        ratios = []
        for p in _pgiga_grid(ctx.budget.grid):
            eps, dl, T, G, alpha = p["epsilon"], p["delta"], p["T"], p["G"], p["alpha"]
            beta = pgiga_beta(version, T, G, alpha, eps, dl)
            lam = 2 * G / alpha if version == "colt" else 2 * G
            c = pocp_c(version, T, eps, dl)
            ratios.append((p, _lemma1_ratio(lam / beta, math.sqrt(eps) / T ** (0.5 + c), dl / T)))
        checks.append(_exact_lemma(get_claim(f"jkt12-{version}/pgiga").lemmas[1].statement, ratios,
                                   "exact Gaussian epsilon of one step at the printed noise"))
        findings = ["GIGA's step eta_t = 2/(alpha t) moves x_{tau+1} by up to eta_tau * 2G = "
                    "4G/(alpha tau) when f_tau is replaced: Lemma 5's first case uses "
                    "1/(alpha tau)."]
        return checks, _sens_trace([(statement, lab, r) for lab, r in reports]), findings
    return lemmas


def _pgiga_family(version: Version) -> _Family:
    return _Family(f"jkt12-{version}/pgiga", _pgiga_grid, _pgiga_model(version),
                   _pgiga_lemmas(version),
                   skip_reason="T - 1 < t_q: every released point is a random burn-in point")


# ==================================================================================================
# POL (Algorithm 6; Theorem 5 COLT / Theorem 10 arXiv)
# ==================================================================================================


def _pol_grid(grid: str) -> list[dict[str, Any]]:
    if grid == "coarse":
        return [dict(epsilon_p=0.1, delta=1e-5, T=64, L=1.0, epsilon_g=0.1, x_star_norm=1.0, d=1),
                dict(epsilon_p=1.0, delta=1e-5, T=1024, L=1.0, epsilon_g=0.01, x_star_norm=1.0,
                     d=1),
                dict(epsilon_p=10.0, delta=1e-5, T=64, L=1.0, epsilon_g=1.0, x_star_norm=1.0, d=3),
                dict(epsilon_p=1.0, delta=0.01, T=PAPER_PIGD_T, L=1.0, epsilon_g=0.1,
                     x_star_norm=1.0, d=1)]
    return [dict(epsilon_p=e, delta=dl, T=T, L=1.0, epsilon_g=g, x_star_norm=1.0, d=d)
            for e in (1e-3, 0.1, 1.0, 10.0) for dl in (1e-5, 1e-2)
            for T in (2, 64, 1024, PAPER_PIGD_T)
            for g in (0.01, 0.1, 1.0) for d in (1, 3)]


def _pol_bounds(T: int, G: float, alpha: float, radius: float) -> tuple[np.ndarray, np.ndarray]:
    """Shift of x~ for a replaced round tau = 1..T-1 (worst case, up to the learner's exact value).

    A loss replaced at round tau moves x_{tau+1} by at most min(2G/(alpha (tau+1)), 2 radius)
    (Lemma 4's first case, capped by the diameter), and every later step contracts by t/(t+1), so
    ||x~ - x~'|| <= min(2G/alpha, 2 radius (tau+1)) (H_T - H_tau) / T.
    """
    taus = np.arange(1, T)
    H = np.concatenate([[0.0], np.cumsum(1.0 / np.arange(1, T + 1))])  # H[k] = sum_{j<=k} 1/j
    shift = np.minimum(2.0 * G / alpha, 2.0 * radius * (taus + 1)) * (H[T] - H[taus]) / T
    return taus, shift


def _pol_model(p: dict[str, Any], max_T: int) -> _Model:
    eps, dl, T, L, eg, xs, d = (p["epsilon_p"], p["delta"], p["T"], p["L"], p["epsilon_g"],
                                p["x_star_norm"], p["d"])
    D = xs / math.sqrt(d)  # box [-D, D]^d of radius ||x*||
    box = Box(d, -D, D)
    alpha = pol_alpha(eg, xs)
    nu = NEAR_LINEAR_NU * min(1.0, math.sqrt(alpha))
    G = L - nu * nu * xs  # the loss l has Lipschitz constant G + nu^2 ||C|| = L over C
    taus, shifts = _pol_bounds(T, G, alpha, xs)
    simulable = taus <= SIMULATED_STEPS - 1
    tau = int(taus[simulable][int(np.argmax(shifts[simulable]))])
    lossm, lossp, fill = (near_linear_loss(d, G, 0.0, -1.0, nu),
                          near_linear_loss(d, G, 0.0, 1.0, nu), filler_loss(d, 0.0))
    s0, s1 = _pair(T, tau - 1, lossm, lossp, fill)
    igd = lambda: IGD(box, alpha, np.zeros(d), extra_ridge=alpha)  # noqa: E731
    # IGD on alpha/2||x||^2 (the filler l = 0 plus POL's ridge): x_{t+1} = t x_t / (t+1).
    ratio = lambda t: t / (t + 1.0)  # noqa: E731
    means = []
    for s in (s0, s1):
        xt = _first_coordinates(igd, s, T, ratio)  # x_2..x_T
        means.append(np.array([xt.sum() / T]))  # x~ = (x_1 + ... + x_T)/T, x_1 = 0
    beta = pol_beta(T, L, alpha, xs, eps, dl)
    lp = L + alpha * xs
    _, worst = _pol_bounds(T, lp, alpha, xs)
    bound = float(worst.max())
    printed = pol_printed_sensitivity(T, L, alpha, xs)
    positions = sorted({0, tau - 1, T // 2, T - 1})
    return _Model(dict(p, alpha=alpha, tau=tau), claimed_privacy("jkt12-colt/pol", eps, dl),
                  np.array([T]), np.array([beta]), means[0], means[1], D, bound / beta,
                  "max over tau of min(2L'/alpha, 2||x*||(tau+1))(H_T - H_tau)/T, "
                  "L' = L + alpha ||x*||",
                  lambda: POL(d, T, L, eg, xs, eps, dl, box, np.zeros(d)),
                  (s0, s1) if T <= max_T else None, "beta", beta,
                  {"pair": f"l_tau = -+{G:.6g} x_1 at tau = {tau} (squared loss, nu = {nu:.1e}), "
                           f"l_t = 0 otherwise, C = [-{D:.6g}, {D:.6g}]^{d}",
                   "sensitivity": {"realised": float(abs(means[0][0] - means[1][0])),
                                   "printed": printed, "worst_case_bound": bound},
                   "search_positions": [k + 1 for k in positions]},
                  output="point",
                  search_pairs=[_pair(T, k, lossm, lossp, fill) for k in positions]
                  if T <= max_T else None)


def _pol_lemmas(version: Version) -> _LemmaFn:
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
                seed=_seed(ctx, f"lemma-pol-{version}", j))
            reports.append((f"{kind}, d={d}, L={L}, eps_g={eg}, alpha={alpha:g}", rep))
        findings = ["The printed sensitivity of x~ drops the 1/alpha of Lemma 4 (COLT) and bounds "
                    "sum_{t=2}^T 1/(t-1) = H_{T-1} by ln T; the correct bound is "
                    "2 L'(H_T - 1)/(alpha T)."]
        # The constructed pairs attain the shift of _pol_bounds (exactly with G = L - nu^2 ||x*||,
        # checked in the tests; the limit nu -> 0 is used here): shift / printed bound per point.
        ratios = []
        for p in _pol_grid(ctx.budget.grid):
            T, L, xs = p["T"], p["L"], p["x_star_norm"]
            alpha = pol_alpha(p["epsilon_g"], xs)
            _, shifts = _pol_bounds(T, L, alpha, xs)
            ratios.append((p, float(shifts.max()) / pol_printed_sensitivity(T, L, alpha, xs)))
        exact_check = _exact_lemma(statement + " [constructed pairs over the audit grid]", ratios,
                                   "||x~ - x~'|| of the constructed pair (nu -> 0) / printed bound")
        return ([_merge_reports(statement, reports), exact_check],
                _sens_trace([(statement, lab, r) for lab, r in reports]), findings)
    return lemmas


def _pol_family(version: Version) -> _Family:
    def model(p: dict[str, Any], max_T: int) -> _Model:
        m = _pol_model(p, max_T)
        m.claimed = claimed_privacy(f"jkt12-{version}/pol", p["epsilon_p"], p["delta"])
        return m
    return _Family(f"jkt12-{version}/pol", _pol_grid, model, _pol_lemmas(version),
                   max_clipped=lambda grid: 1)


# ==================================================================================================
# PrivateSum (Algorithm 5; Theorem 11 COLT / Theorem 9 arXiv) and PQFTL (Algorithm 4)
# ==================================================================================================


def _lr_weights_tree(horizon: int, shift: float) -> np.ndarray:
    """Sigma^{-1} Delta for the released prefix sums (per coordinate, up to 1/sigma^2)."""
    M, _ = released_noise_matrix(horizon)
    return np.linalg.solve(M @ M.T, np.full(horizon, shift))


def _tree_mu(horizon: int, shift: float, sigma: float) -> float:
    """Exact shift of the released prefix sums when w_1 moves by ``shift`` (node count)."""
    return shift * math.sqrt(released_node_count(1, horizon)) / sigma


def _privatesum_grid(grid: str) -> list[dict[str, Any]]:
    if grid == "coarse":
        return [dict(epsilon=1.0, delta=1e-5, T=2, R=1.0, d=1, log_reading="tree"),
                dict(epsilon=1.0, delta=1e-5, T=64, R=1.0, d=2, log_reading="tree"),
                dict(epsilon=0.01, delta=1e-5, T=64, R=1.0, d=1, log_reading="tree"),
                dict(epsilon=10.0, delta=1e-5, T=1024, R=5.0, d=1, log_reading="natural"),
                dict(epsilon=0.01, delta=1e-5, T=PAPER_PQFTL_T, R=1.0, d=10, log_reading="tree")]
    return [dict(epsilon=e, delta=dl, T=T, R=R, d=d, log_reading=lr)
            for e in (1e-3, 0.01, 0.1, 1.0, 10.0) for dl in (1e-6, 1e-5, 1e-2)
            for T in (2, 3, 8, 64, 1000, 1024, PAPER_PQFTL_T) for R in (1.0, 10.0) for d in (1, 3)
            for lr in ("tree", "natural")]


@dataclass
class _TreeModel:
    params: dict[str, Any]
    claimed: tuple[float, float]
    mu: float
    accountant_mu: float
    evidence: dict[str, Any]
    empirical: Callable[[AuditContext, str, int, int], Any] | None


def _tree_point(m: _TreeModel, exact_available: bool) -> GridPoint:
    eps_c, dl_c = m.claimed
    acc = gaussian_epsilon(m.accountant_mu, dl_c) if m.accountant_mu > 0 else 0.0
    ev = dict(m.evidence)
    ev["accountant"] = {"mu": m.accountant_mu, "epsilon": acc}
    if not exact_available:
        return GridPoint(m.params, eps_c, dl_c, None, acc, None, ev)
    exact = gaussian_epsilon(m.mu, dl_c) if m.mu > 0 else 0.0
    ev["exact_release"] = {"lower": exact, "upper": exact, "mu_unclipped": m.mu}
    return GridPoint(m.params, eps_c, dl_c, epsilon_exact=exact, epsilon_accountant=acc,
                     evidence=ev)


def _privatesum_model(version: Version) -> Callable[[dict[str, Any], int], _TreeModel]:
    def model(p: dict[str, Any], max_T: int) -> _TreeModel:
        eps, dl, T, R, d, lr = p["epsilon"], p["delta"], p["T"], p["R"], p["d"], p["log_reading"]
        sigma = private_sum_sigma(version, T, R, eps, dl, lr)
        mu = _tree_mu(T, 2.0 * R, sigma)
        ev: dict[str, Any] = {"sigma": sigma, "released_nodes_containing_w_1":
                              released_node_count(1, T), "tree_depth": tree_depth(T),
                              "pair": "w_1 = +-R e_1, w_t = 0 for t > 1 (||w_1 - w'_1|| = 2R)"}
        if T <= 256:
            # Cross-check the node-count formula with the whitened covariance of the release.
            c = _lr_weights_tree(T, 2.0 * R)
            ev["mu_whitened"] = math.sqrt(float(np.full(T, 2.0 * R) @ c)) / sigma
        emp = None
        if T <= max_T:
            w0 = np.zeros((T, d))
            w0[0, 0] = R
            w1 = -w0
            weights = _lr_weights_tree(T, 2.0 * R)

            def emp(ctx: AuditContext, claim_id: str, i: int, samples: int) -> Any:
                mech = PrivateSum(d, T, R, eps, dl, version, lr)
                return dpaudit.audit(mech, w0, w1, epsilon=eps, delta=dl, samples=samples,
                                     alpha=ctx.alpha, seed=_seed(ctx, claim_id, i, 1),
                                     statistic=lambda y: np.asarray(y)[:, :, 0] @ weights)
        return _TreeModel(dict(p), claimed_privacy(f"jkt12-{version}/privatesum", eps, dl), mu, mu,
                          ev, emp)
    return model


def _pqftl_grid(grid: str) -> list[dict[str, Any]]:
    if grid == "coarse":
        return [dict(epsilon=1.0, delta=1e-5, T=64, R=1.0, alpha=1.0, d=1, log_reading="tree"),
                dict(epsilon=0.01, delta=1e-5, T=64, R=1.0, alpha=1.0, d=2, log_reading="tree"),
                dict(epsilon=1.0, delta=1e-5, T=64, R=10.0, alpha=1.0, d=1, log_reading="tree"),
                dict(epsilon=0.01, delta=1e-5, T=PAPER_PQFTL_T, R=1.0, alpha=1.0, d=10,
                     log_reading="tree", setting="paper G.1"),
                dict(epsilon=1.0, delta=1e-5, T=3, R=1.0, alpha=1.0, d=1, log_reading="natural")]
    return [dict(epsilon=e, delta=dl, T=T, R=R, alpha=1.0, d=d, log_reading=lr)
            for e in (1e-3, 0.01, 0.1, 1.0, 10.0) for dl in (1e-5, 1e-2)
            for T in (3, 16, 64, 1024, PAPER_PQFTL_T) for R in (0.5, 1.0, 10.0) for d in (1, 3)
            for lr in ("tree", "natural")]


#: alpha used for PQFTL's empirical audit: t alpha I dominates the noise of V^_t, so the released
#: x^_{t+1} ~ u^_t / (t alpha) is nearly an invertible linear map of the u-tree's output.
PQFTL_EMPIRICAL_ALPHA = 1e9


def _pqftl_model(version: Version) -> Callable[[dict[str, Any], int], _TreeModel]:
    def model(p: dict[str, Any], max_T: int) -> _TreeModel:
        eps, dl, T, R, alpha, d, lr = (p["epsilon"], p["delta"], p["T"], p["R"], p["alpha"], p["d"],
                                       p["log_reading"])
        sV, su = pqftl_sigmas(version, T, R, eps, dl, lr)
        n = released_node_count(1, T - 1)
        dV = R * R * (math.sqrt(2.0) if d >= 2 else 1.0)
        # State (V^_t, u^_t)_{t <= T-1}: worst-case sensitivities 2R^2 (u) and dV (V), composed.
        acc = math.sqrt(n) * math.hypot(2.0 * R * R / su, dV / sV)
        flip = math.sqrt(n) * 2.0 * R * R / su  # y_1 = +-R, v_1 = R e_1: V identical
        mixed = (math.sqrt(n) * math.hypot(math.sqrt(2.0) * R * R / su, math.sqrt(2.0) * R * R / sV)
                 if d >= 2 else math.sqrt(n) * math.hypot(R * R / su, R * R / sV))
        ev = {"sigma_V": sV, "sigma_u": su, "released_nodes_containing_f_1": n,
              "state_epsilon": {"label flip": gaussian_epsilon(flip, dl),
                                "label and direction": gaussian_epsilon(mixed, dl)},
              "note": "the release x^ is a post-processing of the state (V^_t, u^_t): the state's "
                      "exact epsilon bounds the release from above; no exact value for x^ itself"}
        emp = None
        if T <= max_T:
            v = np.zeros(1)
            v[0] = R
            a_emp = PQFTL_EMPIRICAL_ALPHA
            s0, s1 = _pair(T, 0, SquaredLoss(v, R, a_emp), SquaredLoss(v, -R, a_emp),
                           filler_loss(1, a_emp))
            weights = _lr_weights_tree(T - 1, 2.0 * R * R) * a_emp * np.arange(1, T)

            def emp(ctx: AuditContext, claim_id: str, i: int, samples: int) -> Any:
                def mech(data: Any, nn: int, rng: np.random.Generator) -> np.ndarray:
                    return PQFTL(1, T, a_emp, R, eps, dl, version, lr).run(data, nn, rng)
                return dpaudit.audit(mech, s0, s1, epsilon=eps, delta=dl, samples=samples,
                                     alpha=ctx.alpha, seed=_seed(ctx, claim_id, i, 1),
                                     statistic=lambda y: np.asarray(y)[:, 1:, 0] @ weights)
            ev["empirical_pair"] = (f"d = 1, alpha = {a_emp:g}, y_1 = +-R, v_1 = R, fillers "
                                    "(y, v) = (0, 0)")
        # No exact value for the release: report the state's epsilon as the accountant only.
        return _TreeModel(dict(p), claimed_privacy(f"jkt12-{version}/pqftl", eps, dl), 0.0, acc,
                          ev, emp)
    return model


def _tree_lemmas(version: Version, claim: str) -> _LemmaFn:
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
                    examples=ex, seed=_seed(ctx, f"lemma-u-{version}", j))))
                v_reports.append((f"regression d={d}, R={R}", check_sensitivity(
                    prefix_sums(lambda l: np.outer(l.v, l.v).ravel()), lambda t, T, R=R: R * R, cls,
                    T=(1, 6), offset=0, examples=ex, seed=_seed(ctx, f"lemma-V-{version}", j))))
            checks.append(_merge_reports(c.lemmas[0].statement, u_reports))
            checks.append(_merge_reports(c.lemmas[1].statement, v_reports))
            traces += [(c.lemmas[0].statement, lab, r) for lab, r in u_reports]
        reports = []
        for j, (d, R) in enumerate([(1, 1.0), (3, 2.0)]):
            cls = LossClass("linear", Ball(d, 1.0), R)
            reports.append((f"w_t = g_t, ||g_t|| <= R, d={d}, R={R}", check_sensitivity(
                prefix_sums(lambda l: l.g), lambda t, T, R=R: R, cls, T=(1, 8), offset=0,
                examples=ex, seed=_seed(ctx, f"lemma-node-{version}", j))))
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


def _run_tree(claim_id: str, grid: Callable[[str], list[dict[str, Any]]],
              model: Callable[[dict[str, Any], int], _TreeModel],
              lemmas: _LemmaFn,
              ctx: AuditContext, exact_available: bool) -> ClaimAudit:
    start = time.perf_counter()
    claim = get_claim(claim_id)
    params = grid(ctx.budget.grid)
    total = len(params) + 3
    models, points = [], []
    for i, p in enumerate(params):
        ctx.progress(i, total, f"{claim_id}: exact {p}")
        m = model(p, ctx.budget.max_T)
        models.append(m)
        points.append(_tree_point(m, exact_available))
    ctx.progress(len(params), total, f"{claim_id}: empirical")
    figures: dict[str, Any] = {}
    findings: list[str] = []
    cands = [i for i, m in enumerate(models) if m.empirical is not None]
    n_emp = 1 if ctx.budget.grid == "coarse" else 2
    for rank, i in enumerate(sorted(cands, key=lambda i: -points[i].worst_ratio())[:n_emp]):
        res = models[i].empirical(ctx, claim_id, i, ctx.budget.samples)  # type: ignore[misc]
        ev = dict(points[i].evidence)
        ev["empirical"] = {k: v for k, v in res.to_dict().items() if k != "histogram"}
        p = points[i]
        points[i] = GridPoint(p.parameters, p.claimed_epsilon, p.claimed_delta, p.epsilon_exact,
                              p.epsilon_accountant, res.epsilon_lower_bound, ev)
        if rank == 0:
            hist = dict(res.histogram)
            hist["parameters"] = dict(p.parameters)
            hist["statistic"] = "likelihood ratio of the released prefix sums"
            figures["histogram"] = hist
        ref = p.epsilon_exact if p.epsilon_exact is not None else p.epsilon_accountant
        if ref is not None and res.epsilon_lower_bound > ref * (1 + 1e-9) + 1e-12:
            findings.append(f"INCONSISTENCY at ({format_parameters(p.parameters)}): empirical "
                            f"lower bound "
                            f"{res.epsilon_lower_bound:.4g} exceeds {ref:.4g}.")
    ctx.progress(len(params) + 1, total, f"{claim_id}: lemmas")
    checks, trace, lemma_findings = lemmas(ctx)
    findings.extend(lemma_findings)
    if trace is not None:
        figures["sensitivity"] = trace
    w = _worst_index(points)
    wp, wm = points[w], models[w]
    findings.insert(0, _summary(claim_id, points, wp))
    mu_ref = wm.mu if exact_available else wm.accountant_mu
    if mu_ref > 0:
        findings.append(_cross_check(mu_ref, wp.claimed_delta))
    acc_curve = [gaussian_epsilon(wm.accountant_mu, d) if wm.accountant_mu > 0 else 0.0
                 for d in CURVE_DELTAS]
    figures["privacy_curve"] = {
        "deltas": CURVE_DELTAS, "epsilon_accountant": acc_curve,
        "epsilon_exact": [gaussian_epsilon(wm.mu, d) for d in CURVE_DELTAS] if exact_available
        and wm.mu > 0 else None,
        "claimed": [wp.claimed_epsilon, wp.claimed_delta],
        "lower_bound": None if wp.epsilon_lower_bound is None
        else [wp.epsilon_lower_bound, wp.claimed_delta], "parameters": dict(wp.parameters)}
    recommended = None
    if wp.counterexample() is not None or (wp.epsilon_accountant or 0) > wp.claimed_epsilon:
        z = calibrate_gaussian_noise_multiplier(wp.claimed_epsilon, wp.claimed_delta, 1)
        factor = wm.accountant_mu * z
        nodes = wm.evidence.get("released_nodes_containing_w_1",
                                wm.evidence.get("released_nodes_containing_f_1"))
        recommended = (f"At ({format_parameters(wp.parameters)}): multiply every node's sigma by "
                       f"{factor:.4g} "
                       f"(dp_accounting.mechanism_calibration: noise multiplier {z:.6g} for one "
                       f"Gaussian release of unit shift; the release composes "
                       f"{nodes} "
                       f"nodes with the worst-case sensitivity of the replaced entry).")
    ctx.progress(total, total, f"{claim_id}: done")
    return ClaimAudit(claim=claim, points=points, lemmas=checks, findings=findings,
                      recommended_calibration=recommended, figures=figures, seed=ctx.seed,
                      budget=ctx.budget.name, alpha=ctx.alpha, seconds=time.perf_counter() - start,
                      reproduce=f"dpaudit audit {claim_id} --budget {ctx.budget.name} "
                                f"--seed {ctx.seed}")


# ==================================================================================================
# Registration
# ==================================================================================================


def _make_auditor(claim_id: str) -> Callable[[AuditContext], ClaimAudit]:
    tag, algo = claim_id.split("/")
    version: Version = "colt" if tag == "jkt12-colt" else "arxiv"
    if algo == "privatesum":
        def audit_fn(ctx: AuditContext) -> ClaimAudit:
            return _run_tree(claim_id, _privatesum_grid, _privatesum_model(version),
                             _tree_lemmas(version, claim_id), ctx, exact_available=True)
    elif algo == "pqftl":
        def audit_fn(ctx: AuditContext) -> ClaimAudit:
            return _run_tree(claim_id, _pqftl_grid, _pqftl_model(version),
                             _tree_lemmas(version, claim_id), ctx, exact_available=False)
    else:
        families: dict[str, Callable[[Version], _Family]] = {
            "pocp": _pocp_family, "pigd": _pigd_family, "pgiga": _pgiga_family, "pol": _pol_family}
        family = _doubling_family() if algo == "pocp-doubling" else families[algo](version)

        def audit_fn(ctx: AuditContext) -> ClaimAudit:
            return _run_family(family, ctx)
    audit_fn.__name__ = f"audit_{tag.replace('-', '_')}_{algo.replace('-', '_')}"
    audit_fn.__doc__ = f"Audit of claim {claim_id} (see the module docstring)."
    return audit_fn


#: Claim id -> audit function.
AUDITORS: dict[str, Callable[[AuditContext], ClaimAudit]] = {
    cid: _make_auditor(cid) for cid in CLAIM_IDS}

for _cid, _fn in AUDITORS.items():
    register(get_claim(_cid), _fn)
