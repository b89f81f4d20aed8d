"""Hypothesis searches that depend on their seed and program only, not on what else is imported.

Used by every Hypothesis search the engine runs (sensitivity lemmas, pair search, claim lemma
checks); a base module that imports nothing from dpaudit.
"""

from __future__ import annotations

import contextlib
from typing import Iterator

__all__ = ["independent_of_loaded_modules"]


@contextlib.contextmanager
def independent_of_loaded_modules() -> Iterator[None]:
    """Make Hypothesis searches inside the block independent of which project modules are loaded.

    Hypothesis (>= 6.131) mixes literal constants harvested from every *local* module in
    ``sys.modules`` into its draws. A lemma search would then depend on what else the process
    imported: adding a paper, or a user's own module, changed other claims' counterexamples, so a
    seed no longer reproduced a report. Inside this block the harvest is empty and the search is a
    function of its seed and program alone (Hypothesis's built-in constants stay). The hook is an
    internal of Hypothesis: if a release removes it there is nothing to disable and this is a no-op.
    Nesting is allowed; the previous hook and caches are restored on exit.
    """
    try:
        from hypothesis.internal.conjecture import providers
    except ImportError:  # pragma: no cover - a Hypothesis without the internals module
        yield
        return
    original = getattr(providers, "_get_local_constants", None)
    constants_type = getattr(providers, "Constants", None)
    cache = getattr(providers, "CONSTANTS_CACHE", None)
    if original is None or constants_type is None or cache is None:  # pragma: no cover
        yield
        return
    empty = constants_type()
    # Cached (built-in, local) constant tuples were computed with the harvest: drop them.
    cache.cache.clear()
    providers._get_local_constants = lambda: empty
    try:
        yield
    finally:
        providers._get_local_constants = original
        cache.cache.clear()

# ---------------------------------------------------------------------------------------------
# Distances
# ---------------------------------------------------------------------------------------------
