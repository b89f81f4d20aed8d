"""opacus 1.6's ``PrivacyEngine`` (DP-SGD), audited as claims with dpaudit's public API only.

Load with ``dpaudit audit opacus/averaging-denominator --plugin examples/libraries/opacus_claims.py``
(``make library-audits`` runs every library claim). Needs ``torch`` and ``opacus`` (the
``libraries`` extra).

The release (opacus' own code): a one-parameter model ``torch.nn.Linear(1, 1, bias=False)``
(weight 0) trained by ``PrivacyEngine().make_private`` (``max_grad_norm`` 1, mean loss reduction,
``SGD(lr=1)``) on the loss ``model(x).mean()``, whose per-sample gradient is the feature ``x``;
the release is the weight after each step. The noise is drawn by ``DPOptimizer.add_noise`` with
``torch.normal``; the glue only seeds torch from dpaudit's rng (``torch.manual_seed``). The claim
is the epsilon the engine reports, ``engine.get_epsilon(1e-5)`` (opacus' RDP accountant of the
Poisson-subsampled Gaussian at ``sample_rate = 1 / len(data_loader)``), under add/remove of one
record. Two findings, each in its smallest configuration:

* ``opacus/averaging-denominator`` (opacus issue #571): ``make_private`` sets
  ``expected_batch_size = int(len(dataset) * sample_rate)`` and ``DPOptimizer.scale_grad`` divides
  the noisy sum by it, so the noise's scale on the update is ``z C / expected_batch_size``, a
  function of the dataset's size. Four records against three (batch size 2, so ``sample_rate``
  1/2 for both and denominators 2 and 1), every gradient 0: the one step's update is
  ``N(0, (z C / 2)^2)`` against ``N(0, (z C)^2)``, distinguishable at any noise multiplier. The
  exact epsilon of two centred Gaussians of standard deviations in ratio 2 (one step) is the
  hockey-stick divergence through the chi-square law of the squared output: supplied by the glue
  (``exact_value``, labelled user-supplied; torch is not yet a draw source dpaudit reads), checked
  against an independent quadrature in ``tests/test_library_claims.py``.
* ``opacus/fixed-batches``: ``poisson_sampling=False`` leaves the data loader as given ("a good
  approximation" in ``make_private``'s docstring) while the accountant still amplifies by
  ``sample_rate``. With PyTorch's default ``DataLoader`` (``shuffle=False``) the batches are fixed:
  ten records, batch size 1, one epoch of ten steps, noise multiplier 2: the record enters step 1
  and only step 1, so the trajectory is one Gaussian mechanism with ``mu = 1 / z``; dpaudit's
  accountant is :class:`dpaudit.noise.FixedBatchGaussian` (no amplification), and the glue
  declares the trajectory's law (a random walk of ``N(0, (z C / B)^2)`` increments). The record
  replaced by a zero-gradient one (zero-out add/remove at a fixed size, so the denominator is not
  involved).
"""

from __future__ import annotations

import functools
import math
import warnings

import numpy as np

import dpaudit
from dpaudit import Claim, Source

DELTA = 1e-5
CLIP = 1.0
LR = 1.0
SOURCE_VERSION = "opacus 1.6.0 (torch 2.14)"
#: Runs per input of the empirical test and of a declared law's test (a run is one training,
#: 5-10 ms here).
SAMPLES = {"denominator": 5_000, "fixed": 2_000}


def train(features, batch_size: int, steps: int, noise_multiplier: float, poisson: bool,
          seed: int):
    """One DP-SGD training run with opacus, as a user writes it: (trajectory, engine, optimizer)."""
    import torch
    from torch.utils.data import DataLoader, TensorDataset
    from opacus import PrivacyEngine

    torch.manual_seed(seed)
    x = torch.tensor(np.asarray(features, dtype=np.float32)).reshape(-1, 1)
    # The initial model is public (zero): built without its random initialisation (which would
    # be a torch.rand-style draw the audit must treat as unknown randomness), then zeroed.
    model = torch.nn.utils.skip_init(torch.nn.Linear, 1, 1, bias=False)
    with torch.no_grad():
        model.weight.zero_()
    optimizer = torch.optim.SGD(model.parameters(), lr=LR)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # opacus' secure-RNG and empty-batch notices
        engine = PrivacyEngine()
        model, optimizer, loader = engine.make_private(
            module=model, optimizer=optimizer,
            data_loader=DataLoader(TensorDataset(x), batch_size=batch_size),
            noise_multiplier=noise_multiplier, max_grad_norm=CLIP, poisson_sampling=poisson)
        trajectory = []
        while len(trajectory) < steps:
            for (batch,) in loader:
                optimizer.zero_grad()
                model(batch).mean().backward()
                optimizer.step()
                trajectory.append(float(model._module.weight.detach().reshape(-1)[0]))
                if len(trajectory) == steps:
                    break
    return np.asarray(trajectory), engine, optimizer


@functools.lru_cache(maxsize=None)
def reported(records: int, batch_size: int, steps: int, noise_multiplier: float,
             poisson: bool) -> tuple[float, float, int]:
    """(engine.get_epsilon(1e-5), sample_rate, expected_batch_size) for that configuration."""
    _, engine, optimizer = train(np.zeros(records), batch_size, steps, noise_multiplier, poisson, 0)
    q = float(engine.accountant.history[0][1])
    return float(engine.get_epsilon(DELTA)), q, int(optimizer.expected_batch_size)


def _release(batch_size: int, steps: int, poisson: bool):
    def params_release(params):
        z = params["noise_multiplier"]

        def run(data, runs, rng):
            return np.stack([train(data, batch_size, steps, z, poisson,
                                   int(rng.integers(2**31)))[0] for _ in range(runs)])
        run.__qualname__ = (f"opacus_dpsgd(z={z:g}, batch={batch_size}, steps={steps}, "
                            f"poisson={poisson})")
        return run
    return params_release


def scale_ratio_epsilon(ratio: float, dims: int, delta: float) -> float:
    """The exact epsilon(delta) between ``N(0, s^2 I)`` and ``N(0, (ratio s)^2 I)`` in ``dims``
    dimensions (``ratio > 1``), both orders: the privacy loss is a function of ``Y = |x|^2 / s^2``,
    chi-square with ``dims`` degrees of freedom under the first law and ``ratio^2`` times one under
    the second, so each hockey-stick divergence is a difference of chi-square tails."""
    from scipy import optimize, stats

    a, shift = 0.5 * (1 - ratio ** -2), dims * math.log(ratio)

    def divergence(eps: float) -> float:
        y1 = (shift - eps) / a  # first over second: loss > eps iff Y < y1
        d1 = (stats.chi2.cdf(y1, dims) - math.exp(eps) * stats.chi2.cdf(y1 / ratio ** 2, dims)
              if y1 > 0 else 0.0)
        y2 = (shift + eps) / a  # second over first: loss > eps iff Y > y2
        d2 = stats.chi2.sf(y2 / ratio ** 2, dims) - math.exp(eps) * stats.chi2.sf(y2, dims)
        return max(d1, d2)
    return float(optimize.brentq(lambda e: divergence(e) - delta, 0.0, 200.0, xtol=1e-12))


# -- the averaging denominator --------------------------------------------------------------

DENOM = {"records": 4, "batch_size": 2, "steps": 1}


def denominator_pairs(params):
    return [(np.zeros(DENOM["records"]), np.zeros(DENOM["records"] - 1))]


def denominator_exact(params, data0, data1) -> float:
    z = params["noise_multiplier"]
    b0 = reported(len(data0), DENOM["batch_size"], DENOM["steps"], z, True)[2]
    b1 = reported(len(data1), DENOM["batch_size"], DENOM["steps"], z, True)[2]
    if b0 == b1:
        return 0.0
    return scale_ratio_epsilon(max(b0, b1) / min(b0, b1), DENOM["steps"], DELTA)


def denominator_accountant(params):
    _, q, _ = reported(DENOM["records"], DENOM["batch_size"], DENOM["steps"],
                       params["noise_multiplier"], True)
    return dpaudit.noise.PoissonSampledGaussian(noise_multiplier=params["noise_multiplier"],
                                                sampling_rate=q, steps=DENOM["steps"])


AVERAGING_DENOMINATOR = Claim(
    id="opacus/averaging-denominator",
    statement="A model trained with opacus' PrivacyEngine (Poisson sampling) is (epsilon, 1e-5)-DP "
              "under add/remove of one record with the epsilon engine.get_epsilon(1e-5) reports",
    source=Source(title="opacus: PrivacyEngine.make_private (expected_batch_size = "
                        "int(len(dataset) * sample_rate)), DPOptimizer.scale_grad, "
                        "RDPAccountant", kind="library documentation", version=SOURCE_VERSION,
                  location="opacus/privacy_engine.py (make_private), "
                           "opacus/optimizers/optimizer.py (add_noise, scale_grad); "
                           "opacus issue #571",
                  quote="expected_batch_size = int(len(data_loader.dataset) * sample_rate)"),
    claimed=lambda p: (reported(DENOM["records"], DENOM["batch_size"], DENOM["steps"],
                                p["noise_multiplier"], True)[0], DELTA),
    neighbours="add-remove",
    grid=[{"noise_multiplier": 4.0}],
    release=_release(DENOM["batch_size"], DENOM["steps"], True),
    pairs=denominator_pairs,
    accountant=denominator_accountant,
    exact_value=denominator_exact,
    samples=SAMPLES["denominator"],
    statistic=lambda out: np.sum(np.square(np.asarray(out, dtype=np.float64).reshape(
        len(out), -1)), axis=1),
    parameter_range={"noise_multiplier": "4", "records": "4 vs 3, batch size 2 (rate 1/2)",
                     "steps": "1", "gradients": "all 0"},
    calibration="update noise sd = z x clip / int(len(dataset) x sample_rate)",
    formula="(opacus RDP epsilon(1e-5) of the Poisson-subsampled Gaussian, 1e-5)",
    notes="Exact value supplied by the glue (two centred Gaussians of sd ratio = the two "
          "denominators, chi-square hockey-stick); torch is not yet a dpaudit draw source.",
    kind="learner",
)


# -- poisson_sampling=False: fixed batches accounted as Poisson -----------------------------

FIXED = {"records": 10, "batch_size": 1, "steps": 10}


def fixed_pairs(params):
    present = np.zeros(FIXED["records"])
    present[0] = 1.0
    return [(present, np.zeros(FIXED["records"]))]


def fixed_law(params):
    z, b, steps = params["noise_multiplier"], FIXED["batch_size"], FIXED["steps"]
    sd = z * CLIP * LR / b
    walk = np.tril(np.ones((steps, steps)))  # w_t = sum of the first t updates

    def mean(data):
        g = np.clip(np.asarray(data, dtype=np.float64), -CLIP, CLIP)
        batch_sums = g[: steps * b].reshape(steps, b).sum(axis=1)  # shuffle=False: in order
        return walk @ (-LR * batch_sums / b)
    return dpaudit.exact.LinearGaussian(mean=mean, covariance=sd ** 2 * walk @ walk.T)


def fixed_accountant(params):
    return dpaudit.noise.FixedBatchGaussian(noise_multiplier=params["noise_multiplier"],
                                            steps=FIXED["steps"], steps_per_epoch=FIXED["steps"])


FIXED_BATCHES = Claim(
    id="opacus/fixed-batches",
    statement="A model trained with opacus' PrivacyEngine with poisson_sampling=False is "
              "(epsilon, 1e-5)-DP under add/remove of one record with the epsilon "
              "engine.get_epsilon(1e-5) reports",
    source=Source(title="opacus: PrivacyEngine.make_private(poisson_sampling=False) with the "
                        "RDPAccountant at sample_rate = 1 / len(data_loader)",
                  kind="library documentation", version=SOURCE_VERSION,
                  location="opacus/privacy_engine.py (make_private docstring); opacus issue #80",
                  quote="Technically this doesn't fit the assumptions made by privacy accounting "
                        "mechanism, but it can be a good approximation when using Poisson "
                        "sampling is unfeasible."),
    claimed=lambda p: (reported(FIXED["records"], FIXED["batch_size"], FIXED["steps"],
                                p["noise_multiplier"], False)[0], DELTA),
    neighbours="add-remove",
    grid=[{"noise_multiplier": 2.0}],
    release=_release(FIXED["batch_size"], FIXED["steps"], False),
    pairs=fixed_pairs,
    # Zero-out add/remove: the removed record is a zero-gradient record, the size unchanged.
    neighbour_check=False,
    accountant=fixed_accountant,
    exact=fixed_law,
    samples=SAMPLES["fixed"],
    parameter_range={"noise_multiplier": "2", "records": "10, batch size 1, shuffle=False",
                     "steps": "10 (one epoch)"},
    calibration="update noise sd = z x clip / expected_batch_size; the record in one fixed batch",
    formula="(opacus RDP epsilon(1e-5) of the Poisson-subsampled Gaussian at rate 1/10, 1e-5)",
    notes="Law declared by the glue (a random walk of Gaussian updates), tested against the "
          "runs; torch is not yet a dpaudit draw source.",
    kind="learner",
)

dpaudit.register_claim(AVERAGING_DENOMINATOR)
dpaudit.register_claim(FIXED_BATCHES)
