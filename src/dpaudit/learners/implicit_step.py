"""The implicit (proximal) step of Implicit Gradient Descent, exact or to a stated tolerance.

IGD (Kulis & Bartlett 2010; JKT12 COLT 2012 eq. (20), arXiv eq. (13)) plays
``x_{t+1} = argmin_{z in C} 1/2 ||z - x_t||^2 + eta_t f_t(z)``. :func:`implicit_step` solves it
for the papers' loss classes (linear, squared, logistic and hinge data terms, each with an optional
ridge) over R^d, an l2 ball or a box, vectorised over runs, by reducing it to the proximal point of
``h phi`` at ``c = x / kappa`` (``kappa = 1 + eta rho``, ``h = eta / kappa``, ``phi`` the data
term). Every answer is the exact minimiser up to the stated tolerance: closed forms where they
exist, otherwise safeguarded Newton (logistic, unconstrained) or bisection on a monotone
multiplier (ball, box), with the ball's answer rescaled so ``||z|| <= D`` exactly.

The reduction and each case's exactness: docs/paper-readings.md#jkt12-implicit-step.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit

from dpaudit._rowwise import add_outer, row_any, row_norm  # numpy's row ops, bit for bit, faster
from dpaudit._validation import check_finite_array, check_int, check_nonnegative, check_positive
from dpaudit.learners.domains import Ball, Box, Domain
from dpaudit.learners.losses import HingeLoss, LinearLoss, LogisticLoss, Loss, SquaredLoss

__all__ = ["implicit_step", "DEFAULT_TOLERANCE"]

#: Default relative tolerance of the iterative solvers (bisection / Newton).
DEFAULT_TOLERANCE = 1e-13

_MAX_BRACKET_DOUBLINGS = 2000


def implicit_step(loss: Loss, x: np.ndarray, eta: float | np.ndarray, domain: Domain | None = None,
                  *, extra_ridge: float = 0.0, tol: float = DEFAULT_TOLERANCE,
                  max_iter: int = 200) -> np.ndarray:
    """Solve ``argmin_{z in C} 1/2 ||z - x||^2 + eta (f(z) + extra_ridge/2 ||z||^2)``.

    JKT12 (COLT 2012) eq. (20) / Algorithm 2 line 7 and Algorithm 6 line 9 (where
    ``extra_ridge = alpha`` is the regulariser POL adds to the loss ``l(x; z_t)``).

    Parameters
    ----------
    loss : Loss
        ``f``: a :class:`LinearLoss`, :class:`SquaredLoss`, :class:`LogisticLoss` or
        :class:`HingeLoss` (its own ridge is included).
    x : array_like, shape (..., d)
        The current iterates, one per run.
    eta : float or array_like broadcastable to shape (...)
        Step sizes, > 0.
    domain : Ball, Box or None
        The constraint set C (``None``: R^d).
    extra_ridge : float
        Additional ridge added to ``f``, >= 0.
    tol : float
        Relative tolerance of the iterative solvers, > 0.
    max_iter : int
        Iteration cap of each bisection / Newton loop (bisection halves the bracket each time, so
        200 iterations always reach ``tol`` in float64).

    Returns
    -------
    numpy.ndarray, shape (..., d)
        The minimisers.
    """
    if not isinstance(loss, Loss):
        raise TypeError(f"loss must be a dpaudit Loss, got {type(loss).__name__}")
    x = check_finite_array(x, "x")
    if x.ndim == 0 or x.shape[-1] != loss.dim:
        raise ValueError(f"x must have last axis of length d={loss.dim}, got shape {x.shape}")
    if domain is not None:
        if not isinstance(domain, (Ball, Box)):
            raise TypeError(f"domain must be a Ball, a Box or None, got {type(domain).__name__}")
        if domain.dim != loss.dim:
            raise ValueError(f"domain dimension {domain.dim} != loss dimension {loss.dim}")
    eta_arr = check_finite_array(eta, "eta")
    if np.any(eta_arr <= 0):
        raise ValueError("eta must be in (0, inf)")
    extra_ridge = check_nonnegative(extra_ridge, "extra_ridge")
    tol = check_positive(tol, "tol")
    max_iter = check_int(max_iter, "max_iter", minimum=1)

    batch_shape = x.shape[:-1]
    d = x.shape[-1]
    xs = x.reshape(-1, d)
    etas = np.broadcast_to(eta_arr, batch_shape).reshape(-1).astype(float)
    rho = float(getattr(loss, "ridge", 0.0)) + extra_ridge
    kappa = 1.0 + etas * rho
    c = xs / kappa[:, None]
    h = etas / kappa
    if domain is None:
        z = _prox(loss, c, h, tol, max_iter)
    elif isinstance(domain, Ball):
        z = _prox_ball(loss, c, h, domain.radius, tol, max_iter)
    else:
        z = _prox_box(loss, c, h, domain.lower, domain.upper, tol, max_iter)
    return z.reshape(batch_shape + (d,))


# --------------------------------------------------------------------------------------------------
# Unconstrained proximal points of h * phi at c (rows are independent problems)
# --------------------------------------------------------------------------------------------------


def _prox(loss: Loss, c: np.ndarray, h: np.ndarray, tol: float, max_iter: int) -> np.ndarray:
    """argmin_z 1/2 ||z - c||^2 + h phi(z), phi the data term of ``loss`` (no ridge)."""
    if isinstance(loss, LinearLoss):
        return c - h[:, None] * loss.g
    v = loss.v
    vv = float(v @ v)
    a = c @ v
    hv = h * vv
    if isinstance(loss, SquaredLoss):
        s = (a + hv * loss.y) / (1.0 + hv)
        return add_outer(c, h * (loss.y - s), v)
    if isinstance(loss, HingeLoss):
        y = loss.y
        margin = 1.0 - y * a  # hinge argument at z = c
        kink = (margin > 0.0) & (hv > margin)  # the optimum sits on the kink y <v, z> = 1
        theta = np.where(margin <= 0.0, 0.0, 1.0)
        np.divide(margin, hv, out=theta, where=kink)
        return add_outer(c, h * y * theta, v)
    if isinstance(loss, LogisticLoss):
        s = _logistic_scalar(a, hv, loss.y, tol, max_iter)
        return add_outer(c, h * loss.y * expit(-loss.y * s), v)
    raise TypeError(f"unsupported loss type {type(loss).__name__}")


def _logistic_scalar(a: np.ndarray, b: np.ndarray, y: float, tol: float,
                     max_iter: int) -> np.ndarray:
    """Root of g(s) = s - a - b y sigmoid(-y s) (g' >= 1, root in [a - b, a + b]).

    Safeguarded Newton: a Newton candidate is accepted only inside the current bracket and when it
    at least halves |g|; otherwise the bracket's midpoint is taken. Since g' >= 1, the error of s
    is at most |g(s)|, and the loop stops when |g(s)| <= tol (1 + |s|) (or the bracket is that
    narrow).
    """

    def g_of(s: np.ndarray) -> np.ndarray:
        return s - a - b * y * expit(-y * s)

    lo = a - b
    hi = a + b
    s = a.copy()
    g = g_of(s)
    for _ in range(max_iter):
        lo = np.where(g < 0, s, lo)
        hi = np.where(g > 0, s, hi)
        sig = expit(-y * s)
        cand = s - g / (1.0 + b * sig * (1.0 - sig))
        g_cand = g_of(cand)
        good = (cand > lo) & (cand < hi) & (np.abs(g_cand) <= 0.5 * np.abs(g))
        mid = 0.5 * (lo + hi)
        s = np.where(good, cand, mid)
        g = np.where(good, g_cand, g_of(mid))
        scale = tol * (1.0 + np.abs(s))
        if np.all((np.abs(g) <= scale) | (hi - lo <= scale)):
            break
    return s


# --------------------------------------------------------------------------------------------------
# l2 ball: Lagrange multiplier by bisection
# --------------------------------------------------------------------------------------------------


def _prox_ball(loss: Loss, c: np.ndarray, h: np.ndarray, radius: float, tol: float,
               max_iter: int) -> np.ndarray:
    z = _prox(loss, c, h, tol, max_iter)
    norm = row_norm(z)
    out = norm > radius
    if not np.any(out):
        return z
    if isinstance(loss, LinearLoss):
        # Isotropic quadratic plus a linear term: the constrained optimum is the projection.
        z[out] *= (radius / norm[out])[:, None]
        return z
    cc, hh = c[out], h[out]

    def solve(mu: np.ndarray) -> np.ndarray:
        # argmin 1/2||z - c||^2 + h phi(z) + mu/2 ||z||^2 = prox of h/(1+mu) phi at c/(1+mu).
        return _prox(loss, cc / (1.0 + mu)[:, None], hh / (1.0 + mu), tol, max_iter)

    lo = np.zeros(len(cc))
    hi = np.ones(len(cc))
    for _ in range(_MAX_BRACKET_DOUBLINGS):
        still = row_norm(solve(hi)) > radius
        if not np.any(still):
            break
        hi = np.where(still, 2.0 * hi, hi)
    else:  # pragma: no cover - ||z(mu)|| -> 0 as mu -> inf
        raise RuntimeError("could not bracket the ball multiplier")
    for _ in range(max_iter):
        mid = 0.5 * (lo + hi)
        big = row_norm(solve(mid)) > radius
        lo = np.where(big, mid, lo)
        hi = np.where(big, hi, mid)
        if np.all(hi - lo <= tol * np.maximum(1.0, hi)):
            break
    zz = solve(hi)
    nz = row_norm(zz)
    # z(hi) is feasible up to the bisection width; rescale onto the sphere (||z|| <= radius).
    zz *= np.where(nz > 0, radius / np.maximum(nz, np.finfo(float).tiny), 1.0)[:, None]
    z[out] = zz
    return z


# --------------------------------------------------------------------------------------------------
# Box: scalar multiplier along v by bisection
# --------------------------------------------------------------------------------------------------


def _prox_box(loss: Loss, c: np.ndarray, h: np.ndarray, lower: float, upper: float, tol: float,
              max_iter: int) -> np.ndarray:
    if isinstance(loss, LinearLoss):
        return np.clip(c - h[:, None] * loss.g, lower, upper)
    z = _prox(loss, c, h, tol, max_iter)
    out = row_any((z < lower) | (z > upper))
    if np.any(out):
        # The unconstrained optimum is the constrained one wherever it lies in the box.
        z[out] = _prox_box_active(loss, c[out], h[out], lower, upper, tol, max_iter)
    return z


def _prox_box_active(loss: Loss, c: np.ndarray, h: np.ndarray, lower: float, upper: float,
                     tol: float, max_iter: int) -> np.ndarray:
    v = loss.v
    y = loss.y

    def point(lam: np.ndarray) -> np.ndarray:
        return np.clip(c + lam[:, None] * v, lower, upper)

    def s_of(lam: np.ndarray) -> np.ndarray:
        return point(lam) @ v

    # The optimum is z = clip(c + lam v) with lam = -h phi'(<v, z>) (phi' the derivative of the data
    # term in s = <v, z>); <v, clip(c + lam v)> is non-decreasing in lam, so each equation below is
    # monotone in lam and bisection is exact up to its width.
    if isinstance(loss, HingeLoss):
        # lam = h y theta, theta in [0, 1] a subgradient of max(0, 1 - y s) / (-y); g(theta) =
        # y <v, clip(c + h y theta v)> is non-decreasing in theta.
        def g(theta: np.ndarray) -> np.ndarray:
            return y * s_of(h * y * theta)

        g0 = g(np.zeros(len(c)))
        g1 = g(np.ones(len(c)))
        lo = np.zeros(len(c))
        hi = np.ones(len(c))
        need = (g0 < 1.0) & (g1 > 1.0)
        for _ in range(max_iter):
            if not np.any(need):
                break
            mid = 0.5 * (lo + hi)
            above = g(mid) > 1.0
            lo = np.where(need & ~above, mid, lo)
            hi = np.where(need & above, mid, hi)
            if np.all(~need | (hi - lo <= tol)):
                break
        theta = np.where(g0 >= 1.0, 0.0, np.where(g1 <= 1.0, 1.0, 0.5 * (lo + hi)))
        return point(h * y * theta)

    smin = float(np.sum(np.minimum(v * lower, v * upper)))
    smax = float(np.sum(np.maximum(v * lower, v * upper)))
    if isinstance(loss, SquaredLoss):
        # lam = h (y - s(lam)); F(lam) = lam - h (y - s(lam)) is increasing.
        def F(lam: np.ndarray) -> np.ndarray:
            return lam - h * (y - s_of(lam))

        lo = h * (y - smax)
        hi = h * (y - smin)
    elif isinstance(loss, LogisticLoss):
        # lam = h y sigmoid(-y s(lam)); F(lam) = lam - h y sigmoid(-y s(lam)) is increasing.
        def F(lam: np.ndarray) -> np.ndarray:
            return lam - h * y * expit(-y * s_of(lam))

        lo = -h.copy()
        hi = h.copy()
    else:
        raise TypeError(f"unsupported loss type {type(loss).__name__}")
    for _ in range(max_iter):
        mid = 0.5 * (lo + hi)
        pos = F(mid) > 0
        lo = np.where(pos, lo, mid)
        hi = np.where(pos, mid, hi)
        if np.all(hi - lo <= tol * np.maximum(1.0, np.abs(hi))):
            break
    return point(0.5 * (lo + hi))
