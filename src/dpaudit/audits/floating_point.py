"""Deprecated: ``dpaudit.audits.floating_point`` moved to :mod:`dpaudit.formal.floating_point` (removed in the next release).

Importing this module warns once; every name (public or private) is looked up in the new
module dpaudit.formal.floating_point.
"""

from dpaudit.audits import _forward

__getattr__, __dir__ = _forward(__name__, ('dpaudit.formal.floating_point',))
