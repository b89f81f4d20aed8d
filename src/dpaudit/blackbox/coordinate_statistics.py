"""Location-shift statistics that share information across coordinates.

The location-shift statistic of :mod:`dpaudit.blackbox.fitters_location` estimates each
coordinate's shift on its own, which some vector outputs defeat (``benchmarks/oracle_ratio.py``
measures them). :class:`PooledShiftFitter` pools many small shifts: a positive-part James-Stein
estimate shrunk toward the precision-weighted mean (Efron & Morris, JASA 1973, eq. 1.6) and a
weighted sign-test event whose cut is fixed on the fit split (:func:`sign_law`,
:func:`best_sign_cut`; median variances by the sparsity estimate, Siddiqui 1960, Bofinger 1975).
:class:`WhitenedShiftFitter` fits the same statistics on Cholesky-whitened outputs when the
coordinates are significantly correlated (prefix sums). Both also emit the Laplace-form event with
its cut chosen from per-coordinate histograms (:class:`ScoreEventScorer`) for rare events of a
large shift. Like every member of the family (:mod:`dpaudit.blackbox.learned_statistics`) the
fitters see the probe and fit split only: pooling and whitening change which statistic is
estimated, never how the chosen event is tested.

The three kinds of output and why each statistic fits them:
docs/blackbox-notes.md#coordinate-statistics.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from dpaudit.blackbox.fitters_location import LocationShiftFitter, LocationShiftScorer
from dpaudit.blackbox.statistic_protocol import Fitter, Scorer
from dpaudit.blackbox.statistics import flatten_outputs

__all__ = ["PooledShiftFitter", "WhitenedShiftFitter", "WhitenedScorer", "SignEventScorer",
           "ScoreEventScorer",
           "pool_shifts", "sign_law", "best_sign_cut", "POOL_MIN_COORDINATES"]

#: Pooling needs at least this many parametric coordinates (James-Stein dominates the separate
#: estimates from 4 coordinates on, when shrinking toward an estimated mean).
POOL_MIN_COORDINATES = 4
#: Half-width ``h`` of the quantile window of the sparsity estimate of a median's variance.
SPARSITY_HALF_WIDTH = 0.05
#: Whitening is offered only if some probe correlation exceeds this many standard errors
#: ``1 / sqrt(n)`` (Bonferroni-sized for up to ~10^4 coordinate pairs at level 10^-6).
WHITEN_MIN_Z = 6.0


def _quantile(h: np.ndarray, edges: np.ndarray, q: float) -> float:
    """The ``q`` quantile read off a grid histogram (bin 0 below the grid, last bin above), with
    linear interpolation inside the bin (the rule of ``LocationShiftFitter._median``)."""
    total = h.sum()
    cum = np.cumsum(h)
    k = int(np.searchsorted(cum, q * total))
    if k == 0:
        return float(edges[0])
    if k >= h.size - 1:
        return float(edges[-1])
    frac = (q * total - cum[k - 1]) / h[k] if h[k] > 0 else 0.5
    return float(edges[k - 1] + frac * (edges[k] - edges[k - 1]))


def _median_variance(h: np.ndarray, edges: np.ndarray, half: float = SPARSITY_HALF_WIDTH) -> float:
    """Sparsity estimate of the variance of the median of the ``h.sum()`` values histogrammed."""
    n = float(h.sum())
    spread = _quantile(h, edges, 0.5 + half) - _quantile(h, edges, 0.5 - half)
    return (spread / (2 * half)) ** 2 / (4 * n)


def pool_shifts(shifts: np.ndarray, variances: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(James-Stein estimate, fully pooled estimate) of per-coordinate ``shifts`` observed with
    independent errors of ``variances``: both toward the precision-weighted mean ``m``; the
    James-Stein factor is ``max(0, 1 - (k - 3) / S)`` with ``S = sum (shift - m)^2 / variance``
    (``k`` coordinates, 3 = 2 + the estimated mean)."""
    d = np.asarray(shifts, dtype=np.float64)
    v = np.asarray(variances, dtype=np.float64)
    if d.shape != v.shape or d.ndim != 1:
        raise ValueError("shifts and variances must be 1-D arrays of the same length")
    if d.size < POOL_MIN_COORDINATES or not np.all(v > 0) or not np.all(np.isfinite(v)):
        raise ValueError(f"pool_shifts needs >= {POOL_MIN_COORDINATES} coordinates with positive "
                         "finite variances")
    w = 1.0 / v
    m = float(np.sum(w * d) / np.sum(w))
    s = float(np.sum(w * (d - m) ** 2))
    lam = max(0.0, 1.0 - (d.size - 3) / s) if s > 0 else 0.0
    return m + lam * (d - m), np.full(d.size, m)


#: Weights of the pooled sign test are rounded to multiples of ``1 / SIGN_WEIGHT_STEPS`` of the
#: largest, so that its law is a short convolution of integer lattices.
SIGN_WEIGHT_STEPS = 8
#: The sign event's threshold is chosen for a test split this many times the fit split (the
#: engine's default: 10% of the runs for training, half of them for fitting, so 90 / 5 = 18),
#: at one-sided level :data:`SIGN_MODEL_ALPHA` per rate. Only power depends on these.
SIGN_TEST_PER_FIT = 18
SIGN_MODEL_ALPHA = 0.05


@dataclass(frozen=True)
class SignEventScorer(Scorer):
    """The indicator (1.0 or 0.0) of ``sum_j w_j sign(x_j - c_j) >= k`` (``upper``) or ``<= k``:
    one event of the weighted sign test, the limit of the Laplace location-shift log likelihood
    ratio ``(|x - m0| - |x - m1|) / b`` for shifts small against the scale."""

    center: np.ndarray
    weight: np.ndarray
    cut: float
    upper: bool
    name: str = "pooled sign-test event"

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        x = flatten_outputs(outputs).astype(np.float64, copy=False)
        s = np.sign(x - self.center) @ self.weight
        return (s >= self.cut if self.upper else s <= self.cut).astype(np.float64)

    def to_dict(self) -> dict[str, Any]:
        rel = ">=" if self.upper else "<="
        return {"name": self.name, "dimension": int(self.center.size),
                "fingerprint": [float(v) for v in np.r_[self.center, self.weight, self.cut]],
                "description": (f"{self.name}: 1 if sum over {self.center.size} coordinates of "
                                f"w_j sign(x_j - c_j) {rel} {self.cut:g}, else 0; c_j the midpoint "
                                "of the two inputs' fit-split medians, w_j the pooled shift over "
                                f"the scale (rounded to 1/{SIGN_WEIGHT_STEPS} of the largest), the "
                                "cut the best event of the fit split's model of the sign law "
                                "(independent coordinates)")}


def _cdf(h: np.ndarray, edges: np.ndarray, x: float) -> float:
    """Fraction of the histogrammed values below ``x`` (bin 0 below the grid, last bin above;
    linear inside a bin)."""
    total = float(h.sum())
    if x <= edges[0]:
        return float(h[0]) / total
    if x >= edges[-1]:
        return float(total - h[-1]) / total
    k = int(np.searchsorted(edges, x, side="right"))  # edges[k-1] <= x < edges[k]: bin k
    frac = (x - edges[k - 1]) / (edges[k] - edges[k - 1])
    return float(h[:k].sum() + frac * h[k]) / total


def sign_law(units: np.ndarray, p_up: np.ndarray) -> tuple[np.ndarray, int]:
    """Law of ``sum_j units_j s_j`` for independent ``s_j = +1`` with probability ``p_up[j]``
    (else ``-1``) and integer ``units``: (probabilities of the values ``lo, lo + 1, ...``, ``lo``)."""
    law, lo = np.ones(1), 0
    for u, p in zip(np.asarray(units, dtype=np.int64), np.asarray(p_up, dtype=np.float64)):
        a = abs(int(u))
        if a == 0:
            continue
        step = np.zeros(2 * a + 1)
        step[0], step[-1] = (1 - p, p) if u > 0 else (p, 1 - p)
        law, lo = np.convolve(law, step), lo - a
    return law, lo


def best_sign_cut(law0: np.ndarray, law1: np.ndarray, n_test: int,
                  alpha: float = SIGN_MODEL_ALPHA) -> tuple[int, bool, float]:
    """The threshold event of a lattice score (laws on the same lattice, index = value - lo) with
    the highest plug-in bound ``ln((p - z sd_p) / (q + z sd_q))`` at ``n_test`` runs per input, either
    direction: (index ``i``, ``upper`` (event ``>= i``) or not (``<= i``), the bound)."""
    from scipy.special import ndtri
    z = float(-ndtri(alpha))
    best = (0, True, -math.inf)
    for upper in (True, False):
        c0 = np.cumsum(law0[::-1])[::-1] if upper else np.cumsum(law0)
        c1 = np.cumsum(law1[::-1])[::-1] if upper else np.cumsum(law1)
        for num, den in ((c0, c1), (c1, c0)):
            lo = num - z * np.sqrt(np.clip(num * (1 - num), 0, None) / n_test)
            hi = den + z * np.sqrt(np.clip(den * (1 - den), 0, None) / n_test)
            with np.errstate(divide="ignore", invalid="ignore"):
                v = np.where((lo > 0) & (hi > 0), np.log(np.maximum(lo, 1e-300) / hi), -np.inf)
            i = int(np.argmax(v))
            if v[i] > best[2]:
                best = (i, upper, float(v[i]))
    return best


def _sign_scorer(fitter: LocationShiftFitter, base: LocationShiftScorer, est: np.ndarray,
                 par: np.ndarray, label: str) -> SignEventScorer | None:
    """The best event of the weighted sign test with the pooled shifts ``est``, its cut chosen on
    the fit split's histograms (none if a coordinate has atoms or no weight survives rounding)."""
    if par.size != base.parametric.size or any(a.size for a in base.atoms):
        return None
    v = est / base.scale[par]
    top = float(np.max(np.abs(v)))
    if not top > 0:
        return None
    units = np.round(SIGN_WEIGHT_STEPS * v / top).astype(np.int64)
    center = 0.5 * (base.m0 + base.m1)
    up = np.array([[1.0 - _cdf(fitter._hist[j][k], fitter._edges[j], center[j]) for j in par]
                   for k in (0, 1)])
    n_fit = int(min(fitter._hist[par[0]][0].sum(), fitter._hist[par[0]][1].sum()))
    (law0, lo), (law1, _) = sign_law(units, up[0]), sign_law(units, up[1])
    i, upper, value = best_sign_cut(law0, law1, SIGN_TEST_PER_FIT * n_fit)
    if not math.isfinite(value):
        return None
    return SignEventScorer(center, units / SIGN_WEIGHT_STEPS, (i + lo) / SIGN_WEIGHT_STEPS,
                           upper, name=f"sign-test event ({label})")


#: Lattice steps per largest coordinate term of the Laplace-form event's law.
EVENT_LATTICE_STEPS = 64


@dataclass(frozen=True)
class ScoreEventScorer(Scorer):
    """The indicator (1.0 or 0.0) of ``inner(x) >= cut`` (``upper``) or ``<= cut``: one event of a
    location-shift statistic, its cut chosen on the fit split (:func:`_laplace_form_event`)."""

    inner: LocationShiftScorer
    cut: float
    upper: bool

    @property
    def name(self) -> str:
        return f"{self.inner.name}, one event cut on the fit split's product law"

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        s = self.inner(outputs)
        return (s >= self.cut if self.upper else s <= self.cut).astype(np.float64)

    def to_dict(self) -> dict[str, Any]:
        d = dict(self.inner.to_dict())
        d["name"] = self.name
        d["fingerprint"] = list(d.get("fingerprint", [])) + [float(self.cut), float(self.upper)]
        d["description"] = (f"1 if the score {'>=' if self.upper else '<='} {self.cut:g}, else "
                            "0, the cut the best event of the law the fit split's per-coordinate "
                            "histograms give the score under independence; the score: "
                            + str(d.get("description", "")))
        return d


def _laplace_form_event(fitter: LocationShiftFitter, base: LocationShiftScorer
                        ) -> ScoreEventScorer | None:
    """The best event ``{score >= cut}`` or ``{score <= cut}`` of the Laplace-form statistic
    ``base`` (no atoms), its cut chosen from the law of the score that the fit split's
    per-coordinate histograms give under independence: each term
    ``(2 clip(x, lo, hi) - lo - hi) / b`` takes its two end values with the histogram's mass
    beyond ``lo`` and ``hi`` and the values in between bin by bin; the terms are rounded onto a
    lattice of :data:`EVENT_LATTICE_STEPS` steps per largest end value and convolved. Why:
    the best event of a large shift in many coordinates (the counter with fresh noise in
    ``benchmarks/oracle_ratio.py``: every coordinate at its upper end, probability 0.02 on one
    input and 10^-5 on the other) has about one run of the other input on the selection split,
    so no selection-split ranking can value it; the product of per-coordinate rates can."""
    if any(a.size for a in base.atoms) or not np.all(base.parametric):
        return None
    lo, hi = np.minimum(base.m0, base.m1), np.maximum(base.m0, base.m1)
    w = np.sign(base.m1 - base.m0) / base.scale
    top = float(np.max(np.abs(w * (hi - lo))))
    if not top > 0:
        return None
    step = top / EVENT_LATTICE_STEPS
    laws, lo_idx = [np.ones(1), np.ones(1)], 0
    for j in range(base.m0.size):
        h, edges = fitter._hist[j], fitter._edges[j]
        if h is None:
            return None
        inside = (edges[:-1] < hi[j]) & (edges[1:] > lo[j])
        mids = np.clip(0.5 * (edges[:-1] + edges[1:]), lo[j], hi[j])
        vals = np.r_[lo[j], mids[inside], hi[j]]
        idx = np.round((2 * vals - lo[j] - hi[j]) * w[j] / step).astype(np.int64)
        base_i = int(idx.min())
        for k in (0, 1):
            total = float(h[k].sum())
            below = _cdf(h[k], edges, lo[j])
            above = 1.0 - _cdf(h[k], edges, hi[j])
            mid_mass = h[k][1:-1][inside].astype(np.float64) / total
            mass = np.r_[below, mid_mass, above]
            mass = np.clip(mass, 0.0, None)
            mass /= mass.sum()
            laws[k] = np.convolve(laws[k], np.bincount(idx - base_i, weights=mass))
        lo_idx += base_i
    n_fit = int(min(fitter._hist[0][0].sum(), fitter._hist[0][1].sum()))
    i, upper, value = best_sign_cut(laws[0], laws[1], SIGN_TEST_PER_FIT * n_fit)
    if not math.isfinite(value):
        return None
    # the lattice value i + lo_idx is a rounded score; cut half a step inside the event
    cut = (i + lo_idx - 0.5) * step if upper else (i + lo_idx + 0.5) * step
    return ScoreEventScorer(base, float(cut), upper)


def _pooled_scorers(fitter: LocationShiftFitter, base: LocationShiftScorer, prefix: str,
                    laplace_form: bool) -> list[Any]:
    """The best weighted sign-test event of ``base``'s parametric coordinates with their shifts
    pooled (James-Stein, then all equal, the second only where it differs from the first), and
    with ``laplace_form`` also ``base`` with its shifts James-Stein pooled (each coordinate
    keeps its midpoint ``(m0 + m1) / 2``). Empty if fewer than :data:`POOL_MIN_COORDINATES`
    parametric coordinates or a median's variance is not positive.

    Few candidates on purpose: the engine compares the family's statistics by the bound their
    best selection-split event projects, and the largest of many noisy projections is biased up
    (on the tree aggregation of ``benchmarks/oracle_ratio.py`` at 10^6 runs, seed 1, offering
    every pooled form made a lucky whitened common-shift threshold win: test bound 0.880
    instead of 0.979). A sign-test event's threshold was fixed on the fit split, so its
    projection is not a maximum over thresholds."""
    par = np.flatnonzero(base.parametric)
    if par.size < POOL_MIN_COORDINATES:
        return []
    var = np.empty(par.size)
    for i, j in enumerate(par):
        h, edges = fitter._hist[j], fitter._edges[j]
        var[i] = _median_variance(h[0], edges) + _median_variance(h[1], edges)
    if not np.all(np.isfinite(var)) or not np.all(var > 0):
        return []
    shift = base.m1[par] - base.m0[par]
    mid = 0.5 * (base.m0[par] + base.m1[par])
    js, common = pool_shifts(shift, var)
    out: list[Any] = []
    if laplace_form and np.any(js != 0):
        m0, m1 = base.m0.copy(), base.m1.copy()
        m0[par], m1[par] = mid - js / 2, mid + js / 2
        out.append(replace(base, m0=m0, m1=m1, name=f"{prefix}location-shift log likelihood "
                                                    "ratio (James-Stein pooled shifts)"))
    signs = [_sign_scorer(fitter, base, js, par, prefix + "James-Stein pooled shifts")]
    if not np.allclose(js, common, rtol=1e-12, atol=0.0):
        signs.append(_sign_scorer(fitter, base, common, par, prefix + "one common shift"))
    for sc in signs:
        if sc is not None and not any(isinstance(o, SignEventScorer)
                                      and np.array_equal(o.weight, sc.weight)
                                      and o.cut == sc.cut and o.upper == sc.upper
                                      for o in out):
            out.append(sc)
    return out


@dataclass
class PooledShiftFitter(Fitter):
    """The weighted sign test with its shifts pooled across coordinates (module text).

    Streams the fit split into a :class:`LocationShiftFitter`; ``finish`` emits the Laplace-form
    statistic with James-Stein pooled shifts, the best event of the sign test with those shifts
    and, where different, with one common shift, and the unpooled Laplace-form statistic's best
    event cut on the fit split's product law (the only one below 4 coordinates). With ``feeds=False`` the ``inner`` fitter is another family member's
    (the ``location-shift`` statistic's), which streams the same fit split into it: its medians
    are read, not counted twice."""

    inner: LocationShiftFitter = field(default_factory=LocationShiftFitter)
    feeds: bool = True

    def prepare(self, probe0: np.ndarray, probe1: np.ndarray) -> None:
        if self.feeds:
            self.inner.prepare(probe0, probe1)

    def update(self, outputs: np.ndarray, label: int) -> None:
        if self.feeds:
            self.inner.update(outputs, label)

    def finish(self) -> list[Any]:
        base = self.inner.finish()[0]
        event = _laplace_form_event(self.inner, base)
        return _pooled_scorers(self.inner, base, "", laplace_form=True) + (
            [] if event is None else [event])


@dataclass(frozen=True)
class WhitenedScorer(Scorer):
    """``inner(z)`` with ``z = (y - center) @ transform`` (``transform = L^{-T}``)."""

    center: np.ndarray
    transform: np.ndarray
    inner: Any

    @property
    def name(self) -> str:
        return self.inner.name

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        x = flatten_outputs(outputs).astype(np.float64, copy=False)
        return self.inner((x - self.center) @ self.transform)

    def to_dict(self) -> dict[str, Any]:
        d = dict(self.inner.to_dict())
        d["fingerprint"] = list(d.get("fingerprint", [])) + [
            float(v) for v in np.r_[self.center, self.transform.ravel()]]
        d["description"] = ("on the whitened output z = L^-1 (y - mean), L the Cholesky factor "
                            "of the probe runs' within-input covariance: "
                            + str(d.get("description", "")))
        return d


@dataclass
class WhitenedShiftFitter(Fitter):
    """The location-shift statistic (plain and pooled) on Cholesky-whitened outputs (module
    text). ``prepare`` decides from the probes whether whitening applies; if not, ``update`` is a
    no-op and ``finish`` emits nothing."""

    inner: LocationShiftFitter = field(default_factory=LocationShiftFitter)
    _center: np.ndarray | None = None
    _transform: np.ndarray | None = None

    def prepare(self, probe0: np.ndarray, probe1: np.ndarray) -> None:
        p = [flatten_outputs(q).astype(np.float64) for q in (probe0, probe1)]
        self._center = self._transform = None
        d = p[0].shape[1]
        n = min(p[0].shape[0], p[1].shape[0])
        if d < 2 or n < 8 * d:
            return
        for q in p:
            srt = np.sort(q, axis=0)
            if np.any(srt[1:] == srt[:-1]) or not np.all(np.isfinite(q)):
                return  # atoms or non-finite values: whitening would smear them
        cov = 0.5 * (np.cov(p[0], rowvar=False) + np.cov(p[1], rowvar=False))
        if not np.all(np.isfinite(cov)):
            return  # outputs near 1e300 overflow (the callers silence the warning): no whitening
        sd = np.sqrt(np.diag(cov))
        if not np.all(sd > 0):
            return
        corr = cov / np.outer(sd, sd)
        off = np.abs(corr[~np.eye(d, dtype=bool)])
        if off.max() * math.sqrt(n) < WHITEN_MIN_Z:
            return
        try:
            chol = np.linalg.cholesky(cov)
        except np.linalg.LinAlgError:
            return
        self._center = 0.5 * (p[0].mean(axis=0) + p[1].mean(axis=0))
        self._transform = np.linalg.inv(chol).T
        self.inner.prepare(self._whiten(p[0]), self._whiten(p[1]))

    def _whiten(self, x: np.ndarray) -> np.ndarray:
        return (flatten_outputs(x).astype(np.float64, copy=False) - self._center) @ self._transform

    def update(self, outputs: np.ndarray, label: int) -> None:
        if self._transform is not None:
            self.inner.update(self._whiten(outputs), label)

    def finish(self) -> list[WhitenedScorer]:
        if self._transform is None:
            return []
        base = self.inner.finish()[0]
        base = replace(base, name="whitened location-shift log likelihood ratio")
        event = _laplace_form_event(self.inner, base)
        out = [base] + _pooled_scorers(self.inner, base, "whitened ", laplace_form=True) + (
            [] if event is None else [event])
        return [WhitenedScorer(self._center, self._transform, s) for s in out]
