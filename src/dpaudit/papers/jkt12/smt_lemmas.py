"""SMT encodings of the JKT12 sensitivity lemmas, d = 1 (and d = 2 for tree nodes).

Jain, Kothari & Thakurta, *Differentially Private Online Learning* (COLT 2012 and arXiv
versions). Each function below returns :class:`~dpaudit.formal.smt.SmtLemma` s whose
counterexamples replay through the learners of :mod:`dpaudit.learners`; :func:`smt_evidence`
returns the :class:`~dpaudit.claims.record.LemmaCheck` records a claim audit appends. Encoded:
IGD's Lemma 4 and the PIGD accountant's bound, GIGA's Lemma 5 and its accountant's, PrivateSum's
Lemma 6, PQFTL's tree bounds (Algorithm 4 lines 7-8), the node count (Theorem 11 COLT / 9 arXiv),
POL's eq. (37) COLT / (35) arXiv, and QFTL's assumption (1). Not encoded: Lemma 1 and App. F's
per-step privacy (Gaussian CDF, outside nonlinear real arithmetic; evaluated exactly by the
auditor), and the logistic and hinge losses.

Each encoding's statement, and why the rest is not encoded: docs/formal-notes.md#jkt12-smt-encodings
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Sequence

import numpy as np
import z3

from dpaudit.formal.smt import (Obligation, QuadraticLoss, Replay,
                                     SmtLemma, absolute, clip, quadratic_loss_1d, real,
                                     paper_smt_evidence)
from dpaudit.learners.domains import Ball, Box
from dpaudit.learners.giga import GIGA, giga_burn_in
from dpaudit.learners.igd import IGD
from dpaudit.learners.losses import LossClass, SquaredLoss
from dpaudit.learners.pol import pol_alpha, pol_printed_sensitivity
from dpaudit.mechanisms.private_sum import PrivateSumTree, released_node_count
from dpaudit.papers.jkt12.claims import get_claim

__all__ = ["igd_step", "igd_step_t", "igd_segment_lemma", "giga_step", "pqftl_inputs", "pol_average", "qftl_next",
           "igd_lemmas", "giga_lemmas", "private_sum_node_lemmas", "pqftl_input_lemmas",
           "node_count_lemmas", "pol_lemmas", "qftl_assumption_lemma", "all_lemmas", "fast_lemmas",
           "lemmas_for_claim", "smt_evidence", "count_nodes_bv"]

Const = float | str  # a number, or a name: a symbolic constant (the proof covers every value)


def _const(x: Const) -> z3.ArithRef:
    return real(x) if isinstance(x, str) else z3.RealVal(Fraction(x))


def _positive(*xs: z3.ArithRef) -> list[z3.BoolRef]:
    return [x > 0 for x in xs if not z3.is_rational_value(x)]


def _fmt(x: Const) -> str:
    return x if isinstance(x, str) else f"{x:g}"


# ==============================================================================================
# IGD (Algorithm 2 line 7; COLT eq. (20), arXiv eq. (13)) and Lemma 4
# ==============================================================================================


def igd_step(x: z3.ArithRef, loss: QuadraticLoss, eta: z3.ArithRef, D: z3.ArithRef,
             extra_ridge: z3.ArithRef | int = 0) -> z3.ArithRef:
    """``argmin_{z in [-D, D]} 1/2 (z - x)^2 + eta (f(z) + extra/2 z^2)`` (IGD: eta = 1/(alpha t)).

    For ``f = 1/2 (y - v z)^2 + rho/2 z^2`` the objective is a 1-D quadratic of curvature
    ``1 + eta (v^2 + rho + extra)``: the minimiser over the interval is the unconstrained one,
    ``(x + eta v y) / (1 + eta (v^2 + rho + extra))``, clipped (what
    :func:`~dpaudit.learners.implicit_step.implicit_step` computes, by bisection, to 1e-13).
    (:func:`igd_step_t` is the same step written with the round t.)

    Parameters
    ----------
    x
        The current point ``x_t`` (z3 real).
    loss
        The round's symbolic 1-D squared loss with ridge.
    eta
        Step size (``1/(alpha t)`` in IGD).
    D
        Half-width of the domain ``[-D, D]``.
    extra_ridge
        Additional ridge (POL's ``alpha``, Algorithm 6 line 9); 0 for IGD.

    Returns
    -------
    z3.ArithRef
        ``x_{t+1}``.
    """
    return clip((x + eta * loss.b) / (1 + eta * (loss.kappa + extra_ridge)), -D, D)


def igd_step_t(x: z3.ArithRef, loss: QuadraticLoss, t: z3.ArithRef, alpha: z3.ArithRef,
               D: z3.ArithRef) -> z3.ArithRef:
    """:func:`igd_step` at round ``t`` (``eta = 1/(alpha t)``), multiplied through by ``alpha t``.

    ``clip((alpha t x + v y) / (alpha t + v^2 + rho))``: the form z3 decides fastest here.

    Parameters
    ----------
    x
        The current point ``x_t``.
    loss
        The round's symbolic 1-D squared loss with ridge.
    t
        The round (z3 real, >= 1).
    alpha
        Strong convexity (IGD's step is ``1/(alpha t)``).
    D
        Half-width of the domain ``[-D, D]``.

    Returns
    -------
    z3.ArithRef
        ``x_{t+1}``.
    """
    return clip((alpha * t * x + loss.b) / (alpha * t + loss.kappa), -D, D)


def _t_choices(t: z3.ArithRef, first: int, count: int) -> z3.BoolRef:
    """t ranges over first..first+count-1 and first + 2^k up to 2^20 (a finite disjunction:
    the refutation's round is an integer the replay can run)."""
    ks = set(range(first, first + count)) | {first + 2 ** k for k in range(21)}
    return z3.Or(*[t == k for k in sorted(ks)])


def _igd_replay(L: float, alpha: float, D: float, t: int, f0: dict[str, float],
                f1: dict[str, float], claimed: float) -> Replay:
    """IGD from x_1 = 0 on [filler]*(t-1) + [f] vs [filler]*(t-1) + [f'], filler alpha/2 z^2
    (keeps 0 fixed): |x_{t+1} - x'_{t+1}| against the claimed value."""
    dom = Box(1, -D, D)
    cls = LossClass("squared", dom, L, alpha)
    filler = SquaredLoss(np.zeros(1), 0.0, alpha)
    losses = [SquaredLoss(np.array([f["v"]]), f["y"], f["ridge"]) for f in (f0, f1)]
    rows = []
    for f in losses:
        learner = IGD(dom, alpha, np.zeros(1))
        # rows are x_1, x_2, ...: one more filler makes x_{t+1} row t
        traj = learner.run([filler] * (t - 1) + [f, filler], 1, np.random.default_rng(0))[0]
        rows.append(traj[t, 0])
    observed = abs(rows[0] - rows[1])
    return Replay(float(observed), float(claimed), {
        "learner": f"IGD(Box(1, -{D:g}, {D:g}), alpha={alpha:g}, x1=0)", "round": t,
        "stream": f"{t - 1} fillers alpha/2 x^2, then the replaced loss",
        "replaced": {"v": f0["v"], "y": f0["y"], "ridge": f0["ridge"]},
        "replacement": {"v": f1["v"], "y": f1["y"], "ridge": f1["ridge"]},
        "class_violations": [cls.violations(f) for f in losses]})


def igd_lemmas(version: str, L: Const = 2.0, alpha: Const = 0.05, D: Const = 1.0
               ) -> list[SmtLemma]:
    """SMT encodings of JKT12 Lemma 4 (IGD's sensitivity), as printed and as needed.

    Lemma 4 as printed (``version`` ``"colt"``: 2L/(alpha t); ``"arxiv"``: 2L/t) and the bound
    the PIGD accountant needs, 2L/(alpha (t+2)), for the squared loss with ridge, d = 1.

    Proof structure (Lemma 4's induction, made tight): *base*: one replaced loss at round t moves
    x_{t+1} by at most 2L/(alpha (t+2)) (:func:`~dpaudit.papers.jkt12.exact.igd_step_sensitivity`;
    for every class and d: :func:`igd_segment_lemma`; the printed statements are proved through
    the weaker 2L/(alpha (t+1)), which z3 also decides with symbolic constants); *contraction*:
    the same loss moves two points' distance by at most t/(t+1); so after a change at tau <= t,
    ``||x_{t+1} - x'_{t+1}|| <= 2L/(alpha (tau+2)) prod_{s=tau+1}^t s/(s+1)
    = 2L (tau+1)/(alpha (tau+2) (t+1))`` (:func:`~dpaudit.papers.jkt12.exact.pigd_accountant`);
    *arithmetic*: 2L/(alpha (t+1)) is at most the printed bound for every t >= 1.

    Parameters
    ----------
    version
        ``"colt"`` or ``"arxiv"``: which printed Lemma 4 is encoded.
    L, alpha, D
        Lipschitz bound, strong convexity and domain half-width: numbers, or names for symbolic
        constants (the proof then covers every value).

    Returns
    -------
    list of SmtLemma
        The printed lemma, then the needed bound (each with its refutation and replay).
    """
    Lz, az, Dz = _const(L), _const(alpha), _const(D)
    symbolic = any(isinstance(c, str) for c in (L, alpha, D))
    t, x, x2 = real("t"), real("x"), real("x'")
    cls = dict(lipschitz=Lz, strong_convexity=az, radius=Dz)
    f0 = quadratic_loss_1d("f", **cls)
    f1 = quadratic_loss_1d("f'", **cls)
    common = tuple(_positive(Lz, az, Dz))
    dom = lambda y: [y >= -Dz, y <= Dz]  # noqa: E731
    step = lambda y, f: igd_step_t(y, f, t, az, Dz)  # noqa: E731
    # "|d| > B(t)" without division: |d| alpha (t+2) > 2L for the needed bound 2L/(alpha (t+2)).
    # The printed Lemma 4 is proved through the weaker 2L/(alpha (t+1)) (z3 decides its base
    # step with symbolic constants; the (t+2) base only with fixed ones).
    over = {"colt": lambda d: d * az * t > 2 * Lz, "arxiv": lambda d: d * t > 2 * Lz,
            "needed": lambda d: d * az * (t + 2) > 2 * Lz,
            "base": lambda d: d * az * (t + 1) > 2 * Lz}
    stated = {"colt": "2L/(alpha t)", "arxiv": "2L/t", "needed": "2L/(alpha (t+2))"}
    enc = (f"IGD implicit step (implicit_step, squared loss + ridge), d = 1, C = [-D, D], "
           f"class: ridge >= alpha, (|y| + |v| D)|v| + ridge D <= L (LossClass.violations), "
           f"L = {_fmt(L)}, alpha = {_fmt(alpha)}, D = {_fmt(D)}; t real >= 1; x_t any point of C")
    variables = {"t": t, **f0.variables(), **f1.variables()}
    for k, c in (("L", L), ("alpha", alpha), ("D", D)):
        if isinstance(c, str):
            variables[k] = real(c)
    zero = z3.RealVal(0)
    out = []
    for which in (version, "needed"):
        k = 2 if which == "needed" else 1
        base = Obligation(
            f"base: one replaced loss moves x_{{t+1}} by more than 2L/(alpha (t+{k}))",
            common + f0.constraints + f1.constraints + (t >= 1, *dom(x)),
            over["needed" if which == "needed" else "base"](absolute(step(x, f0) - step(x, f1))),
            # nlsat does not decide this step with symbolic constants in its share of the time
            nlsat_first=not symbolic)
        contraction = Obligation(
            "contraction: the same loss shrinks the distance of two points by less than t/(t+1)",
            common + f0.constraints + (t >= 1, *dom(x), *dom(x2)),
            absolute(step(x, f0) - step(x2, f0)) * (t + 1) > t * absolute(x - x2))
        proof = [base, contraction]
        if which != "needed":
            bound = {"colt": 2 * Lz / (az * t), "arxiv": 2 * Lz / t}[which]
            proof.append(Obligation(
                f"arithmetic: 2L/(alpha (t+1)) > {stated[which]} for some t >= 1",
                common + (t >= 1,), 2 * Lz / (az * (t + 1)) > bound))
        refute = Obligation(
            f"x_t = 0 (reached by the fillers), t in 1..16 or 1 + 2^k: replaced loss moves "
            f"x_{{t+1}} by more than {stated[which]}",
            common + f0.constraints + f1.constraints + (_t_choices(t, 1, 16),),
            over[which](absolute(step(zero, f0) - step(zero, f1))), variables)

        def replay(m: dict[str, float], which: str = which) -> Replay:
            c = {k: (m[k] if isinstance(v, str) else float(v))
                 for k, v in (("L", L), ("alpha", alpha), ("D", D))}
            tt = int(round(m["t"]))
            cl = {"colt": 2 * c["L"] / (c["alpha"] * tt), "arxiv": 2 * c["L"] / tt,
                  "needed": 2 * c["L"] / (c["alpha"] * (tt + 2))}[which]
            return _igd_replay(c["L"], c["alpha"], c["D"], tt, f0.realise(m), f1.realise(m), cl)

        statement = (get_claim(f"jkt12-{which}/pigd").lemmas[0].statement
                     if which != "needed" else "IGD, bound the PIGD accountant uses: "
                     "||x_{t+1} - x'_{t+1}|| <= 2L/(alpha (t+2))")
        statement += f" [d = 1, L = {_fmt(L)}, alpha = {_fmt(alpha)}, D = {_fmt(D)}]"
        out.append(SmtLemma(statement, enc, tuple(proof), refute, replay))
    return out


def igd_segment_lemma() -> SmtLemma:
    """SMT encoding of IGD's one-step bound ``2L/(alpha (t+2))`` for every loss class and d.

    The one-step bound the PIGD accountant uses, for *every* loss class and dimension:
    ``||x_{t+1} - x'_{t+1}|| <= 2L/(alpha (t+2))`` (:func:`~dpaudit.papers.jkt12.exact.
    igd_step_sensitivity`), with L, alpha, t symbolic.

    Encoded: the proof's facts about the two implicit steps restricted to the segment [x, x'] of
    length r (unit direction u): first-order optimality of x along u and of x' along -u,
    ``alpha t r <= phi'_+(0) - psi'_-(r)`` (the terms alpha t <x - x_t, u> and
    alpha t <x' - x_t, u> differ by alpha t r); strong convexity of both losses on the segment,
    ``phi'_+(0) <= phi'_-(r) - alpha r`` and ``psi'_-(r) >= psi'_+(0) + alpha r``; the Lipschitz
    bound on C, ``|phi'_-(r)|, |psi'_+(0)| <= L``. The one-sided derivatives are free reals: the
    proof covers every convex, possibly non-differentiable loss (squared, logistic, hinge, ...).
    """
    L, alpha, t, r = real("L"), real("alpha"), real("t"), real("r")
    p0, pr, q0, qr = real("phi'_+(0)"), real("phi'_-(r)"), real("psi'_+(0)"), real("psi'_-(r)")
    facts = (L > 0, alpha > 0, t >= 1, r >= 0,
             alpha * t * r <= p0 - qr,            # optimality of both steps along the segment
             p0 <= pr - alpha * r, qr >= q0 + alpha * r,  # strong convexity of f, f'
             pr <= L, pr >= -L, q0 <= L, q0 >= -L)        # L-Lipschitz on C
    ob = Obligation("segment argument: r alpha (t+2) > 2L is consistent with the facts",
                    facts, r * alpha * (t + 2) > 2 * L)
    return SmtLemma("IGD, bound the PIGD accountant uses, every class and d: "
                    "||x_{t+1} - x'_{t+1}|| <= 2L/(alpha (t+2)) [L, alpha, t symbolic]",
                    "the implicit step's first-order optimality, alpha-strong convexity and "
                    "L-Lipschitz continuity of f_t, f'_t restricted to the segment between the "
                    "two minimisers (one-sided derivatives as free reals); any convex C, any d",
                    (ob,))


# ==============================================================================================
# GIGA (Algorithm 3 line 7) and Lemma 5
# ==============================================================================================


def giga_step(x: z3.ArithRef, loss: QuadraticLoss, eta: z3.ArithRef, D: z3.ArithRef
              ) -> z3.ArithRef:
    """GIGA's projected gradient step ``Pi_[-D, D](x - eta grad f(x))`` (:meth:`GIGA.learn`).

    JKT12 Algorithm 3 after the burn-in, ``eta = 2/(alpha t)``.

    Parameters
    ----------
    x
        The current point.
    loss
        The round's symbolic 1-D squared loss with ridge.
    eta
        Step size.
    D
        Half-width of the domain ``[-D, D]``.

    Returns
    -------
    z3.ArithRef
        ``x_{t+1}``.
    """
    return clip(x - eta * loss.grad(x), -D, D)


def giga_lemmas(G: float = 1.0, alpha: float = 0.3, D: float = 1.0) -> list[SmtLemma]:
    """SMT encodings of JKT12 Lemma 5 (GIGA's sensitivity), as printed and as needed.

    Lemma 5 as printed (2G/(alpha t)) and the bound the PGIGA accountant uses, for the squared
    loss with ridge (L_G = v^2 + ridge <= G/D, the audit's smoothness of the squared class), d = 1.

    Needed-bound proof: *base*: a replaced loss at round t >= t_q moves x_{t+1} by at most
    4G/(alpha t); *contraction*: for t >= t_q = 2 (L_G/alpha)^2 the gradient step shrinks
    distances by (t-2)/t; so ``||x_{t+1} - x'_{t+1}|| <= 4G(tau-1)/(alpha (t-1) t)`` after a
    change at tau (the accountant's formula), at most 4G/(alpha tau).

    Parameters
    ----------
    G
        Gradient bound of the loss class.
    alpha
        Strong convexity.
    D
        Half-width of the domain ``[-D, D]``.

    Returns
    -------
    list of SmtLemma
        The printed Lemma 5, then the needed bound.
    """
    smooth = max(G / D, alpha)
    t_q = giga_burn_in(alpha, smooth)
    Gz, az, Dz, Sz = (z3.RealVal(Fraction(v)) for v in (G, alpha, D, smooth))
    eta, x, x2 = real("eta"), real("x"), real("x'")
    cls = dict(lipschitz=Gz, strong_convexity=az, radius=Dz, smoothness=Sz)
    f0, f1 = quadratic_loss_1d("f", **cls), quadratic_loss_1d("f'", **cls)
    dom = lambda y: [y >= -Dz, y <= Dz]  # noqa: E731
    enc = (f"GIGA projected gradient step, d = 1, C = [-D, D], squared loss + ridge with "
           f"ridge >= alpha, v^2 + ridge <= L_G, (|y| + |v| D)|v| + ridge D <= G; G = {G:g}, "
           f"alpha = {alpha:g}, D = {D:g}, L_G = {smooth:g}; step eta = 2/(alpha t), rounds "
           f"t >= t_q = {t_q} (t real)")
    after_burn_in = (eta > 0, az * eta * t_q <= 2)  # eta = 2/(alpha t), t >= t_q
    zero = z3.RealVal(0)
    # Proofs in terms of eta (2G/(alpha t) = G eta, 4G/(alpha t) = 2G eta, (t-2)/t =
    # 1 - alpha eta: low degree); refutations at integer rounds t (eta = 2/(alpha t)).
    t = real("t")
    variables = {"t": t, **f0.variables(), **f1.variables()}
    at_t = 2 / (az * t)
    change_at_zero = absolute(giga_step(zero, f0, at_t, Dz) - giga_step(zero, f1, at_t, Dz))

    def replay_for(claimed_of):
        def replay(m: dict[str, float]) -> Replay:
            tt = int(round(m["t"]))
            dom_ = Box(1, -D, D)
            filler = SquaredLoss(np.zeros(1), 0.0, alpha)
            fs = [f0.realise(m), f1.realise(m)]
            losses = [SquaredLoss(np.array([f["v"]]), f["y"], f["ridge"]) for f in fs]
            ends = []
            for f in losses:
                learner = GIGA(dom_, alpha, smooth, np.zeros(1))
                learner.reset(1, np.random.default_rng(0))
                for _ in range(tt - 1):
                    learner.learn(filler)
                learner.learn(f)
                ends.append(float(learner.predict()[0, 0]))
            cls_ = LossClass("squared", dom_, G, alpha)
            return Replay(abs(ends[0] - ends[1]), claimed_of(tt), {
                "learner": f"GIGA(Box(1, -{D:g}, {D:g}), alpha={alpha:g}, L_G={smooth:g}, x1=0)",
                "round": tt, "t_q": t_q, "stream": f"{tt - 1} fillers alpha/2 x^2, then the "
                                                  f"replaced loss", "replaced": fs[0],
                "replacement": fs[1], "class_violations": [cls_.violations(f) for f in losses]})
        return replay

    printed = SmtLemma(
        get_claim("jkt12-colt/pgiga").lemmas[0].statement + f" [d = 1, G = {G:g}, "
        f"alpha = {alpha:g}, D = {D:g}]", enc,
        (), Obligation(f"x_t = 0 (burn-in points and fillers), t in {t_q}..{t_q + 15} or "
                       f"t_q + 2^k: replaced loss moves x_{{t+1}} by more than 2G/(alpha t)",
                       f0.constraints + f1.constraints + (_t_choices(t, t_q, 16),),
                       change_at_zero * az * t > 2 * Gz, variables),
        replay_for(lambda tt: 2 * G / (alpha * tt)))
    base = Obligation("base: a replaced loss at t >= t_q moves x_{t+1} by more than 4G/(alpha t)",
                      f0.constraints + f1.constraints + after_burn_in + tuple(dom(x)),
                      absolute(giga_step(x, f0, eta, Dz) - giga_step(x, f1, eta, Dz))
                      > 2 * Gz * eta)
    contraction = Obligation(
        "contraction: for t >= t_q the step shrinks distances by less than (t-2)/t",
        f0.constraints + after_burn_in + tuple(dom(x) + dom(x2)),
        absolute(giga_step(x, f0, eta, Dz) - giga_step(x2, f0, eta, Dz))
        > (1 - az * eta) * absolute(x - x2))
    needed = SmtLemma(
        "GIGA, bound the PGIGA accountant uses: ||x_{t+1} - x'_{t+1}|| <= "
        "4G(tau-1)/(alpha (t-1) t) after a change at tau >= t_q"
        f" [d = 1, G = {G:g}, alpha = {alpha:g}, D = {D:g}]", enc, (base, contraction),
        Obligation(f"x_t = 0, t in {t_q}..{t_q + 15} or t_q + 2^k: more than 4G/(alpha t)",
                   f0.constraints + f1.constraints + (_t_choices(t, t_q, 16),),
                   change_at_zero * az * t > 4 * Gz, variables),
        replay_for(lambda tt: 4 * G / (alpha * tt)))
    return [printed, needed]


# ==============================================================================================
# PrivateSum nodes (Lemma 6) and PQFTL's tree inputs (Algorithm 4 lines 7-8)
# ==============================================================================================


def _vector(name: str, d: int) -> list[z3.ArithRef]:
    return [real(f"{name}[{i}]") for i in range(d)]


def _sq(xs: Sequence[z3.ArithRef]) -> z3.ArithRef:
    return z3.Sum([x * x for x in xs]) if len(xs) > 1 else xs[0] * xs[0]


def _release_difference(ws0: np.ndarray, ws1: np.ndarray) -> float:
    """max_t ||W^_t - W^'_t|| of the real PrivateSum tree on two streams, common noise (seed 0):
    every released prefix is a sum of nodes, and the nodes containing the replaced vector move by
    exactly its change."""
    outs = []
    for ws in (ws0, ws1):
        tree = PrivateSumTree(ws.shape[1], ws.shape[0], 1.0)
        tree.reset(1, np.random.default_rng(0))
        outs.append(np.stack([tree.update(w)[0] for w in ws]))
    return float(np.max(np.linalg.norm(outs[0] - outs[1], axis=1)))


def private_sum_node_lemmas(d: int = 1, R: Const = 1.0) -> list[SmtLemma]:
    """JKT12 Lemma 6, ``||B_s(D) - B_s(D')|| <= R`` when ``w_t`` is replaced, and the needed ``2R``.

    A node is ``B_s = rest + w_t`` (any other vectors in ``rest``); ``||w_t|| <= R``.

    Parameters
    ----------
    d
        Dimension of the inputs.
    R
        Bound on the inputs' norm: a number, or a name for a symbolic constant.

    Returns
    -------
    list of SmtLemma
        The printed bound ``R``, then the needed ``2R``.
    """
    Rz = _const(R)
    w0, w1, rest = _vector("w", d), _vector("w'", d), _vector("rest", d)
    cons = tuple(_positive(Rz)) + (_sq(w0) <= Rz * Rz, _sq(w1) <= Rz * Rz)
    diff = [(r + a) - (r + b) for r, a, b in zip(rest, w0, w1)]
    variables = {**{f"w[{i}]": v for i, v in enumerate(w0)},
                 **{f"w'[{i}]": v for i, v in enumerate(w1)}}
    if isinstance(R, str):
        variables["R"] = Rz
    enc = (f"node value B_s = (sum of the other vectors of s) + w_t, d = {d}, ||w_t||, "
           f"||w'_t|| <= R (R = {_fmt(R)}); replayed through PrivateSumTree (node differences "
           f"of the release, common noise)")

    def replay_for(factor: float):
        def replay(m: dict[str, float]) -> Replay:
            r = m["R"] if isinstance(R, str) else float(R)
            a = np.array([m[f"w[{i}]"] for i in range(d)])
            b = np.array([m[f"w'[{i}]"] for i in range(d)])
            # Put the replaced vector at leaf 1 of a tree of T = 4 (it lies in 3 released nodes).
            z = np.zeros((4, d))
            s0, s1 = z.copy(), z.copy()
            s0[0], s1[0] = a, b
            return Replay(_release_difference(s0, s1), factor * r,
                          {"T": 4, "leaf": 1, "w": a.tolist(), "w'": b.tolist(), "R": r})
        return replay

    out = []
    for factor, label in ((1, "R"), (2, "2R")):
        bound = factor * Rz
        ob = Obligation(f"some node moves by more than {label}", cons, _sq(diff) > bound * bound,
                        variables)
        stmt = (get_claim("jkt12-colt/privatesum").lemmas[0].statement if factor == 1 else
                "PrivateSum node change, bound the accountant uses: ||B_s(D) - B_s(D')||_2 <= 2R")
        out.append(SmtLemma(f"{stmt} [d = {d}]", enc, (ob,), ob, replay_for(float(factor)), d))
    return out


def pqftl_inputs(y: z3.ArithRef, v: Sequence[z3.ArithRef]
                 ) -> tuple[list[z3.ArithRef], list[z3.ArithRef]]:
    """The tree inputs of PQFTL.learn (JKT12 Algorithm 4 lines 7-8): ``y v`` and ``v v^T``.

    Parameters
    ----------
    y
        The label (z3 real).
    v
        The feature vector (z3 reals).

    Returns
    -------
    tuple
        ``(y v, v v^T)``, the matrix row-major as ``np.outer(v, v).reshape(-1)``.
    """
    d = len(v)
    return [y * a for a in v], [v[i] * v[j] for i in range(d) for j in range(d)]


def pqftl_input_lemmas(d: int = 1, R: float = 2.0) -> list[SmtLemma]:
    """JKT12 Algorithm 4's tree-input bounds as printed and as needed; ``|y|, ||v|| <= R``.

    The u-tree gets ``y_t v_t`` with bound ``R`` (needed ``2R^2``), the V-tree ``v_t v_t^T`` with
    bound ``R^2`` in Frobenius norm (needed ``R^2`` in ``d = 1``, ``sqrt(2) R^2`` in ``d >= 2``).

    Parameters
    ----------
    d
        Dimension of ``v``.
    R
        Bound on ``|y|`` and ``||v||``.

    Returns
    -------
    list of SmtLemma
        Printed and needed bounds of the u-tree, then of the V-tree.
    """
    Rz = z3.RealVal(Fraction(R))
    y0, y1 = real("y"), real("y'")
    v0, v1 = _vector("v", d), _vector("v'", d)
    # Both norms are rotation invariant (||Q a|| = ||a||, ||Q M Q^T||_F = ||M||_F): without loss
    # of generality v_t lies on the first axis, which keeps the degree-4 problem small.
    cons = (absolute(y0) <= Rz, absolute(y1) <= Rz, _sq(v0) <= Rz * Rz, _sq(v1) <= Rz * Rz,
            *[c == 0 for c in v0[1:]])
    variables = {"y": y0, "y'": y1, **{f"v[{i}]": v for i, v in enumerate(v0)},
                 **{f"v'[{i}]": v for i, v in enumerate(v1)}}
    (u0, V0), (u1, V1) = pqftl_inputs(y0, v0), pqftl_inputs(y1, v1)
    u_diff = _sq([a - b for a, b in zip(u0, u1)])
    V_diff = _sq([a - b for a, b in zip(V0, V1)])
    enc = (f"tree inputs of Algorithm 4 (y_t v_t, v_t v_t^T), d = {d}, |y|, ||v|| <= R = {R:g}"
           + (" (v_t on e_1 by rotation invariance)" if d > 1 else "") + "; "
           "replayed through PrivateSumTree on the inputs PQFTL.learn passes")

    def replay_for(which: str, claimed: float):
        def replay(m: dict[str, float]) -> Replay:
            y = (m["y"], m["y'"])
            vs = [np.array([m[f"{n}[{i}]"] for i in range(d)]) for n in ("v", "v'")]
            if which == "u":
                ins = [y[k] * vs[k] for k in range(2)]  # PQFTL.learn: loss.y * loss.v
            else:
                ins = [np.outer(vs[k], vs[k]).reshape(-1) for k in range(2)]  # np.outer(v, v)
            z = np.zeros((2, ins[0].shape[0]))
            s0, s1 = z.copy(), z.copy()
            s0[0], s1[0] = ins
            return Replay(_release_difference(s0, s1), claimed,
                          {"tree": which, "y": list(y), "v": vs[0].tolist(), "v'": vs[1].tolist(),
                           "R": R})
        return replay

    v_needed = R * R * (math.sqrt(2.0) if d >= 2 else 1.0)
    out = []
    for which, diff, printed, needed, nlabel in (
            ("u", u_diff, R, 2 * R * R, "2R^2"),
            ("V", V_diff, R * R, v_needed, "sqrt(2) R^2" if d >= 2 else "R^2")):
        for bound, label in ((printed, "printed"), (needed, "needed")):
            # squared bound, exact: sqrt(2) R^2 squares to 2 R^4
            sq = (2 * Rz ** 4 if (which == "V" and label == "needed" and d >= 2)
                  else z3.RealVal(Fraction(bound)) ** 2)
            ob = Obligation(f"{which}-tree input moves by more than {bound:.6g}", cons, diff > sq,
                            variables)
            if label == "printed":
                stmt = get_claim("jkt12-colt/pqftl").lemmas[0 if which == "u" else 1].statement
            else:
                stmt = f"PQFTL {which}-tree, needed bound: every node moves by at most {nlabel}"
            out.append(SmtLemma(f"{stmt} [d = {d}, R = {R:g}]", enc, (ob,), ob,
                                replay_for(which, bound), d))
    return out


# ==============================================================================================
# Node counts (Theorem 11 COLT / Theorem 9 arXiv, privacy proof)
# ==============================================================================================

_BITS = 32
_MAX_LOG2_T = 20


def count_nodes_bv(tau: z3.BitVecRef, T: z3.BitVecRef, levels: int = _MAX_LOG2_T + 1
                   ) -> z3.BitVecRef:
    """The number of released PrivateSum nodes containing a leaf, over bit-vectors.

    :func:`~dpaudit.mechanisms.private_sum.released_node_count` over bit-vectors: the level-h
    block containing leaf tau ends at ``end = ((tau-1) >> h) + 1) << h``; it is released iff
    ``end <= T`` and bit h is the lowest set bit of ``end``.

    Parameters
    ----------
    tau
        The leaf (1-based) as a bit-vector.
    T
        The horizon as a bit-vector.
    levels
        Tree levels counted (``h = 0 .. levels - 1``).

    Returns
    -------
    z3.BitVecRef
        The number of released nodes containing leaf ``tau``.
    """
    one = z3.BitVecVal(1, _BITS)
    total = z3.BitVecVal(0, _BITS)
    for h in range(levels):
        hh = z3.BitVecVal(h, _BITS)
        end = z3.LShR(tau - one, hh) + one
        end = end << hh
        released = z3.And(z3.ULE(end, T), (end & -end) == (one << hh))
        total = total + z3.If(released, one, z3.BitVecVal(0, _BITS))
    return total


def node_count_lemmas(version: str = "colt") -> list[SmtLemma]:
    """SMT encodings of the node count of JKT12's tree proof, printed and needed.

    "B(D) and B(D') differ in at most log T nodes" (Theorem 11 COLT / Theorem 9 arXiv, as the
    ``version``'s claim states it; log2 reading: ln T < log2 T, so the ln reading fails wherever
    this one does) and the needed floor(log2 T) + 1, for 2 <= T <= 2^20, every leaf tau <= T.

    Parameters
    ----------
    version
        ``"colt"`` or ``"arxiv"``: whose claim's statement is encoded.

    Returns
    -------
    list of SmtLemma
        The printed ``log T`` count (log2 reading), then the needed ``floor(log2 T) + 1``.
    """
    tau, T = z3.BitVec("tau", _BITS), z3.BitVec("T", _BITS)
    cnt = count_nodes_bv(tau, T)
    rng = (z3.ULE(2, T), z3.ULE(T, 1 << _MAX_LOG2_T), z3.ULE(1, tau), z3.ULE(tau, T))
    one = z3.BitVecVal(1, _BITS)
    variables = {"tau": tau, "T": T}
    enc = (f"released_node_count over {_BITS}-bit vectors (levels 0..{_MAX_LOG2_T}), "
           f"2 <= T <= 2^{_MAX_LOG2_T}, 1 <= tau <= T; count > log2 T iff 2^count > T")

    def replay_for(bound_of):
        def replay(m: dict[str, float]) -> Replay:
            t_, T_ = int(m["tau"]), int(m["T"])
            return Replay(float(released_node_count(t_, T_)), float(bound_of(T_)),
                          {"tau": t_, "T": T_, "released_node_count": released_node_count(t_, T_),
                           "log2 T": math.log2(T_), "ln T": math.log(T_)})
        return replay

    printed_ob = Obligation("some leaf lies in more than log2 T released nodes", rng,
                            z3.UGT(one << cnt, T), variables)
    bitlen = z3.BitVecVal(0, _BITS)
    for h in range(_MAX_LOG2_T + 1):  # floor(log2 T) + 1 = number of h with 2^h <= T
        bitlen = bitlen + z3.If(z3.ULE(one << h, T), one, z3.BitVecVal(0, _BITS))
    needed_ob = Obligation("some leaf lies in more than floor(log2 T) + 1 released nodes", rng,
                           z3.UGT(cnt, bitlen), variables)
    printed = next(lem.statement for lem in get_claim(f"jkt12-{version}/privatesum").lemmas
                   if "log T nodes" in lem.statement)
    return [SmtLemma(f"{printed} [log2 reading, ln T is smaller; T <= 2^{_MAX_LOG2_T}]", enc,
                     (printed_ob,), printed_ob, replay_for(math.log2)),
            SmtLemma("PrivateSum node count the accountant uses: a leaf lies in at most "
                     "floor(log2 T) + 1 released nodes", enc, (needed_ob,), needed_ob,
                     replay_for(lambda T_: T_.bit_length()))]


# ==============================================================================================
# POL (Algorithm 6; COLT eq. (37), arXiv eq. (35))
# ==============================================================================================


def pol_average(losses: Sequence[QuadraticLoss], alpha: z3.ArithRef, D: z3.ArithRef
                ) -> z3.ArithRef:
    """POL's averaged iterate ``x~`` (JKT12 Algorithm 6) in z3, for ``d = 1``.

    x~ = (x_1 + ... + x_T)/T for T = len(losses) + 1: IGD from x_1 = 0 with POL's extra ridge
    alpha (Algorithm 6 line 9) on [-D, D].

    Parameters
    ----------
    losses
        The symbolic losses of rounds ``1 .. T - 1``.
    alpha
        POL's ridge.
    D
        Half-width of the domain ``[-D, D]``.

    Returns
    -------
    z3.ArithRef
        The averaged iterate ``x~``.
    """
    x, total = z3.RealVal(0), z3.RealVal(0)
    for k, f in enumerate(losses, start=1):
        x = igd_step(x, f, 1 / (alpha * k), D, extra_ridge=alpha)
        total = total + x
    return total / (len(losses) + 1)


def pol_lemmas(T: int = 3, L: float = 1.0, epsilon_g: float = 0.1, x_star_norm: float = 1.0
               ) -> list[SmtLemma]:
    """SMT encodings of POL's sensitivity (JKT12 Algorithm 6), printed and needed.

    ``||x~ - x~'|| <= 2 L' ln T / T`` (printed) for POL's averaged IGD iterate, unrolled for a
    horizon T (x~ = (x_1 + ... + x_T)/T, x_1 = 0, IGD with POL's ridge alpha = eps_g/||x*||^2 on
    the ball of radius ||x*||, squared losses with ridge >= 0, L-Lipschitz), d = 1; and the bound
    of the POL accountant, ``max_tau min(2L'/alpha, 2||x*||(tau+1)) (H_T - H_tau)/T``.

    ln T is replaced by a rational just above it for the refutation (a violation of the larger
    bound violates the printed one) and just below it for the proof.

    Parameters
    ----------
    T
        Horizon unrolled (>= 2).
    L
        Lipschitz bound of the losses.
    epsilon_g
        POL's accuracy parameter ``eps_g`` (sets ``alpha = eps_g / ||x*||^2``, Algorithm 6 line 5).
    x_star_norm
        ``||x*||``, the radius of the domain.

    Returns
    -------
    list of SmtLemma
        The printed bound, then the accountant's.
    """
    alpha = pol_alpha(epsilon_g, x_star_norm)
    az, Lz, Dz = (z3.RealVal(Fraction(v)) for v in (alpha, L, x_star_norm))
    lp = L + alpha * x_star_norm
    printed = pol_printed_sensitivity(T, L, alpha, x_star_norm)
    H = [0.0] + list(np.cumsum(1.0 / np.arange(1, T + 1)))
    needed = max(min(2 * lp / alpha, 2 * x_star_norm * (tau + 1)) * (H[T] - H[tau]) / T
                 for tau in range(1, T))
    cls = dict(lipschitz=Lz, strong_convexity=0, radius=Dz)
    fs = [quadratic_loss_1d(f"f{k}", **cls) for k in range(1, T)]
    gs = [quadratic_loss_1d(f"f{k}'", **cls) for k in range(1, T)]

    def averaged(losses: list[QuadraticLoss]) -> z3.ArithRef:
        return pol_average(losses, az, Dz)

    enc = (f"POL: IGD with extra ridge alpha = {alpha:g} on [-{x_star_norm:g}, {x_star_norm:g}], "
           f"x_1 = 0, T = {T} unrolled (x~ averages x_1..x_T), squared losses + ridge >= 0 with "
           f"(|y| + |v| D)|v| + ridge D <= L = {L:g}; the replaced round ranges over 1..{T - 1}")
    lets = []
    for tau in range(1, T):  # replace f_tau only
        other = [gs[k] if k == tau - 1 else fs[k] for k in range(T - 1)]
        lets.append((tau, averaged(fs), averaged(other), gs[tau - 1]))
    cons = tuple(c for f in fs for c in f.constraints)
    variables = {k: v for f in fs + gs for k, v in f.variables().items()}

    def obligation(bound: Fraction, what: str) -> Obligation:
        viol = z3.Or(*[z3.And(*g.constraints, absolute(a - b) > z3.RealVal(bound))
                       for _, a, b, g in lets])
        return Obligation(what, cons, viol, variables)

    up = Fraction(printed) * (1 + Fraction(1, 10 ** 12))
    lo = Fraction(printed) * (1 - Fraction(1, 10 ** 12))

    def replay_for(claimed: float):
        def replay(m: dict[str, float]) -> Replay:
            dom = Ball(1, x_star_norm)
            best = None
            for tau in range(1, T):
                s0 = [SquaredLoss(np.array([f.realise(m)["v"]]), f.realise(m)["y"],
                                  f.realise(m)["ridge"]) for f in fs]
                s1 = list(s0)
                g = gs[tau - 1].realise(m)
                s1[tau - 1] = SquaredLoss(np.array([g["v"]]), g["y"], g["ridge"])
                means = []
                for s in (s0, s1):
                    learner = IGD(dom, alpha, np.zeros(1), extra_ridge=alpha)
                    traj = learner.run(s + [s[-1]], 1, np.random.default_rng(0))[0][:T]
                    means.append(traj.mean(axis=0))
                obs = float(np.linalg.norm(means[0] - means[1]))
                if best is None or obs > best[0]:
                    best = (obs, tau)
            assert best is not None
            return Replay(best[0], claimed, {"T": T, "replaced_round": best[1], "alpha": alpha,
                                             "L": L, "x_star_norm": x_star_norm})
        return replay

    ref = obligation(up, f"T = {T}: ||x~ - x~'|| > 2 L' ln T / T (ln T rounded up)")
    prf = obligation(lo, f"T = {T}: ||x~ - x~'|| > 2 L' ln T / T (ln T rounded down)")
    nd = obligation(Fraction(needed) * (1 + Fraction(1, 10 ** 12)),
                    f"T = {T}: ||x~ - x~'|| > the accountant's bound")
    return [SmtLemma(get_claim("jkt12-colt/pol").lemmas[0].statement + f" [POL, T = {T}, "
                     f"L = {L:g}, eps_g = {epsilon_g:g}, ||x*|| = {x_star_norm:g}]", enc, (prf,),
                     ref, replay_for(printed)),
            SmtLemma(f"POL, bound the accountant uses: ||x~ - x~'|| <= max_tau min(2L'/alpha, "
                     f"2||x*||(tau+1))(H_T - H_tau)/T [T = {T}]", enc, (nd,), nd,
                     replay_for(needed))]


# ==============================================================================================
# QFTL, assumption (1) for the generic POCP audits
# ==============================================================================================


def qftl_next(A: z3.ArithRef, B: z3.ArithRef, y: z3.ArithRef, v: z3.ArithRef, t: z3.ArithRef,
              alpha: z3.ArithRef) -> z3.ArithRef:
    """QFTL's ``x_{t+1} = u_t / (t alpha + V_t)`` in ``d = 1`` (the core of JKT12 Algorithm 4).

    Parameters
    ----------
    A
        Sum of ``y_s v_s`` over the other rounds.
    B
        Sum of ``v_s^2`` over the other rounds.
    y, v
        Round ``t``'s loss.
    t
        The round.
    alpha
        QFTL's regularisation.

    Returns
    -------
    z3.ArithRef
        ``(A + y v) / (t alpha + B + v^2)``.
    """
    return (A + y * v) / (t * alpha + B + v * v)


def qftl_assumption_lemma(R: float = 0.5, alpha: float = 1.0) -> SmtLemma:
    """SMT encoding of JKT12's assumption (1) instantiated for QFTL, ``d = 1``.

    ``||x_{t+1} - x'_{t+1}|| <= lambda_A / t``, ``lambda_A = (2R^2/alpha)(1 + R^2/(2 alpha))``
    for QFTL in d = 1: ``x_{t+1} = (A + y v)/(t alpha + B + v^2)`` with the other rounds'
    aggregates ``A = sum y_s v_s``, ``B = sum v_s^2`` constrained by ``|A| <= (t-1)R^2`` and
    ``0 <= B <= (t-1)R^2`` (necessary conditions: a proof over them covers every stream).

    Parameters
    ----------
    R
        Bound on ``|y|`` and ``|v|``.
    alpha
        QFTL's regularisation.

    Returns
    -------
    SmtLemma
        The instantiated assumption (1), proof obligation only.
    """
    Rz, az = z3.RealVal(Fraction(R)), z3.RealVal(Fraction(alpha))
    lam = (2 * Rz * Rz / az) * (1 + Rz * Rz / (2 * az))
    t, A, B = real("t"), real("A"), real("B")
    y0, y1, v0, v1 = real("y"), real("y'"), real("v"), real("v'")
    x0, x1 = real("x_{t+1}"), real("x'_{t+1}")
    # x0, x1 are defined by multiplying out qftl_next (denominators > 0); the Cauchy-Schwarz
    # constraint A^2 <= (t-1) R^2 B is left out: it is implied by the sums, and without it the
    # solver decides in seconds (a proof over a larger set covers the smaller one).
    cons = (t >= 1, absolute(A) <= (t - 1) * Rz * Rz, B >= 0, B <= (t - 1) * Rz * Rz,
            absolute(y0) <= Rz, absolute(y1) <= Rz, absolute(v0) <= Rz, absolute(v1) <= Rz,
            x0 * (t * az + B + v0 * v0) == A + y0 * v0, x1 * (t * az + B + v1 * v1) == A + y1 * v1)
    ob = Obligation("some aggregates and replaced loss move x_{t+1} by more than lambda_A/t",
                    cons, absolute(x0 - x1) * t > lam)
    return SmtLemma("Assumption (1) instantiated for QFTL on |y|, ||v|| <= R: ||x_{t+1} - "
                    "x'_{t+1}|| <= (2R^2/alpha)(1 + R^2/(2 alpha)) / t "
                    f"[d = 1, R = {R:g}, alpha = {alpha:g}]",
                    f"QFTL closed form x_{{t+1}} = u_t/(t alpha + V_t), d = 1, t real >= 1, "
                    f"aggregates of the other rounds as constrained reals; R = {R:g}, "
                    f"alpha = {alpha:g}", (ob,))


# ==============================================================================================
# Collections
# ==============================================================================================


def fast_lemmas() -> list[SmtLemma]:
    """Fixed constants (the audits' classes): each solver call well under a second."""
    return (igd_lemmas("colt") + igd_lemmas("arxiv")[:1] + [igd_segment_lemma()] + giga_lemmas()
            + private_sum_node_lemmas(1) + private_sum_node_lemmas(2)
            + pqftl_input_lemmas(1) + pqftl_input_lemmas(2, 1.0) + node_count_lemmas()
            + node_count_lemmas("arxiv")[:1]
            + pol_lemmas(2))


def all_lemmas() -> list[SmtLemma]:
    """Every JKT12 SMT encoding, the symbolic-constant ones included.

    Every encoding, including symbolic constants (IGD for every L, alpha, D: a proof over all
    constants) and POL unrolled for T = 3.
    """
    return (fast_lemmas() + igd_lemmas("colt", "L", "alpha", "D")[:1]
            + igd_lemmas("arxiv", "L", "alpha", "D")[:1] + private_sum_node_lemmas(2, "R")
            + pol_lemmas(3) + [qftl_assumption_lemma()])


def lemmas_for_claim(claim_id: str, *, thorough: bool = False) -> list[SmtLemma]:
    """The SMT encodings that concern one JKT12 claim.

    Parameters
    ----------
    claim_id
        A JKT12 claim id (``"jkt12-colt/pigd"``, ...).
    thorough
        Add the symbolic-constant and longer unrolled encodings.

    Returns
    -------
    list of SmtLemma
        The claim's encodings.

    Raises
    ------
    ValueError
        If ``claim_id`` is not a JKT12 claim id.
    """
    version, algo = claim_id.split("/", 1)
    version = version.removeprefix("jkt12-")
    if version not in ("colt", "arxiv"):
        raise ValueError(f"not a JKT12 claim id: {claim_id!r}")
    tree = private_sum_node_lemmas(1) + private_sum_node_lemmas(2) + node_count_lemmas(version)
    table = {
        "pigd": lambda: igd_lemmas(version) + [igd_segment_lemma()]
        + (igd_lemmas(version, "L", "alpha", "D")[:1] if thorough else []),
        "pgiga": lambda: giga_lemmas(),
        "privatesum": lambda: tree,
        "pqftl": lambda: pqftl_input_lemmas(1) + pqftl_input_lemmas(2, 1.0) + tree,
        "pol": lambda: pol_lemmas(2) + (pol_lemmas(3) if thorough else []),
        "pocp": lambda: [qftl_assumption_lemma()] if thorough else [],
        "pocp-doubling": lambda: [qftl_assumption_lemma()] if thorough else [],
    }
    if algo not in table:
        raise ValueError(f"unknown JKT12 claim {claim_id!r}")
    return table[algo]()


#: The claim audits' lemma hook: ``smt_evidence(claim_id, ctx, outcome)``.
smt_evidence = paper_smt_evidence(lemmas_for_claim, "JKT12")
