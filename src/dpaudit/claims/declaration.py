"""The declaration protocol: what a paper (or a user) says about one claim, and nothing about how.

A :class:`Declaration` names the claim, its audited grid and, at each grid point, a frozen
:class:`PointPlan` (or a :class:`Skip`); the one claim driver (:mod:`dpaudit.claims.driver`) turns
the plans into evidence, a verdict and findings, identically for every declaration. The shape
follows dp-accounting's ``PrivacyAccountant`` (dp-accounting 0.6, ``privacy_accountant.py``): the
essentials are abstract (:meth:`Declaration.grid`, :meth:`Declaration.plan`), every other hook has
a default that does nothing, so the driver calls each hook directly instead of probing for it.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from dpaudit.claims.context import AuditContext, Budget
from dpaudit.claims.evidence import (EXACT, ExactKind, GridPoint, LemmaCheck, LemmaOutcome,
                                     PointEvidence, exact_kind_of)
from dpaudit.claims.model import PrivacyClaim
from dpaudit.claims.record import ClaimAudit
from dpaudit.greybox.replay import Mechanism

if TYPE_CHECKING:
    import numpy as np

__all__ = ["Mechanism", "EmpiricalPlan", "PointPlan", "Skip", "AddedPoints", "TestedPoint",
           "ClaimRun", "Declaration"]

#: A release under audit: ``mechanism(data, n, rng)`` returns ``n`` independent releases of
#: ``data`` (leading axis ``n``), every draw taken from ``rng``.


@dataclass(frozen=True, kw_only=True)
class EmpiricalPlan:
    """One black-box test (:func:`dpaudit.audit`) on a neighbouring pair.

    ``mechanism(data, n, rng)`` returns ``n`` independent releases (leading axis ``n``);
    ``statistic`` maps releases to row-wise scores (``None``: the engine learns one on its training
    split); ``statistic_name`` says in words what it is; ``samples`` overrides the budget's runs
    per input; ``pairs`` asks for the engine's candidate-pair search instead of ``data0``/``data1``.
    """

    mechanism: Mechanism
    data0: Any = None
    data1: Any = None
    statistic: Callable[[np.ndarray], np.ndarray] | None = None
    statistic_name: str = "the engine's learned statistic"
    what: str = "structured pair, likelihood-ratio statistic"
    samples: int | None = None
    train_fraction: float | None = None
    pairs: Sequence[tuple[Any, Any]] | None = None
    #: Pairs piloted before those of ``pairs`` (``audit(pair_seeds=...)``).
    pair_seeds: Sequence[tuple[Any, Any]] | None = None
    #: Put the audited pair, in one line, in the evidence (``PointEvidence.empirical["pair"]``).
    state_pair: bool = False


@dataclass(frozen=True, kw_only=True)
class PointPlan:
    """Everything known at one grid point before sampling.

    ``exact``: epsilon(claimed delta) of the release on the worst realisable pair constructed
    (formal evidence: above the claim it refutes it); ``exact_upper``: an upper value for that same
    pair (the empirical bound must stay below it; defaults to ``exact``); ``accountant``: the
    dp-accounting epsilon of the implemented noise under worst-case sensitivity (an upper bound over
    the class); ``curve()``: the privacy-curve series of this point (``{"deltas": [...],
    "epsilon_accountant": [...], "epsilon_exact": [...], ...}``) for the figure, computed from the
    same objects as the table; ``recommendation()``: the calibration that would deliver the claim;
    ``followups``: extra tested points (own parameters, own test) run when this point is the
    highest-ranked tested point; ``model``: paper-private state for the paper's hooks;
    ``exact_kind``: what ``exact`` is, ``"exact"`` (a closed form of the release on the pair) or
    ``"certified lower bound (numerical)"`` (the rigorous lower end of a numerical bracket, e.g.
    an optimistic privacy-loss distribution); reports, JSON and figures label it so;
    ``evidence``: what the point's numbers rest on (a :class:`~dpaudit.evidence.PointEvidence`;
    a mapping given here is read into one).
    """

    parameters: Mapping[str, Any]
    claimed_epsilon: float
    claimed_delta: float
    exact: float | None = None
    exact_kind: ExactKind = EXACT
    exact_upper: float | None = None
    accountant: float | None = None
    empirical: EmpiricalPlan | None = None
    curve: Callable[[], dict[str, Any]] | None = None
    recommendation: Callable[[], str | None] | None = None
    evidence: PointEvidence = field(default_factory=PointEvidence)
    followups: tuple["PointPlan", ...] = ()
    model: Any = None
    #: A declared law to test against the code's runs: ``law_test(alpha, seed)`` returns
    #: an object with ``rejected``, ``detail()``, ``power`` and ``to_dict()``. It is one test of the
    #: claim's Bonferroni family; when it rejects, an ``exact`` taken from that law
    #: (``evidence.exact_origin is EvidenceOrigin.DECLARED``) is dropped: it certifies nothing.
    law_test: Callable[[float, int], Any] | None = None
    #: The derived law the point's exact value rests on, checked against runs of the code:
    #: ``law_verification(alpha, seed)`` returns a
    #: :class:`~dpaudit.greybox.verification.LawVerification`. One test of the claim's family;
    #: a departure drops an ``exact`` derived from the code, and a clean pass states its residual.
    law_verification: Callable[[float, int], Any] | None = None
    #: A rigorous lower bound on the release's epsilon at the claimed delta that the user
    #: supplied (``dpaudit.Claim(lower_bound=...)``): it refutes a claim below it, labelled
    #: :data:`~dpaudit.evidence.USER_LOWER_BOUND_LABEL`, and never makes one hold.
    user_lower_bound: float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "evidence", PointEvidence.of(self.evidence))
        object.__setattr__(self, "exact_kind", exact_kind_of(self.exact_kind))

    def grid_point(self, lower_bound: float | None = None,
                   evidence: PointEvidence | Mapping[str, Any] | None = None) -> GridPoint:
        return GridPoint(dict(self.parameters), self.claimed_epsilon, self.claimed_delta,
                         self.exact, self.accountant, lower_bound,
                         self.evidence if evidence is None else PointEvidence.of(evidence),
                         self.exact_kind, self.user_lower_bound)

    def ratio(self) -> float:
        """Largest exact-or-accountant to claim ratio (ranks points for the empirical tests)."""
        return self.grid_point().worst_ratio()

    def upper_reference(self) -> float | None:
        """The smallest value an empirical lower bound must not exceed at this point."""
        vals = [v for v in ((self.exact_upper if self.exact_upper is not None else self.exact),
                            self.accountant) if v is not None]
        return min(vals) if vals else None


@dataclass(frozen=True)
class Skip:
    """A grid point that is not audited (no share of alpha), and why."""

    parameters: Mapping[str, Any]
    reason: str


@dataclass(frozen=True)
class AddedPoints:
    """What ``more_points`` returns: points derived from the planned ones (audited like the grid's)
    and notes for the declaration's ``findings`` hook (``ClaimRun.notes``)."""

    plans: tuple[PointPlan, ...] = ()
    notes: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class TestedPoint:
    """A point whose empirical test ran: its plan, the engine's result and its rank."""

    index: int
    plan: PointPlan
    result: Any  # dpaudit.blackbox.empirical_audit.AuditResult
    rank: int


@dataclass
class ClaimRun:
    """What a declaration's ``findings`` hook sees: the audited points (in order), their plans,
    the tests that ran, the lemma outcome, the skipped points and the context."""

    claim: PrivacyClaim
    ctx: AuditContext
    plans: list[PointPlan]
    points: list[GridPoint]
    tested: list[TestedPoint]
    lemmas: list[LemmaCheck]
    skipped: list[Skip]
    notes: Mapping[str, Any] = field(default_factory=dict)

    def worst_index(self) -> int | None:
        audit = ClaimAudit(self.claim, self.points, self.lemmas)
        w = audit.worst_point()
        return None if w is None else next(i for i, p in enumerate(self.points) if p is w)



class Declaration(abc.ABC):
    """One claim as the claim driver audits it (see the module docstring).

    A subclass sets ``claim`` (a :class:`~dpaudit.claims.model.PrivacyClaim`: an attribute, a
    dataclass field or a property) and implements :meth:`grid` and :meth:`plan`; it overrides the
    other hooks only where the claim needs them. The driver calls every hook, in the order of its
    module docstring.
    """

    claim: PrivacyClaim

    @abc.abstractmethod
    def grid(self, ctx: AuditContext) -> Sequence[Mapping[str, Any]]:
        """The audited parameter points under ``ctx.budget`` (extremes of the stated range
        included)."""

    @abc.abstractmethod
    def plan(self, params: Mapping[str, Any], ctx: AuditContext) -> PointPlan | Skip:
        """Everything known at ``params`` before any sample is drawn, or why it is skipped."""

    def tested_points(self, budget: Budget) -> int | None:
        """How many points get an empirical test: ``None`` (the default) tests every point with an
        empirical plan; ``k`` the ``k`` points with the largest exact/accountant-to-claim
        ratio."""
        return None

    def more_points(self, plans: Sequence[PointPlan], ctx: AuditContext) -> AddedPoints:
        """Points derived from the planned ones (e.g. a proof-regime boundary); none by
        default."""
        return AddedPoints()

    def lemmas(self, ctx: AuditContext, parameters: Sequence[Mapping[str, Any]]) -> LemmaOutcome:
        """The sensitivity-lemma checks over the planned and skipped ``parameters``; none by
        default (every lemma of the claim is then reported as not checked)."""
        return LemmaOutcome()

    def findings(self, run: ClaimRun) -> list[str]:
        """Claim-specific prose about a finished run; none by default."""
        return []
