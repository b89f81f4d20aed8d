"""Named primitives ("trusted primitives", dp-recorder PETS 2026): noise no draw source sees.

The library (tests/_primitive_lib.py) draws with Python's ``random``, which dpaudit's draw
sources do not read, so the only evidence drawn from the code about the noise is what a named
primitive records: the values, scales and declared sensitivities reaching it on both inputs of a
declared pair. The expected numbers are derived by hand in each test (k Laplace calls at scale b
and sensitivity D: epsilon = k D / b, Dwork & Roth 2014 Thm 3.16; k Gaussian calls: one Gaussian
mechanism with mu = sqrt(k) D / sigma, whose epsilon(delta) is Balle & Wang 2018 Thm 8, solved
here with brentq independently of dpaudit).
"""

from __future__ import annotations

import math
import random
import re
import threading
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.stats import norm

import _primitive_lib as lib
from _primitive_lib import laplace_noise as bound_laplace  # bound at import: the patch misses it
import dpaudit
from dpaudit import Claim, Primitive, Source
from dpaudit.claims.primitive_check import (INVARIANCE_STATEMENT, POSTPROCESSING_STATEMENT,
                                            REACHED_STATEMENT,
                                            SENSITIVITY_STATEMENT, TRUSTED, TRUSTED_SOURCE)
from dpaudit.greybox.primitives import record_release

LAPLACE = Primitive(path="_primitive_lib.laplace_noise", family="laplace", value="value",
                    scale="scale", sensitivity=1.0)
GAUSS = Primitive(path="_primitive_lib.GaussianMechanism.randomise", family="gaussian",
                  value="value", scale="self.sigma", sensitivity="self.sensitivity")
PAIR = ([1.0, 0.0, 1.0], [1.0, 0.0])   # add-remove neighbours: the clipped sum moves by 1


def _laplace_release(k: int, b: float, *, double: bool = False, scale_of_data: bool = False):
    """The user's glue: seeds Python's random from the rng and calls the library k times."""
    def release(p):
        def mechanism(data, n, rng):
            random.seed(int(rng.integers(2**31)))
            x = np.clip(np.asarray(data, dtype=float), 0.0, 1.0)
            out = np.empty((n, k))
            for r in range(n):
                for j in range(k):
                    value = x.sum() * (2.0 if double else 1.0)
                    scale = 1.0 / len(x) if scale_of_data else b
                    out[r, j] = lib.laplace_noise(value, scale)
            return out
        return mechanism
    return release


def _claim(release, eps: float, delta: float = 0.0, primitives=(LAPLACE,), cid="prim/lap",
           **kw) -> Claim:
    return Claim(id=cid, statement="the noisy sums are (eps, delta)-DP under add/remove",
                 source=Source(title="named-primitive test glue"),
                 claimed=lambda p: (eps, delta), neighbours="add-remove", grid=[{"k": 1}],
                 release=release, pairs=lambda p: [PAIR], primitives=list(primitives), **kw)


def _check(result, statement):
    return next(c for c in result.lemmas if c.statement == statement)


def test_correct_glue_is_accounted_from_the_primitives_laws(tmp_path):
    # k = 3 Laplace calls at b = 4, declared D = 1: epsilon = 3 * 1 / 4 = 0.75 (pure composition).
    release = _laplace_release(3, 4.0)
    res = dpaudit.audit_claim(_claim(release, 0.75), budget="quick", seed=0, out=tmp_path)
    w = res.worst_point()
    assert w.epsilon_accountant == pytest.approx(0.75, rel=1e-12)
    assert w.evidence["accountant_source"] == TRUSTED_SOURCE
    assert w.evidence["evidence_origin"]["accountant"] == TRUSTED
    rec = w.evidence["primitives"]
    assert rec["calls"] == [3, 3] and rec["pieces"][0]["calls"] == 3
    assert rec["worst_ratio"] == pytest.approx(1.0)        # the sum moves by exactly D = 1
    assert res.verdict == "holds"
    assert "trusted primitives" in res.verdict_and_reason[1]
    for s in (REACHED_STATEMENT, INVARIANCE_STATEMENT, SENSITIVITY_STATEMENT):
        assert _check(res, s).status == "holds"
    # the JSON carries the label as its own origin (not "derived from the code", not the user's)
    ev = res.to_dict()["points"][0]["evidence"]
    assert ev["evidence_origin"]["accountant"] == TRUSTED
    md = next(tmp_path.rglob("lap.md")).read_text()
    assert "accountant epsilon (trusted primitives) 0.75" in md
    assert "trusted primitives" in next(tmp_path.rglob("lap.html")).read_text()


def test_a_claim_below_the_primitives_epsilon_does_not_hold():
    # Same glue (true epsilon 0.75) claimed at 0.3: the accounted 0.75 > 0.3 alone makes it at
    # best inconclusive; the black box at the quick budget (seed 0) also bounds it above 0.3
    # (it reaches ~0.9 of the truth on this one-dimensional pair, see the first test's run), so
    # it is violated. Either way it must not hold.
    res = dpaudit.audit_claim(_claim(_laplace_release(3, 4.0), 0.3, cid="prim/lap-low"),
                              budget="quick", seed=0)
    assert res.worst_point().epsilon_accountant == pytest.approx(0.75)
    assert res.verdict == "violated"


def test_understated_sensitivity_is_a_finding_with_both_numbers():
    # The glue doubles the sum (moves by 2) but declares D = 1: measured 2 > declared 1.
    res = dpaudit.audit_claim(_claim(_laplace_release(1, 4.0, double=True), 0.25,
                                     cid="prim/lap-double"), budget="quick", seed=0)
    chk = _check(res, SENSITIVITY_STATEMENT)
    assert chk.status == "violated" and chk.worst_ratio == pytest.approx(2.0)
    f = chk.counterexample["findings"][0]
    assert (f["data0"], f["data1"]) == ("2", "1")           # measured, declared
    assert "move by 2 (l1), above the declared sensitivity 1" in f["what"]
    assert res.verdict != "holds"
    assert any("above the declared sensitivity 1" in x for x in res.findings)


def test_a_scale_read_from_the_data_is_an_invariance_finding_naming_both_scales():
    res = dpaudit.audit_claim(_claim(_laplace_release(1, 4.0, scale_of_data=True), 10.0,
                                     cid="prim/lap-scale"), budget="quick", seed=0)
    chk = _check(res, INVARIANCE_STATEMENT)
    assert chk.status == "violated"
    f = chk.counterexample["findings"][0]
    assert f["kind"] == "scale" and (f["data0"], f["data1"]) == ("0.333333", "0.5")
    assert res.verdict != "holds"
    # the accounting is the largest over the recorded inputs: 1 / (1/3) = 3
    assert res.worst_point().epsilon_accountant == pytest.approx(3.0)


def _balle_wang_epsilon(mu: float, delta: float) -> float:
    """epsilon(delta) of the Gaussian mechanism with shift/sigma = mu (Balle & Wang 2018, Thm 8:
    delta(eps) = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu))."""
    def gap(eps):
        return norm.cdf(mu / 2 - eps / mu) - math.exp(eps) * norm.cdf(-mu / 2 - eps / mu) - delta
    return brentq(gap, 0.0, 100.0, xtol=1e-12)


def test_gaussian_primitive_matches_dp_accounting_and_the_analytic_gaussian():
    import dp_accounting
    from dp_accounting.pld import pld_privacy_accountant

    k, sigma, D, delta = 4, 3.0, 1.0, 1e-5   # mu = 2/3: epsilon(1e-5) = 2.75, claimed 3

    def release(p):
        def mechanism(data, n, rng):
            random.seed(int(rng.integers(2**31)))
            m = lib.GaussianMechanism(sigma, D)
            s = float(np.clip(data, 0, 1).sum())
            return np.array([[m.randomise(s) for _ in range(k)] for _ in range(n)])
        return mechanism

    res = dpaudit.audit_claim(_claim(release, 3.0, delta, primitives=[GAUSS], cid="prim/gauss"),
                              budget="quick", seed=0)
    acc = res.worst_point().epsilon_accountant
    # dp-accounting's own PLD of k Gaussian events with noise multiplier sigma / D (its
    # discretisation is pessimistic: within 1e-3 relative at the default interval).
    pld = pld_privacy_accountant.PLDAccountant()
    pld.compose(dp_accounting.GaussianDpEvent(sigma / D), k)
    assert acc == pytest.approx(pld.get_epsilon(delta), rel=1e-3)
    # the closed form: k calls are one Gaussian mechanism with mu = sqrt(k) D / sigma
    assert acc == pytest.approx(_balle_wang_epsilon(math.sqrt(k) * D / sigma, delta), rel=1e-6)
    assert res.verdict == "holds"


def test_discrete_laplace_calls_match_dp_accountings_own_pld():
    # k = 5 geometric-mechanism calls at t = 4 (P(k) ~ exp(-|k|/4)), declared D = 1.5 -> the
    # integer distance 2: pure epsilon 5 * 2 / 4 = 2.5; at delta = 1e-5 dp-accounting's own PLD
    # of the discrete Laplace (parameter 1/t, sensitivity 2) composed 5 times (same
    # discretisation as the guarded accountant's: equal to 1e-6).
    from dp_accounting.pld import privacy_loss_distribution as pld

    from dpaudit.claims.primitive_check import accounted_epsilon
    from dpaudit.greybox.primitives import PrimitiveCall

    calls = [PrimitiveCall(0, "lib.geometric", "discrete laplace", "glue.py:1", np.array(3.0),
                           np.array(4.0), 1.5)] * 5
    assert accounted_epsilon(calls, 0.0, "add-remove")[0] == pytest.approx(2.5, rel=1e-12)
    want = pld.from_discrete_laplace_mechanism(0.25, sensitivity=2).self_compose(5) \
        .get_epsilon_for_delta(1e-5)
    got = accounted_epsilon(calls, 1e-5, "replace-one")[0]   # a distance: the relation is moot
    assert got == pytest.approx(want, rel=1e-6) and got <= 2.5


def test_with_a_declared_accountant_too_the_larger_decides():
    from dpaudit.claims.primitive_check import with_primitives

    rec = {"epsilon": 0.75, "accountant": "3 laplace call(s)"}
    # the claim's accountant under-states the primitives' composition: theirs is the accountant
    assert with_primitives(0.5, "dpaudit", "schedule", rec)[:2] == (0.75, TRUSTED_SOURCE)
    # it is above theirs: it stays, and its text names the primitives' number
    acc, source, text = with_primitives(0.9, "dpaudit", "schedule", rec)
    assert (acc, source) == (0.9, "dpaudit") and "0.75" in text
    assert with_primitives(None, "", "", {"epsilon": None}) == (None, "", "")


def test_a_claim_without_primitives_gets_no_primitive_checks():
    def mechanism(data, n, rng):
        return float(np.sum(data)) + rng.laplace(0.0, 1.0, size=n)
    claim = Claim(id="prim/none", statement="s", source=Source(title="t"),
                  claimed=lambda p: (1.0, 0.0), neighbours="add-remove", grid=[{"k": 1}],
                  release=lambda p: mechanism, pairs=lambda p: [PAIR])
    res = dpaudit.audit_claim(claim, budget="quick", seed=0)
    statements = {c.statement for c in res.lemmas}
    assert not statements & {REACHED_STATEMENT, INVARIANCE_STATEMENT, SENSITIVITY_STATEMENT}
    assert "primitives" not in res.worst_point().evidence


def test_replace_one_reads_the_declared_sensitivity_as_the_distance():
    # Under replace-one the declared sensitivity is already the distance (not doubled): one
    # Laplace call at b = 2 declared D = 1 is 0.5-DP under either relation.
    def mechanism(data, n, rng):
        random.seed(int(rng.integers(2**31)))
        return np.array([lib.laplace_noise(float(np.clip(data, 0, 1).sum()), 2.0)
                         for _ in range(n)])
    claim = Claim(id="prim/replace", statement="s", source=Source(title="t"),
                  claimed=lambda p: (0.5, 0.0), neighbours="replace-one", grid=[{"k": 1}],
                  release=lambda p: mechanism, pairs=lambda p: [([1.0, 0.0], [0.0, 0.0])],
                  primitives=[LAPLACE])
    res = dpaudit.audit_claim(claim, budget="quick", seed=0)
    assert res.worst_point().epsilon_accountant == pytest.approx(0.5, rel=1e-12)


def test_a_primitive_never_called_is_a_finding_not_an_empty_accounting():
    # The glue calls laplace_noise; the claim names only the Gaussian class: nothing recorded.
    res = dpaudit.audit_claim(_claim(_laplace_release(1, 4.0), 10.0, primitives=[GAUSS],
                                     cid="prim/never"), budget="quick", seed=0)
    chk = _check(res, REACHED_STATEMENT)
    assert chk.status == "violated" and "never called" in chk.counterexample["detail"]
    assert res.worst_point().epsilon_accountant is None
    assert res.verdict != "holds"


def test_a_primitive_bound_before_the_audit_is_said_to_be_never_called():
    # `from module import function` at import time holds the original: nothing is recorded, and
    # the check says so instead of accounting zero calls.
    def mechanism(data, n, rng):
        random.seed(int(rng.integers(2**31)))
        return np.array([bound_laplace(float(np.sum(data)), 1.0) for _ in range(n)])
    res = dpaudit.audit_claim(_claim(lambda p: mechanism, 10.0, cid="prim/bound"),
                              budget="quick", seed=0)
    chk = _check(res, REACHED_STATEMENT)
    assert chk.status == "violated" and "bound before the audit" in chk.counterexample["detail"]
    assert res.verdict != "holds"


def test_a_non_numeric_value_is_a_finding_not_a_crash():
    prim = Primitive(path="_primitive_lib.GaussianMechanism.helper", family="gaussian",
                     value="value", scale="scale", sensitivity=1.0)

    def mechanism(data, n, rng):
        lib.GaussianMechanism.helper("a label", 1.0)
        return rng.laplace(float(np.sum(data)), 1.0, size=n)
    rec = record_release(mechanism, [1.0], [prim], seed=0)
    assert "non-numeric str" in rec.calls[0].problem
    res = dpaudit.audit_claim(_claim(lambda p: mechanism, 10.0, primitives=[prim],
                                     cid="prim/nonnum"), budget="quick", seed=0)
    assert _check(res, REACHED_STATEMENT).status == "violated"
    assert res.verdict != "holds"


def test_a_nan_value_or_scale_is_a_problem_never_a_silent_distance():
    # NaN - NaN is NaN, and NaN > declared is False: a NaN value must be named, not pass.
    def mechanism(data, n, rng):
        lib.laplace_noise(float("nan"), 1.0)
        lib.laplace_noise(1.0, float("nan"))
        return rng.laplace(0.0, 1.0, size=n)
    calls = record_release(mechanism, [1.0], [LAPLACE], seed=0).calls
    assert "value 'value' is not finite" in calls[0].problem
    assert "scale is not finite" in calls[1].problem


def test_the_patch_is_restored_and_other_threads_are_not_recorded():
    original = lib.laplace_noise
    seen = []

    def mechanism(data, n, rng):
        t = threading.Thread(target=lambda: seen.append(lib.laplace_noise(0.0, 1.0)))
        t.start()
        t.join()
        return lib.laplace_noise(float(np.sum(data)), 1.0)
    rec = record_release(mechanism, [1.0, 2.0], [LAPLACE], seed=0)
    assert len(rec.calls) == 1 and float(rec.calls[0].value) == 3.0 and len(seen) == 1
    assert rec.calls[0].site.endswith(f"test_named_primitives.py:{_line_of('return lib.lap')}")
    assert lib.laplace_noise is original
    assert "randomise" in vars(lib.GaussianMechanism)


def test_values_are_read_by_name_or_position_for_functions_methods_and_classmethods():
    by_pos = Primitive(path="_primitive_lib.SubMechanism.randomise", family="gaussian", value=0,
                       scale=lambda call: call["self"].sigma, sensitivity=0.5)
    cls_m = Primitive(path="_primitive_lib.SubMechanism.noisy", family="gaussian", value="value",
                      scale=1, sensitivity="sigma")
    static = Primitive(path="_primitive_lib.GaussianMechanism.helper", family="laplace",
                       value=0, scale="scale", sensitivity=1.0)

    def mechanism(data, n, rng):
        m = lib.SubMechanism(2.0, 1.0)
        m.randomise([1.0, 2.0])                     # position 0 after self
        m.randomise(value=[3.0])                    # the same argument by keyword
        lib.SubMechanism.noisy(4.0, sigma=0.25)     # a classmethod: cls not counted
        lib.GaussianMechanism.helper(5.0, scale=3.0)
        return rng.laplace(0.0, 1.0, size=n)
    calls = record_release(mechanism, [0.0], [by_pos, cls_m, static], seed=0).calls
    got = [(c.path.rsplit(".", 1)[-1], c.value.tolist(), float(c.scale), c.sensitivity)
           for c in calls]
    assert got == [("randomise", [1.0, 2.0], 2.0, 0.5), ("randomise", [3.0], 2.0, 0.5),
                   ("noisy", 4.0, 1.0, 0.25), ("helper", 5.0, 3.0, 1.0)]
    assert all(not c.problem for c in calls)
    # restored: the subclass inherits again (no attribute of its own), the others are the originals
    assert "randomise" not in vars(lib.SubMechanism)
    assert isinstance(vars(lib.SubMechanism)["noisy"], classmethod)
    assert isinstance(vars(lib.GaussianMechanism)["helper"], staticmethod)


def test_an_attribute_the_instance_lacks_is_a_problem_of_the_call():
    prim = Primitive(path="_primitive_lib.GaussianMechanism.randomise", family="gaussian",
                     value="value", scale="self.noise_scale", sensitivity=1.0)

    def mechanism(data, n, rng):
        lib.GaussianMechanism(1.0, 1.0).randomise(1.0)
        return rng.laplace(0.0, 1.0, size=n)
    call = record_release(mechanism, [0.0], [prim], seed=0).calls[0]
    assert "scale could not be read (AttributeError" in call.problem


def _line_of(text: str) -> int:
    lines = Path(__file__).read_text().splitlines()
    return next(i + 1 for i, line in enumerate(lines) if line.strip().startswith(text))


@pytest.mark.parametrize("kw, name", [
    ({"path": "_primitive_lib.no_such_function"}, "Primitive.path"),
    ({"path": "no_such_package.sampler"}, "Primitive.path"),
    ({"path": "nodots"}, "Primitive.path"),
    ({"value": "x"}, "Primitive.value"),
    ({"value": 7}, "Primitive.value"),
    ({"scale": "b"}, "Primitive.scale"),
    ({"scale": "self.sigma"}, "Primitive.scale"),     # not a method: no instance to read
    ({"scale": -1.0}, "Primitive.scale"),
    ({"sensitivity": "delta"}, "Primitive.sensitivity"),
    ({"sensitivity": -1.0}, "Primitive.sensitivity"),
    ({"family": "cauchy"}, "Primitive.family"),
])
def test_bad_primitive_input_is_a_value_error_naming_the_parameter(kw, name):
    args = dict(path="_primitive_lib.laplace_noise", family="laplace", value="value",
                scale="scale", sensitivity=1.0)
    args.update(kw)
    with pytest.raises(ValueError, match=re.escape(name)):
        Primitive(**args)


def test_claim_primitives_must_be_primitives():
    with pytest.raises(TypeError, match="Claim.primitives"):
        _claim(_laplace_release(1, 1.0), 1.0, primitives=["_primitive_lib.laplace_noise"])
    with pytest.raises(ValueError, match="Claim.primitives names a path twice"):
        _claim(_laplace_release(1, 1.0), 1.0, primitives=[LAPLACE, LAPLACE])


def test_the_claim_api_example_runs():
    # docs/claim-api.md's "Named primitives" example, run as written.
    text = (Path(__file__).resolve().parents[1] / "docs" / "claim-api.md").read_text()
    section = text.split("## Named primitives", 1)[1]
    block = re.search(r"```python\n(.*?)\n```", section, re.S).group(1)
    scope: dict = {"__name__": "claim_api_primitives"}
    exec(compile(block, "docs/claim-api.md", "exec"), scope)
    assert scope["result"].verdict == "holds"


@pytest.mark.libraries
def test_an_opendp_measurement_named_as_a_primitive():
    # OpenDP draws from the OS's entropy (no draw source sees it); its Measurement.__call__ is
    # named, the scale read through OpenDP's own privacy map (Laplace: map(d_in) = d_in / b).
    # Glue calls it twice at b = 2 on the count, declared D = 1: epsilon = 2 * 1 / 2 = 1.
    pytest.importorskip("opendp")
    import opendp.prelude as dp

    dp.enable_features("contrib")
    meas = dp.m.make_laplace(dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float),
                             scale=2.0)
    prim = Primitive(path="opendp.mod.Measurement.__call__", family="laplace", value="arg",
                     scale=lambda call: 1.0 / float(call["self"].map(1.0)), sensitivity=1.0)

    def release(factor):
        def mechanism(data, n, rng):
            count = float(np.clip(data, 0, 1).sum()) * factor
            return np.array([[meas(count), meas(count)] for _ in range(n)])
        return lambda p: mechanism

    # The black box is not reproducible from the seed (OpenDP's own entropy): its valid lower
    # bound exceeds the truth (1, the accountant) with probability at most alpha = 1e-3, so
    # holds is the verdict except on such an event (claimed at 2, above the truth).
    res = dpaudit.audit_claim(_claim(release(1.0), 2.0, primitives=[prim], cid="prim/opendp",
                                     samples=2_000), budget="quick", seed=0, alpha=1e-3)
    w = res.worst_point()
    assert w.epsilon_accountant == pytest.approx(1.0, rel=1e-12)
    assert w.evidence["accountant_source"] == TRUSTED_SOURCE
    assert res.verdict == "holds"
    # The same glue passing twice the count while declaring D = 1: measured 2 > declared 1.
    res = dpaudit.audit_claim(_claim(release(2.0), 2.0, primitives=[prim],
                                     cid="prim/opendp-double", samples=2_000),
                              budget="quick", seed=0)
    chk = _check(res, SENSITIVITY_STATEMENT)
    assert chk.status == "violated" and chk.worst_ratio == pytest.approx(2.0)
    assert res.verdict != "holds"
    # OpenDP's integer Laplace is the discrete Laplace (geometric) mechanism at t = scale:
    # three calls on the integer count at t = 2, D = 1: pure epsilon 3 / 2.
    imeas = dp.m.make_laplace(dp.atom_domain(T=int), dp.absolute_distance(T=int), scale=2.0)
    iprim = Primitive(path="opendp.mod.Measurement.__call__", family="discrete laplace",
                      value="arg", scale=lambda call: 1.0 / float(call["self"].map(1)),
                      sensitivity=1)

    def integer_mechanism(data, n, rng):
        count = int(np.clip(data, 0, 1).sum())
        return np.array([[imeas(count) for _ in range(3)] for _ in range(n)], dtype=float)
    res = dpaudit.audit_claim(_claim(lambda p: integer_mechanism, 3.0, primitives=[iprim],
                                     cid="prim/opendp-int", samples=2_000),
                              budget="quick", seed=0, alpha=1e-3)
    assert res.worst_point().epsilon_accountant == pytest.approx(1.5, rel=1e-12)
    assert res.verdict == "holds"    # claimed at twice the truth (see above for the black box)


# ------------------------------------------------------- (d) the release is a post-processing


def _leaky_release(leak: float):
    """Correct glue plus ``leak * len(data)`` added after the noise: outside the primitive."""
    def release(p):
        def mechanism(data, n, rng):
            random.seed(int(rng.integers(2**31)))
            x = np.clip(np.asarray(data, dtype=float), 0.0, 1.0)
            out = np.empty((n, 3))
            for r in range(n):
                for j in range(3):
                    out[r, j] = lib.laplace_noise(x.sum(), 4.0) + leak * len(x)
            return out
        return mechanism
    return release


def test_a_served_replay_hands_back_the_given_values_and_counts_them():
    served = record_release(lambda d, n, rng: [lib.laplace_noise(np.sum(d), 1.0) for _ in "ab"],
                            [1.0], [LAPLACE], seed=3, serve=[np.array(10.0)])
    assert served.served == 1 and float(served.output[0]) == 10.0   # the first call is served
    assert float(served.output[1]) != 10.0 and len(served.calls) == 2  # the second one ran


def test_correct_glue_passes_the_post_processing_check(tmp_path):
    res = dpaudit.audit_claim(_claim(_laplace_release(3, 4.0), 0.75), budget="quick", seed=0,
                              out=tmp_path)
    assert _check(res, POSTPROCESSING_STATEMENT).status == "holds"
    assert res.worst_point().evidence["primitives"]["postprocessing"] == []
    assert res.verdict == "holds"


def test_data_reaching_the_output_outside_the_primitives_blocks_holds(tmp_path):
    # x.sum() + Lap(4) + 1e-3 * len(x), three times: on the pair the output moves by 1.001 per
    # call, so the true epsilon is 3 * 1.001 / 4 = 0.75075 > the claimed 0.75, which the
    # primitives' laws (0.75) and no black box at the quick budget can tell apart. The served
    # replay answers data1's calls with data0's noisy values: data1's output is then data0's
    # minus 1e-3 (one record fewer), a finding with both numbers.
    res = dpaudit.audit_claim(_claim(_leaky_release(1e-3), 0.75, cid="prim/leak"),
                              budget="quick", seed=0, out=tmp_path)
    w = res.worst_point()
    assert w.epsilon_accountant == pytest.approx(0.75, rel=1e-12)   # the laws alone say 0.75
    (f, *_) = w.evidence["primitives"]["postprocessing"]
    assert float(f["data0"]) - float(f["data1"]) == pytest.approx(1e-3, abs=1e-9)
    assert "outside the named primitives" in f["what"]
    assert _check(res, POSTPROCESSING_STATEMENT).status == "violated"
    assert res.verdict != "holds"
