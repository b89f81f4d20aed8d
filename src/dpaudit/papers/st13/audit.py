"""Auditors of the five privacy claims of Smith & Thakurta, NeurIPS 2013 (``st13.txt``).

Importing this module registers ``st13/tree-aggregation``, ``st13/pftal``, ``st13/pftal-convex``,
``st13/bandit-ftal`` and ``st13/bandit-ftal-convex`` with :mod:`dpaudit.audits.registry`. Each
audit function returns a :class:`~dpaudit.audits.claim_audit.ClaimAudit` with three kinds of
evidence (``../shared/AUDIT-METHOD.md`` section 2):

1. **Exact accounting.** Every claim is pure epsilon-DP. Replacing one leaf of Algorithm 2 moves
   each released node that contains it by a vector ``Delta``; node noise is l2-Laplace of scale
   ``s``, whose privacy loss has essential supremum exactly ``||Delta||_2 / s`` in every dimension,
   and the released nodes containing a leaf are independent, so the noisy sums are exactly
   ``sum_nodes ||Delta|| / s``-DP on that pair (App. B.1's adaptive-composition argument gives the
   same per-node shift when later inputs depend on earlier outputs). For the tree itself this is
   the exact epsilon of the release. For PFTAL (Alg. 1 and App. C) the pairs below are built so that
   the projection cannot hide the worst case: the first loss re-centres every node containing the
   replaced leaf in the middle of the region that the released points reveal, so the released points
   have the same essential supremum of the privacy loss as the noisy sums (``epsilon_exact``, the
   exact pure epsilon, i.e. at ``delta = 0``; for ``delta > 0`` the noisy sums' curve is only an
   upper bound for the release, whose projection hides the noise magnitudes). The bandit learners
   hide the sums behind the secret directions ``u_t``, so their only formal number is the
   accountant's (an upper bound); their verdicts rest on the empirical bounds.
2. **Lemmas** (Hypothesis): the per-node sensitivity step of App. B.1 (checked with
   :func:`dpaudit.audits.sensitivity.check_sensitivity` on the tree inputs at fixed evaluation
   points, i.e. the situation the adaptive-composition argument conditions on), and the structural
   properties the proof needs: clipping enforces the bound on every tree input; every node is noised
   once, at completion; a leaf lies in at most ``ceil(log2 T) + 1`` noised nodes; released sums are
   binary decompositions of completed nodes; the learner's release is a function of the tree's
   outputs (and, for the bandit learners, of the secret directions) and touches each loss only at
   the released point of its round. Plus the law of the node noise itself
   (``||n|| ~ Gamma(p, s)``, uniform direction; KS tests).
3. **Empirical lower bounds** (:func:`dpaudit.audit`) on the worst-case pairs, with a
   likelihood-ratio-shaped statistic computed from the release: the released points are inverted
   to noisy partial sums (``v_t = H t (mean(w_1..w_t) - w_{t+1})`` wherever the projection is
   inactive), differenced into the nodes that contain the replaced leaf, and scored by the
   l2-Laplace log likelihood ratio of those nodes (in ``d = 1`` and where the projection is
   inactive, the exact likelihood ratio). The bandit releases hide the sums behind the secret
   ``u_t``; their score counts the released nodes whose played point lies on the side the replaced
   input pushes to (:func:`bandit_node_statistic`); it needs ``beta < (1 - xi) r``
   (:func:`bandit_side_is_revealed`), and bandit grid points where this fails are skipped (and
   listed in the findings) rather than audited without power. Each audited grid point's bound is at
   level ``alpha / (number of audited grid points)`` (Bonferroni over the grid, so the verdict's
   family-wise error is at most ``alpha``); the event's threshold is chosen on a training split of
   :data:`TRAIN_FRACTION` of the samples. For ``d > 1`` the worst-case events of an l2-Laplace
   loss are thin cones and the bounds are weak (stated in every finding that uses ``d > 1``).

Worst-case pairs (constructed from the algorithms)
--------------------------------------------------
* Tree: ``z_1 = mu e_1`` vs ``z'_1 = -mu e_1``, other leaves 0 (leaf 1 lies in the most released
  nodes, ``floor(log2 T) + 1``).
* PFTAL (Alg. 1), replaced round ``t* = 2`` (every released node containing leaf 2 is a prefix
  ``[1, 2^j]``): ``f_1 = f_-``, ``f_2 = f_+`` vs ``f'_2 = f_-``, ``f_t = f_0`` for ``t >= 3``, with
  ``f_+-(w) = +-a <e_1, w> + H/2 ||w||^2``, ``a = L - H R`` (the largest gradient gap an
  H-strongly convex L-Lipschitz pair can have at the centre of the ball of radius ``R``) and
  ``f_0(w) = H/2 ||w||^2``. Then every ``v_{2^j} - H 2^j mean(w_1..w_{2^j})`` is exactly node noise
  under ``F`` (``-2a e_1`` shifted under ``F'``), so the release reveals every node's worst-case
  event.
* PFTAL-convex (App. C): the same with linear ``f_+- = +-L <e_1, w>``, ``f_0 = 0`` (regulariser
  added by the learner).
* Bandit (Alg. 3), ``t* = 1`` (``w_dagger_1 = 0`` is public, so ``w^_1`` reveals ``u_1``):
  ``f_1 = B - H R^2/2 + H/2 ||w||^2`` vs ``f'_1 = -B + H/2 ||w||^2``, ``f_t = H/2 (||w||^2 - R^2)``
  for ``t >= 2`` (near zero at the points played). Bandit-convex: constants ``+-B`` and
  ``-H R^2 / 2``. ``C`` is the ball of radius ``R`` and the learners use the inner radius
  ``r = R`` (:func:`dpaudit.learners.bandit_ftal.inner_radius`: the theorems' ``0 < r < R`` is met
  with any outer radius above ``R``). Points with ``d > 1`` use ``R = 2``, so that Theorem 6 / 17's
  ``beta = p / T^(...)`` satisfies ``beta < (1 - xi) r`` at ``T = 33``.

Bandit grids
------------
The schedules fix ``beta`` and ``xi`` from ``p`` and ``T``; grid points where ``beta >= r`` (the
schedule is undefined) or ``beta >= (1 - xi) r`` (the statistic has no power) are skipped and
listed in the findings. For ``st13/bandit-ftal-convex`` the ``"regularised"`` reading of the tree
bound (more noise: a replaced input moves each node by ``2B / (B + H R^2 / 2)`` times the bound
instead of twice it) is audited at the horizons ``2^k + 1`` up to the budget's ``max_T`` (the most
released nodes per printed level) with :func:`regularised_samples` samples per input. Whenever a
reading is not refuted while its accountant exceeds the claim, the findings say that the test
lacked power: such a reading is undecided, not shown private.

Floating-point samplers are not exactly differentially private (Mironov, CCS 2012); the empirical
bounds are about the mechanisms as implemented and sampled.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import hypothesis
import numpy as np
from hypothesis import HealthCheck, Phase, Verbosity
from hypothesis import strategies as st
from scipy import stats

from dpaudit._validation import check_finite_array, check_int, check_positive
from dpaudit.audits.accounting import laplace_epsilon, tree_leaf_epsilon
from dpaudit.audits.claim_audit import EXACT_TOLERANCE, ClaimAudit, GridPoint, LemmaCheck
from dpaudit.audits.empirical import AuditResult, audit
from dpaudit.audits.registry import AuditContext, register
from dpaudit.audits.sensitivity import check_sensitivity
from dpaudit.claims import PrivacyClaim
from dpaudit.learners.bandit_ftal import (
    PrivateBanditFTAL,
    PrivateBanditFTALConvex,
    project_shrunk,
    theorem6_schedule,
    theorem17_schedule,
)
from dpaudit.learners.domains import Ball, Domain
from dpaudit.learners.ftal import ftal_argmin
from dpaudit.learners.losses import AffineLoss, LinearLoss, Loss, LossClass, LossKind, SquaredLoss
from dpaudit.learners.pftal import PFTAL, L2Regularised, PFTALConvex, theorem11_regularisation
from dpaudit.papers.st13.claims import (
    BANDIT_FTAL_CLAIM,
    BANDIT_FTAL_CONVEX_CLAIM,
    NODE_RATIO_LEMMA,
    PFTAL_CLAIM,
    PFTAL_CONVEX_CLAIM,
    TREE_AGGREGATION,
)
from dpaudit.mechanisms.st13_tree_aggregation import (
    ST13TreeAggregator,
    st13_node_scale,
    st13_tree_levels,
)
from dpaudit.mechanisms.projections import clip_l2
from dpaudit.mechanisms.tree_aggregation import (
    NodeNoise,
    TreeNode,
    max_nodes_per_leaf,
    nodes_containing,
)

__all__ = [
    "WorstPair",
    "released_nodes",
    "tree_worst_pair",
    "pftal_worst_pair",
    "pftal_convex_worst_pair",
    "bandit_worst_pair",
    "bandit_convex_worst_pair",
    "tree_mechanism",
    "learner_mechanism",
    "tree_node_statistic",
    "pftal_node_statistic",
    "bandit_node_statistic",
    "bandit_side_is_revealed",
    "regularised_samples",
    "pair_epsilon",
    "pftal_pair_exact_epsilon",
    "accountant_epsilon",
    "domain_probe",
    "noise_law_check",
    "structural_checks",
    "TRAIN_FRACTION",
    "audit_tree_aggregation",
    "audit_pftal",
    "audit_pftal_convex",
    "audit_bandit_ftal",
    "audit_bandit_ftal_convex",
]

#: Level of the KS tests of the noise law (Bonferroni-corrected over the tests of one check).
NOISE_LAW_LEVEL = 1e-3
#: Largest horizon used by the Hypothesis structural checks (they run the real learners).
STRUCTURAL_MAX_T = 24
#: Fraction of the samples used to choose the event. The statistics are fixed functions of the
#: release (nothing is fitted), so the training split only ranks thresholds; the worst-case events
#: are rare (probability 2^-k for k nodes), and a larger selection split picks them reliably.
TRAIN_FRACTION = 0.3
#: Relative tolerance for norm bounds checked in floating point.
_NORM_RTOL = 1e-12

_D_GT_1_NOTE = ("d > 1: the worst-case events of an l2-Laplace privacy loss are thin cones around "
                "the shift direction, so black-box bounds in d > 1 are weak; d = 1 gives the most "
                "powerful audits")
_MIRONOV = ("Floating-point samplers are not exactly differentially private (Mironov, CCS 2012); "
            "the empirical bounds are about the mechanisms as implemented and sampled.")


# ------------------------------------------------------------------------------------------------
# Losses used by the worst-case pairs
# ------------------------------------------------------------------------------------------------


# ------------------------------------------------------------------------------------------------
# Worst-case pairs
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class WorstPair:
    """Two neighbouring loss streams differing at round ``position`` (1-based).

    ``node_shift`` is the l2 distance between the two tree inputs of round ``position`` (at the
    point where the pair is evaluated; the supremum for the PFTAL pairs), ``description`` says how
    the pair was built.
    """

    stream0: tuple[Loss, ...]
    stream1: tuple[Loss, ...]
    position: int
    node_shift: float
    description: str

    @property
    def T(self) -> int:
        return len(self.stream0)


def released_nodes(position: int, T: int) -> list[TreeNode]:
    """The released nodes of Algorithm 2 that contain leaf ``position`` and reach the *release*
    of an FTAL-type learner of horizon ``T``: the learner uses ``v_1, ..., v_{T-1}`` only (``v_T``
    enters no released point), so these are ``nodes_containing(position, T - 1)``."""
    T = check_int(T, "T", minimum=1)
    position = check_int(position, "position", minimum=1, maximum=T)
    if position > T - 1:
        return []
    return nodes_containing(position, T - 1)


def tree_worst_pair(T: int, d: int, bound: float) -> tuple[np.ndarray, np.ndarray]:
    """Leaf streams ``z`` and ``z'`` (shape ``(T, d)``): ``z_1 = mu e_1``, ``z'_1 = -mu e_1``,
    other leaves 0."""
    T = check_int(T, "T", minimum=1)
    d = check_int(d, "d", minimum=1)
    mu = check_positive(bound, "bound")
    z0 = np.zeros((T, d))
    z1 = np.zeros((T, d))
    z0[0, 0] = mu
    z1[0, 0] = -mu
    return z0, z1


def _e1(d: int) -> np.ndarray:
    e = np.zeros(d)
    e[0] = 1.0
    return e


def pftal_worst_pair(d: int, T: int, lipschitz: float, strong_convexity: float,
                     radius: float) -> WorstPair:
    """The PFTAL (Alg. 1) pair of the module docstring, ``t* = 2``, on the ball of ``radius``.

    Requires ``H R < L`` (otherwise the class of H-strongly convex L-Lipschitz losses on the ball
    has no gradient gap at its centre). ``node_shift = 2 (L - H R)``.
    """
    d = check_int(d, "d", minimum=1)
    T = check_int(T, "T", minimum=3)
    L = check_positive(lipschitz, "lipschitz")
    H = check_positive(strong_convexity, "strong_convexity")
    R = check_positive(radius, "radius")
    a = L - H * R
    if not a > 0:
        raise ValueError(f"the pair needs H R < L, got H R = {H * R:.6g} >= L = {L:.6g}")
    e = _e1(d)
    plus = L2Regularised(LinearLoss(a * e), H)
    minus = L2Regularised(LinearLoss(-a * e), H)
    zero = L2Regularised(LinearLoss(np.zeros(d)), H)
    rest = (zero,) * (T - 2)
    return WorstPair((minus, plus) + rest, (minus, minus) + rest, 2, 2.0 * a,
                     f"t*=2: f_1 = f_-, f_2 = f_+ vs f_-, f_t = H/2|w|^2 (t>=3); "
                     f"f_+-(w) = +-{a:.6g} w_1 + {H:.6g}/2 |w|^2 (a = L - H R)")


def pftal_convex_worst_pair(d: int, T: int, lipschitz: float) -> WorstPair:
    """The App. C pair: linear ``f_+- = +-L <e_1, w>``, ``f_0 = 0``, ``t* = 2``;
    ``node_shift = 2 L`` (the regulariser is common to both streams)."""
    d = check_int(d, "d", minimum=1)
    T = check_int(T, "T", minimum=3)
    L = check_positive(lipschitz, "lipschitz")
    e = _e1(d)
    plus, minus, zero = LinearLoss(L * e), LinearLoss(-L * e), LinearLoss(np.zeros(d))
    rest = (zero,) * (T - 2)
    return WorstPair((minus, plus) + rest, (minus, minus) + rest, 2, 2.0 * L,
                     f"t*=2: f_1 = -L w_1, f_2 = +L w_1 vs -L w_1, f_t = 0 (t>=3), L = {L:.6g}")


def bandit_worst_pair(d: int, T: int, loss_bound: float, strong_convexity: float,
                      radius: float) -> WorstPair:
    """The Alg. 3 pair (``t* = 1``) of the module docstring; ``node_shift`` is in units of
    ``p / beta``: ``2B - H R^2 / 2`` (the value gap, the same at every point)."""
    d = check_int(d, "d", minimum=1)
    T = check_int(T, "T", minimum=2)
    B = check_positive(loss_bound, "loss_bound")
    H = check_positive(strong_convexity, "strong_convexity")
    R = check_positive(radius, "radius")
    if H * R * R / 2 > 2 * B:
        raise ValueError("the pair needs H R^2 / 2 <= 2 B (an H-strongly convex loss bounded by B)")
    zero_g = np.zeros(d)
    hi = L2Regularised(AffineLoss(zero_g, B - H * R * R / 2), H)
    lo = L2Regularised(AffineLoss(zero_g, -B), H)
    rest = (L2Regularised(AffineLoss(zero_g, -H * R * R / 2), H),) * (T - 1)
    return WorstPair((hi,) + rest, (lo,) + rest, 1, 2 * B - H * R * R / 2,
                     f"t*=1: f_1 = B - HR^2/2 + H/2|w|^2 vs -B + H/2|w|^2, f_t = H/2(|w|^2 - R^2) "
                     f"(t>=2); B = {B:.6g}, H = {H:.6g}, R = {R:.6g}")


def bandit_convex_worst_pair(d: int, T: int, loss_bound: float, regularisation: float,
                             radius: float) -> WorstPair:
    """The App. E.3 pair (``t* = 1``): constants ``+B`` vs ``-B``, then ``-H R^2 / 2`` (so that
    ``h_t = f_t + H/2 |w|^2`` is near zero at the points played); ``node_shift = 2B`` in units of
    ``p / beta`` (before clipping)."""
    d = check_int(d, "d", minimum=1)
    T = check_int(T, "T", minimum=2)
    B = check_positive(loss_bound, "loss_bound")
    H = check_positive(regularisation, "regularisation")
    R = check_positive(radius, "radius")
    zero_g = np.zeros(d)
    rest = (AffineLoss(zero_g, -H * R * R / 2),) * (T - 1)
    return WorstPair((AffineLoss(zero_g, B),) + rest, (AffineLoss(zero_g, -B),) + rest, 1, 2 * B,
                     f"t*=1: f_1 = +B vs -B (constants), f_t = -H R^2/2 (t>=2); B = {B:.6g}")


# ------------------------------------------------------------------------------------------------
# Mechanisms (for dpaudit.audit) and statistics
# ------------------------------------------------------------------------------------------------


def tree_mechanism(T: int, d: int, bound: float, epsilon: float
                   ) -> Callable[[np.ndarray, int, np.random.Generator], np.ndarray]:
    """``mechanism(z, n, rng)``: all ``T`` released sums of Algorithm 2 on the leaves ``z``
    (shape ``(T, d)``) for ``n`` runs, shape ``(n, T, d)``."""
    T = check_int(T, "T", minimum=1)
    d = check_int(d, "d", minimum=1)

    def mechanism(z: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        z = check_finite_array(z, "z", shape=(T, d))
        tree = ST13TreeAggregator(T, d, bound, epsilon, n, rng)
        out = np.empty((n, T, d))
        for t in range(T):
            out[:, t] = tree.add(z[t])
        return out

    return mechanism


def learner_mechanism(factory: Callable[[], Any]
                      ) -> Callable[[Sequence[Loss], int, np.random.Generator], np.ndarray]:
    """``mechanism(stream, n, rng)``: the released trajectory ``(n, T, d)`` of a fresh learner
    from ``factory()`` run on ``stream``."""

    def mechanism(stream: Sequence[Loss], n: int, rng: np.random.Generator) -> np.ndarray:
        return factory().run(stream, n, rng)

    return mechanism


def _l2_laplace_llr(y: np.ndarray, c0: np.ndarray, c1: np.ndarray, scale: float) -> np.ndarray:
    """Log likelihood ratio of l2-Laplace(c0, s) to l2-Laplace(c1, s) at ``y`` (last axis)."""
    return (np.linalg.norm(y - c1, axis=-1) - np.linalg.norm(y - c0, axis=-1)) / scale


def tree_node_statistic(T: int, z0: np.ndarray, z1: np.ndarray, scale: float
                        ) -> Callable[[np.ndarray], np.ndarray]:
    """Exact node likelihood-ratio score for a tree release ``(n, T, d)`` and leaves differing at
    leaf 1: the sum over the released nodes containing leaf 1 of the l2-Laplace log likelihood
    ratio of (node value minus the common leaves). Large scores favour ``z0``."""
    nodes = nodes_containing(1, T)

    def statistic(v: np.ndarray) -> np.ndarray:
        score = np.zeros(v.shape[0])
        for node in nodes:
            value = v[:, node.last - 1] - (v[:, node.first - 2] if node.first > 1 else 0.0)
            common = z0[node.first:node.last].sum(axis=0)  # leaves 2..last (identical in z1)
            score += _l2_laplace_llr(value - common, z0[0], z1[0], scale)
        return np.round(score, 10)

    return statistic


def _tree_loss(learner: PFTAL, loss: Loss) -> Loss:
    """The loss whose gradient the learner passes to the tree (``h_t`` for App. C)."""
    if isinstance(learner, PFTALConvex):
        return L2Regularised(loss, learner.regularisation)
    return loss


def pftal_node_statistic(learner: PFTAL, pair: WorstPair) -> Callable[[np.ndarray], np.ndarray]:
    """Likelihood-ratio score of a PFTAL release ``(n, T, d)`` for ``pair``.

    Inverts the released points to noisy sums ``v_t = H t (mean(w_1..w_t) - w_{t+1})`` (exact where
    the projection is inactive, a censored proxy otherwise), differences them into the released
    nodes containing the replaced leaf, subtracts the (common) clipped gradients of the other
    rounds at the released points, and sums the l2-Laplace log likelihood ratios of the two
    possible inputs of the replaced round. Large scores favour ``pair.stream0``.
    """
    T, p = pair.T, pair.position
    H, mu = learner.strong_convexity, learner.tree_bound
    scale = st13_node_scale(mu, learner.epsilon, learner.horizon)
    nodes = released_nodes(p, T)
    h0 = [_tree_loss(learner, f) for f in pair.stream0]
    hF, hG = h0[p - 1], _tree_loss(learner, pair.stream1[p - 1])
    last = max((node.last for node in nodes), default=0)

    def noisy_sum(X: np.ndarray, cs: np.ndarray, t: int) -> np.ndarray:
        if t == 0:
            return np.zeros((X.shape[0], X.shape[2]))
        return H * t * (cs[:, t - 1] / t - X[:, t])

    def statistic(X: np.ndarray) -> np.ndarray:
        score = np.zeros(X.shape[0])
        if not nodes:
            return score
        cs = np.cumsum(X[:, :last], axis=1)
        z = np.stack([clip_l2(h0[tau].grad(X[:, tau]), mu) for tau in range(last)], axis=1)
        z[:, p - 1] = 0.0
        cz = np.cumsum(z, axis=1)
        cF = clip_l2(hF.grad(X[:, p - 1]), mu)
        cG = clip_l2(hG.grad(X[:, p - 1]), mu)
        for node in nodes:
            value = noisy_sum(X, cs, node.last) - noisy_sum(X, cs, node.first - 1)
            common = cz[:, node.last - 1] - (cz[:, node.first - 2] if node.first > 1 else 0.0)
            score += _l2_laplace_llr(value - common, cF, cG, scale)
        return np.round(score, 10)

    return statistic


def bandit_node_statistic(learner: PrivateBanditFTAL, pair: WorstPair
                          ) -> Callable[[np.ndarray], np.ndarray]:
    """Score of a bandit release ``(n, T, d)`` for a pair differing at round 1.

    ``u_1 = (w^_1 - w_dagger_1) / beta`` is public (``w_dagger_1`` is the fixed initial point), so
    the direction ``e`` in which the replaced input moves the tree is known. For every released node
    ``[1, t]`` (``t = 2^j``) the next secret centre
    ``w_dagger_{t+1} = Pi_{(1-xi)C}(m_t - v_t / (H t))`` moves against ``v_dagger_t``; when
    ``H t ||C||`` is small against the node noise the centres sit on the boundary of
    ``(1 - xi) C`` and only their side is revealed (the played point
    ``w^_{t+1} = w_dagger_{t+1} + beta u_{t+1}`` keeps the side when ``beta < (1 - xi) r``).
    The score counts the released nodes whose played point lies on the side the replaced input
    pushes to, ``<w^_{t+1} - w_dagger_1, e> < 0``; its top value ("every node agrees") is the
    analogue of the worst-case event. Large scores favour ``pair.stream0``.

    The statistic has power only when ``beta < (1 - xi) r`` (:func:`bandit_side_is_revealed`):
    otherwise a centre on the boundary of ``(1 - xi) C`` (at distance ``(1 - xi) r`` from the origin
    on a ball) does not decide the side of the played point, ``u_{t+1}`` does, and the score is
    nearly independent of the replaced input. The auditors skip such grid points.
    """
    if pair.position != 1:
        raise ValueError("the bandit statistic needs a pair differing at round 1")
    T = pair.T
    nodes = released_nodes(1, T)
    beta, w1 = learner.sampling_radius, learner.initial_point
    hF = pair.stream0[0]
    hG = pair.stream1[0]
    if isinstance(learner, PrivateBanditFTALConvex):
        H = learner.regularisation
        hF, hG = L2Regularised(hF, H), L2Regularised(hG, H)
    B_eff = learner.tree_bound * beta / learner.dim  # the value bound the tree's clipping enforces

    def statistic(X: np.ndarray) -> np.ndarray:
        score = np.zeros(X.shape[0])
        if not nodes:
            return score
        u1 = (X[:, 0] - w1) / beta
        gap = np.clip(hF.value(X[:, 0]), -B_eff, B_eff) - np.clip(hG.value(X[:, 0]), -B_eff, B_eff)
        e = np.sign(gap)[:, None] * u1
        for node in nodes:
            score += np.sum((X[:, node.last] - w1) * e, axis=1) < 0.0
        return score

    return statistic


def bandit_side_is_revealed(learner: PrivateBanditFTAL) -> bool:
    """Whether ``beta < (1 - xi) r``: a secret centre on the boundary of ``(1 - xi) C`` (which
    contains the ball of radius ``(1 - xi) r``) then decides the side of the played point
    ``w_dagger + beta u`` along any direction, which :func:`bandit_node_statistic` needs."""
    if not isinstance(learner, PrivateBanditFTAL):
        raise TypeError(f"learner must be a PrivateBanditFTAL, got {type(learner).__name__}")
    return learner.sampling_radius < (1.0 - learner.shrink) * learner.inner_radius


# ------------------------------------------------------------------------------------------------
# Exact accounting
# ------------------------------------------------------------------------------------------------


def pair_epsilon(count: int, shift: float, scale: float) -> float:
    """Exact pure epsilon of ``count`` independent l2-Laplace(scale) nodes each shifted by
    ``shift`` (l2): ``count * shift / scale`` (the essential supremum of the privacy loss)."""
    count = check_int(count, "count", minimum=0)
    return count * float(shift) / check_positive(scale, "scale")


def pftal_pair_exact_epsilon(learner: PFTAL, pair: WorstPair) -> float:
    """Exact pure epsilon of the *released points* of PFTAL on a pair from
    :func:`pftal_worst_pair` / :func:`pftal_convex_worst_pair` (module docstring).

    Upper bound: the release is post-processing of the released nodes, of which
    ``len(released_nodes(2, T))`` contain the replaced leaf, each shifted (given the past) by
    ``Delta(w^_2) = ||clip(grad h_2(w^_2)) - clip(grad h'_2(w^_2))||``, at most ``node_shift`` and
    ``2 mu``. Lower bound: ``w^_2`` has a continuous density that is positive around 0, the shift
    is continuous in ``w^_2`` and largest at ``w^_2 = 0``, and given ``w^_2`` the ``F``-centre of
    every node sits in the middle of the region the released points reveal, so each node's
    worst-case event is observable. Hence the essential supremum of the privacy loss equals
    ``count * Delta(0) / s``, the upper bound. For the strongly convex pair and for the convex pair
    under reading ``"lipschitz+H|C|"`` no input is clipped and the shift is ``Delta(0)`` at every
    ``w^_2``, so the supremum is attained on an event of positive probability. For the convex pair
    under reading ``"lipschitz"`` (``mu = L``) one of the two inputs is clipped whenever
    ``w^_2 != 0``, so ``Delta(w^_2) < 2 L`` almost surely (``w^_2 = 0`` has probability zero) and
    the value is an essential supremum approached as ``w^_2 -> 0``, not attained. Either way it is
    the exact pure epsilon (at ``delta = 0``); for ``delta > 0`` the composition of the nodes'
    Laplace curves is only an upper bound for the release (the projection hides the noise
    magnitudes).

    Raises ``ValueError`` if the pair does not satisfy the construction's conditions: it replaces
    round 2 with ``w^_1 = 0``; every other round is common to both streams (same tree input at the
    probe points of :func:`domain_probe`); every round ``t >= 3`` has tree input ``H w`` (``f_0``);
    ``H R <= mu`` (the common inputs are not clipped); and the shift is largest at the centre.
    """
    mu = learner.tree_bound
    H, R = learner.strong_convexity, learner.domain.radius
    if pair.position != 2 or np.any(learner.initial_point != 0.0):
        raise ValueError("the exactness argument is for pairs replacing round 2, with w^_1 = 0")
    if H * R > mu * (1 + _NORM_RTOL):
        raise ValueError("the pair's exactness argument needs H R <= mu (unclipped common terms)")
    probe = domain_probe(learner.domain)
    for t, (f0, f1) in enumerate(zip(pair.stream0, pair.stream1), start=1):
        if t == pair.position:
            continue
        g0 = _tree_loss(learner, f0).grad(probe)
        if not np.allclose(g0, _tree_loss(learner, f1).grad(probe), atol=1e-12):
            raise ValueError(f"round {t} differs between the streams (only round 2 may differ)")
        if t >= 3 and not np.allclose(g0, H * probe, atol=1e-12):
            raise ValueError(f"the pair's common round {t} must have gradient H w (f_0)")
    origin = np.zeros((1, learner.dim))
    h1 = _tree_loss(learner, pair.stream0[0])
    hF = _tree_loss(learner, pair.stream0[1])
    hG = _tree_loss(learner, pair.stream1[1])

    def shift_at(w: np.ndarray) -> np.ndarray:
        return np.linalg.norm(clip_l2(hF.grad(w), mu) - clip_l2(hG.grad(w), mu), axis=-1)

    shift = float(shift_at(origin)[0])
    if np.any(shift_at(probe) > shift * (1 + 1e-12)):
        raise ValueError("the pair's node shift is not largest at the centre")
    # the F-centre of every node minus the centre of the region the released points reveal
    offset = clip_l2(hF.grad(origin), mu) + clip_l2(h1.grad(origin), mu)
    if float(np.linalg.norm(offset)) > 1e-9 * max(1.0, mu):
        raise ValueError("the pair's F-centre is not at the centre of the revealed region")
    count = len(released_nodes(pair.position, pair.T))
    scale = st13_node_scale(mu, learner.epsilon, learner.horizon)
    return pair_epsilon(count, min(shift, 2 * mu), scale)


def domain_probe(domain: Domain) -> np.ndarray:
    """A few points of ``domain`` (centre, +-radius along e_1), shape ``(3, d)``."""
    e = _e1(domain.dim) * domain.radius
    return domain.project(np.stack([np.zeros(domain.dim), e, -e]))


def accountant_epsilon(count: int, sensitivity: float, scale: float, delta: float = 0.0) -> float:
    """The accountant's epsilon(delta) for one leaf of an l2-Laplace tree: ``count`` nodes, each of
    replace-one sensitivity ``sensitivity`` (:func:`dpaudit.audits.accounting.tree_leaf_epsilon`);
    0 when no released node contains a leaf."""
    if count == 0:
        return 0.0
    return tree_leaf_epsilon("l2-laplace", scale, sensitivity, count, delta)


#: The deltas at which the privacy curves of the figures are tabulated.
CURVE_DELTAS = (0.0, 1e-8, 1e-6, 1e-4, 1e-2)


def _privacy_curve(claimed: float, lb: float | None, count_worst: int, sens_worst: float,
                   scale: float, *, count_pair: int, shift_pair: float, d: int,
                   exact_at_zero: float | None, release_is_sums: bool) -> dict[str, Any]:
    """``figures["privacy_curve"]`` of one grid point (conventions of
    :mod:`dpaudit.audits.claim_audit`), epsilon at each delta of :data:`CURVE_DELTAS`.

    * ``epsilon_accountant``: the worst case over the class (``count_worst`` nodes of sensitivity
      ``sens_worst``, node scale ``scale``).
    * ``epsilon_exact``: the exact epsilon(delta) of the *release* on the audited pair, and only
      where it is known: ``exact_at_zero`` at ``delta = 0`` (``None`` if unknown); at ``delta > 0``
      only when the release is the noisy sums themselves (``release_is_sums``: the tree) in
      ``d = 1``, where it is the composition of ``count_pair`` Laplace mechanisms; ``None``
      otherwise. For the learners the projection (and, for the bandit, the secret ``u_t``) hides the
      noise magnitudes, so the release's curve at ``delta > 0`` is not known.
    * ``epsilon_noisy_sums`` (learners, ``d = 1``): that Laplace composition for the noisy sums on
      the pair, an upper bound for the release (post-processing), not its exact curve.
    * ``notes``: what each curve is.
    """
    deltas = list(CURVE_DELTAS)
    acc = [accountant_epsilon(count_worst, sens_worst, scale, dl) for dl in deltas]
    out: dict[str, Any] = {"deltas": deltas, "epsilon_accountant": acc,
                           "claimed": [claimed, 0.0], "lower_bound": [lb, 0.0]}
    sums: list[float | None] = [None] * len(deltas)
    if d == 1 and count_pair > 0 and shift_pair > 0:
        sums = [laplace_epsilon([scale / shift_pair] * count_pair, dl) for dl in deltas]
    exact: list[float | None] = [None] * len(deltas)
    if release_is_sums:
        exact = list(sums)
    exact[0] = exact_at_zero
    out["epsilon_exact"] = exact
    notes = {"epsilon_accountant": "worst case over the class (upper bound)"}
    if release_is_sums:
        notes["epsilon_exact"] = ("exact epsilon(delta) of the release on the audited pair"
                                  + ("" if d == 1 else " (delta = 0 only for d > 1)"))
    else:
        notes["epsilon_exact"] = ("exact epsilon of the release on the audited pair at delta = 0 "
                                  "only" if exact_at_zero is not None else
                                  "no exact value known for the release")
        out["epsilon_noisy_sums"] = sums
        notes["epsilon_noisy_sums"] = ("epsilon(delta) of the noisy sums on the audited pair "
                                       "(composition of Laplace nodes, d = 1): an upper bound for "
                                       "the release, which hides the noise magnitudes; not exact "
                                       "for delta > 0")
    out["notes"] = notes
    return out


# ------------------------------------------------------------------------------------------------
# Lemma checks
# ------------------------------------------------------------------------------------------------


def noise_law_check(d: int, T: int, bound: float, epsilon: float, samples: int,
                    rng: np.random.Generator, *, noise: NodeNoise | None = None) -> LemmaCheck:
    """The law of Algorithm 2's node noise as the learners use it (KS tests).

    With zero inputs, ``v_1`` is the noise of node ``[1]`` and ``v_2`` that of node ``[1, 2]``
    (each a single node). Tests: ``||n|| ~ Gamma(shape d, scale s)`` for both; the direction
    uniform on the sphere (``d = 1``: fair sign, binomial test; ``d >= 2``:
    ``(u_1 + 1) / 2 ~ Beta((d-1)/2, (d-1)/2)``, KS). The lemma is "violated" if any p-value is
    below ``1e-3`` / (number of tests).
    ``noise`` replaces the tree's node noise (default: the printed l2-Laplace); the law tested is
    always the printed one, of scale :func:`st13_node_scale` ``(bound, epsilon, T)``.
    """
    n = max(200, int(samples))
    tree = ST13TreeAggregator(max(T, 2), d, bound, epsilon, n, rng, noise=noise)
    s = st13_node_scale(bound, epsilon, max(T, 2))
    draws = [tree.add(np.zeros(d)), tree.add(np.zeros(d))]
    pvalues: dict[str, float] = {}
    for name, v in zip(("node[1]", "node[1,2]"), draws):
        norms = np.linalg.norm(v, axis=1)
        pvalues[f"{name} norm ~ Gamma({d}, {s:.4g})"] = float(
            stats.kstest(norms, stats.gamma(a=d, scale=s).cdf).pvalue)
        if d == 1:
            positive = int((v[:, 0] > 0).sum())
            pvalues[f"{name} sign fair"] = float(stats.binomtest(positive, n).pvalue)
        else:
            u = v[:, 0] / norms
            pvalues[f"{name} direction uniform"] = float(
                stats.kstest((u + 1) / 2, stats.beta((d - 1) / 2, (d - 1) / 2).cdf).pvalue)
    level = NOISE_LAW_LEVEL / len(pvalues)
    ok = min(pvalues.values()) >= level
    statement = (f"Alg. 2 line 9 node noise (d = {d}): ||n||_2 ~ Gamma(shape d, scale "
                 f"mu(ceil(log2 T)+1)/eps = {s:.4g}), direction uniform on the sphere")
    return LemmaCheck(statement, "holds" if ok else "violated", None, 2 * n,
                      None if ok else {"pvalues": pvalues, "level": level})


_HYP_SETTINGS = dict(database=None, deadline=None, derandomize=False,
                     verbosity=Verbosity.quiet, report_multiple_bugs=False,
                     phases=(Phase.explicit, Phase.generate, Phase.shrink),
                     suppress_health_check=(HealthCheck.too_slow, HealthCheck.data_too_large,
                                            HealthCheck.large_base_example,
                                            HealthCheck.filter_too_much))


@dataclass
class _StructuralOutcome:
    tried: int = 0
    failures: dict[str, dict[str, Any]] = field(default_factory=dict)


class _StructuralFailure(Exception):
    pass


@dataclass(frozen=True, eq=False)
class _RecordingLoss(Loss):
    """Wraps a loss and records every point at which it is evaluated (data-access check)."""

    inner: Loss
    calls: list = field(default_factory=list)

    @property
    def kind(self) -> LossKind:  # type: ignore[override]
        return self.inner.kind

    @property
    def dim(self) -> int:
        return self.inner.dim

    def value(self, x: np.ndarray) -> np.ndarray:
        self.calls.append(("value", np.array(x)))
        return self.inner.value(x)

    def grad(self, x: np.ndarray) -> np.ndarray:
        self.calls.append(("grad", np.array(x)))
        return self.inner.grad(x)

    def lipschitz(self, domain: Domain) -> float:
        return self.inner.lipschitz(domain)


def _unchecked_streams(d: int, max_T: int) -> st.SearchStrategy[list[Loss]]:
    """Streams of linear and squared losses with coefficients up to 1e3 (far outside every declared
    class: the structural properties must hold for any input)."""
    coef = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False, allow_subnormal=False)
    vec = st.lists(coef, min_size=d, max_size=d).map(np.array)
    linear = vec.map(LinearLoss)
    squared = st.tuples(vec, coef, st.floats(0.0, 10.0, allow_nan=False)).map(
        lambda a: SquaredLoss(a[0], a[1], ridge=a[2]))
    return st.lists(st.one_of(linear, squared), min_size=1, max_size=max_T)


def _tree_structure_failures(tree: ST13TreeAggregator) -> str | None:
    T = tree.t
    nodes = [draw.node for draw in tree.noise_log]
    if len(nodes) != len(set(nodes)):
        return "a node was noised more than once"
    if any(draw.t != draw.node.last for draw in tree.noise_log):
        return "a node was noised before or after it completed"
    noised = set(nodes)
    for t, used in enumerate(tree.released_nodes, start=1):
        if sum(n.size for n in used) != t or any(n not in noised or n.last > t for n in used):
            return f"v_{t} is not a sum of completed noised nodes covering [1, {t}]"
    for leaf in range(1, T + 1):
        if sum(1 for n in noised if n.contains(leaf)) > st13_tree_levels(tree.T):
            return f"leaf {leaf} lies in more than ceil(log2 T) + 1 noised nodes"
    return None


def structural_checks(kind: str, d: int, make_learner: Callable[[int], Any], examples: int,
                      seed: int, bound_of: Callable[[Any], float]) -> list[LemmaCheck]:
    """Hypothesis search over streams (any losses, any ``T <= 24``) for violations of the structural
    properties the privacy proof needs; one :class:`LemmaCheck` per property.

    ``kind``: ``"full"`` (PFTAL: the learner reads ``grad f_t`` at released points) or ``"bandit"``
    (reads ``f_t`` at played points). ``make_learner(T)`` returns a private learner built with
    ``record=True``.
    """
    outcome = _StructuralOutcome()
    names = {
        "input": "every input the tree receives has l2 norm <= the bound passed to it (clipping)",
        "tree": ("every node is noised exactly once, when it completes; every leaf lies in at most "
                 "ceil(log2 T) + 1 noised nodes; every release is a sum of completed nodes"),
        "post": ("post-processing: the release is a function of the tree's outputs"
                 + (" and the secret directions u_t" if kind == "bandit" else "")
                 + ", and each loss is read only at the released point of its round"),
    }

    def fail(key: str, detail: dict[str, Any]) -> None:
        outcome.failures[key] = detail

    @hypothesis.settings(max_examples=examples, **_HYP_SETTINGS)
    @hypothesis.seed(seed)
    @hypothesis.given(_unchecked_streams(d, STRUCTURAL_MAX_T), st.integers(0, 2 ** 32 - 1))
    def search(stream: list[Loss], run_seed: int) -> None:
        outcome.tried += 1
        T = len(stream)
        spies = [_RecordingLoss(f) for f in stream]
        learner = make_learner(T)
        out = learner.run(spies, 2, np.random.default_rng(run_seed))
        tree = learner.tree
        bad: list[str] = []
        detail = {"T": T, "run_seed": run_seed, "losses": [repr(f) for f in stream]}
        mu = bound_of(learner)
        if tree.max_input_norm > mu * (1 + _NORM_RTOL):
            bad.append("input")
            fail("input", {**detail, "max_input_norm": tree.max_input_norm, "bound": mu})
        why = _tree_structure_failures(tree)
        if why is not None:
            bad.append("tree")
            fail("tree", {**detail, "reason": why})
        why = _replay_failure(kind, learner, out, spies)
        if why is not None:
            bad.append("post")
            fail("post", {**detail, "reason": why})
        if bad:
            raise _StructuralFailure(", ".join(bad))

    try:
        search()
    except _StructuralFailure:
        pass
    return [LemmaCheck(statement, "violated" if key in outcome.failures else "holds", None,
                       outcome.tried, outcome.failures.get(key))
            for key, statement in names.items()]


def _replay_failure(kind: str, learner: Any, out: np.ndarray,
                    spies: Sequence[_RecordingLoss]) -> str | None:
    sums = learner.tree.released_sums
    T = out.shape[1]
    H, domain = learner.strong_convexity, learner.domain
    if kind == "full":
        S = out[:, 0].copy()
        for t in range(1, T):
            replay = ftal_argmin(S, sums[t - 1], t, H, domain)
            if not np.allclose(replay, out[:, t], rtol=1e-9, atol=1e-9 * max(1.0, domain.radius)):
                return f"w_{t + 1} differs from the replay of eq. (5) from the tree's sums"
            S += out[:, t]
        expected = "grad"
    else:
        centre = np.broadcast_to(learner.initial_point, out[:, 0].shape).copy()
        S = centre.copy()
        for t in range(T):
            if t:
                centre = project_shrunk(S / t - sums[t - 1] / (H * t), domain, learner.shrink)
                S = S + centre
            dist = np.linalg.norm(out[:, t] - centre, axis=1)
            if not np.allclose(dist, learner.sampling_radius, rtol=1e-9, atol=1e-12):
                return (f"w^_{t + 1} is not at distance beta from the centre replayed from the "
                        "tree's sums")
        expected = "value"
    for t, spy in enumerate(spies):
        kinds = [k for k, _ in spy.calls]
        if kinds != [expected] or not np.array_equal(spy.calls[0][1], out[:, t]):
            return (f"loss {t + 1} was read as {kinds} (expected one '{expected}' call at the "
                    "released point)")
    return None


def _fixed_points(d: int, R: float, T: int) -> np.ndarray:
    """Deterministic evaluation points for the per-node sensitivity check: the centre and points
    of the boundary along +-e_1 (and +-e_2), cycled."""
    base = [np.zeros(d), R * _e1(d), -R * _e1(d)]
    if d > 1:
        e2 = np.zeros(d)
        e2[1] = 1.0
        base += [R * e2, -R * e2]
    base.append(0.5 * R * _e1(d))
    return np.array([base[t % len(base)] for t in range(T)])


# ------------------------------------------------------------------------------------------------
# Shared audit machinery
# ------------------------------------------------------------------------------------------------


@dataclass
class _PointResult:
    point: GridPoint
    result: AuditResult | None
    curve: dict[str, Any]


def _engine_seed(ctx: AuditContext, claim_id: str, index: int) -> int:
    return int(ctx.rng(claim_id, index).integers(0, 2 ** 31 - 1))


def _run_engine(ctx: AuditContext, claim: PrivacyClaim, index: int, n_points: int,
                mechanism: Callable[..., np.ndarray], data0: Any, data1: Any, epsilon: float,
                statistic: Callable[[np.ndarray], np.ndarray],
                samples: int | None = None) -> AuditResult:
    return audit(mechanism, data0, data1, epsilon=epsilon, delta=0.0,
                 samples=ctx.budget.samples if samples is None else samples,
                 alpha=ctx.alpha / n_points, seed=_engine_seed(ctx, claim.id, index),
                 statistic=statistic, train_fraction=TRAIN_FRACTION)


def _evidence(result: AuditResult, extra: dict[str, Any]) -> dict[str, Any]:
    ev = {"empirical": {k: v for k, v in result.to_dict().items() if k != "histogram"}}
    ev.update(extra)
    return ev


def _finish(claim: PrivacyClaim, ctx: AuditContext, results: list[_PointResult],
            lemmas: list[LemmaCheck], findings: list[str], figures: dict[str, Any],
            recommended: str | None, t0: float) -> ClaimAudit:
    points = [r.point for r in results]
    ca = ClaimAudit(claim=claim, points=points, lemmas=lemmas, findings=findings,
                    recommended_calibration=None, figures=figures, seed=ctx.seed,
                    budget=ctx.budget.name, alpha=ctx.alpha)
    worst = ca.worst_point()
    if worst is not None:
        best = next(r for r in results if r.point is worst)
        if best.result is not None:
            figures["histogram"] = dict(best.result.histogram)
        figures["privacy_curve"] = best.curve
    if ca.verdict == "violated":
        ca.recommended_calibration = recommended
    ca.seconds = time.perf_counter() - t0
    ca.reproduce = (f"dpaudit audit {claim.id} --budget {ctx.budget.name} --seed {ctx.seed} "
                    f"--alpha {ctx.alpha}")
    return ca


def _coarse(ctx: AuditContext) -> bool:
    return ctx.budget.grid == "coarse"


def _horizons(ctx: AuditContext, coarse: Sequence[int], full: Sequence[int]) -> list[int]:
    Ts = coarse if _coarse(ctx) else full
    return [T for T in Ts if T <= max(ctx.budget.max_T, min(Ts))]


def _recommend(bound_name: str) -> str:
    return (f"Calibrate Algorithm 2 for the replace-one relation: pass 2 x ({bound_name}) as its "
            f"L2-bound, i.e. node scale s = 2 {bound_name} (ceil(log2 T) + 1) / eps (enough: a "
            f"replaced input moves each of at most floor(log2 T) + 1 <= ceil(log2 T) + 1 released "
            f"nodes by at most 2 {bound_name}; the exact accountant then gives at most eps).")


def _node_sensitivity_lemma(trajectory_fn: Callable[[Sequence[Loss]], np.ndarray],
                            bound: float, loss_class: LossClass, ctx: AuditContext,
                            claim_id: str) -> tuple[LemmaCheck, dict[str, Any]]:
    report = check_sensitivity(trajectory_fn, lambda t, T: bound, loss_class, T=(1, 8),
                               examples=ctx.budget.sensitivity_examples,
                               seed=_engine_seed(ctx, claim_id, 10_000), offset=0)
    statement = NODE_RATIO_LEMMA.statement
    return report.to_lemma_check(statement), report.trace(statement)


# ------------------------------------------------------------------------------------------------
# st13/tree-aggregation
# ------------------------------------------------------------------------------------------------


def _tree_grid(ctx: AuditContext) -> list[dict[str, Any]]:
    if _coarse(ctx):
        pts = [(1, 1, 1.0), (8, 1, 1.0), (9, 1, 1.0), (64, 1, 1.0), (8, 1, 0.1), (8, 1, 4.0),
               (8, 3, 1.0)]
    else:
        pts = [(T, 1, e) for T in (1, 2, 3, 8, 9, 64, 256) for e in (1.0,)]
        pts += [(8, 1, 0.1), (8, 1, 0.5), (8, 1, 2.0), (8, 1, 4.0), (64, 1, 4.0), (8, 3, 1.0),
                (64, 3, 1.0)]
    return [{"T": T, "d": d, "epsilon": e, "mu": 1.0} for T, d, e in pts
            if T <= max(ctx.budget.max_T, 1)]


def audit_tree_aggregation(ctx: AuditContext) -> ClaimAudit:
    """Audit ``st13/tree-aggregation`` (Algorithm 2 as a mechanism on leaf vectors)."""
    t0 = time.perf_counter()
    claim = TREE_AGGREGATION
    grid = _tree_grid(ctx)
    total = len(grid) + 2
    results: list[_PointResult] = []
    for i, prm in enumerate(grid):
        ctx.progress(i, total, f"{claim.id} T={prm['T']} d={prm['d']} eps={prm['epsilon']}")
        T, d, eps, mu = prm["T"], prm["d"], prm["epsilon"], prm["mu"]
        s = st13_node_scale(mu, eps, T)
        z0, z1 = tree_worst_pair(T, d, mu)
        count = max_nodes_per_leaf(T)
        exact = pair_epsilon(count, 2 * mu, s)
        acc = accountant_epsilon(count, 2 * mu, s)
        res = _run_engine(ctx, claim, i, len(grid), tree_mechanism(T, d, mu, eps), z0, z1, eps,
                          tree_node_statistic(T, z0, z1, s))
        extra = {"pair": "z_1 = mu e_1 vs -mu e_1, other leaves 0",
                 "node_scale": s, "released_nodes_containing_leaf_1": count,
                 "printed_nodes_per_leaf": st13_tree_levels(T),
                 "per_node_epsilon_exact": 2 * mu / s,
                 "per_node_epsilon_claimed_by_proof": eps / st13_tree_levels(T),
                 "lower_bound_alpha": ctx.alpha / len(grid)}
        if d > 1:
            extra["note"] = _D_GT_1_NOTE
        gp = GridPoint(prm, eps, 0.0, exact, acc, res.epsilon_lower_bound, _evidence(res, extra))
        curve = _privacy_curve(eps, res.epsilon_lower_bound, count, 2 * mu, s, count_pair=count,
                               shift_pair=2 * mu, d=d, exact_at_zero=exact, release_is_sums=True)
        results.append(_PointResult(gp, res, curve))
    ctx.progress(len(grid), total, f"{claim.id} lemmas")
    lemmas = []
    figures: dict[str, Any] = {}
    cls = LossClass("linear", Ball(2, 1.0), lipschitz=1.0)
    lemma, trace = _node_sensitivity_lemma(lambda fs: np.array([f.g for f in fs]), 1.0, cls, ctx,
                                           claim.id)
    lemmas.append(lemma)
    figures["sensitivity"] = trace
    lemmas += _tree_only_structure(ctx, claim.id)
    for d in (1, 3):
        lemmas.append(noise_law_check(d, 8, 1.0, 1.0, min(ctx.budget.samples, 20_000),
                                      ctx.rng(claim.id, "noise", d)))
    ctx.progress(total, total, f"{claim.id} done")
    findings = _tree_findings(results, lemmas)
    return _finish(claim, ctx, results, lemmas, findings, figures, _recommend("mu"), t0)


def _tree_only_structure(ctx: AuditContext, claim_id: str) -> list[LemmaCheck]:
    """Structural checks of Algorithm 2 alone over T (Hypothesis), inputs of any size."""
    failures: dict[str, dict[str, Any]] = {}
    tried = 0

    @hypothesis.settings(max_examples=ctx.budget.sensitivity_examples, **_HYP_SETTINGS)
    @hypothesis.seed(_engine_seed(ctx, claim_id, 10_001))
    @hypothesis.given(st.integers(1, 130), st.integers(1, 3),
                      st.floats(1e-3, 1e3, allow_nan=False), st.floats(0.0, 1e4, allow_nan=False))
    def search(T: int, d: int, mu: float, size: float) -> None:
        nonlocal tried
        tried += 1
        rng = np.random.default_rng(T)
        tree = ST13TreeAggregator(T, d, mu, 1.0, 2, rng, record=True)
        for _ in range(T):
            tree.add(rng.normal(size=(2, d)) * size)
        bad = False
        if tree.max_input_norm > mu * (1 + _NORM_RTOL):
            failures["input"] = {"T": T, "d": d, "mu": mu, "max_input_norm": tree.max_input_norm}
            bad = True
        why = _tree_structure_failures(tree)
        if why is not None:
            failures["tree"] = {"T": T, "d": d, "reason": why}
            bad = True
        if bad:
            raise _StructuralFailure()

    try:
        search()
    except _StructuralFailure:
        pass
    return [
        LemmaCheck("every input the tree receives has l2 norm <= mu (clipping)",
                   "violated" if "input" in failures else "holds", None, tried,
                   failures.get("input")),
        LemmaCheck("every node is noised exactly once, when it completes; every leaf lies in at "
                   "most ceil(log2 T) + 1 noised nodes; every release is a sum of completed nodes",
                   "violated" if "tree" in failures else "holds", None, tried,
                   failures.get("tree")),
    ]


def _worst(results: list[_PointResult]) -> GridPoint:
    """The point :meth:`ClaimAudit.worst_point` reports: the largest evidence/claim ratio among
    the counterexamples, or among all points when there is none."""
    pts = [r.point for r in results]
    pool = [p for p in pts if p.counterexample() is not None] or pts
    return max(pool, key=lambda p: p.worst_ratio())


def _fmt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.4g}"


def _tree_findings(results: list[_PointResult], lemmas: list[LemmaCheck]) -> list[str]:
    w = _worst(results)
    lb = max(results, key=lambda r: (r.point.epsilon_lower_bound or 0) / r.point.claimed_epsilon)
    out = [
        "Replace-one neighbours let one input change from mu e_1 to -mu e_1, so every node "
        "containing it moves by 2 mu, not mu as the proof of App. B.1 assumes: each node is "
        "(2 eps / (ceil(log2 T) + 1))-DP and a leaf lies in floor(log2 T) + 1 released nodes, "
        "so the exact epsilon is 2 eps (floor(log2 T) + 1) / (ceil(log2 T) + 1): exactly 2 eps "
        "when T is a power of two (and T = 1).",
        f"Worst point {dict(w.parameters)}: claimed {w.claimed_epsilon:g}, exact "
        f"{_fmt(w.epsilon_exact)}, accountant {_fmt(w.epsilon_accountant)}, empirical lower "
        f"bound {_fmt(w.epsilon_lower_bound)}.",
        "Largest empirical lower bound relative to the claim: "
        f"{_fmt(lb.point.epsilon_lower_bound)} at {dict(lb.point.parameters)} "
        f"(claimed {lb.point.claimed_epsilon:g}).",
        "The per-node sensitivity step (node moves by at most mu) fails under replace-one: the "
        "Hypothesis search found ratio "
        f"{_fmt(lemmas[0].worst_ratio)} (observed / claimed node shift).",
    ]
    if any(r.point.parameters.get("d", 1) > 1 for r in results):
        out.append("Grid points with " + _D_GT_1_NOTE + ".")
    out.append(_MIRONOV)
    return out


# ------------------------------------------------------------------------------------------------
# st13/pftal and st13/pftal-convex
# ------------------------------------------------------------------------------------------------


def _pftal_grid(ctx: AuditContext) -> list[dict[str, Any]]:
    Ts = _horizons(ctx, (3, 9, 33), (3, 5, 9, 17, 33, 65, 129, 256))
    mid = 33 if 33 in Ts else max(Ts)
    pts = [{"T": T, "d": 1, "epsilon": 1.0, "rho": 0.05, "tree_bound": "lipschitz"} for T in Ts]
    pts += [{"T": mid, "d": 1, "epsilon": e, "rho": 0.05, "tree_bound": "lipschitz"}
            for e in ((0.3, 4.0) if _coarse(ctx) else (0.1, 0.3, 2.0, 4.0))]
    pts += [{"T": mid, "d": 1, "epsilon": 1.0, "rho": r, "tree_bound": "lipschitz"}
            for r in ((0.5,) if _coarse(ctx) else (0.3, 0.5, 0.9))]
    pts += [{"T": mid, "d": 1, "epsilon": 1.0, "rho": 0.05, "tree_bound": "lipschitz+H|C|"},
            {"T": mid, "d": 2, "epsilon": 1.0, "rho": 0.05, "tree_bound": "lipschitz"}]
    if not _coarse(ctx):
        pts.append({"T": mid, "d": 3, "epsilon": 4.0, "rho": 0.05, "tree_bound": "lipschitz"})
    for p in pts:
        p.update({"L": 1.0, "R": 1.0, "H": p["rho"] * 1.0 / 1.0})
    return pts


def _pftal_point(ctx: AuditContext, claim: PrivacyClaim, i: int, n_points: int,
                 learner_factory: Callable[[], PFTAL], pair: WorstPair, prm: dict[str, Any],
                 worst_count: int, worst_sensitivity: float) -> _PointResult:
    learner = learner_factory()
    eps, d = prm["epsilon"], prm["d"]
    scale = st13_node_scale(learner.tree_bound, eps, pair.T)
    exact = pftal_pair_exact_epsilon(learner, pair)
    acc = accountant_epsilon(worst_count, worst_sensitivity, scale)
    res = _run_engine(ctx, claim, i, n_points, learner_mechanism(learner_factory), pair.stream0,
                      pair.stream1, eps, pftal_node_statistic(learner, pair))
    count = len(released_nodes(pair.position, pair.T))
    extra = {"pair": pair.description, "replaced_round": pair.position,
             "tree_bound_mu": learner.tree_bound, "node_scale": scale,
             "released_nodes_containing_replaced_leaf": count,
             "max_released_nodes_per_leaf": worst_count,
             "node_shift": pair.node_shift, "accountant_sensitivity": worst_sensitivity,
             "exact_note": ("epsilon_exact: the pure (delta = 0) epsilon of the released points "
                            "on this pair, the essential supremum of their privacy loss "
                            "(pftal_pair_exact_epsilon); for delta > 0 only an upper bound is "
                            "known (the noisy sums' Laplace composition: the projection hides the "
                            "noise magnitudes); the accountant is the worst case over all pairs of "
                            "the class"),
             "lower_bound_alpha": ctx.alpha / n_points}
    if d > 1:
        extra["note"] = _D_GT_1_NOTE
    gp = GridPoint(prm, eps, 0.0, exact, acc, res.epsilon_lower_bound, _evidence(res, extra))
    pair_shift = min(pair.node_shift, 2 * learner.tree_bound)
    curve = _privacy_curve(eps, res.epsilon_lower_bound, worst_count, worst_sensitivity, scale,
                           count_pair=count, shift_pair=pair_shift, d=d, exact_at_zero=exact,
                           release_is_sums=False)
    return _PointResult(gp, res, curve)


def audit_pftal(ctx: AuditContext) -> ClaimAudit:
    """Audit ``st13/pftal`` (Algorithm 1, Theorem 3)."""
    t0 = time.perf_counter()
    claim = PFTAL_CLAIM
    grid = _pftal_grid(ctx)
    total = len(grid) + 2
    results = []
    for i, prm in enumerate(grid):
        ctx.progress(i, total, f"{claim.id} {prm}")
        T, d, L, H, R, eps = prm["T"], prm["d"], prm["L"], prm["H"], prm["R"], prm["epsilon"]
        dom = Ball(d, R)

        def factory(dom=dom, H=H, L=L, eps=eps, T=T, tb=prm["tree_bound"]) -> PFTAL:
            return PFTAL(dom, H, L, eps, T, tree_bound=tb)

        pair = pftal_worst_pair(d, T, L, H, R)
        mu = factory().tree_bound
        results.append(_pftal_point(ctx, claim, i, len(grid), factory, pair, prm,
                                    max_nodes_per_leaf(T - 1), 2 * min(L, mu)))
    ctx.progress(len(grid), total, f"{claim.id} lemmas")
    d, L, H, R = 2, 1.0, 0.05, 1.0
    mu = L
    pts = _fixed_points(d, R, 8)
    cls = LossClass("squared", Ball(d, R), lipschitz=L, strong_convexity=H)
    lemma, trace = _node_sensitivity_lemma(
        lambda fs: np.array([clip_l2(f.grad(pts[t]), mu) for t, f in enumerate(fs)]), mu, cls,
        ctx, claim.id)
    lemmas = [lemma]
    for dd in (1, 2):
        lemmas += structural_checks(
            "full", dd, lambda T, dd=dd: PFTAL(Ball(dd, R), H, L, 1.0, T, record=True),
            max(10, ctx.budget.sensitivity_examples // 2), _engine_seed(ctx, claim.id, 20_000 + dd),
            lambda learner: learner.tree_bound)
    lemmas = _merge_structural(lemmas)
    lemmas.append(noise_law_check(1, 33, L, 1.0, min(ctx.budget.samples, 20_000),
                                  ctx.rng(claim.id, "noise", 1)))
    lemmas.append(noise_law_check(2, 33, L, 1.0, min(ctx.budget.samples, 20_000),
                                  ctx.rng(claim.id, "noise", 2)))
    ctx.progress(total, total, f"{claim.id} done")
    findings = _pftal_findings(results, lemmas, convex=False)
    return _finish(claim, ctx, results, lemmas, findings, {"sensitivity": trace},
                   _recommend("L"), t0)


def _merge_structural(lemmas: list[LemmaCheck]) -> list[LemmaCheck]:
    """Merge structural checks of the same statement run in several dimensions."""
    merged: dict[str, LemmaCheck] = {}
    for lem in lemmas:
        if lem.statement in merged:
            old = merged[lem.statement]
            status = "violated" if "violated" in (old.status, lem.status) else "holds"
            cex = old.counterexample if old.status == "violated" else lem.counterexample
            ratio = (None if old.worst_ratio is None and lem.worst_ratio is None
                     else max(x for x in (old.worst_ratio, lem.worst_ratio) if x is not None))
            merged[lem.statement] = LemmaCheck(lem.statement, status, ratio,
                                               old.examples + lem.examples, cex)
        else:
            merged[lem.statement] = lem
    return list(merged.values())


def _pftal_convex_grid(ctx: AuditContext) -> list[dict[str, Any]]:
    Ts = _horizons(ctx, (9, 33), (3, 9, 33, 129, 256))
    mid = 33 if 33 in Ts else max(Ts)
    pts = []
    for tb in ("lipschitz+H|C|", "lipschitz"):
        for R in (1.0, 0.05):
            pts.append({"T": mid, "d": 1, "epsilon": 1.0, "R": R, "tree_bound": tb})
    pts += [{"T": T, "d": 1, "epsilon": 1.0, "R": 0.05, "tree_bound": "lipschitz+H|C|"}
            for T in Ts if T != mid]
    pts += [{"T": mid, "d": 1, "epsilon": e, "R": 0.05, "tree_bound": "lipschitz+H|C|"}
            for e in ((4.0,) if _coarse(ctx) else (0.3, 2.0, 4.0))]
    pts.append({"T": mid, "d": 2, "epsilon": 1.0, "R": 0.05, "tree_bound": "lipschitz+H|C|"})
    for p in pts:
        p["L"] = 1.0
        p["H"] = theorem11_regularisation(p["d"], p["T"], p["epsilon"])
        p["H_source"] = "Theorem 11: sqrt(p log^2.5 T / (eps T))"
    return [p for p in pts if p["H"] * p["R"] <= p["L"]]


def audit_pftal_convex(ctx: AuditContext) -> ClaimAudit:
    """Audit ``st13/pftal-convex`` (App. C: Algorithm 1 on ``h_t = f_t + H/2 ||w||^2``)."""
    t0 = time.perf_counter()
    claim = PFTAL_CONVEX_CLAIM
    grid = _pftal_convex_grid(ctx)
    total = len(grid) + 2
    results = []
    for i, prm in enumerate(grid):
        ctx.progress(i, total, f"{claim.id} {prm}")
        T, d, L, H, R, eps = prm["T"], prm["d"], prm["L"], prm["H"], prm["R"], prm["epsilon"]
        dom = Ball(d, R)

        def factory(dom=dom, H=H, L=L, eps=eps, T=T, tb=prm["tree_bound"]) -> PFTALConvex:
            return PFTALConvex(dom, L, H, eps, T, tree_bound=tb)

        pair = pftal_convex_worst_pair(d, T, L)
        mu = factory().tree_bound
        results.append(_pftal_point(ctx, claim, i, len(grid), factory, pair, prm,
                                    max_nodes_per_leaf(T - 1), 2 * min(L, mu)))
    ctx.progress(len(grid), total, f"{claim.id} lemmas")
    d, L, R = 2, 1.0, 0.05  # small H ||C|| / L: where the node step is most stressed
    H = theorem11_regularisation(d, 33, 1.0)
    lemmas: list[LemmaCheck] = []
    figures: dict[str, Any] = {}
    pts = _fixed_points(d, R, 8)
    cls = LossClass("linear", Ball(d, R), lipschitz=L)
    for tb, mu in (("lipschitz+H|C|", L + H * R), ("lipschitz", L)):
        lemma, trace = _node_sensitivity_lemma(
            lambda fs, mu=mu: np.array([clip_l2(f.grad(pts[t]) + H * pts[t], mu)
                                        for t, f in enumerate(fs)]), mu, cls, ctx, claim.id)
        lemmas.append(LemmaCheck(f"{lemma.statement} [tree_bound = {tb}]", lemma.status,
                                 lemma.worst_ratio, lemma.examples, lemma.counterexample))
        figures.setdefault("sensitivity", trace)
    structural = []
    for dd in (1, 2):
        structural += structural_checks(
            "full", dd,
            lambda T, dd=dd: PFTALConvex(Ball(dd, R), L, H, 1.0, T, tree_bound="lipschitz",
                                         record=True),
            max(10, ctx.budget.sensitivity_examples // 2), _engine_seed(ctx, claim.id, 20_000 + dd),
            lambda learner: learner.tree_bound)
    lemmas += _merge_structural(structural)
    lemmas.append(noise_law_check(1, 33, L + H * R, 1.0, min(ctx.budget.samples, 20_000),
                                  ctx.rng(claim.id, "noise", 1)))
    ctx.progress(total, total, f"{claim.id} done")
    findings = _pftal_findings(results, lemmas, convex=True)
    return _finish(claim, ctx, results, lemmas, findings, figures,
                   _recommend("L"), t0)


def _by_reading(results: list[_PointResult]) -> dict[str, list[GridPoint]]:
    out: dict[str, list[GridPoint]] = {}
    for r in results:
        out.setdefault(str(r.point.parameters.get("tree_bound")), []).append(r.point)
    return out


def _undecided(points: Sequence[GridPoint]) -> list[GridPoint]:
    """Points that neither refute the claim nor show it: no counterexample, but an upper bound
    (the accountant) above the claim, so only the test's power stands between them and a verdict."""
    return [p for p in points if p.counterexample() is None
            and (p.epsilon_accountant is None
                 or p.epsilon_accountant > p.claimed_epsilon * (1 + EXACT_TOLERANCE))]


def _group_finding(label: str, points: Sequence[GridPoint]) -> str:
    """How many of ``points`` refute the claim and, for the undecided ones (accountant above the
    claim, no counterexample), why: the audited pair's exact epsilon is within the claim (only a
    worse pair could refute it), or the empirical test lacked power. Neither is evidence of
    privacy, and the text says so."""
    bad = [p for p in points if p.counterexample() is not None]
    text = (f"{label}: {len(bad)} of {len(points)} grid points refute the claim"
            + (f" (e.g. {dict(bad[0].parameters)}: {bad[0].counterexample()})" if bad else "")
            + ".")
    open_pts = _undecided(points)
    pair_limited = [p for p in open_pts if p.epsilon_exact is not None]
    weak = [p for p in open_pts if p.epsilon_exact is None]
    if weak:
        best = max(weak, key=lambda p: (p.epsilon_lower_bound or 0.0) / p.claimed_epsilon)
        detail = (f"largest empirical lower bound {_fmt(best.epsilon_lower_bound)} against the "
                  f"claimed {best.claimed_epsilon:g}, accountant {_fmt(best.epsilon_accountant)}, "
                  f"at {dict(best.parameters)}")
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
        text += (f" {len(pair_limited)} point(s) are undecided, NOT shown private: the audited "
                 "pair's exact epsilon is within the claim there but the accountant (worst case "
                 "over the class) exceeds it (e.g. exact "
                 f"{_fmt(pair_limited[0].epsilon_exact)}, accountant "
                 f"{_fmt(pair_limited[0].epsilon_accountant)} at "
                 f"{dict(pair_limited[0].parameters)}).")
    if not bad and not open_pts:
        text += " Every point's accountant is within the claim."
    return text


def _skipped_finding(skipped: Sequence[tuple[dict[str, Any], str]]) -> list[str]:
    return [f"Skipped grid point {prm} (not audited, no share of alpha): {why}."
            for prm, why in skipped]


def _pftal_findings(results: list[_PointResult], lemmas: list[LemmaCheck], convex: bool
                    ) -> list[str]:
    w = _worst(results)
    out = [f"Worst point {dict(w.parameters)}: claimed {w.claimed_epsilon:g}, exact (release, "
           f"worst-case pair) {_fmt(w.epsilon_exact)}, accountant {_fmt(w.epsilon_accountant)}, "
           f"empirical lower bound {_fmt(w.epsilon_lower_bound)}."]
    if convex:
        out.append("The regulariser's gradient H w^_t is the same in both neighbouring runs given "
                   "the past, so a replaced f_t moves each node by up to 2 L under either reading "
                   "of the tree bound; reading 'lipschitz+H|C|' (mu = L + H ||C||) adds noise "
                   "L + H||C|| and holds when 2 L (floor(log2(T-1)) + 1) <= (L + H ||C||) "
                   "(ceil(log2 T) + 1), i.e. only for large H ||C|| / L; reading 'lipschitz' "
                   "(mu = L) behaves like Algorithm 1.")
    else:
        out.append("Algorithm 1 passes L2-bound L, but replacing f_t changes grad f_t(w^_t) by up "
                   "to 2 (L - H ||C||) at the centre of a ball (2 L on a linear-plus-quadratic "
                   "family as H -> 0), so each node is up to (2 eps / (ceil(log2 T) + 1))-DP, not "
                   "eps / (ceil(log2 T) + 1) as App. B.1 assumes; with floor(log2(T-1)) released "
                   "nodes containing round 2 the released points are exactly "
                   "2 (1 - H R / L) eps floor(log2(T-1)) / (ceil(log2 T) + 1)-DP on the "
                   "constructed pair.")
    for reading, pts in sorted(_by_reading(results).items()):
        out.append(_group_finding(f"tree_bound reading '{reading}'", pts))
    sens = [lem for lem in lemmas if lem.statement.startswith(NODE_RATIO_LEMMA.statement)]
    for lem in sens:
        out.append(f"Per-node sensitivity step (Hypothesis): {lem.status}, worst observed/claimed "
                   f"node shift {_fmt(lem.worst_ratio)} over {lem.examples} examples.")
    if any(r.point.parameters.get("d", 1) > 1 for r in results):
        out.append("Grid points with " + _D_GT_1_NOTE + ".")
    out.append(_MIRONOV)
    return out


# ------------------------------------------------------------------------------------------------
# st13/bandit-ftal and st13/bandit-ftal-convex
# ------------------------------------------------------------------------------------------------


def _bandit_grid(ctx: AuditContext, convex: bool
                 ) -> tuple[list[dict[str, Any]], list[tuple[dict[str, Any], str]]]:
    """The audited bandit grid points and the skipped ones, each with the reason it was skipped."""
    # T = 17 is in the coarse grid too: Theorem 17's T = 9 is skipped in d = 1 (beta = 0.577 >=
    # (1 - xi) r), and T = 17 is the most powerful short horizon of both claims
    Ts = _horizons(ctx, (9, 17, 33, 64), (9, 17, 33, 65, 129, 256))
    mid = 33 if 33 in Ts else max(Ts)
    base = {"d": 1, "B": 1.0, "R": 1.0, "adversary": "oblivious"}
    pts = [{**base, "T": T, "epsilon": 1.0} for T in Ts]
    pts += [{**base, "T": mid, "epsilon": e} for e in ((0.3, 4.0) if _coarse(ctx) else
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
        pts += [{"d": 1, "B": 1.0, "R": 1.0, "T": T, "epsilon": 1.0, "tree_bound": "regularised"}
                for T in _regularised_horizons(ctx)]
    else:
        pts.append({**base, "T": mid, "epsilon": 1.0, "H": 1.0})
        for p in pts:
            p.setdefault("H", 0.04)
    kept: list[dict[str, Any]] = []
    skipped: list[tuple[dict[str, Any], str]] = []
    for p in pts:
        why = _bandit_point_unusable(p, convex)
        if why is None:
            kept.append(p)
        else:
            skipped.append((p, why))
    return kept, skipped


def _regularised_horizons(ctx: AuditContext) -> list[int]:
    """Horizons ``2^k + 1`` (``k >= 5``) up to the budget's ``max_T`` (at least ``T = 33``): at
    ``T = 2^k + 1`` the release contains ``k + 1`` of the ``k + 2`` printed levels, the most a
    horizon of that size allows."""
    Ts = [2 ** k + 1 for k in range(5, 31) if 2 ** k + 1 <= ctx.budget.max_T]
    return Ts or [33]


#: Samples per input for the ``"regularised"`` reading of ``st13/bandit-ftal-convex`` (capped at
#: ten times the budget's): its tree-level epsilon exceeds the claim by a smaller factor than the
#: printed reading's, and the budget's samples alone leave it undecided.
REGULARISED_SAMPLES = 400_000


def regularised_samples(budget_samples: int) -> int:
    """Samples per input used for the ``"regularised"`` reading: ``max(n, min(400000, 10 n))`` for
    a budget of ``n`` samples (quick 200000, standard 400000, thorough 2000000)."""
    n = check_int(budget_samples, "budget_samples", minimum=1)
    return max(n, min(REGULARISED_SAMPLES, 10 * n))


def _bandit_point_unusable(prm: dict[str, Any], convex: bool) -> str | None:
    """Why a bandit grid point cannot be audited (``None`` if it can): Theorem 6 / 17's
    ``beta >= r`` (``(1 - xi) C`` is empty) or ``beta >= (1 - xi) r`` (no power)."""
    try:
        learner = _bandit_learner(prm, convex)
    except ValueError as err:
        return f"schedule undefined: {err}"
    if not bandit_side_is_revealed(learner):
        beta, xi, r = learner.sampling_radius, learner.shrink, learner.inner_radius
        return (f"beta = {beta:.4g} >= (1 - xi) r = {(1 - xi) * r:.4g}: the secret direction u, "
                "not the centre w_dagger, decides the side of the played point, so the statistic "
                "has no power here")
    return None


def audit_bandit_ftal(ctx: AuditContext) -> ClaimAudit:
    """Audit ``st13/bandit-ftal`` (Algorithm 3, Theorem 5, schedules of Theorem 6)."""
    return _audit_bandit(ctx, convex=False)


def audit_bandit_ftal_convex(ctx: AuditContext) -> ClaimAudit:
    """Audit ``st13/bandit-ftal-convex`` (App. E.3, Theorem 17's schedule)."""
    return _audit_bandit(ctx, convex=True)


def _bandit_learner(prm: dict[str, Any], convex: bool, record: bool = False
                    ) -> PrivateBanditFTAL:
    """The learner of a grid point on ``C = R B^p``, with inner radius ``r = R`` (the default of
    :func:`dpaudit.learners.bandit_ftal.inner_radius`)."""
    d, T, R, B, eps = prm["d"], prm["T"], prm["R"], prm["B"], prm["epsilon"]
    dom = Ball(d, R)
    if convex:
        sched = theorem17_schedule(d, T, R)
        return PrivateBanditFTALConvex(dom, sched.regularisation, B, sched.beta, eps, T,
                                       tree_bound=prm["tree_bound"], record=record)
    sched = theorem6_schedule(d, T, R, prm["adversary"])
    return PrivateBanditFTAL(dom, prm["H"], B, sched.beta, eps, T, record=record)


def _audit_bandit(ctx: AuditContext, convex: bool) -> ClaimAudit:
    t0 = time.perf_counter()
    claim = BANDIT_FTAL_CONVEX_CLAIM if convex else BANDIT_FTAL_CLAIM
    grid, skipped = _bandit_grid(ctx, convex)
    total = len(grid) + 2
    results = []
    for i, prm in enumerate(grid):
        ctx.progress(i, total, f"{claim.id} {prm}")
        learner = _bandit_learner(prm, convex)
        prm = {**prm, "r": learner.inner_radius, "beta": learner.sampling_radius,
               "xi": learner.shrink}
        if convex:
            prm["H"] = learner.regularisation
            pair = bandit_convex_worst_pair(prm["d"], prm["T"], prm["B"], prm["H"], prm["R"])
        else:
            pair = bandit_worst_pair(prm["d"], prm["T"], prm["B"], prm["H"], prm["R"])
        T, d, eps, mu = prm["T"], prm["d"], prm["epsilon"], learner.tree_bound
        scale = st13_node_scale(mu, eps, T)
        count = len(released_nodes(1, T))
        worst_count = max_nodes_per_leaf(T - 1)
        sens = 2 * min(mu, d * prm["B"] / learner.sampling_radius)
        acc = accountant_epsilon(worst_count, sens, scale)
        shift = min(d * pair.node_shift / learner.sampling_radius, 2 * mu)
        tree_level = pair_epsilon(count, shift, scale)
        samples = (regularised_samples(ctx.budget.samples)
                   if prm.get("tree_bound") == "regularised" else ctx.budget.samples)
        res = _run_engine(ctx, claim, i, len(grid),
                          learner_mechanism(lambda prm=prm: _bandit_learner(prm, convex)),
                          pair.stream0, pair.stream1, eps, bandit_node_statistic(learner, pair),
                          samples=samples)
        extra = {"pair": pair.description, "tree_bound_mu": mu, "node_scale": scale,
                 "inner_radius_note": ("C = R B^p and r = R: the theorems' 0 < r < R holds with "
                                       "any outer radius above R, which enters only the regret "
                                       "bounds (Algorithm 3 uses xi = beta / r)"),
                 "released_nodes_containing_round_1": count,
                 "max_released_nodes_per_leaf": worst_count,
                 "tree_level_epsilon_of_pair": tree_level,
                 "tree_level_note": ("exact epsilon of the secret noisy sums v_dagger (and u_t) "
                                     "on this pair; the played points are a randomised "
                                     "post-processing of them, so this is an upper bound for the "
                                     "release, not its exact epsilon"),
                 "accountant_sensitivity": sens, "samples_per_input": samples,
                 "lower_bound_alpha": ctx.alpha / len(grid)}
        if d > 1:
            extra["note"] = _D_GT_1_NOTE
        gp = GridPoint(prm, eps, 0.0, None, acc, res.epsilon_lower_bound, _evidence(res, extra))
        curve = _privacy_curve(eps, res.epsilon_lower_bound, worst_count, sens, scale,
                               count_pair=count, shift_pair=shift, d=d, exact_at_zero=None,
                               release_is_sums=False)
        results.append(_PointResult(gp, res, curve))
    ctx.progress(len(grid), total, f"{claim.id} lemmas")
    lemmas, figures = _bandit_lemmas(ctx, claim, convex)
    ctx.progress(total, total, f"{claim.id} done")
    findings = _bandit_findings(results, lemmas, convex, skipped)
    return _finish(claim, ctx, results, lemmas, findings, figures, _recommend("p B / beta"), t0)


def _bandit_lemmas(ctx: AuditContext, claim: PrivacyClaim, convex: bool
                   ) -> tuple[list[LemmaCheck], dict[str, Any]]:
    d, T, R, B = 2, 33, 1.0, 1.0
    u = _e1(d)
    pts = _fixed_points(d, R, 8)
    lemmas: list[LemmaCheck] = []
    figures: dict[str, Any] = {}
    if convex:
        sched = theorem17_schedule(d, T, R)
        H, beta = sched.regularisation, sched.beta
        readings = (("loss-bound", B), ("regularised", B + 0.5 * H * R * R))
        cls = LossClass("linear", Ball(d, R), lipschitz=B / R)  # |<g, w>| <= B on C
        for name, vb in readings:
            mu = d * vb / beta

            def traj(fs, vb=vb):
                vals = [np.clip(float(f.value(pts[t])) + 0.5 * H * float(pts[t] @ pts[t]), -vb, vb)
                        for t, f in enumerate(fs)]
                return np.array([(d / beta) * v * u for v in vals])

            lemma, trace = _node_sensitivity_lemma(traj, mu, cls, ctx, claim.id)
            lemmas.append(LemmaCheck(f"{lemma.statement} [tree_bound = {name}]", lemma.status,
                                     lemma.worst_ratio, lemma.examples, lemma.counterexample))
            figures.setdefault("sensitivity", trace)
    else:
        H = 0.04
        beta = theorem6_schedule(d, T, R, "oblivious").beta
        shift = 0.25 * H * R * R
        Lg = (B - shift) / R
        cls = LossClass("linear", Ball(d, R), lipschitz=Lg)
        mu = d * B / beta

        def traj(fs):
            # members f(w) = <g, w> + H/2 (|w|^2 - R^2/2), ||g|| <= (B - H R^2/4) / R: H-strongly
            # convex with |f| <= B on C
            vals = [np.clip(float(f.value(pts[t])) + 0.5 * H * float(pts[t] @ pts[t]) - shift,
                            -B, B) for t, f in enumerate(fs)]
            return np.array([(d / beta) * v * u for v in vals])

        lemma, trace = _node_sensitivity_lemma(traj, mu, cls, ctx, claim.id)
        lemmas.append(lemma)
        figures["sensitivity"] = trace
    structural = []
    for dd in (1, 2):
        def make(Tn: int, dd: int = dd) -> PrivateBanditFTAL:
            if convex:
                return PrivateBanditFTALConvex(Ball(dd, R), 0.5, B, 0.25, 1.0, Tn, record=True)
            return PrivateBanditFTAL(Ball(dd, R), 0.5, B, 0.25, 1.0, Tn, record=True)

        structural += structural_checks("bandit", dd, make,
                                        max(10, ctx.budget.sensitivity_examples // 2),
                                        _engine_seed(ctx, claim.id, 20_000 + dd),
                                        lambda learner: learner.tree_bound)
    lemmas += _merge_structural(structural)
    mu1 = _bandit_learner({"d": 1, "T": 33, "R": R, "B": B, "epsilon": 1.0, "H": 0.04,
                           "adversary": "oblivious", "tree_bound": "loss-bound"}, convex).tree_bound
    lemmas.append(noise_law_check(1, 33, mu1, 1.0, min(ctx.budget.samples, 20_000),
                                  ctx.rng(claim.id, "noise", 1)))
    return lemmas, figures


def _bandit_findings(results: list[_PointResult], lemmas: list[LemmaCheck], convex: bool,
                     skipped: Sequence[tuple[dict[str, Any], str]] = ()) -> list[str]:
    w = _worst(results)
    lb = max(results, key=lambda r: (r.point.epsilon_lower_bound or 0) / r.point.claimed_epsilon)
    out = [f"Worst point {dict(w.parameters)}: claimed {w.claimed_epsilon:g}, accountant "
           f"{_fmt(w.epsilon_accountant)}, empirical lower bound {_fmt(w.epsilon_lower_bound)}.",
           "Algorithm 3 passes L2-bound pB/beta, but replacing f_t changes its tree input "
           "(p/beta) f_t(w^_t) u_t by up to 2 pB/beta (values +B vs -B), so each node is up to "
           "(2 eps / (ceil(log2 T) + 1))-DP and the accountant gives "
           "2 eps (floor(log2(T-1)) + 1) / (ceil(log2 T) + 1) for the noisy sums. The played "
           "points add the secret directions u_t, so no closed form exists for the release; the "
           "empirical bounds below are the evidence for the release itself.",
           f"Largest empirical lower bound relative to the claim: "
           f"{_fmt(lb.point.epsilon_lower_bound)} at {dict(lb.point.parameters)} (claimed "
           f"{lb.point.claimed_epsilon:g}); tree-level epsilon of that pair "
           f"{_fmt(lb.point.evidence.get('tree_level_epsilon_of_pair'))}."]
    if convex:
        out.append("Reading 'regularised' of the tree bound (mu = p (B + H R^2/2) / beta, the "
                   "bound on |h_t|) still lets a replaced f_t move each node by 2 pB/beta, so the "
                   "noisy sums are 2B / (B + H R^2/2) (floor(log2(T-1)) + 1) / (ceil(log2 T) + 1) "
                   "eps-DP on the pair (1.418 eps at T = 33 with Theorem 17's H = 1/T^(1/4) and "
                   "B = R = 1), an upper bound for the release; the reading is audited at the "
                   "horizons 2^k + 1 with more samples per input (regularised_samples).")
        by_reading = _by_reading(results)
        for reading in ("loss-bound", "regularised"):
            label = f"tree_bound reading '{reading}'"
            if reading in by_reading:
                out.append(_group_finding(label, by_reading[reading]))
            else:
                out.append(f"{label}: no grid point could be audited at this budget (all "
                           "skipped, see below), so it is undecided, NOT shown to be private.")
    else:
        out.append(_group_finding("Algorithm 3 as printed (mu = p B / beta)",
                                  [r.point for r in results]))
    out += _skipped_finding(skipped)
    sens = [lem for lem in lemmas if lem.statement.startswith(NODE_RATIO_LEMMA.statement)]
    for lem in sens:
        out.append(f"Per-node sensitivity step (Hypothesis): {lem.status}, worst observed/claimed "
                   f"node shift {_fmt(lem.worst_ratio)} over {lem.examples} examples.")
    if any(r.point.parameters.get("d", 1) > 1 for r in results):
        out.append("Grid points with " + _D_GT_1_NOTE + ".")
    out.append(_MIRONOV)
    return out


# ------------------------------------------------------------------------------------------------
# Registration
# ------------------------------------------------------------------------------------------------

register(TREE_AGGREGATION, audit_tree_aggregation, kind="mechanism")
register(PFTAL_CLAIM, audit_pftal)
register(PFTAL_CONVEX_CLAIM, audit_pftal_convex)
register(BANDIT_FTAL_CLAIM, audit_bandit_ftal)
register(BANDIT_FTAL_CONVEX_CLAIM, audit_bandit_ftal_convex)
