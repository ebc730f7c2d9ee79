"""Reference rules and earliness metrics on hand-made jobs (answers worked by hand)."""

from __future__ import annotations

import numpy as np
import pytest

from stragglers.prediction.methods.rules import FlagAll, SparkSpeculation, WaitForTau
from stragglers.prediction.replay.metrics import f1_auc, median_lead
from stragglers.prediction.replay.simulate import JobData, replay_job


def ten_task_job() -> JobData:
    """10 tasks, latencies 10..100 s; t0 = 10 (task 0 finished), tau = 91 (p90 of
    10..100 interpolated: 90 + 0.1 * 10), checkpoints 10, 30, 50, 70, 90.
    Stragglers (y >= 91): task 9 (100 s). Scored: tasks 1..9 (running at t0)."""
    latency = np.arange(10, 101, 10, dtype=float)
    checkpoints = np.array([10.0, 30.0, 50.0, 70.0, 90.0])
    tau = float(np.quantile(latency, 0.9))
    assert tau == pytest.approx(91.0)
    X = np.zeros((len(checkpoints), 10, 0))     # the rules read no features
    return JobData(job_id=7, task_ids=np.arange(10), latency=latency, checkpoints=checkpoints, X=X,
                   tau=tau, feature_names=())


def replay(method):
    """The ten-task job replayed with ``method``: the result and when each task was flagged."""
    r = replay_job(ten_task_job(), method)
    return r, r.variants[0].flagged_at


def flagged(at: dict[int, float]) -> np.ndarray:
    """Expected flag times of the ten tasks: ``at`` task -> time, NaN for the others."""
    out = np.full(10, np.nan)
    out[list(at)] = list(at.values())
    return out


def test_flag_all_flags_every_running_task_at_t1():
    r, flags = replay(FlagAll())
    # at t1 = 30: tasks 0, 1, 2 have finished (y <= 30); 3..9 flagged at 30
    np.testing.assert_array_equal(flags, flagged({task: 30.0 for task in range(3, 10)}))
    s = r.variants[0].scores
    # scored 1..9: labels only task 9; predicted 3..9: tp 1, fp 6, fn 0, tn 2
    assert (s["tp"], s["fp"], s["fn"], s["tn"]) == (1, 6, 0, 2)
    assert s["f1"] == pytest.approx(2 / (2 + 6))
    # lead of task 9: (100 - 30) / 91
    assert s["median_lead"] == pytest.approx(70 / 91)


def test_wait_for_tau_flags_at_the_last_checkpoint_before_tau():
    r, flags = replay(WaitForTau())
    # last checkpoint < 91 is 90: only task 9 (100 s) still runs
    np.testing.assert_array_equal(flags, flagged({9: 90.0}))
    s = r.variants[0].scores
    assert (s["tp"], s["fp"], s["fn"], s["tn"], s["f1"]) == (1, 0, 0, 8, 1.0)
    assert s["median_lead"] == pytest.approx(10 / 91)
    # F1 over time: cutoffs 10 + 8.1 k; the flag at 90 counts from k = 10 (cutoff 91) only
    np.testing.assert_array_equal(r.variants[0].f1_over_time, [0] * 9 + [1])
    assert s["f1_auc"] == pytest.approx(0.1)


def test_spark_speculation_waits_for_the_quantile_then_compares_elapsed_time():
    _, flags = replay(SparkSpeculation())
    # Spark's gate max(floor(0.75 x 10), 1) = 7 finished (y <= t): first at t = 70 (tasks 0..6).
    # median of finished 10..70 = 40; 1.5 x 40 = 60 < 70: tasks 7, 8, 9 flagged at 70.
    np.testing.assert_array_equal(flags, flagged({task: 70.0 for task in (7, 8, 9)}))
    # quantile 0.5: at t = 50 tasks 0..4 finished (5 >= 5), median 30, 1.5 x 30 = 45 < 50:
    # tasks 5..9 flagged at 50 (tp 1, fp 4, tn 4)
    r, flags = replay(SparkSpeculation(quantile=0.5))
    np.testing.assert_array_equal(flags, flagged({task: 50.0 for task in range(5, 10)}))
    s = r.variants[0].scores
    assert (s["tp"], s["fp"], s["fn"], s["tn"]) == (1, 4, 0, 4)
    assert s["f1"] == pytest.approx(2 / (2 + 4))
    # multiplier 2: 2 x 30 = 60 > 50 at t = 50; at 70 (7 finished, median 40, 80 > 70) no;
    # at 90 (9 finished, median 50, 100 > 90) no: nothing flagged
    r, flags = replay(SparkSpeculation(quantile=0.5, multiplier=2.0))
    assert np.isnan(flags).all()
    assert np.isnan(r.variants[0].scores["median_lead"])


def test_spark_speculation_rejects_bad_settings():
    with pytest.raises(ValueError, match="quantile"):
        SparkSpeculation(quantile=0)
    with pytest.raises(ValueError, match="multiplier"):
        SparkSpeculation(multiplier=-1)
    with pytest.raises(TypeError):
        SparkSpeculation(quantil=0.5)   # unknown hyperparameters are rejected


def test_f1_auc_and_median_lead_by_hand():
    assert f1_auc(np.array([0, 0, 0.5, 0.5, 1, 1, 1, 1, 1, 1])) == pytest.approx(0.7)
    labels = np.array([True, True, True, False])
    flagged = np.array([20.0, np.nan, 60.0, 10.0])      # tp: tasks 0 and 2
    latency = np.array([120.0, 150.0, 100.0, 50.0])
    # leads (120 - 20) / 100 = 1.0 and (100 - 60) / 100 = 0.4: median 0.7
    assert median_lead(labels, flagged, latency, 100.0) == pytest.approx(0.7)
    assert np.isnan(median_lead(labels, np.full(4, np.nan), latency, 100.0))
