"""Joint law of mixed discrete/continuous outputs: a pattern-conditional histogram ratio.

Sparse-vector variants that release values (Lyu, Su and Li, PVLDB 10(6), 2017, Alg. 3; numerical
SVT) write rows whose pattern of atoms and continuous values depends strongly on the values; naive
Bayes (:class:`~dpaudit.blackbox.learned_statistics.NaiveBayesFitter`) treats the coordinates as
independent and cannot represent that. This statistic estimates
``ln(P1[pattern] / P0[pattern]) + sum_j ln(f1(bin_j(x_j) | pattern) / f0(bin_j(x_j) | pattern))``,
exact when the continuous coordinates are independent given the pattern and constant on their bins
(the :data:`MAX_PATTERNS` most frequent patterns of the probe keep their own counts, the rest share
one; ``NB_BINS`` equal-mass bins per coordinate; add-1/2 smoothing). Opt-in
(``statistics=[..., "pattern"]``), not in the default vector family: it would add an evaluation of
every selection run to every vector audit without a measured win. ``prepare`` sees the probes and
``update`` the rest of the fit split; the engine chooses on the selection split; the no-peek test
of ``tests/test_learned_statistics.py`` fails if its fit or the choice depends on the test split.

The derivation and the measurements behind the opt-in: docs/blackbox-notes.md#pattern-statistics
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpaudit.blackbox.fitters_binned import ATOM_FRACTION, smoothed_log_ratio
from dpaudit.blackbox.statistic_protocol import Fitter, Scorer
from dpaudit.blackbox.statistics import flatten_outputs

__all__ = ["MAX_PATTERNS", "PatternHistogramScorer", "PatternHistogramFitter"]

#: Patterns with their own counts (the most frequent in the probe); the rest share one bucket.
MAX_PATTERNS = 64
#: Equal-mass bins per coordinate of the continuous values (default of the fitter's ``bins``).
PATTERN_BINS = 16



def numeric_probe_rows(probe0: np.ndarray, probe1: np.ndarray) -> np.ndarray | None:
    """Both inputs' probe runs stacked as float64 rows, or None where a pattern statistic does not
    apply (non-numeric outputs, or fewer than two coordinates per run)."""
    x = np.concatenate([flatten_outputs(probe0), flatten_outputs(probe1)])
    if x.dtype.kind not in "biuf" or x.shape[1] < 2:
        return None
    return x.astype(np.float64)

@dataclass(frozen=True)
class _Coding:
    """Per-coordinate atoms and continuous bin edges, and the known patterns."""

    atoms: tuple[np.ndarray, ...]
    edges: tuple[np.ndarray, ...]
    patterns: np.ndarray  # sorted void keys of the known patterns
    bins: int             # equal-mass bins asked for per coordinate (fewer where values repeat)

    def codes(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(atom code per entry: index of the atom, or -1 for a continuous value; continuous
        bin per entry, 0 where the entry is an atom)."""
        n, d = x.shape
        code = np.full((n, d), -1, dtype=np.int16)
        bins = np.zeros((n, d), dtype=np.int32)
        for j in range(d):
            a = self.atoms[j]
            col = x[:, j]
            if a.size:
                pos = np.minimum(np.searchsorted(a, col), a.size - 1)
                hit = a[pos] == col
                code[:, j] = np.where(hit, pos, -1)
            bins[:, j] = np.searchsorted(self.edges[j], col, side="left")
        return code, bins

    def pattern_ids(self, code: np.ndarray) -> np.ndarray:
        """Index of each row's pattern among the known ones; ``len(patterns)`` for the rest."""
        keys = void_keys(code)
        p = self.patterns
        pos = np.minimum(np.searchsorted(p, keys), p.size - 1)
        return np.where(p[pos] == keys, pos, p.size)


def void_keys(code: np.ndarray) -> np.ndarray:
    """Each row of the 2-D ``code`` as one opaque (void) key, for ``np.unique`` over rows."""
    c = np.ascontiguousarray(code)
    return c.view(np.dtype((np.void, c.dtype.itemsize * c.shape[1]))).ravel()


@dataclass(frozen=True)
class PatternHistogramScorer(Scorer):
    """``lr_pattern[p] + sum_j lr_value[p, j, bin_j]`` over the row's continuous coordinates."""

    coding: _Coding
    lr_pattern: np.ndarray   # (P + 1,)
    lr_value: np.ndarray     # (P + 1, D, B)
    name: str = "pattern-conditional histogram ratio"

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        x = flatten_outputs(outputs).astype(np.float64, copy=False)
        code, bins = self.coding.codes(x)
        pid = self.coding.pattern_ids(code)
        cont = code < 0
        d = x.shape[1]
        vals = self.lr_value[pid[:, None], np.arange(d)[None, :], bins]
        return self.lr_pattern[pid] + np.where(cont, vals, 0.0).sum(axis=1)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "dimension": len(self.coding.atoms),
                "patterns": int(self.coding.patterns.size),
                "coordinates_with_atoms": int(sum(a.size > 0 for a in self.coding.atoms)),
                "fingerprint": [float(v) for v in np.r_[self.lr_pattern,
                                                        self.lr_value.ravel()[:64]]],
                "description": (f"{self.name}: estimated log ratio of the row's pattern of "
                                f"atoms and continuous coordinates ({self.coding.patterns.size} "
                                "patterns of the probe, the rest pooled) plus, per continuous "
                                f"coordinate, the log ratio of its bin ({self.coding.bins} equal-mass "
                                "bins) given the pattern; fitted on the fit split, add-1/2 "
                                "smoothing")}


@dataclass
class PatternHistogramFitter(Fitter):
    """Streaming counts per (pattern) and (pattern, coordinate, bin) on the fit split.

    Applies to vector outputs with at least one coordinate that has an atom and at least one
    continuous value somewhere, and at least two patterns in the probe; otherwise ``finish()``
    gives nothing.
    """

    bins: int = PATTERN_BINS
    _coding: _Coding | None = None
    _cp: np.ndarray | None = None
    _cv: np.ndarray | None = None
    _n: list[int] = field(default_factory=lambda: [0, 0])

    def prepare(self, probe0: np.ndarray, probe1: np.ndarray) -> None:
        x = numeric_probe_rows(probe0, probe1)
        if x is None:
            return
        atoms, edges = [], []
        any_atom = any_cont = False
        for j in range(x.shape[1]):
            u, c = np.unique(x[:, j], return_counts=True)
            a = u[c >= max(2, ATOM_FRACTION * x.shape[0])]
            rest = x[~np.isin(x[:, j], a), j] if a.size else x[:, j]
            atoms.append(a)
            any_atom |= a.size > 0
            any_cont |= rest.size > 0
            if rest.size:
                e = np.unique(np.quantile(rest, np.linspace(0, 1, self.bins + 1)[1:-1]))
            else:
                e = np.empty(0)
            edges.append(e)
        if not (any_atom and any_cont):
            return
        b = max(e.size + 1 for e in edges)
        tmp = _Coding(tuple(atoms), tuple(edges), np.empty(0, dtype=np.void), self.bins)
        code, _ = tmp.codes(x)
        keys, counts = np.unique(void_keys(code), return_counts=True)
        if keys.size < 2:
            return
        keep = np.sort(keys[np.argsort(-counts, kind="stable")[:MAX_PATTERNS]])
        self._coding = _Coding(tuple(atoms), tuple(edges), keep, self.bins)
        p = keep.size + 1
        self._cp = np.zeros((2, p))
        self._cv = np.zeros((2, p, x.shape[1], b))

    def update(self, outputs: np.ndarray, label: int) -> None:
        if self._coding is None or self._cp is None or self._cv is None:
            return
        x = flatten_outputs(outputs).astype(np.float64, copy=False)
        code, bins = self._coding.codes(x)
        pid = self._coding.pattern_ids(code)
        p, d, b = self._cv.shape[1:]
        self._cp[label] += np.bincount(pid, minlength=p)
        cont = code < 0
        flat = (pid[:, None] * d + np.arange(d)[None, :]) * b + bins
        self._cv[label] += np.bincount(flat[cont], minlength=p * d * b).reshape(p, d, b)
        self._n[label] += x.shape[0]

    def finish(self) -> list[PatternHistogramScorer]:
        if self._coding is None or self._cp is None or self._cv is None or min(self._n) == 0:
            return []
        lr_p = smoothed_log_ratio(self._cp[0], self._cp[1])
        k = np.array([e.size + 1 for e in self._coding.edges])
        lr_v = np.zeros(self._cv.shape[1:])
        for j, kj in enumerate(k):
            lr_v[:, j, :kj] = smoothed_log_ratio(self._cv[0][:, j, :kj], self._cv[1][:, j, :kj])
        return [PatternHistogramScorer(self._coding, lr_p, lr_v)]
