"""Issue 32 (reliability round 4): wrong verdicts on the user path and lost records.

The mechanisms are Laplace releases of a sum, whose epsilon is known by hand: Laplace noise of
scale b on a sum that moves by 1 between the declared neighbours is exactly 1/b-DP.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

import dpaudit
from dpaudit import Claim, Source
from dpaudit.claims.evidence import GridPoint
from dpaudit.claims.registry import unregister
from dpaudit.claims.verdict import decide_verdict

SRC = Source(title="round-4 note", kind="design doc")
IDS: list[str] = []


@pytest.fixture(autouse=True)
def _forget():
    yield
    for cid in IDS:
        unregister(cid)
    IDS.clear()


def laplace_release(scale: float):
    def release(p):
        def mechanism(data, n, rng):
            return float(np.sum(data)) + rng.laplace(0.0, scale, size=n)
        return mechanism
    return release


def claim(cid: str, **kw) -> Claim:
    IDS.append(cid)
    args = dict(id=cid, statement="The noisy sum is eps-DP.", source=SRC,
                claimed=lambda p: (1.0, 0.0), neighbours="add-remove", grid=[{}],
                release=laplace_release(1.0), pairs=lambda p: [([1.0], [])])
    args.update(kw)
    return Claim(**args)


# -- 1: a valid empirical lower bound above the accountant certifies nothing ---------------------

def test_the_verdict_rule_treats_a_lower_bound_above_the_accountant_like_an_exact_value() -> None:
    # Lower bound 0.9 <= claim 1.5 (no counterexample), accountant 0.5 below it: not "holds".
    point = GridPoint({"epsilon": 1.5}, 1.5, 0.0, epsilon_accountant=0.5, epsilon_lower_bound=0.9)
    verdict, reason = decide_verdict([point], [])
    assert verdict == "inconclusive"
    assert "empirical lower bound 0.9 exceeds the accountant's 0.5" in reason
    # At or below the accountant it is no evidence against it.
    ok = GridPoint({"epsilon": 1.5}, 1.5, 0.0, epsilon_accountant=0.5, epsilon_lower_bound=0.5)
    assert decide_verdict([ok], [])[0] == "holds"


@pytest.mark.parametrize("accountant", [
    lambda p: dpaudit.noise.LaplaceNoise(2.0, sensitivity=1.0),  # dpaudit's: 1/2
    lambda p: 0.6,                                                # user-supplied
])
def test_code_above_its_accountant_is_not_holds(accountant) -> None:
    # Laplace(1) on a sum: true epsilon 1 (by hand); claim 1.5; the accountant says 0.5 or 0.6.
    # The quick budget's lower bound on this pair lies in 0.92-0.97 on seeds 0-3 (measured), well
    # above both accountants and below the true 1 (valid at alpha 0.05).
    result = dpaudit.audit_claim(claim("r4/code-above-accountant", claimed=lambda p: (1.5, 0.0),
                                       accountant=accountant), budget="quick", seed=0)
    lb = result.points[0].epsilon_lower_bound
    assert 0.6 < lb <= 1.0
    assert result.verdict == "inconclusive"
    assert "certifies nothing" in result.verdict_and_reason[1]
    assert any("INCONSISTENCY" in f for f in result.findings)


# -- 2: a mechanism that seeds itself is refused, never audited as random ------------------------

def _seeds_numpy(data, n, rng):
    np.random.seed(0)
    return float(data) + np.random.laplace(0.0, 1.0, size=n)


def _seeds_generator(data, n, rng):
    return float(np.sum(data)) + np.random.default_rng(7).laplace(0.0, 1.0, size=n)


def _seeds_python(data, n, rng):
    own = random.Random(3)
    return np.array([float(data) + own.gauss(0.0, 1.0) for _ in range(n)])


@pytest.mark.parametrize("mechanism", [_seeds_numpy, _seeds_generator, _seeds_python])
def test_a_self_seeded_mechanism_is_refused_by_audit(mechanism) -> None:
    with pytest.raises(ValueError, match="seeds its own generator with a constant"):
        dpaudit.audit(mechanism, 0.0, 1.0, epsilon=1.0, samples=2_000, seed=0)


def test_a_self_seeded_release_is_refused_on_the_claim_path() -> None:
    c = claim("r4/self-seeded", release=lambda p: _seeds_generator,
              accountant=lambda p: dpaudit.noise.LaplaceNoise(1.0, sensitivity=1.0))
    with pytest.raises(ValueError, match="identical outputs under different rng seeds"):
        dpaudit.audit_claim(c, budget="quick", seed=0)


def test_rng_users_and_global_rng_users_are_still_audited() -> None:
    from dpaudit.blackbox.rng_probe import probe_rng

    assert not probe_rng(lambda d, n, rng: d + rng.laplace(size=n), 0.0, 0).rng_ignored
    assert probe_rng(lambda d, n, rng: d + np.random.laplace(size=n), 0.0, 0).globals_reseedable
    # A deterministic release (no noise at all) is not "self-seeded": its rows do not vary, and
    # the audit measures it as what it is.
    assert not probe_rng(lambda d, n, rng: np.full(n, d), 0.0, 0).rng_ignored
