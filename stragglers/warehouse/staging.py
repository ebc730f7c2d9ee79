"""Staging: the typed views over a trace's raw files (Google parts, Alibaba's one file), what they
read recorded (so an unchanged trace is not re-scanned), and the bad-rows policy (``on_bad_rows``):
rows that do not parse, and rows that parse but cannot be right."""

from __future__ import annotations

from pathlib import Path

import duckdb

from stragglers.traces.synth.formats import EMPTY_PARTS_MARKER
from stragglers.warehouse import locate
from stragglers.warehouse.freshness import digest, files_digest, record_settings, recorded_inputs, recorded_settings
from stragglers.warehouse.locate import TraceFormatError
from stragglers.warehouse.progress import SliceProgress, statement_progress
from stragglers.warehouse.read_errors import located_errors
from stragglers.settings.warehouse import SelectionSettings
from stragglers.warehouse.slicing import job_slices
from stragglers.warehouse.sql_files import (ALIBABA_VIEWS, GOOGLE_VIEW_TABLES, GOOGLE_VIEWS, create_view, raw_read,
                                            render, sql_path_literal)
from stragglers.warehouse.spark_staging import SPARK_TABLES, STAGE, stage_spark
from stragglers.warehouse.staged_parts import record_staged_tables
from stragglers.warehouse.storage import table_exists, transaction


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


def stage_trace(con: duckdb.DuckDBPyConnection, raw_path: Path, settings: SelectionSettings) -> dict[str, int]:
    """Create the typed staging views of the configured trace's format; returns {raw table: parts}
    (Google layout) or {} (Alibaba's one file; Spark's event logs, staged into tables by
    spark_staging, their counts recorded in the ledger as ``staged_trace:spark``)."""
    layout = settings.format.layout
    if layout == "google":
        return stage_google(con, raw_path, settings)
    if layout == "spark":
        stage_spark(con, raw_path, trace=settings.trace, min_tasks=settings.min_tasks,
                    on_bad_rows=settings.on_bad_rows)
        return {}
    stage_alibaba(con, raw_path / "batch_instance.csv", settings, staging_sql=settings.format.staging_sql)
    return {}


def staged_tables(settings: SelectionSettings) -> tuple[str, ...]:
    """The staged views (or, for Spark's logs, tables) of the configured trace's format, counted
    by the staging step."""
    return {"google": GOOGLE_VIEWS, "alibaba": ("stg_batch_instance",), "spark": SPARK_TABLES}[settings.format.layout]


def format_counts(con: duckdb.DuckDBPyConnection, settings: SelectionSettings) -> dict[str, int]:
    """What the staging of Spark's logs counted (logs, applications, stage attempts, skipped files, bad
    lines, ...: spark_staging.stage_spark); {} for the other formats (their parts say it)."""
    if settings.format.layout != "spark":
        return {}
    return recorded_settings(con, f"{STAGE}:spark", settings.trace) or {}


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
