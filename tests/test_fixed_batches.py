"""Fixed (shuffled or cyclic) batches without amplification, :class:`dpaudit.noise.FixedBatchGaussian`.

The participation count is checked against an enumeration of a record's possible slots in every
epoch, the epsilon against Balle & Wang's closed
form written here, and the Poisson reading a library would account against the same schedule: it
claims less, which is exactly what an audit of such a library compares.
"""

from __future__ import annotations

import itertools
import math

import pytest
from scipy import optimize, stats

import dpaudit.noise as noise


def gaussian_delta(mu: float, eps: float) -> float:
    """delta(eps) of the Gaussian mechanism with shift mu (Balle & Wang 2018, Thm 8)."""
    return float(stats.norm.cdf(-eps / mu + mu / 2)
                 - math.exp(eps) * stats.norm.cdf(-eps / mu - mu / 2))


def enumerated_participations(T: int, S: int, k: int) -> int:
    """The most steps one record can take part in, by enumeration: every epoch of S steps places
    it in some k distinct steps of the epoch (any k-subset, as a shuffle may), the last epoch
    is cut at T, and the epochs are independent, so the worst case adds up epoch by epoch."""
    total = 0
    for start in range(0, T, S):
        steps_here = min(S, T - start)
        total += max(sum(1 for slot in slots if slot < steps_here)
                     for slots in itertools.combinations(range(S), k))
    return total


@pytest.mark.parametrize("T, S, k", [(10, 5, 1), (12, 5, 1), (12, 5, 2), (3, 5, 2), (7, 7, 7),
                                     (1, 4, 1), (23, 4, 3)])
def test_participations_is_the_worst_case_over_every_placement(T, S, k):
    got = noise.FixedBatchGaussian(1.0, T, S, k).participations
    assert got == enumerated_participations(T, S, k)
    assert got <= T  # never more participations than steps


@pytest.mark.parametrize("neighbours, d", [("add-remove", 1.0), ("replace-one", 2.0)])
@pytest.mark.parametrize("z, T, S", [(1.0, 100, 10), (4.0, 1000, 50), (0.8, 7, 3)])
def test_epsilon_is_the_composition_of_the_records_gaussian_steps(neighbours, d, z, T, S):
    schedule = noise.FixedBatchGaussian(z, T, S)
    n = schedule.participations
    mu = math.sqrt(n) * d / z
    want = optimize.brentq(lambda e: gaussian_delta(mu, e) - 1e-5, 0.0, 200.0, xtol=1e-13)
    assert schedule.epsilon(1e-5, neighbours=neighbours) == pytest.approx(want, rel=1e-8)
    assert schedule.mu(neighbours=neighbours) == pytest.approx(mu, rel=1e-15)
    assert schedule.epsilon(0.0, neighbours=neighbours) == math.inf


def test_the_poisson_reading_claims_amplification_the_batches_do_not_give():
    # opacus-like: 60 000 records, batch 256 (S = 234 steps per epoch), 10 epochs, z = 1.1.
    fixed = noise.FixedBatchGaussian(1.1, 2340, 234)
    poisson = fixed.as_poisson()
    assert poisson.sampling_rate == pytest.approx(1 / 234)
    assert poisson.steps == 2340
    eps_fixed = fixed.epsilon(1e-5, neighbours="add-remove")
    eps_poisson = poisson.epsilon(1e-5, neighbours="add-remove")
    # 10 participations at z = 1.1 without amplification is mu = sqrt(10) / 1.1 = 2.87; the
    # Poisson reading is an order of magnitude smaller. A library reporting the latter for these
    # batches understates epsilon.
    assert eps_poisson < eps_fixed / 5


def test_one_step_per_epoch_is_full_batch_and_both_readings_agree():
    fixed = noise.FixedBatchGaussian(2.0, 30, 1)
    assert fixed.participations == 30
    assert fixed.as_poisson().sampling_rate == 1.0
    for relation in ("add-remove", "replace-one"):
        assert fixed.epsilon(1e-5, neighbours=relation) == fixed.as_poisson().epsilon(
            1e-5, neighbours=relation)


def test_it_composes_as_a_gaussian_schedule():
    fixed = noise.FixedBatchGaussian(3.0, 20, 4, 2)
    gauss = fixed.as_gaussian()
    assert (gauss.sigma, gauss.sensitivity, gauss.releases) == (3.0, 1.0, 10)
    both = noise.compose(fixed.as_gaussian(), noise.GaussianNoise(3.0, 1.0, 6))
    assert both.epsilon(1e-5, neighbours="add-remove") == pytest.approx(
        noise.FixedBatchGaussian(3.0, 16, 1).epsilon(1e-5, neighbours="add-remove"), rel=1e-9)
    assert "without amplification" in fixed.describe(neighbours="add-remove")


@pytest.mark.parametrize("args, exc, match", [
    ((0.0, 10, 5), ValueError, "noise_multiplier"),
    ((1.0, 0, 5), ValueError, "steps"),
    ((1.0, 10, 0), ValueError, "steps_per_epoch"),
    ((1.0, 10, 5, 6), ValueError, r"participations_per_epoch must be an integer in \[1, 5\]"),
    ((1.0, 10, 5, 0), ValueError, "participations_per_epoch"),
    ((1.0, 10.0, 5), TypeError, "steps"),
])
def test_bad_parameters_name_themselves_and_their_range(args, exc, match):
    with pytest.raises(exc, match=match):
        noise.FixedBatchGaussian(*args)


def test_the_relation_is_required():
    with pytest.raises(TypeError, match="neighbours"):
        noise.FixedBatchGaussian(1.0, 10, 5).epsilon(1e-5)  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="neighbours"):
        noise.FixedBatchGaussian(1.0, 10, 5).epsilon(1e-5, neighbours="both")  # type: ignore
