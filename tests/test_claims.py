"""Claims are immutable values that survive a JSON round trip and reject bad parameters."""

import dataclasses
import json

import pytest

from dpaudit.claims import NeighbourRelation, PrivacyClaim, Provenance, Release, SensitivityLemma

PROV = Provenance("jkt12-colt.txt", "COLT 2012", "Theorem 1", "sigma^2 = ...", "Sec. 3")


def make(**kw):
    base = dict(id="jkt12-colt/pigd", epsilon=1.0, delta=1e-5, provenance=PROV,
                calibration="sigma = ...", parameter_range={"alpha": "(0, inf)"},
                lemmas=(SensitivityLemma("IGD sensitivity <= 2L/(alpha t)", PROV),))
    base.update(kw)
    return PrivacyClaim(**base)


def test_round_trip_through_json():
    c = make()
    again = PrivacyClaim.from_dict(json.loads(json.dumps(c.to_dict())))
    assert again == c
    assert again.lemmas[0].statement == "IGD sensitivity <= 2L/(alpha t)"
    assert again.neighbour is NeighbourRelation.REPLACE_ONE
    assert again.release is Release.FULL_SEQUENCE


def test_immutable():
    c = make()
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.epsilon = 2.0  # type: ignore[misc]
    with pytest.raises(TypeError):
        c.parameter_range["T"] = ">= 1"  # type: ignore[index]
    assert hash(c) == hash(make())


def test_with_privacy_keeps_everything_else():
    c = make().with_privacy(0.5)
    assert c.epsilon == 0.5 and c.delta == 1e-5 and c.id == "jkt12-colt/pigd"


@pytest.mark.parametrize("kw, exc, match", [
    (dict(epsilon=0.0), ValueError, "epsilon must be in"),
    (dict(epsilon=-1.0), ValueError, "epsilon must be in"),
    (dict(epsilon=float("nan")), ValueError, "epsilon must not be NaN"),
    (dict(epsilon="1"), TypeError, "epsilon must be a real number"),
    (dict(delta=1.0), ValueError, r"delta must be in \[0, 1\)"),
    (dict(delta=-1e-9), ValueError, r"delta must be in \[0, 1\)"),
    (dict(id="nopaper"), ValueError, "id must look like"),
    (dict(neighbour="sideways"), ValueError, "sideways"),
])
def test_bad_claims_are_rejected(kw, exc, match):
    with pytest.raises(exc, match=match):
        make(**kw)
