"""Atoms inside continuous outputs: values that repeat on one input's runs and not on the other's.

A continuous release can hide a point mass (an atom) that betrays its input (the raw sum released
when the noise falls in a band, Gaussian noise clipped): an event of probability ``p`` on one
input and 0 on the other, infinite epsilon beyond ``delta = p``, which threshold events and the
binned statistics (:data:`~dpaudit.blackbox.fitters_binned.ATOM_FRACTION`) miss when it is rare.
:class:`AtomFitter`, a member of the default family of :mod:`dpaudit.blackbox.learned_statistics`,
finds on the fit split the per-coordinate values that repeat at least :data:`MIN_REPEATS` times on
one input and separate the inputs (:data:`MAX_OTHER_FRACTION`), and scores a run +1 / -1 / 0 by
the atoms it hits, so its threshold events are "the output hits an atom of data1 (data0)". It
gives no candidate for ordinary continuous releases; its atoms are fitted on the fit split only
and at most :data:`MAX_VALUES` values per input are kept, so a false or missed atom costs power,
never validity.

The examples, the rule and why validity holds: docs/blackbox-notes.md#atom-statistics.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from dpaudit.blackbox.sorting import sort_scores
from dpaudit.blackbox.statistic_protocol import Fitter, Scorer
from dpaudit.blackbox.statistics import flatten_outputs

__all__ = ["AtomFitter", "AtomScorer", "MIN_REPEATS", "MAX_OTHER_FRACTION", "MAX_VALUES",
           "find_atoms"]

#: An atom of an input occurs at least this often among that input's fit runs.
MIN_REPEATS = 2
#: ... and at most this fraction as often (per run) among the other input's: "repeats on one
#: input, rarer on the other". A value common to both inputs (a projection's boundary, a grid
#: point) is not an atom here: its ratio is what threshold and binned statistics already test.
MAX_OTHER_FRACTION = 0.125
#: Fit-split values kept per input for the search (4 x 10^6 float64: 32 MB per input).
MAX_VALUES = 1 << 22
#: Atoms named in the statistic's description.
DESCRIBED_ATOMS = 6


def _repeats(col: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Values occurring more than once in a sorted column, with their counts."""
    if col.size < 2:
        return np.empty(0), np.empty(0, dtype=np.int64)
    dup = col[1:] == col[:-1]
    if not dup.any():
        return np.empty(0), np.empty(0, dtype=np.int64)
    vals, counts = np.unique(col[1:][dup], return_counts=True)
    return vals, counts + 1


def _count_in(sorted_col: np.ndarray, values: np.ndarray) -> np.ndarray:
    return (np.searchsorted(sorted_col, values, side="right")
            - np.searchsorted(sorted_col, values, side="left"))


def _sorted_columns(x: np.ndarray) -> np.ndarray:
    """``np.sort(x, axis=0)``, bit for bit; one column by :func:`~dpaudit.blackbox.sorting.sort_scores`
    (a merge when it is sorted already, as the engine feeds a scalar fit split)."""
    if x.ndim == 2 and x.shape[1] == 1 and x.dtype.kind == "f":
        return sort_scores(x[:, 0])[:, None]
    return np.sort(x, axis=0)


def find_atoms(x0: np.ndarray, x1: np.ndarray, *, min_repeats: int = MIN_REPEATS,
               max_other_fraction: float = MAX_OTHER_FRACTION
               ) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """The atoms of each input per coordinate: ``(atoms0, atoms1)``, each a list over the ``d``
    coordinates of sorted value arrays.

    ``x0``, ``x1``: ``(n0, d)`` and ``(n1, d)`` float arrays of one input's runs each. Value ``v``
    of coordinate ``j`` is an atom of input ``k`` when ``c_k(v) >= min_repeats`` and
    ``c_other(v) / n_other <= max_other_fraction * c_k(v) / n_k`` (``c``: its count).
    """
    s0, s1 = _sorted_columns(x0), _sorted_columns(x1)
    n0, n1 = s0.shape[0], s1.shape[0]
    out: tuple[list[np.ndarray], list[np.ndarray]] = ([], [])
    for j in range(s0.shape[1]):
        cols = (s0[:, j], s1[:, j])
        for k in (0, 1):
            vals, counts = _repeats(cols[k])
            keep = np.empty(0)
            if vals.size:
                vals, counts = vals[counts >= min_repeats], counts[counts >= min_repeats]
                other = _count_in(cols[1 - k], vals)
                nk, no = (n0, n1) if k == 0 else (n1, n0)
                keep = vals[other * nk <= max_other_fraction * counts * no]
            out[k].append(keep)
    return out


@dataclass(frozen=True)
class AtomScorer(Scorer):
    """``+1`` if a coordinate of the run equals one of its atoms of data1 and none one of data0,
    ``-1`` for the mirror case, else ``0`` (row-wise)."""

    atoms0: tuple[np.ndarray, ...]
    atoms1: tuple[np.ndarray, ...]
    columns: tuple[str, ...] | None = None
    name: str = "atoms"
    #: Its events (the atom sets) were fixed on the fit split: the selection split ranks them at
    #: their observed rates (learned_statistics.fixed_event_ranking).
    events_fixed_on_fit: bool = True

    def _hits(self, x: np.ndarray, atoms: Sequence[np.ndarray]) -> np.ndarray:
        hit = np.zeros(x.shape[0], dtype=bool)
        for j, a in enumerate(atoms):
            if a.size:
                v = x[:, j]
                i = np.minimum(np.searchsorted(a, v), a.size - 1)
                hit |= a[i] == v
        return hit

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        x = flatten_outputs(outputs).astype(np.float64, copy=False)
        h1, h0 = self._hits(x, self.atoms1), self._hits(x, self.atoms0)
        return (h1 & ~h0).astype(np.float64) - (h0 & ~h1).astype(np.float64)

    def _named(self, atoms: Sequence[np.ndarray]) -> list[str]:
        out = []
        for j, a in enumerate(atoms):
            col = (self.columns[j] if self.columns is not None and j < len(self.columns)
                   else (f"coordinate {j}" if len(atoms) > 1 else "output"))
            out += [f"{col} = {v:.12g}" for v in a]
        return out

    def to_dict(self) -> dict[str, Any]:
        a0, a1 = self._named(self.atoms0), self._named(self.atoms1)

        def listed(names: list[str]) -> str:
            shown = ", ".join(names[:DESCRIBED_ATOMS])
            return shown + (f" and {len(names) - DESCRIBED_ATOMS} more" if len(names)
                            > DESCRIBED_ATOMS else "")
        return {"name": self.name, "atoms0": len(a0), "atoms1": len(a1),
                "fingerprint": [float(v) for a in self.atoms0 + self.atoms1 for v in a][:64],
                "description": (f"the output hits a repeated value of one input's fit runs that "
                                f"is rare on the other's (exact equality per coordinate): +1 on "
                                f"an atom of data1 ({listed(a1) or 'none'}), -1 on an atom of "
                                f"data0 ({listed(a0) or 'none'}), else 0; events are 'output "
                                "in that set of atoms'")}


@dataclass
class AtomFitter(Fitter):
    """Keeps the fit split's values (up to :data:`MAX_VALUES` per input); ``finish()`` gives one
    :class:`AtomScorer` when some coordinate has an atom on either input, else nothing."""

    columns: tuple[str, ...] | None = None
    _kept: list[list[np.ndarray]] = field(default_factory=lambda: [[], []])
    _size: list[int] = field(default_factory=lambda: [0, 0])

    def prepare(self, probe0: np.ndarray, probe1: np.ndarray) -> None:
        pass

    def update(self, outputs: np.ndarray, label: int) -> None:
        x = flatten_outputs(outputs)
        room = (MAX_VALUES - self._size[label]) // max(1, x.shape[1])
        if room <= 0:
            return
        x = np.asarray(x[:room], dtype=np.float64)
        self._kept[label].append(x)
        self._size[label] += x.size

    def finish(self) -> list[AtomScorer]:
        if not self._kept[0] or not self._kept[1]:
            return []
        x0, x1 = (np.concatenate(k) if len(k) > 1 else k[0] for k in self._kept)
        self._kept = [[], []]
        a0, a1 = find_atoms(x0, x1)
        if not any(a.size for a in a0 + a1):
            return []
        return [AtomScorer(tuple(a0), tuple(a1), self.columns)]
