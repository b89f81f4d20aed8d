"""Exact epsilon of the releases of Smith & Thakurta, NeurIPS 2013, on the worst-case pairs.

Every claim is pure epsilon-DP. Replacing one leaf of Algorithm 2 moves each released node that
contains it by a vector ``Delta``; node noise is l2-Laplace of scale ``s``, whose privacy loss has
essential supremum exactly ``||Delta||_2 / s`` in every dimension, and the released nodes containing
a leaf are independent, so the noisy sums are exactly ``sum_nodes ||Delta|| / s``-DP on that pair
(App. B.1's adaptive-composition argument gives the same per-node shift when later inputs depend on
earlier outputs): :func:`pair_epsilon`. For the tree this is the exact epsilon of the release; for
PFTAL the pairs of :mod:`.pairs` make the projection unable to hide the worst case
(:func:`pftal_pair_exact_epsilon`, exact at ``delta = 0``). :func:`accountant_epsilon` is the
dp-accounting value under worst-case sensitivity (an upper bound over the class), and
:func:`privacy_curve` tabulates both over delta for the figures.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpaudit._validation import check_int, check_positive
from dpaudit.claims.curve_deltas import PURE_AND_EVEN_DECADES
from dpaudit.formal.accounting import laplace_epsilon, tree_leaf_epsilon
from dpaudit.learners.domains import Domain
from dpaudit.learners.pftal import PFTAL
from dpaudit.mechanisms.projections import clip_l2
from dpaudit.mechanisms.st13_tree_aggregation import st13_node_scale
from dpaudit.papers.st13.pairs import WorstPair, e1, released_nodes, tree_loss

__all__ = ["pair_epsilon", "pftal_pair_exact_epsilon", "domain_probe", "accountant_epsilon",
           "privacy_curve", "CURVE_DELTAS", "NORM_RTOL"]

#: Relative tolerance for norm bounds checked in floating point.
NORM_RTOL = 1e-12


def pair_epsilon(count: int, shift: float, scale: float) -> float:
    """Exact pure epsilon of ``count`` independent l2-Laplace nodes each shifted by ``shift``.

    ``count * shift / scale``: the essential supremum of the privacy loss (Smith & Thakurta,
    NeurIPS 2013, Algorithm 2's l2-Laplace node noise).

    Parameters
    ----------
    count
        Number of released nodes containing the replaced leaf (>= 0).
    shift
        l2 shift of every such node.
    scale
        The nodes' l2-Laplace scale (> 0).

    Returns
    -------
    float
        ``count * shift / scale``.

    Raises
    ------
    ValueError
        If ``count < 0`` or ``scale <= 0``.
    """
    count = check_int(count, "count", minimum=0)
    return count * float(shift) / check_positive(scale, "scale")


def pftal_pair_exact_epsilon(learner: PFTAL, pair: WorstPair) -> float:
    """Exact pure epsilon of ST13 PFTAL's *released points* on a worst-case pair.

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

    Parameters
    ----------
    learner
        The PFTAL learner (Algorithm 1) whose release is audited.
    pair
        A pair from :func:`~.pairs.pftal_worst_pair` or :func:`~.pairs.pftal_convex_worst_pair`.

    Returns
    -------
    float
        ``count * min(Delta(0), 2 mu) / s``.

    Raises
    ------
    ValueError
        If the pair does not satisfy the construction's conditions listed above.
    """
    mu = learner.tree_bound
    H, R = learner.strong_convexity, learner.domain.radius
    if pair.position != 2 or np.any(learner.initial_point != 0.0):
        raise ValueError("the exactness argument is for pairs replacing round 2, with w^_1 = 0")
    if H * R > mu * (1 + NORM_RTOL):
        raise ValueError("the pair's exactness argument needs H R <= mu (unclipped common terms)")
    probe = domain_probe(learner.domain)
    for t, (f0, f1) in enumerate(zip(pair.stream0, pair.stream1), start=1):
        if t == pair.position:
            continue
        g0 = tree_loss(learner, f0).grad(probe)
        if not np.allclose(g0, tree_loss(learner, f1).grad(probe), atol=1e-12):
            raise ValueError(f"round {t} differs between the streams (only round 2 may differ)")
        if t >= 3 and not np.allclose(g0, H * probe, atol=1e-12):
            raise ValueError(f"the pair's common round {t} must have gradient H w (f_0)")
    origin = np.zeros((1, learner.dim))
    h1 = tree_loss(learner, pair.stream0[0])
    hF = tree_loss(learner, pair.stream0[1])
    hG = tree_loss(learner, pair.stream1[1])

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
    """A few points of ``domain`` (centre, +-radius along e_1), projected onto it.

    Parameters
    ----------
    domain
        The learner's domain.

    Returns
    -------
    numpy.ndarray
        Shape ``(3, d)``.
    """
    e = e1(domain.dim) * domain.radius
    return domain.project(np.stack([np.zeros(domain.dim), e, -e]))


def accountant_epsilon(count: int, sensitivity: float, scale: float, delta: float = 0.0) -> float:
    """The accountant's epsilon(delta) for one leaf of ST13's l2-Laplace tree.

    ``count`` nodes, each of replace-one sensitivity ``sensitivity``
    (:func:`dpaudit.formal.accounting.tree_leaf_epsilon`); 0 when no released node contains a leaf.

    Parameters
    ----------
    count
        Number of released nodes containing a leaf.
    sensitivity
        Replace-one l2 sensitivity of every node.
    scale
        The nodes' l2-Laplace scale.
    delta
        The delta of the epsilon.

    Returns
    -------
    float
        The composed epsilon (an upper bound over the class).
    """
    if count == 0:
        return 0.0
    return tree_leaf_epsilon("l2-laplace", scale, sensitivity, count, delta)


#: The deltas at which the privacy curves of the figures are tabulated.
CURVE_DELTAS = PURE_AND_EVEN_DECADES


def privacy_curve(count_worst: int, sens_worst: float, scale: float, *, count_pair: int,
                  shift_pair: float, d: int, exact_at_zero: float | None,
                  release_is_sums: bool) -> dict[str, Any]:
    """The privacy-curve series of one ST13 grid point, epsilon at every curve delta.

    The series of ``figures["privacy_curve"]`` of one grid point (conventions of
    :mod:`dpaudit.claims.record`; the claim driver adds the claimed point and the lower
    bound), epsilon at each delta of :data:`CURVE_DELTAS`.

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

    Parameters
    ----------
    count_worst, sens_worst
        Nodes per leaf and their sensitivity in the worst case over the class.
    scale
        The nodes' l2-Laplace scale.
    count_pair, shift_pair
        Nodes containing the replaced leaf and their shift on the audited pair.
    d
        Dimension.
    exact_at_zero
        The release's exact pure epsilon on the pair, or ``None`` if unknown.
    release_is_sums
        Whether the release is the noisy sums themselves (the tree).

    Returns
    -------
    dict
        ``"deltas"``, the series above and their ``"notes"``.
    """
    deltas = list(CURVE_DELTAS)
    acc = [accountant_epsilon(count_worst, sens_worst, scale, dl) for dl in deltas]
    out: dict[str, Any] = {"deltas": deltas, "epsilon_accountant": acc}
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
