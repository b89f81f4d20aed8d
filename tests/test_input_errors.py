"""A claim's own input rejected: exit 2 (usage or input error), the error printed once, no
"0 claims" summary; the relation named where an add/remove pair's outputs differ in shape; a typo'd
id through the Python API answered with its near misses; ``assert_claim``'s reproduce line naming
the module that registered the claim.

The claims are real public :class:`dpaudit.Claim` objects in a plugin file written per test, so
they go through the same registry, driver and runner as a user's. Every one of them is rejected
before any sampling, so the tests cost milliseconds.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import textwrap
from pathlib import Path

import pytest

import dpaudit
from dpaudit import cli, runner
from dpaudit.claims import registry

PLUGIN = textwrap.dedent('''
    import numpy as np
    import dpaudit
    from dpaudit import Claim, Source

    def release(p):
        def mechanism(data, n, rng):
            return float(np.sum(data)) + rng.laplace(0.0, 1.0 / p["epsilon"], size=n)
        return mechanism

    def one_run_too_many(p):
        def mechanism(data, n, rng):
            return float(np.sum(data)) + rng.laplace(0.0, 1.0, size=n + 1)
        return mechanism

    def stream(p):  # one output per record: a fixed-length stream
        def mechanism(data, n, rng):
            x = np.asarray(data, float)
            return x[None, :] + rng.laplace(0.0, 1.0, size=(n, x.size))
        return mechanism

    def unseen_stream(p):  # the same stream, its noise from python's random (no source reads it)
        def mechanism(data, n, rng):
            import random
            x = np.asarray(data, float)
            draw = random.Random(int(rng.integers(2**32)))
            return x[None, :] + np.asarray([[draw.gauss(0.0, 1.0) for _ in x] for _ in range(n)])
        return mechanism

    def crashing(p):
        def mechanism(data, n, rng):
            raise ValueError("the user's own release raised this")
        return mechanism

    COMMON = dict(source=Source(title="a design note", location="Sec. 1"),
                  claimed=lambda p: (p["epsilon"], 0.0), grid=[{"epsilon": 1.0}])
    for cid, rel, pair, relation in [
            ("inp/not-neighbour", release, ([0.0, 1.0], [1.0, 1.0]), "add-remove"),
            ("inp/shape", one_run_too_many, ([0.0, 1.0], [0.0]), "add-remove"),
            ("inp/stream", stream, ([0.0, 1.0], [0.0]), "add-remove"),
            ("inp/stream-unseen", unseen_stream, ([0.0, 1.0], [0.0]), "add-remove"),
            ("inp/crash", crashing, ([0.0, 1.0], [0.0]), "add-remove")]:
        dpaudit.register_claim(Claim(id=cid, statement="The sum is eps-DP", neighbours=relation,
                                     release=rel, pairs=lambda p, pair=pair: [pair], **COMMON))
''')

IDS = ("inp/not-neighbour", "inp/shape", "inp/stream", "inp/stream-unseen", "inp/crash")


@pytest.fixture()
def plugin(tmp_path: Path):
    path = tmp_path / "inp_claims.py"
    path.write_text(PLUGIN, encoding="utf-8")
    yield str(path)
    for cid in IDS:
        registry.unregister(cid)


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    status = cli.main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.mark.parametrize("claim_id, says", [
    ("inp/not-neighbour", "is not a pair of add-remove neighbours"),
    ("inp/shape", "returned leading axis 65"),
])
def test_a_rejected_input_exits_2_printed_once(plugin, tmp_path, capsys, claim_id, says) -> None:
    status, out, err = _run(capsys, "audit-claims", claim_id, "--plugin", plugin, "--budget",
                            "quick", "--out", str(tmp_path / "r"))
    assert status == cli.EXIT_USAGE == 2
    assert (out + err).count(says) == 1, out + err       # printed once, not by progress too
    assert f"dpaudit: error: the input of {claim_id} was rejected: ValueError: " in err
    assert "0 claims" not in out                          # nothing was audited: no count of 0
    assert f"1 of 1 claim not audited ({claim_id})" in out


def test_progress_does_not_repeat_the_error(plugin, tmp_path, capsys) -> None:
    status, out, err = _run(capsys, "audit-claims", "inp/shape", "--plugin", plugin, "--budget",
                            "quick", "--out", str(tmp_path / "r"))      # not --quiet
    assert status == 2
    assert "[1/1] inp/shape: input rejected (the error follows)" in err
    assert err.count("returned leading axis 65") == 1


def test_shapes_that_differ_on_an_add_remove_pair_name_the_relation(plugin, tmp_path,
                                                                    capsys) -> None:
    # The black box compares runs of one shape: with no law read from the code, outputs of two
    # shapes are an input error (exit 2) whose message names the relation as the cause.
    status, _, err = _run(capsys, "audit-claims", "inp/stream-unseen", "--plugin", plugin,
                          "--quiet", "--out", str(tmp_path / "r"))
    assert status == 2
    assert "differ in shape or type" in err
    assert "the claim's relation is add-remove" in err and "neighbour_check=False" in err


def test_a_shape_read_from_the_code_is_evidence_that_names_the_relation(plugin, tmp_path,
                                                                        capsys) -> None:
    # Where the law is read from the code, the output's shape itself is evidence: under add-remove
    # a release with one output per record reveals by its length which input ran (epsilon
    # infinite, by definition: the event "the output has 2 rows" has probability 1 and 0), so the
    # claim is violated (exit 1) and the finding says what to declare if the stream is fixed.
    status, _, err = _run(capsys, "audit-claims", "inp/stream", "--plugin", plugin, "--quiet",
                          "--out", str(tmp_path / "r"))
    assert status == 1, err
    record = json.loads((tmp_path / "r" / "inp" / "stream.json").read_text(encoding="utf-8"))
    assert record["verdict"] == "violated"
    text = json.dumps(record)
    assert "the claim's relation is add-remove" in text and "neighbour_check=False" in text
    assert "its shape depends on the data" in text


def test_an_error_in_the_users_own_code_is_a_failed_audit_not_an_input_error(
        plugin, tmp_path, capsys) -> None:
    # A ValueError raised by the release itself (not by a check of what the claim declares) is a
    # failed audit: exit 3, never folded into "input error".
    status, _, err = _run(capsys, "audit-claims", "inp/crash", "--plugin", plugin, "--quiet",
                          "--out", str(tmp_path / "r"))
    assert status == cli.EXIT_FAILED == 3
    assert "the audit of inp/crash failed: ValueError: the user's own release raised this" in err


def test_a_failed_audit_beside_a_rejected_input_still_exits_3(plugin, tmp_path, capsys) -> None:
    status, _, err = _run(capsys, "audit-claims", "inp/shape", "inp/crash", "--plugin", plugin,
                          "--quiet", "--out", str(tmp_path / "r"))
    assert status == 3
    assert "the input of inp/shape was rejected" in err and "the audit of inp/crash failed" in err


def test_only_non_bundled_claims_have_input_errors() -> None:
    # The same check raising on a bundled paper's claim is dpaudit's own bug: exit 3.
    spec = importlib.util.spec_from_loader("dpaudit.blackbox.sampling", loader=None)
    fake_module_globals = {"__name__": spec.name}
    exec("def check():\n    raise ValueError('bad shape')", fake_module_globals)
    try:
        fake_module_globals["check"]()
    except ValueError as exc:
        error = exc
    assert not runner.is_input_error(error, "st13/tree-gaussian")
    assert not runner.is_input_error(RuntimeError("x"), "st13/tree-gaussian")


def test_the_python_api_suggests_near_misses_for_a_typod_id() -> None:
    with pytest.raises(ValueError) as info:
        dpaudit.audit_claim("jkt12-colt/pgid")
    text = str(info.value)
    assert text.startswith("unknown claim id 'jkt12-colt/pgid'; did you mean jkt12-colt/pigd")
    assert "st13/" not in text and "known ids" not in text   # not a list of every claim


def test_the_python_api_raises_a_rejected_input_once_with_the_hint(plugin, tmp_path,
                                                                    capsys) -> None:
    module = _import(plugin)
    assert module is not None
    for out in (None, tmp_path / "r"):
        with pytest.raises(ValueError, match="the claim's relation is add-remove"):
            dpaudit.audit_claim("inp/stream-unseen", out=out, quiet=False)
    err = capsys.readouterr().err
    assert "dpaudit: error:" not in err          # raised, not also printed


ASSERT_PLUGIN = textwrap.dedent('''
    import numpy as np
    import dpaudit
    from dpaudit import Claim, Source

    def release(p):  # Laplace(1 / (2 eps)) on a count: exactly 2 eps-DP, claimed eps
        def mechanism(data, n, rng):
            return float(np.sum(data)) + rng.laplace(0.0, 0.5 / p["epsilon"], size=n)
        return mechanism

    CLAIM = Claim(id="inp/half-scale", statement="The count is eps-DP",
                  source=Source(title="a design note"), claimed=lambda p: (p["epsilon"], 0.0),
                  neighbours="add-remove", grid=[{"epsilon": 1.0}], release=release,
                  pairs=lambda p: [([1.0], [])],
                  exact=lambda p: dpaudit.exact.ProductLaplace(
                      mean=lambda d: [float(np.sum(d))], scale=0.5 / p["epsilon"]))
    dpaudit.register_claim(CLAIM)
''')


def _import(path: str):
    name = Path(path).stem
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def test_assert_claims_reproduce_line_names_the_registering_module(tmp_path) -> None:
    from dpaudit.testing import assert_claim

    path = tmp_path / "half_scale_claims.py"
    path.write_text(ASSERT_PLUGIN, encoding="utf-8")
    try:
        module = _import(str(path))
        with pytest.raises(AssertionError) as info:
            assert_claim(module.CLAIM, budget="quick")
    finally:
        registry.unregister("inp/half-scale")
        sys.modules.pop("half_scale_claims", None)
    reproduce = [ln for ln in str(info.value).splitlines() if "reproduce:" in ln]
    assert len(reproduce) == 1
    assert f"--plugin {path.resolve()}" in reproduce[0], reproduce[0]
    assert __file__ not in reproduce[0]         # not this test file
