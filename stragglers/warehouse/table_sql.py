"""Which SQL file builds a table for the trace's format, and the parameters it is rendered with."""

from __future__ import annotations

import duckdb

from stragglers import SQL_DIR
from stragglers.settings.warehouse import SelectionSettings
from stragglers.warehouse.staged_parts import missing_parts, usage_absent_reason


#: The operator's features: the paper's SQL files (one construction) on the operator's decision
#: clock (sql/operator_checkpoints.sql) instead of the paper's grid, for every task the scheduler
#: sees (sql/operator_tasks.sql) instead of the finished ones: table -> (SQL file, parameters).
#: A task starts at ``task_start`` on the clock (sql/operator_checkpoints.sql): on the operator's, at its
#: start on its job's wall clock (operator_tasks.start_us); on the paper's grid every task at 0.
OPERATOR_FEATURE_TABLES = {
    "operator_event_features": ("event_features", {"checkpoints": "operator_checkpoints", "tasks": "operator_tasks",
                                                   "task_start": "start_us"}),
    "operator_checkpoint_features": ("checkpoint_features", {"checkpoints": "operator_checkpoints",
                                                             "event_features": "operator_event_features",
                                                             "tasks": "operator_tasks", "task_start": "start_us"}),
    "operator_checkpoints": ("operator_checkpoints", {"task_start": "start_us"}),
}


#: The tables the feature SQL files read by default (the paper's: its grid, its finished tasks).
GRID_TABLES = {"checkpoints": "job_checkpoints", "event_features": "event_features", "tasks": "tasks",
               "task_start": "0"}


def table_params(con: duckdb.DuckDBPyConnection, settings: SelectionSettings, table: str | None = None,
                 **extra) -> dict:
    """The SQL parameters of a table build: the settings', whether the trace has usage (a partial
    mirror has none: sql/task_outcomes.sql, sql/selection_funnel.sql), the grid tables ``table``
    reads (the paper's, or the operator's clock for OPERATOR_FEATURE_TABLES), and ``extra``."""
    grid = GRID_TABLES | OPERATOR_FEATURE_TABLES.get(table, (None, {}))[1]
    return settings.sql_params() | grid | {
        "has_usage": "false" if usage_absent_reason(con, settings.trace) else "true",
        "task_event_parts_missing": missing_parts(con, settings.trace, "task_events"),
        "job_slice": ALL_JOBS, "machine_slice": ALL_JOBS} | extra


#: The condition ``${job_slice}`` stands for in an unsliced run (and in the inputs digest: the
#: slices change how a table is built, never its rows).
ALL_JOBS = "true"


def sql_name(table: str, settings: SelectionSettings) -> str:
    """The SQL file building ``table`` for the trace's format (its variant, e.g. ``__alibaba``;
    tables without one, like tasks, job_checkpoints, selection_funnel, share the file)."""
    return settings.format.sql_name(OPERATOR_FEATURE_TABLES.get(table, (table,))[0], SQL_DIR)
