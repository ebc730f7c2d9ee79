"""Online evaluation: NURD (+ NURD-NC, GBTR) and one partition per baseline."""


import base64
import io
import json
import resource

import dagster as dg
import matplotlib
import pandas as pd
from dagster_duckdb import DuckDBResource

from stragglers.prediction.engine import ProgressLog
from stragglers.prediction.evaluation import EvaluationOutcome, evaluate
from stragglers.prediction.methods import BASELINES
from assets.resources import NurdSettings

from assets.common import AUTOMATION, md_table, prepare
from assets.warehouse import checkpoint_features, selection_funnel

matplotlib.use("Agg")

BASELINE_PARTITIONS = dg.StaticPartitionsDefinition(sorted(BASELINES))


def summary_table(outcome: EvaluationOutcome) -> pd.DataFrame:
    s = outcome.summary
    rows = []
    for r in s.itertuples(index=False):
        row = {"method": r.method, "jobs": r.n_jobs}
        for m in ("tpr", "fpr", "fnr", "f1"):
            row[m.upper()] = f"{getattr(r, m):.3f} [{getattr(r, m + '_lo'):.3f}, {getattr(r, m + '_hi'):.3f}]"
        row["pooled F1"] = f"{r.pooled_f1:.3f} [{r.pooled_f1_lo:.3f}, {r.pooled_f1_hi:.3f}]"
        rows.append(row)
    return pd.DataFrame(rows)


def f1_plot(outcome: EvaluationOutcome) -> str:
    """Per-job F1 of each method, as a PNG data URL for Markdown metadata."""
    import matplotlib.pyplot as plt

    jm = outcome.frames["job_metrics"]
    methods = sorted(jm["method"].unique())
    fig, ax = plt.subplots(figsize=(7, 3.2))
    ax.boxplot([jm.loc[jm.method == m, "f1"] for m in methods], tick_labels=methods, showmeans=True)
    ax.set_ylabel("F1 per job")
    ax.set_ylim(-0.02, 1.02)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90)
    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()


def _run(context: dg.AssetExecutionContext, nurd: NurdSettings, duckdb: DuckDBResource,
         methods: list[str]) -> EvaluationOutcome:
    """Evaluate ``methods`` on the engine the settings choose, logging progress every ~10 s."""
    engine = nurd.engine()
    context.log.info(f"evaluating {methods} on {nurd.trace}: "
                     f"{'Dask scheduler ' + engine.dask_address if engine.dask_address else 'local processes'}, "
                     f"batches of {engine.batch_jobs} jobs via {engine.exchange_dir}")
    with duckdb.get_connection() as con:
        prepare(con, nurd)
        return evaluate(con, nurd.trace, methods, nurd.evaluation(), progress=ProgressLog(context.log.info, methods),
                        engine=engine, exchange=engine.exchange_dir)


def _metadata(outcome: EvaluationOutcome, nurd: NurdSettings) -> dict:
    fallbacks = outcome.frames["method_fallbacks"]
    jm = outcome.frames["job_metrics"]
    per_job = jm.groupby("method")["seconds"].mean().round(3).to_dict()
    meta = {
        "metrics": md_table(summary_table(outcome)),
        "f1_per_job": dg.MetadataValue.md(f"![F1 per job]({f1_plot(outcome)})"),
        "n_jobs": outcome.n_jobs,
        "n_jobs_skipped": len(outcome.skipped),
        "fallback_checkpoints": len(fallbacks),
        "fallback_jobs": int(fallbacks["job_id"].nunique()) if len(fallbacks) else 0,
        "seconds": round(outcome.seconds, 2),
        "engine": outcome.replay.engine if outcome.replay else "",
        "batches": outcome.replay.n_batches if outcome.replay else 0,
        "jobs_per_second": round(outcome.n_jobs / max(outcome.replay.seconds, 1e-9), 3) if outcome.replay else 0.0,
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "seconds_per_job": dg.MetadataValue.json(per_job),
        "settings": dg.MetadataValue.json(nurd.evaluation().as_dict() | {"trace": nurd.trace,
                                                                           "feature_mode": nurd.feature_mode}),
        "hyperparameters": dg.MetadataValue.json(json.loads(json.dumps(outcome.hyperparameters, default=str))),
    }
    if len(fallbacks):
        reasons = fallbacks.groupby(["method", "reason"]).size().reset_index(name="checkpoints")
        meta["fallback_reasons"] = md_table(reasons.sort_values("checkpoints", ascending=False))
    if len(outcome.skipped):
        meta["skipped_jobs"] = md_table(outcome.skipped)
    return meta


@dg.asset(deps=[checkpoint_features, selection_funnel], group_name="evaluation", kinds={"python", "duckdb"},
          automation_condition=AUTOMATION,
          description="NURD on every selected job of the configured trace, replayed online: at each "
                      "checkpoint from t0 (a first share of the job's tasks has finished, setting "
                      "`initial_fraction`) to tau (its straggler threshold: the `quantile` of its task "
                      "latencies) a method sees only the tasks finished by then and the "
                      "features observed so far, and flags running tasks as stragglers. NURD's ablations "
                      "NURD-NC and GBTR share its fitted models. Writes `predictions`, `job_metrics` (TPR, "
                      "FPR, FNR, F1 per job), `f1_over_time`, `method_fallbacks`, `evaluation_runs`.")
def nurd_eval(context: dg.AssetExecutionContext, nurd: NurdSettings, duckdb: DuckDBResource) -> dg.MaterializeResult:
    outcome = _run(context, nurd, duckdb, ["nurd"])
    return dg.MaterializeResult(metadata=_metadata(outcome, nurd))


@dg.asset(deps=[checkpoint_features], group_name="evaluation", kinds={"python", "duckdb"},
          partitions_def=BASELINE_PARTITIONS, backfill_policy=dg.BackfillPolicy.single_run(),
          automation_condition=AUTOMATION,
          description="One baseline of the paper's Table 3 per partition, through the same online replay. "
                      "A backfill of several partitions runs in one run (single-run backfill policy).")
def baseline_eval(context: dg.AssetExecutionContext, nurd: NurdSettings,
                  duckdb: DuckDBResource) -> dg.MaterializeResult:
    methods = sorted(context.partition_keys)
    # all requested methods in one replay: jobs are loaded once and spread over the workers
    outcome = _run(context, nurd, duckdb, methods)
    metadata = _metadata(outcome, nurd)
    return dg.MaterializeResult(metadata=metadata)
