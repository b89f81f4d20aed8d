"""Worst-case neighbouring pairs of Smith & Thakurta, NeurIPS 2013, and what consumes them.

The pairs (constructed from the algorithms; see ``README.md`` for why each is the worst case):

* Tree (Alg. 2): ``z_1 = mu e_1`` vs ``z'_1 = -mu e_1``, other leaves 0 (leaf 1 lies in the most
  released nodes, ``floor(log2 T) + 1``).
* PFTAL (Alg. 1), replaced round ``t* = 2``: ``f_1 = f_-``, ``f_2 = f_+`` vs ``f'_2 = f_-``,
  ``f_t = f_0`` for ``t >= 3``, with ``f_+-(w) = +-a <e_1, w> + H/2 ||w||^2``, ``a = L - H R`` and
  ``f_0(w) = H/2 ||w||^2``; PFTAL-convex (App. C): linear ``f_+- = +-L <e_1, w>``, ``f_0 = 0``.
* Bandit (Alg. 3), ``t* = 1``: ``f_1 = B - H R^2/2 + H/2 ||w||^2`` vs ``f'_1 = -B + H/2 ||w||^2``,
  ``f_t = H/2 (||w||^2 - R^2)`` for ``t >= 2``; bandit-convex (App. E.3): constants ``+-B``, then
  ``-H R^2 / 2``.

Also here: the mechanisms handed to :func:`dpaudit.audit` (tree releases, learner trajectories),
the likelihood-ratio-shaped statistics computed from a release, the learner of a bandit grid point
and the condition under which the bandit statistic has power.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from dpaudit._validation import check_finite_array, check_int, check_positive
from dpaudit.learners.bandit_ftal import (
    PrivateBanditFTAL,
    PrivateBanditFTALConvex,
    theorem6_schedule,
    theorem17_schedule,
)
from dpaudit.learners.domains import Ball
from dpaudit.learners.losses import AffineLoss, LinearLoss, Loss
from dpaudit.learners.pftal import PFTAL, L2Regularised, PFTALConvex
from dpaudit.mechanisms.projections import clip_l2
from dpaudit.mechanisms.st13_tree_aggregation import ST13TreeAggregator, st13_node_scale
from dpaudit.mechanisms.tree_aggregation import TreeNode, mirrored_leaf_streams, nodes_containing

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
    "tree_loss",
    "tree_node_statistic",
    "pftal_node_statistic",
    "bandit_node_statistic",
    "bandit_side_is_revealed",
    "bandit_learner",
    "e1",
    "TRAIN_FRACTION",
]

#: Fraction of the samples used to choose the event. The statistics are fixed functions of the
#: release (nothing is fitted), so the training split only ranks thresholds; the worst-case events
#: are rare (probability 2^-k for k nodes), and a larger selection split picks them reliably.
TRAIN_FRACTION = 0.3


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
        """The horizon: the length of each stream."""
        return len(self.stream0)


def released_nodes(position: int, T: int) -> list[TreeNode]:
    """The tree nodes containing leaf ``position`` that reach an FTAL learner's release.

    The nodes of Algorithm 2 that contain leaf ``position`` and reach the *release* of an
    FTAL-type learner of horizon ``T`` (Alg. 1 line 5, Alg. 3 line 7).

    A thin name over :func:`~dpaudit.mechanisms.tree_aggregation.nodes_containing`, kept because
    the learner's semantics differ from the tree's, not because the tree's do: the learner plays
    ``w_{t+1}`` from ``v_t`` for ``t <= T - 1`` only (``v_T`` enters no released point), so the
    nodes are ``nodes_containing(position, T - 1)``, and none for ``position = T`` (where
    ``nodes_containing`` has no horizon to count in). The tree itself releases exactly
    ``nodes_containing(leaf, T)``, its root-as-left-child reading included (checked against
    :attr:`ST13TreeAggregator.released_nodes` in the tests).

    Parameters
    ----------
    position
        The replaced leaf, 1-based, in ``[1, T]``.
    T
        The learner's horizon (>= 1).

    Returns
    -------
    list of TreeNode
        ``nodes_containing(position, T - 1)``; empty for ``position = T``.

    Raises
    ------
    ValueError
        If a parameter is out of its range.
    """
    T = check_int(T, "T", minimum=1)
    position = check_int(position, "position", minimum=1, maximum=T)
    if position > T - 1:
        return []
    return nodes_containing(position, T - 1)


def tree_worst_pair(T: int, d: int, bound: float) -> tuple[np.ndarray, np.ndarray]:
    """The worst-case leaf streams of ST13 Algorithm 2: ``z_1 = mu e_1`` vs ``z'_1 = -mu e_1``.

    Every other leaf is 0.

    Parameters
    ----------
    T
        Horizon (>= 1).
    d
        Dimension (>= 1).
    bound
        The tree's input bound ``mu`` (> 0).

    Returns
    -------
    tuple
        ``mirrored_leaf_streams(1, T, d, mu)``
        (:func:`~dpaudit.mechanisms.tree_aggregation.mirrored_leaf_streams`).

    Raises
    ------
    ValueError
        If a parameter is out of its range.
    """
    T = check_int(T, "T", minimum=1)
    d = check_int(d, "d", minimum=1)
    return mirrored_leaf_streams(1, T, d, check_positive(bound, "bound"))


def e1(d: int) -> np.ndarray:
    """The first unit vector of R^d.

    Parameters
    ----------
    d
        Dimension (>= 1).

    Returns
    -------
    numpy.ndarray
        Shape ``(d,)``.
    """
    e = np.zeros(d)
    e[0] = 1.0
    return e


def pftal_worst_pair(d: int, T: int, lipschitz: float, strong_convexity: float,
                     radius: float) -> WorstPair:
    """The PFTAL (Alg. 1) pair of the module docstring, ``t* = 2``, on the ball of ``radius``.

    Requires ``H R < L`` (otherwise the class of H-strongly convex L-Lipschitz losses on the ball
    has no gradient gap at its centre). ``node_shift = 2 (L - H R)``.

    Parameters
    ----------
    d
        Dimension (>= 1).
    T
        Horizon (>= 3).
    lipschitz
        The class's Lipschitz bound ``L`` (> 0).
    strong_convexity
        The class's strong convexity ``H`` (> 0).
    radius
        Radius ``R`` of the ball (> 0).

    Returns
    -------
    WorstPair
        The two streams, ``t* = 2`` and the node shift.

    Raises
    ------
    ValueError
        If ``H R >= L`` or a parameter is out of its range.
    """
    d = check_int(d, "d", minimum=1)
    T = check_int(T, "T", minimum=3)
    L = check_positive(lipschitz, "lipschitz")
    H = check_positive(strong_convexity, "strong_convexity")
    R = check_positive(radius, "radius")
    a = L - H * R
    if not a > 0:
        raise ValueError(f"the pair needs H R < L, got H R = {H * R:.6g} >= L = {L:.6g}")
    e = e1(d)
    plus = L2Regularised(LinearLoss(a * e), H)
    minus = L2Regularised(LinearLoss(-a * e), H)
    zero = L2Regularised(LinearLoss(np.zeros(d)), H)
    rest = (zero,) * (T - 2)
    return WorstPair((minus, plus) + rest, (minus, minus) + rest, 2, 2.0 * a,
                     f"t*=2: f_1 = f_-, f_2 = f_+ vs f_-, f_t = H/2|w|^2 (t>=3); "
                     f"f_+-(w) = +-{a:.6g} w_1 + {H:.6g}/2 |w|^2 (a = L - H R)")


def pftal_convex_worst_pair(d: int, T: int, lipschitz: float) -> WorstPair:
    """The App. C pair of ST13's convex PFTAL: ``f_+- = +-L <e_1, w>``, ``f_0 = 0``, ``t* = 2``.

    ``node_shift = 2 L`` (the regulariser is common to both streams).

    Parameters
    ----------
    d
        Dimension (>= 1).
    T
        Horizon (>= 3).
    lipschitz
        The class's Lipschitz bound ``L`` (> 0).

    Returns
    -------
    WorstPair
        The two streams, ``t* = 2`` and the node shift.

    Raises
    ------
    ValueError
        If a parameter is out of its range.
    """
    d = check_int(d, "d", minimum=1)
    T = check_int(T, "T", minimum=3)
    L = check_positive(lipschitz, "lipschitz")
    e = e1(d)
    plus, minus, zero = LinearLoss(L * e), LinearLoss(-L * e), LinearLoss(np.zeros(d))
    rest = (zero,) * (T - 2)
    return WorstPair((minus, plus) + rest, (minus, minus) + rest, 2, 2.0 * L,
                     f"t*=2: f_1 = -L w_1, f_2 = +L w_1 vs -L w_1, f_t = 0 (t>=3), L = {L:.6g}")


def bandit_worst_pair(d: int, T: int, loss_bound: float, strong_convexity: float,
                      radius: float) -> WorstPair:
    """The ST13 Algorithm 3 pair (``t* = 1``) of the module docstring.

    ``node_shift`` is in units of ``p / beta``: ``2B - H R^2 / 2`` (the value gap, the same at
    every point).

    Parameters
    ----------
    d
        Dimension (>= 1).
    T
        Horizon (>= 2).
    loss_bound
        The bound ``B`` on the losses' values (> 0).
    strong_convexity
        The losses' strong convexity ``H`` (> 0).
    radius
        Radius ``R`` of the ball (> 0).

    Returns
    -------
    WorstPair
        The two streams, ``t* = 1`` and the node shift.

    Raises
    ------
    ValueError
        If ``H R^2 / 2 > 2 B`` or a parameter is out of its range.
    """
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
    """The App. E.3 pair of ST13's convex bandit learner (``t* = 1``): constants ``+B`` vs ``-B``.

    Every later round is ``-H R^2 / 2`` (so that ``h_t = f_t + H/2 |w|^2`` is near zero at the
    points played); ``node_shift = 2B`` in units of ``p / beta`` (before clipping).

    Parameters
    ----------
    d
        Dimension (>= 1).
    T
        Horizon (>= 2).
    loss_bound
        The bound ``B`` on the losses' values (> 0).
    regularisation
        The learner's regularisation ``H`` (> 0).
    radius
        Radius ``R`` of the ball (> 0).

    Returns
    -------
    WorstPair
        The two streams, ``t* = 1`` and the node shift.

    Raises
    ------
    ValueError
        If a parameter is out of its range.
    """
    d = check_int(d, "d", minimum=1)
    T = check_int(T, "T", minimum=2)
    B = check_positive(loss_bound, "loss_bound")
    H = check_positive(regularisation, "regularisation")
    R = check_positive(radius, "radius")
    zero_g = np.zeros(d)
    rest = (AffineLoss(zero_g, -H * R * R / 2),) * (T - 1)
    return WorstPair((AffineLoss(zero_g, B),) + rest, (AffineLoss(zero_g, -B),) + rest, 1, 2 * B,
                     f"t*=1: f_1 = +B vs -B (constants), f_t = -H R^2/2 (t>=2); B = {B:.6g}")


# Mechanisms (for dpaudit.audit) and statistics


def tree_mechanism(T: int, d: int, bound: float, epsilon: float
                   ) -> Callable[[np.ndarray, int, np.random.Generator], np.ndarray]:
    """ST13 Algorithm 2 as a mechanism for :func:`dpaudit.audit`: all ``T`` released sums.

    Parameters
    ----------
    T
        Horizon (>= 1).
    d
        Dimension (>= 1).
    bound
        The tree's input bound.
    epsilon
        The tree's epsilon.

    Returns
    -------
    callable
        ``mechanism(z, n, rng)``: on leaves ``z`` of shape ``(T, d)``, ``n`` runs of shape
        ``(n, T, d)``.

    Raises
    ------
    ValueError
        If a parameter is out of its range.
    """
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
    """A learner as a mechanism for :func:`dpaudit.audit`: its released trajectory on a stream.

    Parameters
    ----------
    factory
        Builds a fresh learner (one per call of the mechanism).

    Returns
    -------
    callable
        ``mechanism(stream, n, rng)``: the trajectory, shape ``(n, T, d)``.
    """

    def mechanism(stream: Sequence[Loss], n: int, rng: np.random.Generator) -> np.ndarray:
        return factory().run(stream, n, rng)

    return mechanism


def _l2_laplace_llr(y: np.ndarray, c0: np.ndarray, c1: np.ndarray, scale: float) -> np.ndarray:
    """Log likelihood ratio of l2-Laplace(c0, s) to l2-Laplace(c1, s) at ``y`` (last axis)."""
    return (np.linalg.norm(y - c1, axis=-1) - np.linalg.norm(y - c0, axis=-1)) / scale


def tree_node_statistic(T: int, z0: np.ndarray, z1: np.ndarray, scale: float
                        ) -> Callable[[np.ndarray], np.ndarray]:
    """Exact node likelihood-ratio score of an ST13 tree release whose leaves differ at leaf 1.

    The sum over the released nodes containing leaf 1 of the l2-Laplace log likelihood ratio of
    (node value minus the common leaves). Large scores favour ``z0``.

    Parameters
    ----------
    T
        Horizon.
    z0, z1
        The two ``(T, d)`` leaf streams (equal but for leaf 1).
    scale
        The nodes' l2-Laplace scale.

    Returns
    -------
    callable
        ``statistic(v)``: on a release ``(n, T, d)``, one score per run (rounded to 1e-10).
    """
    nodes = nodes_containing(1, T)

    def statistic(v: np.ndarray) -> np.ndarray:
        score = np.zeros(v.shape[0])
        for node in nodes:
            value = v[:, node.last - 1] - (v[:, node.first - 2] if node.first > 1 else 0.0)
            common = z0[node.first:node.last].sum(axis=0)  # leaves 2..last (identical in z1)
            score += _l2_laplace_llr(value - common, z0[0], z1[0], scale)
        return np.round(score, 10)

    return statistic


def tree_loss(learner: PFTAL, loss: Loss) -> Loss:
    """The loss whose gradient ``learner`` passes to the tree.

    ``h_t = f_t + H/2 ||w||^2`` for App. C's :class:`PFTALConvex`, ``f_t`` for Algorithm 1.

    Parameters
    ----------
    learner
        A PFTAL learner.
    loss
        The round's loss ``f_t``.

    Returns
    -------
    Loss
        ``h_t`` or ``f_t``.
    """
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

    Parameters
    ----------
    learner
        The PFTAL learner whose release is scored.
    pair
        The audited pair.

    Returns
    -------
    callable
        ``statistic(X)``: on a release ``(n, T, d)``, one score per run (rounded to 1e-10).
    """
    T, p = pair.T, pair.position
    H, mu = learner.strong_convexity, learner.tree_bound
    scale = st13_node_scale(mu, learner.epsilon, learner.horizon)
    nodes = released_nodes(p, T)
    h0 = [tree_loss(learner, f) for f in pair.stream0]
    hF, hG = h0[p - 1], tree_loss(learner, pair.stream1[p - 1])
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

    Parameters
    ----------
    learner
        The private bandit learner whose release is scored.
    pair
        The audited pair (it must differ at round 1).

    Returns
    -------
    callable
        ``statistic(X)``: on a release ``(n, T, d)``, the number of agreeing nodes per run.

    Raises
    ------
    ValueError
        If the pair does not differ at round 1.
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
    """Whether ``beta < (1 - xi) r``, the condition :func:`bandit_node_statistic` needs.

    A secret centre on the boundary of ``(1 - xi) C`` (which contains the ball of radius
    ``(1 - xi) r``) then decides the side of the played point ``w_dagger + beta u`` along any
    direction.

    Parameters
    ----------
    learner
        A private bandit learner.

    Returns
    -------
    bool
        ``learner.sampling_radius < (1 - learner.shrink) * learner.inner_radius``.

    Raises
    ------
    TypeError
        If ``learner`` is not a :class:`PrivateBanditFTAL`.
    """
    if not isinstance(learner, PrivateBanditFTAL):
        raise TypeError(f"learner must be a PrivateBanditFTAL, got {type(learner).__name__}")
    return learner.sampling_radius < (1.0 - learner.shrink) * learner.inner_radius


def bandit_learner(prm: Mapping[str, Any], convex: bool, record: bool = False
                   ) -> PrivateBanditFTAL:
    """The learner of an ST13 bandit grid point on ``C = R B^p`` with inner radius ``r = R``.

    ``r = R`` is the default of :func:`dpaudit.learners.bandit_ftal.inner_radius`: Theorem 17's
    schedule for the convex learner (App. E.3), Theorem 6's for ``prm["adversary"]`` otherwise.

    Parameters
    ----------
    prm
        The grid point: ``d``, ``T``, ``R``, ``B``, ``epsilon``, and ``tree_bound`` (convex) or
        ``H`` and ``adversary`` (strongly convex).
    convex
        Build the convex learner (App. E.3) rather than Algorithm 3's.
    record
        Record the tree's inputs and noise (for the structural checks).

    Returns
    -------
    PrivateBanditFTAL
        The learner (a :class:`PrivateBanditFTALConvex` when ``convex``).

    Raises
    ------
    ValueError
        Where the schedule is undefined (``beta >= r``).
    """
    d, T, R, B, eps = prm["d"], prm["T"], prm["R"], prm["B"], prm["epsilon"]
    dom = Ball(d, R)
    if convex:
        sched = theorem17_schedule(d, T, R)
        return PrivateBanditFTALConvex(dom, sched.regularisation, B, sched.beta, eps, T,
                                       tree_bound=prm["tree_bound"], record=record)
    sched = theorem6_schedule(d, T, R, prm["adversary"])
    return PrivateBanditFTAL(dom, prm["H"], B, sched.beta, eps, T, record=record)
