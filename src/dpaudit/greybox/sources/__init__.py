"""Draw sources: where a release's noise comes from, each intercepted inside the context dpaudit
opens around every call of the release under replay.

A draw source is anything a release can draw Gaussian or Laplace noise from. The rng dpaudit
passes (a :class:`~dpaudit.greybox.replay.ReplayGenerator`) is one; real DP code more often draws
from numpy's global functions (``np.random.normal``), a ``np.random.RandomState`` its glue seeds,
or a ``Generator`` it makes itself. Each source is one module implementing :class:`DrawSource`:
``open(g)`` patches its entry points so that every noise call goes through ``g.source_draw``
(recorded, substituted or traced exactly like the rng's own draws, named by the source, at the
line that draws), every other draw it serves is listed in ``g.foreign`` (no law is derived), every
access to its state that could replay or cancel noise is a guarded access, and a draw it could not
see (its state moved outside the patched calls) is listed too, so the law is "not derivable",
never silently wrong. ``close()`` restores what it patched.

Seeds. Glue that only seeds a source (``np.random.seed(int(rng.integers(2**31)))``) draws
``rng.integers``, which the replay lists as foreign. A source that is given a seed equal to a
scalar ``rng.integers`` value drawn in the same call marks it consumed, and on leaving the context
that draw is taken off ``foreign`` (:attr:`~dpaudit.greybox.replay._Record.seeded`): the noise it
drives is then substituted. That the value was used *only* as a seed is checked by the derivation
(its noise-free output must not change with the rng's seed: :mod:`dpaudit.greybox.derivation`).

torch (:mod:`dpaudit.greybox.sources.torch_source`) is a source only when it is already imported
(``"torch" in sys.modules``: a release that uses torch has imported it); dpaudit never imports it
on its own.

Thread safety: the patches are process-wide while the context is open. A module lock serialises
dpaudit's own replays (one release under replay at a time in a process); another thread that draws
from numpy's global functions or makes a ``RandomState`` while a replay is open is recorded into
that replay and makes its law not derivable or departing, never silently wrong. Do not run
replays concurrently with other numpy-random code in the same process.
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
    """Route every draw source's noise calls into ``g`` while the block runs (module docstring)."""
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
