"""The operator's decision clock: when a scheduler that knows only the past decides.

Under ``threshold="online"`` (the operator's protocol) with ``decision_clock="online"`` (the
default) the replay decides at the times of ``operator_checkpoints`` (sql/operator_checkpoints.sql,
built with the features by the warehouse), on features as of each of those times
(``operator_checkpoint_features``: the paper's own SQL on that clock), until the job's last task
ends, for every task the scheduler sees run (``operator_tasks``: the tasks that will be killed,
evicted, failed or lost too, not only those that finish; the job's task count n is theirs, known at
submission). The clock is the job's wall clock: seconds since its origin, the earliest first
SCHEDULE of its tasks. At a decision W a task that started at s (``operator_tasks.start_us``) has
run W - s, has ended iff s + its latency <= W, is not seen at all before s; a copy launched at W
starts at W (stragglers/prediction/engine/draws.py ``task_ends``). Every decision time is a function
of what has happened by then: t0 (a share of the tasks has finished), each time a further
``clock_finished_percent`` of the job's tasks have finished, and every ``clock_interval_s`` while
tasks run, that interval doubling after every ``clock_doubling_after`` timed decisions. No decision
reads what happens after it: tau, a final latency, the job's end, a later task's progress
(tests/test_future_cannot_change_past.py rewrites a job's future and asserts every earlier decision
is bit-identical).

``decision_clock="task_clock"`` is the same clock with every task started at the origin: the
paper's common task-time clock, where a decision "at t" reads each task i as of its own start
s_i + min(t, y_i) while a copy of it starts at s_i + t, so a copy of an early task is launched
with knowledge of later tasks' progress (it reads the future; kept to measure what that did,
docs/EVALUATION.md). Its tables shadow the warehouse's for the evaluation (``clock_tables``).

``decision_clock="legacy_grid"`` switches the paper's grid on instead, whose
step is cut from the true tau, then steps to the job's end spaced by its last latency, on features
repeated from the last row before tau (``protocol.adapt_job``). It reads the future too.

The paper's protocols (``threshold="oracle"``) keep the paper's grid (``job_checkpoints``).
"""

from __future__ import annotations

import contextlib
from typing import Iterator

import duckdb
import pandas as pd

from stragglers.settings.prediction import EvaluationSettings
from stragglers.settings.warehouse import SelectionSettings, WarehouseSettings
from stragglers.warehouse.freshness import recorded_settings, shadow_tables

#: (decision times, features) the replay reads: the paper's grid, the operator's clock
PAPER_TABLES = ("job_checkpoints", "checkpoint_features")
ONLINE_TABLES = ("operator_checkpoints", "operator_checkpoint_features")
#: the tasks each grid's tables are built on: the paper's finished tasks (`tasks`), or every task the
#: scheduler sees run (`operator_tasks`: those that will be killed, evicted, failed or lost too)
TASKS_OF = {**{t: "tasks" for t in PAPER_TABLES}, **{t: "operator_tasks" for t in ONLINE_TABLES}}


#: the clock tables the task clock rebuilds (every task started at the job's origin), in build order
TASK_CLOCK_TABLES = ("operator_checkpoints", "operator_event_features", "operator_checkpoint_features")


def uses_online_clock(s: EvaluationSettings) -> bool:
    """True when the replay decides on the operator's clock (the wall clock, or the task clock)."""
    return s.threshold == "online" and s.decision_clock in ("online", "task_clock")


@contextlib.contextmanager
def clock_tables(con: duckdb.DuckDBPyConnection, trace: str, s: EvaluationSettings) -> Iterator[None]:
    """Inside the block, the operator's clock tables are those of ``s``' clock: the warehouse's (the
    wall clock) or, for ``decision_clock="task_clock"``, temporary tables that shadow them, built by
    the same SQL from ``operator_tasks`` with every start at 0 (the warehouse is not modified)."""
    if not (s.threshold == "online" and s.decision_clock == "task_clock"):
        yield
        return
    built = recorded_settings(con, "operator_checkpoints", trace)
    if built is None:
        raise LookupError(f"operator_checkpoints of trace {trace!r} has no recorded settings: materialize "
                          f"checkpoint_features first")
    with shadow_tables(con, SelectionSettings(**built), TASK_CLOCK_TABLES, trace, built,
                       first={"operator_tasks": "SELECT * REPLACE (0::BIGINT AS start_us) FROM main.operator_tasks"}):
        yield


def grid_tables(s: EvaluationSettings) -> tuple[str, str]:
    """(the decision-time table, the feature table) the evaluation under ``s`` reads."""
    return ONLINE_TABLES if uses_online_clock(s) else PAPER_TABLES


def next_timed_decision(t0: float, t: float, interval_s: int, doubling_after: int) -> float:
    """The first timed decision of the online clock after time t (s): the offsets from t0 are those of
    sql/operator_checkpoints.sql (interval I for the first B = ``doubling_after`` ticks, 2I for the
    next B, ...: block b starts at B I (2^b - 1)), in whole microseconds as there (a decision at a
    tick is at the tick, not a float's width before it). Known at t: it depends on t0 and t only."""
    t0_us, t_us, gap0 = round(t0 * 1e6), round(t * 1e6), int(interval_s) * 1_000_000
    if t_us < t0_us:
        return (t0_us + gap0) / 1e6
    since, b = t_us - t0_us, 0
    while doubling_after * gap0 * (2 ** (b + 1) - 1) <= since:
        b += 1
    start, gap = doubling_after * gap0 * (2 ** b - 1), gap0 * 2 ** b
    return (t0_us + start + ((since - start) // gap + 1) * gap) / 1e6


def clock_caption(finished_percent: int | None = None, interval_s: int | None = None,
                  doubling_after: int | None = None) -> str:
    """The online clock in words for the report (the settings' defaults where not given)."""
    def value(name, given):
        return WarehouseSettings.model_fields[name].default if given is None else given

    pct, every, double = (value("clock_finished_percent", finished_percent), value("clock_interval_s", interval_s),
                          value("clock_doubling_after", doubling_after))
    return (f"decisions on an online clock: each time a further {pct}% of the job's tasks have finished and "
            f"every {every} s while tasks run (the interval doubling after every {double}), until the last "
            f"task ends; the threshold and the features as known at each decision; the replay sees every task "
            f"of the job, those that will be killed, evicted, failed or lost too (a copy of one buys nothing)")


def evaluable_jobs(con: duckdb.DuckDBPyConnection, trace: str, min_finished: int,
                   checkpoints: str = "job_checkpoints") -> tuple[pd.DataFrame, pd.DataFrame]:
    """(jobs to replay: job_id, tau_s, n_tasks, n_cp; jobs skipped: job_id, reason), by job_id, on the
    decision times of table ``checkpoints`` (the paper's grid, or operator_checkpoints) and the tasks
    they are built on (clock.TASKS_OF)."""
    clock = con.execute(f"""
        SELECT c.job_id, any_value(c.tau_s) AS tau_s, any_value(c.n_finished) AS n_finished,
               count(*) AS n_cp, any_value(t.n_tasks) AS n_tasks
        FROM {checkpoints} c
        LEFT JOIN (SELECT job_id, count(*) AS n_tasks FROM {TASKS_OF[checkpoints]} WHERE trace = ? GROUP BY job_id) t
               USING (job_id)
        WHERE c.trace = ? GROUP BY c.job_id ORDER BY c.job_id""", [trace, trace]).df()
    if clock.empty:
        raise LookupError(f"no {checkpoints} rows for trace {trace!r}: materialize checkpoint_features first")
    few = clock.n_finished < min_finished
    no_cp = ~few & (clock.n_cp < 2)
    skipped = pd.concat([
        pd.DataFrame({"job_id": clock.job_id[few],
                      "reason": [f"{n} finished tasks < min_finished" for n in clock.n_finished[few]]}),
        pd.DataFrame({"job_id": clock.job_id[no_cp], "reason": "no checkpoint between t0 and tau"}),
    ]).sort_values("job_id", ignore_index=True)
    jobs = clock[~few & ~no_cp][["job_id", "tau_s", "n_tasks", "n_cp"]].reset_index(drop=True)
    jobs["n_tasks"] = jobs["n_tasks"].fillna(0).astype(int)
    return jobs, skipped
