"""NURD and its ablations NURD-NC and GBTR, sharing one fit per checkpoint.

NURD (paper Algorithm 1, docs/PROTOCOL.md section 5):
  y_hat = h_t(x), a latency regressor trained on finished tasks only;
  z = g_t(x) = P(finished | x), a logistic regression of F vs R;
  rho = ||c_F||^2 / ||c_R - c_F||^2 from the feature centroids at t0,
  delta = 1 / (1 + rho) - alpha;
  w = max(eps, min(z + delta, 1)); flag if y_hat / w >= tau.
NURD-NC: w = max(eps, z) (no calibration). GBTR: flag if y_hat >= tau.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np
from sklearn.ensemble import GradientBoostingRegressor
from sklearn.linear_model import LogisticRegression

from stragglers.prediction.methods.base import RATIO_GRID, CannotFit, Method, TaskSet


def calibration_delta(X_finished: np.ndarray, X_running: np.ndarray, alpha: float) -> tuple[float, float]:
    """(rho, delta) of Algorithm 1 lines 4-6."""
    c_f = X_finished.mean(axis=0)
    c_r = X_running.mean(axis=0)
    gap = float(np.sum((c_r - c_f) ** 2))
    rho = float(np.sum(c_f ** 2)) / gap if gap > 0 else np.inf
    return rho, 1.0 / (1.0 + rho) - alpha


# The authors' regressor is scikit-learn's GradientBoostingRegressor with its defaults
# (100 trees, depth 3, learning rate 0.1). The default here is XGBoost's histogram algorithm
# (64 bins: jobs have at most a few thousand tasks) with the same depth and the same total
# step (rounds x learning rate = 10) in 20 rounds of 0.5 instead of 100 of 0.1: XGBoost's
# per-round cost (~0.1 ms whatever the rows below ~300) made the 100 rounds 75% of a
# checkpoint's cost. On the embedded trace's 41 jobs NURD's flag time is unchanged for 99.99%
# of the tasks under this pipeline's protocol and 95.8% under the authors' (with XGBoost),
# replay CPU -57% (docs/BENCHMARKS.md "Cheaper regressor"; benchmarks/nurd_candidates.py).
XGBOOST_DEFAULTS = {"tree_method": "hist", "n_estimators": 20, "max_depth": 3, "learning_rate": 0.5,
                    "max_bin": 64, "n_jobs": 1}

# The propensity model's objective is the authors' (L2-penalised logistic loss, C = 1); the solver
# is Newton with a Cholesky step instead of their lbfgs: ~40% less time per fit on these 15-column
# problems and closer to the exact optimum (on the embedded trace's 511 checkpoints: max |z - z*|
# 7.5e-4 against 8.2e-3 for lbfgs; z* = Newton at tol 1e-10; docs/BENCHMARKS.md).
PROPENSITY_SOLVER = "newton-cholesky"


class BoosterFit:
    """``XGBRegressor(**params).fit(X, y)`` without the scikit-learn wrapper: the same booster
    parameters (``get_xgb_params``), the same QuantileDMatrix and the same boosting rounds, so the
    same trees and bit-identical predictions (tests/test_methods.py), ~3 ms less per fit: the
    wrapper's per-round callbacks and validation were a fifth of the fixed per-checkpoint cost
    (profile in docs/BENCHMARKS.md)."""

    def __init__(self, model) -> None:
        self.params = model.get_xgb_params()
        self.rounds = model.n_estimators
        self.max_bin = self.params.get("max_bin")
        self.booster = None

    def fit(self, X: np.ndarray, y: np.ndarray) -> "BoosterFit":
        import xgboost as xgb

        data = xgb.QuantileDMatrix(X, label=y, nthread=self.params.get("n_jobs"), max_bin=self.max_bin)
        booster = xgb.Booster(self.params, [data])
        for i in range(self.rounds):
            booster.update(data, i)
        self.booster = booster
        return self

    def predict(self, X: np.ndarray) -> np.ndarray:
        return self.booster.inplace_predict(X)


def make_regressor(kind: str, seed: int, **params):
    if kind == "xgboost":
        from xgboost import XGBRegressor
        return XGBRegressor(**(XGBOOST_DEFAULTS | {"random_state": seed} | params))
    if kind == "sklearn":
        return GradientBoostingRegressor(**({"random_state": seed} | params))
    raise ValueError(f"unknown regressor {kind!r}")


class NurdFamily(Method):
    name = "nurd"
    family = "nurd"
    variants = ("nurd", "nurd_nc", "gbtr")
    settings_params = ("regressor", "alpha", "eps", "latency_normalization", "propensity_max_iter")

    def __init__(self, regressor: str = "xgboost", alpha: float = 0.5, eps: float = 0.05,
                 regressor_params: Mapping[str, Any] | None = None, latency_normalization: str = "none",
                 propensity_max_iter: int = 1000) -> None:
        super().__init__()
        if latency_normalization not in ("none", "job_minmax"):
            raise ValueError(f"nurd: latency_normalization={latency_normalization!r}, expected 'none' or 'job_minmax'")
        self.regressor, self.alpha, self.eps = regressor, alpha, eps
        self.regressor_params = dict(regressor_params or {})
        self.latency_normalization, self.propensity_max_iter = latency_normalization, propensity_max_iter
        self.rho = self.delta = None
        self.y_min = 0.0

    def begin(self, finished: TaskSet, running: TaskSet, t0: float) -> None:
        # "job_minmax" (the authors' code min-max normalizes latency per job): only the
        # threshold comparison matters, (y_hat - y_min) / w >= tau - y_min; y_min is the fastest
        # task's latency, known online at t0 (the fastest task finishes first); y_max cancels.
        if self.latency_normalization == "job_minmax" and len(finished):
            self.y_min = float(np.min(finished.y))
        self.rho, self.delta = calibration_delta(finished.X, running.X, self.alpha)

    def fit(self, finished: TaskSet, running: TaskSet, t: float) -> None:
        if len(finished) < 2:
            raise CannotFit(f"{len(finished)} finished task(s): nothing to regress on")
        if len(running) == 0:
            raise CannotFit("no running task: the propensity model has one class")
        h = make_regressor(self.regressor, self.job.seed, **self.regressor_params)
        self.h = (BoosterFit(h) if self.regressor == "xgboost" else h).fit(finished.X, finished.y)
        X = np.vstack([finished.X, running.X])
        s = np.r_[np.ones(len(finished)), np.zeros(len(running))]
        self.g = LogisticRegression(solver=PROPENSITY_SOLVER, max_iter=self.propensity_max_iter).fit(X, s)

    def weights(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        y_hat = self.h.predict(X)
        z = self.g.predict_proba(X)[:, 1]
        w = np.maximum(self.eps, np.minimum(z + self.delta, 1.0))
        return y_hat, w, np.maximum(self.eps, z)

    def flag(self, candidates: TaskSet) -> dict[str, np.ndarray]:
        tau, y0 = self.job.tau, self.y_min
        y_hat, w, w_nc = self.weights(candidates.X)
        return {"nurd": (y_hat - y0) / w >= tau - y0, "nurd_nc": (y_hat - y0) / w_nc >= tau - y0,
                "gbtr": y_hat >= tau}

    sweep_grid = RATIO_GRID

    def sweep_scores(self, candidates: TaskSet) -> dict[str, np.ndarray]:
        # each variant's flag is score >= 1 with score its (weighted) prediction over tau (both from y_min)
        tau, y0 = self.job.tau, self.y_min
        y_hat, w, w_nc = self.weights(candidates.X)
        span = tau - y0 if tau > y0 else np.nan
        with np.errstate(all="ignore"):
            return {"nurd": (y_hat - y0) / w / span, "nurd_nc": (y_hat - y0) / w_nc / span, "gbtr": y_hat / tau}

    def hyperparameters(self) -> dict:
        h = make_regressor(self.regressor, 0, **self.regressor_params).get_params()
        keep = {k: v for k, v in h.items() if v is not None and k not in ("random_state",)}
        return {"alpha": self.alpha, "eps": self.eps, "regressor": self.regressor,
                "regressor_params": keep, "latency_normalization": self.latency_normalization,
                "propensity_max_iter": self.propensity_max_iter,
                "propensity": f"LogisticRegression(solver={PROPENSITY_SOLVER!r}, "
                                f"max_iter={self.propensity_max_iter})"}
