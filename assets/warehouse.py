"""DuckDB SQL stages: staging views, jobs, tasks, the funnel and checkpoint features,
each followed by a blocking Great Expectations check."""


import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator

import dagster as dg
import duckdb
from dagster_duckdb import DuckDBResource

from stragglers.advice.spark import ANSWER_DIR as SPARK_ANSWER_DIR, DEFAULT_OUT as SPARK_CONF, mark_stale
from stragglers.settings import SelectionSettings
from stragglers.warehouse.build import (build_features, build_funnel, build_jobs, build_tasks, features_table,
                                        grid_coverage, step_tables)
from stragglers.warehouse import freshness, locate, progress, staged_parts, staging
from .resources import PipelineSettings

from .checks import table_check
from .common import automated_asset, connected, google_format, md_table, preview

RAW_CHECK_ROWS = 200_000  # raw staging checks look at the first rows of each table (reported)


@automated_asset(deps=["raw_trace"], group_name="warehouse", kinds={"duckdb"})
def staged_trace(context: dg.AssetExecutionContext, nurd: PipelineSettings,
                 duckdb: DuckDBResource) -> dg.MaterializeResult:
    """Typed staging views over the raw trace files (read_csv with explicit column names and types; empty field =
    NULL). DuckDB reads the gzip parts directly, out of core. Spark event logs (NURD_TRACE=spark_eventlog): every
    log under NURD_TRACE_URL read into the stg_spark_* tables (stragglers/warehouse/spark_staging.py; bad lines as
    NURD_ON_BAD_ROWS says, skipped files counted in table quarantine)."""
    s = nurd.selection()
    if s.format.layout == "spark":
        # new logs: the answer made from the previous ones is no longer current, whatever this run does
        for stale in mark_stale(nurd.data_path / SPARK_ANSWER_DIR / SPARK_CONF):
            context.log.info(f"marked {stale} stale: the logs are being staged again")
    with connected(nurd, duckdb) as con:
        n_parts = staging.stage_trace(con, nurd.raw_path, s)
        views = staging.staged_tables(s)
        absent = {t: "no parts in the raw trace (partial mirror)" for t, n in n_parts.items() if n == 0}
        usage_note = staged_parts.usage_absent_reason(con, s.trace)
        inputs = freshness.recorded_inputs(con, "staged_trace", s.trace)
        with progress.progress_to(context.log.info):   # counting every part: its progress in the run's log
            counts, counted = staging.count_staged_rows(con, s.trace, views)   # same files: not counted again
        if not counted:
            context.log.info("staged_trace: raw files unchanged since the last count")
        quarantined = _rows(con, locate.QUARANTINE, s.trace)
        parts_note = staged_parts.parts_note(con, s.trace)
        counts |= staging.format_counts(con, s)
    meta = counts | {"trace": s.trace, "on_bad_rows": s.on_bad_rows, "quarantined_rows": quarantined,
                     "tables_absent": ", ".join(absent) or "none"}
    if parts_note:
        # normal situations (a gap between parts, a mirror starting later, parts with no rows): said, not fatal
        context.log.warning(parts_note)
        meta["parts"] = dg.MetadataValue.md(parts_note)
    if usage_note:
        context.log.warning(usage_note)
        meta["usage"] = dg.MetadataValue.md(usage_note)
    return dg.MaterializeResult(metadata=meta, data_version=dg.DataVersion(inputs))


@dataclass(frozen=True)
class BuiltStep:
    con: duckdb.DuckDBPyConnection   # open until the step's ``with`` block ends
    selection: SelectionSettings
    rebuilt: bool
    version: str                      # the data version: the digests of the step's tables' inputs


@contextmanager
def _built(context, nurd: PipelineSettings, duckdb: DuckDBResource, step: str, build) -> Iterator[BuiltStep]:
    """The warehouse after SQL step ``step``: ``build(con, selection)`` ran unless every table of the
    step was built from the same raw files, settings and SQL (then the rows would be identical)."""
    s = nurd.selection()
    with connected(nurd, duckdb) as con:
        tables = step_tables(step, s)
        rebuilt = not freshness.tables_current(con, tables, s)
        if rebuilt:
            with progress.progress_to(context.log.info):   # a sliced step's progress in the run's log
                build(con, s)
        else:
            context.log.info(f"{step}: up to date (same raw files, settings and SQL as its last build): not rebuilt")
        yield BuiltStep(con, s, rebuilt, freshness.digest([freshness.recorded_inputs(con, t, s.trace) for t in tables]))


def _rows(con, table: str, trace: str) -> int:
    return con.execute(f"SELECT count(*) FROM {table} WHERE trace = ?", [trace]).fetchone()[0]


@automated_asset(deps=["staged_trace"], group_name="warehouse", kinds={"duckdb"})
def jobs(context: dg.AssetExecutionContext, nurd: PipelineSettings, duckdb: DuckDBResource) -> dg.MaterializeResult:
    """Production MapReduce-style jobs (sql/jobs.sql): production by the configured rule (max scheduling class >= 1,
    or any task priority 9-11) with >= min_tasks tasks."""
    with _built(context, nurd, duckdb, "jobs", build_jobs) as step:
        con, s = step.con, step.selection
        meta = {"dagster/row_count": _rows(con, "jobs", s.trace), "preview": preview(con, "jobs", s.trace),
                "quarantined_rows": _rows(con, locate.QUARANTINE, s.trace)}
    return dg.MaterializeResult(metadata=meta | {"production_rule": s.production_rule, "min_tasks": s.min_tasks,
                                                 "rebuilt": step.rebuilt}, data_version=dg.DataVersion(step.version))


@automated_asset(deps=["jobs"], group_name="warehouse", kinds={"duckdb"})
def tasks(context: dg.AssetExecutionContext, nurd: PipelineSettings, duckdb: DuckDBResource) -> dg.MaterializeResult:
    """Finished tasks of the selected jobs (sql/tasks.sql): latency from the first SCHEDULE to the final FINISH,
    evictions and failures, is_straggler against the job's quantile. Excluded tasks are counted by reason in
    task_outcomes."""
    with _built(context, nurd, duckdb, "tasks", build_tasks) as step:
        con, s = step.con, step.selection
        outcomes = con.execute("SELECT outcome, count(*) AS tasks FROM task_outcomes WHERE trace = ? "
                               "GROUP BY outcome ORDER BY tasks DESC", [s.trace]).df()
        meta = {"dagster/row_count": _rows(con, "tasks", s.trace), "outcomes": md_table(outcomes),
                "preview": preview(con, "tasks", s.trace)}
    return dg.MaterializeResult(metadata=meta | {"quantile": s.quantile, "rebuilt": step.rebuilt},
                                data_version=dg.DataVersion(step.version))


@automated_asset(deps=["tasks"], group_name="warehouse", kinds={"duckdb"})
def selection_funnel(context: dg.AssetExecutionContext, nurd: PipelineSettings,
                     duckdb: DuckDBResource) -> dg.MaterializeResult:
    """Jobs and tasks before and after every filter of the selection, by reason."""
    with _built(context, nurd, duckdb, "selection_funnel", build_funnel) as step:
        funnel = step.con.execute("SELECT stage, reason, kept, jobs, tasks FROM selection_funnel WHERE trace = ? "
                                  "ORDER BY step, reason", [step.selection.trace]).df()
    return dg.MaterializeResult(metadata={"funnel": md_table(funnel), "dagster/row_count": len(funnel),
                                          "rebuilt": step.rebuilt}, data_version=dg.DataVersion(step.version))


@automated_asset(deps=["tasks"], group_name="warehouse", kinds={"duckdb"})
def checkpoint_features(context: dg.AssetExecutionContext, nurd: PipelineSettings,
                        duckdb: DuckDBResource) -> dg.MaterializeResult:
    """Per-checkpoint features of every finished task (sql/checkpoint_features.sql), min-max normalized per job;
    `observed` mode (default) uses only what was visible at the checkpoint, `reference` mode the authors' leaky
    construction. Also job_checkpoints. On a trace without task_usage (partial mirror) the usage features are 0 and
    the metadata says so: only the time-only rules use these rows then."""
    started = time.perf_counter()
    with _built(context, nurd, duckdb, "checkpoint_features", build_features) as step:
        con, s = step.con, step.selection
        no_usage = staged_parts.usage_absent_reason(con, s.trace)
        per_job = con.execute("""SELECT count(DISTINCT job_id) AS jobs, avg(n) AS mean_checkpoints,
            max(n) AS max_checkpoints FROM (SELECT job_id, count(*) AS n FROM job_checkpoints WHERE trace = ?
            GROUP BY job_id)""", [s.trace]).df()
        grids, table = grid_coverage(con, s), features_table(s)
        meta = {"dagster/row_count": _rows(con, table, s.trace), "feature_mode": s.feature_mode, "table": table,
                "checkpoint_grid": s.checkpoint_grid if s.is_google_format else "equal (Alibaba)",
                "jobs_per_grid": md_table(grids),
                "features": ", ".join(s.format.columns), "checkpoints": md_table(per_job),
                "preview": preview(con, table, s.trace, 5),
                "seconds": round(time.perf_counter() - started, 2), "rebuilt": step.rebuilt}
    if no_usage:
        context.log.warning(no_usage)
        meta["usage"] = dg.MetadataValue.md(no_usage)
    return dg.MaterializeResult(metadata=meta, data_version=dg.DataVersion(step.version))


def _fewest_finished(con, trace: str, default: int) -> int:
    row = con.execute("SELECT min(n) FROM (SELECT count(*) AS n FROM tasks WHERE trace = ? GROUP BY job_id)",
                      [trace]).fetchone()
    return int(row[0]) if row and row[0] else default


checks = [
    table_check(staged_trace, "raw_job_events", table="stg_job_events", max_rows=RAW_CHECK_ROWS,
                applies=google_format, description="GX suite raw_job_events on the staged job_events (first rows)."),
    table_check(staged_trace, "raw_task_events", table="stg_task_events", max_rows=RAW_CHECK_ROWS,
                applies=google_format, description="GX suite raw_task_events on the staged task_events (first rows)."),
    table_check(staged_trace, "raw_task_usage", table="stg_task_usage", max_rows=RAW_CHECK_ROWS,
                applies=google_format, needs_usage=True,
                description="GX suite raw_task_usage on the staged task_usage (first rows)."),
    table_check(jobs, "jobs", params=lambda n: {"min_tasks": n.min_tasks}),
    # the share bound is sized for the smallest job in `tasks`: a real job of >= min_tasks tasks may
    # have only a few finished inside the window (normal on a partial trace)
    table_check(tasks, "tasks",
                params=lambda n: {"quantile": n.quantile},
                warehouse_params=lambda n, con: {"min_tasks": _fewest_finished(con, n.trace, n.min_tasks)}),
    table_check(checkpoint_features, "checkpoint_features", table=features_table,
                params=lambda n: {"features": list(n.selection().format.columns)}),
]
