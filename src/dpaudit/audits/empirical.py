"""Black-box empirical lower bounds on epsilon: :func:`audit` and :class:`AuditResult`.

The procedure (``../shared/AUDIT-METHOD.md`` section 3) for one neighbouring pair ``(data0, data1)``
and ``samples`` runs per input:

1. **Split.** The runs on each input are split, in drawing order, into a training part
   (``train_fraction`` of them) and a test part. When the statistic has to be learned (vector
   outputs, discrete outputs), the training part is halved into a *fit* split and a *selection*
   split; otherwise (scalar outputs, a user statistic) it is all selection split.
2. **Statistic** (fit split). Scalar continuous outputs are their own score; vector outputs and
   trajectories (flattened) get a linear discriminant; discrete outputs get their estimated log
   likelihood ratio (:mod:`dpaudit.audits.statistics`). A user ``statistic`` replaces all of this;
   it must act row-wise (the score of a run depends on that run's output only), which is checked
   on the probe (:meth:`~dpaudit.audits.statistics.UserScorer.check_row_wise`): the engine scores
   the runs in chunks, and a statistic that looks at the whole chunk makes the counts of step 4
   non-binomial and the bound invalid.
3. **Event** (selection split). Every threshold of the score, both tails (an event and its
   complement) and both directions (which input is the numerator) are ranked by the bound they
   are expected to give on the test split; the best ``test_events`` (default one) are kept. For
   claims with ``delta > 0`` the candidates also include pooled mirrored pairs
   (:class:`~dpaudit.audits.statistics.PooledEvent`: an upper-tail event from one input with a
   disjoint lower-tail event from the other, one statement over the runs of both inputs, valid
   for any mechanism because the neighbour relation is symmetric;
   :func:`~dpaudit.audits.confidence.pooled_proportion_bound` says why the Clopper-Pearson ends
   stay exact). For those claims (continuous or user scores) up to two *hedge* events are added
   when they differ from the kept ones: the best events of two more rankings of the same selection
   split, with the selection rates bounded at one standard error
   (:data:`~dpaudit.audits.statistics.HEDGE_SELECTION_LEVEL`) and with the ``delta = 0``
   multiplicity penalty; they guard against the main ranking's occasional winner's-curse pick
   among sparse-tail events (:data:`HEDGE_RANKINGS`). A separate event is chosen the same way
   for the Gaussian-DP bound.
4. **Bound** (test split, fresh samples never seen by steps 2-3). The chosen events are counted
   on both inputs; exact one-sided Clopper-Pearson bounds give
   ``epsilon_lb = max(0, ln((p_lo - delta) / q_hi))``, with a Bonferroni factor equal to the
   number of events evaluated on the test split, the hedge events included
   (:class:`~dpaudit.audits.confidence.Bonferroni`).
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

import decimal
import inspect
import math
import numbers
import os
import sys
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Literal, Mapping, Sequence

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from hypothesis.strategies import SearchStrategy

from dpaudit._validation import (check_delta, check_epsilon, check_int, check_probability)
from dpaudit.audits.execution import Executor, ExecutorName, open_executor
from dpaudit.audits.confidence import (POOLED_MAX_ALPHA, Bonferroni, ProportionBound,
                                       gdp_mu_from_bounds, gdp_mu_lower_bound,
                                       log_ratio_lower_bound,
                                       pooled_proportion_bound, proportion_bound)
from dpaudit.audits.power import PowerStatement, power_statement
from dpaudit.audits.learned_statistics import (SEQUENCE_MAX_VALUES, candidates_for,
                                               check_statistics, choose)
from dpaudit.audits.statistics import (DISCRETE_SELECTION_LEVEL, HEDGE_SELECTION_LEVEL,
                                       SELECTION_PENALTY_EXPONENT, HistogramAccumulator,
                                       LikelihoodRatioFitter, PooledEvent, RankedEvent,
                                       SortedScores, ThresholdEvent, UserScorer, flatten_outputs,
                                       outcome_keys,
                                       sweep_thresholds)

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
#: Rows of the first chunk of each input (the probe that decides how outputs are scored).
PROBE_ROWS = 4_096
#: Default cap on the rows and bytes of one chunk of outputs.
MAX_CHUNK_ROWS = 1 << 17
MAX_CHUNK_BYTES = 1 << 23
#: Numeric outputs with at most this many distinct values in the probe are treated as discrete.
MAX_DISCRETE_OUTCOMES = 256

Verdict = Literal["violated", "not violated"]
OutputKind = Literal["auto", "discrete", "continuous"]


def _json_float(x: float) -> float | str:
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return float(x)


class _NotGiven:
    """Default of ``data0``/``data1``: tells an omitted input from an input that is ``None``."""

    def __repr__(self) -> str:
        return "<required unless pairs= is given>"


def callable_name(fn: Any) -> str:
    """A short name of a user callable for error messages (its qualified name or its class)."""
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None)
    if not isinstance(name, str):
        name = type(fn).__name__
    return name


#: Bytes of memory the engine holds per training run per input (the selection split's scores,
#: their concatenation, the sort and the threshold sweep), a generous upper estimate.
BYTES_PER_TRAINING_RUN = 64


def available_memory_bytes() -> int | None:
    """Memory this process can still use: ``MemAvailable`` of ``/proc/meminfo`` (Linux), else
    free physical pages; None when unknown."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return None


def check_memory_budget(samples: int, n_train: int, available: int | None = None) -> None:
    """Refuse an audit whose training split cannot fit in memory (ValueError naming ``samples``).

    The test split is streamed in chunks and costs no memory per run; the selection split's scores
    are held to choose the event, about :data:`BYTES_PER_TRAINING_RUN` bytes per run and input,
    plus one chunk of outputs. With the default cap on the training split
    (:data:`MAX_TRAIN_SAMPLES`) every ``samples`` passes; only an uncapped or explicitly huge
    training split (``max_train_samples=None``, a huge ``pilot_samples``) can be refused.
    """
    if available is None:
        available = available_memory_bytes()
    if available is None:
        return
    need = 2 * n_train * BYTES_PER_TRAINING_RUN + 2 * MAX_CHUNK_BYTES
    if need > available:
        raise ValueError(
            f"samples={samples} cannot run on this machine: its training split ({n_train} runs "
            f"per input) needs about {need / 2**30:.3g} GiB of memory and {available / 2**30:.3g} "
            f"GiB are available; lower samples (or train_fraction)")


def _check_arity(fn: Callable[..., Any], param: str, n_args: int, expected: str) -> None:
    """TypeError when ``fn`` cannot be called with ``n_args`` positional arguments."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):  # builtins without a signature: find out when called
        return
    try:
        sig.bind(*([None] * n_args))
    except TypeError:
        raise TypeError(f"{param} must be callable as {expected}; {callable_name(fn)}{sig} does "
                        f"not take {n_args} positional argument{'s' if n_args > 1 else ''}"
                        ) from None


def _coerce_objects(arr: np.ndarray, who: str, first_run: int) -> np.ndarray:
    """Object outputs: numbers become a numeric array; None/NaN/inf anywhere is an error.

    Object arrays of numbers would otherwise be scored as discrete outcomes (every float its own
    outcome) and give a meaningless bound; ``None`` or NaN among them would be counted as outcomes.
    Other objects (strings, tuples) stay discrete outcomes.
    """
    n = arr.shape[0]
    flat = arr.reshape(n, -1)
    numeric = True
    integral = True
    for run, row in enumerate(flat):
        for value in row:
            if value is None:
                raise ValueError(f"{who} returned None in run {first_run + run} (row {run} of this "
                                 "call); outputs must be finite numbers or discrete labels")
            if isinstance(value, (bool, np.bool_, numbers.Integral)):
                continue
            integral = False
            if isinstance(value, (numbers.Real, decimal.Decimal)):
                if not math.isfinite(float(value)):
                    raise ValueError(f"{who} returned {float(value)} in run {first_run + run} "
                                     f"(row {run} of this call); outputs must be finite numbers")
                continue
            numeric = False
    if not numeric:
        return arr
    try:
        return arr.astype(np.int64 if integral else np.float64)
    except (OverflowError, TypeError, ValueError):
        return arr.astype(np.float64)


_NOT_GIVEN: Any = _NotGiven()

_NO_EVENT_NOTE = ("no event: the scores never differed on the selection split, so no event was "
                  "evaluated (counts of the empty event are 0; intervals are null)")


def _no_event_record(n_test: int) -> dict[str, Any]:
    """The :meth:`EvaluatedEvent.to_dict` keys when no event exists (counts 0, intervals null)."""
    return {"event": None, "train": None,
            "test": {"count0": 0, "count1": 0, "nobs0": n_test, "nobs1": n_test},
            "p_interval": None, "q_interval": None, "log_ratio_lower_bound": "-inf",
            "epsilon_lower_bound": 0.0, "mu_lower_bound": 0.0, "note": _NO_EVENT_NOTE}


def _no_ranked_event_record(n_select: int) -> dict[str, Any]:
    """The ``RankedEvent.to_dict`` keys when no event exists (pilot records)."""
    return {"event": None, "count0": 0, "count1": 0, "nobs0": n_select, "nobs1": n_select,
            "projected_bound": "-inf", "note": _NO_EVENT_NOTE}


# ----------------------------------------------------------------------------------------------
# Result objects
# ----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class EvaluatedEvent:
    """One event chosen on training data and evaluated on the test split.

    ``train`` holds the selection-split counts and the projected bound that chose the event;
    ``p``/``q`` are the test-split counts with their exact one-sided Clopper-Pearson bounds on the
    numerator input (``event.numerator``) and the other input, at ``p.alpha`` each. For a
    :class:`~dpaudit.audits.statistics.PooledEvent`, ``p``/``q`` are the pooled counts (numerator
    side, other side) over the test runs of both inputs, and ``components`` holds each component
    event's test counts ``(count0, count1)`` on (data0, data1).
    """

    event: ThresholdEvent | PooledEvent
    train: RankedEvent
    p: ProportionBound
    q: ProportionBound
    log_ratio_lower_bound: float
    epsilon_lower_bound: float
    mu_lower_bound: float
    components: tuple[tuple[int, int], ...] | None = None

    @property
    def test_counts(self) -> tuple[int, int]:
        """Occurrences on the test split of (data0, data1)."""
        if self.event.numerator == 1:
            return self.q.count, self.p.count
        return self.p.count, self.q.count

    @property
    def test_nobs(self) -> tuple[int, int]:
        """Test-split runs on (data0, data1)."""
        if self.event.numerator == 1:
            return self.q.nobs, self.p.nobs
        return self.p.nobs, self.q.nobs

    def to_dict(self) -> dict[str, Any]:
        c0, c1 = self.test_counts
        n0, n1 = self.test_nobs
        test: dict[str, Any] = {"count0": c0, "count1": c1, "nobs0": n0, "nobs1": n1}
        if self.components is not None:
            test["pooled"] = ("count1/nobs1: numerator side (first event on data1 plus second "
                              "event on data0); count0/nobs0: the other side")
            test["components"] = [{"count0": a, "count1": b} for a, b in self.components]
        return {
            "event": self.event.to_dict(),
            "train": self.train.to_dict(),
            "test": test,
            "p_interval": self.p.to_dict(),
            "q_interval": self.q.to_dict(),
            "log_ratio_lower_bound": _json_float(self.log_ratio_lower_bound),
            "epsilon_lower_bound": self.epsilon_lower_bound,
            "mu_lower_bound": self.mu_lower_bound,
        }


@dataclass(frozen=True)
class AuditResult:
    """Outcome of :func:`audit`: a one-sided ``(1 - alpha)`` lower confidence bound on epsilon.

    Attributes
    ----------
    claimed_epsilon, claimed_delta : float
        The claim audited.
    epsilon_lower_bound : float
        ``max(0, log_ratio_lower_bound)``: valid with probability >= ``1 - alpha``. A value of 0
        means the data gave no evidence of any privacy loss (it is reported as 0, not negative).
    log_ratio_lower_bound : float
        The unclamped maximum over the evaluated events of ``ln((p_lo - delta) / q_hi)``; ``-inf``
        when every event has ``p_lo <= delta``.
    verdict : "violated" or "not violated"
        ``"violated"`` iff ``epsilon_lower_bound > claimed_epsilon``.
    mu_lower_bound : float
        Lower bound on mu of mu-GDP from :attr:`gdp_event`, ``1 - alpha`` on its own: it is
        outside the Bonferroni correction of the epsilon bound, so the two statements hold jointly
        with probability at least ``1 - 2 alpha``. Translating it into (epsilon, delta) assumes a
        Gaussian trade-off curve; never used for the verdict.
    event : EvaluatedEvent or None
        The event giving :attr:`epsilon_lower_bound` (None when the scores never differed;
        :meth:`to_dict` then gives a record with the same keys, counts 0 and null intervals).
    gdp_event : EvaluatedEvent or None
        The event chosen for the Gaussian-DP bound (None, and an empty record in
        :meth:`to_dict`, when the scores never differed).
    evaluated_events : tuple of EvaluatedEvent
        All events evaluated on the test split for the epsilon bound (``bonferroni.m`` of them).
    statistic : mapping
        Description of the score (identity, linear discriminant, outcome likelihood ratio, user).
    output_kind : str
        ``"continuous"``, ``"discrete"`` or ``"user"`` (user statistic).
    samples : int
        Runs per input in the main audit (fit + select + test).
    train_fraction : float
        Fraction of ``samples`` used for training; ``n_fit``, ``n_select``, ``n_test`` are the
        resulting split sizes per input.
    alpha : float
        Total error probability of :attr:`epsilon_lower_bound`.
    bonferroni : Bonferroni
        Correction over the events evaluated on the test split.
    candidates_compared : int
        Events compared on the selection split (thresholds x tails x directions).
    seed, chunk_size : int
        Reproduce with the same values.
    seconds, sampling_seconds : float
        Wall time of the whole audit, and of the mechanism calls alone.
    histogram : mapping
        Test-split scores on both inputs (``figures["histogram"]`` convention of
        :mod:`dpaudit.audits.claim_audit`).
    pair_index : int or None
        Index of the chosen candidate pair when ``pairs`` was given.
    pilot : tuple of mappings
        Per candidate pair: projected bound and statistic of its pilot run.
    pilot_samples : int
        Pilot runs per input per pair (0 without a pilot); :attr:`pilot_runs` is the total.
    power : PowerStatement or None
        With every "not violated" result that has an event: the smallest epsilon whose loss on
        the chosen event would have been detected with probability >= 0.8 at this budget
        (:mod:`dpaudit.audits.power`), so that a pass is never read as "private".
    """

    claimed_epsilon: float
    claimed_delta: float
    epsilon_lower_bound: float
    log_ratio_lower_bound: float
    verdict: Verdict
    mu_lower_bound: float
    event: EvaluatedEvent | None
    gdp_event: EvaluatedEvent | None
    evaluated_events: tuple[EvaluatedEvent, ...]
    statistic: Mapping[str, Any]
    output_kind: str
    samples: int
    train_fraction: float
    n_fit: int
    n_select: int
    n_test: int
    alpha: float
    bonferroni: Bonferroni
    candidates_compared: int
    seed: int
    chunk_size: int
    seconds: float
    sampling_seconds: float
    histogram: Mapping[str, Any]
    pair_index: int | None = None
    pilot: tuple[Mapping[str, Any], ...] = ()
    pilot_samples: int = 0
    event_outcomes: Mapping[str, Any] | None = None
    power: PowerStatement | None = None

    @property
    def bonferroni_factor(self) -> int:
        """Number of events evaluated on the test split (each at ``alpha / m``)."""
        return self.bonferroni.m

    @property
    def pilot_runs(self) -> int:
        """Mechanism runs spent on pilots: both inputs of every candidate pair (0 without one)."""
        return 2 * len(self.pilot) * self.pilot_samples

    def summary_lines(self) -> list[str]:
        """The result in a few short lines (what :meth:`__str__` and :meth:`_repr_html_` show)."""
        level = f"{100 * (1 - self.alpha):.4g}%"
        lines = [f"epsilon >= {self.epsilon_lower_bound:.4g} ({level} one-sided, exact "
                 f"Clopper-Pearson, Bonferroni over {self.bonferroni.m} events) vs claimed "
                 f"({self.claimed_epsilon:.4g}, {self.claimed_delta:.3g}): {self.verdict}"]
        if self.event is not None:
            c0, c1 = self.event.test_counts
            n0, n1 = self.event.test_nobs
            lines.append(f"event: {self.event.event.describe()}")
            if self.event_outcomes:
                lines.append(f"  = {self.event_outcomes.get('description', '')}")
            if self.event.components is not None:
                lines.append(f"  test split (pooled): {c1} of {n1} on the numerator side, {c0} "
                             f"of {n0} on the other")
            else:
                lines.append(f"  test split: {c0} of {n0} runs on data0, {c1} of {n1} on data1")
        else:
            lines.append("no event: the scores never differed between the inputs")
        stat = str(self.statistic.get("description", self.statistic.get("name", "")))
        lines.append(f"statistic: {stat.split(';')[0]}")
        lines.append(f"{self.samples} runs per input (test {self.n_test}), seed {self.seed}")
        return lines

    def __str__(self) -> str:
        head, *rest = self.summary_lines()
        return "AuditResult: " + head + "".join("\n  " + line for line in rest)

    def _repr_html_(self) -> str:
        import html

        head, *rest = self.summary_lines()
        colour = "#b3261e" if self.verdict == "violated" else "#1e7a3c"
        items = "".join(f"<li>{html.escape(line.strip())}</li>" for line in rest)
        return (f"<div><b>AuditResult</b>: <span style='color:{colour}'>{html.escape(head)}"
                f"</span><ul style='margin:4px 0'>{items}</ul></div>")

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable record (infinities as the strings ``"inf"``/``"-inf"``)."""
        return {
            "claim": {"epsilon": self.claimed_epsilon, "delta": self.claimed_delta},
            "epsilon_lower_bound": self.epsilon_lower_bound,
            "log_ratio_lower_bound": _json_float(self.log_ratio_lower_bound),
            "verdict": self.verdict,
            "mu_lower_bound": self.mu_lower_bound,
            "mu_note": ("lower bound on mu of mu-GDP (Dong, Roth, Su 2022); reading it as "
                        "(epsilon, delta) assumes a Gaussian trade-off curve; not used for the "
                        "verdict"),
            "confidence": {"alpha": self.alpha, "level": 1.0 - self.alpha,
                           "bonferroni_factor": self.bonferroni.m,
                           "per_event_alpha": self.bonferroni.per_event_alpha,
                           "per_interval_alpha": self.bonferroni.per_interval_alpha,
                           "candidates_compared_on_training": self.candidates_compared,
                           "interval_method": "exact one-sided Clopper-Pearson",
                           "epsilon_statement_level": 1.0 - self.alpha,
                           "mu_statement_level": 1.0 - self.alpha,
                           "joint_level_at_least": max(0.0, 1.0 - 2.0 * self.alpha),
                           "statements": (
                               "epsilon >= epsilon_lower_bound holds with probability at least "
                               "1 - alpha (Bonferroni over the evaluated events); mu >= "
                               "mu_lower_bound is a separate statement from its own event, also "
                               "at 1 - alpha and outside that correction, so both hold jointly "
                               "with probability at least 1 - 2 alpha; mu never decides the "
                               "verdict")},
            "event": (_no_event_record(self.n_test) if self.event is None
                      else self.event.to_dict()),
            **({"event_outcomes": dict(self.event_outcomes)} if self.event_outcomes else {}),
            "gdp_event": (_no_event_record(self.n_test) if self.gdp_event is None
                          else self.gdp_event.to_dict()),
            "evaluated_events": [e.to_dict() for e in self.evaluated_events],
            "statistic": dict(self.statistic),
            "output_kind": self.output_kind,
            "samples": {"per_input": self.samples, "train_fraction": self.train_fraction,
                        "fit": self.n_fit, "select": self.n_select, "test": self.n_test,
                        "chunk_size": self.chunk_size},
            "seed": self.seed,
            "timing": {"seconds": self.seconds, "sampling_seconds": self.sampling_seconds},
            "histogram": dict(self.histogram),
            "pairs": {"pair_index": self.pair_index, "pilot_samples": self.pilot_samples,
                      "pilot_runs_per_input": len(self.pilot) * self.pilot_samples,
                      "pilot_runs_total": self.pilot_runs,
                      "pilot_fraction_of_samples": len(self.pilot) * self.pilot_samples
                      / self.samples,
                      "pilot": [dict(p) for p in self.pilot]},
            "power": None if self.power is None else self.power.to_dict(),
        }


#: Outcomes listed by name in the description of a discrete event (the count is always given).
EVENT_OUTCOMES_SHOWN = 12
#: Outcomes listed in the record's ``event_outcomes["outcomes"]``.
EVENT_OUTCOMES_LISTED = 200


def _event_outcomes(scorer: Any, best: "EvaluatedEvent | None") -> dict[str, Any] | None:
    """A discrete event as the set of outcomes it contains (outcome-likelihood-ratio statistic).

    The chosen threshold event on the outcome scores is the set of outcomes seen on the fit split
    whose estimated log likelihood ratio is on the event's side of the threshold (plus every
    unseen outcome, which scores 0, when 0 is on that side).
    """
    from dpaudit.audits.statistics import OutcomeScorer

    if best is None or not isinstance(scorer, OutcomeScorer) or isinstance(best.event,
                                                                          PooledEvent):
        return None
    inside = best.event.indicator(np.asarray(scorer.log_ratios, dtype=np.float64))
    raw = np.asarray(scorer.keys)[inside][:EVENT_OUTCOMES_LISTED]
    count = int(np.count_nonzero(inside))
    # How a reader writes an outcome: the value (strings quoted) or the row it stands for; the
    # record's list has scalar values unquoted (str) and rows as shown.
    shown = [scorer.format_key(k) for k in raw]
    listed = shown if scorer.row_dtype is not None else [
        str(k.item() if hasattr(k, "item") else k) for k in raw]
    unseen = bool(best.event.indicator(np.zeros(1))[0])
    more = f" and {count - EVENT_OUTCOMES_SHOWN} more" if count > EVENT_OUTCOMES_SHOWN else ""
    text = (f"the set of {count} outcome{'s' if count != 1 else ''} "
            f"{{{', '.join(shown[:EVENT_OUTCOMES_SHOWN])}{more}}}"
            + (" plus every outcome not seen on the fit split" if unseen else ""))
    return {"outcomes": listed, "count": count, "includes_unseen": unseen, "description": text}


# ----------------------------------------------------------------------------------------------
# Sampling
# ----------------------------------------------------------------------------------------------

@dataclass
class _Stream:
    """The runs on one input: chunks drawn in order, each from its own spawned generator."""

    mechanism: Callable[..., Any]
    data: Any
    label: int
    seed_seq: np.random.SeedSequence
    clock: list[float]
    row_shape: tuple[int, ...] | None = None
    dtype: np.dtype | None = None
    drawn: int = 0  # runs drawn so far on this input (run indices in messages count from 0)

    def draw(self, n: int) -> np.ndarray:
        rng = np.random.default_rng(self.seed_seq.spawn(1)[0])
        t0 = time.perf_counter()
        out = self.mechanism(self.data, n, rng)
        self.clock[0] += time.perf_counter() - t0
        arr = self._check(out, n)
        self.drawn += n
        return arr

    def _check(self, out: Any, n: int) -> np.ndarray:
        name = callable_name(self.mechanism)
        who = f"mechanism {name}(data{self.label}, n={n}, rng)"
        try:
            arr = np.asarray(out)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{who} must return an array-like with leading axis n") from exc
        if arr.ndim == 0 or arr.shape[0] != n:
            got = "a scalar" if arr.ndim == 0 else f"leading axis {arr.shape[0]}"
            raise ValueError(f"{who} returned {got} (shape {arr.shape}); it must return an array "
                             f"whose leading axis has length n = {n}, one row per independent run")
        if arr.size == 0:
            raise ValueError(f"{who} returned rows of shape {arr.shape[1:]} with no values; every "
                             "run must output at least one value")
        if arr.dtype.kind == "c":
            raise TypeError(f"{who} returned complex outputs; only real, integer, boolean, string "
                            "or object outputs can be audited")
        if arr.dtype.kind == "O":
            arr = _coerce_objects(arr, who, self.drawn)
        if arr.dtype.kind == "f":
            finite = np.isfinite(arr)
            if not finite.all():
                run = int(np.argwhere(~finite)[0][0])
                value = arr.reshape(n, -1)[run][~finite.reshape(n, -1)[run]][0]
                raise ValueError(f"{who} returned {value} in run {self.drawn + run} (row {run} of "
                                 f"this call); outputs must be finite numbers")
        if self.row_shape is None:
            self.row_shape, self.dtype = arr.shape[1:], arr.dtype
        elif arr.shape[1:] != self.row_shape:
            raise ValueError(f"{who} returned rows of shape {arr.shape[1:]}, earlier calls "
                             f"returned {self.row_shape}; every run must have the same output "
                             "shape")
        return arr

    def chunks(self, total: int, chunk_rows: int):
        done = 0
        while done < total:
            m = min(chunk_rows, total - done)
            yield self.draw(m)
            done += m


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
#: :data:`~dpaudit.audits.statistics.HEDGE_SELECTION_LEVEL` for the reason and the measurement).
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


def _is_discrete(probe0: np.ndarray, probe1: np.ndarray, output_kind: OutputKind) -> bool:
    if output_kind != "auto":
        return output_kind == "discrete"
    if probe0.dtype.kind in "OUSV":
        return True
    keys = np.concatenate([outcome_keys(probe0), outcome_keys(probe1)])
    return np.unique(keys).size <= min(MAX_DISCRETE_OUTCOMES, max(2, keys.size // 4))


def _chunk_rows(probe: np.ndarray, chunk_size: int | None) -> int:
    if chunk_size is not None:
        return chunk_size
    row_bytes = max(1, probe.nbytes // max(1, probe.shape[0]))
    return int(min(MAX_CHUNK_ROWS, max(1, MAX_CHUNK_BYTES // row_bytes)))


def _train(mechanism: Callable[..., Any], data0: Any, data1: Any, seed_seq: np.random.SeedSequence,
           cfg: _Config, n_train: int, n_test: int, clock: list[float], *,
           hedges: bool = True) -> _Trained:
    """Fit, choose and rank on the training split. ``hedges=False`` for callers that use only the
    best event (the pilot's projection, sequential_audit): the hedge rankings are then skipped."""
    streams = [_Stream(mechanism, d, j, ss, clock)
               for j, (d, ss) in enumerate(zip((data0, data1), seed_seq.spawn(2)))]
    probe_rows = min(PROBE_ROWS, max(1, n_train // 2))
    probes = [s.draw(probe_rows) for s in streams]
    if probes[0].shape[1:] != probes[1].shape[1:] or probes[0].dtype.kind != probes[1].dtype.kind:
        raise ValueError(f"the mechanism's outputs on data0 (shape {probes[0].shape[1:]}, dtype "
                         f"{probes[0].dtype}) and data1 (shape {probes[1].shape[1:]}, dtype "
                         f"{probes[1].dtype}) differ in shape or type; they must be comparable")
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
        # Issue 15: a family of learned statistics, fitted on the fit split and chosen on the
        # selection split (dpaudit.audits.learned_statistics).
        family = candidates_for(flatten_outputs(probes[0]).shape[1], cfg.statistics)
        if len(family) == 1 and not family[0].fitted:
            scorer = family[0].fitter.finish()[0]
            family = []

    choice_table: tuple[dict[str, Any], ...] = ()
    if family:
        sc, n_fit, n_select, scorer, choice_table = _fit_and_choose(
            family, streams, probes, cfg, n_train, n_test, chunk_rows)
    else:
        if fitter is not None:
            n_fit = n_train // 2
            for j, s in enumerate(streams):
                fitter.update(probes[j], j)
                for x in s.chunks(n_fit - probe_rows, chunk_rows):
                    fitter.update(x, j)
            scorer = fitter.finish()
            n_select = n_train - n_fit
            select_scores: list[list[np.ndarray]] = [[] for _ in streams]
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
        done = n_select - (0 if fitter is not None else probe_rows)
        for j, s in enumerate(streams):
            for x in s.chunks(done, chunk_rows):
                select_scores[j].append(scorer(x))
        sc = [np.concatenate(v) for v in select_scores]

    bonf = Bonferroni(cfg.alpha, cfg.test_events)
    ss = SortedScores.of(sc[0], sc[1])  # sorted once for both sweeps and the histogram
    eps_sweep = sweep_thresholds(sc[0], sc[1], n_test0=n_test, n_test1=n_test,
                                 alpha=bonf.per_interval_alpha, delta=cfg.delta,
                                 objective="epsilon", pooled=cfg.pooled, sorted_scores=ss,
                                 selection_level=(DISCRETE_SELECTION_LEVEL if kind == "discrete"
                                                  else "penalised"))
    eps_best = eps_sweep.best(cfg.test_events)
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
                     row_shape=job.row_shape[block.label], drawn=block.first_run)
    hist = HistogramAccumulator(job.edges)
    counts = np.zeros(len(job.events), dtype=np.int64)
    for x in stream.chunks(block.n_runs, block.chunk_rows):
        # One sort per chunk serves the histogram and every event count (binary searches).
        scores = np.sort(np.asarray(job.scorer(x), dtype=np.float64))
        hist.update_sorted(scores, block.label)
        for i, ev in enumerate(job.events):
            counts[i] += ev.count_sorted(scores)
    return _BlockCounts(counts, hist.counts[block.label].copy(), int(hist.clipped[block.label]),
                        clock[0])


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
    """Issue 15: fit every statistic of ``family`` on the fit split, score the selection split with
    each and keep the one whose best event projects the highest bound
    (:func:`dpaudit.audits.learned_statistics.choose`). The test split is not drawn here.

    Returns the chosen statistic's selection scores per input, ``n_fit``, ``n_select``, the scorer
    and the table of candidates. Scalars are drawn as one sequence of training runs routed by row
    index (their selection rows are kept, 8 bytes each), so that when the identity is chosen its
    threshold is picked, as before issue 15, on all training runs (it learned nothing from the fit
    split); vectors are drawn fit split first, then the selection split streamed.
    """
    probe_rows = probes[0].shape[0]
    n_fit = n_train // 2
    n_select = n_train - n_fit
    scalar = flatten_outputs(probes[0]).shape[1] == 1
    order_free = all(c.name in ("identity", "histogram") for c in family)
    for c in family:
        c.fitter.prepare(probes[0], probes[1])
    unfitted = [i for i, c in enumerate(family) if not c.fitted]
    fixed_scores: dict[int, list[list[np.ndarray]]] = {i: [[], []] for i in unfitted}
    held: list[list[np.ndarray]] = [[], []]
    for j, s in enumerate(streams):
        def feed(x: np.ndarray, j: int = j) -> None:
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
    for i, c in enumerate(family):
        for scr in c.fitter.finish():
            scorers.append(scr)
            fitted.append(c.fitted)
            origin.append(i)
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
            for k, scr in enumerate(scorers):
                sel[k][j].append(scr(x))
    sc_all = [[np.concatenate(v) for v in pair] for pair in sel]
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
              delta: float) -> EvaluatedEvent:
    """The test-split statement of one ranked event; ``counts`` has one row ``(count0, count1)``
    per component threshold event (two for a pooled pair)."""
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
    if components is not None:
        # mu from the guarded pooled ends (the pooled test is the even mixture of the two
        # one-direction tests; G_mu is convex, so mu-GDP bounds the mixture's error rates too).
        mu = max(0.0, float(gdp_mu_from_bounds(p.lower, q.upper)))
    else:
        mu = gdp_mu_lower_bound(p.count, p.nobs, q.count, q.nobs, alpha=bonf.per_event_alpha)
    return EvaluatedEvent(ev, ranked, p, q, raw, max(0.0, raw), mu, components)


def _is_strategy(obj: Any) -> bool:
    """A Hypothesis strategy? (Checked without importing Hypothesis: a caller holding a strategy
    has imported it already.)"""
    hyp = sys.modules.get("hypothesis.strategies")
    return hyp is not None and isinstance(obj, hyp.SearchStrategy)


def _describe_input(x: Any) -> Any:
    """A JSON-friendly record of one input found by a pair search (lists for arrays, else repr)."""
    if isinstance(x, np.ndarray) and x.size <= 1000:
        return x.tolist()
    if isinstance(x, (bool, int, float, str)) or x is None:
        return x
    r = repr(x)
    return r if len(r) <= 2000 else r[:2000] + "..."


def _check_pairs(data0: Any, data1: Any, pairs: Sequence[tuple[Any, Any]] | None
                 ) -> list[tuple[Any, Any]]:
    if pairs is None:
        missing = [name for name, d in (("data0", data0), ("data1", data1)) if d is _NOT_GIVEN]
        if missing:
            raise TypeError(f"audit() needs two neighbouring inputs: pass data0 and data1, or "
                            f"pairs=[(data0, data1), ...]; missing: {', '.join(missing)}")
        if data0 is None and data1 is None:
            raise ValueError("data0 and data1 are both None: two identical inputs make a vacuous "
                             "audit (was an input omitted by a wrapper?); pass the two "
                             "neighbouring inputs, or pairs=[(data0, data1), ...]")
        return [(data0, data1)]
    # None is accepted here as "not given": wrappers forward their own None defaults.
    if any(d is not _NOT_GIVEN and d is not None for d in (data0, data1)):
        raise ValueError("give either data0 and data1 or pairs, not both")
    try:
        out = [tuple(p) for p in pairs]
    except TypeError as exc:
        raise TypeError("pairs must be a sequence of (data0, data1) pairs") from exc
    if not out:
        raise ValueError("pairs must contain at least one (data0, data1) pair")
    for i, p in enumerate(out):
        if len(p) != 2:
            raise ValueError(f"pairs[{i}] must be a (data0, data1) pair, got {len(p)} items")
    return out


# ----------------------------------------------------------------------------------------------
# Public entry point
# ----------------------------------------------------------------------------------------------

def audit(mechanism: Callable[[Any, int, np.random.Generator], np.ndarray],
          data0: Any = _NOT_GIVEN, data1: Any = _NOT_GIVEN, epsilon: float = 1.0,
          delta: float = 0.0, samples: int = 1_000_000, alpha: float = 0.05, seed: int = 0, *,
          pairs: Sequence[tuple[Any, Any]] | SearchStrategy[Any] | None = None,
          pair_candidates: int | None = None, pilot_samples: int | None = None,
          statistic: Callable[[np.ndarray], np.ndarray] | None = None,
          train_fraction: float | None = None, test_events: int = 1,
          output_kind: OutputKind = "auto", chunk_size: int | None = None,
          statistics: Sequence[str] | None = None,
          max_train_samples: int | None = MAX_TRAIN_SAMPLES,
          executor: ExecutorName | Executor = "local", scheduler: Any = None) -> AuditResult:
    """Empirical one-sided ``(1 - alpha)`` lower confidence bound on a mechanism's epsilon.

    Parameters
    ----------
    mechanism : callable ``(data, n, rng) -> array``
        Returns the outputs of ``n`` independent runs on ``data`` with leading axis ``n``:
        scalars ``(n,)``, vectors ``(n, d)``, trajectories ``(n, T, d)`` (flattened), or discrete
        outputs (integers, booleans, strings, small tuples as integer rows). Object arrays of
        numbers are audited as numbers; NaN, infinities or ``None`` in any run of any call are
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
        :func:`dpaudit.audits.pair_search.statdp_patterns`) is searched instead: a targeted
        Hypothesis search pilots up to ``pair_candidates`` distinct pairs, each steering the next
        draws by its projected bound (:mod:`dpaudit.audits.pair_search`); the pilot budget is
        computed with ``pair_candidates`` as the number of pairs, and each pilot record states the
        pair it tried.
    pair_candidates : int >= 1, optional
        Cap on the pairs a strategy search pilots (default
        :data:`~dpaudit.audits.pair_search.DEFAULT_PAIR_CANDIDATES`, 16); only with a strategy.
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
        (:mod:`dpaudit.audits.learned_statistics`): names from ``"identity"``, ``"histogram"``
        (scalars), ``"linear"``, ``"naive-bayes"``, ``"sequence"`` (vectors), ``"logistic"``,
        ``"gradient-boosting"``, ``"knn"``. Default: identity and histogram ratios for scalars;
        linear discriminant, naive Bayes, logistic regression and sequence features for vectors.
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
    executor : "local", "processes", "dask" or an open :class:`~dpaudit.audits.execution.Executor`
        Where the test split's blocks of chunks run (:mod:`dpaudit.audits.execution`):
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
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    alpha = check_probability(alpha, "alpha")
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
    if not callable(mechanism):
        raise TypeError(f"mechanism must be callable as mechanism(data, n, rng), "
                        f"got {type(mechanism).__name__}")
    if statistic is not None and not callable(statistic):
        raise TypeError(f"statistic must be callable as statistic(outputs) -> scores, "
                        f"got {type(statistic).__name__}")
    _check_arity(mechanism, "mechanism", 3,
                 "mechanism(data, n, rng) -> array of the outputs of n runs (leading axis n)")
    if statistic is not None:
        _check_arity(statistic, "statistic", 1,
                     "statistic(outputs) -> one real score per run (shape (n,))")
    strategy = None
    if pairs is not None and _is_strategy(pairs):
        if any(d is not _NOT_GIVEN and d is not None for d in (data0, data1)):
            raise ValueError("give either data0 and data1 or pairs, not both")
        strategy = pairs
        n_cand = check_int(16 if pair_candidates is None
                           else pair_candidates, "pair_candidates", minimum=1)
        candidates: list[tuple[Any, Any]] = []
    else:
        if pair_candidates is not None:
            raise ValueError("pair_candidates applies only when pairs is a Hypothesis strategy")
        candidates = _check_pairs(data0, data1, pairs)
        n_cand = len(candidates)
    if pilot_samples is not None:
        pilot_samples = check_int(pilot_samples, "pilot_samples", minimum=MIN_SAMPLES)
    if max_train_samples is not None:
        max_train_samples = check_int(max_train_samples, "max_train_samples", minimum=2)
    from dpaudit.audits.execution import check_executor

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

            if strategy is not None:
                from dpaudit.audits.pair_search import search_pairs
                candidates = search_pairs(strategy, pilot_audit, n_cand, seed)
            else:
                for d0, d1 in candidates:
                    pilot_audit(d0, d1)
            pair_index = int(np.argmax(projected))
        elif strategy is not None:
            from dpaudit.audits.pair_search import search_pairs
            candidates = search_pairs(strategy, lambda d0, d1: 0.0, 1, seed)
        data0, data1 = candidates[pair_index]

    tr = _train(mechanism, data0, data1, main_seq, cfg, n_train, n_test, clock)
    eps_events = tr.eps_sweep_best
    gdp_events = tr.gdp_best
    watched, where = _watch_list(eps_events + gdp_events)
    counts = np.zeros((len(watched), 2), dtype=np.int64)
    job = _CountJob(mechanism, (data0, data1), (tr.streams[0].seed_seq, tr.streams[1].seed_seq),
                    (tr.streams[0].row_shape, tr.streams[1].row_shape), tr.scorer, watched,
                    tr.histogram.edges)
    ex = open_executor(executor, scheduler)
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
    evaluated = tuple(_evaluate(r, counts[list(where[i])], n_test, bonf, delta)
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
        event_outcomes=event_outcomes, power=power)
