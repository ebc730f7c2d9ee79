"""The future cannot change the past: under the operator's protocol, every decision a method makes
before a time T is the same, bit for bit, whatever happens after T.

A trace is replayed from warehouses built from raw events: as recorded, and, for each of three
cut times T, with its future rewritten after T in every job and on every machine: (1) every task,
job and machine event and usage window after T happens three times as late after T (so the tasks
running at T run three times longer; usage values after T are halved), and (2) of the tasks whose
final event comes after T, every one that finishes is killed instead and some that are killed
finish instead. The clock, the tasks the replay sees, the features, the thresholds and the earlier jobs
are rebuilt from the rewritten events by the pipeline's own SQL. The operator decides on the job's
wall clock: a decision at W (seconds since the job's origin, its earliest first SCHEDULE) is taken,
and launches its copies, at origin + W; it lies before T when origin + W <= T. For every job with
decisions before T (ten jobs or more per trace, each
cut at the three T), every method of the registry (but the two that are given the labels, oracle
and wrangler) and every reference rule, every point of its budget curve (the sweep's cuts of its
score, the survival family's thresholds) and the history it is given from earlier jobs: the
decision times, tau_hat(t), the features, the fallbacks, the flags (each flag launches a
speculative copy: the copies launched are the flags) and the scores the copies are ranked by must be
identical; so must each job's earlier
jobs and their prior, what the rules and tuned settings learned from earlier jobs are chosen on.
On the task clock (a decision "at t" reads each task as of its own first SCHEDULE + t, later tasks
beyond origin + t) and on the legacy grid (cut from the true tau) the same comparison must find a
difference: the test can fail.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import duckdb
import numpy as np
import pytest

from stragglers.prediction.evaluation import load_jobs, method_factory
from stragglers.prediction.history import (
    AttachHistory, CostAwareSelection, ThresholdGrid, build_histories, earlier_jobs, job_times,
)
from stragglers.prediction.methods import METHODS
from stragglers.prediction.protocol import OPERATOR, adapt_job
from stragglers.prediction.simulate import JobData, replay_job
from stragglers.prediction.sweep import SweepGrid
from stragglers.settings import EvaluationSettings, SelectionSettings
from stragglers.warehouse.build import build_features, build_selection
from stragglers.warehouse.staging import stage_google

#: given the true labels by design (the upper bound and the paper's Wrangler): they read the future
LABEL_READERS = {name for name, cls in METHODS.items() if cls.tags.reads_labels}
METHODS_UNDER_TEST = sorted(set(METHODS) - LABEL_READERS)
STRETCH = 3          # events after T happen this many times as late after T
FOREVER = 9223372036854775807   # the trace's "no time" sentinel
FINISH, KILL = 4, 5
MIN_JOBS = 10        # jobs compared per trace, at least
CUTS = 3             # values of T


def operator(**kw) -> EvaluationSettings:
    return EvaluationSettings(workers=1, **(dict(OPERATOR) | kw))


SETTINGS = {"online": operator(), "task_clock": operator(decision_clock="task_clock"),
            "legacy": operator(decision_clock="legacy_grid")}


def rewrite_future(con: duckdb.DuckDBPyConnection, t_us: int) -> None:
    """Replace the staged views by tables where, in every job and on every machine, the events and
    usage after ``t_us`` happen STRETCH times as late after it (usage values halved), and where of
    the final FINISH / KILL events after ``t_us`` every FINISH becomes a KILL and half the
    KILLs become FINISHes (by job and task index): the raw level, before any build."""
    def later(col: str) -> str:
        return f"CASE WHEN {col} > {t_us} AND {col} < {FOREVER} THEN {t_us} + {STRETCH} * ({col} - {t_us}) ELSE {col} END"

    after = f"time > {t_us} AND time < {FOREVER}"
    swapped = (f"CASE WHEN {after} AND event_type = {FINISH} THEN {KILL} "
               f"WHEN {after} AND event_type = {KILL} AND (job_id + task_index) % 2 = 0 THEN {FINISH} "
               f"ELSE event_type END")
    con.execute(f"""CREATE TABLE fut_stg_task_events AS
                    SELECT * REPLACE ({later('time')} AS time, ({swapped})::INTEGER AS event_type) FROM stg_task_events""")
    for view in ("stg_job_events", "stg_machine_events"):
        con.execute(f"CREATE TABLE fut_{view} AS SELECT * REPLACE ({later('time')} AS time) FROM {view}")
    halved = ", ".join(f"CASE WHEN end_time > {t_us} THEN {c} / 2 ELSE {c} END AS {c}"
                       for c in ("cpu_rate", "canonical_memory", "assigned_memory", "disk_io_time"))
    con.execute(f"""CREATE TABLE fut_stg_task_usage AS
                    SELECT * REPLACE ({later('start_time')} AS start_time, {later('end_time')} AS end_time, {halved})
                    FROM stg_task_usage""")
    for view in ("stg_task_events", "stg_job_events", "stg_machine_events", "stg_task_usage"):
        con.execute(f"CREATE OR REPLACE VIEW {view} AS SELECT * FROM fut_{view}")


def warehouse(raw: Path, settings: SelectionSettings, cut_us: int | None = None) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    stage_google(con, raw, settings)
    if cut_us is not None:
        rewrite_future(con, cut_us)
    build_selection(con, settings)
    build_features(con, settings)
    return con


def decision_instants(con, trace: str, job_id: int, times: np.ndarray) -> np.ndarray:
    """The trace time (us) of each decision time t (s since the job's origin, the earliest first
    SCHEDULE of the tasks the operator's replay sees): when it is taken and its copies start."""
    origin = con.execute("SELECT min(first_schedule_us) FROM operator_tasks WHERE trace = ? AND job_id = ?",
                         [trace, job_id]).fetchone()[0]
    return np.array([origin + round(t * 1e6) for t in times])


def jobs_of(con, trace: str, label: str) -> dict[int, JobData]:
    s = SETTINGS[label]
    jobs, _ = load_jobs(con, trace, s)
    return {j.job_id: adapt_job(j, s) for j in jobs}


@dataclass
class Cut:
    t_us: int                                  # T
    con: duckdb.DuckDBPyConnection             # the warehouse of the rewritten trace
    jobs: dict                                 # label -> job_id -> JobData
    before: dict = field(default_factory=dict)  # label -> job_id -> decisions of the recorded replay before T


@dataclass
class World:
    trace: str
    con: duckdb.DuckDBPyConnection             # as recorded
    jobs: dict                                 # label -> job_id -> JobData
    cuts: list[Cut]

    def pairs(self, label: str = "online"):
        """(cut, job_id, decisions before T) for every job of both warehouses with a decision before T."""
        return [(c, j, n) for c in self.cuts for j, n in c.before[label].items() if n >= 1 and j in c.jobs[label]]


def make_world(raw: Path, settings: SelectionSettings) -> World:
    """The recorded warehouse and one rewritten warehouse per cut. The cuts are the instants of the
    middle decisions of CUTS jobs spread over the trace (each cuts its job in two; the jobs before it
    are compared whole, the jobs across it in part)."""
    trace = settings.trace
    con = warehouse(raw, settings)
    world = World(trace, con, {label: jobs_of(con, trace, label) for label in SETTINGS}, [])
    online = world.jobs["online"]
    instants = {j: decision_instants(con, trace, j, job.checkpoints) for j, job in online.items()}
    middles = sorted(int(d[len(d) // 2]) for d in instants.values() if len(d) >= 4)
    assert len(middles) >= CUTS, f"{len(middles)} jobs with 4 decisions or more"
    for q in np.linspace(0.5, 1.0, CUTS):
        t_us = middles[min(int(q * (len(middles) - 1)), len(middles) - 1)]
        rewritten = warehouse(raw, settings, t_us)
        cut = Cut(t_us, rewritten, {label: jobs_of(rewritten, trace, label) for label in SETTINGS})
        for label in SETTINGS:
            cut.before[label] = {j: int((decision_instants(con, trace, j, job.checkpoints) <= t_us).sum())
                                 for j, job in world.jobs[label].items()}
        world.cuts.append(cut)
    return world


#: cheaper than the defaults, the same code path (CI time): Tobit's optimizer iterations; SOS scores its
#: candidates in chunks of max_train among themselves (its cost is quadratic in a chunk's size, and the
#: unreachable-perplexity rows of a large job's all-zero running tasks take every bisection step);
#: LSCP with the authors' two LOFs (code/run_od.py), on at most max_train training rows
CHEAP = {"tobit": {"max_iter": 100}, "sos": {"max_train": 200},
         "lscp": {"max_train": 200, "lof_n_neighbors": (5, 10)}}


def truncated(job: JobData, n: int) -> JobData:
    from dataclasses import replace

    return replace(job, checkpoints=job.checkpoints[:n], X=job.X[:n],
                   thresholds=None if job.thresholds is None else job.thresholds[:n],
                   steps=None if job.steps is None else job.steps[:n])


def replay(con, trace: str, job: JobData, name: str, n: int):
    """``name`` replayed on the first ``n`` decisions of ``job`` with every point of its budget curve
    (the sweep's cuts, or the survival family's thresholds with the history of earlier jobs): the
    replay is sequential and a method is handed X[k] and tau_hat(t_k) at decision k only, so what
    comes after the n-th decision cannot act on the first n; cutting it saves the test's time."""
    job = truncated(job, n)
    s = SETTINGS["online"]
    factory = partial(method_factory(name, s), **CHEAP.get(name, {}))
    if METHODS[name].tags.learns_from_earlier_jobs:
        sel = CostAwareSelection.from_warehouse(con, trace, job.feature_names, [job.job_id], {name: factory},
                                                s.cost_lambda, s.history_min_jobs, "operator_tasks")
        return replay_job(AttachHistory(sel.histories)(job), ThresholdGrid(factory), seed=0)
    return replay_job(job, SweepGrid(factory), seed=0)


def data_differences(a: JobData, b: JobData, n: int) -> list[str]:
    """What differs in the first ``n`` decisions' inputs (empty: nothing)."""
    if not np.array_equal(a.checkpoints[:n], b.checkpoints[:n]):
        return [f"decision times: {a.checkpoints[:n]} vs {b.checkpoints[:n]}"]
    out = []
    if a.thresholds is not None and not np.array_equal(a.thresholds[:n], b.thresholds[:n]):
        out.append(f"tau_hat: {a.thresholds[:n]} vs {b.thresholds[:n]}")
    if not np.array_equal(a.task_ids, b.task_ids) or not np.array_equal(a.X[:n], b.X[:n], equal_nan=True):
        out.append("tasks or features")
    if a.steps is not None and not np.array_equal(a.steps[:n], b.steps[:n]):
        out.append("steps")
    return out


def flag_differences(ra, rb, last: float) -> list[str]:
    out = []
    fa = [(k, t, r) for k, t, r in ra.fallbacks if t <= last]
    fb = [(k, t, r) for k, t, r in rb.fallbacks if t <= last]
    if fa != fb:
        out.append(f"fallbacks: {fa} vs {fb}")
    assert [v.method for v in ra.variants] == [v.method for v in rb.variants]
    for va, vb in zip(ra.variants, rb.variants):
        before_a = np.where(va.flagged_at <= last, va.flagged_at, np.nan)
        before_b = np.where(vb.flagged_at <= last, vb.flagged_at, np.nan)
        if not np.array_equal(before_a, before_b, equal_nan=True):
            out.append(f"{va.method}: flags before T differ")
    # the scores the capped replay orders its copies by, given before T (a replay that kept none
    # gave none: a method that scores only after T)
    def before(trail):
        if trail is None:
            return np.zeros(0), np.zeros(0, int), {}
        keep = trail.times <= last
        return trail.times[keep], trail.task[keep], {v: sc[keep] for v, sc in trail.scores.items()}

    (xa, ia, sa), (xb, ib, sb) = before(ra.score_trail), before(rb.score_trail)
    nan = np.full(len(xa), np.nan)
    if not (np.array_equal(xa, xb) and np.array_equal(ia, ib) and all(
            np.array_equal(sa.get(v, nan), sb.get(v, nan), equal_nan=True) for v in {*sa, *sb})):
        out.append("scores before T differ")
    return out


def differences(world: World, name: str | None, label: str = "online") -> list[str]:
    """Everything that differs, over every (cut, job) with decisions before T (empty: nothing). The
    decisions' inputs are compared on every such job; a method's flags on the jobs that T cuts in
    two (decisions on both sides): on a job wholly before T a replay that reads only its inputs
    and the tasks ended by then (identical there) cannot differ, and each method's replays are the
    test's cost."""
    out = []
    recorded = {}
    for cut, j, n in world.pairs(label):
        a, b = world.jobs[label][j], cut.jobs[label][j]
        where = f"T={cut.t_us} job {j}"
        out += [f"{where}: {d}" for d in data_differences(a, b, n)]
        if name is None or out or n == len(a.checkpoints):
            continue
        if j not in recorded:   # the recorded replay, once, on the decisions before the latest cut across it
            recorded[j] = replay(world.con, world.trace, a, name, max(
                c.before[label][j] for c in world.cuts if c.before[label][j] < len(a.checkpoints)))
        rb = replay(cut.con, world.trace, b, name, n)
        out += [f"{where}: {d}" for d in flag_differences(recorded[j], rb, float(a.checkpoints[n - 1]))]
    return out


def history_differences(world: World) -> list[str]:
    """Each job's earlier jobs and their prior, for every job whose first decision is before T."""
    out = []
    feats = next(iter(world.jobs["online"].values())).feature_names
    ids = sorted(world.jobs["online"])
    times = job_times(world.con, world.trace, "operator_tasks").set_index("job_id")
    hist = build_histories(world.con, world.trace, feats, ids, 1, "operator_tasks")
    earlier = earlier_jobs(times.reset_index())
    for cut in world.cuts:
        times_b = job_times(cut.con, world.trace, "operator_tasks").set_index("job_id")
        earlier_b = earlier_jobs(times_b.reset_index())
        hist_b = build_histories(cut.con, world.trace, feats, [j for j in ids if j in times_b.index], 1,
                                 "operator_tasks")
        for j in ids:
            if times.loc[j, "cutoff_us"] > cut.t_us or j not in times_b.index:
                continue
            if earlier[j] != earlier_b[j]:
                out.append(f"T={cut.t_us} job {j}: earlier jobs {earlier[j]} vs {earlier_b[j]}")
            pa, pb = hist[j].prior, hist_b[j].prior
            if (pa is None) != (pb is None) or (pa is not None and not (
                    np.array_equal(pa.beta, pb.beta) and pa.sigma == pb.sigma)):
                out.append(f"T={cut.t_us} job {j}: prior from earlier jobs")
    return out


def check_world(world: World) -> None:
    """The worlds can tell: at least MIN_JOBS jobs compared, cut in two by some T; the rewrites
    stretched tasks and turned finishing tasks into killed ones and killed ones into finishing ones."""
    pairs = world.pairs()
    assert len({j for _, j, _ in pairs}) >= MIN_JOBS, pairs
    across = [(c, j) for c, j, n in pairs if n < len(world.jobs["online"][j].checkpoints)]
    assert len(across) >= CUTS, "too few jobs with decisions on both sides of a T"
    for cut in world.cuts:
        moved = world.con.execute("SELECT job_id, task_id, end_state FROM operator_tasks").df().merge(
            cut.con.execute("SELECT job_id, task_id, end_state, latency_us FROM operator_tasks").df(),
            on=["job_id", "task_id"], suffixes=("", "_b"))
        assert ((moved.end_state == "finished") & (moved.end_state_b == "killed")).any()
        assert ((moved.end_state == "killed") & (moved.end_state_b == "finished")).any()


def fetched_world(tmp: Path, settings: SelectionSettings, **fetch) -> World:
    """The world of ``settings.trace`` fetched into ``tmp`` (``fetch``: fetch_trace's options), checked
    able to tell."""
    from stragglers.traces.fetch import fetch_trace

    fetch_trace(settings.trace, tmp, log=lambda _: None, **fetch)
    raw = next(p for p in tmp.rglob("task_events")).parent
    world = make_world(raw, settings)
    check_world(world)
    return world


# ---------------------------------------------------------------- the embedded trace

@pytest.fixture(scope="module")
def embedded(tmp_path_factory) -> World:
    from stragglers.traces.fetch import SyntheticScale

    return fetched_world(tmp_path_factory.mktemp("future"), SelectionSettings(),
                         scale=SyntheticScale(n_jobs=EMBEDDED_JOBS, n_parts=4))


#: generated jobs: enough that MIN_JOBS of them are evaluable
EMBEDDED_JOBS = 24


@pytest.mark.parametrize("name", METHODS_UNDER_TEST)
def test_the_future_cannot_change_the_past_embedded(embedded, name):
    assert differences(embedded, name) == []


def test_the_history_from_earlier_jobs_cannot_see_the_future_embedded(embedded):
    assert history_differences(embedded) == []


def test_the_legacy_grid_lets_the_future_change_the_past_embedded(embedded):
    # its step is cut from the true tau: a longer future moves every decision
    assert differences(embedded, None, "legacy")


def test_the_task_clock_lets_the_future_change_the_past_embedded(embedded):
    # a decision at task time t reads a task that started later as of its own start + t, past T
    assert differences(embedded, None, "task_clock")


# ---------------------------------------------------------------- the real excerpt

@pytest.fixture(scope="module")
def real(realdata, tmp_path_factory) -> World:
    """The real excerpt's first three task_events parts (~4 h; no task_usage, so the event features):
    16 evaluable jobs."""
    return fetched_world(tmp_path_factory.mktemp("future_real"), SelectionSettings(trace="google_2011"),
                         url=str(realdata / "google_2011"), parts="job_events=0-19,task_events=0-2,machine_events=all")


@pytest.mark.parametrize("name", METHODS_UNDER_TEST)
def test_the_future_cannot_change_the_past_real(real, name):
    assert differences(real, name) == []


def test_the_history_from_earlier_jobs_cannot_see_the_future_real(real):
    assert history_differences(real) == []


def test_the_legacy_grid_lets_the_future_change_the_past_real(real):
    assert differences(real, None, "legacy")


def test_the_task_clock_lets_the_future_change_the_past_real(real):
    assert differences(real, None, "task_clock")


def test_flag_all_copies_tasks_that_never_finish_real(real):
    """The operator's replay sees the tasks that will not finish: flag_all copies them too."""
    job_ids = sorted(real.jobs["online"])
    unfinished = 0
    for j in job_ids:
        job = real.jobs["online"][j]
        r = replay_job(job, method_factory("flag_all", SETTINGS["online"])(), seed=0)
        flagged = ~np.isnan(r.variants[0].flagged_at)
        if job.finished is not None:
            unfinished += int((flagged & ~job.finished).sum())
    assert unfinished > 0


def test_an_online_methods_step_points_at_the_clocks_next_timed_decision(embedded):
    """The step an online method is given (stragglers/prediction/clock.py, in Python) lands on a
    decision of sql/operator_checkpoints.sql, or at a time no task runs (after the job's last task
    ended, or between waves of tasks)."""
    a = next(j for j in embedded.jobs["online"].values() if len(j.checkpoints) >= 4)
    assert (a.steps > 0).all()
    for t in a.checkpoints + a.steps:
        runs = (a.started_by(t) & ~a.ended_by(t)[0]).any()
        assert np.isclose(a.checkpoints, t, rtol=0, atol=1e-6).any() or not runs, t


def test_a_real_mirror_with_a_task_events_part_missing_runs_green_on_the_online_clock(realdata, tmp_path):
    """A gap between parts is normal: counted, and the operator's view is evaluated on the clock."""
    from stragglers.prediction.evaluation import evaluate
    from stragglers.traces.fetch import fetch_trace

    fetch_trace("google_2011", tmp_path, url=str(realdata / "google_2011"),
                parts="job_events=0-19,task_events=0-2,machine_events=all", log=lambda _: None)
    fetched = next(p for p in tmp_path.rglob("task_events")).parent
    # a mirror made elsewhere, without task_events part 1 (and without this downloader's record of it)
    raw = tmp_path / "mirror"
    def left_out(directory, names):
        gone = {".verified.json"} | ({"part-00001-of-00500.csv.gz"} if Path(directory).name == "task_events" else set())
        return [n for n in names if n in gone]

    shutil.copytree(fetched, raw, ignore=left_out)
    assert (raw / "job_events" / "part-00001-of-00500.csv.gz").exists()
    settings = SelectionSettings(trace="google_2011")
    con = warehouse(raw, settings)
    assert con.execute("SELECT missing_parts FROM staged_tables WHERE table_name = 'task_events'").fetchone() == (1,)
    rules = ["flag_all", "km_survival", "spark_speculation", "wait_for_tau"]
    out = evaluate(con, "google_2011", rules, operator())
    jm = out.frames["job_metrics"]
    assert out.n_jobs > 0 and set(jm.method) == set(rules) and jm.n_checkpoints.min() >= 2
    # every decision of the clock has a feature row for every task the replay sees (those that do not finish too)
    assert con.execute("""SELECT count(*) FROM operator_checkpoints c JOIN (SELECT job_id, count(*) AS n
                          FROM operator_tasks GROUP BY job_id) t USING (job_id)""").fetchone()[0] > 0
    assert con.execute("""SELECT sum(t.n) FROM operator_checkpoints c JOIN (SELECT job_id, count(*) AS n
                          FROM operator_tasks GROUP BY job_id) t USING (job_id)""").fetchone()[0] == \
        con.execute("SELECT count(*) FROM operator_checkpoint_features").fetchone()[0]


def test_the_timed_decisions_double_their_interval_after_every_b_of_them():
    from stragglers.prediction.clock import next_timed_decision

    # B = 10, I = 300 s from t0 = 0: 300 .. 3000 every 300 s, then 3600 .. 9000 every 600 s, then 1200 s
    got = [next_timed_decision(0.0, t, 300, 10) for t in (-5.0, 0.0, 299.9, 300.0, 2999.0, 3000.0, 9000.0, 20999.0)]
    assert got == [300.0, 300.0, 300.0, 600.0, 3000.0, 3600.0, 10200.0, 21000.0]
    # a decision on a tick, from a time in seconds that is a float's width off, gets the next tick
    assert next_timed_decision(348.351941, 348.351941 + 1200 - 1e-10, 300, 10) == 348.351941 + 1500
