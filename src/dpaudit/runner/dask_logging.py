"""Dask's own logging, silenced while a run uses a Dask cluster."""

from __future__ import annotations

from typing import Any

__all__ = ["dask_logs_quiet"]


class dask_logs_quiet:
    """Dask's own log lines (connection retries, tracebacks of a lost scheduler) are silenced while
    the CLI runs on Dask: its errors are one sentence (``--traceback`` shows Python's)."""

    def __enter__(self) -> None:
        import logging

        import distributed  # noqa: F401  (creates its loggers, each with its own level)

        self.levels = {}
        for name in ["distributed", *logging.root.manager.loggerDict]:
            if name == "distributed" or name.startswith("distributed."):
                logger = logging.getLogger(name)
                self.levels[name] = logger.level
                logger.setLevel(logging.CRITICAL + 1)

    def __exit__(self, *exc: Any) -> None:
        import logging

        for name, level in self.levels.items():
            logging.getLogger(name).setLevel(level)
