"""Where independent audit tasks run: in this process, in a local process pool, or on Dask.

One execution layer serves both levels of parallelism: :func:`dpaudit.audit` sends blocks of
chunks of runs of its test split (and gets back only counts), ``dpaudit audit-claims`` sends
claims. Three executors, chosen by name everywhere (Python API, ``--executor``, ``--dp-executor``):
``"local"`` (default), ``"processes"`` (:class:`ProcessExecutor`) and ``"dask"``
(:class:`DaskExecutor`). Every task is a pure function of its arguments and results are combined
by exact integer sums or in submission order, so the result never depends on the executor, the
number of workers or the order in which tasks finish. Mechanisms that draw from numpy's legacy
global state or ``random`` are detected (:mod:`dpaudit.blackbox.rng_probe`) and reseeded per
chunk (:func:`reseed_global_state`); one with generators of its own is refused under the process
and Dask executors (:func:`refuse_parallel_unseeded`).

Each executor, its faults and why reseeding keeps the chunks independent:
docs/scale-out.md#the-execution-layer.
"""

from __future__ import annotations

import abc
import importlib
import logging
import multiprocessing
import os
import signal
import sys
from typing import Any, Callable, Iterator, Literal, Sequence

__all__ = ["EXECUTORS", "SCHEDULER_ENV", "ExecutorName", "Executor", "LocalExecutor",
           "ProcessExecutor", "DaskExecutor", "ExecutionError", "open_executor",
           "check_executor", "default_workers", "results_in_order", "reseed_global_state",
           "global_seed_of", "refuse_parallel_unseeded"]

ExecutorName = Literal["local", "processes", "dask"]
#: The executor names accepted everywhere.
EXECUTORS: tuple[str, ...] = ("local", "processes", "dask")
#: Environment variable naming the Dask scheduler used by ``executor="dask"`` when no
#: ``scheduler`` is given (Dask's own convention).
SCHEDULER_ENV = "DASK_SCHEDULER_ADDRESS"
#: How many times a task is resubmitted after the worker running it died.
MAX_RETRIES = 3

#: What a Dask worker imports before its first task unless the caller names more.
DEFAULT_PRELOAD: tuple[str, ...] = ("numpy", "scipy.stats")


#: Spawn-key component of the child of a chunk's SeedSequence that seeds the global RNGs (the
#: chunk's generator uses the chunk's SeedSequence itself and spawns no child).
GLOBAL_SEED_KEY = 0x6C0BA1


def global_seed_of(seed_seq: Any) -> int:
    """The 32-bit seed of numpy's legacy global RNG and Python's ``random`` for the chunk whose
    generator is ``np.random.default_rng(seed_seq)``: drawn from a child sequence the generator
    never uses, so it is independent of the generator's stream and distinct per chunk."""
    import numpy as np

    child = np.random.SeedSequence(seed_seq.entropy,
                                   spawn_key=tuple(seed_seq.spawn_key) + (GLOBAL_SEED_KEY,),
                                   pool_size=seed_seq.pool_size)
    return int(child.generate_state(1, np.uint32)[0])


def reseed_global_state(seed_seq: Any) -> int:
    """Seed numpy's legacy global RNG (``np.random.seed``), Python's ``random`` and, when a release
    has imported it, torch's global CPU generator (``torch.manual_seed``; torch is never imported
    here) from the chunk's own seed (:func:`global_seed_of`); returns the seed used."""
    import random
    import sys

    import numpy as np

    value = global_seed_of(seed_seq)
    np.random.seed(value)
    random.seed(value)
    torch = sys.modules.get("torch")
    if torch is not None and hasattr(torch, "manual_seed"):
        torch.manual_seed(value)
    return value


def refuse_parallel_unseeded(executor: Any, who: str) -> None:
    """ValueError (one sentence) when a mechanism whose randomness dpaudit cannot reseed would run
    on a parallel executor, where forked or remote workers could repeat each other's draws."""
    name = executor if isinstance(executor, str) else getattr(executor, "name", "parallel")
    if isinstance(executor, str) and executor == "local":
        return
    if isinstance(executor, LocalExecutor):
        return
    raise ValueError(f"{who} ignores its rng and draws from a generator of its own that dpaudit "
                     f"cannot reseed, so parallel chunks ({name} executor) could repeat each "
                     "other's draws; run it with executor='local' or make it draw from the rng "
                     "it is given")


class ExecutionError(RuntimeError):
    """The execution back end failed (a lost Dask scheduler, a task whose workers kept dying).

    Results already delivered by :meth:`Executor.map_unordered` stay valid; the message says how
    many tasks had finished.
    """


def default_workers() -> int:
    """Worker processes to start on this machine: the CPUs this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def check_executor(executor: Any, scheduler: Any = None) -> str:
    """The executor name to use for ``executor``/``scheduler``; ValueError/TypeError otherwise.

    ``executor=None`` means ``"dask"`` when a ``scheduler`` is given and ``"local"`` otherwise;
    a ``scheduler`` with ``"local"`` or ``"processes"`` is a ValueError (it would be ignored).
    """
    if isinstance(executor, Executor):
        if scheduler is not None:
            raise ValueError("scheduler= cannot be combined with an open Executor instance")
        return executor.name
    if executor is None:
        executor = "dask" if scheduler is not None else "local"
    if not isinstance(executor, str):
        raise TypeError(f"executor must be one of {', '.join(map(repr, EXECUTORS))} or an "
                        f"open Executor, got {type(executor).__name__}")
    if executor not in EXECUTORS:
        raise ValueError(f"executor must be one of {', '.join(map(repr, EXECUTORS))}, got "
                         f"{executor!r}")
    if scheduler is not None:
        if executor != "dask":
            raise ValueError(f"scheduler= is a Dask scheduler and needs executor='dask', got "
                             f"executor={executor!r}")
        if not isinstance(scheduler, str):
            try:
                from distributed import Client
            except ImportError:  # pragma: no cover - dask[distributed] is a dependency
                Client = ()  # type: ignore[assignment,misc]
            if not isinstance(scheduler, Client):
                raise TypeError(f"scheduler must be an address such as 'tcp://host:8786' or a "
                                f"distributed.Client, got {type(scheduler).__name__}")
        elif not scheduler.strip():
            raise ValueError("scheduler must be a Dask scheduler address such as "
                             "'tcp://host:8786', got an empty string")
    return executor


class Executor(abc.ABC):
    """Runs independent tasks ``fn(shared, item)`` and yields ``(index, result)`` as they finish.

    ``shared`` is sent to each worker once per map call (the mechanism, its inputs, the events);
    ``items`` are small task descriptions. Use as a context manager; :meth:`close` stops whatever
    the executor started (never a cluster it was only connected to).
    """

    name: str = "executor"

    @property
    @abc.abstractmethod
    def workers(self) -> int:
        """How many tasks may run at the same time."""

    @abc.abstractmethod
    def map_unordered(self, fn: Callable[[Any, Any], Any], items: Sequence[Any],
                      shared: Any = None) -> Iterator[tuple[int, Any]]:
        """``(i, fn(shared, items[i]))`` for every item, in completion order."""

    def close(self) -> None:
        """Release what this executor started."""

    def __enter__(self) -> "Executor":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def describe(self) -> str:
        """In words, for reports and error messages."""
        return self.name


class LocalExecutor(Executor):
    """Runs every task in this process, in order. Starts nothing."""

    name = "local"

    @property
    def workers(self) -> int:
        return 1

    def map_unordered(self, fn: Callable[[Any, Any], Any], items: Sequence[Any],
                      shared: Any = None) -> Iterator[tuple[int, Any]]:
        for i, item in enumerate(items):
            yield i, fn(shared, item)


# ------------------------------------------------------------------------------------------------
# Local process pool
# ------------------------------------------------------------------------------------------------

_STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM}


def _worker_init() -> None:
    # Ctrl-C reaches the whole process group; the parent handles it and stops the workers.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # The parent's SIGTERM handler (the CLI's) must not be inherited: the parent stops workers
    # with SIGTERM.
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    # Workers are forked with SIGINT and SIGTERM blocked (see ProcessExecutor._start): only now
    # may they arrive; a Ctrl-C that arrived before the line above is discarded by SIG_IGN.
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOP_SIGNALS)
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    _die_with_parent()


#: The pid of the process that forks the workers (set before each fork, read in the child).
_FORK_PARENT: int | None = None


def _die_with_parent() -> None:
    """A worker dies with the process that forked it (after a SIGKILL of the parent
    alone, orphan workers ran ~30 s more): ``prctl(PR_SET_PDEATHSIG, SIGKILL)`` on Linux, and an
    exit at once when the parent is already gone."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # 1 = PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    if _FORK_PARENT is not None and os.getppid() != _FORK_PARENT:
        os._exit(1)  # the parent died before prctl: nobody will read this task's result


def _child_main(conn: Any, shared_blob: bytes, fn_blob: bytes, item_blob: bytes) -> None:
    """A worker process: run one task and send ``(ok, result or traceback text)`` back."""
    import traceback

    import cloudpickle

    _worker_init()
    try:
        fn = cloudpickle.loads(fn_blob)
        result = fn(cloudpickle.loads(shared_blob), cloudpickle.loads(item_blob))
        payload = cloudpickle.dumps((True, result))
    except BaseException as exc:  # the parent re-raises it
        try:
            payload = cloudpickle.dumps((False, exc))
        except Exception:
            payload = cloudpickle.dumps((False, RuntimeError(traceback.format_exc())))
    conn.send_bytes(payload)
    conn.close()


def _pool_context() -> Any:
    # fork keeps the parent's state (claims registered at run time, imported modules).
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else "spawn")


class ProcessExecutor(Executor):
    """At most ``workers`` worker processes on this machine, one fresh (forked) process per task.

    A fresh process per task keeps tasks independent (an audit's Hypothesis searches never see
    state left by another claim) and makes a dead worker visible at once: a process that exits
    without sending its result (killed, out of memory) costs only its task, which is rerun with
    the same arguments, at most :data:`MAX_RETRIES` times. Functions, the shared payload and the
    items are pickled with cloudpickle, so closures and lambdas work. Forking costs a few
    milliseconds per task; tasks are claims or blocks of many chunks of runs.
    """

    name = "processes"

    def __init__(self, workers: int | None = None) -> None:
        self._workers = default_workers() if workers is None else max(1, int(workers))
        self._running: dict[Any, tuple[int, Any, Any]] = {}

    @property
    def workers(self) -> int:
        return self._workers

    def describe(self) -> str:
        return f"processes ({self._workers} worker processes on this machine)"

    def _start(self, ctx: Any, i: int, shared_blob: bytes, fn_blob: bytes,
               item_blob: bytes) -> None:
        recv, send = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=_child_main, args=(send, shared_blob, fn_blob, item_blob),
                           daemon=True)
        # Block the stop signals while forking: the child starts with them blocked until
        # _worker_init ignores SIGINT and restores SIGTERM's default, so a Ctrl-C or SIGTERM
        # during its start-up cannot run the parent's handlers in it or print a traceback; the
        # parent restores its mask at once and alone handles them.
        global _FORK_PARENT
        _FORK_PARENT = os.getpid()
        masked = hasattr(signal, "pthread_sigmask")
        if masked:
            previous = signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
        try:
            proc.start()
        finally:
            if masked:
                signal.pthread_sigmask(signal.SIG_SETMASK, previous)
        send.close()
        self._running[recv] = (i, proc, recv)

    def map_unordered(self, fn: Callable[[Any, Any], Any], items: Sequence[Any],
                      shared: Any = None) -> Iterator[tuple[int, Any]]:
        import cloudpickle
        from multiprocessing.connection import wait as wait_any

        items = list(items)
        if not items:
            return
        ctx = _pool_context()
        shared_blob = cloudpickle.dumps(shared)
        fn_blob = cloudpickle.dumps(fn)
        blobs = [cloudpickle.dumps(item) for item in items]
        queue = list(range(len(items)))
        attempts = [0] * len(items)
        finished = 0
        try:
            while queue or self._running:
                while queue and len(self._running) < self._workers:
                    i = queue.pop(0)
                    attempts[i] += 1
                    self._start(ctx, i, shared_blob, fn_blob, blobs[i])
                ready = wait_any(list(self._running))
                for conn in sorted(ready, key=lambda c: self._running[c][0]):
                    i, proc, _ = self._running.pop(conn)
                    try:
                        payload = conn.recv_bytes()
                    except (EOFError, OSError):
                        payload = None
                    conn.close()
                    proc.join()
                    if payload is None:  # the worker died before sending its result
                        if attempts[i] > MAX_RETRIES:
                            raise ExecutionError(
                                f"a worker process died {attempts[i]} times while running the "
                                f"same task (exit code {proc.exitcode}); {finished} of "
                                f"{len(items)} tasks had finished")
                        queue.insert(0, i)
                        continue
                    ok, result = cloudpickle.loads(payload)
                    if not ok:
                        raise result
                    finished += 1
                    yield i, result
        finally:
            self.close()

    def close(self) -> None:
        running = list(self._running.values())
        self._running.clear()
        for _, proc, conn in running:
            if proc.is_alive():
                proc.terminate()
        for _, proc, conn in running:
            proc.join(timeout=5)
            if proc.is_alive():
                proc.kill()
                proc.join()
            conn.close()


# ------------------------------------------------------------------------------------------------
# Dask
# ------------------------------------------------------------------------------------------------

#: Seconds to wait when connecting to a Dask scheduler.
CONNECT_TIMEOUT = 30
#: Dask configuration of the ``LocalCluster`` started here. Dask's nannies start workers with
#: ``MALLOC_TRIM_THRESHOLD_=65536``; setting it at all switches off glibc's dynamic mmap
#: threshold, so every chunk of runs (about 8 MB) is a fresh mmap whose pages the kernel must
#: fault in and zero: measured on the 2-core machine, an audit of a scalar mechanism took 2-3x as
#: long on a LocalCluster as in a process pool, and as long as it with the variable unset
#: (``benchmarks/bench_scaleout.py dask``). A value the user exported is still inherited by the
#: workers. Workers started by ``dask worker`` need the same setting (README).
_LOCAL_CLUSTER_CONFIG: dict[str, Any] = {
    "distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None}


class DaskExecutor(Executor):
    """Tasks on a Dask cluster (``distributed``).

    ``scheduler``: a ``distributed.Client`` (used as is, never closed here), an address
    (connected to for the executor's lifetime), or None: ``DASK_SCHEDULER_ADDRESS`` if set, else a
    ``LocalCluster`` of ``workers`` (default: one per core) single-threaded worker processes,
    started here and closed by :meth:`close`.
    """

    name = "dask"

    def __init__(self, scheduler: Any = None, workers: int | None = None,
                 preload: Sequence[str] = DEFAULT_PRELOAD) -> None:
        from distributed import Client, LocalCluster

        self._own_client = False
        self._cluster = None
        source = "the scheduler argument"
        if scheduler is None:
            scheduler = os.environ.get(SCHEDULER_ENV) or None
            source = f"${SCHEDULER_ENV}"
        if isinstance(scheduler, Client):
            self.client = scheduler
            self.address = str(scheduler.scheduler.address) if scheduler.scheduler else "?"
        elif scheduler is not None:
            self.address = str(scheduler)
            try:
                self.client = Client(self.address, timeout=CONNECT_TIMEOUT,
                                     set_as_default=False)
            except (OSError, TimeoutError) as exc:
                raise ExecutionError(f"cannot connect to the Dask scheduler at {self.address} "
                                     f"({type(exc).__name__}: {exc}); start one with `dask "
                                     "scheduler` and workers with `dask worker ADDRESS`") from None
            self._own_client = True
            # Tasks and results travel pickled: this scheduler can run code in this process
            # (docs/scale-out-security.md); say which one it is, especially when it was taken
            # silently from the environment.
            print(f"dpaudit: using the Dask scheduler at {self.address} (from {source}); it "
                  "and its workers can run code in this process", file=sys.stderr, flush=True)
        else:
            import dask

            n = default_workers() if workers is None else max(1, int(workers))
            with dask.config.set(_LOCAL_CLUSTER_CONFIG):
                self._cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                                             dashboard_address=None, silence_logs=logging.ERROR,
                                             env={"OPENBLAS_NUM_THREADS": "1"})
            self.client = Client(self._cluster, set_as_default=False)
            self.address = str(self._cluster.scheduler_address)
            self._own_client = True
        self._warm_up(tuple(preload))

    def _warm_up(self, preload: tuple[str, ...]) -> None:
        """Import ``preload`` (module names; the caller names the modules its tasks need) on every
        worker now, not inside the first tasks: a fresh worker process spends about a second
        importing numpy, scipy and dpaudit, which would otherwise be charged to (and delay) the
        first audit's blocks."""
        try:
            self.client.run(_import_modules, preload)
        except Exception:  # a worker that cannot import dpaudit fails its tasks with a clear error
            pass

    @property
    def workers(self) -> int:
        try:
            info = self.client.scheduler_info()
            n = sum(int(w.get("nthreads", 1)) for w in info.get("workers", {}).values())
        except Exception:  # the scheduler is gone: the next map raises a clear error
            n = 0
        return max(1, n)

    def describe(self) -> str:
        where = "LocalCluster" if self._cluster is not None else "scheduler"
        return f"dask ({where} at {self.address}, {self.workers} worker threads)"

    def map_unordered(self, fn: Callable[[Any, Any], Any], items: Sequence[Any],
                      shared: Any = None) -> Iterator[tuple[int, Any]]:
        from distributed import as_completed

        items = list(items)
        if not items:
            return
        import uuid

        import cloudpickle

        finished = 0
        # cloudpickle explicitly (Dask would try plain pickle first, which pickles a class of a
        # module the workers cannot import by name): by reference what is importable, by value
        # what is not (closures, lambdas, __main__, modules registered with
        # cloudpickle.register_pickle_by_value).
        fn_blob = cloudpickle.dumps(fn)
        token = uuid.uuid4().hex
        try:
            shared_future = self.client.scatter(cloudpickle.dumps(shared), broadcast=False,
                                                hash=False)
            futures = self.client.map(_call_blobs, [fn_blob] * len(items),
                                      [shared_future] * len(items),
                                      [cloudpickle.dumps(item) for item in items],
                                      [token] * len(items), pure=False, retries=MAX_RETRIES)
            index = {f.key: i for i, f in enumerate(futures)}
            for fut in as_completed(futures, loop=self.client.loop):
                i = index[fut.key]
                if fut.status == "error":
                    exc = fut.exception()
                    if _is_lost_worker(exc):
                        raise ExecutionError(
                            f"a Dask task kept losing its workers ({exc}); {finished} of "
                            f"{len(items)} tasks had finished") from None
                    fut.result()  # re-raise the task's own exception, traceback included
                if fut.status == "cancelled":
                    raise _lost_scheduler(self.address, finished, len(items))
                result = fut.result()
                if isinstance(result, _TaskFailed):
                    raise result.exception()
                finished += 1
                yield i, result
        except ExecutionError:
            raise
        except (OSError, TimeoutError, _cancelled_error()) as exc:
            if self._scheduler_alive():
                raise
            raise _lost_scheduler(self.address, finished, len(items)) from exc

    def _scheduler_alive(self) -> bool:
        return self.client.status == "running"

    def close(self) -> None:
        if self._own_client:
            try:
                self.client.close(timeout=10)
            except Exception:
                pass
        if self._cluster is not None:
            try:
                self._cluster.close(timeout=10)
            except Exception:
                pass
            self._cluster = None


_SHARED_CACHE: dict[str, Any] = {}


def _import_modules(names: tuple[str, ...]) -> None:
    for name in names:
        importlib.import_module(name)


def _call_blobs(fn_blob: bytes, shared_blob: bytes, item_blob: bytes, token: str) -> Any:
    """Worker side of :class:`DaskExecutor`: unpickle (the shared payload once per map call and
    worker process) and run the task."""
    import cloudpickle

    if token not in _SHARED_CACHE:
        _SHARED_CACHE.clear()
        _SHARED_CACHE[token] = cloudpickle.loads(shared_blob)
    try:
        return cloudpickle.loads(fn_blob)(_SHARED_CACHE[token], cloudpickle.loads(item_blob))
    except Exception as exc:
        # The task's own error (e.g. a mechanism's bad output) is deterministic: sent back as a
        # result, not raised, so Dask does not retry it 3 times and log 31 tracebacks; retries are
        # for lost workers only.
        return _TaskFailed.of(exc)


class _TaskFailed:
    """A task's exception, carried back from a Dask worker as its result."""

    def __init__(self, blob: bytes | None, text: str) -> None:
        self.blob, self.text = blob, text

    @classmethod
    def of(cls, exc: BaseException) -> "_TaskFailed":
        import traceback

        import cloudpickle

        text = "".join(traceback.format_exception(exc))
        try:
            return cls(cloudpickle.dumps(exc), text)
        except Exception:
            return cls(None, text)

    def exception(self) -> BaseException:
        import cloudpickle

        if self.blob is not None:
            try:
                return cloudpickle.loads(self.blob)
            except Exception:
                pass
        return RuntimeError(self.text)


def _cancelled_error() -> type[BaseException]:
    try:
        from distributed.client import FutureCancelledError

        return FutureCancelledError
    except ImportError:  # older distributed
        from concurrent.futures import CancelledError

        return CancelledError


def _is_lost_worker(exc: BaseException | None) -> bool:
    return exc is not None and type(exc).__name__ == "KilledWorker"


def _lost_scheduler(address: str, finished: int, total: int) -> ExecutionError:
    return ExecutionError(f"lost the Dask scheduler at {address}; {finished} of {total} tasks "
                          "had finished (their results are kept); restart the scheduler and "
                          "workers and rerun")


def open_executor(executor: ExecutorName | Executor | None = "local", scheduler: Any = None, *,
                  workers: int | None = None,
                  preload: Sequence[str] = DEFAULT_PRELOAD) -> Executor:
    """An :class:`Executor` by name (docs/scale-out.md#the-execution-layer); a context manager.

    An :class:`Executor` instance is returned as is (the caller keeps ownership). ``workers``:
    processes of the local pool or of the ``LocalCluster`` (default: one per core). ``preload``:
    modules a Dask worker imports before its first task (the caller names what its tasks use;
    this package imports nothing of the engine).
    """
    if isinstance(executor, Executor):
        check_executor(executor, scheduler)
        return executor
    name = check_executor(executor, scheduler)
    if name == "local":
        return LocalExecutor()
    if name == "processes":
        return ProcessExecutor(workers)
    return DaskExecutor(scheduler, workers, preload)


def results_in_order(executor: Executor, fn: Callable[[Any, Any], Any], items: Sequence[Any],
                 shared: Any = None) -> list[Any]:
    """All results of :meth:`Executor.map_unordered`, in item order."""
    out: list[Any] = [None] * len(items)
    for i, r in executor.map_unordered(fn, items, shared):
        out[i] = r
    return out
