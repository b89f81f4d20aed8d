"""Laws of the decision sets in dpaudit.learners.domains: projection, membership, radius, diameter.

Properties are checked with Hypothesis over generated domains (fixed derandomised search; no
tolerance beyond floating-point slack of 1e-9 relative), closed forms on hand-built examples.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpaudit.formal.strategies import domains, points
from dpaudit.learners.domains import Ball, Box, Simplex

SETTINGS = settings(max_examples=100, deadline=None, derandomize=True, database=None)

#: Arbitrary points of R^d (far outside every generated domain as well as inside).
def _raw_points(d: int) -> st.SearchStrategy[np.ndarray]:
    return st.lists(st.floats(-1e3, 1e3, allow_nan=False), min_size=d, max_size=d).map(np.array)


@st.composite
def domain_and_point(draw: st.DrawFn):
    dom = draw(domains(max_dim=6))
    return dom, draw(_raw_points(dom.dim))


def _tol(dom) -> float:
    return 1e-9 * max(1.0, dom.radius, dom.diameter)


@SETTINGS
@given(domain_and_point())
def test_projection_lands_in_the_set_and_is_idempotent(case):
    dom, x = case
    p = dom.project(x)
    assert p.shape == x.shape
    assert dom.contains(p)
    np.testing.assert_allclose(dom.project(p), p, atol=_tol(dom))


@SETTINGS
@given(st.data())
def test_projection_is_the_nearest_point_of_the_set(data):
    # Euclidean projection: ||x - P(x)|| <= ||x - z|| for every z in the set, and the obtuse-angle
    # characterisation <x - P(x), z - P(x)> <= 0.
    dom, x = data.draw(domain_and_point())
    p = dom.project(x)
    for _ in range(5):
        z = data.draw(points(dom))
        assert np.linalg.norm(x - p) <= np.linalg.norm(x - z) * (1 + 1e-12) + _tol(dom)
        slack = 1e-9 * (1.0 + np.linalg.norm(x)) * (1.0 + np.linalg.norm(z - p))
        assert np.dot(x - p, z - p) <= slack


@SETTINGS
@given(st.data())
def test_points_of_the_set_are_fixed_by_projection_and_within_radius(data):
    dom = data.draw(domains(max_dim=6))
    z = data.draw(points(dom))
    assert dom.contains(z)
    np.testing.assert_allclose(dom.project(z), z, atol=_tol(dom))
    assert np.linalg.norm(z) <= dom.radius * (1 + 1e-12)


@SETTINGS
@given(st.data())
def test_diameter_bounds_the_distance_between_points(data):
    dom = data.draw(domains(max_dim=6))
    z0, z1 = data.draw(points(dom)), data.draw(points(dom))
    assert np.linalg.norm(z0 - z1) <= dom.diameter * (1 + 1e-12) + 1e-15


@SETTINGS
@given(domain_and_point())
def test_contains_rejects_points_pushed_out_of_the_set(case):
    dom, x = case
    p = dom.project(x)
    gap = np.linalg.norm(x - p)
    if gap > 10 * _tol(dom):
        assert not dom.contains(x)
    # Stepping beyond the projection along the outward normal stays outside.
    if gap > 0:
        outward = (x - p) / gap
        assert not dom.contains(p + 1e-3 * max(1.0, dom.radius) * outward)


def test_vectorised_projection_matches_row_by_row():
    rng = np.random.default_rng(0)
    x = rng.normal(scale=3.0, size=(7, 5, 4))
    for dom in (Ball(4, 1.5), Box(4, -0.5, 2.0), Simplex(4)):
        batch = dom.project(x)
        rows = np.array([[dom.project(x[i, j]) for j in range(5)] for i in range(7)])
        np.testing.assert_allclose(batch, rows, rtol=0, atol=1e-15)
        assert dom.contains(batch).shape == (7, 5)
        assert dom.contains(batch).all()


def test_ball_projection_closed_form():
    ball = Ball(3, 2.0)
    np.testing.assert_allclose(ball.project(np.array([3.0, 4.0, 0.0])), [1.2, 1.6, 0.0])
    np.testing.assert_array_equal(ball.project(np.array([0.5, -0.5, 1.0])), [0.5, -0.5, 1.0])


@pytest.mark.parametrize("radius, scale", [
    (0.5, 0.0), (2.0, 0.0), (2.0, 1e-200), (10.0, 0.0), (10.0, 1e-200), (1e6, 1e-300),
])
def test_ball_projection_near_the_centre_is_the_identity(radius, scale):
    x = np.array([scale, -scale])
    np.testing.assert_array_equal(Ball(2, radius).project(x), x)


def test_box_projection_is_coordinatewise_clipping():
    box = Box(3, -1.0, 2.0)
    np.testing.assert_array_equal(box.project(np.array([-5.0, 0.5, 7.0])), [-1.0, 0.5, 2.0])


@pytest.mark.parametrize("x, expected", [
    ([1.0, 1.0], [0.5, 0.5]),
    ([2.0, 0.0], [1.0, 0.0]),
    ([0.2, 0.3, 0.5], [0.2, 0.3, 0.5]),
    ([-1.0, -1.0, -1.0], [1 / 3, 1 / 3, 1 / 3]),
    ([3.0, 1.0, -2.0], [1.0, 0.0, 0.0]),
    ([0.6, 0.6, 0.0], [0.5, 0.5, 0.0]),
])
def test_simplex_projection_closed_forms(x, expected):
    np.testing.assert_allclose(Simplex(len(x)).project(np.array(x)), expected, atol=1e-15)


def test_ball_radius_and_diameter_are_attained():
    ball = Ball(3, 2.5)
    assert ball.radius == 2.5 and ball.diameter == 5.0
    u = np.array([0.0, 0.6, 0.8])
    assert ball.contains(2.5 * u) and ball.contains(-2.5 * u)
    assert np.linalg.norm(2.5 * u - (-2.5 * u)) == pytest.approx(ball.diameter)


@pytest.mark.parametrize("lower, upper", [(-1.0, 1.0), (0.0, 3.0), (-4.0, 1.0), (0.5, 2.0)])
def test_box_radius_and_diameter_equal_the_extremes_over_corners(lower, upper):
    d = 3
    box = Box(d, lower, upper)
    corners = np.array(list(itertools.product([lower, upper], repeat=d)))
    assert box.radius == pytest.approx(np.linalg.norm(corners, axis=1).max())
    pair_dist = np.linalg.norm(corners[:, None, :] - corners[None, :, :], axis=-1)
    assert box.diameter == pytest.approx(pair_dist.max())
    assert box.contains(corners).all()


@pytest.mark.parametrize("d", [1, 2, 5])
def test_simplex_radius_and_diameter(d):
    s = Simplex(d)
    vertices = np.eye(d)
    assert s.contains(vertices).all()
    assert s.radius == pytest.approx(np.linalg.norm(vertices, axis=1).max()) == 1.0
    expected = 0.0 if d == 1 else math.sqrt(2.0)
    assert s.diameter == pytest.approx(expected)
    if d > 1:
        assert np.linalg.norm(vertices[0] - vertices[1]) == pytest.approx(s.diameter)


def test_simplex_contains_only_probability_vectors():
    s = Simplex(3)
    assert s.contains(np.array([0.2, 0.3, 0.5]))
    assert not s.contains(np.array([0.2, 0.3, 0.6]))
    assert not s.contains(np.array([-0.1, 0.6, 0.5]))


@pytest.mark.parametrize("make, match", [
    (lambda: Ball(0), "dim"),
    (lambda: Ball(2, 0.0), "radius"),
    (lambda: Ball(2, -1.0), "radius"),
    (lambda: Ball(2.5), "dim"),
    (lambda: Box(2, 1.0, 1.0), "lower must be < upper"),
    (lambda: Box(2, 2.0, 1.0), "lower must be < upper"),
    (lambda: Box(2, float("nan"), 1.0), "lower"),
    (lambda: Simplex(0), "dim"),
])
def test_invalid_domains_are_rejected_naming_the_parameter(make, match):
    with pytest.raises((ValueError, TypeError), match=match):
        make()


@pytest.mark.parametrize("dom", [Ball(3), Box(3), Simplex(3)])
def test_projection_rejects_points_of_the_wrong_dimension_or_non_finite(dom):
    with pytest.raises(ValueError, match="dim=3"):
        dom.project(np.zeros(2))
    with pytest.raises(ValueError, match="finite"):
        dom.project(np.array([0.0, np.nan, 0.0]))
