"""Alibaba selection and features on a hand-built batch_instance with known answers,
and the embedded Alibaba-format trace through the real unpacking code."""

from __future__ import annotations

import csv

import duckdb
import numpy as np
import pytest

from stragglers.settings import SelectionSettings
from stragglers.traces.fetch import alibaba_csv, fetch_trace
from stragglers.warehouse.build import build_features, build_selection
from stragglers.warehouse.staging import stage_alibaba


def write_batch_instance(path, rows):
    with open(path, "w", newline="") as f:
        csv.writer(f).writerows(rows)


def instance(i, task, job, status="Terminated", start=1000, dur=100, cpu=50.0):
    return [f"ins_{i}", task, job, "1", status, start, start + dur, f"m_{i % 7}", 1, 1, cpu, cpu * 2, 0.5, ""]


@pytest.fixture
def rows():
    rows = []
    for i in range(100):                      # j_1/M1: 100 instances, 2 not Terminated, 1 bad time
        status = "Failed" if i in (3, 4) else "Terminated"
        rows.append(instance(i, "M1", "j_1", status, dur=100 + 10 * i, cpu=float(i)))
    rows[10][6] = rows[10][5]                 # end == start
    for i in range(99):                       # j_2/R1: 99 instances -> rejected
        rows.append(instance(1000 + i, "R1", "j_2"))
    for i in range(120):                      # j_2/M2: 120 instances -> selected
        rows.append(instance(2000 + i, "M2", "j_2", dur=50 + i))
    return rows


@pytest.mark.parametrize("trace", ["alibaba_2018"])
def test_alibaba_selection_known_answers(tmp_path, rows, trace):
    write_batch_instance(tmp_path / "batch_instance.csv", rows)
    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    s = SelectionSettings(trace=trace)
    stage_alibaba(con, tmp_path / "batch_instance.csv", s)
    build_selection(con, s)
    build_features(con, s)
    jobs = con.execute("SELECT job_name, task_name, n_tasks, n_finished FROM jobs ORDER BY job_name, task_name").fetchall()
    assert jobs == [("j_1", "M1", 100, 97), ("j_2", "M2", 120, 120)]
    outcomes = dict(con.execute("SELECT outcome, count(*) FROM task_outcomes GROUP BY 1").fetchall())
    assert outcomes == {"finished": 217, "failed": 2, "bad_times": 1}
    lat = np.array([r[0] for r in con.execute(
        "SELECT latency_s FROM tasks t JOIN jobs j USING (trace, job_id) WHERE j.task_name = 'M2' ORDER BY 1").fetchall()])
    assert np.array_equal(lat, 50 + np.arange(120))
    feats = con.execute("SELECT min(cpu_avg), max(cpu_avg), count(*) FILTER (WHERE mem_max IS NULL) "
                        "FROM checkpoint_features").fetchone()
    assert feats == (0.0, 1.0, 0)
    steps = con.execute("SELECT max(k) FROM job_checkpoints GROUP BY job_id").fetchall()
    assert all(k <= 49 for (k,) in steps)


def test_alibaba_2017_columns_map_onto_2018(tmp_path):
    rows = [[1000, 1000 + 100 + i, "j7", "t1", f"m{i % 3}", "Terminated", 1, 1, 2.0, 1.0 + i, 0.6, 0.3]
            for i in range(100)]
    write_batch_instance(tmp_path / "batch_instance.csv", rows)
    con = duckdb.connect()
    s = SelectionSettings(trace="alibaba_2017")
    stage_alibaba(con, tmp_path / "batch_instance.csv", s)
    build_selection(con, s)
    assert con.execute("SELECT job_name, task_name, n_tasks, n_finished FROM jobs").fetchall() == [("j7", "t1", 100, 100)]


def test_embedded_alibaba_trace_end_to_end(tmp_path):
    meta = fetch_trace("synthetic_alibaba", tmp_path, log=lambda m: None)
    assert meta["files_verified"] >= 1
    con = duckdb.connect()
    s = SelectionSettings(trace="synthetic_alibaba")
    stage_alibaba(con, alibaba_csv(tmp_path, "synthetic_alibaba"), s)
    counts = build_selection(con, s) | build_features(con, s)
    assert counts["jobs"] >= 20 and counts["checkpoint_features"] > counts["tasks"]
