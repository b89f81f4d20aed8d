"""The Gaussian mechanism and its two calibrations (classical and analytic).

Releasing ``f(D) + N(0, sigma^2 I)`` for a query with l2 sensitivity ``Delta`` is (epsilon,
delta)-DP exactly when ``delta >= Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)``,
``mu = Delta / sigma`` (Balle & Wang, ICML 2018, Theorem 8). :func:`classical_sigma` is
``Delta sqrt(2 ln(1.25/delta)) / epsilon`` (Dwork & Roth 2014, Theorem A.1; the window tree
paper's Proposition A3), proved only for ``epsilon < 1`` but not refused above, so the audit can
test such claims; :func:`analytic_sigma` is the smallest exactly (epsilon, delta)-DP sigma, by
``dp_accounting.mechanism_calibration`` (the closed form alone for delta < 1e-12).
:func:`log_gaussian_delta` (also used by :mod:`dpaudit.formal.accounting`) is accurate to ~1e-11
relative for every mu > 0 and epsilon >= 0. Samples come from numpy's floating-point normal
sampler, so the released values are not exactly DP (Mironov, CCS 2012).

Both calibrations in full: docs/paper-readings.md#gaussian-mechanism.
"""

from __future__ import annotations

import functools
import math
import warnings
from typing import Any, Callable

import dp_accounting
import numpy as np
from dp_accounting import mechanism_calibration
from dp_accounting.pld import pld_privacy_accountant
from scipy import integrate, optimize, special

from dpaudit._validation import (
    check_epsilon,
    check_generator,
    check_positive,
    check_probability,
)
from dpaudit.neighbours import NeighbourRelation
from dpaudit.mechanisms.additive_noise import AdditiveNoiseMechanism
from dpaudit.mechanisms.discrete import (discrete_gaussian_delta, grid_units, rational_sigma2,
                                         sample_discrete_gaussian)
from dpaudit.mechanisms.laplace import check_size, check_noise_mode, shift_units

__all__ = [
    "sample_gaussian",
    "classical_sigma",
    "analytic_sigma",
    "DEFAULT_VALUE_DISCRETIZATION_INTERVAL",
    "GaussianMechanism",
]

#: PLD grid step used by :func:`analytic_sigma` for epsilon >= 0.01; below, the step is
#: ``epsilon / 10`` so that it stays small against the privacy losses (of order epsilon). With
#: dp-accounting 0.6.0 (connect-the-dots PLD of a single Gaussian) this reproduces the closed-form
#: delta to ~1e-7 relative for 1e-9 <= delta < 1, in well under a second for epsilon <= 20 and a
#: few seconds at epsilon = 50.
DEFAULT_VALUE_DISCRETIZATION_INTERVAL = 1e-3

# Relative tolerance on the noise multiplier returned by analytic_sigma.
_CALIBRATION_RTOL = 1e-10


def sample_gaussian(sigma: float, size: int | tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """I.i.d. ``N(0, sigma^2)`` samples.

    Parameters
    ----------
    sigma : float
        Standard deviation, > 0.
    size : int or tuple of int
        Output shape (numpy convention); zero-length axes are allowed.
    rng : numpy.random.Generator
        Source of randomness.

    Returns
    -------
    numpy.ndarray
        float64 array of shape ``size``.
    """
    sigma = check_positive(sigma, "sigma")
    size = check_size(size)
    rng = check_generator(rng)
    return rng.normal(0.0, sigma, size)


def _check_gaussian_target(sensitivity: float, epsilon: float, delta: float) -> tuple[float, float, float]:
    return (check_positive(sensitivity, "sensitivity"), check_epsilon(epsilon),
            check_probability(delta, "delta"))


def classical_sigma(sensitivity: float, epsilon: float, delta: float) -> float:
    """Classical Gaussian calibration ``sigma = Delta sqrt(2 ln(1.25 / delta)) / epsilon``.

    Dwork & Roth, *The Algorithmic Foundations of Differential Privacy* (2014), Theorem A.1. The
    theorem is only proved for ``epsilon < 1``; it is *not* refused for ``epsilon >= 1`` because
    papers use it there and the audit must be able to test such claims.

    Parameters
    ----------
    sensitivity : float
        l2 sensitivity ``Delta`` > 0.
    epsilon : float
        > 0.
    delta : float
        In (0, 1).

    Returns
    -------
    float
        sigma > 0.
    """
    sensitivity, epsilon, delta = _check_gaussian_target(sensitivity, epsilon, delta)
    ratio = 1.25 / delta
    # For subnormal delta the quotient overflows; log(1.25) - log(delta) is then the same number.
    log_ratio = math.log(ratio) if math.isfinite(ratio) else math.log(1.25) - math.log(delta)
    return _finite_sigma(sensitivity * math.sqrt(2.0 * log_ratio) / epsilon, sensitivity,
                         epsilon, delta)


def _finite_sigma(sigma: float, sensitivity: float, epsilon: float, delta: float) -> float:
    """``sigma`` if it is a positive finite float; else a ValueError naming the target."""
    if not (math.isfinite(sigma) and sigma > 0.0):
        raise ValueError(f"the calibrated sigma for sensitivity={sensitivity!r}, "
                         f"epsilon={epsilon!r}, delta={delta!r} is {sigma!r}, not a positive "
                         "finite float; sensitivity / epsilon is out of range (make sensitivity "
                         "smaller or epsilon larger)")
    return sigma


def _tail_bound_mu(epsilon: float, delta: float) -> float:
    """A shift mu at which the Gaussian mechanism is certainly (epsilon, delta)-DP.

    The privacy loss of N(0,1) vs N(mu,1) under the first is L ~ N(mu^2/2, mu^2), and
    delta(eps) <= P[L > eps] = Phi((mu^2/2 - eps)/mu). Setting that to delta gives
    mu = sqrt(z^2 + 2 eps) - z = 2 eps / (sqrt(z^2 + 2 eps) + z) with z = Phi^{-1}(1 - delta) (the
    second form has no cancellation when eps << z^2).
    """
    z = -float(special.ndtri(delta))
    root = math.sqrt(z * z + 2.0 * epsilon)
    return 2.0 * epsilon / (root + z) if z > 0.0 else root - z


#: A computed delta counts as meeting a target only if log delta <= log target - this slack: the
#: evaluation of :func:`log_gaussian_delta` is accurate to ~1e-11 relative, so roots returned "on
#: the safe side" are safe for the exact function, at a cost of at most ~1e-10 relative in delta.
LOG_DELTA_SLACK = 1e-10

# The direct formula is used when r = log Phi(a) - log(e^eps Phi(b)) exceeds this times the
# magnitude of the terms it is the difference of (relative error of delta <= ~2e-16 / this).
DIRECT_FORMULA_MIN_GAP = 2e-5

_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


def log_gaussian_delta_by_quadrature(mu: float, epsilon: float) -> float:
    """log delta(epsilon) from an integral with a positive integrand (no cancellation).

    With z0 = eps/mu - mu/2 and the privacy loss L = mu^2/2 - mu Z, Z ~ N(0, 1),
    delta = E[(1 - e^{eps - L})_+] = phi(z0) int_0^inf exp(-z0 u - u^2/2) (1 - e^{-mu u}) du
    (substitute Z = -z0 - u), valid for every real eps (negative eps is the other side of the
    hockey-stick curve, used by compositions). Used where the closed form's two terms nearly cancel
    (mu^2 << eps or tiny mu); Gauss-Kronrod on the smooth positive integrand is accurate to ~1e-13
    relative.
    """
    z0 = epsilon / mu - mu / 2.0
    # The exponent -z0 u - u^2/2 is largest at u_max = max(0, -z0), where it equals `top`; the
    # integrand is below e^{-80} of that beyond `upper` (the factor (1 - e^{-mu u}) / mu <= u only
    # grows polynomially).
    u_max = max(0.0, -z0)
    top = 0.5 * z0 * z0 if z0 < 0.0 else 0.0
    span = 160.0 / (math.sqrt(z0 * z0 + 160.0) + abs(z0)) if z0 >= 0.0 else math.sqrt(160.0)
    upper = u_max + max(span, 1e-300)

    def integrand(u: float) -> float:
        return math.exp(-z0 * u - 0.5 * u * u - top) * (-math.expm1(-mu * u)) / mu

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", integrate.IntegrationWarning)
        value, _ = integrate.quad(integrand, 0.0, upper, points=[u_max] if u_max > 0.0 else None,
                                  epsabs=0.0, epsrel=1e-13, limit=200)
    if not value > 0.0:
        return -math.inf
    return -0.5 * z0 * z0 - _LOG_SQRT_2PI + top + math.log(mu) + math.log(value)


def log_gaussian_delta(mu: float, epsilon: float) -> float:
    """log of the exact delta(epsilon) of N(0,1) vs N(mu,1) (Balle & Wang 2018, Theorem 8).

    delta = Phi(a) - e^eps Phi(b), a = -eps/mu + mu/2, b = -eps/mu - mu/2, evaluated as
    log Phi(a) + log(1 - exp(eps + log Phi(b) - log Phi(a))) to keep relative accuracy in the tails.
    Where the two terms nearly cancel (which the direct formula would turn into a large relative
    error, e.g. mu = 1e-13 at eps = 1e-12) the positive integral of
    :func:`log_gaussian_delta_by_quadrature` is used instead, and at eps = 0 the exact
    delta = erf(mu / (2 sqrt 2)). Accurate to ~1e-11 relative throughout; ``-inf`` when log delta
    itself is below the float range.
    """
    if epsilon == 0.0:
        tv = float(special.erf(mu / (2.0 * math.sqrt(2.0))))
        return math.log(tv) if tv > 0.0 else -math.inf
    la = float(special.log_ndtr(-epsilon / mu + mu / 2.0))
    if la == -math.inf:
        return -math.inf
    log_phi_b = float(special.log_ndtr(-epsilon / mu - mu / 2.0))
    gap = la - (epsilon + log_phi_b)  # > 0 in exact arithmetic
    # log_ndtr is accurate to a few ulps relative, so gap carries an absolute error of about
    # 2e-16 * magnitude; the direct formula is used where that is <= ~1e-11 of gap.
    magnitude = abs(la) + epsilon + abs(log_phi_b)
    if gap > 0.0 and gap >= DIRECT_FORMULA_MIN_GAP * magnitude:
        return la + math.log(-math.expm1(-gap))
    return log_gaussian_delta_by_quadrature(mu, epsilon)


def safe_monotone_root(gap: Callable[[float], float], lo: float, hi: float, *,
                        safe_side: str) -> float:
    """The end of a bracketed root of a monotone ``gap`` on which ``gap <= 0``.

    ``gap(lo)`` and ``gap(hi)`` must have opposite signs and the end named by ``safe_side``
    (``"lo"`` or ``"hi"``) must satisfy ``gap <= 0``. Brent's method locates the root to relative
    tolerance ~1e-15 (its absolute tolerance is the smallest subnormal, so roots near 1e-300 are
    resolved too); the result is then moved towards the safe end, by steps growing from that
    tolerance, until ``gap <= 0`` holds at the returned point. So the returned value never lies on
    the wrong side of the computed root.
    """
    if safe_side not in ("lo", "hi"):
        raise ValueError(f"safe_side must be 'lo' or 'hi', got {safe_side!r}")
    safe_end = lo if safe_side == "lo" else hi
    if gap(safe_end) > 0.0:
        raise ValueError("the safe end of the bracket does not satisfy the target")
    x = float(optimize.brentq(gap, lo, hi, xtol=float(np.finfo(float).smallest_subnormal),
                              rtol=4.0 * np.finfo(float).eps,
                              maxiter=1000))
    step = float(abs(x) * 4.0 * np.finfo(float).eps) or float(np.finfo(float).tiny)
    direction = -1.0 if safe_side == "lo" else 1.0
    while gap(x) > 0.0:
        x = x + direction * step
        if (x - safe_end) * direction >= 0.0:
            return float(safe_end)
        step *= 2.0
    return x


def _closed_form_mu(epsilon: float, delta: float) -> float:
    """The largest shift mu whose exact delta(epsilon) meets ``delta``, from the closed form.

    Root of log delta(mu, epsilon) = log delta in mu (increasing), returned on the safe side:
    delta(mu) <= delta (within :data:`LOG_DELTA_SLACK`), to relative tolerance ~1e-15.
    """
    log_target = math.log(delta) - LOG_DELTA_SLACK

    def gap(mu: float) -> float:
        value = log_gaussian_delta(mu, epsilon)
        return (value if math.isfinite(value) else -1e300) - log_target

    lo = _tail_bound_mu(epsilon, delta)  # private: gap(lo) <= 0
    while gap(lo) > 0.0:  # only if the tail bound rounded above the root
        lo *= 0.5
    hi = 2.0 * lo
    while gap(hi) <= 0.0:
        lo, hi = hi, 2.0 * hi
    return safe_monotone_root(gap, lo, hi, safe_side="lo")


#: Below this delta :func:`analytic_sigma` uses the closed form directly (the PLD's tail
#: truncation at 1e-15 makes it unreliable there).
_PLD_MIN_DELTA = 1e-12
#: The Gaussian PLD spans privacy losses over about this many mu (tails cut at mass 1e-15), so it
#: has about ``16 mu / grid`` points; above _PLD_MAX_POINTS (a few seconds per calibration) the
#: closed form is used alone.
_PLD_LOSS_RANGE_IN_MU = 16.0
_PLD_MAX_POINTS = 500_000


@functools.lru_cache(maxsize=256)
def _analytic_noise_multiplier(epsilon: float, delta: float, value_discretization_interval: float) -> float:
    # Single shift of one sensitivity: dp-accounting's ADD_OR_REMOVE_ONE reading of GaussianDpEvent
    # (REPLACE_ONE would double the shift; AUDIT-METHOD section 4).
    def make_accountant() -> dp_accounting.PrivacyAccountant:
        return pld_privacy_accountant.PLDAccountant(
            dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE,
            value_discretization_interval=value_discretization_interval)

    # Noise multipliers (sigma / Delta) 1% either side of the closed-form answer bracket the PLD
    # root; if the PLD disagreed with the closed form by more, calibration raises instead of
    # returning a wrong sigma.
    exact = 1.0 / _closed_form_mu(epsilon, delta)
    try:
        return float(mechanism_calibration.calibrate_dp_mechanism(
            make_accountant,
            dp_accounting.GaussianDpEvent,
            epsilon,
            delta,
            bracket_interval=mechanism_calibration.ExplicitBracketInterval(exact / 1.01,
                                                                           exact * 1.01),
            tol=_CALIBRATION_RTOL * exact,
        ))
    except (ValueError, ArithmeticError, RuntimeError, MemoryError) as exc:
        # Do not leak the solver's words ("brentq raised ..."): say which target failed and why.
        raise ValueError(
            f"analytic_sigma cannot calibrate epsilon={epsilon!r}, delta={delta!r}: dp-accounting's "
            f"PLD accountant (grid {value_discretization_interval!r}) found no noise multiplier "
            f"within 1% of the closed-form one, {exact:.6g}; try another "
            "value_discretization_interval") from exc


def analytic_sigma(sensitivity: float, epsilon: float, delta: float, *,
                   value_discretization_interval: float | None = None) -> float:
    """The smallest sigma for which the Gaussian mechanism is exactly (epsilon, delta)-DP.

    Analytic Gaussian mechanism of Balle & Wang (ICML 2018, Theorem 8 and Algorithm 1): sigma is
    the root of ``Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) = delta`` in ``mu = Delta/sigma``.
    It is computed with ``dp_accounting.mechanism_calibration.calibrate_dp_mechanism`` on a fresh
    ``PLDAccountant`` (one ``GaussianDpEvent`` of one sensitivity, ``ADD_OR_REMOVE_ONE``), to
    relative tolerance 1e-10 on sigma, inside an explicit bracket of +-1% around the root of the
    closed form (so a disagreement between the two raises rather than passes silently). The PLD
    rounds privacy losses pessimistically, so the returned sigma is never meaningfully below the
    exact one: its exact delta(epsilon) matches the target to ~1e-7 relative for delta >= 1e-9;
    below that the PLD's tail truncation makes it slightly conservative (exact delta a few 1e-6
    relative below the target at delta = 1e-10). Results are cached per (epsilon, delta, grid).

    For delta < 1e-12 (where the PLD, truncated at tail mass 1e-15, cannot resolve the target), and
    where the PLD grid would exceed 500 000 points (tiny epsilon with a large delta, where the PLD
    would take minutes or exhaust memory), the PLD is not used: sigma = Delta / mu with mu the root of the exact closed form, taken on the safe
    side (exact delta(epsilon) <= delta, and within ~1e-10 relative of it), so the returned sigma is
    never too small. ``value_discretization_interval`` is then ignored.

    Valid for every epsilon > 0 (no ``epsilon < 1`` restriction, unlike :func:`classical_sigma`).

    Parameters
    ----------
    sensitivity : float
        l2 sensitivity ``Delta`` > 0.
    epsilon : float
        > 0.
    delta : float
        In (0, 1).
    value_discretization_interval : float, optional
        PLD grid step (smaller is slower). Default
        ``min(DEFAULT_VALUE_DISCRETIZATION_INTERVAL, epsilon / 10)``, accurate to the stated
        tolerance.

    Returns
    -------
    float
        sigma > 0.
    """
    sensitivity, epsilon, delta = _check_gaussian_target(sensitivity, epsilon, delta)
    if delta < _PLD_MIN_DELTA:
        if value_discretization_interval is not None:
            check_positive(value_discretization_interval, "value_discretization_interval")
        return _finite_sigma(sensitivity / _closed_form_mu(epsilon, delta), sensitivity, epsilon,
                             delta)
    if value_discretization_interval is None:
        vdi = min(DEFAULT_VALUE_DISCRETIZATION_INTERVAL, epsilon / 10.0)
    else:
        vdi = check_positive(value_discretization_interval, "value_discretization_interval")
    if _PLD_LOSS_RANGE_IN_MU * _closed_form_mu(epsilon, delta) / vdi > _PLD_MAX_POINTS:
        # The PLD grid would be too fine for its loss range (tiny epsilon with a large delta): it
        # would take minutes or exhaust memory. The closed form alone, on the safe side.
        return _finite_sigma(sensitivity / _closed_form_mu(epsilon, delta), sensitivity, epsilon,
                             delta)
    return _finite_sigma(sensitivity * _analytic_noise_multiplier(epsilon, delta, vdi),
                         sensitivity, epsilon, delta)


class GaussianMechanism(AdditiveNoiseMechanism):
    """Release ``f(D) + N(0, sigma^2)`` per coordinate, for a query of l2 sensitivity ``Delta``.

    Parameters
    ----------
    sensitivity : float
        l2 sensitivity ``Delta`` of the query under ``relation``, > 0.
    sigma : float
        Noise standard deviation per coordinate, > 0.
    relation : NeighbourRelation, optional
        The neighbour relation under which ``sensitivity`` holds (default: replace one element).

    Notes
    -----
    Build with :meth:`classical` or :meth:`analytic` to calibrate sigma to a target
    (epsilon, delta); the target and the calibration used are kept in :meth:`describe`. Privacy is
    stated by :meth:`dp_event`: ``GaussianDpEvent(noise_multiplier = sigma / Delta)``, one shift of
    one sensitivity (dp-accounting's ``ADD_OR_REMOVE_ONE`` reading, see
    :mod:`dpaudit.formal.accounting`). The exact epsilon(delta) follows from
    ``mu = Delta / sigma`` (Balle & Wang 2018, Theorem 8).
    """

    name = "gaussian"

    def __init__(self, sensitivity: float, sigma: float,
                 relation: NeighbourRelation = NeighbourRelation.REPLACE_ONE, *,
                 noise: str = "float", granularity: float | None = None) -> None:
        super().__init__(sensitivity, "l2", relation)
        self._sigma = check_positive(sigma, "sigma")
        self._calibration: dict[str, Any] | None = None
        self._granularity = check_noise_mode(noise, granularity)
        if self._granularity is not None:
            self._sigma2 = rational_sigma2(grid_units(self._sigma, self._granularity, "sigma"))

    @property
    def noise(self) -> str:
        """``"float"`` (numpy's sampler) or ``"discrete"`` (exact discrete Gaussian on a grid)."""
        return "float" if self._granularity is None else "discrete"

    @property
    def granularity(self) -> float | None:
        return self._granularity

    def exact_delta(self, epsilon: float) -> float:
        """Exact delta(epsilon) of the worst shift (discrete noise: ``ceil(Delta / g)`` units in
        one coordinate; float: Balle & Wang's closed form)."""
        epsilon = check_epsilon(epsilon)
        if self._granularity is None:
            return math.exp(log_gaussian_delta(self.mu, epsilon))
        return discrete_gaussian_delta(epsilon, math.sqrt(float(self._sigma2)),
                                       shift_units(self._sensitivity.bound, self._granularity))

    @classmethod
    def _calibrated(cls, calibration: str, sigma: float, sensitivity: float, epsilon: float,
                    delta: float, relation: NeighbourRelation,
                    **options: Any) -> "GaussianMechanism":
        """The mechanism of noise ``sigma``, recording the calibration and its target."""
        mech = cls(sensitivity, sigma, relation, **options)
        mech._calibration = {"calibration": calibration, "target_epsilon": float(epsilon),
                             "target_delta": float(delta)}
        return mech

    @classmethod
    def classical(cls, sensitivity: float, epsilon: float, delta: float,
                  relation: NeighbourRelation = NeighbourRelation.REPLACE_ONE,
                  **options: Any) -> "GaussianMechanism":
        """Calibrated with :func:`classical_sigma` (Dwork & Roth Thm A.1; proved for epsilon < 1).

        ``options`` go to the constructor (``noise="discrete", granularity=g``)."""
        return cls._calibrated("classical", classical_sigma(sensitivity, epsilon, delta),
                               sensitivity, epsilon, delta, relation, **options)

    @classmethod
    def analytic(cls, sensitivity: float, epsilon: float, delta: float,
                 relation: NeighbourRelation = NeighbourRelation.REPLACE_ONE,
                 **options: Any) -> "GaussianMechanism":
        """Calibrated with :func:`analytic_sigma` (exactly (epsilon, delta)-DP, Balle & Wang 2018).

        ``options`` go to the constructor (``noise="discrete", granularity=g``)."""
        return cls._calibrated("analytic", analytic_sigma(sensitivity, epsilon, delta),
                               sensitivity, epsilon, delta, relation, **options)

    @property
    def sigma(self) -> float:
        """Noise standard deviation per coordinate."""
        return self._sigma

    @property
    def noise_multiplier(self) -> float:
        """``sigma / sensitivity``."""
        return self._sigma / self._sensitivity.bound

    @property
    def mu(self) -> float:
        """Gaussian-DP parameter ``sensitivity / sigma`` (Dong, Roth & Su 2022)."""
        return self._sensitivity.bound / self._sigma

    def _sample_noise(self, n: int, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
        return sample_gaussian(self._sigma, (n, *shape), rng)

    def _sample_noise_units(self, n: int, shape: tuple[int, ...],
                            rng: np.random.Generator) -> np.ndarray:
        size = n * int(np.prod(shape, dtype=np.int64))
        return sample_discrete_gaussian(self._sigma2, size, check_generator(rng)).reshape(n, *shape)

    def dp_event(self) -> dp_accounting.DpEvent:
        if self._granularity is not None:
            # CKS20 Theorem 14: an l2 shift of k grid units is k^2 / (2 s^2)-zCDP.
            k = shift_units(self._sensitivity.bound, self._granularity)
            return dp_accounting.ZCDpEvent(k * k / (2.0 * float(self._sigma2)))
        return dp_accounting.GaussianDpEvent(noise_multiplier=self.noise_multiplier)

    def describe(self) -> dict[str, Any]:
        out = {**super().describe(), "sigma": self._sigma, **(self._calibration or {})}
        if self._granularity is not None:
            out.update(noise="discrete", granularity=self._granularity,
                       sigma2_units=f"{self._sigma2.numerator}/{self._sigma2.denominator}")
        return out

    def __repr__(self) -> str:
        return f"GaussianMechanism(sensitivity={self._sensitivity.bound!r}, sigma={self._sigma!r})"
