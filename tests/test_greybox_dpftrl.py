"""Grey-box acceptance: a user's DP-FTRL in four variants, declared through the public API.

The learner below is written here the way a user would (plain numpy, its own tree indexing, noise
as ``sigma * rng.standard_normal``), not taken from examples/own-learner. Every variant is declared
with the design doc's law and accountant (the correct variant's); at the quick budget the correct
one holds, the add/remove calibration and the missing clip are violated (the law derived from the
code gives their exact epsilon), and the redraw-per-query bug is not ``holds``: its declared law is
rejected by the runs. With no law declared, the derived exact epsilons equal hand derivations:

* correct: the pair moves every prefix sum by 2C eta; the design-doc covariance is
  ``sigma^2 eta^2 M M^T`` (M: prefix x node incidence), mu^2 = Delta^T Sigma^{-1} Delta, solved
  here with numpy; by the tree's structure it is (2C)^2 depth / sigma^2;
* add/remove: the same with sigma / 2;
* missing clip: the pair +-10C moves every prefix sum by 20C eta: ten times the correct mu;
* redraw: rounds independent, round t with popcount(t) fresh nodes:
  ``mu^2 = sum_t (2C)^2 / (popcount(t) sigma^2)``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize, stats

import dpaudit
from dpaudit import Claim, Source

C, ETA, DELTA, D, T = 1.0, 0.1, 1e-5, 2, 8
DEPTH = math.ceil(math.log2(T)) + 1


def design_sigma(eps: float) -> float:
    return 2 * C * math.sqrt(DEPTH) * math.sqrt(2 * math.log(1.25 / DELTA)) / eps


def blocks(t: int) -> list[tuple[int, int]]:
    """Dyadic blocks (start, length) covering rounds [0, t)."""
    out, start = [], 0
    for size in (1 << k for k in reversed(range(t.bit_length()))):
        if t & size:
            out.append((start, size))
            start += size
    return out


def ftrl(grads, n, rng, *, eps: float, variant: str):
    g = np.asarray(grads, dtype=float)
    if variant != "noclip":
        g = g * np.minimum(1.0, C / np.maximum(np.linalg.norm(g, axis=1, keepdims=True), 1e-300))
    sigma = design_sigma(eps) / (2.0 if variant == "addremove" else 1.0)
    cum = np.vstack([np.zeros(D), np.cumsum(g, axis=0)])
    kept: dict[tuple[int, int], np.ndarray] = {}
    xs = []
    for t in range(1, T + 1):
        est = np.zeros((n, D))
        for start, size in blocks(t):
            value = cum[start + size] - cum[start]
            if variant == "redraw" or (start, size) not in kept:
                noise = sigma * rng.standard_normal((n, D))
                if variant != "redraw":
                    kept[(start, size)] = noise
            else:
                noise = kept[(start, size)]
            est = est + (value + noise)
        xs.append(-ETA * est)
    return np.stack(xs, axis=1)


def incidence() -> np.ndarray:
    nodes = sorted({b for t in range(1, T + 1) for b in blocks(t)})
    return np.array([[1.0 if b in blocks(t) else 0.0 for b in nodes] for t in range(1, T + 1)])


def design_covariance(eps: float) -> np.ndarray:
    M = incidence()
    return np.kron(design_sigma(eps) ** 2 * ETA ** 2 * (M @ M.T), np.eye(D))


def clipped_prefix(grads) -> np.ndarray:
    g = np.asarray(grads, dtype=float)
    g = g * np.minimum(1.0, C / np.maximum(np.linalg.norm(g, axis=1, keepdims=True), 1e-300))
    return (-ETA * np.cumsum(g, axis=0)).reshape(-1)


def pair(scale: float):
    a, b = np.zeros((T, D)), np.zeros((T, D))
    a[0, 0], b[0, 0] = scale * C, -scale * C
    return a, b


def claim(variant: str, with_law: bool) -> Claim:
    return Claim(
        id=f"test-dpftrl/{variant}-{'law' if with_law else 'nolaw'}",
        statement="DP-FTRL iterates are (eps, 1e-5)-DP under replace-one",
        source=Source(title="DP-FTRL design doc", kind="design doc", location="Sec. 3"),
        claimed=lambda p: (p["epsilon"], DELTA), neighbours="replace-one",
        grid=[{"epsilon": 1.0}],
        release=lambda p: (lambda g, n, rng: ftrl(g, n, rng, eps=p["epsilon"], variant=variant)),
        pairs=lambda p: [pair(1.0), pair(10.0)],
        accountant=lambda p: dpaudit.noise.gaussian_tree(sigma=design_sigma(p["epsilon"]),
                                                         sensitivity=C, T=T),
        exact=(lambda p: dpaudit.exact.LinearGaussian(
            mean=clipped_prefix, covariance=design_covariance(p["epsilon"]))) if with_law
        else None)


def gaussian_epsilon_by_hand(mu: float, delta: float) -> float:
    def f(eps: float) -> float:
        return (stats.norm.cdf(-eps / mu + mu / 2)
                - math.exp(eps) * stats.norm.cdf(-eps / mu - mu / 2) - delta)
    return optimize.brentq(f, 0.0, 200.0, xtol=1e-13)


def hand_mu(variant: str, eps: float = 1.0) -> float:
    s = design_sigma(eps)
    if variant == "redraw":
        return 2 * C / s * math.sqrt(sum(1 / bin(t).count("1") for t in range(1, T + 1)))
    delta_vec = np.full(T, 2 * C * ETA)
    mu = math.sqrt(delta_vec @ np.linalg.solve(s ** 2 * ETA ** 2 * (incidence() @ incidence().T),
                                               delta_vec))
    return {"correct": mu, "addremove": 2 * mu, "noclip": 10 * mu}[variant]


def test_the_hand_derivations_agree_with_each_other() -> None:
    # The tree's incidence solve equals the closed form (2C)^2 depth / sigma^2.
    assert hand_mu("correct") == pytest.approx(2 * C * math.sqrt(DEPTH) / design_sigma(1.0),
                                               rel=1e-10)


def test_the_correct_variant_holds_with_the_design_docs_law() -> None:
    result = dpaudit.audit_claim(claim("correct", True), budget="quick", seed=0)
    assert result.verdict == "holds", result.verdict_and_reason
    law = [c for c in result.lemmas if "declared law" in c.statement]
    assert law and law[0].status == "holds"


@pytest.mark.parametrize("variant", ["addremove", "noclip"])
def test_the_calibration_bugs_are_violated_with_the_design_docs_law(variant) -> None:
    result = dpaudit.audit_claim(claim(variant, True), budget="quick", seed=0)
    assert result.verdict == "violated"
    (p,) = result.points
    assert p.evidence["exact_source"] == "derived from the code"
    assert p.epsilon_exact == pytest.approx(gaussian_epsilon_by_hand(hand_mu(variant), DELTA),
                                            rel=1e-7)
    # Found without a user lemma: the noise sites' inputs move further than calibrated for.
    site = next(c for c in result.lemmas if c.statement.startswith("what the data moves over all"))
    assert site.status == "violated"
    assert site.worst_ratio == pytest.approx(2.0 if variant == "addremove" else 10.0, rel=1e-9)


def test_the_redraw_bug_is_not_holds_and_its_declared_law_is_rejected() -> None:
    result = dpaudit.audit_claim(claim("redraw", True), budget="quick", seed=0)
    assert result.verdict != "holds"
    (p,) = result.points
    assert p.evidence["declared_law"]["rejected"] is True
    assert any(f.startswith("The declared law does not describe the code") for f in
               result.findings)


@pytest.mark.parametrize("variant", ["correct", "addremove", "noclip", "redraw"])
def test_with_no_law_the_derived_exact_epsilon_is_the_hand_derivation(variant) -> None:
    decl = dpaudit.claims.user_claims.declaration_of(claim(variant, False))
    from dpaudit.claims.context import AuditContext, BUDGETS

    plan = decl.plan({"epsilon": 1.0}, AuditContext(BUDGETS["quick"]))
    assert plan.evidence["exact_source"] == "derived from the code"
    assert plan.law_test is None
    assert plan.exact == pytest.approx(gaussian_epsilon_by_hand(hand_mu(variant), DELTA),
                                       rel=1e-7)
