"""The location-shift statistic: per coordinate, the exact log likelihood ratio of a location shift
under Laplace noise, estimated from streaming medians (see
:mod:`dpaudit.blackbox.learned_statistics` for the family and its discipline).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpaudit.blackbox.statistic_protocol import Fitter, Scorer
from dpaudit.blackbox.statistics import (flatten_outputs)
from dpaudit.blackbox.fitters_binned import ATOM_FRACTION, smoothed_log_ratio, sorted_columns


#: Location-shift statistic: bins of the streaming histogram whose interpolated quantiles give
#: the medians (over the probe's central 99% per coordinate; at Laplace(200) noise a bin is
#: 0.65 wide, and linear interpolation inside it leaves an error far below the median's own
#: sampling error of about 0.3 at 5 x 10^5 runs), and the fewest continuous values a coordinate
#: needs in the pooled probe to get the parametric part.
LOCATION_GRID = 4096
LOCATION_MIN_CONTINUOUS = 32

@dataclass(frozen=True)
class LocationShiftScorer(Scorer):
    """Sum over coordinates of: the log ratio of the output's atom (count-based), or for a
    continuous value the log ratio of "continuous" plus ``(|x - m0| - |x - m1|) / b``."""

    atoms: tuple[np.ndarray, ...]
    log_ratios: tuple[np.ndarray, ...]
    m0: np.ndarray
    m1: np.ndarray
    scale: np.ndarray
    parametric: np.ndarray
    name: str = "location-shift log likelihood ratio (Laplace form, atoms apart)"

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        x = flatten_outputs(outputs).astype(np.float64, copy=False)
        # Continuous part of every coordinate at once (rows x coordinates), then the atoms of
        # the coordinates that have any overwrite their entries.
        # |x - m0| - |x - m1| = sign(m1 - m0) (2 clip(x, lo, hi) - lo - hi), lo/hi = min/max of
        # m0, m1: written with clip, the two plateaus are exactly constant in floating point (the
        # plateaus carry probability mass, and an event's threshold may sit on one).
        cont_lr = np.array([lr[-1] for lr in self.log_ratios])
        par = self.parametric
        sgn = np.where(par, np.sign(self.m1 - self.m0), 0.0)
        w = sgn / self.scale
        lo = np.where(par, np.minimum(self.m0, self.m1), 0.0)
        hi = np.where(par, np.maximum(self.m0, self.m1), 0.0)
        # (2 clip(x) - (lo + hi)) * w + cont_lr, the same operations in place (no temporaries)
        terms = np.clip(x, lo, hi)
        terms *= 2.0
        terms -= lo + hi
        terms *= w
        terms += cont_lr
        for j, atoms in enumerate(self.atoms):
            if atoms.size:
                v = x[:, j]
                a_c = np.minimum(np.searchsorted(atoms, v), atoms.size - 1)
                hit = atoms[a_c] == v
                terms[:, j] = np.where(hit, self.log_ratios[j][a_c], terms[:, j])
        return terms.sum(axis=1)

    def to_dict(self) -> dict[str, Any]:
        fp = [float(v) for j in range(len(self.atoms))
              for v in np.r_[self.atoms[j], self.log_ratios[j], self.m0[j], self.m1[j],
                             self.scale[j]]]
        return {"name": self.name, "dimension": len(self.atoms),
                "coordinates_parametric": int(np.count_nonzero(self.parametric)),
                "coordinates_with_atoms": int(sum(a.size > 0 for a in self.atoms)),
                "fingerprint": fp,
                "description": (f"{self.name}: sum over {len(self.atoms)} coordinates of the "
                                "log ratio of the coordinate's atom (repeated values, add-1/2 "
                                "smoothed counts) or, for a continuous value x, the log ratio "
                                "of 'continuous' plus (|x - m0| - |x - m1|) / b, with m0, m1 "
                                "the fit-split medians of the continuous values on each input "
                                "and b their mean absolute deviation (the exact log likelihood "
                                "ratio of a location shift under Laplace noise)")}


@dataclass
class LocationShiftFitter(Fitter):
    """Streaming fit of :class:`LocationShiftScorer` over the fit split.

    ``prepare`` (the pooled probes, the first fit runs) fixes per coordinate the atoms (values
    with at least ``ATOM_FRACTION`` of the probe), the scale ``b`` (mean absolute deviation of the
    pooled continuous probe values from their median) and a grid of ``LOCATION_GRID`` bins over
    their central 99%; ``update`` counts atoms, continuous values and the grid histogram per
    input; ``finish`` reads each input's median off its histogram (linear interpolation inside
    the bin; values outside the grid are counted in end bins, so the median is exact in rank).
    """

    grid: int = LOCATION_GRID
    _atoms: list[np.ndarray] = field(default_factory=list)
    _edges: list[np.ndarray | None] = field(default_factory=list)
    _scale: np.ndarray | None = None
    _counts: list[np.ndarray] = field(default_factory=list)
    _hist: list[np.ndarray | None] = field(default_factory=list)
    # Speed: the coordinates without atoms that have a grid, binned all at once (_grid_bins);
    # their histograms are views of one (2, m, grid + 2) array.
    _fast: np.ndarray | None = None
    _fast_hist: np.ndarray | None = None
    _fast_table: np.ndarray | None = None
    _fast_lo: np.ndarray | None = None
    _fast_inv: np.ndarray | None = None

    def prepare(self, probe0: np.ndarray, probe1: np.ndarray) -> None:
        pooled = np.concatenate([flatten_outputs(probe0), flatten_outputs(probe1)]
                                ).astype(np.float64)
        d = pooled.shape[1]
        self._atoms, self._edges, self._counts, self._hist = [], [], [], []
        self._scale = np.ones(d)
        # Columns without repeated values (no atoms, continuous part = the column): median, mean
        # absolute deviation and central 99% of all of them at once, the same values as below
        # (see sorted_columns).
        pre: dict[int, tuple[float, float, Any, Any]] = {}
        if pooled.shape[0] >= LOCATION_MIN_CONTINUOUS:
            cols, srt, distinct = sorted_columns(pooled)
            fast = np.flatnonzero(distinct)
            if fast.size:
                med = np.median(srt[fast], axis=1)
                mad = np.mean(np.abs(cols[fast] - med[:, None]), axis=1)
                lohi = np.quantile(srt[fast], [0.005, 0.995], axis=1)
                for i, j in enumerate(fast):
                    pre[int(j)] = (float(med[i]), float(mad[i]), lohi[0, i], lohi[1, i])
        for j in range(d):
            v = pooled[:, j]
            if j in pre:
                atoms = np.empty(0)
                _, b, lo, hi = pre[j]
                has_grid = True
            else:
                uniq, counts = np.unique(v, return_counts=True)
                atoms = uniq[counts >= max(2, ATOM_FRACTION * v.size)]
                rest = v[~np.isin(v, atoms)] if atoms.size else v
                has_grid = rest.size >= LOCATION_MIN_CONTINUOUS
                if has_grid:
                    med = float(np.median(rest))
                    b = float(np.mean(np.abs(rest - med)))
                    lo, hi = np.quantile(rest, [0.005, 0.995])
            edges = None
            if has_grid and b > 0 and hi > lo:
                edges = np.linspace(lo, hi, self.grid + 1)
                self._scale[j] = b
            self._atoms.append(atoms)
            self._edges.append(edges)
            self._counts.append(np.zeros((2, atoms.size + 1)))
            self._hist.append(None if edges is None else np.zeros((2, self.grid + 2)))
        fast_cols = [j for j in range(d) if self._atoms[j].size == 0
                     and self._edges[j] is not None
                     and np.isfinite(self.grid / (self._edges[j][-1] - self._edges[j][0]))]
        self._fast = None
        if fast_cols:
            m = len(fast_cols)
            self._fast = np.asarray(fast_cols, dtype=np.intp)
            self._fast_hist = np.zeros((2, m, self.grid + 2))
            table = np.empty((m, self.grid + 3))
            table[:, 0], table[:, -1] = -np.inf, np.inf
            for i, j in enumerate(fast_cols):
                table[i, 1:-1] = self._edges[j]
                self._hist[j] = self._fast_hist[:, i, :]
            self._fast_table = table.ravel()
            lo = np.array([self._edges[j][0] for j in fast_cols])
            hi = np.array([self._edges[j][-1] for j in fast_cols])
            self._fast_lo = lo[:, None]
            self._fast_inv = (self.grid / (hi - lo))[:, None]

    def _grid_bins(self, xt: np.ndarray) -> np.ndarray:
        """``searchsorted(edges_j, v, side="right")`` for the fast coordinates, as flat indices
        ``i * (grid + 3) + bin`` (``xt``: fast coordinates x rows, contiguous). The bin is guessed
        from the grid's spacing and then corrected against the grid's own edges until
        ``edges[bin - 1] <= v < edges[bin]`` (edges padded with -inf and +inf), the definition of
        searchsorted's answer, so it is exact whatever the rounding of the guess."""
        g = self.grid
        off = (np.arange(xt.shape[0]) * (g + 3))[:, None]
        with np.errstate(over="ignore"):  # far outside the grid: +-inf, clipped to the ends
            t = xt - self._fast_lo
            t *= self._fast_inv
        np.clip(t, -1.0, g + 1.0, out=t)
        np.floor(t, out=t)
        k = t.astype(np.intp)
        k += 1
        np.clip(k, 0, g + 1, out=k)
        k += off
        table = self._fast_table
        for _ in range(8):
            down = table[k] > xt
            up = table[k + 1] <= xt
            if not (down.any() or up.any()):
                return k
            k += up
            k -= down
        # The guess was far off (only for extreme spacings): binary search, coordinate-wise.
        rows = [np.searchsorted(self._edges[j], xt[i], side="right") + off[i, 0]
                for i, j in enumerate(self._fast)]
        return np.stack(rows)

    def update(self, outputs: np.ndarray, label: int) -> None:
        if self._scale is None:
            raise RuntimeError("LocationShiftFitter.prepare must be called before update")
        x = flatten_outputs(outputs).astype(np.float64, copy=False)
        skip: set[int] = set()
        if self._fast is not None and x.shape[0]:
            f, g = self._fast, self.grid
            xt = np.ascontiguousarray((x if f.size == x.shape[1] else x[:, f]).T)
            h = np.bincount(self._grid_bins(xt).ravel(), minlength=f.size * (g + 3))
            self._fast_hist[label] += h.reshape(f.size, g + 3)[:, :g + 2]
            for j in f:
                self._counts[j][label][0] += x.shape[0]
            skip = set(f.tolist())
        for j, atoms in enumerate(self._atoms):
            if j in skip:
                continue
            v = x[:, j]
            if atoms.size:
                a = np.searchsorted(atoms, v)
                a_c = np.minimum(a, atoms.size - 1)
                hit = atoms[a_c] == v
                idx = np.where(hit, a_c, atoms.size)
                v = v[~hit]
            else:
                idx = np.full(v.shape, 0)
            self._counts[j][label] += np.bincount(idx, minlength=atoms.size + 1)
            edges = self._edges[j]
            if edges is not None and v.size:
                # bin 0: below the grid, 1..grid: inside, grid + 1: above
                b = np.searchsorted(edges, v, side="right")
                self._hist[j][label] += np.bincount(b, minlength=self.grid + 2)

    def _median(self, h: np.ndarray, edges: np.ndarray) -> float:
        total = h.sum()
        cum = np.cumsum(h)
        k = int(np.searchsorted(cum, 0.5 * total))  # first bin reaching half the mass
        if k == 0:
            return float(edges[0])
        if k >= h.size - 1:
            return float(edges[-1])
        before = cum[k - 1]
        frac = (0.5 * total - before) / h[k] if h[k] > 0 else 0.5
        return float(edges[k - 1] + frac * (edges[k] - edges[k - 1]))

    def finish(self) -> list[LocationShiftScorer]:
        if self._scale is None or not self._counts:
            raise ValueError("the location-shift statistic needs fit samples from both inputs")
        d = len(self._atoms)
        m0, m1 = np.zeros(d), np.zeros(d)
        parametric = np.zeros(d, dtype=bool)
        for j in range(d):
            h, edges = self._hist[j], self._edges[j]
            if h is not None and min(h.sum(axis=1)) > 0:
                m0[j] = self._median(h[0], edges)
                m1[j] = self._median(h[1], edges)
                parametric[j] = True
        lr = tuple(smoothed_log_ratio(c[0], c[1]) for c in self._counts)
        return [LocationShiftScorer(tuple(self._atoms), lr, m0, m1, self._scale.copy(),
                                    parametric)]
