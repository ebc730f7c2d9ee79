"""Choose survival_history's prior strength on a temporal development split.

Per trace, the development jobs are the earlier half by cutoff (a job's first SCHEDULE + t0);
only they are replayed, each with the prior and the cost-aware threshold learned from the jobs
that ended before it, under the operator's protocol. Per prior strength n0 (0 = no prior:
survival_job) it prints the development jobs' JCT reduction, extra machine time and the objective
JCT reduction - lambda x extra machine time (lambda = the setting cost_lambda). The later half is
never read. docs/EVALUATION.md records the choice ("The survival family").

    python -m studies.survival.survival_tuning WAREHOUSE.duckdb [--traces synthetic,google_2011]
        [--strengths 0,2,5,10,20,50,100] [--dev-fraction 0.5] [--workers 2]
"""

from __future__ import annotations

import time
from functools import partial

import duckdb
import pandas as pd

from stragglers.prediction.evaluation.run import load_jobs
from stragglers.prediction.replay.earlier import job_times
from stragglers.prediction.evaluation.history import replay_with_history
from stragglers.prediction.methods import SurvivalHistory
from stragglers.prediction.replay.protocol import adapt_jobs
from stragglers.settings.protocols import OPERATOR
from stragglers.settings import EvaluationSettings
from studies import warehouse_parser


def development_jobs(con: duckdb.DuckDBPyConnection, trace: str, job_ids, fraction: float) -> set[int]:
    """The earlier ``fraction`` of ``job_ids`` by cutoff (ties by job id)."""
    t = job_times(con, trace)
    t = t[t.job_id.isin(list(job_ids))].sort_values(["cutoff_us", "job_id"])
    return set(t.job_id.astype(int).iloc[: int(round(fraction * len(t)))])


def main() -> None:
    ap = warehouse_parser("python -m studies.survival.survival_tuning", __doc__)
    ap.add_argument("--traces", default="synthetic,google_2011")
    ap.add_argument("--strengths", default="0,2,5,10,20,50,100", help="prior strengths n0 to compare")
    ap.add_argument("--dev-fraction", type=float, default=0.5, help="the earlier share of jobs replayed")
    ap.add_argument("--workers", type=int, default=2)
    a = ap.parse_args()
    s = EvaluationSettings(workers=a.workers, **OPERATOR)
    con = duckdb.connect(a.warehouse, read_only=True)
    rows = []
    for trace in a.traces.split(","):
        jobs = adapt_jobs(con, trace, load_jobs(con, trace, s)[0], s)
        dev = development_jobs(con, trace, [j.job_id for j in jobs], a.dev_fraction)
        jobs = [j for j in jobs if j.job_id in dev]
        for n0 in [float(x) for x in a.strengths.split(",")]:
            t = time.perf_counter()
            _, curve = replay_with_history(con, trace, jobs, partial(SurvivalHistory, prior_strength=n0),
                                           s.cost_lambda, s.history_min_jobs, seed=s.seed, workers=a.workers)
            c = curve[curve.configured].iloc[0]
            rows.append({"trace": trace, "dev_jobs": len(jobs), "prior_strength": n0,
                         "jct_reduction": c.jct_reduction, "extra_machine_share": c.extra_machine_share,
                         "objective": c.jct_reduction - s.cost_lambda * c.extra_machine_share,
                         "f1_mean": c.f1_mean, "seconds": round(time.perf_counter() - t, 1)})
            print(rows[-1], flush=True)
    df = pd.DataFrame(rows)
    df["rank"] = df.groupby("trace")["objective"].rank(ascending=False)
    print(df.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    mean_rank = df.groupby("prior_strength")["rank"].mean()
    print("mean rank over traces:", mean_rank.to_dict(), "-> chosen", float(mean_rank.idxmin()))


if __name__ == "__main__":
    main()
