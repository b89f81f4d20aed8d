"""Deprecated: ``dpaudit.audits.learned_statistics`` moved to :mod:`dpaudit.blackbox.learned_statistics` (removed in the next release).

Importing this module warns once; every name (public or private) is looked up in the new
modules dpaudit.blackbox.learned_statistics, dpaudit.blackbox.fitters_binned, dpaudit.blackbox.fitters_location, dpaudit.blackbox.fitters_classifier.
"""

from dpaudit.audits import _forward

__getattr__, __dir__ = _forward(__name__, ('dpaudit.blackbox.learned_statistics', 'dpaudit.blackbox.fitters_binned', 'dpaudit.blackbox.fitters_location', 'dpaudit.blackbox.fitters_classifier'))
