"""Spark's speculation rule, written once: the gate, the threshold and the flags it gives.

The rule is TaskSetManager.checkSpeculatableTasks of Spark 3.x/4.0 (apache/spark,
core/src/main/scala/org/apache/spark/scheduler/TaskSetManager.scala), on one TaskSet (a stage
attempt; on a Google trace, a job), checked at each of the scheduler's checks:

- never in a TaskSet of one task (no ``spark.speculation.task.duration.threshold`` here);
- only once at least ``max(floor(quantile * numTasks), 1)`` tasks have succeeded
  (``minFinishedForSpeculation`` against ``successfulTaskDurations.size``);
- ``threshold = max(multiplier * median(successful durations), minTaskRuntime)`` (the median is
  MedianHeap's: the mean of the two middle values for an even count, numpy's);
- a running task that has not succeeded is speculatable when its run time is strictly over the
  threshold at a check; once marked it stays marked (``speculatableTasks``).

Spark's efficiency check (``spark.speculation.efficiency.*``, on by default since 3.4) needs a
running task's records read, which event logs do not keep: the rule here is the one with the check
off, and the settings the project writes turn it off (``SpeculationRule.conf``).

Every user of the rule calls this module: the free rules ``spark_speculation`` and
``spark4_speculation`` of the method registry (``threshold``, at each checkpoint of a replay), and
the replay engine's Spark policies (``flag_times``, at every check of a job), which are the rule
held to the copies a real Spark made (tests/test_spark_speculation.py) and the rule behind every
budget table and the operator's spark-defaults.conf.
"""

from __future__ import annotations

import heapq
import math
import re
from dataclasses import dataclass
from itertools import product

import numpy as np


@dataclass(frozen=True)
class SpeculationRule:
    """Spark's speculation settings (times in seconds)."""
    quantile: float
    multiplier: float
    min_task_runtime_s: float
    interval_s: float = 0.1

    def __post_init__(self) -> None:
        if not 0 < self.quantile <= 1:
            raise ValueError(f"spark.speculation.quantile={self.quantile!r}: expected a number in (0, 1]")
        if not self.multiplier > 0:
            raise ValueError(f"spark.speculation.multiplier={self.multiplier!r}: expected a number > 0")
        if not self.min_task_runtime_s >= 0:
            raise ValueError(f"spark.speculation.minTaskRuntime={self.min_task_runtime_s!r}: expected >= 0")
        if not self.interval_s > 0:
            raise ValueError(f"spark.speculation.interval={self.interval_s!r}: expected > 0")

    @property
    def point(self) -> str:
        """The setting as a sweep point of ``spark_speculation`` (``from_point`` reads it back)."""
        return f"q{self.quantile:g}-m{self.multiplier:g}-min{self.min_task_runtime_s:g}"

    @classmethod
    def from_point(cls, point: str) -> "SpeculationRule":
        q, m, mn = point.split("-")
        return cls(float(q[1:]), float(m[1:]), float(mn[3:]))

    def words(self) -> str:
        return (f"quantile {self.quantile:g}, multiplier {self.multiplier:g}, "
                f"minTaskRuntime {duration(self.min_task_runtime_s)}")

    def conf(self) -> str:
        """The settings as a spark-defaults.conf block (the efficiency check off: the rule replayed)."""
        return "\n".join([
            "spark.speculation                          true",
            f"spark.speculation.quantile                 {self.quantile:g}",
            f"spark.speculation.multiplier               {self.multiplier:g}",
            f"spark.speculation.minTaskRuntime           {duration(self.min_task_runtime_s)}",
            f"spark.speculation.interval                 {duration(self.interval_s)}",
            "spark.speculation.efficiency.enabled       false",
        ])


def duration(seconds: float) -> str:
    """A Spark time setting: whole seconds as '5s', else milliseconds ('100ms')."""
    ms = round(seconds * 1000, 6)
    return f"{ms / 1000:g}s" if ms >= 1000 and ms % 1000 == 0 else f"{ms:g}ms"


#: Spark 4.0's defaults, as the ConfigEntry objects of Spark 4.0.5's jars report them
#: (org.apache.spark.internal.config.package: SPECULATION_QUANTILE 0.9, SPECULATION_MULTIPLIER 3.0,
#: SPECULATION_MIN_THRESHOLD 100ms, SPECULATION_INTERVAL 100ms).
SPARK_4_DEFAULTS = SpeculationRule(0.9, 3.0, 0.1)
#: Spark 3.x's defaults (quantile 0.75, multiplier 1.5; minTaskRuntime and interval 100ms).
SPARK_3_DEFAULTS = SpeculationRule(0.75, 1.5, 0.1)

#: The settings every tuning of the rule tries (both default sets are on it): minTaskRuntime spans a
#: Spark stage's seconds and a Google job's minutes, so one grid serves every trace.
QUANTILES: tuple[float, ...] = (0.5, 0.75, 0.9)
MULTIPLIERS: tuple[float, ...] = (1.1, 1.25, 1.5, 2.0, 3.0, 4.0, 8.0)
MIN_TASK_RUNTIMES_S: tuple[float, ...] = (0.1, 1.0, 5.0, 30.0, 60.0, 300.0)
GRID: tuple[SpeculationRule, ...] = tuple(SpeculationRule(q, m, r)
                                          for q, m, r in product(QUANTILES, MULTIPLIERS, MIN_TASK_RUNTIMES_S))

_UNITS_S = {"us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0, "d": 86400.0}


def time_setting(value: str, key: str) -> float:
    """A Spark time setting in seconds (a bare number is ms, as Spark reads these keys)."""
    m = re.fullmatch(r"\s*([0-9.]+)\s*([a-z]*)\s*", str(value).lower())
    if not m or (m.group(2) and m.group(2) not in _UNITS_S):
        raise ValueError(f"{key}={value!r}: not a Spark time (a number with us, ms, s, m, min, h or d)")
    return float(m.group(1)) * _UNITS_S[m.group(2) or "ms"]


def rule_from_conf(conf: dict[str, str], default: SpeculationRule = SPARK_4_DEFAULTS) -> SpeculationRule | None:
    """The rule an application ran with, from its Spark properties (None: speculation off, Spark's
    default); a key it does not set takes ``default``'s value."""
    if str(conf.get("spark.speculation", "false")).strip().lower() != "true":
        return None
    key = "spark.speculation.minTaskRuntime"
    interval = "spark.speculation.interval"
    return SpeculationRule(
        float(conf.get("spark.speculation.quantile", default.quantile)),
        float(conf.get("spark.speculation.multiplier", default.multiplier)),
        time_setting(conf[key], key) if key in conf else default.min_task_runtime_s,
        time_setting(conf[interval], interval) if interval in conf else default.interval_s)


def threshold(succeeded_durations: np.ndarray, n_tasks: int, rule: SpeculationRule) -> float:
    """The run time past which a running task is speculatable (+inf: the gate is closed), from the
    durations of the tasks that have succeeded so far."""
    d = np.asarray(succeeded_durations, dtype=float)
    if n_tasks <= 1 or not len(d) or len(d) < max(math.floor(rule.quantile * n_tasks), 1):
        return math.inf
    return max(rule.multiplier * float(np.median(d)), rule.min_task_runtime_s)


def success_medians(start: np.ndarray, end: np.ndarray, succeeded: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the successes' ends in order, the median of the first m successes' durations for m = 1, 2, ...):
    what the rule's threshold is made of at every check, whatever its setting (a running median: two
    heaps; the median of an even count is the mean of the two middle values, MedianHeap's and numpy's)."""
    start, end = np.asarray(start, dtype=float), np.asarray(end, dtype=float)
    ok = np.asarray(succeeded, dtype=bool)
    order = np.argsort(end[ok], kind="stable")
    ends, durations = end[ok][order], (end - start)[ok][order]
    low, high, medians = [], [], np.empty(len(durations))    # low: a max-heap (negated), high: a min-heap
    for m, d in enumerate(durations.tolist()):
        if low and d > -low[0]:
            heapq.heappush(high, d)
        else:
            heapq.heappush(low, -d)
        if len(low) > len(high) + 1:
            heapq.heappush(high, -heapq.heappop(low))
        elif len(high) > len(low):
            heapq.heappush(low, -heapq.heappop(high))
        medians[m] = -low[0] if len(low) > len(high) else (-low[0] + high[0]) / 2
    return ends, medians


def flag_times(start: np.ndarray, end: np.ndarray, succeeded: np.ndarray, checks: np.ndarray,
               rule: SpeculationRule, n_tasks: int | None = None,
               medians: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """When the rule first marks each task speculatable: the first check t at which it runs
    (start <= t < end), has not succeeded, and has run strictly longer than the threshold of the
    successes by t (NaN: never). ``end``: when each task ended (its success, or its last attempt's
    end; +inf while running when the record stops); ``succeeded``: it ended by succeeding;
    ``medians``: ``success_medians`` of the same tasks, where the caller keeps it for many settings.

    Vectorised: the threshold is a step function of the checks (it moves when a success lands), so a
    task is speculatable at check k iff t_k - thr_k > start; with G the running maximum of
    t_k - thr_k (non-decreasing), the first such k is where G first passes start."""
    start, end = np.asarray(start, dtype=float), np.asarray(end, dtype=float)
    succeeded = np.asarray(succeeded, dtype=bool)
    checks = np.asarray(checks, dtype=float)
    n = len(start) if n_tasks is None else int(n_tasks)
    out = np.full(len(start), np.nan)
    if not len(checks) or n <= 1:
        return out
    ends, prefix = success_medians(start, end, succeeded) if medians is None else medians
    done = np.searchsorted(ends, checks, side="right")          # successes by each check
    need = max(math.floor(rule.quantile * n), 1)
    gated = done >= need
    thr = np.full(len(checks), np.inf)
    thr[gated] = np.maximum(rule.multiplier * prefix[done[gated] - 1], rule.min_task_runtime_s)
    G = np.maximum.accumulate(checks - thr)
    k = np.searchsorted(G, start, side="right")
    hit = k < len(checks)
    t = checks[np.minimum(k, len(checks) - 1)]
    hit &= t < end
    out[hit] = t[hit]
    return out
