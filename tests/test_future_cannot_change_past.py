"""The future cannot change the past: under the operator's protocol, every decision a method makes
before a time T is the same, bit for bit, whatever happens after T.

A job is replayed twice, from two warehouses built from raw events: as recorded, and with its
future rewritten after an absolute trace time T (its task and job events after T happen three times
as late after T, so the tasks still running at T finish three times later; their usage windows
after T are stretched the same way and their usage values halved). The clock, the features and the
thresholds are rebuilt from the rewritten events by the pipeline's own SQL. A decision at task
time t takes each task as of its own first SCHEDULE + min(t, latency): it lies before T when the
latest of these, D(t), is <= T. For every such decision, and every method of the registry (but the
two that are given the labels, oracle and wrangler) and every reference rule: the decision times,
tau_hat(t), the features, the fallbacks and the flags (each flag launches a speculative copy: the
copies launched are the flags) must be identical. On the legacy grid (cut from the true tau) the
same comparison must find a difference: the test can fail.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path

import duckdb
import numpy as np
import pytest

from stragglers.prediction.evaluation import load_jobs, method_factory
from stragglers.prediction.history import AttachHistory, CostAwareSelection, ThresholdGrid
from stragglers.prediction.methods import METHODS
from stragglers.prediction.protocol import OPERATOR, adapt_job
from stragglers.prediction.simulate import JobData, replay_job
from stragglers.settings import EvaluationSettings, SelectionSettings
from stragglers.warehouse.build import build_features, build_selection
from stragglers.warehouse.staging import stage_google

#: given the true labels by design (the upper bound and the paper's Wrangler): they read the future
LABEL_READERS = {name for name, cls in METHODS.items() if cls.tags.reads_labels}
METHODS_UNDER_TEST = sorted(set(METHODS) - LABEL_READERS)
STRETCH = 3          # events after T happen this many times as late after T
FOREVER = 9223372036854775807   # the trace's "no time" sentinel


def operator(**kw) -> EvaluationSettings:
    return EvaluationSettings(workers=1, **(dict(OPERATOR) | kw))


def rewrite_future(con: duckdb.DuckDBPyConnection, job_id: int, t_us: int) -> None:
    """Replace the staged views by tables where job ``job_id``'s events and usage after ``t_us``
    happen STRETCH times as late after it (usage values halved): the raw level, before any build."""
    def later(col: str) -> str:
        return (f"CASE WHEN job_id = {job_id} AND {col} > {t_us} AND {col} < {FOREVER} "
                f"THEN {t_us} + {STRETCH} * ({col} - {t_us}) ELSE {col} END AS {col}")

    for view in ("stg_task_events", "stg_job_events"):
        con.execute(f"CREATE TABLE fut_{view} AS SELECT * REPLACE ({later('time')}) FROM {view}")
        con.execute(f"CREATE OR REPLACE VIEW {view} AS SELECT * FROM fut_{view}")
    halved = ", ".join(f"CASE WHEN job_id = {job_id} AND end_time > {t_us} THEN {c} / 2 ELSE {c} END AS {c}"
                       for c in ("cpu_rate", "canonical_memory", "assigned_memory", "disk_io_time"))
    con.execute(f"""CREATE TABLE fut_stg_task_usage AS
                    SELECT * REPLACE ({later('start_time')}, {later('end_time')}, {halved}) FROM stg_task_usage""")
    con.execute("CREATE OR REPLACE VIEW stg_task_usage AS SELECT * FROM fut_stg_task_usage")


def warehouse(raw: Path, settings: SelectionSettings, rewrite: tuple[int, int] | None = None
              ) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    stage_google(con, raw, settings)
    if rewrite is not None:
        rewrite_future(con, *rewrite)
    build_selection(con, settings)
    build_features(con, settings)
    return con


def decision_instants(con, trace: str, job_id: int, times: np.ndarray) -> np.ndarray:
    """D(t) per decision time t: the latest absolute time a decision at t looks at (us)."""
    s, y = con.execute("SELECT first_schedule_us, latency_us FROM tasks WHERE trace = ? AND job_id = ?",
                       [trace, job_id]).fetchnumpy().values()
    return np.array([int((s + np.minimum(round(t * 1e6), y)).max()) for t in times])


@dataclass
class Pair:
    trace: str
    job_id: int
    cut_us: int                      # T
    recorded: duckdb.DuckDBPyConnection
    rewritten: duckdb.DuckDBPyConnection
    jobs: dict                       # settings label -> (recorded JobData, rewritten JobData)


def _job(con, trace: str, job_id: int, s: EvaluationSettings) -> JobData:
    jobs, _ = load_jobs(con, trace, s)
    return adapt_job(next(j for j in jobs if j.job_id == job_id), s)


def make_pair(raw: Path, settings: SelectionSettings) -> Pair:
    """The smallest evaluable job with decisions on both sides of T = D(its middle decision)."""
    recorded = warehouse(raw, settings)
    trace = settings.trace
    online = operator()
    jobs, _ = load_jobs(recorded, trace, online)
    candidates = sorted((len(j.task_ids) * len(j.checkpoints), j.job_id) for j in jobs
                        if len(j.checkpoints) >= 6)
    assert candidates, "no job with 6 decisions or more"
    job_id = candidates[0][1]
    job = next(j for j in jobs if j.job_id == job_id)
    instants = decision_instants(recorded, trace, job_id, job.checkpoints)
    cut = int(instants[len(instants) // 2])
    rewritten = warehouse(raw, settings, (job_id, cut))
    pair = Pair(trace, job_id, cut, recorded, rewritten, {})
    for label, s in (("online", online), ("legacy", operator(decision_clock="legacy_grid"))):
        pair.jobs[label] = (_job(recorded, trace, job_id, s), _job(rewritten, trace, job_id, s))
    return pair


def decisions_before(pair: Pair, label: str) -> int:
    """How many decisions of the recorded replay lie before T (D(t) <= T)."""
    a, _ = pair.jobs[label]
    return int((decision_instants(pair.recorded, pair.trace, pair.job_id, a.checkpoints) <= pair.cut_us).sum())


#: cheaper than the defaults, the same code path (CI time): Tobit's optimizer iterations
CHEAP = {"tobit": {"max_iter": 100}}


def replay(pair: Pair, which: int, label: str, name: str, n: int):
    """``name`` replayed on the first ``n`` decisions (those before T) of the pair's job: the replay
    is sequential and a method is handed X[k] and tau_hat(t_k) at decision k only, so what comes
    after the n-th decision cannot act on the first n; cutting it halves the test's time."""
    con = pair.recorded if which == 0 else pair.rewritten
    job = pair.jobs[label][which]
    job = replace(job, checkpoints=job.checkpoints[:n], X=job.X[:n], thresholds=job.thresholds[:n],
                  steps=None if job.steps is None else job.steps[:n])
    s = operator() if label == "online" else operator(decision_clock="legacy_grid")
    factory = partial(method_factory(name, s), **CHEAP.get(name, {}))
    if METHODS[name].tags.learns_from_earlier_jobs:
        # every threshold of the cost-aware choice, each job with the history of the jobs before it
        sel = CostAwareSelection.from_warehouse(con, pair.trace, job.feature_names, [job.job_id],
                                                {name: factory}, s.cost_lambda, s.history_min_jobs)
        job = AttachHistory(sel.histories)(job)
        factory = partial(ThresholdGrid, factory)
    return replay_job(job, factory(), seed=0)


def differences(pair: Pair, label: str, name: str | None) -> list[str]:
    """What differs between the two replays in the decisions before T (empty: none)."""
    a, b = pair.jobs[label]
    n = decisions_before(pair, label)
    out = []
    if not np.array_equal(a.checkpoints[:n], b.checkpoints[:n]):
        out.append(f"decision times: {a.checkpoints[:n]} vs {b.checkpoints[:n]}")
        return out
    if not np.array_equal(a.thresholds[:n], b.thresholds[:n]):
        out.append(f"tau_hat: {a.thresholds[:n]} vs {b.thresholds[:n]}")
    if not np.array_equal(a.task_ids, b.task_ids) or not np.array_equal(a.X[:n], b.X[:n], equal_nan=True):
        out.append("features")
    if a.steps is not None and not np.array_equal(a.steps[:n], b.steps[:n]):
        out.append("steps")
    if name is None:
        return out
    last = a.checkpoints[n - 1]
    ra, rb = replay(pair, 0, label, name, n), replay(pair, 1, label, name, n)
    fa = [(k, t, r) for k, t, r in ra.fallbacks if t <= last]
    fb = [(k, t, r) for k, t, r in rb.fallbacks if t <= last]
    if fa != fb:
        out.append(f"fallbacks: {fa} vs {fb}")
    for va, vb in zip(ra.variants, rb.variants):
        before_a = np.where(va.flagged_at <= last, va.flagged_at, np.nan)
        before_b = np.where(vb.flagged_at <= last, vb.flagged_at, np.nan)
        if not np.array_equal(before_a, before_b, equal_nan=True):
            out.append(f"{va.method}: flags before T differ")
    return out


def check_pair(pair: Pair) -> None:
    """The pair can tell: decisions on both sides of T, and the rewrite changed the job."""
    a, b = pair.jobs["online"]
    n = decisions_before(pair, "online")
    assert 2 <= n < len(a.checkpoints), n
    assert np.array_equal(a.task_ids, b.task_ids)
    assert (b.latency > a.latency).any() and b.tau != a.tau     # tasks ran on after T, longer


def fetched_pair(tmp: Path, settings: SelectionSettings, **fetch) -> Pair:
    """The pair of ``settings.trace`` fetched into ``tmp`` (``fetch``: fetch_trace's options), checked
    able to tell."""
    from stragglers.traces.fetch import fetch_trace

    fetch_trace(settings.trace, tmp, log=lambda _: None, **fetch)
    raw = next(p for p in tmp.rglob("task_events")).parent
    pair = make_pair(raw, settings)
    check_pair(pair)
    return pair


# ---------------------------------------------------------------- the embedded trace

@pytest.fixture(scope="module")
def embedded(tmp_path_factory) -> Pair:
    from stragglers.traces.fetch import SyntheticScale

    return fetched_pair(tmp_path_factory.mktemp("future"), SelectionSettings(),
                        scale=SyntheticScale(n_jobs=12, n_parts=4))


@pytest.mark.parametrize("name", METHODS_UNDER_TEST)
def test_the_future_cannot_change_the_past_embedded(embedded, name):
    assert differences(embedded, "online", name) == []


def test_the_legacy_grid_lets_the_future_change_the_past_embedded(embedded):
    # its step is cut from the true tau: a longer future moves every decision
    assert differences(embedded, "legacy", None)


# ---------------------------------------------------------------- the real excerpt

@pytest.fixture(scope="module")
def real(realdata, tmp_path_factory) -> Pair:
    """The real excerpt's first ~2.7 h of task events (test_realdata.py's subset: no task_usage, so
    the event features), its smallest evaluable job."""
    return fetched_pair(tmp_path_factory.mktemp("future_real"), SelectionSettings(trace="google_2011"),
                        url=str(realdata / "google_2011"), parts="job_events=0-19,task_events=0-1,machine_events=all")


@pytest.mark.parametrize("name", METHODS_UNDER_TEST)
def test_the_future_cannot_change_the_past_real(real, name):
    assert differences(real, "online", name) == []


def test_the_legacy_grid_lets_the_future_change_the_past_real(real):
    assert differences(real, "legacy", None)


def test_an_online_methods_step_points_at_the_clocks_next_timed_decision(embedded):
    """The step an online method is given (stragglers/prediction/clock.py, in Python) lands on a
    decision of sql/operator_checkpoints.sql, or after the job's last task ended."""
    a, _ = embedded.jobs["online"]
    assert (a.steps > 0).all()
    for t in a.checkpoints + a.steps:
        assert np.isclose(a.checkpoints, t, rtol=0, atol=1e-6).any() or t >= a.latency.max(), t


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
    # every decision of the clock has a feature row for every task of its job
    assert con.execute("""SELECT count(*) FROM operator_checkpoints c JOIN (SELECT job_id, count(*) AS n FROM tasks
                          GROUP BY job_id) t USING (job_id)""").fetchone()[0] > 0
    assert con.execute("""SELECT sum(t.n) FROM operator_checkpoints c JOIN (SELECT job_id, count(*) AS n FROM tasks
                          GROUP BY job_id) t USING (job_id)""").fetchone()[0] == \
        con.execute("SELECT count(*) FROM operator_checkpoint_features").fetchone()[0]


def test_the_timed_decisions_double_their_interval_after_every_b_of_them():
    from stragglers.prediction.clock import next_timed_decision

    # B = 10, I = 300 s from t0 = 0: 300 .. 3000 every 300 s, then 3600 .. 9000 every 600 s, then 1200 s
    got = [next_timed_decision(0.0, t, 300, 10) for t in (-5.0, 0.0, 299.9, 300.0, 2999.0, 3000.0, 9000.0, 20999.0)]
    assert got == [300.0, 300.0, 300.0, 600.0, 3000.0, 3600.0, 10200.0, 21000.0]
    # a decision on a tick, from a time in seconds that is a float's width off, gets the next tick
    assert next_timed_decision(348.351941, 348.351941 + 1200 - 1e-10, 300, 10) == 348.351941 + 1500
