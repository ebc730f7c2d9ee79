"""Cost of the operator's sweep: one replay scoring every cut of a method's flag against one replay
at its own cut, and the outcomes of every point (speculation simulation) against those of one.

The embedded trace's jobs (``method_cost.embedded_jobs``) under the operator's protocol; per method,
the CPU seconds of the plain replay + its speculation outcome, and of the sweep replay + every
point's outcome, interleaved job by job in the same run (the machine is shared: only the ratio
means something). Prints a Markdown table.

    python benchmarks/sweep_cost.py --jobs 6 --methods nurd spark_speculation km_survival tobit iforest
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import pandas as pd
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from method_cost import embedded_jobs  # noqa: E402

from stragglers.prediction.evaluation import method_factory  # noqa: E402
from stragglers.prediction.protocol import OPERATOR, adapt_job  # noqa: E402
from stragglers.prediction.simulate import replay_job  # noqa: E402
from stragglers.prediction.sweep import SweepGrid, outcome_rows  # noqa: E402
from stragglers.settings import EvaluationSettings  # noqa: E402


def cpu(fn) -> tuple[float, object]:
    c0 = time.process_time()
    out = fn()
    return time.process_time() - c0, out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=6, help="embedded jobs spread over sizes")
    ap.add_argument("--methods", nargs="*", default=["nurd", "spark_speculation", "km_survival", "tobit", "iforest"])
    args = ap.parse_args()
    settings = EvaluationSettings(workers=1, **OPERATOR)
    jobs = [adapt_job(j, settings) for j in embedded_jobs(args.jobs)]
    lat = {j.job_id: pd.Series(j.latency, index=j.task_ids) for j in jobs}
    print(f"embedded jobs under the operator's protocol (tasks x checkpoints): "
          + ", ".join(f"{len(j.task_ids)}x{len(j.checkpoints)}" for j in jobs) + "\n")
    print("| method | points | CPU s, one cut (replay + outcome) | CPU s, every cut (replay + outcomes) | ratio |")
    print("|---|---|---|---|---|")
    for m in args.methods:
        factory = method_factory(m, settings)
        replay_job(jobs[0], factory())   # warm up (imports, numba)
        one = every = 0.0
        n_points = 0
        with threadpool_limits(1):       # as the evaluation's workers
            for job in jobs:
                c, r = cpu(lambda: replay_job(job, factory()))
                c2, _ = cpu(lambda: outcome_rows("synthetic", r, lat[job.job_id]))
                one += c + c2
                c, r = cpu(lambda: replay_job(job, SweepGrid(factory)))
                c2, rows = cpu(lambda: outcome_rows("synthetic", r, lat[job.job_id]))
                every += c + c2
                n_points = len(rows)
        print(f"| {m} | {n_points} | {one:.2f} | {every:.2f} | {every / one:.2f} |", flush=True)


if __name__ == "__main__":
    main()
