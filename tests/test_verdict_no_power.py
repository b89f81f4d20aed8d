"""A ``holds`` whose black-box test had no power says so in its verdict sentence (AUDIT-METHOD
section 2: "where a check had no power, say so in the verdict sentence"), and one whose test had
power (even weak power) does not."""

from __future__ import annotations

from typing import Any

from dpaudit.claims.verdict import decide_verdict, powerless_test
from dpaudit.evidence import GridPoint


def _empirical(lb: float = 0.0, counts: tuple[int, int] | None = (7000, 7100), n: int = 15000,
               kind: str = "continuous", outcomes: int | None = None,
               select: int = 5000) -> dict[str, Any]:
    event = (None if counts is None else
             {"event": {"tail": "upper", "threshold": 0.0, "numerator": 1},
              "test": {"count0": counts[0], "count1": counts[1], "nobs0": n, "nobs1": n}})
    stat: dict[str, Any] = {"name": "identity"}
    if outcomes is not None:
        stat = {"name": "outcome likelihood ratio", "outcomes": outcomes}
    return {"verdict": "not violated", "epsilon_lower_bound": lb, "output_kind": kind,
            "statistic": stat, "samples": {"select": select},
            "event": event if event is not None else {"event": None, "test": {
                "count0": 0, "count1": 0, "nobs0": n, "nobs1": n}}}


def _point(emp: dict[str, Any] | None, **params: Any) -> GridPoint:
    return GridPoint(parameters=params, claimed_epsilon=1.0, claimed_delta=1e-5,
                     epsilon_accountant=0.9, epsilon_lower_bound=None if emp is None
                     else emp["epsilon_lower_bound"],
                     evidence={} if emp is None else {"empirical": emp})


def test_separating_event_keeps_the_sentence_unchanged() -> None:
    with_test = decide_verdict([_point(_empirical())], [])
    without = decide_verdict([_point(None)], [])
    assert with_test == without and with_test[0] == "holds"
    assert "no power" not in with_test[1]


def test_all_distinct_outcomes_say_no_power() -> None:
    emp = _empirical(counts=(14999, 15000), kind="discrete", outcomes=10000, select=5000)
    v, why = decide_verdict([_point(emp, T=4)], [])
    assert v == "holds"
    assert why.endswith("The black-box test had no power at every audited point (1 of 1) "
                        "(at T=4, 10000 distinct outcomes in 10000 training runs: outputs "
                        "(almost) never repeat, so no event could be told apart): it would "
                        "have passed whatever the release leaked.")


def test_event_covering_everything_or_nothing_and_no_event() -> None:
    assert powerless_test(_point(_empirical(counts=(15000, 15000)))) is not None
    assert powerless_test(_point(_empirical(counts=(0, 0)))) is not None
    assert "never differed" in powerless_test(_point(_empirical(counts=None)))
    # A positive bound had power by definition; a weak but separating event is not powerless.
    assert powerless_test(_point(_empirical(lb=0.3, counts=(15000, 15000)))) is None
    assert powerless_test(_point(_empirical(counts=(14990, 14995)))) is None
    # Discrete outputs with repeats (5 outcomes) are not "all distinct".
    assert powerless_test(_point(_empirical(kind="discrete", outcomes=5))) is None


def test_some_points_counted() -> None:
    pts = [_point(_empirical(), T=1), _point(_empirical(counts=None), T=2),
           _point(_empirical(counts=None), T=3)]
    v, why = decide_verdict(pts, [])
    assert v == "holds" and "had no power at 2 of 3 audited points (at T=2, the scores " in why
