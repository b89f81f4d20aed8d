"""The protocol of a draw source, and the replay now open (:mod:`dpaudit.greybox.sources`)."""

from __future__ import annotations

import threading
from typing import Any, Protocol

import numpy as np

from dpaudit.greybox.replay import ReplayGenerator

__all__ = ["DrawSource", "active", "consume_seed"]


class DrawSource(Protocol):
    """One place noise can come from. ``name``: how the report names it; ``open(g)``: start
    routing its noise calls into the replay ``g``; ``close(g)``: restore, and list in
    ``g.foreign`` any draw made behind the patched calls."""

    name: str

    def open(self, g: ReplayGenerator) -> None: ...

    def close(self, g: ReplayGenerator) -> None: ...


#: Held while a replay (:func:`dpaudit.greybox.sources.intercepting`) or a recording of named
#: primitives (:func:`dpaudit.greybox.primitives.recording`) patches process-wide functions.
PATCH_LOCK = threading.RLock()
#: The replays now open, innermost last (:func:`active` is the last).
ACTIVE_REPLAYS: list[ReplayGenerator] = []


def active() -> ReplayGenerator | None:
    """The replay of the release now running under :func:`intercepting` (None outside)."""
    return ACTIVE_REPLAYS[-1] if ACTIVE_REPLAYS else None


def consume_seed(g: ReplayGenerator, source: str, seed: Any) -> None:
    """Note that ``source`` was seeded with ``seed`` in the release (see the module docstring)."""
    try:
        value = int(seed)
    except (TypeError, ValueError, OverflowError):
        return
    if np.ndim(seed) != 0:
        return
    g._record.seeds.append((source, value))
