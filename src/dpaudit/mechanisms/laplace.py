"""The Laplace mechanism: i.i.d. Laplace noise per coordinate, calibrated to l1 sensitivity.

For a query f with ``||f(D) - f(D')||_1 <= Delta`` on neighbours, releasing ``f(D) + Z`` with
``Z_i ~ Laplace(0, b)`` i.i.d. (density ``exp(-|z| / b) / (2 b)``) is ``(Delta / b, 0)``-DP
(Dwork, McSherry, Nissim & Smith, TCC 2006; Dwork & Roth, *The Algorithmic Foundations of
Differential Privacy*, 2014, Definition 3.3 and Theorem 3.6).

In the audited papers it is used by sparse vector and by the Laplace-noise checks of Asi, Feldman,
Koren & Talwar (ICML 2023, ``afkt23.txt``, Algorithm 2 line 7: ``zeta_t ~ Laplace(K / eps_0)``).

Floating-point caveat: the samples come from numpy's inverse-CDF Laplace sampler in IEEE doubles, so
their law is only approximately Laplace and the released values are not exactly
differentially private (Mironov, CCS 2012). The audits measure the mechanism as implemented.
``noise="discrete"`` releases ``g (round(f(D) / g) + Z)`` with ``Z`` discrete Laplace of scale
``scale / g`` drawn exactly (:mod:`.discrete`, Canonne, Kamath & Steinke 2020), which is exactly
``ceil(Delta / g) g / scale``-DP for answers on the grid ``g Z``.
"""

from __future__ import annotations

import math
from typing import Any, Literal

import dp_accounting
import numpy as np

from dpaudit._validation import check_generator, check_int, check_positive
from dpaudit.neighbours import NeighbourRelation
from dpaudit.mechanisms.additive_noise import PureScaleMechanism
from dpaudit.mechanisms.discrete import grid_units, rational_at_least, sample_discrete_laplace
from dpaudit.mechanisms.events import EpsilonDeltaDpEvent

NoiseMode = Literal["float", "discrete"]


def check_noise_mode(noise: object, granularity: object) -> float | None:
    """Validate ``noise``/``granularity``; the granularity for discrete noise, else None."""
    if noise not in ("float", "discrete"):
        raise ValueError(f"noise must be 'float' or 'discrete', got {noise!r}")
    if noise == "float":
        if granularity is not None:
            raise ValueError("granularity is only used with noise='discrete'")
        return None
    if granularity is None:
        raise TypeError("noise='discrete' needs granularity= (the grid step of the released "
                        "values, > 0)")
    return check_positive(granularity, "granularity")


def shift_units(sensitivity: float, granularity: float) -> int:
    """Grid units a neighbouring answer can move: ``ceil(sensitivity / granularity)`` (an exact
    multiple, up to 1e-9 relative, counts as itself)."""
    units = grid_units(sensitivity, granularity, "sensitivity")
    return max(1, int(math.ceil(units * (1 - 1e-9))))

__all__ = ["sample_laplace", "LaplaceMechanism"]


def check_size(size: object, name: str = "size") -> int | tuple[int, ...]:
    """Validate a numpy-style ``size``: a non-negative int or a tuple of non-negative ints.

    Shared by the noise samplers of this package (zero-length draws are allowed).
    """
    if isinstance(size, tuple):
        return tuple(check_int(s, f"{name}[{i}]", minimum=0) for i, s in enumerate(size))
    return check_int(size, name, minimum=0)


def sample_laplace(scale: float, size: int | tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """I.i.d. ``Laplace(0, scale)`` samples, density ``exp(-|z| / scale) / (2 scale)``.

    Parameters
    ----------
    scale : float
        The scale ``b > 0`` (standard deviation ``sqrt(2) b``).
    size : int or tuple of int
        Output shape (numpy convention); zero-length axes are allowed.
    rng : numpy.random.Generator
        Source of randomness.

    Returns
    -------
    numpy.ndarray
        float64 array of shape ``size``.
    """
    scale = check_positive(scale, "scale")
    size = check_size(size)
    rng = check_generator(rng)
    return rng.laplace(0.0, scale, size)


class LaplaceMechanism(PureScaleMechanism):
    """Release ``f(D) + Laplace(0, scale)`` per coordinate; ``(sensitivity / scale)``-DP.

    Parameters
    ----------
    sensitivity : float
        l1 sensitivity ``Delta`` of the query under ``relation``, > 0.
    scale : float
        Laplace scale ``b`` > 0.
    relation : NeighbourRelation, optional
        The neighbour relation under which ``sensitivity`` holds (default: replace one element,
        the relation of all five audited papers).

    Notes
    -----
    Privacy: pure ``epsilon = Delta / b`` (Dwork & Roth 2014, Theorem 3.6). :meth:`dp_event` returns
    ``LaplaceDpEvent(noise_multiplier = b / Delta)``: the noise in units of one sensitivity, to be
    accounted as a single shift (dp-accounting's ``ADD_OR_REMOVE_ONE`` reading; see
    :mod:`dpaudit.formal.accounting`).
    """

    name = "laplace"
    _norm = "l1"

    def __init__(self, sensitivity: float, scale: float,
                 relation: NeighbourRelation = NeighbourRelation.REPLACE_ONE, *,
                 noise: NoiseMode = "float", granularity: float | None = None) -> None:
        super().__init__(sensitivity, scale, relation)
        self._granularity = check_noise_mode(noise, granularity)
        if self._granularity is not None:
            self._t = rational_at_least(grid_units(self._scale, self._granularity, "scale"),
                                        "scale / granularity")

    @property
    def noise(self) -> str:
        """``"float"`` (numpy's sampler) or ``"discrete"`` (exact discrete Laplace on a grid)."""
        return "float" if self._granularity is None else "discrete"

    @property
    def granularity(self) -> float | None:
        return self._granularity

    @property
    def epsilon(self) -> float:
        """``sensitivity / scale``; discrete: ``ceil(sensitivity / g) / t``, t the exact rational
        scale in grid units (rounded up from ``scale / g``, so never above the float value)."""
        if self._granularity is None:
            return super().epsilon
        return shift_units(self._sensitivity.bound, self._granularity) / float(self._t)

    def _sample_noise(self, n: int, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
        return sample_laplace(self._scale, (n, *shape), rng)

    def _sample_noise_units(self, n: int, shape: tuple[int, ...],
                            rng: np.random.Generator) -> np.ndarray:
        size = n * int(np.prod(shape, dtype=np.int64))
        return sample_discrete_laplace(self._t, size, check_generator(rng)).reshape(n, *shape)

    def dp_event(self) -> dp_accounting.DpEvent:
        if self._granularity is not None:
            return EpsilonDeltaDpEvent(self.epsilon, 0.0)
        return dp_accounting.LaplaceDpEvent(noise_multiplier=self._scale / self._sensitivity.bound)

    def describe(self) -> dict[str, Any]:
        out = super().describe()
        if self._granularity is not None:
            out.update(noise="discrete", granularity=self._granularity,
                       scale_units=f"{self._t.numerator}/{self._t.denominator}")
        return out
