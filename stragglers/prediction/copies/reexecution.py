"""What a copy buys: tasks that ran twice on different machines, and the copy model held against them.

A task of a Google trace that FINISHed, was scheduled again and FINISHed again on another machine
(sql/reexecution_pairs.sql says exactly which lives count) is a natural experiment: the same work
run again elsewhere, which is what a speculative copy gets. Per trace:

* ``corr``: Pearson's correlation of the two lives' relative log-latencies, ln(y / job median),
  pooled over the pairs (the median is the job's, over its timed first lives);
* ``p_second_given_first``: P(the second life is a straggler | the first was one), a straggler being
  a life at or above the job's latency quantile tau (the labels' threshold, over first lives);
* ``base_rate``: P(the second life is a straggler) over all pairs, what the conditional is held against;
* each with a percentile bootstrap interval over jobs (jobs resampled with replacement, the
  statistic recomputed on the pooled pairs of the resample; seeded).

The simulator's copy model (stragglers.prediction.engine.draws: a copy's latency is a fresh draw
from the job's latencies) is replayed on the same pairs: each pair's second life is replaced by that
draw, with the simulator's own per-(seed, job) generator, and the same numbers are computed.
``copy_keeps`` k (setting ``copy_keeps``) is the share of the original's relative log-latency a copy
keeps: y' = y^k d^(1-k) (k = 0: today's fresh draw d; k = 1: a copy as slow as its original).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from stragglers.prediction.engine.draws import RELAUNCH_SEEDS, copy_latencies, job_rng
from stragglers.prediction.replay.metrics import _boot_counts, _nanpercentile
from stragglers.traces.synth.model import (REEXECUTION_NOISE_CORR, TRAVELLING_CAUSES, TYPICAL_SLOWDOWN,
                                           latency_factor, reexecution_latency_s)
from stragglers.warehouse.runner import build_table
from stragglers.warehouse.gx_context import _gxe
from stragglers.warehouse.suites import SUITES, Frame, _between, _has_columns, _not_null

#: why a rerun task is not a pair (sql/reexecution_pairs.sql), in the order the SQL tests them
LEFT_OUT = ("first_life_not_timed", "second_life_unfinished", "second_life_spans_gap", "zero_latency",
            "same_machine", "job_too_few_finished")

STATISTICS = ("corr", "p_second_given_first", "base_rate")
SUMMARY_COLUMNS = [
    "trace", "source", "n_pairs", "n_jobs", "n_first_stragglers",
    "corr", "corr_lo", "corr_hi",
    "p_second_given_first", "p_second_given_first_lo", "p_second_given_first_hi",
    "base_rate", "base_rate_lo", "base_rate_hi",
    "p_first", "median_second_relative",
]
#: sufficient statistics per job: the pooled statistics of any resample of jobs are sums of these
_SUMS = ("n", "x", "y", "xx", "yy", "xy", "s1", "s12", "s2")


def _job_sums(job_id: np.ndarray, x: np.ndarray, y: np.ndarray, s1: np.ndarray, s2: np.ndarray) -> pd.DataFrame:
    df = pd.DataFrame({"job_id": job_id, "n": 1.0, "x": x, "y": y, "xx": x * x, "yy": y * y, "xy": x * y,
                       "s1": s1.astype(float), "s12": (s1 & s2).astype(float), "s2": s2.astype(float)})
    return df.groupby("job_id", sort=True)[list(_SUMS)].sum()


def _stats(S: np.ndarray) -> np.ndarray:
    """(..., 9) summed sufficient statistics -> (..., 3): corr, P(s2 | s1), P(s2)."""
    n, x, y, xx, yy, xy, s1, s12, s2 = np.moveaxis(S, -1, 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        corr = (n * xy - x * y) / np.sqrt((n * xx - x * x) * (n * yy - y * y))
        return np.stack([corr, s12 / s1, s2 / n], axis=-1)


def statistics(pairs: pd.DataFrame, *, n_boot: int = 1000, seed: int = 0, level: float = 0.95) -> dict:
    """The pair statistics (module doc) of a frame with job_id, first_latency_s, second_latency_s,
    job_median_s, job_tau_s, with their bootstrap intervals over jobs."""
    out: dict = {"n_pairs": len(pairs), "n_jobs": int(pairs["job_id"].nunique()) if len(pairs) else 0}
    if not len(pairs):
        return out | {k: np.nan for k in SUMMARY_COLUMNS if k not in ("trace", "source")} | out
    y1, y2 = pairs["first_latency_s"].to_numpy(float), pairs["second_latency_s"].to_numpy(float)
    med, tau = pairs["job_median_s"].to_numpy(float), pairs["job_tau_s"].to_numpy(float)
    x, y = np.log(y1 / med), np.log(y2 / med)
    s1, s2 = y1 >= tau, y2 >= tau
    sums = _job_sums(pairs["job_id"].to_numpy(), x, y, s1, s2).to_numpy()
    point = _stats(sums.sum(axis=0))
    q = [(1 - level) / 2 * 100, (1 + level) / 2 * 100]
    boots = [_stats(counts @ sums) for counts in _boot_counts(np.random.default_rng(seed), len(sums), n_boot)]
    B = np.concatenate(boots) if boots else np.full((1, 3), np.nan)
    for k, name in enumerate(STATISTICS):
        out[name] = float(point[k])
        out[f"{name}_lo"], out[f"{name}_hi"] = _nanpercentile(B[:, k], q)
    out["n_first_stragglers"] = int(s1.sum())
    out["p_first"] = float(s1.mean())
    out["median_second_relative"] = float(np.median(y2 / med))
    return out


def replay_copy_model(pairs: pd.DataFrame, job_latencies: dict, *, trace: str, seeds=RELAUNCH_SEEDS,
                      keeps: float = 0.0) -> pd.DataFrame:
    """The same pairs with each second life replaced by the simulator's copy of the first: a draw
    from the job's latencies (``job_latencies[job_id]``, its timed first lives) with the simulator's
    generator per (seed, job), kept ``keeps`` of the original (``completion.copy_latencies``).
    One row per (seed, pair): the frame ``statistics`` reads (resampling jobs keeps every seed)."""
    frames = []
    for job_id, g in pairs.groupby("job_id", sort=True):
        pool = np.asarray(job_latencies[job_id], dtype=float)
        y1 = g["first_latency_s"].to_numpy(float)
        for s in seeds:
            # as the simulator's draw (draw_relaunch_latencies): uniform over the job's latencies
            d = pool[job_rng(s, trace, str(job_id)).integers(0, len(pool), size=len(g))]
            frames.append(g.assign(second_latency_s=copy_latencies(y1, d, keeps), seed=s))
    return pd.concat(frames, ignore_index=True) if frames else pairs.assign(seed=pd.Series(dtype=int))


def fit_copy_keeps(pairs: pd.DataFrame, job_latencies: dict, *, trace: str, target_corr: float,
                   grid=np.round(np.arange(0, 1.0001, 0.05), 2), seeds=RELAUNCH_SEEDS) -> tuple[float, pd.DataFrame]:
    """The share k on ``grid`` whose replayed correlation is nearest ``target_corr`` (ties: the smaller
    k, the nearer today's model), and the replayed statistics at every k (no intervals: n_boot=0)."""
    rows = []
    for k in grid:
        st = statistics(replay_copy_model(pairs, job_latencies, trace=trace, seeds=seeds, keeps=float(k)), n_boot=0)
        rows.append({"copy_keeps": float(k), **{s: st[s] for s in STATISTICS}})
    curve = pd.DataFrame(rows)
    best = float(curve.loc[(curve["corr"] - target_corr).abs().idxmin(), "copy_keeps"])
    return best, curve


def summary_row(trace: str, source: str, stats: dict) -> dict:
    return {"trace": trace, "source": source, **{c: stats.get(c, np.nan) for c in SUMMARY_COLUMNS[2:]}}


def left_out_counts(table: pd.DataFrame) -> dict[str, int]:
    """Rerun tasks per status (every reason, zero included): what the pairs leave out, counted."""
    counts = table["status"].value_counts()
    return {"pair": int(counts.get("pair", 0)), **{r: int(counts.get(r, 0)) for r in LEFT_OUT}}


def build_pairs(con, settings, min_finished: int) -> pd.DataFrame:
    """Table ``reexecution_pairs`` of the trace (sql/reexecution_pairs.sql) and its rows."""
    build_table(con, "reexecution_pairs", settings, min_finished=min_finished)
    return con.execute("SELECT * FROM reexecution_pairs WHERE trace = ? ORDER BY job_id, task_id",
                       [settings.trace]).df()


def job_first_lives(con, trace: str, job_ids) -> dict:
    """Per job: the latencies (s) of its timed first lives in task order (the draws index them), what
    the copy model draws from."""
    if not len(job_ids):
        return {}
    con.register("_pair_jobs", pd.DataFrame({"job_id": list(job_ids)}))
    try:
        df = con.execute("""SELECT job_id, (final_finish_us - first_schedule_us) / 1e6 AS latency_s
            FROM task_lifecycle WHERE trace = ? AND end_state = 'finished'
            AND job_id IN (SELECT job_id FROM _pair_jobs) ORDER BY job_id, task_id""", [trace]).df()
    finally:
        con.unregister("_pair_jobs")
    return {j: g["latency_s"].to_numpy(float) for j, g in df.groupby("job_id")}


def summarize(table: pd.DataFrame, job_latencies: dict, *, trace: str, n_boot: int, seed: int,
              copy_keeps: float = 0.0, seeds=RELAUNCH_SEEDS, generated: pd.DataFrame | None = None) -> pd.DataFrame:
    """Rows of ``reexecution_summary``: the trace's pairs, the copy model replayed on them (fresh draw),
    and with ``copy_keeps`` when it is not 0; on the embedded trace the generator's own re-executions
    (``generated``: ``generator_pairs``); the same bootstrap seed for every row."""
    pairs = table[table["status"] == "pair"]
    real = statistics(pairs, n_boot=n_boot, seed=seed)
    rows = [summary_row(trace, "the trace's re-executions", real)]
    if len(pairs):
        for k in sorted({0.0, float(copy_keeps)}):
            replay = replay_copy_model(pairs, job_latencies, trace=trace, seeds=seeds, keeps=k)
            model = statistics(replay, n_boot=n_boot, seed=seed)
            # the same pairs (one row per seed in the replay): count them once
            model |= {c: real[c] for c in ("n_pairs", "n_jobs", "n_first_stragglers", "p_first")}
            rows.append(summary_row(trace, f"copy model, copy_keeps={k:g}", model))
    if generated is not None and len(generated):
        rows.append(summary_row(trace, "generator's model (every finished task re-run)",
                                statistics(generated, n_boot=n_boot, seed=seed)))
        pools = {j: g["first_latency_s"].to_numpy(float) for j, g in generated.groupby("job_id")}
        model = statistics(replay_copy_model(generated, pools, trace=trace, seeds=seeds), n_boot=n_boot, seed=seed)
        model |= {c: rows[-1][c] for c in ("n_pairs", "n_jobs", "n_first_stragglers", "p_first")}
        rows.append(summary_row(trace, "copy model on the generator's re-runs, copy_keeps=0", model))
    return pd.DataFrame(rows, columns=SUMMARY_COLUMNS)


#: causes the generator plants in the task's own work (more input, costlier records, more I/O): a copy
#: elsewhere does the same work; the other causes are the machine's (contention) or the start's
WORK_CAUSES = TRAVELLING_CAUSES


def _work_s(t: pd.DataFrame) -> pd.Series:
    """A finished task's work in seconds on a machine of slowdown 1: its last attempt's run, less the
    queueing cause's slow start, over that machine's slowdown (truth_tasks)."""
    return ((t["final_finish_us"] - t["final_schedule_us"]) / 1e6 - t["slow_start_s"]).clip(lower=0) \
        / t["machine_slowdown"]


def cause_aware_copy_latency(truth_tasks: pd.DataFrame) -> pd.DataFrame:
    """Setting ``cause_aware_copies``: per finished task of a generated trace whose planted cause is in
    its work (WORK_CAUSES: data skew, computation skew, I/O skew), the latency of a copy that does the
    original's work on a typical machine (the generator's median machine slowdown, TYPICAL_SLOWDOWN);
    NaN for the others (a slow machine, contention, noise...), whose copy draws as today."""
    t = truth_tasks[(truth_tasks["end_state"] == "FINISH") & truth_tasks["latency_us"].notna()]
    copy = np.where(t["cause"].isin(WORK_CAUSES), _work_s(t) * TYPICAL_SLOWDOWN, np.nan)
    return pd.DataFrame({"job_id": t["job_id"].to_numpy(), "task_id": t["task_index"].to_numpy(),
                         "copy_latency_s": copy})


def generator_pairs(truth_tasks: pd.DataFrame, truth_jobs: pd.DataFrame, *, min_finished: int, quantile: float,
                    seed: int = 0, noise_corr: float = REEXECUTION_NOISE_CORR) -> pd.DataFrame:
    """Every finished task of the embedded trace run again on another machine, with the generator's
    re-execution model (stragglers.traces.synth.model.reexecution_latency_s): its travelling cause
    (data, computation, I/O skew) at its severity and the work part of its noise (``noise_corr``) go
    with it; the machine (drawn anew from the whole population), contention, the queueing wait and
    the rest of the noise do not. The first life's noise is read back from the truth: its work on a
    machine of slowdown 1 (the last attempt's run less its slow start, over that machine's slowdown)
    over the job's median run (``truth_jobs``) and its cause's factor. Jobs with at least
    ``min_finished`` finished tasks; the frame ``statistics`` reads (its first lives are the truth's
    first SCHEDULE -> final FINISH); the first lives are the trace's, only the second ones are drawn."""
    t = truth_tasks[(truth_tasks["end_state"] == "FINISH") & truth_tasks["latency_us"].notna()].copy()
    t = t[t.groupby("job_id")["job_id"].transform("size") >= min_finished]
    if not len(t):
        return pd.DataFrame(columns=["job_id", "task_id", "first_latency_s", "second_latency_s",
                                     "job_median_s", "job_tau_s"])
    jobs = truth_jobs.set_index("job_id")
    median_run = t["job_id"].map(jobs["median_run_s"]).to_numpy(float)
    sigma = t["job_id"].map(jobs["noise_sigma"]).to_numpy(float)
    severity = t["severity"].to_numpy(float)
    noise_ln = np.log(_work_s(t).to_numpy(float) / (median_run * latency_factor(t["cause"], severity)))
    second = reexecution_latency_s(np.random.default_rng([int(seed), 36]), median_run_s=median_run,
                                   noise_sigma=sigma, noise_ln=noise_ln, cause=t["cause"].to_numpy(),
                                   severity=severity, noise_corr=noise_corr)
    y1 = t["latency_us"].to_numpy(float) / 1e6
    by_job = pd.Series(y1, index=t.index).groupby(t["job_id"])
    return pd.DataFrame({
        "job_id": t["job_id"].to_numpy(), "task_id": t["task_index"].to_numpy(),
        "first_latency_s": y1, "second_latency_s": second,
        "job_median_s": by_job.transform("median").to_numpy(),
        "job_tau_s": by_job.transform(lambda v: np.quantile(v, quantile)).to_numpy(),
    })


def suite_reexecution_pairs(params: dict, columns: list[str]) -> list[Frame]:
    """GX suite of reexecution_pairs: one row per rerun task with a known status; every pair has two
    positive latencies on two machines, its job's median and tau, and enough timed first lives."""
    gxe = _gxe()
    rows = [
        _has_columns(["trace", "job_id", "task_id", "first_latency_s", "second_latency_s", "first_machine",
                      "second_machine", "job_finished", "job_median_s", "job_tau_s", "status"]),
        *_not_null(["trace", "job_id", "task_id", "status"]),
        gxe.ExpectColumnValuesToBeInSet(column="status", value_set=["pair", *LEFT_OUT]),
        gxe.ExpectCompoundColumnsToBeUnique(column_list=["trace", "job_id", "task_id"]),
    ]
    pairs = [
        *_not_null(["first_latency_s", "second_latency_s", "job_median_s", "job_tau_s"]),
        _between("first_latency_s", 0, strict_min=True),
        _between("second_latency_s", 0, strict_min=True),
        _between("job_finished", params.get("min_finished", 1)),
        gxe.ExpectColumnValuesToBeInSet(column="other_machine", value_set=[True]),
    ]
    return [Frame(None, rows, index_columns=["job_id", "task_id"]),
            Frame("pairs", pairs, derive=lambda df: df[df["status"] == "pair"].assign(
                other_machine=lambda d: d["first_machine"] != d["second_machine"]),
                index_columns=["job_id", "task_id"])]


SUITES["reexecution_pairs"] = suite_reexecution_pairs
