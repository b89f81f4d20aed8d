"""Regression guard: every bundled claim's quick-budget audit (seed 0) equals its golden record.

See ``tests/golden_audits.py`` for how the records are made and when they may change.

The comparison stays byte for byte; on a mismatch the message lists which claims moved and, for
each, the JSON paths that changed with their old and new values (a structured diff, not a text
diff). Cost (issue 28): one fresh interpreter per paper (not per claim) audits that paper's
claims in sequence, so the ~2 s import of dpaudit is paid five times instead of 37; every claim
audit runs its Hypothesis searches inside ``independent_of_loaded_modules``, so a record does not
depend on which claims ran before it in the process (checked: the per-paper run reproduces all 37
records byte for byte). Each paper's audits run once per test session.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest

from dpaudit.claims.registry import all_claims
from golden_audits import golden_path

CLAIM_IDS = [rc.claim.id for rc in all_claims()]
PAPERS: dict[str, list[str]] = {}
for _cid in CLAIM_IDS:
    PAPERS.setdefault(_cid.split("/")[0], []).append(_cid)
#: At most this many moved paths are listed per claim in a failure message.
MAX_PATHS = 25


def json_diff(old: Any, new: Any, path: str = "$") -> Iterator[tuple[str, Any, Any]]:
    """The leaves where two JSON values differ: ``(path, old, new)``; a key or list item present on
    one side only is reported with ``"<absent>"`` on the other."""
    if isinstance(old, dict) and isinstance(new, dict):
        for k in sorted(set(old) | set(new)):
            yield from json_diff(old.get(k, "<absent>"), new.get(k, "<absent>"), f"{path}.{k}")
    elif isinstance(old, list) and isinstance(new, list):
        for i in range(max(len(old), len(new))):
            yield from json_diff(old[i] if i < len(old) else "<absent>",
                                 new[i] if i < len(new) else "<absent>", f"{path}[{i}]")
    elif old != new or type(old) is not type(new):
        yield path, old, new


def _short(v: Any) -> str:
    text = json.dumps(v) if not isinstance(v, str) else repr(v)
    return text if len(text) <= 100 else text[:97] + "..."


def describe_moves(claim_id: str, golden: str, fresh: str) -> str:
    """One paragraph per moved claim: the changed JSON paths, old -> new."""
    moves = list(json_diff(json.loads(golden), json.loads(fresh)))
    if not moves:
        return f"{claim_id}: same JSON, different text (formatting or key order)"
    lines = [f"{claim_id}: {len(moves)} field(s) moved"]
    lines += [f"  {p}: {_short(a)} -> {_short(b)}" for p, a, b in moves[:MAX_PATHS]]
    if len(moves) > MAX_PATHS:
        lines.append(f"  ... and {len(moves) - MAX_PATHS} more")
    return "\n".join(lines)


def test_every_bundled_claim_has_a_golden_record() -> None:
    missing = [c for c in CLAIM_IDS if not golden_path(c).exists()]
    assert not missing, f"no golden record for {missing}; run tests/golden_audits.py"


@pytest.mark.parametrize("paper", sorted(PAPERS))
def test_quick_audits_reproduce_golden_records_byte_for_byte(paper: str) -> None:
    ids = PAPERS[paper]
    missing = [c for c in ids if not golden_path(c).exists()]
    assert not missing, f"no golden record for {missing}"
    # A fresh interpreter per paper, as `dpaudit audit` runs a claim: nothing from other test
    # modules (imported plugins, Hypothesis state) reaches the audits.
    script = Path(__file__).with_name("golden_audits.py")
    fresh = json.loads(subprocess.run([sys.executable, str(script), "--print-json", *ids],
                                      check=True, capture_output=True, text=True).stdout)
    moved = [c for c in ids if fresh[c] != golden_path(c).read_text(encoding="utf-8")]
    assert not moved, (
        "the quick audits of these claims no longer reproduce their golden records; if the change "
        "is meant to alter these results, regenerate with tests/golden_audits.py CLAIM_ID and say "
        "why in the commit.\n" + "\n".join(
            describe_moves(c, golden_path(c).read_text(encoding="utf-8"), fresh[c])
            for c in moved))


def test_structured_diff_names_the_moved_paths() -> None:
    old = json.dumps({"verdict": "violated", "points": [{"e": 1.0}, {"e": 2.0}], "x": 1})
    new = json.dumps({"verdict": "holds", "points": [{"e": 1.0}, {"e": 2.5}, {"e": 3.0}]})
    text = describe_moves("p/c", old, new)
    assert "$.verdict: 'violated' -> 'holds'" in text
    assert "$.points[1].e: 2.0 -> 2.5" in text
    assert "$.points[2]: '<absent>' -> " in text and "$.x: 1 -> '<absent>'" in text
    assert "4 field(s) moved" in text
    assert "formatting" in describe_moves("p/c", '{"a": 1}', '{"a":1}')
