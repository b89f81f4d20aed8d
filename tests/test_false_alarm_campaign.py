"""False-alarm campaign: >= 1000 audits per correctly calibrated mechanism.

Each mechanism below is exactly (or at most) (1, delta)-DP on the pair given, so a bound above the
claim epsilon = 1 is a false alarm. A valid auditor has false-alarm probability <= alpha per audit;
the test fails when the count exceeds ``binom(R, alpha).ppf(0.999)`` (a valid auditor does so with
probability < 1e-3) and prints the rate with its exact two-sided 95% Clopper-Pearson interval.

The default suite runs a smoke version (30 audits each at alpha = 0.4, the same rule at that
size and level, with power 0.94 against an auditor at twice the nominal rate); ``make campaign``
(``pytest -m slow``) runs 1000 per mechanism at alpha = 0.05 (power 0.998 against twice the
nominal rate, false-failure probability 6.5e-4).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize, stats

from dpaudit.blackbox.empirical_audit import audit
from dpaudit.mechanisms.discrete import discrete_gaussian_sigma_for
from dpaudit.mechanisms.exponential import ExponentialMechanism
from dpaudit.mechanisms.gaussian import GaussianMechanism
from dpaudit.mechanisms.laplace import LaplaceMechanism
from dpaudit.mechanisms.sparse_vector import SparseVectorMechanism
from dpaudit.mechanisms.tree_aggregation import (NodeNoise, TreeAggregationMechanism,
                                                 max_nodes_per_leaf)
from dpaudit.mechanisms.window_tree import WindowTreeMechanism, max_window_nodes_per_leaf

ALPHA = 0.05
#: The smoke test's level: alarms frequent enough to count with power in 30 audits (see there).
SMOKE_ALPHA = 0.4
EPSILON = 1.0


def _gaussian_mu_for(eps: float, delta: float) -> float:
    """Shift/sigma at which the Gaussian mechanism is exactly (eps, delta)-DP (Balle, Wang 2018)."""
    def gap(m: float) -> float:
        return (stats.norm.cdf(-eps / m + m / 2) - math.exp(eps) * stats.norm.cdf(-eps / m - m / 2)
                - delta)
    return optimize.brentq(gap, 1e-3, 20.0)


def _randomized_response(eps: float):
    keep = math.exp(eps) / (1 + math.exp(eps))
    return lambda bit, n, rng: np.where(rng.random(n) < keep, bit, 1 - bit).astype(np.int64)


def _k_ary_randomized_response(eps: float, k: int):
    """k-ary randomized response: the true value in {0..k-1} with probability
    e^eps / (e^eps + k - 1), each other value with 1 / (e^eps + k - 1): exactly eps-DP."""
    law = np.full(k, 1.0)

    def mech(d, n, g):
        w = law.copy()
        w[int(d)] = math.exp(eps)
        return g.choice(k, size=n, p=w / w.sum())
    return mech


def _censored_laplace(eps: float):
    """Rows [v, -1000] when v = d + Lap(1/eps) >= 0.5, else [-1000, u] with u a data-independent
    uniform: a function of one Laplace release plus independent noise, so exactly eps-DP."""
    def mech(d, n, g):
        v = float(d) + g.laplace(0.0, 1.0 / eps, size=n)
        u = g.random(n)
        up = v >= 0.5
        return np.where(up[:, None], np.c_[v, np.full(n, -1000.0)], np.c_[np.full(n, -1000.0), u])
    return mech


def _tree(eps: float, T: int = 4):
    # Every leaf lies in at most max_nodes_per_leaf(T) noisy nodes, each Lap(k / eps): eps-DP for
    # a leaf moving by 1 (l1). Leaf 1 lies in exactly k nodes, so the pair below is worst case.
    k = max_nodes_per_leaf(T)
    mech = TreeAggregationMechanism(T, 1, NodeNoise.laplace(k / eps), 1.0)
    return (lambda xs, n, rng: mech.sample(xs, n, rng)), np.zeros((T, 1)), np.eye(T)[:, :1]


def _window_tree(eps: float, T: int = 8, W: int = 4):
    # Window DP (pfcoco Def. 6): for leaf 1 the protected releases are s_1 .. s_W; the wrapper
    # releases exactly those, which are eps-DP with Lap(k / eps) node noise.
    k = max_window_nodes_per_leaf(W, T)
    mech = WindowTreeMechanism(T, W, 1, NodeNoise.laplace(k / eps), 1.0)
    return (lambda xs, n, rng: mech.sample(xs, n, rng)[:, :W]), np.zeros((T, 1)), np.eye(T)[:, :1]


def _symmetric_tight(eps: float, delta: float, c: float = 0.4):
    # P0 = [delta + e w, c, w], P1 = its mirror image: exactly (eps, delta)-DP, tight on {0} from
    # data0 and on {2} from data1, so the pooled mirrored pair of the two (statistics.PooledEvent,
    # the event the audit mostly picks here) is exactly tight.
    e = math.exp(eps)
    w = (1 - delta - c) / (1 + e)
    p0 = np.array([delta + e * w, c, w])
    laws = (p0, p0[::-1].copy())
    return lambda which, n, rng: rng.choice(3, size=n, p=laws[which])


def _calibrated() -> dict[str, tuple]:
    k = 10
    em = ExponentialMechanism.from_epsilon(1.0, EPSILON, form="half", maximize=True)
    u0, u1 = np.r_[1.0, np.zeros(k - 1)], np.r_[0.0, np.ones(k - 1)]
    tree, t0, t1 = _tree(EPSILON)
    wtree, w0, w1 = _window_tree(EPSILON)
    return {
        # name: (mechanism, data0, data1, delta)
        "laplace": (LaplaceMechanism(1.0, 1.0 / EPSILON), 0.0, 1.0, 0.0),
        "gaussian (delta 1e-5)": (GaussianMechanism(1.0, 1.0 / _gaussian_mu_for(EPSILON, 1e-5)),
                                  0.0, 1.0, 1e-5),
        "randomized response": (_randomized_response(EPSILON), 1, 0, 0.0),
        # Discrete selection at level 1/C (statistics.DISCRETE_SELECTION_LEVEL): eight
        # outcomes, exactly EPSILON-DP and tight on outcomes 0 and 1, so the event chosen among
        # the prefix sets is at the claim's edge.
        "k-ary randomized response (k=8)": (_k_ary_randomized_response(EPSILON, 8), 0, 1, 0.0),
        # The opt-in pattern-conditional histogram ratio on mixed outputs: a censored
        # Laplace value (post-processing of one Laplace release: exactly EPSILON-DP, tight in
        # both tails) next to a data-independent sentinel coordinate.
        "censored laplace, pattern statistic": (_censored_laplace(EPSILON), 0.0, 1.0, 0.0,
                                                ["pattern"]),
        "sparse vector": (SparseVectorMechanism(EPSILON, 0.5), [0] * 9 + [1], [1] * 9 + [0], 0.0),
        "exponential": (em, u0, u1, 0.0),
        "tree aggregation (T=4)": (tree, t0, t1, 0.0),
        "window tree (T=8, W=4)": (wtree, w0, w1, 0.0),
        "symmetric tight (delta 0.05), pooled pairs": (_symmetric_tight(EPSILON, 0.05), 0, 1,
                                                        0.05),
        **_discrete(),
    }


def _discrete() -> dict[str, tuple]:
    # Exact noise on the grid 0.25 Z: Laplace at scale 1 (exactly 1-DP for a shift of 4 units),
    # and the smallest discrete Gaussian sigma that is exactly (1, 1e-5)-DP for that shift.
    sigma = discrete_gaussian_sigma_for(EPSILON, 1e-5, 1.0, granularity=0.25)
    return {
        "discrete laplace (granularity 0.25)": (
            LaplaceMechanism(1.0, 1.0 / EPSILON, noise="discrete", granularity=0.25), 0.0, 1.0,
            0.0),
        "discrete gaussian (delta 1e-5, granularity 0.25)": (
            GaussianMechanism(1.0, sigma, noise="discrete", granularity=0.25), 0.0, 1.0, 1e-5),
    }


CALIBRATED = _calibrated()


def _run(name: str, reps: int, seed0: int, samples: int,
         alpha: float = ALPHA) -> tuple[int, np.ndarray]:
    mech, d0, d1, delta, *statistics = CALIBRATED[name]
    extra = {"statistics": statistics[0]} if statistics else {}
    bounds = np.array([audit(mech, d0, d1, epsilon=EPSILON, delta=delta, samples=samples,
                             alpha=alpha, seed=seed0 + s, **extra).epsilon_lower_bound
                       for s in range(reps)])
    return int(np.sum(bounds > EPSILON)), bounds


def _report(name: str, alarms: int, reps: int, bounds: np.ndarray) -> str:
    ci = stats.binomtest(alarms, reps).proportion_ci(confidence_level=0.95, method="exact")
    return (f"| {name} | {reps} | {alarms} | {alarms / reps:.4f} | [{ci.low:.4f}, {ci.high:.4f}] "
            f"| {bounds.mean():.3f} |")


@pytest.mark.parametrize("name", sorted(CALIBRATED))
def test_false_alarms_smoke(name: str) -> None:
    # Power: at alpha = 0.4 per audit (validity must hold at every level; a larger level
    # makes alarms frequent enough to count in few audits: four of these mechanisms cost ~1 s per
    # audit), R = 30 audits and the rule "fail when more than c = binom(30, 0.4).ppf(0.999) = 20
    # alarms": false-failure probability for a valid auditor binom(30, 0.4).sf(20) = 8.6e-4; power
    # against an auditor at 2x the nominal rate (0.8 per audit) binom(30, 0.8).sf(20) = 0.94. (The
    # former 20 audits at alpha = 0.05 allowed 5 alarms: power binom(20, 0.10).sf(5) = 0.011
    # against 2x, 0.20 against 4x.)
    reps = 30
    alarms, bounds = _run(name, reps, 50_000, 5_000, alpha=SMOKE_ALPHA)
    print(_report(name, alarms, reps, bounds))
    assert alarms <= int(stats.binom(reps, SMOKE_ALPHA).ppf(0.999))


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CALIBRATED))
def test_false_alarm_campaign_1000(name: str) -> None:
    reps = 1_000
    alarms, bounds = _run(name, reps, 100_000, 20_000)
    print("\n| mechanism | audits | false alarms | rate | 95% Clopper-Pearson | mean bound |")
    print(_report(name, alarms, reps, bounds))
    assert alarms <= int(stats.binom(reps, ALPHA).ppf(0.999))
