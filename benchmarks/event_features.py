"""What the event features (sql/event_features.sql) cost, measured in ONE run:

(a) the real excerpt (../shared/realdata/google_2011: job_events, machine_events, task_events
    parts 0-13 = 19.65 h), and (b) an events-only trace 10x its size generated from it: ten
    consecutive copies of its events, each shifted by the excerpt's span (19.65 h) with its own
    job ids, on the same machines (so machine load, history and recurring names keep the real
    shape and the row count grows tenfold).

For each, the events-only path step by step (selection = task_lifecycle + jobs + tasks + funnel,
job_checkpoints, task_attempts, event_features, checkpoint_features: rows, seconds, rows/s),
against the baseline measured in the same run on the same data: one scan of task_events reading
every row's key and time (gzip CSV on the excerpt, DuckDB's own storage on the tiled trace). Each build runs in a fresh process
under the DuckDB memory limit (--memory-limit, the pipeline's NURD_DUCKDB_MEMORY_LIMIT default),
so the peak RSS printed is that build's. The projection to the whole month (500 task_events
parts) scales the 10x trace's seconds per task_events row linearly.

    python -m benchmarks.event_features [--realdata DIR] [--copies 10] [--memory-limit 4GB]

Prints a markdown table (docs/BENCHMARKS.md, "Event features").
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import resource
import tempfile
import time
from pathlib import Path

import duckdb

from stragglers.settings import SelectionSettings
from stragglers.warehouse.assemble import build_warehouse
from stragglers.warehouse.build import build_selection
from stragglers.warehouse.runner import build_table

SPAN_US = 70_740 * 1_000_000   # task_events parts 0-13 of the real trace: 19.65 h


def _tile(con: duckdb.DuckDBPyConnection, copies: int) -> None:
    """Replace the staged event views by ``copies`` consecutive copies of their rows (tables)."""
    for view in ("stg_task_events", "stg_job_events"):
        con.execute(f"""CREATE TABLE tiled_{view} AS
            SELECT * REPLACE (
                CASE WHEN time BETWEEN 1 AND 9223372036854775806 THEN time + c.i * {SPAN_US} ELSE time END AS time,
                job_id + c.i * 10000000000 AS job_id)
            FROM {view}, range({copies}) c(i)""")
        con.execute(f"CREATE OR REPLACE VIEW {view} AS SELECT * FROM tiled_{view}")


STEPS = ("scan", "selection", "job_checkpoints", "task_attempts", "event_features", "checkpoint_features")


def _peak_rss_mb() -> float:
    """This process's peak RSS (VmHWM: reset at exec, unlike getrusage's ru_maxrss)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _stage(db: str, raw: str, copies: int, memory_limit: str, out) -> None:
    con = duckdb.connect(db)
    con.execute(f"SET memory_limit = '{memory_limit}'")
    build_warehouse(con, Path(raw), SelectionSettings(trace="google_2011"), until="staging")
    if copies > 1:
        _tile(con, copies)
    out.put({"task_events_rows": con.execute("SELECT count(*) FROM stg_task_events").fetchone()[0]})


def _measure(db: str, memory_limit: str, step: str, out) -> None:
    """One step in this (fresh) process: its seconds, rows and the process's peak RSS."""
    con = duckdb.connect(db)
    con.execute(f"SET memory_limit = '{memory_limit}'")
    s = SelectionSettings(trace="google_2011")   # the staged (and tiled) views persist in ``db``
    t = time.perf_counter()
    if step == "scan":   # every row's key and time read (count(*) alone is answered from metadata)
        rows = con.execute("SELECT count(*), sum(hash(job_id, task_index, time)) FROM stg_task_events").fetchone()[0]
    elif step == "selection":   # task_lifecycle (the one scan of task_events), jobs, tasks, funnel
        rows = build_selection(con, s)["tasks"]
    else:
        rows = build_table(con, step, s)
    out.put({"step": step, "seconds": time.perf_counter() - t, "rows": rows, "peak_rss_mb": _peak_rss_mb()})


def _in_process(target, *args) -> dict:
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=target, args=(*args, q))
    p.start()
    result = q.get()
    p.join()
    return result


def run(raw: Path, copies: int, memory_limits: list[str], tmp: Path) -> list[dict]:
    db = str(tmp / f"bench_{copies}.duckdb")
    info = _in_process(_stage, db, str(raw), copies, memory_limits[0])
    rows = []
    for limit in memory_limits:
        for step in STEPS:
            r = _in_process(_measure, db, limit, step)
            rows.append(r | info | {"copies": copies, "memory_limit": limit})
            print(json.dumps(rows[-1]), flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.event_features",
                                 description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--realdata", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "realdata")
    ap.add_argument("--copies", type=int, default=10)
    ap.add_argument("--memory-limit", default="4GB", help="DuckDB memory limit (the pipeline's default)")
    ap.add_argument("--low-limit", default="1GB", help="a second, lower limit for the 10x trace")
    args = ap.parse_args()
    raw = args.realdata / "google_2011"
    if not (raw / "task_events").is_dir():
        raise SystemExit(f"the real excerpt is absent: {raw} (set --realdata)")
    with tempfile.TemporaryDirectory(prefix="bench-events-") as tmp:
        rows = (run(raw, 1, [args.memory_limit], Path(tmp))
                + run(raw, args.copies, [args.memory_limit, args.low_limit], Path(tmp)))
    print("\n| trace | DuckDB limit | task_events rows | step | rows | seconds | rows/s | x one scan | peak RSS MB |")
    print("|---|---|---:|---|---:|---:|---:|---:|---:|")
    for copies, limit in ((1, args.memory_limit), (args.copies, args.memory_limit), (args.copies, args.low_limit)):
        mine = [r for r in rows if r["copies"] == copies and r["memory_limit"] == limit]
        scan = next(r for r in mine if r["step"] == "scan")["seconds"]
        label = "real excerpt" if copies == 1 else f"{copies}x generated from it"
        for r in mine:
            print(f"| {label} | {limit} | {r['task_events_rows']:,} | {r['step']} | {r['rows']:,} | "
                  f"{r['seconds']:.1f} | {r['rows'] / max(r['seconds'], 1e-9):,.0f} | {r['seconds'] / scan:.1f} | "
                  f"{r['peak_rss_mb']:.0f} |")
    big = [r for r in rows if r["copies"] == args.copies and r["memory_limit"] == args.memory_limit]
    per_row = sum(r["seconds"] for r in big if r["step"] != "scan") / big[0]["task_events_rows"]
    real_scan = next(r for r in rows if r["copies"] == 1 and r["step"] == "scan")
    month_rows = big[0]["task_events_rows"] / args.copies / 14 * 500
    build = per_row * month_rows / 60
    gzip_scan = real_scan["seconds"] / real_scan["task_events_rows"] * month_rows / 60
    print(f"\nProjection, 500 task_events parts ({month_rows:,.0f} rows at the excerpt's rows per part): the "
          f"steps after staging about {build:.0f} min at the 10x trace's seconds per task_events row (linear), "
          f"plus reading the gzip CSVs about {gzip_scan:.1f} min per scan at the excerpt's rate.")


if __name__ == "__main__":
    main()
