"""The noise factor that would bring a user claim's derived law to its claim.

A law derived from the code (:class:`dpaudit.greybox.derivation.PairLaw`) is ``m_b + A z`` on the
two inputs of a pair, ``z`` i.i.d. standard Gaussian or Laplace. Multiplying every draw's scale by
``r`` replaces ``A`` by ``r A``; the pair's exact epsilon at ``delta`` then falls monotonically in
``r`` (for the Gaussian it depends on ``mu / r`` alone, Dong, Roth & Su 2022, Cor. 3.3; for the
Laplace product it is ``sum_i |s_i| / r`` at ``delta = 0``, Dwork & Roth 2014, Thm 3.6). The
smallest ``r`` at which it reaches the claim is found by bisection on the exact epsilon itself.

It is a *lower* bound on the factor the release needs: it makes this pair's epsilon equal the claim,
and a pair the audit did not see may need more. The recommendation says so.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

__all__ = ["noise_factor", "recommendation", "DerivedLawRecommendation", "MAX_FACTOR"]

#: Largest factor searched; above it the recommendation says the claim is out of reach of noise.
MAX_FACTOR = 1e6


def _scaled(pair: Any, r: float) -> Any:
    return type(pair)(replace(pair.law0, A=pair.law0.A * r), replace(pair.law1, A=pair.law1.A * r))


def noise_factor(pair: Any, epsilon: float, delta: float, *, rtol: float = 1e-6) -> float | None:
    """Smallest ``r >= 1`` with ``scaled(pair, r).epsilon(delta) <= epsilon`` (to ``rtol``).

    ``None`` when no finite factor can (the shapes differ, the shift leaves the noise's span, or
    more than :data:`MAX_FACTOR` is needed); ``1.0`` when the pair already meets the claim.
    """
    if not math.isfinite(epsilon) or epsilon < 0:
        raise ValueError(f"epsilon must be a finite number >= 0, got {epsilon!r}")
    if pair.shapes_differ:
        return None

    def eps(r: float) -> float:
        return float(pair.epsilon(delta).value) if r == 1.0 else float(
            _scaled(pair, r).epsilon(delta).value)

    if eps(1.0) <= epsilon:
        return 1.0
    lo, hi = 1.0, 2.0
    while eps(hi) > epsilon:
        lo, hi = hi, hi * 2.0
        if hi > MAX_FACTOR:
            return None
    while hi - lo > rtol * hi:
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if eps(mid) > epsilon else (lo, mid)
    return hi


def recommendation(pair: Any, exact: float, epsilon: float, delta: float) -> str | None:
    """The sentence for the verdict box, or ``None`` when no noise factor is found."""
    r = noise_factor(pair, epsilon, delta)
    if r is None or r <= 1.0:
        return None
    return (f"Multiply the scale of every noise draw by at least {r:.4g} (the release's "
            f"{pair.family} noise, as derived from the code): that brings the exact epsilon of the "
            f"audited pair from {exact:.4g} to the claimed {epsilon:g} at delta {delta:g}. It is a "
            "lower bound on the factor needed: a neighbouring pair the audit did not see may need "
            "more, so recalibrate to the release's sensitivity rather than to this number.")


class DerivedLawRecommendation:
    """A point plan's ``recommendation`` resting on a law derived from the code: the
    verification of that law drops it with the exact value it rejects or leaves unconfirmed
    (``rests_on_derived_law``), so no recommendation outlives the law it was computed from."""

    rests_on_derived_law = True

    def __init__(self, pair: Any, exact: float, epsilon: float, delta: float):
        self.pair, self.exact, self.epsilon, self.delta = pair, exact, epsilon, delta

    def __call__(self) -> str | None:
        return recommendation(self.pair, self.exact, self.epsilon, self.delta)
