"""The copy model held against real re-executions (docs/EVALUATION.md, "What a copy buys").

1. On the real warehouse (asset ``reexecutions`` materialized): the pairs' jobs split in time, by the
   first SCHEDULE of their earliest paired first life (the earlier half of the jobs, the later half);
   ``copy_keeps`` fitted on the earlier jobs only (the grid value whose replayed correlation is nearest
   the real one), then real against the copy model at that value on the later jobs, with intervals.
2. The generator's re-execution model (stragglers.traces.synth.model.reexecution_latency_s) held
   against the same split: its noise correlation between lives fitted on the earlier jobs (the grid
   value whose generated correlation is nearest the real one), checked on the later jobs and on all,
   both statistics against the real 95% intervals; how the correlation moves with the share of
   travelling-cause (data, computation, I/O skew) tasks, what a cause-mix recalibration would need.
   Then the share k at which the copy model reproduces the generator's re-executions
   (``generator_pairs``, from its truth), i.e. what the generator believes a copy keeps.
3. The operator's table (free rules, oracle, NURD family) on both warehouses with copy_keeps = 0
   (today) and at each value found above; on the embedded trace also with cause_aware_copies=on.

    python -m studies.reexecution.copy_model --real REAL_DATA_DIR --embedded EMBEDDED_DATA_DIR [--real-trace google_2011]
        [--seed 0] [--no-tables]

A data dir holds warehouse.duckdb (and, for the embedded trace, truth/synthetic/).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd

from stragglers.diagnosis.truth import load_truth
from stragglers.prediction.copies import reexecution as rx
from stragglers.prediction.engine.draws import RELAUNCH_SEEDS
from stragglers.prediction.copies.completion_tables import speculation_table
from stragglers.prediction.methods import FREE_RULES
from stragglers.prediction.replay.metrics import table3
from stragglers.reports.sections.operator import ORACLE, operator_table
from stragglers.settings import Settings
from stragglers.traces.fetch import truth_dir
from stragglers.traces.synth.model import LIMITED_IO, REEXECUTION_NOISE_CORR, TRAVELLING_CAUSES


def fmt(st: dict) -> str:
    return " ".join(f"{k}={st[k]:.3f} [{st[k + '_lo']:.3f}, {st[k + '_hi']:.3f}]" for k in rx.STATISTICS) \
        + f" pairs={st['n_pairs']} jobs={st['n_jobs']}"


def real_halves(data: Path, trace: str = "google_2011"):
    """The real pairs, split in time by the first SCHEDULE of each job's earliest paired first life
    (the earlier half of the jobs, the later half), and the jobs' first lives."""
    con = duckdb.connect(str(data / "warehouse.duckdb"), read_only=True)
    pairs = con.execute("SELECT * FROM reexecution_pairs WHERE status = 'pair' AND trace = ?", [trace]).df()
    lives = rx.job_first_lives(con, trace, pairs.job_id.unique())
    con.close()
    start = pairs.groupby("job_id").first_schedule_us.min()
    cut = start.median()
    early, late = pairs[pairs.job_id.map(start) <= cut], pairs[pairs.job_id.map(start) > cut]
    print(f"## real pairs ({trace}): {len(pairs)} pairs, {pairs.job_id.nunique()} jobs; split at "
          f"{cut / 3.6e9:.2f} h: earlier {len(early)} pairs / {early.job_id.nunique()} jobs, "
          f"later {len(late)} / {late.job_id.nunique()}")
    return {"earlier (fit)": early, "later (check)": late, "all": pairs}, lives


def real_split(halves: dict, lives: dict, seed: int, trace: str = "google_2011") -> float:
    early = halves["earlier (fit)"]
    real_early = rx.statistics(early, seed=seed)
    k, curve = rx.fit_copy_keeps(early, lives, trace=trace, target_corr=real_early["corr"], seeds=RELAUNCH_SEEDS)
    print("replayed copy model on the earlier jobs, by copy_keeps:")
    print(curve.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    print(f"fitted on the earlier jobs: copy_keeps = {k:g}")
    for name, part in halves.items():
        print(f"{name:14s} real:                {fmt(rx.statistics(part, seed=seed))}")
        for kk in sorted({0.0, k}):
            rep = rx.statistics(rx.replay_copy_model(part, lives, trace=trace, seeds=RELAUNCH_SEEDS, keeps=kk), seed=seed)
            print(f"{name:14s} copy model k={kk:<5g}: {fmt(rep)}")
    return k


def within(gen: dict, real: dict) -> str:
    return ", ".join(f"{k} {'in' if real[k + '_lo'] <= gen[k] <= real[k + '_hi'] else 'OUT'}" for k in rx.STATISTICS[:2])


def generator_fit(data: Path, halves: dict, seed: int) -> float:
    """The generator's noise correlation between lives fitted on the earlier real jobs, checked after."""
    s = Settings()
    tj, tt = load_truth(truth_dir(data, "synthetic"))
    real = {name: rx.statistics(part, seed=seed) for name, part in halves.items()}
    rows = []
    for rho in np.round(np.arange(0, 1.0001, 0.05), 2):
        gen = rx.generator_pairs(tt, tj, min_finished=s.min_finished, quantile=s.quantile, seed=seed,
                                 noise_corr=float(rho))
        st = rx.statistics(gen, n_boot=0)
        rows.append({"noise_corr": float(rho), **{k: st[k] for k in rx.STATISTICS}})
    curve = pd.DataFrame(rows)
    target = real["earlier (fit)"]["corr"]
    rho = float(curve.loc[(curve["corr"] - target).abs().idxmin(), "noise_corr"])
    print("## the generator's re-executions by the noise correlation between lives (embedded trace):")
    print(curve.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    print(f"fitted on the earlier real jobs (nearest corr {target:.3f}): noise_corr = {rho:g} "
          f"(model default: {REEXECUTION_NOISE_CORR:g})")
    gen = rx.statistics(rx.generator_pairs(tt, tj, min_finished=s.min_finished, quantile=s.quantile, seed=seed,
                                           noise_corr=rho), seed=seed)
    print(f"generator at noise_corr={rho:g}: {fmt(gen)}")
    for name, st in real.items():
        print(f"  against real {name:14s} {fmt(st)}  -> {within(gen, st)}")
    # what a cause-mix recalibration would need: a share of the travelling-cause tasks given a cause of
    # the machine's instead (same factor, does not travel); first lives unchanged, only the labels move
    travelling = tt.index[tt.cause.isin(TRAVELLING_CAUSES) & (tt.end_state == "FINISH")]
    rng = np.random.default_rng([seed, 361])
    order = rng.permutation(travelling)
    print("## correlation by the share of travelling-cause tasks kept (the rest given a machine cause):")
    for keep in (1.0, 0.75, 0.5, 0.25, 0.1, 0.0):
        moved = tt.copy()
        moved.loc[order[int(round(keep * len(order))):], "cause"] = LIMITED_IO
        st = rx.statistics(rx.generator_pairs(moved, tj, min_finished=s.min_finished, quantile=s.quantile,
                                              seed=seed, noise_corr=rho), seed=seed)
        print(f"  keep {keep:4.2f} ({int(round(keep * len(order)))} tasks): {fmt(st)}  all: {within(st, real['all'])}")
    return rho


def generator_keeps(data: Path, seed: int, noise_corr: float) -> float:
    s = Settings()
    tj, tt = load_truth(truth_dir(data, "synthetic"))
    gen = rx.generator_pairs(tt, tj, min_finished=s.min_finished, quantile=s.quantile, seed=seed,
                             noise_corr=noise_corr)
    lives = {j: g.first_latency_s.to_numpy(float) for j, g in gen.groupby("job_id")}
    st = rx.statistics(gen, seed=seed)
    k, curve = rx.fit_copy_keeps(gen, lives, trace="synthetic", target_corr=st["corr"], seeds=range(3))
    print(f"## generator's re-executions (embedded trace, noise_corr={noise_corr:g}): {fmt(st)}")
    print(curve.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    print(f"the copy model reproduces the generator's correlation at copy_keeps = {k:g}")
    return k


def operator_tables(data: Path, trace: str, keeps: list[float], seed: int, cause_aware: bool = False) -> None:
    con = duckdb.connect(str(data / "warehouse.duckdb"), read_only=True)
    jm = con.execute("SELECT * FROM operator_job_metrics").df()
    jm = jm[jm.trace == trace]
    keep = [*FREE_RULES, ORACLE, "nurd", "nurd_nc", "gbtr"]
    jm = jm[jm.method.isin(keep)]
    pred = con.execute("SELECT trace, method, job_id, task_id, flagged_at_s FROM operator_predictions").df()
    pred = pred[pred.method.isin(keep) & (pred.trace == trace)]
    tasks = con.execute("SELECT trace, job_id, task_id, latency_s FROM tasks SEMI JOIN "
                        "(SELECT DISTINCT trace, job_id FROM operator_job_metrics) USING (trace, job_id) "
                        "WHERE trace = ?", [trace]).df()
    cps = con.execute("SELECT trace, job_id, checkpoint_s FROM job_checkpoints WHERE k > 0").df()
    con.close()
    t3 = table3(jm, n_boot=200, seed=seed)
    variants = [(f"copy_keeps={k:g}", tasks, k) for k in keeps]
    if cause_aware:
        _jobs, tt = load_truth(truth_dir(data, "synthetic"))
        aware = tasks.merge(rx.cause_aware_copy_latency(tt), on=["job_id", "task_id"], how="left")
        print(f"cause-aware copies: {int(aware.copy_latency_s.notna().sum())} of {len(aware)} tasks redo their work")
        variants.append(("cause_aware_copies=on", aware, 0.0))
    rows = []
    for name, t, k in variants:
        op = operator_table(t3, speculation_table(t, pred, cps, seeds=RELAUNCH_SEEDS, copy_keeps=k))
        rows.append(op[["trace", "method", "jct_reduction", "jct_reduction_limited_avg", "extra_machine_share",
                        "copies_per_job", "f1"]].assign(copy_model=name))
    wide = pd.concat(rows).pivot_table(index=["trace", "method"], columns="copy_model",
                                       values=["jct_reduction", "jct_reduction_limited_avg", "extra_machine_share"])
    print(f"## operator's table on {data} by copy model")
    print(wide.to_string(float_format=lambda v: f"{100 * v:.1f}%"))


def arguments(module: str, doc: str, second_dir: str) -> argparse.ArgumentParser:
    """The command line the re-execution studies share (``module``: the study's, as run with -m):
    --real (the real excerpt's data directory), ``second_dir`` (a second directory, required),
    --real-trace and --seed."""
    ap = argparse.ArgumentParser(prog=f"python -m {module}", description=doc,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--real", type=Path, required=True)
    ap.add_argument(second_dir, type=Path, required=True)
    ap.add_argument("--real-trace", default="google_2011")
    ap.add_argument("--seed", type=int, default=0)
    return ap


def main() -> None:
    ap = arguments("studies.reexecution.copy_model", __doc__, "--embedded")
    ap.add_argument("--no-tables", action="store_true", help="the fits only, not the operator's tables")
    a = ap.parse_args()
    halves, lives = real_halves(a.real, a.real_trace)
    k_real = real_split(halves, lives, a.seed, a.real_trace)
    rho = generator_fit(a.embedded, halves, a.seed)
    k_gen = generator_keeps(a.embedded, a.seed, rho)
    if a.no_tables:
        return
    keeps = sorted({0.0, k_real, k_gen})
    operator_tables(a.embedded, "synthetic", keeps, a.seed, cause_aware=True)
    operator_tables(a.real, a.real_trace, keeps, a.seed)


if __name__ == "__main__":
    np.set_printoptions(precision=3)
    main()
