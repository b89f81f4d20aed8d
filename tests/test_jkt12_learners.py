"""Laws and identities of the JKT12 learners (IGD, GIGA, QFTL, POCP/PIGD/PGIGA, PrivateSum, PQFTL,
POL, the doubling POCP) and of their printed calibrations.

Statistical tests use fixed seeds; each states the probability with which a correct implementation
fails it.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize, stats

from dpaudit.learners.domains import Ball, Box
from dpaudit.learners.giga import GIGA, giga_burn_in, gradient_lipschitz
from dpaudit.learners.igd import IGD
from dpaudit.learners.implicit_step import implicit_step
from dpaudit.papers.jkt12.claims import CLAIM_IDS, JKT12_CLAIMS, claimed_privacy
from dpaudit.learners.losses import HingeLoss, LinearLoss, LogisticLoss, SquaredLoss
from dpaudit.learners.pocp import (PGIGA, PIGD, POCP, pgiga_beta, pigd_beta, pigd_lambda, pocp_beta,
                                   pocp_c)
from dpaudit.learners.pocp_doubling import POCPDoubling, doubling_beta
from dpaudit.learners.pol import POL, pol_alpha, pol_beta, pol_printed_sensitivity
from dpaudit.learners.pqftl import PQFTL, pqftl_sigmas
from dpaudit.mechanisms.private_sum import (PrivateSum, PrivateSumTree, decomposition_levels,
                                          private_sum_sigma, released_node_count,
                                          released_noise_matrix, tree_depth)
from dpaudit.learners.qftl import QFTL
from dpaudit.learners.starting_points import sample_uniform

# --------------------------------------------------------------------------------------------------
# Implicit step
# --------------------------------------------------------------------------------------------------


def _losses(d: int, rng: np.random.Generator) -> list:
    v = rng.normal(size=d) * rng.uniform(0.3, 2.0)
    return [LinearLoss(v), SquaredLoss(v, float(rng.normal()) * 2, 0.7),
            LogisticLoss(v, 1.0, 0.3), HingeLoss(v, -1.0, 0.5), HingeLoss(0.05 * v, 1.0, 0.2)]


def _objective(loss, x, eta, extra):
    return lambda z: 0.5 * np.sum((z - x) ** 2) + eta * (float(loss.value(z)) + extra / 2 * z @ z)


@pytest.mark.parametrize("domain", [None, Ball(2, 0.4), Box(2, -0.3, 0.5), Ball(1, 0.2),
                                    Box(3, -1.0, 1.0)])
def test_implicit_step_is_the_constrained_minimiser(domain):
    # Optimality: no feasible point of a fine random cloud around z beats it, and a local
    # first-order check (scipy on the exact objective, started at z) cannot improve it by more
    # than 1e-9.
    rng = np.random.default_rng(3)
    d = 2 if domain is None else domain.dim
    for loss in _losses(d, rng):
        if domain is None and isinstance(loss, LinearLoss):
            continue  # unbounded below: the linear step needs a bounded domain to be a minimum
        x = rng.normal(size=d) * 1.5
        eta, extra = 0.8, 0.25
        z = implicit_step(loss, x, eta, domain, extra_ridge=extra)
        f = _objective(loss, x, eta, extra)
        if domain is not None:
            assert bool(domain.contains(z, 1e-12))
        cloud = z + rng.normal(size=(4000, d)) * 0.05
        if domain is not None:
            cloud = domain.project(cloud)
        assert min(f(c) for c in cloud) >= f(z) - 1e-12
        bounds = None if not isinstance(domain, Box) else [(domain.lower, domain.upper)] * d
        cons = () if not isinstance(domain, Ball) else (
            {"type": "ineq", "fun": lambda q: domain.radius ** 2 - q @ q},)
        res = optimize.minimize(f, z, method="SLSQP", bounds=bounds, constraints=cons,
                                options={"ftol": 1e-15, "maxiter": 500})
        feasible = domain is None or bool(domain.contains(res.x, 1e-10))
        assert not feasible or res.fun >= f(z) - 1e-9


def test_implicit_step_closed_forms_and_batching():
    # Linear loss over a ball: the exact projection of x - eta g (isotropic objective).
    g = np.array([3.0, -1.0])
    x = np.array([[0.1, 0.2], [2.0, 2.0]])
    z = implicit_step(LinearLoss(g), x, np.array([0.5, 1.0]), Ball(2, 1.0))
    want = Ball(2, 1.0).project(x - np.array([[0.5], [1.0]]) * g)
    np.testing.assert_allclose(z, want, atol=1e-15)
    # Squared loss unconstrained: (I + eta (v v^T + rho I)) z = x + eta y v.
    v, y, rho, eta = np.array([0.5, -2.0]), 1.5, 0.3, 0.7
    z = implicit_step(SquaredLoss(v, y, rho), x[0], eta)
    A = np.eye(2) + eta * (np.outer(v, v) + rho * np.eye(2))
    np.testing.assert_allclose(z, np.linalg.solve(A, x[0] + eta * y * v), rtol=1e-13)
    # Each row of a batch is solved on its own.
    batch = implicit_step(LogisticLoss(v, 1.0, 0.2), np.vstack([x, x[::-1]]), 0.3, Box(2, -1, 1))
    single = implicit_step(LogisticLoss(v, 1.0, 0.2), x[1], 0.3, Box(2, -1, 1))
    np.testing.assert_allclose(batch[1], single, atol=1e-13)
    np.testing.assert_allclose(batch[2], single, atol=1e-13)


def test_implicit_step_validates():
    loss = LinearLoss(np.ones(2))
    with pytest.raises(ValueError, match="eta"):
        implicit_step(loss, np.zeros(2), 0.0, Ball(2, 1.0))
    with pytest.raises(ValueError, match="x must have last axis"):
        implicit_step(loss, np.zeros(3), 1.0, Ball(2, 1.0))
    with pytest.raises(ValueError, match="extra_ridge"):
        implicit_step(loss, np.zeros(2), 1.0, Ball(2, 1.0), extra_ridge=-1.0)


# --------------------------------------------------------------------------------------------------
# Non-private learners
# --------------------------------------------------------------------------------------------------


def test_igd_on_the_ridge_filler_contracts_by_t_over_t_plus_1():
    # IGD (eta_t = 1/(alpha t)) on alpha/2||x||^2: x_{t+1} = t x_t / (t + 1), so x_{t+1} = x_2 * 2/(t+1).
    alpha, d, T = 0.7, 3, 40
    loss0 = SquaredLoss(np.array([0.2, 0.0, 0.0]), 4.0, alpha)
    filler = SquaredLoss(np.zeros(d), 0.0, alpha)
    xs = IGD(Box(d, -5.0, 5.0), alpha, np.zeros(d)).run([loss0] + [filler] * (T - 1), 1,
                                                        np.random.default_rng(0))[0]
    t = np.arange(1, T)
    np.testing.assert_allclose(xs[1:], xs[1] * (2.0 / (t + 1))[:, None], rtol=1e-13, atol=1e-16)


def test_igd_uniform_start_and_learning_rate():
    igd = IGD(Ball(2, 1.0), 2.0)
    assert igd.learning_rate(5) == pytest.approx(1.0 / 10.0)
    igd.reset(500, np.random.default_rng(1))
    x1 = igd.predict()
    assert x1.shape == (500, 2) and np.all(np.linalg.norm(x1, axis=1) <= 1.0)
    with pytest.raises(ValueError, match="alpha"):
        IGD(Ball(2, 1.0), 0.0)


def test_starting_points_are_uniform_on_the_ball():
    # ||x||^d ~ U(0, 1) for a uniform point of the unit d-ball. KS p > 1e-3 at a fixed seed: a
    # correct sampler fails with probability 1e-3.
    x = sample_uniform(Ball(3, 2.0), 20_000, np.random.default_rng(11))
    assert stats.kstest((np.linalg.norm(x, axis=1) / 2.0) ** 3, "uniform").pvalue > 1e-3


def test_giga_burn_in_and_projected_step():
    assert giga_burn_in(1.0, 1.0) == 2 and giga_burn_in(0.5, 1.0) == 8
    assert giga_burn_in(1.0, 1.5) == math.ceil(2 * 1.5 ** 2)
    with pytest.raises(ValueError, match="smoothness"):
        giga_burn_in(1.0, 0.5)
    alpha, d = 1.0, 2
    loss = SquaredLoss(np.array([0.3, 0.0]), 1.0, alpha)  # L_G = 1.09: t_q = ceil(2.38) = 3
    dom = Ball(d, 0.3)
    giga = GIGA(dom, alpha, gradient_lipschitz(loss), np.zeros(d))
    xs = giga.run([loss] * 6, 1, np.random.default_rng(0))[0]
    assert giga.t_q == 3
    np.testing.assert_array_equal(xs[:3], 0.0)  # x_1..x_{t_q} at the fixed point
    x = xs[2]
    for t in range(3, 6):  # x_{t+1} = Pi_C(x_t - 2/(alpha t) grad f(x_t)) for t >= t_q
        x = dom.project(x - 2.0 / (alpha * t) * loss.grad(x))
        np.testing.assert_allclose(xs[t], x, atol=1e-15)
    with pytest.raises(ValueError, match="not differentiable"):
        giga.learn(HingeLoss(np.ones(2), 1.0, 1.0))


def test_qftl_is_follow_the_leader():
    # x_{t+1} = argmin sum_{s<=t} 1/2 (y_s - <v_s, x>)^2 + alpha/2 ||x||^2 (normal equations).
    rng = np.random.default_rng(5)
    d, alpha = 3, 0.4
    losses = [SquaredLoss(rng.normal(size=d), float(rng.normal()), alpha) for _ in range(8)]
    xs = QFTL(d, alpha).run(losses, 2, rng)
    np.testing.assert_array_equal(xs[0, 0], 0.0)
    for t in range(1, 8):
        V = sum(np.outer(f.v, f.v) for f in losses[:t]) + t * alpha * np.eye(d)
        u = sum(f.y * f.v for f in losses[:t])
        np.testing.assert_allclose(xs[:, t], np.broadcast_to(np.linalg.solve(V, u), (2, d)),
                                   rtol=1e-12)
    with pytest.raises(ValueError, match="ridge"):
        QFTL(d, alpha).run([SquaredLoss(np.ones(d), 1.0, 0.5)], 1, rng)


# --------------------------------------------------------------------------------------------------
# Printed calibrations
# --------------------------------------------------------------------------------------------------


def test_pocp_c_and_beta_as_printed():
    T, eps, dl = 1000, 0.3, 1e-4
    # COLT: T^{2c} = ln(2/delta) / (2 eps); arXiv: T^{2c} = ln(2/delta) / 2.
    assert T ** (2 * pocp_c("colt", T, eps, dl)) == pytest.approx(math.log(2 / dl) / (2 * eps))
    assert T ** (2 * pocp_c("arxiv", T, eps, dl)) == pytest.approx(math.log(2 / dl) / 2)
    assert pocp_c("colt", T, 1.0, dl) == pytest.approx(pocp_c("arxiv", T, 1.0, dl))
    for version in ("colt", "arxiv"):
        p = T ** (0.5 + pocp_c(version, T, eps, dl))
        want = 2.5 * p * math.sqrt(2 / eps * (math.log(T / dl) + math.sqrt(eps) / p))
        assert pocp_beta(version, T, 2.5, eps, dl) == pytest.approx(want, rel=1e-14)
    # PIGD / PGIGA: lambda = 2L/alpha (COLT) vs 2L (arXiv).
    assert pigd_beta("colt", T, 1.5, 0.2, eps, dl) == pytest.approx(
        pocp_beta("colt", T, 2 * 1.5 / 0.2, eps, dl))
    assert pigd_beta("arxiv", T, 1.5, 0.2, eps, dl) == pytest.approx(
        pocp_beta("arxiv", T, 2 * 1.5, eps, dl))
    assert pgiga_beta("arxiv", T, 1.5, 0.2, eps, dl) == pytest.approx(
        pocp_beta("arxiv", T, 3.0, eps, dl))
    assert pigd_lambda("colt", 1.0, 0.5) == 4.0 and pigd_lambda("arxiv", 1.0, 0.5) == 2.0
    with pytest.raises(ValueError, match="T must be"):
        pocp_c("colt", 1, eps, dl)
    with pytest.raises(ValueError, match="version"):
        pocp_c("neurips", T, eps, dl)


def test_private_sum_sigma_versions_and_readings():
    T, R, eps, dl = 64, 2.0, 0.5, 1e-5
    colt = private_sum_sigma("colt", T, R, eps, dl)
    arxiv = private_sum_sigma("arxiv", T, R, eps, dl)
    assert colt ** 2 == pytest.approx(R ** 2 / eps ** 2 * 6 ** 2 * math.log(6 / dl))
    assert arxiv ** 2 == pytest.approx(R ** 2 / eps * 6 ** 2 * math.log(6 / dl))
    nat = private_sum_sigma("colt", T, R, eps, dl, "natural")
    assert nat ** 2 == pytest.approx(R ** 2 / eps ** 2 * math.log(T) ** 2 * math.log(math.log(T) / dl))
    sV, su = pqftl_sigmas("colt", T, R, eps, dl)
    assert sV == pytest.approx(private_sum_sigma("colt", T, R * R, eps / 2, dl / 2))
    assert su == pytest.approx(private_sum_sigma("colt", T, R, eps / 2, dl / 2))
    with pytest.raises(ValueError, match="T must be"):
        private_sum_sigma("colt", 1, R, eps, dl)


def test_pol_and_doubling_calibrations():
    T, L, eg, xs, eps, dl = 500, 1.0, 0.1, 2.0, 0.5, 1e-6
    alpha = pol_alpha(eg, xs)
    assert alpha == pytest.approx(0.1 / 4)
    assert pol_beta(T, L, alpha, xs, eps, dl) == pytest.approx(
        2 * math.sqrt(2) * (L + alpha * xs) * math.log(T) / (T * eps) * math.sqrt(math.log(1 / dl) + eps))
    assert pol_printed_sensitivity(T, L, alpha, xs) == pytest.approx(2 * (L + alpha * xs) * math.log(T) / T)
    for t, k in ((1, 0), (2, 1), (3, 1), (4, 2), (7, 2), (8, 3)):
        p = 2 ** k
        assert doubling_beta(t, 0.7, eps, dl) == pytest.approx(
            0.7 * math.sqrt(2 * p / eps * (math.log(p / dl) + math.sqrt(eps / p))))


def test_claims_catalogue():
    assert set(CLAIM_IDS) == set(JKT12_CLAIMS) and len(CLAIM_IDS) == 13
    colt, arxiv = JKT12_CLAIMS["jkt12-colt/pigd"], JKT12_CLAIMS["jkt12-arxiv/pigd"]
    assert colt.provenance.paper == "jkt12-colt.txt" and arxiv.provenance.paper == "jkt12-arxiv.txt"
    assert "2L/(alpha t)" in colt.lemmas[0].statement and "2L/t" in arxiv.lemmas[0].statement
    assert "eps^2" in JKT12_CLAIMS["jkt12-colt/privatesum"].calibration
    assert "eps^2" not in JKT12_CLAIMS["jkt12-arxiv/privatesum"].calibration
    assert claimed_privacy("jkt12-arxiv/pgiga", 0.5, 1e-5) == (1.5, 2e-5)
    assert claimed_privacy("jkt12-colt/pol", 0.5, 1e-5) == (0.5, 1e-5)
    e, dl = claimed_privacy("jkt12-colt/pocp-doubling", 0.5, 1e-5, 1024)
    assert e == pytest.approx(15.0) and dl == pytest.approx(1e-4 + 2 / 1024)
    assert JKT12_CLAIMS["jkt12-colt/pol"].release.value == "final"


# --------------------------------------------------------------------------------------------------
# Private learners: the law of the released outputs
# --------------------------------------------------------------------------------------------------


def test_pocp_release_is_the_iterate_plus_gaussian_noise():
    # C = R^d: x^_{t+1} = x_{t+1} + N(0, (beta/t)^2 I). Standardised residuals of 4 rounds x 2
    # coordinates pooled: KS p > 1e-3 (a correct sampler fails with probability 1e-3).
    d, T, n = 2, 5, 5000
    losses = [SquaredLoss(np.array([0.3, -0.2]), 0.5, 1.0)] * T
    p = POCP(QFTL(d, 1.0), None, T, 2.0, 1e-3, 0.1, "colt", x1_hat=np.zeros(d))
    out = p.run(losses, n, np.random.default_rng(8))
    base = QFTL(d, 1.0).run(losses, 1, np.random.default_rng(0))[0]
    z = (out[:, 1:, :] - base[None, 1:, :]) / (p.beta / np.arange(1, T))[None, :, None]
    assert stats.kstest(z.ravel(), "norm").pvalue > 1e-3
    np.testing.assert_array_equal(out[:, 0], 0.0)
    with pytest.raises(RuntimeError, match="T=5"):
        p.learn(losses[0])


def test_pigd_release_is_projected_and_rejects_losses_outside_the_class():
    # The released points are Pi_C(x_{t+1} + b): in C, and at the boundary of a 1-D box with the
    # Gaussian tail probability. Binomial count within 5 standard errors (fails w.p. < 1e-6).
    D, T, n = 0.5, 3, 20_000
    box = Box(1, -D, D)
    loss = SquaredLoss(np.array([0.1]), 2.0, 1.0)
    pigd = PIGD(box, T, loss.lipschitz(box), 1.0, 5.0, 1e-3, "colt", np.zeros(1))
    out = pigd.run([loss] * T, n, np.random.default_rng(2))
    assert np.all(np.abs(out) <= D)
    x2 = IGD(box, 1.0, np.zeros(1)).run([loss] * 2, 1, np.random.default_rng(0))[0, 1, 0]
    s = pigd.noise_std(1)
    p_hi = stats.norm.sf((D - x2) / s)
    count = int(np.sum(out[:, 1, 0] == D))
    assert abs(count - n * p_hi) <= 5 * math.sqrt(n * p_hi * (1 - p_hi))
    pigd.reset(1, np.random.default_rng(0))
    with pytest.raises(ValueError, match="Lipschitz"):
        pigd.learn(SquaredLoss(np.array([3.0]), 5.0, 1.0))
    with pytest.raises(ValueError, match="strong convexity"):
        pigd.learn(SquaredLoss(np.array([0.1]), 0.0, 0.5))
    with pytest.raises(ValueError, match="delta"):
        PIGD(box, T, 1.0, 1.0, 1.0, 1.5)
    with pytest.raises(ValueError, match="T must be"):
        PIGD(box, 1, 1.0, 1.0, 1.0, 1e-3)


def test_pgiga_adds_noise_only_after_the_burn_in():
    box = Box(1, -2.0, 2.0)
    loss = SquaredLoss(np.array([0.1]), 1.0, 1.0)
    pg = PGIGA(box, 6, loss.lipschitz(box), 1.0, 1.0 + 0.01, 1.0, 1e-3, "arxiv", np.zeros(1))
    assert pg.t_q == 3 and [pg.releases_noise(t) for t in range(1, 7)] == [False, False, True,
                                                                         True, True, False]
    out = pg.run([loss] * 6, 50, np.random.default_rng(0))
    np.testing.assert_array_equal(out[:, :3], 0.0)  # x^_1..x^_{t_q}: the fixed random point
    assert np.all(np.std(out[:, 3:, 0], axis=0) > 0)


def test_doubling_noise_schedule_law():
    # C = R^d: x^_{t+1} - x_{t+1} ~ N(0, (beta_t/t)^2); KS p > 1e-3 on pooled residuals.
    d, T, n = 1, 6, 4000
    losses = [SquaredLoss(np.array([0.3]), 0.5, 1.0)] * T
    q = POCPDoubling(QFTL(d, 1.0), None, 0.2, 1.0, 1e-3, x1_hat=np.zeros(d))
    out = q.run(losses, n, np.random.default_rng(4))
    base = QFTL(d, 1.0).run(losses, 1, np.random.default_rng(0))[0]
    sd = np.array([q.noise_std(t) for t in range(1, T)])
    z = (out[:, 1:, 0] - base[None, 1:, 0]) / sd[None, :]
    assert stats.kstest(z.ravel(), "norm").pvalue > 1e-3


# --------------------------------------------------------------------------------------------------
# PrivateSum and PQFTL
# --------------------------------------------------------------------------------------------------


def test_tree_structure():
    assert [tree_depth(T) for T in (1, 2, 3, 4, 5, 8, 9)] == [0, 1, 2, 2, 3, 3, 4]
    assert decomposition_levels(6) == [1, 2] and decomposition_levels(7) == [0, 1, 2]
    for horizon in (1, 2, 5, 8, 13, 16):
        M, nodes = released_noise_matrix(horizon)
        assert len(nodes) == horizon  # one new released node per step: M is invertible
        assert abs(np.linalg.det(M)) == pytest.approx(1.0)
        for tau in range(1, horizon + 1):
            touched = sum(1 for j, (h, e) in enumerate(nodes) if e - 2 ** h < tau <= e)
            assert released_node_count(tau, horizon) == touched
    assert released_node_count(1, 64) == 7 and released_node_count(1, 63) == 6


def test_private_sum_noise_is_independent_of_the_data_and_has_the_tree_covariance():
    T, d, R = 8, 2, 1.0
    mech = PrivateSum(d, T, R, 1.0, 1e-5, "colt")
    w = np.random.default_rng(0).normal(size=(T, d))
    w /= np.maximum(1.0, np.linalg.norm(w, axis=1, keepdims=True))
    # Same generator state: the outputs on w and on 0 differ by exactly the prefix sums (the noise
    # never depends on the data).
    diff = mech.sample(w, 3, np.random.default_rng(9)) - mech.sample(np.zeros((T, d)), 3,
                                                                     np.random.default_rng(9))
    np.testing.assert_allclose(diff, np.broadcast_to(np.cumsum(w, axis=0), (3, T, d)), atol=1e-12)
    # Covariance of W^_1..W^_T (one coordinate) = sigma^2 M M^T. With n = 40,000 runs, each entry's
    # standard error is <= sigma^2 sqrt(2 * 4^2 / n) ~ 0.028 sigma^2; 0.15 sigma^2 is > 5 s.e.
    out = mech.sample(np.zeros((T, d)), 40_000, np.random.default_rng(1))[:, :, 0]
    M, _ = released_noise_matrix(T)
    np.testing.assert_allclose(np.cov(out.T) / mech.sigma ** 2, M @ M.T, atol=0.15)
    with pytest.raises(ValueError, match="exceeds the declared bound"):
        mech.sample(np.full((T, d), 5.0), 1, np.random.default_rng(0))


def test_private_sum_tree_streams_like_the_mechanism():
    T, d = 5, 1
    tree = PrivateSumTree(d, T, 0.5)
    tree.reset(2, np.random.default_rng(3))
    streamed = np.stack([tree.update(np.array([1.0])) for _ in range(T)], axis=1)
    mech = PrivateSum(d, T, 1.0, 1.0, 1e-5)
    mech.sigma = 0.5
    np.testing.assert_allclose(streamed, mech.sample(np.ones((T, d)), 2, np.random.default_rng(3)))
    with pytest.raises(RuntimeError, match="T=5"):
        tree.update(np.array([1.0]))


def test_pqftl_tends_to_qftl_without_noise_and_enforces_r():
    rng = np.random.default_rng(6)
    d, T, alpha, R = 2, 6, 0.5, 1.0
    losses = [SquaredLoss(rng.uniform(-0.5, 0.5, d), float(rng.uniform(-1, 1)), alpha)
              for _ in range(T)]
    # eps = 1e12: node noise ~ 1e-11, so the release equals QFTL to ~1e-9.
    out = PQFTL(d, T, alpha, R, 1e12, 1e-5, "colt").run(losses, 2, rng)
    np.testing.assert_allclose(out, QFTL(d, alpha).run(losses, 2, rng), atol=1e-8)
    with pytest.raises(ValueError, match="declared bound"):
        PQFTL(d, T, alpha, 0.1, 1.0, 1e-5).run(losses, 1, rng)


# --------------------------------------------------------------------------------------------------
# POL
# --------------------------------------------------------------------------------------------------


def test_pol_releases_the_noisy_projected_average_iterate():
    d, T = 1, 20
    dom = Box(d, -1.0, 1.0)
    losses = [LogisticLoss(np.array([0.8]), (-1.0) ** t, 0.0) for t in range(T)]
    pol = POL(d, T, 1.0, 0.5, 1.0, 2.0, 1e-3, dom, np.zeros(d))
    xs = IGD(dom, pol.alpha, np.zeros(d), extra_ridge=pol.alpha).run(losses, 1,
                                                                     np.random.default_rng(0))[0]
    x_tilde = pol.average_iterate(losses, 1, np.random.default_rng(0))[0]
    np.testing.assert_allclose(x_tilde, xs.mean(axis=0), atol=1e-15)
    # Released: clip(x~ + N(0, beta^2)) on [-1, 1]. The interior part's CDF matches the clipped
    # Gaussian: KS on the uniformised values (p > 1e-3; a correct sampler fails w.p. 1e-3).
    out = pol.sample(losses, 20_000, np.random.default_rng(5))[:, 0]
    inside = out[(out > -1) & (out < 1)]
    lo, hi = stats.norm.cdf((-1 - x_tilde[0]) / pol.beta), stats.norm.cdf((1 - x_tilde[0]) / pol.beta)
    u = (stats.norm.cdf((inside - x_tilde[0]) / pol.beta) - lo) / (hi - lo)
    assert stats.kstest(u, "uniform").pvalue > 1e-3
    with pytest.raises(ValueError, match="declared L"):
        pol.sample([LogisticLoss(np.array([5.0]), 1.0, 0.0)] * T, 1, np.random.default_rng(0))
