"""Reliability regression tests of the command line and report files; each failed before its fix.

Unreadable saved claims never shrink the index (``report`` exits 2 naming the file; ``audit-claims``
redoes its own claims), report files honour the umask, the index holds what the manifest lists,
SIGTERM behaves like Ctrl-C (exit 143), bad ``--out`` values exit 2, and SIGKILL at seeded random
points followed by a rerun gives the byte-identical index and no partial files.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from dpaudit import cli
from dpaudit.reporting.schema import load_schema, schema_errors
from dpaudit.reporting.writer import MANIFEST_NAME, claim_record
from fake_claims import A, B, fake_audit, audit_both, register_fakes, run



@pytest.fixture
def fakes(monkeypatch) -> None:
    register_fakes(monkeypatch)   # A holds, B is violated (exact 2 > 1)


def index_ids(out: Path) -> list[str]:
    return [c["id"] for c in json.loads((out / "index.json").read_text())["claims"]]


CORRUPTIONS = {
    "truncated": lambda text: text[: len(text) // 2],
    "binary": lambda text: "\x00\xff\xfe garbage",
    "a list": lambda text: "[1, 2, 3]",
    "wrong schema": lambda text: text.replace('"dpaudit.claim/1"', '"dpaudit.claim/0"'),
    "alpha null": lambda text: text.replace('"alpha": 0.05', '"alpha": null'),
}


@pytest.mark.parametrize("corruption", sorted(CORRUPTIONS))
def test_report_refuses_an_unreadable_claim_and_keeps_the_index(tmp_path, fakes, capsys,
                                                                 corruption) -> None:
    # Before: the file was skipped, the index rewritten without it and the exit flipped 1 -> 0.
    out = tmp_path / "out"
    assert audit_both(capsys, out) == cli.EXIT_VIOLATED
    index_before = (out / "index.json").read_bytes()
    target = out / "fake-colt/b.json"
    data = CORRUPTIONS[corruption](target.read_text())
    target.write_bytes(data.encode("latin-1") if corruption == "binary" else data.encode())
    status, _, err = run(capsys, "report", str(out))
    assert status == cli.EXIT_USAGE
    assert "fake-colt/b.json" in err and err.count("\n") == 1 and "Traceback" not in err
    assert (out / "index.json").read_bytes() == index_before
    # audit-claims redoes a claim of its own whose saved JSON cannot be used.
    status, _, err = run(capsys, "audit-claims", A, B, "--budget", "quick", "--out", str(out))
    assert status == cli.EXIT_VIOLATED
    assert index_ids(out) == [A, B]
    # ... but a claim it is not asked to redo must load, or the run stops before any work.
    target.write_text(data if corruption != "binary" else "\x00")
    status, _, err = run(capsys, "audit-claims", A, "--budget", "quick", "--out", str(out))
    assert status == cli.EXIT_USAGE and "fake-colt/b.json" in err
    assert index_ids(out) == [A, B]


def test_alpha_null_names_the_file_and_the_field(tmp_path, fakes, capsys) -> None:
    # Before: a TypeError naming no file aborted the resumed run.
    out = tmp_path / "out"
    audit_both(capsys, out)
    target = out / "fake-colt/a.json"
    target.write_text(target.read_text().replace('"alpha": 0.05', '"alpha": null'))
    status, _, err = run(capsys, "report", str(out))
    assert status == cli.EXIT_USAGE
    assert "fake-colt/a.json does not match the dpaudit.claim/1 schema: alpha:" in err


@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o027, 0o640), (0o002, 0o664)])
def test_report_files_honour_the_umask(tmp_path, fakes, capsys, umask, mode) -> None:
    # Before: every file was 0600 (mkstemp + os.replace).
    old = os.umask(umask)
    try:
        audit_both(capsys, tmp_path / "out")
    finally:
        os.umask(old)
    files = [p for p in (tmp_path / "out").rglob("*") if p.is_file()]
    assert files and {stat.S_IMODE(p.stat().st_mode) for p in files} == {mode}


def test_out_dot_indexes_only_this_runs_claims(tmp_path, fakes, capsys, monkeypatch) -> None:
    # Before: the index walked the whole tree; a checkout's reports/ (or junk in it) broke it.
    junk = tmp_path / "reports/other-paper"
    junk.mkdir(parents=True)
    (junk / "claim.json").write_text("{truncated")
    (junk / "claim.html").write_text("<html>")
    monkeypatch.chdir(tmp_path)
    status, _, err = run(capsys, "audit-claims", A, "--budget", "quick", "--out", ".")
    assert status == cli.EXIT_OK, err
    assert index_ids(tmp_path) == [A]
    assert json.loads((tmp_path / MANIFEST_NAME).read_text())["claims"] == [A]
    # A later run adds to the same directory's index; the manifest keeps both.
    status, _, _ = run(capsys, "audit-claims", B, "--budget", "quick", "--out", ".")
    assert status == cli.EXIT_VIOLATED and index_ids(tmp_path) == [A, B]


@pytest.mark.parametrize("out", ["", "   "])
def test_empty_out_is_refused(tmp_path, fakes, capsys, monkeypatch, out) -> None:
    monkeypatch.chdir(tmp_path)
    status, _, err = run(capsys, "audit-claims", A, "--budget", "quick", "--out", out)
    assert status == cli.EXIT_USAGE and "--out is empty" in err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("target", ["/sys", "/proc", "/proc/self"])
def test_unwritable_out_exits_2(fakes, capsys, target) -> None:
    # Before: os.access(W_OK) says yes to root on /sys and /proc, the audit ran and the first
    # write failed with exit 3. Now a write is tried first.
    status, _, err = run(capsys, "audit-claims", A, "--budget", "quick", "--out", target)
    assert status == cli.EXIT_USAGE, err
    assert "not writable" in err and err.count("\n") == 1


def test_written_records_and_index_match_the_published_schemas(tmp_path, fakes, capsys) -> None:
    out = tmp_path / "out"
    audit_both(capsys, out)
    for path in (out / "fake-colt").glob("*.json"):
        assert schema_errors(json.loads(path.read_text()), "dpaudit.claim/1") == []
    assert schema_errors(json.loads((out / "index.json").read_text()), "dpaudit.report/1") == []
    # The schemas are real constraints: a record without a verdict, or with a bad one, fails.
    record = claim_record(fake_audit(A, 1.0)(None))
    assert schema_errors({k: v for k, v in record.items() if k != "verdict"},
                         "dpaudit.claim/1")
    assert schema_errors({**record, "seed": -1}, "dpaudit.claim/1")
    assert load_schema("dpaudit.report/1")["properties"]["schema"] == {"const": "dpaudit.report/1"}


def test_golden_records_match_the_claim_schema() -> None:
    golden = sorted((Path(__file__).parent / "golden").glob("*.json"))
    assert golden
    for path in golden:
        record = {"schema": "dpaudit.claim/1", **json.loads(path.read_text())}
        assert schema_errors(record, "dpaudit.claim/1") == [], path.name


# ------------------------------------------------------------------------------------------------
# Signals: SIGTERM like Ctrl-C; SIGKILL at random points, then resume
# ------------------------------------------------------------------------------------------------

SCRIPT = '''
import sys, time
from dpaudit import cli
from dpaudit.claims import registry
from dpaudit.claims.record import ClaimAudit, GridPoint
from dpaudit.claims import PrivacyClaim, Provenance

def make(cid, seconds, exact):
    claim = PrivacyClaim(cid, 1.0, 0.0, Provenance("fake.txt", "v1", "Theorem 1"))
    def audit(ctx):
        time.sleep(seconds)
        return ClaimAudit(claim, [GridPoint({{"epsilon": 1.0}}, 1.0, 0.0, exact, 1.0, 0.5)])
    return claim, audit

registry._loaded = True
registry._REGISTRY.clear()
for i, seconds in enumerate({sleeps!r}):
    registry.register(*make(f"sig/c{{i}}", seconds, 1.0 + i % 2))
ids = [f"sig/c{{i}}" for i in range(len({sleeps!r}))]
sys.exit(cli.main(["audit-claims", *ids, "--jobs", "{jobs}", "--budget", "quick", "--quiet",
                   "--out", {out!r}]))
'''


def _start(tmp_path: Path, out: Path, sleeps: list[float], jobs: int = 1) -> subprocess.Popen:
    script = tmp_path / f"run_{out.name}.py"
    script.write_text(SCRIPT.format(out=str(out), sleeps=sleeps, jobs=jobs))
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
    return subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True, env=env)


def _finish(proc: subprocess.Popen, timeout: float = 120) -> tuple[int, str, str]:
    try:
        out, err = proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return proc.returncode, out, err


def test_sigterm_behaves_like_ctrl_c(tmp_path) -> None:
    # Before: SIGTERM killed the process: no message, no index, exit -15.
    out = tmp_path / "out"
    proc = _start(tmp_path, out, [0.0, 120.0], jobs=2)
    deadline = time.monotonic() + 60
    while not (out / "sig/c0.json").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert (out / "sig/c0.json").exists(), "the fast claim never finished"
    proc.send_signal(signal.SIGTERM)  # to the main process only, as a CI runner does
    status, _, err = _finish(proc, 60)
    assert status == cli.EXIT_TERMINATED, err
    assert "terminated (SIGTERM); 1 of 2 claims are finished and saved" in err
    assert "Traceback" not in err
    assert index_ids(out) == ["sig/c0"]


def test_sigkill_at_random_points_then_rerun_gives_the_same_index(tmp_path) -> None:
    sleeps = [0.15, 0.15, 0.15]
    ref = tmp_path / "ref"
    status, _, err = _finish(_start(tmp_path, ref, sleeps))
    assert status == cli.EXIT_VIOLATED, err
    expected = (ref / "index.json").read_bytes()

    out = tmp_path / "out"
    rng = np.random.default_rng(9)  # seeded kill points over the run (start-up included)
    for delay in rng.uniform(0.3, 2.5, size=3):
        proc = _start(tmp_path, out, sleeps)
        time.sleep(float(delay))
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        proc.stdout.close()
        proc.stderr.close()
    status, _, err = _finish(_start(tmp_path, out, sleeps))
    assert status == cli.EXIT_VIOLATED, err
    assert (out / "index.json").read_bytes() == expected
    assert not [p for p in out.rglob("*") if p.name.endswith(".tmp")]
    for cid in ("sig/c0", "sig/c1", "sig/c2"):
        assert json.loads((out / f"{cid}.json").read_text())["id"] == cid


def test_float_audit_command_shows_the_evidence(capsys) -> None:
    status, out, _ = run(capsys, "float-audit")
    assert status == cli.EXIT_VIOLATED
    assert "can never output on input 1" in out and "0x1.62e42fefa39efp-1" in out
    status, out, _ = run(capsys, "float-audit", "--sampler", "textbook", "--json")
    assert status == cli.EXIT_VIOLATED and json.loads(out)["epsilon"] == "inf"
    status, out, _ = run(capsys, "float-audit", "--f1", "1e-300")   # same doubles: nothing found
    assert status == cli.EXIT_OK
    for argv in (["--scale", "0"], ["--f0", "nan"], ["--f0", "1", "--f1", "1"]):
        status, _, err = run(capsys, "float-audit", *argv)
        assert status == cli.EXIT_USAGE and "Traceback" not in err


def test_stale_temp_files_of_dead_processes_are_removed_and_others_kept(tmp_path, fakes,
                                                                         capsys) -> None:
    out = tmp_path / "out"
    (out / "fake-colt").mkdir(parents=True)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()
    stale = out / "fake-colt" / f".a.json.{dead}.abc_12.tmp"      # killed mid-write
    live = out / "fake-colt" / f".b.json.{os.getpid()}.xyz.tmp"  # a running writer's
    elsewhere = out / "unrelated" / f".c.json.{dead}.q.tmp"     # not a dpaudit folder
    # killed while writing a paper's page (seen once in test_sigkill_at_random_points_...)
    page = out / "papers" / f".fake-colt.html.{dead}.r_9.tmp"
    elsewhere.parent.mkdir()
    page.parent.mkdir()
    for p in (stale, live, elsewhere, page):
        p.write_text("partial")
    assert run(capsys, "audit-claims", A, "--budget", "quick", "--out", str(out))[0] == 0
    assert not stale.exists() and live.exists() and elsewhere.exists()
    assert not page.exists()
