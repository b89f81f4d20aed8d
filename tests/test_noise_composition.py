"""Several different noise pieces of one release compose into one accountant (a list was once
refused and schedules did not compose, so a user fell back to a float labelled
user-supplied). Expected values come from closed forms written here with scipy, independent of
dpaudit's accountant: the Gaussian-DP composition ``mu = sqrt(sum mu_i^2)`` with Balle & Wang's
epsilon(delta), and the exact hockey-stick divergence of a Gaussian composed with k pure pieces
(each dominated by binary randomized response)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize, stats

import dpaudit.noise as noise
from dpaudit.formal import noise_schedules


def gaussian_delta(mu: float, eps: float) -> float:
    """delta(eps) of the Gaussian mechanism with shift mu (Balle & Wang 2018, Thm 8), any real
    eps."""
    return float(stats.norm.cdf(-eps / mu + mu / 2)
                 - math.exp(eps) * stats.norm.cdf(-eps / mu - mu / 2))


def gaussian_plus_pure_delta(mu: float, eps0: float, k: int, eps: float) -> float:
    """delta(eps) of a Gaussian (shift mu) composed with k eps0-DP pieces: their privacy loss is
    (2j - k) eps0 with j ~ Binomial(k, e^eps0 / (1 + e^eps0)) under the first input, and
    E_{e^eps}(P1 x P2 || Q1 x Q2) = sum_y P2(y) E_{e^(eps - L2(y))}(P1 || Q1)."""
    p = math.exp(eps0) / (1 + math.exp(eps0))
    return sum(stats.binom.pmf(j, k, p) * gaussian_delta(mu, eps - (2 * j - k) * eps0)
               for j in range(k + 1))


def solve(delta_of_eps, delta: float) -> float:
    return optimize.brentq(lambda e: delta_of_eps(e) - delta, 0.0, 100.0, xtol=1e-12)


@pytest.mark.parametrize("neighbours, factor", [("add-remove", 1.0), ("replace-one", 2.0)])
def test_gaussian_pieces_compose_to_the_root_sum_of_squares_of_their_mus(neighbours, factor):
    tree = noise.gaussian_tree(sigma=8.0, sensitivity=1.0, T=16)    # 5 nodes on a path
    extra = noise.GaussianNoise(sigma=3.0, sensitivity=0.5, releases=2)
    mu = factor * math.sqrt(5 * (1.0 / 8.0) ** 2 + 2 * (0.5 / 3.0) ** 2)
    want = solve(lambda e: gaussian_delta(mu, e), 1e-5)
    got = noise.compose(tree, extra).epsilon(1e-5, neighbours=neighbours)
    assert got == pytest.approx(want, rel=1e-6)  # exact closed form on both sides


@pytest.mark.parametrize("delta", [1e-5, 1e-3])
def test_gaussian_and_exponential_mechanism_compose_exactly(delta):
    gauss = noise.GaussianNoise(sigma=4.0, sensitivity=1.0, releases=3)
    select = noise.ExponentialMechanism(beta=0.1, sensitivity=1.0, releases=2)
    composed = noise.compose([gauss, select])            # a list is accepted as well
    # replace-one: distance 2, mu = sqrt(3) * 2 / 4; each selection 2 * beta * 2 = 0.4-DP.
    mu, eps0 = math.sqrt(3) * 2 / 4, 2 * 0.1 * 2
    want = solve(lambda e: gaussian_plus_pure_delta(mu, eps0, 2, e), delta)
    got = composed.epsilon(delta, neighbours="replace-one")
    # dpaudit enumerates this composition exactly; 1e-6 relative covers brentq and float error.
    assert got == pytest.approx(want, rel=1e-6)
    # The composition costs more than either piece alone, and less than their sum.
    alone = [p.epsilon(delta, neighbours="replace-one") for p in (gauss, select)]
    assert max(alone) < got < gauss.epsilon(delta / 2, neighbours="replace-one") + 2 * eps0


def test_pure_pieces_add_up_at_delta_zero_and_never_exceed_the_sum_above_it():
    pieces = [noise.LaplaceNoise(scale=2.0, sensitivity=1.0, releases=3),          # 3 x 0.5
              # 0.5 + 2 * 0.25 per run; then 0.25 per monotonic selection
              noise.SparseVector(threshold_scale=2.0, query_scale=4.0, sensitivity=1.0),
              noise.ExponentialMechanism(beta=0.25, sensitivity=1.0, monotonic=True)]
    composed = noise.compose(*pieces)
    assert composed.epsilon(0.0, neighbours="add-remove") == pytest.approx(2.75, rel=1e-12)
    assert composed.epsilon(0.0, neighbours="replace-one") == pytest.approx(5.5, rel=1e-12)
    above = composed.epsilon(1e-5, neighbours="add-remove")
    assert max(p.epsilon(1e-5, neighbours="add-remove") for p in pieces) < above <= 2.75


def test_compositions_nest_and_report_their_cross_check():
    a = noise.GaussianNoise(sigma=5.0, sensitivity=1.0)
    b = noise.LaplaceNoise(scale=4.0, sensitivity=1.0)
    flat = noise.compose(a, b, a)
    nested = noise.compose(noise.compose(a, b), a)
    e1 = flat.epsilon(1e-6, neighbours="add-remove")
    assert nested.epsilon(1e-6, neighbours="add-remove") == pytest.approx(e1, rel=1e-9)
    report = flat.accounted(1e-6, neighbours="add-remove")
    assert report["largest_piece"] <= report["epsilon"] <= report["epsilon_rdp"] * 1.001
    text = flat.describe(neighbours="replace-one")
    assert text.count("Gaussian noise") == 2 and "Laplace noise" in text


def test_a_failed_cross_check_is_an_error_not_a_number(monkeypatch):
    composed = noise.compose(noise.GaussianNoise(2.0, 1.0), noise.LaplaceNoise(1.0, 1.0))
    real = noise_schedules.epsilon_of_event

    def primary_too_large(event, delta, method="auto"):
        value = real(event, delta, method=method)
        return value * 3 if method == "auto" else value

    monkeypatch.setattr(noise_schedules, "epsilon_of_event", primary_too_large)
    with pytest.raises(RuntimeError, match="exceeds the RDP cross-check"):
        composed.epsilon(1e-5, neighbours="add-remove")

    def primary_too_small(event, delta, method="auto"):
        value = real(event, delta, method=method)
        return value / 10 if method == "auto" else value

    monkeypatch.setattr(noise_schedules, "epsilon_of_event", primary_too_small)
    with pytest.raises(RuntimeError, match="a piece alone needs"):
        composed.epsilon(1e-5, neighbours="add-remove")


def test_bad_pieces_and_relations_are_named():
    with pytest.raises(ValueError, match="at least one"):
        noise.compose()
    with pytest.raises(TypeError, match="piece 1 of compose\\(\\) is a float"):
        noise.compose(noise.GaussianNoise(1.0, 1.0), 0.5)
    with pytest.raises(ValueError, match="neighbours must be one of"):
        noise.compose(noise.GaussianNoise(1.0, 1.0)).epsilon(1e-5, neighbours="swap")
    with pytest.raises(TypeError, match="neighbours"):
        noise.compose(noise.GaussianNoise(1.0, 1.0)).epsilon(1e-5)  # the relation is required


def test_a_composition_is_an_accountant_a_claim_accepts():
    """The claim API takes any schedule with .epsilon(delta, neighbours=) and .describe(...):
    the composition is labelled dpaudit's, not user-supplied."""
    from types import SimpleNamespace

    from dpaudit.claims.user_claims import UserDeclaration

    composed = noise.compose(noise.gaussian_tree(4.0, 1.0, T=8), noise.LaplaceNoise(8.0, 1.0))
    declaration = SimpleNamespace(user=SimpleNamespace(accountant=lambda params: composed,
                                                       neighbours="replace-one"))
    value, source, text = UserDeclaration.accountant_at(declaration, {"T": 8}, 1e-5)
    assert source == "dpaudit" and text.startswith("composition of 2")
    assert value == composed.epsilon(1e-5, neighbours="replace-one")
