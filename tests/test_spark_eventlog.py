"""Spark event logs: read in each codec and layout Spark writes, staged into DuckDB, and every bad
input said (a one-line error naming the file and line) or counted (table quarantine)."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from stragglers.traces.spark_eventlog import codec_of, discover, read_lines
from stragglers.warehouse.locate import TraceFormatError
from stragglers.warehouse.spark_staging import SPARK_TABLES, stage_spark
from tests import spark_logs

CODECS = ("", "zstd", "lz4", "snappy", "lzf")
SUFFIX = {"": "", "zstd": ".zstd", "lz4": ".lz4", "snappy": ".snappy", "lzf": ".lzf"}
APP = "app-20240101000000-0000"


def stage(tmp_path: Path, log_dir: Path, db: str = "warehouse", **kw) -> tuple[duckdb.DuckDBPyConnection, dict]:
    """Stage ``log_dir`` into a new warehouse ``<tmp_path>/<db>.duckdb``."""
    con = duckdb.connect(str(tmp_path / f"{db}.duckdb"))
    return con, stage_spark(con, log_dir, **kw)


def rows(con, sql: str, params=None) -> list[tuple]:
    return con.execute(sql, params).fetchall()


def quarantined(con) -> list[tuple]:
    return rows(con, "SELECT file, line, reason FROM quarantine ORDER BY file, line")


# --- what is read ------------------------------------------------------------------------------

def test_codec_is_the_names_last_extension_as_spark_says():
    assert codec_of("app-1.zstd") == "zstd"
    assert codec_of("app-1.lz4.inprogress") == "lz4"
    assert codec_of("application_1_2_1") == ""
    assert codec_of("events_3_app-1.snappy") == "snappy"
    assert codec_of("app-1.gz") == "gz"


@pytest.mark.parametrize("codec", CODECS)
def test_a_log_in_each_codec_stages_the_same_rows(tmp_path, codec):
    logs = tmp_path / "logs"
    spark_logs.write(logs / f"{APP}{SUFFIX[codec]}", spark_logs.application(APP), codec)
    con, counts = stage(tmp_path, logs, min_tasks=10)
    assert counts["applications"] == 1 and counts["bad_lines"] == 0 and counts["skipped_files"] == 0
    app = rows(con, "SELECT app_id, app_name, spark_version, start_us, end_us, complete, in_progress, codec "
                    "FROM stg_spark_applications")
    assert app == [(APP, "made by hand", "3.5.1", spark_logs.T0 * 1000, (spark_logs.T0 + 30_000) * 1000, True,
                    False, codec or "none")]
    # stage 0: 12 tasks, 14 attempts (a failed one re-run, a killed original and its speculative copy)
    assert rows(con, "SELECT stage_id, tasks, selected FROM stg_spark_stages ORDER BY stage_id") == [
        (0, 12, True), (1, 3, False)]
    lives = rows(con, """SELECT task_index, attempt, speculative, outcome, end_reason, reason FROM stg_spark_tasks
                         WHERE stage_id = 0 AND task_index IN (1, 2) ORDER BY task_index, attempt""")
    assert lives == [(1, 0, False, "failed", "ExceptionFailure", "java.io.IOException: disk gone"),
                     (1, 1, False, "success", "Success", None),
                     (2, 0, False, "killed", "TaskKilled", "another attempt succeeded"),
                     (2, 1, True, "success", "Success", None)]
    t = rows(con, """SELECT launch_us, finish_us, executor_id, host, locality, input_bytes, shuffle_read_bytes,
                            shuffle_write_bytes, gc_ms FROM stg_spark_tasks WHERE stage_id = 0 AND task_index = 5""")
    launch = spark_logs.T0 + 1000 + 50
    assert t == [(launch * 1000, (launch + 1035) * 1000, "2", "host-b", "NODE_LOCAL", 1005, 150, 70, 3)]
    assert rows(con, "SELECT count(*) FROM stg_spark_tasks") == [(17,)]
    assert rows(con, "SELECT executor_id, host, cores, removed_reason FROM stg_spark_executors") == [
        ("1", "host-a", 2, None), ("2", "host-b", 2, "decommissioned")]
    t0 = spark_logs.T0 * 1000
    assert rows(con, "SELECT at_us - ?, slots FROM stg_spark_slots", [t0]) == [
        (100_000, 2), (150_000, 4), (20_000_000, 2)]


@pytest.mark.parametrize("codec", CODECS)
def test_lines_come_in_batches_never_the_whole_log(tmp_path, codec):
    data = spark_logs.lines(spark_logs.application(APP, tasks=1500))
    path = spark_logs.write(tmp_path / f"{APP}{SUFFIX[codec]}", data, codec)
    batches = list(read_lines(path, codec, batch_bytes=16 * 1024))
    assert len(batches) > 4
    assert max(sum(len(t) + 1 for t in b.text.to_pylist()) for b in batches) < len(data) / 4
    assert [b.first for b in batches] == [1 + sum(len(b) for b in batches[:i]) for i in range(len(batches))]
    assert b"".join(t.encode() + b"\n" for b in batches for t in b.text.to_pylist()) == data


@pytest.mark.parametrize("codec", ("zstd", "lz4", "snappy", "lzf"))
def test_concatenated_streams_read_as_one(tmp_path, codec):
    # a stream reopened for appending (or flushed by frame) is its framing twice in one file
    first, second = spark_logs.lines(spark_logs.application(APP))[:5000], b"{}\n" * 3
    path = tmp_path / f"{APP}{SUFFIX[codec]}"
    path.write_bytes(spark_logs.compress(first, codec) + spark_logs.compress(second, codec))
    assert b"".join(t.encode() + b"\n" for b in read_lines(path, codec) for t in b.text.to_pylist()) == \
        first[:first.rfind(b"\n") + 1] + first[first.rfind(b"\n") + 1:] + second


def test_a_rolling_log_is_read_in_its_files_index_order(tmp_path):
    data = spark_logs.lines(spark_logs.application(APP))
    cut = [0] + [i + 1 for i, b in enumerate(data) if b == ord("\n")][:: max(1, data.count(b"\n") // 11)][1:]
    parts = [data[a:b] for a, b in zip(cut, cut[1:] + [len(data)])]
    assert len(parts) >= 10   # so that events_10 sorts before events_2 by name
    folder = tmp_path / "logs" / f"eventlog_v2_{APP}"
    for n, part in enumerate(parts, start=1):
        spark_logs.write(folder / f"events_{n}_{APP}.lz4", part, "lz4")
    (folder / f"appstatus_{APP}").write_bytes(b"")
    [log], _ = discover(tmp_path / "logs")
    assert [f.name for f in log.files] == [f"events_{n}_{APP}.lz4" for n in range(1, len(parts) + 1)]
    con, counts = stage(tmp_path, tmp_path / "logs", min_tasks=10)
    single = tmp_path / "single"
    spark_logs.write(single / APP, data)
    con2, _ = stage(tmp_path, single, db="single", min_tasks=10)
    for table in SPARK_TABLES[1:]:
        assert rows(con, f"SELECT * EXCLUDE (log_id) FROM {table} ORDER BY ALL") == \
               rows(con2, f"SELECT * EXCLUDE (log_id) FROM {table} ORDER BY ALL"), table
    assert rows(con, "SELECT rolling, files, in_progress, complete FROM stg_spark_applications") == [
        (True, len(parts), False, True)]


def test_a_compacted_rolling_log_is_read_from_its_last_compact_file(tmp_path):
    folder = tmp_path / f"eventlog_v2_{APP}"
    for name in ("events_1_", "events_2_", "events_3_", "events_4_", "events_5_"):
        suffix = ".zstd.compact" if name in ("events_2_", "events_3_") else ".zstd"
        spark_logs.write(folder / f"{name}{APP}{suffix}", b"{}\n", "zstd")
    (folder / f"appstatus_{APP}.inprogress").write_bytes(b"")
    [log], skipped = discover(tmp_path)
    assert skipped == [] and log.in_progress and log.codec == "zstd"
    assert [f.name for f in log.files] == [f"events_3_{APP}.zstd.compact", f"events_4_{APP}.zstd",
                                           f"events_5_{APP}.zstd"]


def test_a_rolling_folder_without_its_status_marker_is_a_counted_skip(tmp_path):
    folder = tmp_path / "logs" / f"eventlog_v2_{APP}"
    spark_logs.write(folder / f"events_1_{APP}.zstd", spark_logs.application(APP), "zstd")
    spark_logs.write(tmp_path / "logs" / "app-20240101000000-0001", spark_logs.application("app-20240101000000-0001"))
    con, counts = stage(tmp_path, tmp_path / "logs")
    assert counts["applications"] == 1 and counts["skipped_files"] == 1
    [(file, line, reason)] = quarantined(con)
    assert file == str(folder.resolve()) and "no appstatus_<appId> marker" in reason


def test_a_log_without_its_application_start_is_a_counted_skip(tmp_path):
    logs = tmp_path / "logs"
    events = [e for e in spark_logs.application(APP) if e["Event"] != "SparkListenerApplicationStart"]
    spark_logs.write(logs / APP, events)
    spark_logs.write(logs / "app-20240101000000-0001", spark_logs.application("app-20240101000000-0001"))
    con, counts = stage(tmp_path, logs)
    assert counts["applications"] == 1 and counts["skipped_files"] == 1
    assert rows(con, "SELECT DISTINCT app_id FROM stg_spark_tasks") == [("app-20240101000000-0001",)]
    [(file, line, reason)] = quarantined(con)
    assert file.endswith(APP) and "no SparkListenerApplicationStart event" in reason


def test_an_in_progress_log_is_read_and_marked(tmp_path):
    logs = tmp_path / "logs"
    data = spark_logs.lines(spark_logs.application(APP, end=False))
    spark_logs.write(logs / f"{APP}.inprogress", data[:-40])   # being written: its last line is not done
    con, counts = stage(tmp_path, logs, min_tasks=10)   # on_bad_rows=fail: a line being written is not bad
    assert counts["applications_in_progress"] == 1 and counts["cut_in_progress"] == 1
    assert rows(con, "SELECT in_progress, complete, end_us FROM stg_spark_applications") == [(True, False, None)]
    running = rows(con, "SELECT stage_id, outcome, finish_us FROM stg_spark_tasks WHERE outcome = 'running'")
    assert {r[0] for r in running} == {2} and all(r[2] is None for r in running) and len(running) >= 1
    [(file, line, reason)] = quarantined(con)
    assert file.endswith(".inprogress") and line == data[:-40].count(b"\n") + 1 and "last line is cut" in reason


def test_a_compressed_log_being_written_is_read_up_to_where_it_is(tmp_path):
    logs = tmp_path / "logs"
    path = spark_logs.write(logs / f"{APP}.zstd.inprogress", spark_logs.application(APP, end=False), "zstd")
    path.write_bytes(path.read_bytes()[:-30])   # the writer's frame is not closed yet
    con, counts = stage(tmp_path, logs, min_tasks=10)   # on_bad_rows=fail: not an error
    assert counts["applications_in_progress"] == 1 and counts["cut_in_progress"] >= 1 and counts["bad_lines"] == 0
    assert rows(con, "SELECT count(*) > 0 FROM stg_spark_tasks") == [(True,)]   # what was written so far
    assert any("ends mid-frame" in reason for _, _, reason in quarantined(con))


# --- bad input ---------------------------------------------------------------------------------

def _with_line(events: list[dict], at: int, text: bytes) -> bytes:
    data = spark_logs.lines(events).split(b"\n")
    data.insert(at - 1, text)
    return b"\n".join(data)


def test_a_malformed_line_is_an_error_naming_file_and_line_or_a_counted_skip(tmp_path):
    logs = tmp_path / "logs"
    spark_logs.write(logs / f"{APP}.zstd", _with_line(spark_logs.application(APP), 7, b'{"Event":"SparkListenerTaskEnd",'),
                     "zstd")
    with pytest.raises(TraceFormatError) as e:
        stage(tmp_path, logs)
    message = str(e.value)
    assert "\n" not in message and f"{APP}.zstd, line 7" in message and "not JSON" in message
    con, counts = stage(tmp_path, logs, db="quarantine", on_bad_rows="quarantine", min_tasks=10)
    assert counts["bad_lines"] == 1 and counts["applications"] == 1
    [(file, line, reason)] = quarantined(con)
    assert file.endswith(f"{APP}.zstd") and line == 7 and reason.startswith("not JSON")
    assert rows(con, "SELECT count(*) FROM stg_spark_tasks") == [(17,)]   # the rest of the log is staged


def test_staging_again_replaces_and_a_stopped_staging_changes_nothing(tmp_path):
    good, bad = tmp_path / "good", tmp_path / "bad"
    spark_logs.write(good / f"{APP}.lz4", spark_logs.application(APP), "lz4")
    spark_logs.write(good / "notes.txt", b"not a log\n")
    con, first = stage(tmp_path, good, min_tasks=10)
    snapshot = {t: rows(con, f"SELECT * FROM {t} ORDER BY ALL") for t in (*SPARK_TABLES, "quarantine")}
    assert stage_spark(con, good, min_tasks=10) == first   # rows replaced, skips not counted twice
    assert {t: rows(con, f"SELECT * FROM {t} ORDER BY ALL") for t in snapshot} == snapshot
    spark_logs.write(bad / APP, _with_line(spark_logs.application(APP), 3, b"{oops"))
    with pytest.raises(TraceFormatError, match="line 3"):
        stage_spark(con, bad, min_tasks=10)
    assert {t: rows(con, f"SELECT * FROM {t} ORDER BY ALL") for t in snapshot} == snapshot


def test_a_truncated_log_is_an_error_or_a_counted_skip(tmp_path):
    logs = tmp_path / "logs"
    data = spark_logs.lines(spark_logs.application(APP))
    spark_logs.write(logs / f"{APP}.snappy", data[:-25], "snappy")   # cut mid-line, not in progress
    with pytest.raises(TraceFormatError) as e:
        stage(tmp_path, logs)
    n = data.count(b"\n")
    assert f"{APP}.snappy, line {n}" in str(e.value) and "last line is cut" in str(e.value)
    con, counts = stage(tmp_path, logs, db="quarantine", on_bad_rows="quarantine")
    assert counts["bad_lines"] == 1
    assert rows(con, "SELECT complete FROM stg_spark_applications") == [(False,)]   # its end was the cut line


def test_a_compressed_stream_cut_short_is_an_error_naming_the_file(tmp_path):
    logs = tmp_path / "logs"
    path = spark_logs.write(logs / f"{APP}.zstd", spark_logs.application(APP), "zstd")
    path.write_bytes(path.read_bytes()[:-30])
    with pytest.raises(TraceFormatError) as e:
        stage(tmp_path, logs)
    assert f"{APP}.zstd" in str(e.value) and "truncated" in str(e.value)
    for codec in ("lz4", "snappy", "lzf"):
        other = tmp_path / codec
        p = spark_logs.write(other / f"{APP}{SUFFIX[codec]}", spark_logs.application(APP), codec)
        p.write_bytes(p.read_bytes()[:-30 if codec != "lz4" else -50])
        with pytest.raises(TraceFormatError) as e:
            stage(tmp_path, other, db=codec)
        assert p.name in str(e.value), codec


@pytest.mark.parametrize("codec", ("zstd", "lz4", "snappy", "lzf"))
def test_a_damaged_compressed_block_is_an_error_naming_the_file(tmp_path, codec):
    path = spark_logs.write(tmp_path / "logs" / f"{APP}{SUFFIX[codec]}", spark_logs.application(APP), codec)
    data = bytearray(path.read_bytes())
    for i in range(40, 60):   # inside the first block's compressed data, after its header
        data[i] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(TraceFormatError) as e:
        stage(tmp_path, tmp_path / "logs")
    assert path.name in str(e.value) and "\n" not in str(e.value)


def test_an_unknown_codec_is_a_counted_skip(tmp_path):
    logs = tmp_path / "logs"
    spark_logs.write(logs / APP, spark_logs.application(APP))
    spark_logs.write(logs / "app-20240101000000-0001.gz", spark_logs.application("app-20240101000000-0001"))
    rolling = logs / "eventlog_v2_app-20240101000000-0002"
    spark_logs.write(rolling / "events_1_app-20240101000000-0002.bz2", spark_logs.application("x"))
    (rolling / "appstatus_app-20240101000000-0002").write_bytes(b"")
    con, counts = stage(tmp_path, logs)
    assert counts["applications"] == 1 and counts["skipped_files"] == 2
    (gz, gz_line, gz_reason), (bz2, _, bz2_reason) = quarantined(con)
    assert gz.endswith(".gz") and gz_line is None and "its extension 'gz' is no compression codec Spark writes" in gz_reason
    assert bz2.endswith("events_1_app-20240101000000-0002.bz2") and "its extension 'bz2' is no compression codec Spark writes" in bz2_reason


def test_an_empty_directory_is_a_one_line_error(tmp_path):
    (tmp_path / "logs").mkdir()
    with pytest.raises(TraceFormatError) as e:
        stage(tmp_path, tmp_path / "logs")
    assert str(tmp_path / "logs") in str(e.value) and "empty" in str(e.value) and "\n" not in str(e.value)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        discover(tmp_path / "absent")


def test_a_log_with_no_stage_of_min_tasks_is_counted(tmp_path):
    logs = tmp_path / "logs"
    spark_logs.write(logs / APP, spark_logs.application(APP, tasks=12, small_tasks=3))
    con, counts = stage(tmp_path, logs, min_tasks=100)
    assert counts["applications"] == 1 and counts["selected_stage_attempts"] == 0
    assert counts["apps_no_selected_stage"] == 1


def test_two_logs_of_one_application_keep_one_and_count_the_other(tmp_path):
    logs = tmp_path / "logs"
    spark_logs.write(logs / f"{APP}.lz4", spark_logs.application(APP), "lz4")
    spark_logs.write(logs / f"{APP}_copy.inprogress", spark_logs.application(APP, end=False))
    con, counts = stage(tmp_path, logs)
    assert counts["applications"] == 1 and counts["skipped_files"] == 1
    assert rows(con, "SELECT log_path LIKE '%.lz4' FROM stg_spark_applications WHERE kept") == [(True,)]
    [(file, line, reason)] = quarantined(con)
    assert file.endswith("_copy.inprogress") and f"a second log of application {APP}" in reason
    assert rows(con, "SELECT count(DISTINCT log_id) FROM stg_spark_tasks") == [(1,)]


# --- the real logs -----------------------------------------------------------------------------

def _manifest(folder: Path) -> list[str]:
    lines = (folder / "MANIFEST.tsv").read_text().splitlines()[1:]
    return [line.split("\t")[0] for line in lines if line.strip()]


def test_every_real_log_stages_or_is_a_counted_skip(tmp_path, spark_realdata):
    files = _manifest(spark_realdata)
    assert len(files) == 14
    con, counts = stage(tmp_path, spark_realdata, on_bad_rows="quarantine")
    logs = {Path(p).name for (p,) in rows(con, "SELECT log_path FROM stg_spark_applications WHERE kept")}
    skipped = {Path(f).name: reason for f, _, reason in quarantined(con)}
    for name in files:
        top = name.split("/")[0]
        assert top in logs or Path(name).name in skipped or top.startswith("eventlog_v2_"), name
    # the rolling log is one application; the malformed log repeats rp_sql_eventlog's application
    assert "eventlog_v2_local-1623876083964" in logs
    # its two event files hold 2,672 and 129 task ends (zstd -dc | grep -c SparkListenerTaskEnd)
    assert rows(con, """SELECT count(*) FROM stg_spark_tasks t JOIN stg_spark_applications a USING (log_id)
                        WHERE a.rolling AND t.finish_us IS NOT NULL""") == [(2_672 + 129,)]
    assert "second log of application application_1603128018386_7759" in skipped["malformed_json_eventlog.zstd"]
    assert rows(con, """SELECT line FROM quarantine WHERE file LIKE '%malformed_json_eventlog.zstd'
                        AND line IS NOT NULL""") == [(4,)]
    # the truncated log ends before its application does: staged, not complete
    assert rows(con, "SELECT complete FROM stg_spark_applications WHERE log_path LIKE '%truncated_eventlog'") == \
        [(False,)]
    # the repository's notes (README.md, MANIFEST.tsv, the licence) are counted, not read as logs
    assert {"README.md", "MANIFEST.tsv"} <= set(skipped)
    assert counts["applications"] == 11 and counts["bad_lines"] == 1
    assert counts["selected_stage_attempts"] > 80


def test_a_known_real_log_counts_right(tmp_path, spark_realdata):
    """nds_q72_dataproc_2_2: the task ends per stage attempt, counted on the file by another reader."""
    import zstandard

    log = spark_realdata / "nds_q72_dataproc_2_2.zstd"
    ends: dict[tuple[int, int], int] = {}
    executors = set()
    with open(log, "rb") as raw:
        reader = zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True)
        for line in __import__("io").TextIOWrapper(reader, encoding="utf-8"):
            e = json.loads(line)
            if e["Event"] == "SparkListenerTaskEnd":
                key = (e["Stage ID"], e["Stage Attempt ID"])
                ends[key] = ends.get(key, 0) + 1
            elif e["Event"] == "SparkListenerExecutorAdded":
                executors.add((e["Executor ID"], e["Executor Info"]["Host"]))
    assert sum(ends.values()) == 13_504
    only = tmp_path / "logs"
    only.mkdir()
    (only / log.name).symlink_to(log)   # the one log, read where it is
    con, counts = stage(tmp_path, only)
    staged = dict(((s, a), n) for s, a, n in rows(con, """SELECT stage_id, stage_attempt, count(*) FROM stg_spark_tasks
                                                           WHERE finish_us IS NOT NULL GROUP BY ALL"""))
    assert staged == ends
    assert counts["task_attempts"] == 13_504 and counts["selected_stage_attempts"] == 13
    assert set(rows(con, "SELECT executor_id, host FROM stg_spark_executors")) == executors
    assert len(executors) == 8 and len({h for _, h in executors}) == 4
