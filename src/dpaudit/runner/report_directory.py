"""The report directory a run writes: never a system or home directory, created and tested for
writing before any audit, and held by one run at a time (its lock)."""

from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from dpaudit.runner.exit_status import UsageError

__all__ = ["SYSTEM_ROOTS", "locked", "prepare_out", "refuse_system_root"]

#: Directories never used as a report directory (``--out /`` wrote reports into the root).
SYSTEM_ROOTS = frozenset(["/", "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32",
                          "/lib64", "/opt", "/proc", "/root", "/run", "/sbin", "/srv", "/sys",
                          "/tmp", "/usr", "/var", "/usr/bin", "/usr/lib", "/usr/local",
                          "/var/tmp"])


def refuse_system_root(out: str, option: str = "--out") -> None:
    """UsageError when ``out`` is ``/`` or another system directory."""
    resolved = os.path.realpath(out)
    if resolved in SYSTEM_ROOTS or resolved == os.path.realpath(os.path.expanduser("~")):
        raise UsageError(f"{option} {out} is a system or home directory ({resolved}); dpaudit "
                         "writes its reports into a directory of their own: give e.g. "
                         f"{option} {os.path.join(out, 'dpaudit-reports')}")


def prepare_out(out: str) -> Path:
    """The report directory ``out``, created if needed; UsageError when it is empty, not a
    directory, cannot be created or written, or is a system directory."""
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


@contextmanager
def locked(out_dir: Path) -> Iterator[Path]:
    """Hold ``out_dir``'s lock (:func:`dpaudit.reporting.writer.report_directory_lock`: one
    writer per report directory) for the body; another run holding it is a UsageError."""
    from dpaudit.reporting.writer import report_directory_lock

    try:
        lock = report_directory_lock(out_dir)
        lock.__enter__()
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    try:
        yield out_dir
    finally:
        lock.__exit__(None, None, None)
