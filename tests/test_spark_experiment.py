"""The speculation experiment's workload on a real Spark cluster (tests/spark_workload.py,
studies/spark/cluster_experiment.py), small: the slow host's tasks sleep k times longer than the fast
host's, speculation on makes copies and off makes none, and the experiment's measurement of stage-time
cut and extra executor time is what the event logs say."""

from __future__ import annotations

import math
import statistics
from pathlib import Path

import pytest

from studies.spark.experiment_measurement import cut_pct, mean_stage_ms, measure
from studies.spark.experiment_prediction import predict
from studies.spark.experiment_workload import (
    DEFAULTS, OFF, OFF_CONF, RECOMMENDED, SETTINGS, Workload, run_application,
)
from tests import spark_cluster, spark_workload
from tests.spark_cluster import read_events

# A sleep well above PySpark's own time per task (0.2 to 1 s of CPU on a loaded two-core machine)
WORKLOAD = Workload(stages=2, tasks=12, base_seconds=0.8, skewed=1, skew=2.0, slowdown=3.0, cores=2)
# An eager rule: a slow-host task (more than twice the median, run mostly on the fast host) is over
# its threshold, and copied once the last wave leaves a fast slot free
EAGER = {"spark.speculation": "true", "spark.speculation.quantile": "0.5", "spark.speculation.multiplier": "1.5",
         "spark.speculation.minTaskRuntime": "100ms", "spark.speculation.interval": "100ms",
         "spark.speculation.efficiency.enabled": "false"}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The off run and the eager run, on one cluster: {name: (driver's result, its event log)}."""
    reason = spark_cluster.java_missing_reason()
    if reason:
        pytest.skip(reason)
    out = tmp_path_factory.mktemp("experiment")
    ran = {}
    with spark_workload.slowed_cluster(out / "cluster", WORKLOAD.slow_host, WORKLOAD.slowdown,
                                       WORKLOAD.cores) as cluster:
        for name, conf in (("off", OFF_CONF), ("eager", EAGER)):
            result = run_application(cluster, WORKLOAD, name, conf, out / "eventlogs" / name)
            ran[name] = result, Path(result["log"])
    assert spark_cluster.processes_under(out / "cluster") == []
    return ran


def _attempts(log):
    """(task info, end reason) of every attempt of the workload's stages, read by the harness's reader."""
    return [(e["Task Info"], e["Task End Reason"]["Reason"]) for e in read_events(log)
            if e["Event"] == "SparkListenerTaskEnd" and e["Stage ID"] > 0]   # stage 0: the warm-up


def test_the_slowdown_reaches_the_slow_hosts_executors_only(runs):
    fast = next(h for h in spark_cluster.WORKER_HOSTS if h != WORKLOAD.slow_host)
    for result, _ in runs.values():
        assert result["slowdown_by_host"] == {WORKLOAD.slow_host: [WORKLOAD.slowdown], fast: [1.0]}


def test_the_slow_hosts_tasks_take_k_times_the_sleep(runs):
    """Tasks of base work that are not copies: the slow host's sleep k x base, the fast host's base,
    PySpark's own time per task alike on both (it varies with the machine's load: the bounds leave it
    room), so the medians differ by about (k - 1) x base and their ratio is a little under k."""
    result, log = runs["off"]
    skewed = {p for s in range(WORKLOAD.stages) for p in WORKLOAD.skewed_partitions(s)}
    by_host: dict[str, list[float]] = {}
    for info, reason in _attempts(log):
        if reason == "Success" and not info["Speculative"] and info["Index"] not in skewed:
            by_host.setdefault(info["Host"], []).append(info["Finish Time"] - info["Launch Time"])
    slow = statistics.median(by_host.pop(WORKLOAD.slow_host))
    (fast,) = (statistics.median(d) for d in by_host.values())
    expected = (WORKLOAD.slowdown - 1) * WORKLOAD.base_seconds * 1000
    assert 0.6 * expected < slow - fast < 1.4 * expected, (slow, fast)
    assert 0.6 * WORKLOAD.slowdown < slow / fast < 1.2 * WORKLOAD.slowdown, (slow, fast)


def test_speculation_on_copies_and_off_does_not(runs):
    copies = {name: sum(info["Speculative"] for info, _ in _attempts(log)) for name, (_, log) in runs.items()}
    assert copies["off"] == 0 and copies["eager"] >= 1
    assert all(c.copy_host != c.original_host for c in spark_cluster.speculative_copies(runs["eager"][1]))


def test_the_measurement_is_what_the_logs_say(runs):
    measured = {name: measure(log, WORKLOAD.tasks) for name, (_, log) in runs.items()}
    for name, (_, log) in runs.items():
        m, attempts = measured[name], _attempts(log)
        stages = [e["Stage Info"] for e in read_events(log) if e["Event"] == "SparkListenerStageCompleted"
                  and e["Stage Info"]["Number of Tasks"] == WORKLOAD.tasks]
        assert m.stage_ms == tuple(s["Completion Time"] - s["Submission Time"] for s in stages)
        assert len(m.stage_ms) == WORKLOAD.stages
        run_ms = {spec: sum(i["Finish Time"] - i["Launch Time"] for i, _ in attempts if i["Speculative"] == spec)
                  for spec in (False, True)}
        assert (m.attempt_ms, m.copy_ms) == (run_ms[False], run_ms[True])
        assert m.copies == sum(i["Speculative"] for i, _ in attempts)
        assert (m.extra_pct > 0) == (m.copies > 0)
        assert m.copies_won == sum(i["Speculative"] and r == "Success" for i, r in attempts) == len(m.won_copy_hosts)
    off, eager = measured["off"], measured["eager"]
    assert off.extra_pct == 0 and cut_pct(off, mean_stage_ms([off])) == 0
    assert cut_pct(eager, list(off.stage_ms)) == pytest.approx(
        100 * (sum(off.stage_ms) - sum(eager.stage_ms)) / sum(off.stage_ms))
    # every task of every workload stage started once on one of the two hosts
    assert len(eager.original_host) == WORKLOAD.stages * WORKLOAD.tasks
    assert set(eager.original_host.values()) == set(spark_cluster.WORKER_HOSTS)


def test_the_prediction_on_the_off_run(runs):
    """``predict`` (the one call of the advice) reads the off run's stages and gives each setting its
    keys to run with and, on the stages it scores, a cut inside its interval (NaN where it scores
    none: two stages are fewer than the advice needs before the first it scores)."""
    prediction = predict(runs["off"][1].parent, WORKLOAD.tasks)
    assert set(prediction.settings) == set(SETTINGS) and prediction.stages == WORKLOAD.stages
    assert prediction.advice and prediction.settings[OFF].rule is None
    for p in prediction.settings.values():
        assert p.cut_lo <= p.cut_pct <= p.cut_hi or (prediction.scored == 0 and math.isnan(p.cut_pct))
    recommended = prediction.settings[RECOMMENDED]
    if recommended.rule is not None:
        assert recommended.conf["spark.speculation"] == "true"
        assert float(recommended.conf["spark.speculation.quantile"]) == recommended.rule.quantile
    assert prediction.settings[DEFAULTS].conf == {"spark.speculation": "true"}
