"""The ``dpaudit`` command line (``dpaudit.cli.main``; also ``python -m dpaudit``).

Modules: :mod:`.main` (the commands and :func:`main`), :mod:`.parser` (arguments and exit codes),
:mod:`.runner` (running and resuming audits), :mod:`.listing` (``dpaudit list``) and
:mod:`.terminal` (plain-text tables). A top layer: the engine, the papers and the reports never
import it (docs/layout.md).
"""

from __future__ import annotations

from dpaudit.cli.main import main
from dpaudit.cli.parser import (DEFAULT_OUT, EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, EXIT_TERMINATED,
                                EXIT_USAGE, EXIT_VIOLATED, build_parser)

__all__ = ["main", "build_parser", "DEFAULT_OUT", "EXIT_OK", "EXIT_VIOLATED", "EXIT_USAGE", "EXIT_FAILED",
           "EXIT_INTERRUPTED", "EXIT_TERMINATED"]
