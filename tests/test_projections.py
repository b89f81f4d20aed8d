"""Laws of the Euclidean projections (dpaudit.mechanisms.projections).

A map P onto a closed convex set K is the Euclidean projection iff P(x) in K and the variational
inequality <x - P(x), z - P(x)> <= 0 holds for every z in K. These two properties (plus idempotence,
a consequence) are checked by Hypothesis over generated points (derandomised, so the run is
reproducible), with random z in K; the simplex projection is also compared with an independent
bisection on its threshold.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from dpaudit.mechanisms.projections import (
    clip_l2,
    clip_scalar,
    project_box,
    project_l2_ball,
    project_simplex,
)

SETTINGS = settings(max_examples=150, deadline=None, derandomize=True, database=None)

# Floating-point slack for membership and the variational inequality, relative to the data scale.
RTOL = 1e-10

finite = st.floats(min_value=-1e3, max_value=1e3, allow_nan=False, allow_infinity=False)


def points(min_dim: int = 1, max_dim: int = 8) -> st.SearchStrategy[np.ndarray]:
    """Arrays of shape (m, d): m points of dimension d."""
    shapes = st.tuples(st.integers(1, 5), st.integers(min_dim, max_dim))
    return shapes.flatmap(lambda s: hnp.arrays(np.float64, s, elements=finite))


def variational_gap(x: np.ndarray, p: np.ndarray, z: np.ndarray) -> np.ndarray:
    """<x - P(x), z - P(x)> for every pair (point, candidate z); shape (m, n_z)."""
    return np.einsum("md,mnd->mn", x - p, z - p[:, None, :])


# ---------------------------------------------------------------------------- l2 ball


@SETTINGS
@given(x=points(), radius=st.floats(0.01, 100.0), seed=st.integers(0, 2**32 - 1),
       centred=st.booleans())
def test_l2_ball_projection_laws(x: np.ndarray, radius: float, seed: int, centred: bool) -> None:
    rng = np.random.default_rng(seed)
    m, d = x.shape
    center = rng.normal(scale=10.0, size=d) if centred else np.zeros(d)
    # Overflow warnings are silenced here only: the zero-vector case has its own test below
    # (test_l2_ball_zero_vector_is_fixed_point_without_warning); this test checks the values.
    with np.errstate(over="ignore"):
        p = project_l2_ball(x, radius, center if centred else None)
        again = project_l2_ball(p, radius, center if centred else None)
        clipped = clip_l2(x, radius)
        projected = project_l2_ball(x, radius)
    scale = 1.0 + np.abs(x).max() + np.abs(center).max()
    assert p.shape == x.shape
    # In the set.
    assert np.all(np.linalg.norm(p - center, axis=1) <= radius * (1.0 + RTOL))
    # Idempotent.
    np.testing.assert_allclose(again, p, rtol=0, atol=RTOL * scale)
    # Points already inside are unchanged.
    inside = np.linalg.norm(x - center, axis=1) <= radius
    np.testing.assert_allclose(p[inside], x[inside], rtol=0, atol=RTOL * scale)
    # Optimality against random z in the ball (uniform direction, radius^(1/d) law).
    g = rng.normal(size=(m, 20, d))
    z = center + radius * g / np.linalg.norm(g, axis=2, keepdims=True) * rng.random((m, 20, 1)) ** (1 / d)
    assert np.all(variational_gap(x, p, z) <= RTOL * scale ** 2)
    # clip_l2 is the same map about the origin.
    np.testing.assert_array_equal(clipped, projected)


def test_l2_ball_known_values_and_batch_axes() -> None:
    np.testing.assert_allclose(project_l2_ball(np.array([3.0, 4.0]), 1.0), [0.6, 0.8], rtol=1e-15)
    np.testing.assert_allclose(project_l2_ball(np.array([0.0, 0.0]), 1.0), [0.0, 0.0])
    np.testing.assert_allclose(project_l2_ball(np.array([2.0, 0.0]), 1.0, np.array([0.0, 5.0])),
                               [2.0 / math.sqrt(29.0), 5.0 - 5.0 / math.sqrt(29.0)], rtol=1e-14)
    x = np.random.default_rng(0).normal(scale=3.0, size=(4, 5, 3))
    p = project_l2_ball(x, 1.0)
    assert p.shape == (4, 5, 3)
    np.testing.assert_allclose(p, project_l2_ball(x.reshape(20, 3), 1.0).reshape(4, 5, 3))


def test_l2_ball_zero_vector_is_fixed_point_without_warning() -> None:
    radius = 10.0
    with np.errstate(all="raise"):
        np.testing.assert_array_equal(project_l2_ball(np.zeros((2, 3)), radius), np.zeros((2, 3)))
        np.testing.assert_array_equal(clip_l2(np.zeros(3), radius), np.zeros(3))


# ---------------------------------------------------------------------------- box


@SETTINGS
@given(x=points(), seed=st.integers(0, 2**32 - 1), per_coordinate=st.booleans())
def test_box_projection_laws(x: np.ndarray, seed: int, per_coordinate: bool) -> None:
    rng = np.random.default_rng(seed)
    m, d = x.shape
    if per_coordinate:
        lower = rng.uniform(-50.0, 0.0, size=d)
        upper = lower + rng.uniform(0.0, 50.0, size=d)
    else:
        lower, upper = -2.5, 7.0
    p = project_box(x, lower, upper)
    assert p.shape == x.shape
    assert np.all(p >= lower) and np.all(p <= upper)
    np.testing.assert_array_equal(project_box(p, lower, upper), p)
    z = rng.uniform(np.broadcast_to(lower, (m, 20, d)), np.broadcast_to(upper, (m, 20, d)))
    scale = 1.0 + np.abs(x).max() + 50.0
    assert np.all(variational_gap(x, p, z) <= RTOL * scale ** 2)


# ---------------------------------------------------------------------------- simplex


def simplex_by_bisection(x: np.ndarray, total: float) -> np.ndarray:
    """Independent reference: P(x) = max(x - theta, 0) with sum = total, theta by bisection."""
    lo = np.min(x, axis=-1, keepdims=True) - total
    hi = np.max(x, axis=-1, keepdims=True)
    for _ in range(200):
        mid = (lo + hi) / 2.0
        too_much = np.maximum(x - mid, 0.0).sum(axis=-1, keepdims=True) > total
        lo = np.where(too_much, mid, lo)
        hi = np.where(too_much, hi, mid)
    return np.maximum(x - (lo + hi) / 2.0, 0.0)


@SETTINGS
@given(x=points(), total=st.floats(0.01, 100.0), seed=st.integers(0, 2**32 - 1))
def test_simplex_projection_laws(x: np.ndarray, total: float, seed: int) -> None:
    rng = np.random.default_rng(seed)
    m, d = x.shape
    p = project_simplex(x, total)
    scale = 1.0 + np.abs(x).max() + total
    assert p.shape == x.shape
    assert np.all(p >= 0.0)
    np.testing.assert_allclose(p.sum(axis=1), total, rtol=1e-12, atol=RTOL * scale * d)
    np.testing.assert_allclose(project_simplex(p, total), p, rtol=0, atol=RTOL * scale)
    z = total * rng.dirichlet(np.ones(d), size=(m, 20))
    assert np.all(variational_gap(x, p, z) <= RTOL * scale ** 2)
    np.testing.assert_allclose(p, simplex_by_bisection(x, total), rtol=0, atol=1e-9 * scale)


def test_simplex_known_values_and_batch_axes() -> None:
    np.testing.assert_allclose(project_simplex(np.array([0.3, 0.7])), [0.3, 0.7], rtol=1e-15)
    np.testing.assert_allclose(project_simplex(np.array([2.0, 0.0])), [1.0, 0.0])
    np.testing.assert_allclose(project_simplex(np.array([1.0, 1.0, 1.0])), [1 / 3, 1 / 3, 1 / 3])
    np.testing.assert_allclose(project_simplex(np.array([5.0]), total=2.0), [2.0])
    np.testing.assert_allclose(project_simplex(np.array([0.0, 0.0, 3.0]), total=2.0), [0.0, 0.0, 2.0])
    x = np.random.default_rng(1).normal(size=(3, 4, 6))
    p = project_simplex(x)
    assert p.shape == (3, 4, 6)
    np.testing.assert_allclose(p, project_simplex(x.reshape(12, 6)).reshape(3, 4, 6))


def test_simplex_projection_of_huge_coordinates_stays_in_simplex() -> None:
    np.testing.assert_allclose(project_simplex(np.array([1e300, -1e300])), [1.0, 0.0])
    np.testing.assert_allclose(project_simplex(np.array([1e17, 0.0, -5.0])), [1.0, 0.0, 0.0])


# ---------------------------------------------------------------------------- scalars, errors


def test_clip_scalar() -> None:
    np.testing.assert_array_equal(clip_scalar(np.array([-3.0, 0.5, 9.0]), -1.0, 1.0), [-1.0, 0.5, 1.0])
    assert float(clip_scalar(2.0, 0.0, 1.0)) == 1.0


def test_clip_l2_error_names_its_parameter() -> None:
    with pytest.raises(ValueError, match="bound"):
        clip_l2(np.ones(2), 0.0)


def test_bad_inputs_raise() -> None:
    with pytest.raises(ValueError, match="radius"):
        project_l2_ball(np.ones(2), 0.0)
    with pytest.raises(ValueError, match="radius"):
        project_l2_ball(np.ones(2), -1.0)
    with pytest.raises(ValueError, match="x"):
        project_l2_ball(np.array([1.0, math.nan]), 1.0)
    with pytest.raises(ValueError):
        clip_l2(np.ones(2), 0.0)
    with pytest.raises(ValueError, match="lower"):
        project_box(np.ones(2), 1.0, 0.0)
    with pytest.raises(ValueError, match="x"):
        project_box(np.array([math.inf]), 0.0, 1.0)
    with pytest.raises(ValueError, match="total"):
        project_simplex(np.ones(3), total=0.0)
    with pytest.raises(ValueError, match="x"):
        project_simplex(np.array(1.0))
    with pytest.raises(ValueError, match="x"):
        project_simplex(np.array([1.0, math.nan]))
    with pytest.raises(ValueError, match="lower"):
        clip_scalar(1.0, 2.0, 1.0)


@pytest.mark.parametrize("d", range(1, 10))
def test_column_fast_path_is_bit_identical_to_the_general_path(d: int) -> None:
    # Short float64 rows without a center take a column-by-column path; a zero center takes the
    # general numpy path with the same float operations (x - 0.0 is x, 0.0 + z is z up to the
    # sign of zero, which both paths normalise). Mixed magnitudes and signed zeros make any change
    # of operation order or rounding show in the bits.
    rng = np.random.default_rng(d)
    x = rng.standard_normal((4000, d)) * np.exp2(rng.integers(-60, 61, (4000, d)))
    x[rng.random((4000, d)) < 0.05] = -0.0
    x[:5] = 0.0
    for radius in (1e-20, 0.5, 1.0, 1e20):
        for arr in (x, x[::-1, ::-1], np.broadcast_to(x[7], (50, d))):
            fast = project_l2_ball(arr, radius)
            general = project_l2_ball(arr, radius, center=np.zeros(d))
            assert fast.tobytes() == general.tobytes()
            assert clip_l2(arr, radius).tobytes() == general.tobytes()


def test_column_fast_path_rejects_non_finite_input() -> None:
    for bad in (np.nan, np.inf, -np.inf):
        x = np.zeros((10, 2))
        x[3, 1] = bad
        with pytest.raises(ValueError, match="finite"):
            project_l2_ball(x, 1.0)
