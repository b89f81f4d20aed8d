"""The catalogue of auditable claims: one registration per claim.

A learner family makes its claims auditable with one call per claim::

    register(CLAIM, audit_function)

where ``audit_function(context: AuditContext) -> ClaimAudit``. The CLI and the reports only read
this registry. Modules that register claims are listed in :data:`CLAIM_MODULES` and imported lazily
the first time the registry is read, so that importing :mod:`dpaudit` stays cheap.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

import numpy as np

from dpaudit._validation import check_int, check_probability
from dpaudit.audits.claim_audit import ClaimAudit
from dpaudit.claims import PrivacyClaim

__all__ = ["Budget", "BUDGETS", "AuditContext", "RegisteredClaim", "register", "get", "all_claims",
           "CLAIM_MODULES", "unregister"]

#: Modules whose import registers claims. Adding a learner family = adding one line here.
CLAIM_MODULES: list[str] = [
    "dpaudit.papers.jkt12.audit",
    "dpaudit.papers.st13.audit",
    "dpaudit.papers.pfcoco.audit",
    "dpaudit.papers.afkt23.audit",
]


@dataclass(frozen=True)
class Budget:
    """How much work an audit may spend.

    ``samples``: samples per neighbouring input for each empirical lower bound;
    ``sensitivity_examples``: Hypothesis examples per sensitivity lemma;
    ``grid``: ``"coarse"`` (extremes and the paper's settings only) or ``"full"``;
    ``max_T``: the largest horizon audited empirically.
    """

    name: str
    samples: int
    sensitivity_examples: int
    grid: str
    max_T: int


BUDGETS: dict[str, Budget] = {
    "quick": Budget("quick", samples=20_000, sensitivity_examples=60, grid="coarse", max_T=64),
    "standard": Budget("standard", samples=200_000, sensitivity_examples=300, grid="full", max_T=256),
    "thorough": Budget("thorough", samples=2_000_000, sensitivity_examples=2_000, grid="full",
                       max_T=1024),
}


@dataclass
class AuditContext:
    """What an audit function receives: budget, seed, confidence level, progress callback and
    where the empirical tests run (``executor``).

    ``progress(done, total, label)`` may be called any number of times; ``rng(*key)`` returns an
    independent generator derived from the seed and a key, so that every grid point is reproducible
    on its own regardless of the order points are audited in.
    """

    budget: Budget
    seed: int = 0
    alpha: float = 0.05
    progress: Callable[[int, int, str], None] = field(default=lambda done, total, label: None)
    #: Where the claim's empirical tests send their chunks of runs: None (this process), an
    #: executor name or an open :class:`~dpaudit.audits.execution.Executor` (issue 12). It never
    #: changes a result.
    executor: Any = None

    def __post_init__(self) -> None:
        self.seed = check_int(self.seed, "seed", minimum=0)
        self.alpha = check_probability(self.alpha, "alpha")

    def rng(self, *key: int | str) -> np.random.Generator:
        words = [self.seed] + [k if isinstance(k, int) else _stable_hash(k) for k in key]
        return np.random.default_rng(np.random.SeedSequence(words))

    def seed_for(self, *key: int | str) -> int:
        """An integer seed in ``[0, 2**62)`` derived from the context's seed and ``key``: the one
        way every claim audit seeds an engine run or a Hypothesis search of one of its points."""
        return int(self.rng(*key).integers(0, 2 ** 62))


def _stable_hash(s: str) -> int:
    import zlib

    return zlib.crc32(s.encode())


AuditFunction = Callable[[AuditContext], ClaimAudit]


@dataclass(frozen=True)
class RegisteredClaim:
    claim: PrivacyClaim
    audit: AuditFunction
    kind: str = "learner"  # "learner" or "mechanism"


_REGISTRY: dict[str, RegisteredClaim] = {}
_loaded = False


def register(claim: PrivacyClaim, audit: AuditFunction | Any, kind: str = "learner"
             ) -> PrivacyClaim:
    """Register ``claim`` with what audits it; returns the claim for convenience.

    ``audit`` is either a function ``AuditContext -> ClaimAudit`` or a claim declaration (an object
    with ``grid`` and ``plan``, see :mod:`dpaudit.audits.claim_driver`), which the one claim driver
    runs.
    """
    if hasattr(audit, "plan") and hasattr(audit, "grid"):
        audit = _driven(audit)
    if claim.id in _REGISTRY and _REGISTRY[claim.id].claim != claim:
        raise ValueError(f"claim id {claim.id!r} is already registered with a different claim")
    _REGISTRY[claim.id] = RegisteredClaim(claim, audit, kind)
    return claim


def _driven(declaration: Any) -> AuditFunction:
    def audit(ctx: AuditContext) -> ClaimAudit:
        from dpaudit.audits.claim_driver import run_claim

        return run_claim(declaration, ctx)

    audit.declaration = declaration  # type: ignore[attr-defined]
    audit.__doc__ = f"Audit of {declaration.claim.id} by the claim driver."
    return audit


def unregister(claim_id: str) -> None:
    """Remove a registration (for tests that register temporary claims); unknown ids are ignored."""
    _REGISTRY.pop(claim_id, None)


def _load() -> None:
    global _loaded
    if not _loaded:
        _loaded = True
        for mod in CLAIM_MODULES:
            importlib.import_module(mod)


def get(claim_id: str) -> RegisteredClaim:
    """The registered claim with this id; ``KeyError`` listing the known ids otherwise."""
    _load()
    try:
        return _REGISTRY[claim_id]
    except KeyError:
        known = ", ".join(sorted(_REGISTRY)) or "(none)"
        raise KeyError(f"unknown claim id {claim_id!r}; known ids: {known}") from None


def all_claims() -> Iterator[RegisteredClaim]:
    """Every registered claim, sorted by id."""
    _load()
    for cid in sorted(_REGISTRY):
        yield _REGISTRY[cid]
