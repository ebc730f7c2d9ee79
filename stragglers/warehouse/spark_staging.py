"""Staging of Spark event logs: the logs' lines into DuckDB (table spark_log_lines, only the events
the tables need, and every line that is not JSON), then the typed tables of sql/stg_spark_*.sql.

Bad input is never dropped silently (docs/TRACES.md, "Spark event logs"): a line that is not JSON, a
log cut mid-line, a compressed stream that does not decode follow ``on_bad_rows`` (``fail``: a
one-line error naming the file and line; ``quarantine``: set aside in table quarantine, counted). A
file that is not a log Spark reads (unknown codec), a log without its application's start and a
second log of an application already read are always counted skips in table quarantine; an
application with no stage attempt of ``min_tasks`` tasks is staged and counted (``apps_no_selected_stage``).
"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pyarrow as pa

from stragglers.traces.spark_eventlog import CodecError, EventLog, Lines, discover, read_lines
from stragglers.warehouse import locate
from stragglers.warehouse.ledger import digest, files_digest, record_settings
from stragglers.warehouse.locate import BadRow, TraceFormatError
from stragglers.warehouse.sql_files import render
from stragglers.warehouse.storage import transaction

#: The listener events the staged tables read; other lines are only checked to be JSON.
EVENTS = (
    "SparkListenerLogStart", "SparkListenerApplicationStart", "SparkListenerApplicationEnd",
    "SparkListenerEnvironmentUpdate", "SparkListenerStageSubmitted", "SparkListenerStageCompleted",
    "SparkListenerTaskStart", "SparkListenerTaskEnd", "SparkListenerExecutorAdded", "SparkListenerExecutorRemoved",
)
#: The typed tables, in build order (each is sql/<name>.sql; applications first: it says which logs are kept).
SPARK_TABLES = ("stg_spark_applications", "stg_spark_stages", "stg_spark_tasks", "stg_spark_executors")
STAGE = "staged_trace"
TRACE = "spark_eventlog"   # the NURD_TRACE value of this format
EVENT_LIST = ", ".join(f"'{e}'" for e in EVENTS)
REMEDY_LOG = ("fix or remove the log, or run with NURD_ON_BAD_ROWS=quarantine to set the line aside "
              "(counted in table quarantine)")


def _create_raw_tables(con: duckdb.DuckDBPyConnection) -> None:
    con.execute("""CREATE OR REPLACE TABLE spark_logs (log_id INTEGER, log_path VARCHAR, codec VARCHAR,
                   rolling BOOLEAN, in_progress BOOLEAN, files INTEGER, lines BIGINT, bad_lines INTEGER)""")
    con.execute("""CREATE OR REPLACE TABLE spark_log_lines (log_id INTEGER, file VARCHAR, line BIGINT,
                   event VARCHAR, valid BOOLEAN, unterminated BOOLEAN, text VARCHAR)""")


def _load_batch(con: duckdb.DuckDBPyConnection, log_id: int, batch: Lines) -> None:
    """One batch of lines into spark_log_lines: the events the tables read and every line that is
    not JSON (DuckDB's json_valid, on every line: a malformed line of any event is seen). The event's
    name is read from the line's start, as Spark writes it ('{"Event":"<name>",...')."""
    lines = pa.table({"line": pa.array(range(batch.first, batch.first + len(batch)), pa.int64()),
                      "text": batch.text})
    last = batch.first + len(batch) - 1 if batch.unterminated else -1
    con.register("spark_batch_lines", lines)
    try:
        con.execute(f"""INSERT INTO spark_log_lines
                        SELECT ?, ?, line, event, valid, line = ?, text
                        FROM (SELECT line, text, json_valid(text) AS valid,
                                     regexp_extract(text[:200], '^\\{{"Event":"([^"]+)"', 1) AS event
                              FROM spark_batch_lines)
                        WHERE event IN ({EVENT_LIST}) OR NOT valid""", [log_id, str(batch.file), last])
    finally:
        con.unregister("spark_batch_lines")


def _read_log(con: duckdb.DuckDBPyConnection, log_id: int, log: EventLog, problems: list[BadRow]) -> int:
    """Every file of ``log`` into spark_log_lines; returns the lines read. A compressed stream that
    does not decode ends the log's reading there (what was read is kept) and is a problem."""
    lines = 0
    for f in log.files:
        try:
            for batch in read_lines(f, log.codec):
                _load_batch(con, log_id, batch)
                lines += len(batch)
        except CodecError as e:
            problems.append(BadRow(str(f), None, str(e).removeprefix(f"{f}: ")))
            break
    return lines


def _bad_lines(con: duckdb.DuckDBPyConnection, in_progress: dict[int, bool]) -> tuple[list[BadRow], list[BadRow]]:
    """The lines that are not JSON, with Python's reason: (bad rows under on_bad_rows, expected
    ones). The last line of a log being written is cut by nature: expected, counted."""
    policy, expected = [], []
    rows = con.execute("""SELECT log_id, file, line, unterminated, text FROM spark_log_lines
                          WHERE NOT valid ORDER BY log_id, file, line""").fetchall()
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
    """Read every event log under ``log_dir`` into spark_log_lines and build the typed tables
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
    with transaction(con):
        _create_raw_tables(con)
        for log_id, log in enumerate(logs):
            lines = _read_log(con, log_id, log, problems)
            con.execute("INSERT INTO spark_logs VALUES (?, ?, ?, ?, ?, ?, ?, 0)",
                        [log_id, str(log.path), log.codec or "none", log.rolling, log.in_progress,
                         len(log.files), lines])
        con.execute("""UPDATE spark_logs l SET bad_lines = b.n FROM
                       (SELECT log_id, count(*) AS n FROM spark_log_lines WHERE NOT valid GROUP BY log_id) b
                       WHERE b.log_id = l.log_id""")
    bad, expected = _bad_lines(con, {i: log.in_progress for i, log in enumerate(logs)})
    bad = problems + bad
    if bad and on_bad_rows != "quarantine":
        raise TraceFormatError(f"staging Spark event logs: {bad[0].message(REMEDY_LOG)}")
    params = {"min_tasks": int(min_tasks)}
    with transaction(con):
        for table in SPARK_TABLES:
            con.execute(render(table, **params))
        skipped += _skips(con)
        locate.quarantine_rows(con, trace, STAGE, skipped + expected + bad)
        counts = spark_counts(con) | {"skipped_files": len(skipped), "bad_lines": len(bad),
                                      "cut_last_lines_in_progress": len(expected)}
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
