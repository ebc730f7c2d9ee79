"""A trace's jobs for the engine, from the warehouse: every task the operator's replay sees, the
checks, the copies' draws (the one copy model) and, on Spark event logs, the executors' free cores.

- Google and Alibaba traces: the checks are the operator's online clock after t0
  (sql/copy_job_checks.sql); a copy runs on a machine always free (the trace does not record which
  machines a job could have had).
- Spark event logs: the checks are every ``spark.speculation.interval`` of the application (its
  Spark properties; Spark's 100 ms where unset) from the stage's submission, as Spark's timer checks;
  a copy needs a free core of an executor on another host than its original, once the stage has no
  task left to launch (sql/copy_job_tasks__spark.sql), on the cores the log shows free at the check
  (sql/spark_replay_slots.sql: every executor's cores less the attempts running there, Spark's own
  copies left out). Each stage attempt is replayed alone: the copies of the application's other
  stages do not take its cores.
"""

from __future__ import annotations

import json
from typing import Iterator, Mapping, Sequence

import duckdb
import numpy as np
import pandas as pd

from stragglers.prediction.engine.draws import RELAUNCH_SEEDS, copy_draws
from stragglers.prediction.engine.job import CopyJob, ExecutorSlots
from stragglers.prediction.engine.spark_rule import SPARK_4_DEFAULTS, SpeculationRule, rule_from_conf
from stragglers.trace_formats import trace_format
from stragglers.warehouse.sql_files import render


def copy_jobs(con: duckdb.DuckDBPyConnection, trace: str, copy_keeps: float = 0.0,
              job_ids: Sequence[int] | None = None, seeds: Sequence[int] = RELAUNCH_SEEDS) -> dict[int, CopyJob]:
    """Every selected job of ``trace`` (or those of ``job_ids``) as a ``CopyJob``."""
    return _copy_jobs(con, trace, copy_keeps, job_ids, seeds, _prepared(con, trace))


def copy_job_batches(con: duckdb.DuckDBPyConnection, trace: str, copy_keeps: float, job_ids: Sequence[int],
                     batch_jobs: int, seeds: Sequence[int] = RELAUNCH_SEEDS) -> Iterator[dict[int, CopyJob]]:
    """``copy_jobs`` of ``job_ids``, ``batch_jobs`` jobs at a time (in job order): one batch's jobs in
    memory, not the trace's."""
    spark = _prepared(con, trace)
    ids = sorted({int(j) for j in job_ids})
    for i in range(0, len(ids), batch_jobs):
        yield _copy_jobs(con, trace, copy_keeps, ids[i:i + batch_jobs], seeds, spark)


def _prepared(con: duckdb.DuckDBPyConnection, trace: str) -> bool:
    """Whether ``trace`` is Spark's, after building what its jobs read once (table spark_replay_slots)."""
    spark = trace_format(trace).layout == "spark"
    if spark:
        con.execute(render("spark_replay_slots"))
    return spark


def _copy_jobs(con: duckdb.DuckDBPyConnection, trace: str, copy_keeps: float, job_ids: Sequence[int] | None,
               seeds: Sequence[int], spark: bool) -> dict[int, CopyJob]:
    sql = render("copy_job_tasks__spark" if spark else "copy_job_tasks", trace=trace)
    if job_ids is None:
        tasks = con.execute(sql).df()
    else:
        tasks = con.execute(f"SELECT * FROM ({sql}) WHERE job_id IN (SELECT unnest(?::BIGINT[])) "
                            "ORDER BY job_id, task_id", [[int(j) for j in job_ids]]).df()
    if spark:
        return _spark_jobs(con, trace, tasks, copy_keeps, seeds)
    checks = con.execute(render("copy_job_checks", trace=trace)).df()
    by_job = {int(j): g["checkpoint_s"].to_numpy(float) for j, g in checks.groupby("job_id", sort=False)}
    return {int(j): _job(trace, int(j), g, by_job.get(int(j), np.zeros(0)), copy_keeps, seeds)
            for j, g in tasks.groupby("job_id", sort=True)}


def _job(trace: str, job_id: int, g: pd.DataFrame, checks: np.ndarray, copy_keeps: float, seeds,
         slots: ExecutorSlots | None = None, submitted: float = 0.0, app_rule: SpeculationRule | None = None
         ) -> CopyJob:
    y = g["latency_s"].to_numpy(float)
    fin = g["finished"].to_numpy(bool)
    draws = tuple(copy_draws(y, trace, job_id, seeds, copy_keeps, finished=fin))
    n_known = int(g["n_known"].iloc[0]) if "n_known" in g and pd.notna(g["n_known"].iloc[0]) else None
    return CopyJob(trace, job_id, g["task_id"].to_numpy(), g["start_s"].to_numpy(float), y, fin,
                   np.asarray(checks, dtype=float), draws, slots, submitted, app_rule, n_known)


def application_rules(con: duckdb.DuckDBPyConnection) -> dict[int, SpeculationRule | None]:
    """Per log: the speculation rule its application ran with (None: speculation off)."""
    props = con.execute(render("spark_properties")).df()
    return {int(r.log_id): rule_from_conf(_properties(r.spark_properties)) for r in props.itertuples(index=False)}


def application_intervals(con: duckdb.DuckDBPyConnection) -> dict[int, float]:
    """Per log: the application's spark.speculation.interval (s), Spark's default where unset."""
    props = con.execute(render("spark_properties")).df()
    out = {}
    for r in props.itertuples(index=False):
        conf = _properties(r.spark_properties)
        rule = rule_from_conf(conf | {"spark.speculation": "true"})
        out[int(r.log_id)] = rule.interval_s if rule is not None else SPARK_4_DEFAULTS.interval_s
    return out


def _properties(raw) -> dict[str, str]:
    if raw is None or (isinstance(raw, float) and np.isnan(raw)):
        return {}
    value = json.loads(raw) if isinstance(raw, str) else raw
    # Spark writes the properties as [[key, value], ...] (older logs) or {key: value}
    return {str(k): str(v) for k, v in (value.items() if isinstance(value, dict) else value)}


def interval_checks(submitted: float, interval: float, last_end: float) -> np.ndarray:
    """Spark's checks: submission + k x interval, k >= 1, while a task may run (up to its last end)."""
    count = max(int(np.floor((last_end - submitted) / interval)) + 1, 0)
    return submitted + interval * np.arange(1, count + 1)


def _spark_jobs(con, trace: str, tasks: pd.DataFrame, copy_keeps: float, seeds) -> dict[int, CopyJob]:
    """``tasks``' stage attempts, on table spark_replay_slots (built by the caller)."""
    logs = sorted({int(x) for x in tasks["log_id"]})
    slots = con.execute("SELECT * FROM spark_replay_slots WHERE log_id IN (SELECT unnest(?::BIGINT[])) "
                        "ORDER BY log_id, executor_id, launch_ms", [logs]).df()
    intervals = application_intervals(con)
    rules = application_rules(con)
    per_log = {int(log): g for log, g in slots.groupby("log_id")}
    out = {}
    for j, g in tasks.groupby("job_id", sort=True):
        first = g.iloc[0]
        log_id, origin_s = int(first.log_id), float(first.origin_us) / 1e6
        interval = intervals.get(log_id, SPARK_4_DEFAULTS.interval_s)
        end = g["start_s"].to_numpy(float) + g["latency_s"].to_numpy(float)
        checks = interval_checks(float(first.submitted_s), interval, float(end.max()))
        out[int(j)] = _job(trace, int(j), g, checks, copy_keeps, seeds,
                           _slots(per_log.get(log_id), g, checks, origin_s, float(first.last_launch_s)),
                           float(first.submitted_s), rules.get(log_id))
    return out


def _slots(log_slots: pd.DataFrame | None, g: pd.DataFrame, checks: np.ndarray, origin_s: float,
           last_launch: float) -> ExecutorSlots | None:
    """The application's executors and their free cores at each check, on the job's clock; none (a
    local-mode application: its tasks run on the driver, with no executor event) leaves no core for a
    copy."""
    if log_slots is None or log_slots.empty:
        return ExecutorSlots(np.zeros(0, np.int64), np.zeros((len(checks), 0), np.int64),
                             np.full(len(g), -1, np.int64), last_launch)
    hosts = {h: i for i, h in enumerate(sorted(set(log_slots["host"].astype(str)) | set(g["host"].dropna().astype(str))))}
    executors = []
    free = []
    for ex, h in log_slots.groupby("executor_id", sort=True):
        first = h.iloc[0]
        added = float(first.added_ms) / 1000 - origin_s
        removed = float(first.removed_ms) / 1000 - origin_s if pd.notna(first.removed_ms) else np.inf
        held = h.dropna(subset=["launch_ms"])
        launch = np.sort(held["launch_ms"].to_numpy(float) / 1000 - origin_s)
        finish = np.sort(held["finish_ms"].to_numpy(float) / 1000 - origin_s)
        busy = np.searchsorted(launch, checks, side="right") - np.searchsorted(finish, checks, side="right")
        alive = (checks >= added) & (checks < removed)
        free.append(np.where(alive, np.maximum(int(first.cores) - busy, 0), 0))
        executors.append(hosts[str(first.host)])
    task_host = np.array([hosts.get(str(h), -1) if pd.notna(h) else -1 for h in g["host"]], dtype=np.int64)
    return ExecutorSlots(np.asarray(executors, dtype=np.int64), np.stack(free, axis=1).astype(np.int64), task_host,
                         last_launch)


def jobs_by_id(jobs: Mapping[int, CopyJob], ids: Sequence[int]) -> list[CopyJob]:
    return [jobs[int(j)] for j in ids if int(j) in jobs]
