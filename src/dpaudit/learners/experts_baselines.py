"""Non-private experts baselines: follow the leader (plain and lazy) and multiplicative weights.

* :class:`FollowTheLeader`: plays a uniformly random minimiser of the cumulative loss
  ``sum_{i<t} l_i`` (Kalai & Vempala 2005); with ``sticky=True`` it keeps its expert while that
  expert is still a leader.
* :class:`LazyFollowTheLeader`: the noiseless limit of AFKT23 Algorithm 1 (epsilon, eta -> infinity):
  keep the current expert until its loss since it was chosen, observed with a one-round lag, reaches
  ``threshold``; then move to a uniformly random minimiser of ``max(sum_{i<t} l_i, floor)``.
* :class:`MultiplicativeWeights`: Hedge (Littlestone & Warmuth 1994; Freund & Schapire 1997): at
  every ``resample_every``-th round draw ``x_t`` with ``P(x) ∝ exp(-eta sum_{i<t} l_i(x))``, keep it
  otherwise (``r = resample_every``: rounds 1, 2, 3, ... for ``r = 1``; rounds 2, 2 + r, 2 + 2r, ...
  otherwise, with a uniform expert before). ``resample_every=2`` is the noiseless limit of AFKT23
  Algorithm 5 with ``alpha = 0``.
"""

from __future__ import annotations

import numpy as np

from dpaudit._validation import check_int, check_nonnegative, check_positive
from dpaudit.learners.experts import (ExpertsLearner, cumulative_losses, uniform_argmin,
                                       uniform_argmin_rows)
from dpaudit.mechanisms.exponential import ExponentialMechanism

__all__ = ["FollowTheLeader", "LazyFollowTheLeader", "MultiplicativeWeights"]


class FollowTheLeader(ExpertsLearner):
    """Follow the leader over ``d`` experts (non-private)."""

    name = "FTL"

    def __init__(self, *, sticky: bool = True, clip: bool = True) -> None:
        super().__init__(clip=clip)
        self.sticky = bool(sticky)

    def _run(self, losses: np.ndarray, n_runs: int, rng: np.random.Generator) -> np.ndarray:
        T, d = losses.shape
        C = cumulative_losses(losses)
        out = np.empty((n_runs, T), dtype=np.int64)
        x = uniform_argmin(C[0], n_runs, rng)
        for t in range(1, T + 1):
            s = C[t - 1]
            lead = s <= s.min() + 1e-12
            move = ~lead[x] if self.sticky else np.ones(n_runs, dtype=bool)
            if move.any():
                x[move] = uniform_argmin(s, int(move.sum()), rng)
            out[:, t - 1] = x
        return out


class LazyFollowTheLeader(ExpertsLearner):
    """Noiseless limit of AFKT23 Alg 1: switch when the lagged loss since the last switch >= threshold.

    Round structure exactly as Alg 1 (see :mod:`dpaudit.learners.sparse_vector_experts`): the query
    of round ``t`` is ``sum_{i=t_p}^{t-1} l_i(x_t)``; a query at or above ``threshold`` moves the
    learner at round ``t + 1`` to a uniform minimiser of ``max(sum_{i<=t} l_i, floor)``; at most
    ``max_switches`` moves.
    """

    name = "lazy-FTL"

    def __init__(self, threshold: float, *, floor: float = 0.0, max_switches: int | None = None,
                 clip: bool = True) -> None:
        super().__init__(clip=clip)
        self.threshold = float(threshold)
        self.floor = check_nonnegative(floor, "floor")
        self.max_switches = None if max_switches is None else check_int(max_switches, "max_switches", minimum=0)

    def _run(self, losses: np.ndarray, n_runs: int, rng: np.random.Generator) -> np.ndarray:
        T, d = losses.shape
        C = cumulative_losses(losses)
        cap = np.inf if self.max_switches is None else self.max_switches
        out = np.empty((n_runs, T), dtype=np.int64)
        x = rng.integers(d, size=n_runs)
        start = np.zeros(n_runs, dtype=np.int64)
        k = np.zeros(n_runs, dtype=np.int64)
        fired = np.zeros(n_runs, dtype=bool)
        for t in range(1, T + 1):
            sw = fired & (k < cap)
            if sw.any():
                scores = np.broadcast_to(np.maximum(C[t - 1], self.floor), (int(sw.sum()), d))
                x[sw] = uniform_argmin_rows(scores, rng)
                k[sw] += 1
                start[sw] = t
            out[:, t - 1] = x
            live = (k < cap) & (t > start)
            a = np.maximum(start, 1)
            q = C[t - 1, x] - C[a - 1, x]
            fired = live & (q >= self.threshold)
        return out


class MultiplicativeWeights(ExpertsLearner):
    """Hedge with learning rate ``eta``: ``P(x_t = x) ∝ exp(-eta sum_{i<t} l_i(x))``."""

    name = "MW"

    def __init__(self, eta: float, *, resample_every: int = 1, clip: bool = True) -> None:
        super().__init__(clip=clip)
        self.eta = check_positive(eta, "eta")
        self.resample_every = check_int(resample_every, "resample_every", minimum=1)
        self._em = ExponentialMechanism(1.0, self.eta, form="full")

    def probabilities(self, losses: np.ndarray) -> np.ndarray:
        """Exact Hedge distributions of every round, shape ``(T, d)``."""
        C = cumulative_losses(np.asarray(losses, dtype=float))
        return self._em.probabilities(C[:-1])

    def _run(self, losses: np.ndarray, n_runs: int, rng: np.random.Generator) -> np.ndarray:
        T, d = losses.shape
        C = cumulative_losses(losses)
        out = np.empty((n_runs, T), dtype=np.int64)
        x = rng.integers(d, size=n_runs)
        for t in range(1, T + 1):
            r = self.resample_every
            if r == 1 or (t >= 2 and (t - 2) % r == 0):
                x = self._em.sample(C[t - 1], n_runs, rng)
            out[:, t - 1] = x
        return out
