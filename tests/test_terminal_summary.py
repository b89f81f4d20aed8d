"""The terminal summary fits a 100-column terminal or CI log (prop-a6's claimed formula once
made it 172 columns wide, so it wrapped in 80/120-column terminals)."""

from __future__ import annotations

import json
from pathlib import Path

from dpaudit.reporting.terminal import SUMMARY_WIDTH, summary_table

GOLDEN = Path(__file__).with_name("golden")


def _records() -> list[dict]:
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(GOLDEN.glob("*.json"))]


def test_the_summary_of_every_bundled_claim_fits_100_columns() -> None:
    records = _records()
    assert len(records) == 37 and SUMMARY_WIDTH == 100
    lines = summary_table(records).splitlines()
    assert max(len(ln) for ln in lines) <= 100
    # Every claim has its row, with its id whole and its verdict, and nothing was cut.
    for r in records:
        row = next(ln for ln in lines if ln.split()[:1] == [r["id"]])
        assert row.split()[-1] == r["verdict"]
    assert not any("..." in ln for ln in lines)


def test_a_long_claim_id_gets_its_own_line_and_the_table_still_fits() -> None:
    records = _records()[:3]
    long_id = "my-very-long-namespace-of-a-user/" + "a-claim-with-a-long-name" * 2
    records[0] = {**records[0], "id": long_id}
    lines = summary_table(records).splitlines()
    assert max(len(ln) for ln in lines) <= 100
    i = lines.index(long_id)  # whole, alone on its line, its numbers on the next
    assert lines[i + 1].startswith(" ") and lines[i + 1].split()[-1] == records[0]["verdict"]
    # The other ids keep a column as wide as they need, not as wide as the long one.
    assert lines[0].index("claimed at worst") == len(records[1]["id"]) + 2 or \
        lines[0].index("claimed at worst") == max(len(r["id"]) for r in records[1:]) + 2
