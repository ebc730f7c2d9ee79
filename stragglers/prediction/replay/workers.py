"""Where the per-job replays run: local processes (default) or a Dask cluster.

``replay_batches`` streams the evaluable jobs from the warehouse in batches
(``jobstore.export_batch`` writes each batch to a Parquet file in the exchange
directory), submits one task per job to the engine, and hands every finished
job's results to ``on_job`` as they come. At most two batches are exported at
a time, so the client's memory does not grow with the number of jobs. Workers
read their job from the batch file themselves (``replay_exported_job``).
``replay_jobs`` runs jobs held in memory on the same engines (tests, benchmarks,
the protocol ablation).

Results do not depend on the engine or the number of workers: each job is
replayed by the same function with its own seed (``simulate.job_seed``) and
BLAS limited to one thread everywhere.

Engines:
- ``SerialEngine``: in this process (workers = 1).
- ``LocalEngine``: a pool of processes forked from a preloaded fork server (workers > 1).
- ``DaskEngine``: an existing ``distributed`` cluster (``dask_address``); a job
  whose worker dies is rescheduled by the Dask scheduler on another worker.

Cancellation (Ctrl-C, SIGTERM, the UI's Terminate: all arrive as an exception
in the thread that waits here): pending jobs are cancelled, the local pool's
processes are terminated (Dask futures are cancelled), batch files are
removed, and the exception propagates so the caller's transaction rolls back.
"""

from __future__ import annotations

import atexit
import os
import signal
import time
import uuid
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor
from concurrent.futures import wait as wait_futures
from dataclasses import dataclass
from multiprocessing import forkserver, get_context
from pathlib import Path
from typing import Any, Callable, Sequence

import duckdb
import pandas as pd
from threadpoolctl import threadpool_limits

from stragglers.prediction.replay.jobstore import batches, export_batch, read_job
from stragglers.prediction.replay.simulate import JobData, JobResult, MethodFactory, replay_job
from stragglers.settings import EngineSettings, SettingError


# ----------------------------------------------------------------- the work of one job

def replay_methods(job: JobData, factories: Sequence[MethodFactory], seed: int) -> list[JobResult]:
    """Every method replayed on ``job`` (runs on a worker, or in this process). One BLAS/OpenMP
    thread, in this process too: a multi-threaded BLAS on 15-column problems costs 2-3x the CPU
    time on a loaded machine (docs/BENCHMARKS.md)."""
    with threadpool_limits(1):
        return [replay_job(job, f(), seed) for f in factories]


def replay_exported_job(path: str, job_id: int, tau_s: float, n_tasks: int, features: Sequence[str],
                        factories: Sequence[MethodFactory], seed: int,
                        prepare: Callable[[JobData], JobData] | None = None) -> list[JobResult]:
    """Read one job from its batch file and replay every method on it (runs on a worker).
    ``prepare`` (picklable) adapts the job to another evaluation protocol first."""
    job = read_job(path, job_id, tau_s, n_tasks, features)
    if prepare is not None:
        job = prepare(job)
    return replay_methods(job, factories, seed)


# ----------------------------------------------------------------- engines

class _Deferred:
    """A job to run in this process when the serial engine is waited on."""

    def __init__(self, fn, args):
        self.fn, self.args, self.value, self.ran = fn, args, None, False

    def run(self) -> None:
        self.value, self.ran = self.fn(*self.args), True

    def result(self):
        return self.value


class SerialEngine:
    description = "this process"
    workers = 1

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        pass

    def submit(self, fn, *args, key: str, priority: int = 0) -> _Deferred:
        return _Deferred(fn, args)

    def wait(self, futures: Sequence[_Deferred], timeout: float) -> list[_Deferred]:
        for f in futures:
            if not f.ran:
                f.run()
                return [f]
        return []

    def cancel(self, futures) -> None:
        pass


_THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


# Imported once by the fork server; every worker is forked from it with these modules loaded.
# A spawned worker imported them itself: ~1.6 CPU s per worker, a fifth of NURD's whole replay of
# the embedded trace (docs/BENCHMARKS.md). The fork server is a fresh single-threaded process
# (unlike this one: DuckDB, Dagster threads), so forking it is safe. It starts with the first pool and
# serves every later one in this process (its start, ~3 s of imports, was paid again by each evaluation:
# 14 times in command 1); it is stopped and reaped at exit (or at once on cancellation), so the workers'
# CPU time counts in this process's RUSAGE_CHILDREN (benchmarks/timings.py).
WORKER_PRELOAD = ("stragglers.prediction.replay.workers", "stragglers.prediction.methods", "xgboost",
                  "sklearn.linear_model")


class _SharedForkServer:
    """The fork server the local pools of this process share (``LocalEngine``)."""

    started_here = False
    exit_hook_registered = False

    @classmethod
    def start_here(cls) -> None:
        """Mark the fork server about to start as this process's, stopped at exit."""
        cls.started_here = True
        if not cls.exit_hook_registered:
            atexit.register(cls.stop)
            cls.exit_hook_registered = True

    @classmethod
    def stop(cls, kill_workers: bool = False) -> None:
        """Stop the fork server this process started and wait for it (it has reaped the workers).
        It exits once every worker has (each holds its "alive" pipe), so on cancellation its
        remaining children are killed first: a worker forked while the signal arrived inside
        ``submit`` is not in the pool's list and would otherwise keep it, and this wait, alive."""
        if not cls.started_here:
            return
        cls.started_here = False
        server = forkserver._forkserver
        if kill_workers and server._forkserver_pid is not None:
            pid = server._forkserver_pid
            try:
                children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
            except OSError:
                children = []
            for child in children:
                try:
                    os.kill(int(child), signal.SIGKILL)
                except ProcessLookupError:
                    pass
        if server._forkserver_pid is not None:
            server._stop()   # no public API; exists in CPython 3.8-3.13


class LocalEngine:
    """Worker processes forked from a fork server (``WORKER_PRELOAD``), each model single-threaded."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self.description = f"local pool of {workers} processes"
        self.pool: ProcessPoolExecutor | None = None

    def __enter__(self):
        # Inherited by the spawned workers. Kept until the pool is shut down: the executor spawns
        # its processes on demand at submit time, not here (restoring the variables at once gave
        # the workers multi-threaded BLAS: 6x the CPU time under load).
        self._saved_env = {k: os.environ.get(k) for k in _THREAD_VARS}
        os.environ.update({k: "1" for k in _THREAD_VARS})
        # the fork server starts with the first pool, with these variables set, and serves the later ones
        context = get_context("forkserver")
        context.set_forkserver_preload(list(WORKER_PRELOAD))
        if forkserver._forkserver._forkserver_pid is None:
            _SharedForkServer.start_here()
        # start it now (non-blocking): its imports overlap the caller's first batch export
        forkserver.ensure_running()
        self.pool = ProcessPoolExecutor(max_workers=self.workers, mp_context=context)
        return self

    def _restore_env(self) -> None:
        for k, v in getattr(self, "_saved_env", {}).items():
            os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)
        self._saved_env = {}

    def submit(self, fn, *args, key: str, priority: int = 0) -> Future:
        return self.pool.submit(fn, *args)

    def wait(self, futures: Sequence[Future], timeout: float) -> list[Future]:
        return list(wait_futures(futures, timeout=timeout, return_when=FIRST_COMPLETED).done)

    def cancel(self, futures) -> None:
        """Drop queued jobs and stop the workers now (a running fit cannot be interrupted otherwise)."""
        pool, self.pool = self.pool, None
        if pool is None:
            return
        processes = list((pool._processes or {}).values())   # no public API to terminate the workers
        pool.shutdown(wait=False, cancel_futures=True)
        for p in processes:
            p.terminate()
        for p in processes:
            p.join(timeout=5)
            if p.is_alive():
                p.kill()
        _SharedForkServer.stop(kill_workers=True)
        self._restore_env()

    def __exit__(self, *exc) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True)
            self.pool = None
        self._restore_env()


class DaskEngine:
    """Tasks on an existing Dask cluster; the client connects for the duration of the evaluation."""

    def __init__(self, address: str) -> None:
        self.address = address
        self.client = None
        self.workers = 0
        self.description = f"dask cluster at {address}"

    def __enter__(self):
        try:
            from distributed import Client
        except ImportError as e:   # pragma: no cover - dask is a dependency
            raise SettingError("NURD_DASK_ADDRESS is set but the 'distributed' package is not installed "
                               "(pip install 'dask[distributed]')") from e
        try:
            self.client = Client(self.address, timeout="20s", set_as_default=False)
        except OSError as e:
            raise SettingError(f"setting NURD_DASK_ADDRESS={self.address!r}: cannot connect to a Dask "
                               f"scheduler there ({e}); start one (README, 'Run on a cluster') or unset it "
                               f"to run on local processes") from e
        info = self.client.scheduler_info()
        self.workers = len(info.get("workers", {}))
        threads = sum(w.get("nthreads", 0) for w in info.get("workers", {}).values())
        self.description = f"dask cluster at {self.address} ({self.workers} workers, {threads} threads)"
        return self

    def submit(self, fn, *args, key: str, priority: int = 0):
        return self.client.submit(fn, *args, key=key, priority=priority, pure=False)

    def wait(self, futures, timeout: float) -> list:
        # polled: distributed.wait needs a default client, and this one is not made the default
        deadline = time.monotonic() + timeout
        while True:
            done = [f for f in futures if f.done()]
            if done or time.monotonic() >= deadline:
                return done
            time.sleep(0.05)

    def cancel(self, futures) -> None:
        if self.client is not None and futures:
            self.client.cancel(list(futures), force=True)

    def __exit__(self, *exc) -> None:
        if self.client is not None:
            self.client.close(timeout=10)
            self.client = None


def replay_jobs(jobs: Sequence[JobData], factories: Sequence[MethodFactory], *, seed: int = 0,
                workers: int = 1, progress: Callable[[int, int], None] | None = None) -> list[JobResult]:
    """Replay every job (held in memory) with every method; results in job order whatever ``workers`` is.

    Factories must be picklable (module-level callables or functools.partial)
    when workers > 1. The assets stream jobs from the warehouse instead
    (``replay_batches``); this is for in-memory jobs (tests, benchmarks, the protocol ablation).
    """
    engine = LocalEngine(workers) if workers > 1 and len(jobs) > 1 else SerialEngine()
    per_job: list[list[JobResult]] = [[] for _ in jobs]
    with engine:
        # biggest jobs first keeps every worker busy; results keep the job order
        order = sorted(range(len(jobs)), key=lambda i: -jobs[i].X.size)
        pending = {engine.submit(replay_methods, jobs[i], list(factories), seed, key=str(i)): i for i in order}
        try:
            while pending:
                for fut in engine.wait(list(pending), timeout=1.0):
                    per_job[pending.pop(fut)] = fut.result()
                    if progress:
                        progress(len(jobs) - len(pending), len(jobs))
        except BaseException:
            engine.cancel(list(pending))
            raise
    return [r for rs in per_job for r in rs]


def open_engine(settings: EngineSettings, workers: int):
    if settings.dask_address:
        return DaskEngine(settings.dask_address)
    return LocalEngine(workers) if workers > 1 else SerialEngine()


# ----------------------------------------------------------------- the driver

@dataclass
class ReplayStats:
    engine: str
    n_jobs: int
    n_batches: int
    seconds: float


def _for_job(prepare, job_id: int):
    """What a worker needs of ``prepare`` for one job: a prepare holding per-job data (every job's
    history or usage latencies) ships only that job's with the job (``for_job``), not all of them
    with every job."""
    return prepare.for_job(job_id) if hasattr(prepare, "for_job") else prepare


def replay_batches(con: duckdb.DuckDBPyConnection, trace: str, jobs: pd.DataFrame,
                   factories: Sequence[MethodFactory], *, features: Sequence[str], seed: int,
                   workers: int, settings: EngineSettings, exchange: Path,
                   on_job: Callable[[list[JobResult]], None],
                   progress: Callable[[int, int], None] | None = None,
                   poll_s: float = 1.0, prepare: Callable[[JobData], JobData] | None = None,
                   features_table: str = "checkpoint_features") -> ReplayStats:
    """Replay ``factories`` on every job of ``jobs`` (evaluable_jobs rows); ``on_job`` gets each
    finished job's results (in completion order); ``progress(done, total)`` is called at least
    every ``poll_s`` seconds."""
    started = time.perf_counter()
    parts = batches(jobs, settings.batch_jobs)
    run = uuid.uuid4().hex[:8]
    total, done, next_b = len(jobs), 0, 0
    pending: dict[Any, int] = {}          # future -> batch index
    files: dict[int, list] = {}           # batch index -> [path, jobs left]
    engine = open_engine(settings, workers)
    with engine:
        try:
            while next_b < len(parts) or pending:
                # two batches exported ahead: workers never wait for the export, memory stays bounded
                while next_b < len(parts) and len(files) < 2:
                    part = parts[next_b]
                    path = export_batch(con, trace, features, part["job_id"].tolist(), exchange, features_table)
                    files[next_b] = [path, len(part)]
                    # biggest jobs first keeps every worker busy until the end of the batch
                    order = part.assign(size=part.n_tasks * part.n_cp).sort_values(
                        ["size", "job_id"], ascending=[False, True])
                    for row in order.itertuples(index=False):
                        fut = engine.submit(replay_exported_job, str(path), int(row.job_id), float(row.tau_s),
                                            int(row.n_tasks), tuple(features), list(factories), seed,
                                            _for_job(prepare, int(row.job_id)),
                                            key=f"replay-{trace}-{int(row.job_id)}-{run}", priority=-next_b)
                        pending[fut] = next_b
                    next_b += 1
                for fut in engine.wait(list(pending), timeout=poll_s):
                    b = pending.pop(fut)
                    on_job(fut.result())
                    done += 1
                    files[b][1] -= 1
                    if files[b][1] == 0:
                        Path(files.pop(b)[0]).unlink(missing_ok=True)
                if progress:
                    progress(done, total)
        except BaseException:
            engine.cancel(list(pending))
            raise
        finally:
            for path, _ in files.values():
                Path(path).unlink(missing_ok=True)
    return ReplayStats(engine.description, total, len(parts), time.perf_counter() - started)


class ProgressLog:
    """A ``progress`` callback that logs jobs done / total, the methods and the time left,
    at most every ``every_s`` seconds, and once at the end."""

    def __init__(self, log: Callable[[str], None], methods: Sequence[str], every_s: float = 10.0) -> None:
        self.log, self.methods, self.every_s = log, ", ".join(methods), every_s
        self.started = time.perf_counter()
        self.last = self.started
        self.lines = 0

    def __call__(self, done: int, total: int) -> None:
        now = time.perf_counter()
        if self.lines and done < total and now - self.last < self.every_s:
            return
        if done == total and self.lines and self.last_done == total:
            return
        self.last, self.last_done = now, done
        self.lines += 1
        elapsed = now - self.started
        eta = f"{elapsed / done * (total - done):.0f} s left" if done else "time left unknown yet"
        self.log(f"replayed {done}/{total} jobs ({100 * done / max(total, 1):.0f}%) of [{self.methods}] "
                 f"in {elapsed:.0f} s; {eta}")

    last_done = -1


def peak_rss_mb() -> float:
    """This process's peak RSS (VmHWM; ru_maxrss would carry a parent's peak over fork + exec)."""
    import resource
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
