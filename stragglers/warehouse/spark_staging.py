"""Staging of Spark event logs: the logs' lines into DuckDB in batches (the events the tables need,
parsed into typed rows by sql/spark_*_events.sql and sql/spark_task_*.sql; every line that is not
JSON into spark_bad_lines), then the typed tables of sql/stg_spark_*.sql.

Bad input is never dropped silently (docs/TRACES.md, "Spark event logs"): a line that is not JSON, a
log cut mid-line, a compressed stream that does not decode follow ``on_bad_rows`` (``fail``: a
one-line error naming the file and line; ``quarantine``: set aside in table quarantine, counted). A
file that is not a log Spark reads (unknown codec), a log without its application's start and a
second log of an application already read are always counted skips in table quarantine; an
application with no stage attempt of ``min_tasks`` tasks is staged and counted (``apps_no_selected_stage``).
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from pathlib import Path

import duckdb
import pyarrow as pa

from stragglers.traces.spark_eventlog import CodecError, EventLog, Lines, discover, read_lines
from stragglers.warehouse import locate
from stragglers.warehouse.ledger import digest, files_digest, record_settings
from stragglers.warehouse.locate import BadRow, TraceFormatError
from stragglers.warehouse.sql_files import render
from stragglers.warehouse.storage import transaction

#: The tables of listener events appended per batch of lines (sql/<name>.sql each, a SELECT over the
#: batch's lines of those events), and the events each holds. Spark writes "Event" first on every
#: line, so a line's start says its event without parsing it. Lines of other events are only checked
#: to be JSON (sql/spark_bad_lines.sql).
EVENT_TABLES: dict[str, tuple[str, ...]] = {
    "spark_app_events": ("SparkListenerLogStart", "SparkListenerApplicationStart", "SparkListenerApplicationEnd",
                         "SparkListenerEnvironmentUpdate"),
    "spark_stage_events": ("SparkListenerStageSubmitted", "SparkListenerStageCompleted"),
    "spark_task_starts": ("SparkListenerTaskStart",),
    "spark_task_ends": ("SparkListenerTaskEnd",),
    "spark_executor_events": ("SparkListenerExecutorAdded", "SparkListenerExecutorRemoved"),
}
#: The typed tables, in build order (applications first: it says which logs are kept).
SPARK_TABLES = ("stg_spark_applications", "stg_spark_stages", "stg_spark_tasks", "stg_spark_executors",
                "stg_spark_slots")
STAGE = "staged_trace"
TRACE = "spark_eventlog"   # the NURD_TRACE value of this format
BATCH = "spark_batch_lines"   # what each SQL file reads: its events' lines of the batch
ALL_LINES = "spark_batch_all"  # the batch's every line
REMEDY_LOG = ("fix or remove the log, or run with NURD_ON_BAD_ROWS=quarantine to set the line aside "
              "(counted in table quarantine)")


class _Loader:
    """Appends batches of lines to the event tables (created with the types their SQL gives).

    A batch is registered once, as ``spark_batch_all``; each SQL file reads ``spark_batch_lines``,
    a CTE over it holding the lines of that file's events (a line's start says its event: Spark
    writes "Event" first). Every line is checked to be JSON once, by sql/spark_bad_lines.sql; the
    event tables parse their lines without checking them again, unless the batch has a bad line."""

    def __init__(self, con: duckdb.DuckDBPyConnection):
        self.con = con
        con.execute("""CREATE OR REPLACE TABLE spark_logs (log_id INTEGER, log_path VARCHAR, codec VARCHAR,
                       rolling BOOLEAN, in_progress BOOLEAN, files INTEGER, lines BIGINT)""")
        self.bad_sql = self._over("TRUE", render("spark_bad_lines"))
        self.sql = {t: {checked: self._over(_starts_with_any(events) + (" AND json_valid(text)" if checked else ""),
                                            render(t))
                        for checked in (False, True)}
                    for t, events in EVENT_TABLES.items()}
        with self._registered(self._table(0, Path(), 1, pa.array([], pa.large_string()), False)):
            con.execute(f"CREATE OR REPLACE TABLE spark_bad_lines AS {self.bad_sql} LIMIT 0")
            for t, sql in self.sql.items():
                con.execute(f"CREATE OR REPLACE TABLE {t} AS {sql[True]} LIMIT 0")

    @staticmethod
    def _over(where: str, sql: str) -> str:
        return f"WITH {BATCH} AS (SELECT * FROM {ALL_LINES} WHERE {where}) {sql}"

    @staticmethod
    def _table(log_id: int, file: Path, first: int, text: pa.Array, unterminated: bool) -> pa.Table:
        n = len(text)
        return pa.table({"log_id": pa.array([log_id] * n, pa.int32()), "file": pa.array([str(file)] * n, pa.string()),
                         "line": pa.array(range(first, first + n), pa.int64()),
                         "unterminated": pa.array([False] * (n - 1) + [unterminated] if n else [], pa.bool_()),
                         "text": text})

    @contextmanager
    def _registered(self, lines: pa.Table):
        """``lines`` readable as table spark_batch_all."""
        self.con.register(ALL_LINES, lines)
        try:
            yield
        finally:
            self.con.unregister(ALL_LINES)

    def load(self, log_id: int, batch: Lines) -> None:
        """One batch: its lines that are not JSON into spark_bad_lines, then each event table's
        lines parsed into it. The big lines of events no table reads (SQL plans) are only checked."""
        with self._registered(self._table(log_id, batch.file, batch.first, batch.text, batch.unterminated)):
            bad = self.con.execute(f"INSERT INTO spark_bad_lines {self.bad_sql}").fetchone()[0]
            for table, sql in self.sql.items():
                self.con.execute(f"INSERT INTO {table} {sql[bad > 0]}")


def _starts_with_any(events: tuple[str, ...]) -> str:
    """A SQL condition: the line is one of these events."""
    return "(" + " OR ".join(f"""starts_with(text, '{{"Event":"{e}"')""" for e in events) + ")"


def _read_log(loader: _Loader, log_id: int, log: EventLog, problems: list[BadRow], expected: list[BadRow]) -> int:
    """Every file of ``log`` into the event tables; returns the lines read. A compressed stream that
    does not decode ends the log's reading there (what was read is kept) and is a problem, unless it
    is the end of a log being written: the writer has not closed its frame or block yet."""
    lines = 0
    for f in log.files:
        try:
            for batch in read_lines(f, log.codec):
                loader.load(log_id, batch)
                lines += len(batch)
        except CodecError as e:
            being_written = log.in_progress and f == log.files[-1]
            (expected if being_written else problems).append(BadRow(str(f), None, str(e).removeprefix(f"{f}: ")))
            break
    return lines


def _bad_lines(con: duckdb.DuckDBPyConnection, in_progress: dict[int, bool]) -> tuple[list[BadRow], list[BadRow]]:
    """The lines that are not JSON, with Python's reason: (bad rows under on_bad_rows, expected
    ones). The last line of a log being written is cut by nature: expected, counted."""
    policy, expected = [], []
    rows = con.execute("""SELECT log_id, file, line, unterminated, text FROM spark_bad_lines
                          ORDER BY log_id, file, line""").fetchall()
    for log_id, file, line, unterminated, text in rows:
        try:
            json.loads(text)
            why = "not a JSON object Spark's reader parses"
        except ValueError as e:
            why = f"not JSON ({e})"
        if unterminated:
            why = f"the last line is cut (no newline ends it: the log is truncated); {why}"
        bad = BadRow(file, line, why, text[:200])
        (expected if unterminated and in_progress[log_id] else policy).append(bad)
    return policy, expected


def _skips(con: duckdb.DuckDBPyConnection) -> list[BadRow]:
    """Logs read but not staged: no application start, or a second log of an application attempt."""
    rows = con.execute("""SELECT log_path, app_id, attempt_id, duplicate_of FROM stg_spark_applications
                          WHERE NOT kept ORDER BY log_id""").fetchall()
    return [BadRow(path, None, "no SparkListenerApplicationStart event: not an application's log" if app is None
                   else f"a second log of application {app}" + (f" attempt {attempt}" if attempt else "")
                   + f": {kept} is the one staged (complete, fewer bad lines, more events)")
            for path, app, attempt, kept in rows]


def stage_spark(con: duckdb.DuckDBPyConnection, log_dir: Path, *, trace: str = TRACE, min_tasks: int = 100,
                on_bad_rows: str = "fail") -> dict[str, int]:
    """Read every event log under ``log_dir`` into the event tables and build the typed tables
    (SPARK_TABLES); returns counts (logs, applications, stage attempts, selected ones, task
    attempts, executors, skipped files, bad lines, applications with no selected stage).
    ``min_tasks`` and ``on_bad_rows`` are the warehouse's settings (NURD_MIN_TASKS, NURD_ON_BAD_ROWS);
    ``trace`` names the rows of table quarantine and of the ledger."""
    log_dir = Path(log_dir).resolve()
    logs, not_logs = discover(log_dir)
    if not logs:
        what = (f"{len(not_logs)} entries, none a log Spark reads (first: {not_logs[0].path.name}: "
                f"{not_logs[0].reason})" if not_logs else "the directory is empty")
        raise TraceFormatError(f"no Spark event log under {log_dir}: {what} (expected <appId>[.codec] files or "
                               f"eventlog_v2_<appId>/ folders, as spark.eventLog.dir holds them)")
    skipped = [BadRow(str(n.path), None, n.reason) for n in not_logs]
    problems: list[BadRow] = []
    cut_short: list[BadRow] = []   # logs being written, whose compressed stream is not closed yet
    params = {"min_tasks": int(min_tasks)}
    # one transaction: a log that stops the staging leaves the warehouse as it was
    with transaction(con):
        loader = _Loader(con)
        for log_id, log in enumerate(logs):
            lines = _read_log(loader, log_id, log, problems, cut_short)
            con.execute("INSERT INTO spark_logs VALUES (?, ?, ?, ?, ?, ?, ?)",
                        [log_id, str(log.path), log.codec or "none", log.rolling, log.in_progress,
                         len(log.files), lines])
        bad, expected = _bad_lines(con, {i: log.in_progress for i, log in enumerate(logs)})
        bad, expected = problems + bad, cut_short + expected
        if bad and on_bad_rows != "quarantine":
            raise TraceFormatError(f"staging Spark event logs: {bad[0].message(REMEDY_LOG)}")
        for table in SPARK_TABLES:
            con.execute(render(table, **params))
        skipped += _skips(con)
        locate.quarantine_rows(con, trace, STAGE, skipped + expected + bad)
        counts = spark_counts(con) | {"skipped_files": len(skipped), "bad_lines": len(bad),
                                      "cut_in_progress": len(expected)}
        record_settings(con, "staged_trace", trace, {"on_bad_rows": on_bad_rows},
                        digest([files_digest([f for log in logs for f in log.files]),
                                [render(t, **params) for t in SPARK_TABLES], on_bad_rows]))
        record_settings(con, "staged_trace:spark", trace, counts, None)
    return counts


def spark_counts(con: duckdb.DuckDBPyConnection) -> dict[str, int]:
    """What the staged tables hold, the counted skips' companions (the report's numbers)."""
    row = con.execute("""SELECT (SELECT count(*) FROM spark_logs),
                                (SELECT count(*) FROM stg_spark_applications WHERE kept),
                                (SELECT count(*) FROM stg_spark_applications WHERE kept AND in_progress),
                                (SELECT count(*) FROM stg_spark_stages),
                                (SELECT count(*) FROM stg_spark_stages WHERE selected),
                                (SELECT count(*) FROM stg_spark_tasks),
                                (SELECT count(*) FROM stg_spark_executors),
                                (SELECT count(*) FROM stg_spark_applications a WHERE kept AND NOT EXISTS
                                    (SELECT 1 FROM stg_spark_stages s WHERE s.log_id = a.log_id AND s.selected))
                         """).fetchone()
    names = ("logs", "applications", "applications_in_progress", "stage_attempts", "selected_stage_attempts",
             "task_attempts", "executors", "apps_no_selected_stage")
    return dict(zip(names, row))
