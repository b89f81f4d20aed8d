"""Window tree: exact old terms, a noisy window covered by few reused nodes, window-DP counts."""

import math

import dp_accounting
import numpy as np
import pytest
from scipy import stats

from dpaudit.mechanisms.tree_aggregation import NodeNoise, TreeNode, nodes_for_prefix
from dpaudit.mechanisms.window_tree import (
    WindowTreeAggregator,
    WindowTreeMechanism,
    max_window_nodes_per_leaf,
    node_use_interval,
    noisy_width,
    paper_gamma_noise,
    paper_gaussian_noise,
    window_nodes_containing,
    window_nodes_for_prefix,
    window_tree_prefix_sums,
)

HORIZONS = [1, 2, 3, 7, 8, 9, 64, 100]
WINDOWS = [1, 2, 3, 4, 5, 7, 8, 13, 16]
LAYOUTS = ["exact", "power_of_two"]


def ceil_levels(W):
    return math.ceil(math.log2(W)) + 1


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("T", HORIZONS)
def test_zero_noise_releases_exact_prefix_sums(T, layout):
    xs = np.random.default_rng(T).integers(-50, 50, size=(2, T, 2)).astype(float)
    exact = np.cumsum(xs, axis=1)  # integer-valued: every partial sum is exact in float64
    for W in WINDOWS:
        out = window_tree_prefix_sums(xs, W, NodeNoise.none(), 2, np.random.default_rng(0),
                                      layout=layout)
        np.testing.assert_array_equal(out, exact, err_msg=f"W={W}")


def test_paper_mini_example():
    # pfcoco Sec. III-A, W = 4: s_{1-7} = clean s_12, v_3 + noisy v_4, s_56, v_7; at t = 8 only
    # the subtree rooted at s_58 is noisy.
    assert window_nodes_for_prefix(7, 4) == [TreeNode(0, 4), TreeNode(1, 3), TreeNode(0, 7)]
    assert window_nodes_for_prefix(8, 4) == [TreeNode(2, 2)]
    assert window_nodes_for_prefix(3, 4) == nodes_for_prefix(3)  # t <= W: the plain tree
    assert noisy_width(4) == noisy_width(4, "power_of_two") == 4
    assert noisy_width(5) == 5 and noisy_width(5, "power_of_two") == 8


@pytest.mark.parametrize("layout", LAYOUTS)
def test_cover_is_the_noisy_suffix_with_few_nodes(layout):
    for W in range(1, 40):
        w = noisy_width(W, layout)
        worst = 0
        for t in range(1, 3 * w + 20):
            cover = window_nodes_for_prefix(t, W, layout)
            leaves = [leaf for node in cover for leaf in range(node.first, node.last + 1)]
            assert leaves == list(range(max(1, t - w + 1), t + 1))  # exactly the noisy suffix
            worst = max(worst, len(cover))
        if layout == "power_of_two" or W & (W - 1) == 0:
            assert worst <= ceil_levels(W), W
    # With the exact layout a window that is not a power of two can need more nodes per release
    # (accuracy only): [2, 15] = 2 | 3-4 | 5-8 | 9-12 | 13-14 | 15.
    assert len(window_nodes_for_prefix(15, 14)) == 6 > ceil_levels(14)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("W", [1, 2, 3, 4, 5, 6, 7, 8, 12, 13, 16])
def test_protected_leaf_lies_in_few_noisy_nodes(W, layout):
    for T in (1, 5, W, 3 * W + 7):
        covers = {t: window_nodes_for_prefix(t, W, layout) for t in range(1, T + 1)}
        uses = {}
        for t, cover in covers.items():
            for node in cover:
                uses.setdefault(node, []).append(t)
        for node, ts in uses.items():
            assert node_use_interval(node, W, T, layout) == (min(ts), max(ts))
            assert ts == list(range(min(ts), max(ts) + 1))
        worst = 0
        for leaf in range(1, T + 1):
            protected = range(leaf, min(leaf + W - 1, T) + 1)
            brute = {node for t in protected for node in covers[t] if node.contains(leaf)}
            assert set(window_nodes_containing(leaf, W, T, layout)) == brute
            worst = max(worst, len(brute))
        assert worst == max_window_nodes_per_leaf(W, T, layout)
        assert worst <= ceil_levels(W)
        if layout == "exact":
            assert worst == math.floor(math.log2(min(W, T))) + 1


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("W", [3, 4, 6])
def test_each_used_node_noised_once_at_completion(W, layout):
    T = 29
    ever_used = {node for t in range(1, T + 1) for node in window_nodes_for_prefix(t, W, layout)}
    agg = WindowTreeAggregator(T, W, 1, NodeNoise.gaussian(1.0), 2, np.random.default_rng(0),
                               layout=layout)
    for t in range(1, T + 1):
        agg.add(np.ones(1))
        # one draw per completed node that some release up to T uses; nothing else is noised
        assert agg.noise_draws == sum(1 for node in ever_used if node.last <= t)
        assert agg.live_nodes <= 2 * noisy_width(W, layout)


def test_repeated_queries_return_identical_copies():
    agg = WindowTreeAggregator(12, 5, 2, NodeNoise.laplace(1.0), 3, np.random.default_rng(4))
    assert np.array_equal(agg.prefix_sum(), np.zeros((3, 2)))
    for _ in range(9):
        agg.add(np.ones((3, 2)))
    first = agg.prefix_sum()
    first[:] = 0.0
    second = agg.prefix_sum()
    np.testing.assert_array_equal(second, agg.prefix_sum())
    assert not np.array_equal(second, first)


def shared_nodes(T, W, layout):
    sets = [set(window_nodes_for_prefix(t, W, layout)) for t in range(1, T + 1)]
    return np.array([[len(a & b) for b in sets] for a in sets], dtype=float)


@pytest.mark.parametrize("W,layout", [(4, "exact"), (5, "exact"), (5, "power_of_two")])
def test_gaussian_error_covariance_is_shared_window_nodes(W, layout):
    # Errors involve only the window's nodes (older terms exact) and reuse each node's noise:
    # Cov(e_t, e_t') = sigma^2 * |cover(t) & cover(t')|.
    T, d, n, sigma = 14, 2, 30_000, 0.8
    xs = np.random.default_rng(31).normal(size=(T, d))
    out = window_tree_prefix_sums(xs, W, NodeNoise.gaussian(sigma), n,
                                  np.random.default_rng(32), layout=layout)
    err = out - np.cumsum(xs, axis=0)
    C = sigma**2 * shared_nodes(T, W, layout)
    for t in range(T):
        # sum of squares / (k_t sigma^2) ~ chi-square(n d) exactly; two-sided p > 1e-4 (a correct
        # mechanism fails one of the 14 with probability < 14 * 1e-4).
        stat = np.sum(err[:, t] ** 2) / C[t, t]
        p = 2 * min(stats.chi2.cdf(stat, n * d), stats.chi2.sf(stat, n * d))
        assert p > 1e-4, (t + 1, stat / (n * d))
    emp = np.cov(err[:, :, 1], rowvar=False)
    # Sample covariance sd sqrt((C_aa C_bb + C_ab^2) / n); |z| < 5 over 105 entries fails for a
    # correct mechanism with probability < 105 * 6e-7.
    sd = np.sqrt((np.outer(np.diag(C), np.diag(C)) + C**2) / n)
    assert np.max(np.abs(emp - C) / sd) < 5


def test_laplace_error_variance_is_sum_over_window_nodes():
    T, W, d, n, b = 20, 6, 2, 30_000, 1.3
    out = window_tree_prefix_sums(np.zeros((T, d)), W, NodeNoise.laplace(b), n,
                                  np.random.default_rng(41))
    v = 2 * b**2
    for t in range(1, T + 1):
        k = len(window_nodes_for_prefix(t, W))
        e2 = out[:, t - 1].ravel() ** 2
        # Var(e^2) = 2 (k v)^2 + 3 k v^2 for a sum of k Laplace; |z| < 4.5 fails for a correct
        # mechanism with probability < 20 * 7e-6.
        z = (e2.mean() - k * v) / math.sqrt((2 * (k * v) ** 2 + 3 * k * v**2) / e2.size)
        assert abs(z) < 4.5, (t, z)


def test_paper_calibrations():
    # Lemma 1, eq. (11): Gamma(d, Delta_2 (ceil(log2 W) + 1) / eps).
    g = paper_gamma_noise(0.5, 2.0, 6)
    assert g.kind == "l2-laplace" and g.scale == pytest.approx(2.0 * 4 / 0.5)
    assert paper_gamma_noise(1.0, 1.0, 8).scale == pytest.approx(4.0)
    # Lemma 3, eq. (13): sigma^2 = 8 Delta^2 (ceil(log2 W) + 1)^2 ln^p(2/delta) / eps^2.
    eps, delta, D, W = 0.7, 1e-5, 1.5, 4
    base = 8 * D**2 * 9 / eps**2
    s2 = paper_gaussian_noise(eps, delta, D, W)
    assert s2.kind == "gaussian"
    assert s2.scale**2 == pytest.approx(base * math.log(2 / delta) ** 2)
    s1 = paper_gaussian_noise(eps, delta, D, W, log_power=1)
    assert s1.scale**2 == pytest.approx(base * math.log(2 / delta))
    with pytest.raises(ValueError, match="log_power"):
        paper_gaussian_noise(eps, delta, D, W, log_power=3)
    with pytest.raises(ValueError, match="delta"):
        paper_gaussian_noise(eps, 0.0, D, W)
    with pytest.raises(ValueError, match="epsilon"):
        paper_gamma_noise(0.0, 1.0, 4)


def test_dp_event_and_mechanism_wrapper():
    noise = NodeNoise.gaussian(2.0)
    agg = WindowTreeAggregator(50, 6, 1, noise, 1, np.random.default_rng(0))
    event = agg.dp_event(0.5)
    k = max_window_nodes_per_leaf(6, 50)
    assert k == 3
    assert isinstance(event, dp_accounting.GaussianDpEvent)
    assert event.noise_multiplier == pytest.approx(2.0 / (math.sqrt(k) * 0.5))
    mech = WindowTreeMechanism(50, 6, 1, NodeNoise.laplace(1.0), 0.5, layout="power_of_two")
    assert len(mech.dp_event().events) == max_window_nodes_per_leaf(6, 50, "power_of_two") == 4
    assert mech.sensitivity.norm == "l1"
    xs = np.ones((50, 1))
    out = mech(xs, 3, np.random.default_rng(9))
    np.testing.assert_array_equal(out, window_tree_prefix_sums(
        xs, 6, NodeNoise.laplace(1.0), 3, np.random.default_rng(9), layout="power_of_two"))
    with pytest.raises(ValueError, match="test-only"):
        WindowTreeMechanism(5, 2, 1, NodeNoise.none(), 1.0)


def test_bad_inputs_raise():
    rng = np.random.default_rng(0)
    noise = NodeNoise.gaussian(1.0)
    with pytest.raises(ValueError, match="T"):
        WindowTreeAggregator(0, 2, 1, noise, 1, rng)
    with pytest.raises(ValueError, match="W"):
        WindowTreeAggregator(5, 0, 1, noise, 1, rng)
    with pytest.raises(ValueError, match="d"):
        WindowTreeAggregator(5, 2, 0, noise, 1, rng)
    with pytest.raises(ValueError, match="n_runs"):
        WindowTreeAggregator(5, 2, 1, noise, 0, rng)
    with pytest.raises(ValueError, match="layout"):
        WindowTreeAggregator(5, 2, 1, noise, 1, rng, layout="blocks")
    with pytest.raises(TypeError, match="NodeNoise"):
        WindowTreeAggregator(5, 2, 1, "gaussian", 1, rng)
    with pytest.raises(TypeError, match="Generator"):
        WindowTreeAggregator(5, 2, 1, noise, 1, 0)
    agg = WindowTreeAggregator(2, 2, 2, noise, 1, rng)
    with pytest.raises(ValueError, match="finite"):
        agg.add([np.inf, 0.0])
    with pytest.raises(ValueError, match="shape"):
        agg.add(np.ones((2, 2)))
    agg.add([1.0, 2.0])
    agg.add([1.0, 2.0])
    with pytest.raises(ValueError, match="more than T"):
        agg.add([1.0, 2.0])
    with pytest.raises(ValueError, match="n_runs"):
        window_tree_prefix_sums(np.ones((3, 4, 1)), 2, noise, 2, rng)
    with pytest.raises(ValueError, match="leaf"):
        window_nodes_containing(0, 2, 5)
    with pytest.raises(ValueError, match="W"):
        noisy_width(0)


# ----------------------------------------------------------------------------------------------
# Memory: O(log W) stored arrays, same draws as the eager "clean leaves + noisy nodes" layout
# ----------------------------------------------------------------------------------------------


def reference_window_tree(xs, W, noise, n, rng, layout="exact"):
    """The straightforward O(W n d) implementation, kept as a reference for the law and the draws.

    Keeps the last w clean leaves; when a node that some release uses completes, stores its clean
    sum plus a fresh noise draw (levels low to high); s_t = exact old leaves + stored cover nodes.
    """
    T, d = xs.shape
    w = noisy_width(W, layout)
    noisy = {}
    out = np.empty((n, T, d))
    for t in range(1, T + 1):
        for j in range(min((t & -t).bit_length() - 1, w.bit_length() - 1) + 1):
            node = TreeNode(j, t >> j)
            if node_use_interval(node, W, T, layout) is not None:
                clean = xs[node.first - 1:node.last].sum(axis=0)
                noisy[node] = clean + noise.sample(n, d, rng)
        old = xs[:max(0, t - w)].sum(axis=0)
        out[:, t - 1] = old + sum(noisy[node] for node in window_nodes_for_prefix(t, W, layout))
    return out


@pytest.mark.parametrize("W,layout", [(1, "exact"), (4, "exact"), (6, "exact"), (6, "power_of_two"),
                                      (13, "exact"), (40, "exact")])
def test_outputs_equal_the_reference_implementation_for_a_fixed_seed(W, layout):
    T, d, n = 37, 2, 3
    xs = np.random.default_rng(W).normal(size=(T, d))
    for noise in (NodeNoise.gaussian(0.7), NodeNoise.laplace(1.1), NodeNoise.l2_laplace(0.4)):
        got = window_tree_prefix_sums(xs, W, noise, n, np.random.default_rng(5), layout=layout)
        want = reference_window_tree(xs, W, noise, n, np.random.default_rng(5), layout)
        # Same draws in the same order; only the summation order of exact terms differs.
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def _stored_array_bytes(obj):
    """Bytes of every numpy array reachable from an object's attributes (dicts, lists, tuples)."""
    seen, total, stack = set(), 0, list(vars(obj).values())
    while stack:
        item = stack.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, np.ndarray):
            total += item.nbytes
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple, set)):
            stack.extend(item)
    return total


@pytest.mark.parametrize("W,layout", [(64, "exact"), (100, "exact"), (100, "power_of_two")])
def test_stored_state_is_logarithmic_in_the_window(W, layout):
    # A run of the mechanism keeps the exact running sum, the current release and the noise of
    # O(log W) nodes, never W clean leaves nor W deferred node noises.
    T, d, n = 3 * W + 5, 3, 4
    agg = WindowTreeAggregator(T, W, d, NodeNoise.gaussian(1.0), n, np.random.default_rng(0),
                               layout=layout)
    levels = noisy_width(W, layout).bit_length()
    bound = (2 * levels + 4) * n * d * 8
    worst = 0
    for _ in range(T):
        agg.add(np.ones(d))
        worst = max(worst, _stored_array_bytes(agg))
    assert worst <= bound, (worst, bound)
    assert worst < noisy_width(W, layout) * n * d * 8  # the old layout stored w clean leaves
