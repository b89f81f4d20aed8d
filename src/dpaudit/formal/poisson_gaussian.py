"""DP-SGD's accountant: the Poisson-subsampled Gaussian mechanism composed over training steps.

At every step each record enters the batch with probability ``q``, its clipped gradient (norm at
most ``C``) is added to the batch sum and the sum gets ``N(0, (z C)^2 I)`` noise (Abadi et al.,
CCS 2016, Alg. 1): what opacus, jax-privacy (``dpsgd_event``) and TensorFlow Privacy account with
``SelfComposedDpEvent(PoissonSampledDpEvent(q, GaussianDpEvent(z)), T)``. Add/remove neighbours
are accounted by dp-accounting's pessimistic PLD (Doroshenko et al., PETS 2022; dominating pair:
Mironov, Talwar & Zhang 2019; Zhu, Dong & Wang, AISTATS 2022, Sec. 5), bracketed by
:meth:`PoissonSampledGaussian.bracket` and cross-checked against the RDP bound (a PLD above it
raises). Replace-one with ``q < 1`` is refused (``ValueError``): its worst case is not the
add/remove pair doubled and nothing here derives it. At ``q = 1`` the answer is the exact
Gaussian composition (Dong, Roth & Su 2022, Cor. 3.3; Balle & Wang 2018, Thm 8).

The neighbouring relations, the accuracy and the references:
docs/accountants.md#dp-sgd-the-poisson-subsampled-gaussian.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Any, Literal

from dpaudit._validation import check_delta, check_int, check_positive
from dpaudit.formal.accounting import gaussian_epsilon
from dpaudit.formal.noise_schedules import CROSS_CHECK_TOLERANCE, Relation, distance_factor

__all__ = ["PoissonSampledGaussian", "PLD_DISCRETIZATION"]

#: Grid step of the privacy loss distribution (dp-accounting's default): the pessimistic PLD is
#: above the exact epsilon by about this much per unit of privacy loss range, and never below it.
PLD_DISCRETIZATION = 1e-4

AccountingMethod = Literal["pld", "rdp"]
_METHODS = ("pld", "rdp")


def _check_sampling_rate(q: Any) -> float:
    q = check_positive(q, "sampling_rate")
    if q > 1.0:
        raise ValueError(f"sampling_rate must be in (0, 1], got {q!r}")
    return q


@dataclass(frozen=True)
class PoissonSampledGaussian:
    """DP-SGD's noise: ``steps`` Poisson-subsampled Gaussian mechanisms (Abadi et al. 2016).

    Parameters
    ----------
    noise_multiplier : float
        ``z = sigma / C`` in (0, inf): the noise standard deviation in units of the clip norm
        (a record's largest contribution to a step's sum, in l2 norm).
    sampling_rate : float
        ``q`` in (0, 1]: the probability that a record enters a step's batch, independently over
        records and steps (Poisson sampling). ``q = 1`` is full-batch noisy gradient descent.
    steps : int
        ``T >= 1``: the number of noisy steps released.

    Notes
    -----
    ``neighbours="add-remove"`` is supported for every ``q``; ``"replace-one"`` only at ``q = 1``
    (why replace-one under Poisson sampling is refused:
    docs/accountants.md#dp-sgd-the-poisson-subsampled-gaussian).
    """

    noise_multiplier: float
    sampling_rate: float
    steps: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "noise_multiplier",
                           check_positive(self.noise_multiplier, "noise_multiplier"))
        object.__setattr__(self, "sampling_rate", _check_sampling_rate(self.sampling_rate))
        object.__setattr__(self, "steps", check_int(self.steps, "steps", minimum=1))

    # -- the event the libraries hand dp-accounting -------------------------------------------

    def dp_event(self) -> Any:
        """``SelfComposedDpEvent(PoissonSampledDpEvent(q, GaussianDpEvent(z)), T)``: the event
        opacus and jax-privacy account, read under dp-accounting's ``ADD_OR_REMOVE_ONE``."""
        import dp_accounting

        step = dp_accounting.PoissonSampledDpEvent(
            self.sampling_rate, dp_accounting.GaussianDpEvent(self.noise_multiplier))
        return dp_accounting.SelfComposedDpEvent(step, self.steps)

    def _check_relation(self, neighbours: Relation) -> float:
        f = distance_factor(neighbours)
        if f != 1.0 and self.sampling_rate < 1.0:
            raise ValueError(
                "neighbours='replace-one' is not supported for a Poisson-subsampled Gaussian with "
                f"sampling_rate < 1 (got {self.sampling_rate!r}): the replaced and the replacing "
                "record share one sampling coin, so the step is not the add/remove mechanism with "
                "its shift doubled, and dpaudit has no proven dominating pair for it; use "
                "neighbours='add-remove' (what opacus and jax-privacy account) or sampling_rate=1")
        return f

    # -- epsilon ------------------------------------------------------------------------------

    def mu_without_sampling(self, *, neighbours: Relation) -> float:
        """The Gaussian-DP ``mu = sqrt(T) d / z`` of the same steps without sampling (``q = 1``;
        ``d`` = 1 under add/remove, 2 under replace-one)."""
        return math.sqrt(self.steps) * distance_factor(neighbours) / self.noise_multiplier

    def epsilon(self, delta: float, *, neighbours: Relation,
                method: AccountingMethod = "pld") -> float:
        """epsilon(delta) of the ``T`` steps under ``neighbours``.

        Parameters
        ----------
        delta : float
            In [0, 1); ``delta = 0`` gives ``inf`` (no Gaussian mechanism is pure DP).
        neighbours : {"add-remove", "replace-one"}
            Required; ``"replace-one"`` only with ``sampling_rate = 1``.
        method : {"pld", "rdp"}
            ``"pld"`` (default): the exact closed form at ``q = 1``, otherwise dp-accounting's
            pessimistic PLD cross-checked against RDP (:meth:`accounted`). ``"rdp"``: the RDP
            bound alone (looser).

        Returns
        -------
        float
            An upper bound on the true epsilon (exact at ``q = 1``).
        """
        if method not in _METHODS:
            raise ValueError(f"method must be one of {', '.join(_METHODS)}, got {method!r}")
        if method == "rdp":
            delta = check_delta(delta)
            self._check_relation(neighbours)
            return math.inf if delta == 0.0 else self._rdp_epsilon(delta, neighbours)
        return self.accounted(delta, neighbours=neighbours)["epsilon"]

    def accounted(self, delta: float, *, neighbours: Relation) -> dict[str, float]:
        """``{"epsilon", "epsilon_rdp"}``: the primary answer (closed form at ``q = 1``, else the
        pessimistic PLD) and the RDP cross-check's; a primary answer above the RDP bound (by more
        than :data:`CROSS_CHECK_TOLERANCE` relative) is a ``RuntimeError``, never a number."""
        delta = check_delta(delta)
        self._check_relation(neighbours)
        if delta == 0.0:
            return {"epsilon": math.inf, "epsilon_rdp": math.inf}
        if self.sampling_rate == 1.0:
            eps = gaussian_epsilon(self.mu_without_sampling(neighbours=neighbours), delta)
        else:
            eps = self._pld_epsilon(delta, pessimistic=True)
        rdp = self._rdp_epsilon(delta, neighbours)
        if not (eps <= rdp * (1.0 + CROSS_CHECK_TOLERANCE) + 1e-9):
            raise RuntimeError(f"the PLD accountant's epsilon {eps:.6g} of {self!r} exceeds the "
                               f"RDP bound {rdp:.6g} at delta={delta:g}: one of them is wrong; "
                               "not reported")
        return {"epsilon": float(eps), "epsilon_rdp": float(rdp)}

    def bracket(self, delta: float, *, neighbours: Relation) -> tuple[float, float]:
        """``(lower, upper)`` around the true epsilon(delta): dp-accounting's optimistic and
        pessimistic PLDs on the same grid (equal to the closed form at ``q = 1``): the true value
        lies between them. The lower end uses the privacy-buckets discretisation (connect-the-dots
        has no optimistic side), so the gap overstates the upper end's error; the cross-check
        table of docs/accountants.md states that error against prv-accountant."""
        delta = check_delta(delta)
        self._check_relation(neighbours)
        if delta == 0.0:
            return (math.inf, math.inf)
        if self.sampling_rate == 1.0:
            eps = gaussian_epsilon(self.mu_without_sampling(neighbours=neighbours), delta)
            return (eps, eps)
        return (self._pld_epsilon(delta, pessimistic=False),
                self._pld_epsilon(delta, pessimistic=True))

    def _pld_epsilon(self, delta: float, *, pessimistic: bool) -> float:
        from dp_accounting.pld import privacy_loss_distribution as pld_lib

        # connect-the-dots exists only for the pessimistic side; the optimistic (lower) side uses
        # the privacy-buckets discretisation, which is looser (its gap overstates the error).
        pld = pld_lib.from_gaussian_mechanism(
            standard_deviation=self.noise_multiplier, sensitivity=1.0,
            sampling_prob=self.sampling_rate, pessimistic_estimate=pessimistic,
            value_discretization_interval=PLD_DISCRETIZATION, use_connect_dots=pessimistic)
        eps = float(pld.self_compose(self.steps).get_epsilon_for_delta(delta))
        if math.isnan(eps):
            raise RuntimeError(f"dp-accounting's PLD returned NaN for {self!r} at "
                               f"delta={delta:g}; not reported")
        return max(eps, 0.0)

    def _rdp_epsilon(self, delta: float, neighbours: Relation) -> float:
        import dp_accounting
        from dp_accounting.rdp import rdp_privacy_accountant as rdp_lib

        # The relation was checked: add/remove, or q = 1 where replace-one is the Gaussian with
        # the shift doubled (noise multiplier halved), read under ADD_OR_REMOVE_ONE.
        z = self.noise_multiplier / distance_factor(neighbours)
        step = dp_accounting.PoissonSampledDpEvent(self.sampling_rate,
                                                   dp_accounting.GaussianDpEvent(z))
        absl = logging.getLogger("absl")
        level = absl.level
        absl.setLevel(logging.ERROR)  # orders whose series does not converge are dropped: still
        try:                          # an upper bound over the orders kept
            acc = rdp_lib.RdpAccountant()
            acc.compose(step, self.steps)
            eps = float(acc.get_epsilon(delta))
        finally:
            absl.setLevel(level)
        if math.isnan(eps):
            raise RuntimeError(f"dp-accounting's RDP bound is NaN for {self!r} at delta={delta:g}")
        return eps

    def describe(self, *, neighbours: Relation) -> str:
        """One sentence: the schedule, the relation and how it is accounted."""
        self._check_relation(neighbours)
        how = ("no sampling: exactly the Gaussian composition, mu = "
               f"{self.mu_without_sampling(neighbours=neighbours):.6g}"
               if self.sampling_rate == 1.0 else
               "accounted by dp-accounting's pessimistic PLD, cross-checked with RDP")
        return (f"Poisson-subsampled Gaussian (DP-SGD): noise multiplier z = "
                f"{self.noise_multiplier:.6g} (sigma / clip norm), sampling rate q = "
                f"{self.sampling_rate:.6g}, {self.steps} step(s), {neighbours} neighbours; {how}")
