"""The thirteen JKT12 claims as declarations over the one claim driver.

Jain, Kothari & Thakurta, *Differentially Private Online Learning*, COLT 2012 and arXiv versions:
each claim id of :data:`dpaudit.papers.jkt12.claims.CLAIM_IDS` is registered with a declaration
that :func:`dpaudit.claims.driver.run_claim` runs. A point's evidence (see ``README.md`` in
this folder for the reasoning):

1. **Exact** (formal): the worst realisable pair of :mod:`~dpaudit.papers.jkt12.pairs`, the
   learner's noise-free trajectories on both streams and the epsilon(delta) of the *released*
   outputs (:mod:`~dpaudit.papers.jkt12.exact`): exact Gaussian when nothing is projected, a
   rigorous lower bound (with the unprojected Gaussian as upper bound) when the noisy points are
   projected onto a box. Above the claim it is a proof that the claim fails.
2. **Accountant**: the epsilon of the implemented noise schedule under the worst-case sensitivity
   (derived per claim in :mod:`~dpaudit.papers.jkt12.plans`), an upper bound over the class.
3. **Empirical**: :func:`dpaudit.audit` with the likelihood-ratio statistic at the one ("coarse")
   or two points with the largest exact/accountant ratio and ``T <= max_T``, plus, at the first
   of them, a candidate-pair search with the engine's own statistic and (arXiv PIGD) a run with
   uniformly random starting points, each its own audited point.
4. **Lemmas** (:mod:`~dpaudit.papers.jkt12.lemmas`) and, for COLT's POCP exponent c, the proof's
   regime (:mod:`~dpaudit.papers.jkt12.regime`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from dpaudit.formal.accounting import calibrate_gaussian_noise_multiplier, gaussian_epsilon
from dpaudit.claims.evidence import (CERTIFIED, EXACT, EXACT_TOLERANCE, GridPoint,
                                     PointEvidence)
from dpaudit.claims.verdict import format_parameters
from dpaudit.claims.declaration import (AddedPoints, ClaimRun, Declaration, EmpiricalPlan,
                                        PointPlan, Skip)
from dpaudit.claims.context import coarse
from dpaudit.claims.formatting import fmt
from dpaudit.claims.evidence import LemmaOutcome
from dpaudit.claims.context import AuditContext, Budget
from dpaudit.claims.registry import register
from dpaudit.claims import PrivacyClaim
from dpaudit.learners.pocp import Version, pocp_c
from dpaudit.mechanisms.private_sum import private_sum_sigma
from dpaudit.papers.jkt12.claims import CLAIM_IDS, claimed_privacy, get_claim
from dpaudit.papers.jkt12.exact import (PLD_REL_ERROR, CURVE_DELTAS, cross_check, tree_mu, privatesum_step_mu,
                                        pqftl_state_mu, release_epsilon,
                                        release_epsilon_curve)
from dpaudit.papers.jkt12.smt_lemmas import smt_evidence
from dpaudit.papers.jkt12.lemmas import (instance_step_check, lemma1_ratio, pgiga_lemmas,
                                         pigd_lemmas, pocp_lemmas, pol_lemmas, exact_step_check,
                                         tree_lemmas)
from dpaudit.papers.jkt12.plans import (audit_point, pigd_accountant_only, doubling_grid, doubling_model, Family,
                                        Model, pgiga_grid, pgiga_model, pigd_grid,
                                        pigd_model, pocp_grid, pocp_model, pol_grid,
                                        pol_model, privatesum_grid, privatesum_model,
                                        pqftl_grid, pqftl_model, tree_point, TreeModel)
from dpaudit.papers.jkt12.regime import THRESHOLD_REL_TOLS, regime_analysis, regime_points
from dpaudit.learners.pocp_doubling import doubling_beta
from dpaudit.learners.pocp import pocp_beta

__all__ = ["FamilyDeclaration", "TreeDeclaration", "DECLARATIONS"]

LR_STATISTIC = ("projection of the outputs on the mean shift, weighted by 1/sigma_t^2 (the Gaussian "
                "log-likelihood ratio up to a constant)")
TREE_STATISTIC = ("whitened projection of the released prefix sums on the mean shift (the Gaussian "
                  "log-likelihood ratio up to a constant)")


def _empirical_tests(budget: Budget) -> int:
    """One structured test at the coarse budget, two otherwise (the points with the largest
    exact/accountant-to-claim ratio)."""
    return 1 if coarse(budget) else 2


def _lr_statistic(model: Model) -> Callable[[np.ndarray], np.ndarray]:
    """Projection of the noisy outputs on the mean shift, weighted by 1 / sigma_t^2."""
    w = (model.m0 - model.m1) / model.sigmas ** 2
    if model.output == "point":
        return lambda y: np.asarray(y)[:, 0] * float(w[0])
    rows = model.steps.astype(int)
    return lambda y: np.asarray(y)[:, rows, 0] @ w


def _mechanism(model: Model) -> Callable[[Any, int, np.random.Generator], np.ndarray]:
    factory = model.factory
    assert factory is not None
    if model.output == "point":
        return lambda data, n, rng: factory().sample(data, n, rng)
    return lambda data, n, rng: factory().run(data, n, rng)


def _privacy_curve(model: Model, max_clipped: int, rel_error: float = PLD_REL_ERROR
                   ) -> dict[str, Any]:
    """The series of the privacy-curve figure at ``model``'s point, computed exactly as the
    table's exact (or certified) and accountant values: the point's PLD (``max_clipped`` steps;
    it does not depend on delta, so one :func:`release_epsilon_curve` gives the value of
    :func:`release_epsilon` at every delta) on a grid that contains the claimed delta, so the
    curve passes through the table's values there (the driver checks it)."""
    delta_c = model.claimed[1]
    deltas = sorted(set(CURVE_DELTAS) | ({delta_c} if 0 < delta_c < 1 else set()))
    curve = release_epsilon_curve(model.m0, model.m1, model.sigmas, deltas, model.half_width,
                                  max_clipped_steps=max_clipped, rel_error=rel_error)
    acc = [gaussian_epsilon(model.accountant_mu, d) if model.accountant_mu > 0 else 0.0
           for d in deltas]
    return {"deltas": deltas, "epsilon_accountant": acc,
            "epsilon_exact": [c.lower for c in curve],
            "epsilon_exact_unprojected": [c.upper for c in curve]}


def _recommendation(model: Model) -> str | None:
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


def _privatesum_findings(version: Version) -> Callable[[list[GridPoint]], list[str]]:
    """The per-step reading of Theorem 11 (COLT) / 9 (arXiv) next to the sequence reading."""
    return lambda points: _privatesum_reading(version, points)


def _privatesum_reading(version: Version, points: list[GridPoint]) -> list[str]:
    seq_bad = [p for p in points if p.counterexample() is not None]
    step = [(p, p.evidence["per_step"]["epsilon"]) for p in points]
    step_bad = [(p, e) for p, e in step if e > p.claimed_epsilon * (1 + EXACT_TOLERANCE)]
    p_w, e_w = max(step, key=lambda pe: pe[1] / pe[0].claimed_epsilon)
    text = (f"Reading: the theorem says 'for all t, W^_t is (eps, delta)-DP' (each output on its "
            f"own); the audit's default is the whole released sequence W^_1..W^_T (the proof "
            f"shows the whole noisy tree is private, and PQFTL releases a function of the whole "
            f"sequence). Per-step reading: the worst single output (one node, shift 2R) has exact "
            f"epsilon above the claim at {len(step_bad)} of {len(points)} points (worst "
            f"({format_parameters(p_w.parameters)}): per step {e_w:.4g}, sequence "
            f"{fmt(p_w.epsilon_exact)}, claimed {p_w.claimed_epsilon:.4g}); sequence reading: "
            f"{len(seq_bad)} points.")
    at_two = []
    for lr in ("tree", "natural"):
        sigma = private_sum_sigma(version, 2, 1.0, 1.0, 1e-5, lr)
        at_two.append(f"{gaussian_epsilon(privatesum_step_mu(1.0, sigma), 1e-5):.3g} per step vs "
                      f"{gaussian_epsilon(tree_mu(2, 2.0, sigma), 1e-5):.3g} for the sequence "
                      f"({lr} reading)")
    text += " At T = 2, eps = 1, delta = 1e-5, R = 1: " + "; ".join(at_two) + "."
    verdict_step = "violated" if step_bad else "not refuted"
    verdict_seq = "violated" if seq_bad else "not refuted"
    text += f" Verdict under the per-step reading: {verdict_step}; under the sequence reading: " \
            f"{verdict_seq}."
    return [text]


def _pqftl_findings(version: Version) -> Callable[[list[GridPoint]], list[str]]:
    """The driver of PQFTL's failure (line 8's bound R) and the R = 1 cases without it."""
    def findings(points: list[GridPoint]) -> list[str]:
        eps, dl = 1.0, 1e-5
        big = pqftl_state_mu(version, 64, 10.0, eps, dl, "tree", 1)
        fixed = pqftl_state_mu(version, 64, 10.0, eps, dl, "tree", 1, u_bound=100.0)
        r1_64 = pqftl_state_mu(version, 64, 1.0, eps, dl, "tree", 1)
        r1_3n = pqftl_state_mu(version, 3, 1.0, eps, dl, "natural", 1)
        r1_3t = pqftl_state_mu(version, 3, 1.0, eps, dl, "tree", 1)

        def e(st: dict[str, float], key: str = "worst") -> str:
            return f"{gaussian_epsilon(st[key], dl):.3g}"

        return [
            f"Driver: Algorithm 4 line 8 passes the bound R to PrivateSum for y_t v_t, whose norm "
            f"reaches R^2 (and neighbouring u-trees differ by up to 2R^2 per node). At R = 10, "
            f"eps = 1, delta = 1e-5, T = 64, d = 1 (tree reading) the state's epsilon is "
            f"{e(big)} (label flip alone: {e(big, 'flip')}) against the claimed 1; passing R^2 "
            f"instead of R for the u-tree gives {e(fixed)}.",
            f"At R = 1 (where R^2 = R, so line 8's bound is not the issue) the accountant is "
            f"{e(r1_64)} at T = 64 (tree reading), below the claim, but {e(r1_3n)} at T = 3 with "
            f"the natural-log reading ({e(r1_3t)} with the tree reading): small T, where log T "
            f"shrinks the printed sigma while the node count does not, breaks the claim through "
            f"Lemma 6's factor 2 and the node count alone.",
        ]
    return findings


def _pocp_family(version: Version) -> Family:
    def per_step(p: dict[str, Any]) -> float:
        eps, dl, T = p["epsilon"], p["delta"], p["T"]
        c = pocp_c(version, T, eps, dl)
        beta = pocp_beta(version, T, 1.0, eps, dl)
        return lemma1_ratio(1.0 / beta, math.sqrt(eps) / T ** (0.5 + c), dl / T)

    stmt = ("Lemma 1: with ||x_{t+1} - x'_{t+1}|| = lambda_A/t and the printed beta, one noisy "
            "output is (sqrt(eps)/T^{0.5+c}, delta/T)-DP")
    return Family(f"jkt12-{version}/pocp", pocp_grid, pocp_model(version), pocp_lemmas(),
                   exponent=lambda p: pocp_c(version, p["T"], p["epsilon"], p["delta"]),
                   c_depends_on_epsilon=version == "colt", step_check=exact_step_check(stmt, per_step))


def _doubling_family() -> Family:
    def per_step(p: dict[str, Any]) -> float:
        # Every block k = floor(log2 t) of the rounds t = 1..T-1 has its own per-step budget.
        eps, dl, T = p["epsilon"], p["delta"], p["T"]
        return max(lemma1_ratio(1.0 / doubling_beta(2 ** k, 1.0, eps, dl),
                                 math.sqrt(eps / 2 ** k), dl / 2 ** k)
                   for k in range((T - 1).bit_length()))

    stmt = ("App. F: step t is (sqrt(eps/2^k), delta/2^k)-DP at the printed beta_t, "
            "k = floor(log2 t)")
    return Family("jkt12-colt/pocp-doubling", doubling_grid, doubling_model, pocp_lemmas(),
                   skip_reason="the claimed delta is >= 1 (a vacuous claim)",
                   step_check=exact_step_check(stmt, per_step))


def _pigd_family(version: Version) -> Family:
    claim_id = f"jkt12-{version}/pigd"
    return Family(claim_id, pigd_grid, pigd_model(version), pigd_lemmas(version),
                   exponent=lambda p: pocp_c(version, p["T"], p["epsilon"], p["delta"]),
                   c_depends_on_epsilon=version == "colt",
                   step_check=instance_step_check(claim_id, version, "L"),
                   uniform_start=version == "arxiv", refine_above=0.9,
                   accountant=pigd_accountant_only(version))


def _pgiga_family(version: Version) -> Family:
    claim_id = f"jkt12-{version}/pgiga"
    return Family(claim_id, pgiga_grid, pgiga_model(version), pgiga_lemmas(version),
                   skip_reason="T - 1 < t_q: every released point is a random burn-in point",
                   exponent=lambda p: pocp_c(version, p["T"], p["epsilon"], p["delta"]),
                   c_depends_on_epsilon=version == "colt",
                   step_check=instance_step_check(claim_id, version, "G"))


def _pol_family(version: Version) -> Family:
    def model(p: dict[str, Any], max_T: int) -> Model:
        m = pol_model(p, max_T)
        m.claimed = claimed_privacy(f"jkt12-{version}/pol", p["epsilon_p"], p["delta"])
        return m
    return Family(f"jkt12-{version}/pol", pol_grid, model, pol_lemmas(version),
                   max_clipped=lambda grid: 1)




# ==================================================================================================
# Declarations
# ==================================================================================================


def _family_plan(fam: Family, model: Model, point: GridPoint, max_clipped: int) -> PointPlan:
    """The driver's plan of a Gaussian-release point, with its follow-up tests."""
    base_acc = point.epsilon_accountant
    emp = None
    followups: list[PointPlan] = []
    if model.factory is not None and model.streams is not None:
        emp = EmpiricalPlan(mechanism=_mechanism(model), data0=model.streams[0],
                            data1=model.streams[1], statistic=_lr_statistic(model),
                            statistic_name=LR_STATISTIC)
        if model.search_pairs:
            followups.append(PointPlan(
                parameters=dict(model.params, test="candidate-pair search"),
                claimed_epsilon=point.claimed_epsilon, claimed_delta=point.claimed_delta,
                accountant=base_acc, model=model,
                evidence=PointEvidence.of(model.evidence).with_details(
                    accountant=point.evidence["accountant"],
                    pairs="replaced round: " + ", ".join(
                        str(x) for x in model.evidence.get("search_positions", [])),
                    note="the accountant holds for every pair of the class"),
                empirical=EmpiricalPlan(mechanism=_mechanism(model), pairs=model.search_pairs,
                                        what="candidate-pair search")))
        if fam.uniform_start and model.uniform_factory is not None:
            u_model = Model(dict(model.params, x1="uniform"), model.claimed, model.steps,
                             model.sigmas, model.m0, model.m1, model.half_width,
                             model.accountant_mu, model.accountant_note, model.uniform_factory,
                             model.streams, model.noise_name, model.noise_value,
                             dict(model.evidence), model.output, None, None)
            followups.append(PointPlan(
                parameters=u_model.params, claimed_epsilon=point.claimed_epsilon,
                claimed_delta=point.claimed_delta, accountant=base_acc, model=model,
                evidence=PointEvidence.of(model.evidence).merged({
                    "accountant": point.evidence["accountant"],
                    model.noise_name: model.noise_value,
                    "starting_point": "x_1 and x^_1 independent uniform points of C (Algorithm 2 "
                                      "line 3: 'chosen randomly from C'); the statistic is the "
                                      "likelihood ratio of the point-mass start at 0; no exact "
                                      "value (the release is a mixture over x_1), the "
                                      "worst-case accountant holds for any data-independent "
                                      "start"}),
                empirical=EmpiricalPlan(mechanism=_mechanism(u_model), data0=model.streams[0],
                                        data1=model.streams[1], statistic=_lr_statistic(model),
                                        statistic_name=LR_STATISTIC,
                                        what="x1 = 'uniform' run")))
    used_clipped = point.evidence["exact_release"].get("max_clipped_steps", max_clipped)
    used_grid = point.evidence["exact_release"].get("pld_rel_error", PLD_REL_ERROR)
    return PointPlan(parameters=point.parameters, claimed_epsilon=point.claimed_epsilon,
                     claimed_delta=point.claimed_delta, exact=point.epsilon_exact,
                     # Projected onto a box: the lower end of a numerical bracket (exact.py).
                     exact_kind=EXACT if model.half_width is None else CERTIFIED,
                     exact_upper=point.evidence["exact_release"]["upper"], accountant=base_acc,
                     empirical=emp, curve=lambda: _privacy_curve(model, used_clipped, used_grid),
                     recommendation=lambda: _recommendation(model), evidence=point.evidence,
                     followups=tuple(followups), model=model)


def _pigd_bracket(point: GridPoint, rel: Mapping[str, Any], where: str = "At the worst point",
                  model: Model | None = None) -> str:
    """Where the implemented release's epsilon lies at a PIGD point, and what decides it; with
    ``model``, also the two-sided bracket on the audited pair's own epsilon (certified lower
    end and pessimistic-PLD upper end of the projected release, :func:`release_epsilon`)."""
    acc, lo, claimed = point.epsilon_accountant or 0.0, rel["lower"], point.claimed_epsilon
    pair = ""
    if model is not None and model.half_width is not None:
        ex = release_epsilon(model.m0, model.m1, model.sigmas, point.claimed_delta,
                             model.half_width, projected_upper=True,
                             max_clipped_steps=rel.get("max_clipped_steps", 128),
                             rel_error=rel.get("pld_rel_error", PLD_REL_ERROR))
        pair = (f"; the audited pair's own epsilon lies in [{ex.lower:.6g}, "
                f"{ex.upper_projected:.6g}] (certified lower end; pessimistic PLD of the "
                f"projected release, every privacy loss rounded up, for the upper end; "
                f"unprojected: {ex.upper:.6g})")
    decided = ("the claim holds there (the accountant is an upper bound over every pair, C and d)"
               if acc <= claimed else
               "a counterexample (the certified lower bound is above the claim)" if lo > claimed
               else f"undecided: it is violated iff the true epsilon exceeds {claimed:.6g}")
    head = ("PIGD accountant: a loss replaced at round tau moves x_{tau+1} by at most "
            "2L/(alpha (tau+2)) (strong convexity of both losses on the segment between the two "
            "implicit steps, for every class and d; z3 checks that the bound follows from those "
            "first-order facts), then each step contracts by "
            "t/(t+1); maximised over tau. " if where == "At the worst point" else "")
    return (f"{head}{where} ({format_parameters(point.parameters)}; accountant mu = "
            f"{point.evidence['accountant']['mu']:.6g}) the epsilon of the "
            f"implemented (projected) release lies in [{lo:.6g}, {acc:.6g}] (certified lower bound "
            f"on the audited pair, accountant){pair} against the claim {claimed:.6g}: "
            f"{decided}.")


@dataclass(frozen=True)
class FamilyDeclaration(Declaration):
    """A claim whose release is Gaussian noise around the iterates (POCP, PIGD, PGIGA, POL and
    the doubling variant), as declarations over the claim driver."""

    family: Family

    @property
    def claim(self) -> PrivacyClaim:
        """The claim of ``family.claim_id`` (:data:`~dpaudit.papers.jkt12.claims.JKT12_CLAIMS`)."""
        return get_claim(self.family.claim_id)

    def grid(self, ctx: AuditContext) -> list[dict[str, Any]]:
        """The family's parameter points for the budget's grid (``"coarse"`` or ``"full"``).

        Parameters
        ----------
        ctx
            The driver's audit context; only ``ctx.budget.grid`` is read.

        Returns
        -------
        list of dict
            The points of ``family.grid`` (e.g. :func:`~dpaudit.papers.jkt12.plans.pocp_grid`).
        """
        return self.family.grid(ctx.budget.grid)

    def tested_points(self, budget: Budget) -> int:
        """How many points get the structured empirical test: 1 on the coarse grid, else 2.

        Parameters
        ----------
        budget
            The audit budget (:func:`~dpaudit.claims.context.coarse` decides).

        Returns
        -------
        int
            1 or 2; the driver tests the points with the largest exact/accountant-to-claim ratio.
        """
        return _empirical_tests(budget)

    def plan(self, params: Mapping[str, Any], ctx: AuditContext) -> PointPlan | Skip:
        """The exact, accountant and empirical plan of one point, or a skip where no model exists.

        Builds the point's :class:`~dpaudit.papers.jkt12.plans.Model` and its exact and
        accountant evidence with :func:`~dpaudit.papers.jkt12.plans.audit_point` (horizon
        ``ctx.budget.max_T``, ``family.max_clipped`` clipped steps for the grid). The plan's
        exact value is kind ``EXACT`` on C = R^d and ``CERTIFIED`` (the lower end of a numerical
        bracket) when the noisy points are projected onto a box; its empirical test is the
        likelihood-ratio statistic on the model's pair (only when ``T <= max_T``), with two
        follow-ups where they apply: a candidate-pair search over the model's candidate replaced
        rounds and (``family.uniform_start``, arXiv PIGD) a run with ``x_1`` and ``x^_1``
        independent uniform points of C (Algorithm 2 line 3's "randomly from C").

        Parameters
        ----------
        params
            The parameter point (a row of :meth:`grid` or of :meth:`more_points`).
        ctx
            The driver's audit context (its budget's grid and ``max_T``).

        Returns
        -------
        PointPlan or Skip
            The plan; a :class:`~dpaudit.claims.declaration.Skip` with ``family.skip_reason``
            when the family has no model there (a vacuous doubling claim, or a PGIGA horizon
            inside the burn-in).
        """
        fam = self.family
        max_clipped = fam.max_clipped(ctx.budget.grid)
        model, point = audit_point(fam, dict(params), ctx.budget.max_T, max_clipped)
        if model is None or point is None:
            return Skip(params, fam.skip_reason)
        return _family_plan(fam, model, point, max_clipped)

    def more_points(self, plans: Sequence[PointPlan], ctx: AuditContext) -> AddedPoints:
        """COLT's c-dependent claims: the c = 0 boundary and the smallest failing epsilon.

        Only for families whose exponent c depends on epsilon (COLT POCP, PIGD and PGIGA: the
        proof's step ``eps / T^{2c} <= 2 eps``, App. A.2, holds iff ``c >= 0``, i.e.
        ``eps <= (1/2) ln(2/delta)``); the points come from
        :func:`~dpaudit.papers.jkt12.regime.regime_points`, bisected to
        ``THRESHOLD_REL_TOLS[ctx.budget.grid]``, and are planned as :meth:`plan` plans a point.

        Parameters
        ----------
        plans
            The plans of the grid's points.
        ctx
            The driver's audit context (its budget's grid and ``max_T``).

        Returns
        -------
        AddedPoints
            The added plans and, under ``"regime"``, the record of
            :func:`~dpaudit.papers.jkt12.regime.regime_points` (read back by :meth:`findings`);
            empty for the other families.
        """
        fam = self.family
        if fam.exponent is None or not fam.c_depends_on_epsilon:
            return AddedPoints()
        regime = regime_points(fam, [p.grid_point() for p in plans], ctx.budget.max_T,
                                THRESHOLD_REL_TOLS[ctx.budget.grid])
        max_clipped = fam.max_clipped(ctx.budget.grid)
        added = tuple(_family_plan(fam, m, p, max_clipped) for m, p in regime["added"])
        return AddedPoints(added, {"regime": regime})

    def lemmas(self, ctx: AuditContext, parameters: Sequence[Mapping[str, Any]]
               ) -> LemmaOutcome:
        """The family's sensitivity-lemma checks, its per-step check, and the SMT records.

        Parameters
        ----------
        ctx
            The driver's audit context (the checks' budget and seed).
        parameters
            The planned and skipped parameter points, at which ``family.step_check`` evaluates
            the per-step statement (POCP's Lemma 1 and the doubling variant's per-block budget of
            COLT App. F exactly; PIGD's and PGIGA's Lemma 1 at the printed beta with the lemma's
            own sensitivity, :func:`~dpaudit.papers.jkt12.lemmas.instance_step_check`; POL has
            none).

        Returns
        -------
        LemmaOutcome
            ``family.lemmas(ctx)``'s checks with the step check appended, then
            :func:`~dpaudit.papers.jkt12.smt_lemmas.smt_evidence`'s SMT records.
        """
        checks, trace, findings = self.family.lemmas(ctx)
        if self.family.step_check is not None:
            checks = list(checks) + [self.family.step_check(list(parameters))]
        return smt_evidence(self.family.claim_id, ctx,
                            LemmaOutcome(tuple(checks), trace, tuple(findings)))

    def findings(self, run: ClaimRun) -> list[str]:
        """Sentences about the finished run, in this order, each where it applies.

        The candidate-pair search's lower bound against the structured pair's (at the tested
        point of best rank); the uniform-start run against the point-mass start; at the worst
        point, :func:`~dpaudit.papers.jkt12.exact.cross_check` of its Gaussian epsilon with
        dp-accounting's PLD (unclipped ``mu`` of the exact release, else the accountant's, when
        positive); for PIGD, where the release's epsilon lies between the certified lower bound
        and the accountant at the worst point and at the unrefuted grid point closest to the
        claim (the regime's bisection points excluded); for the families with an exponent c,
        :func:`~dpaudit.papers.jkt12.regime.regime_analysis`.

        Parameters
        ----------
        run
            The driver's finished run of this claim (points, plans, tested points, lemmas, and
            the ``"regime"`` note of :meth:`more_points`).

        Returns
        -------
        list of str
            The sentences, possibly none.
        """
        fam = self.family
        out: list[str] = []
        by_what = {t.plan.empirical.what: t for t in run.tested}
        base = min(run.tested, key=lambda t: t.rank) if run.tested else None
        search = by_what.get("candidate-pair search")
        if search is not None and base is not None:
            out.append(f"Candidate-pair search at ({format_parameters(base.plan.parameters)}) "
                       f"(engine statistic, {len(search.plan.empirical.pairs or [])} pairs): "
                       f"lower bound {search.result.epsilon_lower_bound:.4g} (structured pair "
                       f"with the likelihood-ratio statistic: "
                       f"{base.result.epsilon_lower_bound:.4g}); each at level "
                       f"{search.result.alpha:.3g}.")
        uniform = by_what.get("x1 = 'uniform' run")
        if uniform is not None and base is not None:
            out.append(f"Uniform start: at ({format_parameters(uniform.plan.parameters)}) with "
                       f"x_1 and x^_1 independent uniform points of C (instead of the point mass "
                       f"at 0), the empirical lower bound is "
                       f"{fmt(uniform.result.epsilon_lower_bound)} (point mass: "
                       f"{fmt(base.result.epsilon_lower_bound)}; claim "
                       f"{uniform.plan.claimed_epsilon:.4g}; level {uniform.result.alpha:.3g}); "
                       f"the accountant ({fmt(uniform.plan.accountant)}) holds for any starting "
                       "distribution independent of the data.")
        w = run.worst_index()
        if w is not None:
            wp, model = run.points[w], run.plans[w].model
            rel = wp.evidence.get("exact_release")
            mu = rel["mu_unclipped"] if rel is not None else model.accountant_mu
            if mu > 0:
                out.append(cross_check(mu, wp.claimed_delta))
            if fam.claim_id.endswith("/pigd") and rel is not None:
                out.append(_pigd_bracket(wp, rel, model=model))
                # ... and at the grid point closest to failing that the audit does not refute
                # (the bisection points of the regime analysis excluded).
                open_points = [p for p in run.points if p.counterexample() is None
                               and p.epsilon_accountant and "exact_release" in p.evidence
                               and not str(p.parameters.get("setting", "")).startswith(
                                   ("smallest", "c = 0"))]
                if open_points:
                    q = max(open_points, key=lambda p: p.epsilon_accountant / p.claimed_epsilon)
                    if q is not wp:
                        out.append(_pigd_bracket(q, q.evidence["exact_release"], "At the "
                                                 "unrefuted point closest to the claim"))
        if fam.exponent is not None:
            out.extend(regime_analysis(fam, run.points, run.lemmas, run.notes.get("regime")))
        return out


def _tree_curve(m: TreeModel, exact_available: bool) -> dict[str, Any]:
    delta_c = m.claimed[1]
    deltas = sorted(set(CURVE_DELTAS) | ({delta_c} if 0 < delta_c < 1 else set()))
    return {"deltas": deltas,
            "epsilon_accountant": [gaussian_epsilon(m.accountant_mu, d) if m.accountant_mu > 0
                                   else 0.0 for d in deltas],
            "epsilon_exact": [gaussian_epsilon(m.mu, d) if m.mu > 0 else 0.0 for d in deltas]
            if exact_available else None}


def _tree_recommendation(m: TreeModel, point: GridPoint) -> str:
    z = calibrate_gaussian_noise_multiplier(point.claimed_epsilon, point.claimed_delta, 1)
    factor = m.accountant_mu * z
    nodes = m.evidence.get("released_nodes_containing_w_1",
                           m.evidence.get("released_nodes_containing_f_1"))
    return (f"At ({format_parameters(point.parameters)}): multiply every node's sigma by "
            f"{factor:.4g} (dp_accounting.mechanism_calibration: noise multiplier {z:.6g} for one "
            f"Gaussian release of unit shift; the release composes {nodes} nodes with the "
            "worst-case sensitivity of the replaced entry).")


@dataclass(frozen=True)
class TreeDeclaration(Declaration):
    """PrivateSum (Algorithm 5) and PQFTL (Algorithm 4): Gaussian tree releases."""

    claim_id: str
    grid_fn: Callable[[str], list[dict[str, Any]]]
    model_fn: Callable[[dict[str, Any], int], TreeModel]
    lemma_fn: Callable[[AuditContext], tuple[list[Any], Any, list[str]]]
    exact_available: bool
    extra: Callable[[list[GridPoint]], list[str]]

    @property
    def claim(self) -> PrivacyClaim:
        """The claim of ``claim_id`` (:data:`~dpaudit.papers.jkt12.claims.JKT12_CLAIMS`)."""
        return get_claim(self.claim_id)

    def grid(self, ctx: AuditContext) -> list[dict[str, Any]]:
        """The claim's parameter points for the budget's grid (``"coarse"`` or ``"full"``).

        Parameters
        ----------
        ctx
            The driver's audit context; only ``ctx.budget.grid`` is read.

        Returns
        -------
        list of dict
            The points of ``grid_fn``
            (:func:`~dpaudit.papers.jkt12.plans.privatesum_grid` or
            :func:`~dpaudit.papers.jkt12.plans.pqftl_grid`).
        """
        return self.grid_fn(ctx.budget.grid)

    def tested_points(self, budget: Budget) -> int:
        """How many points get the empirical test: 1 on the coarse grid, else 2.

        Parameters
        ----------
        budget
            The audit budget (:func:`~dpaudit.claims.context.coarse` decides).

        Returns
        -------
        int
            1 or 2; the driver tests the points with the largest exact/accountant-to-claim ratio.
        """
        return _empirical_tests(budget)

    def plan(self, params: Mapping[str, Any], ctx: AuditContext) -> PointPlan:
        """The exact (PrivateSum only), accountant and empirical plan of one tree point.

        Builds the point's :class:`~dpaudit.papers.jkt12.plans.TreeModel` (``model_fn`` with
        horizon ``ctx.budget.max_T``) and its evidence with
        :func:`~dpaudit.papers.jkt12.plans.tree_point`; the empirical test, where the model
        has one, is a whitened projection of the released outputs on the mean shift; the
        consistency bound ``exact_upper`` is the model's ``pair_upper`` (PQFTL's empirical
        pairs: the state's epsilon under the label flip).

        Parameters
        ----------
        params
            The parameter point (a row of :meth:`grid`).
        ctx
            The driver's audit context (its budget's ``max_T``).

        Returns
        -------
        PointPlan
            The plan, with the privacy curve and the dp-accounting noise recommendation as lazy
            callables.
        """
        m = self.model_fn(dict(params), ctx.budget.max_T)
        point = tree_point(m, self.exact_available)
        emp = None
        if m.empirical is not None:
            t = m.empirical
            emp = EmpiricalPlan(mechanism=t.mechanism, data0=t.data0, data1=t.data1,
                                statistic=t.statistic, statistic_name=TREE_STATISTIC)
        return PointPlan(parameters=point.parameters, claimed_epsilon=point.claimed_epsilon,
                         claimed_delta=point.claimed_delta, exact=point.epsilon_exact,
                         exact_upper=m.pair_upper, accountant=point.epsilon_accountant,
                         empirical=emp, evidence=point.evidence, model=m,
                         curve=lambda: _tree_curve(m, self.exact_available),
                         recommendation=lambda: _tree_recommendation(m, point))

    def lemmas(self, ctx: AuditContext, parameters: Sequence[Mapping[str, Any]]
               ) -> LemmaOutcome:
        """The tree lemmas' checks (Lemma 6, the node count, PQFTL's input bounds) and SMT records.

        Parameters
        ----------
        ctx
            The driver's audit context (the checks' budget and seed).
        parameters
            The planned and skipped points; not used (the tree lemmas are sampled checks of
            their own, :func:`~dpaudit.papers.jkt12.lemmas.tree_lemmas`).

        Returns
        -------
        LemmaOutcome
            ``lemma_fn(ctx)``'s checks, then
            :func:`~dpaudit.papers.jkt12.smt_lemmas.smt_evidence`'s SMT records.
        """
        checks, trace, findings = self.lemma_fn(ctx)
        return smt_evidence(self.claim_id, ctx, LemmaOutcome(tuple(checks), trace, tuple(findings)))

    def findings(self, run: ClaimRun) -> list[str]:
        """The claim's own sentences, then the PLD cross-check at the worst point.

        ``extra`` gives the claim's sentences (PrivateSum: the per-step against the sequence
        reading of Theorem 11 COLT / 9 arXiv; PQFTL: Algorithm 4 line 8's bound R and the
        R = 1 cases); then :func:`~dpaudit.papers.jkt12.exact.cross_check` at the worst point,
        with the exact ``mu`` (PrivateSum) or the accountant's (PQFTL), when positive.

        Parameters
        ----------
        run
            The driver's finished run of this claim.

        Returns
        -------
        list of str
            The sentences.
        """
        out = list(self.extra(run.points))
        w = run.worst_index()
        if w is not None:
            m = run.plans[w].model
            mu_ref = m.mu if self.exact_available else m.accountant_mu
            if mu_ref > 0:
                out.append(cross_check(mu_ref, run.points[w].claimed_delta))
        return out


def _declaration(claim_id: str) -> FamilyDeclaration | TreeDeclaration:
    tag, algo = claim_id.split("/")
    version: Version = "colt" if tag == "jkt12-colt" else "arxiv"
    if algo == "privatesum":
        return TreeDeclaration(claim_id, privatesum_grid, privatesum_model(version),
                               tree_lemmas(version, claim_id), True,
                               _privatesum_findings(version))
    if algo == "pqftl":
        return TreeDeclaration(claim_id, pqftl_grid, pqftl_model(version),
                               tree_lemmas(version, claim_id), False, _pqftl_findings(version))
    if algo == "pocp-doubling":
        return FamilyDeclaration(_doubling_family())
    families: dict[str, Callable[[Version], Family]] = {
        "pocp": _pocp_family, "pigd": _pigd_family, "pgiga": _pgiga_family, "pol": _pol_family}
    return FamilyDeclaration(families[algo](version))


#: Claim id -> its declaration.
DECLARATIONS: dict[str, FamilyDeclaration | TreeDeclaration] = {
    cid: _declaration(cid) for cid in CLAIM_IDS}

for _cid, _decl in DECLARATIONS.items():
    register(_decl.claim, _decl)
