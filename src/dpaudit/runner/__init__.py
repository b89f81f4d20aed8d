"""Auditing claims into a report directory: the one runner behind ``dpaudit audit``/``audit-claims``
(:mod:`dpaudit.cli`) and ``dpaudit.audit_claim(out=...)`` (:mod:`dpaudit.api`). A top layer above
the engine and the reports, below the command line, which it never imports.

Modules, one concept each: :mod:`.run` (:func:`audit_into`: one run, its index and exit status),
:mod:`.exit_status` (the exit codes, :class:`UsageError`, :class:`Terminated`), :mod:`.task` (a
claim's task and outcome), :mod:`.execute` (running tasks in this process or on an executor),
:mod:`.resume` (saved results a rerun reuses, keyed on the audit code's hash), :mod:`.failures`
(input errors and failed audits, in one sentence), :mod:`.progress` (stderr progress),
:mod:`.dask_logging` (Dask's logs silenced), :mod:`.report_directory` (a usable directory and its
lock) and :mod:`.claim_ids` (which claims the arguments select).
"""

from __future__ import annotations

from dpaudit.runner.claim_ids import registered_ids, resolve_claim_ids
from dpaudit.runner.exit_status import (EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, EXIT_TERMINATED,
                                        EXIT_USAGE, EXIT_VIOLATED, Terminated, UsageError)
from dpaudit.runner.failures import is_input_error, relation_hint
from dpaudit.runner.report_directory import refuse_system_root
from dpaudit.runner.run import RunSettings, audit_into

__all__ = ["audit_into", "RunSettings", "UsageError", "Terminated", "EXIT_OK", "EXIT_VIOLATED",
           "EXIT_USAGE", "EXIT_FAILED", "EXIT_INTERRUPTED", "EXIT_TERMINATED", "is_input_error",
           "relation_hint", "refuse_system_root", "resolve_claim_ids", "registered_ids"]
