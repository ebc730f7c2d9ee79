"""Random-forest predictors of job kill, job failure, final task failure and task-attempt
failure (El-Sayed, Zhu, Schroeder, ICDCS 2017, Section V), in the paper's four scenarios.

Decisions where the paper is vague (docs/FAILURES.md):
- user and logical job name are categorical: ordinal codes learned on the training rows
  (unseen values -> -1), so the forest can split on them;
- a missing value (no usage for a task) is -1: every predictor is >= 0 otherwise;
- the split is 70/30 by job (seeded): every task and attempt of a job is on one side;
- "sampling ratio" = positives per negative in the training set after oversampling the
  positives with replacement (0 = the training set as it is); beyond ``max_train_rows`` a
  seeded sample of the training rows is used (reported);
- TaskFailFlag / AttemptFailFlag / PastAttemptsFlag as in Table IV: a job had a failed
  task attempt; a task had a failed attempt before its last one; an attempt follows a
  failed attempt of the same task.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.ensemble import RandomForestClassifier
from sklearn.metrics import precision_score, recall_score

from stragglers.settings.failures import FailureSettings

FAIL, FINISH, KILL = 3, 4, 5
CONFIG = ("user_name", "logical_job_name", "scheduling_class", "priority", "n_tasks", "different_machine",
          "cpu_request", "memory_request", "disk_request")
CATEGORICAL = ("user_name", "logical_job_name")
SCENARIOS = ("config", "config+usage", "config+flag", "all")


@dataclass(frozen=True)
class Target:
    name: str
    level: str            # the table: failure_jobs, failure_tasks or failure_attempts
    outcome: str          # the column holding the end event
    positive: int         # the end event that is the positive class
    usage: tuple[str, ...]
    flag: str


TARGETS: tuple[Target, ...] = (
    Target("job_kill", "failure_jobs", "job_end_event", KILL,
           ("early_cpu", "early_memory", "early_io", "early_cpu_cov", "early_memory_cov", "early_io_cov"),
           "task_fail_flag"),
    Target("job_failure", "failure_jobs", "job_end_event", FAIL,
           ("early_cpu", "early_memory", "early_io", "early_cpu_cov", "early_memory_cov", "early_io_cov"),
           "task_fail_flag"),
    Target("task_failure", "failure_tasks", "final_event", FAIL, ("early_cpu", "early_memory", "early_io"),
           "attempt_fail_flag"),
    Target("attempt_failure", "failure_attempts", "end_event", FAIL, ("early_cpu", "early_memory", "early_io"),
           "past_attempts_flag"),
)
TARGET_BY_NAME = {t.name: t for t in TARGETS}


def features(target: Target, scenario: str) -> list[str]:
    cols = list(CONFIG)
    if scenario in ("config+usage", "all"):
        cols += list(target.usage)
    if scenario in ("config+flag", "all"):
        cols.append(target.flag)
    return cols


def split_jobs(job_ids: np.ndarray, fraction: float, seed: int) -> set:
    """The training jobs: a seeded ``fraction`` of the distinct job ids."""
    jobs = np.unique(job_ids)
    rng = np.random.default_rng(seed)
    return set(rng.permutation(jobs)[: int(round(fraction * len(jobs)))].tolist())


class Encoder:
    """Numeric matrix of the chosen columns; categorical codes learned on the training rows."""

    def __init__(self, columns: list[str]):
        self.columns = columns
        self.codes: dict[str, dict] = {}

    def fit(self, df: pd.DataFrame) -> "Encoder":
        for c in self.columns:
            if c in CATEGORICAL:
                values = df[c].astype(str).value_counts().index
                self.codes[c] = {v: i for i, v in enumerate(values)}
        return self

    def transform(self, df: pd.DataFrame) -> np.ndarray:
        cols = []
        for c in self.columns:
            if c in CATEGORICAL:
                cols.append(df[c].astype(str).map(self.codes[c]).fillna(-1).to_numpy(dtype=float))
            else:
                cols.append(pd.to_numeric(df[c].astype("float64"), errors="coerce").fillna(-1).to_numpy(dtype=float))
        return np.column_stack(cols) if cols else np.empty((len(df), 0))


def oversample(y: np.ndarray, ratio: float, rng: np.random.Generator) -> np.ndarray:
    """Row indices of a training set with ``ratio`` positives per negative (positives
    resampled with replacement, all negatives kept); ratio 0 or already reached = as is."""
    idx = np.arange(len(y))
    pos, neg = idx[y == 1], idx[y == 0]
    want = int(round(ratio * len(neg)))
    if ratio <= 0 or len(pos) == 0 or want <= len(pos):
        return idx
    return np.concatenate([neg, pos, rng.choice(pos, size=want - len(pos), replace=True)])


@dataclass
class Model:
    target: Target
    scenario: str
    forest: RandomForestClassifier
    encoder: Encoder

    def score(self, df: pd.DataFrame) -> np.ndarray:
        proba = self.forest.predict_proba(self.encoder.transform(df))
        classes = list(self.forest.classes_)
        return proba[:, classes.index(1)] if 1 in classes else np.zeros(len(df))


def fit_model(train: pd.DataFrame, target: Target, scenario: str, settings: FailureSettings,
              ratio: float = 0.0) -> tuple[Model, int]:
    """A 50-tree forest on ``train`` (rows with a known outcome); returns it and the rows used."""
    rng = np.random.default_rng(settings.seed)
    if len(train) > settings.max_train_rows:
        train = train.iloc[np.sort(rng.choice(len(train), settings.max_train_rows, replace=False))]
    enc = Encoder(features(target, scenario)).fit(train)
    y = (train[target.outcome] == target.positive).to_numpy(dtype=int)
    rows = oversample(y, ratio, rng)
    forest = RandomForestClassifier(n_estimators=settings.trees, random_state=settings.seed, n_jobs=1)
    forest.fit(enc.transform(train.iloc[rows]), y[rows])
    return Model(target, scenario, forest, enc), len(rows)


def usage_present(df: pd.DataFrame, target: Target) -> bool:
    return bool(len(df)) and all(c in df.columns for c in target.usage) and bool(df[list(target.usage)].notna().any().any())


def evaluate(frames: dict[str, pd.DataFrame], settings: FailureSettings, targets=TARGETS,
             log=None) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Precision and recall per (target, scenario) while varying the threshold (training as is)
    and the training sampling ratio (threshold 0.5); feature importances; a summary of the rows.

    ``frames`` maps failure_jobs / failure_tasks / failure_attempts to their rows."""
    curves, importances, summary = [], [], []
    train_jobs = split_jobs(frames["failure_jobs"]["job_id"].to_numpy(), settings.train_fraction, settings.seed)
    for target in targets:
        df = frames[target.level]
        known = df[df[target.outcome].notna()]
        is_train = known["job_id"].isin(train_jobs).to_numpy()
        train, test = known[is_train], known[~is_train]
        y_test = (test[target.outcome] == target.positive).to_numpy(dtype=int)
        summary.append({"target": target.name, "rows": len(df), "unknown_outcome": len(df) - len(known),
                        "train_rows": len(train), "test_rows": len(test), "test_positives": int(y_test.sum()),
                        "positive_share": float(y_test.mean()) if len(y_test) else np.nan})
        for scenario in SCENARIOS:
            if "usage" in scenario or scenario == "all":
                if not usage_present(known, target):
                    curves.append({"target": target.name, "scenario": scenario, "available": False,
                                   "note": "no task_usage rows in this trace"})
                    continue
            if len(np.unique((train[target.outcome] == target.positive))) < 2 or not len(test):
                curves.append({"target": target.name, "scenario": scenario, "available": False,
                               "note": "one class only in the training set or no test rows"})
                continue
            for ratio in settings.sampling_ratios:
                model, n_used = fit_model(train, target, scenario, settings, ratio)
                p = model.score(test)
                thresholds = settings.thresholds if ratio == 0 else (0.5,)
                for thr in thresholds:
                    pred = (p >= thr).astype(int)
                    curves.append({"target": target.name, "scenario": scenario, "available": True,
                                   "sampling_ratio": ratio, "threshold": thr, "train_rows_used": n_used,
                                   "precision": precision_score(y_test, pred, zero_division=0),
                                   "recall": recall_score(y_test, pred, zero_division=0),
                                   "flagged": int(pred.sum())})
                if ratio == 0:
                    for f, imp in zip(model.encoder.columns, model.forest.feature_importances_):
                        importances.append({"target": target.name, "scenario": scenario, "feature": f,
                                            "importance": float(imp)})
            if log:
                log(f"{target.name} / {scenario}: {len(settings.sampling_ratios)} forests")
    return pd.DataFrame(curves), pd.DataFrame(importances), pd.DataFrame(summary)
