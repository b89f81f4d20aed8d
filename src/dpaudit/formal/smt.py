"""SMT checks of one-step sensitivity lemmas: proofs and replayed counterexamples.

The lemma checks of :mod:`dpaudit.formal.sensitivity` are sampled: they can refute a lemma, never
establish one. The lemmas the privacy proofs rest on are, in one or two dimensions, statements
about piecewise polynomial arithmetic over bounded reals, which z3 (``z3-solver``, nonlinear real
arithmetic) decides. An :class:`SmtLemma` is **proved** when every :class:`Obligation` of its
``proof`` is ``unsat``; **refuted** only when a ``sat`` model of its ``refutation``, pinned to a
reachable state and replayed through the real Python implementation, exceeds the claim (so an
encoding that drifted from the code cannot raise a false alarm); anything else is ``unknown``,
never a pass. Each call runs the portfolio :data:`SOLVER` under deterministic work limits
(:data:`NLSAT_RLIMIT`, :data:`SMT_RLIMIT`), with :data:`DEFAULT_TIMEOUT_S` as a wall-clock net;
results convert to :class:`~dpaudit.claims.record.LemmaCheck`. Limits: d = 1 (some encodings
d = 2), exact reals against the code's floating point (replays use ``rtol``).

The obligations, the portfolio and the limits in full: docs/formal-notes.md#smt-lemma-checks; how
lemmas are sampled, proved or refuted: docs/formal-lemmas.md.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable, Iterable, Literal, Mapping, Sequence

import z3

from dpaudit._validation import check_positive
from dpaudit.evidence import LemmaCheck, LemmaOutcome

__all__ = ["DEFAULT_TIMEOUT_S", "SOLVER", "Obligation", "Replay", "SmtLemma", "SmtResult",
           "SmtStatus", "check_lemma", "clip", "absolute", "real", "evaluate", "to_float",
           "QuadraticLoss", "quadratic_loss_1d", "model_values", "statement_base",
           "agreement_findings", "with_smt_evidence", "smt_lemma_records",
           "claim_smt_evidence", "paper_smt_evidence", "tree_node_count_bv"]

#: Wall-clock safety bound on each solver call, in seconds. Answers are decided by the work
#: bounds below, not by the clock, so they do not depend on the machine's speed or load; only a
#: machine far slower than any we measured reaches this bound (then the answer is ``unknown``).
DEFAULT_TIMEOUT_S = 60.0
#: The solver and its version, named in every result.
SOLVER = (f"z3 {z3.get_version_string()} (nonlinear real arithmetic: nlsat after case splits, "
          f"then the default SMT solver)")
#: Deterministic work bounds (z3 resource units, ``rlimit``) of the two engines, tried in turn.
#: nlsat decides most encodings within 2e6 units (well under a second) where the default solver
#: needs 20-25 s (IGD's and GIGA's base steps); the default solver decides the bit-vector
#: encodings and the symbolic-constant IGD steps (up to 6.2e7 units, ~40 s) that nlsat does not.
#: Measured with ``benchmarks/smt_lemmas.py``; each bound is about 10x (nlsat) and 3x (default)
#: the largest amount any bundled encoding needs. Work bounds make each answer, model and
#: engine a function of the obligation alone, so reports reproduce byte for byte on any machine.
NLSAT_RLIMIT, SMT_RLIMIT = 20_000_000, 200_000_000

SmtStatus = Literal["smt-proved", "smt-refuted", "unknown"]


# ---------------------------------------------------------------------------------------------
# Building blocks
# ---------------------------------------------------------------------------------------------


def real(name: str) -> z3.ArithRef:
    """A symbolic real."""
    return z3.Real(name)


def absolute(a: z3.ArithRef) -> z3.ArithRef:
    """|a| as a piecewise definition."""
    return z3.If(a >= 0, a, -a)


def clip(a: z3.ArithRef, lower: Any, upper: Any) -> z3.ArithRef:
    """Projection onto the interval [lower, upper] (``np.clip``), piecewise."""
    return z3.If(a < lower, lower, z3.If(a > upper, upper, a))


def _num(x: float | int | Fraction | z3.ArithRef) -> z3.ArithRef:
    if isinstance(x, z3.ExprRef):
        return x
    if isinstance(x, float):
        return z3.RealVal(Fraction(x))  # exact binary value of the float
    return z3.RealVal(x)


@dataclass(frozen=True)
class QuadraticLoss:
    """A 1-D loss with gradient ``kappa w - b`` (symbolic), as the code computes it.

    The squared loss with ridge, ``1/2 (y - v w)^2 + rho/2 w^2``
    (:class:`~dpaudit.learners.losses.SquaredLoss`), has gradient ``(v^2 + rho) w - v y``: in terms
    of ``a = v^2``, ``b = v y`` and ``rho`` every
    quantity the learners compute is a rational function, and the class membership the code
    checks (:meth:`LossClass.violations`: ``(|y| + |v| D)|v| + rho D <= L``, ``rho >= alpha``)
    is linear: ``|b| + (a + rho) D <= L``. Any ``a > 0`` with any ``b`` is realised by
    ``v = sqrt(a)``, ``y = b / sqrt(a)``; ``a = 0`` needs ``b = 0``.
    """

    name: str
    a: z3.ArithRef
    b: z3.ArithRef
    rho: z3.ArithRef
    constraints: tuple[z3.BoolRef, ...]

    @property
    def kappa(self) -> z3.ArithRef:
        """The curvature ``v^2 + rho``."""
        return self.a + self.rho

    def grad(self, w: z3.ArithRef) -> z3.ArithRef:
        return self.kappa * w - self.b

    def variables(self) -> dict[str, z3.ArithRef]:
        return {f"{self.name}.a": self.a, f"{self.name}.b": self.b, f"{self.name}.rho": self.rho}

    def realise(self, values: Mapping[str, float]) -> dict[str, float]:
        """``v``, ``y``, ``ridge`` of a :class:`~dpaudit.learners.losses.SquaredLoss` with these
        symbolic values."""
        a, b, rho = (values[f"{self.name}.{k}"] for k in ("a", "b", "rho"))
        a = max(a, 0.0)
        v = math.sqrt(a)
        y = b / v if v > 0 else 0.0
        return {"v": v, "y": y, "ridge": rho}


def quadratic_loss_1d(name: str, *, lipschitz: Any, strong_convexity: Any, radius: Any,
                      smoothness: Any | None = None) -> QuadraticLoss:
    """A symbolic 1-D squared loss with ridge in the declared class (see :class:`QuadraticLoss`).

    ``lipschitz`` L, ``strong_convexity`` alpha (the ridge is >= alpha), ``radius`` D (the
    domain's radius, as in the code's Lipschitz bound), ``smoothness`` L_G (optional: ``v^2 + rho
    <= L_G``, GIGA's gradient-Lipschitz constant). Constants may be numbers or symbolic reals.
    """
    a, b, rho = real(f"{name}.a"), real(f"{name}.b"), real(f"{name}.rho")
    L, alpha, D = _num(lipschitz), _num(strong_convexity), _num(radius)
    cons = [rho >= alpha, a >= 0, z3.Or(a > 0, b == 0),
            absolute(b) + (a + rho) * D <= L]
    if smoothness is not None:
        cons.append(a + rho <= _num(smoothness))
    return QuadraticLoss(name, a, b, rho, tuple(cons))


# ---------------------------------------------------------------------------------------------
# Evaluation (differential tests) and models
# ---------------------------------------------------------------------------------------------


def to_float(v: z3.ExprRef) -> float:
    """A z3 numeral (rational or algebraic) as the nearest float."""
    if z3.is_rational_value(v):
        return float(Fraction(v.numerator_as_long(), v.denominator_as_long()))
    if z3.is_algebraic_value(v):
        approx = v.approx(30)
        return float(Fraction(approx.numerator_as_long(), approx.denominator_as_long()))
    if z3.is_int_value(v) or z3.is_bv_value(v):
        return float(v.as_long())
    if z3.is_true(v):
        return 1.0
    if z3.is_false(v):
        return 0.0
    raise ValueError(f"not a numeral: {v!r}")


def evaluate(expr: z3.ExprRef, assignment: Mapping[z3.ExprRef, float]) -> float:
    """The value of ``expr`` with every variable of ``assignment`` replaced by its (exact) value.

    Floats are substituted exactly (as the rationals they are), so the result is the exact real
    value of the model at that floating-point input, rounded once to a float.
    """
    subs = [(var, _num(float(val)) if isinstance(val, (int, float)) else _num(val))
            for var, val in assignment.items()]
    out = z3.simplify(z3.substitute(expr, *subs))
    try:
        return to_float(out)
    except ValueError:
        raise ValueError(f"expression not fully evaluated (free variables left?): {out}") from None


def model_values(model: z3.ModelRef, variables: Mapping[str, z3.ExprRef]) -> dict[str, float]:
    """The model's values of the named variables, as floats."""
    return {k: to_float(model.eval(v, model_completion=True)) for k, v in variables.items()}


# ---------------------------------------------------------------------------------------------
# Lemmas and results
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Obligation:
    """One solver call: does some assignment satisfy ``constraints`` and ``violation``?

    ``variables`` name the quantities reported from a model (and passed to the replay).
    """

    name: str
    constraints: tuple[z3.BoolRef, ...]
    violation: z3.BoolRef
    variables: Mapping[str, z3.ExprRef] = field(default_factory=dict)
    #: False: skip the nlsat engine (for encodings it is known not to decide in its share of the
    #: time, e.g. IGD's base step with symbolic L, alpha, D): the default solver gets it all.
    nlsat_first: bool = True


@dataclass(frozen=True)
class Replay:
    """A counterexample run through the real implementation, in floating point."""

    observed: float
    claimed: float
    details: Mapping[str, Any] = field(default_factory=dict)

    @property
    def ratio(self) -> float:
        if self.claimed > 0:
            return self.observed / self.claimed
        return math.inf if self.observed > 0 else 0.0


ReplayFn = Callable[[Mapping[str, float]], Replay]


@dataclass(frozen=True)
class SmtLemma:
    """A lemma as SMT obligations (docs/formal-notes.md#smt-lemma-checks).

    ``statement``: the lemma in words (as in the claim); ``encoding``: what was encoded (class,
    domain, dimension, constants), named in every result; ``proof``: all ``unsat`` => proved;
    ``refutation``: ``sat`` => a counterexample passed to ``replay`` (values of its
    ``variables``), which must return the real implementation's observed and claimed values.
    """

    statement: str
    encoding: str
    proof: tuple[Obligation, ...] = ()
    refutation: Obligation | None = None
    replay: ReplayFn | None = None
    dimension: int = 1

    def __post_init__(self) -> None:
        if not self.proof and self.refutation is None:
            raise ValueError("an SmtLemma needs proof obligations or a refutation query")
        if self.refutation is not None and self.replay is None:
            raise ValueError("a refutation query needs a replay through the implementation")


@dataclass(frozen=True)
class SmtResult:
    """Outcome of :func:`check_lemma`.

    ``status``: ``"smt-proved"`` (every proof obligation unsat), ``"smt-refuted"`` (a
    counterexample whose replay through the implementation exceeds the claim) or ``"unknown"``
    (timeout, solver ``unknown``, or a satisfiable obligation without a replayed counterexample;
    ``reason`` says which). ``queries``: one record per solver call (name, answer, seconds).
    """

    statement: str
    status: SmtStatus
    encoding: str
    solver: str
    seconds: float
    queries: tuple[Mapping[str, Any], ...]
    reason: str
    counterexample: Mapping[str, float] | None = None
    replay: Replay | None = None
    dimension: int = 1
    timeout_s: float = DEFAULT_TIMEOUT_S

    def to_dict(self) -> dict[str, Any]:
        return {"statement": self.statement, "status": self.status, "encoding": self.encoding,
                "solver": self.solver, "seconds": round(self.seconds, 3),
                "queries": [dict(q) for q in self.queries], "reason": self.reason,
                "counterexample": None if self.counterexample is None
                else dict(self.counterexample),
                "replay": None if self.replay is None else
                {"observed": self.replay.observed, "claimed": self.replay.claimed,
                 "ratio": _json(self.replay.ratio), **dict(self.replay.details)},
                "dimension": self.dimension, "timeout_s": self.timeout_s}

    def to_lemma_check(self) -> LemmaCheck:
        """The engine's lemma record: ``method`` ``smt-proved`` / ``smt-refuted`` /
        ``smt-unknown``; status ``holds`` / ``violated`` / ``inconclusive``."""
        details = self.to_dict()
        if self.status == "smt-proved":
            return LemmaCheck(self.statement, "holds", None, 0, None, method="smt-proved",
                              details=details)
        if self.status == "smt-refuted":
            assert self.replay is not None
            cex = {"smt_model": dict(self.counterexample or {}),
                   "observed": self.replay.observed, "claimed": self.replay.claimed,
                   "ratio": _json(self.replay.ratio), "replayed": True,
                   **dict(self.replay.details)}
            return LemmaCheck(self.statement, "violated", self.replay.ratio, 0, cex,
                              method="smt-refuted", details=details)
        return LemmaCheck(self.statement, "inconclusive", None, 0, None, method="smt-unknown",
                          details=details)


def _json(x: float) -> float | str:
    return float(x) if math.isfinite(x) else ("inf" if x > 0 else "-inf")


def _nlsat_solver(ctx: z3.Context) -> z3.Solver:
    """z3's nonlinear real arithmetic decision procedure (nlsat, complete for polynomial real
    arithmetic) after splitting the piecewise definitions (``If``, ``Or``) into cases."""
    split = z3.Repeat(z3.OrElse(z3.Then("split-clause", "simplify", ctx=ctx),
                                z3.Tactic("skip", ctx), ctx=ctx), ctx=ctx)
    return z3.Then("simplify", split, "purify-arith", "elim-term-ite", "qfnra-nlsat",
                   ctx=ctx).solver()


def _run(make: Callable[[z3.Context], z3.Solver], ob: Obligation, rlimit: int, timeout_s: float
         ) -> tuple[str, dict[str, float] | None, str]:
    """One engine on ``ob`` in a fresh z3 context (the obligation translated into it), so that
    the answer and the model depend on the obligation alone, not on what the process asked z3
    before (z3's search order follows its term ids): audits reproduce byte for byte."""
    ctx = z3.Context()
    solver = make(ctx)
    solver.set("rlimit", rlimit)
    solver.set("timeout", max(1, int(round(timeout_s * 1000))))
    solver.add(*[c.translate(ctx) for c in ob.constraints])
    solver.add(ob.violation.translate(ctx))
    try:
        answer = solver.check()
    except z3.Z3Exception as exc:  # a tactic that does not apply (e.g. bit-vectors for nlsat)
        return "unknown", None, f"solver error: {exc}"
    if answer == z3.sat:
        variables = {k: v.translate(ctx) for k, v in ob.variables.items()}
        return "sat", model_values(solver.model(), variables), ""
    if answer == z3.unsat:
        return "unsat", None, ""
    return "unknown", None, solver.reason_unknown()


def _solve(ob: Obligation, timeout_s: float
           ) -> tuple[str, dict[str, float] | None, float, str, str]:
    """Decide one obligation: a portfolio of two z3 engines run one after the other
    (:data:`SOLVER`), each within its work bound (:data:`NLSAT_RLIMIT`, :data:`SMT_RLIMIT`), both
    within ``timeout_s`` seconds of wall clock in total (a safety net). Returns (answer, the
    model's values of ``ob.variables`` when sat, seconds, reason_unknown, engine that answered)."""
    t0 = time.perf_counter()
    why = ""
    if ob.nlsat_first:
        answer, values, why = _run(_nlsat_solver, ob, NLSAT_RLIMIT, timeout_s)
        if answer != "unknown":
            return answer, values, time.perf_counter() - t0, "", "nlsat"
    rest = timeout_s - (time.perf_counter() - t0)
    if rest <= 0.001:
        return "unknown", None, time.perf_counter() - t0, why, "nlsat"
    answer, values, why2 = _run(lambda ctx: z3.Solver(ctx=ctx), ob, SMT_RLIMIT, rest)
    return answer, values, time.perf_counter() - t0, why2, "smt"


def check_lemma(lemma: SmtLemma, timeout_s: float = DEFAULT_TIMEOUT_S, *,
                rtol: float = 1e-9) -> SmtResult:
    """Ask z3 about ``lemma``: refutation first (if any), then the proof obligations.

    A counterexample counts only if its replay through the implementation exceeds the claim by
    more than ``rtol`` (relative). Every solver call is bounded by ``timeout_s`` seconds.
    """
    timeout_s = check_positive(timeout_s, "timeout_s")
    if not isinstance(lemma, SmtLemma):
        raise TypeError(f"lemma must be an SmtLemma, got {type(lemma).__name__}")
    t0 = time.perf_counter()
    queries: list[dict[str, Any]] = []
    notes: list[str] = []
    drifted = False

    def done(status: SmtStatus, reason: str, cex: Mapping[str, float] | None = None,
             replay: Replay | None = None) -> SmtResult:
        return SmtResult(lemma.statement, status, lemma.encoding, SOLVER,
                         time.perf_counter() - t0, tuple(queries), reason, cex, replay,
                         lemma.dimension, timeout_s)

    if lemma.refutation is not None:
        ob = lemma.refutation
        answer, values, sec, why, engine = _solve(ob, timeout_s)
        queries.append({"name": ob.name, "role": "refutation", "answer": answer,
                        "engine": engine, "seconds": round(sec, 3),
                        **({"reason_unknown": why} if why else {})})
        if answer == "sat":
            assert values is not None and lemma.replay is not None
            replay = lemma.replay(values)
            if replay.observed > replay.claimed * (1.0 + rtol):
                return done("smt-refuted", f"counterexample of '{ob.name}' replayed through the "
                            f"implementation: observed {replay.observed:.6g} > claimed "
                            f"{replay.claimed:.6g} (ratio {replay.ratio:.6g})", values, replay)
            drifted = True
            notes.append(f"the solver's counterexample to '{ob.name}' did not reproduce in the "
                         f"implementation (replayed ratio {replay.ratio:.6g}): the encoding and "
                         f"the code disagree there")
        elif answer == "unknown":
            notes.append(f"'{ob.name}': solver answered unknown ({why})")
    for ob in lemma.proof:
        if ob is lemma.refutation and queries and queries[0]["answer"] != "sat":
            # the same query as the refutation: its answer stands (no second solver call)
            answer, why = queries[0]["answer"], queries[0].get("reason_unknown", "")
            if answer != "unsat":
                return done("unknown", "; ".join(notes + [f"proof obligation '{ob.name}' timed "
                                                          f"out or is undecided ({why})"]))
            continue
        answer, values, sec, why, engine = _solve(ob, timeout_s)
        rec: dict[str, Any] = {"name": ob.name, "role": "proof", "answer": answer,
                               "engine": engine, "seconds": round(sec, 3)}
        if why:
            rec["reason_unknown"] = why
        if answer == "sat" and values:
            rec["model"] = values
        queries.append(rec)
        if answer != "unsat":
            what = ("is satisfiable (the proof step fails; no replayed counterexample)"
                    if answer == "sat" else f"timed out or is undecided ({why})")
            return done("unknown", "; ".join(notes + [f"proof obligation '{ob.name}' {what}"]))
    if drifted:
        return done("unknown", "; ".join(notes + ["the proof obligations are unsat, so the "
                                                  "encoding contradicts itself or the code"]))
    if not lemma.proof:
        return done("unknown", "; ".join(notes) or "no counterexample and no proof obligations")
    return done("smt-proved", f"all {len(lemma.proof)} proof obligations unsat over the encoded "
                f"class ({', '.join(ob.name for ob in lemma.proof)})"
                + (f"; {'; '.join(notes)}" if notes else ""))


# ---------------------------------------------------------------------------------------------
# SMT evidence next to the sampled checks of a claim audit
# ---------------------------------------------------------------------------------------------


def statement_base(statement: str) -> str:
    """The lemma statement without the `` [d = 1, ...]`` suffix naming what an SMT encoding
    covers: the key that pairs an SMT record with the sampled check of the same statement."""
    return statement.split(" [", 1)[0]


def _scope(statement: str) -> str:
    return statement[len(statement_base(statement)):].strip() or "[encoded class]"


def agreement_findings(sampled: Sequence[LemmaCheck], smt: Sequence[LemmaCheck]) -> list[str]:
    """Prose for a claim report: a summary of the SMT records and, for each statement checked
    both ways, whether the SMT verdict agrees in kind with the sampled one (refuted
    with violated, proved with holds), with the reason when it does not."""
    smt = [c for c in smt if c.method.startswith("smt-")]
    if not smt:
        return []
    n = {m: sum(1 for c in smt if c.method == m) for m in ("smt-proved", "smt-refuted",
                                                           "smt-unknown")}
    out = [f"SMT tier ({SOLVER}; exact real arithmetic, dimensions as stated per lemma): "
           f"{n['smt-proved']} proved over the encoded class, {n['smt-refuted']} refuted by a "
           f"counterexample replayed through the implementation, {n['smt-unknown']} undecided "
           f"within the time bound (never counted as a pass)."]
    by_base: dict[str, list[LemmaCheck]] = {}
    for c in smt:
        by_base.setdefault(statement_base(c.statement), []).append(c)
    sampled_by_base: dict[str, list[LemmaCheck]] = {}
    for c in sampled:
        if not c.method.startswith("smt-"):
            sampled_by_base.setdefault(statement_base(c.statement), []).append(c)
    agree = 0
    for base, recs in by_base.items():
        samp = sampled_by_base.get(base)
        if not samp:
            continue
        refuted = [c for c in recs if c.method == "smt-refuted"]
        proved = [c for c in recs if c.method == "smt-proved"]
        s_violated = [c for c in samp if c.status == "violated"]
        s_holds = [c for c in samp if c.status == "holds"]
        if refuted and s_violated or (proved and not refuted and s_holds and not s_violated):
            agree += 1
            if refuted and proved:
                yes = ", ".join(_scope(c.statement) for c in proved)
                no = ", ".join(_scope(c.statement) for c in refuted)
                out.append(f"'{base}': SMT proves it for {yes} and refutes it for {no}; the "
                           "sampled check (violated) agrees with the refutation.")
            continue
        if refuted and s_holds:
            r = refuted[0]
            out.append(f"'{base}': SMT refutes it ({_scope(r.statement)}, replayed ratio "
                       f"{r.worst_ratio:.6g}) where the sampled search found nothing in "
                       f"{s_holds[0].examples} examples: the solver covers the whole encoded "
                       "class, the search only its draws; the sampled 'holds' is no evidence "
                       "against the replayed counterexample.")
        elif proved and s_violated:
            ratio = s_violated[0].worst_ratio
            out.append(f"DISAGREEMENT on '{base}': SMT proves it for "
                       f"{', '.join(_scope(c.statement) for c in proved)} (exact reals), the "
                       f"sampled check found a counterexample (ratio "
                       f"{'n/a' if ratio is None else f'{ratio:.6g}'}): the sampled "
                       "counterexample lies outside the encoded class (another dimension, loss "
                       "family or constants, or floating-point rounding), or the encoding no "
                       "longer models the code; compare the two records.")
    compared = sum(1 for b in by_base if b in sampled_by_base)
    if compared:
        out[0] += (f" {agree} of the {compared} statements checked both ways agree in kind with "
                   "the sampled check.")
    return out


def smt_lemma_records(lemmas: Iterable[SmtLemma], timeout_s: float = DEFAULT_TIMEOUT_S
                      ) -> list[LemmaCheck]:
    """Check each lemma (:func:`check_lemma`) and return the engine's LemmaCheck records
    (``method`` smt-proved / smt-refuted / smt-unknown), in order (the records :func:`claim_smt_evidence` appends)."""
    return [check_lemma(lem, timeout_s).to_lemma_check() for lem in lemmas]


def with_smt_evidence(outcome: LemmaOutcome, smt: Sequence[LemmaCheck]) -> LemmaOutcome:
    """A paper's lemma outcome with its SMT records appended after the sampled checks (so the
    verdict reason, which names the first failed lemma, stays the sampled one) and the
    :func:`agreement_findings` added to its findings."""
    return LemmaOutcome(tuple(outcome.checks) + tuple(smt), outcome.sensitivity_trace,
                        tuple(outcome.findings) + tuple(agreement_findings(outcome.checks, smt)))


def claim_smt_evidence(outcome: LemmaOutcome, budget_name: str,
                       select: Callable[[bool], Iterable[SmtLemma]]) -> LemmaOutcome:
    """The lemmas hook of every paper's claim audit: ``outcome`` (its sampled checks) with the
    SMT records of ``select(thorough)`` appended and compared (:func:`with_smt_evidence`).
    ``thorough`` is true at the ``thorough`` budget, where papers add their symbolic-constant and
    longer unrolled encodings; the fixed-constant ones run at every budget (about a second each)."""
    return with_smt_evidence(outcome, smt_lemma_records(select(budget_name == "thorough")))


def paper_smt_evidence(lemmas_for_claim: Callable[..., Iterable[SmtLemma]], paper: str
                       ) -> Callable[[str, Any, LemmaOutcome], LemmaOutcome]:
    """The ``smt_evidence(claim_id, ctx, outcome)`` hook of a paper that selects a claim's SMT
    lemmas by ``lemmas_for_claim(claim_id, thorough=...)``.

    Parameters
    ----------
    lemmas_for_claim : callable
        The paper's ``lemmas_for_claim(claim_id, *, thorough)``.
    paper : str
        The paper's name, for the hook's docstring.

    Returns
    -------
    callable
        ``smt_evidence(claim_id, ctx, outcome)``: ``outcome`` (the claim's sampled lemma checks)
        with the SMT records of its lemmas appended and compared (:func:`claim_smt_evidence`);
        ``ctx`` is the claim driver's audit context, whose budget's name selects the thorough
        encodings.
    """
    def smt_evidence(claim_id: str, ctx: Any, outcome: LemmaOutcome) -> LemmaOutcome:
        return claim_smt_evidence(outcome, ctx.budget.name,
                                  lambda thorough: lemmas_for_claim(claim_id, thorough=thorough))

    smt_evidence.__doc__ = (f"A {paper} claim's sampled lemma checks (``outcome``) with the SMT "
                            f"records of ``lemmas_for_claim(claim_id)`` appended and compared at "
                            f"the budget of ``ctx`` (:func:`{__name__}.paper_smt_evidence`).")
    return smt_evidence


def tree_node_count_bv(leaf: z3.BitVecRef, T: z3.BitVecRef, levels: int, bits: int
                       ) -> z3.BitVecRef:
    """The number of used binary-tree nodes containing a leaf, over bit-vectors.

    ``len(nodes_containing(leaf, T))`` of :mod:`dpaudit.mechanisms.tree_aggregation` (the tree
    of ST13 Algorithm 2 and of pfcoco's standard tree): at level ``j`` the node containing the
    leaf has index ``m = ((leaf - 1) >> j) + 1`` and is used iff ``m`` is odd and ``m << j <= T``.

    Parameters
    ----------
    leaf, T : z3.BitVecRef
        The leaf (1-based) and the horizon, ``bits``-bit vectors.
    levels : int
        Tree levels counted (``j = 0 .. levels - 1``).
    bits : int
        Width of the bit-vectors.

    Returns
    -------
    z3.BitVecRef
        The number of used nodes containing ``leaf``.
    """
    one, zero = z3.BitVecVal(1, bits), z3.BitVecVal(0, bits)
    total = zero
    for j in range(levels):
        jj = z3.BitVecVal(j, bits)
        m = z3.LShR(leaf - one, jj) + one
        used = z3.And((m & one) == one, z3.ULE(m << jj, T))
        total = total + z3.If(used, one, zero)
    return total
