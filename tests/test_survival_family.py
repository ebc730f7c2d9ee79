"""The survival family on hand-made jobs with known answers."""

from __future__ import annotations

from dataclasses import replace

import duckdb
import numpy as np
import pandas as pd
import pytest

from stragglers.prediction.evaluation.history import (CostAwareSelection, PriorFitter, ThresholdGrid, build_histories,
                                           choose_threshold, job_times, prior_rows)
from stragglers.prediction.methods import METHODS, CannotFit, JobContext, TaskSet
from stragglers.prediction.methods.base import HistoryPrior, JobHistory
from stragglers.prediction.methods.censored import TobitFitter, TobitMapFitter
from stragglers.prediction.methods.survival import SurvivalHistory, SurvivalJob
from stragglers.prediction.replay.simulate import JobData, replay_job
from stragglers.prediction.statistics.threshold import conditional_survival


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
    fit = TobitFitter().fit(x[:, None], np.log(obs), cens)
    beta, sigma = fit.beta_, fit.sigma_
    ref = LogNormalAFTFitter().fit(pd.DataFrame({"x": x, "T": obs, "E": ~cens}), "T", "E")
    assert beta[0] == pytest.approx(ref.params_["mu_"]["Intercept"], abs=1e-3)
    assert beta[1] == pytest.approx(ref.params_["mu_"]["x"], abs=1e-3)
    assert sigma == pytest.approx(np.exp(ref.params_["sigma_"]["Intercept"]), abs=1e-3)
    # the base's Wald intervals are lifelines' (both from the Hessian at the optimum)
    ci = ref.confidence_intervals_.loc[[("mu_", "Intercept"), ("mu_", "x"), ("sigma_", "Intercept")]].to_numpy()
    ours = fit.confidence_intervals(alpha=0.05)
    np.testing.assert_allclose(ours, ci, atol=2e-3)


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
    assert np.array_equal(m.flag(running)[m.name], running.X[:, 0] == 1)
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
        km = conditional_survival(finished.y, np.full(len(running), float(t)), float(t), tau)   # the KM rule's estimate
        assert np.allclose(p, km, atol=1e-4), (t, p[:3], km)
        km_rule = METHODS["km_survival"]()
        km_rule.reset(_job(n, tau, names=("a", "b")))
        km_rule.fit(finished, running, float(t))
        assert np.array_equal(m.flag(running)[m.name], km_rule.flag(running)["km_survival"])


def test_survival_job_is_a_registered_baseline_with_explicit_hyperparameters():
    from stragglers.prediction.methods import BASELINES

    assert BASELINES["survival_job"] is SurvivalJob
    assert BASELINES["survival_history"] is SurvivalHistory
    assert SurvivalJob().get_params() == {"threshold": "cost", "fallback_threshold": 0.5,
                                          "condition_on_elapsed": True, "drop_features": (), "max_iter": 1000}
    assert SurvivalHistory().get_params()["prior_strength"] == SurvivalHistory.__init__.__defaults__[2]
    with pytest.raises(ValueError, match="threshold"):
        SurvivalJob(threshold=1.5)
    with pytest.raises(ValueError, match="prior_strength"):
        SurvivalHistory(prior_strength=-1)


def _prior(beta, sigma, variance) -> HistoryPrior:
    return HistoryPrior(beta=np.asarray(beta, float), sigma=sigma, variance=np.asarray(variance, float),
                        n_jobs=10, n_tasks=1000)


def test_a_prior_from_earlier_jobs_flags_the_doubling_feature_before_the_job_can_see_it():
    # Early in the job only 2 tasks have finished: too few for a slope, so the job alone fits the
    # intercept alone and cannot tell the tasks apart. The earlier
    # jobs' prior says x = 1 doubles the latency, so survival_history ranks every x = 1 task first.
    rng = np.random.default_rng(11)
    n = 200
    x = (np.arange(n) % 2).astype(float)
    y = 100.0 * (1.0 + x) * np.exp(0.3 * rng.normal(size=n))
    t = float(np.sort(y)[1]) + 1e-6                           # 2 finished
    tau = float(np.quantile(y, 0.9))
    finished, running = _sets(y, x[:, None], t)
    assert len(finished) == 2
    alone = SurvivalJob()
    alone.reset(_job(n, tau))
    alone.fit(finished, running, t)
    p_alone = alone.conditional_survival(running.X)
    assert np.ptp(p_alone) == 0                               # no feature can be used: all equal
    history = JobHistory(earlier_jobs=tuple(range(10)), cutoff_us=0,
                         prior=_prior([np.log(2.0)], 0.3, [0.25]))
    with_prior = SurvivalHistory(prior_strength=20)
    with_prior.reset(replace(_job(n, tau), history=history))
    with_prior.fit(finished, running, t)
    p = with_prior.conditional_survival(running.X)
    assert p[running.X[:, 0] == 1].min() > p[running.X[:, 0] == 0].max()
    assert with_prior.beta_[1] == pytest.approx(np.log(2.0), abs=0.05)
    # without a prior (the first jobs of a trace) it is survival_job
    first = SurvivalHistory(prior_strength=20)
    first.reset(_job(n, tau))
    first.fit(finished, running, t)
    assert np.allclose(first.conditional_survival(running.X), p_alone)


def test_the_censored_fitters_refuse_what_they_cannot_fit_with_the_recorded_reasons():
    # the reasons land in method_fallbacks: each model's own words, the base's checks
    x = np.arange(6.0)
    with pytest.raises(CannotFit, match=r"^tobit: 1 exact observations, needs >= 2$"):
        TobitFitter().fit(x[:, None], x, np.arange(6) > 0)
    with pytest.raises(CannotFit, match=r"^tobit map: no exact observation, the level is not identified$"):
        TobitMapFitter([0.0], 1.0, np.zeros(1), 0.0).fit(x[:, None], x, np.ones(6, bool))
    # exact rows on a line, the rest censored below it: sigma -> 0, the likelihood is unbounded
    y = 1.0 + 2.0 * x
    cens = np.r_[np.zeros(3, bool), np.ones(3, bool)]
    with pytest.raises(CannotFit, match=r"^tobit: sigma -> 0 \(likelihood unbounded: exact rows fitted exactly\)$"):
        TobitFitter().fit(x[:, None], np.where(cens, y - 50.0, y), cens)


def test_the_map_fit_without_prior_precision_is_the_maximum_likelihood_fit():
    rng = np.random.default_rng(2)
    x = rng.normal(size=300)
    ly = 3.0 + 0.5 * x + 0.4 * rng.normal(size=300)
    c = np.quantile(ly, 0.8)
    cens = ly > c
    obs = np.minimum(ly, c)
    ml = TobitFitter().fit(x[:, None], obs, cens)
    flat = TobitMapFitter(prior_beta=[0.0], prior_sigma=1.0, precision=np.zeros(1), sigma_precision=0.0
                          ).fit(x[:, None], obs, cens)
    assert np.allclose(flat.beta_, ml.beta_, atol=1e-4) and flat.sigma_ == pytest.approx(ml.sigma_, abs=1e-4)
    # a very strong prior pins the slope to it
    pinned = TobitMapFitter(prior_beta=[2.0], prior_sigma=0.4, precision=np.full(1, 1e9), sigma_precision=0.0
                            ).fit(x[:, None], obs, cens)
    assert pinned.beta_[1] == pytest.approx(2.0, abs=1e-4)


def _history_warehouse(path) -> duckdb.DuckDBPyConnection:
    """Four jobs on one trace, at known times (us): job 1 ends at 1,070, job 2 at 2,070, job 3 at
    9,070; job 4 starts at 4,000 with t0 = 0.5 ms: its cutoff is 4,500, after jobs 1 and 2 ended and
    before job 3 did. One feature, x; latency doubles with x."""
    con = duckdb.connect(str(path))
    rows, feats = [], []
    for job, start, n in ((1, 0, 8), (2, 1000, 8), (3, 2000, 8), (4, 4000, 8)):
        for i in range(n):
            x = float(i % 2)
            lat_us = int(1000 if job != 3 else 7000) * (1 + int(x)) // 2 + 10 * i
            rows.append(("tr", job, i, start, lat_us, lat_us / 1e6))
            feats.append(("tr", job, i, 0, x))
    con.execute("CREATE TABLE tasks (trace VARCHAR, job_id BIGINT, task_id BIGINT, first_schedule_us BIGINT, "
                "latency_us BIGINT, latency_s DOUBLE)")
    con.executemany("INSERT INTO tasks VALUES (?, ?, ?, ?, ?, ?)", rows)
    con.execute("CREATE TABLE job_checkpoints (trace VARCHAR, job_id BIGINT, k INTEGER, t0_s DOUBLE)")
    con.executemany("INSERT INTO job_checkpoints VALUES ('tr', ?, 0, 0.0005)", [(j,) for j in (1, 2, 3, 4)])
    con.execute("CREATE TABLE checkpoint_features (trace VARCHAR, job_id BIGINT, task_id BIGINT, k INTEGER, "
                "x DOUBLE)")
    con.executemany("INSERT INTO checkpoint_features VALUES (?, ?, ?, ?, ?)", feats)
    return con


def test_history_never_trains_on_a_job_that_ends_after_the_scored_jobs_cutoff(tmp_path):
    con = _history_warehouse(tmp_path / "w.duckdb")
    times = job_times(con, "tr").set_index("job_id")
    hist = build_histories(con, "tr", ("x",), [1, 2, 3, 4], min_jobs=1)
    assert hist[4].earlier_jobs == (1, 2) and hist[4].cutoff_us == 4500
    for j, h in hist.items():
        assert all(times.end_us[i] < h.cutoff_us for i in h.earlier_jobs), j
        assert j not in h.earlier_jobs
    # the training rows of job 4's prior are exactly jobs 1 and 2's tasks
    assert hist[4].prior.n_jobs == 2 and hist[4].prior.n_tasks == 16
    fitter = PriorFitter.from_rows(prior_rows(con, "tr", ("x",)), ("x",))
    assert np.allclose(fitter.fit([1, 2]).beta, hist[4].prior.beta)
    assert not np.allclose(fitter.fit([1, 2, 3]).beta, hist[4].prior.beta)   # job 3 would have moved it
    assert hist[1].earlier_jobs == () and hist[1].prior is None             # the first job: no history


def test_the_cost_aware_threshold_uses_only_earlier_jobs():
    grid = (0.25, 0.5, 0.75)
    # per job: (reduction, extra) at each threshold; lambda = 1 prefers 0.75 on jobs 1-2, 0.25 on job 3
    outcomes = {1: np.array([[0.10, 0.20], [0.08, 0.05], [0.07, 0.01]]),
                2: np.array([[0.10, 0.20], [0.08, 0.05], [0.07, 0.01]]),
                3: np.array([[0.90, 0.01], [0.00, 0.00], [0.00, 0.00]])}
    assert choose_threshold(outcomes, [1, 2], 1.0, grid) == 0.75
    assert choose_threshold(outcomes, [1, 2, 3], 1.0, grid) == 0.25
    assert choose_threshold(outcomes, [1, 2], 0.0, grid) == 0.25           # free machine time: most copies
    hist = {1: JobHistory((), 0), 2: JobHistory((1,), 0), 3: JobHistory((1, 2), 0), 4: JobHistory((1, 2), 0)}
    sel = CostAwareSelection("tr", hist, {}, 1.0, 2, {"m": 0.5}, grid=grid)
    sel.outcomes["m"] = dict(outcomes) | {4: outcomes[3]}
    before = sel.chosen("m", 1.0)
    assert before == {1: None, 2: None, 3: 0.75, 4: 0.75}
    sel.outcomes["m"][3] = np.array([[5.0, 0.0], [0.0, 0.0], [0.0, 0.0]])  # a later job changes: no effect
    assert sel.chosen("m", 1.0) == before


def test_one_grid_replay_flags_as_the_chosen_threshold_alone():
    rng = np.random.default_rng(4)
    n, K = 120, 12
    x = rng.random(n)
    y = 50.0 * np.exp(0.8 * x + 0.3 * rng.normal(size=n))
    cps = np.linspace(np.quantile(y, 0.05), np.quantile(y, 0.95), K)
    X = np.repeat(x[None, :, None], K, axis=0)
    hist = JobHistory(earlier_jobs=(1, 2, 3), cutoff_us=0, prior=_prior([0.7], 0.35, [0.08]))
    job = JobData(job_id=9, task_ids=np.arange(n), latency=y, checkpoints=cps, X=X,
                  tau=float(np.quantile(y, 0.9)), feature_names=("x",), history=hist)
    grid = replay_job(job, ThresholdGrid(SurvivalHistory)).variants
    for q in (0.3, 0.8, 0.97):
        alone = replay_job(replace(job, history=replace(hist, thresholds={"survival_history": q})),
                           SurvivalHistory()).variants[0]
        col = next(v for v in grid if v.method == f"survival_history@{q:g}")
        assert np.array_equal(np.isnan(alone.flagged_at), np.isnan(col.flagged_at))
        assert np.allclose(np.nan_to_num(alone.flagged_at), np.nan_to_num(col.flagged_at))
        assert alone.scores == col.scores


def test_the_verdict_against_the_free_rules_has_paired_intervals_over_jobs():
    from stragglers.prediction.methods import FREE_RULES
    from stragglers.reports.sections.operator import family_sentences, family_verdict

    rng = np.random.default_rng(0)
    jobs = [str(j) for j in range(40)]
    spec, jm = [], []
    for j in jobs:
        base = rng.uniform(0.02, 0.10)
        for rule in FREE_RULES:
            spec.append(("tr", rule, j, base, 0.03))
            jm.append(("tr", rule, int(j), 0.40))
        # survival_history: 1 point more JCT for 0.5 point less machine time on every job, F1 AUC +0.05
        spec.append(("tr", "survival_history", j, base + 0.01, 0.025))
        jm.append(("tr", "survival_history", int(j), 0.45))
        # survival_job: the same JCT as the rules, more machine time
        spec.append(("tr", "survival_job", j, base, 0.05))
        jm.append(("tr", "survival_job", int(j), 0.40))
    spec = pd.DataFrame(spec, columns=["trace", "method", "job_id", "jct_reduction", "extra_machine_share"])
    jm = pd.DataFrame(jm, columns=["trace", "method", "job_id", "f1_auc"])
    v = family_verdict(jm, spec, n_boot=200).set_index(["method", "rule"])
    got = v.loc[("survival_history", "spark_speculation")]
    assert got.n_jobs == 40
    assert got.jct_diff == pytest.approx(0.01) and got.jct_diff_lo == pytest.approx(0.01)
    assert got.machine_diff == pytest.approx(-0.005) and got.f1_auc_diff_lo == pytest.approx(0.05)
    assert v.loc[("survival_job", "km_survival")].jct_diff == pytest.approx(0.0)
    table = pd.DataFrame({"trace": ["tr"] * 3, "method": ["oracle", "survival_history", "survival_job"],
                          "jct_reduction": [0.12, 0.07, 0.06]})
    text = family_sentences(v.reset_index(), table)
    assert "Survival (history) beats Spark's rules" in text and "beats every free rule on F1 AUC" in text
    assert "Survival (job) does not beat Spark's rules" in text
    assert "58% of the oracle's headroom" in text                       # 0.07 / 0.12


def test_the_engine_ships_each_job_its_own_history_only():
    from stragglers.prediction.replay.workers import _for_job
    from stragglers.prediction.evaluation.history import AttachHistory

    hist = {j: JobHistory(earlier_jobs=tuple(range(j)), cutoff_us=j) for j in range(50)}
    one = _for_job(AttachHistory(hist), 7)
    assert dict(one.histories) == {7: hist[7]}
    job = JobData(job_id=7, task_ids=np.arange(3), latency=np.array([1.0, 2.0, 3.0]), checkpoints=np.array([0.5, 1.5]),
                  X=np.zeros((2, 3, 1)), tau=2.5, feature_names=("x",))
    assert one(job).history == AttachHistory(hist)(job).history == hist[7]
