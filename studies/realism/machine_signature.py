"""Does a machine leave a mark on its tasks' CPU rate and CPI? The real excerpt beside a generated trace
(whether the generator's slow machines leave the signature real contention leaves).

The real sample (``samples/task_usage_part-00000_first_10000_rows.csv``) is one 5-minute window
(600-900 s), so task durations are not in it; what it shows is how tasks of the same job differ
within one window, and how much of that difference belongs to the machine. For each usage row of
a (job, window) with >= 20 tasks, the residual is log(metric) - the (job, window) median. Over the
(machine, window) groups that hold tasks of >= 3 different jobs:

- the intraclass correlation of the residuals by machine (one-way ANOVA ICC(1)): the share of the
  within-job spread that the machine explains (a slow or contended machine lowers the CPU rate of
  every task it runs, whatever the job);
- the Spearman correlation of the machine's mean CPU residual with its mean CPI residual
  (contention as the generator models it: CPU down, CPI up, a negative correlation);
- per (job, window) with >= 50 tasks: the Spearman correlation of CPU rate and CPI across the tasks,
  and the sd of log CPU rate (the within-job spread a machine's mark has to stand out from).

The generated trace is read the same way, over its first two task_usage parts and full windows.

    python -m studies.realism.machine_signature [REALDATA_DIR] GENERATED_RAW_DIR
    (REALDATA_DIR: default $NURD_REALDATA_DIR or ../shared/realdata; GENERATED_RAW_DIR: e.g.
     $NURD_DATA_DIR/raw/synthetic)
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import numpy as np
import pandas as pd

from stragglers.traces.synth.formats import google_columns

WINDOW_US = 300_000_000
MIN_JOB_TASKS, MIN_MACHINE_JOBS, MIN_SPREAD_TASKS = 20, 3, 50


def icc1(values: pd.Series, groups: list[pd.Series]) -> float:
    """ICC(1) of ``values`` by ``groups`` (one-way random-effects ANOVA, mean group size)."""
    g = values.groupby(groups)
    k = g.size().mean()
    msb = (g.size() * (g.mean() - values.mean()) ** 2).sum() / (g.ngroups - 1)
    msw = ((values - g.transform("mean")) ** 2).sum() / (len(values) - g.ngroups)
    return float((msb - msw) / (msb + (k - 1) * msw))


def bootstrap_icc(d: pd.DataFrame, col: str, n: int = 200, seed: int = 0) -> tuple[float, float]:
    """90 % interval of the ICC over machines resampled with replacement (the excerpt has few)."""
    rng = np.random.default_rng(seed)
    keys = d.groupby(["machine_id", "start_time"]).ngroup().to_numpy()
    by = {k: np.flatnonzero(keys == k) for k in np.unique(keys)}
    out = []
    for _ in range(n):
        pick = rng.choice(list(by), size=len(by))
        idx = np.concatenate([by[k] for k in pick])
        lab = np.repeat(np.arange(len(pick)), [len(by[k]) for k in pick])
        out.append(icc1(d[col].iloc[idx].reset_index(drop=True), [pd.Series(lab)]))
    return float(np.percentile(out, 5)), float(np.percentile(out, 95))


def signature(usage: pd.DataFrame, interval: bool = False) -> dict:
    d = usage[(usage.cpu_rate > 0) & (usage.cpi > 0)].copy()
    key = [d.job_id, d.start_time]
    for m in ("cpu_rate", "cpi"):
        d[f"r_{m}"] = np.log(d[m]) - np.log(d[m]).groupby(key).transform("median")
    spread = [(g.cpu_rate.corr(g.cpi, method="spearman"), np.log(g.cpu_rate).std())
              for _, g in d.groupby(["job_id", "start_time"]) if len(g) >= MIN_SPREAD_TASKS]
    d = d[d.groupby(["job_id", "start_time"]).job_id.transform("size") >= MIN_JOB_TASKS]
    d = d[d.groupby(["machine_id", "start_time"]).job_id.transform("nunique") >= MIN_MACHINE_JOBS]
    groups = [d.machine_id, d.start_time]
    per_machine = d.groupby(groups)[["r_cpu_rate", "r_cpi"]].mean()
    spread = np.array(spread)
    ci = ({f"ICC {m} 90 % interval (machines resampled)": "%.3f..%.3f" % bootstrap_icc(d, f"r_{c}")
           for m, c in (("CPU rate", "cpu_rate"), ("CPI", "cpi"))} if interval else {})
    return {**ci, "machines": len(per_machine), "tasks": len(d),
            "ICC CPU rate": icc1(d.r_cpu_rate, groups), "ICC CPI": icc1(d.r_cpi, groups),
            "machine mean CPU vs CPI (Spearman)": per_machine.r_cpu_rate.corr(per_machine.r_cpi, method="spearman"),
            "(job, window)s with >= 50 tasks": len(spread),
            "median within-job CPU vs CPI (Spearman)": float(np.median(spread[:, 0])),
            "median within-job sd of log CPU rate": float(np.median(spread[:, 1]))}


def main() -> None:
    ap = argparse.ArgumentParser(prog="python -m studies.realism.machine_signature",
                                 description="A machine's mark on its tasks' CPU rate and CPI: the real "
                                             "excerpt's sample beside a generated trace.")
    ap.add_argument("real_dir", nargs="?", type=Path,
                    default=Path(os.environ.get("NURD_REALDATA_DIR", "../shared/realdata")),
                    help="the real data (default $NURD_REALDATA_DIR or ../shared/realdata)")
    ap.add_argument("gen_dir", type=Path, help="a generated trace's raw files, e.g. $NURD_DATA_DIR/raw/synthetic")
    args = ap.parse_args()
    real_dir, gen_dir = args.real_dir, args.gen_dir
    sample = real_dir / "google_2011" / "samples" / "task_usage_part-00000_first_10000_rows.csv"
    real = pd.read_csv(sample)
    cols = google_columns("task_usage")
    parts = sorted((gen_dir / "task_usage").glob("part-*.csv.gz"))[:2]
    gen = pd.concat(pd.read_csv(p, header=None, names=cols) for p in parts).rename(
        columns={"cycles_per_instruction": "cpi"})   # the sample's header names it cpi
    gen = gen[gen.end_time - gen.start_time == WINDOW_US]
    rows = {f"real excerpt ({sample.name})": signature(real, interval=True), f"generated ({gen_dir})": signature(gen)}
    for name, r in rows.items():
        print(f"{name}: " + "; ".join(f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}" for k, v in r.items()))


if __name__ == "__main__":
    main()
