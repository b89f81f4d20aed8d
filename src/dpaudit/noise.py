"""Noise schedules for the accountant side of a claim, with the neighbouring relation explicit.

The public face of :mod:`dpaudit.formal.noise_schedules` (see it for the conventions): a schedule
states a record's largest contribution (``sensitivity``) and every epsilon asks for the relation
(``neighbours="replace-one"`` doubles it, ``"add-remove"`` does not).
"""

from dpaudit.formal.noise_schedules import (GaussianNoise, LaplaceNoise, distance_factor,
                                            gaussian_tree, laplace_tree, matrix_factorization,
                                            tree_depth)

__all__ = ["GaussianNoise", "LaplaceNoise", "gaussian_tree", "laplace_tree",
           "matrix_factorization", "tree_depth", "distance_factor"]
