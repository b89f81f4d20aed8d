"""How the selection level of discrete outputs' prefix events affects the test bound (issue 15).

Simulates the engine's discrete pipeline from exact outcome laws, without running mechanisms: fit,
selection and test counts are multinomial draws at the default split of 10^6 runs per input
(5 x 10^4 / 5 x 10^4 / 9 x 10^5); outcomes are ranked by the fit split's add-1/2 smoothed log
ratios, every prefix set (both directions) is valued on the selection split by
``statistics.projected_log_ratio``-style two-stage Wilson bounds at the selection level under
test, and the winner's Clopper-Pearson bound is computed on the test counts (alpha = 0.05).
Levels: "penalised" (``alpha / C**0.25``, the engine's rule for continuous scores) and
"one-lucky" (``1 / C``, statistics.DISCRETE_SELECTION_LEVEL). Laws: Lee-Clifton sparse vector
(Lyu-Su-Li Alg 4 on DP-Sniper's pair; a rare outcome of ratio 0.17), a two-sided geometric law on
61 outcomes shifted by one (ratio 0.3, many rare outcomes where a lucky count could win), and the
exponential mechanism with the factor 2 dropped (8 outcomes, ratio 1.72).

    python benchmarks/discrete_selection_sim.py [--reps 150]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_detection as bd  # noqa: E402

from dpaudit.blackbox.confidence import (Bonferroni, log_ratio_lower_bound,  # noqa: E402
                                       proportion_bound)
from dpaudit.blackbox.statistics import projected_log_ratio  # noqa: E402

A = Bonferroni(0.05).per_interval_alpha


def _value(cp: int, cq: int, ns: int, nt: int, a_sel: float) -> float:
    # The engine's ranking value of one event (delta = 0) at selection level a_sel.
    return projected_log_ratio(cp, ns, cq, ns, nt, nt, alpha=A, delta=0.0, candidates=1,
                               selection_alpha=a_sel)


def _test_bound(cp: int, cq: int, nt: int) -> float:
    # The unclamped test-split bound (means over repetitions keep the sign of a poor pick).
    return float(log_ratio_lower_bound(proportion_bound(int(cp), nt, A).lower,
                                       proportion_bound(int(cq), nt, A).upper))


def simulate(p0: np.ndarray, p1: np.ndarray, level: str, reps: int, nf: int = 50_000,
             ns: int = 50_000, nt: int = 900_000, seed: int = 1) -> np.ndarray:
    k = p0.size
    c = 4 * (k - 1)
    a_sel = 1.0 / c if level == "one-lucky" else A / c ** 0.25
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(reps):
        f0, f1 = rng.multinomial(nf, p0), rng.multinomial(nf, p1)
        s0, s1 = rng.multinomial(ns, p0), rng.multinomial(ns, p1)
        t0, t1 = rng.multinomial(nt, p0), rng.multinomial(nt, p1)
        lr = np.log((f1 + .5) / (nf + .5 * k)) - np.log((f0 + .5) / (nf + .5 * k))
        best = None
        for num in (1, 0):
            order = np.argsort(-lr if num == 1 else lr, kind="stable")
            for m in range(1, k):
                s = order[:m]
                cp, cq = (s1[s].sum(), s0[s].sum()) if num == 1 else (s0[s].sum(), s1[s].sum())
                v = _value(cp, cq, ns, nt, a_sel)
                if best is None or v > best[0]:
                    best = (v, s, num)
        _, s, num = best
        cp, cq = (t1[s].sum(), t0[s].sum()) if num == 1 else (t0[s].sum(), t1[s].sum())
        out.append(_test_bound(cp, cq, nt))
    return np.array(out)


def laws() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    a0, a1 = np.ones(10), np.r_[np.full(5, 2.0), np.zeros(5)]
    z = np.arange(61)
    g0, g1 = np.exp(-0.3 * np.abs(z - 30)), np.exp(-0.3 * np.abs(z - 31))
    u0, u1 = np.r_[1.0, np.zeros(7)], np.r_[0.0, np.ones(7)]
    e0, e1 = np.exp(u0), np.exp(u1)
    return {"svt4-lee-clifton (0.1725)": (bd.svt_outcome_probabilities(4, a0, 0.1, 1.0),
                                          bd.svt_outcome_probabilities(4, a1, 0.1, 1.0)),
            "two-sided geometric, 61 outcomes (0.3)": (g0 / g0.sum(), g1 / g1.sum()),
            "exp-mech-factor-2 (1.72)": (e0 / e0.sum(), e1 / e1.sum())}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=150)
    args = ap.parse_args(argv)
    print("| law | selection level | mean test bound | 10% | 50% | 90% |")
    print("|---|---|---|---|---|---|")
    for name, (p0, p1) in laws().items():
        for level in ("penalised", "one-lucky"):
            b = simulate(p0, p1, level, args.reps)
            q = np.quantile(b, [0.1, 0.5, 0.9])
            print(f"| {name} | {level} | {b.mean():.4f} | {q[0]:.4f} | {q[1]:.4f} | {q[2]:.4f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
