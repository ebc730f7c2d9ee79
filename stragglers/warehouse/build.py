"""Build the warehouse stage's tables from ``sql/`` in order: the selection (jobs -> task_outcomes
-> tasks -> selection_funnel) and the features (job_checkpoints -> task_attempts -> event streams
-> event_features -> checkpoint_features, and their twins on the operator's clock), from the
staged views (staging.py); each table by the SQL runner (runner.py)."""

from __future__ import annotations

import duckdb

from stragglers.warehouse.freshness import SETTINGS_TABLE, tables_current
from stragglers.warehouse.locate import TraceFormatError
from stragglers.warehouse.runner import build_table
from stragglers.settings.warehouse import CHECKPOINT_GRIDS, SelectionSettings
from stragglers.warehouse.slicing import sliced_source
from stragglers.warehouse.sql_files import create_view
from stragglers.warehouse.staging import check_events, check_usage
from stragglers.warehouse.storage import transaction


def step_tables(step: str, settings: SelectionSettings) -> tuple[str, ...]:
    """The tables each build step writes (what must be current for the step to be skipped)."""
    google = settings.is_google_format
    return {"jobs": ("task_lifecycle", "jobs") if google else ("jobs",),
            "tasks": ("usage_windows", "task_outcomes", "tasks") if google else ("task_outcomes", "tasks"),
            "selection_funnel": ("selection_funnel",),
            "checkpoint_features": ("job_checkpoints", "task_attempts", *EVENT_STREAM_TABLES, "event_features",
                                    "checkpoint_features", "operator_tasks", "operator_checkpoints", "operator_event_features",
                                    "operator_checkpoint_features")
            if google else ("job_checkpoints", *(("checkpoint_features",) if has_paper_grid(settings) else ()),
                            "operator_tasks",
                            "operator_checkpoints", "operator_checkpoint_features")}[step]


def has_paper_grid(settings: SelectionSettings) -> bool:
    """Whether the features on the paper's grid (checkpoint_features) are built: where the paper's
    protocol applies (not on Spark's logs, which have no usage samples; a Spark job's tau still
    comes from job_checkpoints)."""
    return not settings.format.paper_protocol_not_applicable


def features_table(settings: SelectionSettings) -> str:
    """The table of every task's features at every decision the trace's evaluations read first: the
    paper's grid's, or the operator's clock's where the paper's protocol does not apply."""
    return "checkpoint_features" if has_paper_grid(settings) else "operator_checkpoint_features"


def build_jobs(con: duckdb.DuckDBPyConnection, settings: SelectionSettings) -> int:
    """``jobs`` (Google: after ``task_lifecycle``, the one scan of task_events)."""
    if settings.is_google_format:
        with sliced_source(con, settings.trace, "task_lifecycle"):
            _lifecycle_checked(con, settings)
        create_view(con, "job_candidates", **settings.sql_params())
    return build_table(con, "jobs", settings)


def _lifecycle_checked(con: duckdb.DuckDBPyConnection, settings: SelectionSettings) -> None:
    """``task_lifecycle``, then the checks of the events it read (check_events)."""
    build_table(con, "task_lifecycle", settings)
    try:
        check_events(con, settings)
    except TraceFormatError:
        # no table built from the bad input stays behind (nor its record, which would call it current)
        with transaction(con):
            con.execute("DELETE FROM task_lifecycle WHERE trace = ?", [settings.trace])
            con.execute(f"DELETE FROM {SETTINGS_TABLE} WHERE trace = ? AND table_name = 'task_lifecycle'",
                        [settings.trace])
        raise


def build_tasks(con: duckdb.DuckDBPyConnection, settings: SelectionSettings) -> int:
    """``task_outcomes`` and ``tasks`` (Google: after ``usage_windows``, the one scan of task_usage).
    Without task_usage the ``no_usage`` exclusion does not apply (the funnel says so)."""
    if settings.is_google_format:
        check_usage(con, settings)
        build_table(con, "usage_windows", settings)
    build_table(con, "task_outcomes", settings)
    return build_table(con, "tasks", settings)


def build_funnel(con: duckdb.DuckDBPyConnection, settings: SelectionSettings) -> int:
    return build_table(con, "selection_funnel", settings)


def build_selection(con: duckdb.DuckDBPyConnection, settings: SelectionSettings) -> dict[str, int]:
    """jobs -> task_outcomes -> tasks -> selection_funnel, from the staged views."""
    counts = {"jobs": build_jobs(con, settings), "tasks": build_tasks(con, settings)}
    counts["selection_funnel"] = build_funnel(con, settings)
    return counts


def build_task_attempts(con: duckdb.DuckDBPyConnection, settings: SelectionSettings) -> int:
    """``task_attempts`` (every attempt of every job: machine, requests, end), unless current: the
    event features and the node and failure stages read the same table."""
    if tables_current(con, ("task_attempts",), settings):
        return int(con.execute("SELECT count(*) FROM task_attempts WHERE trace = ?", [settings.trace]).fetchone()[0])
    with sliced_source(con, settings.trace, "task_attempts"):
        return build_table(con, "task_attempts", settings)


#: The streams event_features reads that need every job (built once, before its slices).
EVENT_STREAM_TABLES = ("job_runs", "machine_streams")


def build_event_streams(con: duckdb.DuckDBPyConnection, settings: SelectionSettings) -> dict[str, int]:
    """``job_runs`` (per job: submit, end, name, latencies; sliced by job ids, job_events read once)
    then ``machine_streams`` (per machine: load, bad endings, history), the streams of every job
    that event_features (and its operator twin) read slice by slice."""
    with sliced_source(con, settings.trace, "job_runs", view="stg_job_events"):
        counts = {"job_runs": build_table(con, "job_runs", settings)}
    counts["machine_streams"] = build_table(con, "machine_streams", settings)
    return counts


def build_features(con: duckdb.DuckDBPyConnection, settings: SelectionSettings) -> dict[str, int]:
    """job_checkpoints -> (Google: task_attempts -> event_features) -> checkpoint_features, from
    ``tasks``. On a trace without usage the usage features have no value (0 after imputation);
    the event features (docs/EVENT_FEATURES.md) need only events, so every method can run on them."""
    counts = {"job_checkpoints": build_table(con, "job_checkpoints", settings)}
    if settings.is_google_format:
        counts["task_attempts"] = build_task_attempts(con, settings)
        counts |= build_event_streams(con, settings)
        counts["event_features"] = build_table(con, "event_features", settings)
    if has_paper_grid(settings):
        counts["checkpoint_features"] = build_table(con, "checkpoint_features", settings)
    # the same features on the operator's decision clock, until each job's last task ends, for every
    # task the scheduler sees run (those that will not finish too)
    counts["operator_tasks"] = build_table(con, "operator_tasks", settings)
    counts["operator_checkpoints"] = build_table(con, "operator_checkpoints", settings)
    if settings.is_google_format:
        counts["operator_event_features"] = build_table(con, "operator_event_features", settings)
    counts["operator_checkpoint_features"] = build_table(con, "operator_checkpoint_features", settings)
    return counts


def grid_coverage(con: duckdb.DuckDBPyConnection, settings: SelectionSettings) -> "pandas.DataFrame":
    """For each checkpoint grid choice: how many jobs of ``job_checkpoints`` get a checkpoint
    between t0 and tau (>= 2 checkpoints: evaluable), and their checkpoints (mean, max). Computed
    from each job's t0 and tau with job_checkpoints.sql's rule: checkpoints = max(1, ceil((tau - t0) / step))."""
    grids = CHECKPOINT_GRIDS if settings.is_google_format else (None,)
    parts = []
    for grid in grids:
        name = grid or f"equal ({settings.alibaba_steps} steps, Alibaba)"
        parts.append(f"""SELECT '{name}' AS grid, count(*) AS jobs,
                count(*) FILTER (WHERE n_cp >= 2) AS jobs_with_checkpoints, avg(n_cp) AS mean_checkpoints,
                max(n_cp) AS max_checkpoints
            FROM (SELECT greatest(1, ceil((c.tau_us - c.t0_us) / ({settings.step_us_sql(grid)})))::BIGINT AS n_cp
                  FROM (SELECT job_id, any_value(round(t0_s * 1e6))::BIGINT AS t0_us,
                               any_value(round(tau_s * 1e6))::BIGINT AS tau_us
                        FROM job_checkpoints WHERE trace = ? GROUP BY job_id) c)""")
    sql = " UNION ALL ".join(parts)
    return con.execute(sql, [settings.trace] * len(parts)).df()
