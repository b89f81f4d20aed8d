"""Shared by the expected-verdict tests: independent closed forms and a way to run the
real claim driver on a few named points of a bundled claim, cheaply.

The closed forms use numpy/scipy only, never dpaudit code, so an expected number derived with them
is independent of the implementation under test. :func:`driver_verdict` runs the same
:func:`~dpaudit.claims.driver.run_claim` the CLI runs (real plans, real empirical tests at a small
sample count, real verdict rule, real readings), restricted to the points a test names: one
refuting point makes the whole claim ``violated``, so a violated verdict on a subset is the claim's
verdict; ``holds`` needs every point, and tests of ``holds`` pass ``points=None`` (the whole quick
grid).
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

import numpy as np
from scipy import optimize, stats

from dpaudit.claims.context import BUDGETS, AuditContext, Budget
from dpaudit.claims.declaration import AddedPoints, ClaimRun, Declaration, PointPlan
from dpaudit.claims.driver import Skip, run_claim
from dpaudit.claims.evidence import LemmaOutcome
from dpaudit.claims.record import ClaimAudit
from dpaudit.claims.registry import get

#: The formal evidence is the same at every budget; only the empirical tests and the Hypothesis
#: searches shrink. The grid is the quick budget's (coarse, max_T = 64).
CHEAP = Budget("cheap", samples=2_000, sensitivity_examples=8, grid="coarse", max_T=64)
CTX = AuditContext(BUDGETS["quick"], seed=0, alpha=0.05)


# -- independent closed forms (a few lines each; no dpaudit code) --------------------------------

def gaussian_delta(mu: float, eps: float) -> float:
    """delta(eps) of N(0,1) vs N(mu,1) (Balle & Wang 2018, Thm 8), with e^eps Phi(.) formed in
    log space so that it stays finite for eps in the thousands."""
    return float(stats.norm.cdf(mu / 2 - eps / mu)
                 - math.exp(eps + stats.norm.logcdf(-mu / 2 - eps / mu)))


def gaussian_epsilon(mu: float, delta: float) -> float:
    """The smallest eps with gaussian_delta(mu, eps) <= delta (0 if already at eps = 0)."""
    if mu <= 0 or gaussian_delta(mu, 0.0) <= delta:
        return 0.0
    return float(optimize.brentq(lambda e: gaussian_delta(mu, e) - delta, 0.0,
                                 mu * mu / 2 + 20 * mu + 100, xtol=1e-14, rtol=1e-13))


def prefix_nodes(t: int) -> list[tuple[int, int]]:
    """Dyadic nodes [a, b] of the binary decomposition of the prefix [1, t] (the tree mechanism)."""
    out, start = [], 1
    for j in reversed(range(t.bit_length())):
        if t >> j & 1:
            out.append((start, start + 2 ** j - 1))
            start += 2 ** j
    return out


def released_nodes_containing(leaf: int, last_prefix: int) -> int:
    """How many distinct noisy nodes the prefixes [1, 1], ..., [1, last_prefix] use that contain
    ``leaf`` (each such node's noise is independent and shifted by the replaced input)."""
    nodes = {n for t in range(1, last_prefix + 1) for n in prefix_nodes(t)}
    return sum(1 for a, b in nodes if a <= leaf <= b)


def rr_composition_epsilon(eps: float, k: int, delta: float) -> float:
    """Exact eps(delta) of k-fold binary randomized response with parameter eps (the worst k-fold
    composition of eps-DP mechanisms, Kairouz, Oh & Viswanath 2015): the number of ones is
    Binomial(k, p) vs Binomial(k, 1 - p), p = e^eps / (1 + e^eps)."""
    p = math.exp(eps) / (1 + math.exp(eps))
    i = np.arange(k + 1)
    p0, p1 = stats.binom.pmf(i, k, p), stats.binom.pmf(i, k, 1 - p)

    def dlt(e: float) -> float:
        return float(np.maximum(p0 - math.exp(e) * p1, 0.0).sum())
    return float(optimize.brentq(lambda e: dlt(e) - delta, 0.0, k * eps, xtol=1e-14))


# -- access to the bundled declarations ----------------------------------------------------------

def plan(claim_id: str, params: Mapping[str, Any]) -> Any:
    """The bundled declaration's plan (formal evidence, no sampling) at one parameter point."""
    p = get(claim_id).audit.declaration.plan(dict(params), CTX)
    assert not isinstance(p, Skip), p
    return p


def grid(claim_id: str) -> list[dict[str, Any]]:
    """The quick budget's grid of a bundled claim."""
    return [dict(g) for g in get(claim_id).audit.declaration.grid(CTX)]


def find_point(claim_id: str, **match: Any) -> dict[str, Any]:
    """The first quick-grid point of a bundled claim with the given parameter values."""
    pts = [g for g in grid(claim_id) if all(g.get(k) == v for k, v in match.items())]
    assert pts, f"no grid point of {claim_id} with {match}"
    return pts[0]


class _Restricted(Declaration):
    """A bundled declaration whose grid is the named points, with or without its lemma checks and
    its derived points (everything else forwarded)."""

    def __init__(self, decl: Declaration, points: Sequence[Mapping[str, Any]] | None,
                 lemmas: bool, more_points: bool) -> None:
        self._decl, self._points, self._lemmas, self._more = decl, points, lemmas, more_points
        self.claim = decl.claim

    def grid(self, ctx: AuditContext) -> list[Mapping[str, Any]]:
        return list(self._decl.grid(ctx)) if self._points is None else list(self._points)

    def plan(self, params: Mapping[str, Any], ctx: AuditContext) -> Any:
        return self._decl.plan(params, ctx)

    def tested_points(self, budget: Budget) -> int | None:
        return self._decl.tested_points(budget)

    def more_points(self, plans: Sequence[PointPlan], ctx: AuditContext) -> AddedPoints:
        return self._decl.more_points(plans, ctx) if self._more else AddedPoints()

    def lemmas(self, ctx: AuditContext, parameters: Sequence[Mapping[str, Any]]) -> LemmaOutcome:
        return self._decl.lemmas(ctx, parameters) if self._lemmas else LemmaOutcome()

    def findings(self, run: ClaimRun) -> list[str]:
        return self._decl.findings(run)


def driver_verdict(claim_id: str, points: Sequence[Mapping[str, Any]] | None = None, *,
                   lemmas: bool = True, more_points: bool = False,
                   budget: Budget = CHEAP, seed: int = 0) -> ClaimAudit:
    """Run the real claim driver on ``points`` of a bundled claim (``None``: its whole quick grid)
    at a small budget. ``lemmas=False`` skips the sensitivity-lemma checks (they never turn a
    formal counterexample into anything but ``violated``); ``more_points`` runs the declaration's
    follow-up points too."""
    decl = get(claim_id).audit.declaration
    ctx = AuditContext(budget, seed=seed, alpha=0.05)
    return run_claim(_Restricted(decl, points, lemmas, more_points), ctx)


def reading_verdict(audit: ClaimAudit, name_part: str) -> str:
    """The verdict of the reading whose name contains ``name_part``."""
    found = [r for r in audit.reading_verdicts() if name_part in r["name"]]
    assert len(found) == 1, [r["name"] for r in audit.reading_verdicts()]
    return found[0]["verdict"]


class Expected:
    """One bundled claim's expected verdict, derived independently of dpaudit's output.

    ``verdict``: the claim's verdict (the primary reading's); ``readings``: ``{part of a reading's
    name: verdict}`` for every other reading the claim declares; ``points``: the named points the
    driver runs (``None``: the whole quick grid, needed for ``holds`` and ``inconclusive``);
    ``lemmas``: whether the lemma checks run (needed where a lemma decides, e.g. a proof gap);
    ``samples``: empirical runs per input where the verdict rests on an empirical lower bound;
    ``source``: the test(s) that derive the decisive number at those points, by name, and the
    derivation in one line (so a reviewer finds the independent derivation of every point).
    """

    def __init__(self, verdict: str, source: str, *, points: Sequence[Mapping[str, Any]] | None = None,
                 readings: Mapping[str, str] | None = None, lemmas: bool = False,
                 more_points: bool = False, samples: int | None = None) -> None:
        assert verdict in ("holds", "violated", "inconclusive")
        assert points is not None or verdict != "violated" or more_points, \
            "name the refuting point(s) of a violated claim"
        self.verdict, self.source, self.points = verdict, source, points
        self.readings, self.lemmas, self.more_points = dict(readings or {}), lemmas, more_points
        #: samples per input of the empirical tests (None: CHEAP's 2 000), for a claim whose
        #: verdict rests on an empirical lower bound that needs more runs to clear the claim
        self.budget = CHEAP if samples is None else Budget("cheap", samples=samples,
                                                            sensitivity_examples=8,
                                                            grid="coarse", max_T=64)


def check_expected(claim_id: str, expected: Expected) -> ClaimAudit:
    """Run the real driver as ``expected`` says and assert the claim's and every reading's verdict."""
    audit = driver_verdict(claim_id, expected.points, lemmas=expected.lemmas,
                           more_points=expected.more_points, budget=expected.budget)
    assert audit.verdict == expected.verdict, audit.verdict_and_reason[1]
    for part, verdict in expected.readings.items():
        assert reading_verdict(audit, part) == verdict, audit.verdict_and_reason[1]
    assert not any(f.startswith("INCONSISTENCY") for f in audit.findings), audit.findings
    return audit
