"""Mutation testing of the lines a verdict rests on: ``make mutants``.

Each mutant is one named source edit (an exact, unique substring of one file replaced by another).
For each mutant the script copies ``src/`` to a temporary directory, applies the edit there (the
worktree is never modified), and runs a fast selection of the *default* suite's test files against
the copy (``PYTHONPATH`` points at the copy; ``-m "not slow"``; the golden test is never
selected: it would kill every mutant by construction, since it compares with the code's own
earlier output). A mutant is *killed* when that run fails. Every killing test is in the default
suite, so ``make test`` kills every mutant listed here too.

Why no maintained tool: mutmut and cosmic-ray mutate every line (thousands of mutants, hours on
two cores) and neither is in the pinned environment; the named edits below target the lines a
verdict rests on, and adding one is one line.

Usage: ``python scripts/mutants.py [--list] [--only NAME ...] [--baseline]``; exit status 1 when a
mutant survives (or, with ``--baseline``, when the unmutated selection fails).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PKG = "src/dpaudit"


@dataclass(frozen=True)
class Mutant:
    name: str
    file: str  # relative to src/dpaudit
    old: str
    new: str
    tests: tuple[str, ...]  # test files (or node ids) of the default suite expected to kill it
    why: str = ""


EXPECTED = "tests/test_expected_verdicts.py"
BOUNDARY = "tests/test_alpha_and_verdict_boundary.py"
POWER = "tests/test_null_power.py"
READINGS = "tests/test_readings_and_proof_gaps.py"
AFKT23_EXPECTED = "tests/test_expected_verdicts_afkt23.py"
AFKT23_ALG1 = "tests/test_afkt23_alg1_bound.py"
AFKT23_ALG2 = "tests/test_afkt23_alg2_counterexample.py"
AFKT23_ALG5 = "tests/test_afkt23_alg5_bound.py"
AFKT23_AUDITS = "tests/test_afkt23_audits.py"
JKT12_EXPECTED = "tests/test_expected_verdicts_jkt12.py"
CONFIDENCE = "tests/test_confidence.py"
SEQUENTIAL = "tests/test_sequential.py"
ENGINE = "tests/test_empirical_audit.py"
JKT12_PIGD_WORST = ("tests/test_jkt12_audits.py::"
                    "test_colt_pigd_worst_point_is_decided_by_the_tight_accountant")
JKT12_C_ZERO = "tests/test_expected_verdicts_jkt12.py::test_jkt12_colt_c_zero_boundary"
ST13_BANDIT_EMPIRICAL = "tests/test_expected_verdicts.py::test_st13_bandit_empirical_refutation"
NOISE_LAWS = "tests/test_noise_and_exact_laws.py"
GREYBOX = "tests/test_greybox.py"
GREYBOX_DPFTRL = "tests/test_greybox_dpftrl.py"
LAW_COMPONENTS = "tests/test_law_components.py"
HOSTILE = "tests/test_hostile_releases.py"
LAW_SHAPE = "tests/test_law_shape.py"

MUTANTS: tuple[Mutant, ...] = (
    # -- the claim driver and the verdict rule --------------------------------------------------
    Mutant("bonferroni-dropped", "claims/driver.py",
           "a_test = ctx.alpha / n_tests if n_tests else ctx.alpha", "a_test = ctx.alpha",
           (BOUNDARY,), "every test at the family alpha: the joint guarantee is lost"),
    Mutant("verdict-lower-bound-tolerance-1e-3", "evidence.py",
           "if self.epsilon_lower_bound is not None and self.epsilon_lower_bound > c:",
           "if self.epsilon_lower_bound is not None and self.epsilon_lower_bound > c * (1 + 1e-3):",
           (BOUNDARY,)),
    Mutant("verdict-exact-tolerance-1e-3", "evidence.py",
           "EXACT_TOLERANCE = 1e-6", "EXACT_TOLERANCE = 1e-3", (BOUNDARY,)),
    Mutant("verdict-accountant-tolerance-1e-3", "claims/verdict.py",
           "and p.epsilon_accountant > p.claimed_epsilon * (1 + EXACT_TOLERANCE)]",
           "and p.epsilon_accountant > p.claimed_epsilon * (1 + 1e-3)]", (BOUNDARY,)),
    # -- interval levels and the held-out split -------------------------------------------------
    Mutant("clopper-pearson-lower-two-sided", "blackbox/confidence.py",
           "lo = special.betaincinv(np.maximum(k, 1.0), n - k + 1.0, alpha)",
           "lo = special.betaincinv(np.maximum(k, 1.0), n - k + 1.0, 2 * alpha)",
           ("tests/test_confidence.py",)),
    Mutant("clopper-pearson-upper-two-sided", "blackbox/confidence.py",
           "hi = special.betaincinv(k + 1.0, np.maximum(n - k, 1.0), 1.0 - alpha)",
           "hi = special.betaincinv(k + 1.0, np.maximum(n - k, 1.0), 1.0 - 2 * alpha)",
           ("tests/test_confidence.py",)),
    Mutant("test-split-reuses-training-runs", "blackbox/counting.py",
           "first_chunk = s.seed_seq.n_children_spawned",
           "first_chunk = 0", (POWER,),
           "the event is counted on the runs it was chosen on (a train/test leak)"),
    # -- replace-one doublings and accountant sensitivities, every paper ------------------------
    Mutant("afkt23-dp-ftrl-pair-shift-halved", "papers/afkt23/mechanism_plans.py",
           "mu_pair = 2.0 * p.L * math.sqrt(used) / p.sigma",
           "mu_pair = 1.0 * p.L * math.sqrt(used) / p.sigma", (EXPECTED,)),
    Mutant("afkt23-dp-ftrl-accountant-halved", "papers/afkt23/exact.py",
           "mu = 2.0 * params.L * math.sqrt(params.nodes_per_leaf) / params.sigma",
           "mu = 1.0 * params.L * math.sqrt(params.nodes_per_leaf) / params.sigma", (EXPECTED,)),
    Mutant("st13-tree-doubling-halved", "papers/st13/plans.py",
           "exact=pair_epsilon(count, 2 * mu, s), accountant=accountant_epsilon(count, 2 * mu, s),",
           "exact=pair_epsilon(count, mu, s), accountant=accountant_epsilon(count, mu, s),",
           (EXPECTED,)),
    Mutant("st13-tree-accountant-halved", "papers/st13/plans.py",
           "accountant=accountant_epsilon(count, 2 * mu, s),",
           "accountant=accountant_epsilon(count, mu, s),", (EXPECTED,)),
    Mutant("st13-pftal-accountant-halved", "papers/st13/plans.py",
           "worst_count, sens = max_nodes_per_leaf(T - 1), 2 * min(L, mu)",
           "worst_count, sens = max_nodes_per_leaf(T - 1), min(L, mu)", (EXPECTED,)),
    Mutant("st13-bandit-accountant-halved", "papers/st13/plans.py",
           'sens = 2 * min(mu, d * prm["B"] / beta)', 'sens = 1 * min(mu, d * prm["B"] / beta)',
           (EXPECTED,)),
    Mutant("pfcoco-gamma-accountant-halved", "papers/pfcoco/plans.py",
           "acc = _laplace_accountant(W, horizon, i, 2 * L, noise.scale, k)",
           "acc = _laplace_accountant(W, horizon, i, 1 * L, noise.scale, k)", (EXPECTED,)),
    Mutant("pfcoco-gaussian-accountant-halved", "papers/pfcoco/plans.py",
           "mu_acc = max(ex.gaussian_release_mu(W, horizon, j, 2 * L, noise.scale)",
           "mu_acc = max(ex.gaussian_release_mu(W, horizon, j, 1 * L, noise.scale)", (EXPECTED,)),
    Mutant("jkt12-privatesum-doubling-halved", "papers/jkt12/plans.py",
           "mu = tree_mu(T, 2.0 * R, sigma)", "mu = tree_mu(T, 1.0 * R, sigma)", (EXPECTED,)),
    # -- afkt23: the accountants' pieces, the draws counted, the certified values --------------
    Mutant("afkt23-alg1-svt-cost-eps-over-2", "papers/afkt23/exact.py",
           "return float(svt_epsilon) / 2.0", "return float(svt_epsilon)", (AFKT23_ALG1,),
           "Algorithm 1's sparse vector charged eps/2 instead of the proved eps/4: holds -> "
           "inconclusive"),
    Mutant("afkt23-alg1-draw-cost-halved", "papers/afkt23/exact.py",
           "pieces = [first] + [params.eta] * max_selections(params.T, params.selections)",
           "pieces = [first] + [0.5 * params.eta] * max_selections(params.T, params.selections)",
           (AFKT23_ALG1,)),
    Mutant("afkt23-alg1-approx-composition-ignores-delta", "papers/afkt23/exact.py",
           "[params.eta] * max_selections(params.T, params.selections)\n"
           "    return pure_composition_epsilon(pieces, delta)",
           "[params.eta] * max_selections(params.T, params.selections)\n"
           "    return pure_composition_epsilon(pieces, 0.0)",
           (AFKT23_EXPECTED,), "alg1-approx's accountant is the basic (pure) sum"),
    Mutant("afkt23-alg1-draws-floor-K", "learners/sparse_vector_experts.py",
           "return int(math.ceil(K - 1e-12))", "return int(math.floor(K + 1e-12))",
           (AFKT23_ALG1,), "the loop 'k < K' counted as floor(K) draws, not ceil(K)"),
    Mutant("afkt23-max-selections-ignores-T", "papers/afkt23/exact.py",
           "return min(cap, T // 2)", "return cap", (AFKT23_AUDITS,),
           "draws counted up to the loop cap even where T/2 rounds allow fewer"),
    Mutant("afkt23-net-oco-net-spacing-doubled", "learners/net_oco.py",
           "h = 2.0 * rho / math.sqrt(d)", "h = 4.0 * rho / math.sqrt(d)", (AFKT23_EXPECTED,),
           "a 129-point net instead of 257: K and the draws shrink"),
    Mutant("afkt23-net-oco-K-floor-log-d", "learners/sparse_vector_experts.py",
           "return int(math.ceil(log_of(d, base) - 1e-12)) if d > 1 else 0",
           "return int(math.floor(log_of(d, base) + 1e-12)) if d > 1 else 0", (AFKT23_EXPECTED,),
           "K = 6 floor(log2 M) + ...: net-oco's 257 experts counted as 2^8"),
    Mutant("afkt23-alg2-certified-counts-early-passes", "papers/afkt23/exact.py",
           "certified=tail / b", "certified=N / b", (AFKT23_ALG2,),
           "the passes before Lbar* >= margin + 1 (ratio only >= 1) counted as e^(1/b) each"),
    Mutant("afkt23-alg2-capped-restarts-ignored", "papers/afkt23/exact.py",
           "params.selections * params.max_applications", "params.selections",
           (AFKT23_EXPECTED,), "the capped accountant counts one application's draws"),
    Mutant("afkt23-alg2-laplace-count-not-charged", "papers/afkt23/exact.py",
           "draws * (params.eta + params.epsilon0 / params.K)", "draws * params.eta",
           (AFKT23_EXPECTED,)),
    Mutant("afkt23-alg5-later-phase-cost-1", "papers/afkt23/exact.py",
           "ALG5_PHASE_COST_FIRST, ALG5_PHASE_COST_LATER = 1.0, 1.5",
           "ALG5_PHASE_COST_FIRST, ALG5_PHASE_COST_LATER = 1.0, 1.0", (AFKT23_ALG5,)),
    Mutant("afkt23-alg5-first-phase-cost-half", "papers/afkt23/exact.py",
           "ALG5_PHASE_COST_FIRST, ALG5_PHASE_COST_LATER = 1.0, 1.5",
           "ALG5_PHASE_COST_FIRST, ALG5_PHASE_COST_LATER = 0.5, 1.5", (AFKT23_ALG5,)),
    Mutant("afkt23-alg5-draw-cost-eta", "papers/afkt23/exact.py",
           "pieces = svt + [2.0 * params.eta]", "pieces = svt + [1.0 * params.eta]",
           (AFKT23_ALG5,), "the draw exp(-eta s) charged eta, not 2 eta, under replacement"),
    Mutant("afkt23-binary-tree-scale-log2T", "papers/afkt23/mechanism_plans.py",
           "b = h / eps", "b = max(h - 1, 1) / eps", (EXPECTED,),
           "node noise for floor(log2 T) nodes while a leaf lies in floor(log2 T) + 1"),
    Mutant("svt-query-noise-halved", "mechanisms/sparse_vector.py",
           "return sigma, 2.0 * sigma", "return sigma, sigma", (EXPECTED,),
           "above-threshold's query noise Lap(2/eps) instead of Lap(4/eps)"),
    Mutant("svt-threshold-noise-halved", "mechanisms/sparse_vector.py",
           "sigma = 2.0 * c * sensitivity / epsilon", "sigma = 1.0 * c * sensitivity / epsilon",
           (EXPECTED,)),
    # -- pfcoco: node counts, the window boundary, pair shifts, printed formulas ---------------
    Mutant("pfcoco-standard-tree-true-node-count", "papers/pfcoco/plans.py",
           "noise = NodeNoise.l2_laplace(Delta * math.log2(T) / eps)",
           "noise = NodeNoise.l2_laplace(Delta * (math.log2(T) + 1) / eps)", (EXPECTED,),
           "the printed log2 T nodes replaced by the true log2 T + 1: violated -> holds"),
    Mutant("pfcoco-standard-tree-accountant-count", "papers/pfcoco/plans.py",
           "k = T.bit_length()\n    acc =", "k = max(T.bit_length() - 1, 1)\n    acc =",
           (EXPECTED,)),
    Mutant("pfcoco-inclusive-boundary-read-as-strict", "claims/model.py",
           "first = T - W + 1 if self.boundary is WindowBoundary.STRICT else T - W",
           "first = T - W + 1", (EXPECTED,),
           "the inclusive reading protects only the last W entries (T - i < W)"),
    Mutant("pfcoco-window-nodes-per-leaf-one-short", "mechanisms/window_tree.py",
           "return min(w, T).bit_length()", "return max(min(w, T).bit_length() - 1, 1)",
           (EXPECTED,), "the window tree's accountant counts log2 W nodes per leaf, not log2 W + 1"),
    Mutant("pfcoco-wdp-pair-shift-halved", "papers/pfcoco/pairs.py",
           "return LearnerPair(tuple(s0), tuple(s1), i, 2.0 * a, L, mu)",
           "return LearnerPair(tuple(s0), tuple(s1), i, 1.0 * a, L, mu)", (EXPECTED,),
           "the learner pair's gradient gap 2L - mu D halved: wdp-cocop-gamma violated -> holds"),
    Mutant("pfcoco-gaussian-window-sigma-levels-not-squared", "mechanisms/window_tree.py",
           "_levels(W) ** 2", "_levels(W)", (EXPECTED,),
           "eq. (13)'s (ceil(log2 W) + 1)^2 read without the square"),
    Mutant("pfcoco-prop-a6-drops-factor-2", "papers/pfcoco/plans.py",
           "claimed = math.sqrt(2 * k * math.log(1 / d2)) * eps",
           "claimed = math.sqrt(k * math.log(1 / d2)) * eps", (EXPECTED,),
           "advanced composition's sqrt(2 k ln(1/delta)) without the 2: holds -> violated"),
    Mutant("pfcoco-boundary-primary-inclusive", "papers/pfcoco/claims.py",
           '"boundary", "strict",', '"boundary", "inclusive",', (EXPECTED,),
           "the window claims' verdict rests on the inclusive reading"),
    # -- the claim machinery: primary reading, proof gaps, inversions ---------------------------
    Mutant("primary-points-first-other-reading", "claims/record.py",
           "key = self._primary_key()\n        return",
           "key = next((self._reading_key(p) for p in self.points if self._reading_key(p) != "
           "self._primary_key()), self._primary_key())\n        return", (READINGS,),
           "the claim's verdict taken from the first non-primary reading's points"),
    Mutant("reading-primary-flag-inverted", "claims/record.py",
           "primary = key == self._primary_key()", "primary = key != self._primary_key()",
           (READINGS,)),
    Mutant("proof-gap-blocks-holds", "claims/verdict.py",
           "bad_lemmas = [lem for lem in failed if not lem.proof_gap]", "bad_lemmas = failed",
           (READINGS,), "a false lemma the accountant does not use still blocks 'holds'"),
    Mutant("false-lemma-never-blocks-holds", "claims/verdict.py",
           "bad_lemmas = [lem for lem in failed if not lem.proof_gap]", "bad_lemmas = []",
           (READINGS,), "a false lemma the accountant rests on no longer blocks 'holds'"),
    Mutant("inversion-rule-dropped", "claims/verdict.py",
           "inverted = [p for p in points if p.accountant_below_exact()]", "inverted = []",
           (READINGS,), "an accountant below a realisable pair's exact epsilon certifies 'holds'"),
    Mutant("afkt23-alg2-primary-capped", "papers/afkt23/claims.py",
           'ALG2.id: ("cap", "none",', 'ALG2.id: ("cap", "log2 T",', (AFKT23_EXPECTED,),
           "alg2's verdict rests on the proof's cap, not the printed uncapped loop"),
    Mutant("afkt23-alg1-primary-integer", "papers/afkt23/claims.py",
           'ALG1_PURE.id: ("k_reading", "printed",', 'ALG1_PURE.id: ("k_reading", "integer",',
           (AFKT23_EXPECTED,), "both readings hold: only the primary-name check sees it"),
    Mutant("afkt23-dp-ftrl-primary-L", "papers/afkt23/claims.py",
           '"reading", "2L", PRIMARY_READINGS[DP_FTRL.id][2],',
           '"reading", "L", PRIMARY_READINGS[DP_FTRL.id][2],', (AFKT23_EXPECTED,)),
    Mutant("afkt23-alg5-instances-floor-T", "papers/afkt23/exact.py",
           "instances = min(params.selections, (params.T + 1) // 2)",
           "instances = min(params.selections, params.T // 2)", (AFKT23_ALG5,),
           "a later phase lost at odd T (every grid point has even T)"),
    Mutant("pfcoco-window-tree-inclusive-horizon-dropped", "papers/pfcoco/plans.py",
           "TT = T if b == \"strict\" or T > W else W + 1  # inclusive: its own last horizon",
           "TT = T  # inclusive: its own last horizon", (EXPECTED,),
           "the inclusive reading is no longer audited at T = W + 1, where it bites most"),
    # -- jkt12: the printed calibrations (c, beta, sigma, lambda), pair shifts, accountants -------
    Mutant("jkt12-colt-c-drops-eps", "learners/pocp.py",
           "inner = math.log(2.0 / delta) / (2.0 * epsilon if version == \"colt\" else 2.0)",
           "inner = math.log(2.0 / delta) / 2.0", (JKT12_EXPECTED,),
           "COLT's c = ln((1/(2 eps)) ln(2/delta)) / (2 ln T) read as arXiv's (no 1/eps)"),
    Mutant("jkt12-arxiv-c-gains-eps", "learners/pocp.py",
           "inner = math.log(2.0 / delta) / (2.0 * epsilon if version == \"colt\" else 2.0)",
           "inner = math.log(2.0 / delta) / (2.0 * epsilon)", (JKT12_EXPECTED,),
           "arXiv's c read with COLT's 1/eps"),
    Mutant("jkt12-pocp-beta-2-over-eps-halved", "learners/pocp.py",
           "math.sqrt((2.0 / epsilon)", "math.sqrt((1.0 / epsilon)", (JKT12_EXPECTED,),
           "beta's sqrt((2/eps)(...)) without the 2: less noise, every Gaussian claim's numbers"),
    Mutant("jkt12-arxiv-lambda-gains-1-over-alpha", "learners/pocp.py",
           "return 2.0 * bound / alpha if version == \"colt\" else 2.0 * bound",
           "return 2.0 * bound / alpha", (JKT12_EXPECTED,),
           "arXiv PIGD/PGIGA's printed lambda 2L (2G) read as COLT's 2L/alpha: at alpha = 0.01 "
           "100 times the noise, violated -> holds"),
    Mutant("jkt12-colt-lambda-drops-1-over-alpha", "learners/pocp.py",
           "return 2.0 * bound / alpha if version == \"colt\" else 2.0 * bound",
           "return 2.0 * bound", (JKT12_PIGD_WORST,),
           "COLT PIGD/PGIGA's lambda 2L/alpha read as arXiv's 2L (every named point of the "
           "expected-verdict tables has alpha = 1, where the two agree)"),
    Mutant("jkt12-colt-c-zero-boundary-doubled", "papers/jkt12/exact.py",
           "return 0.5 * math.log(2.0 / delta)", "return math.log(2.0 / delta)",
           (JKT12_C_ZERO,),
           "the proof's regime c >= 0 (eps <= (1/2) ln(2/delta)) bounded at ln(2/delta): the "
           "verdict restricted to the regime is taken at a c < 0 point"),
    Mutant("jkt12-qftl-lambda-drops-R4-term", "papers/jkt12/pairs.py",
           "return 2.0 * R * R / alpha * (1.0 + R * R / (2.0 * alpha))",
           "return 2.0 * R * R / alpha", (JKT12_EXPECTED,),
           "POCP's lambda_A without the R^4/alpha^2 of the V-term: the accountant no longer bounds "
           "QFTL"),
    Mutant("jkt12-claim-delta-not-doubled", "papers/jkt12/claims.py",
           "return 3.0 * epsilon, 2.0 * delta", "return 3.0 * epsilon, delta", (JKT12_EXPECTED,),
           "Theorems 1, 7, 9 promise (3 eps, 2 delta), audited at delta"),
    Mutant("jkt12-pigd-implicit-step-eta-t-plus-1", "learners/igd.py",
           "return 1.0 / (self.alpha * t)", "return 1.0 / (self.alpha * (t + 1))",
           (JKT12_EXPECTED,),
           "IGD's eta_t = 1/(alpha t) off by one round: the PIGD/POL pairs' shift"),
    Mutant("jkt12-pigd-accountant-step-2L-over-alpha-t-plus-1", "papers/jkt12/exact.py",
           "mus = 2.0 * L * (taus + 1.0) / (alpha * (taus + 2.0) * beta)",
           "mus = 2.0 * L * (taus + 1.0) / (alpha * (taus + 1.0) * beta)", (JKT12_EXPECTED,),
           "PIGD's worst-case step 2L/(alpha (tau+2)) loosened to 2L/(alpha (tau+1))"),
    Mutant("jkt12-pgiga-gradient-step-eta-halved", "learners/giga.py",
           "return 2.0 / (self.alpha * t)", "return 1.0 / (self.alpha * t)", (JKT12_EXPECTED,),
           "GIGA's eta_t = 2/(alpha t) halved: the PGIGA pair's x_{tau+1} = +-D moves half as far"),
    Mutant("jkt12-pgiga-accountant-2G", "papers/jkt12/exact.py",
           "mus = 4.0 * G * (taus - 1.0) / (alpha * beta)",
           "mus = 2.0 * G * (taus - 1.0) / (alpha * beta)", (JKT12_EXPECTED,),
           "PGIGA's replaced gradient moves x_{tau+1} by eta 2G = 4G/(alpha tau), charged "
           "2G/(alpha tau)"),
    Mutant("jkt12-pgiga-pair-box-halved", "papers/jkt12/plans.py",
           "D = 2.0 * Gd / (alpha * tau + 2.0 * (alpha + nu * nu) * math.sqrt(d))",
           "D = 1.0 * Gd / (alpha * tau + 2.0 * (alpha + nu * nu) * math.sqrt(d))",
           (JKT12_EXPECTED,),
           "the PGIGA pair's box (and gradient gap) half of what the class allows"),
    Mutant("jkt12-pqftl-u-tree-bound-R-squared", "learners/pqftl.py",
           "sigma_u = private_sum_sigma(version, T, R, epsilon / 2.0, delta / 2.0, log_reading)",
           "sigma_u = private_sum_sigma(version, T, R * R, epsilon / 2.0, delta / 2.0, "
           "log_reading)", (JKT12_EXPECTED,),
           "Algorithm 4 line 8 passes R (not the true bound R^2 on ||y v||): the printed noise "
           "silently fixed"),
    Mutant("jkt12-pqftl-flip-shift-R-squared", "papers/jkt12/exact.py",
           "flip = math.sqrt(n) * 2.0 * R * R / su", "flip = math.sqrt(n) * R * R / su",
           (JKT12_EXPECTED,), "the label flip moves each u-node by 2R^2, counted as R^2"),
    Mutant("jkt12-pqftl-accountant-u-shift-halved", "papers/jkt12/exact.py",
           "worst = math.sqrt(n) * math.hypot(2.0 * R * R / su, dV / sV)",
           "worst = math.sqrt(n) * math.hypot(R * R / su, dV / sV)", (JKT12_EXPECTED,)),
    Mutant("jkt12-pqftl-node-count-horizon-T", "papers/jkt12/exact.py",
           "n = released_node_count(1, T - 1)", "n = released_node_count(1, T)", (JKT12_EXPECTED,),
           "x^_2..x^_T read the prefixes t <= T - 1 (6 nodes at T = 64), counted up to T (7)"),
    Mutant("jkt12-privatesum-node-count-log2T", "papers/jkt12/exact.py",
           "return shift * math.sqrt(released_node_count(1, horizon)) / sigma",
           "return shift * math.sqrt(max(released_node_count(1, horizon) - 1, 1)) / sigma",
           (EXPECTED,), "w_1 in floor(log2 T) released nodes instead of floor(log2 T) + 1"),
    Mutant("jkt12-privatesum-arxiv-sigma-eps-squared", "mechanisms/private_sum.py",
           "eps_term = epsilon ** 2 if version == \"colt\" else epsilon",
           "eps_term = epsilon ** 2", (EXPECTED,),
           "arXiv's sigma^2 ~ 1/eps read as COLT's 1/eps^2"),
    Mutant("jkt12-privatesum-tree-log-natural", "mechanisms/private_sum.py",
           "log_T = math.log2(T) if log_reading == \"tree\" else math.log(T)",
           "log_T = math.log(T)", (EXPECTED,), "the 'tree' reading's log2 T read as ln T"),
    Mutant("jkt12-pol-beta-drops-sqrt2", "learners/pol.py",
           "return (2.0 * math.sqrt(2.0) * lp * math.log(T) / (T * epsilon_p)",
           "return (2.0 * lp * math.log(T) / (T * epsilon_p)", (JKT12_EXPECTED,)),
    Mutant("jkt12-pol-average-over-T-minus-1", "papers/jkt12/plans.py",
           "means.append(np.array([xt.sum() / T]))",
           "means.append(np.array([xt.sum() / (T - 1)]))",
           (JKT12_EXPECTED,), "x~ = (x_1 + ... + x_T)/T averaged over T - 1: the pair's shift"),
    Mutant("jkt12-pol-accountant-L-prime-is-L", "papers/jkt12/plans.py",
           "lp = L + alpha * xs\n", "lp = L\n", (JKT12_EXPECTED,),
           "the worst case with L instead of L' = L + alpha ||x*|| (the ridge's gradient)"),
    Mutant("jkt12-doubling-epoch-budget-halved", "learners/pocp_doubling.py",
           "return lam * math.sqrt(2.0 * p / epsilon *", "return lam * math.sqrt(p / epsilon *",
           (JKT12_EXPECTED,), "beta_t's 2^{k+1}/eps read as 2^k/eps: each epoch's noise too small"),
    # -- st13: the tree's levels, the PFTAL pair, the bandit gradient estimate --------------------
    Mutant("st13-tree-levels-floor", "mechanisms/st13_tree_aggregation.py",
           "return (T - 1).bit_length() + 1", "return T.bit_length()", (EXPECTED,),
           "ceil(log2 T) + 1 levels read as floor(log2 T) + 1 (differs at T = 9)"),
    Mutant("st13-pftal-pair-ignores-strong-convexity", "papers/st13/pairs.py",
           "a = L - H * R\n", "a = L - 0.5 * H * R\n", (EXPECTED,),
           "the PFTAL pair's gradient gap 2(L - H R) computed as 2(L - H R / 2)"),
    Mutant("st13-bandit-estimate-drops-1-over-beta", "learners/bandit_ftal.py",
           "return mul_rows(u, (u.shape[1] / beta) * vals)",
           "return mul_rows(u, u.shape[1] * vals)",
           (ST13_BANDIT_EMPIRICAL,),
           "the one-point estimate (p/beta) f u without 1/beta: the tree inputs shrink, the pair "
           "no longer refutes the claim"),
    # -- the black-box engine: the bound, its alpha, the sequential test's level -----------------
    Mutant("eps-lower-bound-ignores-delta", "blackbox/confidence.py",
           "num = p - delta", "num = p", (CONFIDENCE,),
           "ln((p_lo - delta) / q_hi) without the delta: (eps, delta) claims refuted too easily"),
    Mutant("bonferroni-per-interval-alpha-at-event-level", "blackbox/confidence.py",
           "return -math.expm1(0.5 * math.log1p(-self.per_event_alpha))",
           "return self.per_event_alpha", (CONFIDENCE,),
           "each of an event's two intervals at alpha / m: the pair holds only at 1 - 2 alpha / m"),
    Mutant("bonferroni-per-event-ignores-m", "blackbox/confidence.py",
           "return self.alpha / self.m", "return self.alpha", (CONFIDENCE,)),
    Mutant("engine-bonferroni-over-test-events-dropped", "blackbox/empirical_audit.py",
           "bonf = Bonferroni(alpha, len(eps_events) or 1)", "bonf = Bonferroni(alpha)",
           (ENGINE + "::test_multiple_test_events_are_bonferroni_corrected",),
           "several test events each at the full alpha"),
    Mutant("engine-event-intervals-at-event-alpha", "blackbox/evaluation.py",
           "    a = bonf.per_interval_alpha\n    components = None",
           "    a = bonf.per_event_alpha\n    components = None",
           (ENGINE + "::test_reported_bound_is_recomputable_from_reported_counts",)),
    Mutant("engine-evaluate-ignores-delta", "blackbox/evaluation.py",
           "raw = float(log_ratio_lower_bound(p.lower, q.upper, delta))",
           "raw = float(log_ratio_lower_bound(p.lower, q.upper, 0.0))",
           (ENGINE + "::test_delta_false_alarm_rate_matches_exact_calculation",)),
    Mutant("sequential-bet-ignores-delta", "blackbox/sequential.py",
           "z = a - e * b - delta", "z = a - e * b", (SEQUENTIAL,),
           "the bet's mean is positive on an (eps, delta)-tight mechanism: false alarms"),
    Mutant("sequential-threshold-at-2-alpha", "blackbox/sequential.py",
           "threshold = math.log(1.0 / alpha)", "threshold = math.log(0.5 / alpha)",
           (SEQUENTIAL,),
           "wealth threshold 1/(2 alpha): level 2 alpha"),
    Mutant("st13-bandit-tree-bound-drops-p", "learners/bandit_ftal.py",
           "self._mu = (self.dim * self._B / self._beta", "self._mu = (self._B / self._beta",
           ("tests/test_expected_verdicts.py::test_st13_bandit_tree_bound_in_two_dimensions",),
           "the tree bound p B / beta read as B / beta: invisible at d = 1"),
    Mutant("st13-bandit-estimate-drops-p", "learners/bandit_ftal.py",
           "(u.shape[1] / beta) * vals", "(1.0 / beta) * vals",
           ("tests/test_st13_learners.py::"
            "test_one_point_gradient_is_p_over_beta_f_u_in_three_dimensions",),
           "the one-point estimate loses its factor p (biased by 1/p for d > 1)"),
    # -- the user-evidence layer: dpaudit.noise, dpaudit.exact ----------------------------------
    Mutant("noise-replace-one-factor-1", "formal/noise_schedules.py",
           'return 2.0 if value == "replace-one" else 1.0', "return 1.0", (NOISE_LAWS,),
           "replace-one no longer doubles a record's contribution"),
    Mutant("noise-gaussian-mu-drops-sqrt-releases", "formal/noise_schedules.py",
           "return math.sqrt(self.releases) * shift / self.sigma", "return shift / self.sigma",
           (NOISE_LAWS,)),
    Mutant("noise-tree-depth-off-by-one", "formal/noise_schedules.py",
           "depth, leaves = 1, 1", "depth, leaves = 0, 1", (NOISE_LAWS,)),
    Mutant("noise-laplace-pure-drops-releases", "formal/noise_schedules.py",
           "            return self.releases * eps0", "            return eps0", (NOISE_LAWS,)),
    Mutant("exact-linear-gaussian-isotropic-sigma-squared", "formal/exact_laws.py",
           "return float(np.linalg.norm(shift) / self.sigma)",
           "return float(np.linalg.norm(shift) / self.sigma ** 2)", (NOISE_LAWS,)),
    Mutant("exact-linear-gaussian-covariance-not-inverted", "formal/exact_laws.py",
           "coef[~null] ** 2 / w[~null]", "coef[~null] ** 2 * w[~null]", (NOISE_LAWS,)),
    Mutant("exact-linear-gaussian-null-space-ignored", "formal/exact_laws.py",
           "return math.inf  # part of the shift sees no noise", "pass  #", (NOISE_LAWS,)),
    Mutant("exact-product-laplace-scale-ignored", "formal/exact_laws.py",
           "ratios = shift / b", "ratios = shift", (NOISE_LAWS,)),
    Mutant("exact-product-laplace-certified-is-the-upper-end", "formal/exact_laws.py",
           "return ExactValue(min(lower, upper), CERTIFIED, upper,",
           "return ExactValue(upper, CERTIFIED, upper,", (NOISE_LAWS,),
           "the certified lower end of the bracket replaced by its upper end"),
    Mutant("exact-discrete-hockey-stick-one-order", "formal/exact_laws.py",
           "return float(max(np.maximum(a - e * b, 0).sum(), np.maximum(b - e * a, 0).sum()))",
           "return float(np.maximum(a - e * b, 0).sum())", (NOISE_LAWS,)),
    Mutant("exact-discrete-pure-epsilon-one-sided", "formal/exact_laws.py",
           "eps = float(np.max(np.abs(np.log(a[m]) - np.log(b[m])))) if m.any() else 0.0",
           "eps = float(np.max(np.log(a[m]) - np.log(b[m]))) if m.any() else 0.0", (NOISE_LAWS,)),
    # -- grey-box evidence: replay, derived laws, declared-law tests, noise sites --------------
    Mutant("greybox-batched-impulses-shifted", "greybox/derivation.py",
           "batch = replay_runs(mechanism, data, seed, np.eye(k), draws, layout)",
           "batch = replay_runs(mechanism, data, seed, np.eye(k, k=1), draws, layout)",
           (GREYBOX,)),
    Mutant("greybox-single-impulse-shifted", "greybox/derivation.py",
           "            z[i - offset] = 1.0", "            z[(i + 1 - offset) % z.size] = 1.0",
           (GREYBOX,)),
    Mutant("greybox-affinity-check-skipped", "greybox/derivation.py",
           "np.abs(out - law.predict(Zj)[0]) <= law.tolerance(Zj)[0] + rtol * np.abs(out)):",
           "np.abs(out - law.predict(Zj)[0]) <= np.inf):",
           (GREYBOX,), "a clip after the noise would be read as a linear-Gaussian law"),
    Mutant("greybox-laplace-injectivity-ignored", "greybox/derivation.py",
           "if B.size and np.linalg.matrix_rank(B) < B.shape[1]:", "if False:", (GREYBOX,)),
    Mutant("greybox-data-dependent-noise-map-accepted", "greybox/derivation.py",
           "if law0.family != law1.family or law0.A.shape != law1.A.shape or not np.allclose(",
           "if law0.family != law1.family or law0.A.shape != law1.A.shape or np.allclose(",
           (GREYBOX,)),
    Mutant("greybox-declared-law-preferred-to-derived", "greybox/point_evidence.py",
           "chosen = best_derived or best_law or best_user",
           "chosen = best_law or best_derived or best_user", (GREYBOX_DPFTRL,),
           "the design doc's law would decide the add/remove bug instead of the code's"),
    Mutant("law-test-bonferroni-over-components-dropped", "greybox/law_tests.py",
           "return self.alpha / max(1, len(self.components))", "return self.alpha", (GREYBOX,)),
    Mutant("law-test-whitened-total-dof", "greybox/law_tests.py",
           "_two_sided(stats.chi2(n * r), total)", "_two_sided(stats.chi2(n), total)",
           (GREYBOX,)),
    Mutant("law-test-dkw-massart-constant", "greybox/law_tests.py",
           "2.0 * math.exp(-2.0 * k * dks * dks)", "2.0 * math.exp(-k * dks * dks)", (GREYBOX,)),
    # -- declared-law tests, one component at a time: each mutant takes one component's power
    #    away (its p-value forced to 1, the component skipped, or its statistic weakened) and is
    #    killed by that component's pin in tests/test_law_components.py or by the shape, p-value
    #    and power tests in tests/test_law_shape.py ------------------------------------------
    Mutant("law-test-mean-powerless", "greybox/law_tests.py",
           "float(stats.chi2(r).sf(n * float(xbar @ xbar)))", "1.0", (LAW_COMPONENTS,)),
    Mutant("law-test-whitened-total-powerless", "greybox/law_tests.py",
           "_two_sided(stats.chi2(n * r), total)", "1.0", (LAW_COMPONENTS,)),
    Mutant("law-test-direction-variance-powerless", "greybox/law_tests.py",
           "_two_sided(chi2_n, float(v @ v) / s2)", "1.0", (LAW_COMPONENTS,)),
    Mutant("law-test-coordinate-variance-powerless", "greybox/law_tests.py",
           "_two_sided(chi2_n, float(n * obs[j] / diag[j]))", "1.0", (LAW_COMPONENTS,)),
    Mutant("law-test-null-space-ignored", "greybox/law_tests.py",
           "if null.size and float(np.abs(null).max())", "if False and float(np.abs(null).max())",
           (LAW_COMPONENTS,)),
    Mutant("law-test-projection-shape-powerless", "greybox/law_tests.py",
           "_dkw_massart_p(n, d_proj)", "1.0", (LAW_COMPONENTS,),
           "Laplace noise declared as a Gaussian of its variance would pass again"),
    Mutant("law-test-projection-not-standardised", "greybox/law_tests.py",
           "special.ndtr(v / math.sqrt(s2))", "special.ndtr(v)", (LAW_SHAPE,),
           "the projection compared with N(0, 1) at its own scale: true laws rejected"),
    Mutant("law-test-pooled-shape-powerless", "greybox/law_tests.py",
           "_dkw_massart_p(W.size, d_pool)", "1.0", (LAW_COMPONENTS,)),
    Mutant("law-test-pooled-shape-dropped", "greybox/law_tests.py",
           "if r > 1 or (r and not projected):", "if False:", (LAW_COMPONENTS,)),
    Mutant("law-test-kolmogorov-one-sided", "greybox/law_tests.py",
           "return float(max(np.max(grid - u), np.max(u - (grid - 1.0 / k))))",
           "return float(np.max(grid - u))", (LAW_SHAPE,)),
    Mutant("law-test-shape-power-without-hoeffding", "greybox/law_tests.py",
           "+ math.sqrt(math.log(1.0 / (1.0 - POWER)) / (2.0 * runs)))", "+ 0.0)", (LAW_SHAPE,),
           "the power sentence would promise distances the test does not detect at 0.8"),
    Mutant("law-test-laplace-scale-powerless", "greybox/law_tests.py",
           "_two_sided(gamma_n, float(n * absmean[j]))", "1.0", (LAW_COMPONENTS,)),
    Mutant("law-test-laplace-distribution-powerless", "greybox/law_tests.py",
           "_dkw_massart_p(Y.size, dks)", "1.0", (LAW_COMPONENTS,)),
    Mutant("law-test-discrete-support-ignored", "greybox/law_tests.py",
           "outside = [k for k in counts if table.get(k, 0.0) <= 0.0]", "outside = []",
           (LAW_COMPONENTS,)),
    Mutant("law-test-discrete-probability-powerless", "greybox/law_tests.py",
           "float(stats.binomtest(c, n, prob).pvalue)", "1.0", (LAW_COMPONENTS,)),
    Mutant("law-test-non-finite-outputs-accepted", "greybox/law_tests.py",
           "    if bad.any():\n        return Component(",
           "    if False:\n        return Component(", (LAW_COMPONENTS,),
           "a NaN run would give NaN p-values, which never reject"),
    # -- end of the declared-law component block ------------------------------------------------
    Mutant("law-test-outside-the-family", "claims/driver.py",
           "n_tests = len(candidates) + len(followups) + len(law_tested)",
           "n_tests = len(candidates) + len(followups)", (GREYBOX,)),
    Mutant("rejected-law-keeps-its-exact-value", "claims/driver.py",
           "plan = drop_exact(plan, ev, \"the declared law was rejected by runs of the code\",\n"
           "                                  rejected_field=\"declared_exact_rejected\")",
           "plan = replace(plan, evidence=ev)", (GREYBOX,)),
    Mutant("noise-sites-rescaling-ignored", "greybox/noise_sites.py",
           "scale = float(np.abs(d.scale).max()) * f0", "scale = float(np.abs(d.scale).max())",
           (GREYBOX_DPFTRL,), "sigma * rng.standard_normal(...) read at scale 1"),
    Mutant("noise-sites-relation-factor-dropped", "claims/noise_site_check.py",
           "factor = distance_factor(user.neighbours)", "factor = 1.0", (GREYBOX_DPFTRL,)),
    # -- the code's runs confirm a derived law; the replay owns the release's randomness -------
    Mutant("verification-departures-ignored", "greybox/verification.py",
           "rows = np.flatnonzero(~ok.all(axis=1))", "rows = np.flatnonzero(ok.all(axis=1) & False)",
           (HOSTILE,), "a raw value on a rare branch of the noise would keep its derived law"),
    Mutant("verification-residual-not-split-over-inputs", "greybox/verification.py",
           "a = self.alpha / max(1, self.inputs)", "a = self.alpha", (HOSTILE,)),
    Mutant("verification-rejection-keeps-the-derived-exact", "claims/derived_law_check.py",
           "plan = (drop_exact(plan, ev, \"the law derived from the code departs from runs of \"\n"
           "                                \"the code\") if from_code else replace(plan, evidence=ev))",
           "plan = replace(plan, evidence=ev)", (HOSTILE,)),
    Mutant("verification-robust-check-skipped", "claims/derived_law_check.py",
           "if robust is not None and robust <= plan.claimed_epsilon:", "if False:", (HOSTILE,),
           "a derived excess smaller than the verification's residual would decide violated"),
    Mutant("verification-outside-the-family", "claims/driver.py",
           "+ len(law_tested) + len(verified)", "+ len(law_tested)", (HOSTILE,)),
    Mutant("guard-bits-unguarded", "greybox/replay.py",
           "        g._guard(f\"bit_generator.{name}\")\n", "", (HOSTILE,)),
    Mutant("guard-consumed-bits-unseen", "greybox/derivation.py",
           "return out, g, supply is not None and g.bits_state() != before",
           "return out, g, False", (HOSTILE,)),
    Mutant("guard-copy-not-replayed", "greybox/replay.py",
           "return self._child(_copied_bits(self), self._stream, self._cursor)",
           "return np.random.Generator(_copied_bits(self))", (HOSTILE,)),
    Mutant("guard-check-does-not-block", "claims/derived_law_check.py",
           "    return [LemmaCheck(GUARD_STATEMENT, \"violated\", counterexample={",
           "    return [LemmaCheck(GUARD_STATEMENT, \"holds\", counterexample={", (HOSTILE,)),
    Mutant("noise-transforms-unseen", "greybox/noise_transforms.py",
           "for index, name in g.transforms:", "for index, name in []:", (HOSTILE,),
           "noise clipped at 4 sigma would hold on its accountant"),
)


def apply(m: Mutant, src_root: Path) -> None:
    path = src_root / "dpaudit" / m.file
    text = path.read_text(encoding="utf-8")
    n = text.count(m.old)
    if n != 1:
        raise SystemExit(f"mutant {m.name}: expected exactly one occurrence of {m.old!r} in "
                         f"{m.file}, found {n} (the source moved: update the mutant)")
    path.write_text(text.replace(m.old, m.new), encoding="utf-8")


def run_tests(src_root: Path, tests: tuple[str, ...]) -> tuple[int, float, str]:
    env = dict(os.environ, PYTHONPATH=str(src_root), OPENBLAS_NUM_THREADS="1")
    cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-m", "not slow",
           "--ignore=tests/test_golden.py", *tests]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True,
                          check=False)
    out = proc.stdout.splitlines()
    # the killing test's node id (pytest's short summary) first, else the run's last summary line
    lines = ([ln for ln in out if ln.startswith(("FAILED", "ERROR"))]
             or [ln for ln in reversed(out) if "passed" in ln or "failed" in ln
                 or "error" in ln.lower()])
    return proc.returncode, time.perf_counter() - t0, (lines[0] if lines else "")


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--list", action="store_true", help="list the mutants and exit")
    ap.add_argument("--only", nargs="*", default=None, help="run only these mutants")
    ap.add_argument("--baseline", action="store_true",
                    help="first run every selection on the unmutated source (must pass)")
    args = ap.parse_args(argv)
    chosen = [m for m in MUTANTS if args.only is None or m.name in args.only]
    if args.list:
        for m in chosen:
            print(f"{m.name:40s} {m.file:32s} {' '.join(m.tests)}")
        return 0
    survivors = 0
    with tempfile.TemporaryDirectory(prefix="dpaudit-mutants-") as tmp:
        src_root = Path(tmp) / "src"
        if args.baseline:
            shutil.copytree(ROOT / "src", src_root)
            selection = tuple(sorted({t for m in chosen for t in m.tests}))
            rc, secs, line = run_tests(src_root, selection)
            print(f"baseline {'passes' if rc == 0 else 'FAILS'} ({secs:.0f} s): {line}")
            if rc != 0:
                return 1
            shutil.rmtree(src_root)
        for m in chosen:
            shutil.copytree(ROOT / "src", src_root)
            apply(m, src_root)
            rc, secs, line = run_tests(src_root, m.tests)
            shutil.rmtree(src_root)
            status = "killed" if rc != 0 else "SURVIVED"
            survivors += rc == 0
            print(f"{m.name:40s} {status:8s} {secs:5.0f} s  {line}", flush=True)
    print(f"{len(chosen) - survivors} of {len(chosen)} mutants killed")
    return 1 if survivors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
