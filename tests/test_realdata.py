"""The pipeline on the real Google 2011 excerpt (a partial mirror: no task_usage).

Runs the chain raw_trace -> tasks -> funnel -> checkpoint_features in Dagster on a
subset of the real parts, and checks the counts against an independent reading of
the same files with pandas. Skips with the reason where the excerpt is absent."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import duckdb
import numpy as np
import pandas as pd
import pytest
from dagster_duckdb import DuckDBResource

from assets import prediction, realism, traces, warehouse
from assets.resources import PipelineSettings

PARTS = "job_events=0-19,task_events=0-1,machine_events=all"   # ~2.7 h of task events: fast, and real
JE = ["time", "missing_info", "job_id", "event_type", "user_name", "scheduling_class", "job_name",
      "logical_job_name"]
TE = ["time", "missing_info", "job_id", "task_index", "machine_id", "event_type", "user_name",
      "scheduling_class", "priority", "cpu_request", "memory_request", "disk_request", "different_machine"]
END = 2**63 - 1
USAGE_SAMPLE = "samples/task_usage_part-00000_first_10000_rows.csv"


def _read(root: Path, table: str, parts: range, names: list[str]) -> pd.DataFrame:
    files = [root / table / f"part-{p:05d}-of-00500.csv.gz" for p in parts]
    return pd.concat([pd.read_csv(f, header=None, names=names, usecols=range(len(names))) for f in files])


def _expected(root: Path, min_tasks: int = 100):
    """Selected jobs and their finished tasks, from the raw files with pandas."""
    je = _read(root, "job_events", range(20), JE)
    te = _read(root, "task_events", range(2), TE)
    prod = set(je.groupby("job_id").scheduling_class.max().loc[lambda c: c >= 1].index)
    n_tasks = te.groupby("job_id").task_index.nunique()
    selected = sorted(j for j, n in n_tasks.items() if n >= min_tasks and j in prod)
    t = te[te.job_id.isin(selected)]
    # a task's first life: its first SCHEDULE to the first FINISH after it (a re-run of a finished
    # index, SCHEDULEd again later, does not lengthen it); the final event is the last of that life
    key = ["job_id", "task_index"]
    first_sched = t[t.event_type == 1].groupby(key).time.min().rename("fs")
    t = t.join(first_sched, on=key)
    life_finish = t[(t.event_type == 4) & (t.time >= t.fs)].groupby(key).time.min().rename("ff")
    t = t.join(life_finish, on=key)
    terminal = t[t.event_type.between(2, 6) & (t.ff.isna() | (t.time <= t.ff))].sort_values(["time", "event_type"])
    final_event = terminal.groupby(key).event_type.last()
    df = pd.DataFrame({"fs": first_sched, "ff": life_finish, "fe": final_event}).dropna(subset=["fs", "fe"])
    done = df[(df.fe == 4) & (df.fs > 0) & (df.ff < END)]
    return selected, (done.ff - done.fs) / 1e6


def _resources(tmp: Path, root: Path, **settings) -> dict:
    """The nurd and duckdb resources of a run on the fixture's warehouse, with extra settings."""
    return {"nurd": PipelineSettings(data_dir=str(tmp), trace="google_2011", trace_url=str(root), trace_parts=PARTS,
                                 **settings),
            "duckdb": DuckDBResource(database=str(tmp / "warehouse.duckdb"))}


def _partition_range(resources: dict, first: str, last: str, instance=None) -> dg.ExecuteInProcessResult:
    """One run of the baseline_eval partitions from ``first`` to ``last`` (sorted keys), as a
    backfill of a range runs them."""
    return dg.materialize([prediction.baseline_eval], resources=resources,
                          instance=instance or dg.DagsterInstance.ephemeral(), selection=[prediction.baseline_eval],
                          tags={"dagster/asset_partition_range_start": first,
                                "dagster/asset_partition_range_end": last})


@pytest.fixture(scope="module")
def real_run(realdata, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("real")
    resources = {
        "nurd": PipelineSettings(data_dir=str(tmp), trace="google_2011", trace_url=str(realdata / "google_2011"),
                             trace_parts=PARTS, usage_sample=str(realdata / "google_2011" / USAGE_SAMPLE)),
        "duckdb": DuckDBResource(database=str(tmp / "warehouse.duckdb")),
    }
    result = dg.materialize(
        [traces.raw_trace, warehouse.staged_trace, warehouse.jobs, warehouse.tasks, warehouse.selection_funnel,
         warehouse.checkpoint_features, realism.trace_realism, *warehouse.checks],
        resources=resources, instance=dg.DagsterInstance.ephemeral())
    return result, tmp, realdata / "google_2011"


def test_partial_real_mirror_builds_jobs_and_tasks_green(real_run):
    result, tmp, root = real_run
    assert result.success
    raw = result.asset_materializations_for_node("raw_trace")[0].metadata
    assert raw["tables_missing"].value == "task_usage"
    assert "task_usage" in raw["tables"].value and "absent" in raw["tables"].value
    # machine_events (one part) is fetched: node ranking takes the machines' capacities from it
    machines = "machine_events/part-00000-of-00001.csv.gz"
    assert (tmp / "raw" / "google_2011" / machines).read_bytes() == (root / machines).read_bytes()
    feats = result.asset_materializations_for_node("checkpoint_features")[0].metadata
    assert "no task_usage" in feats["usage"].value
    checks = {e.check_name: e.passed for e in result.get_asset_check_evaluations()}
    assert all(checks.values()) and "not applicable" in str(
        [e.metadata for e in result.get_asset_check_evaluations() if e.check_name == "raw_task_usage_valid"])

    selected, latency = _expected(root)
    con = duckdb.connect(str(tmp / "warehouse.duckdb"), read_only=True)
    try:
        jobs = [j for (j,) in con.execute("SELECT job_id FROM jobs ORDER BY job_id").fetchall()]
        assert jobs == selected and len(jobs) >= 10
        got = con.execute("SELECT job_id, task_id, latency_s FROM tasks ORDER BY job_id, task_id").df()
        assert len(got) == len(latency) > 1000
        assert got.latency_s.to_numpy() == pytest.approx(latency.sort_index().to_numpy())
        outcomes = dict(con.execute("SELECT outcome, count(*) FROM task_outcomes GROUP BY 1").fetchall())
        assert "no_usage" not in outcomes           # the exclusion does not apply without task_usage
        funnel = con.execute("SELECT reason, tasks FROM selection_funnel ORDER BY step").fetchall()
        assert ("no_usage_not_applied", len(latency)) in funnel
        # the clock is built for every job; without usage the usage features are 0, EV/FL counted
        assert con.execute("SELECT count(DISTINCT job_id) FROM job_checkpoints").fetchone()[0] == len(
            set(got.job_id))
        usage_max, n_rows, ev_fl_max = con.execute(
            "SELECT max(greatest(mcu, cmu, tpc, cpi, mai)), count(*), max(greatest(ev, fl)) FROM checkpoint_features"
        ).fetchone()
        assert usage_max == 0 and n_rows > len(latency) and 0 <= ev_fl_max <= 1
    finally:
        con.close()


def test_every_method_runs_on_event_features_of_the_partial_mirror(real_run):
    """No task_usage: with feature_set auto the methods see the event features; NURD and
    three baseline partitions (a feature model, a time-only rule, Wrangler) run on the real jobs."""
    result, tmp, root = real_run
    resources = _resources(tmp, root)
    instance = dg.DagsterInstance.ephemeral()
    nurd = dg.materialize([prediction.nurd_eval], resources=resources, instance=instance,
                          selection=[prediction.nurd_eval])
    assert nurd.success
    # one run of three partitions (sorted: tobit, wait_for_tau, wrangler)
    rule = _partition_range(resources, "tobit", "wrangler", instance)
    assert rule.success
    mats = rule.asset_materializations_for_node("baseline_eval")
    assert sorted(m.partition for m in mats) == ["tobit", "wait_for_tau", "wrangler"]
    # every job with >= min_finished (20) finished tasks is replayed: the capped grid gives each a checkpoint
    _, latency = _expected(root)
    evaluable = int((latency.groupby(level=0).size() >= 20).sum())
    nurd_meta = nurd.asset_materializations_for_node("nurd_eval")[0].metadata
    assert mats[0].metadata["n_jobs"].value == nurd_meta["n_jobs"].value == evaluable >= 5
    # the run says which features the methods saw, and why
    for meta in (mats[0].metadata, nurd_meta):
        assert meta["features"].value.startswith("**events**") and "no task_usage" in meta["features"].value
        assert meta["settings"].value["feature_set_resolved"] == "events"
    con = duckdb.connect(str(tmp / "warehouse.duckdb"), read_only=True)
    try:
        methods = {m for (m,) in con.execute("SELECT DISTINCT method FROM job_metrics WHERE trace = 'google_2011'")
                   .fetchall()}
        assert {"nurd", "nurd_nc", "gbtr", "tobit", "wait_for_tau", "wrangler"} <= methods
        runs = con.execute("""SELECT DISTINCT json_extract_string(settings, '$.feature_set_resolved')
                              FROM evaluation_runs WHERE trace = 'google_2011'""").fetchall()
        assert runs == [("events",)]
    finally:
        con.close()


def test_the_survival_family_runs_on_real_jobs_under_the_operator_protocol(real_run):
    """The survival family on the partial mirror: survival_job and survival_history beside Spark's rule under
    NURD_PROTOCOL=operator (speculative copies, online tau_hat), in one Dagster run. The first jobs,
    with fewer than history_min_jobs earlier ended jobs, get no prior and the fallback threshold:
    counted in the cost curve."""
    result, tmp, root = real_run
    run = _partition_range(_resources(tmp, root, protocol="operator"), "spark_speculation", "survival_job")
    assert run.success
    mats = run.asset_materializations_for_node("baseline_eval")
    assert sorted(m.partition for m in mats) == ["spark_speculation", "survival_history", "survival_job"]
    _, latency = _expected(root)
    evaluable = int((latency.groupby(level=0).size() >= 20).sum())
    assert mats[0].metadata["n_jobs"].value == evaluable >= 5
    family = ("survival_history", "survival_job")
    with duckdb.connect(str(tmp / "warehouse.duckdb"), read_only=True) as con:
        jobs = dict(con.execute("""SELECT method, count(DISTINCT job_id) FROM operator_job_metrics
                                   WHERE trace = 'google_2011' GROUP BY 1""").fetchall())
        curve = con.execute("""SELECT method, cost_lambda, configured, n_jobs, n_jobs_with_history,
                                      jct_reduction, extra_machine_share FROM operator_cost_curve
                               WHERE trace = 'google_2011' ORDER BY 1, 2""").df()
    assert all(jobs[m] == evaluable for m in ("spark_speculation", *family))
    # copies were launched (they cost machine time), and a copy never delays a job
    assert (curve.jct_reduction >= 0).all() and (curve.extra_machine_share > 0).all()
    assert set(curve.method) == set(family)
    for _, c in curve.groupby("method"):
        assert c[c.configured].cost_lambda.tolist() == [1.0] and (c.n_jobs == evaluable).all()
    # both choose their threshold on the jobs ended before each job's first checkpoint: the first
    # jobs, with fewer than history_min_jobs (5) of them, keep the fallback threshold and are counted
    assert (0 < curve.n_jobs_with_history).all() and (curve.n_jobs_with_history < evaluable).all()


def test_usage_feature_set_on_the_partial_mirror_runs_only_time_only_rules(real_run):
    """feature_set=usage on a trace without task_usage: nothing to learn from, so the feature
    methods materialize green and empty with the reason, and the time-only rules still run."""
    result, tmp, root = real_run
    resources = _resources(tmp, root, feature_set="usage")
    instance = dg.DagsterInstance.ephemeral()
    rule = _partition_range(resources, "tobit", "wait_for_tau", instance)
    assert rule.success
    usage = rule.asset_materializations_for_node("baseline_eval")[0].metadata["usage"].value
    assert "no task_usage" in usage and "Run here: wait_for_tau" in usage and "Skipped: tobit." in usage
    model = dg.materialize([prediction.baseline_eval], partition_key="hbos", resources=resources,
                           instance=instance, selection=[prediction.baseline_eval])
    assert model.success   # green, empty, with the reason
    meta = model.asset_materializations_for_node("baseline_eval")[0].metadata
    assert meta["n_jobs"].value == 0 and "no task_usage" in meta["skipped"].value
    assert meta["features"].value.startswith("**usage**")


def _ks_by_hand(x: np.ndarray, y: np.ndarray) -> float:
    """sup |F_x - F_y| over every observed point (the two ECDFs are steps there)."""
    pts = np.concatenate([x, y])
    fx = np.searchsorted(np.sort(x), pts, side="right") / len(x)
    fy = np.searchsorted(np.sort(y), pts, side="right") / len(y)
    return float(np.max(np.abs(fx - fy)))


def test_trace_realism_real_excerpt_vs_embedded(real_run):
    result, tmp, root = real_run
    first = result.asset_materializations_for_node("trace_realism")[0].metadata
    assert "no statistics of google_2011" not in first["comparison"].value   # it is the real side itself
    resources = {
        "nurd": PipelineSettings(data_dir=str(tmp), trace="synthetic", synthetic_jobs=12,
                                 realism_against="google_2011"),
        "duckdb": DuckDBResource(database=str(tmp / "warehouse.duckdb")),
    }
    synth = dg.materialize([traces.raw_trace, warehouse.staged_trace, warehouse.jobs, warehouse.tasks,
                            realism.trace_realism], resources=resources, instance=dg.DagsterInstance.ephemeral())
    assert synth.success
    meta = synth.asset_materializations_for_node("trace_realism")[0].metadata
    assert meta["against"].value == "google_2011" and meta["statistics"].value == 16
    assert meta["cdfs"].value.startswith("![CDFs](data:image/png;base64,")
    report = Path(meta["report"].value)
    assert report.exists() and "job_p90_latency_s" in report.read_text()

    from stragglers.warehouse.realism import compare
    con = duckdb.connect(str(tmp / "warehouse.duckdb"), read_only=True)
    try:
        table = compare(con, "synthetic", "google_2011").set_index("statistic")
        # independent: the real p90s from the raw files (pandas), the embedded ones from the truth of `tasks`
        selected, latency = _expected(root)
        real = latency.groupby(level=0).agg(["count", lambda v: np.quantile(v, 0.9)])
        real_p90 = real[real["count"] >= 100].iloc[:, 1].to_numpy()
        emb = con.execute("SELECT quantile_cont(latency_s, 0.9) FROM tasks WHERE trace = 'synthetic' "
                          "GROUP BY job_id HAVING count(*) >= 100").fetchnumpy()
        emb_p90 = next(iter(emb.values()))
        assert table.loc["job_p90_latency_s", "distance"] == pytest.approx(_ks_by_hand(emb_p90, real_p90))
        # usage of the real side comes from the sample: one mean per job (593 jobs)
        sample = pd.read_csv(root / USAGE_SAMPLE)
        assert table.loc["usage_cpu_rate", "n google_2011"] == sample.dropna(subset=["cpu_rate"]).job_id.nunique()
        assert table.loc["task_end_state", "measure"] == "TV"
        assert 0 <= table.distance.min() and table.distance.max() <= 1
    finally:
        con.close()


@pytest.mark.parametrize("missing", [1, 0], ids=["gap_in_the_middle", "mirror_starts_later"])
def test_a_gap_between_task_events_parts_is_counted_not_an_error(realdata, tmp_path, missing):
    """A real mirror of task_events parts 0-3 with one part absent (a gap, or a mirror that starts
    after part 0): the selection, node ranking and failure prediction run green; the tasks whose
    lifecycle the missing part cuts are counted by reason in task_lifecycle and the funnel."""
    from assets import failures, nodes

    src = realdata / "google_2011"
    mirror = tmp_path / "mirror"     # symbolic links: the real files, never copied
    (mirror / "task_events").mkdir(parents=True)
    (mirror / "job_events").mkdir()
    for p in range(4):
        if p != missing:
            name = f"part-{p:05d}-of-00500.csv.gz"
            (mirror / "task_events" / name).symlink_to(src / "task_events" / name)
    for p in range(20):
        name = f"part-{p:05d}-of-00500.csv.gz"
        (mirror / "job_events" / name).symlink_to(src / "job_events" / name)
    (mirror / "machine_events").symlink_to(src / "machine_events", target_is_directory=True)
    data = tmp_path / "data"
    resources = {"nurd": PipelineSettings(data_dir=str(data), trace="google_2011", trace_url=str(mirror),
                                      trace_parts="all"),
                 "duckdb": DuckDBResource(database=str(data / "warehouse.duckdb"))}
    result = dg.materialize(
        [traces.raw_trace, warehouse.staged_trace, warehouse.jobs, warehouse.tasks, warehouse.selection_funnel,
         warehouse.checkpoint_features, nodes.task_attempts, nodes.node_ranking, failures.failure_inputs,
         failures.failure_prediction, *warehouse.checks],
        resources=resources, instance=dg.DagsterInstance.ephemeral())
    assert result.success   # the event features too: every timed task has its rows
    said = result.asset_materializations_for_node("staged_trace")[0].metadata["parts"].value
    assert "task_events: 3 parts, 1 part numbers missing below the highest present" in said, said
    with duckdb.connect(str(data / "warehouse.duckdb"), read_only=True) as con:
        states = dict(con.execute("SELECT end_state, count(*) FROM task_lifecycle GROUP BY 1").fetchall())
        funnel = {r: n for r, n in con.execute("SELECT reason, tasks FROM selection_funnel").fetchall()}
        # every timed task's life lies in the mirror: no missing part between its SCHEDULE and FINISH
        parts = [p for (p,) in con.execute("SELECT part_no FROM stg_task_event_parts ORDER BY 1").fetchall()]
        n_tasks = con.execute("SELECT count(*) FROM tasks").fetchone()[0]
        rows = con.execute("SELECT (SELECT count(*) FROM event_features), (SELECT count(*) FROM checkpoint_features)"
                           ).fetchone()
    assert rows[0] == rows[1] > 1000   # one event row per checkpoint row
    assert parts == [p for p in range(4) if p != missing]
    assert "time_backwards" not in states
    cut = states.get("lifecycle_spans_gap", 0) + states.get("schedule_not_in_mirror", 0)
    if missing == 1:
        assert states["lifecycle_spans_gap"] > 0     # long tasks across the missing part
    else:
        assert "lifecycle_spans_gap" not in states   # no gap inside the mirror
        assert "scheduled_before_window" not in states   # time-0 SCHEDULEs are in part 0, absent here
    assert cut > 0 and n_tasks > 1000
    assert funnel.get("lifecycle_spans_gap", 0) + funnel.get("schedule_not_in_mirror", 0) > 0
    assert "task_event_parts_missing" in funnel     # the gap itself, said in the funnel too


def test_reexecution_pairs_of_the_real_excerpt_match_an_independent_reading(real_run):
    """Tasks that FINISHed, were SCHEDULEd again and FINISHed again on another machine, read from the
    raw parts with pandas, are exactly the pairs of sql/reexecution_pairs.sql (same latencies)."""
    result, tmp, root = real_run
    run = dg.materialize([realism.reexecutions, *realism.checks], resources=_resources(tmp, root),
                         instance=dg.DagsterInstance.ephemeral())
    assert run.success
    assert [e.passed for e in run.get_asset_check_evaluations()] == [True]
    te = _read(root, "task_events", range(2), TE)
    te = te[te.event_type.isin([1, 4]) & (te.time < END)]
    key = ["job_id", "task_index"]
    fs = te[te.event_type == 1].groupby(key).time.min().rename("fs")
    t = te.join(fs, on=key)
    ff = t[(t.event_type == 4) & (t.time >= t.fs)].groupby(key).time.min().rename("ff")
    t = t.join(ff, on=key)
    ss = t[(t.event_type == 1) & (t.time > t.ff)].groupby(key).time.min().rename("ss")
    t = t.join(ss, on=key)
    sf = t[(t.event_type == 4) & (t.time >= t.ss)].sort_values("time").groupby(key).first()
    m1 = t[(t.event_type == 4) & (t.time == t.ff)].groupby(key).machine_id.first()
    lives = pd.DataFrame({"first": (sf.ff - sf.fs) / 1e6, "second": (sf.time - sf.ss) / 1e6,
                          "same": sf.machine_id == m1.reindex(sf.index)})
    lives = lives[sf.fs > 0]
    con = duckdb.connect(str(tmp / "warehouse.duckdb"), read_only=True)
    try:
        got = con.execute("SELECT job_id, task_id, first_latency_s, second_latency_s, status FROM reexecution_pairs "
                          "WHERE trace = 'google_2011'").df().set_index(["job_id", "task_id"])
        summary = con.execute("SELECT source, n_pairs FROM reexecution_summary").fetchall()
    finally:
        con.close()
    timed = got[got.status.isin(["pair", "same_machine", "job_too_few_finished"])]
    want = lives.loc[timed.index]
    assert len(timed) > 100
    assert timed.first_latency_s.to_numpy() == pytest.approx(want["first"].to_numpy())
    assert timed.second_latency_s.to_numpy() == pytest.approx(want["second"].to_numpy())
    assert ((timed.status == "same_machine") == want["same"]).all()
    # every task pandas finds twice with both lives timed is a row (none dropped silently)
    both = lives.dropna()
    assert set(both.index) <= set(got.index)
    pairs = int((got.status == "pair").sum())
    assert ("the trace's re-executions", pairs) in summary and ("copy model, copy_keeps=0", pairs) in summary
