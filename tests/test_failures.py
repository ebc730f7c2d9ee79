"""Failure prediction inputs, forests and the proactive-cloning replay (El-Sayed et al.,
ICDCS 2017) on hand-made cases with answers worked by hand."""

from __future__ import annotations

import duckdb
import numpy as np
import pandas as pd
import pytest

from stragglers.failures.build import build_failure_inputs
from stragglers.failures.cloning import Attempt, attempt_lists, evaluate_cloning, original, replay, replayable
from stragglers.failures.predict import TARGET_BY_NAME, evaluate, oversample, split_jobs
from stragglers.settings.failures import FailureSettings
from stragglers.nodes.build import build_attempts
from stragglers.settings import SelectionSettings
from stragglers.warehouse.staging import stage_google
from tests.minitrace import FAIL, FINISH, KILL, S, SCHEDULE, SUBMIT, T0, MiniTrace

J_FAIL, J_KILL = 6_200_000_001, 6_200_000_002


def test_replay_of_a_two_attempt_task_by_hand():
    # attempt 1 fails after 100 s; the trace retries 20 s later; attempt 2 finishes after 50 s
    task = [Attempt(100, True), Attempt(50, False, gap=20)]
    assert original(task) == (170.0, 150.0)
    # never predicted: the replay is the trace
    assert replay(task, [0.2, 0.2], threshold=0.5, retries=4, clones=1) == (170.0, 150.0)
    # predicted when attempt 1 starts: a clone runs attempt 2 at once and finishes at 50 s;
    # attempt 1 is killed then: work 50 + 50 = 100 s
    assert replay(task, [0.9, 0.2], threshold=0.5, retries=4, clones=1) == (50.0, 100.0)
    # a false positive: a one-attempt task cloned once runs twice (100% overhead), no faster
    assert replay([Attempt(100, False)], [0.9], threshold=0.5, retries=4, clones=1) == (100.0, 200.0)
    # three failures (100, 80, 60 s; gaps 10 s): trace 260 s; cloned at 0 the second attempt fails at 80,
    # the third starts after its 10 s gap and fails at 150; the first failed at 100: done at 150
    three = [Attempt(100, True), Attempt(80, True, 10), Attempt(60, True, 10)]
    assert original(three) == (260.0, 240.0)
    assert replay(three, [0.9, 0, 0], threshold=0.5, retries=4, clones=1) == (150.0, 240.0)
    # the cap R = 1: only one retry, the task fails at 100 + 10 + 80
    assert replay(three, [0, 0, 0], threshold=0.5, retries=1, clones=1) == (190.0, 180.0)


def test_cloning_table_v_overhead_by_hand():
    lists = {(1, 0): [Attempt(100, True), Attempt(50, False, 20)], (1, 1): [Attempt(100, False)]}
    scores = {(1, 0): [0.9, 0.1], (1, 1): [0.6]}
    tasks, overhead = evaluate_cloning(lists, scores, thresholds=[0.5, 0.95], clone_counts=[1], retries=4)
    # threshold 0.5: both cloned: work 100 + 200 vs 150 + 100 -> +20%; threshold 0.95: none -> 0
    assert overhead.set_index("threshold")["overhead"].to_dict() == pytest.approx({0.5: 0.2, 0.95: 0.0})
    t = tasks.set_index(["threshold", "task_id"])["relative_completion"]
    assert t[(0.5, 0)] == pytest.approx(50 / 170) and t[(0.95, 0)] == 1.0


def _trace() -> MiniTrace:
    m = MiniTrace()
    m.job(J_FAIL, 1, T0)
    m.job(J_KILL, 0, T0)
    start = T0 + 10 * S
    # J_FAIL task 0: FAIL on 11 after 100 s, retried on 12, FINISH after 50 s; usage in its first 5 min
    m.event(J_FAIL, 0, start, SUBMIT)
    m.event(J_FAIL, 0, start, SCHEDULE, 11)
    m.usage(J_FAIL, 0, start, start + 100 * S, 11, cpu=0.2, mem=0.1)
    m.event(J_FAIL, 0, start + 100 * S, FAIL, 11)
    m.event(J_FAIL, 0, start + 120 * S, SCHEDULE, 12)
    m.usage(J_FAIL, 0, start + 120 * S, start + 170 * S, 12, cpu=0.4, mem=0.1)
    m.usage(J_FAIL, 0, start + 400 * S, start + 500 * S, 12, cpu=9.0, mem=0.1)   # after 5 min: not counted
    m.event(J_FAIL, 0, start + 170 * S, FINISH, 12)
    # J_FAIL task 1: fails twice, final FAIL
    m.event(J_FAIL, 1, start, SUBMIT)
    m.event(J_FAIL, 1, start, SCHEDULE, 13)
    m.event(J_FAIL, 1, start + 30 * S, FAIL, 13)
    m.event(J_FAIL, 1, start + 40 * S, SCHEDULE, 14)
    m.event(J_FAIL, 1, start + 70 * S, FAIL, 14)
    m.job(J_FAIL, 1, start + 200 * S, FAIL)
    # J_KILL: one task killed after 60 s
    m.run(J_KILL, 0, start, start + 60 * S, ending=KILL, machine=15, usage=False)
    m.job(J_KILL, 0, start + 60 * S, KILL)
    return m


def test_failure_inputs_by_hand(tmp_path):
    _trace().write(tmp_path / "raw")
    s = SelectionSettings(trace="synthetic")
    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    stage_google(con, tmp_path / "raw", s)
    build_attempts(con, tmp_path / "raw", s)
    counts = build_failure_inputs(con, s, FailureSettings())
    assert counts == {"early_usage": 1, "failure_tasks": 3, "failure_jobs": 2, "failure_attempts": 5}
    jobs = {r[0]: r[1:] for r in con.execute(
        "SELECT job_id, job_end_event, n_tasks, task_fail_flag, scheduling_class FROM failure_jobs").fetchall()}
    assert jobs == {J_FAIL: (FAIL, 2, True, 1), J_KILL: (KILL, 1, False, 0)}
    tasks = {r[:2]: r[2:] for r in con.execute(
        "SELECT job_id, task_id, final_event, attempts, attempt_fail_flag, early_cpu FROM failure_tasks").fetchall()}
    # task 0: the usage windows starting within 300 s of its first SCHEDULE: cpu (0.2 + 0.4) / 2
    assert tasks[(J_FAIL, 0)][:3] == (FINISH, 2, True) and tasks[(J_FAIL, 0)][3] == pytest.approx(0.3)
    # task 1: the failure before its last attempt sets the flag; its final FAIL does not count
    assert tasks[(J_FAIL, 1)][:3] == (FAIL, 2, True) and tasks[(J_KILL, 0)][:3] == (KILL, 1, False)
    att = con.execute("""SELECT job_id, task_id, attempt, end_event, past_attempts_flag, duration_s
        FROM failure_attempts ORDER BY 1, 2, 3""").fetchall()
    assert att == [(J_FAIL, 0, 1, FAIL, False, 100.0), (J_FAIL, 0, 2, FINISH, True, 50.0),
                   (J_FAIL, 1, 1, FAIL, False, 30.0), (J_FAIL, 1, 2, FAIL, True, 30.0),
                   (J_KILL, 0, 1, KILL, False, 60.0)]
    # the replay takes the tasks ended by FAIL / FINISH, with the trace's retry delay
    frame = con.execute("SELECT * FROM failure_attempts").df()
    keys, reasons = replayable(frame)
    assert dict(zip(reasons.reason, reasons.tasks)) == {"evicted_killed_or_lost": 1, "replayed": 2}
    lists = attempt_lists(frame, keys)
    assert lists[(J_FAIL, 0)] == [Attempt(100.0, True, 0.0), Attempt(50.0, False, 20.0)]
    con.close()


def test_oversampling_and_split():
    y = np.array([1] + [0] * 10)
    idx = oversample(y, 0.5, np.random.default_rng(0))
    assert (y[idx] == 0).sum() == 10 and (y[idx] == 1).sum() == 5     # 0.5 positive per negative
    assert len(oversample(y, 0.0, np.random.default_rng(0))) == 11
    train = split_jobs(np.arange(100), 0.7, seed=1)
    assert len(train) == 70 and train == split_jobs(np.arange(100), 0.7, seed=1)


def test_forest_learns_a_planted_rule():
    """Jobs requesting much disk fail (the paper's strongest config predictor of job failure):
    config-only precision and recall near 1; usage scenarios unavailable without usage."""
    rng = np.random.default_rng(0)
    n = 2000
    disk = rng.uniform(0, 1, n)
    jobs = pd.DataFrame({"job_id": np.arange(n), "user_name": rng.choice(["a", "b", "c"], n),
                         "logical_job_name": "x", "scheduling_class": rng.integers(0, 4, n),
                         "priority": rng.integers(0, 12, n), "n_tasks": rng.integers(1, 50, n),
                         "different_machine": 0, "cpu_request": rng.uniform(0, 1, n),
                         "memory_request": rng.uniform(0, 1, n), "disk_request": disk,
                         "job_end_event": np.where(disk > 0.8, FAIL, FINISH), "task_fail_flag": disk > 0.8})
    for c in TARGET_BY_NAME["job_failure"].usage:
        jobs[c] = np.nan
    curves, imp, summary = evaluate({"failure_jobs": jobs}, FailureSettings(sampling_ratios=(0.0,)),
                                    targets=[TARGET_BY_NAME["job_failure"]])
    at = curves[(curves.scenario == "config") & (curves.threshold == 0.5)].iloc[0]
    assert at.precision > 0.95 and at.recall > 0.95
    assert set(curves[~curves.available.astype(bool)].scenario) == {"config+usage", "all"}
    top = imp[imp.scenario == "config"].sort_values("importance").iloc[-1]
    assert top.feature == "disk_request"
    assert summary.iloc[0].test_rows == 600


def test_steps_read_their_own_trace_when_the_warehouse_staged_another_since(tmp_path):
    # Two traces in one warehouse (trace_realism compares them): stage google_2011, then synthetic,
    # then build google_2011's failure inputs. The stg_* views are one set per warehouse; the step
    # must read google_2011's files, not the synthetic ones staged last.
    import dagster as dg
    from dagster_duckdb import DuckDBResource

    from assets import failures, nodes, warehouse
    from assets.resources import PipelineSettings

    _trace().write(tmp_path / "raw" / "google_2011")
    other = MiniTrace()
    other.job(6_200_000_009, 1, T0)
    other.run(6_200_000_009, 0, T0 + 10 * S, T0 + 40 * S, machine=21)
    other.write(tmp_path / "raw" / "synthetic")
    db = DuckDBResource(database=str(tmp_path / "warehouse.duckdb"))

    def run(trace, assets):
        res = {"nurd": PipelineSettings(data_dir=str(tmp_path), trace=trace), "duckdb": db}
        with dg.DagsterInstance.ephemeral() as instance:   # disposed: its temp dir goes with it
            result = dg.materialize(assets, resources=res, instance=instance)
        assert result.success
        return result

    run("google_2011", [warehouse.staged_trace])
    run("synthetic", [warehouse.staged_trace])
    result = run("google_2011", [nodes.task_attempts, failures.failure_inputs])
    meta = result.asset_materializations_for_node("failure_inputs")[0].metadata
    # the hand-worked counts of test_failure_inputs_by_hand
    assert {k: meta[f"rows_{k}"].value for k in ("early_usage", "failure_tasks", "failure_jobs",
                                                  "failure_attempts")} == {
        "early_usage": 1, "failure_tasks": 3, "failure_jobs": 2, "failure_attempts": 5}
    with duckdb.connect(str(tmp_path / "warehouse.duckdb"), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM failure_jobs WHERE trace = 'google_2011'").fetchone()[0] == 2


def test_clone_sets_do_not_depend_on_row_order():
    # the warehouse returns rows in any order; the seeded sets must be the same tasks whatever it is
    from stragglers.failures.build import clone_sets
    from stragglers.failures.cloning import replayable
    attempts = pd.DataFrame({"job_id": np.repeat([1, 2, 3, 4, 5, 6], 10), "task_id": np.tile(np.arange(10), 6),
                             "attempt": 1, "duration_s": 30.0, "end_event": FINISH})
    settings = FailureSettings(clone_tasks=10)

    def sets(frame):
        train, eval_keys = clone_sets(replayable(frame)[0], frame, settings)
        return (sorted(map(tuple, train[["job_id", "task_id"]].to_numpy().tolist())),
                sorted(map(tuple, eval_keys.to_numpy().tolist())))

    train, ev = sets(attempts)
    assert len(train) == 10 and len(ev) == 10 and not set(train) & set(ev)
    for seed in range(3):
        assert sets(attempts.sample(frac=1, random_state=seed)) == (train, ev)


def test_load_returns_rows_in_key_order(tmp_path):
    from stragglers.failures.build import load
    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    con.execute("CREATE TABLE failure_attempts (trace VARCHAR, job_id BIGINT, task_id BIGINT, attempt INT)")
    con.execute("INSERT INTO failure_attempts VALUES ('t', 2, 0, 1), ('t', 1, 1, 2), ('x', 0, 0, 1), "
                "('t', 1, 1, 1), ('t', 1, 0, 1)")
    got = load(con, "failure_attempts", "t")[["job_id", "task_id", "attempt"]].to_numpy().tolist()
    assert got == [[1, 0, 1], [1, 1, 1], [1, 1, 2], [2, 0, 1]]


def test_cloning_report_with_an_empty_panel_draws_it_without_a_warning(tmp_path):
    """No task finally fails here: panel (a) of the CDF figure has no line, and no legend (matplotlib
    would warn about an empty one)."""
    import gc
    import warnings

    from stragglers.reports.sections.failures import write_cloning_report

    lists = {(1, 0): [Attempt(100, True), Attempt(50, False, 20)], (1, 1): [Attempt(100, False)]}
    scores = {(1, 0): [0.9, 0.1], (1, 1): [0.6]}
    tasks, overhead = evaluate_cloning(lists, scores, thresholds=[0.5, 0.9], clone_counts=[1], retries=4)
    assert not tasks.final_failed.any()
    result = {"tasks": tasks, "overhead": overhead, "info": pd.DataFrame({"tasks": [2]}),
              "reasons": pd.DataFrame({"reason": ["replayed"], "tasks": [2]})}
    gc.collect()   # earlier tests' garbage is collected outside: only this report's warnings count
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = write_cloning_report(tmp_path, "synthetic", result, {"clone_retries": 4}, None)
    assert out["figures"]["cdf"].stat().st_size > 0 and out["report"].is_file()
