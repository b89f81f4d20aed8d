"""Deprecated: ``dpaudit.audits.empirical`` moved to :mod:`dpaudit.blackbox.empirical_audit` (removed in the next release).

Importing this module warns once; every name (public or private) is looked up in the new
modules dpaudit.blackbox.empirical_audit, dpaudit.blackbox.result, dpaudit.blackbox.sampling.
"""

from dpaudit.audits import _forward

__getattr__, __dir__ = _forward(__name__, ('dpaudit.blackbox.empirical_audit', 'dpaudit.blackbox.result', 'dpaudit.blackbox.sampling'))
