"""Report files on disk: one claim's JSON, Markdown, HTML and figures, and the directory index.

A report directory ``DIR`` holds ``index.{json,md,html}``, ``dpaudit-manifest.json`` and, per
claim (the id's slash a sub-directory), ``<id>.json`` (schema ``dpaudit.claim/1``, the source of
truth), ``<id>.md``, ``<id>.html`` and figure PNGs. Every file is written atomically (a temporary
file, then ``os.replace``) and a claim's JSON last, so a claim whose JSON exists is finished and an
interrupted run resumes (:func:`remove_stale_temp_files` sweeps what a killed process left). The
index is built from exactly the claims the manifest lists (:func:`read_manifest`,
:func:`add_to_manifest`, :func:`load_report_directory`), each validated against
:mod:`dpaudit.reporting.schema`; an unreadable one is a ``ValueError``, never a smaller index. One
writer per directory (:func:`report_directory_lock`, a ``flock``), and nothing is written or
deleted outside ``DIR`` (:func:`ensure_inside`, :data:`MAX_RECORD_BYTES`).

The layout, the atomic writes, the lock and the path checks in full:
docs/reports.md#how-report-files-are-written.
"""

from __future__ import annotations

import contextlib
import errno
import json
import math
import os
import re
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from dpaudit._version import __version__
from dpaudit.claims.record import ClaimAudit
from dpaudit.reporting.html import render_claim_html, render_index_html, render_paper_html
from dpaudit.reporting.index import INDEX_SCHEMA, build_index
from dpaudit.reporting.markdown import (figure_filename, render_claim_markdown,
                                        render_index_markdown, render_paper_markdown)
from dpaudit.reporting.plots import render_plots
from dpaudit.reporting.schema import check_against_schema
from dpaudit.reporting.view import CLAIM_SCHEMA, paper_sections, validate_claim_record

__all__ = ["ClaimPaths", "IndexPaths", "claim_record", "claim_paths", "write_claim_report",
           "render_claim_files", "load_claim_record", "load_report_directory", "write_index",
           "rerender_directory", "atomic_write", "to_json_text", "MANIFEST_NAME",
           "MANIFEST_SCHEMA", "read_manifest", "add_to_manifest", "load_claim_records",
           "remove_stale_temp_files", "ensure_inside", "report_directory_lock", "LOCK_NAME",
           "saved_claim_ids", "no_saved_audits_message"]

#: The file listing the claims dpaudit runs wrote into a report directory.
MANIFEST_NAME = "dpaudit-manifest.json"
MANIFEST_SCHEMA = "dpaudit.manifest/1"
_TEMP_FILE = re.compile(r"^\..+\.(\d+)\.[A-Za-z0-9_]+\.tmp$")

_ID_PART = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")
#: Longest part of a claim id: a file name is ``<part>.<figure>.png`` or a temporary
#: ``.<name>.<pid>.<random>.tmp``, which must stay below the usual 255-byte limit.
MAX_ID_PART = 160
#: Largest saved claim JSON read (the largest bundled record is about 0.3 MB).
MAX_RECORD_BYTES = 32 << 20
#: Bounds on a saved record's structure, checked before the schema (crafted but
#: schema-valid files crashed ``report`` with RecursionError, OverflowError or MemoryError).
MAX_RECORD_DEPTH = 64
MAX_RECORD_LIST = 20_000  # the bundled records' longest list: 4416 items
MAX_RECORD_STRING = 200_000
LOCK_NAME = ".dpaudit.lock"
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
    if any(len(p) > MAX_ID_PART for p in parts):
        raise ValueError(f"claim id {str(claim_id)[:40]!r}... has a part longer than "
                         f"{MAX_ID_PART} characters, too long for a file name")
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


def _umask() -> int:
    """The process umask, read without changing it where the platform allows."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def ensure_inside(root: str | os.PathLike[str], directory: str | os.PathLike[str]) -> Path:
    """``directory`` (below ``root``) after checking that no part of the way from ``root`` to it is
    a symbolic link or a non-directory: dpaudit writes and deletes nothing outside ``root``
    (a symlinked ``DIR/<paper>`` or ``DIR/papers`` was written through, and figures in
    its target deleted). ``root`` itself may be a link: it is the user's choice of directory."""
    root, directory = Path(root), Path(directory)
    try:
        rel = directory.relative_to(root)
    except ValueError:
        raise ValueError(f"{directory} is not inside the report directory {root}") from None
    current = root
    for part in rel.parts:
        current = current / part
        try:
            st = os.lstat(current)
        except FileNotFoundError:
            continue  # created by atomic_write, as a real directory
        if stat.S_ISLNK(st.st_mode):
            raise ValueError(f"{current} is a symbolic link; dpaudit writes nothing outside the "
                             f"report directory {root}: replace it with a real directory")
        if not stat.S_ISDIR(st.st_mode):
            raise ValueError(f"{current} is not a directory; move it out of {root}")
    return directory


@contextlib.contextmanager
def report_directory_lock(out_dir: str | os.PathLike[str]):
    """Hold the exclusive lock of a report directory (one writer per ``DIR``:
    docs/reports.md#how-report-files-are-written); ``ValueError`` naming the directory when
    another process holds it or when it cannot be locked (a read-only directory)."""
    import fcntl

    root = Path(out_dir)
    path = root / LOCK_NAME
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ValueError(f"{path} is a symbolic link; remove it") from None
        raise ValueError(f"the report directory {root} is not writable ({exc.strerror})"
                         ) from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            try:
                holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
            except OSError:
                holder = ""
            who = f" (pid {holder})" if holder.isdigit() else ""
            raise ValueError(f"another dpaudit run is writing the report directory {root}{who}; "
                             "wait for it to finish, or give this run another --out") from None
        except OSError as exc:
            raise ValueError(f"cannot lock the report directory {root} ({exc.strerror})"
                             ) from None
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
        except OSError:
            pass  # the lock holds without the pid (a full disk)
        yield path
    finally:
        os.close(fd)


def atomic_write(path: str | os.PathLike[str], data: str | bytes) -> Path:
    """Write ``data`` to ``path`` atomically: readers see the old file or the whole new one.

    The file gets mode ``0o666 & ~umask``, like a file opened for writing (``mkstemp`` alone would
    leave it 0600).
    """
    path = Path(path)
    try:
        return _atomic_write(path, data)
    except OSError as exc:
        if exc.filename is not None or exc.errno is None:
            raise
        # Name the file ("No space left on device" without a path).
        raise OSError(exc.errno, exc.strerror, str(path)) from None


def _atomic_write(path: Path, data: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp",
                               dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw)
            fh.flush()
            os.fchmod(fh.fileno(), 0o666 & ~_umask())
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    return path


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale_temp_files(out_dir: str | os.PathLike[str],
                            claim_ids: Sequence[str] = ()) -> list[Path]:
    """Delete the temporary files of :func:`atomic_write` left by processes that no longer run
    (a SIGKILL mid-write), in the folders this module writes to: ``out_dir``, its ``papers/``
    pages and the directories of ``claim_ids`` (never a walk of the tree); returns what was
    removed."""
    removed = []
    root = Path(out_dir)
    folders = {root, root / "papers"} | {claim_paths(root, cid).directory for cid in claim_ids}
    for folder in sorted(folders):
        if not folder.is_dir():
            continue
        for path in folder.glob(".*.tmp"):
            m = _TEMP_FILE.match(path.name)
            if m and path.is_file() and not _pid_alive(int(m.group(1))):
                try:
                    path.unlink()
                    removed.append(path)
                except FileNotFoundError:
                    pass
    return removed


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
    ensure_inside(out_dir, paths.directory)
    plots, problems = render_plots(_bounded_figures(record))
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


#: Most histogram bins drawn in a figure; more are merged in groups for the drawing only (issue
#: 25: a 2 x 10^6-bin histogram took 135 s to render). Bundled audits save about 40.
MAX_FIGURE_BINS = 1_000


def _bounded_figures(record: Mapping[str, Any]) -> Mapping[str, Any]:
    """``record`` with a histogram of more than :data:`MAX_FIGURE_BINS` bins merged into at most
    that many (adjacent bins summed), for drawing; the saved JSON keeps every bin."""
    figures = record.get("figures")
    hist = figures.get("histogram") if isinstance(figures, Mapping) else None
    if not isinstance(hist, Mapping):
        return record
    edges, c0, c1 = hist.get("edges"), hist.get("counts0"), hist.get("counts1")
    if not (isinstance(edges, list) and isinstance(c0, list) and isinstance(c1, list)
            and len(c0) == len(c1) == len(edges) - 1 and len(c0) > MAX_FIGURE_BINS):
        return record
    try:
        group = -(-len(c0) // MAX_FIGURE_BINS)
        merged = dict(hist)
        merged["edges"] = list(edges[::group]) + ([edges[-1]] if (len(edges) - 1) % group else [])
        merged["counts0"] = [sum(c0[i:i + group]) for i in range(0, len(c0), group)]
        merged["counts1"] = [sum(c1[i:i + group]) for i in range(0, len(c1), group)]
    except TypeError:
        return record  # not numbers: the figure code reports it
    return {**record, "figures": {**figures, "histogram": merged}}


def write_claim_report(out_dir: str | os.PathLike[str],
                       audit: ClaimAudit | Mapping[str, Any]) -> ClaimPaths:
    """Write all of one claim's report files; the JSON last, so its presence means "finished"."""
    record = claim_record(audit)
    paths = render_claim_files(out_dir, record)
    ensure_inside(out_dir, paths.directory)  # the JSON replaces the previous one atomically
    atomic_write(paths.json, to_json_text(record))
    return paths


def load_claim_record(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read and check a saved claim JSON; ``ValueError`` with the path when it is not one."""
    path = Path(path)
    try:
        record = _parse_json(_read_regular_file(path), str(path))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} is not valid JSON ({exc.msg} at line {exc.lineno})") from None
    except UnicodeDecodeError:
        raise ValueError(f"{path} is not a text file (not UTF-8)") from None
    except OSError as exc:
        raise ValueError(f"{path} cannot be read ({exc.strerror})") from None
    return dict(validate_claim_record(record, str(path)))


def _read_regular_file(path: Path) -> str:
    """The text of a regular file of at most :data:`MAX_RECORD_BYTES`; ``ValueError`` naming it
    otherwise (a FIFO hung ``report``, a link to /dev/zero exhausted its memory)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ValueError(f"{path} is a symbolic link, not a saved claim audit; dpaudit reads "
                             "only regular files") from None
        raise
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise ValueError(f"{path} is not a regular file; dpaudit reads only regular files")
        data = fh.read(MAX_RECORD_BYTES + 1)
    if len(data) > MAX_RECORD_BYTES:
        raise ValueError(f"{path} is larger than {MAX_RECORD_BYTES >> 20} MiB, too large for a "
                         "saved claim audit")
    return data.decode("utf-8")


def _parse_int(text: str) -> int:
    if len(text.lstrip("-")) > 300:
        raise ValueError(f"a {len(text)}-digit integer is out of range")
    return int(text)


def _parse_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text[:40]} is out of double range")
    return value


def _parse_constant(text: str) -> Any:
    raise ValueError(f"{text} is not allowed (non-finite numbers are saved as strings)")


def _parse_json(text: str, source: str) -> Any:
    """``json.loads`` with bounded numbers, depth, list lengths and string lengths; ``ValueError``
    naming ``source`` otherwise."""
    try:
        value = json.loads(text, parse_int=_parse_int, parse_float=_parse_float,
                           parse_constant=_parse_constant)
    except RecursionError:
        raise ValueError(f"{source} is nested too deeply for a saved claim audit") from None
    except ValueError as exc:
        if isinstance(exc, json.JSONDecodeError):
            raise
        raise ValueError(f"{source} is not a saved claim audit: {exc}") from None
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_RECORD_DEPTH:
            raise ValueError(f"{source} is nested more than {MAX_RECORD_DEPTH} levels deep, too "
                             "deep for a saved claim audit")
        if isinstance(item, str):
            if len(item) > MAX_RECORD_STRING:
                raise ValueError(f"{source} holds a string of {len(item)} characters (at most "
                                 f"{MAX_RECORD_STRING} in a saved claim audit)")
        elif isinstance(item, list):
            if len(item) > MAX_RECORD_LIST:
                raise ValueError(f"{source} holds a list of {len(item)} items (at most "
                                 f"{MAX_RECORD_LIST} in a saved claim audit)")
            stack.extend((v, depth + 1) for v in item)
        elif isinstance(item, dict):
            if len(item) > MAX_RECORD_LIST:
                raise ValueError(f"{source} holds an object of {len(item)} fields")
            stack.extend((v, depth + 1) for v in item.values())
            stack.extend((k, depth + 1) for k in item)
    return value


def read_manifest(out_dir: str | os.PathLike[str]) -> list[str] | None:
    """The claim ids listed in ``DIR/dpaudit-manifest.json``; None when there is no manifest.

    ``ValueError`` naming the file when it exists but is not a valid manifest.
    """
    path = Path(out_dir) / MANIFEST_NAME
    if not path.exists():
        return None
    try:
        data = _parse_json(_read_regular_file(path), str(path))
    except (json.JSONDecodeError, UnicodeDecodeError, OSError):
        raise ValueError(f"{path} is not a readable dpaudit manifest (invalid JSON); restore it "
                         "or delete it and rerun the audits") from None
    ids = data.get("claims") if isinstance(data, dict) else None
    if (not isinstance(data, dict) or data.get("schema") != MANIFEST_SCHEMA
            or not isinstance(ids, list) or not all(isinstance(i, str) for i in ids)):
        raise ValueError(f"{path} is not a dpaudit manifest (schema {MANIFEST_SCHEMA!r} with a "
                         "list of claim ids expected)")
    for cid in ids:
        claim_paths(out_dir, cid)  # ValueError for an id that is not a safe relative path
    return sorted(set(ids))


def add_to_manifest(out_dir: str | os.PathLike[str], claim_ids: Sequence[str]) -> list[str]:
    """Add ``claim_ids`` to the manifest of ``out_dir`` (created if absent); returns its ids."""
    ids = sorted(set(read_manifest(out_dir) or []) | set(claim_ids))
    for cid in claim_ids:
        claim_paths(out_dir, cid)
    atomic_write(Path(out_dir) / MANIFEST_NAME,
                 to_json_text({"schema": MANIFEST_SCHEMA, "claims": ids}))
    return ids


def load_claim_records(out_dir: str | os.PathLike[str],
                       claim_ids: Sequence[str]) -> list[dict[str, Any]]:
    """The saved records of ``claim_ids``, sorted by id; ``ValueError`` naming the first file
    that is missing, unreadable, invalid or holds another claim."""
    records = []
    for cid in sorted(set(claim_ids)):
        path = claim_paths(out_dir, cid).json
        if os.path.lexists(path) and not path.is_file():
            raise ValueError(f"{path} is not a regular file; dpaudit reads only regular files")
        if not path.is_file():
            raise ValueError(f"{path} is missing, but {Path(out_dir) / MANIFEST_NAME} lists "
                             f"{cid!r}; rerun its audit or remove it from the manifest")
        record = load_claim_record(path)
        if record["id"] != cid:
            raise ValueError(f"{path} holds the audit of {record['id']!r}, not of {cid!r}")
        records.append(record)
    return records


def _walk_claim_ids(root: Path) -> list[str]:
    """Claim JSONs of a directory written before manifests existed (strict: see below).

    A ``.json`` file (other than the index, the manifest and hidden files) is a claim when it
    declares the claim schema, when it is not valid JSON at all (a truncated or binary claim file
    cannot be told from a foreign one, so it is an error rather than silently skipped), or when the
    Markdown or HTML report of a claim sits next to it. Other JSON files are left alone.
    """
    ids = []
    for path in sorted(root.rglob("*.json")):
        rel = path.relative_to(root)
        if path.name.startswith(".") or rel.as_posix() in ("index.json", MANIFEST_NAME):
            continue
        try:  # regular files only (not a FIFO, a device or a link to one), of bounded size
            if not stat.S_ISREG(os.lstat(path).st_mode):
                continue
            head = _parse_json(_read_regular_file(path), str(path))
        except OSError:
            continue
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise ValueError(f"{path} is not valid JSON: a damaged claim audit cannot be indexed; "
                             "rerun its audit or remove the file") from None
        sibling_report = path.with_suffix(".md").exists() or path.with_suffix(".html").exists()
        declared = isinstance(head, dict) and head.get("schema") == CLAIM_SCHEMA
        if not (declared or sibling_report):
            continue
        if not declared:
            raise ValueError(f"{path} sits next to a claim report but is not a dpaudit claim audit "
                             f"(schema {CLAIM_SCHEMA!r} expected)")
        record = dict(validate_claim_record(head, str(path)))
        if claim_paths(root, record["id"]).json.resolve() != path.resolve():
            raise ValueError(f"{path} holds the audit of {record['id']!r}, which belongs at "
                             f"{claim_paths(root, record['id']).json}")
        ids.append(record["id"])
    return ids


def load_report_directory(out_dir: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Every saved claim audit of ``out_dir``, sorted by id.

    The claims are those of the manifest when there is one; otherwise (a directory written by an
    older dpaudit) the strict walk of :func:`_walk_claim_ids`. Never silently drops a claim: an
    unreadable or invalid one is a ``ValueError`` naming its file.
    """
    root = Path(out_dir)
    return load_claim_records(root, saved_claim_ids(root))


def saved_claim_ids(out_dir: str | os.PathLike[str]) -> list[str]:
    """The ids of the claim audits saved in ``out_dir``: its manifest's, or (no manifest) those of
    the strict walk of :func:`_walk_claim_ids`. Reads, never writes."""
    root = Path(out_dir)
    ids = read_manifest(root)
    return _walk_claim_ids(root) if ids is None else ids


def no_saved_audits_message(shown: str | os.PathLike[str]) -> str:
    """The error of re-rendering a directory that holds no saved claim audit."""
    return (f"no saved claim audits (JSON with schema {CLAIM_SCHEMA!r}) under {shown}; "
            "nothing was written")


def write_index(out_dir: str | os.PathLike[str], records: Sequence[Mapping[str, Any]],
                display_dir: str | None = None,
                registered: Sequence[str] | None = None,
                missing: Sequence[str] | None = None) -> IndexPaths:
    """Write ``index.json``, ``index.md``, ``index.html`` and one page per paper
    (``papers/<paper>.{md,html}``) for these records.

    ``display_dir`` is the directory name printed in the "reproduce" command (default: ``out_dir``);
    ``registered``: the ids of every registered claim (the command says ``--all`` when the index
    holds exactly those); ``missing``: claims the run asked for that did not finish (the index
    then says ``partial: true`` and lists them).
    """
    root = Path(out_dir)
    shown = display_dir if display_dir is not None else str(out_dir)
    ordered = sorted(records, key=lambda r: r["id"])
    ensure_inside(root, root / "papers")
    paths = IndexPaths(root / "index.json", root / "index.md", root / "index.html")
    index = json.loads(to_json_text(build_index(ordered, missing)))
    check_against_schema(index, INDEX_SCHEMA, f"the index of {shown}")
    for paper in paper_sections(ordered):
        recs = [r for r in ordered if r["id"] in {row["id"] for row in paper["rows"]}]
        atomic_write(root / "papers" / f"{paper['key']}.html", render_paper_html(paper, recs))
        atomic_write(root / "papers" / f"{paper['key']}.md", render_paper_markdown(paper, recs))
    atomic_write(paths.json, to_json_text(index))
    atomic_write(paths.markdown, render_index_markdown(ordered, shown, registered))
    atomic_write(paths.html, render_index_html(ordered, shown, registered))
    return paths


def rerender_directory(out_dir: str | os.PathLike[str], display_dir: str | None = None,
                       registered: Sequence[str] | None = None
                       ) -> tuple[list[dict[str, Any]], IndexPaths]:
    """Re-render every claim's Markdown/HTML/figures and the index from the saved JSON alone.

    ``ValueError`` before anything is written when ``out_dir`` holds no saved claim audit (else an
    empty index would be written before the command failed)."""
    records = load_report_directory(out_dir)
    if not records:
        raise ValueError(no_saved_audits_message(out_dir if display_dir is None else display_dir))
    for record in records:
        try:
            render_claim_files(out_dir, record)
        except OSError:
            raise
        except (ArithmeticError, RecursionError, MemoryError, TypeError, KeyError, ValueError,
                IndexError) as exc:
            # Whatever a crafted record provokes in the rendering, the error names its file.
            raise ValueError(f"{claim_paths(out_dir, record['id']).json} cannot be rendered "
                             f"({type(exc).__name__}: {exc})") from None
    return records, write_index(out_dir, records, display_dir, registered)
