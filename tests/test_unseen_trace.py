"""A trace the other tests never saw (another seed and scale), served over HTTP on
127.0.0.1 and materialized by Dagster as `google_2011`: the selection must match the
generator's ground truth exactly; a corrupted file must fail the run naming it."""

from __future__ import annotations

import dagster as dg
import duckdb
import pandas as pd
import pytest
from dagster_duckdb import DuckDBResource

from assets import traces, warehouse
from assets.resources import PipelineSettings
from stragglers.traces.synth import generate_google
from tests.httpserver import TraceServer

END = 2**63 - 1
ASSETS = [traces.raw_trace, warehouse.staged_trace, warehouse.jobs, warehouse.tasks]


@pytest.fixture(scope="module")
def bucket(tmp_path_factory):
    root = tmp_path_factory.mktemp("unseen")
    summary = generate_google(root / "bucket", seed=424242, n_jobs=16, n_parts=4)
    return root / "bucket", summary


def _resources(tmp_path, url):
    return {"nurd": PipelineSettings(data_dir=str(tmp_path), trace="google_2011", trace_url=url, trace_parts="all",
                                 download_workers=3),
            "duckdb": DuckDBResource(database=str(tmp_path / "warehouse.duckdb"))}


def test_selection_matches_ground_truth_over_loopback(bucket, tmp_path):
    root, summary = bucket
    with TraceServer(root) as srv:
        result = dg.materialize(ASSETS, resources=_resources(tmp_path, srv.url),
                                instance=dg.DagsterInstance.ephemeral())
    assert result.success
    meta = result.asset_materializations_for_node("raw_trace")[0].metadata
    assert meta["files_verified"].value >= 13  # 4 parts x 3 tables + schema.csv
    con = duckdb.connect(str(tmp_path / "warehouse.duckdb"), read_only=True)
    truth_jobs = summary.truth_jobs
    expected_jobs = sorted(truth_jobs.loc[truth_jobs.should_select, "job_id"].astype("int64"))
    got_jobs = [j for (j,) in con.execute("SELECT job_id FROM jobs WHERE trace = 'google_2011' ORDER BY 1").fetchall()]
    assert got_jobs == expected_jobs and len(got_jobs) >= 8

    t = summary.truth_tasks
    t = t[t.job_id.isin(expected_jobs) & (t.end_state == "FINISH") & t.has_usage
          & (t.first_schedule_us > 0) & (t.final_finish_us < END)]
    expected = t[["job_id", "task_index", "latency_us", "evictions", "failures"]].astype("int64") \
        .rename(columns={"task_index": "task_id"}).sort_values(["job_id", "task_id"]).reset_index(drop=True)
    got = con.execute("""SELECT job_id, task_id, latency_us, evictions, failures FROM tasks
        WHERE trace = 'google_2011' ORDER BY job_id, task_id""").df().astype("int64")
    pd.testing.assert_frame_equal(got, expected)  # to the microsecond
    assert (expected.evictions > 0).any() and (expected.failures > 0).any()


def test_corrupted_file_fails_the_run_naming_it(bucket, tmp_path):
    root, _ = bucket
    bad = "task_usage/part-00002-of-00004.csv.gz"
    with TraceServer(root) as srv:
        srv.corrupt.add(bad)
        result = dg.materialize([traces.raw_trace], resources=_resources(tmp_path, srv.url),
                                instance=dg.DagsterInstance.ephemeral(), raise_on_error=False)
    assert not result.success
    failure = [e for e in result.all_events if e.event_type_value == "STEP_FAILURE"][-1]
    assert bad in str(failure.event_specific_data.error)
    assert sum(e.event_type_value == "STEP_FAILURE" for e in result.all_events) == 1  # not retried
    raw = tmp_path / "raw" / "google_2011"
    # nothing of the corrupt file is left; other files cancelled mid-way keep only a
    # resumable `.part` (never a file under its final name without verification)
    assert not (raw / bad).exists() and not (raw / (bad + ".part")).exists()
