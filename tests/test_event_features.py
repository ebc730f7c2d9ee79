"""Event features (sql/event_features.sql): known answers on a hand-made trace, and no look-ahead
proven by cutting the trace at a time T (generated trace and the real excerpt)."""

from __future__ import annotations

from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest

from stragglers.settings import SelectionSettings
from stragglers.trace_formats import EVENT_FEATURES
from stragglers.warehouse.build import build_event_streams, build_features, build_jobs, build_selection
from stragglers.warehouse.runner import build_table
from stragglers.warehouse.staging import stage_google
from tests.minitrace import EVICT, FAIL, FINISH, S, SCHEDULE, SUBMIT, T0, MiniTrace

J, R = 6_300_000_000, 6_200_000_000         # the selected job and an earlier run of its logical name
A, B, C, D = 6_300_000_101, 6_300_000_102, 6_300_000_103, 6_300_000_104   # other jobs on machine M1
M1, M2 = 1001, 1002
NAME, OTHER = "bmFtZQ==", "b3RoZXI="
N = 12


def _s(t: float) -> int:
    return T0 + int(t * S)


def hand_made_trace() -> MiniTrace:
    """J (12 tasks, submitted at +3000 s): task 0 on M1 is evicted at +3100 and rescheduled on M1 at
    +3130; tasks 1..11 run on M2. On M1 run A (from +2900, never ends), C (from +3000), B (+3050 to
    a FAIL at +3080) and D (+100 to a FAIL at +200, over an hour before most rows). M1 shrinks from
    0.5 to 0.25 CPUs at +3500. R, the same logical name, ran 3 tasks on M2 and ended at +1500."""
    m = MiniTrace()
    m.machine(M1, 0, cpus=0.5, memory=0.25, platform="cDE=")
    m.machine(M2, 0, cpus=1.0, memory=1.0, platform="cDI=")
    m.machine(M1, _s(3500), cpus=0.25, memory=0.25, platform="cDE=", event=2)
    m.job(R, 1, time=T0, logical=NAME)
    for i, end in enumerate((1000, 1200, 1400)):
        m.run(R, i, _s(10), _s(end), machine=M2, usage=False)
    m.job(R, 1, time=_s(1500), event=FINISH, logical=NAME)
    for job, start, end, cpu, ending in ((A, 2900, None, 0.1, None), (C, 3000, None, 0.2, None),
                                         (B, 3050, 3080, 0.05, FAIL), (D, 100, 200, 0.05, FAIL)):
        m.job(job, 0, time=_s(start) - S, logical=OTHER)
        m.event(job, 0, _s(start) - S, SUBMIT)
        m.event(job, 0, _s(start), SCHEDULE, M1, cpu_request=cpu)
        if end is not None:
            m.event(job, 0, _s(end), ending, M1, cpu_request=cpu)
    m.job(J, 1, time=_s(3000), logical=NAME)
    for i in range(N):
        cpu = 0.01 * (i + 1)
        m.event(J, i, _s(3000), SUBMIT, cpu_request=cpu)
        if i == 0:
            m.event(J, 0, _s(3010), SCHEDULE, M1, cpu_request=cpu)
            m.event(J, 0, _s(3100), EVICT, M1, cpu_request=cpu)
            m.event(J, 0, _s(3130), SCHEDULE, M1, cpu_request=cpu)
            m.event(J, 0, _s(5130), FINISH, M1, cpu_request=cpu)
            m.usage(J, 0, _s(3010), _s(3100), M1)
            m.usage(J, 0, _s(3130), _s(5130), M1)
        else:
            m.event(J, i, _s(3010 + i), SCHEDULE, M2, cpu_request=cpu)
            m.event(J, i, _s(3010 + i + 1000 + 100 * i), FINISH, M2, cpu_request=cpu)
            m.usage(J, i, _s(3010 + i), _s(3010 + i + 1000 + 100 * i), M2)   # the selection needs usage
    return m


def _build(raw: Path, settings: SelectionSettings) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    stage_google(con, raw, settings)
    build_selection(con, settings)
    build_features(con, settings)
    return con


@pytest.fixture(scope="module")
def hand_made(tmp_path_factory):
    raw = hand_made_trace().write(tmp_path_factory.mktemp("events") / "raw")
    con = _build(raw, SelectionSettings(min_tasks=10))
    rows = con.execute("SELECT * FROM event_features ORDER BY task_id, k").df()
    assert set(rows["job_id"]) == {J}
    return rows


def _running(intervals, a: float) -> list:
    return [x for x in intervals if x[0] <= a and (x[1] is None or a < x[1])]


def test_task_and_machine_features_have_the_known_answer(hand_made):
    rows = hand_made[hand_made.task_id == 0]
    assert len(rows) >= 3
    # (start, end, cpu request) of every attempt on M1
    m1 = [(2900, None, 0.1), (3000, None, 0.2), (3050, 3080, 0.05), (100, 200, 0.05), (3010, 3100, 0.01),
          (3130, 5130, 0.01)]
    bad = [200, 3080, 3100]   # D's and B's FAILs, task 0's EVICT
    for r in rows.itertuples():
        a = (r.at_us - T0) / S
        assert r.elapsed == pytest.approx(a - 3010)
        rescheduled = a >= 3130   # the grid starts once a first share has finished: after it, here
        assert r.attempts == (2 if rescheduled else 1)
        assert r.evictions == (1 if a >= 3100 else 0)
        assert r.failures == 0
        assert r.lost_time == pytest.approx(90 if rescheduled else 0)
        assert r.since_schedule == pytest.approx(a - (3130 if rescheduled else 3010))
        cpus = 0.25 if a >= 3500 else 0.5
        assert (r.machine_cpus, r.machine_memory) == (cpus, 0.25)
        running = _running(m1, a)
        assert r.machine_tasks == len(running), a
        assert r.machine_cpu_load == pytest.approx(sum(x[2] for x in running) / cpus)
        assert r.machine_memory_load == pytest.approx(0.0318 * len(running) / 0.25)
        assert r.machine_bad_events == sum(a - 3600 < t <= a for t in bad), a
        assert r.machine_history_tasks == 0 and np.isnan(r.machine_slowness)   # nothing ended on M1
        assert r.sched_delay == pytest.approx(10)
        assert r.priority == 9 and r.different_machine == 0
        assert r.index_rank == pytest.approx(0 / N)


def test_job_machine_history_and_recurring_features_have_the_known_answer(hand_made):
    latency = {0: 2120.0} | {i: 1000.0 + 100 * i for i in range(1, N)}
    schedule = {i: 3010.0 + i for i in range(N)}
    finish = {i: schedule[i] + latency[i] for i in range(N)}
    platforms = hand_made.groupby(hand_made.task_id == 0)["machine_platform"].unique()
    assert len(platforms[True]) == 1 and len(platforms[False]) == 1 and platforms[True][0] != platforms[False][0]
    for r in hand_made.itertuples():
        a = (r.at_us - T0) / S
        done = [latency[i] for i in range(N) if finish[i] <= a]
        assert r.job_finished_share == pytest.approx(len(done) / N)
        running = sum(schedule[i] <= a < finish[i] for i in range(1, N)) + (3010 <= a < 3100 or 3130 <= a < 5130)
        assert r.job_running == running
        if done:
            assert r.job_p50 == pytest.approx(np.median(done))
            assert r.job_p75 == pytest.approx(np.quantile(done, 0.75))
            assert r.job_elapsed_rel == pytest.approx(r.elapsed / np.median(done))
        else:
            assert np.isnan(r.job_p50) and np.isnan(r.job_elapsed_rel)
        delays = [schedule[i] - 3000 for i in range(N) if schedule[i] <= a]
        assert r.sched_delay_rel == pytest.approx((schedule[r.task_id] - 3000) / np.median(delays))
        reqs = [0.01 * (i + 1) for i in range(N) if schedule[i] <= a]
        assert r.cpu_request_rel == pytest.approx(0.01 * (r.task_id + 1) / np.median(reqs))
        assert r.index_rank == pytest.approx(r.task_id / N)
        if r.task_id:   # M2: R's three tasks ended there (latency 990, 1190, 1390 over R's median 1190)
            assert r.machine_history_tasks == 3 and r.machine_slowness == pytest.approx(1.0)
        # R: one earlier run of the name, 1500 s long, task latency p50 1190 s, p90 1350 s
        assert (r.recurring_runs, r.recurring_last_duration) == (1, 1500)
        assert (r.recurring_last_p50, r.recurring_last_p90) == (pytest.approx(1190), pytest.approx(1350))


def test_event_features_are_normalized_into_checkpoint_features(tmp_path):
    raw = hand_made_trace().write(tmp_path / "raw")
    con = _build(raw, SelectionSettings(min_tasks=10))
    cf = con.execute(f"SELECT {', '.join(EVENT_FEATURES)} FROM checkpoint_features").df()
    assert len(cf) == con.execute("SELECT count(*) FROM event_features").fetchone()[0]
    assert cf.notna().all().all() and ((cf >= 0) & (cf <= 1)).all().all()
    # a feature that differs between tasks of a checkpoint spans [0, 1] there
    assert cf["index_rank"].max() == 1 and cf["index_rank"].min() == 0


# ---- no look-ahead: cut every table's events after T, same selection and grid ----------------------

EVENT_TABLES = {"stg_task_events": "time", "stg_job_events": "time", "stg_machine_events": "time"}


def _cut_build(raw: Path, settings: SelectionSettings, full: duckdb.DuckDBPyConnection, cut_us: int) -> pd.DataFrame:
    """event_features from the events at or before ``cut_us`` only, on the selection (tasks) and
    checkpoint grid (job_checkpoints) of the full build ``full``."""
    con = duckdb.connect()
    stage_google(con, raw, settings)
    for view, col in EVENT_TABLES.items():
        con.execute(f"CREATE TABLE cut_{view} AS SELECT * FROM {view} WHERE {col} <= {cut_us}")
        con.execute(f"CREATE OR REPLACE VIEW {view} AS SELECT * FROM cut_{view}")
    build_jobs(con, settings)   # task_lifecycle from the cut events
    for table in ("tasks", "job_checkpoints"):
        frame = full.execute(f"SELECT * FROM {table}").df()
        con.execute(f"CREATE OR REPLACE TABLE {table} AS SELECT * FROM frame")
    build_table(con, "task_attempts", settings)
    build_event_streams(con, settings)   # the machine and recurring-name streams, from the cut events too
    build_table(con, "event_features", settings)
    return con.execute("SELECT * FROM event_features ORDER BY job_id, task_id, k").df()


def _assert_no_look_ahead(raw: Path, settings: SelectionSettings, cuts: list[int]) -> int:
    full = _build(raw, settings)
    whole = full.execute("SELECT * FROM event_features ORDER BY job_id, task_id, k").df()
    compared = 0
    for cut in cuts:
        cut_rows = _cut_build(raw, settings, full, cut)
        want = whole[whole.at_us <= cut].reset_index(drop=True)
        got = cut_rows[cut_rows.at_us <= cut].reset_index(drop=True)
        assert len(want) > 0, cut
        pd.testing.assert_frame_equal(got, want, check_exact=True)   # bit-identical, NaN where NaN
        # and the cut changed something after T (the test can fail)
        later = whole[whole.at_us > cut]
        assert len(later) > 0 and not later.reset_index(drop=True).equals(
            cut_rows[cut_rows.at_us > cut].reset_index(drop=True)), cut
        compared += len(want)
    return compared


def test_hand_made_event_features_ignore_everything_after_t(tmp_path):
    raw = hand_made_trace().write(tmp_path / "raw")
    # 4200 s: task 0 has a row either side; 4600 s: after B's FAIL, M1's update, half of J finished
    assert _assert_no_look_ahead(raw, SelectionSettings(min_tasks=10), [_s(4200), _s(4600)]) > 0


def test_generated_event_features_ignore_everything_after_t(tmp_path):
    from stragglers.traces.fetch import SyntheticScale, fetch_trace

    fetch_trace("synthetic", tmp_path, scale=SyntheticScale(n_jobs=12, n_parts=4), log=lambda _: None)
    raw = next(p for p in tmp_path.rglob("task_events")).parent
    settings = SelectionSettings()
    con = _build(raw, settings)
    lo, hi = con.execute("SELECT quantile_disc(at_us, 0.3), quantile_disc(at_us, 0.7) FROM event_features").fetchone()
    assert _assert_no_look_ahead(raw, settings, [int(lo), int(hi)]) > 1000


def test_real_event_features_ignore_everything_after_t(realdata, tmp_path):
    """The real excerpt's first ~2.7 h of task events (test_realdata.py's subset), cut twice."""
    from stragglers.traces.fetch import fetch_trace

    fetch_trace("google_2011", tmp_path, url=str(realdata / "google_2011"),
                parts="job_events=0-19,task_events=0-1,machine_events=all", log=lambda _: None)
    raw = next(p for p in tmp_path.rglob("task_events")).parent
    settings = SelectionSettings(trace="google_2011")
    con = _build(raw, settings)
    lo, hi = con.execute("SELECT quantile_disc(at_us, 0.3), quantile_disc(at_us, 0.7) FROM event_features").fetchone()
    assert _assert_no_look_ahead(raw, settings, [int(lo), int(hi)]) > 1000
