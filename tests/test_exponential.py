"""Laws and privacy of the exponential mechanism (dpaudit.mechanisms.exponential).

Sampling is checked by chi-square goodness of fit of index frequencies against the exact softmax
(fixed seeds, p-value > 1e-3, Bonferroni-divided within a family: a correct sampler fails with
probability at most 1e-3). Privacy is checked exactly: the log-ratio of output probabilities on
neighbouring score vectors never exceeds the stated epsilon, and comes arbitrarily close to it.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpaudit.mechanisms.events import EpsilonDeltaDpEvent
from dpaudit.mechanisms import exponential as exponential_module
from dpaudit.mechanisms.exponential import ExponentialMechanism

ALPHA = 1e-3


def chi_square_pvalue(indices: np.ndarray, probabilities: np.ndarray) -> float:
    counts = np.bincount(indices, minlength=probabilities.size)
    return float(stats.chisquare(counts, probabilities * indices.size).pvalue)


@pytest.mark.parametrize("form, coefficient", [("half", 0.5), ("full", 1.0)])
def test_probabilities_are_the_printed_softmax(form: str, coefficient: float) -> None:
    scores = np.array([0.0, 1.0, 2.5, -0.5, 4.0])
    mech = ExponentialMechanism(sensitivity=1.0, eta=0.8, form=form)
    w = np.exp(-coefficient * 0.8 * scores)
    np.testing.assert_allclose(mech.probabilities(scores), w / w.sum(), rtol=1e-14)
    np.testing.assert_allclose(mech.log_probabilities(scores), np.log(w / w.sum()), rtol=1e-13)
    assert mech.coefficient == coefficient * 0.8
    # Utilities: weights exp(+c eta u).
    util = ExponentialMechanism(1.0, 0.8, form, maximize=True)
    w_up = np.exp(coefficient * 0.8 * scores)
    np.testing.assert_allclose(util.probabilities(scores), w_up / w_up.sum(), rtol=1e-14)


def test_probabilities_are_stable_for_huge_scores() -> None:
    mech = ExponentialMechanism(1.0, 2.0, "full")
    scores = np.array([0.0, 3.0, 1.0])
    shifted = mech.probabilities(scores + 1e6)  # exp(-2e6) underflows without stabilisation
    np.testing.assert_allclose(shifted, mech.probabilities(scores), rtol=1e-9)
    far = mech.probabilities(np.array([0.0, 1e4]))
    assert far[0] == 1.0 and far[1] == 0.0
    assert mech.log_probabilities(np.array([0.0, 1e4]))[1] == pytest.approx(-2e4, rel=1e-12)
    batch = mech.probabilities(np.array([[0.0, 1.0], [5.0, 5.0]]))
    np.testing.assert_allclose(batch.sum(axis=1), 1.0, rtol=1e-15)
    np.testing.assert_allclose(batch[1], [0.5, 0.5], rtol=1e-15)


@pytest.mark.parametrize("form", ["half", "full"])
def test_sample_frequencies_match_softmax(form: str) -> None:
    scores = np.array([0.0, 0.5, 1.0, 2.0, 3.0, 0.2])
    mech = ExponentialMechanism(sensitivity=1.0, eta=1.3, form=form)
    idx = mech.sample(scores, 60_000, np.random.default_rng(17))
    assert idx.shape == (60_000,) and idx.dtype == np.int64
    assert chi_square_pvalue(idx, mech.probabilities(scores)) > ALPHA / 2


@pytest.mark.parametrize("maximize", [False, True])
def test_sample_frequencies_match_softmax_for_huge_scores(maximize: bool) -> None:
    # Scores [b, b, b + 1] at b = 1e15 (exactly representable): log-weights of magnitude 1e15 have
    # a float spacing of 0.125, so adding Gumbel noise to them unshifted distorts the law (about
    # [0.436, 0.415, 0.149] instead of [0.422, 0.422, 0.155] at 2e5 draws). Both the shared vector
    # and per-run rows are checked; each p-value > 1e-3 / 4 (a correct sampler fails the family
    # with probability <= 1e-3).
    b = 1e15
    scores = np.array([b, b, b + 1.0]) * (-1.0 if maximize else 1.0)
    mech = ExponentialMechanism(1.0, 1.0, "full", maximize=maximize)
    p = mech.probabilities(scores)
    np.testing.assert_allclose(p, mech.probabilities(scores - scores[0]), rtol=1e-12)
    np.testing.assert_allclose(p, [1 / (2 + math.e**-1)] * 2 + [math.e**-1 / (2 + math.e**-1)],
                               rtol=1e-12)
    n = 200_000
    idx = mech.sample(scores, n, np.random.default_rng(2024))
    assert chi_square_pvalue(idx, p) > ALPHA / 4
    rows = np.repeat(scores[None, :], n, axis=0)
    rows[1::2] += 1e15 if not maximize else -1e15  # a different offset on alternate rows
    idx = mech.sample(rows, n, np.random.default_rng(2025))
    assert chi_square_pvalue(idx, p) > ALPHA / 4


def test_batched_score_vectors_are_used_row_by_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # Alternate two score vectors across runs; each group must follow its own softmax. A tiny chunk
    # size forces many chunk boundaries, which must not misalign rows.
    monkeypatch.setattr(exponential_module, "_CHUNK_ELEMENTS", 7)
    mech = ExponentialMechanism(1.0, 1.0, "full")
    a = np.array([0.0, 1.0, 2.0])
    b = np.array([2.0, 0.0, 0.5])
    n = 12_000
    scores = np.where((np.arange(n) % 2 == 0)[:, None], a, b)
    idx = mech.sample(scores, n, np.random.default_rng(23))
    assert chi_square_pvalue(idx[0::2], mech.probabilities(a)) > ALPHA / 2
    assert chi_square_pvalue(idx[1::2], mech.probabilities(b)) > ALPHA / 2
    # A row whose winner has probability 1 - 1e-40 is picked deterministically in every chunk.
    k = 4
    sure = np.full((50, k), 100.0)
    sure[np.arange(50), np.arange(50) % k] = 0.0
    np.testing.assert_array_equal(mech.sample(sure, 50, np.random.default_rng(0)), np.arange(50) % k)


def test_single_candidate_is_always_chosen_and_seed_reproduces() -> None:
    mech = ExponentialMechanism(1.0, 1.0)
    np.testing.assert_array_equal(mech.sample([3.0], 10, np.random.default_rng(0)), np.zeros(10))
    s = [0.1, 0.2, 0.3]
    np.testing.assert_array_equal(mech(s, 100, np.random.default_rng(4)),
                                  mech.sample(s, 100, np.random.default_rng(4)))


@pytest.mark.parametrize("form, monotone, expected", [
    ("half", False, 1.0), ("full", False, 2.0), ("half", True, 0.5), ("full", True, 1.0)])
def test_stated_epsilon_for_each_form(form: str, monotone: bool, expected: float) -> None:
    # eps = 2 c eta Delta (c = 1/2 or 1), halved for monotone scores; here eta * Delta = 1.
    mech = ExponentialMechanism(sensitivity=0.5, eta=2.0, form=form, monotone=monotone)
    assert mech.epsilon == pytest.approx(expected, rel=1e-15)
    assert mech.dp_event() == EpsilonDeltaDpEvent(expected, 0.0)
    back = ExponentialMechanism.from_epsilon(0.5, expected, form, monotone=monotone)
    assert back.eta == pytest.approx(2.0, rel=1e-15)
    d = mech.describe()
    assert d["name"] == "exponential" and d["form"] == form and d["epsilon"] == pytest.approx(expected)


def _max_abs_log_ratio(mech: ExponentialMechanism, s: np.ndarray, s_prime: np.ndarray) -> float:
    return float(np.max(np.abs(mech.log_probabilities(s) - mech.log_probabilities(s_prime))))


@pytest.mark.parametrize("form", ["half", "full"])
@pytest.mark.parametrize("monotone", [False, True])
def test_probability_ratio_on_neighbours_never_exceeds_stated_epsilon(form: str, monotone: bool) -> None:
    sensitivity = 0.7
    mech = ExponentialMechanism(sensitivity, eta=1.9, form=form, monotone=monotone)
    rng = np.random.default_rng(31)
    m, k = 4_000, 6
    s = rng.normal(scale=3.0, size=(m, k))
    # Neighbours: every score moves by at most Delta; vertices of the box (the extreme case) for
    # half the rows, interior points for the rest; one common sign per row when monotone.
    u = sensitivity * np.where(rng.random((m, 1)) < 0.5, rng.choice([-1.0, 1.0], size=(m, k)),
                               rng.uniform(-1.0, 1.0, size=(m, k)))
    if monotone:
        u = np.abs(u) * rng.choice([-1.0, 1.0], size=(m, 1))
    assert _max_abs_log_ratio(mech, s, s + u) <= mech.epsilon * (1.0 + 1e-12)


@pytest.mark.parametrize("form", ["half", "full"])
def test_stated_epsilon_is_tight(form: str) -> None:
    # General neighbours: candidate 0 rare (large score) moves up by Delta, all others move down,
    # so P(0) falls by a factor -> e^{2 c eta Delta} = e^eps.
    mech = ExponentialMechanism(1.0, 1.0, form)
    s = np.array([60.0, 0.0, 0.0, 0.0])
    u = np.array([1.0, -1.0, -1.0, -1.0])
    assert _max_abs_log_ratio(mech, s, s + u) == pytest.approx(mech.epsilon, rel=1e-9)
    # Monotone neighbours: all other scores move up by Delta, candidate 0 stays.
    mono = ExponentialMechanism(1.0, 1.0, form, monotone=True)
    u_mono = np.array([0.0, 1.0, 1.0, 1.0])
    assert _max_abs_log_ratio(mono, s, s + u_mono) == pytest.approx(mono.epsilon, rel=1e-9)
    # The general bound is really needed without monotonicity: the general pair breaks eps / 2.
    assert _max_abs_log_ratio(mech, s, s + u) > mono.epsilon * 1.5


def test_bad_inputs_raise() -> None:
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="eta"):
        ExponentialMechanism(1.0, 0.0)
    with pytest.raises(ValueError, match="sensitivity"):
        ExponentialMechanism(0.0, 1.0)
    with pytest.raises(ValueError, match="form"):
        ExponentialMechanism(1.0, 1.0, "quarter")
    with pytest.raises(TypeError, match="monotone"):
        ExponentialMechanism(1.0, 1.0, monotone="yes")
    with pytest.raises(ValueError, match="epsilon"):
        ExponentialMechanism.from_epsilon(1.0, -1.0)
    mech = ExponentialMechanism(1.0, 1.0)
    with pytest.raises(ValueError, match="scores"):
        mech.sample([0.0, math.nan], 5, rng)
    with pytest.raises(ValueError, match="scores"):
        mech.sample(np.zeros((2, 2, 2)), 2, rng)
    with pytest.raises(ValueError, match="scores"):
        mech.sample(np.zeros((3, 4)), 5, rng)  # batch of 3 score vectors for 5 runs
    with pytest.raises(ValueError, match="scores"):
        mech.sample(np.zeros(0), 5, rng)
    with pytest.raises(ValueError, match="scores"):  # eta * score overflows float64
        ExponentialMechanism(1.0, 4.0, "full").probabilities(np.array([0.0, 1e308]))
    with pytest.raises(ValueError, match="n"):
        mech.sample([0.0, 1.0], 0, rng)
    with pytest.raises(TypeError, match="rng"):
        mech.sample([0.0, 1.0], 3, np.random.RandomState(1))
