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

Reduction = (original - new) / original per job, mean over jobs, for each
seed; ``completion_table`` reports the mean and the standard deviation
(ddof=1) of that per-seed mean over the seeds, and lists the seeds. The
per-(job, seed) generator is ``numpy.random.default_rng([seed,
crc32(f"{trace}/{job_id}")])``, so any job's draw can be reproduced alone.

Tasks of a job without a prediction row for a method (e.g. Wrangler, scored
on a third of the tasks, or tasks that were not running at t0) are treated as
never flagged. A job enters a method's figures only if the method has at
least one prediction row for it.
"""

from __future__ import annotations

import heapq
import zlib
from collections import deque
from typing import Iterable, Iterator

import numpy as np
import pandas as pd

AFTER_GRID_CHOICES = ("event", "never")

TABLE_COLUMNS = [
    "trace", "method", "algorithm", "machines", "reduction_mean",
    "reduction_std_over_seeds", "n_jobs", "seeds",
]


# ---------------------------------------------------------------------------
# One job
# ---------------------------------------------------------------------------

def draw_relaunch_latencies(y: np.ndarray, rng: np.random.Generator, pool: np.ndarray | None = None) -> np.ndarray:
    """One relaunch latency per task, from the job's empirical latency distribution.

    ``pool`` (optional, boolean per task) restricts the draw to the latencies of those
    tasks, e.g. the tasks that ran on machines above P-cores level 0 (node ranking,
    docs/NODES.md); an empty pool falls back on every task. Same number of draws."""
    y = np.asarray(y, dtype=float)
    if pool is not None and np.any(pool):
        y = y[np.asarray(pool, dtype=bool)]
        return y[rng.integers(0, len(y), size=len(pool))]
    return y[rng.integers(0, len(y), size=len(y))]


def copy_latencies(y: np.ndarray, draws: np.ndarray, keeps: float = 0.0) -> np.ndarray:
    """The speculative copies' latencies when a copy keeps the share ``keeps`` of its original's
    relative log-latency: y'_i = y_i^k d_i^(1-k) with d the fresh draws (k = 0: the draws themselves,
    today's model; k = 1: a copy as slow as its original). Setting ``copy_keeps`` (docs/EVALUATION.md,
    "What a copy buys"); on log-latencies relative to the job's median, ln(y'/m) = k ln(y/m) + (1-k) ln(d/m)."""
    if keeps == 0:
        return draws
    y = np.asarray(y, dtype=float)
    return y ** keeps * np.asarray(draws, dtype=float) ** (1.0 - keeps)


def _prepare(y, flagged_at, relaunch, rng):
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
    y, f, relaunch, valid = _prepare(y, flagged_at, relaunch, rng)
    return float(np.where(valid, f + relaunch, y).max())


def completion_limited(
    y, flagged_at, checkpoints, m: int, rng: np.random.Generator | None = None,
    *, relaunch=None, kill_frees_machine: bool = False, after_grid: str = "event",
) -> float:
    """New completion time under Algorithm 3 with ``m`` machines (see module doc)."""
    y, f, relaunch, valid = _prepare(y, flagged_at, relaunch, rng)
    n = len(y)
    pool0 = max(0, int(m) - n)
    if pool0 >= int(valid.sum()):          # enough idle machines: Algorithm 2
        return float(np.where(valid, f + relaunch, y).max())
    grid = _decision_points(checkpoints, f[valid])
    return _simulate_limited(
        y, f, relaunch, valid, grid, np.sort(y), pool0,
        kill_frees_machine=kill_frees_machine, after_grid=after_grid,
    )


def _decision_points(checkpoints, flag_times) -> np.ndarray:
    cp = np.asarray([] if checkpoints is None else checkpoints, dtype=float)
    cp = cp[~np.isnan(cp)]
    return np.union1d(cp, np.asarray(flag_times, dtype=float))


def _simulate_limited(
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


# ---------------------------------------------------------------------------
# Many jobs
# ---------------------------------------------------------------------------

def job_rng(seed: int, trace: str, job_id) -> np.random.Generator:
    """The generator used for (seed, job): reproducible for one job alone."""
    key = zlib.crc32(f"{trace}/{job_id}".encode())
    return np.random.default_rng([int(seed), key])


def _task_sort_key(s: pd.Series) -> pd.Series:
    num = pd.to_numeric(s, errors="coerce")
    return num if num.notna().all() else s.astype(str)


def _job_arrays(tasks_df, predictions_df, checkpoints_df, excluded_machines=frozenset()):
    """Yield (trace, job_id, y, checkpoints, {method: flagged_at}, relaunch pool or None, fixed copy
    latencies) per job; the last is tasks_df's optional ``copy_latency_s`` (NaN where absent: a draw)."""
    need = {"trace", "job_id", "task_id", "latency_s"}
    if not need <= set(tasks_df.columns):
        raise ValueError(f"tasks_df needs columns {sorted(need)}")
    need_p = {"trace", "method", "job_id", "task_id", "flagged_at_s"}
    if not need_p <= set(predictions_df.columns):
        raise ValueError(f"predictions_df needs columns {sorted(need_p)}")

    if excluded_machines and "machine_id" not in tasks_df.columns:
        raise ValueError("excluded_machines needs a machine_id column in tasks_df")
    t = tasks_df[["trace", "job_id", "task_id", "latency_s"]].copy()
    t["_pool"] = ~tasks_df["machine_id"].isin(excluded_machines) if excluded_machines else True
    t["_copy"] = tasks_df["copy_latency_s"].astype(float) if "copy_latency_s" in tasks_df.columns else np.nan
    t = t[t["latency_s"].notna()]
    t["_key"] = _task_sort_key(t["task_id"])
    t["trace"] = t["trace"].astype(str)
    t["job_id"] = t["job_id"].astype(str)
    t["task_id"] = t["task_id"].astype(str)
    t = t.sort_values(["trace", "job_id", "_key"], kind="mergesort")
    t["_pos"] = t.groupby(["trace", "job_id"], sort=False).cumcount()

    p = predictions_df[["trace", "method", "job_id", "task_id", "flagged_at_s"]].copy()
    for col in ("trace", "method", "job_id", "task_id"):
        p[col] = p[col].astype(str)
    p = p.merge(t[["trace", "job_id", "task_id", "_pos"]], on=["trace", "job_id", "task_id"], how="inner")
    pred_groups = {k: g for k, g in p.groupby(["trace", "job_id"], sort=False)}

    cps: dict = {}
    if checkpoints_df is not None and len(checkpoints_df):
        c = checkpoints_df[["trace", "job_id", "checkpoint_s"]].copy()
        c["trace"] = c["trace"].astype(str)
        c["job_id"] = c["job_id"].astype(str)
        for k, g in c.groupby(["trace", "job_id"], sort=False):
            cps[k] = np.unique(g["checkpoint_s"].to_numpy(dtype=float))

    for (trace, job_id), g in t.groupby(["trace", "job_id"], sort=True):
        pg = pred_groups.get((trace, job_id))
        if pg is None:
            continue
        y = g["latency_s"].to_numpy(dtype=float)
        flags = {}
        for method, mg in pg.groupby("method", sort=True):
            f = np.full(len(y), np.nan)
            f[mg["_pos"].to_numpy()] = mg["flagged_at_s"].to_numpy(dtype=float)
            flags[method] = f
        pool = g["_pool"].to_numpy(dtype=bool) if excluded_machines else None
        yield trace, job_id, y, cps.get((trace, job_id), np.empty(0)), flags, pool, g["_copy"].to_numpy(dtype=float)


def _iter_job_results(
    tasks_df, predictions_df, checkpoints_df, machines, seeds,
    kill_frees_machine, after_grid, excluded_machines=frozenset(),
) -> Iterator[tuple]:
    """Yield (trace, method, job_id, n, n_flagged, original, new[S, 1 + M])."""
    machines = [int(m) for m in machines]
    seeds = [int(s) for s in seeds]
    for trace, job_id, y, cp, flags, pool, _fixed in _job_arrays(tasks_df, predictions_df, checkpoints_df,
                                                                  excluded_machines):
        n = len(y)
        original = float(y.max())
        draws = np.stack([draw_relaunch_latencies(y, job_rng(s, trace, job_id), pool) for s in seeds])
        y_sorted = np.sort(y)
        for method, f in flags.items():
            valid = ~np.isnan(f) & (f < y)
            n_flag = int(valid.sum())
            new = np.empty((len(seeds), 1 + len(machines)))
            # Algorithm 2, vectorised over seeds.
            unl = np.where(valid[None, :], f[None, :] + draws, y[None, :]).max(axis=1)
            new[:, 0] = unl
            grid = _decision_points(cp, f[valid]) if n_flag else None
            for si in range(len(seeds)):
                cache: dict[int, float] = {}
                for mi, m in enumerate(machines):
                    pool0 = max(0, m - n)
                    if pool0 >= n_flag:
                        new[si, 1 + mi] = unl[si]
                        continue
                    if pool0 not in cache:
                        cache[pool0] = _simulate_limited(
                            y, f, draws[si], valid, grid, y_sorted, pool0,
                            kill_frees_machine=kill_frees_machine, after_grid=after_grid,
                        )
                    new[si, 1 + mi] = cache[pool0]
            yield trace, method, job_id, n, n_flag, original, new


def completion_jobs(
    tasks_df: pd.DataFrame, predictions_df: pd.DataFrame,
    checkpoints_df: pd.DataFrame | None = None,
    machines: Iterable[int] = range(100, 1000, 100), seeds: Iterable[int] = range(10),
    *, kill_frees_machine: bool = False, after_grid: str = "event",
) -> pd.DataFrame:
    """Per (trace, method, algorithm, machines, seed, job) rows: original_s, new_s, reduction."""
    machines, seeds = list(machines), list(seeds)
    rows = []
    for trace, method, job_id, n, n_flag, orig, new in _iter_job_results(
        tasks_df, predictions_df, checkpoints_df, machines, seeds, kill_frees_machine, after_grid,
    ):
        for si, s in enumerate(seeds):
            for ai, m in enumerate([np.nan] + machines):
                rows.append((trace, method, "unlimited" if ai == 0 else "limited", m, s, job_id,
                             n, n_flag, orig, new[si, ai]))
    df = pd.DataFrame(rows, columns=["trace", "method", "algorithm", "machines", "seed", "job_id",
                                     "n_tasks", "n_flagged", "original_s", "new_s"])
    df["machines"] = df["machines"].astype(float)
    df["reduction"] = (df["original_s"] - df["new_s"]) / df["original_s"]
    return df


def completion_table(
    tasks_df: pd.DataFrame, predictions_df: pd.DataFrame,
    checkpoints_df: pd.DataFrame | None = None,
    machines: Iterable[int] = range(100, 1000, 100), seeds: Iterable[int] = range(10),
    *, kill_frees_machine: bool = False, after_grid: str = "event",
    excluded_machines: frozenset = frozenset(),
) -> pd.DataFrame:
    """Reduction in job completion time per (trace, method, algorithm, machines).

    Rows: algorithm 'unlimited' (Algorithm 2, machines NaN) and 'limited'
    (Algorithm 3, one row per machine count). reduction_mean is the mean over
    seeds of the mean over jobs; reduction_std_over_seeds the std (ddof=1) of
    the per-seed means; seeds the comma-separated seeds used. ``excluded_machines``
    (default none) draws relaunch latencies only from tasks that ran elsewhere (tasks_df
    then needs machine_id): relaunches avoid e.g. P-cores level-0 machines.
    """
    machines, seeds = [int(m) for m in machines], [int(s) for s in seeds]
    if not seeds:
        raise ValueError("need at least one seed")
    acc: dict[tuple[str, str], list[np.ndarray]] = {}
    for trace, method, _job, _n, _nf, orig, new in _iter_job_results(
        tasks_df, predictions_df, checkpoints_df, machines, seeds, kill_frees_machine, after_grid,
        excluded_machines,
    ):
        if orig > 0:
            acc.setdefault((trace, method), []).append((orig - new) / orig)
    seeds_str = ",".join(str(s) for s in seeds)
    rows = []
    for (trace, method), reds in sorted(acc.items()):
        r = np.stack(reds)                       # (J, S, 1 + M)
        per_seed = r.mean(axis=0)                # (S, 1 + M)
        mean = per_seed.mean(axis=0)
        std = per_seed.std(axis=0, ddof=1) if len(seeds) > 1 else np.full(per_seed.shape[1], np.nan)
        for ai, m in enumerate([np.nan] + machines):
            rows.append((trace, method, "unlimited" if ai == 0 else "limited", float(m),
                         float(mean[ai]), float(std[ai]), r.shape[0], seeds_str))
    out = pd.DataFrame(rows, columns=TABLE_COLUMNS)
    out["n_jobs"] = out["n_jobs"].astype("int64")
    return out


# ---------------------------------------------------------------------------
# Speculative copies (the operator's protocol, intervention="speculate"; issue 26)
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

SPECULATION_COLUMNS = [
    "trace", "method", "algorithm", "machines", "reduction_mean", "reduction_std_over_seeds",
    "jct_change_p90", "extra_machine_share", "n_copies_per_job", "n_jobs", "seeds",
]


def speculate_unlimited(y, flagged_at, rng: np.random.Generator | None = None, *, relaunch=None
                        ) -> tuple[float, float]:
    """(new completion time, extra machine seconds) with a copy per flag and a machine always free."""
    y, f, relaunch, valid = _prepare(y, flagged_at, relaunch, rng)
    done = np.where(valid, np.minimum(y, f + relaunch), y)
    extra = float(np.where(valid, done - f, 0.0).sum())
    return float(done.max()), extra


def speculate_limited(y, flagged_at, checkpoints, m: int, rng: np.random.Generator | None = None,
                      *, relaunch=None, after_grid: str = "event") -> tuple[float, float]:
    """(new completion time, extra machine seconds) with ``m`` machines (see the section's comment)."""
    y, f, relaunch, valid = _prepare(y, flagged_at, relaunch, rng)
    pool0 = max(0, int(m) - len(y))
    if pool0 >= int(valid.sum()):
        done = np.where(valid, np.minimum(y, f + relaunch), y)
        return float(done.max()), float(np.where(valid, done - f, 0.0).sum())
    return _speculate_limited(y, f, relaunch, valid, _decision_points(checkpoints, f[valid]), pool0,
                              after_grid=after_grid)


def _speculate_limited(y, f, relaunch, valid, grid, pool0: int, *, after_grid: str = "event"
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


def _copies(y, trace, job_id, seeds, copy_keeps: float, fixed: np.ndarray) -> list[np.ndarray]:
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


def speculation_jobs(tasks_df: pd.DataFrame, predictions_df: pd.DataFrame, seeds: Iterable[int] = range(10),
                     *, copy_keeps: float = 0.0) -> pd.DataFrame:
    """Per (trace, method, job): ``speculation_outcome`` of its flags (what intervals over jobs need)."""
    rows = []
    for trace, job_id, y, _cp, flags, _pool, fixed in _job_arrays(tasks_df, predictions_df, None):
        if float(y.max()) <= 0:
            continue
        draws = _copies(y, trace, job_id, seeds, copy_keeps, fixed)
        for method, f in flags.items():
            red, extra = speculation_outcome(y, f, draws)
            rows.append((trace, method, job_id, red, extra))
    return pd.DataFrame(rows, columns=["trace", "method", "job_id", "jct_reduction", "extra_machine_share"])


def speculation_table(
    tasks_df: pd.DataFrame, predictions_df: pd.DataFrame, checkpoints_df: pd.DataFrame | None = None,
    machines: Iterable[int] = range(100, 1000, 100), seeds: Iterable[int] = range(10),
    *, after_grid: str = "event", copy_keeps: float = 0.0,
) -> pd.DataFrame:
    """Per (trace, method, algorithm, machines) with speculative copies: the JCT reduction (mean over
    seeds of the mean over jobs, and its std over seeds), the p90 over jobs of the JCT change
    (new - original) / original (mean over seeds; <= 0: a copy never delays), the extra machine time
    as a share of the job's original machine time (mean over jobs and seeds) and copies per job.
    ``copy_keeps``: the share of its original's relative log-latency a copy keeps (``copy_latencies``);
    a ``copy_latency_s`` column of tasks_df fixes a task's copy latency where it is not NaN (cause-aware
    copies on a generated trace: stragglers.prediction.reexecution.cause_aware_copy_latency)."""
    machines, seeds = [int(m) for m in machines], [int(s) for s in seeds]
    if not seeds:
        raise ValueError("need at least one seed")
    acc: dict[tuple[str, str], list[np.ndarray]] = {}
    for trace, job_id, y, cp, flags, _pool, fixed in _job_arrays(tasks_df, predictions_df, checkpoints_df):
        original, work, n = float(y.max()), float(y.sum()), len(y)
        if original <= 0:
            continue
        draws = _copies(y, trace, job_id, seeds, copy_keeps, fixed)
        for method, f in flags.items():
            valid = ~np.isnan(f) & (f < y)
            n_copy = int(valid.sum())
            grid = _decision_points(cp, f[valid])
            out = np.empty((len(seeds), 1 + len(machines), 3))   # reduction, extra share, copies
            for si, r in enumerate(draws):
                new, extra = speculate_unlimited(y, f, relaunch=r)
                out[si, 0] = ((original - new) / original, extra / work, n_copy)
                cache: dict[int, tuple[float, float]] = {}
                for mi, m in enumerate(machines):
                    pool0 = max(0, m - n)
                    if pool0 >= n_copy:
                        out[si, 1 + mi] = out[si, 0]
                        continue
                    if pool0 not in cache:
                        cache[pool0] = _speculate_limited(y, f, r, valid, grid, pool0, after_grid=after_grid)
                    new_m, extra_m = cache[pool0]
                    out[si, 1 + mi] = ((original - new_m) / original, extra_m / work, n_copy)
            acc.setdefault((trace, method), []).append(out)
    seeds_str = ",".join(str(s) for s in seeds)
    rows = []
    for (trace, method), per_job in sorted(acc.items()):
        r = np.stack(per_job)                                   # (J, S, 1 + M, 3)
        per_seed = r[..., 0].mean(axis=0)                       # (S, 1 + M)
        std = per_seed.std(axis=0, ddof=1) if len(seeds) > 1 else np.full(per_seed.shape[1], np.nan)
        p90 = np.quantile(-r[..., 0], 0.9, axis=0).mean(axis=0)  # JCT change = -reduction
        for ai, m in enumerate([np.nan] + machines):
            rows.append((trace, method, "unlimited" if ai == 0 else "limited", float(m),
                         float(per_seed[:, ai].mean()), float(std[ai]), float(p90[ai]),
                         float(r[:, :, ai, 1].mean()), float(r[:, :, ai, 2].mean()), r.shape[0], seeds_str))
    out = pd.DataFrame(rows, columns=SPECULATION_COLUMNS)
    out["n_jobs"] = out["n_jobs"].astype("int64")
    return out
