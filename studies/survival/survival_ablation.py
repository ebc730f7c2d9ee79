"""Where the survival family's gain comes from: survival_history with one ingredient
removed at a time, on every job of each trace, operator's protocol, the configured cost_lambda.

Removed: elapsed time (P(T > tau | x) instead of P(T > tau | T > t, x)), the usage features, the
event features, the history prior (prior_strength = 0, i.e. survival_job). The embedded trace is
read with the feature set 'all' (usage and events), the real excerpt with its events (it has no
task_usage). Each row: JCT reduction, extra machine time (speculative copies, unlimited machines,
mean over 10 relaunch seeds), JCT reduction - lambda x extra, mean F1 over jobs.

    python -m studies.survival.survival_ablation WAREHOUSE.duckdb [--traces synthetic:all,google_2011:events]
        [--workers 2]
"""

from __future__ import annotations

import time
from functools import partial

import duckdb
import pandas as pd

from stragglers.prediction.evaluation.run import load_jobs
from stragglers.prediction.evaluation.history import replay_with_history
from stragglers.prediction.methods import SurvivalHistory
from stragglers.prediction.replay.protocol import adapt_jobs
from stragglers.settings.protocols import OPERATOR
from stragglers.settings import EvaluationSettings
from stragglers.trace_formats import EVENT_FEATURES, GOOGLE_FEATURES
from studies import warehouse_parser

ABLATIONS = {
    "survival_history (all ingredients)": {},
    "without elapsed time": {"condition_on_elapsed": False},
    "without the usage features": {"drop_features": GOOGLE_FEATURES},
    "without the event features": {"drop_features": EVENT_FEATURES},
    "without the history prior (= survival_job)": {"prior_strength": 0.0},
}


def main() -> None:
    ap = warehouse_parser("python -m studies.survival.survival_ablation", __doc__)
    ap.add_argument("--traces", default="synthetic:all,google_2011:events")
    ap.add_argument("--workers", type=int, default=2)
    a = ap.parse_args()
    con = duckdb.connect(a.warehouse, read_only=True)
    rows = []
    for spec in a.traces.split(","):
        trace, feature_set = spec.split(":")
        s = EvaluationSettings(workers=a.workers, feature_set=feature_set, **OPERATOR)
        jobs, _ = load_jobs(con, trace, s)
        jobs = adapt_jobs(con, trace, jobs, s)
        names = set(jobs[0].feature_names)
        for label, params in ABLATIONS.items():
            dropped = set(params.get("drop_features", ()))
            if dropped and not dropped & names:
                rows.append({"trace": trace, "features": feature_set, "ablation": label, "note": "not in this set"})
                continue
            t = time.perf_counter()
            _, curve = replay_with_history(con, trace, jobs, partial(SurvivalHistory, **params), s.cost_lambda,
                                           s.history_min_jobs, seed=s.seed, workers=a.workers)
            c = curve[curve.configured].iloc[0]
            rows.append({"trace": trace, "features": feature_set, "ablation": label, "jobs": int(c.n_jobs),
                         "jct_reduction": c.jct_reduction, "extra_machine_share": c.extra_machine_share,
                         "objective": c.jct_reduction - s.cost_lambda * c.extra_machine_share,
                         "f1_mean": c.f1_mean, "seconds": round(time.perf_counter() - t, 1)})
            print(rows[-1], flush=True)
    print(pd.DataFrame(rows).to_string(index=False, float_format=lambda v: f"{v:.4f}"))


if __name__ == "__main__":
    main()
