"""Bounded memory: a trace's jobs (or machines) in slices of about ``duckdb_slice_rows``
task_events rows, and the staging view a sliced step reads once into DuckDB's own storage."""

from __future__ import annotations

import logging
from contextlib import contextmanager

import duckdb

from stragglers.settings import Settings
from stragglers.warehouse.freshness import recorded_inputs, recorded_settings
from stragglers.warehouse.progress import progress_log, statement_progress
from stragglers.warehouse.read_errors import located_errors
from stragglers.warehouse.storage import SLICE_ROWS_VARIABLE, database_path
from stragglers.warehouse.table_sql import ALL_JOBS

_LOG = logging.getLogger(__name__)
_slices_cache: dict[tuple, list[str]] = {}


def slice_rows(con: duckdb.DuckDBPyConnection) -> int:
    """The connection's duckdb_slice_rows (configure), else the setting's default."""
    try:
        value = con.execute(f"SELECT getvariable('{SLICE_ROWS_VARIABLE}')").fetchone()[0]
    except duckdb.Error:
        value = None
    return int(value) if value else Settings().duckdb_slice_rows


def slice_count(con: duckdb.DuckDBPyConnection, trace: str) -> int:
    """How many slices of about slice_rows task_events rows the trace takes (its rows as counted
    by staged_trace, else counted here)."""
    counted = recorded_settings(con, "staged_trace:rows", trace) \
        if recorded_inputs(con, "staged_trace:rows", trace) == recorded_inputs(con, "staged_trace", trace) else None
    rows = (counted or {}).get("rows_stg_task_events")
    if rows is None:
        rows = con.execute("SELECT count(*) FROM stg_task_events").fetchone()[0]
    return max(1, -(-int(rows) // slice_rows(con)))


def job_slices(con: duckdb.DuckDBPyConnection, trace: str) -> list[str]:
    """Conditions on ``job_id`` that split the trace's jobs into consecutive ranges of about
    slice_rows task_events rows each (approximate quantiles of the events' job ids: a job never
    straddles two ranges), then the rows without a job id; [ALL_JOBS] when one slice holds them all.
    Each slice's query sees every row of its jobs, so a query whose state is per task or per job
    (a window partitioned by job, a GROUP BY job) gives the same rows slice by slice, and its
    ORDER BY job_id ... the same order. Computed once per staged trace and slice size."""
    staged = recorded_inputs(con, "staged_trace", trace)
    key = (database_path(con), trace, staged, slice_rows(con))
    if staged is not None and key in _slices_cache:
        return _slices_cache[key]
    n = slice_count(con, trace)
    if n <= 1:
        return [ALL_JOBS]
    fractions = ", ".join(f"{i / n!r}" for i in range(1, n))
    cuts = con.execute(f"SELECT approx_quantile(job_id, [{fractions}]) FROM stg_task_events").fetchone()[0]
    cuts = sorted(set(int(c) for c in cuts if c is not None))
    bounds = [None, *cuts, None]
    slices = [" AND ".join(([f"job_id >= {lo}"] if lo is not None else [])
                           + ([f"job_id < {hi}"] if hi is not None else [])) or ALL_JOBS
              for lo, hi in zip(bounds, bounds[1:])]
    slices.append("job_id IS NULL")
    _slices_cache[key] = slices
    return slices


def machine_slices(con: duckdb.DuckDBPyConnection, trace: str) -> list[str]:
    """Conditions on ``machine_id`` that split the trace's attempts (task_attempts) into as many
    consecutive ranges of machine ids as job_slices has slices (approximate quantiles: a machine
    never straddles two ranges), then the attempts without a machine; [ALL_JOBS] when the trace
    fits one slice. A query whose state is per machine (a window partitioned by machine) gives
    the same rows range by range."""
    n = slice_count(con, trace)
    if n <= 1:
        return [ALL_JOBS]
    fractions = ", ".join(f"{i / n!r}" for i in range(1, n))
    cuts = con.execute(f"SELECT approx_quantile(machine_id, [{fractions}]) FROM task_attempts WHERE trace = ?",
                       [trace]).fetchone()[0]
    bounds = [None, *sorted(set(int(c) for c in cuts or [] if c is not None)), None]
    return [" AND ".join(([f"machine_id >= {lo}"] if lo is not None else [])
                         + ([f"machine_id < {hi}"] if hi is not None else [])) or ALL_JOBS
            for lo, hi in zip(bounds, bounds[1:])] + ["machine_id IS NULL"]


@contextmanager
def sliced_source(con: duckdb.DuckDBPyConnection, trace: str, what: str, view: str = "stg_task_events"):
    """Inside the block, staging view ``view`` (gzip CSV parts) is read from a table holding its
    rows, written in one scan, when the trace takes more than one slice: the slices of the steps
    inside then scan DuckDB's own compressed storage (its zone maps skip the other jobs' row groups;
    job ids grow with time) instead of parsing every part once per slice. The table (``sliced_<view>``,
    in the warehouse file: compressed, unlike a temporary table, so it does not crowd the memory
    limit) is read through a temporary view that shadows ``view`` for this connection only
    (unqualified names look in temp first); both are dropped at the end. ``what``: the table
    being built, named by a read error."""
    with located_errors(con, what):   # the first read of the parts: a damaged one is named
        n = slice_count(con, trace)
    if n <= 1:
        yield
        return
    database = con.execute("SELECT current_database()").fetchone()[0]
    (progress_log.get() or _LOG.info)(f"{what}: {n} slices of job ids (duckdb_slice_rows="
                                       f"{slice_rows(con)}); {view} read once into table sliced_{view} first")
    copy = f'"{database}".main.sliced_{view}'
    with located_errors(con, what), statement_progress(con, f"{what}: reading {view} once"):
        con.execute(f'CREATE OR REPLACE TABLE {copy} AS SELECT * FROM "{database}".main.{view}')
    con.execute(f"CREATE OR REPLACE TEMP VIEW {view} AS SELECT * FROM {copy}")
    try:
        yield
    finally:
        con.execute(f"DROP VIEW IF EXISTS temp.main.{view}")
        con.execute(f"DROP TABLE IF EXISTS {copy}")
