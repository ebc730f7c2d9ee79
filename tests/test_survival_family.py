"""The survival family (issue 27) on hand-made jobs with known answers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from stragglers.prediction.methods import METHODS, JobContext, TaskSet
from stragglers.prediction.methods.survival import SurvivalJob, fit_tobit
from stragglers.prediction.threshold import conditional_survival


def _job(n: int, tau: float, names=("x",)) -> JobContext:
    return JobContext(job_id=1, tau=tau, t0=0.0, task_ids=np.arange(n), feature_names=tuple(names), seed=0)


def _sets(y: np.ndarray, X: np.ndarray, t: float) -> tuple[TaskSet, TaskSet]:
    done = y <= t
    ids = np.arange(len(y))
    return TaskSet(ids[done], X[done], y[done]), TaskSet(ids[~done], X[~done])


def test_the_censored_log_normal_fit_is_lifelines_aft():
    from lifelines import LogNormalAFTFitter

    rng = np.random.default_rng(7)
    x = rng.normal(size=400)
    y = np.exp(2.0 + 0.6 * x + 0.4 * rng.normal(size=400))
    c = np.quantile(y, 0.7)
    cens = y > c
    obs = np.minimum(y, c)
    beta, sigma = fit_tobit(x[:, None], np.log(obs), cens)
    ref = LogNormalAFTFitter().fit(pd.DataFrame({"x": x, "T": obs, "E": ~cens}), "T", "E")
    assert beta[0] == pytest.approx(ref.params_["mu_"]["Intercept"], abs=1e-3)
    assert beta[1] == pytest.approx(ref.params_["mu_"]["x"], abs=1e-3)
    assert sigma == pytest.approx(np.exp(ref.params_["sigma_"]["Intercept"]), abs=1e-3)


def test_a_feature_that_doubles_latency_is_flagged_first():
    rng = np.random.default_rng(3)
    n = 400
    x = (np.arange(n) % 2).astype(float)                       # half the tasks: x = 1
    y = 100.0 * (1.0 + x) * np.exp(0.4 * rng.normal(size=n))   # x = 1 doubles the latency
    tau = float(np.quantile(y, 0.9))
    t = 150.0                                                  # most x=0 tasks done, a third of x=1
    finished, running = _sets(y, x[:, None], t)
    m = SurvivalJob(threshold=0.5)
    m.reset(_job(n, tau))
    m.fit(finished, running, t)
    p = m.conditional_survival(running.X)
    doubled, plain = p[running.X[:, 0] == 1], p[running.X[:, 0] == 0]
    assert len(plain) > 0 and len(doubled) > 0
    assert doubled.min() > plain.max()                         # every x=1 task ranks above every x=0 one
    m.threshold = float(plain.max() + doubled.min()) / 2      # any threshold between them flags x=1 only
    assert np.array_equal(m.flag(running), running.X[:, 0] == 1)
    assert m.beta_[1] == pytest.approx(np.log(2.0), abs=0.15)  # the model sees the doubling


def test_without_an_informative_feature_it_is_the_kaplan_meier_rule():
    rng = np.random.default_rng(5)
    n = 300
    y = np.exp(4.0 + 0.5 * rng.normal(size=n))
    X = np.ones((n, 2))                                        # constant features: nothing to learn
    tau = float(np.quantile(y, 0.9))
    for t in (np.quantile(y, 0.3), np.quantile(y, 0.6), np.quantile(y, 0.85)):
        finished, running = _sets(y, X, float(t))
        m = SurvivalJob(threshold=0.5)
        m.reset(_job(n, tau, names=("a", "b")))
        m.fit(finished, running, float(t))
        p = m.conditional_survival(running.X)
        km = conditional_survival(finished.y, len(running), float(t), tau)   # the KM rule's estimate
        assert np.allclose(p, km, atol=1e-4), (t, p[:3], km)
        km_rule = METHODS["km_survival"]()
        km_rule.reset(_job(n, tau, names=("a", "b")))
        km_rule.fit(finished, running, float(t))
        assert np.array_equal(m.flag(running), km_rule.flag(running))


def test_survival_job_is_a_registered_baseline_with_explicit_hyperparameters():
    from stragglers.prediction.methods import BASELINES

    assert BASELINES["survival_job"] is SurvivalJob
    assert SurvivalJob().get_params() == {"threshold": 0.5, "max_iter": 1000}
    with pytest.raises(ValueError, match="threshold"):
        SurvivalJob(threshold=1.5)
