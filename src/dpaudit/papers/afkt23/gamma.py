"""Algorithm 5's calibration at any gamma of Theorems 6 and 7, not only gamma = 1/d (issue 33).

Asi, Feldman, Koren & Talwar, ICML 2023 (``afkt23.txt``), App. C. Theorem 6 runs Algorithm 5 "with
parameters alpha = 1, beta = 1/T^2, K = 2 log 1/gamma, eps_0 = eps/K, and eta = eps_0/(56 log T)";
gamma is the prior mass of Lemma C.3 ("For some gamma > 0, let L*(gamma) be such that
Pr_{x ~ mu}[sum_t l_x(t) <= L*(gamma)] >= gamma"), a probability, and ``K > 0`` needs ``gamma < 1``:
the stated range is ``0 < gamma < 1``. Only the DP-OPE corollary fixes it ("In particular, for
DP-OPE with d experts, ... by setting gamma = 1/d"). Theorem 7 is the same with "eps_0 =
eps/sqrt(K) log 1/delta" (two printed forms; ``eps0_reading``).

The theorem's hypothesis "If L*(gamma) <= log^2 1/gamma log T/eps" bounds the data's best loss for
the loss bound (Lemma C.3 needs it so that the K phases suffice); privacy (Definition 2.1)
quantifies over every pair of neighbouring sequences, and the audit at gamma = 1/d reads it the same
way (its best pair at eps = 3000 has L* = 5).

The loop "if k < K" with the real K allows ``ceil(K)`` phases, so the number of phases jumps where
``K = 2 ln(1/gamma)`` crosses an integer ``n``: at ``gamma = e^{-n/2}`` (0.6065, 0.3679, ...). Just
above a jump (``K = n + 0``) the loop allows ``n + 1`` phases of ``eps_0 = eps/K ~ eps/n`` each.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Sequence

from dpaudit.learners.experts import log_of
from dpaudit.learners.potential_experts import Algorithm5Parameters, algorithm5_parameters
from dpaudit.learners.sparse_vector_experts import selection_cap

__all__ = ["algorithm5_parameters_at_gamma", "phase_jump_gamma", "GAMMA_EXTREME", "GAMMA_JUMPS",
           "GAMMA_POINTS_PURE", "GAMMA_POINTS_APPROX", "gamma_finding", "gamma_severity"]

#: The upper end of gamma's range audited (K = 2 ln(1/0.99) = 0.0201: one phase, eps_0 = 49.75 eps).
#: The lower end is the grid's gamma = 1/d at d = 2^20 (standard budget) or 1024 (quick).
GAMMA_EXTREME = 0.99
#: Both sides of the jumps of ceil(K): K = 0.989 | 1.022 (1 | 2 phases), K = 1.989 | 2.043 (2 | 3).
GAMMA_JUMPS = (0.61, 0.6, 0.37, 0.36)

_PAIR_T6 = dict(d=2, T=6, eps0_reading="eps0-formula")
#: Theorem 6: the exact law at T = 6, d = 2 where the loop allows one phase (gamma = 0.99, 0.61);
#: the best d = 2 pair (audit.LARGE_EPS_STREAM, eps = 3000) just above the jump to two phases
#: (gamma = 0.6: eps_0 = eps/1.022, two switches); the accountant at T = 4096 across K = 2.
GAMMA_POINTS_PURE: tuple[dict[str, Any], ...] = (
    dict(epsilon=1.0, gamma=GAMMA_EXTREME, **_PAIR_T6),
    dict(epsilon=1.0, gamma=0.61, **_PAIR_T6),
    dict(epsilon=3000.0, d=2, T=10, eps0_reading="eps0-formula", pair="two switches", gamma=0.6),
    dict(epsilon=1.0, d=2, T=4096, eps0_reading="eps0-formula", gamma=0.37),
    dict(epsilon=1.0, d=2, T=4096, eps0_reading="eps0-formula", gamma=0.36),
)
#: Theorem 7 (primary eps0-formula reading, delta = 1e-6): the accountant at the same gammas.
GAMMA_POINTS_APPROX: tuple[dict[str, Any], ...] = tuple(
    dict(epsilon=0.9, d=2, T=4096, eps0_reading="eps0-formula", delta=1e-6, gamma=g)
    for g in (GAMMA_EXTREME, *GAMMA_JUMPS))


def phase_jump_gamma(n: int) -> float:
    """The gamma at which ``K = 2 ln(1/gamma)`` equals the integer ``n >= 1`` (``e^{-n/2}``): the
    loop's ``ceil(K)`` phases jump from ``n`` (gamma above) to ``n + 1`` (gamma below)."""
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise ValueError(f"n must be an integer >= 1, got {n!r}")
    return math.exp(-n / 2.0)


def algorithm5_parameters_at_gamma(epsilon: float, d: int, T: int, gamma: float | None = None, *,
                                   delta: float = 0.0, eps0_reading: str = "eps0-formula"
                                   ) -> Algorithm5Parameters:
    """Theorem 6 (``delta = 0``) or Theorem 7 calibration of Algorithm 5 over ``d`` experts
    (uniform ``mu``) at prior mass ``gamma`` in ``(0, 1)``; ``None`` or ``1/d``: the DP-OPE corollary's
    ``gamma = 1/d``, exactly :func:`~dpaudit.learners.potential_experts.algorithm5_parameters`.

    ``K = 2 ln(1/gamma)``, ``ceil(K)`` phases (``k < K``), ``eps_0 = eps/K`` (pure) or Theorem 7's
    form, ``eta = eps_0/(56 ln T)``; ``alpha = 1``, ``beta = 1/T^2``."""
    base = algorithm5_parameters(epsilon, d, T, delta=delta,
                                 eps0_reading=eps0_reading)  # type: ignore[arg-type]
    if gamma is None or gamma == base.gamma:
        return base
    if isinstance(gamma, bool) or not isinstance(gamma, (int, float)) or not 0.0 < gamma < 1.0:
        raise ValueError(f"gamma must be in (0, 1) (Lemma C.3's prior mass, K = 2 log(1/gamma) > 0), "
                         f"got {gamma!r}")
    K = 2.0 * log_of(1.0 / gamma, base.log_base)
    if base.delta == 0.0:
        eps0 = base.epsilon / K
    elif eps0_reading == "eps0-formula":
        eps0 = base.epsilon / (math.sqrt(K) * log_of(1.0 / base.delta, base.log_base))
    else:
        eps0 = base.epsilon / math.sqrt(2.0 * K * log_of(1.0 / base.delta, base.log_base))
    return dataclasses.replace(base, gamma=float(gamma), K=K,
                               selections=selection_cap(K, base.k_reading), epsilon0=eps0,
                               eta=eps0 / (56.0 * log_of(T, base.log_base)))


def gamma_finding(plans: Sequence[Any]) -> list[str]:
    """One finding on the points audited at a gamma other than ``1/d`` (``plans``: the claim's
    :class:`~dpaudit.claims.driver.PointPlan` objects), worst first; empty when there are none."""
    pts = [x for x in plans if "gamma" in x.parameters and "statistic" not in x.parameters
           and x.evidence["calibration"]["gamma"] != 1.0 / x.parameters["d"]]
    if not pts:
        return []
    rows = []
    for x in sorted(pts, key=lambda x: -max(x.exact or 0.0, 0.0) / x.claimed_epsilon):
        cal = x.evidence["calibration"]
        lower = ("" if x.exact is None else
                 f", {'certified' if 'path_bound' in x.evidence else 'exact'} epsilon "
                 f"{x.exact:.4g}{' > ' if x.exact > x.claimed_epsilon else ' <= '}"
                 f"{x.claimed_epsilon:g}")
        rows.append(f"gamma = {cal['gamma']:g} (eps = {x.parameters['epsilon']:g}, T = "
                    f"{x.parameters['T']}: K = {cal['K']:.4g}, {cal['selections']} phase(s) of "
                    f"eps_0 = {cal['epsilon0'] / x.parameters['epsilon']:.4g} eps; accountant "
                    f"{x.accountant:.4g}{lower})")
    return ["Theorems 6-7 are stated for every gamma in (0, 1) ('K = 2 log 1/gamma'; gamma = 1/d "
            "only 'in particular' for DP-OPE): at the upper end eps_0 = eps/K grows without bound, "
            "and where K crosses an integer the loop 'k < K' gains a phase (ceil(K)) while the "
            "proof charges K. Audited: " + "; ".join(rows) + "."]


def gamma_severity(params: Algorithm5Parameters) -> dict[str, Any]:
    """The ``evidence["severity"]`` entry of a point at a gamma other than ``1/d`` (empty at
    ``1/d``): what gamma does to the calibration there, for the headline of a violation."""
    if params.gamma == 1.0 / params.d:
        return {}
    return {"where": (f"gamma = {params.gamma:g} (Theorems 6-7 state gamma in (0, 1); 1/d only for "
                      f"DP-OPE) gives K = 2 ln(1/gamma) = {params.K:.4g}, {params.selections} "
                      f"phase(s) ('k < K') of eps_0 = {params.epsilon0 / params.epsilon:.4g} eps")}
