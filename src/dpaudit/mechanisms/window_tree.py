"""Window tree mechanism: prefix sums whose recent terms are noisy and whose older terms are exact.

The window tree mechanism of the projection-free window-DP COCO paper (Web Intelligence 2020;
``pfcoco-window-tree.txt``), Sec. III-A and III-B (Lemma 1, eq. (11): Gamma noise; Lemma 3,
eq. (13): Gaussian noise), after Bolot et al. (ICDT 2013). Window differential privacy (Def. 6)
protects the last ``W`` inputs only, so the release after leaf ``t`` is the exact sum of the leaves
that left the window plus the noisy dyadic nodes covering ``[t - W + 1, t]``; for ``t <= W`` it is
the ordinary tree mechanism. The text is OCR and assumes ``W`` is a power of two: the two readings
for other ``W`` (``layout``) and of the OCR'd calibrations (:func:`paper_gamma_noise`,
:func:`paper_gaussian_noise`) are parameters. Node noise is drawn once, at completion, and
reused; a run stores the running sum and the noise of the nodes in use, O(d log W) numbers,
with the same law as the paper's layout.

The covering nodes, the readings of the OCR and the memory-saving layout:
docs/paper-readings.md#pfcoco-window-tree.
"""

from __future__ import annotations

import copy
import math
from collections import defaultdict
from typing import Literal

import dp_accounting
import numpy as np

from dpaudit._validation import check_delta, check_epsilon, check_int, check_positive
from dpaudit.mechanisms.tree_aggregation import (
    NodeNoise,
    TreeNode,
    check_stream,
    StreamingAggregator,
    StreamingMechanism,
)

__all__ = [
    "WindowLayout",
    "noisy_width",
    "window_nodes_for_prefix",
    "node_use_interval",
    "window_nodes_containing",
    "max_window_nodes_per_leaf",
    "WindowTreeAggregator",
    "window_tree_prefix_sums",
    "WindowTreeMechanism",
    "paper_gamma_noise",
    "paper_gaussian_noise",
]

WindowLayout = Literal["exact", "power_of_two"]
_LAYOUTS = ("exact", "power_of_two")


def _check_layout(layout: object) -> str:
    if layout not in _LAYOUTS:
        raise ValueError(f"layout must be one of {_LAYOUTS}, got {layout!r}")
    return str(layout)


def noisy_width(W: int, layout: WindowLayout = "exact") -> int:
    """How many of the most recent leaves are noisy: ``W`` (``"exact"``) or ``2^ceil(log2 W)``."""
    W = check_int(W, "W", minimum=1)
    layout = _check_layout(layout)
    return W if layout == "exact" else 1 << (W - 1).bit_length()


def _canonical_cover(first: int, last: int) -> list[TreeNode]:
    """Maximal aligned dyadic intervals partitioning ``[first, last]``, left to right."""
    out = []
    pos = first
    while pos <= last:
        j = 0
        while (pos - 1) % (2 << j) == 0 and pos + (2 << j) - 1 <= last:
            j += 1
        out.append(TreeNode(j, ((pos - 1) >> j) + 1))
        pos += 1 << j
    return out


def window_nodes_for_prefix(t: int, W: int, layout: WindowLayout = "exact") -> list[TreeNode]:
    """The noisy nodes summed into the release ``s_t``, left to right.

    The canonical dyadic decomposition of ``[max(1, t - w + 1), t]`` with ``w`` =
    :func:`noisy_width` ``(W, layout)``; leaves before that interval enter ``s_t`` exactly.
    """
    t = check_int(t, "t", minimum=0)
    w = noisy_width(W, layout)
    return _canonical_cover(max(1, t - w + 1), t) if t else []


def node_use_interval(node: TreeNode, W: int, T: int,
                      layout: WindowLayout = "exact") -> tuple[int, int] | None:
    """The steps ``t`` in ``[1, T]`` whose release uses ``node``, as ``(first, last)``, or None.

    A node is in the canonical cover of the noisy interval ``[s_t, t]`` iff it lies inside it and
    its parent does not. With ``w`` the noisy width, ``l, r`` the node's first and last leaves and
    ``2^j`` its size, a left child (odd index) is used for ``t`` in
    ``[r, min(l + w - 1, r + 2^j - 1)]`` and a right child for ``t`` in
    ``[max(r, l - 2^j + w), l + w - 1]``; both are empty when ``2^j > w``.
    """
    if not isinstance(node, TreeNode):
        node = TreeNode(*node)
    level = check_int(node.level, "node.level", minimum=0)
    check_int(node.index, "node.index", minimum=1)
    T = check_int(T, "T", minimum=1)
    w = noisy_width(W, layout)
    size = 1 << level
    lo, hi = node.first, node.last
    if node.index & 1:
        start, stop = hi, min(lo + w - 1, hi + size - 1)
    else:
        start, stop = max(hi, lo - size + w), lo + w - 1
    stop = min(stop, T)
    return (start, stop) if start <= stop else None


def window_nodes_containing(leaf: int, W: int, T: int,
                            layout: WindowLayout = "exact") -> list[TreeNode]:
    """The noisy nodes containing ``leaf`` that some release uses while the leaf is protected.

    Leaf ``i`` is protected (window DP, Def. 6) by the releases ``s_t``, ``i <= t <= i + W - 1``
    (and ``t <= T``): its neighbours may differ only there. Returned lowest level first.
    """
    T = check_int(T, "T", minimum=1)
    leaf = check_int(leaf, "leaf", minimum=1, maximum=T)
    W = check_int(W, "W", minimum=1)
    w = noisy_width(W, layout)
    protected_last = min(leaf + W - 1, T)
    out = []
    for j in range(w.bit_length()):
        node = TreeNode(j, ((leaf - 1) >> j) + 1)
        used = node_use_interval(node, W, T, layout)
        if used is not None and used[0] <= protected_last and used[1] >= leaf:
            out.append(node)
    return out


def max_window_nodes_per_leaf(W: int, T: int, layout: WindowLayout = "exact") -> int:
    """The largest :func:`window_nodes_containing` count over leaves ``1..T``.

    ``"exact"``: ``floor(log2 min(W, T)) + 1`` (leaf 1 lies in ``[1, 2^j]`` for every
    ``2^j <= min(W, T)``, and no used node has more than ``W`` leaves). ``"power_of_two"``: at most
    ``ceil(log2 W) + 1``, found by scanning leaves ``1 .. w + 2^floor(log2 w)`` (``w`` the noisy
    width): beyond them the pattern repeats with period ``2^floor(log2 w)`` (no used node is
    larger) and truncation by ``T`` only removes uses.
    """
    T = check_int(T, "T", minimum=1)
    w = noisy_width(W, layout)
    if layout == "exact":
        return min(w, T).bit_length()
    last = min(T, w + (1 << (w.bit_length() - 1)))
    return max(len(window_nodes_containing(i, W, T, layout)) for i in range(1, last + 1))


class WindowTreeAggregator(StreamingAggregator):
    """Streaming window tree mechanism over ``n_runs`` independent runs.

    Parameters
    ----------
    T : int
        Horizon, >= 1: the number of leaves :meth:`add` accepts.
    W : int
        Window size, >= 1 (any integer; the readings for non-powers of two:
        docs/paper-readings.md#pfcoco-window-tree).
    d : int
        Leaf dimension, >= 1.
    noise : NodeNoise
        Node noise, e.g. :func:`paper_gamma_noise` (Option I) or :func:`paper_gaussian_noise`
        (Option II).
    n_runs : int
        Number of independent runs (leading batch axis), >= 1.
    rng : numpy.random.Generator
    layout : {"exact", "power_of_two"}
        Reading for ``W`` not a power of two (docs/paper-readings.md#pfcoco-window-tree).

    Notes
    -----
    After ``t`` calls of :meth:`add`, :meth:`prefix_sum` returns per run
    ``sum(x_1..x_{t-w}) + sum(noisy nodes of window_nodes_for_prefix(t, W, layout))``, computed as
    ``sum(x_1..x_t) + sum(noise of those nodes)``. A node's noise is drawn when it completes (if
    some release up to ``T`` uses it, see :func:`node_use_interval`) and dropped after its last use;
    :attr:`noise_draws` counts the draws. Stored arrays: O(log W) of shape ``(n_runs, d)`` (module
    docstring).
    """

    def __init__(self, T: int, W: int, d: int, noise: NodeNoise, n_runs: int,
                 rng: np.random.Generator, *, layout: WindowLayout = "exact") -> None:
        super().__init__(T, d, noise, n_runs, rng)
        self._W = check_int(W, "W", minimum=1)
        self._layout = _check_layout(layout)
        self._w = noisy_width(self._W, self._layout)
        self._max_level = self._w.bit_length() - 1
        self._prefix = np.zeros((self._n, self._d))  # exact x_1 + ... + x_t
        self._node_noise: dict[TreeNode, np.ndarray] = {}  # noise of nodes in use now or soon
        # Nodes first used after they complete: generator state just before their draw, by the
        # step of their first use (the noise is redrawn from it then).
        self._deferred: dict[int, list[tuple[TreeNode, dict]]] = defaultdict(list)
        self._replay = copy.deepcopy(self._rng)  # scratch generator for redraws
        self._expiry: dict[int, list[TreeNode]] = defaultdict(list)

    @property
    def W(self) -> int:
        return self._W

    @property
    def layout(self) -> str:
        return self._layout

    @property
    def noisy_width(self) -> int:
        """Number of most recent leaves that are noisy in each release."""
        return self._w

    @property
    def live_nodes(self) -> int:
        """Number of noised nodes some future release still needs (stored or awaiting redraw)."""
        return len(self._node_noise) + sum(len(v) for v in self._deferred.values())

    def add(self, x: np.ndarray) -> None:
        """Add leaf ``t + 1``: shape ``(n_runs, d)`` or ``(d,)`` (shared by all runs).

        Raises ``ValueError`` after ``T`` leaves.
        """
        leaf = self._next_leaf(x)
        t = self._t + 1
        self._prefix += leaf
        # Nodes completing at t: levels 0..v(t), capped at the largest usable level. Each used
        # node's noise is drawn now, in this order, whatever the step of its first use.
        top = min((t & -t).bit_length() - 1, self._max_level)
        for j in range(top + 1):
            node = TreeNode(j, t >> j)
            used = node_use_interval(node, self._W, self._T, self._layout)
            if used is None:
                continue
            first_use, last_use = used
            if first_use == t:
                self._node_noise[node] = self._noise.sample(self._n, self._d, self._rng)
            else:
                # Used only from step first_use on (a right child entering through the window's
                # left edge): keep the generator state instead of the array, advance the stream
                # exactly as the draw does, and redraw the same values at first_use.
                self._deferred[first_use].append((node, self._rng.bit_generator.state))
                self._noise.sample(self._n, self._d, self._rng)
            self._noise_draws += 1
            self._expiry[last_use].append(node)
        for node, state in self._deferred.pop(t, ()):
            self._replay.bit_generator.state = state
            self._node_noise[node] = self._noise.sample(self._n, self._d, self._replay)
        # s_t = exact prefix + noise of the cover of the noisy window (the cover partitions it,
        # so this is "exact old leaves + noisy window nodes").
        release = self._prefix.copy()
        for node in _canonical_cover(max(1, t - self._w + 1), t):
            release += self._node_noise[node]
        self._release = release
        for node in self._expiry.pop(t, ()):
            del self._node_noise[node]
        self._t = t

    def dp_event(self, sensitivity: float) -> dp_accounting.DpEvent:
        """Window-DP per protected leaf: composition over :func:`max_window_nodes_per_leaf` nodes.

        Valid for neighbours that differ in a leaf ``i`` and releases ``s_1..s_t`` with
        ``t <= i + W - 1`` (Def. 6); ``sensitivity`` as in :meth:`NodeNoise.composed_event`.
        """
        k = max_window_nodes_per_leaf(self._W, self._T, self._layout)
        return self._noise.composed_event(sensitivity, k)


def window_tree_prefix_sums(xs: np.ndarray, W: int, noise: NodeNoise, n_runs: int,
                            rng: np.random.Generator, *,
                            layout: WindowLayout = "exact") -> np.ndarray:
    """All releases of the window tree mechanism on a whole stream.

    Parameters
    ----------
    xs : array, shape ``(T, d)`` (shared by all runs) or ``(n_runs, T, d)``
    W : int
        Window size, >= 1.
    noise : NodeNoise
    n_runs : int
        >= 1; must equal ``xs.shape[0]`` for 3-D ``xs``.
    rng : numpy.random.Generator
    layout : {"exact", "power_of_two"}

    Returns
    -------
    numpy.ndarray, shape ``(n_runs, T, d)``
        ``out[:, t - 1]`` is :meth:`WindowTreeAggregator.prefix_sum` after leaf ``t``.
    """
    arr, n = check_stream(xs, n_runs)
    agg = WindowTreeAggregator(arr.shape[-2], W, arr.shape[-1], noise, n, rng, layout=layout)
    return agg._releases(arr)


class WindowTreeMechanism(StreamingMechanism):
    """The window tree mechanism as a :class:`~dpaudit.mechanisms.base.Mechanism`.

    ``sample(xs, n, rng)`` returns all ``T`` releases for ``n`` runs, shape ``(n, T, d)``.
    :meth:`dp_event` is a **window-DP** statement (Def. 6): it covers neighbours differing in leaf
    ``i`` only for the releases ``s_1..s_t`` with ``t <= i + W - 1``; later releases contain the
    leaf exactly. The stream is not clipped.
    """

    name = "window-tree"

    def __init__(self, T: int, W: int, d: int, noise: NodeNoise, sensitivity: float, *,
                 layout: WindowLayout = "exact") -> None:
        super().__init__(T, d, noise, sensitivity,
                         description="distance between one leaf and its replacement (window DP)")
        self._W = check_int(W, "W", minimum=1)
        self._layout = _check_layout(layout)

    @property
    def W(self) -> int:
        return self._W

    @property
    def layout(self) -> str:
        return self._layout

    def sample(self, data: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        """All releases on ``data`` (shape ``(T, d)``) for ``n`` runs: shape ``(n, T, d)``."""
        return window_tree_prefix_sums(self._check_data(data), self._W, self._noise, n, rng,
                                       layout=self._layout)

    def dp_event(self) -> dp_accounting.DpEvent:
        k = max_window_nodes_per_leaf(self._W, self._T, self._layout)
        return self._noise.composed_event(self._sensitivity.bound, k)


def _levels(W: int) -> int:
    """``ceil(log2 W) + 1``, the paper's node count per protected leaf."""
    return (W - 1).bit_length() + 1


def paper_gamma_noise(epsilon: float, l2_sensitivity: float, W: int) -> NodeNoise:
    """Option I node noise, Lemma 1 eq. (11): ``||n||_2 ~ Gamma(d, Delta_2 (ceil(log2 W)+1)/eps)``.

    An l2-Laplace ("Gamma mechanism", App. A) with scale ``Delta_2 (ceil(log2 W) + 1) / epsilon``.
    Reading: the OCR "4 Ba(" is "d, Delta_2(" (docs/paper-readings.md#pfcoco-window-tree).
    Theorem 1 eq. (15) is this with ``Delta_2 = L + mu D``.
    """
    epsilon = check_epsilon(epsilon)
    l2_sensitivity = check_positive(l2_sensitivity, "l2_sensitivity")
    W = check_int(W, "W", minimum=1)
    return NodeNoise.l2_laplace(l2_sensitivity * _levels(W) / epsilon)


def paper_gaussian_noise(epsilon: float, delta: float, l2_sensitivity: float, W: int, *,
                         log_power: Literal[1, 2] = 2) -> NodeNoise:
    """Option II node noise, Lemma 3 eq. (13).

    ``sigma^2 = 8 Delta_2^2 (ceil(log2 W) + 1)^2 ln(2 / delta)^log_power / epsilon^2``, with
    ``log_power = 2`` the reading of the OCR superscript (default) and ``1`` the alternative
    (docs/paper-readings.md#pfcoco-window-tree).
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    if delta == 0.0:
        raise ValueError("delta must be in (0, 1) for Gaussian node noise, got 0.0")
    l2_sensitivity = check_positive(l2_sensitivity, "l2_sensitivity")
    W = check_int(W, "W", minimum=1)
    if log_power not in (1, 2) or isinstance(log_power, bool):
        raise ValueError(f"log_power must be 1 or 2, got {log_power!r}")
    variance = 8.0 * l2_sensitivity**2 * _levels(W) ** 2 * math.log(2.0 / delta) ** log_power
    return NodeNoise.gaussian(math.sqrt(variance) / epsilon)
