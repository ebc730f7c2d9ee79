"""Results kept by what they are computed from: is a result current, and if not, compute and record it.

A result (an evaluation's rows, an ablation's table) is recorded in the ledger (table
``table_settings``) under one name per trace: the digest of its inputs and, among its settings,
``result_rows``, the rows it had when it was recorded. It is current when every name's recorded
digest equals the wanted one, every upstream table it is computed from has a record, and its rows
are still there (a record alone does not prove them). Then nothing runs; otherwise the compute
function runs (writing its rows itself, or returning a frame this module stores) and the record
follows the rows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Generic, Mapping, Sequence, TypeVar

import duckdb
import pandas as pd

from stragglers.warehouse.ledger import record_settings, recorded_inputs, recorded_settings
from stragglers.warehouse.sql_files import create_view
from stragglers.warehouse.storage import table_exists, transaction

T = TypeVar("T")


@dataclass
class Kept(Generic[T]):
    """A result after ``current_or_compute``: whether it was computed now, what the computation
    returned (None when the recorded result was current) and the rows counted per ledger name."""
    rebuilt: bool
    computed: T | None = None
    rows: dict[str, dict] = field(default_factory=dict)


def current_or_compute(con: duckdb.DuckDBPyConnection, trace: str, wanted: Mapping[str, str],
                       compute: Callable[[], T], *, rows: Callable[[str], dict], settings: dict,
                       upstream: Sequence[str] = (), table: str | None = None) -> Kept[T]:
    """``wanted``: ledger name -> the digest of what that result is computed from now; ``rows(name)``:
    the rows the result has in the warehouse now; ``upstream``: ledger names (tables) that must have
    been built; ``settings``: recorded with each name, beside ``result_rows``.

    Current: return the recorded rows, run nothing. Otherwise run ``compute``: with ``table`` its
    frame replaces ``trace``'s rows of ``table`` and the record is written in the same transaction;
    without, ``compute`` writes its own rows (in its own transaction) and the record follows in the
    next one (a crash in between only computes the result again)."""
    current = all(recorded_inputs(con, name, trace) == v for name, v in wanted.items())
    current = current and all(recorded_inputs(con, t, trace) is not None for t in upstream)
    # results, not records: the rows the record counted must still be there
    current = current and all((recorded_settings(con, name, trace) or {}).get("result_rows") == rows(name)
                              for name in wanted)
    if current:
        return Kept(False, None, {name: recorded_settings(con, name, trace)["result_rows"] for name in wanted})
    computed = compute()
    if table is not None:
        create_view(con, table)
    with transaction(con):
        if table is not None:
            _replace(con, table, computed, trace)
        counted = {name: rows(name) for name in wanted}
        for name, inputs in wanted.items():
            record_settings(con, name, trace, settings | {"result_rows": counted[name]}, inputs)
    return Kept(True, computed, counted)


def trace_rows(con: duckdb.DuckDBPyConnection, table: str, trace: str | None = None) -> dict:
    """``{table: rows of trace}`` (every row for None; 0 where the table does not exist): a one-table
    result's rows."""
    if not table_exists(con, table):
        return {table: 0}
    where, params = ("", []) if trace is None else (" WHERE trace = ?", [trace])
    return {table: int(con.execute(f"SELECT count(*) FROM {table}{where}", params).fetchone()[0])}


def insert_frame(con: duckdb.DuckDBPyConnection, table: str, df: pd.DataFrame | None) -> None:
    """Insert ``df``'s rows into ``table`` by column name (nothing for None or an empty frame)."""
    if df is not None and len(df):
        con.register("_rows", df)
        con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM _rows")
        con.unregister("_rows")


def _replace(con: duckdb.DuckDBPyConnection, table: str, df: pd.DataFrame, trace: str | None) -> None:
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
        _replace(con, table, df, trace)
