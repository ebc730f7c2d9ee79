"""Speculative copies of one job's flagged tasks (the operator's protocol, intervention="speculate").

The copy's latency model (copy_latencies, setting copy_keeps), a copy per flag with a machine
always free or with m machines, and one job's outcome over the seeds' draws. Same clock, draws
and decision points as the relaunch simulation (stragglers/prediction/completion.py); the tables
over many jobs are in stragglers/prediction/completion_tables.py.
"""

from __future__ import annotations

from collections import deque
from typing import Callable

import numpy as np

from stragglers.prediction.threshold import online_threshold
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
    y, draws = np.asarray(y, dtype=float), np.asarray(draws, dtype=float)
    # a copy that never finishes (+inf: its task does not finish) stays so, even at keeps = 1
    return np.where(np.isposinf(draws), np.inf, y ** keeps * draws ** (1.0 - keeps))



def task_ends(y, start=None) -> np.ndarray:
    """When each task's original ends on the clock its flags are given on: its latency on the task
    clock (every task starts at 0), start + latency on the job's wall clock (``start``: each task's
    start after the job's origin, s). A copy launched by a flag at time W ends at W + its latency:
    every simulation of copies compares the two on this clock, and a job completes at the latest
    task's earlier end."""
    y = np.asarray(y, dtype=float)
    return y if start is None else np.asarray(start, dtype=float) + y


def completion_time(done, relaunch) -> float:
    """When the job completes, given when each task ends (``done``, original or copy): the latest end
    among the tasks that finish. A task that does not finish in the trace has a copy that never does
    (``relaunch`` +inf, ``copy_draw_sets``) and is not waited for: it ended by its own fate or at the
    job's teardown (docs/PROTOCOL_DECISIONS.md, "A job's completion time"). A job none of whose tasks
    finishes completes at its last end, which no copy moves."""
    done = np.asarray(done, dtype=float)
    finishes = np.isfinite(np.asarray(relaunch, dtype=float))
    return float(done[finishes].max()) if finishes.any() else float(done.max())


def speculate_unlimited(y, flagged_at, rng: np.random.Generator | None = None, *, relaunch=None, start=None
                        ) -> tuple[float, float]:
    """(new completion time, extra machine seconds) with a copy per flag and a machine always free
    (``start``: the tasks' starts on the job's wall clock, ``task_ends``)."""
    if relaunch is None and rng is not None:
        relaunch = draw_relaunch_latencies(np.asarray(y, dtype=float), rng)
    end, f, relaunch, valid = prepare_job(task_ends(y, start), flagged_at, relaunch, rng)
    done = np.where(valid, np.minimum(end, f + relaunch), end)
    extra = float(np.where(valid, done - f, 0.0).sum())
    return completion_time(done, relaunch), extra


def speculate_limited(y, flagged_at, checkpoints, m: int, rng: np.random.Generator | None = None,
                      *, relaunch=None, after_grid: str = "event") -> tuple[float, float]:
    """(new completion time, extra machine seconds) with ``m`` machines (see the section's comment)."""
    y, f, relaunch, valid = prepare_job(y, flagged_at, relaunch, rng)
    pool0 = max(0, int(m) - len(y))
    if pool0 >= int(valid.sum()):
        done = np.where(valid, np.minimum(y, f + relaunch), y)
        return completion_time(done, relaunch), float(np.where(valid, done - f, 0.0).sum())
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
    return completion_time(done, relaunch), float((done[copied] - start[copied]).sum())


def copy_draws(y, trace, job_id, seeds, copy_keeps: float = 0.0, fixed: np.ndarray | None = None,
               finished: np.ndarray | None = None) -> list[np.ndarray]:
    """One array of copy latencies per seed: the common draw (kept ``copy_keeps`` of the original),
    except where ``fixed`` gives the task's copy latency (cause-aware copies: the same in every seed;
    +inf: a task that does not finish, whose copy never does). ``finished`` (default: the tasks
    ``fixed`` does not mark +inf) marks the tasks that finish (``copy_draw_sets``). The one copy model
    of every table of copies (the completion tables, the sweep, the cost-aware threshold): the same
    ``copy_keeps`` gives the same copies everywhere."""
    fixed = None if fixed is None else np.asarray(fixed, dtype=float)
    if finished is None and fixed is not None:
        finished = ~np.isposinf(fixed)
    draws = [copy_latencies(y, d, copy_keeps) for d in copy_draw_sets(y, trace, job_id, seeds, finished)]
    if fixed is None or np.isnan(fixed).all():
        return draws
    return [np.where(np.isnan(fixed), d, fixed) for d in draws]



def copy_draw_sets(y, trace, job_id, seeds, finished: np.ndarray | None = None) -> list[np.ndarray]:
    """One array of copy latencies per seed: the relaunch draws of the completion simulation, from
    the latencies of the tasks that finish. A copy of a task that does not finish in the trace
    (killed, evicted, failed, lost, or running when the trace ends) never finishes (+inf): it runs
    beside its original until the original ends and buys nothing (docs/PROTOCOL_DECISIONS.md)."""
    y = np.asarray(y, dtype=float)
    if finished is None or np.all(finished):
        return [draw_relaunch_latencies(y, job_rng(s, trace, job_id)) for s in seeds]
    finished = np.asarray(finished, dtype=bool)
    return [np.where(finished, draw_relaunch_latencies(y, job_rng(s, trace, job_id), pool=finished), np.inf)
            for s in seeds]


def speculation_outcome(y, flagged_at, draws, start=None) -> tuple[float, float]:
    """(JCT reduction, extra machine time as a share of the job's) of one job's flags with a
    machine always free, mean over the relaunch ``draws`` (one array per seed)."""
    y = np.asarray(y, dtype=float)
    original, work = completion_time(task_ends(y, start), draws[0]), float(y.sum())
    red = extra = 0.0
    for r in draws:
        new, ex = speculate_unlimited(y, flagged_at, relaunch=r, start=start)
        red += (original - new) / original
        extra += ex / work
    return red / len(draws), extra / len(draws)


# ---------------------------------------------------------------------------
# Copies under a cap a scheduler enforces (docs/EVALUATION.md, "Cost curves")
# ---------------------------------------------------------------------------
#
# At each decision t the scheduler knows each task's elapsed time, which tasks finished (and their
# durations) and what its copies have run so far; it does not know how long a running attempt
# will take. Copies start in the policy's order while the cap allows one more:
#
# - a budget b: the room at t is b x the job's machine time so far (sum of min(y_i, t - s_i)) less
#   the copies' machine time so far and the rest of the running copies' leases. As many copies
#   start as the room holds the job's median duration as known at t (the copies are drawn from the
#   job's durations; ``threshold.online_threshold`` at q = 0.5: Kaplan-Meier over the finished
#   durations with the running tasks censored at t, a log-normal fit beyond, never below t; none: no
#   copy), and they share the room as their leases (at least the median each). A copy still running
#   when its lease ends is killed and its task goes on with its original, as a scheduler that
#   reserves machine time for its copies must (Mantri kills copies that do not pay off); a copy
#   that ends sooner gives the rest of its lease back. No copy runs past its lease, so a job's
#   copies never spend more than b x its machine time: the budget holds on every job, not only on
#   the mean. (A copy of a task that does not finish never finishes: it runs to its lease or its
#   original's end.) The median of the finished durations alone would be the short tasks'.
# - Hadoop's caps (DefaultSpeculator's defaults): at most max(10, 10% of the running tasks, 1% of
#   all tasks) copies running at once; no budget of machine time, no lease.

#: Hadoop's speculative caps (mapreduce.job.speculative.*): minimum allowed, share of the running
#: tasks, share of all tasks.
HADOOP_CAPS = (10, 0.1, 0.01)
#: The cap's name for Hadoop's caps in the tables (a budget's is its share, e.g. "0.02").
HADOOP_CAP = "hadoop"


def copy_lease_seconds(y, decisions, start=None, finished=None) -> np.ndarray:
    """Per decision t: the least lease of a copy started at t, the job's median latency as known at t
    (``online_threshold``, q = 0.5) from the finished durations (``finished``: which tasks end by
    finishing, None: all) and the running tasks' elapsed times; a task that ended otherwise is in
    neither."""
    y = np.asarray(y, dtype=float)
    end, began = task_ends(y, start), np.zeros(len(y)) if start is None else np.asarray(start, dtype=float)
    fin = np.ones(len(y), bool) if finished is None else np.asarray(finished, dtype=bool)
    return np.array([online_threshold(y[(end <= t) & fin], t - began[(began <= t) & (end > t)], 0.5)
                     for t in np.asarray(decisions, dtype=float).tolist()])


def machine_seconds_by(y, decisions, start=None) -> np.ndarray:
    """Per decision t: the job's machine time so far, sum over its tasks of min(y_i, t - s_i) (0
    before a task starts), what a budget share is of."""
    y = np.asarray(y, dtype=float)
    began = np.zeros(len(y)) if start is None else np.asarray(start, dtype=float)
    return np.array([float(np.clip(t - began, 0.0, y).sum()) for t in np.asarray(decisions, dtype=float).tolist()])


def speculate_capped(y, decisions, candidates, relaunch, cap, lease=None, task_start=None,
                     machine_so_far=None, knows_copies: bool = False) -> tuple[float, float, int]:
    """(new completion time, extra machine seconds, copies) with copies started at ``decisions``
    in the order ``candidates(k, t, copied)`` gives (task indices, best first) while ``cap`` (a
    budget share, or ``HADOOP_CAP``) allows one more (see the section's comment). ``lease``:
    ``copy_lease_seconds`` and ``machine_so_far``: ``machine_seconds_by`` (computed when not
    given; the same for every draw). A copy started at r with latency relaunch_i finishes at
    r + relaunch_i if that is within its lease and before its original's end (``task_ends``;
    ``task_start``: the tasks' starts on the job's wall clock); it runs until the earliest of the
    three. ``knows_copies`` (the oracle): how long each copy would run is known too, so only a copy
    that would beat its original starts, on a lease of exactly its run, while the room holds it."""
    y = np.asarray(y, dtype=float)
    relaunch = np.asarray(relaunch, dtype=float)
    if lease is None and cap != HADOOP_CAP:
        lease = copy_lease_seconds(y, decisions, task_start, np.isfinite(relaunch))
    n = len(y)
    end = task_ends(y, task_start)
    began = np.zeros(n) if task_start is None else np.asarray(task_start, dtype=float)
    if machine_so_far is None and cap != HADOOP_CAP:
        machine_so_far = machine_seconds_by(y, decisions, task_start)
    start = np.full(n, np.nan)
    lease_end = np.full(n, np.inf)       # when each copy's lease ends (Hadoop's caps: none)
    copy_end = np.full(n, np.nan)        # when each copy stops: it finished, its lease ended, or its task ended
    done = end.copy()
    for k, t in enumerate(np.asarray(decisions, dtype=float).tolist()):
        copied = ~np.isnan(start)
        running_copies = copied & (copy_end > t)
        # the room the cap leaves first: where it is none, no candidate is asked for (nothing starts)
        if cap == HADOOP_CAP:
            m0, share_running, share_all = HADOOP_CAPS
            running = int(((began <= t) & (end > t)).sum())
            n_new = int(max(m0, share_running * running, share_all * n)) - int(running_copies.sum())
            granted = np.inf
        else:
            median = float(lease[k])
            if not np.isfinite(median) or median <= 0:
                continue
            spent = float((np.minimum(copy_end[copied], t) - start[copied]).sum())
            reserved = float((lease_end[running_copies] - t).sum())
            room = max(float(cap) * float(machine_so_far[k]) - spent - reserved, 0.0)
            n_new = n if knows_copies else int(room // median)
        if n_new <= 0:
            continue
        order = np.asarray(candidates(k, t, copied), dtype=int)
        chosen = order[(end[order] > t) & (began[order] <= t) & ~copied[order]]
        if knows_copies:
            chosen = chosen[t + relaunch[chosen] < end[chosen]]
            if cap != HADOOP_CAP:                 # in order, while the room holds each copy's own run
                chosen = chosen[np.cumsum(relaunch[chosen]) <= room]
        chosen = chosen[:n_new]
        if not len(chosen):
            continue
        if knows_copies:
            granted = relaunch[chosen]
        elif cap != HADOOP_CAP:
            granted = room / len(chosen)        # the room shared by the new copies: at least the median each
        start[chosen] = t
        lease_end[chosen] = t + granted
        finishes = relaunch[chosen] <= granted
        done[chosen] = np.where(finishes, np.minimum(end[chosen], t + relaunch[chosen]), end[chosen])
        copy_end[chosen] = np.minimum(end[chosen], t + np.minimum(relaunch[chosen], granted))
    copied = ~np.isnan(start)
    return completion_time(done, relaunch), float((copy_end[copied] - start[copied]).sum()), int(copied.sum())


def capped_outcome(y, decisions, candidates, draws, cap, lease=None, start=None,
                   knows_copies: bool = False) -> tuple[float, float, int]:
    """(JCT reduction, extra machine time as a share of the job's, copies) under ``cap``, mean over
    the ``draws`` (one array per seed; copies: mean count); ``knows_copies``: the oracle's
    (``speculate_capped``)."""
    y = np.asarray(y, dtype=float)
    if lease is None and cap != HADOOP_CAP:
        lease = copy_lease_seconds(y, decisions, start, np.isfinite(draws[0]))
    original, work = completion_time(task_ends(y, start), draws[0]), float(y.sum())
    so_far = None if cap == HADOOP_CAP else machine_seconds_by(y, decisions, start)
    red = extra = copies = 0.0
    for r in draws:
        new, ex, c = speculate_capped(y, decisions, candidates, r, cap, lease, start, so_far, knows_copies)
        red += (original - new) / original
        extra += ex / work
        copies += c
    return red / len(draws), extra / len(draws), copies / len(draws)


def _less_the_copied(order_at: Callable[[int, float], np.ndarray]) -> Callable:
    """``candidates(k, t, copied)`` from a policy's order at decision k: computed once per decision
    (the same for every draw and cap), less the tasks already copied (which keeps the others' order)."""
    ranked: dict[tuple[int, float], np.ndarray] = {}

    def candidates(k: int, t: float, copied: np.ndarray) -> np.ndarray:
        order = ranked.get((k, t))
        if order is None:
            order = ranked[k, t] = order_at(k, t)
        return order[~copied[order]]
    return candidates


def ranked_by_cuts(flagged_at: np.ndarray, cut: int, decisions) -> Callable:
    """The order of a method's copies at each decision when the replay kept no score (a rule of one
    point: flag-all), from its flags at every cut (``flagged_at``: cuts x tasks, NaN = never): the
    tasks ``cut`` has flagged by then, the ones flagged by more cuts first (a task past a stricter
    cut ranks higher), then the earlier flagged, then task order. Reads only flags given at or
    before the decision."""
    F = np.asarray(flagged_at, dtype=float)
    decisions = np.asarray(decisions, dtype=float)
    with np.errstate(invalid="ignore"):
        passed = [(F <= t).sum(axis=0) for t in decisions.tolist()]
    own = F[cut]

    def order_at(k: int, t: float) -> np.ndarray:
        with np.errstate(invalid="ignore"):
            idx = np.flatnonzero(own <= t)
        return idx[np.lexsort((idx, own[idx], -passed[k][idx]))]
    return _less_the_copied(order_at)


def ranked_by_score(flagged_at: np.ndarray, latest: np.ndarray) -> Callable:
    """The order of one cut's copies at each decision k: the tasks the cut has flagged by then
    (``flagged_at``: one per task, NaN = never), the highest score first (``latest[k]``: each task's
    latest score given at or before decision k, ``simulate.ScoreTrail.latest``; none: last), then
    the earlier flagged, then task order. Reads only flags and scores given by the decision."""
    own = np.asarray(flagged_at, dtype=float)
    score = np.where(np.isnan(latest), -np.inf, np.asarray(latest, dtype=float))

    def order_at(k: int, t: float) -> np.ndarray:
        with np.errstate(invalid="ignore"):
            idx = np.flatnonzero(own <= t)
        return idx[np.lexsort((idx, own[idx], -score[k][idx]))]
    return _less_the_copied(order_at)


def ranked_by_truth(y: np.ndarray, finished: np.ndarray | None = None, start=None) -> Callable:
    """The oracle's order: every running task that will finish (``finished``, None: all), the ones
    that truly end last first (a copy of a task that will not finish buys nothing)."""
    y = task_ends(y, start)
    will_finish = np.ones(len(y), bool) if finished is None else np.asarray(finished, dtype=bool)
    # one stable sort for every decision: filtering it keeps the order (ties by task order)
    order = np.argsort(-y, kind="stable")
    order = order[will_finish[order]]
    ends = y[order]

    def candidates(k: int, t: float, copied: np.ndarray) -> np.ndarray:
        return order[(ends > t) & ~copied[order]]
    return candidates
