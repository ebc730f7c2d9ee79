"""Job completion time with relaunched stragglers (docs/PROTOCOL.md section 6).

Paper: NURD (MLSys 2022), Section 5 and Algorithms 2 and 3, Section 7.3.
Plain Python (numpy / pandas), no Dagster.

Model
-----
All tasks of a job share one clock that starts at 0 (every task starts at 0,
the protocol's formulation). Task i has latency ``y[i]``; the job's original
completion time is ``max(y)``. A method flags task i at ``flagged_at[i]``
(NaN = never flagged), always a checkpoint of the job's replay.

Relaunch latency. The new copy of task i runs ``y'_i`` seconds, drawn from
the empirical distribution of the job's latencies (all its finished tasks).
One draw is made for *every* task, in task order,
``y' = y[rng.integers(0, n, size=n)]``, and task i always uses ``y'_i``.
So for a given seed a task's relaunch latency is the same whatever method
flags it and whichever algorithm runs: methods are compared with common
random numbers, and Algorithm 3 with enough machines gives exactly
Algorithm 2's answer.

Algorithm 2 (more machines than tasks): a task flagged at t (t < y_i) is
killed and relaunched at t; it completes at ``t + y'_i`` (even if that is
later than ``y_i``: the original was killed). New completion = max over
tasks.

Algorithm 3 (m machines for the job) -- what the paper states:
  * the scheduler acts only at checkpoints: at each checkpoint it first adds
    the machines that became free since the last one, then walks the running
    tasks; a predicted straggler is killed and relaunched on a *new* machine
    if one is idle, otherwise it waits for the next checkpoint.
  * machines become available when they finish running a task.
What it leaves open, decided here (docs/PROTOCOL.md section 6 fixes the first two):
  * The idle pool at time 0 is ``max(0, m - n)``: with m <= n every machine
    runs an original task (the common clock puts every task on the clock at
    0, so the original completion time is max(y) whatever m is), and with
    m > n the extra m - n machines are idle. Hence for m <= n the answer does
    not depend on m.
  * The pool gains one machine whenever a task finishes: an original that was
    not killed (at ``y_i``) or a relaunched copy (at ``r_i + y'_i``). A finish
    at exactly a checkpoint counts as before it (as ``y <= t`` means finished
    in the replay).
  * A flagged task waits in a FIFO queue: earliest flag first, ties in task
    order (the paper's "for each running task i" loop). While it waits its
    original keeps running; if the original finishes first, the task is done
    at ``y_i`` and is never relaunched (it also frees its machine).
  * A killed original does NOT free its machine (default): the paper only
    adds "machines that just finished running tasks", and a relaunch goes to
    a *new* machine because the old one is suspect. Setting
    ``kill_frees_machine=True`` returns the killed original's machine to the
    pool from the next decision point on.
  * Decision points are the job's checkpoint grid united with the flag times
    (the same thing when predictions come from that grid; the union keeps a
    flag off the grid from being lost).
  * After the last decision point there are no more checkpoints. Default
    ``after_grid="event"``: the scheduler keeps going and relaunches a waiting
    task at the first event (a task or copy finishing) at which a machine is
    idle. ``after_grid="never"`` follows Algorithm 3's loop literally: no
    relaunch after the last checkpoint, waiting tasks run their original to
    the end.
  * A flag at or after the task's own latency (``flagged_at >= y``) is
    ignored: the task had already finished (the replay never produces one).

The tables over many jobs (completion_table, speculation_table) are in
stragglers/prediction/copies/completion_tables.py; the draws (a relaunch's and a speculative copy's
latency, one per seed) in stragglers/prediction/engine/draws.py.
"""

from __future__ import annotations

import heapq
from collections import deque

import numpy as np

from stragglers.prediction.engine.draws import draw_relaunch_latencies

AFTER_GRID_CHOICES = ("event", "never")

# ---------------------------------------------------------------------------
# One job
# ---------------------------------------------------------------------------

def prepare_job(y, flagged_at, relaunch, rng):
    y = np.asarray(y, dtype=float)
    f = np.asarray(flagged_at, dtype=float)
    if y.ndim != 1 or f.shape != y.shape:
        raise ValueError("y and flagged_at must be 1-d arrays of the same length")
    if len(y) == 0:
        raise ValueError("a job needs at least one task")
    if relaunch is None:
        if rng is None:
            raise ValueError("give rng or relaunch")
        relaunch = draw_relaunch_latencies(y, rng)
    relaunch = np.asarray(relaunch, dtype=float)
    if relaunch.shape != y.shape:
        raise ValueError("relaunch must have one latency per task")
    valid = ~np.isnan(f) & (f < y)
    return y, f, relaunch, valid


def completion_unlimited(
    y, flagged_at, rng: np.random.Generator | None = None, *, relaunch=None,
) -> float:
    """New completion time under Algorithm 2 (a machine is always free).

    ``relaunch`` (one latency per task) replaces the draw from ``rng``.
    """
    y, f, relaunch, valid = prepare_job(y, flagged_at, relaunch, rng)
    return float(np.where(valid, f + relaunch, y).max())


def completion_limited(
    y, flagged_at, checkpoints, m: int, rng: np.random.Generator | None = None,
    *, relaunch=None, kill_frees_machine: bool = False, after_grid: str = "event",
) -> float:
    """New completion time under Algorithm 3 with ``m`` machines (see module doc)."""
    y, f, relaunch, valid = prepare_job(y, flagged_at, relaunch, rng)
    n = len(y)
    pool0 = max(0, int(m) - n)
    if pool0 >= int(valid.sum()):          # enough idle machines: Algorithm 2
        return float(np.where(valid, f + relaunch, y).max())
    grid = decision_points(checkpoints, f[valid])
    return simulate_limited(
        y, f, relaunch, valid, grid, np.sort(y), pool0,
        kill_frees_machine=kill_frees_machine, after_grid=after_grid,
    )


def decision_points(checkpoints, flag_times) -> np.ndarray:
    cp = np.asarray([] if checkpoints is None else checkpoints, dtype=float)
    cp = cp[~np.isnan(cp)]
    return np.union1d(cp, np.asarray(flag_times, dtype=float))


def simulate_limited(
    y: np.ndarray, f: np.ndarray, relaunch: np.ndarray, valid: np.ndarray,
    grid: np.ndarray, y_sorted: np.ndarray, pool0: int,
    *, kill_frees_machine: bool = False, after_grid: str = "event",
) -> float:
    """Event simulation of Algorithm 3 for one job. Returns the new completion time.

    Idle machines at a decision point c:
      pool0 + #{originals finished by c} - #{killed originals with y <= c}
            + #{relaunched copies finished by c} - #{relaunches so far}
            (+ #{relaunches at earlier decision points} if kills free machines)
    The first two terms come from one ``searchsorted`` over every task's
    latency; a killed original never finishes, so it is taken back out.
    """
    if after_grid not in AFTER_GRID_CHOICES:
        raise ValueError(f"after_grid must be one of {AFTER_GRID_CHOICES}")
    idx = np.flatnonzero(valid)
    order = idx[np.lexsort((idx, f[idx]))]          # earliest flag first, then task order
    qf = f[order].tolist()
    qy = y[order].tolist()
    qr = relaunch[order].tolist()
    n_flag = len(qf)
    finished_by = np.searchsorted(y_sorted, grid, side="right").tolist()

    finish = y.copy()
    qtask = order.tolist()
    copies: list[float] = []        # heap: finish times of relaunched copies
    killed: list[float] = []        # heap: original latencies of killed tasks
    copies_done = killed_done = relaunched = relaunched_before = 0
    queue: deque[int] = deque()
    nxt = 0

    def relaunch_from_queue(c: float, avail: int) -> int:
        nonlocal relaunched
        while queue and avail > 0:
            j = queue.popleft()
            if qy[j] <= c:          # original already finished: nothing to relaunch
                continue
            end = c + qr[j]
            finish[qtask[j]] = end
            heapq.heappush(copies, end)
            heapq.heappush(killed, qy[j])
            relaunched += 1
            avail -= 1
        return avail

    def advance(t: float) -> None:
        """Count the relaunched copies that finished and the killed originals due by t."""
        nonlocal copies_done, killed_done
        while copies and copies[0] <= t:
            heapq.heappop(copies)
            copies_done += 1
        while killed and killed[0] <= t:
            heapq.heappop(killed)
            killed_done += 1

    def idle(a: int) -> int:
        v = pool0 + a - killed_done + copies_done - relaunched
        if kill_frees_machine:
            v += relaunched_before
        return v

    for c, a in zip(grid.tolist(), finished_by):
        while nxt < n_flag and qf[nxt] <= c:
            queue.append(nxt)
            nxt += 1
        advance(c)
        relaunched_before = relaunched
        relaunch_from_queue(c, idle(a))

    if after_grid == "event" and queue:
        c_last = float(grid[-1]) if len(grid) else 0.0
        pending = [j for j in queue if qy[j] > c_last]
        queue = deque(pending)
        if queue:
            horizon = max(qy[j] for j in queue)
            a = int(np.searchsorted(y_sorted, c_last, side="right"))
            later = y_sorted[a:].tolist()
            k = 0
            t = c_last
            while queue and t < horizon:
                t_static = later[k] if k < len(later) else np.inf
                t_copy = copies[0] if copies else np.inf
                t = min(t_static, t_copy)
                if t == np.inf:
                    break
                while k < len(later) and later[k] <= t:
                    k += 1
                    a += 1
                advance(t)
                relaunched_before = relaunched
                relaunch_from_queue(t, idle(a))

    return float(finish.max())
