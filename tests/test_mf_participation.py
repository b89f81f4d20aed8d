"""Matrix-factorization sensitivity under several participations (:mod:`dpaudit.formal.
mf_participation`), against brute force written here.

The law: with ``X = C^T C`` non-negative on every pair of steps a record can share, the shift of
the release is ``max_P ||C u_P||_2`` over the participation patterns ``P`` (Choquette-Choo et al.
2023). The brute force lists every pattern (every set of steps with the schema's separation and
count, or every cyclic offset) and takes the largest ``||C u_P||``; it shares no code with the
module, which uses a closed form when the band condition holds and dynamic programs otherwise.
"""

from __future__ import annotations

import itertools
import math

import dp_accounting
import numpy as np
import pytest
from scipy import optimize, stats

import dpaudit.noise as noise
from dpaudit.formal import mf_participation


def brute_min_separation(c: np.ndarray, sep: int, k: int | None) -> float:
    n = c.shape[1]
    best = 0.0
    for m in range(1, (k or n) + 1):
        for steps in itertools.combinations(range(n), m):
            if all(b - a >= sep for a, b in zip(steps, steps[1:])):
                u = np.zeros(n)
                u[list(steps)] = 1.0
                best = max(best, float(np.linalg.norm(c @ u)))
    return best


def brute_cyclic(c: np.ndarray, cycle: int) -> float:
    n = c.shape[1]
    return max(float(np.linalg.norm(c @ (np.arange(n) % cycle == r).astype(float)))
               for r in range(min(cycle, n)))


def banded(n: int, bands: int, rng: np.random.Generator) -> np.ndarray:
    """A random lower-triangular strategy with ``bands`` bands of positive entries."""
    c = np.zeros((n, n))
    for j in range(n):
        for i in range(j, min(n, j + bands)):
            c[i, j] = rng.uniform(0.1, 1.0)
    return c


def fichtenberger(n: int, bands: int) -> np.ndarray:
    """Fichtenberger et al. (2023)'s Toeplitz coefficients ``binom(2j, j) / 4^j`` truncated to
    ``bands`` bands, columns normalised to norm 1: the construction of jax-privacy's
    ``ColumnNormalizedBanded.default``, written from its description."""
    coef = np.array([math.comb(2 * j, j) / 4 ** j for j in range(bands)])
    c = np.zeros((n, n))
    for j in range(n):
        m = min(bands, n - j)
        c[j:j + m, j] = coef[:m]
    return c / np.linalg.norm(c, axis=0)


# 60 random cases, seed 0: n in 4..9 (brute force lists at most 2^9 patterns), bands 1..4, the
# separation 1..3 on both sides of the band condition, k unbounded or 1..3.
CASES = []
_rng = np.random.default_rng(0)
for _ in range(60):
    CASES.append((int(_rng.integers(4, 10)), int(_rng.integers(1, 5)), int(_rng.integers(1, 4)),
                  [None, 1, 2, 3][int(_rng.integers(0, 4))], int(_rng.integers(0, 2**31))))


@pytest.mark.parametrize("n, bands, sep, k, seed", CASES)
def test_min_separation_equals_brute_force(n, bands, sep, k, seed):
    c = banded(n, bands, np.random.default_rng(seed))
    got = noise.participation_sensitivity(c, noise.MinSeparation(sep, k))
    assert got.value == pytest.approx(brute_min_separation(c, sep, k), rel=1e-12)
    # the reported pattern is feasible and attains the value
    steps = got.pattern
    assert all(b - a >= sep for a, b in zip(steps, steps[1:])) and len(steps) <= (k or n)
    u = np.zeros(n)
    u[list(steps)] = 1.0
    assert float(np.linalg.norm(c @ u)) == pytest.approx(got.value, rel=1e-12)
    # the condition is what it says: bands <= min_separation means no cross terms (k >= 2)
    if (k or n) >= 2 and n > sep:
        assert got.condition_holds == (bands <= sep)
        assert (got.method == "closed form") == (bands <= sep)


@pytest.mark.parametrize("n, bands, cycle, seed", [
    (n, b, l, s) for s, (n, b, l) in enumerate(itertools.product((5, 8, 9), (1, 2, 3, 4),
                                                                  (1, 2, 3, 5)))])
def test_cyclic_equals_brute_force(n, bands, cycle, seed):
    c = banded(n, bands, np.random.default_rng(seed))
    got = noise.participation_sensitivity(c, noise.Cyclic(cycle))
    assert got.value == pytest.approx(brute_cyclic(c, cycle), rel=1e-12)
    if n > cycle:
        assert got.condition_holds == (bands <= cycle)


def test_banded_toeplitz_closed_form_is_sqrt_k_times_the_column_norm():
    # Full columns (bands <= separation, k participations that fit before the last bands rows):
    # the closed form of Choquette-Choo et al. 2023b, sqrt(k) ||C[:, 0]||.
    coef = np.array([1.0, 0.5, 0.25])
    n = 20
    c = np.zeros((n, n))
    for j in range(n):
        m = min(3, n - j)
        c[j:j + m, j] = coef[:m]
    got = noise.participation_sensitivity(c, noise.MinSeparation(5, 3))
    assert got.method == "closed form"
    assert got.value == pytest.approx(math.sqrt(3) * np.linalg.norm(coef), rel=1e-14)


def test_one_participation_is_the_largest_column_norm_of_the_existing_schedule():
    c = banded(7, 3, np.random.default_rng(5))
    one = noise.MatrixFactorizationNoise(c, 2.0, 0.5, noise.MinSeparation(1, 1))
    old = noise.matrix_factorization(c, sigma=2.0, sensitivity=0.5)
    for relation in ("add-remove", "replace-one"):
        assert one.mu(neighbours=relation) == pytest.approx(old.mu(neighbours=relation),
                                                            rel=1e-14)


def test_the_sensitivity_bounds_every_gradient_direction_when_c_t_c_is_non_negative():
    # The law behind max ||C u||: with X >= 0 no choice of per-step vectors g_t (norm <= 1) moves
    # the release further than the all-equal choice. 2000 random draws in dimension 3 (seed 1) on
    # every pattern of a 3-band strategy under separation 2 (cross terms present): none exceeds it.
    rng = np.random.default_rng(1)
    c = banded(8, 3, rng)
    sens = noise.participation_sensitivity(c, noise.MinSeparation(2)).value
    patterns = [p for m in range(1, 5) for p in itertools.combinations(range(8), m)
                if all(b - a >= 2 for a, b in zip(p, p[1:]))]
    worst = 0.0
    for _ in range(2000):
        p = patterns[int(rng.integers(len(patterns)))]
        g = rng.normal(size=(len(p), 3))
        g *= rng.uniform(0.0, 1.0, size=(len(p), 1)) / np.linalg.norm(g, axis=1, keepdims=True)
        worst = max(worst, float(np.linalg.norm(c[:, list(p)] @ g)))
    assert worst <= sens * (1 + 1e-12)


def gaussian_delta(mu: float, eps: float) -> float:
    return float(stats.norm.cdf(-eps / mu + mu / 2)
                 - math.exp(eps) * stats.norm.cdf(-eps / mu - mu / 2))


def test_jax_privacy_cyclic_accountant_understates_a_three_band_strategy_on_cycles_of_two():
    # jax-privacy's amplified_bandmf_event(noise_multiplier=2, iterations=12, num_bands=2,
    # sampling_prob=1) reads num_bands as the cycle length and accounts ceil(12 / 2) = 6
    # participations of a column-normalised strategy: Gaussian(2) self-composed 6 times (the event
    # rebuilt here with dp-accounting; jax-privacy is not needed). With a 3-band strategy the
    # columns two steps apart overlap, and the true sensitivity is larger.
    event = dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(1.0, dp_accounting.GaussianDpEvent(2.0)), 6)
    acc = dp_accounting.pld.PLDAccountant()
    acc.compose(event)
    library = acc.get_epsilon(1e-5)
    assert library == pytest.approx(5.545, abs=1e-3)
    c = fichtenberger(12, 3)
    sens = brute_cyclic(c, 2)
    truth = optimize.brentq(lambda e: gaussian_delta(sens / 2.0, e) - 1e-5, 0, 50, xtol=1e-13)
    assert truth == pytest.approx(6.954, abs=1e-3)
    schedule = noise.MatrixFactorizationNoise(c, sigma=2.0, sensitivity=1.0,
                                              participation=noise.Cyclic(2))
    assert not schedule.strategy_sensitivity.condition_holds
    assert schedule.epsilon(1e-5, neighbours="add-remove") == pytest.approx(truth, rel=1e-8)
    # With at most cycle_length bands the library's count is right.
    two = noise.MatrixFactorizationNoise(fichtenberger(12, 2), 2.0, 1.0, noise.Cyclic(2))
    assert two.strategy_sensitivity.condition_holds
    assert two.epsilon(1e-5, neighbours="add-remove") == pytest.approx(library, abs=1e-3)


def test_replace_one_doubles_the_shift():
    c = fichtenberger(10, 2)
    s = noise.MatrixFactorizationNoise(c, 3.0, 1.0, noise.MinSeparation(2))
    assert s.mu(neighbours="replace-one") == pytest.approx(2 * s.mu(neighbours="add-remove"),
                                                           rel=1e-15)
    assert s.mu(neighbours="add-remove") == pytest.approx(
        brute_min_separation(c, 2, None) / 3.0, rel=1e-12)
    assert "closed form" in s.describe(neighbours="add-remove")


def test_negative_interactions_a_record_can_reach_are_refused():
    c = np.eye(4)
    c[3, 1] = -1.0                      # columns 1 and 3: X[1, 3] = -1
    with pytest.raises(ValueError, match="negative entry.*steps 1 and 3"):
        noise.participation_sensitivity(c, noise.MinSeparation(2))
    with pytest.raises(ValueError, match="negative entry"):
        noise.participation_sensitivity(c, noise.Cyclic(2))
    # ... but not where no record can take part in both steps (separation 3 > lag 2), nor with a
    # single participation.
    assert noise.participation_sensitivity(c, noise.MinSeparation(3)).value == pytest.approx(
        brute_min_separation(c, 3, None), rel=1e-12)
    assert noise.participation_sensitivity(c, noise.MinSeparation(1, 1)).value == pytest.approx(
        math.sqrt(2), rel=1e-15)
    assert noise.participation_sensitivity(c, noise.Cyclic(3)).value == pytest.approx(
        brute_cyclic(c, 3), rel=1e-12)


def test_what_cannot_be_computed_exactly_is_refused_naming_the_condition():
    c = np.tril(np.ones((120, 120)))    # every column interacts with every later one
    with pytest.raises(ValueError, match="bands <= min_separation fails.*refused"):
        noise.participation_sensitivity(c, noise.MinSeparation(1, 40))
    # the same strategy with a fitting band condition is fine (closed form)
    band = np.tril(np.ones((120, 120))) - np.tril(np.ones((120, 120)), -2)
    assert noise.participation_sensitivity(band, noise.MinSeparation(2, 40)).method == \
        "closed form"


def test_the_dynamic_program_and_the_enumeration_agree_on_a_medium_case():
    c = banded(14, 4, np.random.default_rng(11))
    a = np.abs(c.T @ c)
    dp, _ = mf_participation._window_dp(a, 2, 4, 3, True)
    en, _ = mf_participation._enumerate(a, 2, 4)
    assert dp == pytest.approx(en, rel=1e-12)


@pytest.mark.parametrize("call, exc, match", [
    (lambda: noise.MinSeparation(0), ValueError, "min_separation"),
    (lambda: noise.MinSeparation(2, 0), ValueError, "max_participations"),
    (lambda: noise.MinSeparation(2.0), TypeError, "min_separation"),
    (lambda: noise.Cyclic(0), ValueError, "cycle_length"),
    (lambda: noise.participation_sensitivity(np.zeros((3, 3)), noise.Cyclic(1)), ValueError,
     "non-zero column"),
    (lambda: noise.participation_sensitivity(np.ones(3), noise.Cyclic(1)), ValueError,
     "strategy"),
    (lambda: noise.participation_sensitivity(np.full((2, 2), np.nan), noise.Cyclic(1)),
     ValueError, "strategy"),
    (lambda: noise.participation_sensitivity(np.eye(2), 2), TypeError, "participation"),
    (lambda: noise.MatrixFactorizationNoise(np.eye(2), 0.0, 1.0, noise.Cyclic(1)), ValueError,
     "sigma"),
    (lambda: noise.MatrixFactorizationNoise(np.eye(2), 1.0, -1.0, noise.Cyclic(1)), ValueError,
     "sensitivity"),
])
def test_bad_input_names_the_parameter(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_the_schedule_is_immutable_and_composes():
    c = fichtenberger(6, 2)
    s = noise.MatrixFactorizationNoise(c, 2.0, 1.0, noise.MinSeparation(2))
    with pytest.raises(ValueError):
        s.strategy[0, 0] = 5.0
    c[0, 0] = 5.0                       # the caller's array is copied
    assert s.strategy[0, 0] != 5.0
    both = noise.compose(s.as_gaussian(), noise.GaussianNoise(2.0, 1.0))
    assert both.epsilon(1e-5, neighbours="add-remove") > s.epsilon(1e-5, neighbours="add-remove")
