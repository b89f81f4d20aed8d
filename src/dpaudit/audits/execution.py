"""Deprecated: ``dpaudit.audits.execution`` moved to :mod:`dpaudit.execution.executors` (removed in the next release).

Importing this module warns once; every name (public or private) is looked up in the new
module dpaudit.execution.executors.
"""

from dpaudit.audits import _forward

__getattr__, __dir__ = _forward(__name__, ('dpaudit.execution.executors',))
