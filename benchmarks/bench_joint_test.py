"""Cost per event of the exact joint test (``dpaudit.blackbox.joint_test``, issue 36).

Times :func:`~dpaudit.blackbox.joint_test.joint_epsilon_lower_bound` (CPU time, each event
twice, the faster kept) on events of the kind an audit meets at ``n`` runs per input: threshold
events of Laplace(1) on the pair (0, 1) (``P[X > t]`` on both inputs, ``t`` from 0.5 to 6: large
to rare counts), of DP-Sniper's Laplace at eps 0.1, and Gaussian (sigma 4.84, the (1, 1e-5)
analytic calibration) at delta 1e-5, each at its expected counts, at a per-event alpha of
0.05 / 10 (an audit's Bonferroni share). ``--rev`` times the module as it was at a git revision
(its source is loaded from ``git show``), for before/after comparisons on the same machine.

Usage::

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_joint_test.py --n 900000 [--rev 7b6a149]
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from scipy import stats

from dpaudit.blackbox.confidence import epsilon_lower_bound


def events(n: int) -> list[tuple[str, int, int, float]]:
    """(name, count on D, count on D', delta) at the expected counts."""
    out = []
    for t in (0.5, 1.5, 3.0, 6.0):
        p, q = stats.laplace.sf(t, loc=1.0), stats.laplace.sf(t, loc=0.0)
        out.append((f"Laplace(1) X > {t}", round(n * p), round(n * q), 0.0))
    for t in (2.0, 10.0, 20.0):
        p, q = stats.laplace.sf(t, loc=1.0, scale=10.0), stats.laplace.sf(t, scale=10.0)
        out.append((f"Laplace(10) X > {t}", round(n * p), round(n * q), 0.0))
    for t in (4.0, 12.0):
        p, q = stats.norm.sf(t, loc=1.0, scale=4.84), stats.norm.sf(t, scale=4.84)
        out.append((f"Gaussian(4.84) X > {t}", round(n * p), round(n * q), 1e-5))
    return out


def load(rev: str | None):
    if rev is None:
        from dpaudit.blackbox import joint_test
        return joint_test
    root = Path(__file__).resolve().parent.parent
    src = subprocess.run(["git", "show", f"{rev}:src/dpaudit/blackbox/joint_test.py"],
                         cwd=root, check=True, capture_output=True, text=True).stdout
    path = Path(tempfile.mkdtemp()) / "joint_test_rev.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location("joint_test_rev", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=900_000)
    ap.add_argument("--alpha", type=float, default=0.005)
    ap.add_argument("--rev", default=None, help="git revision of joint_test.py to time")
    args = ap.parse_args(argv)
    mod = load(args.rev)
    total = 0.0
    print(f"n = {args.n}, alpha = {args.alpha}, module at {args.rev or 'working tree'}")
    print("| event | x | y | Clopper-Pearson product | joint test | CPU ms |")
    print("|---|---|---|---|---|---|")
    evs = events(args.n)
    for name, x, y, delta in evs:
        best = math.inf
        for _ in range(2):
            t = time.process_time()
            b = mod.joint_epsilon_lower_bound(x, args.n, y, args.n, delta, args.alpha)
            best = min(best, time.process_time() - t)
        total += best
        cp = epsilon_lower_bound(x, args.n, y, args.n, delta=delta, alpha=args.alpha)
        print(f"| {name} | {x} | {y} | {cp:.5f} | {b:.5f} | {best * 1e3:.0f} |")
    print(f"mean CPU per event: {total / len(evs) * 1e3:.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
