"""Declared laws are hypotheses: each is tested against runs of the code, in moments and in shape.

A user's ``exact=`` law (:mod:`dpaudit.exact`) decides exact epsilons, so a law right in its
first two moments but wrong in its shape certifies a wrong number. Each audited input is run
``N`` times and the law is tested with tests of exact or conservative level at every ``N``,
Bonferroni over the components at the level the claim's family gives it (AUDIT-METHOD section 2,
"evidence taken on trust"): :class:`~dpaudit.formal.exact_laws.LinearGaussian` by chi2 moment
tests and the shape of its whitened and discriminating-direction projections,
:class:`~dpaudit.formal.exact_laws.ProductLaplace` by Gamma scale tests and pooled
probability-integral transforms, :class:`~dpaudit.formal.exact_laws.DiscreteLaw` by support and
exact binomial tests. The shape tests use the Dvoretzky-Kiefer-Wolfowitz-Massart bound (Massart
1990, Ann. Probab. 18(3), Thm 1); each component states the departure it detects with probability
:data:`POWER` (:attr:`LawTest.power`). A non-finite output rejects a continuous law outright.

Each test, why its level holds at every ``N``, and its power: docs/greybox-notes.md#law-tests.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np
from scipy import optimize, special, stats

from dpaudit.release_outputs import is_structured, plain_arrays, release_table
from dpaudit.formal.exact_laws import DiscreteLaw, LinearGaussian, ProductLaplace
from dpaudit.greybox.replay import Mechanism

__all__ = ["LawTest", "Component", "check_declared_law", "POWER"]

#: The power at which detectable departures are stated.
POWER = 0.8


@dataclass(frozen=True)
class Component:
    """One test of a declared law: ``what`` it tests, on input ``input`` (index into the audited
    inputs), its p-value and the declared and observed values it compares."""

    what: str
    input: int
    p_value: float
    declared: float | None = None
    observed: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"what": self.what, "input": self.input, "p_value": self.p_value,
                "declared": self.declared, "observed": self.observed}


@dataclass(frozen=True)
class LawTest:
    """The outcome of testing a declared law: ``rejected`` at ``alpha`` (Bonferroni over the
    ``components``, each at ``alpha / len(components)``), ``runs`` per input, ``law`` (its kind),
    ``power`` (a sentence), ``detail`` (declared vs observed, when rejected)."""

    law: str
    alpha: float
    runs: int
    inputs: int
    components: tuple[Component, ...]
    power: str
    per_coordinate: dict[str, list[float]] = field(default_factory=dict)
    #: How each audited input is named in sentences (default: "input i").
    labels: tuple[str, ...] = ()

    def label(self, i: int) -> str:
        return self.labels[i] if i < len(self.labels) else f"input {i}"

    @property
    def component_alpha(self) -> float:
        return self.alpha / max(1, len(self.components))

    @property
    def rejecting(self) -> list[Component]:
        return [c for c in self.components if c.p_value <= self.component_alpha]

    @property
    def rejected(self) -> bool:
        return bool(self.rejecting)

    def detail(self) -> str:
        """Declared vs observed for the strongest rejection, in one sentence."""
        if not self.rejected:
            return ""
        c = min(self.rejecting, key=lambda x: x.p_value)
        text = f"{c.what} on {self.label(c.input)} (p = {c.p_value:.3g} <= " \
               f"{self.component_alpha:.3g})"
        if c.declared is not None and c.observed is not None:
            text += f": declared {c.declared:.4g}, observed {c.observed:.4g}"
        pc = self.per_coordinate
        if pc.get("declared") and pc.get("observed"):
            k = min(8, len(pc["declared"]))
            text += ("; per-coordinate " + ("variances" if self.law != "ProductLaplace" else
                                            "scales")
                     + f" on {self.label(0)} declared [{', '.join(f'{v:.3g}' for v in pc['declared'][:k])}"
                     + (", ..." if len(pc["declared"]) > k else "") + "], observed ["
                     + ", ".join(f"{v:.3g}" for v in pc["observed"][:k])
                     + (", ..." if len(pc["observed"]) > k else "") + "]")
        return text

    def to_dict(self) -> dict[str, Any]:
        return {"law": self.law, "rejected": self.rejected, "alpha": self.alpha,
                "component_alpha": self.component_alpha, "runs_per_input": self.runs,
                "inputs": self.inputs, "tests": len(self.components), "power": self.power,
                "detail": self.detail(),
                "rejecting": [c.to_dict() for c in self.rejecting[:5]],
                "smallest_p": min((c.p_value for c in self.components), default=None)}


def _two_sided(dist: Any, s: float) -> float:
    return float(min(1.0, 2.0 * min(dist.cdf(s), dist.sf(s))))


def _runs(mechanism: Mechanism, data: Any, n: int, rng: np.random.Generator) -> np.ndarray:
    raw = plain_arrays(mechanism(data, n, rng))
    if is_structured(raw, n):
        return release_table(raw, n).values
    out = np.asarray(raw, dtype=np.float64)
    if out.ndim == 0 or out.shape[0] != n:
        raise ValueError(f"the release returned shape {out.shape} for {n} runs (leading axis n)")
    return out.reshape(n, -1)


def _ratio_band(dist: Any, a: float, scale_of: Callable[[float], Any]) -> tuple[float, float]:
    """Variance (or scale) ratios below / above 1 detected with probability POWER at two-sided
    level ``a``: ``rho`` with ``P(rho * S outside the acceptance band) = POWER``."""
    lo_q, hi_q = dist.ppf(a / 2), dist.ppf(1 - a / 2)
    return float(lo_q / dist.ppf(POWER)), float(hi_q / dist.ppf(1 - POWER))


def _sup_distance(cdf_values: np.ndarray) -> float:
    """Kolmogorov distance ``sup |F_k - F|`` of a sample given as its values ``F(x_j)`` under the
    declared CDF ``F`` (any order, any shape)."""
    u = np.sort(cdf_values.reshape(-1))
    k = u.size
    grid = np.arange(1, k + 1) / k
    return float(max(np.max(grid - u), np.max(u - (grid - 1.0 / k))))


def _dkw_massart_p(k: int, dks: float) -> float:
    """``min(1, 2 exp(-2 k D^2))``: an upper bound on ``P(sup |F_k - F| >= D)`` for ``k`` i.i.d.
    values of a continuous ``F`` at every ``k`` (Massart 1990, Theorem 1;
    docs/greybox-notes.md#law-tests)."""
    return float(min(1.0, 2.0 * math.exp(-2.0 * k * dks * dks)))


def _shape_detectable(k: int, runs: int, a: float) -> float:
    """The sup-distance between the true and the declared CDF that a DKW-Massart test of ``k``
    pooled values from ``runs`` independent runs rejects with probability >= POWER at level ``a``
    (the critical distance plus Hoeffding's deviation of ``runs`` bounded averages)."""
    return (math.sqrt(math.log(2.0 / a) / (2.0 * k))
            + math.sqrt(math.log(1.0 / (1.0 - POWER)) / (2.0 * runs)))


def _mean_detectable(r: int, n: int, a: float) -> float:
    """The whitened distance ``||Sigma^{-1/2} (E X - m)||`` the ``chi2(r)`` mean test detects with
    probability POWER at level ``a``: ``n delta^2`` is the noncentrality of ``ncx2(r)`` whose
    survival function at the ``1 - a`` quantile of ``chi2(r)`` is POWER."""
    crit = float(stats.chi2.isf(a, r))
    hi = 1.0
    while stats.ncx2.sf(crit, r, hi) < POWER:
        hi *= 2.0
    lam = optimize.brentq(lambda lam: float(stats.ncx2.sf(crit, r, lam)) - POWER, 0.0, hi,
                          xtol=1e-10)
    return math.sqrt(lam / n)


def _not_finite(X: np.ndarray, i: int) -> Component | None:
    """A rejecting component when some run's output is not finite (no Gaussian or Laplace law
    puts mass on NaN or infinity), else None."""
    bad = ~np.all(np.isfinite(X), axis=1)
    if bad.any():
        return Component("output not finite (NaN or infinity) in some run", i, 0.0, 0.0,
                         float(bad.mean()))
    return None


def _declared_means(law: Any, inputs: Sequence[Any]) -> list[np.ndarray]:
    means = [np.asarray(law.mean(x), dtype=np.float64).reshape(-1) for x in inputs]
    for i, m in enumerate(means):
        if m.size == 0 or not np.all(np.isfinite(m)):
            raise ValueError(f"the declared law's mean(data) must be a non-empty array of finite "
                             f"numbers; on input {i} it is {m!r}")
    return means


def _gaussian(law: LinearGaussian, samples: list[np.ndarray], inputs: Sequence[Any],
              pairs: Sequence[tuple[int, int]]
              ) -> tuple[list[Component], dict[str, list[float]], int]:
    means = _declared_means(law, inputs)
    p = means[0].size
    cov = (law.sigma ** 2 * np.eye(p) if law.sigma is not None
           else np.asarray(law.covariance, dtype=np.float64))
    if cov.shape != (p, p):
        raise ValueError(f"the declared covariance is {cov.shape[0]} x {cov.shape[0]} but the "
                         f"declared mean has {p} entries")
    w, V = np.linalg.eigh(cov)
    tol = 1e-12 * max(1.0, float(w.max()))
    rng_ = w > tol
    Vr, wr = V[:, rng_], w[rng_]
    pinv = (Vr / wr) @ Vr.T
    comps: list[Component] = []
    per: dict[str, list[float]] = {}
    for i, (X, m) in enumerate(zip(samples, means)):
        if X.shape[1] != p:
            comps.append(Component(f"output size {X.shape[1]} vs declared {p}", i, 0.0))
            continue
        bad = _not_finite(X, i)
        if bad is not None:
            comps.append(bad)
            continue
        n = X.shape[0]
        chi2_n = stats.chi2(n)  # frozen once per input: freezing costs ~2 ms
        R = X - m
        null = R @ V[:, ~rng_] if (~rng_).any() else np.zeros((n, 0))
        if null.size and float(np.abs(null).max()) > 1e-9 * max(1.0, float(np.abs(X).max())):
            comps.append(Component("movement along a direction the declared law gives no noise",
                                   i, 0.0, 0.0, float(np.abs(null).max())))
        W = (R @ Vr) / np.sqrt(wr)
        r = W.shape[1]
        if r:  # rank 0 (no noise at all): the null-space check above is the whole test
            xbar = W.mean(axis=0)
            comps.append(Component("mean (whitened squared distance of the sample mean)", i,
                                   float(stats.chi2(r).sf(n * float(xbar @ xbar))), 0.0,
                                   float(math.sqrt(float(xbar @ xbar)))))
            total = float(np.sum(W * W))
            comps.append(Component("whitened total variance", i,
                                   _two_sided(stats.chi2(n * r), total), float(r), total / n))
        projected = 0
        for a, b in pairs:
            if i not in (a, b):
                continue
            u = pinv @ (means[a] - means[b])
            s2 = float(u @ cov @ u)
            if s2 <= 0:
                continue
            v = R @ u
            comps.append(Component(f"variance along the discriminating direction of pair "
                                   f"({a}, {b})", i,
                                   _two_sided(chi2_n, float(v @ v) / s2), s2,
                                   float(v @ v) / n))
            d_proj = _sup_distance(special.ndtr(v / math.sqrt(s2)))
            comps.append(Component(f"shape along the discriminating direction of pair ({a}, {b}) "
                                   "(sup-distance of the standardised projection's CDF from "
                                   "N(0, 1), DKW-Massart bound)", i,
                                   _dkw_massart_p(n, d_proj), 0.0, d_proj))
            projected += 1
        if r > 1 or (r and not projected):
            d_pool = _sup_distance(special.ndtr(W))
            comps.append(Component(f"shape of the whitened coordinates (sup-distance of the {r} "
                                   "pooled coordinates' CDF from N(0, 1), DKW-Massart bound)", i,
                                   _dkw_massart_p(W.size, d_pool), 0.0, d_pool))
        diag = np.diag(cov)
        obs = np.mean(R * R, axis=0)
        for j in np.flatnonzero(diag > tol):
            comps.append(Component(f"variance of coordinate {j}", i,
                                   _two_sided(chi2_n, float(n * obs[j] / diag[j])),
                                   float(diag[j]), float(obs[j])))
        if i == 0:
            per = {"declared": diag.tolist(), "observed": obs.tolist()}
    return comps, per, int(rng_.sum())


def _laplace(law: ProductLaplace, samples: list[np.ndarray], inputs: Sequence[Any]
             ) -> tuple[list[Component], dict[str, list[float]]]:
    comps: list[Component] = []
    per: dict[str, list[float]] = {}
    for i, (X, m) in enumerate(zip(samples, _declared_means(law, inputs))):
        if X.shape[1] != m.size:
            comps.append(Component(f"output size {X.shape[1]} vs declared {m.size}", i, 0.0))
            continue
        bad = _not_finite(X, i)
        if bad is not None:
            comps.append(bad)
            continue
        n = X.shape[0]
        b = np.broadcast_to(np.asarray(law.scale, dtype=np.float64).reshape(-1), m.shape)
        Y = (X - m) / b
        absmean = np.mean(np.abs(Y), axis=0)
        gamma_n = stats.gamma(n)
        for j in range(m.size):
            comps.append(Component(f"scale of coordinate {j}", i,
                                   _two_sided(gamma_n, float(n * absmean[j])),
                                   float(b[j]), float(absmean[j] * b[j])))
        dks = _sup_distance(stats.laplace.cdf(Y))
        comps.append(Component("distribution (DKW-Massart bound on the pooled transforms)", i,
                               _dkw_massart_p(Y.size, dks), 0.0, dks))
        if i == 0:
            per = {"declared": b.tolist(), "observed": (absmean * b).tolist()}
    return comps, per


def _key(row: np.ndarray) -> Any:
    return row.item() if row.size == 1 else tuple(row.tolist())


def _discrete(law: DiscreteLaw, samples: list[np.ndarray], inputs: Sequence[Any]
              ) -> list[Component]:
    comps: list[Component] = []
    for i, (X, x) in enumerate(zip(samples, inputs)):
        table = law._table(x)
        n = X.shape[0]
        counts: dict[Any, int] = {}
        for row in X:
            key = _key(row)
            counts[key] = counts.get(key, 0) + 1
        outside = [k for k in counts if table.get(k, 0.0) <= 0.0]
        if outside:
            comps.append(Component(f"outcome {outside[0]!r} outside the declared support", i, 0.0,
                                   0.0, counts[outside[0]] / n))
        for key, prob in table.items():
            if prob <= 0.0:
                continue
            c = counts.get(key, 0)
            comps.append(Component(f"probability of outcome {key!r}", i,
                                   float(stats.binomtest(c, n, prob).pvalue), float(prob), c / n))
    return comps


def check_declared_law(law: Any, mechanism: Mechanism, inputs: Sequence[Any], *, alpha: float,
                      runs: int, seed: int, pairs: Sequence[tuple[int, int]] = (),
                      labels: Sequence[str] = ()) -> LawTest:
    """Test ``law`` against ``runs`` runs of ``mechanism`` on each of ``inputs`` at level ``alpha``
    (docs/greybox-notes.md#law-tests); ``pairs`` (indices into ``inputs``) are the neighbouring
    pairs whose discriminating direction a linear-Gaussian law is tested along; ``labels`` name
    the inputs."""
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    if not isinstance(runs, int) or runs < 10:
        raise ValueError(f"runs must be an integer >= 10, got {runs!r}")
    rng = np.random.default_rng(seed)
    samples = [_runs(mechanism, x, runs, rng) for x in inputs]
    per: dict[str, list[float]] = {}
    rank = 0
    if isinstance(law, LinearGaussian):
        comps, per, rank = _gaussian(law, samples, inputs, pairs)
        name = "LinearGaussian"
    elif isinstance(law, ProductLaplace):
        comps, per = _laplace(law, samples, inputs)
        name = "ProductLaplace"
    elif isinstance(law, DiscreteLaw):
        comps, name = _discrete(law, samples, inputs), "DiscreteLaw"
    else:
        raise TypeError(f"cannot test a law of type {type(law).__name__} (LinearGaussian, "
                        "ProductLaplace or DiscreteLaw)")
    a = alpha / max(1, len(comps))
    if name == "LinearGaussian":
        lo, hi = _ratio_band(stats.chi2(runs), a, lambda r: r)
        power = (f"{runs} runs per input; each of the {len(comps)} tests at level {a:.3g} detects "
                 f"a variance ratio (along a pair's direction or of a coordinate) below {lo:.4g} "
                 f"or above {hi:.4g} with probability {POWER:g}")
        if rank:
            power += (f"; the mean test a whitened mean shift above "
                      f"{_mean_detectable(rank, runs, a):.4g}; the shape tests a sup-distance "
                      f"between the true and the declared CDF above "
                      f"{_shape_detectable(runs, runs, a):.4g} (along a pair's direction, or of "
                      "the one whitened coordinate)")
            if rank > 1:
                power += (f" and above {_shape_detectable(runs * rank, runs, a):.4g} for the "
                          f"average CDF of the {rank} pooled whitened coordinates")
            power += f" (probability at least {POWER:g})"
    elif name == "ProductLaplace":
        lo, hi = _ratio_band(stats.gamma(runs), a, lambda r: r)
        width = max((s.shape[1] for s in samples), default=1)
        power = (f"{runs} runs per input; each of the {len(comps)} tests at level {a:.3g} detects "
                 f"a coordinate's Laplace scale off by a factor below {lo:.4g} or above {hi:.4g} "
                 f"with probability {POWER:g}; the distribution test a sup-distance between the "
                 f"true and the declared CDF above {_shape_detectable(runs * width, runs, a):.4g} "
                 f"for the average CDF of the {width} pooled coordinates (probability at least "
                 f"{POWER:g})")
    else:
        z = stats.norm.ppf(1 - a / 2) + stats.norm.ppf(POWER)
        power = (f"{runs} runs per input; each of the {len(comps)} exact binomial tests at level "
                 f"{a:.3g} detects an outcome probability p off by about {z:.3g} sqrt(p (1 - p) / "
                 f"{runs}) with probability {POWER:g} (normal approximation of the power only)")
    return LawTest(name, alpha, runs, len(inputs), tuple(comps), power, per, tuple(labels))
