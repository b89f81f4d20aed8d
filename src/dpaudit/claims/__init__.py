"""The claim machinery: what a claim is, how it is audited, and how its verdict is decided.

* :mod:`~dpaudit.claims.model`: a claim as immutable data (:class:`PrivacyClaim`, its
  :class:`Provenance` and :class:`SensitivityLemma` statements); re-exported here.
* :mod:`~dpaudit.claims.evidence`: the evidence records (:class:`~dpaudit.evidence.GridPoint`,
  :class:`~dpaudit.evidence.LemmaCheck`), re-exported from :mod:`dpaudit.evidence`, which sits below
  this package and :mod:`dpaudit.formal`.
* :mod:`~dpaudit.claims.verdict`: the verdict rules.
* :mod:`~dpaudit.claims.record`: :class:`~dpaudit.claims.record.ClaimAudit`, everything one audit
  of a claim produced.
* :mod:`~dpaudit.claims.context`: budgets and the :class:`~dpaudit.claims.context.AuditContext` an
  audit receives.
* :mod:`~dpaudit.claims.driver`: the one claim driver (grid -> evidence -> verdict).
* :mod:`~dpaudit.claims.registry`: the catalogue of auditable claims.

Who may import it: the papers, the public API (:mod:`dpaudit.api`), the reports, the CLI, the
pytest plugin and user code. It imports the evidence packages (:mod:`dpaudit.blackbox`,
:mod:`dpaudit.formal`) only from the driver and from the public
:class:`~dpaudit.claims.user_claims.Claim` (its noise schedules and lemma search), and never
:mod:`dpaudit.papers`. Importing this package loads the model only (cheap).
"""

from __future__ import annotations

from dpaudit.claims.model import (NeighbourRelation, ParameterRange, PrivacyClaim, Provenance,
                                  RangeReading, ReadingChoice, Release, SensitivityLemma,
                                  WindowBoundary, WindowScope)

__all__ = ["NeighbourRelation", "Release", "WindowBoundary", "WindowScope", "Provenance",
           "SensitivityLemma", "ReadingChoice", "RangeReading", "ParameterRange",
           "PrivacyClaim"]
