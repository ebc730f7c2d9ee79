"""The warehouse file's storage: one transaction per write, storage failures said by their cause,
and DuckDB's out-of-core settings (memory limit, spill directory, slice size)."""

from __future__ import annotations

import re
from contextlib import contextmanager
from pathlib import Path
from typing import Mapping

import duckdb
import pandas as pd

from stragglers.warehouse.sql_files import create_view, sql_path_literal


SLICE_ROWS_VARIABLE = "nurd_slice_rows"   # the connection's duckdb_slice_rows (configure)


def table_exists(con: duckdb.DuckDBPyConnection, table: str) -> bool:
    return bool(con.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_name = ? AND table_schema = 'main'",
        [table]).fetchone()[0])


class WarehouseStorageError(OSError):
    """The warehouse's storage failed (disk full, read-only, no permission, out of memory): the
    cause first, the file, and what to do. The failed transaction was rolled back."""


#: (what DuckDB or the OS says, the cause in our words, what to do); {path}: the warehouse file
STORAGE_CAUSES = (
    (re.compile(r"No space left on device|Disk full", re.I), "the disk holding the warehouse is full",
     "free space on that disk, or set NURD_DATA_DIR to a directory on a larger one, then run the step again "
     "(the failed step wrote nothing: its transaction was rolled back)"),
    (re.compile(r"Read-only file system|read[- ]only", re.I), "the warehouse is on a read-only file system",
     "make {path} writable (or set NURD_DATA_DIR to a writable directory), then run the step again"),
    (re.compile(r"Permission denied", re.I), "no permission to write the warehouse",
     "give this user write permission on {path} and its directory (or set NURD_DATA_DIR), then run the step again"),
    (re.compile(r"Out of Memory|could not allocate|failed to allocate", re.I), "DuckDB ran out of memory",
     "raise NURD_DUCKDB_MEMORY_LIMIT (or lower NURD_WORKERS, or free memory), then run the step again"),
)


def storage_error(con: duckdb.DuckDBPyConnection | None, error: BaseException,
                  path: str | Path | None = None) -> WarehouseStorageError | None:
    """``error`` (or what caused it) as a WarehouseStorageError naming the cause first, or None.
    ``path``: the warehouse file where there is no connection yet (opening it failed)."""
    seen: list[BaseException] = []
    e: BaseException | None = error
    while e is not None and e not in seen:
        seen.append(e)
        e = e.__cause__ or e.__context__
    text = " | ".join(str(x) for x in seen)
    for pattern, cause, remedy in STORAGE_CAUSES:
        if pattern.search(text):
            path = str(path) if path else (database_path(con) or "the warehouse file")
            original = next((str(x) for x in seen if pattern.search(str(x))), str(error))
            return WarehouseStorageError(f"{cause} ({path}): {original}. What to do: {remedy.format(path=path)}")
    return None


def database_path(con) -> str | None:
    try:
        row = con.execute("SELECT path FROM duckdb_databases() WHERE database_name = current_database()").fetchone()
    except Exception:   # the connection may be unusable after the failure: the message does without the path
        return None
    return row[0] if row and row[0] else None


@contextmanager
def transaction(con: duckdb.DuckDBPyConnection):
    """One DuckDB transaction: committed if the block succeeds, rolled back otherwise,
    so readers never see a half-replaced table. A storage failure says its cause first; a
    ROLLBACK that fails too (the failed COMMIT already ended the transaction) never hides it."""
    con.execute("BEGIN TRANSACTION")
    try:
        yield con
        con.execute("COMMIT")
    except BaseException as error:
        try:
            con.execute("ROLLBACK")
        except duckdb.Error as rollback_error:
            error.add_note(f"(the ROLLBACK after it failed too: {rollback_error})")
        storage = storage_error(con, error) if isinstance(error, Exception) else None
        if storage is not None:
            raise storage from error
        raise


def configure(con: duckdb.DuckDBPyConnection, *, memory_limit: str | None = None,
              threads: int | None = None, temp_directory: str | None = None,
              slice_rows: int | None = None) -> None:
    """Out-of-core settings: DuckDB spills to ``temp_directory`` past ``memory_limit``; a sliced
    step (``${job_slice}`` in its SQL) works on about ``slice_rows`` task_events rows at a time."""
    if slice_rows:
        con.execute(f"SET VARIABLE {SLICE_ROWS_VARIABLE} = {int(slice_rows)}")
    if memory_limit:
        con.execute(f"SET memory_limit = '{sql_path_literal(memory_limit)}'")
    if threads:
        con.execute(f"SET threads = {int(threads)}")
    if temp_directory:
        Path(temp_directory).mkdir(parents=True, exist_ok=True)
        con.execute(f"SET temp_directory = '{sql_path_literal(temp_directory)}'")
    con.execute("SET preserve_insertion_order = false")


def insert_frame(con: duckdb.DuckDBPyConnection, table: str, df: pd.DataFrame | None) -> None:
    """Insert ``df``'s rows into ``table`` by column name (nothing for None or an empty frame)."""
    if df is not None and len(df):
        con.register("_rows", df)
        con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM _rows")
        con.unregister("_rows")


def replace_rows(con: duckdb.DuckDBPyConnection, table: str, df: pd.DataFrame, trace: str | None) -> None:
    """Inside a transaction, ``table`` created: ``trace``'s rows (all rows for None) replaced by df's."""
    cols = [r[0] for r in con.execute(f"DESCRIBE {table}").fetchall()]
    if trace is None:
        con.execute(f"DELETE FROM {table}")
    else:
        con.execute(f"DELETE FROM {table} WHERE trace = ?", [trace])
    insert_frame(con, table, df.reindex(columns=cols))


def read_back(con: duckdb.DuckDBPyConnection, table: str, dtypes: Mapping[str, str]) -> pd.DataFrame | None:
    """Every row of ``table`` in stored order, as the frame ``replace_table`` stored (None when the
    table does not exist). DuckDB reads INTEGER back as int32 and a BOOLEAN column with NULLs as
    pandas' nullable "boolean": ``dtypes`` (column -> dtype, declared beside the computation) casts
    the former back; the latter becomes object with NaN, what pandas itself gives a bool column with
    gaps (a left merge). Without NULLs it stays bool, as computed."""
    if not table_exists(con, table):
        return None
    df = con.table(table).df()
    df = df.astype({c: t for c, t in dtypes.items() if c in df})
    for c in df.columns[df.dtypes == "boolean"]:
        df[c] = df[c].astype(object).where(df[c].notna(), float("nan"))
    return df


def replace_table(con: duckdb.DuckDBPyConnection, table: str, df: pd.DataFrame, trace: str | None = None) -> None:
    """Replace the rows of ``table`` (created from sql/<table>.sql; only ``trace``'s rows when
    given) by ``df``'s columns of the same names, in one transaction; columns of df the
    table lacks are not stored."""
    create_view(con, table)
    with transaction(con):
        replace_rows(con, table, df, trace)
