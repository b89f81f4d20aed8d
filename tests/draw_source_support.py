"""What the grey-box tests share: the Gaussian calibration their releases use, and the claim
they audit (one record per source module, so the hostile releases are written once per source
but judged by the same claim).

The calibration is independent of dpaudit: the Gaussian mechanism's exact privacy curve
(Balle & Wang 2018, Theorem 8) solved with scipy, so every expected epsilon below is derived
by hand, not read from the engine.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from scipy import optimize, stats

import dpaudit

DELTA = 1e-5


def gaussian_delta(mu: float, eps: float) -> float:
    """delta(eps) of a Gaussian shift of mu standard deviations (Balle & Wang 2018, Thm 8)."""
    return float(stats.norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * stats.norm.cdf(-eps / mu - mu / 2))


def gaussian_eps(mu: float, delta: float) -> float:
    """The smallest eps with gaussian_delta(mu, eps) <= delta."""
    return optimize.brentq(lambda e: gaussian_delta(mu, e) - delta, 0.0, 200.0, xtol=1e-13)


#: The noise scale at which a sum of sensitivity 1 is exactly (1, DELTA)-DP.
SIGMA = optimize.brentq(lambda s: gaussian_eps(1.0 / s, DELTA) - 1.0, 1.0, 20.0, xtol=1e-13)
MU = 1.0 / SIGMA


def line_of(path: str, tag: str) -> int:
    """The line of ``path`` that carries the comment ``tag`` (a release's noise site)."""
    with open(path) as f:
        return next(i for i, t in enumerate(f, 1) if tag in t)


def noisy_sum_claim(prefix: str, title: str) -> Callable[..., dpaudit.Claim]:
    """A builder of the claim "the noisy clipped sum is (1, 1e-5)-DP" for one release."""
    def claim(name: str, mechanism: Callable[..., Any], pairs=None, accountant=None,
              claimed=(1.0, DELTA)) -> dpaudit.Claim:
        return dpaudit.Claim(
            id=f"{prefix}/{name}", statement="The noisy clipped sum is (1, 1e-5)-DP.",
            source=dpaudit.Source(title=title), claimed=lambda p: claimed,
            neighbours="add-remove", grid=[{}], release=lambda p: mechanism,
            pairs=pairs or (lambda p: [([1.0, 1.0], [1.0])]),
            accountant=accountant or (lambda p: dpaudit.noise.GaussianNoise(SIGMA, sensitivity=1.0)))
    return claim
