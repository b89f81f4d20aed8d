"""The delta grids on which the privacy-curve figures evaluate epsilon(delta).

A figure's curve is a series of epsilon values over one of these grids, computed from the same
objects as the table (:class:`~dpaudit.claims.declaration.PointPlan`'s ``curve``). The grids differ
on purpose: a pure-DP release has a finite epsilon at delta = 0, so its grid starts there; a
Gaussian release's curve is smooth, so every second decade suffices where the exact curve is
cheap to draw and the decades in between where the paper's claim sits among them.
"""

from __future__ import annotations

__all__ = ["DECADES", "EVEN_DECADES", "PURE_AND_EVEN_DECADES"]

#: ``1e-10, 1e-9, ..., 1e-1``: every decade (JKT12's Gaussian releases, AFKT23's learners).
DECADES: tuple[float, ...] = tuple(10.0 ** -k for k in range(10, 0, -1))

#: ``1e-10, 1e-8, 1e-6, 1e-4, 1e-2``: every second decade (the pfcoco window trees and learners).
EVEN_DECADES: tuple[float, ...] = (1e-10, 1e-8, 1e-6, 1e-4, 1e-2)

#: ``0, 1e-8, 1e-6, 1e-4, 1e-2``: pure DP at delta = 0, then every second decade (ST13's Laplace
#: trees, whose exact epsilon is known at delta = 0 only).
PURE_AND_EVEN_DECADES: tuple[float, ...] = (0.0, 1e-8, 1e-6, 1e-4, 1e-2)
