"""Deprecated: ``dpaudit.audits.symbolic`` moved to :mod:`dpaudit.formal.smt` (removed in the next release).

Importing this module warns once; every name (public or private) is looked up in the new
module dpaudit.formal.smt.
"""

from dpaudit.audits import _forward

__getattr__, __dir__ = _forward(__name__, ('dpaudit.formal.smt',))
