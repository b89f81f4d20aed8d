"""A sequential CI gate that re-chooses its events as evidence accrues.

:func:`dpaudit.blackbox.sequential.sequential_audit` bets on one event chosen from 1,000 training
runs; :func:`sequential_gate` keeps betting while it learns. A fixed mixture of bettors, one per
statistic of the engine's family for the output type
(:func:`dpaudit.blackbox.learned_statistics.candidates_for`), each re-chooses its event on the
history of earlier runs whenever it has doubled and bets on fresh runs with aGRAPA
(Waudby-Smith & Ramdas, JRSS-B 2024, Sec. 5.1), clipped to ``[0, 1/2 / (e^eps + delta)]``. Under
(eps, delta)-DP each bettor's wealth, and their average, is a non-negative supermartingale, so by
Ville's inequality declaring "violated" when the average wealth first reaches ``1 / alpha`` has
level ``alpha`` at any stopping time (Shafer & Vovk 2019). Measured runs to detection and
false-alarm rate, and use from pytest: docs/benchmarks.md#a-sequential-ci-gate.

The procedure and the proof of its level: docs/blackbox-notes.md#sequential-gate.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np
from scipy.special import logsumexp

from dpaudit.blackbox.confidence import wilson_lower, wilson_upper
from dpaudit.blackbox.learned_statistics import candidates_for, check_statistics
from dpaudit.blackbox.rng_probe import probe_rng
from dpaudit.blackbox.sampling import (Stream, check_callables, check_comparable, check_pairs,
                                       harmonize_exact, is_discrete)
from dpaudit.blackbox.sequential import (BET_CAP, MAX_BETTING_EPSILON, SequentialResult,
                                         check_sequential_arguments)
from dpaudit.blackbox.statistic_protocol import Fitter
from dpaudit.blackbox.statistics import LikelihoodRatioFitter, ThresholdEvent, flatten_outputs

__all__ = ["sequential_gate", "GATE_FIRST_ROUND", "GATE_MAX_HISTORY"]

#: First betting round (runs per input) and growth factor of the rounds.
GATE_FIRST_ROUND = 1_000
GATE_ROUND_GROWTH = 1.5
#: Largest betting round (runs per input).
GATE_MAX_ROUND = 1 << 16
#: Runs per input kept in the history that statistics are refitted on (bounds memory and fit
#: time); beyond it the events stop changing.
GATE_MAX_HISTORY = 200_000
#: ... and at most about this many bytes of outputs per input (wide outputs keep fewer runs: 2^28
#: bytes are 33,554 runs of 1,000 float64 values; below 168 values per run the row cap binds),
#: plus one round. A round holds at most ``GATE_MAX_ROUND_BYTES`` per input (below 128 values
#: per run ``GATE_MAX_ROUND`` binds). Rounds and history only batch the bets and feed the event
#: choice: the level does not depend on them.
GATE_MAX_HISTORY_BYTES = 1 << 28
GATE_MAX_ROUND_BYTES = 1 << 26
#: Thresholds examined per statistic when an event is chosen (quantiles of the scores).
_THRESHOLDS = 2_000
#: Standard errors the selection rates are moved against the bettor (one-sided level 0.1587).
_SELECTION_LEVEL = 0.15865525393145707


def _quiet_floats() -> Any:
    """numpy's overflow warnings silenced inside the statistics (their non-finite scores are
    handled explicitly: :func:`_refit`); a mechanism's own arithmetic keeps the caller's settings.
    A non-finite score on a betting run falls in no threshold event: it pays ``-delta``, a bet the
    null cannot profit from, so the wealth stays a supermartingale."""
    return np.errstate(over="ignore", invalid="ignore", divide="ignore")


@dataclass
class _Bettor:
    name: str
    scorer: Callable[[np.ndarray], np.ndarray] | None = None
    event: ThresholdEvent | None = None
    lam: float = 0.0
    growth: float = 0.0
    log_wealth: float = 0.0

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"statistic": self.name, "bet": self.lam,
                               "log_wealth": self.log_wealth,
                               "promised_growth_per_run": self.growth}
        if self.event is not None:
            out["event"] = self.event.to_dict()
        return out


def _choose_event(s0: np.ndarray, s1: np.ndarray, e: float, delta: float, lam_max: float
                  ) -> tuple[ThresholdEvent | None, float, float]:
    """The threshold event (both tails, both favoured inputs) of the highest promised growth on
    selection scores ``s0`` (input 0) and ``s1`` (input 1); returns (event, bet, growth)."""
    both = np.concatenate([s0, s1])
    both = both[np.isfinite(both)]
    if both.size == 0:
        return None, 0.0, 0.0
    ts = np.unique(np.quantile(both, np.linspace(0.0, 1.0, _THRESHOLDS)))
    a0, a1 = np.sort(s0), np.sort(s1)
    up0 = (a0.size - np.searchsorted(a0, ts, side="right")) / a0.size  # P0[score > t]
    up1 = (a1.size - np.searchsorted(a1, ts, side="right")) / a1.size
    best: tuple[ThresholdEvent | None, float, float] = (None, 0.0, 0.0)
    for tail, r0, r1 in (("upper", up0, up1), ("lower", 1 - up0, 1 - up1)):
        for num, (rp, np_), (rq, nq) in ((0, (r0, a0.size), (r1, a1.size)),
                                         (1, (r1, a1.size), (r0, a0.size))):
            p = wilson_lower(rp, np_, _SELECTION_LEVEL)
            q = wilson_upper(rq, nq, _SELECTION_LEVEL)
            m = p - e * q - delta
            v = p * (1 - p) + e * e * q * (1 - q) + 1e-300
            g = np.where(m > 0, m * m / v, 0.0)
            i = int(np.argmax(g))
            if g[i] > best[2]:
                lam = float(min(lam_max, m[i] / (v[i] + m[i] ** 2)))
                best = (ThresholdEvent(tail, float(ts[i]), num), lam, float(g[i]))
    return best


def _refit(bettors: list[_Bettor], history: list[list[np.ndarray]], discrete: bool,
           statistics: tuple[str, ...] | None, e: float, delta: float, lam_max: float) -> None:
    """Refit every bettor on the history: statistic on its first half, event on its second."""
    h = [np.concatenate(history[j]) for j in (0, 1)]
    n = min(h[0].shape[0], h[1].shape[0])
    fit = [h[j][: n // 2] for j in (0, 1)]
    sel = [h[j][n // 2: n] for j in (0, 1)]
    if discrete:
        fitters: list[Fitter] = [LikelihoodRatioFitter()]
    else:
        fitters = [c.fitter for c in candidates_for(flatten_outputs(fit[0][:2]).shape[1],
                                                    statistics, default_atoms=False)]
    for b, f in zip(bettors, fitters):
        scores: list[np.ndarray] = []
        try:
            with _quiet_floats():
                f.prepare(fit[0][:64], fit[1][:64])
                for j in (0, 1):
                    f.update(fit[j], j)
                done = f.finish()
                scorer = done[0] if done else None
                if scorer is not None:
                    scores = [np.asarray(scorer(sel[j]), float) for j in (0, 1)]
        except (ValueError, np.linalg.LinAlgError, FloatingPointError):
            scorer = None
        if scorer is None or any(np.isnan(v).any() for v in scores):
            # Not fittable on these outputs, or NaN scores (overflow on outputs near 1e300):
            # this bettor sits the next rounds out (decided on past runs only).
            b.scorer, b.event, b.lam, b.growth = None, None, 0.0, 0.0
            continue
        ev, lam, g = _choose_event(scores[0], scores[1], e, delta, lam_max)
        b.scorer, b.event, b.lam, b.growth = scorer, ev, lam, g


def sequential_gate(mechanism: Callable[[Any, int, np.random.Generator], np.ndarray],
                    data0: Any, data1: Any, epsilon: float, delta: float = 0.0,
                    alpha: float = 0.05, max_samples: int = 100_000, seed: int = 0, *,
                    train_samples: int | None = None,
                    statistics: Sequence[str] | None = None) -> SequentialResult:
    """Anytime-valid test of an (epsilon, delta) claim by a mixture of bettors that re-choose
    their events as runs accrue (the procedure and why it has level ``alpha``:
    docs/blackbox-notes.md#sequential-gate).

    Parameters
    ----------
    mechanism, data0, data1
        As in :func:`dpaudit.audit`: ``mechanism(data, n, rng)`` returns ``n`` runs.
    epsilon : float > 0
        Claimed epsilon (above 700 no bet can pay: "not violated" after the training runs).
    delta : float in [0, 1)
        Claimed delta.
    alpha : float in (0, 1)
        Level: a mechanism satisfying the claim is reported violated with probability <= alpha.
    max_samples : int >= 100
        Budget of runs per input (training + betting); the gate stops at the first crossing.
    seed : int >= 0
        Root of all randomness (``SeedSequence(seed)``).
    train_samples : int >= 20, optional
        Runs per input drawn before the first bet (never bet on); default
        ``min(1000, max(20, max_samples // 4))`` (1,000 from ``max_samples`` = 4,000 on).
    statistics : sequence of str, optional
        The bettors' statistics for continuous outputs (names as in :func:`dpaudit.audit`);
        default the engine's family for the output's dimension.

    Returns
    -------
    SequentialResult
        ``statistic`` lists the bettors (statistic, event, bet, log wealth) at the end.
    """
    t0 = time.perf_counter()
    epsilon, delta, alpha, max_samples, seed, train_samples = check_sequential_arguments(
        epsilon, delta, alpha, max_samples, seed, train_samples)
    check_callables(mechanism, None)
    check_pairs(data0, data1, None)
    stats_names = check_statistics(statistics)
    # As in dpaudit.audit: a mechanism that seeds its own generator is refused (its
    # "runs" repeat, betting on them would be invalid); one that draws from numpy's or Python's
    # global RNG gets them reseeded in every round from that round's own seed.
    probe = probe_rng(mechanism, data0, seed)
    seen: set = set()
    clock = [0.0]
    streams = [Stream(mechanism, d, j, ss, clock, seen=seen,
                       reseed_globals=probe.rng_ignored)
               for j, (d, ss) in enumerate(zip((data0, data1),
                                               np.random.SeedSequence(seed).spawn(2)))]
    history = [[s.draw(train_samples)] for s in streams]
    first = [h[0] for h in history]
    harmonize_exact(streams, first)  # as in audit: both inputs' object numbers read alike
    check_comparable(mechanism, first)
    history = [[f] for f in first]
    discrete = is_discrete(history[0][0], history[1][0], "auto")
    n_hist = train_samples
    row_bytes = max(1, history[0][0].nbytes // max(1, history[0][0].shape[0]))
    max_history = max(train_samples, min(GATE_MAX_HISTORY, GATE_MAX_HISTORY_BYTES // row_bytes))
    max_round = max(GATE_FIRST_ROUND, min(GATE_MAX_ROUND, GATE_MAX_ROUND_BYTES // row_bytes))
    base = {"max_samples": max_samples, "seed": seed, "claimed_epsilon": epsilon,
            "claimed_delta": delta, "alpha": alpha, "train_runs": train_samples}
    if epsilon > MAX_BETTING_EPSILON:
        return SequentialResult(verdict="not violated", runs_per_input=train_samples,
                                betting_runs=0, stopped_at=None, log_wealth=0.0,
                                max_log_wealth=0.0, event={"event": None}, rounds=0,
                                statistic={"name": "mixture of bettors", "bettors": []},
                                seconds=time.perf_counter() - t0, rng=probe.to_dict(), **base)
    e = math.exp(epsilon)
    lam_max = BET_CAP / (e + delta)
    names = (["outcome likelihood ratio"] if discrete else
             [c.name for c in candidates_for(flatten_outputs(history[0][0][:2]).shape[1],
                                             stats_names, default_atoms=False)])
    bettors = [_Bettor(nm) for nm in names]
    k = len(bettors)
    _refit(bettors, history, discrete, stats_names, e, delta, lam_max)
    next_refit = 2 * n_hist
    threshold = math.log(1.0 / alpha)
    budget = max_samples - train_samples
    n_bet, rounds, stopped = 0, 0, None
    log_mix = max_log_mix = 0.0
    size = float(GATE_FIRST_ROUND)
    while n_bet < budget:
        m = min(int(size), budget - n_bet)
        x = [s.draw(m) for s in streams]
        paths = np.empty((k, m))
        for i, b in enumerate(bettors):
            if b.scorer is None or b.event is None or b.lam <= 0:
                paths[i] = b.log_wealth
                continue
            with _quiet_floats():
                hit = [b.event.indicator(np.asarray(b.scorer(x[j]), float)) for j in (0, 1)]
            z = hit[b.event.numerator].astype(float) - e * hit[1 - b.event.numerator] - delta
            paths[i] = b.log_wealth + np.cumsum(np.log1p(b.lam * z))
        mix = logsumexp(paths, axis=0) - math.log(k)
        rounds += 1
        cross = np.flatnonzero(mix >= threshold)
        if cross.size:
            c = int(cross[0])
            stopped = n_bet + c + 1
            for i, b in enumerate(bettors):
                b.log_wealth = float(paths[i, c])
            log_mix = float(mix[c])
            max_log_mix = max(max_log_mix, float(mix[: c + 1].max()))
            n_bet = stopped
            break
        for i, b in enumerate(bettors):
            b.log_wealth = float(paths[i, -1])
        log_mix = float(mix[-1])
        max_log_mix = max(max_log_mix, float(mix.max()))
        n_bet += m
        if n_hist < max_history:
            for j in (0, 1):
                history[j].append(x[j])
            n_hist += m
            if n_hist >= next_refit or n_hist >= max_history:
                _refit(bettors, history, discrete, stats_names, e, delta, lam_max)
                next_refit = 2 * n_hist
        size = min(size * GATE_ROUND_GROWTH, max_round)
    verdict = "violated" if stopped else "not violated"
    best = max(bettors, key=lambda b: b.log_wealth)
    return SequentialResult(
        verdict=verdict, runs_per_input=train_samples + n_bet, betting_runs=n_bet,
        stopped_at=stopped, log_wealth=log_mix, max_log_wealth=max_log_mix,
        event=best.describe(), rounds=rounds,
        statistic={"name": "mixture of bettors", "weights": "equal, fixed before sampling",
                   "bettors": [b.describe() for b in bettors]},
        seconds=time.perf_counter() - t0, rng=probe.to_dict(), **base)
