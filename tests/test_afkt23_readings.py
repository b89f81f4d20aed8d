"""afkt23's primary readings (claims.PRIMARY_READINGS) name a parameter the claim's grid sweeps and a
value the grid contains at every budget, and the quoted text is the paper's."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpaudit.claims.context import BUDGETS, AuditContext
from dpaudit.papers.afkt23.audit import DECLARATIONS
from dpaudit.papers.afkt23.claims import PRIMARY_READINGS

PAPER = Path("/work/shared/seeds/afkt23.txt")


@pytest.mark.parametrize("claim_id", sorted(PRIMARY_READINGS))
@pytest.mark.parametrize("budget", ["quick", "standard"])
def test_primary_reading_is_swept_by_the_grid(claim_id: str, budget: str):
    key, value, why = PRIMARY_READINGS[claim_id]
    grid = DECLARATIONS[claim_id].grid(AuditContext(BUDGETS[budget], 0, 0.05))
    values = {p.get(key) for p in grid}
    assert value in values and len(why) > 40


@pytest.mark.skipif(not PAPER.exists(), reason="paper text not available")
def test_quoted_fragments_are_in_the_paper():
    text = PAPER.read_text()
    for fragment in ("Go to step 4", "can change at most", "that differ in a single element",
                     "Appendix B.1 in (Kairouz et al., 2021)", "**if**  $k < K$"):
        assert fragment in text, fragment
