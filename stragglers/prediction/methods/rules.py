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
- ``spark_speculation``: Apache Spark's speculation rule with the defaults of Spark 3.x
  (``spark.speculation.quantile`` 0.75, ``spark.speculation.multiplier`` 1.5,
  ``spark.speculation.minTaskRuntime`` 100 ms): at checkpoint t, once at least
  max(floor(quantile x n), 1) of the job's n tasks have succeeded, a candidate whose elapsed time
  (its own on the wall clock; t on the paper's common clock) exceeds max(multiplier x the median
  of the succeeded latencies, minTaskRuntime) is flagged. The rule is written once, in
  stragglers/prediction/engine/spark_rule.py (``threshold``), which the replay engine's Spark
  policies use too: the sweep of its settings (``spark_rule.GRID``) is the engine's, on the job's
  own checks, not a replay's cuts.
- ``spark4_speculation``: the same rule with the defaults of Spark >= 4.0
  (``spark.speculation.quantile`` 0.9, ``spark.speculation.multiplier`` 3).
- ``km_survival``: a survival rule without features: at checkpoint t a
  running task is flagged when P(latency > tau | latency > t), estimated from
  the job's tasks known at t (stragglers/prediction/statistics/threshold.py: Kaplan-Meier,
  log-normal tail beyond its last event), exceeds 0.5.
- ``oracle``: flags every true straggler at the first checkpoint and nothing
  else. No method can do better; it shows the headroom. It reads the true
  labels (``tags.reads_labels``) and is never a free rule.

Under ``threshold="online"`` the rules' tau is tau_hat(t) (``JobContext``), and
``wait_for_tau`` flags a task at the last decision before it reaches tau_hat(t):
elapsed + step >= tau_hat(t). The rules read each candidate's elapsed time
(``TaskSet.elapsed_at``): on the paper's common clock every running task has run t
seconds, so each time-only rule flags every candidate or none at a checkpoint; on the
operator's wall clock each has run since its own start.
"""

from __future__ import annotations

import numpy as np

from stragglers.prediction.methods.base import PROBABILITY_GRID, Method, MethodTags, TaskSet
from stragglers.prediction.engine.spark_rule import SPARK_3_DEFAULTS, SPARK_4_DEFAULTS, SpeculationRule, threshold
from stragglers.prediction.statistics.threshold import conditional_survival

#: wait_for_tau's sweep: flag once the next checkpoint reaches this share of tau (1: the rule itself),
#: log-spaced past 1.5 (a task running 10 x tau_hat is rare)
MARGIN_GRID: tuple[float, ...] = (0.3, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.25, 1.5, 2.0, 3.0, 5.0, 10.0)


class FlagAll(Method):
    name = "flag_all"
    family = "rules"
    tags = MethodTags(reference_rule=True)

    def fit(self, finished: TaskSet, running: TaskSet, t: float) -> None:
        pass

    def flag(self, candidates: TaskSet) -> dict[str, np.ndarray]:
        # every candidate is flagged at the first call, so later calls have none left
        return {self.name: np.ones(len(candidates), dtype=bool)}


class WaitForTau(Method):
    name = "wait_for_tau"
    family = "rules"
    tags = MethodTags(reference_rule=True)

    def fit(self, finished: TaskSet, running: TaskSet, t: float) -> None:
        self.t_ = t

    def flag(self, candidates: TaskSet) -> dict[str, np.ndarray]:
        if self.job.threshold == "online":
            # the last decision before the task reaches tau_hat(t): at the next one it would be at or past it
            return {self.name: candidates.elapsed_at(self.t_) + self.job.step >= self.job.tau}
        before_tau = self.job.checkpoints[self.job.checkpoints < self.job.tau]
        return {self.name: np.full(len(candidates), self.t_ >= before_tau[-1], dtype=bool)}

    sweep_grid = MARGIN_GRID

    def sweep_scores(self, candidates: TaskSet) -> dict[str, np.ndarray]:
        # the rule is margin 1: (t + step) / tau_hat(t) >= 1 online, t / (last checkpoint before tau) >= 1
        if self.job.threshold == "online":
            score = (candidates.elapsed_at(self.t_) + self.job.step) / self.job.tau
        else:
            score = self.t_ / self.job.checkpoints[self.job.checkpoints < self.job.tau][-1]
        return {self.name: np.broadcast_to(np.asarray(score, float), len(candidates)).copy()}


class SparkSpeculation(Method):
    name = "spark_speculation"
    family = "rules"
    tags = MethodTags(reference_rule=True)

    def __init__(self, quantile: float = SPARK_3_DEFAULTS.quantile, multiplier: float = SPARK_3_DEFAULTS.multiplier,
                 min_task_runtime_s: float = SPARK_3_DEFAULTS.min_task_runtime_s) -> None:
        super().__init__()
        SpeculationRule(quantile, multiplier, min_task_runtime_s)   # checks the values, names them as Spark does
        self.quantile = quantile
        self.multiplier = multiplier
        self.min_task_runtime_s = min_task_runtime_s

    @property
    def rule(self) -> SpeculationRule:
        return SpeculationRule(self.quantile, self.multiplier, self.min_task_runtime_s)

    def fit(self, finished: TaskSet, running: TaskSet, t: float) -> None:
        self.t_ = t
        self.threshold_ = threshold(finished.y, self.job.n_tasks, self.rule)

    def flag(self, candidates: TaskSet) -> dict[str, np.ndarray]:
        return {self.name: candidates.elapsed_at(self.t_) > self.threshold_}


class Spark4Speculation(SparkSpeculation):
    name = "spark4_speculation"

    def __init__(self, quantile: float = SPARK_4_DEFAULTS.quantile, multiplier: float = SPARK_4_DEFAULTS.multiplier,
                 min_task_runtime_s: float = SPARK_4_DEFAULTS.min_task_runtime_s) -> None:
        super().__init__(quantile, multiplier, min_task_runtime_s)


class KMSurvival(Method):
    name = "km_survival"
    family = "rules"
    tags = MethodTags(reference_rule=True)

    def __init__(self, min_probability: float = 0.5) -> None:
        super().__init__()
        if not 0 <= min_probability < 1:
            raise ValueError(f"km_survival: min_probability={min_probability!r}, expected a number in [0, 1)")
        self.min_probability = min_probability

    def fit(self, finished: TaskSet, running: TaskSet, t: float) -> None:
        self.finished_y_, self.running_elapsed_, self.t_ = finished.y, running.elapsed_at(t), t

    def _p(self, candidates: TaskSet) -> np.ndarray:
        # P(latency > tau | latency > the candidate's elapsed time); no estimate: never flagged
        p = conditional_survival(self.finished_y_, self.running_elapsed_, candidates.elapsed_at(self.t_),
                                 float(self.job.tau))
        return np.where(np.isfinite(p), p, -np.inf)

    def flag(self, candidates: TaskSet) -> dict[str, np.ndarray]:
        return {self.name: self._p(candidates) > self.min_probability}

    sweep_grid, sweep_strict = PROBABILITY_GRID, True

    def sweep_scores(self, candidates: TaskSet) -> dict[str, np.ndarray]:
        return {self.name: self._p(candidates)}


class Oracle(Method):
    name = "oracle"
    family = "rules"
    tags = MethodTags(reference_rule=True, reads_labels=True)

    def fit(self, finished: TaskSet, running: TaskSet, t: float) -> None:
        pass

    def flag(self, candidates: TaskSet) -> dict[str, np.ndarray]:
        # every candidate is scored at the first checkpoint: the stragglers are flagged then
        return {self.name: np.array([bool(self.job.labels[int(i)]) for i in candidates.task_ids], dtype=bool)}
