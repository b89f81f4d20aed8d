"""An independent few-line computation for the afkt23 tests: the halting law of a sparse vector.

Threshold ``rho ~ Laplace(b1)`` (centred at 0), query ``i`` fires iff ``v_i + nu_i >= rho`` with
``nu_i ~ Laplace(b2)``; the law of the first query that fires (entries ``0..n-1``, and ``n`` for
"never") by quadrature over ``rho``, split at the breakpoints of the integrand. Written here, not
imported from dpaudit, so the tests that use it check the engine against a separate derivation.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import integrate


def laplace_cdf(z: float, b: float) -> float:
    """CDF of Laplace(0, b) at z."""
    return 0.5 * math.exp(z / b) if z < 0 else 1.0 - 0.5 * math.exp(-z / b)


def halting_law(v, b1: float, b2: float) -> np.ndarray:
    """``P[first firing query = k]`` for ``k = 0..n-1`` and ``P[none fires]`` at index ``n``."""
    v = [float(x) for x in v]
    n = len(v)
    brk = sorted({0.0, *v})
    pts = [brk[0] - 60 * b2] + brk + [brk[-1] + 60 * b1]

    def f(r: float, k: int) -> float:
        val = math.exp(-abs(r) / b1) / (2 * b1)
        for i in range(min(k, n)):
            val *= laplace_cdf(r - v[i], b2)
        return val * ((1.0 - laplace_cdf(r - v[k], b2)) if k < n else 1.0)

    return np.array([sum(integrate.quad(f, a, b, args=(k,), epsabs=1e-15, epsrel=1e-12,
                                        limit=200)[0]
                         for a, b in zip(pts[:-1], pts[1:])) for k in range(n + 1)])
