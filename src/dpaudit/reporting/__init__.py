"""Reviewer reports: per-claim Markdown and standalone HTML pages, figures, and the index.

Reports are rendered from the saved JSON of a claim audit (never from live objects), so
``dpaudit report DIR`` reproduces them from disk. Modules: :mod:`~dpaudit.reporting.view` (what a
page says), :mod:`~dpaudit.reporting.plots` (figures), :mod:`~dpaudit.reporting.markdown` and
:mod:`~dpaudit.reporting.html` (the two formats), :mod:`~dpaudit.reporting.index` (``index.json``),
:mod:`~dpaudit.reporting.commands` (the reproduce commands pages print),
:mod:`~dpaudit.reporting.writer` (files on disk).
"""

from dpaudit.reporting.index import INDEX_SCHEMA, build_index
from dpaudit.reporting.view import CLAIM_SCHEMA
from dpaudit.reporting.writer import (claim_record, load_report_directory, rerender_directory,
                                      write_claim_report, write_index)

__all__ = ["CLAIM_SCHEMA", "INDEX_SCHEMA", "build_index", "claim_record", "write_claim_report",
           "write_index", "load_report_directory", "rerender_directory"]
