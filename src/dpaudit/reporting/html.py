"""Standalone HTML reports: one page per audited claim and the index of all claims.

Every page is a single file with its stylesheet inline and its figures embedded as base64 PNGs,
so it opens offline in any browser and can be mailed to a reviewer as is. Templates live in
``dpaudit/reporting/templates`` and are rendered with autoescaping on: text from papers and audits
is never interpreted as markup.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import jinja2

from dpaudit._version import __version__
from dpaudit.reporting.plots import Plot, data_uri
from dpaudit.reporting.triage import start_here, where_short
from dpaudit.reporting.view import (claim_context, count_phrase, index_reproduce_command,
                                    index_rows, paper_sections, run_settings, verdict_counts)

__all__ = ["render_claim_html", "render_index_html", "render_paper_html"]

_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("dpaudit.reporting", "templates"),
    autoescape=jinja2.select_autoescape(enabled_extensions=("html", "j2"), default=True),
    trim_blocks=True,
    lstrip_blocks=True,
    undefined=jinja2.StrictUndefined,
)
_ENV.globals["count_phrase"] = count_phrase


def render_claim_html(record: Mapping[str, Any], plots: Sequence[Plot] = (),
                      plot_problems: Sequence[str] = ()) -> str:
    """The standalone HTML page of one saved claim audit, figures embedded as data URIs."""
    ctx = claim_context(record)
    ctx["plots"] = [{"title": p.title, "caption": p.caption, "src": data_uri(p.png)} for p in plots]
    ctx["plot_problems"] = list(plot_problems)
    ctx["version"] = ctx["version"] or __version__
    return _ENV.get_template("claim.html.j2").render(**ctx)


def render_index_html(records: Sequence[Mapping[str, Any]], out: str = "DIR",
                      registered: Sequence[str] | None = None) -> str:
    """The standalone HTML index: the papers, then one row per claim with its verdict and a link
    to its page."""
    return _ENV.get_template("index.html.j2").render(
        rows=_rows_with_where(records), start=start_here(records), counts=verdict_counts(records), total=len(records),
        papers=paper_sections(records), settings=run_settings(records),
        reproduce=index_reproduce_command(records, out, registered), version=__version__)


def _rows_with_where(records: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    rows = index_rows(records)
    for row, record in zip(rows, records):
        row["where"] = where_short(record)
    return rows


def render_paper_html(paper: Mapping[str, Any], records: Sequence[Mapping[str, Any]]) -> str:
    """The standalone HTML page of one paper (an entry of :func:`~dpaudit.reporting.view.paper_sections`)."""
    return _ENV.get_template("paper.html.j2").render(paper=paper, settings=run_settings(records),
                                                     version=__version__)
