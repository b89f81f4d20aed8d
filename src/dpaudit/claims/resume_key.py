"""A claim's resume key: the SHA-256 of the code that audits it, in one call (:func:`resume_key`).

A report directory's runner reuses a saved record only when its key is unchanged. The key covers
the source of the module that registered the claim (a bundled paper's folder, a plugin's package
or file), every module of the engine (:data:`ENGINE_SOURCES`) and, for a claim that is not bundled
with dpaudit, every loaded user module and the behavioural fingerprint of its declaration
(:mod:`dpaudit.claims.fingerprint`). It lives with the claims (the registry knows the claim's
origin, the fingerprint its declaration), so the runner asks here once instead of combining the
registry's origin, the fingerprint and its own file walk.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

__all__ = ["ENGINE_SOURCES", "resume_key", "resume_key_sources"]

#: The dpaudit package folder (this file is dpaudit/claims/resume_key.py).
PACKAGE_ROOT = Path(__file__).resolve().parents[1]

#: Parts of the package whose source decides every claim's result (besides the claim's own
#: paper folder): the engine, the noise, the learners, claims-as-data and input checks.
ENGINE_SOURCES = ("blackbox", "formal", "greybox", "claims", "execution", "mechanisms", "learners",
                   "neighbours.py", "hypothesis_seeding.py", "_validation.py", "_rowwise.py",
                   "evidence.py", "evidence_records.py", "release_outputs.py")


#: Cap on the files and bytes hashed for one claim module's own source (a plugin in a big folder).
_MAX_HASHED_FILES = 500
_MAX_HASHED_BYTES = 50 << 20


def _claim_sources(origin: Any) -> set[Path]:
    """The source files of the module that registered a claim: a bundled paper's folder, the
    top-level package of an installed or named plugin (recursively), or a plugin file with the
    ``.py`` files beside it."""
    module = sys.modules.get(origin.module)
    file = getattr(module, "__file__", None) or origin.path
    if not file:
        return set()
    path = Path(file).resolve()
    if origin.kind == "bundled":
        return set(path.parent.glob("*.py"))
    if origin.kind == "plugin" and origin.path:
        return set(path.parent.glob("*.py"))
    top = origin.module.split(".")[0]
    package = sys.modules.get(top)
    pkg_file = getattr(package, "__file__", None)
    if pkg_file and Path(pkg_file).name == "__init__.py":
        return set(Path(pkg_file).resolve().parent.rglob("*.py"))
    return {path}


def _excluded_roots() -> list[Path]:
    """Folders whose modules are not the user's code: the standard library and site-packages."""
    import site
    import sysconfig

    paths = [sysconfig.get_paths().get(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")]
    try:
        paths += site.getsitepackages() + [site.getusersitepackages()]
    except AttributeError:  # pragma: no cover - a virtualenv's old site.py
        pass
    if sys.prefix != sys.base_prefix:  # a virtual environment: nothing in it is the user's code
        paths.append(sys.prefix)
    return [Path(p).resolve() for p in paths if p]


def _loaded_user_sources() -> set[Path]:
    """The ``.py`` files of every loaded module outside the standard library, site-packages and
    dpaudit itself: the code a plugin, a script or a notebook imported (a learner in a sibling
    file or another folder, a sub-package), which decides what its claims' releases do."""
    excluded = _excluded_roots() + [PACKAGE_ROOT]
    out: set[Path] = set()
    for module in list(sys.modules.values()):
        file = getattr(module, "__file__", None)
        if not isinstance(file, str) or not file.endswith(".py"):
            continue
        path = Path(file).resolve()
        if not any(e == path or e in path.parents for e in excluded):
            out.add(path)
    return out


#: Per claim id: (the registration, the user modules loaded when it was first hashed, the
#: behavioural fingerprint or an unresumable token). One registration keeps one key in a process.
_KEYS: dict[str, tuple[Any, frozenset[Path], str]] = {}


def _behaviour_key(claim_id: str, registered: Any) -> tuple[frozenset[Path], str]:
    """The user modules and the behavioural fingerprint behind a non-bundled claim (cached per
    registration). A claim with no declaration to fingerprint, or whose fingerprint fails, gets a
    random token: it is never resumed (a stale result is worse than a rerun)."""
    cached = _KEYS.get(claim_id)
    if cached is not None and cached[0] is registered:
        return cached[1], cached[2]
    import os

    from dpaudit.claims.fingerprint import behaviour_fingerprint

    declaration = getattr(registered.audit, "declaration", None)
    has_file = bool(registered.origin.path or getattr(sys.modules.get(registered.origin.module),
                                                      "__file__", None))
    token = "unresumable:" + os.urandom(16).hex()
    if declaration is not None and hasattr(declaration, "plan"):
        try:
            token = "behaviour:" + behaviour_fingerprint(declaration)
        except (Exception, SystemExit):  # the audit fails with its own clear error; never resume
            pass
    elif has_file:
        token = "audit function"  # an audit function in a file: its files decide it
    modules = frozenset(_loaded_user_sources())
    _KEYS[claim_id] = (registered, modules, token)
    return modules, token


def _hashed(claim_id: str) -> tuple[list[Path], list[Path], str]:
    """``(every hashed file, the claim's own files, the behavioural token)`` of ``claim_id``."""
    from dpaudit.claims.registry import get

    registered = get(claim_id)
    own = sorted(p for p in _claim_sources(registered.origin) if p.is_file())
    if len(own) > _MAX_HASHED_FILES:
        raise ValueError(f"the module that registers {claim_id} ({registered.origin.module}) sits "
                         f"among {len(own)} .py files; put it in a package of its own")
    behaviour = ""
    if registered.origin.kind != "bundled":
        modules, behaviour = _behaviour_key(claim_id, registered)
        own = sorted(set(own) | {p for p in modules if p.is_file()})
    paths: set[Path] = set(own)
    for part in ENGINE_SOURCES:
        target = PACKAGE_ROOT / part
        paths.update(target.rglob("*.py") if target.is_dir() else [target])
    return sorted(p for p in paths if p.is_file()), own, behaviour


def resume_key_sources(claim_id: str) -> list[Path]:
    """The files :func:`resume_key` hashes for ``claim_id`` (sorted)."""
    return _hashed(claim_id)[0]


def resume_key(claim_id: str) -> str:
    """SHA-256 of the code that audits ``claim_id``: the source of the module that registered it
    (:func:`_claim_sources`: a paper's folder, a plugin's package or file) and
    :data:`ENGINE_SOURCES`; for a claim that is not bundled with dpaudit, also every loaded module
    outside the standard library and site-packages (:func:`_loaded_user_sources`) and the
    behavioural fingerprint of its declaration (:mod:`dpaudit.claims.fingerprint`: the release's
    outputs on each audited pair for a fixed seed). A change to any of them changes the key, so a
    rerun never reuses a result computed by other code; a claim registered by code whose
    behaviour cannot be fingerprinted is never resumed. ``KeyError`` for an unregistered id."""
    import hashlib
    import os

    paths, own, behaviour = _hashed(claim_id)
    base = Path(os.path.commonpath([str(p.parent) for p in own])) if own else PACKAGE_ROOT
    digest = hashlib.sha256()
    size = 0
    for path in paths:
        data = path.read_bytes()
        size += len(data)
        if size > _MAX_HASHED_BYTES:
            raise ValueError(f"the source behind {claim_id} exceeds {_MAX_HASHED_BYTES >> 20} MiB; "
                             "put its claim module in a package of its own")
        # Relative names, so that the same code hashes the same wherever it is installed.
        rel = (path.relative_to(PACKAGE_ROOT).as_posix() if PACKAGE_ROOT in path.parents
               else "plugin:" + path.relative_to(base).as_posix())
        digest.update(rel.encode() + b"\0" + data + b"\0")
    digest.update(behaviour.encode())
    return digest.hexdigest()
