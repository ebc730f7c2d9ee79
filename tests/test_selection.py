"""Selection and features in SQL on hand-built mini traces with known answers."""

from __future__ import annotations

import duckdb
import numpy as np
import pytest

from stragglers.settings import SelectionSettings
from stragglers.warehouse.build import build_features, build_selection
from stragglers.warehouse.staging import stage_google
from stragglers.warehouse.build import grid_coverage as build_grid_coverage
from tests.minitrace import END, EVICT, FAIL, FINISH, KILL, LOST, S, SCHEDULE, SUBMIT, T0, UPDATE_PENDING, MiniTrace

J_RAISED, J_CLASS0, J_99, J_MAIN, J_NO_TASKS = 6_000_000_001, 6_000_000_002, 6_000_000_003, 6_336_594_489, 6_000_000_005


def latency_of(task: int) -> int:
    return (600 + 37 * task) * S  # 10 min .. ~71 min, distinct


def build_trace() -> MiniTrace:
    m = MiniTrace()
    # class 0 on SUBMIT, raised to 2 by a later event: production under the max rule
    m.job(J_RAISED, 0, T0 + 1)
    m.job(J_RAISED, 2, T0 + 50 * S, UPDATE_PENDING)
    for i in range(100):
        m.run(J_RAISED, i, T0 + 60 * S, T0 + 60 * S + latency_of(i))
    m.job(J_CLASS0, 0, T0 + 2)
    for i in range(120):
        m.run(J_CLASS0, i, T0 + 60 * S, T0 + 60 * S + latency_of(i), priority=2)
    m.job(J_99, 1, T0 + 3)
    for i in range(99):
        m.run(J_99, i, T0 + 60 * S, T0 + 60 * S + latency_of(i))
    m.job(J_NO_TASKS, 1, T0 + 4)
    # the main job: 100 tasks with every special case, rows spread over parts
    m.job(J_MAIN, 3, T0 + 5)
    start = T0 + 100 * S
    for i in range(8, 100):
        m.run(J_MAIN, i, start, start + latency_of(i))
    # task 0: evicted at +2000 s, re-submitted and re-scheduled elsewhere, finishes at +4000 s
    m.event(J_MAIN, 0, start, SUBMIT)
    m.event(J_MAIN, 0, start, SCHEDULE, 1111)
    m.usage(J_MAIN, 0, start, start + 2000 * S, 1111)
    m.event(J_MAIN, 0, start + 2000 * S, EVICT, 1111)
    m.event(J_MAIN, 0, start + 2001 * S, SUBMIT)
    m.event(J_MAIN, 0, start + 2200 * S, SCHEDULE, 2222)
    m.usage(J_MAIN, 0, start + 2200 * S, start + 4000 * S, 2222)
    m.event(J_MAIN, 0, start + 4000 * S, FINISH, 2222)
    # task 1: fails then is retried and finishes
    m.event(J_MAIN, 1, start, SUBMIT)
    m.event(J_MAIN, 1, start + 5 * S, SCHEDULE, 3333)
    m.usage(J_MAIN, 1, start + 5 * S, start + 400 * S, 3333)
    m.event(J_MAIN, 1, start + 400 * S, FAIL, 3333)
    m.event(J_MAIN, 1, start + 401 * S, SUBMIT)
    m.event(J_MAIN, 1, start + 402 * S, SCHEDULE, 4444)
    m.usage(J_MAIN, 1, start + 402 * S, start + 2500 * S, 4444)
    m.event(J_MAIN, 1, start + 2500 * S, FINISH, 4444)
    m.run(J_MAIN, 2, start, start + 900 * S, ending=KILL)
    m.run(J_MAIN, 3, start, start + 900 * S, ending=LOST)
    m.run(J_MAIN, 4, start, start + 900 * S, usage=False)
    m.event(J_MAIN, 5, 0, SUBMIT)
    m.event(J_MAIN, 5, 0, SCHEDULE)
    m.event(J_MAIN, 5, start + 900 * S, FINISH)
    m.run(J_MAIN, 6, start, start + 900 * S, ending=FINISH, usage=False)
    m.task_events[-1][0] = END  # its FINISH is after the window
    m.run(J_MAIN, 7, start, start + 1700 * S, cpu="", mem="")  # empty usage fields
    return m


@pytest.fixture(scope="module")
def warehouse(mini_warehouse):
    return mini_warehouse(build_trace(), SelectionSettings(), n_parts=3)


def test_jobs_are_exactly_the_eligible_ones(warehouse):
    jobs = warehouse.execute("SELECT job_id, n_tasks, max_scheduling_class, first_scheduling_class "
                             "FROM jobs ORDER BY job_id").fetchall()
    assert jobs == [(J_RAISED, 100, 2, 0), (J_MAIN, 100, 3, 3)]


def test_tasks_latency_evictions_failures(warehouse):
    rows = {r[0]: r[1:] for r in warehouse.execute(
        "SELECT task_id, latency_us, evictions, failures FROM tasks WHERE job_id = ?", [J_MAIN]).fetchall()}
    assert set(rows) == {0, 1, 7} | set(range(8, 100))
    assert rows[0] == (4000 * S, 1, 0)       # from the FIRST schedule to the FINAL finish
    assert rows[1] == (2495 * S, 0, 1)
    assert rows[50] == (latency_of(50), 0, 0)
    assert warehouse.execute("SELECT latency_s FROM tasks WHERE job_id = ? AND task_id = 1",
                             [J_MAIN]).fetchone()[0] == 2495.0


def test_excluded_tasks_are_counted_by_reason(warehouse):
    outcomes = dict(warehouse.execute(
        "SELECT outcome, count(*) FROM task_outcomes WHERE job_id = ? GROUP BY outcome", [J_MAIN]).fetchall())
    assert outcomes == {"finished": 95, "killed": 1, "lost": 1, "no_usage": 1,
                        "scheduled_before_window": 1, "finished_after_window": 1}
    funnel = {r[0]: r[1:] for r in warehouse.execute(
        "SELECT reason, jobs, tasks FROM selection_funnel").fetchall()}
    assert funnel["input"] == (5, 100 + 120 + 99 + 100)
    assert funnel["no_task_events"] == (1, 0)
    assert funnel["not_production"] == (1, 120)
    assert funnel["too_few_tasks"] == (1, 99)
    assert funnel["selected"] == (2, 200)
    assert funnel["tasks"] == (2, 195)
    assert funnel["killed"] == (1, 1)


def test_straggler_label_is_the_job_p90(warehouse):
    for job in (J_RAISED, J_MAIN):
        lat, lab = zip(*warehouse.execute(
            "SELECT latency_s, is_straggler FROM tasks WHERE job_id = ?", [job]).fetchall())
        tau = np.quantile(np.array(lat), 0.9)
        assert list(lab) == [x >= tau for x in lat]


def test_checkpoint_grid(warehouse):
    lat = np.array([r[0] for r in warehouse.execute(
        "SELECT latency_us FROM tasks WHERE job_id = ? ORDER BY latency_us", [J_RAISED]).fetchall()])
    cps = warehouse.execute("SELECT k, checkpoint_us, tau_s FROM job_checkpoints WHERE job_id = ? ORDER BY k",
                            [J_RAISED]).fetchall()
    t0 = lat[3]  # ceil(0.04 * 100) = 4th fastest task
    tau = np.quantile(lat, 0.9)
    assert cps[0][:2] == (0, t0)
    assert [c[1] for c in cps] == list(range(t0, int(np.ceil(tau)), 300 * S))
    assert cps[0][2] == pytest.approx(tau / S)


def test_features_normalized_and_complete(warehouse):
    n_rows, n_null, lo, hi = warehouse.execute("""
        SELECT count(*), count(*) FILTER (WHERE mcu IS NULL OR cpi IS NULL OR ev IS NULL),
               least(min(mcu), min(cmu), min(ev)), greatest(max(mcu), max(cmu), max(ev))
        FROM checkpoint_features""").fetchone()
    n_expected = warehouse.execute("""
        SELECT sum(n) FROM (SELECT count(*) * (SELECT count(*) FROM job_checkpoints c WHERE c.job_id = t.job_id) AS n
        FROM tasks t GROUP BY job_id)""").fetchone()[0]
    assert n_rows == n_expected and n_null == 0 and 0 <= lo and hi <= 1
    # the evicted task shows its eviction once it happened (task time 2000 s)
    ev = dict(warehouse.execute("""SELECT checkpoint_s > 2000, max(ev) FROM checkpoint_features
        WHERE job_id = ? AND task_id = 0 GROUP BY 1""", [J_MAIN]).fetchall())
    assert ev[False] == 0 and ev[True] == 1


def test_malformed_row_is_an_error_naming_file_and_line(tmp_path):
    import gzip

    from stragglers.warehouse.locate import TraceFormatError

    m = MiniTrace()
    m.job(1, 1)
    for i in range(3):
        m.run(1, i, T0, T0 + 900 * S)
    m.write(tmp_path, n_parts=2)
    part = sorted((tmp_path / "task_events").glob("*.gz"))[0]
    lines = gzip.decompress(part.read_bytes()).decode().splitlines()
    lines[1] = "abc" + lines[1][lines[1].index(","):]
    part.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    con = duckdb.connect()
    s = SelectionSettings(min_tasks=2)
    stage_google(con, tmp_path, s)
    with pytest.raises(TraceFormatError, match=r"part-00000-of-00002\.csv\.gz, line 2: non-numeric value 'abc' in column time: expected BIGINT"):
        build_selection(con, s)
    # nothing half-written: the failed table has no rows of the trace
    assert not con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = 'task_lifecycle'"
                           ).fetchone()[0] or con.execute("SELECT count(*) FROM task_lifecycle").fetchone()[0] == 0


J_SHORT = 6_000_000_010


@pytest.mark.parametrize("grid, expected", [("fixed", 1), ("capped", 10), ("equal", 10)])
def test_short_job_is_evaluated_by_the_capped_grid(tmp_path, grid, expected):
    """A job whose tasks take 20-70 s: tau - t0 = 43.05 s is shorter than one 300 s usage window,
    so the fixed grid leaves it with k = 0 only; the capped grid (default) steps (tau - t0) / 10."""
    m = MiniTrace()
    m.job(J_SHORT, 1, T0 + 1)
    for i in range(100):
        m.run(J_SHORT, i, T0 + 10 * S, T0 + 10 * S + (20 * S + i * S // 2))
    m.write(tmp_path / "raw", n_parts=1)
    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    try:
        s = SelectionSettings(checkpoint_grid=grid)
        stage_google(con, tmp_path / "raw", s)
        build_selection(con, s)
        build_features(con, s)
        cps = [r[0] for r in con.execute("SELECT checkpoint_us FROM job_checkpoints ORDER BY k").fetchall()]
        t0, tau = 21_500_000, 20 * S + 89.1 * S // 2           # 4th fastest; numpy's linear p90
        assert len(cps) == expected and cps[0] == t0
        if expected > 1:
            step = -(-(tau - t0) // 10)                         # ceil: 4.305 s
            assert cps == [int(t0 + k * step) for k in range(10)]
        cov = build_grid_coverage(con, s).set_index("grid")
        assert cov.loc["fixed", "jobs_with_checkpoints"] == 0
        assert cov.loc["capped", "jobs_with_checkpoints"] == cov.loc["equal", "jobs_with_checkpoints"] == 1
        assert cov.loc["capped", "max_checkpoints"] == 10
    finally:
        con.close()
