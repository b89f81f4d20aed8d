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
from dpaudit.runner import resume
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
    before = resume.audit_code_hash("plugin-test/count")
    plugin_file.write_text(PLUGIN.format(scale=0.5))  # half the noise: a different claim
    assert resume.audit_code_hash("plugin-test/count") != before


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


def test_reproduce_commands_name_what_a_claim_needs_and_never_fail_as_pasted() -> None:
    """A reproduce command once did not name the package a claim needs, and for a claim
    registered from a script it failed as pasted."""
    args = ("quick", 0, 0.05)
    base = "dpaudit audit a/b --budget quick --seed 0 --alpha 0.05"
    assert registry.reproduce_command("a/b", registry.Origin("bundled", "dpaudit.papers.x"),
                                      *args) == base
    # An installed package's claim: the module its entry point names is loaded with --plugin,
    # so a machine without the package gets an error naming it.
    entry = registry.Origin("entry point", "own_learner.claims", distribution="own-learner")
    assert registry.reproduce_command("a/b", entry, *args) == base + " --plugin own_learner.claims"
    entry = registry.Origin("entry point", "pkg.mod:register", distribution="pkg")
    assert registry.reproduce_command("a/b", entry, *args) == base + " --plugin pkg.mod"
    # A module imported by code: its file.
    module = registry.Origin("code", "helpers", path="/x/my helpers.py")
    assert registry.reproduce_command("a/b", module, *args) == base + " --plugin '/x/my helpers.py'"
    # A script that registered the claim as it ran: no dpaudit command imports its __main__
    # block, so the text says how to reproduce it instead of printing a command that fails.
    script = registry.Origin("code", "__main__", path="/x/check.py")
    text = registry.reproduce_command("a/b", script, *args)
    assert text.startswith("(") and text.endswith(")") and "dpaudit audit" not in text
    assert "python /x/check.py" in text


SCRIPT = textwrap.dedent('''
    """A user's script: builds a claim and audits it with reports, as a CI job would."""
    import sys
    import dpaudit
    from dpaudit import Claim, Source

    def release(p):
        def mechanism(data, n, rng):
            return float(sum(data)) + rng.laplace(0.0, 1.0 / p["epsilon"], size=n)
        return mechanism

    if __name__ == "__main__":
        claim = Claim(
            id="script-test/count", statement="The noisy count is eps-DP.",
            source=Source(title="count note", kind="code", location="count()"),
            claimed=lambda p: (p["epsilon"], 0.0), neighbours="add-remove",
            grid=[{"epsilon": 1.0}], release=release, pairs=lambda p: [([1], [])],
            accountant=lambda p: dpaudit.noise.LaplaceNoise(1.0 / p["epsilon"], sensitivity=1.0),
            samples=2_000)
        print(dpaudit.audit_claim(claim, budget="quick", out=sys.argv[1]).verdict)
''')


def test_a_script_claims_report_says_how_to_reproduce_it(tmp_path: Path) -> None:
    script = tmp_path / "check.py"
    script.write_text(SCRIPT)
    out_dir = tmp_path / "reports"
    proc = subprocess.run([sys.executable, str(script), str(out_dir)], capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0 and proc.stdout.strip() == "holds", proc.stderr[-2000:]
    record = json.loads((out_dir / "script-test" / "count.json").read_text())
    assert f"python {script.resolve()}" in record["reproduce"]
    for page in ("count.md", "count.html"):
        text = (out_dir / "script-test" / page).read_text()
        assert f"python {script.resolve()}" in text
        # The bare command, which fails with "unknown claim id", is printed nowhere.
        assert "dpaudit audit script-test/count" not in text
    # Nor does the index print a command that cannot reproduce it.
    assert "dpaudit audit-claims" not in (out_dir / "index.md").read_text()
    code, out, err = run("audit", "script-test/count", "--out", str(tmp_path / "x"))
    assert code == 2 and "unknown claim id" in err  # why no such command is printed
