"""Runs per second of the torch draw source's replay next to plain sampling, for a 16-step
full-batch noisy-gradient trajectory (tests/_torch_source_lib.py: train_linear, 2 weights), and
the time to derive and verify its law. Needs torch (the library venv):

    PYTHONPATH=src:tests /work/venv-torch/bin/python benchmarks/torch_source_bench.py
"""

import sys
import time

import numpy as np
import torch

import _torch_source_lib as lib
from dpaudit.greybox import ReplayGenerator, derive_pair
from dpaudit.greybox.sources import run_release
from dpaudit.greybox.verification import verify_pair

X0 = [[0.3, 0.4], [-0.2, 0.1], [3.0, 4.0]]
X1 = X0[:2]
NM, STEPS = 15.0, 16


def release(dtype):
    def rel(x, n, rng):
        torch.manual_seed(int(rng.integers(2**31)))
        return lib.train_linear(x, n, STEPS, 0.1, NM, 1.0, dtype=dtype)
    return rel


def per_run(rel):  # the same release, one run per loop pass (per-run layout)
    def loop(x, n, rng):
        return torch.cat([rel(x, 1, rng) for _ in range(n)])
    return loop


def rate(f, n, reps=3):
    best = min(_once(f, n) for _ in range(reps))
    return n / best


def _once(f, n):
    t = time.perf_counter()
    f(n)
    return time.perf_counter() - t


def main() -> None:
    torch.set_num_threads(1)
    for dtype in (torch.float64, torch.float32):
        for layout, mk in (("vector", lambda r: r), ("per-run", per_run)):
            rel = mk(release(dtype))
            n = 10_000 if layout == "vector" else 500
            k = STEPS * 2
            plain = rate(lambda m: rel(X0, m, np.random.default_rng(0)), n)
            Z = np.random.default_rng(1).standard_normal((n, k))

            def sub(m):
                calls = [0]

                def supply(offset, shape, family):
                    size = int(np.prod(shape))
                    out = Z.reshape(-1)[calls[0]:calls[0] + size].reshape(shape)
                    calls[0] += size
                    return out
                run_release(rel, X0, m, ReplayGenerator(0, supply))
            replay = rate(sub, n)
            t = time.perf_counter()
            pair = derive_pair(rel, X0, X1)
            t_derive = time.perf_counter() - t
            t = time.perf_counter()
            ver = verify_pair(rel, pair, (X0, X1), runs=10_000, seed=0, alpha=0.01)
            t_verify = time.perf_counter() - t
            print(f"{str(dtype):14s} {layout:8s} plain {plain:10.0f} runs/s  replay {replay:10.0f} "
                  f"runs/s  derive {t_derive:6.2f} s  verify 2x10^4 runs {t_verify:6.2f} s  "
                  f"eps(1e-5) {pair.epsilon(1e-5).value:.6f}  departures "
                  f"{sum(c.departures for c in ver.per_input)} of {sum(c.runs for c in ver.per_input)}")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
