"""The ``dpaudit`` command line (also ``python -m dpaudit``).

Commands: ``list``, ``audit``, ``audit-claims``, ``report``, ``float-audit`` and ``gate``. Every
audited claim is written to ``DIR/<claim id>.{json,md,html}`` and the directory's index to
``DIR/index.{json,md,html}`` (:mod:`dpaudit.reporting.writer`), each claim's JSON atomically when
its audit finishes, so an interrupted run resumes (claims saved with the same budget, seed,
alpha, dpaudit version and audit code are skipped; ``--fresh`` redoes them). ``--jobs N`` and
``--executor dask`` run claims through :mod:`dpaudit.execution.executors`; a single claim sends the
chunks of its empirical tests there instead. Exit status: 0 no audited claim violated, 1 one is,
2 usage or input errors (:func:`dpaudit.runner.is_input_error`), 3 an audit or the tool failed
(never hidden behind 1), 130 interrupted, 143 terminated; errors are one sentence on stderr
(``--traceback`` for Python's). The index lists exactly the claims dpaudit runs wrote into
``DIR`` (``DIR/dpaudit-manifest.json``).

Every command and option, resuming and the exit statuses in full: docs/cli.md#the-dpaudit-command.
"""

from __future__ import annotations

import argparse
import json
import math
import signal
import sys
from pathlib import Path
from typing import Any, Sequence, TextIO

from dpaudit.cli.gate import cmd_gate
from dpaudit.cli.listing import cmd_list
from dpaudit.cli.parser import (EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, EXIT_TERMINATED, EXIT_USAGE,
                                EXIT_VIOLATED, UsageError, build_parser)
from dpaudit.reporting.terminal import (ascii_text, counts_sentence, one_line_error, summary_table,
                                       text_table)
from dpaudit.runner import (RunSettings, Terminated, audit_into, refuse_system_root,
                            registered_ids, resolve_claim_ids)
from dpaudit.runner.resume import finished_record
from dpaudit.runner.task import Task

__all__ = ["main", "build_parser", "EXIT_OK", "EXIT_VIOLATED", "EXIT_USAGE", "EXIT_FAILED",
           "EXIT_INTERRUPTED", "EXIT_TERMINATED"]


def _run_settings(args: argparse.Namespace) -> RunSettings:
    """The run options of ``audit`` and ``audit-claims`` (parser: ``_add_run_options``)."""
    return RunSettings(out=args.out, budget=args.budget, seed=args.seed, alpha=args.alpha,
                       fresh=args.fresh, quiet=args.quiet, executor=args.executor,
                       scheduler=args.scheduler)


def _cmd_audit(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from dpaudit.reporting.view import verdict_sentence
    from dpaudit.reporting.writer import claim_paths

    [claim_id] = resolve_claim_ids([args.claim_id], False, patterns=False)
    status = audit_into([claim_id], _run_settings(args), jobs=1, out=out, err=err)
    if status in (EXIT_OK, EXIT_VIOLATED):
        record = finished_record(Task(claim_id, args.budget, args.seed, args.alpha, args.out))
        if record is not None:
            paths = claim_paths(args.out, claim_id)
            out.write(f"\n{ascii_text(verdict_sentence(record))}\nReport: {paths.html} "
                      f"(also {paths.markdown.name} and {paths.json.name})\n")
    return status

def _cmd_audit_claims(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    claim_ids = resolve_claim_ids(args.claim_ids, args.all)
    return audit_into(claim_ids, _run_settings(args), jobs=args.jobs, out=out, err=err)


def _cmd_float_audit(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from dpaudit.formal.floating_point import audit_float_laplace

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
            out.write(text_table(["output (exact)", "output", f"P on f0={args.f0:g}",
                              f"P on f1={args.f1:g}"], rows) + "\n")
    return EXIT_VIOLATED if evidence.violated else EXIT_OK


def _cmd_report(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from dpaudit.reporting.writer import (no_saved_audits_message, report_directory_lock,
                                          rerender_directory, saved_claim_ids)

    directory = Path(args.directory)
    if not directory.is_dir():
        raise UsageError(f"{args.directory} is not a directory")
    refuse_system_root(args.directory, "report")
    try:  # a directory with no saved audit is an input error: nothing written, not even the lock
        if not saved_claim_ids(directory):
            raise UsageError(no_saved_audits_message(args.directory))
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    try:  # one writer per report directory (reporting.writer: report_directory_lock)
        with report_directory_lock(directory):
            records, paths = rerender_directory(directory, display_dir=args.directory,
                                                registered=registered_ids())
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    except OSError as exc:  # read-only or full: exit 2 naming the file, as audit-claims does
        where = f" ({exc.filename})" if exc.filename else ""
        raise UsageError(f"cannot write the reports of {args.directory}: "
                         f"{exc.strerror or exc}{where}") from None
    out.write(summary_table(records) + "\n\n")
    out.write(f"{counts_sentence(records)} Re-rendered {len(records)} report"
              f"{'s' if len(records) != 1 else ''} and {paths.html}\n")
    # report re-renders, it does not audit: rendering succeeded, whatever the verdicts say.
    return EXIT_OK


# ------------------------------------------------------------------------------------------------
# Entry point
# ------------------------------------------------------------------------------------------------

def _on_sigterm(signum: int, frame: Any) -> None:
    """SIGTERM (how CI cancels a job) is handled like Ctrl-C, but exits 143."""
    raise Terminated()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``dpaudit`` command (``argv`` defaults to ``sys.argv[1:]``); returns the exit status.

    Output goes to ``sys.stdout`` (results) and ``sys.stderr`` (progress and errors).
    """
    out, err = _PipeSafe(sys.stdout), sys.stderr
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse has printed usage and a one-line error (or --help)
        return int(exc.code) if isinstance(exc.code, int) else EXIT_USAGE
    commands = {"list": lambda: cmd_list(args, out, err),
                "audit": lambda: _cmd_audit(args, out, err),
                "audit-claims": lambda: _cmd_audit_claims(args, out, err),
                "report": lambda: _cmd_report(args, out, err),
                "float-audit": lambda: _cmd_float_audit(args, out, err),
                "gate": lambda: cmd_gate(args, out, err)}
    from dpaudit.claims.registry import PluginError

    previous = None
    try:
        previous = signal.signal(signal.SIGTERM, _on_sigterm)
    except ValueError:  # not the main thread: leave SIGTERM alone
        pass
    try:
        _load_plugins(getattr(args, "plugin", None) or [])
        status = commands[args.command]()
        out.flush()
        return status
    except (UsageError, PluginError) as exc:
        # PluginError: an entry point or --plugin failed to import (with or without --plugin,
        # the same exit 2 and one sentence naming the module).
        print(f"dpaudit: error: {str(exc).rstrip('.')}.", file=err)
        return EXIT_USAGE
    except Terminated:
        print("dpaudit: terminated (SIGTERM).", file=err)
        return EXIT_TERMINATED
    except KeyboardInterrupt:
        print("dpaudit: interrupted.", file=err)
        return EXIT_INTERRUPTED
    except Exception as exc:
        if args.traceback:
            raise
        print(f"dpaudit: error: {one_line_error(exc)} (rerun with --traceback for details).", file=err)
        return EXIT_FAILED
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


class _PipeSafe:
    """stdout that stops writing when its reader is gone (``dpaudit list | head -1``): the rest of
    the output is dropped and the command's own exit status stands (a closed pipe is not an error
    of the audit, and must not hide a violation's exit 1)."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.gone = False

    def write(self, text: str) -> int:
        if not self.gone:
            try:
                self.stream.write(text)
            except BrokenPipeError:
                self._closed()
        return len(text)

    def flush(self) -> None:
        if not self.gone:
            try:
                self.stream.flush()
            except BrokenPipeError:
                self._closed()

    def _closed(self) -> None:
        self.gone = True
        _silence_stdout()

    def __getattr__(self, name: str):  # isatty, encoding, fileno, ...
        return getattr(self.stream, name)


def _silence_stdout() -> None:
    """Point stdout at /dev/null so that the interpreter's final flush of a closed pipe does not
    print "Exception ignored ... BrokenPipeError" (the recipe of the Python signal docs)."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # not a real file descriptor (captured)
        pass


def _load_plugins(specs: Sequence[str]) -> None:
    """Import every ``--plugin`` module (and the installed entry points) before the command runs."""
    if not specs:
        return
    from dpaudit.claims.registry import load_plugin

    for spec in specs:
        load_plugin(spec)
