"""Discrete outputs: the outcome likelihood ratio fitted, and its event chosen, on the whole
training split.

For discrete outputs (a report-noisy-max index, a sparse vector's halting pattern, a truncated
geometric count, an exponential-mechanism choice) the engine's statistic is the estimated log
likelihood ratio of each outcome (:class:`~dpaudit.blackbox.statistics.OutcomeScorer`), and its
threshold events are the prefix sets of the outcomes sorted by that estimate. Earlier the
estimate came from one half of the training runs (the *fit* split) and the prefix was chosen on
the other half (the *selection* split). With few outcomes this halves the runs behind the one
thing that limits power, the ranking of the outcomes: on DP-Sniper's sparse vector SVT1 (eleven
halting patterns, the best event one halting position of probability 0.024 with a log ratio of
0.088, its neighbours 0.05-0.07) the fit split's 5 x 10^4 runs per input estimate each log ratio
with a standard error of about 0.04, rare positions jump to the top of the order by noise, and
the selection split then prefers a large, diluted prefix (measured at 10^6 runs per input, seeds
0-4: chosen events of probability 0.23, 0.036, 0.12, 0.73, 0.88; bounds 0.027, 0.061, 0.030,
0.005, 0.001 against the oracle's 0.066).

Here the outcome counts of *all* training runs give both the ranking and the selection counts:
each input's training scores are the fitted log ratios of its own outcomes
(:meth:`InSampleOutcomeFitter.training_scores`), and the engine's sweep
(:func:`~dpaudit.blackbox.statistics.sweep_thresholds`, selection level
:data:`~dpaudit.blackbox.statistics.DISCRETE_SELECTION_LEVEL`, i.e. Wilson bounds at level
``1 / C`` over the ``C`` candidate prefixes) picks the prefix. Selecting on the runs the order
was fitted on favours small prefixes whose estimated ratio is inflated by chance; the level
``1 / C`` shrinkage is what keeps that in check, and simulation from the exact laws says it costs
less than halving the runs (benchmarks/outcome_selection_sim.py, 200 repetitions: fit, selection and
test counts drawn multinomially at 10^6 runs per input, the default split):

======================  ==============  ===========  =======
law (oracle's bound)    fit/select      in-sample    oracle
======================  ==============  ===========  =======
SVT1 (0.0663)           0.027           0.046        0.066
SVT4 (0.146)            0.120           0.130        0.146
ReportNoisyMax1 index   0.0877          0.0877       0.0878
ReportNoisyMax2 index   0.0933          0.0930       0.0932
TruncatedGeometric      0.1130          0.1132       0.1146
exp-mech (8 outcomes)   0.8609          0.8607       0.8609
======================  ==============  ===========  =======

(SVT6's 1024 flag patterns exceed the probe's discrete limit, so the engine audits it with the
vector family, not this path.) Measured in the engine (``benchmarks/oracle_ratio.py --samples
1000000 --seeds 20``): SVT1 0.0189 -> 0.0416, SVT2 0.0182 -> 0.0410, SVT4 0.115 -> 0.131 (oracle
0.066, 0.066, 0.146); ReportNoisyMax1/2, TruncatedGeometric and the exponential mechanism at 5
seeds within 1% of their former bounds on the same seeds.

Validity is untouched: everything chosen (the ranking and the prefix) is a function of the
training runs only, and the test split is drawn afterwards from disjoint generator streams, so
its counts are binomial given the event and the Clopper-Pearson bound holds as before. The
ranking of a prefix set on the same runs as its fit is an optimism of the *projection* (a
question of power), never of the bound. ``tests/test_outcome_selection.py`` checks that the
chosen event does not change when the test split's outputs are permuted or replaced.

The training split is reported as ``n_fit = 0`` and ``n_select`` = all training runs, as for
a fixed statistic: no runs are set aside for fitting alone.
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
        """Scores of the fitted runs of data0 and data1 under ``scorer`` (from :meth:`finish`):
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
    scorer = fitter.finish()
    return scorer, list(fitter.training_scores(scorer))
