"""A held-out zoo: both audit modes on mechanisms the engine was not developed on (issue 36).

Every mechanism here is absent from ``bench_detection.py``, ``bench_gate.py``/``bench_dpsniper.py``
and ``tests/test_sequential_gate.py``. They are chosen for the ways a user's code differs from the
engine's own zoo: output types (bool scalars and vectors, int counts, strings in an object array or
a Python list, shape ``(n,)`` vs ``(n, 1)``, 2-D tables per run, variable-length releases padded
with -1 or NaN, -inf, values near 1e300, constant outputs), randomness sources (numpy's global
state, a self-seeded generator) and bug classes (a Gaussian with delta > 0 calibrated for the
wrong sensitivity, an exponential mechanism with the wrong utility sensitivity, randomized
response with a wrong keep probability, a two-sided geometric that counts zero twice, a clipped
mean with the clip missing, noisy argmax + gap with half the noise, AboveThreshold restarted
without fresh threshold noise or split budget). Each mechanism's docstring cites where the
mechanism (and the bug) comes from; its true epsilon (of the audited pair, or the supremum where
the pair approaches it) is derived in the docstring and computed in the code where it needs
numerics.

``expect`` is what a correct auditor must answer: ``"violated"`` for a broken mechanism,
``"not violated"`` for a correct one, ``"refused"`` (a ValueError/TypeError naming the problem)
for outputs or randomness that cannot be audited as independent runs (NaN, infinities, a
mechanism that seeds itself). A broken mechanism reported ``not violated`` is a *miss* (a power
statement, not an error: the bound is a valid lower bound), a correct one reported ``violated`` is
a *false alarm* (a validity failure), anything else raised is a *crash*.

Usage::

    OPENBLAS_NUM_THREADS=1 python benchmarks/heldout_zoo.py --samples 100000 1000000 \
        --gate-samples 100000          # the table of docs/benchmarks.md (one run)
    python benchmarks/heldout_zoo.py --samples 20000 --gate-samples 20000 --only rr-exact
    python benchmarks/heldout_zoo.py --false-alarms 1000 --gate-samples 10000   # gate level
"""

from __future__ import annotations

import argparse
import datetime
import itertools
import math
import sys
import time
import traceback
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
from scipy import stats

import dpaudit
from dpaudit.blackbox.sequential_gate import sequential_gate
from dpaudit.formal.accounting.closed_forms import gaussian_epsilon
from dpaudit.mechanisms import analytic_sigma

EPS = 1.0      # every claim below is epsilon = 1 (delta = 1e-5 for the Gaussians)
DELTA_G = 1e-5
ALPHA = 0.05

# ----------------------------------------------------------------------------------------------
# True epsilons that need a few lines of numerics
# ----------------------------------------------------------------------------------------------


def softmax_pair_epsilon(eta: float, u0: np.ndarray, u1: np.ndarray) -> float:
    """Exact epsilon of the pair for P(j) ∝ exp(eta u_j): max_j |log P0(j) - log P1(j)|."""
    l0 = eta * u0 - np.logaddexp.reduce(eta * u0)
    l1 = eta * u1 - np.logaddexp.reduce(eta * u1)
    return float(np.max(np.abs(l0 - l1)))


def restarted_above_threshold_law(a: np.ndarray, t: float, c: int, rho_scale: float,
                                  nu_scale: float, h: float = 0.004,
                                  span: float = 80.0) -> dict[tuple[int, ...], float]:
    """Exact law of :func:`above_threshold_reused_noise` on answers ``a``: outcome vectors with 1
    (above), 0 (below), -1 (after the c-th above). Given the one threshold noise ``rho`` the
    queries are independent (``P[a_i + nu_i >= t + rho]``); the integral over ``rho`` is a Riemann
    sum on a grid of step ``h`` over [-span, span] (it agrees with adaptive quadrature,
    scipy.integrate.quad, to 5e-8 in the pair epsilon on a 4-query pair; the laws sum to 1 within
    4e-7)."""
    r = np.arange(-span, span + h / 2, h)
    w = stats.laplace.pdf(r, scale=rho_scale) * h
    up = [stats.laplace.sf(t + r - ai, scale=nu_scale) for ai in a]
    m = len(a)
    law: dict[tuple[int, ...], float] = {}
    for pattern in itertools.product((0, 1), repeat=m):
        ups = np.cumsum(pattern)
        # positions after the c-th above are aborted (-1): each outcome once, from the pattern
        # that is 0 there
        stop = int(np.argmax(ups >= c)) if ups[-1] >= c else m - 1
        if any(pattern[i] for i in range(stop + 1, m)):
            continue
        p = w.copy()
        for i in range(stop + 1):
            p = p * (up[i] if pattern[i] else 1.0 - up[i])
        law[tuple(pattern[i] if i <= stop else -1 for i in range(m))] = float(p.sum())
    return law


def restarted_above_threshold_pair_epsilon(a0, a1, t, c, rho_scale, nu_scale) -> float:
    l0 = restarted_above_threshold_law(np.asarray(a0, float), t, c, rho_scale, nu_scale)
    l1 = restarted_above_threshold_law(np.asarray(a1, float), t, c, rho_scale, nu_scale)
    assert abs(sum(l0.values()) - 1) < 1e-5 and abs(sum(l1.values()) - 1) < 1e-5
    return max(abs(math.log(l0[k] / l1[k])) for k in l0)


# ----------------------------------------------------------------------------------------------
# The mechanisms (each ``m(data, n, rng)`` returns the outputs of n independent runs)
# ----------------------------------------------------------------------------------------------


def randomized_response(keep: float):
    """Warner (JASA 1965) randomized response on one bit: report the true bit with probability
    ``keep``, its flip otherwise; a bool per run. epsilon = ln(keep / (1 - keep)) on the pair 0/1
    (the two outcomes' ratios are keep/(1-keep) and its inverse): the correct calibration
    keep = e^eps / (1 + e^eps) is exactly eps."""
    def m(bit, n, g):
        return np.where(g.random(n) < keep, bool(bit), not bool(bit))
    return m


def forced_response_confusion(eps: float):
    """Randomized response written as "answer truthfully with probability p, otherwise toss a fair
    coin" (the forced-response form, Fox and Tracy 1986) but with the Warner keep probability
    p = e^eps / (1 + e^eps) plugged in: P[1 | 1] = p + (1 - p)/2 = (1 + p)/2, P[1 | 0] = (1 - p)/2,
    so epsilon = ln((1 + p) / (1 - p)) = ln(1 + 2 e^eps) = 1.862 at eps = 1 (the coin form needs
    p = (e^eps - 1)/(e^eps + 1))."""
    p = math.exp(eps) / (1 + math.exp(eps))

    def m(bit, n, g):
        truthful = g.random(n) < p
        coin = g.random(n) < 0.5
        return np.where(truthful, bool(bit), coin)
    return m


def two_sided_geometric(eps: float):
    """The geometric mechanism (Ghosh, Roughgarden and Sundararajan, STOC 2009): count + Z with
    P[Z = z] = (1 - a)/(1 + a) a^|z|, a = e^-eps, drawn as G1 - G2 of two geometric variables on
    {0, 1, ...} (numpy's geometric starts at 1). Consecutive values have ratio a: exactly eps on
    counts that differ by 1."""
    a = math.exp(-eps)

    def m(count, n, g):
        z = (g.geometric(1 - a, n) - 1) - (g.geometric(1 - a, n) - 1)
        return int(count) + z
    return m


def geometric_sign_times_magnitude(eps: float):
    """The geometric mechanism drawn as a random sign times a one-sided geometric magnitude on
    {0, 1, ...} (the continuous recipe for Laplace, sign x Exponential, carried over to integers):
    P[Z = 0] = 1 - a but P[Z = +-z] = (1 - a) a^z / 2 for z >= 1, so zero carries twice its mass.
    P[count 0 -> 0] / P[count 1 -> 0] = (1 - a) / ((1 - a) a / 2) = 2 e^eps: epsilon = eps + ln 2
    = 1.693 at eps = 1 (the supremum, attained on output 0 or 1 of the pair 0/1)."""
    a = math.exp(-eps)

    def m(count, n, g):
        mag = g.geometric(1 - a, n) - 1
        sign = np.where(g.random(n) < 0.5, -1, 1)
        return (int(count) + sign * mag).astype(np.int64)
    return m


CLIP_N = 10


def clipped_mean(eps: float, clip: bool):
    """Mean of ``CLIP_N`` records clipped to [0, 1] plus Laplace(1 / (n eps)) (Dwork, McSherry,
    Nissim and Smith 2006; the bounded-mean recipe, e.g. OpenDP's clamp -> mean -> Laplace), one
    column per run (shape (n, 1)). With the clip, replace-one moves the mean by at most 1/n:
    exactly eps on the pair zeros vs one record at 5. Without it (the bug: the clamp forgotten,
    the noise still calibrated for [0, 1]) that pair moves the mean by 5/n: epsilon 5 eps (and
    unbounded over pairs)."""
    def m(x, n, g):
        x = np.asarray(x, float)
        v = np.clip(x, 0.0, 1.0) if clip else x
        return (v.mean() + g.laplace(0.0, 1.0 / (CLIP_N * eps), n))[:, None]
    return m


def noisy_argmax_gap(b: float):
    """Noisy max with gap (Ding, Wang, Xiao, Wang and Kifer, "Free gap information from the
    differentially private sparse vector and noisy max mechanisms", PVLDB 13(3) 2019, Alg. 2):
    Laplace(b) on each of two sensitivity-1 queries, release [argmax, noisy top - noisy second].
    Their Theorem 2 gives eps-DP with b = 2/eps for general (non-monotone) queries. On the pair
    q = (0, 1) vs (1, 0), with D = L1 - L0 (density (1/4b)(1 + |x|/b) e^-|x|/b), the output
    (1, g) has density f_D(g - 1) vs f_D(g + 1): the ratio (b + g - 1)/(b + g + 1) e^{2/b} for
    g >= 1 increases to e^{2/b} as g grows (and is below it for g < 1). So the pair's epsilon is
    2/b, approached, never attained: eps at b = 2/eps; 2 eps at b = 1/eps (the bug: the noise of
    the monotone case, their Lap(1/eps), used on non-monotone queries)."""
    def m(q, n, g):
        q = np.asarray(q, float)
        noisy = q[None, :] + g.laplace(0.0, b, size=(n, q.size))
        top = np.argmax(noisy, axis=1)
        srt = np.sort(noisy, axis=1)
        return np.column_stack([top.astype(float), srt[:, -1] - srt[:, -2]])
    return m


KRR_LABELS = ("a", "b", "c", "d")


def k_randomized_response(p_true: float, as_list: bool):
    """k-ary randomized response (Kairouz, Oh and Viswanath, "Extremal mechanisms for local
    differential privacy", NeurIPS 2014 / JMLR 2016): report the true label with probability
    ``p_true``, each of the other k - 1 labels with (1 - p_true)/(k - 1); labels are str (an object
    array, or a Python list when ``as_list``). epsilon = ln(p_true (k - 1) / (1 - p_true)): the
    correct p_true = e^eps / (e^eps + k - 1) gives eps; the binary formula e^eps / (e^eps + 1)
    used with k = 4 gives eps + ln 3 = 2.099."""
    k = len(KRR_LABELS)

    def m(label, n, g):
        i = KRR_LABELS.index(label)
        other = (i + 1 + g.integers(0, k - 1, n)) % k
        idx = np.where(g.random(n) < p_true, i, other)
        out = [KRR_LABELS[j] for j in idx]
        return out if as_list else np.array(out, dtype=object)
    return m


def huge_scale_laplace(scale: float):
    """A Laplace release reported in units of 1e-300 (x 1e300: outputs near 1e300, a post-
    processing, so the privacy is that of x + Laplace(scale) with sensitivity 1: 1/scale; the
    float64 overflow edge for any statistic that squares its inputs). Correct at scale 1/eps,
    broken (2 eps) at scale 1/(2 eps) (Dwork, McSherry, Nissim and Smith 2006)."""
    def m(x, n, g):
        return 1e300 * (float(x) + g.laplace(0.0, scale, n))
    return m


def huge_histogram(scale: float):
    """A noisy 3-bin histogram (Laplace(``scale``) per bin) reported in units of 1e-300 (x 1e300,
    a post-processing): vector outputs near 1e300, where a covariance overflows (the engine
    crashed here with numpy's "Eigenvalues did not converge" before this zoo). Calibrated for
    add/remove (scale 1/eps) but claimed under replace-one, where two bins move by 1 (the
    DP-Sniper NoisyHist pattern): exactly 2 eps on the pair (bin 0 vs bin 1)."""
    def m(h, n, g):
        return 1e300 * (np.asarray(h, float)[None, :] + g.laplace(0.0, scale, size=(n, len(h))))
    return m


def constant_release(data, n, g):
    """A mechanism that releases nothing about its input (all zeros): 0-DP, trivially within any
    claim; a degenerate case (a constant statistic) that must neither crash nor alarm."""
    return np.zeros(n, dtype=np.int64)


def contingency_table(scale: float):
    """A 2 x 3 contingency table with Laplace(``scale``) on every cell (Dwork, McSherry, Nissim
    and Smith 2006, histograms), one 2-D array per run (shape (n, 2, 3)). Replace-one moves one
    record from one cell to another: two cells move by 1, l1 sensitivity 2, so scale 2/eps is
    exactly eps on the pair (cell (0,0) vs cell (0,1))."""
    def m(table, n, g):
        t = np.asarray(table, float)
        return t[None] + g.laplace(0.0, scale, size=(n,) + t.shape)
    return m


def log_noisy_count(eps: float):
    """log of a non-negative noisy count, log(max(c + Laplace(1/eps), 0)), -inf when the noisy
    count is at most 0 (a common way to report counts on a log scale; post-processing of the
    Laplace mechanism, so exactly eps on counts 0/1). Its -inf outputs are not finite numbers:
    the auditor must refuse them with a clear message, not average them."""
    def m(c, n, g):
        with np.errstate(divide="ignore"):
            return np.log(np.maximum(float(c) + g.laplace(0.0, 1.0 / eps, n), 0.0))
    return m


HIST_T = 0.5


def noisy_values_above_threshold(scale: float):
    """Noisy 4-bin histogram (Laplace(``scale``) per bin), releasing the noisy values of the bins
    above ``HIST_T`` in bin order, padded with NaN to length 4 (a variable-length release).
    Post-processing of the noisy histogram: with scale 2/eps it is exactly eps-DP under
    replace-one (two bins move by 1). NaN padding cannot be audited as a number: refused."""
    def m(h, n, g):
        noisy = np.asarray(h, float)[None, :] + g.laplace(0.0, scale, size=(n, len(h)))
        out = np.full_like(noisy, np.nan)
        keep = noisy > HIST_T
        for i in range(n):
            v = noisy[i][keep[i]]
            out[i, : v.size] = v
        return out
    return m


def indices_above_threshold(scale: float):
    """The indices of the bins of a noisy 4-bin histogram (Laplace(``scale``) per bin) whose noisy
    count exceeds ``HIST_T`` = 0.5, in increasing order, padded with -1 to length 4 (an int release
    of variable length). Calibrated for add/remove (scale 1/eps) but claimed under replace-one,
    where two bins move (the DP-Sniper NoisyHist pattern, here through a threshold). The bins are
    independent and the outcome ratio is the product over the two moved bins: for a bin at 1 vs 0,
    P[above] = 1 - e^{-(1-T)/b}/2 vs e^{-T/b}/2, with T = 1/2 both ratios equal
    r = 2 e^{1/(2b)} - 1, so the pair's epsilon is 2 ln(2 e^{eps/2} - 1) = 1.664 at b = 1/eps
    (at the replace-one calibration b = 2/eps: 2 ln(2 e^{eps/4} - 1) = 0.90 < eps)."""
    def m(h, n, g):
        noisy = np.asarray(h, float)[None, :] + g.laplace(0.0, scale, size=(n, len(h)))
        above = noisy > HIST_T
        out = np.full(noisy.shape, -1, dtype=np.int64)
        for i in range(n):
            idx = np.flatnonzero(above[i])
            out[i, : idx.size] = idx
        return out
    return m


def indices_pair_epsilon(b: float) -> float:
    p1 = 1 - 0.5 * math.exp(-(1 - HIST_T) / b)
    p0 = 0.5 * math.exp(-HIST_T / b)
    return 2 * max(math.log(p1 / p0), math.log((1 - p0) / (1 - p1)))


def gaussian_sum(sigma: float, as_list: bool):
    """Gaussian mechanism on the sum of records in [-1, 1] (Dwork and Roth 2014, App. A; Balle and
    Wang, ICML 2018): sum + N(0, sigma^2). Replace-one moves the sum by up to 2. With sigma the
    analytic sigma for (1, 1e-5) at sensitivity 2 it is exactly (1, 1e-5)-DP on the pair [1, 0, 0]
    vs [-1, 0, 0] (the correct case returns a Python list of floats); the bug calibrates for
    sensitivity 1 (a record "changes the sum by at most 1", true under add/remove of a record in
    [0, 1], false here): mu = 2 / sigma_1 and epsilon(1e-5) from Balle-Wang's exact curve."""
    def m(x, n, g):
        out = float(np.sum(x)) + g.normal(0.0, sigma, n)
        return out.tolist() if as_list else out
    return m


EXP_U0 = np.array([3.0, 0.0, 0.0, 0.0])
EXP_U1 = np.array([0.0, 3.0, 3.0, 3.0])


def exponential_mechanism(eta: float):
    """Exponential mechanism (McSherry and Talwar, FOCS 2007): candidate j with probability
    ∝ exp(eta u_j), released as an int. Utilities are sums of per-record scores in [0, 3], so
    replace-one moves each by up to 3 (Delta_u = 3) and eps-DP needs eta = eps / (2 Delta_u) =
    1/6; the bug uses Delta_u = 1 (eta = 1/2). Pair: u = (3, 0, 0, 0) vs (0, 3, 3, 3); the exact
    pair epsilon is in :func:`softmax_pair_epsilon` (2.16 for the bug, 0.75 correct)."""
    def m(u, n, g):
        w = np.exp(eta * (np.asarray(u, float) - np.max(u)))
        return g.choice(len(w), size=n, p=w / w.sum()).astype(np.int64)
    return m


AT_T, AT_C = 0.0, 2
AT_A0 = np.r_[np.zeros(6), 1.0, 1.0]
AT_A1 = np.r_[np.ones(6), 0.0, 0.0]


def above_threshold_reused_noise(eps: float):
    """AboveThreshold (Dwork and Roth 2014, Alg. 1: rho ~ Lap(2/eps), nu_i ~ Lap(4/eps)) restarted
    after each "above" until c = 2 aboves, *reusing* the first threshold noise and the one-instance
    noise scales. Dwork-Roth's Sparse (Alg. 2) redraws rho and runs each instance at eps/c
    (rho ~ Lap(2c/eps), nu ~ Lap(4c/eps)). The reused threshold alone is the design of Lyu, Su and
    Li 2017 Alg. 1, which is (eps1 + eps2)-DP with rho ~ Lap(1/eps1), nu ~ Lap(2c/eps2); here
    eps1 = eps/2, eps2 = c eps/2, so the bug's epsilon is at most (1 + c) eps/2 = 1.5 eps. (Reusing
    rho is allowed; not splitting the budget over the restarts is the bug.) The audited pair,
    8 queries 0^6 1^2 vs 1^6 0^2 at threshold 0, has exact epsilon 1.360
    (:func:`restarted_above_threshold_pair_epsilon`, on the outcome 0^6 1^2 of probability 0.0073
    vs 0.0019; 4-query pairs stay below eps: 0.81). Output: 1 above, 0 below, -1 after the c-th
    above (an int vector of 8)."""
    def m(a, n, g):
        a = np.asarray(a, float)
        rho = g.laplace(0.0, 2.0 / eps, n)
        nu = g.laplace(0.0, 4.0 / eps, size=(n, a.size))
        up = (a[None, :] + nu) >= (AT_T + rho)[:, None]
        ups_before = np.cumsum(up, axis=1) - up
        return np.where(ups_before >= AT_C, -1, up.astype(np.int64))
    return m


def global_state_laplace(data, n, g):
    """Laplace noise drawn from numpy's legacy global RNG (``np.random.laplace``, ignoring the
    generator it is given, as older library code does), at scale 1/(2 eps) for a sensitivity-1
    query: 2 eps (Dwork, McSherry, Nissim and Smith 2006). The audit must still sample
    independent runs (dpaudit reseeds the global state per chunk, issue 24) and catch it."""
    return float(data) + np.random.laplace(0.0, 0.5 / EPS, n)


def self_seeded_laplace(data, n, g):
    """Laplace(1/eps) from a generator seeded with a constant inside the mechanism (a "make it
    reproducible" fix gone wrong): every call repeats the same noise, so the release is a
    deterministic function of the data (infinite epsilon on any pair whose outputs differ). Its
    runs are not independent draws: the auditor must refuse it (issue 32)."""
    return float(data) + np.random.default_rng(7).laplace(0.0, 1.0 / EPS, n)


# ----------------------------------------------------------------------------------------------
# The zoo
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class HeldOut:
    name: str
    mechanism: Callable[..., Any]
    data0: Any
    data1: Any
    true_epsilon: float       # of the audited pair (its supremum where not attained)
    expect: str               # "violated" | "not violated" | "refused"
    output: str               # the output type, for the table
    epsilon: float = EPS
    delta: float = 0.0

    @property
    def broken(self) -> bool:
        return self.true_epsilon > self.epsilon + 1e-12


def zoo() -> list[HeldOut]:
    """The held-out mechanisms (fresh closures on every call)."""
    e = EPS
    keep = math.exp(e) / (1 + math.exp(e))
    sigma1 = analytic_sigma(1.0, e, DELTA_G)
    sigma2 = analytic_sigma(2.0, e, DELTA_G)
    k = len(KRR_LABELS)
    h0, h1 = np.array([1.0, 0.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0, 0.0])
    t0 = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    t1 = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 0.0]])
    rec0, rec1 = np.zeros(CLIP_N), np.r_[5.0, np.zeros(CLIP_N - 1)]
    at_eps = restarted_above_threshold_pair_epsilon(AT_A0, AT_A1, AT_T, AT_C, 2 / e, 4 / e)
    return [
        # --- correct ------------------------------------------------------------------------
        HeldOut("rr-exact", randomized_response(keep), 0, 1, e, "not violated", "bool scalar"),
        HeldOut("geometric-correct", two_sided_geometric(e), 0, 1, e, "not violated",
                "int scalar"),
        HeldOut("clipped-mean-correct", clipped_mean(e, True), rec0, rec1, e, "not violated",
                "float (n, 1)"),
        HeldOut("argmax-gap-correct", noisy_argmax_gap(2 / e), np.array([0.0, 1.0]),
                np.array([1.0, 0.0]), e, "not violated", "float (n, 2): index, gap"),
        HeldOut("krr-correct", k_randomized_response(math.exp(e) / (math.exp(e) + k - 1), False),
                "a", "b", e, "not violated", "str, object array"),
        HeldOut("huge-scale-correct", huge_scale_laplace(1 / e), 0.0, 1.0, e, "not violated",
                "float ~1e300"),
        HeldOut("constant-release", constant_release, 0, 1, 0.0, "not violated",
                "int, constant"),
        HeldOut("contingency-correct", contingency_table(2 / e), t0, t1, e, "not violated",
                "float (n, 2, 3)"),
        HeldOut("gaussian-sum-correct", gaussian_sum(sigma2, True), np.array([1.0, 0, 0]),
                np.array([-1.0, 0, 0]), e, "not violated", "Python list of float",
                delta=DELTA_G),
        HeldOut("log-count-neg-inf", log_noisy_count(e), 0, 1, e, "refused", "float with -inf"),
        HeldOut("values-above-nan-padded", noisy_values_above_threshold(2 / e), h0, h1, e,
                "refused", "float (n, 4), NaN-padded"),
        # --- broken -------------------------------------------------------------------------
        HeldOut("rr-forced-response-confusion", forced_response_confusion(e), 0, 1,
                math.log(1 + 2 * math.exp(e)), "violated", "bool scalar"),
        HeldOut("geometric-zero-twice", geometric_sign_times_magnitude(e), 0, 1,
                e + math.log(2), "violated", "int scalar"),
        HeldOut("clipped-mean-no-clip", clipped_mean(e, False), rec0, rec1, 5 * e, "violated",
                "float (n, 1)"),
        HeldOut("argmax-gap-half-noise", noisy_argmax_gap(1 / e), np.array([0.0, 1.0]),
                np.array([1.0, 0.0]), 2 * e, "violated", "float (n, 2): index, gap"),
        HeldOut("krr-binary-formula", k_randomized_response(keep, True), "a", "b",
                e + math.log(k - 1), "violated", "Python list of str"),
        HeldOut("huge-scale-half-noise", huge_scale_laplace(1 / (2 * e)), 0.0, 1.0, 2 * e,
                "violated", "float ~1e300"),
        HeldOut("huge-histogram-replace-one", huge_histogram(1 / e), h0[:3], h1[:3], 2 * e,
                "violated", "float (n, 3) ~1e300"),
        HeldOut("gaussian-sum-sensitivity-1", gaussian_sum(sigma1, False),
                np.array([1.0, 0, 0]), np.array([-1.0, 0, 0]),
                gaussian_epsilon(2.0 / sigma1, DELTA_G), "violated", "float (n,)",
                delta=DELTA_G),
        HeldOut("exp-mech-utility-sensitivity", exponential_mechanism(e / 2), EXP_U0, EXP_U1,
                softmax_pair_epsilon(e / 2, EXP_U0, EXP_U1), "violated", "int index"),
        HeldOut("above-threshold-reused-noise", above_threshold_reused_noise(e), AT_A0, AT_A1,
                at_eps, "violated" if at_eps > e else "not violated", "int (n, 8), -1 after halt"),
        HeldOut("indices-above-replace-one", indices_above_threshold(1 / e), h0, h1,
                indices_pair_epsilon(1 / e), "violated", "int (n, 4), -1 padded"),
        HeldOut("global-state-half-noise", global_state_laplace, 0.0, 1.0, 2 * e, "violated",
                "float, np.random global"),
        HeldOut("self-seeded", self_seeded_laplace, 0.0, 1.0, math.inf, "refused",
                "float, self-seeded"),
    ]


# ----------------------------------------------------------------------------------------------
# Running both modes
# ----------------------------------------------------------------------------------------------


def _classify(case: HeldOut, verdict: str | None, err: BaseException | None) -> str:
    if err is not None:
        clear = isinstance(err, (ValueError, TypeError))
        if case.expect == "refused" and clear:
            return "refused (right)"
        return "refused" if clear else "CRASH"
    if verdict == "violated":
        return "caught" if case.broken else "FALSE ALARM"
    if case.expect == "refused":
        return "not refused" + (" (missed)" if case.broken else "")
    return "missed" if case.broken else "right"


def run_fixed(case: HeldOut, samples: int, seed: int = 0) -> dict[str, Any]:
    t0 = time.perf_counter()
    try:
        r = dpaudit.audit(case.mechanism, case.data0, case.data1, epsilon=case.epsilon,
                          delta=case.delta, alpha=ALPHA, samples=samples, seed=seed)
        out = {"verdict": r.verdict, "bound": r.epsilon_lower_bound, "error": None}
    except Exception as exc:  # noqa: BLE001 - the table reports every failure
        out = {"verdict": None, "bound": None, "error": exc,
               "trace": traceback.format_exc()}
    out["seconds"] = time.perf_counter() - t0
    out["outcome"] = _classify(case, out["verdict"], out["error"])
    return out


def run_gate(case: HeldOut, max_samples: int, seed: int = 0) -> dict[str, Any]:
    t0 = time.perf_counter()
    try:
        r = sequential_gate(case.mechanism, case.data0, case.data1, epsilon=case.epsilon,
                            delta=case.delta, alpha=ALPHA, max_samples=max_samples, seed=seed)
        out = {"verdict": r.verdict, "runs": r.runs_per_input, "error": None}
    except Exception as exc:  # noqa: BLE001
        out = {"verdict": None, "runs": None, "error": exc, "trace": traceback.format_exc()}
    out["seconds"] = time.perf_counter() - t0
    out["outcome"] = _classify(case, out["verdict"], out["error"])
    return out


def _cell_fixed(r: dict[str, Any]) -> str:
    if r["error"] is not None:
        return f"{r['outcome']}: {type(r['error']).__name__} ({r['seconds']:.1f} s)"
    return f"{r['outcome']}, {r['bound']:.3g} ({r['seconds']:.1f} s)"


def _cell_gate(r: dict[str, Any]) -> str:
    if r["error"] is not None:
        return f"{r['outcome']}: {type(r['error']).__name__} ({r['seconds']:.1f} s)"
    return f"{r['outcome']}, {r['runs']} runs ({r['seconds']:.1f} s)"


def false_alarm_campaign(gates: int, runs: int, first_seed: int = 0) -> tuple[int, float, float]:
    """``gates`` sequential gates (seeds ``first_seed``...) on Warner randomized response at
    exactly its epsilon (keep e/(1 + e), pair 0/1, claim eps = 1: both outcomes attain the ratio
    e, the boundary of the null), ``runs`` runs per input each. Returns the number of false
    alarms and the two-sided 95% Clopper-Pearson interval of the rate (Ville: rate <= alpha)."""
    mech = randomized_response(math.exp(EPS) / (1 + math.exp(EPS)))
    alarms = sum(sequential_gate(mech, 0, 1, epsilon=EPS, alpha=ALPHA, max_samples=runs,
                                 seed=s).verdict == "violated"
                 for s in range(first_seed, first_seed + gates))
    lo = stats.beta.ppf(0.025, alarms, gates - alarms + 1) if alarms else 0.0
    hi = stats.beta.ppf(0.975, alarms + 1, gates - alarms) if alarms < gates else 1.0
    return alarms, float(lo), float(hi)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--samples", type=int, nargs="+", default=[100_000, 1_000_000],
                    help="fixed-budget runs per input (one column each)")
    ap.add_argument("--gate-samples", type=int, default=100_000,
                    help="the gate's max_samples (0: skip the gate)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--errors", action="store_true", help="print every error message")
    ap.add_argument("--false-alarms", type=int, default=0, metavar="GATES",
                    help="instead of the table: GATES gates on randomized response at exactly "
                         "its epsilon, --gate-samples runs per input each")
    args = ap.parse_args(argv)
    if args.false_alarms:
        t0 = time.perf_counter()
        k, lo, hi = false_alarm_campaign(args.false_alarms, args.gate_samples, args.seed)
        print(f"gate false alarms on randomized response at its epsilon (claim {EPS}, alpha "
              f"{ALPHA}), {args.gate_samples} runs/input, seeds {args.seed}.."
              f"{args.seed + args.false_alarms - 1}: {k} / {args.false_alarms} (rate "
              f"{k / args.false_alarms:.4f}, 95% Clopper-Pearson [{lo:.4f}, {hi:.4f}]), "
              f"{time.perf_counter() - t0:.0f} s")
        return 0
    cases = [c for c in zoo() if args.only is None or c.name in args.only]
    print(f"held-out zoo, {datetime.date.today().isoformat()}: claim eps {EPS} (Gaussians: "
          f"delta {DELTA_G}), alpha {ALPHA}, seed {args.seed}; fixed budget "
          f"{', '.join(f'{s:.0e}' for s in args.samples)} runs/input, gate max_samples "
          f"{args.gate_samples:.0e}")
    head = (["mechanism", "output", "true eps", "expect"]
            + [f"audit {s:.0e}" for s in args.samples]
            + ([f"gate {args.gate_samples:.0e}"] if args.gate_samples else []))
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    tally: dict[str, dict[str, int]] = {}
    errors = []
    t_all = time.perf_counter()
    for c in cases:
        cells = [c.name, c.output, "inf" if math.isinf(c.true_epsilon) else
                 f"{c.true_epsilon:.3g}", c.expect]
        runs = [(f"audit {s:.0e}", run_fixed(c, s, args.seed)) for s in args.samples]
        if args.gate_samples:
            runs.append((f"gate {args.gate_samples:.0e}",
                         run_gate(c, args.gate_samples, args.seed)))
        for col, r in runs:
            cells.append(_cell_gate(r) if col.startswith("gate") else _cell_fixed(r))
            key = r["outcome"].split(" (")[0] if r["outcome"] != "refused (right)" else \
                r["outcome"]
            tally.setdefault(col, {}).setdefault(key, 0)
            tally[col][key] += 1
            if r["error"] is not None:
                errors.append((c.name, col, r["error"], r.get("trace", "")))
        print("| " + " | ".join(cells) + " |", flush=True)
    print()
    for col, t in tally.items():
        print(f"{col}: " + ", ".join(f"{k} {v}" for k, v in sorted(t.items())))
    print(f"{time.perf_counter() - t_all:.0f} s in all")
    if errors:
        print("\nerrors:")
        for name, col, err, trace in errors:
            print(f"- {name}, {col}: {type(err).__name__}: {str(err)[:300]}")
            if args.errors or not isinstance(err, (ValueError, TypeError)):
                print(trace)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
