"""Laws of the losses in dpaudit.learners.losses and of the declared class LossClass.

* gradients agree with central finite differences (error O(h^2); margins in each test);
* ``lipschitz(domain)`` bounds ``||grad f(x)||`` at every point of the domain (Hypothesis over
  generated classes, members and domain points, relative slack 1e-9 for rounding);
* ``ridge`` gives strong convexity: f(x) >= f(z) + <grad f(z), x - z> + ridge/2 ||x - z||^2;
* closed forms at x = 0; ``LossClass`` rejects non-members with a message naming the constant.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpaudit.formal.strategies import loss_classes, losses, points
from dpaudit.learners.domains import Ball, Box, Simplex
from dpaudit.learners.losses import HingeLoss, LinearLoss, LogisticLoss, LossClass, SquaredLoss

SETTINGS = settings(max_examples=100, deadline=None, derandomize=True, database=None)


def _examples(rng: np.random.Generator, d: int):
    v = rng.normal(size=d)
    return [LinearLoss(rng.normal(size=d)),
            SquaredLoss(v, 0.7, 0.3),
            SquaredLoss(v, -1.5, 0.0),
            LogisticLoss(v, 1, 0.2),
            LogisticLoss(v, -1, 0.0),
            HingeLoss(v, 1, 0.5),
            HingeLoss(v, -1, 0.0)]


def _finite_difference(f, x: np.ndarray, h: float = 1e-5) -> np.ndarray:
    eye = np.eye(x.shape[-1])
    return np.array([(f.value(x + h * e) - f.value(x - h * e)) / (2 * h) for e in eye])


@pytest.mark.parametrize("d", [1, 3])
def test_gradients_match_central_finite_differences(d):
    # Central differences have error h^2/6 * |f'''| ~ 1e-10 here (smooth losses, |x| ~ 1), plus
    # rounding ~ eps / h ~ 1e-11; 1e-6 is a wide margin. Hinge points within 1e-3 of the kink are
    # skipped (the subgradient is not a derivative there).
    rng = np.random.default_rng(1)
    checked = 0
    for f in _examples(rng, d):
        for _ in range(20):
            x = rng.normal(size=d)
            if isinstance(f, HingeLoss) and abs(1 - f.y * (x @ f.v)) < 1e-3:
                continue
            np.testing.assert_allclose(f.grad(x), _finite_difference(f, x), rtol=1e-6, atol=1e-6)
            checked += 1
    assert checked > 100


def test_value_and_grad_are_vectorised_over_leading_axes():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(4, 5, 3))
    for f in _examples(rng, 3):
        vals, grads = f.value(x), f.grad(x)
        assert vals.shape == (4, 5) and grads.shape == (4, 5, 3)
        for i in range(4):
            for j in range(5):
                assert vals[i, j] == pytest.approx(float(f.value(x[i, j])), rel=1e-12)
                np.testing.assert_allclose(grads[i, j], f.grad(x[i, j]), rtol=1e-12, atol=1e-15)


def test_closed_forms_at_the_origin():
    v = np.array([3.0, -4.0])
    x0 = np.zeros(2)
    assert LinearLoss(np.array([1.0, 2.0])).value(np.array([3.0, -1.0])) == pytest.approx(1.0)
    assert SquaredLoss(v, 2.0, 1.0).value(x0) == pytest.approx(2.0)
    np.testing.assert_allclose(SquaredLoss(v, 2.0, 1.0).grad(x0), -2.0 * v)
    assert LogisticLoss(v, 1, 0.0).value(x0) == pytest.approx(math.log(2.0))
    np.testing.assert_allclose(LogisticLoss(v, -1, 0.0).grad(x0), 0.5 * v)
    assert HingeLoss(v, 1, 0.0).value(x0) == pytest.approx(1.0)
    np.testing.assert_allclose(HingeLoss(v, 1, 0.0).grad(x0), -v)
    # Beyond the margin the hinge is flat (subgradient 0), up to the ridge term.
    x = np.array([1.0, 0.0])  # y <v, x> = 3 > 1
    np.testing.assert_allclose(HingeLoss(v, 1, 0.5).grad(x), 0.5 * x)
    # Ridge adds ridge/2 ||x||^2 to the value.
    assert SquaredLoss(v, 0.0, 2.0).value(x) == pytest.approx(0.5 * 9.0 + 1.0)


@SETTINGS
@given(st.data())
def test_lipschitz_constant_bounds_the_gradient_over_the_domain(data):
    cls = data.draw(loss_classes())
    f = data.draw(losses(cls, vary_ridge=data.draw(st.booleans())))
    lip = f.lipschitz(cls.domain)
    for _ in range(4):
        x = data.draw(points(cls.domain))
        assert np.linalg.norm(f.grad(x)) <= lip * (1 + 1e-9) + 1e-12


@pytest.mark.parametrize("dom", [Ball(2, 1.5), Box(2, -1.0, 2.0), Simplex(2)])
def test_lipschitz_constant_is_attained_for_linear_and_squared_losses(dom):
    # The bounds in losses.py are tight: for <g, x> everywhere; for the squared loss with ridge 0
    # at the point of the domain of largest norm along -sign(y) v, (|y| + ||v|| D) ||v||.
    g = np.array([0.6, -0.8])
    assert LinearLoss(g).lipschitz(dom) == pytest.approx(1.0)
    if isinstance(dom, Ball):
        v, y = np.array([1.0, 0.0]), 2.0
        x = -dom.radius * v
        f = SquaredLoss(v, y, 0.0)
        assert np.linalg.norm(f.grad(x)) == pytest.approx(f.lipschitz(dom))


@SETTINGS
@given(st.data())
def test_ridge_gives_strong_convexity(data):
    cls = data.draw(loss_classes(kinds=("squared", "logistic", "hinge")))
    f = data.draw(losses(cls, vary_ridge=True))
    x, z = data.draw(points(cls.domain)), data.draw(points(cls.domain))
    lower = f.value(z) + f.grad(z) @ (x - z) + 0.5 * f.strong_convexity * np.sum((x - z) ** 2)
    scale = 1.0 + abs(float(f.value(x))) + abs(float(lower))
    assert f.value(x) >= lower - 1e-9 * scale
    assert f.strong_convexity == f.ridge >= cls.strong_convexity


def test_losses_are_immutable():
    f = SquaredLoss(np.array([1.0, 2.0]), 1.0, 0.1)
    with pytest.raises(ValueError):
        f.v[0] = 5.0
    with pytest.raises(AttributeError):
        f.y = 2.0  # type: ignore[misc]


@pytest.mark.parametrize("make, match", [
    (lambda: LinearLoss(np.array([])), "at least one coordinate"),
    (lambda: LinearLoss(np.array([1.0, np.nan])), "finite"),
    (lambda: LinearLoss(np.ones((2, 2))), "ndim"),
    (lambda: SquaredLoss(np.ones(2), np.inf), "finite"),
    (lambda: SquaredLoss(np.ones(2), 1.0, -0.1), "ridge"),
    (lambda: LogisticLoss(np.ones(2), 0.5), "y must be -1 or \\+1"),
    (lambda: HingeLoss(np.ones(2), 0.0), "y must be -1 or \\+1"),
])
def test_invalid_losses_are_rejected_naming_the_parameter(make, match):
    with pytest.raises((ValueError, TypeError), match=match):
        make()


def test_points_of_the_wrong_dimension_are_rejected():
    f = LogisticLoss(np.ones(3), 1)
    with pytest.raises(ValueError, match="d=3"):
        f.value(np.zeros(2))
    with pytest.raises(ValueError, match="d=3"):
        f.grad(np.float64(0.0))


class TestLossClass:
    dom = Ball(2, 1.0)

    def test_members_have_no_violations(self):
        cls = LossClass("squared", self.dom, lipschitz=3.0, strong_convexity=0.5, data_bound=1.0)
        # (|y| + ||v|| D) ||v|| + ridge D = (1 + 1) * 1 + 0.5 = 2.5 <= 3
        assert cls.violations(SquaredLoss(np.array([1.0, 0.0]), -1.0, 0.5)) == []
        cls.check([SquaredLoss(np.array([0.0, 1.0]), 1.0, 0.5)] * 3)

    @pytest.mark.parametrize("loss, match", [
        (LinearLoss(np.array([0.3, 0.4])), "kind 'linear' != declared 'squared'"),
        (SquaredLoss(np.array([1.0, 0.0, 0.0]), 0.0, 0.5), "dimension 3 != domain dimension 2"),
        (SquaredLoss(np.array([1.0, 1.0]), 1.0, 0.5), "Lipschitz constant .* exceeds declared L=3"),
        (SquaredLoss(np.array([0.5, 0.0]), 0.5, 0.1),
         "strong convexity 0.1 below declared alpha=0.5"),
        (SquaredLoss(np.array([0.1, 0.0]), 1.5, 0.5), "exceeds declared R=1"),
    ])
    def test_non_members_are_rejected_with_the_reason(self, loss, match):
        cls = LossClass("squared", self.dom, lipschitz=3.0, strong_convexity=0.5, data_bound=1.0)
        reasons = cls.violations(loss)
        assert reasons, "a non-member must have at least one violation"
        assert any(re.search(match, r) for r in reasons), reasons

    def test_check_names_the_position_of_the_first_non_member(self):
        cls = LossClass("linear", self.dom, lipschitz=1.0)
        stream = [LinearLoss(np.array([0.6, 0.8]))] * 2 + [LinearLoss(np.array([1.0, 1.0]))]
        with pytest.raises(ValueError, match="position 2 .* Lipschitz constant 1.41421 over the "
                                             "domain exceeds declared L=1"):
            cls.check(stream)

    def test_linear_data_bound_applies_to_g(self):
        cls = LossClass("linear", self.dom, lipschitz=5.0, data_bound=1.0)
        assert cls.violations(LinearLoss(np.array([1.0, 0.0]))) == []
        assert any("||g|| exceeds declared R=1" in r
                   for r in cls.violations(LinearLoss(np.array([2.0, 0.0]))))

    def test_norm_exactly_at_the_bound_is_a_member(self):
        cls = LossClass("logistic", self.dom, lipschitz=1.0, strong_convexity=0.25)
        # ||v|| + ridge D = 0.75 + 0.25 = L exactly.
        assert cls.violations(LogisticLoss(np.array([0.0, 0.75]), -1, 0.25)) == []
        assert cls.violations(LogisticLoss(np.array([0.0, 0.75 + 1e-6]), -1, 0.25)) != []

    @pytest.mark.parametrize("kwargs, match", [
        ({"lipschitz": 0.0}, "lipschitz"),
        ({"lipschitz": -1.0}, "lipschitz"),
        ({"lipschitz": 1.0, "strong_convexity": -0.1}, "strong_convexity"),
        ({"lipschitz": 1.0, "data_bound": 0.0}, "data_bound"),
    ])
    def test_invalid_constants_are_rejected(self, kwargs, match):
        with pytest.raises(ValueError, match=match):
            LossClass("linear", self.dom, **kwargs)


def test_classification_labels_are_not_bounded_by_the_feature_bound():
    # R bounds ||v|| for logistic/hinge losses; labels are +-1 whatever R is.
    from dpaudit.learners.domains import Ball
    from dpaudit.learners.losses import LogisticLoss, LossClass

    cls = LossClass("logistic", Ball(2), lipschitz=1.0, data_bound=0.5)
    assert cls.violations(LogisticLoss(np.array([0.3, 0.0]), -1.0)) == []
    assert "||v|| exceeds" in cls.violations(LogisticLoss(np.array([0.6, 0.0]), 1.0))[0]


def test_shifted_squared_loss_differs_from_squared_loss_by_a_constant_only():
    # Same gradient (so the same iterates for every learner), value lower by reference^2 / 2,
    # computed without cancelling huge squares.
    from dpaudit.learners.losses import ShiftedSquaredLoss, SquaredLoss

    rng = np.random.default_rng(0)
    x = rng.normal(size=(5, 3))
    base = SquaredLoss(np.array([0.5, -1.0, 2.0]), 0.7, ridge=0.1)
    shifted = ShiftedSquaredLoss(base.v, base.y, 0.1, reference=1.5)
    np.testing.assert_allclose(shifted.grad(x), base.grad(x))
    np.testing.assert_allclose(shifted.value(x), base.value(x) - 0.5 * 1.5 ** 2)
    huge = ShiftedSquaredLoss(np.array([1e-8]), 1e8, reference=1e8)  # value at 0 is exactly 0
    assert float(huge.value(np.zeros((1, 1)))[0]) == 0.0
