"""The completion-time simulations the report reads: what relaunching (the paper's Algorithms 2-3) and
speculative copies (the operator's protocol) of every evaluated method's flags do to the jobs
(stragglers/reports/compute/simulations.py computes them)."""

import dagster as dg
from dagster_duckdb import DuckDBResource

from stragglers.prediction.copies.completion import RELAUNCH_SEEDS
from stragglers.reports.compute.simulations import COMPLETION_TIMES
from stragglers.reports.compute.simulations import simulations
from .resources import PipelineSettings

from .common import automated_asset, md_table, tables_from_evaluations


@automated_asset(deps=[dg.AssetKey("nurd_eval"), dg.AssetKey("baseline_eval")], group_name="evaluation",
                 kinds={"python", "duckdb"},
                 description="What relaunching every evaluated method's flagged tasks does to the jobs' "
                             "completion time (the paper's Algorithms 2-3, Figures 4-9: table `completion_times`), "
                             "and, under the operator's protocol, what speculative copies do (table "
                             "`speculation_times`; per job for the survival family and the free rules: "
                             f"`speculation_job_times`), mean over {len(RELAUNCH_SEEDS)} simulation seeds, for "
                             "every trace in the warehouse. comparison_tables reads them.")
def completion_times(context: dg.AssetExecutionContext, nurd: PipelineSettings,
                     duckdb: DuckDBResource) -> dg.MaterializeResult:
    kept, inputs = tables_from_evaluations(context, nurd, duckdb, COMPLETION_TIMES,
                                           lambda con, s: simulations(con, s, context.log.info))
    if not kept.rebuilt:
        return dg.MaterializeResult(metadata={"rebuilt": False}, data_version=dg.DataVersion(inputs))
    completion, speculation, _per_job = kept.computed
    meta = {"rebuilt": True, "completion_times": md_table(completion, max_rows=200)}
    if speculation is not None:
        meta["speculation_times"] = md_table(speculation, max_rows=200)
    return dg.MaterializeResult(metadata=meta, data_version=dg.DataVersion(inputs))
