"""Deprecated: ``dpaudit.audits.pair_search`` moved to :mod:`dpaudit.blackbox.pair_search` (removed in the next release).

Importing this module warns once; every name (public or private) is looked up in the new
module dpaudit.blackbox.pair_search.
"""

from dpaudit.audits import _forward

__getattr__, __dir__ = _forward(__name__, ('dpaudit.blackbox.pair_search',))
