"""Run the SQL of ``sql/`` against the DuckDB warehouse.

Every query is a .sql file named after the table or view it builds. Files
that start with ``CREATE`` are executed as they are (views); the others are a
SELECT whose rows replace the trace's rows of the table of the same name, in
one transaction, so a crash never leaves a half-written table visible.
Parameters are ``${name}`` placeholders (string.Template): only validated
settings and paths are substituted.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import time
from collections.abc import Callable
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import datetime, timezone
from pathlib import Path
from string import Template

import duckdb

from stragglers import SQL_DIR
from stragglers.faults import failpoint
from stragglers.settings import Settings
from stragglers.warehouse.settings import CHECKPOINT_GRIDS, SelectionSettings
from stragglers.trace_formats import RAW_COLUMNS
from stragglers.traces.synth.formats import EMPTY_PARTS_MARKER
from stragglers.warehouse import locate
from stragglers.warehouse.locate import TraceFormatError  # noqa: F401  (raised here, imported by callers)

GOOGLE_VIEW_TABLES = ("job_events", "task_events", "task_usage", "machine_events")   # the raw table of each view
GOOGLE_VIEWS = tuple(f"stg_{table}" for table in GOOGLE_VIEW_TABLES)
ALIBABA_VIEWS = ("alibaba_instances", "job_candidates__alibaba")
_IDENT = re.compile(r"^[a-z_][a-z0-9_]*$")
_LOG = logging.getLogger(__name__)
SLICE_ROWS_VARIABLE = "nurd_slice_rows"   # the connection's duckdb_slice_rows (configure)


def sql_text(name: str) -> str:
    path = SQL_DIR / f"{name}.sql"
    if not path.exists():
        raise FileNotFoundError(f"no SQL file {path}")
    return path.read_text()


def sql_path_literal(path: Path | str) -> str:
    """A path inside a single-quoted SQL literal."""
    return str(path).replace("'", "''")


def render(name: str, **params) -> str:
    try:
        return Template(sql_text(name)).substitute(**{k: str(v) for k, v in params.items()})
    except KeyError as e:
        raise KeyError(f"sql/{name}.sql needs parameter {e.args[0]!r}") from None


def create_view(con: duckdb.DuckDBPyConnection, name: str, **params) -> None:
    con.execute(render(name, **params))


def raw_read(view: str, files: Path | str, compression: str = "auto") -> str:
    """Staging view ``view``'s typed ``read_csv(...)`` of ``files`` (a file or a glob): the columns
    and types RAW_COLUMNS gives it (sql/read_raw_csv.sql)."""
    columns = ", ".join(f"'{name}': '{kind}'" for name, kind in RAW_COLUMNS[view].items())
    read = render("read_raw_csv", files=sql_path_literal(files), compression=compression, columns=columns)
    return "\n".join(line for line in read.strip().splitlines() if not line.startswith("--"))  # not the file's comment


def create_google_view(con: duckdb.DuckDBPyConnection, table: str, raw_dir: Path) -> str:
    """(Re)create the typed staging view ``stg_<table>`` over the table's gzip parts under ``raw_dir``;
    returns its SQL."""
    view = f"stg_{table}"
    sql = render(view, read=raw_read(view, Path(raw_dir) / table / "part-*-of-*.csv.gz", "gzip"))
    con.execute(sql)
    return sql


def count_rows(con: duckdb.DuckDBPyConnection, view: str) -> int:
    """Rows of a staging view, each parsed: count(*) alone reads no column, so a header line or a row
    whose first field is not a number would be counted before any step fails on it."""
    first = con.execute(f"DESCRIBE {view}").fetchone()[0]
    return con.execute(f'SELECT count(*), max("{first}") FROM {view}').fetchone()[0]


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
            path = str(path) if path else (_database_path(con) or "the warehouse file")
            original = next((str(x) for x in seen if pattern.search(str(x))), str(error))
            return WarehouseStorageError(f"{cause} ({path}): {original}. What to do: {remedy.format(path=path)}")
    return None


def _database_path(con) -> str | None:
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


SETTINGS_TABLE = "table_settings"


def digest(obj) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()[:16]


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


#: The operator's features: the paper's SQL files (one construction) on the operator's decision
#: clock (sql/operator_checkpoints.sql) instead of the paper's grid: table -> (SQL file, parameters).
OPERATOR_FEATURE_TABLES = {
    "operator_event_features": ("event_features", {"checkpoints": "operator_checkpoints"}),
    "operator_checkpoint_features": ("checkpoint_features", {"checkpoints": "operator_checkpoints",
                                                             "event_features": "operator_event_features"}),
}
#: The grid tables the feature SQL files read by default (the paper's).
GRID_TABLES = {"checkpoints": "job_checkpoints", "event_features": "event_features"}


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


@contextmanager
def located_errors(con: duckdb.DuckDBPyConnection, what: str):
    """Turn DuckDB's errors on reading the raw files into a TraceFormatError naming the file and
    line (and a missing table into one naming the asset to materialize)."""
    try:
        yield
    except duckdb.CatalogException as e:
        missing = missing_upstream(e)
        if missing is None:
            raise
        raise missing from e
    except (duckdb.ConversionException, duckdb.InvalidInputException, duckdb.IOException) as e:
        located = locate.explain(con, e, what)   # which file and line, and what to do
        if located is None:
            raise
        raise located from e


# the asset that writes each table or view (what to materialize when it is missing)
PRODUCED_BY = {
    **{v: "staged_trace" for v in (*GOOGLE_VIEWS, *ALIBABA_VIEWS, "stg_batch_instance", "job_candidates")},
    "task_lifecycle": "jobs", "jobs": "jobs", "usage_windows": "tasks", "task_outcomes": "tasks", "tasks": "tasks",
    "selection_funnel": "selection_funnel", "job_checkpoints": "checkpoint_features",
    "event_features": "checkpoint_features", "task_attempts": "checkpoint_features",
    "job_runs": "checkpoint_features", "machine_streams": "checkpoint_features",
    "checkpoint_features": "checkpoint_features", "quarantine": "staged_trace",
    "reexecution_pairs": "reexecutions",
    "operator_checkpoints": "checkpoint_features", "operator_event_features": "checkpoint_features",
    "operator_checkpoint_features": "checkpoint_features",
}
_MISSING = re.compile(r"Table with name (\w+) does not exist")


def missing_upstream(e: duckdb.Error) -> StaleTableError | None:
    """'Table with name X does not exist' as an error naming the asset to materialize."""
    m = _MISSING.search(str(e))
    if not m:
        return None
    name = m.group(1)
    asset = PRODUCED_BY.get(name, "the upstream assets")
    return StaleTableError(f"table {name} does not exist in the warehouse: materialize asset {asset} first "
                           f"(e.g. dagster asset materialize -m pipeline --select '*{asset}')")


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


# --------------------------------------------------------------------------- bounded memory: slices of jobs
#: The condition ``${job_slice}`` stands for in an unsliced run (and in the inputs digest: the
#: slices change how a table is built, never its rows).
ALL_JOBS = "true"
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


def count_staged_rows(con: duckdb.DuckDBPyConnection, trace: str, views) -> tuple[dict[str, int], bool]:
    """{rows_<view>: rows} of the staging ``views`` (each row parsed: count_rows), recorded with the
    staged files' digest (``staged_trace:rows``) and read back while they are unchanged; and
    whether they were counted now."""
    inputs = recorded_inputs(con, "staged_trace", trace)
    if inputs is not None and recorded_inputs(con, "staged_trace:rows", trace) == inputs:
        return recorded_settings(con, "staged_trace:rows", trace), False
    with located_errors(con, "staged_trace"):
        counts = {}
        for v in views:
            with statement_progress(con, f"staged_trace: counting {v}"):
                counts[f"rows_{v}"] = count_rows(con, v)
    with transaction(con):
        record_settings(con, "staged_trace:rows", trace, counts, inputs)
    return counts, True


def job_slices(con: duckdb.DuckDBPyConnection, trace: str) -> list[str]:
    """Conditions on ``job_id`` that split the trace's jobs into consecutive ranges of about
    slice_rows task_events rows each (approximate quantiles of the events' job ids: a job never
    straddles two ranges), then the rows without a job id; [ALL_JOBS] when one slice holds them all.
    Each slice's query sees every row of its jobs, so a query whose state is per task or per job
    (a window partitioned by job, a GROUP BY job) gives the same rows slice by slice, and its
    ORDER BY job_id ... the same order. Computed once per staged trace and slice size."""
    staged = recorded_inputs(con, "staged_trace", trace)
    key = (_database_path(con), trace, staged, slice_rows(con))
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
    (_progress_log.get() or _LOG.info)(f"{what}: {n} slices of job ids (duckdb_slice_rows="
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


#: Where a long step says how far it is (assets point it at the run's log: ``progress_to``).
_progress_log: ContextVar[Callable[[str], None] | None] = ContextVar("progress_log", default=None)


@contextmanager
def progress_to(log: Callable[[str], None]):
    """Send the progress of the steps run inside the block to ``log`` (a Dagster run's log)."""
    token = _progress_log.set(log)
    try:
        yield
    finally:
        _progress_log.reset(token)


class SliceProgress:
    """``table: slice i/n done in s; about s left``, after each slice once the step has run
    ``every_s`` (short steps stay quiet), to the run's log or this module's logger."""

    def __init__(self, table: str, total: int, every_s: float = 10.0, unit: str = "job ids") -> None:
        self.table, self.total, self.every_s, self.unit = table, total, every_s, unit
        self.started = self.last = time.perf_counter()

    def __call__(self, done: int) -> None:
        now = time.perf_counter()
        if self.total <= 1 or now - self.last < self.every_s and done < self.total:
            return
        if now - self.started < self.every_s:
            return
        self.last = now
        elapsed = now - self.started
        left = f"about {elapsed / done * (self.total - done):.0f} s left" if done < self.total else "done"
        (_progress_log.get() or _LOG.info)(
            f"{self.table}: slice {done}/{self.total} of {self.unit} ({100 * done / self.total:.0f}%) "
            f"in {elapsed:.0f} s; {left}")


@contextmanager
def statement_progress(con: duckdb.DuckDBPyConnection, what: str, every_s: float = 10.0):
    """While the block runs one long statement on ``con`` (a step of one query: an unsliced table,
    a scan of every part), say every ``every_s`` how far DuckDB's own progress counter is and
    about how long is left at that pace, to the run's log or this module's logger. A thread reads
    ``query_progress()`` (made to be read beside a running query); the bar itself is not printed."""
    import threading

    log = _progress_log.get() or _LOG.info
    con.execute("SET enable_progress_bar = true")
    con.execute("SET enable_progress_bar_print = false")
    stop = threading.Event()
    started = time.perf_counter()

    def watch() -> None:
        while not stop.wait(every_s):
            try:
                done = con.query_progress()
            except duckdb.Error:
                return
            elapsed = time.perf_counter() - started
            if done and 0 < done < 100:
                log(f"{what}: {done:.0f}% of the query in {elapsed:.0f} s; about "
                    f"{elapsed * (100 - done) / done:.0f} s left at this pace")

    watcher = threading.Thread(target=watch, name=f"progress:{what}", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        stop.set()
        watcher.join()


REQUIRED_GOOGLE_TABLES = ("job_events", "task_events")   # the selection needs only events
OPTIONAL_GOOGLE_TABLES = ("task_usage", "machine_events")  # usage / machine features need them; absent on a partial mirror


def _parts(raw_dir: Path, table: str) -> list[Path]:
    return sorted((raw_dir / table).glob("part-*-of-*.csv.gz"))


def stage_google(con: duckdb.DuckDBPyConnection, raw_dir: Path, settings: SelectionSettings) -> dict[str, int]:
    """(Re)create the typed staging views over a Google-format trace directory.

    job_events and task_events are required. task_usage may be absent (a partial
    mirror): its view is then empty, with the same columns, and ``staged_tables``
    records it so that the steps needing usage say so. Returns {table: parts}."""
    raw_dir = Path(raw_dir).resolve()
    for table in REQUIRED_GOOGLE_TABLES:
        if not _parts(raw_dir, table):
            raise FileNotFoundError(f"no {table} parts under {raw_dir / table} (expected part-NNNNN-of-MMMMM.csv.gz)")
    locate.check_manifest(raw_dir)   # a part fetched earlier and gone since is an error, not a smaller trace
    parts = {t: _parts(raw_dir, t) for t in REQUIRED_GOOGLE_TABLES + OPTIONAL_GOOGLE_TABLES}
    n_parts = {t: len(files) for t, files in parts.items()}
    empty = locate.empty_parts(parts)
    on_purpose = settings.format.embedded or (raw_dir / EMPTY_PARTS_MARKER).exists()   # written by our generators
    if empty and settings.empty_parts != "accept" and not on_purpose:
        table, files = next(iter(empty.items()))
        raise TraceFormatError(
            f"staging {table}: " + locate.BadRow(str(files[0]), None,
                f"a part with no rows while {n_parts[table] - len(files)} other {table} parts have rows"
                + (f" ({len(files)} such parts of {table}: {', '.join(f.name for f in files[:5])})"
                   if len(files) > 1 else "")).message(locate.REMEDY_EMPTY))
    params = settings.sql_params() | {"raw_dir": sql_path_literal(raw_dir)}
    view_sql = []
    for table in GOOGLE_VIEW_TABLES:
        # a table without parts: the same typed view over one empty part (zero rows, the same columns)
        view_sql.append(create_google_view(con, table, raw_dir if n_parts[table] else _empty_table_dir(raw_dir, table)))
    create_view(con, "stg_task_event_parts", **params)   # which parts are there: the window's gaps
    view_sql.append(render("stg_task_event_parts", **params))
    record_staged_tables(con, settings.trace, n_parts, {t: len(f) for t, f in empty.items()},
                         {t: len(locate.part_gaps(files)) for t, files in parts.items() if files})
    files = [p for t in GOOGLE_VIEW_TABLES for p in parts[t]]
    _record_staging(con, settings, files, view_sql)
    return n_parts


def _record_staging(con: duckdb.DuckDBPyConnection, settings: SelectionSettings, files, view_sql) -> None:
    """Apply on_bad_rows, then record what the staging views read (files by name, size, mtime; the
    views' SQL; on_bad_rows): every table built from them carries this digest, so an unchanged trace
    is not rebuilt (nor re-scanned for bad rows)."""
    inputs = digest([files_digest(files), view_sql, settings.on_bad_rows])
    unchanged = inputs == recorded_inputs(con, "staged_trace", settings.trace) and table_exists(con, locate.QUARANTINE)
    _bad_rows_policy(con, settings, rescan=not unchanged)
    with transaction(con):
        record_settings(con, "staged_trace", settings.trace, {"on_bad_rows": settings.on_bad_rows}, inputs)


def _bad_rows_policy(con: duckdb.DuckDBPyConnection, settings: SelectionSettings, rescan: bool = True) -> int:
    """on_bad_rows=quarantine: the staging views skip rows that do not parse, and those rows go to
    table quarantine (file, line, reason); returns how many. ``fail``: nothing here (a bad row stops
    the first build that reads it, located by locate.explain)."""
    locate.ensure_quarantine(con)
    if settings.on_bad_rows != "quarantine":
        with transaction(con):
            con.execute(f"DELETE FROM {locate.QUARANTINE} WHERE trace = ?", [settings.trace])
        return 0
    locate.quarantine_views(con)
    if not rescan:
        return -1
    rows = locate.unparsed_rows(con)
    with transaction(con):
        return locate.quarantine_rows(con, settings.trace, "staged_trace", rows)


def _empty_table_dir(raw_dir: Path, table: str) -> Path:
    """A directory holding ``<table>/part-00000-of-00001.csv.gz`` with no rows (beside the raw trace,
    never inside it: the raw directory holds only what the source holds)."""
    import gzip
    root = raw_dir.parent / f".{raw_dir.name}_absent_tables"
    part = root / table / "part-00000-of-00001.csv.gz"
    if not part.exists():
        part.parent.mkdir(parents=True, exist_ok=True)
        tmp = part.with_name(part.name + ".tmp")
        with gzip.GzipFile(tmp, "wb", mtime=0):
            pass
        tmp.replace(part)
    return root


def record_staged_tables(con: duckdb.DuckDBPyConnection, trace: str, n_parts: dict[str, int],
                         empty: dict[str, int] | None = None, missing: dict[str, int] | None = None) -> None:
    """``staged_tables``: which raw tables the trace has (parts per table; parts with no rows; part
    numbers missing below the highest present), read by the steps that need one to say what they skip."""
    empty, missing = empty or {}, missing or {}
    with transaction(con):
        con.execute("CREATE TABLE IF NOT EXISTS staged_tables (trace VARCHAR, table_name VARCHAR, parts INTEGER)")
        for column in ("empty_parts", "missing_parts"):   # warehouses written before these columns
            con.execute(f"ALTER TABLE staged_tables ADD COLUMN IF NOT EXISTS {column} INTEGER DEFAULT 0")
        con.execute("DELETE FROM staged_tables WHERE trace = ?", [trace])
        con.executemany("INSERT INTO staged_tables (trace, table_name, parts, empty_parts, missing_parts) "
                        "VALUES (?, ?, ?, ?, ?)",
                        [[trace, t, int(n), empty.get(t, 0), missing.get(t, 0)] for t, n in n_parts.items()])


def missing_parts(con: duckdb.DuckDBPyConnection, trace: str, table: str) -> int:
    """Part numbers of ``table`` missing below the highest present (0 where not recorded)."""
    if not table_exists(con, "staged_tables"):
        return 0
    row = con.execute("SELECT missing_parts FROM staged_tables WHERE trace = ? AND table_name = ?",
                      [trace, table]).fetchone()
    return int(row[0] or 0) if row else 0


def parts_note(con: duckdb.DuckDBPyConnection, trace: str) -> str | None:
    """What is unusual in the trace's parts (numbers missing below the highest present, parts with
    no rows), per table; None when nothing is. Lifecycles cut by a missing task_events part are
    counted in task_lifecycle (end states schedule_not_in_mirror, lifecycle_spans_gap) and the funnel."""
    if not table_exists(con, "staged_tables"):
        return None
    rows = con.execute("SELECT table_name, parts, empty_parts, missing_parts FROM staged_tables WHERE trace = ? "
                       "AND (empty_parts > 0 OR missing_parts > 0) ORDER BY table_name", [trace]).fetchall()
    notes = [f"{table}: {parts} parts" + (f", {missing} part numbers missing below the highest present (a gap "
                                          f"or a later first part)" if missing else "")
             + (f", {empty} parts with no rows (accepted)" if empty else "") for table, parts, empty, missing in rows]
    return ("Trace " + trace + ": " + "; ".join(notes) + ". Task lifecycles cut by a missing task_events part "
            "are counted, not timed (selection_funnel: schedule_not_in_mirror, lifecycle_spans_gap).") if notes else None


def usage_absent_reason(con: duckdb.DuckDBPyConnection, trace: str) -> str | None:
    """Why the trace has no usage measurements (None when it has them): a Google mirror
    without task_usage parts. Alibaba's batch_instance carries usage in every row."""
    if not table_exists(con, "staged_tables"):
        return None
    row = con.execute("SELECT parts FROM staged_tables WHERE trace = ? AND table_name = 'task_usage'",
                      [trace]).fetchone()
    if row is None or row[0] > 0:
        return None
    return (f"trace {trace} has no task_usage parts (a partial mirror): its usage features have no value "
            f"(0 in checkpoint_features; only EV, FL and the clock are informative). The event features "
            f"(docs/EVENT_FEATURES.md) need only events: with feature_set auto, events or all every method "
            f"runs on them; with feature_set=usage the feature-based methods are skipped and only the "
            f"time-only reference rules run")


def stage_trace(con: duckdb.DuckDBPyConnection, raw_path: Path, settings: SelectionSettings) -> dict[str, int]:
    """Create the typed staging views of the configured trace's format; returns {raw table: parts}
    (Google layout) or {} (Alibaba's one file)."""
    if settings.format.is_google_layout:
        return stage_google(con, raw_path, settings)
    stage_alibaba(con, raw_path / "batch_instance.csv", settings, staging_sql=settings.format.staging_sql)
    return {}


def stage_alibaba(con: duckdb.DuckDBPyConnection, csv_path: Path, settings: SelectionSettings,
                  staging_sql: str | None = None) -> None:
    """Staging views over an Alibaba batch_instance file; ``staging_sql`` (default: the trace
    format's) is the SQL file of its typed view (v2017 has other columns than v2018)."""
    csv_path = Path(csv_path).resolve()
    if not csv_path.exists():
        raise FileNotFoundError(f"no batch_instance file at {csv_path}")
    params = settings.sql_params() | {"csv_path": sql_path_literal(csv_path)}
    staging_sql = staging_sql or settings.format.staging_sql
    create_view(con, staging_sql, read=raw_read(staging_sql, csv_path))
    if staging_sql != "stg_batch_instance":
        con.execute(f"CREATE OR REPLACE VIEW stg_batch_instance AS SELECT * FROM {staging_sql}")
    for view in ALIBABA_VIEWS:
        create_view(con, view, **params)
    _record_staging(con, settings, [csv_path], [render(v, **params) for v in ALIBABA_VIEWS])


def step_tables(step: str, settings: SelectionSettings) -> tuple[str, ...]:
    """The tables each build step writes (what must be current for the step to be skipped)."""
    google = settings.is_google_format
    return {"jobs": ("task_lifecycle", "jobs") if google else ("jobs",),
            "tasks": ("usage_windows", "task_outcomes", "tasks") if google else ("task_outcomes", "tasks"),
            "selection_funnel": ("selection_funnel",),
            "checkpoint_features": ("job_checkpoints", "task_attempts", *EVENT_STREAM_TABLES, "event_features",
                                    "checkpoint_features", "operator_checkpoints", "operator_event_features",
                                    "operator_checkpoint_features")
            if google else ("job_checkpoints", "checkpoint_features", "operator_checkpoints",
                            "operator_checkpoint_features")}[step]


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


def check_events(con: duckdb.DuckDBPyConnection, settings: SelectionSettings) -> int:
    """Rows that parse but cannot be right (event type out of range, duplicates, FINISH before
    SCHEDULE): ``fail`` raises at the first (file and line, or job and task); ``quarantine`` records
    them all (they carry no weight: unknown events match no rule, such tasks end 'time_backwards')."""
    first_only = settings.on_bad_rows != "quarantine"
    slices = job_slices(con, settings.trace)
    rows = locate.event_anomalies(con, settings.trace, first_only=first_only, job_slices=slices,
                                  progress=SliceProgress("duplicate task events check", len(slices)))
    if not (rows and first_only):
        with located_errors(con, "jobs"):
            rows += locate.value_anomalies(con, ("stg_task_events", "stg_job_events"), first_only=first_only)
    if rows and first_only:
        raise TraceFormatError("building jobs: " + rows[0].message())
    with transaction(con):
        return locate.quarantine_rows(con, settings.trace, "jobs", rows)


def check_usage(con: duckdb.DuckDBPyConnection, settings: SelectionSettings) -> int:
    """task_usage rows of the selected jobs (the only ones a table reads) with a NaN or an infinity,
    or a window measured twice: ``fail`` raises at the first (file and line); ``quarantine`` records
    them all, and usage_windows leaves them out (a repeated window counts once)."""
    first_only = settings.on_bad_rows != "quarantine"
    only = f"job_id IN (SELECT job_id FROM jobs WHERE trace = '{settings.trace}')"
    with located_errors(con, "tasks"):   # a row that does not parse is named first, as by the build
        rows = locate.value_anomalies(con, ("stg_task_usage",), first_only=first_only, only={"stg_task_usage": only})
    if rows and first_only:
        raise TraceFormatError("building tasks: " + rows[0].message())
    with transaction(con):
        return locate.quarantine_rows(con, settings.trace, "tasks", rows)


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
    if is_current(con, ("task_attempts",), settings):
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
    counts["checkpoint_features"] = build_table(con, "checkpoint_features", settings)
    # the same features on the operator's decision clock, until each job's last task ends
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


def sql_name(table: str, settings: SelectionSettings) -> str:
    """The SQL file building ``table`` for the trace's format (its variant, e.g. ``__alibaba``;
    tables without one, like tasks, job_checkpoints, selection_funnel, share the file)."""
    return settings.format.sql_name(OPERATOR_FEATURE_TABLES.get(table, (table,))[0], SQL_DIR)


def replace_trace_frame(con: duckdb.DuckDBPyConnection, table: str, df, trace: str) -> int:
    """Replace ``table``'s rows of ``trace`` by the rows of a DataFrame (one transaction),
    for tables computed in Python (node ranking, failure prediction)."""
    frame = df.assign(trace=trace)[["trace", *[c for c in df.columns if c != "trace"]]]
    con.register("_frame", frame)
    try:
        return replace_trace_rows(con, table, "SELECT * FROM _frame", trace)
    finally:
        con.unregister("_frame")
