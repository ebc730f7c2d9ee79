"""The paper's comparison tables over every trace in the warehouse."""

import dagster as dg
from dagster_duckdb import DuckDBResource

import pandas as pd

from stragglers.diagnosis.truth import load_truth
from stragglers.prediction.clock import grid_tables
from stragglers.prediction.completion import completion_table, speculation_jobs, speculation_table
from stragglers.prediction.reexecution import cause_aware_copy_latency
from stragglers.prediction.methods import FREE_RULES, SURVIVAL_FAMILY
from stragglers.prediction.evaluation import replace_table
from stragglers.prediction.protocol import both_views, is_operator
from stragglers.prediction.sweep import budget_table, curve_table, earlier_by_trace
from stragglers.reports.budgets import answer_paragraph, flags_equal
from stragglers.reports.comparison import build_report
from stragglers.reports.operator import operator_view
from stragglers.reports.story import headline_markdown
from stragglers.trace_formats import FORMATS
from stragglers.traces.fetch import truth_dir
from stragglers.warehouse.ledger import digest, record_settings, recorded_inputs
from stragglers.warehouse.storage import table_exists, transaction
from .resources import NurdSettings

from .common import AUTOMATION, md_image, md_table, prepare
from .prediction import baseline_eval, nurd_eval

COMPLETION_SEEDS = range(10)
# what the report is computed from: when none of these changed, neither does the report
REPORT_INPUTS = ("job_metrics", "f1_over_time", "predictions", "tasks", "job_checkpoints", "operator_checkpoints",
                 "protocol_ablation", "nurd_sensitivity", "operator_job_metrics", "operator_predictions",
                 "operator_sweep_outcomes", "reexecution_summary")


def report_inputs(con, nurd: NurdSettings) -> str:
    """A digest of the contents of every table the report reads (a hash aggregate in DuckDB, cheap
    next to the bootstrap and the completion simulation) and of the report's settings."""
    contents = [(name, con.execute(f"SELECT count(*), sum(hash(t)) FROM {name} t").fetchone())
                for name in REPORT_INPUTS if table_exists(con, name)]
    return digest([contents, nurd.n_boot, nurd.seed, list(COMPLETION_SEEDS), nurd.copy_keeps, nurd.cause_aware_copies])


def with_cause_aware_copies(tasks, nurd: NurdSettings, log):
    """Setting cause_aware_copies='on': each generated trace's tasks get the copy latency its truth gives
    (stragglers.prediction.reexecution.cause_aware_copy_latency); real traces have no truth and draw."""
    if nurd.cause_aware_copies != "on":
        return tasks
    parts = []
    for trace in sorted(tasks["trace"].unique()):
        t = tasks[tasks["trace"] == trace]
        if trace in FORMATS and FORMATS[trace].embedded and FORMATS[trace].is_google_layout:
            _jobs, truth_tasks = load_truth(truth_dir(nurd.data_dir, trace))
            copies = cause_aware_copy_latency(truth_tasks)
            t = t.merge(copies, on=["job_id", "task_id"], how="left")
            log(f"cause-aware copies on {trace}: {int(t.copy_latency_s.notna().sum())} tasks' copies redo their work")
        else:
            log(f"cause-aware copies: {trace} has no truth of causes, its copies draw as by default")
        parts.append(t)
    return pd.concat(parts, ignore_index=True)


# protocol_ablation and nurd_sensitivity are read when present, not deps: they are costly and run on
# request, and an eager automation condition waits for every dep to exist.
@dg.asset(deps=[nurd_eval, baseline_eval], group_name="reports", kinds={"python", "duckdb"},
          automation_condition=AUTOMATION,
          description="The comparison with the NURD paper for every trace in the warehouse: its Table 3 "
                      "(per method TPR/FPR/FNR/F1, means over jobs with 95% bootstrap intervals, the earliness "
                      "of the flags (f1_auc, median_lead) and the completion-time reduction of every method, the "
                      "paper's numbers beside ours for the real traces), F1 over normalized time (its Figures 2-3) "
                      "and the reduction in job completion time when flagged tasks are relaunched (its Figures "
                      f"4-9, mean over {len(COMPLETION_SEEDS)} simulation seeds), with the free reference rules "
                      "in their own band; the protocol ablation and NURD's sensitivity when those assets were "
                      "materialized. Metadata starts with the headline numbers and the key figure; the whole "
                      "report is one self-contained page, report.html, under $NURD_DATA_DIR/reports/ (also "
                      "report.md, CSV, Parquet, PNG). Writes the table `comparison`.")
def comparison_tables(context: dg.AssetExecutionContext, nurd: NurdSettings,
                      duckdb: DuckDBResource) -> dg.MaterializeResult:
    out = nurd.data_path / "reports"
    with duckdb.get_connection() as con:
        prepare(con, nurd)
        if not table_exists(con, "job_metrics"):
            raise LookupError("table job_metrics does not exist in the warehouse: materialize asset nurd_eval "
                              "(and baseline_eval partitions) first")
        inputs = report_inputs(con, nurd)
        if recorded_inputs(con, "comparison", "*") == inputs and (out / "report.html").exists():
            context.log.info("comparison_tables: up to date (same evaluations, tables and settings): not rebuilt")
            return dg.MaterializeResult(metadata={"rebuilt": False, "report": dg.MetadataValue.path(str(out))},
                                        data_version=dg.DataVersion(inputs))
        job_metrics = con.execute("SELECT * FROM job_metrics").df()
        if job_metrics.empty:
            raise LookupError("job_metrics is empty: materialize nurd_eval and baseline_eval first")
        traces = con.execute("""
            SELECT trace, max(n_jobs) AS jobs, count(DISTINCT method) AS methods,
                string_agg(DISTINCT coalesce(json_extract_string(settings, '$.feature_set_resolved'), 'usage'), ', ')
                    AS features
            FROM evaluation_runs GROUP BY trace ORDER BY trace""").df()
        traces.insert(1, "data", ["generated (embedded)" if t in FORMATS and FORMATS[t].embedded else "real"
                                  for t in traces["trace"]])
        f1_time = con.execute("SELECT * FROM f1_over_time").df()
        tasks = con.execute("""SELECT t.trace, t.job_id, t.task_id, t.latency_s FROM tasks t
            SEMI JOIN (SELECT DISTINCT trace, job_id FROM job_metrics) j ON j.trace = t.trace AND j.job_id = t.job_id
            """).df()
        predictions = con.execute("SELECT trace, method, job_id, task_id, flagged_at_s FROM predictions").df()
        checkpoints = con.execute("SELECT trace, job_id, checkpoint_s FROM job_checkpoints WHERE k > 0").df()
        # the operator's copies wait for a machine until its next decision: on its own clock's decisions
        op_grid = grid_tables(next(v for v in both_views(nurd.evaluation()) if is_operator(v)))[0]
        op_checkpoints = (con.execute(f"SELECT trace, job_id, checkpoint_s FROM {op_grid} WHERE k > 0").df()
                          if table_exists(con, op_grid) else checkpoints)
        extra = {name: con.execute(f"SELECT * FROM {name}").df() if table_exists(con, name) else None
                 for name in ("protocol_ablation", "nurd_sensitivity", "operator_job_metrics", "operator_cost_curve",
                              "reexecution_summary")}
        op_predictions = (con.execute("SELECT trace, method, job_id, task_id, flagged_at_s FROM operator_predictions")
                          .df() if table_exists(con, "operator_predictions") else None)
        sweep = (con.execute("SELECT * FROM operator_sweep_outcomes ORDER BY ALL").df()
                 if table_exists(con, "operator_sweep_outcomes") else None)
        earlier = earlier_by_trace(con, sorted(sweep["trace"].unique())) if sweep is not None and len(sweep) else {}
        if extra["operator_job_metrics"] is not None and len(extra["operator_job_metrics"]):
            # the tasks of every job either protocol evaluated (a job without predictions of a method is
            # not simulated for it, so the paper's completion table does not change)
            tasks = con.execute("""SELECT t.trace, t.job_id, t.task_id, t.latency_s FROM tasks t
                SEMI JOIN (SELECT trace, job_id FROM job_metrics UNION SELECT trace, job_id FROM operator_job_metrics) j
                ON j.trace = t.trace AND j.job_id = t.job_id""").df()
    context.log.info(f"completion-time simulation over {len(COMPLETION_SEEDS)} seeds")
    completion = completion_table(tasks, predictions, checkpoints, seeds=COMPLETION_SEEDS)
    speculation = speculation_per_job = None
    if op_predictions is not None and len(op_predictions):
        context.log.info("speculative-copy simulation (operator's protocol)")
        copy_tasks = with_cause_aware_copies(tasks, nurd, context.log.info)
        speculation = speculation_table(copy_tasks, op_predictions, op_checkpoints, seeds=COMPLETION_SEEDS,
                                        copy_keeps=nurd.copy_keeps)
        # per job, for the survival family's intervals against the free rules (issue 27)
        per_job = op_predictions[op_predictions["method"].isin([*SURVIVAL_FAMILY, *FREE_RULES])]
        speculation_per_job = speculation_jobs(copy_tasks, per_job, seeds=COMPLETION_SEEDS,
                                               copy_keeps=nurd.copy_keeps) if len(per_job) else None
    budgets = curves = None
    if sweep is not None and len(sweep):
        context.log.info("every method at every budget (operator's sweep, tuned on earlier jobs)")
        budgets = budget_table(sweep, earlier, FREE_RULES, nurd.evaluation().history_min_jobs,
                               n_boot=nurd.n_boot, seed=nurd.seed)
        curves = curve_table(sweep)
        if op_predictions is not None and len(op_predictions):
            budgets = budgets.merge(flags_equal(op_predictions), on=["trace", "method"], how="left")
    report = build_report(nurd.data_path / "reports", job_metrics, f1_time, completion, n_boot=nurd.n_boot,
                          seed=nurd.seed, completion_seeds=COMPLETION_SEEDS,
                          ablation_df=extra["protocol_ablation"], sensitivity_df=extra["nurd_sensitivity"],
                          operator_job_metrics=extra["operator_job_metrics"], speculation_df=speculation,
                          speculation_jobs_df=speculation_per_job, cost_curve_df=extra["operator_cost_curve"],
                          reexecution_df=extra["reexecution_summary"], budgets_df=budgets, sweep_curve_df=curves,
                          traces_df=traces,
                          notes=f"Traces: {', '.join(sorted(job_metrics.trace.unique()))}. Bootstrap seed "
                                f"{nurd.seed}, {nurd.n_boot} resamples over jobs; completion-time seeds "
                                f"{list(COMPLETION_SEEDS)}.")
    t3 = report.tables["table3"]
    with duckdb.get_connection() as con:
        replace_table(con, "comparison", t3)
        if budgets is not None:
            replace_table(con, "matched_budgets", budgets)
            replace_table(con, "sweep_curve", curves)
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
