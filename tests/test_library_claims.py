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
