"""Exact samplers of the discrete Laplace and discrete Gaussian distributions, and their privacy.

Floating-point Laplace and Gaussian samplers are not exactly DP (Mironov, CCS 2012;
:mod:`dpaudit.formal.floating_point` exhibits the outputs); releasing ``g (k + Z)`` with ``k`` the
answer in units of the granularity ``g`` and ``Z`` an integer drawn exactly avoids it. An integer
shift of ``Delta`` units is exactly ``(Delta / t)``-DP under the discrete Laplace ``Lap_Z(t)``
and ``Delta^2 / (2 s^2)``-zCDP under the discrete Gaussian ``N_Z(0, s^2)``, whose exact
delta(epsilon) is :func:`discrete_gaussian_delta`. Source: C. Canonne, G. Kamath, T. Steinke,
*The Discrete Gaussian for Differential Privacy*, NeurIPS 2020 (arXiv:2004.00010 v5), Algorithms
1-3, Theorem 7 / Corollary 9. Every Bernoulli of rational ``p = a / b`` is
``rng.integers(0, b) < a``, vectorised over runs; scales are rationals rounded up (never less
noise than asked), with every integer below 2^62.

The two laws and the sampling in full: docs/paper-readings.md#discrete-noise.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from dpaudit._validation import check_generator, check_int, check_positive

__all__ = ["rational_at_least", "bernoulli_exp_neg", "sample_discrete_laplace",
           "sample_discrete_gaussian", "discrete_laplace_pmf", "discrete_gaussian_pmf",
           "discrete_gaussian_delta", "discrete_gaussian_sigma_for", "grid_units",
           "rational_sigma2", "MAX_UNITS"]

_INT_LIMIT = 1 << 62
#: Largest noise scale in grid units (scale / granularity) the exact samplers accept.
MAX_UNITS = float(1 << 15)


def rational_at_least(x: float, name: str, max_den: int = 1 << 16) -> Fraction:
    """The smallest fraction with denominator ``max_den`` that is >= ``x`` (reduced)."""
    x = check_positive(x, name)
    if x > MAX_UNITS:
        raise ValueError(f"{name} must be at most {MAX_UNITS:g} grid units for exact sampling, got "
                         f"{x!r}; use a larger granularity")
    exact = Fraction(x)
    if exact.denominator <= max_den:
        return exact
    return Fraction(math.ceil(exact * max_den), max_den)


def grid_units(value: float, granularity: float, name: str) -> float:
    """``value / granularity`` checked to be a positive finite number of grid units."""
    units = value / granularity
    if not (math.isfinite(units) and units > 0):
        raise ValueError(f"{name} / granularity = {units!r} must be positive and finite")
    return units


def bernoulli_exp_neg(num: np.ndarray, den: int, rng: np.random.Generator) -> np.ndarray:
    """Exact Bernoulli(exp(-num / den)) draws, one per entry of the int64 array ``num`` >= 0.

    CKS20 Algorithm 1: for gamma in [0, 1], draw A_k ~ Bernoulli(gamma / k) for k = 1, 2, ...
    until one is 0; the result is 1 iff that k is odd. For gamma > 1, the product of floor(gamma)
    Bernoulli(exp(-1)) draws and one Bernoulli(exp(-(gamma - floor(gamma)))). Bernoulli(gamma / k)
    is Bernoulli(gamma) and Bernoulli(1 / k) drawn independently, so no product of integers grows.
    """
    num = np.asarray(num, dtype=np.int64)
    if den <= 0 or den >= _INT_LIMIT or np.any(num < 0):
        raise ValueError("bernoulli_exp_neg needs num >= 0 and 0 < den < 2^62")
    whole, frac = np.divmod(num, den)
    out = np.ones(num.shape, dtype=bool)
    # floor(gamma) draws of Bernoulli(exp(-1)), while still 1.
    left = whole.copy()
    active = np.flatnonzero(left > 0)
    while active.size:
        b = _bernoulli_exp_neg_unit(np.ones(active.size, np.int64), 1, rng)
        out[active] &= b
        left[active] -= 1
        active = active[(left[active] > 0) & out[active]]
    idx = np.flatnonzero(out)
    if idx.size:
        out[idx] = _bernoulli_exp_neg_unit(frac[idx], den, rng)
    return out


def _bernoulli_exp_neg_unit(num: np.ndarray, den: int, rng: np.random.Generator) -> np.ndarray:
    """Bernoulli(exp(-gamma)) for gamma = num / den in [0, 1] (CKS20 Algorithm 1, first part)."""
    k = np.ones(num.shape, dtype=np.int64)
    undecided = np.arange(num.size)
    while undecided.size:
        a = (rng.integers(0, den, size=undecided.size) < num[undecided])
        a &= rng.integers(0, k[undecided]) == 0  # Bernoulli(1 / k)
        k[undecided[a]] += 1
        undecided = undecided[a]
    return (k % 2) == 1


def sample_discrete_laplace(t: Fraction, size: int, rng: np.random.Generator) -> np.ndarray:
    """``size`` exact draws of ``Lap_Z(t)`` for a rational scale ``t > 0`` (CKS20 Algorithm 2)."""
    size = check_int(size, "size", minimum=0)
    rng = check_generator(rng)
    t = Fraction(t)
    if t <= 0:
        raise ValueError(f"t must be > 0, got {t}")
    s_den, t_num = t.denominator, t.numerator   # scale t_num / s_den: CKS20's t/s
    out = np.empty(size, dtype=np.int64)
    todo = np.arange(size)
    while todo.size:
        m = todo.size
        u = rng.integers(0, t_num, size=m)
        ok = bernoulli_exp_neg(u, t_num, rng)
        v = np.zeros(m, dtype=np.int64)
        going = np.flatnonzero(ok)
        while going.size:  # V ~ Geometric: count Bernoulli(exp(-1)) successes
            b = bernoulli_exp_neg(np.ones(going.size, np.int64), 1, rng)
            v[going[b]] += 1
            going = going[b]
        y = (u + t_num * v) // s_den
        neg = rng.integers(0, 2, size=m) == 1
        accept = ok & ~(neg & (y == 0))
        out[todo[accept]] = np.where(neg, -y, y)[accept]
        todo = todo[~accept]
    return out


def sample_discrete_gaussian(sigma2: Fraction, size: int, rng: np.random.Generator) -> np.ndarray:
    """``size`` exact draws of ``N_Z(0, sigma2)`` for rational ``sigma2 > 0`` (CKS20 Alg. 3)."""
    size = check_int(size, "size", minimum=0)
    rng = check_generator(rng)
    sigma2 = Fraction(sigma2)
    if sigma2 <= 0:
        raise ValueError(f"sigma2 must be > 0, got {sigma2}")
    t = math.isqrt(sigma2.numerator // sigma2.denominator) + 1  # floor(sigma) + 1
    p, q = sigma2.numerator, sigma2.denominator
    den = 2 * p * q * t * t   # gamma = (|Y| q t - p)^2 / (2 p q t^2)
    if den >= _INT_LIMIT:
        raise ValueError("sigma2 is too large (or its denominator too fine) for exact sampling")
    out = np.empty(size, dtype=np.int64)
    todo = np.arange(size)
    while todo.size:
        y = sample_discrete_laplace(Fraction(t), todo.size, rng)
        # |Y| q t < 2^31 keeps every product below 2^62; larger |Y| (probability below e^-2^15
        # for the accepted scales) are rejected, which changes the law by less than that.
        keep = np.abs(y) < (1 << 31) // (q * t)
        diff = np.where(keep, np.abs(y) * (q * t) - p, 0)
        num = diff * diff
        accept = np.zeros(y.size, dtype=bool)
        idx = np.flatnonzero(keep)
        accept[idx] = bernoulli_exp_neg(num[idx], den, rng)
        out[todo[accept]] = y[accept]
        todo = todo[~accept]
    return out


def rational_sigma2(sigma_units: float) -> Fraction:
    """``sigma_units^2`` as a fraction >= it whose CKS20 Algorithm 3 integers stay below 2^62."""
    sigma_units = check_positive(sigma_units, "sigma / granularity")
    if sigma_units > MAX_UNITS / 2:
        raise ValueError(f"sigma / granularity must be at most {MAX_UNITS / 2:g} for exact "
                         f"sampling, got {sigma_units!r}; use a larger granularity")
    max_den = max(1, min(1 << 16, math.isqrt(int(2**58 / (sigma_units + 2) ** 4))))
    exact = Fraction(sigma_units) ** 2
    if exact.denominator <= max_den:
        return exact
    return Fraction(math.ceil(exact * max_den), max_den)


def discrete_laplace_pmf(z: Any, t: float) -> np.ndarray:
    """Exact ``P[Z = z]`` of ``Lap_Z(t)``: ``tanh(1 / (2 t)) e^{-|z| / t}``."""
    z = np.asarray(z)
    return math.tanh(0.5 / t) * np.exp(-np.abs(z) / t)


def _gaussian_support(sigma: float, shift: int = 0) -> np.ndarray:
    half = int(math.ceil(40.0 * sigma)) + abs(shift) + 2
    return np.arange(-half, half + 1)


def discrete_gaussian_pmf(z: Any, sigma: float) -> np.ndarray:
    """``P[Z = z]`` of ``N_Z(0, sigma^2)``, normalised over +-40 sigma (the rest is < 1e-300)."""
    support = _gaussian_support(sigma)
    norm = np.exp(-support.astype(float) ** 2 / (2 * sigma * sigma)).sum()
    z = np.asarray(z, dtype=float)
    return np.exp(-z * z / (2 * sigma * sigma)) / norm


def discrete_gaussian_delta(epsilon: float, sigma: float, shift: int) -> float:
    """Exact delta(epsilon) of ``N_Z(0, sigma^2)`` under an integer shift (hockey stick).

    ``delta = sum_z max(0, P[Z = z] - e^eps P[Z + shift = z])``, the tight delta of the pair
    (the loss distribution is symmetric in the two directions; CKS20 Theorem 7 gives the same
    value in closed form).
    """
    support = _gaussian_support(sigma, shift)
    p = discrete_gaussian_pmf(support, sigma)
    q = discrete_gaussian_pmf(support - shift, sigma)
    return float(np.maximum(0.0, p - math.exp(epsilon) * q).sum())


def discrete_gaussian_sigma_for(epsilon: float, delta: float, sensitivity: float,
                                granularity: float) -> float:
    """The smallest sigma (on a 1e-6 relative grid, rounded up) at which the discrete Gaussian
    on grid ``granularity`` is (epsilon, delta)-DP for a shift of ``ceil(sensitivity / g)`` units."""
    from scipy import optimize

    shift = int(math.ceil(grid_units(sensitivity, granularity, "sensitivity") - 1e-9))

    def gap(s_units: float) -> float:
        return discrete_gaussian_delta(epsilon, s_units, shift) - delta

    hi = max(1.0, shift / max(epsilon, 1e-3)) * 4.0
    while gap(hi) > 0:
        hi *= 2
    lo = hi / 2
    while gap(lo) <= 0 and lo > 1e-3:
        lo /= 2
    root = optimize.brentq(gap, lo, hi, xtol=1e-12, rtol=1e-10)
    return root * (1 + 1e-6) * granularity
