"""The ``dpaudit`` command line (also ``python -m dpaudit``).

Commands::

    dpaudit list [--json | --long]
    dpaudit audit CLAIM_ID [--budget B] [--seed N] [--alpha A] [--out DIR] [--fresh] [--quiet]
    dpaudit audit-claims (--all | CLAIM_ID ...) [--budget B] [--seed N] [--alpha A] [--jobs N]
                         [--executor local|processes|dask] [--scheduler ADDRESS]
                         [--out DIR] [--fresh] [--quiet]
    dpaudit report DIR
    dpaudit float-audit [--f0 X] [--f1 X] [--scale B] [--sampler numpy|textbook] [--json]

Every audited claim is written to ``DIR/<claim id>.{json,md,html}`` (plus figure PNGs) and the
directory's index to ``DIR/index.{json,md,html}`` (:mod:`dpaudit.reporting.writer`). A claim's JSON
is written atomically when its audit finishes, so Ctrl-C or a crash keeps every finished claim; a
rerun skips claims whose JSON already exists with the same budget, seed, alpha, dpaudit version
and audit code (a SHA-256 of the claim's paper folder and the engine's source; ``--fresh`` redoes
them). ``--jobs N`` audits N claims at a time in worker processes; ``--executor dask``
runs the claims on a Dask cluster (``--scheduler tcp://host:8786``, or ``DASK_SCHEDULER_ADDRESS``,
or a ``LocalCluster`` started for the run), through the one execution layer of
:mod:`dpaudit.audits.execution`. A single claim (``dpaudit audit``) sends the chunks of its
empirical tests to the executor instead. Reports are written by this process as each claim
finishes; a lost scheduler is an error (exit 3) that keeps every finished claim.

Exit status: 0 when no audited claim is violated (``dpaudit report``: 0 whenever it rendered; it
re-renders, it does not audit), 1 when one is, 2 for usage or input errors,
3 when an audit or the tool itself failed (the traceback of a failed audit is saved next to its
report as ``<claim>.error.log``), 130 when interrupted (Ctrl-C), 143 when terminated (SIGTERM, how
CI cancels a job); both write the index of the claims finished so far. Errors are one sentence on
stderr; add ``--traceback`` to see Python's traceback instead.

The index lists exactly the claims that dpaudit runs wrote into DIR (``DIR/dpaudit-manifest.json``).
A saved claim that cannot be read is redone by ``audit-claims`` when it is one of the claims asked
for, and is otherwise an error (exit 2) naming the file: never a smaller index.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
import math
import os
import pkgutil
import signal
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence, TextIO

from dpaudit import __version__

__all__ = ["main", "build_parser", "EXIT_OK", "EXIT_VIOLATED", "EXIT_USAGE", "EXIT_FAILED",
           "EXIT_INTERRUPTED", "EXIT_TERMINATED"]

EXIT_OK = 0
EXIT_VIOLATED = 1
EXIT_USAGE = 2
EXIT_FAILED = 3
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143  # 128 + SIGTERM, what a CI runner's cancellation expects

DEFAULT_OUT = "dpaudit-reports"


class UsageError(Exception):
    """A problem with the command line or its inputs (exit status 2)."""


class _Terminated(KeyboardInterrupt):
    """SIGTERM, handled like Ctrl-C (finished claims indexed) but exiting 143."""


def _on_sigterm(signum: int, frame: Any) -> None:
    raise _Terminated()


# ------------------------------------------------------------------------------------------------
# Argument parsing
# ------------------------------------------------------------------------------------------------

def _seed(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a non-negative integer, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be a non-negative integer, got {text!r}")
    return value


def _alpha(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number in (0, 1), got {text!r}") from None
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"must be a number in (0, 1), got {text!r}")
    return value


def _jobs(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}")
    return value


def _executor_name(text: str) -> str:
    from dpaudit.audits.execution import EXECUTORS

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


def _budget_names() -> list[str]:
    from dpaudit.audits.registry import BUDGETS

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

    p = sub.add_parser("list", help="list mechanisms, learners and auditable claims",
                       description="List the mechanisms, learners and registered claims with "
                                   "their provenance.")
    p.add_argument("--json", action="store_true", help="print machine-readable JSON")
    p.add_argument("--long", action="store_true",
                   help="also print each claim's citation, provenance and calibration")

    p = sub.add_parser("audit", help="audit one claim and write its report",
                       description="Audit one registered claim over its parameter range and "
                                   "write DIR/<claim id>.{json,md,html} and the index.")
    p.add_argument("claim_id", metavar="CLAIM_ID", help="a claim id from `dpaudit list`")
    _add_run_options(p, out_required=False)

    p = sub.add_parser("audit-claims", help="audit many claims and write their reports and index",
                       description="Audit several registered claims (or all of them), write "
                                   "each report and the index. Interrupted runs resume.")
    p.add_argument("claim_ids", nargs="*", metavar="CLAIM_ID", help="claim ids to audit")
    p.add_argument("--all", action="store_true", help="audit every registered claim")
    p.add_argument("--jobs", "-j", type=_jobs, default=1, metavar="N",
                   help="audit N claims at a time in worker processes (default: 1)")
    _add_run_options(p, out_required=False)

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

    p = sub.add_parser("report", help="re-render reports and index from saved JSON",
                       description="Re-render every claim report, the paper pages and the index "
                                   "in DIR from the saved JSON, without recomputing anything. "
                                   "Exits 0 when it rendered (whatever the verdicts).")
    p.add_argument("directory", metavar="DIR", help="a report directory")
    return parser


# ------------------------------------------------------------------------------------------------
# Plain-text formatting for the terminal (ASCII only)
# ------------------------------------------------------------------------------------------------

def _num(x: Any) -> str:
    if x is None:
        return "-"
    if isinstance(x, str):
        return x
    x = float(x)
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return f"{x:.4g}"


def _table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    rows = [list(map(str, r)) for r in rows]
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(header)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip()]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    return "\n".join(lines)


def _summary_table(records: Sequence[dict[str, Any]]) -> str:
    """One row per claim: its claimed formula, then the evidence at its worst point next to the
    instance of the claim there (">=": a certified lower bound from a numerical bracket)."""
    from dpaudit.reporting.view import claim_formula, exact_kind, worst_claimed

    rows = []
    certified = False
    for r in records:
        w = r.get("worst_case", {})
        eps, delta = worst_claimed(r)
        exact = _num(w.get("epsilon_exact"))
        if w.get("epsilon_exact") is not None and exact_kind(w) != "exact":
            exact, certified = ">=" + exact, True
        rows.append([r["id"], claim_formula(r), f"({_num(eps)}, {_num(delta)})", exact,
                     _num(w.get("epsilon_accountant")), _num(w.get("epsilon_lower_bound")),
                     r["verdict"]])
    note = "(eps, delta) at worst point and the evidence columns are at the worst audited point"
    if certified:
        note += "; >= x: certified lower bound (numerical)"
    note += "; lower bound - : not run, 0: ran without evidence"
    return _table(["claim", "claimed", "at worst point", "exact eps", "accountant eps",
                   "lower bound", "verdict"], rows) + f"\n({note})"


def _counts_sentence(records: Sequence[dict[str, Any]]) -> str:
    n = {v: sum(1 for r in records if r["verdict"] == v) for v in ("violated", "inconclusive",
                                                                    "holds")}
    total = len(records)
    return (f"{total} claim{'s' if total != 1 else ''}: {n['violated']} violated, "
            f"{n['inconclusive']} inconclusive, {n['holds']} hold{'s' if n['holds'] == 1 else ''}.")


# ------------------------------------------------------------------------------------------------
# dpaudit list
# ------------------------------------------------------------------------------------------------

def _first_line(doc: str | None) -> str:
    return (inspect.cleandoc(doc).splitlines() or [""])[0] if doc else ""


def _concrete_classes(package: str, base: type, problems: list[str]) -> list[dict[str, str]]:
    """Concrete subclasses of ``base`` defined in the modules of ``package``.

    A module that fails to import is skipped and described in ``problems``, so one broken module
    does not hide the rest of the catalogue.
    """
    pkg = importlib.import_module(package)
    found = []
    for info in pkgutil.iter_modules(pkg.__path__, prefix=f"{package}."):
        try:
            module = importlib.import_module(info.name)
        except Exception as exc:
            problems.append(f"could not import {info.name} ({_one_line(exc)})")
            continue
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if (issubclass(cls, base) and cls is not base and cls.__module__ == module.__name__
                    and not inspect.isabstract(cls) and not cls.__name__.startswith("_")):
                name = cls.__dict__.get("name", cls.__name__)
                found.append({"name": str(name), "class": f"{cls.__module__}.{cls.__qualname__}",
                              "summary": _first_line(cls.__doc__)})
    return sorted(found, key=lambda d: d["class"])


def _provenance_text(claim: Any) -> str:
    p = claim.provenance
    parts = [f"{p.paper} ({p.version})" if p.version else p.paper, p.theorem]
    if p.equation:  # the full equation is in the reports and in `dpaudit list --json`
        eq = " ".join(p.equation.split())
        parts.append(f"eq. {eq if len(eq) <= 60 else eq[:57] + '...'}")
    return ", ".join(x for x in parts if x)


_MARKUP = __import__("re").compile(r"``?([^`]*)``?|:[a-z]+:`~?([^`]*)`|\*\*([^*]*)\*\*")


def _plain(text: str) -> str:
    """Docstring text without reST/Markdown markup (``code``, :class:`x`, **bold**)."""
    return " ".join(_MARKUP.sub(lambda m: next(g for g in m.groups() if g is not None),
                                text).split())


def _fit(text: str, width: int) -> str:
    return text if len(text) <= width else text[:max(0, width - 3)] + "..."


def _short_theorem(claim: Any) -> str:
    p = claim.provenance
    version = p.version.split(",")[0]
    return f"{p.theorem} ({version})" if version else p.theorem


def _cmd_list(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from dpaudit.audits.registry import all_claims
    from dpaudit.learners.base import OnlineLearner
    from dpaudit.mechanisms.base import Mechanism

    claims = list(all_claims())
    problems: list[str] = []
    mechanisms = _concrete_classes("dpaudit.mechanisms", Mechanism, problems)
    learners = _concrete_classes("dpaudit.learners", OnlineLearner, problems)
    for problem in problems:
        print(f"dpaudit: error: {problem}.", file=err)
    status = EXIT_FAILED if problems else EXIT_OK
    if args.json:
        payload = {
            "claims": [{"id": rc.claim.id, "kind": rc.kind, "epsilon": rc.claim.epsilon,
                        "delta": rc.claim.delta, "formula": rc.claim.privacy_statement,
                        "citation": rc.claim.citation,
                        "provenance": rc.claim.provenance.to_dict(),
                        "calibration": rc.claim.calibration} for rc in claims],
            "mechanisms": mechanisms,
            "learners": learners,
        }
        out.write(json.dumps(payload, indent=2) + "\n")
        return status
    # Fits a 100-column terminal; --long adds the details on their own lines.
    if claims:
        out.write(f"Claims ({len(claims)}; audit one with `dpaudit audit CLAIM_ID`, details with "
                  "--long):\n")
        id_w = max(len(rc.claim.id) for rc in claims)
        claim_w = 30
        rows = [[rc.claim.id, _fit(f"{rc.claim.privacy_statement}-DP", claim_w),
                 _fit(_short_theorem(rc.claim), max(20, 96 - id_w - claim_w - 4))]
                for rc in claims]
        table = _table(["id", "claimed", "statement"], rows)
        if args.long:
            lines = table.splitlines()
            out_lines = ["  " + lines[0]]
            for line, rc in zip(lines[1:], claims):
                out_lines.append("  " + line)
                c = rc.claim
                for label, value in (("claimed", f"{c.privacy_statement}-DP (e.g. "
                                                 f"({c.epsilon:.4g}, {c.delta:.3g}))"),
                                     ("paper", c.citation or _provenance_text(c)),
                                     ("where", _provenance_text(c)),
                                     ("calibration", c.calibration), ("kind", rc.kind)):
                    if value:
                        out_lines += ["      " + w for w in __import__("textwrap").wrap(
                            f"{label}: {_plain(value)}", 92, subsequent_indent="  ")]
            out.write("\n".join(out_lines) + "\n")
        else:
            out.write(_indent(table) + "\n")
    else:
        out.write("Claims: none registered yet.\n")
    for title, items in (("Mechanisms", mechanisms), ("Learners", learners)):
        out.write(f"\n{title} ({len(items)}):\n")
        if items:
            if args.long:
                rows = [[d["name"], d["class"], _plain(d["summary"])] for d in items]
                out.write(_indent(_table(["name", "class", "summary"], rows)) + "\n")
            else:
                width = max(len(d["name"]) for d in items)
                rows = [[d["name"], _fit(_plain(d["summary"]), max(20, 96 - width - 4))]
                        for d in items]
                out.write(_indent(_table(["name", "summary"], rows)) + "\n")
        else:
            out.write("  none yet.\n")
    return status


def _indent(text: str) -> str:
    return "\n".join("  " + line for line in text.splitlines())


# ------------------------------------------------------------------------------------------------
# Auditing claims (in this process or in workers)
# ------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Task:
    claim_id: str
    budget: str
    seed: int
    alpha: float
    out: str


@dataclass(frozen=True)
class _Outcome:
    claim_id: str
    record: dict[str, Any] | None
    error: str | None = None
    error_log: str | None = None
    seconds: float = 0.0
    traceback: str | None = None  # of a failed audit that ran where the log cannot be written


def _error_log_path(out: str, claim_id: str) -> Path:
    from dpaudit.reporting.writer import claim_paths

    json_path = claim_paths(out, claim_id).json
    return json_path.with_name(json_path.stem + ".error.log")


def _audit_record(task: _Task, progress: Callable[[int, int, str], None] | None = None,
                  registered: Any = None, executor: Any = None) -> dict[str, Any]:
    """Audit one claim and return its report record (nothing is written here).

    ``registered``: the claim's registration when it was shipped to a worker that may not know it
    (a Dask worker in another interpreter); ``executor``: where the claim's empirical tests run.
    """
    from dpaudit.audits.claim_audit import ClaimAudit
    from dpaudit.audits.registry import BUDGETS, AuditContext, get
    from dpaudit.reporting.writer import claim_record

    t0 = time.perf_counter()
    try:
        registered = get(task.claim_id)
    except KeyError:
        if registered is None:
            raise
    ctx = AuditContext(BUDGETS[task.budget], task.seed, task.alpha, executor=executor)
    if progress is not None:
        ctx.progress = progress
    result = registered.audit(ctx)
    if not isinstance(result, ClaimAudit):
        raise TypeError(f"the audit function of {task.claim_id!r} returned "
                        f"{type(result).__name__}, not a ClaimAudit")
    if result.claim.id != task.claim_id:
        raise ValueError(f"the audit function of {task.claim_id!r} returned the audit of "
                         f"{result.claim.id!r}")
    # The settings the audit ran with are the CLI's, whatever the audit function recorded.
    result.budget, result.seed, result.alpha = task.budget, task.seed, task.alpha
    result.seconds = time.perf_counter() - t0
    record = claim_record(result)
    record["kind"] = registered.kind
    return record


def _remove_stale(task: _Task) -> None:
    from dpaudit.reporting.writer import claim_paths

    stale = claim_paths(task.out, task.claim_id).json
    if stale.exists():  # results of other settings must not outlive a failed rerun
        stale.unlink()


def _save(task: _Task, record: dict[str, Any] | None, trace: str | None) -> str | None:
    """Write the claim's report files (or its error log); returns the error log's path."""
    from dpaudit.reporting.writer import atomic_write, write_claim_report

    log = _error_log_path(task.out, task.claim_id)
    if record is not None:
        # Hashed here, in the process that writes the report (a Dask worker may not have the
        # claim's paper registered): the resume check compares it with the code of the rerun.
        code_hash = _code_hash_or_none(task.claim_id)
        if code_hash is not None:
            record["audit_code_sha256"] = code_hash
        write_claim_report(task.out, record)
        if log.exists():
            log.unlink()
        return None
    try:  # atomically, like the reports: an interrupted write leaves no half log
        atomic_write(log, trace or "")
        return str(log)
    except OSError:
        return None


def _run_task(task: _Task, progress: Callable[[int, int, str], None] | None = None,
              executor: Any = None) -> _Outcome:
    """Audit one claim and write its report files; failures are returned, never raised.

    ``KeyboardInterrupt`` is not caught: an interrupted claim leaves no JSON behind, so a rerun
    redoes it.
    """
    t0 = time.perf_counter()
    try:
        _remove_stale(task)
        record = _audit_record(task, progress, executor=executor)
        _save(task, record, None)
        return _Outcome(task.claim_id, record, seconds=time.perf_counter() - t0)
    except Exception as exc:  # one failed claim must not lose the others' results
        log_name = _save(task, None, traceback.format_exc())
        return _Outcome(task.claim_id, None, f"{type(exc).__name__}: {exc}", log_name,
                        time.perf_counter() - t0)


def _pool_task(shared: Any, task: _Task) -> _Outcome:
    """A claim in a local worker process (same filesystem): audit and write, as in-process."""
    return _run_task(task)


def _remote_task(shared: Any, item: tuple[_Task, Any]) -> _Outcome:
    """A claim on a Dask worker (perhaps another machine): audit and send the record back; the
    parent writes the files."""
    import warnings

    task, registered = item
    t0 = time.perf_counter()
    try:
        with warnings.catch_warnings():
            # Hypothesis warns when the global `random` state changes during a draw; on a Dask
            # worker, Dask's own threads (retry jitter, worker choice) do that concurrently. The
            # lemma searches never use `random` (the records equal the golden ones), so the
            # warning is noise here: 45 tracebacks on stderr for one `--all --budget quick` run.
            warnings.filterwarnings("ignore", message="Do not use the `random` module inside "
                                    "strategies")
            record = _audit_record(task, registered=registered)
        return _Outcome(task.claim_id, record, seconds=time.perf_counter() - t0)
    except Exception as exc:
        return _Outcome(task.claim_id, None, f"{type(exc).__name__}: {exc}", None,
                        time.perf_counter() - t0, traceback.format_exc())


def _registered_ids() -> list[str]:
    from dpaudit.audits.registry import all_claims

    return [rc.claim.id for rc in all_claims()]


#: Parts of the package whose source decides every claim's result (besides the claim's own
#: paper folder): the engine, the noise, the learners, claims-as-data and input checks.
_ENGINE_SOURCES = ("audits", "mechanisms", "learners", "claims.py", "_validation.py")


def audit_code_hash(claim_id: str) -> str:
    """SHA-256 of the source that audits ``claim_id``: the package folder of the module that
    registered it (``dpaudit/papers/<paper>/``) and :data:`_ENGINE_SOURCES`. A change to any of
    them changes the hash, so a rerun never reuses a result computed by other code."""
    import hashlib

    import dpaudit
    from dpaudit.audits.registry import get

    registered = get(claim_id)
    origin = getattr(registered.audit, "__module__", "") or ""
    for cell in getattr(registered.audit, "__closure__", None) or ():
        try:
            contents = cell.cell_contents
        except ValueError:  # an empty cell
            continue
        if hasattr(contents, "plan") and hasattr(contents, "grid"):
            origin = type(contents).__module__
    root = Path(dpaudit.__file__).resolve().parent
    paths: set[Path] = set()
    module = sys.modules.get(origin)
    if module is not None and getattr(module, "__file__", None):
        paths.update(Path(module.__file__).resolve().parent.glob("*.py"))
    for part in _ENGINE_SOURCES:
        target = root / part
        paths.update(target.rglob("*.py") if target.is_dir() else [target])
    digest = hashlib.sha256()
    for path in sorted(p for p in paths if p.is_file()):
        rel = path.relative_to(root).as_posix() if root in path.parents else path.name
        digest.update(rel.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def _finished_record(task: _Task) -> dict[str, Any] | None:
    """The saved record of ``task`` when it exists with the same budget, seed, alpha, dpaudit
    version and audit code (:func:`audit_code_hash`)."""
    from dpaudit.reporting.writer import claim_paths, load_claim_record

    path = claim_paths(task.out, task.claim_id).json
    if not path.is_file():
        return None
    try:
        record = load_claim_record(path)
    except (ValueError, OSError, UnicodeDecodeError):
        return None  # unreadable, invalid or foreign: redo it (its files are rewritten)
    same = (record["id"] == task.claim_id and record.get("budget") == task.budget
            and record.get("seed") == task.seed
            and math.isclose(float(record.get("alpha", -1)), task.alpha, rel_tol=1e-12)
            and record.get("dpaudit_version") == __version__
            and record.get("audit_code_sha256") == _code_hash_or_none(task.claim_id))
    return record if same else None


def _code_hash_or_none(claim_id: str) -> str | None:
    try:
        return audit_code_hash(claim_id)
    except KeyError:  # no longer registered: nothing to compare with, redo (and fail clearly)
        return None


class _Progress:
    """Progress on stderr: tqdm bars on a terminal, one line per claim otherwise, nothing if quiet."""

    def __init__(self, total: int, quiet: bool, stream: TextIO) -> None:
        self.stream = stream
        self.quiet = quiet
        self.total = total
        self.done = 0
        interactive = not quiet and _isatty(stream)
        self.bar = None
        if interactive and total > 1:
            from tqdm import tqdm

            self.bar = tqdm(total=total, desc="claims", unit="claim", file=stream,
                            dynamic_ncols=True, leave=False)
        self.interactive = interactive
        self.inner = None

    def claim_progress(self, claim_id: str) -> Callable[[int, int, str], None] | None:
        """A callback for ``AuditContext.progress`` showing a per-claim bar (terminal only)."""
        if not self.interactive:
            return None
        from tqdm import tqdm

        self.inner = tqdm(total=None, desc=claim_id, file=self.stream, dynamic_ncols=True,
                          leave=False, position=1 if self.bar is not None else 0)
        inner = self.inner

        def update(done: int, total: int, label: str) -> None:
            if total and inner.total != total:
                inner.total = total
            inner.set_description_str(f"{claim_id}: {label}" if label else claim_id,
                                      refresh=False)
            if done >= inner.n:
                inner.update(done - inner.n)

        return update

    def message(self, text: str) -> None:
        if self.quiet:
            return
        if self.bar is not None or self.inner is not None:
            from tqdm import tqdm

            tqdm.write(text, file=self.stream)
        else:
            print(text, file=self.stream, flush=True)

    def finished(self, outcome: _Outcome) -> None:
        if self.inner is not None:
            self.inner.close()
            self.inner = None
        self.done += 1
        what = (outcome.record["verdict"] if outcome.record is not None
                else f"FAILED ({outcome.error})")
        self.message(f"[{self.done}/{self.total}] {outcome.claim_id}: {what} "
                     f"({outcome.seconds:.1f} s)")
        if self.bar is not None:
            self.bar.update(1)

    def close(self) -> None:
        for bar in (self.inner, self.bar):
            if bar is not None:
                bar.close()
        self.inner = self.bar = None


def _isatty(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def _run_tasks(tasks: Sequence[_Task], jobs: int, progress: _Progress, executor: str | None = None,
               scheduler: str | None = None) -> Iterable[_Outcome]:
    """Run the tasks through the execution layer, yielding each outcome as it finishes (its files
    already written); KeyboardInterrupt and ExecutionError propagate to the caller.

    Several claims are the executor's tasks (``processes``: one fresh forked process per claim,
    which writes its own files; ``dask``: the record comes back and is written here). A single
    claim runs here and sends the chunks of its empirical tests to the executor instead.
    """
    name = executor or ("dask" if scheduler else ("processes" if jobs > 1 else "local"))
    if not tasks:
        return
    if name == "dask":
        with _dask_logs_quiet():
            yield from _run_tasks_on(name, tasks, jobs, progress, scheduler)
        return
    yield from _run_tasks_on(name, tasks, jobs, progress, scheduler)


class _dask_logs_quiet:
    """Dask's own log lines (connection retries, tracebacks of a lost scheduler) are silenced while
    the CLI runs on Dask: its errors are one sentence (``--traceback`` shows Python's)."""

    def __enter__(self) -> None:
        import logging

        import distributed  # noqa: F401  (creates its loggers, each with its own level)

        self.levels = {}
        for name in ["distributed", *logging.root.manager.loggerDict]:
            if name == "distributed" or name.startswith("distributed."):
                logger = logging.getLogger(name)
                self.levels[name] = logger.level
                logger.setLevel(logging.CRITICAL + 1)

    def __exit__(self, *exc: Any) -> None:
        import logging

        for name, level in self.levels.items():
            logging.getLogger(name).setLevel(level)


def _run_tasks_on(name: str, tasks: Sequence[_Task], jobs: int, progress: _Progress,
                  scheduler: str | None) -> Iterable[_Outcome]:
    from dpaudit.audits.execution import open_executor
    from dpaudit.audits.registry import get

    if name == "local" or len(tasks) == 1:
        ex = None if name == "local" else open_executor(name, scheduler,
                                                        workers=jobs if jobs > 1 else None)
        try:
            for task in tasks:
                outcome = _run_task(task, progress.claim_progress(task.claim_id), executor=ex)
                progress.finished(outcome)
                yield outcome
        finally:
            if ex is not None:
                ex.close()
        return
    workers = jobs if jobs > 1 else None
    with open_executor(name, scheduler, workers=workers) as ex:
        if name == "processes":
            for _, outcome in ex.map_unordered(_pool_task, list(tasks)):
                progress.finished(outcome)
                yield outcome
            return
        for task in tasks:
            _remove_stale(task)
        items = [(task, get(task.claim_id)) for task in tasks]
        for i, outcome in ex.map_unordered(_remote_task, items):
            log = _save(tasks[i], outcome.record, outcome.traceback)
            outcome = _Outcome(outcome.claim_id, outcome.record, outcome.error, log,
                               outcome.seconds)
            progress.finished(outcome)
            yield outcome


def _unknown_claim_message(cid: str) -> str:
    """``unknown claim id 'jkt12-colt/pgid'; did you mean jkt12-colt/pigd? ...``"""
    import difflib

    from dpaudit.audits.registry import all_claims

    ids = [rc.claim.id for rc in all_claims()]
    near = difflib.get_close_matches(cid, ids, n=3, cutoff=0.6)
    if not near:  # a bare algorithm name ("pigd") or paper prefix matches ids that contain it
        near = [i for i in ids if cid and cid.lower() in i.lower()][:3]
    hint = f"; did you mean {' or '.join(near)}?" if near else ""
    return (f"unknown claim id {cid!r}{hint} (`dpaudit list` shows the registered claims)")


def _resolve_claim_ids(ids: Sequence[str], use_all: bool) -> list[str]:
    from dpaudit.audits.registry import all_claims, get

    if use_all and ids:
        raise UsageError("give either --all or claim ids, not both")
    if use_all:
        resolved = [rc.claim.id for rc in all_claims()]
        if not resolved:
            raise UsageError("no claims are registered, so --all has nothing to audit")
        return resolved
    if not ids:
        raise UsageError("give the claim ids to audit, or --all (see `dpaudit list`)")
    seen: list[str] = []
    for cid in ids:
        try:
            get(cid)
        except KeyError:
            raise UsageError(_unknown_claim_message(cid)) from None
        if cid not in seen:
            seen.append(cid)
    return seen


def _prepare_out(out: str) -> Path:
    if not out.strip():
        raise UsageError("--out is empty; give the report directory explicitly (use --out . for "
                         "the current directory)")
    path = Path(out)
    if path.exists() and not path.is_dir():
        raise UsageError(f"--out {out} exists and is not a directory")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot create the report directory {out} ({exc.strerror})") from None
    # os.access says yes to root on read-only mounts: try to write.
    import tempfile

    try:
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as exc:
        raise UsageError(f"the report directory {out} is not writable ({exc.strerror})") from None
    return path


def _audit_many(claim_ids: Sequence[str], args: argparse.Namespace, jobs: int, out: TextIO,
                err: TextIO) -> int:
    from dpaudit.audits.execution import ExecutionError, check_executor
    from dpaudit.reporting.writer import (add_to_manifest, claim_paths, load_claim_records,
                                          read_manifest, remove_stale_temp_files,
                                          render_claim_files, write_index)

    executor = getattr(args, "executor", None)
    scheduler = getattr(args, "scheduler", None)
    try:
        check_executor(executor, scheduler)
    except ValueError as exc:
        raise UsageError(str(exc).replace("executor=", "--executor ").replace(
            "scheduler=", "--scheduler")) from None
    out_dir = _prepare_out(args.out)
    try:
        earlier = read_manifest(out_dir) or []
        remove_stale_temp_files(out_dir, sorted(set(earlier) | set(claim_ids)))
        # Claims earlier runs wrote here and this run does not redo: they must load now, before
        # any work, or the index would silently lose them.
        kept = load_claim_records(out_dir, [cid for cid in earlier if cid not in claim_ids])
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    tasks = [_Task(cid, args.budget, args.seed, args.alpha, args.out) for cid in claim_ids]
    records: dict[str, dict[str, Any]] = {r["id"]: r for r in kept}
    todo = []
    for task in tasks:
        record = None if args.fresh else _finished_record(task)
        if record is None:
            todo.append(task)
            continue
        paths = claim_paths(args.out, task.claim_id)
        if not (paths.markdown.exists() and paths.html.exists()):
            render_claim_files(args.out, record)
        records[task.claim_id] = record
    if records:
        add_to_manifest(out_dir, list(records))
    progress = _Progress(len(todo), args.quiet, err)
    skipped = len(tasks) - len(todo)
    if skipped:
        progress.message(f"dpaudit: {skipped} of {len(tasks)} claims already audited in "
                         f"{args.out} with these settings, dpaudit version and audit code; "
                         "skipping them (--fresh redoes them)")
    interrupted: _Terminated | KeyboardInterrupt | None = None
    backend_error: ExecutionError | None = None
    failures: list[_Outcome] = []
    try:
        for outcome in _run_tasks(todo, jobs, progress, executor, scheduler):
            if outcome.record is not None:
                records[outcome.claim_id] = outcome.record
                add_to_manifest(out_dir, [outcome.claim_id])
            else:
                failures.append(outcome)
    except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM (_Terminated)
        interrupted = exc
    except ExecutionError as exc:  # a lost Dask scheduler: keep what finished
        backend_error = exc
    finally:
        progress.close()
    # Failures of the list above are only those reported before an interrupt; rescan the disk so
    # that the index and the exit status count every claim that finished, even in a worker.
    if interrupted is not None or backend_error is not None:
        for task in todo:
            record = _finished_record(task)
            if record is not None:
                records[task.claim_id] = record
        add_to_manifest(out_dir, list(records))
    write_index(out_dir, list(records.values()), display_dir=args.out,
                registered=_registered_ids())
    done = [records[cid] for cid in claim_ids if cid in records]
    if backend_error is not None:
        print(f"dpaudit: error: {str(backend_error).rstrip('.')}; {len(done)} of {len(tasks)} "
              f"claims are finished and saved in {args.out} and indexed in "
              f"{out_dir / 'index.html'}; run the same command again to resume.", file=err)
        return EXIT_FAILED
    if interrupted is not None:
        terminated = isinstance(interrupted, _Terminated)
        print(f"dpaudit: {'terminated (SIGTERM)' if terminated else 'interrupted'}; {len(done)} "
              f"of {len(tasks)} claims are finished and saved in {args.out} and indexed in "
              f"{out_dir / 'index.html'}; run the same command again to resume.", file=err)
        return EXIT_TERMINATED if terminated else EXIT_INTERRUPTED
    if done:
        out.write(_summary_table(done) + "\n\n")
    out.write(f"{_counts_sentence(done)} Reports: {out_dir / 'index.html'}\n")
    for f in failures:
        where = f" (traceback in {f.error_log})" if f.error_log else ""
        print(f"dpaudit: error: the audit of {f.claim_id} failed: {f.error}{where}", file=err)
    if any(r["verdict"] == "violated" for r in done):
        return EXIT_VIOLATED
    return EXIT_FAILED if failures else EXIT_OK


def _cmd_audit(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from dpaudit.reporting.view import verdict_sentence
    from dpaudit.reporting.writer import claim_paths

    [claim_id] = _resolve_claim_ids([args.claim_id], False)
    status = _audit_many([claim_id], args, 1, out, err)
    if status in (EXIT_OK, EXIT_VIOLATED):
        record = _finished_record(_Task(claim_id, args.budget, args.seed, args.alpha, args.out))
        if record is not None:
            paths = claim_paths(args.out, claim_id)
            out.write(f"\n{_ascii(verdict_sentence(record))}\nReport: {paths.html} "
                      f"(also {paths.markdown.name} and {paths.json.name})\n")
    return status


def _ascii(text: str) -> str:
    return text.replace("—", "-").replace("∞", "inf").replace("−", "-").replace("ε", "eps")


def _cmd_audit_claims(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    claim_ids = _resolve_claim_ids(args.claim_ids, args.all)
    return _audit_many(claim_ids, args, args.jobs, out, err)


def _cmd_float_audit(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from dpaudit.audits.floating_point import audit_float_laplace

    if args.f0 == args.f1:
        raise UsageError("--f0 and --f1 must differ (they are the answers on two neighbouring "
                         "inputs)")
    claimed = abs(args.f1 - args.f0) / args.scale   # the Laplace mechanism's epsilon
    evidence = audit_float_laplace(args.f0, args.f1, args.scale,
                                   claimed_epsilon=claimed if 0 < claimed < math.inf else None,
                                   sampler=args.sampler)
    if args.json:
        out.write(json.dumps(evidence.to_dict(), indent=2) + "\n")
    else:
        out.write(evidence.summary() + "\n")
        if evidence.examples:
            rows = [[e["output"], e["output_decimal"], e["probability_on_input_0"],
                     e["probability_on_input_1"]] for e in evidence.examples]
            out.write(_table(["output (exact)", "output", f"P on f0={args.f0:g}",
                              f"P on f1={args.f1:g}"], rows) + "\n")
    return EXIT_VIOLATED if evidence.violated else EXIT_OK


def _cmd_report(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from dpaudit.reporting.writer import rerender_directory

    directory = Path(args.directory)
    if not directory.is_dir():
        raise UsageError(f"{args.directory} is not a directory")
    try:
        records, paths = rerender_directory(directory, display_dir=args.directory,
                                            registered=_registered_ids())
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if not records:
        # rerender_directory wrote an empty index; a directory with no audits is an input error.
        raise UsageError(f"no saved claim audits (JSON with schema 'dpaudit.claim/1') under "
                         f"{args.directory}")
    out.write(_summary_table(records) + "\n\n")
    out.write(f"{_counts_sentence(records)} Re-rendered {len(records)} report"
              f"{'s' if len(records) != 1 else ''} and {paths.html}\n")
    # report re-renders, it does not audit: rendering succeeded, whatever the verdicts say.
    return EXIT_OK


# ------------------------------------------------------------------------------------------------
# Entry point
# ------------------------------------------------------------------------------------------------

def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``dpaudit`` command (``argv`` defaults to ``sys.argv[1:]``); returns the exit status.

    Output goes to ``sys.stdout`` (results) and ``sys.stderr`` (progress and errors).
    """
    out, err = sys.stdout, sys.stderr
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse has printed usage and a one-line error (or --help)
        return int(exc.code) if isinstance(exc.code, int) else EXIT_USAGE
    commands = {"list": lambda: _cmd_list(args, out, err),
                "audit": lambda: _cmd_audit(args, out, err),
                "audit-claims": lambda: _cmd_audit_claims(args, out, err),
                "report": lambda: _cmd_report(args, out, err),
                "float-audit": lambda: _cmd_float_audit(args, out, err)}
    previous = None
    try:
        previous = signal.signal(signal.SIGTERM, _on_sigterm)
    except ValueError:  # not the main thread: leave SIGTERM alone
        pass
    try:
        return commands[args.command]()
    except UsageError as exc:
        print(f"dpaudit: error: {str(exc).rstrip('.')}.", file=err)
        return EXIT_USAGE
    except _Terminated:
        print("dpaudit: terminated (SIGTERM).", file=err)
        return EXIT_TERMINATED
    except KeyboardInterrupt:
        print("dpaudit: interrupted.", file=err)
        return EXIT_INTERRUPTED
    except Exception as exc:
        if args.traceback:
            raise
        print(f"dpaudit: error: {_one_line(exc)} (rerun with --traceback for details).", file=err)
        return EXIT_FAILED
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _one_line(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        target = f" {exc.filename}" if exc.filename else ""
        return f"{exc.strerror}{':' if target else ''}{target}"
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
