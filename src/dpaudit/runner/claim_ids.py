"""Which registered claims a run's arguments select: ids, namespaces and glob patterns, or
``--all``; an argument that selects nothing is a usage error naming it."""

from __future__ import annotations

from typing import Sequence

from dpaudit.runner.exit_status import UsageError

__all__ = ["registered_ids", "resolve_claim_ids"]


def registered_ids() -> list[str]:
    """The ids of every registered claim, in registration order."""
    from dpaudit.claims.registry import all_claims

    return [rc.claim.id for rc in all_claims()]


def resolve_claim_ids(ids: Sequence[str], use_all: bool, patterns: bool = True) -> list[str]:
    """The registered claim ids that ``ids`` select, in the order given, each once.

    Each argument is a claim id; with ``patterns`` (``audit-claims``) also a namespace, which
    selects every claim in it (``jkt12-colt`` or ``jkt12-colt/``: ``jkt12-colt/*``), or a glob
    pattern over ids (``'jkt12-*/p*'``, ``'*/pocp*'``: Python's ``fnmatch``, case-sensitive). An
    argument that selects nothing is a usage error naming it (``audit-claims
    mynamespace`` was "unknown claim id")."""
    import fnmatch

    from dpaudit.claims.registry import all_claims, get, unknown_claim_message

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
                raise UsageError(unknown_claim_message(cid)) from None
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
                    raise UsageError(unknown_claim_message(cid) + "; an argument may also be a "
                                     "namespace (every claim in it) or a glob pattern such as "
                                     "'jkt12-*/p*'") from None
        seen += [i for i in selected if i not in seen]
    return seen
