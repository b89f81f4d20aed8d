"""Deprecated: ``dpaudit.audits.power`` moved to :mod:`dpaudit.blackbox.power` (removed in the next release).

Importing this module warns once; every name (public or private) is looked up in the new
module dpaudit.blackbox.power.
"""

from dpaudit.audits import _forward

__getattr__, __dir__ = _forward(__name__, ('dpaudit.blackbox.power',))
