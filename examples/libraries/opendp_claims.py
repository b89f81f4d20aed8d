"""OpenDP's Laplace and Gaussian measurements, audited as claims with dpaudit's public API only.

Load with ``dpaudit audit opendp/laplace-count --plugin examples/libraries/opendp_claims.py``
(``make library-audits`` runs every library claim). Needs ``opendp`` (the ``libraries`` extra).

The release: OpenDP's own measurement, ``make_count >> then_laplace(scale)`` (and
``>> then_gaussian(scale)``) over a vector of integers with the symmetric distance, i.e. a record
added or removed (OpenDP's ``symmetric_distance``, ``d_in = 1``). On an integer count both
samplers are OpenDP's exact discrete samplers: the discrete Laplace ``P[k] ~ exp(-|k - c| /
scale)`` and the discrete Gaussian ``P[k] ~ exp(-(k - c)^2 / (2 scale^2))`` (Canonne, Kamath &
Steinke 2020), so dpaudit's exact value comes from their probability tables
(:class:`dpaudit.exact.DiscreteLaw`, truncated where the tail mass is below 1e-30).

The claim: the privacy OpenDP states for the measurement, ``meas.map(1)``: pure epsilon for the
Laplace chain, and for the Gaussian chain its rho-zCDP turned into (epsilon, delta) by OpenDP's
own ``make_zCDP_to_approxDP`` at ``delta = 1e-6``.

The samplers draw from the operating system's entropy, not from the ``rng`` dpaudit hands them
(``dpaudit.batch`` calls them once per run): the audit says so (``rng_ignored``, "not reproducible
from the seed") and runs them in this process only. Each call crosses into OpenDP's Rust core, so
a run costs ~2 ms here: the claims set ``samples`` to what that affords.
"""

from __future__ import annotations

import math

import numpy as np

import dpaudit
from dpaudit import Claim, Source

DELTA_GAUSSIAN = 1e-6
#: Runs per input of the empirical test (OpenDP draws one release per Python call).
SAMPLES = 20_000
SOURCE_VERSION = "opendp 0.16.0"


def _dp():
    import opendp.prelude as dp

    dp.enable_features("contrib")
    return dp


def _domain():
    dp = _dp()
    return dp.vector_domain(dp.atom_domain(T=int)), dp.symmetric_distance()


def laplace_measurement(scale: float):
    dp = _dp()
    return dp.t.make_count(*_domain()) >> dp.m.then_laplace(scale=scale)


def gaussian_measurement(scale: float):
    dp = _dp()
    return dp.t.make_count(*_domain()) >> dp.m.then_gaussian(scale=scale)


def opendp_laplace_epsilon(scale: float) -> float:
    """OpenDP's stated epsilon for records at symmetric distance 1 (one added or removed)."""
    return float(laplace_measurement(scale).map(1))


def opendp_gaussian_epsilon(scale: float, delta: float) -> float:
    """OpenDP's stated epsilon(delta): its zCDP map turned into (epsilon, delta) by OpenDP."""
    dp = _dp()
    profile = dp.c.make_zCDP_to_approxDP(gaussian_measurement(scale)).map(1)
    return float(profile.epsilon(delta))


def _release(make):
    def release(params):
        meas = make(params["scale"])
        return dpaudit.batch(lambda data: meas(list(data)), dtype=np.int64)
    return release


#: The neighbouring pair: a dataset of 3 records and the same with one record removed.
PAIRS = [([1, 2, 3], [1, 2])]


#: Counts the pairs reach (the laws' common support is [-width, MAX_COUNT + width]: the same
#: outcomes on both inputs, so no outcome is impossible on one of them by truncation alone).
MAX_COUNT = 10


def _discrete_table(center: int, log_weight, width: int) -> dict[int, float]:
    ks = np.arange(-width, MAX_COUNT + width + 1)
    logw = np.array([log_weight(int(k) - center) for k in ks])
    w = np.exp(logw - logw.max())
    w /= w.sum()
    return {int(k): float(p) for k, p in zip(ks, w) if p > 0}


def discrete_laplace_law(scale: float) -> dpaudit.exact.DiscreteLaw:
    width = int(math.ceil(80 * scale)) + 10  # tail mass < e^-80
    return dpaudit.exact.DiscreteLaw(
        pmf=lambda data: _discrete_table(len(data), lambda k: -abs(k) / scale, width))


def discrete_gaussian_law(scale: float) -> dpaudit.exact.DiscreteLaw:
    width = int(math.ceil(13 * scale)) + 10  # tail mass < e^-84
    return dpaudit.exact.DiscreteLaw(
        pmf=lambda data: _discrete_table(len(data), lambda k: -k * k / (2 * scale * scale),
                                         width))


SCALES_LAPLACE = (0.5, 1.0, 4.0)
SCALES_GAUSSIAN = (1.0, 4.0)

LAPLACE = Claim(
    id="opendp/laplace-count",
    statement="OpenDP's count >> Laplace(scale) measurement is meas.map(1)-DP (pure) for one "
              "record added or removed",
    source=Source(title="OpenDP library: make_count >> then_laplace, privacy map",
                  kind="library documentation", version=SOURCE_VERSION,
                  location="opendp.measurements.make_laplace; Measurement.map(d_in=1)",
                  quote="privacy_map(d_in) = d_in / scale (max-divergence)"),
    claimed=lambda p: (opendp_laplace_epsilon(p["scale"]), 0.0),
    neighbours="add-remove",
    grid=[{"scale": s} for s in SCALES_LAPLACE],
    release=_release(laplace_measurement),
    pairs=lambda p: PAIRS,
    accountant=lambda p: dpaudit.noise.LaplaceNoise(scale=p["scale"], sensitivity=1.0),
    exact=lambda p: discrete_laplace_law(p["scale"]),
    samples=SAMPLES,
    parameter_range={"scale": "0.5 to 4 (epsilon 2 to 0.25)"},
    calibration="discrete Laplace noise of the given scale on an integer count (sensitivity 1)",
    formula="(1 / scale, 0)",
    notes="OpenDP samples the discrete Laplace exactly from OS entropy (no floating point); "
          "dpaudit's LaplaceNoise accountant (continuous Laplace, l1 sensitivity 1) has the same "
          "pure epsilon 1/scale, which also bounds the discrete law's.",
)

GAUSSIAN = Claim(
    id="opendp/gaussian-count",
    statement="OpenDP's count >> Gaussian(scale) measurement, through OpenDP's zCDP-to-approxDP "
              "conversion, is (epsilon(1e-6), 1e-6)-DP for one record added or removed",
    source=Source(title="OpenDP library: make_count >> then_gaussian, make_zCDP_to_approxDP",
                  kind="library documentation", version=SOURCE_VERSION,
                  location="opendp.measurements.make_gaussian (rho = d_in^2 / (2 scale^2)); "
                           "opendp.combinators.make_zCDP_to_approxDP; PrivacyProfile.epsilon",
                  quote="privacy_map(d_in) = (d_in / scale)^2 / 2 (zero-concentrated "
                        "divergence)"),
    claimed=lambda p: (opendp_gaussian_epsilon(p["scale"], DELTA_GAUSSIAN), DELTA_GAUSSIAN),
    neighbours="add-remove",
    grid=[{"scale": s} for s in SCALES_GAUSSIAN],
    release=_release(gaussian_measurement),
    pairs=lambda p: PAIRS,
    exact=lambda p: discrete_gaussian_law(p["scale"]),
    samples=SAMPLES,
    parameter_range={"scale": "1 to 4"},
    calibration="discrete Gaussian noise of the given scale on an integer count (sensitivity 1)",
    formula="(epsilon of OpenDP's zCDP-to-approxDP profile at delta = 1e-6, 1e-6)",
    notes="No dpaudit accountant: dpaudit has no discrete-Gaussian noise schedule, and the "
          "continuous Gaussian's epsilon(delta) is not a proven upper bound for the discrete "
          "law, so the verdict cannot be 'holds'; the exact value from the probability tables "
          "is the formal evidence.",
)

for _claim in (LAPLACE, GAUSSIAN):
    dpaudit.register_claim(_claim)
