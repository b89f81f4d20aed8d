"""pfcoco learners: LLOO correctness (vs linprog), FTAL update readings, zero-noise equality with
the non-private baselines, the W >= T baseline, and the printed node-noise laws."""

import math

import numpy as np
import pytest
from scipy import optimize, stats

from dpaudit.learners.domains import Ball, Box, Simplex
from dpaudit.learners.lloo import BoxLLOO, SimplexLLOO, lloo_for
from dpaudit.learners.losses import LinearLoss
from dpaudit.learners.pftal import L2Regularised
from dpaudit.learners.wdp_cocol import (
    COCOLConstants,
    OnlineCG,
    WDPCOCOL,
    derived_constants,
    noise_increment_bound,
)
from dpaudit.learners.wdp_cocop import FTALScheme, WDPCOCOP, pfcoco_ftal_update
from dpaudit.mechanisms.tree_aggregation import NodeNoise, nodes_for_prefix
from dpaudit.mechanisms.window_tree import window_nodes_for_prefix

# ------------------------------------------------------------------------------------------------
# LLOO
# ------------------------------------------------------------------------------------------------


def _simplex_l1_lp(x, c, radius_l1):
    """min <c, y> over {y in simplex, ||y - x||_1 <= radius_l1} as an LP in (y, s), s >= |y - x|."""
    d = x.size
    obj = np.concatenate([c, np.zeros(d)])
    eye = np.eye(d)
    A_ub = np.block([[eye, -eye], [-eye, -eye], [np.zeros((1, d)), np.ones((1, d))]])
    b_ub = np.concatenate([x, -x, [radius_l1]])
    A_eq = np.concatenate([np.ones(d), np.zeros(d)])[None, :]
    res = optimize.linprog(obj, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=[1.0],
                           bounds=[(0, None)] * d + [(0, None)] * d, method="highs")
    assert res.status == 0
    return res.fun


@pytest.mark.parametrize("d", [1, 2, 3, 7, 20])
def test_simplex_lloo_matches_the_l1_ball_lp_and_is_local(d):
    rng = np.random.default_rng(d)
    lloo = SimplexLLOO(Simplex(d))
    assert lloo.rho == pytest.approx(math.sqrt(d))
    for _ in range(40):
        x = rng.dirichlet(np.full(d, 0.3))
        c = rng.normal(size=d)
        r = float(rng.choice([1e-3, 0.05, 0.3, 1.0, 5.0]))
        p = lloo(x, r, c)
        assert Simplex(d).contains(p, tol=1e-12)
        assert np.linalg.norm(p - x) <= lloo.rho * r * (1 + 1e-12) + 1e-15  # property 2
        lp = _simplex_l1_lp(x, c, 2.0 * lloo.mass(r))
        # p is optimal over the l1 ball, which contains B_2(x, r) ∩ P (property 1). HiGHS
        # solves to primal feasibility 1e-7 (its default), so its value can undercut by ~1e-7.
        assert p @ c == pytest.approx(lp, abs=1e-6)


@pytest.mark.parametrize("d", [1, 2, 5])
def test_box_lloo_matches_the_linf_lp_and_is_local(d):
    rng = np.random.default_rng(10 + d)
    box = Box(d, -1.0, 2.0)
    lloo = BoxLLOO(box)
    for _ in range(40):
        x = rng.uniform(-1, 2, size=d)
        c = rng.normal(size=d)
        r = float(rng.choice([1e-3, 0.2, 1.0, 10.0]))
        p = lloo(x, r, c)
        bounds = [(max(-1.0, xi - r), min(2.0, xi + r)) for xi in x]
        res = optimize.linprog(c, bounds=bounds, method="highs")
        assert p @ c == pytest.approx(res.fun, abs=1e-9)
        assert np.linalg.norm(p - x) <= lloo.rho * r * (1 + 1e-12)


@pytest.mark.parametrize("domain", [Simplex(4), Box(3)])
def test_lloo_beats_every_point_of_the_local_l2_ball(domain):
    # Property 1 on the actual set B_2(x, r) ∩ P: random feasible points never do better.
    rng = np.random.default_rng(3)
    lloo = lloo_for(domain)
    for _ in range(20):
        x = domain.project(rng.normal(size=domain.dim))
        c, r = rng.normal(size=domain.dim), float(rng.uniform(0.01, 0.5))
        p = lloo(x, r, c)
        y = domain.project(x + r * rng.normal(size=(2000, domain.dim)) / math.sqrt(domain.dim))
        inside = np.linalg.norm(y - x, axis=1) <= r
        assert inside.any()
        assert np.all(y[inside] @ c >= p @ c - 1e-12)


def test_lloo_is_vectorised_and_validates():
    lloo = SimplexLLOO(Simplex(3))
    rng = np.random.default_rng(0)
    x = rng.dirichlet(np.ones(3), size=5)
    c = rng.normal(size=(5, 3))
    batch = lloo(x, 0.2, c)
    for i in range(5):
        np.testing.assert_allclose(batch[i], lloo(x[i], 0.2, c[i]))
    with pytest.raises(ValueError, match="domain"):
        lloo(np.array([0.9, 0.9, 0.0]), 0.1, c[0])
    with pytest.raises(ValueError, match="r"):
        lloo(x[0], -1.0, c[0])
    with pytest.raises(TypeError, match="polytope"):
        lloo_for(Ball(2))


# ------------------------------------------------------------------------------------------------
# FTAL base scheme
# ------------------------------------------------------------------------------------------------


def _stream(rng, d, T, mu, scale=0.3):
    return [L2Regularised(LinearLoss(rng.normal(size=d) * scale), mu) for _ in range(T)]


def test_exact_update_is_the_minimiser_of_eq9_and_printed_is_eq10():
    rng = np.random.default_rng(1)
    d, t, mu = 3, 5, 0.7
    pts = rng.normal(size=(t, d)) * 0.2
    g = rng.normal(size=d)
    big = Ball(d, 100.0)  # projection inactive: compare with the unconstrained argmin

    def J(x):
        return g @ x + mu / 2 * np.sum((x - pts) ** 2)

    num = optimize.minimize(J, np.zeros(d), method="BFGS", options={"gtol": 1e-12}).x
    exact = pfcoco_ftal_update(pts.sum(0), g, t, mu, big, "exact")
    np.testing.assert_allclose(exact, num, atol=1e-6)
    printed = pfcoco_ftal_update(pts.sum(0), g, t, mu, big, "printed")
    np.testing.assert_allclose(printed, pts.sum(0) - g / mu)
    np.testing.assert_allclose(printed, t * exact)  # eq. (10) lacks the 1/t
    with pytest.raises(ValueError, match="update"):
        pfcoco_ftal_update(pts.sum(0), g, t, mu, big, "other")


@pytest.mark.parametrize("update", ["exact", "printed"])
@pytest.mark.parametrize("option", ["I", "II"])
@pytest.mark.parametrize("W", [1, 3, 8, None])
def test_wdp_cocop_without_noise_equals_ftal(update, option, W):
    rng = np.random.default_rng(2)
    d, T, mu = 2, 20, 0.5
    dom = Ball(d, 1.0)
    losses = _stream(rng, d, T, mu)
    L = max(f.lipschitz(dom) for f in losses)
    base = FTALScheme(dom, mu, L, update=update).release(losses, 3, np.random.default_rng(0))
    priv = WDPCOCOP(dom, mu, L, T, W, option=option, delta=1e-5, update=update,
                    noise=NodeNoise.none()).release(losses, 3, np.random.default_rng(0))
    np.testing.assert_array_equal(priv, base)
    assert base.shape == (3, T + 1, d)


@pytest.mark.parametrize("direction", ["gradient", "printed"])
@pytest.mark.parametrize("domain", [Simplex(3), Box(2)])
def test_wdp_cocol_without_noise_equals_online_cg(direction, domain):
    rng = np.random.default_rng(3)
    T, mu = 25, 0.5
    losses = _stream(rng, domain.dim, T, mu)
    L = max(f.lipschitz(domain) for f in losses)
    consts = derived_constants(math.sqrt(domain.dim), L, mu, domain.diameter)
    base = OnlineCG(domain, mu, L, direction=direction).release(losses, 2, np.random.default_rng(0))
    priv = WDPCOCOL(domain, mu, L, T, 4, noise=NodeNoise.none(), constants=consts,
                    direction=direction).release(losses, 2, np.random.default_rng(0))
    np.testing.assert_array_equal(priv, base)
    assert np.all(domain.contains(base.reshape(-1, domain.dim)))


def test_online_cg_tracks_the_exact_leader():
    # With the derived constants, the CG iterate stays within the radius invariant of the exact
    # minimiser of J_t: ||x_{t+1} - argmin J_t|| <= r_t (the self-consistency the defaults encode).
    rng = np.random.default_rng(4)
    dom, T, mu = Simplex(3), 60, 1.0
    losses = _stream(rng, 3, T, mu, scale=1.0)
    L = max(f.lipschitz(dom) for f in losses)
    learner = OnlineCG(dom, mu, L)
    out = learner.release(losses, 1, np.random.default_rng(0))[0]
    c = learner.constants
    x1, g, S = out[0], np.zeros(3), np.zeros(3)
    for t in range(1, T + 1):
        g = g + losses[t - 1].grad(out[t - 1])
        S = S + out[t - 1]
        # argmin over P of <g,x> + mu/2 sum ||x - x_tau||^2 + C0 mu/2 ||x - x_1||^2
        target = (S + c.C0 * x1 - g / mu) / (t + c.C0)
        star = dom.project(target)
        assert np.linalg.norm(out[t] - star) <= c.radius(t, mu)


def test_constants_and_noise_bound_validate():
    with pytest.raises(ValueError, match="alpha"):
        COCOLConstants(rho=1.0, alpha=1.5, C0=1.0, C1=1.0)
    assert noise_increment_bound(NodeNoise.none(), 2, 4, 1.0) == 0.0
    # Gamma quantile: the bound is what it says (1 - beta per node pair of covers)
    s = noise_increment_bound(NodeNoise.l2_laplace(2.0), 3, 4, 1.0, beta=0.05)
    m = 2 * 3
    assert s == pytest.approx(m * 2.0 * stats.gamma.ppf(1 - 0.05 / m, 3))


# ------------------------------------------------------------------------------------------------
# W >= T baseline and noise laws
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("T", [1, 5, 8, 13])
def test_window_at_least_T_is_the_ordinary_tree(T):
    learner = WDPCOCOP(Ball(1), 0.5, 1.0, T, None)
    assert learner.window == T
    for W in (T, T + 3):
        for t in range(1, T + 1):
            assert window_nodes_for_prefix(t, W) == sorted(nodes_for_prefix(t),
                                                           key=lambda n: n.first)


def test_printed_node_noise_calibrations():
    dom = Ball(2, 0.5)  # D = 1
    L, mu, eps, W = 2.0, 0.4, 0.5, 6  # L + mu D = 2.4, ceil(log2 6) + 1 = 4
    one = WDPCOCOP(dom, mu, L, 10, W, option="I", epsilon=eps)
    assert one.noise.kind == "l2-laplace" and one.noise.scale == pytest.approx(2.4 * 4 / eps)
    for p in (1, 2):
        two = WDPCOCOP(dom, mu, L, 10, W, option="II", epsilon=eps, delta=1e-4, log_power=p)
        sigma2 = 8 * 2.4**2 * 16 * math.log(2 / 1e-4) ** p / eps**2
        assert two.noise.kind == "gaussian" and two.noise.scale == pytest.approx(math.sqrt(sigma2))
    with pytest.raises(ValueError, match="option"):
        WDPCOCOP(dom, mu, L, 10, W, option="III")
    with pytest.raises(ValueError, match="delta"):
        WDPCOCOP(dom, mu, L, 10, W, option="II", delta=0.0)


def test_first_release_noise_has_the_printed_law():
    # g~_1 = grad f_1(x_1) + one node's noise: Laplace(scale) in d = 1 (Option I), N(0, sigma^2)
    # (Option II). KS at level 1e-3 with a fixed seed: a wrong law (scale off by 10%) is rejected
    # at this n (checked by the second assertion of each pair).
    dom, mu, L, n = Ball(1, 1.0), 0.5, 1.0, 20_000
    f = L2Regularised(LinearLoss(np.array([0.3])), mu)
    for option, law in (("I", stats.laplace), ("II", stats.norm)):
        learner = WDPCOCOP(dom, mu, L, 4, 2, option=option, delta=1e-3)
        learner.reset(n, np.random.default_rng(7))
        learner.learn(f)
        noise = (learner.tree.prefix_sum() - f.grad(dom.project(np.zeros(1))))[:, 0]
        s = learner.noise.scale
        assert stats.kstest(noise, law(scale=s).cdf).pvalue > 1e-3
        assert stats.kstest(noise, law(scale=1.1 * s).cdf).pvalue < 1e-3


def test_horizon_is_enforced():
    learner = WDPCOCOP(Ball(1), 0.5, 1.0, 2, 1)
    f = LinearLoss(np.array([0.1]))
    learner.reset(1, np.random.default_rng(0))
    learner.learn(f)
    learner.learn(f)
    with pytest.raises(ValueError, match="horizon"):
        learner.learn(f)


def test_regret_benchmark_smoke(tmp_path):
    # benchmarks/pfcoco_regret.py at a tiny size: files written, the non-private baselines beat
    # their private counterparts, and re-rendering from the JSON reproduces the page.
    import importlib.util
    import json
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "benchmarks" / "pfcoco_regret.py"
    spec = importlib.util.spec_from_file_location("pfcoco_regret", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.main(["--out", str(tmp_path), "--runs", "2", "--horizons", "16", "32",
                     "--windows", "1", "4", "--window", "4", "--d", "2"]) == 0
    res = json.loads((tmp_path / "pfcoco_regret.json").read_text())
    ball = res["ball_vs_T"]["series"]
    assert all(f < p for f, p in zip(ball["FTAL (non-private)"],
                                     ball["WDP-COCOP Option I, W=4"]))
    page = (tmp_path / "pfcoco.md").read_text()
    assert mod.main(["--out", str(tmp_path), "--render-only"]) == 0
    assert (tmp_path / "pfcoco.md").read_text() == page
    for name in ("pfcoco_ball_regret_vs_T.png", "pfcoco_ball_regret_vs_W.png",
                 "pfcoco_simplex_regret_vs_T.png"):
        assert (tmp_path / name).stat().st_size > 0
