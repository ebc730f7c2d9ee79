"""Online evaluation: NURD (+ NURD-NC, GBTR) and one partition per baseline."""


import json

import dagster as dg
import matplotlib
import pandas as pd
from dagster_duckdb import DuckDBResource

from stragglers.prediction.engine import ProgressLog, peak_rss_mb
from stragglers.prediction.evaluation import (
    EvaluationOutcome, evaluate, method_factory, replace_table, resolve_feature_set, result_rows,
)
from stragglers.prediction.ablation import nurd_sensitivity as run_sensitivity
from stragglers.prediction.ablation import protocol_ablation as run_ablation
from stragglers.prediction.clock import grid_tables
from stragglers.prediction.protocol import both_views, is_operator
from stragglers.settings import EvaluationSettings
from stragglers.prediction.methods import BASELINES
from stragglers.warehouse import ledger, storage
from stragglers.prediction.methods import REFERENCE_RULES
from stragglers.warehouse.staged_parts import usage_absent_reason
from .resources import NurdSettings

from .common import AUTOMATION, md_image, md_table, prepare
from .warehouse import checkpoint_features, selection_funnel

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


def f1_plot(outcome: EvaluationOutcome) -> dg.MetadataValue:
    """Per-job F1 of each method, embedded in Markdown metadata."""
    import matplotlib.pyplot as plt

    jm = outcome.frames["job_metrics"]
    methods = sorted(jm["method"].unique())
    fig, ax = plt.subplots(figsize=(7, 3.2))
    ax.boxplot([jm.loc[jm.method == m, "f1"] for m in methods], tick_labels=methods, showmeans=True)
    ax.set_ylabel("F1 per job")
    ax.set_ylim(-0.02, 1.02)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    return md_image(fig, "F1 per job")


def _run(context: dg.AssetExecutionContext, nurd: NurdSettings, duckdb: DuckDBResource,
         methods: list[str], evaluation: EvaluationSettings) -> EvaluationOutcome:
    """Evaluate ``methods`` on the engine the settings choose, logging progress every ~10 s."""
    engine = nurd.engine()
    context.log.info(f"evaluating {methods} on {nurd.trace} ({_view(evaluation)}): "
                     f"{'Dask scheduler ' + engine.dask_address if engine.dask_address else 'local processes'}, "
                     f"batches of {engine.batch_jobs} jobs via {engine.exchange_dir}")
    with duckdb.get_connection() as con:
        prepare(con, nurd)
        return evaluate(con, nurd.trace, methods, evaluation, progress=ProgressLog(context.log.info, methods),
                        engine=engine, exchange=engine.exchange_dir)


def _methods_for_features(context, nurd: NurdSettings, duckdb: DuckDBResource,
                          methods=("nurd",)) -> tuple[list[str], dg.MaterializeResult | None, dict]:
    """The methods that run on the configured feature set (NURD_FEATURE_SET, 'auto' resolved on the
    trace). Only usage features on a trace without usage (a partial mirror with feature_set=usage)
    leave the feature-based methods nothing to learn from: then only the time-only reference rules
    run. Returns the methods to run, when none is left a green empty materialization saying why,
    and the metadata saying which features the methods saw (and what was skipped)."""
    with duckdb.get_connection() as con:
        feature_set, why = resolve_feature_set(con, nurd.trace, nurd.feature_set)
        reason = usage_absent_reason(con, nurd.trace)
    note = {"features": dg.MetadataValue.md(f"**{feature_set}**: {why}")}
    if reason is None or feature_set != "usage":
        return list(methods), None, note
    keep = [m for m in methods if m in REFERENCE_RULES]
    dropped = [m for m in methods if m not in keep]
    if dropped:
        context.log.warning(f"skipped {dropped}: {reason}")
    else:
        context.log.info(f"{reason}; {keep} are time-only rules and run")
    if keep:
        note["usage"] = dg.MetadataValue.md(f"{reason}. Run here: {', '.join(keep)} (time-only rules)."
                                            + (f" Skipped: {', '.join(dropped)}." if dropped else ""))
        return keep, None, note
    return [], dg.MaterializeResult(metadata={"skipped": dg.MetadataValue.md(reason), "n_jobs": 0} | note), {}


def _metadata(outcome: EvaluationOutcome, nurd: NurdSettings) -> dict:
    fallbacks = outcome.frames["method_fallbacks"]
    jm = outcome.frames["job_metrics"]
    per_job = jm.groupby("method")["seconds"].mean().round(3).to_dict()
    meta = {
        "metrics": md_table(summary_table(outcome)),
        "f1_per_job": f1_plot(outcome),
        "n_jobs": outcome.n_jobs,
        "n_jobs_skipped": len(outcome.skipped),
        "fallback_checkpoints": len(fallbacks),
        "fallback_jobs": int(fallbacks["job_id"].nunique()) if len(fallbacks) else 0,
        "seconds": round(outcome.seconds, 2),
        "engine": outcome.replay.engine if outcome.replay else "",
        "batches": outcome.replay.n_batches if outcome.replay else 0,
        "jobs_per_second": round(outcome.n_jobs / max(outcome.replay.seconds, 1e-9), 3) if outcome.replay else 0.0,
        "peak_rss_mb": round(peak_rss_mb(), 1),
        "seconds_per_job": dg.MetadataValue.json(per_job),
        "settings": dg.MetadataValue.json(nurd.evaluation().as_dict() | {
            "trace": nurd.trace, "feature_mode": nurd.selection().feature_mode, "protocol": nurd.protocol,
            "feature_set_resolved": outcome.feature_set}),
        "hyperparameters": dg.MetadataValue.json(json.loads(json.dumps(outcome.hyperparameters, default=str))),
    }
    if len(fallbacks):
        reasons = fallbacks.groupby(["method", "reason"]).size().reset_index(name="checkpoints")
        meta["fallback_reasons"] = md_table(reasons.sort_values("checkpoints", ascending=False))
    if len(outcome.skipped):
        meta["skipped_jobs"] = md_table(outcome.skipped)
    return meta


def _view(evaluation: EvaluationSettings) -> str:
    return "operator's protocol" if is_operator(evaluation) else "paper's protocol"


def _evaluation_inputs(con, nurd: NurdSettings, method: str, evaluation: EvaluationSettings) -> str:
    """What an evaluation of ``method`` is computed from: the features (their own inputs digest),
    the evaluation settings, the method's name and its hyperparameters (a changed default in the
    code, e.g. NURD's boosting rounds, re-runs the evaluation instead of keeping stale rows)."""
    settings = {k: v for k, v in evaluation.as_dict().items() if k != "workers"}  # results do not depend on it
    hyperparameters = method_factory(method, evaluation)().hyperparameters()
    return ledger.digest([ledger.recorded_inputs(con, grid_tables(evaluation)[1], nurd.trace), settings, method,
                      hyperparameters])


def _evaluate_unless_current(context, nurd: NurdSettings, duckdb: DuckDBResource,
                             methods: list[str]) -> tuple[dict, str]:
    """Evaluate ``methods`` under the configured protocol and its other view (``both_views``: the
    paper's and the operator's), each unless it was last evaluated on the same features with the
    same settings (then its rows would be identical); returns (metadata, data version). The
    metadata is the configured view's, with the other view's table under ``metrics_<view>``."""
    versions, meta = [], {}
    for i, evaluation in enumerate(both_views(nurd.evaluation())):
        key = "operator_evaluation" if is_operator(evaluation) else "evaluation"
        with duckdb.get_connection() as con:
            wanted = {m: _evaluation_inputs(con, nurd, m, evaluation) for m in methods}
            current = all(ledger.recorded_inputs(con, f"{key}:{m}", nurd.trace) == v for m, v in wanted.items())
            current = current and ledger.recorded_inputs(con, "checkpoint_features", nurd.trace) is not None
            # results, not records: the rows the record counted must still be there
            current = current and all(
                (ledger.recorded_settings(con, f"{key}:{m}", nurd.trace) or {}).get("result_rows")
                == result_rows(con, nurd.trace, m, evaluation) for m in methods)
        versions.append(sorted(wanted.items()))
        if current:
            context.log.info(f"{methods} ({_view(evaluation)}): up to date (same features and settings as the "
                             "last evaluation): not re-run")
            if i == 0:
                meta = {"rebuilt": False, "methods": ", ".join(methods)}
            continue
        outcome = _run(context, nurd, duckdb, methods, evaluation)
        with duckdb.get_connection() as con, storage.transaction(con):
            # recorded after the results' own transaction: a crash in between only re-runs the evaluation
            for m, v in wanted.items():
                ledger.record_settings(con, f"{key}:{m}", nurd.trace, evaluation.as_dict() | {
                    "result_rows": result_rows(con, nurd.trace, m, evaluation)}, v)
        if i == 0:
            meta = _metadata(outcome, nurd) | {"rebuilt": True}
        else:
            meta[f"metrics_{'operator' if is_operator(evaluation) else 'paper'}"] = md_table(summary_table(outcome))
    return meta, ledger.digest(versions)


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
    _, skipped, features_note = _methods_for_features(context, nurd, duckdb)
    if skipped is not None:
        return skipped
    metadata, version = _evaluate_unless_current(context, nurd, duckdb, ["nurd"])
    return dg.MaterializeResult(metadata=metadata | features_note, data_version=dg.DataVersion(version))


@dg.asset(deps=[checkpoint_features], group_name="evaluation", kinds={"python", "duckdb"},
          partitions_def=BASELINE_PARTITIONS, backfill_policy=dg.BackfillPolicy.single_run(),
          automation_condition=AUTOMATION,
          description="One baseline of the paper's Table 3 per partition, through the same online replay. "
                      "A backfill of several partitions runs in one run (single-run backfill policy).")
def baseline_eval(context: dg.AssetExecutionContext, nurd: NurdSettings,
                  duckdb: DuckDBResource) -> dg.MaterializeResult:
    methods = sorted(context.partition_keys)
    methods, skipped, features_note = _methods_for_features(context, nurd, duckdb, methods)
    if skipped is not None:
        return skipped
    # all requested methods in one replay: jobs are loaded once and spread over the workers
    metadata, version = _evaluate_unless_current(context, nurd, duckdb, methods)
    return dg.MaterializeResult(metadata=metadata | features_note, data_version=dg.DataVersion(version))


def _best_baseline(con, trace: str) -> str:
    """The baseline with the best mean F1 on ``trace`` in job_metrics (PU-EN if none was evaluated)."""
    models = [m for m, cls in BASELINES.items() if cls.band == "baseline"]
    row = con.execute("""SELECT method FROM job_metrics WHERE trace = ? AND method IN (SELECT unnest(?))
                         GROUP BY method ORDER BY avg(f1) DESC, method LIMIT 1""", [trace, models]).fetchone()
    return row[0] if row else "pu_en"


@dg.asset(deps=[nurd_eval, baseline_eval], group_name="evaluation", kinds={"python", "duckdb"},
          description="Where the paper's numbers come from: NURD (+ NURD-NC, GBTR), the best baseline and the "
                      "reference rules under the authors' protocol (their released code), the preset with each "
                      "setting switched back one at a time, and this pipeline's protocol. Writes "
                      "`protocol_ablation` (means over jobs, the settings of every row). Costly: "
                      "`ablation_max_jobs` limits the jobs (recorded in each row).")
def protocol_ablation(context: dg.AssetExecutionContext, nurd: NurdSettings,
                      duckdb: DuckDBResource) -> dg.MaterializeResult:
    with duckdb.get_connection() as con:
        prepare(con, nurd)
        best = _best_baseline(con, nurd.trace)
        context.log.info(f"protocol ablation on {nurd.trace}, best baseline {best}")
        # the ablation attributes the paper's numbers: under NURD_PROTOCOL=operator, its paper view
        evaluation = nurd.evaluation()
        paper = both_views(evaluation)[1] if is_operator(evaluation) else evaluation
        table = run_ablation(con, nurd.trace, paper, nurd.selection(), best,
                             max_jobs=nurd.ablation_max_jobs or None,
                             progress=lambda label: context.log.info(f"variant: {label}"))
        replace_table(con, "protocol_ablation", table, nurd.trace)
    view = table.pivot_table(index="variant", columns="method", values="f1", sort=False).reset_index()
    return dg.MaterializeResult(metadata={"f1_by_variant": md_table(view, max_rows=100),
                                          "best_baseline": best, "rows": len(table)})


@dg.asset(deps=[checkpoint_features], group_name="evaluation", kinds={"python", "duckdb"},
          description="NURD's F1 and f1_auc for alpha in {0, 0.25, 0.5} x straggler quantile in "
                      "{0.7, 0.8, 0.9, 0.95}, beside the reference rules, under the configured protocol. "
                      "Writes `nurd_sensitivity`. `ablation_max_jobs` limits the jobs (recorded).")
def nurd_sensitivity(context: dg.AssetExecutionContext, nurd: NurdSettings,
                     duckdb: DuckDBResource) -> dg.MaterializeResult:
    with duckdb.get_connection() as con:
        prepare(con, nurd)
        evaluation, selection = nurd.evaluation(), nurd.selection()
        table = run_sensitivity(con, nurd.trace, evaluation, selection, max_jobs=nurd.ablation_max_jobs or None,
                                progress=lambda label: context.log.info(label))
        table["settings"] = json.dumps(evaluation.as_dict() | {"feature_mode": selection.feature_mode,
                                                               "protocol": nurd.protocol,
                                                               "max_jobs": nurd.ablation_max_jobs or None})
        replace_table(con, "nurd_sensitivity", table, nurd.trace)
    view = table.pivot_table(index=["method", "alpha"], columns="quantile", values="f1", dropna=False).reset_index()
    return dg.MaterializeResult(metadata={"f1": md_table(view, max_rows=100), "rows": len(table)})
