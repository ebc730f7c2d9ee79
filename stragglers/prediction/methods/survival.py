"""Censored and survival regression baselines: Tobit, Grabit, CoxPH (docs/PROTOCOL.md section 5),
and the survival family of the operator's protocol: survival_job, survival_history.

At checkpoint t every finished task is an exact observation (its latency y)
and every running task is right-censored at t (its latency is > t, known
only to be >= t). Columns constant over all these training rows (finished and
running) are dropped before fitting: they carry no information, make the
design singular, and, since the candidates are running tasks and so
training rows, they are constant over the candidates too. The dropped
columns of the last fit are in ``dropped_columns_``.

The censored normal likelihood, its fitters (``TobitFitter``, ``TobitMapFitter``) and Grabit's
boosting loss are in censored.py; here each method builds its design and applies its flag rule.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import special

from stragglers.prediction.methods._common import cannot_fit_on_error, int_seed, nonconstant_columns, quiet, require_finite
from stragglers.prediction.methods.base import PROBABILITY_GRID, RATIO_GRID, CannotFit, Method, MethodTags, TaskSet
from stragglers.prediction.methods.censored import TobitFitter, TobitMapFitter, tobit_objective
from stragglers.trace_formats import CLOCK_FEATURES

CENSOR_AT = ("checkpoint", "max_finished")


def _check_censor_at(name: str, censor_at: str) -> str:
    if censor_at not in CENSOR_AT:
        raise ValueError(f"{name}: censor_at={censor_at!r}, expected one of {CENSOR_AT}")
    return censor_at


def _censored_design(finished: TaskSet, running: TaskSet, t: float, censor_at: str = "checkpoint"
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """X, y (latency or censoring time), censored flag for finished + running.

    Running tasks are censored at how long each has run (what is known: it runs longer; t, the
    checkpoint, on the paper's common clock) or, as the authors' code/run_ts.py does (``upper =
    max(Y_train_up)``, then ``clip(upper=upper)``), at the largest finished latency.
    """
    X = np.vstack([finished.X, running.X]).astype(float)
    c = (running.elapsed_at(t) if censor_at == "checkpoint" or len(finished) == 0
         else np.full(len(running), float(np.max(finished.y))))
    y = np.r_[np.asarray(finished.y, float), c]
    cens = np.r_[np.zeros(len(finished), bool), np.ones(len(running), bool)]
    return X, y, cens


# ---------------------------------------------------------------------------
# Tobit
# ---------------------------------------------------------------------------
class Tobit(Method):
    """Linear Tobit regression of latency on features (maximum likelihood).

    Finished tasks exact, running tasks right-censored at t; flag a candidate
    if its predicted latency x b >= tau. Requires more exact (finished) rows
    than mean parameters (kept features + intercept): otherwise the exact
    rows can be fitted exactly, sigma -> 0 and the likelihood is unbounded.
    """

    name = "tobit"
    family = "survival"
    authors_params = {"censor_at": "max_finished"}
    notes = {"optimizer": "L-BFGS-B, analytic gradient, log-sigma", "fit_intercept": True,
             "drop_constant_columns": True, "flag_rule": "x b >= tau"}

    def __init__(self, max_iter: int = 1000, censor_at: str = "checkpoint") -> None:
        super().__init__()
        self.max_iter, self.censor_at = max_iter, _check_censor_at("tobit", censor_at)

    def fit(self, finished: TaskSet, running: TaskSet, t: float) -> None:
        self.beta_ = None
        X, y, cens = _censored_design(finished, running, t, self.censor_at)
        self.cols_ = nonconstant_columns(X)
        self.dropped_columns_ = _names(self.job, ~self.cols_)
        k = int(self.cols_.sum()) + 1
        if len(finished) <= k:
            raise CannotFit(f"tobit: {len(finished)} finished tasks <= {k} mean parameters")
        with cannot_fit_on_error("tobit fit"):
            fitted = TobitFitter(max_iter=self.max_iter).fit(X[:, self.cols_], y, cens)
            self.beta_, self.sigma_ = fitted.beta_, fitted.sigma_

    def predict(self, X: np.ndarray) -> np.ndarray:
        return self.beta_[0] + np.asarray(X, float)[:, self.cols_] @ self.beta_[1:]

    def flag(self, candidates: TaskSet) -> dict[str, np.ndarray]:
        if self.beta_ is None:
            raise CannotFit("tobit: not fitted")
        return {self.name: self.predict(candidates.X) >= self.job.tau}

    sweep_grid = RATIO_GRID

    def sweep_scores(self, candidates: TaskSet) -> dict[str, np.ndarray]:
        if self.beta_ is None:
            return {}
        with np.errstate(invalid="ignore", divide="ignore"):   # tau_hat may be inf: no cut is reached
            return {self.name: self.predict(candidates.X) / self.job.tau}


# ---------------------------------------------------------------------------
# Grabit
# ---------------------------------------------------------------------------
class Grabit(Method):
    """Gradient-boosted Tobit (Grabit): XGBoost with the Tobit objective.

    Latencies and the censoring time are divided by tau (numerical scale
    ~1; prediction >= 1 <=> latency >= tau). Finished tasks exact, running
    tasks right-censored at t; flag a candidate if its predicted latency >= tau.

    sigma (the Tobit noise scale, a hyperparameter in Grabit): default
    ``"finished_std"`` = the standard deviation of the finished latencies at
    the checkpoint, in units of tau, floored at ``sigma_min`` (0.01), so it
    follows the job's spread; a float fixes it (in units of tau).
    Boosting: xgboost's defaults (100 rounds, eta 0.3, max_depth 6,
    lambda 1, min_child_weight 1), base_score = mean scaled label, nthread 1,
    seed from the job seed.
    """

    name = "grabit"
    family = "survival"
    authors_params = {"censor_at": "max_finished"}
    notes = {"label_scale": "tau", "drop_constant_columns": True, "flag_rule": "f(x) >= tau"}

    def __init__(self, sigma: str | float = "finished_std", sigma_min: float = 0.01, num_boost_round: int = 100,
                 eta: float = 0.3, max_depth: int = 6, reg_lambda: float = 1.0, min_child_weight: float = 1.0,
                 nthread: int = 1, min_hess: float = 1e-6, censor_at: str = "checkpoint") -> None:
        super().__init__()
        self.sigma, self.sigma_min, self.num_boost_round, self.eta = sigma, sigma_min, num_boost_round, eta
        self.max_depth, self.reg_lambda, self.min_child_weight = max_depth, reg_lambda, min_child_weight
        self.nthread, self.min_hess, self.censor_at = nthread, min_hess, _check_censor_at("grabit", censor_at)

    def fit(self, finished: TaskSet, running: TaskSet, t: float) -> None:
        import xgboost as xgb

        self.booster_ = None
        if len(finished) < 2:
            raise CannotFit(f"grabit: {len(finished)} finished tasks, needs >= 2")
        p, tau = self.get_params(), float(self.job.tau)
        X, y, cens = _censored_design(finished, running, t, self.censor_at)
        self.cols_ = nonconstant_columns(X)
        self.dropped_columns_ = _names(self.job, ~self.cols_)
        ys = y / tau
        if p["sigma"] == "finished_std":
            sigma = max(float(np.std(ys[~cens])), float(p["sigma_min"]))
        else:
            sigma = float(p["sigma"])
        self.sigma_ = sigma
        Xk = X[:, self.cols_] if self.cols_.any() else np.zeros((len(X), 1))
        with cannot_fit_on_error("grabit fit"), quiet():
            d = xgb.DMatrix(Xk, label=ys)
            d.set_float_info("label_lower_bound", ys)
            d.set_float_info("label_upper_bound", np.where(cens, np.inf, ys))
            params = {"eta": p["eta"], "max_depth": p["max_depth"], "lambda": p["reg_lambda"],
                      "min_child_weight": p["min_child_weight"], "nthread": p["nthread"],
                      "seed": int_seed(self.job.seed), "base_score": float(np.mean(ys)),
                      "verbosity": 0}
            self.booster_ = xgb.train(params, d, num_boost_round=int(p["num_boost_round"]),
                                      obj=tobit_objective(sigma, p["min_hess"]))

    def predict(self, X: np.ndarray) -> np.ndarray:
        """Predicted latency in seconds."""
        import xgboost as xgb

        Xk = np.asarray(X, float)[:, self.cols_] if self.cols_.any() else np.zeros((len(X), 1))
        return self.booster_.predict(xgb.DMatrix(Xk)) * float(self.job.tau)

    def flag(self, candidates: TaskSet) -> dict[str, np.ndarray]:
        if self.booster_ is None:
            raise CannotFit("grabit: not fitted")
        if len(candidates) == 0:
            return {self.name: np.zeros(0, dtype=bool)}
        pred = require_finite(self.predict(candidates.X), "grabit predictions")
        return {self.name: pred >= self.job.tau}

    sweep_grid = RATIO_GRID

    def sweep_scores(self, candidates: TaskSet) -> dict[str, np.ndarray]:
        if self.booster_ is None or not len(candidates):
            return {}
        with np.errstate(invalid="ignore", divide="ignore"):   # tau_hat may be inf: no cut is reached
            return {self.name: self.predict(candidates.X) / self.job.tau}


# ---------------------------------------------------------------------------
# CoxPH
# ---------------------------------------------------------------------------
class CoxPH(Method):
    """Cox proportional hazards (lifelines ``CoxPHFitter``).

    durations = latency (finished, event 1) or t (running, censored); a
    running candidate is flagged if P(T >= tau | T > t, x) = S(tau|x)/S(t|x)
    >= 0.5, S from lifelines' ``predict_survival_function``.

    Baseline hazard: ``baseline_estimation_method="spline"`` (Royston-Parmar,
    ``n_baseline_knots`` = 3) by default. With lifelines' default Breslow
    baseline the estimate is a step function that is flat after the last
    observed duration; at checkpoint t every duration is <= t < tau, so
    S(tau|x)/S(t|x) = 1 for every task and Breslow CoxPH flags every
    candidate at the first checkpoint. The spline baseline extrapolates the
    cumulative hazard past t (log H0 linear in log t beyond the last knot)
    and keeps the proportional-hazards model. ``baseline="breslow"``
    selects lifelines' default.

    penalizer 0.1 (ridge on the coefficients, lifelines' ``penalizer``) to
    avoid singular fits on collinear features; constant columns are dropped.
    """

    name = "coxph"
    family = "survival"
    notes = {"drop_constant_columns": True, "flag_rule": "S(tau|x)/S(t|x) >= threshold"}

    def __init__(self, penalizer: float = 0.1, l1_ratio: float = 0.0, baseline: str = "spline",
                 n_baseline_knots: int = 3, threshold: float = 0.5, min_events: int = 2) -> None:
        super().__init__()
        self.penalizer, self.l1_ratio, self.baseline, self.n_baseline_knots = penalizer, l1_ratio, baseline, n_baseline_knots
        self.threshold, self.min_events = threshold, min_events

    def _fitter(self) -> Any:
        from lifelines import CoxPHFitter

        p = self.get_params()
        if p["baseline"] == "spline":
            return CoxPHFitter(penalizer=p["penalizer"], l1_ratio=p["l1_ratio"],
                               baseline_estimation_method="spline", n_baseline_knots=p["n_baseline_knots"])
        return CoxPHFitter(penalizer=p["penalizer"], l1_ratio=p["l1_ratio"],
                           baseline_estimation_method=p["baseline"])

    def fit(self, finished: TaskSet, running: TaskSet, t: float) -> None:
        import pandas as pd

        self.cph_ = None
        if len(finished) < self.get_params()["min_events"]:
            raise CannotFit(f"coxph: {len(finished)} events (finished tasks), needs >= {self.get_params()['min_events']}")
        X, y, cens = _censored_design(finished, running, t)
        self.cols_ = nonconstant_columns(X)
        self.dropped_columns_ = _names(self.job, ~self.cols_)
        if not self.cols_.any():
            raise CannotFit("coxph: every feature is constant")
        self.colnames_ = [f"x{j}" for j in np.flatnonzero(self.cols_)]
        df = pd.DataFrame(X[:, self.cols_], columns=self.colnames_)
        df["duration"] = y
        df["event"] = (~cens).astype(int)
        from lifelines.exceptions import ConvergenceError

        cph = self._fitter()
        with cannot_fit_on_error("coxph fit"), quiet():
            try:
                cph.fit(df, duration_col="duration", event_col="event")
            except ConvergenceError as exc:
                raise CannotFit(f"coxph: no convergence: {str(exc).splitlines()[0][:200]}") from exc
        self.cph_, self.t_ = cph, float(t)

    def conditional_survival(self, X: np.ndarray, elapsed: np.ndarray | None = None) -> np.ndarray:
        """P(T >= tau | T > e, x) = S(tau|x) / S(e|x) for rows of X (all columns), e each row's
        elapsed time (None: t, the checkpoint)."""
        import pandas as pd

        df = pd.DataFrame(np.asarray(X, float)[:, self.cols_], columns=self.colnames_)
        e = np.full(len(df), self.t_) if elapsed is None else np.asarray(elapsed, float)
        times, at = np.unique(np.r_[e, float(self.job.tau)], return_inverse=True)
        with cannot_fit_on_error("coxph score"), quiet():
            S = self.cph_.predict_survival_function(df, times=times).to_numpy()
            S = require_finite(S, "coxph survival")
            rows = np.arange(len(df))
            s_t, s_tau = S[at[:-1], rows], S[at[-1], rows]
            if np.any(s_t <= 0):
                raise CannotFit("coxph: S(t|x) = 0 for some candidate")
            return s_tau / s_t

    def flag(self, candidates: TaskSet) -> dict[str, np.ndarray]:
        if self.cph_ is None:
            raise CannotFit("coxph: not fitted")
        if len(candidates) == 0:
            return {self.name: np.zeros(0, dtype=bool)}
        return {self.name: self.conditional_survival(candidates.X, candidates.elapsed_at(self.t_))
                >= self.get_params()["threshold"]}

    sweep_grid = PROBABILITY_GRID

    def sweep_scores(self, candidates: TaskSet) -> dict[str, np.ndarray]:
        if self.cph_ is None or not len(candidates):
            return {}
        return {self.name: self.conditional_survival(candidates.X, candidates.elapsed_at(self.t_))}


# ---------------------------------------------------------------------------
# the survival family (a scheduler's censored model, not in the paper): survival_job, survival_history
# ---------------------------------------------------------------------------
class SurvivalJob(Method):
    """P(latency > tau | latency > elapsed, features) from a censored log-normal model of the job's
    own tasks, refitted at every checkpoint; a running task is flagged when it exceeds the threshold.

    At checkpoint t the finished tasks are exact observations of log-latency and the running ones
    are right-censored at log t; log T = x b + sigma eps, eps ~ N(0, 1) (a log-normal accelerated
    failure time model: Kalbfleisch and Prentice, The Statistical Analysis of Failure Time Data,
    2002, Section 2.2.3), fitted by maximum likelihood with ``TobitFitter`` on log-latencies (the
    Tobit likelihood is the same one). For a running task with mean m = x b:

        P(T > tau | T > t, x) = Phi((m - log tau) / sigma) / Phi((m - log t) / sigma)

    (1 for tau <= t). The hazard rises with the features that lengthen tasks: a task whose
    features predict a doubled latency is flagged first. Elapsed time enters through the
    conditioning on T > t, relative to the job's own latency scale (the intercept is the job's
    log-latency level); ``condition_on_elapsed=False`` drops it (P(T > tau | x), the ablation).
    The clock features (``CLOCK_FEATURES``: for a finished task they are its latency) are left
    out, and ``drop_features`` names more to leave out (the ablation). With fewer finished tasks
    than mean parameters + 1, or no informative feature, the model is the intercept alone: the
    censored log-normal of the job's latencies, the same estimate as the Kaplan-Meier rule's tail
    (km_survival) where tau lies past the last finished latency. One fit per checkpoint, analytic
    gradient (L-BFGS-B): milliseconds, no library call in the loop.

    The threshold: a number, or ``"cost"``: the threshold chosen on the jobs that ended before this
    one's first checkpoint, to maximize their JCT reduction minus lambda x extra machine time
    under speculative copies (stragglers/prediction/evaluation/history.py); ``fallback_threshold`` while
    fewer than the setting ``history_min_jobs`` jobs have ended.

    Why not a library fitter: lifelines' LogNormalAFTFitter gives the same model at ~0.3 s a fit
    (about 40 jobs x 20 checkpoints a run); the likelihood here is the one Tobit already uses
    and tests (tests/test_survival_family.py compares the two on a known answer).
    """

    name = "survival_job"
    family = "survival"
    tags = MethodTags(learns_from_earlier_jobs=True)     # the cost-aware threshold
    notes = {"model": "censored log-normal AFT on the job's finished (exact) and running (censored) tasks",
             "flag_rule": "P(T > tau | T > t, x) > threshold", "drop_constant_columns": True,
             "clock_features_left_out": CLOCK_FEATURES}

    def __init__(self, threshold: float | str = "cost", fallback_threshold: float = 0.5,
                 condition_on_elapsed: bool = True, drop_features: tuple[str, ...] = (),
                 max_iter: int = 1000) -> None:
        super().__init__()
        if threshold != "cost" and not (isinstance(threshold, (int, float)) and 0 <= threshold < 1):
            raise ValueError(f"{self.name}: threshold={threshold!r}, expected 'cost' or a number in [0, 1)")
        if not 0 <= fallback_threshold < 1:
            raise ValueError(f"{self.name}: fallback_threshold={fallback_threshold!r}, expected a number in [0, 1)")
        self.threshold, self.fallback_threshold = threshold, fallback_threshold
        self.condition_on_elapsed, self.drop_features = bool(condition_on_elapsed), tuple(drop_features)
        self.max_iter = max_iter

    def threshold_for_job(self) -> float:
        """The threshold in force for this job (the cost-aware one, or the fallback without history)."""
        if self.threshold != "cost":
            return float(self.threshold)
        chosen = getattr(self.job.history, "thresholds", {}) if self.job.history is not None else {}
        return float(chosen.get(self.name, self.fallback_threshold))

    def _usable(self, d: int) -> np.ndarray:
        names = tuple(getattr(self.job, "feature_names", ()) or ())
        left_out = set(CLOCK_FEATURES) | set(self.drop_features)
        return np.array([i >= len(names) or names[i] not in left_out for i in range(d)], bool)

    def _design(self, finished: TaskSet, running: TaskSet, t: float):
        self.beta_, self.t_ = None, float(t)
        X, y, cens = _censored_design(finished, running, t)
        keep = y > 0
        X, y, cens = X[keep], y[keep], cens[keep]
        self.cols_ = nonconstant_columns(X) & self._usable(X.shape[1])
        if int(np.sum(~cens)) < 2 or len(np.unique(y[~cens])) < 2:
            raise CannotFit(f"{self.name}: {int(np.sum(~cens))} finished tasks, needs 2 distinct latencies")
        return X, np.log(y), cens

    def fit(self, finished: TaskSet, running: TaskSet, t: float) -> None:
        X, logy, cens = self._design(finished, running, t)
        if int(np.sum(~cens)) <= int(self.cols_.sum()) + 1:
            self.cols_ = np.zeros(X.shape[1], bool)   # too few finished tasks for the features: intercept only
        self.dropped_columns_ = _names(self.job, ~self.cols_)
        with cannot_fit_on_error(f"{self.name} fit"):
            fitted = TobitFitter(max_iter=self.max_iter).fit(X[:, self.cols_], logy, cens)
            self.beta_, self.sigma_ = fitted.beta_, fitted.sigma_

    def conditional_survival(self, X: np.ndarray, elapsed: np.ndarray | None = None) -> np.ndarray:
        """P(T > tau | T > e, x) for rows of X (all columns), e each row's elapsed time (None: t, the
        checkpoint); P(T > tau | x) without the conditioning. 1 where tau <= e."""
        tau = float(self.job.tau)
        m = self.beta_[0] + np.asarray(X, float)[:, self.cols_] @ self.beta_[1:]
        e = np.full(len(m), self.t_) if elapsed is None else np.asarray(elapsed, float)
        num = special.log_ndtr((m - np.log(tau)) / self.sigma_)
        if not self.condition_on_elapsed:
            return np.where(tau <= e, 1.0, np.exp(num))
        with np.errstate(divide="ignore"):
            den = special.log_ndtr((m - np.log(np.maximum(e, 0.0))) / self.sigma_)
        return np.where(tau <= e, 1.0, np.exp(num - den))

    def survival(self, candidates: TaskSet) -> np.ndarray:
        """Each candidate's P(T > tau | T > t, x): what the threshold is applied to."""
        if self.beta_ is None:
            raise CannotFit(f"{self.name}: not fitted")
        if len(candidates) == 0 or not np.isfinite(self.job.tau):
            return np.zeros(len(candidates))
        return self.conditional_survival(candidates.X, candidates.elapsed_at(self.t_))

    def flag(self, candidates: TaskSet) -> dict[str, np.ndarray]:
        return {self.name: self.survival(candidates) > self.threshold_for_job()}


class SurvivalHistory(SurvivalJob):
    """``survival_job`` with a prior learned from earlier jobs: the feature slopes and the spread
    (sigma) of log-latency within a job, pooled over the jobs that ended before this job's first
    checkpoint (never a later job; stragglers/prediction/evaluation/history.py fits it by fixed-effects least
    squares). At each checkpoint the job's own model is the maximum a posteriori fit
    (``TobitMapFitter``): Gaussian priors centred on the pooled slopes and log sigma, with the
    precision of ``prior_strength`` tasks' worth of data (Fisher information n0 Var(x_d) / sigma^2
    for a slope, 2 n0 for log sigma); the job's own level (intercept) is free. As the job's tasks
    finish, their likelihood outweighs the prior. Without earlier jobs (the first jobs of a trace)
    it is ``survival_job``.
    """

    name = "survival_history"
    notes = SurvivalJob.notes | {"prior": "fixed-effects least squares over the jobs that ended before the "
                                          "job's first checkpoint; MAP with the job's own tasks"}

    def __init__(self, threshold: float | str = "cost", fallback_threshold: float = 0.5,
                 prior_strength: float = 20.0, condition_on_elapsed: bool = True,
                 drop_features: tuple[str, ...] = (), max_iter: int = 1000) -> None:
        super().__init__(threshold, fallback_threshold, condition_on_elapsed, drop_features, max_iter)
        if not prior_strength >= 0:
            raise ValueError(f"survival_history: prior_strength={prior_strength!r}, expected a number >= 0")
        self.prior_strength = float(prior_strength)

    def fit(self, finished: TaskSet, running: TaskSet, t: float) -> None:
        prior = getattr(self.job.history, "prior", None) if self.job.history is not None else None
        if prior is None or self.prior_strength == 0:
            return super().fit(finished, running, t)
        X, logy, cens = self._design(finished, running, t)
        self.dropped_columns_ = _names(self.job, ~self.cols_)
        c = self.cols_
        n0, s2 = self.prior_strength, prior.sigma ** 2
        with cannot_fit_on_error(f"{self.name} fit"):
            fitted = TobitMapFitter(prior.beta[c], prior.sigma, n0 * prior.variance[c] / s2, 2.0 * n0,
                                    max_iter=self.max_iter).fit(X[:, c], logy, cens)
            self.beta_, self.sigma_ = fitted.beta_, fitted.sigma_


def _names(job: Any, mask: np.ndarray) -> list[str]:
    names = tuple(getattr(job, "feature_names", ()) or ())
    idx = np.flatnonzero(mask)
    return [names[i] if i < len(names) else f"x{i}" for i in idx]
