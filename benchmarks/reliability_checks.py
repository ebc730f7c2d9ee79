"""What the reliability checks (first life, window edges, value anomalies) cost, measured in ONE run on the real excerpt (task_events parts 0-13,
job_events, machine_events; ../shared/realdata):

(a) task_lifecycle as built now (a task's first life, window-edge states: two window passes) against
    (b) the single aggregation it replaced (``git show cf586bc:sql/task_lifecycle.sql``, passed with
    --old-sql), both as CREATE TABLE from the same staged views;
(c) the value and repeat checks of task_events and job_events (``locate.value_anomalies``) against
    (d) one plain scan of the same two views (``SELECT count(*), max(time)``).

    python -m benchmarks.reliability_checks --old-sql old_task_lifecycle.sql [--realdata DIR] [--repeat 3]

Prints a markdown table of medians and ratios (docs/BENCHMARKS.md, "Reliability checks").
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import duckdb

from stragglers.settings import SelectionSettings
from stragglers.warehouse import locate
from stragglers.warehouse.sql_files import render
from stragglers.warehouse.assemble import build_warehouse
from stragglers.warehouse.table_sql import table_params


def _timed(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.reliability_checks",
                                 description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--realdata", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "realdata")
    ap.add_argument("--old-sql", type=Path, required=True, help="the task_lifecycle.sql of one aggregation (git show cf586bc:sql/task_lifecycle.sql)")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    raw = args.realdata / "google_2011"
    if not (raw / "task_events").is_dir():
        raise SystemExit(f"the real excerpt is absent: {raw} (set --realdata)")
    s = SelectionSettings(trace="google_2011")
    con = duckdb.connect()
    build_warehouse(con, raw, s, until="staging")
    new_sql = render("task_lifecycle", **table_params(con, s, "task_lifecycle"))
    old_sql = args.old_sql.read_text().replace("${trace}", s.trace)
    rows = {}
    t_new = _timed(lambda: rows.update(new=con.execute(
        f"CREATE OR REPLACE TABLE lc_new AS {new_sql}").fetchone()), args.repeat)
    t_old = _timed(lambda: con.execute(f"CREATE OR REPLACE TABLE lc_old AS {old_sql}"), args.repeat)
    n_tasks = con.execute("SELECT count(*) FROM lc_new").fetchone()[0]
    t_checks = _timed(lambda: locate.value_anomalies(con, ("stg_task_events", "stg_job_events"), first_only=True),
                      args.repeat)
    t_scan = _timed(lambda: [con.execute(f"SELECT count(*), max(time) FROM {v}").fetchone()
                             for v in ("stg_task_events", "stg_job_events")], args.repeat)
    print(f"Real excerpt: {n_tasks:,} task indices (task_events parts 0-13), {args.repeat} runs each, medians.\n")
    print("| step | seconds | ratio |")
    print("|---|---|---|")
    print(f"| task_lifecycle as one aggregation | {t_old:.2f} | 1.00 |")
    print(f"| task_lifecycle now (first life, window edges) | {t_new:.2f} | {t_new / t_old:.2f} |")
    print(f"| one scan of task_events + job_events | {t_scan:.2f} | 1.00 |")
    print(f"| NaN/infinity and repeat checks of the same two views | {t_checks:.2f} | {t_checks / t_scan:.2f} |")


if __name__ == "__main__":
    main()
