"""Which exact epsilon a point of a user claim rests on, and where it comes from.

At one grid point, for the declared neighbouring pairs:

* **derived from the code** (:data:`~dpaudit.greybox.derivation.DERIVED`): when the release's law
  can be derived by replay (:mod:`dpaudit.greybox.derivation`), each pair's exact epsilon comes from
  it. This is the evidence the point rests on whenever it exists, once the code's own runs confirm
  the law (:mod:`dpaudit.greybox.verification`, run by the driver in the claim's family).
* **declared law** (``Claim.exact``): the user's law; its epsilon is used only when no law is
  derived, and it is tested against the code's runs (:mod:`dpaudit.greybox.law_tests`, one test of
  the claim's Bonferroni family, run by the driver): a rejected law certifies nothing.
* **user-supplied** (``Claim.exact_value``): the user's number; when a law is derived, a value that
  differs from the derived epsilon is a finding (it does not describe the code) and certifies nothing.

:func:`exact_evidence` returns the chosen value, the record of where every kind of evidence came
from (``evidence_origin``: which is drawn from the code and which is declared) and findings.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from dpaudit.evidence import USER_SUPPLIED, EvidenceOrigin, PointEvidence
from dpaudit.evidence_records import DerivationRecord, EvidenceOrigins, ExactKind
from dpaudit.greybox.derivation import NotDerivable, PairLaw, derive_pair

__all__ = ["ExactChoice", "CodeEvidence", "exact_evidence", "DECLARED", "USER_SUPPLIED"]

DECLARED = EvidenceOrigin.DECLARED.value
#: Relative slack before a declared or user-supplied epsilon is said to differ from the derived one.
RTOL = 1e-6
#: The order the point's record of its exact evidence has always been written in.
_CODE_EVIDENCE_ORDER = ("derivation", "declared_vs_derived", "declared_exact",
                        "user_supplied_exact", "evidence_origin", "rng_guard")


@dataclass(frozen=True)
class ExactChoice:
    """The exact epsilon a point rests on: ``value`` (``kind`` as in ExactValue), ``upper``, the
    ``pair`` it is attained on, ``method`` and ``source`` (derived, declared law, user-supplied)."""

    value: float
    kind: ExactKind
    upper: float | None
    pair: tuple[Any, Any]
    method: str
    source: EvidenceOrigin


@dataclass
class CodeEvidence:
    """What :func:`exact_evidence` found: ``exact`` (the chosen value, or None), ``evidence`` (the
    point's record of it: ``derivation``, ``declared_vs_derived``, ``declared_exact``,
    ``user_supplied_exact``, ``origins``, ``rng_guard``), ``findings`` (sentences), ``derived``
    (pair index -> PairLaw)."""

    exact: ExactChoice | None
    evidence: PointEvidence
    findings: list[str] = field(default_factory=list)
    derived: dict[int, PairLaw] = field(default_factory=dict)
    #: The derived law of the pair the chosen exact value rests on (to verify on runs), if any.
    chosen_law: PairLaw | None = None
    #: Why the code's randomness is not owned by the replay (a guarded access), if it is not.
    guarded: str = ""


def _best(cands: list[ExactChoice]) -> ExactChoice | None:
    return max(cands, key=lambda c: c.value) if cands else None


def exact_evidence(mechanism: Callable[..., Any], pairs: Sequence[tuple[Any, Any]], *,
                   delta: float, seed: int, law: Any = None,
                   user_value: Callable[[Any, Any], float] | None = None,
                   derive: bool = True,
                   progress: Callable[[int, int, str], None] | None = None) -> CodeEvidence:
    """The exact evidence of one point (module docstring). ``law``: the declared law (or None);
    ``user_value(data0, data1)``: the user's epsilon (or None); ``derive``: try the replay."""
    derived: dict[int, PairLaw] = {}
    reasons: list[str] = []
    guarded = ""
    d_by_pair: dict[int, ExactChoice] = {}
    replays = 0
    if derive and pairs:
        for k, (d0, d1) in enumerate(pairs):
            pl = derive_pair(mechanism, d0, d1, seed=seed, progress=progress)
            if isinstance(pl, NotDerivable):
                reasons.append(pl.reason)
                if pl.guarded and not guarded:
                    guarded = pl.reason
                continue
            derived[k] = pl
            replays += pl.law0.replays + pl.law1.replays
            v = pl.epsilon(delta)
            d_by_pair[k] = ExactChoice(float(v.value), ExactKind(v.kind), float(v.upper),
                                       (d0, d1), v.method, EvidenceOrigin.DERIVED)
    d_cands = list(d_by_pair.values())
    l_cands: list[ExactChoice] = []
    if law is not None:
        for d0, d1 in pairs:
            v = law.epsilon(d0, d1, delta)
            l_cands.append(ExactChoice(float(v.value), ExactKind(v.kind), float(v.upper),
                                       (d0, d1), v.method, EvidenceOrigin.DECLARED))
    u_cands: list[ExactChoice] = []
    if user_value is not None:
        for d0, d1 in pairs:
            value = float(user_value(d0, d1))
            if math.isnan(value) or value < 0:
                raise ValueError(f"Claim.exact_value must return a number >= 0, got {value}")
            u_cands.append(ExactChoice(value, ExactKind.USER_SUPPLIED, None, (d0, d1),
                                       "supplied by the user", EvidenceOrigin.USER_SUPPLIED))
    findings: list[str] = []
    derivation: DerivationRecord | None = None
    if pairs and derive:
        first = next(iter(derived.values()), None)
        derivation = (DerivationRecord(derivable=False) if first is None else DerivationRecord(
            derivable=True, pairs=len(derived), of=len(pairs), family=first.family,
            noise_draws=int(first.law0.A.shape[1]), replays=replays))
        if reasons:
            derivation = derivation.with_(reason=reasons[0])
    differ: list[dict[str, Any]] = []
    for cands, origin in ((l_cands, EvidenceOrigin.DECLARED),
                          (u_cands, EvidenceOrigin.USER_SUPPLIED)):
        for k, c in enumerate(cands):
            if k not in d_by_pair:
                continue
            dv = d_by_pair[k]
            if abs(c.value - dv.value) > RTOL * max(abs(dv.value), 1e-12) and not (
                    math.isinf(c.value) and math.isinf(dv.value)):
                differ.append({"pair": k, "source": origin.value, "declared": c.value,
                               "derived": dv.value})
                if origin is EvidenceOrigin.USER_SUPPLIED:
                    findings.append(
                        f"The user-supplied exact epsilon {c.value:.4g} of declared pair {k + 1} "
                        f"differs from the {dv.value:.4g} derived from the code: it does not "
                        "describe the code and certifies nothing (the derived value is used).")
    best_derived, best_law, best_user = _best(d_cands), _best(l_cands), _best(u_cands)
    chosen = best_derived or best_law or best_user
    if chosen is None:
        exact_origin = "none"
    elif chosen.source is EvidenceOrigin.DERIVED:
        exact_origin = "drawn from the code (law derived by replaying the rng)"
    elif chosen.source is EvidenceOrigin.DECLARED:
        exact_origin = ("declared (the claim's law, tested against runs of the code)"
                        + ("; no law derived from the code: " + reasons[0] if reasons else ""))
    else:
        exact_origin = "declared (user-supplied number)"
    origins = EvidenceOrigins(
        empirical="drawn from the code (runs of the release, black box)",
        accountant="declared (the claim's noise schedule)", exact=exact_origin,
        declared_law=("declared, tested against runs of the code"
                      if law is not None and chosen is not best_law else None))
    ev = PointEvidence(
        derivation=derivation, declared_vs_derived=differ or None,
        declared_exact=None if best_law is None else best_law.value,
        user_supplied_exact=(best_user.value if best_user is not None and chosen is not best_user
                             else None),
        origins=origins, rng_guard=guarded or None, key_order=_CODE_EVIDENCE_ORDER)
    chosen_law = None
    if chosen is not None and chosen.source is EvidenceOrigin.DERIVED:
        chosen_law = next(derived[k] for k, c in d_by_pair.items() if c is chosen)
    return CodeEvidence(chosen, ev, findings, derived, chosen_law, guarded)
