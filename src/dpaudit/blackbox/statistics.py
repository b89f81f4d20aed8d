"""Built-in test statistics of the empirical audit and the threshold sweep that picks an event.

An empirical audit reduces every output (a label, a vector, a whole trajectory) to one real score,
then uses a threshold event ``{score > t}`` or its complement. This module holds the scorers
(callables ``outputs (n, ...) -> scores (n,)``): :class:`IdentityScorer` for scalars,
:class:`LinearScorer` (a linear discriminant fitted by :class:`LinearDiscriminantFitter`, the
likelihood-ratio statistic for two Gaussians with a common covariance, Fisher 1936),
:class:`OutcomeScorer` for discrete outputs (fitted by :class:`LikelihoodRatioFitter`) and
:class:`UserScorer` (a user's row-wise statistic); :func:`sweep_thresholds`, which ranks every
threshold, both tails and both directions, by the bound each event is expected to give on the
fresh test split; and :class:`HistogramAccumulator` for reports. Fitting and selection happen on
training data only; the caller evaluates the chosen event on fresh samples
(:mod:`dpaudit.blackbox.empirical_audit`).

Each scorer in full: docs/blackbox-notes.md#built-in-statistics
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Literal

import numpy as np
from scipy import special

from dpaudit._validation import check_delta, check_int, check_nonnegative, check_probability
from dpaudit.blackbox.confidence import log_ratio_lower_bound, wilson_lower, wilson_upper
from dpaudit.blackbox.sorting import SortedScores, unique_sorted
from dpaudit.blackbox.statistic_protocol import Fitter, Scorer

__all__ = [
    "Tail",
    "Objective",
    "ThresholdEvent",
    "PooledEvent",
    "HEDGE_SELECTION_LEVEL",
    "IdentityScorer",
    "LinearScorer",
    "OutcomeScorer",
    "UserScorer",
    "LinearDiscriminantFitter",
    "LikelihoodRatioFitter",
    "RankedEvent",
    "ThresholdSweep",
    "SortedScores",
    "sweep_thresholds",
    "projected_log_ratio",
    "HistogramAccumulator",
    "flatten_outputs",
    "outcome_keys",
]

Tail = Literal["upper", "lower"]
Objective = Literal["epsilon", "gdp"]


# ----------------------------------------------------------------------------------------------
# Events
# ----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ThresholdEvent:
    """The event ``{score > threshold}`` (tail ``"upper"``) or its complement (``"lower"``).

    ``numerator`` is the index (0 or 1) of the input whose probability of the event is the
    numerator ``p`` of ``ln((p - delta) / q)``, i.e. the input on which the event is more likely;
    the other input gives ``q``. The two tails at one threshold are complements of each other.
    """

    tail: Tail
    threshold: float
    numerator: int

    def __post_init__(self) -> None:
        if self.tail not in ("upper", "lower"):
            raise ValueError(f"tail must be 'upper' or 'lower', got {self.tail!r}")
        if self.numerator not in (0, 1):
            raise ValueError(f"numerator must be 0 or 1, got {self.numerator!r}")
        object.__setattr__(self, "threshold", float(self.threshold))

    def indicator(self, scores: np.ndarray) -> np.ndarray:
        """Boolean array: which of ``scores`` (shape ``(n,)``) fall in the event."""
        if self.tail == "upper":
            return scores > self.threshold
        return scores <= self.threshold

    def count_sorted(self, sorted_scores: np.ndarray) -> int:
        """Occurrences among ``sorted_scores`` (ascending, no NaN): the same count as
        ``indicator(scores).sum()``, by one binary search."""
        le = int(np.searchsorted(sorted_scores, self.threshold, side="right"))
        return sorted_scores.size - le if self.tail == "upper" else le

    def describe(self) -> str:
        op = ">" if self.tail == "upper" else "<="
        return (f"score {op} {self.threshold:.6g}, more likely on data{self.numerator} "
                f"(p from data{self.numerator}, q from data{1 - self.numerator})")

    def to_dict(self) -> dict[str, Any]:
        return {"tail": self.tail, "threshold": _json_float(self.threshold),
                "numerator": self.numerator, "description": self.describe()}


@dataclass(frozen=True)
class PooledEvent:
    """A mirrored pair of disjoint threshold events pooled into one (epsilon, delta) statement.

    ``first`` has numerator data1 and ``second`` numerator data0 (one is an upper-tail event, the
    other a lower-tail event, and they are disjoint: the lower event's threshold is below the
    upper event's). If the mechanism is (epsilon, delta)-DP, both
    ``P1[first] <= e^eps P0[first] + delta`` and ``P0[second] <= e^eps P1[second] + delta`` hold
    (the neighbour relation is symmetric); adding them and halving,
    ``p = (P1[first] + P0[second]) / 2`` and ``q = (P0[first] + P1[second]) / 2`` satisfy
    ``p <= e^eps q + delta``. On the test split ``p`` is estimated from the pooled count
    ``Kp = #{data1 runs in first} + #{data0 runs in second}`` over ``n1 + n0`` runs, and ``q`` from
    ``Kq = #{data0 runs in first} + #{data1 runs in second}``
    (:func:`dpaudit.blackbox.confidence.pooled_proportion_bound` says why the binomial
    Clopper-Pearson ends stay valid for these sums). For a mechanism whose two directions leak
    alike (any symmetric noise), this doubles the runs behind one statement.

    ``numerator`` is 1 by convention: in counts ``(count0, count1)`` of a pooled event, ``count1``
    is the numerator side ``Kp`` and ``count0`` the other side ``Kq``.
    """

    first: ThresholdEvent
    second: ThresholdEvent

    def __post_init__(self) -> None:
        if self.first.numerator != 1 or self.second.numerator != 0:
            raise ValueError("a pooled event pairs an event with numerator data1 (first) and one "
                             "with numerator data0 (second)")
        if self.first.tail == self.second.tail:
            raise ValueError("a pooled event pairs an upper-tail and a lower-tail event")
        upper, lower = ((self.first, self.second) if self.first.tail == "upper"
                        else (self.second, self.first))
        if not lower.threshold < upper.threshold:
            raise ValueError(f"the events of a pooled pair must be disjoint: lower threshold "
                             f"{lower.threshold} must be below upper threshold {upper.threshold}")

    @property
    def numerator(self) -> int:
        return 1

    @property
    def tail(self) -> str:
        return "pooled"

    @property
    def components(self) -> tuple[ThresholdEvent, ThresholdEvent]:
        return (self.first, self.second)

    def describe(self) -> str:
        def one(e: ThresholdEvent) -> str:
            return f"score {'>' if e.tail == 'upper' else '<='} {e.threshold:.6g}"
        return (f"pooled mirrored pair: [{one(self.first)} on data1 or {one(self.second)} on data0]"
                f" vs [{one(self.first)} on data0 or {one(self.second)} on data1]")

    def to_dict(self) -> dict[str, Any]:
        return {"tail": "pooled", "threshold": None, "numerator": 1,
                "events": [self.first.to_dict(), self.second.to_dict()],
                "description": self.describe()}


def _json_float(x: float) -> float | str:
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if math.isnan(x):
        return "nan"
    return float(x)


# ----------------------------------------------------------------------------------------------
# Output handling
# ----------------------------------------------------------------------------------------------

def flatten_outputs(outputs: np.ndarray) -> np.ndarray:
    """View ``outputs`` of shape ``(n, ...)`` as ``(n, D)`` (``D = 1`` for scalar outputs)."""
    outputs = np.asarray(outputs)
    n = outputs.shape[0]
    return outputs.reshape(n, -1)


#: Canonical element type of numeric rows in :func:`outcome_keys` (by ``dtype.kind``).
_ROW_DTYPES = {"b": "uint8", "i": "int64", "u": "uint64", "f": "float64"}


def outcome_keys(outputs: np.ndarray) -> np.ndarray:
    """One sortable, hashable key per run, equal exactly when the two runs' outputs are equal.

    Parameters
    ----------
    outputs : array, shape (n, ...)
        Discrete outputs: integers, booleans, integer-valued floats, strings, or objects.

    Returns
    -------
    array, shape (n,)
        The values themselves (as int64, uint64, float64 or str) for scalar outputs; each row's
        bytes as a fixed-width ``numpy.void`` for numeric rows (booleans as uint8, integers as
        64-bit, floats as float64 with -0.0 mapped to 0.0); the joined ``repr`` of each row for
        object arrays and rows of strings.
    """
    flat = flatten_outputs(outputs)
    kind = flat.dtype.kind
    if kind == "O" or (kind in "US" and flat.shape[1] > 1):
        # Python objects, or rows of strings (whose fixed width may change between chunks).
        return np.array(["\x1f".join(map(repr, row)) for row in flat])
    # Canonical numeric types, so that keys from chunks of different integer/float widths agree.
    if kind == "b":
        flat = flat.astype(np.uint8)
    elif kind == "i":
        flat = flat.astype(np.int64)
    elif kind == "u":
        flat = flat.astype(np.uint64)
    elif kind == "f":
        flat = flat.astype(np.float64) + 0.0  # -0.0 -> +0.0: equal values get equal bytes
    if flat.shape[1] == 1:
        return np.ascontiguousarray(flat[:, 0])
    flat = np.ascontiguousarray(flat)
    return flat.view(np.dtype((np.void, flat.dtype.itemsize * flat.shape[1]))).ravel()


# ----------------------------------------------------------------------------------------------
# Scorers
# ----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class IdentityScorer(Scorer):
    """Scalar continuous outputs: the score is the output itself."""

    name: str = "identity"

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        # No copy when the outputs are float64 already: scores are only read.
        return flatten_outputs(outputs)[:, 0].astype(np.float64, copy=False)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "description": "the scalar output itself"}


@dataclass(frozen=True)
class LinearScorer(Scorer):
    """Score ``<weights, x - centre>`` of the flattened output ``x`` (shape ``(D,)``)."""

    weights: np.ndarray
    centre: np.ndarray
    whitening: Literal["full", "diagonal", "none"]
    name: str = "linear discriminant"

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        flat = flatten_outputs(outputs).astype(np.float64, copy=False)
        # einsum, not BLAS: a multithreaded BLAS call leaves worker threads spinning, which slowed
        # the mechanism's next chunk of sampling by about 2x on a 2-core machine.
        offset = float(np.dot(self.centre, self.weights))
        return np.einsum("ij,j->i", flat, self.weights) - offset

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "whitening": self.whitening, "dimension": int(self.weights.size),
                "description": (f"linear discriminant on {self.weights.size} output coordinates, "
                                f"{self.whitening} whitening, learned on the fit split")}


@dataclass(frozen=True)
class OutcomeScorer(Scorer):
    """Discrete outputs: each outcome scored by its estimated log likelihood ratio.

    ``keys`` (sorted) are the outcomes seen on the fit split and ``log_ratios`` their estimated
    ``ln(P1[o] / P0[o])``; outcomes never seen on the fit split score 0 (no evidence either way).
    """

    keys: np.ndarray
    log_ratios: np.ndarray
    name: str = "outcome likelihood ratio"
    #: Element type of the rows behind ``numpy.void`` keys (see :func:`outcome_keys`), so that a
    #: key can be shown as the output it stands for; ``None`` for scalar and string keys.
    row_dtype: str | None = None

    def format_key(self, key: Any) -> str:
        """One outcome as a reader would write it: the value, or the row ``(v1, v2, ...)``."""
        if isinstance(key, np.void) and self.row_dtype is not None:
            row = np.frombuffer(key.tobytes(), dtype=self.row_dtype)
            return "(" + ", ".join(f"{v:g}" if row.dtype.kind == "f" else str(int(v))
                                   for v in row) + ")"
        value = key.item() if hasattr(key, "item") else key
        return repr(value) if isinstance(value, str) else str(value)

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        k = outcome_keys(outputs)
        if k.dtype.kind != self.keys.dtype.kind or (k.dtype.kind == "V"
                                                    and k.dtype != self.keys.dtype):
            raise ValueError(f"discrete outputs changed type: fitted on {self.keys.dtype}, "
                             f"got {k.dtype}")
        if k.dtype != self.keys.dtype:  # strings of another width: compare in a common type
            common = np.result_type(k.dtype, self.keys.dtype)
            k = k.astype(common)
            keys = self.keys.astype(common)
        else:
            keys = self.keys
        idx = np.searchsorted(keys, k)
        idx_c = np.minimum(idx, keys.size - 1)
        found = keys[idx_c] == k
        return np.where(found, self.log_ratios[idx_c], 0.0)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "outcomes": int(self.keys.size),
                "description": (f"estimated log likelihood ratio ln(P1/P0) of each of the "
                                f"{self.keys.size} outcomes seen on the fit split (add-1/2 "
                                "smoothing; unseen outcomes score 0); threshold events are prefix "
                                "sets of outcomes sorted by likelihood ratio")}


#: Relative tolerance of :meth:`UserScorer.check_row_wise` (a fraction of the largest finite score):
#: summation order (e.g. BLAS blocking by batch size or alignment) may change the last bits of a
#: row-wise statistic, while any dependence on the batch that matters changes far more.
ROW_WISE_RTOL = 1e-9
#: Seed of the fixed permutation used by :meth:`UserScorer.check_row_wise` (a constant, so the
#: check is deterministic and independent of the audit's randomness).
ROW_WISE_PERMUTATION_SEED = 20240601


@dataclass(frozen=True)
class UserScorer(Scorer):
    """A user-supplied ``statistic(outputs) -> scores`` with shape ``(n,)``.

    The statistic must act *row-wise*: the score of a run is a fixed, deterministic function of
    that run's output alone. The engine calls it once per chunk of runs, so a statistic that uses
    the batch (its mean, ranks, standardisation, size, row positions) or its own randomness makes
    the event indicators of different runs dependent, the counts are no longer binomial and the
    Clopper-Pearson bounds are invalid (a null mechanism with ``lambda o: o + 10 * o.mean()`` and
    chunks of 100 runs gave positive bounds in 53 of 200 audits at ``alpha = 0.05``).
    :meth:`check_row_wise` tests this on the probe before any count is made.
    """

    function: Callable[[np.ndarray], np.ndarray]
    name: str = "user statistic"

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        n = np.asarray(outputs).shape[0]
        scores = np.asarray(self.function(outputs))
        if scores.ndim == 2 and scores.shape[1] == 1:
            scores = scores[:, 0]
        if scores.shape != (n,):
            raise ValueError(f"statistic must return a 1-D array of {n} scores (one per run), "
                             f"got shape {scores.shape}")
        if scores.dtype.kind not in "biuf":
            raise TypeError(f"statistic must return real scores, got dtype {scores.dtype}")
        scores = scores.astype(np.float64)
        if np.any(np.isnan(scores)):
            raise ValueError("statistic returned NaN scores")
        return scores

    def check_row_wise(self, *batches: np.ndarray) -> list[np.ndarray]:
        """Score ``batches`` and check that the statistic acts row-wise on them.

        Parameters
        ----------
        *batches : arrays, shapes ``(n_j, ...)`` with equal row shapes
            At least one batch (the engine passes the probes of data0 and data1); with fewer
            than two rows in total there is nothing to check.

        Returns
        -------
        list of arrays, shapes ``(n_j,)``
            The scores of each batch, scored on its own.

        Raises
        ------
        ValueError
            If the scores of the pooled rows ``P = concatenate(batches)`` differ from the
            concatenated per-batch scores (a split test: ``statistic(P)`` must equal
            ``concatenate([statistic(P[:k]), statistic(P[k:])])`` at the batch boundaries), or if
            ``statistic(P[perm]) != statistic(P)[perm]`` for a fixed pseudo-random permutation
            (permutation equivariance). Both are compared up to :data:`ROW_WISE_RTOL` times the
            largest finite score. The check is necessary, not sufficient: it cannot see a
            dependence that is identical on these batches.
        """
        if not batches:
            raise ValueError("check_row_wise needs at least one batch")
        scores = [self(b) for b in batches]
        pooled = np.concatenate([np.asarray(b) for b in batches])
        if pooled.shape[0] < 2:
            return scores
        joined = np.concatenate(scores)
        whole = self(pooled)
        perm = np.random.default_rng(ROW_WISE_PERMUTATION_SEED).permutation(pooled.shape[0])
        permuted = self(pooled[perm])
        finite = np.abs(joined[np.isfinite(joined)])
        tol = ROW_WISE_RTOL * (float(finite.max()) if finite.size else 0.0)
        for got, want, how in (
                (whole, joined, "scoring the runs in one batch instead of "
                                f"{len(batches)} batches of {[len(s) for s in scores]} runs"),
                (permuted, whole[perm], "scoring the same runs in a permuted order")):
            with np.errstate(invalid="ignore"):
                bad = ~((got == want) | (np.abs(got - want) <= tol))
            if np.any(bad):
                i = int(np.argmax(bad))
                raise ValueError(
                    "statistic must act row-wise: the score of a run must be a fixed, "
                    "deterministic function of that run's output alone, because the engine "
                    "scores the runs in chunks and counts events as independent Bernoulli trials. "
                    f"On the probe, {how} changed {int(np.count_nonzero(bad))} of {bad.size} "
                    f"scores (row {i}: {float(want[i]):.17g} became {float(got[i]):.17g}). "
                    "Statistics that use the batch (its mean, ranks, standardisation, size, row "
                    "positions) or their own randomness give invalid bounds; compute such "
                    "constants in advance instead")
        return scores

    def to_dict(self) -> dict[str, Any]:
        fn = getattr(self.function, "__qualname__", None) or repr(self.function)
        return {"name": self.name, "description": f"user statistic {fn}"}


# ----------------------------------------------------------------------------------------------
# Fitters (stream over chunks of the fit split)
# ----------------------------------------------------------------------------------------------

@dataclass
class LinearDiscriminantFitter(Fitter):
    """Streaming linear discriminant: accumulates per-input means and pooled (co)variances.

    ``update(outputs, label)`` with ``outputs`` of shape ``(n, ...)`` and ``label`` 0 or 1;
    ``finish()`` returns ``[LinearScorer]`` with weights ``(S + r I)^{-1} (m1 - m0)``, where
    ``S`` is the pooled within-input covariance. ``S`` is the full matrix when the flattened
    dimension ``D <= max_full_dim`` and each input has at least ``10 D`` fit samples, and its
    diagonal otherwise; the ridge ``r = ridge * trace(S) / D`` (or ``ridge`` times the largest
    variance, diagonal case) keeps the solve well conditioned. A full matrix whose regularised
    condition number exceeds ``max_condition`` falls back to the diagonal. Coordinates with zero
    variance whose means differ get huge weights: they separate the inputs perfectly.
    """

    max_full_dim: int = 256
    ridge: float = 1e-9
    max_condition: float = 1e10
    _n: list[int] = field(default_factory=lambda: [0, 0])
    _sum: list[np.ndarray | None] = field(default_factory=lambda: [None, None])
    _sq: list[np.ndarray | None] = field(default_factory=lambda: [None, None])
    _shift: np.ndarray | None = None
    _full: bool | None = None

    def update(self, outputs: np.ndarray, label: int) -> None:
        x = flatten_outputs(outputs).astype(np.float64, copy=False)
        if self._shift is None:
            # Centre by a reference point to avoid cancellation in sum-of-squares accumulation.
            self._shift = x.mean(axis=0)
            self._full = x.shape[1] <= self.max_full_dim
        if x.shape[1] != self._shift.size:
            raise ValueError(f"outputs changed dimension: {self._shift.size} then {x.shape[1]}")
        xc = x - self._shift
        s = xc.sum(axis=0)
        sq = xc.T @ xc if self._full else np.einsum("ij,ij->j", xc, xc)
        self._n[label] += x.shape[0]
        self._sum[label] = s if self._sum[label] is None else self._sum[label] + s
        self._sq[label] = sq if self._sq[label] is None else self._sq[label] + sq

    def finish(self) -> list[LinearScorer]:
        return [self._discriminant()]

    def _discriminant(self) -> LinearScorer:
        if self._shift is None or min(self._n) == 0:
            raise ValueError("the linear discriminant needs fit samples from both inputs")
        d = self._shift.size
        means = [self._sum[j] / self._n[j] for j in (0, 1)]
        dof = max(self._n[0] + self._n[1] - 2, 1)
        diff = means[1] - means[0]
        centre = self._shift + 0.5 * (means[0] + means[1])
        if self._full:
            scatter = sum(self._sq[j] - self._n[j] * np.outer(means[j], means[j]) for j in (0, 1))
            cov = scatter / dof
            enough = min(self._n) >= 10 * d
            if enough:
                scale = np.trace(cov) / d
                r = self.ridge * scale if scale > 0 else 1.0
                reg = cov + r * np.eye(d)
                eig = np.linalg.eigvalsh(reg)
                if eig[0] > 0 and eig[-1] / eig[0] <= self.max_condition:
                    w = np.linalg.solve(reg, diff)
                    return LinearScorer(w, centre, "full")
            var = np.diag(cov).copy()
        else:
            var = sum(self._sq[j] - self._n[j] * means[j] ** 2 for j in (0, 1)) / dof
        var = np.maximum(var, 0.0)
        top = var.max()
        if top <= 0:
            return LinearScorer(diff, centre, "none")
        return LinearScorer(diff / (var + self.ridge * top), centre, "diagonal")


@dataclass
class LikelihoodRatioFitter(Fitter):
    """Counts outcomes per input on the fit split; ``finish()`` gives ``[OutcomeScorer]``.

    The log likelihood ratio of outcome ``o`` is estimated as
    ``ln((n1(o) + 1/2) / (N1 + K/2)) - ln((n0(o) + 1/2) / (N0 + K/2))`` (add-1/2 smoothing over
    the ``K`` outcomes seen), which is finite for outcomes seen on one input only.
    """

    _keys: list[np.ndarray] = field(default_factory=list)
    _counts: list[np.ndarray] = field(default_factory=list)
    _labels: list[np.ndarray] = field(default_factory=list)
    _n: list[int] = field(default_factory=lambda: [0, 0])
    _row_dtype: str | None = None

    def update(self, outputs: np.ndarray, label: int) -> None:
        keys = outcome_keys(outputs)
        if keys.dtype.kind == "V" and self._row_dtype is None:
            self._row_dtype = _ROW_DTYPES[flatten_outputs(outputs).dtype.kind]
        uniq, counts = np.unique(keys, return_counts=True)
        self._keys.append(uniq)
        self._counts.append(counts)
        self._labels.append(np.full(uniq.size, label, dtype=np.int8))
        self._n[label] += keys.size

    def finish(self) -> list[OutcomeScorer]:
        if min(self._n) == 0:
            raise ValueError("the likelihood-ratio statistic needs fit samples from both inputs")
        keys = np.concatenate(self._keys)
        uniq, inv = np.unique(keys, return_inverse=True)
        c = np.zeros((2, uniq.size))
        np.add.at(c, (np.concatenate(self._labels), inv), np.concatenate(self._counts))
        k = uniq.size
        lr = (np.log((c[1] + 0.5) / (self._n[1] + 0.5 * k))
              - np.log((c[0] + 0.5) / (self._n[0] + 0.5 * k)))
        return [OutcomeScorer(uniq, lr, row_dtype=self._row_dtype)]


# ----------------------------------------------------------------------------------------------
# Threshold sweep
# ----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class RankedEvent:
    """A candidate event with its training counts and the expected test-split bound used to rank it.

    ``count0``/``count1`` are occurrences among ``nobs0``/``nobs1`` selection-split runs on
    data0/data1; ``rank_value`` is the projected lower bound (ln for ``"epsilon"``, mu for
    ``"gdp"``).
    """

    event: ThresholdEvent | PooledEvent
    count0: int
    count1: int
    nobs0: int
    nobs1: int
    rank_value: float

    def to_dict(self) -> dict[str, Any]:
        return {"event": self.event.to_dict(), "count0": self.count0, "count1": self.count1,
                "nobs0": self.nobs0, "nobs1": self.nobs1,
                "projected_bound": _json_float(self.rank_value)}


@dataclass(frozen=True)
class ThresholdSweep:
    """All threshold events on one split with their ranking, from :func:`sweep_thresholds`.

    Arrays have shape ``(4, U)`` over the families ``(tail, numerator)`` in the order of
    :attr:`FAMILIES` and the ``U`` thresholds ``thresholds``.
    """

    FAMILIES = (("upper", 1), ("upper", 0), ("lower", 1), ("lower", 0))
    #: Pooled mirrored pairs (:class:`PooledEvent`): (family of ``first``, family of ``second``)
    #: as indices into :attr:`FAMILIES`.
    POOLED = ((0, 3), (2, 1))

    thresholds: np.ndarray
    count0: np.ndarray
    count1: np.ndarray
    nobs0: int
    nobs1: int
    rank: np.ndarray
    objective: Objective
    #: With ``pooled=True``: shape ``(2, U)`` arrays over :attr:`POOLED`: the index of the
    #: ``second`` threshold matched to each ``first`` threshold, the pooled selection counts
    #: (numerator side ``cp``, other side ``cq``, each over ``nobs0 + nobs1`` runs) and the rank.
    pooled_match: np.ndarray | None = None
    pooled_cp: np.ndarray | None = None
    pooled_cq: np.ndarray | None = None
    pooled_rank: np.ndarray | None = None

    @property
    def n_candidates(self) -> int:
        """How many events were compared (thresholds x tails x directions, plus pooled pairs)."""
        extra = 0 if self.pooled_rank is None else int(self.pooled_rank.size)
        return int(self.rank.size) + extra

    def _ranked(self, f: int, i: int) -> RankedEvent:
        if f >= len(self.FAMILIES):
            assert self.pooled_match is not None and self.pooled_rank is not None
            g = f - len(self.FAMILIES)
            fa, fb = self.POOLED[g]
            j = int(self.pooled_match[g, i])
            ev = PooledEvent(ThresholdEvent(self.FAMILIES[fa][0], self.thresholds[i], 1),
                             ThresholdEvent(self.FAMILIES[fb][0], self.thresholds[j], 0))
            n = self.nobs0 + self.nobs1
            assert self.pooled_cp is not None and self.pooled_cq is not None
            return RankedEvent(ev, int(self.pooled_cq[g, i]), int(self.pooled_cp[g, i]), n, n,
                               float(self.pooled_rank[g, i]))
        tail, num = self.FAMILIES[f]
        return RankedEvent(ThresholdEvent(tail, self.thresholds[i], num), int(self.count0[f, i]),
                           int(self.count1[f, i]), self.nobs0, self.nobs1, float(self.rank[f, i]))

    def best(self, m: int = 1) -> list[RankedEvent]:
        """The ``m`` (at most 4) best events, at most one per (tail, direction) family (and per
        pooled pair of families, when the sweep ranked pooled events).

        Taking one event per family keeps the ``m`` events evaluated on the test split genuinely
        different (neighbouring thresholds are nearly the same event). Ties go to the first.
        """
        m = check_int(m, "m", minimum=1, maximum=len(self.FAMILIES))
        if self.thresholds.size == 0:
            return []
        rank = self.rank if self.pooled_rank is None else np.vstack([self.rank,
                                                                    self.pooled_rank])
        idx = np.argmax(rank, axis=1)
        best = rank[np.arange(rank.shape[0]), idx]
        order = sorted(range(rank.shape[0]), key=lambda f: (-best[f], f))
        if self.pooled_rank is not None:
            # A pooled event is a candidate only where its rank is finite (disjoint pair).
            order = [f for f in order if f < len(self.FAMILIES) or math.isfinite(best[f])]
        return [self._ranked(f, int(idx[f])) for f in order[:m]]


#: Ranking level exponent: selection-split rates are bounded at level ``alpha / C**exponent`` for
#: ``C`` candidate events. At exponent 0 (no multiplicity penalty) a lucky tail count among
#: thousands of thresholds wins about once in a hundred audits and then gives a poor test bound
#: (Laplace eps = 1, 2e4 runs: worst of 200 seeds 0.61); at 1 (Bonferroni) the ranking is so
#: conservative that it avoids the tails that delta > 0 claims need (Gaussian at delta = 1e-5:
#: 0.60 instead of 0.72 of the exact epsilon at 1e6 runs). 1/4 keeps both (worst of 200 seeds
#: 0.89; 0.71). This only affects power: validity comes from the fresh test split.
SELECTION_PENALTY_EXPONENT = 0.25
#: The exponent for claims with ``delta > 0``. There the subtraction of ``delta`` already discounts
#: the rare events whose lucky selection counts the penalty guards against (an event needs
#: ``p_lo > delta``), and the best event of a Gaussian-like mechanism lies in a tail, where every
#: extra unit of conservatism pushes the choice towards smaller, weaker thresholds. Measured on
#: the Gaussian mechanism with exact epsilon 1 at delta = 1e-5 (identity statistic, pooled
#: mirrored events, test bound simulated exactly from the chosen thresholds; 40 seeds at 10^7 runs,
#: 100 at 10^6): exponent 0 gives mean 0.892 / 0.754 of the exact epsilon, exponent 0.25 gives
#: 0.864 / 0.69. Only power is at stake; validity comes from the fresh test split.
DELTA_SELECTION_PENALTY_EXPONENT = 0.0


#: Selection level of one of the engine's two extra rankings for ``delta > 0`` claims (the
#: "hedge" events of :func:`dpaudit.blackbox.empirical_audit.audit`): one standard error, ``Phi(-1)``, the
#: conventional one-SE shrinkage, not fitted to any mechanism. The main ranking of a ``delta > 0``
#: claim bounds the selection rates at the test level with no multiplicity penalty
#: (:data:`DELTA_SELECTION_PENALTY_EXPONENT`); the hedges re-rank the same selection split once
#: less conservatively (this level) and once more conservatively (the ``delta = 0`` exponent,
#: :data:`SELECTION_PENALTY_EXPONENT`), and every distinct pick is evaluated on the test split
#: under Bonferroni. Measured on the Gaussian mechanism with exact epsilon 1 at delta = 1e-5
#: (identity statistic, pooled events, test counts simulated exactly from the chosen thresholds,
#: seeds 100-299 at 10^7 runs, 100-399 at 10^6): mean 0.880 -> 0.881 and 0.741 -> 0.751 of the
#: exact epsilon, worst seed 0.67 -> 0.79 and 0.55 -> 0.65, standard deviation 0.038 -> 0.028:
#: the main ranking's occasional winner's-curse pick (a sparse-tail event with a denominator
#: count of 1 or 2 on the selection split) no longer decides the bound alone.
HEDGE_SELECTION_LEVEL = 0.15865525393145707


#: Discrete outputs (outcome likelihood ratio statistic): the selection-split bounds are
#: taken at level ``1 / C`` for ``C`` candidate events (``sweep_thresholds(...,
#: selection_level="one-lucky")``), the level at which about one of the ``C`` candidates clears its
#: bound by luck, so the maximum over candidates is not driven by selection noise, without the
#: test-split ``alpha`` that ``alpha / C**exponent`` mixes in (a second charge for the same
#: noise, which falls hardest on rare events of high ratio that the 18 times larger test split
#: resolves well). The candidate count of a discrete output is small (4 per distinct outcome
#: score), where the penalised level was validated on thousands of thresholds of continuous
#: scores. Simulated from exact laws (fit / selection / test counts drawn multinomially at 10^6
#: runs, 150 repetitions; benchmarks/discrete_selection_sim.py): sparse vector with a
#: high-ratio rare outcome (Lee-Clifton, ratio 0.17): mean test bound 0.113 (10% quantile 0.079)
#: against 0.103 (0.007) penalised; a two-sided geometric law on 61 outcomes (ratio 0.3 in the
#: tails, many rare outcomes where a lucky count could win): 0.295 either way. Only power is at
#: stake; validity comes from the fresh test split.
DISCRETE_SELECTION_LEVEL = "one-lucky"


def penalty_exponent(delta: float) -> float:
    """The selection-penalty exponent used for a claim with this ``delta``."""
    return SELECTION_PENALTY_EXPONENT if delta == 0 else DELTA_SELECTION_PENALTY_EXPONENT


def _thin(u: np.ndarray, max_thresholds: int | None) -> np.ndarray:
    if max_thresholds is None or u.size <= max_thresholds:
        return u
    half = max(1, max_thresholds // 2)
    ranks = np.geomspace(1.0, u.size, half) - 1.0
    ranks = np.floor(ranks)
    idx = unique_sorted(np.concatenate([ranks, u.size - 1 - ranks]).astype(np.int64))
    return u[idx]


def _projected_rates(cp: Any, np_: Any, cq: Any, nq: Any, ntp: Any, ntq: Any, alpha: float,
                     n_candidates: int, exponent: float = SELECTION_PENALTY_EXPONENT,
                     selection_alpha: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    # Two stages: a conservative value of each rate given the selection split, at a level that
    # shrinks with the number of candidates (so that a lucky tail count among thousands of
    # thresholds does not win), then the bound the test split would give at that rate.
    a_sel = (alpha / max(1, n_candidates) ** exponent if selection_alpha is None
             else selection_alpha)
    p_lo = wilson_lower(wilson_lower(np.asarray(cp) / np_, np_, a_sel), ntp, alpha)
    q_hi = wilson_upper(wilson_upper(np.asarray(cq) / nq, nq, a_sel), ntq, alpha)
    return p_lo, q_hi


def projected_log_ratio(count_p: int, nobs_p: int, count_q: int, nobs_q: int, n_test_p: int,
                        n_test_q: int, *, alpha: float, delta: float, candidates: int,
                        selection_alpha: float | None = None) -> float:
    """The ranking value :func:`sweep_thresholds` gives one event (``"epsilon"`` objective) with
    selection counts ``count_p / nobs_p`` on the numerator input and ``count_q / nobs_q`` on the
    other, when ``candidates`` events were compared (falls back to ``delta = 0`` like the sweep
    when ``p_lo <= delta``). ``selection_alpha`` overrides the level of the selection-split rate
    bounds, as in :func:`sweep_thresholds`."""
    p_lo, q_hi = _projected_rates(count_p, nobs_p, count_q, nobs_q, n_test_p, n_test_q, alpha,
                                  candidates, penalty_exponent(delta), selection_alpha)
    v = float(log_ratio_lower_bound(p_lo, q_hi, delta))
    if delta > 0 and not math.isfinite(v):
        v = float(log_ratio_lower_bound(p_lo, q_hi, 0.0))
    return v


def sweep_thresholds(scores0: np.ndarray, scores1: np.ndarray, *, n_test0: int, n_test1: int,
                     alpha: float, delta: float = 0.0,
                     objective: Objective = "epsilon",
                     max_thresholds: int | None = 8192,
                     pooled: bool = False,
                     sorted_scores: "SortedScores | None" = None,
                     selection_level: Literal["penalised", "one-lucky"] = "penalised",
                     selection_alpha: float | None = None,
                     penalty: float | None = None) -> ThresholdSweep:
    """Rank every threshold event on a selection split by the bound it should give on a test split.

    Parameters
    ----------
    scores0, scores1 : array, shape (n0,), (n1,)
        Scores of selection-split runs on data0 and data1.
    n_test0, n_test1 : int
        Sizes of the (future, independent) test split on each input.
    alpha : float in (0, 1)
        One-sided level of each test-split interval (the per-interval level of
        :class:`~dpaudit.blackbox.confidence.Bonferroni`).
    delta : float in [0, 1)
        The claim's delta (``"epsilon"`` objective only).
    objective : "epsilon" or "gdp"
        ``"epsilon"`` ranks by ``ln((p_lo - delta) / q_hi)``, ``"gdp"`` by
        ``Phi^-1(p_lo) - Phi^-1(q_hi)``: the bounds the test split would give (Wilson, level
        ``alpha``, test size) if the rates were the selection split's own Wilson bounds at level
        ``alpha / C**SELECTION_PENALTY_EXPONENT`` (``C`` candidate events). For ``"epsilon"``,
        if no event has ``p_lo > delta`` the ranking falls back to ``delta = 0``.
    max_thresholds : int or None
        Cap on the thresholds compared (None: all). Above it, thresholds are kept at ranks spaced
        geometrically from both ends of the sorted distinct scores, so both tails stay densely
        covered (relative rank spacing about ``ln(U) / (max_thresholds / 2)``) while the middle,
        where neighbouring events are nearly identical, is thinned.
    pooled : bool
        Also rank pooled mirrored pairs (:class:`PooledEvent`; ``"epsilon"`` objective only): each
        threshold of the families ``(upper, data1)`` and ``(lower, data1)`` is paired with the
        threshold of the mirror family (``(lower, data0)``, ``(upper, data0)``) whose numerator
        count on the selection split is closest, and the pair is ranked by the bound the pooled
        counts project over ``n0 + n1`` selection and ``n_test0 + n_test1`` test runs (at the same
        level and penalty as single events). Pairs that are not disjoint are not candidates.
        The selection-penalty exponent is :func:`penalty_exponent` of ``delta``.
    selection_level : "penalised" or "one-lucky"
        Level of the selection-split bounds: ``"penalised"`` is ``alpha / C**exponent`` (above);
        ``"one-lucky"`` is ``1 / C``, the level at which one of the ``C`` candidates is expected
        to clear its bound by luck (:data:`DISCRETE_SELECTION_LEVEL`; used for discrete outputs).
    sorted_scores : SortedScores, optional
        :meth:`SortedScores.of` ``(scores0, scores1)``, when the caller has it already (the
        engine sweeps the same scores for two objectives); it must be of these scores.
    selection_alpha : float in (0, 1), optional
        Level of the selection-split rate bounds in the ranking, overriding ``selection_level``
        (:data:`HEDGE_SELECTION_LEVEL`: the engine's less conservative hedge ranking for
        ``delta > 0`` claims).
    penalty : float >= 0, optional
        The selection-penalty exponent, in place of :func:`penalty_exponent` of ``delta``
        (the engine's more conservative hedge ranking for ``delta > 0`` claims uses
        :data:`SELECTION_PENALTY_EXPONENT`).

    Returns
    -------
    ThresholdSweep
        Thresholds are the distinct pooled scores except the largest; threshold ``t`` defines the
        events ``{score > t}`` and ``{score <= t}``, each in both directions.
    """
    alpha = check_probability(alpha, "alpha")
    delta = check_delta(delta)
    if max_thresholds is not None:
        max_thresholds = check_int(max_thresholds, "max_thresholds", minimum=2)
    if objective not in ("epsilon", "gdp"):
        raise ValueError(f"objective must be 'epsilon' or 'gdp', got {objective!r}")
    ss = SortedScores.of(scores0, scores1) if sorted_scores is None else sorted_scores
    s0, s1 = ss.scores0, ss.scores1
    n0, n1 = s0.size, s1.size
    u = _thin(ss.distinct[:-1], max_thresholds)
    le0 = np.searchsorted(s0, u, side="right")
    le1 = np.searchsorted(s1, u, side="right")
    # Families in ThresholdSweep.FAMILIES order: (upper,1), (upper,0), (lower,1), (lower,0).
    count0 = np.stack([n0 - le0, n0 - le0, le0, le0])
    count1 = np.stack([n1 - le1, n1 - le1, le1, le1])
    numerator_is_1 = np.array([True, False, True, False])[:, None]
    cp = np.where(numerator_is_1, count1, count0)
    cq = np.where(numerator_is_1, count0, count1)
    np_ = np.where(numerator_is_1, n1, n0)
    nq = np.where(numerator_is_1, n0, n1)
    ntp = np.where(numerator_is_1, n_test1, n_test0)
    ntq = np.where(numerator_is_1, n_test0, n_test1)
    n_cand = 4 * u.size
    if pooled and objective != "epsilon":
        raise ValueError("pooled events are ranked for the 'epsilon' objective only")
    if pooled and u.size:
        n_cand += 2 * u.size
    expo = penalty_exponent(delta) if objective == "epsilon" else SELECTION_PENALTY_EXPONENT
    if penalty is not None:
        expo = check_nonnegative(penalty, "penalty")
    if selection_level not in ("penalised", "one-lucky"):
        raise ValueError(f"selection_level must be 'penalised' or 'one-lucky', got "
                         f"{selection_level!r}")
    a_sel = None if selection_level == "penalised" else 1.0 / max(2, n_cand)
    if selection_alpha is not None:
        a_sel = check_probability(selection_alpha, "selection_alpha")
    key = (max_thresholds, n_test0, n_test1, alpha, n_cand, expo, a_sel)
    if key not in ss._rates:  # elementwise in the counts: the same values as computed afresh
        ss._rates[key] = _projected_rates(cp, np_, cq, nq, ntp, ntq, alpha, n_cand, expo, a_sel)
    p_lo, q_hi = ss._rates[key]
    pooled_arrays: dict[str, np.ndarray] = {}
    if pooled and u.size:
        match = np.empty((2, u.size), dtype=np.int64)
        pcp = np.empty((2, u.size), dtype=np.int64)
        pcq = np.empty((2, u.size), dtype=np.int64)
        disjoint = np.empty((2, u.size), dtype=bool)
        for g, (fa, fb) in enumerate(ThresholdSweep.POOLED):
            j = _nearest(cp[fb], cp[fa])
            match[g] = j
            pcp[g] = cp[fa] + cp[fb][j]
            pcq[g] = cq[fa] + cq[fb][j]
            upper_is_first = ThresholdSweep.FAMILIES[fa][0] == "upper"
            disjoint[g] = (u[j] < u) if upper_is_first else (u < u[j])
        pp_lo, pq_hi = _projected_rates(pcp, n0 + n1, pcq, n0 + n1, n_test0 + n_test1,
                                        n_test0 + n_test1, alpha, n_cand, expo, a_sel)
        pool_rank = np.where(disjoint, np.asarray(log_ratio_lower_bound(pp_lo, pq_hi, delta)),
                             -np.inf)
        pooled_arrays = {"pooled_match": match, "pooled_cp": pcp, "pooled_cq": pcq,
                         "pooled_rank": np.asarray(pool_rank, dtype=np.float64)}
    if objective == "epsilon":
        rank = np.asarray(log_ratio_lower_bound(p_lo, q_hi, delta))
        if delta > 0 and rank.size and not np.any(np.isfinite(rank)):
            rank = np.asarray(log_ratio_lower_bound(p_lo, q_hi, 0.0))
    else:
        with np.errstate(divide="ignore"):
            # special.ndtri = stats.norm.ppf on [0, 1] (-inf at 0, inf at 1), without its
            # per-call overhead.
            rank = special.ndtri(p_lo) - special.ndtri(q_hi)
        rank = np.where(np.isnan(rank), -np.inf, rank)
    return ThresholdSweep(u, count0, count1, n0, n1, np.asarray(rank, dtype=np.float64), objective,
                          **pooled_arrays)


def _nearest(values: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """Index into the monotone (non-decreasing or non-increasing) ``values`` of the entry closest
    to each of ``targets`` (the first such entry on ties)."""
    v = np.asarray(values)
    flip = v.size > 1 and v[0] > v[-1]
    w = v[::-1] if flip else v
    pos = np.clip(np.searchsorted(w, targets), 0, w.size - 1)
    left = np.clip(pos - 1, 0, w.size - 1)
    pick = np.where(np.abs(w[left] - targets) <= np.abs(w[pos] - targets), left, pos)
    return (w.size - 1 - pick) if flip else pick


# ----------------------------------------------------------------------------------------------
# Histogram of the test-split statistic
# ----------------------------------------------------------------------------------------------

@dataclass
class HistogramAccumulator:
    """Histogram of scores on both inputs with bin edges fixed in advance (from training scores).

    Edges: between the distinct training scores when there are at most ``bins`` of them (discrete
    statistics), else ``bins`` equal-width bins over the pooled 0.1%..99.9% training quantiles;
    for a lattice statistic (all scores on ``a + k * step``) at most ``bins`` bins of a whole number
    of lattice steps, with edges halfway between lattice points.
    Scores outside the edges are counted in the first or last bin (so counts sum to the number of
    scores); ``clipped0``/``clipped1`` say how many were.
    """

    edges: np.ndarray
    counts: np.ndarray = field(init=False)
    clipped: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        self.edges = np.asarray(self.edges, dtype=np.float64)
        self.counts = np.zeros((2, self.edges.size - 1), dtype=np.int64)
        self.clipped = np.zeros(2, dtype=np.int64)

    @classmethod
    def from_training(cls, scores0: np.ndarray, scores1: np.ndarray,
                      bins: int = 40, sorted_scores: SortedScores | None = None
                      ) -> "HistogramAccumulator":
        """Edges from the training scores (``sorted_scores``: :meth:`SortedScores.of` them, when
        the caller has it; the edges are the same)."""
        if sorted_scores is None:
            pooled = np.concatenate([np.asarray(scores0, float), np.asarray(scores1, float)])
            finite = pooled[np.isfinite(pooled)]
            uniq = np.unique(finite) if finite.size else finite
        else:
            pooled, uniq = sorted_scores.pooled, sorted_scores.distinct
            # Sorted, NaN last: all finite when both ends are (no copy then).
            ends_finite = pooled.size and np.isfinite(pooled[0]) and np.isfinite(pooled[-1])
            finite = pooled if ends_finite else pooled[np.isfinite(pooled)]
            uniq = uniq if ends_finite else uniq[np.isfinite(uniq)]
        if finite.size == 0:
            return cls(np.array([-0.5, 0.5]))
        # Scores near +-1.8e308 overflow their differences (NaN edges, RuntimeWarnings).
        with np.errstate(over="ignore", invalid="ignore"):
            return cls._edges_of(finite, uniq, bins)

    @classmethod
    def _edges_of(cls, finite: np.ndarray, uniq: np.ndarray, bins: int) -> "HistogramAccumulator":
        if uniq.size <= bins:
            if uniq.size == 1:
                return cls(np.array([uniq[0] - 0.5, uniq[0] + 0.5]))
            mids = 0.5 * uniq[1:] + 0.5 * uniq[:-1]
            gap0, gap1 = uniq[1] - uniq[0], uniq[-1] - uniq[-2]
            edges = np.concatenate([[uniq[0] - 0.5 * gap0], mids, [uniq[-1] + 0.5 * gap1]])
            return cls(edges if np.isfinite(edges).all() else np.r_[uniq[0], mids, uniq[-1]])
        lo, hi = np.quantile(finite, [0.001, 0.999])
        if not (np.isfinite(lo) and np.isfinite(hi) and hi > lo):
            lo, hi = uniq[0], uniq[-1]
        step = float(np.min(np.diff(uniq)))
        # The whole lattice check only when the span is at most 1e6 steps (a continuous score's
        # smallest gap makes it astronomically more; same outcome, without passes over uniq).
        if (np.isfinite(uniq[-1] - uniq[0]) and np.round((uniq[-1] - uniq[0]) / step) <= 1e6
                and np.all(np.abs((uniq - uniq[0])
                                  - np.round((uniq - uniq[0]) / step) * step) <= 1e-6 * step)):
            # A lattice statistic (counts, ranks, indices): bins of a whole number of lattice
            # steps centred between lattice points, so no bin is empty only because no lattice
            # point falls in it (equal-width bins would draw such holes as dips in the figure).
            lo_k = np.floor((lo - uniq[0]) / step)
            hi_k = np.ceil((hi - uniq[0]) / step)
            width = max(1, int(np.ceil((hi_k - lo_k + 1) / bins)))
            nbins = int(np.ceil((hi_k - lo_k + 1) / width))
            start = uniq[0] + (lo_k - 0.5) * step
            return cls(start + step * width * np.arange(nbins + 1))
        return cls(2.0 * np.linspace(0.5 * lo, 0.5 * hi, bins + 1))  # halves: hi - lo may overflow

    def update(self, scores: np.ndarray, label: int) -> None:
        self.update_sorted(np.sort(np.asarray(scores, dtype=np.float64)), label)

    def update_sorted(self, sorted_scores: np.ndarray, label: int) -> None:
        """:meth:`update` with the scores already sorted (ascending, no NaN).

        The counts are those of ``np.histogram(np.clip(scores, lo, hi), bins=edges)`` (bin ``i``
        is ``[edges[i], edges[i+1])``, the last one closed): clipping moves a score below ``lo``
        into the first bin and one above ``hi`` into the last, and changes no comparison with an
        interior edge, so bin ``i`` holds ``#(s < edges[i+1]) - #(s < edges[i])`` over the
        interior edges, the first bin ``#(s < edges[1])`` and the last the rest.
        """
        s = sorted_scores
        n = s.size
        lo, hi = self.edges[0], self.edges[-1]
        below = int(np.searchsorted(s, lo, side="left"))
        above = n - int(np.searchsorted(s, hi, side="right"))
        self.clipped[label] += below + above
        cuts = np.searchsorted(s, self.edges[1:-1], side="left")
        self.counts[label] += np.diff(np.concatenate([[0], cuts, [n]]))

    def to_dict(self, threshold: float | None = None, statistic: str = "",
                parameters: dict[str, Any] | None = None) -> dict[str, Any]:
        """The ``figures["histogram"]`` convention of :mod:`dpaudit.claims.record`."""
        return {"edges": [float(e) for e in self.edges],
                "counts0": [int(c) for c in self.counts[0]],
                "counts1": [int(c) for c in self.counts[1]],
                "clipped0": int(self.clipped[0]), "clipped1": int(self.clipped[1]),
                "threshold": None if threshold is None else _json_float(threshold),
                "statistic": statistic, "parameters": dict(parameters or {})}
