"""How well can any method that reads Hound's metrics name a job's dominant straggler cause?

A ceiling for Hound's check, not a method of the pipeline: classifiers *trained on the truth* of
other generated traces, reading only what Hound reads, predict each job's dominant cause in the
stragglers truth (``straggler_mixtures``, the check). If they cannot beat the best constant answer
either, the metrics do not carry the answer; if they can, Hound's unsupervised chain loses it.

Per job, the features are observable (no truth):

- the stragglers-vs-normal contrast of every Hound metric, as in Hound's case studies (Appendix D,
  Figures 12-14): (median over the job's stragglers - median over its normal tasks) / sd of the
  normal tasks, a straggler being a task whose latency (``hound_inputs.latency_s``) is above the
  job's p90;
- each learner's causality profile (``hound_profiles``).

Answers compared on each evaluation trace (dominant-cause accuracy against the stragglers truth):

- ``case-study rule`` (unsupervised, nothing fitted): the Table 4 word with the largest contrast
  (a metric's (+) or (-) by its sign) names the cause;
- ``logistic``, ``forest``: scikit-learn's LogisticRegression (standardized features) and
  RandomForestClassifier (200 trees, seed 0) with their default hyperparameters, fitted on the
  training traces' jobs (nothing tuned);
- ``training majority``: the most common dominant cause of the training traces (a constant chosen
  without the evaluation truth);
- ``best constant in hindsight`` and Hound (LDA seed 0), as in hound_validation.

    python -m studies.hound.hound_ceiling \
        --train /tmp/d101,/tmp/d102 --eval /tmp/d7,/tmp/d13
"""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from stragglers.diagnosis import HoundSettings
from stragglers.diagnosis.learners import LEARNERS
from stragglers.diagnosis.run import diagnose
from stragglers.diagnosis.truth import (STRAGGLER_QUANTILE, best_constant, cause_added_s, diagnosed_mixtures,
                                       dominant, load_truth, straggler_mixtures)
from stragglers.diagnosis.vocabulary import METRIC_COLUMNS, METRICS, WORD_CAUSE
from stragglers.traces.fetch import truth_dir


def read(data_dir: str) -> dict:
    with duckdb.connect(str(Path(data_dir) / "warehouse.duckdb"), read_only=True) as con:
        inputs = con.execute("SELECT * EXCLUDE (trace) FROM hound_inputs WHERE trace = 'synthetic'").df()
        profiles = con.execute("SELECT * EXCLUDE (trace) FROM hound_profiles WHERE trace = 'synthetic'").df()
    tj, tt = load_truth(truth_dir(data_dir, "synthetic"))
    mix = straggler_mixtures(cause_added_s(tt, tj, inputs[["job_id", "task_id", "latency_s", "sched_delay"]]))
    return {"inputs": inputs, "profiles": profiles, "truth": {j: dominant(m) for j, m in mix.items() if m}}


def contrasts(inputs: pd.DataFrame) -> pd.DataFrame:
    """job x metric: (median of stragglers - median of normal tasks) / sd of normal tasks (0 where they do
    not vary)."""
    rows = {}
    for job, g in inputs.groupby("job_id"):
        X = g[list(METRIC_COLUMNS)].astype(float)
        X = X.fillna(X.median())
        s = g.latency_s > g.latency_s.quantile(STRAGGLER_QUANTILE)
        sd = X[~s].std()
        rows[job] = ((X[s].median() - X[~s].median()) / sd.where(sd > 0)).fillna(0.0)
    return pd.DataFrame(rows).T


def features(run: dict) -> pd.DataFrame:
    c = contrasts(run["inputs"]).add_prefix("contrast_")
    p = run["profiles"].assign(col=lambda d: d.learner + "_" + d.metric).pivot(
        index="job_id", columns="col", values="weight").fillna(0.0)
    return c.join(p)


def case_study_rule(contrast: pd.DataFrame) -> dict:
    """The Table 4 word with the largest contrast names the cause (ties: the first metric)."""
    out = {}
    for job, r in contrast.iterrows():
        best, val = None, 0.0
        for col, v in r.items():
            word = f"{METRICS[col]}({'+' if v > 0 else '-'})"
            if word in WORD_CAUSE and abs(v) > val:
                best, val = WORD_CAUSE[word], abs(v)
        out[job] = best
    return out


def main() -> None:
    ap = argparse.ArgumentParser(prog="python -m studies.hound.hound_ceiling")
    ap.add_argument("--train", required=True, help="comma-separated data dirs (training traces)")
    ap.add_argument("--eval", required=True, help="comma-separated data dirs (evaluation traces)")
    ap.add_argument("--lda-seeds", default="0")
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    train = [read(d) for d in args.train.split(",")]
    Xs, ys = [], []
    for r in train:
        f = features(r)
        jobs = [j for j in f.index if j in r["truth"]]
        Xs.append(f.loc[jobs]); ys += [r["truth"][j] for j in jobs]
    X = pd.concat(Xs).fillna(0.0)
    y = np.array(ys)
    prior = pd.Series(y).value_counts()
    print(f"training: {len(y)} jobs from {len(train)} traces; dominant causes {prior.to_dict()}\n")
    models = {"logistic": make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000)),
              "forest": RandomForestClassifier(n_estimators=200, random_state=0),
              # the same with every cause weighted equally: without the training traces' base rate
              "logistic balanced": make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000,
                                                                                      class_weight="balanced")),
              "forest balanced": RandomForestClassifier(n_estimators=200, random_state=0, class_weight="balanced")}
    for m in models.values():
        m.fit(X, y)
    print("| trace | jobs | best constant in hindsight | training majority | Hound (LDA seeds) | case-study rule | "
          + " | ".join(models) + " |")
    print("|---|---|---|---|---|---|" + "---|" * len(models))
    for d in args.eval.split(","):
        r = read(d)
        f = features(r).reindex(columns=X.columns).fillna(0.0)
        jobs = [j for j in f.index if j in r["truth"]]
        truth = np.array([r["truth"][j] for j in jobs])
        best = best_constant({j: {r["truth"][j]: 1.0} for j in jobs})
        acc = lambda pred: float(np.mean([p == t for p, t in zip(pred, truth)]))
        rule = case_study_rule(contrasts(r["inputs"]))
        hound = []
        all_jobs = sorted(r["profiles"].job_id.unique())
        for seed in (int(s) for s in args.lda_seeds.split(",")):
            dm = diagnosed_mixtures(diagnose(r["profiles"], HoundSettings(seed=seed)).job_causes, all_jobs)
            hound.append(acc([dominant(dm[j]) for j in jobs]))
        row = [acc([best] * len(jobs)), acc([prior.index[0]] * len(jobs)), None, acc([rule[j] for j in jobs]),
               *(acc(m.predict(f.loc[jobs])) for m in models.values())]
        print(f"| {Path(d).name} | {len(jobs)} | {row[0]:.3f} ({best}) | {row[1]:.3f} ({prior.index[0]}) | "
              f"{', '.join(f'{h:.3f}' for h in hound)} | {row[3]:.3f} | " + " | ".join(f"{v:.3f}" for v in row[4:])
              + " |")
        for name, m in models.items():
            pred = m.predict(f.loc[jobs])
            rec = {str(c): f"{int(np.sum((truth == c) & (pred == c)))}/{int(np.sum(truth == c))}" for c in pd.unique(truth)}
            print(f"  {name} per-cause recall: {rec}")
        rec = {str(c): f"{int(np.sum([(t == c) and (rule[j] == c) for j, t in zip(jobs, truth)]))}/{int(np.sum(truth == c))}"
               for c in pd.unique(truth)}
        print(f"  case-study rule per-cause recall: {rec}")
        # what tells the limited-processor-dominant jobs apart: each contrast's AUC (the direction
        # that separates them, > 0.5), the signature (CPU down, CPI up) beside the absence of others
        lp = truth == "limited_processor"
        if 0 < lp.sum() < len(lp):
            c = contrasts(r["inputs"]).loc[jobs]
            auc = {m: roc_auc_score(lp, c[m]) for m in ("mean_cpu", "peak_cpu", "cpi", "mean_mem", "page_cache",
                                                         "disk_space", "sched_delay")}
            print("  AUC of limited-processor-dominant vs other jobs by the contrast (< 0.5: lower in them): "
                  + ", ".join(f"{METRICS[m]} {v:.2f}" for m, v in auc.items()))


if __name__ == "__main__":
    main()
