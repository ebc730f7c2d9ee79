"""Which jobs came before which: each job's start, end and first decision, and the jobs that ended
before it (what a method may learn from, and what a comparison is named on).

A job's start is its first task's first SCHEDULE (on Spark logs, its stage's first launch), its end
when its last task ended (on the operator's view, in any way; a job with a task still running when
the trace ends has no end and never comes before another), its cutoff its start plus t0: when its
first decision can be taken at the earliest. Trace time in microseconds.
"""

from __future__ import annotations

import duckdb
import pandas as pd

from stragglers.warehouse.sql_files import render


def job_times(con: duckdb.DuckDBPyConnection, trace: str, tasks: str = "tasks") -> pd.DataFrame:
    """Per job: job_id, start_us, end_us, cutoff_us (sql/job_times.sql on the paper's tasks,
    sql/operator_job_times.sql on the operator's: ``tasks`` = "operator_tasks")."""
    name = {"tasks": "job_times", "operator_tasks": "operator_job_times"}[tasks]
    return con.execute(render(name, trace=trace)).df()


def earlier_jobs(times: pd.DataFrame) -> dict[int, tuple[int, ...]]:
    """Per job, the jobs that ended strictly before its cutoff (never itself, never a later one, never
    one without an end)."""
    end = times["end_us"].to_numpy(float)
    ids = times["job_id"].to_numpy()
    return {int(j): tuple(int(i) for i in ids[(end < c) & (ids != j)])
            for j, c in zip(ids, times["cutoff_us"].to_numpy())}
