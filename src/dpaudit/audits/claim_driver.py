"""Deprecated: ``dpaudit.audits.claim_driver`` moved to :mod:`dpaudit.claims.driver` (removed in the next release).

Importing this module warns once; every name (public or private) is looked up in the new
modules dpaudit.claims.driver, dpaudit.evidence.
"""

from dpaudit.audits import _forward

__getattr__, __dir__ = _forward(__name__, ('dpaudit.claims.driver', 'dpaudit.evidence'))
