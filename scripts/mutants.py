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
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("FAILED") or "passed" in ln
             or "failed" in ln or "error" in ln.lower()]
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
