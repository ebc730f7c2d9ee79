"""Spark's speculation rule, written once (stragglers/prediction/engine/spark_rule.py): ``flag_times``
against the rule evaluated check by check (TaskSetManager.checkSpeculatableTasks: the gate, the
threshold, strictly over, running and not succeeded), the registry's ``SparkSpeculation`` flagging at a
checkpoint what ``flag_times`` gives there, the settings' grid and names, and the setting an
application ran with read from its properties."""

from __future__ import annotations

import math

import numpy as np
import pytest

from stragglers.prediction.engine.spark_rule import (
    GRID, SPARK_3_DEFAULTS, SPARK_4_DEFAULTS, SpeculationRule, duration, flag_times, rule_from_conf, threshold,
    time_setting,
)
from stragglers.prediction.methods import METHODS
from stragglers.prediction.methods.rules import Spark4Speculation, SparkSpeculation
from stragglers.prediction.replay.simulate import JobData, replay_job

nan = np.nan


def brute_force(start, end, succeeded, checks, rule: SpeculationRule, n: int) -> np.ndarray:
    """The rule at each check, as Spark's timer runs it: once max(floor(quantile x n), 1) tasks have
    succeeded (never in a stage of one task), the threshold is max(multiplier x their median duration,
    minTaskRuntime); a task that runs at the check (started, not ended) and has run strictly longer
    is marked, for good."""
    marked = np.full(len(start), nan)
    for t in checks:
        done = succeeded & (end <= t)
        if n <= 1 or done.sum() < max(math.floor(rule.quantile * n), 1):
            continue
        thr = max(rule.multiplier * float(np.median((end - start)[done])), rule.min_task_runtime_s)
        for i in range(len(start)):
            if np.isnan(marked[i]) and start[i] <= t < end[i] and t - start[i] > thr:
                marked[i] = t
    return marked


def random_stage(rng):
    """A stage of 1-40 tasks on whole seconds (ties between a run time and the threshold happen and are
    exact): launched in waves, a few failing or killed, a few still running when the log stops (+inf)."""
    n = int(rng.integers(1, 41))
    start = rng.integers(0, 30, n).astype(float) * (rng.random(n) < 0.6)
    end = start + rng.integers(1, 60, n)
    succeeded = rng.random(n) > 0.15
    end[rng.random(n) < 0.05] = np.inf
    succeeded[np.isinf(end)] = False
    checks = np.arange(1.0, float(np.nanmax(np.where(np.isinf(end), start + 60, end))) + 2)
    rule = SpeculationRule(float(rng.choice([0.5, 0.75, 0.9, 1.0])), float(rng.choice([1.0, 1.25, 1.5, 2.0, 3.0])),
                           float(rng.choice([0.1, 5.0, 20.0])))
    return start, end, succeeded, checks, rule, n


def test_flag_times_is_the_rule_evaluated_at_every_check():
    rng = np.random.default_rng(0)
    flagged = 0
    for _ in range(400):
        start, end, succeeded, checks, rule, n = random_stage(rng)
        got = flag_times(start, end, succeeded, checks, rule, n)
        np.testing.assert_array_equal(got, brute_force(start, end, succeeded, checks, rule, n))
        flagged += int((~np.isnan(got)).sum())
    assert flagged > 300          # the cases compared flag something


def test_the_gate_the_median_and_strictly_over_worked_by_hand():
    # five tasks of 1, 2, 3, 4 and 10 s from 0, checked each half second; quantile 0.5: floor(2.5) = 2
    # successes open the gate (at 2 s): threshold 1.5 x median(1, 2) = 2.25, so the three running tasks
    # are marked at 2.5 s (run 2.5 > 2.25); at 3 s the median of 1, 2, 3 is 2 (threshold 3)
    start, end = np.zeros(5), np.array([1.0, 2.0, 3.0, 4.0, 10.0])
    checks = np.arange(0.5, 10.5, 0.5)
    rule = SpeculationRule(0.5, 1.5, 0.1)
    np.testing.assert_array_equal(flag_times(start, end, np.ones(5, bool), checks, rule), [nan, nan, 2.5, 2.5, 2.5])
    assert threshold(end[:2], 5, rule) == 2.25 and threshold(end[:1], 5, rule) == math.inf
    assert threshold(end[:4], 5, rule) == 1.5 * 2.5          # an even count: the mean of the middle two
    # multiplier 2: threshold 2 x 1.5 = 3 at 2 s, 4 at 3 s (median 2), 5 at 4 s (median 2.5): the 4 s
    # task never runs past it; the 10 s task has run exactly 5 s at 5 s (not strictly over), 5.5 s at 5.5
    two = SpeculationRule(0.5, 2.0, 0.1)
    np.testing.assert_array_equal(flag_times(start, end, np.ones(5, bool), checks, two), [nan, nan, nan, nan, 5.5])
    # minTaskRuntime above every run time: nothing
    assert np.isnan(flag_times(start, end, np.ones(5, bool), checks, SpeculationRule(0.5, 1.5, 60.0))).all()
    # a stage of one task is never speculated
    assert np.isnan(flag_times(np.zeros(1), np.array([50.0]), np.ones(1, bool), checks,
                               SpeculationRule(0.5, 1.0, 0.0))).all()


def test_every_task_counts_in_the_gate_and_a_task_that_failed_is_no_success():
    # ten tasks, seven succeed early; three end otherwise late (killed): quantile 0.75 needs 7 of 10
    # (floor 7.5): the gate opens at 7 s, the median is 4, threshold 6: the three have run 7 s then
    start, end = np.zeros(10), np.r_[np.arange(1.0, 8.0), 50.0, 60.0, 70.0]
    succeeded = np.r_[np.ones(7, bool), np.zeros(3, bool)]
    checks = np.arange(1.0, 71.0)
    np.testing.assert_array_equal(flag_times(start, end, succeeded, checks, SPARK_3_DEFAULTS), [nan] * 7 + [7.0] * 3)
    # quantile 0.9 needs 9 successes: never with three failures
    assert np.isnan(flag_times(start, end, succeeded, checks, SpeculationRule(0.9, 1.5, 0.1))).all()


def spark_job(start, latency, finished, checkpoints) -> JobData:
    n = len(latency)
    return JobData(job_id=1, task_ids=np.arange(n), latency=np.asarray(latency, float),
                   checkpoints=np.asarray(checkpoints, float), X=np.zeros((len(checkpoints), n, 1)),
                   tau=float(np.quantile(latency, 0.9)), feature_names=("f",), finished=np.asarray(finished, bool),
                   start=np.asarray(start, float))


@pytest.mark.parametrize("rule", [SPARK_3_DEFAULTS, SPARK_4_DEFAULTS, SpeculationRule(0.5, 1.25, 5.0)])
def test_the_registrys_rule_flags_at_each_checkpoint_what_flag_times_gives_there(rule):
    """``methods.rules.SparkSpeculation`` replayed on a job's checkpoints (wall clock, tasks that do not
    finish) flags each task at the check ``flag_times`` gives for the checks after t0."""
    rng = np.random.default_rng(3)
    compared = 0
    for _ in range(25):
        start, end, succeeded, checks, _, n = random_stage(rng)
        if n < 3:
            continue
        end = np.where(np.isinf(end), start + 90.0, end)       # a replay's tasks all end in the record
        t0 = float(np.sort(end)[0])
        cps = np.r_[t0, checks[checks > t0]]
        job = spark_job(start, end - start, succeeded, cps)
        got = replay_job(job, SparkSpeculation(rule.quantile, rule.multiplier, rule.min_task_runtime_s)).variants[0]
        np.testing.assert_array_equal(got.flagged_at, flag_times(start, end, succeeded, cps[1:], rule, n))
        compared += int((~np.isnan(got.flagged_at)).sum())
    assert compared > 0
    assert SparkSpeculation().rule == SPARK_3_DEFAULTS and Spark4Speculation().rule == SPARK_4_DEFAULTS
    assert METHODS["spark4_speculation"]().rule == SPARK_4_DEFAULTS


def test_the_grid_holds_both_default_sets_and_a_setting_reads_back_from_its_point():
    assert len(GRID) == len(set(GRID)) == 3 * 7 * 6
    assert SPARK_3_DEFAULTS in GRID and SPARK_4_DEFAULTS in GRID
    assert all(SpeculationRule.from_point(r.point) == r for r in GRID)
    assert len({r.point for r in GRID}) == len(GRID)
    assert SPARK_3_DEFAULTS.point == "q0.75-m1.5-min0.1"
    with pytest.raises(ValueError, match="quantile"):
        SpeculationRule(0.0, 1.5, 0.1)
    with pytest.raises(ValueError, match="multiplier"):
        SpeculationRule(0.5, 0.0, 0.1)


def test_the_rule_an_application_ran_with_is_read_from_its_properties():
    assert rule_from_conf({}) is None and rule_from_conf({"spark.speculation": "false"}) is None
    # a key it does not set takes Spark's default (4.0's here); a bare number is milliseconds
    assert rule_from_conf({"spark.speculation": "true"}) == SPARK_4_DEFAULTS
    got = rule_from_conf({"spark.speculation": " TRUE ", "spark.speculation.quantile": "0.5",
                          "spark.speculation.multiplier": "2", "spark.speculation.minTaskRuntime": "5s",
                          "spark.speculation.interval": "250"})
    assert got == SpeculationRule(0.5, 2.0, 5.0, 0.25)
    assert rule_from_conf({"spark.speculation": "true", "spark.speculation.minTaskRuntime": "1min"},
                          default=SPARK_3_DEFAULTS) == SpeculationRule(0.75, 1.5, 60.0)
    with pytest.raises(ValueError, match="not a Spark time"):
        time_setting("5 parsecs", "spark.speculation.minTaskRuntime")
    # the block the project writes reads back as the same rule
    for rule in (SPARK_3_DEFAULTS, SpeculationRule(0.9, 8.0, 300.0, 1.0), SpeculationRule(0.5, 1.1, 0.1)):
        conf = dict(line.split(None, 1) for line in rule.conf().splitlines())
        assert rule_from_conf(conf) == rule and conf["spark.speculation.efficiency.enabled"] == "false"
    assert (duration(5.0), duration(0.1), duration(1.5)) == ("5s", "100ms", "1500ms")
