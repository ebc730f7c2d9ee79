"""Spark's speculation rule replayed on staged stage attempts
(stragglers/prediction/spark_speculation.py): its semantics on stages made by hand, its agreement
with the copies a real Spark made (the cluster's logs), and the operator's answer on the cluster's
logs and on the real logs."""

from __future__ import annotations

import math
import re

import duckdb
import numpy as np
import pytest

from stragglers.prediction import spark_speculation as sp
from stragglers.warehouse.spark_staging import stage_spark


def stage_of(durations: list[tuple[float, float, str]], *, tasks: int | None = None, hosts=None) -> sp.StageAttempt:
    """A stage attempt whose task i runs from durations[i][0] to durations[i][1] (ms from submission,
    NaN: still running) and ends as durations[i][2]."""
    n = len(durations)
    launch = np.array([d[0] for d in durations], float)
    return sp.StageAttempt("app", 0, 0, 0, tasks or n, 0.0, 0.0, math.nan, np.arange(n), np.zeros(n, bool),
                           np.array([d[2] for d in durations]), np.array([f"e{i % 2}" for i in range(n)]),
                           np.array(hosts or [f"h{i % 2}" for i in range(n)]), launch,
                           np.array([d[1] for d in durations], float))


RULE = sp.SpeculationRule("test", 0.5, 1.5, 100.0, 100.0)


def test_no_check_before_the_quantile_of_tasks_has_succeeded():
    # 4 tasks: floor(0.5 * 4) = 2 successes needed; the second comes at 1000 ms
    st = stage_of([(0, 300, "success"), (0, 1000, "success"), (0, math.nan, "running"), (0, math.nan, "running")])
    flags = sp.spark_rule_flags(st, RULE)
    # median (300 + 1000) / 2 = 650, threshold 975: past it and past the 2nd success, first check 1000
    assert flags == {2: (1000.0, 2), 3: (1000.0, 3)}


def test_runtime_must_exceed_the_threshold_strictly_at_a_check():
    # successes of 400 and 400 by 400 ms: threshold 600; a task launched at 100 runs 600 at 700,
    # not over it: flagged at the next check, 800
    st = stage_of([(0, 400, "success"), (0, 400, "success"), (100, math.nan, "running"), (0, 500, "success")])
    assert sp.spark_rule_flags(st, RULE)[2] == (800.0, 2)


def test_min_task_runtime_floors_the_threshold():
    st = stage_of([(0, 10, "success"), (0, 10, "success"), (0, math.nan, "running"), (0, math.nan, "running")])
    assert sp.spark_rule_flags(st, RULE)[2][0] == 200.0        # threshold max(15, 100): first check over 100
    slow = sp.SpeculationRule("slow", 0.5, 1.5, 1000.0, 100.0)
    assert sp.spark_rule_flags(st, slow)[2][0] == 1100.0


def test_a_task_that_ends_or_succeeds_before_the_check_is_not_flagged_and_one_task_never():
    # threshold max(1.5 * 100, 100) = 150 from 100 ms on: the first check over it is 200
    st = stage_of([(0, 100, "success"), (0, 100, "success"), (0, 190, "success"), (0, 180, "failed")])
    assert sp.spark_rule_flags(st, RULE) == {}
    st = stage_of([(0, 100, "success"), (0, 100, "success"), (0, 250, "success"), (0, 180, "failed")])
    assert sp.spark_rule_flags(st, RULE) == {2: (200.0, 2)}
    assert sp.spark_rule_flags(stage_of([(0, math.nan, "running")]), RULE) == {}


def test_efficiency_lower_bound_flags_later():
    st = stage_of([(0, 400, "success"), (0, 400, "success"), (0, math.nan, "running"), (0, math.nan, "running")])
    plain = sp.spark_rule_flags(st, RULE)
    bound = sp.spark_rule_flags(st, RULE, long_run_factor=2.0)
    assert set(bound) == set(plain) and all(bound[i][0] > plain[i][0] for i in plain)


def test_rule_from_an_applications_properties():
    rule = sp.rule_from_conf({"spark.speculation.quantile": "0.5", "spark.speculation.interval": "1s",
                              "spark.speculation.minTaskRuntime": "500"})
    assert (rule.quantile, rule.multiplier, rule.min_task_runtime_ms, rule.interval_ms) == (0.5, 3.0, 500.0, 1000.0)
    with pytest.raises(ValueError, match="spark.speculation.interval='soon'"):
        sp.rule_from_conf({"spark.speculation.interval": "soon"})


def test_spark_4_defaults_are_named_beside_spark_3():
    assert (sp.SPARK_4_DEFAULTS.quantile, sp.SPARK_4_DEFAULTS.multiplier) == (0.9, 3.0)
    assert (sp.SPARK_3_DEFAULTS.quantile, sp.SPARK_3_DEFAULTS.multiplier) == (0.75, 1.5)
    assert "spark.speculation.multiplier        3" in sp.SPARK_4_DEFAULTS.conf()


# --- the copies: a free slot of another host, after the pending tasks -------------------------------

def test_a_copy_waits_for_a_free_core_on_another_host_and_cuts_the_stage():
    # two one-core executors; task 3 (host h1) straggles to 5000 ms; e0 is free from 1200 on
    st = stage_of([(0, 500, "success"), (0, 600, "success"), (500, 1200, "success"), (600, 5000, "success")])
    slots = sp.Slots({"e0": "h0", "e1": "h1"}, {"e0": 1, "e1": 1}, {"e0": 0.0, "e1": 0.0},
                     {"e0": math.inf, "e1": math.inf},
                     {"e0": np.array([0.0, 500.0]), "e1": np.array([0.0, 600.0])},
                     {"e0": np.array([500.0, 1200.0]), "e1": np.array([600.0, 5000.0])})
    # the 3rd success (1200) makes the median 600, threshold 900: task 3 is over it at the check 1600
    assert sp.spark_rule_flags(st, RULE)[3] == (1600.0, 3)
    assert sp.place_copy(st, 3, 1600.0, slots) == ("e0", 1600.0)
    # e0 holds task 2 until 1200: a copy flagged earlier waits for the core
    assert sp.place_copy(st, 3, 900.0, slots) == ("e0", 1200.0)
    # the copy's duration is drawn from the stage's successful durations (500, 600, 700, 4400): the
    # copy runs from 1600 until it or the original (5000) ends, and the stage ends with the first
    outs = [sp.replay_policy([st], {0: slots}, RULE, seed=seed)[0] for seed in range(8)]
    for out in outs:
        assert out.copies == 1 and out.extra_ms in (500.0, 600.0, 700.0, 3400.0)
        assert out.cut_ms == 3400.0 - out.extra_ms
    assert any(out.cut_ms > 0 for out in outs)
    assert outs[3] == sp.replay_policy([st], {0: slots}, RULE, seed=3)[0]


def test_no_copy_on_the_originals_host_and_a_failed_originals_copy_buys_nothing():
    st = stage_of([(0, 500, "success"), (0, 600, "success"), (500, 1200, "success"), (600, 5000, "failed")],
                  hosts=["h0", "h1", "h0", "h1"])
    one_host = sp.Slots({"e1": "h1"}, {"e1": 4}, {"e1": 0.0}, {"e1": math.inf},
                        {"e1": np.array([0.0, 600.0])}, {"e1": np.array([600.0, 5000.0])})
    assert sp.place_copy(st, 3, 1000.0, one_host) is None
    slots = sp.Slots({"e0": "h0", "e1": "h1"}, {"e0": 1, "e1": 1}, {"e0": 0.0, "e1": 0.0},
                     {"e0": math.inf, "e1": math.inf},
                     {"e0": np.array([0.0, 500.0]), "e1": np.array([0.0, 600.0])},
                     {"e0": np.array([500.0, 1200.0]), "e1": np.array([600.0, 5000.0])})
    for seed in range(4):
        (out,) = sp.replay_policy([st], {0: slots}, RULE, seed=seed)
        assert out.copies == 1 and out.extra_ms > 0 and out.cut_ms == 0


# --- held to Spark's own copies ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def cluster_stages(spark_eventlogs, tmp_path_factory):
    con = duckdb.connect(str(tmp_path_factory.mktemp("cluster") / "warehouse.duckdb"))
    # the applications' stages have 8 tasks
    stage_spark(con, spark_eventlogs.eventlog_dir, min_tasks=2)
    yield con, sp.load_stages(con), sp.load_slots(con)
    con.close()


def test_the_replay_flags_and_copies_exactly_the_tasks_spark_copied(spark_eventlogs, cluster_stages):
    con, stages, slots = cluster_stages
    rules = {a["app_id"]: sp.rule_from_conf(a["settings"]) for a in spark_eventlogs.apps}
    replayed = sp.replay_flags(stages, slots, rules)
    spark = {(c.app_id, c.stage_id, c.stage_attempt, c.task_index): c for c in spark_eventlogs.copies()}
    copied = {(r.app_id, r.stage_id, r.stage_attempt, r.task_index): r for r in replayed if r.copy_ms is not None}
    assert spark and set(copied) == set(spark)
    delay = sp.scheduling_delay_ms(stages)
    for key, c in spark.items():
        r = copied[key]
        interval = rules[c.app_id].interval_ms
        launch = c.copy_launch - c.stage_submitted
        assert r.copy_host == c.copy_host and r.original_host == c.original_host != r.copy_host
        # Spark marks a task at most one interval apart from the replay's check, then launches the
        # copy when a core of another host is free, after its scheduler's delay
        assert r.flagged_ms <= launch + interval, key
        assert abs(launch - r.copy_ms) <= interval + delay, (key, launch, r.copy_ms, delay)
    # a task the rule flags but Spark never copied found no free core of another host before it ended
    for r in replayed:
        key = (r.app_id, r.stage_id, r.stage_attempt, r.task_index)
        assert (r.copy_ms is None) == (key not in spark)


def test_the_answer_on_the_cluster_logs(cluster_stages):
    con, stages, slots = cluster_stages
    ans = sp.answer(stages, slots, budget_pct=100.0)
    n_stages = con.execute("SELECT count(DISTINCT (log_id, stage_id, stage_attempt)) "
                           "FROM spark_replay_attempts").fetchone()[0]
    assert ans.stages == n_stages == len(stages)
    assert ans.applications == con.execute("SELECT count(DISTINCT app_id) FROM spark_replay_attempts").fetchone()[0]
    assert ans.set_aside + ans.one_host + ans.earlier + ans.later == ans.stages
    assert ans.text().startswith(f"On your {ans.stages} stages ({ans.applications} applications): ")
    _check_answer(ans)


def _check_answer(ans: sp.Answer):
    if ans.chosen is None:
        assert "nothing to set" in ans.text() and ans.conf().endswith("spark.speculation                   false\n")
        return
    chosen_score = dict(ans.tuning)[ans.chosen]
    assert chosen_score.extra_pct <= ans.budget_pct and chosen_score.copies > 0
    assert all(s.cut_pct <= chosen_score.cut_pct for _, s in ans.tuning if s.extra_pct <= ans.budget_pct and s.copies)
    conf = dict(re.findall(r"^(spark\.speculation\S*)\s+(\S+)$", ans.conf(), re.M))
    assert conf["spark.speculation"] == "true"
    assert sp.rule_from_conf(conf).quantile == ans.chosen.quantile
    lo, hi = ans.chosen_ci
    assert lo <= ans.chosen_later.cut_pct <= hi


def test_the_answer_on_the_real_logs(spark_realdata, tmp_path):
    con = duckdb.connect(str(tmp_path / "warehouse.duckdb"))
    stage_spark(con, spark_realdata, min_tasks=100, on_bad_rows="quarantine")
    stages, slots = sp.load_stages(con), sp.load_slots(con)
    ans = sp.answer(stages, slots, budget_pct=5.0)
    selected_with_tasks, short = con.execute("""
        SELECT count(*), count(*) FILTER (m IS NULL OR m < 100) FROM (
            SELECT s.log_id, s.stage_id, s.stage_attempt,
                   median(t.finish_us - t.launch_us) FILTER (t.outcome = 'success') / 1000.0 AS m
            FROM stg_spark_stages s JOIN stg_spark_tasks t USING (log_id, stage_id, stage_attempt)
            WHERE s.selected GROUP BY ALL)""").fetchone()
    assert ans.stages == selected_with_tasks and ans.set_aside == short
    # local-mode applications: one host, where Spark never copies
    assert ans.one_host == sum(1 for s in stages if s.app_id.startswith("local-") and s.median_success_ms >= 100)
    assert ans.text().startswith(f"On your {ans.stages} stages ({ans.applications} applications): ")
    _check_answer(ans)
    con.close()
