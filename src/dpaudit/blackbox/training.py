"""The training part of an empirical audit: the statistic and the events, chosen on training runs.

For one neighbouring pair, :func:`train` draws each input's training runs (a probe first, whose
outputs fix the chunk size, the output kind and the columns), fits the statistic on the fit
split (a family of learned statistics compared on the selection split for continuous outputs,
the outcome likelihood ratio for discrete ones, or the user's), and ranks every threshold event
of the score on the selection split by the bound it projects on the test split (steps 1-3 of
:mod:`dpaudit.blackbox.empirical_audit`). The test split is not drawn here: the streams it
returns continue where training stopped, so the test runs are fresh.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from dpaudit.blackbox.atom_statistics import MAX_VALUES as ATOM_MAX_VALUES
from dpaudit.blackbox.audit_config import AuditConfig
from dpaudit.blackbox.confidence import Bonferroni
from dpaudit.blackbox.fitters_classifier import SEQUENCE_MAX_VALUES
from dpaudit.blackbox.halting_cells import replaces_choice
from dpaudit.blackbox.learned_statistics import best_events, candidates_for, choose
from dpaudit.blackbox.outcome_selection import fit_outcomes_in_sample
from dpaudit.blackbox.sampling import (PROBE_ROWS, Stream, callable_name, check_comparable,
                                       default_chunk_rows, harmonize_exact, is_discrete)
from dpaudit.blackbox.statistic_protocol import Scorer
from dpaudit.blackbox.statistics import (DISCRETE_SELECTION_LEVEL, HEDGE_SELECTION_LEVEL,
                                         SELECTION_PENALTY_EXPONENT, HistogramAccumulator,
                                         LikelihoodRatioFitter, RankedEvent, SortedScores,
                                         UserScorer, flatten_outputs, sweep_thresholds)

__all__ = ["train", "Trained", "HEDGE_RANKINGS"]

#: Floating-point overflow inside a learned statistic's fit or scores is handled explicitly
#: (the statistic is dropped: :func:`_fit_and_choose`), so numpy's warnings are silenced there
#: (only there: a mechanism's own arithmetic keeps the caller's settings).
def _quiet_floats() -> Any:
    return np.errstate(over="ignore", invalid="ignore", divide="ignore")


@dataclass
class Trained:
    """What the training part of a run produced: the scorer and its kind, the split sizes, the
    chunk size, the ranked events kept for the test split (epsilon and Gaussian-DP), the number
    of candidate events compared, the histogram fixed on training runs, and both inputs'
    streams, positioned where the test split starts."""

    scorer: Scorer
    kind: str
    n_fit: int
    n_select: int
    chunk_rows: int
    eps_sweep_best: list[RankedEvent]
    gdp_best: list[RankedEvent]
    n_candidates: int
    histogram: HistogramAccumulator
    streams: list[Stream]
    scorer_info: dict[str, Any] = field(default_factory=dict)



#: The extra rankings of a ``delta > 0`` claim (keyword arguments of ``sweep_thresholds``; see
#: :data:`~dpaudit.blackbox.statistics.HEDGE_SELECTION_LEVEL` for the reason and the measurement).
HEDGE_RANKINGS: tuple[dict[str, float], ...] = (
    {"selection_alpha": HEDGE_SELECTION_LEVEL},
    {"penalty": SELECTION_PENALTY_EXPONENT},
)


def _hedged(cfg: AuditConfig, kind: str) -> bool:
    """Whether the audit adds the hedge events of :data:`HEDGE_RANKINGS` (a ``delta > 0`` claim on
    a continuous or user score).

    For ``delta > 0`` the best event lies in a sparse tail, where the first ranking's conservative
    selection rates pull the choice towards frequent, weaker events; discrete outcome scores are
    left to their own selection rule."""
    return cfg.delta > 0 and kind != "discrete"



def train(mechanism: Callable[..., Any], data0: Any, data1: Any, seed_seq: np.random.SeedSequence,
          cfg: AuditConfig, n_train: int, n_test: int, clock: list[float], *,
          hedges: bool = True) -> Trained:
    """Fit, choose and rank on the training split. ``hedges=False`` for callers that use only the
    best event (the pilot's projection, sequential_audit): the hedge rankings are then skipped."""
    seen: set[str] = set()  # shared: both inputs' object numbers must be read alike
    streams = [Stream(mechanism, d, j, ss, clock, reseed_globals=cfg.reseed_globals, seen=seen)
               for j, (d, ss) in enumerate(zip((data0, data1), seed_seq.spawn(2)))]
    probe_rows = min(PROBE_ROWS, max(1, n_train // 2))
    probes = [s.draw(probe_rows) for s in streams]
    harmonize_exact(streams, probes)
    check_comparable(mechanism, probes)
    if streams[0].columns != streams[1].columns:
        raise ValueError(f"mechanism {callable_name(mechanism)}: its structured outputs on data0 "
                         f"and data1 release different fields ({list(streams[0].columns or ())[:8]}"
                         f" vs {list(streams[1].columns or ())[:8]}); they must be comparable")
    chunk_rows = default_chunk_rows(probes[0], cfg.chunk_size)

    fitter: LikelihoodRatioFitter | None = None
    family: list[Any] = []
    if cfg.statistic is not None:
        scorer: Scorer = UserScorer(cfg.statistic)  # the one adapter of a user's statistic
        kind = "user"
    elif is_discrete(probes[0], probes[1], cfg.output_kind):
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
    fixed = scorer.events_fixed_on_fit
    eps_sweep = sweep_thresholds(sc[0], sc[1], n_test0=n_test, n_test1=n_test,
                                 alpha=bonf.per_interval_alpha, delta=cfg.delta,
                                 objective="epsilon", pooled=cfg.pooled, sorted_scores=ss,
                                 selection_level=(DISCRETE_SELECTION_LEVEL if kind == "discrete"
                                                  else "penalised"),
                                 # Events fixed on the fit split (atom sets): ranked at their
                                 # selection rates, as choose() compared them.
                                 **({"selection_alpha": 0.5} if fixed else {}))
    eps_best = eps_sweep.best(cfg.test_events)
    pair = (scorer.mirrored_pair(sc[0], sc[1], n_test=n_test, alpha=bonf.per_interval_alpha,
                                 delta=cfg.delta) if cfg.pooled else None)
    if pair is not None:
        # A score whose events and their pooled mirrored pair were fixed on the fit split, for a
        # law symmetric under swapping the inputs (the whitened direction's Gaussian-DP
        # halfspaces): the pair is the event; its halves and the hedges only add selection
        # noise and Bonferroni (direction_statistics.GaussianEventScorer says what it cost).
        eps_best = [pair] + [r for r in eps_best if r.event != pair.event][:cfg.test_events - 1]
    elif (kind == "continuous" and eps_best and not eps_best[0].rank_value > 0
            and flatten_outputs(probes[0]).shape[1] > 1):
        # Vector outputs: no event projects a positive bound; rank again at one
        # standard error (learned_statistics.best_events).
        eps_best = best_events(sc[0], sc[1], m=cfg.test_events, n_test0=n_test, n_test1=n_test,
                               alpha=bonf.per_interval_alpha, delta=cfg.delta,
                               objective="epsilon", pooled=cfg.pooled, sorted_scores=ss)
    if hedges and _hedged(cfg, kind) and eps_best and pair is None:
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
    info = scorer.to_dict()
    if choice_table:
        info = {**info, "chosen_from": list(choice_table)}
    return Trained(scorer, kind, n_fit, n_select, chunk_rows, eps_best,
                    gdp_sweep.best(1), eps_sweep.n_candidates,
                    HistogramAccumulator.from_training(sc[0], sc[1], sorted_scores=ss), streams,
                    info)


def _fit_and_choose(family: list[Any], streams: list[Stream], probes: list[np.ndarray],
                    cfg: AuditConfig, n_train: int, n_test: int, chunk_rows: int
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
    order_free = all(c.name in ("identity", "histogram", "atoms", "tail") for c in family)  # tail sorts its kept values itself
    with _quiet_floats():  # like the updates below (and the gate's _refit): huge outputs overflow
        for c in family:
            # A fitter whose fixed event depends on the test it will face (its size, level,
            # delta): the whitened direction's Gaussian-DP halfspaces. Power only.
            c.fitter.configure(n_test=n_test, delta=cfg.delta, pooled=cfg.pooled,
                               alpha=Bonferroni(cfg.alpha, cfg.test_events).per_interval_alpha)
            c.fitter.prepare(probes[0], probes[1])
    unfitted = [i for i, c in enumerate(family) if not c.fitted]
    fixed_scores: dict[int, list[list[np.ndarray]]] = {i: [[], []] for i in unfitted}
    held: list[list[np.ndarray]] = [[], []]
    def feed(x: np.ndarray, j: int) -> None:
        with _quiet_floats():
            for c in family:
                c.fitter.update(x, j)
            for i in unfitted:
                fixed_scores[i][j].append(family[i].fitter.scorer(x))

    if scalar:
        # Scalars: one sequence of training runs per input, routed by row index to the fit split
        # (the probe first) and the selection split (held).
        fit: list[list[np.ndarray]] = [[p] for p in probes]  # as drawn
        for j, s in enumerate(streams):
            pos = probe_rows
            for x in s.chunks(n_train - probe_rows, chunk_rows):
                cut = max(0, min(x.shape[0], n_fit - pos))
                if cut:
                    fit[j].append(x[:cut])
                if cut < x.shape[0]:
                    held[j].append(x[cut:])
                pos += x.shape[0]
        merged = (order_free and n_fit <= ATOM_MAX_VALUES
                  and all(v.dtype.kind == "f" and not np.any(v == 0)
                          for j in (0, 1) for v in fit[j] + held[j]))
        for j in (0, 1):
            if merged:
                # The identity, the histogram ratio and the atoms use the fit split only as a
                # multiset of values (bin counts, repeated values; the atoms keep every value
                # below ATOM_MAX_VALUES): fed as ONE sorted array, probe included, they fit the
                # same statistics, and every later sort of these values (the histogram's pooled
                # fit values, the atoms' column, the identity's training scores) is a merge of
                # sorted runs (blackbox.sorting), not a full sort. Only without zeros: where
                # numpy's sort puts -0.0 and 0.0 depends on its input's order, and a zero
                # threshold or edge keeps the sign it meets first.
                values = np.concatenate([flatten_outputs(v)[:, 0] for v in fit[j]])
                values.sort()
                feed(values, j)
                continue
            feed(probes[j], j)
            for part in fit[j][1:]:
                # Order-free families get each chunk's part sorted (the same statistic, faster;
                # see the selection split below); other fitters get the drawing order.
                feed(np.sort(flatten_outputs(part)[:, 0]) if order_free else part, j)
    else:
        for j, s in enumerate(streams):
            feed(probes[j], j)
            for x in s.chunks(n_fit - probe_rows, chunk_rows):
                feed(x, j)
    scorers: list[Any] = []
    fitted: list[bool] = []
    origin: list[int] = []
    unfit: list[str] = []
    # Fitters with ``in_sample`` (halting_cells) compete with the event they fix on the fit
    # split, scored on the selection split like any other; they are also fed the selection
    # split, and when chosen their event is re-fixed on all training runs (below).
    in_sample = [i for i, c in enumerate(family) if c.fitter.in_sample]
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
                    sel[k][j].append(scr.score_sorted(x) if scalar else scr(x))
                for i in in_sample:
                    family[i].fitter.update(x, j)
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
    for c in [k] + [c for c in range(len(scorers)) if c != k and origin[c] in in_sample]:
        if origin[c] not in in_sample:
            continue
        # The event re-fixed on the fit and selection splits together, when its fit-split
        # event was chosen on its selection counts, or when the cells' evidence (selection
        # plug-in, level-1/C and empirical-Bayes values) beats the choice
        # (halting_cells.replaces_choice); reported as no fit split, like the outcome ratio of
        # discrete outputs.
        fitter = family[origin[c]].fitter
        with _quiet_floats():
            final = fitter.finish()
            replace = bool(final) and c != k and replaces_choice(
                choice.table[c], choice.table[k], fitter.conservative_value(),
                fitter.shrunk_value())
        if final and (c == k or replace):
            table = tuple({**row, "chosen": i == c} for i, row in enumerate(choice.table))
            return list(fitter.training_scores()), 0, n_train, final[0], table
    if not choice.fitted:
        i = origin[k]
        sc = [np.concatenate(fixed_scores[i][j] + [sc_all[k][j]]) for j in (0, 1)]
        return sc, 0, n_train, choice.scorer, choice.table
    return sc_all[k], n_fit, n_select, choice.scorer, choice.table
