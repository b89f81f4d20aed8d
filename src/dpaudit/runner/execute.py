"""Running claims' audits: one claim in this process, several on an executor's workers (a pool of
processes that write their own reports, or a Dask cluster whose records come back to be written
here), each finished audit's report files written as it finishes.

A failed audit is returned as an :class:`~dpaudit.runner.task.Outcome`, never raised;
``KeyboardInterrupt`` (and :class:`~dpaudit.runner.exit_status.Terminated`) and the executor's
``ExecutionError`` propagate to the caller.
"""

from __future__ import annotations

import time
import traceback
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from dpaudit.runner.dask_logging import dask_logs_quiet
from dpaudit.runner.failures import error_text, is_input_error
from dpaudit.runner.progress import Progress
from dpaudit.runner.resume import code_hash_or_none, remove_stale
from dpaudit.runner.task import Outcome, Task

__all__ = ["WORKER_PRELOAD", "audit_record", "error_log_path", "run_task", "run_tasks", "save"]

#: What a Dask worker imports before its first task (the engine its tasks run).
WORKER_PRELOAD = ("dpaudit.blackbox.empirical_audit", "dpaudit.claims.driver")


def error_log_path(out: str, claim_id: str) -> Path:
    """Where the traceback of ``claim_id``'s failed audit is saved: ``<claim>.error.log``."""
    from dpaudit.reporting.writer import claim_paths

    json_path = claim_paths(out, claim_id).json
    return json_path.with_name(json_path.stem + ".error.log")


def audit_record(task: Task, progress: Callable[[int, int, str], None] | None = None,
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


def save(task: Task, record: dict[str, Any] | None, trace: str | None) -> str | None:
    """Write the claim's report files (or its error log); returns the error log's path."""
    from dpaudit.reporting.writer import atomic_write, write_claim_report

    log = error_log_path(task.out, task.claim_id)
    if record is not None:
        # Hashed here, in the process that writes the report (a Dask worker may not have the
        # claim's paper registered): the resume check compares it with the code of the rerun.
        code_hash = task.code_hash or code_hash_or_none(task.claim_id)
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


def run_task(task: Task, progress: Callable[[int, int, str], None] | None = None,
             executor: Any = None) -> Outcome:
    """Audit one claim and write its report files; failures are returned, never raised.

    ``KeyboardInterrupt`` is not caught: an interrupted claim leaves no JSON behind, so a rerun
    redoes it.
    """
    t0 = time.perf_counter()
    try:
        record = audit_record(task, progress, executor=executor)
        save(task, record, None)
        return Outcome(task.claim_id, record, seconds=time.perf_counter() - t0)
    except (Exception, SystemExit) as exc:  # one failed claim must not lose the others'
        try:                                   # results; sys.exit() in a release is a failure
            remove_stale(task)
        except (OSError, ValueError):
            pass
        log_name = save(task, None, traceback.format_exc())
        return Outcome(task.claim_id, None, error_text(exc, task.claim_id), log_name,
                       time.perf_counter() - t0,
                       input_error=is_input_error(exc, task.claim_id))


def pool_task(shared: Any, task: Task) -> Outcome:
    """A claim in a local worker process (same filesystem): audit and write, as in-process."""
    return run_task(task)


def remote_task(shared: Any, item: tuple[Task, Any]) -> Outcome:
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
            record = audit_record(task, registered=registered)
        return Outcome(task.claim_id, record, seconds=time.perf_counter() - t0)
    except (Exception, SystemExit) as exc:
        return Outcome(task.claim_id, None, error_text(exc, task.claim_id), None,
                       time.perf_counter() - t0, traceback.format_exc(),
                       input_error=is_input_error(exc, task.claim_id))


def run_tasks(tasks: Sequence[Task], jobs: int, progress: Progress, executor: str | None = None,
              scheduler: str | None = None) -> Iterable[Outcome]:
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
        with dask_logs_quiet():
            yield from run_tasks_on(name, tasks, jobs, progress, scheduler)
        return
    yield from run_tasks_on(name, tasks, jobs, progress, scheduler)


def run_tasks_on(name: str, tasks: Sequence[Task], jobs: int, progress: Progress,
                 scheduler: str | None) -> Iterable[Outcome]:
    """The tasks on the executor ``name`` (``local``, ``processes``, ``dask``): see
    :func:`run_tasks`."""
    from dpaudit.execution.executors import open_executor
    from dpaudit.claims.registry import get

    if name == "local" or len(tasks) == 1:
        ex = None if name == "local" else open_executor(
            name, scheduler, workers=jobs if jobs > 1 else None, preload=WORKER_PRELOAD)
        try:
            for task in tasks:
                outcome = run_task(task, progress.claim_progress(task.claim_id), executor=ex)
                progress.finished(outcome)
                yield outcome
        finally:
            if ex is not None:
                ex.close()
        return
    workers = jobs if jobs > 1 else None
    with open_executor(name, scheduler, workers=workers, preload=WORKER_PRELOAD) as ex:
        if name == "processes":
            for _, outcome in ex.map_unordered(pool_task, list(tasks)):
                progress.finished(outcome)
                yield outcome
            return
        items = [(task, get(task.claim_id)) for task in tasks]
        for i, outcome in ex.map_unordered(remote_task, items):
            if outcome.record is None:
                remove_stale(tasks[i])
            log = save(tasks[i], outcome.record, outcome.traceback)
            outcome = Outcome(outcome.claim_id, outcome.record, outcome.error, log,
                              outcome.seconds)
            progress.finished(outcome)
            yield outcome
