"""dpaudit: audit the privacy claims of differentially private online learning algorithms."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = ["audit", "AuditResult", "sequential_audit", "__version__"]

if TYPE_CHECKING:  # pragma: no cover
    from dpaudit.audits.empirical import AuditResult, audit
    from dpaudit.audits.sequential import sequential_audit

# Exported lazily so that `import dpaudit` stays cheap (scipy/statsmodels load on first use).
_LAZY = {"audit": "dpaudit.audits.empirical", "AuditResult": "dpaudit.audits.empirical",
         "sequential_audit": "dpaudit.audits.sequential"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'dpaudit' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
