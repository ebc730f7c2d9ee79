"""Say where raw trace input is malformed: the file, the line in that file (or the job and
task), what was expected, and what to do.

DuckDB reads the raw parts through glob views (``sql/stg_*.sql``); its own errors name
neither the file reliably nor our remedy, and a truncated gzip surfaces as a bad CSV
row.  When a read fails, ``explain`` checks the view's files (empty, truncated or
corrupt gzip) and re-reads them with DuckDB's reject store (``store_rejects``), which
records file and line of every row that does not parse.  The semantic checks
(``event_anomalies``: event type out of range, duplicate rows, FINISH before SCHEDULE)
run in SQL and locate the first offending row with a scan of its one file.

``on_bad_rows`` (setting ``NURD_ON_BAD_ROWS``): ``fail`` raises ``TraceFormatError`` at the
first problem; ``quarantine`` sets the rows aside in table ``quarantine`` (trace, file,
line, reason, row), counted in ``selection_funnel`` and the assets' metadata.  A broken
file (empty, truncated, absent) always fails: quarantine sets rows aside, not files.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import re
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

import duckdb

QUARANTINE = "quarantine"
MANIFEST_NAME = ".verified.json"   # written by the downloader: every file it fetched and verified
GOOGLE_EVENT_TYPES = range(0, 9)   # SUBMIT .. UPDATE_RUNNING (Google 2011 schema)
ALIBABA_STATUSES = ("Terminated", "Failed", "Running", "Waiting", "Ready", "Cancelled", "Interrupted")
REMEDY_FILE = ("re-fetch it: delete the file and materialize raw_trace again (the download resumes and "
               "verifies SHA256SUM); if the source itself is damaged, fix or drop that part at the source")
REMEDY_EMPTY = ("re-fetch it (delete the file and materialize raw_trace again); if the source really has no rows "
                "there, run with NURD_EMPTY_PARTS=accept (the part is then counted in staged_trace's metadata)")
REMEDY_ROW = ("fix the row at the source, or run with NURD_ON_BAD_ROWS=quarantine to set such rows aside "
              "(they are counted in table quarantine and in selection_funnel)")


class TraceFormatError(ValueError):
    """A raw trace file does not have the expected format (names the file and line)."""


@dataclass(frozen=True)
class BadRow:
    file: str
    line: int | None
    reason: str
    row: str = ""
    job_id: int | None = None
    task_id: int | None = None

    def message(self, remedy: str = REMEDY_ROW) -> str:
        where = f"{self.file}, line {self.line}" if self.line else self.file
        source = source_of(self.file)
        if source:   # the user fixes the row there, not in our copy
            where += f" (the local copy of {source})"
        shown = f" (row: {self.row[:200]})" if self.row else ""
        return f"{where}: {self.reason}{shown}. What to do: {remedy}"


# --------------------------------------------------------------------------- files
def gzip_problem(path: Path) -> str | None:
    """None if ``path`` is a complete gzip stream, else what is wrong (empty, truncated, corrupt)."""
    path = Path(path)
    if not path.exists():
        return "listed but absent"
    if path.stat().st_size == 0:
        return "empty file (0 bytes): expected a gzip-compressed CSV part"
    if not path.name.endswith(".gz"):
        return None
    try:
        with gzip.open(path, "rb") as f:
            while f.read(1 << 20):
                pass
    except EOFError:
        return "truncated gzip (the stream ends before its end marker): expected a complete gzip file"
    except (gzip.BadGzipFile, zlib.error, OSError) as e:
        return f"corrupt gzip ({e}): expected a gzip-compressed CSV part"
    return None


def has_no_rows(path: Path) -> bool:
    """A gzip part that decompresses to nothing (reads one byte, not the part). A damaged one is
    not "empty": the read that fails on it names it (``explain``)."""
    try:
        with gzip.open(path, "rb") as f:
            return f.read(1) == b""
    except (EOFError, gzip.BadGzipFile, zlib.error, OSError):
        return False


def empty_parts(parts: dict[str, list[Path]]) -> dict[str, list[Path]]:
    """{table: its parts with no rows} for the tables whose other parts have rows (a table whose
    every part is empty is a table without rows, said by the steps that need it)."""
    out = {}
    for table, files in parts.items():
        empty = [p for p in files if p.stat().st_size > 0 and has_no_rows(p)]
        if empty and len(empty) < len(files):
            out[table] = empty
    return out


def part_gaps(files: list[Path]) -> list[int]:
    """Part numbers missing below the highest present (``part-NNNNN-of-MMMMM``): a gap between parts
    or a mirror that does not start at part 0."""
    numbers = {int(m.group(1)) for p in files if (m := re.match(r"part-(\d+)-of-\d+\.csv\.gz$", p.name))}
    return sorted(set(range(max(numbers, default=-1) + 1)) - numbers)


def check_gzip(path: Path) -> None:
    """Raise TraceFormatError if ``path`` is not a complete gzip file (usable by the downloader)."""
    problem = gzip_problem(path)
    if problem:
        raise TraceFormatError(BadRow(str(path), None, problem).message(REMEDY_FILE))


def check_manifest(raw_dir: Path) -> None:
    """Every file the downloader fetched (``.verified.json``) must still be there and non-empty."""
    manifest = Path(raw_dir) / MANIFEST_NAME
    if not manifest.exists():
        return
    try:
        entries = json.loads(manifest.read_text()).get("files", {})
    except (ValueError, AttributeError):
        return
    for rel in sorted(entries):
        path = Path(raw_dir) / rel
        if not path.exists():
            raise TraceFormatError(BadRow(str(path), None, "listed in SHA256SUM and fetched earlier, but absent "
                                          "now").message(REMEDY_FILE))
        if path.stat().st_size == 0:
            raise TraceFormatError(BadRow(str(path), None, "empty file (0 bytes): expected a gzip-compressed "
                                          "CSV part").message(REMEDY_FILE))


# --------------------------------------------------------------------------- rows that do not parse
_READ_CSV = re.compile(r"read_csv\(\s*'((?:[^']|'')*)'\s*,", re.S)


def staging_reads(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    """The ``SELECT * FROM read_csv(...)`` of every staging view (stg_*) in the connection."""
    out = {}
    for name, sql in con.execute("SELECT view_name, sql FROM duckdb_views() WHERE view_name LIKE 'stg_%' "
                                 "AND NOT internal ORDER BY 1").fetchall():
        m = _READ_CSV.search(sql or "")
        if m:
            body = sql[sql.upper().index("SELECT", sql.upper().index(" AS ")):].rstrip().rstrip(";")
            out[name] = body
    return out


def quarantine_views(con: duckdb.DuckDBPyConnection) -> None:
    """Re-create the staging views so that rows that do not parse are skipped (and recorded)."""
    for view, select_sql in staging_reads(con).items():
        con.execute(f"CREATE OR REPLACE VIEW {view} AS {with_rejects(select_sql)}")


def unparsed_rows(con: duckdb.DuckDBPyConnection) -> list[BadRow]:
    """Every row of every staging view that does not parse (file, line, reason)."""
    return [r for select_sql in staging_reads(con).values() for r in rejected_rows(con, select_sql)]


def with_rejects(select_sql: str) -> str:
    """The same read_csv with DuckDB's reject store: bad rows are skipped and recorded
    (table reject_errors: file, line, column, message)."""
    if "store_rejects" in select_sql:
        return select_sql
    return _READ_CSV.sub(lambda m: m.group(0) + " store_rejects = true,", select_sql, count=1)


def glob_of(select_sql: str) -> str:
    m = _READ_CSV.search(select_sql)
    return m.group(1).replace("''", "'") if m else ""


def files_of(con: duckdb.DuckDBPyConnection, pattern: str) -> list[str]:
    return [r[0] for r in con.execute("SELECT file FROM glob(?) ORDER BY file", [pattern]).fetchall()]


def _reason(error_type: str, column: str | None, message: str, expected_columns: int) -> str:
    if error_type in ("TOO MANY COLUMNS", "MISSING COLUMNS"):
        found = re.search(r"[Ff]ound:?\s*(\d+)", message or "")
        stated = re.search(r"Expected Number of Columns:?\s*(\d+)", message or "")
        expected_columns = int(stated.group(1)) if stated else expected_columns
        return (f"wrong field count: expected {expected_columns} fields"
                + (f", found {found.group(1)}" if found else f" ({error_type.lower()})"))
    if error_type == "CAST":
        m = re.search(r'Could not convert string "([^"]*)" to \'(\w+)\'', message or "")
        if m:
            return f"non-numeric value {m.group(1)!r} in column {column}: expected {m.group(2)}"
    return f"{error_type.lower()} in column {column}: {message}"


def rejected_rows(con: duckdb.DuckDBPyConnection, select_sql: str, limit: int | None = None) -> list[BadRow]:
    """Every row of ``select_sql``'s read_csv that does not parse, with file and line."""
    sql = with_rejects(select_sql)
    n_columns = len(con.execute(f"DESCRIBE ({select_sql})").fetchall()) - ("filename = true" in select_sql)
    con.execute("DROP TABLE IF EXISTS reject_errors; DROP TABLE IF EXISTS reject_scans")
    # every column must be converted for its errors to be seen: aggregate all of them
    con.execute(f"SELECT count(COLUMNS(*)) FROM ({sql})").fetchall()
    rows = con.execute(f"""SELECT s.file_path, e.line, e.column_name, e.error_type, e.csv_line, e.error_message
        FROM reject_errors e JOIN reject_scans s USING (scan_id, file_id)
        ORDER BY s.file_path, e.line {f'LIMIT {int(limit)}' if limit else ''}""").fetchall()
    return [BadRow(f, int(line), _reason(et, col, msg, n_columns), row or "")
            for f, line, col, et, row, msg in rows]


def source_of(path: str) -> str | None:
    """Where the downloader fetched ``path`` from (its manifest entry), or None (generated, or a
    file not fetched by the downloader)."""
    p = Path(path)
    for root in p.parents[:3]:
        manifest = root / MANIFEST_NAME
        if manifest.is_file():
            try:
                entry = json.loads(manifest.read_text()).get("files", {}).get(p.relative_to(root).as_posix())
            except (OSError, ValueError, AttributeError):
                return None
            source = entry.get("source") if isinstance(entry, dict) else None
            return source if source and source != str(p) else None
    return None


def explain(con: duckdb.DuckDBPyConnection, error: BaseException, table: str) -> TraceFormatError | None:
    """A located TraceFormatError for a failed read of the staging views, or None if the
    cause is not in the raw files."""
    reads = staging_reads(con)
    for view, select_sql in reads.items():
        for path in files_of(con, glob_of(select_sql)):
            problem = gzip_problem(Path(path))
            if problem:
                return TraceFormatError(f"building {table}: " + BadRow(path, None, problem).message(REMEDY_FILE))
    for view, select_sql in reads.items():
        try:
            bad = rejected_rows(con, select_sql, limit=1)
        except duckdb.Error:
            continue
        if bad:
            return TraceFormatError(f"building {table}: " + bad[0].message())
    return None


# --------------------------------------------------------------------------- rows that parse but are wrong
MAX_LOCATED = 10_000   # quarantine: offending rows located to their line (the rest keep file, job, task)


def _columns(con: duckdb.DuckDBPyConnection, view: str, exclude: str) -> list[str]:
    return [r[0] for r in con.execute(f"DESCRIBE {view}").fetchall() if r[0] != exclude]


def repeated_rows(view: str, group: str, keys: str, where: str, tail: str = "") -> str:
    """SQL of ``view``'s rows seen more than once (the same ``group`` columns), one row per repeat:
    (the last file holding a copy, ``keys``..., 2 if every copy is in that one file, where the second
    matching line is the repeat, else 1; then ``tail``). Files are compared by their number in name
    order, not by name: a min and max of names per group keeps two strings per row outside DuckDB's
    memory limit (measured: 1.5 GB for 3.7 M task events under a 1 GB limit; 1.5-2.3 GB above the 4 GB
    limit in the month's 8 M-row slices); numbers stay within it, and the rows are the same."""
    return f"""WITH files AS (SELECT filename, row_number() OVER (ORDER BY filename) AS file_no
                              FROM (SELECT DISTINCT filename FROM {view} WHERE {where}))
        SELECT files.filename, repeats.* EXCLUDE (last_file) FROM (
            SELECT max(file_no) AS last_file, {keys}, CASE WHEN min(file_no) = max(file_no) THEN 2 ELSE 1 END{tail}
            FROM {view} JOIN files USING (filename) WHERE {where} GROUP BY {group} HAVING count(*) > 1) repeats
        JOIN files ON files.file_no = repeats.last_file"""


def _google_checks(con: duckdb.DuckDBPyConnection, trace: str) -> list[tuple[str, str]]:
    """(reason, SQL of every offending row as (file, time, job_id, task_id, event_type, occurrence)).
    ``occurrence`` = which matching line of the file is the offending one (2 = a duplicate's copy)."""
    lo, hi = GOOGLE_EVENT_TYPES.start, GOOGLE_EVENT_TYPES.stop - 1
    events = ", ".join(_columns(con, "stg_task_events", exclude="filename"))
    return [
        (f"event type outside {lo}..{hi} in task_events",
         f"""SELECT filename, time, job_id, task_index, event_type, 1 FROM stg_task_events
             WHERE event_type NOT BETWEEN {lo} AND {hi}"""),
        (f"event type outside {lo}..{hi} in job_events",
         f"""SELECT filename, time, job_id, NULL, event_type, 1 FROM stg_job_events
             WHERE event_type NOT BETWEEN {lo} AND {hi}"""),
        ("duplicate row (the same task event twice)",
         repeated_rows("stg_task_events", events, "time, job_id, task_index, event_type", "{job_slice}")),
        # with no task_events part missing before it (a gap or a later first part would make it a
        # window edge: task_lifecycle's 'schedule_not_in_mirror', counted, not an error)
        ("FINISH before SCHEDULE (time going backwards within the task)",
         f"""SELECT NULL, finish_before_schedule_us, job_id, task_id, 4, 1 FROM task_lifecycle
             WHERE trace = '{trace}' AND end_state = 'time_backwards'"""),
    ]


def _locate(rows: list[tuple], limit: int) -> dict[tuple, tuple[int, str]]:
    """Line and text of each offending row (file, time, job, task, event, occurrence), one scan per
    file: task_events rows by (time, job, task, event), job_events rows (task None) by (time, job, event)."""
    found = {}
    task_rows = [(f, t, j, k, e, o) for f, t, j, k, e, o in rows[:limit] if k is not None]
    job_rows = [(f, t, j, e, o) for f, t, j, k, e, o in rows[:limit] if k is None]
    for key, at in _locate_keys(task_rows, [0, 2, 3, 5], limit).items():
        found[key] = at
    for (file, time, job, event), at in _locate_keys(job_rows, [0, 2, 3], limit).items():
        found[(file, time, job, "", event)] = at
    return found


def event_anomalies(con: duckdb.DuckDBPyConnection, trace: str, *, first_only: bool,
                    job_slices: list[str] = ("true",), progress=None) -> list[BadRow]:
    """Rows of a Google-format trace that parse but cannot be right, each with its file and line
    (a task's FINISH before its SCHEDULE: with its job and task). ``first_only``: stop at the first.
    ``job_slices``: conditions on job_id splitting the duplicate check's GROUP BY (bounded memory);
    ``progress(done)`` is called after each."""
    out: list[BadRow] = []
    order = " ORDER BY 1, 2 LIMIT 1" if first_only else " ORDER BY 1, 2"
    for reason, sql in _google_checks(con, trace):
        if "{job_slice}" in sql:   # one GROUP BY per slice of jobs; the rows in the same order
            found = []
            for i, condition in enumerate(job_slices):
                found += con.execute(sql.format(job_slice=condition) + order).fetchall()
                if progress:
                    progress(i + 1)
            rows = sorted(found, key=lambda r: (r[0] is None, r[0], r[1] is None, r[1]))[:1 if first_only else None]
        else:
            rows = con.execute(sql + order).fetchall()
        if not rows:
            continue
        lines = _locate(rows, 1 if first_only else MAX_LOCATED)
        for file, time, job, task, event, _ in rows:
            key = (file, str(time), str(job), "" if task is None else str(task), str(event))
            line, text = lines.get(key, (None, ""))
            where = f"job {job}" + (f", task {task}" if task is not None else "")
            out.append(BadRow(file or f"task_events ({where})", line, f"{reason} ({where}): expected "
                              + ("an event type in 0..8" if "event type" in reason else
                                 "each event once" if "duplicate" in reason else
                                 "the final FINISH after the first SCHEDULE"), text, job, task))
        if first_only:
            return out
    return out


# --------------------------------------------------------------------------- values and repeated rows
#: Per staged Google view: the fields that name a row (name, position in the file), and whether a
#: repeat is the whole row or the same key (a task_usage window measured twice, other values or not).
ROW_KEYS = {
    "stg_task_events": ((("time", 0), ("job_id", 2), ("task_index", 3), ("event_type", 5)), "row"),
    "stg_job_events": ((("time", 0), ("job_id", 2), ("event_type", 3)), "row"),
    "stg_task_usage": ((("start_time", 0), ("end_time", 1), ("job_id", 2), ("task_index", 3)), "key"),
    "stg_machine_events": ((("time", 0), ("machine_id", 1), ("event_type", 2)), "row"),
}
_WHAT = {"stg_task_events": "task event", "stg_job_events": "job event", "stg_task_usage": "task usage window",
         "stg_machine_events": "machine event"}


def _value_checks(con: duckdb.DuckDBPyConnection, view: str, only: str) -> list[tuple[str, str, str]]:
    """(reason, expected, SQL of (filename, key..., occurrence, column)) for ``view``: non-finite numbers
    (NaN, infinity: DuckDB reads them as DOUBLE values, so SQL must look), every DOUBLE column in one
    scan, the first bad column named; and repeated rows. ``{column}`` in a reason is the row's column."""
    keys, repeat = ROW_KEYS[view]
    key_sql = ", ".join(k for k, _ in keys)
    cols = con.execute(f"DESCRIBE {view}").fetchall()
    doubles = [c for c, t, *_ in cols if t in ("DOUBLE", "FLOAT")]
    checks = []
    if doubles:
        which = "CASE " + " ".join(f"WHEN NOT isfinite({c}) THEN '{c}'" for c in doubles) + " END"
        bad = " OR ".join(f"NOT isfinite({c})" for c in doubles)
        checks.append((f"non-finite value (NaN or infinity) in column {{column}} of {view[4:]}", "a finite number",
                       f"SELECT filename, {key_sql}, 1, {which} FROM {view} WHERE ({bad})"
                       + (f" AND {only}" if only else "")))
    if view != "stg_task_events":   # task_events' repeats: _google_checks (same rule, older message)
        group = key_sql if repeat == "key" else ", ".join(c for c, *_ in cols if c != "filename")
        checks.append((f"duplicate row (the same {_WHAT[view]} twice)", f"each {_WHAT[view]} once",
                       repeated_rows(view, group, key_sql, only or "true", tail=", NULL")))
    return checks


def _locate_keys(rows: list[tuple], positions: list[int], limit: int) -> dict[tuple, tuple[int, str]]:
    """Line and text of each (file, key..., occurrence) row: one scan per file, keys compared as text."""
    by_file: dict[str, dict[tuple, int]] = {}
    for file, *key, occurrence in rows[:limit]:
        if file:
            by_file.setdefault(file, {})[tuple(str(k) for k in key)] = occurrence
    found = {}
    for file, wanted in by_file.items():
        seen: dict[tuple, int] = {}
        opener = gzip.open if file.endswith(".gz") else open
        with opener(file, "rt", newline="") as f:
            for i, fields in enumerate(csv.reader(f), start=1):
                if len(fields) <= max(positions):
                    continue
                key = tuple(fields[p] for p in positions)
                if key in wanted:
                    seen[key] = seen.get(key, 0) + 1
                    if seen[key] == wanted[key]:
                        found[(file, *key)] = (i, ",".join(fields))
    return found


def value_anomalies(con: duckdb.DuckDBPyConnection, views: Iterable[str], *, first_only: bool,
                    only: dict[str, str] | None = None) -> list[BadRow]:
    """Rows of the staged ``views`` with a non-finite number or repeated, each with its file and line.
    ``only``: a condition per view (task_usage: the selected jobs' rows, the only ones a table reads)."""
    out: list[BadRow] = []
    for view in views:
        keys, _ = ROW_KEYS[view]
        positions = [p for _, p in keys]
        for reason, expected, sql in _value_checks(con, view, (only or {}).get(view, "")):
            rows = con.execute(sql + (" ORDER BY 1, 2 LIMIT 1" if first_only else " ORDER BY 1, 2")).fetchall()
            if not rows:
                continue
            lines = _locate_keys([r[:-1] for r in rows], positions, 1 if first_only else MAX_LOCATED)
            names = dict(keys)
            for file, *key, _, column in rows:
                line, text = lines.get((file, *(str(k) for k in key)), (None, ""))
                values = dict(zip(names, key))
                task = values.get("task_index")
                where_ = (f"machine {values['machine_id']}" if "machine_id" in values and "job_id" not in values
                          else f"job {values['job_id']}" + (f", task {task}" if task is not None else ""))
                out.append(BadRow(file, line, f"{reason.format(column=column)} ({where_}): expected {expected}", text,
                                  values.get("job_id"), task))
            if first_only:
                return out
    return out


# --------------------------------------------------------------------------- quarantine
def ensure_quarantine(con: duckdb.DuckDBPyConnection) -> None:
    con.execute(f"""CREATE TABLE IF NOT EXISTS {QUARANTINE} (trace VARCHAR, stage VARCHAR, file VARCHAR,
                    line BIGINT, reason VARCHAR, row VARCHAR, job_id BIGINT, task_id BIGINT)""")


def quarantine_rows(con: duckdb.DuckDBPyConnection, trace: str, stage: str, rows: Iterable[BadRow]) -> int:
    """Replace the trace's rows quarantined by ``stage`` (call inside the stage's transaction)."""
    ensure_quarantine(con)
    con.execute(f"DELETE FROM {QUARANTINE} WHERE trace = ? AND stage = ?", [trace, stage])
    rows = list(rows)
    if rows:
        con.executemany(f"INSERT INTO {QUARANTINE} VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                        [[trace, stage, r.file, r.line, r.reason, r.row, r.job_id, r.task_id] for r in rows])
    return len(rows)
