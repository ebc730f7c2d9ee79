"""Cost of every method: seconds per job of the online replay.

Two workloads, measured in one run on this machine:
- the embedded trace's jobs (their real checkpoint_features), a sample of
  ``--jobs`` jobs spread over sizes;
- one job of ``--big`` tasks (default 5000) with ``--checkpoints`` checkpoints,
  features that drift with time like the embedded trace's.

The baseline of the ratios is GBTR's family (NURD: one shared fit per
checkpoint), measured in the same run. Prints a Markdown table.

    python -m benchmarks.method_cost --jobs 6 --big 5000 --checkpoints 8
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import duckdb
import numpy as np
from threadpoolctl import threadpool_limits

from stragglers.prediction.evaluation.run import load_jobs, method_factory
from stragglers.prediction.methods import BASELINES
from stragglers.settings import EvaluationSettings, SelectionSettings
from stragglers.prediction.replay.simulate import JobData, replay_job
from stragglers.traces.synth import generate_google
from stragglers.warehouse.assemble import build_warehouse
from stragglers.warehouse.storage import configure


def big_job(n: int, K: int, d: int = 15, seed: int = 0) -> JobData:
    rng = np.random.default_rng(seed)
    slow = rng.lognormal(0, 0.5, n)
    latency = 600 + 1500 * slow
    tau = float(np.quantile(latency, 0.9))
    t0 = float(np.sort(latency)[int(np.ceil(0.04 * n)) - 1])
    checkpoints = np.linspace(t0, tau, K, endpoint=False)
    base = rng.normal(size=(n, d)) + slow[:, None] * np.linspace(1, 0, d)
    X = np.empty((K, n, d))
    for k, t in enumerate(checkpoints):
        raw = base * (0.5 + 0.5 * (np.minimum(t, latency) / latency)[:, None]) + 0.1 * rng.normal(size=(n, d))
        X[k] = (raw - raw.min(0)) / (raw.max(0) - raw.min(0))
    return JobData(0, np.arange(n), latency, checkpoints, X, tau, tuple(f"f{i}" for i in range(d)))


def embedded_warehouse(work: Path) -> duckdb.DuckDBPyConnection:
    """The embedded trace generated and its warehouse built under ``work``."""
    generate_google(work / "raw")
    con = duckdb.connect(str(work / "w.duckdb"))
    # one thread: a guard (the features are bit-identical between parallel builds since the
    # imputation mean is ordered; before, the last bit moved SOS's mean F1 by 0.06:
    # docs/BENCHMARKS.md, "Method cost")
    configure(con, threads=1)
    build_warehouse(con, work / "raw", SelectionSettings())
    return con


def some_jobs(jobs: list[JobData], n_jobs: int, select: str = "spread") -> list[JobData]:
    """``spread``: n_jobs spread over sizes (tasks x checkpoints x features); ``largest``: the
    n_jobs with the most tasks."""
    if select == "largest":
        return sorted(jobs, key=lambda j: len(j.task_ids))[-n_jobs:]
    jobs = sorted(jobs, key=lambda j: j.X.size)
    idx = np.linspace(0, len(jobs) - 1, min(n_jobs, len(jobs))).round().astype(int)
    return [jobs[i] for i in sorted(set(idx))]


def embedded_jobs(n_jobs: int, select: str = "spread") -> list[JobData]:
    """``some_jobs`` of the embedded trace's (its warehouse in a temporary directory)."""
    with tempfile.TemporaryDirectory(prefix="nurd-cost-") as tmp:
        con = embedded_warehouse(Path(tmp))
        jobs, _ = load_jobs(con, "synthetic", EvaluationSettings(workers=1))
        con.close()
    return some_jobs(jobs, n_jobs, select)


def time_method(name: str, jobs: list[JobData]) -> tuple[float, int, list[float], float]:
    """Mean wall s/job, fallback checkpoints, CPU s per job, mean F1 over the jobs."""
    factory = method_factory(name, EvaluationSettings(workers=1))
    replay_job(jobs[0], factory())  # warm up (numba compiles, imports)
    started = time.perf_counter()
    fallbacks, cpu, f1 = 0, [], []
    for job in jobs:
        c0 = time.process_time()
        res = replay_job(job, factory())
        cpu.append(time.process_time() - c0)
        fallbacks += len(res.fallbacks)
        f1 += [v.scores["f1"] for v in res.variants[:1]]
    return (time.perf_counter() - started) / len(jobs), fallbacks, cpu, float(np.mean(f1))


def main() -> None:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.method_cost")
    ap.add_argument("--jobs", type=int, default=6, help="embedded jobs spread over sizes (0 = all 41)")
    ap.add_argument("--select", choices=("spread", "largest"), default="spread")
    ap.add_argument("--big", type=int, default=5000, help="tasks of the synthetic big job; 0 = skip it")
    ap.add_argument("--checkpoints", type=int, default=8)
    ap.add_argument("--methods", nargs="*", default=["nurd", *sorted(BASELINES)])
    ap.add_argument("--json", type=Path, help="also write the raw figures (per job CPU s, F1) here")
    args = ap.parse_args()
    small = embedded_jobs(args.jobs or 10**6, args.select)
    big = [big_job(args.big, args.checkpoints)] if args.big else []
    sizes = ", ".join(f"{len(j.task_ids)}x{len(j.checkpoints)}" for j in small)
    print(f"embedded jobs (tasks x checkpoints): {sizes}" + (f"; big job: {args.big}x{args.checkpoints}" if big else "")
          + "\n")
    rows, raw = [], {}
    for m in args.methods:
        with threadpool_limits(1):   # as the evaluation's workers (stragglers/prediction/replay/simulate.py)
            s, fs, cpu, f1 = time_method(m, small)
        b, fb = (time_method(m, big)[:2] if big else (float("nan"), 0))
        rows.append((m, s, b, fs, fb, cpu, f1))
        raw[m] = {"wall_s_per_job": s, "cpu_s": cpu, "mean_f1": f1, "big_s": b, "fallbacks": [fs, fb],
                  "jobs": [[len(j.task_ids), len(j.checkpoints)] for j in small]}
        print(f"  {m}: {s:.2f} s/job embedded ({sum(cpu):.1f} CPU s, largest job {cpu[-1]:.1f}), "
              f"{b:.1f} s big, mean F1 {f1:.3f}", file=sys.stderr, flush=True)
        if args.json:
            args.json.write_text(json.dumps(raw, indent=1))
    base_s, base_b = rows[0][1], rows[0][2]
    print("| method | s/job (embedded) | x NURD family | CPU s, largest job | mean F1 | s/job (big) | x NURD family "
          "| fallback checkpoints |")
    print("|---|---|---|---|---|---|---|---|")
    for m, s, b, fs, fb, cpu, f1 in rows:
        print(f"| {m} | {s:.2f} | {s / base_s:.1f} | {cpu[-1]:.1f} | {f1:.3f} | {b:.1f} | {b / base_b:.1f} | {fs} / {fb} |")


if __name__ == "__main__":
    main()
