"""own-learner's privacy claims in CI, with dpaudit's pytest helpers.

The correct variant must not be violated; each buggy variant must be caught (these tests say so
by expecting the AssertionError, as a team would while the bug is being fixed).
"""

import dpaudit
import numpy as np
import pytest
from dpaudit.testing import assert_claim, assert_sensitivity
from hypothesis import strategies as st

from own_learner.claims import CLAIMS, CLIP
from own_learner.dpftrl import noise_free


def test_dpftrl_is_private_as_claimed():
    result = assert_claim(CLAIMS["correct"], budget="quick", require="holds")
    assert result.verdict == "holds"


@pytest.mark.parametrize("variant", ["addremove", "noclip", "redraw"])
def test_each_classic_bug_is_caught(variant):
    with pytest.raises(AssertionError, match="VIOLATED") as info:
        assert_claim(CLAIMS[variant], budget="quick")
    assert "reproduce: dpaudit audit own-learner/dpftrl-" in str(info.value)


def test_a_missing_clip_breaks_the_sensitivity_lemma():
    pairs = st.floats(-100, 100, allow_nan=False).map(
        lambda v: (np.array([[v, 0.0]]), np.array([[-v, 0.0]])))

    def moved(g0, g1):
        return float(np.abs(noise_free(g0, clip=CLIP, eta=1.0, variant="noclip")
                            - noise_free(g1, clip=CLIP, eta=1.0, variant="noclip")).max())

    with pytest.raises(AssertionError, match="shrunk pair"):
        assert_sensitivity("a gradient moves the prefix sum by <= 2C", pairs, moved, 2 * CLIP)


def test_a_law_the_code_does_not_follow_is_rejected_and_certifies_nothing():
    # The redraw bug declared with the design doc's law: dpaudit tests the law against runs of
    # the code and rejects it; the law it derives from the code decides (1.07 > 1 at T = 16).
    result = dpaudit.audit_claim(CLAIMS["redraw-design-law"], budget="quick")
    assert result.verdict == "violated"
    assert any(f.startswith("The declared law does not describe the code")
               for f in result.findings)
    assert all(p.evidence["exact_source"] == "derived from the code" for p in result.points)


def test_no_law_at_all_the_exact_epsilon_is_derived_from_the_code():
    result = assert_claim(CLAIMS["nolaw"], budget="quick", require="holds")
    assert all(p.evidence["exact_source"] == "derived from the code" for p in result.points)
