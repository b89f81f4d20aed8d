"""The verdict rule of :func:`dpaudit.formal.lemma_search.search_lemma`: its float slack.

A pair violates the lemma when ``quantity > bound * (1 + 1e-9) + 1e-12``. The quantity here is a
constant, so every generated pair gives the same value and the verdict is exact (no sampling):
values just inside and just outside the slack pin the rule, and the slack is pinned to the
defaults of :func:`dpaudit.formal.sensitivity.check_sensitivity`, so the two lemma searches
decide "violated" alike.
"""

from __future__ import annotations

import inspect

import pytest
from hypothesis import strategies as st

from dpaudit.formal.lemma_search import search_lemma
from dpaudit.formal.sensitivity import check_sensitivity

PAIRS = st.just((0.0, 0.0))


@pytest.mark.parametrize("bound, value, holds", [
    (1.0, 1.0 + 5e-10, True),     # inside the relative slack 1e-9
    (1.0, 1.0 + 2e-9, False),     # outside it
    (0.0, 5e-13, True),           # a zero bound: inside the absolute slack 1e-12
    (0.0, 2e-12, False),          # outside it
])
def test_a_pair_violates_exactly_beyond_the_float_slack(bound: float, value: float,
                                                        holds: bool) -> None:
    res = search_lemma("constant quantity", PAIRS, lambda d0, d1: value, bound, examples=5)
    assert res.holds is holds
    assert (res.counterexample is None) is holds
    if not holds:
        assert res.counterexample["observed"] == value and res.counterexample["claimed"] == bound


def test_the_slack_is_the_sensitivity_checks_default() -> None:
    params = inspect.signature(check_sensitivity).parameters
    rtol, atol = params["rtol"].default, params["atol"].default
    for bound in (1.0, 7.5):
        just_in = bound * (1 + rtol) + atol
        assert search_lemma("edge", PAIRS, lambda d0, d1: just_in, bound, examples=2).holds
        above = just_in * (1 + 1e-12) + 1e-15
        assert not search_lemma("edge", PAIRS, lambda d0, d1: above, bound, examples=2).holds
