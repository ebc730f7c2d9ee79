"""Choose survival_history's prior strength on a temporal development split (issue 27).

Per trace, the development jobs are the earlier half by cutoff (a job's first SCHEDULE + t0);
only they are replayed, each with the prior and the cost-aware threshold learned from the jobs
that ended before it, under the operator's protocol. Per prior strength n0 (0 = no prior:
survival_job) it prints the development jobs' JCT reduction, extra machine time and the objective
JCT reduction - lambda x extra machine time (lambda = the setting cost_lambda). The later half is
never read. docs/EVALUATION.md records the table and the choice.

    python benchmarks/survival_tuning.py WAREHOUSE.duckdb [--traces synthetic,google_2011]
        [--strengths 0,2,5,10,20,50,100] [--dev-fraction 0.5] [--workers 2]
"""

from __future__ import annotations

import argparse
import time
from functools import partial

import duckdb
import numpy as np
import pandas as pd

from stragglers.prediction.evaluation import load_jobs
from stragglers.prediction.history import (AttachHistory, CostAwareSelection, ThresholdGrid, build_histories,
                                           job_times)
from stragglers.prediction.methods import SurvivalHistory
from stragglers.prediction.protocol import OPERATOR, adapt_jobs
from stragglers.prediction.simulate import replay_jobs
from stragglers.settings import EvaluationSettings


def development_jobs(con: duckdb.DuckDBPyConnection, trace: str, job_ids, fraction: float) -> set[int]:
    """The earlier ``fraction`` of ``job_ids`` by cutoff (ties by job id)."""
    t = job_times(con, trace)
    t = t[t.job_id.isin(list(job_ids))].sort_values(["cutoff_us", "job_id"])
    return set(t.job_id.astype(int).iloc[: int(round(fraction * len(t)))])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("warehouse")
    ap.add_argument("--traces", default="synthetic,google_2011")
    ap.add_argument("--strengths", default="0,2,5,10,20,50,100")
    ap.add_argument("--dev-fraction", type=float, default=0.5)
    ap.add_argument("--workers", type=int, default=2)
    a = ap.parse_args()
    s = EvaluationSettings(workers=a.workers, **OPERATOR)
    con = duckdb.connect(a.warehouse, read_only=True)
    rows = []
    for trace in a.traces.split(","):
        jobs, _ = load_jobs(con, trace, s)
        jobs = adapt_jobs(con, trace, jobs, s)
        dev = development_jobs(con, trace, [j.job_id for j in jobs], a.dev_fraction)
        jobs = [j for j in jobs if j.job_id in dev]
        feats = jobs[0].feature_names
        histories = build_histories(con, trace, feats, sorted(dev), s.history_min_jobs)
        attach = AttachHistory(histories)
        jobs = [attach(j) for j in jobs]
        lat = con.execute("SELECT job_id, task_id, latency_s FROM tasks WHERE trace = ?", [trace]).df()
        latency = {int(j): g.set_index("task_id")["latency_s"] for j, g in lat.groupby("job_id")}
        for n0 in [float(x) for x in a.strengths.split(",")]:
            t = time.perf_counter()
            sel = CostAwareSelection(trace, histories, latency, s.cost_lambda, s.history_min_jobs,
                                     {"survival_history": 0.5})
            for r in replay_jobs(jobs, [partial(ThresholdGrid, partial(SurvivalHistory, prior_strength=n0))],
                                 seed=s.seed, workers=a.workers):
                sel.add(r)
            _, curve, _ = sel.finish()
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
