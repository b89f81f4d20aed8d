"""What the afkt23 witnesses say about how much a verdict matters.

Each function returns the ``severity`` record of a point's :class:`~dpaudit.evidence.PointEvidence`
(keys of :data:`dpaudit.claims.severity.SEVERITY_EVIDENCE_KEYS`), computed from the same objects as
the point's own evidence; :func:`dpaudit.claims.severity.assess_severity` turns it into the headline.

* Algorithm 5, Theorem 7 (``alg5-approx``): the near-one-delta witness refutes the claim only where
  ``eps_0 = eps/(sqrt(K) log(1/delta))`` is large; :func:`alg5_delta_severity` finds the smallest
  delta from which the same pair's certified bound (calibration at that delta) is above the claim,
  and the largest delta up to which the accountant (same eps, d, T) is within it.
* Algorithm 2 (``alg2``, uncapped): the witness is one released sequence; it needs ``2N + 1`` choices
  among ``d >= 2`` equally likely experts (the first expert, and per pass the drawn expert at equal
  scores and the restart's fresh ``x_0``), and at each of the ``N`` passes the sparse vector must
  fire on its first query, whose value 0 faces the threshold ``2^n + L - Lbar* >= 1 + 4/eta +
  8B/eps_0`` (30,035 at eps = 10, T = 2^30), so ``P_D(o) <= 2^-(2N+1) * P_fire^N`` with ``P_fire`` the
  sparse vector's probability of firing at the smallest of those thresholds
  (:func:`alg2_event_severity`). The bound is loose: the thresholds double with ``n``.
* DP-FTRL: AFKT23 prints no sigma; :data:`DP_FTRL_CALIBRATION_CAVEAT` says so in the headline of a
  ``holds`` (primary reading).
"""

from __future__ import annotations

import math
from typing import Any, Callable, Sequence

from dpaudit.learners.sparse_vector_experts import Algorithm2Parameters
from dpaudit.mechanisms.sparse_vector import sparse_vector_scales
from dpaudit.papers.afkt23.exact import (alg5_accountant, alg5_first_switch_bound,
                                         svt_log_first_above)
from dpaudit.papers.afkt23.gamma import algorithm5_parameters_at_gamma

__all__ = ["DP_FTRL_CALIBRATION_CAVEAT", "alg2_event_severity", "alg5_delta_severity",
           "first_crossing"]

DP_FTRL_CALIBRATION_CAVEAT = (
    "AFKT23 prints no sigma (Algorithm 3 defers to 'Appendix B.1 in (Kairouz et al., 2021)'), so "
    "the audited sigma is dpaudit's: the tree's zCDP calibrated for the replace-one shift 2L of "
    "Definition 2.1")


def alg2_event_severity(params: Algorithm2Parameters, passes: int) -> dict[str, Any]:
    """Severity of AFKT23 Algorithm 2's alternating-sequence witness (Theorem 2, App. B.2).

    ``log P_D(o) <= ln(1/2) + N (2 ln(1/2) + ln P_fire)`` for the one released sequence of the
    witness with ``N = passes`` doubling tests: the first expert and, per pass, the draw among
    equal scores and the restart's fresh ``x_0`` (1/2 each at d = 2), and the sparse vector
    (threshold noise ``Lap(b1)``, query noise ``Lap(b2)`` at ``eps_0/2``,
    :func:`~dpaudit.mechanisms.sparse_vector.sparse_vector_scales`) firing on a zero query against
    the threshold ``2^n + threshold_offset``, at most its probability at ``n = 0``, ``1 +
    threshold_offset`` (the tail is decreasing in the threshold); each doubling test's
    probability is bounded by 1.

    Parameters
    ----------
    params
        Algorithm 2's calibration at the point.
    passes
        ``N``, the witness's number of doubling tests (an integer >= 0).

    Returns
    -------
    dict
        ``event_log10_probability_upper`` (the bound above, in log10) and ``event`` (a sentence
        naming the threshold and ``ln P_fire`` used).

    Raises
    ------
    ValueError
        If ``passes`` is not an integer >= 0.
    """
    if not isinstance(passes, int) or passes < 0:
        raise ValueError(f"passes must be an integer >= 0, got {passes!r}")
    b1, b2 = sparse_vector_scales(params.epsilon0 / 2.0)
    threshold = 1.0 + params.threshold_offset
    log_fire = svt_log_first_above([-threshold], 0, b1, b2)
    log_p = math.log(0.5) + passes * (2.0 * math.log(0.5) + log_fire)
    return {"event_log10_probability_upper": float(log_p / math.log(10.0)),
            "event": ("one released sequence (the two experts alternate every round; each of its "
                      f"{passes} draws also needs the sparse vector to fire on a zero query "
                      f"against a threshold >= {threshold:.5g}, probability <= e^{log_fire:.4g} "
                      "each; loose, as the thresholds double)")}


def first_crossing(f: Callable[[float], float], lo: float, hi: float, *, tol: float = 1e-7,
                   iterations: int = 60) -> tuple[float, float]:
    """Bisection for the ``x`` in ``[lo, hi]`` where ``f`` turns positive.

    Used by :func:`alg5_delta_severity` for the deltas at which AFKT23 Theorem 7's witness starts
    to refute and its accountant stops holding.

    Parameters
    ----------
    f
        A function of one float, ``f(lo) <= 0 < f(hi)``.
    lo, hi
        The bracket's ends.
    tol
        Stop once ``hi - lo <= tol``.
    iterations
        Stop after this many halvings at the most.

    Returns
    -------
    tuple of float
        The final bracket ``(lo, hi)``: still ``f(lo) <= 0 < f(hi)``, and ``hi - lo <= tol``
        unless the iterations ran out first.

    Raises
    ------
    ValueError
        If ``f(lo) > 0`` or ``f(hi) <= 0``.
    """
    if not (f(lo) <= 0.0 < f(hi)):
        raise ValueError(f"f must be <= 0 at lo={lo!r} and > 0 at hi={hi!r}")
    for _ in range(iterations):
        if hi - lo <= tol:
            break
        mid = 0.5 * (lo + hi)
        if f(mid) > 0.0:
            hi = mid
        else:
            lo = mid
    return lo, hi


#: The deltas scanned for the accountant's side (below the witness's delta).
_ACCOUNTANT_DELTAS: Sequence[float] = ([10.0 ** -k for k in range(10, 0, -1)]
                                       + [round(0.05 * i, 2) for i in range(3, 20)])


def alg5_delta_severity(epsilon: float, d: int, T: int, delta: float, gamma: float | None,
                        eps0_reading: str, rows: Sequence[float], replaced: int, j: int
                        ) -> dict[str, Any]:
    """Severity of AFKT23 Theorem 7's first-switch witness at ``delta`` (App. C, Algorithm 5).

    ``delta_from``: the smallest delta in ``[delta - 0.01, delta]`` (bisection to 1e-7, the
    calibration redone at each delta) from which the pair's certified ``ln((P_D(S) - delta) /
    P_D'(S))`` (:func:`~dpaudit.papers.afkt23.exact.alg5_first_switch_bound`) is above
    ``epsilon``, with a sentence on ``eps_0`` there (``where``); only when the witness refutes at
    ``delta`` and not at ``delta - 0.01``. ``holds_up_to_delta``: the largest delta of the scan
    1e-10, ..., 0.1, 0.15, ..., 0.95 below ``delta`` up to which
    :func:`~dpaudit.papers.afkt23.exact.alg5_accountant` at the same ``epsilon, d, T`` is within
    the claim at every scanned delta, refined by bisection towards the first scanned delta where
    it is not.

    Parameters
    ----------
    epsilon, d, T
        The point's privacy parameter, number of experts and horizon.
    delta
        The point's delta (the witness's).
    gamma
        The prior mass (``None``: ``1/d``).
    eps0_reading
        Theorem 7's ``eps_0`` reading (see
        :func:`~dpaudit.papers.afkt23.gamma.algorithm5_parameters_at_gamma`).
    rows, replaced, j
        The witness's pair and event (:func:`~dpaudit.papers.afkt23.exact.
        alg5_first_switch_bound`): the losses of experts ``1..d-1``, the zeroed round and the
        query at which phase 1 halts.

    Returns
    -------
    dict
        ``delta_from`` and ``where``, ``holds_up_to_delta``, each where found (possibly ``{}``).
    """
    def params(dl: float) -> Any:
        return algorithm5_parameters_at_gamma(epsilon, d, T, gamma, delta=dl,
                                              eps0_reading=eps0_reading)

    def excess(dl: float) -> float:
        fb = alg5_first_switch_bound(params(dl), list(rows), replaced, 0.0, j)
        return fb.certified - epsilon

    out: dict[str, Any] = {}
    lo = max(0.0, delta - 0.01)
    if excess(delta) > 0.0 and excess(lo) <= 0.0:
        dl = first_crossing(excess, lo, delta)[1]
        out["delta_from"] = dl
        e0 = params(dl).epsilon0
        out["where"] = (f"eps_0 = eps / (sqrt(K) log(1/delta)) exceeds {e0:.3g} (= {e0 / epsilon:.3g} "
                        "eps) and the sparse vector is nearly deterministic")
    good = None
    for dl in _ACCOUNTANT_DELTAS:
        if dl >= delta or alg5_accountant(params(dl)) > epsilon:
            if good is not None and dl < delta:
                good = first_crossing(lambda x: alg5_accountant(params(x)) - epsilon, good, dl)[0]
            break
        good = dl
    if good is not None:
        out["holds_up_to_delta"] = good
    return out
