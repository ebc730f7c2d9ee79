"""Staging of Spark event logs: the logs' lines into DuckDB in batches (the events the tables need,
parsed into typed rows by sql/spark_*_events.sql and sql/spark_task_*.sql; every line that is not
JSON into spark_bad_lines), then the typed tables of sql/stg_spark_*.sql, and the account of what
was done with each entry of the directory (table spark_log_account, lines to print: log_account_lines).

Bad input is never dropped silently (docs/TRACES.md, "Spark event logs"): a line that is not JSON, a
log cut mid-line, a compressed stream that does not decode follow ``on_bad_rows`` (``fail``: a
one-line error naming the file and line; ``quarantine``: set aside in table quarantine, counted). A
file that is not a log Spark reads (unknown codec), one with no Spark event in it (it does not
decode, or holds something else), a log without its application's start, a log that stops before
its application's end with no completed stage, and a second log of an application already read are
always counted skips in table quarantine. A log that stops before its application's end (truncated,
or in progress) is used up to its last complete stage: an attempt still running at its end is not
selected, and counted. An application with no stage attempt of ``min_tasks`` tasks is staged and
counted (``apps_no_selected_stage``). A directory that is missing, empty, or holds no log to stage
is refused in one line (NoEventLogError).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from stragglers.traces.spark_eventlog import CodecError, EventLog, Lines, discover, read_lines
from stragglers.warehouse import locate
from stragglers.warehouse.freshness import digest, files_digest, record_settings
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
ACCOUNT = "spark_log_account"   # what was done with each entry of the directory, built after them
STAGE = "staged_trace"
TRACE = "spark_eventlog"   # the NURD_TRACE value of this format
BATCH = "spark_batch_lines"   # what each SQL file reads: its events' lines of the batch
ALL_LINES = "spark_batch_all"  # the batch's every line: the local variable _Loader's queries read
REMEDY_LOG = ("fix or remove the log, or run with NURD_ON_BAD_ROWS=quarantine to set the line aside "
              "(counted in table quarantine)")
EVENT_START = '{"Event":"'   # how every line of a Spark event log starts (Spark writes "Event" first)
EXPECTED_LOGS = ("expected <appId>[.codec] files or eventlog_v2_<appId>/ folders, as spark.eventLog.dir "
                 "holds them")


class NoEventLogError(TraceFormatError, FileNotFoundError):
    """The directory holds no Spark event log to stage: it is missing, empty, or none of its entries
    is a readable application's log. One line naming the directory and what is wrong, for the
    caller to print before it exits non-zero; a TraceFormatError and a FileNotFoundError both, as
    a missing or empty directory was before."""


@dataclass
class _Read:
    """What reading one log gave: its lines, those that are Spark events (JSON whose first field is
    "Event"), and the codec error that ended its reading, if one did (being_written: at the end of a
    log in progress, whose writer has not closed its frame or block yet)."""
    lines: int = 0
    events: int = 0
    error: BadRow | None = None
    being_written: bool = False


class _Loader:
    """Appends batches of lines to the event tables (created with the types their SQL gives).

    A batch is read once, as ``spark_batch_all`` (a local variable of the same name); each SQL file reads ``spark_batch_lines``,
    a CTE over it holding the lines of that file's events (a line's start says its event: Spark
    writes "Event" first). Every line is checked to be JSON once, by sql/spark_bad_lines.sql; the
    event tables parse their lines without checking them again, unless the batch has a bad line."""

    def __init__(self, con: duckdb.DuckDBPyConnection):
        self.con = con
        # entry: the log's path relative to the directory; events: its lines that are Spark events
        con.execute("""CREATE OR REPLACE TEMP TABLE spark_logs (log_id INTEGER, log_path VARCHAR, codec VARCHAR,
                       rolling BOOLEAN, in_progress BOOLEAN, files INTEGER, lines BIGINT, entry VARCHAR,
                       events BIGINT, read_error VARCHAR)""")
        self.bad_sql = self._over("TRUE", render("spark_bad_lines"))
        self.sql = {t: {checked: self._over(_starts_with_any(events) + (" AND json_valid(text)" if checked else ""),
                                            render(t))
                        for checked in (False, True)}
                    for t, events in EVENT_TABLES.items()}
        spark_batch_all = self._table(0, Path(), 1, pa.array([], pa.large_string()), False)  # noqa: F841 (read by name)
        con.execute(f"CREATE OR REPLACE TEMP TABLE spark_bad_lines AS {self.bad_sql} LIMIT 0")
        for t, sql in self.sql.items():
            con.execute(f"CREATE OR REPLACE TEMP TABLE {t} AS {sql[True]} LIMIT 0")

    #: The tables the batches are read into: connection-local (TEMP) until keep() makes them the warehouse's.
    TABLES = ("spark_logs", "spark_bad_lines", *EVENT_TABLES)

    def keep(self) -> None:
        """The read tables into the warehouse (inside the staging's transaction)."""
        for t in self.TABLES:
            self.con.execute(f"CREATE OR REPLACE TABLE main.{t} AS SELECT * FROM temp.{t}")
            self.con.execute(f"DROP TABLE temp.{t}")

    def drop(self) -> None:
        """What a staging that stopped had read (kept tables are gone from temp already)."""
        for t in self.TABLES:
            self.con.execute(f"DROP TABLE IF EXISTS temp.{t}")

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

    def load(self, log_id: int, batch: Lines) -> int:
        """One batch: its lines that are not JSON into spark_bad_lines, then each event table's
        lines parsed into it. The big lines of events no table reads (SQL plans) are only checked.
        Returns the batch's lines that start as a Spark event (some may not be JSON)."""
        # DuckDB reads the batch by this local variable's name (its replacement scan), not from a view
        # made by con.register: a view dropped inside the staging's one transaction keeps its Arrow
        # batch alive until the commit, and memory would grow with the directory.
        spark_batch_all = self._table(log_id, batch.file, batch.first, batch.text, batch.unterminated)  # noqa: F841
        bad = self.con.execute(f"INSERT INTO spark_bad_lines {self.bad_sql}").fetchone()[0]
        for table, sql in self.sql.items():
            self.con.execute(f"INSERT INTO {table} {sql[bad > 0]}")
        return pc.sum(pc.starts_with(batch.text, pattern=EVENT_START)).as_py() or 0

    def bad_events(self, log_id: int) -> int:
        """The lines of a log that start as a Spark event but are not JSON."""
        return self.con.execute("SELECT count(*) FROM spark_bad_lines WHERE log_id = ? AND starts_with(text, ?)",
                                [log_id, EVENT_START]).fetchone()[0]


def _starts_with_any(events: tuple[str, ...]) -> str:
    """A SQL condition: the line is one of these events."""
    return "(" + " OR ".join(f"""starts_with(text, '{{"Event":"{e}"')""" for e in events) + ")"


def _read_log(loader: _Loader, log_id: int, log: EventLog) -> _Read:
    """Every file of ``log`` into the event tables. A compressed stream that does not decode ends
    the log's reading there (what was read is kept): a problem, unless it is the end of a log being
    written (the writer has not closed its frame or block yet), or the log has no event at all."""
    read = _Read()
    for f in log.files:
        try:
            for batch in read_lines(f, log.codec):
                read.events += loader.load(log_id, batch)
                read.lines += len(batch)
        except CodecError as e:
            read.error = BadRow(str(f), None, str(e).removeprefix(f"{f}: "))
            read.being_written = log.in_progress and f == log.files[-1]
            break
    read.events -= loader.bad_events(log_id)
    return read


def _bad_lines(con: duckdb.DuckDBPyConnection, in_progress: dict[int, bool],
               unreadable: set[int]) -> tuple[list[BadRow], list[BadRow]]:
    """The lines that are not JSON, with Python's reason: (bad rows under on_bad_rows, expected
    ones). The last line of a log being written is cut by nature: expected, counted. The lines of a
    file with no Spark event in it are not a log's: the file is one counted skip (_skips)."""
    policy, expected = [], []
    rows = con.execute("""SELECT log_id, file, line, unterminated, text FROM spark_bad_lines
                          ORDER BY log_id, file, line""").fetchall()
    for log_id, file, line, unterminated, text in rows:
        if log_id in unreadable:
            continue
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
    """Logs read but not staged, with what the account says of each: no Spark event in it, no
    application start, no completed stage before the log stops, a second log of an application."""
    rows = con.execute(f"""SELECT l.log_path, a.done FROM {ACCOUNT} a JOIN spark_logs l USING (log_id)
                           WHERE NOT a.used ORDER BY log_id""").fetchall()
    return [BadRow(path, None, done.removeprefix("skipped: ")) for path, done in rows]


def _one_line(text: str) -> str:
    """``text`` on one line (a file's name, or a codec's message, may hold a newline)."""
    return " ".join(text.splitlines())


def _refuse(log_dir: Path, what: str) -> NoEventLogError:
    return NoEventLogError(_one_line(f"no Spark event log under {log_dir}: {what}"))


def stage_spark(con: duckdb.DuckDBPyConnection, log_dir: Path, *, trace: str = TRACE, min_tasks: int = 100,
                on_bad_rows: str = "fail", progress: Callable[[str], None] | None = None,
                named_by: str = "setting NURD_TRACE_URL") -> dict[str, int]:
    """Read every event log under ``log_dir`` into the event tables, build the typed tables
    (SPARK_TABLES) and the account of each entry (ACCOUNT); returns counts (logs, applications,
    stage attempts, selected ones, task attempts, executors, skipped files, bad lines, applications
    with no selected stage, truncated ones, stage attempts cut by their log's end, unreadable files).
    ``min_tasks`` and ``on_bad_rows`` are the warehouse's settings (min_tasks, NURD_ON_BAD_ROWS);
    ``named_by``: what named the directory, for the error that says it holds no log;
    ``trace`` names the rows of table quarantine and of the ledger. Raises NoEventLogError (one
    line) for a directory missing, empty, or with no application's log to stage. ``progress`` gets a
    line every few seconds while the logs are read."""
    log_dir = Path(log_dir).resolve()
    if not log_dir.is_dir():
        raise _refuse(log_dir, ("it is a file, not a directory" if log_dir.exists() else "the directory does not exist")
                      + f" ({named_by} names the directory of the logs)")
    logs, not_logs = discover(log_dir)
    if not logs:
        raise _refuse(log_dir, (f"{len(not_logs)} entries, none a log Spark reads (first: "
                                f"{not_logs[0].path.relative_to(log_dir)}: {not_logs[0].reason})"
                                if not_logs else "the directory is empty") + f" ({EXPECTED_LOGS})")
    # The logs are read into connection-local tables, each batch committed (inserts held in one
    # transaction stay in memory until its commit: memory would grow with the directory); then one
    # transaction makes them and what is built from them the warehouse's: a log that stops the
    # staging leaves the warehouse as it was.
    loader = _Loader(con)
    try:
        reads = []
        said = time.monotonic()
        for log_id, log in enumerate(logs):
            read = _read_log(loader, log_id, log)
            reads.append(read)
            if progress is not None and time.monotonic() - said > 2:
                progress(f"read {log_id + 1} of {len(logs)} event logs")
                said = time.monotonic()
            con.execute("INSERT INTO spark_logs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        [log_id, str(log.path), log.codec or "none", log.rolling, log.in_progress,
                         len(log.files), read.lines, str(log.path.relative_to(log_dir)), read.events,
                         read.error and read.error.reason])
        with transaction(con):
            loader.keep()
            return _build(con, log_dir, logs, not_logs, reads, trace=trace, min_tasks=min_tasks,
                          on_bad_rows=on_bad_rows)
    finally:
        loader.drop()


def _build(con: duckdb.DuckDBPyConnection, log_dir: Path, logs: list[EventLog], not_logs: list, reads: list[_Read],
           *, trace: str, min_tasks: int, on_bad_rows: str) -> dict[str, int]:
    """From the read tables: the typed tables, the account, table quarantine and the ledger's rows;
    stage_spark's counts."""
    skipped = [BadRow(str(n.path), None, n.reason) for n in not_logs]
    params = {"min_tasks": int(min_tasks)}
    # a file with no Spark event is no log: one counted skip, not its lines nor its codec's error
    unreadable = {i for i, read in enumerate(reads) if read.events == 0}
    errors = [(read.error, read.being_written) for i, read in enumerate(reads)
              if read.error and i not in unreadable]
    bad, expected = _bad_lines(con, {i: log.in_progress for i, log in enumerate(logs)}, unreadable)
    bad = [e for e, being_written in errors if not being_written] + bad
    expected = [e for e, being_written in errors if being_written] + expected
    if bad and on_bad_rows != "quarantine":
        raise TraceFormatError(f"staging Spark event logs: {bad[0].message(REMEDY_LOG)}")
    con.execute("CREATE OR REPLACE TABLE spark_not_logs (entry VARCHAR, reason VARCHAR)")
    if not_logs:
        con.executemany("INSERT INTO spark_not_logs VALUES (?, ?)",
                        [[str(n.path.relative_to(log_dir)), n.reason] for n in not_logs])
    for table in (*SPARK_TABLES, ACCOUNT):
        con.execute(render(table, **params))
    if not con.execute("SELECT count(*) FROM stg_spark_applications WHERE kept").fetchone()[0]:
        raise _refuse(log_dir, _nothing_to_stage(con))
    skipped += _skips(con)
    locate.quarantine_rows(con, trace, STAGE, skipped + expected + bad)
    counts = spark_counts(con) | {"skipped_files": len(skipped), "bad_lines": len(bad),
                                  "cut_in_progress": len(expected)}
    record_settings(con, "staged_trace", trace, {"on_bad_rows": on_bad_rows},
                    digest([files_digest([f for log in logs for f in log.files]),
                            [render(t, **params) for t in (*SPARK_TABLES, ACCOUNT)], on_bad_rows]))
    record_settings(con, "staged_trace:spark", trace, counts, None)
    return counts


def _nothing_to_stage(con: duckdb.DuckDBPyConnection) -> str:
    """Why no application is staged, from the account: its entries by status, and the first log
    read (else the first entry) with what was done with it."""
    rows = con.execute(f"SELECT path, status, done FROM {ACCOUNT} ORDER BY log_id IS NULL, path").fetchall()
    statuses: dict[str, int] = {}
    for _, status, _ in rows:
        statuses[status] = statuses.get(status, 0) + 1
    path, status, done = rows[0]
    return (f"{len(rows)} entr{'y' if len(rows) == 1 else 'ies'} ("
            + ", ".join(f"{n} {s.replace('_', ' ')}" for s, n in sorted(statuses.items()))
            + f"), none a readable application's log to stage (first: {path}: {done})")


def log_account_lines(con: duckdb.DuckDBPyConnection, *, all_entries: bool = False) -> list[str]:
    """One line per entry of the staged directory that is not simply a complete log used whole
    (``all_entries``: per entry), for the console command and the asset to print: the entry
    (relative to the directory), its status and what was done with it (table spark_log_account), e.g.
    ``truncated_eventlog (truncated): used up to its last complete stage: 1 of 3 stage attempts; 2 cut
    by the log's end left out``."""
    plain = "FALSE" if all_entries else "status = 'complete' AND used AND bad_lines = 0"
    rows = con.execute(f"SELECT path, status, done FROM {ACCOUNT} WHERE NOT ({plain}) ORDER BY path").fetchall()
    return [_one_line(f"{path} ({status.replace('_', ' ')}): {done}") for path, status, done in rows]


def spark_counts(con: duckdb.DuckDBPyConnection) -> dict[str, int]:
    """What the staged tables hold, the counted skips' companions (the report's numbers)."""
    row = con.execute(f"""SELECT (SELECT count(*) FROM spark_logs),
                                (SELECT count(*) FROM stg_spark_applications WHERE kept),
                                (SELECT count(*) FROM stg_spark_applications WHERE kept AND in_progress),
                                (SELECT count(*) FROM stg_spark_stages),
                                (SELECT count(*) FROM stg_spark_stages WHERE selected),
                                (SELECT count(*) FROM stg_spark_tasks),
                                (SELECT count(*) FROM stg_spark_executors),
                                (SELECT count(*) FROM stg_spark_applications a WHERE kept AND NOT EXISTS
                                    (SELECT 1 FROM stg_spark_stages s WHERE s.log_id = a.log_id AND s.selected)),
                                (SELECT count(*) FROM stg_spark_applications WHERE kept AND status = 'truncated'),
                                (SELECT count(*) FROM stg_spark_stages WHERE cut),
                                (SELECT count(*) FROM {ACCOUNT} WHERE status = 'unreadable')
                         """).fetchone()
    names = ("logs", "applications", "applications_in_progress", "stage_attempts", "selected_stage_attempts",
             "task_attempts", "executors", "apps_no_selected_stage", "applications_truncated",
             "stage_attempts_cut", "logs_unreadable")
    return dict(zip(names, row))
