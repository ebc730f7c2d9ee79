"""Every method at every budget, the operator's answer the report opens with: each method's flag cut
tuned on earlier jobs at each budget of extra machine time (stragglers.prediction.sweep), from the
operator's sweep, written to tables ``matched_budgets`` and ``sweep_curve``."""

import dagster as dg
from dagster_duckdb import DuckDBResource

import pandas as pd

from stragglers.prediction.methods import FREE_RULES, is_learned
from stragglers.prediction.sweep import BUDGETS, budget_table, curve_table, earlier_by_trace
from stragglers.reports.budgets import flags_equal
from stragglers.warehouse.results import replace_table
from stragglers.warehouse.sql_files import render
from stragglers.warehouse.storage import table_exists
from .resources import PipelineSettings

from .common import automated_asset, md_table, table_contents, tables_from_evaluations
from .prediction import baseline_eval, nurd_eval

BUDGET_TABLES = ("matched_budgets", "sweep_curve")
# what the budgets are computed from (earlier jobs: tasks and job_checkpoints): when none of these
# changed, neither do they
BUDGET_INPUTS = ("operator_sweep_outcomes", "operator_capped_outcomes", "operator_predictions", "tasks",
                 "job_checkpoints")


def budget_inputs(con, nurd: PipelineSettings) -> str:
    """A digest of the budgets' input tables and settings: equal digests, equal budget tables."""
    return table_contents(con, BUDGET_INPUTS, [nurd.n_boot, nurd.seed, nurd.evaluation().history_min_jobs,
                                               list(BUDGETS)])


def budget_tables(con, nurd: PipelineSettings) -> tuple[pd.DataFrame | None, pd.DataFrame | None]:
    """(matched_budgets, sweep_curve) from the warehouse's operator sweep; (None, None) without it."""
    sweep = (con.table("operator_sweep_outcomes").order("ALL").df()
             if table_exists(con, "operator_sweep_outcomes") else None)
    if sweep is None or not len(sweep):
        return None, None
    # the budget enforced at every decision when the sweep recorded it, else matched on earlier jobs
    capped = (con.table("operator_capped_outcomes").order("ALL").df()
              if table_exists(con, "operator_capped_outcomes") else None)
    earlier, choosing = earlier_by_trace(con, sorted(sweep["trace"].unique()))
    budgets = budget_table(sweep, earlier, FREE_RULES, nurd.evaluation().history_min_jobs,
                           n_boot=nurd.n_boot, seed=nurd.seed, choosing=choosing, learned=is_learned,
                           capped=capped if capped is not None and len(capped) else None)
    op_predictions = (con.execute(render("flag_times", predictions="operator_predictions")).df()
                      if table_exists(con, "operator_predictions") else None)
    if op_predictions is not None and len(op_predictions):
        budgets = budgets.merge(flags_equal(op_predictions), on=["trace", "method"], how="left")
    return budgets, curve_table(sweep)


@automated_asset(deps=[nurd_eval, baseline_eval], group_name="evaluation", kinds={"python", "duckdb"},
                 description="Every method at every budget of extra machine time under the operator's protocol: each "
                             "method's flag cut chosen per job on the jobs that ended before it (table "
                             "`matched_budgets`, with its paired difference against the best free rule) and its cost "
                             "curve (table `sweep_curve`), from the operator's sweep (`operator_sweep_outcomes`), "
                             "for every trace in the warehouse; both empty without that sweep. comparison_tables "
                             "reads them.")
def operator_budgets(context: dg.AssetExecutionContext, nurd: PipelineSettings,
                     duckdb: DuckDBResource) -> dg.MaterializeResult:
    def compute(con) -> tuple[pd.DataFrame | None, pd.DataFrame | None]:
        context.log.info("every method at every budget (operator's sweep, tuned on earlier jobs)")
        computed = budget_tables(con, nurd)
        # without the operator's sweep both tables are empty (the report leaves their sections out)
        for table, df in zip(BUDGET_TABLES, computed):
            replace_table(con, table, df if df is not None else pd.DataFrame())
        return computed

    kept, inputs = tables_from_evaluations(
        context, nurd, duckdb, counted={table: (table,) for table in BUDGET_TABLES}, inputs=budget_inputs,
        compute=compute, settings={"n_boot": nurd.n_boot, "seed": nurd.seed, "budgets": list(BUDGETS),
                                   "history_min_jobs": nurd.evaluation().history_min_jobs})
    meta: dict = {"rebuilt": kept.rebuilt, **{f"{t}_rows": n for rows in kept.rows.values() for t, n in rows.items()}}
    budgets = kept.computed[0] if kept.computed is not None else None
    if budgets is not None:
        meta["matched_budgets"] = md_table(budgets, max_rows=200)
    return dg.MaterializeResult(metadata=meta, data_version=dg.DataVersion(inputs))
