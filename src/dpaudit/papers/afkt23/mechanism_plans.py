"""The grid and point plans of AFKT23's claims whose exact value is a closed form of the noise.

Asi, Feldman, Koren & Talwar, ICML 2023 (``afkt23.txt``): DP-FTRL (Theorem 4, Algorithm 3: the
Gaussian tree of the gradients) and the two mechanisms the paper relies on, AboveThreshold
(Lemma 2.3) and BinaryTree (Lemma 2.4). Unlike the experts learners of
:mod:`~dpaudit.papers.afkt23.plans`, no law of a released index sequence is enumerated: the exact
(or certified) epsilon is the Gaussian or Laplace epsilon of the tree nodes containing the replaced
leaf, or the exact law of the sparse vector's halting index. Each point's evidence is a
:class:`~dpaudit.evidence.PointEvidence` with the paper's own entries in ``details``. How each
number is obtained: ``README.md`` beside this file (Evidence).
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np
from scipy import stats

from dpaudit.claims.context import AuditContext, coarse
from dpaudit.claims.declaration import EmpiricalPlan, PointPlan
from dpaudit.claims.evidence import PointEvidence
from dpaudit.formal.accounting import gaussian_epsilon, laplace_epsilon
from dpaudit.learners.dp_ftrl import DpFtrl, dp_ftrl_parameters
from dpaudit.learners.losses import LinearLoss
from dpaudit.mechanisms.sparse_vector import (SparseVectorMechanism, first_above_probabilities,
                                              sparse_vector_scales)
from dpaudit.mechanisms.tree_aggregation import (NodeNoise, TreeAggregationMechanism,
                                                 max_nodes_per_leaf, nodes_containing)
from dpaudit.papers.afkt23.exact import discrete_epsilon, dp_ftrl_accountant
from dpaudit.papers.afkt23.plans import CURVE_DELTAS
from dpaudit.papers.afkt23.severity import DP_FTRL_CALIBRATION_CAVEAT

__all__ = ["ftrl_grid", "ftrl_plan", "svt_grid", "svt_plan", "tree_grid", "tree_plan"]


# --- DP-FTRL --------------------------------------------------------------------------------------

def ftrl_grid(ctx: AuditContext) -> list[dict[str, Any]]:
    """The grid of AFKT23 Theorem 4's claim on DP-FTRL (ICML 2023, Sec. 4, Algorithm 3).

    ``T = min(64, max_T)``, ``d = 2``, ``delta = 1e-5``: eps = 1 at ``D`` 1 and 1e4, eps 0.1 and 4
    at ``D = 1e4``, both readings of the per-example shift (``reading`` "L", "2L") at eps = 1;
    the standard budget adds ``T = max_T`` at ``delta`` 1e-8, 1e-3 and ``d`` 1, 8, and the ends
    of the stated ranges (``delta`` 0.5 and 0.99 at ``T = 64``; ``T = 2``), both readings.

    Parameters
    ----------
    ctx
        The audit context (its budget chooses the grid and caps ``T``).

    Returns
    -------
    list of dict
        The points, dicts of ``epsilon, delta, T, d, D, reading``.
    """
    T = min(64, ctx.budget.max_T)
    pts = [dict(epsilon=e, delta=1e-5, T=T, d=2, D=D, reading=r)
           for e in (1.0,) for D in (1.0, 1e4) for r in ("L", "2L")]
    pts += [dict(epsilon=e, delta=1e-5, T=T, d=2, D=1e4, reading="L") for e in (0.1, 4.0)]
    if not coarse(ctx.budget):
        pts += [dict(epsilon=1.0, delta=dl, T=ctx.budget.max_T, d=d, D=1e4, reading=r)
                for dl in (1e-8, 1e-3) for d in (1, 8) for r in ("L", "2L")]
        # the ends of delta's and T's stated ranges (claims.DP_FTRL.ranges)
        pts += [dict(epsilon=1.0, delta=dl, T=T_, d=2, D=1e4, reading=r)
                for dl, T_ in ((0.5, 64), (0.99, 64), (1e-5, 2)) for r in ("L", "2L")]
    return pts


def _ftrl_statistic(T: int) -> Callable[[np.ndarray], np.ndarray]:
    """Row-wise score: the noisy prefix sums at t = 2^j are exactly the noisy nodes [1, 2^j] that
    contain leaf 1; x_{t+1} = -prefix_t / lambda when nothing is projected, so minus the sum of
    x_{2^j + 1} along the shift direction is their likelihood-ratio statistic."""
    rows = [2 ** j for j in range(T.bit_length()) if 2 ** j <= T - 1]
    return lambda out: -np.asarray(out)[:, rows, 0].sum(axis=1)


def ftrl_plan(params: dict[str, Any], ctx: AuditContext) -> PointPlan:
    """One point of AFKT23 Theorem 4's claim on DP-FTRL (ICML 2023, Sec. 4, Algorithm 3).

    AFKT23 prints no sigma, so the tree's zCDP calibration for the shift ``params["reading"]``
    (``L`` or ``2L``); :func:`~dpaudit.papers.afkt23.exact.dp_ftrl_accountant`. On the linear pair
    (``g = L e1`` every round vs ``-L e1`` at round 1) the Gaussian epsilon of the tree nodes
    containing leaf 1 is a certified lower bound at ``delta + P(projection)`` when the union bound
    on a projection is below delta (else ``None``), and an upper value at delta; the engine's test
    on the same pair. Under the "2L" reading the severity carries
    :data:`~dpaudit.papers.afkt23.severity.DP_FTRL_CALIBRATION_CAVEAT`.

    Parameters
    ----------
    params
        The grid point (``epsilon, delta, T, d, D, reading``; see :func:`ftrl_grid`).
    ctx
        The audit context (unused).

    Returns
    -------
    PointPlan
        Certified value, upper value, accountant, empirical test, privacy curve, recommendation
        and evidence (``details``: calibration, pair, ``mu_pair``, projection bound).

    Raises
    ------
    KeyError
        If ``params`` lacks a key of the grid.
    """
    p = dp_ftrl_parameters(params["epsilon"], params["delta"], params["T"], params["d"],
                           D=params["D"], sensitivity_reading=params["reading"])
    acc = dp_ftrl_accountant(p)
    used = len(nodes_containing(1, p.T - 1)) if p.T > 1 else 0
    mu_pair = 2.0 * p.L * math.sqrt(used) / p.sigma
    # probability that some released point is projected on the pair (union bound, Gaussian tails)
    sd = math.sqrt(max_nodes_per_leaf(p.T)) * p.sigma
    slack = p.lam * p.D - p.T * p.L
    p_out = 1.0 if slack <= 0 else min(1.0, p.T * p.d * 2.0 * float(stats.norm.sf(slack / (sd * math.sqrt(p.d)))))
    exact = None
    if p_out < p.delta:
        exact = gaussian_epsilon(mu_pair, min(0.999, p.delta + p_out))
    upper = gaussian_epsilon(mu_pair, p.delta)
    g = np.zeros(p.d)
    g[0] = p.L
    s0 = [LinearLoss(g) for _ in range(p.T)]
    s1 = list(s0)
    s1[0] = LinearLoss(-g)
    ev = {"calibration": p.to_dict(), "pair": "linear g = L e1 every round vs -L e1 at round 1 "
          "(shifted by L D to be non-negative; the shift does not enter the algorithm)",
          "mu_pair": mu_pair, "nodes_containing_leaf_1": used, "projection_probability_bound": p_out,
          "exact_kind": ("certified lower bound: Gaussian epsilon at delta + P(projection)"
                         if exact is not None else "projection possible: only the upper value")}
    # the primary reading: dpaudit's calibration, not the paper's
    severity = ({"calibration_caveat": DP_FTRL_CALIBRATION_CAVEAT}
                if params["reading"] == "2L" else None)
    emp = EmpiricalPlan(mechanism=DpFtrl(p), data0=s0, data1=s1,
                        statistic=_ftrl_statistic(p.T),
                        statistic_name="minus the sum of the releases at t = 2^j + 1 (first "
                                       "coordinate): the noisy tree nodes containing leaf 1, the "
                                       "Gaussian log-likelihood ratio up to scale and constant "
                                       "when nothing is projected", what="linear pair")
    return PointPlan(parameters=params, claimed_epsilon=p.epsilon, claimed_delta=p.delta,
                     exact=exact, exact_upper=upper, accountant=acc, empirical=emp,
                     evidence=PointEvidence(details=ev, severity=severity),
                     curve=lambda: {"deltas": CURVE_DELTAS,
                                    "epsilon_accountant": [gaussian_epsilon(2 * p.L * math.sqrt(p.nodes_per_leaf) / p.sigma, dl) for dl in CURVE_DELTAS],
                                    "epsilon_exact": [gaussian_epsilon(mu_pair, dl) for dl in CURVE_DELTAS]},
                     recommendation=lambda: (f"Calibrate sigma for the replace-one shift 2L "
                                             f"(sensitivity_reading='2L'): sigma = "
                                             f"{dp_ftrl_parameters(p.epsilon, p.delta, p.T, p.d, D=p.D, sensitivity_reading='2L').sigma:.6g} "
                                             f"instead of {p.sigma:.6g}."))


# --- mechanism-level claims -------------------------------------------------------------------------

def svt_grid(ctx: AuditContext) -> list[dict[str, Any]]:
    """The grid of the AboveThreshold claim AFKT23 relies on (ICML 2023, Sec. 2.1, Lemma 2.3).

    eps 0.1, 1, 10 with 1 and 8 queries; the standard budget adds 32 queries at eps = 1 and eps
    = 0.01 with 8 queries.

    Parameters
    ----------
    ctx
        The audit context (the standard budget adds two points).

    Returns
    -------
    list of dict
        The points, dicts of ``epsilon, queries``.
    """
    pts = [dict(epsilon=e, queries=k) for e in (0.1, 1.0, 10.0) for k in (1, 8)]
    if not coarse(ctx.budget):
        pts += [dict(epsilon=1.0, queries=32), dict(epsilon=0.01, queries=8)]
    return pts


def svt_plan(params: dict[str, Any], ctx: AuditContext) -> PointPlan:
    """One point of the AboveThreshold claim (AFKT23 Lemma 2.3: the sparse vector is eps-DP).

    Nine candidate pairs of 1-sensitive query vectors against threshold 0 (base value ``-4/eps``,
    0 or ``4/eps``; all queries +1, the last +1, or the earlier -1 and the last +1); the exact
    epsilon of the halting index (:func:`~dpaudit.mechanisms.sparse_vector.
    first_above_probabilities`) is the largest over them, the accountant is eps, and every
    candidate goes to the engine, which picks one on a pilot.

    Parameters
    ----------
    params
        The grid point (``epsilon, queries``; see :func:`svt_grid`).
    ctx
        The audit context (unused).

    Returns
    -------
    PointPlan
        Exact epsilon, accountant, empirical test over the candidate pairs and evidence
        (``details``: the exact-worst pair, the noise scales, the number of candidates).

    Raises
    ------
    KeyError
        If ``params`` lacks a key of the grid.
    """
    eps, k = params["epsilon"], params["queries"]
    b1, b2 = sparse_vector_scales(eps)
    best = (-1.0, None, None, "")
    candidates: list[tuple[np.ndarray, np.ndarray]] = []
    for c in (-4.0 / eps, 0.0, 4.0 / eps):
        q0 = np.full(k, c)
        mixed = np.r_[q0[:-1] - 1.0, c + 1.0]   # earlier queries pushed down, the last one up
        for q1, what in ((q0 + 1.0, "all queries +1"), (np.r_[q0[:-1], c + 1.0], "last query +1"),
                         (mixed, "earlier queries -1, last query +1")):
            candidates.append((q0, q1))
            law0 = first_above_probabilities(q0, 0.0, b1, b2)
            law1 = first_above_probabilities(q1, 0.0, b1, b2)
            e = discrete_epsilon(law0, law1, 0.0)
            if e > best[0]:
                best = (e, q0, q1, f"{what}, base value {c:.3g} vs threshold 0")
    e, q0, q1, what = best
    # Every candidate goes to the engine (pilot on fresh runs picks one): the exact-worst pair of
    # the printed noise is not the most revealing one for a mis-calibrated implementation.
    pairs = [(q0, q1)] + [(a, b) for a, b in candidates if not (a is q0 and b is q1)]
    mech = SparseVectorMechanism(eps, 0.0)
    return PointPlan(parameters=params, claimed_epsilon=eps, claimed_delta=0.0, exact=e,
                     accountant=eps,
                     evidence=PointEvidence(details={"pair": what, "scales": [b1, b2],
                                                     "candidate_pairs": len(pairs)}),
                     empirical=EmpiricalPlan(mechanism=mech, pairs=pairs,
                                             statistic_name="engine's estimated log-likelihood "
                                                            "ratio of the halting index",
                                             what=f"{len(pairs)} candidate pairs (exact-worst: "
                                                  f"{what}), one chosen on a pilot"))


def tree_grid(ctx: AuditContext) -> list[dict[str, Any]]:
    """The grid of the binary-tree claim AFKT23 relies on (ICML 2023, Sec. 2.1, Lemma 2.4).

    eps 0.1 and 1 at ``T`` 1 and 16; the standard budget adds eps = 0.5 at ``T`` 15, 64, 256.

    Parameters
    ----------
    ctx
        The audit context (the standard budget adds the three eps = 0.5 points).

    Returns
    -------
    list of dict
        The points, dicts of ``epsilon, T``.
    """
    pts = [dict(epsilon=e, T=T) for e in (0.1, 1.0) for T in (1, 16)]
    if not coarse(ctx.budget):
        pts += [dict(epsilon=0.5, T=T) for T in (15, 64, 256)]
    return pts


def tree_plan(params: dict[str, Any], ctx: AuditContext) -> PointPlan:
    """One point of the binary-tree claim (AFKT23 Lemma 2.4): Laplace tree aggregation of ``T`` leaves.

    Node noise of scale ``b = (floor(log2 T) + 1)/eps``. Moving leaf 1 by 1 moves every node that
    contains it, so the exact epsilon is (number of those nodes)/``b``; the accountant composes
    ``floor(log2 T) + 1`` Laplace releases of scale ``b``. The engine tests the pair with the
    clipped prefix sums at ``t = 2^j`` (the nodes ``[1, 2^j]``).

    Parameters
    ----------
    params
        The grid point (``epsilon, T``; see :func:`tree_grid`).
    ctx
        The audit context (unused).

    Returns
    -------
    PointPlan
        Exact epsilon, accountant, empirical test and evidence (``details``: node scale, nodes
        containing leaf 1, the reading).

    Raises
    ------
    KeyError
        If ``params`` lacks a key of the grid.
    """
    eps, T = params["epsilon"], params["T"]
    h = max_nodes_per_leaf(T)
    b = h / eps
    nodes = len(nodes_containing(1, T))
    mech = TreeAggregationMechanism(T, 1, NodeNoise.laplace(b), 1.0)
    a0 = np.zeros((T, 1))
    a1 = a0.copy()
    a1[0, 0] = 1.0
    rows = [2 ** j - 1 for j in range(T.bit_length()) if 2 ** j <= T]
    return PointPlan(parameters=params, claimed_epsilon=eps, claimed_delta=0.0,
                     exact=nodes / b, accountant=laplace_epsilon([b] * h, 0.0),
                     evidence=PointEvidence(details={
                         "node_scale": b, "nodes_containing_leaf_1": nodes,
                         "reading": "Laplace node noise of scale (floor(log2 T) + 1)/eps"}),
                     empirical=EmpiricalPlan(
                         mechanism=mech, data0=a1, data1=a0,
                         statistic=lambda out: np.clip(np.asarray(out)[:, rows, 0], 0.0, 1.0).sum(axis=1),
                         statistic_name="sum of the prefix sums at t = 2^j clipped to [0, 1] (the "
                                        "Laplace log-likelihood ratio of the nodes [1, 2^j] up to "
                                        "scale and constant)",
                         what="leaf 1 moved by 1"))

