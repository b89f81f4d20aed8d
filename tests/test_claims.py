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


# --- window DP scope (pfcoco Def. 6) -------------------------------------------------------------

from dpaudit.claims import WindowBoundary, WindowScope  # noqa: E402


def test_existing_claims_json_has_no_window_key():
    # Backward compatibility: whole-sequence claims serialise exactly as before.
    assert "window" not in make().to_dict()
    assert make().window is None


@pytest.mark.parametrize("boundary", list(WindowBoundary))
def test_window_claim_round_trips_with_its_boundary_reading(boundary):
    c = make(id="pfcoco/x", release=Release.WINDOW, window=WindowScope("W", boundary))
    d = json.loads(json.dumps(c.to_dict()))
    assert d["window"]["boundary"] == boundary.value
    assert "protects only the last W" in d["window"]["description"]
    again = PrivacyClaim.from_dict(d)
    assert again == c and again.window == c.window and again.release is Release.WINDOW


def test_window_release_without_scope_gets_the_strict_default():
    c = make(id="pfcoco/x", release=Release.WINDOW)
    assert c.window == WindowScope("W", WindowBoundary.STRICT)


def test_scope_requires_window_release():
    with pytest.raises(ValueError, match="release=Release.WINDOW"):
        make(window=WindowScope())
    with pytest.raises(TypeError, match="WindowScope"):
        make(release=Release.WINDOW, window="W")


@pytest.mark.parametrize("W", [1, 2, 3, 8])
def test_protected_positions_strict_and_inclusive(W):
    strict, incl = WindowScope(), WindowScope(boundary="inclusive")
    for T in range(1, 20):
        for i in range(1, T + 1):
            assert strict.protects(i, T, W) == (T - i < W)
            assert incl.protects(i, T, W) == (T - i <= W)
        assert list(strict.protected_positions(T, W)) == [i for i in range(1, T + 1)
                                                          if T - i < W]
        assert list(incl.protected_positions(T, W)) == [i for i in range(1, T + 1)
                                                        if T - i <= W]
        assert len(strict.protected_positions(T, W)) == min(W, T)
    for i in range(1, 10):
        assert strict.last_protected_horizon(i, W) == i + W - 1
        assert incl.last_protected_horizon(i, W) == i + W
        assert not strict.protects(i, strict.last_protected_horizon(i, W) + 1, W)


def test_scope_rejects_bad_indices():
    s = WindowScope()
    with pytest.raises(ValueError, match="horizon"):
        s.protects(5, 3, 2)
    with pytest.raises(ValueError, match="W"):
        s.protects(1, 3, 0)
    with pytest.raises(ValueError, match="boundary|sideways"):
        WindowScope(boundary="sideways")
