"""Matrix-factorization noise when a record takes part in several steps: the strategy's sensitivity
under min-separation and cyclic participation, computed exactly or refused.

The matrix mechanism releases ``B (C X + Z)`` (Denisov et al., NeurIPS 2022); a record moves the
rows of its participation pattern ``P`` by at most its clip norm ``c``, so the release is one
Gaussian mechanism with ``||C G||_F^2 = sum_{s, t in P} (C^T C)[s, t] <g_s, g_t>``. When every
cross term one record can reach is non-negative the worst case is ``c max_P ||C u_P||_2``
(Choquette-Choo et al., ICML 2023, Sec. 2); a negative one is refused (``ValueError``), not
guessed. :class:`MinSeparation` uses the dynamic program over column norms when the condition for
it is checked to hold (Choquette-Choo et al., NeurIPS 2023, Sec. 4, Alg. 3) and an exact program or
enumeration within :data:`EXACT_BUDGET` otherwise; :class:`Cyclic` enumerates its ``l`` patterns
(with more bands than the cycle length, an accountant counting ``ceil(n / l)`` participations
understates epsilon). :class:`MatrixFactorizationNoise` doubles the shift under replace-one, like
every schedule of :mod:`dpaudit.formal.noise_schedules`.

The derivation, both schemas and the references:
docs/formal-notes.md#matrix-factorization-participation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Union

import numpy as np

from dpaudit._validation import check_finite_array, check_int, check_positive
from dpaudit.formal.noise_schedules import GaussianNoise, Relation, distance_factor

__all__ = ["MinSeparation", "Cyclic", "Participation", "ParticipationSensitivity",
           "participation_sensitivity", "MatrixFactorizationNoise", "EXACT_BUDGET"]

#: Largest number of dynamic-program updates (window states x steps) or of enumerated patterns
#: (patterns x participations^2) an exact sensitivity may take; beyond it the sensitivity is
#: refused rather than approximated.
EXACT_BUDGET = 4_000_000

#: Off-diagonal entries of ``C^T C`` within this relative distance of zero (of its largest diagonal
#: entry) are float rounding of orthogonal columns: they are read as ``|entry|`` (an upper bound, at
#: most this much above the exact value), never as a negative interaction.
_ROUNDING = 1e-12


@dataclass(frozen=True)
class MinSeparation:
    """A record takes part in at most ``max_participations`` steps, any two of them at least
    ``min_separation`` steps apart (Choquette-Choo et al. 2023a's ``(k, b)``-participation;
    ``min_separation = 1`` allows adjacent steps; ``max_participations = None``: as many as fit,
    ``ceil(n / min_separation)``)."""

    min_separation: int
    max_participations: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "min_separation",
                           check_int(self.min_separation, "min_separation", minimum=1))
        if self.max_participations is not None:
            object.__setattr__(self, "max_participations",
                               check_int(self.max_participations, "max_participations",
                                         minimum=1))

    def describe(self) -> str:
        k = "any number of" if self.max_participations is None else \
            f"at most {self.max_participations}"
        return f"{k} participations at least {self.min_separation} step(s) apart"


@dataclass(frozen=True)
class Cyclic:
    """A record takes part in every step ``t`` with ``t mod cycle_length = r`` for one offset
    ``r`` (a fixed partition cycled through: jax-privacy's cyclic batches at sampling probability
    1, a fixed-order multi-epoch pass with ``cycle_length`` steps per epoch)."""

    cycle_length: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "cycle_length",
                           check_int(self.cycle_length, "cycle_length", minimum=1))

    def describe(self) -> str:
        return f"cyclic participation every {self.cycle_length} step(s)"


Participation = Union[MinSeparation, Cyclic]


@dataclass(frozen=True)
class ParticipationSensitivity:
    """The strategy's sensitivity ``max_P ||C u_P||_2`` under a participation schema, the pattern
    attaining it (0-based steps) and how it was computed (``"closed form"``: no cross terms, the
    band condition holds; ``"exact dynamic program"`` / ``"exact enumeration"``: it does not)."""

    value: float
    pattern: tuple[int, ...]
    method: str
    condition_holds: bool


def _gram(strategy: Any) -> np.ndarray:
    c = check_finite_array(strategy, "strategy", ndim=2)
    if c.size == 0:
        raise ValueError("strategy must be a non-empty 2-D matrix (one column per step)")
    g = c.T @ c
    if not np.any(np.diag(g) > 0):
        raise ValueError("strategy must have a non-zero column")
    return g


def _interactions(g: np.ndarray, pairs: np.ndarray, what: str) -> np.ndarray:
    """``|C^T C|`` after checking that no pair one record can enter together has a negative entry
    beyond float rounding; ``pairs`` masks those pairs (diagonal excluded)."""
    scale = float(np.max(np.diag(g)))
    negative = pairs & (g < -_ROUNDING * scale)
    if np.any(negative):
        s, t = (int(i) for i in np.argwhere(negative)[0])
        raise ValueError(
            f"C^T C has the negative entry {g[s, t]:.6g} at steps {s} and {t}, which one record "
            f"can both take part in ({what}): the sensitivity then depends on the directions of "
            "the record's gradients and is not max ||C u||_2 over patterns; dpaudit refuses it "
            "(the strategy must have a non-negative C^T C on every pair of steps a record can "
            "share)")
    return np.abs(g)


def _interacting(g: np.ndarray, pairs: np.ndarray) -> bool:
    """Whether any pair of steps one record can share has a non-zero cross term."""
    return bool(np.any(pairs & (g != 0.0)))


# ----------------------------------------------------------------------------------------------
# Min-separation
# ----------------------------------------------------------------------------------------------

def _window_states(width: int, sep: int) -> int:
    """Subsets of ``width`` consecutive steps with gaps >= ``sep`` (the empty one included)."""
    ways = [1] * (width + 1)  # ways[i]: subsets of the first i steps
    for i in range(1, width + 1):
        ways[i] = ways[i - 1] + (ways[i - sep] if i >= sep else 1)
    return ways[width]


def _pattern_count(n: int, sep: int, k: int) -> int:
    """Patterns of at most ``k`` steps among ``n`` with gaps >= ``sep`` (the empty one included):
    ``sum_j C(n - (sep - 1)(j - 1), j)``."""
    total = 1
    for j in range(1, k + 1):
        free = n - (sep - 1) * (j - 1)
        if free < j:
            break
        total += math.comb(free, j)
    return total


def _diagonal_dp(weights: np.ndarray, sep: int, k: int) -> tuple[float, tuple[int, ...]]:
    """Max of ``sum_{t in P} weights[t]`` over patterns of at most ``k`` steps ``sep`` apart
    (weights >= 0): ``best[j][i]`` is the best over steps ``>= i`` with at most ``j`` of them."""
    n = len(weights)
    best = np.zeros((k + 1, n + sep))
    take = np.zeros((k + 1, n), dtype=bool)
    for j in range(1, k + 1):
        for i in range(n - 1, -1, -1):
            with_i = weights[i] + best[j - 1][i + sep]
            if with_i >= best[j][i + 1]:
                best[j][i], take[j][i] = with_i, True
            else:
                best[j][i] = best[j][i + 1]
    pattern, i, j = [], 0, k
    while j > 0 and i < n:
        if take[j][i]:
            pattern.append(i)
            i, j = i + sep, j - 1
        else:
            i += 1
    return float(best[k][0]), tuple(pattern)


def _window_dp(a: np.ndarray, sep: int, k: int, reach: int,
               count_binds: bool) -> tuple[float, tuple[int, ...]]:
    """Exact max of ``u^T A u`` over min-separation patterns, for ``A >= 0`` whose cross terms
    between co-participable steps vanish beyond lag ``reach``. The state at step ``t`` is the set
    of chosen steps within the last ``max(reach, sep - 1)`` steps (and the count, if it binds);
    choosing ``t`` gains ``A[t, t] + 2 sum_{s in state} A[s, t]``, which only depends on it."""
    n = a.shape[0]
    width = max(reach, sep - 1)
    # state: (chosen steps within the window, count or 0) -> (value, full pattern)
    states: dict[tuple[tuple[int, ...], int], tuple[float, tuple[int, ...]]] = {((), 0): (0.0, ())}
    for t in range(n):
        nxt: dict[tuple[tuple[int, ...], int], tuple[float, tuple[int, ...]]] = {}

        def offer(key: tuple[tuple[int, ...], int], val: float, pat: tuple[int, ...]) -> None:
            old = nxt.get(key)
            if old is None or val > old[0]:
                nxt[key] = (val, pat)

        for (window, count), (val, pat) in states.items():
            kept = tuple(s for s in window if t - s <= width - 1) if width > 0 else ()
            offer((kept, count), val, pat)
            if (not window or t - window[-1] >= sep) and (not count_binds or count < k):
                gain = a[t, t] + 2.0 * math.fsum(a[s, t] for s in window if t - s <= reach)
                new_window = (kept + (t,)) if width > 0 else ()
                offer((new_window, count + 1 if count_binds else 0), val + gain, pat + (t,))
        states = nxt
    value, pattern = max(states.values(), key=lambda vp: vp[0])
    return value, pattern


def _enumerate(a: np.ndarray, sep: int, k: int) -> tuple[float, tuple[int, ...]]:
    """Exact max of ``u^T A u`` by listing every maximal-length-or-shorter pattern."""
    n = a.shape[0]
    best: tuple[float, tuple[int, ...]] = (0.0, ())

    def walk(start: int, chosen: list[int]) -> None:
        nonlocal best
        if chosen:
            idx = np.asarray(chosen)
            val = float(a[np.ix_(idx, idx)].sum())
            if val > best[0]:
                best = (val, tuple(chosen))
        if len(chosen) == k:
            return
        for t in range(start, n):
            chosen.append(t)
            walk(t + sep, chosen)
            chosen.pop()

    walk(0, [])
    return best


def _min_separation(g: np.ndarray, p: MinSeparation) -> ParticipationSensitivity:
    n = g.shape[0]
    sep = p.min_separation
    fit = -(-n // sep)  # ceil(n / sep): most participations that fit
    k = fit if p.max_participations is None else min(p.max_participations, fit)
    lags = np.abs(np.subtract.outer(np.arange(n), np.arange(n)))
    pairs = (lags >= sep) if k >= 2 else np.zeros_like(lags, dtype=bool)
    a = _interactions(g, pairs, f"at least min_separation={sep} apart")
    if not _interacting(g, pairs):
        value, pattern = _diagonal_dp(np.diag(a).copy(), sep, k)
        return ParticipationSensitivity(math.sqrt(value), pattern, "closed form", True)
    reach = int(np.max(lags[pairs & (g != 0.0)]))
    count_binds = k < fit
    width = max(reach, sep - 1)
    dp_cost = _window_states(width, sep) * (k + 1 if count_binds else 1) * n
    enum_cost = _pattern_count(n, sep, k) * k * k
    if min(dp_cost, enum_cost) > EXACT_BUDGET:
        raise ValueError(
            f"the strategy's columns interact at lags up to {reach} >= min_separation={sep} (the "
            "band condition bands <= min_separation fails), so the sensitivity is not the "
            "closed form over column norms; its exact maximum over participation patterns would "
            f"take {min(dp_cost, enum_cost):.3g} steps (budget {EXACT_BUDGET:.3g}): refused. Use "
            "a strategy with at most min_separation bands, or a smaller one")
    if dp_cost <= enum_cost:
        value, pattern = _window_dp(a, sep, k, reach, count_binds)
        method = "exact dynamic program"
    else:
        value, pattern = _enumerate(a, sep, k)
        method = "exact enumeration"
    return ParticipationSensitivity(math.sqrt(value), pattern, method, False)


# ----------------------------------------------------------------------------------------------
# Cyclic
# ----------------------------------------------------------------------------------------------

def _cyclic(g: np.ndarray, p: Cyclic) -> ParticipationSensitivity:
    n = g.shape[0]
    steps = np.arange(n)
    same = (np.subtract.outer(steps % p.cycle_length, steps % p.cycle_length) == 0)
    pairs = same & ~np.eye(n, dtype=bool)
    a = _interactions(g, pairs, f"both in one residue class mod cycle_length={p.cycle_length}")
    holds = not _interacting(g, pairs)
    best: tuple[float, tuple[int, ...]] = (-1.0, ())
    for r in range(min(p.cycle_length, n)):
        idx = steps[r::p.cycle_length]
        val = float(np.diag(a)[idx].sum()) if holds else float(a[np.ix_(idx, idx)].sum())
        if val > best[0]:
            best = (val, tuple(int(i) for i in idx))
    method = "closed form" if holds else "exact enumeration"
    return ParticipationSensitivity(math.sqrt(best[0]), best[1], method, holds)


def participation_sensitivity(strategy: Any, participation: Participation
                              ) -> ParticipationSensitivity:
    """The sensitivity ``max_P ||C u_P||_2`` of strategy ``C`` (one column per step) under a
    participation schema, per unit of a record's contribution.

    Parameters
    ----------
    strategy : array_like
        The finite strategy matrix ``C``, shape ``(m, n)`` for ``n`` steps (banded or Toeplitz
        lower-triangular in practice; any matrix is accepted).
    participation : MinSeparation or Cyclic
        Which sets of steps one record may take part in.

    Returns
    -------
    ParticipationSensitivity
        The value, the worst pattern, the method and whether the band condition held.

    Raises
    ------
    ValueError
        If ``C^T C`` is negative on a pair of steps one record can share, or if the band
        condition fails and the exact maximum exceeds :data:`EXACT_BUDGET`.
    """
    g = _gram(strategy)
    if isinstance(participation, MinSeparation):
        return _min_separation(g, participation)
    if isinstance(participation, Cyclic):
        return _cyclic(g, participation)
    raise TypeError(f"participation must be a MinSeparation or a Cyclic, got "
                    f"{type(participation).__name__}")


@dataclass(frozen=True, eq=False)
class MatrixFactorizationNoise:
    """The matrix mechanism ``B (C X + Z)``, ``Z ~ N(0, sigma^2)``, with a record taking part in
    the steps of a participation schema: one Gaussian mechanism whose shift is
    ``d * sensitivity * max_P ||C u_P||_2`` (``d`` = 1 under add/remove, 2 under replace-one;
    :func:`participation_sensitivity`).

    Parameters
    ----------
    strategy : array_like
        The strategy matrix ``C`` (one column per step).
    sigma : float
        Standard deviation of the noise ``Z`` in (0, inf) (``noise_multiplier * clip``).
    sensitivity : float
        A record's largest contribution to one step (the clip norm), in (0, inf).
    participation : MinSeparation or Cyclic
        The steps one record may take part in.
    """

    strategy: Any
    sigma: float
    sensitivity: float
    participation: Participation
    strategy_sensitivity: ParticipationSensitivity = field(init=False, repr=False)

    def __post_init__(self) -> None:
        c = check_finite_array(self.strategy, "strategy", ndim=2).copy()
        c.setflags(write=False)
        object.__setattr__(self, "strategy", c)
        object.__setattr__(self, "sigma", check_positive(self.sigma, "sigma"))
        object.__setattr__(self, "sensitivity", check_positive(self.sensitivity, "sensitivity"))
        object.__setattr__(self, "strategy_sensitivity",
                           participation_sensitivity(c, self.participation))

    def as_gaussian(self) -> GaussianNoise:
        """The release as a :class:`~dpaudit.formal.noise_schedules.GaussianNoise` (one release,
        a record contributing ``sensitivity * max_P ||C u_P||``), e.g. for
        :func:`~dpaudit.formal.noise_schedules.compose`."""
        return GaussianNoise(self.sigma, self.sensitivity * self.strategy_sensitivity.value, 1)

    def mu(self, *, neighbours: Relation) -> float:
        """The Gaussian-DP parameter of the release under ``neighbours``."""
        return self.as_gaussian().mu(neighbours=neighbours)

    def epsilon(self, delta: float, *, neighbours: Relation) -> float:
        """epsilon(delta) of the release (exact Gaussian closed form, Balle & Wang 2018, Thm 8;
        ``inf`` at ``delta = 0``)."""
        return self.as_gaussian().epsilon(delta, neighbours=neighbours)

    def describe(self, *, neighbours: Relation) -> str:
        """One sentence: the schema, the sensitivity, how it was computed and the relation."""
        s = self.strategy_sensitivity
        cond = ("the band condition holds (no cross terms)" if s.condition_holds else
                "the band condition fails (cross terms counted)")
        return (f"matrix factorization, sigma = {self.sigma:.6g}, "
                f"{self.participation.describe()} over {self.strategy.shape[1]} steps: strategy "
                f"sensitivity {s.value:.6g} ({s.method}; {cond}; worst pattern "
                f"{list(s.pattern)}), a record contributing at most {self.sensitivity:.6g}; "
                f"{neighbours} neighbours move each participation by "
                f"{distance_factor(neighbours):g} x {self.sensitivity:.6g}: mu = "
                f"{self.mu(neighbours=neighbours):.6g}")
