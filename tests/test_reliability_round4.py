"""Reliability regression tests, fourth round: wrong verdicts on the user path and lost records.

The mechanisms are Laplace releases of a sum, whose epsilon is known by hand: Laplace noise of
scale b on a sum that moves by 1 between the declared neighbours is exactly 1/b-DP.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

import dpaudit
from dpaudit import Claim, Source
from dpaudit.claims.evidence import GridPoint
from dpaudit.claims.registry import unregister
from dpaudit.claims.verdict import decide_verdict

SRC = Source(title="round-4 note", kind="design doc")
IDS: list[str] = []


@pytest.fixture(autouse=True)
def _forget():
    yield
    for cid in IDS:
        unregister(cid)
    IDS.clear()


def laplace_release(scale: float):
    def release(p):
        def mechanism(data, n, rng):
            return float(np.sum(data)) + rng.laplace(0.0, scale, size=n)
        return mechanism
    return release


def claim(cid: str, **kw) -> Claim:
    IDS.append(cid)
    args = dict(id=cid, statement="The noisy sum is eps-DP.", source=SRC,
                claimed=lambda p: (1.0, 0.0), neighbours="add-remove", grid=[{}],
                release=laplace_release(1.0), pairs=lambda p: [([1.0], [])])
    args.update(kw)
    return Claim(**args)


# -- 1: a valid empirical lower bound above the accountant certifies nothing ---------------------

def test_the_verdict_rule_treats_a_lower_bound_above_the_accountant_like_an_exact_value() -> None:
    # Lower bound 0.9 <= claim 1.5 (no counterexample), accountant 0.5 below it: not "holds".
    point = GridPoint({"epsilon": 1.5}, 1.5, 0.0, epsilon_accountant=0.5, epsilon_lower_bound=0.9)
    verdict, reason = decide_verdict([point], [])
    assert verdict == "inconclusive"
    assert "empirical lower bound 0.9 exceeds the accountant's 0.5" in reason
    # At or below the accountant it is no evidence against it.
    ok = GridPoint({"epsilon": 1.5}, 1.5, 0.0, epsilon_accountant=0.5, epsilon_lower_bound=0.5)
    assert decide_verdict([ok], [])[0] == "holds"


@pytest.mark.parametrize("accountant", [
    lambda p: dpaudit.noise.LaplaceNoise(2.0, sensitivity=1.0),  # dpaudit's: 1/2
    lambda p: 0.6,                                                # user-supplied
])
def test_code_above_its_accountant_is_not_holds(accountant) -> None:
    # Laplace(1) on a sum: true epsilon 1 (by hand); claim 1.5; the accountant says 0.5 or 0.6.
    # The quick budget's lower bound on this pair lies in 0.92-0.97 on seeds 0-3 (measured), well
    # above both accountants and below the true 1 (valid at alpha 0.05).
    result = dpaudit.audit_claim(claim("r4/code-above-accountant", claimed=lambda p: (1.5, 0.0),
                                       accountant=accountant), budget="quick", seed=0)
    lb = result.points[0].epsilon_lower_bound
    assert 0.6 < lb <= 1.0
    assert result.verdict == "inconclusive"
    assert "certifies nothing" in result.verdict_and_reason[1]
    assert any("INCONSISTENCY" in f for f in result.findings)


# -- 2: a mechanism that seeds itself is refused, never audited as random ------------------------

def _seeds_numpy(data, n, rng):
    np.random.seed(0)
    return float(data) + np.random.laplace(0.0, 1.0, size=n)


def _seeds_generator(data, n, rng):
    return float(np.sum(data)) + np.random.default_rng(7).laplace(0.0, 1.0, size=n)


def _seeds_python(data, n, rng):
    own = random.Random(3)
    return np.array([float(data) + own.gauss(0.0, 1.0) for _ in range(n)])


@pytest.mark.parametrize("mechanism", [_seeds_numpy, _seeds_generator, _seeds_python])
def test_a_self_seeded_mechanism_is_refused_by_audit(mechanism) -> None:
    with pytest.raises(ValueError, match="seeds its own generator with a constant"):
        dpaudit.audit(mechanism, 0.0, 1.0, epsilon=1.0, samples=2_000, seed=0)


def test_a_self_seeded_release_is_refused_on_the_claim_path() -> None:
    c = claim("r4/self-seeded", release=lambda p: _seeds_generator,
              accountant=lambda p: dpaudit.noise.LaplaceNoise(1.0, sensitivity=1.0))
    with pytest.raises(ValueError, match="identical outputs under different rng seeds"):
        dpaudit.audit_claim(c, budget="quick", seed=0)


def test_rng_users_and_global_rng_users_are_still_audited() -> None:
    from dpaudit.blackbox.rng_probe import probe_rng

    assert not probe_rng(lambda d, n, rng: d + rng.laplace(size=n), 0.0, 0).rng_ignored
    assert probe_rng(lambda d, n, rng: d + np.random.laplace(size=n), 0.0, 0).globals_reseedable
    # A deterministic release (no noise at all) is not "self-seeded": its rows do not vary, and
    # the audit measures it as what it is.
    assert not probe_rng(lambda d, n, rng: np.full(n, d), 0.0, 0).rng_ignored


# -- 4: declared pairs are checked against the declared neighbouring relation ---------------------

@pytest.mark.parametrize("neighbours, pair, why", [
    ("replace-one", ([1, 1], [0, 0]), "2 positions differ"),
    # Reordered streams are several replacements apart (round t's loss is round t's): as
    # multisets these differ in one record or none, and were accepted until review.
    ("replace-one", ([1, 0, 0, 0], [0, 0, 0, 1]), "2 positions differ"),
    ("replace-one", ([1, 2], [3, 1]), "2 positions differ"),
    ("add-remove", ([1, 2], [2, 1, 5]), "out of order"),
    ("replace-one", ([1, 1], [1]), "hold 2 and 1 records"),
    ("add-remove", ([1, 1], []), "hold 2 and 0 records"),
    ("add-remove", ([1.0], [0.0]), "hold 1 and 1 records"),    # a replacement, not add/remove
    ("add-remove", ([1, 2, 3], [4, 2]), "1 record(s) differ"),
])
def test_a_declared_pair_that_is_not_neighbours_is_refused_naming_it(neighbours, pair,
                                                                      why) -> None:
    good = ([0.0], [0.0, 1.0]) if neighbours == "add-remove" else ([0.0], [1.0])
    c = claim("r4/not-neighbours", neighbours=neighbours, pairs=lambda p: [good, pair],
              accountant=lambda p: 1.0)
    with pytest.raises(ValueError) as info:
        dpaudit.audit_claim(c, budget="quick", seed=0)
    text = str(info.value)
    assert "Claim.pairs item 1" in text and why in text and "neighbour_check=False" in text
    assert f"data0={list(pair[0])!r}" in text


@pytest.mark.parametrize("neighbours, pair", [
    ("replace-one", ([1, 2, 3], [1, 5, 3])),             # one position replaced
    ("add-remove", ([1, 2], [5, 1, 2])),                 # one added in front, order kept
    ("replace-one", (np.zeros((3, 2)), np.r_[np.zeros((2, 2)), np.ones((1, 2))])),  # last row
    ("add-remove", ([1, 2, 3], [1, 3])),                 # one removed from the middle
    ("add-remove", ([], [7])),
    ("add-remove", (np.ones((4, 2)), np.ones((3, 2)))),
    ("add-remove", (0.0, 1.0)),                          # numbers: the shape says nothing
])
def test_neighbouring_pairs_pass_the_check(neighbours, pair) -> None:
    from dpaudit.claims.pair_relation import neighbour_violation

    assert neighbour_violation(pair[0], pair[1], neighbours) is None
    assert neighbour_violation(pair[1], pair[0], neighbours) is None


def test_a_generated_pair_that_is_not_neighbours_is_refused() -> None:
    from hypothesis import strategies as st

    c = claim("r4/generated", pairs=None, accountant=lambda p: 1.0,
              pair_search=lambda p: st.just(([1.0, 1.0], [])))
    with pytest.raises(ValueError, match="a pair generated by Claim.pair_search .* hold 2 and 0"):
        dpaudit.audit_claim(c, budget="quick", seed=0)


def test_the_opt_out_trusts_the_pairs_and_says_so() -> None:
    # A zero-out stream under add-remove: same length, the removed record is a zero.
    c = claim("r4/opt-out", pairs=lambda p: [([1.0, 0.0], [0.0, 0.0])], neighbour_check=False,
              accountant=lambda p: dpaudit.noise.LaplaceNoise(1.0, sensitivity=1.0))
    result = dpaudit.audit_claim(c, budget="quick", seed=0)
    assert result.verdict == "holds"
    assert any("neighbour_check=False" in f for f in result.findings)


# -- 12 (claim API part): raw messages that named no field ---------------------------------------

@pytest.mark.parametrize("kw, exc, match", [
    (dict(grid=[1.0, 2.0]), TypeError, r"Claim.grid\[0\] must be a mapping .* got float 1.0"),
    (dict(neighbour_check="no"), TypeError, "Claim.neighbour_check must be True or False"),
])
def test_bad_claim_fields_are_named_at_construction(kw, exc, match) -> None:
    with pytest.raises(exc, match=match):
        claim("r4/bad", **kw)


@pytest.mark.parametrize("kw, match", [
    (dict(pairs=lambda p: None), "Claim.pairs must return a list of .* it returned NoneType"),
    (dict(exact_value=lambda p, a, b: None), "Claim.exact_value must return a number .* NoneType"),
    (dict(exact_value=lambda p, a, b: "1.0"), "Claim.exact_value must return a number .* str"),
])
def test_bad_claim_callables_are_named_when_called(kw, match) -> None:
    c = claim("r4/bad-callable", accountant=lambda p: 1.0, **kw)
    with pytest.raises(TypeError, match=match):
        dpaudit.audit_claim(c, budget="quick", seed=0)


# -- 3: the resume key covers what the code does, not only the registering file ------------------

PLUGIN_CLAIM = '''
import numpy as np
import dpaudit
from dpaudit import Claim, Source
from {module} import SCALE

def release(p):
    def mechanism(data, n, rng):
        return float(sum(data)) + rng.laplace(0.0, SCALE, size=n)
    return mechanism

dpaudit.register_claim(Claim(
    id="r4-resume/count", statement="The noisy count is 1-DP.", source=Source(title="note"),
    claimed=lambda p: (1.0, 0.0), neighbours="add-remove", grid=[{{}}], release=release,
    pairs=lambda p: [([1], [])], accountant=lambda p: 1.0, samples=2_000))
'''


def cli_run(*argv: str, env_path: str | None = None, cwd=None) -> tuple[int, str, str]:
    import os
    import subprocess
    import sys

    env = dict(os.environ)
    if env_path is not None:
        env["PYTHONPATH"] = env_path
    proc = subprocess.run([sys.executable, *argv], capture_output=True, text=True, timeout=600,
                          env=env, cwd=cwd)
    return proc.returncode, proc.stdout, proc.stderr


def _audit_twice(tmp_path, write_scale, argv, env_path=None) -> None:
    """Audit with the learner's noise scale 1 (exactly 1-DP: holds), change the imported module
    to scale 0.1 (10-DP), audit again without --fresh: never the stale `holds`."""
    out = tmp_path / "reports"
    write_scale(1.0)
    code, _, err = cli_run("-m", "dpaudit", *argv, "--budget", "quick", "--quiet", "--out",
                           str(out), env_path=env_path)
    assert code == 0, err
    write_scale(0.1)
    code, _, err = cli_run("-m", "dpaudit", *argv, "--budget", "quick", "--quiet", "--out",
                           str(out), env_path=env_path)
    assert "already audited" not in err
    assert code == 1, err
    record = (out / "r4-resume" / "count.json").read_text()
    assert '"verdict": "violated"' in record


@pytest.mark.slow  # two CLI processes, ~15 s
def test_a_plugin_file_importing_its_sub_package_is_never_resumed_stale(tmp_path) -> None:
    folder = tmp_path / "plugin"
    (folder / "mylib").mkdir(parents=True)
    (folder / "mylib" / "__init__.py").write_text("")
    # (The plugin puts its folder on sys.path itself: this test is about resume, not imports.)
    (folder / "claims.py").write_text("import os, sys\nsys.path.insert(0, os.path.dirname("
                                      "__file__))\n" + PLUGIN_CLAIM.format(module="mylib.noise"))

    def write_scale(scale):
        (folder / "mylib" / "noise.py").write_text(f"SCALE = {scale}\n")
    _audit_twice(tmp_path, write_scale, ["audit", "r4-resume/count", "--plugin",
                                         str(folder / "claims.py")])


@pytest.mark.slow  # two CLI processes, ~15 s
def test_a_plugin_module_importing_a_learner_from_elsewhere_is_never_resumed_stale(
        tmp_path) -> None:
    plugins, learners = tmp_path / "plugins", tmp_path / "learners"
    plugins.mkdir()
    learners.mkdir()
    (plugins / "r4_plugin_mod.py").write_text(PLUGIN_CLAIM.format(module="r4_learner_mod"))

    def write_scale(scale):
        (learners / "r4_learner_mod.py").write_text(f"SCALE = {scale}\n")
    _audit_twice(tmp_path, write_scale, ["audit", "r4-resume/count", "--plugin", "r4_plugin_mod"],
                 env_path=f"{plugins}:{learners}")


def test_a_plugins_sibling_module_imports(tmp_path) -> None:
    (tmp_path / "r4_sibling.py").write_text("SCALE = 1.0\n")
    (tmp_path / "claims.py").write_text(PLUGIN_CLAIM.format(module="r4_sibling"))
    code, out, err = cli_run("-m", "dpaudit", "list", "--plugin", str(tmp_path / "claims.py"),
                             cwd="/")
    assert code == 0, err
    assert "r4-resume/count" in out


SCRIPT = '''
import numpy as np, dpaudit
from dpaudit import Claim, Source
def release(p):
    def mechanism(data, n, rng):
        return float(sum(data)) + rng.laplace(0.0, {scale}, size=n)
    return mechanism
r = dpaudit.audit_claim(Claim(
    id="r4-resume/count", statement="The noisy count is 1-DP.", source=Source(title="note"),
    claimed=lambda p: (1.0, 0.0), neighbours="add-remove", grid=[{{}}], release=release,
    pairs=lambda p: [([1], [])], accountant=lambda p: 1.0, samples=2_000),
    out={out!r})
print(r.verdict)
'''


@pytest.mark.slow  # three interpreters, ~35 s
def test_audit_claim_from_python_c_or_stdin_is_never_resumed_stale(tmp_path) -> None:
    import subprocess
    import sys

    out = str(tmp_path / "reports")
    code, stdout, err = cli_run("-c", SCRIPT.format(scale=1.0, out=out))
    assert code == 0 and stdout.strip() == "holds", err
    # Unchanged code with no file: the fingerprint matches, the result is reused.
    proc = subprocess.run([sys.executable, "-"], input=SCRIPT.format(scale=1.0, out=out),
                          capture_output=True, text=True, timeout=600)
    assert proc.stdout.strip() == "holds", proc.stderr
    code, stdout, err = cli_run("-c", SCRIPT.format(scale=0.1, out=out))
    assert code == 0 and stdout.strip() == "violated", err


def test_re_registering_a_changed_release_changes_the_resume_key() -> None:
    from dpaudit.runner import resume

    dpaudit.register_claim(claim("r4/key"))
    first = resume.audit_code_hash("r4/key")
    dpaudit.register_claim(claim("r4/key", release=laplace_release(0.1)))  # same id and file
    assert resume.audit_code_hash("r4/key") != first
    dpaudit.register_claim(claim("r4/key"))  # the same behaviour again: the same key
    assert resume.audit_code_hash("r4/key") == first


@pytest.mark.slow  # three audits writing reports, ~15 s
def test_a_script_re_registering_a_changed_release_is_not_resumed(tmp_path) -> None:
    out = tmp_path / "reports"
    kw = dict(accountant=lambda p: 1.0, samples=2_000)
    first = dpaudit.audit_claim(claim("r4/re-registered", **kw), out=out)
    assert first.verdict == "holds"
    # Same id, same file, same statement; the release now adds a tenth of the noise (10-DP).
    again = dpaudit.audit_claim(claim("r4/re-registered", release=laplace_release(0.1), **kw),
                                out=out)
    assert again.verdict == "violated"
    # Unchanged behaviour is resumed (the same saved record: same timing).
    third = dpaudit.audit_claim(claim("r4/re-registered", release=laplace_release(0.1), **kw),
                                out=out)
    assert third.seconds == again.seconds


def test_the_resume_key_covers_a_module_imported_from_another_folder(tmp_path,
                                                                      monkeypatch) -> None:
    import importlib

    from dpaudit.runner import resume

    (tmp_path / "r4_elsewhere_learner.py").write_text("SCALE = 1.0\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    learner = importlib.import_module("r4_elsewhere_learner")
    try:
        dpaudit.register_claim(claim("r4/elsewhere", release=laplace_release(learner.SCALE)))
        before = resume.audit_code_hash("r4/elsewhere")
        assert resume.audit_code_hash("r4/elsewhere") == before
        (tmp_path / "r4_elsewhere_learner.py").write_text("SCALE = 0.1\n")
        assert resume.audit_code_hash("r4/elsewhere") != before
    finally:
        import sys
        sys.modules.pop("r4_elsewhere_learner", None)


def test_a_release_with_its_own_unseeded_generator_is_never_resumed() -> None:
    from dpaudit.claims.fingerprint import behaviour_fingerprint
    from dpaudit.claims.user_claims import declaration_of

    gen = np.random.default_rng()
    decl = declaration_of(claim("r4/own-gen", release=lambda p: (
        lambda d, n, rng: float(np.sum(d)) + gen.laplace(size=n))))
    assert behaviour_fingerprint(decl) != behaviour_fingerprint(decl)
    same = declaration_of(claim("r4/same"))
    assert behaviour_fingerprint(same) == behaviour_fingerprint(same)


def test_the_fingerprint_sees_what_the_outputs_cannot() -> None:
    # A lemma's quantity, samples or the neighbour check change no
    # release output, and code with no file is resumed on the fingerprint alone: each must move it.
    from hypothesis import strategies as st

    from dpaudit.claims.fingerprint import behaviour_fingerprint
    from dpaudit.claims.user_claims import declaration_of

    pairs = st.just(([1.0], []))

    def lemma(factor: float) -> dpaudit.Lemma:
        return dpaudit.Lemma(statement="the sum moves by at most 1", pairs=pairs, bound=1.0,
                             quantity=lambda d0, d1, p: factor * abs(sum(d0) - sum(d1)))

    def fp(**kw) -> str:
        return behaviour_fingerprint(declaration_of(claim("r4/fp", **kw)))

    base = fp(lemmas=[lemma(0.5)])
    assert fp(lemmas=[lemma(0.5)]) == base                 # the same declaration again
    assert fp(lemmas=[lemma(5.0)]) != base                 # a captured constant changed
    assert fp(lemmas=[dpaudit.Lemma(statement="the sum moves by at most 1", pairs=pairs,
                                    bound=1.0, quantity=lambda d0, d1, p: 0.0)]) != base
    assert fp(lemmas=[lemma(0.5)], samples=50) != base
    assert fp(lemmas=[lemma(0.5)], neighbour_check=False) != base


# -- 5, 6, 8, 12: plugins, entry points, exits and reserved names --------------------------------

def _cli(*argv: str) -> tuple[int, str, str]:
    import contextlib
    import io

    from dpaudit import cli

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(list(argv))
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def plugins(tmp_path):
    """Write plugin files; forget their modules and claims afterwards."""
    import sys

    from dpaudit.claims import registry

    written: list = []

    def write(name: str, text: str):
        path = tmp_path / name
        path.write_text(text)
        written.append(path)
        return path
    yield write
    for path in written:
        for mod in [m for m in sys.modules if m.startswith(f"dpaudit_plugin_{path.stem}_")]:
            del sys.modules[mod]
        registry._PLUGINS[:] = [p for p in registry._PLUGINS if p != str(path.resolve())]
    for cid in [c for c in registry._REGISTRY if c.startswith("r4-plugin/")]:
        unregister(cid)


DUP = '''
import numpy as np, dpaudit
from dpaudit import Claim, Source
dpaudit.register_claim(Claim(
    id="r4-plugin/dup", statement="The noisy count is 1-DP.", source=Source(title="note"),
    claimed=lambda p: (1.0, 0.0), neighbours="add-remove", grid=[{{}}],
    release=lambda p: lambda d, n, rng: float(sum(d)) + rng.laplace(0.0, {scale}, size=n),
    pairs=lambda p: [([1], [])], accountant=lambda p: 1.0, samples=2_000))
'''


def test_two_plugins_registering_one_id_are_a_usage_error_naming_both(plugins) -> None:
    a, b = plugins("r4_dup_a.py", DUP.format(scale=1.0)), plugins("r4_dup_b.py",
                                                                   DUP.format(scale=0.1))
    code, _, err = _cli("list", "--plugin", str(a), "--plugin", str(b))
    assert code == 2
    assert "r4-plugin/dup" in err and str(a.resolve()) in err and str(b.resolve()) in err


def test_sys_exit_at_a_plugins_import_is_a_usage_error(plugins) -> None:
    path = plugins("r4_exits.py", "import sys\nsys.exit(0)\n")
    code, out, err = _cli("list", "--plugin", str(path))
    assert code == 2 and out == ""
    assert "r4_exits.py" in err and "sys.exit(0)" in err


def test_ctrl_c_during_a_plugins_import_is_exit_130_without_a_traceback(plugins) -> None:
    path = plugins("r4_ctrl_c.py", "raise KeyboardInterrupt\n")
    code, _, err = _cli("list", "--plugin", str(path))
    assert code == 130 and "interrupted" in err and "Traceback" not in err


class _EntryPoint:
    name, value, dist = "broken", "broken_claims_module", None

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc

    def load(self):
        raise self.exc


@pytest.mark.parametrize("exc", [SystemExit(0), RuntimeError("boom")])
def test_a_broken_entry_point_exits_2_with_or_without_plugins(monkeypatch, plugins,
                                                              exc) -> None:
    from dpaudit.claims import registry

    good = plugins("r4_good.py", DUP.format(scale=1.0))
    monkeypatch.setattr(registry, "_entry_points", lambda: [_EntryPoint(exc)])
    monkeypatch.setattr(registry, "_loaded", False)
    for argv in (["list"], ["list", "--plugin", str(good)]):
        code, _, err = _cli(*argv)
        assert code == 2, argv
        assert "broken_claims_module" in err and "Traceback" not in err
        assert ("sys.exit(0)" if isinstance(exc, SystemExit) else "RuntimeError: boom") in err


def test_sys_exit_inside_a_release_fails_the_audit_and_keeps_the_index(tmp_path) -> None:
    import json
    import sys

    def release(p):
        def mechanism(data, n, rng):
            sys.exit(0)
        return mechanism
    dpaudit.register_claim(claim("r4/exits", release=release, accountant=lambda p: 1.0))
    dpaudit.register_claim(claim("r4/fine", accountant=lambda p: 1.0, samples=2_000))
    code, _, err = _cli("audit-claims", "r4/exits", "r4/fine", "--budget", "quick", "--quiet",
                        "--out", str(tmp_path))
    assert code == 3
    assert "the audit of r4/exits failed: SystemExit" in err
    index = json.loads((tmp_path / "index.json").read_text())
    assert [c["id"] for c in index["claims"]] == ["r4/fine"]


@pytest.mark.parametrize("cid", ["papers/r4", "index.html/r4", "PAPERS/r4"])
def test_reserved_namespaces_are_refused(cid) -> None:
    from dpaudit.claims import PrivacyClaim, Provenance, registry

    with pytest.raises(ValueError, match="namespace .* is reserved"):
        claim(cid)
    with pytest.raises(ValueError, match="namespace .* is reserved"):
        registry.register(PrivacyClaim(cid, 1.0, 0.0, Provenance("x.txt", "v1", "Thm 1")),
                          lambda ctx: None)


def test_an_audit_function_returning_none_is_named(tmp_path) -> None:
    from dpaudit.claims import PrivacyClaim, Provenance, registry

    IDS.append("r4/none")
    registry.register(PrivacyClaim("r4/none", 1.0, 0.0, Provenance("x.txt", "v1", "Thm 1")),
                      lambda ctx: None)
    code, _, err = _cli("audit", "r4/none", "--budget", "quick", "--out", str(tmp_path))
    assert code == 3
    assert "returned NoneType, not a dpaudit ClaimAudit" in err


def test_structured_outputs_are_refused_naming_the_mechanism() -> None:
    dt = np.dtype([("a", "f8"), ("b", "i4")])

    def structured(data, n, rng):
        out = np.zeros(n, dtype=dt)
        out["a"] = data + rng.laplace(size=n)
        return out
    with pytest.raises(TypeError, match=r"structured\(data0, n=64, rng\) returned structured outputs"):
        dpaudit.audit(structured, 0.0, 1.0, epsilon=1.0, samples=2_000, seed=0)


def test_list_into_a_closed_pipe_exits_0_quietly() -> None:
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-m", "dpaudit", "list"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    proc.stdout.readline()
    proc.stdout.close()  # `| head -1`
    code = proc.wait(300)
    err = proc.stderr.read().decode()
    assert code == 0, err
    assert "Broken pipe" not in err and "Traceback" not in err


def test_pytest_dp_plugin_calling_sys_exit_is_a_usage_error(tmp_path) -> None:
    import subprocess
    import sys

    (tmp_path / "exits.py").write_text("import sys\nsys.exit(0)\n")
    (tmp_path / "test_x.py").write_text("def test_x():\n    pass\n")
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n0", "-q",
                           "--dp-plugin", str(tmp_path / "exits.py"), str(tmp_path / "test_x.py")],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    text = proc.stdout + proc.stderr
    assert proc.returncode == 4, text  # pytest's usage error, not 3 (INTERNALERROR)
    assert "INTERNALERROR" not in text and "sys.exit(0)" in text


# -- 9: a failed rerun loses no record and leaves a readable directory -------------------------

@pytest.mark.parametrize("rerun, kept", [(["--budget", "quick", "--fresh"], True),
                                         (["--budget", "standard"], False)])
def test_a_failed_rerun_keeps_a_readable_directory(tmp_path, capsys, monkeypatch, rerun,
                                                   kept) -> None:
    import json

    from fake_claims import A, B, audit_both, register_fakes, run

    from dpaudit.runner import execute
    from dpaudit.reporting import writer

    register_fakes(monkeypatch)
    out = tmp_path / "out"
    assert audit_both(capsys, out) == 1
    saved = writer.claim_paths(out, B).json.read_bytes()

    def transient(*a, **k):
        raise OSError("resource temporarily unavailable")
    with monkeypatch.context() as m:
        m.setattr(execute, "audit_record", transient)
        status, _, err = run(capsys, "audit-claims", B, *rerun, "--out", str(out))
    assert status == 3
    path = writer.claim_paths(out, B).json
    if kept:  # same settings and code: the previous result is still the answer, and kept
        assert path.read_bytes() == saved and "previous result" in err
    else:     # other settings: removed, and from the manifest too
        assert not path.exists()
    manifest = json.loads((out / "dpaudit-manifest.json").read_text())["claims"]
    assert manifest == ([A, B] if kept else [A])
    status, _, err = run(capsys, "report", str(out))
    assert status == 0, err


# -- 10: Hypothesis's own errors do not escape the pair search ----------------------------------

def _sum(x) -> float:
    return float(np.sum(np.asarray(x, dtype=float)))


def test_a_valid_strategy_with_dropped_pairs_never_raises_flaky_replay() -> None:
    from hypothesis import strategies as st

    from dpaudit.blackbox.pair_search import search_pairs

    # Pairs with equal sums are dropped (as the engine's identical-output probe drops them); the
    # target phase replays them. Before the fix, 22 of these 60 seeds raised FlakyReplay.
    strategy = st.lists(st.integers(0, 2), min_size=1, max_size=3).map(lambda r: (r, r[:-1]))
    for seed in range(60):
        pairs = search_pairs(strategy, lambda a, b: abs(_sum(a) - _sum(b)), 16, seed,
                             skip=lambda a, b: "same sum" if _sum(a) == _sum(b) else None)
        assert pairs and all(_sum(a) != _sum(b) for a, b in pairs)


def test_an_unsatisfiable_strategy_is_a_clear_error() -> None:
    from hypothesis import strategies as st

    from dpaudit.blackbox.pair_search import search_pairs

    for strategy in (st.nothing(), st.just(([1.0], [0.0])).filter(lambda p: False)):
        with pytest.raises(ValueError, match="the pairs strategy generated no usable pair"):
            search_pairs(strategy, lambda a, b: 0.0, 4, 0)


# -- 11: a holds sentence resting on user-supplied numbers says so --------------------------------

def test_a_holds_sentence_names_a_user_supplied_accountant_and_exact_value() -> None:
    # Noise from python's random module (no draw source reads it): no law can be derived from
    # the code, so the user's exact value is the exact evidence and must be labelled.
    import random

    def global_laplace(p):
        def release(data, n, rng):
            draw = random.Random(int(rng.integers(2**32)))
            noise = [[draw.expovariate(1.0) - draw.expovariate(1.0)] for _ in range(n)]
            return float(np.sum(data)) + np.asarray(noise)
        return release
    result = dpaudit.audit_claim(claim("r4/user-holds", accountant=lambda p: 1.0,
                                       release=global_laplace,
                                       exact_value=lambda p, a, b: 1.0, samples=2_000))
    verdict, reason = result.verdict_and_reason
    assert verdict == "holds"
    assert ("the accountant (user-supplied accountant epsilon at 1 of 1 points; user-supplied "
            "exact epsilon at 1 of 1 points, not computed by dpaudit) is at or below the "
            "claim") in reason
    # With the noise drawn from dpaudit's rng the exact value is derived from the code, and only
    # the accountant is the user's.
    derived = dpaudit.audit_claim(claim("r4/user-acc-holds", accountant=lambda p: 1.0,
                                        exact_value=lambda p, a, b: 1.0, samples=2_000))
    assert derived.verdict == "holds"
    assert ("the accountant (user-supplied accountant epsilon at 1 of 1 points, not computed by "
            "dpaudit) is at or below the claim") in derived.verdict_and_reason[1]
    own = dpaudit.audit_claim(claim("r4/own-holds", samples=2_000, accountant=lambda p: (
        dpaudit.noise.LaplaceNoise(1.0, sensitivity=1.0))))
    assert own.verdict == "holds" and "user-supplied" not in own.verdict_and_reason[1]


def test_a_record_holding_nan_is_refused_with_a_message_saying_so() -> None:
    from dpaudit.claims.pair_relation import neighbour_violation

    for rel in ("add-remove", "replace-one"):
        why = neighbour_violation([[1.0, float("nan")], [0.0, 0.0]], [[1.0, 0.0], [0.0, 0.0]]
                                  if rel == "replace-one" else [[0.0, 0.0]], rel)
        assert why is not None and "record 0 of data0 holds NaN" in why
    # Records are compared in order (docs/claim-api.md): a reordered pair is not a neighbour.
    assert "2 positions differ" in neighbour_violation([1, 0, 0, 0], [0, 0, 0, 1], "replace-one")
