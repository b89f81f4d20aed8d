"""SMT encodings of the JKT12 and ST13 lemmas, against the code they encode.

1. Differential tests (default suite): every encoding is evaluated (``z3.substitute`` +
   ``z3.simplify``, exact arithmetic at the float inputs) and compared with the real
   implementation at random points of the class: a model that drifts from the code fails here.
   Tolerance: the implicit step's bisection stops at relative width 1e-13 and float rounding is
   ~1e-16 relative, so 1e-9 (absolute, on values of order 1) separates rounding from any modelling
   error (a wrong coefficient or a missing case changes the value by far more at most points).
2. A fast subset of solver verdicts (default suite, a few seconds).
3. The whole symbolic tier (``@pytest.mark.slow``, ``make smt``): every encoding's verdict.
"""

from __future__ import annotations

import json
import math
from fractions import Fraction

import numpy as np
import pytest
import z3

from dpaudit.formal.smt import check_lemma, evaluate, quadratic_loss_1d, real
from dpaudit.learners.domains import Ball, Box
from dpaudit.learners.giga import GIGA, giga_burn_in
from dpaudit.learners.igd import IGD
from dpaudit.learners.implicit_step import implicit_step
from dpaudit.learners.losses import LinearLoss, LossClass, SquaredLoss
from dpaudit.learners.pftal import PFTAL, PFTALConvex
from dpaudit.mechanisms.private_sum import released_node_count
from dpaudit.learners.qftl import QFTL
from dpaudit.mechanisms.tree_aggregation import nodes_containing
from dpaudit.papers.jkt12 import smt_lemmas as jkt
from dpaudit.papers.st13 import smt_lemmas as st

TOL = 1e-9
N_POINTS = 150


def _random_member(rng: np.random.Generator, cls: LossClass, ridge_min: float) -> SquaredLoss:
    """A random squared loss with ridge in ``cls``, drawn through the encoding's parameters
    (ridge, a = v^2, b = v y with |b| + (a + ridge) D <= L); a third of the draws sit on the
    Lipschitz boundary (the near-linear losses that push iterates onto the boundary of C)."""
    D, L = cls.domain.radius, cls.lipschitz
    while True:
        ridge = rng.uniform(ridge_min, L / D) if rng.random() < 0.7 else ridge_min
        a = rng.uniform(0.0, L / D - ridge) * (rng.random() < 0.8)
        room = L - (a + ridge) * D
        b = rng.choice([-1.0, 1.0]) * room * (1.0 if rng.random() < 0.35 else rng.random())
        if a == 0.0:
            a, b = 1e-12, b * 1e-6  # keep v > 0 so that y = b / v is defined
        v = math.sqrt(a)
        loss = SquaredLoss(np.array([v]), b / v, ridge)
        if not cls.violations(loss):
            return loss


def _assign(f, loss: SquaredLoss) -> dict:
    v = float(loss.v[0])
    return {f.a: v * v, f.b: v * loss.y, f.rho: loss.ridge}


# ---------------------------------------------------------------------------------------------
# 1. Differential tests: encoding == implementation
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("L,alpha,D,extra", [(2.0, 0.05, 1.0, 0.0), (30.0, 10.0, 2.0, 0.0),
                                             (1.0, 0.1, 1.0, 0.1)])
def test_igd_step_matches_implicit_step(L: float, alpha: float, D: float, extra: float) -> None:
    rng = np.random.default_rng(1)
    f = quadratic_loss_1d("f", lipschitz=L, strong_convexity=0.0 if extra else alpha, radius=D)
    x, t = real("x"), real("t")
    expr = jkt.igd_step(x, f, 1 / (z3.RealVal(Fraction(alpha)) * t), z3.RealVal(Fraction(D)),
                        z3.RealVal(Fraction(extra)))
    expr_t = jkt.igd_step_t(x, f, t, z3.RealVal(Fraction(alpha)), z3.RealVal(Fraction(D)))
    cls = LossClass("squared", Box(1, -D, D), L, 0.0 if extra else alpha)
    for _ in range(N_POINTS):
        loss = _random_member(rng, cls, 0.0 if extra else alpha)
        xv = rng.uniform(-D, D) if rng.random() < 0.8 else rng.choice([-D, D, 0.0])
        tv = int(rng.integers(1, 200))
        code = implicit_step(loss, np.array([[xv]]), 1.0 / (alpha * tv), Box(1, -D, D),
                             extra_ridge=extra)[0, 0]
        model = evaluate(expr, {x: xv, t: tv, **_assign(f, loss)})
        assert model == pytest.approx(code, abs=TOL), (loss, xv, tv)
        if not extra:  # the round-t form the IGD proofs use
            assert evaluate(expr_t, {x: xv, t: tv, **_assign(f, loss)}) == pytest.approx(
                code, abs=TOL)


def test_giga_step_matches_the_learner() -> None:
    rng = np.random.default_rng(2)
    for G, alpha, D in [(1.0, 0.3, 1.0), (1.0, 0.5, 2.0), (3.0, 1.0, 1.0)]:
        smooth = max(G / D, alpha)
        t_q = giga_burn_in(alpha, smooth)
        f = quadratic_loss_1d("f", lipschitz=G, strong_convexity=alpha, radius=D,
                              smoothness=smooth)
        x = real("x")
        expr = jkt.giga_step(x, f, 2 / (z3.RealVal(Fraction(alpha)) * t_q),
                             z3.RealVal(Fraction(D)))
        cls = LossClass("squared", Box(1, -D, D), G, alpha)
        for _ in range(N_POINTS // 3):
            loss = _random_member(rng, cls, alpha)
            xv = rng.uniform(-D, D)
            learner = GIGA(Box(1, -D, D), alpha, smooth, np.array([xv]))
            learner.reset(1, np.random.default_rng(0))
            for _ in range(t_q - 1):  # burn-in: the point stays x1
                learner.learn(loss)
            learner.learn(loss)  # round t_q: the first gradient step, from x_{t_q} = x1
            code = learner.predict()[0, 0]
            assert evaluate(expr, {x: xv, **_assign(f, loss)}) == pytest.approx(code, abs=TOL)


def test_pol_average_matches_igd_with_pol_ridge() -> None:
    rng = np.random.default_rng(3)
    T, L, xs = 3, 1.0, 1.0
    alpha = 0.1
    fs = [quadratic_loss_1d(f"f{k}", lipschitz=L, strong_convexity=0, radius=xs)
          for k in range(1, T)]
    expr = jkt.pol_average(fs, z3.RealVal(Fraction(alpha)), z3.RealVal(Fraction(xs)))
    cls = LossClass("squared", Ball(1, xs), L, 0.0)
    for _ in range(N_POINTS // 3):
        losses = [_random_member(rng, cls, 0.0) for _ in range(T - 1)]
        traj = IGD(Ball(1, xs), alpha, np.zeros(1), extra_ridge=alpha).run(
            losses + [losses[-1]], 1, np.random.default_rng(0))[0][:T]
        assign = {}
        for f, loss in zip(fs, losses):
            assign.update(_assign(f, loss))
        assert evaluate(expr, assign) == pytest.approx(traj.mean(), abs=TOL)


def test_pqftl_inputs_match_the_learners_tree_inputs() -> None:
    rng = np.random.default_rng(4)
    for d in (1, 2, 3):
        y, v = real("y"), [real(f"v{i}") for i in range(d)]
        u_expr, V_expr = jkt.pqftl_inputs(y, v)
        for _ in range(20):
            yv, vv = rng.normal(), rng.normal(size=d)
            loss = SquaredLoss(vv, yv, 1.0)
            assign = {y: yv, **{v[i]: vv[i] for i in range(d)}}
            # pqftl.py, PQFTL.learn: the u-tree gets loss.y * loss.v, the V-tree
            # np.outer(loss.v, loss.v).reshape(-1)
            np.testing.assert_allclose([evaluate(e, assign) for e in u_expr], loss.y * loss.v,
                                       atol=TOL)
            np.testing.assert_allclose([evaluate(e, assign) for e in V_expr],
                                       np.outer(loss.v, loss.v).reshape(-1), atol=TOL)


def test_qftl_closed_form_matches_the_learner() -> None:
    rng = np.random.default_rng(5)
    alpha = 0.7
    A, B, y, v, t = (real(n) for n in ("A", "B", "y", "v", "t"))
    expr = jkt.qftl_next(A, B, y, v, t, z3.RealVal(Fraction(alpha)))
    for _ in range(30):
        T = int(rng.integers(1, 8))
        losses = [SquaredLoss(np.array([rng.uniform(-1, 1)]), rng.uniform(-1, 1), alpha)
                  for _ in range(T)]
        traj = QFTL(1, alpha).run(losses + [losses[-1]], 1, np.random.default_rng(0))[0]
        tau = int(rng.integers(0, T))  # the round whose loss is "replaced"
        others = [f for k, f in enumerate(losses) if k != tau]
        assign = {A: sum(f.y * f.v[0] for f in others), B: sum(f.v[0] ** 2 for f in others),
                  y: losses[tau].y, v: losses[tau].v[0], t: T}
        assert evaluate(expr, assign) == pytest.approx(traj[T, 0], abs=TOL)


def test_node_counts_match_the_tree_code() -> None:
    tau, T = z3.BitVec("tau", 32), z3.BitVec("T", 32)
    jc = jkt.count_nodes_bv(tau, T)
    sc = st.count_nodes_containing_bv(tau, T)
    rng = np.random.default_rng(6)
    pairs = [(a, b) for b in range(1, 34) for a in range(1, b + 1)]
    pairs += [(int(rng.integers(1, b + 1)), b) for b in rng.integers(2, 2 ** 20, size=60)]
    for a, b in pairs:
        sub = [(tau, z3.BitVecVal(a, 32)), (T, z3.BitVecVal(b, 32))]
        assert z3.simplify(z3.substitute(sc, *sub)).as_long() == len(nodes_containing(a, b))
        if b >= 2:
            assert (z3.simplify(z3.substitute(jc, *sub)).as_long()
                    == released_node_count(a, b)), (a, b)


def test_pftal_tree_inputs_match_the_learners() -> None:
    rng = np.random.default_rng(7)
    L, H, R = 1.0, 0.05, 1.0
    f = quadratic_loss_1d("f", lipschitz=L, strong_convexity=H, radius=R)
    w = real("w")
    cls = LossClass("squared", Ball(1, R), L, H)
    mu = PFTAL(Ball(1, R), H, L, 1.0, 2).tree_bound
    expr = st.clip(f.grad(w), -mu, mu)
    for _ in range(N_POINTS // 3):
        loss = _random_member(rng, cls, H)
        wv = rng.uniform(-R, R)
        learner = PFTAL(Ball(1, R), H, L, 1.0, 2, initial_point=np.array([wv]), record=True)
        learner.reset(1, np.random.default_rng(0))
        learner.learn(loss)
        code = learner.tree.inputs[0, 0, 0]
        assert evaluate(expr, {w: wv, **_assign(f, loss)}) == pytest.approx(code, abs=TOL)
    # PFTAL-convex: clip(g + H w, mu)
    Hc, Rc = 0.5, 0.05
    g = real("g")
    for reading in ("lipschitz+H|C|", "lipschitz"):
        mu = PFTALConvex(Ball(1, Rc), L, Hc, 1.0, 2, tree_bound=reading).tree_bound
        expr = st.clip(g + z3.RealVal(Fraction(Hc)) * w, -mu, mu)
        for _ in range(20):
            gv, wv = rng.uniform(-L, L), rng.uniform(-Rc, Rc)
            learner = PFTALConvex(Ball(1, Rc), L, Hc, 1.0, 2, tree_bound=reading,
                                  initial_point=np.array([wv]), record=True)
            learner.reset(1, np.random.default_rng(0))
            learner.learn(LinearLoss(np.array([gv])))
            assert evaluate(expr, {g: gv, w: wv}) == pytest.approx(learner.tree.inputs[0, 0, 0],
                                                                     abs=TOL)


# ---------------------------------------------------------------------------------------------
# 2. Fast subset of solver verdicts (each call well under a second)
# ---------------------------------------------------------------------------------------------


def _status(lemmas, timeout_s: float = 30.0) -> dict[str, tuple[str, float | None]]:
    out = {}
    for lem in lemmas:
        r = check_lemma(lem, timeout_s)
        json.dumps(r.to_lemma_check().to_dict(), allow_nan=False)  # reports can save it
        out[lem.statement] = (r.status, None if r.replay is None else r.replay.ratio)
    return out


def test_fast_subset_tree_lemmas() -> None:
    res = _status(jkt.private_sum_node_lemmas(1) + jkt.node_count_lemmas()
                  + st.pftal_node_lemmas() + [st.leaf_count_lemma(), st.input_bound_lemma()])
    by_prefix = lambda p: [v for k, v in res.items() if k.startswith(p)]  # noqa: E731
    # Lemma 6's R: refuted, replayed through the real tree (the change is up to 2R).
    (status, ratio), = by_prefix("Lemma 6")
    assert status == "smt-refuted" and 1.0 < ratio <= 2.0 + 1e-12
    assert by_prefix("PrivateSum node change")[0][0] == "smt-proved"
    # "at most log T nodes": refuted (floor(log2 T) + 1 > log2 T); floor(log2 T) + 1 proved.
    assert by_prefix("Theorem 11 proof")[0][0] == "smt-refuted"
    assert by_prefix("PrivateSum node count")[0][0] == "smt-proved"
    # ST13: mu refuted (2 mu needed), ceil(log2 T) + 1 nodes and the clipping bound proved.
    assert by_prefix("replacing one tree input")[0][0] == "smt-refuted"
    assert by_prefix("PFTAL node change")[0][0] == "smt-proved"
    assert by_prefix("changing one entry")[0][0] == "smt-proved"
    assert by_prefix("every input the tree receives")[0][0] == "smt-proved"


def test_fast_subset_arxiv_igd_lemma_is_refuted_by_replay() -> None:
    printed, _needed = jkt.igd_lemmas("arxiv")
    r = check_lemma(printed, 30)
    assert r.status == "smt-refuted"
    assert r.replay.details["class_violations"] == [[], []]  # both losses are class members
    assert r.replay.ratio > 1.0


# ---------------------------------------------------------------------------------------------
# 3. The whole tier
# ---------------------------------------------------------------------------------------------

#: Expected SMT verdicts (statement prefix, status); the sampled checks agree where they exist
#: (see ``benchmarks/smt_lemmas.py``, which prints the comparison).
EXPECTED = [
    ("Lemma 4: IGD L2-sensitivity <= 2L/(alpha t)", "smt-proved"),
    ("Lemma 4: IGD L2-sensitivity <= 2L/t", "smt-refuted"),
    ("IGD, bound the PIGD accountant", "smt-proved"),
    ("Lemma 5", "smt-refuted"), ("GIGA, bound the PGIGA accountant", "smt-proved"),
    ("Lemma 6", "smt-refuted"), ("PrivateSum node change", "smt-proved"),
    ("Algorithm 4 line 8", "smt-refuted"), ("PQFTL u-tree", "smt-proved"),
    ("PQFTL V-tree", "smt-proved"),
    ("Theorem 11 proof", "smt-refuted"), ("Theorem 9 proof", "smt-refuted"),
    ("PrivateSum node count", "smt-proved"),
    ("||x~ - x~'||_2 <= 2 L' ln T / T", "smt-refuted"), ("POL, bound the accountant", "smt-proved"),
    ("replacing one tree input", "smt-refuted"), ("PFTAL node change", "smt-proved"),
    ("PFTAL-convex node change", "smt-proved"), ("every input the tree receives", "smt-proved"),
    ("changing one entry", "smt-proved"),
]


def _tier() -> list:
    return jkt.all_lemmas() + st.all_lemmas()


@pytest.mark.slow
@pytest.mark.parametrize("index", range(len(_tier())))
def test_whole_symbolic_tier(index: int) -> None:
    """Each encoding of the tier (one test per lemma, so ``-n 2`` shares them out)."""
    lem = _tier()[index]
    r = check_lemma(lem)
    json.dumps(r.to_lemma_check().to_dict(), allow_nan=False)
    if r.statement.startswith("Algorithm 4 line 7"):  # V-tree, printed R^2: true in d = 1 only
        assert r.status == ("smt-proved" if "[d = 1" in r.statement else "smt-refuted")
        return
    if r.statement.startswith("Assumption (1)"):  # a true lemma the solver may not decide in time
        assert r.status in ("smt-proved", "unknown"), r.reason
        return
    expected = [s for p, s in EXPECTED if r.statement.startswith(p)]
    assert expected, r.statement
    assert r.status == expected[0], (r.statement, r.reason)
    if r.status == "smt-refuted":
        assert r.replay is not None and r.replay.ratio > 1.0


# ---------------------------------------------------------------------------------------------
# 4. SMT verdicts next to the sampled checks, in the bundled claims' golden audits
# ---------------------------------------------------------------------------------------------


def test_every_smt_refutation_in_the_golden_audits_pairs_with_a_sampled_check() -> None:
    """Each SMT refutation agrees in kind with the sampled check of the same statement, or the
    report explains the disagreement (agreement_findings): the two kinds of evidence cross-check."""
    import glob
    from pathlib import Path

    from dpaudit.formal.smt import statement_base

    records = sorted(glob.glob(str(Path(__file__).with_name("golden") / "*.json")))
    refutations, paired_proofs = 0, 0
    for path in records:
        with open(path) as fh:
            record = json.load(fh)
        sampled = {}
        for lem in record["lemmas"]:
            if lem["method"] == "sampled":
                sampled.setdefault(statement_base(lem["statement"]), set()).add(lem["status"])
        for lem in record["lemmas"]:
            if lem["method"] == "smt-proved" and statement_base(lem["statement"]) in sampled:
                paired_proofs += 1  # e.g. COLT's Lemma 4, ST13's clipping: sampled holds too
            if lem["method"] != "smt-refuted":
                continue
            refutations += 1
            base = statement_base(lem["statement"])
            assert base in sampled, (path, base)  # the refuted statement is also sampled
            assert lem["counterexample"]["replayed"] is True and lem["worst_ratio"] > 1.0
            if "violated" not in sampled[base]:  # the report must say why they differ
                assert any(f.startswith(f"'{base}': SMT refutes it") for f in record["findings"])
    assert refutations >= 20  # the JKT12 and ST13 claims carry their SMT refutations
    assert paired_proofs >= 5  # and proofs paired with the sampled check of the same words
