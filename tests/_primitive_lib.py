"""A stand-in for a "compiled" DP library (tests/test_named_primitives.py): its samplers draw
from Python's ``random``, which no draw source of dpaudit reads, so its noise is visible only to a
primitive the user names."""

from __future__ import annotations

import random

import numpy as np


def laplace_noise(value, scale):
    """``value + Laplace(0, scale)`` per coordinate (difference of two exponentials)."""
    x = np.asarray(value, dtype=float)
    z = np.array([random.expovariate(1.0 / scale) - random.expovariate(1.0 / scale)
                  for _ in range(x.size)]).reshape(x.shape)
    return x + z


class GaussianMechanism:
    """A library's own mechanism class: ``randomise(value)`` adds ``N(0, sigma^2)`` per
    coordinate, ``sigma`` and ``sensitivity`` are attributes (diffprivlib's ``randomise`` style)."""

    def __init__(self, sigma, sensitivity):
        self.sigma = sigma
        self.sensitivity = sensitivity

    def randomise(self, value):
        x = np.asarray(value, dtype=float)
        z = np.array([random.gauss(0.0, self.sigma) for _ in range(x.size)]).reshape(x.shape)
        return x + z

    @staticmethod
    def helper(value, scale):
        return value


class SubMechanism(GaussianMechanism):
    """Inherits ``randomise``: naming it on the subclass patches (and restores) the subclass."""

    @classmethod
    def noisy(cls, value, sigma):
        return value + random.gauss(0.0, sigma)
