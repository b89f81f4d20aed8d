"""Tree aggregation: exact sums without noise, node bookkeeping, noise reuse and the error law."""

import math

import dp_accounting
import numpy as np
import pytest
from scipy import stats

from dpaudit.formal.accounting import epsilon_of_event
from dpaudit.mechanisms.events import EpsilonDeltaDpEvent
from dpaudit.mechanisms.tree_aggregation import (
    NodeNoise,
    TreeAggregationMechanism,
    TreeAggregator,
    TreeNode,
    max_nodes_per_leaf,
    nodes_containing,
    nodes_for_prefix,
    tree_prefix_sums,
)

HORIZONS = [1, 2, 3, 7, 8, 9, 64, 100]


def integer_stream(n, T, d, seed):
    # Integer-valued floats: every partial sum is exact in float64, so equality is exact.
    return np.random.default_rng(seed).integers(-50, 50, size=(n, T, d)).astype(float)


@pytest.mark.parametrize("T", HORIZONS)
def test_zero_noise_releases_exact_prefix_sums(T):
    xs = integer_stream(3, T, 2, seed=T)
    out = tree_prefix_sums(xs, NodeNoise.none(), 3, np.random.default_rng(0))
    np.testing.assert_array_equal(out, np.cumsum(xs, axis=1))
    shared = tree_prefix_sums(xs[0], NodeNoise.none(), 4, np.random.default_rng(0))
    np.testing.assert_array_equal(shared, np.broadcast_to(np.cumsum(xs[0], axis=0), (4, T, 2)))


@pytest.mark.parametrize("T", HORIZONS)
def test_streaming_matches_whole_stream_and_counts_draws(T):
    xs = integer_stream(2, T, 3, seed=100 + T)
    agg = TreeAggregator(T, 3, NodeNoise.gaussian(1.0), 2, np.random.default_rng(7))
    whole = tree_prefix_sums(xs, NodeNoise.gaussian(1.0), 2, np.random.default_rng(7))
    used = set()
    for t in range(1, T + 1):
        agg.add(xs[:, t - 1])
        np.testing.assert_array_equal(agg.prefix_sum(), whole[:, t - 1])
        used.update(nodes_for_prefix(t))
        # one draw per node that any release so far uses, none for anything else
        assert agg.noise_draws == len(used) == t
    with pytest.raises(ValueError, match="more than T"):
        agg.add(xs[:, 0])


def test_nodes_for_prefix_partition_one_to_t():
    for t in range(1, 300):
        nodes = nodes_for_prefix(t)
        assert len(nodes) == bin(t).count("1")
        leaves = [leaf for node in nodes for leaf in range(node.first, node.last + 1)]
        assert sorted(leaves) == list(range(1, t + 1))  # disjoint cover of [1, t]
        assert all(node.index % 2 == 1 for node in nodes)  # only left children are ever used
    assert nodes_for_prefix(0) == []
    assert nodes_for_prefix(7) == [TreeNode(2, 1), TreeNode(1, 3), TreeNode(0, 7)]


def jkt12_line13_leaves(t, depth):
    """Leaves summed by JKT12 Alg 5 line 13 read literally, leaves labelled by t in binary.

    For each set bit i of the depth-bit string s_t, the node s_t(1..i-1) o 0 covers the leaf labels
    with that prefix; the leaf labelled u holds w_u (label 0 is never populated).
    """
    s = format(t, f"0{depth}b")
    labels = set()
    for i, bit in enumerate(s):
        if bit == "1":
            prefix = s[:i] + "0"
            free = depth - len(prefix)
            labels |= {int(prefix + format(r, f"0{free}b") if free else prefix, 2)
                       for r in range(2**free)}
    return sorted(labels - {0})


def test_jkt12_line13_printed_strings_cover_strictly_left_of_t():
    # The reading choice documented in the module docstring: line 13's example s_t = 110 gives the
    # strings 0 and 10, i.e. w_1..w_5 for t = 6; nodes_for_prefix(t) implements line 14's
    # sum_{tau=1}^t, and nodes_for_prefix(t - 1) is the printed strings' reading.
    assert jkt12_line13_leaves(6, 3) == [1, 2, 3, 4, 5]
    depth = 8
    for t in range(1, 2**depth):
        printed = jkt12_line13_leaves(t, depth)
        assert printed == list(range(1, t))
        implemented = [leaf for node in nodes_for_prefix(t) for leaf in range(node.first,
                                                                              node.last + 1)]
        assert sorted(implemented) == list(range(1, t + 1))
        previous = [leaf for node in nodes_for_prefix(t - 1) for leaf in range(node.first,
                                                                                node.last + 1)]
        assert sorted(previous) == printed


@pytest.mark.parametrize("T", HORIZONS + [5, 31, 33])
def test_nodes_containing_and_max_count_match_brute_force(T):
    brute = {leaf: set() for leaf in range(1, T + 1)}
    for t in range(1, T + 1):
        for node in nodes_for_prefix(t):
            for leaf in range(node.first, node.last + 1):
                brute[leaf].add(node)
    for leaf in range(1, T + 1):
        assert set(nodes_containing(leaf, T)) == brute[leaf]
    worst = max(len(s) for s in brute.values())
    assert worst == max_nodes_per_leaf(T) == math.floor(math.log2(T)) + 1
    paper_bound = math.ceil(math.log2(T)) + 1
    assert worst <= paper_bound
    assert (worst == paper_bound) == (T & (T - 1) == 0)  # equal exactly for powers of two


def test_node_noise_is_drawn_once_and_reused():
    # Zero data: s_t is the sum of the noises of nodes_for_prefix(t). A node's own noise is read off
    # at its completion, s_last - s_{last - size}; every later release must reuse exactly it.
    T, n, d = 45, 5, 2
    out = tree_prefix_sums(np.zeros((T, d)), NodeNoise.laplace(1.0), n, np.random.default_rng(3))
    s = np.concatenate([np.zeros((n, 1, d)), out], axis=1)  # s[:, t] = release after leaf t
    own = {}
    for t in range(1, T + 1):
        node = nodes_for_prefix(t)[-1]
        assert node.last == t
        own[node] = s[:, t] - s[:, t - node.size]
    for t in range(1, T + 1):
        np.testing.assert_allclose(s[:, t], sum(own[node] for node in nodes_for_prefix(t)),
                                   rtol=0, atol=1e-12)


def test_repeated_queries_return_identical_copies():
    agg = TreeAggregator(10, 2, NodeNoise.gaussian(2.0), 4, np.random.default_rng(1))
    assert np.array_equal(agg.prefix_sum(), np.zeros((4, 2)))
    for t in range(6):
        agg.add(np.ones(2))
    first = agg.prefix_sum()
    kept = first.copy()
    first += 100.0  # the caller's copy; must not leak into the aggregator
    np.testing.assert_array_equal(agg.prefix_sum(), agg.prefix_sum())
    np.testing.assert_array_equal(agg.prefix_sum(), kept)
    assert agg.noise_draws == 6


def shared_nodes(T):
    sets = [set(nodes_for_prefix(t)) for t in range(1, T + 1)]
    return np.array([[len(a & b) for b in sets] for a in sets], dtype=float)


def test_gaussian_error_has_predicted_variance_and_covariance():
    T, d, n, sigma = 13, 2, 40_000, 1.5
    xs = np.random.default_rng(11).normal(size=(T, d))
    out = tree_prefix_sums(xs, NodeNoise.gaussian(sigma), n, np.random.default_rng(12))
    err = out - np.cumsum(xs, axis=0)
    counts = np.array([len(nodes_for_prefix(t)) for t in range(1, T + 1)])
    # Var: sum of squares / (k_t sigma^2) is exactly chi-square(n d) per t. Two-sided p > 1e-4 at
    # a fixed seed; a correct tree fails one of the 13 with probability < 13 * 1e-4.
    for t in range(T):
        stat = np.sum(err[:, t] ** 2) / (counts[t] * sigma**2)
        p = 2 * min(stats.chi2.cdf(stat, n * d), stats.chi2.sf(stat, n * d))
        assert p > 1e-4, (t + 1, stat / (n * d))
    # Covariance of errors at t, t': sigma^2 * (number of shared nodes), i.e. reused noise.
    C = sigma**2 * shared_nodes(T)
    emp = np.cov(err[:, :, 0], rowvar=False)
    # Gaussian sample covariance has sd sqrt((C_aa C_bb + C_ab^2) / n); |z| < 5 per entry fails
    # for a correct tree with probability < 91 * 6e-7 over the 91 distinct entries.
    sd = np.sqrt((np.outer(np.diag(C), np.diag(C)) + C**2) / n)
    assert np.max(np.abs(emp - C) / sd) < 5


def test_laplace_error_has_predicted_variance_and_exact_law():
    T, d, n, b = 12, 3, 40_000, 0.7
    out = tree_prefix_sums(np.zeros((T, d)), NodeNoise.laplace(b), n, np.random.default_rng(21))
    v = 2 * b**2
    for t in range(1, T + 1):
        k = len(nodes_for_prefix(t))
        e2 = out[:, t - 1].ravel() ** 2
        # Sum of k Laplace: Var(e^2) = 2 (k v)^2 + 3 k v^2 (excess kurtosis 3 per node);
        # |z| < 4.5 fails for a correct tree with probability < 12 * 7e-6.
        z = (e2.mean() - k * v) / math.sqrt((2 * (k * v) ** 2 + 3 * k * v**2) / e2.size)
        assert abs(z) < 4.5, (t, z)
    # One node (t = 8): Laplace(b). Two nodes (t = 3): density (b + |z|) e^{-|z|/b} / (4 b^2),
    # survival (2b + z) e^{-z/b} / (4b) for z >= 0. KS p > 1e-3 at a fixed seed: a correct
    # sampler fails each with probability 1e-3.
    assert stats.kstest(out[:, 7, 0], stats.laplace(scale=b).cdf).pvalue > 1e-3

    def two_laplace_cdf(z):
        a = np.abs(z)
        tail = (2 * b + a) * np.exp(-a / b) / (4 * b)
        return np.where(z >= 0, 1 - tail, tail)

    assert stats.kstest(out[:, 2, 1], two_laplace_cdf).pvalue > 1e-3


def test_l2_laplace_node_norm_is_gamma_and_variance_matches():
    T, d, n, s = 4, 3, 20_000, 0.5
    out = tree_prefix_sums(np.zeros((T, d)), NodeNoise.l2_laplace(s), n, np.random.default_rng(5))
    # t = 1, 2, 4 use one node each: ||noise|| ~ Gamma(d, s). KS p > 1e-3 (fixed seed).
    for t in (1, 2, 4):
        norms = np.linalg.norm(out[:, t - 1], axis=1)
        assert stats.kstest(norms, stats.gamma(a=d, scale=s).cdf).pvalue > 1e-3
    # t = 3 uses two nodes: per-coordinate variance 2 (d + 1) s^2. Relative sd of a variance
    # estimate is below sqrt(kurtosis / N) ~ 0.02 here; 15% is > 7 sd.
    assert NodeNoise.l2_laplace(s).coordinate_variance(d) == (d + 1) * s**2
    assert np.var(out[:, 2]) == pytest.approx(2 * (d + 1) * s**2, rel=0.15)


@pytest.mark.parametrize("T", [1, 8, 9, 100])
def test_dp_events_compose_the_nodes_of_one_leaf(T):
    k = max_nodes_per_leaf(T)
    rng = np.random.default_rng(0)
    gauss = TreeAggregator(T, 2, NodeNoise.gaussian(3.0), 1, rng).dp_event(0.5)
    assert isinstance(gauss, dp_accounting.GaussianDpEvent)
    assert gauss.noise_multiplier == pytest.approx(3.0 / (math.sqrt(k) * 0.5))
    lap = TreeAggregator(T, 2, NodeNoise.laplace(2.0), 1, rng).dp_event(0.5)
    assert isinstance(lap, dp_accounting.ComposedDpEvent) and len(lap.events) == k
    assert all(e == dp_accounting.LaplaceDpEvent(4.0) for e in lap.events)
    l2 = TreeAggregator(T, 2, NodeNoise.l2_laplace(2.0), 1, rng).dp_event(0.5)
    assert isinstance(l2, dp_accounting.ComposedDpEvent) and len(l2.events) == k
    assert all(e == EpsilonDeltaDpEvent(0.25, 0.0) for e in l2.events)
    # At delta = 0 the k pure pieces compose to exactly k * Delta / scale.
    assert epsilon_of_event(lap, 0.0) == pytest.approx(k * 0.25, rel=1e-9)
    assert epsilon_of_event(l2, 0.0) == pytest.approx(k * 0.25, rel=1e-9)


def test_mechanism_wrapper():
    mech = TreeAggregationMechanism(9, 2, NodeNoise.laplace(1.0), sensitivity=2.0)
    assert mech.sensitivity.norm == "l1" and mech.sensitivity.bound == 2.0
    assert TreeAggregationMechanism(9, 2, NodeNoise.gaussian(1.0), 2.0).sensitivity.norm == "l2"
    xs = np.arange(18, dtype=float).reshape(9, 2)
    out = mech(xs, 6, np.random.default_rng(2))
    assert out.shape == (6, 9, 2)
    np.testing.assert_array_equal(
        out, tree_prefix_sums(xs, NodeNoise.laplace(1.0), 6, np.random.default_rng(2)))
    assert len(mech.dp_event().events) == max_nodes_per_leaf(9)
    with pytest.raises(ValueError, match="shape"):
        mech(xs[:5], 2, np.random.default_rng(0))
    with pytest.raises(ValueError, match="test-only"):
        TreeAggregationMechanism(9, 2, NodeNoise.none(), 1.0)


def test_bad_inputs_raise():
    rng = np.random.default_rng(0)
    noise = NodeNoise.gaussian(1.0)
    with pytest.raises(ValueError, match="T"):
        TreeAggregator(0, 2, noise, 1, rng)
    with pytest.raises(ValueError, match="d"):
        TreeAggregator(4, 0, noise, 1, rng)
    with pytest.raises(ValueError, match="n_runs"):
        TreeAggregator(4, 2, noise, 0, rng)
    with pytest.raises(TypeError, match="NodeNoise"):
        TreeAggregator(4, 2, 1.0, 1, rng)
    with pytest.raises(TypeError, match="Generator"):
        TreeAggregator(4, 2, noise, 1, np.random.RandomState(0))
    with pytest.raises(TypeError, match="integer"):
        TreeAggregator(4.0, 2, noise, 1, rng)
    for bad in (0.0, -1.0, math.inf, math.nan):
        with pytest.raises(ValueError, match="scale"):
            NodeNoise.laplace(bad)
        with pytest.raises(ValueError, match="scale"):
            NodeNoise.gaussian(bad)
    with pytest.raises(ValueError, match="kind"):
        NodeNoise("cauchy", 1.0)
    with pytest.raises(ValueError, match="scale 0"):
        NodeNoise("none", 1.0)
    with pytest.raises(ValueError, match="no privacy"):
        NodeNoise.none().composed_event(1.0, 3)
    with pytest.raises(ValueError, match="sensitivity"):
        noise.composed_event(0.0, 3)
    agg = TreeAggregator(4, 2, noise, 3, rng)
    with pytest.raises(ValueError, match="shape"):
        agg.add(np.ones(3))
    with pytest.raises(ValueError, match="shape"):
        agg.add(np.ones((2, 2)))
    with pytest.raises(ValueError, match="finite"):
        agg.add(np.array([1.0, np.nan]))
    assert agg.t == 0  # rejected leaves are not counted
    with pytest.raises(ValueError, match="n_runs"):
        tree_prefix_sums(np.ones((2, 4, 1)), noise, 3, rng)
    with pytest.raises(ValueError, match="ndim"):
        tree_prefix_sums(np.ones(4), noise, 3, rng)
    with pytest.raises(ValueError, match="leaf"):
        nodes_containing(5, 4)
    with pytest.raises(ValueError, match="T"):
        max_nodes_per_leaf(0)


@pytest.mark.parametrize("T", [1, 2, 7, 8, 45, 64])
def test_release_equals_a_fresh_sum_of_the_noisy_nodes_bitwise(T: int) -> None:
    # TreeAggregator keeps running sums per level instead of re-summing the nodes of t's binary
    # decomposition every step; the same additions in the same order (0.0 + highest level + ...
    # + lowest) must give the same bits. The node noise is replayed from an identical generator
    # (one (n, d) draw per leaf, in order), the clean nodes recomputed from the leaves.
    n, d = 5, 3
    rng = np.random.default_rng(T)
    xs = rng.standard_normal((n, T, d)) * np.exp2(rng.integers(-30, 31, (n, T, d)))
    noise = NodeNoise.gaussian(0.7)
    got = tree_prefix_sums(xs, noise, n, np.random.default_rng(99))
    replay = np.random.default_rng(99)
    noisy = {}
    for t in range(1, T + 1):
        j = (t & -t).bit_length() - 1
        node = xs[:, t - 1]
        if j:  # the leaf plus the clean nodes of levels j - 1, ..., 0 summed as numpy does
            node = node + np.stack([_clean(xs, t, level) for level in range(j)]).sum(axis=0)
        noisy[j] = node + noise.sample(n, d, replay)
        fresh = np.zeros((n, d))
        for level in reversed(range(t.bit_length())):
            if (t >> level) & 1:
                fresh += noisy[level]
        assert fresh.tobytes() == got[:, t - 1].tobytes()


def _clean(xs: np.ndarray, t: int, level: int) -> np.ndarray:
    """The clean node of ``level`` live just before leaf ``t`` (``level < v(t)``): it ends at leaf
    ``t - 2^level``, and is that leaf plus the clean nodes below it, summed as the aggregator does."""
    end = t - (1 << level)
    node = xs[:, end - 1]
    if level:
        node = node + np.stack([_clean(xs, end, k) for k in range(level)]).sum(axis=0)
    return node


def test_mirrored_leaf_streams_differ_at_one_leaf_by_twice_the_value() -> None:
    from dpaudit.mechanisms.tree_aggregation import mirrored_leaf_streams
    z0, z1 = mirrored_leaf_streams(3, 5, 2, 0.75)
    assert z0.shape == z1.shape == (5, 2)
    want = np.zeros((5, 2))
    want[2, 0] = 0.75
    np.testing.assert_array_equal(z0, want)
    np.testing.assert_array_equal(z1, -want)
    # The neighbouring streams' l2 distance is the replaced leaf's: 2 * value.
    assert np.linalg.norm(z0 - z1) == 1.5
