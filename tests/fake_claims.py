"""Two fake one-point claims in a fresh registry, for the CLI and report-file tests.

``A`` holds (exact epsilon 1 = claim 1), ``B`` is violated (exact 2 > 1). Used by
tests/test_cli_reliability.py and tests/test_reliability_round3.py.
"""

from __future__ import annotations

from typing import Callable

import pytest

from dpaudit.claims import PrivacyClaim, Provenance, registry
from dpaudit.claims.evidence import GridPoint
from dpaudit.claims.record import ClaimAudit

A, B = "fake-colt/a", "fake-colt/b"


def fake_claim(cid: str, theorem: str = "Theorem 1") -> PrivacyClaim:
    return PrivacyClaim(cid, 1.0, 0.0, Provenance("fake.txt", "v1", theorem, "b = 1/eps"))


def fake_audit(cid: str, exact: float, theorem: str = "Theorem 1"
               ) -> Callable[[registry.AuditContext], ClaimAudit]:
    """An audit function returning one point: claim 1, accountant 1, exact ``exact``."""
    def run(ctx: registry.AuditContext) -> ClaimAudit:
        return ClaimAudit(fake_claim(cid, theorem), [GridPoint({"epsilon": 1.0}, 1.0, 0.0,
                                                               epsilon_exact=exact,
                                                               epsilon_accountant=1.0,
                                                               epsilon_lower_bound=0.5)])
    return run


def register_fakes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Replace the registry by one holding ``A`` (holds) and ``B`` (violated)."""
    monkeypatch.setattr(registry, "_REGISTRY", {})
    monkeypatch.setattr(registry, "_loaded", True)
    registry.register(fake_claim(A), fake_audit(A, 1.0))
    registry.register(fake_claim(B), fake_audit(B, 2.0))
