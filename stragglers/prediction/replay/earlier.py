"""Which jobs came before which: each job's start, end and first decision, and the jobs that ended
before it (what a method may learn from, and what a comparison is named on).

A job's start is its first task's first SCHEDULE (on Spark logs, its stage's first launch), its end
when its last task ended (on the operator's view, in any way; a job with a task still running when
the trace ends has no end and never comes before another), its cutoff its start plus t0: when its
first decision can be taken at the earliest. Trace time in microseconds.
"""

from __future__ import annotations

from typing import Collection, Iterator, Mapping

import duckdb
import numpy as np
import pandas as pd

from stragglers.warehouse.sql_files import render


def job_times(con: duckdb.DuckDBPyConnection, trace: str, tasks: str = "tasks") -> pd.DataFrame:
    """Per job: job_id, start_us, end_us, cutoff_us (sql/job_times.sql on the paper's tasks,
    sql/operator_job_times.sql on the operator's: ``tasks`` = "operator_tasks")."""
    name = {"tasks": "job_times", "operator_tasks": "operator_job_times"}[tasks]
    return con.execute(render(name, trace=trace)).df()


class EarlierJobs(Mapping[int, tuple[int, ...]]):
    """Job -> the jobs that ended strictly before its time in ``before_us`` (never itself, never one
    without an end; in the order of ``ids``), for the jobs with at least ``warmup`` of them. Each
    tuple is made when it is asked for: held all at once they take memory quadratic in the jobs (a
    directory of Spark logs holds thousands of stage attempts)."""

    def __init__(self, ids: np.ndarray, before_us: np.ndarray, end_us: np.ndarray, warmup: int = 0):
        self._ids, self._before, self._end = ids, before_us, end_us
        self._at = {int(j): i for i, j in enumerate(ids)
                    if warmup <= 0 or np.count_nonzero(self._ended(j, before_us[i])) >= warmup}

    def _ended(self, j: int, t: float) -> np.ndarray:
        return (self._end < t) & (self._ids != j)

    def __getitem__(self, j: int) -> tuple[int, ...]:
        i = self._at[j]
        return tuple(int(k) for k in self._ids[self._ended(j, self._before[i])])

    def __iter__(self) -> Iterator[int]:
        return iter(self._at)

    def __len__(self) -> int:
        return len(self._at)

    def counts(self, among: Collection[int]) -> dict[int, int]:
        """Per job: how many of its earlier jobs are in ``among`` (without making the tuples)."""
        keep = np.isin(self._ids, np.fromiter(among, dtype=np.int64, count=len(among)))
        ends = np.sort(self._end[keep & ~np.isnan(self._end)])
        return {j: int(np.searchsorted(ends, self._before[i], side="left"))
                - int(bool(keep[i]) and self._end[i] < self._before[i])      # never itself
                for j, i in self._at.items()}


def earlier_jobs(times: pd.DataFrame) -> EarlierJobs:
    """Per job, the jobs that ended strictly before its cutoff (never itself, never a later one, never
    one without an end)."""
    return EarlierJobs(times["job_id"].to_numpy(), times["cutoff_us"].to_numpy(), times["end_us"].to_numpy(float))
