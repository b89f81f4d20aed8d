"""The ``dpaudit`` command's arguments: exit codes, argument types with their one-sentence errors,
and :func:`build_parser`.
"""

from __future__ import annotations

import argparse
import math
from typing import Callable

from dpaudit._version import __version__
from dpaudit.runner import (EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, EXIT_TERMINATED, EXIT_USAGE,
                            EXIT_VIOLATED, UsageError)

DEFAULT_OUT = "dpaudit-reports"


# ------------------------------------------------------------------------------------------------
# Argument parsing
# ------------------------------------------------------------------------------------------------

def _int_at_least(minimum: int, what: str) -> Callable[[str], int]:
    """An argparse type: an integer >= ``minimum``; the error names ``what`` was expected."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}")
        return value
    return parse


_seed = _int_at_least(0, "a non-negative integer")
_jobs = _int_at_least(1, "a positive integer")


def _alpha(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number in (0, 1), got {text!r}") from None
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"must be a number in (0, 1), got {text!r}")
    return value


def _executor_name(text: str) -> str:
    from dpaudit.execution.executors import EXECUTORS

    if text not in EXECUTORS:
        raise argparse.ArgumentTypeError(f"must be one of {', '.join(EXECUTORS)}, got {text!r}")
    return text


def _scheduler_address(text: str) -> str:
    if not text.strip() or any(c.isspace() for c in text.strip()):
        raise argparse.ArgumentTypeError(f"must be a Dask scheduler address such as "
                                         f"tcp://host:8786, got {text!r}")
    return text.strip()


def _finite(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a finite number, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number, got {text!r}")
    return value


def _positive(text: str) -> float:
    value = _finite(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text!r}")
    return value


def _delta(text: str) -> float:
    value = _finite(text)
    if not 0.0 <= value < 1.0:
        raise argparse.ArgumentTypeError(f"must be a number in [0, 1), got {text!r}")
    return value


def _budget_names() -> list[str]:
    from dpaudit.claims.context import BUDGETS

    return list(BUDGETS)


def _add_run_options(p: argparse.ArgumentParser, out_required: bool) -> None:
    budgets = _budget_names()
    p.add_argument("--budget", choices=budgets, default="standard",
                   help="how much work each audit may spend (default: standard)")
    p.add_argument("--seed", type=_seed, default=0, metavar="N",
                   help="seed of all randomness; the same seed reproduces a report (default: 0)")
    p.add_argument("--alpha", type=_alpha, default=0.05, metavar="A",
                   help="empirical lower bounds hold with probability 1 - A (default: 0.05)")
    if out_required:
        p.add_argument("--out", required=True, metavar="DIR",
                       help="report directory")  # pragma: no cover - every command has a default
    else:
        p.add_argument("--out", default=DEFAULT_OUT, metavar="DIR",
                       help=f"report directory (default: {DEFAULT_OUT})")
    p.add_argument("--fresh", action="store_true",
                   help="redo claims whose results are already saved in DIR")
    p.add_argument("--executor", type=_executor_name, default=None, metavar="NAME",
                   help="where audits run: local (this process; the default), processes (a "
                        "process pool on this machine) or dask (a Dask cluster: --scheduler, "
                        "DASK_SCHEDULER_ADDRESS, or a LocalCluster started for the run)")
    p.add_argument("--scheduler", type=_scheduler_address, default=None, metavar="ADDRESS",
                   help="address of a running Dask scheduler, e.g. tcp://host:8786 (implies "
                        "--executor dask)")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress output on stderr")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``dpaudit`` command."""
    parser = argparse.ArgumentParser(
        prog="dpaudit",
        description="Audit the privacy claims of differentially private online learning "
                    "algorithms and write reports for reviewers.",
        epilog="Exit status: 0 no claim violated, 1 a claim violated, 2 usage or input error, "
               "3 an audit failed, 130 interrupted, 143 terminated (SIGTERM).")
    parser.add_argument("--version", action="version", version=f"dpaudit {__version__}")
    parser.add_argument("--traceback", action="store_true",
                        help="show Python tracebacks instead of one-sentence errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    plugin = argparse.ArgumentParser(add_help=False)
    plugin.add_argument("--plugin", action="append", default=[], metavar="MODULE",
                        help="import MODULE (a dotted module name or a path to a .py file) "
                             "first, so that the claims it registers can be listed and audited; "
                             "repeatable. Installed packages register theirs through the "
                             "'dpaudit.claims' entry point without it")

    p = sub.add_parser("list", parents=[plugin], help="list mechanisms, learners and auditable claims",
                       description="List the mechanisms, learners and registered claims with "
                                   "their provenance.")
    p.add_argument("--json", action="store_true", help="print machine-readable JSON")
    p.add_argument("--long", action="store_true",
                   help="also print each claim's citation, provenance and calibration")

    p = sub.add_parser("audit", parents=[plugin], help="audit one claim and write its report",
                       description="Audit one registered claim over its parameter range and "
                                   "write DIR/<claim id>.{json,md,html} and the index.")
    p.add_argument("claim_id", metavar="CLAIM_ID", help="a claim id from `dpaudit list`")
    _add_run_options(p, out_required=False)

    p = sub.add_parser("audit-claims", parents=[plugin], help="audit many claims and write their reports and index",
                       description="Audit several registered claims (or all of them), write "
                                   "each report and the index. Interrupted runs resume.")
    p.add_argument("claim_ids", nargs="*", metavar="CLAIM_ID",
                   help="claims to audit: claim ids, namespaces (jkt12-colt: every claim in it) "
                        "or glob patterns over ids (quoted: 'jkt12-*/p*')")
    p.add_argument("--all", action="store_true", help="audit every registered claim")
    p.add_argument("--jobs", "-j", type=_jobs, default=1, metavar="N",
                   help="audit N claims at a time in worker processes (default: 1)")
    _add_run_options(p, out_required=False)

    p = sub.add_parser("gate", parents=[plugin],
                       help="run the sequential CI gate on a claim's pairs or on a mechanism",
                       description="The anytime-valid sequential gate (it stops at the first "
                                   "conclusive evidence of a violation) on the black-box pairs "
                                   "of CLAIM_ID, alpha shared over them, or on "
                                   "--mechanism MODULE:FUNCTION with two inputs. One line per "
                                   "pair; exit 1 when a gate stopped (violated), 0 otherwise "
                                   "(not evidence that the claim holds). No report is written.")
    p.add_argument("claim_id", nargs="?", default=None, metavar="CLAIM_ID",
                   help="a claim id from `dpaudit list` (or use --mechanism)")
    p.add_argument("--mechanism", default=None, metavar="MODULE:FUNCTION",
                   help="FUNCTION(data, n, rng) -> n runs, from MODULE (a dotted name "
                        "importable from the current folder, or a path to a .py file)")
    p.add_argument("--data0", default=None, metavar="VALUE",
                   help="with --mechanism: the first input, a Python literal such as [1, 0, 1]")
    p.add_argument("--data1", default=None, metavar="VALUE",
                   help="with --mechanism: the neighbouring input, a Python literal")
    p.add_argument("--epsilon", type=_positive, default=None, metavar="E",
                   help="with --mechanism: the claimed epsilon")
    p.add_argument("--delta", type=_delta, default=0.0, metavar="D",
                   help="with --mechanism: the claimed delta, in [0, 1) (default: 0)")
    p.add_argument("--max-samples", type=_int_at_least(100, "an integer >= 100"), default=None,
                   metavar="N", help="largest number of runs per input of each gate (default: "
                                     "the budget's samples for a claim, 100000 for --mechanism)")
    p.add_argument("--budget", choices=_budget_names(), default="quick",
                   help="a claim's grid and default runs per input (default: quick)")
    p.add_argument("--seed", type=_seed, default=0, metavar="N",
                   help="seed of all randomness (default: 0)")
    p.add_argument("--alpha", type=_alpha, default=0.05, metavar="A",
                   help="probability of a false alarm on a claim that holds (default: 0.05)")
    p.add_argument("--json", action="store_true", help="print the gates' results as JSON")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress output on stderr")

    p = sub.add_parser("float-audit",
                       help="show exactly that a floating-point Laplace sampler is not DP",
                       description="Exact support audit (Mironov 2012): doubles that a float "
                                   "Laplace sampler outputs on one query answer and never on the "
                                   "neighbouring one. No sampling. Exit 1 when found.")
    p.add_argument("--f0", type=_finite, default=0.0, metavar="X",
                   help="query answer on the first input (default: 0)")
    p.add_argument("--f1", type=_finite, default=1.0, metavar="X",
                   help="query answer on the neighbouring input (default: 1)")
    p.add_argument("--scale", type=_positive, default=1.0, metavar="B",
                   help="Laplace scale (default: 1)")
    p.add_argument("--sampler", choices=["numpy", "textbook"], default="numpy",
                   help="numpy's Generator.laplace (what dpaudit's LaplaceMechanism uses) or the "
                        "textbook inverse CDF (default: numpy)")
    p.add_argument("--json", action="store_true", help="print the evidence as JSON")

    p = sub.add_parser("report", parents=[plugin], help="re-render reports and index from saved JSON",
                       description="Re-render every claim report, the paper pages and the index "
                                   "in DIR from the saved JSON, without recomputing anything. "
                                   "Exits 0 when it rendered (whatever the verdicts).")
    p.add_argument("directory", metavar="DIR", help="a report directory")
    return parser
