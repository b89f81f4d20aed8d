"""Deprecated: ``dpaudit.audits.sensitivity`` moved to :mod:`dpaudit.formal.sensitivity` (removed in the next release).

Importing this module warns once; every name (public or private) is looked up in the new
modules dpaudit.formal.sensitivity, dpaudit.hypothesis_seeding.
"""

from dpaudit.audits import _forward

__getattr__, __dir__ = _forward(__name__, ('dpaudit.formal.sensitivity', 'dpaudit.hypothesis_seeding'))
