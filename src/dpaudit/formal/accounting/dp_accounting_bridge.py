"""The guarded bridge to dp-accounting: any ``dp_accounting.DpEvent`` made of supported pieces to
epsilon(delta) or delta(epsilon), without dp-accounting's known pitfalls (AUDIT-METHOD section 4).

The event walker flattens Composed/SelfComposed events into pieces with explicit counts (so
``PLDAccountant``'s dropped count of a self-composed randomized response cannot occur), and
accounts for them exactly where an exact answer exists (Gaussian pieces collapse into one Gaussian;
k identical pure pieces use Kairouz-Oh-Viswanath; a Gaussian with a few groups of two-point pieces
is enumerated) and otherwise with a pessimistic privacy loss distribution (dp-accounting's PLD
module; two-point pieces through a connect-the-dots PLD built here). :class:`GuardedAccountant` is
a ``dp_accounting.PrivacyAccountant`` built on it (for calibration).

Conventions and tolerances: see :mod:`dpaudit.formal.accounting`.
"""

from __future__ import annotations

import collections
import functools
import math
import numbers
from dataclasses import dataclass, field
from typing import Literal, Sequence

import dp_accounting
import numpy as np
from dp_accounting.pld import privacy_loss_distribution as pld_lib
from dp_accounting.rdp import rdp_privacy_accountant as rdp_lib
from scipy import special

from dpaudit.mechanisms.events import EpsilonDeltaDpEvent
from dpaudit.mechanisms.gaussian import (
    DIRECT_FORMULA_MIN_GAP,
    LOG_DELTA_SLACK,
    log_gaussian_delta_by_quadrature,
    safe_monotone_root,
)
from dpaudit._validation import (
    check_delta,
    check_finite_array,
    check_int,
    check_nonnegative,
    check_positive,
)
from dpaudit.formal.accounting.closed_forms import (
    ADD_OR_REMOVE, MAX_BRACKET_STEPS, binomial_log_pmf, finite_log, gaussian_delta,
    gaussian_epsilon, homogeneous_pure_composition_delta, homogeneous_pure_composition_epsilon)
from dpaudit.formal.accounting.closed_forms import DEFAULT_VALUE_DISCRETIZATION_INTERVAL as _H




Method = Literal["auto", "pld", "rdp"]
_METHODS = ("auto", "pld", "rdp")

# Randomized response only: "the input bucket is replaced by another", a single neighbouring step.
_RR_RELATION = dp_accounting.NeighboringRelation.REPLACE_ONE

class UnsupportedEventError(dp_accounting.UnsupportedEventError, TypeError):
    """A ``DpEvent`` (or sub-event) this module cannot account for exactly."""

_SUPPORTED = ("NoOpDpEvent, NonPrivateDpEvent, GaussianDpEvent, LaplaceDpEvent, "
              "DiscreteLaplaceDpEvent, RandomizedResponseDpEvent, EpsilonDeltaDpEvent (dpaudit), "
              "ComposedDpEvent and SelfComposedDpEvent of these")


@dataclass
class _Pieces:
    """A DpEvent flattened into independent pieces with explicit multiplicities."""

    nonprivate: bool = False
    gaussian_mu_sq: float = 0.0  # sum over Gaussian pieces of count / noise_multiplier^2
    # Multiplicities keyed by the piece's parameters.
    laplace: collections.Counter = field(default_factory=collections.Counter)  # b
    discrete_laplace: collections.Counter = field(default_factory=collections.Counter)  # (a, s)
    randomized_response: collections.Counter = field(default_factory=collections.Counter)  # (p, k)
    epsilon_delta: collections.Counter = field(default_factory=collections.Counter)  # (eps, delta)

    @property
    def has_gaussian(self) -> bool:
        return self.gaussian_mu_sq > 0.0

    @property
    def has_other(self) -> bool:
        return bool(self.laplace or self.discrete_laplace or self.randomized_response
                    or self.epsilon_delta)

    @property
    def empty(self) -> bool:
        return not (self.nonprivate or self.has_gaussian or self.has_other)

    def pure_epsilon(self) -> float | None:
        """Exact epsilon at delta = 0 (sum of the pieces' maximal losses); None if not pure."""
        if self.nonprivate or self.has_gaussian or any(d > 0 for (_, d) in self.epsilon_delta):
            return None
        terms = [c / b for b, c in self.laplace.items()]
        terms += [c * a * s for (a, s), c in self.discrete_laplace.items()]
        terms += [c * _rr_epsilon(p, k) for (p, k), c in self.randomized_response.items()]
        terms += [c * e for (e, _), c in self.epsilon_delta.items()]
        return math.fsum(terms)


def _rr_epsilon(p: float, k: int) -> float:
    """Pure epsilon of k-ary randomized response with noise parameter p: ln(1 + k (1 - p) / p)."""
    return math.log1p(k * (1.0 - p) / p)


def _flatten(event: object, count: int, out: _Pieces) -> None:
    if not isinstance(event, dp_accounting.DpEvent):
        raise TypeError(f"event must be a dp_accounting.DpEvent, got {type(event).__name__}")
    if isinstance(event, dp_accounting.NoOpDpEvent):
        return
    if isinstance(event, dp_accounting.NonPrivateDpEvent):
        out.nonprivate = out.nonprivate or count > 0
        return
    if isinstance(event, dp_accounting.SelfComposedDpEvent):
        # Counts are multiplied down the tree for every kind of piece: this is the guard against
        # PLDAccountant ignoring the count of a self-composed randomized response.
        inner = check_int(event.count, "SelfComposedDpEvent.count", minimum=0)
        _flatten(event.event, count * inner, out)
        return
    if isinstance(event, dp_accounting.ComposedDpEvent):
        for sub in event.events:
            _flatten(sub, count, out)
        return
    if isinstance(event, dp_accounting.GaussianDpEvent):
        z = check_nonnegative(event.noise_multiplier, "GaussianDpEvent.noise_multiplier")
        if count > 0:
            if z == 0.0:
                out.nonprivate = True
            else:
                out.gaussian_mu_sq += count / (z * z)
        return
    if isinstance(event, dp_accounting.LaplaceDpEvent):
        b = check_nonnegative(event.noise_multiplier, "LaplaceDpEvent.noise_multiplier")
        if count > 0:
            if b == 0.0:
                out.nonprivate = True
            else:
                out.laplace[b] += count
        return
    if isinstance(event, dp_accounting.dp_event.DiscreteLaplaceDpEvent):
        a = check_nonnegative(event.noise_parameter, "DiscreteLaplaceDpEvent.noise_parameter")
        s = check_int(event.sensitivity, "DiscreteLaplaceDpEvent.sensitivity", minimum=0)
        if count > 0 and s > 0:
            if a == 0.0:
                out.nonprivate = True
            else:
                out.discrete_laplace[(a, s)] += count
        return
    if isinstance(event, dp_accounting.RandomizedResponseDpEvent):
        p = check_nonnegative(event.noise_parameter, "RandomizedResponseDpEvent.noise_parameter")
        if p > 1.0:
            raise ValueError(
                f"RandomizedResponseDpEvent.noise_parameter must be in [0, 1], got {p!r}")
        k = check_int(event.num_buckets, "RandomizedResponseDpEvent.num_buckets", minimum=1)
        if count > 0 and k > 1 and p < 1.0:
            if p == 0.0:
                out.nonprivate = True
            else:
                out.randomized_response[(p, k)] += count
        return
    if isinstance(event, EpsilonDeltaDpEvent):
        e = check_nonnegative(event.epsilon, "EpsilonDeltaDpEvent.epsilon")
        d = check_nonnegative(event.delta, "EpsilonDeltaDpEvent.delta")
        if d > 1.0:
            raise ValueError(f"EpsilonDeltaDpEvent.delta must be in [0, 1], got {d!r}")
        if count > 0 and (e > 0.0 or d > 0.0):
            if d == 1.0:
                out.nonprivate = True
            else:
                out.epsilon_delta[(e, d)] += count
        return
    hint = ""
    if isinstance(event, dp_accounting.SingleEpochTreeAggregationDpEvent):
        hint = (" For tree aggregation use tree_leaf_epsilon (per-leaf composition of the node "
                "mechanisms).")
    raise UnsupportedEventError(f"{type(event).__name__} is not supported by "
                                f"dpaudit.formal.accounting; supported: {_SUPPORTED}.{hint}")


def _pieces(event: object) -> _Pieces:
    out = _Pieces()
    _flatten(event, 1, out)
    return out


def _check_method(method: object) -> str:
    if method not in _METHODS:
        raise ValueError(f"method must be one of {_METHODS}, got {method!r}")
    return str(method)


def _binary_rr_noise(epsilon: float) -> float:
    """Noise parameter of binary randomized response whose likelihood ratio is e^epsilon."""
    return 2.0 * float(special.expit(-epsilon))  # 2 / (1 + e^epsilon), no overflow


# --------------------------------------------------------------------------------------------------
# Two-point pieces: exact enumeration, and connect-the-dots PLDs
# --------------------------------------------------------------------------------------------------

#: Largest number of joint outcomes the exact two-point composition enumerates without a Gaussian
#: part (set-up O(N log N), then O(log N) per delta query and a closed-form inversion)...
_EXACT_MAX_OUTCOMES = 1 << 20
#: ... and with a Gaussian part (every delta evaluation costs two log_ndtr per outcome).
_EXACT_MAX_OUTCOMES_GAUSSIAN = 1 << 17
#: Groups with more pieces than this go to the PLD.
_EXACT_MAX_GROUP_SIZE = 1 << 22
#: Binomial outcomes less likely than this are not enumerated; their mass (at most this times the
#: group size plus one) is counted as infinite privacy loss, which keeps delta an upper bound.
_NEGLIGIBLE_MASS = 1e-300
#: Relative margin on delta when inverting the exact two-point composition (covers the float64
#: rounding of the enumerated log-probabilities, <~ 1e-13 relative).
_EXACT_DELTA_RTOL = 1e-12
#: PLD grid for two-point pieces (no Gaussian part): at least this many steps per smallest piece
#: epsilon, but never finer than value_discretization_interval / _MAX_GRID_REFINEMENT.
_GRID_STEPS_PER_PIECE = 100
_MAX_GRID_REFINEMENT = 100
_MAX_GRID_POINTS = 1 << 21


def _group_outcomes(eps: float, count: int) -> tuple[np.ndarray, np.ndarray, float]:
    """Losses eps (count - 2 i) of ``count`` composed +-eps pieces, their log-probabilities, and a
    bound on the mass left out.

    Under the first distribution of the dominating pair each piece's loss is +eps with probability
    e^eps / (1 + e^eps), so i (the number of -eps outcomes) is Binomial(count, 1 / (1 + e^eps)).
    """
    i = np.arange(count + 1, dtype=np.float64)
    log_p = binomial_log_pmf(count, -float(np.logaddexp(0.0, eps)),
                              -float(np.logaddexp(0.0, -eps)), i)
    keep = log_p >= math.log(_NEGLIGIBLE_MASS)
    dropped = float(count + 1 - int(np.count_nonzero(keep))) * _NEGLIGIBLE_MASS
    return eps * (count - 2.0 * i[keep]), log_p[keep], dropped


class _TwoPointComposition:
    """Exact privacy curve of a Gaussian (shift mu >= 0) composed with groups of two-point pieces.

    An (eps, delta)-DP piece is dominated by the pair whose privacy loss is +inf with probability
    delta and otherwise +-eps, +eps with probability e^eps / (1 + e^eps): binary randomized
    response plus an atom at infinity (Kairouz, Oh & Viswanath 2015; Murtagh & Vadhan 2016); a
    binary ``RandomizedResponseDpEvent`` is exactly such a pair with delta = 0. In a group of k
    equal pieces only the number of -eps outcomes matters, so the finite joint loss takes
    prod_g (k_g + 1) values L, all enumerated (this is what makes it exact; Murtagh & Vadhan show
    the general problem is #P-hard, hence the size caps and the PLD fallback). With
    S = prod_g (1 - delta_g)^{k_g},

        delta(eps) = (1 - S) + S * sum_L P(L) delta_G(eps - L),

    delta_G being the Gaussian hockey-stick curve at any real argument (Balle & Wang 2018,
    Theorem 8; (1 - e^x)_+ without a Gaussian part). Outcomes of probability < 1e-300 per group
    are counted as infinite loss (a bound). Results are upper bounds within ~1e-12 relative in
    delta of the exact values; epsilon is never below the exact one by more than float rounding.
    """

    def __init__(self, mu: float, groups: list[tuple[float, float, int]],
                 parts: list[tuple[np.ndarray, np.ndarray, float]]) -> None:
        loss, log_p, dropped = np.zeros(1), np.zeros(1), 0.0
        for group_loss, group_log_p, group_dropped in parts:
            loss = (loss[:, None] + group_loss[None, :]).ravel()
            log_p = (log_p[:, None] + group_log_p[None, :]).ravel()
            dropped += group_dropped
        order = np.argsort(loss, kind="stable")
        self._loss = loss[order]
        self._log_p = log_p[order]
        self._mu = mu
        log_s = math.fsum(k * math.log1p(-d) for _, d, k in groups)
        self._s = math.exp(log_s)  # no piece takes its infinite-loss atom
        self._infinite = -math.expm1(log_s)
        self._dropped = min(dropped, 1.0)
        if mu == 0.0:
            # Suffix sums of P(L) and P(L) e^{-L} over L sorted ascending, in extended precision:
            # for eps in [L_j, L_{j+1}), delta_finite(eps) = S1[j+1] - e^eps S2[j+1].
            zero = np.zeros(1, dtype=np.longdouble)
            mass = np.exp(self._log_p.astype(np.longdouble))
            weighted = np.exp((self._log_p - self._loss).astype(np.longdouble))
            self._s1 = np.concatenate([np.cumsum(mass[::-1])[::-1], zero])
            self._s2 = np.concatenate([np.cumsum(weighted[::-1])[::-1], zero])

    @classmethod
    def build(cls, mu: float,
              groups: list[tuple[float, float, int]]) -> "_TwoPointComposition | None":
        """The exact composition, or None when it would enumerate too many outcomes."""
        if not groups or any(k > _EXACT_MAX_GROUP_SIZE for _, _, k in groups):
            return None
        cap = _EXACT_MAX_OUTCOMES_GAUSSIAN if mu > 0.0 else _EXACT_MAX_OUTCOMES
        parts = [_group_outcomes(e, k) for e, _, k in groups]
        if math.prod(len(part[0]) for part in parts) > cap:
            return None
        return cls(mu, groups, parts)

    # -- delta of the finite part (the enumerated outcomes) ------------------------------------

    def _pure_finite_delta(self, eps: float) -> np.longdouble:
        j = int(np.searchsorted(self._loss, eps, side="right"))
        value = self._s1[j] - np.exp(np.longdouble(eps)) * self._s2[j]
        return max(value, np.longdouble(0.0))

    def _log_gaussian_finite_delta(self, eps: float) -> float:
        """log sum_L P(L) delta_G(eps - L), each term evaluated to ~1e-11 relative or bounded."""
        mu, x = self._mu, eps - self._loss
        with np.errstate(all="ignore"):
            la = special.log_ndtr(-x / mu + mu / 2.0)
            log_phi_b = special.log_ndtr(-x / mu - mu / 2.0)
            gap = la - (x + log_phi_b)
            magnitude = np.abs(la) + np.abs(x) + np.abs(log_phi_b)
            direct = (gap > 0.0) & (gap >= DIRECT_FORMULA_MIN_GAP * magnitude) & np.isfinite(la)
            terms = np.where(direct, self._log_p + la + np.log(-np.expm1(-gap)), -np.inf)
            total = float(special.logsumexp(terms)) if np.any(direct) else -math.inf
            ill = np.flatnonzero(~direct & np.isfinite(la))
            if ill.size == 0:
                return total
            # Near-cancelling terms: 1 - e^{-g} <= g, g known to ~4e-16 * magnitude, bounds them;
            # those that can matter (> 1e-13 of the rest) are integrated accurately instead.
            bound = self._log_p[ill] + la[ill] + np.log(np.maximum(gap[ill], 0.0)
                                                         + 4e-16 * magnitude[ill])
        matters = bound > total + math.log(1e-13)
        accurate = [float(self._log_p[j]) + log_gaussian_delta_by_quadrature(mu, float(x[j]))
                    for j in ill[matters][:_MAX_QUADRATURES]]
        rest = np.concatenate([bound[~matters], bound[matters][_MAX_QUADRATURES:]])
        return float(special.logsumexp(np.concatenate([[total], accurate, rest])))

    # -- public queries ---------------------------------------------------------------------------

    def delta(self, epsilon: float) -> float:
        if self._mu == 0.0:
            finite = float(self._pure_finite_delta(epsilon))
        else:
            finite = math.exp(self._log_gaussian_finite_delta(epsilon))
        return min(self._infinite + self._s * (finite + self._dropped), 1.0)

    def epsilon(self, delta: float) -> float:
        """Smallest epsilon >= 0 with delta(epsilon) <= ``delta`` (``inf`` if none)."""
        target = (delta - self._infinite) / self._s - self._dropped  # for the finite part
        if not target > 0.0:
            return math.inf
        if self._mu == 0.0:
            return self._pure_epsilon(target * (1.0 - _EXACT_DELTA_RTOL))
        log_target = math.log(target) - LOG_DELTA_SLACK  # Gaussian terms: ~1e-11 accurate

        def gap(eps: float) -> float:
            return finite_log(self._log_gaussian_finite_delta(eps)) - log_target

        if gap(0.0) <= 0.0:
            return 0.0
        hi = max(1.0, 2.0 * float(self._loss[-1]))
        for _ in range(MAX_BRACKET_STEPS):
            if gap(hi) <= 0.0:
                break
            hi *= 2.0
        return safe_monotone_root(gap, 0.0, hi, safe_side="hi")

    def _pure_epsilon(self, target: float) -> float:
        if self._pure_finite_delta(0.0) <= target:
            return 0.0
        loss = self._loss
        # delta_finite is continuous and decreasing, with kinks at the losses: find the first
        # positive loss where it meets the target, then solve S1 - e^eps S2 = target before it.
        kinks = np.unique(loss[loss > 0.0])
        at_kinks = np.searchsorted(loss, kinks, side="right")
        values = self._s1[at_kinks] - np.exp(kinks.astype(np.longdouble)) * self._s2[at_kinks]
        m = int(np.argmax(values <= target))  # values[-1] = 0 < target
        lower = float(kinks[m - 1]) if m > 0 else 0.0
        j = int(np.searchsorted(loss, lower, side="right"))
        eps = float(np.log(self._s1[j] - np.longdouble(target)) - np.log(self._s2[j]))
        eps = min(max(eps, lower), float(kinks[m]))
        for _ in range(64):  # rounding of the logarithms: step up to the safe side
            if self._pure_finite_delta(eps) <= target:
                return eps
            eps = float(np.nextafter(eps, math.inf))
        return float(kinks[m])


#: At most this many near-cancelling Gaussian terms are integrated per evaluation (others bounded).
_MAX_QUADRATURES = 256


def _two_point_pld(epsilon: float, delta: float, h: float) -> pld_lib.PrivacyLossDistribution:
    """Pessimistic connect-the-dots PLD of the (epsilon, delta) dominating pair on the grid h Z.

    Each loss atom l (mass m, +-epsilon) lying between grid points a < l < b = a + h is replaced by
    masses m (1 - e^{-(l - a)}) / (1 - e^{-h}) on b and the rest on a. This keeps both
    distributions' total masses, so the hockey-stick curve is unchanged for e^eps <= e^a, linear in
    e^eps (a chord of the convex true curve, hence above it) on [e^a, e^b], and zero beyond: a valid
    pessimistic PLD (Doroshenko et al. 2022), symmetric like the pair itself, whose error is second
    order in h. ``from_privacy_parameters`` instead rounds epsilon up to the grid, an error of up to
    one grid step per piece (40% of epsilon(delta) for 1000 pieces of 1.05e-3 at h = 1e-4).
    """
    masses: collections.defaultdict[int, float] = collections.defaultdict(float)
    for loss, mass in ((epsilon, (1.0 - delta) * float(special.expit(epsilon))),
                       (-epsilon, (1.0 - delta) * float(special.expit(-epsilon)))):
        index = math.floor(loss / h)
        u = loss - index * h  # in [0, h) up to rounding
        if u <= 0.0:
            masses[index] += mass
            continue
        u = min(u, h)
        upper = mass * math.expm1(-u) / math.expm1(-h)
        masses[index + 1] += upper
        masses[index] += mass - upper
    return pld_lib.PrivacyLossDistribution.create_from_rounded_probability(
        dict(masses), delta, h, pessimistic_estimate=True)


class _Account:
    """epsilon(delta) and delta(epsilon) of one flattened event; builds its PLD/RDP once, lazily."""

    def __init__(self, event: object, method: str, value_discretization_interval: float) -> None:
        self.pieces = _pieces(event)
        self.method = _check_method(method)
        self.h = check_positive(value_discretization_interval, "value_discretization_interval")
        self._pld: pld_lib.PrivacyLossDistribution | None = None
        self._rdp: tuple[np.ndarray, np.ndarray] | None = None
        self._exact: _TwoPointComposition | bool | None = None  # False: not applicable

    @property
    def mu(self) -> float:
        return math.sqrt(self.pieces.gaussian_mu_sq)

    @property
    def gaussian_only(self) -> bool:
        return self.pieces.has_gaussian and not self.pieces.has_other

    def homogeneous_pure(self) -> tuple[float, int] | None:
        """(epsilon0, k) if the event is k-fold binary randomized response with ratio e^epsilon0.

        That is the case for k identical pure ``EpsilonDeltaDpEvent(epsilon0, 0)`` pieces (their
        dominating pair) or k identical binary ``RandomizedResponseDpEvent`` pieces, whose
        composition has the exact closed form :func:`homogeneous_pure_composition_delta`.
        """
        pc = self.pieces
        if pc.nonprivate or pc.has_gaussian or pc.laplace or pc.discrete_laplace:
            return None
        groups: list[tuple[float, int]] = []
        for (e, d), c in pc.epsilon_delta.items():
            if d > 0.0:
                return None
            groups.append((e, c))
        for (p, k), c in pc.randomized_response.items():
            if k != 2:
                return None
            groups.append((_rr_epsilon(p, k), c))
        return groups[0] if len(groups) == 1 else None

    def two_point_groups(self) -> list[tuple[float, float, int]] | None:
        """(epsilon, delta, count) per group if every non-Gaussian piece is a two-point pair.

        That is ``EpsilonDeltaDpEvent`` pieces (their dominating pairs) and binary
        ``RandomizedResponseDpEvent`` pieces; None if any other kind of piece is present.
        """
        pc = self.pieces
        if pc.nonprivate or pc.laplace or pc.discrete_laplace:
            return None
        if any(k != 2 for (_, k) in pc.randomized_response):
            return None
        groups = collections.Counter()
        for (e, d), c in pc.epsilon_delta.items():
            groups[(e, d)] += c
        for (p, _), c in pc.randomized_response.items():
            groups[(_rr_epsilon(p, 2), 0.0)] += c
        return [(e, d, c) for (e, d), c in sorted(groups.items())]

    def exact(self) -> _TwoPointComposition | None:
        """The exact enumeration for "auto", when the event allows it and it is small enough."""
        if self._exact is None:
            groups = self.two_point_groups()
            built = None if groups is None else _TwoPointComposition.build(self.mu, groups)
            self._exact = built if built is not None else False
        return self._exact or None

    def pld_grid(self) -> float:
        """The PLD grid step: ``value_discretization_interval``, refined for small two-point pieces.

        Without a Gaussian part the step is at most 1/100 of the smallest two-point piece's
        epsilon (connect-the-dots error ~ (step / epsilon)^2 / 4 of each piece's loss variance),
        but never below ``value_discretization_interval / 100`` nor below the estimated loss range
        over 2^21 points (cost). With a Gaussian part the step is not refined: the Gaussian PLD's
        size grows as 1/step (20 s at mu = 1, step 1e-6).
        """
        pc = self.pieces
        eps = [e for (e, _) in pc.epsilon_delta if e > 0.0]
        eps += [_rr_epsilon(p, k) for (p, k) in pc.randomized_response if k == 2]
        if not eps or pc.has_gaussian:
            return self.h

        def width(loss: float, count: int) -> float:  # ~ support of a group after truncation
            return 2.0 * loss * min(count, 10.0 * math.sqrt(count) + 1.0)

        span = math.fsum(width(e, c) for (e, _), c in pc.epsilon_delta.items())
        span += math.fsum(width(_rr_epsilon(p, k), c)
                          for (p, k), c in pc.randomized_response.items())
        span += math.fsum(width(1.0 / b, c) for b, c in pc.laplace.items())
        span += math.fsum(width(a * t, c) for (a, t), c in pc.discrete_laplace.items())
        floor = max(self.h / _MAX_GRID_REFINEMENT, span / _MAX_GRID_POINTS)
        return min(self.h, max(min(eps) / _GRID_STEPS_PER_PIECE, floor))

    def pld(self) -> pld_lib.PrivacyLossDistribution:
        if self._pld is None:
            h, pc = self.pld_grid(), self.pieces
            parts: list[pld_lib.PrivacyLossDistribution] = []
            if pc.has_gaussian:
                # All Gaussian pieces together are one Gaussian with the combined shift (exact).
                parts.append(pld_lib.from_gaussian_mechanism(
                    standard_deviation=1.0 / self.mu, sensitivity=1.0,
                    value_discretization_interval=h, neighboring_relation=ADD_OR_REMOVE))
            for b, c in sorted(pc.laplace.items()):
                parts.append(pld_lib.from_laplace_mechanism(
                    parameter=b, sensitivity=1.0, value_discretization_interval=h).self_compose(c))
            for (a, s), c in sorted(pc.discrete_laplace.items()):
                parts.append(pld_lib.from_discrete_laplace_mechanism(
                    parameter=a, sensitivity=s, value_discretization_interval=h).self_compose(c))
            for (p, k), c in sorted(pc.randomized_response.items()):
                if k == 2:  # a two-point pair: connect-the-dots rather than rounding up
                    parts.append(_two_point_pld(_rr_epsilon(p, 2), 0.0, h).self_compose(c))
                else:
                    parts.append(pld_lib.from_randomized_response(
                        noise_parameter=p, num_buckets=k, value_discretization_interval=h,
                        neighboring_relation=_RR_RELATION).self_compose(c))
            for (e, d), c in sorted(pc.epsilon_delta.items()):
                parts.append(_two_point_pld(e, d, h).self_compose(c))
            self._pld = functools.reduce(lambda x, y: x.compose(y), parts)
        return self._pld

    def rdp(self) -> tuple[np.ndarray, np.ndarray]:
        if self._rdp is None:
            pc = self.pieces
            orders = np.asarray(rdp_lib.DEFAULT_RDP_ORDERS, dtype=np.float64)
            total = orders * pc.gaussian_mu_sq / 2.0  # RDP of N(0,1) vs N(mu,1): alpha mu^2 / 2

            def add(event: dp_accounting.DpEvent, count: int, relation: object) -> None:
                nonlocal total
                acc = rdp_lib.RdpAccountant(orders=list(orders), neighboring_relation=relation)
                total = total + acc.compose(event, count).rdp

            for b, c in pc.laplace.items():
                add(dp_accounting.LaplaceDpEvent(b), c, ADD_OR_REMOVE)
            for (p, k), c in pc.randomized_response.items():
                add(dp_accounting.RandomizedResponseDpEvent(p, k), c, _RR_RELATION)
            # Pure-DP pieces: RDP of their dominating pair, binary randomized response.
            pure = [(a * s, c) for (a, s), c in pc.discrete_laplace.items()]
            for (e, d), c in pc.epsilon_delta.items():
                if d > 0.0:
                    raise UnsupportedEventError(
                        "method='rdp' cannot account for an (epsilon, delta > 0) piece; use 'pld'")
                pure.append((e, c))
            for e, c in pure:
                add(dp_accounting.RandomizedResponseDpEvent(_binary_rr_noise(e), 2), c,
                    _RR_RELATION)
            self._rdp = (orders, total)
        return self._rdp

    def epsilon(self, delta: float) -> float:
        pc = self.pieces
        if pc.nonprivate:
            return math.inf
        if pc.empty:
            return 0.0
        if self.method == "rdp":
            orders, rdp = self.rdp()
            return float(rdp_lib.compute_epsilon(orders, rdp, delta)[0])
        pure = pc.pure_epsilon()
        if self.method == "auto":
            if delta == 0.0:
                return math.inf if pure is None else pure
            if self.gaussian_only:
                return gaussian_epsilon(self.mu, delta)
            homogeneous = self.homogeneous_pure()
            if homogeneous is not None:
                return homogeneous_pure_composition_epsilon(homogeneous[0], homogeneous[1], delta)
            exact = self.exact()
            if exact is not None:
                eps = exact.epsilon(delta)
                return eps if pure is None else min(eps, pure)
        eps = float(max(self.pld().get_epsilon_for_delta(delta), 0.0))
        if self.method == "auto" and pure is not None:
            eps = min(eps, pure)  # both are valid upper bounds; the sum is exact at delta = 0
        return eps

    def delta(self, epsilon: float) -> float:
        pc = self.pieces
        if pc.nonprivate:
            return 1.0
        if pc.empty:
            return 0.0
        if self.method == "rdp":
            orders, rdp = self.rdp()
            return float(rdp_lib.compute_delta(orders, rdp, epsilon)[0])
        if self.method == "auto":
            if self.gaussian_only:
                return gaussian_delta(self.mu, epsilon)
            homogeneous = self.homogeneous_pure()
            if homogeneous is not None:
                return homogeneous_pure_composition_delta(homogeneous[0], homogeneous[1], epsilon)
            pure = pc.pure_epsilon()
            if pure is not None and epsilon >= pure:
                return 0.0
            exact = self.exact()
            if exact is not None:
                return exact.delta(epsilon)
        return float(min(max(self.pld().get_delta_for_epsilon(epsilon), 0.0), 1.0))


def epsilon_of_event(event: dp_accounting.DpEvent, delta: float, *, method: Method = "auto",
                     value_discretization_interval: float = _H) -> float:
    """epsilon(delta) of a ``dp_accounting.DpEvent``, with dp-accounting's pitfalls guarded.

    The event tree is walked here (not by ``PLDAccountant``): counts of ``SelfComposedDpEvent`` are
    multiplied down for every piece, Gaussian and Laplace pieces are read as one sensitivity
    (ADD_OR_REMOVE_ONE; dpaudit's sensitivities already are replace-one distances), randomized
    response as "input bucket replaced". See docs/formal-notes.md#accounting-conventions-and-guards.

    This is the engine's entry point and takes no neighbouring relation: it reads every
    Gaussian/Laplace sensitivity as the distance between neighbouring outputs. Code outside
    dpaudit should call :func:`dpaudit.noise.epsilon_of` (``neighbours=`` and ``sensitivity_is=``
    required), which rewrites the event to distances and calls this.

    Parameters
    ----------
    event : dp_accounting.DpEvent
        Built from NoOp, NonPrivate, Gaussian, Laplace, DiscreteLaplace, RandomizedResponse and
        :class:`EpsilonDeltaDpEvent` pieces with Composed/SelfComposed; anything else raises
        :class:`UnsupportedEventError`.
    delta : float
        In [0, 1).
    method : {"auto", "pld", "rdp"}
        ``"auto"``: exact closed forms where they exist (only Gaussian pieces: Balle & Wang closed
        form of the combined shift; k identical pure ``EpsilonDeltaDpEvent`` or binary randomized
        response pieces: Kairouz-Oh-Viswanath closed form; Gaussian pieces plus a few groups of
        ``EpsilonDeltaDpEvent`` / binary randomized response pieces: exact enumeration; delta = 0:
        sum of the pure pieces' epsilons, ``inf`` with any Gaussian or delta > 0 piece), otherwise
        the pessimistic PLD (capped by the pure sum when all pieces are pure). ``"pld"``: always
        the pessimistic PLD. ``"rdp"``: the RDP upper bound (cross-check; pure pieces enter
        through their dominating binary randomized response).
    value_discretization_interval : float
        PLD grid step (default :data:`DEFAULT_VALUE_DISCRETIZATION_INTERVAL`), refined for small
        two-point pieces when there is no Gaussian part
        (docs/formal-notes.md#accounting-tolerances).

    Returns
    -------
    float
        epsilon >= 0, ``inf`` for a non-private event.
    """
    delta = check_delta(delta)
    return _Account(event, method, value_discretization_interval).epsilon(delta)


def delta_of_event(event: dp_accounting.DpEvent, epsilon: float, *, method: Method = "auto",
                   value_discretization_interval: float = _H) -> float:
    """delta(epsilon) of a ``dp_accounting.DpEvent``; the counterpart of :func:`epsilon_of_event`.

    Parameters
    ----------
    event : dp_accounting.DpEvent
        As for :func:`epsilon_of_event`.
    epsilon : float
        >= 0.
    method, value_discretization_interval
        As for :func:`epsilon_of_event` (``"auto"`` uses the same closed forms and returns exactly
        0 when epsilon reaches the pure sum).

    Returns
    -------
    float
        delta in [0, 1].
    """
    epsilon = check_nonnegative(epsilon, "epsilon")
    return _Account(event, method, value_discretization_interval).delta(epsilon)


def privacy_curve(event_or_mu: dp_accounting.DpEvent | float,
                  deltas: np.ndarray | Sequence[float], *, method: Method = "auto",
                  value_discretization_interval: float = _H) -> np.ndarray:
    """epsilon at each delta, for plots (``figures["privacy_curve"]``).

    Parameters
    ----------
    event_or_mu : dp_accounting.DpEvent or float
        An event (accounted as in :func:`epsilon_of_event`, its PLD built once) or a Gaussian shift
        mu > 0 (closed form :func:`gaussian_epsilon`).
    deltas : array_like, shape (n,)
        Each in [0, 1).
    method, value_discretization_interval
        As for :func:`epsilon_of_event` (events only).

    Returns
    -------
    numpy.ndarray, shape (n,)
        epsilon(delta) for each delta.
    """
    ds = check_finite_array(deltas, "deltas", ndim=1)
    for d in ds:
        check_delta(float(d), "deltas")
    if isinstance(event_or_mu, dp_accounting.DpEvent):
        account = _Account(event_or_mu, method, value_discretization_interval)
        return np.array([account.epsilon(float(d)) for d in ds], dtype=np.float64)
    if isinstance(event_or_mu, numbers.Real) and not isinstance(event_or_mu, bool):
        mu = check_positive(event_or_mu, "mu")
        return np.array([gaussian_epsilon(mu, float(d)) for d in ds], dtype=np.float64)
    raise TypeError(f"event_or_mu must be a dp_accounting.DpEvent or a positive real mu, "
                    f"got {type(event_or_mu).__name__}")


class GuardedAccountant(dp_accounting.PrivacyAccountant):
    """A ``dp_accounting.PrivacyAccountant`` whose answers come from :func:`epsilon_of_event`.

    Drop-in for dp-accounting APIs that take an accountant (e.g.
    ``mechanism_calibration.calibrate_dp_mechanism``) without their pitfalls: the neighbouring
    relation is fixed (one sensitivity per Gaussian/Laplace piece) and composition counts are always
    honoured. The ledger is kept by the base class; every query re-evaluates it.

    Parameters
    ----------
    method : {"auto", "pld", "rdp"}
        As for :func:`epsilon_of_event`.
    value_discretization_interval : float
        PLD grid step.
    """

    def __init__(self, method: Method = "auto", value_discretization_interval: float = _H) -> None:
        super().__init__(ADD_OR_REMOVE)
        self._method = _check_method(method)
        self._h = check_positive(value_discretization_interval, "value_discretization_interval")

    def _maybe_compose(
        self, event: dp_accounting.DpEvent, count: int, do_compose: bool,
    ) -> dp_accounting.PrivacyAccountant.CompositionErrorDetails | None:
        # Support check only: the base class records the event in the ledger; queries read it.
        try:
            _pieces(event)
        except UnsupportedEventError as exc:
            return self.CompositionErrorDetails(invalid_event=event, error_message=str(exc))
        return None

    def get_epsilon(self, target_delta: float) -> float:
        return epsilon_of_event(self.ledger, target_delta, method=self._method,
                                value_discretization_interval=self._h)

    def get_delta(self, target_epsilon: float) -> float:
        return delta_of_event(self.ledger, target_epsilon, method=self._method,
                              value_discretization_interval=self._h)


# --------------------------------------------------------------------------------------------------
# Laplace, pure composition and trees
# --------------------------------------------------------------------------------------------------
