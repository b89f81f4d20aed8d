"""A rare tail event of a scalar output near the end of a bounded support, fitted by a parametric tail.

Where a scalar output's support ends (exponential noise added to a maximum, a clipped value) the
best event can be a threshold so deep in one input's tail that counting cannot rank it. This fitter
estimates each input's tail rates from the shape of its tail instead: on the fit split it fits a
generalised Pareto law (Pickands 1975; Balkema & de Haan 1974) to the ``k`` most extreme runs by
maximum likelihood (``scipy.stats.genpareto.fit``, location 0) and fixes the threshold whose
modelled rates project the highest test bound. It offers a candidate only where both inputs' tails
are significantly bounded (``xi + 3 (1 + xi) / sqrt(k) < 0``, the estimate's standard error by
Smith 1985), never for ``delta > 0``, and the candidate must still beat the classical statistic on
fresh selection runs (:func:`dpaudit.blackbox.learned_statistics.choose`). Validity does not
depend on the model: the event is fixed on the fit split and the bound comes from the untouched
test split.

The case it targets, the gate and why it is strict: docs/blackbox-notes.md#parametric-tail-events.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import stats

from dpaudit.blackbox.confidence import log_ratio_lower_bound, wilson_lower, wilson_upper
from dpaudit.blackbox.statistic_protocol import Fitter, Scorer
from dpaudit.blackbox.statistics import flatten_outputs

__all__ = ["TailEventScorer", "TailEventFitter", "fit_tail", "TAIL_FRACTION", "MIN_TAIL_RUNS"]

#: Fraction of each input's fit runs treated as its tail (the exceedances the generalised Pareto
#: law is fitted to): 3%, a conventional peaks-over-threshold choice; at 5 x 10^4 fit runs 1,500
#: exceedances give the shape to about +-0.03.
TAIL_FRACTION = 0.03
#: Fewer tail runs than this and no candidate (the shape estimate is too noisy to extrapolate).
MIN_TAIL_RUNS = 200
#: Memory cap on the fit values kept per input.
MAX_VALUES = 1_000_000
#: Standard errors by which the fitted shape must be below 0 (a bounded tail).
BOUNDED_GATE_SE = 3.0


@dataclass(frozen=True)
class TailFit:
    """A generalised Pareto fit of one input's lower tail: ``P(X <= u - y) = (k / n) sf(y)``."""

    u: float
    k: int
    n: int
    shape: float
    scale: float

    @property
    def bounded(self) -> bool:
        """The shape is below 0 by :data:`BOUNDED_GATE_SE` standard errors (a finite endpoint)."""
        return bool(self.shape + BOUNDED_GATE_SE * (1.0 + self.shape) / math.sqrt(self.k) < 0)

    def lower_rate(self, t: np.ndarray, sorted_values: np.ndarray) -> np.ndarray:
        """``P(X <= t)``: the fitted tail below ``u``, the empirical rate at and above it."""
        t = np.asarray(t, dtype=np.float64)
        emp = np.searchsorted(sorted_values, t, side="right") / self.n
        mod = (self.k / self.n) * stats.genpareto.sf(self.u - t, self.shape, loc=0.0,
                                                     scale=self.scale)
        return np.where(t < self.u, mod, emp)


def fit_tail(sorted_values: np.ndarray, k: int) -> TailFit | None:
    """Fit the lower tail of one input's sorted fit values: the ``k`` smallest below the
    ``(k + 1)``-th (``None`` if the fit fails or the exceedances are degenerate)."""
    n = sorted_values.size
    if k < 2 or n <= k:
        return None
    u = float(sorted_values[k])
    y = u - sorted_values[:k]
    if not np.all(np.isfinite(y)) or np.ptp(y) <= 0:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            shape, _, scale = stats.genpareto.fit(y, floc=0.0)
        except (ValueError, RuntimeError, FloatingPointError):
            return None
    if not (math.isfinite(shape) and math.isfinite(scale) and scale > 0 and shape > -0.5):
        return None
    return TailFit(u, k, n, float(shape), float(scale))


@dataclass(frozen=True)
class TailEventScorer(Scorer):
    """``1`` if the scalar output is at or beyond ``threshold`` in the ``tail`` (``"lower"``:
    ``x <= threshold``; ``"upper"``: ``x >= threshold``), else ``0`` (row-wise)."""

    tail: str
    threshold: float
    numerator: int
    fitted_shape: float
    name: str = "tail event (generalised Pareto)"
    #: Its event was fixed on the fit split: the selection split ranks it at its observed rates.
    events_fixed_on_fit: bool = True

    def fixed_numerator(self) -> int:
        return self.numerator

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        x = flatten_outputs(outputs)[:, 0].astype(np.float64, copy=False)
        hit = x <= self.threshold if self.tail == "lower" else x >= self.threshold
        return hit.astype(np.float64)

    def to_dict(self) -> dict[str, Any]:
        op = "<=" if self.tail == "lower" else ">="
        return {"name": self.name, "tail": self.tail, "threshold": self.threshold,
                "numerator": self.numerator, "denominator_tail_shape": self.fitted_shape,
                "description": (f"1 if output {op} {self.threshold:.6g} (a tail event fixed on "
                                "the fit split from generalised Pareto fits of both inputs' "
                                f"tails, more likely on data{self.numerator}), else 0")}


@dataclass
class TailEventFitter(Fitter):
    """Keeps the fit split's scalar values; ``finish()`` gives one :class:`TailEventScorer` when a
    tail of the denominator input is significantly bounded and the modelled rates project a
    positive bound, else nothing (docs/blackbox-notes.md#parametric-tail-events)."""

    n_test: int | None = None
    delta: float = 0.0
    alpha: float = 0.05
    _kept: list[list[np.ndarray]] = field(default_factory=lambda: [[], []])
    _size: list[int] = field(default_factory=lambda: [0, 0])

    def configure(self, *, n_test: int, delta: float, pooled: bool, alpha: float) -> None:
        """The test the fixed event will face (its size per input and per-interval level)."""
        self.n_test, self.delta, self.alpha = int(n_test), float(delta), float(alpha)

    def prepare(self, probe0: np.ndarray, probe1: np.ndarray) -> None:
        pass

    def update(self, outputs: np.ndarray, label: int) -> None:
        x = flatten_outputs(outputs)
        if x.shape[1] != 1:
            return
        room = MAX_VALUES - self._size[label]
        if room <= 0:
            return
        v = np.asarray(x[:room, 0], dtype=np.float64)
        self._kept[label].append(v)
        self._size[label] += v.size

    def finish(self) -> list[TailEventScorer]:
        if self.delta > 0 or not self._kept[0] or not self._kept[1]:
            return []
        xs = [np.sort(np.concatenate(k)) for k in self._kept]
        self._kept = [[], []]
        if not all(np.all(np.isfinite(x)) for x in xs):
            return []
        n_test = self.n_test if self.n_test is not None else 18 * min(x.size for x in xs)
        best: tuple[float, TailEventScorer | None] = (0.0, None)
        for tail, sign in (("lower", 1.0), ("upper", -1.0)):
            # The upper tail is the lower tail of -x (sorted ascending).
            ys = xs if sign > 0 else [np.sort(-x) for x in xs]
            ks = [max(MIN_TAIL_RUNS, int(TAIL_FRACTION * y.size)) for y in ys]
            fits = [fit_tail(y, k) for y, k in zip(ys, ks)]
            if any(f is None for f in fits):
                continue
            cand = np.unique(np.concatenate([y[:4 * k] for y, k in zip(ys, ks)]))
            rates = [f.lower_rate(cand, y) for f, y in zip(fits, ys)]  # type: ignore[union-attr]
            if not all(f.bounded for f in fits):  # type: ignore[union-attr]
                continue
            for num in (0, 1):
                den = 1 - num
                p_lo = wilson_lower(rates[num], n_test, self.alpha)
                q_hi = wilson_upper(rates[den], n_test, self.alpha)
                v = np.nan_to_num(np.asarray(log_ratio_lower_bound(p_lo, q_hi, 0.0)),
                                  nan=-np.inf)
                i = int(np.argmax(v))
                if v[i] > best[0]:
                    best = (float(v[i]), TailEventScorer(
                        tail, float(sign * cand[i]), num,
                        fits[den].shape))  # type: ignore[union-attr]
        return [best[1]] if best[1] is not None else []
