"""Cost of every method: seconds per job of the online replay.

Two workloads, measured in one run on this machine:
- the embedded trace's jobs (their real checkpoint_features), a sample of
  ``--jobs`` jobs spread over sizes;
- one job of ``--big`` tasks (default 5000) with ``--checkpoints`` checkpoints,
  features that drift with time like the embedded trace's.

The baseline of the ratios is GBTR's family (NURD: one shared fit per
checkpoint), measured in the same run. Prints a Markdown table.

    python benchmarks/method_cost.py --jobs 6 --big 5000 --checkpoints 8
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import duckdb
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from stragglers.prediction.evaluation import load_jobs, method_factory  # noqa: E402
from stragglers.prediction.methods import BASELINES  # noqa: E402
from stragglers.settings import EvaluationSettings, SelectionSettings  # noqa: E402
from stragglers.prediction.simulate import JobData, replay_job  # noqa: E402
from stragglers.traces.synth import generate_google  # noqa: E402
from stragglers.warehouse.build import build_features, build_selection, stage_google  # noqa: E402


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


def embedded_jobs(n_jobs: int) -> list[JobData]:
    work = Path(tempfile.mkdtemp(prefix="nurd-cost-"))
    generate_google(work / "raw")
    con = duckdb.connect(str(work / "w.duckdb"))
    s = SelectionSettings()
    stage_google(con, work / "raw", s)
    build_selection(con, s)
    build_features(con, s)
    jobs, _ = load_jobs(con, "synthetic", EvaluationSettings(workers=1))
    jobs.sort(key=lambda j: j.X.size)
    idx = np.linspace(0, len(jobs) - 1, min(n_jobs, len(jobs))).round().astype(int)
    return [jobs[i] for i in sorted(set(idx))]


def time_method(name: str, jobs: list[JobData]) -> tuple[float, int]:
    factory = method_factory(name, EvaluationSettings(workers=1))
    replay_job(jobs[0], factory())  # warm up (numba compiles, imports)
    started = time.perf_counter()
    fallbacks = 0
    for job in jobs:
        fallbacks += len(replay_job(job, factory()).fallbacks)
    return (time.perf_counter() - started) / len(jobs), fallbacks


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=6)
    ap.add_argument("--big", type=int, default=5000)
    ap.add_argument("--checkpoints", type=int, default=8)
    ap.add_argument("--methods", nargs="*", default=["nurd", *sorted(BASELINES)])
    args = ap.parse_args()
    small = embedded_jobs(args.jobs)
    big = [big_job(args.big, args.checkpoints)]
    sizes = ", ".join(f"{len(j.task_ids)}x{len(j.checkpoints)}" for j in small)
    print(f"embedded jobs (tasks x checkpoints): {sizes}; big job: {args.big}x{args.checkpoints}\n")
    rows = []
    for m in args.methods:
        s, fs = time_method(m, small)
        b, fb = time_method(m, big)
        rows.append((m, s, b, fs, fb))
        print(f"  {m}: {s:.2f} s/job embedded, {b:.1f} s big", file=sys.stderr, flush=True)
    base_s, base_b = rows[0][1], rows[0][2]
    print("| method | s/job (embedded) | x NURD family | s/job (5000 tasks) | x NURD family | fallback checkpoints |")
    print("|---|---|---|---|---|---|")
    for m, s, b, fs, fb in rows:
        print(f"| {m} | {s:.2f} | {s / base_s:.1f} | {b:.1f} | {b / base_b:.1f} | {fs} / {fb} |")


if __name__ == "__main__":
    main()
