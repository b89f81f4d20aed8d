"""Discrete outputs: the outcome likelihood ratio fitted, and its event chosen, on the whole
training split.

For discrete outputs (a report-noisy-max index, a sparse vector's halting pattern, a truncated
geometric count, an exponential-mechanism choice) the statistic is the estimated log likelihood
ratio of each outcome (:class:`~dpaudit.blackbox.statistics.OutcomeScorer`) and the events are the
prefix sets of the outcomes sorted by it. Here the outcome counts of *all* training runs give both
the ranking and the selection counts (:meth:`InSampleOutcomeFitter.training_scores`), instead of
a fit half and a selection half: halving the runs behind the ranking costs more power than the
in-sample optimism, which the sweep's level ``1 / C`` over the ``C`` candidate prefixes
(:data:`~dpaudit.blackbox.statistics.DISCRETE_SELECTION_LEVEL`) keeps in check. Validity is
untouched: everything chosen is a function of the training runs, and the test split is drawn
afterwards from disjoint streams. The training split is reported as ``n_fit = 0``.

Why, and the validity argument: docs/blackbox-notes.md#outcome-selection; the simulation and the
engine's figures: docs/benchmarks.md#discrete-outputs-in-sample-outcome-selection.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from dpaudit.blackbox.statistics import LikelihoodRatioFitter, OutcomeScorer

__all__ = ["InSampleOutcomeFitter", "fit_outcomes_in_sample"]


@dataclass
class InSampleOutcomeFitter(LikelihoodRatioFitter):
    """:class:`~dpaudit.blackbox.statistics.LikelihoodRatioFitter` that also gives back, per input,
    the scores of the runs it was fitted on (without keeping the runs: one score per run, expanded
    from the per-outcome counts)."""

    def training_scores(self, scorer: OutcomeScorer) -> tuple[np.ndarray, np.ndarray]:
        """Scores of the fitted runs of data0 and data1 under ``scorer`` (the one of :meth:`finish`):
        the fitted log ratio of each run's outcome, repeated by that outcome's count.

        The order of the runs is lost (each input's scores come grouped by outcome), which does
        not matter: the sweep sorts them.
        """
        if min(self._n) == 0:
            raise ValueError("training_scores needs fit samples from both inputs")
        keys = np.concatenate(self._keys)
        idx = np.searchsorted(scorer.keys, keys)  # every fitted key is among scorer.keys
        counts = np.concatenate(self._counts)
        labels = np.concatenate(self._labels)
        out = tuple(np.repeat(scorer.log_ratios[idx[labels == j]], counts[labels == j])
                    for j in (0, 1))
        if any(o.size != n for o, n in zip(out, self._n)):
            raise AssertionError("training scores do not match the fitted run counts")
        return out[0], out[1]


def fit_outcomes_in_sample(streams: Sequence[object], probes: Sequence[np.ndarray], n_train: int,
                           chunk_rows: int) -> tuple[OutcomeScorer, list[np.ndarray]]:
    """Draw the ``n_train`` training runs of each input (the probes are the first of them), fit
    the outcome likelihood ratio on all of them and return it with each input's training scores
    (the selection scores of the engine's sweep)."""
    fitter = InSampleOutcomeFitter()
    for j, s in enumerate(streams):
        fitter.update(probes[j], j)
        for x in s.chunks(n_train - probes[j].shape[0], chunk_rows):  # type: ignore[attr-defined]
            fitter.update(x, j)
    scorer = fitter.finish()[0]
    return scorer, list(fitter.training_scores(scorer))
