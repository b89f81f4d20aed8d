"""SMT encodings of the pfcoco (window-DP COCO) lemmas.

Projection-free window-DP COCO (Web Intelligence 2020, ``pfcoco-window-tree.txt``), Sec. III: the
surrogate gradient bound ``L + mu D`` of Theorems 1, 2, 5 (refuted) and the needed ``2L - mu D``
(proved, in d = 1 and, by a Gram abstraction, in every d), the learners' clipped gap ``2L``, the
window node count of Lemmas 1 and 3 and the mini-example's standard-tree count (refuted).
Counterexamples replay through the code the sampled checks of :mod:`dpaudit.papers.pfcoco.lemmas`
check; :func:`smt_evidence` appends the records to a claim audit's lemma outcome. What each
encoding covers, and what is not encoded with the reason, is in ``README.md`` beside this file
(Evidence, "SMT encodings").
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import z3

from dpaudit.formal.smt import (Obligation, Replay, SmtLemma, real,
                                     paper_smt_evidence, tree_node_count_bv)
from dpaudit.mechanisms.tree_aggregation import nodes_containing
from dpaudit.mechanisms.window_tree import window_nodes_containing
from dpaudit.papers.pfcoco.claims import (ACCOUNTANT_SENSITIVITY_STATEMENT, NODE_COUNT_LEMMA,
                                          SENSITIVITY_LEMMA, STANDARD_TREE_COUNT_LEMMA)
from dpaudit.papers.pfcoco.lemmas import class_member_gap

__all__ = ["gradient_gap_model", "sensitivity_lemmas", "window_count_bv", "window_count_lemma",
           "standard_tree_count_lemma", "all_lemmas", "lemmas_for_claim", "smt_evidence",
           "clipped_gap_lemma", "needed_gap_every_d_lemma", "CLIPPED_STATEMENT"]

NEEDED_STATEMENT = ("surrogate gradient bound, needed value: replacing one L-Lipschitz, "
                    "mu-strongly convex loss moves grad f_t(x~_t) by at most 2L - mu D in l2")


def _val(x: float | z3.ArithRef) -> z3.ArithRef:
    return x if isinstance(x, z3.ExprRef) else z3.RealVal(Fraction(x))


def gradient_gap_model(d: int, L, mu, R) -> tuple[dict[str, z3.ArithRef], tuple, z3.ArithRef]:
    """The pfcoco loss class in z3 and the squared gradient gap of two members.

    The symbolic class of :func:`~dpaudit.papers.pfcoco.lemmas.class_member_gap` in dimension
    ``d``: (variables, class constraints, squared l2 gradient gap at the common point x).

    Losses ``k = 0, 1``: curvature ``mu_k`` with ``mu <= mu_k``, ``mu_k R <= L``; linear part
    ``h_k`` with ``||h_k||^2 <= (L - mu_k R)^2``; point ``||x||^2 <= R^2``. Gradient ``h_k + mu_k
    x`` (the centre c cancels: ``g + mu_k (x - c) = h + mu_k x``).

    Parameters
    ----------
    d
        Dimension.
    L, mu, R
        Lipschitz bound, strong convexity and domain radius: numbers or z3 reals.

    Returns
    -------
    tuple
        ``(variables, constraints, squared gradient gap)``.
    """
    L, mu, R = _val(L), _val(mu), _val(R)
    v: dict[str, z3.ArithRef] = {}
    cons = []
    x = [real(f"x{i}") for i in range(d)]
    cons.append(sum(xi * xi for xi in x) <= R * R)
    grads = []
    for k in (0, 1):
        mk = real(f"mu{k}")
        h = [real(f"h{k}_{i}") for i in range(d)]
        cons += [mk >= mu, mk * R <= L, sum(hi * hi for hi in h) <= (L - mk * R) ** 2]
        v[f"mu{k}"] = mk
        v.update({f"h{k}_{i}": hi for i, hi in enumerate(h)})
        grads.append([hi + mk * xi for hi, xi in zip(h, x)])
    v.update({f"x{i}": xi for i, xi in enumerate(x)})
    gap2 = sum((a - b) ** 2 for a, b in zip(*grads))
    return v, tuple(cons), gap2


def _gap_replay(d: int, L: float, mu: float, R: float, claimed: float):
    def replay(m: dict[str, float]) -> Replay:
        h = [np.array([m[f"h{k}_{i}"] for i in range(d)]) for k in (0, 1)]
        extra = [m[f"mu{k}"] / mu - 1.0 for k in (0, 1)]
        x = np.array([m[f"x{i}"] for i in range(d)])
        z = np.zeros(d)
        ex = class_member_gap(R, L, mu, d, h[0], h[1], extra[0], extra[1], z, z, x)
        return Replay(ex["observed"], claimed, {"pair": ex, "code": "pfcoco.lemmas."
                                                "class_member_gap"})
    return replay


def sensitivity_lemmas(L: float = 1.0, mu: float = 0.1, R: float = 1.0, d: int = 1
                       ) -> list[SmtLemma]:
    """The pfcoco surrogate gradient bound at fixed constants, printed and needed.

    Printed ``L + mu D`` and needed ``2L - mu D`` (``D = 2R``), each with a refutation query
    replayed through :func:`~dpaudit.papers.pfcoco.lemmas.class_member_gap`.

    Parameters
    ----------
    L
        Lipschitz bound of the class.
    mu
        Strong convexity of the class.
    R
        Radius of the domain.
    d
        Dimension.

    Returns
    -------
    list of SmtLemma
        The printed bound, then the needed one.
    """
    D = 2 * R
    v, cons, gap2 = gradient_gap_model(d, L, mu, R)
    enc = (f"pfcoco class f(x) = <g, x> + mu'/2 ||x - c||^2, mu' >= mu, ||g - mu' c|| + mu' R "
           f"<= L, x and c in the ball of radius R; gradient gap squared (no roots), d = {d}; "
           f"L = {L:g}, mu = {mu:g}, R = {R:g} (D = {D:g})")
    out = []
    for bound, stmt, label in ((L + mu * D, SENSITIVITY_LEMMA.statement, "L + mu D"),
                               (2 * L - mu * D, NEEDED_STATEMENT, "2L - mu D")):
        ob = Obligation(f"two class members' gradients differ by more than {label}", cons,
                        gap2 > _val(bound) ** 2, v)
        refutation = ob
        if 2 * L - mu * D > bound:  # the bound fails: ask for the class's worst gap 2L - mu D
            Lq, mq, Rq = Fraction(L), Fraction(mu), Fraction(R)  # exact, not the rounded float
            refutation = Obligation("two class members' gradients differ by 2L - mu D", cons,
                                    gap2 >= z3.RealVal(2 * Lq - 2 * mq * Rq) ** 2, v)
        out.append(SmtLemma(f"{stmt} [d = {d}, L = {L:g}, mu = {mu:g}, D = {D:g}]", enc, (ob,),
                            refutation, _gap_replay(d, L, mu, R, bound), dimension=d))
    return out


def symbolic_needed_lemma() -> SmtLemma:
    """``2L - mu D`` for every ``L, mu, R > 0`` with ``mu R <= L`` (d = 1; symbolic constants)."""
    L, mu, R = real("L"), real("mu"), real("R")
    v, cons, gap2 = gradient_gap_model(1, L, mu, R)
    cons = cons + (L > 0, mu > 0, R > 0, mu * R <= L)
    ob = Obligation("two class members' gradients differ by more than 2L - mu D", cons,
                    gap2 > (2 * L - 2 * mu * R) ** 2, {**v, "L": L, "mu": mu, "R": R})
    return SmtLemma(f"{NEEDED_STATEMENT} [d = 1, every L, mu, D]",
                    "pfcoco class as in sensitivity_lemmas, d = 1, L, mu, R symbolic (> 0, "
                    "mu R <= L)", (ob,))


# ------------------------------------------------------------------------------------------
# Every dimension: Gram (Cauchy-Schwarz) abstraction
# ------------------------------------------------------------------------------------------

#: What the learners' accountant rests on (:data:`~dpaudit.papers.pfcoco.claims.ACCOUNTANT_BASIS`).
CLIPPED_STATEMENT = ACCOUNTANT_SENSITIVITY_STATEMENT


def clipped_gap_lemma() -> SmtLemma:
    """``||clip_L(g) - clip_L(g')|| <= 2L`` for every dimension d and every L > 0.

    Every d at once through the Gram abstraction: only the squared norms ``a = ||g||^2``,
    ``b = ||g'||^2`` and the inner product ``p = <g, g'>`` enter, constrained by
    ``p^2 <= a b`` (Cauchy-Schwarz, true in every R^d), so any counterexample in any dimension
    would be a model of the encoding (sound for every d; the encoding is the triangle inequality's
    only ingredient). ``clip_L(v) = lambda v`` with ``lambda in [0, 1]`` and
    ``lambda^2 ||v||^2 = min(||v||^2, L^2)``. The losses are arbitrary (no class assumption):
    the bound comes from the clipping in ``WDPCOCOP``/``WDPCOCOL`` (``clip_l2(loss.grad(x), L)``).
    """
    L, a, b, p, la, lb = (real(n) for n in ("L", "a", "b", "p", "lam0", "lam1"))
    cons = (L > 0, a >= 0, b >= 0, p * p <= a * b,
            la >= 0, la <= 1, lb >= 0, lb <= 1,
            la * la * a == z3.If(a <= L * L, a, L * L),
            lb * lb * b == z3.If(b <= L * L, b, L * L))
    # ||lam0 g - lam1 g'||^2 = lam0^2 a + lam1^2 b - 2 lam0 lam1 p
    gap2 = la * la * a + lb * lb * b - 2 * la * lb * p
    ob = Obligation("two clipped gradients differ by more than 2L", cons, gap2 > 4 * L * L,
                    {"L": L, "a": a, "b": b, "p": p, "lam0": la, "lam1": lb})
    return SmtLemma(f"{CLIPPED_STATEMENT} [every d, every L]",
                    "clip_L of two arbitrary vectors of R^d, Gram abstraction (squared norms, "
                    "inner product with p^2 <= a b: sound for every d), L symbolic > 0", (ob,))


def needed_gap_every_d_lemma() -> SmtLemma:
    """``2L - mu D`` over the sampled class for every d and every ``L, mu, R`` (Gram abstraction).

    The gradient gap is ``u + v + w`` with ``u = h_0``, ``v = -h_1``, ``w = (mu_0 - mu_1) x``;
    the encoding keeps the norms ``n_u, n_v, n_w >= 0`` (``n_u <= L - mu_0 R``,
    ``n_v <= L - mu_1 R``, ``n_w = |mu_0 - mu_1| ||x||``, ``||x|| <= R``) and the pairwise inner
    products with ``|<.,.>| <= product of the norms`` (Cauchy-Schwarz, every d).
    """
    L, mu, R = real("L"), real("mu"), real("R")
    m0, m1, nx = real("mu0"), real("mu1"), real("nx")
    nu, nv, nw = real("nu"), real("nv"), real("nw")
    puv, puw, pvw = real("puv"), real("puw"), real("pvw")
    d01 = m0 - m1
    cons = (L > 0, mu > 0, R > 0, mu * R <= L,
            m0 >= mu, m1 >= mu, m0 * R <= L, m1 * R <= L,
            nx >= 0, nx <= R, nu >= 0, nv >= 0, nu <= L - m0 * R, nv <= L - m1 * R,
            nw == z3.If(d01 >= 0, d01, -d01) * nx,
            puv * puv <= nu * nu * nv * nv, puw * puw <= nu * nu * nw * nw,
            pvw * pvw <= nv * nv * nw * nw)
    gap2 = nu * nu + nv * nv + nw * nw + 2 * (puv + puw + pvw)
    ob = Obligation("two class members' gradients differ by more than 2L - mu D", cons,
                    gap2 > (2 * L - 2 * mu * R) ** 2,
                    {"L": L, "mu": mu, "R": R, "mu0": m0, "mu1": m1, "nx": nx})
    return SmtLemma(f"{NEEDED_STATEMENT} [every d, every L, mu, D]",
                    "pfcoco class as in sensitivity_lemmas, gradient gap h_0 - h_1 + (mu_0 - "
                    "mu_1) x as a sum of three vectors with norms and pairwise inner products "
                    "(Cauchy-Schwarz: sound for every d), L, mu, R symbolic (> 0, mu R <= L)",
                    (ob,))


# ------------------------------------------------------------------------------------------
# Node counts over bit-vectors
# ------------------------------------------------------------------------------------------

_BITS = 32
_MAX_LOG2_W = 12
_MAX_LOG2_T = 20


def _bv(x: int) -> z3.BitVecRef:
    return z3.BitVecVal(x, _BITS)


def _bit_length(x: z3.BitVecRef, max_bits: int) -> z3.BitVecRef:
    """``x.bit_length()`` for ``0 <= x < 2^max_bits``."""
    out = _bv(0)
    for h in range(max_bits):
        out = out + z3.If(z3.UGE(x, _bv(1 << h)), _bv(1), _bv(0))
    return out


def _umin(a, b):
    return z3.If(z3.ULE(a, b), a, b)


def window_count_bv(leaf, W, T, layout: str = "exact") -> z3.BitVecRef:
    """The number of window-tree nodes containing a protected leaf, over bit-vectors.

    ``len(window_nodes_containing(leaf, W, T, layout))`` over bit-vectors (no overflow for
    ``W, T <= 2^12``): level ``j`` (``2^j <= w``) has node index ``m = ((leaf - 1) >> j) + 1``,
    leaves ``lo = (m - 1) 2^j + 1 .. hi = m 2^j``; a left child (m odd) is used for t in
    ``[hi, min(lo + w - 1, hi + 2^j - 1, T)]``, a right child for ``[max(hi, lo - 2^j + w),
    min(lo + w - 1, T)]``; it counts if that meets ``[leaf, min(leaf + W - 1, T)]``.

    Parameters
    ----------
    leaf
        The leaf (1-based) as a bit-vector.
    W
        The window length as a bit-vector.
    T
        The horizon as a bit-vector.
    layout
        ``"exact"`` (nodes laid out for ``W``) or ``"power_of_two"`` (for ``W`` rounded up to a
        power of two).

    Returns
    -------
    z3.BitVecRef
        The number of window-tree nodes containing ``leaf`` while it is protected.
    """
    one = _bv(1)
    w = W if layout == "exact" else one << _bit_length(W - one, _MAX_LOG2_W + 1)
    protected_last = _umin(leaf + W - one, T)
    total = _bv(0)
    for j in range(_MAX_LOG2_W + 1):
        jj, size = _bv(j), _bv(1 << j)
        m = z3.LShR(leaf - one, jj) + one
        lo, hi = ((m - one) << jj) + one, m << jj
        odd = (m & one) == one
        # right child: max(hi, lo - size + w), computed without unsigned underflow
        start = z3.If(odd, hi, z3.If(z3.UGT(lo + w, hi + size), lo + w - size, hi))
        stop = _umin(z3.If(odd, _umin(lo + w - one, hi + size - one), lo + w - one), T)
        used = z3.And(z3.ULE(size, w), z3.ULE(start, stop), z3.ULE(start, protected_last),
                      z3.UGE(stop, leaf))
        total = total + z3.If(used, one, _bv(0))
    return total


def window_count_lemma(layout: str = "exact") -> SmtLemma:
    """The window tree's node count of Lemmas 1/3: a leaf in at most ``ceil(log2 W) + 1`` nodes.

    For ``1 <= W <= 2^12`` and ``1 <= leaf <= T <= 2^12``, over bit-vectors.

    Parameters
    ----------
    layout
        ``"exact"`` or ``"power_of_two"``.

    Returns
    -------
    SmtLemma
        The obligation and its replay through ``window_nodes_containing``.
    """
    leaf, W, T = (z3.BitVec(n, _BITS) for n in ("leaf", "W", "T"))
    one = _bv(1)
    bound = _bit_length(W - one, _MAX_LOG2_W + 1) + one  # ceil(log2 W) + 1
    rng = (z3.ULE(one, W), z3.ULE(W, _bv(1 << _MAX_LOG2_W)), z3.ULE(one, T),
           z3.ULE(T, _bv(1 << _MAX_LOG2_W)), z3.ULE(one, leaf), z3.ULE(leaf, T))
    ob = Obligation("a protected leaf lies in more than ceil(log2 W) + 1 noisy nodes", rng,
                    z3.UGT(window_count_bv(leaf, W, T, layout), bound),
                    {"leaf": leaf, "W": W, "T": T}, nlsat_first=False)

    def replay(m: dict[str, float]) -> Replay:
        lf, W_, T_ = int(m["leaf"]), int(m["W"]), int(m["T"])
        return Replay(float(len(window_nodes_containing(lf, W_, T_, layout))),
                      float((W_ - 1).bit_length() + 1), {"leaf": lf, "W": W_, "T": T_,
                                                         "layout": layout})

    return SmtLemma(f"{NODE_COUNT_LEMMA.statement} [layout = {layout}, W, T <= 2^{_MAX_LOG2_W}]",
                    f"window_nodes_containing over {_BITS}-bit vectors (levels 0.."
                    f"{_MAX_LOG2_W}), layout {layout!r}, 1 <= W <= 2^{_MAX_LOG2_W}, 1 <= leaf "
                    f"<= T <= 2^{_MAX_LOG2_W}", (ob,), ob, replay)


def standard_tree_count_bv(leaf, T) -> z3.BitVecRef:
    """``len(nodes_containing(leaf, T))`` of the standard tree over bit-vectors, levels 0..20.

    :func:`dpaudit.formal.smt.tree_node_count_bv` on 32-bit vectors.

    Parameters
    ----------
    leaf, T
        The leaf (1-based) and the horizon.
    """
    return tree_node_count_bv(leaf, T, _MAX_LOG2_T + 1, _BITS)


def standard_tree_count_lemma() -> SmtLemma:
    """The mini-example's "at most log2 T nodes": ``2^count > T`` iff ``count > log2 T``."""
    leaf, T = z3.BitVec("leaf", _BITS), z3.BitVec("T", _BITS)
    rng = (z3.ULE(2, T), z3.ULE(T, _bv(1 << _MAX_LOG2_T)), z3.ULE(1, leaf), z3.ULE(leaf, T))
    ob = Obligation("an instance lies in more than log2 T nodes", rng,
                    z3.UGT(_bv(1) << standard_tree_count_bv(leaf, T), T),
                    {"leaf": leaf, "T": T}, nlsat_first=False)

    def replay(m: dict[str, float]) -> Replay:
        lf, T_ = int(m["leaf"]), int(m["T"])
        return Replay(float(len(nodes_containing(lf, T_))), float(np.log2(T_)),
                      {"leaf": lf, "T": T_})

    return SmtLemma(f"{STANDARD_TREE_COUNT_LEMMA.statement} [T <= 2^{_MAX_LOG2_T}]",
                    f"nodes_containing over {_BITS}-bit vectors, 2 <= T <= 2^{_MAX_LOG2_T}, "
                    "count > log2 T as 2^count > T", (ob,), ob, replay)


def all_lemmas() -> list[SmtLemma]:
    """Every pfcoco encoding the audits use (benchmarks, ``make smt``)."""
    return ([window_count_lemma("exact"), window_count_lemma("power_of_two")]
            + sensitivity_lemmas() + [symbolic_needed_lemma(), needed_gap_every_d_lemma(),
                                      clipped_gap_lemma(), standard_tree_count_lemma()])


def lemmas_for_claim(claim_id: str, *, thorough: bool = False) -> list[SmtLemma]:
    """The SMT encodings that concern one pfcoco claim.

    Parameters
    ----------
    claim_id
        A pfcoco claim id (``"pfcoco/window-tree-..."``, ``"pfcoco/wdp-..."``,
        ``"pfcoco/standard-tree"``).
    thorough
        Accepted for the shared protocol; pfcoco has no thorough-only encoding.

    Returns
    -------
    list of SmtLemma
        The claim's encodings (empty for an id none concerns).
    """
    out: list[SmtLemma] = []
    if claim_id.startswith("pfcoco/window-tree") or claim_id.startswith("pfcoco/wdp-"):
        out += [window_count_lemma("exact"), window_count_lemma("power_of_two")]
    if claim_id.startswith("pfcoco/wdp-"):
        out += sensitivity_lemmas() + [symbolic_needed_lemma(), needed_gap_every_d_lemma(),
                                       clipped_gap_lemma()]
    if claim_id == "pfcoco/standard-tree":
        out.append(standard_tree_count_lemma())
    return out


#: The claim audits' lemma hook: ``smt_evidence(claim_id, ctx, outcome)``.
smt_evidence = paper_smt_evidence(lemmas_for_claim, "pfcoco")
