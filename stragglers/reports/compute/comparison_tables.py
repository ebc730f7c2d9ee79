"""The paper's comparison tables over every trace in the warehouse, as the report's asset runs them:
read the evaluations', the simulations' and the budgets' tables, render the report
(stragglers.reports.comparison), record table ``comparison``, and say what a reader looks at first.
Plain values out (``Markdown``, ``Url``, ``Path``); the Dagster glue wraps them."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pandas as pd

from stragglers.prediction.engine.draws import RELAUNCH_SEEDS
from stragglers.prediction.verdicts.budgets import BUDGET_DTYPES, COMPARISON_DTYPES
from stragglers.prediction.verdicts.tuning import CURVE_DTYPES
from stragglers.reports.comparison import Report, build_report
from stragglers.reports.evaluation_summary import Markdown, Url, md_table
from stragglers.reports.compute.budget_tables import OPERATOR_BUDGETS
from stragglers.reports.compute.simulations import COMPLETION_TIMES
from stragglers.reports.sections.operator import operator_view
from stragglers.reports.page.render import markdown_image
from stragglers.reports.sections.story import headline_markdown
from stragglers.settings import Settings
from stragglers.trace_formats import FORMATS
from stragglers.warehouse.freshness import (EVERY_TRACE, Derived, derived_current, record_settings, require_current,
                                            require_evaluations)
from stragglers.warehouse.storage import read_back, replace_table
from stragglers.warehouse.sql_files import sql_text
from stragglers.warehouse.storage import table_exists, transaction

#: the report: current while every table it reads is (and its page exists)
COMPARISON = Derived(
    counted={"comparison": ("comparison",)},
    inputs=("job_metrics", "f1_over_time", "predictions", "tasks", "job_checkpoints", "operator_checkpoints",
            "protocol_ablation", "nurd_sensitivity", "operator_job_metrics", "operator_predictions",
            "reexecution_summary", "completion_times", "speculation_times", "speculation_job_times",
            "matched_budgets", "named_comparisons", "sweep_curve", "spark_answer", "spark_answer_rows"),
    shaping=lambda s: [s.n_boot, s.seed, list(RELAUNCH_SEEDS), s.copy_keeps, s.cause_aware_copies],
    recorded=lambda s: {"n_boot": s.n_boot, "seed": s.seed},
    older_than="the evaluations, simulations and budgets")

# read when present: protocol_ablation and nurd_sensitivity are costly and run on request
OPTIONAL_TABLES = ("protocol_ablation", "nurd_sensitivity", "operator_job_metrics", "operator_cost_curve",
                   "reexecution_summary", "spark_answer", "spark_answer_rows")


def report_is_current(con: duckdb.DuckDBPyConnection, s: Settings, out: Path) -> tuple[bool, str]:
    """(whether the report under ``out`` is of the current tables and settings, the digest of what it is
    computed from). Stops, naming the asset to materialize, when the simulations or the budgets are not
    of the current evaluations and settings: never a report that mixes two runs."""
    require_evaluations(con)
    require_current(con, COMPLETION_TIMES, s)
    require_current(con, OPERATOR_BUDGETS, s)
    current, inputs = derived_current(con, COMPARISON, s)
    return current and (out / "report.html").exists(), inputs


def read_table(con: duckdb.DuckDBPyConnection, name: str) -> pd.DataFrame | None:
    """Every row of table ``name`` in stored order; None when the table does not exist."""
    return con.table(name).df() if table_exists(con, name) else None


def report_tables(con: duckdb.DuckDBPyConnection) -> dict[str, pd.DataFrame | None]:
    """Every table the report reads (warehouse table name -> frame; None when absent or, for the
    operator's simulations and the budgets, empty)."""
    job_metrics = read_table(con, "job_metrics")
    operator_rows = read_table(con, "operator_job_metrics")
    if job_metrics.empty and (operator_rows is None or operator_rows.empty):
        raise LookupError("job_metrics and operator_job_metrics are empty: materialize nurd_eval and baseline_eval "
                          "first")
    tables = {"job_metrics": job_metrics, "traces": trace_rows(con), "f1_over_time": read_table(con, "f1_over_time"),
              **{name: read_table(con, name) for name in OPTIONAL_TABLES}}
    # the simulations (asset completion_times); the operator's are empty without its predictions
    tables["completion_times"] = read_table(con, "completion_times")
    for name in ("speculation_times", "speculation_job_times"):
        df = read_table(con, name)
        tables[name] = df if df is not None and len(df) else None
    # every method at every budget (asset operator_budgets), as computed: empty without the sweep
    budgets = read_back(con, "matched_budgets", BUDGET_DTYPES)
    comparisons = read_back(con, "named_comparisons", COMPARISON_DTYPES)
    curves = read_back(con, "sweep_curve", CURVE_DTYPES)
    if budgets is None or not len(budgets):
        budgets = comparisons = None
    if curves is not None and not len(curves):
        curves = None
    for name in ("spark_answer", "spark_answer_rows"):
        if tables.get(name) is not None and not len(tables[name]):
            tables[name] = None
    return tables | {"matched_budgets": budgets, "named_comparisons": comparisons, "sweep_curve": curves}


def trace_rows(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """One row per trace evaluated under either protocol (the paper's: sql/report_traces.sql over
    evaluation_runs; the operator's: the same counts over operator_evaluation_runs): whether its data
    are real, the protocols it ran under, its jobs and methods (the most under either) and the
    features the methods saw."""
    paper = con.execute(sql_text("report_traces")).df().assign(protocols="paper's")
    rows = read_table(con, "operator_evaluation_runs")
    operator = pd.DataFrame(columns=["trace", "jobs", "methods", "features", "protocols"])
    if rows is not None and len(rows):
        features = rows["settings"].map(lambda v: (json.loads(v) if isinstance(v, str) else v or {})
                                        .get("feature_set_resolved") or "usage")
        operator = (rows.assign(features=features).groupby("trace", as_index=False)
                    .agg(jobs=("n_jobs", "max"), methods=("method", "nunique"),
                         features=("features", lambda f: ", ".join(sorted(set(f)))))
                    .assign(protocols="operator's"))
    both = pd.concat([paper, operator], ignore_index=True)
    out = both.groupby("trace", as_index=False).agg(
        protocols=("protocols", lambda p: ", ".join(dict.fromkeys(p))), jobs=("jobs", "max"),
        methods=("methods", "max"), features=("features", "first"))
    out = out.astype({"jobs": "int64", "methods": "int64"})
    out.insert(1, "data", ["generated (embedded)" if t in FORMATS and FORMATS[t].embedded else "real"
                           for t in out["trace"]])
    return out.sort_values("trace").reset_index(drop=True)


def write_report(out: Path, tables: dict, s: Settings) -> Report:
    """The report rendered from ``tables`` under ``out`` (report.md, report.html, CSV, Parquet, PNG)."""
    return build_report(out, tables, n_boot=s.n_boot, seed=s.seed, completion_seeds=RELAUNCH_SEEDS,
                        notes=f"Traces: {', '.join(evaluated_traces(tables))}. The answer first, then the "
                              f"evidence, the paper's reproduction, the appendices and a glossary of every term. "
                              f"Bootstrap seed {s.seed}, {s.n_boot} resamples over jobs; copy and restart draws: "
                              f"seeds {RELAUNCH_SEEDS[0]} to {RELAUNCH_SEEDS[-1]}.")


def evaluated_traces(tables: dict) -> list[str]:
    """Every trace with an evaluation under either protocol."""
    frames = [tables[t] for t in ("job_metrics", "operator_job_metrics") if tables.get(t) is not None]
    return sorted({t for df in frames for t in df["trace"].unique()})


def record_report(con: duckdb.DuckDBPyConnection, report: Report, s: Settings, inputs: str) -> None:
    """Table ``comparison`` (the report's Table 3), then its ledger record of ``inputs``."""
    # the paper's Table 3 (none where only the operator's protocol applies: the table is emptied)
    replace_table(con, "comparison", report.tables.get("table3", pd.DataFrame()))
    with transaction(con):   # after the table's own transaction: a crash in between only rebuilds
        record_settings(con, "comparison", EVERY_TRACE, COMPARISON.recorded(s), inputs)


def answer_markdown(report: Report) -> str:
    """The answer box of every trace, as report.md opens with it (from the report's table answer)."""
    text = report.path.read_text(encoding="utf-8")
    return text.split("## What this run shows", 1)[-1].split("\n## ", 1)[0].strip()


def _image(png, name: str) -> Markdown:
    return Markdown(markdown_image(png, name))


def report_metadata(report: Report, tables: dict) -> dict:
    """What a reader looks at first (the headline numbers, the key figure), then the full report."""
    job_metrics, t3 = tables["job_metrics"], report.tables.get("table3")
    meta: dict = {}
    meta["answer"] = Markdown(answer_markdown(report))
    if "budget_curves" in report.plots:
        meta["budget_curves"] = _image(report.plots["budget_curves"], "budget_curves")
    op = report.tables.get("operator_view")
    if op is not None and len(op):
        meta["operator_view"] = md_table(operator_view(op), max_rows=200)
        meta["operator_pareto"] = _image(report.plots["operator_pareto"], "operator_pareto")
    head = report.tables.get("headline")
    if head is not None and len(head):
        meta["headline"] = Markdown(headline_markdown(head))
    if "f1_over_time" in report.plots:
        meta["key_plot_f1_over_time"] = _image(report.plots["f1_over_time"], "f1_over_time")
    html = report.path.with_name("report.html")
    meta |= {
        "report_html": Url(html.resolve().as_uri()),
        "report_html_path": html.resolve(),
        "report": report.path,
        "traces": ", ".join(evaluated_traces(tables)),
        "methods": int(pd.concat([df["method"] for df in (job_metrics, tables.get("operator_job_metrics"))
                                  if df is not None]).nunique()),
    }
    if t3 is not None:
        meta["table3"] = md_table(t3.drop(columns=[c for c in t3 if c.endswith(("_lo", "_hi", "_diff"))
                                                   or c.startswith(("pooled_", "paper_"))]), max_rows=200)
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
            meta[f"plot_{name}"] = _image(png, name)
    return meta
