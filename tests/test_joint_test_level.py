"""The exact joint test's level at a realistic n, by exact enumeration.

All count pairs ``(x, y)`` of an ``n_p x n_q`` table are decided by the module's bound itself
(:func:`dpaudit.blackbox.joint_test.joint_epsilon_lower_bound`); the size
``P[bound > eps0]`` is then summed exactly with scipy's binomial pmfs at points of the null's
boundary ``p = min(1, e^eps0 q + delta)`` over a fine grid of the nuisance ``q`` (log-spaced near
0, where the boundary is steepest, then linear) and several ``eps0``. No sampling: a valid
``(1 - alpha)`` bound keeps every size at or below ``alpha`` (margin 1e-9 for the float sums).

Two exact shortcuts, both read off the module's definition of the bound, spare computing it
where it is known: the bound is 0 when the statistic ``T(x, y) <= 0`` and at least ``T`` always,
so pairs with ``T`` beyond the largest ``eps0`` reject at every ``eps0``. Pairs within 1e-9 of
either cut are computed anyway (``T`` is recomputed here vectorised and may differ by an ulp).
"""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
from scipy import stats

from dpaudit.blackbox.confidence import (Bonferroni, clopper_pearson_lower,
                                         clopper_pearson_upper)
from dpaudit.blackbox.joint_test import GAMMA_FRACTION, joint_epsilon_lower_bound

EPS0 = (0.0, 0.25, 0.5, 1.0)
QGRID = np.unique(np.r_[np.geomspace(1e-5, 0.05, 400), np.linspace(0.05, 0.999, 800)])


def enumerate_bounds(n_p: int, n_q: int, delta: float, alpha: float) -> np.ndarray:
    """The bound at every pair (x, y); ``inf`` where it is known to exceed every ``EPS0``."""
    a = Bonferroni(alpha - alpha * GAMMA_FRACTION).per_interval_alpha  # as the module
    lo = np.asarray(clopper_pearson_lower(np.arange(n_p + 1), n_p, a), dtype=float)
    hi = np.asarray(clopper_pearson_upper(np.arange(n_q + 1), n_q, a), dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(lo[:, None] > delta, np.log((lo[:, None] - delta) / hi[None, :]), -np.inf)
    out = np.where(t > max(EPS0) + 1e-9, np.inf, 0.0)
    for x, y in zip(*np.nonzero((t > -1e-9) & (t <= max(EPS0) + 1e-9))):
        out[x, y] = joint_epsilon_lower_bound(int(x), n_p, int(y), n_q, delta, alpha)
    return out


def exact_size(bounds: np.ndarray, eps0: float, delta: float) -> float:
    """max over QGRID of the exact P[bound > eps0] at (min(1, e^eps0 q + delta), q)."""
    n_p, n_q = bounds.shape[0] - 1, bounds.shape[1] - 1
    qs = QGRID[QGRID * math.exp(eps0) + delta <= 1.0]
    ps = np.minimum(1.0, math.exp(eps0) * qs + delta)
    px = stats.binom.pmf(np.arange(n_p + 1)[None, :], n_p, ps[:, None])
    py = stats.binom.pmf(np.arange(n_q + 1)[None, :], n_q, qs[:, None])
    reject = (bounds > eps0).astype(float)
    return float(np.max(np.einsum("qi,ij,qj->q", px, reject, py)))


@pytest.mark.slow
@pytest.mark.parametrize("n_p,n_q,delta,alpha", [
    (300, 300, 0.0, 0.05), (300, 300, 0.01, 0.05), (300, 300, 0.0, 0.2),
    (300, 300, 0.01, 0.2), (300, 200, 0.001, 0.05)])
def test_exact_level_n300(n_p, n_q, delta, alpha):
    # Exact: every pair of a 301 x 301 (or 301 x 201) table; 1,200 nuisance values x 4 eps0.
    # Cost: 2-6 min per case on the shared 2-core machine (the bound at ~10 ms per pair).
    start = time.process_time()
    bounds = enumerate_bounds(n_p, n_q, delta, alpha)
    sizes = {e: exact_size(bounds, e, delta) for e in EPS0}
    computed = int(np.sum(np.isfinite(bounds) & (bounds > 0)))
    print(f"\nn_p {n_p} n_q {n_q} delta {delta} alpha {alpha}: exact size per eps0 "
          + ", ".join(f"{e}: {s:.4f}" for e, s in sizes.items())
          + f"; max {max(sizes.values()):.4f} ({computed} bounds > 0 computed, "
          f"{time.process_time() - start:.0f} s CPU)")
    assert max(sizes.values()) <= alpha + 1e-9
