"""Detection benchmark: broken and correct mechanisms from the literature (issue 15).

Each case is a mechanism with a published privacy claim, the input pair the literature uses to
show (or test) it, and the mechanism's **true** epsilon where it is known in closed form (with the
source or the derivation in the case's ``note``). A case is *broken* when its true epsilon exceeds
the claim. ``dpaudit.audit`` runs on every case at the same budget, confidence (alpha = 0.05) and
seed, with no per-case tuning (the engine's defaults: the cases are a public sample of bug classes,
and the engine is also run on held-out cases); a case is detected correctly when a broken mechanism
is reported ``violated`` and a correct one is not.

Bug classes (sources in each case):

* sparse vector: Lyu, Su and Li, *Understanding the Sparse Vector Technique for Differential
  Privacy*, PVLDB 10(6) 2017, Algorithms 1-6 and their privacy (Table 1: Alg 1, 2 epsilon-DP; Alg 3,
  5, 6 "infinity-DP", i.e. not epsilon'-DP for any finite epsilon' as the number of queries grows,
  Alg 5 already at a fixed number; Alg 4 ((1 + 6c)/4) epsilon-DP); plus the package's Dwork-Roth
  AboveThreshold as a correct case;
* report noisy max: Laplace or exponential noise, releasing the index (correct) or the noisy
  maximum value (broken; Ding, Wang, Wang, Zhang and Kifer, *Detecting Violations of Differential
  Privacy*, CCS 2018 (StatDP), and DP-Sniper's ReportNoisyMax3/4);
* continual counting: the binary (tree) mechanism of Dwork, Naor, Pitassi and Rothblum (STOC 2010)
  and Chan, Shi and Song (TISSEC 2011) with node noise calibrated per node instead of per leaf,
  divided by log2 T instead of the floor(log2 T) + 1 nodes a leaf meets (JKT12 COLT 2012, Lemma 6 /
  Theorem 11), node noise redrawn at every release instead of cached, and a counter that adds fresh
  Laplace(1/eps) noise to each of T released counts;
* calibration: Laplace noise calibrated to the l2 sensitivity of a vector query (true epsilon
  sqrt(d) epsilon for a shift along the diagonal), a histogram calibrated for add/remove but audited
  under replace-one (two bins move), a Gaussian with sigma = Delta/epsilon (the factor
  sqrt(2 ln(1.25/delta)) of Dwork and Roth 2014 Thm A.1 forgotten);
* exponential mechanism: weights exp(eps u / Delta) instead of exp(eps u / (2 Delta)) (McSherry and
  Talwar 2007; Dwork and Roth 2014 Thm 3.10): true epsilon 2 eps for non-monotone utilities.

Where DP-Sniper (Bichsel et al., IEEE S&P 2021) published a lower bound for the same mechanism, the
same parameters (eps = 0.1) and the same input pair, its number is in the ``DP-Sniper`` column:
a 90%-confidence bound from 2.1e8 runs per input (eth-sri/dp-sniper,
``eval_sp2021/reference-results/dd_search_reg_data.log``; the MLP log where higher), whereas the
dpaudit column is a 95% bound from ``--samples`` runs per input. The ``StatDP`` column is StatDP
(Ding et al., CCS 2018) as run and verified by DP-Sniper's authors (``eps_lcb`` in
``statdp_1_data.log`` of the same folder), on StatDP's own search result: marked "(own pair)"
where that pair is not this case's pair.

Usage::

    python benchmarks/bench_detection.py                    # 1e6 runs per input (make bench)
    python benchmarks/bench_detection.py --samples 100000 --only svt4-lee-clifton tree-per-node
    python benchmarks/bench_detection.py --search           # SVT/RNM: search StatDP's patterns
"""

from __future__ import annotations

import argparse
import functools
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np
from scipy import stats

import dpaudit
from dpaudit.formal.accounting import gaussian_epsilon
from dpaudit.blackbox.pair_search import statdp_patterns
from dpaudit.mechanisms import (ExponentialMechanism, GaussianMechanism, L2LaplaceMechanism,
                                LaplaceMechanism, NodeNoise, SparseVectorMechanism,
                                TreeAggregationMechanism, analytic_sigma)
from dpaudit.mechanisms.tree_aggregation import max_nodes_per_leaf, nodes_for_prefix

sys.path.insert(0, str(Path(__file__).resolve().parent))
from literature_mechanisms import _v, noisy_hist, report_noisy_max, svt  # noqa: E402

ALPHA = 0.05
DPSNIPER_EPS = 0.1   # the parameter of DP-Sniper's suite (its exp_default.py)
T_TREE = 8           # horizon of the continual-counting cases
D_VECTOR = 4         # dimension of the l1-for-l2 case
K_EXP = 8            # candidates of the exponential-mechanism cases


# --- true epsilons in closed form (each checked against a direct computation in
#     tests/test_bench_detection.py) ----------------------------------------------------------

def svt4_epsilon(c: int, eps: float) -> float:
    """Lyu-Su-Li 2017 Table 1: Alg 4 (Lee and Clifton 2014: eps1 = eps/4, query noise
    Lap(1/eps2), eps2 = 3 eps/4, no factor c) is ((1 + 6c)/4) eps-DP (DP-Sniper's suite lists
    0.175 at c = 1, eps = 0.1); the audited pair already reaches 0.1725 (svt_pair_epsilon)."""
    return (1 + 6 * c) / 4 * eps


def rnm_value_epsilon(k: int, eps: float) -> float:
    """Report noisy max with Laplace(2/eps) noise on k answers (each moves by at most 1) that
    releases the noisy maximum value (with or without its index): the density of (i, v) is
    f(v - a_i) prod_{j != i} F(v - a_j); each of the k factors moves by at most e^{eps/2} (Laplace
    pdf and cdf are e^{eps/2}-Lipschitz in log under a unit shift), and in the left tail
    (v -> -inf, where F is the pure exponential e^{eps (v - a)/2}/2) all k move together when every
    answer shifts by 1: sup = k eps / 2 exactly (DP-Sniper's ReportNoisyMax3: 0.25 at k = 5,
    eps = 0.1)."""
    return k * eps / 2


def tree_levels(T: int) -> int:
    """Nodes of the binary mechanism that contain leaf 1 and enter some prefix sum:
    floor(log2 T) + 1 (:func:`dpaudit.mechanisms.tree_aggregation.max_nodes_per_leaf`)."""
    return max_nodes_per_leaf(T)


def tree_epsilon(T: int, node_scale: float, shift: float = 1.0) -> float:
    """Exact epsilon of the binary mechanism with Laplace(``node_scale``) node noise when leaf 1
    moves by ``shift``: the released prefix sums are an invertible linear image of the noisy used
    nodes (one per step), so the pair's epsilon is the l1 shift in node space / scale:
    levels * shift / node_scale."""
    return tree_levels(T) * shift / node_scale


def tree_redraw_epsilon(T: int, node_scale: float, shift: float = 1.0) -> float:
    """Node noise redrawn at every release: s_t = prefix_t + (a sum of popcount(t) fresh
    Laplace(node_scale)); the T releases are independent, each a log-concave location family
    whose log-density slope tends to 1/node_scale in the tails, so each contributes exactly
    shift/node_scale (a supremum, approached in the tails): T * shift / node_scale."""
    return T * shift / node_scale


def exponential_pair_epsilon(eta: float, k: int) -> float:
    """Exact epsilon of P(x) ∝ exp(eta u(x)) on the pair u = (1, 0, ..., 0), u' = (0, 1, ..., 1)
    (k candidates, utilities in [0, 1], sensitivity 1): the largest log-ratio is at x = 0,
    eta + log((1 + (k-1) e^eta) / (e^eta + k - 1)); it tends to 2 eta as k -> inf (the
    non-monotone worst case of McSherry and Talwar's bound 2 eta Delta)."""
    e = math.exp(eta)
    return eta + math.log((1 + (k - 1) * e) / (e + k - 1))


def svt_outcome_probabilities(alg: int, a: np.ndarray, eps: float, t: float,
                              grid: int = 12_001) -> np.ndarray:
    """Exact law of :func:`literature_mechanisms.svt` ``(alg, c=1, t, eps)`` on answers ``a``, by
    quadrature over the threshold noise rho (all randomness but rho is independent across queries).

    Algs 1, 2, 4 (cutoff after the first "above"): the output is determined by the index of the
    first "above" (``len(a)`` = none), so the law is a vector of ``len(a) + 1`` probabilities.
    Alg 6 (no cutoff): the output is the whole flag vector; the law is over the ``2^len(a)``
    patterns, pattern ``m`` having flag ``j`` = bit ``j`` of ``m``. Alg 2 with c = 1 draws a fresh
    threshold only after the (final) "above", so its output law is Alg 1's with its own scales.
    """
    e1 = eps / 4 if alg == 4 else eps / 2
    e2 = eps - e1
    rho_scale = 1 / e1
    nu_scale = {1: 2 / e2, 2: 2 / e2, 4: 1 / e2, 6: 1 / e2}[alg]
    r = np.linspace(-60 * rho_scale, 60 * rho_scale, grid)
    w = stats.laplace.pdf(r, scale=rho_scale) * (r[1] - r[0])
    a = np.asarray(a, float)
    # P(query j below | rho) = P(a_j + nu < rho + t) (ties have probability zero)
    x = r[None, :] + t - a[:, None]
    below = stats.laplace.cdf(x, scale=nu_scale)
    if alg == 6:
        k = a.size
        bits = (np.arange(2 ** k)[:, None] >> np.arange(k)[None, :]) & 1
        log_b = stats.laplace.logcdf(x, scale=nu_scale)
        log_a = stats.laplace.logsf(x, scale=nu_scale)
        return np.exp(bits @ log_a + (1 - bits) @ log_b) @ w
    out = np.empty(a.size + 1)
    surv = np.ones_like(r)
    for j in range(a.size):
        out[j] = np.sum(w * surv * (1 - below[j]))
        surv = surv * below[j]
    out[-1] = np.sum(w * surv)
    return out


def svt_pair_epsilon(alg: int, a0: np.ndarray, a1: np.ndarray, eps: float, t: float) -> float:
    """Exact epsilon of the pair (a0, a1) for SVT Algs 1, 2, 4 (c = 1) and 6: the largest
    |log-ratio| of the two output laws of :func:`svt_outcome_probabilities` (pure DP: the worst
    event is a single outcome)."""
    return _svt_pair_epsilon(alg, tuple(map(float, a0)), tuple(map(float, a1)), eps, t)


@functools.lru_cache(maxsize=None)
def _svt_pair_epsilon(alg: int, a0: tuple, a1: tuple, eps: float, t: float) -> float:
    p0 = svt_outcome_probabilities(alg, np.array(a0), eps, t)
    p1 = svt_outcome_probabilities(alg, np.array(a1), eps, t)
    return float(np.max(np.abs(np.log(p0) - np.log(p1))))


def svt3_value_law(a: np.ndarray, eps: float, t: float, values: np.ndarray,
                   grid: int = 24_001) -> tuple[np.ndarray, float]:
    """Law of Lyu-Su-Li Alg 3 (c = 1, :func:`literature_mechanisms.svt` ``(3, 1, t, eps)``) on
    answers ``a``: the output is the index j of the first "above" with its noisy value
    v = a_j + nu_j, or "none". Returns the density of (j, v) at ``values`` (shape
    ``(len(a), len(values))``) and P(none), by quadrature over rho:
    dens_j(v) = f_nu(v - a_j) * int_{rho <= v - t} f_rho(rho) prod_{i<j} F_nu(rho + t - a_i) drho.
    """
    e1, e2 = eps / 2, eps / 2
    rho_scale, nu_scale = 1 / e1, 1 / e2
    r = np.linspace(-60 * rho_scale, 60 * rho_scale, grid)
    w = stats.laplace.pdf(r, scale=rho_scale) * (r[1] - r[0])
    a = np.asarray(a, float)
    idx = np.searchsorted(r, np.asarray(values, float) - t, side="right") - 1
    dens = np.zeros((a.size, len(values)))
    surv = np.ones_like(r)
    for j in range(a.size):
        cum = np.cumsum(w * surv)
        mass = np.where(idx >= 0, cum[np.clip(idx, 0, None)], 0.0)
        dens[j] = stats.laplace.pdf(values - a[j], scale=nu_scale) * mass
        surv = surv * stats.laplace.cdf(r + t - a[j], scale=nu_scale)
    return dens, float(np.sum(w * surv))


def svt3_pair_epsilon(a0: np.ndarray, a1: np.ndarray, eps: float, t: float,
                      span: float = 400.0) -> float:
    """Largest |log-ratio| of the two laws of :func:`svt3_value_law` over the values in
    [-span, span] (step 0.25) and "none": a numerical value of the pair's epsilon on that range
    (the supremum over all values can only be larger)."""
    return _svt3_pair_epsilon(tuple(map(float, a0)), tuple(map(float, a1)), eps, t, span)


@functools.lru_cache(maxsize=None)
def _svt3_pair_epsilon(a0: tuple, a1: tuple, eps: float, t: float, span: float) -> float:
    v = np.arange(-span, span + 0.125, 0.25)
    d0, n0 = svt3_value_law(np.array(a0), eps, t, v)
    d1, n1 = svt3_value_law(np.array(a1), eps, t, v)
    both = (d0 > 1e-300) & (d1 > 1e-300)
    ratio = np.abs(np.log(d0[both]) - np.log(d1[both]))
    return float(max(ratio.max(), abs(math.log(n0 / n1))))


# --- broken mechanisms not in the package (each a small function; the bug is in its docstring) --

def tree_counter(T: int, node_scale: float) -> Callable[[Any, int, np.random.Generator],
                                                        np.ndarray]:
    """The package's binary mechanism (scalar leaves) with Laplace(``node_scale``) node noise.
    Correct for eps-DP per leaf at node_scale = levels/eps; the bugs are the calibrations."""
    mech = TreeAggregationMechanism(T, 1, NodeNoise.laplace(node_scale), 1.0)

    def m(data, n, g):
        return mech.sample(np.asarray(data, float).reshape(T, 1), n, g)[..., 0]
    return m


def tree_counter_redraw(T: int, node_scale: float):
    """Binary mechanism whose node noise is drawn afresh at every release (an implementation bug:
    Chan, Shi and Song 2011 Sec. 3.4 noise each p-sum once and reuse it), scale levels/eps."""
    def m(data, n, g):
        x = np.asarray(data, float).reshape(T)
        prefix = np.cumsum(x)
        out = np.empty((n, T))
        for t in range(1, T + 1):
            nodes = len(nodes_for_prefix(t))
            out[:, t - 1] = prefix[t - 1] + g.laplace(0.0, node_scale, size=(n, nodes)).sum(axis=1)
        return out
    return m


def naive_counter(T: int, scale: float):
    """Each of the T running counts released with fresh Laplace(``scale``) noise (Chan, Shi and
    Song 2011's "Simple Counting Mechanism I", which needs scale T/eps; the bug is scale 1/eps)."""
    def m(data, n, g):
        prefix = np.cumsum(np.asarray(data, float).reshape(T))
        return prefix[None, :] + g.laplace(0.0, scale, size=(n, T))
    return m


def laplace_vector(scale: float):
    """Per-coordinate Laplace(``scale``) on a vector query; with scale = Delta_2/eps this is the
    "l1-for-l2" bug (Laplace needs the l1 sensitivity)."""
    def m(data, n, g):
        a = np.asarray(data, float)
        return a[None, :] + g.laplace(0.0, scale, size=(n, a.size))
    return m


def exponential_utilities(eta: float, form: str):
    """The package's exponential mechanism over utilities (``maximize``), printed parameter eta."""
    mech = ExponentialMechanism(1.0, eta, form, maximize=True)  # type: ignore[arg-type]
    return mech.sample


def package_svt(eps: float, threshold: float):
    return SparseVectorMechanism(eps, threshold, 1.0).sample


@dataclass(frozen=True)
class Case:
    """One benchmark case: a mechanism, its claim, the input pair and what is known about it."""

    name: str
    broken: bool
    mechanism: Callable[[Any, int, np.random.Generator], np.ndarray]
    data0: Any
    data1: Any
    epsilon: float                      # the claim
    true_epsilon: float                 # of the mechanism (sup over neighbours); inf if unbounded
    note: str                           # closed form and source
    delta: float = 0.0
    pair_epsilon: float | None = None   # exact epsilon of this pair, where it is below true
    dpsniper: float | None = None       # DP-Sniper's published bound on the same case
    #: StatDP's bound as run by DP-Sniper's authors (their statdp_1_data.log, ``eps_lcb``) and
    #: whether StatDP's pair is this case's pair (up to order, or a common shift of a
    #: translation-equivariant output); otherwise StatDP audited its own pair.
    statdp: float | None = None
    statdp_same_pair: bool = True
    #: For ``--search``: the inputs are vectors of this many query answers, each of which may move
    #: by 1 between neighbours (SVT, report noisy max), so StatDP's patterns are valid neighbours.
    search_dimensions: int | None = None


def _svt_case(alg: int, broken: bool, true: float, note: str, pair: tuple, ref: float,
              statdp: float, statdp_same_pair: bool) -> Case:
    names = {1: "svt1-lyu-su-li", 2: "svt2-dwork-roth", 3: "svt3-roth-notes",
             4: "svt4-lee-clifton", 5: "svt5-stoddard", 6: "svt6-chen"}
    t = 0.5 if alg == 1 else 1.0
    if alg in (1, 2, 4, 6):
        exact = svt_pair_epsilon(alg, pair[0], pair[1], DPSNIPER_EPS, t)
    elif alg == 3:
        exact = svt3_pair_epsilon(pair[0], pair[1], DPSNIPER_EPS, t)
    else:
        exact = None
    return Case(names[alg], broken, svt(alg, 1, t, eps=DPSNIPER_EPS), pair[0], pair[1],
                DPSNIPER_EPS, true, note, pair_epsilon=exact, dpsniper=ref,
                statdp=statdp, statdp_same_pair=statdp_same_pair, search_dimensions=len(pair[0]))


def cases() -> list[Case]:
    """The public suite (built fresh: each call returns new mechanism closures)."""
    e = DPSNIPER_EPS
    above_below = (_v((0, 5), (1, 5)), _v((1, 5), (0, 5)))     # DP-Sniper's SVT1/2 pair
    ones_vs_two_zero = (_v((1, 10)), _v((2, 5), (0, 5)))        # SVT3/4
    levels = tree_levels(T_TREE)
    leaf0 = np.zeros(T_TREE)
    leaf1 = np.r_[1.0, np.zeros(T_TREE - 1)]
    diag = np.full(D_VECTOR, 1 / math.sqrt(D_VECTOR))          # l2 norm 1, l1 norm sqrt(d)
    u0 = np.r_[1.0, np.zeros(K_EXP - 1)]
    u1 = np.r_[0.0, np.ones(K_EXP - 1)]
    sigma_ok = analytic_sigma(1.0, 1.0, 1e-5)
    return [
        # --- sparse vector (Lyu, Su and Li 2017), DP-Sniper's parameters: eps 0.1, c = 1 ----------
        _svt_case(1, False, e, "Lyu-Su-Li Alg 1 (their proposal): eps-DP (Table 1)",
                  above_below, 0.08580, 0.02975, True),
        _svt_case(2, False, e, "Dwork-Roth 2014 Alg 2 (Lyu-Su-Li Alg 2): eps-DP", above_below,
                  0.08594, 0.03164, False),
        _svt_case(3, True, math.inf, "Roth 2011 notes (Lyu-Su-Li Alg 3): releases q_i + nu_i; "
                  "infinity-DP (unbounded in the number of queries; Table 1); pair value "
                  "numerical (svt3_pair_epsilon)", ones_vs_two_zero,
                  0.17157, 0.02306, False),
        _svt_case(4, True, svt4_epsilon(1, e), "Lee-Clifton 2014 (Lyu-Su-Li Alg 4): query noise "
                  "without the factor c; ((1 + 6c)/4) eps (Table 1)", ones_vs_two_zero, 0.16868,
                  0.17086, True),
        _svt_case(5, True, math.inf, "Stoddard et al. 2014 (Lyu-Su-Li Alg 5): no query noise; "
                  "this pair's output (1^5 0^5) is impossible on the neighbour",
                  (_v((2, 5), (0, 5)), _v((1, 10))), 1.76119, 14.31431, True),
        _svt_case(6, True, math.inf, "Chen et al. 2015 (Lyu-Su-Li Alg 6): no cutoff; "
                  "infinity-DP (unbounded in the number of queries; Table 1)",
                  (_v((1, 5), (0, 5)), _v((0, 5), (1, 5))), 0.27204, 0.32204, True),
        Case("svt-above-threshold", False, package_svt(1.0, 0.5), above_below[0], above_below[1],
             1.0, 1.0, "package SparseVectorMechanism (Dwork-Roth Alg 1, Thm 3.23): eps-DP",
             search_dimensions=10),
        # --- report noisy max (eps 0.1, 5 answers, DP-Sniper's pairs) -----------------------------
        Case("rnm-laplace-index", False, report_noisy_max("laplace", "index", e), _v((1, 5)),
             _v((0, 1), (2, 4)), e, e, "Lap(2/eps) noise, argmax released: eps-DP (Dwork-Roth "
             "Sec. 3.3)", dpsniper=0.09250, statdp=0.09195, statdp_same_pair=False,
             search_dimensions=5),
        Case("rnm-exponential-index", False, report_noisy_max("exponential", "index", e),
             _v((1, 5)), _v((0, 1), (2, 4)), e, e, "Exp(2/eps) noise, argmax released: the "
             "exponential mechanism, eps-DP", dpsniper=0.09792, statdp=0.09958,
             statdp_same_pair=False, search_dimensions=5),
        Case("rnm-laplace-value", True, report_noisy_max("laplace", "value", e), _v((0, 5)),
             _v((1, 5)), e, rnm_value_epsilon(5, e), "noisy max VALUE released (StatDP "
             "CCS 2018): k eps / 2 (derivation in rnm_value_epsilon)", dpsniper=0.24881,
             statdp=0.19914, search_dimensions=5),
        Case("rnm-exponential-value", True, report_noisy_max("exponential", "value", e),
             _v((1, 5)), _v((2, 5)), e, math.inf, "noisy max VALUE with one-sided Exp noise: "
             "values in [1, 2) impossible on the neighbour", dpsniper=0.35344,
             statdp=0.19602, search_dimensions=5),
        # --- continual counting: binary mechanism, T = 8, leaf 1 moves by 1, claim eps = 1 --------
        Case("tree-correct", False, tree_counter(T_TREE, levels / 1.0), leaf0, leaf1, 1.0,
             tree_epsilon(T_TREE, levels / 1.0), "package tree, Lap(levels/eps) per node "
             f"(levels = floor(log2 T) + 1 = {levels}): eps"),
        Case("tree-per-node", True, tree_counter(T_TREE, 1.0), leaf0, leaf1, 1.0,
             tree_epsilon(T_TREE, 1.0), "each node eps-DP, composition over the levels forgotten:"
             " levels x eps"),
        Case("tree-log2T", True, tree_counter(T_TREE, math.log2(T_TREE)), leaf0, leaf1, 1.0,
             tree_epsilon(T_TREE, math.log2(T_TREE)), "eps / log2 T per node (the split of JKT12 "
             "Lemma 6 / Thm 11, there with Gaussian nodes, here Laplace): (floor(log2 T) + 1) "
             "/ log2 T x eps"),
        Case("tree-redraw", True, tree_counter_redraw(T_TREE, levels / 1.0), leaf0, leaf1, 1.0,
             tree_redraw_epsilon(T_TREE, levels / 1.0), "node noise redrawn per release "
             "(not cached): T eps / levels"),
        Case("counter-fresh-noise", True, naive_counter(T_TREE, 1.0), leaf0, leaf1, 1.0,
             T_TREE * 1.0, "T counts each + fresh Lap(1/eps) (CSS11 Simple Counting "
             "Mechanism I needs T/eps): T eps"),
        # --- calibration errors, claim eps = 1 ----------------------------------------------------
        Case("laplace-correct", False, LaplaceMechanism(1.0, 1.0).sample, 0.0, 1.0, 1.0, 1.0,
             "package Laplace, scale Delta/eps: eps"),
        Case("hist-add-remove-as-replace", True, noisy_hist(1.0), _v((1, 1), (0, 4)),
             _v((0, 1), (1, 1), (0, 3)), 1.0, 2.0, "histogram with Lap(1/eps) per bin; under "
             "replace-one two bins move: 2 eps"),
        Case("hist-replace-correct", False, noisy_hist(2.0), _v((1, 1), (0, 4)),
             _v((0, 1), (1, 1), (0, 3)), 1.0, 1.0, "histogram with Lap(2/eps) per bin: eps "
             "under replace-one"),
        Case("l1-for-l2", True, laplace_vector(1.0), np.zeros(D_VECTOR), diag, 1.0,
             math.sqrt(D_VECTOR), "Laplace scale Delta_2/eps on R^d: sqrt(d) eps on a "
             "diagonal shift"),
        Case("l2-laplace-correct", False, L2LaplaceMechanism(1.0, 1.0).sample,
             np.zeros(D_VECTOR), diag, 1.0, 1.0, "package l2-Laplace, exp(-eps ||z||_2): eps "
             "for l2 sensitivity 1"),
        Case("gaussian-no-log-factor", True, GaussianMechanism(1.0, 1.0).sample, 0.0, 1.0, 1.0,
             gaussian_epsilon(1.0, 1e-5), "sigma = Delta/eps, sqrt(2 ln(1.25/delta)) forgotten:"
             " exact eps(1e-5) of mu = 1 (Balle-Wang 2018)", delta=1e-5),
        Case("gaussian-analytic-correct", False, GaussianMechanism(1.0, sigma_ok).sample, 0.0,
             1.0, 1.0, gaussian_epsilon(1.0 / sigma_ok, 1e-5), "package analytic Gaussian "
             "(Balle-Wang 2018): exactly (1, 1e-5)", delta=1e-5),
        # --- exponential mechanism, claim eps = 1, 8 candidates, utilities in [0, 1] --------------
        Case("exp-mech-factor-2", True, exponential_utilities(1.0, "full"), u0, u1, 1.0, 2.0,
             "weights exp(eps u / Delta), the 2 of exp(eps u / (2 Delta)) dropped: 2 eps "
             "(sup over pairs)", pair_epsilon=exponential_pair_epsilon(1.0, K_EXP)),
        Case("exp-mech-correct", False, exponential_utilities(1.0, "half"), u0, u1, 1.0, 1.0,
             "package exponential mechanism, exp(eps u / (2 Delta)): eps (McSherry-Talwar)",
             pair_epsilon=exponential_pair_epsilon(0.5, K_EXP)),
    ]


def _fmt(x: float | None, digits: int = 3) -> str:
    if x is None:
        return ""
    return "inf" if math.isinf(x) else f"{x:.{digits}g}"


def run_case(case: Case, samples: int, seed: int, search: bool = False) -> tuple[Any, float]:
    """Audit one case at the benchmark's fixed settings; returns (AuditResult, seconds).

    ``search``: for cases with ``search_dimensions``, the engine is not given the literature's
    pair but searches StatDP's input patterns (``pairs=statdp_patterns(d)``, the engine's default
    pilot budget and candidate cap) and audits the most promising with fresh runs.
    """
    t0 = time.perf_counter()
    if search and case.search_dimensions is not None:
        r = dpaudit.audit(case.mechanism, epsilon=case.epsilon, delta=case.delta,
                          samples=samples, alpha=ALPHA, seed=seed,
                          pairs=statdp_patterns(case.search_dimensions))
    else:
        r = dpaudit.audit(case.mechanism, case.data0, case.data1, epsilon=case.epsilon,
                          delta=case.delta, samples=samples, alpha=ALPHA, seed=seed)
    return r, time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--samples", type=int, default=1_000_000, help="runs per input (default 1e6)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", nargs="*", default=None, help="subset of case names")
    ap.add_argument("--search", action="store_true",
                    help="SVT and report-noisy-max cases: search StatDP's input patterns instead "
                         "of auditing the literature's pair")
    args = ap.parse_args(argv)
    suite = cases()
    known = {c.name for c in suite}
    if args.only:
        unknown = sorted(set(args.only) - known)
        if unknown:
            ap.error(f"unknown case(s) {unknown}; known: {sorted(known)}")
        suite = [c for c in suite if c.name in args.only]
    print(f"dpaudit {dpaudit.__version__} detection benchmark: {args.samples:.1e} runs per input, "
          f"alpha = {ALPHA}, seed {args.seed}; DP-Sniper: 90% bound, 2.1e8 runs per input"
          + ("; SVT/RNM pairs searched (StatDP patterns)" if args.search else ""))
    print("| case | broken? | claim eps (delta) | true eps (this pair) | dpaudit lower bound | "
          "DP-Sniper | StatDP | verdict | detected correctly? | statistic | seconds |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    misses, false_alarms = [], []
    t_all = time.perf_counter()
    for case in suite:
        r, dt = run_case(case, args.samples, args.seed, args.search)
        violated = r.verdict == "violated"
        ok = violated == case.broken
        if not ok:
            (misses if case.broken else false_alarms).append(case.name)
        claim = f"{case.epsilon:g}" + (f" ({case.delta:g})" if case.delta else "")
        searched = args.search and case.search_dimensions is not None
        true = _fmt(case.true_epsilon) + (" (pair searched)" if searched else
                                          f" ({_fmt(case.pair_epsilon)})"
                                          if case.pair_epsilon is not None else "")
        print(f"| {case.name} | {'yes' if case.broken else 'no'} | {claim} | {true} | "
              f"{r.epsilon_lower_bound:.4g} | {_fmt(case.dpsniper, 4)} | "
              f"{_fmt(case.statdp, 4)}{'' if case.statdp_same_pair else ' (own pair)'} | "
              f"{r.verdict} | "
              f"{'yes' if ok else ('MISS' if case.broken else 'FALSE ALARM')} | "
              f"{r.statistic.get('name', '')} | {dt:.1f} |",
              flush=True)
    total = time.perf_counter() - t_all
    print(f"\n{len(suite)} cases ({sum(c.broken for c in suite)} broken), total {total:.1f} s; "
          f"misses {len(misses)}{': ' + ', '.join(misses) if misses else ''}; "
          f"false alarms {len(false_alarms)}"
          f"{': ' + ', '.join(false_alarms) if false_alarms else ''}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
