"""numpy ``Generator`` objects as a draw source: the rng dpaudit passes (a
:class:`~dpaudit.greybox.replay.ReplayGenerator`, which records, substitutes and traces its own
draws and guards its bits), and a ``Generator`` the release makes itself with
``np.random.default_rng(seed)`` (glue that seeds its own generator from the rng).

Inside :func:`dpaudit.greybox.sources.intercepting`, ``np.random.default_rng`` returns a replaying
child of the open replay on a stream of its own (the same record, so its draws are substituted
and checked like the rng's; a ``Generator`` passed in is returned as is). A ``Generator`` built
directly on a bit generator (``np.random.Generator(np.random.PCG64(s))``) or made before the audit
is not intercepted: its draws are not in the record, and the derivation's replays of one seed
disagree, so no law is derived from it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpaudit.greybox.replay import GENERATOR_SOURCE, INTERNAL_MODULES, ReplayGenerator
from dpaudit.greybox.sources.base import consume_seed

__all__ = ["MadeGenerators", "NAME", "RNG_NAME"]

INTERNAL_MODULES.add(__name__)

RNG_NAME = GENERATOR_SOURCE
NAME = "numpy Generator (made in the release)"


class MadeGenerators:
    """The draw source of ``np.random.default_rng`` in the release (module docstring)."""

    name = NAME

    def open(self, g: ReplayGenerator) -> None:
        self._saved = np.random.default_rng
        saved = self._saved

        def default_rng(seed: Any = None) -> np.random.Generator:
            if isinstance(seed, np.random.Generator):
                return seed
            if isinstance(seed, np.random.BitGenerator):
                return saved(seed)
            consume_seed(g, NAME, seed)
            rec = g._record
            child = g._child(np.random.PCG64(seed), rec.streams, 0)
            rec.streams += 1
            return child

        np.random.default_rng = default_rng

    def close(self, g: ReplayGenerator) -> None:
        np.random.default_rng = self._saved
