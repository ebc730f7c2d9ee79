"""The provenance ledger (table ``table_settings``): the settings and the inputs digest each table
of a trace was built with, whether a table is current, and the error that names the asset to
materialize when it is not."""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
from datetime import datetime, timezone
from pathlib import Path

import duckdb

from stragglers.settings.warehouse import SelectionSettings
from stragglers.warehouse.sql_files import render
from stragglers.warehouse.storage import table_exists
from stragglers.warehouse.table_sql import sql_name, table_params


SETTINGS_TABLE = "table_settings"


def digest(obj) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()[:16]


@functools.cache
def code_digest(*packages: str) -> str:
    """The source of ``packages`` (dotted names; every .py file's bytes, read, not imported): what a
    result computed by that code is stale without, as a table is without its SQL."""
    rows = []
    for name in packages:
        for root in importlib.util.find_spec(name).submodule_search_locations:
            for path in sorted(Path(root).rglob("*.py")):
                rows.append([name, path.relative_to(root).as_posix(), hashlib.sha256(path.read_bytes()).hexdigest()])
    return digest(rows)


def record_settings(con: duckdb.DuckDBPyConnection, table: str, trace: str, settings: dict,
                    inputs: str | None = None) -> None:
    """Record the settings ``table``'s rows of ``trace`` were built with, and a digest of its
    inputs (call inside the table's transaction: both are visible together or not at all)."""
    con.execute(f"""CREATE TABLE IF NOT EXISTS {SETTINGS_TABLE} (trace VARCHAR, table_name VARCHAR,
                    settings JSON, inputs VARCHAR, built_at TIMESTAMP)""")
    con.execute(f"DELETE FROM {SETTINGS_TABLE} WHERE trace = ? AND table_name = ?", [trace, table])
    con.execute(f"INSERT INTO {SETTINGS_TABLE} VALUES (?, ?, ?, ?, ?)",
                [trace, table, json.dumps(settings, sort_keys=True), inputs,
                 datetime.now(timezone.utc).replace(tzinfo=None)])


def recorded_inputs(con: duckdb.DuckDBPyConnection, table: str, trace: str) -> str | None:
    """The inputs digest recorded with ``table`` of ``trace`` (None if never built)."""
    if not table_exists(con, SETTINGS_TABLE):
        return None
    row = con.execute(f"SELECT inputs FROM {SETTINGS_TABLE} WHERE trace = ? AND table_name = ?",
                      [trace, table]).fetchone()
    return row[0] if row else None


def files_digest(paths) -> str:
    """Names, sizes and modification times of the raw files (what identifies them without reading)."""
    rows = []
    for p in sorted(Path(x) for x in paths):
        st = p.stat()
        rows.append([str(p), st.st_size, st.st_mtime_ns])
    return digest(rows)


def table_inputs(con: duckdb.DuckDBPyConnection, table: str, settings: SelectionSettings, **extra) -> str:
    """What ``table`` of the trace is computed from: the staged raw files, the settings and the SQL.
    Equal digests mean equal rows (the SQL is deterministic), so the build can be skipped."""
    sql = render(sql_name(table, settings), **table_params(con, settings, table, **extra))
    return digest([recorded_inputs(con, "staged_trace", settings.trace), settings.as_dict(), sql])


def is_current(con: duckdb.DuckDBPyConnection, tables, settings: SelectionSettings) -> bool:
    """True if every table in ``tables`` was built from the current raw files, settings and SQL."""
    if recorded_inputs(con, "staged_trace", settings.trace) is None:
        return False
    return all(table_exists(con, t) and recorded_inputs(con, t, settings.trace) == table_inputs(con, t, settings)
               for t in tables)


def recorded_settings(con: duckdb.DuckDBPyConnection, table: str, trace: str) -> dict | None:
    """The settings ``table``'s rows of ``trace`` were built with; None if not recorded."""
    if not table_exists(con, SETTINGS_TABLE):
        return None
    row = con.execute(f"SELECT settings FROM {SETTINGS_TABLE} WHERE trace = ? AND table_name = ?",
                      [trace, table]).fetchone()
    return json.loads(row[0]) if row else None


class StaleTableError(LookupError):
    """A table is missing, or was built with other settings than the consumer's."""


def require_settings(con: duckdb.DuckDBPyConnection, table: str, trace: str, expected: dict, *,
                     asset: str) -> None:
    """Raise StaleTableError unless ``table`` of ``trace`` was built with ``expected`` settings,
    naming the asset to materialize."""
    if not table_exists(con, table):
        raise StaleTableError(f"table {table} does not exist in the warehouse: materialize asset {asset} "
                              f"(and its upstream assets) first")
    built = recorded_settings(con, table, trace)
    if built is None:
        raise StaleTableError(f"table {table} has no recorded settings for trace {trace!r} (built by an older "
                              f"version, or not built for this trace): re-materialize asset {asset}")
    differ = {k: (built.get(k), v) for k, v in expected.items() if built.get(k) != v}
    if differ:
        what = ", ".join(f"{k}={want!r} (table built with {k}={have!r})" for k, (have, want) in differ.items())
        raise StaleTableError(f"table {table} of trace {trace!r} was built with other settings than this run's: "
                              f"{what}; re-materialize asset {asset} with this run's settings")
