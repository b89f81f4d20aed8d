"""Deprecated: ``dpaudit.audits.accounting`` moved to :mod:`dpaudit.formal.accounting` (removed in the next release).

Importing this module warns once; every name (public or private) is looked up in the new
modules dpaudit.formal.accounting, dpaudit.formal.accounting.closed_forms, dpaudit.formal.accounting.dp_accounting_bridge, dpaudit.formal.accounting.schedules.
"""

from dpaudit.audits import _forward

__getattr__, __dir__ = _forward(__name__, ('dpaudit.formal.accounting', 'dpaudit.formal.accounting.closed_forms', 'dpaudit.formal.accounting.dp_accounting_bridge', 'dpaudit.formal.accounting.schedules'))
