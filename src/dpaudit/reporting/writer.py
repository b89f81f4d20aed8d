"""Report files on disk: one claim's JSON, Markdown, HTML and figures, and the directory index.

Layout of a report directory ``DIR`` (claim ids contain a slash, which becomes a sub-directory)::

    DIR/index.json  DIR/index.md  DIR/index.html
    DIR/jkt12-colt/pigd.json        the saved audit (schema "dpaudit.claim/1"): the source of truth
    DIR/jkt12-colt/pigd.md          Markdown report, figures linked as the PNGs below
    DIR/jkt12-colt/pigd.html        standalone HTML report, figures embedded
    DIR/jkt12-colt/pigd.<figure>.png

Every file is written atomically (a temporary file in the same directory, then ``os.replace``),
and a claim's JSON is written *last*: a claim whose JSON exists is finished, which is what lets an
interrupted ``dpaudit audit-claims`` resume without redoing it.
"""

from __future__ import annotations

import json
import math
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from dpaudit import __version__
from dpaudit.audits.claim_audit import ClaimAudit
from dpaudit.reporting.html import render_claim_html, render_index_html
from dpaudit.reporting.index import build_index
from dpaudit.reporting.markdown import (figure_filename, render_claim_markdown,
                                        render_index_markdown)
from dpaudit.reporting.plots import render_plots
from dpaudit.reporting.view import CLAIM_SCHEMA, validate_claim_record

__all__ = ["ClaimPaths", "IndexPaths", "claim_record", "claim_paths", "write_claim_report",
           "render_claim_files", "load_claim_record", "load_report_directory", "write_index",
           "rerender_directory", "atomic_write", "to_json_text"]

_ID_PART = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")
_FIGURE_NAMES = ("evidence", "histogram", "privacy_curve", "sensitivity", "regret")


@dataclass(frozen=True)
class ClaimPaths:
    """Where one claim's report files live."""

    json: Path
    markdown: Path
    html: Path

    @property
    def directory(self) -> Path:
        return self.json.parent


@dataclass(frozen=True)
class IndexPaths:
    """Where a report directory's index files live."""

    json: Path
    markdown: Path
    html: Path


def claim_paths(out_dir: str | os.PathLike[str], claim_id: str) -> ClaimPaths:
    """``DIR/<claim id>.{json,md,html}``; ``ValueError`` for ids that are not safe relative paths."""
    parts = str(claim_id).split("/")
    if len(parts) < 2 or not all(_ID_PART.match(p) and p not in (".", "..") for p in parts):
        raise ValueError(f"claim id {claim_id!r} is not of the form '<paper>/<algorithm>' with "
                         "letters, digits, '.', '_', '+' and '-' only")
    stem = Path(out_dir).joinpath(*parts)
    return ClaimPaths(stem.with_name(stem.name + ".json"), stem.with_name(stem.name + ".md"),
                      stem.with_name(stem.name + ".html"))


def _jsonable(value: Any) -> Any:
    """``value`` with numpy types converted and non-finite floats spelled as strings."""
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return _jsonable(value.tolist())
    if isinstance(value, np.generic):
        return _jsonable(value.item())
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


def to_json_text(value: Any) -> str:
    """Strict JSON (no NaN/Infinity tokens), indented, with a trailing newline."""
    return json.dumps(_jsonable(value), indent=2, allow_nan=False, ensure_ascii=False) + "\n"


def atomic_write(path: str | os.PathLike[str], data: str | bytes) -> Path:
    """Write ``data`` to ``path`` atomically: readers see the old file or the whole new one."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    return path


def claim_record(audit: ClaimAudit | Mapping[str, Any]) -> dict[str, Any]:
    """The JSON record saved for a claim audit: ``ClaimAudit.to_dict()`` plus ``schema`` and version."""
    data = audit.to_dict() if isinstance(audit, ClaimAudit) else dict(audit)
    record = {"schema": CLAIM_SCHEMA, "dpaudit_version": data.get("dpaudit_version", __version__)}
    record.update({k: v for k, v in data.items() if k not in ("schema", "dpaudit_version")})
    record = _jsonable(record)
    return dict(validate_claim_record(record, f"the audit of {record.get('id')!r}"))


def render_claim_files(out_dir: str | os.PathLike[str], record: Mapping[str, Any]) -> ClaimPaths:
    """Write the Markdown, HTML and figure files of a saved claim record (not its JSON)."""
    record = validate_claim_record(record, f"the record of {record.get('id')!r}")
    paths = claim_paths(out_dir, record["id"])
    plots, problems = render_plots(record)
    base = paths.json.stem
    drawn = {p.name for p in plots}
    for plot in plots:
        atomic_write(paths.directory / figure_filename(base, plot.name), plot.png)
    for name in _FIGURE_NAMES:  # figures of an earlier rendering that no longer have data
        stale = paths.directory / figure_filename(base, name)
        if name not in drawn and stale.exists():
            stale.unlink()
    atomic_write(paths.markdown, render_claim_markdown(record, plots, problems))
    atomic_write(paths.html, render_claim_html(record, plots, problems))
    return paths


def write_claim_report(out_dir: str | os.PathLike[str],
                       audit: ClaimAudit | Mapping[str, Any]) -> ClaimPaths:
    """Write all of one claim's report files; the JSON last, so its presence means "finished"."""
    record = claim_record(audit)
    paths = render_claim_files(out_dir, record)
    atomic_write(paths.json, to_json_text(record))
    return paths


def load_claim_record(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read and check a saved claim JSON; ``ValueError`` with the path when it is not one."""
    path = Path(path)
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} is not valid JSON ({exc.msg} at line {exc.lineno})") from None
    return dict(validate_claim_record(record, str(path)))


def load_report_directory(out_dir: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Every saved claim audit under ``out_dir``, sorted by id (other JSON files are ignored)."""
    root = Path(out_dir)
    records = []
    for path in sorted(root.rglob("*.json")):
        if path.name.startswith(".") or path == root / "index.json":
            continue
        try:
            head = json.loads(path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError):
            continue
        if isinstance(head, dict) and head.get("schema") == CLAIM_SCHEMA:
            record = dict(validate_claim_record(head, str(path)))
            if claim_paths(root, record["id"]).json.resolve() != path.resolve():
                raise ValueError(f"{path} holds the audit of {record['id']!r}, which belongs at "
                                 f"{claim_paths(root, record['id']).json}")
            records.append(record)
    return sorted(records, key=lambda r: r["id"])


def write_index(out_dir: str | os.PathLike[str], records: Sequence[Mapping[str, Any]],
                display_dir: str | None = None) -> IndexPaths:
    """Write ``index.json``, ``index.md`` and ``index.html`` for these records.

    ``display_dir`` is the directory name printed in the "reproduce" command (default: ``out_dir``).
    """
    root = Path(out_dir)
    shown = display_dir if display_dir is not None else str(out_dir)
    ordered = sorted(records, key=lambda r: r["id"])
    paths = IndexPaths(root / "index.json", root / "index.md", root / "index.html")
    atomic_write(paths.json, to_json_text(build_index(ordered)))
    atomic_write(paths.markdown, render_index_markdown(ordered, shown))
    atomic_write(paths.html, render_index_html(ordered, shown))
    return paths


def rerender_directory(out_dir: str | os.PathLike[str],
                       display_dir: str | None = None) -> tuple[list[dict[str, Any]], IndexPaths]:
    """Re-render every claim's Markdown/HTML/figures and the index from the saved JSON alone."""
    records = load_report_directory(out_dir)
    for record in records:
        render_claim_files(out_dir, record)
    return records, write_index(out_dir, records, display_dir)
