"""Exact epsilon(delta) of a release on one neighbouring pair, computed by dpaudit from the release's
law (AUDIT-METHOD section 2, evidence 1), for the families users ship.

:class:`LinearGaussian` (a linear map of the data plus Gaussian noise of any covariance: tree
aggregation, DP-FTRL, matrix factorization) is one Gaussian mechanism with shift
``mu = ||Sigma^{-1/2} (m(D) - m(D'))||_2`` (Dong, Roth & Su 2022, Cor. 3.3), in the closed form
of Balle & Wang (2018, Thm 8). :class:`ProductLaplace` (independent Laplace noise per coordinate)
is exactly ``sum_i |s_i| / b_i`` at delta = 0 and bracketed by dp-accounting's optimistic and
pessimistic PLDs otherwise. :class:`DiscreteLaw` (a probability table per input) inverts the
exact hockey-stick divergence by bisection. Each ``epsilon`` returns an :class:`ExactValue` (the
value, whether it is exact or a certified lower end, and an upper value); a user-supplied value
carries ``kind="user-supplied"`` and is labelled so in every output.

Each family's accuracy: docs/formal-notes.md#exact-laws.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Mapping

import numpy as np

from dpaudit._validation import check_delta
from dpaudit.evidence import CERTIFIED, EXACT, USER_SUPPLIED
from dpaudit.formal.accounting import epsilon_of_event, gaussian_epsilon

__all__ = ["ExactValue", "LinearGaussian", "ProductLaplace", "DiscreteLaw", "USER_SUPPLIED"]

# ``USER_SUPPLIED`` (from dpaudit.evidence): ``ExactValue.kind`` of a number the user computed.


@dataclass(frozen=True)
class ExactValue:
    """epsilon(delta) of a release on one pair: ``value`` (exact, or the certified lower end of a
    bracket when ``kind`` is :data:`~dpaudit.evidence.CERTIFIED`), ``upper`` (an upper
    value for the same pair), ``method`` (how it was computed)."""

    value: float
    kind: str
    upper: float
    method: str


def _vector(x: Any, what: str) -> np.ndarray:
    arr = np.asarray(x, dtype=np.float64).reshape(-1)
    if arr.size == 0 or not np.all(np.isfinite(arr)):
        raise ValueError(f"{what} must return a non-empty array of finite numbers")
    return arr


@dataclass(frozen=True)
class LinearGaussian:
    """A release ``mean(data) + N(0, Sigma)``.

    ``mean(data) -> array``: the noise-free release (any shape; flattened); ``sigma``: the noise
    standard deviation of every coordinate (isotropic noise), or ``covariance``: the full covariance
    matrix of the flattened noise (correlated noise, e.g. ``B B^T`` for a matrix-factorization
    mechanism ``A x + B z``). Exactly one of the two.
    """

    mean: Callable[[Any], Any]
    sigma: float | None = None
    covariance: Any = None

    def __post_init__(self) -> None:
        if not callable(self.mean):
            raise TypeError("mean must be callable as mean(data) -> array")
        if (self.sigma is None) == (self.covariance is None):
            raise ValueError("give exactly one of sigma (isotropic noise) and covariance")
        if self.sigma is not None and not (math.isfinite(self.sigma) and self.sigma > 0):
            raise ValueError(f"sigma must be finite and > 0, got {self.sigma!r}")
        if self.covariance is not None:
            cov = np.asarray(self.covariance, dtype=np.float64)
            if cov.ndim != 2 or cov.shape[0] != cov.shape[1] or not np.all(np.isfinite(cov)):
                raise ValueError("covariance must be a finite square matrix")
            if not np.allclose(cov, cov.T, rtol=1e-10, atol=1e-12):
                raise ValueError("covariance must be symmetric")

    def mu(self, data0: Any, data1: Any) -> float:
        """The Gaussian-DP shift of the pair (infinite when the shift leaves the noise's span)."""
        shift = _vector(self.mean(data0), "mean") - _vector(self.mean(data1), "mean")
        if self.sigma is not None:
            return float(np.linalg.norm(shift) / self.sigma)
        cov = np.asarray(self.covariance, dtype=np.float64)
        if cov.shape[0] != shift.size:
            raise ValueError(f"covariance is {cov.shape[0]} x {cov.shape[0]} but mean(data) has "
                             f"{shift.size} entries")
        w, v = np.linalg.eigh(cov)
        if w.min() < -1e-9 * max(1.0, w.max()):
            raise ValueError("covariance must be positive semi-definite")
        coef = v.T @ shift
        tol = 1e-12 * max(1.0, float(w.max()))
        null = w <= tol
        if np.any(np.abs(coef[null]) > 1e-9 * max(1.0, float(np.abs(coef).max()))):
            return math.inf  # part of the shift sees no noise: the pair is distinguishable
        return float(math.sqrt(float(np.sum(coef[~null] ** 2 / w[~null]))))

    def epsilon(self, data0: Any, data1: Any, delta: float) -> ExactValue:
        delta = check_delta(delta)
        mu = self.mu(data0, data1)
        if math.isinf(mu):
            return ExactValue(math.inf, EXACT, math.inf, "Gaussian shift outside the noise span")
        if delta == 0.0:
            eps = math.inf if mu > 0 else 0.0
        else:
            eps = gaussian_epsilon(mu, delta) if mu > 0 else 0.0
        return ExactValue(eps, EXACT, eps, f"Gaussian mechanism with mu = {mu:.6g} (Balle & Wang "
                                           "2018, Thm 8)")


@dataclass(frozen=True)
class ProductLaplace:
    """A release ``mean(data) + Laplace(0, scale)`` with independent coordinates (``scale`` a
    number or one per coordinate)."""

    mean: Callable[[Any], Any]
    scale: Any

    def __post_init__(self) -> None:
        if not callable(self.mean):
            raise TypeError("mean must be callable as mean(data) -> array")
        b = np.asarray(self.scale, dtype=np.float64)
        if b.size == 0 or not np.all(np.isfinite(b)) or np.any(b <= 0):
            raise ValueError("scale must be finite and > 0")

    def epsilon(self, data0: Any, data1: Any, delta: float) -> ExactValue:
        import dp_accounting

        delta = check_delta(delta)
        shift = np.abs(_vector(self.mean(data0), "mean") - _vector(self.mean(data1), "mean"))
        b = np.broadcast_to(np.asarray(self.scale, dtype=np.float64).reshape(-1), shift.shape)
        ratios = shift / b
        pure = float(np.sum(ratios))
        if delta == 0.0 or pure == 0.0:
            return ExactValue(pure, EXACT, pure, "sum of |shift_i| / b_i (pure Laplace)")
        pieces = [r for r in ratios if r > 0]
        event = dp_accounting.ComposedDpEvent(
            [dp_accounting.LaplaceDpEvent(1.0 / r) for r in pieces])
        upper = min(pure, epsilon_of_event(event, delta, method="pld"))
        lower = _optimistic_laplace_epsilon(pieces, delta)
        return ExactValue(min(lower, upper), CERTIFIED, upper,
                          "optimistic / pessimistic privacy-loss distributions of the "
                          f"{len(pieces)} Laplace coordinates (dp-accounting)")


def _optimistic_laplace_epsilon(ratios: list[float], delta: float) -> float:
    """A lower bound on epsilon(delta) of the composed Laplace pieces (optimistic PLDs)."""
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    h = max(1e-5, min(1e-3, min(ratios) / 100.0))
    pld = None
    for r in ratios:
        piece = pld_lib.from_laplace_mechanism(1.0 / r, sensitivity=1.0,
                                               value_discretization_interval=h,
                                               pessimistic_estimate=False)
        pld = piece if pld is None else pld.compose(piece)
    assert pld is not None
    # The optimistic PLD under-reports delta(eps) by up to one grid step of loss per piece; its
    # epsilon(delta) is therefore a lower bound up to that step, which is subtracted.
    return max(0.0, float(pld.get_epsilon_for_delta(delta)) - h * len(ratios))


@dataclass(frozen=True)
class DiscreteLaw:
    """A release with finitely many outcomes: ``pmf(data) -> {outcome: probability}`` (outcomes
    hashable; probabilities >= 0 summing to 1 within 1e-9)."""

    pmf: Callable[[Any], Mapping[Any, float]]

    def __post_init__(self) -> None:
        if not callable(self.pmf):
            raise TypeError("pmf must be callable as pmf(data) -> {outcome: probability}")

    def _table(self, data: Any) -> dict[Any, float]:
        table = dict(self.pmf(data))
        probs = np.asarray(list(table.values()), dtype=np.float64)
        if probs.size == 0 or not np.all(np.isfinite(probs)) or np.any(probs < 0):
            raise ValueError("pmf must return finite probabilities >= 0")
        if abs(float(probs.sum()) - 1.0) > 1e-9:
            raise ValueError(f"pmf probabilities must sum to 1, got {float(probs.sum())!r}")
        return table

    def hockey_stick(self, data0: Any, data1: Any, epsilon: float) -> float:
        """``delta(epsilon)``: the larger of the two orders' hockey-stick divergences."""
        p, q = self._table(data0), self._table(data1)
        keys = set(p) | set(q)
        a = np.array([p.get(k, 0.0) for k in keys])
        b = np.array([q.get(k, 0.0) for k in keys])
        e = math.exp(min(epsilon, 700.0))
        return float(max(np.maximum(a - e * b, 0).sum(), np.maximum(b - e * a, 0).sum()))

    def epsilon(self, data0: Any, data1: Any, delta: float) -> ExactValue:
        delta = check_delta(delta)
        p, q = self._table(data0), self._table(data1)
        keys = set(p) | set(q)
        a = np.array([p.get(k, 0.0) for k in keys])
        b = np.array([q.get(k, 0.0) for k in keys])
        if delta == 0.0:
            if np.any((a > 0) != (b > 0)):
                eps = math.inf
            else:
                m = a > 0
                eps = float(np.max(np.abs(np.log(a[m]) - np.log(b[m])))) if m.any() else 0.0
            return ExactValue(eps, EXACT, eps, "largest log probability ratio")
        if self.hockey_stick(data0, data1, 0.0) <= delta:
            return ExactValue(0.0, EXACT, 0.0, "hockey-stick divergence at epsilon 0")
        lo, hi = 0.0, 1.0
        while self.hockey_stick(data0, data1, hi) > delta:
            lo, hi = hi, hi * 2
            if hi > 700:
                return ExactValue(math.inf, EXACT, math.inf, "delta(eps) > delta for every eps")
        for _ in range(100):
            mid = 0.5 * (lo + hi)
            if self.hockey_stick(data0, data1, mid) > delta:
                lo = mid
            else:
                hi = mid
        # delta(lo) > delta >= delta(hi): the exact epsilon lies in (lo, hi], hi - lo ~ 1e-16.
        return ExactValue(hi, EXACT, hi, "hockey-stick divergence of the two probability tables, "
                                         "bisection")
