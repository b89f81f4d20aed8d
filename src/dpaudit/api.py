"""The public entry points for claims about your own code: :func:`register_claim` and
:func:`audit_claim` (exported as ``dpaudit.register_claim`` and ``dpaudit.audit_claim``).

A claim audited here goes through the same registry, claim driver, verdict rules and report writer
as ``dpaudit audit`` on a bundled claim: :func:`audit_claim` with ``out=DIR`` calls the runner the
command calls (:func:`dpaudit.runner.audit_into`), so the JSON, Markdown, HTML, the index and resume
are the CLI's, and returns the :class:`~dpaudit.claims.record.ClaimAudit`.

This module is a top layer: it imports the claims, the runner and the reports, never the command
line; of dpaudit's own modules only :mod:`dpaudit.testing` imports it.
"""

from __future__ import annotations

import io
import json
import os
import sys
from typing import Any

from dpaudit.claims.context import BUDGETS, AuditContext
from dpaudit.claims.record import ClaimAudit
from dpaudit.claims.registry import get, register, unknown_claim_message, unregister
from dpaudit.claims.user_claims import Claim, declaration_of

__all__ = ["register_claim", "audit_claim"]


def register_claim(claim: Claim) -> str:
    """Register ``claim`` (a :class:`dpaudit.Claim`) so that the CLI, the reports and the pytest
    plugin can audit it by id; returns the id.

    Call it at import time of a module named by an entry point of the ``dpaudit.claims`` group (an
    installed package) or by ``--plugin MODULE``; registering again the same claim is a no-op, and a
    claim registered by running code (a script, a notebook) may be replaced by a changed one.
    """
    decl = declaration_of(claim)
    try:
        existing = get(claim.id)
    except KeyError:
        existing = None
    except ValueError:  # an entry point failed to load: registering still works
        existing = None
    if existing is not None and existing.claim != decl.claim and existing.origin.kind == "code":
        unregister(claim.id)
    register(decl.claim, decl, kind=claim.kind)
    return claim.id


def audit_claim(claim: Claim | str, *, budget: str = "quick", seed: int = 0, alpha: float = 0.05,
                out: str | os.PathLike[str] | None = None, fresh: bool = False,
                quiet: bool = True) -> ClaimAudit:
    """Audit ``claim`` (a :class:`dpaudit.Claim`, or the id of a registered claim) and return its
    :class:`~dpaudit.claims.record.ClaimAudit` (``.verdict``, ``.points``, ``.findings``, ...).

    ``budget``: ``"quick"``, ``"standard"`` or ``"thorough"``; ``seed``: the root of all
    randomness (the result is a deterministic function of it); ``alpha``: the family-wise level of
    the empirical statements. With ``out=DIR`` the reports (``DIR/<id>.{json,md,html}`` and the
    index) are written exactly as ``dpaudit audit`` writes them, and a saved result of the same
    settings and code is reused unless ``fresh``. ``quiet=False`` shows progress on stderr.

    Raises ``ValueError`` for bad arguments or a claim whose audit failed (with the reason).
    """
    if isinstance(claim, Claim):
        claim_id = register_claim(claim)
    elif isinstance(claim, str):
        claim_id = claim
        try:
            get(claim_id)
        except KeyError:  # the CLI's sentence, with the near misses
            raise ValueError(unknown_claim_message(claim_id)) from None
    else:
        raise TypeError(f"claim must be a dpaudit.Claim or a claim id, got {type(claim).__name__}")
    if budget not in BUDGETS:
        raise ValueError(f"budget must be one of {', '.join(BUDGETS)}, got {budget!r}")
    from dpaudit.runner import (EXIT_OK, EXIT_USAGE, EXIT_VIOLATED, RunSettings, UsageError,
                                audit_into, relation_hint)

    if out is None:
        try:
            result = get(claim_id).audit(AuditContext(BUDGETS[budget], seed, alpha))
        except (ValueError, TypeError) as exc:
            hint = relation_hint(exc, claim_id)
            if hint:
                raise ValueError(f"{exc}{hint}") from exc
            raise
        result.budget, result.seed, result.alpha = budget, seed, alpha
        return result
    from dpaudit.reporting.writer import claim_paths

    settings = RunSettings(out=os.fspath(out), budget=budget, seed=seed, alpha=alpha, fresh=fresh,
                           quiet=quiet)
    stdout, stderr = io.StringIO(), _ErrorsKept(None if quiet else sys.stderr)
    try:
        code = audit_into([claim_id], settings, out=stdout, err=stderr)
    except UsageError as exc:
        raise ValueError(f"out: {exc}") from None
    if code not in (EXIT_OK, EXIT_VIOLATED):
        # The error is raised, not also printed (with quiet=False only the progress is shown).
        reason = stderr.errors().strip() or stdout.getvalue().strip()
        if not reason.startswith("the "):
            verb = "input was rejected" if code == EXIT_USAGE else "audit failed"
            reason = f"the {verb} of {claim_id}: {reason}"
        raise ValueError(f"{reason} (exit {code})")
    record: dict[str, Any] = json.loads(claim_paths(out, claim_id).json.read_text(encoding="utf-8"))
    return ClaimAudit.from_dict(record)


class _ErrorsKept(io.StringIO):
    """The run's stderr: keeps every line; forwards the progress lines, not the errors, to
    ``shown`` (the errors are raised as a ``ValueError``, so they are shown once)."""

    _ERROR = "dpaudit: error: "

    def __init__(self, shown: Any) -> None:
        super().__init__()
        self.shown = shown
        self._in_error = False

    def write(self, text: str) -> int:
        super().write(text)
        if self.shown is not None:
            if text.startswith(self._ERROR):
                self._in_error = not text.endswith("\n")
            elif self._in_error:
                self._in_error = not text.endswith("\n")
            else:
                self.shown.write(text)
        return len(text)

    def errors(self) -> str:
        """The error lines written so far."""
        return "\n".join(line[len(self._ERROR):] for line in self.getvalue().splitlines()
                         if line.startswith(self._ERROR))

    def isatty(self) -> bool:
        return False
