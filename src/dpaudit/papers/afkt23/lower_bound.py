"""AFKT23 Theorem 5 as a utility-based privacy alarm.

Theorem 5 (``afkt23.txt``, Sec. 5): for ``eps <= 1/10`` and ``delta <= eps/d``, every
``(eps, delta)``-DP experts algorithm has expected regret ``Omega(log(d)/eps)`` on the mixture of
the adversaries ``S^j`` of its proof. The alarm runs the learner on every ``S^j``, bounds its
expected regret from above with confidence ``1 - alpha`` (Hoeffding), and rings when that bound is
below the proof's ``log(d)/(32 eps)``: the learner then cannot be ``(eps, delta)``-DP. Evidence
from utility, not from a neighbouring pair, and only where the theorem applies
(:func:`theorem5_applies`). The proof's steps, the reading choices (natural log, ``k`` rounded up)
and the printed step that fails for ``32 <= d <= 74``: docs/paper-readings.md#afkt23-theorem-5-alarm.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from dpaudit._validation import (check_delta, check_epsilon, check_generator, check_int,
                                 check_probability)

__all__ = ["theorem5_rounds", "theorem5_streams", "theorem5_bound", "theorem5_applies",
           "LowerBoundAlarm", "lower_bound_alarm"]


def theorem5_rounds(d: int, epsilon: float) -> int:
    """``k = ceil(ln(d) / (2 eps))``: informative rounds of AFKT23 Theorem 5's adversary.

    Parameters
    ----------
    d
        Number of experts (>= 2).
    epsilon
        The privacy parameter (> 0).

    Returns
    -------
    int
        ``k``.

    Raises
    ------
    ValueError
        If ``d < 2`` or ``epsilon`` is not a positive finite number.
    """
    d = check_int(d, "d", minimum=2)
    epsilon = check_epsilon(epsilon)
    return int(math.ceil(math.log(d) / (2.0 * epsilon)))


def theorem5_streams(T: int, d: int, epsilon: float) -> np.ndarray:
    """All ``d`` streams ``S^j`` of AFKT23 Theorem 5's adversary.

    ``S^j`` gives every expert but ``j`` the loss 1 in the last ``k`` rounds, and 0 elsewhere.

    Parameters
    ----------
    T
        Horizon (>= ``k``).
    d
        Number of experts (>= 2).
    epsilon
        The privacy parameter (> 0).

    Returns
    -------
    numpy.ndarray
        Shape ``(d, T, d)``: stream ``j``, round, expert.

    Raises
    ------
    ValueError
        If ``T < k`` or a parameter is out of its range.
    """
    T = check_int(T, "T", minimum=1)
    k = theorem5_rounds(d, epsilon)
    if k > T:
        raise ValueError(f"T must be at least k = ceil(ln d / (2 eps)) = {k}, got T={T}")
    S = np.zeros((d, T, d))
    for j in range(d):
        S[j, T - k:, :] = 1.0
        S[j, T - k:, j] = 0.0
    return S


def theorem5_bound(d: int, epsilon: float) -> float:
    """The regret below which AFKT23 Theorem 5's proof reaches a contradiction.

    Parameters
    ----------
    d
        Number of experts of the adversary's mixture (>= 2; the proof needs ``d >= 32``).
    epsilon
        The privacy parameter the learner is claimed to meet (> 0).

    Returns
    -------
    float
        ``ln(d) / (32 eps)``.

    Raises
    ------
    ValueError
        If ``d < 2`` or ``epsilon`` is not a positive finite number.
    """
    return math.log(check_int(d, "d", minimum=2)) / (32.0 * check_epsilon(epsilon))


def theorem5_applies(d: int, epsilon: float, delta: float) -> tuple[bool, str]:
    """Whether AFKT23 Theorem 5's hypotheses and its proof's final inequality hold.

    The hypotheses are ``eps <= 1/10``, ``delta <= eps/d`` and ``d >= 32``; the final inequality is
    checked with the rounded ``k``.

    Parameters
    ----------
    d
        Number of experts (>= 2).
    epsilon
        The privacy parameter (> 0).
    delta
        The privacy parameter delta, in [0, 1).

    Returns
    -------
    tuple
        ``(ok, reason)``: whether the theorem applies, and the first check that fails (or
        ``"Theorem 5 applies"``).

    Raises
    ------
    ValueError
        If a parameter is out of its range.
    """
    d = check_int(d, "d", minimum=2)
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    if epsilon > 0.1:
        return False, f"eps = {epsilon} > 1/10"
    if delta > epsilon / d:
        return False, f"delta = {delta} > eps/d = {epsilon / d}"
    if d < 32:
        return False, f"d = {d} < 32"
    k = theorem5_rounds(d, epsilon)
    # P(A(S^j) in B_j') >= e^{-k eps}/2 - k e^{-eps} delta; contradiction needs (d/2-1) * that > 1/2
    per = math.exp(-k * epsilon) / 2.0 - k * math.exp(-epsilon) * delta
    if (d / 2.0 - 1.0) * per <= 0.5:
        return False, "the proof's contradiction fails with the rounded k"
    return True, "Theorem 5 applies"


@dataclass(frozen=True)
class LowerBoundAlarm:
    """Outcome of :func:`lower_bound_alarm` (all numbers JSON-ready through :meth:`to_dict`)."""

    learner: str
    d: int
    T: int
    epsilon: float
    delta: float
    k: int
    bound: float
    mean_regret: float
    regret_upper: float
    runs: int
    alpha: float
    applies: bool
    reason: str

    @property
    def alarm(self) -> bool:
        """True iff the theorem applies and the regret's upper confidence bound is below the bound."""
        return self.applies and self.regret_upper < self.bound

    def statement(self) -> str:
        """One sentence: not applicable, no alarm, or why the learner cannot be DP."""
        if not self.applies:
            return f"not applicable: {self.reason}"
        head = (f"{self.learner}'s mean regret on Theorem 5's adversary (d = {self.d}, k = {self.k}, "
                f"{self.runs} runs) is {self.mean_regret:.4g}")
        if self.alarm:
            return (f"{head}; with confidence {1 - self.alpha:.3g} its expected regret is at most "
                    f"{self.regret_upper:.4g} < {self.bound:.4g} = ln(d)/(32 eps), so it cannot be "
                    f"({self.epsilon:g}, {self.delta:g})-DP")
        return (f"{head} (upper confidence bound {self.regret_upper:.4g}), not below the bound "
                f"ln(d)/(32 eps) = {self.bound:.4g} for ({self.epsilon:g}, {self.delta:g})-DP: no alarm")

    def to_dict(self) -> dict:
        """The outcome as a JSON-ready dict, with :attr:`alarm` and :meth:`statement`."""
        return {"learner": self.learner, "d": self.d, "T": self.T, "epsilon": self.epsilon,
                "delta": self.delta, "k": self.k, "bound": self.bound, "mean_regret": self.mean_regret,
                "regret_upper": self.regret_upper, "runs": self.runs, "alpha": self.alpha,
                "applies": self.applies, "alarm": self.alarm, "statement": self.statement()}


def lower_bound_alarm(learner: Callable[[np.ndarray, int, np.random.Generator], np.ndarray], *,
                      d: int, T: int, epsilon: float, delta: float, n_per_expert: int,
                      rng: np.random.Generator, alpha: float = 0.05,
                      name: str = "learner") -> LowerBoundAlarm:
    """Run ``learner`` on every stream of AFKT23 Theorem 5's adversary; alarm on a low regret.

    The regret of a run on ``S^j`` is its loss (the best expert ``j`` has loss 0), in ``[0, k]``.
    Hoeffding's one-sided bound on the mean of ``d * n_per_expert`` independent runs (the mixture
    puts equal weight on every ``j`` and every ``j`` gets the same number of runs):
    ``mean + k sqrt(ln(1/alpha) / (2 N))``.

    Parameters
    ----------
    learner
        ``learner(losses, n, rng) -> indices`` of shape ``(n, T)``: ``n`` independent runs.
    d, T
        Number of experts (>= 2) and horizon (>= ``k``).
    epsilon, delta
        The claimed privacy parameters.
    n_per_expert
        Runs per stream (>= 1).
    rng
        Randomness of the runs.
    alpha
        One-sided error probability of the regret's upper confidence bound, in (0, 1).
    name
        The learner's name in the statement.

    Returns
    -------
    LowerBoundAlarm
        The theorem's applicability, the regret's mean and upper bound, and whether it alarms.

    Raises
    ------
    ValueError
        If a parameter is out of its range or ``learner`` returns indices of the wrong shape.
    TypeError
        If ``rng`` is not a ``numpy.random.Generator``.
    """
    rng = check_generator(rng)
    n = check_int(n_per_expert, "n_per_expert", minimum=1)
    alpha = check_probability(alpha, "alpha")
    applies, reason = theorem5_applies(d, epsilon, delta)
    S = theorem5_streams(T, d, epsilon)
    k = theorem5_rounds(d, epsilon)
    total = 0.0
    for j in range(d):
        idx = np.asarray(learner(S[j], n, rng))
        if idx.shape != (n, T):
            raise ValueError(f"learner must return indices of shape ({n}, {T}), got {idx.shape}")
        total += float(S[j][np.arange(T)[None, :], idx].sum())
    N = d * n
    mean = total / N
    upper = mean + k * math.sqrt(math.log(1.0 / alpha) / (2.0 * N))
    return LowerBoundAlarm(learner=name, d=d, T=T, epsilon=epsilon, delta=delta, k=k,
                           bound=theorem5_bound(d, epsilon), mean_regret=mean, regret_upper=upper,
                           runs=N, alpha=alpha, applies=applies, reason=reason)
