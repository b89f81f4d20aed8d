"""The sensitivity checker finds planted violations, passes provable bounds, and is reproducible.

Reference learner (provable, tight): the projected "mean of gradients at the origin"

    x_1 = 0,    x_{t+1} = Pi_C( -(1/(lam t)) sum_{s<=t} grad f_s(0) ),

an FTL-style learner (for linear losses it is gradient descent with eta_t = 1/(lam t) on
f_s + lam/2 ||x||^2, unrolled). Bound: if f_{p} is replaced (1-indexed), x_{t+1} is unchanged for
t < p; for t >= p the unprojected points differ by (grad f_p(0) - grad f'_p(0)) / (lam t), whose
norm is at most 2G/(lam t) with G = max ||grad f(0)|| over the class (G = L for linear losses with
||g|| <= L and for hinge losses with ridge 0, since grad f(0) = -y v and ||v|| <= L); Euclidean
projection onto a convex set is 1-Lipschitz, so ||x_{t+1} - x'_{t+1}|| <= 2G/(lam t). The bound is
attained (no projection when the radius exceeds G/lam; g' = -g with ||g|| = G), so a correct search
must report a worst ratio of 1 and a claim half as large must fail with ratio 2.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from dpaudit.claims.evidence import LemmaCheck
from dpaudit.formal.sensitivity import (SensitivityReport, check_sensitivity, cumulative_distance,
                                        loss_from_dict, loss_to_dict, rowwise_distance,
                                        sensitivity_profile, trajectory_distance)
from dpaudit.formal.strategies import experts_class
from dpaudit.learners.domains import Ball, Box
from dpaudit.learners.losses import HingeLoss, LinearLoss, LogisticLoss, LossClass, SquaredLoss

L, LAM = 1.0, 0.5
EXAMPLES = 60


def mean_gradient_learner(domain, lam: float = LAM):
    """Trajectory x_1..x_T (rows) of the learner in the module docstring, projected onto domain."""

    def trajectory(losses):
        d = domain.dim
        grads = np.array([f.grad(np.zeros(d)) for f in losses])
        t = np.arange(1, len(losses) + 1)[:, None]
        unprojected = -np.cumsum(grads, axis=0) / (lam * t)
        return np.vstack([np.zeros((1, d)), domain.project(unprojected[:-1])])

    return trajectory


LINEAR = LossClass("linear", Ball(3, 1.0), lipschitz=L)
HINGE = LossClass("hinge", Ball(2, 1.0), lipschitz=L)  # ridge 0: grad f(0) = -y v, ||v|| <= L
WIDE = Ball(3, 3.0)  # radius 3 > G / lam = 2: no projection, the bound is attained


def two_g(t: int, T: int) -> float:
    return 2 * L / (LAM * t)


def one_g(t: int, T: int) -> float:
    return L / (LAM * t)


@pytest.mark.parametrize("cls, domain", [(LINEAR, WIDE), (HINGE, Ball(2, 3.0))])
def test_a_correct_bound_holds_and_the_search_reaches_its_extreme(cls, domain):
    report = check_sensitivity(mean_gradient_learner(domain), two_g, cls, T=(1, 12),
                               examples=EXAMPLES, seed=3)
    assert report.holds and report.counterexample is None
    # Without projection the bound is attained by g' = -g at the bound, one of the fixed extreme
    # pairs the checker evaluates before searching, so reaching ratio 1 does not depend on luck.
    assert report.worst_ratio == pytest.approx(1.0, abs=1e-9)
    assert report.examples >= EXAMPLES


def test_a_correct_bound_holds_under_projection_and_its_extreme_is_attainable():
    domain = Ball(3, 0.4)
    report = check_sensitivity(mean_gradient_learner(domain), two_g, LINEAR, T=(1, 12),
                               examples=EXAMPLES, seed=3)
    assert report.holds and report.counterexample is None and 0 < report.worst_ratio <= 1 + 1e-9
    # The extreme needs a specific stream (f_1 = g, f'_1 = -g, zero losses after it): at t = 5
    # both points sit on the sphere, 2 * 0.4 = 2G/(lam * 5). How close a short random search gets
    # to it depends on Hypothesis's search path (which varies with the imported modules), so the
    # attained value is checked on the hand-built pair instead.
    g = np.array([L, 0.0, 0.0])
    zero = LinearLoss(np.zeros(3))
    stream = [LinearLoss(g)] + [zero] * 5
    neighbour = [LinearLoss(-g)] + [zero] * 5
    profile = sensitivity_profile(mean_gradient_learner(domain), stream, neighbour, two_g)
    assert float(np.max(profile.ratio)) == pytest.approx(1.0, abs=1e-9)


def test_a_bound_too_small_by_two_is_violated_with_a_shrunk_counterexample():
    report = check_sensitivity(mean_gradient_learner(WIDE), one_g, LINEAR, T=(1, 12),
                               examples=EXAMPLES, seed=0)
    assert not report.holds
    assert report.worst_ratio == pytest.approx(2.0, rel=1e-9)
    cex = report.counterexample
    assert cex is not None and report.counterexample_shrunk
    # Shrunk: the shortest stream that can violate (x_2 is the first iterate that depends on f_1)
    # with the replaced loss and its opposite at the bound.
    assert cex.pair.T == 2 and cex.position == 0 and cex.t == 1
    assert np.linalg.norm(cex.stream[0].g) == pytest.approx(L)
    np.testing.assert_allclose(cex.replacement.g, -cex.stream[0].g)
    assert cex.observed == pytest.approx(2 * L / LAM) and cex.claimed == pytest.approx(L / LAM)


def test_the_reported_counterexample_really_violates_the_bound_when_replayed():
    report = check_sensitivity(mean_gradient_learner(WIDE), one_g, LINEAR, T=(1, 12),
                               examples=EXAMPLES, seed=5)
    cex = report.counterexample
    learner = mean_gradient_learner(WIDE)
    # Replay from the report object ...
    prof = sensitivity_profile(learner, cex.stream, cex.neighbour(), one_g)
    i = list(prof.t).index(cex.t)
    assert prof.observed[i] > prof.claimed[i] * (1 + 1e-6)
    assert prof.observed[i] == pytest.approx(cex.observed)
    # ... and from its JSON form (what a report stores), by hand, without the checker.
    d = json.loads(json.dumps(report.to_lemma_check("||x_{t+1} - x'_{t+1}|| <= L/(lam t)")
                              .to_dict()))["counterexample"]
    stream = [loss_from_dict(f) for f in d["stream"]]
    neighbour = list(stream)
    neighbour[d["position"]] = loss_from_dict(d["replacement"])
    x0, x1 = learner(stream), learner(neighbour)
    observed = np.linalg.norm(x0[d["t"]] - x1[d["t"]])  # offset 1: claim t bounds row t = x_{t+1}
    assert observed == pytest.approx(d["observed"])
    assert observed > one_g(d["t"], len(stream)) * (1 + 1e-6)


def test_a_violation_found_only_at_an_interior_position_is_reported_at_its_round():
    # A learner that releases the latest gradient, x_{t+1} = -g_t / lam, has sensitivity 2L/lam at
    # round t = p only; against 2L/(lam t) it fails at every t >= 2, i.e. needs position >= 1.
    def latest_gradient(losses):
        g = np.array([f.g for f in losses])
        return np.vstack([np.zeros((1, 3)), -g[:-1] / LAM])

    report = check_sensitivity(latest_gradient, two_g, LINEAR, T=(1, 16), examples=EXAMPLES, seed=0)
    assert not report.holds
    cex = report.counterexample
    assert cex.position >= 1 and cex.t == cex.position + 1
    assert cex.ratio == pytest.approx(cex.t * np.linalg.norm(cex.stream[cex.position].g
                                                             - cex.replacement.g) / (2 * L))
    assert report.worst_ratio == pytest.approx(15.0)  # t = 15 at T = 16: found by the extremes


def test_offset_selects_which_iterate_the_claim_bounds():
    # With offset 0 the claim 2L/(lam t) is read as a bound on x_t = x_{(t-1)+1}, whose true
    # sensitivity is 2L/(lam (t-1)): violated, worst at t = 2 with ratio 2.
    report = check_sensitivity(mean_gradient_learner(WIDE), two_g, LINEAR, T=(1, 10),
                               examples=EXAMPLES, seed=1, offset=0)
    assert not report.holds
    assert report.worst_ratio == pytest.approx(2.0)
    assert report.counterexample.t == 2
    # x_1 is data-independent: at t = 1 the observed distance is 0 in every example.
    assert report.worst.profile.observed[0] == 0.0


def test_whole_trajectory_mode():
    # ||X - X'||_F^2 = sum_{t >= p} ||g - g'||^2 / (lam t)^2 <= (2L/lam)^2 sum_{t=1}^{T-1} t^-2.
    def whole(t, T):
        return 2 * L / LAM * math.sqrt(sum(1.0 / s**2 for s in range(1, T)))

    ok = check_sensitivity(mean_gradient_learner(WIDE), whole, LINEAR, T=(1, 10),
                           examples=EXAMPLES, seed=2, offset=0, distance=trajectory_distance())
    assert ok.holds and ok.worst_ratio == pytest.approx(1.0, abs=1e-9)
    assert ok.distance == "trajectory_l2"
    bad = check_sensitivity(mean_gradient_learner(WIDE), lambda t, T: 0.5 * whole(t, T), LINEAR,
                            T=(1, 10), examples=EXAMPLES, seed=2, offset=0,
                            distance=trajectory_distance())
    assert not bad.holds and bad.worst_ratio == pytest.approx(2.0)


def test_experts_class_with_its_sqrt_d_bound():
    # g, g' in [0,1]^d: ||g - g'|| <= sqrt(d) (= the class's L), attained by ones vs zeros.
    cls = experts_class(4)
    report = check_sensitivity(mean_gradient_learner(Ball(4, 10.0 / 3.0)),
                               lambda t, T: math.sqrt(4) / (LAM * t), cls, T=(1, 8),
                               examples=EXAMPLES, seed=0)
    assert report.holds and report.worst_ratio == pytest.approx(1.0, abs=1e-9)


def test_the_search_is_deterministic_given_the_seed():
    def run(seed):
        return check_sensitivity(mean_gradient_learner(Ball(3, 0.4)), two_g, LINEAR, T=(1, 8),
                                 examples=60, seed=seed)

    a, b = run(11), run(11)
    assert json.dumps(a.to_dict()) == json.dumps(b.to_dict())
    assert a.examples == b.examples and a.worst_ratio == b.worst_ratio


def test_lemma_check_and_trace_follow_the_claim_audit_conventions():
    holds = check_sensitivity(mean_gradient_learner(WIDE), two_g, LINEAR, T=(1, 8),
                              examples=60, seed=0)
    lemma = holds.to_lemma_check("IGD-style: ||x_{t+1} - x'_{t+1}|| <= 2L/(lam t)")
    assert isinstance(lemma, LemmaCheck)
    assert lemma.status == "holds" and lemma.counterexample is None
    assert lemma.examples == holds.examples and lemma.worst_ratio == holds.worst_ratio
    json.dumps(lemma.to_dict())
    assert LemmaCheck.from_dict(lemma.to_dict()) == lemma

    fig = holds.trace("2L/(lam t)")
    assert {"t", "observed", "claimed", "statement"} <= set(fig)
    assert len(fig["t"]) == len(fig["observed"]) == len(fig["claimed"]) >= 1
    assert fig["t"] == sorted(fig["t"]) and fig["t"][0] >= 1
    assert all(o <= c * (1 + 1e-9) for o, c in zip(fig["observed"], fig["claimed"]))
    assert fig["claimed"] == [pytest.approx(two_g(t, fig["T"])) for t in fig["t"]]
    json.dumps(fig)
    with pytest.raises(ValueError, match="no counterexample"):
        holds.trace("x", which="counterexample")

    # extremes=False: the counterexample must come from the Hypothesis search, hence be shrunk.
    bad = check_sensitivity(mean_gradient_learner(WIDE), one_g, LINEAR, T=(1, 8), examples=200,
                            seed=0, extremes=False)
    lemma = bad.to_lemma_check("L/(lam t)")
    assert lemma.status == "violated"
    assert lemma.counterexample["ratio"] == pytest.approx(2.0)
    assert lemma.counterexample["shrunk"] is True
    fig = bad.trace("L/(lam t)", which="counterexample")
    assert any(o > c for o, c in zip(fig["observed"], fig["claimed"]))
    json.dumps(bad.to_dict())


def test_a_zero_claim_tolerates_only_rounding():
    # A learner that ignores its input: observed 0 everywhere; the claim 0 holds with ratio 0.
    report = check_sensitivity(lambda losses: np.zeros((len(losses), 3)), lambda t, T: 0.0,
                               LINEAR, T=(2, 5), examples=20, seed=0)
    assert report.holds and report.worst_ratio == 0.0
    # Any real difference against a zero claim is a violation with an infinite ratio.
    bad = check_sensitivity(mean_gradient_learner(WIDE), lambda t, T: 0.0, LINEAR, T=(2, 5),
                            examples=20, seed=0)
    assert not bad.holds and math.isinf(bad.worst_ratio)
    assert bad.to_dict()["worst_ratio"] == "inf"


def test_infinite_claims_mark_uncovered_rounds():
    # Claim only from round 3 on: rounds 1 and 2 are not compared.
    report = check_sensitivity(mean_gradient_learner(WIDE),
                               lambda t, T: math.inf if t < 3 else 2 * L / (LAM * t), LINEAR,
                               T=(1, 6), examples=30, seed=0)
    assert report.holds
    assert min(report.worst.profile.t) >= 3


def test_distances():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(6, 3)), rng.normal(size=(6, 3))
    diff = a - b
    np.testing.assert_allclose(rowwise_distance("l2")(a, b), np.linalg.norm(diff, axis=1))
    np.testing.assert_allclose(rowwise_distance("l1")(a, b), np.abs(diff).sum(axis=1))
    np.testing.assert_allclose(rowwise_distance("linf")(a, b), np.abs(diff).max(axis=1))
    for norm, ord_ in (("l2", 2), ("l1", 1), ("linf", np.inf)):
        cum = cumulative_distance(norm)(a, b)
        assert cum.shape == (6,) and np.all(np.diff(cum) >= 0)
        assert cum[-1] == pytest.approx(trajectory_distance(norm)(a, b)[0])
        assert trajectory_distance(norm)(a, b)[0] == pytest.approx(
            np.linalg.norm(diff.ravel(), ord=ord_))
        assert cum[2] == pytest.approx(np.linalg.norm(diff[:3].ravel(), ord=ord_))
    # Scalar trajectories (shape (T,)) are compared row by row as 1-vectors.
    np.testing.assert_allclose(rowwise_distance()(np.arange(4.0), np.zeros(4)), np.arange(4.0))


def test_norm_selects_the_default_distance():
    # l_inf distance of the linear learner: ||g - g'||_inf / (lam t) <= 2L/(lam t) still holds, and
    # the claim in l_inf is attained along a coordinate axis.
    report = check_sensitivity(mean_gradient_learner(WIDE), two_g, LINEAR, T=(1, 6), examples=40,
                               seed=0, norm="linf")
    assert report.holds and report.worst_ratio == pytest.approx(1.0)
    assert report.distance == "rowwise_linf"


@pytest.mark.parametrize("loss", [
    LinearLoss(np.array([0.5, -1.0])),
    SquaredLoss(np.array([1.0, 2.0]), -0.5, 0.25),
    LogisticLoss(np.array([0.0, 3.0]), -1, 0.0),
    HingeLoss(np.array([1.5, 0.5]), 1, 2.0),
])
def test_losses_round_trip_through_json(loss):
    back = loss_from_dict(json.loads(json.dumps(loss_to_dict(loss))))
    assert type(back) is type(loss)
    x = np.array([[0.3, -0.7], [1.0, 2.0]])
    np.testing.assert_array_equal(back.value(x), loss.value(x))
    np.testing.assert_array_equal(back.grad(x), loss.grad(x))


def test_loss_from_dict_rejects_unknown_kinds():
    with pytest.raises(ValueError, match="unknown loss kind 'cubic'"):
        loss_from_dict({"kind": "cubic", "v": [1.0]})


@pytest.mark.parametrize("kwargs, exc, match", [
    ({"T": 1}, ValueError, "no example had an entry covered by the claim"),
    ({"T": (3, 2)}, ValueError, "max_T"),
    ({"T": (0, 2)}, ValueError, "min_T"),
    ({"examples": 0}, ValueError, "examples"),
    ({"seed": -1}, ValueError, "seed"),
    ({"offset": -1}, ValueError, "offset"),
    ({"rtol": -1.0}, ValueError, "rtol"),
    ({"norm": "l3"}, ValueError, "norm must be one of"),
    ({"norm": "l1", "distance": trajectory_distance()}, ValueError, "not both"),
    ({"claimed_bound": lambda t, T: -1.0}, ValueError, "claimed_bound\\(1, 2\\) must be >= 0"),
    ({"claimed_bound": lambda t, T: math.nan}, ValueError, "claimed_bound"),
    ({"claimed_bound": "2L/t"}, TypeError, "claimed_bound must be callable"),
    ({"trajectory_fn": lambda losses: np.full((len(losses), 3), np.nan)}, ValueError,
     "non-finite"),
    ({"trajectory_fn": lambda losses: np.zeros((len(losses), 2 + (losses[0].g[0] > 0)))},
     ValueError, "shapes"),
    ({"distance": lambda a, b: -np.ones(2)}, ValueError, "non-negative"),
    ({"loss_class": "linear"}, TypeError, "loss_class must be a LossClass"),
])
def test_invalid_arguments_are_rejected(kwargs, exc, match):
    args = {"trajectory_fn": mean_gradient_learner(WIDE), "claimed_bound": two_g,
            "loss_class": LINEAR, "T": (2, 4), "examples": 10, "seed": 0}
    args.update(kwargs)
    with pytest.raises(exc, match=match):
        check_sensitivity(args.pop("trajectory_fn"), args.pop("claimed_bound"),
                          args.pop("loss_class"), **args)


def test_sensitivity_profile_of_a_hand_built_pair():
    # The textbook worst case, evaluated directly: ratio 1 at every round after the replacement.
    g = LinearLoss(np.array([L, 0.0, 0.0]))
    stream = [g] * 5
    neighbour = [LinearLoss(-g.g)] + [g] * 4
    prof = sensitivity_profile(mean_gradient_learner(WIDE), stream, neighbour, two_g)
    np.testing.assert_array_equal(prof.t, [1, 2, 3, 4])
    np.testing.assert_allclose(prof.ratio, 1.0)
    assert prof.T == 5 and prof.worst_ratio == pytest.approx(1.0)
    with pytest.raises(ValueError, match="equal length"):
        sensitivity_profile(mean_gradient_learner(WIDE), stream, neighbour[:3], two_g)


def test_report_type():
    report = check_sensitivity(mean_gradient_learner(Box(3, -1.0, 1.0)), two_g, LINEAR, T=(1, 4),
                               examples=10, seed=0)
    assert isinstance(report, SensitivityReport)
    assert report.loss_class is LINEAR and report.seed == 0 and report.offset == 1



@pytest.mark.parametrize("bound", [two_g, one_g])
def test_search_does_not_depend_on_loaded_local_modules(tmp_path, monkeypatch, bound):
    """A lemma search is a function of its seed and program, not of which local modules are
    imported: Hypothesis harvests literal constants from loaded local modules into its draws
    unless the search runs inside ``independent_of_loaded_modules`` (check_sensitivity does).
    Both a holding bound (the worst example found) and a failing one (the shrunk counterexample)."""
    import importlib
    import sys

    def run():
        return check_sensitivity(mean_gradient_learner(WIDE), bound, LINEAR, T=(1, 12),
                                 examples=EXAMPLES, seed=5).to_dict()

    before = run()
    # A local module full of float and integer literals, as a user's code or a new paper would be.
    (tmp_path / "dpaudit_constants_probe.py").write_text(
        "VALUES = [" + ", ".join(f"{k / 7:.17g}, {k * 13}" for k in range(1, 400)) + "]\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.import_module("dpaudit_constants_probe")
    try:
        assert run() == before
    finally:
        sys.modules.pop("dpaudit_constants_probe", None)
