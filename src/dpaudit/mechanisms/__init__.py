"""Noise primitives, exact in law, vectorised over independent runs.

Each mechanism samples ``n`` independent runs at once (leading batch axis) and states its privacy as
a dp-accounting event under an explicit :class:`Sensitivity` assumption.
"""

from dpaudit.mechanisms.base import Mechanism, Sensitivity
from dpaudit.mechanisms.events import EpsilonDeltaDpEvent
from dpaudit.mechanisms.exponential import ExponentialMechanism
from dpaudit.mechanisms.gaussian import GaussianMechanism, analytic_sigma, classical_sigma, sample_gaussian
from dpaudit.mechanisms.l2_laplace import L2LaplaceMechanism, sample_l2_laplace
from dpaudit.mechanisms.laplace import LaplaceMechanism, sample_laplace
from dpaudit.mechanisms.sparse_vector import AboveThreshold, SparseVectorMechanism
from dpaudit.mechanisms.tree_aggregation import (
    NodeNoise,
    TreeAggregationMechanism,
    TreeAggregator,
    tree_prefix_sums,
)
from dpaudit.mechanisms.window_tree import WindowTreeAggregator, WindowTreeMechanism, window_tree_prefix_sums

__all__ = [
    "Mechanism", "Sensitivity", "EpsilonDeltaDpEvent",
    "LaplaceMechanism", "GaussianMechanism", "L2LaplaceMechanism", "ExponentialMechanism",
    "SparseVectorMechanism", "AboveThreshold",
    "NodeNoise", "TreeAggregator", "TreeAggregationMechanism", "tree_prefix_sums",
    "WindowTreeAggregator", "WindowTreeMechanism", "window_tree_prefix_sums",
    "sample_laplace", "sample_gaussian", "sample_l2_laplace", "classical_sigma", "analytic_sigma",
]
