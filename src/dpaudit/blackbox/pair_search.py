"""Black-box search for a neighbouring pair from a declared input space.

``audit(mechanism, pairs=strategy)`` accepts a Hypothesis strategy of neighbouring pairs: a
targeted search (:func:`search_pairs`) pilots each drawn pair on its own fresh runs (the pilot
budget rule of :mod:`dpaudit.blackbox.empirical_audit`) and feeds its projected bound back with
``hypothesis.target``; the main audit runs on the best pair with fresh runs no pilot has seen, so
the bound needs no correction for the search. :func:`statdp_patterns` is the ready-made strategy
for vector-valued queries: the input patterns of StatDP (Ding, Wang, Wang, Zhang & Kifer, CCS
2018, Sec. 5), as also used by DP-Sniper (Bichsel, Steffen, Bogunovic & Vechev, S&P 2021).
``pair_seeds`` are piloted first; duplicates and vacuous pairs are dropped and reported; the
audited pair is stated by :func:`describe_pair`. The drawn pairs are a function of the seed, the
strategy and the pilot results (``@seed``, no database, no harvested constants:
:func:`dpaudit.hypothesis_seeding.independent_of_loaded_modules`).

The patterns, the seeds and the reproducibility rules in full: docs/blackbox-notes.md#pair-search.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import numpy as np
from hypothesis import HealthCheck, Phase, assume, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from hypothesis import target
from hypothesis.errors import HypothesisException

from dpaudit._validation import check_int
from dpaudit.hypothesis_seeding import independent_of_loaded_modules

__all__ = ["statdp_patterns", "search_pairs", "is_strategy", "DEFAULT_PAIR_CANDIDATES",
           "pair_key", "identical_inputs", "describe_pair"]

#: Default number of pairs a Hypothesis search pilots (``audit(..., pair_candidates=...)``).
DEFAULT_PAIR_CANDIDATES = 16


def is_strategy(obj: Any) -> bool:
    """True iff ``obj`` is a Hypothesis search strategy."""
    return isinstance(obj, st.SearchStrategy)


def statdp_patterns(dimensions: int, *, component_wise: bool = True, low: float = 0.0,
                    high: float = 2.0) -> st.SearchStrategy[tuple[np.ndarray, np.ndarray]]:
    """StatDP's standard input patterns for a vector of ``dimensions`` query answers.

    Parameters
    ----------
    dimensions : int >= 1
        Length of the query-answer vector (the mechanism's input).
    component_wise : bool
        True: every answer may change by 1 between neighbours (histogram / counting queries with
        sensitivity 1 per query, as in SVT and report-noisy-max), so all patterns are included.
        False: only one answer changes ("one above", "one below").
    low, high : float
        Values clipped to ``[low, high]`` (the patterns use 0, 1 and 2).

    Returns
    -------
    strategy of (data0, data1)
        Float arrays of shape ``(dimensions,)``; every pattern in both orders.
    """
    d = check_int(dimensions, "dimensions", minimum=1)
    if not (math.isfinite(low) and math.isfinite(high) and low < high):
        raise ValueError(f"need finite low < high, got low={low!r}, high={high!r}")
    half = d // 2
    ones = np.ones(d)
    raw = [(ones, np.r_[0.0, np.ones(d - 1)]),            # one above (data0 is above)
           (ones, np.r_[2.0, np.ones(d - 1)])]            # one below
    if component_wise:
        raw += [(ones, np.r_[2.0, np.zeros(d - 1)]),      # one above rest below
                (ones, np.r_[0.0, np.full(d - 1, 2.0)]),  # one below rest above
                (ones, np.r_[np.full(half, 2.0), np.zeros(d - half)]),  # half half
                (ones, np.full(d, 2.0)),                  # all above
                (ones, np.zeros(d)),                      # all below
                (np.r_[np.ones(half), np.zeros(d - half)],
                 np.r_[np.zeros(half), np.ones(d - half)])]  # X shape
    pairs = []
    for a, b in raw:
        a, b = np.clip(a, low, high).astype(float), np.clip(b, low, high).astype(float)
        pairs += [(a, b), (b.copy(), a.copy())]
    return st.sampled_from(pairs)


def _one_key(x: Any) -> str:
    if isinstance(x, np.ndarray):
        return f"ndarray{x.shape}{x.dtype}:{x.tobytes().hex()}"
    return repr(x)


def _key(pair: tuple[Any, Any]) -> str:
    return _one_key(pair[0]) + "|" + _one_key(pair[1])


#: The key of a pair: two candidates with the same key are the same pair (piloted once).
pair_key = _key


def identical_inputs(data0: Any, data1: Any) -> bool:
    """True iff the two inputs are the same value (same bytes for arrays, same repr otherwise):
    such a "pair" cannot show any privacy loss and is never piloted."""
    if isinstance(data0, np.ndarray) or isinstance(data1, np.ndarray):
        a, b = np.asarray(data0), np.asarray(data1)
        return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()
    return _one_key(data0) == _one_key(data1)


def _short(x: Any, limit: int) -> str:
    text = repr(x.tolist() if isinstance(x, np.ndarray) else x)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def describe_pair(data0: Any, data1: Any, *, how: str = "", limit: int = 100) -> str:
    """The audited pair in one line: both inputs (shortened) and how it was chosen."""
    line = f"data0={_short(data0, limit)}, data1={_short(data1, limit)}"
    return f"{line} ({how})" if how else line


def search_pairs(strategy: st.SearchStrategy[Any] | None,
                 evaluate: Callable[[Any, Any], float], max_candidates: int, seed: int, *,
                 seeds: Sequence[tuple[Any, Any]] = (),
                 skip: Callable[[Any, Any], str | None] | None = None,
                 dropped: list[dict[str, Any]] | None = None,
                 vacuous: bool = False) -> list[tuple[Any, Any]]:
    """Targeted Hypothesis search over neighbouring pairs.

    First every pair of ``seeds`` (in order), then at most ``max_candidates`` pairs drawn from
    ``strategy`` (None: seeds only); each *distinct* pair whose inputs differ, and that ``skip``
    (if given) does not reject, is passed once to ``evaluate(data0, data1)`` (in the engine: a
    pilot audit on fresh runs returning the projected log-ratio bound), whose value steers the
    search via ``hypothesis.target``. Rejected candidates are appended to ``dropped`` as
    ``{"pair": ..., "reason": ...}`` and do not count as one of the ``max_candidates`` draws
    (Hypothesis draws again: ``assume(False)``). ``vacuous=True`` keeps pairs with identical
    inputs (to get *some* input, e.g. for a probe).

    Returns
    -------
    list of (data0, data1)
        The distinct pairs in the order they were evaluated (the seeds kept, then at most
        ``max_candidates`` generated ones).
    """
    max_candidates = check_int(max_candidates, "pair_candidates", minimum=1)
    seen: dict[str, float] = {}
    rejected: set[str] = set()
    order: list[tuple[Any, Any]] = []
    generated = [0]

    def consider(d0: Any, d1: Any, cap: int | None) -> float | None:
        """The pair's value, evaluating it if it is new and admissible; None if rejected."""
        k = _key((d0, d1))
        if k in seen:
            # A dropped pair stays dropped: Hypothesis replays examples in its target phase, and
            # a replay that answered differently (-inf instead of a rejection) was FlakyReplay.
            return None if k in rejected else seen[k]
        if cap is not None and generated[0] >= cap:
            return None
        reason = None
        if not vacuous and identical_inputs(d0, d1):
            reason = "its two inputs are identical"
        elif skip is not None:
            reason = skip(d0, d1)
        if reason is not None:
            seen[k] = -math.inf
            rejected.add(k)
            if dropped is not None:
                dropped.append({"pair": describe_pair(d0, d1), "reason": reason})
            return None
        if cap is not None:
            generated[0] += 1
        seen[k] = evaluate(d0, d1)
        order.append((d0, d1))
        return seen[k]

    for i, pair in enumerate(seeds):
        try:
            d0, d1 = pair
        except (TypeError, ValueError) as exc:
            raise TypeError(f"pair_seeds[{i}] must be a (data0, data1) pair") from exc
        consider(d0, d1, None)
    if strategy is None:
        if not order:
            raise ValueError("every seed pair was dropped (identical inputs or identical "
                             "outputs) and there is no strategy to search")
        return order

    @hypothesis_seed(seed)
    @settings(max_examples=max_candidates, database=None, deadline=None, derandomize=False,
              phases=[Phase.generate, Phase.target], suppress_health_check=list(HealthCheck),
              report_multiple_bugs=False)
    @given(strategy)
    def run(pair: Any) -> None:
        try:
            d0, d1 = pair
        except (TypeError, ValueError) as exc:
            raise TypeError(f"a pairs strategy must generate (data0, data1) pairs, "
                            f"got {type(pair).__name__}") from exc
        v = consider(d0, d1, max_candidates)
        if v is None:
            assume(False)  # a dropped candidate is not one of the draws
            return
        target(v if math.isfinite(v) else -1e6, label="projected log-ratio bound")

    with independent_of_loaded_modules():  # draws must not depend on which modules are loaded
        try:
            run()
        except HypothesisException as exc:
            if isinstance(exc, BaseExceptionGroup) and exc.exceptions:
                # FlakyFailure: the user's code raised on one call and not on its replay; that
                # error is the user's to see, not Hypothesis's wrapper.
                raise exc.exceptions[0] from None
            # Hypothesis's own verdicts on the search (Unsatisfiable: every draw rejected or
            # filtered out; Flaky*: a strategy or mechanism that answers differently when
            # replayed) are not the user's errors to decode: the pairs evaluated so far were each
            # piloted on their own runs, so they remain a valid choice; with none, say why.
            if not order:
                raise ValueError(
                    "the pairs strategy generated no usable pair: Hypothesis stopped the search "
                    f"({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}); "
                    "check that the strategy can generate (data0, data1) pairs (not "
                    "st.nothing() or a filter that rejects every draw)") from None
    if not order:
        raise ValueError("the pairs strategy generated no admissible pair (all had identical "
                         "inputs or identical outputs)" if seen else
                         "the pairs strategy generated no pair")
    return order
