"""One claim's audit as the runner schedules it (:class:`Task`) and what came of it
(:class:`Outcome`): plain frozen values, so that they travel to worker processes and Dask workers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["Task", "Outcome"]


@dataclass(frozen=True)
class Task:
    """Audit ``claim_id`` with these settings into the report directory ``out``."""

    claim_id: str
    budget: str
    seed: int
    alpha: float
    out: str
    #: The resume key of the code that audits it (:func:`dpaudit.runner.resume.audit_code_hash`),
    #: taken before the audit runs, so that the saved record carries the key the next run compares
    #: with (modules the release imports lazily during the audit do not change it).
    code_hash: str | None = None


@dataclass(frozen=True)
class Outcome:
    """The report record of a finished audit, or the error of a failed one."""

    claim_id: str
    record: dict[str, Any] | None
    error: str | None = None
    error_log: str | None = None
    seconds: float = 0.0
    traceback: str | None = None  # of a failed audit that ran where the log cannot be written
    #: The audit stopped on the claim's own input (a declared pair that is not a neighbour of its
    #: relation, a release breaking the output contract): exit 2, not "an audit failed" (3).
    input_error: bool = False
