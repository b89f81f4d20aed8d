"""dpaudit: audit the privacy claims of differentially private online learning algorithms.

A lazy facade: the names of :data:`__all__` load their module on first use, so that
``import dpaudit`` stays cheap (scipy and statsmodels load when an audit needs them). The module
binds nothing public besides them (``tests/test_boundary.py`` checks both ways).
"""

import typing as _typing

from dpaudit._version import __version__

__all__ = ["audit", "AuditResult", "sequential_audit", "sequential_gate", "SequentialResult",
           "Claim", "Source", "Lemma", "Primitive", "audit_claim", "register_claim", "noise",
           "exact", "batch", "__version__"]

if _typing.TYPE_CHECKING:  # pragma: no cover
    from dpaudit.blackbox.result import AuditResult
    from dpaudit.blackbox.empirical_audit import audit
    from dpaudit.blackbox.sequential import SequentialResult, sequential_audit
    from dpaudit.blackbox.sequential_gate import sequential_gate
    from dpaudit import exact, noise
    from dpaudit.api import audit_claim, register_claim
    from dpaudit.claims.user_claims import Claim, Lemma, Source
    from dpaudit.greybox.primitives import Primitive
    from dpaudit.batching import batch

#: Where each lazily exported name is defined.
_LAZY = {"audit": "dpaudit.blackbox.empirical_audit",
         "AuditResult": "dpaudit.blackbox.empirical_audit",
         "sequential_audit": "dpaudit.blackbox.sequential",
         "SequentialResult": "dpaudit.blackbox.sequential",
         "sequential_gate": "dpaudit.blackbox.sequential_gate",
         "Claim": "dpaudit.claims.user_claims", "Source": "dpaudit.claims.user_claims",
         "Lemma": "dpaudit.claims.user_claims", "Primitive": "dpaudit.greybox.primitives",
         "audit_claim": "dpaudit.api",
         "register_claim": "dpaudit.api", "batch": "dpaudit.batching"}
#: Public submodules, imported on first attribute access.
_SUBMODULES = ("noise", "exact")


def __getattr__(name: str) -> _typing.Any:
    import importlib

    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    if name in _SUBMODULES:
        return importlib.import_module(f"dpaudit.{name}")
    raise AttributeError(f"module 'dpaudit' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(__all__) | {name for name in globals() if name.startswith("__")})
