"""Run policies through the engine: one job, every policy, every cap, every draw of the copies.

At each check of the job (``CopyJob.checks``) the engine asks the policy for its ranked tasks,
keeps those that run and have no copy yet (and, for the oracle, those its copy would beat), and
starts copies in that order while the cap allows (stragglers/prediction/engine/caps.py) and, on a
Spark application, while a core of another host is free (``job.ExecutorSlots``). A copy started at
t with latency c finishes at t + c if that is within its lease and before its original's end; it
runs until the earliest of the three. The task ends at the earlier of its original and its copy; the
job completes at its last finishing task's end (``job.completion_time``). The outcome of a policy on
a job under a cap is the mean over the draws of the JCT reduction, (original - new) / original,
the extra machine time, the copies' run time over the job's machine time, and the copies started.

Everything a policy reads at a check was known then (its version's time is at or before it), and
so is what the cap reads (``job.CheckState``); the copies' latencies are the simulation's, read
only to end a copy at its time (and by the oracle, whose knowing them is the point).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from stragglers.prediction.engine import kernel
from stragglers.prediction.engine.caps import Budget, Cap, HadoopCaps, Uncapped
from stragglers.prediction.engine.job import CopyJob
from stragglers.prediction.engine.policies import Policy


@dataclass(frozen=True)
class Outcome:
    """One policy on one job under one cap: means over the draws."""
    jct_reduction: float
    extra_machine_share: float
    copies: float


#: One row per (policy, cap, job) of the engine's tables (``capped_outcomes`` and its kin).
OUTCOME_COLUMNS = ["trace", "method", "point", "cap", "job_id", "jct_reduction", "extra_machine_share", "n_copies",
                   "n_flagged"]


@dataclass(frozen=True)
class CopyLog:
    """Where the copies started under one cap and draw: per task the start (NaN: none) and the
    executor's index in the job's slots (-1: none, or machines always free)."""
    start: np.ndarray
    executor: np.ndarray


def _caps(caps: Sequence[Cap]) -> tuple[np.ndarray, np.ndarray, HadoopCaps]:
    kind = np.array([kernel.BUDGET if isinstance(c, Budget) else kernel.HADOOP if isinstance(c, HadoopCaps)
                     else kernel.UNCAPPED for c in caps], dtype=np.int64)
    share = np.array([c.share if isinstance(c, Budget) else 0.0 for c in caps], dtype=float)
    hadoop = next((c for c in caps if isinstance(c, HadoopCaps)), HadoopCaps())
    if any(isinstance(c, HadoopCaps) and c != hadoop for c in caps):
        raise ValueError("one engine run takes one set of Hadoop caps")
    for c in caps:
        if not isinstance(c, (Budget, HadoopCaps, Uncapped)):
            raise TypeError(f"not a cap: {c!r} (Budget, HadoopCaps or Uncapped)")
    return kind, share, hadoop


@dataclass(frozen=True)
class MachinePool:
    """m machines for the job (the paper's Algorithm 3 setting): a copy needs an idle one. The pool
    starts with max(0, m - n) idle and gains a machine when a task completes, two when it had a copy
    (both attempts end then); the scheduler also acts at each completion after the last check while a
    ranked task waits."""
    machines: int


def run(job: CopyJob, policy: Policy, caps: Sequence[Cap], pool: MachinePool | None = None
        ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The raw runs: (out (C, S, 3): new completion, extra seconds, copies; copy starts (C, S, n);
    copy executors (C, S, n)) for each cap C and draw S; copies placed where the job's trace says
    (``job.slots``), or on ``pool``'s machines."""
    kind, share, hadoop = _caps(caps)
    n, S = len(job.task_ids), len(job.copies)
    placement = kernel.POOL if pool is not None else kernel.ANYWHERE if job.slots is None else kernel.EXECUTORS
    budget = any(isinstance(c, Budget) for c in caps)
    st = job.state if budget else None
    slots = job.slots
    copies = np.vstack(job.copies).astype(float) if S else np.zeros((0, n))
    out = np.zeros((len(caps), S, 3))
    starts = np.full((len(caps), S, n), np.nan)
    executors = np.full((len(caps), S, n), -1, dtype=np.int64)
    if slots is None or pool is not None:
        host, free, task_host, no_pending = (np.zeros(0, np.int64), np.zeros((len(job.checks), 0), np.int64),
                                             np.zeros(n, np.int64), -np.inf)
    else:
        host, free, task_host, no_pending = (slots.executor_host.astype(np.int64), slots.free.astype(np.int64),
                                             slots.task_host.astype(np.int64), float(slots.no_pending_from))
    kernel.replay_policy(
        np.asarray(job.checks, dtype=float), *_budget_inputs(job, st), job.start.astype(float), job.end.astype(float), job.finished.astype(np.bool_),
        copies, policy.version_times.astype(float), policy.ptr.astype(np.int64), policy.order.astype(np.int64),
        bool(policy.knows_copies), kind, share, int(hadoop.minimum), float(hadoop.running_share),
        float(hadoop.all_share), placement, host, free, task_host, no_pending,
        0 if pool is None else max(0, int(pool.machines) - n), out, starts, executors)
    return out, starts, executors


def _budget_inputs(job: CopyJob, st) -> tuple:
    """(base, estimate, cost_elapsed, cost, running) for the kernel; zeros where no budget is asked."""
    if st is None:
        K = len(job.checks)
        return (np.zeros(K), np.full(K, -1, np.int64), np.zeros((1, 2)), np.zeros((1, 2)),
                np.array([float(((job.start <= t) & (job.end > t)).sum()) for t in np.asarray(job.checks).tolist()]))
    return (st.base.astype(float), st.estimate.astype(np.int64), st.cost_elapsed.astype(float),
            st.cost.astype(float), st.running.astype(float))


def outcomes(job: CopyJob, policy: Policy, caps: Sequence[Cap], pool: MachinePool | None = None) -> list[Outcome]:
    """The policy's outcome on ``job`` under each of ``caps`` (means over the job's draws)."""
    out, _, _ = run(job, policy, caps, pool)
    original, work = job.completion, job.work
    res = []
    for c in range(len(caps)):
        new, extra, copies = out[c, :, 0], out[c, :, 1], out[c, :, 2]
        res.append(Outcome(float(np.mean((original - new) / original)) if original > 0 else 0.0,
                           float(np.mean(extra / work)) if work > 0 else 0.0, float(np.mean(copies))))
    return res


def copy_log(job: CopyJob, policy: Policy, cap: Cap, draw: int = 0) -> CopyLog:
    """Which tasks the policy copies under ``cap`` in draw ``draw``, when and where."""
    _, starts, executors = run(job, policy, [cap])
    return CopyLog(starts[0, draw], executors[0, draw])


def replay_all(job: CopyJob, policies: Iterable[Policy], caps: Sequence[Cap], pool: MachinePool | None = None
               ) -> list[tuple[Policy, list[Outcome]]]:
    """Every policy's outcomes under every cap; policies that would copy alike run once."""
    seen: dict[bytes, list[Outcome]] = {}
    res = []
    for p in policies:
        if p.key not in seen:
            seen[p.key] = [Outcome(0.0, 0.0, 0.0)] * len(caps) if not len(p.order) else outcomes(job, p, caps, pool)
        res.append((p, seen[p.key]))
    return res


def outcome_rows(job: CopyJob, policies: Iterable[Policy], caps: Sequence[Cap]) -> pd.DataFrame:
    """Every policy's outcome on ``job`` under every cap as rows (``OUTCOME_COLUMNS``): what the
    evaluation's sweep and the operator's Spark answer store."""
    rows = [(job.trace, p.method, p.point, cap.label, int(job.job_id), o.jct_reduction, o.extra_machine_share,
             o.copies, p.n_flagged)
            for p, outs in replay_all(job, policies, caps) for cap, o in zip(caps, outs)]
    return pd.DataFrame(rows, columns=OUTCOME_COLUMNS)
