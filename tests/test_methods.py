"""Tests of the 20 baselines of Table 3 (stragglers/prediction/methods: outliers, pu, survival, wrangler)."""

from __future__ import annotations

import json
from collections.abc import Mapping

import numpy as np
import pytest
from scipy import optimize

from stragglers.prediction.statistics.likelihood import tobit_negloglik, tobit_nll
from stragglers.prediction.methods import BASELINES, METHOD_CLASSES, METHODS, VARIANTS, CannotFit, JobContext, MethodTags, TaskSet
from stragglers.prediction.methods.censored import TobitFitter, tobit_objective
from stragglers.prediction.methods.survival import CoxPH, Grabit
from stragglers.prediction.methods.wrangler import Wrangler

EXPECTED = ("abod cblof hbos iforest knn lof mcd ocsvm pca sos lscp cof sod xgbod "
            "pu_en pu_bg tobit grabit coxph wrangler").split()


# ---------------------------------------------------------------- helpers
def make_job(n_finished: int = 60, n_running: int = 40, d: int = 15, seed: int = 0,
             labels: Mapping[int, bool] | None = None, constant_cols: tuple[int, ...] = (14,)):
    """A tiny synthetic job at one checkpoint: (job, finished, running, t, latency).

    Features in [0, 1]; latency grows with feature 0; tasks sorted by latency
    so the first ``n_finished`` have finished by t.
    """
    rng = np.random.default_rng(seed)
    n = n_finished + n_running
    X = rng.random((n, d))
    for c in constant_cols:
        X[:, c] = 0.0
    y = 100.0 * (1.0 + 3.0 * X[:, 0] + rng.exponential(0.5, n))
    order = np.argsort(y)
    X, y = X[order], y[order]
    ids = np.arange(1000, 1000 + n, dtype=np.int64)
    tau = float(np.quantile(y, 0.9))
    t = float((y[n_finished - 1] + y[n_finished]) / 2) if n_running else float(y[-1])
    if labels is None:
        labels = {int(i): bool(v >= tau) for i, v in zip(ids, y)}
    job = JobContext(job_id=7, tau=tau, t0=float(y[min(3, n - 1)]), task_ids=ids,
                     feature_names=tuple(f"f{j}" for j in range(d)), seed=12345, labels=labels)
    fin = TaskSet(ids[:n_finished], X[:n_finished], y[:n_finished])
    run = TaskSet(ids[n_finished:], X[n_finished:])
    return job, fin, run, t, y


def fit_flag(name: str, job, fin, run, t, **params):
    m = BASELINES[name](**params)
    m.reset(job)
    m.fit(fin, run, t)
    return m, m.flag(run)[name]


# ---------------------------------------------------------------- registry / smoke
RULES = ("flag_all", "wait_for_tau", "spark_speculation", "spark4_speculation", "km_survival", "oracle")


def test_registry_has_the_20_baselines_and_the_reference_rules():
    # the paper's 20 baselines, the reference rules, and the survival family (not in the paper)
    assert sorted(BASELINES) == sorted([*EXPECTED, *RULES, "survival_job", "survival_history"])
    for name, cls in BASELINES.items():
        assert cls.name == name
        assert cls.tags.reads_labels == (name in ("wrangler", "oracle"))
        assert cls.tags.reference_rule == (name not in (*EXPECTED, "survival_job", "survival_history"))
    assert list(METHODS) == [cls.name for cls in METHOD_CLASSES]
    # every variant a replay reports belongs to one class; the NURD family's three share one
    assert sorted(VARIANTS) == sorted([*BASELINES, "nurd", "nurd_nc", "gbtr"])
    assert {VARIANTS[v] for v in ("nurd", "nurd_nc", "gbtr")} == {METHODS["nurd"]}


def test_a_method_class_declares_what_it_is_not_how_it_is_shown():
    # identity and capabilities on the class (tags: one frozen MethodTags each); no presentation
    for cls in METHOD_CLASSES:
        assert cls.family in ("rules", "outliers", "pu", "survival", "wrangler", "nurd"), cls
        assert isinstance(cls.tags, MethodTags)
        for shown in ("display_name", "band", "paper_table3", "oracle", "learns_from_earlier_jobs", "params_"):
            assert not hasattr(cls, shown), (cls.name, shown)
    with pytest.raises(AttributeError):
        METHODS["oracle"].tags.reads_labels = False      # declared once, frozen


@pytest.mark.parametrize("name", [*EXPECTED, "nurd", "spark_speculation", "spark4_speculation", "km_survival"])
def test_hyperparameters_are_explicit_and_unknown_ones_rejected(name):
    cls = METHODS[name]
    m = cls()
    assert set(m.get_params()) == set(cls.param_names())
    assert set(m.get_params()) <= set(m.hyperparameters())
    # every hyperparameter round-trips through the constructor
    assert cls(**m.get_params()).get_params() == m.get_params()
    with pytest.raises(TypeError):
        cls(no_such_hyperparameter=1)


@pytest.mark.parametrize("name", EXPECTED)
def test_fit_flag_tiny_job(name):
    job, fin, run, t, _ = make_job()
    m, flags = fit_flag(name, job, fin, run, t)
    assert isinstance(flags, np.ndarray) and flags.dtype == bool and flags.shape == (len(run),)
    assert list(m.flag(run)) == [name]      # flag returns one type: {variant: flags}
    hp = m.hyperparameters()
    assert hp and json.dumps(hp, default=str)
    # a subset of the running tasks as candidates
    sub = run.take(np.arange(len(run)) < 30)
    f2 = m.flag(sub)[name]
    assert f2.dtype == bool and f2.shape == (30,)
    # same seed, same flags
    _, again = fit_flag(name, job, fin, run, t)
    np.testing.assert_array_equal(flags, again)


# every method whose preconditions are checked explicitly must refuse 3 finished tasks
MUST_REFUSE_3 = ("abod", "cblof", "knn", "lof", "mcd", "sos", "lscp", "cof", "sod", "pu_en", "tobit")


@pytest.mark.parametrize("name", EXPECTED)
def test_three_finished_tasks_cannot_fit_or_flags(name):
    job, fin, run, t, _ = make_job(n_finished=3, n_running=57)
    try:
        _, flags = fit_flag(name, job, fin, run, t)
    except CannotFit as e:
        assert str(e)
        return
    assert name not in MUST_REFUSE_3, f"{name} should raise CannotFit with 3 finished tasks"
    assert flags.dtype == bool and flags.shape == (len(run),)


@pytest.mark.parametrize("name", EXPECTED)
def test_degenerate_identical_rows_only_cannotfit(name):
    """Every finished row identical: a method flags or raises CannotFit, nothing else."""
    job, fin, run, t, _ = make_job(n_finished=40, n_running=30)
    fin = TaskSet(fin.task_ids, np.tile(fin.X[:1], (len(fin), 1)), fin.y)
    try:
        _, flags = fit_flag(name, job, fin, run, t)
    except CannotFit as e:
        assert str(e)
        return
    assert flags.dtype == bool and flags.shape == (len(run),)


@pytest.mark.parametrize("name", ["sos", "cof", "sod"])
def test_transductive_detectors_need_enough_candidates(name):
    job, fin, run, t, _ = make_job()
    m, _ = fit_flag(name, job, fin, run, t)
    with pytest.raises(CannotFit):
        m.flag(run.take(np.arange(len(run)) < 2))
    assert m.flag(run.take(np.zeros(len(run), bool)))[name].shape == (0,)


@pytest.mark.parametrize("name", ["abod", "lof", "sos", "pu_en", "pu_bg", "xgbod"])
def test_max_train_subsamples(name):
    job, fin, run, t, _ = make_job(n_finished=80, n_running=40)
    m, flags = fit_flag(name, job, fin, run, t, max_train=50)
    assert flags.shape == (len(run),)
    assert m.hyperparameters()["max_train"] == 50


def test_transductive_scoring_in_chunks_beyond_max_train():
    job, fin, run, t, _ = make_job(n_finished=60, n_running=60)
    m, flags = fit_flag("sos", job, fin, run, t, max_train=25)   # 3 chunks of 20 candidates
    assert flags.dtype == bool and flags.shape == (60,)
    _, again = fit_flag("sos", job, fin, run, t, max_train=25)
    np.testing.assert_array_equal(flags, again)


# ---------------------------------------------------------------- Tobit
def test_tobit_recovers_coefficients_and_sigma():
    rng = np.random.default_rng(1)
    n = 2000
    X = rng.normal(size=(n, 3))
    beta = np.array([1.0, 2.0, -1.0, 0.5])
    sigma = 1.5
    y_star = beta[0] + X @ beta[1:] + sigma * rng.normal(size=n)
    c = np.quantile(y_star, 0.7)          # ~30% right-censored
    cens = y_star >= c
    y = np.where(cens, c, y_star)
    assert 0.25 < cens.mean() < 0.35
    fit = TobitFitter().fit(X, y, cens)
    b_hat, s_hat = fit.beta_, fit.sigma_
    np.testing.assert_allclose(b_hat, beta, atol=0.1)
    assert abs(s_hat - sigma) < 0.1
    # naive OLS on censored data is biased: the censoring matters
    b_ols, *_ = np.linalg.lstsq(np.c_[np.ones(n), X], y, rcond=None)
    assert np.max(np.abs(b_ols - beta)) > 0.2


def test_tobit_gradient_matches_finite_differences():
    rng = np.random.default_rng(2)
    Z = np.c_[np.ones(50), rng.normal(size=(50, 2))]
    y = rng.normal(size=50)
    cens = rng.random(50) < 0.4
    theta = np.array([0.1, 0.5, -0.3, np.log(0.8)])
    err = optimize.check_grad(lambda th: tobit_negloglik(th, Z, y, cens)[0],
                              lambda th: tobit_negloglik(th, Z, y, cens)[1], theta)
    assert err < 1e-4


# ---------------------------------------------------------------- Grabit
def _dmatrix(X, y, cens):
    import xgboost as xgb

    d = xgb.DMatrix(X, label=y)
    d.set_float_info("label_lower_bound", y)
    d.set_float_info("label_upper_bound", np.where(cens, np.inf, y))
    return d


@pytest.mark.parametrize("sigma", [0.3, 1.0, 2.5])
def test_grabit_objective_matches_numerical_derivatives(sigma):
    y = np.array([1.0, 0.5, 2.0, 1.0, 0.2, 3.0])
    cens = np.array([False, False, True, True, True, False])
    f = np.array([0.7, 0.9, 1.2, 1.5, -1.0, 3.3])   # censored rows below and above c
    d = _dmatrix(np.zeros((len(y), 1)), y, cens)
    grad, hess = tobit_objective(sigma)(f, d)
    h = 1e-5
    num_g = (tobit_nll(f + h, y, cens, sigma) - tobit_nll(f - h, y, cens, sigma)) / (2 * h)
    num_h = (tobit_nll(f + h, y, cens, sigma) - 2 * tobit_nll(f, y, cens, sigma)
             + tobit_nll(f - h, y, cens, sigma)) / h**2
    np.testing.assert_allclose(grad, num_g, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(hess, num_h, rtol=1e-3, atol=1e-4)
    assert np.all(hess > 0)


def test_grabit_hessian_clipped_positive_far_above_censoring():
    d = _dmatrix(np.zeros((1, 1)), np.array([0.0]), np.array([True]))
    _, hess = tobit_objective(0.1)(np.array([50.0]), d)
    assert hess[0] > 0


def test_grabit_without_censoring_is_squared_error_boosting():
    import xgboost as xgb

    rng = np.random.default_rng(3)
    X = rng.random((300, 4))
    y = 2 * X[:, 0] + np.sin(3 * X[:, 1]) + 0.1 * rng.normal(size=300)
    params = {"eta": 0.3, "max_depth": 4, "nthread": 1, "base_score": float(y.mean()), "seed": 0}
    ref = xgb.train({**params, "objective": "reg:squarederror"}, xgb.DMatrix(X, label=y), 30)
    p_ref = ref.predict(xgb.DMatrix(X))
    d = _dmatrix(X, y, np.zeros(300, bool))
    same = xgb.train(params, d, 30, obj=tobit_objective(1.0)).predict(xgb.DMatrix(X))
    np.testing.assert_allclose(same, p_ref, atol=1e-4)          # sigma = 1: identical Newton steps
    other = xgb.train(params, d, 30, obj=tobit_objective(0.5)).predict(xgb.DMatrix(X))
    assert np.corrcoef(other, p_ref)[0, 1] > 0.99


def test_grabit_censoring_pushes_predictions_up():
    job, fin, run, t, _ = make_job(n_finished=150, n_running=50)
    m = Grabit(sigma=0.2, num_boost_round=20)
    m.reset(job)
    m.fit(fin, run, t)
    assert np.median(m.predict(run.X)) >= 0.95 * t      # running tasks are predicted >= about t
    assert m.dropped_columns_ == ["f14"]


# ---------------------------------------------------------------- CoxPH
def test_coxph_conditional_survival_by_hand():
    import pandas as pd

    job, fin, run, t, _ = make_job(n_finished=70, n_running=50, d=3, constant_cols=(2,))
    m = CoxPH()
    m.reset(job)
    m.fit(fin, run, t)
    assert m.dropped_columns_ == ["f2"]
    r = m.conditional_survival(run.X)
    cph = m.cph_
    df = pd.DataFrame(run.X[:, m.cols_], columns=m.colnames_)
    # lifelines' own survival curve at t and tau, one row at a time
    for i in (0, 7, 23):
        S = cph.predict_survival_function(df.iloc[[i]], times=[t, job.tau]).to_numpy()[:, 0]
        assert r[i] == pytest.approx(S[1] / S[0], rel=1e-9)
    # by hand: S(s|x) = exp(-H0(s) exp(x b)), so log(-log S) differs by (x1 - x2) b
    S = cph.predict_survival_function(df, times=[t, job.tau]).to_numpy()
    b = cph.params_.loc["beta_"][m.colnames_].to_numpy()    # spline model: beta_ block
    for k in (0, 1):
        lhs = np.log(-np.log(S[k, 1])) - np.log(-np.log(S[k, 0]))
        assert lhs == pytest.approx((df.iloc[1] - df.iloc[0]).to_numpy() @ b, abs=1e-8)
    H = cph.predict_cumulative_hazard(df, times=[t, job.tau]).to_numpy()
    np.testing.assert_allclose(r, np.exp(-(H[1] - H[0])), rtol=1e-9)
    assert np.all((r > 0) & (r < 1))
    np.testing.assert_array_equal(m.flag(run)["coxph"], r >= 0.5)


def test_coxph_breslow_baseline_is_flat_after_t():
    """Why the spline baseline is the default: Breslow's H0 is flat past t <= tau."""
    job, fin, run, t, _ = make_job(n_finished=70, n_running=50, d=3, constant_cols=())
    m = CoxPH(baseline="breslow")
    m.reset(job)
    m.fit(fin, run, t)
    np.testing.assert_allclose(m.conditional_survival(run.X), 1.0)
    assert m.flag(run)["coxph"].all()


# ---------------------------------------------------------------- Wrangler
class GuardedLabels(Mapping):
    """Labels that refuse (and record) any read of a test-third task."""

    def __init__(self, labels, forbidden):
        self._labels, self._forbidden = dict(labels), set(int(i) for i in forbidden)
        self.read: set[int] = set()

    def __getitem__(self, key):
        key = int(key)
        self.read.add(key)
        if key in self._forbidden:
            raise KeyError(f"test-third label {key} read")
        return self._labels[key]

    def __iter__(self):
        raise AssertionError("iterating over every label reads test-third labels")

    def __len__(self):
        return len(self._labels)


def test_wrangler_never_reads_test_third_labels():
    job, fin, run, t, y = make_job(n_finished=60, n_running=90)
    train_ids, test_ids = Wrangler().split(job)
    assert len(np.intersect1d(train_ids, test_ids)) == 0
    assert len(train_ids) + len(test_ids) == len(job.task_ids)
    assert len(train_ids) == round(2 / 3 * len(job.task_ids))
    guarded = GuardedLabels(job.labels, test_ids)
    gjob = JobContext(job.job_id, job.tau, job.t0, job.task_ids, job.feature_names, job.seed, guarded)
    m = Wrangler()
    m.reset(gjob)
    np.testing.assert_array_equal(m.scored_task_ids(gjob), test_ids)
    ids = np.r_[fin.task_ids, run.task_ids]
    X = np.vstack([fin.X, run.X])
    for n_fin in (30, 60, 100):                  # several checkpoints
        f = TaskSet(ids[:n_fin], X[:n_fin], y[:n_fin])
        r = TaskSet(ids[n_fin:], X[n_fin:])
        m.fit(f, r, float(y[n_fin - 1]))
        flags = m.flag(r)["wrangler"]
        assert flags.dtype == bool and flags.shape == (len(r),)
        assert not flags[~np.isin(r.task_ids, test_ids)].any()   # train tasks never flagged
    assert guarded.read and guarded.read <= set(train_ids.tolist())


def test_wrangler_too_few_stragglers_cannot_fit():
    job, fin, run, t, y = make_job()
    labels = {i: False for i in job.labels}
    job = JobContext(job.job_id, job.tau, job.t0, job.task_ids, job.feature_names, job.seed, labels)
    m = Wrangler()
    m.reset(job)
    with pytest.raises(CannotFit):
        m.fit(fin, run, t)


# ---------------------------------------------------------------- through the simulator
def test_every_baseline_through_replay_job():
    simulate = pytest.importorskip("stragglers.prediction.replay.simulate")
    rng = np.random.default_rng(5)
    n, d, K = 120, 15, 5
    lat = 100.0 * (1.0 + 3.0 * rng.random(n) ** 2 + rng.exponential(0.3, n))
    base = rng.random((n, d))
    base[:, 0] = np.clip((lat - lat.min()) / np.ptp(lat) + 0.1 * rng.normal(size=n), 0, 1)
    tau = float(np.quantile(lat, 0.9))
    t0 = float(np.quantile(lat, 0.3))                      # generous t0 keeps this fast and fittable
    cps = np.linspace(t0, tau * 0.99, K)
    X = np.stack([np.clip(base * min(1.0, c / tau) + 0.01 * k, 0, 1) for k, c in enumerate(cps)])
    job = simulate.JobData(job_id=3, task_ids=np.arange(n, dtype=np.int64), latency=lat,
                           checkpoints=cps, X=X, tau=tau,
                           feature_names=tuple(f"f{j}" for j in range(d)))
    for name, cls in BASELINES.items():
        res = simulate.replay_job(job, cls(), seed=1)
        if cls.tags.reference_rule:
            continue        # the rules have tests worked by hand (test_evaluation_rules.py)
        (v,) = res.variants
        assert v.method == name
        assert v.flagged_at.shape == (n,) and v.scored.shape == (n,)
        fa = v.flagged_at[~np.isnan(v.flagged_at)]
        assert np.all(np.isin(fa, cps[1:]))
        assert not np.any(~v.scored & ~np.isnan(v.flagged_at))
        assert all(isinstance(r, str) and r for _, _, r in res.fallbacks)
        assert len(res.fallbacks) < K - 1, f"{name} could not fit anywhere: {res.fallbacks}"
        if name == "wrangler":
            assert v.scored.sum() <= n / 3 + 1
