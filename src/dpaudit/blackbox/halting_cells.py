"""Sparse vectors that release values: one event, a union of (halting pattern x value bin) cells.

A sparse vector that releases the noisy value at its "above" answer (Lyu, Su and Li, PVLDB 10(6),
2017, Alg. 3) leaks through the halting pattern and the released value jointly; on DP-Sniper's
SVT3 the exact law's best event is a union of such cells that no additive score ranks. This
statistic estimates one log ratio per cell (a halting pattern, as in
:mod:`dpaudit.blackbox.halting_statistics`, crossed with :data:`CELL_BINS` equal-mass bins of the
released values), shrinks the cells towards their pattern and the patterns towards 0 (empirical
Bayes by the method of moments; Efron and Morris, JASA 70, 1975), and takes as its event the
prefix of the sorted cells that projects the best test bound (rates at :data:`PREFIX_LEVEL`).
The event is fixed on all training runs (``in_sample``); the choice among statistics stays fair
through its fit-split event and :func:`replaces_choice`. Validity does not rest on the fit: the
event is fixed before the test split is drawn and counted on fresh runs. No candidate for
``delta > 0`` claims, nor without both atoms and released values.

The design, its measurements and the rejected variants: docs/blackbox-notes.md#halting-cells
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpaudit.blackbox.confidence import log_ratio_lower_bound, wilson_lower, wilson_upper
from dpaudit.blackbox.fitters_binned import ATOM_FRACTION
from dpaudit.blackbox.pattern_statistics import MAX_PATTERNS, numeric_probe_rows, void_keys
from dpaudit.blackbox.statistic_protocol import Fitter, Scorer
from dpaudit.blackbox.statistics import flatten_outputs

__all__ = ["CELL_BINS", "PREFIX_LEVEL", "REPLACE_MARGIN_SE", "HaltingCellScorer",
           "HaltingCellFitter", "shrunk_cell_log_ratios", "best_prefix", "shrunk_event_value",
           "replaces_choice"]

#: Equal-mass bins of the released values per halting pattern. Measured on SVT3 in sample
#: (seeds 0-19, exact test bounds): 2 bins 0.127, 3 bins 0.124, 4 bins 0.134, 8 bins 0.132.
CELL_BINS = 4
#: One-sided level of the Wilson bounds on a prefix's training rates when the prefix is chosen
#: (0.3: about half a standard error). Measured on SVT3 in sample, seeds 20-39: 0.128 at 0.2,
#: 0.130 at 0.3, 0.131 at 0.4; the rates themselves (level 1/2) pick rare prefixes inflated by
#: chance (0.121, minimum 0.064).
PREFIX_LEVEL = 0.3
#: Standard errors (of the in-sample event's log ratio) by which its shrunk value must beat the
#: choice's projection in :func:`replaces_choice`: one, the engine's margin for a challenger
#: replacing a choice (``learned_statistics.SWITCH_MARGIN_SE``).
REPLACE_MARGIN_SE = 1.0


def shrunk_cell_log_ratios(counts0: np.ndarray, counts1: np.ndarray) -> np.ndarray:
    """Empirical-Bayes cell log ratios ``ln(P1[cell] / P0[cell])``, shrunk towards each
    pattern's.

    Parameters
    ----------
    counts0, counts1 : array, shape (P, B)
        Runs of each input per (pattern, value bin) cell.

    Returns
    -------
    array, shape (P, B)
        ``lp + w (lc - lp)`` with ``lc`` the cell's add-1/2 log ratio
        ``ln((k1 + 1/2) / N1) - ln((k0 + 1/2) / N0)``, ``w = tau^2 / (tau^2 + s^2)`` with the
        cell's sampling variance ``s^2 = 1/(k0 + 1/2) + 1/(k1 + 1/2)`` and
        ``tau^2 = max(0, sum_c m_c (d_c^2 - s_c^2) / sum_c m_c)`` over the cells seen
        (``m_c = k0 + k1``, ``d_c = lc - lp``): the method-of-moments signal variance (Efron and
        Morris 1975). ``lp`` is the pattern's add-1/2 log ratio
        ``ln((K1_p + 1/2) / N1) - ln((K0_p + 1/2) / N0)`` shrunk the same way towards 0 (over the
        patterns, weights ``K0_p + K1_p``). Cells never seen get their pattern's ratio.
        Shrinking the patterns too: measured on SVT3 in sample (seeds 100-259, exact test
        bounds) 0.115 -> 0.120.
    """
    c0 = np.asarray(counts0, dtype=np.float64)
    c1 = np.asarray(counts1, dtype=np.float64)
    if c0.shape != c1.shape or c0.ndim != 2:
        raise ValueError(f"counts0 and counts1 must be 2-D arrays of one shape, got {c0.shape} "
                         f"and {c1.shape}")
    if np.any(c0 < 0) or np.any(c1 < 0):
        raise ValueError("counts0 and counts1 must be non-negative")
    n0, n1 = c0.sum(), c1.sum()
    if n0 <= 0 or n1 <= 0:
        raise ValueError("counts0 and counts1 must each count at least one run")
    k0, k1 = c0.sum(axis=1), c1.sum(axis=1)
    lp = _shrunk(np.log((k1 + 0.5) / n1) - np.log((k0 + 0.5) / n0), np.zeros(k0.shape),
                 1.0 / (k0 + 0.5) + 1.0 / (k1 + 0.5), k0 + k1)
    lc = np.log((c1 + 0.5) / n1) - np.log((c0 + 0.5) / n0)
    return _shrunk(lc, np.broadcast_to(lp[:, None], lc.shape),
                   1.0 / (c0 + 0.5) + 1.0 / (c1 + 0.5), c0 + c1)


def _shrunk(est: np.ndarray, centre: np.ndarray, s2: np.ndarray, m: np.ndarray) -> np.ndarray:
    """``centre + w (est - centre)`` with ``w = tau^2 / (tau^2 + s2)`` and the method-of-moments
    ``tau^2 = max(0, sum m (d^2 - s2) / sum m)`` over the entries with ``m > 0``
    (``d = est - centre``); entries with ``m = 0`` get the centre."""
    d = est - centre
    seen = m > 0
    tau2 = max(0.0, float(np.sum((m * (d * d - s2))[seen]) / np.sum(m[seen])))
    return centre + np.where(seen, tau2 / (tau2 + s2), 0.0) * d


def best_prefix(counts0: np.ndarray, counts1: np.ndarray, log_ratios: np.ndarray, *,
                n_test: int, alpha: float, delta: float = 0.0,
                level: float = PREFIX_LEVEL) -> tuple[float, np.ndarray, int] | None:
    """The union of cells, a prefix of the cells sorted by ``log_ratios`` in either direction,
    whose training counts project the highest test bound.

    A prefix with counts ``(kp, kq)`` on the numerator and the other input (``Np``, ``Nq`` runs)
    projects ``ln((wilson_lower(w_lo, n_test, alpha) - delta) / wilson_upper(w_hi, n_test,
    alpha))`` with ``w_lo = wilson_lower(kp / Np, Np, level)`` and
    ``w_hi = wilson_upper(kq / Nq, Nq, level)`` (falling back to ``delta = 0`` where no prefix
    has a finite value). Cells with no run on either input are left out.

    Returns
    -------
    (projected bound, cell mask of shape (P, B), numerator) or None
        None when no prefix projects a bound above 0.
    """
    c0 = np.asarray(counts0, dtype=np.float64).ravel()
    c1 = np.asarray(counts1, dtype=np.float64).ravel()
    lr = np.asarray(log_ratios, dtype=np.float64).ravel()
    n0, n1 = c0.sum(), c1.sum()
    seen = (c0 + c1) > 0
    best: tuple[float, np.ndarray, int] | None = None
    for d in (delta, 0.0) if delta > 0 else (0.0,):
        for num in (1, 0):
            order = np.argsort(-lr if num == 1 else lr, kind="stable")
            order = order[seen[order]]
            if order.size == 0:
                continue
            kp = np.cumsum((c1 if num == 1 else c0)[order])
            kq = np.cumsum((c0 if num == 1 else c1)[order])
            npp, nq = (n1, n0) if num == 1 else (n0, n1)
            p_lo = wilson_lower(wilson_lower(kp / npp, npp, level), n_test, alpha)
            q_hi = wilson_upper(wilson_upper(kq / nq, nq, level), n_test, alpha)
            with np.errstate(divide="ignore", invalid="ignore"):
                v = np.nan_to_num(np.asarray(log_ratio_lower_bound(p_lo, q_hi, d), dtype=float),
                                  nan=-np.inf)
            i = int(np.argmax(v))
            if v[i] > 0 and (best is None or v[i] > best[0]):
                mask = np.zeros(lr.size, dtype=bool)
                mask[order[:i + 1]] = True
                best = (float(v[i]), mask.reshape(np.shape(log_ratios)), num)
        if best is not None:
            break
    return best


def shrunk_event_value(counts0: np.ndarray, counts1: np.ndarray, mask: np.ndarray,
                       numerator: int, *, n_test: int, alpha: float,
                       delta: float = 0.0) -> tuple[float, float]:
    """The test bound a union of cells projects at its empirical-Bayes rates, and the standard
    error of its log ratio.

    Each cell keeps its observed mean rate ``m = (k0 / N0 + k1 / N1) / 2`` and takes the shrunk
    log ratio ``l`` of :func:`shrunk_cell_log_ratios` as its ratio:
    ``p1 = 2 m e^l / (1 + e^l)``, ``p0 = 2 m / (1 + e^l)``. Summed over ``mask`` they give the
    event's rates ``P`` (on ``numerator``) and ``Q``, projected as
    ``ln((wilson_lower(P, n_test, alpha) - delta) / wilson_upper(Q, n_test, alpha))`` (falling
    back to ``delta = 0``). The cells were sorted by these same counts; a posterior mean is not
    inflated by that selection the way the raw counts are (Efron, JASA 106, 2011, "Tweedie's
    formula and selection bias", Sec. 2), which a Wilson level ``1 / C`` over the ``C``
    prefixes does not cover when the order itself comes from the counts.

    Returns
    -------
    (value, se)
        ``value`` as above (``-inf`` where nothing is projected); ``se`` the delta-method
        standard error ``sqrt((1 - p) / (N_p p) + (1 - q) / (N_q q))`` of the event's raw log
        ratio, ``p = (k_p + 1/2) / (N_p + 1)`` from its counts.
    """
    c = [np.asarray(counts0, dtype=np.float64), np.asarray(counts1, dtype=np.float64)]
    n = [float(c[0].sum()), float(c[1].sum())]
    lr = shrunk_cell_log_ratios(c[0], c[1])
    m = (c[0] / n[0] + c[1] / n[1]) / 2.0
    rate1 = 2.0 * m / (1.0 + np.exp(-lr))
    rate0 = 2.0 * m / (1.0 + np.exp(lr))
    big_p, big_q = ((rate1, rate0) if numerator == 1 else (rate0, rate1))
    p, q = float(big_p[mask].sum()), float(big_q[mask].sum())
    p_lo, q_hi = wilson_lower(p, n_test, alpha), wilson_upper(q, n_test, alpha)
    with np.errstate(divide="ignore", invalid="ignore"):
        v = float(log_ratio_lower_bound(p_lo, q_hi, delta))
        if delta > 0 and not np.isfinite(v):
            v = float(log_ratio_lower_bound(p_lo, q_hi, 0.0))
    kp, kq = float(c[numerator][mask].sum()), float(c[1 - numerator][mask].sum())
    npp, nq = n[numerator], n[1 - numerator]
    rp, rq = (kp + 0.5) / (npp + 1.0), (kq + 0.5) / (nq + 1.0)
    se = float(np.sqrt((1 - rp) / (npp * rp) + (1 - rq) / (nq * rq)))
    return (v if np.isfinite(v) else -np.inf), se


@dataclass(frozen=True)
class _PatternCoding:
    """Atoms shared by every coordinate, and the known halting patterns (sorted void keys)."""

    atoms: np.ndarray
    patterns: np.ndarray

    def codes(self, x: np.ndarray) -> np.ndarray:
        """Per entry the index of its atom, or -1 for a released value."""
        a = self.atoms
        pos = np.minimum(np.searchsorted(a, x), a.size - 1)
        return np.where(a[pos] == x, pos, -1).astype(np.int16)

    def pattern_ids(self, code: np.ndarray) -> np.ndarray:
        """Index of each row's pattern among the known ones; ``len(patterns)`` for the rest."""
        p = self.patterns
        if p.size == 0:
            return np.zeros(code.shape[0], dtype=np.int64)
        keys = void_keys(code)
        pos = np.minimum(np.searchsorted(p, keys), p.size - 1)
        return np.where(p[pos] == keys, pos, p.size)


@dataclass(frozen=True)
class _CellCoding:
    """The halting patterns and per-pattern interior edges of the released-value bins
    (``P + 1`` entries: the known patterns, then the bucket of all other patterns)."""

    patterns: _PatternCoding
    edges: tuple[np.ndarray, ...]

    def cells(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(pattern index, value bin) of each row of the 2-D float array ``x``."""
        code = self.patterns.codes(x)
        pid = self.patterns.pattern_ids(code)
        total = np.where(code < 0, x, 0.0).sum(axis=1)
        b = np.zeros(x.shape[0], dtype=np.int64)
        for k in np.unique(pid):
            rows = pid == k
            b[rows] = np.searchsorted(self.edges[k], total[rows], side="left")
        return pid, b


@dataclass(frozen=True)
class HaltingCellScorer(Scorer):
    """``1`` if the row's (halting pattern, value bin) cell is in the chosen union, else ``0``."""

    coding: _CellCoding
    mask: np.ndarray        # (P + 1, CELL_BINS) bool: the cells of the event
    numerator: int          # the input on which the event is more likely (fixed in training)
    log_ratios: np.ndarray  # (P + 1, CELL_BINS) the shrunk estimates the cells were sorted by
    name: str = "halting pattern x released-value cells"
    #: The event was fixed in training: the engine ranks and compares it at its rates.
    events_fixed_on_fit: bool = True

    def fixed_numerator(self) -> int:
        return self.numerator

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        x = flatten_outputs(outputs).astype(np.float64, copy=False)
        pid, b = self.coding.cells(x)
        return self.mask[pid, b].astype(np.float64)

    def to_dict(self) -> dict[str, Any]:
        n_pat = int(self.coding.patterns.patterns.size)
        return {"name": self.name, "patterns": n_pat, "value_bins": int(self.mask.shape[1]),
                "cells_in_event": int(self.mask.sum()), "numerator": self.numerator,
                "atoms": [float(a) for a in self.coding.patterns.atoms[:8]],
                "fingerprint": [float(v) for v in self.log_ratios.ravel()[:64]],
                "description": (f"1 if the row's cell is one of the {int(self.mask.sum())} cells "
                                f"of the event, else 0; a cell is a halting pattern ({n_pat} "
                                "patterns of the probe, the rest pooled) crossed with one of "
                                f"{self.mask.shape[1]} equal-mass bins of its released values' "
                                "sum; the cells' log ratios (empirical-Bayes shrunk towards the "
                                "pattern's) and the union, more likely on "
                                f"data{self.numerator}, were fixed on all training runs")}


@dataclass
class HaltingCellFitter(Fitter):
    """Counts per (halting pattern, value bin) cell; ``finish()`` gives one
    :class:`HaltingCellScorer` or nothing (module docstring).

    ``in_sample`` tells the engine to feed this fitter the selection split too (after the fit
    split) and to take :meth:`training_scores` as its selection scores; a caller that feeds it
    only a fit split gets an event fixed on that split, as valid.
    """

    bins: int = CELL_BINS
    n_test: int | None = None
    delta: float = 0.0
    alpha: float = 0.05
    in_sample: bool = True
    _coding: _CellCoding | None = None
    _counts: np.ndarray | None = None
    _scorer: HaltingCellScorer | None = None
    _n: list[int] = field(default_factory=lambda: [0, 0])

    def configure(self, *, n_test: int, delta: float, pooled: bool, alpha: float) -> None:
        """The test the fixed event will face (its size per input and per-interval level)."""
        self.n_test, self.delta, self.alpha = int(n_test), float(delta), float(alpha)

    def prepare(self, probe0: np.ndarray, probe1: np.ndarray) -> None:
        x = numeric_probe_rows(probe0, probe1)
        if x is None:
            return
        u, c = np.unique(x, return_counts=True)
        atoms = u[c >= max(2, ATOM_FRACTION * x.size)]
        if atoms.size == 0:
            return
        code = _PatternCoding(atoms, np.empty(0, dtype=np.void)).codes(x)
        if not np.any(code < 0):
            return
        keys, counts = np.unique(void_keys(code), return_counts=True)
        if keys.size < 2:
            return
        patterns = _PatternCoding(atoms, np.sort(keys[np.argsort(-counts,
                                                                kind="stable")[:MAX_PATTERNS]]))
        pid = patterns.pattern_ids(code)
        released = np.any(code < 0, axis=1)
        total = np.where(code < 0, x, 0.0).sum(axis=1)
        inner = np.linspace(0, 1, self.bins + 1)[1:-1]
        pooled = np.quantile(total[released], inner)
        edges = []
        for k in range(patterns.patterns.size + 1):
            v = total[(pid == k) & released]
            edges.append(np.quantile(v, inner) if v.size >= 2 * self.bins else pooled)
        self._coding = _CellCoding(patterns, tuple(edges))
        self._counts = np.zeros((2, patterns.patterns.size + 1, self.bins))

    def update(self, outputs: np.ndarray, label: int) -> None:
        if self._coding is None or self._counts is None:
            return
        x = flatten_outputs(outputs).astype(np.float64, copy=False)
        pid, b = self._coding.cells(x)
        p, nb = self._counts.shape[1:]
        self._counts[label] += np.bincount(pid * nb + b, minlength=p * nb).reshape(p, nb)
        self._n[label] += x.shape[0]

    def finish(self) -> list[HaltingCellScorer]:
        self._scorer = None
        if (self.delta > 0 or self._coding is None or self._counts is None
                or min(self._n) == 0):
            return []
        c0, c1 = self._counts
        lr = shrunk_cell_log_ratios(c0, c1)
        n_test = self.n_test if self.n_test is not None else 9 * min(self._n)
        pick = best_prefix(c0, c1, lr, n_test=n_test, alpha=self.alpha, delta=self.delta)
        if pick is None:
            return []
        self._scorer = HaltingCellScorer(self._coding, pick[1], pick[2], lr)
        return [self._scorer]

    def conservative_value(self) -> float:
        """The test bound the finished event projects from the counts it was fixed on, each rate
        at its Wilson bound of level ``1 / C`` (``C``: twice the cells seen, the candidate
        prefixes), the level at which one of ``C`` candidates clears its bound by luck (the
        engine's rule for outcome sets chosen in sample); ``-inf`` without an event."""
        if self._scorer is None or self._counts is None:
            return -np.inf
        c0, c1 = self._counts
        level = 1.0 / max(2, 2 * int(np.count_nonzero(c0 + c1)))
        k = [float(c[self._scorer.mask].sum()) for c in (c0, c1)]
        num = self._scorer.numerator
        kp, kq, npp, nq = k[num], k[1 - num], self._n[num], self._n[1 - num]
        n_test = self.n_test if self.n_test is not None else 9 * min(self._n)
        p_lo = wilson_lower(wilson_lower(kp / npp, npp, level), n_test, self.alpha)
        q_hi = wilson_upper(wilson_upper(kq / nq, nq, level), n_test, self.alpha)
        with np.errstate(divide="ignore", invalid="ignore"):
            v = float(log_ratio_lower_bound(p_lo, q_hi, self.delta))
            if self.delta > 0 and not np.isfinite(v):
                v = float(log_ratio_lower_bound(p_lo, q_hi, 0.0))
        return v if np.isfinite(v) else -np.inf

    def shrunk_value(self) -> tuple[float, float]:
        """:func:`shrunk_event_value` of the finished event on the counts it was fixed on;
        ``(-inf, inf)`` without an event."""
        if self._scorer is None or self._counts is None:
            return -np.inf, np.inf
        n_test = self.n_test if self.n_test is not None else 9 * min(self._n)
        return shrunk_event_value(self._counts[0], self._counts[1], self._scorer.mask,
                                  self._scorer.numerator, n_test=n_test, alpha=self.alpha,
                                  delta=self.delta)

    def training_scores(self) -> tuple[np.ndarray, np.ndarray]:
        """The chosen event's indicator on every run this fitter counted, per input (the runs'
        order is lost: ones first; the engine's sweeps use them as a multiset)."""
        if self._scorer is None or self._counts is None:
            raise ValueError("training_scores needs a finished fitter that gave a scorer")
        out = []
        for j in (0, 1):
            k = int(self._counts[j][self._scorer.mask].sum())
            out.append(np.r_[np.ones(k), np.zeros(self._n[j] - k)])
        return out[0], out[1]


def _table_float(x: Any) -> float:
    if isinstance(x, str):
        return float(x)  # "inf" / "-inf" in the choice table
    return float(x)


def replaces_choice(cell_row: dict[str, Any], winner_row: dict[str, Any],
                    conservative: float, shrunk: tuple[float, float]) -> bool:
    """Whether the cell event, re-fixed on all training runs, replaces the family's choice.

    ``cell_row`` and ``winner_row`` are the choice-table rows
    (:func:`dpaudit.blackbox.learned_statistics.choose`) of the cell event fixed on the fit
    split and of the statistic chosen; ``conservative`` is
    :meth:`HaltingCellFitter.conservative_value` and ``shrunk`` the ``(value, se)`` of
    :meth:`HaltingCellFitter.shrunk_value`, both of the in-sample event. The bar is the winner's
    multiplicity-penalised projection (``projected_log_ratio_bound``). Three pieces of evidence
    must clear it: the fit-split event's rates on the *fresh* selection split
    (``plug_in_test_bound``), the in-sample event's rates at the level ``1 / C`` (``C``
    prefixes), and its empirical-Bayes value by :data:`REPLACE_MARGIN_SE` standard errors of its
    log ratio (:func:`shrunk_event_value`). The first two are plug-in or prefix-level values set
    against a penalised bar; with many cells sorted on the runs they are counted on, both
    pass by noise: numerical SVT (c = 2, 221 cells, 10^6 runs per input, seeds 0-19) had its
    choice replaced on seeds 6, 11, 15, 16 (test bounds 0.027 / 0.025 / 0.019 / 0.030 -> 0.000
    / 0.005 / 0.001 / 0.000) by in-sample events whose shrunk values were 0.006 / -0.002 / 0.004
    / -0.005, within one standard error (0.026 / 0.012 / 0.007 / 0.016) of bars of -0.008 /
    0.005 / 0.004 / -0.014. On SVT3 (41 cells, seeds 0-19) the third piece keeps 7 of the 9
    replacements (those worth +0.016 to +0.055) and stops two (seed 4, -0.018; seed 18,
    +0.015). Without the margin seeds 6, 15 and 16 still pass; the margin on the level-``1 / C``
    value instead lets 11 and 15 pass (measured on the same seeds' counts).
    Only power is at stake, never validity: whichever event this picks was fixed on training
    runs, and the test split, drawn afterwards, counts it afresh.
    """
    bar = _table_float(winner_row.get("projected_log_ratio_bound", "-inf"))
    honest = _table_float(cell_row.get("plug_in_test_bound", "-inf"))
    value, se = shrunk
    return bool(honest > bar and conservative > bar and value > bar + REPLACE_MARGIN_SE * se)
