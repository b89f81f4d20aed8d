"""The test-split statement of one chosen event (step 4 of :mod:`dpaudit.blackbox.empirical_audit`).

A threshold event's two counts give exact one-sided Clopper-Pearson bounds on ``p`` and ``q``
(or, with the joint test, the exact unconditional joint test of both counts,
:mod:`dpaudit.blackbox.joint_test`); a pooled mirrored pair gets its pooled intervals
(:func:`~dpaudit.blackbox.confidence.pooled_proportion_bound`). Each at the event's share
``alpha / m`` of the Bonferroni correction.
"""

from __future__ import annotations

import numpy as np

from dpaudit.blackbox.confidence import (Bonferroni, gdp_mu_from_bounds, gdp_mu_lower_bound,
                                         log_ratio_lower_bound, pooled_proportion_bound,
                                         proportion_bound)
from dpaudit.blackbox.joint_test import joint_epsilon_lower_bound
from dpaudit.blackbox.result import EvaluatedEvent
from dpaudit.blackbox.statistics import PooledEvent, RankedEvent

__all__ = ["evaluate_event"]


def evaluate_event(ranked: RankedEvent, counts: np.ndarray, n_test: int, bonf: Bonferroni,
                   delta: float, joint_test: bool = False) -> EvaluatedEvent:
    """The test-split statement of one ranked event; ``counts`` has one row ``(count0, count1)``
    per component threshold event (two for a pooled pair). ``joint_test``: a threshold event's
    bound comes from the exact joint test at the event's level ``alpha / m``
    (:func:`~dpaudit.blackbox.joint_test.joint_epsilon_lower_bound`; its two counts are
    independent binomials), pooled pairs keep their intervals."""
    ev = ranked.event
    a = bonf.per_interval_alpha
    components = None
    if isinstance(ev, PooledEvent):
        # Kp = first on data1 + second on data0, Kq = first on data0 + second on data1: each a
        # sum of two independent binomials over 2 n_test runs (pooled_proportion_bound). Kp and
        # Kq are not independent (each input's runs feed both), but the two component events
        # are disjoint, so the 0/1 indicators of one run are negatively associated, and so are
        # Kp and Kq, as increasing functions of disjoint sets of independent negatively
        # associated vectors (Joag-Dev and Proschan, Ann. Statist. 11, 1983, P6, P7). Hence
        # P[Kp >= c, Kq <= d] >= P[Kp >= c] P[Kq <= d], and the pair of intervals, each at
        # 1 - sqrt(1 - alpha / m), still holds jointly with probability >= 1 - alpha / m.
        (a0, a1), (b0, b1) = (int(counts[0, 0]), int(counts[0, 1])), (int(counts[1, 0]),
                                                                      int(counts[1, 1]))
        components = ((a0, a1), (b0, b1))
        p = pooled_proportion_bound(a1 + b0, 2 * n_test, a)
        q = pooled_proportion_bound(a0 + b1, 2 * n_test, a)
    else:
        c = (int(counts[0, 0]), int(counts[0, 1]))
        p = proportion_bound(c[ev.numerator], n_test, a)
        q = proportion_bound(c[1 - ev.numerator], n_test, a)
    raw = float(log_ratio_lower_bound(p.lower, q.upper, delta))
    method = "clopper-pearson"
    if joint_test and components is None:
        # Its own valid (1 - alpha / m) statement about the same counts, replacing (not added
        # to) the product's: the Bonferroni bookkeeping over the m events is unchanged.
        jb = joint_epsilon_lower_bound(p.count, p.nobs, q.count, q.nobs, delta=delta,
                                       alpha=bonf.per_event_alpha)
        raw = jb if jb > 0 else min(raw, 0.0)
        method = "exact joint test"
    if components is not None:
        # mu from the guarded pooled ends (the pooled test is the even mixture of the two
        # one-direction tests; G_mu is convex, so mu-GDP bounds the mixture's error rates too).
        mu = max(0.0, float(gdp_mu_from_bounds(p.lower, q.upper)))
    else:
        mu = gdp_mu_lower_bound(p.count, p.nobs, q.count, q.nobs, alpha=bonf.per_event_alpha)
    return EvaluatedEvent(ev, ranked, p, q, raw, max(0.0, raw), mu, components, method)
