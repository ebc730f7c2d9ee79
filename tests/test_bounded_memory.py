"""Bounded memory: the events-only path (selection and features) run in slices of job ids under a
tight DuckDB memory limit writes, table by table, the same rows as one unsliced run without a limit.

The trace: 6 consecutive copies of the real excerpt's first task_events and job_events part
(stragglers/traces/synth/tiled.py; 6 gzip parts of each, about 1.1 M task events), read through the
staging views as a mirror is. Real DuckDB files, no mocks."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from stragglers.settings import SelectionSettings
from stragglers.traces.synth.tiled import tile
from stragglers.warehouse import build, locate, progress, runner, slicing, staging, storage, table_sql

COPIES, PARTS = 6, 1
SPAN_US = 70_740 * 1_000_000   # >= the span of the parts copied: the copies never overlap
TABLES = ("task_lifecycle", "jobs", "task_outcomes", "tasks", "selection_funnel", "job_checkpoints",
          "task_attempts", "job_runs", "machine_streams", "event_features", "checkpoint_features",
          "operator_tasks", "operator_checkpoints", "operator_event_features", "operator_checkpoint_features",
          "quarantine")


@pytest.fixture(scope="module")
def tiled(realdata, tmp_path_factory) -> Path:
    raw = tmp_path_factory.mktemp("tiled") / "google_2011"
    tile(realdata / "google_2011", raw, COPIES, PARTS, SPAN_US)
    return raw


def _build(raw: Path, db: Path, *, memory_limit: str | None, slice_rows: int) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(str(db))
    storage.configure(con, memory_limit=memory_limit, temp_directory=str(db.parent / f"{db.stem}_tmp"),
                 slice_rows=slice_rows)
    s = SelectionSettings(trace="google_2011")
    staging.stage_google(con, raw, s)
    build.build_selection(con, s)
    build.build_features(con, s)
    return con


def test_sliced_under_a_tight_limit_equals_one_unlimited_run(tiled, tmp_path):
    whole = _build(tiled, tmp_path / "whole.duckdb", memory_limit=None, slice_rows=10**9)
    rows = whole.execute("SELECT count(*) FROM stg_task_events").fetchone()[0]
    assert rows > 1_000_000
    assert slicing.job_slices(whole, "google_2011") == [table_sql.ALL_JOBS]
    whole.close()

    sliced = _build(tiled, tmp_path / "sliced.duckdb", memory_limit="300MB", slice_rows=300_000)
    slices = slicing.job_slices(sliced, "google_2011")
    assert len(slices) >= 4 and slices[-1] == "job_id IS NULL"
    machines = slicing.machine_slices(sliced, "google_2011")   # machine_streams: ranges of machine ids
    assert len(machines) == len(slices) and machines[-1] == "machine_id IS NULL"
    sliced.execute(f"ATTACH '{tmp_path / 'whole.duckdb'}' AS whole (READ_ONLY)")
    for table in TABLES:
        n = sliced.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
        assert n == sliced.execute(f"SELECT count(*) FROM whole.{table}").fetchone()[0], table
        if table != "quarantine":
            assert n > 0, table
        for a, b in (("", "whole."), ("whole.", "")):
            extra = sliced.execute(f"SELECT count(*) FROM (FROM {a}{table} EXCEPT ALL FROM {b}{table})").fetchone()[0]
            assert extra == 0, f"{table}: {extra} rows of {a or 'sliced.'}{table} not in the other run"


def test_slices_split_the_jobs_without_overlap(tiled, tmp_path):
    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    storage.configure(con, slice_rows=250_000)
    staging.stage_google(con, tiled, SelectionSettings(trace="google_2011"))
    slices = slicing.job_slices(con, "google_2011")
    # each slice's rows and jobs, and the whole's, counted in one scan of the parts
    per_slice = ", ".join(f"count(*) FILTER (WHERE {c}), count(DISTINCT job_id) FILTER (WHERE {c})" for c in slices)
    *pairs, total, all_jobs = con.execute(
        f"SELECT {per_slice}, count(*), count(DISTINCT job_id) FROM stg_task_events").fetchone()
    counts, jobs = pairs[0::2], pairs[1::2]
    assert len(counts) == len(slices) >= 4
    assert sum(counts) == total                       # every row in exactly one slice
    assert max(counts[:-1]) < 2 * 250_000             # each about slice_rows (a job is never split)
    assert sum(jobs) == all_jobs


def test_a_sliced_step_says_how_far_it_is_and_how_long_is_left(tmp_path):
    """The slices of a step logged to the run's log (progress_to), with what is left."""
    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    lines: list[str] = []
    slices = [f"job_id >= {lo} AND job_id < {lo + 10}" for lo in range(0, 40, 10)]
    with progress.progress_to(lines.append):
        runner.replace_trace_rows(con, "numbers", [f"SELECT 't' AS trace, range AS job_id FROM range(40) WHERE {c}"
                                               for c in slices], "t")
        slice_progress = progress.SliceProgress("numbers", 4, every_s=0)
        for done in range(1, 5):
            slice_progress(done)
    assert con.execute("SELECT count(DISTINCT job_id) FROM numbers").fetchone()[0] == 40
    assert lines[0].startswith("numbers: slice 1/4 of job ids (25%)") and "s left" in lines[0]
    assert lines[-1].startswith("numbers: slice 4/4") and lines[-1].endswith("done")


def test_a_long_unsliced_statement_says_how_far_it_is(tmp_path):
    """One long statement (an unsliced table, a scan of every part): DuckDB's progress counter,
    read beside the running query, goes to the run's log with the time left at that pace."""
    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    con.execute("CREATE TABLE numbers AS SELECT range AS x FROM range(30000000)")
    lines: list[str] = []
    with progress.progress_to(lines.append), progress.statement_progress(con, "grouped", every_s=0.05):
        n = con.execute("SELECT count(*) FROM (SELECT x % 100003 AS g, median(x) FROM numbers GROUP BY g)").fetchone()[0]
    assert n == 100003
    assert lines and all(line.startswith("grouped: ") and "% of the query in" in line and line.endswith(
        "s left at this pace") for line in lines), lines


def _with_repeats(tiled: Path, root: Path) -> dict[str, tuple[Path, int]]:
    """A copy of the tiled trace with task events repeated in three slices (within a part twice, across
    two parts once) and a job event repeated: {what: (file, line of the repeat)}."""
    import gzip
    import shutil

    raw = root / "google_2011"
    shutil.copytree(tiled, raw)
    parts = sorted((raw / "task_events").glob("*.gz"))
    job_part = sorted((raw / "job_events").glob("*.gz"))[3]

    def lines(p):
        return gzip.decompress(p.read_bytes()).decode().splitlines()

    def write(p, ls):
        p.write_bytes(gzip.compress(("\n".join(ls) + "\n").encode()))

    repeats = {}
    for what, part, i in (("within part 2", parts[2], 100), ("within part 5", parts[5], 200)):
        ls = lines(part)
        write(part, ls[:i + 1] + [ls[i]] + ls[i + 1:])          # line i+1 twice: the repeat is line i+2
        repeats[what] = (part, i + 2)
    later = lines(parts[4])
    write(parts[4], later + [lines(parts[1])[50]])               # part 1's line 51 again at part 4's end
    repeats["across parts 1 and 4"] = (parts[4], len(later) + 1)
    ls = lines(job_part)
    write(job_part, ls + [ls[10]])
    repeats["job event"] = (job_part, len(ls) + 1)
    return repeats


def _selection(raw: Path, db: Path, on_bad_rows: str, sliced: bool):
    con = duckdb.connect(str(db))
    storage.configure(con, memory_limit="300MB" if sliced else None, temp_directory=str(db.parent / f"{db.stem}_tmp"),
                 slice_rows=300_000 if sliced else 10**9)
    s = SelectionSettings(trace="google_2011", on_bad_rows=on_bad_rows)
    staging.stage_google(con, raw, s)
    assert (len(slicing.job_slices(con, s.trace)) >= 4) == sliced
    try:
        build.build_selection(con, s)
    except locate.TraceFormatError as e:
        return con, str(e)
    return con, None


def test_repeated_rows_are_the_same_sliced_or_not(tiled, tmp_path):
    """The repeat checks (task events per slice of jobs, job events whole) quarantine the same rows and
    stop at the same first row, in slices under a tight limit or in one run; each names its file and line."""
    repeats = _with_repeats(tiled, tmp_path)
    raw = tmp_path / "google_2011"
    quarantined = {}
    for sliced in (False, True):
        con, error = _selection(raw, tmp_path / f"q{sliced}.duckdb", "quarantine", sliced)
        assert error is None
        quarantined[sliced] = con.execute("SELECT file, line, reason, row, job_id, task_id FROM quarantine "
                                          "WHERE stage = 'jobs' ORDER BY ALL").fetchall()
    assert quarantined[True] == quarantined[False]
    assert sorted((f, n) for f, n, *_ in quarantined[True]) == sorted((str(f), n) for f, n in repeats.values())
    assert sum("the same task event twice" in r[2] for r in quarantined[True]) == 3

    first = {sliced: _selection(raw, tmp_path / f"f{sliced}.duckdb", "fail", sliced)[1] for sliced in (False, True)}
    assert first[True] == first[False]
    part, line = repeats["within part 2"]   # the first by file, then time
    assert first[True].startswith(f"building jobs: {part}, line {line}: duplicate row (the same task event twice)")
