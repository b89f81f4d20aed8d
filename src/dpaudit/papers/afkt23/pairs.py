"""Realizable-regime neighbouring pairs for AFKT23 (replace one round's whole loss vector).

Asi, Feldman, Koren & Talwar, ICML 2023 (``afkt23.txt``), Definition 2.1. A released sequence
only moves when a neighbour changes *when* the learner switches or *what* the exponential
mechanism draws, so :func:`threshold_pairs` ("delay", "advance", "flip", "kill-all") move a
sparse-vector query across its threshold or the draw's scores, always with a zero-loss expert in
both streams; near gamma = 1 those reveal nothing, and :func:`losing_pairs` ("all lose, round r
raised / halved / swapped") make every expert lose every round. Each pair in words, and what it
moves: docs/paper-readings.md#afkt23-neighbouring-pairs.
"""

from __future__ import annotations

import numpy as np

from dpaudit._validation import check_int

__all__ = ["NeighbourPair", "threshold_pairs", "losing_pairs", "is_replace_one"]


class NeighbourPair(tuple):
    """``(name, losses0, losses1)``."""

    @property
    def name(self) -> str:
        """The pair's name (its first element)."""
        return self[0]


def is_replace_one(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two loss streams differ in at most one round's loss vector (replace-one neighbours).

    Parameters
    ----------
    a, b
        ``(T, d)`` loss arrays of one shape.

    Returns
    -------
    bool
        True iff at most one row differs.
    """
    return bool(np.count_nonzero(np.any(np.asarray(a) != np.asarray(b), axis=1)) <= 1)


def _pair_arguments(T: int, d: int, r: int) -> tuple[int, int, int]:
    """``(T, d, r)`` checked as every pair family needs them: ``T, d >= 2``, ``r`` in ``[1, T]``."""
    T = check_int(T, "T", minimum=2)
    return T, check_int(d, "d", minimum=2), check_int(r, "r", minimum=1, maximum=T)


def threshold_pairs(T: int, d: int, r: int = 1) -> list[NeighbourPair]:
    """The realizable threshold pairs (kill-all, delay, advance, flip) at round ``r``.

    Each in words: docs/paper-readings.md#afkt23-neighbouring-pairs.

    Parameters
    ----------
    T
        Horizon (>= 2).
    d
        Number of experts (>= 2; the "flip" pair needs ``d >= 3``).
    r
        Replaced round, 1-based, in ``[1, T]``.

    Returns
    -------
    list of NeighbourPair
        ``(name, losses0, losses1)`` triples, both streams realizable (some expert has loss 0).

    Raises
    ------
    ValueError
        If ``T < 2``, ``d < 2`` or ``r`` is outside ``[1, T]``.
    """
    T, d, r = _pair_arguments(T, d, r)
    out = []
    a = np.zeros((T, d)); a[:, 1:] = 1.0
    b = a.copy(); b[r - 1, 1:] = 0.0
    out.append(NeighbourPair(("kill-all", a, b)))
    a = np.zeros((T, d)); a[:, 1] = 1.0
    b = a.copy(); b[r - 1, 1] = 0.0
    out.append(NeighbourPair(("delay", a, b)))
    a = np.zeros((T, d))
    b = a.copy(); b[r - 1, 1] = 1.0
    out.append(NeighbourPair(("advance", a, b)))
    if d >= 3:
        a = np.zeros((T, d)); a[:, 2:] = 1.0
        b = a.copy()
        a[r - 1, 1], a[r - 1, 2] = 1.0, 0.0
        b[r - 1, 1], b[r - 1, 2] = 0.0, 1.0
        out.append(NeighbourPair(("flip", a, b)))
    for _, x, y in out:
        assert is_replace_one(x, y) and (x.sum(0).min() == 0) and (y.sum(0).min() == 0)
    return out


def losing_pairs(T: int, d: int, r: int = 1) -> list[NeighbourPair]:
    """The every-expert-loses neighbour pairs at replaced round ``r``.

    Every expert has a positive loss at every round in both streams (each pair in words:
    docs/paper-readings.md#afkt23-neighbouring-pairs).

    Parameters
    ----------
    T
        Horizon (>= 2).
    d
        Number of experts (>= 2).
    r
        Replaced round, 1-based, in ``[1, T]``.

    Returns
    -------
    list of NeighbourPair
        ``(name, losses0, losses1)`` triples.

    Raises
    ------
    ValueError
        If a parameter is out of its range.
    """
    T, d, r = _pair_arguments(T, d, r)
    out = []
    a = np.full((T, d), 0.5)
    b = a.copy(); b[r - 1, :] = 1.0
    out.append(NeighbourPair((f"all lose, round {r} raised", a, b)))
    a = np.ones((T, d))
    b = a.copy(); b[r - 1, 1:] = 0.5
    out.append(NeighbourPair((f"all lose, round {r} halved", a, b)))
    a = np.ones((T, d)); a[:, 0] = 0.5
    b = a.copy(); b[r - 1, 0], b[r - 1, 1] = a[r - 1, 1], a[r - 1, 0]
    out.append(NeighbourPair((f"all lose, round {r} swapped", a, b)))
    for _, x, y in out:
        assert is_replace_one(x, y) and x.min() > 0 and y.min() > 0
    return out
