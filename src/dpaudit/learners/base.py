"""The learner interface shared by every algorithm (private or not).

Boring and consistent, in the river / scikit-learn tradition, but vectorised over independent runs:

* ``reset(n_runs, rng)`` starts ``n_runs`` independent runs (all private noise comes from ``rng``);
* ``predict()`` returns the point each run plays/releases at the current round, shape ``(n_runs, d)``;
* ``learn(loss)`` reveals the current round's loss ``f_t`` and advances to round t+1;
* ``run(losses, n_runs, rng)`` does all of the above over a whole stream and returns the released
  trajectory, shape ``(n_runs, T, d)`` (row t = the point played at round t+1, before f_{t+1} is seen).

A learner releases only what its paper releases (the noisy, projected points); secret state
(uncorrupted iterates, exact sums) is never part of ``predict()``'s output. Bandit learners must only
call ``loss.value`` at the points they play.
"""

from __future__ import annotations

import abc
from typing import Sequence

import numpy as np

from dpaudit._validation import check_generator, check_int
from dpaudit.learners.losses import Loss

__all__ = ["OnlineLearner", "RoundCounting", "StoredPointRelease"]


class OnlineLearner(abc.ABC):
    """Abstract batch-vectorised online learner."""

    #: Short name used in reports, e.g. ``"PIGD"``.
    name: str = "learner"
    #: Whether the learner claims differential privacy (non-private baselines: False).
    private: bool = False

    @property
    @abc.abstractmethod
    def dim(self) -> int:
        """Dimension d of the decision set."""

    @abc.abstractmethod
    def reset(self, n_runs: int, rng: np.random.Generator) -> None:
        """Start ``n_runs`` independent runs at round 1."""

    @abc.abstractmethod
    def predict(self) -> np.ndarray:
        """Points played at the current round, shape ``(n_runs, d)``."""

    @abc.abstractmethod
    def learn(self, loss: Loss) -> None:
        """Observe the current round's loss and advance one round."""

    def run(self, losses: Sequence[Loss], n_runs: int, rng: np.random.Generator) -> np.ndarray:
        """Released trajectory over the whole stream, shape ``(n_runs, T, d)``."""
        n_runs = check_int(n_runs, "n_runs", minimum=1)
        check_generator(rng)
        losses = list(losses)
        if not losses:
            raise ValueError("losses must contain at least one loss (T >= 1)")
        self.reset(n_runs, rng)
        out = np.empty((n_runs, len(losses), self.dim))
        for t, loss in enumerate(losses):
            out[:, t, :] = self.predict()
            self.learn(loss)
        return out


class RoundCounting(OnlineLearner):
    """An :class:`OnlineLearner` that counts rounds in ``_t`` (0 before :meth:`reset`, 1 after it,
    incremented by each :meth:`learn`) and exposes the count as :attr:`t`."""

    _t: int = 0

    @property
    def t(self) -> int:
        """The current round (1 after :meth:`reset`)."""
        return self._t


class StoredPointRelease(OnlineLearner):
    """An :class:`OnlineLearner` that stores the points of the current round in ``_point``.

    ``_point`` has shape ``(n_runs, d)`` and is ``None`` before :meth:`reset`; :meth:`predict`
    returns a copy of it.
    """

    _point: np.ndarray | None = None

    def predict(self) -> np.ndarray:
        if self._point is None:
            raise RuntimeError("call reset(n_runs, rng) before predict()")
        return self._point.copy()
