"""Declared laws are hypotheses: each is tested against runs of the code (issue 34, item 1).

A user's ``exact=`` law (:mod:`dpaudit.exact`) says what the release is; dpaudit computes exact
epsilons from it, so a law that does not describe the code certifies nothing. Each audited input
is run ``N`` times and the declared law is tested with tests that are exact at every ``N`` (no
asymptotics), Bonferroni over the components at the level the claim's family gives this law:

* :class:`~dpaudit.formal.exact_laws.LinearGaussian` ``N(m, Sigma)``, with ``Sigma = V diag(w) V^T``
  and ``W = diag(w)^{-1/2} V^T (X - m)`` on the range of ``Sigma``:
  the sample mean, ``N ||xbar_W||^2 ~ chi2(r)``; the whitened total variance,
  ``sum ||W||^2 ~ chi2(N r)``; the variance along each pair's discriminating direction
  ``u = Sigma^+ (m(D) - m(D'))`` (the direction the exact epsilon rests on),
  ``sum (u^T (X - m))^2 / u^T Sigma u ~ chi2(N)``; and each coordinate's variance,
  ``sum (X_i - m_i)^2 / Sigma_ii ~ chi2(N)`` (two-sided). A run that moves along a direction the
  law gives no noise rejects it outright.
* :class:`~dpaudit.formal.exact_laws.ProductLaplace`: each coordinate's scale,
  ``sum |X_i - m_i| / b_i ~ Gamma(N, 1)`` (two-sided), and the whole law through the pooled
  probability-integral transforms ``F(X_i)`` (i.i.d. uniform under the law), with the
  Dvoretzky-Kiefer-Wolfowitz-Massart bound ``P(sup |F_n - F| > t) <= 2 exp(-2 n t^2)``.
* :class:`~dpaudit.formal.exact_laws.DiscreteLaw`: an outcome outside the declared support rejects
  it outright; each declared outcome's count is tested with an exact two-sided binomial test.

The power of each test is stated (the variance ratio, scale ratio or mean shift it detects with
probability 0.8 at its level), so a law that is *not* rejected says how close it was checked.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np
from scipy import stats

from dpaudit.formal.exact_laws import DiscreteLaw, LinearGaussian, ProductLaplace

__all__ = ["LawTest", "Component", "check_declared_law", "POWER"]

#: The power at which detectable departures are stated.
POWER = 0.8

Mechanism = Callable[[Any, int, np.random.Generator], Any]


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
    out = np.asarray(mechanism(data, n, rng), dtype=np.float64)
    if out.ndim == 0 or out.shape[0] != n:
        raise ValueError(f"the release returned shape {out.shape} for {n} runs (leading axis n)")
    return out.reshape(n, -1)


def _ratio_band(dist: Any, a: float, scale_of: Callable[[float], Any]) -> tuple[float, float]:
    """Variance (or scale) ratios below / above 1 detected with probability POWER at two-sided
    level ``a``: ``rho`` with ``P(rho * S outside the acceptance band) = POWER``."""
    lo_q, hi_q = dist.ppf(a / 2), dist.ppf(1 - a / 2)
    return float(lo_q / dist.ppf(POWER)), float(hi_q / dist.ppf(1 - POWER))


def _gaussian(law: LinearGaussian, samples: list[np.ndarray], inputs: Sequence[Any],
              pairs: Sequence[tuple[int, int]]) -> tuple[list[Component], dict[str, list[float]]]:
    means = [np.asarray(law.mean(x), dtype=np.float64).reshape(-1) for x in inputs]
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
        n = X.shape[0]
        R = X - m
        null = R @ V[:, ~rng_] if (~rng_).any() else np.zeros((n, 0))
        if null.size and float(np.abs(null).max()) > 1e-9 * max(1.0, float(np.abs(X).max())):
            comps.append(Component("movement along a direction the declared law gives no noise",
                                   i, 0.0, 0.0, float(np.abs(null).max())))
        W = (R @ Vr) / np.sqrt(wr)
        r = W.shape[1]
        xbar = W.mean(axis=0)
        comps.append(Component("mean (whitened squared distance of the sample mean)", i,
                               float(stats.chi2(r).sf(n * float(xbar @ xbar))), 0.0,
                               float(math.sqrt(float(xbar @ xbar)))))
        total = float(np.sum(W * W))
        comps.append(Component("whitened total variance", i, _two_sided(stats.chi2(n * r), total),
                               float(r), total / n))
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
                                   _two_sided(stats.chi2(n), float(v @ v) / s2), s2,
                                   float(v @ v) / n))
        diag = np.diag(cov)
        obs = np.mean(R * R, axis=0)
        for j in np.flatnonzero(diag > tol):
            comps.append(Component(f"variance of coordinate {j}", i,
                                   _two_sided(stats.chi2(n), float(n * obs[j] / diag[j])),
                                   float(diag[j]), float(obs[j])))
        if i == 0:
            per = {"declared": diag.tolist(), "observed": obs.tolist()}
    return comps, per


def _laplace(law: ProductLaplace, samples: list[np.ndarray], inputs: Sequence[Any]
             ) -> tuple[list[Component], dict[str, list[float]]]:
    comps: list[Component] = []
    per: dict[str, list[float]] = {}
    for i, (X, x) in enumerate(zip(samples, inputs)):
        m = np.asarray(law.mean(x), dtype=np.float64).reshape(-1)
        if X.shape[1] != m.size:
            comps.append(Component(f"output size {X.shape[1]} vs declared {m.size}", i, 0.0))
            continue
        n = X.shape[0]
        b = np.broadcast_to(np.asarray(law.scale, dtype=np.float64).reshape(-1), m.shape)
        Y = (X - m) / b
        absmean = np.mean(np.abs(Y), axis=0)
        for j in range(m.size):
            comps.append(Component(f"scale of coordinate {j}", i,
                                   _two_sided(stats.gamma(n), float(n * absmean[j])),
                                   float(b[j]), float(absmean[j] * b[j])))
        u = np.sort(stats.laplace.cdf(Y).reshape(-1))
        k = u.size
        grid = np.arange(1, k + 1) / k
        dks = float(max(np.max(grid - u), np.max(u - (grid - 1.0 / k))))
        comps.append(Component("distribution (DKW-Massart bound on the pooled transforms)", i,
                               float(min(1.0, 2.0 * math.exp(-2.0 * k * dks * dks))), 0.0, dks))
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
    (module docstring); ``pairs`` (indices into ``inputs``) are the neighbouring pairs whose
    discriminating direction a linear-Gaussian law is tested along; ``labels`` name the inputs."""
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    if not isinstance(runs, int) or runs < 10:
        raise ValueError(f"runs must be an integer >= 10, got {runs!r}")
    rng = np.random.default_rng(seed)
    samples = [_runs(mechanism, x, runs, rng) for x in inputs]
    per: dict[str, list[float]] = {}
    if isinstance(law, LinearGaussian):
        comps, per = _gaussian(law, samples, inputs, pairs)
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
    elif name == "ProductLaplace":
        lo, hi = _ratio_band(stats.gamma(runs), a, lambda r: r)
        power = (f"{runs} runs per input; each of the {len(comps)} tests at level {a:.3g} detects "
                 f"a coordinate's Laplace scale off by a factor below {lo:.4g} or above {hi:.4g} "
                 f"with probability {POWER:g}")
    else:
        z = stats.norm.ppf(1 - a / 2) + stats.norm.ppf(POWER)
        power = (f"{runs} runs per input; each of the {len(comps)} exact binomial tests at level "
                 f"{a:.3g} detects an outcome probability p off by about {z:.3g} sqrt(p (1 - p) / "
                 f"{runs}) with probability {POWER:g} (normal approximation of the power only)")
    return LawTest(name, alpha, runs, len(inputs), tuple(comps), power, per, tuple(labels))
