"""Tests for the warehouse's GX suites (stragglers.warehouse.suites, run by validation.validate_table) on small
hand-made DuckDB tables."""

from __future__ import annotations

import duckdb
import numpy as np
import pandas as pd
import pytest

from stragglers.trace_formats import GOOGLE_FEATURES
from stragglers.warehouse.suites import WAREHOUSE_SUITES
from stragglers.warehouse.validation import ValidationOutcome, validate_table

FEATURES = ["mcu", "maxcpu", "ev"]
PARAMS = {"min_tasks": 10, "quantile": 0.9, "features": FEATURES}


# --------------------------------------------------------------------------- #
# Hand-made good tables
# --------------------------------------------------------------------------- #
def good_job_events() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "time": np.array([0, 10, 20, 30], dtype="int64"),
            "missing_info": pd.array([None, None, 1, None], dtype="Int64"),
            "job_id": np.array([1, 1, 2, 2], dtype="int64"),
            "event_type": np.array([0, 4, 0, 5], dtype="int32"),
            "user_name": ["u1", "u1", "u2", "u2"],
            "scheduling_class": pd.array([0, 0, 3, None], dtype="Int32"),
            "job_name": ["j1", "j1", "j2", "j2"],
            "logical_job_name": ["l1", "l1", "l2", "l2"],
        }
    )


def good_task_events() -> pd.DataFrame:
    n = 4
    return pd.DataFrame(
        {
            "time": np.array([0, 5, 7, 9], dtype="int64"),
            "missing_info": pd.array([None] * n, dtype="Int64"),
            "job_id": np.array([1, 1, 1, 2], dtype="int64"),
            "task_index": np.array([0, 0, 1, 0], dtype="int32"),
            "machine_id": pd.array([None, 11, 12, 13], dtype="Int64"),
            "event_type": np.array([0, 1, 1, 4], dtype="int32"),
            "user_name": ["u"] * n,
            "scheduling_class": [0, 0, 1, 2],
            "priority": [0, 0, 11, 9],
            "cpu_request": [0.1, 0.1, 0.2, None],
            "memory_request": [0.1, 0.1, 0.2, 0.3],
            "disk_request": [0.0, 0.0, 0.0, 0.0],
            "different_machine": pd.array([None, 0, 1, 0], dtype="Int32"),
        }
    )


def good_task_usage() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "start_time": np.array([0, 300, 0], dtype="int64"),
            "end_time": np.array([300, 600, 300], dtype="int64"),
            "job_id": np.array([1, 1, 2], dtype="int64"),
            "task_index": np.array([0, 0, 0], dtype="int32"),
            "machine_id": np.array([11, 11, 12], dtype="int64"),
            "cpu_rate": [0.1, 0.2, None],
            "canonical_memory": [0.01, 0.02, 0.03],
            "cpi": [1.2, None, 0.9],
            "aggregation_type": [0, 1, 0],
        }
    )


def good_jobs() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "trace": ["google", "google", "alibaba"],
            "job_id": [1, 2, 1],
            "n_tasks": [10, 25, 12],
            "n_finished": [10, 20, 12],
        }
    )


def good_tasks(q: float = 0.9) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    parts = []
    for job_id, n in ((1, 10), (2, 15), (3, 40)):
        lat = rng.lognormal(3, 1, n)
        parts.append(
            pd.DataFrame(
                {
                    "trace": "google",
                    "job_id": job_id,
                    "task_id": np.arange(n),
                    "latency_s": lat,
                    "evictions": rng.integers(0, 3, n),
                    "failures": rng.integers(0, 2, n),
                    "is_straggler": lat > np.quantile(lat, q),  # linear interpolation
                }
            )
        )
    return pd.concat(parts, ignore_index=True)


def good_checkpoints() -> pd.DataFrame:
    rows = []
    for job_id, task_id in ((1, 0), (1, 1), (2, 0)):
        for k, cp in enumerate((0.0, 30.0, 60.0)):
            rows.append(
                {
                    "trace": "google",
                    "job_id": job_id,
                    "task_id": task_id,
                    "k": k,
                    "checkpoint_s": cp,
                    "mcu": 0.1 * (k + 1),
                    "maxcpu": 0.0 if k == 0 else 1.0,
                    "ev": 0.5,
                }
            )
    return pd.DataFrame(rows).sort_values(["job_id", "k", "task_id"], ignore_index=True)


GOOD = {
    "raw_job_events": good_job_events,
    "raw_task_events": good_task_events,
    "raw_task_usage": good_task_usage,
    "jobs": good_jobs,
    "tasks": good_tasks,
    "checkpoint_features": good_checkpoints,
}


@pytest.fixture()
def con(tmp_path):
    c = duckdb.connect(str(tmp_path / "nurd.duckdb"))
    # raw time columns are BIGINT in the loader
    c.execute(
        "CREATE TABLE raw_job_events (time BIGINT, missing_info BIGINT, job_id BIGINT, "
        "event_type INTEGER, user_name VARCHAR, scheduling_class INTEGER, job_name VARCHAR, "
        "logical_job_name VARCHAR)"
    )
    good = good_job_events()  # noqa: F841 - referenced by DuckDB replacement scan
    c.execute("INSERT INTO raw_job_events SELECT * FROM good")
    for name, make in GOOD.items():
        if name == "raw_job_events":
            continue
        df = make()  # noqa: F841
        c.execute(f"CREATE TABLE {name} AS SELECT * FROM df")
    yield c
    c.close()


def put(con, name: str, df: pd.DataFrame) -> str:
    con.execute(f"CREATE OR REPLACE TABLE {name} AS SELECT * FROM df")
    return name


def failure_for(outcome: ValidationOutcome, expectation: str, column: str) -> dict:
    hits = [f for f in outcome.failures if f["expectation"] == expectation and f["column"] == column]
    assert hits, f"no failure {expectation} on {column}: {outcome.to_markdown()}"
    return hits[0]


# --------------------------------------------------------------------------- #
# Good data passes every suite (DuckDB path), Data Docs are written
# --------------------------------------------------------------------------- #
def test_all_suites_pass_on_good_data_and_write_docs(con, tmp_path):
    docs = tmp_path / "docs"
    assert set(WAREHOUSE_SUITES) == set(GOOD)
    outcomes = {}
    for suite in WAREHOUSE_SUITES:
        o = validate_table(suite, con, suite, trace="google" if suite in ("tasks", "checkpoint_features") else None,
                           docs_dir=docs, params=PARAMS)
        assert o.success, o.to_markdown()
        assert o.evaluated == o.passed > 0 and o.failed == 0 and o.failures == []
        assert o.rows_validated == o.rows_total > 0 and not o.truncated
        assert o.docs_path is not None and o.docs_path.name == "index.html" and o.docs_path.exists()
        assert "PASSED" in o.to_markdown()
        outcomes[suite] = o
    index = (docs / "index.html").read_text()
    # the index accumulates the results of all suites (fresh context per call, file-backed stores)
    for suite in WAREHOUSE_SUITES:
        assert f"validations/{suite}" in index
    assert list((docs / "expectations").rglob("*.html"))


def test_dataframe_input_and_trace_filter():
    jobs = good_jobs()
    o = validate_table("jobs", jobs, trace="alibaba", params=PARAMS)
    assert o.success and o.rows_total == 1 and o.docs_path is None
    o = validate_table("jobs", jobs, trace="nope", params=PARAMS)  # filters everything out
    f = failure_for(o, "expect_table_row_count_to_be_between", None)
    assert f["observed_value"] == 0


# --------------------------------------------------------------------------- #
# Bad rows fail, naming the column and the failing value
# --------------------------------------------------------------------------- #
def test_raw_job_events_bad_event_type(con):
    df = good_job_events()
    df.loc[2, "event_type"] = 9
    o = validate_table("raw_job_events", con, put(con, "bad", df))
    assert not o.success and o.failed == 1
    f = failure_for(o, "expect_column_values_to_be_in_set", "event_type")
    assert f["first_failing_values"] == [9]
    assert f["failing_rows"][0]["job_id"] == 2
    md = o.to_markdown()
    assert "FAILED" in md and "event_type" in md and "9" in md


def test_raw_job_events_null_key_negative_time_missing_column(con):
    df = good_job_events()
    df["job_id"] = df["job_id"].astype("Int64")
    df.loc[1, "job_id"] = pd.NA
    df.loc[3, "time"] = -5
    df.loc[0, "scheduling_class"] = 4
    o = validate_table("raw_job_events", con, put(con, "bad", df.drop(columns=["logical_job_name"])))
    assert failure_for(o, "expect_column_values_to_not_be_null", "job_id")["unexpected_count"] == 1
    assert failure_for(o, "expect_column_values_to_be_between", "time")["first_failing_values"] == [-5]
    assert failure_for(o, "expect_column_values_to_be_in_set", "scheduling_class")["first_failing_values"] == [4]
    missing = failure_for(o, "expect_table_columns_to_match_set", ",".join(
        ["time", "missing_info", "job_id", "event_type", "user_name", "scheduling_class", "job_name",
         "logical_job_name"]))
    assert "logical_job_name" in str(missing["details"])


def test_raw_job_events_time_must_be_integer(con):
    df = good_job_events()
    df["time"] = df["time"].astype("float64")
    o = validate_table("raw_job_events", df)
    assert failure_for(o, "expect_column_values_to_be_in_type_list", "time")


def test_raw_task_events_bad_priority_and_event_type(con):
    df = good_task_events()
    df.loc[1, "priority"] = 12
    df.loc[3, "event_type"] = 9
    o = validate_table("raw_task_events", con, put(con, "bad", df))
    assert failure_for(o, "expect_column_values_to_be_in_set", "priority")["first_failing_values"] == [12]
    assert failure_for(o, "expect_column_values_to_be_in_set", "event_type")["first_failing_values"] == [9]
    assert o.failed == 2


def test_raw_task_usage_end_before_start_and_negative_usage(con):
    df = good_task_usage()
    df.loc[1, "end_time"] = 100  # < start_time 300
    df.loc[0, "canonical_memory"] = -0.5
    o = validate_table("raw_task_usage", con, put(con, "bad", df))
    pair = failure_for(o, "expect_column_pair_values_a_to_be_greater_than_b", "end_time,start_time")
    assert pair["first_failing_values"] == [[100, 300]]
    neg = failure_for(o, "expect_column_values_to_be_between", "canonical_memory")
    assert neg["first_failing_values"] == [-0.5]
    assert o.failed == 2


def test_jobs_small_job_and_duplicate(con):
    df = pd.concat([good_jobs(), good_jobs().iloc[[0]]], ignore_index=True)
    df.loc[1, "n_tasks"] = 5
    df.loc[1, "n_finished"] = 5
    o = validate_table("jobs", con, put(con, "bad", df), params=PARAMS)
    assert failure_for(o, "expect_column_values_to_be_between", "n_tasks")["first_failing_values"] == [5]
    dup = failure_for(o, "expect_compound_columns_to_be_unique", "trace,job_id")
    assert {"trace": "google", "job_id": 1} in dup["first_failing_values"]


def test_tasks_zero_latency_and_duplicate_task(con):
    df = good_tasks()
    df.loc[3, "latency_s"] = 0.0
    df = pd.concat([df, df.iloc[[5]]], ignore_index=True)  # duplicate (job 1, task 5)
    o = validate_table("tasks", con, put(con, "bad", df), trace="google", params=PARAMS)
    lat = failure_for(o, "expect_column_values_to_be_between", "latency_s")
    assert lat["first_failing_values"] == [0.0]
    assert lat["failing_rows"][0]["task_id"] == 3
    dup = failure_for(o, "expect_compound_columns_to_be_unique", "trace,job_id,task_id")
    assert {"trace": "google", "job_id": 1, "task_id": 5} in dup["first_failing_values"]


def test_tasks_straggler_share(con):
    df = good_tasks()
    df.loc[df["job_id"] == 3, "is_straggler"] = False  # job 3 (40 tasks): share 0 instead of ~0.1
    df.loc[df["job_id"] == 1, "is_straggler"] = True  # job 1: share 1.0
    df.loc[5, "evictions"] = -1
    o = validate_table("tasks", con, put(con, "bad", df), params=PARAMS)
    share = failure_for(o, "expect_column_values_to_be_between", "straggler_share_untied")
    assert share["frame"] == "per_job" and share["first_failing_values"] == [1.0]
    z = failure_for(o, "expect_column_values_to_be_between", "straggler_share_z")
    assert {r["job_id"] for r in z["failing_rows"]} == {1, 3}
    assert failure_for(o, "expect_column_values_to_be_between", "evictions")["first_failing_values"] == [-1]


def test_a_tie_at_the_threshold_is_not_a_wrong_label_but_another_quantile_is(con):
    """Coarse times (Spark's milliseconds): job 3's twelve slowest tasks share one latency, so the
    label latency >= p takes all twelve (share 0.3); breaking that one tie gives 0.1. Job 1 labelled
    against its median has no tie to break: it fails."""
    df = good_tasks()
    job3 = df["job_id"] == 3
    slowest = df[job3].sort_values("latency_s").index[-12:]
    df.loc[slowest, "latency_s"] = 99.0
    df.loc[job3, "is_straggler"] = df.loc[job3, "latency_s"] >= np.quantile(df.loc[job3, "latency_s"], 0.9)
    assert df.loc[job3, "is_straggler"].mean() == 0.3
    job1 = df["job_id"] == 1
    df.loc[job1, "is_straggler"] = df.loc[job1, "latency_s"] > np.quantile(df.loc[job1, "latency_s"], 0.5)
    o = validate_table("tasks", con, put(con, "ties", df), params=PARAMS)
    z = failure_for(o, "expect_column_values_to_be_between", "straggler_share_z")
    assert {r["job_id"] for r in z["failing_rows"]} == {1}


def test_checkpoint_null_feature_out_of_range_and_decreasing(con):
    df = good_checkpoints()  # ordered by job_id, k, task_id like sql/checkpoint_features.sql
    df.loc[1, "mcu"] = None  # (job 1, task 1, k 0)
    df.loc[4, "maxcpu"] = 1.2
    df.loc[[7, 8], "checkpoint_s"] = [60.0, 30.0]  # task (2, 0) over k: 0, 60, 30 -> step -30
    o = validate_table("checkpoint_features", con, put(con, "bad", df), params=PARAMS)
    null = failure_for(o, "expect_column_values_to_not_be_null", "mcu")
    assert null["failing_rows"][0] | {"mcu": None} == {
        "mcu": None, "trace": "google", "job_id": 1, "task_id": 1, "k": 0, "checkpoint_s": 0.0}
    assert failure_for(o, "expect_column_values_to_be_between", "maxcpu")["first_failing_values"] == [1.2]
    step = failure_for(o, "expect_column_values_to_be_between", "checkpoint_step")
    assert step["first_failing_values"] == [-30.0]
    assert step["failing_rows"][0] == {
        "checkpoint_step": -30.0, "trace": "google", "job_id": 2, "task_id": 0, "k": 2, "checkpoint_s": 30.0}
    assert o.failed == 3
    md = o.to_markdown()
    assert "maxcpu" in md and "1.2" in md and "checkpoint_step" in md


def test_checkpoint_order_and_default_features():
    shuffled = good_checkpoints().iloc[::-1].reset_index(drop=True)
    # ordered by the checkpoint index k when present: table order does not matter
    assert validate_table("checkpoint_features", shuffled, params={"features": FEATURES}).success
    # without k (or with checkpoint_order_by=None) table order is the checkpoint order
    for df, extra in ((shuffled.drop(columns=["k"]), {}), (shuffled, {"checkpoint_order_by": None})):
        o = validate_table("checkpoint_features", df, params={"features": FEATURES, **extra})
        assert failure_for(o, "expect_column_values_to_be_between", "checkpoint_step")["first_failing_values"][0] < 0
    # duplicate checkpoint (step 0) is not increasing either
    dup = good_checkpoints()
    dup.loc[8, "checkpoint_s"] = 30.0
    o = validate_table("checkpoint_features", dup, params={"features": FEATURES})
    assert failure_for(o, "expect_column_values_to_be_between", "checkpoint_step")["first_failing_values"] == [0.0]
    # default features come from the trace (GOOGLE_FEATURES): missing here -> column-set failure
    o = validate_table("checkpoint_features", good_checkpoints(), trace="google")
    cols = failure_for(o, "expect_table_columns_to_match_set",
                       ",".join(["trace", "job_id", "task_id", "checkpoint_s", *GOOGLE_FEATURES]))
    assert "scpu" in str(cols["details"])


def test_row_cap_is_reported(con):
    o = validate_table("tasks", con, "tasks", params=PARAMS, max_rows=20)
    assert o.rows_total == 65 and o.rows_validated == 20 and o.row_cap == 20 and o.truncated
    assert "Row cap" in o.to_markdown() and "20 of 65" in o.to_markdown()


def test_unknown_suite_and_missing_table_name(con):
    with pytest.raises(KeyError):
        validate_table("nope", con, "jobs")
    with pytest.raises(ValueError):
        validate_table("jobs", con)


def test_failed_check_explains_itself(con, tmp_path):
    """Expectation with its bounds, number of offending rows, sample ids, the Data Docs page."""
    df = good_tasks()
    df.loc[3, "latency_s"] = -5.0
    df.loc[7, "latency_s"] = 0.0
    o = validate_table("tasks", con, put(con, "bad", df), trace="google", params=PARAMS, docs_dir=tmp_path / "docs")
    text = o.explain()
    assert ("expect_column_values_to_be_between(latency_s, min_value=0.0, strict_min=True): 2 offending row(s) "
            "of 65, e.g. latency_s -5.0/job_id 1/task_id 3; latency_s 0.0/job_id 1/task_id 7") in text
    assert f"Data Docs: file://{o.docs_path}" in text and o.docs_path.exists()


def test_the_suites_build_gx_expectations_with_gx_analytics_off():
    """A fresh process that only builds a suite's expectations (no validation run, no context) has
    imported GX after the analytics switch: the switch travels with the GX import, not with
    validate_table."""
    import os
    import subprocess
    import sys

    code = (
        "import os, sys\n"
        "os.environ.pop('GX_ANALYTICS_ENABLED', None)\n"
        "from stragglers.warehouse.suites import DEFAULT_PARAMS, SUITES\n"
        "assert 'great_expectations' not in sys.modules\n"
        "frames = SUITES['jobs'](DEFAULT_PARAMS, [])\n"
        "assert 'great_expectations' in sys.modules and frames[0].expectations\n"
        "print(os.environ.get('GX_ANALYTICS_ENABLED'))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "GX_ANALYTICS_ENABLED"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "false"
