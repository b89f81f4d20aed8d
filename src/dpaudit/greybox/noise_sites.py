"""What reaches each noise call, and what the data moves over all of a release's draws, against
the calibration of the claim's noise schedule.

Both inputs of a pair run with one seed under a tracing
:class:`~dpaudit.greybox.replay.ReplayGenerator`; the difference of the values each draw is added
to is what the data moves that noise call by. **Per site** (``file:line``) the largest move is
reported against the draw's share of one release's calibration (a note, not the decision).
**Whole calibration** (:func:`pair_calibration`, the decision): the shift over all draws against
the schedule's ``mu_S = sqrt(releases) * Delta / sigma`` (Laplace ``releases * Delta / b``),
exactly from the derived pair law where there is one (Dong, Roth & Su, JRSS-B 2022, Cor. 3.3;
basic composition, Dwork & Roth 2014, Thm 3.16), else by composing the per-draw moves: for the
usual shapes an over-count (blocking ``holds``, never the reverse), not a bound only for
non-affine code that takes back part of an earlier noisy value's data. A ratio above 1 (add/remove
calibration under replace-one, a missing clip, noise below the schedule) is caught without a
user-written lemma. dp-recorder (PETS 2026) records noise-primitive inputs the same way.

The derivation, the over-count and where the composition is not a bound:
docs/greybox-notes.md#noise-sites.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpaudit.evidence_records import NoiseFamily

from dpaudit.greybox.derivation import NotDerivable, PairLaw, derive_pair
from dpaudit.greybox.replay import Draw, Mechanism, ReplayGenerator, describe_foreign
from dpaudit.greybox.sources import run_release

__all__ = ["SiteDistance", "site_distances", "calibration_ratio", "worst_ratio",
           "WholeCalibration", "PairCalibration", "schedule_budget", "pair_calibration",
           "DERIVED_LAW", "COMPOSITION"]

#: ``WholeCalibration.method`` when the pair's law was derived from the code (exact).
DERIVED_LAW = "derived law"
#: ``WholeCalibration.method`` when the per-draw distances were composed (an upper bound).
COMPOSITION = "composition of draws"


@dataclass(frozen=True)
class SiteDistance:
    """One noise site on a pair: ``site`` (``file:line``), ``family``, ``draws`` (calls there),
    ``distance`` (largest move of a draw's input between the inputs), ``scale`` (that draw's
    scale), ``assumed`` (the distance one release's calibration assumes at that scale, or None)
    and ``ratio = distance / assumed``."""

    site: str
    family: str
    draws: int
    distance: float
    scale: float
    assumed: float | None
    ratio: float | None
    #: The draw source of the site's calls (:mod:`dpaudit.greybox.sources`).
    source: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"site": self.site, "source": self.source, "family": str(self.family),
                "draws": self.draws,
                "distance": self.distance, "scale": self.scale, "assumed": self.assumed,
                "ratio": self.ratio}


@dataclass(frozen=True)
class WholeCalibration:
    """What the data moves over all the draws of a release on one pair, against the schedule.

    ``family``: ``"gaussian"`` (``observed`` and ``allowed`` are Gaussian-DP shifts ``mu``) or
    ``"laplace"`` (pure epsilons); ``observed``: the pair's (exact for ``method ==``
    :data:`DERIVED_LAW`, an upper bound for :data:`COMPOSITION`); ``allowed``: the schedule's over
    its ``releases``; ``ratio = observed / allowed`` (infinite when the shift leaves the span of
    the noise); ``how``: one sentence saying how it was computed; ``proven``: False for a
    composition in which a value a draw is added to contains earlier draws, where the composition
    is not a proven bound (docs/greybox-notes.md#noise-sites).
    """

    ratio: float
    method: str
    family: str
    observed: float
    allowed: float
    how: str
    proven: bool = True

    @property
    def quantity(self) -> str:
        """``"mu"`` or ``"pure epsilon"``: what ``observed`` and ``allowed`` measure."""
        return "mu" if self.family == NoiseFamily.GAUSSIAN else "pure epsilon"

    def to_dict(self) -> dict[str, Any]:
        def f(x: float) -> float | str:
            return "inf" if math.isinf(x) else float(x)
        return {"ratio": f(self.ratio), "method": self.method, "family": str(self.family),
                "quantity": self.quantity, "observed": f(self.observed),
                "allowed": float(self.allowed), "how": self.how, "proven": self.proven}


@dataclass(frozen=True)
class PairCalibration:
    """The per-site rows of a pair and its whole calibration (or why none was computed)."""

    sites: list[SiteDistance]
    whole: WholeCalibration | NotDerivable


def calibration_ratio(schedule: Any, factor: float) -> tuple[float, str] | None:
    """``(noise scale per unit of distance, family)`` of a :mod:`dpaudit.noise` schedule
    (``GaussianNoise``: ``sigma``, ``LaplaceNoise``: ``scale``, over ``factor * sensitivity``),
    or None for anything else. This is one release's calibration (a draw's share)."""
    sens = getattr(schedule, "sensitivity", None)
    if not isinstance(sens, (int, float)) or sens <= 0:
        return None
    for attr, family in (("sigma", NoiseFamily.GAUSSIAN), ("scale", NoiseFamily.LAPLACE)):
        s = getattr(schedule, attr, None)
        if isinstance(s, (int, float)) and s > 0:
            return float(s) / (factor * float(sens)), family
    return None


def schedule_budget(schedule: Any, factor: float) -> tuple[float, str, str] | None:
    """``(allowed, family, formula)``: what the schedule allows the data to move over all its
    ``releases`` (docs/greybox-notes.md#noise-sites), or None when it is not a Gaussian or
    Laplace schedule.

    Gaussian: ``mu_S = sqrt(releases) * factor * sensitivity / sigma``; Laplace: the pure epsilon
    ``releases * factor * sensitivity / scale``; ``factor`` is the relation's distance factor
    (:func:`dpaudit.formal.noise_schedules.distance_factor`: 2 under replace-one, 1 under
    add/remove), applied exactly once, as :func:`calibration_ratio` does.
    """
    per_unit = calibration_ratio(schedule, factor)
    if per_unit is None:
        return None
    releases = getattr(schedule, "releases", 1)
    if not isinstance(releases, int) or releases < 1:
        return None
    unit, family = per_unit
    sens = float(schedule.sensitivity)
    noise = unit * factor * sens  # the schedule's sigma (Gaussian) or b (Laplace)
    if family == "gaussian":
        allowed = math.sqrt(releases) / unit
        formula = (f"the schedule's mu = sqrt({releases}) x {factor:g} x {sens:.6g} / sigma "
                   f"{noise:.6g} = {allowed:.6g}")
    else:
        allowed = releases / unit
        formula = (f"the schedule's pure epsilon = {releases} x {factor:g} x {sens:.6g} / b "
                   f"{noise:.6g} = {allowed:.6g}")
    return allowed, family, formula


@dataclass(frozen=True)
class _DrawMove:
    """One draw on a pair: where, which family, the value's move (raw norm, the site rows' one)
    and whitened by the draw's per-coordinate scale (None when the value has more entries than
    the draw, so one noise value reaches several coordinates)."""

    site: str
    family: str
    distance: float
    scale: float
    whitened: float | None
    source: str = ""


def _trace(mechanism: Mechanism, data: Any, seed: int
           ) -> tuple[list[Draw], dict[int, tuple[float, np.ndarray]], list[str]]:
    g = ReplayGenerator(seed, trace=True)
    run_release(mechanism, data, 1, g)
    first: dict[int, tuple[float, np.ndarray]] = {}
    for index, factor, value in g.added:
        first.setdefault(index, (factor, value))
    return g.draws, first, g.foreign


def _draw_moves(mechanism: Mechanism, data0: Any, data1: Any, seed: int
                ) -> tuple[list[_DrawMove], int] | NotDerivable:
    """Every draw whose value is visible on both inputs, and how many draws are not."""
    try:
        draws0, added0, foreign0 = _trace(mechanism, data0, seed)
        draws1, added1, foreign1 = _trace(mechanism, data1, seed)
    except Exception as exc:  # the user's code failed under tracing
        return NotDerivable(f"the release failed while its noise calls were traced "
                            f"({type(exc).__name__}: {str(exc)[:120]})")
    if foreign0 or foreign1:
        return NotDerivable(f"the release draws {describe_foreign((foreign0 or foreign1)[0])}, "
                            "which dpaudit does not trace")
    if not draws0:
        return NotDerivable("the release draws no noise from the rng dpaudit passes or any "
                            "source it intercepts")
    if [(d.method, d.shape, d.site, d.source) for d in draws0] != \
            [(d.method, d.shape, d.site, d.source) for d in draws1]:
        return NotDerivable("the two inputs make different noise calls, so their sites cannot be "
                            "matched")
    moves: list[_DrawMove] = []
    unseen = 0
    for i, d in enumerate(draws0):
        if i not in added0 or i not in added1 or added0[i][1].shape != added1[i][1].shape:
            unseen += 1
            continue
        (f0, v0), (_, v1) = added0[i], added1[i]
        if not (np.all(np.isfinite(v0)) and np.all(np.isfinite(v1))):
            return NotDerivable(f"a value noise site {d.site} is added to is not finite (NaN or "
                                "inf) on one of the inputs, so what the data moves cannot be "
                                "measured")
        diff = v0 - v1
        flat = diff.reshape(-1)
        gauss = d.family == "gaussian"
        dist = float(np.linalg.norm(flat) if gauss else np.abs(flat).sum())
        scale = float(np.abs(d.scale).max()) * f0
        whitened = None
        if np.broadcast_shapes(diff.shape, d.shape) == d.shape:
            move = np.abs(np.broadcast_to(diff, d.shape))
            b = np.abs(d.scale) * f0
            with np.errstate(divide="ignore", invalid="ignore"):
                w = np.where(move > 0, move / b, 0.0)  # a moved coordinate with no noise: inf
            whitened = float(np.sqrt(np.sum(w ** 2)) if gauss else np.sum(w))
        moves.append(_DrawMove(d.site, d.family, dist, scale, whitened, d.source))
    return moves, unseen


def _sites(moves: list[_DrawMove], per_unit: tuple[float, str] | None) -> list[SiteDistance]:
    rows: dict[str, list[_DrawMove]] = {}
    for m in moves:
        rows.setdefault(m.site, []).append(m)
    out = []
    for site, ms in rows.items():
        worst = max(ms, key=lambda m: (m.distance / m.scale) if m.scale > 0 else math.inf)
        assumed = ratio = None
        if per_unit is not None and per_unit[1] == worst.family and worst.scale > 0:
            assumed = worst.scale / per_unit[0]
            ratio = worst.distance / assumed
        out.append(SiteDistance(site, worst.family, len(ms), worst.distance, worst.scale,
                                assumed, ratio, worst.source))
    return out


def site_distances(mechanism: Mechanism, data0: Any, data1: Any, *, seed: int,
                   per_unit: tuple[float, str] | None = None
                   ) -> list[SiteDistance] | NotDerivable:
    """The per-site distances of the pair under a common seed (docs/greybox-notes.md#noise-sites);
    ``per_unit``: :func:`calibration_ratio` of the claim's schedule (None: no assumed
    sensitivity)."""
    moves = _draw_moves(mechanism, data0, data1, seed)
    if isinstance(moves, NotDerivable):
        return moves
    return _sites(moves[0], per_unit)


def worst_ratio(sites: list[SiteDistance]) -> float:
    """The largest per-draw ``distance / assumed`` over the sites with an assumed sensitivity (0 if
    none)."""
    return max((s.ratio for s in sites if s.ratio is not None), default=0.0)


def _derived(law: PairLaw, allowed: float, family: str, formula: str
             ) -> WholeCalibration | NotDerivable:
    if law.family != family:
        return NotDerivable(f"the code draws {law.family} noise where the schedule accounts "
                            f"{family} noise, so the schedule does not describe it")
    if law.shapes_differ:
        return WholeCalibration(math.inf, DERIVED_LAW, family, math.inf, allowed,
                                "derived law: the output's shape differs between the inputs "
                                f"(the shape reveals which ran), against {formula}")
    if family == "gaussian":
        from dpaudit.formal.exact_laws import LinearGaussian

        means = (law.law0.mean, law.law1.mean)
        observed = LinearGaussian(mean=lambda i: means[i],
                                  covariance=law.law0.A @ law.law0.A.T).mu(0, 1)
        what = "shift mu = ||(A A^T)^{+1/2} (m0 - m1)||"
    else:
        observed = float(law.epsilon(0.0).value)
        what = "pure epsilon ||s||_1 (A s = m0 - m1)"
    ratio = observed / allowed
    how = (f"derived law: the pair's {what} of the law read from the code is "
           f"{'inf' if math.isinf(observed) else f'{observed:.6g}'}, against {formula}")
    return WholeCalibration(ratio, DERIVED_LAW, family, float(observed), allowed, how)


def _earlier_noise(mechanism: Mechanism, data: Any, seed: int) -> int:
    """How many draws are added to a value that contains earlier draws: the visible values under
    ``seed`` and ``seed + 1`` differ on the same input (all draws when the calls themselves
    differ, or the code fails)."""
    try:
        draws_a, added_a, _ = _trace(mechanism, data, seed)
        draws_b, added_b, _ = _trace(mechanism, data, seed + 1)
    except Exception:  # the user's code failed under tracing: nothing is proven
        return 1
    if [(d.method, d.shape, d.site, d.source) for d in draws_a] != \
            [(d.method, d.shape, d.site, d.source) for d in draws_b]:
        return len(draws_a) or 1
    return sum(1 for i, (_, v) in added_a.items()
               if i not in added_b or not np.array_equal(v, added_b[i][1]))


def _composed(moves: list[_DrawMove], unseen: int, allowed: float, family: str, formula: str,
              why: str, mixed: int) -> WholeCalibration | NotDerivable:
    mine = [m for m in moves if m.family == family]
    other = [m for m in moves if m.family != family and m.distance > 0]
    if other:
        return NotDerivable(f"the data moves a {other[0].family} draw where the schedule accounts "
                            f"{family} noise, so the schedule does not describe it")
    if not mine:
        return NotDerivable("no noise draw of the schedule's kind is added to a value dpaudit can "
                            "see (the noise may reach the output through a matrix product)")
    if any(m.whitened is None for m in mine):
        return NotDerivable("a noise draw is added to a value with more entries than the draw "
                            "(one noise value reaches several coordinates), so the draws' "
                            "composition is not a bound")
    w = [m.whitened for m in mine if m.whitened is not None]
    observed = float(math.sqrt(sum(x * x for x in w)) if family == "gaussian" else sum(w))
    combine = ("sqrt of the sum of (distance / scale)^2" if family == "gaussian"
               else "sum of distance / scale")
    how = (f"composition of draws ({combine} over {len(w)} draw(s)"
           + (f"; {unseen} draw(s) not added to a visible value are not counted" if unseen
              else "")
           + (f"; {mixed} draw(s) are added to values that contain earlier draws, where the "
              "composition is not a proven bound" if mixed
              else "; an upper bound, as every value a draw is added to is computed from the "
              "data alone")
           + f"): {'inf' if math.isinf(observed) else f'{observed:.6g}'}, against {formula}; "
           f"no law derived: {why}")
    return WholeCalibration(observed / allowed, COMPOSITION, family, observed, allowed, how,
                            proven=mixed == 0)


def pair_calibration(mechanism: Mechanism, data0: Any, data1: Any, *, seed: int, schedule: Any,
                     factor: float) -> PairCalibration | NotDerivable:
    """The per-site rows and the whole calibration of one pair (docs/greybox-notes.md#noise-sites).

    Parameters
    ----------
    mechanism
        ``mechanism(data, n, rng)``, the release.
    data0, data1
        The neighbouring inputs.
    seed
        The common seed of the traces and of the derivation's replays.
    schedule
        The claim's accountant: a :class:`~dpaudit.formal.noise_schedules.GaussianNoise` or
        :class:`~dpaudit.formal.noise_schedules.LaplaceNoise` (anything with ``sigma`` or
        ``scale``, ``sensitivity`` and ``releases``).
    factor
        The relation's distance factor (2 under replace-one, 1 under add/remove).

    Returns
    -------
    PairCalibration | NotDerivable
        NotDerivable when the draws cannot be traced at all; otherwise the rows, and the whole
        calibration or why it was not computed.
    """
    if not (isinstance(factor, (int, float)) and math.isfinite(factor) and factor > 0):
        raise ValueError(f"factor must be a finite number > 0 (2 under replace-one, 1 under "
                         f"add/remove), got {factor!r}")
    budget = schedule_budget(schedule, float(factor))
    if budget is None:
        raise TypeError(f"schedule must be a Gaussian or Laplace noise schedule (sigma or scale, "
                        f"sensitivity and releases > 0), got {type(schedule).__name__}")
    allowed, family, formula = budget
    traced = _draw_moves(mechanism, data0, data1, seed)
    if isinstance(traced, NotDerivable):
        return traced
    moves, unseen = traced
    sites = _sites(moves, calibration_ratio(schedule, float(factor)))
    law = derive_pair(mechanism, data0, data1, seed=seed)
    if isinstance(law, PairLaw):
        whole: WholeCalibration | NotDerivable = _derived(law, allowed, family, formula)
    else:
        whole = _composed(moves, unseen, allowed, family, formula, law.reason,
                          _earlier_noise(mechanism, data0, seed))
    if isinstance(whole, WholeCalibration) and math.isnan(whole.ratio):
        whole = NotDerivable("what the data moves over the draws came out as NaN, so it cannot "
                             "be held against the calibration")
    return PairCalibration(sites, whole)
