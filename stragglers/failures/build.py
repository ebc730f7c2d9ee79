"""Failure-prediction inputs on the warehouse (sql/early_usage.sql, sql/failure_tasks.sql,
sql/failure_jobs.sql, sql/failure_attempts.sql), over every job with task events."""

from __future__ import annotations

import duckdb
import numpy as np
import pandas as pd

from stragglers.failures.cloning import attempt_lists, evaluate_cloning, replayable
from stragglers.failures.predict import TARGET_BY_NAME, evaluate, fit_model, usage_present
from stragglers.settings.failures import FailureSettings
from stragglers.settings import SelectionSettings
from stragglers.warehouse.runner import build_table, replace_trace_frame, replace_trace_rows
from stragglers.warehouse.storage import table_exists

EARLY_USAGE_COLUMNS = {"job_id": "BIGINT", "task_id": "BIGINT", "early_cpu": "DOUBLE", "early_memory": "DOUBLE",
                       "early_io": "DOUBLE", "early_windows": "BIGINT"}


def usage_available(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether the staged trace has task_usage rows (a partial mirror may have none)."""
    try:
        return con.execute("SELECT count(*) FROM (SELECT 1 FROM stg_task_usage LIMIT 1)").fetchone()[0] > 0
    except (duckdb.CatalogException, duckdb.IOException, duckdb.InvalidInputException):
        return False


def build_failure_inputs(con: duckdb.DuckDBPyConnection, selection: SelectionSettings,
                         settings: FailureSettings) -> dict[str, int]:
    """early_usage (empty without task_usage) -> failure_tasks -> failure_jobs, failure_attempts."""
    counts = {}
    if usage_available(con):
        counts["early_usage"] = build_table(con, "early_usage", selection, usage_window_s=settings.usage_window_s)
    else:
        cols = ", ".join(f"NULL::{t} AS {c}" for c, t in EARLY_USAGE_COLUMNS.items())
        counts["early_usage"] = replace_trace_rows(
            con, "early_usage", f"SELECT '{selection.trace}' AS trace, {cols} LIMIT 0", selection.trace)
    for table in ("failure_tasks", "failure_jobs", "failure_attempts"):
        counts[table] = build_table(con, table, selection)
    return counts


# A table's rows in a fixed order: DuckDB returns an unordered scan in any order (parallel
# threads), and the seeded splits and samples pick rows by position, so without it the same seed
# gave different training and evaluation sets from run to run.
ROW_KEYS = {"failure_jobs": "job_id", "failure_tasks": "job_id, task_id",
            "failure_attempts": "job_id, task_id, attempt"}


def load(con: duckdb.DuckDBPyConnection, table: str, trace: str) -> pd.DataFrame:
    return con.execute(f"SELECT * FROM {table} WHERE trace = ? ORDER BY {ROW_KEYS[table]}", [trace]).df()


def clone_sets(replayable_keys: pd.DataFrame, attempts: pd.DataFrame,
               settings: FailureSettings) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Section VI-B: a random evaluation set of ``clone_tasks`` replayable tasks and a
    disjoint random training set of ``clone_tasks`` tasks (any task with known attempt
    outcomes), at most half of the tasks each. Returns the training attempts and the
    evaluation task keys."""
    rng = np.random.default_rng(settings.seed)
    key = ["job_id", "task_id"]
    replayable_keys = replayable_keys.sort_values(key).reset_index(drop=True)   # positions = the seed's picks
    known = attempts[attempts["end_event"].notna()].sort_values([*key, "attempt"])
    # at most half of the tasks go to the evaluation set: a small trace keeps a training set
    n_eval = min(settings.clone_tasks, known[["job_id", "task_id"]].drop_duplicates().shape[0] // 2)
    eval_keys = replayable_keys.iloc[np.sort(rng.permutation(len(replayable_keys))[:n_eval])]
    keys = known[["job_id", "task_id"]].drop_duplicates().merge(eval_keys, how="left", indicator=True)
    keys = keys[keys["_merge"] == "left_only"][["job_id", "task_id"]]
    train_keys = keys.iloc[np.sort(rng.permutation(len(keys))[: settings.clone_tasks])]
    return known.merge(train_keys, on=["job_id", "task_id"]), eval_keys.reset_index(drop=True)


def run_prediction(con: duckdb.DuckDBPyConnection, trace: str, settings: FailureSettings,
                   log=None) -> dict[str, pd.DataFrame]:
    """The forests of every target and scenario; writes failure_predictions and failure_importances."""
    frames = {t: load(con, t, trace) for t in ("failure_jobs", "failure_tasks", "failure_attempts")}
    curves, importances, summary = evaluate(frames, settings, log=log)
    replace_trace_frame(con, "failure_predictions", curves, trace)
    replace_trace_frame(con, "failure_importances", importances, trace)
    return {"curves": curves, "importances": importances, "summary": summary}


def run_cloning(con: duckdb.DuckDBPyConnection, trace: str, settings: FailureSettings,
                log=None) -> dict[str, pd.DataFrame]:
    """Algorithm 1 replayed on an evaluation set of tasks with an attempt-failure forest trained
    on another set; writes cloning_tasks (per threshold, clone count and task) and cloning_overhead."""
    attempts = load(con, "failure_attempts", trace)
    keys, reasons = replayable(attempts)
    train, eval_keys = clone_sets(keys, attempts, settings)
    target = TARGET_BY_NAME["attempt_failure"]
    scenario = "all" if usage_present(attempts, target) else "config+flag"
    model, n_train = fit_model(train, target, scenario, settings)
    ev = attempts.merge(eval_keys, on=["job_id", "task_id"]).sort_values(["job_id", "task_id", "attempt"])
    ev["score"] = model.score(ev)
    scores = {k: g["score"].tolist() for k, g in ev.groupby(["job_id", "task_id"], sort=False)}
    lists = attempt_lists(attempts, eval_keys)
    if log:
        log(f"replaying {len(lists)} tasks ({scenario} attempt-failure forest on {n_train} attempts)")
    thresholds = sorted(set(settings.clone_thresholds))
    tasks, overhead = evaluate_cloning(lists, scores, thresholds, sorted(set(settings.clone_counts) | {settings.clones}),
                                       settings.clone_retries)
    replace_trace_frame(con, "cloning_tasks", tasks, trace)
    replace_trace_frame(con, "cloning_overhead", overhead, trace)
    info = pd.DataFrame([{"scenario": scenario, "train_tasks": train[["job_id", "task_id"]].drop_duplicates().shape[0],
                          "train_attempts": n_train, "eval_tasks": len(lists),
                          "eval_tasks_with_failed_attempt": int(sum(any(a.failed for a in v) for v in lists.values())),
                          "retries_R": settings.clone_retries, "clones_C": settings.clones}])
    return {"tasks": tasks, "overhead": overhead, "reasons": reasons, "info": info}
