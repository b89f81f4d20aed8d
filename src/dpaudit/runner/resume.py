"""Resume: which saved claim records a rerun reuses, and what a failed rerun leaves behind.

A saved record is reused when it was written with the same budget, seed, alpha, dpaudit version
and audit code; the code's hash is the claims layer's resume key
(:func:`dpaudit.claims.resume_key.resume_key`: the claim's own module and every engine module).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Sequence

from dpaudit._version import __version__
# ``audit_code_hash`` is the name the runner (and tests that patch it) use for the resume key.
from dpaudit.claims.resume_key import resume_key as audit_code_hash
from dpaudit.runner.task import Task

__all__ = ["audit_code_hash", "code_hash_or_none", "file_identity", "finished_record",
           "forget_failed", "remove_stale"]


def code_hash_or_none(claim_id: str) -> str | None:
    """:func:`audit_code_hash` of ``claim_id``, or ``None`` when it is no longer registered."""
    try:
        return audit_code_hash(claim_id)
    except KeyError:  # no longer registered: nothing to compare with, redo (and fail clearly)
        return None


def file_identity(path: Path) -> tuple[int, int] | None:
    """The inode and modification time of ``path`` (``None`` when it cannot be read): a claim
    counts as finished by an interrupted run only when its saved JSON was replaced."""
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_ino, st.st_mtime_ns


def finished_record(task: Task) -> dict[str, Any] | None:
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
                                                    or code_hash_or_none(task.claim_id)))
    return record if same else None


def remove_stale(task: Task) -> None:
    """Remove the saved JSON of a claim whose rerun *failed* when it holds a result of other
    settings, dpaudit version or code: those must not outlive a failed rerun. A result of the
    same settings and code is kept (a ``--fresh`` rerun that fails transiently lost it); a rerun
    that succeeds replaces the JSON atomically, one that is killed keeps it. The parent drops a
    removed claim from the manifest (:func:`forget_failed`)."""
    from dpaudit.reporting.writer import claim_paths, ensure_inside

    stale = claim_paths(task.out, task.claim_id).json
    ensure_inside(task.out, stale.parent)
    if finished_record(task) is not None:
        return
    try:
        stale.unlink()
    except FileNotFoundError:
        pass


def forget_failed(out_dir: Path, claim_ids: Sequence[str]) -> None:
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
