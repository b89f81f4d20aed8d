"""Regression tests of issue 25 (reliability round 3): each failed on the code before its fix.

Engine: exact outcomes of object outputs (a missed violation), output types that change mid-run,
``sequential_audit``'s checks and limits. Reports and the CLI: writes through symlinks, concurrent
writers on one ``--out``, atomic replacement of records, the fallback walk, shell-quoted commands,
escaped Markdown, bounded saved records.
"""

from __future__ import annotations

import decimal
import fractions

import numpy as np
import pytest

from dpaudit.blackbox.empirical_audit import audit
from dpaudit.blackbox.sequential import sequential_audit


def _randomized_response(a, b, p=0.9, rows=False):
    """Randomized response over the labels ``a``/``b``: true epsilon ln(p / (1 - p)) (ln 9)."""
    def mechanism(data, n, rng):
        hit = rng.random(n) < (p if data else 1.0 - p)
        out = [a if h else b for h in hit]
        if rows:
            out = [[v, 7] for v in out]
        return np.array(out, dtype=object)
    return mechanism


_INEXACT_LABELS = [
    pytest.param(2**64, 2**64 + 1, False, id="big-ints"),
    pytest.param(fractions.Fraction(1, 3), fractions.Fraction(1, 3) + fractions.Fraction(1, 10**30),
                 False, id="fractions"),
    pytest.param(decimal.Decimal(1), decimal.Decimal("1." + "0" * 30 + "1"), False, id="decimals"),
    pytest.param(2**64, 2**64 + 1, True, id="rows-of-big-ints"),
    pytest.param(-2**63 - 5, -2**63 - 6, False, id="below-int64"),
]


@pytest.mark.parametrize("a, b, rows", _INEXACT_LABELS)
def test_labels_beyond_int64_or_float64_stay_distinct_in_audit(a, b, rows) -> None:
    # Before: both labels became the same float64: bound 0, "not violated" (true epsilon ln 9).
    r = audit(_randomized_response(a, b, rows=rows), 0, 1, epsilon=1.0, samples=20_000, seed=0)
    assert r.verdict == "violated" and r.epsilon_lower_bound > 1.5


@pytest.mark.parametrize("a, b, rows", _INEXACT_LABELS)
def test_labels_beyond_int64_or_float64_stay_distinct_in_sequential_audit(a, b, rows) -> None:
    s = sequential_audit(_randomized_response(a, b, rows=rows), 0, 1, epsilon=1.0,
                         max_samples=20_000, seed=0)
    assert s.verdict == "violated"


def test_deterministic_mechanism_on_big_ints_is_violated() -> None:
    mech = _randomized_response(2**64, 2**64 + 1, p=1.0)
    assert audit(mech, 0, 1, epsilon=1.0, samples=20_000, seed=0).verdict == "violated"
    assert sequential_audit(mech, 0, 1, epsilon=1.0, max_samples=5_000).verdict == "violated"


def test_exact_and_inexact_inputs_compare_as_exact_values() -> None:
    # data0 outputs only 2**64 + 1 (exact objects), data1 only small ints (int64 on its own):
    # both are kept exact so that the two inputs' outcomes compare.
    def mech(data, n, rng):
        return np.array([2**64 + 1 if data else 1] * n, dtype=object)
    assert audit(mech, 1, 0, epsilon=1.0, samples=20_000, seed=0).verdict == "violated"


def test_labels_ending_in_nul_given_as_a_list_are_refused() -> None:
    # Before: numpy dropped the trailing NUL and merged "x" and "x\x00": bound 0, "not violated".
    def labels(data, n, rng):
        hit = rng.random(n) < (0.9 if data else 0.1)
        return ["x" if h else "x\x00" for h in hit]
    with pytest.raises(ValueError, match=r"labels\(data0.*'x\\x00' in run \d+.*NUL"):
        audit(labels, 0, 1, epsilon=1.0, samples=20_000, seed=0)
    with pytest.raises(ValueError, match="NUL"):
        sequential_audit(labels, 0, 1, epsilon=1.0, max_samples=5_000)


def test_exactly_representable_object_numbers_still_convert() -> None:
    from dpaudit.blackbox.sampling import _coerce_objects

    assert _coerce_objects(np.array([1, 2**62], dtype=object), "m", 0).dtype == np.int64
    assert _coerce_objects(np.array([0.5, fractions.Fraction(1, 4)], dtype=object), "m",
                           0).dtype == np.float64
    assert _coerce_objects(np.array([decimal.Decimal("0.1")], dtype=object), "m",
                           0).dtype == np.float64
    exact = _coerce_objects(np.array([decimal.Decimal("0.1"), 0.1], dtype=object), "m", 0)
    assert exact.dtype == object and exact[0] != exact[1]


def _switching(first, later):
    """Returns ``first(n)`` on its first call on each input, ``later(n)`` afterwards."""
    calls = {}

    def switching(data, n, rng):
        calls[data] = calls.get(data, 0) + 1
        return first(n, rng) if calls[data] == 1 else later(n, rng)
    return switching


@pytest.mark.parametrize("later, now", [
    (lambda n, g: g.random(n) < 0.5, "boolean"),
    (lambda n, g: g.integers(0, 3, n), "integer"),
    (lambda n, g: np.array(["a"] * n), "string"),
])
def test_float_outputs_that_change_type_mid_run_name_the_mechanism_and_run(later, now) -> None:
    # Before: bool/int accepted silently; str gave numpy's raw message.
    mech = _switching(lambda n, g: g.normal(size=n), later)
    with pytest.raises(TypeError, match=rf"mechanism .*switching\(data0, n=\d+, rng\) returned "
                                        rf"{now} outputs .* in runs \d+\.\.\d+; its earlier calls "
                                        r"returned floating-point"):
        audit(mech, 0, 1, epsilon=1.0, samples=20_000, seed=0)


def test_discrete_int_outputs_that_become_float_name_the_mechanism_and_run() -> None:
    # Before: "discrete outputs changed type: fitted on int64, got float64", no mechanism or run.
    mech = _switching(lambda n, g: g.integers(0, 2, n), lambda n, g: g.integers(0, 2, n) + 0.0)
    with pytest.raises(TypeError, match=r"switching\(data0.*returned floating-point outputs .* "
                                        r"in runs"):
        audit(mech, 0, 1, epsilon=1.0, samples=20_000, seed=0)


def _laplace(data, n, rng):
    return data + rng.laplace(0.0, 1.0, size=n)


def test_sequential_audit_accepts_epsilon_beyond_exp_overflow() -> None:
    # Before: OverflowError from math.exp (bundled claims reach epsilon 3000).
    for eps in (709.8, 3000.0):
        s = sequential_audit(_laplace, 0.0, 1.0, epsilon=eps, max_samples=2_000)
        assert s.verdict == "not violated" and s.betting_runs == 0


def test_sequential_audit_rounds_are_capped(monkeypatch) -> None:
    # Before: rounds grew as 64 x 1.5^k without bound (3.7 GiB in 38 s with max_samples=10**12).
    import dpaudit.blackbox.sequential as seq

    sizes = []
    monkeypatch.setattr(seq, "MAX_ROUND", 500)
    real = np.log1p

    def spy(x, *a, **k):
        sizes.append(np.size(x))
        return real(x, *a, **k)
    monkeypatch.setattr(seq.np, "log1p", spy)
    seq.sequential_audit(_laplace, 0.0, 0.0, epsilon=1.0, max_samples=20_000, train_samples=100)
    assert sizes and max(sizes) <= 500 and sum(sizes) == 20_000 - 100


@pytest.mark.parametrize("kwargs, exc, match", [
    (dict(mechanism=lambda d, n: d), TypeError, r"mechanism must be callable as mechanism\(data, "
                                                r"n, rng\)"),
    (dict(statistic=5), TypeError, "statistic must be callable"),
    (dict(statistic=lambda a, b: a), TypeError, "statistic must be callable as statistic"),
    (dict(data0=None, data1=None), ValueError, "both None"),
    (dict(alpha=5e-324), ValueError, r"at least 1e-300.*got 5e-324"),
])
def test_sequential_audit_checks_its_arguments_as_audit_does(kwargs, exc, match) -> None:
    # Before: raw TypeErrors from inside the engine; alpha=5e-324 reported as "got 0.0".
    args = dict(mechanism=_laplace, data0=0.0, data1=1.0, epsilon=1.0, max_samples=2_000)
    args.update(kwargs)
    with pytest.raises(exc, match=match):
        sequential_audit(**args)


def test_audit_names_a_subnormal_alpha() -> None:
    with pytest.raises(ValueError, match=r"at least 1e-300.*got 5e-324"):
        audit(_laplace, 0.0, 1.0, epsilon=1.0, alpha=5e-324, samples=2_000)
