"""Online prediction from experts (OPE): the shared interface, loss validation and bookkeeping.

Setting of Asi, Feldman, Koren & Talwar, "Near-Optimal Algorithms for Private Online Optimization in
the Realizable Regime", ICML 2023 (``afkt23.txt``), Sec. 2: ``d`` experts, an oblivious adversary
fixes loss vectors ``l_1, ..., l_T in [0, 1]^d``; at round ``t`` the learner plays an expert index
``x_t`` and pays ``l_t(x_t)``. The whole sequence ``x_1..x_T`` is released (Definition 2.1).

Conventions used by every experts learner in :mod:`dpaudit.learners`:

* losses are an array of shape ``(T, d)``; row ``t - 1`` is round ``t``'s loss vector;
* ``run(losses, n_runs, rng)`` returns the released index sequences of ``n_runs`` independent runs,
  int64 of shape ``(n_runs, T)`` with 0-based expert indices (the paper's ``[d]`` shifted by one);
* losses outside ``[0, 1]`` are *clipped* to ``[0, 1]`` (the paper's loss class; the privacy proofs
  need 1-sensitive queries) or, with ``clip=False``, rejected with a ``ValueError``. The clipping is
  explicit and counted (:attr:`ExpertsLearner.clipped_entries`);
* private learners record what their privacy argument budgets and what a run actually used in a
  :class:`SwitchRecord` (:attr:`ExpertsLearner.record`).
"""

from __future__ import annotations

import abc
import math
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from dpaudit._validation import check_finite_array, check_generator, check_int

__all__ = ["LogBase", "log_of", "check_expert_losses", "ExpertsLearner", "SwitchRecord",
           "uniform_argmin", "uniform_argmin_rows", "cumulative_losses"]

LogBase = Literal["natural", "binary"]


def log_of(x: float, base: LogBase) -> float:
    """``ln x`` (``base="natural"``) or ``log2 x`` (``base="binary"``).

    AFKT23 never states a log base; every learner makes the base a documented parameter.
    """
    if base == "natural":
        return math.log(x)
    if base == "binary":
        return math.log2(x)
    raise ValueError(f"log base must be 'natural' or 'binary', got {base!r}")


def check_expert_losses(losses: object, *, clip: bool = True, d: int | None = None) -> tuple[np.ndarray, int]:
    """Validate an experts loss array ``(T, d)``; returns ``(losses in [0, 1], entries clipped)``.

    Parameters
    ----------
    losses : array_like, shape (T, d), T >= 1, d >= 1
        Finite losses.
    clip : bool
        True: clip entries to ``[0, 1]`` (counted); False: entries outside ``[0, 1]`` raise.
    d : int, optional
        Required number of experts.
    """
    arr = check_finite_array(losses, "losses", ndim=2)
    if arr.shape[0] < 1 or arr.shape[1] < 1:
        raise ValueError(f"losses must have shape (T, d) with T >= 1 and d >= 1, got {arr.shape}")
    if d is not None and arr.shape[1] != d:
        raise ValueError(f"losses must have d={d} columns (one per expert), got {arr.shape[1]}")
    outside = int(np.count_nonzero((arr < 0.0) | (arr > 1.0)))
    if outside and not clip:
        raise ValueError(f"losses must lie in [0, 1] (the paper's loss class); {outside} entries do not")
    return np.clip(arr, 0.0, 1.0), outside


def cumulative_losses(losses: np.ndarray) -> np.ndarray:
    """``C`` of shape ``(T + 1, d)`` with ``C[t] = sum_{i=1}^t l_i`` (``C[0] = 0``)."""
    out = np.zeros((losses.shape[0] + 1, losses.shape[1]))
    np.cumsum(losses, axis=0, out=out[1:])
    return out


def uniform_argmin(scores: np.ndarray, n: int, rng: np.random.Generator, tol: float = 1e-12) -> np.ndarray:
    """``n`` independent uniform draws among the minimisers of ``scores`` (shape ``(d,)``).

    The ``eta -> infinity`` limit of the exponential mechanism ``P(x) ∝ exp(-c eta s(x))``; used by
    the noiseless modes and by follow-the-leader.
    """
    s = np.asarray(scores, dtype=float)
    leaders = np.flatnonzero(s <= s.min() + tol)
    return leaders[rng.integers(leaders.size, size=n)]


def uniform_argmin_rows(scores: np.ndarray, rng: np.random.Generator, tol: float = 1e-12) -> np.ndarray:
    """One uniform draw among the minimisers of each row of ``scores`` ``(m, d)``; int64 ``(m,)``."""
    s = np.asarray(scores, dtype=float)
    lead = s <= s.min(axis=1, keepdims=True) + tol
    return np.argmax(np.where(lead, rng.random(s.shape), -1.0), axis=1)


@dataclass
class SwitchRecord:
    """Switch / restart bookkeeping of one ``run`` (all arrays over runs, shape ``(n_runs,)``).

    ``selections`` counts the exponential-mechanism draws (the paper's "switches", even when the
    draw returns the current expert); ``selection_budget`` is what the privacy proof budgets for
    them (Alg 1's ``K`` as the loop condition ``k < K`` realises it). ``switch_rounds`` marks, per
    run and round, the rounds whose expert was drawn by the exponential mechanism. ``restarts``,
    ``restart_budget`` and ``laplace_draws`` are used by Algorithm 2 (restarts of Algorithm 1);
    ``phases`` by Algorithm 4.
    """

    selections: np.ndarray
    selection_budget: float
    switch_rounds: np.ndarray
    restarts: np.ndarray | None = None
    restart_budget: float | None = None
    laplace_draws: np.ndarray | None = None
    phases: np.ndarray | None = None
    selection_cap: int | None = None
    extra: dict = field(default_factory=dict)

    @property
    def budget_exhausted(self) -> np.ndarray:
        """Runs that used every selection the loop condition allows (``selection_cap``)."""
        cap = math.ceil(self.selection_budget - 1e-12) if self.selection_cap is None else self.selection_cap
        return self.selections >= cap

    @property
    def over_proof_budget(self) -> np.ndarray:
        """Runs that made more draws than the privacy proof budgets (``selections > budget``)."""
        return self.selections > self.selection_budget + 1e-12

    @property
    def restarts_over_budget(self) -> np.ndarray | None:
        """Runs whose number of Algorithm-1 applications exceeded the privacy proof's budget."""
        if self.restarts is None or self.restart_budget is None:
            return None
        return (self.restarts + 1) > self.restart_budget

    def summary(self) -> dict:
        """JSON-ready summary: means, maxima and over-budget fractions."""
        out = {"selection_budget": float(self.selection_budget),
               "selections_mean": float(np.mean(self.selections)),
               "selections_max": int(np.max(self.selections)),
               "budget_exhausted_fraction": float(np.mean(self.budget_exhausted)),
               "over_proof_budget_fraction": float(np.mean(self.over_proof_budget))}
        if self.selection_cap is not None:
            out["selection_cap"] = int(self.selection_cap)
        if self.restarts is not None:
            out.update({"applications_max": int(np.max(self.restarts) + 1),
                        "applications_mean": float(np.mean(self.restarts) + 1),
                        "application_budget": float(self.restart_budget),
                        "over_budget_fraction": float(np.mean(self.restarts_over_budget))})
        if self.phases is not None:
            out.update({"phases_max": int(np.max(self.phases)), "phases_mean": float(np.mean(self.phases))})
        out.update(self.extra)
        return out


class ExpertsLearner(abc.ABC):
    """Batch-vectorised experts learner: ``run(losses (T, d), n_runs, rng) -> indices (n_runs, T)``."""

    name: str = "experts"
    private: bool = False

    def __init__(self, *, clip: bool = True) -> None:
        if not isinstance(clip, (bool, np.bool_)):
            raise TypeError(f"clip must be a bool, got {type(clip).__name__}")
        self.clip = bool(clip)
        self.record: SwitchRecord | None = None
        self.clipped_entries = 0

    def run(self, losses: object, n_runs: int, rng: np.random.Generator) -> np.ndarray:
        """Released expert indices of ``n_runs`` independent runs, int64 ``(n_runs, T)``."""
        n_runs = check_int(n_runs, "n_runs", minimum=1)
        rng = check_generator(rng)
        arr, clipped = check_expert_losses(losses, clip=self.clip)
        self.clipped_entries = clipped
        return self._run(arr, n_runs, rng)

    def __call__(self, losses: object, n: int, rng: np.random.Generator) -> np.ndarray:
        """The mechanism contract of :func:`dpaudit.blackbox.empirical_audit.audit`: ``(data, n, rng)``."""
        return self.run(losses, n, rng)

    @abc.abstractmethod
    def _run(self, losses: np.ndarray, n_runs: int, rng: np.random.Generator) -> np.ndarray:
        """``losses`` already validated and clipped."""
