"""The noise-site check judges the calibration as a whole (derived law, else composition of draws).

Every expected ratio is derived here by hand from the release's structure (which nodes a record
enters, how far, at which noise scale), never read back from dpaudit. Conventions: a record is a
leaf value clipped to [-C, C] (C = 1, the schedule's sensitivity), neighbours replace one record,
so a moved node moves by 2C (the relation's factor 2), and the pair +C vs -C at leaf 0 is the
worst pair.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import strategies as st

import dpaudit
from dpaudit.greybox import NotDerivable
from dpaudit.greybox.noise_sites import (COMPOSITION, DERIVED_LAW, pair_calibration,
                                         schedule_budget)

C, SIGMA, DELTA = 1.0, 4.0, 1e-5
LEAVES, DEPTH = 8, 4  # a binary tree over 8 leaves: 8 + 4 + 2 + 1 = 15 nodes, 4 on a leaf's path


def tree_nodes(leaves, clip: bool = True) -> np.ndarray:
    """The 15 node sums of a binary tree over 8 leaves (leaves, then each level up)."""
    x = np.asarray(leaves, dtype=float)
    if clip:
        x = np.clip(x, -C, C)
    levels = [x]
    while levels[-1].size > 1:
        levels.append(levels[-1].reshape(-1, 2).sum(axis=1))
    return np.concatenate(levels)


def tree(variant: str = "correct", family: str = "gaussian", scale: float = SIGMA):
    """All 15 nodes' noise from ONE vector draw. Variants: ``addremove`` (half the noise),
    ``noclip``, ``nonode`` (the root's noise missing), ``clipafter`` (the output clipped to
    [-50, 50]: a projection after the noise, so no law is derived)."""
    def mechanism(leaves, n, rng):
        nodes = tree_nodes(leaves, clip=variant != "noclip")
        s = scale / 2 if variant == "addremove" else scale
        if variant == "nonode":
            s = np.r_[np.full(14, s), 0.0]
        noise = (rng.normal(0.0, s, size=(n, 15)) if family == "gaussian"
                 else rng.laplace(0.0, s, size=(n, 15)))
        out = nodes + noise
        return np.clip(out, -50.0, 50.0) if variant == "clipafter" else out
    return mechanism


def summed(parts, clip_after: float | None = None):
    """The clipped sum of the records (rows of 2-vectors, each clipped to l2 norm C) plus noise
    drawn in ``len(parts)`` calls of scales ``parts`` (times sigma), all added to the same value."""
    def mechanism(records, n, rng):
        r = np.asarray(records, dtype=float)
        r = r * np.minimum(1.0, C / np.maximum(np.linalg.norm(r, axis=1, keepdims=True), 1e-300))
        out = r.sum(axis=0)
        for p in parts:
            out = out + rng.normal(0.0, p * SIGMA, size=(n, 2))
        return out if clip_after is None else np.clip(out, -clip_after, clip_after)
    return mechanism


def leaf_pair(a: float = C) -> tuple[np.ndarray, np.ndarray]:
    x0, x1 = np.zeros(LEAVES), np.zeros(LEAVES)
    x0[0], x1[0] = a, -a
    return x0, x1


RECORDS = (np.array([[C, 0.0], [0.0, 0.0]]), np.array([[-C, 0.0], [0.0, 0.0]]))


def calib(mechanism, pair, schedule):
    res = pair_calibration(mechanism, *pair, seed=0, schedule=schedule, factor=2.0)
    assert not isinstance(res, NotDerivable)
    assert not isinstance(res.whole, NotDerivable), res.whole
    return res


# ---------------------------------------------------------------- the whole against the schedule

def test_the_schedules_budget_is_mu_over_its_releases_and_pure_epsilon_for_laplace() -> None:
    # Gaussian: sqrt(4) x 2 x 1 / 4 = 1; Laplace: 4 x 2 x 1 / 4 = 2; add/remove halves both.
    assert schedule_budget(dpaudit.noise.GaussianNoise(SIGMA, C, DEPTH), 2.0)[:2] == (
        pytest.approx(1.0, rel=1e-15), "gaussian")
    assert schedule_budget(dpaudit.noise.LaplaceNoise(SIGMA, C, DEPTH), 2.0)[:2] == (
        pytest.approx(2.0, rel=1e-15), "laplace")
    assert schedule_budget(dpaudit.noise.GaussianNoise(SIGMA, C, DEPTH), 1.0)[0] == \
        pytest.approx(0.5, rel=1e-15)
    assert schedule_budget(dpaudit.noise.SparseVector(1.0, 1.0, 1.0), 2.0) is None


@pytest.mark.parametrize("name,mechanism,pair,site_ratios", [
    # One vector draw of 15 nodes: the pair moves 4 nodes by 2, l2 4, one release assumes 2 at
    # sigma: the site is at 2 = sqrt(depth), but the law N(m, sigma^2 I) has mu = 4 / sigma, the
    # schedule over its 4 releases sqrt(4) x 2 / sigma: exactly 1.
    ("tree", tree(), leaf_pair(), [2.0]),
    # 0.6 sigma and 0.8 sigma on the same value: per draw 2 against 2 x 0.6 (1 / 0.6), but the
    # variances sum to sigma^2: the law is N(sum, sigma^2 I), mu = 2 / sigma, exactly 1.
    ("split", summed([0.6, 0.8]), RECORDS, [1 / 0.6]),
    # Four draws of sigma / 2 summed: each at 2 (one site, four draws), variance 4 sigma^2 / 4.
    ("loop", summed([0.5] * 4), RECORDS, [2.0]),
])
def test_correct_releases_meet_the_calibration_exactly_by_their_derived_law(
        name, mechanism, pair, site_ratios) -> None:
    releases = DEPTH if name == "tree" else 1
    res = calib(mechanism, pair, dpaudit.noise.GaussianNoise(SIGMA, C, releases))
    assert res.whole.method == DERIVED_LAW
    assert res.whole.ratio == pytest.approx(1.0, rel=1e-12)
    assert res.whole.observed == pytest.approx(2.0 * math.sqrt(releases) / SIGMA, rel=1e-12)
    assert sorted(s.ratio for s in res.sites) == pytest.approx(site_ratios, rel=1e-12)


@pytest.mark.parametrize("mechanism,pair,releases,ratio", [
    (tree("addremove"), leaf_pair(), DEPTH, 2.0),  # noise sigma / 2 calibrated for add/remove
    (tree("noclip"), leaf_pair(5.0), DEPTH, 5.0),  # unclipped +-5: nodes move by 10, not 2
    (tree(scale=0.8 * SIGMA), leaf_pair(), DEPTH, 1 / 0.8),  # noise below the schedule's
    (tree(), leaf_pair(), 2, math.sqrt(2.0)),  # batched, but the schedule counts 2 releases
    # 0.6 sigma and 0.7 sigma: variance 0.85 sigma^2 < sigma^2, mu = 2 / (sqrt(0.85) sigma).
    (summed([0.6, 0.7]), RECORDS, 1, 1 / math.sqrt(0.85)),
])
def test_calibration_failures_are_caught_by_the_whole_ratio(mechanism, pair, releases,
                                                           ratio) -> None:
    res = calib(mechanism, pair, dpaudit.noise.GaussianNoise(SIGMA, C, releases))
    assert res.whole.method == DERIVED_LAW
    assert res.whole.ratio == pytest.approx(ratio, rel=1e-12)


def test_a_tree_with_one_nodes_noise_missing_is_infinitely_far_off() -> None:
    # The root (which leaf 0's record enters) has no noise: the shift leaves the noise's span.
    res = calib(tree("nonode"), leaf_pair(), dpaudit.noise.GaussianNoise(SIGMA, C, DEPTH))
    assert res.whole.method == DERIVED_LAW and math.isinf(res.whole.ratio)
    assert res.whole.to_dict()["ratio"] == "inf"


def test_laplace_the_pure_epsilon_of_the_law_against_releases_times_the_pieces() -> None:
    # 15 Laplace(b = 4) nodes, 4 moved by 2: the law's pure epsilon is 4 x 2 / 4 = 2, the schedule's
    # 4 releases x 2 / 4 = 2 (ratio 1); with b / 2 it is 4 (ratio 2); with the schedule's
    # releases 2 the budget halves (ratio 2).
    sched = dpaudit.noise.LaplaceNoise(SIGMA, C, DEPTH)
    ok = calib(tree(family="laplace"), leaf_pair(), sched)
    assert ok.whole.method == DERIVED_LAW and ok.whole.quantity == "pure epsilon"
    assert ok.whole.observed == pytest.approx(2.0, rel=1e-12)
    assert ok.whole.ratio == pytest.approx(1.0, rel=1e-12)
    # The single site: l1 move 8 against one release's 2 at b: the site is at depth = 4.
    assert [s.ratio for s in ok.sites] == [pytest.approx(4.0, rel=1e-12)]
    half = calib(tree("addremove", family="laplace"), leaf_pair(), sched)
    assert half.whole.ratio == pytest.approx(2.0, rel=1e-12)
    short = calib(tree(family="laplace"), leaf_pair(), dpaudit.noise.LaplaceNoise(SIGMA, C, 2))
    assert short.whole.ratio == pytest.approx(2.0, rel=1e-12)


# ---------------------------------------------------------------- no law: composition of draws

def test_with_a_clip_after_the_noise_the_draws_are_composed() -> None:
    # One draw: the composition is the draw's own shift, sqrt(4 x 2^2) / sigma = 1 = the schedule's.
    gauss = calib(tree("clipafter"), leaf_pair(), dpaudit.noise.GaussianNoise(SIGMA, C, DEPTH))
    assert gauss.whole.method == COMPOSITION and "not affine" in gauss.whole.how
    assert gauss.whole.proven  # every value is computed from the data alone
    assert gauss.whole.ratio == pytest.approx(1.0, rel=1e-12)
    # Laplace: sum of |move| / b over the 4 moved nodes, 8 / 4 = 2 = 4 releases x 2 / 4.
    lap = calib(tree("clipafter", family="laplace"), leaf_pair(),
                dpaudit.noise.LaplaceNoise(SIGMA, C, DEPTH))
    assert lap.whole.method == COMPOSITION
    assert lap.whole.ratio == pytest.approx(1.0, rel=1e-12)


def test_the_composition_over_counts_noise_split_over_draws_as_documented() -> None:
    # 0.6 sigma then 0.8 sigma on the same value, clipped after: the common seed sees the second
    # draw's value (x + 0.6 sigma z_1) move by the whole 2 again, so the composition is
    # 2 sqrt(1 / 0.6^2 + 1 / 0.8^2) / sigma against 2 / sigma: over 1 although the law meets it.
    res = calib(summed([0.6, 0.8], clip_after=3.0), RECORDS,
                dpaudit.noise.GaussianNoise(SIGMA, C))
    assert res.whole.method == COMPOSITION
    assert res.whole.ratio == pytest.approx(math.sqrt(1 / 0.36 + 1 / 0.64), rel=1e-12)


def test_a_missing_clip_is_caught_by_the_composition_too() -> None:
    res = calib(lambda x, n, rng: np.clip(tree("noclip")(x, n, rng), -50.0, 50.0),
                leaf_pair(5.0), dpaudit.noise.GaussianNoise(SIGMA, C, DEPTH))
    assert res.whole.method == COMPOSITION
    assert res.whole.ratio == pytest.approx(5.0, rel=1e-12)


def test_bad_arguments_are_named() -> None:
    sched = dpaudit.noise.GaussianNoise(SIGMA, C)
    with pytest.raises(ValueError, match="factor"):
        pair_calibration(tree(), *leaf_pair(), seed=0, schedule=sched, factor=0.0)
    with pytest.raises(TypeError, match="schedule"):
        pair_calibration(tree(), *leaf_pair(), seed=0, schedule=object(), factor=2.0)


# ---------------------------------------------------------------- end to end, public Claim API

def tree_claim(variant: str = "correct", releases: int = DEPTH) -> dpaudit.Claim:
    sched = dpaudit.noise.GaussianNoise(SIGMA, C, releases)
    # Claimed: the correct schedule's epsilon with 5% headroom (the claim is right for "correct").
    eps = dpaudit.noise.GaussianNoise(SIGMA, C, DEPTH).epsilon(DELTA, neighbours="replace-one")
    leaf = st.floats(-3.0, 3.0, allow_nan=False)
    return dpaudit.Claim(
        id=f"test-sites/tree-{variant}-{releases}", statement="noisy binary tree",
        source=dpaudit.Source(title="t"), claimed=lambda p: (1.05 * eps, DELTA),
        neighbours="replace-one", grid=[{}], release=lambda p: tree(variant),
        pairs=lambda p: [leaf_pair()],
        # Replace leaf i of any 8 leaves by any value: Hypothesis searches beyond the declared pair.
        pair_search=lambda p: st.tuples(st.lists(leaf, min_size=8, max_size=8),
                                        st.integers(0, 7), leaf).map(
            lambda t: (np.array(t[0]), np.array(t[0][:t[1]] + [t[2]] + t[0][t[1] + 1:]))),
        accountant=lambda p: sched, samples=2000)


def summed_claim(parts) -> dpaudit.Claim:
    eps = dpaudit.noise.GaussianNoise(SIGMA, C).epsilon(DELTA, neighbours="replace-one")
    return dpaudit.Claim(
        id="test-sites/summed", statement="clipped sum plus noise in parts",
        source=dpaudit.Source(title="t"), claimed=lambda p: (1.05 * eps, DELTA),
        neighbours="replace-one", grid=[{}], release=lambda p: summed(parts),
        pairs=lambda p: [RECORDS], accountant=lambda p: dpaudit.noise.GaussianNoise(SIGMA, C),
        samples=2000)


def site_check(result):
    (check,) = [c for c in result.lemmas if c.statement.startswith("what the data moves")]
    return check


@pytest.mark.parametrize("claim", [tree_claim(), summed_claim([0.6, 0.8]),
                                   summed_claim([0.5] * 4)], ids=["tree", "split", "loop"])
def test_correct_releases_with_a_correct_accountant_hold(claim) -> None:
    result = dpaudit.audit_claim(claim, budget="quick", seed=0)
    assert result.verdict == "holds", result.verdict_and_reason
    check = site_check(result)
    assert check.status == "holds"
    assert check.worst_ratio == pytest.approx(1.0, rel=1e-9)
    assert check.details["whole"]["method"] == "derived law"
    # Every site here is above its per-draw share (2, 1/0.6, 2 by hand): a note, not a failure.
    assert "above its per-draw share" in check.details["note"]
    assert check.details["note"] in result.findings


def test_the_add_remove_calibration_and_a_missing_node_noise_block_holds() -> None:
    half = dpaudit.audit_claim(tree_claim("addremove"), budget="quick", seed=0)
    assert half.verdict != "holds"
    check = site_check(half)
    assert check.status == "violated" and check.worst_ratio == pytest.approx(2.0, rel=1e-9)
    assert any(f.startswith("The noise calibration as a whole does not cover") and "2" in f
               for f in half.findings)
    gap = dpaudit.audit_claim(tree_claim("nonode"), budget="quick", seed=0)
    check = site_check(gap)
    assert gap.verdict != "holds"
    assert check.status == "violated" and math.isinf(check.worst_ratio)
    assert check.details["whole"]["ratio"] == "inf"


def test_batched_noise_with_too_few_releases_in_the_schedule_is_not_holds() -> None:
    # The schedule says 2 releases where a record enters 4 nodes: whole ratio sqrt(4 / 2).
    result = dpaudit.audit_claim(tree_claim(releases=2), budget="quick", seed=0)
    check = site_check(result)
    assert result.verdict != "holds"
    assert check.status == "violated"
    assert check.worst_ratio == pytest.approx(math.sqrt(2.0), rel=1e-9)


def test_a_value_that_is_not_finite_is_said_not_measured_never_a_nan_ratio() -> None:
    # The noise is added to log(x): x = 0 gives -inf on one input, which is no distance at all.
    def mechanism(x, n, rng):
        with np.errstate(divide="ignore"):
            return np.log(np.asarray(x, dtype=float)) + rng.normal(0.0, 1.0, size=(n, 1))
    res = pair_calibration(mechanism, [0.0], [1.0], seed=0,
                           schedule=dpaudit.noise.GaussianNoise(1.0, 1.0), factor=2.0)
    assert isinstance(res, NotDerivable) and "not finite" in res.reason


def test_a_value_that_takes_back_an_earlier_noisy_value_is_decided_by_the_derived_law() -> None:
    # y1 = x + z1, y2 = (y1 - 2x) + z2 at unit noise, pair x = +1 vs -1 (dx = 2). By hand: shift
    # (2, -2), noise covariance [[1, 1], [1, 2]], mu^2 = 4 (2 + 2 + 1) = 20; the schedule (2
    # releases, sigma 1, distance 2) allows mu = 2 sqrt(2): ratio sqrt(20 / 8).
    def mechanism(x, n, rng, clip=None):
        x = float(np.asarray(x).reshape(-1)[0])
        y1 = x + rng.normal(0.0, 1.0, size=(n, 1))
        y2 = (y1 - 2 * x) + rng.normal(0.0, 1.0, size=(n, 1))
        out = np.concatenate([y1, y2], axis=1)
        return out if clip is None else np.clip(out, -clip, clip)
    sched = dpaudit.noise.GaussianNoise(1.0, C, 2)
    exact = calib(mechanism, ([C], [-C]), sched)
    assert exact.whole.method == DERIVED_LAW
    assert exact.whole.ratio == pytest.approx(math.sqrt(20 / 8), rel=1e-12)
    # Clipped after the noise no law is derived, and the composition sees the second value move
    # by dx only (the common seed cancels z1): sqrt(2^2 + 2^2) / (2 sqrt 2) = 1, the documented
    # gap of the composition for non-affine releases of this shape.
    composed = calib(lambda x, n, rng: mechanism(x, n, rng, clip=3.0), ([C], [-C]), sched)
    assert composed.whole.method == COMPOSITION and not composed.whole.proven
    assert composed.whole.ratio == pytest.approx(1.0, rel=1e-12)


def test_an_unproven_composition_at_or_below_one_leaves_the_check_not_checked() -> None:
    # The same shape clipped after the noise, through the public Claim: the search sees ratio 1
    # (by hand above) on a composition that is not a proven bound, so the check must not hold.
    def release(x, n, rng):
        x = float(np.clip(np.asarray(x, dtype=float).reshape(-1)[0], -C, C))
        y1 = x + rng.normal(0.0, 1.0, size=(n, 1))
        y2 = (y1 - 2 * x) + rng.normal(0.0, 1.0, size=(n, 1))
        return np.clip(np.concatenate([y1, y2], axis=1), -3.0, 3.0)
    claim = dpaudit.Claim(
        id="test-sites/take-back", statement="y1, y2", source=dpaudit.Source(title="t"),
        claimed=lambda p: (50.0, DELTA), neighbours="replace-one", grid=[{}],
        release=lambda p: release, pairs=lambda p: [([C], [-C])],
        accountant=lambda p: dpaudit.noise.GaussianNoise(1.0, C, 2), samples=2000)
    result = dpaudit.audit_claim(claim, budget="quick", seed=0)
    check = site_check(result)
    assert check.status == "not checked" and "not a proven bound" in check.note
    assert check.details["unproven_pairs"] >= 1
