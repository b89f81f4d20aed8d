"""The ``dpaudit`` command line (``dpaudit.cli.main``; also ``python -m dpaudit``).

Modules: :mod:`.main` (the commands and :func:`main`), :mod:`.parser` (arguments and exit codes)
and :mod:`.listing` (``dpaudit list``). It runs audits through :mod:`dpaudit.runner` (which
``dpaudit.audit_claim(out=...)`` calls too) and prints :mod:`dpaudit.reporting.terminal`'s tables.
A top layer: nothing in dpaudit imports it (docs/layout.md).
"""

from __future__ import annotations

from dpaudit.cli.main import main
from dpaudit.cli.parser import (DEFAULT_OUT, EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, EXIT_TERMINATED,
                                EXIT_USAGE, EXIT_VIOLATED, build_parser)

__all__ = ["main", "build_parser", "DEFAULT_OUT", "EXIT_OK", "EXIT_VIOLATED", "EXIT_USAGE", "EXIT_FAILED",
           "EXIT_INTERRUPTED", "EXIT_TERMINATED"]
