"""Discrete outputs: outcome ratios fitted on one half of the training runs and the prefix chosen
on the other (the engine before issue 36) against both on all training runs (the engine now,
``dpaudit.blackbox.outcome_selection``), simulated from exact laws without running mechanisms.

Per repetition, training and test counts are multinomial draws from the exact outcome law
(``oracle_laws.py``) at the default split (10% training, 90% test); outcomes are ranked by their
add-1/2 smoothed log ratios, every prefix set (both directions) is valued by the engine's
projection (``statistics._projected_rates`` at the discrete selection level ``1 / C``), and the
winner's one-sided Clopper-Pearson bound is computed on the test counts. The oracle's bound
(``oracle_ratio.py``) is printed for scale.

    python benchmarks/outcome_selection_sim.py [--reps 200] [--samples 1e6] [--train 0.1]
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np
from scipy import special

sys.path.insert(0, str(Path(__file__).resolve().parent))
import oracle_laws as L  # noqa: E402
from literature_mechanisms import _v  # noqa: E402

from dpaudit.blackbox.confidence import Bonferroni, log_ratio_lower_bound  # noqa: E402
from dpaudit.blackbox.statistics import _projected_rates  # noqa: E402


def _cp(kp: int, kq: int, n: int, a: float) -> float:
    lo = special.betaincinv(max(kp, 1), n - kp + 1, a) if kp > 0 else 0.0
    hi = special.betaincinv(kq + 1, max(n - kq, 1), 1 - a) if kq < n else 1.0
    return max(0.0, math.log(lo / hi)) if lo > 0 else 0.0


def one(p0: np.ndarray, p1: np.ndarray, rng: np.random.Generator, n: int, alpha: float,
        rule: str, frac: float) -> float:
    k = p0.size
    ntr = int(frac * n)
    nt = n - ntr
    a = Bonferroni(alpha).per_interval_alpha
    if rule == "fit/select":
        nf = ntr // 2
        ns = ntr - nf
        f0, f1 = rng.multinomial(nf, p0), rng.multinomial(nf, p1)
        s0, s1 = rng.multinomial(ns, p0), rng.multinomial(ns, p1)
    else:
        nf = ns = ntr
        s0, s1 = rng.multinomial(ns, p0), rng.multinomial(ns, p1)
        f0, f1 = s0, s1
    t0, t1 = rng.multinomial(nt, p0), rng.multinomial(nt, p1)
    seen = max(1, int(np.count_nonzero(f0 + f1)))
    lr = np.log((f1 + .5) / (nf + .5 * seen)) - np.log((f0 + .5) / (nf + .5 * seen))
    sets, nums, cps, cqs = [], [], [], []
    for num in (1, 0):
        order = np.argsort(-lr if num == 1 else lr, kind="stable")
        sp, sq = (s1, s0) if num == 1 else (s0, s1)
        cps.append(np.cumsum(sp[order])[:-1])
        cqs.append(np.cumsum(sq[order])[:-1])
        sets += [order[:m + 1] for m in range(k - 1)]
        nums += [num] * (k - 1)
    cp, cq = np.concatenate(cps), np.concatenate(cqs)
    c = cp.size
    p_lo, q_hi = _projected_rates(cp, ns, cq, ns, nt, nt, a, c, 0.25, 1.0 / max(2, c))
    i = int(np.argmax(np.asarray(log_ratio_lower_bound(p_lo, q_hi, 0.0))))
    s, num = sets[i], nums[i]
    tp, tq = (t1, t0) if num == 1 else (t0, t1)
    return _cp(int(tp[s].sum()), int(tq[s].sum()), nt, a)


def laws() -> dict[str, tuple]:
    u0, u1 = np.r_[1.0, np.zeros(7)], np.r_[0.0, np.ones(7)]
    return {  # name: (law, alpha, oracle's mean bound at 10^6 from docs/benchmarks.md)
        "SVT1": (L.svt_law(1, _v((0, 5), (1, 5)), _v((1, 5), (0, 5)), 0.5), 0.1, 0.06632),
        "SVT2": (L.svt_law(2, _v((0, 5), (1, 5)), _v((1, 5), (0, 5)), 1.0), 0.1, 0.06623),
        "SVT4": (L.svt_law(4, _v((1, 10)), _v((2, 5), (0, 5)), 1.0), 0.1, 0.1461),
        "SVT6": (L.svt_law(6, _v((1, 5), (0, 5)), _v((0, 5), (1, 5)), 1.0), 0.1, 0.2818),
        "ReportNoisyMax1": (L.rnm_index(_v((1, 5)), _v((0, 1), (2, 4)), "laplace"), 0.1, 0.08784),
        "ReportNoisyMax2": (L.rnm_index(_v((1, 5)), _v((0, 1), (2, 4)), "exponential"), 0.1,
                            0.09322),
        "TruncatedGeometric": (L.truncated_geometric_law(2, 1), 0.1, 0.1146),
        "exp-mech-correct": (L.exponential_law(u0, u1, 0.5), 0.05, 0.8609),
        "exp-mech-factor-2": (L.exponential_law(u0, u1, 1.0), 0.05, 1.711),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--samples", type=float, default=1e6)
    ap.add_argument("--train", type=float, default=0.1)
    ap.add_argument("--only", nargs="*", default=None)
    args = ap.parse_args(argv)
    print("| law | oracle | fit/select: mean (ratio) | in-sample: mean (ratio) |")
    print("|---|---|---|---|")
    for name, ((p0, p1), alpha, oracle) in laws().items():
        if args.only and name not in args.only:
            continue
        p0, p1 = p0 / p0.sum(), p1 / p1.sum()
        cells = []
        for rule in ("fit/select", "in-sample"):
            rng = np.random.default_rng(7)
            b = np.mean([one(p0, p1, rng, int(args.samples), alpha, rule, args.train)
                         for _ in range(args.reps)])
            cells.append(f"{b:.4g} ({b / oracle:.3f})")
        print(f"| {name} | {oracle:.4g} | " + " | ".join(cells) + " |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
