"""benchmarks/oracle_learners.py: the papers' learners' exact laws against their code, and the
oracle's bound on a Gaussian shift against a closed form.

The oracle table for the learners rests on two facts checked here: (1) each learner's release at
its audited pair is the linear-Gaussian law the script uses (the law derived from the code by
replay has the paper module's hand-derived mu, and 2 x 10^4 sampled runs have that law's means,
covariance and whitened shift), and (2) the oracle's bound for a known mu is the expectation of
the Clopper-Pearson bound of a halfspace ``P = Phibar(t)``, ``Q = Phibar(t + mu)``, computed here
by exact summation over the two binomial laws.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import oracle_laws as L  # noqa: E402
import oracle_learners as OL  # noqa: E402
from oracle_ratio import oracle_cp  # noqa: E402

N = 20_000
#: Margin in standard errors. Every check below is a normal-approximation z-test on 2 x 10^4
#: i.i.d. Gaussian runs (sample means and covariances of Gaussians: the CLT is accurate to well
#: below 1e-3 here); 5 SE is a two-sided false-failure chance of 5.7e-7 per quantity, < 1e-4 over
#: the ~200 quantities tested. Power: a 2.5% error in a noise scale (5% in a variance, relative SE
#: sqrt(2/N) = 1%) or a mean shift of 0.035 sigma fails it.
Z = 5.0


@pytest.fixture(scope="module")
def learner_rows() -> list[OL.LearnerRow]:
    """The linear-Gaussian rows (the ST13 row has its own test)."""
    return [r for r in OL.rows() if r.law is None]


def test_law_derived_from_the_code_has_the_hand_derived_mu(learner_rows) -> None:
    for row in learner_rows:
        assert math.isclose(OL.derived_mu(row), row.mu_hand, rel_tol=1e-6), row.name
    # the two readings of DP-FTRL differ by the calibration only: sigma(L) = sigma(2L) / 2
    ftrl = [r for r in learner_rows if r.paper == "afkt23"]
    assert math.isclose(ftrl[0].mu_hand, 2 * ftrl[1].mu_hand, rel_tol=1e-9)


def test_runs_have_the_whitened_gaussian_shift(learner_rows) -> None:
    """Project each row's runs on the derived law's whitened direction: N(0, 1) on input 0 and
    N(mu, 1) on input 1, mu the hand-derived value."""
    from dpaudit.greybox import derive_pair

    rng = np.random.default_rng(36)
    for row in learner_rows:
        pair = derive_pair(row.mechanism, row.data0, row.data1, seed=0)
        cov = pair.law0.A @ pair.law0.A.T
        diff = pair.law1.mean - pair.law0.mean
        w = np.linalg.pinv(cov) @ diff / row.mu_hand  # w^T cov w = 1, w^T diff = mu
        for data, centre in ((row.data0, 0.0), (row.data1, row.mu_hand)):
            y = np.asarray(row.mechanism(data, N, rng), dtype=float).reshape(N, -1)
            z = (y - pair.law0.mean) @ w
            assert abs(z.mean() - centre) < Z / math.sqrt(N), (row.name, z.mean(), centre)
            assert abs(z.var() - 1.0) < Z * math.sqrt(2.0 / N), (row.name, z.var())


def test_window_tree_runs_match_the_papers_node_structure() -> None:
    """PFCOCO Lemma 3: s_t = sum_{i <= t} x_i + sum of the noisy nodes B[t] uses, each
    N(0, sigma^2): means cumsum(x), covariance sigma^2 B B^T (B from pfcoco.exact)."""
    from dpaudit.mechanisms.window_tree import paper_gaussian_noise
    from dpaudit.papers.pfcoco import exact as ex

    row = OL._window_row(8, 8, "strict")
    B, _ = ex.release_structure(8, 8)
    sigma = paper_gaussian_noise(10.0, 1e-2, 1.0, 8, log_power=1).scale
    cov = sigma ** 2 * B @ B.T
    rng = np.random.default_rng(7)
    for data in (row.data0, row.data1):
        y = np.asarray(row.mechanism(data, N, rng))[:, :, 0]
        m = np.cumsum(np.asarray(data)[:, 0])
        se_m = np.sqrt(np.diag(cov) / N)
        assert np.all(np.abs(y.mean(axis=0) - m) < Z * se_m)
        S = np.cov(y, rowvar=False)
        se_S = np.sqrt((np.outer(np.diag(cov), np.diag(cov)) + cov ** 2) / N)
        assert np.all(np.abs(S - cov) < Z * se_S)


def test_st13_tree_release_is_the_laplace_product_law() -> None:
    """ST13 Alg. 2 at T 8, d 1: the releases invert to eight nodes (v_1 = [1], v_2 = [1,2],
    v_3 - v_2 = [3], v_4 = [1..4], v_5 - v_4 = [5], v_6 - v_4 = [5,6], v_7 - v_6 = [7],
    v_8 = [1..8]) that are independent Laplace(4), centred at z_1 = +-1 for the four containing
    leaf 1 and at 0 otherwise: the law oracle_laws.laplace_product([2] * 4, 4) describes.
    KS tests at p > 1e-6 each (16 tests: false failure < 2e-5; at N = 2 x 10^4 a Gaussian of the
    same variance, max CDF gap 0.04, has p ~ 1e-25), pairwise correlations within 5 SE."""
    row = OL.st13_tree_row()
    assert row.law is not None and row.mu_hand == 2.0
    rng = np.random.default_rng(13)
    for data, c in ((row.data0, 1.0), (row.data1, -1.0)):
        v = np.asarray(row.mechanism(data, N, rng))[:, :, 0]
        nodes = np.stack([v[:, 0], v[:, 1], v[:, 2] - v[:, 1], v[:, 3], v[:, 4] - v[:, 3],
                          v[:, 5] - v[:, 3], v[:, 6] - v[:, 5], v[:, 7]], axis=1)
        centre = np.array([c, c, 0, c, 0, 0, 0, c])
        for j in range(8):
            assert stats.kstest(nodes[:, j], stats.laplace(centre[j], 4.0).cdf).pvalue > 1e-6, j
        r = np.corrcoef(nodes, rowvar=False)
        assert np.all(np.abs(r[np.triu_indices(8, 1)]) < Z / math.sqrt(N))


def _exact_mean_bound(p: float, q: float, n: int, alpha: float, delta: float) -> float:
    """E[max(0, ln((CP_lo(K_p) - delta) / CP_hi(K_q)))] by summation over both binomial laws
    (+-12 SD, the rest below 1e-30), ends at 1 - sqrt(1 - alpha) each."""
    a = 1.0 - math.sqrt(1.0 - alpha)

    def support(r: float) -> np.ndarray:
        sd = math.sqrt(n * r * (1 - r)) + 1
        return np.arange(max(0, int(n * r - 12 * sd)), min(n, int(n * r + 12 * sd)) + 1)

    kp, kq = support(p), support(q)
    wp, wq = stats.binom.pmf(kp, n, p), stats.binom.pmf(kq, n, q)
    lo = np.where(kp > 0, stats.beta.ppf(a, np.maximum(kp, 1), n - kp + 1), 0.0)
    hi = np.where(kq < n, stats.beta.ppf(1 - a, kq + 1, np.maximum(n - kq, 1)), 1.0)
    lo_d = lo - delta
    val = np.where(lo_d[:, None] > 0,
                   np.log(np.maximum(lo_d, 1e-300)[:, None] / hi[None, :]), 0.0)
    return float(wp @ np.maximum(val, 0.0) @ wq)


@pytest.mark.parametrize("mu, n, delta", [(3.0, 5000, 1e-3), (1.0, 20000, 0.0)])
def test_oracle_bound_on_a_gaussian_shift_equals_the_closed_form(mu, n, delta) -> None:
    alpha = 0.05
    mean, p, q = oracle_cp(L.gaussian_shift(mu), n, alpha, delta, symmetric=False)
    # the chosen event is a halfspace of the shift: Q = Phibar(Phibar^-1(P) + mu)
    assert math.isclose(q, stats.norm.sf(stats.norm.isf(p) + mu), rel_tol=1e-6)
    exact = _exact_mean_bound(p, q, n, alpha, delta)
    # the oracle's mean is over 2000 simulated splits: SE = SD(bound) / sqrt(2000), SD <= the
    # spread of ln(CP_lo / CP_hi) over +-3 SD of the counts; 5 SE (+1e-3 for the Monte Carlo of
    # the SD itself) is a false-failure chance < 1e-6
    rng = np.random.default_rng(0)
    kp = rng.binomial(n, p, 4000)
    kq = rng.binomial(n, q, 4000)
    a = 1.0 - math.sqrt(1.0 - alpha)
    lo = stats.beta.ppf(a, np.maximum(kp, 1), n - kp + 1) - delta
    hi = stats.beta.ppf(1 - a, kq + 1, n - kq)
    sd = float(np.std(np.maximum(np.log(np.maximum(lo, 1e-300) / hi), 0.0)))
    assert abs(mean - exact) < Z * sd / math.sqrt(2000) + 1e-3, (mean, exact, sd)
    assert 0 < exact < L_eps(mu, delta)


def L_eps(mu: float, delta: float) -> float:
    """The pair's epsilon (Balle & Wang 2018, Thm 8; infinite at delta = 0)."""
    if delta == 0:
        return math.inf
    from scipy.optimize import brentq

    f = lambda e: (stats.norm.cdf(-e / mu + mu / 2)  # noqa: E731
                   - math.exp(e) * stats.norm.cdf(-e / mu - mu / 2) - delta)
    return brentq(f, 0.0, 50.0)
