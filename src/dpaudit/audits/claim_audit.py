"""Deprecated: ``dpaudit.audits.claim_audit`` moved to :mod:`dpaudit.claims.record` (removed in the next release).

Importing this module warns once; every name (public or private) is looked up in the new
modules dpaudit.claims.record, dpaudit.evidence, dpaudit.claims.verdict.
"""

from dpaudit.audits import _forward

__getattr__, __dir__ = _forward(__name__, ('dpaudit.claims.record', 'dpaudit.evidence', 'dpaudit.claims.verdict'))
