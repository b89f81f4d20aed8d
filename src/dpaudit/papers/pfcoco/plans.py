"""The pfcoco grids and point plans: where the claim driver audits, and what it runs there
(Web Intelligence 2020, window DP).

:func:`grid` gives the audited points (the stated range's extremes, ``T > W`` and ``T < W``, both
boundary readings of Def. 6 and both readings of an ambiguous printed formula); :func:`plan` gives
the driver's :class:`~dpaudit.claims.declaration.PointPlan` at a point of :func:`grid`: the
claimed ``(epsilon, delta)``, the exact epsilon of the worst realisable pair where the law is known
(:mod:`.exact`), an upper value for it, the accountant at the class's worst-case sensitivity, a
black-box test with a likelihood-ratio-shaped statistic (built here) and the calibration that
would deliver the claim. The declarations, lemma checks and findings are in
:mod:`dpaudit.papers.pfcoco.audit`, as in every paper package.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Mapping

import dp_accounting
import numpy as np

from dpaudit.formal.accounting import (
    calibrate_gaussian_noise_multiplier,
    epsilon_of_event,
    gaussian_epsilon,
    homogeneous_pure_composition_epsilon,
)
from dpaudit.claims import WindowBoundary, WindowScope
from dpaudit.claims.context import coarse as is_coarse
from dpaudit.claims.curve_deltas import EVEN_DECADES
from dpaudit.claims.declaration import EmpiricalPlan, PointPlan, Skip
from dpaudit.claims.evidence import PointEvidence
from dpaudit.learners.domains import Ball, Box, Domain, Simplex
from dpaudit.learners.wdp_cocol import WDPCOCOL
from dpaudit.learners.wdp_cocop import WDPCOCOP, option_noise
from dpaudit.mechanisms.events import EpsilonDeltaDpEvent
from dpaudit.mechanisms.l2_laplace import sample_l2_laplace
from dpaudit.mechanisms.tree_aggregation import NodeNoise, tree_prefix_sums
from dpaudit.mechanisms.window_tree import (
    max_window_nodes_per_leaf,
    paper_gaussian_noise,
    window_tree_prefix_sums,
)
from dpaudit.papers.pfcoco import exact as ex
from dpaudit.papers.pfcoco.claims import PFCOCO_CLAIMS
from dpaudit.papers.pfcoco.pairs import centre_radius, learner_pair, tree_pair


__all__ = ["grid", "plan", "NEAR_ONE_DELTAS", "gaussian_curve", "pure_curve", "window_tree_mechanism", "node_llr_statistic",
           "TRAIN_FRACTION", "SCORE_DECIMALS"]

CLAIMS = {c.id: c for c in PFCOCO_CLAIMS}

def gaussian_curve(mu_exact: float | None, mu_accountant: float | None) -> dict[str, Any]:
    """Privacy-curve series of Gaussian releases with shifts ``mu`` (closed form).

    Parameters
    ----------
    mu_exact, mu_accountant
        The exact and the accountant's Gaussian shifts (``inf``: epsilon inf; None: no series).

    Returns
    -------
    dict
        ``deltas`` (:data:`~dpaudit.claims.curve_deltas.EVEN_DECADES`) and the two series.
    """
    def series(mu: float | None) -> list[float] | None:
        if mu is None:
            return None
        return [math.inf if math.isinf(mu) else gaussian_epsilon(mu, d) for d in EVEN_DECADES]
    return {"deltas": list(EVEN_DECADES), "epsilon_exact": series(mu_exact),
            "epsilon_accountant": series(mu_accountant)}


def pure_curve(epsilon0: float | None, count: int) -> dict[str, Any]:
    """Privacy-curve series of ``count`` pure ``epsilon0``-DP nodes (optimal composition).

    Parameters
    ----------
    epsilon0, count
        Each node's pure epsilon (``None``: no series; a leaf inside an exact sum), node count.

    Returns
    -------
    dict
        ``deltas`` (:data:`~dpaudit.claims.curve_deltas.EVEN_DECADES`), the accountant series
        (an upper value for l2-Laplace nodes) and ``epsilon_exact = None`` (no closed form).
    """
    acc = (None if epsilon0 is None else
           [homogeneous_pure_composition_epsilon(epsilon0, count, d) for d in EVEN_DECADES])
    return {"deltas": list(EVEN_DECADES), "epsilon_exact": None, "epsilon_accountant": acc}
#: Training share of the empirical tests (statistic fixed; only the threshold is chosen).
TRAIN_FRACTION = 0.3


def _test(**fields: Any) -> EmpiricalPlan:
    """An :class:`EmpiricalPlan` with this paper's defaults: a protected-position pair, a
    likelihood-ratio-shaped statistic fixed in advance, :data:`TRAIN_FRACTION` of the runs to
    choose the threshold."""
    fields.setdefault("what", "protected-position pair, likelihood-ratio statistic")
    fields.setdefault("train_fraction", TRAIN_FRACTION)
    return EmpiricalPlan(**fields)


def _said(text: str | None) -> Callable[[], str | None] | None:
    """A recommendation already worked out, in the shape ``PointPlan.recommendation`` takes."""
    return None if text is None else (lambda: text)


# --------------------------------------------------------------------------------------------
# Statistics
# --------------------------------------------------------------------------------------------

#: Scores are rounded to this many decimals. The Laplace log-likelihood ratio is constant (an atom)
#: on half-lines, and its floating-point value there differs by an ulp between the two inputs
#: because ``x + noise`` and ``x' + noise`` round differently (the low-order bits of a
#: floating-point release reveal the input: Mironov, CCS 2012). Unrounded, an event "score <=
#: -1 - 2^-52" catches only one input's runs and gives a lower bound of 4.4 on a 0.5-DP Laplace
#: release; rounding keeps the auditor about the mechanism's law, not its rounding pattern.
SCORE_DECIMALS = 9


def _laplace_llr(v: np.ndarray, c0: np.ndarray, c1: np.ndarray, scale: float) -> np.ndarray:
    return (np.abs(v - c1) - np.abs(v - c0)) / scale


def _rounded(score: Callable[[np.ndarray], np.ndarray]) -> Callable[[np.ndarray], np.ndarray]:
    def rounded(out: np.ndarray) -> np.ndarray:
        return np.round(score(out), SCORE_DECIMALS)
    return rounded


def node_llr_statistic(B: np.ndarray, leaf_nodes: list[int], exposure: np.ndarray, shift: float,
                       noise: NodeNoise) -> Callable[[np.ndarray], np.ndarray]:
    """Row-wise score of a residual sequence ``y`` (``(n, T)``, first coordinate) for world 0.

    World 0's residual is ``B n``; world 1's is ``B n - shift * exposure``. Gaussian nodes:
    ``exposure^T (B B^T)^+ y`` (the exact log-likelihood ratio up to an affine map). Laplace
    nodes: node values estimated by ``B^+ y`` and scored by the Laplace log-likelihood ratio of
    the nodes containing the leaf (the exact one when ``B`` is invertible), **plus** the Laplace
    log-likelihood ratio of every release containing the leaf taken on its own. The second term
    costs little power on a correct tree (W = 8, eps = 1, 200k runs: lower bound 0.895 instead of
    0.927) and is what catches a tree that redraws its noise per release instead of reusing nodes
    (1.23 instead of 0.93 on that bug): the auditor is not tuned to the correct implementation.

    Parameters
    ----------
    B, leaf_nodes, exposure
        :func:`~dpaudit.papers.pfcoco.exact.release_structure`'s matrix, its columns containing
        the leaf, the leaf's :func:`~dpaudit.papers.pfcoco.exact.leaf_exposure`.
    shift, noise
        The leaf's difference between the worlds (first coordinate); the node noise.

    Returns
    -------
    Callable
        ``score(y)``: one log-likelihood-ratio score per row, larger for world 0.
    """
    if noise.kind == "gaussian":
        w = np.linalg.pinv(B @ B.T) @ exposure
        return lambda y: y @ w
    P = np.linalg.pinv(B)
    idx = np.asarray(leaf_nodes, dtype=int)
    s = noise.scale

    rel = np.flatnonzero(exposure > 0)

    def score(y: np.ndarray) -> np.ndarray:
        nodes = y @ P.T
        v = nodes[:, idx]
        r = y[:, rel]
        return (_laplace_llr(v, np.zeros_like(v), np.full_like(v, -shift), s).sum(axis=1)
                + _laplace_llr(r, np.zeros_like(r), np.full_like(r, -shift), s).sum(axis=1))

    return score


def window_tree_mechanism(W: int | None, noise: NodeNoise, layout: str = "exact"
                          ) -> Callable[[np.ndarray, int, np.random.Generator], np.ndarray]:
    """``mechanism(stream, n, rng)``: all releases, shape ``(n, T, d)`` (``W=None``: plain tree).

    Parameters
    ----------
    W, noise, layout
        Window length (``None``: the standard tree of Sec. III-A), node noise, layout reading.
    """
    def mechanism(data: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        if W is None:
            return tree_prefix_sums(data, noise, n, rng)
        return window_tree_prefix_sums(data, W, noise, n, rng, layout=layout)
    return mechanism


def _tree_statistic(W: int | None, T: int, position: int, shift: float, noise: NodeNoise,
                    layout: str) -> Callable[[np.ndarray], np.ndarray]:
    B, nodes = ex.release_structure(W, T, layout)
    leaf_nodes = [j for j, n in enumerate(nodes) if n.contains(position)]
    exposure = ex.leaf_exposure(position, T)
    inner = node_llr_statistic(B, leaf_nodes, exposure, shift, noise)
    # residual of world 0: releases minus the clean prefix sums (+shift/2 from the leaf on)
    clean = shift / 2.0 * exposure

    def score(out: np.ndarray) -> np.ndarray:
        return inner(out[:, :, 0] - clean)
    return _rounded(score)


# --------------------------------------------------------------------------------------------
# Grids
# --------------------------------------------------------------------------------------------

def _max_T(budget: Any) -> int:
    return int(getattr(budget, "max_T", 256))


#: The near-one end of a stated delta in (0, 1), where a sigma ~ ln(2/delta) calibration shrinks.
NEAR_ONE_DELTAS = (0.5, 0.99)


def _learner_deltas(coarse: bool, largest_eps: bool, quick_here: bool) -> tuple[float, ...]:
    """The deltas of an Option II learner's point: 1e-5, and the near-one end at the largest epsilon
    (10: the largest Gaussian shift), on every configuration of the standard grid but only one of
    the quick grid's."""
    return (1e-5,) + (NEAR_ONE_DELTAS if largest_eps and (quick_here or not coarse) else ())


def grid(claim_id: str, budget: Any) -> list[dict[str, Any]]:
    """The audited points of ``claim_id`` under ``budget`` (``grid``: coarse/full, ``max_T``).

    Window claims: T < W, T = W and T > W, both boundary readings of Def. 6, epsilon 0.1, 10 and
    1 (full grid; WDP-COCOL always, first); Gaussian claims: ``log_power`` 2 and 1, deltas up to
    :data:`NEAR_ONE_DELTAS`; learners: ``mu D / L`` up to the range's end 2 (full grid).
    Duplicates are dropped, the order kept (the driver breaks ranking ties in grid order).

    Parameters
    ----------
    claim_id, budget
        A pfcoco claim id (:data:`CLAIMS`); ``budget.grid`` and ``max_T`` (default 256) are read.

    Raises
    ------
    KeyError
        If ``claim_id`` is not a pfcoco claim.
    """
    coarse, max_T = is_coarse(budget), _max_T(budget)
    eps_set = (0.1, 10.0) if coarse else (0.1, 1.0, 10.0)
    WT = [(4, 2), (4, 4), (8, 8), (8, 20), (6, 6), (1, 5)] if coarse else \
        [(1, 1), (1, 5), (2, 2), (4, 2), (4, 4), (6, 6), (8, 8), (8, 20), (16, 64), (64, 16),
         (16, 200)]  # (1, 1): T = 1 closes the stated T >= 1, its one node carries the budget
    WT = [(W, T) for W, T in WT if T <= max_T]
    out: list[dict[str, Any]] = []
    if claim_id == "pfcoco/window-tree-gamma":
        for W, T in WT:
            for b in ("strict", "inclusive"):
                TT = T if b == "strict" or T > W else W + 1  # inclusive: its own last horizon
                for e in eps_set:
                    out.append({"epsilon": e, "W": W, "T": TT, "d": 1, "boundary": b})
        out.append({"epsilon": 1.0, "W": 8, "T": 8, "d": 3, "boundary": "strict"})
    elif claim_id == "pfcoco/window-tree-gaussian":
        # Lemma 3 states delta in (0, 1): sigma^2 ~ ln^p(2/delta) shrinks as delta -> 1 (0.5 and
        # 0.99 audited; the quick grid takes them at W = 1, eps = 10, where they come closest)
        deltas = (1e-8, 1e-2) if coarse else (1e-8, 1e-5, 1e-2) + NEAR_ONE_DELTAS
        for W, T in WT:
            for b in ("strict", "inclusive"):
                TT = T if b == "strict" or T > W else W + 1
                for p in (2, 1):
                    for e in eps_set:
                        for dl in deltas + (NEAR_ONE_DELTAS if coarse and W == 1 and e == 10.0
                                            else ()):
                            out.append({"epsilon": e, "delta": dl, "W": W, "T": TT, "d": 1,
                                        "boundary": b, "log_power": p})
    elif claim_id in ("pfcoco/wdp-cocop-gamma", "pfcoco/wdp-cocop-gaussian"):
        gauss = claim_id.endswith("gaussian")
        # standard grid: W = 1 and mu D = 2L close the stated W >= 1 and mu D / L in (0, 2]
        shapes = [(8, 8), (4, 12), (16, 8)] if coarse else [(8, 8), (4, 12), (16, 8), (2, 20),
                                                              (32, 32), (1, 8)]
        for W, T in shapes:
            for b in ("strict", "inclusive"):
                for ratio in ((0.01, 1.9) if coarse else (0.01, 0.5, 1.9, 2.0)):
                    for e in eps_set:
                        prm = {"epsilon": e, "W": W, "T": T, "d": 1, "muD_over_L": ratio,
                               "boundary": b, "update": "exact"}
                        if gauss:
                            for p in (2, 1):
                                for dl in _learner_deltas(coarse, e == 10.0, (W, T) == shapes[0]
                                                          and ratio == 0.01 and b == "strict"):
                                    out.append({**prm, "delta": dl, "log_power": p})
                        else:
                            out.append(prm)
        if not gauss:
            out.append({"epsilon": 1.0, "W": 8, "T": 8, "d": 1, "muD_over_L": 0.01,
                        "boundary": "strict", "update": "printed"})
    elif claim_id in ("pfcoco/wdp-cocol-gamma", "pfcoco/wdp-cocol-gaussian"):
        gauss = claim_id.endswith("gaussian")
        # T = W, T > W, T < W; both readings; the epsilon range's ends and eps = 1. eps = 1 comes
        # first: the driver tests the highest-ranked points and breaks ties in grid order, and
        # the accountant/claim ratio ties across eps, while an empirical test has most power at
        # moderate eps (at 0.1 the gap is within sampling error, at 10 events have mass e^-10)
        # W = 1 closes the stated W >= 1: one noisy node per leaf, where the printed L + mu D
        # sensitivity falls furthest short of the class's 2L (ranges.py); the quick grid has it
        # on the box for the Gamma claim, whose verdict rests on an empirical lower bound. It
        # comes first: its unprojected release leaks the most (2 (L - mu R)/(L + mu D) eps =
        # 1.970 eps against 1.478 eps at W = T = 8), so the tied accountant ranks test it first
        shapes = ((1, 8, "strict"), (8, 8, "strict"), (4, 12, "strict"), (16, 8, "strict"),
                  (8, 8, "inclusive"))
        for dom in ("box", "simplex"):
            for W, T, b in (s for s in shapes if s[0] > 1 or not coarse
                            or (dom == "box" and not gauss)):
                # mu D = 2L closes the stated range (standard grid: its epsilon is 0 on the box,
                # and the simplex, R > D/2, has no such loss: ranges.py)
                for ratio in (0.01, 1.5) if coarse else (0.01, 1.5, 2.0):
                    for e in (1.0, *(x for x in eps_set if x != 1.0)):
                        prm = {"epsilon": e, "W": W, "T": T, "domain": dom,
                               "d": 1 if dom == "box" else 3, "muD_over_L": ratio, "boundary": b}
                        if gauss:
                            # p = 2 is the printed ln^2 (the primary reading), p = 1 the
                            # alternative (claims.PRIMARY_READINGS)
                            for p in (2, 1):
                                for dl in _learner_deltas(coarse, e == 10.0, (W, T, dom, ratio) == (
                                        8, 8, "box", 0.01) and b == "strict"):
                                    out.append({**prm, "delta": dl, "log_power": p})
                        else:
                            out.append(prm)
    elif claim_id == "pfcoco/standard-tree":
        Ts = (2, 3, 8, 64) if coarse else (2, 3, 8, 64, 100, 256)
        for T in (t for t in Ts if t <= max_T):
            for e in eps_set:
                out.append({"epsilon": e, "T": T, "d": 1})
        out.append({"epsilon": 1.0, "T": 8, "d": 3})
    elif claim_id == "pfcoco/prop-a1":
        for e in (0.01, 0.5, 0.99):
            for d in (1, 3):
                out.append({"epsilon": e, "d": d})
    elif claim_id == "pfcoco/prop-a3":
        for e in (0.01, 0.5, 0.99):
            for dl in (1e-8, 1e-5, 0.1, 0.99):   # 0.99: the near-one end of delta in (0, 1)
                out.append({"epsilon": e, "delta": dl})
    elif claim_id == "pfcoco/prop-a6":
        for e in (0.01, 0.1, 1.0):
            for d1 in (0.0, 1e-6):
                for d2 in (1e-8, 1e-3) + (() if coarse else NEAR_ONE_DELTAS):
                    for k in ((1, 10, 100) if not coarse else (1, 100)):
                        out.append({"epsilon": e, "delta_1": d1, "delta_2": d2, "k": k})
    else:
        raise KeyError(f"unknown pfcoco claim id {claim_id!r}; known: {sorted(CLAIMS)}")
    unique: list[dict[str, Any]] = []
    for prm in out:  # the inclusive reading maps several (W, T) to the same horizon
        if prm not in unique:
            unique.append(prm)
    return unique


# --------------------------------------------------------------------------------------------
# Plans
# --------------------------------------------------------------------------------------------

def _scope(params: Mapping[str, Any]) -> WindowScope:
    return WindowScope("W", WindowBoundary(params.get("boundary", "strict")))


def _laplace_accountant(W: int, T: int, oldest: int, sensitivity: float, scale: float,
                        k: int) -> float | None:
    """Worst case over the class and the protected positions, l2-Laplace nodes.

    dp-accounting's composition of the ``k`` noisy nodes a leaf can lie in while no release
    contains it exactly; under the inclusive reading the oldest protected leaf is also inside an
    exact sum at the last horizon (only that leaf can be): there the composition of the shifted
    node noises of :func:`~dpaudit.papers.pfcoco.exact.laplace_release_upper` (basic composition
    of pure epsilons) is the bound, ``None`` if it does not exist.
    """
    acc = ex.accountant_epsilon("l2-laplace", scale, sensitivity, k, 0.0)
    if not ex.exposed_exactly(W, T, oldest):
        return acc
    lp = ex.laplace_release_upper(W, T, oldest, sensitivity, scale)
    return None if lp is None else max(acc, lp)


def _plan_window_tree(params: Mapping[str, Any], gauss: bool) -> PointPlan | Skip:
    eps, W, T, d = params["epsilon"], params["W"], params["T"], params["d"]
    delta = params.get("delta", 0.0)
    scope = _scope(params)
    Delta = 1.0  # the claims are scale-invariant in Delta_2 (noise scales with it)
    data0, data1 = tree_pair(scope, W, T, d, Delta)
    i = scope.protected_positions(T, W)[0]
    if gauss:
        noise = paper_gaussian_noise(eps, delta, Delta, W, log_power=params["log_power"])
        exact = ex.gaussian_release_epsilon(W, T, i, Delta, noise.scale, delta)
        upper = exact
        # worst case over the class: the release is linear-Gaussian, so every pair differing in
        # leaf j by at most Delta is dominated by the Gaussian mechanism with mu(j); take the
        # largest mu over the positions the reading protects at this horizon
        mus = [ex.gaussian_release_mu(W, T, j, Delta, noise.scale)
               for j in scope.protected_positions(T, W)]
        acc = max(gaussian_epsilon(mu, delta) if math.isfinite(mu) else math.inf for mu in mus)
        mu_i = ex.gaussian_release_mu(W, T, i, Delta, noise.scale)
        curve = (lambda: gaussian_curve(mu_i, max(mus)))
    else:
        noise = option_noise("I", eps, 0.0, Delta, W)
        exact = ex.laplace_exact_epsilon(W, T, i, Delta, noise.scale)
        upper = exact if exact is not None else ex.laplace_release_upper(W, T, i, Delta,
                                                                         noise.scale)
        k = max_window_nodes_per_leaf(W, T)
        acc = _laplace_accountant(W, T, i, Delta, noise.scale, k)
        exposed = ex.exposed_exactly(W, T, i)
        curve = (lambda: pure_curve(None if exposed else Delta / noise.scale, k))
    rec = None
    if exact is not None and exact > eps * (1 + 1e-9):
        rec = (f"scale the node noise by {exact / eps:.4g} (the exact epsilon over the claimed) "
               f"at W={W}, T={T}, {scope.boundary.value} reading")
    emp = _test(
        mechanism=window_tree_mechanism(W, noise), data0=data0, data1=data1,
        statistic=_tree_statistic(W, T, i, Delta, noise, "exact"),
        statistic_name=("Gaussian log-likelihood ratio of all releases" if gauss else
                        "Laplace log-likelihood ratio of the reconstructed nodes containing the "
                        "leaf") + " (first coordinate)")
    return PointPlan(parameters=dict(params), claimed_epsilon=eps, claimed_delta=delta,
                        exact=exact, exact_upper=upper, accountant=acc, empirical=emp,
                        recommendation=_said(rec), curve=curve,
                        evidence=PointEvidence(details={
                            "position": i, "noise_scale": noise.scale,
                            "nodes_with_leaf": len(ex.noisy_nodes_with_leaf(W, T, i)),
                            "leaf_exposed_exactly": ex.exposed_exactly(W, T, i)}))


def _domain(params: Mapping[str, Any]) -> Domain:
    dom, d = params.get("domain", "ball"), params["d"]
    if dom == "ball":
        return Ball(d, 1.0)
    if dom == "box":
        return Box(d, -1.0, 1.0)
    return Simplex(d)


def _learner_statistic(learner: Any, pair: Any, gauss: bool) -> Callable[[np.ndarray], np.ndarray]:
    """Invert the released points to noisy sums (either update), subtract world 0's clean sums
    (computed from the released points and world 0's losses), score the residual by
    :func:`node_llr_statistic`."""
    T = len(pair.losses0)
    mu = learner.strong_convexity
    W = learner.window
    B, nodes = ex.release_structure(W, T)
    leaf = [j for j, n in enumerate(nodes) if n.contains(pair.position)]
    inner = node_llr_statistic(B, leaf, ex.leaf_exposure(pair.position, T), pair.gradient_gap,
                               learner.noise)
    losses = pair.losses0
    L = learner.lipschitz

    def score(out: np.ndarray) -> np.ndarray:
        n = out.shape[0]
        S = np.cumsum(out[:, :T], axis=1)
        t = np.arange(1, T + 1)[None, :, None]
        if learner.update == "exact":  # x~_{t+1} = S_t / t - g~_t / (mu t) where interior
            g_noisy = mu * t * (S / t - out[:, 1:T + 1])
        else:  # printed eq. (10): x~_{t+1} = S_t - g~_t / mu where interior
            g_noisy = mu * (S - out[:, 1:T + 1])
        grads = np.stack([_clip(losses[k].grad(out[:, k]), L) for k in range(T)], axis=1)
        resid = g_noisy - np.cumsum(grads, axis=1)
        return inner(resid[:, :, 0].reshape(n, T))
    return _rounded(score)


def _clip(g: np.ndarray, L: float) -> np.ndarray:
    nrm = np.linalg.norm(g, axis=-1, keepdims=True)
    return g * np.minimum(1.0, L / np.maximum(nrm, 1e-300))


def _plan_learner(params: Mapping[str, Any], gauss: bool, cocol: bool
                  ) -> PointPlan | Skip:
    eps, W, T = params["epsilon"], params["W"], params["T"]
    delta = params.get("delta", 0.0)
    scope = _scope(params)
    domain = _domain(params)
    L = 1.0
    mu = params["muD_over_L"] * L / domain.diameter
    if mu * centre_radius(domain) > L:
        return Skip(params, "class empty on this domain (mu R > L)")
    # the audited horizon of Def. 6 is the tree's T; the replaced round: oldest protected >= 2;
    # inclusive reading: the horizon one step past the mechanism's window for that round
    i = max(2, scope.protected_positions(T, W)[0])
    horizon = T if params["boundary"] == "strict" else max(T, i + W)
    pair = learner_pair(scope, W, horizon, domain, L, mu, position=i)
    kw = dict(option="II" if gauss else "I", epsilon=eps, delta=delta,
              log_power=params.get("log_power", 2))

    def make() -> Any:
        if cocol:
            return WDPCOCOL(domain, mu, L, horizon, W, **kw)
        return WDPCOCOP(domain, mu, L, horizon, W, update=params.get("update", "exact"), **kw)

    learner = make()
    noise, Dp = learner.noise, learner.sensitivity
    gap = pair.gradient_gap
    k = max_window_nodes_per_leaf(W, horizon)
    exposed = ex.exposed_exactly(W, horizon, i)
    # mu D = 2L, the closed end of the stated range, on a domain with R = D/2 (the box): a = L -
    # mu R = 0, so the class is one gradient field (f' = mu (x - c)) and every neighbouring pair
    # has the same law: exact epsilon 0, the empirical test would compare a law with itself
    same_law = gap == 0.0
    if gauss:
        sums = 0.0 if same_law else ex.gaussian_release_epsilon(W, horizon, i, gap, noise.scale,
                                                                delta)
        exact, upper = (0.0 if same_law else None), sums
        # worst case over the class (shift <= 2L by clipping; claims.ACCOUNTANT_BASIS, proved
        # for every d by smt_lemmas.clipped_gap_lemma) and over the protected positions of the
        # linear-Gaussian noisy sums; the release is a post-processing of them
        mu_acc = max(ex.gaussian_release_mu(W, horizon, j, 2 * L, noise.scale)
                     for j in scope.protected_positions(horizon, W))
        acc = math.inf if math.isinf(mu_acc) else gaussian_epsilon(mu_acc, delta)
        mu_sums = 0.0 if same_law else ex.gaussian_release_mu(W, horizon, i, gap, noise.scale)
        curve = (lambda: {**gaussian_curve(None, mu_acc),
                          "epsilon_noisy_sums": gaussian_curve(mu_sums, None)["epsilon_exact"]})
    else:
        sums = 0.0 if same_law else ex.laplace_exact_epsilon(W, horizon, i, gap, noise.scale)
        up = sums if sums is not None else ex.laplace_release_upper(W, horizon, i, gap,
                                                                    noise.scale)
        # both updates centre the first stream's clean trajectory at the centre (module
        # docstring of pairs), so the release reveals the sums there
        exact = None if cocol and not same_law else sums
        upper = up
        acc = _laplace_accountant(W, horizon, i, 2 * L, noise.scale, k)
        curve = (lambda: pure_curve(None if exposed else 2 * L / noise.scale, k))
    rec = None
    if (acc is not None and acc > eps * (1 + 1e-9)) or (exact is not None and exact > eps):
        if gauss:
            z = calibrate_gaussian_noise_multiplier(eps, delta, count=k)
            rec = (f"sigma = {z * 2 * L:.4g} (noise multiplier {z:.4g} for {k} nodes at the "
                   f"class's sensitivity 2L = {2 * L:g}); printed sigma = {noise.scale:.4g}")
        elif exposed and acc is not None:
            rec = (f"l2-Laplace scale {noise.scale * acc / eps:.4g} (inclusive reading: the "
                   f"replaced round also sits in an exact sum at horizon {horizon}; bound of "
                   f"the shifted node noises at the class's sensitivity 2L = {2 * L:g})")
        else:
            rec = (f"l2-Laplace scale 2L (ceil(log2 W) + 1)/eps = {2 * L * k / eps:.4g} (the "
                   f"sensitivity of a replaced gradient is up to 2L, not L + mu D = {Dp:.4g})")
    losses0, losses1 = list(pair.losses0), list(pair.losses1)

    def mechanism(losses: list, n: int, rng: np.random.Generator) -> np.ndarray:
        return make().release(losses, n, rng)

    stat = None if cocol else _learner_statistic(learner, pair, gauss)
    emp = None if same_law else _test(
        mechanism=mechanism, data0=losses0, data1=losses1, statistic=stat,
        statistic_name=("engine's learned linear statistic on the trajectory" if cocol else
                        "released points inverted to noisy sums, node log-likelihood ratio of "
                        "the replaced round"))
    return PointPlan(parameters=dict(params), claimed_epsilon=eps, claimed_delta=delta,
                        exact=exact, exact_upper=upper, accountant=acc, empirical=emp,
                        recommendation=_said(rec), curve=curve,
                        evidence=PointEvidence(details={
                            "position": i, "horizon": horizon, "gradient_gap": gap,
                            "printed_sensitivity": Dp, "noise_scale": noise.scale, "mu": mu,
                            "D": domain.diameter, "leaf_exposed_exactly": exposed}))


def _plan_standard_tree(params: Mapping[str, Any]) -> PointPlan:
    eps, T, d = params["epsilon"], params["T"], params["d"]
    Delta = 1.0
    noise = NodeNoise.l2_laplace(Delta * math.log2(T) / eps)
    z0 = np.zeros((T, d))
    z1 = np.zeros((T, d))
    z0[0, 0], z1[0, 0] = Delta / 2, -Delta / 2
    exact = ex.laplace_exact_epsilon(None, T, 1, Delta, noise.scale)
    k = T.bit_length()
    acc = ex.accountant_epsilon("l2-laplace", noise.scale, Delta, k, 0.0)
    rec = (f"per-node budget eps/(floor(log2 T) + 1) = eps/{k}: scale {Delta * k / eps:.4g}"
           if exact > eps else None)
    emp = _test(mechanism=window_tree_mechanism(None, noise), data0=z0, data1=z1,
                        statistic=_tree_statistic(None, T, 1, Delta, noise, "exact"),
                        statistic_name="Laplace log-likelihood ratio of the nodes containing "
                                       "leaf 1 (first coordinate)")
    return PointPlan(parameters=dict(params), claimed_epsilon=eps, claimed_delta=0.0,
                        exact=exact, exact_upper=exact, accountant=acc, empirical=emp,
                        recommendation=_said(rec), curve=lambda: pure_curve(Delta / noise.scale, k),
                        evidence=PointEvidence(details={"nodes_with_leaf_1": k,
                                                        "printed_count": math.log2(T)}))


def _single_release(noise_fn: Callable[[int, np.random.Generator], np.ndarray]
                    ) -> Callable[[np.ndarray, int, np.random.Generator], np.ndarray]:
    def mechanism(x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        return x[None, :] + noise_fn(n, rng)
    return mechanism


def _plan_prop(claim_id: str, params: Mapping[str, Any]) -> PointPlan:
    if claim_id == "pfcoco/prop-a1":
        eps, d = params["epsilon"], params["d"]
        zeta = 1.0 / eps
        x0, x1 = np.zeros(d), np.zeros(d)
        x0[0], x1[0] = 0.5, -0.5
        mech = _single_release(lambda n, rng: sample_l2_laplace(zeta, n, d, rng))
        stat = _rounded(lambda o: (np.linalg.norm(o - x1, axis=1)
                                   - np.linalg.norm(o - x0, axis=1)))
        acc = epsilon_of_event(EpsilonDeltaDpEvent(1.0 / zeta, 0.0), 0.0)
        return PointPlan(parameters=dict(params), claimed_epsilon=eps, claimed_delta=0.0,
                            exact=1.0 / zeta, exact_upper=1.0 / zeta, accountant=acc,
                            empirical=_test(mechanism=mech, data0=x0, data1=x1,
                                                    statistic=stat, statistic_name="l2-Laplace "
                                                    "log-likelihood ratio"))
    if claim_id == "pfcoco/prop-a3":
        eps, dl = params["epsilon"], params["delta"]
        c = math.sqrt(2 * math.log(1.25 / dl))
        sigma = c / eps
        exact = gaussian_epsilon(1.0 / sigma, dl)
        acc = epsilon_of_event(dp_accounting.GaussianDpEvent(sigma), dl)
        mech = _single_release(lambda n, rng: rng.normal(0.0, sigma, size=(n, 1)))
        return PointPlan(parameters=dict(params), claimed_epsilon=eps, claimed_delta=dl,
                            exact=exact, exact_upper=exact, accountant=acc,
                            empirical=_test(mechanism=mech, data0=np.array([0.5]),
                                                    data1=np.array([-0.5]),
                                                    statistic=lambda o: o[:, 0],
                                                    statistic_name="the release itself"),
                            evidence=PointEvidence(details={"c": c, "sigma": sigma}))
    eps, d1, d2, k = params["epsilon"], params["delta_1"], params["delta_2"], params["k"]
    claimed = math.sqrt(2 * k * math.log(1 / d2)) * eps + k * eps * math.expm1(eps)
    cdelta = k * d1 + d2
    event = dp_accounting.ComposedDpEvent([EpsilonDeltaDpEvent(eps, d1)] * k)
    exact = epsilon_of_event(event, cdelta)
    emp = None
    if d1 == 0.0:  # k-fold binary randomized response: the worst eps-DP mechanism
        p = 1.0 / (1.0 + math.exp(-eps))

        def mech(bit: int, n: int, rng: np.random.Generator) -> np.ndarray:
            return rng.binomial(k, p if bit else 1.0 - p, size=n)
        emp = _test(mechanism=mech, data0=1, data1=0, statistic=lambda o: o.astype(float),
                            statistic_name="number of ones among the k responses")
    return PointPlan(parameters=dict(params), claimed_epsilon=claimed, claimed_delta=cdelta,
                        exact=exact, exact_upper=exact, accountant=exact, empirical=emp,
                        evidence=PointEvidence(details={"eps_prime": claimed}))


def plan(claim_id: str, params: Mapping[str, Any]) -> PointPlan | Skip:
    """The driver's plan of ``claim_id`` at ``params`` (a point of :func:`grid`).

    Window tree (Lemmas 1, 3): the oldest protected leaf's exact epsilon where known, the worst
    case over the protected positions; learners (Theorems 1, 2, 5): the noisy sums' epsilon (the
    exact value for WDP-COCOP Option I), the accountant at 2L; standard tree; Props. A1, A3, A6.

    Parameters
    ----------
    claim_id, params
        A pfcoco claim id (:data:`CLAIMS`); the parameter point.

    Returns
    -------
    PointPlan or Skip
        The plan; a learner point whose class is empty (``mu R > L``) is skipped.

    Raises
    ------
    KeyError
        If ``claim_id`` is not a pfcoco claim.
    """
    if claim_id == "pfcoco/window-tree-gamma":
        return _plan_window_tree(params, gauss=False)
    if claim_id == "pfcoco/window-tree-gaussian":
        return _plan_window_tree(params, gauss=True)
    if claim_id in ("pfcoco/wdp-cocop-gamma", "pfcoco/wdp-cocop-gaussian"):
        return _plan_learner(params, claim_id.endswith("gaussian"), cocol=False)
    if claim_id in ("pfcoco/wdp-cocol-gamma", "pfcoco/wdp-cocol-gaussian"):
        return _plan_learner(params, claim_id.endswith("gaussian"), cocol=True)
    if claim_id == "pfcoco/standard-tree":
        return _plan_standard_tree(params)
    if claim_id in ("pfcoco/prop-a1", "pfcoco/prop-a3", "pfcoco/prop-a6"):
        return _plan_prop(claim_id, params)
    raise KeyError(f"unknown pfcoco claim id {claim_id!r}; known: {sorted(CLAIMS)}")
