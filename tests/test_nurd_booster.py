"""NURD's regressor without the scikit-learn wrapper gives the wrapper's predictions bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from stragglers.prediction.methods.nurd import BoosterFit, make_regressor


@pytest.mark.parametrize("n, params", [(3, {}), (60, {}), (400, {}), (150, {"subsample": 0.7}),
                                       (150, {"max_depth": 5, "n_estimators": 30})])
def test_booster_fit_predicts_exactly_as_xgbregressor(n, params):
    rng = np.random.default_rng(n)
    X, Xc = rng.random((n, 15)), rng.random((50, 15))
    X[:, 3] = 0.5                                   # a constant column, as min-max features often have
    y = 600 + 1000 * X[:, 0] + 50 * rng.random(n)
    wrapper = make_regressor("xgboost", 11, **params).fit(X, y).predict(Xc)
    direct = BoosterFit(make_regressor("xgboost", 11, **params)).fit(X, y).predict(Xc)
    assert wrapper.dtype == direct.dtype and np.array_equal(wrapper, direct)


def test_twenty_rounds_flag_as_the_authors_hundred_on_an_easy_job():
    """The default ensemble (20 rounds of 0.5) and the authors' (100 rounds of 0.1, the same total
    step) flag the same tasks at the same checkpoints on an easy job. Tasks 0-29 finish at
    100-390 s, 30-39 are stragglers at 1500 s (tau = 1500), feature 0 = latency / 1500, the
    others noise. From the first fit (250 s) the stragglers (feature 0 = 1, the finished tasks
    <= 0.17) get z ~ 0, so w = eps = 0.05, and y_hat / w >= 100 / 0.05 = 2000 >= tau whatever the
    trees predict within the finished latencies (100-250 s): flagged at 250 s. GBTR never flags:
    trees predict within the finished tasks' latencies, all < tau."""
    from functools import partial

    from stragglers.prediction.methods.nurd import XGBOOST_DEFAULTS, NurdFamily
    from stragglers.prediction.replay.simulate import JobData, replay_job

    assert (XGBOOST_DEFAULTS["n_estimators"], XGBOOST_DEFAULTS["learning_rate"]) == (20, 0.5)
    rng = np.random.default_rng(0)
    latency = np.r_[100.0 + 10 * np.arange(30), np.full(10, 1500.0)]
    checkpoints = np.array([150.0, 250.0, 350.0, 450.0])
    X = np.empty((len(checkpoints), 40, 4))
    X[:, :, 0] = latency / 1500
    X[:, :, 1:] = rng.random((len(checkpoints), 40, 3))
    job = JobData(job_id=1, task_ids=np.arange(40), latency=latency, checkpoints=checkpoints, X=X,
                  tau=float(np.quantile(latency, 0.9)), feature_names=("a", "b", "c", "d"))
    assert job.tau == 1500.0
    flags = {}
    for name, factory in {"default": NurdFamily,
                          "authors": partial(NurdFamily, regressor_params={"n_estimators": 100,
                                                                           "learning_rate": 0.1})}.items():
        res = replay_job(job, factory(), seed=0)
        flags[name] = {v.method: v.flagged_at for v in res.variants}
    for method in ("nurd", "gbtr"):
        a, b = flags["default"][method], flags["authors"][method]
        assert np.array_equal(np.isnan(a), np.isnan(b)) and np.allclose(a[~np.isnan(a)], b[~np.isnan(b)])
    assert np.all(flags["default"]["nurd"][30:] == 250.0)
    assert np.all(np.isnan(flags["default"]["gbtr"]))
