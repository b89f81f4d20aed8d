"""Structured releases (dpaudit.release_outputs): every layout read as the table of its numbers with
the right names, the disambiguation rule, the refusals, and the black box auditing what they leak
(an object array of dicts used to make every run its own outcome: lower bound 0 on a release that
publishes its sum with sigma/1000 noise)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

import dpaudit
from dpaudit.release_outputs import (MAX_COLUMN_NAMES, is_structured, release_table,
                                     short_columns)


def test_dict_of_arrays_columns_in_key_then_c_order() -> None:
    loss = np.array([0.5, 1.5])
    w = np.arange(12.0).reshape(2, 2, 3)
    t = release_table({"loss": loss, "w": w}, 2)
    assert t.layout == "fields"
    assert t.columns == ("loss", "w[0, 0]", "w[0, 1]", "w[0, 2]", "w[1, 0]", "w[1, 1]", "w[1, 2]")
    # Row i is run i: loss, then w[i] flattened in C order (written out by hand).
    assert t.values.tolist() == [[0.5, 0, 1, 2, 3, 4, 5], [1.5, 6, 7, 8, 9, 10, 11]]
    assert t.values.dtype == np.float64


def test_list_of_per_run_records_nested() -> None:
    runs = [{"loss": float(i), "opt": {"lr": 0.1 * i}, "w": [i, -i], "ok": True}
            for i in range(3)]
    t = release_table(runs, 3)
    assert t.layout == "records"
    assert t.columns == ("loss", "opt.lr", "w[0]", "w[1]", "ok")
    assert np.array_equal(t.values, [[0, 0.0, 0, 0, 1], [1, 0.1, 1, -1, 1],
                                     [2, 0.2, 2, -2, 1]])


def test_per_run_tuples_of_array_and_number() -> None:
    runs = [(np.array([i, 2.0 * i]), float(i) + 0.5) for i in range(4)]
    t = release_table(runs, 4)
    assert t.layout == "records"
    assert t.columns == ("[0][0]", "[0][1]", "[1]")
    assert np.array_equal(t.values[:, 2], np.arange(4) + 0.5)
    assert np.array_equal(t.values[:, 1], 2.0 * np.arange(4))


def test_tuple_of_arrays_with_leading_axis_n() -> None:
    weights, bias = np.arange(15.0).reshape(5, 3), np.arange(5.0) * 10
    t = release_table((weights, bias), 5)
    assert t.layout == "arrays"
    assert t.columns == ("[0][0]", "[0][1]", "[0][2]", "[1]")
    assert np.array_equal(t.values, np.column_stack([weights, bias]))


def test_disambiguation_rule_and_layout_memory() -> None:
    # Two arrays of leading axis 2 for n = 2: by the rule, two per-run records (run 0 is the first
    # array); with the layout of an earlier call (a tuple of arrays) it is read as that.
    a, b = np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([[5.0, 6.0], [7.0, 8.0]])
    assert not is_structured((a, b), 2)  # stacks into one (2, 2, 2) array: the plain path
    first = release_table((np.ones((6, 2)), np.zeros((6, 2))), 6)
    assert first.layout == "arrays"
    again = release_table((a, b), 2, layout=first.layout)
    assert again.columns == first.columns
    assert again.values.tolist() == [[1, 2, 5, 6], [3, 4, 7, 8]]
    with pytest.raises(TypeError, match="same structure"):
        release_table(np.ones((2, 4)), 2, layout="fields")


def test_plain_outputs_are_not_structured() -> None:
    # The engine's existing paths (arrays, labels, integer tuples as rows, exact numbers) stay.
    assert not is_structured(np.ones((3, 2)), 3)
    assert not is_structured([1, 2, 3], 3)
    assert not is_structured(["a", "b", "c"], 3)
    assert not is_structured([(1, 2), (3, 4), (5, 6)], 3)
    assert not is_structured([Fraction(1, 3)] * 3, 3)
    assert release_table(np.array([1, 2, 3]), 3).columns == ("[0]",)


@pytest.mark.parametrize("bad, match", [
    ([{"a": 1.0}, {"b": 1.0}, {"a": 2.0}], "same keys"),
    ([{"a": 1.0, "s": "x"}] * 3, "types str"),
    ([(1.0, 2.0), (1.0,), (1.0, 2.0)], "ragged"),
    ([{"a": np.ones(2)}, {"a": np.ones(3)}, {"a": np.ones(2)}], "ragged"),
    ([{"a": object()}] * 3, "types object"),
    ([{"a": None}] * 3, "NoneType"),
    ([{"a": Fraction(1, 3)}] * 3, "Fraction"),
    ({"a": np.ones(2)}, "leading axis 2"),
    ({"a": np.array(["x", "y", "z"])}, "strings"),
    ({1: np.ones(3)}, "keys .* must be strings"),
    ({"a": np.array([2**60, 1, 2])}, "2\\*\\*53"),
    ((np.ones(3), np.ones(2)), "neither n = 3 per-run records nor a tuple of arrays"),
])
def test_refusals_say_what_to_return(bad, match) -> None:
    with pytest.raises(TypeError, match=match) as info:
        release_table(bad, 3)
    assert "return an array with leading axis n, a dict of numeric arrays" in str(info.value)


def test_n_must_be_positive() -> None:
    with pytest.raises(ValueError, match="n must be a positive integer"):
        release_table({"a": np.ones(1)}, 0)


def test_short_columns() -> None:
    cols = [f"w[{i}]" for i in range(100)]
    short = short_columns(cols)
    assert len(short) == MAX_COLUMN_NAMES and short[-1] == f"... ({100 - MAX_COLUMN_NAMES + 1} more)"
    assert short_columns(cols[:3]) == cols[:3]


def _leaky_records(data, n, rng):
    """Publishes the sum with N(0, (1/1000)^2) noise as per-run dicts: the neighbouring sums
    differ by 1 = 1000 sigma, so epsilon is huge; the claimed 1 is violated."""
    s = float(np.sum(data))
    return [{"sum": float(v), "count": len(data)} for v in s + rng.normal(0.0, 1e-3, n)]


def test_records_leaking_the_sum_are_violated_and_named() -> None:
    # Before: an object array of dicts, 10^4 distinct outcomes, lower bound 0. Now the sum's
    # column separates the inputs completely (shift 1000 sigma): thousands of test runs against
    # none, far above the claim at any seed.
    r = dpaudit.audit(_leaky_records, [0.0, 0.0, 0.0], [0.0, 0.0, 1.0], epsilon=1.0, delta=1e-5,
                      samples=4_000, seed=0)
    assert r.verdict == "violated" and r.epsilon_lower_bound > 5
    assert r.output_kind == "continuous"
    assert r.output_columns == ("sum", "count")
    d = r.to_dict()
    assert d["output_columns"] == ["sum", "count"] and d["output_columns_total"] == 2
    assert "output: 2 released numbers (sum, count)" in str(r)


def test_plain_release_record_has_no_column_keys() -> None:
    r = dpaudit.audit(lambda d, n, g: d + g.laplace(0, 1, n), 0.0, 1.0, epsilon=1.0,
                      samples=2_000, seed=0)
    assert r.output_columns is None and "output_columns" not in r.to_dict()


def test_structure_changing_between_calls_is_refused() -> None:
    # Fields named differently on the two inputs are refused too (not comparable).
    with pytest.raises(ValueError, match="different fields"):
        dpaudit.audit(lambda d, n, g: {f"x{d}": d + g.normal(0, 1, n)}, 0, 1, epsilon=1.0,
                      samples=2_000, seed=0)
    calls = []

    def flips(data, n, rng):
        calls.append(n)
        x = data + rng.normal(0, 1, n)
        return {"a": x} if len(calls) <= 2 else {"b": x}  # both probes "a", then "b"

    with pytest.raises(TypeError, match="same fields"):
        dpaudit.audit(flips, 0.0, 1.0, epsilon=1.0, samples=2_000, seed=0, rng_probe=False)


class _FakeTensor:
    """Looks like a torch tensor to plain_arrays (its type's module is torch's), without torch."""

    __module__ = "torch.fake"

    def __init__(self, values):
        self.values = np.asarray(values, dtype=float)
        self.dtype = "torch.float32"

    def detach(self):
        return self

    def cpu(self):
        return self

    def numpy(self):
        return self.values


def test_plain_arrays_reads_tensor_like_objects_without_importing_torch() -> None:
    import sys

    from dpaudit.release_outputs import plain_arrays
    had_torch = "torch" in sys.modules
    out = plain_arrays({"w": _FakeTensor([[1.0, 2.0]]), "n": [3]})
    assert isinstance(out["w"], np.ndarray) and out["w"].tolist() == [[1.0, 2.0]]
    assert out["n"] == [3]
    assert ("torch" in sys.modules) == had_torch
    arr = np.zeros(2)
    assert plain_arrays(arr) is arr
