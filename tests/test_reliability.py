"""Reliability regression tests of the engine: each failed on the code before its fix.

Engine (``dpaudit.audit``): object-dtype outputs, NaN/inf/None in any chunk, empty rows, wrong
arity, memory budget. Mechanisms: calibration messages at the edges of float range. The pytest
plugin: a missing input. The CLI and report files have their own regression tests in
``test_cli_reliability.py``.
"""

from __future__ import annotations

import numpy as np
import pytest

import dpaudit
from dpaudit.blackbox.empirical_audit import audit
from dpaudit.blackbox.sampling import check_memory_budget
from dpaudit.mechanisms.gaussian import GaussianMechanism, analytic_sigma, classical_sigma
from dpaudit.mechanisms.laplace import LaplaceMechanism
from dpaudit.testing import assert_dp


def half_scale_laplace(data, n, rng):
    """Laplace at half the scale a 1-DP claim needs: truly 2-DP."""
    return data + rng.laplace(0.0, 0.5, size=n)


def test_object_outputs_of_numbers_are_audited_as_numbers() -> None:
    # Before: astype(object) made every float its own "discrete outcome": bound 0, not violated.
    as_float = audit(half_scale_laplace, 0.0, 1.0, epsilon=1.0, samples=20_000, seed=0)
    as_object = audit(lambda d, n, g: half_scale_laplace(d, n, g).astype(object), 0.0, 1.0,
                      epsilon=1.0, samples=20_000, seed=0)
    assert as_float.verdict == as_object.verdict == "violated"
    assert as_object.epsilon_lower_bound == as_float.epsilon_lower_bound
    assert as_object.output_kind == "continuous"


def test_object_outputs_of_decimals_are_numbers_and_decimal_nan_is_refused() -> None:
    import decimal

    def decimals(d, n, g):
        x = np.array([decimal.Decimal(str(float(v))) for v in half_scale_laplace(d, n, g)],
                     dtype=object)
        if d == 1 and decimals.poison:
            x[2] = decimal.Decimal("NaN")
        return x
    decimals.poison = False
    r = audit(decimals, 0.0, 1.0, epsilon=1.0, samples=20_000, seed=0)
    assert r.output_kind == "continuous" and r.verdict == "violated"
    decimals.poison = True
    with pytest.raises(ValueError, match=r"data1.*returned nan in run 2 "):
        audit(decimals, 0.0, 1.0, samples=1_000)


def test_object_outputs_of_labels_stay_discrete() -> None:
    def labels(d, n, g):
        return np.array(["a", "b"], dtype=object)[(g.random(n) < (0.7 if d else 0.3)).astype(int)]
    r = audit(labels, 0, 1, epsilon=1.0, samples=5_000, seed=0)
    assert r.output_kind == "discrete"


@pytest.mark.parametrize("bad, word", [(np.nan, "nan"), (np.inf, "inf"), (None, "None")])
def test_non_finite_object_outputs_are_named_with_the_run(bad, word) -> None:
    # Before: NaN in an object array on one input gave "violated" with a bound built from NaN.
    def mech(d, n, g):
        x = (d + g.laplace(0.0, 1.0, size=n)).astype(object)
        if d == 1:
            x[5] = bad
        return x
    with pytest.raises(ValueError, match=rf"mechanism \S*mech\(data1.*returned {word} in run 5 "):
        audit(mech, 0.0, 1.0, samples=2_000)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
def test_nan_in_a_late_chunk_is_caught_with_the_run_index(dtype) -> None:
    # Every chunk is checked, not only the probe; the message names the run on that input.
    def late_nan(d, n, g):
        x = (d + g.laplace(0.0, 1.0, size=n)).astype(dtype)
        if d == 0 and late_nan.calls_on_0 == 3:
            x[7] = np.nan
        late_nan.calls_on_0 += d == 0
        return x
    late_nan.calls_on_0 = 0
    chunk = 1_000
    with pytest.raises(ValueError, match=r"late_nan\(data0, n=\d+, rng\) returned nan in run "
                                         r"\d+ \(row 7 of this call\)") as info:
        # rng_probe=False: the probe's calls would shift the call count late_nan keys on.
        audit(late_nan, 0.0, 1.0, samples=20_000, chunk_size=chunk, rng_probe=False)
    # The 4th call on data0 is past the probe, so the run index exceeds the row index.
    run = int(str(info.value).split(" in run ")[1].split()[0])
    assert run > 7


def test_empty_rows_are_a_clear_error() -> None:
    with pytest.raises(ValueError, match=r"rows of shape \(0,\) with no values"):
        audit(lambda d, n, g: np.zeros((n, 0)), 0.0, 1.0, samples=1_000)


def test_wrong_arity_says_the_expected_signature() -> None:
    with pytest.raises(TypeError, match=r"mechanism must be callable as mechanism\(data, n, rng\)"):
        audit(lambda data, n: np.zeros(n), 0.0, 1.0, samples=1_000)
    with pytest.raises(TypeError, match=r"statistic must be callable as statistic\(outputs\)"):
        audit(lambda d, n, g: g.normal(size=n), 0.0, 1.0, samples=1_000,
              statistic=lambda a, b: a)


def test_samples_beyond_memory_are_refused_before_sampling() -> None:
    calls = []

    def mech(d, n, g):
        calls.append(n)
        return g.normal(size=n)
    # The training split is capped (MAX_TRAIN_SAMPLES), so only an uncapped one can be too big.
    with pytest.raises(ValueError, match=r"samples=1000000000000 cannot run on this machine"):
        audit(mech, 0.0, 1.0, samples=10**12, max_train_samples=None)
    assert calls == []
    # The rule itself, at a stated memory size: 10^6 training runs need about 128 MB.
    check_memory_budget(10**7, 10**6, available=2**30)
    with pytest.raises(ValueError, match="samples=10000000 cannot run"):
        check_memory_budget(10**7, 10**6, available=2**20)


def test_assert_dp_without_data1_names_the_missing_input() -> None:
    # Before: TypeError "unsupported operand type(s) for +: 'NoneType' and 'float'".
    with pytest.raises(TypeError, match=r"assert_dp\(\) needs two neighbouring inputs.*missing: "
                                        r"data1"):
        assert_dp(half_scale_laplace, 0.0, epsilon=1.0)


def test_from_epsilon_at_a_subnormal_epsilon_names_epsilon() -> None:
    # Before: "scale must be in (0, inf), got inf", a parameter the caller never passed.
    with pytest.raises(ValueError, match=r"epsilon=1e-320 with sensitivity=1.0"):
        LaplaceMechanism.from_epsilon(1.0, 1e-320)


def test_classical_sigma_at_a_subnormal_delta_is_finite() -> None:
    # Before: 1.25 / 1e-320 overflowed to inf and the error named sigma.
    assert classical_sigma(1.0, 1.0, 1e-320) == pytest.approx(
        np.sqrt(2 * (np.log(1.25) - np.log(1e-320))), rel=1e-12)


def test_analytic_gaussian_does_not_leak_solver_text(monkeypatch) -> None:
    # Before: "`brentq` raised ValueError ... ExplicitBracketInterval(...)" reached the caller.
    from dp_accounting import mechanism_calibration

    from dpaudit.mechanisms import gaussian

    with pytest.raises(ValueError, match=r"sensitivity=1e\+308, epsilon=0.01"):
        analytic_sigma(1e308, 0.01, 1e-10)

    def failing(*args, **kwargs):
        raise ValueError("`brentq` raised ValueError. This often means the supplied bracket ...")
    monkeypatch.setattr(mechanism_calibration, "calibrate_dp_mechanism", failing)
    gaussian._analytic_noise_multiplier.cache_clear()
    with pytest.raises(ValueError) as info:
        analytic_sigma(1e300, 0.37, 1e-5)
    gaussian._analytic_noise_multiplier.cache_clear()
    assert "brentq" not in str(info.value) and "epsilon=0.37, delta=1e-05" in str(info.value)


def test_analytic_gaussian_at_tiny_epsilon_returns_the_closed_form_quickly() -> None:
    # Before: the PLD grid (step epsilon / 10) ran for minutes or raised MemoryError.
    from dpaudit.mechanisms.gaussian import _closed_form_mu

    for eps, delta in [(1e-12, 1e-5), (1e-8, 0.5), (1e-300, 0.999999)]:
        assert analytic_sigma(1.0, eps, delta) == pytest.approx(1 / _closed_form_mu(eps, delta),
                                                                rel=1e-12)
    assert GaussianMechanism.analytic(1e300, 1e-300, 0.5).sigma < float("inf")


def test_public_audit_is_the_engine() -> None:
    assert dpaudit.audit is audit
