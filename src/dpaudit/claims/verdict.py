"""The verdict rules: one verdict per claim from its evidence (AUDIT-METHOD section 2).

* ``"violated"``: some audited point has a formal counterexample (exact epsilon of a realisable
  neighbouring pair above the claim, beyond floating-point tolerance), a statistically valid
  empirical lower bound above the claim, or a user-supplied lower bound above it
  (``Claim.lower_bound``, treated like a certified lower bound; the sentence says it rests on a
  user-supplied number).
* ``"holds"``: no counterexample, every audited point has an accountant (or exact worst-case)
  epsilon at or below the claim, no exact epsilon, valid empirical lower bound or user-supplied
  lower bound above that accountant (an accountant below either describes other code and
  certifies nothing), and every sensitivity lemma held. A user-supplied lower bound never makes a
  claim hold: it can only refute one or take the accountant's certificate away.
* ``"inconclusive"``: otherwise (e.g. the accountant is above the claim but no realisable pair
  exceeds it, or a lemma failed without a privacy counterexample, or no accountant exists).

Lemma methods: an SMT counterexample (``method="smt-refuted"``, replayed through the
implementation) fails a lemma exactly like a shrunk Hypothesis counterexample; an SMT proof
(``"smt-proved"``) is named in the ``holds`` reason; an SMT call that timed out (``"smt-unknown"``,
status ``inconclusive``) is absent evidence: it never passes a lemma and does not by itself fail
one.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

from dpaudit.claims.evidence import (CERTIFIED, EXACT_TOLERANCE, NOT_CHECKED, NOT_COMPUTED,
                                     USER_ACCOUNTANT_LABEL, USER_EXACT_LABEL,
                                     USER_LOWER_BOUND_LABEL, USER_SUPPLIED, EvidenceOrigin,
                                     GridPoint, LemmaCheck,
                                     Verdict, exact_label, num)
from dpaudit.claims.formatting import format_parameters, format_value


def violation_region(points: list[GridPoint]) -> str:
    """Where the refuting points lie among the audited ones, in words.

    ``"at every audited point (9 of 9)"``; ``"only for epsilon >= 818 (3 of 9 audited points)"``
    when one numeric parameter separates the refuting points from the others (the first such
    parameter in the points' order); else ``"at 4 of 9 audited points"``. Empty when nothing
    refutes the claim.
    """
    bad = [p.counterexample() is not None for p in points]
    k, n = sum(bad), len(points)
    if k == 0:
        return ""
    if k == n:
        return f"at every audited point ({n} of {n})"
    names: list[str] = []
    for p in points:
        names += [x for x in p.parameters if x not in names]
    for name in names:
        vals = [p.parameters.get(name) for p in points]
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in vals):
            continue
        refuting = [v for v, b in zip(vals, bad) if b]
        other = [v for v, b in zip(vals, bad) if not b]
        if min(refuting) > max(other):
            return (f"only for {name} >= {format_value(min(refuting))} ({k} of {n} audited "
                    "points)")
        if max(refuting) < min(other):
            return (f"only for {name} <= {format_value(max(refuting))} ({k} of {n} audited "
                    "points)")
    return f"at {k} of {n} audited points"


def deciding_number(point: GridPoint) -> str:
    """What would decide an inconclusive point, in one sentence: the bracket the implemented
    release's epsilon is known to lie in there (largest lower evidence, the accountant above) and
    the claimed value inside it that decides the claim, with the empirical test's power at this
    budget when it ran."""
    c, acc = point.claimed_epsilon, point.epsilon_accountant
    lower: list[tuple[float, str]] = []
    if point.epsilon_exact is not None:
        lower.append((point.epsilon_exact, "certified lower bound of the worst pair found"
                      if point.exact_kind == CERTIFIED else "exact epsilon of the worst pair found"))
    if point.epsilon_lower_bound is not None:
        lower.append((point.epsilon_lower_bound, "empirical lower bound"))
    if point.epsilon_user_lower_bound is not None:
        lower.append((point.epsilon_user_lower_bound, f"{USER_LOWER_BOUND_LABEL}, {NOT_COMPUTED}"))
    if lower:
        lo, source = max(lower, key=lambda t: t[0])
        bracket = f"between {max(lo, 0.0):.4g} ({source}) and {acc:.4g} (accountant)"
    else:
        bracket = f"at most {acc:.4g} (accountant; no lower evidence at this point)"
    text = (f"The one number that decides it: the implemented release's epsilon there, known to "
            f"be {bracket}; above {c:.4g} the claim fails, at or below it the claim holds there.")
    emp = point.evidence.empirical
    power = emp.power if emp is not None else None
    if isinstance(power, Mapping) and power.get("detectable_epsilon") is not None:
        d = num(float(power["detectable_epsilon"]))
        if d is not None and math.isfinite(d):
            text += (f" (This budget's empirical test detects epsilon >= {d:.4g} there with "
                     f"probability {power.get('power', 0.8):g}.)")
        else:
            text += (" (With its chosen event this budget's empirical test detects no finite "
                     "epsilon there.)")
    return text


def _lower_bound_above_accountant(point: GridPoint) -> bool:
    """Whether the valid empirical lower bound exceeds the accountant's epsilon (beyond the
    floating-point tolerance of exact comparisons): the accountant is then refuted as an upper
    bound of this release, like an exact epsilon above it."""
    lb, acc = point.epsilon_lower_bound, point.epsilon_accountant
    return (lb is not None and acc is not None and math.isfinite(acc)
            and lb > acc * (1 + EXACT_TOLERANCE) + 1e-12)


def _user_supplied(points: list[GridPoint]) -> str:
    """`` (user-supplied at 2 of 3 points, ...)`` when a ``holds`` rests on numbers the user
    handed in (an accountant returned as a float, ``Claim.exact_value``): the sentence says so,
    not only the findings, so a reader of the verdict alone sees it."""
    acc = sum(1 for p in points if p.evidence.accountant_origin is EvidenceOrigin.USER_SUPPLIED)
    exact = sum(1 for p in points if p.epsilon_exact is not None
                and p.exact_kind == USER_SUPPLIED)
    parts = [f"{USER_ACCOUNTANT_LABEL} at {acc} of {len(points)} points" if acc else "",
             f"{USER_EXACT_LABEL} at {exact} of {len(points)} points" if exact else ""]
    text = "; ".join(x for x in parts if x)
    out = f" ({text}, {NOT_COMPUTED})" if text else ""
    trusted = sum(1 for p in points
                  if p.evidence.accountant_origin is EvidenceOrigin.TRUSTED_PRIMITIVES)
    if trusted:  # dpaudit's composition of laws the user named and dpaudit did not read
        out += (f" (accounted from the named primitives' laws at {trusted} of {len(points)} "
                "points: trusted primitives, not read from their code)")
    return out


def _certifies_nothing(points: list[GridPoint], above: list[GridPoint],
                       value: Any, what: Any) -> tuple[str, str]:
    """The inconclusive verdict when evidence at ``above`` exceeds the accountant there: the
    accountant does not describe this release and certifies nothing. ``value(p)`` is the evidence
    that exceeds it, ``what(p)`` how the sentence names it."""
    p = max(above, key=lambda q: value(q) / max(q.epsilon_accountant, 1e-300))
    return ("inconclusive", f"No counterexample to the claim, but at "
            f"{format_parameters(p.parameters)} the {what(p)} exceeds the accountant's "
            f"{p.epsilon_accountant:.4g}, so the accountant does not describe this release "
            "and certifies nothing" + (f" (and at {len(above) - 1} other of the "
            f"{len(points)} audited points)" if len(above) > 1 else "") + ".")


#: Discrete outputs with at least this fraction of distinct outcomes among the training runs give
#: the black box no usable event (each outcome is seen about once on one input).
DISTINCT_OUTCOMES_NO_POWER = 0.99


def powerless_test(point: GridPoint) -> str | None:
    """Why the black-box test at ``point`` had no power at all, or None (it had some, or did not
    run).

    No power: its lower bound is 0 and no event separated the two inputs' outputs, because the
    scores never differed (no event was chosen), or the chosen event held on every test run of
    both inputs, or on none (an event that is the whole output space as sampled: e.g. every
    output distinct, so no outcome ever repeats and the only event with both rates estimable is
    "any outcome"), or discrete outputs whose training runs were (almost) all distinct outcomes
    (:data:`DISTINCT_OUTCOMES_NO_POWER`: a leak hidden in unrepeated labels). Such a test would report the same whatever the release leaked, so a
    ``holds`` resting on it says so (AUDIT-METHOD section 2: "where a check had no power, say so
    in the verdict sentence"). A test with a separating event but too few runs to reach the
    claim is weak, not powerless: its power statement says how weak.
    """
    emp = point.evidence.empirical
    if emp is None or emp.verdict is None:
        return None
    lb = num(emp.epsilon_lower_bound)
    if lb is None or lb > 0:
        return None
    stat, split = emp.statistic, emp.samples
    if (emp.output_kind == "discrete" and isinstance(stat, Mapping)
            and isinstance(split, Mapping)):
        outcomes, runs = stat.get("outcomes"), 2 * int(split.get("select") or 0)
        if isinstance(outcomes, int) and runs and outcomes >= DISTINCT_OUTCOMES_NO_POWER * runs:
            return (f"{outcomes} distinct outcomes in {runs} training runs: outputs (almost) "
                    "never repeat, so no event could be told apart")
    ev = emp.event
    if not isinstance(ev, Mapping) or ev.get("event") is None:
        return "the scores never differed between the inputs"
    test = ev.get("test")
    if not isinstance(test, Mapping):
        return None
    try:
        c0, c1, n0, n1 = (int(test[k]) for k in ("count0", "count1", "nobs0", "nobs1"))
    except (KeyError, TypeError, ValueError):
        return None
    if (c0 == n0 and c1 == n1) or (c0 == 0 and c1 == 0):
        return "no event separated the inputs (the chosen event held on every test run or none)"
    return None


def _no_power_clause(points: list[GridPoint]) -> str:
    """The sentence a ``holds`` gets when its black-box test had no power at some points."""
    bad = [(p, why) for p in points if (why := powerless_test(p)) is not None]
    if not bad:
        return ""
    p, why = bad[0]
    where = (f"at every audited point ({len(points)} of {len(points)})" if len(bad) == len(points)
             else f"at {len(bad)} of {len(points)} audited points")
    at = f"at {format_parameters(p.parameters)}, " if p.parameters else ""
    return (f" The black-box test had no power {where} ({at}{why}): it would have passed "
            "whatever the release leaked.")


def decide_verdict(points: list[GridPoint], lemmas: list[LemmaCheck]) -> tuple[Verdict, str]:
    """Apply the verdict rules of the module docstring; return (verdict, one-sentence reason).

    Lemmas with status :data:`NOT_CHECKED` are not evidence either way: they never turn a verdict
    into "inconclusive", and a "holds" reason says how many were not checked instead of claiming
    that every lemma held.
    """
    refuting = [p for p in points if p.counterexample() is not None]
    if refuting:  # state the strongest refutation (the report's worst point)
        p = max(refuting, key=lambda q: q.refutation_ratio())
        return "violated", (f"Violated {violation_region(points)}; strongest at "
                            f"{format_parameters(p.parameters)}: {p.counterexample()}.")
    if not points:
        return "inconclusive", "No parameter point was audited."
    # An accountant below the exact epsilon of a realisable pair is not an upper bound for this
    # release (the schedule it accounts for is not what the code does): it certifies nothing.
    inverted = [p for p in points if p.accountant_below_exact()]
    if inverted:
        return _certifies_nothing(points, inverted, lambda q: q.epsilon_exact,
                                  lambda q: f"{exact_label(q.exact_kind)} "
                                  f"{q.epsilon_exact:.4g} of a realisable pair")
    # Likewise a user-supplied lower bound above the accountant: the user's number and the
    # accountant cannot both be right, and dpaudit checks neither against the other.
    user_above = [p for p in points if p.accountant_below_user_lower_bound()]
    if user_above:
        return _certifies_nothing(points, user_above, lambda q: q.epsilon_user_lower_bound,
                                  lambda q: f"{USER_LOWER_BOUND_LABEL} "
                                  f"{q.epsilon_user_lower_bound:.4g} ({NOT_COMPUTED})")
    # Likewise a statistically valid empirical lower bound above the accountant: the
    # release's epsilon is above the accountant's with probability >= 1 - alpha.
    refuted = [p for p in points if _lower_bound_above_accountant(p)]
    if refuted:
        return _certifies_nothing(points, refuted, lambda q: q.epsilon_lower_bound,
                                  lambda q: f"empirical lower bound {q.epsilon_lower_bound:.4g}")
    no_acc = [p for p in points if p.epsilon_accountant is None]
    over = [p for p in points if p.epsilon_accountant is not None
            and p.epsilon_accountant > p.claimed_epsilon * (1 + EXACT_TOLERANCE)]
    checked = [lem for lem in lemmas if lem.status != NOT_CHECKED]
    unchecked = len(lemmas) - len(checked)
    # An SMT call that timed out is absent evidence, not a failed lemma (it never passes either).
    undecided = [lem for lem in checked if lem.status != "holds" and lem.method == "smt-unknown"]
    failed = [lem for lem in checked if lem.status != "holds" and lem.method != "smt-unknown"]
    # A false lemma the accountant does not rest on (it uses a sensitivity dpaudit proved) is a
    # gap in the paper's proof, not in the claim: it is reported, and "holds" stays possible.
    gap_lemmas = [lem for lem in failed if lem.proof_gap]
    bad_lemmas = [lem for lem in failed if not lem.proof_gap]
    if over:
        p = max(over, key=lambda q: q.epsilon_accountant / q.claimed_epsilon)
        return ("inconclusive", f"No realisable counterexample found, but the accountant gives "
                f"epsilon {p.epsilon_accountant:.4g} > claimed {p.claimed_epsilon:.4g} at "
                f"{format_parameters(p.parameters)}" + (f" (and at {len(over) - 1} other of the "
                f"{len(points)} audited points)" if len(over) > 1 else "") + ". "
                + deciding_number(p))
    if bad_lemmas:
        return ("inconclusive", f"No privacy counterexample found, but lemma "
                f"'{bad_lemmas[0].statement}' is {bad_lemmas[0].status}.")
    if no_acc:
        return ("inconclusive", f"No counterexample found, but {len(no_acc)} of {len(points)} "
                "points have no accountant bound to certify the claim.")
    held = len(checked) - len(undecided) - len(gap_lemmas)
    if unchecked or undecided:
        gaps = "; ".join(x for x in (
            f"{unchecked} of the claim's lemmas not checked" if unchecked else "",
            f"{len(undecided)} undecided by the SMT solver" if undecided else "") if x)
        lemma_text = (f"each of the {held} checked lemmas held ({gaps}; the lemma table says why)"
                      if held else f"no lemma was checked and held ({gaps}; the lemma table says "
                      "why)")
    elif gap_lemmas:
        lemma_text = (f"each of the {held} other checked lemmas held" if held
                      else "no other lemma was checked")
    else:
        lemma_text = "every lemma held" if checked else "the claim relies on no lemma"
    proved = sum(1 for lem in lemmas if lem.method == "smt-proved")
    if gap_lemmas:
        # Separate clauses and sentences, not a run of parentheses ("... lemma table)
        # (1 more such gap(s)) (6 proved by SMT ...)").
        g, more = gap_lemmas[0], len(gap_lemmas) - 1
        lemma_text += (f"; proof gap: the paper's lemma '{g.statement}' is {g.status}, but the "
                       f"accountant rests on {g.proof_gap}" + (
                           f"; {more} more proof gap{'s' if more > 1 else ''} of this kind "
                           f"{'are' if more > 1 else 'is'} in the lemma table" if more else ""))
        return "holds", (f"No counterexample at {len(points)} audited points; the accountant"
                         f"{_user_supplied(points)} is at or below the claim at every point and "
                         f"{lemma_text}."
                         + (f" {proved} of the lemmas {'were' if proved > 1 else 'was'} proved "
                            "by SMT over the encoded class." if proved else "")
                         + _no_power_clause(points))
    return "holds", (f"No counterexample at {len(points)} audited points; the accountant"
                     f"{_user_supplied(points)} is at or below the claim at every point and "
                     f"{lemma_text}"
                     + (f" ({proved} proved by SMT over the encoded class)." if proved else ".")
                     + _no_power_clause(points))
