"""Discrete outputs: outcome ratios fitted and the event chosen on the whole training split
(dpaudit.blackbox.outcome_selection)."""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from dpaudit.blackbox.empirical_audit import audit
from dpaudit.blackbox.outcome_selection import InSampleOutcomeFitter

#: A planted rare outcome: outcome 0 has probability 0.02 on data1 and 0.02 e^-1.5 on data0; the
#: other five outcomes share the rest equally on each input (log ratios about 0.016).
RARE_P1 = 0.02
RARE_LOG_RATIO = 1.5


def _planted_laws() -> tuple[np.ndarray, np.ndarray]:
    p1 = np.r_[RARE_P1, np.full(5, (1 - RARE_P1) / 5)]
    r0 = RARE_P1 * math.exp(-RARE_LOG_RATIO)
    p0 = np.r_[r0, np.full(5, (1 - r0) / 5)]
    return p0, p1


def _planted(which: int, n: int, rng: np.random.Generator) -> np.ndarray:
    return rng.choice(6, size=n, p=_planted_laws()[int(which)])


def test_training_scores_are_the_fitted_ratios_of_the_fitted_runs() -> None:
    # An exact identity: the expanded scores are scorer(outputs) for the runs fitted, as a multiset.
    rng = np.random.default_rng(3)
    rows = [rng.integers(-1, 2, size=(n, 4)) for n in (700, 500, 900)]
    f = InSampleOutcomeFitter()
    for i, x in enumerate(rows):
        f.update(x, i % 2)
    (scorer,) = f.finish()
    s0, s1 = f.training_scores(scorer)
    want0 = np.sort(np.concatenate([scorer(rows[0]), scorer(rows[2])]))
    np.testing.assert_array_equal(np.sort(s0), want0)
    np.testing.assert_array_equal(np.sort(s1), np.sort(scorer(rows[1])))


def test_a_planted_rare_outcome_is_the_chosen_event() -> None:
    # 2 x 10^4 runs per input: 5000 training runs (expected counts of outcome 0: 100 on data1,
    # 22.3 on data0; the other outcomes' ratios are 0.016, their fitted ratios within +-0.1), so
    # the ranking puts outcome 0 first and every larger prefix has a ratio below 0.3: the single
    # outcome is the best event by far (its Clopper-Pearson bound at the expected test counts,
    # 300 vs 67, is 1.08; the best two-outcome prefix's is below 0.3). Seeds 0-2, fixed.
    p0, p1 = _planted_laws()
    n_test = 15_000
    a = 1 - math.sqrt(0.95)  # the engine's per-rate level at alpha 0.05, one event
    # Independent floor: the Clopper-Pearson bound at counts 3 standard deviations worse than
    # expected on both inputs (each count falls that far with probability < 0.0015).
    kp = n_test * p1[0] - 3 * math.sqrt(n_test * p1[0])
    kq = n_test * p0[0] + 3 * math.sqrt(n_test * p0[0])
    floor = math.log(stats.beta.ppf(a, math.floor(kp), n_test - math.floor(kp) + 1)
                     / stats.beta.ppf(1 - a, math.ceil(kq) + 1, n_test - math.ceil(kq)))
    assert 0.5 < floor < RARE_LOG_RATIO
    for seed in range(3):
        r = audit(_planted, 1, 0, epsilon=1.0, samples=20_000, alpha=0.05, seed=seed,
                  rng_probe=False)
        assert r.output_kind == "discrete"
        assert (r.n_fit, r.n_select, r.n_test) == (0, 5_000, n_test)
        assert r.event_outcomes is not None and r.event_outcomes["outcomes"] == ["0"]
        assert r.event.event.numerator == 0  # outcome 0 is more likely on data0 = input 1
        assert r.epsilon_lower_bound > floor


class _TestSplitReplaced:
    """The planted mechanism, except that every run after the first ``n_train`` on an input
    (the test split: training runs are drawn first, the rng probe is off) is ``replace(row)``."""

    def __init__(self, n_train: int, replace) -> None:
        self.n_train = n_train
        self.replace = replace
        self.drawn = {0: 0, 1: 0}

    def __call__(self, which: int, n: int, rng: np.random.Generator) -> np.ndarray:
        out = _planted(which, n, rng)
        first = self.drawn[which]
        self.drawn[which] += n
        idx = first + np.arange(n)
        test = idx >= self.n_train
        out[test] = self.replace(out[test], rng)
        return out


def test_the_chosen_event_does_not_depend_on_the_test_split() -> None:
    # The same seed with the test split's outputs permuted, or replaced by a constant outcome:
    # the ratios, the event and its selection counts must be identical; only the test counts
    # (and so the bound) may move.
    base = audit(_TestSplitReplaced(5_000, lambda x, g: x), 1, 0, epsilon=1.0, samples=20_000,
                 alpha=0.05, seed=11, rng_probe=False, chunk_size=1_000)
    for replace in (lambda x, g: g.permutation(x)[::-1].copy(),
                    lambda x, g: np.full_like(x, 3)):
        r = audit(_TestSplitReplaced(5_000, replace), 1, 0, epsilon=1.0, samples=20_000,
                  alpha=0.05, seed=11, rng_probe=False, chunk_size=1_000)
        assert r.event.event == base.event.event
        assert r.event.train == base.event.train
        assert r.event_outcomes == base.event_outcomes
        assert r.statistic == base.statistic
    # ... and the constant replacement did reach the test counts.
    assert r.event.test_counts != base.event.test_counts
