"""The ``dpaudit`` command line: commands, reports on disk, resume, Ctrl-C, crashes, exit status.

The registry is replaced for each test by small claims with real, cheap audit functions: a Laplace
mechanism at its printed scale (holds: exact epsilon = claim, accountant = claim), at half its
printed scale (violated: exact epsilon = 2 x claim) and one with no accountant (inconclusive). The
empirical lower bounds come from the audit engine with the quick budget.
"""

from __future__ import annotations

import collections
import io
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from dpaudit import cli
from dpaudit import runner
from dpaudit.claims.resume_key import ENGINE_SOURCES
from dpaudit.cli import listing
from dpaudit.runner import progress as runner_progress
from dpaudit.runner import resume
from dpaudit.claims import registry
from dpaudit.claims.record import ClaimAudit
from dpaudit.claims.evidence import GridPoint
from dpaudit.blackbox.empirical_audit import audit as empirical_audit
from dpaudit.claims import PrivacyClaim, Provenance
from fake_claim_scripts import fake_claims_script

HOLDS = "fake-colt/laplace"
VIOLATED = "fake-colt/half-laplace"
INCONCLUSIVE = "fake-arxiv/no-accountant"
CRASH = "fake-arxiv/crash"
INTERRUPT = "fake-arxiv/interrupt"


def laplace_claim(claim_id: str, theorem: str) -> PrivacyClaim:
    return PrivacyClaim(claim_id, 1.0, 0.0,
                        Provenance("fake.txt", "COLT 2012", theorem, "b = 1 / eps"),
                        calibration="Lap(1/epsilon)", parameter_range={"epsilon": "(0, inf)"})


def laplace_audit(claim: PrivacyClaim, factor: float, accountant: bool = True):
    """Audit function of "adding Lap(1 / (factor * eps)) to a sensitivity-1 query is eps-DP".

    Exact epsilon of the implemented mechanism on the pair (0, 1): factor * eps (closed form);
    accountant: the printed calibration's epsilon, eps; lower bound: the audit engine.
    """

    def run(ctx: registry.AuditContext) -> ClaimAudit:
        points, results = [], []
        grid = (0.5, 1.0, 2.0)
        for i, eps in enumerate(grid):
            scale = 1.0 / (factor * eps)

            def mechanism(data, n, rng, scale=scale):
                return data + rng.laplace(0.0, scale, size=n)

            seed = int(ctx.rng("laplace", i).integers(2**31))
            res = empirical_audit(mechanism, 0.0, 1.0, epsilon=eps, samples=ctx.budget.samples,
                                  alpha=ctx.alpha, seed=seed)
            results.append(res)
            points.append(GridPoint({"epsilon": eps}, eps, 0.0, epsilon_exact=factor * eps,
                                    epsilon_accountant=eps if accountant else None,
                                    epsilon_lower_bound=res.epsilon_lower_bound,
                                    evidence={"seed": seed, "event": res.to_dict()["event"]}))
            ctx.progress(i + 1, len(grid), f"epsilon={eps}")
        figures = {"histogram": dict(results[-1].histogram)}  # the engine's, as real audits do
        return ClaimAudit(claim.with_privacy(1.0), points, figures=figures,
                          findings=[f"The implemented noise has scale 1/({factor} eps)."])

    return run


def crash_audit(ctx: registry.AuditContext) -> ClaimAudit:
    raise RuntimeError("boom in the audit function")


def interrupt_audit(ctx: registry.AuditContext) -> ClaimAudit:
    raise KeyboardInterrupt  # what Ctrl-C raises in the middle of an audit


# The claims that must not be violated add twice the noise they need (true epsilon = eps / 2), so
# their verdicts do not hinge on the 5% false-alarm allowance of the empirical bound; the violated
# one adds half (true epsilon = 2 eps), which the engine detects with a bound near 2 eps at 20 000
# samples. All runs use fixed seeds, so the outcomes are deterministic.
FAKES = {
    HOLDS: (laplace_claim(HOLDS, "Theorem 1"), lambda c: laplace_audit(c, 0.5)),
    VIOLATED: (laplace_claim(VIOLATED, "Theorem 2"), lambda c: laplace_audit(c, 2.0)),
    INCONCLUSIVE: (laplace_claim(INCONCLUSIVE, "Theorem 3"),
                   lambda c: laplace_audit(c, 0.5, accountant=False)),
    CRASH: (laplace_claim(CRASH, "Theorem 4"), lambda c: crash_audit),
    INTERRUPT: (laplace_claim(INTERRUPT, "Theorem 5"), lambda c: interrupt_audit),
}


@pytest.fixture
def calls(monkeypatch) -> collections.Counter:
    """Replace the registry by the fake claims; returns how often each audit function ran."""
    counter: collections.Counter = collections.Counter()
    monkeypatch.setattr(registry, "_REGISTRY", {})
    monkeypatch.setattr(registry, "_loaded", True)
    for cid, (claim, make) in FAKES.items():
        registry.register(claim, counting(cid, make(claim), counter))
    return counter


def counting(cid, fn, counter):
    def wrapper(ctx):
        counter[cid] += 1
        return fn(ctx)
    return wrapper


def run(capsys, *argv: str) -> tuple[int, str, str]:
    status = cli.main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def quick(out: Path, *ids: str) -> list[str]:
    return ["audit-claims", *ids, "--budget", "quick", "--out", str(out)]


def without_timing(record: dict) -> dict:
    return {k: v for k, v in record.items() if k != "seconds"}


# ------------------------------------------------------------------------------------------------
# audit-claims, audit, report
# ------------------------------------------------------------------------------------------------

def test_audit_claims_writes_reports_and_index_and_exits_1_on_a_violation(tmp_path, calls,
                                                                          capsys) -> None:
    status, out, err = run(capsys, *quick(tmp_path, HOLDS, VIOLATED, INCONCLUSIVE))
    assert status == cli.EXIT_VIOLATED
    for cid in (HOLDS, VIOLATED, INCONCLUSIVE):
        for ext in ("json", "md", "html"):
            assert (tmp_path / f"{cid}.{ext}").is_file()
        assert (tmp_path / f"{cid}.histogram.png").is_file()
    index = json.loads((tmp_path / "index.json").read_text())
    assert index["schema"] == "dpaudit.report/1"
    verdicts = {row["id"]: row["verdict"] for row in index["claims"]}
    assert verdicts == {HOLDS: "holds", VIOLATED: "violated", INCONCLUSIVE: "inconclusive"}
    bad = next(row for row in index["claims"] if row["id"] == VIOLATED)
    assert bad["worst_case"]["epsilon_exact"] == 2 * bad["worst_case"]["claimed_epsilon"]
    # The engine's bound on Laplace at twice the claimed epsilon clears the claim at 20k samples.
    assert bad["worst_case"]["epsilon_lower_bound"] > bad["worst_case"]["claimed_epsilon"]
    saved = json.loads((tmp_path / f"{HOLDS}.json").read_text())
    assert (saved["budget"], saved["seed"], saved["alpha"]) == ("quick", 0, 0.05)
    assert saved["kind"] == "learner"
    assert "1 violated, 1 inconclusive, 1 holds." in out
    # The evidence at the worst point (epsilon = 0.5) next to what the claim says there.
    # The claim's instance there, then the evidence (the formula is left to `dpaudit list` and
    # the reports: the summary fits 100 columns, tests/test_terminal_summary.py).
    assert re.search(rf"^{VIOLATED} +\(0\.5, 0\) +1 +0\.5 +[\d.]+ +violated$", out,
                     re.M)
    # Not a terminal: one plain progress line per claim, no progress bars.
    assert err.count("] fake-") == 3 and "\r" not in err
    assert calls == {HOLDS: 1, VIOLATED: 1, INCONCLUSIVE: 1}


def test_exit_0_when_nothing_is_violated_and_quiet_is_quiet(tmp_path, calls, capsys) -> None:
    status, out, err = run(capsys, *quick(tmp_path, HOLDS, INCONCLUSIVE), "--quiet")
    assert status == cli.EXIT_OK
    assert err == ""
    assert "0 violated, 1 inconclusive, 1 holds." in out


def test_rerun_resumes_and_reproduces(tmp_path, calls, capsys) -> None:
    run(capsys, *quick(tmp_path, HOLDS))
    first = json.loads((tmp_path / f"{HOLDS}.json").read_text())
    status, _, err = run(capsys, *quick(tmp_path, HOLDS, VIOLATED))
    assert status == cli.EXIT_VIOLATED
    assert calls == {HOLDS: 1, VIOLATED: 1}
    assert "1 of 2 claims already audited" in err
    # Other settings are not "finished": they are recomputed, and the same seed gives the same audit.
    run(capsys, *quick(tmp_path, HOLDS), "--seed", "5")
    assert calls[HOLDS] == 2
    assert json.loads((tmp_path / f"{HOLDS}.json").read_text())["seed"] == 5
    run(capsys, *quick(tmp_path, HOLDS), "--fresh")
    assert calls[HOLDS] == 3
    again = json.loads((tmp_path / f"{HOLDS}.json").read_text())
    assert without_timing(again) == without_timing(first)


def test_resume_never_reuses_results_of_other_code_or_version(tmp_path, calls, capsys,
                                                              monkeypatch) -> None:
    run(capsys, *quick(tmp_path, HOLDS))
    saved = json.loads((tmp_path / f"{HOLDS}.json").read_text())
    assert saved["audit_code_sha256"] == resume.audit_code_hash(HOLDS)
    assert saved["dpaudit_version"] == resume.__version__
    run(capsys, *quick(tmp_path, HOLDS))
    assert calls[HOLDS] == 1  # same code, same settings: resumed
    # The audit code changed (a paper's folder or the engine): the saved result is stale.
    monkeypatch.setattr(resume, "audit_code_hash", lambda claim_id: "0" * 64)
    run(capsys, *quick(tmp_path, HOLDS))
    assert calls[HOLDS] == 2
    assert json.loads((tmp_path / f"{HOLDS}.json").read_text())["audit_code_sha256"] == "0" * 64
    # Another dpaudit version: stale too.
    monkeypatch.setattr(resume, "__version__", "0.0.0-other")
    run(capsys, *quick(tmp_path, HOLDS))
    assert calls[HOLDS] == 3


def test_audit_code_hash_covers_the_papers_folder_and_the_engine(calls) -> None:
    digest = resume.audit_code_hash(HOLDS)
    assert re.fullmatch(r"[0-9a-f]{64}", digest) and digest == resume.audit_code_hash(HOLDS)
    # The fake claims live in tests/, not in a paper folder: the hash still covers the engine.
    assert set(ENGINE_SOURCES) >= {"blackbox", "formal", "claims", "execution",
                                           "mechanisms", "learners"}


def test_ctrl_c_keeps_finished_claims_and_a_rerun_resumes(tmp_path, calls, capsys,
                                                         monkeypatch) -> None:
    status, out, err = run(capsys, *quick(tmp_path, HOLDS, INTERRUPT, VIOLATED))
    assert status == cli.EXIT_INTERRUPTED
    assert (tmp_path / f"{HOLDS}.json").is_file()
    assert not (tmp_path / f"{INTERRUPT}.json").exists()
    assert not (tmp_path / f"{VIOLATED}.json").exists()
    assert "interrupted; 1 of 3 claims are finished and saved" in err
    assert "run the same command again to resume" in err
    index = json.loads((tmp_path / "index.json").read_text())
    assert [row["id"] for row in index["claims"]] == [HOLDS]
    # The user fixes whatever stopped the run and reruns the same command.
    claim = FAKES[INTERRUPT][0]
    monkeypatch.setitem(registry._REGISTRY, INTERRUPT,
                        registry.RegisteredClaim(claim, laplace_audit(claim, 0.5)))
    status, _, _ = run(capsys, *quick(tmp_path, HOLDS, INTERRUPT, VIOLATED))
    assert status == cli.EXIT_VIOLATED
    assert calls == {HOLDS: 1, INTERRUPT: 1, VIOLATED: 1}
    assert len(json.loads((tmp_path / "index.json").read_text())["claims"]) == 3


def test_a_crashing_audit_keeps_the_other_results_and_exits_3(tmp_path, calls, capsys) -> None:
    status, out, err = run(capsys, *quick(tmp_path, CRASH, HOLDS))
    assert status == cli.EXIT_FAILED
    assert (tmp_path / f"{HOLDS}.json").is_file()
    assert not (tmp_path / f"{CRASH}.json").exists()
    log = tmp_path / f"{CRASH}.error.log"
    assert "Traceback" in log.read_text() and "RuntimeError: boom" in log.read_text()
    errors = [ln for ln in err.splitlines() if "error:" in ln]
    assert errors == [f"dpaudit: error: the audit of {CRASH} failed: RuntimeError: boom in the "
                      f"audit function (traceback in {log})"]
    assert "Traceback" not in err
    # A violation elsewhere does not hide the crash: exit 3, which CI and
    # `make audit` (accepting <= 1) both fail on; the violation is still in the index.
    status, _, _ = run(capsys, *quick(tmp_path, CRASH, VIOLATED))
    assert status == cli.EXIT_FAILED
    assert calls == {CRASH: 2, HOLDS: 1, VIOLATED: 1}


def test_parallel_jobs_give_the_same_reports_as_serial(tmp_path, calls, capsys) -> None:
    ids = (HOLDS, VIOLATED, INCONCLUSIVE)
    serial, parallel = tmp_path / "serial", tmp_path / "parallel"
    assert run(capsys, *quick(serial, *ids))[0] == cli.EXIT_VIOLATED
    status, out, err = run(capsys, *quick(parallel, *ids), "--jobs", "2")
    assert status == cli.EXIT_VIOLATED, err
    assert err.count("] fake-") == 3
    for cid in ids:
        a = json.loads((serial / f"{cid}.json").read_text())
        b = json.loads((parallel / f"{cid}.json").read_text())
        assert without_timing(a) == without_timing(b)
    assert calls == {HOLDS: 1, VIOLATED: 1, INCONCLUSIVE: 1}  # workers' calls are not counted here


def test_audit_one_claim(tmp_path, calls, capsys) -> None:
    status, out, _ = run(capsys, "audit", VIOLATED, "--budget", "quick", "--seed", "3",
                         "--alpha", "0.01", "--out", str(tmp_path))
    assert status == cli.EXIT_VIOLATED
    # quoted at the worst point (claimed 0.5 there), not the first grid point's (1, 0)
    assert f"The claimed (0.5, 0)-DP guarantee of {VIOLATED} at (epsilon=0.5) is violated at " \
           "every audited point (3 of 3); strongest at epsilon=0.5: exact epsilon 1 > claimed " \
           "0.5." in out
    assert f"Report: {tmp_path / VIOLATED}.html" in out
    record = json.loads((tmp_path / f"{VIOLATED}.json").read_text())
    assert (record["seed"], record["alpha"]) == (3, 0.01)
    md = (tmp_path / f"{VIOLATED}.md").read_text()
    assert f"dpaudit audit {VIOLATED} --budget quick --seed 3 --alpha 0.01" in md
    assert (tmp_path / "index.html").is_file()


def test_audit_defaults_to_the_standard_budget(tmp_path, calls, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setitem(registry.BUDGETS, "standard",
                        registry.Budget("standard", 2_000, 10, "coarse", 8))  # keep the test fast
    status, _, _ = run(capsys, "audit", HOLDS)
    assert status == cli.EXIT_OK
    record = json.loads((tmp_path / cli.DEFAULT_OUT / f"{HOLDS}.json").read_text())
    assert (record["budget"], record["seed"], record["alpha"]) == ("standard", 0, 0.05)


def test_report_rerenders_from_saved_json(tmp_path, calls, capsys) -> None:
    run(capsys, *quick(tmp_path, HOLDS, VIOLATED))
    html = (tmp_path / f"{VIOLATED}.html").read_text()
    (tmp_path / f"{VIOLATED}.html").unlink()
    (tmp_path / "index.md").unlink()
    status, out, _ = run(capsys, "report", str(tmp_path))
    assert status == cli.EXIT_OK  # it rendered: report re-renders, it does not audit
    assert (tmp_path / f"{VIOLATED}.html").read_text() == html
    assert (tmp_path / "index.md").is_file()
    assert "Re-rendered 2 reports" in out
    assert calls == {HOLDS: 1, VIOLATED: 1}  # nothing recomputed


def test_progress_bars_on_a_terminal(tmp_path, calls, capsys, monkeypatch) -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    term = Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    assert cli.main(quick(tmp_path, HOLDS, INCONCLUSIVE)) == cli.EXIT_OK
    text = term.getvalue()
    assert "claims:" in text and "\r" in text  # tqdm bars: one for all claims, one per claim
    assert f"\r{HOLDS}:" in text and "[2/2]" in text
    # The per-claim bar follows the audit's own progress callback (AuditContext.progress).
    progress = runner_progress.Progress(1, quiet=False, stream=term)
    update = progress.claim_progress(HOLDS)
    update(2, 3, "epsilon=1")
    assert (progress.inner.n, progress.inner.total) == (2, 3)
    assert progress.inner.desc == f"{HOLDS}: epsilon=1"
    progress.close()


# ------------------------------------------------------------------------------------------------
# Usage and input errors: exit 2, one sentence, no traceback
# ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("argv, message", [
    (["audit", "nope/x"], "unknown claim id 'nope/x' (`dpaudit list` shows the registered"),
    (["audit", VIOLATED[:-2]], f"did you mean {VIOLATED} or {HOLDS}?"),
    (["audit-claims", "--all", HOLDS, "--out", "{out}"], "give either --all or claim ids"),
    (["audit-claims", "--out", "{out}"], "give the claim ids to audit, or --all"),
    (["audit-claims", HOLDS, "--out", "{file}"], "exists and is not a directory"),
    (["report", "{out}/missing"], "is not a directory"),
    (["report", "{out}"], "no saved claim audits"),
    (["audit", HOLDS, "--alpha", "1.5"], "argument --alpha: must be a number in (0, 1)"),
    (["audit", HOLDS, "--seed", "-1"], "argument --seed: must be a non-negative integer"),
    (["audit", HOLDS, "--budget", "huge"], "argument --budget: invalid choice"),
    (["audit", HOLDS, "--seed", "x"], "argument --seed: must be a non-negative integer, got 'x'"),
    (["audit-claims", HOLDS, "--jobs", "0", "--out", "{out}"],
     "argument --jobs/-j: must be a positive integer, got '0'"),
    (["frobnicate"], "invalid choice"),
    ([], "the following arguments are required: COMMAND"),
])
def test_usage_errors_exit_2_with_one_sentence(tmp_path, calls, capsys, argv, message) -> None:
    (tmp_path / "afile").write_text("x")
    argv = [a.format(out=tmp_path, file=tmp_path / "afile") for a in argv]
    status, out, err = run(capsys, *argv)
    assert status == cli.EXIT_USAGE
    assert message in err
    assert "Traceback" not in err
    error_lines = [ln for ln in err.splitlines() if "error:" in ln]
    assert len(error_lines) == 1
    assert not calls


@pytest.mark.parametrize("content", ["empty", "foreign json", "empty manifest"])
def test_report_of_a_folder_without_saved_audits_exits_2_and_writes_nothing(
        tmp_path, calls, capsys, content) -> None:
    """`dpaudit report DIR` on a folder with no saved audit once exited 2 but had already
    written an empty index.{html,json,md} (and its lock file)."""
    if content == "foreign json":
        (tmp_path / "data.json").write_text('{"not": "a claim"}')
    if content == "empty manifest":
        (tmp_path / "dpaudit-manifest.json").write_text(
            '{"schema": "dpaudit.manifest/1", "claims": []}')
    before = sorted(p.name for p in tmp_path.rglob("*"))
    status, out, err = run(capsys, "report", str(tmp_path))
    assert status == cli.EXIT_USAGE
    assert "no saved claim audits" in err and "nothing was written" in err
    assert sorted(p.name for p in tmp_path.rglob("*")) == before
    # The library call refuses before writing too.
    from dpaudit.reporting.writer import rerender_directory
    with pytest.raises(ValueError, match="no saved claim audits"):
        rerender_directory(tmp_path)
    assert sorted(p.name for p in tmp_path.rglob("*")) == before


def test_audit_claims_selects_by_namespace_and_glob_pattern(calls) -> None:
    """`audit-claims mynamespace` used to be "unknown claim id". A namespace selects every
    claim in it, a glob pattern the ids it matches; order as given, each claim once."""
    resolve = runner.resolve_claim_ids
    assert resolve(["fake-colt"], False) == sorted([HOLDS, VIOLATED])
    assert resolve(["fake-colt/"], False) == sorted([HOLDS, VIOLATED])
    assert resolve(["fake-*/*laplace"], False) == sorted([VIOLATED, HOLDS])
    assert resolve(["*/no-*", "fake-colt", HOLDS], False) == [INCONCLUSIVE, VIOLATED, HOLDS]
    assert resolve(["fake-arxiv/[cn]*"], False) == sorted([CRASH, INCONCLUSIVE])
    # "fake" is a prefix of two namespaces but not a namespace: it selects nothing.
    with pytest.raises(runner.UsageError, match="unknown claim id 'fake'.*namespace"):
        resolve(["fake"], False)
    with pytest.raises(runner.UsageError,
                       match=r"no registered claim id matches the pattern 'x\*'"):
        resolve(["x*"], False)
    # `audit` takes exactly one claim id.
    with pytest.raises(runner.UsageError, match="unknown claim id 'fake-colt'"):
        resolve(["fake-colt"], False, patterns=False)


def test_audit_claims_of_a_namespace_audits_its_claims(tmp_path, calls, capsys) -> None:
    status, out, err = run(capsys, *quick(tmp_path, "fake-colt"))
    assert status == cli.EXIT_VIOLATED
    assert calls == {HOLDS: 1, VIOLATED: 1}
    index = json.loads((tmp_path / "index.json").read_text())
    assert [c["id"] for c in index["claims"]] == sorted([HOLDS, VIOLATED])


def test_unexpected_errors_are_one_sentence_unless_traceback_is_asked(tmp_path, calls, capsys,
                                                                      monkeypatch) -> None:
    def broken(*args, **kwargs):
        raise OSError(28, "No space left on device", str(tmp_path / "index.json"))

    monkeypatch.setattr("dpaudit.reporting.writer.write_index", broken)
    status, _, err = run(capsys, *quick(tmp_path, HOLDS))
    assert status == cli.EXIT_FAILED
    assert err.strip().splitlines()[-1] == (
        f"dpaudit: error: No space left on device: {tmp_path / 'index.json'} (rerun with "
        "--traceback for details).")
    with pytest.raises(OSError):
        cli.main(["--traceback", *quick(tmp_path, HOLDS)])


# ------------------------------------------------------------------------------------------------
# dpaudit list
# ------------------------------------------------------------------------------------------------

def test_list_shows_claims_with_provenance(calls, capsys) -> None:
    status, out, err = run(capsys, "list")
    assert status == cli.EXIT_OK or "could not import" in err
    assert "Claims (5; audit one with `dpaudit audit CLAIM_ID`, details with --long):" in out
    line = next(ln for ln in out.splitlines() if VIOLATED in ln)
    assert "(1, 0)-DP" in line and "Theorem 2 (COLT 2012)" in line
    assert "Mechanisms (" in out and "Learners (" in out
    assert max(len(ln) for ln in out.splitlines()) <= 100  # fits a 100-column terminal
    status, out, _ = run(capsys, "list", "--long")
    assert "fake.txt (COLT 2012), Theorem 2, eq. b = 1 / eps" in out and "kind: learner" in out
    status, out, _ = run(capsys, "list", "--json")
    payload = json.loads(out)
    assert [c["id"] for c in payload["claims"]] == sorted(FAKES)
    assert payload["claims"][0]["provenance"]["paper"] == "fake.txt"


def test_catalogue_lists_concrete_classes_and_survives_broken_modules(tmp_path,
                                                                      monkeypatch) -> None:
    pkg = tmp_path / "fakepkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "good.py").write_text(textwrap.dedent('''
        import abc
        from dpaudit.mechanisms.base import Mechanism

        class Abstract(Mechanism):
            """Still abstract."""

        class Concrete(Abstract):
            """A concrete mechanism.

            More text.
            """
            name = "concrete"
            sensitivity = None
            def sample(self, data, n, rng): ...
            def dp_event(self): ...

        class _Private(Concrete):
            """Hidden."""
    '''))
    (pkg / "broken.py").write_text("import dpaudit.does_not_exist\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    from dpaudit.mechanisms.base import Mechanism

    problems: list[str] = []
    found = listing._concrete_classes("fakepkg", Mechanism, problems)
    assert found == [{"name": "concrete", "class": "fakepkg.good.Concrete",
                      "summary": "A concrete mechanism."}]
    assert problems == ["could not import fakepkg.broken (ModuleNotFoundError: No module named "
                        "'dpaudit.does_not_exist')"]


# ------------------------------------------------------------------------------------------------
# As installed: console script, python -m, Ctrl-C with worker processes
# ------------------------------------------------------------------------------------------------

def test_console_script_and_module_entry_points() -> None:
    exe = Path(sys.executable).with_name("dpaudit")
    proc = subprocess.run([str(exe), "--version"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.startswith("dpaudit ")
    proc = subprocess.run([sys.executable, "-m", "dpaudit", "audit", "nope/x"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == cli.EXIT_USAGE
    assert proc.stderr.startswith("dpaudit: error: unknown claim id 'nope/x'")
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr




def test_ctrl_c_with_worker_processes_keeps_results_and_stops_the_workers(tmp_path) -> None:
    script = tmp_path / "run.py"
    script.write_text(fake_claims_script(
        [("sig/fast", 0.0), ("sig/slow", 120.0)],
        ["audit-claims", "sig/fast", "sig/slow", "--jobs", "2", "--budget", "quick",
         "--out", str(tmp_path / "out")]))
    # The run starts with Ctrl-C's default disposition, as under an interactive terminal: a shell
    # without job control starts background jobs with SIGINT ignored (POSIX), and an ignored
    # SIGINT is inherited, so a suite launched with `... &` would otherwise see the CLI
    # (rightly) ignore the Ctrl-C and this test time out.
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        fast = tmp_path / "out/sig/fast.json"
        deadline = time.monotonic() + 60
        while not fast.exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert fast.exists(), "the fast claim never finished"
        os.killpg(proc.pid, signal.SIGINT)  # what the terminal does on Ctrl-C
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == cli.EXIT_INTERRUPTED, err
    assert "interrupted; 1 of 2 claims are finished and saved" in err
    assert "Traceback" not in err
    assert not (tmp_path / "out/sig/slow.json").exists()
    assert [c["id"] for c in json.loads((tmp_path / "out/index.json").read_text())["claims"]] == [
        "sig/fast"]
    # No worker of the run survives it. Workers get a moment to exit: on a loaded CI machine
    # process teardown can take longer than a fixed short sleep.
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            os.killpg(proc.pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    with pytest.raises(ProcessLookupError):
        os.killpg(proc.pid, 0)


def test_the_resume_key_hashes_the_engine_files_themselves() -> None:
    """The claims layer gives the runner a claim's key in one call, and the files behind it are
    the engine's own modules (dpaudit/evidence.py, dpaudit/claims/verdict.py, ...), not paths
    beside the package (where a change would never invalidate a saved result). Checked in a fresh
    interpreter: tests in this worker may have registered other claims under bundled ids."""
    code = textwrap.dedent('''
        from pathlib import Path
        import dpaudit
        from dpaudit.runner import resume
        from dpaudit.claims.resume_key import resume_key, resume_key_sources

        assert resume.audit_code_hash is resume_key
        package = Path(dpaudit.__file__).resolve().parent
        files = set(resume_key_sources("afkt23/alg2"))
        for part in ("evidence.py", "claims/verdict.py", "blackbox/empirical_audit.py",
                     "papers/afkt23/audit.py"):
            assert package / part in files, part
        assert not any(package / "reporting" in f.parents for f in files)
        print("ok")
    ''')
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr
