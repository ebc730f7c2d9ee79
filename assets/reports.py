"""The paper's comparison tables over every trace in the warehouse: read the evaluations' and the
simulations' tables, render the report (stragglers.reports.comparison) and record it."""

import dagster as dg
import duckdb
from dagster_duckdb import DuckDBResource

import pandas as pd

from stragglers.warehouse.results import read_back, replace_table
from stragglers.prediction.completion import RELAUNCH_SEEDS
from stragglers.prediction.sweep import BUDGET_DTYPES, CURVE_DTYPES
from stragglers.reports.budgets import answer_paragraph
from stragglers.reports.comparison import build_report
from stragglers.reports.operator import operator_view
from stragglers.reports.story import headline_markdown
from stragglers.trace_formats import FORMATS
from stragglers.warehouse.ledger import record_settings, recorded_inputs
from stragglers.warehouse.sql_files import sql_text
from stragglers.warehouse.storage import table_exists, transaction
from .resources import PipelineSettings

from .common import automated_asset, connected, md_image, md_table, require_evaluations, table_contents
from .budgets import budget_inputs, operator_budgets
from .completion import completion_times, simulation_inputs
from .prediction import baseline_eval, nurd_eval

# what the report is computed from: when none of these changed, neither does the report
REPORT_INPUTS = ("job_metrics", "f1_over_time", "predictions", "tasks", "job_checkpoints", "operator_checkpoints",
                 "protocol_ablation", "nurd_sensitivity", "operator_job_metrics", "operator_predictions",
                 "reexecution_summary", "completion_times", "speculation_times", "speculation_job_times",
                 "matched_budgets", "sweep_curve")
# read when present: protocol_ablation and nurd_sensitivity are costly and run on request
OPTIONAL_TABLES = ("protocol_ablation", "nurd_sensitivity", "operator_job_metrics", "operator_cost_curve",
                   "reexecution_summary")


def report_inputs(con, nurd: PipelineSettings) -> str:
    """A digest of the contents of every table the report reads and of the report's settings."""
    return table_contents(con, REPORT_INPUTS, [nurd.n_boot, nurd.seed, list(RELAUNCH_SEEDS), nurd.copy_keeps,
                                               nurd.cause_aware_copies])


def read_table(con: duckdb.DuckDBPyConnection, name: str) -> pd.DataFrame | None:
    """Every row of table ``name`` in stored order; None when the table does not exist."""
    return con.table(name).df() if table_exists(con, name) else None


# protocol_ablation and nurd_sensitivity are read when present, not deps: they are costly and run on
# request, and an eager automation condition waits for every dep to exist.
@automated_asset(deps=[nurd_eval, baseline_eval, completion_times, operator_budgets], group_name="reports",
                 kinds={"python", "duckdb"},
                 description="The comparison with the NURD paper for every trace in the warehouse: its Table "
                             "3 (per method TPR/FPR/FNR/F1, means over jobs with 95% bootstrap intervals, the "
                             "earliness of the flags (f1_auc, median_lead) and the completion-time reduction of every "
                             "method, the paper's numbers beside ours for the real traces), F1 over normalized time "
                             "(its Figures 2-3) and the reduction in job completion time when flagged tasks are "
                             f"relaunched (its Figures 4-9, mean over {len(RELAUNCH_SEEDS)} simulation seeds: asset "
                             "completion_times), every method at every budget of extra machine time (asset "
                             "operator_budgets), with the free reference rules in their own band; the protocol "
                             "ablation and NURD's sensitivity when those assets were materialized. Metadata starts "
                             "with the headline numbers and the key figure; the whole report is one self-contained "
                             "page, report.html, under $NURD_DATA_DIR/reports/ (also report.md, CSV, Parquet, PNG). "
                             "Writes the table `comparison`.")
def comparison_tables(context: dg.AssetExecutionContext, nurd: PipelineSettings,
                      duckdb: DuckDBResource) -> dg.MaterializeResult:
    out = nurd.data_path / "reports"
    with connected(nurd, duckdb) as con:
        require_evaluations(con)
        # the simulations must be of these evaluations and settings: never a report that mixes two runs
        if recorded_inputs(con, "completion_times", "*") != simulation_inputs(con, nurd):
            raise LookupError("table completion_times is missing or older than the evaluations or settings: "
                              "materialize asset completion_times with it "
                              "(--select completion_times,operator_budgets,comparison_tables)")
        if recorded_inputs(con, "matched_budgets", "*") != budget_inputs(con, nurd):
            raise LookupError("table matched_budgets is missing or older than the operator's sweep or settings: "
                              "materialize asset operator_budgets with it "
                              "(--select completion_times,operator_budgets,comparison_tables)")
        inputs = report_inputs(con, nurd)
        if recorded_inputs(con, "comparison", "*") == inputs and (out / "report.html").exists():
            context.log.info("comparison_tables: up to date (same evaluations, tables and settings): not rebuilt")
            return dg.MaterializeResult(metadata={"rebuilt": False, "report": dg.MetadataValue.path(str(out))},
                                        data_version=dg.DataVersion(inputs))
        job_metrics = read_table(con, "job_metrics")
        if job_metrics.empty:
            raise LookupError("job_metrics is empty: materialize nurd_eval and baseline_eval first")
        traces = con.execute(sql_text("report_traces")).df()
        traces.insert(1, "data", ["generated (embedded)" if t in FORMATS and FORMATS[t].embedded else "real"
                                  for t in traces["trace"]])
        tables = {"job_metrics": job_metrics, "traces": traces, "f1_over_time": read_table(con, "f1_over_time"),
                  **{name: read_table(con, name) for name in OPTIONAL_TABLES}}
        # the simulations (asset completion_times); the operator's are empty without its predictions
        tables["completion_times"] = read_table(con, "completion_times")
        for name in ("speculation_times", "speculation_job_times"):
            df = read_table(con, name)
            tables[name] = df if df is not None and len(df) else None
        # every method at every budget (asset operator_budgets), as computed: empty without the sweep
        budgets = read_back(con, "matched_budgets", BUDGET_DTYPES)
        curves = read_back(con, "sweep_curve", CURVE_DTYPES)
        if budgets is None or not len(budgets):
            budgets = curves = None
    tables |= {"matched_budgets": budgets, "sweep_curve": curves}
    report = build_report(out, tables, n_boot=nurd.n_boot, seed=nurd.seed, completion_seeds=RELAUNCH_SEEDS,
                          notes=f"Traces: {', '.join(sorted(job_metrics.trace.unique()))}. Bootstrap seed "
                                f"{nurd.seed}, {nurd.n_boot} resamples over jobs; completion-time seeds "
                                f"{list(RELAUNCH_SEEDS)}.")
    t3 = report.tables["table3"]
    with connected(nurd, duckdb) as con:
        replace_table(con, "comparison", t3)
        with transaction(con):   # after the table's own transaction: a crash in between only rebuilds
            record_settings(con, "comparison", "*", {"n_boot": nurd.n_boot, "seed": nurd.seed}, inputs)
    html = report.path.with_name("report.html")
    # first what a reader looks at: the headline numbers, the key figure, the full report
    meta: dict = {}
    if "matched_budgets" in report.tables:
        meta["answer"] = dg.MetadataValue.md(answer_paragraph(budgets, curves))
        meta["budget_curves"] = md_image(report.plots["budget_curves"], "budget_curves")
    op = report.tables.get("operator_view")
    if op is not None and len(op):
        meta["operator_view"] = md_table(operator_view(op), max_rows=200)
        meta["operator_pareto"] = md_image(report.plots["operator_pareto"], "operator_pareto")
    head = report.tables.get("headline")
    if head is not None and len(head):
        meta["headline"] = dg.MetadataValue.md(headline_markdown(head))
    if "f1_over_time" in report.plots:
        meta["key_plot_f1_over_time"] = md_image(report.plots["f1_over_time"], "f1_over_time")
    meta |= {
        "report_html": dg.MetadataValue.url(html.resolve().as_uri()),
        "report_html_path": dg.MetadataValue.path(str(html.resolve())),
        "report": dg.MetadataValue.path(str(report.path)),
        "traces": ", ".join(sorted(job_metrics.trace.unique())),
        "methods": int(job_metrics.method.nunique()),
        "table3": md_table(t3.drop(columns=[c for c in t3 if c.endswith(("_lo", "_hi", "_diff"))
                                            or c.startswith(("pooled_", "paper_"))]), max_rows=200),
    }
    if "f1_over_time" in report.tables:
        meta["f1_over_time"] = md_table(report.tables["f1_over_time"].pivot_table(
            index=["trace", "method"], columns="k", values="f1").rename(columns=lambda k: f"F1 at t={k / 10:.1f}")
            .reset_index(), max_rows=200)
    if "completion_summary" in report.tables:
        meta["completion_time"] = md_table(report.tables["completion_summary"], max_rows=200)
    for name in ("protocol_ablation", "nurd_sensitivity"):
        if name in report.tables:
            meta[name] = md_table(report.tables[name].drop(columns=["settings"], errors="ignore"), max_rows=200)
    for name, png in report.plots.items():
        if name != "f1_over_time":
            meta[f"plot_{name}"] = md_image(png, name)
    return dg.MaterializeResult(metadata=meta | {"rebuilt": True}, data_version=dg.DataVersion(inputs))
