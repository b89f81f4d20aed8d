"""The fast row-wise reductions equal numpy's own, bit for bit (exact identities, no tolerance)."""

import numpy as np
import pytest

from dpaudit._rowwise import add_outer, div_rows, mul_rows, row_any, row_max_abs, row_norm, row_sum


def _adversarial(shape: tuple[int, ...], seed: int) -> np.ndarray:
    """Signs, magnitudes over 2^-60..2^60 (so the summation order shows in the last bits), exact
    zeros of both signs."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape) * np.exp2(rng.integers(-60, 61, shape))
    a[rng.random(shape) < 0.05] = 0.0
    a[rng.random(shape) < 0.05] = -0.0
    return a


def _same(x: np.ndarray, y: np.ndarray) -> bool:
    """Bitwise equality, signed zeros and NaN included."""
    return x.shape == y.shape and x.dtype == y.dtype and x.tobytes() == y.tobytes()


@pytest.mark.parametrize("d", range(1, 11))
@pytest.mark.parametrize("keepdims", [False, True])
def test_row_reductions_match_numpy_bitwise(d: int, keepdims: bool) -> None:
    for shape in [(d,), (5, d), (3000, d), (40, 25, d)]:
        a = _adversarial(shape, seed=d)
        for view in (a, a[..., ::-1], np.asfortranarray(a)):
            assert _same(row_sum(view, keepdims), np.add.reduce(view, axis=-1, keepdims=keepdims))
            assert _same(row_norm(view, keepdims), np.linalg.norm(view, axis=-1, keepdims=keepdims))
            assert _same(row_max_abs(view, keepdims), np.max(np.abs(view), axis=-1, keepdims=keepdims))


def test_row_sum_is_sequential_where_numpy_is() -> None:
    # ((a0 + a1) + a2) differs from a0 + (a1 + a2) here: this pins the order the fast path uses.
    a = np.array([[1.0, 2.0**-53, 2.0**-53]])
    assert row_sum(a)[0] == 1.0 == np.add.reduce(a, axis=-1)[0]


def test_nan_and_inf_propagate_like_numpy() -> None:
    a = np.array([[np.nan, 1.0], [np.inf, -2.0], [1.0, -np.inf]])
    np.testing.assert_array_equal(row_max_abs(a), np.max(np.abs(a), axis=-1))
    np.testing.assert_array_equal(row_norm(a), np.linalg.norm(a, axis=-1))
    np.testing.assert_array_equal(row_sum(a), np.add.reduce(a, axis=-1))


@pytest.mark.parametrize("d", [1, 2, 3, 7, 9])
def test_row_any_and_add_outer_match_numpy_bitwise(d: int) -> None:
    rng = np.random.default_rng(100 + d)
    for shape in [(5, d), (3000, d), (40, 25, d)]:
        mask = rng.random(shape) < 0.2
        assert _same(row_any(mask), np.any(mask, axis=-1))
        c = _adversarial(shape, seed=d)
        w = _adversarial(shape[:-1], seed=d + 50)
        v = _adversarial((d,), seed=d + 99)
        assert _same(add_outer(c, w, v), c + w[..., None] * v)
        assert _same(add_outer(c[..., ::-1], w, v), c[..., ::-1] + w[..., None] * v)
        s = _adversarial(shape[:-1], seed=d + 7)
        assert _same(mul_rows(c, s), c * s[..., None])
        assert _same(mul_rows(c[..., ::-1], s), c[..., ::-1] * s[..., None])
        with np.errstate(divide="ignore", invalid="ignore"):  # s has zeros: inf and NaN too
            assert _same(div_rows(c, s), c / s[..., None])
            assert _same(div_rows(c[..., ::-1], s), c[..., ::-1] / s[..., None])
