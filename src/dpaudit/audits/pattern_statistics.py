"""Deprecated: ``dpaudit.audits.pattern_statistics`` moved to :mod:`dpaudit.blackbox.pattern_statistics` (removed in the next release).

Importing this module warns once; every name (public or private) is looked up in the new
module dpaudit.blackbox.pattern_statistics.
"""

from dpaudit.audits import _forward

__getattr__, __dir__ = _forward(__name__, ('dpaudit.blackbox.pattern_statistics',))
