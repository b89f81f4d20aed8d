"""Noise schedules for the accountant side of a claim, with the neighbouring relation explicit.

The public face of :mod:`dpaudit.formal.noise_schedules` (see it for the conventions): a schedule
states a record's largest contribution (``sensitivity``) and every epsilon asks for the relation
(``neighbours="replace-one"`` doubles it, ``"add-remove"`` does not). A ``dp_accounting.DpEvent``
of your own is accounted with :func:`epsilon_of` / :func:`delta_of`, which require the relation and
what the event's sensitivity means (``sensitivity_is="contribution"`` or ``"distance"``).
Several different pieces of one release compose into one accountant with :func:`compose`
(``compose(gaussian_tree(...), LaplaceNoise(...))``): dpaudit computes the composition.

The accountants of DP-SGD and matrix-factorization libraries (docs/accountants.md):
:class:`PoissonSampledGaussian` (:mod:`dpaudit.formal.poisson_gaussian`: DP-SGD's
Poisson-subsampled Gaussian over steps, add/remove neighbours), :class:`FixedBatchGaussian`
(:mod:`dpaudit.formal.fixed_batches`: shuffled or fixed batches, no amplification claimed) and
:class:`MatrixFactorizationNoise` with :class:`MinSeparation` / :class:`Cyclic` participation
(:mod:`dpaudit.formal.mf_participation`: the strategy's sensitivity over participation patterns,
exact or refused). Each turns into a :class:`GaussianNoise` for :func:`compose` where it is one
(``as_gaussian()``).
"""

from dpaudit.formal.noise_schedules import (ComposedNoise, ExponentialMechanism, GaussianNoise,
                                            LaplaceNoise, SparseVector, as_distance_event, compose,
                                            delta_of, distance_factor, epsilon_of, gaussian_tree,
                                            laplace_tree, matrix_factorization, tree_depth)
from dpaudit.formal.fixed_batches import FixedBatchGaussian
from dpaudit.formal.mf_participation import (Cyclic, MatrixFactorizationNoise, MinSeparation,
                                             ParticipationSensitivity, participation_sensitivity)
from dpaudit.formal.poisson_gaussian import PoissonSampledGaussian

__all__ = ["GaussianNoise", "LaplaceNoise", "gaussian_tree", "laplace_tree",
           "matrix_factorization", "tree_depth", "distance_factor", "SparseVector",
           "ExponentialMechanism", "epsilon_of", "delta_of", "as_distance_event", "compose",
           "ComposedNoise", "PoissonSampledGaussian", "FixedBatchGaussian",
           "MatrixFactorizationNoise", "MinSeparation", "Cyclic", "participation_sensitivity",
           "ParticipationSensitivity"]
