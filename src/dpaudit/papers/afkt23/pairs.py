"""Realizable-regime neighbouring pairs for AFKT23 (replace one round's whole loss vector).

The released sequences only move when a neighbour changes *when* the learner switches or *what* the
exponential mechanism draws, so the pairs are built around the sparse vector's threshold and around
the draw's scores, always with a zero-loss expert in both streams (realizable):

* ``"delay"``: expert 1 accumulates loss from round 1, expert 0 never; the neighbour zeroes expert
  1's loss at round ``r`` (its query crosses the threshold one round later);
* ``"advance"``: the reverse, expert 1 idle except at round ``r``, where the neighbour adds a unit loss;
* ``"flip"`` (``d >= 3``, expert 0 always at zero): round ``r``'s vector ``(0, 1, 0, ...)`` vs
  ``(0, 0, 1, ...)``: moves both a query and the draw's scores the most a replacement can, in
  opposite directions for two experts;
* ``"kill-all"``: every expert but 0 loses 1 every round; the neighbour zeroes round ``r`` for all of
  them (every instance's query moves by one).

Near gamma = 1 (``eps_0`` and ``eta`` huge) those pairs stop revealing anything: with a zero-loss
expert the potential stays near its start, no query comes near the threshold and both streams
release the same sequence. :func:`losing_pairs` are the pairs in which every expert loses every
round in both streams, so every query grows by at least the smallest loss a round:

* ``"all lose, round r raised"``: every expert loses 1/2 every round; the neighbour raises round
  ``r`` to 1 for all of them (the queries cross the threshold one round earlier);
* ``"all lose, round r halved"``: every expert loses 1 every round; the neighbour halves round ``r``
  for experts ``1..d-1``;
* ``"all lose, round r swapped"``: expert 0 loses 1/2, the others 1; the neighbour swaps round
  ``r``'s values of experts 0 and 1 (moves the draw's scores).
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


def threshold_pairs(T: int, d: int, r: int = 1) -> list[NeighbourPair]:
    """The realizable pairs of the module docstring (kill-all, delay, advance, flip) at round ``r``.

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
        If a parameter is out of its range.
    """
    T = check_int(T, "T", minimum=2)
    d = check_int(d, "d", minimum=2)
    r = check_int(r, "r", minimum=1, maximum=T)
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
    """The every-expert-loses neighbour pairs of the module docstring at replaced round ``r``.

    Every expert has a positive loss at every round in both streams.

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
    T = check_int(T, "T", minimum=2)
    d = check_int(d, "d", minimum=2)
    r = check_int(r, "r", minimum=1, maximum=T)
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
