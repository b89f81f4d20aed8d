"""The l2-Laplace ("Gamma") mechanism: noise with density proportional to ``exp(-||x||_2 / scale)``.

For a query f with ``||f(D) - f(D')||_2 <= Delta``, releasing ``f(D) + b`` with density
``p(b) ∝ exp(-||b||_2 / s)`` is ``(Delta / s, 0)``-DP, because
``p(y - f(D)) / p(y - f(D')) = exp((||y - f(D')||_2 - ||y - f(D)||_2) / s) <= exp(Delta / s)``
by the triangle inequality (Chaudhuri, Monteleoni & Sarwate, JMLR 2011, Section 4.1).

In polar coordinates the density is ``∝ r^(d-1) exp(-r/s)`` in the radius and constant on the
sphere, so ``||b||_2 ~ Gamma(shape = d, scale = s)`` independent of a uniform direction; in d = 1
this is ``Laplace(0, s)``. The audited papers use it in tree aggregation: Smith & Thakurta
(NeurIPS 2013, ``st13.txt``), Algorithm 2 line 9, ``n ~ lambda exp(-||n||_2 eps / (mu (ceil(log2 T)
+ 1)))``, i.e. ``s = mu (ceil(log2 T) + 1) / eps``; and the "Gamma" option of the window tree
mechanism (``pfcoco-window-tree.txt``, Option I).

Floating-point caveat: the radius and direction are sampled in IEEE doubles, so the law is only
approximately the stated one and the output is not exactly DP (Mironov, CCS 2012).
"""

from __future__ import annotations

import dp_accounting
import numpy as np

from dpaudit._rowwise import div_rows, mul_rows, row_norm
from dpaudit._validation import check_generator, check_int, check_positive
from dpaudit.mechanisms.additive_noise import PureScaleMechanism
from dpaudit.mechanisms.events import EpsilonDeltaDpEvent

__all__ = ["sample_l2_laplace", "sample_uniform_direction", "L2LaplaceMechanism"]


def sample_uniform_direction(n: int, d: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` i.i.d. points uniform on the unit sphere of R^d (normalised standard Gaussians).

    Parameters
    ----------
    n : int
        Number of points, >= 0.
    d : int
        Dimension, >= 1 (in d = 1 the "sphere" is {-1, +1}, each with probability 1/2).
    rng : numpy.random.Generator

    Returns
    -------
    numpy.ndarray
        Shape ``(n, d)``, every row of unit l2 norm.
    """
    n = check_int(n, "n", minimum=0)
    d = check_int(d, "d", minimum=1)
    rng = check_generator(rng)
    return _uniform_direction(n, d, rng)


def _uniform_direction(n: int, d: int, rng: np.random.Generator) -> np.ndarray:
    """:func:`sample_uniform_direction` on validated arguments (the l2-Laplace sampler's inner
    call: its validation is already done once per draw)."""
    g = rng.standard_normal((n, d))
    norm = row_norm(g)  # np.linalg.norm(g, axis=1), bit for bit
    # A Gaussian vector is exactly zero with probability ~0 in floating point; redraw such rows
    # rather than divide by zero (the redrawn rows are again isotropic, so the law is unchanged).
    zero = np.flatnonzero(norm == 0.0)
    while zero.size:
        g[zero] = rng.standard_normal((zero.size, d))
        norm[zero] = np.linalg.norm(g[zero], axis=1)
        zero = zero[norm[zero] == 0.0]
    return div_rows(g, norm)  # g / norm[:, None], bit for bit


def sample_l2_laplace(scale: float, n: int, d: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` i.i.d. vectors in R^d with density proportional to ``exp(-||x||_2 / scale)``.

    Sampled as ``R * U`` with ``R ~ Gamma(shape = d, scale = scale)`` and ``U`` uniform on the unit
    sphere (:func:`sample_uniform_direction`), independent. In d = 1 the law is ``Laplace(0, scale)``.

    Parameters
    ----------
    scale : float
        ``s > 0``; ``E||x||_2 = d s``.
    n : int
        Number of vectors, >= 0.
    d : int
        Dimension, >= 1.
    rng : numpy.random.Generator

    Returns
    -------
    numpy.ndarray
        Shape ``(n, d)``.
    """
    scale = check_positive(scale, "scale")
    n = check_int(n, "n", minimum=0)
    d = check_int(d, "d", minimum=1)
    rng = check_generator(rng)
    radius = rng.gamma(shape=d, scale=scale, size=n)
    return mul_rows(_uniform_direction(n, d, rng), radius)  # radius[:, None] * U, bit for bit


class L2LaplaceMechanism(PureScaleMechanism):
    """Release ``f(D) + b`` with ``p(b) ∝ exp(-||b||_2 / scale)``; ``(sensitivity / scale)``-DP.

    Parameters
    ----------
    sensitivity : float
        l2 sensitivity ``Delta`` of the query under ``relation``, > 0.
    scale : float
        ``s > 0`` (the noise norm is Gamma(d, s)).
    relation : NeighbourRelation, optional
        The neighbour relation under which ``sensitivity`` holds (default: replace one element).

    Notes
    -----
    Pure ``epsilon = Delta / s`` for every dimension d (triangle inequality; Chaudhuri, Monteleoni
    & Sarwate 2011). dp-accounting has no event for this law, so :meth:`dp_event` returns
    ``EpsilonDeltaDpEvent(epsilon, 0)`` (:mod:`dpaudit.mechanisms.events`), accounted through the
    worst-case pure-DP privacy loss distribution, which dominates that of the l2-Laplace pair, so
    compositions accounted this way are upper bounds rather than exact values.
    """

    name = "l2-laplace"
    _norm = "l2"

    def _sample_noise(self, n: int, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
        d = shape[0] if shape else 1  # a scalar answer is the case d = 1
        noise = sample_l2_laplace(self._scale, n, d, rng)
        return noise if shape else noise[:, 0]

    def dp_event(self) -> dp_accounting.DpEvent:
        return EpsilonDeltaDpEvent(self.epsilon, 0.0)
