"""The execution layer: the same seed gives the same JSON in this process, in a local
process pool and on a real Dask ``LocalCluster``; a dead worker costs only its task; memory does
not grow with the test split. Slower tests (a cluster started by the ``dask scheduler`` /
``dask worker`` commands, a worker killed mid-audit, a lost scheduler) are in
``tests/test_execution_cluster.py`` under ``slow``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import dpaudit
from dpaudit import cli
from dpaudit.execution import executors as execution
from dpaudit.blackbox.audit_config import MAX_TRAIN_SAMPLES, split_sizes
from dpaudit.execution.executors import (ExecutionError, LocalExecutor, ProcessExecutor,
                                      check_executor, open_executor)
from dpaudit.mechanisms.laplace import LaplaceMechanism

from golden_audits import strip_timings


def _record(result: dpaudit.AuditResult) -> str:
    return json.dumps(strip_timings(json.loads(json.dumps(result.to_dict()))), sort_keys=True)


def _vector(data, n, rng):
    """A closure-free but non-importable-by-workers shape: defined in a test module."""
    return np.asarray(data, float) + rng.normal(size=(n, 3))


@pytest.fixture(scope="module")
def cluster():
    """A real LocalCluster of two single-threaded worker processes, shared by this module."""
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                      silence_logs=40) as lc, Client(lc, set_as_default=False) as client:
        yield client


# Small chunks, so that each input's test split is many chunks spread over many blocks (tasks)
# that finish in whatever order the workers run them.
CASES = [
    ("scalar, importable mechanism", LaplaceMechanism(1.0, 1.0), 0.0, 1.0, {}),
    ("vector, module function", _vector, [0, 0, 0], [0.5, 0, 0], {}),
    ("discrete, lambda (cloudpickle)",
     lambda d, n, g: (g.random(n) < (0.6 if d else 0.4)).astype(np.int64), 0, 1, {}),
    ("user statistic, candidate pairs", LaplaceMechanism(1.0, 1.0), None, None,
     {"pairs": [(0.0, 0.5), (0.0, 1.0)], "statistic": lambda o: -np.abs(o - 1.0)}),
]


@pytest.mark.parametrize("name,mech,d0,d1,kw", CASES, ids=[c[0] for c in CASES])
def test_local_processes_and_dask_give_identical_json(cluster, name, mech, d0, d1, kw) -> None:
    common = dict(epsilon=1.0, samples=60_000, seed=11, chunk_size=2_000, **kw)
    local = dpaudit.audit(mech, d0, d1, **common)
    assert local.epsilon_lower_bound > 0  # a non-trivial result: real counts to compare
    dask = dpaudit.audit(mech, d0, d1, executor="dask", scheduler=cluster, **common)
    procs = dpaudit.audit(mech, d0, d1, executor="processes", **common)
    assert _record(dask) == _record(local)
    assert _record(procs) == _record(local)


def test_block_split_and_completion_order_do_not_change_counts() -> None:
    # More workers = more, smaller blocks; a reversed completion order; same counts exactly.
    class Reversed(LocalExecutor):
        def __init__(self, workers: int) -> None:
            self._n = workers

        @property
        def workers(self) -> int:
            return self._n

        def map_unordered(self, fn, items, shared=None):
            return reversed(list(super().map_unordered(fn, items, shared)))

    mech = LaplaceMechanism(1.0, 1.0)
    ref = _record(dpaudit.audit(mech, 0.0, 1.0, samples=50_000, seed=2, chunk_size=1_000))
    for workers in (2, 7, 64):
        got = dpaudit.audit(mech, 0.0, 1.0, samples=50_000, seed=2, chunk_size=1_000,
                            executor=Reversed(workers))
        assert _record(got) == ref


def test_a_mechanism_error_on_a_worker_is_the_same_error(cluster) -> None:
    def bad(d, n, g):
        out = g.normal(size=n)
        if n == 520 and d == 1.0:  # only the last, shorter test chunk of data1 (21000 % 2048)
            out[-1] = np.nan
        return out
    for kw in ({"executor": "dask", "scheduler": cluster}, {"executor": "processes"}):
        with pytest.raises(ValueError, match=r"bad\(data1, n=520, rng\) returned nan in run 29999 "
                                             r"\(row 519 of this call\); outputs must be finite"):
            dpaudit.audit(bad, 0.0, 1.0, samples=30_000, seed=0, chunk_size=2_048,
                          train_fraction=0.3, **kw)


def test_a_worker_process_that_dies_costs_only_its_task(tmp_path) -> None:
    # The task of item 1 kills its worker the first time it runs: it is rerun with the same
    # arguments, the other tasks are not, and every result is right.
    marker = tmp_path / "died-once"

    def task(shared, item):
        if item == 1 and not marker.exists():
            marker.write_text("x")
            os._exit(9)
        with open(tmp_path / f"ran-{item}", "a") as fh:
            fh.write("x")
        return shared * item

    got = dict(ProcessExecutor(2).map_unordered(task, [0, 1, 2, 3], shared=10))
    assert got == {0: 0, 1: 10, 2: 20, 3: 30}
    assert marker.exists()
    assert [(tmp_path / f"ran-{i}").read_text() for i in range(4)] == ["x"] * 4


def test_a_worker_that_always_dies_is_a_clear_error() -> None:
    def task(shared, item):
        os._exit(3)
    with pytest.raises(ExecutionError, match=r"died 4 times while running the same task "
                                             r"\(exit code 3\); 0 of 1 tasks had finished"):
        list(ProcessExecutor(1).map_unordered(task, [0]))


def test_executor_arguments_are_checked() -> None:
    assert check_executor(None) == "local"
    assert check_executor(None, "tcp://127.0.0.1:8786") == "dask"
    with pytest.raises(ValueError, match=r"executor must be one of 'local', 'processes', 'dask', "
                                         r"got 'threads'"):
        check_executor("threads")
    with pytest.raises(ValueError, match=r"scheduler= is a Dask scheduler and needs "
                                         r"executor='dask', got executor='processes'"):
        check_executor("processes", "tcp://127.0.0.1:8786")
    with pytest.raises(TypeError, match="scheduler must be an address"):
        check_executor("dask", 8786)
    with pytest.raises(ValueError, match="executor must be one of"):
        dpaudit.audit(LaplaceMechanism(1.0, 1.0), 0.0, 1.0, samples=100, executor="gpu")
    assert isinstance(open_executor("local"), LocalExecutor)


def test_the_local_cluster_started_here_leaves_malloc_trim_unset(monkeypatch) -> None:
    # Dask's nannies export MALLOC_TRIM_THRESHOLD_=65536 to their workers, which switches off
    # glibc's dynamic mmap threshold: each ~8 MB chunk of runs becomes a fresh mmap, and a scalar
    # audit ran 2-3x slower on a LocalCluster than in a process pool (bench_scaleout.py dask).
    # The LocalCluster of executor="dask" must start its workers without it; the audit engine is
    # imported on each worker before the first task.
    monkeypatch.delenv("MALLOC_TRIM_THRESHOLD_", raising=False)
    # The engine names the modules its tasks need (open_executor(preload=...)); the executor
    # imports nothing of the engine itself.
    with open_executor("dask", workers=1, preload=("dpaudit.blackbox.empirical_audit",)) as ex:
        trim = ex.client.run(os.environ.get, "MALLOC_TRIM_THRESHOLD_")
        imported = ex.client.run(lambda: "dpaudit.blackbox.empirical_audit" in sys.modules)
        cluster = ex._cluster
    assert list(trim.values()) == [None]
    assert list(imported.values()) == [True]
    assert ex._cluster is None and cluster.status.name == "closed"


def test_unreachable_scheduler_is_a_clear_error(monkeypatch) -> None:
    monkeypatch.setattr(execution, "CONNECT_TIMEOUT", 1)
    with pytest.raises(ExecutionError, match=r"cannot connect to the Dask scheduler at "
                                             r"tcp://127.0.0.1:9"):
        dpaudit.audit(LaplaceMechanism(1.0, 1.0), 0.0, 1.0, samples=100,
                      scheduler="tcp://127.0.0.1:9")


def _fake_claims() -> list[str]:
    """Two claims registered at run time (unknown to a fresh worker interpreter, so they travel
    to the Dask workers by cloudpickle), each with one real empirical test inside."""
    from dpaudit.claims import registry
    from dpaudit.claims.record import ClaimAudit
    from dpaudit.claims.evidence import GridPoint
    from dpaudit.claims import PrivacyClaim, Provenance

    ids = []
    for cid, scale in (("exec-test/laplace", 1.0), ("exec-test/half-laplace", 0.5)):
        claim = PrivacyClaim(cid, 1.0, 0.0, Provenance("fake.txt", "v1", "Theorem 1"))

        def run(ctx, claim=claim, scale=scale):
            res = dpaudit.audit(LaplaceMechanism(1.0, scale), 0.0, 1.0, epsilon=1.0,
                                samples=ctx.budget.samples, alpha=ctx.alpha,
                                seed=ctx.seed_for(claim.id), executor=ctx.executor or "local")
            return ClaimAudit(claim, [GridPoint({"scale": scale}, 1.0, 0.0, 1.0 / scale, 1.0,
                                                res.epsilon_lower_bound,
                                                {"empirical": res.to_dict()})])
        registry.register(claim, run)
        ids.append(cid)
    return ids


def test_cli_claims_on_dask_give_the_same_reports(cluster, tmp_path, capsys) -> None:
    from dpaudit.claims import registry

    ids = _fake_claims()
    try:
        common = ["--budget", "quick", "--quiet"]
        assert cli.main(["audit-claims", *ids, *common, "--out", str(tmp_path / "local")]) == 1
        address = cluster.scheduler.address
        assert cli.main(["audit-claims", *ids, *common, "--scheduler", address,
                         "--out", str(tmp_path / "dask")]) == 1
        # One claim: its test chunks go to the cluster instead.
        assert cli.main(["audit", ids[1], *common, "--scheduler", address,
                         "--out", str(tmp_path / "one")]) == 1
    finally:
        for cid in ids:
            registry.unregister(cid)
    for cid in ids:
        a, b = (json.loads((tmp_path / d / f"{cid}.json").read_text()) for d in ("local", "dask"))
        assert strip_timings(a) == strip_timings(b)
        assert a["verdict"] == ("violated" if "half" in cid else "holds")
    one = json.loads((tmp_path / "one" / f"{ids[1]}.json").read_text())
    assert strip_timings(one) == strip_timings(
        json.loads((tmp_path / "local" / f"{ids[1]}.json").read_text()))
    assert "error" not in capsys.readouterr().err


def test_cli_rejects_a_scheduler_without_dask(tmp_path, capsys) -> None:
    status = cli.main(["audit-claims", "st13/tree-aggregation", "--executor", "processes",
                       "--scheduler", "tcp://127.0.0.1:8786", "--out", str(tmp_path)])
    assert status == cli.EXIT_USAGE
    assert "needs --executor 'dask'" in capsys.readouterr().err


# ------------------------------------------------------------------------------------------------
# Bounded memory
# ------------------------------------------------------------------------------------------------

def test_training_split_is_capped_and_the_rest_goes_to_the_test_split() -> None:
    assert split_sizes(10**9, None) == (MAX_TRAIN_SAMPLES, 10**9 - MAX_TRAIN_SAMPLES)
    assert split_sizes(10**6, None) == (100_000, 900_000)  # below the cap: unchanged
    assert split_sizes(10**9, None, None) == (10**8, 9 * 10**8)
    assert split_sizes(10**7, 0.5, 10**5) == (10**5, 10**7 - 10**5)
    res = dpaudit.audit(LaplaceMechanism(1.0, 1.0), 0.0, 1.0, samples=50_000, seed=0,
                        max_train_samples=1_000)
    assert (res.n_fit + res.n_select, res.n_test) == (1_000, 49_000)


MEMORY_SCRIPT = textwrap.dedent('''
    import resource, sys
    import dpaudit
    from dpaudit.mechanisms.laplace import LaplaceMechanism
    mech = LaplaceMechanism(1.0, 1.0)
    kw = dict(epsilon=1.0, seed=0, max_train_samples=20_000)
    dpaudit.audit(mech, 0.0, 1.0, samples=200_000, **kw)  # warm-up: imports, first chunks
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    res = dpaudit.audit(mech, 0.0, 1.0, samples=int(sys.argv[1]), **kw)
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(after - before, res.n_test, res.epsilon_lower_bound)
''')


def test_memory_does_not_grow_with_the_streamed_test_split(tmp_path) -> None:
    # 10^7 runs per input streamed through the test split, training capped at 2 x 10^4: the peak
    # resident memory (ru_maxrss, KiB on Linux) grows by less than 48 MiB over a 2 x 10^5-run
    # audit. Holding the test runs would take 160 MB (2 x 10^7 float64); an 8 MB chunk per input,
    # its scores and the event indicators are what may legitimately be resident at once.
    script = tmp_path / "mem.py"
    script.write_text(MEMORY_SCRIPT)
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
    out = subprocess.run([sys.executable, str(script), str(10**7)], capture_output=True,
                         text=True, timeout=300, env=env, check=True).stdout.split()
    growth_kib, n_test, lb = int(out[0]), int(out[1]), float(out[2])
    assert n_test == 10**7 - 20_000
    assert 0.9 < lb <= 1.0  # the audit really ran: a tight bound on Laplace(1), epsilon = 1
    assert growth_kib < 48 * 1024, f"peak RSS grew by {growth_kib / 1024:.0f} MiB"
