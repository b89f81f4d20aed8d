"""PrivateSum: private prefix sums with a binary tree of Gaussian node noise (Algorithm 5).

Jain, Kothari & Thakurta: COLT 2012 Appendix D.2 (Algorithm 5, Lemma 6, Theorem 11); arXiv version
Section 3.5.1 (Algorithm 5, Lemma 6, Theorem 9). Each node of a binary tree over the stream gets
``N(0, sigma^2 I_d)`` noise once, when populated, and the output at step t sums the noisy nodes of
the dyadic decomposition of [1, t] (lines 13-14). The printed noise is
``sigma^2 = R^2 / eps^2 * log^2 T * log(log T / delta)`` (COLT) and the same with ``eps`` not
squared (arXiv). Readings: the base of "log" (``log_reading``: ``"tree"``, log2 T and the natural
inner log, by default; ``"natural"``); the leaf labels, fixed by Figure 1 and Theorem 11 so that
the output at t sums ``w_1..w_t``; matrices (PQFTL's ``V_t``) flattened row by row. Only the
decomposition's noisy nodes are released.

The printed noise and the readings in full: docs/paper-readings.md#jkt12-privatesum.
"""

from __future__ import annotations

import math
from typing import Any, Literal

import dp_accounting
import numpy as np

from dpaudit._validation import (check_delta, check_epsilon, check_finite_array, check_generator,
                                 check_int, check_positive)
from dpaudit.neighbours import NeighbourRelation
from dpaudit.mechanisms.base import Mechanism, Sensitivity
from dpaudit.mechanisms.gaussian import sample_gaussian

#: The version of Jain, Kothari & Thakurta (2012) whose printed calibration is used.
Version = Literal["colt", "arxiv"]


def check_version(version: object) -> Version:
    """The JKT12 version: ``"colt"`` (COLT 2012 proceedings) or ``"arxiv"`` (arXiv version)."""
    if version not in ("colt", "arxiv"):
        raise ValueError(f"version must be 'colt' or 'arxiv', got {version!r}")
    return version  # type: ignore[return-value]

__all__ = ["LogReading", "private_sum_sigma", "tree_depth", "decomposition_levels",
           "released_node_count", "released_noise_matrix", "PrivateSumTree", "PrivateSum"]

LogReading = Literal["tree", "natural"]


def _check_log_reading(log_reading: object) -> LogReading:
    if log_reading not in ("tree", "natural"):
        raise ValueError(f"log_reading must be 'tree' or 'natural', got {log_reading!r}")
    return log_reading  # type: ignore[return-value]


def _check_T(T: object) -> int:
    T = check_int(T, "T", minimum=1)
    if T < 2:
        raise ValueError("T must be an integer in [2, inf): sigma^2 = ... log^2 T "
                         "log(log T / delta) is undefined at T = 1 (0 * log 0)")
    return T


def private_sum_sigma(version: Version, T: int, R: float, epsilon: float, delta: float,
                      log_reading: LogReading = "tree") -> float:
    """The node noise standard deviation sigma of Algorithm 5 line 3, as printed in ``version``.

    COLT: ``sigma^2 = R^2/eps^2 log^2 T log(log T/delta)``; arXiv:
    ``sigma^2 = R^2/eps log^2 T log(log T/delta)``. With ``log_reading="tree"`` log T = log2 T and
    the inner log is ln; with ``"natural"`` both are ln.

    Parameters
    ----------
    version : {"colt", "arxiv"}
    T : int
        Number of vectors, >= 2.
    R : float
        The bound passed to PrivateSum ("R a bound on ||w_t||_2"), > 0.
    epsilon : float
        > 0.
    delta : float
        In (0, 1); the inner log must be positive (log T > delta).
    log_reading : {"tree", "natural"}
    """
    version = check_version(version)
    T = _check_T(T)
    R = check_positive(R, "R")
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    if delta == 0.0:
        raise ValueError("delta must be in (0, 1), got 0")
    log_reading = _check_log_reading(log_reading)
    log_T = math.log2(T) if log_reading == "tree" else math.log(T)
    inner = math.log(log_T / delta)
    if inner <= 0:
        raise ValueError(f"log(log T / delta) = {inner:.4g} <= 0: sigma^2 would not be positive")
    eps_term = epsilon ** 2 if version == "colt" else epsilon
    return math.sqrt(R * R / eps_term * log_T ** 2 * inner)


def tree_depth(T: int) -> int:
    """k = ceil(log2 T): the tree has 2^k >= T leaves and k + 1 levels."""
    T = check_int(T, "T", minimum=1)
    return (T - 1).bit_length()


def decomposition_levels(t: int) -> list[int]:
    """Levels (0 = leaves) of the noisy nodes summed into W^_t: the set bits of t."""
    t = check_int(t, "t", minimum=1)
    return [h for h in range(t.bit_length()) if (t >> h) & 1]


def released_node_count(tau: int, horizon: int) -> int:
    """How many released nodes contain leaf ``tau`` when outputs W^_1..W^_horizon are released.

    A node of level h ending at step e (a block [e - 2^h + 1, e]) is released iff it is the lowest
    block of the binary decomposition of e, i.e. bit h is the lowest set bit of e, and e <= horizon.
    The released sequence is an invertible linear map of these nodes, so a change of w_tau shifts
    exactly this many independent Gaussian nodes.
    """
    tau = check_int(tau, "tau", minimum=1)
    horizon = check_int(horizon, "horizon", minimum=tau)
    count, h = 0, 0
    while True:
        size = 1 << h
        end = ((tau - 1) // size + 1) * size  # the level-h block containing tau ends here
        if end > horizon:
            break
        if (end & -end) == size:  # bit h is the lowest set bit of end
            count += 1
        h += 1
    return count


def released_noise_matrix(horizon: int) -> tuple[np.ndarray, list[tuple[int, int]]]:
    """Matrix M with W^_t - W_t = sum_j M[t-1, j] b_j over the released nodes j, and their keys.

    Returns ``(M, nodes)``: M has shape ``(horizon, n_nodes)`` with 0/1 entries; ``nodes[j] =
    (level, end)``. The noise covariance of the released sequence (per coordinate) is
    ``sigma^2 M M^T``; it is invertible (each W^_t adds one new node), which the exact audit uses.
    """
    horizon = check_int(horizon, "horizon", minimum=1)
    nodes: list[tuple[int, int]] = []
    index: dict[tuple[int, int], int] = {}
    for e in range(1, horizon + 1):
        h = (e & -e).bit_length() - 1
        index[(h, e)] = len(nodes)
        nodes.append((h, e))
    M = np.zeros((horizon, len(nodes)))
    for t in range(1, horizon + 1):
        for h in decomposition_levels(t):
            end = (t >> h) << h
            M[t - 1, index[(h, end)]] = 1.0
    return M, nodes


class PrivateSumTree:
    """The streaming state of Algorithm 5 for ``n_runs`` independent runs.

    Keeps, for every level, the exact and the noisy value of the most recently populated node of
    that level (the only node of a level a later decomposition can use), so memory is
    O(log T * n_runs * d).

    Parameters
    ----------
    dim : int
        Length of the vectors w_t (d, or d^2 for flattened matrices).
    T : int
        Number of vectors, >= 2.
    sigma : float
        Node noise standard deviation, > 0 (see :func:`private_sum_sigma`).
    """

    def __init__(self, dim: int, T: int, sigma: float) -> None:
        self.dim = check_int(dim, "dim", minimum=1)
        self.T = _check_T(T)
        self.sigma = check_positive(sigma, "sigma")
        self.depth = tree_depth(self.T)
        self._exact: list[np.ndarray | None] = []
        self._noisy: list[np.ndarray | None] = []
        self._rng: np.random.Generator | None = None
        self._n_runs = 0
        self._t = 0

    @property
    def t(self) -> int:
        """Number of vectors received so far."""
        return self._t

    def reset(self, n_runs: int, rng: np.random.Generator) -> None:
        """Start ``n_runs`` runs with an empty tree (line 2)."""
        self._n_runs = check_int(n_runs, "n_runs", minimum=1)
        self._rng = check_generator(rng)
        self._exact = [None] * (self.depth + 1)
        self._noisy = [None] * (self.depth + 1)
        self._t = 0

    def update(self, w: np.ndarray) -> np.ndarray:
        """Receive w_t (shape ``(d,)`` or ``(n_runs, d)``); return W^_t, shape ``(n_runs, d)``."""
        if self._rng is None:
            raise RuntimeError("call reset(n_runs, rng) before update()")
        if self._t >= self.T:
            raise RuntimeError(f"the tree was built for T={self.T} vectors")
        w = check_finite_array(w, "w", ndim=(1, 2))
        if w.shape[-1] != self.dim or (w.ndim == 2 and w.shape[0] != self._n_runs):
            raise ValueError(f"w must have shape ({self.dim},) or ({self._n_runs}, {self.dim}), "
                             f"got {w.shape}")
        w = np.broadcast_to(w, (self._n_runs, self.dim))
        self._t += 1
        t = self._t
        # Line 6-7 populate the leaf; lines 8-12 every ancestor whose subtree is now complete: the
        # levels h with 2^h dividing t. The level-h node ending at t is the exact sum of its left
        # child (the previous node of level h-1, ending at t - 2^(h-1)) and its right child (the
        # level-(h-1) node just populated), each node getting fresh N(0, sigma^2 I) noise.
        top = (t & -t).bit_length() - 1
        new = [np.array(w, dtype=float)]
        for h in range(1, top + 1):
            left = self._exact[h - 1]
            assert left is not None  # populated at step t - 2^(h-1)
            new.append(left + new[h - 1])
        for h, exact in enumerate(new):
            self._exact[h] = exact
            self._noisy[h] = exact + sample_gaussian(self.sigma, exact.shape, self._rng)
        # Lines 13-14: the noisy nodes of the binary decomposition of t (one per set bit of t; the
        # latest node of level h ends at floor(t / 2^h) 2^h, which is the decomposition's block).
        out = np.zeros((self._n_runs, self.dim))
        for h in decomposition_levels(t):
            node = self._noisy[h]
            assert node is not None
            out += node
        return out


class PrivateSum(Mechanism):
    """Algorithm 5 as a mechanism: the released prefix sums W^_1..W^_T of a stream w_1..w_T.

    ``sample(data, n, rng)`` takes ``data`` of shape ``(T, d)`` (row t-1 = w_t) and returns the
    released sequence of ``n`` independent runs, shape ``(n, T, d)``. The claim (Theorem 11 COLT,
    Theorem 9 arXiv) is that this output is (epsilon, delta)-DP when every ||w_t|| <= R.

    Parameters
    ----------
    dim : int
        d >= 1.
    T : int
        Number of vectors, >= 2.
    R : float
        The declared bound on ||w_t||_2, > 0 (enforced: longer vectors are rejected).
    epsilon : float
        > 0.
    delta : float
        In (0, 1).
    version : {"colt", "arxiv"}
        Which printed sigma (see :func:`private_sum_sigma`).
    log_reading : {"tree", "natural"}
        Reading of "log" (docs/paper-readings.md#jkt12-privatesum).
    """

    name = "PrivateSum"

    def __init__(self, dim: int, T: int, R: float, epsilon: float, delta: float,
                 version: Version = "colt", log_reading: LogReading = "tree") -> None:
        self.dim = check_int(dim, "dim", minimum=1)
        self.T = _check_T(T)
        self.R = check_positive(R, "R")
        self.epsilon = check_epsilon(epsilon)
        self.delta = check_delta(delta)
        self.version = check_version(version)
        self.log_reading = _check_log_reading(log_reading)
        self.sigma = private_sum_sigma(self.version, self.T, self.R, self.epsilon, self.delta,
                                       self.log_reading)

    @property
    def sensitivity(self) -> Sensitivity:
        return Sensitivity(2.0 * self.R, "l2", NeighbourRelation.REPLACE_ONE,
                           "replace one w_t by another with ||w_t|| <= R: ||w_t - w'_t|| <= 2R")

    def dp_event(self) -> dp_accounting.DpEvent:
        """The exact privacy of the released sequence under the replace-one sensitivity 2R.

        A change of w_1 shifts ``released_node_count(1, T)`` independent N(0, sigma^2) nodes by at
        most 2R (every other leaf shifts at most as many); the event composes that many Gaussian
        releases with noise multiplier sigma / (2R).
        """
        count = released_node_count(1, self.T)
        return dp_accounting.SelfComposedDpEvent(
            dp_accounting.GaussianDpEvent(self.sigma / (2.0 * self.R)), count)

    def _check_data(self, data: Any) -> np.ndarray:
        w = check_finite_array(data, "data", shape=(self.T, self.dim))
        norms = np.linalg.norm(w, axis=1)
        if np.any(norms > self.R * (1 + 1e-12)):
            t = int(np.argmax(norms > self.R * (1 + 1e-12))) + 1
            raise ValueError(f"||w_{t}|| = {norms[t - 1]:.6g} exceeds the declared bound "
                             f"R={self.R:g}")
        return w

    def sample(self, data: Any, n: int, rng: np.random.Generator) -> np.ndarray:
        w = self._check_data(data)
        n = check_int(n, "n", minimum=1)
        tree = PrivateSumTree(self.dim, self.T, self.sigma)
        tree.reset(n, check_generator(rng))
        out = np.empty((n, self.T, self.dim))
        for t in range(self.T):
            out[:, t, :] = tree.update(w[t])
        return out
