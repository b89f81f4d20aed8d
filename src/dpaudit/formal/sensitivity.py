"""Property-based checks of sensitivity lemmas (AUDIT-METHOD section 2, kind 2 of evidence).

A sensitivity lemma such as JKT12 COLT Lemma 4 ("the L2-sensitivity of IGD is 2L/(alpha t) for the
t-th iterate") bounds ``||x_t - x'_t||`` for a deterministic learner over every pair of
neighbouring streams and every round. :func:`check_sensitivity` searches for a counterexample with
Hypothesis over :func:`dpaudit.formal.strategies.neighbouring_streams`, runs the noise-free learner
on both streams and steers the search with ``hypothesis.target`` toward the largest
observed/claimed ratio; a failure is the shrunk counterexample. Iterates follow the
:class:`~dpaudit.learners.base.OnlineLearner` convention (row ``i`` is ``x_{i+1}``), and the
default ``offset=1`` is JKT12 COLT Definition 3 (``S(A, t)`` bounds ``x_{t+1}``). The compared
quantity is pluggable: :func:`rowwise_distance` (default), :func:`trajectory_distance`,
:func:`cumulative_distance`.

The indexing in full, and a worked example: docs/formal-notes.md#sensitivity-checks.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Literal, Mapping, Sequence

import hypothesis
import hypothesis.errors
import numpy as np
from hypothesis import HealthCheck, Phase, Verbosity

from dpaudit._validation import check_int, check_nonnegative
from dpaudit.hypothesis_seeding import independent_of_loaded_modules
from dpaudit.evidence import LemmaCheck
from dpaudit.formal.lemma_search import LemmaViolation
from dpaudit.formal.strategies import NeighbouringPair, extreme_pairs, neighbouring_streams
from dpaudit.learners.losses import (HingeLoss, LinearLoss, LogisticLoss, Loss, LossClass,
                                     SquaredLoss)

__all__ = [
    "TrajectoryFn",
    "ClaimedBound",
    "Distance",
    "NormName",
    "rowwise_distance",
    "trajectory_distance",
    "cumulative_distance",
    "sensitivity_profile",
    "SensitivityProfile",
    "SensitivityExample",
    "SensitivityReport",
    "check_sensitivity",
    "loss_to_dict",
    "loss_from_dict",
    "LEMMA_SEARCH_SETTINGS",
    "independent_of_loaded_modules",
]

NormName = Literal["l2", "l1", "linf"]
TrajectoryFn = Callable[[Sequence[Loss]], np.ndarray]
ClaimedBound = Callable[[int, int], float]
Distance = Callable[[np.ndarray, np.ndarray], np.ndarray]

#: ``hypothesis.target`` needs finite scores; an infinite ratio (claim 0, observed > 0) is capped.
_TARGET_CAP = 1e300

#: The one Hypothesis profile of every lemma search (this module's and the papers' own, e.g.
#: ST13's structural checks): ``hypothesis.settings(max_examples=n, **LEMMA_SEARCH_SETTINGS)``.
#: Reproducible from ``hypothesis.seed`` alone (no example database, no deadline), quiet, first
#: failure only; the target phase does nothing for searches that call no ``hypothesis.target``.
LEMMA_SEARCH_SETTINGS: dict[str, Any] = dict(
    database=None, deadline=None, derandomize=False, verbosity=Verbosity.quiet,
    report_multiple_bugs=False, phases=(Phase.explicit, Phase.generate, Phase.target, Phase.shrink),
    suppress_health_check=(HealthCheck.too_slow, HealthCheck.data_too_large,
                           HealthCheck.large_base_example, HealthCheck.filter_too_much))



def _norm_fn(norm: str) -> Callable[[np.ndarray], np.ndarray]:
    """Vector norm over the last axis."""
    if norm == "l2":
        return lambda a: np.linalg.norm(a, axis=-1)
    if norm == "l1":
        return lambda a: np.sum(np.abs(a), axis=-1)
    if norm == "linf":
        return lambda a: np.max(np.abs(a), axis=-1)
    raise ValueError(f"norm must be one of 'l2', 'l1', 'linf', got {norm!r}")


def _rows(traj: np.ndarray) -> np.ndarray:
    return traj.reshape(traj.shape[0], -1)


def rowwise_distance(norm: NormName = "l2") -> Distance:
    """``||x_t - x'_t||`` for every row t: array of length ``n_rows`` (the default comparison)."""
    f = _norm_fn(norm)

    def distance(traj0: np.ndarray, traj1: np.ndarray) -> np.ndarray:
        return f(_rows(traj0) - _rows(traj1))

    distance.__name__ = f"rowwise_{norm}"
    return distance


def trajectory_distance(norm: NormName = "l2") -> Distance:
    """Norm of the difference of the whole (flattened) trajectories: an array of length 1.

    For claims on the whole released sequence (e.g. the Gaussian-mechanism shift
    ``sqrt(sum_t ||Delta_t||^2)``); check it with ``offset=0`` and a constant ``claimed_bound``.
    """
    f = _norm_fn(norm)

    def distance(traj0: np.ndarray, traj1: np.ndarray) -> np.ndarray:
        return np.atleast_1d(f((traj0 - traj1).reshape(-1)))

    distance.__name__ = f"trajectory_{norm}"
    return distance


def cumulative_distance(norm: NormName = "l2") -> Distance:
    """Entry j: the norm of the difference of rows 0..j, flattened (prefixes of the trajectory).

    l2: ``sqrt(sum_{s <= j} ||Delta_s||_2^2)``; l1: ``sum_{s <= j} ||Delta_s||_1``; linf: running
    maximum. Use ``offset=0`` unless the claim indexes prefixes by outputs.
    """
    _norm_fn(norm)

    def distance(traj0: np.ndarray, traj1: np.ndarray) -> np.ndarray:
        diff = _rows(traj0) - _rows(traj1)
        if norm == "l2":
            return np.sqrt(np.cumsum(np.sum(diff * diff, axis=1)))
        if norm == "l1":
            return np.cumsum(np.sum(np.abs(diff), axis=1))
        return np.maximum.accumulate(np.max(np.abs(diff), axis=1))

    distance.__name__ = f"cumulative_{norm}"
    return distance


# ---------------------------------------------------------------------------------------------
# Serialising losses (for JSON counterexamples that can be replayed)
# ---------------------------------------------------------------------------------------------


def loss_to_dict(loss: Loss) -> dict[str, Any]:
    """JSON-serialisable parameters of ``loss`` (inverse: :func:`loss_from_dict`)."""
    if isinstance(loss, LinearLoss):
        return {"kind": "linear", "g": loss.g.tolist()}
    if isinstance(loss, (SquaredLoss, LogisticLoss, HingeLoss)):
        return {"kind": loss.kind, "v": loss.v.tolist(), "y": float(loss.y),
                "ridge": float(loss.ridge)}
    raise TypeError(f"cannot serialise a loss of type {type(loss).__name__}")


def loss_from_dict(d: Mapping[str, Any]) -> Loss:
    """Rebuild a loss from :func:`loss_to_dict` output."""
    kind = d.get("kind")
    if kind == "linear":
        return LinearLoss(np.asarray(d["g"], dtype=float))
    types = {"squared": SquaredLoss, "logistic": LogisticLoss, "hinge": HingeLoss}
    if kind not in types:
        raise ValueError(f"unknown loss kind {kind!r}; expected one of 'linear', "
                         f"{', '.join(map(repr, types))}")
    return types[kind](np.asarray(d["v"], dtype=float), d["y"], d.get("ridge", 0.0))


# ---------------------------------------------------------------------------------------------
# One pair: observed vs claimed over t
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class SensitivityProfile:
    """Observed and claimed sensitivity of one neighbouring pair at every covered index.

    ``t``: the claim's 1-indexed rounds covered (shape ``(m,)``); ``observed``: the distance
    between the two trajectories at those entries; ``claimed``: ``claimed_bound(t, T)``;
    ``ratio``: observed / claimed (where the claim is 0: inf if observed > atol, else 0).
    """

    T: int
    t: np.ndarray
    observed: np.ndarray
    claimed: np.ndarray
    ratio: np.ndarray

    @property
    def worst_index(self) -> int:
        """Index into ``t`` of the largest ratio (the first one on ties)."""
        if self.ratio.size == 0:
            raise ValueError("the profile covers no entry of the claim")
        return int(np.argmax(self.ratio))

    @property
    def worst_ratio(self) -> float:
        return float(self.ratio[self.worst_index]) if self.ratio.size else 0.0


class _ClaimCache:
    """``claimed_bound`` evaluated once per (T, entry count) and validated."""

    def __init__(self, claimed_bound: ClaimedBound, offset: int) -> None:
        self._fn = claimed_bound
        self._offset = offset
        self._cache: dict[tuple[int, int], tuple[np.ndarray, np.ndarray, np.ndarray]] = {}

    def __call__(self, T: int, m: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(entry indices, t values, claimed values) of the covered entries."""
        key = (T, m)
        if key not in self._cache:
            idx, ts, vals = [], [], []
            for j in range(m):
                t = j + 1 - self._offset
                if t < 1:
                    continue
                c = self._fn(t, T)
                try:
                    c = float(c)
                except (TypeError, ValueError) as exc:
                    raise TypeError(f"claimed_bound({t}, {T}) must return a real number, got "
                                    f"{type(c).__name__}") from exc
                if math.isnan(c) or c < 0:
                    raise ValueError(f"claimed_bound({t}, {T}) must be >= 0 (or inf for rounds "
                                     f"the claim does not cover), got {c!r}")
                if math.isinf(c):
                    continue
                idx.append(j)
                ts.append(t)
                vals.append(c)
            self._cache[key] = (np.array(idx, dtype=int), np.array(ts, dtype=int),
                                np.array(vals, dtype=float))
        return self._cache[key]


def _trajectory(trajectory_fn: TrajectoryFn, stream: Sequence[Loss], which: str) -> np.ndarray:
    traj = np.asarray(trajectory_fn(list(stream)), dtype=float)
    if traj.ndim == 0:
        raise ValueError(f"trajectory_fn must return an array with a leading round axis, got a "
                         f"scalar for the {which} stream")
    if not np.all(np.isfinite(traj)):
        raise ValueError(f"trajectory_fn returned non-finite values for the {which} stream")
    return traj


def _profile(trajectory_fn: TrajectoryFn, stream: Sequence[Loss], neighbour: Sequence[Loss],
             claims: _ClaimCache, distance: Distance, atol: float) -> SensitivityProfile:
    traj0 = _trajectory(trajectory_fn, stream, "original")
    traj1 = _trajectory(trajectory_fn, neighbour, "neighbouring")
    if traj0.shape != traj1.shape:
        raise ValueError(f"trajectory_fn returned shapes {traj0.shape} and {traj1.shape} for two "
                         f"streams of the same length")
    dist = np.asarray(distance(traj0, traj1), dtype=float)
    if dist.ndim != 1 or not np.all(np.isfinite(dist)) or np.any(dist < 0):
        raise ValueError(f"distance must return a 1-D array of finite non-negative values, got "
                         f"shape {dist.shape}")
    T = len(stream)
    idx, ts, claimed = claims(T, dist.shape[0])
    observed = dist[idx]
    positive = claimed > 0
    ratio = np.where(positive, observed / np.where(positive, claimed, 1.0),
                     np.where(observed > atol, np.inf, 0.0))
    return SensitivityProfile(T, ts, observed, claimed, ratio)


def _resolve_distance(norm: str, distance: Distance | None) -> Distance:
    if distance is None:
        return rowwise_distance(norm)  # type: ignore[arg-type]
    if norm != "l2":
        raise ValueError("pass either norm (for the default row-wise distance) or distance, "
                         "not both")
    if not callable(distance):
        raise TypeError(f"distance must be callable, got {type(distance).__name__}")
    return distance


def sensitivity_profile(trajectory_fn: TrajectoryFn, stream: Sequence[Loss],
                        neighbour: Sequence[Loss], claimed_bound: ClaimedBound, *,
                        norm: NormName = "l2", distance: Distance | None = None,
                        offset: int = 1, atol: float = 1e-12) -> SensitivityProfile:
    """Observed vs claimed sensitivity of one given pair of streams (no search).

    Parameters as in :func:`check_sensitivity` (``atol`` only decides the ratio where the claim
    is 0); ``stream`` and ``neighbour`` must have the same length. Use it to replay a
    counterexample or to evaluate a hand-built worst case.
    """
    if len(stream) != len(neighbour) or not stream:
        raise ValueError(f"stream and neighbour must be non-empty and of equal length, got "
                         f"{len(stream)} and {len(neighbour)}")
    offset = check_int(offset, "offset", minimum=0)
    atol = check_nonnegative(atol, "atol")
    return _profile(trajectory_fn, stream, neighbour, _ClaimCache(claimed_bound, offset),
                    _resolve_distance(norm, distance), atol)


# ---------------------------------------------------------------------------------------------
# Reports
# ---------------------------------------------------------------------------------------------


def _json_float(x: float) -> float | str:
    return float(x) if math.isfinite(x) else ("inf" if x > 0 else "-inf")


@dataclass(frozen=True, eq=False)
class SensitivityExample:
    """One neighbouring pair with its profile, summarised at one entry of the profile.

    ``position`` is 0-based (the replaced loss is f_{position+1}); ``index`` selects the entry
    (default: the largest ratio; for a counterexample: the largest *violating* ratio), and ``t``,
    ``observed``, ``claimed`` and ``ratio`` are the claim's round and the values there.
    """

    pair: NeighbouringPair
    profile: SensitivityProfile
    index: int | None = None

    @property
    def _i(self) -> int:
        return self.profile.worst_index if self.index is None else self.index

    @property
    def stream(self) -> tuple[Loss, ...]:
        return self.pair.stream

    @property
    def position(self) -> int:
        return self.pair.position

    @property
    def replacement(self) -> Loss:
        return self.pair.replacement

    def neighbour(self) -> tuple[Loss, ...]:
        return self.pair.neighbour()

    @property
    def t(self) -> int:
        return int(self.profile.t[self._i])

    @property
    def observed(self) -> float:
        return float(self.profile.observed[self._i])

    @property
    def claimed(self) -> float:
        return float(self.profile.claimed[self._i])

    @property
    def ratio(self) -> float:
        return float(self.profile.ratio[self._i])

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable description; replay with :func:`loss_from_dict`."""
        return {"T": self.pair.T, "position": self.position, "replaced_round": self.position + 1,
                "replaced": loss_to_dict(self.stream[self.position]),
                "replacement": loss_to_dict(self.replacement),
                "t": self.t, "observed": self.observed, "claimed": self.claimed,
                "ratio": _json_float(self.ratio),
                "stream": [loss_to_dict(f) for f in self.stream]}

    def __repr__(self) -> str:
        return (f"SensitivityExample(T={self.pair.T}, position={self.position}, t={self.t}, "
                f"observed={self.observed:.6g}, claimed={self.claimed:.6g}, "
                f"ratio={self.ratio:.6g}, replaced={self.stream[self.position]!r}, "
                f"replacement={self.replacement!r})")


@dataclass(frozen=True, eq=False)
class SensitivityReport:
    """Outcome of :func:`check_sensitivity`.

    ``holds``: no example exceeded the claim (beyond ``rtol``/``atol``); ``worst_ratio``: the
    largest observed/claimed ratio over every example tried (``worst`` is that example);
    ``examples``: how many examples (neighbouring pairs) were evaluated, including Hypothesis's
    shrinking steps and the canonical extreme pairs; ``counterexample``: the failing example
    (None when the claim held), shrunk by Hypothesis (``counterexample_shrunk``) unless only a
    canonical extreme pair failed, in which case the shortest failing canonical pair is reported.
    """

    holds: bool
    worst_ratio: float
    examples: int
    worst: SensitivityExample
    counterexample: SensitivityExample | None
    counterexample_shrunk: bool
    loss_class: LossClass
    seed: int
    offset: int
    rtol: float
    atol: float
    distance: str = field(default="rowwise_l2")

    def to_lemma_check(self, statement: str) -> LemmaCheck:
        """The :class:`~dpaudit.claims.record.LemmaCheck` record for a claim audit."""
        if not isinstance(statement, str) or not statement:
            raise ValueError("statement must be a non-empty string")
        cex = None
        if self.counterexample is not None:
            cex = self.counterexample.to_dict()
            cex["worst_ratio_seen"] = _json_float(self.worst_ratio)
            cex["shrunk"] = self.counterexample_shrunk
            cex["seed"] = self.seed
        return LemmaCheck(statement, "holds" if self.holds else "violated", self.worst_ratio,
                          self.examples, cex)

    def trace(self, statement: str, which: Literal["worst", "counterexample"] = "worst"
              ) -> dict[str, Any]:
        """``figures["sensitivity"]`` (claim_audit.py convention): observed vs claimed over t.

        ``which="worst"`` (default) traces the example with the largest ratio seen;
        ``"counterexample"`` the shrunk counterexample (only when the claim failed).
        """
        if which == "worst":
            ex = self.worst
        elif which == "counterexample":
            if self.counterexample is None:
                raise ValueError("the claim held: there is no counterexample to trace")
            ex = self.counterexample
        else:
            raise ValueError(f"which must be 'worst' or 'counterexample', got {which!r}")
        p = ex.profile
        return {"t": p.t.tolist(), "observed": p.observed.tolist(), "claimed": p.claimed.tolist(),
                "statement": statement, "T": p.T, "position": ex.position,
                "distance": self.distance}

    def to_dict(self) -> dict[str, Any]:
        return {"holds": self.holds, "worst_ratio": _json_float(self.worst_ratio),
                "examples": self.examples, "worst": self.worst.to_dict(),
                "counterexample": None if self.counterexample is None
                else self.counterexample.to_dict(),
                "counterexample_shrunk": self.counterexample_shrunk,
                "loss_class": repr(self.loss_class), "seed": self.seed, "offset": self.offset,
                "rtol": self.rtol, "atol": self.atol, "distance": self.distance}


# ---------------------------------------------------------------------------------------------
# The checker
# ---------------------------------------------------------------------------------------------


def _horizon(T: int | tuple[int, int]) -> tuple[int, int]:
    if isinstance(T, tuple):
        if len(T) != 2:
            raise ValueError(f"T must be an int or a (min_T, max_T) pair, got {T!r}")
        lo = check_int(T[0], "T[0] (min_T)", minimum=1)
        hi = check_int(T[1], "T[1] (max_T)", minimum=lo)
        return lo, hi
    t = check_int(T, "T", minimum=1)
    return t, t


def check_sensitivity(trajectory_fn: TrajectoryFn, claimed_bound: ClaimedBound,
                      loss_class: LossClass, *, T: int | tuple[int, int] = (1, 32),
                      examples: int = 200, seed: int = 0, norm: NormName = "l2",
                      distance: Distance | None = None, offset: int = 1, rtol: float = 1e-9,
                      atol: float = 1e-12, extremes: bool = True, vary_ridge: bool = False,
                      nonnegative: bool | None = None) -> SensitivityReport:
    """Search for neighbouring streams on which a noise-free learner exceeds a claimed sensitivity.

    Parameters
    ----------
    trajectory_fn
        ``trajectory_fn(losses) -> array (n_rows, ...)``: the noise-free learner (e.g. the
        uncorrupted iterates of IGD), row i = ``x_{i+1}`` (docs/formal-notes.md#sensitivity-checks).
        Must be deterministic.
    claimed_bound
        ``claimed_bound(t, T) -> float``: the claimed bound on entry ``t - 1 + offset`` of the
        compared quantity (t 1-indexed, T the stream length), e.g. ``lambda t, T: 2 * L /
        (alpha * t)`` for JKT12 COLT Lemma 4. Return ``inf`` for rounds the claim does not cover.
    loss_class
        The declared class; pairs come from
        :func:`~dpaudit.formal.strategies.neighbouring_streams` (only members).
    T
        Stream length, or a ``(min_T, max_T)`` range searched over.
    examples
        Hypothesis ``max_examples`` (valid examples generated before shrinking).
    seed
        Seed of the search: for a fixed program the report is a deterministic function of the
        seed (the search runs inside :func:`independent_of_loaded_modules`, so which other
        modules are imported does not change it).
    norm
        Norm of the default row-wise distance (``"l2"``, ``"l1"``, ``"linf"``).
    distance
        ``distance(traj0, traj1) -> 1-D array`` replacing the row-wise distance
        (docs/formal-notes.md#sensitivity-checks).
    offset
        ``claimed_bound(t, T)`` bounds entry ``t - 1 + offset`` (default 1: JKT12 Definition 3,
        the t-th output is ``x_{t+1}``).
    rtol, atol
        An entry violates the claim when ``observed > claimed * (1 + rtol) + atol`` (floating-point
        slack only; the defaults are far below any real violation).
    extremes
        Before the search, evaluate the canonical candidates of
        :func:`~dpaudit.formal.strategies.extreme_pairs` at ``min_T`` and ``max_T`` (constant
        extreme streams with the opposite loss at the first, middle and last positions).
    vary_ridge, nonnegative
        Passed to the strategies (see :func:`~dpaudit.formal.strategies.losses`).

    Returns
    -------
    SensitivityReport
        ``holds``, ``worst_ratio``, ``examples`` tried, the worst example and, on failure, the
        shrunk counterexample (losses, position, replacement, round t, observed and claimed).

    Raises
    ------
    ValueError
        If no example had an entry covered by the claim (check ``offset`` and ``T``), or if
        ``trajectory_fn``/``distance``/``claimed_bound`` return invalid values. Exceptions raised
        by ``trajectory_fn`` itself propagate (after Hypothesis shrinks the input that caused them).

    Notes
    -----
    The search is an ordinary Hypothesis run (no example database, no deadline, quiet). Calling
    it from inside a ``@given`` test (e.g. to vary the class constants) needs
    ``@settings(suppress_health_check=[HealthCheck.nested_given])`` on the *outer* test; looping
    over a grid of constants is usually cheaper.
    """
    if not callable(trajectory_fn):
        raise TypeError(f"trajectory_fn must be callable, got {type(trajectory_fn).__name__}")
    if not callable(claimed_bound):
        raise TypeError(f"claimed_bound must be callable, got {type(claimed_bound).__name__}")
    if not isinstance(loss_class, LossClass):
        raise TypeError(f"loss_class must be a LossClass, got {type(loss_class).__name__}")
    min_T, max_T = _horizon(T)
    examples = check_int(examples, "examples", minimum=1)
    seed = check_int(seed, "seed", minimum=0)
    offset = check_int(offset, "offset", minimum=0)
    rtol = check_nonnegative(rtol, "rtol")
    atol = check_nonnegative(atol, "atol")
    dist_fn = _resolve_distance(norm, distance)
    claims = _ClaimCache(claimed_bound, offset)
    pairs = neighbouring_streams(loss_class, min_T, max_T, vary_ridge=vary_ridge,
                                 nonnegative=nonnegative)

    tried = 0
    worst: SensitivityExample | None = None
    first_extreme_violation: SensitivityExample | None = None

    def evaluate(pair: NeighbouringPair
                 ) -> tuple[SensitivityExample | None, SensitivityExample | None]:
        """(example, violating example or None); updates the count and the worst example."""
        nonlocal tried, worst
        tried += 1
        profile = _profile(trajectory_fn, pair.stream, pair.neighbour(), claims, dist_fn, atol)
        if profile.t.size == 0:
            return None, None
        example = SensitivityExample(pair, profile)
        if worst is None or example.ratio > worst.ratio:
            worst = example
        violating = profile.observed > profile.claimed * (1.0 + rtol) + atol
        if not np.any(violating):
            return example, None
        i = int(np.argmax(np.where(violating, profile.ratio, -np.inf)))
        return example, SensitivityExample(pair, profile, i)

    if extremes:
        for T_ in sorted({min_T, max_T}):
            for pair in extreme_pairs(loss_class, T_, nonnegative=nonnegative):
                _, bad = evaluate(pair)
                if bad is not None and first_extreme_violation is None:
                    first_extreme_violation = bad

    @hypothesis.settings(max_examples=examples, **LEMMA_SEARCH_SETTINGS)
    @hypothesis.seed(seed)
    @hypothesis.given(pairs)
    def search(pair: NeighbouringPair) -> None:
        example, bad = evaluate(pair)
        # A pair with nothing the claim covers is not an example: do not count it.
        hypothesis.assume(example is not None)
        hypothesis.target(min(example.ratio, _TARGET_CAP), label="observed / claimed")
        if bad is not None:
            raise LemmaViolation(bad)

    counterexample: SensitivityExample | None = None
    shrunk = False
    try:
        with independent_of_loaded_modules():
            search()
    except LemmaViolation as exc:
        counterexample, shrunk = exc.example, True
    except hypothesis.errors.Unsatisfiable:
        pass  # (almost) no pair had a covered entry: reported below if none had
    if counterexample is None and first_extreme_violation is not None:
        # Hypothesis found nothing, a canonical pair failed: report the shortest failing one.
        counterexample = first_extreme_violation
        for T_ in range(min_T, first_extreme_violation.pair.T):
            bads = [evaluate(pair)[1] for pair in extreme_pairs(loss_class, T_,
                                                                nonnegative=nonnegative)]
            bads = [b for b in bads if b is not None]
            if bads:
                counterexample = bads[0]
                break
    if worst is None:
        raise ValueError(f"no example had an entry covered by the claim (offset={offset}, T in "
                         f"[{min_T}, {max_T}]): with offset k, entry j is compared with "
                         f"claimed_bound(j + 1 - k, T), so the compared quantity needs more than k "
                         f"entries and a finite claim")
    return SensitivityReport(holds=counterexample is None, worst_ratio=worst.ratio,
                             examples=tried, worst=worst, counterexample=counterexample,
                             counterexample_shrunk=shrunk, loss_class=loss_class, seed=seed,
                             offset=offset, rtol=rtol, atol=atol,
                             distance=getattr(dist_fn, "__name__", "custom"))
