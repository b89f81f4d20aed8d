"""Neighbouring streams of the JKT12 audits (Jain, Kothari & Thakurta 2012, both versions).

Worst-case pairs, built from the structure of each algorithm (one loss replaced, every other loss a
"filler" that keeps the difference alive):

* strongly convex Lipschitz classes (PIGD, PGIGA, POL): the replaced loss is
  ``1/2 (y - <nu e_1, x>)^2 + alpha/2 ||x||^2`` with ``y = +-G/nu`` and ``nu`` small, i.e. a linear
  term ``-+G x_1`` plus the ridge up to O(nu^2) (a member of the squared + ridge class), the fillers
  are ``alpha/2 ||x||^2`` and C is a box ``[-D, D]^d``. The replaced round tau and D are chosen so
  that x_{tau+1} lands on the boundary of C while the replaced loss meets the declared Lipschitz
  (or gradient) bound exactly; tau is the log-spaced candidate that keeps the most information
  after clipping (POL: the one maximising the shift of the averaged iterate);
* the generic POCP claims and the doubling variant: QFTL on C = R^d with
  ``f_1 = 1/2 (+-R - <R e_1, x>)^2 + alpha/2 ||x||^2``, whose sensitivity ``2R^2/(t alpha + R^2)``
  nearly attains the constant ``lambda_A = (2R^2/alpha)(1 + R^2/(2 alpha))`` of assumption (1);
* POL: the same near-linear loss without ridge, shifted by a constant so that it is >= 0 on C with
  l(0) <= 1 (COLT Sec. 5 / arXiv Sec. 4.2; the shift changes no iterate);
* PrivateSum: ``w_1 = +-R e_1`` and zero vectors; PQFTL: the label flip ``y_1 = +-R`` with
  ``v_1 = R e_1`` (see :mod:`dpaudit.papers.jkt12.plans`).
"""

from __future__ import annotations


import math
from typing import Any, Callable, Sequence

import numpy as np

from dpaudit.learners.domains import Box
from dpaudit.learners.losses import Loss, ShiftedSquaredLoss, SquaredLoss
from dpaudit.learners.qftl import QFTL


#: Steps simulated with the learner itself before the closed-form continuation of the fillers.
SIMULATED_STEPS = 512

#: Scale of the near-linear emulation (nu^2 / alpha <= 1e-8).
NEAR_LINEAR_NU = 1e-4

#: The regression pair of the generic POCP audits: R and alpha (scale-free: only R^2/alpha enters).
QFTL_R, QFTL_ALPHA = 0.01, 1.0


def near_linear_loss(d: int, G: float, ridge: float, sign: float, nu: float) -> SquaredLoss:
    """``1/2 (sign G/nu - <nu e_1, x>)^2 + ridge/2 ||x||^2``.

    Up to a constant and O(nu^2) terms this is ``-sign G x_1 + ridge/2 ||x||^2``.

    Parameters
    ----------
    d
        Dimension.
    G
        Slope of the emulated linear loss.
    ridge
        Strong convexity added.
    sign
        ``+1`` or ``-1``: the slope's direction along ``e_1``.
    nu
        Scale of the emulation (the error is O(nu^2)).

    Returns
    -------
    SquaredLoss
        The loss with ``v = nu e_1``, ``y = sign G / nu``.
    """
    v = np.zeros(d)
    v[0] = nu
    return SquaredLoss(v, sign * G / nu, ridge)


def pol_near_linear_loss(d: int, G: float, sign: float, nu: float, half_width: float
                         ) -> ShiftedSquaredLoss:
    """POL's replaced loss: :func:`near_linear_loss` (no ridge) shifted to be >= 0 on C, min 0.

    ``l(x) = 1/2 (sign G/nu - nu x_1)^2 - 1/2 (G/nu - nu D)^2
    = -sign G x_1 + nu^2 x_1^2 / 2 + G D - nu^2 D^2 / 2`` for x_1 in [-D, D] (``D = half_width``,
    the extent of x_1 over C). Its vertex sign G/nu^2 lies outside [-D, D] when G >= nu^2 D, so
    the minimum over C is 0 (at x_1 = sign D) and ``l(0) = G D - nu^2 D^2 / 2 <= G D``.

    Parameters
    ----------
    d, G, sign, nu
        As in :func:`near_linear_loss`.
    half_width
        ``D``, the extent of ``x_1`` over C.

    Returns
    -------
    ShiftedSquaredLoss
        The shifted loss (same gradients as the unshifted one).
    """
    base = near_linear_loss(d, G, 0.0, sign, nu)
    return ShiftedSquaredLoss(base.v, base.y, 0.0, reference=sign * (G / nu - nu * half_width))


def pol_loss_membership(loss: ShiftedSquaredLoss, box: Box, L: float) -> dict[str, Any]:
    """Check a :func:`pol_near_linear_loss` (``v = nu e_1``) against POL's class on the box C.

    Evaluates ``l`` on 1001 values of x_1 in [lower, upper] (the loss only depends on x_1) and at
    0, and its Lipschitz constant over C (as POL enforces it). The evaluated values carry a float
    error of about ``y^2`` machine epsilons (r = y - nu x_1 is rounded at the scale of
    |y| ~ G/nu, then multiplied by ~2|y|); the tolerance is 8 times that. ValueError if outside.

    Parameters
    ----------
    loss
        A loss from :func:`pol_near_linear_loss`.
    box
        The domain C.
    L
        The class's Lipschitz bound.

    Returns
    -------
    dict
        The evaluated and closed-form values, the checks and the tolerance, for the audit record.

    Raises
    ------
    ValueError
        If the loss is outside the class (negative on C, ``l(0) > 1`` or Lipschitz above ``L``).
    """
    tol = float(8.0 * loss.y ** 2 * np.finfo(float).eps + 1e-12)
    d = loss.dim
    x = np.zeros((1001, d))
    x[:, 0] = np.linspace(box.lower, box.upper, 1001)
    values = loss.value(x)
    at_zero = float(loss.value(np.zeros(d)))
    lip = float(loss.lipschitz(box))
    closed = float(abs(loss.y * loss.v[0]) * box.upper - loss.v[0] ** 2 * box.upper ** 2 / 2)
    out = {"offset": loss.offset, "l(0)": closed, "l(0) evaluated": at_zero,
           "min over C evaluated": float(values.min()), "Lipschitz over C": lip, "L": L,
           "l(0) <= 1": bool(at_zero <= 1.0 + tol),
           "l >= 0 on C": bool(float(values.min()) >= -tol),
           "tolerance": tol,
           "note": "the squared loss shifted by a constant: identical gradients, identical "
                   "iterates; in the class l >= 0 on C (COLT Sec. 5, arXiv Sec. 4.2) with "
                   "l(0; z) <= 1 (arXiv Sec. 4.2). l(0) = G D - nu^2 D^2/2 in closed form; the "
                   "evaluated values carry a float error of about y^2 machine epsilons "
                   "(|y| ~ G/nu), hence the tolerance"}
    if not (out["l(0) <= 1"] and out["l >= 0 on C"]) or lip > L * (1 + 1e-9):
        raise ValueError(f"POL's constructed loss is outside the declared class: {out}")
    return out


def filler_loss(d: int, ridge: float) -> SquaredLoss:
    """``ridge/2 ||x||^2`` (``SquaredLoss(0, 0, ridge)``): keeps a difference alive, adds none.

    Parameters
    ----------
    d
        Dimension.
    ridge
        Strong convexity of the filler.

    Returns
    -------
    SquaredLoss
        ``SquaredLoss(0, 0, ridge)``.
    """
    return SquaredLoss(np.zeros(d), 0.0, ridge)


def stream_pair(T: int, position: int, loss0: Loss, loss1: Loss, filler: Loss) -> tuple[list, list]:
    """Two neighbouring streams of ``T`` losses that differ only at ``position``.

    Parameters
    ----------
    T
        Length of each stream.
    position
        0-based round whose loss is replaced (``loss0`` in the first stream, ``loss1`` in the
        second).
    loss0, loss1
        The replaced round's loss in each stream.
    filler
        The loss of every other round, the same in both streams.

    Returns
    -------
    tuple[list, list]
        The two streams.
    """
    s0 = [filler] * T
    s1 = [filler] * T
    s0[position] = loss0
    s1[position] = loss1
    return s0, s1


def pocp_qftl_lambda(R: float, alpha: float) -> float:
    """lambda_A of QFTL on the regression class ``|y|, ||v|| <= R`` (assumption (1)).

    With A_t = t alpha I + V_t:
    x_{t+1} - x'_{t+1} = A_t^{-1} [(u_t - u'_t) + (V'_t - V_t) x'_{t+1}],
    ||A_t^{-1}|| <= 1/(t alpha), ||u_t - u'_t|| <= 2R^2, ||V_t - V'_t|| <= R^2 and
    ||x'_{t+1}|| <= t R^2/(t alpha), so S(QFTL, t) <= (2R^2/alpha)(1 + R^2/(2 alpha)) / t.

    Parameters
    ----------
    R
        Bound on the regression inputs ``|y|, ||v||``.
    alpha
        QFTL's regularisation.

    Returns
    -------
    float
        ``(2R^2/alpha)(1 + R^2/(2 alpha))``.
    """
    return 2.0 * R * R / alpha * (1.0 + R * R / (2.0 * alpha))


def first_coordinates(factory: Callable[[], Any], stream: Sequence[Loss], T: int,
                       ratio: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """x_{t+1}[0] for t = 1..T-1: the learner for min(T, SIMULATED_STEPS) rows, then the filler map.

    Parameters
    ----------
    factory
        Builds a fresh learner with a ``run(stream, n, rng)`` method.
    stream
        The losses (only the first ``min(T, SIMULATED_STEPS)`` are simulated).
    T
        Horizon.
    ratio
        The closed form ``x_{t+1} = ratio(t) x_t`` of the filler step at round t (vectorised).

    Returns
    -------
    numpy.ndarray
        ``x_{t+1}[0]`` for ``t = 1..T-1``, shape ``(T - 1,)``.
    """
    n_sim = min(T, SIMULATED_STEPS)
    xs = factory().run(list(stream[:n_sim]), 1, np.random.default_rng(0))[0, :, 0]
    out = np.empty(T - 1)
    out[: n_sim - 1] = xs[1:n_sim]
    if T > n_sim:
        t = np.arange(n_sim, T, dtype=float)
        out[n_sim - 1:] = xs[n_sim - 1] * np.cumprod(ratio(t))
    return out


def _qftl_ratio(t: np.ndarray) -> np.ndarray:
    # x_{t+1} = u_1 / (t alpha + R^2) once only fillers follow the change at round 1.
    return ((t - 1.0) * QFTL_ALPHA + QFTL_R ** 2) / (t * QFTL_ALPHA + QFTL_R ** 2)


def qftl_pair(d: int, T: int, position: int = 0) -> tuple[list, list]:
    """The generic POCP audits' pair: ``1/2 (+-R - <R e_1, x>)^2 + alpha/2 ||x||^2`` replaced.

    The loss sits at ``position``, every other round is the ridge filler; ``R = QFTL_R``,
    ``alpha = QFTL_ALPHA``.

    Parameters
    ----------
    d
        Dimension.
    T
        Length of each stream.
    position
        0-based replaced round.

    Returns
    -------
    tuple[list, list]
        The two streams.
    """
    v = np.zeros(d)
    v[0] = QFTL_R
    return stream_pair(T, position, SquaredLoss(v, QFTL_R, QFTL_ALPHA),
                       SquaredLoss(v, -QFTL_R, QFTL_ALPHA), filler_loss(d, QFTL_ALPHA))


def search_positions(T: int, first: int = 0) -> list[int]:
    """0-based replaced positions of the candidate-pair search: first, middle, last useful.

    Parameters
    ----------
    T
        Horizon.
    first
        First position that may be replaced.

    Returns
    -------
    list[int]
        The distinct positions, sorted.
    """
    return sorted({first, max(first, T // 2), max(first, T - 2)})


def qftl_means(d: int, T: int) -> tuple[np.ndarray, np.ndarray]:
    """QFTL's noise-free first coordinates on both streams of :func:`qftl_pair`.

    QFTL's noise-free first coordinates ``x_{t+1}[0]``, t = 1..T-1, on both streams of
    :func:`qftl_pair` (replaced round 1), by :func:`first_coordinates`.

    Parameters
    ----------
    d
        Dimension.
    T
        Horizon.

    Returns
    -------
    tuple[numpy.ndarray, numpy.ndarray]
        The first and the second stream's coordinates, each of shape ``(T - 1,)``.
    """
    s0, s1 = qftl_pair(d, T)
    factory = lambda: QFTL(d, QFTL_ALPHA)  # noqa: E731
    return (first_coordinates(factory, s0, T, _qftl_ratio),
            first_coordinates(factory, s1, T, _qftl_ratio))


def igd_design(L: float, alpha: float, d: int, nu: float, tau: int) -> tuple[float, float]:
    """Box half-width D and linear coefficient G of a replaced loss at round ``tau``.

    With x_tau = 0 (fillers before), the implicit step on ``-+G x_1 + alpha/2||x||^2`` moves
    x_{tau+1} = +-G/(alpha (tau+1)) e_1 (up to O(nu^2)). Putting x_{tau+1} on the boundary of
    [-D, D]^d while the replaced loss's Lipschitz constant G + (alpha + nu^2) sqrt(d) D over the
    box equals the declared L gives D = L / (alpha (tau+1) + (alpha + nu^2) sqrt(d)),
    G = alpha (tau+1) D. The later shift is 2D (tau+1)/(t+1) at x_{t+1} (fillers contract by
    t/(t+1)), so a late change trades horizon for a G closer to L.

    Parameters
    ----------
    L
        Declared Lipschitz constant of the loss class.
    alpha
        Ridge (strong convexity) of the losses.
    d
        Dimension.
    nu
        Scale of the near-linear loss's regressor (small; module docstring).
    tau
        Replaced round (1-based).

    Returns
    -------
    tuple[float, float]
        ``(D, G)``.
    """
    D = L / (alpha * (tau + 1) + (alpha + nu * nu) * math.sqrt(d))
    return D, alpha * (tau + 1) * D


def clip_aware_score(m: np.ndarray, sigmas: np.ndarray, D: float) -> float:
    """``sum_t (2 m_t / sigma_t)^2 P(no clipping at mean m_t)``: a proxy for what is released.

    Parameters
    ----------
    m
        Noise-free shifts of the released coordinate, one per round.
    sigmas
        Noise standard deviations, one per round.
    D
        Half-width of the box the noisy points are clipped to.

    Returns
    -------
    float
        The score (larger: more information survives the clipping).
    """
    from scipy.special import ndtr

    keep = ndtr((D - m) / sigmas) - ndtr((-D - m) / sigmas)
    return float(np.sum((2.0 * m / sigmas) ** 2 * keep))


def candidate_rounds(first: int, T: int) -> np.ndarray:
    """Replaced rounds tried by the pair designs: log-spaced in ``[first, min(T-1, window-1)]``.

    Parameters
    ----------
    first
        Smallest round tried.
    T
        Horizon; rounds beyond the simulated window (``SIMULATED_STEPS``) are not tried.

    Returns
    -------
    numpy.ndarray
        Up to 24 distinct integer rounds, empty when the range is.
    """
    last = min(T - 1, SIMULATED_STEPS - 1)
    if last < first:
        return np.array([], dtype=int)
    return np.unique(np.round(np.geomspace(first, last, 24)).astype(int))


def best_igd_round(L: float, alpha: float, d: int, nu: float, T: int, beta: float) -> int:
    """The replaced round tau whose design keeps the most information after clipping.

    For the design of :func:`igd_design` the noise-free shift is m_{t+1} = D (tau+1)/(t+1) for
    t >= tau and the noise std is beta/t; the score is :func:`clip_aware_score`.

    Parameters
    ----------
    L, alpha, d, nu
        As for :func:`igd_design`.
    T
        Horizon.
    beta
        Noise scale: round t is noised with standard deviation ``beta / t``.

    Returns
    -------
    int
        The best candidate round (1 when none is tried).
    """
    t = np.arange(1, T, dtype=float)
    best, best_tau = -1.0, 1
    for tau in candidate_rounds(1, T):
        D, _ = igd_design(L, alpha, d, nu, int(tau))
        tt = t[tau - 1:]
        score = clip_aware_score(D * (tau + 1) / (tt + 1), beta / tt, D)
        if score > best:
            best, best_tau = score, int(tau)
    return best_tau


def pol_bounds(T: int, G: float, alpha: float, radius: float) -> tuple[np.ndarray, np.ndarray]:
    """Shift of x~ for a replaced round tau = 1..T-1 (worst case, up to the learner's exact value).

    A loss replaced at round tau moves x_{tau+1} by at most min(2G/(alpha (tau+1)), 2 radius)
    (Lemma 4's first case, capped by the diameter), and every later step contracts by t/(t+1), so
    ||x~ - x~'|| <= min(2G/alpha, 2 radius (tau+1)) (H_T - H_tau) / T.

    Parameters
    ----------
    T
        Horizon.
    G
        Lipschitz constant of the losses.
    alpha
        Strong convexity of the losses.
    radius
        Radius of the domain (the diameter caps the first shift).

    Returns
    -------
    tuple[numpy.ndarray, numpy.ndarray]
        The replaced rounds ``tau = 1..T-1`` and the bound on the averaged iterate's shift for each.
    """
    taus = np.arange(1, T)
    H = np.concatenate([[0.0], np.cumsum(1.0 / np.arange(1, T + 1))])  # H[k] = sum_{j<=k} 1/j
    shift = np.minimum(2.0 * G / alpha, 2.0 * radius * (taus + 1)) * (H[T] - H[taus]) / T
    return taus, shift
