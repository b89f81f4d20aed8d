"""Lemma checks of Smith & Thakurta, NeurIPS 2013: what the privacy proof of App. B.1 relies on.

* The per-node sensitivity step (App. B.1, after eq. (11)): replacing one tree input moves every
  node containing it by at most the bound passed to the tree, checked with
  :func:`dpaudit.formal.sensitivity.check_sensitivity` on the tree inputs at fixed evaluation
  points (the situation the adaptive-composition argument conditions on).
* The structural properties the proof needs (Hypothesis over streams of any losses): clipping
  enforces the bound on every tree input; every node is noised once, at completion; a leaf lies in
  at most ``ceil(log2 T) + 1`` noised nodes; released sums are binary decompositions of completed
  nodes; the learner's release is a function of the tree's outputs (and, for the bandit learners,
  of the secret directions) and reads each loss only at the released point of its round.
* The law of the node noise itself (``||n|| ~ Gamma(p, s)``, uniform direction; KS tests).

Each claim's checks are gathered by one function returning the claim driver's
:class:`~dpaudit.claims.driver.LemmaOutcome`; every Hypothesis search is seeded with
``ctx.seed_for(claim_id, "lemma", ...)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import hypothesis
import numpy as np
from hypothesis import strategies as st
from scipy import stats

from dpaudit.claims.evidence import LemmaCheck
from dpaudit.claims.evidence import LemmaOutcome
from dpaudit.claims.formatting import fmt
from dpaudit.claims.context import AuditContext
from dpaudit.formal.sensitivity import LEMMA_SEARCH_SETTINGS, check_sensitivity
from dpaudit.learners.bandit_ftal import (
    PrivateBanditFTAL,
    PrivateBanditFTALConvex,
    project_shrunk,
    theorem6_schedule,
    theorem17_schedule,
)
from dpaudit.learners.domains import Ball
from dpaudit.learners.ftal import ftal_argmin
from dpaudit.learners.losses import LinearLoss, Loss, LossClass, RecordingLoss, SquaredLoss
from dpaudit.learners.pftal import PFTAL, PFTALConvex, theorem11_regularisation
from dpaudit.mechanisms.projections import clip_l2
from dpaudit.mechanisms.st13_tree_aggregation import (
    ST13TreeAggregator,
    st13_node_scale,
    st13_tree_levels,
)
from dpaudit.mechanisms.tree_aggregation import NodeNoise
from dpaudit.papers.st13.claims import NODE_RATIO_LEMMA
from dpaudit.papers.st13.exact import NORM_RTOL
from dpaudit.papers.st13.pairs import bandit_learner, e1

__all__ = ["noise_law_check", "structural_checks", "tree_structure_checks", "merge_structural",
           "node_sensitivity_check", "tree_lemmas", "pftal_lemmas", "pftal_convex_lemmas",
           "bandit_lemmas", "NOISE_LAW_LEVEL", "STRUCTURAL_MAX_T"]

#: Level of the KS tests of the noise law (Bonferroni-corrected over the tests of one check).
NOISE_LAW_LEVEL = 1e-3
#: Largest horizon used by the Hypothesis structural checks (they run the real learners).
STRUCTURAL_MAX_T = 24


def noise_law_check(d: int, T: int, bound: float, epsilon: float, samples: int,
                    rng: np.random.Generator, *, noise: NodeNoise | None = None) -> LemmaCheck:
    """The law of Algorithm 2's node noise as the learners use it (KS tests).

    With zero inputs, ``v_1`` is the noise of node ``[1]`` and ``v_2`` that of node ``[1, 2]``
    (each a single node). Tests: ``||n|| ~ Gamma(shape d, scale s)`` for both; the direction
    uniform on the sphere (``d = 1``: fair sign, binomial test; ``d >= 2``:
    ``(u_1 + 1) / 2 ~ Beta((d-1)/2, (d-1)/2)``, KS). The lemma is "violated" if any p-value is
    below ``1e-3`` / (number of tests).
    ``noise`` replaces the tree's node noise (default: the printed l2-Laplace); the law tested is
    always the printed one, of scale :func:`st13_node_scale` ``(bound, epsilon, T)``.

    Parameters
    ----------
    d
        Dimension of the nodes.
    T
        Horizon of the tree.
    bound
        The tree's input bound (with ``epsilon`` and ``T`` it sets the node scale).
    epsilon
        The tree's epsilon.
    samples
        Independent draws of each node's noise.
    rng
        Randomness of the draws.
    noise
        Node noise replacing the printed one; ``None``: the printed l2-Laplace.

    Returns
    -------
    LemmaCheck
        ``violated`` with the p-values when one is below the corrected level, else ``holds``.
    """
    n = max(200, int(samples))
    tree = ST13TreeAggregator(max(T, 2), d, bound, epsilon, n, rng, noise=noise)
    s = st13_node_scale(bound, epsilon, max(T, 2))
    draws = [tree.add(np.zeros(d)), tree.add(np.zeros(d))]
    pvalues: dict[str, float] = {}
    for name, v in zip(("node[1]", "node[1,2]"), draws):
        norms = np.linalg.norm(v, axis=1)
        pvalues[f"{name} norm ~ Gamma({d}, {s:.4g})"] = float(
            stats.kstest(norms, stats.gamma(a=d, scale=s).cdf).pvalue)
        if d == 1:
            positive = int((v[:, 0] > 0).sum())
            pvalues[f"{name} sign fair"] = float(stats.binomtest(positive, n).pvalue)
        else:
            u = v[:, 0] / norms
            pvalues[f"{name} direction uniform"] = float(
                stats.kstest((u + 1) / 2, stats.beta((d - 1) / 2, (d - 1) / 2).cdf).pvalue)
    level = NOISE_LAW_LEVEL / len(pvalues)
    ok = min(pvalues.values()) >= level
    statement = (f"Alg. 2 line 9 node noise (d = {d}): ||n||_2 ~ Gamma(shape d, scale "
                 f"mu(ceil(log2 T)+1)/eps = {s:.4g}), direction uniform on the sphere")
    return LemmaCheck(statement, "holds" if ok else "violated", None, 2 * n,
                      None if ok else {"pvalues": pvalues, "level": level})


@dataclass
class _StructuralOutcome:
    tried: int = 0
    failures: dict[str, dict[str, Any]] = field(default_factory=dict)


class _StructuralFailure(Exception):
    pass



def _unchecked_streams(d: int, max_T: int) -> st.SearchStrategy[list[Loss]]:
    """Streams of linear and squared losses with coefficients up to 1e3 (far outside every declared
    class: the structural properties must hold for any input)."""
    coef = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False, allow_subnormal=False)
    vec = st.lists(coef, min_size=d, max_size=d).map(np.array)
    linear = vec.map(LinearLoss)
    squared = st.tuples(vec, coef, st.floats(0.0, 10.0, allow_nan=False)).map(
        lambda a: SquaredLoss(a[0], a[1], ridge=a[2]))
    return st.lists(st.one_of(linear, squared), min_size=1, max_size=max_T)


def _tree_structure_failures(tree: ST13TreeAggregator) -> str | None:
    T = tree.t
    nodes = [draw.node for draw in tree.noise_log]
    if len(nodes) != len(set(nodes)):
        return "a node was noised more than once"
    if any(draw.t != draw.node.last for draw in tree.noise_log):
        return "a node was noised before or after it completed"
    noised = set(nodes)
    for t, used in enumerate(tree.released_nodes, start=1):
        if sum(n.size for n in used) != t or any(n not in noised or n.last > t for n in used):
            return f"v_{t} is not a sum of completed noised nodes covering [1, {t}]"
    for leaf in range(1, T + 1):
        if sum(1 for n in noised if n.contains(leaf)) > st13_tree_levels(tree.T):
            return f"leaf {leaf} lies in more than ceil(log2 T) + 1 noised nodes"
    return None


def structural_checks(kind: str, d: int, make_learner: Callable[[int], Any], examples: int,
                      seed: int, bound_of: Callable[[Any], float]) -> list[LemmaCheck]:
    """Hypothesis search for violations of the structural facts ST13's proof needs.

    Hypothesis search over streams (any losses, any ``T <= 24``) for violations of the structural
    properties the privacy proof needs; one :class:`LemmaCheck` per property.

    ``kind``: ``"full"`` (PFTAL: the learner reads ``grad f_t`` at released points) or ``"bandit"``
    (reads ``f_t`` at played points). ``make_learner(T)`` returns a private learner built with
    ``record=True``.

    Parameters
    ----------
    kind
        ``"full"`` or ``"bandit"``.
    d
        Dimension of the generated losses.
    make_learner
        ``make_learner(T)``: a private learner with ``record=True``.
    examples
        Hypothesis ``max_examples``.
    seed
        Seed of the search.
    bound_of
        The tree bound of a learner (what its inputs are clipped to).

    Returns
    -------
    list of LemmaCheck
        One check per property: input clipping, tree structure, post-processing.
    """
    outcome = _StructuralOutcome()
    names = {
        "input": "every input the tree receives has l2 norm <= the bound passed to it (clipping)",
        "tree": ("every node is noised exactly once, when it completes; every leaf lies in at most "
                 "ceil(log2 T) + 1 noised nodes; every release is a sum of completed nodes"),
        "post": ("post-processing: the release is a function of the tree's outputs"
                 + (" and the secret directions u_t" if kind == "bandit" else "")
                 + ", and each loss is read only at the released point of its round"),
    }

    def fail(key: str, detail: dict[str, Any]) -> None:
        outcome.failures[key] = detail

    @hypothesis.settings(max_examples=examples, **LEMMA_SEARCH_SETTINGS)
    @hypothesis.seed(seed)
    @hypothesis.given(_unchecked_streams(d, STRUCTURAL_MAX_T), st.integers(0, 2 ** 32 - 1))
    def search(stream: list[Loss], run_seed: int) -> None:
        outcome.tried += 1
        T = len(stream)
        spies = [RecordingLoss(f) for f in stream]
        learner = make_learner(T)
        out = learner.run(spies, 2, np.random.default_rng(run_seed))
        tree = learner.tree
        bad: list[str] = []
        detail = {"T": T, "run_seed": run_seed, "losses": [repr(f) for f in stream]}
        mu = bound_of(learner)
        if tree.max_input_norm > mu * (1 + NORM_RTOL):
            bad.append("input")
            fail("input", {**detail, "max_input_norm": tree.max_input_norm, "bound": mu})
        why = _tree_structure_failures(tree)
        if why is not None:
            bad.append("tree")
            fail("tree", {**detail, "reason": why})
        why = _replay_failure(kind, learner, out, spies)
        if why is not None:
            bad.append("post")
            fail("post", {**detail, "reason": why})
        if bad:
            raise _StructuralFailure(", ".join(bad))

    try:
        search()
    except _StructuralFailure:
        pass
    return [LemmaCheck(statement, "violated" if key in outcome.failures else "holds", None,
                       outcome.tried, outcome.failures.get(key))
            for key, statement in names.items()]


def _replay_failure(kind: str, learner: Any, out: np.ndarray,
                    spies: Sequence[RecordingLoss]) -> str | None:
    sums = learner.tree.released_sums
    T = out.shape[1]
    H, domain = learner.strong_convexity, learner.domain
    if kind == "full":
        S = out[:, 0].copy()
        for t in range(1, T):
            replay = ftal_argmin(S, sums[t - 1], t, H, domain)
            if not np.allclose(replay, out[:, t], rtol=1e-9, atol=1e-9 * max(1.0, domain.radius)):
                return f"w_{t + 1} differs from the replay of eq. (5) from the tree's sums"
            S += out[:, t]
        expected = "grad"
    else:
        centre = np.broadcast_to(learner.initial_point, out[:, 0].shape).copy()
        S = centre.copy()
        for t in range(T):
            if t:
                centre = project_shrunk(S / t - sums[t - 1] / (H * t), domain, learner.shrink)
                S = S + centre
            dist = np.linalg.norm(out[:, t] - centre, axis=1)
            if not np.allclose(dist, learner.sampling_radius, rtol=1e-9, atol=1e-12):
                return (f"w^_{t + 1} is not at distance beta from the centre replayed from the "
                        "tree's sums")
        expected = "value"
    for t, spy in enumerate(spies):
        kinds = [k for k, _ in spy.calls]
        if kinds != [expected] or not np.array_equal(spy.calls[0][1], out[:, t]):
            return (f"loss {t + 1} was read as {kinds} (expected one '{expected}' call at the "
                    "released point)")
    return None


def _fixed_points(d: int, R: float, T: int) -> np.ndarray:
    """Deterministic evaluation points for the per-node sensitivity check: the centre and points
    of the boundary along +-e_1 (and +-e_2), cycled."""
    base = [np.zeros(d), R * e1(d), -R * e1(d)]
    if d > 1:
        e2 = np.zeros(d)
        e2[1] = 1.0
        base += [R * e2, -R * e2]
    base.append(0.5 * R * e1(d))
    return np.array([base[t % len(base)] for t in range(T)])


def tree_structure_checks(examples: int, seed: int) -> list[LemmaCheck]:
    """Structural checks of ST13 Algorithm 2 alone, ``T <= 130``, inputs of any size (Hypothesis).

    Parameters
    ----------
    examples
        Hypothesis ``max_examples``.
    seed
        Seed of the search.

    Returns
    -------
    list of LemmaCheck
        One check per structural property of the tree.
    """
    failures: dict[str, dict[str, Any]] = {}
    tried = 0

    @hypothesis.settings(max_examples=examples, **LEMMA_SEARCH_SETTINGS)
    @hypothesis.seed(seed)
    @hypothesis.given(st.integers(1, 130), st.integers(1, 3),
                      st.floats(1e-3, 1e3, allow_nan=False), st.floats(0.0, 1e4, allow_nan=False))
    def search(T: int, d: int, mu: float, size: float) -> None:
        nonlocal tried
        tried += 1
        rng = np.random.default_rng(T)
        tree = ST13TreeAggregator(T, d, mu, 1.0, 2, rng, record=True)
        for _ in range(T):
            tree.add(rng.normal(size=(2, d)) * size)
        bad = False
        if tree.max_input_norm > mu * (1 + NORM_RTOL):
            failures["input"] = {"T": T, "d": d, "mu": mu, "max_input_norm": tree.max_input_norm}
            bad = True
        why = _tree_structure_failures(tree)
        if why is not None:
            failures["tree"] = {"T": T, "d": d, "reason": why}
            bad = True
        if bad:
            raise _StructuralFailure()

    try:
        search()
    except _StructuralFailure:
        pass
    return [
        LemmaCheck("every input the tree receives has l2 norm <= mu (clipping)",
                   "violated" if "input" in failures else "holds", None, tried,
                   failures.get("input")),
        LemmaCheck("every node is noised exactly once, when it completes; every leaf lies in at "
                   "most ceil(log2 T) + 1 noised nodes; every release is a sum of completed nodes",
                   "violated" if "tree" in failures else "holds", None, tried,
                   failures.get("tree")),
    ]


def merge_structural(lemmas: list[LemmaCheck]) -> list[LemmaCheck]:
    """Merge structural checks of the same statement run in several dimensions.

    Parameters
    ----------
    lemmas
        The checks, possibly several per statement.

    Returns
    -------
    list of LemmaCheck
        One per statement: violated if any run was (its counterexample kept), examples summed.
    """
    merged: dict[str, LemmaCheck] = {}
    for lem in lemmas:
        if lem.statement in merged:
            old = merged[lem.statement]
            status = "violated" if "violated" in (old.status, lem.status) else "holds"
            cex = old.counterexample if old.status == "violated" else lem.counterexample
            ratio = (None if old.worst_ratio is None and lem.worst_ratio is None
                     else max(x for x in (old.worst_ratio, lem.worst_ratio) if x is not None))
            merged[lem.statement] = LemmaCheck(lem.statement, status, ratio,
                                               old.examples + lem.examples, cex)
        else:
            merged[lem.statement] = lem
    return list(merged.values())


def node_sensitivity_check(trajectory_fn: Callable[[Sequence[Loss]], np.ndarray], bound: float,
                           loss_class: LossClass, examples: int, seed: int,
                           reading: str | None = None) -> tuple[LemmaCheck, dict[str, Any]]:
    """Hypothesis check that one replaced loss moves every tree input by <= bound.

    :data:`~dpaudit.papers.st13.claims.NODE_RATIO_LEMMA` for the tree inputs
    ``trajectory_fn(stream)`` (one row per round): every entry moves by at most ``bound`` when one
    loss of ``loss_class`` is replaced (Hypothesis, ``T`` in 1..8). Returns the check (its statement
    tagged with ``reading`` when given) and the trace for the sensitivity figure.

    Parameters
    ----------
    trajectory_fn
        ``trajectory_fn(stream)``: the tree inputs, one row per round.
    bound
        The claimed per-node bound.
    loss_class
        The declared loss class the replaced loss is drawn from.
    examples
        Hypothesis ``max_examples``.
    seed
        Seed of the search.
    reading
        The tree-bound reading the check is run under, appended to its statement.

    Returns
    -------
    tuple
        ``(LemmaCheck, trace)``: the check and the sensitivity figure's trace.
    """
    report = check_sensitivity(trajectory_fn, lambda t, T: bound, loss_class, T=(1, 8),
                               examples=examples, seed=seed, offset=0)
    statement = NODE_RATIO_LEMMA.statement
    check = report.to_lemma_check(statement)
    if reading is not None:
        check = LemmaCheck(f"{statement} [tree_bound = {reading}]", check.status,
                           check.worst_ratio, check.examples, check.counterexample)
    return check, report.trace(statement)


def _node_step_findings(checks: Sequence[LemmaCheck]) -> tuple[str, ...]:
    """One sentence per node-step check (its reading, if any, after the name)."""
    head = NODE_RATIO_LEMMA.statement
    return tuple(f"Per-node sensitivity step (Hypothesis){c.statement[len(head):]}: {c.status}, "
                 f"worst observed/claimed node shift {fmt(c.worst_ratio)} over {c.examples} "
                 "examples." for c in checks if c.statement.startswith(head))


def _outcome(checks: list[LemmaCheck], trace: dict[str, Any]) -> LemmaOutcome:
    return LemmaOutcome(tuple(checks), trace, _node_step_findings(checks))


def _noise_samples(ctx: AuditContext) -> int:
    return min(ctx.budget.samples, 20_000)


def _structural_examples(ctx: AuditContext) -> int:
    return max(10, ctx.budget.sensitivity_examples // 2)


def tree_lemmas(ctx: AuditContext, claim_id: str) -> LemmaOutcome:
    """The sampled lemma checks of ``st13/tree-aggregation`` (Algorithm 2).

    ``st13/tree-aggregation``: the node step on linear losses' gradients as tree inputs
    (``mu = 1``), Algorithm 2's structure over ``T <= 130`` and the noise law in ``d = 1, 3``.

    Parameters
    ----------
    ctx
        The claim driver's audit context (budget, seeds and generators per check).
    claim_id
        The claim's id (it keys the checks' seeds).

    Returns
    -------
    LemmaOutcome
        The checks, the sensitivity trace and one finding per node-step check.
    """
    cls = LossClass("linear", Ball(2, 1.0), lipschitz=1.0)
    node, trace = node_sensitivity_check(
        lambda fs: np.array([f.g for f in fs]), 1.0, cls, ctx.budget.sensitivity_examples,
        ctx.seed_for(claim_id, "lemma", "node-sensitivity"))
    checks = [node]
    checks += tree_structure_checks(ctx.budget.sensitivity_examples,
                                    ctx.seed_for(claim_id, "lemma", "tree-structure"))
    for d in (1, 3):
        checks.append(noise_law_check(d, 8, 1.0, 1.0, _noise_samples(ctx),
                                      ctx.rng(claim_id, "lemma", "noise", d)))
    return _outcome(checks, trace)


def pftal_lemmas(ctx: AuditContext, claim_id: str) -> LemmaOutcome:
    """The sampled lemma checks of ``st13/pftal`` (Algorithm 1).

    ``st13/pftal``: the node step on clipped gradients of H-strongly convex squared losses
    (``d = 2``, ``H = 0.05``, ``L = R = 1``), the learner's structure in ``d = 1, 2`` and the noise
    law in ``d = 1, 2``.

    Parameters
    ----------
    ctx
        The claim driver's audit context (budget, seeds and generators per check).
    claim_id
        The claim's id (it keys the checks' seeds).

    Returns
    -------
    LemmaOutcome
        The checks, the sensitivity trace and one finding per node-step check.
    """
    d, L, H, R = 2, 1.0, 0.05, 1.0
    mu = L
    pts = _fixed_points(d, R, 8)
    cls = LossClass("squared", Ball(d, R), lipschitz=L, strong_convexity=H)
    node, trace = node_sensitivity_check(
        lambda fs: np.array([clip_l2(f.grad(pts[t]), mu) for t, f in enumerate(fs)]), mu, cls,
        ctx.budget.sensitivity_examples, ctx.seed_for(claim_id, "lemma", "node-sensitivity"))
    structural: list[LemmaCheck] = []
    for dd in (1, 2):
        structural += structural_checks(
            "full", dd, lambda T, dd=dd: PFTAL(Ball(dd, R), H, L, 1.0, T, record=True),
            _structural_examples(ctx), ctx.seed_for(claim_id, "lemma", "structure", dd),
            lambda learner: learner.tree_bound)
    checks = [node] + merge_structural(structural)
    for dd in (1, 2):
        checks.append(noise_law_check(dd, 33, L, 1.0, _noise_samples(ctx),
                                      ctx.rng(claim_id, "lemma", "noise", dd)))
    return _outcome(checks, trace)


def pftal_convex_lemmas(ctx: AuditContext, claim_id: str) -> LemmaOutcome:
    """The sampled lemma checks of ``st13/pftal-convex`` (App. C).

    ``st13/pftal-convex``: the node step under both readings of the tree bound at small
    ``H ||C|| / L`` (where it is most stressed), the learner's structure and the noise law.

    Parameters
    ----------
    ctx
        The claim driver's audit context (budget, seeds and generators per check).
    claim_id
        The claim's id (it keys the checks' seeds).

    Returns
    -------
    LemmaOutcome
        The checks, the sensitivity trace and one finding per node-step check.
    """
    d, L, R = 2, 1.0, 0.05
    H = theorem11_regularisation(d, 33, 1.0)
    pts = _fixed_points(d, R, 8)
    cls = LossClass("linear", Ball(d, R), lipschitz=L)
    checks: list[LemmaCheck] = []
    trace: dict[str, Any] | None = None
    for tb, mu in (("lipschitz+H|C|", L + H * R), ("lipschitz", L)):
        node, tr = node_sensitivity_check(
            lambda fs, mu=mu: np.array([clip_l2(f.grad(pts[t]) + H * pts[t], mu)
                                        for t, f in enumerate(fs)]), mu, cls,
            ctx.budget.sensitivity_examples,
            ctx.seed_for(claim_id, "lemma", "node-sensitivity", tb), reading=tb)
        checks.append(node)
        trace = trace or tr
    structural: list[LemmaCheck] = []
    for dd in (1, 2):
        structural += structural_checks(
            "full", dd,
            lambda T, dd=dd: PFTALConvex(Ball(dd, R), L, H, 1.0, T, tree_bound="lipschitz",
                                         record=True),
            _structural_examples(ctx), ctx.seed_for(claim_id, "lemma", "structure", dd),
            lambda learner: learner.tree_bound)
    checks += merge_structural(structural)
    checks.append(noise_law_check(1, 33, L + H * R, 1.0, _noise_samples(ctx),
                                  ctx.rng(claim_id, "lemma", "noise", 1)))
    return _outcome(checks, trace)


def bandit_lemmas(ctx: AuditContext, claim_id: str, convex: bool) -> LemmaOutcome:
    """The sampled lemma checks of the bandit claims (Algorithm 3, App. E.3).

    ``st13/bandit-ftal(-convex)``: the node step on the bandit tree inputs
    ``(p / beta) f_t(w^_t) u_t`` (both readings of the tree bound for the convex learner), the
    learner's structure in ``d = 1, 2`` and the noise law.

    Parameters
    ----------
    ctx
        The claim driver's audit context (budget, seeds and generators per check).
    claim_id
        The claim's id (it keys the checks' seeds).
    convex
        The convex learner (``st13/bandit-ftal-convex``) rather than the strongly convex one.

    Returns
    -------
    LemmaOutcome
        The checks, the sensitivity trace and one finding per node-step check.
    """
    d, T, R, B = 2, 33, 1.0, 1.0
    u = e1(d)
    pts = _fixed_points(d, R, 8)
    checks: list[LemmaCheck] = []
    trace: dict[str, Any] | None = None
    if convex:
        sched = theorem17_schedule(d, T, R)
        H, beta = sched.regularisation, sched.beta
        readings = (("loss-bound", B), ("regularised", B + 0.5 * H * R * R))
        cls = LossClass("linear", Ball(d, R), lipschitz=B / R)  # |<g, w>| <= B on C
        for name, vb in readings:
            def traj(fs, vb=vb):
                vals = [np.clip(float(f.value(pts[t])) + 0.5 * H * float(pts[t] @ pts[t]), -vb, vb)
                        for t, f in enumerate(fs)]
                return np.array([(d / beta) * v * u for v in vals])

            node, tr = node_sensitivity_check(
                traj, d * vb / beta, cls, ctx.budget.sensitivity_examples,
                ctx.seed_for(claim_id, "lemma", "node-sensitivity", name), reading=name)
            checks.append(node)
            trace = trace or tr
    else:
        H = 0.04
        beta = theorem6_schedule(d, T, R, "oblivious").beta
        shift = 0.25 * H * R * R
        cls = LossClass("linear", Ball(d, R), lipschitz=(B - shift) / R)

        def traj(fs):
            # members f(w) = <g, w> + H/2 (|w|^2 - R^2/2), ||g|| <= (B - H R^2/4) / R: H-strongly
            # convex with |f| <= B on C
            vals = [np.clip(float(f.value(pts[t])) + 0.5 * H * float(pts[t] @ pts[t]) - shift,
                            -B, B) for t, f in enumerate(fs)]
            return np.array([(d / beta) * v * u for v in vals])

        node, trace = node_sensitivity_check(
            traj, d * B / beta, cls, ctx.budget.sensitivity_examples,
            ctx.seed_for(claim_id, "lemma", "node-sensitivity"))
        checks.append(node)
    structural: list[LemmaCheck] = []
    for dd in (1, 2):
        def make(Tn: int, dd: int = dd) -> PrivateBanditFTAL:
            if convex:
                return PrivateBanditFTALConvex(Ball(dd, R), 0.5, B, 0.25, 1.0, Tn, record=True)
            return PrivateBanditFTAL(Ball(dd, R), 0.5, B, 0.25, 1.0, Tn, record=True)

        structural += structural_checks("bandit", dd, make, _structural_examples(ctx),
                                        ctx.seed_for(claim_id, "lemma", "structure", dd),
                                        lambda learner: learner.tree_bound)
    checks += merge_structural(structural)
    mu1 = bandit_learner({"d": 1, "T": 33, "R": R, "B": B, "epsilon": 1.0, "H": 0.04,
                          "adversary": "oblivious", "tree_bound": "loss-bound"}, convex).tree_bound
    checks.append(noise_law_check(1, 33, mu1, 1.0, _noise_samples(ctx),
                                  ctx.rng(claim_id, "lemma", "noise", 1)))
    return _outcome(checks, trace)
