"""Draw sources: where a release's noise comes from, each intercepted inside the context dpaudit
opens around every call of the release under replay.

A draw source is anything a release can draw Gaussian or Laplace noise from: the rng dpaudit
passes (:class:`~dpaudit.greybox.replay.ReplayGenerator`), numpy's global functions, a
``RandomState`` or a ``Generator`` the code makes. Each source is one module implementing
:class:`DrawSource`: ``open(g)`` routes its noise calls through ``g.source_draw``, lists every
other draw in ``g.foreign``, guards every state access that could replay or cancel noise and
lists draws it could not see, so a law is "not derivable", never silently wrong; ``close()``
restores what it patched. A seed equal to a scalar ``rng.integers`` drawn in the same call is
consumed (checked by :mod:`dpaudit.greybox.derivation`). torch is a source only when already
imported. The patches are process-wide: do not run replays concurrently with other numpy-random
code in the same process.

Seeds, torch and thread safety in full: docs/greybox-notes.md#draw-sources.
"""

from __future__ import annotations

import contextlib
import sys
from typing import Any, Callable, Iterator

from dpaudit.greybox.replay import ReplayGenerator
from dpaudit.greybox.sources.base import (ACTIVE_REPLAYS, PATCH_LOCK, DrawSource, active,
                                          consume_seed)
from dpaudit.greybox.sources.numpy_generator import MadeGenerators
from dpaudit.greybox.sources.numpy_global import NumpyGlobal
from dpaudit.greybox.sources.random_state import RandomStates

__all__ = ["DrawSource", "intercepting", "run_release", "active", "consume_seed", "SOURCES"]


def _reconcile(g: ReplayGenerator) -> None:
    """Take each scalar ``rng.integers`` draw that seeded a source off ``foreign``."""
    rec = g._record
    given = [v for _, v in rec.seeds]
    for value in list(rec.seed_candidates):
        if value in given and "integers" in rec.foreign:
            src = rec.seeds[given.index(value)][0]
            given[given.index(value)] = None  # type: ignore[call-overload]
            rec.foreign.remove("integers")
            rec.seed_candidates.remove(value)
            rec.seeded.append((src, value))


def _sources() -> list[DrawSource]:
    out: list[DrawSource] = [NumpyGlobal(), RandomStates(), MadeGenerators()]
    if "torch" in sys.modules:  # never import torch for a release that does not use it
        from dpaudit.greybox.sources.torch_source import TorchSource
        out.append(TorchSource())
    return out


#: The draw sources beyond the rng itself, by name (filled on first use).
SOURCES: dict[str, str] = {
    "numpy Generator (the rng dpaudit passes)": "dpaudit.greybox.replay",
    "numpy's global RNG": "dpaudit.greybox.sources.numpy_global",
    "numpy RandomState": "dpaudit.greybox.sources.random_state",
    "numpy Generator (made in the release)": "dpaudit.greybox.sources.numpy_generator",
    "torch's global generator": "dpaudit.greybox.sources.torch_source",
    "torch.Generator (made in the release)": "dpaudit.greybox.sources.torch_source",
}


@contextlib.contextmanager
def intercepting(g: ReplayGenerator) -> Iterator[ReplayGenerator]:
    """Route every draw source's noise calls into ``g`` while the block runs.

    What each source does inside the block: docs/greybox-notes.md#draw-sources.
    """
    with PATCH_LOCK:
        opened: list[DrawSource] = []
        ACTIVE_REPLAYS.append(g)
        try:
            for src in _sources():
                src.open(g)
                opened.append(src)
            yield g
        finally:
            for src in reversed(opened):
                src.close(g)
            ACTIVE_REPLAYS.pop()
            _reconcile(g)


def run_release(mechanism: Callable[[Any, int, Any], Any], data: Any, n: int,
                g: ReplayGenerator) -> Any:
    """``mechanism(data, n, g)`` with every draw source intercepted into ``g``."""
    with intercepting(g):
        return mechanism(data, n, g)
