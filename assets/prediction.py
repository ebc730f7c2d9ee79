"""Online evaluation: NURD (+ NURD-NC, GBTR) and one partition per baseline."""


import json

import dagster as dg
import matplotlib
from dagster_duckdb import DuckDBResource

from stragglers.prediction.evaluation.run import evaluate_unless_current, not_applicable_notes, resolve_feature_set
from stragglers.prediction.evaluation.ablation import ablation_inputs, sensitivity_inputs
from stragglers.prediction.evaluation.ablation import nurd_sensitivity as run_sensitivity
from stragglers.prediction.evaluation.ablation import protocol_ablation as run_ablation
from stragglers.settings.protocols import both_views, is_operator
from stragglers.prediction.methods import BASELINES
from stragglers.prediction.methods import REFERENCE_RULES
from stragglers.reports.evaluation_summary import views_summary
from stragglers.warehouse.staged_parts import usage_absent_reason
from stragglers.warehouse.freshness import current_or_compute, trace_rows
from .resources import PipelineSettings

from .common import as_metadata, automated_asset, connected, md_table

matplotlib.use("Agg")

BASELINE_PARTITIONS = dg.StaticPartitionsDefinition(sorted(BASELINES))


def _methods_for_features(context, nurd: PipelineSettings, duckdb: DuckDBResource,
                          methods=("nurd",)) -> tuple[list[str], dg.MaterializeResult | None, dict]:
    """The methods that run on the configured feature set (NURD_FEATURE_SET, 'auto' resolved on the
    trace). Only usage features on a trace without usage (a partial mirror with feature_set=usage)
    leave the feature-based methods nothing to learn from: then only the time-only reference rules
    run. Returns the methods to run, when none is left a green empty materialization saying why,
    and the metadata saying which features the methods saw (and what was skipped)."""
    with connected(nurd, duckdb) as con:
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


def _evaluation(context: dg.AssetExecutionContext, nurd: PipelineSettings, duckdb: DuckDBResource,
                methods: list[str]) -> dg.MaterializeResult:
    """``methods`` (those the configured feature set leaves) evaluated under the configured protocol
    and its other view, each unless current (stragglers/prediction/evaluation/run.py
    ``evaluate_unless_current``); the metadata is the configured view's, with the other view's
    table under ``metrics_<view>``."""
    methods, skipped, features_note = _methods_for_features(context, nurd, duckdb, methods)
    if skipped is not None:
        return skipped
    settings = nurd.evaluation().as_dict() | {"trace": nurd.trace, "feature_mode": nurd.selection().feature_mode,
                                              "protocol": nurd.protocol}
    wanted = both_views(nurd.evaluation())
    with connected(nurd, duckdb) as con:
        views, version = evaluate_unless_current(con, nurd.trace, methods, wanted, nurd.engine(), context.log.info)
    notes = not_applicable_notes(nurd.trace, wanted)   # a view that does not apply: why, in one line
    return dg.MaterializeResult(metadata=as_metadata(views_summary(views, methods, settings)) | features_note | notes,
                                data_version=dg.DataVersion(version))


@automated_asset(deps=["checkpoint_features", "selection_funnel"],
                 group_name="evaluation", kinds={"python", "duckdb"})
def nurd_eval(context: dg.AssetExecutionContext, nurd: PipelineSettings,
              duckdb: DuckDBResource) -> dg.MaterializeResult:
    """NURD on every selected job of the configured trace, replayed online: at each checkpoint from t0 (a first share
    of the job's tasks has finished, setting `initial_fraction`) to tau (its straggler threshold: the `quantile` of
    its task latencies) a method sees only the tasks finished by then and the features observed so far, and flags
    running tasks as stragglers. NURD's ablations NURD-NC and GBTR share its fitted models. Writes `predictions`,
    `job_metrics` (TPR, FPR, FNR, F1 per job), `f1_over_time`, `method_fallbacks`, `evaluation_runs`."""
    return _evaluation(context, nurd, duckdb, ["nurd"])


@automated_asset(deps=["checkpoint_features"], group_name="evaluation", kinds={"python", "duckdb"},
                 partitions_def=BASELINE_PARTITIONS, backfill_policy=dg.BackfillPolicy.single_run())
def baseline_eval(context: dg.AssetExecutionContext, nurd: PipelineSettings,
                  duckdb: DuckDBResource) -> dg.MaterializeResult:
    """One baseline of the paper's Table 3 per partition, through the same online replay. A backfill of several
    partitions runs in one run (single-run backfill policy)."""
    # all requested methods in one replay: jobs are loaded once and spread over the workers
    return _evaluation(context, nurd, duckdb, sorted(context.partition_keys))


def _best_baseline(con, trace: str) -> str:
    """The baseline with the best mean F1 on ``trace`` in job_metrics (PU-EN if none was evaluated)."""
    models = [m for m, cls in BASELINES.items() if not cls.tags.reference_rule]
    row = con.execute("""SELECT method FROM job_metrics WHERE trace = ? AND method IN (SELECT unnest(?))
                         GROUP BY method ORDER BY avg(f1) DESC, method LIMIT 1""", [trace, models]).fetchone()
    return row[0] if row else "pu_en"


@dg.asset(deps=["nurd_eval", "baseline_eval"],
          group_name="evaluation", kinds={"python", "duckdb"})
def protocol_ablation(context: dg.AssetExecutionContext, nurd: PipelineSettings,
                      duckdb: DuckDBResource) -> dg.MaterializeResult:
    """Where the paper's numbers come from: NURD (+ NURD-NC, GBTR), the best baseline and the reference rules under
    the authors' protocol (their released code), the preset with each setting switched back one at a time, and this
    pipeline's protocol. Writes `protocol_ablation` (means over jobs, the settings of every row). Costly:
    `ablation_max_jobs` limits the jobs (recorded in each row)."""
    trace, selection, max_jobs = nurd.trace, nurd.selection(), nurd.ablation_max_jobs or None
    with connected(nurd, duckdb) as con:
        best = _best_baseline(con, trace)
        context.log.info(f"protocol ablation on {trace}, best baseline {best}")
        # the ablation attributes the paper's numbers: under NURD_PROTOCOL=operator, its paper view
        evaluation = nurd.evaluation()
        paper = both_views(evaluation)[1] if is_operator(evaluation) else evaluation

        def compute():
            return run_ablation(con, trace, paper, selection, best, max_jobs=max_jobs,
                                progress=lambda label: context.log.info(f"variant: {label}"))

        kept = current_or_compute(
            con, trace, {"protocol_ablation": ablation_inputs(con, trace, paper, selection, best, max_jobs)}, compute,
            rows=lambda _: trace_rows(con, "protocol_ablation", trace), upstream=("checkpoint_features",),
            settings=paper.as_dict() | {"best_baseline": best, "max_jobs": max_jobs}, table="protocol_ablation")
    if not kept.rebuilt:
        return dg.MaterializeResult(metadata={"rebuilt": False, "best_baseline": best,
                                              "rows": kept.rows["protocol_ablation"]["protocol_ablation"]})
    table = kept.computed
    view = table.pivot_table(index="variant", columns="method", values="f1", sort=False).reset_index()
    return dg.MaterializeResult(metadata={"f1_by_variant": md_table(view, max_rows=100),
                                          "best_baseline": best, "rows": len(table), "rebuilt": True})


@dg.asset(deps=["checkpoint_features"], group_name="evaluation", kinds={"python", "duckdb"})
def nurd_sensitivity(context: dg.AssetExecutionContext, nurd: PipelineSettings,
                     duckdb: DuckDBResource) -> dg.MaterializeResult:
    """NURD's F1 and f1_auc for alpha in {0, 0.25, 0.5} x straggler quantile in {0.7, 0.8, 0.9, 0.95}, beside the
    reference rules, under the configured protocol. Writes `nurd_sensitivity`. `ablation_max_jobs` limits the jobs
    (recorded)."""
    trace, evaluation, selection = nurd.trace, nurd.evaluation(), nurd.selection()
    max_jobs = nurd.ablation_max_jobs or None
    settings = evaluation.as_dict() | {"feature_mode": selection.feature_mode, "protocol": nurd.protocol,
                                       "max_jobs": max_jobs}
    with connected(nurd, duckdb) as con:

        def compute():
            table = run_sensitivity(con, trace, evaluation, selection, max_jobs=max_jobs,
                                    progress=lambda label: context.log.info(label))
            table["settings"] = json.dumps(settings)
            return table

        kept = current_or_compute(
            con, trace, {"nurd_sensitivity": sensitivity_inputs(con, trace, evaluation, selection, max_jobs)},
            compute, rows=lambda _: trace_rows(con, "nurd_sensitivity", trace), upstream=("checkpoint_features",),
            settings=settings, table="nurd_sensitivity")
    if not kept.rebuilt:
        return dg.MaterializeResult(metadata={"rebuilt": False,
                                              "rows": kept.rows["nurd_sensitivity"]["nurd_sensitivity"]})
    table = kept.computed
    view = table.pivot_table(index=["method", "alpha"], columns="quantile", values="f1", dropna=False).reset_index()
    return dg.MaterializeResult(metadata={"f1": md_table(view, max_rows=100), "rows": len(table), "rebuilt": True})
