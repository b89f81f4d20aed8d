"""Anytime-valid sequential audit for CI gates: testing by betting.

:func:`sequential_audit` samples in rounds and stops as soon as the evidence against the claim is
conclusive. The engine's training step (:mod:`dpaudit.blackbox.empirical_audit`) picks an event
``S``; on fresh runs the payoff ``Z_i = 1[X_i in S] - e^eps 1[Y_i in S] - delta`` has
``E[Z_i] <= 0`` under (eps, delta)-DP, so the wealth ``prod (1 + lambda_i Z_i)``, with bets chosen
from earlier runs only, is a non-negative supermartingale and by Ville's inequality declaring
"violated" when it reaches ``1 / alpha`` has level ``alpha`` at every stopping time (Shafer &
Vovk 2019; Waudby-Smith & Ramdas, JRSS-B 2024). Bets are aGRAPA (ibid., Sec. 5.1), clipped to
``[0, 1/2 / (e^eps + delta)]`` and fixed within a round. "Not violated" means the budget ran
out first and, like a fixed-budget pass, is not a proof of privacy.

The procedure and the proof of its level: docs/blackbox-notes.md#sequential-audit.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Literal, Sequence

import numpy as np

from dpaudit._validation import check_alpha, check_delta, check_epsilon, check_int
from dpaudit.blackbox.audit_config import AuditConfig
from dpaudit.blackbox.learned_statistics import check_statistics
from dpaudit.blackbox.sampling import check_callables, check_pairs
from dpaudit.blackbox.training import train

__all__ = ["sequential_audit", "SequentialResult"]

#: Fraction of the largest admissible bet used at most (keeps the wealth away from 0).
BET_CAP = 0.5
#: First betting round (runs per input), growth factor of the rounds.
FIRST_ROUND = 64
ROUND_GROWTH = 1.5
#: Cap on the runs per input of one betting round (uncapped rounds of 64 x 1.5^k held
#: 3.7 GiB after 38 s with ``max_samples=10**12``); also at most 16 of the engine's output chunks,
#: so that wide outputs are held in bounded memory. Budgets up to about 3 x 10^6 never reach it.
MAX_ROUND = 1 << 20
#: Above this epsilon ``e^epsilon`` overflows a double; the largest admissible bet is then below
#: ``e^-700`` and no budget can make the wealth reach ``1 / alpha`` (see :func:`sequential_audit`).
MAX_BETTING_EPSILON = 700.0


#: Default training runs per input of both sequential tests (fewer when ``max_samples`` is
#: below four times this).
TRAIN_SAMPLES = 1_000


def check_sequential_arguments(epsilon: float, delta: float, alpha: float, max_samples: int,
                               seed: int, train_samples: int | None
                               ) -> tuple[float, float, float, int, int, int]:
    """The arguments :func:`sequential_audit` and the sequential gate share, checked.

    Parameters
    ----------
    epsilon, delta, alpha, max_samples, seed, train_samples
        As in :func:`sequential_audit`; ``max_samples >= 100``, and ``train_samples`` defaults to
        ``min(TRAIN_SAMPLES, max_samples // 4)`` and must lie in ``[20, max_samples - 10]``.

    Returns
    -------
    tuple
        ``(epsilon, delta, alpha, max_samples, seed, train_samples)``, validated.
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    alpha = check_alpha(alpha)
    max_samples = check_int(max_samples, "max_samples", minimum=100)
    seed = check_int(seed, "seed", minimum=0)
    if train_samples is None:
        train_samples = min(TRAIN_SAMPLES, max_samples // 4)
    train_samples = check_int(train_samples, "train_samples", minimum=20,
                              maximum=max_samples - 10)
    return epsilon, delta, alpha, max_samples, seed, train_samples


@dataclass(frozen=True)
class SequentialResult:
    """Outcome of :func:`sequential_audit`.

    ``verdict`` is ``"violated"`` iff the wealth reached ``1 / alpha`` (level ``alpha``, valid at
    any stopping time); ``runs_per_input`` = training + betting runs drawn on each input before
    stopping; ``stopped_at`` = betting runs per input at the crossing (None if it never crossed).
    """

    claimed_epsilon: float
    claimed_delta: float
    alpha: float
    verdict: Literal["violated", "not violated"]
    runs_per_input: int
    train_runs: int
    betting_runs: int
    stopped_at: int | None
    log_wealth: float
    max_log_wealth: float
    event: dict[str, Any]
    statistic: dict[str, Any]
    max_samples: int
    seed: int
    seconds: float
    rounds: int
    #: The rng probe of :func:`~dpaudit.blackbox.sequential_gate.sequential_gate`
    #: (:meth:`dpaudit.blackbox.rng_probe.RngProbe.to_dict`); empty when not probed.
    rng: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"claim": {"epsilon": self.claimed_epsilon, "delta": self.claimed_delta},
                "verdict": self.verdict, "alpha": self.alpha,
                "validity": ("anytime-valid: under the claim the wealth is a non-negative "
                             "supermartingale, so P[it ever reaches 1/alpha] <= alpha (Ville)"),
                "runs_per_input": self.runs_per_input, "train_runs": self.train_runs,
                "betting_runs": self.betting_runs, "stopped_at": self.stopped_at,
                "log_wealth": self.log_wealth, "max_log_wealth": self.max_log_wealth,
                "threshold_log_wealth": math.log(1.0 / self.alpha), "event": self.event,
                "statistic": self.statistic, "max_samples": self.max_samples, "seed": self.seed,
                "rounds": self.rounds, "seconds": self.seconds,
                **({"rng": dict(self.rng)} if self.rng.get("rng_ignored") else {})}


def sequential_audit(mechanism: Callable[[Any, int, np.random.Generator], np.ndarray],
                     data0: Any, data1: Any, epsilon: float, delta: float = 0.0,
                     alpha: float = 0.05, max_samples: int = 1_000_000, seed: int = 0, *,
                     train_samples: int | None = None,
                     statistic: Callable[[np.ndarray], np.ndarray] | None = None,
                     statistics: Sequence[str] | None = None) -> SequentialResult:
    """Anytime-valid test of an (epsilon, delta) claim that stops at the first conclusive evidence.

    Parameters
    ----------
    mechanism, data0, data1, statistic, statistics
        As in :func:`dpaudit.audit` (and checked as there).
    epsilon : float > 0
        Claimed epsilon. Above :data:`MAX_BETTING_EPSILON` (700) a bet can gain less than
        ``e^-700`` per run, so the wealth can never reach ``1 / alpha``: the result is "not
        violated" after the training runs, with no betting.
    delta : float in [0, 1)
        Claimed delta.
    alpha : float in (0, 1)
        Level: a mechanism satisfying the claim is reported violated with probability <= alpha.
    max_samples : int >= 100
        Budget of runs per input (training + betting); the audit stops earlier on a violation.
    seed : int >= 0
        Root of all randomness.
    train_samples : int, optional
        Runs per input used to choose the event (default ``min(1000, max_samples // 4)``); they
        are never used for betting.

    Returns
    -------
    SequentialResult
    """
    t0 = time.perf_counter()
    epsilon, delta, alpha, max_samples, seed, train_samples = check_sequential_arguments(
        epsilon, delta, alpha, max_samples, seed, train_samples)
    # The same argument checks as audit() (raw TypeErrors from inside the engine).
    check_callables(mechanism, statistic)
    check_pairs(data0, data1, None)  # both None: a vacuous audit
    cfg = AuditConfig(epsilon, delta, alpha, 1, "auto", statistic, None,
                      check_statistics(statistics))
    budget = max_samples - train_samples
    tr = train(mechanism, data0, data1, np.random.SeedSequence(seed).spawn(1)[0], cfg,
               train_samples, budget, [0.0], hedges=False)  # one event is tested
    base = {"statistic": dict(tr.scorer_info), "max_samples": max_samples, "seed": seed,
            "claimed_epsilon": epsilon, "claimed_delta": delta, "alpha": alpha,
            "train_runs": train_samples}
    if not tr.eps_sweep_best or epsilon > MAX_BETTING_EPSILON:
        return SequentialResult(verdict="not violated", runs_per_input=train_samples,
                                betting_runs=0, stopped_at=None, log_wealth=0.0,
                                max_log_wealth=0.0, event={"event": None}, rounds=0,
                                seconds=time.perf_counter() - t0, **base)
    ranked = tr.eps_sweep_best[0]
    ev = ranked.event
    num = ev.numerator
    e = math.exp(epsilon)  # finite: epsilon <= MAX_BETTING_EPSILON
    max_round = max(FIRST_ROUND, min(MAX_ROUND, 16 * tr.chunk_rows))
    lam_max = BET_CAP / (e + delta)
    threshold = math.log(1.0 / alpha)
    log_k = 0.0
    max_log_k = 0.0
    s1 = s2 = 0.0  # running sums of Z and Z^2 over finished rounds
    n_bet = 0
    stopped = None
    rounds = 0
    size = FIRST_ROUND
    while n_bet < budget:
        m = min(int(size), budget - n_bet)
        x = tr.streams[num].draw(m)
        y = tr.streams[1 - num].draw(m)
        a = ev.indicator(tr.scorer(x)).astype(np.float64)
        b = ev.indicator(tr.scorer(y)).astype(np.float64)
        z = a - e * b - delta
        if n_bet > 0:
            mean = s1 / n_bet
            var = max(s2 / n_bet - mean * mean, 0.0)
            lam = 0.0 if mean <= 0 else min(lam_max, mean / (var + mean * mean))
        else:
            lam = lam_max / 4  # a small first bet: no past data yet
        path = log_k + np.cumsum(np.log1p(lam * z))
        rounds += 1
        hit = np.flatnonzero(path >= threshold)
        if hit.size:
            stopped = n_bet + int(hit[0]) + 1
            log_k = float(path[hit[0]])
            max_log_k = max(max_log_k, log_k)
            n_bet = stopped
            break
        log_k = float(path[-1])
        max_log_k = max(max_log_k, float(path.max()))
        s1 += float(z.sum())
        s2 += float(np.dot(z, z))
        n_bet += m
        size = min(size * ROUND_GROWTH, max_round)
    verdict: Literal["violated", "not violated"] = "violated" if stopped else "not violated"
    event = {"event": ev.to_dict(), "selection": ranked.to_dict()}
    return SequentialResult(verdict=verdict, runs_per_input=train_samples + n_bet,
                            betting_runs=n_bet, stopped_at=stopped, log_wealth=log_k,
                            max_log_wealth=max_log_k, event=event, rounds=rounds,
                            seconds=time.perf_counter() - t0, **base)
