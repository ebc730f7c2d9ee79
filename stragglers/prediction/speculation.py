"""Speculative copies of one job's flagged tasks (the operator's protocol, intervention="speculate").

The copy's latency model (copy_latencies, setting copy_keeps), a copy per flag with a machine
always free or with m machines, and one job's outcome over the seeds' draws. Same clock, draws
and decision points as the relaunch simulation (stragglers/prediction/completion.py); the tables
over many jobs are in stragglers/prediction/completion_tables.py.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from stragglers.prediction.completion import (
    AFTER_GRID_CHOICES, decision_points, draw_relaunch_latencies, job_rng, prepare_job,
)

# ---------------------------------------------------------------------------
# Speculative copies (the operator's protocol, intervention="speculate")
# ---------------------------------------------------------------------------
#
# What Spark, Hadoop MapReduce, LATE, Mantri and Dolly do with a suspected straggler: at the
# flag a copy starts on another machine, with a latency y'_i drawn as for a relaunch (the same
# common draw per (job, task, seed)); the task completes at the earlier of the original and the
# copy, min(y_i, r_i + y'_i), where r_i is when the copy started; the other attempt is killed.
# Extra machine time = the time both ran, done_i - r_i, summed over the job's copies; its share
# is over the job's original machine time sum(y). A copy never makes a task later, so with
# enough machines the new completion time is never above the original.
#
# With m machines (Algorithm 3's setting) a copy needs an idle machine: the pool starts at
# max(0, m - n) and gains one machine when a task completes (its original's machine) and one
# more when that task had a copy (the copy's machine: both attempts end at done_i). Flags wait
# first come first served at decision points (the checkpoint grid united with the flag times),
# then, after the last one, at each completion (``after_grid="event"``); a task whose original
# finishes while it waits gets no copy.


def copy_latencies(y: np.ndarray, draws: np.ndarray, keeps: float = 0.0) -> np.ndarray:
    """The speculative copies' latencies when a copy keeps the share ``keeps`` of its original's
    relative log-latency: y'_i = y_i^k d_i^(1-k) with d the fresh draws (k = 0: the draws themselves,
    today's model; k = 1: a copy as slow as its original). Setting ``copy_keeps`` (docs/EVALUATION.md,
    "What a copy buys"); on log-latencies relative to the job's median, ln(y'/m) = k ln(y/m) + (1-k) ln(d/m)."""
    if keeps == 0:
        return draws
    y = np.asarray(y, dtype=float)
    return y ** keeps * np.asarray(draws, dtype=float) ** (1.0 - keeps)



def speculate_unlimited(y, flagged_at, rng: np.random.Generator | None = None, *, relaunch=None
                        ) -> tuple[float, float]:
    """(new completion time, extra machine seconds) with a copy per flag and a machine always free."""
    y, f, relaunch, valid = prepare_job(y, flagged_at, relaunch, rng)
    done = np.where(valid, np.minimum(y, f + relaunch), y)
    extra = float(np.where(valid, done - f, 0.0).sum())
    return float(done.max()), extra


def speculate_limited(y, flagged_at, checkpoints, m: int, rng: np.random.Generator | None = None,
                      *, relaunch=None, after_grid: str = "event") -> tuple[float, float]:
    """(new completion time, extra machine seconds) with ``m`` machines (see the section's comment)."""
    y, f, relaunch, valid = prepare_job(y, flagged_at, relaunch, rng)
    pool0 = max(0, int(m) - len(y))
    if pool0 >= int(valid.sum()):
        done = np.where(valid, np.minimum(y, f + relaunch), y)
        return float(done.max()), float(np.where(valid, done - f, 0.0).sum())
    return speculate_on_grid(y, f, relaunch, valid, decision_points(checkpoints, f[valid]), pool0,
                              after_grid=after_grid)


def speculate_on_grid(y, f, relaunch, valid, grid, pool0: int, *, after_grid: str = "event"
                       ) -> tuple[float, float]:
    if after_grid not in AFTER_GRID_CHOICES:
        raise ValueError(f"after_grid must be one of {AFTER_GRID_CHOICES}")
    idx = np.flatnonzero(valid)
    order = idx[np.lexsort((idx, f[idx]))].tolist()     # earliest flag first, then task order
    done = y.copy()
    start = np.full(len(y), np.nan)                     # when a task's copy started
    queue: deque[int] = deque()
    nxt = 0

    def serve(c: float) -> None:
        nonlocal queue
        copied = ~np.isnan(start)
        ended = done <= c
        idle = pool0 + int(ended.sum()) + int((ended & copied).sum()) - int(copied.sum())
        while queue and idle > 0:
            i = queue.popleft()
            if y[i] <= c:                                   # its original finished while it waited
                continue
            start[i] = c
            done[i] = min(y[i], c + relaunch[i])
            idle -= 1

    for c in grid.tolist():
        while nxt < len(order) and f[order[nxt]] <= c:
            queue.append(order[nxt])
            nxt += 1
        serve(c)
    if after_grid == "event":
        c = float(grid[-1]) if len(grid) else 0.0
        while queue and any(y[i] > c for i in queue):
            later = done[done > c]
            if not len(later):
                break
            c = float(later.min())
            serve(c)
    copied = ~np.isnan(start)
    return float(done.max()), float((done[copied] - start[copied]).sum())



def copy_draws(y, trace, job_id, seeds, copy_keeps: float, fixed: np.ndarray) -> list[np.ndarray]:
    """One array of copy latencies per seed: the common draw (kept ``copy_keeps`` of the original),
    except where ``fixed`` gives the task's copy latency (cause-aware copies: the same in every seed)."""
    draws = [copy_latencies(y, draw_relaunch_latencies(y, job_rng(s, trace, job_id)), copy_keeps) for s in seeds]
    if np.isnan(fixed).all():
        return draws
    return [np.where(np.isnan(fixed), d, fixed) for d in draws]



def speculation_outcome(y, flagged_at, draws) -> tuple[float, float]:
    """(JCT reduction, extra machine time as a share of the job's) of one job's flags with a
    machine always free, mean over the relaunch ``draws`` (one array per seed)."""
    y = np.asarray(y, dtype=float)
    original, work = float(y.max()), float(y.sum())
    red = extra = 0.0
    for r in draws:
        new, ex = speculate_unlimited(y, flagged_at, relaunch=r)
        red += (original - new) / original
        extra += ex / work
    return red / len(draws), extra / len(draws)
