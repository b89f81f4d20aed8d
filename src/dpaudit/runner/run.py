"""One run: audit claims into a report directory (:func:`audit_into`), the one runner behind
``dpaudit audit``/``audit-claims`` (:mod:`dpaudit.cli`) and ``dpaudit.audit_claim(out=...)``.

It checks the settings and the directory, takes the directory's lock, reuses the saved results of
the same settings and code, runs the rest, keeps every finished claim through an interrupt or a
lost executor, writes the index and returns the run's exit status.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence, TextIO

from dpaudit.reporting.terminal import counts_sentence, summary_table
from dpaudit.runner.claim_ids import registered_ids
from dpaudit.runner.execute import run_tasks
from dpaudit.runner.exit_status import (EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, EXIT_TERMINATED,
                                        EXIT_USAGE, EXIT_VIOLATED, Terminated, UsageError)
from dpaudit.runner.failures import print_failures
from dpaudit.runner.progress import Progress
from dpaudit.runner.report_directory import locked, prepare_out
from dpaudit.runner.resume import code_hash_or_none, file_identity, finished_record, forget_failed
from dpaudit.runner.task import Outcome, Task

__all__ = ["RunSettings", "audit_into"]


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


def audit_into(claim_ids: Sequence[str], settings: RunSettings, *, jobs: int = 1,
               out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Audit the registered claims ``claim_ids`` into ``settings.out`` and return the run's exit
    status (:data:`EXIT_OK`, :data:`EXIT_VIOLATED`, :data:`EXIT_FAILED`, ...): the reports of each
    claim, the index, resume from saved results of the same settings and audit code (unless
    ``settings.fresh``), and one writer per directory. ``out`` gets the summary, ``err`` progress
    and errors (default: the process's streams). Raises :class:`UsageError` for bad settings (a
    report directory that cannot be used, another run writing it: one writer per report
    directory, :func:`dpaudit.reporting.writer.report_directory_lock`)."""
    from dpaudit.execution.executors import check_executor
    from dpaudit.reporting.writer import claim_paths

    try:
        check_executor(settings.executor, settings.scheduler)
    except ValueError as exc:
        raise UsageError(str(exc).replace("executor=", "--executor ").replace(
            "scheduler=", "--scheduler")) from None
    try:
        for cid in claim_ids:
            claim_paths(settings.out, cid)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    with locked(prepare_out(settings.out)) as out_dir:
        return _audit_locked(claim_ids, settings, jobs, out or sys.stdout, err or sys.stderr,
                             out_dir)


def _audit_locked(claim_ids: Sequence[str], settings: RunSettings, jobs: int, out: TextIO,
                  err: TextIO, out_dir: Path) -> int:
    """The run of :func:`audit_into` once it holds ``out_dir``'s lock."""
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
    before = {cid: file_identity(claim_paths(out_dir, cid).json) for cid in claim_ids}
    try:
        earlier = read_manifest(out_dir) or []
        remove_stale_temp_files(out_dir, sorted(set(earlier) | set(claim_ids)))
        # Claims earlier runs wrote here and this run does not redo: they must load now, before
        # any work, or the index would silently lose them.
        kept = load_claim_records(out_dir, [cid for cid in earlier if cid not in claim_ids])
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    tasks = [Task(cid, settings.budget, settings.seed, settings.alpha, settings.out,
                  code_hash_or_none(cid)) for cid in claim_ids]
    records: dict[str, dict[str, Any]] = {r["id"]: r for r in kept}
    todo = []
    for task in tasks:
        record = None if settings.fresh else finished_record(task)
        if record is None:
            todo.append(task)
            continue
        paths = claim_paths(settings.out, task.claim_id)
        if not (paths.markdown.exists() and paths.html.exists()):
            render_claim_files(settings.out, record)
        records[task.claim_id] = record
    if records:
        add_to_manifest(out_dir, list(records))
    progress = Progress(len(todo), settings.quiet, err)
    skipped = len(tasks) - len(todo)
    if skipped:
        progress.message(f"dpaudit: {skipped} of {len(tasks)} claims already audited in "
                         f"{settings.out} with these settings, dpaudit version and audit code; "
                         "skipping them (--fresh redoes them)")
    interrupted: Terminated | KeyboardInterrupt | None = None
    backend_error: ExecutionError | OSError | None = None
    failures: list[Outcome] = []
    try:
        for outcome in run_tasks(todo, jobs, progress, settings.executor, settings.scheduler):
            if outcome.record is not None:
                records[outcome.claim_id] = outcome.record
                add_to_manifest(out_dir, [outcome.claim_id])
            else:
                failures.append(outcome)
    except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM (Terminated)
        interrupted = exc
    except (ExecutionError, OSError) as exc:  # a lost Dask scheduler, a full disk: keep what
        backend_error = exc                     # finished
    finally:
        progress.close()
    # Failures of the list above are only those reported before an interrupt; rescan the disk so
    # that the index and the exit status count every claim that finished, even in a worker.
    if interrupted is not None or backend_error is not None:
        for task in todo:
            if file_identity(claim_paths(out_dir, task.claim_id).json) == before[task.claim_id]:
                continue  # not rewritten by this run
            record = finished_record(task)
            if record is not None:
                records[task.claim_id] = record
    kept_ids: list[str] = []
    for f in failures:  # a previous result of the same settings and code survives a failed rerun
        task = next(t for t in todo if t.claim_id == f.claim_id)
        record = finished_record(task)
        if record is not None:
            records[f.claim_id] = record
            kept_ids.append(f.claim_id)
    try:
        forget_failed(out_dir, [f.claim_id for f in failures if f.claim_id not in kept_ids])
    except (OSError, ValueError) as exc:
        print(f"dpaudit: error: cannot update the manifest of {settings.out} ({exc})", file=err)
    unfinished = [cid for cid in claim_ids if cid not in records]
    try:
        if interrupted is not None or backend_error is not None:
            add_to_manifest(out_dir, list(records))
        write_index(out_dir, list(records.values()), display_dir=settings.out,
                    registered=registered_ids(),
                    missing=unfinished if (interrupted is not None or backend_error is not None)
                    else None)
    except OSError as exc:
        if backend_error is None and interrupted is None:
            raise
        print(f"dpaudit: error: cannot write the index of {settings.out} ({exc})", file=err)
    done = [records[cid] for cid in claim_ids if cid in records]
    if interrupted is not None or backend_error is not None:
        print_failures(failures, kept_ids, err)  # the claims that failed before the stop
    if isinstance(backend_error, OSError):
        print(f"dpaudit: error: {backend_error}; {len(done)} of {len(tasks)} claims are finished "
              f"and saved in {settings.out}; free the space and run the same command again to "
              "resume.", file=err)
        return EXIT_FAILED
    if backend_error is not None:
        print(f"dpaudit: error: {str(backend_error).rstrip('.')}; {len(done)} of {len(tasks)} "
              f"claims are finished and saved in {settings.out} and indexed in "
              f"{out_dir / 'index.html'}; run the same command again to resume.", file=err)
        return EXIT_FAILED
    if interrupted is not None:
        terminated = isinstance(interrupted, Terminated)
        print(f"dpaudit: {'terminated (SIGTERM)' if terminated else 'interrupted'}; {len(done)} "
              f"of {len(tasks)} claims are finished and saved in {settings.out} and indexed in "
              f"{out_dir / 'index.html'}; run the same command again to resume.", file=err)
        return EXIT_TERMINATED if terminated else EXIT_INTERRUPTED
    if done:
        out.write(summary_table(done) + "\n\n")
        out.write(f"{counts_sentence(done)} Reports: {out_dir / 'index.html'}\n")
    unaudited = [cid for cid in claim_ids if cid not in records]
    if unaudited:  # never "0 claims: 0 violated": say what was not audited, and why (below)
        out.write(f"{len(unaudited)} of {len(claim_ids)} claim{'s' if len(claim_ids) != 1 else ''}"
                  f" not audited ({', '.join(unaudited)}): see the error"
                  f"{'s' if len(unaudited) != 1 else ''} on stderr.\n")
    print_failures(failures, kept_ids, err)
    # A crashed audit is never hidden by another claim's violation: exit 3 first; a
    # claim whose own input was rejected is a usage or input error (2), as a bad command line is.
    if any(not f.input_error for f in failures):
        return EXIT_FAILED
    if failures:
        return EXIT_USAGE
    return EXIT_VIOLATED if any(r["verdict"] == "violated" for r in done) else EXIT_OK
