"""The evidence records, re-exported from their home :mod:`dpaudit.evidence`.

The records sit below both :mod:`dpaudit.formal` (which produces them) and :mod:`dpaudit.claims`
(which decides on them), so the two packages do not import each other. This module keeps the
import path the bundled papers, the tests and user code have used (``from dpaudit.claims.evidence
import GridPoint``); it holds the same objects, not copies.
"""

from __future__ import annotations

from dpaudit.evidence import (CERTIFIED, DEFAULT_NOT_CHECKED, EXACT, EXACT_KINDS,
                              EXACT_SOURCE_KEYS, EXACT_TOLERANCE, AccountantSource,
                              EvidenceOrigin, ExactSource, PointEvidence,
                              LEMMA_METHODS, NOT_CHECKED, NOT_COMPUTED, USER_ACCOUNTANT_LABEL,
                              USER_EXACT_LABEL, USER_LOWER_BOUND_LABEL, USER_SUPPLIED,
                              GridPoint, LemmaCheck,
                              LemmaMethod, LemmaOutcome, LemmaStatus, Verdict, exact_label,
                              exact_kind_of, json_float, num)
from dpaudit.evidence_records import (BonferroniShare, DerivationRecord, EmpiricalRecord,
                                      EvidenceOrigins, ExactKind, InvarianceRecord, JsonRecord,
                                      NoiseFamily, PrimitivesRecord, SeverityEntry)

__all__ = ["CERTIFIED", "DEFAULT_NOT_CHECKED", "EXACT", "EXACT_KINDS", "EXACT_SOURCE_KEYS",
           "EXACT_TOLERANCE", "AccountantSource", "EvidenceOrigin", "ExactSource", "PointEvidence",
           "LEMMA_METHODS", "NOT_CHECKED", "NOT_COMPUTED", "USER_ACCOUNTANT_LABEL", "USER_EXACT_LABEL",
           "USER_LOWER_BOUND_LABEL", "USER_SUPPLIED", "GridPoint", "LemmaCheck", "LemmaMethod",
           "LemmaOutcome", "LemmaStatus", "Verdict", "exact_label", "json_float", "num",
           "exact_kind_of", "BonferroniShare", "DerivationRecord", "EmpiricalRecord",
           "EvidenceOrigins", "ExactKind", "InvarianceRecord", "JsonRecord", "NoiseFamily",
           "PrimitivesRecord", "SeverityEntry"]
