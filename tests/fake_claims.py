"""Two fake one-point claims in a fresh registry, for the CLI and report-file tests.

``A`` holds (exact epsilon 1 = claim 1), ``B`` is violated (exact 2 > 1). Used, with the helpers
that run the CLI in this process, by tests/test_cli_reliability.py and
tests/test_reliability_round3.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest

from dpaudit import cli
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


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """``dpaudit ARGV`` in this process: (exit status, stdout, stderr)."""
    status = cli.main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def audit_both(capsys: pytest.CaptureFixture[str], out: Path, *extra: str) -> int:
    """``dpaudit audit-claims A B --budget quick --out OUT EXTRA``; its exit status."""
    return run(capsys, "audit-claims", A, B, "--budget", "quick", "--out", str(out), *extra)[0]
