"""Mechanisms from the black-box auditing literature, shared by the benchmarks.

The definitions of DP-Sniper's suite (Bichsel, Steffen, Bogunovic and Vechev, IEEE S&P 2021;
github.com/eth-sri/dp-sniper, ``dpsniper/mechanisms/``), re-implemented with numpy Generators, in
the ``mechanism(data, n, rng)`` form that ``dpaudit.audit`` takes. Used by
``benchmarks/bench_dpsniper.py`` (DP-Sniper's own pairs and parameters, eps = 0.1) and
``benchmarks/bench_detection.py`` (the detection table of broken and correct mechanisms). The
privacy parameter defaults to DP-Sniper's ``EPS = 0.1``; ``report_noisy_max`` and ``svt`` take
``eps=`` to change it.

Sparse vector variants: Lyu, Su and Li, *Understanding the Sparse Vector Technique for
Differential Privacy*, PVLDB 10(6), 2017, Algorithms 1-6 (Alg 1: their proposal; 2: Dwork and
Roth 2014 Alg 2; 3: Roth's 2011 lecture notes; 4: Lee and Clifton 2014; 5: Stoddard, Chen and
Machanavajjhala 2014; 6: Chen, Xu, Xiong and Ye 2015). Numerical SVT: Wang, Ding, Wang, Kifer and
Zhang, PLDI 2019.
"""

from __future__ import annotations

import math

import mmh3
import numpy as np

EPS = 0.1


def laplace(a, n, g):
    return np.asarray(a, float)[0] + g.laplace(0.0, 1 / EPS, size=n)


def noisy_hist(scale: float):
    def m(a, n, g):
        a = np.asarray(a, float)
        return a[None, :] + g.laplace(0.0, scale, size=(n, a.size))
    return m


def report_noisy_max(kind: str, release: str, eps: float = EPS):
    """Report noisy max with Laplace(2/eps) or Exponential(2/eps) noise on every query answer
    (Dwork and Roth 2014, Sec. 3.3; DP-Sniper's ReportNoisyMax1-4); ``release`` is ``"index"``
    (the argmax) or ``"value"`` (the noisy maximum itself)."""
    def m(a, n, g):
        a = np.asarray(a, float)
        noise = (g.laplace(0.0, 2 / eps, size=(n, a.size)) if kind == "laplace"
                 else g.exponential(2 / eps, size=(n, a.size)))
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


def svt(alg: int, c: int, t: float, eps: float = EPS):
    """Lyu, Su and Li 2017, Algorithms 1-6, as parametrised in DP-Sniper (query sensitivity 1,
    threshold ``t``, at most ``c`` "above" answers where the algorithm has a cutoff)."""
    e1 = eps / 4 if alg == 4 else eps / 2
    e2 = eps - e1

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


def truncated_geometric_cdf(c: int, eps: float = EPS, count: int = 5) -> list[int]:
    """GeoSample's integer table F(0), ..., F(count) (F(count) = d) at true count ``c``: the
    formula in :func:`truncated_geometric`'s docstring, in exact Python integers."""
    k = math.ceil(math.log(2.0 / eps))
    d = (2 ** (k + 1) + 1) * (2 ** k + 1) ** (count - 1)
    f = [2 ** (k * (c - z)) * (2 ** k + 1) ** (count - (c - z)) for z in range(c)]
    f += [d - 2 ** (k * (z - c + 1)) * (2 ** k + 1) ** (count - 1 - (z - c))
          for z in range(c, count)]
    f.append(d)
    return f


def truncated_geometric(a, n, g, eps: float = EPS, count: int = 5):
    """GeoSample (Balcer and Vadhan, arXiv:1709.05396, Alg. 4.8): draw u uniform on {1, ..., d} and
    release the smallest z in {0, ..., count} with F(z) >= u, where (Step 2, k = ceil(ln(2/eps)),
    d = (2^(k+1) + 1)(2^k + 1)^(count-1), true count c)
    F(z) = 2^(k(c-z)) (2^k + 1)^(count-(c-z)) for z < c, F(z) = d - 2^(k(z-c+1)) (2^k + 1)^(count-1-(z-c))
    for c <= z < count, and F(count) = d. Exact integer arithmetic (Python ints)."""
    c = int(np.asarray(a).reshape(-1)[0])
    if not 0 <= c <= count:
        raise ValueError(f"the count must be in [0, {count}], got {c}")
    f = truncated_geometric_cdf(c, eps, count)
    d = f[-1]
    u = g.integers(1, d + 1, size=n)
    return np.searchsorted(np.asarray(f, dtype=np.int64), u, side="left").astype(np.int64)


def rappor(f: float, instantaneous: bool, hashes: int = 4, size: int = 20,
           p: float = 0.45, q: float = 0.55):
    """RAPPOR (Erlingsson, Pihur and Korolova, CCS 2014): Bloom filter B of ``str(value)`` (bit
    ``mmh3.hash(str(value), i) mod size`` set for i < hashes, the signed MurmurHash3 that DP-Sniper
    uses, Python's floor modulo as in DP-Sniper), permanent randomised response
    B' = 1 w.p. f/2, 0 w.p. f/2, B otherwise; with ``instantaneous``, report S with P(S = 1) = q if
    B' = 1 and p if B' = 0 (steps 1-3), else report B' (one-time RAPPOR, steps 1-2)."""
    def m(a, n, g):
        val = float(np.asarray(a).reshape(-1)[0])
        if val != int(val):
            raise ValueError(f"RAPPOR's input is an integer (DP-Sniper's INT domain), got {val}")
        val = int(val)  # hashed as str(int): "1", not "1.0"
        bits = np.zeros(size, dtype=bool)
        for i in range(hashes):
            bits[mmh3.hash(str(val), i) % size] = True
        u = g.random((n, size))
        b = np.where(u < f / 2, True, np.where(u < f, False, bits[None, :]))
        if not instantaneous:
            return b.astype(np.int64)
        return (g.random((n, size)) < np.where(b, q, p)).astype(np.int64)
    return m


def _v(*parts: tuple[float, int]) -> np.ndarray:
    return np.concatenate([np.full(k, float(v)) for v, k in parts])
