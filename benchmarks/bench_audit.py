"""Benchmark of the empirical auditor (dpaudit.audit): speed and tightness.

Speed: for a few mechanisms (cheap scalar sampler, vector outputs, discrete outputs, trajectories),
the whole audit pipeline's throughput (runs per second over both inputs) is printed next to the
time it takes just to draw the same runs with the same chunking, and their ratio, all measured in
one run of this script. The cheaper the sampler, the larger the ratio: it is the auditor's
overhead on top of sampling.

Tightness: the lower bound divided by the exact epsilon (or mu) for the reference settings of
issue 3: Laplace eps = 1 (1e6 runs per input), Laplace eps = 0.1 (1e7), Gaussian mechanism at
delta = 1e-5 with exact epsilon 1 (1e6), Gaussian-DP mu = 1 (1e6).

Usage::

    python benchmarks/bench_audit.py                 # default, under ~2 minutes on one core
    python benchmarks/bench_audit.py --samples 200000 --seed 3 --skip-tightness
"""

from __future__ import annotations

import argparse
import math
import time
from typing import Any, Callable

import numpy as np
from scipy import optimize, stats

import dpaudit
from dpaudit.mechanisms.exponential import ExponentialMechanism
from dpaudit.mechanisms.gaussian import GaussianMechanism
from dpaudit.mechanisms.laplace import LaplaceMechanism

Mechanism = Callable[[Any, int, np.random.Generator], np.ndarray]


def laplace(scale: float) -> Mechanism:
    return LaplaceMechanism(1.0, scale)


def gaussian(sigma: float) -> Mechanism:
    return GaussianMechanism(1.0, sigma)


def exponential_mechanism(eps: float) -> Mechanism:
    return ExponentialMechanism.from_epsilon(1.0, eps, form="half", maximize=True)


def noisy_trajectory(T: int, d: int, sigma: float) -> Mechanism:
    """A noisy gradient-descent-like trajectory: x_t = x_{t-1} - 0.1 (x_{t-1} - data) + noise."""
    def mech(target, n, rng):
        x = np.zeros((n, d))
        out = np.empty((n, T, d))
        for t in range(T):
            x = x - 0.1 * (x - target) + rng.normal(0.0, sigma, size=(n, d))
            out[:, t] = x
        return out
    return mech


def gaussian_mu_for(eps: float, delta: float) -> float:
    def excess(mu: float) -> float:
        return (stats.norm.cdf(-eps / mu + mu / 2)
                - math.exp(eps) * stats.norm.cdf(-eps / mu - mu / 2) - delta)
    return optimize.brentq(excess, 1e-3, 20.0)


def draw_only(mech: Mechanism, d0: Any, d1: Any, samples: int, chunk: int, seed: int) -> float:
    """Seconds to draw ``samples`` runs per input with the audit's chunking and seeding pattern."""
    t0 = time.perf_counter()
    for data, child in zip((d0, d1), np.random.SeedSequence(seed).spawn(2)):
        done = 0
        while done < samples:
            m = min(chunk, samples - done)
            mech(data, m, np.random.default_rng(child.spawn(1)[0]))
            done += m
    return time.perf_counter() - t0


def speed(samples: int, seed: int, repeats: int) -> None:
    cases = [
        ("Laplace scalar", laplace(1.0), 0.0, 1.0, samples),
        ("exponential mechanism, 10 outcomes", exponential_mechanism(1.0),
         np.r_[1.0, np.zeros(9)], np.r_[0.0, np.ones(9)], samples),
        ("Gaussian vector, d = 32", gaussian(1.0), np.zeros(32),
         np.r_[1.0, np.zeros(31)], max(10, samples // 4)),
        ("noisy trajectory, T = 32, d = 4", noisy_trajectory(32, 4, 1.0), np.zeros(4),
         np.r_[0.2, np.zeros(3)], max(10, samples // 10)),
    ]
    print(f"Speed: whole audit pipeline vs drawing the same runs (both inputs), best of {repeats}")
    print(f"{'mechanism':38s} {'runs/input':>10s} {'audit s':>8s} {'(calls)':>8s} "
          f"{'draw s':>8s} {'audit runs/s':>13s} {'draw runs/s':>13s} {'ratio':>6s}")
    for name, mech, d0, d1, n in cases:
        # Alternate audit and plain drawing so that both see the same machine load.
        audits, draws = [], []
        for _ in range(repeats):
            audits.append(dpaudit.audit(mech, d0, d1, epsilon=1.0, samples=n, seed=seed))
            draws.append(draw_only(mech, d0, d1, n, audits[-1].chunk_size, seed + 1))
        r = min(audits, key=lambda a: a.seconds)
        t_draw = min(draws)
        print(f"{name:38s} {n:10d} {r.seconds:8.3f} {r.sampling_seconds:8.3f} {t_draw:8.3f} "
              f"{2 * n / r.seconds:13.3g} {2 * n / t_draw:13.3g} {r.seconds / t_draw:6.2f}")
    print("ratio = audit seconds / drawing seconds; (calls) = time inside the mechanism during "
          "the audit (AuditResult.sampling_seconds)")


def tightness(seed: int) -> None:
    mu_delta = gaussian_mu_for(1.0, 1e-5)
    rows = [
        ("Laplace eps = 1", laplace(1.0), dict(epsilon=1.0), 1_000_000, 1.0, "epsilon", 0.95),
        ("Laplace eps = 0.1", laplace(10.0), dict(epsilon=0.1), 10_000_000, 0.1, "epsilon", 0.9),
        ("Gaussian, delta = 1e-5, exact eps = 1", gaussian(1.0 / mu_delta),
         dict(epsilon=1.0, delta=1e-5), 1_000_000, 1.0, "epsilon", None),
        ("Gaussian-DP mu = 1", gaussian(1.0), dict(epsilon=1.0), 1_000_000, 1.0, "mu", 0.95),
    ]
    print("\nTightness: lower bound / exact value (alpha = 0.05, pair (0, 1))")
    print(f"{'setting':40s} {'runs/input':>10s} {'bound':>8s} {'exact':>7s} {'ratio':>6s} "
          f"{'target':>7s} {'seconds':>8s}")
    for name, mech, claim, n, exact, what, target in rows:
        r = dpaudit.audit(mech, 0.0, 1.0, samples=n, seed=seed, **claim)
        bound = r.epsilon_lower_bound if what == "epsilon" else r.mu_lower_bound
        tgt = "report" if target is None else f">={target}"
        print(f"{name:40s} {n:10d} {bound:8.4f} {exact:7.3g} {bound / exact:6.3f} {tgt:>7s} "
              f"{r.seconds:8.2f}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=1_000_000,
                        help="runs per input for the speed table (default 1e6; vector and "
                             "trajectory cases use 1/4 and 1/10 of it)")
    parser.add_argument("--seed", type=int, default=0, help="root seed (default 0)")
    parser.add_argument("--repeats", type=int, default=3,
                        help="timing repeats per speed case; the best is shown (default 3)")
    parser.add_argument("--skip-tightness", action="store_true",
                        help="only the speed table")
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    speed(args.samples, args.seed, args.repeats)
    if not args.skip_tightness:
        tightness(args.seed)
    print(f"\ntotal {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
