"""Black-box empirical lower bounds on epsilon: :func:`audit` and :class:`AuditResult`.

For one neighbouring pair and ``samples`` runs per input (``../shared/AUDIT-METHOD.md``
section 3): split the runs in drawing order into training and test parts; learn a statistic
(:mod:`dpaudit.blackbox.training`) and choose events on the training part; count the chosen events
on the fresh test part and bound epsilon with exact one-sided Clopper-Pearson bounds,
``epsilon_lb = max(0, ln((p_lo - delta) / q_hi))``, Bonferroni over the events evaluated. The test
samples are independent of every choice, so the bound holds with probability at least
``1 - alpha`` for the mechanism as sampled (floating-point samplers are not exactly DP: Mironov,
CCS 2012). With candidate ``pairs`` a pilot on disjoint streams picks the pair. A result is a
deterministic function of the mechanism, the inputs and the arguments that shape sampling.
The parts: :mod:`dpaudit.blackbox.audit_config` (budgets, split), :mod:`dpaudit.blackbox.pilot`,
:mod:`dpaudit.blackbox.counting` and :mod:`dpaudit.blackbox.evaluation`; this module checks the
arguments and runs them in order.

The steps, the pilot, the seeding and why the bound is valid:
docs/blackbox-notes.md#empirical-audit.
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from hypothesis.strategies import SearchStrategy

from dpaudit._validation import (check_alpha, check_delta, check_epsilon, check_int,
                                 check_probability)
from dpaudit.blackbox.audit_config import (DEFAULT_TRAIN_FRACTION, MAX_TRAIN_SAMPLES,
                                           MIN_PILOT_SAMPLES, MIN_SAMPLES, PILOT_FRACTION,
                                           AuditConfig, split_sizes)
from dpaudit.blackbox.confidence import POOLED_MAX_ALPHA, Bonferroni
from dpaudit.blackbox.counting import CountJob, count_block, test_split_blocks, watch_list
from dpaudit.blackbox.evaluation import evaluate_event
from dpaudit.blackbox.learned_statistics import check_statistics
from dpaudit.blackbox.pair_search import search_pairs
from dpaudit.blackbox.pilot import check_candidates, choose_pair
from dpaudit.blackbox.power import power_statement
from dpaudit.blackbox.result import AuditResult, EvaluatedEvent, Verdict, event_outcome_set
from dpaudit.blackbox.rng_probe import probe_rng
from dpaudit.blackbox.sampling import (NOT_GIVEN, OutputKind, available_memory_bytes,
                                       callable_name, check_callables, check_memory_budget)
from dpaudit.blackbox.statistics import PooledEvent
from dpaudit.blackbox.training import HEDGE_RANKINGS, train
from dpaudit.execution.executors import (Executor, ExecutorName, check_executor, open_executor,
                                         refuse_parallel_unseeded)

# The budget constants and the hedge rankings are defined where they are used
# (dpaudit.blackbox.audit_config, dpaudit.blackbox.training) and stay importable from here.
__all__ = ["audit", "AuditResult", "EvaluatedEvent", "MIN_SAMPLES", "DEFAULT_TRAIN_FRACTION",
           "PILOT_FRACTION", "MIN_PILOT_SAMPLES", "MAX_TRAIN_SAMPLES", "check_memory_budget",
           "available_memory_bytes", "HEDGE_RANKINGS"]


def audit(mechanism: Callable[[Any, int, np.random.Generator], np.ndarray],
          data0: Any = NOT_GIVEN, data1: Any = NOT_GIVEN, epsilon: float = 1.0,
          delta: float = 0.0, samples: int = 1_000_000, alpha: float = 0.05, seed: int = 0, *,
          # The pair: candidates (a list, a Hypothesis strategy, seed pairs), each piloted.
          pairs: Sequence[tuple[Any, Any]] | SearchStrategy[Any] | None = None,
          pair_seeds: Sequence[tuple[Any, Any]] | None = None,
          pair_candidates: int | None = None, pilot_samples: int | None = None,
          # The statistic, the split of the runs and the events tested.
          statistic: Callable[[np.ndarray], np.ndarray] | None = None,
          statistics: Sequence[str] | None = None, output_kind: OutputKind = "auto",
          train_fraction: float | None = None,
          max_train_samples: int | None = MAX_TRAIN_SAMPLES, test_events: int = 1,
          joint_test: bool = False,
          # How and where the runs are drawn.
          chunk_size: int | None = None, rng_probe: bool = True,
          executor: ExecutorName | Executor = "local", scheduler: Any = None) -> AuditResult:
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
        fresh samples (why no further correction is needed: docs/blackbox-notes.md#empirical-audit).
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
    output_kind : "auto", "discrete" or "continuous"
        ``"auto"`` treats string/object outputs, and numeric outputs with at most
        ``min(256, probe size / 4)`` distinct rows among the first runs, as discrete.
    train_fraction : float in (0, 1), optional
        Fraction of ``samples`` used to learn the statistic and choose the event. Default: 10%,
        raised to ``min(samples // 4, 5000)`` runs for small audits (so 25% at 2,000 or 20,000
        samples, 10% from 50,000 up); the fraction used is stated in the result.
    max_train_samples : int >= 2 or None
        Cap on the training runs per input (and on the default pilot per pair), default
        :data:`MAX_TRAIN_SAMPLES` (5 x 10^6): above it, more ``samples`` only go to the test
        split, which is streamed into counters, so memory stays bounded whatever ``samples`` is
        (10^9 runs per input of a scalar mechanism: under 1 GB). ``None``: no cap (the audit is
        refused when its training split cannot fit in memory). Part of what makes a result
        reproducible when it binds.
    test_events : int in [1, 4]
        Events evaluated on the test split (best of distinct (tail, direction) families), plus
        for ``delta > 0`` claims on continuous or user scores the hedge events
        (:data:`HEDGE_RANKINGS`) that differ from them; each is evaluated at ``alpha / m`` for
        the ``m`` events evaluated
        (``AuditResult.bonferroni``) and the largest bound reported.
    joint_test : bool
        Decide each threshold event with the exact unconditional joint test of its two counts
        (:mod:`dpaudit.blackbox.joint_test`) instead of the product of two
        Clopper-Pearson intervals: valid at the same level, never below the product at the
        statistic's level, typically 2-10% closer to the exact epsilon at 10^6-10^7 runs; costs
        about 0.2-3 s per event. Pooled pairs keep their intervals. Default ``False``.
    chunk_size : int, optional
        Runs per mechanism call; default fills about 8 MB (at most 131072 runs). Part of what
        makes a result reproducible.
    rng_probe : bool
        Before sampling, call the mechanism 3 times on 64 runs of the first input with controlled
        seeds (:mod:`dpaudit.blackbox.rng_probe`): a mechanism that ignores its ``rng`` is
        reported (``AuditResult.rng``), numpy's and Python's global RNGs are then reseeded in
        every chunk, and parallel executors are refused when its generator cannot be reseeded.
        ``False`` skips the probe (for mechanisms whose calls must be counted exactly).
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
    cands = check_candidates(data0, data1, pairs, pair_seeds, pair_candidates)
    if pilot_samples is not None:
        pilot_samples = check_int(pilot_samples, "pilot_samples", minimum=MIN_SAMPLES)
    if max_train_samples is not None:
        max_train_samples = check_int(max_train_samples, "max_train_samples", minimum=2)
    if executor == "local" and scheduler is not None:
        executor = "dask"
    check_executor(executor, scheduler)
    n_train, n_test = split_sizes(samples, train_fraction, max_train_samples)
    check_memory_budget(samples, max(n_train, pilot_samples or 0))
    # Pooled mirrored events (statistics.PooledEvent) for (epsilon, delta) claims, where the
    # chosen events lie in sparse tails and doubling the runs behind one statement matters most;
    # their intervals need a per-interval level <= POOLED_MAX_ALPHA.
    pooled = delta > 0 and Bonferroni(alpha, test_events).per_interval_alpha <= POOLED_MAX_ALPHA
    cfg = AuditConfig(epsilon, delta, alpha, test_events, output_kind, statistic, chunk_size,
                      check_statistics(statistics), pooled)
    root = np.random.SeedSequence(seed)
    main_seq = root.spawn(1)[0]
    clock = [0.0]
    # Does the mechanism draw from its rng? (a few calls with controlled seeds)
    first_input = (data0 if data0 is not NOT_GIVEN and data0 is not None
                   else (cands.seeds or cands.pairs or [(None, None)])[0][0])
    if rng_probe and cands.strategy is not None and not cands.seeds:
        first_input = search_pairs(cands.strategy, lambda d0, d1: 0.0, 1, seed,
                                   vacuous=True)[0][0]
    probe = probe_rng(mechanism, first_input, seed) if rng_probe else None
    if probe is not None and probe.rng_ignored:
        if not probe.globals_reseedable:
            refuse_parallel_unseeded(executor if scheduler is None else "dask",
                                     f"mechanism {callable_name(mechanism)}")
        cfg.reseed_globals = True
    choice = choose_pair(mechanism, data0, data1, cands, pairs_given=pairs is not None, cfg=cfg,
                         root=root, seed=seed, samples=samples, n_test=n_test,
                         pilot_samples=pilot_samples, max_train_samples=max_train_samples,
                         clock=clock)
    data0, data1 = choice.data0, choice.data1

    tr = train(mechanism, data0, data1, main_seq, cfg, n_train, n_test, clock)
    eps_events = tr.eps_sweep_best
    gdp_events = tr.gdp_best
    watched, where = watch_list(eps_events + gdp_events)
    counts = np.zeros((len(watched), 2), dtype=np.int64)
    s0, s1 = tr.streams
    job = CountJob(mechanism, (data0, data1), (s0.seed_seq, s1.seed_seq),
                   (s0.row_shape, s1.row_shape), tr.scorer, watched, tr.histogram.edges,
                   cfg.reseed_globals, (s0.dtype, s1.dtype), (s0.exact_objects, s1.exact_objects),
                   frozenset(s0.seen), (s0.layout, s1.layout), (s0.columns, s1.columns))
    ex = open_executor(executor, scheduler, preload=(__name__,))
    try:
        blocks = test_split_blocks(tr.streams, n_test, tr.chunk_rows, ex.workers)
        # Exact integer sums: the totals do not depend on the order in which blocks finish.
        for i, got in ex.map_unordered(count_block, blocks, job):
            j = blocks[i].label
            counts[:, j] += got.counts
            tr.histogram.counts[j] += got.histogram
            tr.histogram.clipped[j] += got.clipped
            clock[0] += got.seconds
    finally:
        if ex is not executor:
            ex.close()

    bonf = Bonferroni(alpha, len(eps_events) or 1)
    evaluated = tuple(evaluate_event(r, counts[list(where[i])], n_test, bonf, delta, joint_test)
                      for i, r in enumerate(eps_events))
    gdp_event = None
    if gdp_events:
        k = len(eps_events)
        gdp_event = evaluate_event(gdp_events[0], counts[list(where[k])], n_test,
                                   Bonferroni(alpha), delta)
    best = max(evaluated, key=lambda e: e.log_ratio_lower_bound, default=None)
    raw = best.log_ratio_lower_bound if best is not None else -math.inf
    eps_lb = max(0.0, raw)
    verdict: Verdict = "violated" if eps_lb > epsilon else "not violated"
    power = None
    if verdict == "not violated" and best is not None:
        power = power_statement(best.q.count, best.q.nobs, bonf.per_interval_alpha, epsilon,
                                delta)
    mu_lb = gdp_event.mu_lower_bound if gdp_event is not None else 0.0
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
        pair_index=choice.pair_index, pilot=choice.pilot, pilot_samples=choice.pilot_samples,
        event_outcomes=event_outcome_set(tr.scorer, best), power=power,
        chosen_pair=choice.chosen_pair, rng={} if probe is None else probe.to_dict(),
        dropped_pairs=choice.dropped, output_columns=s0.columns, release_dtype=s0.release_dtype)
