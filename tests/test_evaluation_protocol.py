"""The authors' protocol settings, each on a hand-made job with the outcome worked by hand,
and the evaluation assets on a small generated trace (real Dagster runs, a real DuckDB file)."""

from __future__ import annotations


import numpy as np
import pytest
from sklearn.dummy import DummyRegressor
from sklearn.linear_model import LogisticRegression

from stragglers.prediction.evaluation.run import method_factory
from stragglers.prediction.methods.base import JobContext, TaskSet
from stragglers.prediction.methods.nurd import NurdFamily, calibration_delta
from stragglers.prediction.methods.rules import SparkSpeculation
from stragglers.prediction.methods.survival import _censored_design
from stragglers.prediction.evaluation.ablation import ablation_variants
from stragglers.prediction.replay.protocol import adapt_job
from stragglers.settings.protocols import AUTHORS, protocol_settings
from stragglers.prediction.replay.simulate import JobData, replay_job
from stragglers.settings import EvaluationSettings, SelectionSettings, SettingError

OURS = EvaluationSettings(workers=1)


def fixed_nurd(y_hat: float, z_slope: float, delta: float, tau: float, y_min_task: float, **params) -> NurdFamily:
    """NURD with a constant regressor y_hat and propensity z = sigmoid(z_slope * x - 2)."""
    fam = NurdFamily(eps=0.05, **params)
    fam.reset(JobContext(job_id=1, tau=tau, t0=y_min_task, task_ids=np.arange(3), feature_names=("a",), seed=0))
    fam.begin(TaskSet(np.arange(1), np.zeros((1, 1)), np.array([y_min_task])), TaskSet(np.arange(1, 3), np.ones((2, 1))),
              y_min_task)
    fam.delta = delta
    fam.h = DummyRegressor(strategy="constant", constant=y_hat).fit([[0]], [y_hat])
    g = LogisticRegression()
    g.classes_, g.coef_, g.intercept_ = np.array([0, 1]), np.array([[z_slope]]), np.array([-2.0])
    fam.g = g
    return fam


def test_normalization_lowers_nurd_flags_when_the_fastest_task_is_slow():
    # x = 0.5 -> z = sigmoid(4 * 0.5 - 2) = 0.5; delta 0.1 -> w = 0.6; y_hat = 60, tau = 100
    C = TaskSet(np.arange(1), np.array([[0.5]]))
    raw = fixed_nurd(60.0, 4.0, 0.1, 100.0, y_min_task=50.0)
    assert raw.flag(C)["nurd"].tolist() == [True]            # 60 / 0.6 = 100 >= 100
    norm = fixed_nurd(60.0, 4.0, 0.1, 100.0, y_min_task=50.0, latency_normalization="job_minmax")
    assert norm.y_min == 50.0                                  # the fastest task, finished at t0
    assert norm.flag(C)["nurd"].tolist() == [False]            # (60 - 50) / 0.6 = 16.7 < 100 - 50
    assert norm.flag(C)["gbtr"].tolist() == raw.flag(C)["gbtr"].tolist()   # w = 1: unchanged
    # a fast fastest task changes little: y_min = 0.5 -> (59.5) / 0.6 = 99.2 < 99.5, still off by a hair
    tiny = fixed_nurd(60.0, 4.0, 0.1, 100.0, y_min_task=0.5, latency_normalization="job_minmax")
    assert tiny.flag(C)["nurd"].tolist() == [False]


def test_alpha_zero_keeps_the_weights_away_from_eps():
    # centroids c_F = (1, 1), c_R = (1.1, 1.1): rho = 2 / 0.02 = 100
    XF, XR = np.ones((3, 2)), np.full((3, 2), 1.1)
    rho, d_paper = calibration_delta(XF, XR, alpha=0.5)
    _, d_code = calibration_delta(XF, XR, alpha=0.0)
    assert rho == pytest.approx(100.0)
    assert d_paper == pytest.approx(1 / 101 - 0.5) and d_code == pytest.approx(1 / 101)
    C = TaskSet(np.arange(1), np.array([[0.5]]))               # z = 0.5
    # alpha 0.5: w = max(0.05, 0.5 - 0.49) = 0.05 -> 6 / 0.05 = 120 >= 100: flagged
    assert fixed_nurd(6.0, 4.0, d_paper, 100.0, 1.0).flag(C)["nurd"].tolist() == [True]
    # alpha 0: w = 0.5099 -> 6 / 0.51 = 11.8 < 100: not flagged
    assert fixed_nurd(6.0, 4.0, d_code, 100.0, 1.0).flag(C)["nurd"].tolist() == [False]


def fifty_task_job() -> JobData:
    """Latencies 10, 20, ..., 500 s; checkpoints every 50 s from t0 = 20 while < tau (451)."""
    lat = 10.0 * np.arange(1, 51)
    tau = float(np.quantile(lat, 0.9))
    cps = np.arange(20.0, tau, 50.0)
    return JobData(job_id=3, task_ids=np.arange(50), latency=lat, checkpoints=cps,
                   X=np.zeros((len(cps), 50, 0)), tau=tau, feature_names=())


def test_sorted_index_quantiles():
    job = fifty_task_job()
    assert job.tau == pytest.approx(451.0)                     # 10 * (1 + 0.9 * 49), interpolated
    out = adapt_job(job, OURS.replace(quantiles="sorted_index"))
    assert out.tau == 460.0                                    # sorted[int(0.9 * 50)] = sorted[45]
    # initial training set: latency < sorted[int(0.04 * 50)] = sorted[2] = 30 -> tasks 10 s and 20 s
    assert np.flatnonzero(out.initial).tolist() == [0, 1]
    assert out.evaluated.tolist() == (~out.initial).tolist()


def test_length_filter_drops_short_stragglers_and_long_normal_tasks():
    job = fifty_task_job()
    out = adapt_job(job, OURS.replace(test_set="length_filter"))
    # lengths ceil(y / 50): stragglers 460..500 s -> 10 each, mean 10: none below 9, all kept.
    # evaluated normal tasks 30..450 s: lengths 1..9, mean 5.28: lengths > 6.28 (y > 300 s) are dropped
    kept = job.latency[out.evaluated]
    assert kept.max() == 500.0 and set(kept[kept >= 451]) == {460.0, 470.0, 480.0, 490.0, 500.0}
    assert kept[kept < 451].max() == 300.0 and kept[kept < 451].min() == 30.0


def test_longest_straggler_horizon_extends_the_replay_past_tau():
    # latencies 10, 20, ..., 490 s and one long straggler of 800 s; tau = 451 (interpolated p90)
    lat = np.r_[10.0 * np.arange(1, 50), 800.0]
    tau = float(np.quantile(lat, 0.9))
    assert tau == pytest.approx(451.0)
    cps = np.arange(20.0, tau, 50.0)                           # 20, 70, ..., 420
    job = JobData(job_id=4, task_ids=np.arange(50), latency=lat, checkpoints=cps,
                  X=np.zeros((len(cps), 50, 0)), tau=tau, feature_names=())
    out = adapt_job(job, OURS.replace(horizon="longest_straggler"))
    # steps go on until the longest straggler's latency minus one step: 800 - 50 = 750
    assert out.checkpoints.tolist() == [*cps.tolist(), 470.0, 520.0, 570.0, 620.0, 670.0, 720.0]
    # Spark's rule with multiplier 2: at 420 s 42 tasks finished, median 215, 430 > 420: no flag
    # before tau. Past tau: at 470 s (47 finished, median 240, 480 > 470) none; at 520 s
    # (49 finished, median 250, 500 < 520) the 800 s straggler is flagged.
    late = SparkSpeculation(multiplier=2.0)
    assert replay_job(job, late).variants[0].scores["tp"] == 0
    r = replay_job(out, late).variants[0]
    assert r.scores["tp"] == 1 and r.flagged_at[49] == 520.0


def test_usage_window_latency_replaces_the_event_latency():
    job = fifty_task_job()
    usage = {i: float(job.latency[i]) for i in range(50)}
    usage[0] = 600.0          # task 0 ran 600 s of usage windows although its events span 10 s
    out = adapt_job(job, OURS.replace(latency="usage_windows"), usage)
    assert out.latency[0] == 600.0 and bool(out.labels[0])
    assert out.tau == pytest.approx(float(np.quantile(out.latency, 0.9)))
    with pytest.raises(ValueError, match="usage_windows"):
        adapt_job(job, OURS.replace(latency="usage_windows"))


def test_authors_baseline_hyperparameters():
    authors = OURS.replace(baseline_params="authors")
    assert method_factory("lof", OURS)().n_neighbors == 20
    assert method_factory("lof", authors)().n_neighbors == 15
    assert method_factory("cof", authors)().n_neighbors == 15
    assert method_factory("lscp", authors)().lof_n_neighbors == (5, 10)
    assert method_factory("xgbod", authors)().labels == "latency_above_tau"
    assert method_factory("tobit", authors)().censor_at == "max_finished"
    nurd = method_factory("nurd", OURS.replace(propensity_max_iter=100, alpha=0.0))()
    assert (nurd.propensity_max_iter, nurd.alpha) == (100, 0.0)


def test_censoring_at_the_largest_finished_latency():
    fin = TaskSet(np.arange(2), np.zeros((2, 1)), np.array([30.0, 40.0]))
    run = TaskSet(np.arange(2, 4), np.ones((2, 1)))
    _, y, cens = _censored_design(fin, run, 55.0)
    assert y.tolist() == [30.0, 40.0, 55.0, 55.0] and cens.tolist() == [False, False, True, True]
    _, y, _ = _censored_design(fin, run, 55.0, "max_finished")
    assert y.tolist() == [30.0, 40.0, 40.0, 40.0]


def test_preset_sets_every_setting_and_is_rejected_when_unknown():
    ev, sel = protocol_settings("authors", OURS, SelectionSettings())
    for name, value in AUTHORS.items():
        assert getattr(sel if name == "feature_mode" else ev, name) == value
    assert protocol_settings("ours", OURS, SelectionSettings()) == (OURS, SelectionSettings())
    with pytest.raises(ValueError, match="NURD_PROTOCOL"):
        protocol_settings("paper", OURS, SelectionSettings())
    with pytest.raises(SettingError, match="horizon"):
        OURS.replace(horizon="forever")
    labels = [label for label, _ in ablation_variants()]
    assert labels[0] == "authors" and labels[-1] == "ours" and len(labels) == len(AUTHORS) + 2
    assert "authors, alpha=0.5" in labels and "authors, feature_mode=observed" in labels


def test_default_protocol_leaves_jobs_untouched():
    job = fifty_task_job()
    assert adapt_job(job, OURS) is job
