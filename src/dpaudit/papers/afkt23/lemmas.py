"""Sensitivity of every query AFKT23 feeds to a sparse vector (and of its counts and scores),
checked by Hypothesis over the declared loss class ``[0, 1]^d`` with shrunk counterexamples.

Each check draws a stream ``(T, d)`` of losses in ``[0, 1]``, a round ``r`` and a replacement loss
vector (the paper's neighbour relation), computes every query the algorithm could issue on both
streams, and compares the largest change with the claimed sensitivity 1. The search is steered
towards large ratios with ``hypothesis.target``; Hypothesis shrinks the first failing example before
it is reported. A few deterministic examples from the analysis of each query
(:func:`extreme_examples`) are evaluated too, so a known violation does not depend on search luck;
when only they fail, the reported counterexample is the worst of them (not shrunk). Queries checked:

* ``alg1-svt``: ``q = sum_{i=a}^{j-1} l_i(x)`` for every anchor ``a``, round ``j``, expert ``x``
  (Algorithm 1 and every application of it in Algorithm 2 / Theorem 3);
* ``alg1-em``: the scores ``max(sum_{i<t} l_i(x), L*)``;
* ``alg2-count``: ``sum_{i<t} l_i(x)`` (the Laplace count of Algorithm 2);
* ``alg5-svt``: ``(1/eta)(log phi_eta(t*) - log phi_eta(t))`` for every ``t* < t``, ``eta`` drawn from
  ``[eta_min, eta_max]`` (Theorem 6 gives ``eta = eps/(112 log T log d)``; the claim is for every
  ``eps > 0``, so every ``eta > 0`` is in range).
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np
from hypothesis import given, seed as hypothesis_seed, settings, target
from hypothesis import strategies as st

from dpaudit.claims.evidence import LemmaCheck
from dpaudit.formal.lemma_search import LemmaViolation
from dpaudit.formal.sensitivity import LEMMA_SEARCH_SETTINGS
from dpaudit.papers.afkt23 import claims as C
from dpaudit.learners.experts import cumulative_losses
from dpaudit.learners.potential_experts import log_potential

__all__ = ["QUERY_KINDS", "STATEMENTS", "LEMMA_SEARCH_PROFILE", "query_values", "neighbour_examples",
           "extreme_examples", "check_query_sensitivity"]

QUERY_KINDS = ("alg1-svt", "alg1-em", "alg2-count", "alg5-svt")

#: The engine's one lemma-search profile (:data:`dpaudit.formal.sensitivity.LEMMA_SEARCH_SETTINGS`)
#: with one difference kept on purpose: ``report_multiple_bugs=True`` (Hypothesis's default, which
#: these searches have always used). With it Hypothesis keeps searching past the first failing
#: example and shrinks the failures it finds; at the standard budget (300 examples, seed 0) the
#: Algorithm 5 query search then reports the 4-round, 2-expert counterexample with ratio 1.99998
#: that the committed standard reports hold, where the shared profile reports a 5-round one with
#: ratio 1.97077 (the quick budget's records are the same under both). Verdicts do not depend on it
#: (the lemma is violated either way); the recorded counterexamples would.
LEMMA_SEARCH_PROFILE: dict[str, Any] = {**LEMMA_SEARCH_SETTINGS, "report_multiple_bugs": True}

#: Each check carries the statement of the lemma as printed (claims.py), so a report has one row
#: per lemma: the printed statement with its sampled and SMT checks, never a "not
#: checked" row for the printed form beside a "holds" row for a restated one.
STATEMENTS = {
    "alg1-svt": C.SVT_QUERY_LEMMA_ALG1.statement,
    "alg1-em": C.EM_SCORE_LEMMA.statement,
    "alg2-count": C.LAPLACE_COUNT_LEMMA_ALG2.statement,
    "alg5-svt": C.SVT_QUERY_LEMMA_ALG5.statement,
}


def query_values(kind: str, losses: np.ndarray, *, eta: float = 1.0, L_star: float = 0.0) -> np.ndarray:
    """Every query of ``kind`` the algorithm could issue on ``losses``, as a flat array.

    The order is fixed, so two neighbouring streams can be compared entrywise (AFKT23, ICML 2023:
    Algorithm 1's sparse-vector queries and exponential-mechanism scores, Algorithm 2's Laplace
    count, Algorithm 5's log-potential queries).

    Parameters
    ----------
    kind
        One of :data:`QUERY_KINDS`: ``"alg1-svt"``, ``"alg1-em"``, ``"alg2-count"``,
        ``"alg5-svt"``.
    losses
        ``(T, d)`` loss array.
    eta
        Algorithm 5's learning rate (``"alg5-svt"`` only).
    L_star
        Algorithm 1's floor of the scores (``"alg1-em"`` only).

    Returns
    -------
    numpy.ndarray
        The flat array of query values.

    Raises
    ------
    ValueError
        If ``kind`` is not one of :data:`QUERY_KINDS`.
    """
    L = np.asarray(losses, dtype=float)
    C = cumulative_losses(L)
    T = L.shape[0]
    if kind == "alg1-svt":
        # q(a, j, x) = C[j-1, x] - C[a-1, x], 1 <= a <= j <= T
        a, j = np.triu_indices(T + 1, k=0)   # pairs (a-1, j-1) with a-1 <= j-1
        return (C[j] - C[a]).ravel()
    if kind == "alg1-em":
        return np.maximum(C[:-1], L_star).ravel()
    if kind == "alg2-count":
        return C[:-1].ravel()
    if kind == "alg5-svt":
        lp = log_potential(L, eta)
        s, t = np.triu_indices(T + 1, k=1)
        return (lp[s] - lp[t]) / eta
    raise ValueError(f"kind must be one of {QUERY_KINDS}, got {kind!r}")


_UNIT = st.one_of(st.sampled_from([0.0, 1.0]), st.floats(0.0, 1.0, allow_nan=False))


@st.composite
def neighbour_examples(draw: st.DrawFn, max_T: int = 24, max_d: int = 4, eta_min: float = 1e-3,
                       eta_max: float = 5.0) -> dict:
    """Hypothesis strategy of a stream in ``[0, 1]^{T x d}``, a replaced round and an eta.

    Parameters
    ----------
    draw
        Hypothesis's draw function (supplied by ``st.composite``).
    max_T
        Largest horizon drawn (from 1).
    max_d
        Largest number of experts drawn (from 2).
    eta_min, eta_max
        Range of the learning rate drawn.

    Returns
    -------
    dict
        ``{"losses": rows, "round": 1-based replaced round, "replacement": row, "eta": eta}``.
    """
    T = draw(st.integers(1, max_T))
    d = draw(st.integers(2, max_d))
    if draw(st.booleans()):   # free rows in [0, 1]^d
        rows = draw(st.lists(st.lists(_UNIT, min_size=d, max_size=d), min_size=T, max_size=T))
    else:                     # blocks of repeated 0/1 rows: long runs of losses on some experts
        pool = draw(st.lists(st.lists(st.sampled_from([0.0, 1.0]), min_size=d, max_size=d),
                             min_size=1, max_size=3))
        rows = [list(pool[i]) for i in draw(st.lists(st.integers(0, len(pool) - 1), min_size=T,
                                                       max_size=T))]
    r = draw(st.integers(0, T - 1))
    new = draw(st.lists(_UNIT, min_size=d, max_size=d))
    eta = draw(st.one_of(st.sampled_from([eta_max, 1.0]), st.floats(eta_min, eta_max, allow_nan=False)))
    return {"losses": rows, "round": r + 1, "replacement": new, "eta": eta}


def extreme_examples(kind: str) -> list[dict]:
    """Deterministic examples from the analysis of each query, run before the random search.

    For ``alg5-svt``: round 1 is ``(1, 0, .., 0)``, replaced by ``(0, 1, .., 1)``; expert 0 then loses
    ``k`` rounds (so it has small weight at ``t*``) and every other expert ``m`` rounds after ``t*``:
    the query's change tends to ``(1/eta) log(e^{2 eta} ...)`` -> 2 (see ``exact.py``). For the
    additive queries: one replaced round that moves every expert by 1.

    Parameters
    ----------
    kind
        One of :data:`QUERY_KINDS`.

    Returns
    -------
    list of dict
        Examples in the format of :func:`neighbour_examples`.
    """
    if kind == "alg5-svt":
        out = []
        for d, eta, k, m in ((2, 1.0, 3, 6), (4, 0.5, 6, 10), (4, 2.0, 3, 6)):
            rows = [[1.0] + [0.0] * (d - 1)] + [[1.0] + [0.0] * (d - 1)] * k + \
                [[0.0] + [1.0] * (d - 1)] * m
            out.append({"losses": rows, "round": 1, "replacement": [0.0] + [1.0] * (d - 1),
                        "eta": eta})
        return out
    return [{"losses": [[0.0, 0.0], [1.0, 1.0]], "round": 1, "replacement": [1.0, 1.0], "eta": 1.0}]


def _ratio(kind: str, ex: dict) -> float:
    L0 = np.array(ex["losses"], dtype=float)
    L1 = L0.copy()
    L1[ex["round"] - 1] = ex["replacement"]
    q0 = query_values(kind, L0, eta=ex["eta"])
    q1 = query_values(kind, L1, eta=ex["eta"])
    return float(np.max(np.abs(q0 - q1))) if q0.size else 0.0


def check_query_sensitivity(kind: str, *, examples: int = 200, seed: int = 0, max_T: int = 24,
                            max_d: int = 4, claimed: float = 1.0, tol: float = 1e-9) -> LemmaCheck:
    """Hypothesis check of one query family's replace-one sensitivity (module docstring).

    Parameters
    ----------
    kind
        One of :data:`QUERY_KINDS`.
    examples
        Hypothesis ``max_examples`` (the :func:`extreme_examples` run in addition).
    seed
        Seed of the search: the result is a deterministic function of it.
    max_T, max_d
        Largest horizon and number of experts generated.
    claimed
        The claimed sensitivity (> 0).
    tol
        Relative float slack: a change above ``claimed * (1 + tol)`` violates the claim.

    Returns
    -------
    LemmaCheck
        ``violated`` with the shrunk counterexample (losses, replaced round, replacement, eta,
        observed and claimed change) when some example exceeds the bound, ``holds`` otherwise;
        ``worst_ratio`` is the largest observed change over ``claimed`` in the targeted search.

    Raises
    ------
    ValueError
        If ``kind`` is not one of :data:`QUERY_KINDS`.
    """
    if kind not in QUERY_KINDS:
        raise ValueError(f"kind must be one of {QUERY_KINDS}, got {kind!r}")
    strategy = neighbour_examples(max_T=max_T, max_d=max_d)
    worst = [0.0]
    cfg = settings(max_examples=examples, **LEMMA_SEARCH_PROFILE)

    @hypothesis_seed(int(seed))
    @cfg
    @given(strategy)
    def search(ex: dict) -> None:
        r = _ratio(kind, ex) / claimed
        worst[0] = max(worst[0], r)
        target(r)
        if r > 1.0 + tol:
            raise LemmaViolation(ex)

    statement = STATEMENTS[kind]
    extremes = [(e, _ratio(kind, e) / claimed) for e in extreme_examples(kind)]
    worst[0] = max(r for _, r in extremes)
    try:
        search()
    except LemmaViolation as v:   # Hypothesis has shrunk the failing example before re-raising
        ex = v.example
    else:
        bad = [e for e, r in extremes if r > 1.0 + tol]
        if not bad:
            return LemmaCheck(statement, "holds", worst[0], examples + len(extremes))
        ex = max(bad, key=lambda e: _ratio(kind, e))   # not shrunk: from the analysis family
    observed = _ratio(kind, ex)
    counter = {"losses": ex["losses"], "replaced_round": ex["round"],
               "replacement": ex["replacement"], "eta": ex["eta"],
               "observed_change": observed, "claimed_sensitivity": claimed}
    return LemmaCheck(statement, "violated", max(worst[0], observed / claimed), examples, counter)
