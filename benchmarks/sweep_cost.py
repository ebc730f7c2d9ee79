"""Cost of the operator's sweep: one replay scoring every cut of a method's flag against one replay
at its own cut, each followed by its points' outcomes through the replay engine.

The embedded trace's jobs under the operator's protocol (``load_jobs`` with its settings, the warehouse
``method_cost.embedded_warehouse`` builds, ``--jobs`` of them spread over sizes), each also as the
engine's job (``engine.jobs.copy_jobs``: the operator's checks, the job's copy draws). Per method and
job, interleaved in the same run (the machine is shared: only the ratio means something), the CPU
seconds of

- one cut: the plain replay (``replay_job``), then its own points through the engine under every cap
  of the sweep (``sweep.CAPS``: each budget, Hadoop's caps, none): ``engine.replay.outcome_rows`` of
  its policies at the point ``default`` (Spark's rule: its own setting, not its grid);
- every cut: the sweep's replay (``SweepGrid``), then every point through the engine under every cap
  (``sweep.job_rows``, what the evaluation stores).

Each side gets its own copy of the engine's job, so each computes the job's ``CheckState`` once, as
the evaluation does. Prints a Markdown table: the points of the sweep per job, the replay's and the
engine's CPU seconds of each side, and the ratio every cut / one cut.

    python -m benchmarks.sweep_cost --jobs 6 --methods nurd spark_speculation km_survival tobit iforest
"""

from __future__ import annotations

import argparse
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from threadpoolctl import threadpool_limits

from benchmarks.method_cost import embedded_warehouse, some_jobs
from stragglers.prediction.engine.jobs import copy_jobs
from stragglers.prediction.engine.policies import DEFAULT_POINT
from stragglers.prediction.engine.replay import outcome_rows
from stragglers.prediction.evaluation.run import load_jobs, method_factory
from stragglers.prediction.methods import METHODS
from stragglers.prediction.replay.protocol import adapt_jobs
from stragglers.settings.protocols import OPERATOR
from stragglers.prediction.replay.simulate import replay_job
from stragglers.prediction.verdicts.sweep import CAPS, SweepGrid, job_rows, policies_of
from stragglers.settings import EvaluationSettings

TRACE = "synthetic"
METHODS_MEASURED = ["nurd", "spark_speculation", "km_survival", "tobit", "iforest"]


def cpu(fn) -> tuple[float, object]:
    c0 = time.process_time()
    out = fn()
    return time.process_time() - c0, out


def own_rows(result, job):
    """The replay's own points (``default``; the oracle's one) through the engine under every cap."""
    policies = policies_of(result, job)
    return outcome_rows(job, [p for p in policies if p.point == DEFAULT_POINT] or policies, CAPS)


def measure(method: str, jobs, engine_jobs, settings: EvaluationSettings) -> dict:
    """CPU seconds of each side (replay, engine), summed over ``jobs``, and the sweep's points per job."""
    factory = method_factory(method, settings)
    first = jobs[0]
    job_rows(TRACE, replay_job(first, SweepGrid(factory)), engine_jobs[int(first.job_id)])   # warm up (numba)
    sides = {"one": [0.0, 0.0], "every": [0.0, 0.0]}
    points = []
    with threadpool_limits(1):       # as the evaluation's workers
        for job in jobs:
            engine_job = engine_jobs[int(job.job_id)]
            c, r = cpu(lambda: replay_job(job, factory()))
            e, _ = cpu(lambda: own_rows(r, replace(engine_job)))
            sides["one"][0] += c
            sides["one"][1] += e
            c, r = cpu(lambda: replay_job(job, SweepGrid(factory)))
            e, rows = cpu(lambda: job_rows(TRACE, r, replace(engine_job)))
            sides["every"][0] += c
            sides["every"][1] += e
            points.append(rows.groupby(["method", "point"]).ngroups)
    return {"sides": sides, "points": points}


def main() -> None:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.sweep_cost",
                                 description=" ".join(__doc__.split("\n\n")[0].split()))
    ap.add_argument("--jobs", type=int, default=6, help="embedded jobs spread over sizes (default %(default)s)")
    ap.add_argument("--methods", nargs="*", default=METHODS_MEASURED,
                    help=f"the methods measured (default: {' '.join(METHODS_MEASURED)})")
    args = ap.parse_args()
    unknown = [m for m in args.methods if m not in METHODS]
    if unknown:
        ap.error(f"unknown method {unknown[0]!r} (one of {', '.join(sorted(METHODS))})")
    if args.jobs < 1:
        ap.error("--jobs must be at least 1")
    settings = EvaluationSettings(workers=1, **OPERATOR)
    with tempfile.TemporaryDirectory(prefix="nurd-sweep-cost-") as tmp:
        con = embedded_warehouse(Path(tmp))
        jobs = some_jobs(adapt_jobs(con, TRACE, load_jobs(con, TRACE, settings)[0], settings), args.jobs)
        engine_jobs = copy_jobs(con, TRACE, settings.copy_keeps, [int(j.job_id) for j in jobs])
        con.close()
    print("embedded jobs under the operator's protocol (tasks x checkpoints): "
          + ", ".join(f"{len(j.task_ids)}x{len(j.checkpoints)}" for j in jobs)
          + f"; every point under {len(CAPS)} caps ({', '.join(c.label for c in CAPS)}), "
          f"{len(next(iter(engine_jobs.values())).copies)} copy draws per job\n")
    print("| method | points per job | one cut: replay + engine, CPU s | every cut: replay + engine, CPU s "
          "| ratio every / one |")
    print("|---|---|---|---|---|")
    for m in args.methods:
        res = measure(m, jobs, engine_jobs, settings)
        (r1, e1), (r2, e2) = res["sides"]["one"], res["sides"]["every"]
        pts = res["points"]
        print(f"| {m} | {min(pts)}-{max(pts)} | {r1:.2f} + {e1:.2f} = {r1 + e1:.2f} | {r2:.2f} + {e2:.2f} = "
              f"{r2 + e2:.2f} | {(r2 + e2) / (r1 + e1):.2f} |", flush=True)


if __name__ == "__main__":
    main()
