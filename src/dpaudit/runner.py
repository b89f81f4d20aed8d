"""Auditing claims into a report directory: tasks, resume (saved records keyed on the audit code's
hash), progress, the executors, writing each finished claim's report and the index, and the exit
status of the run.

The one runner behind both ``dpaudit audit``/``audit-claims`` (:mod:`dpaudit.cli`) and
``dpaudit.audit_claim(out=...)`` (:mod:`dpaudit.api`): a top layer above the engine and the
reports, below the command line, which it never imports.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence, TextIO

from dpaudit._version import __version__
# The resume key comes from the claims layer in one call; ``audit_code_hash`` stays the name the
# runner (and tests that patch it) use.
from dpaudit.claims.resume_key import ENGINE_SOURCES as _ENGINE_SOURCES
from dpaudit.claims.resume_key import resume_key as audit_code_hash
from dpaudit.reporting.terminal import _counts_sentence, _summary_table

#: Exit statuses of a run (the ``dpaudit`` command's, docs/cli.md).
EXIT_OK = 0
EXIT_VIOLATED = 1
EXIT_USAGE = 2
EXIT_FAILED = 3
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143  # 128 + SIGTERM, what a CI runner's cancellation expects


class UsageError(Exception):
    """A problem with the command line or its inputs (exit status 2)."""


class _Terminated(KeyboardInterrupt):
    """SIGTERM, handled like Ctrl-C (finished claims indexed) but exiting 143."""


@dataclass(frozen=True)
class RunSettings:
    """What a run audits with and where it writes: the same fields as the CLI's parsed
    arguments, so :func:`audit_into` serves ``dpaudit audit-claims`` and
    ``dpaudit.audit_claim(out=...)`` alike."""

    out: str
    budget: str = "standard"
    seed: int = 0
    alpha: float = 0.05
    fresh: bool = False
    quiet: bool = True
    executor: str | None = None
    scheduler: str | None = None


#: What a Dask worker imports before its first task (the engine its tasks run).
_WORKER_PRELOAD = ("dpaudit.blackbox.empirical_audit", "dpaudit.claims.driver")


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
    #: The resume key of the code that audits it (:func:`audit_code_hash`), taken before the audit
    #: runs, so that the saved record carries the key the next run compares with (modules the
    #: release imports lazily during the audit do not change it).
    code_hash: str | None = None


@dataclass(frozen=True)
class _Outcome:
    claim_id: str
    record: dict[str, Any] | None
    error: str | None = None
    error_log: str | None = None
    seconds: float = 0.0
    traceback: str | None = None  # of a failed audit that ran where the log cannot be written
    #: The audit stopped on the claim's own input (a declared pair that is not a neighbour of its
    #: relation, a release breaking the output contract): exit 2, not "an audit failed" (3).
    input_error: bool = False


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
    from dpaudit.claims.record import ClaimAudit
    from dpaudit.claims.context import BUDGETS, AuditContext
    from dpaudit.claims.registry import get
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
    """Remove the saved JSON of a claim whose rerun *failed* when it holds a result of other
    settings, dpaudit version or code: those must not outlive a failed rerun. A result of the
    same settings and code is kept (a ``--fresh`` rerun that fails transiently lost
    it); a rerun that succeeds replaces the JSON atomically, one that is killed keeps it (issue
    25). The parent drops a removed claim from the manifest (:func:`_forget_failed`)."""
    from dpaudit.reporting.writer import claim_paths, ensure_inside

    stale = claim_paths(task.out, task.claim_id).json
    ensure_inside(task.out, stale.parent)
    if _finished_record(task) is not None:
        return
    try:
        stale.unlink()
    except FileNotFoundError:
        pass


def _forget_failed(out_dir: Path, claim_ids: Sequence[str]) -> None:
    """Drop failed claims whose saved JSON is gone from the manifest, so that the directory
    stays readable (``dpaudit report DIR`` refuses a manifest listing a missing file)."""
    from dpaudit.reporting.writer import (MANIFEST_NAME, MANIFEST_SCHEMA, atomic_write,
                                          claim_paths, read_manifest, to_json_text)

    listed = read_manifest(out_dir) or []
    gone = {cid for cid in claim_ids if cid in listed
            and not claim_paths(out_dir, cid).json.is_file()}
    if gone:
        atomic_write(out_dir / MANIFEST_NAME, to_json_text(
            {"schema": MANIFEST_SCHEMA, "claims": [c for c in listed if c not in gone]}))


def _save(task: _Task, record: dict[str, Any] | None, trace: str | None) -> str | None:
    """Write the claim's report files (or its error log); returns the error log's path."""
    from dpaudit.reporting.writer import atomic_write, write_claim_report

    log = _error_log_path(task.out, task.claim_id)
    if record is not None:
        # Hashed here, in the process that writes the report (a Dask worker may not have the
        # claim's paper registered): the resume check compares it with the code of the rerun.
        code_hash = task.code_hash or _code_hash_or_none(task.claim_id)
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
        record = _audit_record(task, progress, executor=executor)
        _save(task, record, None)
        return _Outcome(task.claim_id, record, seconds=time.perf_counter() - t0)
    except (Exception, SystemExit) as exc:  # one failed claim must not lose the others'
        try:                                   # results; sys.exit() in a release is a failure
            _remove_stale(task)
        except (OSError, ValueError):
            pass
        log_name = _save(task, None, traceback.format_exc())
        return _Outcome(task.claim_id, None, _error_text(exc, task.claim_id), log_name,
                        time.perf_counter() - t0,
                        input_error=is_input_error(exc, task.claim_id))


#: Modules whose ValueError/TypeError is a check of what a claim declares, not a failure of the
#: engine: the public Claim's own checks (pairs against the relation, the claimed values), the
#: relation check of a pair, and the output contract of a release (shape, dtype, comparability).
_INPUT_CHECKS = ("dpaudit.claims.user_claims", "dpaudit.claims.pair_relation",
                 "dpaudit.blackbox.sampling")


def is_input_error(exc: BaseException, claim_id: str) -> bool:
    """Whether ``exc``, raised by the audit of ``claim_id``, rejects the claim's own input.

    True for a ``ValueError`` or ``TypeError`` raised inside one of :data:`_INPUT_CHECKS` while
    auditing a claim that dpaudit does not bundle (a bundled paper's pairs and releases are
    dpaudit's own code, so an error there is a failed audit, exit 3). Such a run exits 2 (usage or
    input error), as a bad command line does.
    """
    if not isinstance(exc, (ValueError, TypeError)):
        return False
    tb = exc.__traceback__
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    if tb.tb_frame.f_globals.get("__name__") not in _INPUT_CHECKS:
        return False
    from dpaudit.claims.registry import get

    try:
        return get(claim_id).origin.kind != "bundled"
    except (KeyError, ValueError):
        return False


def relation_hint(exc: BaseException, claim_id: str) -> str:
    """A sentence naming the relation when a release's outputs on the two inputs of a pair differ
    in shape under ``add-remove`` (the two inputs hold different numbers of records, so a release
    with one output per record, a fixed-length stream, cannot compare them); ``""`` otherwise."""
    if "differ in shape or type" not in str(exc):
        return ""
    from dpaudit.claims.registry import get

    try:
        relation = getattr(get(claim_id).claim.neighbour, "value", None)
    except (KeyError, ValueError):
        return ""
    if relation != "add-remove":
        return ""
    from dpaudit.claims.pair_relation import ADD_REMOVE_SHAPE_HINT

    return "; " + ADD_REMOVE_SHAPE_HINT


def _error_text(exc: BaseException, claim_id: str = "") -> str:
    if isinstance(exc, SystemExit):
        return (f"SystemExit: the audited code called sys.exit({exc.code!r}) during the audit "
                "(a release must return its outputs, not end the process)")
    return f"{type(exc).__name__}: {exc}{relation_hint(exc, claim_id) if claim_id else ''}"


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
    except (Exception, SystemExit) as exc:
        return _Outcome(task.claim_id, None, _error_text(exc, task.claim_id), None,
                        time.perf_counter() - t0, traceback.format_exc(),
                        input_error=is_input_error(exc, task.claim_id))


def _registered_ids() -> list[str]:
    from dpaudit.claims.registry import all_claims

    return [rc.claim.id for rc in all_claims()]


def _file_identity(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_ino, st.st_mtime_ns


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
            and record.get("audit_code_sha256") is not None
            and record.get("audit_code_sha256") == (task.code_hash
                                                    or _code_hash_or_none(task.claim_id)))
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
        # The error itself is printed once, with the summary (not here as well).
        what = (outcome.record["verdict"] if outcome.record is not None
                else "input rejected (the error follows)" if outcome.input_error
                else "FAILED (the error follows)")
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
    from dpaudit.execution.executors import open_executor
    from dpaudit.claims.registry import get

    if name == "local" or len(tasks) == 1:
        ex = None if name == "local" else open_executor(
            name, scheduler, workers=jobs if jobs > 1 else None, preload=_WORKER_PRELOAD)
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
    with open_executor(name, scheduler, workers=workers, preload=_WORKER_PRELOAD) as ex:
        if name == "processes":
            for _, outcome in ex.map_unordered(_pool_task, list(tasks)):
                progress.finished(outcome)
                yield outcome
            return
        items = [(task, get(task.claim_id)) for task in tasks]
        for i, outcome in ex.map_unordered(_remote_task, items):
            if outcome.record is None:
                _remove_stale(tasks[i])
            log = _save(tasks[i], outcome.record, outcome.traceback)
            outcome = _Outcome(outcome.claim_id, outcome.record, outcome.error, log,
                               outcome.seconds)
            progress.finished(outcome)
            yield outcome


def _unknown_claim_message(cid: str) -> str:
    """``unknown claim id 'jkt12-colt/pgid'; did you mean jkt12-colt/pigd? ...``"""
    from dpaudit.claims.registry import unknown_claim_message

    return unknown_claim_message(cid)


def _resolve_claim_ids(ids: Sequence[str], use_all: bool, patterns: bool = True) -> list[str]:
    """The registered claim ids that ``ids`` select, in the order given, each once.

    Each argument is a claim id; with ``patterns`` (``audit-claims``) also a namespace, which
    selects every claim in it (``jkt12-colt`` or ``jkt12-colt/``: ``jkt12-colt/*``), or a glob
    pattern over ids (``'jkt12-*/p*'``, ``'*/pocp*'``: Python's ``fnmatch``, case-sensitive). An
    argument that selects nothing is a usage error naming it (``audit-claims
    mynamespace`` was "unknown claim id")."""
    import fnmatch

    from dpaudit.claims.registry import all_claims, get

    if use_all and ids:
        raise UsageError("give either --all or claim ids, not both")
    if use_all:
        resolved = [rc.claim.id for rc in all_claims()]
        if not resolved:
            raise UsageError("no claims are registered, so --all has nothing to audit")
        return resolved
    if not ids:
        raise UsageError("give the claim ids to audit, or --all (see `dpaudit list`)")
    registered: list[str] | None = None
    seen: list[str] = []
    for cid in ids:
        try:
            get(cid)
            selected = [cid]
        except KeyError:
            if not patterns:
                raise UsageError(_unknown_claim_message(cid)) from None
            if registered is None:
                registered = sorted(rc.claim.id for rc in all_claims())
            if any(c in cid for c in "*?["):
                selected = fnmatch.filter(registered, cid)
                if not selected:
                    raise UsageError(f"no registered claim id matches the pattern {cid!r} "
                                     "(`dpaudit list` shows the registered claims)") from None
            else:
                namespace = cid.rstrip("/")
                selected = [i for i in registered if namespace and i.startswith(namespace + "/")]
                if not selected:
                    raise UsageError(_unknown_claim_message(cid) + "; an argument may also be a "
                                     "namespace (every claim in it) or a glob pattern such as "
                                     "'jkt12-*/p*'") from None
        seen += [i for i in selected if i not in seen]
    return seen


#: Directories never used as a report directory (``--out /`` wrote reports into the root).
_SYSTEM_ROOTS = frozenset(["/", "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32",
                           "/lib64", "/opt", "/proc", "/root", "/run", "/sbin", "/srv", "/sys",
                           "/tmp", "/usr", "/var", "/usr/bin", "/usr/lib", "/usr/local",
                           "/var/tmp"])


def refuse_system_root(out: str, option: str = "--out") -> None:
    """UsageError when ``out`` is ``/`` or another system directory."""
    import os

    resolved = os.path.realpath(out)
    if resolved in _SYSTEM_ROOTS or resolved == os.path.realpath(os.path.expanduser("~")):
        raise UsageError(f"{option} {out} is a system or home directory ({resolved}); dpaudit "
                         "writes its reports into a directory of their own: give e.g. "
                         f"{option} {os.path.join(out, 'dpaudit-reports')}")


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
    refuse_system_root(out)
    return path


def audit_into(claim_ids: Sequence[str], settings: RunSettings, *, jobs: int = 1,
               out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Audit the registered claims ``claim_ids`` into ``settings.out`` and return the run's exit
    status (:data:`EXIT_OK`, :data:`EXIT_VIOLATED`, :data:`EXIT_FAILED`, ...): the reports of each
    claim, the index, resume from saved results of the same settings and audit code (unless
    ``settings.fresh``), and one writer per directory. ``out`` gets the summary, ``err`` progress
    and errors (default: the process's streams). Raises :class:`UsageError` for bad settings (a
    report directory that cannot be used, another run writing it)."""
    return _audit_many(claim_ids, settings, jobs, out or sys.stdout, err or sys.stderr)


def _audit_many(claim_ids: Sequence[str], args: argparse.Namespace | RunSettings, jobs: int, out: TextIO,
                err: TextIO) -> int:
    """Audit ``claim_ids`` into ``--out``, holding its lock throughout: one writer per report
    directory (:func:`dpaudit.reporting.writer.report_directory_lock`); a second run on the same
    directory is refused with exit 2."""
    from dpaudit.execution.executors import check_executor
    from dpaudit.reporting.writer import claim_paths, report_directory_lock

    executor = getattr(args, "executor", None)
    scheduler = getattr(args, "scheduler", None)
    try:
        check_executor(executor, scheduler)
    except ValueError as exc:
        raise UsageError(str(exc).replace("executor=", "--executor ").replace(
            "scheduler=", "--scheduler")) from None
    try:
        for cid in claim_ids:
            claim_paths(args.out, cid)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    out_dir = _prepare_out(args.out)
    try:
        lock = report_directory_lock(out_dir)
        lock.__enter__()
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    try:
        return _audit_many_locked(claim_ids, args, jobs, out, err, out_dir, executor, scheduler)
    finally:
        lock.__exit__(None, None, None)


def _print_failures(failures: Sequence[_Outcome], kept_ids: Sequence[str], err: TextIO) -> None:
    """One line per claim that was not audited: ``the input of X was rejected`` (exit 2) or ``the
    audit of X failed`` (exit 3), the reason and where its traceback is."""
    for f in failures:
        where = f" (traceback in {f.error_log})" if f.error_log else ""
        if f.claim_id in kept_ids:
            where += "; its previous result of the same settings and code is kept"
        kind = "input of" if f.input_error else "audit of"
        verb = "was rejected" if f.input_error else "failed"
        print(f"dpaudit: error: the {kind} {f.claim_id} {verb}: {f.error}{where}", file=err)


def _audit_many_locked(claim_ids: Sequence[str], args: argparse.Namespace | RunSettings, jobs: int,
                       out: TextIO, err: TextIO, out_dir: Path, executor: str | None,
                       scheduler: str | None) -> int:
    from dpaudit.execution.executors import ExecutionError
    from dpaudit.reporting.writer import (add_to_manifest, claim_paths, ensure_inside,
                                          load_claim_records, read_manifest,
                                          remove_stale_temp_files, render_claim_files,
                                          write_index)

    try:  # nothing is written through a symbolic link below --out
        for folder in {claim_paths(out_dir, cid).directory for cid in claim_ids} | {
                out_dir / "papers"}:
            ensure_inside(out_dir, folder)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    # The saved JSON of each claim before this run (inode and mtime): after an interrupt, a claim
    # counts as finished by this run only when its file was replaced (--fresh keeps the old one
    # until the new one is written).
    before = {cid: _file_identity(claim_paths(out_dir, cid).json) for cid in claim_ids}
    try:
        earlier = read_manifest(out_dir) or []
        remove_stale_temp_files(out_dir, sorted(set(earlier) | set(claim_ids)))
        # Claims earlier runs wrote here and this run does not redo: they must load now, before
        # any work, or the index would silently lose them.
        kept = load_claim_records(out_dir, [cid for cid in earlier if cid not in claim_ids])
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    tasks = [_Task(cid, args.budget, args.seed, args.alpha, args.out, _code_hash_or_none(cid))
             for cid in claim_ids]
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
    backend_error: ExecutionError | OSError | None = None
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
    except (ExecutionError, OSError) as exc:  # a lost Dask scheduler, a full disk: keep what
        backend_error = exc                     # finished
    finally:
        progress.close()
    # Failures of the list above are only those reported before an interrupt; rescan the disk so
    # that the index and the exit status count every claim that finished, even in a worker.
    if interrupted is not None or backend_error is not None:
        for task in todo:
            if _file_identity(claim_paths(out_dir, task.claim_id).json) == before[task.claim_id]:
                continue  # not rewritten by this run
            record = _finished_record(task)
            if record is not None:
                records[task.claim_id] = record
    kept_ids: list[str] = []
    for f in failures:  # a previous result of the same settings and code survives a failed rerun
        task = next(t for t in todo if t.claim_id == f.claim_id)
        record = _finished_record(task)
        if record is not None:
            records[f.claim_id] = record
            kept_ids.append(f.claim_id)
    try:
        _forget_failed(out_dir, [f.claim_id for f in failures if f.claim_id not in kept_ids])
    except (OSError, ValueError) as exc:
        print(f"dpaudit: error: cannot update the manifest of {args.out} ({exc})", file=err)
    unfinished = [cid for cid in claim_ids if cid not in records]
    try:
        if interrupted is not None or backend_error is not None:
            add_to_manifest(out_dir, list(records))
        write_index(out_dir, list(records.values()), display_dir=args.out,
                    registered=_registered_ids(),
                    missing=unfinished if (interrupted is not None or backend_error is not None)
                    else None)
    except OSError as exc:
        if backend_error is None and interrupted is None:
            raise
        print(f"dpaudit: error: cannot write the index of {args.out} ({exc})", file=err)
    done = [records[cid] for cid in claim_ids if cid in records]
    if interrupted is not None or backend_error is not None:
        _print_failures(failures, kept_ids, err)  # the claims that failed before the stop
    if isinstance(backend_error, OSError):
        print(f"dpaudit: error: {backend_error}; {len(done)} of {len(tasks)} claims are finished "
              f"and saved in {args.out}; free the space and run the same command again to "
              "resume.", file=err)
        return EXIT_FAILED
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
    unaudited = [cid for cid in claim_ids if cid not in records]
    if unaudited:  # never "0 claims: 0 violated": say what was not audited, and why (below)
        out.write(f"{len(unaudited)} of {len(claim_ids)} claim{'s' if len(claim_ids) != 1 else ''}"
                  f" not audited ({', '.join(unaudited)}): see the error"
                  f"{'s' if len(unaudited) != 1 else ''} on stderr.\n")
    _print_failures(failures, kept_ids, err)
    # A crashed audit is never hidden by another claim's violation: exit 3 first; a
    # claim whose own input was rejected is a usage or input error (2), as a bad command line is.
    if any(not f.input_error for f in failures):
        return EXIT_FAILED
    if failures:
        return EXIT_USAGE
    return EXIT_VIOLATED if any(r["verdict"] == "violated" for r in done) else EXIT_OK
