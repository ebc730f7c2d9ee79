"""Spark's speculation rule as the one replay engine runs it (stragglers/prediction/engine: spark_rule's
``flag_times``, a ``CopyJob`` with its ``ExecutorSlots``): its semantics on stages made by hand, its
agreement with the copies a real Spark made (the cluster's logs, through
stragglers/prediction/copies/spark_copies.py ``replay_flags``), and the operator's answer
(stragglers/prediction/verdicts/spark_answer.py, through ``nurd-spark advise``'s ``advise``) on the cluster's
logs and on the real logs, its verdict held to its own numbers."""

from __future__ import annotations

import math
import re

import duckdb
import numpy as np
import pandas as pd
import pytest

from stragglers.advice.spark import advise, outcomes
from stragglers.prediction.engine.caps import Uncapped
from stragglers.prediction.engine.job import CopyJob, ExecutorSlots
from stragglers.prediction.engine.jobs import application_rules, interval_checks
from stragglers.prediction.engine.policies import CURRENT, DEFAULT_POINT, spark_rule
from stragglers.prediction.engine.replay import copy_log, outcomes as engine_outcomes
from stragglers.prediction.engine.spark_rule import (GRID, SPARK_3_DEFAULTS, SPARK_4_DEFAULTS, SpeculationRule,
                                                     flag_times, rule_from_conf, threshold)
from stragglers.prediction.verdicts.spark_answer import SparkAnswer, spark_answer, spark_answers
from stragglers.prediction.copies.spark_copies import replay_flags, scheduling_delay_s
from stragglers.prediction.engine.draws import copy_draws
from stragglers.prediction.verdicts.verdict import Split
from stragglers.settings import EvaluationSettings, SelectionSettings, Settings
from stragglers.warehouse.build import build_selection
from stragglers.warehouse.runner import build_table
from stragglers.warehouse.spark_staging import stage_spark

TRACE = "spark_eventlog"
# Times in seconds on binary fractions (the checks every 0.25 s are exact): a tie between a run time and
# the threshold is a tie, not a rounding's accident.
RULE = SpeculationRule(0.5, 1.5, 0.25, interval_s=0.25)
RUNNING = math.inf


def flags(tasks: list[tuple[float, float, str]], rule: SpeculationRule = RULE, *, n_tasks: int | None = None,
          horizon: float = 12.0) -> dict[int, float]:
    """{task: the check at which the rule first marks it} for tasks (start, end, how it ended: 'success',
    'failed', or 'running' with end +inf), checked every interval from the stage's submission at 0."""
    start = np.array([t[0] for t in tasks], float)
    end = np.array([t[1] for t in tasks], float)
    succeeded = np.array([t[2] == "success" for t in tasks])
    f = flag_times(start, end, succeeded, interval_checks(0.0, rule.interval_s, horizon), rule, n_tasks)
    return {int(i): float(f[i]) for i in np.flatnonzero(~np.isnan(f))}


# --- the rule: when it marks a task ----------------------------------------------------------------

def test_no_check_before_the_quantile_of_tasks_has_succeeded():
    # 4 tasks, quantile 0.5: floor(0.5 x 4) = 2 successes needed; the second comes at 2.0
    stage = [(0, 1.0, "success"), (0, 2.0, "success"), (0, RUNNING, "running"), (0, RUNNING, "running")]
    # median (1 + 2) / 2 = 1.5, threshold 2.25: from 2.0 on, strictly over it first at the check 2.5
    assert flags(stage) == {2: 2.5, 3: 2.5}
    # one success is enough at quantile 0.25 (floor(1) = 1): threshold 1.5 from 1.0, first over it at 1.75
    # (task 1, running until 2.0, is marked too: the rule does not know it will succeed)
    q25 = SpeculationRule(0.25, 1.5, 0.25, interval_s=0.25)
    assert flags(stage, q25) == {1: 1.75, 2: 1.75, 3: 1.75}
    # max(floor(q n), 1): at quantile 0.1 floor(0.4) = 0, yet the rule waits for a first success
    assert flags(stage, SpeculationRule(0.1, 1.5, 0.25, interval_s=0.25)) == flags(stage, q25)
    # the gate counts the TaskSet's tasks, not those launched so far: 8 tasks need 4 successes
    assert flags(stage, n_tasks=8) == {}
    assert threshold(np.array([1.0, 2.0]), 4, RULE) == 2.25 and threshold(np.array([1.0]), 4, RULE) == math.inf


def test_runtime_must_exceed_the_threshold_strictly_at_a_check():
    # successes of 1.0 and 1.0 by 1.0: threshold 1.5 (a third success of 1.25 leaves the median at 1.0);
    # the task launched at 0.25 has run exactly 1.5 at the check 1.75, not over it: marked at 2.0
    stage = [(0, 1.0, "success"), (0, 1.0, "success"), (0.25, RUNNING, "running"), (0, 1.25, "success")]
    assert flags(stage) == {2: 2.0}


def test_min_task_runtime_floors_the_threshold():
    stage = [(0, 0.25, "success"), (0, 0.25, "success"), (0, RUNNING, "running"), (0, RUNNING, "running")]
    # 1.5 x 0.25 = 0.375 over minTaskRuntime 0.25: first check over it 0.5
    assert flags(stage) == {2: 0.5, 3: 0.5}
    # minTaskRuntime 1s floors it: the first check over 1.0 is 1.25
    assert flags(stage, SpeculationRule(0.5, 1.5, 1.0, interval_s=0.25)) == {2: 1.25, 3: 1.25}
    assert threshold(np.array([0.25, 0.25]), 4, SpeculationRule(0.5, 1.5, 1.0)) == 1.0


def test_a_task_that_ends_before_the_check_is_not_marked_and_a_taskset_of_one_never():
    # threshold max(1.5 x 1.0, 0.25) = 1.5 from 1.0 on: the first check over it is 1.75
    ends_before = [(0, 1.0, "success"), (0, 1.0, "success"), (0, 1.7, "success"), (0, 1.6, "failed")]
    assert flags(ends_before) == {}
    # running at 1.75 and over the threshold: marked, whether it will succeed or fail
    assert flags([(0, 1.0, "success"), (0, 1.0, "success"), (0, 2.0, "success"), (0, 1.9, "failed")]) == \
        {2: 1.75, 3: 1.75}
    assert flags([(0, RUNNING, "running")]) == {}
    assert flags([(0, 30.0, "success")], SpeculationRule(0.1, 1.1, 0.0, interval_s=0.25)) == {}


def test_rule_from_an_applications_properties():
    rule = rule_from_conf({"spark.speculation": "true", "spark.speculation.quantile": "0.5",
                           "spark.speculation.interval": "1s", "spark.speculation.minTaskRuntime": "500"})
    # unset keys take Spark 4.0's defaults; a bare number is milliseconds, as Spark reads these keys
    assert (rule.quantile, rule.multiplier, rule.min_task_runtime_s, rule.interval_s) == (0.5, 3.0, 0.5, 1.0)
    assert rule_from_conf({"spark.speculation.quantile": "0.5"}) is None          # speculation off: Spark's default
    assert rule_from_conf({"spark.speculation": "false"}) is None
    with pytest.raises(ValueError, match="spark.speculation.interval='soon'"):
        rule_from_conf({"spark.speculation": "true", "spark.speculation.interval": "soon"})


def test_spark_defaults_are_named_and_on_the_grid_and_the_conf_reads_back():
    assert (SPARK_4_DEFAULTS.quantile, SPARK_4_DEFAULTS.multiplier, SPARK_4_DEFAULTS.min_task_runtime_s,
            SPARK_4_DEFAULTS.interval_s) == (0.9, 3.0, 0.1, 0.1)
    assert (SPARK_3_DEFAULTS.quantile, SPARK_3_DEFAULTS.multiplier) == (0.75, 1.5)
    assert SPARK_4_DEFAULTS in GRID and SPARK_3_DEFAULTS in GRID
    for rule in (SPARK_4_DEFAULTS, SpeculationRule(0.5, 1.25, 30.0)):
        conf = dict(re.findall(r"^(spark\.speculation\S*)\s+(\S+)$", rule.conf(), re.M))
        # the efficiency check is off: the rule replayed is the one without it (event logs lack its input)
        assert conf["spark.speculation"] == "true" and conf["spark.speculation.efficiency.enabled"] == "false"
        assert rule_from_conf(conf) == rule
        assert SpeculationRule.from_point(rule.point) == rule


# --- the copies: a free core of another host, once no task is pending --------------------------------

def straggling_stage(*, failed: bool = False, executor_host=(0, 1), cores=(1, 1), no_pending_from: float = 1.0,
                     copies: tuple[np.ndarray, ...] | None = None) -> CopyJob:
    """Two executors (one core each unless ``cores``): e0 runs tasks 0 then 2 (host 0: 0-1, 1-3), e1 runs
    1 then 3 (host 1: 0-1, 1-10, the straggler; ``failed``: it fails at 10). Checks every 0.25 s.
    ``copies``: the copies' latencies per draw (default: the engine's copy model, ``copy_draws``)."""
    start = np.array([0.0, 0.0, 1.0, 1.0])
    latency = np.array([1.0, 1.0, 2.0, 9.0])
    finished = np.array([True, True, True, not failed])
    checks = interval_checks(0.0, RULE.interval_s, float((start + latency).max()))
    lives = {0: [(0.0, 1.0), (1.0, 3.0)], 1: [(0.0, 1.0), (1.0, 10.0)]}   # what each executor runs
    free = np.array([[cores[e] - sum(a <= t < b for a, b in lives[e]) for e in (0, 1)] for t in checks])
    slots = ExecutorSlots(np.array(executor_host), free, np.array([0, 1, 0, 1]), no_pending_from)
    if copies is None:
        copies = tuple(copy_draws(latency, TRACE, 7, range(8), finished=finished))
    return CopyJob(TRACE, 7, np.arange(4), start, latency, finished, checks, copies, slots, 0.0, RULE)


def test_a_copy_waits_for_a_free_core_on_another_host_and_cuts_the_stage():
    job = straggling_stage(copies=(np.full(4, 2.0),))
    policy = spark_rule(job, RULE)
    # two successes of 1.0 by 1.0: threshold 1.5; tasks 2 and 3 (launched at 1.0) are over it at 2.75
    assert np.array_equal(policy.flagged_at, [np.nan, np.nan, 2.75, 2.75], equal_nan=True)
    log = copy_log(job, policy, Uncapped())
    # task 3 (host 1) waits for e0 (host 0), busy with task 2 until 3.0; task 2 (host 0) would need e1,
    # busy with task 3 throughout: it ends uncopied
    assert np.array_equal(log.start, [np.nan, np.nan, np.nan, 3.0], equal_nan=True)
    assert log.executor.tolist() == [-1, -1, -1, 0]
    # the copy runs 2 s, from 3.0 to 5.0: the stage ends at 5.0 instead of 10.0, for 2 s of 13
    (out,) = engine_outcomes(job, policy, [Uncapped()])
    assert out.copies == 1 and out.jct_reduction == pytest.approx(0.5)
    assert out.extra_machine_share == pytest.approx(2.0 / 13.0)
    # Spark schedules the stage's pending tasks first: no copy before its last launch
    later = copy_log(straggling_stage(copies=(np.full(4, 2.0),), no_pending_from=4.0), policy, Uncapped())
    assert np.array_equal(later.start, [np.nan, np.nan, np.nan, 4.0], equal_nan=True)


def test_a_copy_drawn_from_the_stages_durations_ends_the_stage_with_whichever_ends_first():
    job = straggling_stage()
    policy = spark_rule(job, RULE)
    runs = engine_outcomes(job, policy, [Uncapped()])[0]
    cuts = []
    for draw, copy in enumerate(job.copies):
        # the engine's copy model: a copy of task 3 runs as long as one of the stage's finished tasks may
        c = float(copy[3])
        assert c > 0 and math.isfinite(c)
        assert copy_log(job, policy, Uncapped(), draw).start[3] == 3.0
        cuts.append((10.0 - max(3.0, min(10.0, 3.0 + c))) / 10.0)
    # the outcome is the mean over the draws of the cut: the copy or the original, whichever ends first
    assert runs.copies == 1 and runs.jct_reduction == pytest.approx(np.mean(cuts))
    assert any(cut > 0 for cut in cuts)


def test_no_copy_on_the_originals_host_and_a_failed_originals_copy_buys_nothing():
    # both executors on host 1, e0 with 4 cores (free ones throughout): task 3 (host 1) is never copied;
    # task 2 (host 0) is, on e0, as soon as it is marked
    one_host = straggling_stage(executor_host=(1, 1), cores=(4, 1), copies=(np.full(4, 2.0),))
    log = copy_log(one_host, spark_rule(one_host, RULE), Uncapped())
    assert np.array_equal(log.start, [np.nan, np.nan, 2.75, np.nan], equal_nan=True) and log.executor[2] == 0
    (out,) = engine_outcomes(one_host, spark_rule(one_host, RULE), [Uncapped()])
    assert out.jct_reduction == 0 and out.copies == 1
    # the straggler fails at 10: its copy never finishes (the copy model's +inf), runs until the original
    # ends and buys nothing (the stage is not waiting for a failed task); it costs its 7 s
    failed = straggling_stage(failed=True)
    assert all(np.isposinf(c[3]) for c in failed.copies)
    (out,) = engine_outcomes(failed, spark_rule(failed, RULE), [Uncapped()])
    assert out.copies == 1 and out.jct_reduction == 0
    assert out.extra_machine_share == pytest.approx(7.0 / 13.0)


# --- the answer's choice: the grid's settings only -----------------------------------------------------

def test_spark_3_defaults_as_the_best_setting_are_named_by_their_grid_point():
    """The method's own point ('default', Spark 3.x's defaults) replays exactly as its twin on the grid:
    the answer names the grid's point (a setting it can write), never 'default'."""
    rng = np.random.default_rng(0)
    rows = pd.DataFrame([(j, p, 0.2 + 0.01 * rng.random() if p in (DEFAULT_POINT, SPARK_3_DEFAULTS.point) else 0.01,
                          0.001, 1.0) for j in range(30) for p in [DEFAULT_POINT, *(r.point for r in GRID)]],
                        columns=["job_id", "point", "jct_reduction", "extra_machine_share", "n_copies"])
    split = Split("rolling origin", 10, {j: tuple(range(j)) for j in range(10, 30)})
    answer = spark_answer(rows, split, 0.02, TRACE, {j: None for j in range(30)}, 1, n_boot=50)
    assert answer.now.point == SPARK_3_DEFAULTS.point and answer.recommended == SPARK_3_DEFAULTS
    assert answer.verdict().startswith(f"Set {SPARK_3_DEFAULTS.words()}: ")
    _check_answer(answer, rows, ran_off=True)


# --- held to Spark's own copies ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def cluster(spark_eventlogs, tmp_path_factory):
    """The cluster's logs staged, selected and made the engine's tables, as ``nurd-spark advise`` does
    (its stages have 8 tasks: min_tasks 2)."""
    con = duckdb.connect(str(tmp_path_factory.mktemp("cluster") / "warehouse.duckdb"))
    stage_spark(con, spark_eventlogs.eventlog_dir, min_tasks=2)
    selection = SelectionSettings(trace=TRACE, min_tasks=2)
    build_selection(con, selection)
    for table in ("job_checkpoints", "operator_tasks", "operator_checkpoints"):
        build_table(con, table, selection)
    yield con, selection
    con.close()


def test_the_replay_flags_and_copies_exactly_the_tasks_spark_copied(spark_eventlogs, cluster):
    con, _ = cluster
    rules = {a["app_id"]: rule_from_conf(a["settings"]) for a in spark_eventlogs.apps}
    replayed = replay_flags(con, TRACE, rules)
    spark = {(c.app_id, c.stage_id, c.stage_attempt, c.task_index): c for c in spark_eventlogs.copies()}
    copied = {(r.app_id, r.stage_id, r.stage_attempt, r.task_index): r for r in replayed if r.copy_s is not None}
    assert spark and set(copied) == set(spark)
    delay = scheduling_delay_s(con)
    assert 0 <= delay < 1
    for key, c in spark.items():
        r = copied[key]
        interval = rules[c.app_id].interval_s
        launch = (c.copy_launch - c.stage_submitted) / 1000
        assert r.copy_host == c.copy_host and r.original_host == c.original_host != r.copy_host
        # Spark marks a task at most one interval apart from the replay's check, then launches the copy
        # when a core of another host is free, after its scheduler's delay
        assert r.flagged_s <= launch + interval + 1e-9, key
        assert r.flagged_s <= r.copy_s
        assert abs(launch - r.copy_s) <= interval + delay + 1e-9, (key, launch, r.copy_s, delay)
    # a task the rule marks but Spark never copied found no free core of another host before it ended
    for r in replayed:
        key = (r.app_id, r.stage_id, r.stage_attempt, r.task_index)
        assert (r.copy_s is None) == (key not in spark) and (r.copy_host is None) == (r.copy_s is None)


def same(a, b) -> bool:
    """Two dataclasses equal field by field, NaN equal to NaN."""
    da, db = vars(a), vars(b)
    return da.keys() == db.keys() and all(
        x == y or (isinstance(x, float) and isinstance(y, float) and math.isnan(x) and math.isnan(y))
        for x, y in ((da[k], db[k]) for k in da))


def _check_answer(answer: SparkAnswer, rows: pd.DataFrame | None = None, *, ran_off: bool) -> None:
    """The verdict and the conf block held to the answer's own numbers; with the engine's rows, the
    choice held to them (the largest mean cut on every stage among the grid's settings within the
    budget); ``ran_off``: every application ran speculation off."""
    now, verdict, conf_text = answer.now, answer.verdict(), answer.conf()
    conf = dict(re.findall(r"^(spark\.speculation\S*)\s+(\S+)$", conf_text, re.M))
    assert answer.lines()[0] == verdict and "\n" not in verdict
    named = now.point is not None and math.isfinite(now.mde) and now.mean > now.mde
    chosen = SpeculationRule.from_point(now.point) if now.point is not None else None
    if now.point is not None:
        assert chosen in GRID and now.spend <= answer.budget + 1e-12
        assert f"{100 * now.mean:.2f}%" in verdict and f"{100 * now.spend:.2f}%" in verdict
    if named and chosen != answer.current_rule:
        # a "Set": the conf turns speculation on with the setting and the efficiency check off
        assert answer.recommended == chosen
        assert verdict.startswith(f"Set {chosen.words()}: ") and f"{100 * now.mde:.2f}%" in verdict
        assert conf["spark.speculation"] == "true" and conf["spark.speculation.efficiency.enabled"] == "false"
        assert rule_from_conf(conf) == chosen
    else:
        assert answer.recommended is None
        assert verdict.startswith("Leave speculation off: " if ran_off else "Keep your setting: "), verdict
        assert all(line.startswith("#") for line in conf_text.splitlines() if "true" in line)
        # speculation off is written only where the applications ran it off
        assert (conf.get("spark.speculation") == "false") == ran_off and "spark.speculation.quantile" not in conf
        if now.point is not None and not named:
            assert "not above" in verdict and (f"{100 * now.mde:.2f}%" in verdict or not math.isfinite(now.mde))
    if rows is None:
        return
    grid = [r.point for r in GRID]
    cut = rows.pivot_table(index="job_id", columns="point", values="jct_reduction").reindex(columns=grid).fillna(0)
    spend = rows.pivot_table(index="job_id", columns="point", values="extra_machine_share").reindex(
        columns=grid).fillna(0)
    assert now.n == len(cut)          # chosen on every stage
    within = spend.mean() <= answer.budget + 1e-12
    best = cut.mean()[within].max() if within.any() else 0.0
    if now.point is None:
        assert not best > 0
    else:
        assert now.mean == pytest.approx(best) and cut.mean()[now.point] == pytest.approx(best)


def test_the_answer_on_the_cluster_logs(spark_eventlogs, cluster):
    con, selection = cluster
    settings = Settings(trace=TRACE, min_tasks=2, min_finished=2)
    evaluation = EvaluationSettings(workers=1, min_finished=2)
    rows = outcomes(con, selection, evaluation, lambda _: None)
    n_stages = con.execute("SELECT count(*) FROM jobs WHERE trace = ?", [TRACE]).fetchone()[0]
    assert set(rows["job_id"]) and len(set(rows["job_id"])) == n_stages
    # every application ran speculation, with the cluster's one setting: point 'current' on every stage
    assert set(rows.loc[rows["point"] == CURRENT, "job_id"]) == set(rows["job_id"])
    for budget in (0.02, 1.0):
        (answer,) = spark_answers(con, TRACE, rows, [budget], n_boot=200)
        assert answer.stages == n_stages and answer.applications == len({a["app_id"] for a in spark_eventlogs.apps
                                                                         if not a["killed"]})
        assert answer.current_rule == rule_from_conf(spark_eventlogs.apps[0]["settings"])
        _check_answer(answer, rows, ran_off=False)
    # the console command's answer is this one (it builds the same tables from the same logs)
    advised, accounts = advise(spark_eventlogs.eventlog_dir, 0.02, settings=settings)
    (answer,) = spark_answers(con, TRACE, rows, [0.02], n_boot=settings.n_boot, seed=settings.seed)
    assert accounts == [] and same(advised.now, answer.now) and advised.verdict() == answer.verdict()
    assert all(same(a, b) for a, b in zip(advised.rows, answer.rows, strict=True)) and advised.conf() == answer.conf()


def test_the_answer_on_the_real_logs(spark_realdata, tmp_path):
    con = duckdb.connect(str(tmp_path / "warehouse.duckdb"))
    stage_spark(con, spark_realdata, min_tasks=100, on_bad_rows="quarantine")
    ran_off = all(rule is None for rule in application_rules(con).values())
    con.close()
    answer, accounts = advise(spark_realdata, 0.02, settings=Settings(trace=TRACE), work_dir=tmp_path)
    assert answer.stages > 50 and answer.applications >= 5
    # the truncated log and the second log of an application are each named with what was done
    assert any(a.startswith("truncated_eventlog (truncated): ") for a in accounts)
    assert any(a.startswith("malformed_json_eventlog.zstd ") for a in accounts)
    _check_answer(answer, ran_off=ran_off)
