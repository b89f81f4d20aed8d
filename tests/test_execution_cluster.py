"""A Dask cluster started the way a user starts one: ``dask scheduler`` and two ``dask worker``
processes on localhost. Slow (processes start in seconds, not milliseconds): run with
``make campaign``. Every process is started in its own session and killed at teardown, whatever
the test does; every wait is bounded.

* the same seed gives the same JSON on the cluster as in-process, and every bundled claim audited
  on the cluster (``audit-claims --all --scheduler``) reproduces its golden record;
* a worker killed mid-audit costs only its tasks: Dask reruns them elsewhere with the same seeds
  and the result is unchanged;
* a scheduler lost mid-run is a clear error (exit 3) and the claims finished before stay saved.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import dpaudit
from dpaudit import cli
from dpaudit.mechanisms.laplace import LaplaceMechanism

from fake_claim_scripts import fake_claims_script
from golden_audits import strip_timings

pytestmark = pytest.mark.slow

# Workers started by `dask worker` cannot import this test module: ship its classes by value.
import cloudpickle  # noqa: E402

cloudpickle.register_pickle_by_value(sys.modules[__name__])

DASK = str(Path(sys.executable).with_name("dask"))
START_TIMEOUT = 90


def _record(result) -> str:
    return json.dumps(strip_timings(json.loads(json.dumps(result.to_dict()))), sort_keys=True)


class Cluster:
    """``dask scheduler`` + ``dask worker`` x n as separate processes, on 127.0.0.1 only."""

    def __init__(self, tmp: Path, n_workers: int = 2) -> None:
        self.tmp = tmp
        self.procs: dict[str, subprocess.Popen] = {}
        self.file = tmp / "scheduler.json"
        env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
        self._start("scheduler", [DASK, "scheduler", "--host", "127.0.0.1", "--port", "0",
                                  "--no-dashboard", "--scheduler-file", str(self.file)], env)
        deadline = time.monotonic() + START_TIMEOUT
        while not self.file.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        if not self.file.exists():
            raise RuntimeError("the dask scheduler did not start")
        self.address = json.loads(self.file.read_text())["address"]
        for i in range(n_workers):
            # No nanny: a killed worker stays dead, so the test sees the other one take over.
            self._start(f"worker{i}", [DASK, "worker", self.address, "--nthreads", "1",
                                       "--no-nanny", "--no-dashboard", "--host", "127.0.0.1",
                                       "--name", f"worker{i}"], env)
        from distributed import Client

        with Client(self.address, timeout=START_TIMEOUT, set_as_default=False) as c:
            c.wait_for_workers(n_workers, timeout=START_TIMEOUT)

    def _start(self, name: str, cmd: list[str], env: dict[str, str]) -> None:
        log = open(self.tmp / f"{name}.log", "w")
        self.procs[name] = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env,
                                            start_new_session=True)

    def kill(self, name: str) -> None:
        proc = self.procs[name]
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)

    def close(self) -> None:
        for name in list(self.procs):
            self.kill(name)


@pytest.fixture
def cluster(tmp_path):
    c = Cluster(tmp_path)
    try:
        yield c
    finally:
        c.close()


def test_scheduler_and_workers_started_by_the_dask_commands_give_identical_json(cluster) -> None:
    common = dict(epsilon=1.0, samples=200_000, seed=5, chunk_size=5_000)
    mech = LaplaceMechanism(1.0, 0.8)
    local = dpaudit.audit(mech, 0.0, 1.0, **common)
    remote = dpaudit.audit(mech, 0.0, 1.0, scheduler=cluster.address, **common)
    assert _record(remote) == _record(local)
    # DASK_SCHEDULER_ADDRESS is what executor="dask" uses without a scheduler.
    os.environ["DASK_SCHEDULER_ADDRESS"] = cluster.address
    try:
        env = dpaudit.audit(mech, 0.0, 1.0, executor="dask", **common)
    finally:
        del os.environ["DASK_SCHEDULER_ADDRESS"]
    assert _record(env) == _record(local)


class SlowLaplace:
    """Laplace(1) noise, 20 ms per call, leaving one file per call in ``trace`` (so the test knows
    the audit is under way on the workers)."""

    def __init__(self, trace: str) -> None:
        self.trace = trace

    def __call__(self, data, n, rng):
        time.sleep(0.02)
        Path(self.trace, f"{os.getpid()}-{time.monotonic_ns()}").touch()
        return data + rng.laplace(0.0, 1.0, size=n)


def test_a_worker_killed_mid_audit_changes_nothing(cluster, tmp_path) -> None:
    trace = tmp_path / "trace"
    trace.mkdir()
    mech = SlowLaplace(str(trace))
    common = dict(epsilon=1.0, samples=120_000, seed=8, chunk_size=500)
    local = dpaudit.audit(mech, 0.0, 1.0, **common)
    for f in trace.iterdir():
        f.unlink()
    pid = cluster.procs["worker0"].pid
    killed = threading.Event()

    def killer() -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if sum(1 for f in trace.iterdir() if f.name.startswith(f"{pid}-")) >= 40:
                cluster.kill("worker0")  # mid-audit: it has run some test chunks, not all
                killed.set()
                return
            time.sleep(0.02)

    thread = threading.Thread(target=killer, daemon=True)
    thread.start()
    remote = dpaudit.audit(mech, 0.0, 1.0, scheduler=cluster.address, **common)
    thread.join(timeout=5)
    assert killed.is_set(), "worker0 was never killed: the audit did not run on it"
    # The test split has 2 x 108000 / 500 = 432 chunks; worker0 ran at least 40 before dying.
    survivors = {f.name.split("-")[0] for f in trace.iterdir()}
    assert str(cluster.procs["worker1"].pid) in survivors
    assert _record(remote) == _record(local)




def test_a_lost_scheduler_is_a_clear_error_and_finished_claims_stay_saved(cluster,
                                                                          tmp_path) -> None:
    out = tmp_path / "out"
    script = tmp_path / "run.py"
    script.write_text(fake_claims_script(
        [("lost/fast", 0.0), ("lost/slow", 600.0)],
        ["audit-claims", "lost/fast", "lost/slow", "--scheduler", cluster.address,
         "--budget", "quick", "--quiet", "--out", str(out)]))
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while not (out / "lost/fast.json").exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert (out / "lost/fast.json").exists(), "the fast claim never finished"
        cluster.kill("scheduler")
        _, err = proc.communicate(timeout=180)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == cli.EXIT_FAILED, err
    assert f"lost the Dask scheduler at {cluster.address}" in err
    assert "1 of 2 claims are finished and saved" in err
    assert "Traceback" not in err, err
    index = json.loads((out / "index.json").read_text())
    assert [c["id"] for c in index["claims"]] == ["lost/fast"]
    assert not (out / "lost/slow.json").exists()


def test_every_bundled_claim_on_the_cluster_reproduces_its_golden_record(cluster, tmp_path,
                                                                          capsys) -> None:
    # The golden records are made in-process, one fresh interpreter per claim; here the claims
    # are tasks on two long-lived `dask worker` processes, several claims per process, finishing
    # in any order. Same seed, budget and alpha: the same records (timings aside).
    from golden_audits import ALPHA, BUDGET, SEED, golden_path

    from dpaudit.claims.registry import all_claims

    out = tmp_path / "reports"
    code = cli.main(["audit-claims", "--all", "--budget", BUDGET, "--seed", str(SEED),
                     "--alpha", str(ALPHA), "--scheduler", cluster.address, "--out", str(out),
                     "--quiet"])
    assert code in (cli.EXIT_OK, cli.EXIT_VIOLATED), capsys.readouterr().err
    ids = [rc.claim.id for rc in all_claims()]
    assert ids
    for claim_id in ids:
        gold = json.loads(golden_path(claim_id).read_text(encoding="utf-8"))
        record = strip_timings(json.loads((out / f"{claim_id}.json").read_text(encoding="utf-8")))
        # The saved file adds its envelope (schema, kind, version, the hash of the audit code
        # that resume checks) to the audit's record.
        assert set(record) - set(gold) <= {"schema", "kind", "dpaudit_version",
                                           "audit_code_sha256"}, claim_id
        assert {k: record[k] for k in gold} == gold, f"{claim_id} differs on the cluster"
