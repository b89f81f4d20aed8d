"""Named primitives ("trusted primitives"): noise that no draw source can intercept, seen at the
call of the library function that adds it.

Compiled samplers, OpenDP's measurements and a library's own mechanism classes draw from
generators dpaudit cannot replay (:mod:`dpaudit.greybox.sources`), but it can see the call: the
user names the primitive by its dotted path, the argument that carries the value, the noise scale
and the sensitivity its privacy rests on. Inside :func:`recording` each named primitive is patched
where its path points and every call on the recording thread is recorded (:class:`PrimitiveCall`)
and passed on unchanged; the checks and the accounting from the primitives' laws are in
:mod:`dpaudit.claims.primitive_check` (dp-recorder's trusted primitives, PETS 2026). A call the
patch cannot see (a function bound before the recording, another thread) is not recorded, and a
primitive never called blocks ``holds``: a clear finding, never a silently empty accounting.

What the patch sees, and what it does not: docs/greybox-notes.md#named-primitives.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import importlib
import inspect
import math
import numbers
import random
import sys
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Mapping, Sequence

import numpy as np

from dpaudit.evidence_records import NoiseFamily

from dpaudit.greybox.sources.base import PATCH_LOCK

__all__ = ["Primitive", "PrimitiveCall", "Recording", "FAMILIES", "recording", "record_release"]

#: The families a primitive may declare, and the norm its sensitivity is measured in.
FAMILIES = {NoiseFamily.LAPLACE.value: "l1", NoiseFamily.GAUSSIAN.value: "l2",
            NoiseFamily.DISCRETE_LAPLACE.value: "l1"}

#: What ``scale`` means for each family.
SCALE_MEANING = {NoiseFamily.LAPLACE.value: "the Laplace scale b (density exp(-|x|/b) / 2b)",
                 NoiseFamily.GAUSSIAN.value: "the Gaussian standard deviation sigma",
                 NoiseFamily.DISCRETE_LAPLACE.value: "t of the discrete Laplace P(k) ~ exp(-|k| / t) on the "
                                     "integers (the geometric mechanism)"}

Spec = str | int | float | Callable[[Mapping[str, Any]], Any]


def _resolve(path: str) -> tuple[Any, str, Any]:
    """``(owner, attribute, object)`` of a dotted ``path``: the longest importable module prefix,
    then attributes. ValueError naming ``path`` when it does not resolve."""
    parts = path.split(".")
    module = None
    for k in range(len(parts) - 1, 0, -1):
        try:
            module = importlib.import_module(".".join(parts[:k]))
        except ImportError:
            continue
        rest = parts[k:]
        break
    if module is None:
        raise ValueError(f"Primitive.path {path!r} does not resolve: no module of it imports "
                         "(give 'package.module.function' or 'package.module.Class.method')")
    owner: Any = module
    for name in rest[:-1]:
        if not hasattr(owner, name):
            raise ValueError(f"Primitive.path {path!r} does not resolve: "
                             f"{getattr(owner, '__name__', owner)!r} has no attribute {name!r}")
        owner = getattr(owner, name)
    if not hasattr(owner, rest[-1]):
        raise ValueError(f"Primitive.path {path!r} does not resolve: "
                         f"{getattr(owner, '__name__', owner)!r} has no attribute {rest[-1]!r}")
    obj = getattr(owner, rest[-1])
    if not callable(obj):
        raise ValueError(f"Primitive.path {path!r} names a {type(obj).__name__}, not a callable")
    return owner, rest[-1], obj


def _signature(obj: Any) -> inspect.Signature | None:
    try:
        return inspect.signature(obj)
    except (TypeError, ValueError):  # some builtins have none: positions and keywords as given
        return None


@dataclass(frozen=True, kw_only=True)
class Primitive:
    """A library primitive that adds noise, named so dpaudit can record what reaches it.

    Parameters
    ----------
    path
        Its dotted path: ``"package.module.function"`` or ``"package.module.Class.method"``
        (where the release looks it up when it calls it).
    family
        ``"laplace"`` (sensitivity in l1, ``scale`` the Laplace scale b), ``"gaussian"``
        (sensitivity in l2, ``scale`` the standard deviation sigma) or ``"discrete laplace"``
        (integer noise ``P(k) ~ exp(-|k| / t)``, the geometric mechanism; sensitivity in l1,
        rounded up to an integer; ``scale`` is t, as OpenDP's integer ``then_laplace`` reads it).
    value
        The argument that carries the value the noise is added to: its name, or its position
        among the call's arguments (``self`` of a method not counted).
    scale
        The noise scale: an argument name, ``"self.attr"`` (an attribute of the instance, dotted
        chains allowed), a positive number, or ``scale(call) -> number`` of the call's bound
        arguments (a mapping, ``call["self"]`` the instance of a method).
    sensitivity
        The largest distance between the values reaching the primitive on neighbouring inputs
        (under the claim's relation; a distance, not a record's contribution), as the glue
        declares it: a number ``>= 0``, an argument name, ``"self.attr"`` or a callable like
        ``scale``. The audit measures the actual distance on each declared pair against it.
    """

    path: str
    family: str
    value: str | int
    scale: Spec
    sensitivity: Spec

    def __post_init__(self) -> None:
        if not isinstance(self.path, str) or not self.path.strip() or "." not in self.path:
            raise ValueError(f"Primitive.path must be a dotted path 'package.module.function' or "
                             f"'package.module.Class.method', got {self.path!r}")
        if self.family not in FAMILIES:
            raise ValueError(f"Primitive.family must be one of {sorted(FAMILIES)}, got "
                             f"{self.family!r}")
        owner, attr, obj = _resolve(self.path)
        names, method = self._parameters(owner, attr, obj)
        if isinstance(self.value, bool) or not isinstance(self.value, (str, int)):
            raise TypeError(f"Primitive.value must be an argument name or a position (int), got "
                            f"{type(self.value).__name__}")
        self._check_argument("value", self.value, names)
        for what in ("scale", "sensitivity"):
            spec = getattr(self, what)
            if isinstance(spec, bool):
                raise TypeError(f"Primitive.{what} must be an argument name, 'self.attr', a "
                                "number or a callable, got bool")
            if isinstance(spec, numbers.Real):
                v = float(spec)
                ok = v > 0 if what == "scale" else v >= 0
                if not (math.isfinite(v) and ok):
                    raise ValueError(f"Primitive.{what} must be a finite number "
                                     f"{'> 0' if what == 'scale' else '>= 0'}, got {spec!r}")
            elif isinstance(spec, str):
                if spec.startswith("self."):
                    if not method:
                        raise ValueError(f"Primitive.{what} {spec!r} reads an attribute of the "
                                         f"instance, but {self.path!r} is not a method of a class")
                else:
                    self._check_argument(what, spec, names)
            elif not callable(spec):
                raise TypeError(f"Primitive.{what} must be an argument name, 'self.attr', a "
                                f"number or a callable scale(call), got {type(spec).__name__}")

    def _parameters(self, owner: Any, attr: str, obj: Any) -> tuple[list[str] | None, bool]:
        """The call's parameter names (``self`` of a method dropped; None: no signature, or
        ``**kwargs`` takes any name) and whether it is an instance method."""
        method = False
        raw = obj
        if inspect.isclass(owner):
            raw = inspect.getattr_static(owner, attr)
            method = not isinstance(raw, (staticmethod, classmethod))
        sig = _signature(obj if not method else raw)
        if sig is None:
            return None, method
        params = list(sig.parameters.values())
        if method and params:
            params = params[1:]
        if any(p.kind == p.VAR_KEYWORD for p in params):
            return None, method
        return [p.name for p in params], method

    def _check_argument(self, what: str, spec: str | int, names: list[str] | None) -> None:
        if names is None:
            return
        if isinstance(spec, int):
            if not 0 <= spec < len(names):
                raise ValueError(f"Primitive.{what}: position {spec} is out of range; "
                                 f"{self.path} takes {len(names)} argument(s) {names}")
        elif spec not in names:
            raise ValueError(f"Primitive.{what}: {self.path} takes no argument {spec!r}; its "
                             f"arguments are {names}")

    @property
    def norm(self) -> str:
        """``"l1"`` (Laplace) or ``"l2"`` (Gaussian): the norm of the sensitivity."""
        return FAMILIES[self.family]

    def describe(self) -> str:
        return (f"{self.family} primitive {self.path} (value: {self.value!r}, scale: "
                f"{_spec_text(self.scale)}, declared {self.norm} sensitivity: "
                f"{_spec_text(self.sensitivity)})")


def _spec_text(spec: Spec) -> str:
    if callable(spec) and not isinstance(spec, str):
        return getattr(spec, "__name__", "a callable")
    return repr(spec)


@dataclass(frozen=True)
class PrimitiveCall:
    """One recorded call of a named primitive: ``index`` (position in the named list),
    ``path``, ``family``, ``site`` (``file:line`` of the caller), ``value`` (a float array, or
    None when the value is not numeric), ``scale`` (a float array, or None), ``sensitivity``
    (float, or None), ``problem`` (why a field could not be read, else ``""``)."""

    index: int
    path: str
    family: str
    site: str
    value: np.ndarray | None
    scale: np.ndarray | None
    sensitivity: float | None
    problem: str = ""

    @property
    def shape(self) -> tuple[int, ...] | None:
        return None if self.value is None else tuple(self.value.shape)


@dataclass
class Recording:
    """What one run of a release did with the named primitives: ``calls`` in order,
    ``returns`` (what each call returned, in the same order), ``output`` (what the release
    returned), ``failure`` (the release raised: why, else ``""``), ``served`` (under a served
    replay: how many calls got a served value; ``None`` when the primitives ran)."""

    calls: list[PrimitiveCall] = field(default_factory=list)
    returns: list[Any] = field(default_factory=list)
    output: Any = None
    failure: str = ""
    served: int | None = None


class _Served:
    """The values a served replay hands back, call by call (:func:`record_release`)."""

    def __init__(self, values: Sequence[Any] | None):
        self.values = None if values is None else list(values)
        self.used = 0

    def next(self) -> tuple[bool, Any]:
        if self.values is None or self.used >= len(self.values):
            return False, None
        self.used += 1
        return True, copy.deepcopy(self.values[self.used - 1])


def _attribute(obj: Any, chain: str) -> Any:
    for name in chain.split("."):
        obj = getattr(obj, name)
    return obj


def _read(spec: Spec, call: Mapping[str, Any], what: str) -> Any:
    if isinstance(spec, numbers.Real) and not isinstance(spec, bool):
        return float(spec)
    if isinstance(spec, str):
        if spec.startswith("self."):
            return _attribute(call["self"], spec[len("self."):])
        return call[spec]
    if callable(spec):
        return spec(call)
    raise TypeError(f"Primitive.{what} cannot be read")  # pragma: no cover - validated


def _bind(sig: inspect.Signature | None, method: bool, args: tuple[Any, ...],
          kwargs: Mapping[str, Any]) -> dict[Any, Any]:
    """The call's arguments by name and by position (``self`` of a method not counted;
    ``"self"`` maps to the instance)."""
    call: dict[Any, Any] = {}
    if method:
        call["self"] = args[0] if args else None
    if sig is None:
        call.update(enumerate(args[1:] if method else args))
        call.update(kwargs)
        return call
    bound = sig.bind(*args, **kwargs)
    bound.apply_defaults()
    names = list(sig.parameters)[1 if method else 0:]
    for i, name in enumerate(names):
        if name in bound.arguments:
            call[name] = call[i] = bound.arguments[name]
    return call


def _as_numbers(x: Any) -> np.ndarray | None:
    if isinstance(x, (str, bytes)) or x is None:
        return None
    try:
        if hasattr(x, "detach"):  # a torch tensor (CPU)
            x = x.detach().cpu().numpy()
        arr = np.array(x, dtype=float)
    except (TypeError, ValueError):
        return None
    return arr


class _Patch:
    """One primitive patched where its path points, restored by :meth:`restore`."""

    def __init__(self, index: int, prim: Primitive, calls: list[PrimitiveCall], thread: int,
                 returns: list[Any] | None = None, served: _Served | None = None):
        owner, attr, obj = _resolve(prim.path)
        self.owner, self.attr = owner, attr
        self.had = attr in getattr(owner, "__dict__", {})
        raw = inspect.getattr_static(owner, attr) if inspect.isclass(owner) else obj
        self.raw = raw
        method = inspect.isclass(owner) and not isinstance(raw, (staticmethod, classmethod))
        func = raw.__func__ if isinstance(raw, (staticmethod, classmethod)) else (
            raw if inspect.isclass(owner) else obj)
        sig = _signature(func)
        if isinstance(raw, classmethod) and sig is not None:
            sig = sig.replace(parameters=list(sig.parameters.values())[1:])

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if threading.get_ident() == thread:
                frame = sys._getframe(1)
                site = f"{frame.f_code.co_filename}:{frame.f_lineno}"
                call_args = args[1:] if isinstance(raw, classmethod) else args
                calls.append(_note(index, prim, sig, method, call_args, kwargs, site))
                if served is not None:
                    hit, value = served.next()
                    if hit:
                        if returns is not None:
                            returns.append(value)
                        return value
                result = func(*args, **kwargs)
                if returns is not None:
                    returns.append(result)
                return result
            return func(*args, **kwargs)

        if isinstance(raw, staticmethod):
            new: Any = staticmethod(wrapper)
        elif isinstance(raw, classmethod):
            new = classmethod(wrapper)
        else:
            new = wrapper
        try:
            setattr(owner, attr, new)
        except (TypeError, AttributeError) as exc:
            raise ValueError(f"Primitive.path {prim.path!r} cannot be wrapped: "
                             f"{type(owner).__name__} {getattr(owner, '__name__', owner)!r} does "
                             f"not allow setting {attr!r} ({exc}); name the Python function "
                             "that calls it instead") from None

    def restore(self) -> None:
        if self.had or not inspect.isclass(self.owner):
            setattr(self.owner, self.attr, self.raw)
        else:
            delattr(self.owner, self.attr)


def _note(index: int, prim: Primitive, sig: inspect.Signature | None, method: bool,
          args: tuple[Any, ...], kwargs: Mapping[str, Any], site: str) -> PrimitiveCall:
    """The record of one call; a field that cannot be read is a ``problem``, never a crash."""
    try:
        call = _bind(sig, method, args, kwargs)
    except TypeError as exc:
        return PrimitiveCall(index, prim.path, prim.family, site, None, None, None,
                             f"its arguments do not bind to its signature ({exc})")
    problems = []
    value = scale = None
    sens: float | None = None
    try:
        raw = call[prim.value]
    except KeyError:
        raw = None
        problems.append(f"the value argument {prim.value!r} is not in the call")
    else:
        value = _as_numbers(raw)
        if value is None:
            problems.append(f"its value {prim.value!r} is a non-numeric "
                            f"{type(raw).__name__}")
        elif not np.all(np.isfinite(value)):
            problems.append(f"its value {prim.value!r} is not finite (a distance to it means "
                            "nothing)")
    for what in ("scale", "sensitivity"):
        try:
            got = _as_numbers(_read(getattr(prim, what), call, what))
        except Exception as exc:  # a missing attribute or argument: said, never raised
            problems.append(f"its {what} could not be read ({type(exc).__name__}: "
                            f"{str(exc)[:80]})")
            continue
        if got is None:
            problems.append(f"its {what} is not numeric")
        elif not np.all(np.isfinite(got)):
            problems.append(f"its {what} is not finite")
        elif what == "scale":
            scale = got
        elif got.size != 1:
            problems.append(f"its declared sensitivity is not one number (shape {got.shape})")
        elif float(got.reshape(-1)[0]) < 0:
            problems.append(f"its declared sensitivity {float(got.reshape(-1)[0]):g} is "
                            "negative")
        else:
            sens = float(got.reshape(-1)[0])
    return PrimitiveCall(index, prim.path, prim.family, site, value, scale, sens,
                         "; ".join(problems))


@contextlib.contextmanager
def recording(primitives: Sequence[Primitive], *, returns: list[Any] | None = None,
              served: _Served | None = None) -> Iterator[list[PrimitiveCall]]:
    """Patch every named primitive while the block runs; yields the list the calls of this
    thread are appended to (docs/greybox-notes.md#named-primitives). ``returns`` collects what
    each call returned; ``served`` hands back given values instead of running the primitives."""
    with PATCH_LOCK:
        calls: list[PrimitiveCall] = []
        patches: list[_Patch] = []
        try:
            for i, prim in enumerate(primitives):
                patches.append(_Patch(i, prim, calls, threading.get_ident(), returns, served))
            yield calls
        finally:
            for p in reversed(patches):
                p.restore()


def record_release(mechanism: Callable[[Any, int, np.random.Generator], Any], data: Any,
                   primitives: Sequence[Primitive], *, seed: int,
                   serve: Sequence[Any] | None = None) -> Recording:
    """One run (``n = 1``) of ``mechanism`` on ``data`` with ``primitives`` recorded.

    The rng is ``np.random.default_rng(seed)``, and numpy's global state and Python's ``random``
    are seeded from ``seed`` too (and restored afterwards), so the two inputs of a pair recorded
    with one seed get the same draws from every generator the release may use.

    ``serve``: a *served replay*. The primitives are not run; call ``k`` returns (a copy of)
    ``serve[k]``, e.g. what the primitives returned on the other input of a pair; calls beyond
    ``len(serve)`` run the primitive. If the release is a post-processing of its primitives'
    outputs (the premise of accounting it from their laws), its output under a served replay
    of the other input's values is that input's output, whatever data it is given.
    """
    np_state, py_state = np.random.get_state(), random.getstate()
    out = Recording()
    served = None if serve is None else _Served(serve)
    try:
        np.random.seed(seed % 2**32)
        random.seed(seed)
        with recording(primitives, returns=out.returns, served=served) as calls:
            try:
                out.output = mechanism(data, 1, np.random.default_rng(seed))
            except Exception as exc:
                out.failure = f"the release raised {type(exc).__name__}: {str(exc)[:120]}"
            out.calls = list(calls)
            out.served = None if served is None else served.used
    finally:
        np.random.set_state(np_state)
        random.setstate(py_state)
    return out
