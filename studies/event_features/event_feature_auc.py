"""How much each event feature alone separates stragglers on a trace: the table of
docs/EVENT_FEATURES.md.

For each feature of the `events` set, the pooled ROC AUC of its value (as the methods see it:
checkpoint_features, min-max normalized per job and checkpoint) for "this task is a straggler"
(latency above the job's tau), over the tasks still running at the job's first checkpoint t0
(the ones a method must judge first), with a 95% bootstrap interval over jobs (--boot resamples,
--seed). An AUC below 0.5 means larger values go with shorter tasks. A feature constant within
each job (e.g. the recurring ones) has AUC 0.5 here by construction: per-job methods cannot use it.

    python -m studies.event_features.event_feature_auc WAREHOUSE.duckdb [--trace google_2011] [--boot 200] [--seed 0]
"""

from __future__ import annotations

import duckdb
import numpy as np
from sklearn.metrics import roc_auc_score

from stragglers.trace_formats import EVENT_FEATURES
from studies import warehouse_parser


def auc_table(con: duckdb.DuckDBPyConnection, trace: str, n_boot: int, seed: int) -> list[dict]:
    df = con.execute(f"""
        SELECT f.job_id, t.is_straggler, {', '.join('f.' + c for c in EVENT_FEATURES)}
        FROM checkpoint_features f
        JOIN tasks t ON t.trace = f.trace AND t.job_id = f.job_id AND t.task_id = f.task_id
        JOIN job_checkpoints c ON c.trace = f.trace AND c.job_id = f.job_id AND c.k = f.k
        WHERE f.trace = ? AND f.k = 0 AND t.latency_s > c.checkpoint_s""", [trace]).df()
    jobs = df["job_id"].unique()
    rows_of = {j: np.flatnonzero(df["job_id"].to_numpy() == j) for j in jobs}
    y = df["is_straggler"].to_numpy(bool)
    rng = np.random.default_rng(seed)
    samples = [np.concatenate([rows_of[j] for j in rng.choice(jobs, len(jobs))]) for _ in range(n_boot)]
    out = []
    for name in EVENT_FEATURES:
        x = df[name].to_numpy(float)
        auc = roc_auc_score(y, x) if x.std() > 0 else 0.5
        boot = [roc_auc_score(y[i], x[i]) if x[i].std() > 0 and 0 < y[i].sum() < len(i) else 0.5 for i in samples]
        out.append({"feature": name, "auc": auc, "lo": float(np.percentile(boot, 2.5)),
                    "hi": float(np.percentile(boot, 97.5)), "constant": bool(x.std() == 0)})
    print(f"{trace}: {len(jobs)} jobs, {len(df):,} tasks running at t0, {y.sum():,} of them stragglers\n")
    return out


def main() -> None:
    ap = warehouse_parser("python -m studies.event_features.event_feature_auc", __doc__)
    ap.add_argument("--trace", default="google_2011")
    ap.add_argument("--boot", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    con = duckdb.connect(args.warehouse, read_only=True)
    table = auc_table(con, args.trace, args.boot, args.seed)
    print("| feature | AUC at t0 [95% CI over jobs] |\n|---|---|")
    for r in table:
        note = " (constant here)" if r["constant"] else ""
        print(f"| {r['feature']} | {r['auc']:.3f} [{r['lo']:.3f}, {r['hi']:.3f}]{note} |")


if __name__ == "__main__":
    main()
