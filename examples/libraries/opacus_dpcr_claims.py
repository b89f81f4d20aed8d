"""opacus-dpcr 1.0's ``DPCREngine``, audited as a claim with dpaudit's public API only.

Load with ``dpaudit audit opacus_dpcr/full-batch --plugin examples/libraries/opacus_dpcr_claims.py``
(``make library-audits`` runs every library claim). Needs ``torch``, ``opacus``, ``dpcrpy`` and
``opacus-dpcr`` (the ``libraries`` extra).

The release (the libraries' own code): a one-parameter model ``torch.nn.Linear(1, 1, bias=False)``
(weight 0) trained with ``opacus_dpcr.DPCREngine(dpcrGenerator=lambda i: dpcrpy.BinMech(4))``
(or ``BCRG(4)``) through ``make_private`` (``noise_multiplier`` z, ``max_grad_norm`` 1, mean loss
reduction, ``SGD(lr=1)``), full batch (``batch_size = len(dataset)``: Poisson sampling at rate 1,
so every record is in every step), on the loss ``model(x).mean()``, whose per-sample gradient is
``x`` whatever the weight (the worst case for continual release: a record's clipped gradient
points the same way at every step). The release is the weight after each of the ``T`` steps (16
for BinMech, one block; 15 for BCRG, one block). Its noise is drawn by
``opacus_dpcr.tensorNoiMech.TensorGaussNoiMech`` with ``torch.normal``; the glue only seeds torch
from dpaudit's rng (``torch.manual_seed``).

The claim: the epsilon the engine reports for that trajectory, ``engine.get_epsilon(1e-5)``: opacus'
RDP accountant of ``T`` Poisson-subsampled Gaussian steps at noise multiplier z and rate 1
(``DPCREngine.make_private`` attaches it), under add/remove of one record.

What the code does instead (``opacus_dpcr/dpcrOptimizer.py``): ``DPCROptimizer`` skips opacus' own
per-step noise and feeds ``-lr * grad`` into dpcrpy's ``dpCrFw``, whose tree nodes draw noise of
standard deviation ``getL2Sens() * z * C * lr / B`` (``sqrt(k + 1)`` for BinMech, 1 for BCRG; ``B``
the expected batch size); the weight after step ``t`` is the block's noisy prefix sum ``S_t``. A
record present in every step moves ``S_t`` by ``t * lr * C / B``: its contributions to one tree node
add up over the node's interval, while the node's noise is calibrated for one contribution per
block (the item-level DP of dpcrpy). The law of the trajectory is ``N(m(data), Sigma)`` with
``m_t = -lr t sum_i clip(x_i) / B`` and ``Sigma = s^2 A A^T``, ``A`` the map from node noises to
prefix sums. The glue reads ``A`` from dpcrpy's own mechanism (a noise object whose draws are unit
vectors, run through the same block) and declares the law (labelled as declared; dpaudit tests it
against the runs); ``tests/test_library_claims.py`` derives it independently from the dyadic
decomposition. Add/remove is stated as zero-out (the removed record replaced by one whose gradient
is 0, the dataset's size unchanged): with the denominator ``B`` fixed that is exactly the sum
without the record, the relation the accountant assumes (opacus' dependence of ``B`` on the
dataset's size is audited separately, in ``opacus_claims.py``).

A run is one training (tens of milliseconds), so the claim sets ``samples``; with torch as a draw
source (not yet in dpaudit) the law will be read from the code and the declaration can go.
"""

from __future__ import annotations

import functools
import warnings

import numpy as np

import dpaudit
from dpaudit import Claim, Source

DELTA = 1e-5
CLIP = 1.0
LR = 1.0
RECORDS = 4
#: Runs per input of the empirical test and of the declared law's test (a run is one training).
SAMPLES = 400
SOURCE_VERSION = "opacus-dpcr 1.0.0 (dpcrpy 1.0.0, opacus 1.6.0, torch 2.14)"
#: grid point name -> (dpcrpy class, order k, steps T = one block)
MECHANISMS = {"BinMech": (4, 16), "BCRG": (4, 15)}
GRID = [{"mechanism": "BinMech", "noise_multiplier": 8.0},
        {"mechanism": "BCRG", "noise_multiplier": 8.0}]


def dpcr_generator(mechanism: str):
    import dpcrpy

    k, _ = MECHANISMS[mechanism]
    return lambda block_id: getattr(dpcrpy, mechanism)(k)


def train(features, mechanism: str, noise_multiplier: float, seed: int):
    """One DP training run with DPCREngine, as a user writes it: returns (trajectory, engine)."""
    import torch
    from torch.utils.data import DataLoader, TensorDataset
    from opacus_dpcr import DPCREngine

    torch.manual_seed(seed)
    x = torch.tensor(np.asarray(features, dtype=np.float32)).reshape(-1, 1)
    dataset = TensorDataset(x)
    # The initial model is public (zero): built without its random initialisation (which would
    # be a torch.rand-style draw the audit must treat as unknown randomness), then zeroed.
    model = torch.nn.utils.skip_init(torch.nn.Linear, 1, 1, bias=False)
    with torch.no_grad():
        model.weight.zero_()
    optimizer = torch.optim.SGD(model.parameters(), lr=LR)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # opacus' secure-RNG and empty-batch notices
        engine = DPCREngine(dpcrGenerator=dpcr_generator(mechanism))
        model, optimizer, loader = engine.make_private(
            module=model, optimizer=optimizer,
            data_loader=DataLoader(dataset, batch_size=len(dataset)),
            noise_multiplier=noise_multiplier, max_grad_norm=CLIP)
        steps = MECHANISMS[mechanism][1]
        trajectory = []
        while len(trajectory) < steps:
            for (batch,) in loader:
                optimizer.zero_grad()
                model(batch).mean().backward()
                optimizer.step()
                trajectory.append(float(model._module.weight.detach().reshape(-1)[0]))
                if len(trajectory) == steps:
                    break
    return np.asarray(trajectory), engine


@functools.lru_cache(maxsize=None)
def reported_epsilon(mechanism: str, noise_multiplier: float, delta: float = DELTA) -> float:
    """The epsilon ``DPCREngine.get_epsilon(delta)`` reports after the trajectory's steps."""
    _, engine = train(np.zeros(RECORDS), mechanism, noise_multiplier, 0)
    return float(engine.get_epsilon(delta))


def release(params):
    mechanism, z = params["mechanism"], params["noise_multiplier"]

    def run(data, runs, rng):
        return np.stack([train(data, mechanism, z, int(rng.integers(2**31)))[0]
                         for _ in range(runs)])
    run.__qualname__ = f"opacus_dpcr_{mechanism}(z={z:g}, records={RECORDS})"
    return run


def pairs(params):
    """The record (feature 1: clipped gradient 1 at every step) present, or replaced by a record
    whose gradient is 0 (zero-out add/remove at a fixed dataset size)."""
    present = np.zeros(RECORDS)
    present[0] = 1.0
    return [(present, np.zeros(RECORDS))]


class _UnitDraws:
    """A dpcrpy noise object whose every draw is the next unit vector: run through a block, the
    block's outputs are the rows of the map from node noises to releases."""

    def __init__(self, size: int) -> None:
        self.size, self.count = size, 0

    def genNoise(self, shape=None):  # noqa: N802 (dpcrpy's interface)
        e = np.zeros(self.size)
        e[self.count] = 1.0
        self.count += 1
        return e

    def getMse(self):  # noqa: N802
        return 0.0

    def getSensType(self):  # noqa: N802
        return 0

    def setSens(self, sens):  # noqa: N802
        pass


@functools.lru_cache(maxsize=None)
def noise_map(mechanism: str) -> tuple[np.ndarray, float]:
    """(A, getL2Sens()): dpcrpy's own block run on zeros with unit-vector draws; ``A[t, j]`` is how
    node draw ``j`` reaches the prefix sum at step ``t``."""
    import dpcrpy

    k, steps = MECHANISMS[mechanism]
    draws = _UnitDraws(4 * steps)
    blk = getattr(dpcrpy, mechanism)(k, draws)
    rows = [np.array(blk.dpRelease(0.0)[0], dtype=np.float64) for _ in range(steps)]
    return np.stack(rows)[:, :draws.count], float(blk.getL2Sens())


def law(params):
    mechanism, z = params["mechanism"], params["noise_multiplier"]
    a, sens = noise_map(mechanism)
    steps = a.shape[0]
    node_sd = sens * z * CLIP * LR / RECORDS  # TensorGaussNoiMech(sigma0 = z C lr / B), x sens
    t = np.arange(1, steps + 1, dtype=np.float64)

    def mean(data):
        s = float(np.clip(np.asarray(data, dtype=np.float64), -CLIP, CLIP).sum())
        return -LR * t * s / RECORDS
    return dpaudit.exact.LinearGaussian(mean=mean, covariance=node_sd ** 2 * a @ a.T)


FULL_BATCH = Claim(
    id="opacus_dpcr/full-batch",
    statement="A model trained with opacus-dpcr's DPCREngine (full batch, continual-release noise) "
              "is (epsilon, 1e-5)-DP under add/remove of one record with the epsilon "
              "engine.get_epsilon(1e-5) reports",
    source=Source(title="opacus-dpcr: DPCREngine.make_private (opacus RDP accountant hook) with "
                        "DPCROptimizer (dpcrpy tree noise)",
                  kind="library documentation", version=SOURCE_VERSION,
                  location="opacus_dpcr/dpcr_engine.py (make_private, attach_step_hook), "
                           "opacus_dpcr/dpcrOptimizer.py (DPCROptimizer.__init__, step)",
                  quote="Just replace \"PrivacyEngine\" in your Opacus code with \"DPCREngine\", "
                        "you will complete your private learning with our Opacus-DPCR."),
    claimed=lambda p: (reported_epsilon(p["mechanism"], p["noise_multiplier"]), DELTA),
    neighbours="add-remove",
    grid=GRID,
    release=release,
    pairs=pairs,
    # Zero-out add/remove: the removed record is a zero-gradient record, the size unchanged.
    neighbour_check=False,
    exact=law,
    samples=SAMPLES,
    parameter_range={"mechanism": "BinMech(4) (16 steps), BCRG(4) (15 steps)",
                     "noise_multiplier": "8", "records": f"{RECORDS}, full batch",
                     "model": "Linear(1, 1), loss mean(w x), clip 1, SGD lr 1"},
    calibration="tree node noise sd = getL2Sens() x z x clip x lr / expected_batch_size",
    formula="(opacus RDP epsilon(1e-5) of T Poisson-sampled Gaussian steps at rate 1, 1e-5)",
    notes="Law declared by the glue (A read from dpcrpy's block with unit-vector draws), tested "
          "against the runs; torch is not yet a dpaudit draw source. No accountant: dpaudit has "
          "no schedule for a record in every step of a continual-release tree.",
    kind="learner",
)

dpaudit.register_claim(FULL_BATCH)
