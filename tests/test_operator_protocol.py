"""The operator's protocol: tau_hat, checkpoints until the job ends, speculative copies,
the rules operators run and the oracle, on hand-made jobs with answers worked by hand."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import numpy as np
import pytest

from stragglers.prediction.copies.completion_tables import speculation_table
from stragglers.prediction.engine.caps import HadoopCaps, Uncapped
from stragglers.prediction.engine.job import CopyJob, completion_time
from stragglers.prediction.engine.policies import from_flags, oracle
from stragglers.prediction.engine.replay import copy_log, outcomes, run
from stragglers.prediction.engine.spark_rule import GRID
from stragglers.prediction.verdicts.verdict import WARMUP_JOBS
from stragglers.prediction.methods import METHODS, Method, TaskSet
from stragglers.prediction.methods.base import RATIO_GRID
from stragglers.prediction.replay.protocol import adapt_job
from stragglers.settings.protocols import OPERATOR, is_operator, typed_settings
from stragglers.prediction.replay.simulate import JobData, replay_job
from stragglers.prediction.statistics.threshold import conditional_survival, km_at, km_curve, km_quantile, online_threshold
from stragglers.settings import EvaluationSettings, Settings


def job(latency, checkpoints, tau=None) -> JobData:
    y = np.asarray(latency, float)
    cp = np.asarray(checkpoints, float)
    return JobData(job_id=1, task_ids=np.arange(len(y)), latency=y, checkpoints=cp,
                   X=np.zeros((len(cp), len(y), 1)), tau=float(np.quantile(y, 0.9)) if tau is None else tau,
                   feature_names=("f",))


def operator_settings(**kw) -> EvaluationSettings:
    return EvaluationSettings(workers=1, **(dict(OPERATOR) | kw))


# ---------------------------------------------------------------- speculative copies
# (a copy's cost and gain under every cap and placement, worked by hand: tests/test_replay_engine.py)

def engine_job(j: JobData, copies, seeds=None) -> CopyJob:
    """The replay engine's job of ``j`` (its tasks from 0 on the task clock), checked at its decisions
    after t0, with ``copies`` the copies' latencies (one array per draw)."""
    n = len(j.task_ids)
    fin = np.ones(n, bool) if j.finished is None else j.finished
    return CopyJob("t", int(j.job_id), j.task_ids, np.zeros(n), j.latency, fin, j.checkpoints[1:],
                   tuple(np.asarray(c, float) for c in copies))


def test_speculation_table_reports_reduction_extra_machine_time_and_the_tail():
    import pandas as pd

    tasks = pd.DataFrame({"trace": "t", "job_id": 1, "task_id": [0, 1], "latency_s": [10.0, 100.0]})
    preds = pd.DataFrame({"trace": "t", "method": "m", "job_id": 1, "task_id": [1], "flagged_at_s": [20.0]})
    tab = speculation_table(tasks, preds, machines=[], seeds=[0])
    row = tab.iloc[0]
    # the draw is task 0's or task 1's latency: the copy ends at 30 (wins) or 120 (loses)
    assert row.reduction_mean in (pytest.approx(0.7), 0.0)
    share = (30 - 20) / 110 if row.reduction_mean > 0 else (100 - 20) / 110
    assert row.extra_machine_share == pytest.approx(share)
    assert row.jct_change_p90 == pytest.approx(-row.reduction_mean)
    assert row.n_copies_per_job == 1


# ---------------------------------------------------------------- tau_hat
def test_kaplan_meier_quantile_with_censoring_worked_by_hand():
    # events 1, 2, 4, 5, 7, 8; censored 3, 6. S: 7/8, 6/8, (3c) x 4/5 = 0.6, x 3/4 = 0.45, (6c), x 1/2 = 0.225, 0
    d, e = [1, 2, 3, 4, 5, 6, 7, 8], [1, 1, 0, 1, 1, 0, 1, 1]
    assert km_quantile(d, e, 0.5) == 5.0       # first S <= 0.5
    assert km_quantile(d, e, 0.75) == 7.0      # first S <= 0.25
    assert km_quantile(d, e, 0.9) == 8.0
    assert km_quantile([1, 2, 3, 3], [1, 0, 0, 0], 0.9) == math.inf     # S stays at 3/4


def test_the_kaplan_meier_curve_and_quantile_are_lifelines_to_the_bit():
    from lifelines import KaplanMeierFitter
    from lifelines.utils import qth_survival_time
    rng = np.random.default_rng(11)
    for _ in range(300):
        n = int(rng.integers(2, 80))
        d = np.round(rng.lognormal(3, 1, n), int(rng.integers(0, 2)))   # ties, censorings among events
        e = rng.random(n) < rng.uniform(0.1, 1.0)
        if not e.any():
            continue
        kmf = KaplanMeierFitter().fit(d, e)
        times, surv = km_curve(d, e)
        assert np.array_equal(times, kmf.survival_function_.index.to_numpy())
        assert np.array_equal(surv, kmf.survival_function_.iloc[:, 0].to_numpy())
        for q in (0.5, 0.75, 0.9):
            assert km_quantile(d, e, q) == float(qth_survival_time(1.0 - q, kmf.survival_function_))
        at = np.r_[rng.uniform(0, d.max() * 1.2, 5), d[:3]]
        assert np.array_equal(km_at(d, e, at), kmf.survival_function_at_times(at).to_numpy())


def test_the_kaplan_meier_quantile_is_lifelines_answer_exactly():
    """km_quantile computes in numpy what lifelines' fitter and qth_survival_time give: ties, zeros,
    censorings among the events, every quantile (the same floats, so the same boundary cases)."""
    from lifelines import KaplanMeierFitter
    from lifelines.utils import qth_survival_time

    rng = np.random.default_rng(0)
    compared = 0
    for _ in range(400):
        n = int(rng.integers(2, 80))
        d = np.round(rng.lognormal(1, 1, n), int(rng.integers(0, 3)))
        d[rng.integers(0, n)] = 0.0 if rng.random() < 0.2 else d[0]
        e = rng.random(n) < rng.random()
        if not e.any():
            continue
        survival = KaplanMeierFitter().fit(d, e).survival_function_
        for q in (0.5, 0.75, 0.9, 0.95):
            assert km_quantile(d, e, q) == float(qth_survival_time(1.0 - q, survival)), (d.tolist(), e.tolist(), q)
            compared += 1
    assert compared > 1000


def test_online_threshold_is_the_km_quantile_once_defined_else_an_extrapolation_beyond_t():
    y = np.arange(1.0, 11.0)
    # at t = 9.5: nine finished, one running (censored at 9.5): S(9) = 0.1, tau_hat = 9
    assert online_threshold(y[y <= 9.5], [9.5], 0.9) == 9.0
    # at t = 5.5 five of ten still run: undefined by KM, the log-normal quantile, never below t
    early = online_threshold(y[y <= 5.5], np.full(5, 5.5), 0.9)
    assert 5.5 <= early < math.inf
    # one distinct finished latency: nothing to fit
    assert online_threshold([2.0, 2.0], np.full(8, 3.0), 0.9) == math.inf


def test_tau_hat_uses_only_what_is_known_at_t():
    y = np.r_[np.arange(1.0, 91.0), np.linspace(95, 140, 10)]
    cut = y.copy()
    cut[y > 50] = 1000.0        # the future of the tasks running at 50 s
    assert online_threshold(y[y <= 50], np.full(int((y > 50).sum()), 50.0), 0.9) == \
        online_threshold(cut[cut <= 50], np.full(int((cut > 50).sum()), 50.0), 0.9)


def test_conditional_survival_is_one_for_a_threshold_already_passed():
    y = np.arange(1.0, 21.0)
    assert conditional_survival(y[y <= 10], np.full(10, 10.0), 10.0, 8.0) == 1.0
    assert 0 < conditional_survival(y[y <= 10], np.full(10, 10.0), 10.0, 18.0) < 1


class ProbeTau(Method):
    """Records the tau it is given at each fit; flags every candidate once t >= ``at``."""
    name = "probe"

    def __init__(self, at: float = math.inf) -> None:
        super().__init__()
        self.at = at
        self.seen: list[tuple[float, float]] = []

    def fit(self, finished: TaskSet, running: TaskSet, t: float) -> None:
        self.t_ = t
        self.seen.append((t, self.job.tau))

    def flag(self, candidates: TaskSet) -> dict[str, np.ndarray]:
        return {self.name: np.full(len(candidates), self.t_ >= self.at, dtype=bool)}


def test_an_online_method_is_given_tau_hat_at_each_checkpoint_and_not_the_grid():
    j = job(np.arange(1.0, 101.0), np.arange(4.0, 90.0, 10.0))
    online = adapt_job(j, operator_settings(horizon="tau"))
    probe = ProbeTau()
    replay_job(online, probe)
    assert [tau for _, tau in probe.seen] == pytest.approx(online.thresholds[1:].tolist())
    # the online clock's step: the time to its next timed decision (300 s from t0 = 4 s), known at t
    assert probe.job.checkpoints is None and probe.job.step == 304.0 - online.checkpoints[-1]
    # the legacy grid's step is the grid's (cut from the true tau)
    legacy = ProbeTau()
    replay_job(adapt_job(j, operator_settings(horizon="tau", decision_clock="legacy_grid")), legacy)
    assert legacy.job.step == 10.0
    # the paper's protocol: the true tau throughout
    paper = ProbeTau()
    replay_job(j, paper)
    assert {tau for _, tau in paper.seen} == {j.tau}


# ---------------------------------------------------------------- horizon 'end'
def test_checkpoints_go_on_past_tau_and_a_late_flag_is_a_true_positive():
    # latencies 1..100 s: tau = 90.1; grid 4, 14, ..., 84 before tau
    j = job(np.arange(1.0, 101.0), np.arange(4.0, 90.0, 10.0))
    end = adapt_job(j, EvaluationSettings(workers=1, horizon="end"))
    assert end.checkpoints[-1] == 94.0 and end.tau == j.tau and end.span_end == 100.0
    v = replay_job(end, ProbeTau(at=91.0)).variants[0]
    # flagged at 94 s: tasks 95..100 s (stragglers still running); 91..94 s had finished
    assert v.scores["tp"] == 6 and v.scores["fp"] == 0 and v.scores["fn"] == 4
    assert v.scores["f1"] == pytest.approx(12 / 16)
    # under the paper's horizon the same method never flags
    assert replay_job(j, ProbeTau(at=91.0)).variants[0].scores["tp"] == 0


# ---------------------------------------------------------------- rules and the oracle
def test_spark_rules_at_both_default_sets():
    j = job(np.arange(1.0, 101.0), np.arange(4.0, 90.0, 10.0))
    legacy = replay_job(j, METHODS["spark_speculation"]()).variants[0]
    # 0.75 x 100 tasks finished at 84 s; 84 > 1.5 x median(1..84) = 63.75: every candidate flagged at 84
    assert set(legacy.flagged_at[~np.isnan(legacy.flagged_at)]) == {84.0}
    # Spark >= 4.0 needs 90 finished tasks: not before tau; past tau (94 s), 94 < 3 x 47.5
    assert np.isnan(replay_job(j, METHODS["spark4_speculation"]()).variants[0].flagged_at).all()
    end = adapt_job(j, EvaluationSettings(workers=1, horizon="end"))
    assert np.isnan(replay_job(end, METHODS["spark4_speculation"]()).variants[0].flagged_at).all()
    # spark.speculation.minTaskRuntime (100 ms): tasks of milliseconds are never speculated below it
    ms = job(np.arange(1.0, 101.0) / 2000, np.arange(4.0, 90.0, 10.0) / 2000)
    assert np.isnan(replay_job(ms, METHODS["spark_speculation"]()).variants[0].flagged_at).all()
    no_floor = replay_job(ms, METHODS["spark_speculation"](min_task_runtime_s=0.0)).variants[0]
    assert (~np.isnan(no_floor.flagged_at)).any()


def test_the_oracle_flags_every_straggler_at_the_first_checkpoint_and_its_jct():
    y = np.r_[np.full(18, 10.0), 100.0, 120.0]          # tau = p90 = 12: the stragglers are 100 s and 120 s
    j = job(y, [10.0, 11.0, 11.5])
    v = replay_job(j, METHODS["oracle"]()).variants[0]
    assert v.scores["tp"] == 2 and v.scores["fp"] == 0
    assert v.flagged_at[18] == v.flagged_at[19] == 11.0
    # copies of 10 s each at 11 s: both stragglers done at 21 s; extra 2 x 10 s
    engine = engine_job(j, [np.full(20, 10.0)])
    out, _, _ = run(engine, from_flags("oracle", "default", v.flagged_at, engine.checks), [Uncapped()])
    assert out[0, 0].tolist() == [21.0, 20.0, 2.0]
    # the engine's own oracle (it knows the copies) copies the same two, at the first check
    np.testing.assert_array_equal(np.flatnonzero(~np.isnan(copy_log(engine, oracle(engine), Uncapped()).start)),
                                  [18, 19])


def test_wait_for_tau_uses_tau_hat_online():
    j = adapt_job(job(np.arange(1.0, 101.0), np.arange(4.0, 90.0, 10.0)), operator_settings())
    v = replay_job(j, METHODS["wait_for_tau"]()).variants[0]
    t_flag = np.nanmin(v.flagged_at)
    k = int(np.flatnonzero(j.checkpoints == t_flag)[0])
    # flagged at the last decision whose next timed decision is at or past tau_hat
    assert t_flag + j.steps[k] >= j.thresholds[k]
    assert all(t + st < th for t, st, th in zip(j.checkpoints[1:k], j.steps[1:k], j.thresholds[1:k]))


def test_the_operator_preset():
    def evaluation(**values) -> EvaluationSettings:
        return typed_settings(Settings(**values))[0]

    s = evaluation(protocol="operator")
    assert (s.threshold, s.horizon, s.intervention) == ("online", "end", "speculate") and is_operator(s)
    assert not is_operator(evaluation()) and not is_operator(evaluation(protocol="authors"))
    assert s.replace(threshold="oracle", horizon="tau", intervention="relaunch") == evaluation()


def test_the_censored_log_normal_fit_matches_scipys_generic_fit():
    from scipy import stats

    from stragglers.prediction.statistics.threshold import lognormal_fit

    rng = np.random.default_rng(1)
    y = rng.lognormal(4.0, 0.8, 300)
    t = float(np.quantile(y, 0.3))
    fin = y <= t
    shape, scale = lognormal_fit(np.where(fin, y, t), fin)
    ref_shape, _, ref_scale = stats.lognorm.fit(stats.CensoredData(uncensored=y[fin], right=np.full((~fin).sum(), t)),
                                                floc=0)
    assert shape == pytest.approx(ref_shape, rel=1e-4) and scale == pytest.approx(ref_scale, rel=1e-4)


# ---------------------------------------------------------------- the chain under NURD_PROTOCOL=operator
OPERATOR_RULES = ("flag_all", "wait_for_tau", "spark_speculation", "spark4_speculation", "km_survival", "oracle")


def test_operator_protocol_chain_writes_both_views_and_leads_the_report_with_the_operator(tmp_path):
    """*nurd_eval, the rule partitions and comparison_tables under NURD_PROTOCOL=operator on a small
    generated trace (real Dagster runs on an ephemeral instance, a real DuckDB file)."""
    import dagster as dg
    import duckdb
    from dagster_duckdb import DuckDBResource

    from assets import budgets, completion, prediction, reports, traces, warehouse
    from assets.resources import PipelineSettings

    res = {"nurd": PipelineSettings(data_dir=str(tmp_path), synthetic_jobs=10, workers=1, n_boot=20,
                                    protocol="operator"),
           "duckdb": DuckDBResource(database=str(tmp_path / "warehouse.duckdb"))}
    instance = dg.DagsterInstance.ephemeral()
    chain = [traces.raw_trace, warehouse.staged_trace, warehouse.jobs, warehouse.tasks, warehouse.selection_funnel,
             warehouse.checkpoint_features, prediction.nurd_eval]
    assert dg.materialize(chain, resources=res, instance=instance).success
    for rule in (*OPERATOR_RULES, "survival_history"):
        assert dg.materialize([prediction.baseline_eval], partition_key=rule, resources=res, instance=instance).success
    r = dg.materialize([completion.completion_times, budgets.operator_budgets, reports.comparison_tables,
                        prediction.nurd_eval, prediction.baseline_eval],
                       selection=[completion.completion_times, budgets.operator_budgets,
                                  reports.comparison_tables], resources=res, instance=instance)
    assert r.success
    with duckdb.connect(str(tmp_path / "warehouse.duckdb"), read_only=True) as con:
        paper = {m for (m,) in con.execute("SELECT DISTINCT method FROM job_metrics").fetchall()}
        operator = dict(con.execute("SELECT method, avg(f1) FROM operator_job_metrics GROUP BY method").fetchall())
        settings = json.loads(con.execute("SELECT settings FROM operator_evaluation_runs WHERE method = 'oracle'")
                              .fetchone()[0])
        # flags past tau exist under horizon 'end' (the grid of the paper's protocol stops before tau)
        late = con.execute("""SELECT count(*) FROM operator_predictions p JOIN (SELECT DISTINCT job_id, tau_s
                              FROM job_checkpoints) c USING (job_id) WHERE p.flagged_at_s > c.tau_s""").fetchone()[0]
        paper_late = con.execute("""SELECT count(*) FROM predictions p JOIN (SELECT DISTINCT job_id, tau_s
                                    FROM job_checkpoints) c USING (job_id) WHERE p.flagged_at_s > c.tau_s""").fetchone()[0]
        # the survival family's cost curve, in both views: one row per lambda, the configured one marked
        curves = {t: con.execute(f"SELECT cost_lambda, configured, n_jobs FROM {t} WHERE method = 'survival_history' "
                                 "ORDER BY cost_lambda").fetchall() for t in ("cost_curve", "operator_cost_curve")}
        n_jobs = con.execute("SELECT count(DISTINCT job_id) FROM operator_job_metrics WHERE method = 'survival_history'"
                             ).fetchone()[0]
    for rows in curves.values():
        assert [lam for lam, c, _ in rows if c] == [1.0] and len(rows) == 7
        assert n_jobs > 0 and {n for _, _, n in rows} == {n_jobs}
    expected = {"nurd", "nurd_nc", "gbtr", *OPERATOR_RULES, "survival_history"}
    assert paper == expected and set(operator) == expected
    assert operator["oracle"] == pytest.approx(1.0)
    assert (settings["threshold"], settings["horizon"], settings["intervention"]) == ("online", "end", "speculate")
    assert late > 0 and paper_late == 0
    out = tmp_path / "reports"
    import pandas as pd
    op = pd.read_csv(out / "operator_view.csv")
    assert set(op["method"]) == expected
    assert (op["jct_reduction"] >= 0).all() and (op["jct_reduction_limited_avg"] >= 0).all()   # a copy never delays
    assert (op["extra_machine_share"] >= 0).all() and (op["jct_change_p90"] <= 0).all()
    oracle = op.set_index("method").loc["oracle"]
    assert oracle.jct_reduction >= op["jct_reduction"].max() - 1e-12 or oracle.extra_machine_share <= \
        op.set_index("method").loc["flag_all"].extra_machine_share
    report = (out / "report.md").read_text()
    # the budget tables name and score a job once 10 jobs ended before it started (verdict.WARMUP_JOBS, a
    # rolling origin): these 3 jobs score none, so the tables are empty and the report leads with the
    # operator's view (the budget tables on enough jobs: tests/test_verdict.py, tests/test_budget_report.py)
    with duckdb.connect(str(tmp_path / "warehouse.duckdb"), read_only=True) as con:
        n_jobs = con.execute("SELECT count(DISTINCT job_id) FROM operator_capped_outcomes").fetchone()[0]
        empty = [con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("matched_budgets", "named_comparisons")]
    assert 0 < n_jobs <= WARMUP_JOBS and empty == [0, 0]
    assert "## Every method at every budget" not in report and not (out / "budget_curves.png").exists()
    # the answer box says why there is no answer, then the operator's evidence comes before the paper's
    box = report.split("## What this run shows\n\n")[1].split("\n## ")[0]
    assert box.startswith("### synthetic (generated trace, 3 jobs): too few jobs to answer")
    evidence = report.split("## The operator's evidence")[1].split("\n## ")[0]
    assert report.index("## The operator's evidence") < report.index("## Reproducing the paper")
    assert "Operator's view on `synthetic`" in evidence and "the oracle, which copies every true straggler" in evidence
    assert (out / "operator_pareto.png").stat().st_size > 1000
    with duckdb.connect(str(tmp_path / "warehouse.duckdb"), read_only=True) as con:
        points = dict(con.execute("SELECT method, count(*) FROM sweep_curve GROUP BY method").fetchall())
    assert set(points) == expected and points["spark_speculation"] == len(GRID) + 1 and points["oracle"] == 1
    assert points["survival_history"] == 24 + 1 and points["nurd"] == len(RATIO_GRID) + 1
    # the survival family beside every free rule, with its sentence
    verdict = pd.read_csv(out / "survival_verdict.csv")
    assert set(verdict["rule"]) == set(OPERATOR_RULES) - {"oracle"} and set(verdict["method"]) == {"survival_history"}
    assert "Survival family on `synthetic`" in evidence and "(the headroom)" in evidence
    assert (out / "cost_curve.csv").exists()


def test_the_common_clock_km_shortcut_equals_lifelines():
    rng = np.random.default_rng(3)
    for n in (20, 57, 200):
        y = np.round(rng.lognormal(3, 1, n), 1)          # ties included
        for t in np.quantile(y, [0.85, 0.9, 0.95, 1.0]):
            fin = y <= t
            d, e = np.where(fin, y, t), fin
            if (~fin).sum() <= 0.1 * n:
                # lifelines' product of (1 - d/n) can land 1e-17 above 1 - q where S is exactly 0.1
                assert online_threshold(y[fin], np.full(int((~fin).sum()), float(t)), 0.9) == km_quantile(d, e, 0.9 - 1e-12)


def test_a_long_tail_gets_at_most_twenty_checkpoints_past_the_warehouse_grid():
    y = np.r_[np.arange(1.0, 100.0), 10_000.0]
    end = adapt_job(job(y, np.arange(4.0, 90.0, 10.0)), EvaluationSettings(workers=1, horizon="end"))
    assert len(end.checkpoints) - 9 <= 20 and end.checkpoints[-1] < 10_000.0


# ---------------------------------------------------------------- every task the scheduler sees

class ProbeSets(Method):
    """Records the finished and running task ids and the candidates at each decision; flags all."""
    name = "probe_sets"

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[tuple[float, list, list, list]] = []

    def fit(self, finished: TaskSet, running: TaskSet, t: float) -> None:
        self.seen.append((t, finished.task_ids.tolist(), running.task_ids.tolist()))

    def flag(self, candidates: TaskSet) -> dict[str, np.ndarray]:
        self.seen[-1] = (*self.seen[-1], candidates.task_ids.tolist())
        return {self.name: np.ones(len(candidates), dtype=bool)}


def test_a_task_that_will_not_finish_is_a_candidate_while_it_runs_and_is_never_a_straggler():
    # tasks 0-2 finish at 1, 2, 3 s; task 3 is killed at 10 s; task 4 finishes at 20 s; task 5 is killed at 2.5 s
    j = replace(job([1, 2, 3, 10, 20, 2.5], [1.5, 5, 15], tau=10.0),
                finished=np.array([True, True, True, False, True, False]))
    probe = ProbeSets()
    r = replay_job(j, probe)
    # at 5 s: 0-2 finished (with latencies), task 5 ended (killed: in neither set), 3 and 4 run and are copied
    assert probe.seen[0] == (5.0, [0, 1, 2], [3, 4], [3, 4])
    # the killed task 3 is a false positive, never a straggler; task 4 (20 s >= tau) is the straggler
    assert j.labels.tolist() == [False, False, False, False, True, False]
    assert r.variants[0].scores["fp"] == 1 and r.variants[0].scores["tp"] == 1
    # tau_hat reads the finished tasks and censors the running ones, not the killed one
    online = adapt_job(j, operator_settings())
    assert online.thresholds[1] == online_threshold(np.array([1.0, 2.0, 3.0]), [5.0, 5.0], 0.9)


def test_a_copy_of_a_task_that_will_not_finish_buys_nothing_and_runs_until_the_original_ends():
    from stragglers.prediction.engine.draws import copy_draw_sets

    y, finished = np.array([10.0, 100.0, 80.0]), np.array([True, True, False])
    draws = copy_draw_sets(y, "t", 1, range(3), finished)
    # the killed task's copy never finishes; the others draw from the finished tasks' latencies
    assert all(np.isinf(d[2]) and set(d[:2]) <= {10.0, 100.0} for d in draws)
    # copying only the killed task at 20 s: no cut (the job ends when it ends), 60 s more machine time
    job = CopyJob("t", 1, np.arange(3), np.zeros(3), y, finished, np.array([20.0]), tuple(draws))
    (o,) = outcomes(job, from_flags("m", "default", np.array([np.nan, np.nan, 20.0]), job.checks), [Uncapped()])
    assert o.jct_reduction == 0.0 and o.extra_machine_share == pytest.approx(60.0 / 190.0) and o.copies == 1


def test_a_job_completes_when_its_last_finishing_task_finishes_not_at_a_later_kill():
    from stragglers.prediction.engine.draws import copy_draw_sets, copy_draws

    # task 1 (100 s) is the straggler that finishes; task 2 runs until its kill at 150 s, the teardown
    y, finished = np.array([10.0, 100.0, 150.0]), np.array([True, True, False])
    draws = copy_draw_sets(y, "t", 1, range(3), finished)
    job = CopyJob("t", 1, np.arange(3), np.zeros(3), y, finished, np.array([20.0]), tuple(draws))
    assert job.completion == completion_time(y, finished) == 100.0    # not 150: the job did not wait for the kill
    # copying the straggler at 20 s: its copy (drawn 10 or 100 s) ends by min(100, 20 + d); the cut is
    # what that moves, which a definition by the last kill (150 s) would hide
    (o,) = outcomes(job, from_flags("m", "default", np.array([np.nan, 20.0, np.nan]), job.checks), [Uncapped()])
    expected = np.mean([(100.0 - min(100.0, 20.0 + d[1])) / 100.0 for d in draws])
    assert o.jct_reduction == pytest.approx(expected) and o.jct_reduction > 0
    # the oracle under Hadoop's caps copies the straggler where its copy wins, never the killed task
    (capped,) = outcomes(job, oracle(job), [HadoopCaps()])
    assert capped.jct_reduction == pytest.approx(expected)
    assert capped.copies == pytest.approx(np.mean([20.0 + d[1] < 100.0 for d in draws]))
    # a job none of whose tasks finishes completes at its last end, which no copy moves
    assert completion_time(y, np.zeros(3, bool)) == 150.0
    none = CopyJob("t", 1, np.arange(3), np.zeros(3), y, np.zeros(3, bool), np.array([20.0]),
                   tuple(copy_draw_sets(y, "t", 1, range(1), np.zeros(3, bool))))
    (o,) = outcomes(none, from_flags("m", "default", np.full(3, 20.0), none.checks), [Uncapped()])
    # (task 0 ended at 10: copies of tasks 1 and 2 run from 20 until their originals end)
    assert none.completion == 150.0 and o.jct_reduction == 0.0 and o.copies == 2
    assert o.extra_machine_share == pytest.approx((80.0 + 130.0) / 260.0)
    # a copy as slow as its original (copy_keeps = 1) of a task that does not finish still never finishes
    assert np.isinf(copy_draws(y, "t", 1, range(1), 1.0, finished=finished)[0][2])


def test_spark_counts_every_task_of_the_job_in_its_quantile_gate():
    # 10 tasks, 7 finish early (1..7 s); 3 are killed late. Spark's gate is max(floor(quantile x 10), 1)
    # successes, every task of the job counted: at quantile 0.75, 7 (floor 7.5): the gate opens at 7 s,
    # the threshold is 1.5 x median(1..7) = 6 s, and the three still running are flagged at the next
    # checkpoint, 8 s; at quantile 0.8 it needs 8 successes, never reached (had it counted the 7
    # finished tasks only, floor(0.8 x 7) = 5 would have opened it)
    lat = np.r_[np.arange(1.0, 8.0), 50.0, 60.0, 70.0]
    j = replace(job(lat, [1, 5, 8, 30, 40], tau=7.0), finished=np.r_[np.ones(7, bool), np.zeros(3, bool)])
    flagged = replay_job(j, METHODS["spark_speculation"]()).variants[0].flagged_at
    np.testing.assert_array_equal(flagged, [np.nan] * 7 + [8.0] * 3)
    r = replay_job(j, METHODS["spark_speculation"](quantile=0.8))
    assert np.isnan(r.variants[0].flagged_at).all()
