"""Sparse-vector outputs that release values: halting pattern plus pooled released values.

Sparse-vector variants that release a noisy value at every "above" answer (numerical SVT, Wang et
al., PLDI 2019; Lyu, Su and Li, PVLDB 10(6), 2017, Alg. 3) write rows of atoms (a "below" code, a
sentinel after halting) and released values; their privacy loss is the log ratio of the halting
pattern plus those of the released values. A per-position estimate cannot see a small shift under
wide noise; the values of all positions pooled can. The scores estimate
``ln(P1[pattern] / P0[pattern]) + sum_v ln(g1(bin(v)) / g0(bin(v)))`` (patterns as in
:mod:`dpaudit.blackbox.pattern_statistics`, at most :data:`MAX_PATTERNS` of their own; ``g0``,
``g1`` pooled histograms on equal-mass probe bins, one scorer per resolution of
:data:`VALUE_BINS`), and the same without the pattern term: the exact log likelihood ratio up to
binning when the released values are independent of the pattern and identically distributed
across positions, otherwise one more candidate. No candidate unless the probe has atoms and
continuous values and at least two patterns. ``prepare`` sees the probes and ``update`` the fit
split; the engine chooses on the selection split
(:func:`dpaudit.blackbox.learned_statistics.choose`).

The derivation and the measurements: docs/blackbox-notes.md#halting-statistics
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpaudit.blackbox.fitters_binned import ATOM_FRACTION, smoothed_log_ratio
from dpaudit.blackbox.pattern_statistics import MAX_PATTERNS, numeric_probe_rows, void_keys
from dpaudit.blackbox.statistic_protocol import Fitter, Scorer
from dpaudit.blackbox.statistics import flatten_outputs

__all__ = ["VALUE_BINS", "HaltingValueScorer", "HaltingValueFitter"]

#: Resolutions (equal-mass bins of the pooled released values) of the scorers given.
VALUE_BINS = (2, 4, 16)


@dataclass(frozen=True)
class _PooledCoding:
    atoms: np.ndarray     # sorted atom values, shared by every coordinate
    patterns: np.ndarray  # sorted void keys of the known patterns

    def codes(self, x: np.ndarray) -> np.ndarray:
        """Per entry the index of its atom, or -1 for a released (continuous) value."""
        a = self.atoms
        pos = np.minimum(np.searchsorted(a, x), a.size - 1)
        return np.where(a[pos] == x, pos, -1).astype(np.int16)

    def pattern_ids(self, code: np.ndarray) -> np.ndarray:
        keys = void_keys(code)
        p = self.patterns
        if p.size == 0:
            return np.zeros(code.shape[0], dtype=np.int64)
        pos = np.minimum(np.searchsorted(p, keys), p.size - 1)
        return np.where(p[pos] == keys, pos, p.size)


@dataclass(frozen=True)
class HaltingValueScorer(Scorer):
    """``lr_pattern[pattern] + sum of lr_value[bin(v)]`` over the row's released values."""

    coding: _PooledCoding
    edges: np.ndarray       # interior edges of the pooled value bins
    lr_pattern: np.ndarray  # (P + 1,)
    lr_value: np.ndarray    # (edges.size + 1,)
    name: str = "halting pattern + pooled released values"

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        x = flatten_outputs(outputs).astype(np.float64, copy=False)
        code = self.coding.codes(x)
        pid = self.coding.pattern_ids(code)
        vals = self.lr_value[np.searchsorted(self.edges, x, side="left")]
        return self.lr_pattern[pid] + np.where(code < 0, vals, 0.0).sum(axis=1)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "value_bins": int(self.edges.size + 1),
                "patterns": int(self.coding.patterns.size),
                "atoms": [float(a) for a in self.coding.atoms[:8]],
                "fingerprint": [float(v) for v in np.r_[self.lr_pattern[:32], self.lr_value]],
                "description": (f"{self.name}: estimated log ratio of the row's pattern of atoms "
                                f"and released values ({self.coding.patterns.size} patterns of "
                                "the probe, the rest pooled) plus, per released value, the log "
                                f"ratio of its bin ({self.edges.size + 1} equal-mass bins of the "
                                "values of all positions pooled); fitted on the fit split, "
                                "add-1/2 smoothing")}


@dataclass
class HaltingValueFitter(Fitter):
    """Streaming counts per pattern and per pooled value bin (each resolution) on the fit split."""

    bins: tuple[int, ...] = VALUE_BINS
    _coding: _PooledCoding | None = None
    _edges: list[np.ndarray] = field(default_factory=list)
    _cp: np.ndarray | None = None
    _cv: list[np.ndarray] = field(default_factory=list)
    _n: list[int] = field(default_factory=lambda: [0, 0])

    def prepare(self, probe0: np.ndarray, probe1: np.ndarray) -> None:
        x = numeric_probe_rows(probe0, probe1)
        if x is None:
            return
        u, c = np.unique(x, return_counts=True)
        atoms = u[c >= max(2, ATOM_FRACTION * x.size)]
        if atoms.size == 0:
            return
        tmp = _PooledCoding(atoms, np.empty(0, dtype=np.void))
        code = tmp.codes(x)
        cont = x[code < 0]
        if cont.size < 2 * max(self.bins):
            return
        keys, counts = np.unique(void_keys(code), return_counts=True)
        if keys.size < 2:
            return
        keep = np.sort(keys[np.argsort(-counts, kind="stable")[:MAX_PATTERNS]])
        self._coding = _PooledCoding(atoms, keep)
        self._edges = [np.unique(np.quantile(cont, np.linspace(0, 1, b + 1)[1:-1]))
                       for b in self.bins]
        self._cp = np.zeros((2, keep.size + 1))
        self._cv = [np.zeros((2, e.size + 1)) for e in self._edges]

    def update(self, outputs: np.ndarray, label: int) -> None:
        if self._coding is None or self._cp is None:
            return
        x = flatten_outputs(outputs).astype(np.float64, copy=False)
        code = self._coding.codes(x)
        pid = self._coding.pattern_ids(code)
        self._cp[label] += np.bincount(pid, minlength=self._cp.shape[1])
        v = x[code < 0]
        for e, cv in zip(self._edges, self._cv):
            cv[label] += np.bincount(np.searchsorted(e, v, side="left"), minlength=cv.shape[1])
        self._n[label] += x.shape[0]

    def finish(self) -> list[HaltingValueScorer]:
        if self._coding is None or self._cp is None or min(self._n) == 0:
            return []
        lr_p = smoothed_log_ratio(self._cp[0], self._cp[1])
        out = []
        for with_pattern in (True, False):
            for e, cv in zip(self._edges, self._cv):
                out.append(HaltingValueScorer(
                    self._coding, e, lr_p if with_pattern else np.zeros_like(lr_p),
                    smoothed_log_ratio(cv[0], cv[1]),
                    name=("halting pattern + pooled released values" if with_pattern
                          else "pooled released values")))
        return out
