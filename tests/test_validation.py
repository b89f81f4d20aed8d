"""Shared input validation: every bad input raises naming the parameter and the allowed range."""

import fractions
import math
import re
import warnings

import numpy as np
import pytest

from dpaudit._validation import (
    check_delta,
    check_epsilon,
    check_finite_array,
    check_generator,
    check_int,
    check_nonnegative,
    check_positive,
    check_probability,
)

NAN, INF = float("nan"), float("inf")


def raises(exc, *fragments):
    """pytest.raises whose message must contain every fragment literally."""
    return pytest.raises(exc, match="".join(f"(?=.*{re.escape(f)})" for f in fragments))


# ----------------------------------------------------------------------------------------------
# Scalars
# ----------------------------------------------------------------------------------------------

SCALAR_CHECKS = [
    # (call with a value, parameter name, allowed range as printed)
    (lambda v: check_epsilon(v), "epsilon", "(0, inf)"),
    (lambda v: check_epsilon(v, "eps0", allow_inf=True), "eps0", "(0, inf]"),
    (lambda v: check_delta(v), "delta", "[0, 1)"),
    (lambda v: check_delta(v, "target_delta"), "target_delta", "[0, 1)"),
    (lambda v: check_probability(v, "p"), "p", "(0, 1)"),
    (lambda v: check_probability(v, "q", open_interval=False), "q", "[0, 1]"),
    (lambda v: check_positive(v, "sigma"), "sigma", "(0, inf)"),
    (lambda v: check_positive(v, "scale", allow_inf=True), "scale", "(0, inf]"),
    (lambda v: check_nonnegative(v, "shift"), "shift", "[0, inf)"),
]


@pytest.mark.parametrize("check, name, allowed", SCALAR_CHECKS)
@pytest.mark.parametrize("bad", ["0.5", None, True, np.bool_(False), 1 + 0j, [0.5], np.array(0.5j)])
def test_scalar_checks_reject_non_reals_with_type_error(check, name, allowed, bad):
    with raises(TypeError, f"{name} must be a real number", allowed):
        check(bad)


@pytest.mark.parametrize("check, name, allowed", SCALAR_CHECKS)
def test_scalar_checks_reject_nan_naming_parameter_and_range(check, name, allowed):
    for nan in (NAN, np.float64(NAN), np.float32(NAN)):
        with raises(ValueError, f"{name} must not be NaN", allowed):
            check(nan)


@pytest.mark.parametrize("check, name, allowed, good, bad", [
    (lambda v: check_epsilon(v), "epsilon", "(0, inf)", [1e-300, 0.5, 1e300], [0.0, -1.0, INF]),
    (lambda v: check_epsilon(v, allow_inf=True), "epsilon", "(0, inf]", [1e-3, INF], [0.0, -INF]),
    (lambda v: check_delta(v), "delta", "[0, 1)", [0.0, 1e-300, 0.999], [-1e-300, 1.0, INF]),
    (lambda v: check_probability(v, "p"), "p", "(0, 1)", [1e-12, 0.5], [0.0, 1.0, -0.1, 2.0]),
    (lambda v: check_probability(v, "p", open_interval=False), "p", "[0, 1]", [0.0, 1.0],
     [-1e-12, 1.0 + 1e-12, INF]),
    (lambda v: check_positive(v, "sigma"), "sigma", "(0, inf)", [5e-324, 1e308], [0.0, -2.0, INF]),
    (lambda v: check_positive(v, "sigma", allow_inf=True), "sigma", "(0, inf]", [INF], [0.0]),
    (lambda v: check_nonnegative(v, "shift"), "shift", "[0, inf)", [0.0, 3.0], [-1e-9, INF]),
])
def test_scalar_ranges(check, name, allowed, good, bad):
    for v in good:
        out = check(v)
        assert type(out) is float and out == v
    for v in bad:
        with raises(ValueError, f"{name} must be in {allowed}", repr(v)):
            check(v)


def test_scalar_checks_accept_numpy_and_exact_reals_and_return_python_floats():
    for v in (np.float32(0.25), np.float64(0.25), np.int64(1), 1, fractions.Fraction(1, 4)):
        out = check_positive(v, "x")
        assert type(out) is float and out == float(v)
    assert check_delta(np.float16(0.5)) == 0.5


def test_check_int():
    assert check_int(3, "k") == 3 and type(check_int(np.int64(3), "k")) is int
    assert check_int(np.uint8(7), "k", minimum=0, maximum=7) == 7
    assert check_int(-5, "k") == -5
    for bad in (3.0, "3", True, np.bool_(True), None, np.float64(2.0)):
        with raises(TypeError, "k must be an integer", "[1, inf]"):
            check_int(bad, "k", minimum=1)
    with raises(ValueError, "count must be an integer in [1, inf]", "0"):
        check_int(0, "count", minimum=1)
    with raises(ValueError, "leaf must be an integer in [1, 8]", "9"):
        check_int(9, "leaf", minimum=1, maximum=8)
    with raises(ValueError, "j must be an integer in [-inf, 2]", "3"):
        check_int(3, "j", maximum=2)


def test_check_generator():
    rng = np.random.default_rng(0)
    assert check_generator(rng) is rng
    for bad in (0, None, np.random.RandomState(0), np.random.PCG64(0), "rng"):
        with raises(TypeError, "rng must be a numpy.random.Generator", type(bad).__name__):
            check_generator(bad)
    with raises(TypeError, "noise_rng must be a numpy.random.Generator"):
        check_generator(1, "noise_rng")


# ----------------------------------------------------------------------------------------------
# Arrays
# ----------------------------------------------------------------------------------------------


def test_check_finite_array_converts_real_input_to_float64():
    for x, want in [([1, 2], [1.0, 2.0]), (np.arange(3, dtype=np.int8), [0.0, 1.0, 2.0]),
                    (np.array([0.5], dtype=np.float32), [0.5]), (2.5, 2.5),
                    (np.array([True, False]), [1.0, 0.0]),
                    (np.array([1, fractions.Fraction(1, 2)], dtype=object), [1.0, 0.5]),
                    (np.zeros((0, 3)), np.zeros((0, 3)))]:
        arr = check_finite_array(x, "x")
        assert arr.dtype == np.float64
        np.testing.assert_array_equal(arr, want)


@pytest.mark.parametrize("bad, fragment", [
    (np.array([1 + 2j]), "complex"),
    ([1.0, 2j], "complex"),
    (np.array([1.0 + 0j]), "complex"),  # rejected even with a zero imaginary part
    (np.array([1.0, "a"], dtype=object), "str"),
    (np.array([1.0, None], dtype=object), "NoneType"),
    (np.array([1.0, 1j], dtype=object), "complex"),
    ("1.5", "dtype"),
    (np.array(["1", "2"]), "dtype"),
    (np.array([b"1"]), "dtype"),
    (np.array(["2020-01-01"], dtype="datetime64[D]"), "dtype"),
    ([[1.0], [2.0, 3.0]], "finite real numbers"),
])
def test_check_finite_array_rejects_non_real_input_with_type_error(bad, fragment):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no ComplexWarning: the input must be refused, not cast
        with raises(TypeError, "losses must be array-like of finite real numbers", fragment):
            check_finite_array(bad, "losses")


@pytest.mark.parametrize("bad", [[1.0, NAN], [INF], np.array([[0.0, -INF]]), [10**400]])
def test_check_finite_array_rejects_nan_and_inf(bad):
    with raises(ValueError, "xs must contain only finite values"):
        check_finite_array(bad, "xs")


def test_check_finite_array_ndim_and_shape():
    assert check_finite_array([[1.0, 2.0]], "x", ndim=2).shape == (1, 2)
    assert check_finite_array(3.0, "x", ndim=(0, 1)).shape == ()
    with raises(ValueError, "x must have ndim in (1,)", "(2, 2)"):
        check_finite_array(np.ones((2, 2)), "x", ndim=1)
    with raises(ValueError, "x must have ndim in (1, 2)", "()"):
        check_finite_array(1.0, "x", ndim=(1, 2))
    assert check_finite_array(np.ones((4, 3)), "data", shape=(None, 3)).shape == (4, 3)
    with raises(ValueError, "data must have shape ('*', 3)", "(4, 2)"):
        check_finite_array(np.ones((4, 2)), "data", shape=(None, 3))
    with raises(ValueError, "data must have shape (5, 2)", "(5,)"):
        check_finite_array(np.ones(5), "data", shape=(5, 2))
    # Shape problems are reported before finiteness problems, both naming the parameter.
    with raises(ValueError, "data must have shape"):
        check_finite_array(np.full((2, 2), NAN), "data", shape=(3, 2))
    assert math.isfinite(check_finite_array([1e308], "x")[0])
