"""Run a table's SQL file against the DuckDB warehouse.

A SELECT whose rows replace the trace's rows of the table of the same name, in
one transaction, so a crash never leaves a half-written table visible; sliced
by job or machine ids where its SQL says so, with the settings and inputs it
was built from recorded beside it (ledger.py).
"""

from __future__ import annotations

import re

import duckdb

from stragglers.settings.failpoints import failpoint
from stragglers.warehouse.freshness import record_settings, table_inputs
from stragglers.warehouse.progress import SliceProgress, statement_progress
from stragglers.warehouse.read_errors import located_errors
from stragglers.settings.warehouse import SelectionSettings
from stragglers.warehouse.slicing import job_slices, machine_slices
from stragglers.warehouse.sql_files import render, sql_text
from stragglers.warehouse.storage import table_exists, transaction
from stragglers.warehouse.table_sql import ALL_JOBS, sql_name, table_params


_IDENT = re.compile(r"^[a-z_][a-z0-9_]*$")


def replace_trace_rows(con: duckdb.DuckDBPyConnection, table: str, select_sql: str | list[str], trace: str,
                       settings: dict | None = None, inputs: str | None = None, unit: str = "job ids") -> int:
    """Replace ``table``'s rows of ``trace`` by the rows of ``select_sql`` in one transaction,
    recording the ``settings`` they were built with (table ``table_settings``). A list: the
    slices of one query (build_table), inserted one after the other in the same transaction."""
    if not _IDENT.match(table):
        raise ValueError(f"bad table name {table!r}")
    slices = [select_sql] if isinstance(select_sql, str) else list(select_sql)
    select_sql = slices[0]
    with transaction(con):
        if not table_exists(con, table):
            con.execute(f"CREATE TABLE {table} AS SELECT * FROM ({select_sql}) LIMIT 0")
        else:
            # traces live side by side: a trace with other columns (Alibaba's features)
            # widens the table; other traces' rows hold NULL there
            have = {r[0] for r in con.execute(f"DESCRIBE {table}").fetchall()}
            for name, dtype, *_ in con.execute(f"DESCRIBE {select_sql}").fetchall():
                if name not in have:
                    con.execute(f'ALTER TABLE {table} ADD COLUMN "{name}" {dtype}')
        con.execute(f"DELETE FROM {table} WHERE trace = ?", [trace])
        if len(slices) == 1:
            with statement_progress(con, table):
                con.execute(f"INSERT INTO {table} BY NAME {select_sql}")
        progress = SliceProgress(table, len(slices), unit=unit)
        for i, sql in enumerate(slices if len(slices) > 1 else []):
            con.execute(f"INSERT INTO {table} BY NAME {sql}")
            progress(i + 1)
        n = con.execute(f"SELECT count(*) FROM {table} WHERE trace = ?", [trace]).fetchone()[0]
        if settings is not None:
            record_settings(con, table, trace, settings, inputs)
        failpoint(f"inside:{table}")
    failpoint(f"after:{table}")
    return int(n)


def build_table(con: duckdb.DuckDBPyConnection, table: str, settings: SelectionSettings, **extra) -> int:
    """Replace the trace's rows of ``table`` by its SQL file's rows (the trace format's variant).
    A query with a ``${job_slice}`` condition runs once per slice of job ids (job_slices), in
    one transaction: the same rows, in the same order, in memory bounded by the slice."""
    params = table_params(con, settings, table, **extra)
    name = sql_name(table, settings)
    text = sql_text(name)
    key, unit = ("job_slice", "job ids") if "${job_slice}" in text else ("machine_slice", "machine ids")
    slices = (job_slices(con, settings.trace) if key == "job_slice"
              else machine_slices(con, settings.trace) if "${machine_slice}" in text else [ALL_JOBS])
    with located_errors(con, table):
        return replace_trace_rows(con, table, [render(name, **(params | {key: c})) for c in slices],
                                  settings.trace, settings=settings.as_dict(),
                                  inputs=table_inputs(con, table, settings, **extra), unit=unit)


def replace_trace_frame(con: duckdb.DuckDBPyConnection, table: str, df, trace: str) -> int:
    """Replace ``table``'s rows of ``trace`` by the rows of a DataFrame (one transaction),
    for tables computed in Python (node ranking, failure prediction)."""
    frame = df.assign(trace=trace)[["trace", *[c for c in df.columns if c != "trace"]]]
    con.register("_frame", frame)
    try:
        return replace_trace_rows(con, table, "SELECT * FROM _frame", trace)
    finally:
        con.unregister("_frame")
