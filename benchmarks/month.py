"""The whole events-only month on one machine: what each step of the pipeline costs, measured in ONE run.

The trace: ``--copies`` consecutive copies of the real excerpt's events (task_events and
job_events parts 0-13 = 19.65 h; stragglers/traces/synth/tiled.py), written as gzip CSV parts
as a mirror holds them; 36 copies = 504 parts of task_events, about the month's 500.
Each step runs in a fresh process through the pipeline's own functions (the ones the assets
call), under the DuckDB memory limit and spill directory the pipeline configures
(stragglers.warehouse.storage.configure); its peak RSS is that process's VmHWM. The baseline,
measured in the same run on the same files: one gzip scan of task_events and job_events
reading every row's key and time.

    python -m benchmarks.month --copies 10 [--memory-limit 4GB] [--work DIR] [--keep]

Prints one JSON line per step, then a markdown table (docs/BENCHMARKS.md, "The month").
"""

from __future__ import annotations

import argparse
import json
import logging
import multiprocessing as mp
import shutil
import tempfile
import time
from pathlib import Path

import duckdb

from stragglers.settings import Settings, SelectionSettings
from stragglers.traces.synth.tiled import tile
from stragglers.warehouse import build, runner, sql_files, staging, storage
from stragglers.warehouse.assemble import build_warehouse

SPAN_US = 70_740 * 1_000_000   # task_events parts 0-13 of the real trace: 19.65 h
PARTS = 14
# the asset checkpoint_features builds job_checkpoints through operator_checkpoint_features
# (stragglers.warehouse.build.build_features); here one step each, in its order
STEPS = ("scan", "staged_trace", "jobs", "tasks", "selection_funnel",
         "job_checkpoints", "task_attempts", "event_streams", "event_features", "checkpoint_features",
         "operator_checkpoints", "operator_event_features", "operator_checkpoint_features")
TRACE = "google_2011"


def _peak_rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _step(db: str, raw: str, memory_limit: str, slice_rows: int | None, step: str, out) -> None:
    """One step in this (fresh) process: seconds, rows written and the process's peak RSS."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")   # the steps' progress lines
    con = duckdb.connect(db)
    storage.configure(con, memory_limit=memory_limit, temp_directory=str(Path(db).parent / "duckdb_tmp"),
                 slice_rows=slice_rows)
    con.execute("SET enable_progress_bar = false")
    s = SelectionSettings(trace=TRACE)
    started = time.perf_counter()
    if step == "scan":
        build_warehouse(con, Path(raw), s, until="staging")
        rows = sum(con.execute(f"SELECT count(*), sum(hash(job_id, time)) FROM {v}").fetchone()[0]
                   for v in ("stg_task_events", "stg_job_events"))
    elif step == "staged_trace":   # the asset: the typed views, then every view's rows counted
        build_warehouse(con, Path(raw), s, until="staging")
        rows = sum(staging.count_staged_rows(con, s.trace, sql_files.GOOGLE_VIEWS)[0].values())
    elif step == "jobs":
        rows = build.build_jobs(con, s)
    elif step == "tasks":
        rows = build.build_tasks(con, s)
    elif step == "selection_funnel":
        rows = build.build_funnel(con, s)
    elif step == "task_attempts":
        rows = build.build_task_attempts(con, s)
    elif step == "event_streams":   # job_runs and machine_streams: what event_features' slices read
        rows = sum(build.build_event_streams(con, s).values())
    else:
        rows = runner.build_table(con, step, s)
    out.put({"step": step, "seconds": time.perf_counter() - started, "rows": int(rows),
             "peak_rss_mb": _peak_rss_mb()})


def _in_process(*args) -> dict:
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=_step, args=(*args, q))
    p.start()
    p.join()
    if p.exitcode != 0:
        return {"step": args[-1], "error": f"exit code {p.exitcode}"}
    return q.get()


def run(realdata: Path, work: Path, copies: int, memory_limit: str, slice_rows: int | None,
        steps=STEPS, resume: bool = False) -> list[dict]:
    raw = work / f"tiled_{copies}" / TRACE
    t = time.perf_counter()
    tile(realdata / TRACE, raw, copies, PARTS, SPAN_US)
    print(json.dumps({"copies": copies, "tiled_s": round(time.perf_counter() - t, 1)}), flush=True)
    db = work / f"month_{copies}.duckdb"
    if not resume:   # resume: the later steps on the warehouse an earlier run left (its tables)
        db.unlink(missing_ok=True)
    shutil.rmtree(work / "duckdb_tmp", ignore_errors=True)
    rows = []
    for step in steps:
        r = _in_process(str(db), str(raw), memory_limit, slice_rows, step)
        rows.append(r | {"copies": copies, "memory_limit": memory_limit, "slice_rows": slice_rows})
        print(json.dumps(rows[-1]), flush=True)
        if "error" in r:
            break
    return rows


def table(rows: list[dict]) -> str:
    out = ["| copies | step | rows | seconds | rows/s | x one gzip scan | peak RSS MB |",
           "|---:|---|---:|---:|---:|---:|---:|"]
    for copies in sorted({r["copies"] for r in rows}):
        mine = [r for r in rows if r["copies"] == copies and "error" not in r]
        scan = next(r for r in mine if r["step"] == "scan")
        for r in mine:
            out.append(f"| {copies} | {r['step']} | {r['rows']:,} | {r['seconds']:.1f} | "
                       f"{r['rows'] / max(r['seconds'], 1e-9):,.0f} | {r['seconds'] / scan['seconds']:.1f} | "
                       f"{r['peak_rss_mb']:,.0f} |")
        path = [r for r in mine if r["step"] != "scan"]
        out.append(f"| {copies} | **whole path** | {scan['rows']:,} events | {sum(r['seconds'] for r in path):.1f} "
                   f"| | {sum(r['seconds'] for r in path) / scan['seconds']:.1f} | "
                   f"{max(r['peak_rss_mb'] for r in path):,.0f} |")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.month",
                                 description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--realdata", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "realdata")
    ap.add_argument("--copies", type=int, nargs="+", default=[10])
    ap.add_argument("--memory-limit", default=Settings().duckdb_memory_limit)
    ap.add_argument("--slice-rows", type=int, default=None, help="default: the setting's (duckdb_slice_rows)")
    ap.add_argument("--steps", nargs="+", default=list(STEPS))
    ap.add_argument("--resume", action="store_true",
                    help="run --steps on the warehouse an earlier run left in --work (its staged views and tables)")
    ap.add_argument("--json-in", type=Path, nargs="*", default=[],
                    help="rows of earlier runs (--json) to print in the table with this run's")
    ap.add_argument("--work", type=Path, default=None, help="where the tiled trace and warehouse go (default: a temp dir)")
    ap.add_argument("--json", type=Path, default=None, help="also write the rows here")
    args = ap.parse_args()
    if not (args.realdata / TRACE / "task_events").is_dir():
        raise SystemExit(f"the real excerpt is absent: {args.realdata / TRACE} (set --realdata)")
    work = args.work or Path(tempfile.mkdtemp(prefix="bench-month-"))
    work.mkdir(parents=True, exist_ok=True)
    rows = [r for path in args.json_in for r in json.loads(path.read_text())]
    for copies in args.copies:
        rows += run(args.realdata, work, copies, args.memory_limit, args.slice_rows, args.steps, args.resume)
        if args.json:
            args.json.write_text(json.dumps(rows, indent=1))
    print()
    print(table(rows))
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
