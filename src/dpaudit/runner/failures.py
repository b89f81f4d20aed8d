"""How a claim that was not audited is told: an error of the claim's own input (exit 2) or a
failed audit (exit 3), in one sentence that names the relation when that is the cause."""

from __future__ import annotations

from typing import Sequence, TextIO

from dpaudit.runner.task import Outcome

__all__ = ["INPUT_CHECKS", "error_text", "is_input_error", "print_failures", "relation_hint"]

#: Modules whose ValueError/TypeError is a check of what a claim declares, not a failure of the
#: engine: the public Claim's own checks (pairs against the relation, the claimed values), the
#: relation check of a pair, and the output contract of a release (shape, dtype, comparability).
INPUT_CHECKS = ("dpaudit.claims.user_claims", "dpaudit.claims.pair_relation",
                "dpaudit.blackbox.sampling")


def is_input_error(exc: BaseException, claim_id: str) -> bool:
    """Whether ``exc``, raised by the audit of ``claim_id``, rejects the claim's own input.

    True for a ``ValueError`` or ``TypeError`` raised inside one of :data:`INPUT_CHECKS` while
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
    if tb.tb_frame.f_globals.get("__name__") not in INPUT_CHECKS:
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


def error_text(exc: BaseException, claim_id: str = "") -> str:
    """The one-sentence reason a claim's audit stopped on ``exc``."""
    if isinstance(exc, SystemExit):
        return (f"SystemExit: the audited code called sys.exit({exc.code!r}) during the audit "
                "(a release must return its outputs, not end the process)")
    return f"{type(exc).__name__}: {exc}{relation_hint(exc, claim_id) if claim_id else ''}"


def print_failures(failures: Sequence[Outcome], kept_ids: Sequence[str], err: TextIO) -> None:
    """One line per claim that was not audited: ``the input of X was rejected`` (exit 2) or ``the
    audit of X failed`` (exit 3), the reason and where its traceback is."""
    for f in failures:
        where = f" (traceback in {f.error_log})" if f.error_log else ""
        if f.claim_id in kept_ids:
            where += "; its previous result of the same settings and code is kept"
        kind = "input of" if f.input_error else "audit of"
        verb = "was rejected" if f.input_error else "failed"
        print(f"dpaudit: error: the {kind} {f.claim_id} {verb}: {f.error}{where}", file=err)
