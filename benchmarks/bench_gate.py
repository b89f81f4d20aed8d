"""The sequential CI gate on DP-Sniper's suite and the detection zoo (issue 36).

Runs :func:`dpaudit.blackbox.sequential_gate.sequential_gate` on every mechanism of
``bench_dpsniper.SUITE`` (claim eps = 0.1, DP-Sniper's pairs) and of ``bench_detection.cases()``
(each case's claim and pair), with a budget of ``--samples`` runs per input, alpha = 0.05, and
prints whether each stopped ("violated", with the runs per input it needed, training included) and
whether that agrees with the mechanism being broken. ``sequential_audit`` (one event from 1,000
training runs) is run next to it for comparison.

Usage::

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_gate.py --samples 100000
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_detection import cases  # noqa: E402
from bench_dpsniper import SUITE  # noqa: E402

from dpaudit.blackbox.sequential import sequential_audit  # noqa: E402
from dpaudit.blackbox.sequential_gate import sequential_gate  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--samples", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    rows = [(f"DP-Sniper {name}", mech, a1, a2, 0.1, 0.0, true is None or true > 0.1 + 1e-9)
            for name, (mech, a1, a2, _ref, true) in SUITE.items()]
    # NumericalSVT (true epsilon not known in closed form) is proved 0.1-DP (Wang et al. 2019).
    rows = [r[:6] + (False,) if r[0].endswith("NumericalSVT") else r for r in rows]
    rows += [(f"zoo {c.name}", c.mechanism, c.data0, c.data1, c.epsilon, c.delta, c.broken)
             for c in cases()]
    print(f"sequential gate vs sequential_audit, budget {args.samples} runs per input, "
          f"alpha 0.05, seed {args.seed}")
    print("| mechanism | broken | gate | gate runs/input | sequential_audit | seq. runs/input |"
          " seconds |")
    print("|---|---|---|---|---|---|---|")
    right = wrong = 0
    t_all = time.perf_counter()
    for name, mech, d0, d1, eps, delta, broken in rows:
        t0 = time.perf_counter()
        g = sequential_gate(mech, d0, d1, eps, delta, max_samples=args.samples, seed=args.seed)
        s = sequential_audit(mech, d0, d1, eps, delta, max_samples=args.samples, seed=args.seed)
        ok = (g.verdict == "violated") == broken
        right += ok
        wrong += (g.verdict == "violated") and not broken
        print(f"| {name} | {'yes' if broken else 'no'} | {g.verdict} | {g.runs_per_input} | "
              f"{s.verdict} | {s.runs_per_input} | {time.perf_counter() - t0:.1f} |", flush=True)
    print(f"\ngate right on {right} of {len(rows)}; false alarms {wrong}; "
          f"{time.perf_counter() - t_all:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
