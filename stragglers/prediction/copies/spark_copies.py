"""Which tasks the engine's Spark rule copies on staged Spark event logs, when and on which host: the
replay held to the copies a real Spark made (tests/test_spark_speculation.py, studies/spark).

Each stage attempt is a job of the engine (engine/jobs.py: checks every spark.speculation.interval
from the stage's submission, copies on a free core of another host once no task is left to launch);
the policy is Spark's rule with the setting its application ran with, uncapped (Spark holds no
budget). A log made with speculation on holds Spark's own copies: the engine leaves them out (they
are not tasks) and decides its copies itself, so the two can be compared.
"""

from __future__ import annotations

from dataclasses import dataclass

import duckdb
import numpy as np

from stragglers.prediction.engine.caps import Uncapped
from stragglers.prediction.engine.jobs import copy_jobs
from stragglers.prediction.engine.policies import spark_rule
from stragglers.prediction.engine.replay import copy_log
from stragglers.prediction.engine.spark_rule import SpeculationRule
from stragglers.warehouse.sql_files import render


@dataclass(frozen=True)
class Replayed:
    """One task the rule flags in a stage attempt and where and when its copy starts (None: no core of
    another host came free before the original ended). Times in seconds from the stage's submission."""
    app_id: str
    stage_id: int
    stage_attempt: int
    task_index: int
    flagged_s: float
    original_host: str
    copy_s: float | None
    copy_host: str | None


def replay_flags(con: duckdb.DuckDBPyConnection, trace: str, rules: dict[str, SpeculationRule]) -> list[Replayed]:
    """Every task ``rules[app_id]`` flags in every selected stage attempt of ``trace``, with its copy
    as the engine places it (draw 0 of the copies' latencies: a copy's start does not depend on it
    but through cores freed by earlier copies' ends)."""
    stages = con.execute(render("spark_stage_keys", trace=trace)).df().set_index("job_id")
    hosts = con.execute(render("copy_job_tasks__spark", trace=trace)).df()
    out = []
    for job_id, job in copy_jobs(con, trace).items():
        key = stages.loc[job_id]
        rule = rules[str(key.app_id)]
        policy = spark_rule(job, rule)
        log = copy_log(job, policy, Uncapped())
        names = hosts[hosts["job_id"] == job_id].set_index("task_id")["host"]
        slot_hosts = _executor_hosts(con, int(key.log_id), job)
        for i in np.flatnonzero(~np.isnan(policy.flagged_at)):
            started = log.start[i]
            copy_host = None if np.isnan(started) else slot_hosts[int(log.executor[i])]
            out.append(Replayed(str(key.app_id), int(key.stage_id), int(key.stage_attempt), int(job.task_ids[i]),
                                float(policy.flagged_at[i] - job.submitted), str(names.get(job.task_ids[i])),
                                None if np.isnan(started) else float(started - job.submitted), copy_host))
    return out


def _executor_hosts(con, log_id: int, job) -> list[str]:
    """The host of each executor of the job's slots, in the engine's order (executor ids sorted)."""
    df = con.execute("SELECT DISTINCT executor_id, host FROM spark_replay_slots WHERE log_id = ? ORDER BY executor_id",
                     [log_id]).df()
    return df["host"].astype(str).tolist()


def scheduling_delay_s(con: duckdb.DuckDBPyConnection) -> float:
    """The longest gap, either way, on one executor, between an attempt's recorded end and the next
    attempt of the same stage attempt launched there while the stage still had tasks to launch: how
    far apart Spark's clock puts a freed core and its next task (the driver stamps a task's end when
    it handles the result, which can come after the core has its next task: the gap is then
    negative). Meaningful for one-core executors, the cluster's."""
    return float(con.execute(render("spark_scheduling_delay")).fetchone()[0] or 0.0)
