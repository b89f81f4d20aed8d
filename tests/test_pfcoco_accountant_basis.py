"""What the pfcoco learners' accountant rests on, and the claims' primary readings.

The paper calibrates the window tree to the sensitivity ``L + mu D`` (refuted: the class's gradient
gap reaches ``2L - mu D``). The accountant is computed at ``2L``, which the learners guarantee by
clipping every gradient to norm ``L``; z3 proves that bound for every dimension (Gram
abstraction), and ``claims.ACCOUNTANT_BASIS`` records it so the verdict rule can tell a proof gap
from a privacy failure.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import z3
from scipy import optimize
from scipy.special import log_ndtr

from dpaudit.formal.smt import check_lemma
from dpaudit.mechanisms.projections import clip_l2
from dpaudit.papers.pfcoco import audit, claims, plans, smt_lemmas


def _tight(lemma, factor: float) -> z3.CheckSatResult:
    """The lemma's class constraints with the gap above ``factor`` times its bound (squared)."""
    ob = lemma.proof[0]
    s = z3.Solver()
    s.add(*ob.constraints)
    s.add(ob.violation.arg(0) > factor * ob.violation.arg(1))
    return s.check()


def test_clipped_gap_is_proved_for_every_d_and_is_tight():
    lem = smt_lemmas.clipped_gap_lemma()
    assert check_lemma(lem).status == "smt-proved"
    # Not vacuous: the class constraints admit a gap just below 2L (g' = -g, ||g|| >= L).
    assert _tight(lem, 0.99) == z3.sat
    assert lem.statement == claims.ACCOUNTANT_BASIS["pfcoco/wdp-cocop-gaussian"]["proved_statement"]


def test_needed_gap_is_proved_for_every_d_and_is_tight():
    lem = smt_lemmas.needed_gap_every_d_lemma()
    assert check_lemma(lem).status == "smt-proved"
    assert _tight(lem, 0.99) == z3.sat


@pytest.mark.parametrize("d", [1, 2, 3, 6])
def test_clipped_gap_sampled_beyond_d_1(d):
    """The implementation's clip (the learners' ``clip_l2(loss.grad(x), L)``) on random gradients
    of every size: the gap never exceeds 2L and reaches it for opposite gradients."""
    rng = np.random.default_rng(d)
    L = 0.7
    for _ in range(2000):
        g, h = rng.normal(size=(2, d)) * rng.choice([0.1, 1.0, 10.0], size=(2, 1))
        assert np.linalg.norm(clip_l2(g, L) - clip_l2(h, L)) <= 2 * L * (1 + 1e-12)
    g = rng.normal(size=d) * 5
    assert np.linalg.norm(clip_l2(g, L) - clip_l2(-g, L)) == pytest.approx(2 * L)


def _gaussian_epsilon(mu: float, delta: float) -> float:
    """Root of Phi(mu/2 - e/mu) - e^e Phi(-mu/2 - e/mu) = delta (log space)."""
    def excess(e: float) -> float:
        return (math.exp(log_ndtr(mu / 2 - e / mu)) - math.exp(e + log_ndtr(-mu / 2 - e / mu))
                - delta)
    return 0.0 if excess(0.0) <= 0 else optimize.brentq(excess, 0.0, 100.0, xtol=1e-12)


@pytest.mark.parametrize("claim_id,extra", [
    ("pfcoco/wdp-cocop-gaussian", {"update": "exact"}),
    ("pfcoco/wdp-cocol-gaussian", {"domain": "box"}),
])
@pytest.mark.parametrize("log_power", [2, 1])
def test_gaussian_accountant_is_computed_at_2L(claim_id, extra, log_power):
    """At W = 1 the protected leaf (the last one) sits in one noisy node and nothing else, so the
    accountant is one Gaussian mechanism with shift 2L/sigma, sigma from eq. (16) at the printed
    L + mu D: sigma = sqrt(8) (L + mu D) ln(2/delta)^{p/2} / eps (ceil(log2 1) + 1 = 1). With
    L = 1, mu D = 0.5 L and eps = 1, delta = 1e-5."""
    eps, delta, muD = 1.0, 1e-5, 0.5
    n = plans.plan(claim_id, dict(epsilon=eps, delta=delta, W=1, T=4, d=1, muD_over_L=muD,
                                  boundary="strict", log_power=log_power, **extra))
    sigma = math.sqrt(8) * (1 + muD) * math.log(2 / delta) ** (log_power / 2) / eps
    assert n.evidence["noise_scale"] == pytest.approx(sigma, rel=1e-12)
    assert n.accountant == pytest.approx(_gaussian_epsilon(2.0 / sigma, delta), rel=1e-7)
    # ... and not at the printed L + mu D (a smaller shift).
    assert n.accountant > _gaussian_epsilon((1 + muD) / sigma, delta) * 1.2


def test_accountant_basis_marks_the_proved_record():
    """The lemma outcome of a Gaussian learner claim carries the marker on the SMT record of the
    2L bound (smt-proved), next to the refuted paper lemma it replaces."""
    from dpaudit.claims.evidence import LemmaOutcome
    from dpaudit.formal.smt import smt_lemma_records

    cid = "pfcoco/wdp-cocol-gaussian"
    basis = claims.ACCOUNTANT_BASIS[cid]
    assert basis["refuted_statement"] == claims.SENSITIVITY_LEMMA.statement
    assert claims.SENSITIVITY_LEMMA in claims.WDP_COCOL_GAUSSIAN.lemmas
    records = smt_lemma_records([smt_lemmas.clipped_gap_lemma()])
    marked = audit.mark_accountant_basis(cid, LemmaOutcome(tuple(records)))
    [rec] = [c for c in marked.checks if (c.details or {}).get("accountant_basis")]
    assert rec.status == "holds" and rec.method == "smt-proved"
    assert rec.details["accountant_basis"]["sensitivity"] == "2L"
    assert any(f.startswith("Accountant basis:") for f in marked.findings)
    # Claims without a basis are left alone.
    assert audit.mark_accountant_basis("pfcoco/prop-a3", LemmaOutcome(tuple(records))).findings \
        == ()


def test_primary_readings_are_declared_and_on_the_grid():
    """Every reading parameter a pfcoco grid sweeps has a primary value that the grid audits."""
    from dpaudit.claims.context import BUDGETS

    for cid, readings in claims.PRIMARY_READINGS.items():
        pts = plans.grid(cid, BUDGETS["standard"])
        for param, value, why in readings:
            assert why and "'" in why  # quotes the paper
            swept = {p[param] for p in pts if param in p}
            if swept:
                assert value in swept, (cid, param, swept)
