"""The exit statuses of a run (the ``dpaudit`` command's, docs/cli.md) and the two exceptions that
choose one: a usage error (2) and SIGTERM (143)."""

from __future__ import annotations

__all__ = ["EXIT_OK", "EXIT_VIOLATED", "EXIT_USAGE", "EXIT_FAILED", "EXIT_INTERRUPTED",
           "EXIT_TERMINATED", "UsageError", "Terminated"]

EXIT_OK = 0
EXIT_VIOLATED = 1
EXIT_USAGE = 2
EXIT_FAILED = 3
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143  # 128 + SIGTERM, what a CI runner's cancellation expects


class UsageError(Exception):
    """A problem with the command line or its inputs (exit status 2)."""


class Terminated(KeyboardInterrupt):
    """SIGTERM, handled like Ctrl-C (finished claims indexed) but exiting 143."""
