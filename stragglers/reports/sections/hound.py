"""Hound's report: Tables 4-7 beside the paper's values, Figures 8-10 (the base
learners against simpler ones), the check against the planted causes and the
accuracy of the flag + explain table. Dagster-free; ``assets/diagnosis.py``'s
``hound_report`` calls ``build_hound_report``."""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import kendalltau, pearsonr, spearmanr
from sklearn.ensemble import BaggingRegressor
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import ElasticNet, ElasticNetCV, LinearRegression
from sklearn.model_selection import KFold
from sklearn.neighbors import KNeighborsRegressor
from sklearn.svm import SVR
from sklearn.tree import DecisionTreeRegressor

from stragglers.diagnosis.learners import AdaBoostIPW, SignedSchweizerWolff, job_matrix, standardize, varies
from stragglers.settings.diagnosis import HoundSettings
from stragglers.diagnosis.truth import recall_by_cause
from stragglers.reports.page.render import markdown_table

FIGURE_JOBS = 20        # Figures 8 and 10 run on a seeded sample of this many jobs (all when fewer)
FOLDS = 5

# Hound Section 5.4 in words (the figures' values are not printed in the paper)
PAPER_FIG8 = "BAE 16% better than linear regression, slightly better than ElasticNet and CART, comparable to SVM; " \
             "KNN and linear regression much worse"
PAPER_FIG9 = "SSW reports values close to 0 after shuffling much more consistently than Pearson, Spearman, Kendall"
PAPER_FIG10 = "AdaBoost IPW most accurate; naive Bayes and logistic regression much worse"


def sample_jobs(jobs: list, n: int, seed: int) -> list:
    jobs = sorted(jobs)
    if len(jobs) <= n:
        return jobs
    return sorted(np.random.default_rng(seed).choice(jobs, size=n, replace=False).tolist())


# ----------------------------------------------------------------------------- Figure 8
def _regressors(alpha: float, s: HoundSettings) -> dict:
    return {
        "BAE": BaggingRegressor(ElasticNet(alpha=alpha, l1_ratio=s.l1_ratio), n_estimators=s.replicas,
                                random_state=s.seed),
        "ElasticNet": ElasticNet(alpha=alpha, l1_ratio=s.l1_ratio),
        "LinearRegression": LinearRegression(),
        "CART": DecisionTreeRegressor(min_samples_leaf=5, random_state=s.seed),
        "SVM": SVR(),
        "KNN": KNeighborsRegressor(n_neighbors=5),
    }


def adjusted_r2_job(frame: pd.DataFrame, s: HoundSettings) -> dict:
    """Figure 8 for one job: adjusted R^2 = 1 - (1 - R^2)(n - 1)/(n - p - 1) of 5-fold out-of-fold
    predictions of the standardized latency from the standardized metrics (p = metrics that vary).
    ElasticNet's alpha is chosen by ElasticNetCV on each training fold and shared by BAE."""
    X, y, _ = job_matrix(frame)
    keep = varies(X)
    Z, ys = standardize(X[:, keep]), standardize(y.reshape(-1, 1)).ravel()
    n, p = Z.shape
    pred = {}
    for train, test in KFold(FOLDS, shuffle=True, random_state=s.seed).split(Z):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            alpha = ElasticNetCV(l1_ratio=s.l1_ratio, alphas=20, eps=1e-2, cv=5).fit(Z[train], ys[train]).alpha_
            for name, model in _regressors(alpha, s).items():
                pred.setdefault(name, np.zeros(n))[test] = model.fit(Z[train], ys[train]).predict(Z[test])
    out = {}
    for name, yhat in pred.items():
        r2 = 1 - np.sum((ys - yhat) ** 2) / np.sum((ys - ys.mean()) ** 2)
        out[name] = 1 - (1 - r2) * (n - 1) / max(n - p - 1, 1)
    return out


# ----------------------------------------------------------------------------- Figure 9
def shuffled_dependence_job(frame: pd.DataFrame, s: HoundSettings) -> pd.DataFrame:
    """Figure 9 for one job: latency shuffled (seeded), so every true dependence is 0; each metric's
    SSW (with the learner's sampled grid), Pearson, Spearman and Kendall estimates."""
    X, y, _ = job_matrix(frame)
    y = np.random.default_rng(s.seed).permutation(y)
    ssw = SignedSchweizerWolff(min_grid=s.ssw_min_grid, sign_tol=s.ssw_sign_tol, seed=s.seed)
    d = ssw.dependences(X, y)
    rows = []
    for j in range(X.shape[1]):
        if not varies(X[:, [j]])[0]:
            continue
        rows += [("SSW", d[j]), ("Pearson", pearsonr(X[:, j], y)[0]), ("Spearman", spearmanr(X[:, j], y)[0]),
                 ("Kendall", kendalltau(X[:, j], y)[0])]
    return pd.DataFrame(rows, columns=["measure", "value"])


# ----------------------------------------------------------------------------- Figure 10
def weighted_imbalance(conf: np.ndarray, z: np.ndarray, e: np.ndarray) -> float:
    """Mean over confounders of |weighted mean(treated) - weighted mean(control)| / pooled sd, with IPW
    weights 1/e and 1/(1-e): a correct propensity balances the confounders (Rosenbaum and Rubin 1983),
    so lower is better. (Hound's Figure 10 measure is not given in the text; this is ours.)"""
    keep = varies(conf)
    if not keep.any():
        return 0.0
    c = conf[:, keep] / conf[:, keep].std(axis=0)
    w1, w0 = z / e, (1 - z) / (1 - e)
    m1 = (w1[:, None] * c).sum(axis=0) / w1.sum()
    m0 = (w0[:, None] * c).sum(axis=0) / w0.sum()
    return float(np.mean(np.abs(m1 - m0)))


def propensity_balance_job(frame: pd.DataFrame, s: HoundSettings) -> pd.DataFrame:
    """Figure 10 for one job: per metric (treatment = above the median), the confounder imbalance after
    IPW with AdaBoost (Hound), logistic regression and Gaussian naive Bayes propensities, and without
    weighting (every e = share treated)."""
    X, _, _ = job_matrix(frame)
    lo, span = X.min(axis=0), np.ptp(X, axis=0)
    scaled = np.where(span > 0, (X - lo) / np.where(span > 0, span, 1.0), 0.0)
    rows = []
    for j in range(X.shape[1]):
        z = (X[:, j] > np.median(X[:, j])).astype(float)
        if z.min() == z.max():
            continue
        conf = np.delete(scaled, j, axis=1)
        rows.append(("unweighted", weighted_imbalance(conf, z, np.full(len(z), z.mean()))))
        for est in ("adaboost", "logistic", "naive_bayes"):
            learner = AdaBoostIPW(rounds=s.adaboost_rounds, clip=s.propensity_clip, seed=s.seed, propensity=est)
            rows.append((est, weighted_imbalance(conf, z, learner.propensities(conf, z))))
    return pd.DataFrame(rows, columns=["estimator", "imbalance"])


def figures_job(args) -> tuple:
    frame, s, with_fig8_10 = args
    job = int(frame.job_id.iloc[0])
    f9 = shuffled_dependence_job(frame, s).assign(job_id=job)
    if not with_fig8_10:
        return None, f9, None
    f8 = pd.DataFrame([adjusted_r2_job(frame, s)]).melt(var_name="model", value_name="adjusted_r2").assign(job_id=job)
    f10 = propensity_balance_job(frame, s).assign(job_id=job)
    return f8, f9, f10


def figure_data(inputs: pd.DataFrame, s: HoundSettings, log=None) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Figures 8-10 over the jobs (8 and 10: a seeded sample of FIGURE_JOBS jobs; 9: every job)."""
    from concurrent.futures import ProcessPoolExecutor
    jobs = sorted(inputs.job_id.unique())
    chosen = set(sample_jobs(jobs, FIGURE_JOBS, s.seed))
    args = [(g, s, j in chosen) for j, g in inputs.groupby("job_id")]
    if s.workers > 1:
        with ProcessPoolExecutor(s.workers) as pool:
            results = list(pool.map(figures_job, args))
    else:
        results = [figures_job(a) for a in args]
    if log:
        log(f"figures 8-10: {len(chosen)} jobs for 8 and 10, {len(jobs)} for 9")
    f8 = pd.concat([r[0] for r in results if r[0] is not None], ignore_index=True)
    f9 = pd.concat([r[1] for r in results], ignore_index=True)
    f10 = pd.concat([r[2] for r in results if r[2] is not None], ignore_index=True)
    return f8, f9, f10


def _boxplot(df: pd.DataFrame, by: str, value: str, order: list, title: str, ylabel: str, path: Path,
             hline: float | None = None) -> Path:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.boxplot([df.loc[df[by] == k, value].dropna().to_numpy() for k in order], tick_labels=order)
    if hline is not None:
        ax.axhline(hline, color="grey", lw=0.8, ls="--")
    ax.set_title(title)
    ax.set_ylabel(ylabel)
    fig.tight_layout()
    tmp = path.with_name(f".{path.name}.tmp.png")
    fig.savefig(tmp, dpi=110)
    plt.close(fig)
    os.replace(tmp, path)
    return path


def summarize_figures(f8, f9, f10) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    s8 = f8.groupby("model").adjusted_r2.agg(jobs="count", median="median", mean="mean").reset_index()
    bae = s8.set_index("model")["median"].get("BAE", np.nan)
    s8["bae_minus_model_median"] = bae - s8["median"]
    s8 = s8.sort_values("median", ascending=False)
    s9 = f9.assign(a=f9.value.abs()).groupby("measure").agg(
        estimates=("value", "count"), mean_abs=("a", "mean"), p90_abs=("a", lambda v: v.quantile(0.9)),
        share_exactly_0=("value", lambda v: float((v == 0).mean()))).reset_index().sort_values("mean_abs")
    s10 = f10.groupby("estimator").imbalance.agg(estimates="count", median="median", mean="mean").reset_index() \
        .sort_values("median")
    return s8, s9, s10


def _md(df: pd.DataFrame, floatfmt: str = ".3f") -> str:
    return markdown_table(df, floatfmt=floatfmt) if len(df) else "(no rows)"


def build_hound_report(out_dir: Path, *, trace: str, inputs: pd.DataFrame, topics: pd.DataFrame,
                       job_causes: pd.DataFrame, n_causes: pd.DataFrame | None, coverage: pd.DataFrame,
                       validation: pd.DataFrame | None, explanation_acc: pd.DataFrame | None,
                       settings: HoundSettings, validation_per_job: pd.DataFrame | None = None, log=None) -> dict:
    """Write ``hound.md`` and the figures to ``out_dir``; return paths and the summary frames."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    f8, f9, f10 = figure_data(inputs, settings, log=log)
    s8, s9, s10 = summarize_figures(f8, f9, f10)
    figs = {
        "hound_figure8": _boxplot(f8, "model", "adjusted_r2", list(s8.model), f"Figure 8: adjusted R^2 per job "
                                  f"({f8.job_id.nunique()} jobs, {FOLDS}-fold out of fold)", "adjusted R^2",
                                  out_dir / "hound_figure8.png"),
        "hound_figure9": _boxplot(f9, "measure", "value", ["SSW", "Pearson", "Spearman", "Kendall"],
                                  f"Figure 9: dependence after shuffling latency ({f9.job_id.nunique()} jobs)",
                                  "estimate (truth: 0)", out_dir / "hound_figure9.png", hline=0.0),
        "hound_figure10": _boxplot(f10, "estimator", "imbalance", ["adaboost", "logistic", "naive_bayes", "unweighted"],
                                   f"Figure 10: confounder imbalance after IPW ({f10.job_id.nunique()} jobs)",
                                   "mean |standardized difference|", out_dir / "hound_figure10.png"),
    }
    ens = topics[topics.learner == "ENS"].drop(columns=["learner"])
    first_jobs = sorted(job_causes.job_id.unique())[:6]
    lines = [f"# Hound on `{trace}`", "",
             f"{inputs.job_id.nunique()} jobs, {len(inputs)} finished tasks (>= {settings.min_tasks} per job). "
             f"Settings: {settings.as_dict()}.", "",
             "## Table 4: causal topics (ensemble)", "", _md(ens), "",
             "Hound's published Table 4 has 12 ensemble topics E0-E11 (data skew x3, computation skew, I/O skew, "
             "limited processor, limited memory, limited I/O x2, cache misses, queueing delay, eviction) and "
             "two rejected (P12 FAIL(+), C12 MACHINE_RAM(+)).", "",
             "Initial topics per learner and where they went:", "", _md(topics[topics.learner != "ENS"]), "",
             "## Table 5: mixtures of causes (first jobs)", "",
             _md(job_causes[job_causes.job_id.isin(first_jobs)]), ""]
    if n_causes is not None:
        lines += ["## Table 6: number of causes per job", "", _md(n_causes), ""]
    lines += ["## Table 7: coverage and dominant coverage", "",
              "`_paper`: Hound Table 7 (Google 2011); without suffix: this run's diagnosis; `_planted`: the "
              "generator's planted mixtures (drawn from the paper's Table 7); `_effective`: the planted causes "
              "plus the background evictions, which lengthen a task's run as the eviction cause does; "
              "`_stragglers`: the share of jobs where the cause explains some (the majority) of the stragglers, "
              "the check's truth.", "",
              _md(coverage), ""]
    if validation is not None:
        lines += ["## Check against the generator's causes (`hound_validation`)", "",
                  "Against three truths: `planted` (the mixture drawn from Hound's Tables 6-7), `effective` "
                  "(the share of each cause among the (task, cause) pairs that lengthened a run: the planted "
                  "causes plus the evictions and waits of >= 60 s the generator draws outside them) and "
                  "`stragglers`, the check (each cause's share of the job's finished stragglers, latency > the "
                  "job's p90, that it explains: the task would not straggle had the cause taken its typical "
                  "time, Ousterhout et al.'s definition quoted by Hound Section 6; what Hound's weights "
                  "estimate, Section 5.1; slow machines count as limited processor; jobs none of whose "
                  "stragglers is explained are not scored against it). Beside Hound: always data skew (the "
                  "issue's baseline), the best constant answer in hindsight (the truth's most common "
                  "dominant cause, chosen knowing the truth) and, when node_task_durations has rows for the trace, "
                  "`hound_with_nodes`: limited processor alone where more than half of the job's stragglers run "
                  "on machines the other jobs' tasks show slow (their mean z, Ouyang et al. Eq. 1, above 0 by a "
                  f"one-sided t-test at 0.05, from >= {settings.node_min_tasks} tasks), Hound's mixture elsewhere "
                  "(docs/HOUND.md, section Node evidence for limited processor; Hound's own rows are unchanged). "
                  "Dominant cause = the cause with the largest weight; a job Hound left without a named cause "
                  "counts as wrong. Majority accuracy uses Hound's own definition of dominant (Section 5.1: the "
                  "cause that explains the majority of a job's stragglers, weight > 1/2, or none): right when "
                  "both sides name the same majority cause or neither has one. Precision and recall of the set of named causes, pooled over jobs (micro) "
                  "and averaged per job (macro).", "", _md(validation), ""]
        if validation_per_job is not None:
            lines += ["Per cause, against each truth: the jobs where the cause is dominant, how many of them "
                      "Hound's dominant answer names (`recall`), and how many jobs Hound answers it for "
                      "(`answered`, `precision` = hits / answered). A constant answer has recall 1 on its "
                      "cause and 0 on every other.", "",
                      _md(recall_by_cause(validation_per_job)), "",
                      "Per job:", "", _md(validation_per_job), ""]
    if explanation_acc is not None:
        lines += ["## Flag + explain (`straggler_explanations`)", "",
                  "Over the tasks NURD flagged that carry a cause: does the task's top deviating metric name a "
                  "cause that hit it? `planted`: the cause planted on the task; `effective`: the planted cause "
                  "or a background eviction or wait of >= 60 s; `stragglers`: over the flagged tasks that finished as "
                  "stragglers explained by some cause, the causes that explain them (as in the check).", "",
                  _md(explanation_acc), ""]
    lines += ["## Figure 8: latency models (adjusted R^2 per job)", "", f"Paper: {PAPER_FIG8}.", "", _md(s8), "",
              "![Figure 8](hound_figure8.png)", "",
              "## Figure 9: false dependence after shuffling latency", "", f"Paper: {PAPER_FIG9}.", "", _md(s9), "",
              "![Figure 9](hound_figure9.png)", "",
              "## Figure 10: propensity estimators (confounder balance after IPW; lower is better)", "",
              f"Paper: {PAPER_FIG10}.", "", _md(s10), "", "![Figure 10](hound_figure10.png)", ""]
    md = out_dir / "hound.md"
    tmp = out_dir / ".hound.md.tmp"
    tmp.write_text("\n".join(lines))
    os.replace(tmp, md)
    for name, df in (("hound_figure8", f8), ("hound_figure9", f9), ("hound_figure10", f10)):
        df.to_parquet(out_dir / f"{name}.parquet", index=False)
    return {"report": md, "figures": figs, "figure8": s8, "figure9": s9, "figure10": s10}
