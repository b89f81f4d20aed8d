"""The result of one black-box audit: :class:`AuditResult` and the :class:`EvaluatedEvent` records
it carries (the chosen events with their held-out counts and exact intervals).

Produced by :func:`dpaudit.blackbox.empirical_audit.audit`; read by the claim driver, the reports
and the pytest plugin.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Mapping

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    pass

from dpaudit.blackbox.confidence import (Bonferroni, ProportionBound)
from dpaudit.blackbox.power import PowerStatement
from dpaudit.release_outputs import short_columns
from dpaudit.blackbox.statistics import (OutcomeScorer, PooledEvent, RankedEvent,
                                       ThresholdEvent)


Verdict = Literal["violated", "not violated"]

def json_float(x: float) -> float | str:
    """``x`` for a JSON record: infinities as the strings ``"inf"``/``"-inf"``."""
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return float(x)

_NO_EVENT_NOTE = ("no event: the scores never differed on the selection split, so no event was "
                  "evaluated (counts of the empty event are 0; intervals are null)")


def _no_event_record(n_test: int) -> dict[str, Any]:
    """The :meth:`EvaluatedEvent.to_dict` keys when no event exists (counts 0, intervals null)."""
    return {"event": None, "train": None,
            "test": {"count0": 0, "count1": 0, "nobs0": n_test, "nobs1": n_test},
            "p_interval": None, "q_interval": None, "log_ratio_lower_bound": "-inf",
            "epsilon_lower_bound": 0.0, "mu_lower_bound": 0.0, "note": _NO_EVENT_NOTE}


def no_ranked_event_record(n_select: int) -> dict[str, Any]:
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
    :class:`~dpaudit.blackbox.statistics.PooledEvent`, ``p``/``q`` are the pooled counts (numerator
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
    #: The test that turned the counts into the bound: the product of the two Clopper-Pearson
    #: intervals, or the exact joint test (:mod:`dpaudit.blackbox.joint_test`).
    test: str = "clopper-pearson"

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
            "log_ratio_lower_bound": json_float(self.log_ratio_lower_bound),
            "epsilon_lower_bound": self.epsilon_lower_bound,
            "mu_lower_bound": self.mu_lower_bound,
            **({"test_method": self.test} if self.test != "clopper-pearson" else {}),
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
        :mod:`dpaudit.claims.record`).
    pair_index : int or None
        Index of the chosen candidate pair when ``pairs`` was given.
    pilot : tuple of mappings
        Per candidate pair: projected bound and statistic of its pilot run.
    pilot_samples : int
        Pilot runs per input per pair (0 without a pilot); :attr:`pilot_runs` is the total.
    power : PowerStatement or None
        With every "not violated" result that has an event: the smallest epsilon whose loss on
        the chosen event would have been detected with probability >= 0.8 at this budget
        (:mod:`dpaudit.blackbox.power`), so that a pass is never read as "private".
    output_columns : tuple of str or None
        The names of the released numbers of a structured release (a dict of arrays, per-run
        records, a tuple of arrays; :func:`dpaudit.release_outputs.release_table`), one per
        column of the flattened output the statistics see; None for a plain array. The record
        (:meth:`to_dict`) keeps at most :data:`~dpaudit.release_outputs.MAX_COLUMN_NAMES`.
    release_dtype : str or None
        The dtype of the release's own outputs (``"float32"`` for a jax or torch release in single
        precision), None when it returned no typed array. The record keeps it only for a
        floating-point type other than float64 (the reports' floating-point caveat names it).
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
    #: The audited pair in one line (both inputs, shortened, and how the pair was chosen).
    chosen_pair: str = ""
    #: The rng probe (:mod:`dpaudit.blackbox.rng_probe`): ``rng_ignored``, ``globals_reseeded``,
    #: ``note``; empty when not probed.
    rng: Mapping[str, Any] = field(default_factory=dict)
    #: Candidate pairs the search dropped (identical inputs or identical outputs), with the reason.
    dropped_pairs: tuple[Mapping[str, Any], ...] = ()
    output_columns: tuple[str, ...] | None = None
    release_dtype: str | None = None

    @property
    def rng_ignored(self) -> bool:
        """True when the mechanism was found not to draw from the rng it is given."""
        return bool(self.rng.get("rng_ignored", False))

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
        if self.output_columns is not None:
            shown = short_columns(self.output_columns, 8)
            lines.append(f"output: {len(self.output_columns)} released numbers "
                         f"({', '.join(shown)})")
        lines.append(f"{self.samples} runs per input (test {self.n_test}), seed {self.seed}")
        if self.chosen_pair:
            lines.append(f"pair: {self.chosen_pair}")
        if self.rng_ignored:
            lines.append(f"rng: {self.rng.get('note', '')}")
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
            "log_ratio_lower_bound": json_float(self.log_ratio_lower_bound),
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
            # The rng-probe keys appear only when they carry news (so the records of bundled claims,
            # whose mechanisms draw from their rng and whose pairs are all admissible, are
            # unchanged); chosen_pair is an attribute, stated in str(result), in assert_dp's
            # message and, for user claims, in the report's evidence.
            **({"rng": dict(self.rng)} if self.rng_ignored else {}),
            **({"dropped_pairs": [dict(p) for p in self.dropped_pairs]}
               if self.dropped_pairs else {}),
            # Only for structured releases: plain arrays' records are unchanged.
            **({"output_columns": short_columns(self.output_columns),
                "output_columns_total": len(self.output_columns)}
               if self.output_columns is not None else {}),
            # Only for a floating-point release narrower or wider than float64 (so the records
            # of float64 releases are unchanged): the floating-point caveat names it.
            **({"release_dtype": self.release_dtype} if self.narrow_float else {}),
        }

    @property
    def narrow_float(self) -> bool:
        """Whether the release's outputs are floating point of another width than float64."""
        d = self.release_dtype or ""
        return "float" in d and d != "float64"


#: Outcomes listed by name in the description of a discrete event (the count is always given).
EVENT_OUTCOMES_SHOWN = 12
#: Outcomes listed in the record's ``event_outcomes["outcomes"]``.
EVENT_OUTCOMES_LISTED = 200


def event_outcome_set(scorer: Any, best: "EvaluatedEvent | None") -> dict[str, Any] | None:
    """A discrete event as the set of outcomes it contains (outcome-likelihood-ratio statistic).

    The chosen threshold event on the outcome scores is the set of outcomes seen on the fit split
    whose estimated log likelihood ratio is on the event's side of the threshold (plus every
    unseen outcome, which scores 0, when 0 is on that side).
    """
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
