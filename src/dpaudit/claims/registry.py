"""The catalogue of auditable claims: one registration per claim, with where it came from.

A module makes claims auditable with one call per claim, ``register(CLAIM, audit)``, where
``audit`` is a function ``(context: AuditContext) -> ClaimAudit`` or a claim declaration that the
one claim driver runs (:mod:`dpaudit.claims.driver`; a user's :class:`dpaudit.Claim` becomes one).
The CLI, the reports and the pytest plugin only read this registry. Claims come from entry points
of the group :data:`ENTRY_POINT_GROUP` (how dpaudit's own, ``"bundled"``, papers come, so this
package imports no paper), from plugins named at run time (:func:`load_plugin`) and from code already running
(:class:`Origin`), all loaded the same way. Entry points are loaded the first time the registry is
read, so importing :mod:`dpaudit` stays cheap; a module that fails to import is a
:class:`PluginError` naming it, never a silently missing claim.

Where claims come from, in full: docs/claim-api.md#the-claim-registry
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.util
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

from dpaudit.claims.context import BUDGETS, AuditContext, Budget
from dpaudit.claims.model import PrivacyClaim
from dpaudit.claims.record import ClaimAudit

__all__ = ["Budget", "BUDGETS", "AuditContext", "RegisteredClaim", "Origin", "PluginError",
           "ENTRY_POINT_GROUP", "register", "get", "all_claims", "unregister", "load_plugin",
           "loaded_plugins", "reproduce_command"]

#: The entry-point group an installed distribution uses to register claims.
ENTRY_POINT_GROUP = "dpaudit.claims"

#: Namespaces a claim id cannot use: a report directory holds these names at its top level (the
#: papers' pages ``papers/<ns>.*``, the index and the manifest), which a claim's files
#: ``<namespace>/<name>.*`` would overwrite or collide with.
RESERVED_NAMESPACES = frozenset(["papers", "index.json", "index.md", "index.html",
                                 "dpaudit-manifest.json"])


def check_namespace(claim_id: str) -> None:
    """ValueError when ``claim_id``'s namespace is reserved (:data:`RESERVED_NAMESPACES`)."""
    namespace = str(claim_id).split("/", 1)[0]
    if namespace.lower() in RESERVED_NAMESPACES:
        raise ValueError(f"claim id {claim_id!r}: the namespace {namespace!r} is reserved (a "
                         f"report directory holds {namespace!r} itself; reserved: "
                         f"{', '.join(sorted(RESERVED_NAMESPACES))}); choose another namespace")


class PluginError(ValueError):
    """A claim module (entry point or ``--plugin``) could not be loaded; the message names it."""


@dataclass(frozen=True)
class Origin:
    """Where a registration came from.

    ``kind``: ``"bundled"`` (dpaudit's own entry points), ``"entry point"`` (another installed
    distribution), ``"plugin"`` (named at run time) or ``"code"`` (registered by running code);
    ``module``: the module whose import (or code) registered it; ``distribution``: the installed
    distribution of an entry point; ``plugin``: what ``--plugin`` must name to load it again (a
    dotted name or a file path), empty when nothing needs naming.
    """

    kind: str
    module: str
    distribution: str = ""
    plugin: str = ""
    path: str = ""

    def to_dict(self) -> dict[str, str]:
        out = {"kind": self.kind, "module": self.module}
        for name in ("distribution", "plugin", "path"):
            if getattr(self, name):
                out[name] = getattr(self, name)
        return out

    def describe(self) -> str:
        if self.kind == "bundled":
            return f"bundled with dpaudit ({self.module})"
        if self.kind == "entry point":
            return f"entry point of {self.distribution or '?'} ({self.module})"
        if self.kind == "plugin":
            return f"plugin {self.plugin}"
        return f"registered by {self.path or self.module}"


AuditFunction = Callable[[AuditContext], ClaimAudit]


@dataclass(frozen=True)
class RegisteredClaim:
    claim: PrivacyClaim
    audit: AuditFunction
    kind: str = "learner"  # "learner" or "mechanism"
    origin: Origin = field(default_factory=lambda: Origin("code", "?"))


_REGISTRY: dict[str, RegisteredClaim] = {}
_loaded = False
#: The origin of registrations made while a claim module is being imported (innermost last).
_LOADING: list[Origin] = []
#: ``--plugin`` specs loaded in this process, in order (what a reproduce command must name).
_PLUGINS: list[str] = []


def register(claim: PrivacyClaim, audit: AuditFunction | Any, kind: str = "learner"
             ) -> PrivacyClaim:
    """Register ``claim`` with what audits it; returns the claim for convenience.

    ``audit`` is either a function ``AuditContext -> ClaimAudit`` or a claim declaration (a
    :class:`~dpaudit.claims.declaration.Declaration`), which the one claim driver runs.
    """
    from dpaudit.claims.declaration import Declaration

    origin = _LOADING[-1] if _LOADING else _caller_origin()
    check_namespace(claim.id)
    if isinstance(audit, Declaration):
        audit = _driven(audit)
    elif hasattr(audit, "plan") and hasattr(audit, "grid"):
        raise TypeError(f"the declaration of {claim.id!r} must subclass "
                        "dpaudit.claims.declaration.Declaration (the claim driver calls its hooks "
                        f"directly), got {type(audit).__name__}")
    existing = _REGISTRY.get(claim.id)
    if existing is not None and existing.claim != claim:
        raise ValueError(f"claim id {claim.id!r} is already registered with a different claim "
                         f"(by {existing.origin.describe()}; again by {origin.describe()})")
    if (existing is not None and existing.origin.kind != "code" and origin.kind != "code"
            and existing.origin.module != origin.module):
        # Two claim modules with one id: whichever loads last would silently decide the verdict.
        raise ValueError(f"claim id {claim.id!r} is registered by both "
                         f"{existing.origin.describe()} and {origin.describe()}; rename one of "
                         "them, or load only one")
    if existing is not None and existing.claim == claim and origin.kind == "code":
        # The same claim registered again by running code (assert_claim, audit_claim on a claim a
        # module registered at import): the module that registered it first is the one a rerun
        # must import, so it stays the origin the reproduce command names (not the test file).
        origin = existing.origin
    _REGISTRY[claim.id] = RegisteredClaim(claim, _reproducible(audit, claim.id, origin), kind,
                                          origin)
    return claim


def reproduce_command(claim_id: str, origin: Origin, budget: str, seed: int, alpha: float) -> str:
    """The shell command that reruns an audit, every token shell-quoted, that works as pasted:
    it names what registers the claim when dpaudit does not, with ``--plugin``: the
    plugin, the module an installed package's entry point names (so a missing package is named
    by the error), or the file of the module that registered it. A claim registered by a script
    as it ran (``__main__``) is reproduced by running the script again, and one registered
    interactively by no command; the text is then a parenthesised note saying so, never a
    command that fails."""
    import shlex

    words = ["dpaudit", "audit", claim_id, "--budget", str(budget), "--seed", str(int(seed)),
             "--alpha", repr(float(alpha))]
    if origin.kind == "plugin":
        words += ["--plugin", origin.plugin]
    elif origin.kind == "entry point":
        module = origin.module.split(":", 1)[0].strip()
        if module:
            words += ["--plugin", module]
    elif origin.kind == "code":
        if origin.module == "__main__" and origin.path:
            return (f"(registered by the script {origin.path} as it ran: reproduce it by running "
                    f"python {origin.path} again. To audit it with the dpaudit command, register "
                    "it when a module is imported and pass --plugin MODULE)")
        if not origin.path:
            return (f"(registered interactively by {origin.module}: no command reproduces it; "
                    "put the claim in a module and pass --plugin MODULE)")
        words += ["--plugin", origin.path]
    return " ".join(shlex.quote(w) for w in words)


def _reproducible(audit: AuditFunction, claim_id: str, origin: Origin) -> AuditFunction:
    """``audit`` with the record's reproduce command made to work when pasted (plugins named)."""
    def run(ctx: AuditContext) -> ClaimAudit:
        result = audit(ctx)
        if not isinstance(result, ClaimAudit):
            raise TypeError(f"the audit function of {claim_id!r} returned "
                            f"{type(result).__name__}, not a dpaudit ClaimAudit")
        result.reproduce = reproduce_command(claim_id, origin, ctx.budget.name, ctx.seed,
                                             ctx.alpha)
        return result

    for attr in ("declaration", "__doc__", "__module__", "__closure__"):
        if attr == "__closure__":
            continue
        if hasattr(audit, attr):
            try:
                setattr(run, attr, getattr(audit, attr))
            except (AttributeError, TypeError):
                pass
    run.wrapped = audit  # type: ignore[attr-defined]
    return run


def _caller_origin() -> Origin:
    """The origin of a registration made by running code: the first frame outside dpaudit."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_globals.get("__name__", "").startswith("dpaudit."):
        frame = frame.f_back  # type: ignore[assignment]
    if frame is None:
        return Origin("code", "?")
    name = frame.f_globals.get("__name__", "?")
    path = frame.f_globals.get("__file__") or ""
    return Origin("code", name, path=str(Path(path).resolve()) if path else "")


def _driven(declaration: Any) -> AuditFunction:
    def audit(ctx: AuditContext) -> ClaimAudit:
        from dpaudit.claims.driver import run_claim

        return run_claim(declaration, ctx)

    audit.declaration = declaration  # type: ignore[attr-defined]
    audit.__doc__ = f"Audit of {declaration.claim.id} by the claim driver."
    return audit


def unregister(claim_id: str) -> None:
    """Remove a registration (for tests that register temporary claims); unknown ids are ignored."""
    _REGISTRY.pop(claim_id, None)


@contextlib.contextmanager
def _loading(origin: Origin) -> Iterator[None]:
    _LOADING.append(origin)
    try:
        yield
    finally:
        _LOADING.pop()


def _entry_points() -> list[Any]:
    from importlib.metadata import entry_points

    eps = list(entry_points(group=ENTRY_POINT_GROUP))
    # dpaudit's own first, then the others, each in name order: a stable loading order.
    return sorted(eps, key=lambda ep: (ep.dist is None or ep.dist.name != "dpaudit",
                                       ep.dist.name if ep.dist else "", ep.name))


def _load() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    for ep in _entry_points():
        dist = ep.dist.name if ep.dist is not None else ""
        kind = "bundled" if dist == "dpaudit" else "entry point"
        with _loading(Origin(kind, ep.value, distribution=dist)):
            try:
                ep.load()
            except (Exception, SystemExit) as exc:
                _loaded = False  # a later read names the failure again instead of hiding it
                raise PluginError(f"the {ENTRY_POINT_GROUP} entry point {ep.name!r} of "
                                  f"{dist or 'an unknown distribution'} ({ep.value}) failed to "
                                  f"import: {_failure(exc)}") from exc


def _failure(exc: BaseException) -> str:
    """A failed import in words; ``sys.exit`` at import time is a failure, not a way out."""
    if isinstance(exc, SystemExit):
        return (f"it called sys.exit({exc.code!r}) while being imported (a claim module must "
                "only register claims)")
    return f"{type(exc).__name__}: {exc}"


def load_plugin(spec: str) -> list[str]:
    """Import the claim module ``spec`` (a dotted module name, or a path to a ``.py`` file) and
    return the ids of the claims it registered.

    A module already loaded is not imported again (its ids are returned). A path is imported under
    a name derived from its resolved location, with its folder put first on ``sys.path`` (as
    ``python path.py`` does, so that its sibling modules and sub-packages import), and its
    functions are pickled by value for Dask workers that cannot import it. :class:`PluginError` (one sentence naming ``spec``) when it
    cannot be found or fails to import.
    """
    if not isinstance(spec, str) or not spec.strip():
        raise PluginError(f"--plugin needs a module name or a .py path, got {spec!r}")
    _load()
    before = set(_REGISTRY)
    is_path = spec.endswith(".py") or "/" in spec or "\\" in spec
    if is_path:
        path = Path(spec).expanduser().resolve()
        if not path.is_file():
            raise PluginError(f"plugin {spec!r}: no such file")
        digest = hashlib.sha256(str(path).encode()).hexdigest()[:12]
        name = f"dpaudit_plugin_{path.stem.replace('-', '_')}_{digest}"
        origin = Origin("plugin", name, plugin=str(path), path=str(path))
        # Its own folder on sys.path, as `python path.py` puts it: its sibling modules and
        # sub-packages import.
        if str(path.parent) not in sys.path:
            sys.path.insert(0, str(path.parent))
        if name not in sys.modules:
            try:
                module_spec = importlib.util.spec_from_file_location(name, path)
                assert module_spec is not None and module_spec.loader is not None
                module = importlib.util.module_from_spec(module_spec)
                sys.modules[name] = module
                with _loading(origin):
                    module_spec.loader.exec_module(module)
            except (Exception, SystemExit) as exc:
                sys.modules.pop(name, None)
                raise PluginError(f"plugin {spec!r} failed to import: {_failure(exc)}") from exc
            try:
                import cloudpickle

                cloudpickle.register_pickle_by_value(sys.modules[name])
            except (ImportError, ValueError):  # pragma: no cover - cloudpickle is a dependency
                pass
    else:
        name = spec.strip()
        origin = Origin("plugin", name, plugin=name)
        if name not in sys.modules:
            try:
                with _loading(origin):
                    importlib.import_module(name)
            except ModuleNotFoundError as exc:
                if exc.name and name.startswith(exc.name):
                    raise PluginError(f"plugin {spec!r}: no module named {exc.name!r} (name an "
                                      "importable module or a .py file)") from exc
                raise PluginError(f"plugin {spec!r} failed to import: {type(exc).__name__}: "
                                  f"{exc}") from exc
            except (Exception, SystemExit) as exc:
                raise PluginError(f"plugin {spec!r} failed to import: {_failure(exc)}") from exc
    if origin.plugin not in _PLUGINS:
        _PLUGINS.append(origin.plugin)
    added = sorted(set(_REGISTRY) - before)
    return added or sorted(cid for cid, rc in _REGISTRY.items() if rc.origin.module == name)


def loaded_plugins() -> list[str]:
    """The ``--plugin`` specs loaded in this process, in order."""
    return list(_PLUGINS)


def unknown_claim_message(claim_id: str) -> str:
    """The sentence for an id no claim is registered under, with its near misses:
    ``unknown claim id 'jkt12-colt/pgid'; did you mean jkt12-colt/pigd? (`dpaudit list` shows the
    registered claims)``. Close matches by :func:`difflib.get_close_matches`; a bare name or
    namespace (``pigd``) suggests up to three ids that contain it."""
    import difflib

    ids = sorted(_REGISTRY)
    near = difflib.get_close_matches(claim_id, ids, n=3, cutoff=0.6)
    if not near:  # a bare algorithm name ("pigd") or paper prefix matches ids that contain it
        near = [i for i in ids if claim_id and claim_id.lower() in i.lower()][:3]
    hint = f"; did you mean {' or '.join(near)}?" if near else ""
    return f"unknown claim id {claim_id!r}{hint} (`dpaudit list` shows the registered claims)"


def get(claim_id: str) -> RegisteredClaim:
    """The registered claim with this id; ``KeyError`` with :func:`unknown_claim_message` (its
    near misses, not every known id) otherwise."""
    _load()
    try:
        return _REGISTRY[claim_id]
    except KeyError:
        raise KeyError(unknown_claim_message(claim_id)) from None


def all_claims() -> Iterator[RegisteredClaim]:
    """Every registered claim, sorted by id."""
    _load()
    for cid in sorted(_REGISTRY):
        yield _REGISTRY[cid]
