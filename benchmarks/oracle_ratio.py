"""The limit, per mechanism: dpaudit's mean bound as a fraction of an oracle's (issue 36).

For every benchmark mechanism and input pair, the **oracle** knows the exact output law
(``benchmarks/oracle_laws.py``) and so the best event in advance: it spends *all* ``N`` runs per
input on the test (no training split), on the one event (no Bonferroni factor), and decides with
the same valid test as the engine: exact one-sided Clopper-Pearson ends at ``1 - sqrt(1 - alpha)``
each, ``max(0, ln((p_lo - delta) / q_hi))``, and for a ``delta > 0`` claim on a symmetric
mechanism also the engine's pooled mirrored pair (``2 N`` runs behind each rate). Its bound is a
random variable (the test counts are binomial); the **oracle's mean bound** is its expectation,
computed by drawing the two counts ``R`` times from the exact binomial laws, for the event (among
the likelihood-ratio prefix sets of the law's cells, both directions) with the highest expectation.

dpaudit's side: ``dpaudit.audit`` with its defaults on the same pair, at the same ``N``, alpha and
claim, over ``--seeds`` seeds; the table reports its mean bound, its smallest, and the ratio of the
two means. The ratio is what the auditor loses to not knowing the mechanism (choosing the
statistic and the event on 10% of the runs); the oracle's own gap to the pair's epsilon is what
any valid test at this budget loses.

With ``--oracle-only --exact-joint`` the script writes a second table (between the
``oracle-joint`` markers): the oracle with the product of Clopper-Pearson intervals and with the
exact unconditional joint test of ``dpaudit.blackbox.joint_test`` (a sharper valid test of the same
hypothesis), both at the median test counts, at ``--samples`` and at 10^7 runs per input.

Usage (the committed table)::

    OPENBLAS_NUM_THREADS=1 python benchmarks/oracle_ratio.py --write-docs

``--samples`` (default 10^6 runs per input), ``--seeds`` (default 20), ``--only NAME ...``.
The script rewrites the block between the ``oracle-ratio`` markers of docs/benchmarks.md;
``--block NAME`` writes between the ``NAME`` markers instead and keeps its bounds in
``results/NAME.json`` (the learning-limited rows at 10^7 runs: ``--block oracle-ratio-1e7
--samples 10000000 --seeds 3 --only ...``).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np
from scipy import special

import dpaudit

sys.path.insert(0, str(Path(__file__).resolve().parent))
import oracle_laws as L  # noqa: E402
from bench_detection import (T_TREE, D_VECTOR, K_EXP, exponential_utilities,  # noqa: E402
                             naive_counter, tree_counter, tree_levels)
from bench_dpsniper import SUITE  # noqa: E402
from literature_mechanisms import _v, noisy_hist  # noqa: E402
from dpaudit.mechanisms import GaussianMechanism, LaplaceMechanism, analytic_sigma  # noqa: E402

DOC = Path(__file__).resolve().parents[1] / "docs" / "benchmarks.md"
#: dpaudit's bounds per row and seed, written by every run (``--render-only`` re-renders the
#: table from it, recomputing the oracles, which are deterministic).
RESULTS = Path(__file__).resolve().parent / "results" / "oracle_ratio.json"
BEGIN, END = "<!-- oracle-ratio:begin -->", "<!-- oracle-ratio:end -->"
JBEGIN, JEND = "<!-- oracle-joint:begin -->", "<!-- oracle-joint:end -->"


@dataclass(frozen=True)
class Row:
    """One mechanism on one pair: how to audit it and its exact law (``None``: not computed)."""

    suite: str
    name: str
    mechanism: Callable[..., Any]
    data0: Any
    data1: Any
    claim: float
    alpha: float
    law: Callable[[], L.Law] | None
    delta: float = 0.0
    symmetric: bool = False      # the pooled mirrored pair is available to the oracle
    pair_epsilon: float | None = None
    dpsniper: float | None = None
    why_no_law: str = ""


# ------------------------------------------------------------------------------------------------
# The oracle
# ------------------------------------------------------------------------------------------------

def candidate_events(law: L.Law) -> tuple[np.ndarray, np.ndarray]:
    """(P[event | numerator input], P[event | other input]) of the likelihood-ratio prefix sets of
    the cells, in both directions (the complements of one direction's prefixes are the other's)."""
    out_p, out_q = [], []
    for num, den in ((law[0], law[1]), (law[1], law[0])):
        keep = (num > 0) | (den > 0)
        num, den = num[keep], den[keep]
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(den > 0, num / np.where(den > 0, den, 1), np.inf)
        order = np.argsort(-ratio, kind="stable")
        out_p.append(np.minimum(np.cumsum(num[order]), 1.0))
        out_q.append(np.minimum(np.cumsum(den[order]), 1.0))
    return np.concatenate(out_p), np.concatenate(out_q)


def _cp_bound(kp: np.ndarray, kq: np.ndarray, n: int, a: float, delta: float) -> np.ndarray:
    lo = np.where(kp > 0, special.betaincinv(np.maximum(kp, 1), n - kp + 1, a), 0.0)
    hi = np.where(kq < n, special.betaincinv(kq + 1, np.maximum(n - kq, 1), 1 - a), 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        v = np.where(lo > delta, np.log(np.maximum(lo - delta, 1e-300) / hi), 0.0)
    return np.maximum(v, 0.0)


def oracle_cp(law: L.Law, n: int, alpha: float, delta: float, symmetric: bool,
              reps: int = 2000, seed: int = 12345) -> tuple[float, float, float]:
    """The oracle's mean Clopper-Pearson bound; returns (mean, p, q) of the best event."""
    a = 1.0 - math.sqrt(1.0 - alpha)
    p, q = candidate_events(law)
    sizes = [n] + ([2 * n] if symmetric and delta > 0 else [])
    best = (0.0, 0.0, 0.0)
    rng = np.random.default_rng(seed)
    for m in sizes:
        # rank every candidate by its bound at the median counts, then take expectations of the top
        plug = _cp_bound(np.floor(m * p), np.ceil(m * q), m, a, delta)
        top = np.argsort(-plug)[:25]
        for i in top:
            kp = rng.binomial(m, p[i], size=reps).astype(float)
            kq = rng.binomial(m, q[i], size=reps).astype(float)
            mean = float(np.mean(_cp_bound(kp, kq, m, a, delta)))
            if mean > best[0]:
                best = (mean, float(p[i]), float(q[i]))
    return best


def oracle_joint(law: L.Law, n: int, alpha: float, delta: float, candidates: int = 3
                 ) -> tuple[float, float]:
    """The oracle with the exact joint test (``dpaudit.blackbox.joint_test``), at the median
    counts of each candidate (the ``candidates`` best Clopper-Pearson events at the median
    counts): returns (joint bound, Clopper-Pearson bound) of the best, both at the median
    counts, so the two columns compare like with like (a joint bound costs about a second, too
    much for 2000 simulated test splits per mechanism)."""
    from dpaudit.blackbox.joint_test import joint_epsilon_lower_bound

    a = 1.0 - math.sqrt(1.0 - alpha)
    p, q = candidate_events(law)
    kp, kq = np.floor(n * p), np.ceil(n * q)
    plug = _cp_bound(kp, kq, n, a, delta)
    best = (0.0, 0.0)
    for i in np.argsort(-plug)[:candidates]:
        j = joint_epsilon_lower_bound(int(kp[i]), n, int(kq[i]), n, delta=delta, alpha=alpha)
        if j > best[0]:
            best = (j, float(plug[i]))
    return best


def law_epsilon(law: L.Law, delta: float) -> float:
    """The pair's epsilon as far as the cells resolve it: for delta = 0 the largest |log ratio|
    of a cell (cells below 1e-12 on both inputs, beyond the quadrature's resolution, skipped);
    for delta > 0 the smallest epsilon that every prefix event satisfies."""
    p0, p1 = law
    seen = np.maximum(p0, p1) > 1e-12
    p0, p1 = p0[seen], p1[seen]
    with np.errstate(divide="ignore", invalid="ignore"):
        if delta == 0:
            return float(np.max(np.abs(np.log(p0) - np.log(p1))))
        p, q = candidate_events((p0, p1))
        return float(np.max(np.where((p > delta) & (q > 0),
                                     np.log((p - delta) / np.where(q > 0, q, 1)), 0.0)))


# ------------------------------------------------------------------------------------------------
# The mechanisms
# ------------------------------------------------------------------------------------------------

def rows() -> list[Row]:
    out: list[Row] = []
    laws: dict[str, Callable[[], L.Law]] = {
        "Laplace": lambda: L.laplace_shift(1.0, 10.0),
        "NoisyHist1": lambda: L.laplace_shift(1.0, 10.0),
        "NoisyHist2": lambda: L.laplace_shift(1.0, 0.1),
        "ReportNoisyMax1": lambda: L.rnm_index(_v((1, 5)), _v((0, 1), (2, 4)), "laplace"),
        "ReportNoisyMax2": lambda: L.rnm_index(_v((1, 5)), _v((0, 1), (2, 4)), "exponential"),
        "ReportNoisyMax3": lambda: L.rnm_value(_v((0, 5)), _v((1, 5)), "laplace"),
        "ReportNoisyMax4": lambda: L.rnm_value(_v((1, 5)), _v((2, 5)), "exponential"),
        "SVT1": lambda: L.svt_law(1, _v((0, 5), (1, 5)), _v((1, 5), (0, 5)), 0.5),
        "SVT2": lambda: L.svt_law(2, _v((0, 5), (1, 5)), _v((1, 5), (0, 5)), 1.0),
        "SVT3": lambda: L.svt3_law(_v((1, 10)), _v((2, 5), (0, 5))),
        "SVT4": lambda: L.svt_law(4, _v((1, 10)), _v((2, 5), (0, 5)), 1.0),
        "SVT5": lambda: L.svt5_law(_v((2, 5), (0, 5)), _v((1, 10))),
        "SVT6": lambda: L.svt_law(6, _v((1, 5), (0, 5)), _v((0, 5), (1, 5)), 1.0),
        "PrefixSum": lambda: L.laplace_product([1.0] * 10, 10.0),
        "LaplaceParallel": lambda: L.laplace_product([1.0] * 20, 200.0),
        "TruncatedGeometric": lambda: L.truncated_geometric_law(2, 1),
        "Rappor": lambda: L.rappor_law(1, 0, 0.75, True),
        "OneTimeRappor": lambda: L.rappor_law(1, 0, 0.95, False),
        "NumericalSVT": lambda: L.numerical_svt_law(2.0, 1.0),
    }
    no_law = {"SVT34Parallel": "Alg 3 with c = 2 releases two values, each correlated with the "
                               "shared threshold noise (a 2-D quadrature per pair of positions); "
                               "joint law not computed"}
    for name, (mech, a1, a2, ref, _true) in SUITE.items():
        out.append(Row("DP-Sniper suite (eps 0.1, alpha 0.1)", name, mech, a1, a2, 0.1, 0.1,
                       laws.get(name), dpsniper=ref, why_no_law=no_law.get(name, "")))
    levels = tree_levels(T_TREE)
    leaf0, leaf1 = np.zeros(T_TREE), np.r_[1.0, np.zeros(T_TREE - 1)]
    sigma_ok = analytic_sigma(1.0, 1.0, 1e-5)
    u0, u1 = np.r_[1.0, np.zeros(K_EXP - 1)], np.r_[0.0, np.ones(K_EXP - 1)]
    diag = np.full(D_VECTOR, 1 / math.sqrt(D_VECTOR))
    from bench_detection import laplace_vector
    z = "engine zoo (alpha 0.05)"
    out += [
        Row(z, "laplace eps 1", LaplaceMechanism(1.0, 1.0).sample, 0.0, 1.0, 1.0, 0.05,
            lambda: L.laplace_shift(1.0, 1.0)),
        Row(z, "gaussian (1, 1e-5) analytic", GaussianMechanism(1.0, sigma_ok).sample, 0.0, 1.0,
            1.0, 0.05, lambda: L.gaussian_shift(1.0 / sigma_ok), delta=1e-5, symmetric=True),
        Row(z, "gaussian mu = 1 at delta 1e-5", GaussianMechanism(1.0, 1.0).sample, 0.0, 1.0,
            1.0, 0.05, lambda: L.gaussian_shift(1.0), delta=1e-5, symmetric=True),
        Row(z, "exp-mech-correct (8 outcomes)", exponential_utilities(1.0, "half"), u0, u1, 1.0,
            0.05, lambda: L.exponential_law(u0, u1, 0.5)),
        Row(z, "exp-mech-factor-2", exponential_utilities(1.0, "full"), u0, u1, 1.0, 0.05,
            lambda: L.exponential_law(u0, u1, 1.0)),
        Row(z, "tree-correct (T 8)", tree_counter(T_TREE, levels / 1.0), leaf0, leaf1, 1.0, 0.05,
            lambda: L.laplace_product([1.0] * levels, levels / 1.0)),
        Row(z, "tree-per-node (T 8)", tree_counter(T_TREE, 1.0), leaf0, leaf1, 1.0, 0.05,
            lambda: L.laplace_product([1.0] * levels, 1.0)),
        Row(z, "counter-fresh-noise (T 8)", naive_counter(T_TREE, 1.0), leaf0, leaf1, 1.0, 0.05,
            lambda: L.laplace_product([1.0] * T_TREE, 1.0)),
        Row(z, "hist-replace-correct", noisy_hist(2.0), _v((1, 1), (0, 4)),
            _v((0, 1), (1, 1), (0, 3)), 1.0, 0.05, lambda: L.laplace_product([1.0, 1.0], 2.0)),
        Row(z, "l1-for-l2 (d 4)", laplace_vector(1.0), np.zeros(D_VECTOR), diag, 1.0, 0.05,
            lambda: L.laplace_product([0.5] * D_VECTOR, 1.0)),
    ]
    return out


# ------------------------------------------------------------------------------------------------

def measure(row: Row, samples: int, seeds: int, joint: bool,
            oracle_only: bool = False) -> dict[str, Any]:
    rec: dict[str, Any] = {"row": row}
    if row.law is not None:
        law = row.law()
        rec["pair_eps"] = law_epsilon(law, row.delta)
        rec["oracle"], rec["p"], rec["q"] = oracle_cp(law, samples, row.alpha, row.delta,
                                                      row.symmetric)
        if row.dpsniper is not None:
            rec["oracle_1e7"] = oracle_cp(law, 10_000_000, row.alpha, row.delta, row.symmetric)[0]
        if joint:
            rec["joint"], rec["joint_cp"] = oracle_joint(law, samples, row.alpha, row.delta)
            if row.dpsniper is not None:
                rec["joint_1e7"], rec["joint_cp_1e7"] = oracle_joint(law, 10_000_000, row.alpha,
                                                                     row.delta)
    bounds = []
    if oracle_only:
        return rec
    t0 = time.perf_counter()
    for s in range(seeds):
        r = dpaudit.audit(row.mechanism, row.data0, row.data1, epsilon=row.claim,
                          delta=row.delta, samples=samples, alpha=row.alpha, seed=s)
        bounds.append(r.epsilon_lower_bound)
    rec["seconds"] = time.perf_counter() - t0
    rec["bounds"] = np.array(bounds)
    return rec


def _f(x: float | None, d: int = 4) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return ""
    return "inf" if math.isinf(x) else f"{x:.{d}g}"


def table(recs: list[dict[str, Any]], samples: int, seeds: int, joint: bool,
          seconds: float, extra: str = "") -> str:
    lines = [f"Generated by `OPENBLAS_NUM_THREADS=1 python benchmarks/oracle_ratio.py "
             f"--samples {samples} --seeds {seeds} {extra}"
             f"--write-docs` ({time.strftime('%Y-%m-%d')}, dpaudit {dpaudit.__version__}, "
             f"{seconds / 60:.1f} min on the shared 2-core machine). {samples:.0e} runs per "
             f"input, dpaudit's defaults, seeds 0-{seeds - 1}; oracle: the best event of the "
             "exact law, all runs on the test, the same Clopper-Pearson test (mean over 2000 "
             "simulated test splits). The `oracle at 1e7` column is the oracle at DP-Sniper's "
             "comparison budget (10^7 runs per input), next to DP-Sniper's bound from 2.1 x 10^8.",
             ""]
    head = ("| suite | mechanism | pair epsilon | oracle mean | dpaudit mean (min) | ratio | "
            + "oracle at 1e7 | DP-Sniper | best event P, Q |")
    lines += [head, "|" + "---|" * (head.count("|") - 1)]
    ratios: list[float] = []
    for rec in recs:
        row = rec["row"]
        b = rec["bounds"]
        mean = float(np.mean(b))
        if "oracle" in rec:
            ratio = mean / rec["oracle"] if rec["oracle"] > 0 else math.nan
            ratios.append(ratio)
            cells = [_f(rec["pair_eps"]), _f(rec["oracle"]), f"{_f(mean)} ({_f(float(b.min()))})",
                     f"{ratio:.3f}"]
            cells += [_f(rec.get("oracle_1e7")), _f(row.dpsniper),
                      f"{rec['p']:.3g}, {rec['q']:.3g}"]
        else:
            cells = ["", f"not computed: {row.why_no_law}", f"{_f(mean)} ({_f(float(b.min()))})",
                     "", "", _f(row.dpsniper), ""]
        lines.append(f"| {row.suite} | {row.name} | " + " | ".join(cells) + " |")
    r = np.array([x for x in ratios if np.isfinite(x)])
    lines += ["", f"Ratio dpaudit / oracle over the {r.size} rows with an oracle: median "
              f"{np.median(r):.3f}, smallest {r.min():.3f}, {int(np.sum(r >= 0.98))} at or above "
              f"0.98, {int(np.sum(r >= 0.95))} at or above 0.95."]
    return "\n".join(lines)


def joint_table(recs: list[dict[str, Any]], samples: int, seconds: float) -> str:
    """The oracle with the product of Clopper-Pearson intervals and with the exact joint test."""
    lines = [f"Generated by `OPENBLAS_NUM_THREADS=1 python benchmarks/oracle_ratio.py "
             f"--oracle-only --exact-joint --samples {samples} --write-docs` "
             f"({time.strftime('%Y-%m-%d')}, {seconds / 60:.1f} min). Both tests on the same "
             "event (the best of the three best Clopper-Pearson events for the joint test) at the "
             "median test counts, all runs on the test.", "",
             f"| suite | mechanism | pair epsilon | Clopper-Pearson product, {samples:.0e} | "
             f"exact joint test, {samples:.0e} | gain | Clopper-Pearson, 1e7 | joint, 1e7 | "
             "DP-Sniper (2.1e8) |", "|---|---|---|---|---|---|---|---|---|"]
    for rec in recs:
        if "joint" not in rec:
            continue
        row = rec["row"]
        gain = rec["joint"] / rec["joint_cp"] if rec["joint_cp"] > 0 else math.nan
        lines.append(f"| {row.suite} | {row.name} | {_f(rec['pair_eps'])} | "
                     f"{_f(rec['joint_cp'])} | {_f(rec['joint'])} | {gain:.3f} | "
                     f"{_f(rec.get('joint_cp_1e7'))} | {_f(rec.get('joint_1e7'))} | "
                     f"{_f(row.dpsniper)} |")
    return "\n".join(lines)


def write_docs(block: str, begin: str = BEGIN, end: str = END) -> None:
    text = DOC.read_text()
    if begin not in text:
        raise SystemExit(f"{DOC}: markers {begin} / {end} not found")
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    DOC.write_text(head + begin + "\n" + block + "\n" + end + tail)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--samples", type=int, default=1_000_000)
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--exact-joint", action="store_true")
    ap.add_argument("--oracle-only", action="store_true",
                    help="only the oracle columns (with --exact-joint: the joint-test table)")
    ap.add_argument("--write-docs", action="store_true")
    ap.add_argument("--block", default="oracle-ratio",
                    help="the docs markers to write between, and results/BLOCK.json")
    ap.add_argument("--render-only", action="store_true",
                    help=f"reuse dpaudit's bounds from {RESULTS.name}, recompute the oracles")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    recs = []
    results = RESULTS if args.block == "oracle-ratio" else RESULTS.with_name(f"{args.block}.json")
    begin, end = f"<!-- {args.block}:begin -->", f"<!-- {args.block}:end -->"
    saved: dict[str, Any] = json.loads(results.read_text()) if args.render_only else {}
    if args.render_only:
        args.samples, args.seeds = saved["samples"], saved["seeds"]
    for row in rows():
        if args.only and row.name not in args.only:
            continue
        if args.render_only:
            if row.name not in saved["rows"]:
                continue
            rec = measure(row, args.samples, 0, False, oracle_only=True)
            rec["bounds"] = np.array(saved["rows"][row.name]["bounds"])
            rec["seconds"] = saved["rows"][row.name]["seconds"]
        else:
            rec = measure(row, args.samples, args.seeds, args.exact_joint, args.oracle_only)
        recs.append(rec)
        print(f"{row.name}: oracle {_f(rec.get('oracle'))} joint {_f(rec.get('joint'))} "
              + ("" if args.oracle_only else f"dpaudit mean {_f(float(np.mean(rec['bounds'])))} "
                 f"({rec['seconds']:.0f} s)"), flush=True)
        if not args.oracle_only:
            print("  per seed: " + " ".join(f"{b:.4g}" for b in rec["bounds"]), flush=True)
    if args.oracle_only:
        if not args.exact_joint:
            raise SystemExit("--oracle-only writes the joint-test table: add --exact-joint")
        block = joint_table(recs, args.samples, time.perf_counter() - t0)
        print(block)
        if args.write_docs:
            write_docs(block, JBEGIN, JEND)
        return 0
    elapsed = (saved["minutes"] * 60 if args.render_only else time.perf_counter() - t0)
    if not args.render_only:
        results.parent.mkdir(exist_ok=True)
        results.write_text(json.dumps({
            "samples": args.samples, "seeds": args.seeds, "minutes": elapsed / 60,
            "rows": {r["row"].name: {"bounds": [float(b) for b in r["bounds"]],
                                     "seconds": r["seconds"]} for r in recs}}, indent=1))
    extra = "" if args.block == "oracle-ratio" else f"--block {args.block} "
    if args.only:
        extra += "--only " + " ".join(f'"{o}"' if " " in o else o for o in args.only) + " "
    block = table(recs, args.samples, args.seeds, args.exact_joint, elapsed, extra)
    print(block)
    if args.write_docs:
        write_docs(block, begin, end)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
