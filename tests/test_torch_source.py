"""torch as a draw source (dpaudit.greybox.sources.torch_source), in the library venv.

Releases written as real glue is: the library (tests/_torch_source_lib.py) draws from torch's
global generator or a torch.Generator it is handed; the glue only seeds torch from dpaudit's rng.
True epsilons are derived here by hand (Balle & Wang 2018, Thm 8 for one Gaussian mechanism of
shift mu), never read from dpaudit. The claim: (1, 1e-5)-DP under add/remove, accountant
GaussianNoise(SIGMA, sensitivity=1), SIGMA calibrated exactly; the pair [1, 1] vs [1] (sums 2 and
1), as in tests/test_hostile_releases.py and tests/test_draw_sources.py.
"""

from __future__ import annotations

import math
import os
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import _torch_source_lib as lib  # noqa: E402  (needs torch)
from draw_source_support import (DELTA, MU, SIGMA, gaussian_eps, line_of,  # noqa: E402
                                  noisy_sum_claim)
import dpaudit  # noqa: E402
from dpaudit.claims.derived_law_check import GUARD_STATEMENT  # noqa: E402
from dpaudit.greybox import NotDerivable, ReplayGenerator, derive_law, derive_pair  # noqa: E402
from dpaudit.greybox.invariance import INVARIANCE_STATEMENT, check_invariance  # noqa: E402
from dpaudit.greybox.sources import run_release  # noqa: E402

pytestmark = pytest.mark.libraries

F64 = torch.float64


LIB = os.path.abspath(lib.__file__)
GLOBAL, MADE = "torch's global generator", "torch.Generator (made in the release)"


def _line(tag: str) -> int:
    return line_of(LIB, tag)


def _seed(rng) -> int:
    return int(rng.integers(2**31))


# -- glue as users write it -----------------------------------------------------------------

def glue_normal(x, n, rng, sigma=SIGMA):  # seeds torch's global generator, the library draws
    torch.manual_seed(_seed(rng))
    return lib.noisy_sum(x, n, sigma)


def glue_generator(x, n, rng, sigma=SIGMA):  # hands the library a torch.Generator it seeds
    gen = torch.Generator()
    gen.manual_seed(_seed(rng))
    return lib.noisy_sum(x, n, sigma, generator=gen)


def glue_randn(x, n, rng):
    torch.manual_seed(_seed(rng))
    return lib.noisy_sum_randn(x, n, SIGMA)


def glue_inplace(x, n, rng):
    torch.random.manual_seed(_seed(rng))
    return lib.noisy_sum_inplace(x, n, SIGMA)


def glue_like(x, n, rng):
    torch.manual_seed(_seed(rng))
    return lib.noisy_sum_like(x, n, SIGMA)


def glue_mean(x, n, rng):
    torch.manual_seed(_seed(rng))
    return lib.noisy_sum_mean(x, n, SIGMA)


def glue_dist(x, n, rng):
    torch.manual_seed(_seed(rng))
    return lib.noisy_sum_dist(x, n, SIGMA)


def glue_half(x, n, rng):  # the library's noise at sigma / 2: mu = 2 / sigma
    return glue_normal(x, n, rng, SIGMA / 2)


def glue_generator_half(x, n, rng):
    return glue_generator(x, n, rng, SIGMA / 2)


# -- hostile releases (tests/test_hostile_releases.py, rewritten for torch) -------------------

def band(x, n, rng):  # the raw sum when the draw falls in a band of probability ~2e-3
    torch.manual_seed(_seed(rng))
    z = torch.normal(0.0, 1.0, size=(n,), dtype=F64)
    s = lib._s(x)
    return torch.where((z > 1.0) & (z < 1.0085), s, s + SIGMA * z)


def clip4(x, n, rng):  # noise clipped at 4 sigma: atoms of probability 3.2e-5 > delta
    torch.manual_seed(_seed(rng))
    z = torch.normal(0.0, SIGMA, size=(n,), dtype=F64)
    return lib._s(x) + torch.clamp(z, -4 * SIGMA, 4 * SIGMA)


def state_cancel(x, n, rng):  # the state saved and restored: z - z/2 = z/2, mu = 2 / sigma
    torch.manual_seed(_seed(rng))
    st = torch.get_rng_state()
    z1 = torch.normal(0.0, SIGMA, size=(n,), dtype=F64)
    torch.set_rng_state(st)
    return lib._s(x) + z1 - 0.5 * torch.normal(0.0, SIGMA, size=(n,), dtype=F64)


def state_cancel_c(x, n, rng):  # the same through torch.default_generator's own (C) methods
    torch.manual_seed(_seed(rng))
    st = torch.default_generator.get_state()
    z1 = torch.normal(0.0, SIGMA, size=(n,), dtype=F64)
    torch.default_generator.set_state(st)
    return lib._s(x) + z1 - 0.5 * torch.normal(0.0, SIGMA, size=(n,), dtype=F64)


def unseen_half(x, n, rng):  # noise sigma / 2 through a function bound before the audit
    torch.manual_seed(_seed(rng))
    return lib.noisy_sum_bound(x, n, SIGMA / 2)


def seed_reused(x, n, rng):  # the seed also scales the sum: not a function of the noise alone
    s = _seed(rng)
    torch.manual_seed(s)
    return lib._s(x) * (s % 1000) + torch.normal(0.0, SIGMA, size=(n,), dtype=F64)


def rand_gate(x, n, rng):  # torch.rand switches the noise off half the time
    torch.manual_seed(_seed(rng))
    on = (torch.rand(n) > 0.5).to(F64)
    return lib._s(x) + on * torch.normal(0.0, SIGMA, size=(n,), dtype=F64)


HOSTILE = {
    # name: (mechanism, true epsilon at DELTA, derivation by hand)
    "band": (band, math.inf, "an atom at the raw sum of P 2.0e-3 > delta"),
    "clip4": (clip4, math.inf, "atoms at s +- 4 sigma of P 3.2e-5 > delta"),
    "state-cancel": (state_cancel, gaussian_eps(2 * MU, DELTA), "z/2: mu = 2 / sigma"),
    "state-cancel-c": (state_cancel_c, gaussian_eps(2 * MU, DELTA), "z/2: mu = 2 / sigma"),
    "unseen": (unseen_half, gaussian_eps(2 * MU, DELTA), "mu = 2 / sigma"),
    "seed-reused": (seed_reused, math.inf, "the output reveals the sum times a known factor"),
    "rand-gate": (rand_gate, math.inf, "no noise with probability 1/2 > delta"),
}
CORRECT = {"normal": glue_normal, "generator": glue_generator, "randn": glue_randn,
           "inplace": glue_inplace, "like": glue_like, "mean": glue_mean, "dist": glue_dist}


claim = noisy_sum_claim("torch", "torch draw-source release")


# -- the source records, substitutes and names like the rng ---------------------------------

def test_recorded_draws_are_the_values_torch_gives_for_the_seed() -> None:
    g = ReplayGenerator(3)
    out = run_release(glue_normal, [1.0, 1.0], 4, g)
    s = int(np.random.Generator(np.random.PCG64(3)).integers(2**31))  # what the glue drew
    torch.manual_seed(s)
    expect = 2.0 + torch.normal(0.0, SIGMA, size=(4,), dtype=F64)
    assert torch.equal(out, expect)
    (d,) = g.draws
    assert d.source == GLOBAL and d.site == f"{LIB}:{_line('NOISE-NORMAL')}"
    assert g.foreign == [] and g.seeded == [(GLOBAL, s)]


def test_patches_are_restored_and_the_global_state_is_left_as_found() -> None:
    before = (torch.normal, torch.randn, torch.Tensor.normal_, torch.manual_seed,
              torch.Generator, torch.distributions.Normal.sample)
    torch.manual_seed(11)
    state = torch.get_rng_state()

    def boom(x, n, rng):
        torch.manual_seed(5)
        torch.normal(0.0, 1.0, size=(3,))
        raise RuntimeError("boom")
    with pytest.raises(RuntimeError):
        run_release(boom, None, 1, ReplayGenerator(0))
    assert (torch.normal, torch.randn, torch.Tensor.normal_, torch.manual_seed,
            torch.Generator, torch.distributions.Normal.sample) == before
    assert torch.equal(torch.get_rng_state(), state)


def test_dpaudit_does_not_import_torch_for_a_release_without_it() -> None:
    # A fresh interpreter: running a numpy release under replay leaves torch unimported.
    import subprocess
    code = ("import sys, numpy as np\n"
            "from dpaudit.greybox import derive_law\n"
            "derive_law(lambda x, n, rng: rng.normal(size=n) + 1.0, [1.0])\n"
            "print('torch' in sys.modules)")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         timeout=120)
    assert out.stdout.strip() == "False", out.stderr[-2000:]


@pytest.mark.parametrize("name", sorted(CORRECT))
def test_the_law_of_each_torch_entry_point_is_derived_at_the_library_line(name: str) -> None:
    # output = s + SIGMA z: mean s, A = [[SIGMA]]; on the pair mu = 1 / SIGMA, epsilon 1.
    tag = {"normal": "NOISE-NORMAL", "generator": "NOISE-NORMAL", "randn": "NOISE-RANDN",
           "inplace": "NOISE-INPLACE", "like": "NOISE-LIKE", "mean": "NOISE-MEAN",
           "dist": "NOISE-DIST"}[name]
    law = derive_law(CORRECT[name], [1.0, 1.0])
    assert not isinstance(law, NotDerivable), law
    np.testing.assert_allclose(law.mean, [2.0], atol=1e-12)
    np.testing.assert_allclose(np.abs(law.A), [[SIGMA]], rtol=1e-12)
    assert law.draws[0].site == f"{LIB}:{_line(tag)}"
    assert law.draws[0].source == (MADE if name == "generator" else GLOBAL)
    pair = derive_pair(CORRECT[name], [1.0, 1.0], [1.0])
    assert pair.epsilon(DELTA).value == pytest.approx(1.0, rel=1e-6)


def test_a_laplace_distribution_is_read_as_laplace() -> None:
    # s + Laplace(0, 2): on the pair the shift is 1 at scale 2, pure epsilon 1/2 exactly.
    def glue(x, n, rng):
        torch.manual_seed(_seed(rng))
        return lib.noisy_sum_dist(x, n, 2.0, family="Laplace")
    pair = derive_pair(glue, [1.0, 1.0], [1.0])
    assert not isinstance(pair, NotDerivable), pair
    assert pair.family == "laplace" and pair.epsilon(0.0).value == pytest.approx(0.5, rel=1e-12)


def test_rsample_keeps_gradients() -> None:
    def glue(x, n, rng):
        torch.manual_seed(_seed(rng))
        loc = torch.tensor(float(np.sum(x)), dtype=F64, requires_grad=True)
        y = torch.distributions.Normal(loc, torch.tensor(SIGMA, dtype=F64)).rsample((n,))
        y.sum().backward()
        assert loc.grad is not None and float(loc.grad) == n  # d/dloc of the sum of n draws
        return y.detach()
    law = derive_law(glue, [1.0, 1.0])
    assert not isinstance(law, NotDerivable), law
    np.testing.assert_allclose(law.A, [[SIGMA]], rtol=1e-12)


@pytest.mark.parametrize("mechanism,words", [
    (rand_gate, "torch.rand (torch)"),
    (unseen_half, "did not see"),
    (seed_reused, "also reaches its output"),
    (lambda x, n, rng: torch.nn.functional.dropout(torch.ones(n, dtype=F64), 0.5, True)
     + torch.normal(0.0, 1.0, size=(n,), dtype=F64), "torch.nn.functional.dropout"),
    (lambda x, n, rng: torch.nn.Linear(1, 1)(torch.ones(n, 1)).detach()[:, 0]
     + torch.normal(0.0, 1.0, size=(n,)), "Tensor.uniform_"),
    (lambda x, n, rng: lib.noisy_sum(x, n, SIGMA, generator=PRE_AUDIT),
     "torch.Generator made before the audit"),
])
def test_a_draw_the_source_does_not_own_makes_the_law_not_derivable(mechanism, words) -> None:
    res = derive_law(mechanism, [1.0, 1.0])
    assert isinstance(res, NotDerivable) and words in res.reason, res
    assert "draws rng.integers" not in res.reason  # the misnaming the source exists to end


PRE_AUDIT = torch.Generator().manual_seed(0)


def test_dropout_in_eval_mode_draws_nothing_and_is_not_foreign() -> None:
    def glue(x, n, rng):
        torch.manual_seed(_seed(rng))
        h = torch.nn.functional.dropout(lib._s(x).expand(n), 0.5, training=False)
        return h + torch.normal(0.0, SIGMA, size=(n,), dtype=F64)
    assert derive_pair(glue, [1.0, 1.0], [1.0]).epsilon(DELTA).value == pytest.approx(1.0, 1e-6)


@pytest.mark.parametrize("mechanism,what", [(state_cancel, "torch.get_rng_state"),
                                            (state_cancel_c, "did not see")])
def test_state_saved_and_restored_is_a_guarded_access(mechanism, what) -> None:
    res = derive_law(mechanism, [1.0, 1.0])
    assert isinstance(res, NotDerivable) and res.guarded and what in res.reason, res


def test_generator_state_access_is_guarded() -> None:
    def glue(x, n, rng):
        gen = torch.Generator()
        gen.manual_seed(_seed(rng))
        st = gen.get_state()
        z1 = torch.normal(0.0, SIGMA, size=(n,), generator=gen, dtype=F64)
        gen.set_state(st)
        return lib._s(x) + z1 - 0.5 * torch.normal(0.0, SIGMA, size=(n,), generator=gen,
                                                   dtype=F64)
    res = derive_law(glue, [1.0, 1.0])
    assert isinstance(res, NotDerivable) and res.guarded and "Generator.get_state" in res.reason


# -- hostile and correct releases through the public API -------------------------------------

@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_torch_releases_never_hold(name: str, seed: int) -> None:
    mechanism, truth, _ = HOSTILE[name]
    assert truth > 1.0
    result = dpaudit.audit_claim(claim(name, mechanism), budget="quick", seed=seed)
    assert result.verdict != "holds", name
    for p in result.points:
        if p.evidence.get("exact_source") == "derived from the code":
            assert p.epsilon_exact > 1.0, (name, p.epsilon_exact)


@pytest.mark.parametrize("name", ["normal", "generator"])
def test_correct_torch_releases_hold(name: str) -> None:
    result = dpaudit.audit_claim(claim(name, CORRECT[name]), budget="quick", seed=0)
    assert result.verdict == "holds", [(c.statement, c.status) for c in result.lemmas]
    (p,) = result.points
    assert p.evidence["exact_source"] == "derived from the code"


@pytest.mark.parametrize("mechanism", [glue_half, glue_generator_half])
def test_violated_claims_read_an_exact_epsilon_from_torch_code(mechanism) -> None:
    # truth gaussian_eps(2 / SIGMA) at 1e-5 by hand; the derived value within 2% of it.
    truth = gaussian_eps(2 * MU, DELTA)
    result = dpaudit.audit_claim(claim("half", mechanism), budget="quick", seed=0)
    (p,) = result.points
    assert result.verdict == "violated"
    assert p.evidence["exact_source"] == "derived from the code"
    assert p.epsilon_exact == pytest.approx(truth, rel=0.02)


def test_the_guard_blocks_holds_for_a_torch_state_saved_and_restored() -> None:
    result = dpaudit.audit_claim(claim("sc", state_cancel), budget="quick", seed=0)
    assert result.verdict != "holds"
    assert any(c.statement == GUARD_STATEMENT and c.status == "violated" for c in result.lemmas)


# -- a 16-step noisy-gradient trajectory -----------------------------------------------------
# Full batch, linear loss -<w, x_i> from w = 0: per-record gradients -x_i clipped to norm C,
# summed (G), plus N(0, (nm C)^2 I); w_t = -lr sum_{s<=t} (G + nm C z_s), all T iterates released.
# By hand: the trajectory is an invertible linear image of the increments G + nm C z_t, t = 1..T,
# T independent Gaussian mechanisms whose shift is the removed record's clipped gradient (norm
# C here: ||x'|| = 5 > C = 1), so mu = sqrt(T) C / (nm C) = sqrt(T) / nm (Dong, Roth & Su 2022,
# Cor. 3.3) and epsilon(delta) follows from Balle & Wang (2018, Thm 8).

STEPS, LR, CLIP = 16, 0.1, 1.0
X0 = [[0.3, 0.4], [-0.2, 0.1], [3.0, 4.0]]
X1 = X0[:2]


def trainer(nm: float, dtype=F64):
    def release(x, n, rng):
        torch.manual_seed(_seed(rng))
        return lib.train_linear(x, n, STEPS, LR, nm, CLIP, dtype=dtype)
    return release


@pytest.mark.parametrize("dtype", [F64, torch.float32])
@pytest.mark.parametrize("nm", [4 * SIGMA, 2 * SIGMA])
def test_a_16_step_trajectory_law_is_derived_within_2_percent(nm: float, dtype) -> None:
    # float32 (torch's default) rounds at 6e-8: the derivation allows rtol_for(eps32) = 3.1e-5
    truth = gaussian_eps(math.sqrt(STEPS) / nm, DELTA)
    pair = derive_pair(trainer(nm, dtype), X0, X1)
    assert not isinstance(pair, NotDerivable), pair
    assert pair.law0.A.shape == (STEPS * 2, STEPS * 2)
    assert pair.law0.draws[0].site == f"{LIB}:{_line('NOISE-TRAIN')}"
    assert pair.epsilon(DELTA).value == pytest.approx(truth, rel=0.02)


@pytest.mark.parametrize("dtype", [F64, torch.float32])
def test_a_16_step_trajectory_under_a_4_step_accountant_is_violated(dtype) -> None:
    # nm = 2 SIGMA over 16 steps: mu = 4 / (2 SIGMA) = 2 / SIGMA, epsilon 3.3 by hand; the
    # accountant believes 4 steps (mu 1 / SIGMA, epsilon 1).
    nm = 2 * SIGMA
    truth = gaussian_eps(2 * MU, DELTA)
    c = dpaudit.Claim(
        id="torch/trajectory", statement="16 noisy steps are (1, 1e-5)-DP.",
        source=dpaudit.Source(title="torch trajectory"), claimed=lambda p: (1.0, DELTA),
        neighbours="add-remove", grid=[{}], release=lambda p: trainer(nm, dtype),
        pairs=lambda p: [(X0, X1)],
        accountant=lambda p: dpaudit.noise.GaussianNoise(nm * CLIP, sensitivity=CLIP,
                                                         releases=4))
    result = dpaudit.audit_claim(c, budget="quick", seed=0)
    (p,) = result.points
    assert result.verdict == "violated"
    assert p.evidence["exact_source"] == "derived from the code"
    assert p.epsilon_exact == pytest.approx(truth, rel=0.02)


def test_a_correct_float32_trajectory_holds() -> None:
    # nm = 4 SIGMA over 16 steps: mu = 1 / SIGMA, epsilon 1 by hand, the accountant's too.
    nm = 4 * SIGMA
    c = dpaudit.Claim(
        id="torch/trajectory-ok", statement="16 noisy steps are (1, 1e-5)-DP.",
        source=dpaudit.Source(title="torch trajectory"), claimed=lambda p: (1.0, DELTA),
        neighbours="add-remove", grid=[{}], release=lambda p: trainer(nm, torch.float32),
        pairs=lambda p: [(X0, X1)],
        accountant=lambda p: dpaudit.noise.GaussianNoise(nm * CLIP, sensitivity=CLIP,
                                                         releases=STEPS))
    result = dpaudit.audit_claim(c, budget="quick", seed=0)
    assert result.verdict == "holds", [(x.statement, x.status) for x in result.lemmas]
    assert result.points[0].evidence["exact_source"] == "derived from the code"


# -- invariance -----------------------------------------------------------------------------

N_REF = 10


def scale_by_len(x, n, rng):  # dp-recorder's pattern: a noise scale normalised by len(data)
    torch.manual_seed(_seed(rng))
    return lib._s(x) + torch.normal(0.0, SIGMA * N_REF / len(x), size=(n,), dtype=F64)


def test_a_data_dependent_torch_noise_scale_is_an_invariance_finding() -> None:
    d0, d1 = [1.0] * N_REF, [1.0] * (N_REF - 1)
    inv = check_invariance(scale_by_len, d0, d1, seed=0)
    (f,) = inv.findings
    assert f.kind == "scale" and f.value0 == f"{SIGMA:.6g}" and \
        f.value1 == f"{SIGMA * N_REF / (N_REF - 1):.6g}"
    assert f.site.endswith(f"test_torch_source.py:{scale_by_len.__code__.co_firstlineno + 2}")
    result = dpaudit.audit_claim(claim("scale-by-len", scale_by_len, pairs=lambda p: [(d0, d1)]),
                                 budget="quick", seed=0)
    assert result.verdict != "holds"
    assert any(c.statement == INVARIANCE_STATEMENT and c.status == "violated"
               for c in result.lemmas)


def test_an_invariant_torch_release_has_no_finding() -> None:
    inv = check_invariance(glue_generator, [1.0, 1.0], [1.0], seed=0)
    assert inv.invariant and inv.calls == 1 and inv.sources == (MADE,)


# -- outputs --------------------------------------------------------------------------------

def test_tensor_outputs_are_read_as_numpy_in_every_structure() -> None:
    from dpaudit.release_outputs import plain_arrays, release_table
    w = torch.ones(3, 2, requires_grad=True) * 2  # a tensor in an autograd graph
    table = release_table(plain_arrays({"w": w, "b": torch.zeros(3, dtype=torch.bfloat16)}), 3)
    assert table.columns == ("w[0]", "w[1]", "b") and np.array_equal(
        table.values, np.column_stack([np.full((3, 2), 2.0), np.zeros(3)]))
    assert isinstance(plain_arrays((w, w))[0], np.ndarray)
    x = np.arange(3.0)
    assert plain_arrays(x) is x and plain_arrays([x, 1.0])[0] is x


# -- real opacus 1.6 -------------------------------------------------------------------------
# DPOptimizer.add_noise draws torch.normal(0, nm * C, size=p.shape, generator=self.generator)
# in opacus.optimizers.optimizer._generate_noise. The glue builds a 2-weight linear model, the
# loss -sum_i <w, x_i> (per-sample gradients -x_i, loss_reduction "sum" in both the
# GradSampleModule and the optimizer), and releases the T iterates of a full-batch run. By hand,
# exactly as for the trajectory above: mu = sqrt(T) ||clip(x')|| / (nm C) = sqrt(T) / nm (opacus
# clips with factor C / (||g|| + 1e-6), so ||clip(x')|| = 5 / (5 + 1e-6), a 2e-7 effect).

OPACUS_STEPS = 3


def opacus_trainer(nm: float, steps: int = OPACUS_STEPS, lr: float = 0.1, C: float = 1.0):
    from opacus import GradSampleModule
    from opacus.optimizers import DPOptimizer

    def release(x, n, rng):
        gen = torch.Generator()
        gen.manual_seed(_seed(rng))
        X = torch.as_tensor(x, dtype=F64)
        model = torch.nn.utils.skip_init(torch.nn.Linear, 2, 1, bias=False, dtype=F64)
        gsm = GradSampleModule(model, loss_reduction="sum")
        opt = DPOptimizer(torch.optim.SGD(gsm.parameters(), lr=lr), noise_multiplier=nm,
                          max_grad_norm=C, expected_batch_size=len(x), loss_reduction="sum",
                          generator=gen)
        runs = []
        for _ in range(n):
            with torch.no_grad():
                model.weight.zero_()
            traj = []
            for _ in range(steps):
                opt.zero_grad()
                (-gsm(X).sum()).backward()
                opt.step()
                traj.append(model.weight.detach().clone().reshape(-1))
            runs.append(torch.cat(traj))
        return torch.stack(runs)
    return release


@pytest.mark.filterwarnings("ignore")
def test_opacus_dp_optimizer_law_is_derived_from_its_code() -> None:
    pytest.importorskip("opacus")
    import opacus.optimizers.optimizer as opt_mod
    nm = 2 * SIGMA
    truth = gaussian_eps(math.sqrt(OPACUS_STEPS) / nm, DELTA)
    pair = derive_pair(opacus_trainer(nm), X0, X1)
    assert not isinstance(pair, NotDerivable), pair
    (site,) = {d.site for d in pair.law0.draws}
    assert site.startswith(os.path.abspath(opt_mod.__file__) + ":")  # inside opacus
    assert {d.source for d in pair.law0.draws} == {MADE}
    assert pair.epsilon(DELTA).value == pytest.approx(truth, rel=0.02)
    # A full audit_claim of this release at the quick budget takes 6.5 minutes on this machine
    # (about 5 ms per opacus run, 3 optimizer steps, for 20,000 black-box runs per input plus
    # the verification's runs): the audit path is pinned by the float32 trajectory tests above.


# -- jax: out of reach, never silently wrong --------------------------------------------------

def test_a_jax_release_seeded_from_the_rng_is_not_derivable_and_says_why() -> None:
    jax = pytest.importorskip("jax")

    def glue(x, n, rng):  # jax.random.normal on a key from a seed drawn from the rng
        key = jax.random.PRNGKey(int(rng.integers(2**31)))
        return float(np.sum(x)) + np.asarray(jax.random.normal(key, (n,)), dtype=float) * SIGMA
    res = derive_law(glue, [1.0, 1.0])
    assert isinstance(res, NotDerivable) and "jax PRNGKey" in res.reason, res
    assert not res.guarded  # the declared accountant may still decide; only no law is read


# -- black-box runs on Dask workers -------------------------------------------------------------

@pytest.mark.filterwarnings("ignore")
def test_black_box_runs_of_a_torch_release_are_the_same_on_dask_workers(monkeypatch) -> None:
    # The black box's chunks get their own seeds (SeedSequence.spawn), the glue seeds torch from
    # the chunk's rng, and torch draws the same values for a seed in any process: the bound must
    # be the same number in-process and on two worker processes, exactly.
    pytest.importorskip("distributed")
    from distributed import LocalCluster

    from dpaudit.blackbox.empirical_audit import audit
    from dpaudit.execution.executors import DaskExecutor
    here = os.path.dirname(os.path.abspath(__file__))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [here] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    mech = trainer(2 * SIGMA)
    kw = dict(epsilon=1.0, delta=DELTA, samples=40_000, seed=3)
    local = audit(mech, X0, X1, **kw)
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                           dashboard_address=None)
    try:
        ex = DaskExecutor(scheduler=cluster.scheduler_address)
        try:
            remote = audit(mech, X0, X1, executor=ex, **kw)
        finally:
            ex.close()
    finally:
        cluster.close()
    assert remote.epsilon_lower_bound == local.epsilon_lower_bound
    assert local.epsilon_lower_bound > 0  # the check had something to compare
