"""The symbolic tier (issue 13): every SMT encoding's verdict and time, next to the sampled check.

Runs every encoding of ``dpaudit.papers.jkt12.smt_lemmas`` and ``dpaudit.papers.st13.smt_lemmas``
(``all_lemmas``: fixed and symbolic constants), each solver call bounded by ``--timeout``
seconds, and prints a Markdown table: lemma, SMT verdict, seconds, replayed ratio, and the
outcome of the sampled (Hypothesis / exact-grid) check of the same statement in the golden quick
audits (``tests/golden/*.json``, seed 0), with whether they agree. ``--json PATH`` saves the
full results (solver, encoding, queries, counterexamples, replays).

    python benchmarks/smt_lemmas.py [--timeout 60] [--json out/smt.json]
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import time
from pathlib import Path

from dpaudit.formal.smt import DEFAULT_TIMEOUT_S, SOLVER, check_lemma, statement_base
from dpaudit.papers.afkt23 import smt_lemmas as afkt
from dpaudit.papers.jkt12 import smt_lemmas as jkt
from dpaudit.papers.pfcoco import smt_lemmas as pfcoco
from dpaudit.papers.st13 import smt_lemmas as st

ROOT = Path(__file__).resolve().parents[1]


def sampled_outcomes() -> dict[str, set[str]]:
    """Statement -> statuses of the sampled checks in the golden quick audits."""
    out: dict[str, set[str]] = {}
    for path in glob.glob(str(ROOT / "tests" / "golden" / "*.json")):
        with open(path) as fh:
            record = json.load(fh)
        for lem in record.get("lemmas", []):
            if lem.get("method", "sampled") == "sampled":
                out.setdefault(lem["statement"], set()).add(lem["status"])
    return out


def matching(statement: str, sampled: dict[str, set[str]]) -> set[str]:
    """Sampled statuses of the statement an SMT lemma encodes (its text before the ' [...]'
    suffix naming the encoded dimension and constants)."""
    base = statement.split(" [")[0]
    hits: set[str] = set()
    for s, statuses in sampled.items():
        if s.split(" [")[0] == base:
            hits |= statuses
    return hits


def agreement(smt: str, sampled: set[str], refuted_elsewhere: bool = False) -> str:
    """``refuted_elsewhere``: another encoding of the same statement (another dimension or
    constants) is refuted by SMT."""
    if not sampled:
        return "no sampled check"
    kind = {"smt-proved": "holds", "smt-refuted": "violated"}.get(smt)
    if kind is None:
        return "SMT undecided"
    if sampled == {kind}:
        return "agree"
    if kind == "holds" and "violated" in sampled and refuted_elsewhere:
        return "agree (proved for this encoding's dimension/constants, refuted for another)"
    if kind == "violated" and "holds" in sampled:
        return ("SMT refutes where some sampled runs found nothing" if "violated" in sampled
                else "SMT refutes, sampling found nothing")
    return "DISAGREE"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S)
    ap.add_argument("--json", type=str, default=None)
    args = ap.parse_args()
    sampled = sampled_outcomes()
    rows, records = [], []
    t0 = time.perf_counter()
    results = []
    for paper, mod in (("JKT12", jkt), ("ST13", st), ("pfcoco", pfcoco), ("AFKT23", afkt)):
        for lem in mod.all_lemmas():
            r = check_lemma(lem, args.timeout)
            results.append((paper, lem, r))
            records.append(r.to_dict())
            print(f"[{time.perf_counter() - t0:7.1f}s] {r.status:12s} {lem.statement[:90]}",
                  flush=True)
    total = time.perf_counter() - t0
    refuted = {statement_base(r.statement) for _, _, r in results if r.status == "smt-refuted"}
    for paper, lem, r in results:
        s = matching(lem.statement, sampled)
        ratio = "" if r.replay is None else f"{r.replay.ratio:.4g}"
        rows.append((paper, lem.statement, r.status, f"{r.seconds:.2f}", ratio,
                     "/".join(sorted(s)) or "-",
                     agreement(r.status, s, statement_base(lem.statement) in refuted)))
    print(f"\n{SOLVER}; per-call timeout {args.timeout:g} s; total {total:.1f} s\n")
    print("| paper | lemma | SMT verdict | seconds | replayed ratio | sampled (golden) | "
          "agreement |")
    print("|---|---|---|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(x.replace("|", "\\|") for x in row) + " |")
    if args.json:
        os.makedirs(os.path.dirname(args.json) or ".", exist_ok=True)
        with open(args.json, "w") as fh:
            json.dump({"solver": SOLVER, "timeout_s": args.timeout, "seconds": total,
                       "results": records}, fh, indent=1)


if __name__ == "__main__":
    main()
