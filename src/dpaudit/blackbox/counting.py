"""The test split of an empirical audit, counted in blocks wherever the executor runs them.

The chosen events' component threshold events are *watched* (:func:`watch_list`); each input's
test runs are cut into blocks of whole chunks (:func:`test_split_blocks`), and each block is
drawn from the same chunk generators as a sequential run would use and reduced to event counts,
histogram counts and its sampling time (:func:`count_block`), so the totals, exact integer sums,
do not depend on where or in which order the blocks run
(:mod:`dpaudit.execution.executors`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from dpaudit.blackbox.chunk_counts import ChunkCounter
from dpaudit.blackbox.sampling import Stream
from dpaudit.blackbox.statistics import PooledEvent, RankedEvent, ThresholdEvent

__all__ = ["CountJob", "Block", "BlockCounts", "count_block", "test_split_blocks", "watch_list",
           "BLOCKS_PER_WORKER"]


@dataclass(frozen=True)
class CountJob:
    """What every test-split task needs, sent once per worker: the mechanism (by reference when it
    is importable, by value through cloudpickle otherwise), both inputs, the seed sequence of each
    input's stream, the output shape seen in training, the fitted scorer, the watched events and
    the histogram's edges."""

    mechanism: Callable[..., Any]
    data: tuple[Any, Any]
    seeds: tuple[np.random.SeedSequence, np.random.SeedSequence]
    row_shape: tuple[tuple[int, ...] | None, tuple[int, ...] | None]
    scorer: Callable[[np.ndarray], np.ndarray]
    events: tuple[ThresholdEvent, ...]
    edges: np.ndarray
    reseed_globals: bool = False
    #: Each stream's output dtype seen in training (a later change of type is an error naming
    #: the mechanism and run) and whether its numbers are kept as exact objects.
    dtypes: tuple[Any, Any] = (None, None)
    exact: tuple[bool, bool] = (False, False)
    seen: frozenset = frozenset()
    #: Each stream's layout and columns of a structured release (sampling.Stream).
    layouts: tuple[Any, Any] = (None, None)
    columns: tuple[Any, Any] = (None, None)


@dataclass(frozen=True)
class Block:
    """Consecutive test chunks of one input: chunk ``first_chunk`` (the index of its generator
    among the stream's spawned children, in drawing order) onwards, ``n_runs`` runs in chunks of
    ``chunk_rows``; ``first_run`` numbers the runs in error messages."""

    label: int
    first_chunk: int
    first_run: int
    n_runs: int
    chunk_rows: int


@dataclass(frozen=True)
class BlockCounts:
    """What a task sends back: event counts, histogram counts, clipped scores, sampling time."""

    counts: np.ndarray
    histogram: np.ndarray
    clipped: int
    seconds: float


def count_block(job: CountJob, block: Block) -> BlockCounts:
    """Draw one block of test chunks and count: the same generators, chunk sizes and scores as a
    sequential run, so the counts do not depend on where or in which order blocks run."""
    ss = job.seeds[block.label]
    seq = np.random.SeedSequence(ss.entropy, spawn_key=ss.spawn_key, pool_size=ss.pool_size,
                                 n_children_spawned=block.first_chunk)
    clock = [0.0]
    stream = Stream(job.mechanism, job.data[block.label], block.label, seq, clock,
                     row_shape=job.row_shape[block.label], drawn=block.first_run,
                     reseed_globals=job.reseed_globals,
                     dtype=job.dtypes[block.label], exact_objects=job.exact[block.label],
                     seen=set(job.seen), layout=job.layouts[block.label],
                     columns=job.columns[block.label])
    counter = ChunkCounter(job.events, job.edges, block.chunk_rows)
    hist = np.zeros(counter.bins, dtype=np.int64)
    counts = np.zeros(len(job.events), dtype=np.int64)
    clipped = 0
    for x in stream.chunks(block.n_runs, block.chunk_rows):
        # The integers of one sort and binary searches, without the sort (chunk_counts).
        c, h, k = counter.count(np.asarray(job.scorer(x), dtype=np.float64))
        counts += c
        hist += h
        clipped += k
    return BlockCounts(counts, hist, clipped, clock[0])


#: Test-split tasks per worker and input (more, smaller tasks: a lost worker costs less and the
#: load balances; fewer: less overhead per task).
BLOCKS_PER_WORKER = 4


def test_split_blocks(streams: Sequence[Stream], n_test: int, chunk_rows: int,
                      workers: int) -> list[Block]:
    """Split each input's test runs into blocks of whole chunks (one block per input when local).

    The chunk boundaries (and so each chunk's generator) are those of a sequential run whatever
    the number of blocks.
    """
    n_chunks = -(-n_test // chunk_rows)
    per_block = n_chunks if workers <= 1 else -(-n_chunks // (BLOCKS_PER_WORKER * workers))
    blocks = []
    for j, s in enumerate(streams):
        first_chunk = s.seed_seq.n_children_spawned
        for c in range(0, n_chunks, per_block):
            runs = min(n_test, (c + per_block) * chunk_rows) - c * chunk_rows
            blocks.append(Block(j, first_chunk + c, s.drawn + c * chunk_rows, runs, chunk_rows))
    return blocks


def watch_list(ranked: Sequence[RankedEvent]) -> tuple[tuple[ThresholdEvent, ...],
                                                        list[tuple[int, ...]]]:
    """The threshold events counted on the test split and, per ranked event, the indices of its
    components among them (one for a threshold event, two for a pooled pair)."""
    watched: list[ThresholdEvent] = []
    where: list[tuple[int, ...]] = []
    for r in ranked:
        parts = r.event.components if isinstance(r.event, PooledEvent) else (r.event,)
        where.append(tuple(range(len(watched), len(watched) + len(parts))))
        watched.extend(parts)
    return tuple(watched), where

