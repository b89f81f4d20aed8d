"""Tree-based aggregation exactly as printed in Smith & Thakurta, NeurIPS 2013, App. A, Algorithm 2.

Algorithm 2 keeps a complete binary tree over the leaves ``z_1, ..., z_T`` (vectors in R^p with
``||z_t||_2 <= mu``, enforced by clipping); at step ``t`` it adds ``z_t`` to the path ``L`` from
leaf ``t`` to the root, noises the nodes of ``L`` up to ``Lambda``, "the first node in L that is a
left child" (line 6), with density proportional to ``exp(-||n||_2 eps / (mu (ceil(log2 T) + 1)))``
(line 9), and releases the sum over the set bits of ``t`` of each path node or its left sibling
(lines 12-17). This module implements those lines literally, vectorised over ``n_runs`` runs,
keeping only the O(log T) nodes the algorithm reads again (Sec. 2.1, "Note on space complexity").
Its releases have the law of the binary mechanism (:mod:`dpaudit.mechanisms.tree_aggregation`);
only the unreleased right-child draws and the recorded structure differ. The readings the
pseudo-code leaves open (indexing, the root, the noise law's shape and scale) are fixed in the
notes. Privacy argument: App. B.1, eq. (11) (``st13.txt``).

The readings and which nodes are noised and released: docs/paper-readings.md#st13-tree-aggregation.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpaudit._rowwise import row_norm
from dpaudit._validation import check_epsilon, check_int, check_positive
from dpaudit.mechanisms.projections import clip_l2
from dpaudit.mechanisms.tree_aggregation import NodeNoise, TreeNode, StreamingAggregator

__all__ = [
    "st13_tree_levels",
    "st13_node_scale",
    "NoiseDraw",
    "ST13TreeAggregator",
]


def st13_tree_levels(T: int) -> int:
    """``ceil(log2 T) + 1``: the number of levels of Algorithm 2's tree (leaves to root).

    Also the divisor of epsilon in Algorithm 2 line 9. Computed exactly with integers
    (``T = 1`` gives 1: the tree is a single node).
    """
    T = check_int(T, "T", minimum=1)
    return (T - 1).bit_length() + 1


def st13_node_scale(bound: float, epsilon: float, T: int) -> float:
    """The printed node-noise scale ``mu (ceil(log2 T) + 1) / eps`` (ST13 Alg 2 line 9).

    Line 9 draws ``n`` with density proportional to ``exp(-||n||_2 eps / (mu (ceil(log2 T)+1)))``,
    i.e. l2-Laplace noise of scale ``s = mu (ceil(log2 T) + 1) / eps``: ``||n||_2 ~ Gamma(shape p,
    scale s)`` with a uniform direction.
    """
    bound = check_positive(bound, "bound")
    epsilon = check_epsilon(epsilon)
    return bound * st13_tree_levels(T) / epsilon


@dataclass(frozen=True)
class NoiseDraw:
    """One noise draw of Algorithm 2 line 9: at step ``t``, for ``node`` (1-based dyadic index)."""

    t: int
    node: TreeNode


class ST13TreeAggregator(StreamingAggregator):
    """Algorithm 2 of ST13 (App. A), streaming, vectorised over ``n_runs`` independent runs.

    Parameters
    ----------
    T : int
        Horizon (number of leaves), >= 1.
    d : int
        Dimension ``p`` of every leaf, >= 1.
    bound : float
        ``mu``, the l2-norm bound on the leaves (> 0). Inputs are clipped to it.
    epsilon : float
        Privacy parameter of Algorithm 2 (> 0).
    n_runs : int
        Number of independent runs (leading axis of every array), >= 1.
    rng : numpy.random.Generator
        Source of all node noise.
    noise : NodeNoise, optional
        Node noise; default the printed l2-Laplace of scale :func:`st13_node_scale`
        ``(bound, epsilon, T)``. Tests pass ``NodeNoise.none()`` to check exact sums.
    record : bool
        Keep the structural record the auditors check: every noise draw (:attr:`noise_log`),
        the nodes summed into every release (:attr:`released_nodes`) and every clipped input
        (:attr:`inputs`) and every release (:attr:`released_sums`); memory ``2 T n_runs d``.

    Notes
    -----
    :meth:`add` takes ``z_t`` (shape ``(n_runs, d)`` or ``(d,)``) and returns ``v_t``, shape
    ``(n_runs, d)``; :meth:`prefix_sum` returns the last ``v_t``. :attr:`noise_draws` counts the
    noised nodes, right children included. The reading of the root case and the indexing:
    docs/paper-readings.md#st13-tree-aggregation.
    """

    def __init__(self, T: int, d: int, bound: float, epsilon: float, n_runs: int,
                 rng: np.random.Generator, *, noise: NodeNoise | None = None,
                 record: bool = False) -> None:
        self._bound = check_positive(bound, "bound")
        self._epsilon = check_epsilon(epsilon)
        if noise is None:
            noise = NodeNoise.l2_laplace(st13_node_scale(self._bound, self._epsilon, T))
        super().__init__(T, d, noise, n_runs, rng)
        self._levels = st13_tree_levels(self._T)
        self._path = np.zeros((self._levels, self._n, self._d))
        self._path_index = [-1] * self._levels
        self._left = np.zeros((self._levels, self._n, self._d))
        self._record = bool(record)
        self._noise_log: list[NoiseDraw] = []
        self._released: list[tuple[TreeNode, ...]] = []
        self._inputs: list[np.ndarray] = []
        self._sums: list[np.ndarray] = []
        self._max_input_norm = 0.0

    # -- read-only properties --------------------------------------------------------------------
    @property
    def bound(self) -> float:
        """``mu``: every input is clipped to this l2 norm."""
        return self._bound

    @property
    def epsilon(self) -> float:
        return self._epsilon

    @property
    def levels(self) -> int:
        """``ceil(log2 T) + 1``."""
        return self._levels

    @property
    def max_input_norm(self) -> float:
        """Largest l2 norm of any (clipped) input received so far, over all runs."""
        return self._max_input_norm

    @property
    def noise_log(self) -> tuple[NoiseDraw, ...]:
        """Every noise draw in order (empty unless ``record``)."""
        return tuple(self._noise_log)

    @property
    def released_nodes(self) -> tuple[tuple[TreeNode, ...], ...]:
        """For each released ``v_t``, the nodes summed into it (empty unless ``record``)."""
        return tuple(self._released)

    @property
    def released_sums(self) -> np.ndarray:
        """Every released ``v_1, ..., v_t``, shape ``(t, n_runs, d)`` (needs ``record``)."""
        if not self._record:
            raise ValueError("released sums are only kept when the tree is built with record=True")
        if not self._sums:
            return np.zeros((0, self._n, self._d))
        return np.stack(self._sums)

    @property
    def inputs(self) -> np.ndarray:
        """The clipped inputs received, shape ``(t, n_runs, d)`` (needs ``record``)."""
        if not self._record:
            raise ValueError("inputs are only kept when the tree is built with record=True")
        if not self._inputs:
            return np.zeros((0, self._n, self._d))
        return np.stack(self._inputs)

    # -- Algorithm 2 -----------------------------------------------------------------------------
    def add(self, z: np.ndarray) -> np.ndarray:
        """Steps 3-18 of Algorithm 2 for leaf ``t + 1``; returns the noisy partial sum ``v_t``.

        Parameters
        ----------
        z : array, shape ``(n_runs, d)`` or ``(d,)``
            The new leaf (per run, or shared). Clipped to l2 norm ``bound``.

        Returns
        -------
        numpy.ndarray, shape ``(n_runs, d)``
            ``v_t``, the noisy sum of ``z_1, ..., z_t`` (lines 12-18).

        Raises
        ------
        ValueError
            After ``T`` leaves, or for a wrongly shaped or non-finite ``z``.
        """
        leaf = clip_l2(self._next_leaf(z, "z"), self._bound)
        t = self._t + 1
        norm = float(np.max(row_norm(leaf)))  # np.linalg.norm(leaf, axis=-1), bit for bit
        self._max_input_norm = max(self._max_input_norm, norm)
        if self._record:
            self._inputs.append(np.array(leaf))
        # Lines 4-10: path L from leaf t to the root; Lambda = first left child on L.
        lam = None
        for j in range(self._levels):
            k = (t - 1) >> j
            if k != self._path_index[j]:
                prev = self._path_index[j]
                if prev >= 0 and prev % 2 == 0:
                    # The previous node of this level is a completed left child: keep it, it is
                    # the left sibling that lines 15 reads while the path is at index prev + 1.
                    self._left[j] = self._path[j]
                self._path[j] = 0.0
                self._path_index[j] = k
            self._path[j] += leaf  # line 8
            if lam is None and k % 2 == 0:
                lam = j  # line 6 (the root, k = 0, is a left child: docs/paper-readings.md)
        assert lam is not None  # the root always qualifies
        for j in range(lam + 1):  # line 9: the nodes from the leaf up to Lambda
            self._path[j] += self._noise.sample(self._n, self._d, self._rng)
            self._noise_draws += 1
            if self._record:
                self._noise_log.append(NoiseDraw(t, TreeNode(j, self._path_index[j] + 1)))
        # Lines 12-17: v = sum over set bits of t.
        v = np.zeros((self._n, self._d))
        used = []
        for j in range(self._levels):
            if (t >> j) & 1:
                k = self._path_index[j]
                if k % 2 == 0:
                    v += self._path[j]
                    used.append(TreeNode(j, k + 1))
                else:
                    v += self._left[j]
                    used.append(TreeNode(j, k))
        if self._record:
            self._released.append(tuple(used))
            self._sums.append(v.copy())
        self._t = t
        self._release = v
        return v.copy()
