"""Tree aggregation (the binary mechanism) for continual prefix sums of d-dimensional vectors.

After leaf ``t`` of a stream ``x_1, ..., x_T`` the mechanism releases a noisy prefix sum
``s_t ~ x_1 + ... + x_t``: ``[1, t]`` is the disjoint union of one dyadic node per set bit of
``t``, and ``s_t`` sums those nodes' noisy values, each drawn once, when the node completes
(Dwork, Naor, Pitassi & Rothblum, STOC 2010, Sec. 4). This is the "p-sum" form of Chan, Shi & Song
(ACM TISSEC 14(3), 2011, Sec. 3.4): one node noised per step, O(d log T) memory per run, and
exactly the law of the full-tree pseudo-code of JKT12 (COLT 2012, App. D.2, Alg 5) and ST13
(NeurIPS 2013, App. A, Alg 2), whose extra right-child noise is never released.
:func:`nodes_for_prefix` ``(t)`` covers exactly ``[1, t]`` (line 14's ``sum_{tau=1}^t``; the
strings JKT12's line 13 prints exclude ``w_t``, which ``nodes_for_prefix(t - 1)`` gives);
:func:`nodes_containing` and :func:`max_nodes_per_leaf` (exactly ``floor(log2 T) + 1``) are the
privacy bookkeeping the auditors read.

The reading of JKT12 Alg 5 lines 13-14, the node counts and the references in full:
docs/paper-readings.md#tree-aggregation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal, NamedTuple

import dp_accounting
import numpy as np

from dpaudit._validation import (
    check_finite_array,
    check_generator,
    check_int,
    check_positive,
)
from dpaudit.neighbours import NeighbourRelation
from dpaudit.mechanisms.base import Mechanism, Sensitivity
from dpaudit.mechanisms.discrete import (discrete_gaussian_pmf, grid_units, rational_at_least,
                                         rational_sigma2, sample_discrete_gaussian,
                                         sample_discrete_laplace)
from dpaudit.mechanisms.events import EpsilonDeltaDpEvent
from dpaudit.mechanisms.gaussian import sample_gaussian
from dpaudit.mechanisms.l2_laplace import sample_l2_laplace
from dpaudit.mechanisms.laplace import sample_laplace

__all__ = [
    "NoiseKind",
    "NodeNoise",
    "TreeNode",
    "nodes_for_prefix",
    "nodes_containing",
    "max_nodes_per_leaf",
    "mirrored_leaf_streams",
    "TreeAggregator",
    "tree_prefix_sums",
    "TreeAggregationMechanism",
]

NoiseKind = Literal["laplace", "gaussian", "l2-laplace", "none", "discrete-laplace",
                    "discrete-gaussian"]
_KINDS = ("laplace", "gaussian", "l2-laplace", "none", "discrete-laplace", "discrete-gaussian")
_DISCRETE = ("discrete-laplace", "discrete-gaussian")


@dataclass(frozen=True)
class NodeNoise:
    """The noise added to every node of a tree: a kind and a scale.

    Kinds (each node gets one independent draw of shape ``(d,)``):

    * ``"laplace"``: i.i.d. Laplace(0, ``scale``) per coordinate; epsilon-DP per node for **l1**
      sensitivity ``scale * epsilon``.
    * ``"gaussian"``: i.i.d. N(0, ``scale``^2) per coordinate (``scale`` = sigma).
    * ``"l2-laplace"``: density proportional to ``exp(-||z||_2 / scale)`` (ST13 Alg 2 line 9,
      pfcoco Lemma 1 "Gamma" noise): ``||z||_2 ~ Gamma(shape d, scale)``, uniform direction;
      (Delta / ``scale``)-DP per node for **l2** sensitivity Delta.
    * ``"none"``: no noise at all. **Not private**; exists only so tests can check exact sums.
      Build it with :meth:`NodeNoise.none`; every other kind requires ``scale > 0``.

    Use the constructors :meth:`laplace`, :meth:`gaussian`, :meth:`l2_laplace`, :meth:`none`.
    """

    kind: NoiseKind
    scale: float
    #: Grid step of the discrete kinds (None for the others); kept out of repr and equality of the
    #: float kinds, whose records must not change.
    granularity: float | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.kind not in _KINDS:
            raise ValueError(f"kind must be one of {_KINDS}, got {self.kind!r}")
        if self.kind in _DISCRETE:
            g = check_positive(self.granularity, "granularity")
            object.__setattr__(self, "granularity", g)
            units = grid_units(check_positive(self.scale, "scale"), g, "scale")
            # The exact rational noise parameter (validated here, so sampling cannot fail later).
            object.__setattr__(self, "_units", rational_sigma2(units) if self.kind ==
                               "discrete-gaussian" else rational_at_least(units, "scale / "
                                                                          "granularity"))
        elif self.granularity is not None:
            raise ValueError(f"granularity is only used by the discrete kinds, not {self.kind!r}")
        if self.kind == "none":
            if isinstance(self.scale, bool) or self.scale != 0:
                raise ValueError(f"NodeNoise kind 'none' must have scale 0, got {self.scale!r}")
            object.__setattr__(self, "scale", 0.0)
        else:
            object.__setattr__(self, "scale", check_positive(self.scale, "scale"))

    @classmethod
    def laplace(cls, scale: float) -> "NodeNoise":
        """Per-coordinate Laplace(0, ``scale``) node noise, ``scale`` > 0."""
        return cls("laplace", scale)

    @classmethod
    def gaussian(cls, sigma: float) -> "NodeNoise":
        """Per-coordinate N(0, ``sigma``^2) node noise, ``sigma`` > 0."""
        return cls("gaussian", sigma)

    @classmethod
    def l2_laplace(cls, scale: float) -> "NodeNoise":
        """l2-Laplace node noise: density proportional to ``exp(-||z||_2 / scale)``, scale > 0."""
        return cls("l2-laplace", scale)

    @classmethod
    def discrete_laplace(cls, scale: float, granularity: float) -> "NodeNoise":
        """Exact discrete Laplace node noise of scale ``scale`` on the grid ``granularity``.

        Each coordinate is ``g Z``, ``Z ~ Lap_Z(scale / g)`` (Canonne, Kamath & Steinke 2020,
        :mod:`dpaudit.mechanisms.discrete`); exactly DP only when the leaves lie on the grid.
        """
        return cls("discrete-laplace", scale, granularity)

    @classmethod
    def discrete_gaussian(cls, sigma: float, granularity: float) -> "NodeNoise":
        """Exact discrete Gaussian node noise ``g N_Z(0, (sigma / g)^2)`` per coordinate."""
        return cls("discrete-gaussian", sigma, granularity)

    @classmethod
    def none(cls) -> "NodeNoise":
        """TEST ONLY: no noise, so the tree releases exact sums. Provides no privacy whatsoever."""
        return cls("none", 0.0)

    @property
    def is_private(self) -> bool:
        """False only for the test-only :meth:`none` noise."""
        return self.kind != "none"

    def sample(self, n: int, d: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` independent node-noise vectors, shape ``(n, d)``."""
        n = check_int(n, "n", minimum=1)
        d = check_int(d, "d", minimum=1)
        rng = check_generator(rng)
        if self.kind == "laplace":
            return sample_laplace(self.scale, (n, d), rng)
        if self.kind == "gaussian":
            return sample_gaussian(self.scale, (n, d), rng)
        if self.kind == "l2-laplace":
            return sample_l2_laplace(self.scale, n, d, rng)
        if self.kind == "discrete-laplace":
            return sample_discrete_laplace(self._units, n * d, rng).reshape(n, d) * self.granularity
        if self.kind == "discrete-gaussian":
            return (sample_discrete_gaussian(self._units, n * d, rng).reshape(n, d)
                    * self.granularity)
        return np.zeros((n, d))

    def coordinate_variance(self, d: int) -> float:
        """Variance of one coordinate of one node's noise in dimension ``d``.

        Laplace: ``2 b^2``; Gaussian: ``sigma^2``; l2-Laplace: ``(d + 1) s^2`` (``E||z||^2 =
        d (d + 1) s^2`` for ``||z|| ~ Gamma(d, s)``, spread evenly over ``d`` coordinates); none: 0.
        """
        d = check_int(d, "d", minimum=1)
        if self.kind == "laplace":
            return 2.0 * self.scale**2
        if self.kind == "gaussian":
            return self.scale**2
        if self.kind == "l2-laplace":
            return (d + 1) * self.scale**2
        if self.kind == "discrete-laplace":
            r = math.exp(-1.0 / float(self._units))
            return 2.0 * r / (1.0 - r) ** 2 * self.granularity**2
        if self.kind == "discrete-gaussian":
            s = math.sqrt(float(self._units))
            z = np.arange(-int(40 * s) - 2, int(40 * s) + 3)
            return float(np.sum(z * z * discrete_gaussian_pmf(z, s))) * self.granularity**2
        return 0.0

    @property
    def sensitivity_norm(self) -> Literal["l1", "l2"]:
        """The norm in which a sensitivity must be stated for :meth:`composed_event`."""
        return "l1" if self.kind in ("laplace", "discrete-laplace") else "l2"

    def composed_event(self, sensitivity: float, count: int) -> dp_accounting.DpEvent:
        """The privacy of ``count`` noisy nodes that each move by at most ``sensitivity``.

        ``sensitivity`` is in the norm :attr:`sensitivity_norm` (l1 for Laplace, l2 otherwise) and
        is already the distance between neighbouring node values (replace-one), so the events are
        meant for dp-accounting's ``ADD_OR_REMOVE_ONE`` reading (one sensitivity per event).

        * Gaussian: one ``GaussianDpEvent`` with noise multiplier ``sigma / (sqrt(count) Delta)``
          (``count`` Gaussian nodes, each shifted by Delta, are one Gaussian mechanism with l2 shift
          ``sqrt(count) Delta``).
        * Laplace: an explicit ``ComposedDpEvent`` of ``count`` ``LaplaceDpEvent(b / Delta)``. A
          d-dimensional product Laplace with l1 shift Delta is dominated by the 1-D Laplace with
          shift Delta (putting the whole shift in one coordinate is the worst case).
        * l2-Laplace: an explicit ``ComposedDpEvent`` of ``count`` pure
          ``EpsilonDeltaDpEvent(Delta / s, 0)`` (its privacy loss is bounded by ``Delta / s`` by the
          triangle inequality; its loss distribution is not a standard dp-accounting event).

        ``SelfComposedDpEvent`` is never used (AUDIT-METHOD section 4).
        """
        if not self.is_private:
            raise ValueError("NodeNoise.none() is test-only noise and has no privacy guarantee")
        sensitivity = check_positive(sensitivity, "sensitivity")
        count = check_int(count, "count", minimum=1)
        if self.kind == "gaussian":
            return dp_accounting.GaussianDpEvent(self.scale / (math.sqrt(count) * sensitivity))
        if self.kind in _DISCRETE:
            from dpaudit.mechanisms.laplace import shift_units

            k = shift_units(sensitivity, self.granularity)
            if self.kind == "discrete-gaussian":  # CKS20 Thm 14, composed: count k^2 / (2 s^2)
                return dp_accounting.ZCDpEvent(count * k * k / (2.0 * float(self._units)))
            return dp_accounting.ComposedDpEvent(
                [EpsilonDeltaDpEvent(k / float(self._units), 0.0) for _ in range(count)])
        if self.kind == "laplace":
            return dp_accounting.ComposedDpEvent(
                [dp_accounting.LaplaceDpEvent(self.scale / sensitivity) for _ in range(count)])
        return dp_accounting.ComposedDpEvent(
            [EpsilonDeltaDpEvent(sensitivity / self.scale, 0.0) for _ in range(count)])


class TreeNode(NamedTuple):
    """Dyadic node ``(level j, index m)`` covering leaves ``(m - 1) 2^j + 1 .. m 2^j`` (1-based)."""

    level: int
    index: int

    @property
    def first(self) -> int:
        """First leaf covered (1-based)."""
        return ((self.index - 1) << self.level) + 1

    @property
    def last(self) -> int:
        """Last leaf covered; the node completes when this leaf arrives."""
        return self.index << self.level

    @property
    def size(self) -> int:
        """Number of leaves covered, ``2^level``."""
        return 1 << self.level

    def contains(self, leaf: int) -> bool:
        """Whether leaf ``leaf`` (1-based) is one of the leaves this node sums."""
        return self.first <= leaf <= self.last


def nodes_for_prefix(t: int) -> list[TreeNode]:
    """The nodes whose noisy values sum to the released prefix sum ``s_t``.

    One node per set bit ``j`` of ``t``: ``(j, t >> j)``, highest level first, covering exactly the
    leaves ``[1, t]`` (JKT12 Alg 5 line 14's ``sum_{tau=1}^t``; line 13's printed strings cover
    ``[1, t - 1]``, see docs/paper-readings.md#tree-aggregation; ST13 Alg 2 lines 12-17).
    ``t = 0`` gives the empty list (the empty sum).
    """
    t = check_int(t, "t", minimum=0)
    return [TreeNode(j, t >> j) for j in reversed(range(t.bit_length())) if (t >> j) & 1]


def nodes_containing(leaf: int, T: int) -> list[TreeNode]:
    """The noisy nodes that contain ``leaf`` and enter some prefix sum ``s_1, ..., s_T``.

    At level ``j`` the only node containing ``leaf`` is ``(j, m)`` with ``m = ceil(leaf / 2^j)``;
    it is used (by ``s_{m 2^j}``) iff ``m`` is odd and it completes within the horizon,
    ``m 2^j <= T``. Returned lowest level first.
    """
    T = check_int(T, "T", minimum=1)
    leaf = check_int(leaf, "leaf", minimum=1, maximum=T)
    out = []
    for j in range(T.bit_length()):
        m = ((leaf - 1) >> j) + 1
        if m & 1 and (m << j) <= T:
            out.append(TreeNode(j, m))
    return out


def max_nodes_per_leaf(T: int) -> int:
    """The largest number of used noisy nodes containing one leaf: exactly ``floor(log2 T) + 1``.

    Attained by leaf 1 (nodes ``[1, 2^j]``, ``2^j <= T``). Equals the papers' ``ceil(log2 T) + 1``
    when ``T`` is a power of two, and ``ceil(log2 T)`` otherwise.
    """
    T = check_int(T, "T", minimum=1)
    return T.bit_length()


def mirrored_leaf_streams(position: int, T: int, d: int, value: float
                          ) -> tuple[np.ndarray, np.ndarray]:
    """Two leaf streams of shape ``(T, d)``, zero but for leaf ``position``: ``+value e_1`` in the
    first, ``-value e_1`` in the second (the neighbouring tree inputs the papers' worst cases use).

    Parameters
    ----------
    position : int
        1-based leaf, in ``[1, T]`` (the caller checks it).
    T, d : int
        Number of leaves and their dimension.
    value : float
        The replaced leaf's first coordinate in the first stream (its negative in the second).

    Returns
    -------
    tuple of numpy.ndarray
        ``(z0, z1)``.
    """
    z0 = np.zeros((T, d))
    z1 = np.zeros((T, d))
    z0[position - 1, 0] = value
    z1[position - 1, 0] = -value
    return z0, z1


def _as_leaf(x: object, n: int, d: int, name: str = "x") -> np.ndarray:
    arr = check_finite_array(x, name, ndim=(1, 2))
    if arr.ndim == 1:
        if arr.shape != (d,):
            raise ValueError(f"{name} must have shape ({d},) or ({n}, {d}), got {arr.shape}")
        return np.broadcast_to(arr, (n, d))
    if arr.shape != (n, d):
        raise ValueError(f"{name} must have shape ({d},) or ({n}, {d}), got {arr.shape}")
    return arr


def _check_noise(noise: object) -> NodeNoise:
    if not isinstance(noise, NodeNoise):
        raise TypeError(f"noise must be a NodeNoise, got {type(noise).__name__}")
    return noise


def check_stream(xs: object, n_runs: object) -> tuple[np.ndarray, int]:
    """Validate a whole stream for ``n_runs`` runs: ``(T, d)`` (shared) or ``(n_runs, T, d)``."""
    arr = check_finite_array(xs, "xs", ndim=(2, 3))
    n = check_int(n_runs, "n_runs", minimum=1)
    if arr.ndim == 3 and arr.shape[0] != n:
        raise ValueError(f"xs has {arr.shape[0]} runs on its leading axis but n_runs = {n}")
    if arr.shape[-2] < 1 or arr.shape[-1] < 1:
        raise ValueError(f"xs must have T >= 1 leaves of dimension d >= 1, got shape {arr.shape}")
    return arr, n


class StreamingAggregator:
    """What the streaming prefix-sum aggregators share, for ``n_runs`` independent runs.

    The horizon ``T``, the leaf dimension ``d``, the node noise, the batch size and the generator;
    the count of leaves added (:attr:`t`) and of node-noise vectors drawn (:attr:`noise_draws`);
    and the last release (:meth:`prefix_sum`). Subclasses implement ``add(x)``, which updates
    ``_t``, ``_noise_draws`` and ``_release``: :class:`TreeAggregator` (the binary mechanism),
    :class:`~dpaudit.mechanisms.window_tree.WindowTreeAggregator` and ST13's Algorithm 2 as printed
    (:class:`~dpaudit.mechanisms.st13_tree_aggregation.ST13TreeAggregator`).
    """

    def __init__(self, T: int, d: int, noise: NodeNoise, n_runs: int,
                 rng: np.random.Generator) -> None:
        self._T = check_int(T, "T", minimum=1)
        self._d = check_int(d, "d", minimum=1)
        self._noise = _check_noise(noise)
        self._n = check_int(n_runs, "n_runs", minimum=1)
        self._rng = check_generator(rng)
        self._release = np.zeros((self._n, self._d))
        self._t = 0
        self._noise_draws = 0

    @property
    def T(self) -> int:
        return self._T

    @property
    def d(self) -> int:
        return self._d

    @property
    def n_runs(self) -> int:
        return self._n

    @property
    def noise(self) -> NodeNoise:
        return self._noise

    @property
    def t(self) -> int:
        """Number of leaves added so far."""
        return self._t

    @property
    def noise_draws(self) -> int:
        """Number of node-noise vectors drawn so far (per run; each is one ``(d,)`` draw)."""
        return self._noise_draws

    def prefix_sum(self) -> np.ndarray:
        """The release after the last leaf added, per run, shape ``(n_runs, d)``; zeros before any.

        Repeated calls return identical values (a fresh copy each time).
        """
        return self._release.copy()

    def _next_leaf(self, x: object, name: str = "x") -> np.ndarray:
        """Leaf ``t + 1`` as ``(n_runs, d)`` (``x`` per run or shared); raises after T leaves."""
        if self._t >= self._T:
            raise ValueError(f"add() called more than T = {self._T} times")
        return _as_leaf(x, self._n, self._d, name)

    def _releases(self, xs: np.ndarray) -> np.ndarray:
        """Add every leaf of a stream checked by :func:`check_stream`; all releases, shape
        ``(n_runs, T, d)`` (``out[:, t - 1]`` is :meth:`prefix_sum` after leaf ``t``)."""
        out = np.empty((self._n, self._T, self._d))
        for t in range(self._T):
            self.add(xs[..., t, :])
            out[:, t] = self._release
        return out


class StreamingMechanism(Mechanism):
    """What the tree-based prefix-sum mechanisms share: the horizon, the leaf dimension, private
    node noise and the sensitivity of one replaced leaf (l1 for Laplace node noise, l2 otherwise).
    """

    def __init__(self, T: int, d: int, noise: NodeNoise, sensitivity: float,
                 description: str) -> None:
        self._T = check_int(T, "T", minimum=1)
        self._d = check_int(d, "d", minimum=1)
        self._noise = _check_noise(noise)
        if not self._noise.is_private:
            raise ValueError("a Mechanism needs private noise; NodeNoise.none() is test-only")
        self._sensitivity = Sensitivity(
            check_positive(sensitivity, "sensitivity"), norm=self._noise.sensitivity_norm,
            relation=NeighbourRelation.REPLACE_ONE, description=description)

    @property
    def T(self) -> int:
        return self._T

    @property
    def d(self) -> int:
        return self._d

    @property
    def noise(self) -> NodeNoise:
        return self._noise

    @property
    def sensitivity(self) -> Sensitivity:
        return self._sensitivity

    def _check_data(self, data: object) -> np.ndarray:
        """The stream ``data``, of shape ``(T, d)``, validated."""
        return check_finite_array(data, "data", shape=(self._T, self._d))


class TreeAggregator(StreamingAggregator):
    """Streaming binary mechanism over ``n_runs`` independent runs (p-sum implementation).

    Parameters
    ----------
    T : int
        Horizon, >= 1: the number of leaves :meth:`add` accepts.
    d : int
        Dimension of each leaf, >= 1.
    noise : NodeNoise
        Noise added once to every node that enters a prefix sum.
    n_runs : int
        Number of independent runs (leading batch axis of every array), >= 1.
    rng : numpy.random.Generator
        Source of all node noise.

    Notes
    -----
    After ``t`` calls of :meth:`add`, :meth:`prefix_sum` returns, for every run, the sum of the
    noisy nodes :func:`nodes_for_prefix` ``(t)``. Exactly one node is noised per :meth:`add` (the
    node of level ``v(t)`` ending at ``t``; its value is the new leaf plus the live nodes below it,
    which are then discarded), so :attr:`noise_draws` equals ``t``, the number of completed nodes
    that any prefix sum uses. Memory: ``2 (floor(log2 T) + 1)`` arrays of shape ``(n_runs, d)`` (the
    live clean nodes, and the running sums of the release down to each level, so that a step adds
    one array to the release instead of re-summing ``O(log T)`` nodes).
    The references (CSS11 Sec. 3.4; JKT12 Alg 5; ST13 Alg 2):
    docs/paper-readings.md#tree-aggregation.
    """

    def __init__(self, T: int, d: int, noise: NodeNoise, n_runs: int,
                 rng: np.random.Generator) -> None:
        super().__init__(T, d, noise, n_runs, rng)
        levels = self._T.bit_length()
        self._clean = np.zeros((levels, self._n, self._d))
        # _partial[k] (for each set bit k of t): the noisy nodes of the set bits >= k of t, summed
        # highest level first, starting from 0.0 -- the release's running sum down to level k.
        self._partial: list[np.ndarray | None] = [None] * levels

    def add(self, x: np.ndarray) -> None:
        """Add leaf ``t + 1``: shape ``(n_runs, d)`` (one leaf per run) or ``(d,)`` (shared).

        Raises ``ValueError`` after ``T`` leaves.
        """
        leaf = self._next_leaf(x)
        t = self._t + 1
        j = (t & -t).bit_length() - 1  # level of the node completing at t
        node = leaf + self._clean[:j].sum(axis=0) if j else np.array(leaf, dtype=np.float64)
        self._clean[:j] = 0.0
        self._clean[j] = node
        noisy = node + self._noise.sample(self._n, self._d, self._rng)
        self._noise_draws += 1
        self._t = t
        # The release sums the noisy nodes of the set bits of t, highest level first. The bits
        # above j are those of t - 1, whose running sum down to the lowest of them is kept in
        # _partial: one addition per step, and the same additions in the same order as summing
        # all the nodes afresh (bit-identical).
        above = t >> (j + 1)
        if above:
            k = j + 1 + (above & -above).bit_length() - 1
            release = self._partial[k] + noisy
        else:
            release = 0.0 + noisy
        self._partial[j] = release
        self._release = release

    def dp_event(self, sensitivity: float) -> dp_accounting.DpEvent:
        """Per-leaf privacy: :meth:`NodeNoise.composed_event` over ``max_nodes_per_leaf(T)`` nodes.

        ``sensitivity`` bounds how far one node moves when one leaf is replaced (l1 for Laplace
        node noise, l2 otherwise).
        """
        return self._noise.composed_event(sensitivity, max_nodes_per_leaf(self._T))


def tree_prefix_sums(xs: np.ndarray, noise: NodeNoise, n_runs: int,
                     rng: np.random.Generator) -> np.ndarray:
    """All noisy prefix sums of a whole stream, for ``n_runs`` independent runs.

    Parameters
    ----------
    xs : array, shape ``(T, d)`` (one stream shared by all runs) or ``(n_runs, T, d)``
    noise : NodeNoise
    n_runs : int
        >= 1; must equal ``xs.shape[0]`` for 3-D ``xs``.
    rng : numpy.random.Generator

    Returns
    -------
    numpy.ndarray, shape ``(n_runs, T, d)``
        ``out[:, t - 1]`` is :meth:`TreeAggregator.prefix_sum` after leaf ``t``.
    """
    arr, n = check_stream(xs, n_runs)
    return TreeAggregator(arr.shape[-2], arr.shape[-1], noise, n, rng)._releases(arr)


class TreeAggregationMechanism(StreamingMechanism):
    """The binary mechanism as a :class:`~dpaudit.mechanisms.base.Mechanism`.

    ``sample(xs, n, rng)`` releases all ``T`` noisy prefix sums of the stream ``xs`` (shape
    ``(T, d)``) for ``n`` runs, shape ``(n, T, d)``. Privacy (:meth:`dp_event`) is per replaced
    leaf: the composition of the :func:`max_nodes_per_leaf` ``(T)`` node mechanisms containing it,
    assuming each replacement moves a leaf by at most ``sensitivity`` (l1 for Laplace node noise,
    l2 otherwise). The stream is not clipped: keeping leaves within the stated sensitivity is the
    caller's responsibility.
    """

    name = "tree-aggregation"

    def __init__(self, T: int, d: int, noise: NodeNoise, sensitivity: float) -> None:
        super().__init__(T, d, noise, sensitivity,
                         description="distance between one leaf and its replacement")

    def sample(self, data: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        """Noisy prefix sums of ``data`` (shape ``(T, d)``) for ``n`` runs: shape ``(n, T, d)``."""
        return tree_prefix_sums(self._check_data(data), self._noise, n, rng)

    def dp_event(self) -> dp_accounting.DpEvent:
        return self._noise.composed_event(self._sensitivity.bound, max_nodes_per_leaf(self._T))
