"""Before/after check for speed work on the engine: a change that only makes ``dpaudit.audit``
faster must leave every field of its results unchanged for the same seed.

``record`` runs a fixed set of varied audits (scalar, vector, discrete, trajectory, delta > 0,
atoms, lattice outputs with signed zeros, a user statistic, several test events, a pilot over
candidate pairs, the joint test, a violated mechanism, float32 outputs) and a few bundled claims at
the quick budget (``dpaudit.audit_claim``), and writes each result's ``to_dict()`` (timing fields
dropped) to a JSON file. ``compare`` reruns them and compares field by field against such a file:
strings, integers and booleans exactly, floats to ``--rtol`` relative (default 1e-12; floats are
compared with a tolerance because numpy kernels may differ between CPUs).

Usage::

    python benchmarks/audit_identity.py record before.json     # on the old code
    python benchmarks/audit_identity.py compare before.json    # on the new code
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from typing import Any, Callable

import numpy as np

import dpaudit
from bench_audit import noisy_trajectory  # the engine benchmark's trajectory, one definition
from dpaudit.mechanisms.exponential import ExponentialMechanism
from dpaudit.mechanisms.gaussian import GaussianMechanism
from dpaudit.mechanisms.laplace import LaplaceMechanism

#: Result fields that measure time, not the result.
TIMING_KEYS = frozenset({"seconds", "sampling_seconds", "timing"})
#: Bundled claims audited at the quick budget (cheap ones of three papers: a learner that holds,
#: one that is violated, a tree aggregation).
CLAIMS = ("afkt23/alg1-pure", "jkt12-colt/privatesum", "pfcoco/prop-a1")



def _censored(data: float, n: int, rng: np.random.Generator) -> np.ndarray:
    """Laplace clipped to [-1, 2]: atoms at both ends (histogram bins of their own)."""
    return np.clip(data + rng.laplace(0.0, 1.0, n), -1.0, 2.0)


def _rounded(data: float, n: int, rng: np.random.Generator) -> np.ndarray:
    """Laplace(20) rounded to integers as floats: a lattice statistic with -0.0 and 0.0 outputs
    (np.round(-0.3) is -0.0), more distinct values than a discrete output may have."""
    return np.round(data + rng.laplace(0.0, 20.0, n))


def _peaked(data: float, n: int, rng: np.random.Generator) -> np.ndarray:
    """N(0, 1) on data 0; on data 1, half of the runs from N(0.5, 0.05^2) instead: a likelihood
    ratio peaked in the middle of the outputs (a histogram statistic beats the identity)."""
    x = rng.normal(0.0, 1.0, n)
    return np.where(rng.random(n) < 0.5 * data, rng.normal(0.5, 0.05, n), x)


def _float32(data: float, n: int, rng: np.random.Generator) -> np.ndarray:
    return (data + rng.laplace(0.0, 1.0, n)).astype(np.float32)


def _coin(data: float, n: int, rng: np.random.Generator) -> np.ndarray:
    p = 0.5 + 0.2 * data
    return rng.random(n) < p


def _sentinel(data: float, n: int, rng: np.random.Generator) -> np.ndarray:
    """A release that is a sentinel (-1) half the time: a large atom among continuous values."""
    x = data + rng.normal(0.0, 1.0, n)
    return np.where(rng.random(n) < 0.5, -1.0, x)


def audits() -> list[tuple[str, Callable[[], Any]]]:
    lap = LaplaceMechanism(1.0, 1.0)
    gau = GaussianMechanism(1.0, 1.0)
    exp = ExponentialMechanism.from_epsilon(1.0, 1.0, form="half", maximize=True)
    a = dpaudit.audit
    return [
        ("laplace-1e6", lambda: a(lap, 0.0, 1.0, epsilon=1.0, samples=10**6, seed=0)),
        ("laplace-2e5-seed3", lambda: a(lap, 0.0, 1.0, epsilon=1.0, samples=200_000, seed=3)),
        ("laplace-half-scale-violated", lambda: a(LaplaceMechanism(1.0, 0.5), 0.0, 1.0,
                                                  epsilon=1.0, samples=100_000, seed=1)),
        ("gaussian-delta", lambda: a(gau, 0.0, 1.0, epsilon=1.0, delta=1e-5, samples=300_000,
                                     seed=2)),
        ("laplace-test-events-2", lambda: a(lap, 0.0, 1.0, epsilon=0.5, samples=100_000, seed=4,
                                            test_events=2, alpha=0.1)),
        ("exponential-discrete", lambda: a(exp, np.r_[1.0, np.zeros(9)], np.r_[0.0, np.ones(9)],
                                           epsilon=1.0, samples=200_000, seed=0)),
        ("coin-bool", lambda: a(_coin, 0.0, 1.0, epsilon=1.0, samples=50_000, seed=5)),
        ("gaussian-vector-32", lambda: a(gau, np.zeros(32), np.r_[1.0, np.zeros(31)],
                                         epsilon=1.0, samples=40_000, seed=0)),
        ("trajectory", lambda: a(noisy_trajectory(16, 4, 1.0), np.zeros(4), np.r_[0.2, np.zeros(3)],
                                 epsilon=1.0, samples=20_000, seed=0)),
        ("censored-atoms", lambda: a(_censored, 0.0, 1.0, epsilon=1.0, samples=200_000, seed=6)),
        ("sentinel-atom", lambda: a(_sentinel, 0.0, 1.0, epsilon=1.0, samples=200_000, seed=7)),
        ("rounded-signed-zeros", lambda: a(_rounded, 0.0, 1.0, epsilon=0.1, samples=200_000,
                                           seed=8)),
        ("rounded-continuous-lattice", lambda: a(lambda d, n, r: np.round(d + r.laplace(
            0.0, 200.0, n)), 0.0, 1.0, epsilon=0.01, samples=200_000, seed=14)),
        ("peaked-histogram", lambda: a(_peaked, 0.0, 1.0, epsilon=1.0, samples=200_000,
                                        seed=15)),
        ("float32-outputs", lambda: a(_float32, 0.0, 1.0, epsilon=1.0, samples=100_000, seed=9)),
        ("user-statistic", lambda: a(lap, 0.0, 1.0, epsilon=1.0, samples=100_000, seed=10,
                                     statistic=lambda o: np.abs(o - 0.5))),
        ("pairs-pilot", lambda: a(lap, pairs=[(0.0, 0.5), (0.0, 1.0), (1.0, 0.0)], epsilon=1.0,
                                  samples=100_000, seed=11)),
        ("joint-test", lambda: a(lap, 0.0, 1.0, epsilon=1.0, samples=100_000, seed=12,
                                 joint_test=True)),
        ("laplace-small", lambda: a(lap, 0.0, 1.0, epsilon=1.0, samples=2_000, seed=13)),
    ]


def _strip(x: Any) -> Any:
    if isinstance(x, dict):
        return {k: _strip(v) for k, v in x.items() if k not in TIMING_KEYS}
    if isinstance(x, (list, tuple)):
        return [_strip(v) for v in x]
    return x


def run(names: list[str] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, fn in audits():
        if names and name not in names:
            continue
        t0 = time.perf_counter()
        out[name] = _strip(fn().to_dict())
        print(f"{name:32s} {time.perf_counter() - t0:7.2f} s", file=sys.stderr)
    for cid in CLAIMS:
        if names and cid not in names:
            continue
        t0 = time.perf_counter()
        out[cid] = _strip(dpaudit.audit_claim(cid, budget="quick", seed=0).to_dict())
        print(f"{cid:32s} {time.perf_counter() - t0:7.2f} s", file=sys.stderr)
    return json.loads(json.dumps(out, default=str))


def differences(a: Any, b: Any, rtol: float, path: str = "") -> list[str]:
    """Where ``a`` and ``b`` differ: floats beyond ``rtol`` relative, anything else at all."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = [f"{path}/{k}: only in one" for k in sorted(set(a) ^ set(b))]
        for k in sorted(set(a) & set(b)):
            out += differences(a[k], b[k], rtol, f"{path}/{k}")
        return out
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{path}: length {len(a)} != {len(b)}"]
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in differences(x, y, rtol,
                                                                            f"{path}[{i}]")]
    if isinstance(a, float) or isinstance(b, float):
        if isinstance(a, (int, float)) and isinstance(b, (int, float)) and \
                not isinstance(a, bool) and not isinstance(b, bool):
            if a == b or (math.isnan(a) and math.isnan(b)) or \
                    abs(a - b) <= rtol * max(abs(a), abs(b)):
                return []
        return [f"{path}: {a!r} != {b!r}"]
    return [] if a == b and type(a) is type(b) else [f"{path}: {a!r} != {b!r}"]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("action", choices=("record", "compare"))
    p.add_argument("path")
    p.add_argument("--only", nargs="*", help="names of the audits / claims to run")
    p.add_argument("--rtol", type=float, default=1e-12)
    args = p.parse_args(argv)
    got = run(args.only)
    if args.action == "record":
        with open(args.path, "w") as f:
            json.dump(got, f, indent=1, sort_keys=True)
        print(f"recorded {len(got)} results in {args.path}")
        return 0
    with open(args.path) as f:
        want = json.load(f)
    bad = 0
    for name, res in got.items():
        diffs = differences(want.get(name), res, args.rtol)
        bad += bool(diffs)
        print(f"{name:32s} {'identical' if not diffs else f'{len(diffs)} differences'}")
        for d in diffs[:10]:
            print("   ", d)
    print(f"{len(got) - bad} of {len(got)} identical (floats to {args.rtol:g} relative)")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
