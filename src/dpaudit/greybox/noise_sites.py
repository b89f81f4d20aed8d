"""What reaches each noise call: the value every draw is added to, per noise site (issue 34, item 3).

Run ``mechanism(data, 1, rng)`` on both inputs of a neighbouring pair with the same seed and a
tracing :class:`~dpaudit.greybox.replay.ReplayGenerator`: each draw is a
:class:`~dpaudit.greybox.replay.TracedNoise` that records the value it is added to (``value + z``)
and follows a rescaling (``sigma * z``). With a common seed the noise already accumulated in that
value is the same on both inputs, so the difference of the two recorded values is what the data
moves the noise call's input by. Per site (the ``file:line`` that draws) the largest such distance
(l2 for Gaussian draws, l1 for Laplace ones) is held against the sensitivity the calibration
assumes at that site's scale: a schedule calibrated at ``sigma`` for a distance ``Delta`` (the
claim's accountant: its noise scale, and its sensitivity times the relation's factor) assumes
``Delta * scale / sigma`` at a draw of scale ``scale``. A ratio above 1 is an input moving further
than the noise was calibrated for: the add/remove calibration under replace-one (ratio 2) and a
missing clip (any ratio) are caught without a user-written lemma. dp-recorder (PETS 2026) records
the values passed to a library's noise primitives the same way.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from dpaudit.greybox.derivation import NotDerivable
from dpaudit.greybox.replay import Draw, ReplayGenerator

__all__ = ["SiteDistance", "site_distances", "calibration_ratio", "worst_ratio"]

Mechanism = Callable[[Any, int, np.random.Generator], Any]


@dataclass(frozen=True)
class SiteDistance:
    """One noise site on a pair: ``site`` (``file:line``), ``family``, ``draws`` (calls there),
    ``distance`` (largest move of a draw's input between the inputs), ``scale`` (that draw's
    scale), ``assumed`` (the distance the calibration assumes at that scale, or None) and
    ``ratio = distance / assumed``."""

    site: str
    family: str
    draws: int
    distance: float
    scale: float
    assumed: float | None
    ratio: float | None

    def to_dict(self) -> dict[str, Any]:
        return {"site": self.site, "family": self.family, "draws": self.draws,
                "distance": self.distance, "scale": self.scale, "assumed": self.assumed,
                "ratio": self.ratio}


def calibration_ratio(schedule: Any, factor: float) -> tuple[float, str] | None:
    """``(noise scale per unit of distance, family)`` of a :mod:`dpaudit.noise` schedule
    (``GaussianNoise``: ``sigma``, ``LaplaceNoise``: ``scale``, over ``factor * sensitivity``),
    or None for anything else."""
    sens = getattr(schedule, "sensitivity", None)
    if not isinstance(sens, (int, float)) or sens <= 0:
        return None
    for attr, family in (("sigma", "gaussian"), ("scale", "laplace")):
        s = getattr(schedule, attr, None)
        if isinstance(s, (int, float)) and s > 0:
            return float(s) / (factor * float(sens)), family
    return None


def _trace(mechanism: Mechanism, data: Any, seed: int
           ) -> tuple[list[Draw], dict[int, tuple[float, np.ndarray]], list[str]]:
    g = ReplayGenerator(seed, trace=True)
    mechanism(data, 1, g)
    first: dict[int, tuple[float, np.ndarray]] = {}
    for index, factor, value in g.added:
        first.setdefault(index, (factor, value))
    return g.draws, first, g.foreign


def site_distances(mechanism: Mechanism, data0: Any, data1: Any, *, seed: int,
                   per_unit: tuple[float, str] | None = None
                   ) -> list[SiteDistance] | NotDerivable:
    """The per-site distances of the pair under a common seed (module docstring); ``per_unit``:
    :func:`calibration_ratio` of the claim's schedule (None: no assumed sensitivity)."""
    try:
        draws0, added0, foreign0 = _trace(mechanism, data0, seed)
        draws1, added1, foreign1 = _trace(mechanism, data1, seed)
    except Exception as exc:  # the user's code failed under tracing
        return NotDerivable(f"the release failed while its noise calls were traced "
                            f"({type(exc).__name__}: {str(exc)[:120]})")
    if foreign0 or foreign1:
        return NotDerivable(f"the release draws rng.{(foreign0 or foreign1)[0]}, which dpaudit "
                            "does not trace")
    if not draws0:
        return NotDerivable("the release draws no noise from the rng dpaudit passes")
    if [(d.method, d.shape, d.site) for d in draws0] != \
            [(d.method, d.shape, d.site) for d in draws1]:
        return NotDerivable("the two inputs make different noise calls, so their sites cannot be "
                            "matched")
    sites: dict[str, list[tuple[float, float, str]]] = {}
    for i, d in enumerate(draws0):
        if i not in added0 or i not in added1:
            continue
        (f0, v0), (_, v1) = added0[i], added1[i]
        if v0.shape != v1.shape:
            continue
        diff = (v0 - v1).reshape(-1)
        dist = float(np.linalg.norm(diff) if d.family == "gaussian" else np.abs(diff).sum())
        scale = float(np.abs(d.scale).max()) * f0
        sites.setdefault(d.site, []).append((dist, scale, d.family))
    out = []
    for site, rows in sites.items():
        dist, scale, family = max(rows, key=lambda r: (r[0] / r[1]) if r[1] > 0 else math.inf)
        assumed = ratio = None
        if per_unit is not None and per_unit[1] == family and scale > 0:
            assumed = scale / per_unit[0]
            ratio = dist / assumed
        out.append(SiteDistance(site, family, len(rows), dist, scale, assumed, ratio))
    return out


def worst_ratio(sites: list[SiteDistance]) -> float:
    """The largest ``distance / assumed`` over the sites with an assumed sensitivity (0 if none)."""
    return max((s.ratio for s in sites if s.ratio is not None), default=0.0)
