"""Additive-noise mechanisms: release a query answer plus noise drawn independently of it.

The Laplace (:mod:`.laplace`), Gaussian (:mod:`.gaussian`) and l2-Laplace (:mod:`.l2_laplace`)
mechanisms all release ``f(D) + Z`` for a query answer ``f(D)`` (a finite scalar or vector in R^d)
and noise ``Z`` whose law does not depend on the data (Dwork & Roth, *The Algorithmic Foundations
of Differential Privacy*, 2014, Sec. 3.3 and App. A). :class:`AdditiveNoiseMechanism` holds what
they share: the sensitivity assumption and the batch sampling of ``f(D) + Z``; each subclass states
its noise law and its privacy. :class:`PureScaleMechanism` adds the calibration shared by the two
pure-DP ones, whose epsilon is ``sensitivity / scale``.
"""

from __future__ import annotations

import abc
import math
from typing import Any, Self

import numpy as np

from dpaudit._validation import check_epsilon, check_finite_array, check_int, check_positive
from dpaudit.neighbours import NeighbourRelation
from dpaudit.mechanisms.base import Mechanism, Norm, Sensitivity

__all__ = ["AdditiveNoiseMechanism", "PureScaleMechanism"]


def _as_query_answer(data: Any) -> np.ndarray:
    """Validate a query answer ``f(D)``: a finite scalar or non-empty 1-D vector (float64)."""
    value = check_finite_array(data, "data", ndim=(0, 1))
    if value.ndim == 1 and value.shape[0] == 0:
        raise ValueError("data must have at least one coordinate, got shape (0,)")
    return value


class AdditiveNoiseMechanism(Mechanism):
    """Release ``f(D) + Z`` with data-independent noise ``Z``; subclasses give the law of ``Z``.

    Parameters
    ----------
    sensitivity : float
        Sensitivity ``Delta`` of the query under ``relation``, > 0, in the norm ``norm``.
    norm : {"l1", "l2"}
        The norm in which ``sensitivity`` is stated.
    relation : NeighbourRelation
        The neighbour relation under which ``sensitivity`` holds.
    """

    def __init__(self, sensitivity: float, norm: Norm, relation: NeighbourRelation) -> None:
        self._sensitivity = Sensitivity(check_positive(sensitivity, "sensitivity"), norm, relation)

    @property
    def sensitivity(self) -> Sensitivity:
        return self._sensitivity

    @abc.abstractmethod
    def _sample_noise(self, n: int, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
        """``n`` independent noise draws for an answer of shape ``shape`` (``()`` or ``(d,)``).

        Returns an array of shape ``(n, *shape)``; ``rng`` is validated by the sampler.
        """

    def sample(self, data: Any, n: int, rng: np.random.Generator) -> np.ndarray:
        """Outputs of ``n`` independent runs on the query answer ``data``.

        Parameters
        ----------
        data : float or array_like, shape (d,)
            The exact query answer ``f(D)``; a scalar is the case d = 1.
        n : int
            Number of independent runs, >= 1.
        rng : numpy.random.Generator

        Returns
        -------
        numpy.ndarray
            Shape ``(n,)`` for scalar ``data``, ``(n, d)`` for a vector.
        """
        value = _as_query_answer(data)
        n = check_int(n, "n", minimum=1)
        g = getattr(self, "_granularity", None)
        if g is not None:
            # noise="discrete": the answer in grid units (rounded half up), plus exact integer
            # noise; the release is g times an integer, a post-processing of integers.
            units = np.floor(value / g + 0.5)
            return (units + self._sample_noise_units(n, value.shape, rng)) * g
        return value + self._sample_noise(n, value.shape, rng)

    def _sample_noise_units(self, n: int, shape: tuple[int, ...],
                            rng: np.random.Generator) -> np.ndarray:
        """Integer noise in grid units (``noise="discrete"``); subclasses that support it."""
        raise NotImplementedError(f"{type(self).__name__} has no discrete noise")


class PureScaleMechanism(AdditiveNoiseMechanism):
    """Additive noise of scale ``s`` whose privacy is pure ``epsilon = sensitivity / s``.

    Parameters
    ----------
    sensitivity : float
        Sensitivity ``Delta`` of the query under ``relation``, > 0, in the norm ``_norm`` of the
        subclass (l1 for Laplace, l2 for l2-Laplace).
    scale : float
        Noise scale ``s`` > 0.
    relation : NeighbourRelation, optional
        The neighbour relation under which ``sensitivity`` holds (default: replace one element,
        the relation of all five audited papers).
    """

    #: The norm of the sensitivity the noise is calibrated to (set by each subclass).
    _norm: Norm

    def __init__(self, sensitivity: float, scale: float,
                 relation: NeighbourRelation = NeighbourRelation.REPLACE_ONE) -> None:
        super().__init__(sensitivity, self._norm, relation)
        self._scale = check_positive(scale, "scale")

    @classmethod
    def from_epsilon(cls, sensitivity: float, epsilon: float,
                     relation: NeighbourRelation = NeighbourRelation.REPLACE_ONE,
                     **options: Any) -> Self:
        """The mechanism with ``scale = sensitivity / epsilon`` (exactly ``epsilon``-DP).

        ``options`` go to the constructor (e.g. ``noise="discrete", granularity=g``).
        """
        sensitivity = check_positive(sensitivity, "sensitivity")
        epsilon = check_epsilon(epsilon)
        scale = sensitivity / epsilon
        if not (math.isfinite(scale) and scale > 0.0):
            raise ValueError(f"epsilon={epsilon!r} with sensitivity={sensitivity!r} gives the noise "
                             f"scale sensitivity / epsilon = {scale!r}, not a positive finite "
                             "float; use a larger epsilon or a smaller sensitivity")
        return cls(sensitivity, scale, relation, **options)

    @property
    def scale(self) -> float:
        """The noise scale ``s`` (the subclass docstring gives the law)."""
        return self._scale

    @property
    def epsilon(self) -> float:
        """Pure-DP epsilon ``sensitivity / scale``."""
        return self._sensitivity.bound / self._scale

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "scale": self._scale, "epsilon": self.epsilon}

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(sensitivity={self._sensitivity.bound!r}, "
                f"scale={self._scale!r})")
