"""dpaudit against DP-Sniper on DP-Sniper's own mechanism suite (issue 15).

DP-Sniper (Bichsel, Steffen, Bogunovic and Vechev, *DP-Sniper: Black-Box Discovery of Differential
Privacy Violations using Classifiers*, IEEE S&P 2021; github.com/eth-sri/dp-sniper) reports, for
each mechanism of its suite, the input pair its search found and a 90%-confidence lower bound on
epsilon from 2.1e8 runs per input (``eval_sp2021/reference-results/dd_search_reg_data.log``,
logistic-regression attack; where the MLP log's bound is higher, that one, so the reference is the
best published number we read). This script re-implements each mechanism (same noise, same
parameters: eps = 0.1, SVT c = 1 and t = 0.5/1 as in its ``exp_default.py``; parallel Laplace 20 x
eps 0.005; SVT3/4 in parallel c = 2, t = 1; numerical SVT c = 2, t = 1) with numpy Generators,
audits it with ``dpaudit.audit`` on the SAME pair at the same 90% confidence (alpha = 0.1) and
prints the ratio of the two bounds, all measured in one run.

Also: the truncated geometric mechanism (Balcer and Vadhan, *Differential Privacy on Finite
Computers*, arXiv:1709.05396, Alg. 4.8 GeoSample with eps = 0.1 and n = 5, so k = ceil(ln(2/eps)) = 3
and the mechanism is ln(1 + 2^-k) = ln(9/8)-DP by their Thm 4.7) and RAPPOR / one-time RAPPOR
(Erlingsson, Pihur and Korolova, CCS 2014, steps 1-3 / 1-2: a 20-bit Bloom filter with 4 MurmurHash3
hashes of ``str(value)``, permanent randomised response with f = 0.75 (one-time: f = 0.95), then
instantaneous randomised response with p = 0.45, q = 0.55), with DP-Sniper's parameters
(``dpsniper/mechanisms/geometric.py``, ``rappor.py``, ``experiments/exp_default.py``).

Usage::

    python benchmarks/bench_dpsniper.py                     # 1e6 runs per input
    python benchmarks/bench_dpsniper.py --samples 10000000  # the issue's target budget
"""

from __future__ import annotations

import argparse
import math
import time
from typing import Any, Callable

import numpy as np

import dpaudit

EPS = 0.1


def laplace(a, n, g):
    return np.asarray(a, float)[0] + g.laplace(0.0, 1 / EPS, size=n)


def noisy_hist(scale: float):
    def m(a, n, g):
        a = np.asarray(a, float)
        return a[None, :] + g.laplace(0.0, scale, size=(n, a.size))
    return m


def report_noisy_max(kind: str, release: str):
    def m(a, n, g):
        a = np.asarray(a, float)
        noise = (g.laplace(0.0, 2 / EPS, size=(n, a.size)) if kind == "laplace"
                 else g.exponential(2 / EPS, size=(n, a.size)))
        x = a[None, :] + noise
        return np.argmax(x, axis=1) if release == "index" else np.max(x, axis=1)
    return m


def _abort_after(cmp: np.ndarray, c: int, res: np.ndarray, aborted_value: float) -> np.ndarray:
    """Lyu-Su-Li SVT bookkeeping: after the c-th TRUE, later queries are marked aborted."""
    count = np.zeros(cmp.shape[0])
    aborted = np.zeros(cmp.shape[0], bool)
    for j in range(cmp.shape[1]):
        res[aborted, j] = aborted_value
        count += cmp[:, j]
        aborted |= count == c
    return res


def svt(alg: int, c: int, t: float):
    """Lyu, Su and Li 2017, Algorithms 1-6, as parametrised in DP-Sniper."""
    e1 = EPS / 4 if alg == 4 else EPS / 2
    e2 = EPS - e1

    def m(a, n, g):
        x = np.asarray(a, float)[None, :]
        k = x.shape[1]
        if alg == 2:
            rho = g.laplace(0.0, c / e1, size=n)
            nu = g.laplace(0.0, 2 * c / e2, size=(n, k))
            v = x + nu
            cmp = np.empty((n, k), bool)
            for j in range(k):
                cmp[:, j] = v[:, j] >= rho + t
                fresh = g.laplace(0.0, c / e1, size=n)
                rho = np.where(cmp[:, j], fresh, rho)
            return _abort_after(cmp, c, cmp.astype(np.int64), -1)
        rho = g.laplace(0.0, 1 / e1, size=(n, 1))
        if alg == 5:
            return (x >= rho + t).astype(np.int64)
        scale = {1: 2 * c / e2, 3: c / e2, 4: 1 / e2, 6: 1 / e2}[alg]
        v = x + g.laplace(0.0, scale, size=(n, k))
        cmp = v >= rho + t
        if alg == 6:
            return cmp.astype(np.int64)
        if alg == 3:
            return _abort_after(cmp, c, np.where(cmp, v, -1000.0), -2000.0)
        return _abort_after(cmp, c, cmp.astype(np.int64), -1)
    return m


def numerical_svt(a, n, g, c: int = 2, t: float = 1.0):
    """Numerical SVT (Wang, Ding, Wang, Kifer and Zhang, PLDI 2019), as in DP-Sniper."""
    x = np.asarray(a, float)[None, :]
    k = x.shape[1]
    rho1 = g.laplace(0.0, 3 / EPS, size=(n, 1))
    rho2 = g.laplace(0.0, 6 * c / EPS, size=(n, k))
    rho3 = g.laplace(0.0, 3 * c / EPS, size=(n, k))
    cmp = x + rho2 >= t + rho1
    res = np.where(cmp, x + rho3, 0.0)
    return _abort_after(cmp, c, res, -1000.0)


def prefix_sum(a, n, g):
    x = np.asarray(a, float)[None, :]
    return np.cumsum(x + g.laplace(0.0, 1 / EPS, size=(n, x.shape[1])), axis=1)


def laplace_parallel(a, n, g, k: int = 20, eps: float = 0.005):
    return np.asarray(a, float)[0] + g.laplace(0.0, 1 / eps, size=(n, k))


def svt34_parallel(a, n, g):
    return np.c_[svt(3, 2, 1.0)(a, n, g), svt(4, 2, 1.0)(a, n, g)]


def truncated_geometric(a, n, g, eps: float = EPS, count: int = 5):
    """GeoSample (Balcer and Vadhan, arXiv:1709.05396, Alg. 4.8): draw u uniform on {1, ..., d} and
    release the smallest z in {0, ..., count} with F(z) >= u, where (Step 2, k = ceil(ln(2/eps)),
    d = (2^(k+1) + 1)(2^k + 1)^(count-1), true count c)
    F(z) = 2^(k(c-z)) (2^k + 1)^(count-(c-z)) for z < c, F(z) = d - 2^(k(z-c+1)) (2^k + 1)^(count-1-(z-c))
    for c <= z < count, and F(count) = d. Exact integer arithmetic (Python ints)."""
    c = int(np.asarray(a).reshape(-1)[0])
    if not 0 <= c <= count:
        raise ValueError(f"the count must be in [0, {count}], got {c}")
    k = math.ceil(math.log(2.0 / eps))
    d = (2 ** (k + 1) + 1) * (2 ** k + 1) ** (count - 1)
    f = [2 ** (k * (c - z)) * (2 ** k + 1) ** (count - (c - z)) for z in range(c)]
    f += [d - 2 ** (k * (z - c + 1)) * (2 ** k + 1) ** (count - 1 - (z - c))
          for z in range(c, count)]
    f.append(d)
    u = g.integers(1, d + 1, size=n)
    return np.searchsorted(np.asarray(f, dtype=np.int64), u, side="left").astype(np.int64)


def _murmur3_32(data: bytes, seed: int) -> int:
    """MurmurHash3 x86 32-bit (Appleby, SMHasher), signed like ``mmh3.hash`` (which DP-Sniper
    uses); :func:`_check_murmur3` checks it on published test vectors before every run."""
    m = 0xFFFFFFFF
    c1, c2 = 0xCC9E2D51, 0x1B873593
    h = seed & m
    nblocks = len(data) // 4
    for i in range(nblocks):
        k = int.from_bytes(data[4 * i:4 * i + 4], "little")
        k = (k * c1) & m
        k = ((k << 15) | (k >> 17)) & m
        h ^= (k * c2) & m
        h = ((h << 13) | (h >> 19)) & m
        h = (h * 5 + 0xE6546B64) & m
    tail = data[4 * nblocks:]
    if tail:
        k = int.from_bytes(tail, "little")
        k = (k * c1) & m
        k = ((k << 15) | (k >> 17)) & m
        h ^= (k * c2) & m
    h ^= len(data)
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & m
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & m
    h ^= h >> 16
    return h - (1 << 32) if h & 0x80000000 else h


def _check_murmur3() -> None:
    for data, seed, want in ((b"", 1, 0x514E28B7), (b"Hello, world!", 1234, 0xFAF6CDB3),
                             (b"The quick brown fox jumps over the lazy dog", 0, 0x2E4FF723)):
        if _murmur3_32(data, seed) & 0xFFFFFFFF != want:
            raise AssertionError("MurmurHash3 test vector failed")


def rappor(f: float, instantaneous: bool, hashes: int = 4, size: int = 20,
           p: float = 0.45, q: float = 0.55):
    """RAPPOR (Erlingsson, Pihur and Korolova, CCS 2014): Bloom filter B of ``str(value)`` (bit
    ``murmur3(str(value), seed=i) mod size`` set for i < hashes), permanent randomised response
    B' = 1 w.p. f/2, 0 w.p. f/2, B otherwise; with ``instantaneous``, report S with P(S = 1) = q if
    B' = 1 and p if B' = 0 (steps 1-3), else report B' (one-time RAPPOR, steps 1-2)."""
    def m(a, n, g):
        val = float(np.asarray(a).reshape(-1)[0])
        if val != int(val):
            raise ValueError(f"RAPPOR's input is an integer (DP-Sniper's INT domain), got {val}")
        val = int(val)  # hashed as str(int): "1", not "1.0"
        bits = np.zeros(size, dtype=bool)
        for i in range(hashes):
            bits[_murmur3_32(str(val).encode(), i) % size] = True
        u = g.random((n, size))
        b = np.where(u < f / 2, True, np.where(u < f, False, bits[None, :]))
        if not instantaneous:
            return b.astype(np.int64)
        return (g.random((n, size)) < np.where(b, q, p)).astype(np.int64)
    return m


def _v(*parts: tuple[float, int]) -> np.ndarray:
    return np.concatenate([np.full(k, float(v)) for v, k in parts])


# name: (mechanism, a1, a2, DP-Sniper eps_lcb at 90% from 2.1e8 runs, true epsilon or None)
SUITE: dict[str, tuple[Callable[..., Any], np.ndarray, np.ndarray, float, float | None]] = {
    "Laplace": (laplace, _v((1, 1)), _v((2, 1)), 0.09763, 0.1),
    "NoisyHist1": (noisy_hist(1 / EPS), _v((0, 1), (1, 4)), _v((1, 5)), 0.09779, 0.1),
    "NoisyHist2": (noisy_hist(EPS), _v((0, 1), (1, 4)), _v((1, 5)), 4.60202, 10.0),
    "ReportNoisyMax1": (report_noisy_max("laplace", "index"), _v((1, 5)), _v((0, 1), (2, 4)),
                        0.09250, 0.1),
    "ReportNoisyMax2": (report_noisy_max("exponential", "index"), _v((1, 5)),
                        _v((0, 1), (2, 4)), 0.09792, 0.1),
    "ReportNoisyMax3": (report_noisy_max("laplace", "value"), _v((0, 5)), _v((1, 5)), 0.24881,
                        0.25),
    "ReportNoisyMax4": (report_noisy_max("exponential", "value"), _v((1, 5)), _v((2, 5)),
                        0.35344, math.inf),
    "SVT1": (svt(1, 1, 0.5), _v((0, 5), (1, 5)), _v((1, 5), (0, 5)), 0.08580, 0.1),
    "SVT2": (svt(2, 1, 1.0), _v((0, 5), (1, 5)), _v((1, 5), (0, 5)), 0.08594, 0.1),
    "SVT3": (svt(3, 1, 1.0), _v((1, 10)), _v((2, 5), (0, 5)), 0.17157, math.inf),
    "SVT4": (svt(4, 1, 1.0), _v((1, 10)), _v((2, 5), (0, 5)), 0.16868, 0.175),
    "SVT5": (svt(5, 1, 1.0), _v((2, 5), (0, 5)), _v((1, 10)), 1.76119, math.inf),
    "SVT6": (svt(6, 1, 1.0), _v((1, 5), (0, 5)), _v((0, 5), (1, 5)), 0.27204, math.inf),
    "NumericalSVT": (numerical_svt, _v((2, 10)), _v((1, 10)), 0.03432, None),
    "PrefixSum": (prefix_sum, _v((1, 10)), _v((0, 10)), 0.50401, 1.0),
    "LaplaceParallel": (laplace_parallel, _v((1, 1)), _v((0, 1)), 0.03495, 0.1),
    "SVT34Parallel": (svt34_parallel, _v((1, 10)), _v((2, 5), (0, 5)), 0.26104, math.inf),
    # Reference: regression log 0.11556 (MLP log 0.11554); true epsilon ln(9/8) (Thm 4.7).
    "TruncatedGeometric": (truncated_geometric, _v((2, 1)), _v((1, 1)), 0.11556,
                           math.log(9 / 8)),
    # Reference: MLP log (regression log 0.29298 / 0.59778). The pair's Bloom filters differ in 6
    # bits ({0, 11, 18} vs {3, 10, 13}), so its exact epsilon is 6 ln(0.5125/0.4875) = 0.30006
    # (RAPPOR) and 6 ln(0.525/0.475) = 0.60048 (one-time). RAPPOR's own claim for h = 4 hashes
    # is 2h ln((1 - f/2)/(f/2)) for the permanent response (one-time: 0.80), so these are
    # violations of the benchmark's eps = 0.1 only. The MLP reference 0.30080 is above the
    # pair's exact 0.30006: DP-Sniper's 90% bound missed there (no valid bound can be expected
    # to reach it).
    "Rappor": (rappor(0.75, True), _v((1, 1)), _v((0, 1)), 0.30080, 0.30006),
    "OneTimeRappor": (rappor(0.95, False), _v((1, 1)), _v((0, 1)), 0.59990, 0.60048),
}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--samples", type=int, default=1_000_000, help="runs per input")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", nargs="*", default=None, help="subset of mechanism names")
    args = ap.parse_args(argv)
    _check_murmur3()
    names = args.only or list(SUITE)
    print(f"dpaudit {dpaudit.__version__} vs DP-Sniper (S&P 2021 reference logs), "
          f"{args.samples:.1e} runs per input vs 2.1e8, alpha = 0.1 (90% confidence), "
          f"seed {args.seed}, claim epsilon {EPS}")
    print(f"| mechanism | dpaudit lower bound | DP-Sniper lower bound | ratio | true eps | "
          f"verdict at eps={EPS} | statistic | seconds |")
    print("|---|---|---|---|---|---|---|---|")
    ahead = 0
    t_all = time.perf_counter()
    for name in names:
        mech, a1, a2, ref, true_eps = SUITE[name]
        t0 = time.perf_counter()
        r = dpaudit.audit(mech, a1, a2, epsilon=EPS, samples=args.samples, alpha=0.1,
                          seed=args.seed)
        dt = time.perf_counter() - t0
        ratio = r.epsilon_lower_bound / ref
        ahead += ratio >= 1.0
        te = "?" if true_eps is None else ("inf" if math.isinf(true_eps) else f"{true_eps:g}")
        print(f"| {name} | {r.epsilon_lower_bound:.4f} | {ref:.4f} | {ratio:.3f} | {te} | "
              f"{r.verdict} | {r.statistic.get('name', '')} | {dt:.1f} |", flush=True)
    print(f"\n>= DP-Sniper on {ahead} of {len(names)}; total {time.perf_counter() - t_all:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
