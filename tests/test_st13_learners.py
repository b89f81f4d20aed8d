"""Tests of the Smith-Thakurta 2013 learners: Algorithm 2 tree, FTAL, PFTAL (Alg. 1, App. C) and
bandit FTAL (Sec. 3.1, Alg. 3, App. E.3).

Statistical tests use fixed seeds; each states why its margin is safe.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pytest
from scipy import optimize, stats

from dpaudit.learners.bandit_ftal import (
    BanditFTAL,
    PrivateBanditFTAL,
    PrivateBanditFTALConvex,
    inner_radius,
    one_point_gradient,
    project_shrunk,
    sample_unit_sphere,
    theorem6_regret_bound,
    theorem6_schedule,
    theorem12_schedule,
    theorem17_schedule,
)
from dpaudit.learners.domains import Ball, Box, Simplex
from dpaudit.learners.ftal import FTAL, ftal_argmin
from dpaudit.learners.losses import LinearLoss, Loss, LogisticLoss, SquaredLoss
from dpaudit.learners.pftal import (
    PFTAL,
    L2Regularised,
    PFTALConvex,
    pftal_tree_bound,
    theorem4_regret_bound,
    theorem11_regularisation,
)
from dpaudit.papers.st13.claims import ST13_CLAIMS
from dpaudit.mechanisms.st13_tree_aggregation import ST13TreeAggregator, st13_node_scale, st13_tree_levels
from dpaudit.mechanisms.tree_aggregation import (
    NodeNoise,
    TreeAggregator,
    nodes_containing,
    nodes_for_prefix,
)


def _rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


# ------------------------------------------------------------------------------------------------
# Algorithm 2
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("T", [1, 2, 3, 7, 8, 9, 64, 100])
def test_tree_without_noise_releases_exact_prefix_sums(T):
    z = _rng(1).normal(size=(T, 3, 2)) * 0.1
    tree = ST13TreeAggregator(T, 2, 10.0, 1.0, 3, _rng(), noise=NodeNoise.none(), record=True)
    out = np.stack([tree.add(z[t]) for t in range(T)])
    np.testing.assert_allclose(out, np.cumsum(z, axis=0), rtol=0, atol=1e-12)
    np.testing.assert_allclose(tree.released_sums, out)


@pytest.mark.parametrize("T", [1, 2, 5, 8, 13, 64])
def test_tree_structure_each_node_noised_once_at_completion(T):
    tree = ST13TreeAggregator(T, 1, 1.0, 1.0, 2, _rng(), record=True)
    for _ in range(T):
        tree.add(np.zeros(1))
    nodes = [draw.node for draw in tree.noise_log]
    assert len(nodes) == len(set(nodes)) == tree.noise_draws  # each node noised exactly once
    assert all(draw.t == draw.node.last for draw in tree.noise_log)  # ... when it completes
    # Every completed node of the padded tree is noised (Alg. 2 line 9 noises right children too).
    completed = {(j, m) for j in range(st13_tree_levels(T)) for m in range(1, (T >> j) + 1)}
    assert {(n.level, n.index) for n in nodes} == completed
    noised = set(nodes)
    for t, used in enumerate(tree.released_nodes, start=1):
        # lines 12-17 pick the binary decomposition of t, from completed (noised) nodes only
        assert sorted(used) == sorted(nodes_for_prefix(t))
        assert all(node in noised and node.last <= t for node in used)
    for leaf in range(1, T + 1):
        containing = [n for n in noised if n.contains(leaf)]
        assert len(containing) <= st13_tree_levels(T)  # App. B.1: <= ceil(log2 T) + 1 nodes
        released = {n for used in tree.released_nodes for n in used if n.contains(leaf)}
        assert sorted(released) == sorted(nodes_containing(leaf, T))


def test_tree_root_case_power_of_two():
    """At t = 2^ceil(log2 T) the root is noised (it is Lambda) and released alone."""
    tree = ST13TreeAggregator(8, 1, 1.0, 1.0, 1, _rng(), record=True)
    for _ in range(8):
        tree.add(np.ones(1))
    last = [d.node for d in tree.noise_log if d.t == 8]
    assert [(n.level, n.index) for n in last] == [(0, 8), (1, 4), (2, 2), (3, 1)]
    assert [(n.level, n.index) for n in tree.released_nodes[-1]] == [(3, 1)]


def test_tree_printed_scale_and_levels():
    assert st13_tree_levels(1) == 1 and st13_tree_levels(2) == 2 and st13_tree_levels(8) == 4
    assert st13_tree_levels(9) == 5
    assert st13_node_scale(2.0, 0.5, 8) == pytest.approx(2.0 * 4 / 0.5)
    tree = ST13TreeAggregator(9, 3, 2.0, 0.5, 1, _rng())
    assert tree.noise.kind == "l2-laplace" and tree.noise.scale == pytest.approx(2.0 * 5 / 0.5)


def test_tree_clips_inputs_to_the_declared_bound():
    tree = ST13TreeAggregator(4, 2, 1.5, 1.0, 3, _rng(), noise=NodeNoise.none(), record=True)
    big = np.array([[30.0, 40.0], [0.3, 0.4], [-6.0, 8.0]])
    v = tree.add(big)
    np.testing.assert_allclose(v, [[0.9, 1.2], [0.3, 0.4], [-0.9, 1.2]])
    assert tree.max_input_norm <= 1.5 * (1 + 1e-12)
    np.testing.assert_allclose(np.linalg.norm(tree.inputs[0], axis=-1), [1.5, 0.5, 1.5])


def test_tree_node_noise_law_is_l2_laplace():
    """v_1 (leaf 1, zero input) is one node: norm ~ Gamma(d, s) and direction uniform.

    KS p-values > 1e-3 at a fixed seed: a correct sampler fails each with probability 1e-3.
    """
    d, T, n = 3, 8, 20_000
    tree = ST13TreeAggregator(T, d, 1.0, 2.0, n, _rng(7))
    v = tree.add(np.zeros(d))
    s = st13_node_scale(1.0, 2.0, T)
    norms = np.linalg.norm(v, axis=1)
    assert stats.kstest(norms, stats.gamma(a=d, scale=s).cdf).pvalue > 1e-3
    # uniform on S^2: the first coordinate of the direction is uniform on [-1, 1] (Archimedes)
    assert stats.kstest(v[:, 0] / norms, stats.uniform(-1, 2).cdf).pvalue > 1e-3


def test_tree_output_law_matches_shared_binary_mechanism():
    """Alg. 2 and the shared p-sum tree release the same law (two-sample KS on v_3 and v_6,
    p > 1e-3 at fixed seeds; a correct pair of samplers fails each with probability 1e-3)."""
    T, n, s = 8, 20_000, 2.0
    z = np.ones(1)
    ours = ST13TreeAggregator(T, 1, 1.0, 4.0 / s, n, _rng(3))  # scale 1 * 4 / (4 / s) = s
    assert ours.noise.scale == pytest.approx(s)
    shared = TreeAggregator(T, 1, NodeNoise.l2_laplace(s), n, _rng(4))
    a, b = [], []
    for t in range(1, 7):
        va = ours.add(z)
        shared.add(z)
        if t in (3, 6):
            a.append(va[:, 0])
            b.append(shared.prefix_sum()[:, 0])
    for x, y in zip(a, b):
        assert stats.ks_2samp(x, y).pvalue > 1e-3


def test_tree_prefix_sum_repeats_and_rejects_bad_input():
    tree = ST13TreeAggregator(2, 2, 1.0, 1.0, 2, _rng())
    v = tree.add(np.ones(2) * 0.1)
    np.testing.assert_array_equal(tree.prefix_sum(), v)
    np.testing.assert_array_equal(tree.prefix_sum(), tree.prefix_sum())
    with pytest.raises(ValueError, match="z must have shape"):
        tree.add(np.ones(3))
    with pytest.raises(ValueError, match="finite"):
        tree.add(np.array([np.nan, 0.0]))
    tree.add(np.zeros(2))
    with pytest.raises(ValueError, match="more than T"):
        tree.add(np.zeros(2))
    with pytest.raises(ValueError, match="T must be"):
        ST13TreeAggregator(0, 1, 1.0, 1.0, 1, _rng())
    with pytest.raises(ValueError, match="bound"):
        ST13TreeAggregator(4, 1, 0.0, 1.0, 1, _rng())
    with pytest.raises(ValueError, match="epsilon"):
        ST13TreeAggregator(4, 1, 1.0, -1.0, 1, _rng())
    with pytest.raises(TypeError, match="Generator"):
        ST13TreeAggregator(4, 1, 1.0, 1.0, 1, 0)
    with pytest.raises(ValueError, match="record=True"):
        tree.inputs


# ------------------------------------------------------------------------------------------------
# FTAL closed form
# ------------------------------------------------------------------------------------------------


def _numerical_argmin(S, v, t, H, domain):
    """argmin_C <v, w> + H/2 sum ||w - w_tau||^2, written with S = sum w_tau (eq. (4))."""
    def obj(w):
        return v @ w + 0.5 * H * (t * w @ w - 2 * w @ S)

    def grad(w):
        return v + H * (t * w - S)

    x0 = np.zeros_like(S)
    if isinstance(domain, Ball):
        cons = [{"type": "ineq", "fun": lambda w: domain.radius ** 2 - w @ w,
                 "jac": lambda w: -2 * w}]
        res = optimize.minimize(obj, x0, jac=grad, constraints=cons, method="SLSQP",
                                options={"ftol": 1e-14, "maxiter": 500})
    else:
        res = optimize.minimize(obj, x0, jac=grad, method="L-BFGS-B",
                                bounds=[(domain.lower, domain.upper)] * domain.dim,
                                options={"ftol": 1e-15, "gtol": 1e-12})
    return res.x


@pytest.mark.parametrize("domain", [Ball(3, 1.0), Ball(2, 0.5), Box(3, -1.0, 2.0)])
def test_ftal_closed_form_matches_numerical_argmin(domain):
    rng = _rng(11)
    for trial in range(12):
        t = int(rng.integers(1, 40))
        H = float(rng.uniform(0.05, 3.0))
        pts = domain.project(rng.normal(size=(t, domain.dim)) * domain.radius)
        S = pts.sum(axis=0)
        v = rng.normal(size=domain.dim) * rng.choice([0.01, 1.0, 30.0]) * t
        closed = ftal_argmin(S, v, t, H, domain)
        numeric = _numerical_argmin(S, v, t, H, domain)
        assert bool(domain.contains(closed))
        np.testing.assert_allclose(closed, numeric, atol=2e-5)


def test_ftal_argmin_validates_and_vectorises():
    D = Ball(2, 1.0)
    S = np.zeros((5, 2))
    v = np.ones((5, 2))
    out = ftal_argmin(S, v, 3, 2.0, D)
    np.testing.assert_allclose(out, np.broadcast_to(-np.ones(2) / 6.0, (5, 2)))
    with pytest.raises(ValueError, match="same shape"):
        ftal_argmin(S, np.ones(2), 3, 2.0, D)
    with pytest.raises(ValueError, match="strong_convexity"):
        ftal_argmin(S, v, 3, 0.0, D)
    with pytest.raises(ValueError, match="t must be"):
        ftal_argmin(S, v, 0, 1.0, D)


def _regression_stream(T, d, H, rng, scale=0.3):
    return [SquaredLoss(rng.normal(size=d) * scale, float(rng.normal() * scale), ridge=H)
            for _ in range(T)]


def test_ftal_follows_the_approximate_leader_and_its_regret_bound():
    """Each FTAL point is the leader of eq. (4) (recomputed from scratch), and the regret obeys the
    deterministic bound of Fact 9 + Claim 10: 2 (L + H|C|)^2 / H * sum_t 1/t."""
    D, H, T = Ball(2, 1.0), 0.5, 60
    losses = _regression_stream(T, 2, H, _rng(5))
    traj = FTAL(D, H).run(losses, 1, _rng())[0]
    grads = np.array([f.grad(traj[t]) for t, f in enumerate(losses)])
    for t in range(1, T):
        leader = _numerical_argmin(traj[:t].sum(0), grads[:t].sum(0), t, H, D)
        np.testing.assert_allclose(traj[t], leader, atol=2e-5)
    L = max(f.lipschitz(D) for f in losses)
    best = optimize.minimize(lambda w: sum(float(f.value(w)) for f in losses), np.zeros(2),
                             constraints=[{"type": "ineq", "fun": lambda w: 1 - w @ w}],
                             method="SLSQP").fun
    regret = sum(float(f.value(traj[t])) for t, f in enumerate(losses)) - best
    assert regret <= 2 * (L + H) ** 2 / H * sum(1 / t for t in range(1, T + 1))


def test_ftal_rejects_bad_arguments():
    with pytest.raises(ValueError, match="strong_convexity"):
        FTAL(Ball(2), 0.0)
    with pytest.raises(TypeError, match="Domain"):
        FTAL("ball", 1.0)
    with pytest.raises(ValueError, match="initial_point must lie"):
        FTAL(Ball(2), 1.0, initial_point=np.array([2.0, 0.0]))
    learner = FTAL(Ball(2), 1.0)
    with pytest.raises(RuntimeError, match="reset"):
        learner.predict()
    learner.reset(2, _rng())
    with pytest.raises(ValueError, match="dimension"):
        learner.learn(LinearLoss(np.ones(3)))
    with pytest.raises(TypeError, match="Loss"):
        learner.learn("loss")


# ------------------------------------------------------------------------------------------------
# PFTAL (Algorithm 1) and App. C
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class _Spy(Loss):
    """A loss that records where it is evaluated (to check data access)."""

    inner: Loss
    calls: list = field(default_factory=list)

    @property
    def kind(self):
        return self.inner.kind

    @property
    def dim(self):
        return self.inner.dim

    def value(self, x):
        self.calls.append(("value", np.array(x)))
        return self.inner.value(x)

    def grad(self, x):
        self.calls.append(("grad", np.array(x)))
        return self.inner.grad(x)

    def lipschitz(self, domain):
        return self.inner.lipschitz(domain)


def test_pftal_with_negligible_noise_is_ftal():
    D, H = Ball(3, 1.0), 0.7
    losses = _regression_stream(25, 3, H, _rng(2))
    L = max(f.lipschitz(D) for f in losses)
    ftal = FTAL(D, H).run(losses, 4, _rng())
    pftal = PFTAL(D, H, L, 1e13, 25).run(losses, 4, _rng(9))
    np.testing.assert_allclose(pftal, ftal, atol=1e-8)


def test_pftal_outputs_are_post_processing_of_the_tree():
    """Replaying eq. (5) from the tree's released sums alone reproduces every released point, and
    each loss is touched only through its gradient at the released point of its round."""
    D, H, T = Ball(2, 1.0), 0.4, 16
    spies = [_Spy(f) for f in _regression_stream(T, 2, H, _rng(3))]
    L = max(f.lipschitz(D) for f in spies)
    learner = PFTAL(D, H, L, 0.5, T, record=True)
    out = learner.run(spies, 5, _rng(4))
    sums = learner.tree.released_sums
    S = out[:, 0].copy()
    for t in range(1, T):
        np.testing.assert_allclose(out[:, t], ftal_argmin(S, sums[t - 1], t, H, D), atol=1e-12)
        S += out[:, t]
    for t, spy in enumerate(spies):
        assert [kind for kind, _ in spy.calls] == ["grad"]
        np.testing.assert_array_equal(spy.calls[0][1], out[:, t])


def test_pftal_clips_tree_inputs_to_the_declared_bound():
    D = Ball(2, 1.0)
    big = [LinearLoss(np.array([50.0, 0.0])) for _ in range(6)]
    learner = PFTAL(D, 0.5, 1.0, 1.0, 6, record=True)
    learner.run(big, 3, _rng())
    assert learner.tree.max_input_norm <= 1.0 + 1e-12
    np.testing.assert_allclose(np.linalg.norm(learner.tree.inputs, axis=-1), 1.0)


def test_pftal_tree_bound_readings_and_validation():
    D = Ball(2, 2.0)
    assert PFTAL(D, 0.5, 3.0, 1.0, 8).tree_bound == 3.0
    assert PFTAL(D, 0.5, 3.0, 1.0, 8, tree_bound="lipschitz+H|C|").tree_bound == pytest.approx(4.0)
    assert PFTAL(D, 0.5, 3.0, 1.0, 8, tree_bound=7.5).tree_bound == 7.5
    assert pftal_tree_bound("lipschitz+H|C|", 1.0, 0.25, D) == pytest.approx(1.5)
    with pytest.raises(ValueError, match="tree_bound"):
        PFTAL(D, 0.5, 3.0, 1.0, 8, tree_bound="L")
    with pytest.raises(ValueError, match="epsilon"):
        PFTAL(D, 0.5, 3.0, 0.0, 8)
    with pytest.raises(ValueError, match="horizon"):
        PFTAL(D, 0.5, 3.0, 1.0, 0)
    with pytest.raises(ValueError, match="lipschitz"):
        PFTAL(D, 0.5, -1.0, 1.0, 8)
    learner = PFTAL(D, 0.5, 3.0, 1.0, 2)
    with pytest.raises(ValueError, match="horizon"):
        learner.run([LinearLoss(np.ones(2))] * 3, 1, _rng())
    with pytest.raises(RuntimeError, match="reset"):
        PFTAL(D, 0.5, 3.0, 1.0, 2).tree


def test_l2_regularised_loss():
    base = LogisticLoss(np.array([1.0, -2.0]), 1.0)
    h = L2Regularised(base, 0.3)
    x = _rng().normal(size=(4, 2))
    np.testing.assert_allclose(h.value(x), base.value(x) + 0.15 * np.sum(x * x, axis=1))
    np.testing.assert_allclose(h.grad(x), base.grad(x) + 0.3 * x)
    assert h.lipschitz(Ball(2, 2.0)) == pytest.approx(base.lipschitz(Ball(2, 2.0)) + 0.6)
    assert h.strong_convexity == pytest.approx(0.3) and h.kind == "logistic" and h.dim == 2
    with pytest.raises(ValueError, match="regularisation"):
        L2Regularised(base, -1.0)


def test_pftal_convex_runs_algorithm_1_on_the_regularised_losses():
    D, H, L, T = Ball(2, 1.0), 0.3, 1.0, 12
    losses = [LinearLoss(v) for v in _rng(8).normal(size=(T, 2)) * 0.5]
    conv = PFTALConvex(D, L, H, 1e13, T)
    assert conv.tree_bound == pytest.approx(L + H) and conv.regularisation == H
    assert PFTALConvex(D, L, H, 1.0, T, tree_bound="lipschitz").tree_bound == L
    out = conv.run(losses, 2, _rng())
    direct = FTAL(D, H).run([L2Regularised(f, H) for f in losses], 2, _rng())
    np.testing.assert_allclose(out, direct, atol=1e-8)


def test_theorem_schedules_and_bounds():
    assert theorem11_regularisation(2, 100, 0.5) == pytest.approx(
        math.sqrt(2 * math.log(100) ** 2.5 / (0.5 * 100)))
    with pytest.raises(ValueError, match="T must be"):
        theorem11_regularisation(1, 1, 1.0)
    b1 = theorem4_regret_bound(1000, 2, 1.0, 0.5, 1.0, 1.0)
    g2 = (1.0 + 0.5 * 1.0) ** 2  # (L + H |C|)^2
    assert b1 == pytest.approx(2 * g2 * math.log(1000) / 0.5
                               + 4 * 2 * g2 * math.log(1000) ** 2.5 / 0.5)
    assert theorem4_regret_bound(1000, 2, 1.0, 0.5, 1.0, 2.0) < b1


# ------------------------------------------------------------------------------------------------
# Bandit FTAL
# ------------------------------------------------------------------------------------------------


def test_unit_sphere_sampler_law():
    """Norms are 1; d = 1 signs are fair (two-sided binomial p > 1e-3); d = 3 first coordinate is
    uniform on [-1, 1] (KS p > 1e-3). A correct sampler fails each with probability 1e-3."""
    u1 = sample_unit_sphere(20_000, 1, _rng(1))
    assert set(np.unique(u1)) == {-1.0, 1.0}
    assert stats.binomtest(int((u1 > 0).sum()), 20_000).pvalue > 1e-3
    u3 = sample_unit_sphere(20_000, 3, _rng(2))
    np.testing.assert_allclose(np.linalg.norm(u3, axis=1), 1.0)
    assert stats.kstest(u3[:, 2], stats.uniform(-1, 2).cdf).pvalue > 1e-3


def test_one_point_gradient_estimate_is_unbiased_for_a_quadratic():
    """E_u[(p/beta) f(w + beta u) u] = grad f^(w) = grad f(w) for quadratic f (smoothing a
    quadratic adds a constant). Tolerance: 5 standard errors of the Monte Carlo mean."""
    d, beta, n = 3, 0.2, 400_000
    c = np.array([0.3, -0.2, 0.1])
    w = np.array([0.1, 0.2, -0.3])
    u = sample_unit_sphere(n, d, _rng(4))
    vals = 0.5 * np.sum((w + beta * u - c) ** 2, axis=1)
    est = one_point_gradient(vals, u, beta)
    np.testing.assert_allclose(est[:3], (d / beta) * vals[:3, None] * u[:3])
    se = est.std(axis=0) / math.sqrt(n)
    assert np.all(np.abs(est.mean(axis=0) - (w - c)) < 5 * se)


def test_inner_radius_and_shrunk_projection():
    assert inner_radius(Ball(3, 2.0)) == 2.0
    assert inner_radius(Box(2, -1.0, 3.0)) == 1.0
    with pytest.raises(ValueError, match="origin"):
        inner_radius(Box(2, 0.0, 1.0))
    with pytest.raises(ValueError, match="Simplex"):
        inner_radius(Simplex(3))
    x = _rng().normal(size=(50, 2)) * 3
    y = project_shrunk(x, Ball(2, 1.0), 0.25)
    assert np.all(np.linalg.norm(y, axis=1) <= 0.75 + 1e-12)
    with pytest.raises(ValueError, match="shrink"):
        project_shrunk(x, Ball(2, 1.0), 1.0)


def test_bandit_schedules():
    s = theorem6_schedule(2, 81, 1.0, "adaptive")
    assert s.beta == pytest.approx(2 / 3) and s.xi == pytest.approx(2 / 3)
    assert theorem6_schedule(1, 64, 2.0, "oblivious").beta == pytest.approx(0.25)
    assert theorem12_schedule(8, 16, 4.0, "adaptive").beta == pytest.approx(2.0)
    t17 = theorem17_schedule(1, 16, 1.0)
    assert t17.beta == pytest.approx(0.5) and t17.regularisation == pytest.approx(0.5)
    with pytest.raises(ValueError, match="xi = beta/r >= 1"):
        theorem6_schedule(4, 64, 1.0, "adaptive")
    with pytest.raises(ValueError, match="adversary"):
        theorem6_schedule(1, 64, 1.0, "lazy")
    g = theorem6_regret_bound(1000, 1, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.1, "adaptive")
    o = theorem6_regret_bound(1000, 1, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.1, "oblivious")
    assert g - o == pytest.approx(2 * 1 * 1 * 1 * math.sqrt(1000) / 0.1)


def _bandit_stream(T, d, H, B, rng):
    """H-strongly convex quadratics with |f| <= B on the unit ball."""
    out = []
    for _ in range(T):
        c = rng.normal(size=d)
        c *= 0.5 / max(1.0, np.linalg.norm(c))
        out.append(SquaredLoss(c, 0.0, ridge=H))  # 1/2 <c,w>^2 + H/2 |w|^2 <= 1/8 + H/2
    return out


def test_bandit_ftal_plays_in_C_and_only_reads_values_at_played_points():
    D, H, B, T = Ball(2, 1.0), 0.5, 1.0, 20
    beta = theorem12_schedule(2, T, 1.0, "oblivious").beta
    spies = [_Spy(f) for f in _bandit_stream(T, 2, H, B, _rng(6))]
    learner = BanditFTAL(D, H, B, beta)
    out = learner.run(spies, 50, _rng(7))
    assert np.all(np.linalg.norm(out, axis=-1) <= 1.0 + 1e-12)
    for t, spy in enumerate(spies):
        assert [kind for kind, _ in spy.calls] == ["value"]
        np.testing.assert_array_equal(spy.calls[0][1], out[:, t])


def test_private_bandit_ftal_is_post_processing_of_the_tree():
    """Replaying eq. (9) from the tree's released sums gives secret centres w_dagger in (1-xi)C at
    distance exactly beta from the played points (w^_t = w_dagger_t + beta u_t)."""
    D, H, B, T = Ball(2, 1.0), 0.5, 1.0, 16
    sched = theorem6_schedule(2, T, 1.0, "oblivious")
    learner = PrivateBanditFTAL(D, H, B, sched.beta, 1.0, T, record=True)
    assert learner.tree_bound == pytest.approx(2 * B / sched.beta)
    out = learner.run(_bandit_stream(T, 2, H, B, _rng(1)), 30, _rng(2))
    sums = learner.tree.released_sums
    centre = np.zeros((30, 2))
    S = centre.copy()
    for t in range(T):
        if t:
            centre = project_shrunk(S / t - sums[t - 1] / (H * t), D, sched.xi)
            S = S + centre
        assert np.all(np.linalg.norm(centre, axis=1) <= 1 - sched.xi + 1e-12)
        np.testing.assert_allclose(np.linalg.norm(out[:, t] - centre, axis=1), sched.beta)
    assert learner.tree.max_input_norm <= learner.tree_bound * (1 + 1e-12)


def test_private_bandit_clips_loss_values_through_the_tree():
    D, beta = Ball(1, 1.0), 0.25
    loud = [LinearLoss(np.array([40.0]))] * 4  # |f| up to 40 > B = 1
    learner = PrivateBanditFTAL(D, 0.5, 1.0, beta, 1.0, 4, record=True)
    learner.run(loud, 10, _rng())
    assert learner.tree.max_input_norm <= 1.0 / beta * (1 + 1e-12)


def test_private_bandit_convex_tree_bound_readings():
    D, T = Ball(1, 2.0), 16
    s = theorem17_schedule(1, T, 2.0)
    a = PrivateBanditFTALConvex(D, s.regularisation, 1.0, s.beta, 1.0, T)
    b = PrivateBanditFTALConvex(D, s.regularisation, 1.0, s.beta, 1.0, T, tree_bound="regularised")
    assert a.tree_bound == pytest.approx(1.0 / s.beta)
    assert b.tree_bound == pytest.approx((1.0 + 0.5 * s.regularisation * 4.0) / s.beta)
    spies = [_Spy(LinearLoss(np.array([0.3])))] * 3
    out = b.run(spies[:1] + [LinearLoss(np.array([0.1]))] * 2, 4, _rng())
    assert out.shape == (4, 3, 1) and np.all(np.abs(out) <= 2.0)
    with pytest.raises(ValueError, match="tree_bound"):
        PrivateBanditFTALConvex(D, 0.5, 1.0, s.beta, 1.0, T, tree_bound="B")


def test_bandit_rejects_bad_arguments():
    D = Ball(2, 1.0)
    with pytest.raises(ValueError, match="shrink xi"):
        BanditFTAL(D, 1.0, 1.0, 1.5)
    with pytest.raises(ValueError, match="exceeds xi r"):
        BanditFTAL(D, 1.0, 1.0, 0.5, shrink=0.1)
    with pytest.raises(ValueError, match="shrunk set"):
        BanditFTAL(D, 1.0, 1.0, 0.5, initial_point=np.array([0.9, 0.0]))
    with pytest.raises(ValueError, match="sampling_radius"):
        BanditFTAL(D, 1.0, 1.0, 0.0)
    with pytest.raises(ValueError, match="inner_radius"):
        BanditFTAL(D, 1.0, 1.0, 0.1, inner_radius=3.0)
    with pytest.raises(ValueError, match="horizon"):
        PrivateBanditFTAL(D, 1.0, 1.0, 0.1, 1.0, 1).run([LinearLoss(np.ones(2))] * 2, 1, _rng())


def test_claim_objects_are_the_five_printed_claims():
    ids = [c.id for c in ST13_CLAIMS]
    assert ids == ["st13/tree-aggregation", "st13/pftal", "st13/pftal-convex", "st13/bandit-ftal",
                   "st13/bandit-ftal-convex"]
    for c in ST13_CLAIMS:
        assert c.delta == 0.0 and c.neighbour.value == "replace-one"
        assert c.provenance.paper == "st13.txt" and c.calibration and c.lemmas


def test_claims_flag_derived_ranges_and_the_inner_radius_choice():
    """The PFTAL range of H is derived (class non-empty: H diam(C) <= 2L), not printed; the bandit
    claims say why r = rho is admissible on the ball rho B^p (Theorems 6 and 17: 0 < r < R)."""
    by_id = {c.id: c for c in ST13_CLAIMS}
    pftal = by_id["st13/pftal"]
    assert "derived, not printed" in pftal.parameter_range["H (strong convexity)"]
    assert "not printed in the paper" in pftal.notes and "H diam(C) <= 2 L" in pftal.notes
    for cid in ("st13/bandit-ftal", "st13/bandit-ftal-convex"):
        c = by_id[cid]
        assert "0 < r < R" in c.parameter_range["r, R"]
        assert "r = rho" in c.notes and "R > rho" in c.notes


def test_bandit_learners_use_the_radius_of_the_ball_as_inner_radius():
    """On C = rho B^p the default r is rho (admissible: any R > rho sandwiches C); a smaller r
    shrinks (1 - xi) C, and r beyond the radius is rejected."""
    D, beta = Ball(1, 2.0), 0.5
    default = BanditFTAL(D, 1.0, 1.0, beta)
    assert default.inner_radius == 2.0 and default.shrink == pytest.approx(beta / 2.0)
    smaller = BanditFTAL(D, 1.0, 1.0, beta, inner_radius=1.0)
    assert smaller.shrink == pytest.approx(beta / 1.0)
    out = smaller.run([LinearLoss(np.array([1.0]))] * 5, 200, _rng(3))
    assert np.all(np.abs(out) <= 2.0 + 1e-12)


def test_one_point_gradient_is_p_over_beta_f_u_in_three_dimensions():
    """ST13 Sec. 3 (FKM05): the estimate is (p / beta) f(w + beta u) u. At p = 3, beta = 0.5,
    u = e_1, f = 2: (3 / 0.5) * 2 * e_1 = 12 e_1. The factor p is what makes it unbiased for a
    linear f = <g, .>: E[(p/beta) <g, w + beta u> u] = p E[u u^T] g = g, since E[u u^T] = I / p
    for u uniform on the sphere (checked below by Monte Carlo at 200 000 directions: the standard
    error of each coordinate is about p |g| / sqrt(n) = 0.0095, the tolerance 0.05 is 5 of them)."""
    from dpaudit.learners.bandit_ftal import one_point_gradient
    out = one_point_gradient(np.array([2.0]), np.array([[1.0, 0.0, 0.0]]), 0.5)
    np.testing.assert_allclose(out, [[12.0, 0.0, 0.0]], rtol=1e-15)
    rng = np.random.default_rng(28)
    u = rng.standard_normal((200_000, 3))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    g, w, beta = np.array([1.0, -0.5, 0.25]), np.array([0.1, 0.2, -0.3]), 0.5
    est = one_point_gradient((w + beta * u) @ g, u, beta).mean(axis=0)
    np.testing.assert_allclose(est, g, atol=0.05)
