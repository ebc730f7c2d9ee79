"""Free reference rules: what a scheduler gets without a model.

They read only the clock and the latencies of finished tasks (no features),
so they run on any trace with task latencies and a checkpoint grid, with or
without task_usage. A comparison that one of them wins says the methods add
nothing on those jobs (docs/EVALUATION.md).

- ``flag_all``: at the first checkpoint after t0 every candidate is flagged.
  The floor: TPR 1, FPR 1 among the tasks still running at t1.
- ``wait_for_tau``: at the job's last checkpoint before tau every candidate
  still running is flagged. The ceiling of waiting: a task still running
  then is a straggler or close to one, but the flag comes late.
- ``spark_speculation``: Apache Spark's default speculation
  (``spark.speculation.quantile`` 0.75, ``spark.speculation.multiplier``
  1.5; TaskSetManager.checkSpeculatableTasks): at checkpoint t, once at least
  ``quantile`` of the job's tasks have finished (latency <= t), every
  candidate whose elapsed time (t, on the common clock) exceeds
  ``multiplier`` x the median latency of the finished tasks is flagged.
"""

from __future__ import annotations

import numpy as np

from stragglers.prediction.methods.base import Method, TaskSet


class FlagAll(Method):
    name = "flag_all"
    display_name = "flag all at t1"
    band = "reference"

    def __init__(self) -> None:
        super().__init__()

    def fit(self, finished: TaskSet, running: TaskSet, t: float) -> None:
        pass

    def flag(self, candidates: TaskSet) -> np.ndarray:
        # every candidate is flagged at the first call, so later calls have none left
        return np.ones(len(candidates), dtype=bool)


class WaitForTau(Method):
    name = "wait_for_tau"
    display_name = "wait for tau"
    band = "reference"

    def __init__(self) -> None:
        super().__init__()

    def fit(self, finished: TaskSet, running: TaskSet, t: float) -> None:
        self.t_ = t

    def flag(self, candidates: TaskSet) -> np.ndarray:
        before_tau = self.job.checkpoints[self.job.checkpoints < self.job.tau]
        return np.full(len(candidates), self.t_ >= before_tau[-1], dtype=bool)


class SparkSpeculation(Method):
    name = "spark_speculation"
    display_name = "Spark speculation"
    band = "reference"

    def __init__(self, quantile: float = 0.75, multiplier: float = 1.5) -> None:
        super().__init__()
        if not 0 < quantile <= 1:
            raise ValueError(f"spark_speculation: quantile={quantile!r}, expected a number in (0, 1]")
        if not multiplier > 0:
            raise ValueError(f"spark_speculation: multiplier={multiplier!r}, expected a number > 0")
        self.quantile = quantile
        self.multiplier = multiplier

    def fit(self, finished: TaskSet, running: TaskSet, t: float) -> None:
        self.t_ = t
        n_tasks = len(self.job.task_ids)
        self.threshold_ = (self.multiplier * float(np.median(finished.y))
                           if len(finished) and len(finished) >= self.quantile * n_tasks else np.inf)

    def flag(self, candidates: TaskSet) -> np.ndarray:
        return np.full(len(candidates), self.t_ > self.threshold_, dtype=bool)
