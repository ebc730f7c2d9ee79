"""Every method on the month's jobs: seconds per job per method, 1 -> 2 workers, a loopback Dask
cluster, and the month's whole baseline range projected to 16 workers.

The month of benchmarks/month.py is ``copies`` consecutive copies of the real excerpt (task_events
and job_events parts 0-13, 19.65 h each; stragglers/traces/synth/tiled.py): its jobs are the
excerpt's jobs 36 times over (same tasks, shifted in time, on the same machines). So the jobs of
ONE copy are the sample here: built through the pipeline's own functions (selection, features of
both clocks) from the tiled copy, then ``--jobs`` of its evaluable jobs drawn at random (``--seed``)
are kept (every other job's rows deleted from a copy of the warehouse).

Each engine evaluates every method (``--methods``, default all) under both views (the configured
protocol and the operator's: stragglers.prediction.replay.protocol.both_views), in one ``evaluate`` call
per view, on a fresh copy of the sample warehouse: this process (workers=1), the local pool
(workers=2), and a loopback ``distributed.LocalCluster`` (127.0.0.1, TCP, 2 worker processes of one
thread). Seconds per job per method: the median over the sample of job_metrics' ``seconds`` (each
job's replay, per variant) in the 1-worker run (a median: a fresh worker's first job also pays
imports and compilation). Projection (said to be one): the month's evaluable jobs = 36 x this
copy's; wall on 16 workers = s per job on 1 worker (the sum of the medians, both views) x the
month's jobs / (16 x e), e = the 1 -> 2 worker efficiency measured here (wall_1 / (2 wall_2),
warm-ups included on both sides), assumed to hold to 16 workers.

    python -m benchmarks.month_methods --work DIR [--jobs 8] [--seed 0] [--methods hbos,nurd]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import time
from pathlib import Path

import duckdb
import numpy as np

from benchmarks.scale import loopback_cluster
from stragglers.prediction.evaluation.run import evaluate, selected_jobs
from stragglers.prediction.methods import METHODS
from stragglers.settings.protocols import both_views, is_operator
from stragglers.settings import EngineSettings, EvaluationSettings, SelectionSettings
from stragglers.traces.synth.tiled import tile
from stragglers.warehouse import storage
from stragglers.warehouse.assemble import build_warehouse

TRACE = "google_2011"
SPAN_US = 70_740 * 1_000_000   # task_events parts 0-13 of the real trace: 19.65 h
PARTS = 14
MONTH_COPIES = 36
#: The tables that hold rows per job for the evaluation (the rest are not read by it).
PER_JOB_TABLES = ("jobs", "tasks", "job_checkpoints", "checkpoint_features", "operator_checkpoints",
                  "operator_checkpoint_features", "event_features", "operator_event_features")


def one_copy_warehouse(realdata: Path, work: Path) -> Path:
    """Selection and features (both clocks) of one tiled copy of the excerpt, built once."""
    db = work / "one_copy.duckdb"
    done = work / "one_copy.built"
    if done.exists():
        return db
    raw = work / "tiled_1" / TRACE
    tile(realdata / TRACE, raw, 1, PARTS, SPAN_US)
    db.unlink(missing_ok=True)
    s = SelectionSettings(trace=TRACE)
    with duckdb.connect(str(db)) as con:
        storage.configure(con, memory_limit="4GB", temp_directory=str(work / "duckdb_tmp"))
        build_warehouse(con, raw, s)
    done.touch()
    return db


def sample_warehouse(base: Path, dest: Path, n_jobs: int, seed: int) -> tuple[list[int], int]:
    """A copy of ``base`` with ``n_jobs`` of its evaluable jobs (both views), drawn with ``seed``;
    and how many evaluable jobs ``base`` has (the paper's view)."""
    shutil.copy(base, dest)
    with duckdb.connect(str(dest)) as con:
        paper, operator = both_views(EvaluationSettings(workers=1))
        jobs = selected_jobs(con, TRACE, paper)[0]["job_id"].tolist()
        evaluable = set(jobs) & set(selected_jobs(con, TRACE, operator)[0]["job_id"].tolist())
        pool = sorted(evaluable)
        chosen = sorted(int(j) for j in np.random.default_rng(seed).choice(pool, size=min(n_jobs, len(pool)),
                                                                           replace=False))
        keep = ", ".join(map(str, chosen))
        for table in PER_JOB_TABLES:
            con.execute(f"DELETE FROM {table} WHERE trace = ? AND job_id NOT IN ({keep})", [TRACE])
    return chosen, len(jobs)


def run_engine(sample: Path, work: Path, label: str, methods: list[str], workers: int,
               dask_workers: int | None) -> dict:
    """Both views of every method on a fresh copy of the sample, on one engine: wall seconds."""
    db = work / "engine.duckdb"
    shutil.copy(sample, db)
    cluster = loopback_cluster(dask_workers) if dask_workers else None
    row = {"engine": label, "load_before": " ".join(f"{x:.1f}" for x in os.getloadavg())}
    try:
        engine = EngineSettings(dask_address=cluster.scheduler_address if cluster else "")
        with duckdb.connect(str(db)) as con:
            for view in both_views(EvaluationSettings(workers=workers)):
                name = "operator" if is_operator(view) else "paper"
                started = time.perf_counter()
                out = evaluate(con, TRACE, methods, view, engine=engine, exchange=work / "exchange")
                row[f"{name}_s"] = time.perf_counter() - started
                row["jobs"] = out.n_jobs
                metrics = "operator_job_metrics" if name == "operator" else "job_metrics"
                row[f"{name}_per_method"] = dict(con.execute(
                    f"SELECT method, median(seconds) FROM {metrics} WHERE trace = ? GROUP BY method ORDER BY method",
                    [TRACE]).fetchall())
    finally:
        if cluster:
            cluster.close()
    row["wall_s"] = row["paper_s"] + row["operator_s"]
    row["load_after"] = " ".join(f"{x:.1f}" for x in os.getloadavg())
    return row


def report(rows: list[dict], chosen: list[int], evaluable: int) -> str:
    one = next(r for r in rows if r["engine"] == "this process (workers=1)")
    two = next(r for r in rows if r["engine"] == "local pool (workers=2)")
    jobs = one["jobs"]
    out = [f"sample: {jobs} jobs of one copy's {evaluable} evaluable jobs: {chosen}", "",
           "| engine | jobs | paper view s | operator view s | both views s | s per job | load before / after |",
           "|---|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        out.append(f"| {r['engine']} | {r['jobs']} | {r['paper_s']:.1f} | {r['operator_s']:.1f} | {r['wall_s']:.1f} "
                   f"| {r['wall_s'] / r['jobs']:.2f} | {r['load_before']} / {r['load_after']} |")
    efficiency = one["wall_s"] / (2 * two["wall_s"])
    month_jobs = MONTH_COPIES * evaluable
    per_job = sum(one["paper_per_method"].values()) + sum(one["operator_per_method"].values())
    projected_h = per_job * month_jobs / (16 * efficiency) / 3600
    out += ["", f"1 -> 2 workers: {one['wall_s'] / two['wall_s']:.2f}x faster (efficiency e = {efficiency:.2f})",
            f"projection (not a measurement): {month_jobs:,} evaluable jobs in the month (36 x {evaluable}) x "
            f"{per_job:.2f} s per job on 1 worker (sum of the medians below) / (16 workers x e = {efficiency:.2f}) = {projected_h:.2f} h "
            f"(target 1 h: {'met' if projected_h <= 1 else 'missed'})", "",
            "| method (variant) | median s per job, paper view | median s per job, operator view |", "|---|---:|---:|"]
    for m in sorted(one["paper_per_method"]):
        out.append(f"| {m} | {one['paper_per_method'][m]:.3f} | {one['operator_per_method'].get(m, float('nan')):.3f} |")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.month_methods",
                                 description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--realdata", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "realdata")
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--jobs", type=int, default=8)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    if not (args.realdata / TRACE / "task_events").is_dir():
        raise SystemExit(f"the real excerpt is absent: {args.realdata / TRACE} (set --realdata)")
    args.work.mkdir(parents=True, exist_ok=True)
    methods = args.methods.split(",")
    started = time.perf_counter()
    base = one_copy_warehouse(args.realdata, args.work)
    print(json.dumps({"one_copy_warehouse_s": round(time.perf_counter() - started, 1)}), flush=True)
    chosen, evaluable = sample_warehouse(base, args.work / "sample.duckdb", args.jobs, args.seed)
    rows = []
    for label, workers, dask_workers in (("this process (workers=1)", 1, None), ("local pool (workers=2)", 2, None),
                                         ("Dask LocalCluster, 2 workers (127.0.0.1)", 1, 2)):
        rows.append(run_engine(args.work / "sample.duckdb", args.work, label, methods, workers, dask_workers))
        print(json.dumps(rows[-1]), flush=True)
        if args.json:
            args.json.write_text(json.dumps({"chosen": chosen, "evaluable": evaluable, "rows": rows}, indent=1))
    print()
    print(report(rows, chosen, evaluable))


if __name__ == "__main__":
    main()
