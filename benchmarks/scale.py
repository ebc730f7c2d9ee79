"""Full-trace scale: memory vs number of jobs, engines' wall times, per-method cost and projection.

    python -m benchmarks.scale memory [--replicas 1 4 16] [--method hbos]
    python -m benchmarks.scale engines [--method nurd]
    python -m benchmarks.scale cost [--jobs 6]
    python -m benchmarks.scale profile

All on the embedded synthetic trace's warehouse (generate_google seed 2011, 48 jobs,
8 parts, default settings; built once under --work-dir by benchmarks/evaluate.py's
``embedded_warehouse``): 41 evaluable jobs of 93-1456 tasks, 4-24 checkpoints.

- memory: the warehouse's jobs replicated R times under new job ids (same job
  sizes, R x the jobs), ``evaluate`` in a fresh process per R (one worker in
  process, batches of --batch-jobs, DuckDB memory_limit --memory-limit as the
  assets set it), peak RSS of that process (VmHWM), and
  for contrast the peak RSS of holding every job in memory (``load_jobs``).
- engines: ``evaluate`` of --method on the 41 jobs in this process (workers=1),
  the local pool (workers=2), and a loopback ``distributed.LocalCluster``
  (127.0.0.1, TCP, worker processes of one thread) with 1 and 2 workers; wall
  times, results checked identical.
- cost: CPU seconds per job of every method (one process, after a warm-up job)
  on --jobs jobs drawn at random (seeded) from the 41, and the projected
  CPU-hours for the paper's 8,425 Google jobs at that mean cost.
- profile: CPU milliseconds per checkpoint of NURD's replay (cProfile, process
  time) on the 5 smallest embedded jobs, by component, with the XGBoost
  scikit-learn wrapper (before) and the direct booster (now).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

PAPER_JOBS = 8425


def warehouse(work: Path) -> Path:
    from benchmarks.evaluate import embedded_warehouse
    db, _ = embedded_warehouse(work)
    return Path(db)


def replicate(base: Path, dest: Path, r: int) -> Path:
    """A warehouse holding ``base``'s jobs ``r`` times (job ids + i * 10^9)."""
    import duckdb
    if dest.exists():
        dest.unlink()
    with duckdb.connect(str(dest)) as con:
        con.execute(f"ATTACH '{base}' AS base (READ_ONLY)")
        for table in ("tasks", "job_checkpoints", "checkpoint_features"):
            # ordered by job like the pipeline's tables (checkpoint_features.sql ends ORDER BY job_id, k, task_id)
            order = {"tasks": "job_id, task_id", "job_checkpoints": "job_id, k",
                     "checkpoint_features": "job_id, k, task_id"}[table]
            con.execute(f"""CREATE TABLE {table} AS SELECT * REPLACE (job_id + i * 1000000000 AS job_id)
                            FROM base.{table}, range({r}) AS rep(i) ORDER BY {order}""")
        con.execute("CREATE TABLE table_settings AS SELECT * FROM base.table_settings")
    return dest


def _child_memory(db: str, method: str, batch_jobs: int, mode: str, memory_limit: str) -> None:
    import duckdb
    from stragglers.prediction.evaluation.run import evaluate, load_jobs
    from stragglers.settings import EngineSettings, EvaluationSettings
    settings = EvaluationSettings(workers=1, n_boot=50)
    started = time.perf_counter()
    with duckdb.connect(db) as con:
        con.execute(f"SET memory_limit = '{memory_limit}'")     # as the assets do (NURD_DUCKDB_MEMORY_LIMIT)
        if mode == "all_in_memory":
            jobs, _ = load_jobs(con, "synthetic", settings)
            n = len(jobs)
        else:
            n = evaluate(con, "synthetic", [method], settings, engine=EngineSettings(batch_jobs=batch_jobs)).n_jobs
    print(json.dumps({"jobs": n, "seconds": time.perf_counter() - started, "peak_rss_mb": peak_rss_mb()}))


def peak_rss_mb() -> float:
    """This process's peak RSS. VmHWM, not ru_maxrss: Linux carries ru_maxrss over fork + exec, so a
    child would report its parent's peak (here the parent builds the replicated warehouse)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def memory(work: Path, replicas: list[int], method: str, batch_jobs: int, memory_limit: str) -> list[dict]:
    base = warehouse(work)
    rows = []
    for r in replicas:
        db = replicate(base, work / f"replicated_{r}.duckdb", r)
        row = {"replicas": r}
        for mode in ("evaluate", "all_in_memory"):
            out = subprocess.run([sys.executable, "-m", "benchmarks.scale", "_child_memory", str(db), method,
                                  str(batch_jobs), mode, memory_limit],
                                 check=True, capture_output=True, text=True).stdout
            m = json.loads(out.strip().splitlines()[-1])
            row |= {f"{mode}_{k}": v for k, v in m.items()}
        print(json.dumps(row), flush=True)
        rows.append(row)
        db.unlink()
    return rows


def loopback_cluster(workers: int):
    """A Dask cluster on this machine as a real one is reached: ``workers`` worker processes of one
    thread, TCP on 127.0.0.1, no dashboard (benchmarks/month_methods.py uses it too)."""
    from distributed import LocalCluster
    return LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                        protocol="tcp", dashboard_address=None)


def engines(work: Path, method: str, batch_jobs: int, replicas: int = 1, repeats: int = 1) -> list[dict]:
    """Every engine once per repeat (the engines interleaved, so a change of the machine's load
    hits all of them), on the 41 jobs replicated ``replicas`` times."""
    import duckdb
    import shutil
    from stragglers.prediction.evaluation.run import evaluate
    from stragglers.settings import EngineSettings, EvaluationSettings
    base = warehouse(work)
    if replicas > 1:
        base = replicate(base, work / f"replicated_{replicas}.duckdb", replicas)
    rows, reference = [], None
    runs = [("this process (workers=1)", 1, None), ("local pool (workers=2)", 2, None),
            ("Dask LocalCluster, 1 worker", 1, 1), ("Dask LocalCluster, 2 workers", 1, 2)]
    for repeat, (label, workers, dask_workers) in [(i, r) for i in range(repeats) for r in runs]:
        db = work / "engines.duckdb"
        shutil.copy(base, db)
        cluster = None
        if dask_workers:
            cluster = loopback_cluster(dask_workers)
        try:
            engine = EngineSettings(batch_jobs=batch_jobs, dask_address=cluster.scheduler_address if cluster else "")
            c0 = os.times()
            started = time.perf_counter()
            with duckdb.connect(str(db)) as con:
                out = evaluate(con, "synthetic", [method], EvaluationSettings(workers=workers, n_boot=50),
                               engine=engine, exchange=work / "exchange")
                pred = con.execute("SELECT method, job_id, task_id, flagged_at_s FROM predictions "
                                   "ORDER BY ALL").df()
            wall = time.perf_counter() - started
        finally:
            if cluster:
                cluster.close()
        same = reference is None or pred.equals(reference)
        reference = pred if reference is None else reference
        row = {"engine": label, "repeat": repeat, "jobs": out.n_jobs, "wall_s": wall, "replay_s": out.replay.seconds,
               "identical_to_first": bool(same), "load": " ".join(f"{x:.1f}" for x in os.getloadavg())}
        print(json.dumps(row), flush=True)
        rows.append(row)
    return rows


def cost(work: Path, n_jobs: int, methods: list[str]) -> list[dict]:
    import duckdb
    from threadpoolctl import threadpool_limits
    from stragglers.prediction.evaluation.run import load_jobs, method_factory
    from stragglers.prediction.replay.simulate import replay_job
    from stragglers.settings import EvaluationSettings
    base = warehouse(work)
    with duckdb.connect(str(base), read_only=True) as con:
        jobs, _ = load_jobs(con, "synthetic", EvaluationSettings(workers=1))
    rng = np.random.default_rng(0)
    sample = [jobs[i] for i in sorted(rng.choice(len(jobs), size=min(n_jobs, len(jobs)), replace=False))]
    print("sample (tasks x checkpoints): " + ", ".join(f"{len(j.task_ids)}x{len(j.checkpoints)}" for j in sample),
          flush=True)
    rows = []
    with threadpool_limits(1):
        for m in methods:
            factory = method_factory(m, EvaluationSettings(workers=1))
            replay_job(sample[0], factory())           # warm-up: imports, numba compilation
            c0 = time.process_time()
            for job in sample:
                replay_job(job, factory())
            per_job = (time.process_time() - c0) / len(sample)
            row = {"method": m, "cpu_s_per_job": per_job, "cpu_hours_8425": per_job * PAPER_JOBS / 3600}
            print(json.dumps(row), flush=True)
            rows.append(row)
    return rows


def profile(work: Path, rounds: int = 3) -> list[dict]:
    """CPU time per checkpoint of NURD's replay on the smallest embedded jobs, split by component."""
    import cProfile
    import pstats
    import duckdb
    from threadpoolctl import threadpool_limits
    from stragglers.prediction.evaluation.run import load_jobs
    from stragglers.prediction.methods import nurd as nurd_module
    from stragglers.prediction.replay.simulate import replay_job
    from stragglers.settings import EvaluationSettings
    base = warehouse(work)
    with duckdb.connect(str(base), read_only=True) as con:
        jobs, _ = load_jobs(con, "synthetic", EvaluationSettings(workers=1))
    small = sorted(jobs, key=lambda j: len(j.task_ids))[:5]
    n_cp = sum(len(j.checkpoints) - 1 for j in small) * rounds
    rows = []
    for label, direct in (("XGBRegressor.fit (before)", False), ("BoosterFit (now)", True)):
        saved = nurd_module.BoosterFit
        if not direct:
            nurd_module.BoosterFit = lambda model: model            # the wrapper, as before this change
        try:
            with threadpool_limits(1):
                replay_job(small[0], nurd_module.NurdFamily())
                prof = cProfile.Profile(timer=time.process_time)
                prof.enable()
                for _ in range(rounds):
                    for job in small:
                        replay_job(job, nurd_module.NurdFamily())
                prof.disable()
        finally:
            nurd_module.BoosterFit = saved
        st = pstats.Stats(prof)
        total = st.total_tt
        def cum(pattern: str) -> float:
            """Cumulative seconds of the outermost function matching file:name."""
            return max([v[3] for k, v in st.stats.items() if f"{k[0]}:{k[2]}".endswith(pattern)] or [0.0])
        nurd_fit, logreg = cum("nurd.py:fit"), cum("_logistic.py:fit")
        row = {"variant": label, "jobs": [f"{len(j.task_ids)}x{len(j.checkpoints)}" for j in small],
               "ms_per_checkpoint": 1e3 * total / n_cp,
               "regressor_fit_ms": 1e3 * (nurd_fit - logreg) / n_cp,
               "of_which_boosting_rounds_ms": 1e3 * cum("core.py:update") / n_cp,
               "logistic_regression_ms": 1e3 * logreg / n_cp,
               "flag_ms": 1e3 * cum("nurd.py:flag") / n_cp,
               "rest_of_replay_ms": 1e3 * (total - nurd_fit - cum("nurd.py:flag")) / n_cp}
        print(json.dumps(row), flush=True)
        rows.append(row)
    return rows


def main(argv=None) -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "_child_memory":
        _child_memory(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5], sys.argv[6])
        return 0
    from stragglers.prediction.methods import BASELINES
    ap = argparse.ArgumentParser(prog="python -m benchmarks.scale",
                                 description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=["memory", "engines", "cost", "profile"])
    ap.add_argument("--work-dir", type=Path, default=Path("/tmp/nurd-bench-eval"))
    ap.add_argument("--replicas", type=int, nargs="*", default=[1, 4, 16])
    ap.add_argument("--method", default=None)
    ap.add_argument("--batch-jobs", type=int, default=50)
    ap.add_argument("--repeats", type=int, default=1, help="engines: runs of every engine (interleaved)")
    ap.add_argument("--jobs", type=int, default=6)
    ap.add_argument("--memory-limit", default="300MB", help="DuckDB's buffer limit in the memory runs")
    ap.add_argument("--methods", nargs="*", default=None)
    a = ap.parse_args(argv)
    work = a.work_dir.resolve()
    work.mkdir(parents=True, exist_ok=True)
    print(f"{time.strftime('%Y-%m-%d %H:%M:%S')}, {os.cpu_count()} cores, load "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}", flush=True)
    if a.what == "memory":
        rows = memory(work, a.replicas, a.method or "pca", a.batch_jobs, a.memory_limit)
    elif a.what == "engines":
        rows = engines(work, a.method or "nurd", a.batch_jobs, a.replicas[0] if a.replicas else 1, a.repeats)
    elif a.what == "profile":
        rows = profile(work)
    else:
        rows = cost(work, a.jobs, a.methods or ["nurd", *sorted(BASELINES)])
    (work / f"scale_{a.what}.json").write_text(json.dumps(rows, indent=1))
    print(f"done, load {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
