"""The configuration of an empirical audit: its budget constants, how ``samples`` runs split into
training and test parts, and the settings one run of the pipeline on one pair depends on
(:class:`AuditConfig`). Read by :mod:`dpaudit.blackbox.training`,
:mod:`dpaudit.blackbox.empirical_audit` and :mod:`dpaudit.blackbox.sequential`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from dpaudit.blackbox.sampling import OutputKind

__all__ = ["AuditConfig", "split_sizes", "MIN_SAMPLES", "DEFAULT_TRAIN_FRACTION",
           "MIN_DEFAULT_TRAIN", "MAX_TRAIN_SAMPLES", "PILOT_FRACTION", "MIN_PILOT_SAMPLES"]

#: Smallest accepted ``samples`` (per input): a fit, a selection and a test run on each input.
MIN_SAMPLES = 10
#: Default training budget (fitting the statistic and choosing the event): this fraction of the
#: runs, raised to ``min(samples // 4, MIN_DEFAULT_TRAIN)`` for small audits.
DEFAULT_TRAIN_FRACTION = 0.1
MIN_DEFAULT_TRAIN = 5_000
#: Default cap on the training runs per input (fit + selection, and the default pilot): the
#: selection split's scores are held in memory to choose the event, so the cap bounds an audit's
#: memory whatever ``samples`` is; runs above it only go to the test split, which is streamed
#: into counters. 5 x 10^6 runs per input keep a scalar audit under 0.7 GB: measured peak RSS
#: 614 MiB at both 10^8 and 10^9 runs per input (210 MiB at 10^7, where the cap does not bind;
#: ``benchmarks/bench_scaleout.py memory``), and resolve events down to a probability of about
#: 10^-5 on the selection split. Below ``samples = 5 x 10^7`` (default
#: ``train_fraction``) it changes nothing.
MAX_TRAIN_SAMPLES = 5_000_000
#: Default total pilot budget (per input, summed over the candidate pairs) as a fraction of
#: ``samples``.
PILOT_FRACTION = 0.2
#: Floor of the default pilot per input per candidate pair (it binds with more than
#: ``samples / 500`` pairs, and only then does the default pilot exceed ``PILOT_FRACTION``).
MIN_PILOT_SAMPLES = 100


@dataclass
class AuditConfig:
    """What shapes one run of the pipeline on one pair, fixed before any sampling: the claim
    (``epsilon``, ``delta``), the level, the events to test, how outputs are read and scored,
    and two switches derived from the claim and the rng probe."""

    epsilon: float
    delta: float
    alpha: float
    test_events: int
    output_kind: OutputKind
    statistic: Callable[[np.ndarray], np.ndarray] | None
    chunk_size: int | None
    statistics: tuple[str, ...] | None = None
    #: Rank pooled mirrored pairs of events (statistics.PooledEvent) on the selection split.
    pooled: bool = False
    #: The mechanism ignores its rng: reseed the global RNGs in every chunk (rng_probe).
    reseed_globals: bool = False


def split_sizes(samples: int, train_fraction: float | None,
                max_train: int | None = MAX_TRAIN_SAMPLES) -> tuple[int, int]:
    """``(n_train, n_test)`` runs per input for ``samples`` runs: the training part is
    ``train_fraction`` of them (default :data:`DEFAULT_TRAIN_FRACTION`, raised to
    ``min(samples // 4, MIN_DEFAULT_TRAIN)`` for small audits), capped at ``max_train``, and
    at least 2 runs and at most ``samples - 1``; the rest is the test part."""
    if train_fraction is None:
        n_train = max(int(round(DEFAULT_TRAIN_FRACTION * samples)),
                      min(samples // 4, MIN_DEFAULT_TRAIN))
    else:
        n_train = int(round(train_fraction * samples))
    if max_train is not None:
        n_train = min(n_train, max_train)
    n_train = min(max(2, n_train), samples - 1)
    return n_train, samples - n_train
