"""Does a mechanism draw its randomness from the ``rng`` it is given? A cheap probe.

Library samplers often ignore the generator they are handed (numpy's legacy global state, Python's
``random``, a generator of their own); :func:`dpaudit.audit`'s bound then stays valid only if the
runs are independent, and the result is not reproducible from the seed. :func:`probe_rng` calls
the mechanism on one input a few times with controlled ``rng`` and global seeds: it tells a
mechanism that uses its ``rng`` from one that draws from the global RNGs (then reseeded in every
chunk by :func:`dpaudit.execution.executors.reseed_global_state`, so the chunks are independent and
the run reproducible) and from one with a generator dpaudit cannot reach (refused on parallel
workers). A mechanism that seeds its own generator with a constant repeats the same "noise" on
every call, a deterministic release: :func:`probe_rng` refuses it with a ``ValueError``, since its
repeated rows audited as independent runs would measure a distribution the release never has. The
global states are restored after the probe.

The three probes and what each outcome means: docs/blackbox-notes.md#rng-probe.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from dpaudit.blackbox.sampling import Stream, callable_name

__all__ = ["RngProbe", "probe_rng", "PROBE_RUNS", "NOT_REPRODUCIBLE_NOTE"]

#: Runs per probe call (3 calls, 4 when the mechanism is flagged).
PROBE_RUNS = 64

NOT_REPRODUCIBLE_NOTE = "not reproducible from the seed"


@dataclass(frozen=True)
class RngProbe:
    """What the probe found: ``rng_ignored`` (test 1 or 2 fired), ``globals_reseedable`` (test 3:
    reseeding numpy's and Python's global RNGs reproduces the draws) and a one-line ``note``."""

    rng_ignored: bool
    globals_reseedable: bool
    note: str

    def to_dict(self) -> dict[str, Any]:
        return {"rng_ignored": self.rng_ignored, "globals_reseeded": self.rng_ignored
                and self.globals_reseedable, "note": self.note}


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    if a.shape != b.shape:
        return False
    try:
        return bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
    except (TypeError, ValueError):
        return bool(np.array_equal(a, b))


def _varies(a: np.ndarray) -> bool:
    if a.ndim == 0 or a.shape[0] < 2:
        return False
    first = a[:1]
    return not all(_same(a[i:i + 1], first) for i in range(1, a.shape[0]))


def probe_rng(mechanism: Callable[..., Any], data: Any, seed: int,
              runs: int = PROBE_RUNS) -> RngProbe:
    """Probe ``mechanism(data, runs, rng)`` (docs/blackbox-notes.md#rng-probe).

    ``seed`` picks the probe's generator seeds (disjoint from the audit's streams: they are
    derived with a fixed tag).
    """
    s1, s2, s3 = np.random.SeedSequence([seed, 0x9B0BE]).spawn(3)
    np_state, py_state = np.random.get_state(), random.getstate()

    checker = Stream(mechanism, data, 0, s1, [0.0])

    def call(rng_seed: np.random.SeedSequence, global_seed: int) -> np.ndarray:
        np.random.seed(global_seed)
        random.seed(global_seed)
        out = mechanism(data, runs, np.random.default_rng(rng_seed))
        # The probe's outputs get the streams' checks (shape, NaN, None, types): a mechanism that
        # misbehaves only in its first calls must not slip through because the probe made them.
        checked = checker._check(out, runs)
        checker.row_shape = checker.dtype = None
        return np.array(checked, copy=True)

    try:
        a = call(s1, 1)
        b = call(s1, 2)
        c = call(s2, 1)
        elsewhere = not _same(a, b)
        unused = _same(a, c) and _varies(a)
        if unused and not elsewhere and _same(call(s3, 3), a):
            # Identical under a different rng seed AND different global seeds (twice): the
            # mechanism seeds itself, its "runs" repeat on every call.
            raise ValueError(
                f"mechanism {callable_name(mechanism)} returned identical outputs under different "
                "rng seeds and different global seeds: it seeds its own generator with a constant "
                "(e.g. np.random.seed(0) or np.random.default_rng(7) inside it), so every call "
                "repeats the same noise and its release is a deterministic function of the data, "
                "not a random one; it cannot be audited as random. Draw the noise from the rng "
                "argument (mechanism(data, n, rng))")
        if not (elsewhere or unused):
            return RngProbe(False, True, "draws from the rng it is given (same seed, same "
                                         "outputs; different seed, different outputs)")
        reseedable = _same(call(s1, 1), a)
    finally:
        np.random.set_state(np_state)
        random.setstate(py_state)
    why = ("the same rng seed gave different outputs" if elsewhere
           else "different rng seeds gave identical outputs")
    if reseedable:
        note = (f"{NOT_REPRODUCIBLE_NOTE}: the mechanism ignores its rng ({why}); its draws follow "
                "numpy's global RNG / Python's random, which dpaudit reseeds in every chunk from "
                "that chunk's own seed, so chunks are independent and the runs repeat under "
                "this seed only while that stays true")
    else:
        note = (f"{NOT_REPRODUCIBLE_NOTE}: the mechanism ignores its rng ({why}) and draws from "
                "a generator of its own that dpaudit cannot reseed; runs are independent only "
                "if that generator is, and parallel executors are refused")
    return RngProbe(True, reseedable, note)
