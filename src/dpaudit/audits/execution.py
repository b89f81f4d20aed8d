"""Where independent audit tasks run: in this process, in a local process pool, or on Dask.

One execution layer serves both levels of parallelism in dpaudit (issue 12):

* :func:`dpaudit.audit` sends *blocks of chunks of runs* of its test split
  (:mod:`dpaudit.audits.empirical`); each task gets the mechanism (by reference when it is
  importable, by value through cloudpickle otherwise), its inputs, the chosen events and the seed
  sequence of its chunks, and returns only counts and histogram counts, never outputs;
* ``dpaudit audit-claims`` sends *claims* (:mod:`dpaudit.cli`).

Three executors, chosen by name everywhere (Python API, ``--executor`` on the command line,
``--dp-executor`` in the pytest plugin):

``"local"`` (default)
    Tasks run one after the other in this process; nothing is started.
``"processes"``
    A pool of forked worker processes on this machine (:class:`ProcessExecutor`): ``workers``
    processes (default: the CPU count). A worker that dies takes only its task with it: the pool is
    rebuilt and the unfinished tasks are resubmitted, unchanged.
``"dask"``
    A Dask cluster (:class:`DaskExecutor`): ``scheduler=`` an address (``tcp://host:8786``) or a
    ``distributed.Client``; without one, ``DASK_SCHEDULER_ADDRESS`` from the environment; without
    that, a ``distributed.LocalCluster`` of one single-threaded worker process per core, started
    for the call and closed after it. Dask reschedules the task of a worker that dies (same
    arguments, so the same seeds and the same result); a lost scheduler raises
    :class:`ExecutionError`.

Every task is a pure function of its arguments (all randomness comes from seeds fixed before any
task is submitted), and results are combined by exact integer sums or in submission order, so the
result never depends on the executor, the number of workers or the order in which tasks finish.
"""

from __future__ import annotations

import abc
import logging
import multiprocessing
import os
import signal
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Callable, Iterator, Literal, Sequence

__all__ = ["EXECUTORS", "SCHEDULER_ENV", "ExecutorName", "Executor", "LocalExecutor",
           "ProcessExecutor", "DaskExecutor", "ExecutionError", "open_executor",
           "check_executor", "default_workers", "results_in_order"]

ExecutorName = Literal["local", "processes", "dask"]
#: The executor names accepted everywhere.
EXECUTORS: tuple[str, ...] = ("local", "processes", "dask")
#: Environment variable naming the Dask scheduler used by ``executor="dask"`` when no
#: ``scheduler`` is given (Dask's own convention).
SCHEDULER_ENV = "DASK_SCHEDULER_ADDRESS"
#: How many times a task is resubmitted after the worker running it died.
MAX_RETRIES = 3


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

def _worker_init() -> None:
    # Ctrl-C reaches the whole process group; the parent handles it and stops the workers.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # The parent's SIGTERM handler (the CLI's) must not be inherited: the parent stops workers
    # with SIGTERM.
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    # Workers start with SIGINT blocked (see ProcessExecutor._submit); a Ctrl-C that arrived before
    # the line above is pending and is now discarded by SIG_IGN instead of raising in start-up.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


_SHARED_CACHE: dict[bytes, Any] = {}


def _call_pickled(shared_blob: bytes, shared_key: bytes, fn_blob: bytes, item: Any) -> Any:
    """Worker side of :class:`ProcessExecutor`: unpickle (cached per map call) and run."""
    import cloudpickle

    shared = _SHARED_CACHE.get(shared_key)
    if shared is None:
        _SHARED_CACHE.clear()
        shared = cloudpickle.loads(shared_blob)
        _SHARED_CACHE[shared_key] = shared
    fn = cloudpickle.loads(fn_blob)
    return fn(shared, item)


def _pool_context() -> Any:
    # fork keeps the parent's state (claims registered at run time, imported modules).
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else "spawn")


class ProcessExecutor(Executor):
    """A pool of ``workers`` forked processes on this machine.

    ``fresh_process_per_task=True`` runs each task in a new process (what ``audit-claims`` uses:
    an audit's Hypothesis searches then never see state left by another claim). Functions and the
    shared payload are pickled with cloudpickle, so closures and lambdas work. A worker that dies
    (killed, out of memory) breaks the pool: it is rebuilt and every unfinished task resubmitted,
    each at most :data:`MAX_RETRIES` times.
    """

    name = "processes"

    def __init__(self, workers: int | None = None, *, fresh_process_per_task: bool = False) -> None:
        self._workers = default_workers() if workers is None else max(1, int(workers))
        self.fresh = fresh_process_per_task
        self._pool: ProcessPoolExecutor | None = None

    @property
    def workers(self) -> int:
        return self._workers

    def describe(self) -> str:
        return f"processes ({self._workers} worker processes on this machine)"

    def _new_pool(self, n_tasks: int) -> ProcessPoolExecutor:
        kwargs: dict[str, Any] = {}
        if self.fresh:
            kwargs["max_tasks_per_child"] = 1
        return ProcessPoolExecutor(max_workers=max(1, min(self._workers, n_tasks)),
                                   mp_context=_pool_context(), initializer=_worker_init, **kwargs)

    def _submit(self, pool: ProcessPoolExecutor, *args: Any) -> Future:
        # Block SIGINT while submitting: the pool's processes (and the management thread that
        # forks replacements) are created here and inherit the blocked mask, so a Ctrl-C during a
        # worker's start-up cannot print a traceback from it. The parent handles Ctrl-C.
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            return pool.submit(_call_pickled, *args)
        finally:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})

    def map_unordered(self, fn: Callable[[Any, Any], Any], items: Sequence[Any],
                      shared: Any = None) -> Iterator[tuple[int, Any]]:
        import hashlib

        import cloudpickle

        items = list(items)
        if not items:
            return
        shared_blob = cloudpickle.dumps(shared)
        shared_key = hashlib.sha256(shared_blob).digest()
        fn_blob = cloudpickle.dumps(fn)
        remaining = set(range(len(items)))
        attempts = [0] * len(items)
        while remaining:
            pool = self._new_pool(len(remaining))
            self._pool = pool
            futures: dict[Future, int] = {}
            broken = False
            try:
                for i in sorted(remaining):
                    attempts[i] += 1
                    futures[self._submit(pool, shared_blob, shared_key, fn_blob, items[i])] = i
                pending = set(futures)
                while pending:
                    done, pending = wait(pending, return_when=FIRST_COMPLETED)
                    for fut in sorted(done, key=lambda f: futures[f]):
                        i = futures[fut]
                        try:
                            result = fut.result()
                        except BrokenProcessPool:
                            broken = True
                            continue
                        remaining.discard(i)
                        yield i, result
                    if broken:
                        break
            finally:
                self._shutdown(pool)
            if broken:
                worst = max(attempts[i] for i in remaining)
                if worst > MAX_RETRIES:
                    raise ExecutionError(
                        f"a worker process died {worst} times while running the same task; "
                        f"{len(items) - len(remaining)} of {len(items)} tasks had finished")

    def _shutdown(self, pool: ProcessPoolExecutor) -> None:
        # Stop the workers at once (an interrupt, a broken pool, or the end of the map): running
        # tasks are not waited for. ProcessPoolExecutor has no public terminate before 3.14.
        procs = list(getattr(pool, "_processes", {}).values())
        pool.shutdown(wait=False, cancel_futures=True)
        for p in procs:
            if p.is_alive():
                p.terminate()
        for p in procs:
            p.join(timeout=5)
        if self._pool is pool:
            self._pool = None

    def close(self) -> None:
        if self._pool is not None:
            self._shutdown(self._pool)


# ------------------------------------------------------------------------------------------------
# Dask
# ------------------------------------------------------------------------------------------------

#: Seconds to wait when connecting to a Dask scheduler.
CONNECT_TIMEOUT = 30


class DaskExecutor(Executor):
    """Tasks on a Dask cluster (``distributed``).

    ``scheduler``: a ``distributed.Client`` (used as is, never closed here), an address
    (connected to for the executor's lifetime), or None: ``DASK_SCHEDULER_ADDRESS`` if set, else a
    ``LocalCluster`` of ``workers`` (default: one per core) single-threaded worker processes,
    started here and closed by :meth:`close`.
    """

    name = "dask"

    def __init__(self, scheduler: Any = None, workers: int | None = None) -> None:
        from distributed import Client, LocalCluster

        self._own_client = False
        self._cluster = None
        if scheduler is None:
            scheduler = os.environ.get(SCHEDULER_ENV) or None
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
        else:
            n = default_workers() if workers is None else max(1, int(workers))
            self._cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                                         dashboard_address=None, silence_logs=logging.ERROR,
                                         env={"OPENBLAS_NUM_THREADS": "1"})
            self.client = Client(self._cluster, set_as_default=False)
            self.address = str(self._cluster.scheduler_address)
            self._own_client = True

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
        finished = 0
        try:
            shared_future = self.client.scatter(shared, broadcast=False, hash=False)
            futures = self.client.map(fn, [shared_future] * len(items), items, pure=False,
                                      retries=MAX_RETRIES)
            index = {f.key: i for i, f in enumerate(futures)}
            for fut in as_completed(futures):
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
                  workers: int | None = None, fresh_process_per_task: bool = False) -> Executor:
    """An :class:`Executor` by name (see the module docstring); use it as a context manager.

    An :class:`Executor` instance is returned as is (the caller keeps ownership). ``workers``:
    processes of the local pool or of the ``LocalCluster`` (default: one per core).
    """
    if isinstance(executor, Executor):
        check_executor(executor, scheduler)
        return executor
    name = check_executor(executor, scheduler)
    if name == "local":
        return LocalExecutor()
    if name == "processes":
        return ProcessExecutor(workers, fresh_process_per_task=fresh_process_per_task)
    return DaskExecutor(scheduler, workers)


def results_in_order(executor: Executor, fn: Callable[[Any, Any], Any], items: Sequence[Any],
                 shared: Any = None) -> list[Any]:
    """All results of :meth:`Executor.map_unordered`, in item order."""
    out: list[Any] = [None] * len(items)
    for i, r in executor.map_unordered(fn, items, shared):
        out[i] = r
    return out
