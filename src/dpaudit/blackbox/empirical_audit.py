"""Black-box empirical lower bounds on epsilon: :func:`audit` and :class:`AuditResult`.

The procedure (``../shared/AUDIT-METHOD.md`` section 3) for one neighbouring pair ``(data0, data1)``
and ``samples`` runs per input:

1. **Split.** The runs on each input are split, in drawing order, into a training part
   (``train_fraction`` of them) and a test part. When the statistic has to be learned (vector
   outputs, discrete outputs), the training part is halved into a *fit* split and a *selection*
   split; otherwise (scalar outputs, a user statistic) it is all selection split.
2. **Statistic** (fit split). Scalar continuous outputs are their own score; vector outputs and
   trajectories (flattened) get a linear discriminant; discrete outputs get their estimated log
   likelihood ratio (:mod:`dpaudit.blackbox.statistics`). A user ``statistic`` replaces all of this;
   it must act row-wise (the score of a run depends on that run's output only), which is checked
   on the probe (:meth:`~dpaudit.blackbox.statistics.UserScorer.check_row_wise`): the engine scores
   the runs in chunks, and a statistic that looks at the whole chunk makes the counts of step 4
   non-binomial and the bound invalid.
3. **Event** (selection split). Every threshold of the score, both tails (an event and its
   complement) and both directions (which input is the numerator) are ranked by the bound they
   are expected to give on the test split; the best ``test_events`` (default one) are kept. For
   claims with ``delta > 0`` the candidates also include pooled mirrored pairs
   (:class:`~dpaudit.blackbox.statistics.PooledEvent`: an upper-tail event from one input with a
   disjoint lower-tail event from the other, one statement over the runs of both inputs, valid
   for any mechanism because the neighbour relation is symmetric;
   :func:`~dpaudit.blackbox.confidence.pooled_proportion_bound` says why the Clopper-Pearson ends
   stay exact). For those claims (continuous or user scores) up to two *hedge* events are added
   when they differ from the kept ones: the best events of two more rankings of the same selection
   split, with the selection rates bounded at one standard error
   (:data:`~dpaudit.blackbox.statistics.HEDGE_SELECTION_LEVEL`) and with the ``delta = 0``
   multiplicity penalty; they guard against the main ranking's occasional winner's-curse pick
   among sparse-tail events (:data:`HEDGE_RANKINGS`). A separate event is chosen the same way
   for the Gaussian-DP bound.
4. **Bound** (test split, fresh samples never seen by steps 2-3). The chosen events are counted
   on both inputs; exact one-sided Clopper-Pearson bounds give
   ``epsilon_lb = max(0, ln((p_lo - delta) / q_hi))``, with a Bonferroni factor equal to the
   number of events evaluated on the test split, the hedge events included
   (:class:`~dpaudit.blackbox.confidence.Bonferroni`).
   Because the test samples are independent of everything chosen before, the bound holds with
   probability at least ``1 - alpha`` for the mechanism as sampled. The Gaussian-DP lower bound
   ``mu_lb`` is a separate ``1 - alpha`` statement from its own event, outside the Bonferroni
   correction: the epsilon statement and the mu statement each hold with probability at least
   ``1 - alpha``, both jointly with probability at least ``1 - 2 alpha``. This is acceptable
   because mu never decides the verdict (reading mu as (epsilon, delta) assumes a Gaussian
   trade-off curve).

Candidate pairs (``pairs=[(d0, d1), ...]``): each pair gets a pilot run of ``pilot_samples`` per
input (steps 1-3 only, with the projection to the main test size), and the main budget goes to the
pair with the highest projected bound. The default pilot is small: ``PILOT_FRACTION`` (20%) of
``samples`` per input in total across the pairs, but at least ``MIN_PILOT_SAMPLES`` (100) runs per
input per pair (so the total exceeds 20% only with more than ``samples / 500`` pairs). The pilot
runs are extra to ``samples``. The main run draws fresh samples from streams disjoint from every
pilot stream, so the choice of the pair depends on pilot data only and the final bound, being valid
conditionally on any pair, needs no correction for it; pilot budget (per pair and in total) and
projected bounds are reported.

Randomness: ``SeedSequence(seed).spawn`` gives the main run its child 0 and pilot ``j`` its child
``1 + j``; each run spawns one child per input and each input one child per chunk, in drawing
order. A result is a deterministic function of the mechanism (which must draw all its randomness
from the ``rng`` it is given), the inputs (``data0``/``data1``, or ``pairs``) and every argument
that shapes sampling or selection: ``seed``, ``samples``, ``train_fraction``, ``chunk_size``,
``pilot_samples``, ``test_events``, ``output_kind``, ``statistic``, and ``alpha`` and ``delta``
(which enter the ranking of events). ``epsilon`` only sets the verdict.

Floating-point samplers are not exactly differentially private (Mironov, CCS 2012); the bound is
about the mechanism as implemented and sampled.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from hypothesis.strategies import SearchStrategy

from dpaudit._validation import (check_alpha, check_delta, check_epsilon, check_int,
                                 check_probability)
from dpaudit.execution.executors import Executor, ExecutorName, check_executor, open_executor
from dpaudit.blackbox.confidence import (POOLED_MAX_ALPHA, Bonferroni, gdp_mu_from_bounds, gdp_mu_lower_bound,
                                       log_ratio_lower_bound,
                                       pooled_proportion_bound, proportion_bound)
from dpaudit.blackbox.chunk_counts import ChunkCounter
from dpaudit.blackbox.joint_test import joint_epsilon_lower_bound
from dpaudit.blackbox.pair_search import describe_pair, pair_key, search_pairs
from dpaudit.blackbox.rng_probe import PROBE_RUNS, probe_rng
from dpaudit.execution.executors import refuse_parallel_unseeded
from dpaudit.blackbox.power import power_statement
from dpaudit.blackbox.fitters_classifier import SEQUENCE_MAX_VALUES
from dpaudit.blackbox.learned_statistics import (best_events, candidates_for, check_statistics,
                                                choose)
from dpaudit.blackbox.outcome_selection import fit_outcomes_in_sample
from dpaudit.blackbox.statistics import (DISCRETE_SELECTION_LEVEL, HEDGE_SELECTION_LEVEL,
                                       SELECTION_PENALTY_EXPONENT, HistogramAccumulator,
                                       LikelihoodRatioFitter, PooledEvent, RankedEvent,
                                       SortedScores, ThresholdEvent, UserScorer, flatten_outputs,
                                       sweep_thresholds)
from dpaudit.blackbox.result import (AuditResult, EvaluatedEvent, Verdict, _event_outcomes,
                                     _json_float, _no_ranked_event_record)
from dpaudit.blackbox.sampling import (_NOT_GIVEN, PROBE_ROWS, OutputKind, callable_name,
                                       _check_pairs, _chunk_rows, _describe_input, _is_discrete,
                                       _is_strategy, _Stream, as_output_array,
                                       available_memory_bytes,
                                       check_callables, check_comparable, check_memory_budget,
                                       harmonize_exact)

__all__ = ["audit", "AuditResult", "EvaluatedEvent", "MIN_SAMPLES", "DEFAULT_TRAIN_FRACTION",
           "PILOT_FRACTION", "MIN_PILOT_SAMPLES", "MAX_TRAIN_SAMPLES", "check_memory_budget",
           "available_memory_bytes", "HEDGE_RANKINGS"]

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
#: Floating-point overflow inside a learned statistic's fit or scores is handled explicitly
#: (the statistic is dropped: :func:`_fit_and_choose`), so numpy's warnings are silenced there
#: (only there: a mechanism's own arithmetic keeps the caller's settings).
def _quiet_floats() -> Any:
    return np.errstate(over="ignore", invalid="ignore", divide="ignore")

# ----------------------------------------------------------------------------------------------
# One run of the pipeline on one pair
# ----------------------------------------------------------------------------------------------

@dataclass
class _Config:
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


@dataclass
class _Trained:
    """What the training part of a run produced."""

    scorer: Callable[[np.ndarray], np.ndarray]
    kind: str
    n_fit: int
    n_select: int
    chunk_rows: int
    eps_sweep_best: list[RankedEvent]
    gdp_best: list[RankedEvent]
    n_candidates: int
    histogram: HistogramAccumulator
    streams: list[_Stream]
    scorer_info: dict[str, Any] = field(default_factory=dict)


#: The extra rankings of a ``delta > 0`` claim (keyword arguments of ``sweep_thresholds``; see
#: :data:`~dpaudit.blackbox.statistics.HEDGE_SELECTION_LEVEL` for the reason and the measurement).
HEDGE_RANKINGS: tuple[dict[str, float], ...] = (
    {"selection_alpha": HEDGE_SELECTION_LEVEL},
    {"penalty": SELECTION_PENALTY_EXPONENT},
)


def _hedged(cfg: _Config, kind: str) -> bool:
    """Whether the audit adds the hedge events of :data:`HEDGE_RANKINGS` (a ``delta > 0`` claim on
    a continuous or user score).

    For ``delta > 0`` the best event lies in a sparse tail, where the first ranking's conservative
    selection rates pull the choice towards frequent, weaker events; discrete outcome scores are
    left to their own selection rule."""
    return cfg.delta > 0 and kind != "discrete"


def _split_sizes(samples: int, train_fraction: float | None,
                 max_train: int | None = MAX_TRAIN_SAMPLES) -> tuple[int, int]:
    if train_fraction is None:
        n_train = max(int(round(DEFAULT_TRAIN_FRACTION * samples)),
                      min(samples // 4, MIN_DEFAULT_TRAIN))
    else:
        n_train = int(round(train_fraction * samples))
    if max_train is not None:
        n_train = min(n_train, max_train)
    n_train = min(max(2, n_train), samples - 1)
    return n_train, samples - n_train

def _train(mechanism: Callable[..., Any], data0: Any, data1: Any, seed_seq: np.random.SeedSequence,
           cfg: _Config, n_train: int, n_test: int, clock: list[float], *,
           hedges: bool = True) -> _Trained:
    """Fit, choose and rank on the training split. ``hedges=False`` for callers that use only the
    best event (the pilot's projection, sequential_audit): the hedge rankings are then skipped."""
    seen: set[str] = set()  # shared: both inputs' object numbers must be read alike
    streams = [_Stream(mechanism, d, j, ss, clock, reseed_globals=cfg.reseed_globals, seen=seen)
               for j, (d, ss) in enumerate(zip((data0, data1), seed_seq.spawn(2)))]
    probe_rows = min(PROBE_ROWS, max(1, n_train // 2))
    probes = [s.draw(probe_rows) for s in streams]
    harmonize_exact(streams, probes)
    check_comparable(mechanism, probes)
    if streams[0].columns != streams[1].columns:
        raise ValueError(f"mechanism {callable_name(mechanism)}: its structured outputs on data0 "
                         f"and data1 release different fields ({list(streams[0].columns or ())[:8]}"
                         f" vs {list(streams[1].columns or ())[:8]}); they must be comparable")
    chunk_rows = _chunk_rows(probes[0], cfg.chunk_size)

    fitter: LikelihoodRatioFitter | None = None
    family: list[Any] = []
    if cfg.statistic is not None:
        scorer: Callable[[np.ndarray], np.ndarray] = UserScorer(cfg.statistic)
        kind = "user"
    elif _is_discrete(probes[0], probes[1], cfg.output_kind):
        kind = "discrete"
        fitter = LikelihoodRatioFitter()
    else:
        kind = "continuous"
        if probes[0].dtype.kind not in "biuf":
            raise TypeError(f"continuous outputs must be numeric, got dtype {probes[0].dtype}; use "
                            "output_kind='discrete' or a statistic")
        # A family of learned statistics, fitted on the fit split and chosen on the
        # selection split (dpaudit.blackbox.learned_statistics).
        family = candidates_for(flatten_outputs(probes[0]).shape[1], cfg.statistics)
        for c in family:
            if c.name == "atoms":
                c.fitter.columns = streams[0].columns  # the description names the columns
        if len(family) == 1 and not family[0].fitted:
            scorer = family[0].fitter.finish()[0]
            family = []

    choice_table: tuple[dict[str, Any], ...] = ()
    if family:
        sc, n_fit, n_select, scorer, choice_table = _fit_and_choose(
            family, streams, probes, cfg, n_train, n_test, chunk_rows)
    else:
        if fitter is not None:
            # The outcome ratios are fitted, and the prefix chosen, on all training
            # runs (dpaudit.blackbox.outcome_selection says why and what it measured).
            n_fit, n_select = 0, n_train
            scorer, fitted_scores = fit_outcomes_in_sample(streams, probes, n_train, chunk_rows)
            select_scores: list[list[np.ndarray]] = [[f] for f in fitted_scores]
        else:
            n_fit = 0
            n_select = n_train
            if isinstance(scorer, UserScorer):
                # Counts are binomial only if each run is scored on its own output: check on the
                # probe.
                first = scorer.check_row_wise(probes[0], probes[1])
            else:
                first = [scorer(p) for p in probes]
            select_scores = [[f] for f in first]
        done = 0 if fitter is not None else n_select - probe_rows
        for j, s in enumerate(streams):
            for x in s.chunks(done, chunk_rows):
                select_scores[j].append(scorer(x))
        sc = [np.concatenate(v) for v in select_scores]

    bonf = Bonferroni(cfg.alpha, cfg.test_events)
    ss = SortedScores.of(sc[0], sc[1])  # sorted once for both sweeps and the histogram
    fixed = bool(getattr(scorer, "events_fixed_on_fit", False))
    eps_sweep = sweep_thresholds(sc[0], sc[1], n_test0=n_test, n_test1=n_test,
                                 alpha=bonf.per_interval_alpha, delta=cfg.delta,
                                 objective="epsilon", pooled=cfg.pooled, sorted_scores=ss,
                                 selection_level=(DISCRETE_SELECTION_LEVEL if kind == "discrete"
                                                  else "penalised"),
                                 # Events fixed on the fit split (atom sets): ranked at their
                                 # selection rates, as choose() compared them.
                                 **({"selection_alpha": 0.5} if fixed else {}))
    eps_best = eps_sweep.best(cfg.test_events)
    if (kind == "continuous" and eps_best and not eps_best[0].rank_value > 0
            and flatten_outputs(probes[0]).shape[1] > 1):
        # Vector outputs: no event projects a positive bound; rank again at one
        # standard error (learned_statistics.best_events).
        eps_best = best_events(sc[0], sc[1], m=cfg.test_events, n_test0=n_test, n_test1=n_test,
                               alpha=bonf.per_interval_alpha, delta=cfg.delta,
                               objective="epsilon", pooled=cfg.pooled, sorted_scores=ss)
    if hedges and _hedged(cfg, kind) and eps_best:
        # The hedge events: the best event of two more rankings of the same selection split, one
        # less conservative (selection rates at one standard error, HEDGE_SELECTION_LEVEL) and
        # one more (the delta = 0 multiplicity penalty, SELECTION_PENALTY_EXPONENT), each
        # evaluated on the test split next to the others when it differs from all of them
        # (audit() applies Bonferroni over every event evaluated there). All rankings project
        # at the level of ``test_events`` events, so the main pick, the pilot's projection and
        # sequential_audit are unchanged.
        for hedge in HEDGE_RANKINGS:
            alt = sweep_thresholds(sc[0], sc[1], n_test0=n_test, n_test1=n_test,
                                   alpha=bonf.per_interval_alpha, delta=cfg.delta,
                                   objective="epsilon", pooled=cfg.pooled, sorted_scores=ss,
                                   **hedge).best(1)
            if alt and all(alt[0].event != r.event for r in eps_best):
                eps_best = eps_best + alt
    gdp_sweep = sweep_thresholds(sc[0], sc[1], n_test0=n_test, n_test1=n_test,
                                 alpha=Bonferroni(cfg.alpha).per_interval_alpha, objective="gdp",
                                 sorted_scores=ss)
    info = scorer.to_dict() if hasattr(scorer, "to_dict") else {"name": repr(scorer)}
    if choice_table:
        info = {**info, "chosen_from": list(choice_table)}
    return _Trained(scorer, kind, n_fit, n_select, chunk_rows, eps_best,
                    gdp_sweep.best(1), eps_sweep.n_candidates,
                    HistogramAccumulator.from_training(sc[0], sc[1], sorted_scores=ss), streams,
                    info)


# ----------------------------------------------------------------------------------------------
# The test split: blocks of chunks counted wherever the executor runs them
# ----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _CountJob:
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
    #: Each stream's layout and columns of a structured release (sampling._Stream).
    layouts: tuple[Any, Any] = (None, None)
    columns: tuple[Any, Any] = (None, None)


@dataclass(frozen=True)
class _Block:
    """Consecutive test chunks of one input: chunk ``first_chunk`` (the index of its generator
    among the stream's spawned children, in drawing order) onwards, ``n_runs`` runs in chunks of
    ``chunk_rows``; ``first_run`` numbers the runs in error messages."""

    label: int
    first_chunk: int
    first_run: int
    n_runs: int
    chunk_rows: int


@dataclass(frozen=True)
class _BlockCounts:
    """What a task sends back: event counts, histogram counts, clipped scores, sampling time."""

    counts: np.ndarray
    histogram: np.ndarray
    clipped: int
    seconds: float


def _count_block(job: _CountJob, block: _Block) -> _BlockCounts:
    """Draw one block of test chunks and count: the same generators, chunk sizes and scores as a
    sequential run, so the counts do not depend on where or in which order blocks run."""
    ss = job.seeds[block.label]
    seq = np.random.SeedSequence(ss.entropy, spawn_key=ss.spawn_key, pool_size=ss.pool_size,
                                 n_children_spawned=block.first_chunk)
    clock = [0.0]
    stream = _Stream(job.mechanism, job.data[block.label], block.label, seq, clock,
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
    return _BlockCounts(counts, hist, clipped, clock[0])


#: Test-split tasks per worker and input (more, smaller tasks: a lost worker costs less and the
#: load balances; fewer: less overhead per task).
BLOCKS_PER_WORKER = 4


def _test_blocks(streams: Sequence[_Stream], n_test: int, chunk_rows: int,
                 workers: int) -> list[_Block]:
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
            blocks.append(_Block(j, first_chunk + c, s.drawn + c * chunk_rows, runs, chunk_rows))
    return blocks


def _fit_and_choose(family: list[Any], streams: list[_Stream], probes: list[np.ndarray],
                    cfg: _Config, n_train: int, n_test: int, chunk_rows: int
                    ) -> tuple[list[np.ndarray], int, int, Any, tuple[dict[str, Any], ...]]:
    """Fit every statistic of ``family`` on the fit split, score the selection split with
    each and keep the one whose best event projects the highest bound
    (:func:`dpaudit.blackbox.learned_statistics.choose`). The test split is not drawn here.

    Returns the chosen statistic's selection scores per input, ``n_fit``, ``n_select``, the scorer
    and the table of candidates. Scalars are drawn as one sequence of training runs routed by row
    index (their selection rows are kept, 8 bytes each), so that when the identity is chosen its
    threshold is picked, as it was before the family existed, on all training runs (it learned nothing from the fit
    split); vectors are drawn fit split first, then the selection split streamed.
    """
    probe_rows = probes[0].shape[0]
    n_fit = n_train // 2
    n_select = n_train - n_fit
    scalar = flatten_outputs(probes[0]).shape[1] == 1
    order_free = all(c.name in ("identity", "histogram", "atoms") for c in family)
    with _quiet_floats():  # like the updates below (and the gate's _refit): huge outputs overflow
        for c in family:
            if hasattr(c.fitter, "configure"):
                # A fitter whose fixed event depends on the test it will face (its size, level,
                # delta): the whitened direction's Gaussian-DP halfspaces. Power only.
                c.fitter.configure(n_test=n_test, delta=cfg.delta, pooled=cfg.pooled,
                                   alpha=Bonferroni(cfg.alpha, cfg.test_events).per_interval_alpha)
            c.fitter.prepare(probes[0], probes[1])
    unfitted = [i for i, c in enumerate(family) if not c.fitted]
    fixed_scores: dict[int, list[list[np.ndarray]]] = {i: [[], []] for i in unfitted}
    held: list[list[np.ndarray]] = [[], []]
    for j, s in enumerate(streams):
        def feed(x: np.ndarray, j: int = j) -> None:
            with _quiet_floats():
                for c in family:
                    c.fitter.update(x, j)
                for i in unfitted:
                    fixed_scores[i][j].append(family[i].fitter.scorer(x))
        feed(probes[j])
        if scalar:
            pos = probe_rows
            for x in s.chunks(n_train - probe_rows, chunk_rows):
                cut = max(0, min(x.shape[0], n_fit - pos))
                if cut:
                    # The identity and the histogram ratio use the fit split only as a multiset
                    # of values (bin counts): fed in sorted order they fit the same statistic,
                    # faster (see the selection split below). Other fitters get the drawing order.
                    feed(np.sort(flatten_outputs(x[:cut])[:, 0]) if order_free else x[:cut])
                if cut < x.shape[0]:
                    held[j].append(x[cut:])
                pos += x.shape[0]
        else:
            for x in s.chunks(n_fit - probe_rows, chunk_rows):
                feed(x)
    scorers: list[Any] = []
    fitted: list[bool] = []
    origin: list[int] = []
    unfit: list[str] = []
    for i, c in enumerate(family):
        try:
            with _quiet_floats():
                done = c.fitter.finish()
        except (np.linalg.LinAlgError, ValueError, FloatingPointError):
            # Outputs this statistic cannot be fitted on (a covariance that overflows for values
            # near 1e300: "Eigenvalues did not converge"): left out of the family, a choice made
            # on the fit split only. The others still compete.
            unfit.append(c.name)
            continue
        for scr in done:
            scorers.append(scr)
            fitted.append(c.fitted)
            origin.append(i)
    if not scorers and unfit:
        raise ValueError(f"statistics={[c.name for c in family]}: none could be fitted on these "
                         f"outputs (failed: {', '.join(unfit)}); outputs of huge magnitude "
                         "(near 1e300) overflow them: rescale the release, or pass a statistic")
    if not scorers:
        raise ValueError(f"statistics={[c.name for c in family]}: none of these statistics "
                         "applies to these outputs (e.g. 'sequence' needs integer-valued rows "
                         f"with at most {SEQUENCE_MAX_VALUES} distinct values)")
    sel: list[list[list[np.ndarray]]] = [[[], []] for _ in scorers]
    for j, s in enumerate(streams):
        for x in (held[j] if scalar else s.chunks(n_select, chunk_rows)):
            if scalar:
                # Selection scores are only ever used as a multiset (sorted by the sweeps, binned
                # for the histogram's edges), and the statistics act row-wise: scoring the runs in
                # sorted order gives the same multiset, and binned statistics locate sorted values
                # about 10x faster (numpy's searchsorted exploits sorted keys).
                x = np.sort(flatten_outputs(x)[:, 0])
            with _quiet_floats():
                for k, scr in enumerate(scorers):
                    # (Scalars: a binned statistic gives its scores of the sorted runs sorted.)
                    sel[k][j].append(scr.score_sorted(x) if scalar and hasattr(scr, "score_sorted")
                                     else scr(x))
    # (One chunk of selection runs: its scores as they are, not copied; they are only read.)
    sc_all = [[v[0] if len(v) == 1 else np.concatenate(v) for v in pair] for pair in sel]
    # A statistic with NaN scores on the selection split (inf - inf after an overflow on huge
    # outputs) is dropped there, on training data only, rather than counted with scores that
    # fall in no event; the audit is refused when none is left. (Infinite scores are ordered
    # and stay: an event "score > t" is well defined on them.)
    finite = [k for k, pair in enumerate(sc_all) if not any(np.isnan(v).any() for v in pair)]
    if not finite:
        raise ValueError(f"statistics={[c.name for c in family]}: every statistic gave NaN "
                         "scores on these outputs (overflow: values near 1e300?); rescale the "
                         "release, or pass a statistic")
    if len(finite) < len(scorers):
        scorers, fitted, origin, sc_all = ([v[k] for k in finite]
                                           for v in (scorers, fitted, origin, sc_all))
    choice = choose(scorers, fitted, [p[0] for p in sc_all], [p[1] for p in sc_all],
                    n_test=n_test, alpha=Bonferroni(cfg.alpha, cfg.test_events).per_interval_alpha,
                    delta=cfg.delta, scalar=scalar)
    k = choice.index
    if not choice.fitted:
        i = origin[k]
        sc = [np.concatenate(fixed_scores[i][j] + [sc_all[k][j]]) for j in (0, 1)]
        return sc, 0, n_train, choice.scorer, choice.table
    return sc_all[k], n_fit, n_select, choice.scorer, choice.table


def _watch_list(ranked: Sequence[RankedEvent]) -> tuple[tuple[ThresholdEvent, ...],
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


def _evaluate(ranked: RankedEvent, counts: np.ndarray, n_test: int, bonf: Bonferroni,
              delta: float, joint_test: bool = False) -> EvaluatedEvent:
    """The test-split statement of one ranked event; ``counts`` has one row ``(count0, count1)``
    per component threshold event (two for a pooled pair). ``joint_test``: a threshold event's
    bound comes from the exact joint test at the event's level ``alpha / m``
    (:func:`~dpaudit.blackbox.joint_test.joint_epsilon_lower_bound`; its two counts are
    independent binomials), pooled pairs keep their intervals."""
    ev = ranked.event
    a = bonf.per_interval_alpha
    components = None
    if isinstance(ev, PooledEvent):
        # Kp = first on data1 + second on data0, Kq = first on data0 + second on data1: each a
        # sum of two independent binomials over 2 n_test runs (pooled_proportion_bound). Kp and
        # Kq are not independent (each input's runs feed both), but the two component events
        # are disjoint, so the 0/1 indicators of one run are negatively associated, and so are
        # Kp and Kq, as increasing functions of disjoint sets of independent negatively
        # associated vectors (Joag-Dev and Proschan, Ann. Statist. 11, 1983, P6, P7). Hence
        # P[Kp >= c, Kq <= d] >= P[Kp >= c] P[Kq <= d], and the pair of intervals, each at
        # 1 - sqrt(1 - alpha / m), still holds jointly with probability >= 1 - alpha / m.
        (a0, a1), (b0, b1) = (int(counts[0, 0]), int(counts[0, 1])), (int(counts[1, 0]),
                                                                      int(counts[1, 1]))
        components = ((a0, a1), (b0, b1))
        p = pooled_proportion_bound(a1 + b0, 2 * n_test, a)
        q = pooled_proportion_bound(a0 + b1, 2 * n_test, a)
    else:
        c = (int(counts[0, 0]), int(counts[0, 1]))
        p = proportion_bound(c[ev.numerator], n_test, a)
        q = proportion_bound(c[1 - ev.numerator], n_test, a)
    raw = float(log_ratio_lower_bound(p.lower, q.upper, delta))
    method = "clopper-pearson"
    if joint_test and components is None:
        # Its own valid (1 - alpha / m) statement about the same counts, replacing (not added
        # to) the product's: the Bonferroni bookkeeping over the m events is unchanged.
        jb = joint_epsilon_lower_bound(p.count, p.nobs, q.count, q.nobs, delta=delta,
                                       alpha=bonf.per_event_alpha)
        raw = jb if jb > 0 else min(raw, 0.0)
        method = "exact joint test"
    if components is not None:
        # mu from the guarded pooled ends (the pooled test is the even mixture of the two
        # one-direction tests; G_mu is convex, so mu-GDP bounds the mixture's error rates too).
        mu = max(0.0, float(gdp_mu_from_bounds(p.lower, q.upper)))
    else:
        mu = gdp_mu_lower_bound(p.count, p.nobs, q.count, q.nobs, alpha=bonf.per_event_alpha)
    return EvaluatedEvent(ev, ranked, p, q, raw, max(0.0, raw), mu, components, method)

def st_sampled(pairs: Sequence[tuple[Any, Any]]) -> Any:
    """A list of pairs as a strategy (so seeds and a list go through one search)."""
    from hypothesis import strategies as st

    return st.sampled_from(list(pairs))


def _same_outputs(mechanism: Callable[..., Any], d0: Any, d1: Any, seed: int,
                  cfg: _Config) -> str | None:
    """Why a candidate pair is dropped, or None: its outputs on both inputs are identical under a
    common seed (``PROBE_RUNS`` runs), so nothing distinguishes them. Skipped for mechanisms that
    ignore their rng (a common seed means nothing there)."""
    if cfg.reseed_globals:
        return None
    ss = np.random.SeedSequence([seed, 0x5A3E])
    a = as_output_array(mechanism(d0, PROBE_RUNS, np.random.default_rng(ss)), PROBE_RUNS)
    b = as_output_array(mechanism(d1, PROBE_RUNS, np.random.default_rng(ss)), PROBE_RUNS)
    if a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes() and \
            a.dtype.kind != "O":
        return f"its outputs were identical on both inputs over {PROBE_RUNS} runs with a common seed"
    return None


# ----------------------------------------------------------------------------------------------
# Public entry point
# ----------------------------------------------------------------------------------------------

def audit(mechanism: Callable[[Any, int, np.random.Generator], np.ndarray],
          data0: Any = _NOT_GIVEN, data1: Any = _NOT_GIVEN, epsilon: float = 1.0,
          delta: float = 0.0, samples: int = 1_000_000, alpha: float = 0.05, seed: int = 0, *,
          pairs: Sequence[tuple[Any, Any]] | SearchStrategy[Any] | None = None,
          pair_seeds: Sequence[tuple[Any, Any]] | None = None,
          pair_candidates: int | None = None, pilot_samples: int | None = None,
          statistic: Callable[[np.ndarray], np.ndarray] | None = None,
          train_fraction: float | None = None, test_events: int = 1,
          output_kind: OutputKind = "auto", chunk_size: int | None = None,
          statistics: Sequence[str] | None = None,
          max_train_samples: int | None = MAX_TRAIN_SAMPLES,
          executor: ExecutorName | Executor = "local", scheduler: Any = None,
          rng_probe: bool = True, joint_test: bool = False) -> AuditResult:
    """Empirical one-sided ``(1 - alpha)`` lower confidence bound on a mechanism's epsilon.

    Parameters
    ----------
    mechanism : callable ``(data, n, rng) -> array``
        Returns the outputs of ``n`` independent runs on ``data`` with leading axis ``n``:
        scalars ``(n,)``, vectors ``(n, d)``, trajectories ``(n, T, d)`` (flattened), or discrete
        outputs (integers, booleans, strings, small tuples as integer rows). Structured
        releases (a dict of arrays, a list of ``n`` per-run records, a tuple of arrays such as
        ``(weights, bias)``) are audited as the table of their numbers
        (:func:`dpaudit.release_outputs.release_table`, whose docstring states the rule that
        tells them apart), their column names in :attr:`AuditResult.output_columns`. Object
        arrays of numbers are audited as numbers; NaN, infinities or ``None`` in any run of any call are
        a ValueError naming the mechanism, the input and the run. ``rng`` is a
        ``numpy.random.Generator``; the mechanism must draw all its randomness from it.
    data0, data1 : any
        The two neighbouring inputs, passed to ``mechanism`` unchanged. Required unless ``pairs``
        is given (a TypeError names the missing one; both ``None`` is a ValueError).
    epsilon : float > 0
        Claimed epsilon; the verdict is ``"violated"`` iff the lower bound exceeds it.
    delta : float in [0, 1)
        Claimed delta, used in ``ln((p_lo - delta) / q_hi)``.
    samples : int >= 10
        Runs per input in the main audit (training + test).
    alpha : float in (0, 1)
        The bound holds with probability at least ``1 - alpha``.
    seed : int >= 0
        Root of all randomness (``numpy.random.SeedSequence(seed).spawn``).
    pairs : sequence of (data0, data1), optional
        Candidate neighbouring pairs, instead of ``data0``/``data1``. Each gets a pilot of
        ``pilot_samples`` runs per input; the main audit runs on the most promising pair with
        fresh samples (see the module docstring for why no further correction is needed).
        A Hypothesis strategy of ``(data0, data1)`` pairs (e.g.
        :func:`dpaudit.blackbox.pair_search.statdp_patterns`) is searched instead: a targeted
        Hypothesis search pilots up to ``pair_candidates`` distinct pairs, each steering the next
        draws by its projected bound (:mod:`dpaudit.blackbox.pair_search`); the pilot budget is
        computed with ``pair_candidates`` as the number of pairs, and each pilot record states the
        pair it tried.
    pair_seeds : sequence of (data0, data1), optional
        Pairs piloted *before* any pair of ``pairs`` (a strategy's draws or a list): the declared
        class's extreme pairs, say (dpaudit's own come from
        :func:`dpaudit.formal.strategies.extreme_pairs`; the caller passes them). Seeds count as
        candidates in the pilot budget. With seeds or a strategy, duplicates are piloted once and
        pairs whose inputs are identical, or whose outputs are identical under a common seed (a
        probe of 64 runs), are dropped (``AuditResult.pilot`` does not list them; the result's
        ``pairs.dropped`` does). The audited pair is stated in one line
        (:attr:`AuditResult.chosen_pair`).
    pair_candidates : int >= 1, optional
        Cap on the pairs a strategy search pilots (default
        :data:`~dpaudit.blackbox.pair_search.DEFAULT_PAIR_CANDIDATES`, 16); only with a strategy.
    pilot_samples : int >= 10, optional
        Pilot runs per input per pair, extra to ``samples``; default
        ``max(100, int(0.2 * samples) // len(pairs))``: 20% of ``samples`` per input in total
        across the pairs (``PILOT_FRACTION``), with a floor of 100 runs per pair
        (``MIN_PILOT_SAMPLES``) that binds only with more than ``samples / 500`` pairs. Ignored
        (no pilot) when there is a single pair. The result reports the total
        (:attr:`AuditResult.pilot_runs`).
    statistic : callable ``outputs (n, ...) -> scores (n,)``, optional
        Replaces the built-in statistic; thresholds are still chosen on the training split. It
        must act **row-wise**: the score of a run is a fixed, deterministic function of that run's
        output alone. The engine calls it on chunks of runs, so a statistic that uses the batch
        (``o - o.mean()``, ranks, standardisation, the batch size, row positions) or its own
        randomness makes the counts non-binomial and the bound invalid. On the first runs it is
        checked that scoring in one batch or in two gives the same scores and that permuting the
        runs permutes the scores (up to a relative ``1e-9``); otherwise ValueError.
    train_fraction : float in (0, 1), optional
        Fraction of ``samples`` used to learn the statistic and choose the event. Default: 10%,
        raised to ``min(samples // 4, 5000)`` runs for small audits (so 25% at 2,000 or 20,000
        samples, 10% from 50,000 up); the fraction used is stated in the result.
    test_events : int in [1, 4]
        Events evaluated on the test split (best of distinct (tail, direction) families), plus
        for ``delta > 0`` claims on continuous or user scores the hedge events
        (:data:`HEDGE_RANKINGS`) that differ from them; each is evaluated at ``alpha / m`` for
        the ``m`` events evaluated
        (``AuditResult.bonferroni``) and the largest bound reported.
    output_kind : "auto", "discrete" or "continuous"
        ``"auto"`` treats string/object outputs, and numeric outputs with at most
        ``min(256, probe size / 4)`` distinct rows among the first runs, as discrete.
    chunk_size : int, optional
        Runs per mechanism call; default fills about 8 MB (at most 131072 runs). Part of what
        makes a result reproducible.
    statistics : sequence of str, optional
        The family of learned statistics compared on the selection split for continuous outputs
        (:mod:`dpaudit.blackbox.learned_statistics`): names from ``"identity"``, ``"histogram"``
        (scalars), ``"linear"``, ``"naive-bayes"``, ``"sequence"`` (vectors), ``"logistic"``,
        ``"gradient-boosting"``, ``"knn"``, ``"atoms"`` (both). Default: identity and histogram
        ratios for scalars; linear discriminant, naive Bayes, logistic regression and sequence
        features for vectors; atoms (repeated values separating the inputs,
        :mod:`dpaudit.blackbox.atom_statistics`) for both.
        Each is fitted on the fit split only; the one whose best event projects the highest bound
        on the selection split is used; the test split is drawn afterwards and only the chosen
        statistic's events are counted on it (no extra Bonferroni factor). Discrete outputs always
        use the outcome likelihood ratio, a user ``statistic`` replaces the family.
    max_train_samples : int >= 2 or None
        Cap on the training runs per input (and on the default pilot per pair), default
        :data:`MAX_TRAIN_SAMPLES` (5 x 10^6): above it, more ``samples`` only go to the test
        split, which is streamed into counters, so memory stays bounded whatever ``samples`` is
        (10^9 runs per input of a scalar mechanism: under 1 GB). ``None``: no cap (the audit is
        refused when its training split cannot fit in memory). Part of what makes a result
        reproducible when it binds.
    executor : "local", "processes", "dask" or an open :class:`~dpaudit.execution.executors.Executor`
        Where the test split's blocks of chunks run (:mod:`dpaudit.execution.executors`):
        ``"local"`` (default) in this process, ``"processes"`` in a pool of processes on this
        machine, ``"dask"`` on a Dask cluster. Training and event selection always run here.
        Workers receive the mechanism (by reference when importable, else by cloudpickle), the
        inputs and their chunks' seeds, and send back counts only. The result is bit-identical
        for every executor and number of workers.
    scheduler : str or distributed.Client, optional
        The Dask scheduler: an address (``tcp://host:8786``) or a ``distributed.Client``; giving
        one implies ``executor="dask"``. Default with ``executor="dask"``:
        ``DASK_SCHEDULER_ADDRESS``, else a ``LocalCluster`` of one worker process per core,
        started for this call (pass a Client or an open Executor to reuse one across audits).

    rng_probe : bool
        Before sampling, call the mechanism 3 times on 64 runs of the first input with controlled
        seeds (:mod:`dpaudit.blackbox.rng_probe`): a mechanism that ignores its ``rng`` is
        reported (``AuditResult.rng``), numpy's and Python's global RNGs are then reseeded in
        every chunk, and parallel executors are refused when its generator cannot be reseeded.
        ``False`` skips the probe (for mechanisms whose calls must be counted exactly).
    joint_test : bool
        Decide each threshold event with the exact unconditional joint test of its two counts
        (:mod:`dpaudit.blackbox.joint_test`) instead of the product of two
        Clopper-Pearson intervals: valid at the same level, never below the product at the
        statistic's level, typically 2-10% closer to the exact epsilon at 10^6-10^7 runs; costs
        about 0.2-3 s per event. Pooled pairs keep their intervals. Default ``False``.

    Returns
    -------
    AuditResult
        The bound, verdict, events, counts, intervals and everything needed to reproduce it.
        ``epsilon_lower_bound`` holds with probability at least ``1 - alpha``; ``mu_lower_bound``
        is a separate ``1 - alpha`` statement (jointly at least ``1 - 2 alpha``), never used for
        the verdict.

    Raises
    ------
    ValueError, TypeError
        Invalid parameters, missing inputs, a callable of the wrong arity, a budget that cannot
        fit in memory (:func:`check_memory_budget`), a statistic that is not row-wise, or a
        mechanism returning a wrong leading axis, empty rows, NaN/inf/None, rows of changing
        shape, or different output types
        on the two inputs.
    """
    t_start = time.perf_counter()
    if not isinstance(joint_test, bool):
        raise TypeError(f"joint_test must be True or False, got {joint_test!r}")
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    alpha = check_alpha(alpha)
    samples = check_int(samples, "samples", minimum=MIN_SAMPLES)
    seed = check_int(seed, "seed", minimum=0)
    if train_fraction is not None:
        train_fraction = check_probability(train_fraction, "train_fraction")
    test_events = check_int(test_events, "test_events", minimum=1, maximum=4)
    if output_kind not in ("auto", "discrete", "continuous"):
        raise ValueError(f"output_kind must be 'auto', 'discrete' or 'continuous', "
                         f"got {output_kind!r}")
    if chunk_size is not None:
        chunk_size = check_int(chunk_size, "chunk_size", minimum=1)
    check_callables(mechanism, statistic)
    strategy = None
    seeds = [] if pair_seeds is None else _check_pairs(_NOT_GIVEN, _NOT_GIVEN, pair_seeds)
    if seeds and pairs is None:
        raise ValueError("pair_seeds are tried before the pairs of pairs=; give pairs (a list or "
                         "a Hypothesis strategy) too")
    if pairs is not None and _is_strategy(pairs):
        if any(d is not _NOT_GIVEN and d is not None for d in (data0, data1)):
            raise ValueError("give either data0 and data1 or pairs, not both")
        strategy = pairs
        n_cand = check_int(16 if pair_candidates is None
                           else pair_candidates, "pair_candidates", minimum=1)
        n_cand += len({pair_key(p) for p in seeds})
        candidates: list[tuple[Any, Any]] = []
    elif seeds:
        if pair_candidates is not None:
            raise ValueError("pair_candidates applies only when pairs is a Hypothesis strategy")
        listed = _check_pairs(data0, data1, pairs)
        strategy = None
        candidates = []
        n_cand = len({pair_key(p) for p in seeds + listed})
    else:
        if pair_candidates is not None:
            raise ValueError("pair_candidates applies only when pairs is a Hypothesis strategy")
        candidates = _check_pairs(data0, data1, pairs)
        n_cand = len(candidates)
    if pilot_samples is not None:
        pilot_samples = check_int(pilot_samples, "pilot_samples", minimum=MIN_SAMPLES)
    if max_train_samples is not None:
        max_train_samples = check_int(max_train_samples, "max_train_samples", minimum=2)
    if executor == "local" and scheduler is not None:
        executor = "dask"
    check_executor(executor, scheduler)
    n_train, n_test = _split_sizes(samples, train_fraction, max_train_samples)
    check_memory_budget(samples, max(n_train, pilot_samples or 0))
    # Pooled mirrored events (statistics.PooledEvent) for (epsilon, delta) claims, where the
    # chosen events lie in sparse tails and doubling the runs behind one statement matters most;
    # their intervals need a per-interval level <= POOLED_MAX_ALPHA.
    pooled = delta > 0 and Bonferroni(alpha, test_events).per_interval_alpha <= POOLED_MAX_ALPHA
    cfg = _Config(epsilon, delta, alpha, test_events, output_kind, statistic, chunk_size,
                  check_statistics(statistics), pooled)
    root = np.random.SeedSequence(seed)
    main_seq = root.spawn(1)[0]
    clock = [0.0]
    # Does the mechanism draw from its rng? (a few calls with controlled seeds)
    first_input = (data0 if data0 is not _NOT_GIVEN and data0 is not None
                   else (seeds or candidates or [(None, None)])[0][0])
    if rng_probe and strategy is not None and not seeds:
        first_input = search_pairs(strategy, lambda d0, d1: 0.0, 1, seed, vacuous=True)[0][0]
    probe = probe_rng(mechanism, first_input, seed) if rng_probe else None
    if probe is not None and probe.rng_ignored:
        if not probe.globals_reseedable:
            refuse_parallel_unseeded(executor if scheduler is None else "dask",
                                     f"mechanism {callable_name(mechanism)}")
        cfg.reseed_globals = True
    dropped: list[dict[str, Any]] = []

    pair_index: int | None = None
    pilot: list[dict[str, Any]] = []
    n_pilot = 0
    if pairs is not None:
        pair_index = 0
        if n_cand > 1:
            # The candidate count (a list's length, or the search's cap) fixes the pilot budget
            # before any sampling.
            n_pilot = pilot_samples if pilot_samples is not None else max(
                MIN_PILOT_SAMPLES, int(PILOT_FRACTION * samples) // n_cand)
            if pilot_samples is None and max_train_samples is not None:
                n_pilot = min(n_pilot, max(MIN_PILOT_SAMPLES, max_train_samples))
            projected: list[float] = []

            def pilot_audit(d0: Any, d1: Any) -> float:
                j = len(projected)
                pilot_seq = root.spawn(1)[0]
                tr = _train(mechanism, d0, d1, pilot_seq, cfg, n_pilot, n_test, clock,
                            hedges=False)
                # The pilot's selection split stands in for the main run's: project its best event
                # to the main test size exactly as the main run will rank events.
                best = tr.eps_sweep_best[0].rank_value if tr.eps_sweep_best else -math.inf
                projected.append(best)
                rec = {"pair_index": j, "projected_log_ratio_bound": _json_float(best),
                       "statistic": tr.scorer_info, "output_kind": tr.kind,
                       "event": (tr.eps_sweep_best[0].to_dict()
                                 if tr.eps_sweep_best
                                 else _no_ranked_event_record(tr.n_select))}
                if strategy is not None:
                    rec["pair"] = [_describe_input(d0), _describe_input(d1)]
                pilot.append(rec)
                return best

            if strategy is not None or seeds:
                cap = max(1, n_cand - len({pair_key(p) for p in seeds}))
                candidates = search_pairs(
                    strategy if strategy is not None else st_sampled(listed), pilot_audit, cap,
                    seed, seeds=seeds, dropped=dropped,
                    skip=lambda d0, d1: _same_outputs(mechanism, d0, d1, seed, cfg))
            else:
                for d0, d1 in candidates:
                    pilot_audit(d0, d1)
            pair_index = int(np.argmax(projected))
        elif strategy is not None or seeds:
            candidates = search_pairs(strategy if strategy is not None else st_sampled(listed),
                                      lambda d0, d1: 0.0, 1, seed, seeds=seeds, dropped=dropped)
        data0, data1 = candidates[pair_index]
    how = ("the given pair" if pairs is None else
           f"pair {pair_index} of {len(candidates)} piloted, highest projected bound"
           if len(candidates) > 1 else "the only admissible candidate")
    if seeds and pair_index is not None and pair_index < len(seeds) and \
            any(pair_key(candidates[pair_index]) == pair_key(p) for p in seeds):
        how += ", a seed pair"
    chosen_pair = describe_pair(data0, data1, how=how)

    tr = _train(mechanism, data0, data1, main_seq, cfg, n_train, n_test, clock)
    eps_events = tr.eps_sweep_best
    gdp_events = tr.gdp_best
    watched, where = _watch_list(eps_events + gdp_events)
    counts = np.zeros((len(watched), 2), dtype=np.int64)
    job = _CountJob(mechanism, (data0, data1), (tr.streams[0].seed_seq, tr.streams[1].seed_seq),
                    (tr.streams[0].row_shape, tr.streams[1].row_shape), tr.scorer, watched,
                    tr.histogram.edges, cfg.reseed_globals,
                    (tr.streams[0].dtype, tr.streams[1].dtype),
                    (tr.streams[0].exact_objects, tr.streams[1].exact_objects),
                    frozenset(tr.streams[0].seen),
                    (tr.streams[0].layout, tr.streams[1].layout),
                    (tr.streams[0].columns, tr.streams[1].columns))
    ex = open_executor(executor, scheduler, preload=(__name__,))
    try:
        blocks = _test_blocks(tr.streams, n_test, tr.chunk_rows, ex.workers)
        # Exact integer sums: the totals do not depend on the order in which blocks finish.
        for i, got in ex.map_unordered(_count_block, blocks, job):
            j = blocks[i].label
            counts[:, j] += got.counts
            tr.histogram.counts[j] += got.histogram
            tr.histogram.clipped[j] += got.clipped
            clock[0] += got.seconds
    finally:
        if ex is not executor:
            ex.close()

    bonf = Bonferroni(alpha, len(eps_events) or 1)
    evaluated = tuple(_evaluate(r, counts[list(where[i])], n_test, bonf, delta, joint_test)
                      for i, r in enumerate(eps_events))
    gdp_event = None
    if gdp_events:
        k = len(eps_events)
        gdp_event = _evaluate(gdp_events[0], counts[list(where[k])], n_test, Bonferroni(alpha),
                              delta)
    best = max(evaluated, key=lambda e: e.log_ratio_lower_bound, default=None)
    raw = best.log_ratio_lower_bound if best is not None else -math.inf
    eps_lb = max(0.0, raw)
    verdict: Verdict = "violated" if eps_lb > epsilon else "not violated"
    power = None
    if verdict == "not violated" and best is not None:
        power = power_statement(best.q.count, best.q.nobs, bonf.per_interval_alpha, epsilon,
                                delta)
    mu_lb = gdp_event.mu_lower_bound if gdp_event is not None else 0.0
    event_outcomes = _event_outcomes(tr.scorer, best)
    histogram = tr.histogram.to_dict(
        threshold=(None if best is None or isinstance(best.event, PooledEvent)
                   else best.event.threshold),
        statistic=str(tr.scorer_info.get("description", tr.scorer_info.get("name", ""))),
        parameters={"epsilon": epsilon, "delta": delta, "samples": samples, "seed": seed,
                    "split": "test"})
    return AuditResult(
        claimed_epsilon=epsilon, claimed_delta=delta, epsilon_lower_bound=eps_lb,
        log_ratio_lower_bound=raw, verdict=verdict, mu_lower_bound=mu_lb, event=best,
        gdp_event=gdp_event, evaluated_events=evaluated, statistic=tr.scorer_info,
        output_kind=tr.kind, samples=samples, train_fraction=n_train / samples, n_fit=tr.n_fit,
        n_select=tr.n_select, n_test=n_test, alpha=alpha, bonferroni=bonf,
        candidates_compared=tr.n_candidates, seed=seed, chunk_size=tr.chunk_rows,
        seconds=time.perf_counter() - t_start, sampling_seconds=clock[0], histogram=histogram,
        pair_index=pair_index, pilot=tuple(pilot), pilot_samples=n_pilot,
        event_outcomes=event_outcomes, power=power, chosen_pair=chosen_pair,
        rng={} if probe is None else probe.to_dict(), dropped_pairs=tuple(dropped),
        output_columns=tr.streams[0].columns, release_dtype=tr.streams[0].release_dtype)
