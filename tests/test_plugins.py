"""Claims registered from outside dpaudit: ``--plugin`` modules and files, entry points, origins,
reproduce commands that work when pasted, and the resume key covering the plugin's source."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from dpaudit import cli
from dpaudit.claims import registry

PLUGIN = textwrap.dedent('''
    """A user's claim module: a Laplace count claimed eps-DP under add/remove."""
    import numpy as np
    import dpaudit
    from dpaudit import Claim, Source

    SCALE = {scale}

    def release(p):
        def mechanism(data, n, rng):
            return float(sum(data)) + rng.laplace(0.0, SCALE / p["epsilon"], size=n)
        return mechanism

    dpaudit.register_claim(Claim(
        id="plugin-test/count", statement="The noisy count is eps-DP.",
        source=Source(title="count note", kind="code", location="count()"),
        claimed=lambda p: (p["epsilon"], 0.0), neighbours="add-remove",
        grid=[{{"epsilon": 1.0}}], release=release, pairs=lambda p: [([1], [])],
        accountant=lambda p: dpaudit.noise.LaplaceNoise(SCALE / p["epsilon"], sensitivity=1.0),
        exact=lambda p: dpaudit.exact.ProductLaplace(mean=lambda d: [float(sum(d))],
                                                     scale=SCALE / p["epsilon"]),
        samples=2_000))
''')


@pytest.fixture
def plugin_file(tmp_path: Path) -> Path:
    path = tmp_path / "my claims.py"  # a space: the reproduce command must quote it
    path.write_text(PLUGIN.format(scale=1.0))
    yield path
    registry.unregister("plugin-test/count")
    for name in [m for m in sys.modules if m.startswith("dpaudit_plugin_my_claims")]:
        del sys.modules[name]
    registry._PLUGINS[:] = [p for p in registry._PLUGINS if p != str(path.resolve())]


def run(*argv: str) -> tuple[int, str, str]:
    """The real console script in a fresh interpreter (plugins load as a user's would)."""
    proc = subprocess.run([sys.executable, "-m", "dpaudit", *argv], capture_output=True,
                          text=True, timeout=600)
    return proc.returncode, proc.stdout, proc.stderr


def test_list_shows_a_plugin_claim_and_where_it_comes_from(plugin_file: Path) -> None:
    code, out, err = run("list", "--json", "--plugin", str(plugin_file))
    assert code == 0, err
    claims = {c["id"]: c for c in json.loads(out)["claims"]}
    assert claims["plugin-test/count"]["origin"]["kind"] == "plugin"
    assert claims["plugin-test/count"]["origin"]["plugin"] == str(plugin_file.resolve())
    assert claims["afkt23/dp-ftrl"]["origin"]["kind"] == "bundled"
    assert len(claims) == 38


def test_audit_a_plugin_claim_and_paste_its_reproduce_command(plugin_file: Path,
                                                               tmp_path: Path) -> None:
    out_dir = tmp_path / "reports"
    code, out, err = run("audit", "plugin-test/count", "--plugin", str(plugin_file), "--budget",
                         "quick", "--out", str(out_dir), "--quiet")
    assert code == 0, err
    record = json.loads((out_dir / "plugin-test" / "count.json").read_text())
    assert record["verdict"] == "holds"
    words = shlex.split(record["reproduce"])
    assert words[:3] == ["dpaudit", "audit", "plugin-test/count"]
    assert words[words.index("--plugin") + 1] == str(plugin_file.resolve())
    # Pasted (with --out and --fresh added), it reruns the audit to the same verdict.
    code, out, err = run(*words[1:], "--out", str(out_dir), "--fresh", "--quiet")
    assert code == 0, err
    assert json.loads((out_dir / "plugin-test" / "count.json").read_text())["verdict"] == "holds"


def test_a_changed_plugin_is_never_resumed_from_a_stale_result(plugin_file: Path) -> None:
    registry.load_plugin(str(plugin_file))
    before = cli.runner.audit_code_hash("plugin-test/count")
    plugin_file.write_text(PLUGIN.format(scale=0.5))  # half the noise: a different claim
    assert cli.runner.audit_code_hash("plugin-test/count") != before


def test_a_plugin_that_fails_to_import_is_one_sentence_naming_it(tmp_path: Path) -> None:
    broken = tmp_path / "broken.py"
    broken.write_text("import numpy\nraise RuntimeError('boom')\n")
    code, out, err = run("list", "--plugin", str(broken))
    assert code == 2
    assert err.count("\n") == 1 and "broken.py" in err and "RuntimeError: boom" in err
    code, out, err = run("list", "--plugin", "no_such_module_xyz")
    assert code == 2 and "no_such_module_xyz" in err and "no module named" in err
    code, out, err = run("list", "--plugin", str(tmp_path / "missing.py"))
    assert code == 2 and "no such file" in err


def test_registered_claims_from_entry_points_are_bundled() -> None:
    # A fresh interpreter: other tests in this process register temporary claims by code.
    code, out, err = run("list", "--json")
    assert code == 0, err
    claims = json.loads(out)["claims"]
    assert len(claims) == 37
    assert {c["origin"]["kind"] for c in claims} == {"bundled"}
    assert {c["origin"]["module"].rsplit(".", 2)[-2] for c in claims} == {
        "afkt23", "jkt12", "pfcoco", "st13"}
    assert registry.reproduce_command("a/b", registry.Origin("plugin", "m", plugin="x y.py"),
                                      "quick", 0, 0.05) == ("dpaudit audit a/b --budget quick "
                                                            "--seed 0 --alpha 0.05 --plugin "
                                                            "'x y.py'")
