"""The black box on an expensive release: a 16-step training trajectory at 10^3-10^4 runs per input.

A real library's training run costs tens of milliseconds, so an audit of one affords a few
thousand runs per input. This script measures what dpaudit's empirical bound reaches there, against
the oracle that knows the law, and how the split between choosing the event (training runs) and
testing it should be set at that size.

The release is a 16-step trajectory of full-batch noisy gradient steps in which a record's
gradient reaches every step through binary-tree aggregated noise, as continual-release optimizers
add it (e.g. opacus-dpcr's binary mechanism): ``w_t = -eta * sum_{nodes v in the dyadic cover of
[1, t]} (G_v + N(0, (z C)^2 I))`` with ``G_v`` the node's true gradient sum, 31 nodes, d = 2
parameters (32 outputs: the second coordinate is a nuisance the statistic must learn to ignore).
It is linear-Gaussian in the draws, so the privacy loss of the pair (add/remove of one record) is
a Gaussian shift ``mu = ||(A A^T)^{+1/2} (m_1 - m_0)||`` (Dong, Roth & Su 2022, Cor. 3.3).
``mu`` is taken twice and must agree: derived from the code (``dpaudit.greybox.derive_pair``) and
computed here from the tree matrix by hand. ``z`` is set so that the pair's exact epsilon at
delta 1e-5 is 4.81 (the full-batch 16-step opacus-dpcr figure).

The oracle is ``oracle_ratio.oracle_cp`` unchanged (all runs on the test, the best event of the
exact law, the engine's Clopper-Pearson ends). dpaudit's side: ``dpaudit.audit`` with its
defaults and with fixed ``train_fraction`` values, same runs, ``alpha`` 0.05, seeds 0..k-1.

Usage (the committed table)::

    OPENBLAS_NUM_THREADS=1 python benchmarks/small_budget.py --seeds 20 --write-docs

It rewrites the block between the ``small-budget`` markers of docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np
from scipy.optimize import brentq

import dpaudit
from dpaudit.greybox import NotDerivable, derive_pair

sys.path.insert(0, str(Path(__file__).resolve().parent))
import oracle_laws as L  # noqa: E402
from oracle_ratio import law_epsilon, oracle_cp, write_docs  # noqa: E402

BEGIN, END = "<!-- small-budget:begin -->", "<!-- small-budget:end -->"
T, D, C, ETA = 16, 2, 1.0, 0.1
DELTA, ALPHA = 1e-5, 0.05
TARGET_EPSILON = 4.81
SIZES = (1_000, 3_000, 10_000)
FRACTIONS = (None, 0.1, 0.25, 0.4)


def dyadic_tree(steps: int) -> tuple[np.ndarray, np.ndarray]:
    """``(M, sizes)``: ``M[t, v] = 1`` iff node ``v`` is in the dyadic cover of ``[0, t + 1)``;
    ``sizes[v]`` the node's number of leaves (nodes listed level by level, leaves first)."""
    if steps < 1 or steps & (steps - 1):
        raise ValueError(f"steps must be a power of two >= 1, got {steps!r}")
    nodes = [(a, a + s) for k in range(int(math.log2(steps)) + 1)
             for s in [2 ** k] for a in range(0, steps, s)]
    index = {v: i for i, v in enumerate(nodes)}
    M = np.zeros((steps, len(nodes)))
    for t in range(1, steps + 1):
        pos = 0
        for k in reversed(range(int(math.log2(steps)) + 1)):
            if t - pos >= 2 ** k:
                M[t - 1, index[(pos, pos + 2 ** k)]] = 1.0
                pos += 2 ** k
    return M, np.array([b - a for a, b in nodes], dtype=float)


M, SIZES_OF_NODES = dyadic_tree(T)


def trajectory(noise_multiplier: float):
    """The release: ``(data, n, rng) -> (n, T * D)`` iterates of the noisy tree-aggregated steps."""
    def release(data, n, rng):
        x = np.asarray(data, dtype=float).reshape(-1, D)
        g = x.sum(axis=0)
        node = SIZES_OF_NODES[:, None] * g[None, :]
        noise = rng.normal(0.0, noise_multiplier * C, size=(n, M.shape[1], D))
        return (-ETA * np.einsum("tk,nkd->ntd", M, node[None] + noise)).reshape(n, T * D)
    return release


DATA1 = [[0.3, -0.2]] * 4 + [[1.0, 0.0]]   # the record added in DATA1 has gradient (C, 0)
DATA0 = DATA1[:-1]


def hand_mu(noise_multiplier: float) -> float:
    """``mu`` by hand: the trajectory is ``-eta M (G + s Z)`` per coordinate; the pair moves only
    coordinate 0, by ``-eta M sizes``, so ``mu = ||(M M^T)^{-1/2} M sizes|| / s`` (M has full row
    rank: the dyadic cover of ``[0, t)`` contains a node no shorter prefix uses)."""
    shift = M @ SIZES_OF_NODES
    return float(math.sqrt(shift @ np.linalg.solve(M @ M.T, shift))) / (noise_multiplier * C)


def code_mu(noise_multiplier: float) -> float:
    pair = derive_pair(trajectory(noise_multiplier), DATA0, DATA1, seed=0)
    if isinstance(pair, NotDerivable):
        raise SystemExit(f"no law derived from the code: {pair.reason}")
    diff = pair.law1.mean - pair.law0.mean
    v, *_ = np.linalg.lstsq(pair.law0.A, diff, rcond=None)
    return float(np.linalg.norm(v))


def noise_multiplier_for(epsilon: float) -> float:
    """``z`` at which the pair's exact epsilon at ``DELTA`` is ``epsilon`` (bisection)."""
    unit = hand_mu(1.0)
    return brentq(lambda z: law_epsilon(L.gaussian_shift(unit / z), DELTA) - epsilon, 0.5, 200.0,
                  xtol=1e-10)


def measure(seeds: int) -> dict:
    z = noise_multiplier_for(TARGET_EPSILON)
    mu, mu_code = hand_mu(z), code_mu(z)
    if not math.isclose(mu, mu_code, rel_tol=1e-6):
        raise SystemExit(f"mu derived from the code {mu_code!r} != by hand {mu!r}")
    law = L.gaussian_shift(mu)
    release = trajectory(z)
    out = {"z": z, "mu": mu, "eps": law_epsilon(law, DELTA), "rows": []}
    for n in SIZES:
        oracle = oracle_cp(law, n, ALPHA, DELTA, True)[0]
        for frac in FRACTIONS:
            t0 = time.perf_counter()
            b = np.array([dpaudit.audit(release, DATA0, DATA1, epsilon=1.0, delta=DELTA,
                                        samples=n, alpha=ALPHA, seed=s, train_fraction=frac
                                        ).epsilon_lower_bound for s in range(seeds)])
            out["rows"].append({"n": n, "fraction": frac, "oracle": oracle, "mean": b.mean(),
                                "min": b.min(), "seconds": time.perf_counter() - t0})
            print(f"n {n} fraction {frac}: mean {b.mean():.3f} min {b.min():.3f} oracle "
                  f"{oracle:.3f} ratio {b.mean() / oracle:.3f}", file=sys.stderr)
    return out


def table(res: dict, seeds: int) -> str:
    from dpaudit.blackbox.audit_config import split_sizes

    lines = [f"Generated by `OPENBLAS_NUM_THREADS=1 python benchmarks/small_budget.py --seeds {seeds} "
             f"--write-docs` ({time.strftime('%Y-%m-%d')}, dpaudit {dpaudit.__version__}). The "
             f"16-step tree-aggregated trajectory, d = {D} (32 outputs), noise multiplier "
             f"{res['z']:.4g}: mu {res['mu']:.5g} (from the code and by hand, equal to 1e-6), exact "
             f"epsilon {res['eps']:.4g} at delta {DELTA:g}; alpha {ALPHA}, seeds 0-{seeds - 1}.", "",
             "| runs per input | oracle | train fraction | training runs | dpaudit mean (min) "
             "| ratio |", "|---|---|---|---|---|---|"]
    for r in res["rows"]:
        n_train = split_sizes(r["n"], r["fraction"])[0]
        frac = "default" if r["fraction"] is None else f"{r['fraction']:g}"
        lines.append(f"| {r['n']:,} | {r['oracle']:.3f} | {frac} | {n_train:,} | "
                     f"{r['mean']:.3f} ({r['min']:.3f}) | {r['mean'] / r['oracle']:.3f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--write-docs", action="store_true")
    args = ap.parse_args(argv)
    res = measure(args.seeds)
    block = table(res, args.seeds)
    print(block)
    if args.write_docs:
        write_docs(block, BEGIN, END)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
