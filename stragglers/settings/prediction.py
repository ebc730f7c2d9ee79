"""The prediction stage's settings: the online evaluation, the authors' and the operator's protocol
(stragglers/prediction/replay/protocol.py), the survival family and where the replays run; and the typed
settings the evaluation (``EvaluationSettings``) and the replay engine (``EngineSettings``) take."""

from __future__ import annotations

import os
from typing import Annotated, Literal

from pydantic import field_validator

from stragglers.settings.stage import Grammar, SettingsView, StageSettings, setting
from stragglers.trace_formats import FEATURE_SETS
from stragglers.settings.warehouse import WarehouseSettings, t0_before_threshold

DECISION_CLOCKS = ("online", "task_clock", "legacy_grid")
#: NURD_PROTOCOL: the presets (stragglers/prediction/replay/protocol.py)
PROTOCOLS = ("ours", "authors", "operator")
# The values each protocol setting accepts (first: this pipeline's protocol, the default).
PROTOCOL_CHOICES = {
    "latency_normalization": ("none", "job_minmax"),
    "quantiles": ("interpolated", "sorted_index"),
    "test_set": ("running_at_t0", "length_filter"),
    "horizon": ("tau", "longest_straggler", "end"),
    "threshold": ("oracle", "online"),
    "intervention": ("relaunch", "speculate"),
    "latency": ("lifecycle", "usage_windows"),
    "baseline_params": ("ours", "authors"),
}


def scheduler_address(v) -> str | None:
    return (None if isinstance(v, str) and (v == "" or "://" in v)
            else "'' or a scheduler address such as tcp://127.0.0.1:8786")


class PredictionSettings(StageSettings):
    feature_set: Literal[FEATURE_SETS] = setting("auto", env="NURD_FEATURE_SET")
    """the features every method sees: 'usage' = the paper's 15 (task_usage), 'events' = scheduler-visible features
    from events (docs/EVENT_FEATURES.md), 'all' = both; 'auto' = 'usage' where the trace has task_usage, 'events'
    where it has none (a partial mirror)"""
    decision_clock: Literal[DECISION_CLOCKS] = setting("online", env="NURD_DECISION_CLOCK")
    """when the operator's protocol (threshold='online') decides: 'online' = on the job's wall clock (since its
    first task's start), each time a further clock_finished_percent of the job's tasks have finished, and every
    clock_interval_s while tasks run, until the last ends whatever `horizon` (stopping at tau would need tau), on
    features as of each decision (operator_checkpoint_features), a copy starting at the decision; 'task_clock' =
    the same on the paper's task-time clock (every task seen as if started with the first: it reads later tasks'
    progress, kept to measure what that did); 'legacy_grid' = the paper's grid cut from the true tau, then steps
    to the job's end on features repeated from the last row before tau (it reads the future: kept to measure what
    that did)"""
    # online evaluation
    seed: int = setting(0, env="NURD_SEED", ge=0, doc="seed of the evaluation and bootstrap")
    regressor: Literal["xgboost", "sklearn"] = setting(
        "xgboost", doc="NURD's regressor ('sklearn' = GradientBoostingRegressor, the authors')")
    alpha: float = setting(0.5, ge=0, lt=1,
                           doc="NURD calibration (the paper: 0.5; the authors' released code: 0)")
    eps: float = setting(0.05, gt=0, le=1, doc="NURD minimum weight")
    workers: int = setting(0, env="NURD_WORKERS", ge=0,
                           doc="evaluation worker processes; 0 = one per core (the results do not depend on it)")
    min_finished: int = setting(20, ge=2,
                                doc="jobs with fewer finished tasks are skipped (counted)")
    n_boot: int = setting(1000, ge=1, doc="bootstrap resamples over jobs")
    # the authors' protocol (stragglers/prediction/replay/protocol.py; docs/EVALUATION.md cites the line of
    # their released code each setting mirrors); each default is this pipeline's protocol
    protocol: Literal[PROTOCOLS] = setting("ours", env="NURD_PROTOCOL")
    """'authors' sets every protocol setting below, alpha, regressor and feature_mode to the authors' released
    code's values; 'operator' sets threshold='online', horizon='end', intervention='speculate' (what a scheduler
    has and does); 'ours' leaves each as set"""
    latency_normalization: Literal[PROTOCOL_CHOICES["latency_normalization"]] = setting("none")
    """'job_minmax': NURD thresholds (y_hat - y_min)/w >= tau - y_min (latency min-max normalized per job)"""
    propensity_max_iter: int = setting(1000, ge=1,
                                       doc="iterations of NURD's propensity LogisticRegression (authors: 100)")
    quantiles: Literal[PROTOCOL_CHOICES["quantiles"]] = setting(
        "interpolated", doc="'sorted_index': tau and the initial training cut as sorted[int(q n)]")
    test_set: Literal[PROTOCOL_CHOICES["test_set"]] = setting(
        "running_at_t0", doc="'length_filter': the authors' series-length filter of the evaluated tasks")
    horizon: Literal[PROTOCOL_CHOICES["horizon"]] = setting("tau")
    """'longest_straggler': the replay goes on past tau until the longest straggler ends; 'end': until the job's
    last task ends (a flag before the task ends counts)"""
    threshold: Literal[PROTOCOL_CHOICES["threshold"]] = setting("oracle")
    """what a method is given as the straggler threshold: 'oracle' = the job's true latency quantile tau (known once
    the job is over); 'online' = tau_hat(t), the Kaplan-Meier quantile of the latencies known at t (running tasks
    censored), log-normal extrapolation where it is undefined (docs/EVALUATION.md)"""
    intervention: Literal[PROTOCOL_CHOICES["intervention"]] = setting("relaunch")
    """what a flag does in the completion-time simulation: 'relaunch' = kill and restart (the paper's Algorithms
    2-3); 'speculate' = a copy runs beside the original, the first to finish wins, both cost machine time"""
    copy_keeps: float = setting(0.0, env="NURD_COPY_KEEPS", ge=0, le=1)
    """the share of its original's relative log-latency a speculative copy keeps: y' = y^k d^(1-k), d the fresh draw
    from the job's latencies (0 = today's model; 1 = a copy as slow as its original); one copy model for every
    table of copies: the operator's completion tables, the sweep and its budgets, the cost-aware threshold
    (docs/EVALUATION.md, 'What a copy buys')"""
    cause_aware_copies: Literal["off", "on"] = setting("off", env="NURD_CAUSE_AWARE_COPIES")
    """generated traces (their truth is known): 'on' = a speculative copy of a task slowed by its own work (data,
    computation or I/O skew) does the original's work on a typical machine, any other copy draws as today; the
    operator's completion tables only"""
    latency: Literal[PROTOCOL_CHOICES["latency"]] = setting(
        "lifecycle", doc="'usage_windows': a task's latency is the sum of its usage-window durations")
    baseline_params: Literal[PROTOCOL_CHOICES["baseline_params"]] = setting(
        "ours", doc="'authors': the baselines' hyperparameters of the released code")
    # the survival family (stragglers/prediction/evaluation/history.py)
    cost_lambda: float = setting(1.0, env="NURD_COST_LAMBDA", ge=0, le=1e6)
    """the price of machine time for the survival family's cost-aware threshold: each job's threshold maximizes,
    over the jobs that ended before it, the JCT reduction minus this x the extra machine time (both as shares of
    the job's)"""
    history_min_jobs: int = setting(5, ge=1)
    """a job learns from earlier jobs (prior, cost-aware threshold) once at least this many have ended before its
    first checkpoint; before, the fallback"""
    ablation_max_jobs: int = setting(0, ge=0,
                                     doc="protocol_ablation and nurd_sensitivity replay the first N jobs; 0 = all")
    # where the replays run (stragglers/prediction/replay/workers.py)
    dask_address: Annotated[str, Grammar(scheduler_address)] = setting("", env="NURD_DASK_ADDRESS")
    """a Dask scheduler to replay jobs on, e.g. tcp://host:8786; '' = local processes (workers)"""
    exchange_dir: str = setting("", env="NURD_EXCHANGE_DIR")
    """where job batches are exported as Parquet for the workers (a path every Dask worker can read); '' =
    <data_dir>/exchange"""
    batch_jobs: int = setting(200, env="NURD_BATCH_JOBS", ge=1)
    """jobs per batch streamed from the warehouse (memory grows with it, not with the number of jobs)"""


class EvaluationSettings(SettingsView, models=(PredictionSettings, WarehouseSettings), linked=(
        "seed", "quantile", "alpha", "eps", "regressor",
        "workers",            # 0 = one per core, resolved here
        "min_finished", "n_boot",
        "initial_fraction",   # the initial training set
        # the authors' protocol, one setting per difference (stragglers/prediction/replay/protocol.py)
        "latency_normalization", "propensity_max_iter", "quantiles", "test_set", "horizon", "threshold",
        "decision_clock", "clock_interval_s", "clock_doubling_after", "intervention", "latency", "baseline_params",
        "feature_set", "cost_lambda", "history_min_jobs", "copy_keeps")):
    """What the online evaluation depends on (recorded in evaluation_runs)."""

    rules = (t0_before_threshold,)

    @field_validator("workers")
    @classmethod
    def _one_worker_per_core(cls, workers: int) -> int:
        return workers or (os.cpu_count() or 1)

    def as_dict(self) -> dict:
        """The settings the evaluation depends on: the operator's clock only under threshold='online'
        (the paper's view is recorded, and kept current, without them)."""
        clock = ("decision_clock", "clock_interval_s", "clock_doubling_after")
        return {k: v for k, v in super().as_dict().items() if self.threshold == "online" or k not in clock}


class EngineSettings(SettingsView, models=(PredictionSettings,), linked=(
        "dask_address",
        "exchange_dir",   # '' = a temporary directory (local runs only)
        "batch_jobs")):
    """Where the replays run (not recorded with the results: they do not depend on it)."""
