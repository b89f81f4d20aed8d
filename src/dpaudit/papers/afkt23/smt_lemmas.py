"""SMT encodings of the AFKT23 sparse-vector query sensitivities.

Asi, Feldman, Koren & Talwar, *Near-Optimal Algorithms for Private Online Optimization in the
Realizable Regime*, ICML 2023 (``afkt23.txt``), Algorithms 1, 2 and 5: the queries' and scores'
1-sensitivity in linear real arithmetic, and Algorithm 5's potential-ratio query as a polynomial in
``a = e^{-eta}`` (claimed 1: refuted on 4 rounds; needed 2: proved for every horizon, d = 2 and 3).
Counterexamples replay through :func:`~dpaudit.papers.afkt23.lemmas.query_values`, the function the
sampled checks of :mod:`dpaudit.papers.afkt23.lemmas` use. The encodings in full, and what is not
encoded with the reason, are in ``README.md`` beside this file (Evidence, "SMT encodings").
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Sequence

import numpy as np
import z3

from dpaudit.claims.evidence import LemmaOutcome
from dpaudit.formal.smt import (Obligation, Replay, SmtLemma, absolute,
                                     real, claim_smt_evidence)
from dpaudit.papers.afkt23.lemmas import STATEMENTS, query_values

__all__ = ["linear_query_models", "potential_ratio_models", "linear_query_lemma",
           "linear_query_any_T_lemma",
           "alg5_refutation_lemma", "alg5_bound_lemma", "all_lemmas", "lemmas_for_kinds",
           "smt_evidence"]


def _stream(name: str, T: int, d: int) -> list[list[z3.ArithRef]]:
    return [[real(f"{name}[{i}][{x}]") for x in range(d)] for i in range(T)]


def _cumulative(L: Sequence[Sequence[z3.ArithRef]]) -> list[list[z3.ArithRef]]:
    d = len(L[0])
    C = [[z3.RealVal(0)] * d]
    for row in L:
        C.append([c + v for c, v in zip(C[-1], row)])
    return C


def linear_query_models(kind: str, L, L_star=None) -> list[z3.ArithRef]:
    """Every query of ``kind`` on the symbolic stream ``L``, in the order of ``query_values``.

    The order is that of :func:`~dpaudit.papers.afkt23.lemmas.query_values`, so a model replays
    entrywise.

    Parameters
    ----------
    kind
        ``"alg1-svt"``, ``"alg2-count"`` or ``"alg1-em"``.
    L
        ``T x d`` nested lists of z3 reals (the losses).
    L_star
        z3 real, Algorithm 1's floor of the scores (``"alg1-em"`` only).

    Returns
    -------
    list of z3.ArithRef
        The symbolic query values.

    Raises
    ------
    ValueError
        If ``kind`` is not one of the three linear kinds.
    """
    C = _cumulative(L)
    T = len(L)
    if kind == "alg1-svt":
        a, j = np.triu_indices(T + 1, k=0)
        return [C[jj][x] - C[aa][x] for aa, jj in zip(a, j) for x in range(len(L[0]))]
    if kind == "alg2-count":
        return [c for row in C[:-1] for c in row]
    if kind == "alg1-em":
        return [z3.If(c >= L_star, c, L_star) for row in C[:-1] for c in row]
    raise ValueError(f"kind must be alg1-svt, alg2-count or alg1-em, got {kind!r}")


def linear_query_any_T_lemma(kind: str, bound: float = 1.0) -> SmtLemma:
    """``kind``'s queries move by at most ``bound``, every horizon and number of experts.

    Each such query is a sum of one expert's losses over a range of rounds (for ``alg1-em``
    passed through ``max(., L*)``): a replaced round outside the range changes nothing; inside,
    the query is ``S + l`` on one stream and ``S + l'`` on the other, with ``S`` (the range's
    other rounds) common and ``l, l'`` in ``[0, 1]``. ``S >= 0`` and ``L*`` are free.

    Parameters
    ----------
    kind
        ``"alg1-svt"``, ``"alg2-count"`` or ``"alg1-em"``.
    bound
        The claimed sensitivity.

    Returns
    -------
    SmtLemma
        One obligation: its model is a query moving by more than ``bound``.

    Raises
    ------
    ValueError
        If ``kind`` is not one of the three linear kinds.
    """
    S, l0, l1, L_star = real("S"), real("l"), real("l'"), real("L*")
    cons = (S >= 0, l0 >= 0, l0 <= 1, l1 >= 0, l1 <= 1)
    if kind == "alg1-em":
        q0, q1 = (z3.If(S + v >= L_star, S + v, L_star) for v in (l0, l1))
    elif kind in ("alg1-svt", "alg2-count"):
        q0, q1 = S + l0, S + l1
    else:
        raise ValueError(f"kind must be alg1-svt, alg2-count or alg1-em, got {kind!r}")
    ob = Obligation(f"a query moves by more than {bound:g}", cons,
                    absolute(q0 - q1) > z3.RealVal(Fraction(bound)),
                    {"S": S, "l": l0, "l'": l1, "L*": L_star})
    return SmtLemma(f"{STATEMENTS[kind]} [every T, every d]",
                    "a query containing the replaced round: S + l vs S + l' (S >= 0 common, l, l' "
                    f"in [0, 1]){'; through max(., L*), L* free' if kind == 'alg1-em' else ''}; "
                    "a query not containing it is unchanged", (ob,))


def potential_ratio_models(P) -> list[tuple[z3.ArithRef, z3.ArithRef]]:
    """Potential pairs ``(d phi(s), d phi(t))`` of AFKT23 Algorithm 5 for every ``s < t``.

    For ``P[i][x] = e^{-eta l_i(x)}``; the order is that of ``query_values("alg5-svt")``, whose
    entries are ``(1/eta) log(phi(s) / phi(t))``.

    Parameters
    ----------
    P
        ``T x d`` nested lists of z3 reals, ``e^{-eta l_i(x)}``.

    Returns
    -------
    list of tuple
        ``(d phi(s), d phi(t))`` as z3 expressions.
    """
    T, d = len(P), len(P[0])
    W = [[z3.RealVal(1)] * d]
    for row in P:
        W.append([w * p for w, p in zip(W[-1], row)])
    phi = [sum(row) for row in W]
    s, t = np.triu_indices(T + 1, k=1)
    return [(phi[ss], phi[tt]) for ss, tt in zip(s, t)]


def _neighbours(L0, L1) -> z3.BoolRef:
    """The two streams differ in at most one round."""
    T = len(L0)
    return z3.Or([z3.And([L1[i][x] == L0[i][x] for i in range(T) if i != r
                          for x in range(len(L0[0]))]) for r in range(T)])


def _replay_streams(kind: str, L0: np.ndarray, L1: np.ndarray, eta: float, claimed: float,
                    extra: dict) -> Replay:
    q0 = query_values(kind, L0, eta=eta)
    q1 = query_values(kind, L1, eta=eta)
    i = int(np.argmax(np.abs(q0 - q1)))
    rounds = [r + 1 for r in range(L0.shape[0]) if not np.array_equal(L0[r], L1[r])]
    return Replay(float(abs(q0[i] - q1[i])), claimed,
                  {"losses": L0.tolist(), "neighbour": L1.tolist(), "replaced_round": rounds,
                   "eta": eta, "query_index": i, "code": "afkt23.lemmas.query_values", **extra})


def linear_query_lemma(kind: str, T: int = 4, d: int = 2, bound: float = 1.0) -> SmtLemma:
    """``kind``'s queries move by at most ``bound`` under replace-one on a ``T x d`` stream.

    The stream is symbolic in ``[0, 1]``; linear real arithmetic; a model replays through
    :func:`~dpaudit.papers.afkt23.lemmas.query_values`.

    Parameters
    ----------
    kind
        ``"alg1-svt"``, ``"alg2-count"`` or ``"alg1-em"``.
    T, d
        Horizon and number of experts of the unrolled stream.
    bound
        The claimed sensitivity.

    Returns
    -------
    SmtLemma
        The obligation, its counterexample query and the replay.

    Raises
    ------
    ValueError
        If ``kind`` is not one of the three linear kinds.
    """
    L0, L1 = _stream("l", T, d), _stream("l'", T, d)
    L_star = real("L*")
    cons = tuple(z3.And(v >= 0, v <= 1) for M in (L0, L1) for row in M for v in row)
    cons = cons + (_neighbours(L0, L1),)
    q0 = linear_query_models(kind, L0, L_star)
    q1 = linear_query_models(kind, L1, L_star)
    k = z3.RealVal(Fraction(bound))
    variables = {str(v): v for M in (L0, L1) for row in M for v in row}
    variables["L*"] = L_star
    ob = Obligation(f"a query moves by more than {bound:g}", cons,
                    z3.Or([absolute(a - b) > k for a, b in zip(q0, q1)]), variables)

    def replay(m: dict[str, float]) -> Replay:
        A = np.array([[m[f"l[{i}][{x}]"] for x in range(d)] for i in range(T)])
        B = np.array([[m[f"l'[{i}][{x}]"] for x in range(d)] for i in range(T)])
        return _replay_streams(kind, A, B, 1.0, bound, {})

    return SmtLemma(f"{STATEMENTS[kind]} [T = {T}, d = {d}]",
                    f"query_values({kind!r}) on a symbolic {T} x {d} stream in [0, 1] and a "
                    f"neighbour differing in one round{', L* symbolic' if kind == 'alg1-em' else ''}"
                    "; linear real arithmetic", (ob,), ob, replay)


def alg5_refutation_lemma(T: int = 4, d: int = 2, bound: float = 1.0) -> SmtLemma:
    """AFKT23 Algorithm 5's queries move by at most ``bound`` on a ``T x d`` stream, every eta.

    Module docstring: ``a = e^{-eta}``, ``p = e^{-eta l}``; a model is replayed with
    ``eta = -log a``.

    Parameters
    ----------
    T, d
        Horizon and number of experts of the unrolled stream.
    bound
        The claimed sensitivity (a positive integer; the paper's assumption is 1).

    Returns
    -------
    SmtLemma
        The proof obligation, the counterexample query at ``eta = 4 log 2`` and the replay.

    Raises
    ------
    ValueError
        If ``bound`` is not a positive integer.
    """
    a = real("a")
    P0, P1 = _stream("p", T, d), _stream("p'", T, d)
    cons = (a > 0, a < 1) + tuple(z3.And(v >= a, v <= 1) for M in (P0, P1) for row in M
                                  for v in row) + (_neighbours(P0, P1),)
    k = int(bound)
    if k != bound or k < 1:
        raise ValueError(f"bound must be a positive integer, got {bound!r}")
    viol = []
    for (s0, t0), (s1, t1) in zip(potential_ratio_models(P0), potential_ratio_models(P1)):
        viol += [a ** k * s0 * t1 > t0 * s1, a ** k * s1 * t0 > t1 * s0]
    variables = {str(v): v for M in (P0, P1) for row in M for v in row}
    variables["a"] = a
    ob = Obligation(f"a query moves by more than {k}", cons, z3.Or(viol), variables)
    # The counterexample query asks for a change of more than 5k/4 at eta = 4 log 2 (a = b^4,
    # b = 1/2, so a^(5k/4) = b^(5k) is rational), so that a replayed counterexample is far from
    # rounding (with a symbolic it takes ~20 s; fixed, ~0.05 s). If it has no model, the proof
    # obligation (change > k, every eta) decides.
    b = z3.RealVal(Fraction(1, 2))
    big = []
    for (s0, t0), (s1, t1) in zip(potential_ratio_models(P0), potential_ratio_models(P1)):
        big += [b ** (5 * k) * s0 * t1 > t0 * s1, b ** (5 * k) * s1 * t0 > t1 * s0]
    refutation = Obligation(f"a query moves by more than {5 * k}/4 (eta = 4 log 2)",
                            cons + (a == b ** 4,), z3.Or(big), variables)

    def replay(m: dict[str, float]) -> Replay:
        eta = -math.log(m["a"])
        la = math.log(m["a"])

        def losses(name: str) -> np.ndarray:
            return np.array([[min(1.0, max(0.0, math.log(m[f"{name}[{i}][{x}]"]) / la))
                              for x in range(d)] for i in range(T)])
        return _replay_streams("alg5-svt", losses("p"), losses("p'"), eta, float(k), {})

    return SmtLemma(f"{STATEMENTS['alg5-svt']} [T = {T}, d = {d}, every eta > 0]",
                    f"a = e^(-eta) in (0, 1) symbolic, p_i(x) = e^(-eta l_i(x)) in [a, 1] on a "
                    f"{T} x {d} stream and a neighbour differing in one round; query change > {k} "
                    f"as a^{k} phi(t*) phi'(t) > phi(t) phi'(t*) (either order); counterexample query: "
                    f"change > {5 * k}/4 at eta = 4 log 2", (ob,), refutation, replay)


ALG5_NEEDED = ("Algorithm 5's sparse-vector queries (1/eta)(log phi(t*) - log phi(t)) are "
               "2-sensitive (the bound the accountant uses)")


def alg5_bound_lemma(d: int = 2, bound: int = 2) -> SmtLemma:
    """AFKT23 Algorithm 5's queries move by at most ``bound``, every horizon, ``d`` experts.

    The over-approximation of the module docstring: weights at ``t*``, decay to ``t`` and the
    replaced round's factor are free, so one proof covers every ``T``.

    Parameters
    ----------
    d
        Number of experts.
    bound
        The sensitivity to prove (a positive integer; 2 is the accountant's).

    Returns
    -------
    SmtLemma
        Two obligations: the replaced round before/at ``t*`` and in ``(t*, t]``.
    """
    a = real("a")
    w = [real(f"w{x}") for x in range(d)]
    r = [real(f"r{x}") for x in range(d)]
    m = [real(f"m{x}") for x in range(d)]
    cons = ((a > 0, a < 1) + tuple(v > 0 for v in w) + tuple(z3.And(v > 0, v <= 1) for v in r)
            + tuple(z3.And(v >= a, a * v <= 1) for v in m))
    ak = a ** bound

    def moved(s0, t0, s1, t1):
        return z3.Or(ak * s0 * t1 > t0 * s1, ak * s1 * t0 > t1 * s0)

    S = sum(w)
    Sr = sum(wi * ri for wi, ri in zip(w, r))
    Sm = sum(wi * mi for wi, mi in zip(w, m))
    Smr = sum(wi * mi * ri for wi, mi, ri in zip(w, m, r))
    variables = {str(v): v for v in (a, *w, *r, *m)}
    before = Obligation(f"replacing a round <= t* moves a query by more than {bound}", cons,
                        moved(S, Sr, Sm, Smr), variables)
    inside = Obligation(f"replacing a round in (t*, t] moves a query by more than {bound}", cons,
                        moved(S, Sr, S, Smr), variables)
    return SmtLemma(f"{ALG5_NEEDED} [d = {d}, every T, every eta > 0]",
                    f"over-approximation, d = {d}: w_x > 0 (weights at t*), r_x in (0, 1] "
                    f"(decay from t* to t), m_x in [a, 1/a] (the replaced round's factor), a = "
                    f"e^(-eta) in (0, 1); the replaced round before/at t* or in (t*, t]",
                    (before, inside), dimension=d)


def all_lemmas() -> list[SmtLemma]:
    """Every AFKT23 encoding, the thorough ones included (benchmarks, ``make smt``)."""
    return lemmas_for_kinds(("alg1-svt", "alg1-em", "alg2-count", "alg5-svt"), thorough=True)


def lemmas_for_kinds(kinds: Sequence[str], *, thorough: bool = False) -> list[SmtLemma]:
    """The SMT encodings of the given query kinds (the ``lemma_kinds`` of a claim declaration).

    Parameters
    ----------
    kinds
        Query kinds, each one of :data:`~dpaudit.papers.afkt23.lemmas.QUERY_KINDS`.
    thorough
        Add the longer encodings (Algorithm 5 at ``d = 3``).

    Returns
    -------
    list of SmtLemma
        Fixed-size and every-horizon encodings per kind.
    """
    out: list[SmtLemma] = []
    for kind in kinds:
        if kind == "alg5-svt":
            out += [alg5_refutation_lemma(), alg5_bound_lemma(2)]
            if thorough:
                out.append(alg5_bound_lemma(3))
        else:
            out += [linear_query_lemma(kind), linear_query_any_T_lemma(kind)]
    return out


def smt_evidence(kinds: Sequence[str], ctx, outcome: LemmaOutcome) -> LemmaOutcome:
    """An AFKT23 claim's sampled lemma checks with the SMT records of its query kinds appended.

    The records are compared with the sampled checks by
    :func:`~dpaudit.formal.smt.claim_smt_evidence`.

    Parameters
    ----------
    kinds
        The claim's query kinds.
    ctx
        The claim driver's audit context (its budget's name selects the thorough encodings).
    outcome
        The sampled checks of the claim.

    Returns
    -------
    LemmaOutcome
        ``outcome`` with the SMT records appended.
    """
    return claim_smt_evidence(outcome, ctx.budget.name,
                              lambda thorough: lemmas_for_kinds(kinds, thorough=thorough))
