"""Jobs to replay, streamed from the warehouse in batches through Parquet files.

The client (the asset, which owns the DuckDB connection) lists the evaluable
jobs (one row per job: ``evaluable_jobs``) and exports each batch of jobs to
one Parquet file (``export_batch``) in the exchange directory. Whoever replays
a job (a local worker process, a Dask worker on another machine) reads it back
itself (``read_job``): the client never holds more than one batch of features,
and never ships feature arrays to the workers.

A batch file has one row per (job, checkpoint k, task), ordered by job_id, k,
task_id, with the job's features, its checkpoint time and the task's latency.
"""

from __future__ import annotations

import os
import uuid
from collections import OrderedDict
from pathlib import Path
from typing import Sequence

import duckdb
import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from stragglers.prediction.replay.clock import TASKS_OF
from stragglers.prediction.replay.simulate import JobData


def batches(jobs: pd.DataFrame, batch_jobs: int) -> list[pd.DataFrame]:
    """Consecutive slices of ``jobs`` (by job_id) of at most ``batch_jobs`` rows."""
    return [jobs.iloc[i:i + batch_jobs] for i in range(0, len(jobs), batch_jobs)]


def export_batch(con: duckdb.DuckDBPyConnection, trace: str, features: Sequence[str],
                 job_ids: Sequence[int], directory: Path, table: str = "checkpoint_features") -> Path:
    """Write the batch's rows of feature table ``table`` to ``directory/batch-<uuid>.parquet``
    (temporary name, then rename), with each task's latency, whether it finished (the operator's
    tasks: those that end otherwise too, clock.TASKS_OF) and its start on the job's wall clock.
    The id range lets DuckDB skip the row groups of other jobs (batches are consecutive job ids)."""
    directory.mkdir(parents=True, exist_ok=True)
    final = directory / f"batch-{uuid.uuid4().hex}.parquet"
    tmp = final.with_suffix(".parquet.tmp")
    ids = pd.DataFrame({"job_id": np.asarray(job_ids, dtype=np.int64)})
    con.register("_batch_job_ids", ids)
    try:
        cols = ", ".join(f"f.{c}" for c in features)
        tasks = TASKS_OF[table]
        rel = con.sql(f"""
            SELECT f.job_id, f.k, f.task_id, f.checkpoint_s, t.latency_s,
                   {"true" if tasks == "tasks" else "t.finished"} AS finished,
                   {"0.0" if tasks == "tasks" else "t.start_us / 1e6"} AS start_s,
                   {"NULL" if tasks == "tasks" else "t.n_known"} AS n_known, {cols}
            FROM {table} f
            JOIN _batch_job_ids b ON b.job_id = f.job_id
            JOIN {tasks} t ON t.trace = f.trace AND t.job_id = f.job_id AND t.task_id = f.task_id
            WHERE f.trace = '{_quote(trace)}' AND f.job_id BETWEEN {int(ids.job_id.min())} AND {int(ids.job_id.max())}
            ORDER BY f.job_id, f.k, f.task_id""")
        rel.write_parquet(str(tmp), row_group_size=32768)
    finally:
        con.unregister("_batch_job_ids")
    os.replace(tmp, final)
    return final


def _quote(s: str) -> str:
    return s.replace("'", "''")


# One decoded batch per process: the jobs of a batch are replayed one after another by
# the same workers, so each worker reads a batch file once, not once per job.
_CACHE: OrderedDict[str, tuple[pd.DataFrame, dict]] = OrderedDict()
_CACHE_SIZE = 2


def _batch_table(path: str) -> tuple[pd.DataFrame, dict]:
    if path in _CACHE:
        _CACHE.move_to_end(path)
        return _CACHE[path]
    df = pq.read_table(path).to_pandas()
    ids = df["job_id"].to_numpy()
    starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
    ends = np.r_[starts[1:], len(ids)]
    index = {int(ids[s]): (int(s), int(e)) for s, e in zip(starts, ends)}
    _CACHE[path] = (df, index)
    while len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return df, index


def read_job(path: str, job_id: int, tau_s: float, n_tasks: int, features: Sequence[str]) -> JobData:
    """One job of a batch file as JobData (checks its shape)."""
    df, index = _batch_table(str(path))
    if job_id not in index:
        raise LookupError(f"job {job_id} is not in batch file {path}")
    s, e = index[job_id]
    return job_from_rows(df.iloc[s:e], job_id, tau_s, n_tasks, features)


def job_from_rows(ft: pd.DataFrame, job_id: int, tau_s: float, n_tasks: int, features: Sequence[str]) -> JobData:
    """JobData from one job's rows ordered by k, task_id (columns as in a batch file)."""
    K = int(ft["k"].nunique())
    n = int(n_tasks)
    if K == 0 or n * K != len(ft):
        raise ValueError(f"checkpoint_features of job {job_id} has {len(ft)} rows, expected "
                         f"{n} tasks x {K} checkpoints")
    task_ids = ft["task_id"].to_numpy()[:n]
    if not (ft["task_id"].to_numpy().reshape(K, n) == task_ids).all():
        raise ValueError(f"job {job_id}: checkpoint_features has different tasks at different checkpoints")
    latency = ft["latency_s"].to_numpy(float)[:n]
    # None when every task finishes (the paper's tasks, or an operator's job without other ends)
    finished = ft["finished"].to_numpy(bool)[:n] if "finished" in ft else None
    # None when every task starts at the origin (the paper's tasks, the task clock)
    start = ft["start_s"].to_numpy(float)[:n] if "start_s" in ft else None
    X = ft[list(features)].to_numpy(float).reshape(K, n, len(features))
    return JobData(job_id=int(job_id), task_ids=task_ids, latency=latency,
                   checkpoints=ft["checkpoint_s"].to_numpy(float)[::n], X=X, tau=float(tau_s),
                   feature_names=tuple(features),
                   finished=None if finished is None or finished.all() else finished,
                   start=None if start is None or not start.any() else start,
                   n_known=int(ft["n_known"].iloc[0]) if "n_known" in ft and pd.notna(ft["n_known"].iloc[0]) else None)
