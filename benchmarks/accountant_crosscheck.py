"""Cross-check DP-SGD's accountant, :class:`dpaudit.noise.PoissonSampledGaussian`, against
dp-accounting's RDP bound and prv-accountant on a grid of noise multipliers, sampling rates and
step counts (add/remove neighbours, delta = 1e-5), and print the Markdown table of
docs/accountants.md.

prv-accountant is not a dpaudit dependency: install it into a scratch environment and point
``--prv-python`` at that interpreter (it is called once per row, in a subprocess)::

    python3 -m venv /tmp/prv && /tmp/prv/bin/pip install prv-accountant==0.2.0
    PYTHONPATH=src .venv/bin/python benchmarks/accountant_crosscheck.py \\
        --prv-python /tmp/prv/bin/python --json benchmarks/results/accountant_crosscheck.json

Columns: dpaudit's epsilon (pessimistic PLD, an upper bound; the exact closed form at q = 1), the
RDP bound (Mironov, Talwar & Zhang 2019), prv-accountant's certified interval ``[low, up]``
(Gopi, Lee & Wutschitz 2021, ``eps_error = 0.01``), and whether dpaudit's value lies in
``[low, up + 1e-3]`` (at or above the truth, within one PLD grid step beyond prv's upper end).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

from dpaudit.noise import PoissonSampledGaussian

DELTA = 1e-5
GRID = [(z, q, T) for z in (0.5, 1.0, 4.0, 8.0) for q in (0.001, 0.01, 0.1, 1.0)
        for T in (1, 100, 10_000)]

_PRV = """
import json, sys
from prv_accountant.dpsgd import DPSGDAccountant
z, q, T, delta = json.loads(sys.argv[1])
acc = DPSGDAccountant(noise_multiplier=z, sampling_probability=q, max_steps=T, eps_error=0.01,
                      delta_error=1e-10)
print(json.dumps(acc.compute_epsilon(delta=delta, num_steps=T)))
"""


def prv_interval(python: str, z: float, q: float, T: int) -> list[float] | None:
    """prv-accountant's (low, estimate, up) for the point, or None when it fails there."""
    out = subprocess.run([python, "-c", _PRV, json.dumps([z, q, T, DELTA])],
                         capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        return None
    return [float(v) for v in json.loads(out.stdout.strip().splitlines()[-1])]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--prv-python", help="interpreter with prv-accountant installed")
    parser.add_argument("--json", help="also write the rows to this JSON file")
    parser.add_argument("--max-epsilon", type=float, default=100.0,
                        help="leave out rows whose epsilon exceeds this (default 100)")
    args = parser.parse_args(argv)
    rows = []
    print("| z | q | T | dpaudit (PLD) | RDP | prv [low, up] | in range | seconds |")
    print("|---:|---:|---:|---:|---:|---|---|---:|")
    for z, q, T in GRID:
        t0 = time.process_time()
        acc = PoissonSampledGaussian(z, q, T).accounted(DELTA, neighbours="add-remove")
        seconds = time.process_time() - t0
        eps, rdp = acc["epsilon"], acc["epsilon_rdp"]
        if eps > args.max_epsilon:
            continue
        prv = prv_interval(args.prv_python, z, q, T) if args.prv_python else None
        ok = "n/a" if prv is None else ("yes" if prv[0] - 1e-9 <= eps <= prv[2] + 1e-3
                                        else "**no**")
        cell = "not run" if prv is None else f"[{prv[0]:.4f}, {prv[2]:.4f}]"
        print(f"| {z:g} | {q:g} | {T} | {eps:.4f} | {rdp:.4f} | {cell} | {ok} | {seconds:.1f} |",
              flush=True)
        rows.append({"z": z, "q": q, "T": T, "epsilon": eps, "epsilon_rdp": rdp, "prv": prv,
                     "in_range": ok, "cpu_seconds": seconds})
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"delta": DELTA, "neighbours": "add-remove", "rows": rows}, fh, indent=1)
    return 0 if all(r["in_range"] != "**no**" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
