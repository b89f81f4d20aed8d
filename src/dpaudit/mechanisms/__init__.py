"""Noise primitives, exact in law, vectorised over independent runs."""

from dpaudit.mechanisms.base import Mechanism, Sensitivity

__all__ = ["Mechanism", "Sensitivity"]
