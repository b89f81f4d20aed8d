"""dpcrpy 1.0's continual-release mechanisms, audited as claims with dpaudit's public API only.

Load with ``dpaudit audit dpcrpy/binmech --plugin examples/libraries/dpcrpy_claims.py``
(``make library-audits`` runs every library claim). Needs ``dpcrpy`` (the ``libraries`` extra).

The release (dpcrpy's own code, nothing re-implemented): one block of a continual-release
mechanism, ``dpcrpy.dpCrFw(lambda i: Mech(k, GaussNoiMech(epsilon, delta)))``, fed the stream
``x_1..x_T`` one item at a time with ``dpRelease``; the release is the ``T`` noisy prefix sums it
returns. ``GaussNoiMech`` calibrates its unit noise ``sigma0`` with the analytic Gaussian mechanism
(Balle & Wang 2018, through dpcrpy's bundled autodp ``ana_gaussian_calibrator``) and
``DpcrMech.setNoiMech`` multiplies it by the mechanism's stated l2 sensitivity
(``getL2Sens``: ``sqrt(T)`` for ``SimpleMech``, ``sqrt(2)`` for ``TwoLevel``, ``sqrt(k + 1)`` for
``BinMech`` and ``Honaker``, ``1`` for the weighted ``BCRG`` and ``FDA``). Its noise comes from
numpy's global RNG (``np.random.normal`` in ``dpcrpy/framework/noiMech.py``); the glue only seeds
it from dpaudit's rng, as a user seeds it, so dpaudit derives the release's law from the code (the
draw source for numpy's global functions) and verifies it on the code's runs.

The claim: what dpcrpy states, ``(epsilon, delta)``-DP for each item (the ``epsilon`` and
``delta`` passed to ``GaussNoiMech``; the README's "each item" privacy of continual release),
under add/remove of one item of weight at most 1: the pair is the stream with a 1 at step ``t``
against the stream with a 0 there (zero-out neighbours of a fixed-length stream, so
``neighbour_check=False``), at the first, middle and last step.

dpaudit's accountant is its own schedule of how many noisy values one item enters (never dpcrpy's
sensitivity where dpaudit has one): ``GaussianNoise(sigma, 1, T)`` for ``SimpleMech`` (item ``t``
enters the ``T - t + 1`` partial sums from ``t`` on, each with fresh noise), ``GaussianNoise(sigma,
1, 2)`` for ``TwoLevel`` (one leaf, one block sum), ``gaussian_tree(sigma, 1, T)`` for ``BinMech``
and ``Honaker`` (the ``k + 1`` dyadic nodes on the item's path; Honaker's weighting is a
post-processing of those nodes). ``BCRG`` and ``FDA`` weight each node by a coefficient so that the
weighted sensitivity is 1: no dpaudit schedule states that weighting, so their accountant is
``GaussianNoise(sigma, getL2Sens(), 1)`` labelled as dpcrpy's own sensitivity, and the derived law
(exact, verified on every run) and the whole-calibration check carry the audit.
"""

from __future__ import annotations

import functools

import numpy as np

import dpaudit
from dpaudit import Claim, Source

EPSILON = 1.0
DELTA = 1e-5
SOURCE_VERSION = "dpcrpy 1.0.0"

#: claim name -> (dpcrpy class name, order k, block length T)
MECHANISMS = {
    "simplemech": ("SimpleMech", 8, 8),
    "twolevel": ("TwoLevel", 3, 9),
    "binmech": ("BinMech", 4, 16),
    "honaker": ("Honaker", 4, 16),
    "bcrg": ("BCRG", 4, 15),
    "fda": ("FDA", 4, 15),
}


@functools.lru_cache(maxsize=None)
def noise_mechanism(epsilon: float, delta: float):
    """dpcrpy's ``GaussNoiMech(epsilon, delta)``: its calibration runs once per (epsilon, delta)."""
    import dpcrpy

    return dpcrpy.noiMech.GaussNoiMech(epsilon=epsilon, delta=delta)


def block(name: str, epsilon: float = EPSILON, delta: float = DELTA):
    """A fresh dpcrpy block of the named mechanism with its Gaussian noise attached."""
    import dpcrpy

    cls, k, _ = MECHANISMS[name]
    return getattr(dpcrpy, cls)(k, noise_mechanism(epsilon, delta))


def node_sigma(name: str, epsilon: float = EPSILON, delta: float = DELTA) -> float:
    """The standard deviation dpcrpy draws each node's noise with (``sens * sigma0``)."""
    return float(block(name, epsilon, delta).noiMech.sigma)


def release(name: str):
    def params_release(params):
        epsilon, delta = params["epsilon"], params["delta"]

        def mechanism(data, runs, rng):
            import dpcrpy

            np.random.seed(int(rng.integers(2**31)))  # a user seeds numpy's global RNG
            xs = [float(v) for v in np.asarray(data, dtype=np.float64)]
            out = np.empty((runs, len(xs)))
            for r in range(runs):
                fw = dpcrpy.dpCrFw(lambda i: block(name, epsilon, delta))
                for t, x in enumerate(xs):
                    res, _noisy_increment, _mse = fw.dpRelease(x)
                    out[r, t] = res
            return out
        mechanism.__qualname__ = f"dpcrpy_{name}(epsilon={epsilon:g}, delta={delta:g})"
        return mechanism
    return params_release


def pairs(name: str):
    T = MECHANISMS[name][2]

    def params_pairs(params):
        out = []
        for t in sorted({0, T // 2, T - 1}):
            x1 = np.zeros(T)
            x1[t] = 1.0
            out.append((x1, np.zeros(T)))
        return out
    return params_pairs


def accountant(name: str):
    cls, k, T = MECHANISMS[name]

    def params_accountant(params):
        sigma = node_sigma(name, params["epsilon"], params["delta"])
        if cls == "SimpleMech":
            return dpaudit.noise.GaussianNoise(sigma, 1.0, T)
        if cls == "TwoLevel":
            return dpaudit.noise.GaussianNoise(sigma, 1.0, 2)
        if cls in ("BinMech", "Honaker"):
            return dpaudit.noise.gaussian_tree(sigma, 1.0, T)
        # BCRG, FDA: dpcrpy's own weighted sensitivity (getL2Sens() == 1).
        return dpaudit.noise.GaussianNoise(sigma, float(block(name).getL2Sens()), 1)
    return params_accountant


def _claim(name: str) -> Claim:
    cls, k, T = MECHANISMS[name]
    module = {"SimpleMech": "naiveMethods/simpleMech.py", "TwoLevel": "naiveMethods/twoLevel.py",
              "BinMech": "treeMethods/binMech.py", "Honaker": "treeMethods/honaker.py",
              "BCRG": "bitMethods/bcrg.py", "FDA": "bitMethods/fda.py"}[cls]
    weighted = cls in ("BCRG", "FDA")
    return Claim(
        id=f"dpcrpy/{name}",
        statement=f"dpcrpy's {cls}({k}) continual release of T = {T} prefix sums with "
                  f"GaussNoiMech(epsilon, delta) is (epsilon, delta)-DP for each item",
        source=Source(title=f"dpcrpy: {cls} with framework.noiMech.GaussNoiMech "
                            "(noise sigma0 from the analytic Gaussian calibrator, scaled by "
                            "the mechanism's getL2Sens)",
                      kind="library documentation", version=SOURCE_VERSION,
                      location=f"dpcrpy/{module}, dpcrpy/framework/noiMech.py, "
                               "dpcrpy/framework/dpcrMech.py",
                      quote="GaussNoiMech(epsilon, delta): Gaussian Mechanism with L2 "
                            "Sensitivity satisfying (epsilon, delta)-DP"),
        claimed=lambda p: (p["epsilon"], p["delta"]),
        neighbours="add-remove",
        grid=[{"epsilon": EPSILON, "delta": DELTA}],
        release=release(name),
        pairs=pairs(name),
        # Zero-out neighbours: an item absent is a 0 at its step of the fixed-length stream.
        neighbour_check=False,
        accountant=accountant(name),
        parameter_range={"epsilon": "1", "delta": "1e-5", "block": f"k = {k}, T = {T}",
                         "items": "weight in [0, 1]"},
        calibration="node noise sigma = getL2Sens() x sigma0(epsilon, delta), sigma0 from "
                    "dpcrpy's analytic Gaussian calibrator",
        formula="(epsilon, delta)",
        notes=("Weighted nodes: the accountant is dpcrpy's own l2 sensitivity (1), labelled as "
               "such; the law derived from the code decides. " if weighted else "")
              + "Noise from numpy's global RNG, seeded by the glue from dpaudit's rng.",
        kind="mechanism",
    )


for _name in MECHANISMS:
    dpaudit.register_claim(_claim(_name))
