"""The engine's event loop, compiled (numba): one policy on one job, under several caps and draws.

Plain loops over the checks, the policy's ranked tasks and the job's copies, in the order a
scheduler acts at each check (stragglers/prediction/engine/replay.py says what each step means):

1. the policy's latest version at or before the check;
2. what the copies hold (a running copy its lease, an ended one what it ran) and how many run;
3. how many copies the cap allows now (budget: the ranked tasks in order while the room holds each
   copy's expected machine time, the oracle's its copy's own run; Hadoop's caps: a count; uncapped:
   all) and where they can run (machines always free; a pool of m machines: those idle; a Spark
   application: a free core of an executor on another host than the original's);
4. the ranked tasks in order, skipping those not running or already copied (and, for the oracle,
   those its copy would not beat); the copies start, sharing the room as their leases in proportion
   to their costs.

With a pool of machines the scheduler acts again at each completion after the last check while a
ranked task waits (a machine comes free then). Compiled because it runs for every policy x cap x draw
of every job, at every check (a Spark stage is checked every 100 ms): ``python -m
benchmarks.replay_kernels`` measures the per-job state it reads against a state made per policy.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

BUDGET, HADOOP, UNCAPPED = 0, 1, 2
#: where a copy can run: on a machine always free, a free core of another host (Spark), an idle
#: machine of a pool of m
ANYWHERE, EXECUTORS, POOL = 0, 1, 2


@njit(cache=True)
def _act(k, t, v, s, kind, share, base, estimate, cost_elapsed, cost, running, start, end, finished, copies,
         ptr, order, knows_copies, hadoop_minimum, hadoop_running_share, hadoop_all_share,
         placement, executor_host, free, task_host, no_pending_from, pool0,
         cstart, cstop, grant, cexec, done, copied, ncopied, scan, chosen, chosen_exec, chosen_cost, ours):
    """One check at time ``t`` (``k``: its index, -1 for a completion event after the last check);
    returns the number of copies started so far. Also says, by a negative count, that a ranked
    task was left waiting for a machine."""
    n = start.shape[0]
    E = executor_host.shape[0]
    inf = math.inf
    if placement == EXECUTORS and t < no_pending_from:
        return ncopied
    committed = 0.0
    live = 0
    for x in range(E):
        ours[x] = 0
    ended = 0
    ended_copied = 0
    for i in range(n):
        if done[i] <= t:
            ended += 1
    for j in range(ncopied):
        i = copied[j]
        if done[i] <= t:
            ended_copied += 1
        if cstop[i] <= t:
            committed += cstop[i] - cstart[i]
        else:
            committed += grant[i]
            live += 1
            if cexec[i] >= 0:
                ours[cexec[i]] += 1
    room = inf
    kk = k if k >= 0 else running.shape[0] - 1
    ev = estimate[kk]
    if kind == BUDGET:
        room = share * base[kk] - committed
        if not room > 0.0:
            return ncopied
        if not knows_copies and ev < 0:
            return ncopied                    # no duration known yet: no copy's cost to weigh
        n_new = n
    elif kind == HADOOP:
        allowed = max(float(hadoop_minimum), hadoop_running_share * running[kk], hadoop_all_share * n)
        n_new = int(allowed) - live
    else:
        n_new = n
    if placement == POOL:
        n_new = min(n_new, pool0 + ended + ended_copied - ncopied)
    if n_new <= 0:
        return ncopied
    m = 0
    used = 0.0
    for p in range(ptr[v] + scan[v], ptr[v + 1]):
        i = order[p]
        if end[i] <= t or cstart[i] == cstart[i]:
            if p == ptr[v] + scan[v]:
                scan[v] += 1          # ended or copied for good: never asked again
            continue
        if start[i] > t:
            continue
        if knows_copies:
            if not (finished[i] and t + copies[s, i] < end[i]):
                continue
            want = copies[s, i]
        elif kind == BUDGET:
            want = np.interp(t - start[i], cost_elapsed[ev], cost[ev])
            if not want >= 0.0:
                continue
        else:
            want = 0.0
        if kind == BUDGET and used + want > room:
            break                     # the ranked tasks in order, while the room holds each
        x = -1
        if placement == EXECUTORS:
            for e in range(E):
                if executor_host[e] != task_host[i] and free[kk, e] - ours[e] > 0:
                    x = e
                    break
            if x < 0:
                continue
            ours[x] += 1
        chosen[m] = i
        chosen_exec[m] = x
        chosen_cost[m] = want
        m += 1
        used += want
        if m >= n_new:
            break
    for j in range(m):
        i = chosen[j]
        if kind != BUDGET:
            g = inf
        elif knows_copies:
            g = chosen_cost[j]            # the oracle's lease: exactly its copy's run
        elif used > 0.0:
            g = room * chosen_cost[j] / used   # the room shared as leases, each at least its cost
        else:
            g = room / m
        cstart[i] = t
        grant[i] = g
        cexec[i] = chosen_exec[j]
        run = copies[s, i]
        if run <= g and t + run < end[i]:
            done[i] = t + run
        cstop[i] = min(end[i], t + min(run, g))
        copied[ncopied] = i
        ncopied += 1
    return ncopied


@njit(cache=True)
def _waiting(t, v, ptr, order, start, end, cstart) -> bool:
    """A ranked task runs at ``t`` without a copy (a pool's scheduler waits for a machine for it)."""
    for p in range(ptr[v], ptr[v + 1]):
        i = order[p]
        if start[i] <= t < end[i] and cstart[i] != cstart[i]:
            return True
    return False


@njit(cache=True)
def replay_policy(checks, base, estimate, cost_elapsed, cost, running, start, end, finished, copies,
                  version_times, ptr, order, knows_copies,
                  cap_kind, cap_share, hadoop_minimum, hadoop_running_share, hadoop_all_share,
                  placement, executor_host, free, task_host, no_pending_from, pool0,
                  out, copy_start, copy_executor):
    """Fills ``out[c, s] = (new completion time, extra machine seconds, copies)`` and, per task,
    ``copy_start[c, s]`` (NaN: no copy) and ``copy_executor[c, s]`` (-1: none, or no executors) for
    every cap c and draw s (shapes: see replay.py)."""
    K = checks.shape[0]
    n = start.shape[0]
    S = copies.shape[0]
    V = version_times.shape[0]
    E = executor_host.shape[0]
    for c in range(cap_kind.shape[0]):
        kind = cap_kind[c]
        for s in range(S):
            cstart = np.full(n, np.nan)
            cstop = np.zeros(n)
            grant = np.zeros(n)
            cexec = np.full(n, -1, np.int64)
            done = end.copy()
            copied = np.zeros(n, np.int64)
            scan = np.zeros(V, np.int64)
            chosen = np.zeros(n, np.int64)
            chosen_exec = np.zeros(n, np.int64)
            chosen_cost = np.zeros(n)
            ours = np.zeros(E, np.int64)
            ncopied = 0
            v = -1
            t = -math.inf
            for k in range(K):
                t = checks[k]
                while v + 1 < V and version_times[v + 1] <= t:
                    v += 1
                if v < 0:
                    continue
                ncopied = _act(k, t, v, s, kind, cap_share[c], base, estimate, cost_elapsed, cost, running,
                               start, end, finished, copies, ptr, order, knows_copies, hadoop_minimum,
                               hadoop_running_share, hadoop_all_share, placement, executor_host, free, task_host,
                               no_pending_from, pool0, cstart, cstop, grant, cexec, done, copied, ncopied, scan,
                               chosen, chosen_exec, chosen_cost, ours)
            # a pool's scheduler acts at each completion after the last check while a ranked task waits
            while placement == POOL and v >= 0 and _waiting(t, v, ptr, order, start, end, cstart):
                later = math.inf
                for i in range(n):
                    if t < done[i] < later:
                        later = done[i]
                if later == math.inf:
                    break
                t = later
                ncopied = _act(-1, t, v, s, kind, cap_share[c], base, estimate, cost_elapsed, cost, running,
                               start, end, finished, copies, ptr, order, knows_copies, hadoop_minimum,
                               hadoop_running_share, hadoop_all_share, placement, executor_host, free, task_host,
                               no_pending_from, pool0, cstart, cstop, grant, cexec, done, copied, ncopied, scan,
                               chosen, chosen_exec, chosen_cost, ours)
            new = -math.inf
            any_finished = False
            for i in range(n):
                if finished[i]:
                    any_finished = True
                    if done[i] > new:
                        new = done[i]
            if not any_finished:
                for i in range(n):
                    if done[i] > new:
                        new = done[i]
            extra = 0.0
            for j in range(ncopied):
                i = copied[j]
                extra += cstop[i] - cstart[i]
            out[c, s, 0] = new
            out[c, s, 1] = extra
            out[c, s, 2] = ncopied
            for i in range(n):
                copy_start[c, s, i] = cstart[i]
                copy_executor[c, s, i] = cexec[i]
