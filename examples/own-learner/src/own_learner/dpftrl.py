"""DP-FTRL on linear losses, written the way a practitioner would: plain numpy, no dpaudit.

The learner releases ``x_t = -eta * S_t`` for t = 1..T, where ``S_t`` is a private estimate of the
prefix sum of clipped gradients ``sum_{s <= t} clip_C(g_s)`` from binary tree aggregation (Kairouz
et al., ICML 2021, Alg. 1 without projection): every node of the tree over the T rounds holds the
sum of its leaves plus Gaussian noise N(0, sigma^2 I), drawn once per node; ``S_t`` is the sum of
the nodes of the binary decomposition of [1, t].

Calibration (the design doc's Sec. 3): under replace-one neighbours a record (one gradient) moves
each of the ``depth = ceil(log2 T) + 1`` nodes on its leaf's path by at most ``2 C``, so the vector
of node sums has l2 sensitivity ``2 C sqrt(depth)``, and the Gaussian mechanism with
``sigma = Delta sqrt(2 ln(1.25 / delta)) / eps`` is (eps, delta)-DP for eps <= 1 (Dwork & Roth
2014, Thm A.1). The whole trajectory is post-processing of the node sums.

``VARIANTS`` holds the correct version and three classic bugs:

* ``"addremove"``: the sensitivity taken as ``C sqrt(depth)``, the add/remove value, while the
  claim is stated under replace-one;
* ``"noclip"``: the clip is missing;
* ``"redraw"``: node noise redrawn at every query instead of once per node.
"""

from __future__ import annotations

import math

import numpy as np

VARIANTS = ("correct", "addremove", "noclip", "redraw")


def depth(T: int) -> int:
    """Nodes on a leaf's path: ceil(log2 T) + 1."""
    return max(1, math.ceil(math.log2(T))) + 1 if T > 1 else 1


def decomposition(t: int) -> list[tuple[int, int]]:
    """Nodes (level, index) of the binary decomposition of rounds [1, t]: node (l, j) covers
    rounds j * 2^l + 1 .. (j + 1) * 2^l."""
    nodes, start = [], 0
    for level in reversed(range(t.bit_length())):
        if t & (1 << level):
            nodes.append((level, start >> level))
            start += 1 << level
    return nodes


def sigma_for(epsilon: float, delta: float, clip: float, T: int, variant: str) -> float:
    """The design doc's noise scale (the add/remove bug uses C instead of 2C)."""
    per_node = clip if variant == "addremove" else 2.0 * clip
    sensitivity = per_node * math.sqrt(depth(T))
    return sensitivity * math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon


def clip_rows(grads: np.ndarray, clip: float) -> np.ndarray:
    norms = np.linalg.norm(grads, axis=-1, keepdims=True)
    return grads * np.minimum(1.0, clip / np.maximum(norms, 1e-300))


def noise_free(grads: np.ndarray, *, clip: float, eta: float, variant: str) -> np.ndarray:
    """The release without noise: ``-eta`` times the prefix sums of the (clipped) gradients."""
    g = np.asarray(grads, dtype=float)
    if variant != "noclip":
        g = clip_rows(g, clip)
    return -eta * np.cumsum(g, axis=0)


def dp_ftrl(grads: np.ndarray, n: int, rng: np.random.Generator, *, epsilon: float,
            delta: float, clip: float, eta: float, variant: str = "correct") -> np.ndarray:
    """``n`` independent runs of DP-FTRL on ``grads`` (shape (T, d)); returns (n, T, d)."""
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
    g = np.asarray(grads, dtype=float)
    T, d = g.shape
    if variant != "noclip":
        g = clip_rows(g, clip)
    sigma = sigma_for(epsilon, delta, clip, T, variant)
    prefix_of_leaves = np.vstack([np.zeros((1, d)), np.cumsum(g, axis=0)])
    noise: dict[tuple[int, int], np.ndarray] = {}
    out = np.empty((n, T, d))
    for t in range(1, T + 1):
        total = np.zeros((n, d))
        for level, j in decomposition(t):
            lo, hi = j << level, (j + 1) << level
            node_sum = prefix_of_leaves[hi] - prefix_of_leaves[lo]
            if variant == "redraw" or (level, j) not in noise:
                z = rng.normal(0.0, sigma, size=(n, d))
                if variant == "redraw":
                    total += node_sum + z
                    continue
                noise[(level, j)] = z
            total += node_sum + noise[(level, j)]
        out[:, t - 1, :] = -eta * total
    return out


def release_covariance(T: int, d: int, *, sigma: float, eta: float, variant: str) -> np.ndarray:
    """Covariance of the flattened release (T * d entries, round-major) of a variant's noise:
    shared tree nodes correlate the rounds; redrawn noise does not."""
    cov = np.zeros((T * d, T * d))
    sets = [set(decomposition(t)) for t in range(1, T + 1)]
    for s in range(T):
        for t in range(T):
            if variant == "redraw" and s != t:
                continue
            shared = len(sets[s] & sets[t])
            for i in range(d):
                cov[s * d + i, t * d + i] = eta ** 2 * sigma ** 2 * shared
    return cov
