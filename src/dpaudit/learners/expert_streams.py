"""Loss streams for experts in the realizable and near-realizable regimes (AFKT23, Sec. 2-3).

A stream is an array ``(T, d)`` in ``[0, 1]``. *Realizable*: some expert has total loss 0.
*Near-realizable*: the best expert's total loss is (at most) ``L_star``.
"""

from __future__ import annotations

import numpy as np

from dpaudit._validation import check_generator, check_int, check_nonnegative, check_probability

__all__ = ["best_loss", "realizable_stream", "near_realizable_stream", "killing_stream"]


def best_loss(losses: np.ndarray) -> float:
    """``L* = min_x sum_t l_t(x)``."""
    return float(np.min(np.sum(np.asarray(losses, dtype=float), axis=0)))


def realizable_stream(T: int, d: int, rng: np.random.Generator, *, density: float = 0.5,
                      best: int | None = None) -> np.ndarray:
    """Random Bernoulli(``density``) losses with expert ``best`` (random if None) at zero loss."""
    T = check_int(T, "T", minimum=1)
    d = check_int(d, "d", minimum=1)
    rng = check_generator(rng)
    density = check_probability(density, "density", open_interval=False)
    L = (rng.random((T, d)) < density).astype(float)
    b = int(rng.integers(d)) if best is None else check_int(best, "best", minimum=0, maximum=d - 1)
    L[:, b] = 0.0
    return L


def near_realizable_stream(T: int, d: int, L_star: float, rng: np.random.Generator, *,
                           density: float = 0.5, best: int | None = None) -> np.ndarray:
    """As :func:`realizable_stream`, then the best expert gets total loss exactly ``L_star``
    (spread as unit losses on random rounds plus one fractional loss); requires ``L_star <= T``."""
    L_star = check_nonnegative(L_star, "L_star")
    if L_star > T:
        raise ValueError(f"L_star must be at most T={T}, got {L_star}")
    rng = check_generator(rng)
    L = realizable_stream(T, d, rng, density=density, best=best)
    b = int(np.argmin(L.sum(axis=0)))
    whole = int(np.floor(L_star))
    rounds = rng.permutation(T)
    L[rounds[:whole], b] = 1.0
    if L_star > whole:
        L[rounds[whole], b] = L_star - whole
    # every other expert must stay at least as bad as the best one
    for x in range(d):
        if x != b and L[:, x].sum() < L_star:
            L[:, x] = np.maximum(L[:, x], L[:, b])
    return L


def killing_stream(T: int, d: int, kill_rounds: np.ndarray | list[int], survivor: int = 0) -> np.ndarray:
    """Experts lose 1 per round from their kill round on (1-based; ``> T`` = never), ``survivor``
    never: the adversary of Lemma 3.1 that removes good experts over time (realizable)."""
    T = check_int(T, "T", minimum=1)
    d = check_int(d, "d", minimum=1)
    kr = np.asarray(kill_rounds, dtype=int)
    if kr.shape != (d,):
        raise ValueError(f"kill_rounds must have one entry per expert, shape ({d},)")
    t = np.arange(1, T + 1)[:, None]
    L = (t >= kr[None, :]).astype(float)
    L[:, survivor] = 0.0
    return L
