"""Black-box search for a neighbouring pair from a declared input space (issue 15).

``audit(mechanism, pairs=strategy)`` accepts a Hypothesis strategy of neighbouring pairs instead
of a list. The engine then runs a *targeted* Hypothesis search (:func:`search_pairs`): each pair
Hypothesis draws gets a pilot audit on its own fresh runs (the pilot budget rule of
:mod:`dpaudit.blackbox.empirical_audit`, with the number of candidates fixed before any sampling), and the
pilot's projected bound is fed back with ``hypothesis.target``, so later draws move toward pairs
where the mechanism leaks most. The main audit then runs on the best pair with fresh runs that no
pilot has seen: the choice of the pair depends on pilot data only, and the final bound, valid
conditionally on any fixed pair, needs no correction for the search (the same argument as for a
list of pairs).

:func:`statdp_patterns` is the ready-made strategy for vector-valued queries: the input patterns of
StatDP (Ding, Wang, Wang, Zhang and Kifer, *Detecting Violations of Differential Privacy*, CCS 2018,
Sec. 5), as also used by DP-Sniper (Bichsel, Steffen, Bogunovic and Vechev, S&P 2021): the
reference answer vector ``(1, ..., 1)`` against "one above", "one below", and, for component-wise
neighbourhoods (every query may change by at most 1), "one above rest below", "one below rest
above", "half half", "all above", "all below", plus the "X shape" pair, each in both orders.

Reproducibility: Hypothesis is run with ``@seed(seed)``, no example database, no explicit or
shrinking phase, and without the literal constants Hypothesis harvests from loaded modules
(:func:`dpaudit.hypothesis_seeding.independent_of_loaded_modules`), so the sequence of drawn pairs
is a function of the seed, the strategy and the pilot results (themselves functions of the seed).
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from hypothesis import target

from dpaudit._validation import check_int
from dpaudit.hypothesis_seeding import independent_of_loaded_modules

__all__ = ["statdp_patterns", "search_pairs", "is_strategy", "DEFAULT_PAIR_CANDIDATES"]

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


def _key(pair: tuple[Any, Any]) -> str:
    def one(x: Any) -> str:
        if isinstance(x, np.ndarray):
            return f"ndarray{x.shape}{x.dtype}:{x.tobytes().hex()}"
        return repr(x)
    return one(pair[0]) + "|" + one(pair[1])


def search_pairs(strategy: st.SearchStrategy[Any], evaluate: Callable[[Any, Any], float],
                 max_candidates: int, seed: int) -> list[tuple[Any, Any]]:
    """Targeted Hypothesis search over neighbouring pairs.

    Draws at most ``max_candidates`` pairs from ``strategy``; each *distinct* pair is passed once
    to ``evaluate(data0, data1)`` (in the engine: a pilot audit on fresh runs returning the
    projected log-ratio bound), whose value steers the search via ``hypothesis.target``.

    Returns
    -------
    list of (data0, data1)
        The distinct pairs in the order they were evaluated (at most ``max_candidates``).
    """
    max_candidates = check_int(max_candidates, "pair_candidates", minimum=1)
    seen: dict[str, float] = {}
    order: list[tuple[Any, Any]] = []

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
        k = _key((d0, d1))
        if k not in seen:
            if len(order) >= max_candidates:
                return
            seen[k] = evaluate(d0, d1)
            order.append((d0, d1))
        v = seen[k]
        target(v if math.isfinite(v) else -1e6, label="projected log-ratio bound")

    with independent_of_loaded_modules():  # draws must not depend on which modules are loaded
        run()
    if not order:
        raise ValueError("the pairs strategy generated no pair")
    return order
