"""Deprecated: ``dpaudit.audits.registry`` moved to :mod:`dpaudit.claims.registry` (removed in the next release).

Importing this module warns once; every name (public or private) is looked up in the new
modules dpaudit.claims.registry, dpaudit.claims.context.
"""

from dpaudit.audits import _forward

__getattr__, __dir__ = _forward(__name__, ('dpaudit.claims.registry', 'dpaudit.claims.context'))
