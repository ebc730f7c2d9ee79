"""The copy model: how long a relaunched task or a speculative copy runs (setting copy_keeps), one
draw per seed.

Every simulation of copies (the replay engine's: the budget tables, the operator's completion tables,
the cost-aware threshold, the operator's Spark answer; the paper's relaunches,
stragglers/prediction/copies/completion.py) draws here, so the same seed and ``copy_keeps`` give the
same copies everywhere. One draw per (job, task, seed) from the latencies of the job's tasks that
finish (``draw_relaunch_latencies``, common random numbers across methods); a copy of a task that does
not finish never finishes.
"""

from __future__ import annotations

import zlib

import numpy as np

#: The relaunch draws behind every expected outcome (the completion and speculation tables, the
#: budget sweep, the cost-aware threshold, the node ranking's avoidance): one seed per draw of
#: ``draw_relaunch_latencies``, through ``job_rng``, so they all average the same ten futures.
RELAUNCH_SEEDS = range(10)


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


def job_rng(seed: int, trace: str, job_id) -> np.random.Generator:
    """The generator used for (seed, job): reproducible for one job alone."""
    key = zlib.crc32(f"{trace}/{job_id}".encode())
    return np.random.default_rng([int(seed), key])


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
