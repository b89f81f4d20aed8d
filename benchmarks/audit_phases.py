"""Where the CPU time of one fixed-budget audit goes (issue 36 item 4).

Runs ``dpaudit.audit(LaplaceMechanism(1, 1), 0, 1, epsilon=1, samples=N, seed=0)`` (the Laplace
scalar row of ``bench_audit.py``) ``--repeats`` times with process-CPU-time counters wrapped
around the engine's phases, and prints each phase's smallest time over the repeats (phases nest:
the test split includes its sampling, training includes the statistic choice), next to the CPU
time of drawing the same runs alone. Run with ``OPENBLAS_NUM_THREADS=1``.

Usage::

    python benchmarks/audit_phases.py [--samples 1000000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import functools
import time
from collections import defaultdict
from typing import Any, Callable

import numpy as np

import dpaudit
from dpaudit.blackbox import empirical_audit, sampling, statistics, training
from dpaudit.mechanisms.laplace import LaplaceMechanism

#: (object, attribute, label) of the phases timed.
PHASES = (
    (empirical_audit, "train", "training (draws, statistic choice, sweeps, histogram edges)"),
    (training, "_fit_and_choose", "  fit + choose the statistic"),
    (training, "choose", "    choose (sweeps of each candidate)"),
    (training, "sweep_thresholds", "  final sweeps (epsilon, Gaussian-DP)"),
    (statistics.HistogramAccumulator, "from_training", "  histogram edges"),
    (empirical_audit, "count_block", "test split (draws + counting)"),
    ("chunk_counts", "count", "  counting the test chunks"),
    (sampling.Stream, "draw", "sampling inside the audit (all splits)"),
    (empirical_audit, "power_statement", "power statement (not violated)"),
    (empirical_audit, "evaluate_event", "test-split bounds"),
)


def _wrap(owner: Any, name: str, label: str, acc: dict[str, float]) -> Callable[[], None]:
    raw = owner.__dict__[name]
    is_cm = isinstance(raw, classmethod)
    f = raw.__func__ if is_cm else raw

    @functools.wraps(f)
    def timed(*a: Any, **k: Any) -> Any:
        c0 = time.process_time()
        try:
            return f(*a, **k)
        finally:
            acc[label] += time.process_time() - c0

    setattr(owner, name, classmethod(timed) if is_cm else timed)
    return lambda: setattr(owner, name, raw)


def draw_only(mech: Any, samples: int, chunk: int, seed: int = 1) -> float:
    c0 = time.process_time()
    for data, child in zip((0.0, 1.0), np.random.SeedSequence(seed).spawn(2)):
        done = 0
        while done < samples:
            m = min(chunk, samples - done)
            mech(data, m, np.random.default_rng(child.spawn(1)[0]))
            done += m
    return time.process_time() - c0


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--samples", type=int, default=1_000_000)
    p.add_argument("--repeats", type=int, default=5)
    args = p.parse_args(argv)
    mech = LaplaceMechanism(1.0, 1.0)
    acc: dict[str, float] = defaultdict(float)
    undo = []
    for o, n, label in PHASES:
        if o == "chunk_counts":  # (absent before issue 36: the chunks were sorted)
            try:
                from dpaudit.blackbox.chunk_counts import ChunkCounter
            except ImportError:
                continue
            o = ChunkCounter
        undo.append(_wrap(o, n, label, acc))
    best: dict[str, float] = {}
    totals, draws = [], []
    try:
        r = dpaudit.audit(mech, 0.0, 1.0, epsilon=1.0, samples=args.samples, seed=0)  # warm-up
        for _ in range(args.repeats):
            acc.clear()
            c0 = time.process_time()
            r = dpaudit.audit(mech, 0.0, 1.0, epsilon=1.0, samples=args.samples, seed=0)
            totals.append(time.process_time() - c0)
            for k, v in acc.items():
                best[k] = min(best.get(k, np.inf), v)
            draws.append(draw_only(mech, args.samples, r.chunk_size))
    finally:
        for u in undo:
            u()
    print(f"Laplace scalar, {args.samples} runs per input, CPU seconds, best of {args.repeats}")
    print(f"{'whole audit':62s} {min(totals) * 1e3:8.1f} ms")
    print(f"{'drawing the same runs alone':62s} {min(draws) * 1e3:8.1f} ms")
    print(f"{'ratio':62s} {min(totals) / min(draws):8.2f}")
    for _, _, label in PHASES:
        if label in best:
            print(f"{label:62s} {best[label] * 1e3:8.1f} ms")


if __name__ == "__main__":
    main()
