"""``np.random.RandomState`` instances made in the release as a draw source (the glue only seeds
one and hands it to the library, as diffprivlib's ``random_state=`` wants).

Inside :func:`dpaudit.greybox.sources.intercepting`, ``np.random.RandomState`` is a subclass
(``isinstance`` holds) whose ``normal``, ``laplace``, ``standard_normal`` and ``randn`` go through
the replay, drawn in record mode from a private twin seeded like the instance (same values for the
same seed); every other draw is served from the twin and listed as foreign; ``get_state``,
``set_state``, ``seed`` with a state and copies or pickles are guarded accesses. The instance's own
bits are never drawn from, so bits that moved by the end of the call are a draw the subclass did
not see (compiled code on its bit generator), a guarded access. A ``RandomState`` made before
the audit (at import time, by the library) is not intercepted: its draws are not in the record,
and the derivation's replays of a fixed seed disagree with each other, so no law is derived.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from dpaudit.greybox.replay import INTERNAL_MODULES, ReplayGenerator
from dpaudit.greybox.sources.base import active, consume_seed
from dpaudit.greybox.sources.numpy_global import FOREIGN, same_state

__all__ = ["RandomStates", "ReplayRandomState", "NAME"]

INTERNAL_MODULES.add(__name__)

NAME = "numpy RandomState"
_BASE = np.random.RandomState


class _Meta(type):
    """``isinstance(x, np.random.RandomState)`` keeps holding for a plain ``RandomState`` made
    before the audit while the name is patched."""

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, _BASE)

    def __subclasscheck__(cls, sub: type) -> bool:
        return issubclass(sub, _BASE)


class ReplayRandomState(_BASE, metaclass=_Meta):
    """A ``RandomState`` whose noise calls go through the open replay (module docstring); outside
    a replay it is a plain ``RandomState``."""

    def __init__(self, seed: Any = None) -> None:
        super().__init__(seed)
        self._twin = _BASE(seed)
        self._g = active()
        if self._g is not None:
            consume_seed(self._g, NAME, seed)
            _MADE.append(self)
        self._bits_before = self._bit_generator.state

    def _replay(self) -> ReplayGenerator | None:
        g = active()
        return g if g is not None and g is self._g else None

    def _noise(self, method: str, loc: Any, scale: Any, size: Any,
               real: Callable[[], Any]) -> Any:
        g = self._replay()
        if g is None:
            return real()
        return g.source_draw(NAME, method, loc, scale, size, real)

    def normal(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None) -> Any:  # noqa: D102
        return self._noise("normal", loc, scale, size, lambda: self._twin.normal(loc, scale, size))

    def laplace(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None) -> Any:  # noqa: D102
        return self._noise("laplace", loc, scale, size,
                           lambda: self._twin.laplace(loc, scale, size))

    def standard_normal(self, size: Any = None) -> Any:  # noqa: D102
        return self._noise("standard_normal", 0.0, 1.0, size,
                           lambda: self._twin.standard_normal(size))

    def randn(self, *shape: int) -> Any:  # noqa: D102
        return self.standard_normal(shape if shape else None)

    def seed(self, seed: Any = None) -> None:  # noqa: D102
        g = self._replay()
        if g is not None:
            consume_seed(g, NAME, seed)
        _BASE.seed(self, seed)
        self._twin.seed(seed)
        self._bits_before = self._bit_generator.state

    def _guarded(self, what: str) -> None:
        g = self._replay()
        if g is not None:
            g._guard(f"RandomState.{what} ({NAME})")

    def get_state(self, legacy: bool = True) -> Any:  # noqa: D102
        self._guarded("get_state")
        return self._twin.get_state(legacy=legacy)

    def set_state(self, state: Any) -> None:  # noqa: D102
        self._guarded("set_state")
        self._twin.set_state(state)

    def __reduce__(self) -> Any:
        self._guarded("a copy or pickle of the RandomState")
        return _BASE.__reduce__(self._twin)


def _foreign(name: str) -> Callable[..., Any]:
    def served(self: ReplayRandomState, *args: Any, **kwargs: Any) -> Any:
        g = self._replay()
        if g is not None:
            g.foreign.append(f"RandomState.{name} ({NAME})")
        return getattr(self._twin, name)(*args, **kwargs)
    served.__name__ = name
    served.__doc__ = f"``RandomState.{name}``, served and listed as foreign under replay."
    return served


for _name in FOREIGN + ("tomaxint",):
    if hasattr(_BASE, _name):
        setattr(ReplayRandomState, _name, _foreign(_name))

_MADE: list[ReplayRandomState] = []


class RandomStates:
    """The draw source of ``RandomState`` instances made in the release (module docstring)."""

    name = NAME

    def open(self, g: ReplayGenerator) -> None:
        self._saved = (np.random.RandomState, np.random.mtrand.RandomState)
        self._made_before = len(_MADE)
        np.random.RandomState = ReplayRandomState  # type: ignore[misc]
        np.random.mtrand.RandomState = ReplayRandomState  # type: ignore[misc]

    def close(self, g: ReplayGenerator) -> None:
        np.random.RandomState, np.random.mtrand.RandomState = self._saved  # type: ignore[misc]
        made = _MADE[self._made_before:]
        del _MADE[self._made_before:]
        for rs in made:
            if not same_state(rs._bits_before, rs._bit_generator.state):
                g._guard(f"a draw from a {NAME} the replay did not see (its bits moved "
                                 "outside its methods: compiled code on its bit generator)")
                break
