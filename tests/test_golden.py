"""Regression guard: every bundled claim's quick-budget audit (seed 0) equals its golden record.

See ``tests/golden_audits.py`` for how the records are made and when they may change.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from dpaudit.claims.registry import all_claims
from golden_audits import golden_path

CLAIM_IDS = [rc.claim.id for rc in all_claims()]


def test_every_bundled_claim_has_a_golden_record() -> None:
    missing = [c for c in CLAIM_IDS if not golden_path(c).exists()]
    assert not missing, f"no golden record for {missing}; run tests/golden_audits.py"


@pytest.mark.parametrize("claim_id", CLAIM_IDS)
def test_quick_audit_reproduces_golden_record_byte_for_byte(claim_id: str) -> None:
    path = golden_path(claim_id)
    if not path.exists():
        pytest.fail(f"no golden record for {claim_id}")
    # A fresh interpreter per claim, as `dpaudit audit` runs it: Hypothesis' example counts depend
    # on what else ran earlier in the same process (other test modules), not on the audit.
    script = Path(__file__).with_name("golden_audits.py")
    fresh = subprocess.run([sys.executable, str(script), "--print", claim_id], check=True,
                           capture_output=True, text=True).stdout
    assert fresh == path.read_text(encoding="utf-8"), (
        f"the quick audit of {claim_id} no longer reproduces {path}; if the change is meant to "
        "alter this result, regenerate with tests/golden_audits.py and say why in the commit")
