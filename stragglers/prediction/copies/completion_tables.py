"""Job completion time over many jobs: the relaunch (Algorithms 2 and 3) and the
speculative copies' tables, per (trace, method, algorithm, machines), from the tasks' latencies
and the methods' predictions (docs/PROTOCOL.md section 6). One job's simulation is
stragglers/prediction/copies/completion.py; the draws, stragglers/prediction/engine/draws.py.

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

from typing import Iterable, Iterator

import numpy as np
import pandas as pd

from stragglers.prediction.copies.completion import decision_points, simulate_limited
from stragglers.prediction.engine.draws import RELAUNCH_SEEDS, copy_draws, draw_relaunch_latencies, job_rng, task_ends
from stragglers.prediction.engine.caps import Uncapped
from stragglers.prediction.engine.job import CopyJob
from stragglers.prediction.engine.policies import Policy, from_flags
from stragglers.prediction.engine.replay import MachinePool, outcomes, run

TABLE_COLUMNS = [
    "trace", "method", "algorithm", "machines", "reduction_mean",
    "reduction_std_over_seeds", "n_jobs", "seeds",
]

SPECULATION_COLUMNS = [
    "trace", "method", "algorithm", "machines", "reduction_mean", "reduction_std_over_seeds",
    "jct_change_p90", "extra_machine_share", "n_copies_per_job", "n_jobs", "seeds",
]


# ---------------------------------------------------------------------------
# Many jobs
# ---------------------------------------------------------------------------

def _task_sort_key(s: pd.Series) -> pd.Series:
    num = pd.to_numeric(s, errors="coerce")
    return num if num.notna().all() else s.astype(str)


def _job_arrays(tasks_df, predictions_df, checkpoints_df, excluded_machines=frozenset()):
    """Yield (trace, job_id, y, checkpoints, {method: flagged_at}, relaunch pool or None, fixed copy
    latencies, starts) per job; fixed copy latencies are tasks_df's optional ``copy_latency_s`` (NaN
    where absent: a draw), starts its optional ``start_s`` (the tasks' starts on the job's wall clock,
    where the flags are; None: the task clock)."""
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
    t["_start"] = tasks_df["start_s"].astype(float) if "start_s" in tasks_df.columns else np.nan
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
        start = g["_start"].to_numpy(dtype=float)
        yield (trace, job_id, y, cps.get((trace, job_id), np.empty(0)), flags, pool, g["_copy"].to_numpy(dtype=float),
               None if np.isnan(start).all() else start)


def _iter_job_results(
    tasks_df, predictions_df, checkpoints_df, machines, seeds,
    kill_frees_machine, after_grid, excluded_machines=frozenset(),
) -> Iterator[tuple]:
    """Yield (trace, method, job_id, n, n_flagged, original, new[S, 1 + M])."""
    machines = [int(m) for m in machines]
    seeds = [int(s) for s in seeds]
    for trace, job_id, y, cp, flags, pool, _fixed, _start in _job_arrays(tasks_df, predictions_df, checkpoints_df,
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
            grid = decision_points(cp, f[valid]) if n_flag else None
            for si in range(len(seeds)):
                cache: dict[int, float] = {}
                for mi, m in enumerate(machines):
                    pool0 = max(0, m - n)
                    if pool0 >= n_flag:
                        new[si, 1 + mi] = unl[si]
                        continue
                    if pool0 not in cache:
                        cache[pool0] = simulate_limited(
                            y, f, draws[si], valid, grid, y_sorted, pool0,
                            kill_frees_machine=kill_frees_machine, after_grid=after_grid,
                        )
                    new[si, 1 + mi] = cache[pool0]
            yield trace, method, job_id, n, n_flag, original, new


def completion_jobs(
    tasks_df: pd.DataFrame, predictions_df: pd.DataFrame,
    checkpoints_df: pd.DataFrame | None = None,
    machines: Iterable[int] = range(100, 1000, 100), seeds: Iterable[int] = RELAUNCH_SEEDS,
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
    machines: Iterable[int] = range(100, 1000, 100), seeds: Iterable[int] = RELAUNCH_SEEDS,
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



def _engine_job(trace, job_id, y, start, checks, draws, fixed) -> CopyJob:
    """A job of the completion tables as the engine's, started at ``start`` (None: the task clock),
    checked at ``checks``; a task finishes unless its fixed copy latency says it never does (+inf)."""
    n = len(y)
    finished = np.ones(n, bool) if fixed is None else ~np.isposinf(np.asarray(fixed, float))
    return CopyJob(str(trace), job_id, np.arange(n), np.zeros(n) if start is None else np.asarray(start, float),
                   np.asarray(y, float), finished, np.asarray(checks, float), tuple(draws))


def _flags_policy(method: str, f: np.ndarray, end: np.ndarray, checks: np.ndarray) -> Policy:
    """The method's flags as the engine's policy: first come, first served (the earliest flag first)."""
    f = np.where(np.isnan(f) | (f >= end), np.nan, f)
    return from_flags(method, "default", f, checks)


def speculation_jobs(tasks_df: pd.DataFrame, predictions_df: pd.DataFrame, seeds: Iterable[int] = RELAUNCH_SEEDS,
                     *, copy_keeps: float = 0.0) -> pd.DataFrame:
    """Per (trace, method, job): the JCT reduction and extra machine time of a copy per flag on machines
    always free (the replay engine uncapped), means over the seeds' draws (what intervals over jobs need)."""
    rows = []
    for trace, job_id, y, _cp, flags, _pool, fixed, start in _job_arrays(tasks_df, predictions_df, None):
        if float(y.max()) <= 0:
            continue
        draws = copy_draws(y, trace, job_id, seeds, copy_keeps, fixed)
        end = task_ends(y, start)
        for method, f in flags.items():
            checks = np.unique(f[~np.isnan(f)]) if np.any(~np.isnan(f)) else np.zeros(1)
            job = _engine_job(trace, job_id, y, start, checks, draws, fixed)
            (o,) = outcomes(job, _flags_policy(method, f, end, checks), [Uncapped()])
            rows.append((trace, method, job_id, o.jct_reduction, o.extra_machine_share))
    return pd.DataFrame(rows, columns=["trace", "method", "job_id", "jct_reduction", "extra_machine_share"])


def speculation_table(
    tasks_df: pd.DataFrame, predictions_df: pd.DataFrame, checkpoints_df: pd.DataFrame | None = None,
    machines: Iterable[int] = range(100, 1000, 100), seeds: Iterable[int] = RELAUNCH_SEEDS,
    *, copy_keeps: float = 0.0,
) -> pd.DataFrame:
    """Per (trace, method, algorithm, machines) with speculative copies through the replay engine
    (uncapped; machines always free, or a pool of m, ``engine.replay.MachinePool``): the JCT reduction
    (mean over seeds of the mean over jobs, and its std over seeds), the p90 over jobs of the JCT change
    (new - original) / original (mean over seeds; <= 0: a copy never delays), the extra machine time
    as a share of the job's original machine time (mean over jobs and seeds) and copies per job.
    ``copy_keeps``: the share of its original's relative log-latency a copy keeps (``copy_latencies``);
    a ``copy_latency_s`` column of tasks_df fixes a task's copy latency where it is not NaN (cause-aware
    copies on a generated trace: stragglers.prediction.copies.reexecution.cause_aware_copy_latency). The
    checks are the decision points: the job's checkpoints united with the flags' times."""
    machines, seeds = [int(m) for m in machines], [int(s) for s in seeds]
    if not seeds:
        raise ValueError("need at least one seed")
    acc: dict[tuple[str, str], list[np.ndarray]] = {}
    for trace, job_id, y, cp, flags, _pool, fixed, start in _job_arrays(tasks_df, predictions_df, checkpoints_df):
        end = task_ends(y, start)   # the flags' clock: with machines, originals and copies compete on it
        if float(end.max()) <= 0:
            continue
        draws = copy_draws(y, trace, job_id, seeds, copy_keeps, fixed)
        n = len(y)
        for method, f in flags.items():
            valid = ~np.isnan(f) & (f < end)
            checks = decision_points(cp, f[valid])
            job = _engine_job(trace, job_id, y, start, checks if len(checks) else np.zeros(1), draws, fixed)
            policy = _flags_policy(method, f, end, job.checks)
            unlimited, _, _ = run(job, policy, [Uncapped()])
            out = np.empty((len(seeds), 1 + len(machines), 3))   # reduction, extra share, copies
            out[:, 0] = _shares(unlimited[0], job)
            by_pool: dict[int, np.ndarray] = {}
            for mi, m in enumerate(machines):
                pool0 = max(0, m - n)
                if pool0 >= int(valid.sum()):
                    out[:, 1 + mi] = out[:, 0]
                    continue
                if pool0 not in by_pool:
                    limited, _, _ = run(job, policy, [Uncapped()], MachinePool(m))
                    by_pool[pool0] = _shares(limited[0], job)
                out[:, 1 + mi] = by_pool[pool0]
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


def _shares(raw: np.ndarray, job: CopyJob) -> np.ndarray:
    """(S, 3): per draw the JCT reduction, the extra machine time's share and the copies, from the
    engine's raw (new completion, extra seconds, copies)."""
    original, work = job.completion, job.work
    return np.stack([(original - raw[:, 0]) / original, raw[:, 1] / work, raw[:, 2]], axis=1)
