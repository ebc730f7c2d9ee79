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
