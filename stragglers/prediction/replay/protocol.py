"""What a protocol does to a job: the authors' evaluation (its latencies, features and horizon), the
operator's online threshold and horizon (``adapt_job``), over the settings of
stragglers/settings/protocols.py.

The released code of the paper (public repository y-ding/nurd-mlsys22-code,
commit dd9a7f5; files code/run_ts.py, code/utils_ts.py, code/run_od.py)
evaluates differently from Algorithm 1 as printed. Each difference is one
setting (a field of ``EvaluationSettings``, or ``feature_mode`` of
``SelectionSettings``) whose default is this pipeline's protocol;
``NURD_PROTOCOL=authors`` turns all of them on (``AUTHORS``). docs/EVALUATION.md
gives, for each, the line of the released code it mirrors.

Differences that need no setting because they do not change the outcome here:
a flagged task keeps running and keeps being scored in the released code, and
a task counts as flagged if any step flagged it (utils_ts.py ``fun_cum_vec``);
this simulator's "flagged once, for good" gives the same set of flagged tasks.

The runs that attribute the protocol's effect (``protocol_ablation``,
``nurd_sensitivity``) are in ``stragglers.prediction.evaluation.ablation``: they run the
evaluation, which applies the settings defined here.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Iterator, Mapping, Sequence

import duckdb
import numpy as np

from stragglers.prediction.replay.clock import next_timed_decision, uses_online_clock
from stragglers.prediction.replay.simulate import JobData
from stragglers.prediction.statistics.threshold import online_threshold
from stragglers.settings.prediction import EvaluationSettings
from stragglers.settings.protocols import is_ours
from stragglers.settings.warehouse import SelectionSettings
from stragglers.warehouse.build import step_tables
from stragglers.warehouse.freshness import shadow_tables

#: horizon 'end': at most this many checkpoints after the warehouse's last one (before tau)
END_STEPS = 20


# ---------------------------------------------------------------- one job under a protocol

def usage_window_latencies(con: duckdb.DuckDBPyConnection, trace: str) -> dict[int, dict[int, float]]:
    """Per job, per task: the sum of the task's usage-window durations (s), the authors' latency."""
    df = con.execute("""SELECT job_id, task_id, sum(dur) AS latency_s FROM usage_windows
                        WHERE trace = ? GROUP BY job_id, task_id""", [trace]).df()
    return {int(j): dict(zip(g["task_id"].astype(int), g["latency_s"].astype(float)))
            for j, g in df.groupby("job_id")}


def adapt_job(job: JobData, s: EvaluationSettings, usage_latency: Mapping[int, float] | None = None) -> JobData:
    """``job`` (built by this pipeline's protocol) under the protocol settings of ``s``.

    Returns ``job`` itself when every setting is this pipeline's default.
    """
    if is_ours(s):
        return job
    lat = job.latency
    if s.latency == "usage_windows":
        if usage_latency is None:
            raise ValueError(f"job {job.job_id}: latency='usage_windows' needs the usage_windows table")
        lat = np.array([usage_latency.get(int(t), np.nan) for t in job.task_ids])
        # a task without usage windows keeps its event latency (counted by the caller)
        lat = np.where(np.isnan(lat) | (lat <= 0), job.latency, lat)
    n = len(lat)
    srt = np.sort(lat)
    if s.quantiles == "sorted_index":
        tau = float(srt[min(int(s.quantile * n), n - 1)])
        initial = lat < srt[min(int(s.initial_fraction * n), n - 1)]
        evaluated = ~initial
    else:
        tau = job.tau if lat is job.latency else float(np.quantile(lat, s.quantile))
        # F0: finished by t0; scored: running at t0 (the operator's tasks that ended otherwise are neither)
        ended0, initial = job.ended_by(job.t0) if lat is job.latency else (lat <= job.t0, lat <= job.t0)
        evaluated = ~ended0
    step = float(job.checkpoints[1] - job.checkpoints[0]) if len(job.checkpoints) > 1 else None
    if s.test_set == "length_filter" and step:
        # series length = number of checkpoint steps the task runs (the authors count usage windows)
        length = np.ceil(lat / step)
        straggler = lat >= tau
        for group, keep in ((evaluated & straggler, lambda m: length >= m - 1),
                            (evaluated & ~straggler, lambda m: length <= m + 1)):
            if group.any():
                evaluated &= ~group | keep(length[group].mean())
    checkpoints, X = job.checkpoints, job.X
    # the operator's online clock and its features already go on until the job's last task ends
    online_clock = uses_online_clock(s)
    if s.horizon == "end" and step and not online_clock:
        # the legacy grid (decision_clock='legacy_grid', it reads the future): checkpoints go on past
        # tau until the job's last task ends, with the same step but at most END_STEPS of them (a long
        # tail gets a coarser step); features past the warehouse's last checkpoint are those of that
        # checkpoint (the warehouse builds [t0, tau))
        tail_step = max(step, (float(lat.max()) - float(checkpoints[-1])) / END_STEPS)
        extra = np.arange(checkpoints[-1] + tail_step, float(lat.max()), tail_step)
        if len(extra):
            checkpoints = np.r_[checkpoints, extra]
            X = np.concatenate([X, np.repeat(X[-1:], len(extra), axis=0)])
    elif s.horizon == "longest_straggler" and step and (lat >= tau).any() and not online_clock:
        # steps past tau until the second-to-last step of the longest straggler's series; the
        # features after the warehouse's last checkpoint are those of that checkpoint
        end = float(lat[lat >= tau].max()) - step
        extra = np.arange(checkpoints[-1] + step, end + 1e-9, step)
        if len(extra):
            checkpoints = np.r_[checkpoints, extra]
            X = np.concatenate([X, np.repeat(X[-1:], len(extra), axis=0)])
    thresholds = None
    if s.threshold == "online":
        # tau_hat(t_k) from the latencies known at t_k (finished) and every running task censored at how
        # long it has run (a task that ended otherwise by t_k has no latency, one not started no time: in neither)
        def known(t: float) -> tuple[np.ndarray, np.ndarray]:
            if lat is not job.latency:
                return lat[lat <= t], np.full(int((lat > t).sum()), t)
            ended, done = job.ended_by(t)
            running = ~ended & job.started_by(t)
            return lat[done], job.elapsed(t)[running]

        thresholds = np.array([online_threshold(*known(float(t)), s.quantile) for t in checkpoints])
    steps = None
    if online_clock:
        steps = np.array([next_timed_decision(float(checkpoints[0]), float(t), s.clock_interval_s,
                                              s.clock_doubling_after) - float(t) for t in checkpoints])
    span_end = float((lat if job.start is None else job.start + lat).max()) if s.horizon == "end" else None
    return JobData(job_id=job.job_id, task_ids=job.task_ids, latency=lat, checkpoints=checkpoints, X=X, tau=tau,
                   feature_names=job.feature_names, initial=initial, evaluated=evaluated,
                   thresholds=thresholds, span_end=span_end, steps=steps, finished=job.finished, start=job.start)


@dataclass(frozen=True)
class ProtocolTransform:
    """``adapt_job`` as a picklable callable for the replay engine's workers: the settings, and
    per job the usage-window latencies when the protocol needs them."""

    settings: EvaluationSettings
    usage: Mapping[int, Mapping[int, float]] | None = None

    def __call__(self, job: JobData) -> JobData:
        usage = None if self.usage is None else self.usage.get(int(job.job_id), {})
        return adapt_job(job, self.settings, usage)

    def for_job(self, job_id: int) -> "ProtocolTransform":
        """The same for one job, holding only its usage latencies (what the engine ships with it)."""
        return self if self.usage is None else ProtocolTransform(self.settings, {job_id: self.usage.get(job_id, {})})


def job_transform(con: duckdb.DuckDBPyConnection, trace: str, s: EvaluationSettings) -> ProtocolTransform | None:
    """What the engine applies to each job under the protocol settings of ``s``; None under ours."""
    if is_ours(s):
        return None
    return ProtocolTransform(s, usage_window_latencies(con, trace) if s.latency == "usage_windows" else None)


def adapt_jobs(con: duckdb.DuckDBPyConnection, trace: str, jobs: Sequence[JobData], s: EvaluationSettings
               ) -> list[JobData]:
    """Every job under the protocol settings of ``s`` (the jobs themselves under ours)."""
    transform = job_transform(con, trace, s)
    return list(jobs) if transform is None else [transform(j) for j in jobs]


@contextlib.contextmanager
def warehouse_features(con: duckdb.DuckDBPyConnection, selection: SelectionSettings, built_with: SelectionSettings
                       ) -> Iterator[None]:
    """Inside the block, ``job_checkpoints`` and ``checkpoint_features`` are those ``selection``
    builds (temporary tables that shadow the warehouse's) when it differs from ``built_with`` in
    feature mode or quantile; the warehouse is not modified."""
    same = (selection.feature_mode, selection.quantile) == (built_with.feature_mode, built_with.quantile)
    if same:
        yield
        return
    # the feature step's tables but task_attempts (every attempt of every job: no quantile, no feature mode)
    # nor the operator's clock tables (the ablations replay the paper's view)
    tables = [t for t in step_tables("checkpoint_features", selection)
              if t != "task_attempts" and not t.startswith("operator_")]
    with shadow_tables(con, selection, tables, selection.trace, selection.as_dict()):
        yield
