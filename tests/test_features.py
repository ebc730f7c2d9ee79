"""No look-ahead in `observed` features; `reference` mode reproduces the authors' formula."""

from __future__ import annotations

import duckdb
import numpy as np
from hypothesis import HealthCheck, given, settings as hsettings, strategies as st

from stragglers.settings import SelectionSettings
from stragglers.warehouse.build import build_features, build_selection
from stragglers.warehouse.staging import stage_google
from tests.minitrace import EVICT, FAIL, S, SCHEDULE, SUBMIT, T0, MiniTrace

JOB = 6_251_000_000
N_TASKS = 12
COLS = "job_id, task_id, k, checkpoint_s, mcu, maxcpu, scpu, cmu, amu, maxmu, upc, tpc, mio, maxio, mdk, cpi, mai, ev, fl"


def make_trace(perturb_after_s: float | None = None, factor: float = 1.0, seed: int = 0) -> MiniTrace:
    """A job whose tasks run 1500..5000 s with per-window usage; optionally every usage
    value and EVICT/FAIL time after task time ``perturb_after_s`` is altered."""
    rng = np.random.default_rng(7)
    alt = np.random.default_rng(seed)
    m = MiniTrace()
    m.job(JOB, 1)
    for i in range(N_TASKS):
        start = T0 + (10 + i) * S
        lat = int((1500 + 300 * i + rng.integers(0, 200)) * S)
        m.event(JOB, i, start, SUBMIT)
        m.event(JOB, i, start, SCHEDULE)
        w = start
        while w < start + lat:
            end = min(start + lat, w + 300 * S)
            vals = rng.uniform(0.01, 1.0, size=13)
            if perturb_after_s is not None and end - start > perturb_after_s * S:
                vals = vals * factor * alt.uniform(0.5, 2.0, size=13)
            names = ["cpu_rate", "canonical_memory", "assigned_memory", "unmapped_page_cache", "total_page_cache",
                     "maximum_memory", "disk_io_time", "local_disk_space", "maximum_cpu_rate",
                     "maximum_disk_io_time", "cpi", "mai"]
            fields = dict(zip(names, vals))
            fields["mai"] = fields["mai"] / 10
            m.usage(JOB, i, w, end, cpu=fields.pop("cpu_rate"), mem=fields.pop("canonical_memory"), **fields)
            w = end
        if i % 3 == 0:  # an eviction/failure event mid-run (the task keeps running: a late-recorded event)
            ev_time = start + int(lat * 0.5)
            if perturb_after_s is not None and ev_time - start > perturb_after_s * S:
                ev_time = start + int(lat * alt.uniform(0.5, 0.99))
            m.event(JOB, i, ev_time, EVICT if i % 2 else FAIL)
        m.event(JOB, i, start + lat, 4)
    return m


def features(tmp_path, trace: MiniTrace, mode: str = "observed"):
    trace.write(tmp_path / "raw", n_parts=2)
    con = duckdb.connect()
    s = SelectionSettings(min_tasks=10, feature_mode=mode)
    stage_google(con, tmp_path / "raw", s)
    build_selection(con, s)
    build_features(con, s)
    df = con.execute(f"SELECT {COLS} FROM checkpoint_features ORDER BY k, task_id").df()
    tasks = con.execute("SELECT task_id, latency_s FROM tasks ORDER BY task_id").df()
    return df, tasks


@hsettings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cut=st.floats(1200, 5000), factor=st.floats(0.1, 10), seed=st.integers(0, 2**16))
def test_observed_features_ignore_everything_after_t(tmp_path_factory, cut, factor, seed):
    base, _ = features(tmp_path_factory.mktemp("a"), make_trace())
    alt, _ = features(tmp_path_factory.mktemp("b"), make_trace(cut, factor, seed))
    visible = base["checkpoint_s"] <= cut
    assert visible.any() or base["checkpoint_s"].min() > cut
    a = base[visible].reset_index(drop=True)
    b = alt[alt["checkpoint_s"] <= cut].reset_index(drop=True)
    assert a.equals(b)


def test_perturbation_is_seen_after_t(tmp_path):
    """The property test above cannot pass vacuously: later checkpoints do change."""
    base, _ = features(tmp_path / "a", make_trace())
    alt, _ = features(tmp_path / "b", make_trace(1800, 3.0, 1))
    late = base["checkpoint_s"] > 2100
    assert late.any()
    assert not base[late].reset_index(drop=True).equals(alt[alt["checkpoint_s"] > 2100].reset_index(drop=True))


def test_reference_mode_is_the_authors_formula(tmp_path):
    trace = make_trace()
    df, tasks = features(tmp_path, trace, mode="reference")
    lat = dict(zip(tasks.task_id, tasks.latency_s))
    start = {i: T0 + (10 + i) * S for i in range(N_TASKS)}
    usage = [(r[3], r[0], r[1], r[5]) for r in trace.task_usage]  # task, start, end, cpu_rate

    def cum(task, t):  # sum of cpu * duration / FINAL latency over windows ended by t
        return sum(c * (e - s) / S for tk, s, e, c in usage
                   if tk == task and (e - start[task]) / S <= t) / lat[task]

    final = np.array([cum(i, lat[i]) for i in range(N_TASKS)])
    lo, hi = final.min(), final.max()
    for row in df.itertuples():
        x = cum(row.task_id, min(row.checkpoint_s, lat[row.task_id]))
        expected = min(1.0, max(0.0, (x - lo) / (hi - lo)))
        assert abs(row.mcu - expected) < 1e-9, (row.task_id, row.checkpoint_s)


def test_two_parallel_builds_give_bit_identical_features(tmp_path):
    # DuckDB adds an unordered window's rows in whatever order its threads see them: the
    # imputation mean is ordered by task so two builds give the same bits (a method such as SOS
    # turns a 1e-15 difference into different flags, docs/BENCHMARKS.md "Method cost")
    from stragglers.traces.synth import generate_google
    generate_google(tmp_path / "raw", n_jobs=12)
    s = SelectionSettings()
    frames = []
    for i in range(2):
        con = duckdb.connect(str(tmp_path / f"w{i}.duckdb"))
        con.execute("SET threads = 4")
        stage_google(con, tmp_path / "raw", s)
        build_selection(con, s)
        build_features(con, s)
        frames.append(con.execute("SELECT * EXCLUDE (trace) FROM checkpoint_features ORDER BY job_id, task_id, k").df())
        con.close()
    assert len(frames[0]) > 1000
    assert frames[0].equals(frames[1])
