"""Declarations of the five Smith & Thakurta (NeurIPS 2013) claims for the claim driver.

Importing this module registers ``st13/tree-aggregation``, ``st13/pftal``, ``st13/pftal-convex``,
``st13/bandit-ftal`` and ``st13/bandit-ftal-convex`` with :func:`dpaudit.claims.registry.register`;
:func:`dpaudit.claims.driver.run_claim` audits them. Each declaration says, per grid point,
the claim, the exact epsilon of the worst realisable pair (:mod:`.exact`; none for the bandit
learners, whose secret directions hide the sums), the accountant's epsilon, and one empirical test
on the worst-case pair of :mod:`.pairs` with a likelihood-ratio-shaped statistic; every audited
point is tested (``tested_points`` is ``None``). The lemma checks are in :mod:`.lemmas`; what the
paper claims, the reading choices and the audit method are in ``README.md`` beside this file.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from dpaudit._validation import check_int
from dpaudit.claims.evidence import EXACT_TOLERANCE, GridPoint, PointEvidence
from dpaudit.claims.verdict import format_parameters
from dpaudit.claims.declaration import (ClaimRun, Declaration, EmpiricalPlan, PointPlan,
                                        Skip)
from dpaudit.claims.context import coarse
from dpaudit.claims.formatting import fmt
from dpaudit.claims.evidence import LemmaOutcome
from dpaudit.claims.context import AuditContext, Budget
from dpaudit.claims.registry import register
from dpaudit.claims import PrivacyClaim
from dpaudit.learners.domains import Ball
from dpaudit.learners.pftal import PFTAL, PFTALConvex, theorem11_regularisation
from dpaudit.mechanisms.st13_tree_aggregation import st13_node_scale, st13_tree_levels
from dpaudit.mechanisms.tree_aggregation import max_nodes_per_leaf
from dpaudit.papers.st13.claims import (
    BANDIT_FTAL_CLAIM,
    BANDIT_FTAL_CONVEX_CLAIM,
    PFTAL_CLAIM,
    PFTAL_CONVEX_CLAIM,
    TREE_AGGREGATION,
)
from dpaudit.papers.st13.exact import (
    accountant_epsilon,
    pair_epsilon,
    pftal_pair_exact_epsilon,
    privacy_curve,
)
from dpaudit.papers.st13.lemmas import (
    bandit_lemmas,
    pftal_convex_lemmas,
    pftal_lemmas,
    tree_lemmas,
)
from dpaudit.papers.st13.smt_lemmas import smt_evidence
from dpaudit.papers.st13.pairs import (
    TRAIN_FRACTION,
    WorstPair,
    bandit_convex_worst_pair,
    bandit_learner,
    bandit_node_statistic,
    bandit_worst_pair,
    bandit_side_is_revealed,
    learner_mechanism,
    pftal_convex_worst_pair,
    pftal_node_statistic,
    pftal_worst_pair,
    released_nodes,
    tree_mechanism,
    tree_node_statistic,
    tree_worst_pair,
)

__all__ = ["TreeAggregationAudit", "PFTALAudit", "BanditFTALAudit", "TREE_AGGREGATION_AUDIT",
           "PFTAL_AUDIT", "PFTAL_CONVEX_AUDIT", "BANDIT_FTAL_AUDIT", "BANDIT_FTAL_CONVEX_AUDIT",
           "group_finding", "regularised_samples", "REGULARISED_SAMPLES"]

_D_GT_1_NOTE = ("d > 1: the worst-case events of an l2-Laplace privacy loss are thin cones around "
                "the shift direction, so black-box bounds in d > 1 are weak; d = 1 gives the most "
                "powerful audits")
_LLR_TEST = "worst-case pair (pairs.py), l2-Laplace node likelihood-ratio statistic"

#: Samples per input for the ``"regularised"`` reading of ``st13/bandit-ftal-convex`` (capped at
#: ten times the budget's): its tree-level epsilon exceeds the claim by a smaller factor than the
#: printed reading's, and the budget's samples alone leave it undecided.
REGULARISED_SAMPLES = 400_000


def regularised_samples(budget_samples: int) -> int:
    """Samples per input of the ``"regularised"`` reading: ``max(n, min(400000, 10 n))``.

    Parameters
    ----------
    budget_samples
        The budget's samples per input ``n`` (quick 20000, standard 200000, thorough 2000000,
        which give 200000, 400000 and 2000000).

    Returns
    -------
    int
        The samples per input.

    Raises
    ------
    ValueError
        If ``budget_samples`` is not an integer >= 1.
    """
    n = check_int(budget_samples, "budget_samples", minimum=1)
    return max(n, min(REGULARISED_SAMPLES, 10 * n))


def _recommend(bound_name: str) -> Callable[[], str]:
    return lambda: (
        f"Calibrate Algorithm 2 for the replace-one relation: pass 2 x ({bound_name}) as its "
        f"L2-bound, i.e. node scale s = 2 {bound_name} (ceil(log2 T) + 1) / eps (enough: a "
        f"replaced input moves each of at most floor(log2 T) + 1 <= ceil(log2 T) + 1 released "
        f"nodes by at most 2 {bound_name}; the exact accountant then gives at most eps).")


def _horizons(ctx: AuditContext, coarse_Ts: Sequence[int], full_Ts: Sequence[int]) -> list[int]:
    Ts = coarse_Ts if coarse(ctx.budget) else full_Ts
    return [T for T in Ts if T <= max(ctx.budget.max_T, min(Ts))]


def _d_note(evidence: dict[str, Any], d: int) -> PointEvidence:
    """The point's record: the paper's entries, with the note on ``d > 1`` where it applies."""
    return PointEvidence(details=evidence | ({"note": _D_GT_1_NOTE} if d > 1 else {}))


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
    return (["Grid points with " + _D_GT_1_NOTE + "."]
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
        """The audited points (T, d, epsilon, mu = 1) of Algorithm 2.

        Coarse: T in {1, 8, 9, 64} at epsilon 1, epsilon 0.1 and 4 at T = 8, and d = 3. Full:
        T in {1, 2, 3, 8, 9, 64, 256}, epsilon from 0.1 to 4, and d = 3 at T = 8 and 64 (T = 8 and
        9: the exact epsilon depends on ``floor`` and ``ceil`` of ``log2 T``).

        Parameters
        ----------
        ctx
            The driver's audit context: ``ctx.budget``'s grid (coarse or full) and ``max_T``
            (horizons above it are dropped, the smallest kept).

        Returns
        -------
        list of dict
            The parameter points.
        """
        if coarse(ctx.budget):
            pts = [(1, 1, 1.0), (8, 1, 1.0), (9, 1, 1.0), (64, 1, 1.0), (8, 1, 0.1), (8, 1, 4.0),
                   (8, 3, 1.0)]
        else:
            pts = [(T, 1, 1.0) for T in (1, 2, 3, 8, 9, 64, 256)]
            pts += [(8, 1, 0.1), (8, 1, 0.5), (8, 1, 2.0), (8, 1, 4.0), (64, 1, 4.0), (8, 3, 1.0),
                    (64, 3, 1.0)]
        return [{"T": T, "d": d, "epsilon": e, "mu": 1.0} for T, d, e in pts
                if T <= max(ctx.budget.max_T, 1)]

    def plan(self, prm: Mapping[str, Any], ctx: AuditContext) -> PointPlan:
        """The exact, accountant and empirical plan of Algorithm 2 on the pair ``z_1 = +-mu e_1``.

        Every released node containing leaf 1 (``max_nodes_per_leaf(T)`` of them, at the printed
        node scale) moves by ``2 mu``: the exact epsilon is that count times ``2 mu / scale``, and
        the accountant composes the same nodes at sensitivity ``2 mu``. The test is the l2-Laplace
        log-likelihood ratio of those nodes.

        Parameters
        ----------
        prm
            The parameter point (a row of :meth:`grid`).
        ctx
            The driver's audit context (not used).

        Returns
        -------
        PointPlan
            The plan, with the calibration for the replace-one relation (L2-bound ``2 mu``).
        """
        T, d, eps, mu = prm["T"], prm["d"], prm["epsilon"], prm["mu"]
        s = st13_node_scale(mu, eps, T)
        z0, z1 = tree_worst_pair(T, d, mu)
        count = max_nodes_per_leaf(T)
        evidence = {"pair": "z_1 = mu e_1 vs -mu e_1, other leaves 0", "node_scale": s,
                    "released_nodes_containing_leaf_1": count,
                    "printed_nodes_per_leaf": st13_tree_levels(T),
                    "per_node_epsilon_exact": 2 * mu / s,
                    "per_node_epsilon_claimed_by_proof": eps / st13_tree_levels(T)}
        return PointPlan(
            parameters=prm, claimed_epsilon=eps, claimed_delta=0.0,
            exact=pair_epsilon(count, 2 * mu, s), accountant=accountant_epsilon(count, 2 * mu, s),
            empirical=EmpiricalPlan(
                mechanism=tree_mechanism(T, d, mu, eps), data0=z0, data1=z1,
                statistic=tree_node_statistic(T, z0, z1, s), train_fraction=TRAIN_FRACTION,
                statistic_name="l2-Laplace log likelihood ratio of the released nodes "
                               "containing leaf 1", what=_LLR_TEST),
            curve=lambda: privacy_curve(count, 2 * mu, s, count_pair=count, shift_pair=2 * mu,
                                        d=d, exact_at_zero=pair_epsilon(count, 2 * mu, s),
                                        release_is_sums=True),
            recommendation=_recommend("mu"), evidence=_d_note(evidence, d))

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

_PFTAL_EXACT_NOTE = ("epsilon_exact: the pure (delta = 0) epsilon of the released points on this "
                     "pair, the essential supremum of their privacy loss "
                     "(pftal_pair_exact_epsilon); for delta > 0 only an upper bound is known (the "
                     "noisy sums' Laplace composition: the projection hides the noise "
                     "magnitudes); the accountant is the worst case over all pairs of the class")


@dataclass(frozen=True)
class PFTALAudit(_Declaration):
    """Algorithm 1 (Theorem 3) or, with ``convex``, App. C's PFTAL on ``h_t = f_t + H/2 ||w||^2``
    (Theorem 11's ``H``), both readings of the tree bound; exact epsilon of the release on the
    pair of :func:`pftal_worst_pair` / :func:`pftal_convex_worst_pair`."""

    convex: bool = False

    def grid(self, ctx: AuditContext) -> list[dict[str, Any]]:
        """The audited points of PFTAL (T, d, epsilon, tree_bound, L, R, H; Alg. 1 also rho).

        Algorithm 1: L = R = 1 and ``H = rho`` (``rho = H R / L``); horizons 3, 9, 33 (coarse) or
        3 to 256 (full) at epsilon 1, rho 0.05 and the ``"lipschitz"`` reading, and at the middle
        horizon (33 where audited) other epsilons and rho, the ``"lipschitz+H|C|"`` reading and
        d = 2 (full: also d = 3 at epsilon 4). App. C: L = 1 and Theorem 11's ``H`` at each point
        (:func:`~dpaudit.learners.pftal.theorem11_regularisation`); both readings at R = 1 and
        0.05 at the middle horizon, the other horizons, epsilons and d = 2 at R = 0.05.

        Parameters
        ----------
        ctx
            The driver's audit context: ``ctx.budget``'s grid (coarse or full) and ``max_T``
            (horizons above it are dropped, the smallest kept).

        Returns
        -------
        list of dict
            The parameter points.
        """
        crude = coarse(ctx.budget)
        if self.convex:
            Ts = _horizons(ctx, (9, 33), (3, 9, 33, 129, 256))
            mid = 33 if 33 in Ts else max(Ts)
            pts = [{"T": mid, "d": 1, "epsilon": 1.0, "R": R, "tree_bound": tb}
                   for tb in ("lipschitz+H|C|", "lipschitz") for R in (1.0, 0.05)]
            pts += [{"T": T, "d": 1, "epsilon": 1.0, "R": 0.05, "tree_bound": "lipschitz+H|C|"}
                    for T in Ts if T != mid]
            pts += [{"T": mid, "d": 1, "epsilon": e, "R": 0.05, "tree_bound": "lipschitz+H|C|"}
                    for e in ((4.0,) if crude else (0.3, 2.0, 4.0))]
            pts.append({"T": mid, "d": 2, "epsilon": 1.0, "R": 0.05,
                        "tree_bound": "lipschitz+H|C|"})
            for p in pts:
                p["L"] = 1.0
                p["H"] = theorem11_regularisation(p["d"], p["T"], p["epsilon"])
                p["H_source"] = "Theorem 11: sqrt(p log^2.5 T / (eps T))"
            return pts
        Ts = _horizons(ctx, (3, 9, 33), (3, 5, 9, 17, 33, 65, 129, 256))
        mid = 33 if 33 in Ts else max(Ts)
        base = {"d": 1, "epsilon": 1.0, "rho": 0.05, "tree_bound": "lipschitz"}
        pts = [{**base, "T": T} for T in Ts]
        pts += [{**base, "T": mid, "epsilon": e} for e in ((0.3, 4.0) if crude else
                                                           (0.1, 0.3, 2.0, 4.0))]
        pts += [{**base, "T": mid, "rho": r} for r in ((0.5,) if crude else (0.3, 0.5, 0.9))]
        pts += [{**base, "T": mid, "tree_bound": "lipschitz+H|C|"}, {**base, "T": mid, "d": 2}]
        if not crude:
            pts.append({**base, "T": mid, "d": 3, "epsilon": 4.0})
        # key order of the records: T, d, epsilon, rho, tree_bound, L, R, H
        pts = [{k: p[k] for k in ("T", "d", "epsilon", "rho", "tree_bound")} for p in pts]
        for p in pts:
            p.update({"L": 1.0, "R": 1.0, "H": p["rho"] * 1.0 / 1.0})
        return pts

    def plan(self, prm: Mapping[str, Any], ctx: AuditContext) -> PointPlan | Skip:
        """The exact, accountant and empirical plan of PFTAL on its worst-case pair.

        The exact value is the pure epsilon of the released points on the pair
        (:func:`~dpaudit.papers.st13.exact.pftal_pair_exact_epsilon`); the accountant composes
        ``max_nodes_per_leaf(T - 1)`` nodes of sensitivity ``2 min(L, mu)`` (``mu`` the learner's
        tree bound under the point's reading) at the printed node scale; the test inverts the
        released points to the noisy-sum nodes containing the replaced round.

        Parameters
        ----------
        prm
            The parameter point (a row of :meth:`grid`).
        ctx
            The driver's audit context (not used).

        Returns
        -------
        PointPlan or Skip
            The plan; a skip for App. C where Theorem 11's ``H`` has ``H R > L`` (the worst-case
            pair needs ``H R <= L``).
        """
        T, d, L, H, R, eps = prm["T"], prm["d"], prm["L"], prm["H"], prm["R"], prm["epsilon"]
        tb = prm["tree_bound"]
        if self.convex and H * R > L:
            return Skip(prm, f"Theorem 11's H = {H:.4g} has H R > L, where the worst-case pair "
                             "(which needs H R <= L) does not exist")
        if self.convex:
            def factory() -> PFTAL:
                return PFTALConvex(Ball(d, R), L, H, eps, T, tree_bound=tb)
            pair = pftal_convex_worst_pair(d, T, L)
        else:
            def factory() -> PFTAL:
                return PFTAL(Ball(d, R), H, L, eps, T, tree_bound=tb)
            pair = pftal_worst_pair(d, T, L, H, R)
        learner = factory()
        mu = learner.tree_bound
        worst_count, sens = max_nodes_per_leaf(T - 1), 2 * min(L, mu)
        scale = st13_node_scale(mu, eps, pair.T)
        exact = pftal_pair_exact_epsilon(learner, pair)
        count = len(released_nodes(pair.position, pair.T))
        evidence = {"pair": pair.description, "replaced_round": pair.position,
                    "tree_bound_mu": mu, "node_scale": scale,
                    "released_nodes_containing_replaced_leaf": count,
                    "max_released_nodes_per_leaf": worst_count, "node_shift": pair.node_shift,
                    "accountant_sensitivity": sens, "exact_note": _PFTAL_EXACT_NOTE}
        return PointPlan(
            parameters=prm, claimed_epsilon=eps, claimed_delta=0.0, exact=exact,
            accountant=accountant_epsilon(worst_count, sens, scale),
            empirical=_learner_test(factory, pair, pftal_node_statistic(learner, pair),
                                    "l2-Laplace log likelihood ratio of the noisy-sum nodes "
                                    "containing the replaced round, inverted from the released "
                                    "points", _LLR_TEST),
            curve=lambda: privacy_curve(worst_count, sens, scale, count_pair=count,
                                        shift_pair=min(pair.node_shift, 2 * mu), d=d,
                                        exact_at_zero=exact, release_is_sums=False),
            recommendation=_recommend("L"), evidence=_d_note(evidence, d))

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


def _learner_test(factory: Callable[[], Any], pair: WorstPair,
                  statistic: Callable[..., Any], name: str, what: str,
                  samples: int | None = None) -> EmpiricalPlan:
    return EmpiricalPlan(mechanism=learner_mechanism(factory), data0=pair.stream0,
                         data1=pair.stream1, statistic=statistic, statistic_name=name, what=what,
                         samples=samples, train_fraction=TRAIN_FRACTION)


# ------------------------------------------------------------------------------------------------
# st13/bandit-ftal and st13/bandit-ftal-convex
# ------------------------------------------------------------------------------------------------

_INNER_RADIUS_NOTE = ("C = R B^p and r = R: the theorems' 0 < r < R holds with any outer radius "
                      "above R, which enters only the regret bounds (Algorithm 3 uses "
                      "xi = beta / r)")
_TREE_LEVEL_NOTE = ("exact epsilon of the secret noisy sums v_dagger (and u_t) on this pair; the "
                    "played points are a randomised post-processing of them, so this is an upper "
                    "bound for the release, not its exact epsilon")


@dataclass(frozen=True)
class BanditFTALAudit(_Declaration):
    """Algorithm 3 (Theorem 5, Theorem 6's schedules) or, with ``convex``, App. E.3 (Theorem 17's
    schedule, both readings of the tree bound). No exact value for the release; the verdict rests
    on the accountant and the empirical bounds. Points where the schedule is undefined or the
    statistic has no power (``beta >= (1 - xi) r``) are skipped with the reason."""

    convex: bool = False

    def grid(self, ctx: AuditContext) -> list[dict[str, Any]]:
        """The audited points of bandit FTAL (T, epsilon, d, B, R, and H or tree_bound).

        Horizons 9, 17, 33, 64 (coarse) or 9 to 256 (full) at epsilon 1, d = 1, B = R = 1; at
        the middle horizon other epsilons and d = 2 on the ball of radius 2. Algorithm 3: an
        oblivious adversary and ``H = 0.04``, plus, at the middle horizon, an adaptive adversary
        and a point with ``H = 1``. App. E.3: the ``"loss-bound"`` reading at those points and the
        ``"regularised"`` one at the horizons ``2^k + 1`` (k >= 5) up to ``max_T`` (33 if none).

        Parameters
        ----------
        ctx
            The driver's audit context: ``ctx.budget``'s grid (coarse or full) and ``max_T``
            (horizons above it are dropped, the smallest kept).

        Returns
        -------
        list of dict
            The parameter points.
        """
        # T = 17 is in the coarse grid too: Theorem 17's T = 9 is skipped in d = 1 (beta = 0.577 >=
        # (1 - xi) r), and T = 17 is the most powerful short horizon of both claims
        Ts = _horizons(ctx, (9, 17, 33, 64), (9, 17, 33, 65, 129, 256))
        mid = 33 if 33 in Ts else max(Ts)
        base = {"d": 1, "B": 1.0, "R": 1.0, "adversary": "oblivious"}
        pts = [{**base, "T": T, "epsilon": 1.0} for T in Ts]
        pts += [{**base, "T": mid, "epsilon": e} for e in ((0.3, 4.0) if coarse(ctx.budget) else
                                                           (0.3, 0.5, 2.0, 4.0))]
        if not self.convex:  # Theorem 17 has one schedule for both adversaries
            pts.append({**base, "T": mid, "epsilon": 1.0, "adversary": "adaptive"})
        # d = 2 on the ball of radius 2: at R = 1, beta = 2 / T^(1/3) (or 2 / T^(1/4)) is not below
        # (1 - xi) r for any T <= 64 (256), and the statistic would have no power
        pts.append({**base, "T": mid, "epsilon": 1.0, "d": 2, "R": 2.0})
        if self.convex:
            for p in pts:
                p["tree_bound"] = "loss-bound"
                p.pop("adversary")
            # horizons 2^k + 1 (k >= 5) up to max_T (at least 33): at T = 2^k + 1 the release
            # contains k + 1 of the k + 2 printed levels, the most a horizon of that size allows
            reg = [2 ** k + 1 for k in range(5, 31) if 2 ** k + 1 <= ctx.budget.max_T] or [33]
            pts += [{"d": 1, "B": 1.0, "R": 1.0, "T": T, "epsilon": 1.0,
                     "tree_bound": "regularised"} for T in reg]
        else:
            pts.append({**base, "T": mid, "epsilon": 1.0, "H": 1.0})
            for p in pts:
                p.setdefault("H", 0.04)
        return pts

    def plan(self, prm: Mapping[str, Any], ctx: AuditContext) -> PointPlan | Skip:
        """The accountant and empirical plan of bandit FTAL on its worst-case pair (no exact one).

        The accountant composes ``max_nodes_per_leaf(T - 1)`` nodes of sensitivity
        ``2 min(mu, p B / beta)`` at the printed node scale; the evidence records the exact
        epsilon of the secret noisy sums on the pair (an upper bound for the release). The test
        counts released nodes whose played point lies on the side the replaced input pushes to,
        with :func:`regularised_samples` samples for the ``"regularised"`` reading.

        Parameters
        ----------
        prm
            The parameter point (a row of :meth:`grid`); the plan's parameters add the schedule's
            ``r``, ``beta``, ``xi`` (and, for App. E.3, its ``H``).
        ctx
            The driver's audit context (the budget's samples).

        Returns
        -------
        PointPlan or Skip
            The plan; a skip where the schedule is undefined (the learner raises ValueError) or
            where ``beta >= (1 - xi) r`` (the statistic has no power).
        """
        try:
            learner = bandit_learner(prm, self.convex)
        except ValueError as err:
            return Skip(prm, f"schedule undefined: {err}")
        beta, xi, r = learner.sampling_radius, learner.shrink, learner.inner_radius
        if not bandit_side_is_revealed(learner):
            return Skip(prm, f"beta = {beta:.4g} >= (1 - xi) r = {(1 - xi) * r:.4g}: the secret "
                             "direction u, not the centre w_dagger, decides the side of the "
                             "played point, so the statistic has no power here")
        prm = {**prm, "r": r, "beta": beta, "xi": xi}
        if self.convex:
            prm["H"] = learner.regularisation
            pair = bandit_convex_worst_pair(prm["d"], prm["T"], prm["B"], prm["H"], prm["R"])
        else:
            pair = bandit_worst_pair(prm["d"], prm["T"], prm["B"], prm["H"], prm["R"])
        T, d, eps, mu = prm["T"], prm["d"], prm["epsilon"], learner.tree_bound
        scale = st13_node_scale(mu, eps, T)
        count, worst_count = len(released_nodes(1, T)), max_nodes_per_leaf(T - 1)
        sens = 2 * min(mu, d * prm["B"] / beta)
        shift = min(d * pair.node_shift / beta, 2 * mu)
        samples = (regularised_samples(ctx.budget.samples)
                   if prm.get("tree_bound") == "regularised" else ctx.budget.samples)
        evidence = {"pair": pair.description, "tree_bound_mu": mu, "node_scale": scale,
                    "inner_radius_note": _INNER_RADIUS_NOTE,
                    "released_nodes_containing_round_1": count,
                    "max_released_nodes_per_leaf": worst_count,
                    "tree_level_epsilon_of_pair": pair_epsilon(count, shift, scale),
                    "tree_level_note": _TREE_LEVEL_NOTE, "accountant_sensitivity": sens,
                    "samples_per_input": samples}
        convex = self.convex
        return PointPlan(
            parameters=prm, claimed_epsilon=eps, claimed_delta=0.0,
            accountant=accountant_epsilon(worst_count, sens, scale),
            empirical=_learner_test(lambda: bandit_learner(prm, convex), pair,
                                    bandit_node_statistic(learner, pair),
                                    "number of released nodes whose played point lies on the side "
                                    "the replaced input pushes to",
                                    "worst-case pair (pairs.py), node side-count statistic",
                                    samples),
            curve=lambda: privacy_curve(worst_count, sens, scale, count_pair=count,
                                        shift_pair=shift, d=d, exact_at_zero=None,
                                        release_is_sums=False),
            recommendation=_recommend("p B / beta"), evidence=_d_note(evidence, d))

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
