"""Load jobs from the warehouse, replay methods on them, store the results.

Dagster-free: the assets call ``evaluate`` with a DuckDB connection.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import partial
from typing import Callable, Sequence

import duckdb
import numpy as np
import pandas as pd

from stragglers.prediction.methods import BASELINES, Method
from stragglers.prediction.methods.nurd import NurdFamily
from stragglers.reports.comparison import table3
from stragglers.settings import EvaluationSettings
from stragglers.traces.formats import trace_format
from stragglers.prediction.simulate import JobData, replay_jobs, results_frames
from stragglers.warehouse.build import create_view, transaction

RESULT_TABLES = ("predictions", "job_metrics", "f1_over_time", "method_fallbacks", "evaluation_runs")


def feature_names(trace: str) -> tuple[str, ...]:
    return trace_format(trace).features


def load_jobs(con: duckdb.DuckDBPyConnection, trace: str, settings: EvaluationSettings
              ) -> tuple[list[JobData], pd.DataFrame]:
    """Every selected job of ``trace`` as JobData, and the jobs skipped (with why)."""
    feats = feature_names(trace)
    clock = con.execute("""
        SELECT job_id, any_value(tau_s) AS tau_s, any_value(n_finished) AS n_finished, count(*) AS n_cp
        FROM job_checkpoints WHERE trace = ? GROUP BY job_id ORDER BY job_id""", [trace]).df()
    if clock.empty:
        raise LookupError(f"no job_checkpoints rows for trace {trace!r}: materialize checkpoint_features first")
    lat = con.execute("SELECT job_id, task_id, latency_s FROM tasks WHERE trace = ? ORDER BY job_id, task_id",
                      [trace]).df()
    cols = ", ".join(feats)
    feat = con.execute(f"""SELECT job_id, k, task_id, checkpoint_s, {cols} FROM checkpoint_features
                           WHERE trace = ? ORDER BY job_id, k, task_id""", [trace]).df()
    skipped = []
    jobs = []
    lat_by_job = dict(tuple(lat.groupby("job_id", sort=False)))
    feat_by_job = dict(tuple(feat.groupby("job_id", sort=False)))
    for row in clock.itertuples(index=False):
        if row.n_finished < settings.min_finished:
            skipped.append({"job_id": row.job_id, "reason": f"{row.n_finished} finished tasks < min_finished"})
            continue
        if row.n_cp < 2:
            skipped.append({"job_id": row.job_id, "reason": "no checkpoint between t0 and tau"})
            continue
        lt = lat_by_job[row.job_id]
        ft = feat_by_job[row.job_id]
        n = len(lt)
        K = row.n_cp
        if len(ft) != n * K:
            raise ValueError(f"checkpoint_features of job {row.job_id} has {len(ft)} rows, expected "
                             f"{n} tasks x {K} checkpoints")
        X = ft[list(feats)].to_numpy(float).reshape(K, n, len(feats))
        task_ids = ft["task_id"].to_numpy()[:n]
        if not np.array_equal(task_ids, lt["task_id"].to_numpy()):
            raise ValueError(f"job {row.job_id}: checkpoint_features tasks differ from tasks")
        latency = lt["latency_s"].to_numpy(float)
        expected_tau = float(np.quantile(latency, settings.quantile))
        if not np.isclose(row.tau_s, expected_tau, rtol=1e-9, atol=1e-6):
            raise ValueError(
                f"job {row.job_id}: job_checkpoints has tau {row.tau_s:.6f} s but quantile={settings.quantile} "
                f"gives {expected_tau:.6f} s: the warehouse was built with another quantile setting; "
                f"re-materialize tasks and checkpoint_features")
        jobs.append(JobData(job_id=row.job_id, task_ids=task_ids, latency=latency,
                            checkpoints=ft["checkpoint_s"].to_numpy(float)[::n], X=X, tau=float(row.tau_s),
                            feature_names=feats))
    return jobs, pd.DataFrame(skipped, columns=["job_id", "reason"])


def method_factory(name: str, settings: EvaluationSettings) -> Callable[[], Method]:
    """A picklable zero-argument constructor for method ``name``."""
    if name == "nurd":
        return partial(NurdFamily, regressor=settings.regressor, alpha=settings.alpha, eps=settings.eps)
    if name in BASELINES:
        return BASELINES[name]
    raise KeyError(f"unknown method {name!r}; known: nurd, {', '.join(sorted(BASELINES))}")


@dataclass
class EvaluationOutcome:
    frames: dict[str, pd.DataFrame]
    summary: pd.DataFrame
    hyperparameters: dict[str, dict]
    n_jobs: int
    skipped: pd.DataFrame
    seconds: float


def evaluate(con: duckdb.DuckDBPyConnection, trace: str, methods: Sequence[str], settings: EvaluationSettings,
             progress: Callable[[int, int], None] | None = None) -> EvaluationOutcome:
    """Replay ``methods`` (registry names; 'nurd' = the NURD family) on every job of ``trace``
    and replace their rows in the result tables in one transaction."""
    started = time.perf_counter()
    jobs, skipped = load_jobs(con, trace, settings)
    if not jobs:
        raise LookupError(f"trace {trace!r} has no job to evaluate (skipped: {len(skipped)})")
    factories = [method_factory(m, settings) for m in methods]
    results = replay_jobs(jobs, factories, seed=settings.seed, workers=settings.workers, progress=progress)
    frames = results_frames(results, trace)
    seconds = time.perf_counter() - started
    hyper = {}
    for f in factories:
        m = f()
        for v in m.variant_names:
            hyper[v] = m.hyperparameters()
    variants = sorted(hyper)
    frames["evaluation_runs"] = pd.DataFrame([{
        "trace": trace, "method": v, "n_jobs": len(jobs), "n_jobs_skipped": len(skipped),
        "settings": json.dumps(settings.as_dict()), "hyperparameters": json.dumps(hyper[v], default=str),
        "seconds": seconds, "finished_at": datetime.now(timezone.utc).replace(tzinfo=None)} for v in variants])
    write_results(con, frames, trace, variants)
    summary = table3(frames["job_metrics"], n_boot=settings.n_boot, seed=settings.seed)
    return EvaluationOutcome(frames, summary, hyper, len(jobs), skipped, seconds)


def write_results(con: duckdb.DuckDBPyConnection, frames: dict[str, pd.DataFrame], trace: str,
                  methods: Sequence[str]) -> None:
    """Replace ``methods``' rows of ``trace`` in every result table, in one transaction."""
    for table in RESULT_TABLES:
        create_view(con, table)
    with transaction(con):
        for table in RESULT_TABLES:
            con.execute(f"DELETE FROM {table} WHERE trace = ? AND method IN (SELECT unnest(?))",
                        [trace, list(methods)])
            df = frames.get(table)
            if df is not None and len(df):
                con.register("_rows", df)
                con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM _rows")
                con.unregister("_rows")
