"""The online replay engine and NURD (docs/PROTOCOL.md sections 4-5)."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest
from sklearn.dummy import DummyRegressor
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import confusion_matrix, f1_score, recall_score

from stragglers.prediction.methods.base import JobContext, Method, TaskSet
from stragglers.prediction.methods.nurd import NurdFamily, calibration_delta
from stragglers.prediction.replay.metrics import job_scores
from stragglers.prediction.replay.metrics import table3
from stragglers.prediction.replay.workers import replay_jobs
from stragglers.prediction.replay.simulate import JobData, replay_job, results_frames
from tests.jobs import make_job


def test_worked_ten_task_example():
    """rho, delta, w and flags by hand for 10 tasks (2 features)."""
    # t0: tasks 0-1 finished (F0), 2-9 running (R0)
    X0 = np.array([[0.2, 0.4], [0.4, 0.4], [0.6, 0.8], [0.6, 0.8], [0.6, 0.8],
                   [0.6, 0.8], [0.6, 0.8], [0.6, 0.8], [0.6, 0.8], [0.6, 0.8]])
    # c_F = (0.3, 0.4), c_R = (0.6, 0.8): rho = (0.09 + 0.16) / (0.09 + 0.16) = 1
    rho, delta = calibration_delta(X0[:2], X0[2:], alpha=0.5)
    assert rho == pytest.approx(1.0) and delta == pytest.approx(0.0)
    fam = NurdFamily(alpha=0.5, eps=0.05)
    fam.reset(JobContext(job_id=1, tau=100.0, t0=10.0, task_ids=np.arange(10), feature_names=("a", "b"), seed=0))
    fam.begin(TaskSet(np.arange(2), X0[:2], np.array([5.0, 10.0])), TaskSet(np.arange(2, 10), X0[2:]), 10.0)
    assert fam.delta == pytest.approx(0.0)
    fam.delta = 0.1  # as if rho = 2/3 (1/(1+2/3) - 0.5 = 0.1)
    # h: every running task is predicted 60 s; g: z = sigmoid(4 x_a - 2)
    fam.h = DummyRegressor(strategy="constant", constant=60.0).fit(X0[:2], [60.0, 60.0])
    g = LogisticRegression()
    g.classes_, g.coef_, g.intercept_ = np.array([0, 1]), np.array([[4.0, 0.0]]), np.array([-2.0])
    fam.g = g
    xa = np.array([0.0, 0.5, 0.25, 1.0])  # z = 0.1192, 0.5, 0.2689, 0.8808
    z = 1 / (1 + np.exp(-(4 * xa - 2)))
    C = TaskSet(np.arange(4), np.c_[xa, np.zeros(4)])
    y_hat, w, w_nc = fam.weights(C.X)
    # w = max(0.05, min(z + 0.1, 1)): 0.2192, 0.6, 0.3689, 0.9808
    assert w == pytest.approx([0.2192, 0.6, 0.3689, 0.9808], abs=1e-4)
    assert w_nc == pytest.approx(np.maximum(0.05, z))
    flags = fam.flag(C)
    # 60 / w >= 100 iff w <= 0.6: tasks 0, 1 (60/0.6 = 100), 2
    assert flags["nurd"].tolist() == [True, True, True, False]
    # NC: 60 / z >= 100 iff z <= 0.6
    assert flags["nurd_nc"].tolist() == [True, True, True, False]
    assert flags["gbtr"].tolist() == [False] * 4
    fam.delta = 0.5  # w = min(z + 0.5, 1) = 0.6192, 1, 0.7689, 1: 60 / w < 100 for all
    assert fam.flag(C)["nurd"].tolist() == [False] * 4


def test_worked_example_eps_and_cap():
    fam = NurdFamily(alpha=0.5, eps=0.05)
    fam.reset(JobContext(job_id=1, tau=100.0, t0=1.0, task_ids=np.arange(3), feature_names=("a",), seed=0))
    fam.delta = -0.4
    fam.h = DummyRegressor(strategy="constant", constant=6.0).fit([[0]], [6.0])
    g = LogisticRegression()
    g.classes_, g.coef_, g.intercept_ = np.array([0, 1]), np.array([[10.0]]), np.array([-5.0])
    fam.g = g
    X = np.array([[0.0], [0.5], [2.0]])  # z = 0.0067, 0.5, 0.99995
    _, w, _ = fam.weights(X)
    assert w == pytest.approx([0.05, 0.1, 0.59995], abs=1e-4)  # eps floor, z + delta, z + delta
    assert fam.flag(TaskSet(np.arange(3), X))["nurd"].tolist() == [True, False, False]  # 6/0.05 = 120


class Recorder(Method):
    """Flags the two lowest-id candidates at every checkpoint and records what it saw."""
    name = "recorder"

    def reset(self, job):
        super().reset(job)
        self.seen, self.train = [], []

    def fit(self, finished, running, t):
        self.train.append((t, finished.y.max() if len(finished) else 0.0, len(finished) + len(running)))

    def flag(self, candidates):
        self.seen.append(candidates.task_ids.copy())
        out = np.zeros(len(candidates), bool)
        out[:2] = True
        return {self.name: out}


def test_flagged_task_is_never_scored_again():
    job = make_job(n=120)
    m = Recorder()
    r = replay_job(job, m)
    flagged = set()
    for ids in m.seen:
        assert not (set(ids.tolist()) & flagged)
        flagged |= set(ids[:2].tolist())
    v = r.variants[0]
    # the first flag time is kept, and it is a checkpoint at which the task was running
    fa = v.flagged_at[~np.isnan(v.flagged_at)]
    assert set(fa) <= set(job.checkpoints[1:].tolist())
    assert np.all(job.latency[~np.isnan(v.flagged_at)] > fa)
    # only tasks running at t0 are scored; never a finished task in the training set's labels
    assert np.array_equal(v.scored, job.latency > job.t0)
    for t, ymax, n in m.train:
        assert ymax <= t and n == len(job.task_ids)


@pytest.mark.parametrize("factory", [NurdFamily, partial(NurdFamily, regressor="sklearn")])
def test_no_look_ahead(factory):
    job = make_job(n=140, seed=3)
    k_cut = len(job.checkpoints) // 2
    t_cut = job.checkpoints[k_cut]
    rng = np.random.default_rng(99)
    X = job.X.copy()
    X[k_cut + 1:] = rng.uniform(size=X[k_cut + 1:].shape)
    lat = job.latency.copy()
    running = lat > t_cut
    lat[running] = t_cut + rng.uniform(1, 5000, running.sum())  # garbage future, tau kept
    garbage = JobData(job.job_id, job.task_ids, lat, job.checkpoints, X, job.tau, job.feature_names)
    a = replay_job(job, factory(), seed=5)
    b = replay_job(garbage, factory(), seed=5)
    for va, vb in zip(a.variants, b.variants):
        early_a = np.where(va.flagged_at <= t_cut, va.flagged_at, np.nan)
        early_b = np.where(vb.flagged_at <= t_cut, vb.flagged_at, np.nan)
        assert np.array_equal(early_a, early_b, equal_nan=True), va.method
    assert any((~np.isnan(v.flagged_at)).any() for v in a.variants)  # the test has flags to compare


def test_metrics_equal_scikit_learn():
    rng = np.random.default_rng(0)
    for _ in range(20):
        y = rng.random(50) < 0.2
        p = rng.random(50) < 0.3
        s = job_scores(y, p)
        tn, fp, fn, tp = confusion_matrix(y, p, labels=[False, True]).ravel()
        assert (s["tp"], s["fp"], s["fn"], s["tn"]) == (tp, fp, fn, tn)
        assert s["tpr"] == pytest.approx(recall_score(y, p, zero_division=0))
        assert s["fpr"] == pytest.approx(fp / (fp + tn) if fp + tn else 0)
        assert s["fnr"] == pytest.approx(1 - recall_score(y, p, zero_division=0))
        assert s["f1"] == pytest.approx(f1_score(y, p, zero_division=0))


def test_bootstrap_summary_is_seeded_and_brackets_the_mean():
    jobs = [make_job(job_id=i, n=110, seed=i) for i in range(6)]
    frames = results_frames(replay_jobs(jobs, [NurdFamily], seed=1), "synthetic")
    a = table3(frames["job_metrics"], n_boot=200, seed=3)
    b = table3(frames["job_metrics"], n_boot=200, seed=3)
    assert a.equals(b)
    assert set(a.method) == {"nurd", "nurd_nc", "gbtr"}
    assert (a.f1_lo <= a.f1 + 1e-12).all() and (a.f1 <= a.f1_hi + 1e-12).all()


def test_same_seed_same_predictions_with_one_and_two_workers():
    jobs = [make_job(job_id=i, n=100 + 10 * i, seed=i) for i in range(4)]
    one = results_frames(replay_jobs(jobs, [NurdFamily], seed=7, workers=1), "synthetic")
    two = results_frames(replay_jobs(jobs, [NurdFamily], seed=7, workers=2), "synthetic")
    assert one["predictions"].equals(two["predictions"])
    assert one["job_metrics"].drop(columns="seconds").equals(two["job_metrics"].drop(columns="seconds"))
    other = results_frames(replay_jobs(jobs[:1], [partial(NurdFamily, regressor_params={"subsample": 0.7})], seed=8), "synthetic")
    assert len(other["predictions"])
