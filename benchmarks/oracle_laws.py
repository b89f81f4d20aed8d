"""Exact output laws of the benchmark mechanisms, for the oracle of ``benchmarks/oracle_ratio.py``.

Each law is a partition of the output space of one mechanism on one neighbouring pair into
*cells*, with the exact probability of every cell under both inputs (``p0[i]``, ``p1[i]``). Any
union of cells is an event whose two probabilities are known exactly; the oracle searches the
unions that are prefixes of the cells sorted by likelihood ratio (the Neyman-Pearson family, both
directions), which contains the best event of every size.

How each law is computed (every one is a function of the mechanism's definition in
``literature_mechanisms.py`` / ``bench_detection.py``, not of sampled runs):

* Laplace shift (``laplace_shift``): ``y ~ Lap(0, b)`` against ``Lap(s, b)``; the cells are
  ``y <= 0`` and ``y >= s`` (the two atoms of the privacy loss, ratios ``e^{+-s/b}``) and ``M``
  equal slices of ``(0, s)``, masses from the Laplace CDF.
* Products of independent coordinates (parallel Laplace, prefix sums, noisy histograms, trees,
  counters): each coordinate's cells are binned by their log ratio onto a grid of step ``h``
  (``bin = round(log ratio / h)``, a function of that coordinate's output) and the law of the
  *sum of bins* is the convolution of the per-coordinate laws under each input. The sum of bins is
  a function of the output, so its superlevel sets are events with exactly these probabilities.
  A prefix-sum or tree release is an invertible linear image of independent noisy coordinates
  (noisy leaves, noisy used nodes), so it has the same events.
* Gaussian shift: slices of width 0.01 sigma on [-12, 12] sigma around both means, plus two tails.
* Report noisy max (index): ``P[argmax = i] = int f_i(u) prod_{j != i} F_j(u) du`` by quadrature;
  (value): the maximum's CDF ``prod_j F_j(u)`` on a grid of step 0.05.
* Sparse vector Algs 1, 2, 4, 6 (c = 1): ``bench_detection.svt_outcome_probabilities`` (quadrature
  over the threshold noise); Alg 3: ``bench_detection.svt3_value_law`` (index of the first "above"
  and its released value on a grid of step 0.25, masses = density x 0.25, a Riemann sum);
  Alg 5: closed form (no query noise, the output is a function of the threshold noise alone).
* Numerical SVT (c = 2, equal answers): the flag pattern's law by quadrature over the threshold
  noise, merged by (aboves, belows before the last above), convolved with the released values'
  independent Laplace cells (``numerical_svt_law``; checked against 4 x 10^5 samples per input:
  all eleven pattern groups within 2.6 standard errors).
* Truncated geometric: the exact integer CDF of Balcer and Vadhan's GeoSample.
* RAPPOR: the differing Bloom bits are independent; the law of those bits is their product.
* Exponential mechanism: ``P(x) ∝ exp(eta u(x))`` exactly.
"""

from __future__ import annotations

import sys
from pathlib import Path

import mmh3
import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_detection import svt3_value_law, svt_outcome_probabilities  # noqa: E402
from literature_mechanisms import EPS, truncated_geometric_cdf  # noqa: E402

Law = tuple[np.ndarray, np.ndarray]


def laplace_shift(shift: float, scale: float, slices: int = 400) -> Law:
    """``Lap(0, scale)`` (input 0) against ``Lap(shift, scale)`` (input 1), ``shift > 0``."""
    cdf = stats.laplace.cdf
    edges = np.linspace(0.0, shift, slices + 1)
    p0 = np.r_[cdf(0.0, 0, scale), np.diff(cdf(edges, 0, scale)), 1 - cdf(shift, 0, scale)]
    p1 = np.r_[cdf(0.0, shift, scale), np.diff(cdf(edges, shift, scale)),
               1 - cdf(shift, shift, scale)]
    return p0, p1


def product_law(coordinates: list[Law], step: float) -> Law:
    """The law of the summed log-ratio bins of independent coordinates (see the module text)."""
    out0, out1, lo = np.ones(1), np.ones(1), 0
    for p0, p1 in coordinates:
        with np.errstate(divide="ignore"):
            llr = np.log(p0) - np.log(p1)
        if not np.all(np.isfinite(llr)):
            raise ValueError("product_law needs cells of positive probability on both inputs")
        idx = np.round(llr / step).astype(np.int64)
        base = int(idx.min())
        b0 = np.bincount(idx - base, weights=p0)
        b1 = np.bincount(idx - base, weights=p1)
        out0, out1, lo = np.convolve(out0, b0), np.convolve(out1, b1), lo + base
    return out0, out1


def laplace_product(shifts: list[float], scale: float, bins_per_coordinate: int = 200) -> Law:
    """Independent ``Lap(0, scale)`` coordinates against the same shifted by ``shifts``."""
    step = max(abs(s) for s in shifts) / scale / bins_per_coordinate
    return product_law([laplace_shift(abs(s), scale) for s in shifts], step)


def gaussian_shift(mu: float, width: float = 0.01, span: float = 12.0) -> Law:
    """``N(0, 1)`` against ``N(mu, 1)`` in slices of ``width``."""
    edges = np.arange(-span, mu + span + width / 2, width)
    c0, c1 = stats.norm.cdf(edges), stats.norm.cdf(edges - mu)
    return (np.r_[c0[0], np.diff(c0), 1 - c0[-1]], np.r_[c1[0], np.diff(c1), 1 - c1[-1]])


def rnm_index(a0: np.ndarray, a1: np.ndarray, kind: str, eps: float = EPS) -> Law:
    """Report noisy max releasing the argmax, noise Lap(2/eps) or Exp(2/eps)."""
    def law(a: np.ndarray) -> np.ndarray:
        scale = 2 / eps
        u = np.linspace(a.min() - 60 * scale, a.max() + 60 * scale, 200_001)
        du = u[1] - u[0]
        dist = stats.laplace if kind == "laplace" else stats.expon
        f = dist.pdf(u[None, :] - a[:, None], scale=scale)
        F = dist.cdf(u[None, :] - a[:, None], scale=scale)
        out = np.empty(a.size)
        for i in range(a.size):
            others = np.prod(np.delete(F, i, axis=0), axis=0)
            out[i] = np.sum(f[i] * others) * du
        return out / out.sum()
    return law(np.asarray(a0, float)), law(np.asarray(a1, float))


def rnm_value(a0: np.ndarray, a1: np.ndarray, kind: str, eps: float = EPS,
              width: float = 0.05) -> Law:
    """Report noisy max releasing the maximum value: cells of ``width`` of the maximum's CDF."""
    scale = 2 / eps
    a0, a1 = np.asarray(a0, float), np.asarray(a1, float)
    lo = min(a0.min(), a1.min()) - (60 * scale if kind == "laplace" else 0.0)
    edges = np.arange(lo, max(a0.max(), a1.max()) + 60 * scale, width)
    dist = stats.laplace if kind == "laplace" else stats.expon

    def cdf(a: np.ndarray) -> np.ndarray:
        return np.prod(dist.cdf(edges[None, :] - a[:, None], scale=scale), axis=0)
    c0, c1 = cdf(a0), cdf(a1)
    return np.r_[c0[0], np.diff(c0), 1 - c0[-1]], np.r_[c1[0], np.diff(c1), 1 - c1[-1]]


def svt_law(alg: int, a0: np.ndarray, a1: np.ndarray, t: float, eps: float = EPS) -> Law:
    """Lyu-Su-Li Algs 1, 2, 4, 6 with c = 1 (outcome = first "above", or the flag pattern)."""
    return (svt_outcome_probabilities(alg, np.asarray(a0, float), eps, t),
            svt_outcome_probabilities(alg, np.asarray(a1, float), eps, t))


def svt3_law(a0: np.ndarray, a1: np.ndarray, t: float = 1.0, eps: float = EPS) -> Law:
    """Lyu-Su-Li Alg 3 (c = 1): (index of the first "above", its released value) or none."""
    v = np.arange(-400.0, 400.125, 0.25)
    d0, n0 = svt3_value_law(np.asarray(a0, float), eps, t, v)
    d1, n1 = svt3_value_law(np.asarray(a1, float), eps, t, v)
    return np.r_[d0.ravel() * 0.25, n0], np.r_[d1.ravel() * 0.25, n1]


def svt5_law(a0: np.ndarray, a1: np.ndarray, t: float = 1.0, eps: float = EPS) -> Law:
    """Lyu-Su-Li Alg 5 (no query noise): the flags are ``a_j >= rho + t``, a function of rho only;
    the outcome is the set of answers at or above ``rho + t``, i.e. which gap between the sorted
    distinct answers of both inputs contains ``rho + t``."""
    cuts = np.unique(np.r_[np.asarray(a0, float), np.asarray(a1, float)])
    F = stats.laplace.cdf(cuts - t, scale=2 / eps)  # P[rho + t <= cut]
    cells = np.diff(np.r_[0.0, F, 1.0])             # rho + t in (cut_{i-1}, cut_i]
    # the outcome on input a when rho + t is in cell i: {j : a_j >= cut_i}; merge equal outcomes
    def law(a: np.ndarray) -> dict[tuple[bool, ...], float]:
        out: dict[tuple[bool, ...], float] = {}
        bounds = np.r_[cuts, np.inf]
        for i, m in enumerate(cells):
            key = tuple(bool(x) for x in (np.asarray(a, float) >= bounds[i]))
            out[key] = out.get(key, 0.0) + float(m)
        return out
    l0, l1 = law(a0), law(a1)
    keys = sorted(set(l0) | set(l1))
    return np.array([l0.get(k, 0.0) for k in keys]), np.array([l1.get(k, 0.0) for k in keys])


def truncated_geometric_law(c0: int, c1: int, eps: float = EPS, count: int = 5) -> Law:
    """Balcer-Vadhan GeoSample's exact law (``literature_mechanisms.truncated_geometric``)."""
    def law(c: int) -> np.ndarray:
        f = truncated_geometric_cdf(c, eps, count)
        return np.diff(np.r_[0, np.array(f, dtype=object)]).astype(float) / f[-1]
    return law(c0), law(c1)


def rappor_law(v0: int, v1: int, f: float, instantaneous: bool, hashes: int = 4,
               size: int = 20, p: float = 0.45, q: float = 0.55) -> Law:
    """RAPPOR on values ``v0``/``v1``: the law of the Bloom bits where the two filters differ."""
    def bits(v: int) -> np.ndarray:
        b = np.zeros(size, dtype=bool)
        for i in range(hashes):
            b[mmh3.hash(str(v), i) % size] = True
        return b
    b0, b1 = bits(v0), bits(v1)
    diff = np.flatnonzero(b0 != b1)

    def one(bit: bool) -> float:  # P[reported bit = 1 | Bloom bit]
        prr = f / 2 + (1 - f) * bit
        return q * prr + p * (1 - prr) if instantaneous else prr
    pats = (np.arange(2 ** diff.size)[:, None] >> np.arange(diff.size)[None, :]) & 1

    def law(b: np.ndarray) -> np.ndarray:
        r = np.array([one(bool(b[i])) for i in diff])
        return np.prod(np.where(pats == 1, r[None, :], 1 - r[None, :]), axis=1)
    return law(b0), law(b1)


def exponential_law(u0: np.ndarray, u1: np.ndarray, eta: float) -> Law:
    """``P(x) ∝ exp(eta u(x))`` on utilities ``u0`` and ``u1``."""
    def law(u: np.ndarray) -> np.ndarray:
        w = np.exp(eta * (np.asarray(u, float) - np.max(u)))
        return w / w.sum()
    return law(u0), law(u1)


def numerical_svt_law(a0: float, a1: float, k: int = 10, c: int = 2, t: float = 1.0,
                      eps: float = EPS, grid: int = 24_001, bins_per_value: int = 400) -> Law:
    """Numerical SVT (``literature_mechanisms.numerical_svt``, Wang et al. PLDI 2019 as in
    DP-Sniper) on ``k`` equal answers ``a`` (``a0`` on input 0, ``a1`` on input 1), ``c = 2``.

    Query ``i`` is "above" when ``a + rho2_i >= t + rho1`` (``rho1 ~ Lap(3/eps)``, ``rho2_i ~
    Lap(6c/eps)``); an above releases ``a + rho3_i`` (``rho3_i ~ Lap(3c/eps)``, independent of
    everything else), a below releases 0, and after the c-th above the rest is a sentinel. Given
    rho1 the flags are independent with ``P(above) = q(rho1)``, so a flag pattern with ``m``
    aboves and ``b`` belows before the last one has probability ``E[q^m (1 - q)^b]`` (quadrature
    over rho1); patterns with the same ``(m, b)`` have the same law on both inputs (equal answers)
    and are merged. The released values are independent of the pattern given ``m``: each is
    ``a + Lap(3c/eps)``, whose cells (``laplace_shift``) are convolved with the pattern's by
    summed log-ratio bins (``product_law``), separately for each ``m`` (outputs with different
    ``m`` are told apart by their sentinels, so their cells are disjoint).
    """
    s1, s2, s3 = 3 / eps, 6 * c / eps, 3 * c / eps
    r = np.linspace(-60 * s1, 60 * s1, grid)
    w = stats.laplace.pdf(r, scale=s1) * (r[1] - r[0])

    def pattern_mass(a: float, m: int, b: int) -> float:
        q = stats.laplace.sf(t + r - a, scale=s2)
        return float(np.sum(w * q ** m * (1 - q) ** b))

    # (m, b, multiplicity): m = 0: all k below; m = 1: one above anywhere, k - 1 below (k
    # patterns); m = c = 2: the second above at position j (0-based, j >= 1), j - 1 belows
    # before it and j patterns (the first above anywhere before it).
    if c != 2:
        raise ValueError("numerical_svt_law is written for c = 2")
    groups = {0: [(0, k, 1)], 1: [(1, k - 1, k)], 2: [(2, j - 1, j) for j in range(1, k)]}
    lo, hi = sorted((a0, a1))
    v_lo, v_hi = laplace_shift(hi - lo, s3)  # Lap(0) vs Lap(hi - lo): shifted by lo
    value = (v_hi, v_lo) if a0 > a1 else (v_lo, v_hi)  # input 0's cells first
    step = (hi - lo) / s3 / bins_per_value
    out0, out1 = [], []
    for m, pats in groups.items():
        pat = (np.array([mult * pattern_mass(a0, mm, b) for mm, b, mult in pats]),
               np.array([mult * pattern_mass(a1, mm, b) for mm, b, mult in pats]))
        q0, q1 = product_law([pat] + [value] * m, step)
        out0.append(q0)
        out1.append(q1)
    return np.concatenate(out0), np.concatenate(out1)
