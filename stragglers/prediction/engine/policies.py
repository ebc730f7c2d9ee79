"""Policies: what ranks a job's running, uncopied tasks at each check of the engine.

A policy is the order in which it would copy: at each of its versions (a time at which it decides
something new) the tasks it has flagged by then, best first. The engine asks it at every check of
the job: the latest version at or before the check, less the tasks not running or already copied.
Nothing a policy holds at a version comes after that version's time:

- a replayed method (``from_flags``): the tasks its cut has flagged by its decision, ordered by the
  score the method gave each at its latest decision (``simulate.ScoreTrail``; highest first), then
  the earlier flagged, then task order; a method that keeps no score (flag-all, a rule of one point),
  by how many of its cuts flagged the task by then, then the earlier flagged;
- Spark's rule (``spark_rule``): the tasks it has marked speculatable by the check, the earliest
  marked first, then the longest running;
- the oracle (``oracle``): every task that will finish, the ones that truly end last first; it also
  knows how long each copy would run, so it copies only a task its copy would beat (the engine reads
  ``knows_copies``). It reads the future by design: the bound, never a method.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from stragglers.prediction.engine.job import CopyJob
from stragglers.prediction.engine.spark_rule import GRID, SPARK_3_DEFAULTS, SPARK_4_DEFAULTS, SpeculationRule, flag_times

#: The oracle's name (the method registry's) and its one point.
ORACLE = "oracle"
#: A method's own flag rule (its default cut) among its points.
DEFAULT_POINT = "default"
#: The point of Spark's rule that is the setting the job's application ran with (Spark event logs).
CURRENT = "current"
#: The methods of the registry that are Spark's rule, with their own setting (methods/rules.py).
SPARK_METHODS = {"spark_speculation": SPARK_3_DEFAULTS, "spark4_speculation": SPARK_4_DEFAULTS}


@dataclass(frozen=True)
class Policy:
    """One policy on one job: ``order[ptr[v]:ptr[v + 1]]`` are the task indices it ranks at version v
    (from ``version_times[v]`` on), best first. ``flagged_at``: when it first flagged each task (NaN:
    never), for its count of flags."""
    method: str
    point: str
    version_times: np.ndarray
    ptr: np.ndarray
    order: np.ndarray
    flagged_at: np.ndarray
    knows_copies: bool = False

    @cached_property
    def key(self) -> bytes:
        """Equal for two policies that would copy the same tasks at the same checks in the same
        order (their outcomes are then equal: the engine runs one of them)."""
        return b"|".join([self.version_times.tobytes(), self.ptr.tobytes(), self.order.astype(np.int64).tobytes(),
                          bytes([self.knows_copies])])

    @property
    def n_flagged(self) -> int:
        return int((~np.isnan(self.flagged_at)).sum())


def _versions(times: np.ndarray, orders: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(version times, ptr, order) from one ranked array per time, consecutive equal ones merged."""
    keep_t, keep_o = [], []
    for t, o in zip(times.tolist(), orders):
        if keep_o and np.array_equal(keep_o[-1], o):
            continue
        keep_t.append(t)
        keep_o.append(o)
    ptr = np.zeros(len(keep_o) + 1, dtype=np.int64)
    ptr[1:] = np.cumsum([len(o) for o in keep_o])
    order = np.concatenate(keep_o).astype(np.int64) if keep_o else np.zeros(0, np.int64)
    return np.asarray(keep_t, dtype=float), ptr, order


def from_flags(method: str, point: str, flagged_at: np.ndarray, decisions: np.ndarray,
               latest: np.ndarray | None = None, passed: np.ndarray | None = None) -> Policy:
    """A replayed method's cut as a policy. ``flagged_at`` (n,): its flags (NaN: never);
    ``decisions`` (V,): the method's decision times; ``latest`` (V, n): each task's latest score
    given at or before each decision (NaN: none; ``ScoreTrail.latest``), or ``passed`` (V, n): how
    many of the method's cuts had flagged it by each decision, when it keeps no score."""
    f = np.asarray(flagged_at, dtype=float)
    decisions = np.asarray(decisions, dtype=float)
    orders = []
    with np.errstate(invalid="ignore"):
        for v, t in enumerate(decisions.tolist()):
            idx = np.flatnonzero(f <= t)
            if latest is not None:
                score = latest[v][idx]
                key = -np.where(np.isnan(score), -np.inf, score)
            elif passed is not None:
                key = -passed[v][idx].astype(float)
            else:
                key = np.zeros(len(idx))
            orders.append(idx[np.lexsort((idx, f[idx], key))])
    times, ptr, order = _versions(decisions, orders)
    return Policy(method, point, times, ptr, order, f)


def spark_rule(job: CopyJob, rule: SpeculationRule, method: str = "spark_speculation",
               point: str | None = None) -> Policy:
    """Spark's rule on ``job``: its flags at the job's checks (``spark_rule.flag_times``), the
    earliest flagged first, then the longest running, then task order."""
    f = flag_times(job.start, job.end, job.finished, job.checks, rule, job.n_tasks, job.success_medians)
    times = np.unique(f[~np.isnan(f)])
    orders = []
    with np.errstate(invalid="ignore"):
        for t in times.tolist():
            idx = np.flatnonzero(f <= t)
            orders.append(idx[np.lexsort((idx, job.start[idx], f[idx]))])
    times, ptr, order = _versions(times, orders)
    return Policy(method, rule.point if point is None else point, times, ptr, order, f)


def oracle(job: CopyJob, first: float | None = None) -> Policy:
    """The oracle from ``first`` on (default: the job's first check): every task that will finish,
    the ones that truly end last first (one stable order: the engine drops the ended and copied)."""
    end = job.end
    order = np.argsort(-end, kind="stable")
    order = order[np.asarray(job.finished, dtype=bool)[order]]
    t0 = float(job.checks[0]) if first is None else float(first)
    f = np.where(job.finished, t0, np.nan)
    return Policy(ORACLE, "capped", np.array([t0]), np.array([0, len(order)], dtype=np.int64),
                  order.astype(np.int64), f, knows_copies=True)


def spark_rule_policies(job: CopyJob, method: str = "spark_speculation") -> list[Policy]:
    """Spark's rule on ``job`` as the engine runs it: the method's own setting (point ``default``),
    and for ``spark_speculation`` every setting of the grid (``spark_rule.GRID``) and the one the
    job's application ran with (point ``current``, where it ran speculation): one list for the
    evaluation's sweep and the operator's answer (``nurd-spark advise``)."""
    out = [spark_rule(job, SPARK_METHODS[method], method, DEFAULT_POINT)]
    if method == "spark_speculation":
        out += [spark_rule(job, r, method) for r in GRID]
        if job.app_rule is not None:
            out.append(spark_rule(job, job.app_rule, method, CURRENT))
    return out
