"""Declarations of the five Smith & Thakurta (NeurIPS 2013) claims for the claim driver.

Importing this module registers ``st13/tree-aggregation``, ``st13/pftal``, ``st13/pftal-convex``,
``st13/bandit-ftal`` and ``st13/bandit-ftal-convex`` with :func:`dpaudit.claims.registry.register`;
:func:`dpaudit.claims.driver.run_claim` audits them. Each declaration plugs the grid and point
plans of :mod:`dpaudit.papers.st13.plans` (per point: the claim, the exact epsilon of the worst
realisable pair, the accountant's epsilon and one empirical test) into
:class:`~dpaudit.claims.declaration.Declaration`, with the lemma checks (:mod:`.lemmas` and
:mod:`.smt_lemmas`) and the findings drawn from the audited points; every audited point is tested
(``tested_points`` is ``None``). What the paper claims, the reading choices and the audit method
are in ``README.md`` beside this file.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from dpaudit.claims.evidence import EXACT_TOLERANCE, GridPoint
from dpaudit.claims.verdict import format_parameters
from dpaudit.claims.declaration import ClaimRun, Declaration, PointPlan, Skip
from dpaudit.claims.formatting import fmt
from dpaudit.claims.evidence import LemmaOutcome
from dpaudit.claims.context import AuditContext, Budget
from dpaudit.claims.registry import register
from dpaudit.claims import PrivacyClaim
from dpaudit.papers.st13.claims import (
    BANDIT_FTAL_CLAIM,
    BANDIT_FTAL_CONVEX_CLAIM,
    PFTAL_CLAIM,
    PFTAL_CONVEX_CLAIM,
    TREE_AGGREGATION,
)
from dpaudit.papers.st13.lemmas import (
    bandit_lemmas,
    pftal_convex_lemmas,
    pftal_lemmas,
    tree_lemmas,
)
from dpaudit.papers.st13.smt_lemmas import smt_evidence
from dpaudit.papers.st13.plans import (
    D_GT_1_NOTE,
    REGULARISED_SAMPLES,
    bandit_grid,
    bandit_plan,
    pftal_grid,
    pftal_plan,
    regularised_samples,
    tree_aggregation_grid,
    tree_aggregation_plan,
)

__all__ = ["TreeAggregationAudit", "PFTALAudit", "BanditFTALAudit", "TREE_AGGREGATION_AUDIT",
           "PFTAL_AUDIT", "PFTAL_CONVEX_AUDIT", "BANDIT_FTAL_AUDIT", "BANDIT_FTAL_CONVEX_AUDIT",
           "group_finding", "regularised_samples", "REGULARISED_SAMPLES"]

# ------------------------------------------------------------------------------------------------
# Findings prose shared by the learners' claims
# ------------------------------------------------------------------------------------------------


def _by_reading(points: Sequence[GridPoint]) -> dict[str, list[GridPoint]]:
    out: dict[str, list[GridPoint]] = {}
    for p in points:
        out.setdefault(str(p.parameters.get("tree_bound")), []).append(p)
    return out


def _largest_lower_bound(points: Sequence[GridPoint]) -> GridPoint:
    return max(points, key=lambda p: (p.epsilon_lower_bound or 0.0) / p.claimed_epsilon)


def _d_finding(points: Sequence[GridPoint]) -> list[str]:
    return (["Grid points with " + D_GT_1_NOTE + "."]
            if any(p.parameters.get("d", 1) > 1 for p in points) else [])


def group_finding(label: str, points: Sequence[GridPoint]) -> str:
    """A sentence: how many of ``points`` refute the claim, and why the undecided ones are open.

    An undecided point has no counterexample and an accountant above the claim (or none). Either
    the audited pair's exact epsilon is within the claim (only a worse pair could refute it), or,
    without an exact value, the empirical test lacked power. Neither is evidence of privacy, and
    the text says so; with no refuting and no undecided point it says every accountant is within
    the claim.

    Parameters
    ----------
    label
        What the points are (e.g. a reading of the tree bound), the sentence's subject.
    points
        The audited grid points.

    Returns
    -------
    str
        The sentence(s).
    """
    bad = [p for p in points if p.counterexample() is not None]
    text = (f"{label}: {len(bad)} of {len(points)} grid points refute the claim"
            + (f" (e.g. {format_parameters(bad[0].parameters)}: {bad[0].counterexample()})"
               if bad else "") + ".")
    open_pts = [p for p in points if p.counterexample() is None
                and (p.epsilon_accountant is None
                     or p.epsilon_accountant > p.claimed_epsilon * (1 + EXACT_TOLERANCE))]
    pair_limited = [p for p in open_pts if p.epsilon_exact is not None]
    weak = [p for p in open_pts if p.epsilon_exact is None]
    if weak:
        best = _largest_lower_bound(weak)
        detail = (f"largest empirical lower bound {fmt(best.epsilon_lower_bound)} against the "
                  f"claimed {best.claimed_epsilon:g}, accountant {fmt(best.epsilon_accountant)}, "
                  f"at {format_parameters(best.parameters)}")
        if bad:
            text += (f" {len(weak)} other point(s) are undecided for lack of power, NOT shown "
                     "private: their accountant exceeds the claim but their lower bound does not "
                     f"({detail}).")
        else:
            text += (" Not refuted only for lack of power, which is NOT evidence that it is "
                     "private: at every such point the accountant exceeds the claim while the "
                     f"empirical lower bound stays below it ({detail}); a larger budget (more "
                     "samples, longer horizons) is needed to decide it.")
    if pair_limited:
        p = pair_limited[0]
        text += (f" {len(pair_limited)} point(s) are undecided, NOT shown private: the audited "
                 "pair's exact epsilon is within the claim there but the accountant (worst case "
                 f"over the class) exceeds it (e.g. exact {fmt(p.epsilon_exact)}, accountant "
                 f"{fmt(p.epsilon_accountant)} at {format_parameters(p.parameters)}).")
    if not bad and not open_pts:
        text += " Every point's accountant is within the claim."
    return text


@dataclass(frozen=True)
class _Declaration(Declaration):
    """What the five declarations share: the claim, and every audited point is tested."""

    claim: PrivacyClaim

    def tested_points(self, budget: Budget) -> None:
        return None


# ------------------------------------------------------------------------------------------------
# st13/tree-aggregation
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TreeAggregationAudit(_Declaration):
    """Algorithm 2 as a mechanism on leaf vectors; exact epsilon = accountant on the pair
    ``z_1 = +-mu e_1``."""

    def grid(self, ctx: AuditContext) -> list[dict[str, Any]]:
        """:func:`~dpaudit.papers.st13.plans.tree_aggregation_grid`.

        Parameters
        ----------
        ctx
            The driver's audit context.
        """
        return tree_aggregation_grid(ctx)

    def plan(self, prm: Mapping[str, Any], ctx: AuditContext) -> PointPlan:
        """:func:`~dpaudit.papers.st13.plans.tree_aggregation_plan`.

        Parameters
        ----------
        prm, ctx
            The parameter point (a row of :meth:`grid`); the driver's audit context.
        """
        return tree_aggregation_plan(prm, ctx)

    def lemmas(self, ctx: AuditContext, parameters: Sequence[Mapping[str, Any]]) -> LemmaOutcome:
        """The tree's lemma checks and the SMT records.

        Parameters
        ----------
        ctx
            The driver's audit context.
        parameters
            The audited points (not used).

        Returns
        -------
        LemmaOutcome
            :func:`~dpaudit.papers.st13.lemmas.tree_lemmas`, then
            :func:`~dpaudit.papers.st13.smt_lemmas.smt_evidence`'s records.
        """
        return smt_evidence(self.claim.id, ctx, tree_lemmas(ctx, self.claim.id))

    def findings(self, run: ClaimRun) -> list[str]:
        """Why the exact epsilon is up to 2 eps, the largest lower bound, and the d > 1 note.

        Parameters
        ----------
        run
            The driver's finished run.

        Returns
        -------
        list of str
            The sentences (the d > 1 note only when a point has ``d > 1``).
        """
        lb = _largest_lower_bound(run.points)
        return ["Replace-one neighbours let one input change from mu e_1 to -mu e_1, so every node "
                "containing it moves by 2 mu, not mu as the proof of App. B.1 assumes: each node "
                "is (2 eps / (ceil(log2 T) + 1))-DP and a leaf lies in floor(log2 T) + 1 released "
                "nodes, so the exact epsilon is 2 eps (floor(log2 T) + 1) / (ceil(log2 T) + 1): "
                "exactly 2 eps when T is a power of two (and T = 1).",
                "Largest empirical lower bound relative to the claim: "
                f"{fmt(lb.epsilon_lower_bound)} at {format_parameters(lb.parameters)} (claimed "
                f"{lb.claimed_epsilon:g})."] + _d_finding(run.points)


# ------------------------------------------------------------------------------------------------
# st13/pftal and st13/pftal-convex
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PFTALAudit(_Declaration):
    """Algorithm 1 (Theorem 3) or, with ``convex``, App. C's PFTAL on ``h_t = f_t + H/2 ||w||^2``
    (Theorem 11's ``H``), both readings of the tree bound; exact epsilon of the release on the
    pair of :func:`~.pairs.pftal_worst_pair` / :func:`~.pairs.pftal_convex_worst_pair`."""

    convex: bool = False

    def grid(self, ctx: AuditContext) -> list[dict[str, Any]]:
        """:func:`~dpaudit.papers.st13.plans.pftal_grid` with ``convex``.

        Parameters
        ----------
        ctx
            The driver's audit context.
        """
        return pftal_grid(ctx, self.convex)

    def plan(self, prm: Mapping[str, Any], ctx: AuditContext) -> PointPlan | Skip:
        """:func:`~dpaudit.papers.st13.plans.pftal_plan` with ``convex``.

        Parameters
        ----------
        prm, ctx
            The parameter point (a row of :meth:`grid`); the driver's audit context.
        """
        return pftal_plan(prm, ctx, self.convex)

    def lemmas(self, ctx: AuditContext, parameters: Sequence[Mapping[str, Any]]) -> LemmaOutcome:
        """PFTAL's lemma checks (App. C's with ``convex``) and the SMT records.

        Parameters
        ----------
        ctx
            The driver's audit context.
        parameters
            The audited points (not used).

        Returns
        -------
        LemmaOutcome
            :func:`~dpaudit.papers.st13.lemmas.pftal_lemmas` or
            :func:`~dpaudit.papers.st13.lemmas.pftal_convex_lemmas`, then
            :func:`~dpaudit.papers.st13.smt_lemmas.smt_evidence`'s records.
        """
        lemma_fn = pftal_convex_lemmas if self.convex else pftal_lemmas
        return smt_evidence(self.claim.id, ctx, lemma_fn(ctx, self.claim.id))

    def findings(self, run: ClaimRun) -> list[str]:
        """Why a node moves by up to 2 L, then :func:`group_finding` per tree-bound reading.

        Parameters
        ----------
        run
            The driver's finished run.

        Returns
        -------
        list of str
            The sentences, the d > 1 note last where a point has ``d > 1``.
        """
        if self.convex:
            out = ["The regulariser's gradient H w^_t is the same in both neighbouring runs given "
                   "the past, so a replaced f_t moves each node by up to 2 L under either reading "
                   "of the tree bound; reading 'lipschitz+H|C|' (mu = L + H ||C||) adds noise "
                   "L + H||C|| and holds when 2 L (floor(log2(T-1)) + 1) <= (L + H ||C||) "
                   "(ceil(log2 T) + 1), i.e. only for large H ||C|| / L; reading 'lipschitz' "
                   "(mu = L) behaves like Algorithm 1."]
        else:
            out = ["Algorithm 1 passes L2-bound L, but replacing f_t changes grad f_t(w^_t) by up "
                   "to 2 (L - H ||C||) at the centre of a ball (2 L on a linear-plus-quadratic "
                   "family as H -> 0), so each node is up to (2 eps / (ceil(log2 T) + 1))-DP, not "
                   "eps / (ceil(log2 T) + 1) as App. B.1 assumes; with floor(log2(T-1)) released "
                   "nodes containing round 2 the released points are exactly "
                   "2 (1 - H R / L) eps floor(log2(T-1)) / (ceil(log2 T) + 1)-DP on the "
                   "constructed pair."]
        for reading, pts in sorted(_by_reading(run.points).items()):
            out.append(group_finding(f"tree_bound reading '{reading}'", pts))
        return out + _d_finding(run.points)


# ------------------------------------------------------------------------------------------------
# st13/bandit-ftal and st13/bandit-ftal-convex
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BanditFTALAudit(_Declaration):
    """Algorithm 3 (Theorem 5, Theorem 6's schedules) or, with ``convex``, App. E.3 (Theorem 17's
    schedule, both readings of the tree bound). No exact value for the release; the verdict rests
    on the accountant and the empirical bounds. Points where the schedule is undefined or the
    statistic has no power (``beta >= (1 - xi) r``) are skipped with the reason."""

    convex: bool = False

    def grid(self, ctx: AuditContext) -> list[dict[str, Any]]:
        """:func:`~dpaudit.papers.st13.plans.bandit_grid` with ``convex``.

        Parameters
        ----------
        ctx
            The driver's audit context.
        """
        return bandit_grid(ctx, self.convex)

    def plan(self, prm: Mapping[str, Any], ctx: AuditContext) -> PointPlan | Skip:
        """:func:`~dpaudit.papers.st13.plans.bandit_plan` with ``convex``.

        Parameters
        ----------
        prm, ctx
            The parameter point (a row of :meth:`grid`); the driver's audit context.
        """
        return bandit_plan(prm, ctx, self.convex)

    def lemmas(self, ctx: AuditContext, parameters: Sequence[Mapping[str, Any]]) -> LemmaOutcome:
        """Bandit FTAL's lemma checks and the SMT records.

        Parameters
        ----------
        ctx
            The driver's audit context.
        parameters
            The audited points (not used).

        Returns
        -------
        LemmaOutcome
            :func:`~dpaudit.papers.st13.lemmas.bandit_lemmas`, then
            :func:`~dpaudit.papers.st13.smt_lemmas.smt_evidence`'s records.
        """
        return smt_evidence(self.claim.id, ctx, bandit_lemmas(ctx, self.claim.id, self.convex))

    def findings(self, run: ClaimRun) -> list[str]:
        """Why a node moves by up to 2 pB/beta, the largest lower bound, and each reading's verdict.

        Parameters
        ----------
        run
            The driver's finished run.

        Returns
        -------
        list of str
            The sentences; App. E.3 adds the ``"regularised"`` reading's and says when a reading
            had no audited point; the d > 1 note last where a point has ``d > 1``.
        """
        lb = _largest_lower_bound(run.points)
        out = ["Algorithm 3 passes L2-bound pB/beta, but replacing f_t changes its tree input "
               "(p/beta) f_t(w^_t) u_t by up to 2 pB/beta (values +B vs -B), so each node is up to "
               "(2 eps / (ceil(log2 T) + 1))-DP and the accountant gives "
               "2 eps (floor(log2(T-1)) + 1) / (ceil(log2 T) + 1) for the noisy sums. The played "
               "points add the secret directions u_t, so no closed form exists for the release; "
               "the empirical bounds below are the evidence for the release itself.",
               "Largest empirical lower bound relative to the claim: "
               f"{fmt(lb.epsilon_lower_bound)} at {format_parameters(lb.parameters)} (claimed "
               f"{lb.claimed_epsilon:g}); tree-level epsilon of that pair "
               f"{fmt(lb.evidence.get('tree_level_epsilon_of_pair'))}."]
        if not self.convex:
            out.append(group_finding("Algorithm 3 as printed (mu = p B / beta)", run.points))
            return out + _d_finding(run.points)
        out.append("Reading 'regularised' of the tree bound (mu = p (B + H R^2/2) / beta, the "
                   "bound on |h_t|) still lets a replaced f_t move each node by 2 pB/beta, so the "
                   "noisy sums are 2B / (B + H R^2/2) (floor(log2(T-1)) + 1) / (ceil(log2 T) + 1) "
                   "eps-DP on the pair (1.418 eps at T = 33 with Theorem 17's H = 1/T^(1/4) and "
                   "B = R = 1), an upper bound for the release; the reading is audited at the "
                   "horizons 2^k + 1 with more samples per input (regularised_samples).")
        by_reading = _by_reading(run.points)
        for reading in ("loss-bound", "regularised"):
            label = f"tree_bound reading '{reading}'"
            if reading in by_reading:
                out.append(group_finding(label, by_reading[reading]))
            else:
                out.append(f"{label}: no grid point could be audited at this budget (all "
                           "skipped, see below), so it is undecided, NOT shown to be private.")
        return out + _d_finding(run.points)


TREE_AGGREGATION_AUDIT = TreeAggregationAudit(TREE_AGGREGATION)
PFTAL_AUDIT = PFTALAudit(PFTAL_CLAIM)
PFTAL_CONVEX_AUDIT = PFTALAudit(PFTAL_CONVEX_CLAIM, convex=True)
BANDIT_FTAL_AUDIT = BanditFTALAudit(BANDIT_FTAL_CLAIM)
BANDIT_FTAL_CONVEX_AUDIT = BanditFTALAudit(BANDIT_FTAL_CONVEX_CLAIM, convex=True)

register(TREE_AGGREGATION, TREE_AGGREGATION_AUDIT, kind="mechanism")
register(PFTAL_CLAIM, PFTAL_AUDIT)
register(PFTAL_CONVEX_CLAIM, PFTAL_CONVEX_AUDIT)
register(BANDIT_FTAL_CLAIM, BANDIT_FTAL_AUDIT)
register(BANDIT_FTAL_CONVEX_CLAIM, BANDIT_FTAL_CONVEX_AUDIT)
