"""Exact laws of AFKT23's released index sequences (small T, d), exact epsilon, and accountants.

Asi, Feldman, Koren & Talwar, ICML 2023 (``afkt23.txt``), Algorithms 1, 2, 3 and 5. For
Algorithms 1 and 5 the released sequence is a semi-Markov process (a sparse-vector instance runs
until its first "above", then the exponential mechanism draws the next expert), so its exact law
is an enumeration of paths whose first-above times are one-dimensional integrals
(:func:`index_sequence_law`, meant for ``T <= 8``, ``d <= 3``); :func:`discrete_epsilon` is the
exact ``epsilon(delta)`` between two discrete laws; the certified bounds of single witnesses
(:func:`alg2_alternating_bound`, :func:`alg5_two_switch_log_probability`,
:func:`alg5_first_switch_bound`); and the accountants of the implemented noise, worst case over
inputs (:func:`alg1_accountant`, :func:`alg2_accountant`, :func:`alg5_accountant`,
:func:`dp_ftrl_accountant`). The construction, its accuracy and the composition used:
docs/paper-readings.md#afkt23-exact-laws-and-accountants.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
from scipy import integrate, special

from dpaudit._validation import check_delta
from dpaudit.formal.accounting import gaussian_epsilon, pure_composition_epsilon
from dpaudit.learners.dp_ftrl import DpFtrlParameters
from dpaudit.learners.experts import check_expert_losses, cumulative_losses
from dpaudit.learners.potential_experts import Algorithm5Parameters, log_potential
from dpaudit.learners.sparse_vector_experts import Algorithm1Parameters, Algorithm2Parameters
from dpaudit.mechanisms.exponential import ExponentialMechanism
from dpaudit.mechanisms.sparse_vector import first_above_probabilities, sparse_vector_scales

__all__ = ["MIN_MASS", "discrete_epsilon", "index_sequence_law", "alg1_law", "alg5_law", "law_arrays",
           "max_selections", "alg1_svt_epsilon", "Alg2AlternatingBound", "alg2_alternating_bound",
           "alg2_alternating_path_log_probability", "alg1_accountant", "alg2_accountant", "alg5_accountant",
           "ALG5_QUERY_SENSITIVITY_BOUND", "svt_log_first_above", "alg5_two_switch_log_probability",
           "Alg5FirstSwitchBound", "alg5_first_switch_bound",
           "ALG5_PHASE_COST_FIRST", "ALG5_PHASE_COST_LATER",
           "dp_ftrl_accountant", "exact_epsilon_alg1",
           "exact_epsilon_alg5", "law_conformance_pvalue"]

#: The replace-one sensitivity bound of Algorithm 5's query: |Delta log phi(t*)| <= eta and
#: |Delta log phi(t)| <= eta (Lemma C.1's argument), so |Delta q_t| <= 2; approached when the changed
#: loss precedes t* and the post-t* losses concentrate phi(t) on low-weight experts.
ALG5_QUERY_SENSITIVITY_BOUND = 2.0


def _delta_at(p: np.ndarray, q: np.ndarray, eps: float) -> float:
    return max(float(np.sum(np.maximum(p - math.exp(eps) * q, 0.0))),
               float(np.sum(np.maximum(q - math.exp(eps) * p, 0.0))))


#: Outcomes whose probability is below this under both laws are left out of the pure-DP ratio: the
#: quadrature's absolute error (~1e-13) would make their ratio meaningless. The result is then the
#: exact epsilon over the outcomes kept, a lower bound on the exact epsilon of the pair.
MIN_MASS = 1e-10


def discrete_epsilon(p: np.ndarray, q: np.ndarray, delta: float = 0.0, *,
                     min_mass: float = 0.0) -> float:
    """Exact ``epsilon(delta)`` of two discrete laws on the same outcomes, both directions.

    ``max |log p/q|`` for ``delta = 0``; otherwise the smallest ``epsilon`` with
    ``sum (p - e^eps q)_+ <= delta`` and the same with ``p, q`` swapped (bisection to a relative
    1e-12): Dwork-Roth 2014, Def. 2.4, on the worst event of a discrete law.

    Parameters
    ----------
    p, q
        1-D probability arrays over the same outcomes (each summing to 1).
    delta
        The delta at which epsilon is computed, in [0, 1).
    min_mass
        Pure case only: ignore outcomes whose probability is below it under both laws (see
        :data:`MIN_MASS`); an outcome with mass under one law only counts as ``inf`` only when the
        other mass is at least ``min_mass``.

    Returns
    -------
    float
        The exact epsilon (``inf`` when a one-sided outcome is kept, or when no epsilon up to 1e4
        reaches ``delta``).

    Raises
    ------
    ValueError
        If ``p`` and ``q`` are not 1-D arrays of one shape, or ``delta`` is outside [0, 1).
    """
    p = np.asarray(p, dtype=float)
    q = np.asarray(q, dtype=float)
    if p.shape != q.shape or p.ndim != 1:
        raise ValueError("p and q must be 1-D arrays over the same outcomes")
    delta = check_delta(delta)
    if min_mass > 0.0 and delta == 0.0:
        keep = np.maximum(p, q) >= min_mass
        p, q = p[keep], q[keep]
    if delta == 0.0:
        both = (p > 0) & (q > 0)
        if np.any((p > 0) != (q > 0)):
            return math.inf
        return float(np.max(np.abs(np.log(p[both]) - np.log(q[both])))) if both.any() else 0.0
    if _delta_at(p, q, 0.0) <= delta:
        return 0.0
    lo, hi = 0.0, 1.0
    while _delta_at(p, q, hi) > delta:
        hi *= 2.0
        if hi > 1e4:
            return math.inf
    while hi - lo > 1e-12 * max(1.0, hi):
        mid = 0.5 * (lo + hi)
        if _delta_at(p, q, mid) > delta:
            lo = mid
        else:
            hi = mid
    return hi


@dataclass
class _Process:
    """One sparse-vector-experts process: how instances query and how draws are made."""

    T: int
    d: int
    cap: int
    b1: float
    b2: float
    queries: Callable[[int, int, int], np.ndarray]   # (anchor, qstart, x) -> values - threshold for rounds qstart..T-1
    draw: Callable[[int], np.ndarray]                # switch round h -> probabilities over experts
    next_anchor: Callable[[int], int]                # switch round h -> anchor of the next instance


def index_sequence_law(proc: _Process, max_paths: int = 2_000_000) -> dict[tuple[int, ...], float]:
    """Exact law of a sparse-vector-experts process's released index sequence (module docstring).

    Enumerates every internal path (each switch round and draw) and sums those that release the
    same sequence; cost grows like ``(T d)^{switches}``.

    Parameters
    ----------
    proc
        The process: horizon, experts, draw cap, sparse-vector noise scales, queries and draws.
    max_paths
        Enumeration limit; beyond it the law is refused rather than truncated.

    Returns
    -------
    dict
        ``{released sequence (0-based expert indices): probability}``.

    Raises
    ------
    ValueError
        If more than ``max_paths`` paths would be enumerated.
    """
    T, d = proc.T, proc.d
    svt_cache: dict[tuple[int, int, int], np.ndarray] = {}
    draw_cache: dict[int, np.ndarray] = {}
    law: dict[tuple[int, ...], float] = {}
    paths = 0

    def svt(anchor: int, qstart: int, x: int) -> np.ndarray:
        key = (anchor, qstart, x)
        if key not in svt_cache:
            vals = proc.queries(anchor, qstart, x)
            svt_cache[key] = (first_above_probabilities(vals, 0.0, proc.b1, proc.b2)
                              if vals.size else np.ones(1))
        return svt_cache[key]

    def draw(h: int) -> np.ndarray:
        if h not in draw_cache:
            draw_cache[h] = proc.draw(h)
        return draw_cache[h]

    def add(seq: tuple[int, ...], prob: float) -> None:
        nonlocal paths
        paths += 1
        if paths > max_paths:
            raise ValueError(f"more than {max_paths} paths: reduce T or d")
        law[seq] = law.get(seq, 0.0) + prob

    def walk(prefix: tuple[int, ...], start: int, x: int, anchor: int, qstart: int, k: int,
             prob: float) -> None:
        if prob == 0.0:
            return
        if k >= proc.cap or qstart > T - 1:
            add(prefix + (x,) * (T - start + 1), prob)
            return
        law_first = svt(anchor, qstart, x)
        for i, pj in enumerate(law_first[:-1]):
            j = qstart + i          # query round that fires; switch at h = j + 1 <= T
            h = j + 1
            head = prefix + (x,) * (h - start)
            em = draw(h)
            for y in range(d):
                if em[y] > 0.0:
                    walk(head, h, y, proc.next_anchor(h), h + 1, k + 1, prob * pj * em[y])
        add(prefix + (x,) * (T - start + 1), prob * law_first[-1])

    for x0 in range(d):
        walk((), 1, x0, proc.next_anchor(0), 1, 0, 1.0 / d)
    return law


def alg1_law(losses: np.ndarray, params: Algorithm1Parameters, *, em_form: str = "half",
             svt_epsilon: float | None = None) -> dict[tuple[int, ...], float]:
    """Exact law of AFKT23 Algorithm 1's released sequence on ``losses``.

    Queries of the instance anchored at ``a`` (first loss round) for expert ``x`` at round
    ``j``: ``sum_{i=a}^{j-1} l_i(x) - L``; the first instance has ``a = 1`` (``l_0 = 0``); after a
    switch at ``h``, ``a = h`` and the first query is at ``h + 1`` (AFKT23, ICML 2023, Algorithm 1,
    as read by :mod:`dpaudit.learners.sparse_vector_experts`).

    Parameters
    ----------
    losses
        ``(T, d)`` loss array (clipped to [0, 1]).
    params
        Algorithm 1's parameters (``d`` must match ``losses``).
    em_form
        The exponential mechanism's form (``"half"`` as implemented); another form computes the law
        of a deliberately wrong variant for tests.
    svt_epsilon
        Overrides ``params.svt_epsilon`` for the same purpose; ``None`` keeps it.

    Returns
    -------
    dict
        ``{released sequence: probability}``, as :func:`index_sequence_law`.

    Raises
    ------
    ValueError
        If ``losses`` is not a finite ``(T, d)`` array matching ``params.d``, or the enumeration is
        too large.
    """
    L, _ = check_expert_losses(losses, d=params.d)
    T, d = L.shape
    C = cumulative_losses(L)
    b1, b2 = sparse_vector_scales(params.svt_epsilon if svt_epsilon is None else svt_epsilon)
    em = ExponentialMechanism(1.0, params.eta, form=em_form)  # type: ignore[arg-type]

    def queries(anchor: int, qstart: int, x: int) -> np.ndarray:
        a = max(anchor, 1)
        rounds = np.arange(qstart, T)               # j = qstart .. T-1
        return C[rounds - 1, x] - C[a - 1, x] - params.threshold

    def draw(h: int) -> np.ndarray:
        return em.probabilities(np.maximum(C[h - 1], params.L_star))

    proc = _Process(T=T, d=d, cap=params.selections, b1=b1, b2=b2, queries=queries, draw=draw,
                    next_anchor=lambda h: h)
    return index_sequence_law(proc)


def alg5_law(losses: np.ndarray, params: Algorithm5Parameters) -> dict[tuple[int, ...], float]:
    """Exact law of AFKT23 Algorithm 5's released sequence (uniform prior ``mu``).

    Reading of :mod:`dpaudit.learners.potential_experts` (AFKT23, ICML 2023, Algorithm 5,
    App. C): the query at round ``j`` is ``(log phi(t*) - log phi(j)) / eta - 2 alpha``; a switch
    at ``h`` draws from the losses up to ``h - 1`` and sets ``t* = h - 1``; the first instance has
    ``t* = 0``.

    Parameters
    ----------
    losses
        ``(T, d)`` loss array (clipped to [0, 1]).
    params
        Algorithm 5's parameters (``d`` must match ``losses``).

    Returns
    -------
    dict
        ``{released sequence: probability}``, as :func:`index_sequence_law`.

    Raises
    ------
    ValueError
        If ``losses`` does not match ``params.d``, or the enumeration is too large.
    """
    L, _ = check_expert_losses(losses, d=params.d)
    T, d = L.shape
    C = cumulative_losses(L)
    logphi = log_potential(L, params.eta)
    b1, b2 = sparse_vector_scales(params.epsilon0)
    em = ExponentialMechanism(1.0, params.eta, form="full")

    def queries(anchor: int, qstart: int, x: int) -> np.ndarray:
        rounds = np.arange(qstart, T)
        return (logphi[anchor] - logphi[rounds]) / params.eta - params.threshold

    proc = _Process(T=T, d=d, cap=params.selections, b1=b1, b2=b2, queries=queries,
                    draw=lambda h: em.probabilities(C[h - 1]), next_anchor=lambda h: max(h - 1, 0))
    return index_sequence_law(proc)


def law_arrays(law0: dict, law1: dict) -> tuple[list, np.ndarray, np.ndarray]:
    """Align two laws on the union of their outcomes.

    Parameters
    ----------
    law0, law1
        ``{outcome: probability}`` dicts; an outcome missing from one has probability 0 there.

    Returns
    -------
    tuple
        ``(outcomes, p, q)``: the sorted outcomes and the two probability arrays over them.
    """
    keys = sorted(set(law0) | set(law1))
    return keys, np.array([law0.get(k, 0.0) for k in keys]), np.array([law1.get(k, 0.0) for k in keys])


def law_conformance_pvalue(outputs: np.ndarray, law: dict[tuple[int, ...], float]) -> tuple[float, int]:
    """Pearson chi-square goodness-of-fit of sampled index sequences to an exact law.

    Cells are the outcomes with expected count >= 5; the remaining mass is one more cell if its
    expected count is >= 5, else it is pooled into the smallest cell (so every cell meets the usual
    >= 5 rule). Under the law the p-value is (asymptotically) uniform, so a test at level ``a``
    rejects a correct implementation with probability ``a``.

    Parameters
    ----------
    outputs
        Int array ``(n, T)`` of released sequences.
    law
        ``{outcome: probability}`` (from :func:`alg1_law` / :func:`alg5_law`).

    Returns
    -------
    tuple
        ``(p_value, cells)``; ``(1.0, cells)`` when fewer than two cells remain.

    Raises
    ------
    ValueError
        If ``outputs`` is not a non-empty 2-D array, or no outcome has an expected count >= 5.
    """
    from scipy import stats

    out = np.asarray(outputs)
    if out.ndim != 2 or out.shape[0] < 1:
        raise ValueError(f"outputs must be a non-empty (n, T) array, got shape {out.shape}")
    keys, counts = np.unique(out, axis=0, return_counts=True)
    observed = {tuple(int(v) for v in k): int(c) for k, c in zip(keys, counts)}
    n = out.shape[0]
    big = [k for k, pr in law.items() if pr * n >= 5]
    if not big:
        raise ValueError("no outcome has an expected count >= 5: increase the number of runs")
    obs = [float(observed.get(k, 0)) for k in big]
    exp = [law[k] * n for k in big]
    rest_obs, rest_exp = n - sum(obs), n - sum(exp)
    if rest_exp >= 5:
        obs.append(rest_obs)
        exp.append(rest_exp)
    else:
        i = int(np.argmin(exp))
        obs[i] += rest_obs
        exp[i] += rest_exp
    if len(obs) < 2:
        return 1.0, len(obs)
    return float(stats.chisquare(obs, exp).pvalue), len(obs)


def exact_epsilon_alg1(losses0: np.ndarray, losses1: np.ndarray, params: Algorithm1Parameters,
                       delta: float = 0.0) -> float:
    """Exact epsilon(delta) of AFKT23 Algorithm 1's released sequence on one neighbouring pair.

    Parameters
    ----------
    losses0, losses1
        The two ``(T, d)`` loss streams of the pair.
    params
        Algorithm 1's calibration (Theorem 1; e.g. from
        :func:`~dpaudit.learners.sparse_vector_experts.algorithm1_parameters`).
    delta
        The delta of the epsilon, in [0, 1).

    Returns
    -------
    float
        :func:`discrete_epsilon` of the two laws :func:`alg1_law` gives, outcomes below
        :data:`MIN_MASS` left out.
    """
    return _pair_epsilon(alg1_law(losses0, params), alg1_law(losses1, params), delta)


def exact_epsilon_alg5(losses0: np.ndarray, losses1: np.ndarray, params: Algorithm5Parameters,
                       delta: float = 0.0) -> float:
    """Exact epsilon(delta) of AFKT23 Algorithm 5's released sequence on one neighbouring pair.

    As :func:`exact_epsilon_alg1`, with the laws of :func:`alg5_law`.

    Parameters
    ----------
    losses0, losses1
        The pair's two ``(T, d)`` loss streams.
    params
        Algorithm 5's calibration (Theorem 6 or 7; e.g. from
        :func:`~dpaudit.papers.afkt23.gamma.algorithm5_parameters_at_gamma`).
    delta
        The delta, in [0, 1).

    Returns
    -------
    float
        The exact epsilon(delta).
    """
    return _pair_epsilon(alg5_law(losses0, params), alg5_law(losses1, params), delta)


def _pair_epsilon(law0: dict, law1: dict, delta: float) -> float:
    """:func:`discrete_epsilon` of two index-sequence laws, outcomes below :data:`MIN_MASS` left
    out at every delta."""
    _, p, q = law_arrays(law0, law1)
    return discrete_epsilon(p, q, delta, min_mass=MIN_MASS)


def max_selections(T: int, cap: int) -> int:
    """Most exponential-mechanism draws possible in ``T`` rounds.

    Switches happen at rounds 2, 4, 6, ... at the earliest (an instance's first query comes the
    round after a draw), capped by the loop condition.

    Parameters
    ----------
    T
        The horizon.
    cap
        The learner's cap on draws (``K``).

    Returns
    -------
    int
        ``min(cap, T // 2)``.
    """
    return min(cap, T // 2)


def alg1_svt_epsilon(svt_epsilon: float) -> float:
    """Pure epsilon of AFKT23 Algorithm 1's sparse vectors under replace-one.

    Proved fact (the accountant below rests on it; ``tests/test_afkt23_alg1_bound.py`` checks it
    against an independent quadrature and shows it is attained in the limit). Algorithm 1's
    instances read disjoint blocks of loss rounds (the instance anchored at ``t_p`` that halts on
    the query of round ``j`` reads rounds ``t_p .. j-1``; the next is anchored at ``j + 1``; round
    ``j`` is read only by the draw), so a replaced round ``s`` enters at most one instance; given
    the past transcript the others have identical laws. Inside that instance the expert ``x`` is
    fixed, so the queries ``q_t = sum_{i=t_p}^{t-1} l_i(x)`` with ``t <= s`` are unchanged and every
    later one moves by the *same* ``c = l'_s(x) - l_s(x)``, ``|c| <= 1`` (losses clipped to [0, 1]).
    With threshold noise ``rho ~ Lap(b1)``, ``b1 = 2/eps'``, and query noise ``Lap(b2)``, ``b2 = 4/eps'``
    (``eps' = svt_epsilon``), map the noise of one stream to noise of the other that releases the
    same halting index (a translation, Jacobian 1):

    * ``c >= 0`` (queries move up): halting at ``k <= s`` or at the first moved query: identity; at a
      later ``k`` or never: ``rho -> rho + c``. Cost ``c / b1``.
    * ``c < 0``: halting at ``k <= s`` or never: identity; at a moved ``k``: ``nu_k -> nu_k + |c|``.
      Cost ``|c| / b2``.

    Both directions are bounded by ``|c| / b1 <= eps'/2``. Dwork-Roth's ``eps'`` is the price of
    queries that move in *opposite* directions (earlier down, last up), which one replaced loss
    cannot do here. The draws are charged separately (``eta`` each).

    Parameters
    ----------
    svt_epsilon
        The sparse vector's nominal epsilon ``eps'`` (Algorithm 1's ``epsilon/2`` share).

    Returns
    -------
    float
        ``svt_epsilon / 2``.
    """
    return float(svt_epsilon) / 2.0


def alg1_accountant(params: Algorithm1Parameters, delta: float | None = None, *,
                    svt: str = "monotone") -> float:
    """Worst-case epsilon(delta) of AFKT23 Algorithm 1 as implemented.

    From proved facts only: the one sparse-vector instance that reads the replaced loss
    (``svt="monotone"``: :func:`alg1_svt_epsilon`, ``eps/4``; ``svt="generic"``: Lemma 2.3's
    ``eps/2`` for arbitrary 1-sensitive queries, the paper's parallel argument) composed with
    ``min(ceil-or-floor K, floor(T/2))`` draws, each ``eta``-DP (half form, 1-sensitive scores).

    Parameters
    ----------
    params
        Algorithm 1's parameters.
    delta
        The delta of the epsilon; ``None`` takes ``params.delta``.
    svt
        ``"monotone"`` (the proved ``svt_epsilon / 2``) or ``"generic"`` (Lemma 2.3's full
        ``svt_epsilon``).

    Returns
    -------
    float
        The composed epsilon (:func:`dpaudit.formal.accounting.pure_composition_epsilon`).

    Raises
    ------
    ValueError
        If ``svt`` is neither value or ``delta`` is outside [0, 1).
    """
    delta = params.delta if delta is None else check_delta(delta)
    if svt == "monotone":
        first = alg1_svt_epsilon(params.svt_epsilon)
    elif svt == "generic":
        first = params.svt_epsilon
    else:
        raise ValueError(f"svt must be 'monotone' or 'generic', got {svt!r}")
    pieces = [first] + [params.eta] * max_selections(params.T, params.selections)
    return pure_composition_epsilon(pieces, delta)


def alg2_accountant(params: Algorithm2Parameters) -> float:
    """Worst-case pure epsilon of AFKT23 Algorithm 2 as implemented.

    Sparse vectors at ``eps_0/2`` in parallel, and per draw ``eta`` (selection) plus ``eps_0/K``
    (Laplace count), with at most ``floor(T/2)`` draws in total when restarts are uncapped (each
    restart resets ``k``), else at most ``max_applications * cap``.

    Parameters
    ----------
    params
        Algorithm 2's parameters.

    Returns
    -------
    float
        ``eps_0/2 + draws * (eta + eps_0/K)``.
    """
    per_run_cap = params.selections if params.max_applications is None else \
        params.selections * params.max_applications
    draws = params.T // 2 if params.max_applications is None else min(params.T // 2, per_run_cap)
    return params.epsilon0 / 2.0 + draws * (params.eta + params.epsilon0 / params.K)


def _laplace_log_sf(z: float, b: float) -> float:
    """``log P(zeta > z)`` for ``zeta ~ Lap(b)``, stable in both tails."""
    return (math.log(0.5) - z / b) if z >= 0 else math.log1p(-0.5 * math.exp(z / b))


@dataclass(frozen=True)
class Alg2AlternatingBound:
    """Algorithm 2 (no cap on restarts) on the pair ``D``: round 1's loss vector is all ones, every
    other loss 0, vs ``D'``: all losses 0 (both realizable), and the released sequence ``o`` that
    alternates between two experts every round (``A B A B ... A``, ``T`` odd).

    ``o`` has exactly one internal path (:func:`alg2_alternating_bound`), along which the only factors
    that differ between ``D`` and ``D'`` are the ``N = (T - 1)/2`` doubling tests, all passed. Test
    ``n`` (``n`` passes before it, ``Lbar* = 2^n``) passes with ``P(c + zeta > 2^n - m)``, ``zeta ~
    Lap(b)``, ``c = 1`` under ``D`` and 0 under ``D'``; once ``2^n >= m + 1`` both are upper-tail
    events and the ratio is exactly ``e^{1/b}``; before, it is ``>= 1``. Hence
    ``log P_D(o) / P_D'(o) >= (N - n0) / b`` with ``n0 = #{n >= 0: 2^n < m + 1}``: a certified lower
    bound on the pair's pure epsilon (``certified``); ``log_ratio`` adds the early terms (exact
    formula, floating point)."""

    T: int
    passes: int
    tail_passes: int
    laplace_scale: float
    doubling_margin: float
    per_pass: float
    certified: float
    log_ratio: float


def alg2_alternating_bound(params: Algorithm2Parameters) -> Alg2AlternatingBound:
    """The certified lower bound of :class:`Alg2AlternatingBound` at ``params`` (``d >= 2``).

    Why ``o`` has one path (implementation of :class:`~dpaudit.learners.sparse_vector_experts.
    AdaptiveSparseVectorExperts`, README "Alg. 2" reading): the expert changes at every round. A
    change at round ``h`` is either a draw at ``h`` (the sparse vector fired on the query of round
    ``h - 1``) or a restart's fresh ``x_0``, shown at ``h`` after a draw at ``h - 1`` whose test
    passed. A draw at ``h`` starts a sparse vector whose first query is at ``h + 1`` (after a restart:
    also ``h + 1``), so draws are at least two rounds apart, and no round-1 draw exists. Hence round 2
    is a draw, round 3 a restart, round 4 a draw, ...: one path, with every draw and every fresh
    ``x_0`` equal to the other expert and every test passed. Along it the sparse-vector queries are
    empty sums (each instance fires on its first query: value 0 in both streams, threshold ``2^n +
    L - Lbar*`` in both), and the draws' scores ``max(sum of losses since the application began,
    Lbar*)`` equal ``Lbar*`` for every expert in both streams (``Lbar* >= 1`` covers round 1's loss):
    identical factors. Only the tests' counts ``sum_{i<t} l_i(x_t)`` differ, by 1.

    The float learner stores ``Lbar*`` as a float64, which overflows to ``inf`` after 1024 doublings
    (then nothing fires); ``o`` needs more (the bound uses exact arithmetic: Algorithm 2 as printed).

    Parameters
    ----------
    params
        Algorithm 2's parameters (``d >= 2``; an even ``T`` is audited at ``T - 1``).

    Returns
    -------
    Alg2AlternatingBound
        The pair's certified and floating-point log-ratio bounds.
    """
    T = params.T if params.T % 2 == 1 else params.T - 1
    N = (T - 1) // 2
    b, m = params.laplace_scale, params.doubling_margin
    n0 = 0
    while n0 < N and 2.0 ** n0 < m + 1.0:
        n0 += 1
    tail = N - n0
    early = sum(_laplace_log_sf(2.0 ** n - m - 1.0, b) - _laplace_log_sf(2.0 ** n - m, b)
                for n in range(n0))
    return Alg2AlternatingBound(T=T, passes=N, tail_passes=tail, laplace_scale=b,
                                doubling_margin=m, per_pass=1.0 / b, certified=tail / b,
                                log_ratio=tail / b + early)


def alg2_alternating_path_log_probability(params: Algorithm2Parameters, count: float) -> float:
    """Log-probability of Algorithm 2's alternating sequence under a fixed test count.

    Its factors on the sequence ``o`` (length ``params.T``, odd, ``d = 2``, first expert fixed) when
    every doubling test sees the count ``count`` (1 under ``D``, 0 under ``D'``; see
    :func:`alg2_alternating_bound`): ``log(1/2)`` for ``x_0`` and per draw ``n = 0..N-1``: the
    sparse vector fires on its first query (value 0 against threshold ``2^n + threshold_offset``),
    the draw is the other expert (1/2: equal scores), the test passes, the fresh ``x_0`` is the
    other expert (1/2). For the implementation check at non-claim parameters (tests).

    Parameters
    ----------
    params
        Algorithm 2's parameters (``d = 2``, odd ``T``).
    count
        The count every doubling test sees (1 under ``D``, 0 under ``D'``).

    Returns
    -------
    float
        ``log P(o)``.

    Raises
    ------
    ValueError
        If ``params.d != 2`` or ``params.T`` is even.
    """
    if params.d != 2 or params.T % 2 == 0:
        raise ValueError("the alternating path is defined here for d = 2 and odd T")
    from dpaudit.mechanisms.sparse_vector import sparse_vector_scales as _scales
    b1, b2 = _scales(params.epsilon0 / 2.0)
    out = math.log(0.5)
    for n in range((params.T - 1) // 2):
        thr = 2.0 ** n + params.threshold_offset
        fire = float(first_above_probabilities(np.array([-thr]), 0.0, b1, b2)[0])
        out += (math.log(fire) + 2 * math.log(0.5)
                + _laplace_log_sf(2.0 ** n - params.doubling_margin - count, params.laplace_scale))
    return out


@dataclass(frozen=True)
class Alg5FirstSwitchBound:
    """A certified lower bound on Algorithm 5's ``epsilon(delta)`` from the event ``S`` = "the
    released expert first changes at round ``j + 1``" (:func:`alg5_first_switch_bound`)."""

    p_lower: float
    q_upper: float
    delta: float
    certified: float
    streams: tuple[np.ndarray, np.ndarray]


def alg5_first_switch_bound(params: Algorithm5Parameters, rows: list[float], replaced: int,
                            replacement: float, j: int, *, slack: float = 1e-9
                            ) -> Alg5FirstSwitchBound:
    """Certified lower bound on AFKT23 Algorithm 5's epsilon(delta) from the first-switch event.

    ``epsilon(delta) >= ln((P_D(S) - delta) / P_D'(S))`` for the event ``S`` = "x_1 = ... = x_j !=
    x_{j+1}" on the pair: ``D`` gives experts ``1..d-1`` the loss ``rows[t]`` at round ``t + 1`` and
    expert 0 none (so both streams have a zero-loss expert: realizable, and Theorem 7's ``L*(gamma)
    = 0``); ``D'`` replaces round ``replaced + 1``'s value by ``replacement``.

    * ``P_D(S) >= (1 - 1/d) P_D[phase 1 halts at query j]``: that path releases ``x_0`` up to round
      ``j`` and then a draw that differs from ``x_0`` with probability exactly ``1 - 1/d`` (``x_0`` is
      uniform and independent of the draw).
    * ``P_D'(S) <= P_D'[phase 1 fires at a query <= j]``: the released expert only changes at a
      draw, and a draw at round ``<= j + 1`` needs phase 1 to fire at a query ``<= j``.

    Both probabilities are the sparse vector's first-above law on the exact phase-1 queries
    ``-(1/eta) log phi(t) - 2 alpha`` (quadrature, absolute error ~1e-12, widened by ``slack``).
    ``certified`` is ``-inf`` when ``P_D(S) <= delta``.

    Parameters
    ----------
    params
        Algorithm 5's parameters (``delta`` is taken from it).
    rows
        The loss value of experts ``1..d-1`` at each round (expert 0 has none).
    replaced
        0-based round that ``D'`` replaces.
    replacement
        The replaced round's loss value in ``D'``.
    j
        The event's last round before the switch (1-based, ``j <= T - 1``).
    slack
        Added to the quadrature's probabilities in the bound's disfavour.

    Returns
    -------
    Alg5FirstSwitchBound
        The two probabilities, the certified bound and the two streams.
    """
    T, d = params.T, params.d
    D = np.zeros((T, d))
    for t, v in enumerate(rows):
        D[t, 1:] = v
    Dp = D.copy()
    Dp[replaced, 1:] = replacement
    b1, b2 = sparse_vector_scales(params.epsilon0)
    laws = []
    for L in (D, Dp):
        lp = log_potential(L, params.eta)
        q = (lp[0] - lp[1:j + 1]) / params.eta - params.threshold
        laws.append(first_above_probabilities(q, 0.0, b1, b2))
    p_lo = (1.0 - 1.0 / d) * float(laws[0][j - 1]) - slack
    q_hi = 1.0 - float(laws[1][-1]) + slack
    delta = params.delta
    cert = math.log((p_lo - delta) / q_hi) if p_lo > delta else -math.inf
    return Alg5FirstSwitchBound(p_lower=p_lo, q_upper=q_hi, delta=delta, certified=cert,
                                streams=(D, Dp))


def _log_cdf(z: float, b: float) -> float:
    """``log P(nu < z)``, ``nu ~ Lap(b)``."""
    return (math.log(0.5) + z / b) if z < 0 else math.log1p(-0.5 * math.exp(-z / b))


def svt_log_first_above(values: list[float], k: int | None, b1: float, b2: float) -> float:
    """Log-probability that one AboveThreshold instance first fires at query ``k``.

    Threshold 0, ``rho ~ Lap(b1)``, query ``i`` above iff ``values[i] + nu_i >= rho``, ``nu_i ~
    Lap(b2)``; computed in log space: the integrand ``exp(g(rho))`` is integrated as ``exp(g_max) *
    int exp(g - g_max)`` piecewise between the kinks (relative tolerance 1e-11), so probabilities
    far below the float range's linear-space quadrature (``first_above_probabilities``) stay exact
    in relative terms.

    Parameters
    ----------
    values
        The noise-free query values (threshold 0).
    k
        0-based index of the first "above"; ``None``: never above.
    b1, b2
        Laplace scales of the threshold and query noise.

    Returns
    -------
    float
        ``log P[first "above" at query k]``.
    """
    v = [float(x) for x in values]
    n = len(v) if k is None else k

    def g(r: float) -> float:
        out = -abs(r) / b1 - math.log(2 * b1)
        for i in range(n):
            out += _log_cdf(r - v[i], b2)
        if k is not None:
            out += _laplace_log_sf(r - v[k], b2)
        return out

    brk = sorted({0.0, *v})
    lo, hi = brk[0] - 80 * b2, brk[-1] + 80 * b1
    grid = np.unique(np.r_[np.linspace(lo, hi, 4001), brk])
    gmax = max(g(r) for r in grid)
    pts = [lo] + brk + [hi]
    total = 0.0
    for a, b in zip(pts[:-1], pts[1:]):
        if b <= a:
            continue
        inner = np.r_[a, grid[(grid > a) & (grid < b)][::100], b]
        for x, y in zip(inner[:-1], inner[1:]):
            total += integrate.quad(lambda r: math.exp(g(r) - gmax), x, y, epsabs=0.0,
                                    epsrel=1e-11, limit=200)[0]
    return gmax + math.log(total)


def alg5_two_switch_log_probability(losses: np.ndarray, params: Algorithm5Parameters, x0: int,
                                    h1: int, y1: int, h2: int, y2: int) -> float:
    """Log-probability of a two-switch sequence of AFKT23 Algorithm 5.

    The sequence starts at ``x0``, switches to ``y1 != x0`` at round ``h1`` and to ``y2 != y1`` at
    ``h2`` (reading of :func:`alg5_law`), when the loop allows exactly two draws
    (``params.selections == 2``, e.g. ``d = 2``): two visible changes are then the two draws, so the
    sequence has one internal path: ``1/d`` for ``x_0``, phase 1 halts at query ``h1 - 1``, the draw
    from the losses up to ``h1 - 1``, phase 2 (``t* = h1 - 1``, queries ``h1 + 1 .. h2 - 1``) halts
    at query ``h2 - 1``, the second draw; no sparse vector after.

    Parameters
    ----------
    losses
        ``(T, d)`` loss array.
    params
        Algorithm 5's parameters (``selections == 2``).
    x0
        The first released expert.
    h1, y1
        Round and expert of the first switch (``y1 != x0``, ``h1 >= 2``).
    h2, y2
        Round and expert of the second switch (``y2 != y1``, ``h1 + 2 <= h2``).

    Returns
    -------
    float
        ``log P`` of the sequence.

    Raises
    ------
    ValueError
        If the loop does not allow exactly two draws or the switches are not as above.
    """
    if params.selections != 2 or not (y1 != x0 and y2 != y1 and 2 <= h1 and h1 + 2 <= h2):
        raise ValueError("needs exactly two allowed draws and two visible switches h1 + 2 <= h2")
    L, _ = check_expert_losses(losses, d=params.d)
    C = cumulative_losses(L)
    lp = log_potential(L, params.eta)
    b1, b2 = sparse_vector_scales(params.epsilon0)

    def em(h: int, y: int) -> float:
        w = -params.eta * C[h - 1]
        return float(w[y] - special.logsumexp(w))

    v1 = [(lp[0] - lp[t]) / params.eta - params.threshold for t in range(1, h1)]
    v2 = [(lp[h1 - 1] - lp[t]) / params.eta - params.threshold for t in range(h1 + 1, h2)]
    return (-math.log(params.d) + svt_log_first_above(v1, len(v1) - 1, b1, b2) + em(h1, y1)
            + svt_log_first_above(v2, len(v2) - 1, b1, b2) + em(h2, y2))


#: Pure epsilon, in units of eps_0, of Algorithm 5's sparse vector in the phase that contains the
#: replaced round (``a = 0`` below: the queries are 1-sensitive) and in every later phase.
ALG5_PHASE_COST_FIRST, ALG5_PHASE_COST_LATER = 1.0, 1.5


def alg5_accountant(params: Algorithm5Parameters, delta: float | None = None, *,
                    query_sensitivity: float | None = None) -> float:
    """Worst-case epsilon(delta) of Algorithm 5 as implemented, from proved facts only.

    ``min(cap, ceil(T/2))`` sparse-vector instances (threshold noise ``Lap(2/eps_0)``, query noise
    ``Lap(4/eps_0)``, calibrated for 1-sensitive queries) and ``min(cap, floor(T/2))`` draws
    ``exp(-eta s)``, each ``2 eta``-DP under replacement (every score moves by at most 1).

    Default (``query_sensitivity=None``): the phase cost. ``log phi(t)`` is a log-mean-exp of
    ``-eta C_t(x)``, and one replaced round moves every ``C_t(x)`` by at most 1, so it moves
    ``log phi(t)`` by ``eta b_t`` with ``|b_t| <= 1``. A phase's query ``(log phi(t*) - log phi(t))/eta``
    then moves by ``a - b_t`` with one ``a = b_{t*}`` for the whole phase, ``|a| <= 1``: every shift lies
    in ``[a - 1, a + 1]``. Mapping one stream's noise to the other's (threshold ``rho -> rho + M``,
    ``M`` the largest shift before the halting query, and that query's noise by ``M`` minus its own
    shift, at most 2) costs at most ``|M| eps_0/2 + 2 eps_0/4 <= (|a| + 1) eps_0/2 + eps_0/2``:
    ``1.5 eps_0`` (:data:`ALG5_PHASE_COST_LATER`). Phases that end before the replaced round are
    unaffected, and in the phase containing it ``t* < s`` so ``a = 0``: ``eps_0``
    (:data:`ALG5_PHASE_COST_FIRST`), the first phase in the worst case (``log phi(0) = 0``).
    ``query_sensitivity=Delta`` instead charges every instance ``Delta eps_0`` (Delta = 2: the
    SMT-proved sensitivity bound; 1: the paper's assumption, refuted).

    Parameters
    ----------
    params
        Algorithm 5's parameters.
    delta
        The delta of the epsilon; ``None`` takes ``params.delta``.
    query_sensitivity
        ``None`` for the phase cost above, else the per-instance sensitivity charged.

    Returns
    -------
    float
        The composed epsilon (:func:`dpaudit.formal.accounting.pure_composition_epsilon`).

    Raises
    ------
    ValueError
        If ``delta`` is outside [0, 1).
    """
    delta = params.delta if delta is None else check_delta(delta)
    instances = min(params.selections, (params.T + 1) // 2)
    if query_sensitivity is None:
        svt = ([ALG5_PHASE_COST_FIRST * params.epsilon0]
               + [ALG5_PHASE_COST_LATER * params.epsilon0] * (instances - 1))
    else:
        svt = [params.epsilon0 * query_sensitivity] * instances
    pieces = svt + [2.0 * params.eta] * max_selections(params.T, params.selections)
    return pure_composition_epsilon(pieces, delta)


def dp_ftrl_accountant(params: DpFtrlParameters) -> float:
    """epsilon(delta) of AFKT23's DP-FTRL (Algorithm 3) Gaussian tree under replace-one.

    One clipped gradient moves by up to ``2L`` in every node containing its leaf (at most ``h``
    nodes): Gaussian with ``mu = 2 L sqrt(h) / sigma`` (later gradients are post-processing). Closed
    form (Balle-Wang).

    Parameters
    ----------
    params
        DP-FTRL's parameters (``L``, ``sigma``, ``nodes_per_leaf``, ``delta``).

    Returns
    -------
    float
        The Gaussian mechanism's exact epsilon at ``mu`` and ``params.delta``.
    """
    mu = 2.0 * params.L * math.sqrt(params.nodes_per_leaf) / params.sigma
    return gaussian_epsilon(mu, params.delta)
