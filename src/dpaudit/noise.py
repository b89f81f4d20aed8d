"""Noise schedules for the accountant side of a claim, with the neighbouring relation explicit.

The public face of :mod:`dpaudit.formal.noise_schedules` (see it for the conventions): a schedule
states a record's largest contribution (``sensitivity``) and every epsilon asks for the relation
(``neighbours="replace-one"`` doubles it, ``"add-remove"`` does not). A ``dp_accounting.DpEvent``
of your own is accounted with :func:`epsilon_of` / :func:`delta_of`, which require the relation and
what the event's sensitivity means (``sensitivity_is="contribution"`` or ``"distance"``).
Several different pieces of one release compose into one accountant with :func:`compose`
(``compose(gaussian_tree(...), LaplaceNoise(...))``): dpaudit computes the composition.

DP-SGD's accountant: :class:`PoissonSampledGaussian` (:mod:`dpaudit.formal.poisson_gaussian`:
the Poisson-subsampled Gaussian over steps, add/remove neighbours).
"""

from dpaudit.formal.noise_schedules import (ComposedNoise, ExponentialMechanism, GaussianNoise,
                                            LaplaceNoise, SparseVector, as_distance_event, compose,
                                            delta_of, distance_factor, epsilon_of, gaussian_tree,
                                            laplace_tree, matrix_factorization, tree_depth)
from dpaudit.formal.poisson_gaussian import PoissonSampledGaussian

__all__ = ["GaussianNoise", "LaplaceNoise", "gaussian_tree", "laplace_tree",
           "matrix_factorization", "tree_depth", "distance_factor", "SparseVector",
           "ExponentialMechanism", "epsilon_of", "delta_of", "as_distance_event", "compose",
           "ComposedNoise", "PoissonSampledGaussian"]
