"""Every entry of a Spark event log directory accounted for (table spark_log_account, the lines of
log_account_lines): a complete log used whole, a truncated one up to its last complete stage, one in
progress up to what was written, a garbage file skipped and counted; and a directory that is missing,
empty or holds no readable log refused in one line naming it (NoEventLogError)."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import duckdb
import pytest
import zstandard

from stragglers.warehouse.locate import TraceFormatError
from stragglers.warehouse.spark_staging import (ACCOUNT, SPARK_TABLES, NoEventLogError, log_account_lines,
                                                stage_spark)
from tests import spark_logs

COMPLETE, IN_PROGRESS, CUT_BY_HAND = ("app-20240101000000-0001", "app-20240101000000-0002",
                                      "app-20240101000000-0003")
REAL_LOG = "nds_q72_dataproc_2_2.zstd"
REAL_CUT_AT = 6000   # a line inside stage 21 (2,104 tasks: lines 4,714 to 8,923), after 21 stages completed
STAGE_EVENTS = (b'{"Event":"SparkListenerStageSubmitted"', b'{"Event":"SparkListenerStageCompleted"')


def stage(tmp_path: Path, log_dir: Path, db: str = "warehouse", **kw) -> tuple[duckdb.DuckDBPyConnection, dict]:
    """Stage ``log_dir`` into a new warehouse, min_tasks 2: the hand-made stages have 2 to 12 tasks."""
    con = duckdb.connect(str(tmp_path / f"{db}.duckdb"))
    return con, stage_spark(con, log_dir, min_tasks=2, **kw)


def rows(con, sql: str, params=None) -> list[tuple]:
    return con.execute(sql, params).fetchall()


def account(con) -> dict[str, tuple]:
    return {path: tuple(rest) for path, *rest in rows(
        con, f"SELECT path, status, used, stages_used, stages_left_out, done FROM {ACCOUNT}")}


def garbage(path: Path) -> Path:
    """A file named as a plain log whose lines are not Spark events (notes left beside the logs)."""
    path.write_text("application notes\nnot an event log\n")
    return path


def real_lines_up_to(spark_realdata: Path, n: int) -> bytes:
    """The first ``n`` lines of the real log, decompressed: a log cut at a line boundary."""
    with open(spark_realdata / REAL_LOG, "rb") as raw:
        text = io.BufferedReader(zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True))
        return b"".join(text.readline() for _ in range(n))


def stage_attempts(data: bytes) -> tuple[set, set]:
    """(every stage attempt, the completed ones) of a log's bytes, read apart from the staging."""
    every, completed = set(), set()
    for line in data.splitlines():
        if line.startswith(STAGE_EVENTS):
            info = json.loads(line)["Stage Info"]
            key = (info["Stage ID"], info["Stage Attempt ID"])
            every.add(key)
            if line.startswith(STAGE_EVENTS[1]):
                completed.add(key)
    return every, completed


# --- a directory of every kind -------------------------------------------------------------------

@pytest.fixture()
def mixed(tmp_path, spark_realdata) -> tuple[Path, bytes]:
    """A complete log, a real log cut at a line boundary inside a stage, a log in progress and a
    garbage file: (the directory, the cut log's bytes)."""
    logs = tmp_path / "logs"
    spark_logs.write(logs / f"{COMPLETE}.zstd", spark_logs.application(COMPLETE), "zstd")
    cut = real_lines_up_to(spark_realdata, REAL_CUT_AT)
    assert cut.count(b"\n") == REAL_CUT_AT and b"SparkListenerApplicationEnd" not in cut
    spark_logs.write(logs / "nds_q72_cut", cut)
    spark_logs.write(logs / f"{IN_PROGRESS}.lz4.inprogress", spark_logs.application(IN_PROGRESS, end=False), "lz4")
    garbage(logs / "notes")
    return logs, cut


def test_every_log_of_a_mixed_directory_is_accounted_for(tmp_path, mixed):
    logs, cut = mixed
    con, counts = stage(tmp_path, logs)   # on_bad_rows=fail: a garbage file is a counted skip, not an error
    every, completed = stage_attempts(cut)
    assert len(every - completed) == 1 and len(completed) == 21   # stage 21, cut by the log's end
    acc = account(con)
    assert acc == {
        f"{COMPLETE}.zstd": ("complete", True, 2, 0, "used: 2 stage attempts"),
        "nds_q72_cut": ("truncated", True, 21, 1, "used up to its last complete stage: 21 of 22 stage attempts; "
                                                   "1 cut by the log's end left out"),
        f"{IN_PROGRESS}.lz4.inprogress": ("in_progress", True, 2, 1, "used up to what was written so far: 2 of 3 "
                                                                      "stage attempts; 1 still running left out"),
        "notes": ("unreadable", False, 0, 0, "skipped: none of its 2 lines is a Spark event (a JSON object whose "
                                             "first field is \"Event\")"),
    }
    # the lines to print: every log but the complete one used whole, each named with what was done
    lines = log_account_lines(con)
    assert lines == [f"{IN_PROGRESS}.lz4.inprogress (in progress): {acc[f'{IN_PROGRESS}.lz4.inprogress'][-1]}",
                     f"nds_q72_cut (truncated): {acc['nds_q72_cut'][-1]}",
                     f"notes (unreadable): {acc['notes'][-1]}"]
    assert all("\n" not in line for line in lines)
    everything = log_account_lines(con, all_entries=True)
    assert len(everything) == 4 and everything[0] == f"{COMPLETE}.zstd (complete): used: 2 stage attempts"
    assert counts["applications"] == 3 and counts["applications_truncated"] == 1
    assert counts["applications_in_progress"] == 1 and counts["stage_attempts_cut"] == 2
    assert counts["logs_unreadable"] == 1 and counts["skipped_files"] == 1 and counts["bad_lines"] == 0
    # the garbage file is one counted skip, not its lines
    assert rows(con, "SELECT file, line, reason FROM quarantine") == [
        (str((logs / "notes").resolve()), None, acc["notes"][-1].removeprefix("skipped: "))]


def test_a_stage_cut_by_the_logs_end_is_not_selected(tmp_path, mixed):
    logs, _ = mixed
    con, _ = stage(tmp_path, logs)
    cut = rows(con, """SELECT a.status, s.stage_id, s.tasks, s.completed, s.selected FROM stg_spark_stages s
                       JOIN stg_spark_applications a USING (log_id) WHERE s.cut ORDER BY a.status""")
    # stage 21 of the real log (2,104 tasks) and stage 2 of the log in progress: big enough, not selected
    assert cut == [("in_progress", 2, 2, False, False), ("truncated", 21, 2104, False, False)]
    # the stages that completed before the cut are selected as before: those of at least min_tasks tasks
    assert rows(con, """SELECT count(*) FILTER (selected), count(*) FILTER (tasks >= 2) FROM stg_spark_stages s
                        JOIN stg_spark_applications a USING (log_id) WHERE a.status = 'truncated'""") == [(2, 3)]
    # its tasks stay staged (still running when the log stops), never a job's
    assert rows(con, """SELECT count(*) > 0 FROM stg_spark_tasks t JOIN stg_spark_stages s
                        USING (log_id, stage_id, stage_attempt) WHERE s.cut""") == [(True,)]
    assert rows(con, "SELECT count(*) FROM stg_spark_stages WHERE cut AND selected") == [(0,)]


def test_the_complete_log_stages_as_it_does_alone(tmp_path, mixed):
    logs, _ = mixed
    con, _ = stage(tmp_path, logs)
    alone = tmp_path / "alone"
    alone.mkdir()
    os.link(logs / f"{COMPLETE}.zstd", alone / f"{COMPLETE}.zstd")
    con2, _ = stage(tmp_path, alone, db="alone")
    for table in SPARK_TABLES:
        leave_out = "log_id, log_path" if table == "stg_spark_applications" else "log_id"
        sql = f"SELECT * EXCLUDE ({leave_out}) FROM {table} WHERE app_id = ? ORDER BY ALL"
        assert rows(con, sql, [COMPLETE]) == rows(con2, sql, [COMPLETE]), table
    assert log_account_lines(con2) == []


def test_a_truncated_log_is_used_up_to_its_last_complete_stage_or_skipped(tmp_path):
    """Hand-made (no real data needed): a log cut at a line boundary while stage 2 runs, and one cut
    before any stage completed."""
    logs = tmp_path / "logs"
    spark_logs.write(logs / CUT_BY_HAND, spark_logs.application(CUT_BY_HAND, end=False))   # not .inprogress
    events = spark_logs.application(COMPLETE)
    first_task_end = next(i for i, e in enumerate(events) if e["Event"] == "SparkListenerTaskEnd")
    spark_logs.write(logs / COMPLETE, events[:first_task_end])
    con, counts = stage(tmp_path, logs)
    assert log_account_lines(con) == [
        f"{COMPLETE} (truncated): skipped: no stage completed before the log stops (1 stage attempt cut by its end)",
        f"{CUT_BY_HAND} (truncated): used up to its last complete stage: 2 of 3 stage attempts; "
        "1 cut by the log's end left out"]
    assert counts["applications"] == 1 and counts["applications_truncated"] == 1 and counts["skipped_files"] == 1
    assert rows(con, "SELECT stage_id, selected, cut FROM stg_spark_stages ORDER BY stage_id") == [
        (0, True, False), (1, True, False), (2, False, True)]
    [(file, line, reason)] = rows(con, "SELECT file, line, reason FROM quarantine")
    assert file.endswith(COMPLETE) and line is None and reason.startswith("no stage completed before the log stops")


def test_a_log_that_ends_with_its_application_is_used_whole(tmp_path):
    """In a complete log no stage attempt is cut, with or without its StageCompleted (as before)."""
    logs = tmp_path / "logs"
    events = [e for e in spark_logs.application(COMPLETE) if e["Event"] != "SparkListenerStageCompleted"
              or e["Stage Info"]["Stage ID"] != 0]
    spark_logs.write(logs / COMPLETE, events)
    con, counts = stage(tmp_path, logs)
    assert rows(con, "SELECT stage_id, completed, selected, cut FROM stg_spark_stages ORDER BY stage_id") == [
        (0, False, True, False), (1, True, True, False)]
    assert counts["stage_attempts_cut"] == 0 and log_account_lines(con) == []


# --- refused in one line -------------------------------------------------------------------------

def _refused(tmp_path: Path, log_dir: Path, **kw) -> str:
    con = duckdb.connect(str(tmp_path / "refused.duckdb"))
    with pytest.raises(NoEventLogError) as e:
        stage_spark(con, log_dir, **kw)
    message = str(e.value)
    assert "\n" not in message and str(log_dir.resolve()) in message
    assert isinstance(e.value, TraceFormatError) and isinstance(e.value, FileNotFoundError)
    # nothing was staged: the warehouse is as it was
    assert rows(con, "SELECT count(*) FROM information_schema.tables WHERE table_name LIKE '%spark%'") == [(0,)]
    con.close()
    return message


def test_a_missing_directory_is_refused_in_one_line(tmp_path):
    assert "does not exist" in _refused(tmp_path, tmp_path / "absent")
    (tmp_path / "a_file").write_text("x")
    assert "is a file, not a directory" in _refused(tmp_path, tmp_path / "a_file")


def test_an_empty_directory_is_refused_in_one_line(tmp_path):
    (tmp_path / "logs").mkdir()
    assert "the directory is empty" in _refused(tmp_path, tmp_path / "logs")


@pytest.mark.parametrize("on_bad_rows", ("fail", "quarantine"))
def test_a_directory_of_garbage_is_refused_in_one_line(tmp_path, on_bad_rows):
    logs = tmp_path / "logs"
    logs.mkdir()
    garbage(logs / "app-20240101000000-0009")
    (logs / "app-20240101000000-0008.zstd").write_bytes(b"\x00\x01not zstd" * 30)   # does not decode
    (logs / "README.md").write_text("notes\n")                                 # an unknown codec
    message = _refused(tmp_path, logs, on_bad_rows=on_bad_rows)
    assert "3 entries (1 not a log, 2 unreadable), none a readable application's log to stage" in message
    assert "first: app-20240101000000-0008.zstd: skipped: it does not decode" in message


def test_a_directory_whose_only_log_has_no_complete_stage_is_refused(tmp_path):
    logs = tmp_path / "logs"
    events = spark_logs.application(COMPLETE)
    first_task_end = next(i for i, e in enumerate(events) if e["Event"] == "SparkListenerTaskEnd")
    spark_logs.write(logs / COMPLETE, events[:first_task_end])
    assert "1 entry (1 truncated)" in _refused(tmp_path, logs)
