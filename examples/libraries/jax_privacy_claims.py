"""jax-privacy's correlated-noise (banded matrix factorization) privatizer, audited as a claim with
dpaudit's public API only.

Load with ``dpaudit audit jax_privacy/bandmf --plugin examples/libraries/jax_privacy_claims.py``
(``make library-audits`` runs every library claim). Needs ``jax``, ``jaxlib`` and ``jax-privacy``
(the ``libraries`` extra).

The release (jax-privacy's own code, nothing re-implemented): the strategy
``C = banded.ColumnNormalizedBanded.default(n, bands)`` (Fichtenberger et al.'s Toeplitz
coefficients truncated to ``bands`` bands, columns normalised to sensitivity 1), its inverse as a
streaming matrix (``inverse_as_streaming_matrix``), and
``noise_addition.matrix_factorization_privatizer(C^-1, stddev=noise_multiplier * clip)`` applied
step by step (``init``/``update``) to the ``n`` per-step sums of clipped gradients of a scalar
model; the release is the ``n`` privatized sums (what the optimizer consumes). A batch of runs is
``jax.vmap`` of that loop over PRNG keys, and every key is drawn from the ``rng`` dpaudit hands the
mechanism, so runs are reproducible from the seed.

The claim: jax-privacy's own accounting of it, ``accounting.analysis.
SingleReleaseTrainingAccountant`` with its default PLD configuration (dp-accounting,
``ADD_OR_REMOVE_ONE``): epsilon at delta = 1e-5 for the noise multiplier, single participation (a
record's clipped gradient enters one step; add/remove of that record = its contribution of at
most ``clip`` appears or is zeroed).

dpaudit's evidence: the exact epsilon of each declared pair from the release's law (the noise is
``stddev * C^-1 z``: :class:`dpaudit.exact.LinearGaussian` with covariance
``stddev^2 C^-1 C^-T``, materialised from jax-privacy's own streaming inverse), the accountant
``dpaudit.noise.matrix_factorization(C, sigma, sensitivity=clip)`` under add/remove, and the
empirical lower bound. jax-privacy computes in float32 (floating-point samplers are not exactly
DP; Mironov 2012).
"""

from __future__ import annotations

import functools

import numpy as np

import dpaudit
from dpaudit import Claim, Source

DELTA = 1e-5
CLIP = 1.0
STEPS = 16
GRID = [{"noise_multiplier": 1.0, "bands": 4}, {"noise_multiplier": 2.0, "bands": 4},
        {"noise_multiplier": 2.0, "bands": 16}]


@functools.lru_cache(maxsize=None)
def strategy(n: int, bands: int):
    from jax_privacy.matrix_factorization import banded

    return banded.ColumnNormalizedBanded.default(n, bands)


@functools.lru_cache(maxsize=None)
def matrices(n: int, bands: int) -> tuple[np.ndarray, np.ndarray]:
    """(C, C^-1) as float64 arrays, both materialised by jax-privacy."""
    s = strategy(n, bands)
    c = np.asarray(s.materialize(), dtype=np.float64)
    inv = np.asarray(s.inverse_as_streaming_matrix().materialize(n), dtype=np.float64)
    return c, inv


def jax_privacy_epsilon(noise_multiplier: float, n: int, delta: float = DELTA) -> float:
    """jax-privacy's own (epsilon, delta) accounting of one BandMF release (single participation)."""
    from jax_privacy.accounting import accountants, analysis

    acc = analysis.SingleReleaseTrainingAccountant(
        dp_accountant_config=accountants.PldAccountantConfig())
    params = analysis.DpParams(noise_multipliers=noise_multiplier, num_samples=1_000,
                               delta=delta, batch_size=1)
    return float(acc.compute_epsilon(n, params))


@functools.lru_cache(maxsize=None)
def _batched_release(n: int, bands: int, stddev: float):
    import jax
    from jax_privacy import noise_addition

    noising = strategy(n, bands).inverse_as_streaming_matrix()

    def one_run(key, xs):
        priv = noise_addition.matrix_factorization_privatizer(noising, stddev=stddev,
                                                              prng_key=key)
        state = priv.init(xs[0])

        def step(state, x):
            y, state = priv.update(x, state)
            return state, y
        _, ys = jax.lax.scan(step, state, xs)
        return ys

    return jax.jit(jax.vmap(one_run, in_axes=(0, None)))


def release(params, steps=STEPS):
    """The banded-matrix-factorisation release on ``steps`` clipped per-step gradients."""
    n, bands = steps, params["bands"]
    stddev = params["noise_multiplier"] * CLIP

    def mechanism(data, runs, rng):
        import jax
        import jax.numpy as jnp

        f = _batched_release(n, bands, stddev)
        key = jax.random.key(int(rng.integers(0, 2**62)))
        xs = jnp.asarray(np.clip(np.asarray(data, dtype=np.float32), -CLIP, CLIP))
        return np.asarray(f(jax.random.split(key, runs), xs), dtype=np.float64)
    mechanism.__qualname__ = f"jax_privacy_bandmf(n={n}, bands={bands}, stddev={stddev:g})"
    return mechanism


def pairs(params):
    """A record whose clipped gradient (+clip) enters step t, present or absent (add/remove), for
    t at the first, middle and last step."""
    out = []
    for t in (0, STEPS // 2, STEPS - 1):
        x1 = np.zeros(STEPS)
        x1[t] = CLIP
        out.append((np.zeros(STEPS), x1))
    return out


def law(params, steps=STEPS):
    """The release's law: the clipped gradients plus C^{-1} z, z ~ N(0, (noise_multiplier clip)^2 I)."""
    _, inv = matrices(steps, params["bands"])
    stddev = params["noise_multiplier"] * CLIP
    return dpaudit.exact.LinearGaussian(
        mean=lambda d: np.clip(np.asarray(d, dtype=np.float64), -CLIP, CLIP),
        covariance=stddev ** 2 * inv @ inv.T)


def accountant(params):
    c, _ = matrices(STEPS, params["bands"])
    return dpaudit.noise.matrix_factorization(c, sigma=params["noise_multiplier"] * CLIP,
                                              sensitivity=CLIP)


BANDMF = Claim(
    id="jax_privacy/bandmf",
    statement="jax-privacy's banded matrix-factorization privatizer (single participation) is "
              "(epsilon, 1e-5)-DP with epsilon from jax-privacy's SingleReleaseTrainingAccountant",
    source=Source(title="jax-privacy: noise_addition.matrix_factorization_privatizer with "
                        "matrix_factorization.banded.ColumnNormalizedBanded; "
                        "accounting.analysis.SingleReleaseTrainingAccountant",
                  kind="library documentation", version="jax-privacy 2.0.0",
                  location="jax_privacy/noise_addition.py, matrix_factorization/banded.py, "
                           "accounting/analysis.py",
                  quote="this analysis treats accounting as a single Gaussian DP event"),
    claimed=lambda p: (jax_privacy_epsilon(p["noise_multiplier"], STEPS), DELTA),
    neighbours="add-remove",
    grid=GRID,
    release=release,
    pairs=pairs,
    # Zero-out neighbours: the data is the per-step gradient stream, a removed record a zero
    # gradient at its step (same length), which the record-count check cannot read from its shape.
    neighbour_check=False,
    accountant=accountant,
    exact=law,
    parameter_range={"noise_multiplier": "1 to 2", "bands": "4 to n = 16",
                     "steps": "n = 16, scalar model, clip 1"},
    calibration="stddev = noise_multiplier * clip; column-normalised banded strategy "
                "(sensitivity 1 per unit of contribution, single participation)",
    formula="(jax-privacy PLD epsilon(1e-5) of GaussianDpEvent(noise_multiplier), 1e-5)",
    notes="Single participation only (one record in one step); multi-epoch min-separation "
          "participation is not audited here. float32 noise.",
    kind="learner",
)

dpaudit.register_claim(BANDMF)


# -- cyclic participation: jax-privacy's amplified BandMF accountant --------------------------
#
# jax-privacy's ``experimental.accounting.amplified_bandmf_event(noise_multiplier, iterations,
# num_bands=..., sampling_prob=...)`` splits the examples into ``num_bands`` groups cycled round
# robin and accounts ``ceil(iterations / num_bands)`` participations of a strategy whose columns
# have norm at most 1. That count is the strategy's sensitivity only when no two columns a record
# shares overlap, i.e. when the strategy has at most ``num_bands`` bands (Choquette-Choo et al.
# 2023b, Thm 4); nothing checks it. Here the batches are cycled every ``cycle`` steps (the value
# passed as ``num_bands``) while the strategy is jax-privacy's default banded one with ``bands``
# bands. A record takes part in steps ``r, r + cycle, ...``; dpaudit's accountant is
# ``MatrixFactorizationNoise(C, sigma, 1, Cyclic(cycle))``, which checks the band condition and,
# when it fails, computes the strategy's cyclic sensitivity exactly.

CYCLIC_STEPS = 12
CYCLIC_GRID = [{"noise_multiplier": 2.0, "bands": 2, "cycle": 2},
               {"noise_multiplier": 2.0, "bands": 3, "cycle": 2}]


def jax_privacy_cyclic_epsilon(noise_multiplier: float, iterations: int, cycle: int,
                               delta: float = DELTA) -> float:
    """jax-privacy's accounting of cyclic BandMF: ``amplified_bandmf_event(..., num_bands=cycle,
    sampling_prob=1)`` under dp-accounting's PLD accountant (add/remove)."""
    import dp_accounting
    from jax_privacy.experimental import accounting

    event = accounting.amplified_bandmf_event(noise_multiplier, iterations, num_bands=cycle,
                                              sampling_prob=1.0)
    acc = dp_accounting.pld.PLDAccountant()
    acc.compose(event)
    return float(acc.get_epsilon(delta))


def cyclic_release(params):
    mechanism = release(params, CYCLIC_STEPS)
    stddev = params["noise_multiplier"] * CLIP
    mechanism.__qualname__ = (f"jax_privacy_bandmf_cyclic(n={CYCLIC_STEPS}, bands={params['bands']}, "
                              f"cycle={params['cycle']}, stddev={stddev:g})")
    return mechanism


def cyclic_pairs(params):
    """A record in every step ``r (mod cycle)`` (its clipped gradient +clip, all in one direction:
    the worst case when the strategy's Gram matrix is non-negative), present or zeroed."""
    out = []
    for r in range(params["cycle"]):
        x1 = np.zeros(CYCLIC_STEPS)
        x1[r::params["cycle"]] = CLIP
        out.append((x1, np.zeros(CYCLIC_STEPS)))
    return out


def cyclic_law(params):
    return law(params, CYCLIC_STEPS)


def cyclic_accountant(params):
    c, _ = matrices(CYCLIC_STEPS, params["bands"])
    return dpaudit.noise.MatrixFactorizationNoise(
        c, sigma=params["noise_multiplier"] * CLIP, sensitivity=CLIP,
        participation=dpaudit.noise.Cyclic(params["cycle"]))


BANDMF_CYCLIC = Claim(
    id="jax_privacy/bandmf-cyclic",
    statement="jax-privacy's banded matrix-factorization privatizer with batches cycled every "
              "`cycle` steps is (epsilon, 1e-5)-DP with epsilon from "
              "amplified_bandmf_event(num_bands=cycle)",
    source=Source(title="jax-privacy: experimental.accounting.amplified_bandmf_event with "
                        "matrix_factorization.banded.ColumnNormalizedBanded.default",
                  kind="library documentation", version="jax-privacy 2.0.0",
                  location="jax_privacy/experimental/accounting.py (amplified_bandmf_event), "
                           "jax_privacy/matrix_factorization/banded.py",
                  quote="noise_multiplier: The noise multiplier to use, assuming the strategy "
                        "matrix has maximum L2 column norm of one."),
    claimed=lambda p: (jax_privacy_cyclic_epsilon(p["noise_multiplier"], CYCLIC_STEPS,
                                                  p["cycle"]), DELTA),
    neighbours="add-remove",
    grid=CYCLIC_GRID,
    release=cyclic_release,
    pairs=cyclic_pairs,
    # Zero-out neighbours of the per-step gradient stream (as for jax_privacy/bandmf).
    neighbour_check=False,
    accountant=cyclic_accountant,
    exact=cyclic_law,
    parameter_range={"noise_multiplier": "2", "bands": "2 (= cycle) and 3 (> cycle)",
                     "cycle": "2", "steps": f"n = {CYCLIC_STEPS}, scalar model, clip 1"},
    calibration="stddev = noise_multiplier * clip; column-normalised banded strategy; "
                "ceil(n / cycle) participations counted as independent column-norm-1 releases",
    formula="(PLD epsilon(1e-5) of amplified_bandmf_event(z, n, num_bands=cycle, "
            "sampling_prob=1), 1e-5)",
    notes="The library's count is right when bands <= cycle (the 2-band point) and too small "
          "otherwise (the 3-band point): columns two steps apart overlap.",
    kind="learner",
)

dpaudit.register_claim(BANDMF_CYCLIC)
