"""The JKT12 grids and point plans: the audited points of each claim and the model of one point.

A :class:`Model` (Gaussian-release claims: POCP, PIGD, PGIGA, POL, the doubling variant) holds the
noisy rounds, their noise scales, the noise-free first coordinates on both streams of the pair of
:mod:`dpaudit.papers.jkt12.pairs`, the box C and the worst-case accountant shift; a
:class:`TreeModel` (PrivateSum, PQFTL) the tree's exact and accountant shifts. The grids list the
audited points of each claim (``"coarse"``: extremes and the paper's settings; ``"full"``: a
product grid). :mod:`dpaudit.papers.jkt12.audit` holds the declarations, which turn each model
into the driver's ``PointPlan`` (as afkt23's and pfcoco's ``plans``; the module list:
docs/paper-readings.md#jkt12-modules).
"""

from __future__ import annotations


import math
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from dpaudit.formal.accounting import gaussian_epsilon, heterogeneous_gaussian_mu
from dpaudit.claims.evidence import GridPoint, LemmaCheck, PointEvidence
from dpaudit.papers.jkt12.exact import release_epsilon
from dpaudit.claims.context import AuditContext
from dpaudit.learners.domains import Box
from dpaudit.learners.giga import GIGA, giga_burn_in
from dpaudit.learners.igd import IGD
from dpaudit.papers.jkt12.claims import claimed_privacy
from dpaudit.learners.losses import SquaredLoss
from dpaudit.learners.pocp import (PGIGA, PIGD, POCP, Version, pgiga_beta, pigd_beta, pocp_beta,
                                   pocp_c)
from dpaudit.learners.pocp_doubling import POCPDoubling, doubling_beta
from dpaudit.learners.pol import POL, pol_alpha, pol_beta, pol_printed_sensitivity
from dpaudit.learners.pqftl import PQFTL
from dpaudit.mechanisms.private_sum import PrivateSum, private_sum_sigma, released_node_count, tree_depth
from dpaudit.learners.qftl import QFTL
from dpaudit.papers.jkt12.exact import PLD_REL_ERROR, REFINED_CLIPPED_STEPS, lr_weights_tree, pgiga_accountant, pigd_accountant, tree_mu, pqftl_state_mu, privatesum_step_mu
from dpaudit.papers.jkt12.pairs import NEAR_LINEAR_NU, QFTL_ALPHA, QFTL_R, SIMULATED_STEPS, best_igd_round, candidate_rounds, clip_aware_score, first_coordinates, igd_design, stream_pair, pol_bounds, qftl_means, qftl_pair, search_positions, filler_loss, near_linear_loss, pocp_qftl_lambda, pol_loss_membership, pol_near_linear_loss


#: Forest covertype (COLT App. G.2 / arXiv Sec. 5.2): 581,012 points, 10% held out for testing.
PAPER_PIGD_T = 522_911

#: Synthetic online linear regression (COLT App. G.1 / arXiv Sec. 5.1): T = 100,000, d = 10.
PAPER_PQFTL_T = 100_000

#: alpha of PQFTL's empirical pairs (grid points of their own): t alpha I dominates the noise of
#: V^_t, so the released x^_{t+1} ~ u^_t / (t alpha) is nearly an invertible linear map of the
#: u-tree's output.
PQFTL_EMPIRICAL_ALPHA = 1e9


def _json(x: float | None) -> float | str | None:
    if x is None:
        return None
    return float(x) if math.isfinite(x) else ("inf" if x > 0 else "-inf")


@dataclass
class Model:
    """Everything the four kinds of evidence need at one grid point of a Gaussian-release claim.

    ``steps``: the rounds t whose release x^_{t+1} (row t of the released trajectory) is noisy;
    ``sigmas``: their noise stds; ``m0``/``m1``: first coordinate of the noise-free x_{t+1} on the
    two streams; ``bound``: the worst-case sensitivity of those steps (for the accountant; only
    ``accountant_mu`` is used when given); ``half_width``: D of the box C (None: C = R^d).
    """

    params: dict[str, Any]
    claimed: tuple[float, float]
    steps: np.ndarray
    sigmas: np.ndarray
    m0: np.ndarray
    m1: np.ndarray
    half_width: float | None
    accountant_mu: float
    accountant_note: str
    factory: Callable[[], Any] | None = None
    streams: tuple[Any, Any] | None = None
    noise_name: str = "beta"
    noise_value: float = math.nan
    evidence: dict[str, Any] = field(default_factory=dict)
    output: str = "trajectory"  # or "point" (POL: one released point)
    search_pairs: list[tuple[Any, Any]] | None = None
    uniform_factory: Callable[[], Any] | None = None  # the learner with x1 = "uniform"


@dataclass(frozen=True)
class _TreeTest:
    """The empirical test of a tree claim's point: mechanism, pair, likelihood-ratio statistic."""

    mechanism: Any
    data0: Any
    data1: Any
    statistic: Callable[[np.ndarray], np.ndarray]


@dataclass
class TreeModel:
    """Everything the evidence needs at one grid point of a tree claim (PrivateSum, PQFTL).

    ``mu``: the exact Gaussian shift of the release (0 where there is no exact value);
    ``accountant_mu``: the worst-case shift; ``empirical``: the point's empirical test, if any.
    """

    params: dict[str, Any]
    claimed: tuple[float, float]
    mu: float
    accountant_mu: float
    evidence: dict[str, Any]
    empirical: "_TreeTest | None"
    #: An upper bound on the epsilon of the empirical pair's release (consistency check).
    pair_upper: float | None = None


def tree_point(m: TreeModel, exact_available: bool) -> GridPoint:
    """The grid point of a tree model: accountant epsilon and, where available, the exact one.

    Both are Gaussian epsilons at the claimed delta (0 for a non-positive ``mu``); the exact value
    is recorded as a degenerate bracket (``lower = upper``) under ``exact_release``.

    Parameters
    ----------
    m
        The point's model.
    exact_available
        Whether ``m.mu`` is the release's exact shift (PrivateSum) or not (PQFTL, whose release
        has no exact value: the point then has none).

    Returns
    -------
    GridPoint
        The point with its accountant (``mu``, ``epsilon``) and exact-release evidence.
    """
    eps_c, dl_c = m.claimed
    acc = gaussian_epsilon(m.accountant_mu, dl_c) if m.accountant_mu > 0 else 0.0
    ev = PointEvidence.of(m.evidence).with_details(
        accountant={"mu": m.accountant_mu, "epsilon": acc})
    if not exact_available:
        return GridPoint(m.params, eps_c, dl_c, None, acc, None, ev)
    exact = gaussian_epsilon(m.mu, dl_c) if m.mu > 0 else 0.0
    ev = ev.with_details(exact_release={"lower": exact, "upper": exact, "mu_unclipped": m.mu})
    return GridPoint(m.params, eps_c, dl_c, epsilon_exact=exact, epsilon_accountant=acc,
                     evidence=ev)


#: PLD grid (exact.release_epsilon's rel_error) of a grid point's certified value where it does not
#: decide anything (the unprojected pair and the accountant are below refine_above x the claim):
#: 100 times coarser than exact.PLD_REL_ERROR (the composed pieces' rounding costs at most 1% of
#: the epsilon scale), still rigorous, several times cheaper; decisive points, the regime's
#: bisection points and the figures' worst point use the fine grid.
GRID_PLD_REL_ERROR = 1e-2


def exact_point(model: Model, max_clipped: int, rel_error: float = PLD_REL_ERROR
                 ) -> tuple[GridPoint, dict[str, Any]]:
    """The exact (or certified) and accountant evidence of a Gaussian-release model.

    The exact value is the lower end of :func:`~dpaudit.papers.jkt12.exact.release_epsilon`'s
    bracket at the claimed delta (exact when C = R^d, a certified lower bound when the noisy points
    are projected onto the box); the accountant is the Gaussian epsilon of ``accountant_mu``
    (0 for a non-positive ``mu``).

    Parameters
    ----------
    model
        The point's model.
    max_clipped
        Largest number of clipped steps composed exactly in the lower bound.
    rel_error
        The PLD grid of :func:`~dpaudit.papers.jkt12.exact.release_epsilon`.

    Returns
    -------
    tuple of (GridPoint, dict)
        The point (its evidence: the bracket with ``max_clipped_steps`` and ``pld_rel_error``,
        the accountant, the noise scale, the number of noisy steps, the box half-width), and
        ``{"exact": bracket}``.
    """
    eps_c, delta_c = model.claimed
    ex = release_epsilon(model.m0, model.m1, model.sigmas, delta_c, model.half_width,
                         max_clipped_steps=max_clipped, rel_error=rel_error)
    eps_acc = gaussian_epsilon(model.accountant_mu, delta_c) if model.accountant_mu > 0 else 0.0
    evidence = PointEvidence.of(model.evidence).merged({
        "exact_release": dict(ex.to_dict(), max_clipped_steps=max_clipped,
                              pld_rel_error=rel_error),
        "accountant": {"mu": model.accountant_mu, "epsilon": eps_acc,
                       "sensitivity": model.accountant_note},
        model.noise_name: model.noise_value,
        "noisy_steps": int(len(model.steps)),
        "box_half_width": model.half_width,
    })
    point = GridPoint(model.params, eps_c, delta_c, epsilon_exact=ex.lower,
                      epsilon_accountant=eps_acc, evidence=evidence)
    return point, {"exact": ex}


@dataclass
class Family:
    """How to audit one claim: its grid, point models, lemma checks and findings.

    ``exponent``: the printed c at a point (POCP, PIGD, PGIGA), which turns on the proof-regime
    analysis of :func:`~dpaudit.papers.jkt12.regime.regime_analysis`; ``c_depends_on_epsilon``:
    COLT's c (App. A.2), whose regime c >= 0 is eps <= (1/2) ln(2/delta); ``step_check``: the exact
    per-step privacy check of
    Lemma 1 over a list of audited points (appended to the lemmas, and recomputed on the points
    of the proof's regime); ``uniform_start``: also run one empirical test with x1 = "uniform"
    (``Model.uniform_factory``) at the point of the first empirical test.
    """

    claim_id: str
    grid: Callable[[str], list[dict[str, Any]]]
    model: Callable[[dict[str, Any], int], Model | None]
    lemmas: Callable[[AuditContext], tuple[list[LemmaCheck], Any, list[str]]]
    max_clipped: Callable[[str], int] = lambda grid: 256
    skip_reason: str = "the claim is vacuous there"
    exponent: Callable[[dict[str, Any]], float] | None = None
    c_depends_on_epsilon: bool = False
    step_check: Callable[[Sequence[dict[str, Any]]], LemmaCheck] | None = None
    uniform_start: bool = False
    #: Also compose every clipped step in the lower bound where the upper evidence (unclipped
    #: pair or accountant) exceeds this fraction of the claim, not only above it (PIGD: 0.9, so
    #: that a point decided by a narrow accountant margin reports its tight bracket).
    refine_above: float = 1.0
    #: The worst-case accountant alone at a parameter point: (c, accountant mu, claimed
    #: (eps, delta)), without building the pair (the regime bisection evaluates it often).
    accountant: Callable[[dict[str, Any]], tuple[float, float, tuple[float, float]]] | None = None


def audit_point(fam: Family, params: dict[str, Any], max_T: int, max_clipped: int
                 ) -> tuple[Model | None, GridPoint | None]:
    """The model and the exact/accountant evidence at one parameter point (no empirical test).

    The evidence is computed on the coarse PLD grid :data:`GRID_PLD_REL_ERROR`; where the point
    is projected onto a box and its unprojected upper end or accountant exceeds
    ``fam.refine_above`` times the claim, it is recomputed on the fine grid
    (:data:`~dpaudit.papers.jkt12.exact.PLD_REL_ERROR`), with every clipped step up to
    :data:`~dpaudit.papers.jkt12.exact.REFINED_CLIPPED_STEPS` composed if the first pass dropped
    some.

    Parameters
    ----------
    fam
        The claim family.
    params
        The parameter point.
    max_T
        Largest horizon the budget tests empirically (the model builds its streams only up to it).
    max_clipped
        Largest number of clipped steps composed exactly in the first pass.

    Returns
    -------
    tuple of (Model or None, GridPoint or None)
        The model and its point; ``(None, None)`` where the family has none.
    """
    model = fam.model(params, max_T)
    if model is None:
        return None, None
    point, _ = exact_point(model, max_clipped, GRID_PLD_REL_ERROR)
    rel = point.evidence["exact_release"]
    if (model.half_width is not None
            and max(rel["upper"], point.epsilon_accountant or 0.0)
            > fam.refine_above * point.claimed_epsilon):
        # A point that decides between "violated" and "inconclusive" (or, below 1, one near the
        # claim): the fine PLD grid, every clipped step (up to REFINED_CLIPPED_STEPS) composed.
        point, _ = exact_point(model, REFINED_CLIPPED_STEPS if rel["dropped_steps"]
                                else max_clipped)
    return model, point


def with_evidence(p: GridPoint, lower_bound: float | None = None, **extra: Any) -> GridPoint:
    """A copy of a grid point with an empirical lower bound and more evidence.

    Parameters
    ----------
    p
        The point.
    lower_bound
        Its empirical lower bound; ``None`` keeps ``p``'s.
    **extra
        Evidence entries merged into ``p``'s
        (:meth:`~dpaudit.claims.evidence.PointEvidence.merged`).

    Returns
    -------
    GridPoint
        The new point; ``p`` is unchanged.
    """
    lb = p.epsilon_lower_bound if lower_bound is None else lower_bound
    return GridPoint(p.parameters, p.claimed_epsilon, p.claimed_delta, p.epsilon_exact,
                     p.epsilon_accountant, lb, p.evidence.merged(extra))


#: The upper end of a stated delta range, audited on the standard grids only: the claims
#: are refuted at conventional delta already, and the quick grid's headline stays there. POCP, PIGD
#: and PGIGA state delta < 1/2 ("2 delta"); the others delta in (0, 1), where a sigma that grows
#: with log(1/delta) shrinks as delta -> 1.
NEAR_HALF_DELTAS = (0.25, 0.49)
NEAR_ONE_DELTAS = (0.5, 0.99)


def pocp_grid(grid: str) -> list[dict[str, Any]]:
    """The audited points of POCP (Theorem 1, both versions): epsilon, delta, T, d.

    Coarse: seven points, epsilon 1e-3 to 1000, one at the paper's T (:data:`PAPER_PQFTL_T`).
    Full: epsilon (powers of ten 1e-3..1000) x delta x T x d, and :data:`NEAR_HALF_DELTAS`.

    Parameters
    ----------
    grid
        ``"coarse"`` (the quick budget) or ``"full"``.

    Returns
    -------
    list of dict
        The parameter points.
    """
    if grid == "coarse":
        return [dict(epsilon=1e-3, delta=1e-5, T=64, d=1),
                dict(epsilon=0.01, delta=1e-5, T=64, d=1),
                dict(epsilon=1.0, delta=1e-5, T=64, d=2), dict(epsilon=1.0, delta=1e-5, T=2, d=1),
                dict(epsilon=1000.0, delta=1e-5, T=64, d=1),
                dict(epsilon=1000.0, delta=0.01, T=1024, d=1),
                dict(epsilon=0.1, delta=0.01, T=PAPER_PQFTL_T, d=1)]
    eps = [1e-3, 1e-2, 0.1, 1.0, 10.0, 100.0, 1000.0]
    return ([dict(epsilon=e, delta=dl, T=T, d=d) for e in eps for dl in (1e-6, 1e-5, 1e-2)
             for T in (2, 16, 64, 1024, PAPER_PQFTL_T) for d in (1, 4)]
            + [dict(epsilon=e, delta=dl, T=T, d=1) for e in (1e-3, 1.0, 1000.0)
               for dl in NEAR_HALF_DELTAS for T in (2, 64, 1024)])


def pocp_model(version: Version) -> Callable[[dict[str, Any], int], Model]:
    """The point model of POCP (Algorithm 1, Theorem 1) run on QFTL, for one version.

    QFTL on C = R^d with the pair of :func:`~dpaudit.papers.jkt12.pairs.qftl_pair`, whose
    ``lambda_A`` (:func:`~dpaudit.papers.jkt12.pairs.pocp_qftl_lambda`) enters the printed beta;
    rounds t = 1..T-1 are released with noise ``beta / t``, and the accountant composes shifts
    ``lambda_A / t`` (assumption (1) with equality). Streams and search pairs only for
    ``T <= max_T``.

    Parameters
    ----------
    version
        ``"colt"`` or ``"arxiv"`` (their exponents c differ).

    Returns
    -------
    Callable
        ``model(params, max_T)``: the :class:`Model` at ``params`` (which gain ``lambda_A`` and
        ``c``).
    """
    def model(p: dict[str, Any], max_T: int) -> Model:
        eps, dl, T, d = p["epsilon"], p["delta"], p["T"], p["d"]
        lam = pocp_qftl_lambda(QFTL_R, QFTL_ALPHA)
        beta = pocp_beta(version, T, lam, eps, dl)
        t = np.arange(1, T, dtype=float)
        m0, m1 = qftl_means(d, T)
        sig = beta / t
        mu_acc = heterogeneous_gaussian_mu(lam / t, sig)
        streams = qftl_pair(d, T) if T <= max_T else None
        positions = search_positions(T)
        search = [qftl_pair(d, T, k) for k in positions] if T <= max_T else None
        return Model(dict(p, lambda_A=lam, c=pocp_c(version, T, eps, dl)),
                      claimed_privacy(f"jkt12-{version}/pocp", eps, dl), t, sig, m0, m1, None,
                      mu_acc, "assumption (1) with equality: lambda_A / t at every t",
                      lambda: POCP(QFTL(d, QFTL_ALPHA), None, T, eps, dl, lam, version,
                                   x1_hat=np.zeros(d)),
                      streams, "beta", beta,
                      {"pair": f"QFTL on C = R^d, f_1 = 1/2(+-R - <R e_1, x>)^2 + alpha/2||x||^2, "
                               f"R = {QFTL_R}, alpha = {QFTL_ALPHA}, fillers alpha/2||x||^2",
                       "search_positions": [k + 1 for k in positions]},
                      search_pairs=search)
    return model


def doubling_grid(grid: str) -> list[dict[str, Any]]:
    """The audited points of the doubling variant (COLT Theorem 13): epsilon, delta, T, d.

    Coarse: six points, epsilon 0.1 to 1000, one at the paper's T (:data:`PAPER_PQFTL_T`).
    Full: epsilon (0.05 to 1000) x delta (1e-6 to 1e-3) x T x d.

    Parameters
    ----------
    grid
        ``"coarse"`` (the quick budget) or ``"full"``.

    Returns
    -------
    list of dict
        The parameter points.
    """
    if grid == "coarse":
        return [dict(epsilon=0.1, delta=1e-5, T=64, d=1), dict(epsilon=1.0, delta=1e-5, T=64, d=2),
                dict(epsilon=1.0, delta=1e-5, T=2, d=1),
                dict(epsilon=1000.0, delta=1e-5, T=64, d=1),
                dict(epsilon=1000.0, delta=0.01, T=1024, d=1),
                dict(epsilon=0.5, delta=1e-6, T=PAPER_PQFTL_T, d=1)]
    return [dict(epsilon=e, delta=dl, T=T, d=d) for e in (0.05, 0.1, 0.5, 1.0, 10.0, 1000.0)
            for dl in (1e-6, 1e-5, 1e-3) for T in (2, 16, 64, 1024, PAPER_PQFTL_T) for d in (1, 4)]


def doubling_model(p: dict[str, Any], max_T: int) -> Model | None:
    """The point model of POCP with the doubling trick (COLT Sec. 6.2, App. F, Algorithm 7).

    The same QFTL pair as :func:`pocp_model`; round t is released with noise ``beta_t / t``,
    ``beta_t`` the printed beta of block ``k = floor(log2 t)``
    (:func:`~dpaudit.learners.pocp_doubling.doubling_beta`), and the accountant composes shifts
    ``lambda_A / t``.

    Parameters
    ----------
    p
        The parameter point (epsilon, delta, T, d).
    max_T
        Largest horizon the budget tests empirically (streams and search pairs only up to it).

    Returns
    -------
    Model or None
        The model (noise scale reported as ``beta_1``); None where the claimed delta
        (``delta log2 T + 2 / T^{2 eps}``) is >= 1, a vacuous claim.
    """
    eps, dl, T, d = p["epsilon"], p["delta"], p["T"], p["d"]
    claimed = claimed_privacy("jkt12-colt/pocp-doubling", eps, dl, T)
    if claimed[1] >= 1.0:
        return None
    lam = pocp_qftl_lambda(QFTL_R, QFTL_ALPHA)
    t = np.arange(1, T)
    k = np.floor(np.log2(t)).astype(int)
    per_k = np.array([doubling_beta(2 ** j, lam, eps, dl) for j in range(int(k.max()) + 1)])
    betas = per_k[k]
    m0, m1 = qftl_means(d, T)
    sig = betas / t
    mu_acc = heterogeneous_gaussian_mu(lam / t, sig)
    streams = qftl_pair(d, T) if T <= max_T else None
    positions = search_positions(T)
    search = [qftl_pair(d, T, k) for k in positions] if T <= max_T else None
    return Model(dict(p, lambda_A=lam), claimed, t.astype(float), sig, m0, m1, None, mu_acc,
                  "assumption (1) with equality: lambda_A / t at every t",
                  lambda: POCPDoubling(QFTL(d, QFTL_ALPHA), None, lam, eps, dl, x1_hat=np.zeros(d)),
                  streams, "beta_1", float(betas[0]),
                  {"pair": f"QFTL on C = R^d, R = {QFTL_R}, alpha = {QFTL_ALPHA} (as for POCP)",
                   "search_positions": [k + 1 for k in positions]},
                  search_pairs=search)


def pigd_grid(grid: str) -> list[dict[str, Any]]:
    """The audited points of PIGD (Theorem 7 COLT / 3 arXiv): epsilon, delta, T, alpha, L, d.

    Both grids include the paper's Forest covertype setting (COLT App. G.2 / arXiv Sec. 5.2:
    T = :data:`PAPER_PIGD_T`, d = 54, delta = 0.01, L = alpha = 1) at epsilon 0.1 and 20 (coarse)
    or 0.1, 1, 10, 20 (full). Coarse adds six points (epsilon 1e-3 to 2000, alpha 0.01 to 100);
    full a product grid (epsilon up to 2000) and :data:`NEAR_HALF_DELTAS`.

    Parameters
    ----------
    grid
        ``"coarse"`` (the quick budget) or ``"full"``.

    Returns
    -------
    list of dict
        The parameter points (the paper's carry ``setting="paper G.2"``).
    """
    paper = [dict(epsilon=e, delta=0.01, T=PAPER_PIGD_T, alpha=1.0, L=1.0, d=54,
                  setting="paper G.2")
             for e in ((0.1, 20.0) if grid == "coarse" else (0.1, 1.0, 10.0, 20.0))]
    if grid == "coarse":
        return [dict(epsilon=1e-3, delta=1e-5, T=64, alpha=1.0, L=1.0, d=1),
                dict(epsilon=1.0, delta=1e-5, T=64, alpha=0.01, L=1.0, d=1),
                dict(epsilon=1.0, delta=1e-5, T=64, alpha=100.0, L=1.0, d=2),
                dict(epsilon=1.0, delta=1e-5, T=2, alpha=1.0, L=1.0, d=1),
                dict(epsilon=1000.0, delta=0.01, T=1024, alpha=1.0, L=1.0, d=1),
                dict(epsilon=2000.0, delta=0.01, T=1024, alpha=1.0, L=1.0, d=1)] + paper
    # eps = 2000: COLT's claim states no bound on eps, and with the tight accountant the claim
    # holds at eps = 1000 (T = 1024, delta = 0.01) but the constructed pair refutes it from
    # eps ~ 1.2e3 on (the regime analysis bisects both thresholds).
    return paper + [dict(epsilon=e, delta=dl, T=T, alpha=a, L=1.0, d=d)
                    for e in (1e-3, 0.1, 1.0, 20.0, 1000.0, 2000.0) for dl in (1e-5, 1e-2)
                    for T in (2, 64, 1024) for a in (0.01, 1.0, 100.0) for d in (1, 3)] + [
        dict(epsilon=e, delta=dl, T=T, alpha=1.0, L=1.0, d=1) for e in (1e-3, 1.0, 1000.0)
        for dl in NEAR_HALF_DELTAS for T in (2, 64, 1024)]


def pigd_accountant_only(version: Version
                          ) -> Callable[[dict[str, Any]], tuple[float, float, tuple[float, float]]]:
    """(c, accountant mu, claimed) of :func:`pigd_model` at a point, without the pair.

    The model's accountant (:func:`~dpaudit.papers.jkt12.exact.pigd_accountant` at the printed
    beta), cheap enough for the bisection of :mod:`~dpaudit.papers.jkt12.regime`.

    Parameters
    ----------
    version
        ``"colt"`` or ``"arxiv"``.

    Returns
    -------
    Callable
        ``acc(params)``: the exponent c, the accountant's ``mu`` and the claimed
        ``(epsilon, delta)`` at ``params``.
    """
    def acc(p: dict[str, Any]) -> tuple[float, float, tuple[float, float]]:
        eps, dl, T, alpha, L = p["epsilon"], p["delta"], p["T"], p["alpha"], p["L"]
        beta = pigd_beta(version, T, L, alpha, eps, dl)
        return (pocp_c(version, T, eps, dl), pigd_accountant(T, L, alpha, beta)[0],
                claimed_privacy(f"jkt12-{version}/pigd", eps, dl))
    return acc


def pigd_model(version: Version) -> Callable[[dict[str, Any], int], Model]:
    """The point model of PIGD (Algorithm 2; Theorem 7 COLT / 3 arXiv), for one version.

    At a point, IGD on the box ``C = [-D, D]^d`` with the near-linear pair of
    :mod:`~dpaudit.papers.jkt12.pairs`: the loss replaced at round tau
    (:func:`~dpaudit.papers.jkt12.pairs.best_igd_round`) and D, G from
    :func:`~dpaudit.papers.jkt12.pairs.igd_design`, fillers ``alpha/2 ||x||^2``. Rounds
    t = 1..T-1 are released with noise ``beta / t`` (the printed beta,
    :func:`~dpaudit.learners.pocp.pigd_beta`); the accountant is the worst case over every pair,
    C and d (:func:`~dpaudit.papers.jkt12.exact.pigd_accountant`).

    Parameters
    ----------
    version
        ``"colt"`` or ``"arxiv"``.

    Returns
    -------
    Callable
        ``model(params, max_T)``: the :class:`Model` (params gain ``tau``, ``box_half_width``
        and ``c``; streams and search pairs only for ``T <= max_T``; a learner with a uniform
        random start as ``uniform_factory``).
    """
    def model(p: dict[str, Any], max_T: int) -> Model:
        eps, dl, T, alpha, L, d = p["epsilon"], p["delta"], p["T"], p["alpha"], p["L"], p["d"]
        nu = NEAR_LINEAR_NU * min(1.0, math.sqrt(alpha))
        beta = pigd_beta(version, T, L, alpha, eps, dl)
        tau = best_igd_round(L, alpha, d, nu, T, beta)
        D, G = igd_design(L, alpha, d, nu, tau)
        box = Box(d, -D, D)
        lossm, lossp, fill = (near_linear_loss(d, G, alpha, -1.0, nu),
                              near_linear_loss(d, G, alpha, 1.0, nu), filler_loss(d, alpha))
        s0, s1 = stream_pair(T, tau - 1, lossm, lossp, fill)
        factory = lambda: IGD(box, alpha, np.zeros(d))  # noqa: E731
        ratio = lambda t: t / (t + 1.0)  # noqa: E731 - IGD on alpha/2||x||^2: x_{t+1} = t x_t/(t+1)
        m0 = first_coordinates(factory, s0, T, ratio)
        m1 = first_coordinates(factory, s1, T, ratio)
        t = np.arange(1, T, dtype=float)
        sig = beta / t
        # Worst case over every pair, C and d (exact.pigd_accountant): a replaced loss at round
        # tau moves x_{tau+1} by at most 2L/(alpha (tau+2)) (strong convexity of both losses on
        # the segment between the two minimisers), later steps contract by t/(t+1).
        mu_acc, tau_acc = pigd_accountant(T, L, alpha, beta)
        streams = (s0, s1) if T <= max_T else None
        positions = search_positions(T)
        search = [stream_pair(T, k, lossm, lossp, fill) for k in positions] if T <= max_T else None
        return Model(dict(p, tau=tau, box_half_width=D, c=pocp_c(version, T, eps, dl)),
                      claimed_privacy(f"jkt12-{version}/pigd", eps, dl),
                      t, sig, m0, m1, D, mu_acc,
                      f"2L (tau+1)/(alpha (tau+2) (t+1)) for x_{{t+1}}, t >= tau, after a loss "
                      f"replaced at round tau (one step 2L/(alpha (tau+2)), then t/(t+1) "
                      f"contractions); worst tau = {tau_acc}",
                      lambda: PIGD(box, T, L, alpha, eps, dl, version, np.zeros(d)),
                      streams, "beta", beta,
                      {"pair": f"f_tau = -+{G:.6g} x_1 + alpha/2||x||^2 at tau = {tau} (squared "
                               f"loss, nu = {nu:.1e}), fillers alpha/2||x||^2, "
                               f"C = [-{D:.6g}, {D:.6g}]^{d}",
                       "search_positions": [k + 1 for k in positions]},
                      search_pairs=search,
                      uniform_factory=lambda: PIGD(box, T, L, alpha, eps, dl, version, "uniform"))
    return model


def pgiga_grid(grid: str) -> list[dict[str, Any]]:
    """The audited points of PGIGA (Theorem 9 COLT / 5 arXiv).

    Parameters epsilon, delta, T, alpha, G, smoothness_ratio (the smoothness over alpha), d.
    Coarse: six points (epsilon 1e-3 to 1000, alpha 0.01 to 100, one at smoothness ratio 2, one
    at the paper's T, :data:`PAPER_PQFTL_T`). Full: a product grid at d = 1, smoothness ratios 1
    and 2 at d = 3, and :data:`NEAR_HALF_DELTAS`.

    Parameters
    ----------
    grid
        ``"coarse"`` (the quick budget) or ``"full"``.

    Returns
    -------
    list of dict
        The parameter points.
    """
    if grid == "coarse":
        return [dict(epsilon=1e-3, delta=1e-5, T=64, alpha=1.0, G=1.0, smoothness_ratio=1.0, d=1),
                dict(epsilon=1.0, delta=1e-5, T=64, alpha=0.01, G=1.0, smoothness_ratio=1.0, d=1),
                dict(epsilon=1.0, delta=1e-5, T=64, alpha=100.0, G=1.0, smoothness_ratio=2.0, d=2),
                dict(epsilon=1000.0, delta=1e-5, T=64, alpha=1.0, G=1.0, smoothness_ratio=1.0, d=1),
                dict(epsilon=1000.0, delta=0.01, T=1024, alpha=1.0, G=1.0, smoothness_ratio=1.0,
                     d=1),
                dict(epsilon=0.1, delta=0.01, T=PAPER_PQFTL_T, alpha=1.0, G=1.0,
                     smoothness_ratio=1.0, d=1)]
    return ([dict(epsilon=e, delta=dl, T=T, alpha=a, G=1.0, smoothness_ratio=1.0, d=1)
             for e in (1e-3, 0.1, 1.0, 20.0, 1000.0) for dl in (1e-5, 1e-2)
             for T in (16, 64, 1024, PAPER_PQFTL_T) for a in (0.01, 1.0, 100.0)]
            + [dict(epsilon=e, delta=1e-5, T=64, alpha=a, G=1.0, smoothness_ratio=r, d=3)
               for e in (1e-3, 1.0, 1000.0) for a in (0.01, 1.0, 100.0) for r in (1.0, 2.0)]
            + [dict(epsilon=e, delta=dl, T=T, alpha=1.0, G=1.0, smoothness_ratio=1.0, d=1)
               for e in (1e-3, 1.0, 1000.0) for dl in NEAR_HALF_DELTAS for T in (16, 64, 1024)])


def pgiga_model(version: Version) -> Callable[[dict[str, Any], int], Model | None]:
    """The point model of PGIGA (Algorithm 3; Theorem 9 COLT / 5 arXiv), for one version.

    At a point, GIGA with smoothness ``smoothness_ratio * alpha + nu^2`` and burn-in ``t_q``
    (:func:`~dpaudit.learners.giga.giga_burn_in`); of the candidate replaced rounds
    (:func:`~dpaudit.papers.jkt12.pairs.candidate_rounds`) the two with the best clip-aware score
    are built (box ``[-D, D]^d`` on whose boundary the replaced loss puts ``x_{tau+1}``, the
    declared gradient bound G met exactly), and the one with the larger Gaussian shift is kept.
    Rounds t = t_q..T-1 are released with noise ``beta / t``; the accountant is
    :func:`~dpaudit.papers.jkt12.exact.pgiga_accountant`.

    Parameters
    ----------
    version
        ``"colt"`` or ``"arxiv"``.

    Returns
    -------
    Callable
        ``model(params, max_T)``: the :class:`Model` (params gain ``tau``, ``t_q``,
        ``box_half_width``, ``c``; streams and search pairs only for ``T <= max_T``), or None
        where ``T - 1 < t_q`` (every released point is a random burn-in point).
    """
    def model(p: dict[str, Any], max_T: int) -> Model | None:
        eps, dl, T, alpha, Gd, d = (p["epsilon"], p["delta"], p["T"], p["alpha"], p["G"], p["d"])
        nu = NEAR_LINEAR_NU * min(1.0, math.sqrt(alpha))
        smooth = p["smoothness_ratio"] * alpha + nu * nu
        t_q = giga_burn_in(alpha, smooth)
        if T - 1 < t_q:
            return None
        beta = pgiga_beta(version, T, Gd, alpha, eps, dl)
        mu_acc, tau_acc = pgiga_accountant(T, t_q, Gd, alpha, beta)
        best: Model | None = None
        # Replaced rounds: the two (of log-spaced candidates in the simulated window, where the
        # learner itself computes the changed step) that keep the most information after clipping.
        t_all = np.arange(1, T, dtype=float)

        def design(tau: int) -> tuple[float, float]:
            D = 2.0 * Gd / (alpha * tau + 2.0 * (alpha + nu * nu) * math.sqrt(d))
            return D, alpha * tau * D / 2.0

        def score(tau: int) -> float:
            D, _ = design(tau)
            tt = t_all[tau - 1:]  # x_{t+1} = D (tau-1) tau / ((t-1) t) for t >= tau >= t_q >= 2
            return clip_aware_score(D * (tau - 1) * tau / ((tt - 1.0) * tt), beta / tt, D)

        taus = candidate_rounds(t_q, T)
        ranked = sorted(taus, key=lambda k: -score(int(k)))[:2]
        for tau in sorted({int(k) for k in ranked}):
            # x_tau = 0 (burn-in at the fixed point 0 and fillers); the replaced loss moves
            # x_{tau+1} = +-2 G_g/(alpha tau) e_1, on the boundary of [-D, D]^d with
            # G_g + (alpha + nu^2) sqrt(d) D = G (the declared gradient bound over C).
            D, G = design(tau)
            box = Box(d, -D, D)
            s0, s1 = stream_pair(T, tau - 1, near_linear_loss(d, G, alpha, -1.0, nu),
                           near_linear_loss(d, G, alpha, 1.0, nu), filler_loss(d, alpha))
            factory = lambda box=box: GIGA(box, alpha, smooth, np.zeros(d))  # noqa: E731
            ratio = lambda t: 1.0 - 2.0 / t  # noqa: E731 - gradient step on alpha/2||x||^2
            m0 = first_coordinates(factory, s0, T, ratio)[t_q - 1:]
            m1 = first_coordinates(factory, s1, T, ratio)[t_q - 1:]
            t = np.arange(t_q, T, dtype=float)
            sig = beta / t
            cand = Model(dict(p, tau=tau, t_q=t_q, box_half_width=D,
                               c=pocp_c(version, T, eps, dl)),
                          claimed_privacy(f"jkt12-{version}/pgiga", eps, dl), t, sig, m0, m1, D,
                          mu_acc, f"4G(tau-1)/(alpha(t-1)t) after a change at tau, worst tau = "
                                  f"{tau_acc}",
                          lambda box=box: PGIGA(box, T, Gd, alpha, smooth, eps, dl, version,
                                                np.zeros(d)),
                          (s0, s1) if T <= max_T else None, "beta", beta,
                          {"pair": f"f_tau = -+{G:.6g} x_1 + alpha/2||x||^2 at tau = {tau}, "
                                   f"fillers alpha/2||x||^2, C = [-{D:.6g}, {D:.6g}]^{d}, "
                                   f"t_q = {t_q}",
                           "search_positions": [k + 1 for k in search_positions(T, t_q - 1)]},
                          search_pairs=[stream_pair(T, k, near_linear_loss(d, G, alpha, -1.0, nu),
                                              near_linear_loss(d, G, alpha, 1.0, nu),
                                              filler_loss(d, alpha))
                                        for k in search_positions(T, t_q - 1)]
                          if T <= max_T else None)
            if best is None or heterogeneous_gaussian_mu(cand.m0 - cand.m1, cand.sigmas) > \
                    heterogeneous_gaussian_mu(best.m0 - best.m1, best.sigmas):
                best = cand
        return best
    return model


def pol_grid(grid: str) -> list[dict[str, Any]]:
    """The audited points of POL (Theorem 5 COLT / 10 arXiv).

    Parameters epsilon_p, delta, T, L, epsilon_g, x_star_norm, d (L and ||x*|| are 1). Coarse: four
    points, one at the paper's T (:data:`PAPER_PIGD_T`). Full: a product grid over epsilon_p,
    delta, T, epsilon_g and d, and :data:`NEAR_ONE_DELTAS`.

    Parameters
    ----------
    grid
        ``"coarse"`` (the quick budget) or ``"full"``.

    Returns
    -------
    list of dict
        The parameter points.
    """
    if grid == "coarse":
        return [dict(epsilon_p=0.1, delta=1e-5, T=64, L=1.0, epsilon_g=0.1, x_star_norm=1.0, d=1),
                dict(epsilon_p=1.0, delta=1e-5, T=1024, L=1.0, epsilon_g=0.01, x_star_norm=1.0,
                     d=1),
                dict(epsilon_p=10.0, delta=1e-5, T=64, L=1.0, epsilon_g=1.0, x_star_norm=1.0, d=3),
                dict(epsilon_p=1.0, delta=0.01, T=PAPER_PIGD_T, L=1.0, epsilon_g=0.1,
                     x_star_norm=1.0, d=1)]
    return ([dict(epsilon_p=e, delta=dl, T=T, L=1.0, epsilon_g=g, x_star_norm=1.0, d=d)
             for e in (1e-3, 0.1, 1.0, 10.0) for dl in (1e-5, 1e-2)
             for T in (2, 64, 1024, PAPER_PIGD_T)
             for g in (0.01, 0.1, 1.0) for d in (1, 3)]
            + [dict(epsilon_p=e, delta=dl, T=T, L=1.0, epsilon_g=0.1, x_star_norm=1.0, d=1)
               for e in (0.1, 1.0, 10.0) for dl in NEAR_ONE_DELTAS for T in (2, 64, 1024)])


def pol_model(p: dict[str, Any], max_T: int) -> Model:
    """The point model of POL (Algorithm 6; COLT Sec. 5 / arXiv Sec. 4.2): one released point.

    IGD with POL's ridge ``alpha = epsilon_g / ||x*||^2`` on the box of radius ``||x*||``
    (``D = ||x*|| / sqrt(d)``) with the shifted near-linear pair of
    :func:`~dpaudit.papers.jkt12.pairs.pol_near_linear_loss` (its Lipschitz constant over C is L,
    its class membership checked and recorded), replaced at the simulable round that maximises
    the shift of the averaged iterate (:func:`~dpaudit.papers.jkt12.pairs.pol_bounds`). The
    release is ``x~ = (x_1 + ... + x_T) / T`` with noise beta; the accountant's shift is the
    worst case over tau with ``L' = L + alpha ||x*||``, divided by beta.

    Parameters
    ----------
    p
        The parameter point (epsilon_p, delta, T, L, epsilon_g, x_star_norm, d).
    max_T
        Largest horizon the budget tests empirically (streams and search pairs only up to it).

    Returns
    -------
    Model
        The model (``output="point"``; params gain ``alpha`` and ``tau``). Its claim is COLT's
        (the audit's family sets each version's).
    """
    eps, dl, T, L, eg, xs, d = (p["epsilon_p"], p["delta"], p["T"], p["L"], p["epsilon_g"],
                                p["x_star_norm"], p["d"])
    D = xs / math.sqrt(d)  # box [-D, D]^d of radius ||x*||
    box = Box(d, -D, D)
    alpha = pol_alpha(eg, xs)
    nu = NEAR_LINEAR_NU * min(1.0, math.sqrt(alpha))
    G = L - nu * nu * xs  # the loss l has Lipschitz constant G + nu^2 ||C|| = L over C
    taus, shifts = pol_bounds(T, G, alpha, xs)
    simulable = taus <= SIMULATED_STEPS - 1
    tau = int(taus[simulable][int(np.argmax(shifts[simulable]))])
    lossm, lossp, fill = (pol_near_linear_loss(d, G, -1.0, nu, D),
                          pol_near_linear_loss(d, G, 1.0, nu, D), filler_loss(d, 0.0))
    membership = {"replaced (sign -)": pol_loss_membership(lossm, box, L),
                  "replaced (sign +)": pol_loss_membership(lossp, box, L),
                  "filler": "l = 0: l >= 0 and l(0) = 0"}
    s0, s1 = stream_pair(T, tau - 1, lossm, lossp, fill)
    igd = lambda: IGD(box, alpha, np.zeros(d), extra_ridge=alpha)  # noqa: E731
    # IGD on alpha/2||x||^2 (the filler l = 0 plus POL's ridge): x_{t+1} = t x_t / (t+1).
    ratio = lambda t: t / (t + 1.0)  # noqa: E731
    means = []
    for s in (s0, s1):
        xt = first_coordinates(igd, s, T, ratio)  # x_2..x_T
        means.append(np.array([xt.sum() / T]))  # x~ = (x_1 + ... + x_T)/T, x_1 = 0
    beta = pol_beta(T, L, alpha, xs, eps, dl)
    lp = L + alpha * xs
    _, worst = pol_bounds(T, lp, alpha, xs)
    bound = float(worst.max())
    printed = pol_printed_sensitivity(T, L, alpha, xs)
    positions = sorted({0, tau - 1, T // 2, T - 1})
    return Model(dict(p, alpha=alpha, tau=tau), claimed_privacy("jkt12-colt/pol", eps, dl),
                  np.array([T]), np.array([beta]), means[0], means[1], D, bound / beta,
                  "max over tau of min(2L'/alpha, 2||x*||(tau+1))(H_T - H_tau)/T, "
                  "L' = L + alpha ||x*||",
                  lambda: POL(d, T, L, eg, xs, eps, dl, box, np.zeros(d)),
                  (s0, s1) if T <= max_T else None, "beta", beta,
                  {"pair": f"l_tau(x) = 1/2 (-+{G:.6g}/nu - nu x_1)^2 - 1/2 ({G:.6g}/nu - nu D)^2 "
                           f"= -+{G:.6g} x_1 + nu^2 x_1^2/2 + {G * D - nu * nu * D * D / 2:.6g} "
                           f"at tau = {tau} (nu = {nu:.1e}; a squared loss shifted by a constant, "
                           f">= 0 on C with minimum 0, l(0) <= 1), l_t = 0 otherwise, "
                           f"C = [-{D:.6g}, {D:.6g}]^{d}",
                   "loss_class": membership,
                   "sensitivity": {"realised": float(abs(means[0][0] - means[1][0])),
                                   "printed": printed, "worst_case_bound": bound},
                   "search_positions": [k + 1 for k in positions]},
                  output="point",
                  search_pairs=[stream_pair(T, k, lossm, lossp, fill) for k in positions]
                  if T <= max_T else None)


def privatesum_grid(grid: str) -> list[dict[str, Any]]:
    """The audited points of PrivateSum (Theorem 11 COLT / 9 arXiv).

    Parameters epsilon, delta, T, R, d and ``log_reading`` (the unprinted base of log T: ``"tree"``
    log2, ``"natural"`` ln). Coarse: five points, one at the paper's T
    (:data:`PAPER_PQFTL_T`, d = 10). Full: a product grid with both readings, and
    :data:`NEAR_ONE_DELTAS` (natural reading only where ``ln T > delta``: the sigma is undefined).

    Parameters
    ----------
    grid
        ``"coarse"`` (the quick budget) or ``"full"``.

    Returns
    -------
    list of dict
        The parameter points.
    """
    if grid == "coarse":
        return [dict(epsilon=1.0, delta=1e-5, T=2, R=1.0, d=1, log_reading="tree"),
                dict(epsilon=1.0, delta=1e-5, T=64, R=1.0, d=2, log_reading="tree"),
                dict(epsilon=0.01, delta=1e-5, T=64, R=1.0, d=1, log_reading="tree"),
                dict(epsilon=10.0, delta=1e-5, T=1024, R=5.0, d=1, log_reading="natural"),
                dict(epsilon=0.01, delta=1e-5, T=PAPER_PQFTL_T, R=1.0, d=10, log_reading="tree")]
    return ([dict(epsilon=e, delta=dl, T=T, R=R, d=d, log_reading=lr)
             for e in (1e-3, 0.01, 0.1, 1.0, 10.0) for dl in (1e-6, 1e-5, 1e-2)
             for T in (2, 3, 8, 64, 1000, 1024, PAPER_PQFTL_T) for R in (1.0, 10.0)
             for d in (1, 3) for lr in ("tree", "natural")]
            # the natural reading's log(ln T / delta) is not positive at T = 2, delta = 0.99: the
            # printed sigma is undefined there (the tree reading's log2 2 / 0.99 > 1 is audited)
            + [dict(epsilon=e, delta=dl, T=T, R=1.0, d=1, log_reading=lr)
               for e in (0.01, 1.0, 10.0) for dl in NEAR_ONE_DELTAS for T in (2, 8, 1024)
               for lr in ("tree", "natural") if lr == "tree" or math.log(T) > dl])


def privatesum_model(version: Version) -> Callable[[dict[str, Any], int], TreeModel]:
    """The point model of PrivateSum (Algorithm 5; Theorem 11 COLT / 9 arXiv), for one version.

    The pair is ``w_1 = +-R e_1``, zero vectors after it; the released sequence's exact shift,
    :func:`~dpaudit.papers.jkt12.exact.tree_mu` at the printed sigma, is the worst case too
    (exact and accountant ``mu`` are equal). The evidence adds the per-step reading (the worst
    single output) and, for ``T <= 256``, the shift from the whitened covariance (a cross-check).

    Parameters
    ----------
    version
        ``"colt"`` or ``"arxiv"``.

    Returns
    -------
    Callable
        ``model(params, max_T)``: the :class:`TreeModel`, with an empirical test (the
        likelihood-ratio weights of :func:`~dpaudit.papers.jkt12.exact.lr_weights_tree`) for
        ``T <= max_T``.
    """
    def model(p: dict[str, Any], max_T: int) -> TreeModel:
        eps, dl, T, R, d, lr = p["epsilon"], p["delta"], p["T"], p["R"], p["d"], p["log_reading"]
        sigma = private_sum_sigma(version, T, R, eps, dl, lr)
        mu = tree_mu(T, 2.0 * R, sigma)
        mu_step = privatesum_step_mu(R, sigma)
        ev: dict[str, Any] = {"sigma": sigma, "released_nodes_containing_w_1":
                              released_node_count(1, T), "tree_depth": tree_depth(T),
                              "pair": "w_1 = +-R e_1, w_t = 0 for t > 1 (||w_1 - w'_1|| = 2R)",
                              "per_step": {
                                  "mu": mu_step, "epsilon": gaussian_epsilon(mu_step, dl),
                                  "claimed_epsilon": eps,
                                  "reading": "'for all t, W^_t is (eps, delta)-DP': the worst "
                                             "single output (t = 1, or any power of two: one "
                                             "node), exact Gaussian epsilon of the same pair"}}
        if T <= 256:
            # Cross-check the node-count formula with the whitened covariance of the release.
            c = lr_weights_tree(T, 2.0 * R)
            ev["mu_whitened"] = math.sqrt(float(np.full(T, 2.0 * R) @ c)) / sigma
        emp = None
        if T <= max_T:
            w0 = np.zeros((T, d))
            w0[0, 0] = R
            w1 = -w0
            weights = lr_weights_tree(T, 2.0 * R)

            emp = _TreeTest(PrivateSum(d, T, R, eps, dl, version, lr), w0, w1,
                            lambda y: np.asarray(y)[:, :, 0] @ weights)
        return TreeModel(dict(p), claimed_privacy(f"jkt12-{version}/privatesum", eps, dl), mu, mu,
                          ev, emp)
    return model


def pqftl_grid(grid: str) -> list[dict[str, Any]]:
    """The audited points of PQFTL (Theorem 3 COLT / 7 arXiv).

    Parameters epsilon, delta, T, R, alpha, d, ``log_reading``. Coarse: six points, among them
    the paper's synthetic regression (COLT App. G.1 / arXiv Sec. 5.1: T = :data:`PAPER_PQFTL_T`,
    d = 10, ``setting="paper G.1"``) and one empirical pair (``alpha =``
    :data:`PQFTL_EMPIRICAL_ALPHA`, d = 1). Full: a product grid with both readings,
    :data:`NEAR_ONE_DELTAS`, five empirical pairs, and T = 2 (the stated range's lower end).

    Parameters
    ----------
    grid
        ``"coarse"`` (the quick budget) or ``"full"``.

    Returns
    -------
    list of dict
        The parameter points.
    """
    # The points with alpha = PQFTL_EMPIRICAL_ALPHA and d = 1 carry the empirical tests.
    a_emp = PQFTL_EMPIRICAL_ALPHA
    if grid == "coarse":
        return [dict(epsilon=1.0, delta=1e-5, T=64, R=1.0, alpha=1.0, d=1, log_reading="tree"),
                dict(epsilon=0.01, delta=1e-5, T=64, R=1.0, alpha=1.0, d=2, log_reading="tree"),
                dict(epsilon=1.0, delta=1e-5, T=64, R=10.0, alpha=1.0, d=1, log_reading="tree"),
                dict(epsilon=0.01, delta=1e-5, T=PAPER_PQFTL_T, R=1.0, alpha=1.0, d=10,
                     log_reading="tree", setting="paper G.1"),
                dict(epsilon=1.0, delta=1e-5, T=3, R=1.0, alpha=1.0, d=1, log_reading="natural"),
                dict(epsilon=1.0, delta=1e-5, T=64, R=10.0, alpha=a_emp, d=1,
                     log_reading="tree", setting="empirical pair")]
    return ([dict(epsilon=e, delta=dl, T=T, R=R, alpha=1.0, d=d, log_reading=lr)
             for e in (1e-3, 0.01, 0.1, 1.0, 10.0) for dl in (1e-5, 1e-2)
             for T in (3, 16, 64, 1024, PAPER_PQFTL_T) for R in (0.5, 1.0, 10.0) for d in (1, 3)
             for lr in ("tree", "natural")]
            + [dict(epsilon=e, delta=dl, T=T, R=1.0, alpha=1.0, d=1, log_reading=lr)
               for e in (0.01, 1.0, 10.0) for dl in NEAR_ONE_DELTAS for T in (3, 64, 1024)
               for lr in ("tree", "natural")]
            + [dict(epsilon=e, delta=1e-5, T=T, R=R, alpha=a_emp, d=1, log_reading=lr,
                    setting="empirical pair")
               for e, T, R, lr in ((1.0, 64, 10.0, "tree"), (0.1, 64, 10.0, "tree"),
                                   (1.0, 64, 1.0, "tree"), (1.0, 3, 1.0, "natural"))]
            + [dict(epsilon=10.0, delta=1e-2, T=3, R=10.0, alpha=a_emp, d=1,
                    log_reading="natural", setting="empirical pair")]
            # T = 2 closes the stated T >= 2 (ranges.py)
            + [dict(epsilon=e, delta=1e-5, T=2, R=1.0, alpha=1.0, d=1, log_reading=lr)
               for e in (0.01, 1.0, 10.0) for lr in ("tree", "natural")])


def pqftl_model(version: Version) -> Callable[[dict[str, Any], int], TreeModel]:
    """The point model of PQFTL (Algorithm 4; Theorem 3 COLT / 7 arXiv), for one version.

    The release is a post-processing of the noisy state (V^_t, u^_t), so there is no exact value
    (``mu = 0``); the accountant is the state's worst-case shift of
    :func:`~dpaudit.papers.jkt12.exact.pqftl_state_mu`. Points with d = 1 and
    ``alpha >= PQFTL_EMPIRICAL_ALPHA`` and ``T <= max_T`` get an empirical pair (the label flip
    ``y_1 = +-R`` with ``v_1 = R``); the state's epsilon under the flip is its ``pair_upper``.

    Parameters
    ----------
    version
        ``"colt"`` or ``"arxiv"``.

    Returns
    -------
    Callable
        ``model(params, max_T)``: the :class:`TreeModel`.
    """
    def model(p: dict[str, Any], max_T: int) -> TreeModel:
        eps, dl, T, R, alpha, d, lr = (p["epsilon"], p["delta"], p["T"], p["R"], p["alpha"], p["d"],
                                       p["log_reading"])
        st = pqftl_state_mu(version, T, R, eps, dl, lr, d)
        flip_eps = gaussian_epsilon(st["flip"], dl)
        ev: dict[str, Any] = {
            "sigma_V": st["sigma_V"], "sigma_u": st["sigma_u"],
            "released_nodes_containing_f_1": int(st["nodes"]),
            "state_epsilon": {"label flip": flip_eps,
                              "label and direction": gaussian_epsilon(st["mixed"], dl)},
            "note": "the release x^ is a post-processing of the state (V^_t, u^_t): the state's "
                    "exact epsilon bounds the release from above; no exact value for x^ itself"}
        emp = None
        pair_upper = None
        if T <= max_T and d == 1 and alpha >= PQFTL_EMPIRICAL_ALPHA:
            v = np.array([R])
            s0, s1 = stream_pair(T, 0, SquaredLoss(v, R, alpha), SquaredLoss(v, -R, alpha),
                           filler_loss(1, alpha))
            weights = lr_weights_tree(T - 1, 2.0 * R * R) * alpha * np.arange(1, T)

            def mech(data: Any, nn: int, rng: np.random.Generator) -> np.ndarray:
                return PQFTL(1, T, alpha, R, eps, dl, version, lr).run(data, nn, rng)

            emp = _TreeTest(mech, s0, s1, lambda y: np.asarray(y)[:, 1:, 0] @ weights)
            pair_upper = flip_eps
            ev["empirical_pair"] = {
                "pair": f"d = 1, alpha = {alpha:g}, y_1 = +-R, v_1 = R, fillers (y, v) = (0, 0) "
                        "(the parameters of this point)",
                "state_epsilon_of_the_pair": flip_eps,
                "why": "t alpha I dominates V^_t, so x^_{t+1} ~ u^_t / (t alpha): the release "
                       "nearly recovers the u-tree, whose nodes move by 2R^2 under the label flip"}
        # No exact value for the release: the state's worst-case epsilon is the accountant.
        return TreeModel(dict(p), claimed_privacy(f"jkt12-{version}/pqftl", eps, dl), 0.0,
                          st["worst"], ev, emp, pair_upper)
    return model
