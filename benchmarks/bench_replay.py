"""Benchmark of the grey-box replay (issue 34): runs per second replayed vs plainly sampled.

For a DP-FTRL with Gaussian tree aggregation (the own-learner example's code, correct and redraw
variants, d = 2) at several horizons T, prints

* plain sampling: runs per second of ``mechanism(data, n, rng)`` with a plain ``Generator``, batched
  (``n = 20000``, how the empirical test and the declared-law test draw) and one run per call
  (``n = 1``, how the replay calls it);
* replay: runs per second of the same code under a substituting ``ReplayGenerator`` (``n = 1``), the
  whole law derivation of one input (``derive_law``: one call per scalar draw plus four) and its
  wall and CPU time;
* tracing: runs per second under the tracing generator (the noise-site check);
* verification (second table): runs per second of checking the derived law on the code's own runs
  (``verify_input``: supplied draws, batched in the release's layout) against plain batched
  sampling of the same release, i.e. the multiple of plain sampling the check costs;
* loops (third table): a release drawing scalar noise in a loop over steps inside a loop over
  runs, at 200, 800 and 2,000 draws per run: derivation (one batched call of ``k`` impulse runs)
  and the verification of 1,000 runs, wall and CPU seconds.

Wall clock moves with the machine's load; CPU time much less. Usage::

    python benchmarks/bench_replay.py               # about 20 s on one core
    python benchmarks/bench_replay.py --T 8 16 --repeat 3
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples" / "own-learner" / "src"))

from own_learner.dpftrl import dp_ftrl  # noqa: E402

from dpaudit.greybox import ReplayGenerator, derive_law  # noqa: E402
from dpaudit.greybox.verification import verify_input  # noqa: E402


def _timed(fn: Callable[[], Any], repeat: int) -> tuple[float, float]:
    best_wall, best_cpu = float("inf"), float("inf")
    for _ in range(repeat):
        w0, c0 = time.perf_counter(), time.process_time()
        fn()
        best_wall = min(best_wall, time.perf_counter() - w0)
        best_cpu = min(best_cpu, time.process_time() - c0)
    return best_wall, best_cpu


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--T", type=int, nargs="+", default=[8, 16, 64])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--calls", type=int, default=200, help="single-run calls timed")
    ap.add_argument("--loops", type=int, nargs="+", default=[200, 800, 2000],
                    help="scalar draws per run of the loop release")
    args = ap.parse_args(argv)
    print("| variant | T | draws | batched runs/s (n=20000) | plain runs/s (n=1) | replayed "
          "runs/s (n=1) | traced runs/s (n=1) | derive_law: calls, wall s, CPU s |")
    print("|---|---|---|---|---|---|---|---|")
    rows: list[Any] = []
    for variant in ("correct", "redraw"):
        for T in args.T:
            data = np.zeros((T, 2))
            data[0, 0] = 1.0

            def mech(g: Any, n: int, rng: np.random.Generator, v: str = variant) -> Any:
                return dp_ftrl(g, n, rng, epsilon=1.0, delta=1e-5, clip=1.0, eta=0.1, variant=v)

            rng = np.random.default_rng(0)
            wb, _ = _timed(lambda: mech(data, 20_000, rng), args.repeat)
            wp, _ = _timed(lambda: [mech(data, 1, rng) for _ in range(args.calls)], args.repeat)
            zeros = lambda o, shape, f: np.zeros(shape)  # noqa: E731
            wr, _ = _timed(lambda: [mech(data, 1, ReplayGenerator(0, zeros))
                                    for _ in range(args.calls)], args.repeat)
            wt, _ = _timed(lambda: [mech(data, 1, ReplayGenerator(0, trace=True))
                                    for _ in range(args.calls)], args.repeat)
            law = derive_law(mech, data)
            wd, cd = _timed(lambda: derive_law(mech, data), args.repeat)
            print(f"| {variant} | {T} | {law.A.shape[1]} | {20_000 / wb:,.0f} | "
                  f"{args.calls / wp:,.0f} | {args.calls / wr:,.0f} | {args.calls / wt:,.0f} | "
                  f"{law.replays}, {wd:.3f}, {cd:.3f} |")
            rows.append((variant, T, law, mech, data, wb))
    print()
    print("| variant | T | layout | plain runs/s (n=20000) | verified runs/s (100,000 runs) | "
          "verification / plain (CPU) |")
    print("|---|---|---|---|---|---|")
    for variant, T, law, mech, data, _ in rows:
        rng = np.random.default_rng(1)
        _, cp = _timed(lambda: [mech(data, 20_000, rng) for _ in range(5)], args.repeat)
        wv, cv = _timed(lambda: verify_input(mech, data, law, runs=100_000, seed=1),
                        args.repeat)
        print(f"| {variant} | {T} | {law.layout} | {100_000 / cp:,.0f} | {100_000 / cv:,.0f} | "
              f"{cv / cp:.2f} |")
    print()
    print("| scalar draws per run | derive_law: calls, layout, wall s, CPU s | verify 1,000 runs: "
          "wall s, CPU s | plain 1,000 runs: CPU s |")
    print("|---|---|---|---|")
    for k in args.loops:
        def loop(x: Any, n: int, rng: np.random.Generator, k: int = k) -> Any:
            out = np.empty(n)
            for r in range(n):
                v = float(x[0])
                for _ in range(k):
                    v += rng.normal(0.0, 1.0)
                out[r] = v
            return out

        x = np.array([1.0])
        law = derive_law(loop, x)
        wd, cd = _timed(lambda: derive_law(loop, x), 1)
        wv, cv = _timed(lambda: verify_input(loop, x, law, runs=1_000, seed=1), 1)
        _, cp = _timed(lambda: loop(x, 1_000, np.random.default_rng(0)), 1)
        print(f"| {k:,} | {law.replays}, {law.layout}, {wd:.2f}, {cd:.2f} | {wv:.2f}, {cv:.2f} | "
              f"{cp:.2f} |")


if __name__ == "__main__":
    main()
