"""Regret of the Smith-Thakurta 2013 learners on synthetic strongly convex streams.

Full information: PFTAL (Algorithm 1) at several epsilons next to non-private FTAL (eq. (4)), the
printed bound of Theorem 4 (with the constants of its proof, Lemma 8 + Claim 10) and the
deterministic FTAL bound of Fact 9 + Claim 10. Bandit: private bandit FTAL (Algorithm 3, Theorem
6's oblivious schedule) next to non-private bandit FTAL (eq. (8), Theorem 12's oblivious schedule)
and the explicit inequality that ends the proof of Theorem 6 (App. E.2).

Streams: ridge regression losses ``f_t(w) = 1/2 (y_t - <x_t, w>)^2 + H/2 ||w||^2`` on the unit
ball, ``x_t`` uniform on the sphere of radius 1/2, ``y_t = <x_t, w*> + N(0, 0.1^2)`` clipped to
[-1, 1]; the declared constants are computed from the stream: ``L = max_t Lipschitz(f_t)`` over the
ball and ``B = max_t max_{||w|| <= 1} |f_t(w)|`` (for the bandit learners). Each horizon gets its
own stream (the tree's noise scale depends on T), shared by every learner at that horizon. Regret is
``sum_t f_t(w_t) - min_{||w|| <= 1} sum_t f_t(w)`` (the comparator is computed exactly: a quadratic
over a ball), averaged over ``--runs`` independent runs (standard error reported).

Writes JSON (``figures["regret"]`` convention of :mod:`dpaudit.claims.record`: ``{"T": [...],
"series": {name: [...]}, "ylabel": str}``) and prints a table.

Usage::

    python benchmarks/st13_regret.py                       # default, a few minutes on one core
    python benchmarks/st13_regret.py --horizons 64 256 --runs 10 --out /tmp/regret.json
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time
from typing import Any

import numpy as np
from scipy import optimize

from dpaudit.learners.bandit_ftal import (
    BanditFTAL,
    PrivateBanditFTAL,
    theorem6_regret_bound,
    theorem6_schedule,
    theorem12_schedule,
)
from dpaudit.learners.domains import Ball
from dpaudit.learners.ftal import FTAL
from dpaudit.learners.losses import SquaredLoss
from dpaudit.learners.pftal import PFTAL, theorem4_regret_bound

RADIUS = 1.0


def make_stream(T: int, d: int, H: float, rng: np.random.Generator) -> list[SquaredLoss]:
    """Ridge-regression losses on the unit ball (module docstring)."""
    w_star = rng.normal(size=d)
    w_star *= 0.8 / np.linalg.norm(w_star)
    x = rng.normal(size=(T, d))
    x *= 0.5 / np.linalg.norm(x, axis=1, keepdims=True)
    y = np.clip(x @ w_star + rng.normal(0.0, 0.1, size=T), -1.0, 1.0)
    return [SquaredLoss(x[t], float(y[t]), ridge=H) for t in range(T)]


def loss_bound(stream: list[SquaredLoss], R: float) -> float:
    """``max_t max_{||w|| <= R} |f_t(w)|`` = ``1/2 (|y| + ||x|| R)^2 + H R^2 / 2`` (f_t >= 0)."""
    return max(0.5 * (abs(f.y) + np.linalg.norm(f.v) * R) ** 2 + 0.5 * f.ridge * R * R
               for f in stream)


def comparator(stream: list[SquaredLoss], R: float) -> float:
    """``min_{||w|| <= R} sum_t f_t(w)`` exactly: the quadratic ``1/2 w'Aw - b'w + c`` over a ball
    (trust-region subproblem; ``A`` is positive definite thanks to the ridge)."""
    V = np.array([f.v for f in stream])
    y = np.array([f.y for f in stream])
    H = sum(f.ridge for f in stream)
    A = V.T @ V + H * np.eye(V.shape[1])
    b = V.T @ y
    evals, evecs = np.linalg.eigh(A)
    bb = evecs.T @ b

    def w_of(lam: float) -> np.ndarray:
        return evecs @ (bb / (evals + lam))

    w = w_of(0.0)
    if np.linalg.norm(w) > R:
        hi = 1.0
        while np.linalg.norm(w_of(hi)) > R:
            hi *= 2.0
        lam = optimize.brentq(lambda l: np.linalg.norm(w_of(l)) - R, 0.0, hi, xtol=1e-14)
        w = w_of(lam)
    return float(sum(float(f.value(w)) for f in stream))


def regret(trajectories: np.ndarray, stream: list[SquaredLoss], best: float) -> np.ndarray:
    """Per-run regret of released/played points ``(n_runs, T, d)``."""
    total = np.zeros(trajectories.shape[0])
    for t, f in enumerate(stream):
        total += f.value(trajectories[:, t])
    return total - best


def summary(values: np.ndarray) -> tuple[float, float]:
    return float(values.mean()), float(values.std(ddof=1) / math.sqrt(len(values)))


def run(horizons: list[int], epsilons: list[float], runs: int, seed: int, d_full: int,
        d_bandit: int, H: float) -> dict[str, Any]:
    root = np.random.SeedSequence(seed)
    full: dict[str, list[float]] = {"FTAL (non-private)": []}
    full_se: dict[str, list[float]] = {"FTAL (non-private)": []}
    bandit: dict[str, list[float]] = {"bandit FTAL (non-private, Thm 12)": []}
    bandit_se: dict[str, list[float]] = {"bandit FTAL (non-private, Thm 12)": []}
    bounds_full: dict[str, list[float]] = {"FTAL bound (Fact 9 + Claim 10)": []}
    bounds_bandit: dict[str, list[float]] = {}
    consts: dict[str, list[float]] = {"L": [], "B": []}
    for eps in epsilons:
        full[f"PFTAL eps={eps:g}"] = []
        full_se[f"PFTAL eps={eps:g}"] = []
        bounds_full[f"Theorem 4 bound eps={eps:g}"] = []
        bandit[f"private bandit FTAL eps={eps:g}"] = []
        bandit_se[f"private bandit FTAL eps={eps:g}"] = []
        bounds_bandit[f"Theorem 6 bound eps={eps:g}"] = []
    for T, ss in zip(horizons, root.spawn(len(horizons))):
        t0 = time.perf_counter()
        s_stream, s_runs = ss.spawn(2)
        rng_stream = np.random.default_rng(s_stream)
        run_seeds = s_runs.spawn(2 + 2 * len(epsilons))

        # full information, dimension d_full
        dom = Ball(d_full, RADIUS)
        stream = make_stream(T, d_full, H, rng_stream)
        L = max(f.lipschitz(dom) for f in stream)
        best = comparator(stream, RADIUS)
        consts["L"].append(L)
        m, se = summary(regret(FTAL(dom, H).run(stream, runs, np.random.default_rng(run_seeds[0])),
                               stream, best))
        full["FTAL (non-private)"].append(m)
        full_se["FTAL (non-private)"].append(se)
        bounds_full["FTAL bound (Fact 9 + Claim 10)"].append(
            2 * (L + H * RADIUS) ** 2 * math.log(T) / H)
        for k, eps in enumerate(epsilons):
            traj = PFTAL(dom, H, L, eps, T).run(stream, runs,
                                                np.random.default_rng(run_seeds[2 + k]))
            m, se = summary(regret(traj, stream, best))
            full[f"PFTAL eps={eps:g}"].append(m)
            full_se[f"PFTAL eps={eps:g}"].append(se)
            bounds_full[f"Theorem 4 bound eps={eps:g}"].append(
                theorem4_regret_bound(T, d_full, L, H, RADIUS, eps))

        # bandit, dimension d_bandit
        domb = Ball(d_bandit, RADIUS)
        streamb = make_stream(T, d_bandit, H, rng_stream)
        Lb = max(f.lipschitz(domb) for f in streamb)
        B = loss_bound(streamb, RADIUS)
        bestb = comparator(streamb, RADIUS)
        consts["B"].append(B)
        s12 = theorem12_schedule(d_bandit, T, RADIUS, "oblivious")
        traj = BanditFTAL(domb, H, B, s12.beta).run(streamb, runs,
                                                    np.random.default_rng(run_seeds[1]))
        m, se = summary(regret(traj, streamb, bestb))
        bandit["bandit FTAL (non-private, Thm 12)"].append(m)
        bandit_se["bandit FTAL (non-private, Thm 12)"].append(se)
        s6 = theorem6_schedule(d_bandit, T, RADIUS, "oblivious")
        for k, eps in enumerate(epsilons):
            traj = PrivateBanditFTAL(domb, H, B, s6.beta, eps, T).run(
                streamb, runs, np.random.default_rng(run_seeds[2 + len(epsilons) + k]))
            m, se = summary(regret(traj, streamb, bestb))
            bandit[f"private bandit FTAL eps={eps:g}"].append(m)
            bandit_se[f"private bandit FTAL eps={eps:g}"].append(se)
            bounds_bandit[f"Theorem 6 bound eps={eps:g}"].append(
                theorem6_regret_bound(T, d_bandit, Lb, H, B, RADIUS, RADIUS, eps, s6.beta,
                                      "oblivious"))
        print(f"T = {T}: done in {time.perf_counter() - t0:.1f} s", flush=True)
    return {
        "meta": {"seed": seed, "runs": runs, "horizons": horizons, "epsilons": epsilons,
                 "d_full_information": d_full, "d_bandit": d_bandit, "H": H, "radius": RADIUS,
                 "declared_constants": consts,
                 "stream": "ridge regression on the unit ball (module docstring)",
                 "paper": "st13.txt (Smith & Thakurta, NeurIPS 2013): Theorems 4, 6, 12"},
        "full_information": {"T": horizons, "series": full, "stderr": full_se,
                             "bounds": bounds_full, "ylabel": "expected regret"},
        "bandit": {"T": horizons, "series": bandit, "stderr": bandit_se,
                   "bounds": bounds_bandit, "ylabel": "expected regret"},
    }


def _table(title: str, block: dict[str, Any]) -> str:
    names = list(block["series"]) + list(block["bounds"])
    width = max(len(n) for n in names) + 2
    lines = [title, "T".rjust(width) + "".join(f"{T:>14d}" for T in block["T"])]
    for name, vals in block["series"].items():
        lines.append(name.rjust(width) + "".join(f"{v:>14.4g}" for v in vals))
    for name, vals in block["bounds"].items():
        lines.append(name.rjust(width) + "".join(f"{v:>14.4g}" for v in vals))
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--horizons", type=int, nargs="+", default=[64, 256, 1024, 4096, 16384])
    parser.add_argument("--epsilons", type=float, nargs="+", default=[0.5, 1.0, 2.0, 4.0])
    parser.add_argument("--runs", type=int, default=50, help="independent runs per learner")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--dim", type=int, default=5, help="dimension, full information")
    parser.add_argument("--bandit-dim", type=int, default=2, help="dimension, bandit")
    parser.add_argument("--strong-convexity", type=float, default=0.5, help="H (ridge)")
    parser.add_argument("--out", default=os.path.join("out", "st13_regret.json"))
    args = parser.parse_args()
    t0 = time.perf_counter()
    result = run(args.horizons, args.epsilons, args.runs, args.seed, args.dim, args.bandit_dim,
                 args.strong_convexity)
    result["meta"]["seconds"] = time.perf_counter() - t0
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as fh:
        json.dump(result, fh, indent=1)
    print(_table("Full information (PFTAL vs FTAL), mean regret", result["full_information"]))
    print(_table("Bandit (Algorithm 3 vs eq. (8)), mean regret", result["bandit"]))
    print(f"wrote {args.out} in {result['meta']['seconds']:.0f} s")


if __name__ == "__main__":
    main()
