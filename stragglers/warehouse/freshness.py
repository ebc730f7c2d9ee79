"""Is a result current? The one decision, for every table and result the warehouse keeps.

Everything the warehouse builds is recorded in its ledger (table ``table_settings``): per trace and
name (a table, a method's evaluation, a check) the settings it was built with and a digest of what
it was built from. A result is current (``is_current``) when every name's recorded digest equals
the digest of what it would be built from now, every upstream name it reads was recorded, the
tables it needs exist, and (where asked) the rows the record counted are still there. Then nothing
runs; otherwise the result is computed and recorded in the same transaction as its rows
(``current_or_compute``). Three kinds of digest feed it:

- a table built by SQL from the staged raw files: the raw files' record, the settings and the SQL
  text (``table_inputs``);
- a result of the evaluations (the simulations, the budgets, the report): a hash of its input
  tables' contents, the settings that shape it and the code that computes it (``Derived``,
  ``input_digest``);
- anything else a caller names (an evaluation: its features' record, settings and code).

A consumer that needs a table built with its own settings refuses another (``require_settings``,
``require_current``) with a ``StaleTableError`` naming the table: the Dagster layer, which knows
which asset builds which table, adds what to materialize.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.util
import json
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Generic, Iterator, Mapping, Sequence, TypeVar

import duckdb

from stragglers.settings.warehouse import SelectionSettings
from stragglers.warehouse.sql_files import create_view, render
from stragglers.warehouse.storage import replace_rows, table_exists, transaction
from stragglers.warehouse.table_sql import sql_name, table_params

SETTINGS_TABLE = "table_settings"
#: the ledger's trace for results over every trace in the warehouse
EVERY_TRACE = "*"
T = TypeVar("T")


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


def files_digest(paths) -> str:
    """Names, sizes and modification times of the raw files (what identifies them without reading)."""
    rows = []
    for p in sorted(Path(x) for x in paths):
        st = p.stat()
        rows.append([str(p), st.st_size, st.st_mtime_ns])
    return digest(rows)


# ------------------------------------------------------------------ the ledger

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


def _recorded(con: duckdb.DuckDBPyConnection, column: str, table: str, trace: str):
    if not table_exists(con, SETTINGS_TABLE):
        return None
    row = con.execute(f"SELECT {column} FROM {SETTINGS_TABLE} WHERE trace = ? AND table_name = ?",
                      [trace, table]).fetchone()
    return row[0] if row else None


def recorded_inputs(con: duckdb.DuckDBPyConnection, table: str, trace: str) -> str | None:
    """The inputs digest recorded with ``table`` of ``trace`` (None if never built)."""
    return _recorded(con, "inputs", table, trace)


def recorded_settings(con: duckdb.DuckDBPyConnection, table: str, trace: str) -> dict | None:
    """The settings ``table``'s rows of ``trace`` were built with; None if not recorded."""
    found = _recorded(con, "settings", table, trace)
    return None if found is None else json.loads(found)


@contextlib.contextmanager
def shadow_tables(con: duckdb.DuckDBPyConnection, selection: SelectionSettings, tables: Sequence[str], trace: str,
                  settings: dict, first: Mapping[str, str] | None = None) -> Iterator[None]:
    """Inside the block, temporary tables shadow the warehouse's: ``first`` (table -> its SELECT), then
    ``tables``, each built in this order by its SQL under ``selection``; each recorded with ``settings``
    for ``trace`` in a temporary copy of the ledger. The warehouse is not modified; the temporary tables
    are dropped on leaving (also those made before a build that failed)."""
    made = []
    try:
        builds = [*(first or {}).items(), *((t, None) for t in tables)]
        for table, select in builds:
            if select is None:
                select = render(sql_name(table, selection), **table_params(con, selection, table))
            con.execute(f"CREATE OR REPLACE TEMP TABLE {table} AS {select}")
            made.append(table)
        # the settings recorded with the shadow tables (read by the evaluation's consistency check)
        con.execute(f"CREATE OR REPLACE TEMP TABLE {SETTINGS_TABLE} AS SELECT * FROM main.{SETTINGS_TABLE}")
        made.append(SETTINGS_TABLE)
        for table, _ in builds:
            record_settings(con, table, trace, settings)
        yield
    finally:
        for table in reversed(made):
            con.execute(f"DROP TABLE IF EXISTS temp.{table}")


# ------------------------------------------------------------------ the decision

def is_current(con: duckdb.DuckDBPyConnection, trace: str, wanted: Mapping[str, str], *,
               upstream: Sequence[str] = (), tables: Sequence[str] = (),
               rows: Callable[[str], dict] | None = None) -> bool:
    """True when every ledger name of ``wanted`` was recorded for ``trace`` from the digest given
    (what it is built from now), every name of ``upstream`` was recorded, every table of ``tables``
    exists, and, with ``rows`` (name -> the rows the result has now), the rows each record counted
    are still there (a record alone does not prove them)."""
    return (all(recorded_inputs(con, name, trace) is not None for name in upstream)
            and all(table_exists(con, t) for t in tables)
            and all(recorded_inputs(con, name, trace) == v for name, v in wanted.items())
            and (rows is None or all((recorded_settings(con, name, trace) or {}).get("result_rows") == rows(name)
                                     for name in wanted)))


def table_inputs(con: duckdb.DuckDBPyConnection, table: str, settings: SelectionSettings, **extra) -> str:
    """What ``table`` of the trace is computed from: the staged raw files, the settings and the SQL.
    Equal digests mean equal rows (the SQL is deterministic), so the build can be skipped."""
    sql = render(sql_name(table, settings), **table_params(con, settings, table, **extra))
    return digest([recorded_inputs(con, "staged_trace", settings.trace), settings.as_dict(), sql])


def tables_current(con: duckdb.DuckDBPyConnection, tables: Sequence[str], settings: SelectionSettings) -> bool:
    """Every table of ``tables`` built from the current raw files, settings and SQL."""
    return is_current(con, settings.trace, {t: table_inputs(con, t, settings) for t in tables},
                      upstream=("staged_trace",), tables=tables)


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

    Current (``is_current``): return the recorded rows, run nothing. Otherwise run ``compute``: with
    ``table`` its frame replaces ``trace``'s rows of ``table`` and the record is written in the same
    transaction; without, ``compute`` writes its own rows (in its own transaction) and the record
    follows in the next one (a crash in between only computes the result again)."""
    if is_current(con, trace, wanted, upstream=upstream, rows=rows):
        return Kept(False, None, {name: recorded_settings(con, name, trace)["result_rows"] for name in wanted})
    computed = compute()
    if table is not None:
        create_view(con, table)
    with transaction(con):
        if table is not None:
            replace_rows(con, table, computed, trace)
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


# ------------------------------------------------------------------ results of the evaluations

@dataclass(frozen=True)
class Derived:
    """Tables computed from the evaluations' tables (over every trace of the warehouse)."""
    counted: Mapping[str, tuple[str, ...]]      # ledger name -> the tables whose rows it counts
    inputs: tuple[str, ...]                     # the tables they are computed from
    shaping: Callable                           # settings -> the settings that shape them (in the digest)
    recorded: Callable                          # settings -> the settings recorded beside them
    older_than: str                             # what an outdated record is older than (its error says)
    code: tuple[str, ...] = ("stragglers.prediction", "stragglers.reports")   # the code that computes them

    @property
    def ledger_name(self) -> str:
        """The first ledger name (the one an error names)."""
        return next(iter(self.counted))


def table_contents(con: duckdb.DuckDBPyConnection, tables, settings: list) -> str:
    """A digest of the contents of those of ``tables`` that exist (a hash aggregate in DuckDB,
    sql/table_contents.sql: cheap next to the simulations and the bootstrap that read them) and of
    the ``settings`` that shape what is computed from them."""
    contents = [(name, con.execute(render("table_contents", table=name)).fetchone())
                for name in tables if table_exists(con, name)]
    return digest([contents, *settings])


def input_digest(con: duckdb.DuckDBPyConnection, derived: Derived, s) -> str:
    """What ``derived`` is computed from now: equal digests, equal tables (the code that computes
    them is part of it)."""
    return table_contents(con, derived.inputs, [*derived.shaping(s), code_digest(*derived.code)])


def derived_rows(con: duckdb.DuckDBPyConnection, derived: Derived) -> Callable[[str], dict]:
    return lambda name: {t: trace_rows(con, t)[t] for t in derived.counted[name]}


def require_evaluations(con: duckdb.DuckDBPyConnection) -> None:
    """Stop when no evaluation has run yet: what every result of the evaluations reads."""
    if not table_exists(con, "job_metrics"):
        raise StaleTableError("job_metrics", "does not exist in the warehouse (no evaluation has run)")


def build_unless_current(con: duckdb.DuckDBPyConnection, derived: Derived, s,
                         compute: Callable[[], object]) -> tuple[Kept, str]:
    """``compute()`` runs, and writes every table of ``derived``, unless each of its ledger names
    was recorded from the current digest and settings with its tables' rows still there. Returns
    what was kept and the digest (the data version)."""
    require_evaluations(con)
    version = input_digest(con, derived, s)
    kept = current_or_compute(con, EVERY_TRACE, dict.fromkeys(derived.counted, version), compute,
                              rows=derived_rows(con, derived), settings=derived.recorded(s))
    return kept, version


def derived_current(con: duckdb.DuckDBPyConnection, derived: Derived, s) -> tuple[bool, str]:
    """(whether ``derived`` was recorded from what it is computed from now, that digest)."""
    version = input_digest(con, derived, s)
    return is_current(con, EVERY_TRACE, dict.fromkeys(derived.counted, version)), version


def require_current(con: duckdb.DuckDBPyConnection, derived: Derived, s) -> str:
    """The digest of ``derived``; stops with a StaleTableError unless its tables are of the current
    evaluations and settings: never a consumer that mixes two runs."""
    current, version = derived_current(con, derived, s)
    if not current:
        raise StaleTableError(derived.ledger_name, f"is missing or older than {derived.older_than} or settings")
    return version


# ------------------------------------------------------------------ refusing a stale table

class StaleTableError(LookupError):
    """A table is missing, or was built with other settings than the consumer's: ``table`` names it
    and ``why`` says what is wrong (the Dagster layer adds the asset that builds it)."""

    def __init__(self, table: str, why: str):
        self.table, self.why = table, why
        super().__init__(f"table {table} {why}")


def require_settings(con: duckdb.DuckDBPyConnection, table: str, trace: str, expected: dict) -> None:
    """Raise StaleTableError unless ``table`` of ``trace`` was built with ``expected`` settings."""
    if not table_exists(con, table):
        raise StaleTableError(table, "does not exist in the warehouse")
    built = recorded_settings(con, table, trace)
    if built is None:
        raise StaleTableError(table, f"has no recorded settings for trace {trace!r} (built by an older version, or "
                                     f"not built for this trace)")
    differ = {k: (built.get(k), v) for k, v in expected.items() if built.get(k) != v}
    if differ:
        what = ", ".join(f"{k}={want!r} (table built with {k}={have!r})" for k, (have, want) in differ.items())
        raise StaleTableError(table, f"of trace {trace!r} was built with other settings than this run's: {what}")


_MISSING = re.compile(r"Table with name (\w+) does not exist")


def missing_table(e: duckdb.Error) -> StaleTableError | None:
    """DuckDB's 'Table with name X does not exist' as a StaleTableError naming X."""
    m = _MISSING.search(str(e))
    return StaleTableError(m.group(1), "does not exist in the warehouse") if m else None
