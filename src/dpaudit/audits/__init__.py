"""Deprecated package: the engine moved to one package per kind of evidence.

``dpaudit.audits.<module>`` keeps working for one release through thin modules that warn
(``DeprecationWarning``) and forward every name to its new home:

======================================  =============================================================
old path                                new path
======================================  =============================================================
``dpaudit.audits.empirical``            ``dpaudit.blackbox.empirical_audit`` (``.result``, ``.sampling``)
``dpaudit.audits.confidence``           ``dpaudit.blackbox.confidence``
``dpaudit.audits.statistics``           ``dpaudit.blackbox.statistics``
``dpaudit.audits.learned_statistics``   ``dpaudit.blackbox.learned_statistics`` (``.fitters_*``)
``dpaudit.audits.pattern_statistics``   ``dpaudit.blackbox.pattern_statistics``
``dpaudit.audits.power``                ``dpaudit.blackbox.power``
``dpaudit.audits.sequential``           ``dpaudit.blackbox.sequential``
``dpaudit.audits.pair_search``          ``dpaudit.blackbox.pair_search``
``dpaudit.audits.accounting``           ``dpaudit.formal.accounting``
``dpaudit.audits.sensitivity``          ``dpaudit.formal.sensitivity``
``dpaudit.audits.strategies``           ``dpaudit.formal.strategies``
``dpaudit.audits.symbolic``             ``dpaudit.formal.smt``
``dpaudit.audits.floating_point``       ``dpaudit.formal.floating_point``
``dpaudit.audits.claim_audit``          ``dpaudit.claims.record`` (``.evidence``, ``.verdict``)
``dpaudit.audits.claim_driver``         ``dpaudit.claims.driver``
``dpaudit.audits.registry``             ``dpaudit.claims.registry`` (``.context``)
``dpaudit.audits.execution``            ``dpaudit.execution.executors``
======================================  =============================================================
"""

from __future__ import annotations

import importlib
import warnings
from typing import Any, Callable


def _forward(old: str, new: tuple[str, ...]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A module ``__getattr__``/``__dir__`` pair for the deprecated module ``old``: warns once (at
    import, from the caller's frame) and resolves each name in the first of ``new`` that has it."""
    warnings.warn(f"{old} is deprecated; import from {new[0]} instead", DeprecationWarning,
                  stacklevel=3)

    def getattr_(name: str) -> Any:
        for target in new:
            module = importlib.import_module(target)
            if hasattr(module, name):
                return getattr(module, name)
        raise AttributeError(f"module {old!r} has no attribute {name!r}")

    def dir_() -> list[str]:
        names: set[str] = set()
        for target in new:
            names.update(dir(importlib.import_module(target)))
        return sorted(names)

    return getattr_, dir_
