"""One job as the replay engine sees it: its tasks on the job's wall clock, the checks at which a
scheduler decides, where a copy can run, and what the scheduler knows at each check.

A job is a Google job or a Spark stage attempt. Task i starts at ``start[i]`` (seconds after the
job's origin, its first task's start) and its original attempt runs ``latency[i]`` seconds, ending at
``end[i]``; ``finished[i]`` says it ended by finishing (the others were killed, evicted, failed, lost,
or still ran when the record stops: a copy of one never finishes and buys nothing). The checks are
the scheduler's: on a Google trace the operator's online clock (stragglers/prediction/replay/clock.py), on
Spark event logs every ``spark.speculation.interval`` from the stage's submission.

What a scheduler knows at check t, computed once per job for every policy (``CheckState``):

- the tasks running (started, not ended) and the job's machine time so far, sum of min(y_i, t - s_i);
- the job's durations as known at t: the Kaplan-Meier curve over the finished durations with the
  running tasks censored at their elapsed time, a log-normal fit beyond (``threshold``), re-estimated
  when a task has finished since the last estimate (what the scheduler learns then; between
  finishes the last estimate stands). From it the median and a copy's expected machine time:
  E[min(C, R)], C a fresh draw of the durations, R the original's remaining time given how long it
  has run (``threshold.copy_cost_curve``): a copy of a task about to end costs little, since it is
  killed when its original ends;
- the budget's base, the job's machine time as the scheduler can best put it at t: the larger of its
  machine time so far and its task count times the mean duration under that estimate. The machine
  time so far alone starves a budget early in a job (a share of little is little, when copies matter
  most); the task count times the median understates a right-skewed job by its ratio of mean to
  median. The mean extrapolates a log-normal tail while few tasks have finished, so early in a job it
  can overstate the job's cost: a job then spends above the budget's share of its true machine time
  (counted per method and budget; docs/EVALUATION.md, "A cap that binds", gives the measured
  trade-off against the median and the mean restricted to the observed durations).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from stragglers.prediction.engine.spark_rule import SpeculationRule, success_medians
from stragglers.prediction.statistics.threshold import copy_cost_curve, lognormal_fit, online_threshold


@dataclass(frozen=True)
class ExecutorSlots:
    """Where a copy can run on a Spark application: each executor's host and, at each check, its free
    cores as the log shows them (cores less the attempts running there; an executor not alive then
    has none). A copy needs a free core of an executor on another host than its original's, and
    waits while the stage still has tasks to launch (Spark schedules pending tasks first)."""
    executor_host: np.ndarray        # (E,) int host id of each executor
    free: np.ndarray                 # (K, E) int free cores at each check, before any copy
    task_host: np.ndarray            # (n,) int host id of each task's original
    no_pending_from: float           # copies start at or after this (s): the stage's last launch


@dataclass(frozen=True)
class CopyJob:
    """One job ready for the engine (see the module doc). ``copies[s]``: the copies' latencies under
    draw s (+inf: a copy that never finishes), one array per seed, the one copy model
    (``speculation.copy_draws``); ``slots``: None on a trace whose copies run on machines always free
    (Google: the trace records no free machine per job), else the application's executors."""
    trace: str
    job_id: int
    task_ids: np.ndarray
    start: np.ndarray
    latency: np.ndarray
    finished: np.ndarray
    checks: np.ndarray
    copies: tuple[np.ndarray, ...]
    slots: ExecutorSlots | None = None
    submitted: float = 0.0            # when the job (stage) was submitted, on its clock (s; <= 0)
    app_rule: "SpeculationRule | None" = None   # Spark: the speculation its application ran with (None: off)
    # the task count a scheduler knows at the job's origin (sql/operator_tasks.sql n_known); None: the
    # tasks here (a job made by hand, every task known)
    n_known: int | None = None

    @property
    def n_tasks(self) -> int:
        """The job's task count as known at its origin: what Spark's gate and the budget's base read."""
        return len(self.task_ids) if self.n_known is None else int(self.n_known)

    def __post_init__(self) -> None:
        n = len(self.task_ids)
        for name in ("start", "latency", "finished"):
            if len(getattr(self, name)) != n:
                raise ValueError(f"job {self.job_id}: {len(getattr(self, name))} values of {name} for {n} tasks")
        if np.any(np.diff(self.checks) <= 0):
            raise ValueError(f"job {self.job_id}: the checks are not increasing")
        if any(len(c) != n for c in self.copies):
            raise ValueError(f"job {self.job_id}: a draw of copies has not one latency per task")
        if self.slots is not None and self.slots.free.shape[0] != len(self.checks):
            raise ValueError(f"job {self.job_id}: free cores for {self.slots.free.shape[0]} checks, "
                             f"{len(self.checks)} checks")

    @cached_property
    def state(self) -> "CheckState":
        """What the scheduler knows at each check (a budget needs it; the uncapped runs do not)."""
        return CheckState.of(self)

    @property
    def end(self) -> np.ndarray:
        return self.start + self.latency

    @cached_property
    def success_medians(self) -> tuple[np.ndarray, np.ndarray]:
        """The successes' ends in order and their running median duration (Spark's rule, every setting)."""
        return success_medians(self.start, self.end, self.finished)

    @cached_property
    def work(self) -> float:
        """The job's machine time, sum of its tasks' run times (what a spend is a share of)."""
        return float(self.latency.sum())

    @cached_property
    def completion(self) -> float:
        """When the job completes as recorded: its last finishing task's end (``completion_time``)."""
        return completion_time(self.end, self.finished)


def completion_time(done: np.ndarray, finished: np.ndarray) -> float:
    """The latest end among the tasks that finish: a task that does not finish is not waited for (it
    ended by its own fate or at the job's teardown); a job none of whose tasks finishes completes at
    its last end."""
    done = np.asarray(done, dtype=float)
    finished = np.asarray(finished, dtype=bool)
    return float(done[finished].max()) if finished.any() else float(done.max())


#: Points of each copy-cost curve (``threshold.copy_cost_curve``) over the elapsed times a task can have.
COST_POINTS = 64
#: how far past what is known at an estimate (the job's age, its longest finished task) the curve of a
#: copy's expected cost reaches; beyond it a copy costs what it costs at the end of the curve
COST_REACH = 4.0


@dataclass(frozen=True)
class CheckState:
    """What the scheduler knows at each check of a job, the same for every policy (module doc).

    The job's durations are re-estimated at a check when a task has finished since the last estimate
    (``estimate[k]``: the estimate check k uses); per estimate, the median and the curve of a copy's
    expected machine time against the elapsed time of the task it copies (``cost_elapsed[e]``,
    ``cost[e]``: ``threshold.copy_cost_curve``)."""
    running: np.ndarray              # (K,) tasks running
    machine_so_far: np.ndarray       # (K,) machine seconds so far
    median: np.ndarray               # (K,) median duration as known (+inf: not yet estimable)
    base: np.ndarray                 # (K,) the budget's base (machine seconds)
    estimate: np.ndarray             # (K,) int: the estimate each check uses (-1: none yet)
    cost_elapsed: np.ndarray         # (E, COST_POINTS) elapsed times of each estimate's cost curve
    cost: np.ndarray                 # (E, COST_POINTS) a copy's expected machine time there (NaN: none)

    @classmethod
    def of(cls, job: CopyJob) -> "CheckState":
        start, end, y = job.start, job.start + job.latency, job.latency
        checks = np.asarray(job.checks, dtype=float)
        fin = np.asarray(job.finished, dtype=bool)
        running = np.array([int(((start <= t) & (end > t)).sum()) for t in checks.tolist()])
        # summed over the tasks started by t only: the same sum, bit for bit, whatever tasks start later
        so_far = np.array([float(np.clip(t - start[start <= t], 0.0, y[start <= t]).sum()) for t in checks.tolist()])
        median = np.full(len(checks), np.inf)
        mean_duration = np.full(len(checks), np.inf)
        estimate = np.full(len(checks), -1, dtype=np.int64)
        finishes = np.sort(end[fin])
        grids, curves = [], []
        last_count, last, mean = 0, np.inf, np.inf
        for k, t in enumerate(checks.tolist()):
            count = int(np.searchsorted(finishes, t, side="right"))
            if count != last_count:          # a task finished since the last estimate: re-estimate
                ended = end <= t
                runs = (start <= t) & ~ended
                done, elapsed = y[ended & fin], t - start[runs]
                fit = lognormal_fit(np.r_[done, elapsed], np.r_[np.ones(len(done), bool), np.zeros(len(elapsed), bool)])
                last = online_threshold(done, elapsed, 0.5, fit=fit)
                # the elapsed times tabulated reach a multiple of what is known at t (the job's age, its
                # longest finished task), never the job's end: the grid, hence the integral, is causal
                top = COST_REACH * max(t - float(start.min()), float(done.max()))
                grid = np.r_[0.0, np.geomspace(max(float(done.min()), 1e-6) * 1e-2, max(top, 1e-3), COST_POINTS - 1)]
                grids.append(grid)
                means: list[float] = []
                curves.append(copy_cost_curve(done, elapsed, grid, fit=fit, mean_out=means))
                mean = means[0]
                last_count = count
            median[k] = last
            mean_duration[k] = mean
            estimate[k] = len(grids) - 1
        expected = job.n_tasks * np.where(np.isfinite(mean_duration), mean_duration, 0.0)
        base = np.maximum(so_far, expected)
        shape = (len(grids), COST_POINTS)
        return cls(running, so_far, median, base, estimate,
                   np.array(grids).reshape(shape) if grids else np.zeros((0, COST_POINTS)),
                   np.array(curves).reshape(shape) if curves else np.zeros((0, COST_POINTS)))
