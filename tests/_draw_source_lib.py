"""A stand-in for a DP library that draws from numpy's global RNG or a RandomState it is handed
(tests/test_draw_sources.py): the noise lines are here, not in the test's glue."""

import numpy as np
from numpy.random import normal as _bound_normal  # bound at import: invisible to the patch


def noisy_sum(x, n, sigma):
    return float(np.clip(x, 0, 1).sum()) + np.random.normal(0.0, sigma, size=n)  # NOISE-GLOBAL


def noisy_sum_rs(x, n, sigma, random_state):
    return float(np.clip(x, 0, 1).sum()) + random_state.normal(0.0, sigma, size=n)  # NOISE-RS


def noisy_sum_bound(x, n, sigma):
    return float(np.clip(x, 0, 1).sum()) + _bound_normal(0.0, sigma, size=n)
