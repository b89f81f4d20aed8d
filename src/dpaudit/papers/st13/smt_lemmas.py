"""SMT encodings of the ST13 sensitivity lemmas, d = 1.

Smith & Thakurta, *(Nearly) Optimal Algorithms for Private Online Learning in Full-information and
Bandit Settings*, NeurIPS 2013, App. B.1 (proof of Theorem 3). Counterexamples replay through
:class:`~dpaudit.learners.pftal.PFTAL` / :class:`~dpaudit.learners.pftal.PFTALConvex` and the tree
functions of :mod:`dpaudit.mechanisms.tree_aggregation`; :func:`smt_evidence` returns the
records a claim audit appends. Encoded: App. B.1's per-node step for PFTAL (Algorithm 1) and
PFTAL-convex (App. C, both tree-bound readings), with the needed ``2 mu``; the clipping bound; the
leaf count over bit-vectors for ``T <= 2^20``. Not encoded: the bandit learners' node inputs (the
replay needs the learner's secret direction), the node-noise law (KS tests) and post-processing.

Each encoding, and why the rest is not encoded: docs/formal-notes.md#st13-smt-encodings
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import z3

from dpaudit.formal.smt import (Obligation, Replay, SmtLemma, absolute,
                                     paper_smt_evidence, clip, quadratic_loss_1d, real,
                                     tree_node_count_bv)
from dpaudit.learners.domains import Ball
from dpaudit.learners.losses import LinearLoss, SquaredLoss
from dpaudit.learners.pftal import PFTAL, PFTALConvex, pftal_tree_bound
from dpaudit.mechanisms.st13_tree_aggregation import st13_tree_levels
from dpaudit.mechanisms.tree_aggregation import nodes_containing
from dpaudit.papers.st13.claims import NODE_RATIO_LEMMA

__all__ = ["pftal_node_lemmas", "pftal_convex_node_lemmas", "input_bound_lemma",
           "leaf_count_lemma", "count_nodes_containing_bv", "all_lemmas", "fast_lemmas",
           "lemmas_for_claim", "smt_evidence"]

NODE_STATEMENT = NODE_RATIO_LEMMA.statement


def _tree_input_replay(learners: list, losses: list, claimed: float, details: dict) -> Replay:
    """Each learner (started at w_t) learns its loss; compare the first recorded tree input."""
    ins = []
    for learner, loss in zip(learners, losses):
        learner.reset(1, np.random.default_rng(0))
        learner.learn(loss)
        ins.append(learner.tree.inputs[0, 0])
    observed = float(np.linalg.norm(ins[0] - ins[1]))
    return Replay(observed, claimed, {**details, "inputs": [i.tolist() for i in ins],
                                      "tree_bound": learners[0].tree_bound})


def pftal_node_lemmas(L: float = 1.0, H: float = 0.05, R: float = 1.0) -> list[SmtLemma]:
    """ST13 App. B.1's node step for PFTAL (Algorithm 1): printed ``mu`` and needed ``2 mu``.

    The tree bound is ``mu = L`` (the printed reading); ``d = 1``.

    Parameters
    ----------
    L
        Lipschitz bound of the losses.
    H
        Strong convexity of the losses.
    R
        Radius of the domain.

    Returns
    -------
    list of SmtLemma
        The printed bound, then the needed one.
    """
    mu = pftal_tree_bound("lipschitz", L, H, Ball(1, R))
    Lz, Hz, Rz, mz = (z3.RealVal(Fraction(v)) for v in (L, H, R, mu))
    w, rest = real("w"), real("rest")
    f0 = quadratic_loss_1d("f", lipschitz=Lz, strong_convexity=Hz, radius=Rz)
    f1 = quadratic_loss_1d("f'", lipschitz=Lz, strong_convexity=Hz, radius=Rz)
    node0 = rest + clip(f0.grad(w), -mz, mz)
    node1 = rest + clip(f1.grad(w), -mz, mz)
    cons = f0.constraints + f1.constraints + (w >= -Rz, w <= Rz)
    variables = {"w": w, **f0.variables(), **f1.variables()}
    enc = (f"PFTAL tree input clip(grad f_t(w_t), mu), d = 1, C = [-R, R], squared loss + ridge "
           f">= H with (|y| + |v| R)|v| + ridge R <= L; L = {L:g}, H = {H:g}, R = {R:g}, "
           f"mu = {mu:g} (reading 'lipschitz'); node = other inputs + z_t")

    def replay_for(claimed: float):
        def replay(m: dict[str, float]) -> Replay:
            fs = [f0.realise(m), f1.realise(m)]
            losses = [SquaredLoss(np.array([f["v"]]), f["y"], f["ridge"]) for f in fs]
            learners = [PFTAL(Ball(1, R), H, L, 1.0, 2, initial_point=np.array([m["w"]]),
                              record=True) for _ in range(2)]
            return _tree_input_replay(learners, losses, claimed,
                                      {"learner": f"PFTAL(Ball(1, {R:g}), H={H:g}, L={L:g})",
                                       "w_t": m["w"], "replaced": fs[0], "replacement": fs[1]})
        return replay

    out = []
    for factor, label in ((1, "mu"), (2, "2 mu")):
        ob = Obligation(f"a node containing leaf t moves by more than {label}", cons,
                        absolute(node0 - node1) > factor * mz, variables)
        stmt = (NODE_STATEMENT if factor == 1 else
                "PFTAL node change, needed bound: every node containing leaf t moves by at most "
                "2 mu")
        out.append(SmtLemma(f"{stmt} [PFTAL, d = 1]", enc, (ob,), ob, replay_for(factor * mu)))
    return out


def pftal_convex_node_lemmas(L: float = 1.0, H: float = 0.5, R: float = 0.05,
                             reading: str = "lipschitz+H|C|") -> list[SmtLemma]:
    """The node step of ST13's PFTAL-convex (App. C): printed ``mu`` and needed ``2 mu``.

    Input ``clip(g_t + H w_t, mu)``, linear losses ``|g_t| <= L``, ``mu`` from ``reading``.

    Parameters
    ----------
    L
        Lipschitz bound of the linear losses.
    H
        The learner's regularisation.
    R
        Radius of the domain.
    reading
        The tree-bound reading: ``"lipschitz+H|C|"`` or ``"lipschitz"``.

    Returns
    -------
    list of SmtLemma
        The printed bound, then the needed one.
    """
    mu = pftal_tree_bound(reading, L, H, Ball(1, R))
    Lz, Hz, Rz, mz = (z3.RealVal(Fraction(v)) for v in (L, H, R, mu))
    w, g0, g1, rest = real("w"), real("g"), real("g'"), real("rest")
    cons = (w >= -Rz, w <= Rz, absolute(g0) <= Lz, absolute(g1) <= Lz)
    node0 = rest + clip(g0 + Hz * w, -mz, mz)
    node1 = rest + clip(g1 + Hz * w, -mz, mz)
    variables = {"w": w, "g": g0, "g'": g1}
    enc = (f"PFTAL-convex tree input clip(g_t + H w_t, mu), d = 1, C = [-R, R], |g_t| <= L; "
           f"L = {L:g}, H = {H:g}, R = {R:g}, mu = {mu:g} (reading '{reading}')")

    def replay_for(claimed: float):
        def replay(m: dict[str, float]) -> Replay:
            learners = [PFTALConvex(Ball(1, R), L, H, 1.0, 2, tree_bound=reading,
                                    initial_point=np.array([m["w"]]), record=True)
                        for _ in range(2)]
            losses = [LinearLoss(np.array([m["g"]])), LinearLoss(np.array([m["g'"]]))]
            return _tree_input_replay(learners, losses, claimed,
                                      {"learner": f"PFTALConvex(Ball(1, {R:g}), L={L:g}, "
                                                  f"H={H:g}, tree_bound={reading!r})",
                                       "w_t": m["w"], "g": m["g"], "g'": m["g'"]})
        return replay

    out = []
    for factor, label in ((1, "mu"), (2, "2 mu")):
        ob = Obligation(f"a node containing leaf t moves by more than {label}", cons,
                        absolute(node0 - node1) > factor * mz, variables)
        stmt = (NODE_STATEMENT if factor == 1 else
                "PFTAL-convex node change, needed bound: every node containing leaf t moves by at "
                "most 2 mu")
        out.append(SmtLemma(f"{stmt} [PFTAL-convex, tree_bound = {reading}, d = 1]", enc, (ob,),
                            ob, replay_for(factor * mu)))
    return out


#: The statements of the sampled clipping checks (:mod:`dpaudit.papers.st13.lemmas`) of PFTAL and
#: of the tree-aggregation claim: the SMT record of the same fact carries the claim's wording so
#: that the report pairs the two.
INPUT_BOUND_STATEMENTS = {
    "pftal": "every input the tree receives has l2 norm <= the bound passed to it (clipping)",
    "tree": "every input the tree receives has l2 norm <= mu (clipping)",
}


def input_bound_lemma(L: float = 1.0, H: float = 0.05, R: float = 1.0,
                      statement: str = INPUT_BOUND_STATEMENTS["pftal"]) -> SmtLemma:
    """Every input passed to the tree has norm <= mu (the clipping of ST13 Algorithm 2), ``d = 1``.

    Parameters
    ----------
    L, H, R
        Lipschitz bound, strong convexity and domain radius that set ``mu``.
    statement
        The lemma as the claim states it.

    Returns
    -------
    SmtLemma
        One obligation: a clipped input above ``mu``.
    """
    mu = pftal_tree_bound("lipschitz", L, H, Ball(1, R))
    mz = z3.RealVal(Fraction(mu))
    z = real("z")
    ob = Obligation("a clipped input exceeds mu", (), absolute(clip(z, -mz, mz)) > mz, {"z": z})
    return SmtLemma(f"{statement} [clip(z, mu), d = 1]",
                    f"clip(z, -mu, mu), z any real, mu = {mu:g}", (ob,))


_BITS = 32
_MAX_LOG2_T = 20


def count_nodes_containing_bv(leaf: z3.BitVecRef, T: z3.BitVecRef,
                              levels: int = _MAX_LOG2_T + 1) -> z3.BitVecRef:
    """The number of ST13 tree nodes containing a leaf, over 32-bit vectors.

    :func:`dpaudit.formal.smt.tree_node_count_bv` (Algorithm 2's tree is the standard one).

    Parameters
    ----------
    leaf, T
        The leaf (1-based) and the horizon.
    levels
        Tree levels counted (``j = 0 .. levels - 1``).
    """
    return tree_node_count_bv(leaf, T, levels, _BITS)


def leaf_count_lemma() -> SmtLemma:
    """Every leaf lies in at most ceil(log2 T) + 1 used nodes, 1 <= T <= 2^20."""
    leaf, T = z3.BitVec("leaf", _BITS), z3.BitVec("T", _BITS)
    one, zero = z3.BitVecVal(1, _BITS), z3.BitVecVal(0, _BITS)
    levels = one  # ceil(log2 T) + 1 = bit length of T - 1, plus 1
    for h in range(_MAX_LOG2_T + 1):
        levels = levels + z3.If(z3.ULE(one << h, T - one), one, zero)
    rng = (z3.ULE(1, T), z3.ULE(T, 1 << _MAX_LOG2_T), z3.ULE(1, leaf), z3.ULE(leaf, T))
    ob = Obligation("some leaf lies in more than ceil(log2 T) + 1 used nodes", rng,
                    z3.UGT(count_nodes_containing_bv(leaf, T), levels), {"leaf": leaf, "T": T})

    def replay(m: dict[str, float]) -> Replay:
        lf, T_ = int(m["leaf"]), int(m["T"])
        return Replay(float(len(nodes_containing(lf, T_))), float(st13_tree_levels(T_)),
                      {"leaf": lf, "T": T_})

    return SmtLemma("changing one entry affects only ceil(log2 T) + 1 terms (nodes) of the "
                    "product (11)",
                    f"nodes_containing over {_BITS}-bit vectors (levels 0..{_MAX_LOG2_T}), "
                    f"1 <= T <= 2^{_MAX_LOG2_T}, 1 <= leaf <= T", (ob,), ob, replay)


def fast_lemmas() -> list[SmtLemma]:
    """The ST13 SMT encodings that run at every budget (fixed constants)."""
    return (pftal_node_lemmas() + pftal_convex_node_lemmas()
            + pftal_convex_node_lemmas(reading="lipschitz")[:1] + [input_bound_lemma(),
                                                                   leaf_count_lemma()])


def all_lemmas() -> list[SmtLemma]:
    """Every ST13 SMT encoding, the thorough ones included (benchmarks, ``make smt``)."""
    return fast_lemmas() + pftal_node_lemmas(1.0, 0.5, 0.5)


def lemmas_for_claim(claim_id: str, *, thorough: bool = False) -> list[SmtLemma]:
    """The SMT encodings that concern one ST13 claim.

    Parameters
    ----------
    claim_id
        An ST13 claim id (``"st13/pftal"``, ...).
    thorough
        Add the longer encodings.

    Returns
    -------
    list of SmtLemma
        The claim's encodings.

    Raises
    ------
    ValueError
        If ``claim_id`` is not an ST13 claim id.
    """
    table = {
        "st13/tree-aggregation": lambda: [input_bound_lemma(statement=INPUT_BOUND_STATEMENTS[
            "tree"]), leaf_count_lemma()],
        "st13/pftal": lambda: pftal_node_lemmas() + [input_bound_lemma(), leaf_count_lemma()]
        + (pftal_node_lemmas(1.0, 0.5, 0.5) if thorough else []),
        "st13/pftal-convex": lambda: pftal_convex_node_lemmas()
        + pftal_convex_node_lemmas(reading="lipschitz") + [leaf_count_lemma()],
        "st13/bandit-ftal": lambda: [leaf_count_lemma()],
        "st13/bandit-ftal-convex": lambda: [leaf_count_lemma()],
    }
    if claim_id not in table:
        raise ValueError(f"unknown ST13 claim {claim_id!r}")
    return table[claim_id]()


#: The claim audits' lemma hook: ``smt_evidence(claim_id, ctx, outcome)``.
smt_evidence = paper_smt_evidence(lemmas_for_claim, "ST13")
