"""Golden audit records: every bundled claim at the quick budget, seed 0, alpha 0.05.

The regression guard for refactors: ``tests/test_golden.py`` re-audits every bundled
claim and requires the canonical JSON below to match ``tests/golden/<claim id>.json``: exactly in
every string, integer and structure, and within a relative 1e-6 in every float (see its docstring). A change that is *meant* to alter a result regenerates the files with

    .venv/bin/python tests/golden_audits.py [CLAIM_ID ...]

and its commit says which claims changed and why.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

GOLDEN_DIR = Path(__file__).with_name("golden")
BUDGET, SEED, ALPHA = "quick", 0, 0.05
#: Wall-clock fields: the only part of a record that may differ between two runs.
TIMING_KEYS = frozenset({"seconds", "sampling_seconds", "timing"})


def strip_timings(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: strip_timings(v) for k, v in obj.items() if k not in TIMING_KEYS}
    if isinstance(obj, list):
        return [strip_timings(v) for v in obj]
    return obj


def canonical_record(claim_id: str) -> str:
    """The audit of ``claim_id`` as canonical JSON text (sorted keys, timings stripped)."""
    from dpaudit.claims.context import BUDGETS, AuditContext
    from dpaudit.claims.registry import get

    result = get(claim_id).audit(AuditContext(BUDGETS[BUDGET], SEED, ALPHA))
    # Round-trip through json first so that tuples and lists, numpy scalars and floats are
    # rendered exactly as the CLI writes them.
    record = json.loads(json.dumps(result.to_dict()))
    return json.dumps(strip_timings(record), indent=1, sort_keys=True) + "\n"


def golden_path(claim_id: str) -> Path:
    return GOLDEN_DIR / (claim_id.replace("/", "__") + ".json")


def main(argv: list[str]) -> int:
    from dpaudit.claims.registry import all_claims

    if argv[:1] == ["--print"]:  # one record to stdout (what the test compares)
        sys.stdout.write(canonical_record(argv[1]))
        return 0
    if argv[:1] == ["--print-json"]:  # several records, one process: {claim id: record text}
        json.dump({claim_id: canonical_record(claim_id) for claim_id in argv[1:]}, sys.stdout)
        return 0
    ids = argv or [rc.claim.id for rc in all_claims()]
    GOLDEN_DIR.mkdir(exist_ok=True)
    for claim_id in ids:
        golden_path(claim_id).write_text(canonical_record(claim_id), encoding="utf-8")
        print(f"wrote {golden_path(claim_id)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
