"""The st13 grids and point plans: where the claim driver audits, and what it runs there
(Smith & Thakurta, NeurIPS 2013, supplementary appendices A-E).

One grid function and one plan function per claim family: Algorithm 2 (``st13/tree-aggregation``),
PFTAL (Algorithm 1 and App. C, ``convex``) and bandit FTAL (Algorithm 3 and App. E.3,
``convex``). A plan gives, at a point of its grid, the claim, the exact epsilon of the worst
realisable pair (:mod:`.exact`; none for the bandit learners, whose secret directions hide the
sums), the accountant's epsilon, one empirical test on the worst-case pair of :mod:`.pairs` with
a likelihood-ratio-shaped statistic, the privacy curve and the calibration that would deliver the
claim. The declarations, lemma checks and findings are in :mod:`dpaudit.papers.st13.audit`, as in
afkt23 and pfcoco; the reading choices are in ``README.md`` beside this file.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

from dpaudit._validation import check_int
from dpaudit.claims.context import AuditContext, coarse
from dpaudit.claims.declaration import EmpiricalPlan, PointPlan, Skip
from dpaudit.claims.evidence import PointEvidence
from dpaudit.learners.domains import Ball
from dpaudit.learners.pftal import PFTAL, PFTALConvex, theorem11_regularisation
from dpaudit.mechanisms.st13_tree_aggregation import st13_node_scale, st13_tree_levels
from dpaudit.mechanisms.tree_aggregation import max_nodes_per_leaf
from dpaudit.papers.st13.exact import (
    accountant_epsilon,
    pair_epsilon,
    pftal_pair_exact_epsilon,
    privacy_curve,
)
from dpaudit.papers.st13.pairs import (
    TRAIN_FRACTION,
    WorstPair,
    bandit_convex_worst_pair,
    bandit_learner,
    bandit_node_statistic,
    bandit_side_is_revealed,
    bandit_worst_pair,
    learner_mechanism,
    pftal_convex_worst_pair,
    pftal_node_statistic,
    pftal_worst_pair,
    released_nodes,
    tree_mechanism,
    tree_node_statistic,
    tree_worst_pair,
)

__all__ = ["tree_aggregation_grid", "tree_aggregation_plan", "pftal_grid", "pftal_plan",
           "bandit_grid", "bandit_plan", "regularised_samples", "REGULARISED_SAMPLES",
           "D_GT_1_NOTE"]

D_GT_1_NOTE = ("d > 1: the worst-case events of an l2-Laplace privacy loss are thin cones around "
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
    return PointEvidence(details=evidence | ({"note": D_GT_1_NOTE} if d > 1 else {}))


# ------------------------------------------------------------------------------------------------
# st13/tree-aggregation
# ------------------------------------------------------------------------------------------------


def tree_aggregation_grid(ctx: AuditContext) -> list[dict[str, Any]]:
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


def tree_aggregation_plan(prm: Mapping[str, Any], ctx: AuditContext) -> PointPlan:
    """The exact, accountant and empirical plan of Algorithm 2 on the pair ``z_1 = +-mu e_1``.

    Every released node containing leaf 1 (``max_nodes_per_leaf(T)`` of them, at the printed
    node scale) moves by ``2 mu``: the exact epsilon is that count times ``2 mu / scale``, and
    the accountant composes the same nodes at sensitivity ``2 mu``. The test is the l2-Laplace
    log-likelihood ratio of those nodes.

    Parameters
    ----------
    prm
        The parameter point (a row of :func:`tree_aggregation_grid`).
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


# ------------------------------------------------------------------------------------------------
# st13/pftal and st13/pftal-convex
# ------------------------------------------------------------------------------------------------

_PFTAL_EXACT_NOTE = ("epsilon_exact: the pure (delta = 0) epsilon of the released points on this "
                     "pair, the essential supremum of their privacy loss "
                     "(pftal_pair_exact_epsilon); for delta > 0 only an upper bound is known (the "
                     "noisy sums' Laplace composition: the projection hides the noise "
                     "magnitudes); the accountant is the worst case over all pairs of the class")


def pftal_grid(ctx: AuditContext, convex: bool) -> list[dict[str, Any]]:
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
    convex
        App. C's PFTAL (``st13/pftal-convex``) rather than Algorithm 1 (``st13/pftal``).

    Returns
    -------
    list of dict
        The parameter points.
    """
    crude = coarse(ctx.budget)
    if convex:
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


def pftal_plan(prm: Mapping[str, Any], ctx: AuditContext, convex: bool) -> PointPlan | Skip:
    """The exact, accountant and empirical plan of PFTAL on its worst-case pair.

    The exact value is the pure epsilon of the released points on the pair
    (:func:`~dpaudit.papers.st13.exact.pftal_pair_exact_epsilon`); the accountant composes
    ``max_nodes_per_leaf(T - 1)`` nodes of sensitivity ``2 min(L, mu)`` (``mu`` the learner's
    tree bound under the point's reading) at the printed node scale; the test inverts the
    released points to the noisy-sum nodes containing the replaced round.

    Parameters
    ----------
    prm
        The parameter point (a row of :func:`pftal_grid`).
    ctx
        The driver's audit context (not used).
    convex
        App. C's PFTAL (``st13/pftal-convex``) rather than Algorithm 1 (``st13/pftal``).

    Returns
    -------
    PointPlan or Skip
        The plan; a skip for App. C where Theorem 11's ``H`` has ``H R > L`` (the worst-case
        pair needs ``H R <= L``).
    """
    T, d, L, H, R, eps = prm["T"], prm["d"], prm["L"], prm["H"], prm["R"], prm["epsilon"]
    tb = prm["tree_bound"]
    if convex and H * R > L:
        return Skip(prm, f"Theorem 11's H = {H:.4g} has H R > L, where the worst-case pair "
                         "(which needs H R <= L) does not exist")
    if convex:
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


def bandit_grid(ctx: AuditContext, convex: bool) -> list[dict[str, Any]]:
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
    convex
        App. E.3 (``st13/bandit-ftal-convex``) rather than Algorithm 3 (``st13/bandit-ftal``).

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
    if not convex:  # Theorem 17 has one schedule for both adversaries
        pts.append({**base, "T": mid, "epsilon": 1.0, "adversary": "adaptive"})
    # d = 2 on the ball of radius 2: at R = 1, beta = 2 / T^(1/3) (or 2 / T^(1/4)) is not below
    # (1 - xi) r for any T <= 64 (256), and the statistic would have no power
    pts.append({**base, "T": mid, "epsilon": 1.0, "d": 2, "R": 2.0})
    if convex:
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


def bandit_plan(prm: Mapping[str, Any], ctx: AuditContext, convex: bool) -> PointPlan | Skip:
    """The accountant and empirical plan of bandit FTAL on its worst-case pair (no exact one).

    The accountant composes ``max_nodes_per_leaf(T - 1)`` nodes of sensitivity
    ``2 min(mu, p B / beta)`` at the printed node scale; the evidence records the exact
    epsilon of the secret noisy sums on the pair (an upper bound for the release). The test
    counts released nodes whose played point lies on the side the replaced input pushes to,
    with :func:`regularised_samples` samples for the ``"regularised"`` reading.

    Parameters
    ----------
    prm
        The parameter point (a row of :func:`bandit_grid`); the plan's parameters add the schedule's
        ``r``, ``beta``, ``xi`` (and, for App. E.3, its ``H``).
    ctx
        The driver's audit context (the budget's samples).
    convex
        App. E.3 (``st13/bandit-ftal-convex``) rather than Algorithm 3 (``st13/bandit-ftal``).

    Returns
    -------
    PointPlan or Skip
        The plan; a skip where the schedule is undefined (the learner raises ValueError) or
        where ``beta >= (1 - xi) r`` (the statistic has no power).
    """
    try:
        learner = bandit_learner(prm, convex)
    except ValueError as err:
        return Skip(prm, f"schedule undefined: {err}")
    beta, xi, r = learner.sampling_radius, learner.shrink, learner.inner_radius
    if not bandit_side_is_revealed(learner):
        return Skip(prm, f"beta = {beta:.4g} >= (1 - xi) r = {(1 - xi) * r:.4g}: the secret "
                         "direction u, not the centre w_dagger, decides the side of the "
                         "played point, so the statistic has no power here")
    prm = {**prm, "r": r, "beta": beta, "xi": xi}
    if convex:
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
