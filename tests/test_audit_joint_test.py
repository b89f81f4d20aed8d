"""audit(..., joint_test=True): threshold events decided by the exact joint test."""

from __future__ import annotations

import pytest

import dpaudit
from dpaudit.blackbox.joint_test import joint_epsilon_lower_bound
from dpaudit.mechanisms import LaplaceMechanism


def test_joint_test_bound_is_the_joint_test_of_the_reported_counts():
    mech = LaplaceMechanism(1.0, 1.0).sample
    cp = dpaudit.audit(mech, 0.0, 1.0, epsilon=1.0, samples=20_000, seed=4)
    jt = dpaudit.audit(mech, 0.0, 1.0, epsilon=1.0, samples=20_000, seed=4, joint_test=True)
    # same runs, same chosen event: only the test differs
    assert jt.event.event == cp.event.event and jt.event.p.count == cp.event.p.count
    e = jt.event
    again = joint_epsilon_lower_bound(e.p.count, e.p.nobs, e.q.count, e.q.nobs, delta=0.0,
                                      alpha=jt.bonferroni.per_event_alpha)
    assert jt.epsilon_lower_bound == pytest.approx(again, abs=1e-12)
    assert e.test == "exact joint test" and cp.event.test == "clopper-pearson"
    assert e.to_dict()["test_method"] == "exact joint test"
    # Laplace(1) on the pair (0, 1) is exactly 1-DP: a valid bound stays below, and the joint
    # test certifies more than the product here (0.925 against 0.911 at seed 4;
    # seeds 5-7: 0.967, 0.999, 0.946 against 0.951, 0.984, 0.930)
    assert cp.epsilon_lower_bound < jt.epsilon_lower_bound <= 1.0


def test_joint_test_flag_must_be_boolean():
    with pytest.raises(TypeError, match="joint_test"):
        dpaudit.audit(LaplaceMechanism(1.0, 1.0).sample, 0.0, 1.0, samples=100,
                      joint_test="yes")
