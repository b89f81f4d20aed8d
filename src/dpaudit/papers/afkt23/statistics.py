"""Row-wise statistics of released expert-index sequences ``(n, T)`` for the empirical auditor.

AFKT23's outputs are discrete sequences whose information sits in *when* the learner switches and
*to whom*. These statistics are deterministic functions of one run's sequence (row-wise, as
:func:`dpaudit.blackbox.empirical_audit.audit` requires); the event on them is still chosen on the training
split by the engine.
"""

from __future__ import annotations

import numpy as np

__all__ = ["first_switch_round", "switch_count", "plays_of", "first_plays_code", "STATISTICS"]


def _seq(outputs: np.ndarray) -> np.ndarray:
    a = np.asarray(outputs)
    if a.ndim != 2:
        raise ValueError(f"outputs must be index sequences of shape (n, T), got {a.shape}")
    return a


def first_switch_round(outputs: np.ndarray) -> np.ndarray:
    """Round (1-based) of the first visible change of expert; 0 if none.

    "No change" is coded 0, not ``T + 1``, so that a tail event "switched late" (``>= c``) does not
    also contain the runs that never switched (often a large mass shared by both inputs).

    Parameters
    ----------
    outputs
        Released index sequences, shape ``(n, T)``.

    Returns
    -------
    numpy.ndarray
        Per run, the 1-based round of the first change of expert (0 if none), as a float; shape
        ``(n,)``.

    Raises
    ------
    ValueError
        If ``outputs`` is not 2-D.
    """
    a = _seq(outputs)
    change = a[:, 1:] != a[:, :-1]
    any_ = change.any(axis=1)
    return np.where(any_, np.argmax(change, axis=1) + 2, 0).astype(float)


def switch_count(outputs: np.ndarray) -> np.ndarray:
    """Number of visible changes of expert in each released sequence.

    Parameters
    ----------
    outputs
        Released index sequences, one run a row, shape ``(n, T)``.

    Returns
    -------
    numpy.ndarray
        Per run, how many times the released expert changes between consecutive rounds, as a
        float; shape ``(n,)``.

    Raises
    ------
    ValueError
        If ``outputs`` is not 2-D.
    """
    a = _seq(outputs)
    return np.count_nonzero(a[:, 1:] != a[:, :-1], axis=1).astype(float)


def plays_of(expert: int):
    """Statistic: how many rounds ``expert`` is played.

    Parameters
    ----------
    expert
        0-based expert index.

    Returns
    -------
    callable
        ``outputs (n, T) -> counts (n,)``, named ``plays_of_<expert>``.
    """
    def count(outputs: np.ndarray) -> np.ndarray:
        return np.count_nonzero(_seq(outputs) == expert, axis=1).astype(float)
    count.__name__ = f"plays_of_{expert}"
    return count


def first_plays_code(k: int):
    """Statistic: the first ``k`` plays as one integer code (base ``max index + 1`` = 64).

    Parameters
    ----------
    k
        Number of leading plays encoded (>= 1).

    Returns
    -------
    callable
        ``outputs (n, T) -> codes (n,)``, named ``first_<k>_plays``.
    """
    def code(outputs: np.ndarray) -> np.ndarray:
        a = _seq(outputs)[:, :k].astype(np.int64)
        return (a * (64 ** np.arange(a.shape[1]))[None, :]).sum(axis=1).astype(float)
    code.__name__ = f"first_{k}_plays"
    return code


STATISTICS = {"first switch round": first_switch_round, "number of switches": switch_count}
