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


@pytest.mark.skipif(not PAPER.exists(), reason="paper text not available")
def test_gamma_range_is_implied_not_stated():
    """The paper prints no range for gamma: Theorems 6-7 set 'K = 2 log 1/gamma' (positive only
    for gamma < 1) and Lemma C.3 introduces gamma as a prior mass ('For some gamma > 0, ...
    >= gamma'). So the sentence says 'imply' and names both, and no line of the paper puts gamma
    in an interval."""
    import re

    from dpaudit.papers.afkt23.gamma import GAMMA_RANGE_SENTENCE, gamma_severity
    from dpaudit.papers.afkt23.gamma import algorithm5_parameters_at_gamma as at_gamma

    text = PAPER.read_text()
    assert text.count(r"$K = 2 \log 1/\gamma$") == 2          # Theorem 6 and Theorem 7
    assert r"For some  $\gamma > 0$ , let  $L^*(\gamma)$  be such that" in text
    assert not re.search(r"\\gamma\s*\\in\s*\(0", text)        # no "gamma in (0, ...)" printed
    assert "imply gamma in (0, 1) without printing the range" in GAMMA_RANGE_SENTENCE
    assert "'K = 2 log 1/gamma' is positive only for gamma < 1" in GAMMA_RANGE_SENTENCE
    assert "For some gamma > 0" in GAMMA_RANGE_SENTENCE
    assert "state gamma" not in GAMMA_RANGE_SENTENCE
    where = gamma_severity(at_gamma(0.9, 2, 6, 0.99999, delta=1e-6))["where"]
    assert "(Theorems 6-7 imply gamma in (0, 1);" in where
