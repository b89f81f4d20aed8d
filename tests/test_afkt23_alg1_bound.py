"""The proved fact behind Algorithm 1's accountant (``exact.alg1_svt_epsilon``), checked by a
separate computation written here (not the package's quadrature).

One AboveThreshold instance (threshold noise ``rho ~ Lap(b1)``, query noise ``Lap(b2)``, ``b1 = 2/e``,
``b2 = 4/e``) on query values ``v_1..v_n`` (threshold 0) against the *partially shifted* values
``v'_i = v_i`` for ``i <= m`` and ``v'_i = v_i + c`` for ``i > m`` (``|c| <= 1``): the only change one
replaced loss can make to the instance of Algorithm 1 that reads it (the expert is fixed inside an
instance). The claim is ``max_o |log P(o) / P'(o)| <= |c| / b1 = |c| e / 2``; it is attained in the
limit (queries far above the threshold, outcome "never above": all the mass of ``rho`` is in the
right tail, where shifting it by ``c`` multiplies the density by exactly ``e^{-c/b1}``), and a
pattern one replaced loss cannot produce for Algorithm 1 (earlier queries down, last up) exceeds it.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate

from dpaudit.learners.sparse_vector_experts import algorithm1_parameters
from dpaudit.mechanisms.sparse_vector import first_above_probabilities
from dpaudit.papers.afkt23.exact import alg1_accountant, alg1_svt_epsilon


def _cdf(z: float, b: float) -> float:
    return 0.5 * math.exp(z / b) if z < 0 else 1.0 - 0.5 * math.exp(-z / b)


def _law(v: np.ndarray, b1: float, b2: float) -> np.ndarray:
    """Halting law by direct quadrature: query ``i`` fires iff ``v_i + nu_i >= rho``, so given ``rho``
    it stays below with probability ``F2(rho - v_i)``. Entries ``0..n-1``: halt at ``i``; ``n``: never."""
    n = len(v)
    brk = sorted({0.0, *map(float, v)})
    lo, hi = brk[0] - 60 * b2, brk[-1] + 60 * b1

    def integrand(r: float, k: int) -> float:
        dens = math.exp(-abs(r) / b1) / (2 * b1)
        below = 1.0
        for i in range(min(k, n)):
            below *= _cdf(r - v[i], b2)
        return dens * below * (1.0 - _cdf(r - v[k], b2) if k < n else 1.0)

    pts = [lo] + brk + [hi]
    out = []
    for k in range(n + 1):
        out.append(sum(integrate.quad(integrand, a, b, args=(k,), epsabs=1e-14, epsrel=1e-12,
                                      limit=200)[0] for a, b in zip(pts[:-1], pts[1:])))
    return np.array(out)


def _max_log_ratio(p: np.ndarray, q: np.ndarray) -> float:
    keep = np.maximum(p, q) > 1e-9
    return float(np.max(np.abs(np.log(p[keep]) - np.log(q[keep]))))


def test_independent_quadrature_agrees_with_package():
    v = np.array([-1.0, 0.3, -0.2, 1.5])
    ours = _law(v, 2.0, 4.0)
    assert ours.sum() == pytest.approx(1.0, abs=1e-9)
    assert np.allclose(ours, first_above_probabilities(v, 0.0, 2.0, 4.0), atol=1e-9)


@pytest.mark.parametrize("seed", range(6))
def test_partial_monotone_shift_costs_at_most_half_the_svt_epsilon(seed: int):
    rng = np.random.default_rng(seed)
    e = float(rng.choice([0.5, 1.0, 3.0]))
    b1, b2 = 2.0 / e, 4.0 / e
    n = int(rng.integers(1, 5))
    v = rng.uniform(-3.0, 3.0, n) / e
    m = int(rng.integers(0, n))
    c = float(rng.choice([-1.0, 1.0]) * rng.uniform(0.3, 1.0))
    v1 = v.copy()
    v1[m:] += c
    got = _max_log_ratio(_law(v, b1, b2), _law(v1, b1, b2))
    assert got <= abs(c) * e / 2 + 1e-7
    assert alg1_svt_epsilon(e) == e / 2


def test_half_svt_epsilon_is_attained_and_opposite_moves_exceed_it():
    e = 1.0
    b1, b2 = 2.0 / e, 4.0 / e
    # queries far above the threshold, all moved up by 1: "never above" forces rho into its right
    # tail, where the shift costs exactly e/2
    v = np.full(3, 40.0)
    p, q = _law(v, b1, b2), _law(v + 1.0, b1, b2)
    assert e / 2 - 1e-4 < math.log(p[-1] / q[-1]) <= e / 2 + 1e-9
    # earlier queries down, the last one up (impossible for one replaced loss in Algorithm 1)
    v = np.array([2.0, 2.0, 2.0, -8.0])
    w = np.array([1.0, 1.0, 1.0, -7.0])
    assert _max_log_ratio(_law(v, b1, b2), _law(w, b1, b2)) > 0.6 * e


def test_alg1_accountant_certifies_theorem_1_with_ceil_K_draws():
    """eps/4 + ceil(K) eta with eta = eps/(2K): eps (1/4 + ceil(K)/(2K)) <= eps iff ceil(K) <= 1.5 K,
    true for K >= 2; at the audit's worst point (d = 2, beta = 0.49: K = 6 + 24 ln(1/0.49) = 23.12,
    24 draws) it is 0.25 + 24 / 46.24 = 0.769."""
    p = algorithm1_parameters(1.0, 2, 4096, beta=0.49)
    K = 6 + 24 * math.log(1 / 0.49)
    assert p.selections == 24 == math.ceil(K)
    assert alg1_accountant(p) == pytest.approx(0.25 + 24 / (2 * K), rel=1e-12)
    assert alg1_accountant(p, svt="generic") == pytest.approx(0.5 + 24 / (2 * K), rel=1e-12)
    assert alg1_accountant(p) < 1.0 < alg1_accountant(p, svt="generic")
