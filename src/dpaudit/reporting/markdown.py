"""Markdown reports: one page per audited claim and the index of all claims.

Markdown is what a reviewer reads on a code-hosting site, where inline (base64) images are not
shown, so figures are separate PNG files next to the page and referenced by relative links
(``pigd.histogram.png`` beside ``pigd.md``); :mod:`dpaudit.reporting.writer` writes them.
"""

from __future__ import annotations

import re
from typing import Any, Mapping, Sequence

import jinja2

from dpaudit.reporting.plots import Plot
from dpaudit.reporting.triage import start_here, where_short
from dpaudit.reporting.view import (claim_context, count_phrase, index_reproduce_command,
                                    index_rows, paper_sections, run_settings, verdict_counts)

__all__ = ["render_claim_markdown", "render_index_markdown", "render_paper_markdown",
           "markdown_cell", "markdown_code", "figure_filename"]


def markdown_cell(text: Any) -> str:
    """Text safe inside a Markdown table cell: one line, pipes escaped."""
    return " ".join(str(text).split()).replace("|", "\\|")


#: A ``<`` that CommonMark could read as the start of raw HTML or an autolink.
_TAG_START = re.compile(r"<(?=[A-Za-z/!?])")


class _CodeSpan(str):
    """Output of :func:`markdown_code`: a code span, literal in Markdown (never HTML), so
    :func:`markdown_text` leaves it alone."""


def markdown_text(value: Any) -> Any:
    """Every ``{{ value }}`` of the Markdown templates (Jinja's ``finalize``): raw HTML and link
    targets cannot pass through (``<script>``, ``<img onerror>`` and ``javascript:``
    links from claim text or a saved JSON appeared raw in ``*.md``). A ``<`` that could open a tag,
    comment, declaration or autolink (followed by a letter, ``/``, ``!`` or ``?``) becomes an
    entity, shown as itself (``x <= 2`` is left alone); ``](`` loses its link meaning; code spans
    are literal already.
    """
    if value is None or isinstance(value, (_CodeSpan, bool, int, float)):
        return value
    return _TAG_START.sub("&lt;", str(value)).replace("](", "]\\(")


def markdown_code(text: Any) -> str:
    """An inline code span for a table cell; survives backticks and pipes in ``text``.

    GitHub-flavoured Markdown reads ``\\|`` inside a table cell as a literal pipe, code spans included.
    """
    s = " ".join(str(text).split())
    if not s:
        return ""
    longest = max((len(run) for run in re.findall("`+", s)), default=0)
    fence = "`" * (longest + 1)  # longer than any run inside: the span cannot be closed early
    pad = " " if s.startswith("`") or s.endswith("`") else ""
    return _CodeSpan(f"{fence}{pad}{s}{pad}{fence}".replace("|", "\\|"))


def figure_filename(basename: str, plot_name: str) -> str:
    """File name of a figure beside the Markdown page: ``<basename>.<plot>.png``."""
    return f"{basename}.{plot_name}.png"


_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("dpaudit.reporting", "templates"),
    autoescape=False,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
    undefined=jinja2.StrictUndefined,
    finalize=markdown_text,
)
_ENV.filters["md_cell"] = markdown_cell
_ENV.filters["md_code"] = markdown_code
_ENV.globals["count_phrase"] = count_phrase


def render_claim_markdown(record: Mapping[str, Any], plots: Sequence[Plot] = (),
                          plot_problems: Sequence[str] = ()) -> str:
    """The Markdown page of one saved claim audit.

    Parameters
    ----------
    record:
        The saved claim JSON (``ClaimAudit.to_dict()`` plus ``schema``).
    plots, plot_problems:
        From :func:`dpaudit.reporting.plots.render_plots`; each plot is linked as
        :func:`figure_filename` relative to the page.
    """
    ctx = claim_context(record)
    ctx["plots"] = [{"title": p.title, "caption": p.caption,
                     "src": figure_filename(ctx["basename"], p.name)} for p in plots]
    ctx["plot_problems"] = list(plot_problems)
    return _collapse_blank_lines(_ENV.get_template("claim.md.j2").render(**ctx))


def render_index_markdown(records: Sequence[Mapping[str, Any]], out: str = "DIR",
                          registered: Sequence[str] | None = None) -> str:
    """The Markdown index: the papers, then one row per claim, linking each claim's pages."""
    rows = index_rows(records)
    for row, record in zip(rows, records):
        row["where"] = where_short(record)
    return _collapse_blank_lines(_ENV.get_template("index.md.j2").render(
        rows=rows, start=start_here(records), counts=verdict_counts(records), total=len(records),
        papers=paper_sections(records), settings=run_settings(records),
        reproduce=index_reproduce_command(records, out, registered)))


def render_paper_markdown(paper: Mapping[str, Any], records: Sequence[Mapping[str, Any]]) -> str:
    """The Markdown page of one paper (an entry of :func:`~dpaudit.reporting.view.paper_sections`)."""
    return _collapse_blank_lines(_ENV.get_template("paper.md.j2").render(
        paper=paper, settings=run_settings(records)))


def _collapse_blank_lines(text: str) -> str:
    lines = text.splitlines()
    out: list[str] = []
    in_fence = False
    for line in lines:
        if line.startswith("```"):
            in_fence = not in_fence
        if not in_fence and not line.strip() and out and not out[-1].strip():
            continue
        out.append(line.rstrip() if not in_fence else line)
    return "\n".join(out).strip() + "\n"
