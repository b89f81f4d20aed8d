"""Benchmark of the empirical auditor (dpaudit.audit): speed and tightness.

Speed: for a few mechanisms (cheap scalar sampler, vector outputs, discrete outputs, trajectories),
the whole audit pipeline's throughput (runs per second over both inputs) is printed next to the
time it takes just to draw the same runs with the same chunking, and their ratio, all measured in
one run of this script. The cheaper the sampler, the larger the ratio: it is the auditor's
overhead on top of sampling.

Tightness: the lower bound divided by the exact epsilon (or mu) for the reference settings of
issues 3 and 15: Laplace eps = 1 (1e6 runs per input), Laplace eps = 0.1 (1e7), Gaussian
mechanism at delta = 1e-5 with exact epsilon 1 (1e6 and 1e7), Gaussian-DP mu = 1 (1e6). For the
Gaussian rows the "ceiling" column is the best any single threshold event, or pooled mirrored
pair of them, can give at this test-split size and level: the bound computed from the exact
tail probabilities at the median counts, maximised over the threshold (an oracle that knows the
mechanism; a real audit also pays for choosing the threshold on the selection split and for the
test split's sampling noise, about +-0.03 at 1e7).

Speed is shown as wall-clock and as CPU-time ratios: on a shared machine the wall clock of
either side moves with the load, the process CPU time much less.

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
from scipy import optimize, special, stats

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


def draw_only(mech: Mechanism, d0: Any, d1: Any, samples: int, chunk: int, seed: int
              ) -> tuple[float, float]:
    """Wall and CPU seconds to draw ``samples`` runs per input with the audit's chunking and
    seeding pattern."""
    t0, c0 = time.perf_counter(), time.process_time()
    for data, child in zip((d0, d1), np.random.SeedSequence(seed).spawn(2)):
        done = 0
        while done < samples:
            m = min(chunk, samples - done)
            mech(data, m, np.random.default_rng(child.spawn(1)[0]))
            done += m
    return time.perf_counter() - t0, time.process_time() - c0


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
          f"{'draw s':>8s} {'audit runs/s':>13s} {'draw runs/s':>13s} {'ratio':>6s} {'cpu':>6s}")
    for name, mech, d0, d1, n in cases:
        # Alternate audit and plain drawing so that both see the same machine load.
        audits, cpu, draws, draw_cpu = [], [], [], []
        for _ in range(repeats):
            c0 = time.process_time()
            audits.append(dpaudit.audit(mech, d0, d1, epsilon=1.0, samples=n, seed=seed))
            cpu.append(time.process_time() - c0)
            wall, c = draw_only(mech, d0, d1, n, audits[-1].chunk_size, seed + 1)
            draws.append(wall)
            draw_cpu.append(c)
        r = min(audits, key=lambda a: a.seconds)
        t_draw = min(draws)
        print(f"{name:38s} {n:10d} {r.seconds:8.3f} {r.sampling_seconds:8.3f} {t_draw:8.3f} "
              f"{2 * n / r.seconds:13.3g} {2 * n / t_draw:13.3g} {r.seconds / t_draw:6.2f} "
              f"{min(cpu) / min(draw_cpu):6.2f}")
    print("ratio = audit seconds / drawing seconds (wall clock, best of each); cpu = the same with "
          "process CPU time; (calls) = time inside the mechanism during the audit "
          "(AuditResult.sampling_seconds)")


def gaussian_ceiling(mu: float, delta: float, n_test: int, alpha: float = 0.05,
                     pooled: bool = False) -> float:
    """The oracle ceiling of the Gaussian rows: ``max_t ln((p_lo - delta) / q_hi)`` with exact
    one-sided Clopper-Pearson ends at the median counts of the exact tail probabilities
    (``P1[X > t]``, ``P0[X > t]`` for a shift ``mu`` in units of sigma), per-interval level
    ``1 - sqrt(1 - alpha)``, over ``n_test`` test runs per input, or ``2 n_test`` pooled runs
    for a mirrored pair (which for a symmetric mechanism has the same two rates)."""
    a = 1.0 - math.sqrt(1.0 - alpha)
    n = 2 * n_test if pooled else n_test
    t = np.linspace(0.5, 8.0, 3000)
    p1, p0 = stats.norm.sf(t - mu), stats.norm.sf(t)
    k1, k0 = stats.binom.median(n, p1), stats.binom.median(n, p0)
    lo = np.where(k1 > 0, special.betaincinv(np.maximum(k1, 1), n - k1 + 1, a), 0.0)
    hi = special.betaincinv(k0 + 1, n - k0, 1 - a)
    with np.errstate(divide="ignore", invalid="ignore"):
        v = np.where(lo > delta, np.log((lo - delta) / hi), -np.inf)
    return float(np.max(v))


def tightness(seed: int) -> None:
    mu_delta = gaussian_mu_for(1.0, 1e-5)
    rows = [
        ("Laplace eps = 1", laplace(1.0), dict(epsilon=1.0), 1_000_000, 1.0, "epsilon", 0.99),
        ("Laplace eps = 0.1", laplace(10.0), dict(epsilon=0.1), 10_000_000, 0.1, "epsilon", 0.98),
        ("Gaussian, delta = 1e-5, exact eps = 1", gaussian(1.0 / mu_delta),
         dict(epsilon=1.0, delta=1e-5), 1_000_000, 1.0, "epsilon", None),
        ("Gaussian, delta = 1e-5, exact eps = 1", gaussian(1.0 / mu_delta),
         dict(epsilon=1.0, delta=1e-5), 10_000_000, 1.0, "epsilon", 0.9),
        ("Gaussian-DP mu = 1", gaussian(1.0), dict(epsilon=1.0), 1_000_000, 1.0, "mu", 0.95),
    ]
    print("\nTightness: lower bound / exact value (alpha = 0.05, pair (0, 1))")
    print(f"{'setting':40s} {'runs/input':>10s} {'bound':>8s} {'exact':>7s} {'ratio':>6s} "
          f"{'target':>7s} {'ceiling':>15s} {'seconds':>8s}  event")
    for name, mech, claim, n, exact, what, target in rows:
        r = dpaudit.audit(mech, 0.0, 1.0, samples=n, seed=seed, **claim)
        bound = r.epsilon_lower_bound if what == "epsilon" else r.mu_lower_bound
        tgt = "report" if target is None else f">={target}"
        ceiling, kind = "", ""
        if claim.get("delta"):
            one = gaussian_ceiling(mu_delta, claim["delta"], r.n_test)
            two = gaussian_ceiling(mu_delta, claim["delta"], r.n_test, pooled=True)
            ceiling = f"{one:.3f}/{two:.3f}"
            kind = "pooled pair" if r.event is not None and r.event.components else "single"
        print(f"{name:40s} {n:10d} {bound:8.4f} {exact:7.3g} {bound / exact:6.3f} {tgt:>7s} "
              f"{ceiling:>15s} {r.seconds:8.2f}  {kind}")
    print("ceiling = oracle bound (exact tail rates at median counts, best threshold) of a single "
          "event / of a pooled mirrored pair at this test size")


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
