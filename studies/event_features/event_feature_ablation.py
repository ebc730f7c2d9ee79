"""The event-feature ablation of docs/EVENT_FEATURES.md: methods on a trace's event features with
groups of features removed, under the paper's protocol, every method at its defaults.

Sets: all 32; without the clock features (elapsed, since_schedule, job_elapsed_rel: a finished
task's value is its latency, the target); only the features that do not move with the row's time
(the task's static ones, machine capacity and platform).

    python -m studies.event_features.event_feature_ablation WAREHOUSE.duckdb [--trace google_2011]
        [--methods nurd,pu_en,iforest,tobit] [--seed 0] [--workers 2]
"""

from __future__ import annotations

import dataclasses

import duckdb

from stragglers.prediction.evaluation.run import load_jobs, method_factory
from stragglers.prediction.replay.metrics import table3
from stragglers.prediction.replay.workers import replay_jobs
from stragglers.prediction.replay.simulate import results_frames
from stragglers.settings import EvaluationSettings
from stragglers.trace_formats import CLOCK_FEATURES, EVENT_FEATURES
from studies import warehouse_parser

CLOCK = CLOCK_FEATURES
MOVING = CLOCK + ("machine_tasks", "machine_cpu_load", "machine_memory_load", "machine_bad_events",
                  "machine_history_tasks", "machine_slowness", "job_finished_share", "job_running", "job_p50",
                  "job_p75")
SETS = {"all 32": (), "without the clock features": CLOCK, "only features fixed in time": MOVING}


def main() -> None:
    ap = warehouse_parser("python -m studies.event_features.event_feature_ablation", __doc__)
    ap.add_argument("--trace", default="google_2011")
    ap.add_argument("--methods", default="nurd,pu_en,iforest,tobit")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    con = duckdb.connect(args.warehouse, read_only=True)
    settings = EvaluationSettings(feature_set="events", workers=args.workers, seed=args.seed, n_boot=200)
    jobs, _ = load_jobs(con, args.trace, settings)
    factories = [method_factory(m, settings) for m in args.methods.split(",")]
    for name, dropped in SETS.items():
        keep = [i for i, f in enumerate(EVENT_FEATURES) if f not in dropped]
        sliced = [dataclasses.replace(j, X=j.X[:, :, keep], feature_names=tuple(EVENT_FEATURES[i] for i in keep))
                  for j in jobs]
        results = replay_jobs(sliced, factories, seed=args.seed, workers=args.workers)
        summary = table3(results_frames(results, args.trace)["job_metrics"], n_boot=200, seed=args.seed)
        print(f"\n{name} ({len(keep)} features, {len(jobs)} jobs)")
        print(summary[["method", "n_jobs", "tpr", "fpr", "f1"]].round(3).to_markdown(index=False))


if __name__ == "__main__":
    main()
