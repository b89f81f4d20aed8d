"""Shuffled or fixed-size batches accounted as what they are: a composition, with no amplification.

Most DP-SGD code shuffles the data once per epoch and cuts it into fixed batches, so each record
takes part in a known number of steps, and the secrecy of the shuffle does not buy what the
Poisson accountant computes (Chua et al., ICML 2024). This schedule claims no amplification: the
release is the composition of the Gaussian steps a record enters, one Gaussian with
``mu = sqrt(n) d / z`` for ``n`` participations (Dong, Roth & Su 2022, Cor. 3.3; ``d = 1`` under
add/remove, ``2`` under replace-one; the step: Abadi et al., CCS 2016), exact when the batch
assignment is public and an upper bound whatever the shuffle. :meth:`FixedBatchGaussian.as_poisson`
is the schedule a library that accounts these batches as Poisson sampling computes (opacus'
default accountant does), so the two epsilons side by side show what that reading overclaims.

A worked example: docs/accountants.md#shuffled-and-fixed-batches-without-amplification.
"""

from __future__ import annotations

from dataclasses import dataclass

from dpaudit._validation import check_int, check_positive
from dpaudit.formal.noise_schedules import GaussianNoise, Relation
from dpaudit.formal.poisson_gaussian import PoissonSampledGaussian

__all__ = ["FixedBatchGaussian"]


@dataclass(frozen=True)
class FixedBatchGaussian:
    """``steps`` noisy steps over fixed (shuffled or cyclic) batches, accounted without
    amplification.

    Parameters
    ----------
    noise_multiplier : float
        ``z = sigma / C`` in (0, inf): the noise standard deviation in units of the clip norm.
    steps : int
        ``T >= 1``: the number of noisy steps released.
    steps_per_epoch : int
        ``S >= 1``: steps in one pass over the data (``dataset_size / batch_size`` for a
        partition into batches).
    participations_per_epoch : int
        ``k`` in [1, S]: the most steps of one epoch a record takes part in (1 for a partition).

    Notes
    -----
    A record takes part in at most ``n = k floor(T / S) + min(k, T mod S)`` steps (a partial last
    epoch can still hold up to ``k`` of its steps): :attr:`participations`.
    """

    noise_multiplier: float
    steps: int
    steps_per_epoch: int
    participations_per_epoch: int = 1

    def __post_init__(self) -> None:
        object.__setattr__(self, "noise_multiplier",
                           check_positive(self.noise_multiplier, "noise_multiplier"))
        object.__setattr__(self, "steps", check_int(self.steps, "steps", minimum=1))
        object.__setattr__(self, "steps_per_epoch",
                           check_int(self.steps_per_epoch, "steps_per_epoch", minimum=1))
        object.__setattr__(self, "participations_per_epoch",
                           check_int(self.participations_per_epoch, "participations_per_epoch",
                                     minimum=1, maximum=self.steps_per_epoch))

    @property
    def participations(self) -> int:
        """The most steps one record takes part in over the ``T`` steps."""
        full, rest = divmod(self.steps, self.steps_per_epoch)
        k = self.participations_per_epoch
        return k * full + min(k, rest)

    def as_gaussian(self) -> GaussianNoise:
        """The same schedule as a :class:`~dpaudit.formal.noise_schedules.GaussianNoise`
        (noise ``z`` per participation, contribution 1), e.g. for
        :func:`~dpaudit.formal.noise_schedules.compose`."""
        return GaussianNoise(self.noise_multiplier, 1.0, self.participations)

    def as_poisson(self) -> PoissonSampledGaussian:
        """What a library that reads these batches as Poisson sampling accounts: sampling rate
        ``q = k / S`` (the batch's share of the data) over the same ``T`` steps."""
        return PoissonSampledGaussian(self.noise_multiplier,
                                      self.participations_per_epoch / self.steps_per_epoch,
                                      self.steps)

    def mu(self, *, neighbours: Relation) -> float:
        """The Gaussian-DP ``mu = sqrt(n) d / z`` of the composition."""
        return self.as_gaussian().mu(neighbours=neighbours)

    def epsilon(self, delta: float, *, neighbours: Relation) -> float:
        """epsilon(delta) of the composition of the record's ``n`` Gaussian steps (exact closed
        form, Balle & Wang 2018, Thm 8; ``inf`` at ``delta = 0``)."""
        return self.as_gaussian().epsilon(delta, neighbours=neighbours)

    def describe(self, *, neighbours: Relation) -> str:
        """One sentence: the batches, the relation, and that no amplification is claimed."""
        return (f"fixed batches without amplification: noise multiplier z = "
                f"{self.noise_multiplier:.6g} (sigma / clip norm), {self.steps} step(s), "
                f"{self.steps_per_epoch} per epoch, a record in at most "
                f"{self.participations_per_epoch} per epoch ({self.participations} in all), "
                f"{neighbours} neighbours: the composition of {self.participations} Gaussian "
                f"step(s), mu = {self.mu(neighbours=neighbours):.6g}")
