"""How the noise calls of an ``n``-run call line up with those of a single run, and a replay of
many runs in one call with supplied standardised draws.

A release ``mechanism(data, n, rng)`` returns ``n`` independent runs; its ``n``-run call makes its
single run's noise calls in one of three layouts: ``"vector"`` (each call with a leading run
axis), ``"per-run"`` (the single run's calls repeated run after run) or ``"per-step"`` (each call
made ``n`` times in a row). :func:`replay_runs` calls the release once for ``n`` runs with run
``r``'s standardised draws ``Z[r]`` in a given layout and returns the ``(n, m)`` outputs, or raises
:class:`Misaligned` when the calls do not line up that way. The derivation finds the layout by
checking against single-run replays; one call of ``k`` runs then gives all ``k`` impulse
responses.

The layouts in full: docs/greybox-notes.md#run-layouts.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from dpaudit.greybox.replay import Draw, Mechanism, ReplayGenerator
from dpaudit.greybox.sources import run_release
from dpaudit.release_outputs import is_structured, plain_arrays, release_table

__all__ = ["LAYOUTS", "Misaligned", "replay_runs", "layouts_for", "as_runs"]

#: The layouts tried, in order.
LAYOUTS = ("vector", "per-run", "per-step")


class Misaligned(Exception):
    """A batched replay's noise calls do not line up with a single run's in the layout tried."""


def layouts_for(draws: Sequence[Draw]) -> tuple[str, ...]:
    """The layouts a single run's ``draws`` admit (``"vector"`` needs a leading axis of 1)."""
    vector = all(d.shape and d.shape[0] == 1 for d in draws)
    return LAYOUTS if vector else LAYOUTS[1:]


def as_runs(out: Any, n: int) -> np.ndarray:
    """``out`` as an ``(n, m)`` float array (a structured release, dicts, records or tuples of
    arrays, read by :func:`dpaudit.release_outputs.release_table` as the black box reads it);
    ValueError when its leading axis is not ``n``. torch tensors and jax arrays are read as numpy."""
    out = plain_arrays(out)
    if is_structured(out, n):
        return release_table(out, n, who="the release under replay").values
    arr = np.asarray(out, dtype=np.float64)
    if arr.ndim == 0 or arr.shape[0] != n:
        raise ValueError(f"mechanism(data, {n}, rng) must return {n} run(s) (leading axis {n}), "
                         f"got shape {arr.shape}")
    return arr.reshape(n, -1)


def _expected(draws: Sequence[Draw], n: int, layout: str) -> list[tuple[int, int]]:
    """``(run, draw index)`` of each call of an ``n``-run call in ``layout`` (vector: run -1)."""
    K = len(draws)
    if layout == "vector":
        return [(-1, j) for j in range(K)]
    if layout == "per-run":
        return [(r, j) for r in range(n) for j in range(K)]
    return [(r, j) for j in range(K) for r in range(n)]


def replay_runs(mechanism: Mechanism, data: Any, seed: int, Z: np.ndarray,
                draws: Sequence[Draw], layout: str) -> np.ndarray:
    """The ``(n, m)`` outputs of one call of ``n = len(Z)`` runs, run ``r`` with standardised
    draws ``Z[r]``, in ``layout``; :class:`Misaligned` when the calls do not line up. Exceptions
    the release raises propagate (the caller decides what a failure under replay means)."""
    n = Z.shape[0]
    plan = _expected(draws, n, layout)
    calls = [0]

    def supply(offset: int, shape: tuple[int, ...], family: str) -> np.ndarray:
        c = calls[0]
        calls[0] += 1
        if c >= len(plan):
            raise Misaligned(f"more noise calls than {len(plan)}")
        r, j = plan[c]
        d = draws[j]
        want = (n,) + d.shape[1:] if r < 0 else d.shape
        if shape != want or family != d.family:
            raise Misaligned(f"call {c} has shape {shape}, expected {want}")
        if r < 0:
            return Z[:, d.offset:d.offset + d.size].reshape(shape)
        return Z[r, d.offset:d.offset + d.size].reshape(shape)

    g = ReplayGenerator(seed, supply)
    before = g.bits_state()
    out = run_release(mechanism, data, n, g)
    if calls[0] != len(plan):
        raise Misaligned(f"{calls[0]} noise calls, expected {len(plan)}")
    if g.foreign:
        raise Misaligned(f"a foreign draw ({g.foreign[0]})")
    if g.bits_state() != before:
        raise Misaligned("bits consumed outside the noise calls")
    sites = [(draws[j].site, draws[j].source) for _, j in plan]
    if [(d.site, d.source) for d in g.draws] != sites:
        raise Misaligned("noise calls from other sites")
    return as_runs(out, n)
