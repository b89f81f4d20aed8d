"""Tests of the Smith-Thakurta 2013 auditors (``dpaudit.papers.st13``: pairs, exact, lemmas, audit).

The auditors run at a tiny budget here; statistical tests use fixed seeds and say why their margins
are safe. The longer campaign (quick budget, every claim) is marked slow.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats

from dpaudit.papers.st13 import audit as st13
from dpaudit.papers.st13 import exact as st13_exact
from dpaudit.papers.st13 import lemmas, pairs
from dpaudit.formal.accounting import laplace_epsilon, tree_leaf_epsilon
from dpaudit.blackbox.empirical_audit import audit
from dpaudit.claims.evidence import GridPoint
from dpaudit.claims.driver import PointPlan, Skip
from dpaudit.claims.context import BUDGETS, AuditContext, Budget
from dpaudit.claims.registry import get
from dpaudit.learners.bandit_ftal import (
    PrivateBanditFTAL,
    PrivateBanditFTALConvex,
    theorem17_schedule,
)
from dpaudit.learners.domains import Ball
from dpaudit.learners.losses import LinearLoss
from dpaudit.learners.pftal import PFTAL, L2Regularised, PFTALConvex
from dpaudit.papers.st13.claims import ST13_CLAIMS
from dpaudit.mechanisms.st13_tree_aggregation import st13_node_scale
from dpaudit.mechanisms.st13_tree_aggregation import ST13TreeAggregator
from dpaudit.mechanisms.tree_aggregation import NodeNoise, max_nodes_per_leaf, nodes_containing

TINY = Budget("tiny", samples=3_000, sensitivity_examples=10, grid="coarse", max_T=33)


def _ctx(seed: int = 0, progress=None) -> AuditContext:
    kw = {} if progress is None else {"progress": progress}
    return AuditContext(TINY, seed=seed, **kw)


# ------------------------------------------------------------------------------------------------
# Registration and exact accounting
# ------------------------------------------------------------------------------------------------


def test_every_claim_is_registered_with_its_auditor():
    for claim in ST13_CLAIMS:
        entry = get(claim.id)
        assert entry.claim == claim
    assert get("st13/tree-aggregation").kind == "mechanism"
    assert get("st13/pftal").audit.declaration is st13.PFTAL_AUDIT


@pytest.mark.parametrize("T", [1, 2, 3, 4, 5, 8, 9, 64, 100])
@pytest.mark.parametrize("eps", [0.1, 1.0, 3.0])
def test_tree_exact_epsilon_closed_form_and_accountant(T, eps):
    """Replace-one with ||z|| <= mu: each released node moves by 2 mu, a leaf lies in
    floor(log2 T) + 1 of them, the printed scale is mu (ceil(log2 T) + 1) / eps."""
    mu = 1.7
    s = st13_node_scale(mu, eps, T)
    count = math.floor(math.log2(T)) + 1
    exact = st13_exact.pair_epsilon(count, 2 * mu, s)
    assert exact == pytest.approx(2 * eps * count / (math.ceil(math.log2(T)) + 1), rel=1e-12)
    assert st13_exact.accountant_epsilon(count, 2 * mu, s) == pytest.approx(exact, rel=1e-12)
    # d = 1 cross-check: the PLD of count Laplace mechanisms (pessimistic, within ~1e-4/piece)
    assert laplace_epsilon([s / (2 * mu)] * count, 1e-12) == pytest.approx(exact, abs=2e-3)
    # ... and the claim fails exactly when more than half of the printed levels are released
    assert (exact > eps) == (2 * count > math.ceil(math.log2(T)) + 1)


def test_tree_statistic_is_the_exact_likelihood_ratio():
    T, mu, eps = 8, 1.0, 1.0
    s = st13_node_scale(mu, eps, T)
    z0, z1 = pairs.tree_worst_pair(T, 1, mu)
    mech = pairs.tree_mechanism(T, 1, mu, eps)
    stat = pairs.tree_node_statistic(T, z0, z1, s)
    v0 = mech(z0, 20_000, np.random.default_rng(0))
    scores = stat(v0)
    exact = st13_exact.pair_epsilon(4, 2 * mu, s)
    assert scores.max() == pytest.approx(exact, abs=1e-9)
    # the top atom is "every node beyond its centre": probability 2^-4 under z0 (binomial test,
    # p > 1e-3 at a fixed seed; a correct implementation fails with probability 1e-3)
    top = int(np.sum(scores >= exact - 1e-9))
    assert stats.binomtest(top, 20_000, 2.0 ** -4).pvalue > 1e-3


@pytest.mark.parametrize("T", [3, 5, 9, 33])
@pytest.mark.parametrize("rho", [0.05, 0.5])
def test_pftal_pair_exact_epsilon_closed_form(T, rho):
    L, R, eps = 2.0, 0.5, 1.3
    H = rho * L / R
    learner = PFTAL(Ball(1, R), H, L, eps, T)
    pair = pairs.pftal_worst_pair(1, T, L, H, R)
    expected = 2 * (1 - rho) * eps * math.floor(math.log2(T - 1)) / (math.ceil(math.log2(T)) + 1)
    assert st13_exact.pftal_pair_exact_epsilon(learner, pair) == pytest.approx(expected, rel=1e-12)
    wide = PFTAL(Ball(1, R), H, L, eps, T, tree_bound="lipschitz+H|C|")
    assert st13_exact.pftal_pair_exact_epsilon(wide, pair) == pytest.approx(
        expected * L / (L + H * R), rel=1e-12)


@pytest.mark.parametrize("T", [1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 33])
def test_released_nodes_are_the_tree_aggregation_node_sets(T):
    """Algorithm 2 (root read as a left child) releases, for every leaf, exactly
    ``nodes_containing(leaf, T)`` of the binary mechanism, at most ``max_nodes_per_leaf(T)`` of
    them; a learner of horizon T releases ``v_1 .. v_{T-1}`` only, so ``released_nodes`` is the
    same set at horizon ``T - 1`` (empty for the last round)."""
    tree = ST13TreeAggregator(T, 1, 1.0, 1.0, 1, np.random.default_rng(0), record=True)
    for _ in range(T):
        tree.add(np.zeros(1))
    used = {node for nodes in tree.released_nodes for node in nodes}
    for leaf in range(1, T + 1):
        assert sorted(n for n in used if n.contains(leaf)) == sorted(nodes_containing(leaf, T))
        learner_nodes = {n for nodes in tree.released_nodes[:T - 1] for n in nodes
                         if n.contains(leaf)}
        assert sorted(pairs.released_nodes(leaf, T)) == sorted(learner_nodes)
    most = max(len(nodes_containing(leaf, T)) for leaf in range(1, T + 1))
    assert most == max_nodes_per_leaf(T) == math.floor(math.log2(T)) + 1


def test_pftal_pair_members_of_the_class():
    L, H, R, d = 1.0, 0.2, 1.0, 2
    pair = pairs.pftal_worst_pair(d, 9, L, H, R)
    for f in pair.stream0 + pair.stream1:
        assert f.lipschitz(Ball(d, R)) <= L + 1e-12 and f.strong_convexity == pytest.approx(H)
    with pytest.raises(ValueError, match="H R < L"):
        pairs.pftal_worst_pair(1, 9, 1.0, 2.0, 1.0)
    with pytest.raises(ValueError, match="T must be"):
        pairs.pftal_worst_pair(1, 2, 1.0, 0.1, 1.0)
    bp = pairs.bandit_worst_pair(1, 9, 1.0, 0.5, 1.0)
    grid = np.linspace(-1, 1, 101)[:, None]
    for f in bp.stream0 + bp.stream1:
        assert np.all(np.abs(f.value(grid)) <= 1.0 + 1e-12)
    assert bp.node_shift == pytest.approx(2 - 0.25)


def test_pftal_pair_exactness_is_realised_by_the_release():
    """The event "every released node containing round 2 lies beyond its F-centre", computed from
    the released points alone, has probability 2^-k under F and 2^-k exp(-eps_exact) under F'
    (k = 5 nodes at T = 33). Binomial tests at a fixed seed, p > 1e-3 each (a correct
    implementation fails either with probability about 2e-3)."""
    T, L, H, R, eps, n = 33, 1.0, 0.05, 1.0, 1.0, 60_000
    factory = lambda: PFTAL(Ball(1, R), H, L, eps, T)  # noqa: E731
    pair = pairs.pftal_worst_pair(1, T, L, H, R)
    exact = st13_exact.pftal_pair_exact_epsilon(factory(), pair)
    stat = pairs.pftal_node_statistic(factory(), pair)
    k = len(pairs.released_nodes(2, T))
    assert k == 5
    x0 = factory().run(pair.stream0, n, np.random.default_rng(1))
    x1 = factory().run(pair.stream1, n, np.random.default_rng(2))
    top0 = int(np.sum(stat(x0) >= exact - 1e-9))
    top1 = int(np.sum(stat(x1) >= exact - 1e-9))
    assert stats.binomtest(top0, n, 2.0 ** -k).pvalue > 1e-3
    assert stats.binomtest(top1, n, 2.0 ** -k * math.exp(-exact)).pvalue > 1e-3


def test_pftal_convex_exact_epsilon_under_both_readings():
    T, L, R, eps = 17, 1.0, 0.1, 1.0
    H = 0.8
    pair = pairs.pftal_convex_worst_pair(1, T, L)
    for reading, mu in (("lipschitz+H|C|", L + H * R), ("lipschitz", L)):
        learner = PFTALConvex(Ball(1, R), L, H, eps, T, tree_bound=reading)
        expected = 4 * 2 * L * eps / (mu * 6)  # floor(log2 16) = 4 nodes, ceil(log2 17) + 1 = 6
        assert st13_exact.pftal_pair_exact_epsilon(learner, pair) == pytest.approx(expected,
                                                                                  rel=1e-12)


def test_pftal_pair_exactness_checks_every_common_round():
    """Only round 2 may differ, and every round t >= 3 (not just round 3) must be f_0."""
    T, L, H, R = 9, 1.0, 0.05, 1.0
    learner = PFTAL(Ball(1, R), H, L, 1.0, T)
    pair = pairs.pftal_worst_pair(1, T, L, H, R)
    odd = L2Regularised(LinearLoss(np.array([0.3])), H)
    late = pairs.WorstPair(pair.stream0[:-1] + (odd,), pair.stream1[:-1] + (odd,), 2,
                          pair.node_shift, "last round not f_0")
    with pytest.raises(ValueError, match="round 9 must have gradient H w"):
        st13_exact.pftal_pair_exact_epsilon(learner, late)
    split = pairs.WorstPair(pair.stream0, pair.stream1[:5] + (odd,) + pair.stream1[6:], 2,
                           pair.node_shift, "round 6 differs")
    with pytest.raises(ValueError, match="round 6 differs"):
        st13_exact.pftal_pair_exact_epsilon(learner, split)


def test_convex_lipschitz_reading_exact_value_is_an_essential_supremum():
    """Reading 'lipschitz' (mu = L) clips one of the two inputs whenever w^_2 != 0, so the node
    shift 2L - H|w^_2| is below 2L almost surely and tends to it as w^_2 -> 0; the exact value is
    the supremum count * 2L / s."""
    T, L, R, H, eps = 17, 1.0, 0.1, 0.8, 1.0
    learner = PFTALConvex(Ball(1, R), L, H, eps, T, tree_bound="lipschitz")
    pair = pairs.pftal_convex_worst_pair(1, T, L)
    w = np.array([[0.05], [-0.02], [1e-9]])
    zF = np.clip(L + H * w, -L, L)
    zG = np.clip(-L + H * w, -L, L)
    np.testing.assert_allclose(np.abs(zF - zG)[:, 0], 2 * L - H * np.abs(w[:, 0]))
    s = st13_node_scale(L, eps, T)
    assert st13_exact.pftal_pair_exact_epsilon(learner, pair) == pytest.approx(4 * 2 * L / s,
                                                                              rel=1e-12)


def test_accountant_cross_checks_dp_accounting():
    s, sens, k = 3.0, 2.0, 5
    assert st13_exact.accountant_epsilon(k, sens, s) == pytest.approx(k * sens / s)
    assert st13_exact.accountant_epsilon(0, sens, s) == 0.0
    assert st13_exact.accountant_epsilon(k, sens, s, 1e-6) <= k * sens / s
    assert st13_exact.accountant_epsilon(k, sens, s, 1e-6) == pytest.approx(
        tree_leaf_epsilon("l2-laplace", s, sens, k, 1e-6))


# ------------------------------------------------------------------------------------------------
# The checks must have power and must not raise false alarms
# ------------------------------------------------------------------------------------------------


def _bandit_grid(budget: str, convex: bool):
    """The parameters of the audited points of a bandit declaration and its skips."""
    decl = st13.BANDIT_FTAL_CONVEX_AUDIT if convex else st13.BANDIT_FTAL_AUDIT
    ctx = AuditContext(BUDGETS[budget])
    planned = [decl.plan(p, ctx) for p in decl.grid(ctx)]
    assert all(isinstance(p, (PointPlan, Skip)) for p in planned)
    return ([dict(p.parameters) for p in planned if isinstance(p, PointPlan)],
            [p for p in planned if isinstance(p, Skip)])


def test_bandit_statistic_condition_and_grid_filter():
    """Theorem 17 at T = 9 (d = 1, r = 1): beta = 9^(-1/4) = 0.577 > (1 - xi) r = 0.423, so the
    played point's side is decided by u; at T = 33 it is not. The grids skip such points and say
    why, and every audited point satisfies the condition."""
    s9, s33 = theorem17_schedule(1, 9, 1.0), theorem17_schedule(1, 33, 1.0)
    a = PrivateBanditFTALConvex(Ball(1, 1.0), s9.regularisation, 1.0, s9.beta, 1.0, 9)
    b = PrivateBanditFTALConvex(Ball(1, 1.0), s33.regularisation, 1.0, s33.beta, 1.0, 33)
    assert not pairs.bandit_side_is_revealed(a) and pairs.bandit_side_is_revealed(b)
    with pytest.raises(TypeError):
        pairs.bandit_side_is_revealed(PFTAL(Ball(1, 1.0), 0.1, 1.0, 1.0, 5))
    for convex in (False, True):
        for budget in ("quick", "standard"):
            grid, skipped = _bandit_grid(budget, convex)
            for prm in grid:
                assert pairs.bandit_side_is_revealed(pairs.bandit_learner(prm, convex))
                assert prm["T"] <= BUDGETS[budget].max_T
            assert any(p["d"] > 1 for p in grid)  # d > 1 stays covered (on R = 2)
            for skip in skipped:
                assert "(1 - xi) r" in skip.reason or "schedule undefined" in skip.reason
    _, skipped = _bandit_grid("quick", True)
    assert [s.parameters["T"] for s in skipped] == [9]


def test_regularised_reading_gets_horizons_and_samples():
    grid, _ = _bandit_grid("standard", True)
    assert [p["T"] for p in grid if p["tree_bound"] == "regularised"] == [33, 65, 129]
    grid, _ = _bandit_grid("quick", True)
    assert [p["T"] for p in grid if p["tree_bound"] == "regularised"] == [33]
    assert st13.regularised_samples(20_000) == 200_000
    assert st13.regularised_samples(200_000) == 400_000
    assert st13.regularised_samples(2_000_000) == 2_000_000


def _point(lb, acc, params):
    return GridPoint(params, 1.0, 0.0, None, acc, lb, {})


def test_findings_never_let_a_weak_test_read_as_safe():
    weak = st13.group_finding("reading 'x'", [_point(0.8, 1.4, {"T": 33}),
                                               _point(0.9, 1.7, {"T": 65})])
    assert "0 of 2" in weak and "lack of power" in weak and "NOT evidence" in weak
    assert "0.9" in weak and "T=65" in weak
    mixed = st13.group_finding("reading 'y'", [_point(1.2, 1.4, {"T": 33}),
                                                _point(0.9, 1.7, {"T": 65})])
    assert "1 of 2" in mixed and "1 other point(s) are undecided for lack of power" in mixed
    safe = st13.group_finding("reading 'z'", [_point(0.5, 0.9, {"T": 33})])
    assert "within the claim" in safe and "lack of power" not in safe
    # an exact value within the claim but an accountant above it: only a worse pair could refute
    pair = st13.group_finding("reading 'w'", [GridPoint({"T": 3}, 1.0, 0.0, 0.63, 1.33, 0.58)])
    assert "NOT shown private" in pair and "exact 0.63" in pair and "lack of power" not in pair


def test_noise_law_check_accepts_l2_laplace_and_rejects_other_laws():
    """With the printed l2-Laplace the check holds; per-coordinate Laplace (d = 3) and Gaussian
    (d = 1) of the same scale are rejected (p-values are astronomically small at n = 20000)."""
    ok = lemmas.noise_law_check(3, 8, 1.0, 1.0, 20_000, np.random.default_rng(0))
    assert ok.status == "holds"
    s = st13_node_scale(1.0, 1.0, 8)
    bad = lemmas.noise_law_check(3, 8, 1.0, 1.0, 20_000, np.random.default_rng(1),
                               noise=NodeNoise.laplace(s))
    assert bad.status == "violated" and bad.counterexample["pvalues"]
    bad1 = lemmas.noise_law_check(1, 8, 1.0, 1.0, 20_000, np.random.default_rng(2),
                                noise=NodeNoise.gaussian(s))
    assert bad1.status == "violated"


class _LeakyPFTAL(PFTAL):
    """Reads every loss a second time at a point that is not released (a data-access bug)."""

    def learn(self, loss):
        loss.value(self.predict() * 0.5 + 0.1)
        super().learn(loss)


def test_structural_checks_hold_for_pftal_and_catch_broken_learners():
    make = lambda T: PFTAL(Ball(1, 1.0), 0.5, 1.0, 1.0, T, record=True)  # noqa: E731
    good = lemmas.structural_checks("full", 1, make, 15, 0, lambda lr: lr.tree_bound)
    assert [c.status for c in good] == ["holds"] * 3 and all(c.examples >= 15 for c in good)
    leaky = lambda T: _LeakyPFTAL(Ball(1, 1.0), 0.5, 1.0, 1.0, T, record=True)  # noqa: E731
    checks = lemmas.structural_checks("full", 1, leaky, 15, 0, lambda lr: lr.tree_bound)
    assert checks[2].status == "violated" and "read" in checks[2].counterexample["reason"]
    # a bound that the tree does not enforce (declared 10x smaller than the one it clips to)
    lying = lemmas.structural_checks("full", 1, make, 15, 0, lambda lr: lr.tree_bound / 10)
    assert lying[0].status == "violated"


def test_structural_checks_hold_for_the_private_bandit():
    make = lambda T: PrivateBanditFTAL(Ball(2, 1.0), 0.5, 1.0, 0.25, 1.0, T, record=True)  # noqa
    checks = lemmas.structural_checks("bandit", 2, make, 15, 3, lambda lr: lr.tree_bound)
    assert [c.status for c in checks] == ["holds"] * 3


def test_no_false_alarms_on_the_correctly_calibrated_tree():
    """Algorithm 2 with the replace-one calibration (bound 2 mu) is exactly eps-DP on the audited
    pair (T = 8: 4 nodes, each 2 mu / (2 mu 4 / eps) = eps / 4), the boundary case. Over 40
    independent audits at alpha = 0.05 the number of "violated" verdicts is Binomial(40, <= 0.05):
    P(>= 7) < 0.01, so 7 or more would indicate an invalid bound."""
    T, mu, eps = 8, 1.0, 1.0
    z0, z1 = pairs.tree_worst_pair(T, 1, mu)
    mech = pairs.tree_mechanism(T, 1, 2 * mu, eps)  # corrected calibration
    stat = pairs.tree_node_statistic(T, z0, z1, st13_node_scale(2 * mu, eps, T))
    violations = sum(audit(mech, z0, z1, epsilon=eps, samples=4_000, alpha=0.05, seed=seed,
                           statistic=stat,
                           train_fraction=pairs.TRAIN_FRACTION).verdict == "violated"
                     for seed in range(40))
    assert violations < 7


def test_no_false_alarms_at_the_exact_epsilon_of_a_pftal_pair():
    """Audited at its own exact epsilon (the boundary case), the PFTAL release must not be found
    "violated" more often than alpha: over 30 audits at alpha = 0.05, P(Binomial(30, 0.05) >= 6)
    < 0.01."""
    T, L, H, R = 9, 1.0, 0.05, 1.0
    factory = lambda: PFTAL(Ball(1, R), H, L, 2.0, T)  # noqa: E731
    pair = pairs.pftal_worst_pair(1, T, L, H, R)
    exact = st13_exact.pftal_pair_exact_epsilon(factory(), pair)
    mech = pairs.learner_mechanism(factory)
    stat = pairs.pftal_node_statistic(factory(), pair)
    violations = sum(audit(mech, pair.stream0, pair.stream1, epsilon=exact, samples=3_000,
                           alpha=0.05, seed=100 + seed, statistic=stat,
                           train_fraction=pairs.TRAIN_FRACTION).verdict == "violated"
                     for seed in range(30))
    assert violations < 6


# ------------------------------------------------------------------------------------------------
# End-to-end auditors at a tiny budget
# ------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_audits():
    calls = []
    out = {}
    for claim in ST13_CLAIMS:
        out[claim.id] = get(claim.id).audit(_ctx(progress=lambda *a: calls.append(a)))
    out["_progress"] = calls
    return out


@pytest.mark.parametrize("claim_id", [c.id for c in ST13_CLAIMS])
def test_auditor_record_is_complete_and_consistent(tiny_audits, claim_id):
    ca = tiny_audits[claim_id]
    assert ca.claim.id == claim_id and ca.budget == "tiny" and ca.points
    d = ca.to_dict()
    json.dumps(d)
    for p in ca.points:
        # consistency rules of AUDIT-METHOD section 2 (exact and accountant are sup-norm values;
        # the lower bound must not exceed them)
        assert p.epsilon_accountant is not None
        if p.epsilon_exact is not None:
            assert p.epsilon_exact <= p.epsilon_accountant * (1 + 1e-9)
            assert p.epsilon_lower_bound <= p.epsilon_exact * (1 + 1e-9)
        assert p.epsilon_lower_bound <= p.epsilon_accountant * (1 + 1e-9)
        # every audited point is tested, at alpha / (number of points) (Bonferroni)
        bonferroni = p.evidence["empirical"]["bonferroni"]
        assert bonferroni["per_test_alpha"] == pytest.approx(ca.alpha / len(ca.points))
        assert bonferroni["tests"] == len(ca.points)
    node_lemmas = [lem for lem in ca.lemmas if lem.statement.startswith("replacing one tree input")]
    assert node_lemmas and node_lemmas[0].status == "violated"
    assert node_lemmas[0].worst_ratio > 1.5  # close to the factor 2 of replace-one
    # Lemmas of the claim no check evaluates are recorded as "not checked" with the reason
    # (never silently dropped); every checked one other than the node lemma holds.
    unchecked = [lem for lem in ca.lemmas if lem.status == "not checked"]
    assert all(lem.note for lem in unchecked)
    others = [lem for lem in ca.lemmas if lem not in node_lemmas and lem not in unchecked]
    assert others and all(lem.status == "holds" for lem in others)
    assert {"histogram", "privacy_curve", "sensitivity"} <= set(ca.figures)
    assert ca.reproduce.startswith(f"dpaudit audit {claim_id}")
    assert ca.verdict != "holds"
    if ca.verdict == "violated":
        assert ca.recommended_calibration


def test_privacy_curves_label_exact_values_only_where_known(tiny_audits):
    """The tree's release is its noisy sums (exact curve in d = 1); the learners' releases hide
    the noise magnitudes, so their exact value is given at delta = 0 only and the noisy sums'
    curve is reported separately as an upper bound."""
    tree = tiny_audits["st13/tree-aggregation"].figures["privacy_curve"]
    assert all(e is not None for e in tree["epsilon_exact"])
    assert "epsilon_noisy_sums" not in tree
    for cid in ("st13/pftal", "st13/pftal-convex"):
        ca = tiny_audits[cid]
        curve = ca.figures["privacy_curve"]
        assert curve["deltas"][0] == 0.0
        assert curve["epsilon_exact"][0] == pytest.approx(ca.worst_point().epsilon_exact)
        assert curve["epsilon_exact"][1:] == [None] * (len(curve["deltas"]) - 1)
        sums = curve["epsilon_noisy_sums"]
        assert sums[0] == pytest.approx(curve["epsilon_exact"][0], rel=1e-9)
        assert all(b <= a * (1 + 1e-9) for a, b in zip(sums, sums[1:]))  # non-increasing
        assert "upper bound" in curve["notes"]["epsilon_noisy_sums"]
    for cid in ("st13/bandit-ftal", "st13/bandit-ftal-convex"):
        curve = tiny_audits[cid].figures["privacy_curve"]
        assert curve["epsilon_exact"] == [None] * len(curve["deltas"])


def test_bandit_audits_record_skips_readings_and_inner_radius(tiny_audits):
    ca = tiny_audits["st13/bandit-ftal-convex"]
    assert any(f.startswith("Skipped grid point") and "T=9," in f for f in ca.findings)
    readings = {p.parameters["tree_bound"] for p in ca.points}
    assert readings == {"loss-bound", "regularised"}
    reg = [p for p in ca.points if p.parameters["tree_bound"] == "regularised"]
    assert all(p.evidence["samples_per_input"] == st13.regularised_samples(TINY.samples)
               for p in reg)
    for cid in ("st13/bandit-ftal", "st13/bandit-ftal-convex"):
        for p in tiny_audits[cid].points:
            prm = p.parameters
            assert prm["r"] == prm["R"] and prm["beta"] < (1 - prm["xi"]) * prm["r"]
        text = " ".join(tiny_audits[cid].findings)
        assert "refute the claim" in text


def test_tree_and_pftal_claims_are_violated_formally(tiny_audits):
    for cid in ("st13/tree-aggregation", "st13/pftal", "st13/pftal-convex"):
        ca = tiny_audits[cid]
        assert ca.verdict == "violated"
        w = ca.worst_point()
        assert w.epsilon_exact > w.claimed_epsilon
    tree = tiny_audits["st13/tree-aggregation"]
    by_T = {p.parameters["T"]: p for p in tree.points if p.parameters["epsilon"] == 1.0
            and p.parameters["d"] == 1}
    assert by_T[8].epsilon_exact == pytest.approx(2.0)  # 2 eps for a power of two
    assert by_T[9].epsilon_exact == pytest.approx(1.6)  # 2 eps 4/5


def test_bandit_claims_have_no_exact_value_and_an_accountant_above_the_claim(tiny_audits):
    for cid in ("st13/bandit-ftal", "st13/bandit-ftal-convex"):
        ca = tiny_audits[cid]
        assert all(p.epsilon_exact is None for p in ca.points)
        assert max(p.epsilon_accountant / p.claimed_epsilon for p in ca.points) > 1.5
        assert all("tree_level_epsilon_of_pair" in p.evidence for p in ca.points)


def test_progress_is_reported(tiny_audits):
    calls = tiny_audits["_progress"]
    assert calls and all(0 <= done <= total for done, total, _ in calls)
    assert any(done == total for done, total, _ in calls)


def test_audits_are_reproducible_from_the_seed():
    a = get("st13/tree-aggregation").audit(_ctx(seed=5))
    b = get("st13/tree-aggregation").audit(_ctx(seed=5))
    assert [p.epsilon_lower_bound for p in a.points] == [p.epsilon_lower_bound for p in b.points]
    # Wall-clock fields (the SMT records' solver seconds) are the only part that may differ.
    from golden_audits import strip_timings
    assert strip_timings([lem.to_dict() for lem in a.lemmas]) == \
        strip_timings([lem.to_dict() for lem in b.lemmas])


@pytest.mark.slow
@pytest.mark.parametrize("claim_id", [c.id for c in ST13_CLAIMS])
def test_quick_budget_campaign(claim_id):
    """The quick budget: every claim refuted (the tree and PFTAL claims formally, the bandit claims
    by empirical lower bounds above the claim in d = 1)."""
    ca = get(claim_id).audit(AuditContext(BUDGETS["quick"], seed=0))
    assert ca.verdict == "violated"


def test_pair_builders_validate():
    with pytest.raises(ValueError, match="bound"):
        pairs.tree_worst_pair(4, 1, 0.0)
    with pytest.raises(ValueError, match="2 B"):
        pairs.bandit_worst_pair(1, 4, 0.1, 10.0, 1.0)
    with pytest.raises(ValueError, match="round 1"):
        pairs.bandit_node_statistic(PrivateBanditFTAL(Ball(1, 1.0), 1.0, 1.0, 0.2, 1.0, 4),
                                   pairs.pftal_worst_pair(1, 4, 1.0, 0.1, 1.0))
    learner = PFTAL(Ball(1, 1.0), 0.1, 1.0, 1.0, 5)
    odd = pairs.WorstPair((LinearLoss(np.ones(1)),) * 5, (LinearLoss(-np.ones(1)),) * 5, 1, 2.0,
                         "round 1")
    with pytest.raises(ValueError, match="round 2"):
        st13_exact.pftal_pair_exact_epsilon(learner, odd)
