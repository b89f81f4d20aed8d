"""The protocol of the engine's test statistics: a :class:`Fitter` and the :class:`Scorer` it fits.

A fitter streams over the fit split (``prepare`` on the probes, ``update`` on each chunk) and
``finish`` returns its candidate scorers; a scorer maps outputs to one real score per run. The
shape follows dp-accounting's ``PrivacyAccountant`` (dp-accounting 0.6, ``privacy_accountant.py``)
and :class:`dpaudit.claims.declaration.Declaration`: the essentials are abstract, every optional
hook has a default that changes nothing, so the engine calls each hook directly instead of probing
for it. A user's ``statistic`` enters through one adapter,
:class:`~dpaudit.blackbox.statistics.UserScorer`. See docs/layout.md#statistic-protocol.
"""

from __future__ import annotations

import abc
from typing import Any

import numpy as np

__all__ = ["Scorer", "Fitter"]


class Scorer(abc.ABC):
    """Outputs ``(n, ...)`` to real scores ``(n,)``, one per run, each a function of its run alone.

    ``events_fixed_on_fit``: the score's events were fixed on the fit split (a few values, each
    threshold one event), so the selection split ranks them at their rates, without the
    multiplicity of a threshold search.
    """

    events_fixed_on_fit: bool = False

    @abc.abstractmethod
    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        """The score of each run of ``outputs`` (leading axis: runs)."""

    def score_sorted(self, sorted_outputs: np.ndarray) -> np.ndarray:
        """The scores of scalar ``sorted_outputs`` (ascending) as a multiset: the engine uses
        selection scores only so. By default ``self(sorted_outputs)``; a binned scorer returns
        them sorted, which is faster than sorting them afterwards."""
        return self(sorted_outputs)

    def fixed_numerator(self) -> int | None:
        """For a 0/1 score whose event and direction were both fixed on the fit split, the input
        (0 or 1) on which the fit found the event more likely; ``None`` (the default): the
        selection counts say which input is the numerator."""
        return None

    def mirrored_pair(self, scores0: np.ndarray, scores1: np.ndarray, *, n_test: int,
                      alpha: float, delta: float) -> Any:
        """The pooled mirrored pair of events fixed on the fit split, ranked on the selection
        scores (a :class:`~dpaudit.blackbox.statistics.RankedEvent`, which this module cannot
        import: statistics imports it), that the engine tests in place of the threshold sweep's
        pick when the audit pools mirrored pairs; ``None`` (the default): the score has none."""
        return None

    def to_dict(self) -> dict[str, Any]:
        """What the report says about the score: at least its ``name``."""
        return {"name": repr(self)}


class Fitter(abc.ABC):
    """Learns scorers from the fit split, streamed in chunks labelled by input (0 or 1).

    ``in_sample``: the engine also feeds the fitter the selection split, after the fit split's
    scorers were taken, and, when its event is chosen, calls ``finish`` again and takes the
    training scores from the fitter's ``training_scores()`` (such a fitter also gives
    ``conservative_value()``; :mod:`dpaudit.blackbox.halting_cells`).
    """

    in_sample: bool = False

    def configure(self, *, n_test: int, alpha: float, delta: float, pooled: bool) -> None:
        """The test the chosen event will face (its size, per-event level, delta, pooling),
        for fitters that fix their event for it; by default ignored."""

    def prepare(self, probe0: np.ndarray, probe1: np.ndarray) -> None:
        """The probes (the fit split's first runs of each input), before any ``update``; by
        default ignored (``update`` sees them too)."""

    @abc.abstractmethod
    def update(self, outputs: np.ndarray, label: int) -> None:
        """Accumulate a chunk of fit-split ``outputs`` of input ``label``."""

    @abc.abstractmethod
    def finish(self) -> list[Scorer]:
        """The fitted scorers (none when the statistic does not apply to these outputs)."""
