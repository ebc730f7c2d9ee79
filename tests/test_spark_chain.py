"""Spark event logs through the learned methods' chain: the selection (a job is a stage attempt of at
least min_tasks tasks, a task is a TaskSet index, its lives its attempts), the operator's decisions on
the wall clock of each stage and the features the driver knows at each (sql/*__spark.sql), built by
the warehouse from the staged tables (docs/TRACES.md, "Spark event logs: the learned methods' chain")."""

from __future__ import annotations

import math
import shutil

import duckdb
import pytest

from stragglers.prediction.evaluation.run import not_applicable, selected_jobs
from stragglers.settings.protocols import typed_settings
from stragglers.settings import Settings
from stragglers.trace_formats import SPARK_FEATURES, trace_format
from stragglers.warehouse.build import build_features, build_selection, step_tables
from stragglers.warehouse.spark_staging import TRACE, stage_spark
from tests import spark_logs

FEATURES = ", ".join(SPARK_FEATURES)


def build(con: duckdb.DuckDBPyConnection, **settings) -> dict[str, int]:
    """The selection and the features of the staged logs, with the run's typed settings."""
    _, sel = typed_settings(Settings(trace=TRACE, **settings))
    return build_selection(con, sel) | build_features(con, sel)


def rows(con, sql: str, params=None) -> list[tuple]:
    return con.execute(sql, params).fetchall()


@pytest.fixture(scope="module")
def real(tmp_path_factory, spark_realdata):
    """The real logs staged and built into one warehouse (the module's tests read it, never write)."""
    path = tmp_path_factory.mktemp("spark_chain") / "warehouse.duckdb"
    con = duckdb.connect(str(path))
    staged = stage_spark(con, spark_realdata, on_bad_rows="quarantine")
    built = build(con)
    yield con, path, staged, built
    con.close()


# --- the format -------------------------------------------------------------------------------

def test_the_format_declares_its_features_and_only_the_operators_protocol():
    fmt = trace_format(TRACE)
    assert fmt.columns == SPARK_FEATURES and fmt.sql_variant == "spark"
    ev, sel = typed_settings(Settings(trace=TRACE))
    # a stage lasts seconds: the format's own interval where the setting is left at its default
    assert sel.clock_interval_s == ev.clock_interval_s == fmt.clock_interval_s == 1
    assert typed_settings(Settings(trace=TRACE, clock_interval_s=5))[1].clock_interval_s == 5
    assert typed_settings(Settings(trace="synthetic"))[1].clock_interval_s == 300
    # no paper's grid: its features are not built, and its protocol says why in one line
    assert "checkpoint_features" not in step_tables("checkpoint_features", sel)
    paper = typed_settings(Settings(trace=TRACE))[0]
    why = not_applicable(TRACE, paper)
    assert why and "\n" not in why and "usage samples" in why
    operator = typed_settings(Settings(trace=TRACE, protocol="operator"))[0]
    assert not_applicable(TRACE, operator) is None


def test_a_task_is_its_lives_and_sparks_copy_is_not_a_task(tmp_path):
    """The hand-made application: task 1 fails once and is re-run, task 2's speculative copy wins."""
    logs = tmp_path / "logs"
    spark_logs.write(logs / "app-1", spark_logs.application("app-1"))
    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    stage_spark(con, logs, min_tasks=10)
    build(con, min_tasks=10)
    assert rows(con, "SELECT job_id, n_tasks, n_finished, job_name, stage_id FROM jobs") == [(1, 12, 12, "app-1", 0)]
    start = (spark_logs.T0 + 1000) * 1000
    lives = dict((task, rest) for task, *rest in rows(
        con, "SELECT task_id, first_schedule_us - ?, start_us, latency_us, finished, end_state FROM operator_tasks",
        [start]))
    assert len(lives) == 12   # the copy is not a task of its own
    # task 1: from its first launch to its second life's end, one failure on the way
    assert lives[1] == [10_000, 10_000, 1_507_000, True, "finished"]
    assert rows(con, "SELECT failures FROM task_outcomes WHERE task_id = 1") == [(1,)]
    # task 2: Spark's copy won; the original's own life ends killed, without a latency of its own
    assert lives[2] == [20_000, 20_000, 1_014_000, False, "killed"]
    assert rows(con, "SELECT count(*) FROM tasks WHERE task_id = 2") == [(0,)]
    funnel = dict(rows(con, "SELECT reason, tasks FROM selection_funnel"))
    assert funnel["spark_speculative_copies"] == 1 and funnel["killed"] == 1 and funnel["finished"] == 11
    assert funnel["input"] == 12 + 3 and funnel["too_few_tasks"] == 3 and funnel["selected"] == 12


# --- the real logs ----------------------------------------------------------------------------

def test_the_tables_build_on_the_real_logs_one_job_per_selected_stage_attempt(real):
    con, _, staged, built = real
    assert staged["selected_stage_attempts"] == 89
    assert built["jobs"] == 89
    assert rows(con, """SELECT count(*) FROM jobs j JOIN stg_spark_stages s USING (log_id, stage_id, stage_attempt)
                        WHERE j.trace = ? AND s.selected AND j.n_tasks = s.tasks""", [TRACE]) == [(89,)]
    # every launched task of a selected stage attempt is the operator's, once
    launched = rows(con, """SELECT count(DISTINCT (t.log_id, t.stage_id, t.stage_attempt, t.task_index))
                            FROM stg_spark_tasks t JOIN jobs j USING (log_id, stage_id, stage_attempt)""")[0][0]
    assert built["operator_tasks"] == launched
    assert rows(con, "SELECT min(start_us), count(*) FILTER (WHERE latency_us < 0) FROM operator_tasks "
                     "WHERE trace = ?", [TRACE]) == [(0, 0)]
    # every (decision, task) of every evaluable job has its features, each in [0, 1]
    per_job = rows(con, """SELECT count(*) FROM operator_checkpoint_features f
                           JOIN (SELECT job_id, count(*) AS n FROM operator_tasks GROUP BY job_id) t USING (job_id)
                           JOIN (SELECT job_id, count(*) AS k FROM operator_checkpoints GROUP BY job_id) c
                             USING (job_id)
                           GROUP BY job_id, t.n, c.k HAVING count(*) <> t.n * c.k""")
    assert per_job == []
    bounds = rows(con, f"SELECT min(LEAST({FEATURES})), max(GREATEST({FEATURES})) FROM operator_checkpoint_features")
    assert bounds == [(0.0, 1.0)]


def test_the_funnel_counts_every_stage_attempt_and_every_task(real):
    con, _, staged, _ = real
    funnel = {reason: (jobs, tasks) for reason, jobs, tasks in rows(
        con, "SELECT reason, jobs, tasks FROM selection_funnel WHERE trace = ?", [TRACE])}
    assert funnel["input"][0] == staged["stage_attempts"] == 328
    assert funnel["too_few_tasks"][0] + funnel["selected"][0] == funnel["input"][0]
    assert funnel["too_few_tasks"][1] + funnel["selected"][1] == funnel["input"][1]
    ends = ("finished", "failed", "killed", "still_running", "never_launched")
    assert sum(funnel[r][1] for r in ends if r in funnel) == funnel["selected"][1]
    assert funnel["tasks"][1] == funnel["finished"][1]


def test_decisions_are_on_the_wall_clock_of_each_stage(real):
    con, *_ = real
    n_jobs, n_decisions = rows(con, "SELECT count(DISTINCT job_id), count(*) FROM operator_checkpoints")[0]
    assert n_jobs == 87 and n_decisions > 2 * n_jobs   # the 2 stage attempts without a success have no t0
    lives = {}
    for job, start, end, finished in rows(con, "SELECT job_id, start_us, start_us + latency_us, finished "
                                               "FROM operator_tasks"):
        lives.setdefault(job, []).append((start, end, finished))
    for job, k, at, n_tasks in rows(con, "SELECT job_id, k, checkpoint_us, n_tasks FROM operator_checkpoints"):
        done = sorted(e for _, e, f in lives[job] if f)
        t0 = done[max(1, math.ceil(0.04 * n_tasks)) - 1]   # in wall time: start + latency
        assert at >= t0 and (k > 0 or at == t0), (job, k)
        assert k == 0 or any(s <= at < e for s, e, _ in lives[job]), (job, k)   # while some task runs


def test_no_feature_at_a_decision_reads_what_happens_after_it(real, tmp_path):
    """Rewrite every attempt's end after time T in one application (later, other metrics) and
    build again: every feature at a decision up to T is the same, bit for bit."""
    con, path, *_ = real
    # T: the middle decision of the application's job with the most decisions
    log, job, T = rows(con, """SELECT j.log_id, c.job_id, o.origin_us + c.checkpoint_us
        FROM operator_checkpoints c JOIN jobs j USING (job_id)
        JOIN (SELECT job_id, min(first_schedule_us) AS origin_us FROM operator_tasks GROUP BY job_id) o USING (job_id)
        WHERE c.k = (SELECT count(*) FROM operator_checkpoints x WHERE x.job_id = c.job_id) // 2
        ORDER BY (SELECT count(*) FROM operator_checkpoints x WHERE x.job_id = c.job_id) DESC, c.job_id
        LIMIT 1""")[0]
    before_sql = f"""SELECT f.job_id, f.task_id, f.k, f.checkpoint_s, f.is_finished, {FEATURES}
        FROM operator_checkpoint_features f JOIN jobs j USING (job_id)
        JOIN operator_checkpoints c USING (job_id, k)
        JOIN (SELECT job_id, min(first_schedule_us) AS origin_us FROM operator_tasks GROUP BY job_id) o USING (job_id)
        WHERE j.log_id = {log} AND o.origin_us + c.checkpoint_us {{}} {T} ORDER BY ALL"""
    copy = tmp_path / "rewritten.duckdb"
    con.execute("CHECKPOINT")
    shutil.copy(path, copy)
    other = duckdb.connect(str(copy))
    changed = other.execute("""UPDATE stg_spark_tasks SET finish_us = finish_us + 3_000_000,
                                   executor_run_ms = executor_run_ms * 7 + 11, input_bytes = input_bytes * 5 + 13,
                                   shuffle_read_bytes = shuffle_read_bytes * 3 + 17
                               WHERE log_id = ? AND finish_us > ?""", [log, T]).fetchone()[0]
    assert changed > 100
    build(other)
    past = rows(con, before_sql.format("<="))
    assert len(past) > 1000 and rows(other, before_sql.format("<=")) == past
    # the rewrite reached the features after T (the comparison above could have failed)
    assert rows(other, before_sql.format(">")) != rows(con, before_sql.format(">"))
    other.close()


def test_the_operators_replay_loads_every_evaluable_stage(real):
    con, *_ = real
    operator = typed_settings(Settings(trace=TRACE, protocol="operator"))[0]
    jobs, skipped = selected_jobs(con, TRACE, operator)
    assert len(jobs) + len(skipped) == 87 and len(jobs) > 80
    with pytest.raises(ValueError, match="paper's protocol does not apply to trace spark_eventlog"):
        selected_jobs(con, TRACE, typed_settings(Settings(trace=TRACE))[0])


def test_the_operators_evaluation_runs_on_every_evaluable_stage(real, tmp_path):
    """A rule and a method that learns from earlier jobs (its prior read from the operator's features),
    replayed end to end under the operator's protocol."""
    from stragglers.prediction.evaluation.run import evaluate, result_table
    from stragglers.prediction.replay.workers import EngineSettings

    con, path, *_ = real
    copy = tmp_path / "evaluated.duckdb"
    con.execute("CHECKPOINT")
    shutil.copy(path, copy)
    other = duckdb.connect(str(copy))
    operator = typed_settings(Settings(trace=TRACE, protocol="operator", workers=1))[0]
    jobs, _ = selected_jobs(other, TRACE, operator)
    out = evaluate(other, TRACE, ["flag_all", "survival_history"], operator,
                   engine=EngineSettings(exchange_dir=str(tmp_path / "exchange")))
    assert out.n_jobs == len(jobs) and out.skipped.empty
    per_method = dict(rows(other, f"SELECT method, count(DISTINCT job_id) FROM {result_table('job_metrics', operator)} "
                                  "WHERE trace = ? GROUP BY method", [TRACE]))
    assert per_method == {"flag_all": len(jobs), "survival_history": len(jobs)}
    other.close()
