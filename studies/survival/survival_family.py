"""The survival family against the free rules on one warehouse, operator's protocol.

Replays survival_job and survival_history (``--skip-eval``: use the rows already there) on each
trace of the warehouse, each method in its own evaluation, timed, beside the KM rule's evaluation
timed in the same run (the ratio's baseline: a free rule that fits one Kaplan-Meier curve per
checkpoint); then prints the operator's table rows of the family, the free rules and the
oracle, the family's intervals against each free rule and its sentence (what the report shows), and
the cost curve. The free rules and the oracle must have been evaluated under the operator's protocol
(``baseline_eval`` partitions, README).

    python -m studies.survival.survival_family WAREHOUSE.duckdb [--traces synthetic,google_2011]
        [--methods survival_job,survival_history] [--workers 2] [--skip-eval]
"""

from __future__ import annotations

import time

import duckdb
import pandas as pd

from stragglers.prediction.copies.completion_tables import speculation_jobs, speculation_table
from stragglers.prediction.evaluation.run import evaluate
from stragglers.prediction.methods import FREE_RULES, SURVIVAL_FAMILY
from stragglers.prediction.replay.metrics import table3
from stragglers.settings.protocols import OPERATOR
from stragglers.reports.sections.operator import ORACLE, family_sentences, family_verdict, operator_table
from stragglers.settings import EvaluationSettings
from studies import warehouse_parser


def main() -> None:
    ap = warehouse_parser("python -m studies.survival.survival_family", __doc__)
    ap.add_argument("--traces", default="synthetic,google_2011")
    ap.add_argument("--methods", default=",".join(SURVIVAL_FAMILY))
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--skip-eval", action="store_true")
    a = ap.parse_args()
    s = EvaluationSettings(workers=a.workers, seed=a.seed, **OPERATOR)
    con = duckdb.connect(a.warehouse)
    methods = a.methods.split(",")
    timing = []
    for trace in a.traces.split(","):
        if not a.skip_eval:
            for m in ["km_survival", *methods]:
                t = time.perf_counter()
                out = evaluate(con, trace, [m], s, progress=lambda d, n: None)
                timing.append({"trace": trace, "method": m, "jobs": out.n_jobs, "features": out.feature_set,
                               "seconds": time.perf_counter() - t})
                print(timing[-1], flush=True)
    if timing:
        tm = pd.DataFrame(timing)
        tm["ratio_to_km_rule"] = tm["seconds"] / tm.groupby("trace")["seconds"].transform("first")
        print(tm.to_string(index=False, float_format=lambda v: f"{v:.2f}"))
    keep = [*methods, *FREE_RULES, ORACLE]
    jm = con.execute("SELECT * FROM operator_job_metrics WHERE method IN (SELECT unnest(?))", [keep]).df()
    pred = con.execute("SELECT trace, method, job_id, task_id, flagged_at_s FROM operator_predictions "
                       "WHERE method IN (SELECT unnest(?))", [keep]).df()
    tasks = con.execute("SELECT trace, job_id, task_id, latency_s FROM tasks").df()
    traces = a.traces.split(",")
    jm, pred = jm[jm.trace.isin(traces)], pred[pred.trace.isin(traces)]
    op = operator_table(table3(jm, n_boot=1000, seed=a.seed), speculation_table(tasks, pred, None))
    cols = ["trace", "method", "jct_reduction", "extra_machine_share", "copies_per_job", "f1", "f1_auc", "pareto",
            "beats_free_rules"]
    print(op[cols].to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    verdict = family_verdict(jm, speculation_jobs(tasks, pred), methods=methods, seed=a.seed)
    print(verdict.to_string(index=False, float_format=lambda v: f"{v:+.4f}"))
    print(family_sentences(verdict, op))
    curve = con.execute("SELECT * FROM operator_cost_curve WHERE trace IN (SELECT unnest(?)) ORDER BY trace, method, "
                        "cost_lambda", [traces]).df()
    print(curve.to_string(index=False, float_format=lambda v: f"{v:.4f}"))


if __name__ == "__main__":
    main()
