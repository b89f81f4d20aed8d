"""The floating-point support audit (Mironov 2012): exact, deterministic, no sampling."""

from __future__ import annotations

import numpy as np
import pytest

from dpaudit.formal.floating_point import (audit_float_laplace, numpy_laplace, output_probability,
                                           textbook_laplace)


@pytest.mark.parametrize("loc, scale", [(0.0, 1.0), (0.3, 1.7), (-5.0, 0.01)])
def test_numpy_model_reproduces_generator_laplace_bit_for_bit(loc, scale) -> None:
    # The audited map is the sampler LaplaceMechanism really uses: same bits in, same double out.
    draws = np.random.default_rng(7).laplace(loc, scale, size=50_000)
    raw = np.random.default_rng(7).bit_generator.random_raw(50_000)
    k = (raw >> np.uint64(11)).astype(np.int64)
    assert np.array_equal(numpy_laplace(loc, scale, k), draws)


@pytest.mark.parametrize("sampler", ["numpy", "textbook"])
def test_float_laplace_is_not_dp_outputs_impossible_on_the_neighbour(sampler) -> None:
    ev = audit_float_laplace(0.0, 1.0, 1.0, claimed_epsilon=1.0, sampler=sampler)
    assert ev.violated and ev.unreachable > 0 and ev.examples
    assert ev.to_dict()["epsilon"] == "inf" and ev.to_dict()["kind"].startswith("floating-point")
    fn = numpy_laplace if sampler == "numpy" else textbook_laplace
    for example in ev.examples:
        y = float.fromhex(example["output"])
        # Reachable from 0: some draw in the window gives exactly y.
        window = np.arange(ev.window_start, ev.window_start + ev.window_size)
        assert np.any(fn(0.0, 1.0, window) == y)
        # Unreachable from 1, checked by brute force around where 1 + noise crosses y: the map
        # is non-decreasing, the draws just below give less than y and just above more.
        _, first = output_probability(sampler, 1.0, 1.0, [y])
        around = np.arange(first[0] - 2_000, first[0] + 2_000)
        values = fn(1.0, 1.0, around)
        assert np.all(np.diff(values) >= 0)
        assert not np.any(values == y)
        assert values[0] < y < values[-1]


def test_output_probability_counts_the_preimage_exactly() -> None:
    k = np.arange(3 << 51, (3 << 51) + 500)
    ys = np.unique(numpy_laplace(0.0, 1.0, k))
    m, first = output_probability("numpy", 0.0, 1.0, ys)
    for y, mi, fi in zip(ys[:50], m[:50], first[:50]):
        span = numpy_laplace(0.0, 1.0, np.arange(fi - 5, fi + mi + 5))
        assert np.count_nonzero(span == y) == mi


def test_the_audit_can_say_not_violated() -> None:
    # Inputs closer than half an ulp of every output give the same doubles on both inputs: no
    # unreachable output, all exact ratios 1 (the auditor is not a constant "violated").
    ev = audit_float_laplace(0.0, 1e-300, 1.0, claimed_epsilon=1.0)
    assert not ev.violated and ev.unreachable == 0
    assert ev.max_log_ratio_both_reachable == 0.0


def test_bad_arguments_name_the_parameter() -> None:
    with pytest.raises(ValueError, match="f0 and f1"):
        audit_float_laplace(1.0, 1.0)
    with pytest.raises(ValueError, match="scale"):
        audit_float_laplace(0.0, 1.0, -1.0)
    with pytest.raises(ValueError, match="sampler"):
        audit_float_laplace(0.0, 1.0, sampler="mpfr")
    with pytest.raises(ValueError, match="window_size"):
        audit_float_laplace(0.0, 1.0, window_size=0)
