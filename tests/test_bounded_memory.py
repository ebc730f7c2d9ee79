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
from stragglers.warehouse import build, progress, runner, slicing, staging, storage, table_sql

COPIES, PARTS = 6, 1
SPAN_US = 70_740 * 1_000_000   # >= the span of the parts copied: the copies never overlap
TABLES = ("task_lifecycle", "jobs", "task_outcomes", "tasks", "selection_funnel", "job_checkpoints",
          "task_attempts", "job_runs", "machine_streams", "event_features", "checkpoint_features",
          "operator_checkpoints", "operator_event_features", "operator_checkpoint_features", "quarantine")


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
    counts = [con.execute(f"SELECT count(*) FROM stg_task_events WHERE {c}").fetchone()[0] for c in slices]
    total = con.execute("SELECT count(*) FROM stg_task_events").fetchone()[0]
    assert sum(counts) == total                       # every row in exactly one slice
    assert max(counts[:-1]) < 2 * 250_000             # each about slice_rows (a job is never split)
    jobs = [con.execute(f"SELECT count(DISTINCT job_id) FROM stg_task_events WHERE {c}").fetchone()[0]
            for c in slices]
    assert sum(jobs) == con.execute("SELECT count(DISTINCT job_id) FROM stg_task_events").fetchone()[0]


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
