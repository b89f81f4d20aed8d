"""The pfcoco claims as declarations for the claim driver (Web Intelligence 2020, window DP).

:class:`PfcocoDeclaration` plugs the grids and point plans of :mod:`dpaudit.papers.pfcoco.plans`
into :class:`~dpaudit.claims.declaration.Declaration`, with the lemma checks (:func:`lemmas`), the
expired-leakage measurements and the findings drawn from the planned points.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Mapping

import numpy as np

from dpaudit.claims import PrivacyClaim, WindowScope
from dpaudit.claims.context import AuditContext, Budget
from dpaudit.claims.declaration import ClaimRun, Declaration, PointPlan, Skip
from dpaudit.claims.evidence import LemmaCheck, LemmaOutcome
from dpaudit.claims.formatting import fmt
from dpaudit.learners.domains import Ball, Box
from dpaudit.learners.wdp_cocol import WDPCOCOL
from dpaudit.learners.wdp_cocop import WDPCOCOP, option_noise
from dpaudit.mechanisms.window_tree import paper_gaussian_noise
from dpaudit.papers.pfcoco import exact as ex
from dpaudit.papers.pfcoco import lemmas as lem
from dpaudit.papers.pfcoco.smt_lemmas import smt_evidence
from dpaudit.papers.pfcoco.claims import ACCOUNTANT_BASIS, PFCOCO_CLAIMS
from dpaudit.papers.pfcoco.plans import grid, plan
from dpaudit.papers.pfcoco.pairs import learner_pair

__all__ = ["PfcocoDeclaration", "DECLARATIONS", "grid", "lemmas", "expired_leakage", "CLAIMS",
           "mark_accountant_basis"]

CLAIMS = {c.id: c for c in PFCOCO_CLAIMS}


def lemmas(claim_id: str, examples: int, seed: int = 0) -> list[LemmaCheck]:
    """The lemma checks of ``claim_id`` (Hypothesis with ``examples`` examples where used).

    Parameters
    ----------
    claim_id, examples, seed
        A pfcoco claim id; Hypothesis examples; the seed of the search and data-access runs.

    Returns
    -------
    list of LemmaCheck
        Window claims: Lemmas 1 and 3's node count; learners also the ``L + mu D`` search and
        the data-access check; the standard tree its node count; the propositions none.
    """
    out: list[LemmaCheck] = []
    if claim_id.startswith("pfcoco/window-tree") or claim_id.startswith("pfcoco/wdp-"):
        out.append(lem.window_node_count_check())
    if claim_id.startswith("pfcoco/wdp-"):
        out.append(lem.sensitivity_lemma_check(examples, seed))
        domain = Box(2) if "cocol" in claim_id else Ball(2)
        pair = learner_pair(WindowScope(), 4, 9, domain, 1.0, 0.1)
        cls = WDPCOCOL if "cocol" in claim_id else WDPCOCOP
        gauss = claim_id.endswith("gaussian")
        out.append(lem.data_access_check(
            CLAIMS[claim_id].lemmas[2].statement,
            lambda: cls(domain, 0.1, 1.0, 9, 4, option="II" if gauss else "I", delta=1e-5),
            list(pair.losses0), 3, np.random.default_rng(seed)))
    if claim_id == "pfcoco/standard-tree":
        out.append(lem.standard_tree_count_check())
    return out


def expired_leakage(W: int, epsilon: float = 1.0, delta: float = 1e-5,
                    horizons: tuple[int, ...] = (1, 2, 4, 16), log_power: int = 1
                    ) -> list[dict[str, Any]]:
    """What leaf 1 leaks once it has expired (never a violation), at horizons ``T = W + h``.

    The exact epsilon of the releases ``s_1..s_T``, Gaussian nodes of Lemma 3 (``Delta_2 = 1``);
    and, for ``W`` a power of two and ``T = W + 1``, the exact pure epsilon with Gamma nodes of
    Lemma 1, and an upper value for them at every horizon (:func:`.exact.laplace_release_upper`).

    Parameters
    ----------
    W, epsilon, delta
        Window length and the budget the nodes are calibrated to (delta: Gaussian nodes only).
    horizons, log_power
        The steps ``h`` after expiry; the reading of Lemma 3's ``ln^p(2/delta)`` (1: ln).

    Returns
    -------
    list of dict
        Per horizon: ``W``, ``T``, ``steps_after_expiry``, ``gaussian_epsilon``, ``gaussian_mu``,
        ``gamma_epsilon`` (None where not certified), ``gamma_upper``, ``claimed_epsilon``.
    """
    out = []
    sigma = paper_gaussian_noise(epsilon, delta, 1.0, W, log_power=log_power).scale
    s = option_noise("I", epsilon, 0.0, 1.0, W).scale
    for h in horizons:
        T = W + h
        g = ex.gaussian_release_epsilon(W, T, 1, 1.0, sigma, delta)
        lap = ex.laplace_exact_epsilon(W, T, 1, 1.0, s)
        out.append({"W": W, "T": T, "steps_after_expiry": h, "gaussian_epsilon": g,
                    "gaussian_mu": ex.gaussian_release_mu(W, T, 1, 1.0, sigma),
                    "gamma_epsilon": lap,
                    "gamma_upper": ex.laplace_release_upper(W, T, 1, 1.0, s),
                    "claimed_epsilon": epsilon})
    return out


# --------------------------------------------------------------------------------------------
# Declarations over the claim driver
# --------------------------------------------------------------------------------------------

#: Empirical tests per claim (the points with the largest exact/accountant-to-claim ratio).
TESTS = {"quick": 3, "standard": 6, "thorough": 10}
_MECHANISM_CLAIMS = {"pfcoco/window-tree-gamma", "pfcoco/window-tree-gaussian",
                     "pfcoco/standard-tree", "pfcoco/prop-a1", "pfcoco/prop-a3", "pfcoco/prop-a6"}


def _reading_findings(run: Any, key: str, labels: Mapping[Any, str]) -> list[str]:
    out = []
    for value, label in labels.items():
        pts = [p for p in run.points if p.parameters.get(key) == value]
        if not pts:
            continue
        bad = [p for p in pts if p.counterexample() is not None]
        worst = max(pts, key=lambda p: p.worst_ratio())
        out.append(f"Reading {label}: {len(pts)} points, {len(bad)} with a counterexample; "
                   f"worst at ({', '.join(f'{k}={v}' for k, v in worst.parameters.items())}): "
                   f"claimed {fmt(worst.claimed_epsilon)}, exact {fmt(worst.epsilon_exact)}, "
                   f"accountant {fmt(worst.epsilon_accountant)}, lower bound "
                   f"{fmt(worst.epsilon_lower_bound)}.")
    return out


def learner_expired_leakage(gauss: bool, W: int = 8, epsilon: float = 1.0, delta: float = 1e-5,
                            mu_D_over_L: float = 0.01,
                            horizons: tuple[int, ...] = (9, 16, 64, 256)) -> list[float | None]:
    """What the noisy gradient sums of a WDP-COCOP/COL run leak about round 1 once it expired.

    Printed calibration at ``L = 1`` (sensitivity ``L + mu D``), round 1's gradient replaced by
    one at distance ``2L`` (clipping's bound): Option II - exact epsilon(delta) of the sums
    ``s_1..s_T`` (ln reading); Option I - the shifted-node upper value. The learners' releases
    are post-processings of these sums, so these bound what the learners leak.

    Parameters
    ----------
    gauss
        Option II (Gaussian nodes) or Option I (Gamma nodes).
    W, epsilon, delta, mu_D_over_L, horizons
        Window, calibrated budget, ``mu D / L`` (sensitivity ``1 + mu_D_over_L``), horizons T.

    Returns
    -------
    list of float or None
        Per horizon (None where no upper value exists).
    """
    Dp, shift = 1.0 + mu_D_over_L, 2.0
    noise = option_noise("II" if gauss else "I", epsilon, delta if gauss else 0.0, Dp, W,
                         log_power=1)
    if gauss:
        return [ex.gaussian_release_epsilon(W, T, 1, shift, noise.scale, delta) for T in horizons]
    return [ex.laplace_release_upper(W, T, 1, shift, noise.scale) for T in horizons]


def _learner_expiry_finding(gauss: bool) -> str:
    horizons = (9, 16, 64, 256)
    vals = learner_expired_leakage(gauss, horizons=horizons)
    series = ", ".join(f"T={T}: {fmt(v)}" for T, v in zip(horizons, vals))
    kind = ("exact epsilon(1e-5) (Gaussian nodes, ln reading) is" if gauss else
            "pure epsilon (Gamma nodes) is at most")
    return ("What an expired round leaks (a measured fact, not a violation): round 1 with W = 8, "
            "eps = 1, mu D = 0.01 L, its gradient replaced by one at distance 2L. The learner's "
            f"release is a post-processing of the noisy sums, whose {kind} {series}: the round "
            "stays inside an exact partial sum of every later release.")


def findings(claim_id: str, run: Any) -> list[str]:
    """Paper-specific prose for a finished run (readings, expired leakage, power caveats).

    Parameters
    ----------
    claim_id, run
        A pfcoco claim id; the driver's finished run (its ``points``).

    Returns
    -------
    list of str
        Each reading's worst point, then the claim's fixed sentences (expiry, sensitivity gap).
    """
    out: list[str] = []
    window = claim_id.startswith(("pfcoco/window-tree", "pfcoco/wdp-"))
    if window:
        out += _reading_findings(run, "boundary", {
            "strict": "'T - i < W' (Def. 6, default: the mechanism keeps the last W leaves noisy)",
            "inclusive": "'T - i <= W' (the leaf is inside an exact sum at the last horizon)"})
    if claim_id.endswith("gaussian"):
        out += _reading_findings(run, "log_power", {2: "ln^2(2/delta) (OCR superscript)",
                                                     1: "ln(2/delta)"})
    if claim_id.startswith("pfcoco/window-tree"):
        rows = expired_leakage(8, epsilon=1.0, delta=1e-5, horizons=(1, 8, 56, 248))
        g = ", ".join(f"T={r['T']}: {r['gaussian_epsilon']:.3g}" for r in rows)
        out.append("What an expired entry leaks (a measured fact, not a violation: window DP does "
                   "not protect it). Leaf 1 with W = 8, eps = 1, Delta_2 = 1: with Gamma nodes "
                   f"the releases up to T = 9 are exactly {rows[0]['gamma_epsilon']:.4g}-DP for it "
                   "(the leaf sits in an exact sum from T = 9 on), and at most "
                   + ", ".join(f"T={r['T']}: {r['gamma_upper']:.3g}" for r in rows)
                   + " (upper values: composition of the shifted node noises); with Gaussian nodes "
                   "(ln reading, "
                   f"delta = 1e-5) the exact epsilon of the releases up to T grows as {g}: every "
                   "release after expiry contains the leaf exactly and adds a partly fresh noise "
                   "sum, so the leakage grows without bound in T (about like sqrt(T)) but is "
                   "finite at every horizon (the laws are never mutually singular).")
        out.append("A single release can sum more than ceil(log2 W) + 1 noisy nodes when W is not "
                   "a power of two ('exact' layout, e.g. 6 for W = 14); this affects accuracy "
                   "only: a leaf still lies in at most floor(log2 W) + 1 noisy nodes.")
        if claim_id.endswith("gamma"):
            out.append("Gamma nodes and T > W: the smallest composition of shifted node noises "
                       "that maps one world's release onto the other's is an upper value for the "
                       "pair (exact_upper; a linear programme, also where the inclusive reading "
                       "puts the leaf in an exact sum); the exact pure epsilon is certified only "
                       "where the releases are in bijection with the nodes (T <= W, or W = 1) and "
                       "at the inclusive boundary for W a power of two; elsewhere the empirical "
                       "bound is the evidence.")
    if claim_id.startswith("pfcoco/wdp-"):
        out.append("Sensitivity: the paper calibrates to L + mu D, but a replaced L-Lipschitz, "
                   "mu-strongly convex loss moves the tree input by up to 2L - mu D (one "
                   "dimension, exactly; realised by the audited pair at every point of C) and at "
                   "most 2L: the calibration falls short whenever L > 2 mu D. The accountant "
                   "uses 2L (guaranteed by clipping to L).")
        out.append(_learner_expiry_finding(claim_id.endswith("gaussian")))
    if claim_id.startswith("pfcoco/wdp-cocol"):
        out.append("WDP-COCOL releases convex combinations of LLOO outputs (piecewise constant in "
                   "the noisy sums), so only the noisy sums' epsilon is an upper value for the "
                   "release; its empirical bounds use the engine's learned linear statistic and "
                   "have little power. A holds verdict would rest on the accountant.")
    return out


def mark_accountant_basis(claim_id: str, outcome: Any) -> Any:
    """The claim's lemma outcome with the record its accountant rests on marked.

    For a claim of :data:`~dpaudit.papers.pfcoco.claims.ACCOUNTANT_BASIS`, the LemmaCheck whose
    statement is the basis's ``proved_statement`` gets ``details["accountant_basis"]`` (the basis
    entry: proved statement, method, sensitivity, and the refuted paper lemma it replaces), and a
    finding says so; every other check is unchanged. A claim's verdict rule can then tell "the
    accountant rests on a lemma dpaudit proved" from "the accountant rests on the refuted lemma".
    When that check holds by an SMT proof, the refuted lemma's checks that do not hold get a
    ``proof_gap`` naming the proved sensitivity.

    Parameters
    ----------
    claim_id, outcome
        A pfcoco claim id; its :class:`~dpaudit.claims.evidence.LemmaOutcome`.

    Returns
    -------
    LemmaOutcome
        ``outcome`` itself when the claim has no basis or no check states it, else a new one.
    """
    basis = ACCOUNTANT_BASIS.get(claim_id)
    if basis is None:
        return outcome
    checks, found = [], None
    for c in outcome.checks:
        if c.statement == basis["proved_statement"]:
            c = replace(c, details={**dict(c.details or {}), "accountant_basis": dict(basis)})
            found = c
        checks.append(c)
    if found is None:
        return outcome
    if found.status == "holds" and found.method == "smt-proved":
        # The paper's lemma may fail: the accountant does not rest on it (verdict rule: a proof
        # gap, which leaves "holds" possible and is stated in the reason).
        gap = (f"the per-node sensitivity {basis['sensitivity']} of the clipped gradients, which "
               f"dpaudit proved ({basis['method'].split(':')[0]}; lemma table)")
        checks = [replace(c, proof_gap=gap)
                  if c.statement.startswith(basis["refuted_statement"]) and c.status != "holds"
                  else c for c in checks]
    text = (f"Accountant basis: the accountant is computed at the per-node sensitivity "
            f"{basis['sensitivity']} ({basis['proved_statement']}: {found.status}, "
            f"{basis['method']}), not at the paper's lemma '{basis['refuted_statement']}'. "
            f"Where the accountant is at or below the claim everywhere and no pair refutes it, "
            f"the theorem's number survives while its proof's lemma fails: a proof gap.")
    return type(outcome)(tuple(checks), outcome.sensitivity_trace,
                         tuple(outcome.findings) + (text,), outcome.not_checked)


@dataclass(frozen=True)
class PfcocoDeclaration(Declaration):
    """One pfcoco claim, by id, as a :class:`~dpaudit.claims.declaration.Declaration`."""

    claim_id: str

    @property
    def claim(self) -> PrivacyClaim:
        """The claim of ``claim_id`` (:data:`CLAIMS`)."""
        return CLAIMS[self.claim_id]

    def grid(self, ctx: AuditContext) -> list[dict[str, Any]]:
        """:func:`grid` under ``ctx.budget``.

        Parameters
        ----------
        ctx
            The driver's audit context.
        """
        return grid(self.claim_id, ctx.budget)

    def tested_points(self, budget: Budget) -> int:
        """Empirical tests by budget name (:data:`TESTS`: 3, 6, 10; 6 for another name).

        Parameters
        ----------
        budget
            The audit budget.
        """
        return TESTS.get(budget.name, 6)

    def plan(self, params: Mapping[str, Any], ctx: AuditContext) -> PointPlan | Skip:
        """:func:`plan` at ``params``.

        Parameters
        ----------
        params, ctx
            The parameter point; the driver's audit context (not used).
        """
        return plan(self.claim_id, params)

    def lemmas(self, ctx: AuditContext, parameters: Any) -> LemmaOutcome:
        """:func:`lemmas`, then the SMT records, then :func:`mark_accountant_basis`.

        Parameters
        ----------
        ctx, parameters
            The context (budget's examples, seed ``seed_for(claim_id, "lemmas") mod 2^32``);
            the audited points (not used).
        """
        seed = ctx.seed_for(self.claim_id, "lemmas") % (2 ** 32)
        checks = lemmas(self.claim_id, ctx.budget.sensitivity_examples, seed)
        return mark_accountant_basis(self.claim_id,
                                     smt_evidence(self.claim_id, ctx, LemmaOutcome(tuple(checks))))

    def findings(self, run: ClaimRun) -> list[str]:
        """:func:`findings` of the run.

        Parameters
        ----------
        run
            The driver's finished run.
        """
        return findings(self.claim_id, run)


DECLARATIONS = {cid: PfcocoDeclaration(cid) for cid in CLAIMS}


def _register() -> None:
    from dpaudit.claims.registry import register

    for cid, decl in DECLARATIONS.items():
        register(decl.claim, decl, kind="mechanism" if cid in _MECHANISM_CLAIMS else "learner")


_register()
