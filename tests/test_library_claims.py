"""Other libraries' releases audited as claims (examples/libraries): checks of the claim modules
against independent closed forms. Marked ``libraries``: excluded from the default run, they need
the ``libraries`` extra (``make library-audits`` runs them in its own venv)."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import norm

pytestmark = pytest.mark.libraries

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "libraries"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"dpaudit_libraries_{name}",
                                                  EXAMPLES / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    from dpaudit.claims.registry import get

    try:
        spec.loader.exec_module(mod)
    except ValueError as exc:  # registered already by an earlier load in this session
        if "already" not in str(exc):
            raise
    return mod, get


def gaussian_epsilon(mu: float, delta: float) -> float:
    """Balle & Wang (2018) Thm 8 inverted by bisection (independent of dpaudit's code)."""
    def d(e: float) -> float:
        return norm.cdf(-e / mu + mu / 2) - math.exp(e) * norm.cdf(-e / mu - mu / 2)
    lo, hi = 0.0, 50.0
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if d(mid) > delta else (lo, mid)
    return hi


def test_opendp_laplace_claim_matches_the_discrete_laplace_closed_form() -> None:
    pytest.importorskip("opendp")
    mod, _ = _load("opendp_claims")
    for scale in mod.SCALES_LAPLACE:
        assert mod.opendp_laplace_epsilon(scale) == pytest.approx(1 / scale, rel=1e-12)
        law = mod.discrete_laplace_law(scale)
        # Discrete Laplace shifted by 1: every probability ratio is e^{+-1/scale}.
        v = law.epsilon([1, 2, 3], [1, 2], 0.0)
        assert v.value == pytest.approx(1 / scale, rel=1e-9)
        import dpaudit
        acc = dpaudit.noise.LaplaceNoise(scale=scale, sensitivity=1.0)
        assert acc.epsilon(0.0, neighbours="add-remove") == pytest.approx(1 / scale)


def test_opendp_gaussian_claim_is_above_the_exact_discrete_gaussian() -> None:
    pytest.importorskip("opendp")
    mod, _ = _load("opendp_claims")
    for scale in mod.SCALES_GAUSSIAN:
        claimed = mod.opendp_gaussian_epsilon(scale, mod.DELTA_GAUSSIAN)
        exact = mod.discrete_gaussian_law(scale).epsilon([1, 2, 3], [1, 2], mod.DELTA_GAUSSIAN)
        # Independently: the hockey-stick divergence of the two discrete Gaussians (centres 3
        # and 2) summed over the integers meets delta at the exact epsilon and not 1e-3 below.
        k = np.arange(-200, 206)

        def dg(c):
            w = np.exp(-(k - c) ** 2 / (2 * scale ** 2))
            return w / w.sum()
        p, q = dg(3), dg(2)

        def hs(e):
            return max(np.maximum(p - np.exp(e) * q, 0).sum(), np.maximum(q - np.exp(e) * p, 0).sum())
        assert hs(exact.value) <= mod.DELTA_GAUSSIAN * (1 + 1e-6)
        assert hs(exact.value - 1e-3) > mod.DELTA_GAUSSIAN
        if scale >= 4:  # close to the continuous Gaussian with mu = 1 / scale when scale is large
            assert exact.value == pytest.approx(gaussian_epsilon(1 / scale, mod.DELTA_GAUSSIAN),
                                                rel=0.05)
        assert exact.value < claimed  # OpenDP's zCDP conversion is looser


def test_opendp_samplers_ignore_the_rng_and_are_flagged_and_kept_local() -> None:
    pytest.importorskip("opendp")
    import dpaudit

    mod, _ = _load("opendp_claims")
    mech = mod._release(mod.laplace_measurement)({"scale": 1.0})
    with pytest.raises(ValueError, match="executor='local'"):
        dpaudit.audit(mech, [1, 2, 3], [1, 2], epsilon=1.0, samples=200, executor="processes")
    res = dpaudit.audit(mech, [1, 2, 3], [1, 2], epsilon=1.0, samples=400)
    assert res.rng_ignored and "not reproducible from the seed" in res.rng["note"]


def test_jax_privacy_bandmf_release_has_the_declared_law() -> None:
    pytest.importorskip("jax_privacy")
    mod, _ = _load("jax_privacy_claims")
    params = {"noise_multiplier": 2.0, "bands": 4}
    mech = mod.release(params)
    out = mech(np.zeros(mod.STEPS), 20_000, np.random.default_rng(0))
    again = mech(np.zeros(mod.STEPS), 20_000, np.random.default_rng(0))
    assert np.array_equal(out, again)  # keys come from the rng: reproducible from the seed
    law = mod.law(params)
    cov = np.asarray(law.covariance)
    # Sample covariance within 5 standard errors of the declared one, entry by entry.
    emp = np.cov(out.T)
    se = np.sqrt((cov ** 2 + np.outer(np.diag(cov), np.diag(cov))) / out.shape[0])
    assert np.all(np.abs(emp - cov) < 5 * se + 1e-6)


@pytest.mark.parametrize("nm", [1.0, 2.0])
def test_jax_privacy_accounting_is_one_gaussian_with_mu_one_over_nm(nm) -> None:
    pytest.importorskip("jax_privacy")
    mod, _ = _load("jax_privacy_claims")
    claimed = mod.jax_privacy_epsilon(nm, mod.STEPS)
    assert claimed == pytest.approx(gaussian_epsilon(1 / nm, mod.DELTA), abs=2e-3)
    for bands in (4, 16):
        params = {"noise_multiplier": nm, "bands": bands}
        law = mod.law(params)
        for d0, d1 in mod.pairs(params):
            assert law.mu(d0, d1) == pytest.approx(1 / nm, rel=1e-5)  # columns of norm 1
        acc = mod.accountant(params)
        assert acc.mu(neighbours="add-remove") == pytest.approx(1 / nm, rel=1e-5)


# -- dpcrpy: continual release, noise from numpy's global RNG --------------------------------

def dyadic_nodes(t: int) -> set[tuple[int, int]]:
    """The dyadic blocks (start, size) whose union is [1, t], one per set bit of t: the nodes a
    binary-tree counter sums for its prefix at t (Dwork et al. 2010; Chan, Shi & Song 2011)."""
    nodes, end = set(), t
    while end > 0:
        size = end & -end
        nodes.add((end - size + 1, size))
        end -= size
    return nodes


def tree_prefix_covariance(T: int) -> np.ndarray:
    """Cov(S_s, S_t) / node variance = how many dyadic nodes the prefixes at s and t share."""
    return np.array([[len(dyadic_nodes(s) & dyadic_nodes(t)) for t in range(1, T + 1)]
                     for s in range(1, T + 1)], dtype=np.float64)


def test_dyadic_nodes_cover_the_prefix_exactly() -> None:
    for t in range(1, 65):
        covered = sorted(i for start, size in dyadic_nodes(t) for i in range(start, start + size))
        assert covered == list(range(1, t + 1))


def test_dpcrpy_calibrates_its_unit_noise_by_the_analytic_gaussian() -> None:
    pytest.importorskip("dpcrpy")
    mod, _ = _load("dpcrpy_claims")
    sigma0 = mod.noise_mechanism(mod.EPSILON, mod.DELTA).sigma0
    # Balle & Wang's exact calibration: a shift of 1 against N(0, sigma0^2) is (1, 1e-5)-DP
    # exactly (the bisection above is independent of dpcrpy's autodp copy).
    assert gaussian_epsilon(1 / sigma0, mod.DELTA) == pytest.approx(mod.EPSILON, rel=1e-4)
    # Node noise = the mechanism's l2 sensitivity x sigma0, the sensitivity being how many
    # noisy values one item enters: T partial sums (SimpleMech), leaf + block (TwoLevel),
    # the k + 1 nodes on a leaf's path (BinMech, Honaker); BCRG/FDA weight to 1.
    expected = {"simplemech": math.sqrt(8), "twolevel": math.sqrt(2), "binmech": math.sqrt(5),
                "honaker": math.sqrt(5), "bcrg": 1.0, "fda": 1.0}
    for name, sens in expected.items():
        assert mod.node_sigma(name) == pytest.approx(sens * sigma0, rel=1e-12)


@pytest.mark.parametrize("name", ["simplemech", "twolevel", "binmech", "honaker", "bcrg", "fda"])
def test_dpcrpy_laws_are_derived_from_the_code_and_each_item_is_within_its_epsilon(name) -> None:
    pytest.importorskip("dpcrpy")
    from dpaudit.greybox import NotDerivable, derive_pair

    mod, _ = _load("dpcrpy_claims")
    params = {"epsilon": mod.EPSILON, "delta": mod.DELTA}
    mech = mod.release(name)(params)
    sigma, T = mod.node_sigma(name), mod.MECHANISMS[name][2]
    for d1, d0 in mod.pairs(name)(params):
        pair = derive_pair(mech, d1, d0)
        assert not isinstance(pair, NotDerivable), pair
        law = pair.law0
        assert {d.source for d in law.draws} == {"numpy's global RNG"}
        assert all("dpcrpy" in d.site and "noiMech.py" in d.site for d in law.draws)
        eps = pair.epsilon(mod.DELTA).value
        assert eps <= mod.EPSILON * (1 + 1e-6)  # dpcrpy's item-level statement holds
        t = int(np.flatnonzero(d1)[0]) + 1
        if name == "binmech":
            # Independently: prefix sums of a dyadic tree, shift 1 on S_t..S_T.
            cov = sigma ** 2 * tree_prefix_covariance(T)
            np.testing.assert_allclose(law.covariance, cov, rtol=1e-9, atol=1e-9)
            m = (np.arange(1, T + 1) >= t).astype(float)
            mu = math.sqrt(m @ np.linalg.solve(cov, m))
            assert eps == pytest.approx(gaussian_epsilon(mu, mod.DELTA), rel=1e-6)
        if name == "simplemech":
            # Independent noise on every partial sum: the item moves T - t + 1 of them by 1.
            np.testing.assert_allclose(law.covariance, sigma ** 2 * np.eye(T), rtol=1e-9)
            mu = math.sqrt(T - t + 1) / sigma
            assert eps == pytest.approx(gaussian_epsilon(mu, mod.DELTA), rel=1e-6)
        if t == 1 and name in ("simplemech", "binmech"):
            assert eps == pytest.approx(mod.EPSILON, rel=1e-4)  # tight at the first item


# -- opacus-dpcr: DPCREngine's reported epsilon against the trajectory's law ----------------

def opacus_rdp_epsilon(z: float, steps: int, delta: float) -> float:
    """opacus' RDP accountant at sampling rate 1, by hand: T Gaussian steps have Renyi
    divergence T alpha / (2 z^2) (Mironov 2017, Prop. 7), turned into (epsilon, delta) with
    Balle et al. (2020, Thm 21), minimised over opacus' default orders
    (1.1, ..., 10.9, 12, ..., 63)."""
    orders = [1 + x / 10.0 for x in range(1, 100)] + list(range(12, 64))
    return min(steps * a / (2 * z * z) + math.log((a - 1) / a) - (math.log(delta) + math.log(a))
               / (a - 1) for a in orders)


def test_opacus_dpcr_reports_opacus_dp_sgd_accounting_of_independent_steps() -> None:
    pytest.importorskip("opacus_dpcr")
    mod, _ = _load("opacus_dpcr_claims")
    for mech, steps, expected in (("BinMech", 16, 2.166), ("BCRG", 15, 2.090)):
        reported = mod.reported_epsilon(mech, 8.0)
        assert reported == pytest.approx(opacus_rdp_epsilon(8.0, steps, mod.DELTA), rel=1e-6)
        assert reported == pytest.approx(expected, abs=5e-4)
        # ... which is an upper bound for sqrt(T) / z of independent Gaussian steps (the law the
        # accountant assumes), so RDP is not where the gap comes from.
        assert reported >= gaussian_epsilon(math.sqrt(steps) / 8.0, mod.DELTA)


def test_opacus_dpcr_binmech_trajectory_is_about_twice_the_reported_epsilon() -> None:
    pytest.importorskip("opacus_dpcr")
    mod, _ = _load("opacus_dpcr_claims")
    params = {"mechanism": "BinMech", "noise_multiplier": 8.0}
    # Independently: a record in every step of the full batch moves step s's input by
    # c = lr C / B, so the prefix sum S_t by t c; each node of the dyadic tree carries noise of sd
    # sqrt(k + 1) z C lr / B with k + 1 = 5 (DPCROptimizer: sigma0 = z C lr / B, times
    # BinMech.getL2Sens()), and the weight after step t is S_t.
    z, B, T = 8.0, mod.RECORDS, 16
    c, node_sd = 1.0 / B, math.sqrt(5) * z / B
    cov = node_sd ** 2 * tree_prefix_covariance(T)
    m = c * np.arange(1, T + 1)
    mu = math.sqrt(m @ np.linalg.solve(cov, m))
    true = gaussian_epsilon(mu, mod.DELTA)
    assert true == pytest.approx(4.807, abs=1e-3)
    d1, d0 = mod.pairs(params)[0]
    law = mod.law(params)
    np.testing.assert_allclose(np.asarray(law.covariance), cov, rtol=1e-9)
    assert law.epsilon(d1, d0, mod.DELTA).value == pytest.approx(true, rel=1e-6)
    assert true > 2.2 * mod.reported_epsilon("BinMech", z)


def test_opacus_dpcr_bcrg_trajectory_law_against_dpcrpy_runs() -> None:
    pytest.importorskip("opacus_dpcr")
    import dpcrpy

    mod, _ = _load("opacus_dpcr_claims")
    params = {"mechanism": "BCRG", "noise_multiplier": 8.0}
    z, B, T = 8.0, mod.RECORDS, 15
    # Independently of the glue's unit-draw map: dpcrpy's own BCRG(4) on a zero stream with
    # GaussNoiMech(sigma0 = z / B) (numpy, no torch), 40,000 runs: the sample covariance of the
    # prefix sums. The quadratic form m' S^-1 m of a Wishart estimate has relative sd about
    # sqrt(2 / (n - T)) = 0.7%, so mu is within 0.35% per sd and 2% is over 5 sd.
    np.random.seed(12345)
    runs = []
    noise = dpcrpy.noiMech.GaussNoiMech(sigma0=z / B)
    for _ in range(40_000):
        fw = dpcrpy.dpCrFw(lambda i: dpcrpy.BCRG(4, noise))
        runs.append([fw.dpRelease(0.0)[0] for _ in range(T)])
    emp = np.cov(np.asarray(runs).T)
    m = np.arange(1, T + 1) / B
    mu = math.sqrt(m @ np.linalg.solve(emp, m))
    true = gaussian_epsilon(mu, mod.DELTA)
    assert true == pytest.approx(3.503, rel=0.02)
    d1, d0 = mod.pairs(params)[0]
    declared = mod.law(params).epsilon(d1, d0, mod.DELTA).value
    assert declared == pytest.approx(3.503, abs=1e-3)
    assert declared == pytest.approx(true, rel=0.02)
    assert declared > 1.6 * mod.reported_epsilon("BCRG", z)


def test_opacus_dpcr_runs_move_by_the_full_batch_shift() -> None:
    pytest.importorskip("opacus_dpcr")
    mod, _ = _load("opacus_dpcr_claims")
    params = {"mechanism": "BinMech", "noise_multiplier": 8.0}
    d1, d0 = mod.pairs(params)[0]
    run = mod.release(params)
    out = run(d1, 200, np.random.default_rng(3))
    assert np.array_equal(out, run(d1, 200, np.random.default_rng(3)))  # seeded from the rng
    # The final weight S_16 is the root node: mean -16 lr C / B = -4, sd sqrt(5) z / B = 4.47;
    # the mean of 200 runs is within 5 standard errors (0.32 each) of -4 (and 0 is 12 se away).
    assert abs(out[:, -1].mean() + 4.0) < 5 * math.sqrt(5) * 8.0 / 4 / math.sqrt(200)


# -- opacus: the averaging denominator and poisson_sampling=False --------------------------

def test_opacus_denominator_depends_on_the_dataset_size() -> None:
    pytest.importorskip("opacus")
    mod, _ = _load("opacus_claims")
    z = 4.0
    eps4, q4, b4 = mod.reported(4, 2, 1, z, True)
    eps3, q3, b3 = mod.reported(3, 2, 1, z, True)
    # sample_rate = 1 / len(loader) = 1 / ceil(n / 2) = 1/2 for both; int(n q) = 2 and 1.
    assert (q4, q3, b4, b3) == (0.5, 0.5, 2, 1)
    assert eps4 == eps3 == pytest.approx(0.5457, abs=1e-3)
    # The runs: every gradient 0, so one step's update is N(0, (z C / b)^2): sd 2 on four records
    # and 4 on three. 2,000 runs each: the sample sd's relative standard error is 1/sqrt(2n) =
    # 1.6%, so a 10% margin is over 6 standard errors, and the two sds are 100% apart.
    params = {"noise_multiplier": z}
    d4, d3 = mod.denominator_pairs(params)[0]
    run = mod._release(2, 1, True)(params)
    assert np.std(run(d4, 2_000, np.random.default_rng(1))) == pytest.approx(z / 2, rel=0.1)
    assert np.std(run(d3, 2_000, np.random.default_rng(2))) == pytest.approx(z, rel=0.1)


def test_opacus_denominator_exact_epsilon_against_normal_tails() -> None:
    pytest.importorskip("opacus")
    mod, _ = _load("opacus_claims")
    # Independently, in one dimension: p = N(0, 1), q = N(0, 4). p / q <= 2 everywhere, so for
    # eps > log 2 only q over p counts; q / p = exp(3 x^2 / 8) / 2 exceeds e^eps beyond
    # x0 = sqrt(8 (eps + log 2) / 3), and delta(eps) = 2 (P[N(0,4) > x0] - e^eps P[N(0,1) > x0]).
    def delta(eps: float) -> float:
        x0 = math.sqrt(8 * (eps + math.log(2)) / 3)
        return 2 * (norm.sf(x0 / 2) - math.exp(eps) * norm.sf(x0))
    lo, hi = 1.0, 60.0
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if delta(mid) > mod.DELTA else (lo, mid)
    d4, d3 = mod.denominator_pairs({"noise_multiplier": 4.0})[0]
    exact = mod.denominator_exact({"noise_multiplier": 4.0}, d4, d3)
    assert exact == pytest.approx(hi, rel=1e-6)
    assert exact == pytest.approx(27.717, abs=1e-3)
    # The accountant opacus uses (Poisson-subsampled Gaussian, z = 4, q = 1/2, one step) is far
    # below it: the leak is the denominator, not the accounting.
    acc = mod.denominator_accountant({"noise_multiplier": 4.0})
    assert acc.epsilon(mod.DELTA, neighbours="add-remove") < 1.0


def test_opacus_fixed_batches_are_one_gaussian_per_epoch() -> None:
    pytest.importorskip("opacus")
    mod, _ = _load("opacus_claims")
    z = 2.0
    eps, q, b = mod.reported(10, 1, 10, z, False)
    assert (q, b) == (0.1, 1) and eps == pytest.approx(0.8085, abs=1e-3)
    # shuffle=False: the record is in batch 1 and nowhere else; the update of step 1 moves by
    # lr C / b = 1 against noise sd z C lr / b = 2: one Gaussian with mu = 1 / z = 0.5.
    true = gaussian_epsilon(1 / z, mod.DELTA)
    assert true == pytest.approx(1.993, abs=1e-3)
    params = {"noise_multiplier": z}
    d1, d0 = mod.fixed_pairs(params)[0]
    assert mod.fixed_law(params).epsilon(d1, d0, mod.DELTA).value == pytest.approx(true, rel=1e-6)
    assert mod.fixed_accountant(params).epsilon(mod.DELTA, neighbours="add-remove") == \
        pytest.approx(true, rel=1e-6)
    assert true > 2.4 * eps
    # The runs: 1,000 trainings on the record's dataset; the first weight's mean is -1 (se
    # 2 / sqrt(1000) = 0.063, margin 5 se) and the last one's sd is z sqrt(10) = 6.3 (relative se
    # 2.2%, margin 12% > 5 se).
    out = mod._release(1, 10, False)(params)(d1, 1_000, np.random.default_rng(5))
    assert abs(out[:, 0].mean() + 1.0) < 5 * 2 / math.sqrt(1_000)
    assert np.std(out[:, -1]) == pytest.approx(z * math.sqrt(10), rel=0.12)


# -- jax-privacy: the cyclic (amplified BandMF) accountant against the strategy's bands ---------

def brute_cyclic_shift(c: np.ndarray, cycle: int) -> float:
    """max over offsets r of ||C u_r||, u_r the indicator of steps r, r + cycle, ... (every
    pattern enumerated; all gradients +clip, the worst case for a non-negative Gram matrix)."""
    n = c.shape[1]
    best = 0.0
    for r in range(cycle):
        u = np.zeros(n)
        u[r::cycle] = 1.0
        best = max(best, float(np.linalg.norm(c @ u)))
    return best


def test_jax_privacy_cyclic_accountant_holds_within_its_band_condition_only() -> None:
    pytest.importorskip("jax_privacy")
    mod, _ = _load("jax_privacy_claims")
    z, n, cycle = 2.0, mod.CYCLIC_STEPS, 2
    claimed = mod.jax_privacy_cyclic_epsilon(z, n, cycle)
    # jax-privacy counts ceil(12 / 2) = 6 independent releases of column norm 1: mu = sqrt(6) / z.
    assert claimed == pytest.approx(gaussian_epsilon(math.sqrt(6) / z, mod.DELTA), abs=2e-3)
    assert claimed == pytest.approx(5.545, abs=1e-3)
    for bands, true_expected in ((2, 5.545), (3, 6.954)):
        params = {"noise_multiplier": z, "bands": bands, "cycle": cycle}
        c, _ = mod.matrices(n, bands)
        assert np.allclose(np.linalg.norm(c, axis=0), 1.0, atol=1e-6)  # column-normalised
        gram = c.T @ c
        overlaps = gram[np.arange(n - cycle), np.arange(cycle, n)]
        assert (np.abs(overlaps).max() > 1e-6) == (bands > cycle)  # columns 2 apart overlap
        true = gaussian_epsilon(brute_cyclic_shift(c, cycle) / z, mod.DELTA)
        assert true == pytest.approx(true_expected, abs=1e-3)
        law = mod.cyclic_law(params)
        worst = max(law.epsilon(d1, d0, mod.DELTA).value for d1, d0 in mod.cyclic_pairs(params))
        assert worst == pytest.approx(true, rel=1e-5)  # float32 strategy materialised
        acc = mod.cyclic_accountant(params)
        assert acc.epsilon(mod.DELTA, neighbours="add-remove") == pytest.approx(true, rel=1e-5)
        assert acc.strategy_sensitivity.condition_holds == (bands <= cycle)
    assert 6.954 > claimed * 1.25


# -- diffprivlib (its own venv: scikit-learn < 1.8) -------------------------------------------

def test_diffprivlib_linear_regression_releases_the_sum_of_squares_unnoised() -> None:
    pytest.importorskip("diffprivlib")
    from scipy import stats

    mod, _ = _load("diffprivlib_claims")
    params = {"epsilon": 1.0}
    d1, d0 = mod.linear_regression_pairs(params)[0]
    run = mod.linear_regression_release(params)
    # Independently: one feature, no intercept, bounds (0, 1) for x and y: the functional
    # mechanism's budget is split over 1 + 1 + 1 coefficients (epsilon / 3 each); sum x y has
    # sensitivity max(corner) - min(corner) = 1, so Laplace(3); sum x^2 should get
    # max(|0|, |1|)^2 = 1 but gets max(|0|, |0|)^2 = 0, no noise. The fitted coefficient is
    # (sum x y + L) / sum x^2: Laplace(1, 3) on (1, 1) alone and Laplace(0.5, 1.5) with (1, 0)
    # added. 2,000 fits each: a KS test at 1e-3 accepts the right law, and rejects the scale a
    # correct sensitivity (Laplace noise on sum x^2 too) could not give exactly.
    a = run(d0, 2_000, np.random.default_rng(11))[:, 0]
    b = run(d1, 2_000, np.random.default_rng(12))[:, 0]
    assert stats.kstest(a, stats.laplace(1.0, 3.0).cdf).pvalue > 1e-3
    assert stats.kstest(b, stats.laplace(0.5, 1.5).cdf).pvalue > 1e-3
    assert stats.kstest(b, stats.laplace(0.5, 3.0).cdf).pvalue < 1e-6
    assert mod.laplace_scale_ratio_epsilon(params, d1, d0) == math.inf
    assert mod.laplace_scale_ratio_epsilon(params, d0, d0) == 0.0


def test_diffprivlib_naive_bayes_takes_its_classes_from_the_data() -> None:
    pytest.importorskip("diffprivlib")
    mod, _ = _load("diffprivlib_claims")
    params = {"epsilon": 1.0}
    d1, d0 = mod.naive_bayes_pairs(params)[0]
    run = mod.naive_bayes_release(params)
    # The class count is np.unique(y)'s size on every run: 3 with the record of class 2, 2 without
    # it; one run tells the inputs apart, so no epsilon covers it.
    assert set(run(d1, 50, np.random.default_rng(0))[:, 0]) == {3.0}
    assert set(run(d0, 50, np.random.default_rng(0))[:, 0]) == {2.0}
