"""Re-execution pairs (sql/reexecution_pairs.sql) and their statistics (stragglers/prediction/copies/reexecution.py)
on a hand-made trace whose re-executions, and so whose statistics, are known."""

from __future__ import annotations

import duckdb
import numpy as np
import pandas as pd
import pytest

from stragglers.prediction.copies import reexecution
from stragglers.prediction.engine.draws import copy_latencies
from stragglers.settings import SelectionSettings
from stragglers.warehouse.build import build_selection
from stragglers.warehouse.sql_files import render
from stragglers.warehouse.staging import stage_google
from tests.minitrace import EVICT, FINISH, KILL, S, SCHEDULE, SUBMIT, T0, MiniTrace

A, B, C = 7001, 7002, 7003
START = T0 + 100 * S
# second lives: job -> task -> (latency s, on another machine?); first lives: A 100+i s, C 200+2i s
SECOND = {A: {29: 130, 28: 100, 0: 128, 1: 101}, C: {24: 300, 5: 210}}


def first_latency(job: int, i: int) -> int:
    return 100 + i if job == A else 200 + 2 * i


def rerun(m: MiniTrace, job: int, i: int, latency: int, machine: int, after: int = 50) -> int:
    """SUBMIT and SCHEDULE ``after`` s after the first life's FINISH, FINISH ``latency`` s later."""
    t = START + first_latency(job, i) * S + after * S
    m.event(job, i, t - S, SUBMIT)
    m.event(job, i, t, SCHEDULE, machine)
    m.event(job, i, t + latency * S, FINISH, machine)
    return t


def build_trace() -> MiniTrace:
    m = MiniTrace()
    for job, n in ((A, 30), (C, 25), (B, 5)):
        m.job(job, 1, T0 + 1)
        for i in range(n):
            m.run(job, i, START, START + first_latency(job, i) * S, machine=1000 + i, usage=False)
    for job, lives in SECOND.items():
        for i, y in lives.items():
            rerun(m, job, i, y, machine=2000 + i)
    rerun(m, A, 2, 105, machine=1000 + 2)                          # same machine: not a pair
    t = rerun(m, A, 3, 10, machine=2003)                           # second life killed: unfinished
    m.task_events[-1][5] = KILL
    # second life evicted, rescheduled elsewhere, finished: the life runs from its SCHEDULE to the FINISH
    t = START + first_latency(A, 4) * S + 50 * S
    m.event(A, 4, t, SCHEDULE, 3004)
    m.event(A, 4, t + 20 * S, EVICT, 3004)
    m.event(A, 4, t + 30 * S, SCHEDULE, 3005)
    m.event(A, 4, t + 110 * S, FINISH, 3005)
    rerun(m, B, 1, 100, machine=2001)                              # job with 5 timed first lives: no median
    # first life scheduled before the window: not timed
    m.event(A, 30, 0, SCHEDULE, 1030)
    m.event(A, 30, START + 100 * S, FINISH, 1030)
    m.event(A, 30, START + 200 * S, SCHEDULE, 2030)
    m.event(A, 30, START + 300 * S, FINISH, 2030)
    return m


@pytest.fixture(scope="module")
def warehouse(mini_warehouse):
    settings = SelectionSettings()
    return mini_warehouse(build_trace(), settings, until="selection"), settings


def expected_pairs() -> pd.DataFrame:
    rows = [(job, i, first_latency(job, i), y) for job, lives in SECOND.items() for i, y in lives.items()]
    rows.append((A, 4, first_latency(A, 4), 110))
    df = pd.DataFrame(rows, columns=["job_id", "task_id", "first_latency_s", "second_latency_s"])
    firsts = {A: np.array([first_latency(A, i) for i in range(30)]),
              C: np.array([first_latency(C, i) for i in range(25)])}
    df["job_median_s"] = df.job_id.map(lambda j: np.median(firsts[j]))
    df["job_tau_s"] = df.job_id.map(lambda j: np.quantile(firsts[j], 0.9))
    return df.sort_values(["job_id", "task_id"]).reset_index(drop=True)


def test_pairs_are_the_reexecutions_on_other_machines_and_the_rest_is_counted(warehouse):
    con, settings = warehouse
    table = reexecution.build_pairs(con, settings, min_finished=20)
    pairs = table[table.status == "pair"].reset_index(drop=True)
    want = expected_pairs()
    assert pairs[["job_id", "task_id"]].values.tolist() == want[["job_id", "task_id"]].values.tolist()
    for col in ("first_latency_s", "second_latency_s", "job_median_s", "job_tau_s"):
        assert np.allclose(pairs[col], want[col]), col
    assert (pairs.first_machine != pairs.second_machine).all()
    assert pairs.set_index("task_id").loc[4].second_machine == 3005     # the machine its FINISH ran on
    status = {(r.job_id, r.task_id): r.status for r in table.itertuples()}
    assert status[(A, 2)] == "same_machine"          # a task re-run on the same machine is not a pair
    assert status[(A, 3)] == "second_life_unfinished"
    assert status[(A, 30)] == "first_life_not_timed"
    assert status[(B, 1)] == "job_too_few_finished"
    counts = reexecution.left_out_counts(table)
    assert counts == {"pair": 7, "first_life_not_timed": 1, "second_life_unfinished": 1, "second_life_spans_gap": 0,
                      "zero_latency": 0, "same_machine": 1, "job_too_few_finished": 1}


def test_the_blocking_check_passes_the_table_and_names_a_pair_on_one_machine(warehouse):
    from stragglers.warehouse.validation import validate_table
    con, settings = warehouse
    table = reexecution.build_pairs(con, settings, min_finished=20)
    assert validate_table("reexecution_pairs", table, params={"min_finished": 20}).success
    bad = table.copy()
    bad.loc[(bad.job_id == A) & (bad.task_id == 29), "second_machine"] = 1029     # the first life's machine
    outcome = validate_table("reexecution_pairs", bad, params={"min_finished": 20})
    assert not outcome.success and "other_machine" in outcome.explain() and "29" in outcome.explain()


def test_statistics_are_the_known_answer(warehouse):
    want = expected_pairs()
    st = reexecution.statistics(want, n_boot=200, seed=3)
    x = np.log(want.first_latency_s / want.job_median_s)
    y = np.log(want.second_latency_s / want.job_median_s)
    assert st["n_pairs"] == 7 and st["n_jobs"] == 2
    assert st["corr"] == pytest.approx(np.corrcoef(x, y)[0, 1])
    # first-life stragglers: A 28, A 29, C 24; of them A 29 and C 24 straggle again; second-life
    # stragglers: A 29, A 0, C 24
    assert st["n_first_stragglers"] == 3
    assert st["p_second_given_first"] == pytest.approx(2 / 3)
    assert st["base_rate"] == pytest.approx(3 / 7)
    for name in reexecution.STATISTICS:
        assert st[f"{name}_lo"] <= st[name] + 1e-12 and st[name] <= st[f"{name}_hi"] + 1e-12
    # one job only: every resample is that job, the interval is the point
    one = reexecution.statistics(want[want.job_id == C], n_boot=50, seed=0)
    assert one["p_second_given_first_lo"] == one["p_second_given_first_hi"] == 1.0


def test_copy_model_replay_is_a_fresh_draw_and_copy_keeps_one_is_the_original(warehouse):
    want = expected_pairs()
    firsts = {A: np.array([first_latency(A, i) for i in range(30)], float),
              C: np.array([first_latency(C, i) for i in range(25)], float)}
    fresh = reexecution.replay_copy_model(want, firsts, trace="t", seeds=range(200))
    # the copies are draws from the job's first lives, whatever the first life was
    for job, g in fresh.groupby("job_id"):
        assert set(g.second_latency_s) <= set(firsts[job])
    st = reexecution.statistics(fresh, n_boot=0)
    assert abs(st["corr"]) < 0.1
    assert st["base_rate"] == pytest.approx(0.1, abs=0.03)   # 3 of 30 and 3 of 25 lives are >= tau
    same = reexecution.statistics(reexecution.replay_copy_model(want, firsts, trace="t", seeds=[0], keeps=1.0),
                                  n_boot=0)
    assert same["corr"] == pytest.approx(1.0) and same["p_second_given_first"] == 1.0
    # copy_keeps = 0 is today's draw, bit for bit
    d = np.array([3.0, 5.0])
    assert copy_latencies(np.array([1.0, 2.0]), d, 0.0) is d
    assert copy_latencies(np.array([4.0, 1.0]), np.array([1.0, 4.0]), 0.5) == pytest.approx([2.0, 2.0])


def test_cause_aware_copies_redo_the_work_of_a_skewed_task_and_draw_otherwise():
    from stragglers.prediction.copies.completion_tables import speculation_table
    from stragglers.traces.synth.model import TYPICAL_SLOWDOWN
    truth = pd.DataFrame({
        "job_id": [1, 1, 1], "task_index": [0, 1, 2], "end_state": ["FINISH"] * 3,
        "latency_us": [130e6, 40e6, 10e6], "final_schedule_us": [10e6, 0, 0], "final_finish_us": [130e6, 40e6, 10e6],
        "slow_start_s": [20.0, 0.0, 0.0], "machine_slowdown": [2.0, 2.0, 1.0],
        "cause": ["data_skew", "limited_processor", "none"]})
    copies = reexecution.cause_aware_copy_latency(truth)
    # data skew: (120 s run - 20 s slow start) / slowdown 2 = 50 s of work, on a typical machine
    assert copies.copy_latency_s.iloc[0] == pytest.approx(50 * TYPICAL_SLOWDOWN)
    assert copies.copy_latency_s.iloc[1:].isna().all()          # a slow machine's copy draws as today
    # the simulator takes a task's fixed copy latency where given: flagged at 5 s with a 5 s copy, the
    # 100 s task ends at 10 s in every seed; without it the copy is a draw from the job's latencies
    tasks = pd.DataFrame({"trace": "t", "job_id": 1, "task_id": [0, 1, 2, 3], "latency_s": [100.0, 10, 10, 10]})
    preds = pd.DataFrame({"trace": "t", "method": "m", "job_id": 1, "task_id": [0], "flagged_at_s": [5.0]})
    fixed = speculation_table(tasks.assign(copy_latency_s=[5.0, np.nan, np.nan, np.nan]), preds, machines=[],
                              seeds=range(5))
    assert fixed.reduction_mean.iloc[0] == pytest.approx(0.9) and fixed.reduction_std_over_seeds.iloc[0] == 0
    drawn = speculation_table(tasks, preds, machines=[], seeds=range(5))
    assert drawn.reduction_std_over_seeds.iloc[0] > 0             # draws of 100 s or 10 s, seed by seed
    # copy_keeps = 1: a copy as slow as its original never helps
    same = speculation_table(tasks, preds, machines=[], seeds=range(5), copy_keeps=1.0)
    assert same.reduction_mean.iloc[0] == 0


def _truth(causes, severity, machine_slowdown, noise=None, *, median_run_s=100.0, sigma=1e-9):
    """A generated job's truth by hand: each finished task's work = the job's median run x its noise x its
    cause's factor (model.latency_factor), run on its machine (no slow start)."""
    from stragglers.traces.synth.model import latency_factor
    n = len(causes)
    noise = np.ones(n) if noise is None else np.asarray(noise, dtype=float)
    work = median_run_s * noise * latency_factor(causes, severity)
    latency_us = work * np.asarray(machine_slowdown, dtype=float) * 1e6
    tasks = pd.DataFrame({"job_id": 9, "task_index": np.arange(n), "end_state": "FINISH", "latency_us": latency_us,
                          "final_schedule_us": 0.0, "final_finish_us": latency_us, "slow_start_s": 0.0,
                          "machine_slowdown": machine_slowdown, "cause": causes, "severity": severity})
    jobs = pd.DataFrame({"job_id": [9], "median_run_s": [median_run_s], "noise_sigma": [sigma]})
    return tasks, jobs


def test_a_data_skew_straggler_stays_slow_elsewhere_and_a_slow_machine_s_does_not():
    """Three first-life stragglers of 400 s in a job of 100 s tasks: data skew (4x the work), limited
    processor (4x on a contended machine) and a task on a machine of slowdown 4. Run again elsewhere,
    only the data-skew task does its 400 s of work again (times the new machine's slowdown >= 1)."""
    n = 25
    causes = ["data_skew", "limited_processor", "none"] + ["none"] * (n - 3)
    severity = np.r_[3.0, 3.0, np.zeros(n - 2)]
    slowdown = np.r_[1.0, 1.0, 4.0, np.ones(n - 3)]
    tasks, jobs = _truth(causes, severity, slowdown)
    pairs = reexecution.generator_pairs(tasks, jobs, min_finished=20, quantile=0.9, seed=1).set_index("task_id")
    assert np.allclose(pairs.first_latency_s.loc[[0, 1, 2]], 400) and np.allclose(pairs.first_latency_s.loc[3:], 100)
    tau = pairs.job_tau_s.iloc[0]
    assert tau == pytest.approx(np.quantile([400.0] * 3 + [100.0] * (n - 3), 0.9))
    assert (pairs.first_latency_s.loc[[0, 1, 2]] >= tau).all()
    assert pairs.second_latency_s.loc[0] >= 400 >= tau                     # the skewed work goes along
    assert (pairs.second_latency_s.loc[[1, 2]] < 2 * 100).all()            # the machine stays behind
    assert (pairs.second_latency_s.loc[[1, 2]] < tau).all()
    assert (pairs.second_latency_s >= 100 * np.r_[4.0, np.ones(n - 1)] - 1e-9).all()   # slowdowns are >= 1
    assert pairs.job_median_s.iloc[0] == pytest.approx(100)
    # a job with fewer than min_finished finished tasks has no pairs
    assert reexecution.generator_pairs(tasks.head(10), jobs, min_finished=20, quantile=0.9).empty


def test_the_noise_goes_along_as_far_as_its_correlation_between_lives_says():
    """Tasks with no cause on equal machines differ only by their lognormal noise: with the noise
    correlation 1 between lives the two relative log-latencies move together, with 0 they do not, and
    a correlation outside [0, 1] is refused."""
    n = 400
    noise = np.exp(np.random.default_rng(5).normal(0.0, 0.5, size=n))
    tasks, jobs = _truth(["none"] * n, np.zeros(n), np.ones(n), noise, sigma=0.5)
    corr = {rho: reexecution.statistics(reexecution.generator_pairs(tasks, jobs, min_finished=20, quantile=0.9,
                                                                     noise_corr=rho), n_boot=0)["corr"]
            for rho in (0.0, 1.0)}
    assert corr[1.0] > 0.9 and abs(corr[0.0]) < 0.15
    with pytest.raises(ValueError, match="noise_corr"):
        reexecution.generator_pairs(tasks, jobs, min_finished=20, quantile=0.9, noise_corr=1.5)


def test_the_realism_check_fails_when_the_generator_leaves_the_real_interval(tmp_path):
    """generator_against_real (the asset check reexecution_generator_within_real) on a real DuckDB file:
    a 'real' trace whose second lives are independent of the first, and a generated one whose model is
    set outside (noise correlation 1: every task keeps its noise) or inside (0) the real interval."""
    from stragglers.warehouse.realism import generator_against_real
    rng = np.random.default_rng(11)
    rows = []
    for job in range(30):
        y1, y2 = 100 * np.exp(rng.normal(0, 0.3, 40)), 100 * np.exp(rng.normal(0, 0.3, 40))
        rows.append(pd.DataFrame({"job_id": job, "task_id": np.arange(40), "first_latency_s": y1,
                                  "second_latency_s": y2, "job_median_s": np.median(y1),
                                  "job_tau_s": np.quantile(y1, 0.9), "status": "pair"}))
    real = pd.concat(rows, ignore_index=True)
    lives = {j: g.first_latency_s.to_numpy() for j, g in real.groupby("job_id")}
    n = 400
    tasks, jobs = _truth(["none"] * n, np.zeros(n), np.ones(n), np.exp(rng.normal(0, 0.3, n)), sigma=0.3)
    con = duckdb.connect(str(tmp_path / "warehouse.duckdb"))
    for rho, want in ((1.0, False), (0.0, True)):
        gen = reexecution.generator_pairs(tasks, jobs, min_finished=20, quantile=0.9, noise_corr=rho)
        summary = pd.concat([
            reexecution.summarize(real, lives, trace="real", n_boot=200, seed=0, seeds=[0]),
            reexecution.summarize(real.head(0), {}, trace="gen", n_boot=200, seed=0, generated=gen)])
        con.execute("CREATE OR REPLACE TABLE reexecution_summary AS SELECT * FROM summary")
        table = generator_against_real(con).set_index("statistic")
        assert list(table.index) == ["corr", "p_second_given_first"]
        assert (table.generated == "gen").all() and (table.real == "real").all()
        assert table.loc["corr", "within"] == want, (rho, table)
    con.execute("DROP TABLE reexecution_summary")
    assert generator_against_real(con).empty                        # nothing to hold: the check passes
    con.close()


def test_reexecutions_and_cause_aware_copies_on_a_generated_trace(tmp_path):
    """Real Dagster runs on a small generated trace: the asset writes the generator's re-runs beside the
    trace's own (none: the generator re-runs no finished task), and comparison_tables with
    cause_aware_copies='on' simulates exactly the truth's copy latencies."""
    import dagster as dg
    from dagster_duckdb import DuckDBResource

    from assets import budgets, completion, prediction, realism, reports, traces, warehouse
    from assets.resources import PipelineSettings
    from stragglers.diagnosis.truth import load_truth
    from stragglers.prediction.copies.completion_tables import speculation_jobs, speculation_table
    from stragglers.traces.fetch import truth_dir

    def resources(**extra):
        return {"nurd": PipelineSettings(data_dir=str(tmp_path), synthetic_jobs=10, workers=1, n_boot=20,
                                     protocol="operator", **extra),
                "duckdb": DuckDBResource(database=str(tmp_path / "warehouse.duckdb"))}
    instance = dg.DagsterInstance.ephemeral()
    chain = [traces.raw_trace, warehouse.staged_trace, warehouse.jobs, warehouse.tasks, warehouse.selection_funnel,
             warehouse.checkpoint_features, realism.reexecutions, *realism.checks, realism.trace_realism,
             *realism.realism_checks]
    run = dg.materialize(chain, resources=resources(), instance=instance)
    assert run.success
    # one trace in the warehouse: nothing to hold the generator against, the realism check passes saying so
    held = [c for c in run.get_asset_check_evaluations() if c.check_name == "reexecution_generator_within_real"]
    assert len(held) == 1 and held[0].passed and "nothing to hold" in held[0].metadata["note"].value
    assert dg.materialize([prediction.baseline_eval], partition_key="oracle", resources=resources(),
                          instance=instance).success
    con = duckdb.connect(str(tmp_path / "warehouse.duckdb"), read_only=True)
    try:
        summary = con.execute("SELECT source, n_pairs, corr FROM reexecution_summary").df().set_index("source")
        # the copies' tasks: every task the operator's replay saw (a never-finishing one's copy is +inf)
        tasks = con.execute(render("speculated_tasks")).df()
        preds = con.execute("SELECT trace, method, job_id, task_id, flagged_at_s FROM operator_predictions").df()
        cps = con.execute(render("checkpoint_times", grid="operator_checkpoints")).df()   # the operator's clock
    finally:
        con.close()
    assert summary.loc["the trace's re-executions", "n_pairs"] == 0
    assert summary.loc["generator's model (every finished task re-run)", "n_pairs"] > 100
    # only the travelling causes' work goes along: far from the 0.9 of a model where all the noise did
    assert summary.loc["generator's model (every finished task re-run)", "corr"] < 0.5
    _jobs, truth_tasks = load_truth(truth_dir(str(tmp_path), "synthetic"))
    aware = tasks.drop(columns="copy_latency_s").merge(reexecution.cause_aware_copy_latency(truth_tasks),
                                                       on=["job_id", "task_id"], how="left")
    never = np.isposinf(tasks["copy_latency_s"].to_numpy(float))     # a copy that never finishes stays so
    aware["copy_latency_s"] = np.where(never, np.inf, aware["copy_latency_s"].to_numpy(float))
    assert aware.copy_latency_s.notna().any()
    oracle = {}
    for setting, t in (("off", tasks), ("on", aware)):
        run = dg.materialize([completion.completion_times, budgets.operator_budgets, reports.comparison_tables,
                              prediction.nurd_eval, prediction.baseline_eval],
                             selection=[completion.completion_times, budgets.operator_budgets,
                                        reports.comparison_tables],
                             resources=resources(cause_aware_copies=setting),
                             instance=instance)
        assert run.success
        shown = pd.read_csv(tmp_path / "reports" / "operator_view.csv").set_index("method")
        want = speculation_table(t, preds, cps)    # the relaunch seeds the asset draws
        want = want[want.algorithm == "unlimited"].set_index("method")
        assert shown.loc["oracle", "jct_reduction"] == pytest.approx(want.loc["oracle", "reduction_mean"])
        # what the copies cost: on the wall clock the job often ends with a task no copy shortens
        # (one that starts late, or never finishes), so the JCT cut alone may not move
        per_job = speculation_jobs(t, preds)
        oracle[setting] = per_job[per_job.method == "oracle"][["jct_reduction", "extra_machine_share"]].to_numpy()
    assert not np.allclose(oracle["on"], oracle["off"])    # the setting reaches the simulation
    assert "What a copy buys" in (tmp_path / "reports" / "report.md").read_text()


def test_the_generator_writes_reexecutions_the_sql_reads_back_and_leaves_the_first_lives_alone(tmp_path):
    """generate_google(reexecuted_share=...) runs a share of the finished tasks again on another machine
    after their FINISH: sql/reexecution_pairs.sql finds exactly those (one life each, the written
    latency, the written machines), and the first lives and the truth are those of the trace without."""
    from stragglers.traces.synth.google import generate_google
    kw = dict(seed=5, n_jobs=12, max_tasks=300, n_parts=3, n_machines=100)
    plain = generate_google(tmp_path / "plain", **kw)
    rerun = generate_google(tmp_path / "rerun", reexecuted_share=0.05, **kw)
    assert plain.reexecutions is None and "reexecuted_tasks" not in plain.counts
    pd.testing.assert_frame_equal(plain.truth_tasks, rerun.truth_tasks)      # first lives unchanged
    pd.testing.assert_frame_equal(plain.truth_jobs, rerun.truth_jobs)
    written = rerun.reexecutions
    assert rerun.counts["reexecuted_tasks"] == len(written) > 20
    assert (written.first_machine != written.second_machine).all()
    con = duckdb.connect(str(tmp_path / "warehouse.duckdb"))
    settings = SelectionSettings()
    stage_google(con, tmp_path / "rerun", settings)
    build_selection(con, settings)
    table = reexecution.build_pairs(con, settings, min_finished=20)
    # every written re-execution is a rerun task of the table; the pairs are those whose job has enough lives
    got = table.set_index(["job_id", "task_id"])
    want = written.set_index(["job_id", "task_id"])
    assert set(got.index) == set(want.index)
    assert set(got.status) <= {"pair", "job_too_few_finished"} and (got.status == "pair").sum() > 10
    pairs = got[got.status == "pair"].join(want, rsuffix="_written")
    assert np.allclose(pairs.second_latency_s, pairs.second_latency_s_written, atol=1e-6)
    assert (pairs.first_machine == pairs.first_machine_written).all()
    assert (pairs.second_machine == pairs.second_machine_written).all()
    # the trace without re-executions has no rerun task after a FINISH
    con2 = duckdb.connect(str(tmp_path / "plain.duckdb"))
    stage_google(con2, tmp_path / "plain", settings)
    build_selection(con2, settings)
    assert reexecution.build_pairs(con2, settings, min_finished=20).empty
    with pytest.raises(ValueError, match="reexecuted_share"):
        generate_google(tmp_path / "bad", reexecuted_share=1.5, **kw)
    con.close()
    con2.close()
