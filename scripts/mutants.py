"""Mutation testing of the lines a verdict rests on (issue 28): ``make mutants``.

Each mutant is one named source edit (an exact, unique substring of one file replaced by another).
For each mutant the script copies ``src/`` to a temporary directory, applies the edit there (the
worktree is never modified), and runs a fast selection of the *default* suite's test files against
the copy (``PYTHONPATH`` points at the copy; ``-m "not slow"``; the golden test is never
selected: it would kill every mutant by construction, since it compares with the code's own
earlier output). A mutant is *killed* when that run fails. Every killing test is in the default
suite, so ``make test`` kills every mutant listed here too.

Why no maintained tool: mutmut and cosmic-ray mutate every line (thousands of mutants, hours on
two cores) and neither is in the pinned environment; the named edits below are the ones the
issue asks about, and adding one is one line.

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

MUTANTS: tuple[Mutant, ...] = (
    # -- the claim driver and the verdict rule --------------------------------------------------
    Mutant("bonferroni-dropped", "claims/driver.py",
           "a_test = ctx.alpha / n_tests if n_tests else ctx.alpha", "a_test = ctx.alpha",
           (BOUNDARY,), "every test at the family alpha: the joint guarantee is lost"),
    Mutant("verdict-lower-bound-tolerance-1e-3", "claims/evidence.py",
           "if self.epsilon_lower_bound is not None and self.epsilon_lower_bound > c:",
           "if self.epsilon_lower_bound is not None and self.epsilon_lower_bound > c * (1 + 1e-3):",
           (BOUNDARY,)),
    Mutant("verdict-exact-tolerance-1e-3", "claims/evidence.py",
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
    Mutant("test-split-reuses-training-runs", "blackbox/empirical_audit.py",
           "first_chunk = s.seed_seq.n_children_spawned",
           "first_chunk = 0", (POWER,),
           "the event is counted on the runs it was chosen on (a train/test leak)"),
    # -- replace-one doublings and accountant sensitivities, every paper ------------------------
    Mutant("afkt23-dp-ftrl-pair-shift-halved", "papers/afkt23/audit.py",
           "mu_pair = 2.0 * p.L * math.sqrt(used) / p.sigma",
           "mu_pair = 1.0 * p.L * math.sqrt(used) / p.sigma", (EXPECTED,)),
    Mutant("afkt23-dp-ftrl-accountant-halved", "papers/afkt23/exact.py",
           "mu = 2.0 * params.L * math.sqrt(params.nodes_per_leaf) / params.sigma",
           "mu = 1.0 * params.L * math.sqrt(params.nodes_per_leaf) / params.sigma", (EXPECTED,)),
    Mutant("st13-tree-doubling-halved", "papers/st13/audit.py",
           "exact=pair_epsilon(count, 2 * mu, s), accountant=accountant_epsilon(count, 2 * mu, s),",
           "exact=pair_epsilon(count, mu, s), accountant=accountant_epsilon(count, mu, s),",
           (EXPECTED,)),
    Mutant("st13-tree-accountant-halved", "papers/st13/audit.py",
           "accountant=accountant_epsilon(count, 2 * mu, s),",
           "accountant=accountant_epsilon(count, mu, s),", (EXPECTED,)),
    Mutant("st13-pftal-accountant-halved", "papers/st13/audit.py",
           "worst_count, sens = max_nodes_per_leaf(T - 1), 2 * min(L, mu)",
           "worst_count, sens = max_nodes_per_leaf(T - 1), min(L, mu)", (EXPECTED,)),
    Mutant("st13-bandit-accountant-halved", "papers/st13/audit.py",
           'sens = 2 * min(mu, d * prm["B"] / beta)', 'sens = 1 * min(mu, d * prm["B"] / beta)',
           (EXPECTED,)),
    Mutant("pfcoco-gamma-accountant-halved", "papers/pfcoco/audit.py",
           "acc = _laplace_accountant(W, horizon, i, 2 * L, noise.scale, k)",
           "acc = _laplace_accountant(W, horizon, i, 1 * L, noise.scale, k)", (EXPECTED,)),
    Mutant("pfcoco-gaussian-accountant-halved", "papers/pfcoco/audit.py",
           "mu_acc = max(ex.gaussian_release_mu(W, horizon, j, 2 * L, noise.scale)",
           "mu_acc = max(ex.gaussian_release_mu(W, horizon, j, 1 * L, noise.scale)", (EXPECTED,)),
    Mutant("jkt12-privatesum-doubling-halved", "papers/jkt12/models.py",
           "mu = _tree_mu(T, 2.0 * R, sigma)", "mu = _tree_mu(T, 1.0 * R, sigma)", (EXPECTED,)),
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
    Mutant("afkt23-binary-tree-scale-log2T", "papers/afkt23/audit.py",
           "b = h / eps", "b = max(h - 1, 1) / eps", (EXPECTED,),
           "node noise for floor(log2 T) nodes while a leaf lies in floor(log2 T) + 1"),
    Mutant("svt-query-noise-halved", "mechanisms/sparse_vector.py",
           "return sigma, 2.0 * sigma", "return sigma, sigma", (EXPECTED,),
           "above-threshold's query noise Lap(2/eps) instead of Lap(4/eps)"),
    Mutant("svt-threshold-noise-halved", "mechanisms/sparse_vector.py",
           "sigma = 2.0 * c * sensitivity / epsilon", "sigma = 1.0 * c * sensitivity / epsilon",
           (EXPECTED,)),
    # -- pfcoco: node counts, the window boundary, pair shifts, printed formulas ---------------
    Mutant("pfcoco-standard-tree-true-node-count", "papers/pfcoco/audit.py",
           "noise = NodeNoise.l2_laplace(Delta * math.log2(T) / eps)",
           "noise = NodeNoise.l2_laplace(Delta * (math.log2(T) + 1) / eps)", (EXPECTED,),
           "the printed log2 T nodes replaced by the true log2 T + 1: violated -> holds"),
    Mutant("pfcoco-standard-tree-accountant-count", "papers/pfcoco/audit.py",
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
    Mutant("pfcoco-prop-a6-drops-factor-2", "papers/pfcoco/audit.py",
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
    Mutant("pfcoco-window-tree-inclusive-horizon-dropped", "papers/pfcoco/audit.py",
           "TT = T if b == \"strict\" or T > W else W + 1  # inclusive: its own last horizon",
           "TT = T  # inclusive: its own last horizon", (EXPECTED,),
           "the inclusive reading is no longer audited at T = W + 1, where it bites most"),
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
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
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
