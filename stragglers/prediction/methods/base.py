"""The one interface every straggler-prediction method implements.

Shaped like a PyOD detector: a small class, ``fit`` then ``flag``.

At each checkpoint t of a job's replay (PROTOCOL.md section 4) the simulator
calls ``fit(finished, running, t)`` and then ``flag(candidates)``:

- ``finished``: tasks with latency <= t. Their features are their final ones,
  their ``y`` is their latency (seconds).
- ``running``: every task with latency > t, features as visible at t, ``y`` is
  None. Methods that use unlabeled data (propensity model, PU learning,
  censoring) train on this set.
- ``candidates``: the running tasks that can still be flagged (not yet flagged
  by this method). ``flag`` returns one bool per candidate row.

A method never sees a running task's latency or label, with one exception by
design: ``oracle = True`` methods (Wrangler) get ``job.labels``.

A method that cannot fit at a checkpoint raises ``CannotFit(reason)``; the
simulator records the reason for (job, checkpoint) and flags nothing there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Mapping

import numpy as np


class CannotFit(Exception):
    """A method cannot fit or score at this checkpoint (the reason is recorded)."""


@dataclass(frozen=True)
class TaskSet:
    """Rows of one job at one checkpoint."""

    task_ids: np.ndarray            # (n,) int64
    X: np.ndarray                   # (n, d) float64, normalized features
    y: np.ndarray | None = None     # (n,) latency in seconds, finished tasks only

    def __len__(self) -> int:
        return len(self.task_ids)

    def take(self, mask: np.ndarray) -> "TaskSet":
        return TaskSet(self.task_ids[mask], self.X[mask], None if self.y is None else self.y[mask])


@dataclass(frozen=True)
class JobContext:
    """What a method may know about a job before its replay starts."""

    job_id: int
    tau: float                      # straggler threshold tau_stra (s): the job's latency quantile
    t0: float                       # initial checkpoint (s)
    task_ids: np.ndarray            # every task of the job (scored or not)
    feature_names: tuple[str, ...]
    seed: int                       # per-job seed derived from the run seed and job id
    labels: Mapping[int, bool] | None = None   # only for oracle methods (true straggler labels)
    # the replay's checkpoint grid (s), checkpoints[0] = t0: fixed by t0, tau and the step
    # before the replay starts, so knowing it is no look-ahead
    checkpoints: np.ndarray | None = None


class Method:
    """Base class. Subclasses set ``name`` and implement ``fit`` and ``flag``."""

    name: ClassVar[str] = "method"
    display_name: ClassVar[str] = ""        # as in the paper's tables ("" = name)
    reference_rule: ClassVar[bool] = False  # a free time-only rule, not a model
    oracle: ClassVar[bool] = False          # sees true labels (Wrangler), by design
    # Several methods can share one fit (NURD, NURD-NC, GBTR). Such a family
    # lists its variants; ``flag`` then returns {variant: bool array}.
    variants: ClassVar[tuple[str, ...] | None] = None

    def __init__(self, **params: Any) -> None:
        self.params_: dict[str, Any] = dict(params)
        self.job: JobContext | None = None

    def reset(self, job: JobContext) -> None:
        """Called once per job before its first checkpoint."""
        self.job = job

    def scored_task_ids(self, job: JobContext) -> np.ndarray | None:
        """Task ids this method is evaluated on (None = all running at t0)."""
        return None

    def begin(self, finished: TaskSet, running: TaskSet, t0: float) -> None:
        """Called once at the initial checkpoint t0 (first training set F0, R0).

        Nothing is flagged at t0 (Algorithm 1 starts scoring at t1); NURD
        computes its calibration term here.
        """

    def fit(self, finished: TaskSet, running: TaskSet, t: float) -> None:
        raise NotImplementedError

    def flag(self, candidates: TaskSet) -> np.ndarray | dict[str, np.ndarray]:
        raise NotImplementedError

    def hyperparameters(self) -> dict[str, Any]:
        """Every hyperparameter the method uses, recorded with its results."""
        return dict(self.params_)

    @property
    def variant_names(self) -> tuple[str, ...]:
        return self.variants or (self.name,)
