"""Choosing the neighbouring pair an empirical audit runs on, by pilot audits of the candidates.

With candidate pairs (a list, a Hypothesis strategy, seed pairs), each candidate gets a pilot:
the training part of an audit (:func:`dpaudit.blackbox.training.train`) on fresh runs, its best
event projected to the main test size. The main audit runs on the pair with the highest
projected bound, on streams disjoint from every pilot's, so the choice depends on pilot data only
and the final bound, valid conditionally on any pair, needs no correction for it
(:mod:`dpaudit.blackbox.empirical_audit` states the budget rule and the seed derivation).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from dpaudit._validation import check_int
from dpaudit.blackbox.audit_config import MIN_PILOT_SAMPLES, PILOT_FRACTION, AuditConfig
from dpaudit.blackbox.pair_search import (DEFAULT_PAIR_CANDIDATES, describe_pair, pair_key,
                                          search_pairs)
from dpaudit.blackbox.result import json_float, no_ranked_event_record
from dpaudit.blackbox.rng_probe import PROBE_RUNS
from dpaudit.blackbox.sampling import (NOT_GIVEN, as_output_array, check_pairs, describe_input,
                                       is_strategy)
from dpaudit.blackbox.training import train

__all__ = ["Candidates", "PairChoice", "check_candidates", "choose_pair", "st_sampled"]


@dataclass(frozen=True)
class Candidates:
    """The pair arguments of an audit, checked: a Hypothesis ``strategy`` (or None), the
    ``seeds`` piloted first, the ``listed`` pairs searched after seeds, the ``pairs`` known
    without a search, and ``count``, the number of candidates that fixes the pilot budget."""

    strategy: Any
    seeds: list[tuple[Any, Any]]
    listed: list[tuple[Any, Any]]
    pairs: list[tuple[Any, Any]]
    count: int


@dataclass(frozen=True)
class PairChoice:
    """The pair audited and how it was found: its index among the candidates piloted (None for
    the given pair), the pilot records, the pilot runs per input per pair, the pairs dropped
    before piloting and the one-line description of the chosen pair."""

    data0: Any
    data1: Any
    pair_index: int | None
    pilot: tuple[dict[str, Any], ...]
    pilot_samples: int
    dropped: tuple[dict[str, Any], ...]
    chosen_pair: str


def check_candidates(data0: Any, data1: Any, pairs: Any, pair_seeds: Any,
                     pair_candidates: int | None) -> Candidates:
    """Check the pair arguments of :func:`~dpaudit.blackbox.empirical_audit.audit` (the same
    rules and messages): ``data0``/``data1`` or ``pairs`` (a list or a Hypothesis strategy),
    ``pair_seeds`` only with ``pairs``, ``pair_candidates`` only with a strategy."""
    seeds = [] if pair_seeds is None else check_pairs(NOT_GIVEN, NOT_GIVEN, pair_seeds)
    if seeds and pairs is None:
        raise ValueError("pair_seeds are tried before the pairs of pairs=; give pairs (a list or "
                         "a Hypothesis strategy) too")
    if pairs is not None and is_strategy(pairs):
        if any(d is not NOT_GIVEN and d is not None for d in (data0, data1)):
            raise ValueError("give either data0 and data1 or pairs, not both")
        n_cand = check_int(DEFAULT_PAIR_CANDIDATES if pair_candidates is None
                           else pair_candidates, "pair_candidates", minimum=1)
        n_cand += len({pair_key(p) for p in seeds})
        return Candidates(pairs, seeds, [], [], n_cand)
    if pair_candidates is not None:
        raise ValueError("pair_candidates applies only when pairs is a Hypothesis strategy")
    if seeds:
        listed = check_pairs(data0, data1, pairs)
        return Candidates(None, seeds, listed, [], len({pair_key(p) for p in seeds + listed}))
    listed = check_pairs(data0, data1, pairs)
    return Candidates(None, [], [], listed, len(listed))


def choose_pair(mechanism: Callable[..., Any], data0: Any, data1: Any, cands: Candidates, *,
                pairs_given: bool, cfg: AuditConfig, root: np.random.SeedSequence, seed: int,
                samples: int, n_test: int, pilot_samples: int | None,
                max_train_samples: int | None, clock: list[float]) -> PairChoice:
    """The pair the main audit runs on: ``(data0, data1)`` when no ``pairs`` were given, else
    the candidate whose pilot projects the highest bound (pilot ``j`` draws from the next child
    of ``root``; the main run's child 0 is spawned before).

    The pilot budget per pair is fixed by the candidate count before any sampling:
    ``pilot_samples``, else ``max(MIN_PILOT_SAMPLES, int(PILOT_FRACTION * samples) // count)``,
    at most ``max(MIN_PILOT_SAMPLES, max_train_samples)``.
    """
    strategy, seeds = cands.strategy, cands.seeds
    candidates = cands.pairs
    dropped: list[dict[str, Any]] = []
    pair_index: int | None = None
    pilot: list[dict[str, Any]] = []
    n_pilot = 0
    if pairs_given:
        pair_index = 0
        if cands.count > 1:
            n_pilot = pilot_samples if pilot_samples is not None else max(
                MIN_PILOT_SAMPLES, int(PILOT_FRACTION * samples) // cands.count)
            if pilot_samples is None and max_train_samples is not None:
                n_pilot = min(n_pilot, max(MIN_PILOT_SAMPLES, max_train_samples))
            projected: list[float] = []

            def pilot_audit(d0: Any, d1: Any) -> float:
                j = len(projected)
                pilot_seq = root.spawn(1)[0]
                tr = train(mechanism, d0, d1, pilot_seq, cfg, n_pilot, n_test, clock,
                           hedges=False)
                # The pilot's selection split stands in for the main run's: project its best event
                # to the main test size exactly as the main run will rank events.
                best = tr.eps_sweep_best[0].rank_value if tr.eps_sweep_best else -math.inf
                projected.append(best)
                rec = {"pair_index": j, "projected_log_ratio_bound": json_float(best),
                       "statistic": tr.scorer_info, "output_kind": tr.kind,
                       "event": (tr.eps_sweep_best[0].to_dict()
                                 if tr.eps_sweep_best
                                 else no_ranked_event_record(tr.n_select))}
                if strategy is not None:
                    rec["pair"] = [describe_input(d0), describe_input(d1)]
                pilot.append(rec)
                return best

            if strategy is not None or seeds:
                cap = max(1, cands.count - len({pair_key(p) for p in seeds}))
                candidates = search_pairs(
                    strategy if strategy is not None else st_sampled(cands.listed), pilot_audit,
                    cap, seed, seeds=seeds, dropped=dropped,
                    skip=lambda d0, d1: _same_outputs(mechanism, d0, d1, seed, cfg))
            else:
                for d0, d1 in candidates:
                    pilot_audit(d0, d1)
            pair_index = int(np.argmax(projected))
        elif strategy is not None or seeds:
            candidates = search_pairs(
                strategy if strategy is not None else st_sampled(cands.listed),
                lambda d0, d1: 0.0, 1, seed, seeds=seeds, dropped=dropped)
        data0, data1 = candidates[pair_index]
    how = ("the given pair" if not pairs_given else
           f"pair {pair_index} of {len(candidates)} piloted, highest projected bound"
           if len(candidates) > 1 else "the only admissible candidate")
    if seeds and pair_index is not None and pair_index < len(seeds) and \
            any(pair_key(candidates[pair_index]) == pair_key(p) for p in seeds):
        how += ", a seed pair"
    return PairChoice(data0, data1, pair_index, tuple(pilot), n_pilot, tuple(dropped),
                      describe_pair(data0, data1, how=how))


def st_sampled(pairs: Sequence[tuple[Any, Any]]) -> Any:
    """A list of pairs as a strategy (so seeds and a list go through one search)."""
    from hypothesis import strategies as st

    return st.sampled_from(list(pairs))


def _same_outputs(mechanism: Callable[..., Any], d0: Any, d1: Any, seed: int,
                  cfg: AuditConfig) -> str | None:
    """Why a candidate pair is dropped, or None: its outputs on both inputs are identical under a
    common seed (``PROBE_RUNS`` runs), so nothing distinguishes them. Skipped for mechanisms that
    ignore their rng (a common seed means nothing there)."""
    if cfg.reseed_globals:
        return None
    ss = np.random.SeedSequence([seed, 0x5A3E])
    a = as_output_array(mechanism(d0, PROBE_RUNS, np.random.default_rng(ss)), PROBE_RUNS)
    b = as_output_array(mechanism(d1, PROBE_RUNS, np.random.default_rng(ss)), PROBE_RUNS)
    if a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes() and \
            a.dtype.kind != "O":
        return f"its outputs were identical on both inputs over {PROBE_RUNS} runs with a common seed"
    return None
