"""A user claim violated by its law derived from the code gets a recommended noise factor
(dpaudit.claims.recalibration), checked against closed forms derived here: the Laplace product's
pure epsilon is ``sum |shift| / b`` (Dwork & Roth 2014, Thm 3.6), so a release at half the scale a
claim needs is off by exactly 2; the Gaussian's epsilon at delta is Balle & Wang 2018, Thm 8 in
``mu = shift / sigma``, solved here with brentq independently of dpaudit."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.stats import norm

import dpaudit
from dpaudit import Claim, Source
from dpaudit.claims.recalibration import noise_factor
from dpaudit.greybox import derive_pair


def _gauss_eps(mu: float, delta: float) -> float:
    def d(e: float) -> float:
        return norm.cdf(-e / mu + mu / 2) - math.exp(e) * norm.cdf(-e / mu - mu / 2) - delta
    return 0.0 if d(0.0) <= 0 else brentq(d, 0.0, 100.0, xtol=1e-12)


def _laplace(scale: float):
    return lambda data, n, rng: float(np.sum(data)) + rng.laplace(0.0, scale, size=n)


def _gauss(sigma: float):
    return lambda data, n, rng: float(np.sum(data)) + rng.normal(0.0, sigma, size=n)


def test_a_laplace_release_at_half_its_scale_needs_exactly_twice_the_noise():
    pair = derive_pair(_laplace(0.5), [1.0, 1.0], [1.0], seed=0)   # eps = 1 / 0.5 = 2
    assert noise_factor(pair, 1.0, 0.0) == pytest.approx(2.0, rel=1e-5)
    assert noise_factor(pair, 2.5, 0.0) == 1.0                       # already meets the claim


def test_a_gaussian_factor_matches_the_analytic_gaussian_mechanism():
    sigma, claim, delta = 0.8, 1.0, 1e-5
    pair = derive_pair(_gauss(sigma), [1.0, 1.0], [1.0], seed=0)    # mu = 1 / 0.8
    r = noise_factor(pair, claim, delta)
    mu_needed = brentq(lambda m: _gauss_eps(m, delta) - claim, 1e-3, 10.0, xtol=1e-12)
    assert r == pytest.approx((1 / sigma) / mu_needed, rel=1e-5)
    assert _gauss_eps(1 / (sigma * r), delta) == pytest.approx(claim, abs=1e-4)


def test_no_factor_when_the_shape_reveals_the_input():
    pair = derive_pair(lambda d, n, rng: np.asarray(d, float)[None, :] + rng.normal(size=(n, len(d))),
                       [1.0, 1.0], [1.0], seed=0)
    assert noise_factor(pair, 1.0, 1e-5) is None


def test_a_violated_user_claim_carries_the_factor_in_its_verdict_box(tmp_path):
    claim = Claim(id="recal/half-scale", statement="The count is eps-DP",
                  source=Source(title="a design note"), claimed=lambda p: (1.0, 0.0),
                  neighbours="add-remove", grid=[{}], release=lambda p: _laplace(0.5),
                  pairs=lambda p: [([1.0, 1.0], [1.0])])
    res = dpaudit.audit_claim(claim, budget="quick", seed=0, out=tmp_path)
    assert res.verdict == "violated"
    text = res.recommended_calibration
    assert text is not None and "at least 2 " in text and "lower bound" in text
    factor = float(re.search(r"at least ([0-9.]+)", text).group(1))
    assert factor == pytest.approx(2.0, rel=1e-3)


def test_a_user_claim_its_law_meets_gets_no_recommendation(tmp_path):
    claim = Claim(id="recal/right-scale", statement="The count is eps-DP",
                  source=Source(title="a design note"), claimed=lambda p: (2.0, 0.0),
                  neighbours="add-remove", grid=[{}], release=lambda p: _laplace(0.5),
                  pairs=lambda p: [([1.0, 1.0], [1.0])])
    res = dpaudit.audit_claim(claim, budget="quick", seed=0, out=tmp_path)
    assert res.verdict != "violated" and res.recommended_calibration is None
