"""The paper's comparison tables over every trace in the warehouse."""

import base64
from pathlib import Path

import dagster as dg
import pandas as pd
from dagster_duckdb import DuckDBResource

from stragglers.prediction.completion import completion_table
from stragglers.reports.comparison import build_report
from stragglers.reports.story import headline_markdown
from stragglers.warehouse.build import create_view, transaction
from assets.resources import NurdSettings

from assets.common import AUTOMATION, md_table, prepare
from assets.prediction import baseline_eval, nurd_eval

COMPARISON_COLUMNS = ["trace", "method", "n_jobs", "tpr", "tpr_lo", "tpr_hi", "fpr", "fpr_lo", "fpr_hi",
                      "fnr", "fnr_lo", "fnr_hi", "f1", "f1_lo", "f1_hi", "pooled_f1", "pooled_f1_lo",
                      "pooled_f1_hi", "best_f1"]
COMPLETION_SEEDS = range(10)


def _image(path: Path) -> dg.MetadataValue:
    data = base64.b64encode(path.read_bytes()).decode()
    return dg.MetadataValue.md(f"![{path.stem}](data:image/png;base64,{data})")


@dg.asset(deps=[nurd_eval, baseline_eval], group_name="reports", kinds={"python", "duckdb"},
          automation_condition=AUTOMATION,
          description="The comparison with the NURD paper for every trace in the warehouse: its Table 3 "
                      "(per method TPR/FPR/FNR/F1, means over jobs with 95% bootstrap intervals, F1 AUC for "
                      "earliness, the paper's numbers beside ours for the real traces), F1 over normalized "
                      "time (its Figures 2-3) and the reduction in job completion time when flagged tasks "
                      f"are relaunched (its Figures 4-9, mean over {len(COMPLETION_SEEDS)} simulation seeds), with the free "
                      "reference rules beside the methods. Metadata starts with the headline numbers and the "
                      "key figure; the whole report is one self-contained page, report.html, under "
                      "$NURD_DATA_DIR/reports/ (also report.md, CSV, Parquet, PNG). Writes the table "
                      "`comparison`.")
def comparison_tables(context: dg.AssetExecutionContext, nurd: NurdSettings,
                      duckdb: DuckDBResource) -> dg.MaterializeResult:
    with duckdb.get_connection() as con:
        prepare(con, nurd)
        job_metrics = con.execute("SELECT * FROM job_metrics").df()
        if job_metrics.empty:
            raise LookupError("job_metrics is empty: materialize nurd_eval and baseline_eval first")
        f1_time = con.execute("SELECT * FROM f1_over_time").df()
        tasks = con.execute("""SELECT t.trace, t.job_id, t.task_id, t.latency_s FROM tasks t
            SEMI JOIN (SELECT DISTINCT trace, job_id FROM job_metrics) j ON j.trace = t.trace AND j.job_id = t.job_id
            """).df()
        predictions = con.execute("SELECT trace, method, job_id, task_id, flagged_at_s FROM predictions").df()
        checkpoints = con.execute("SELECT trace, job_id, checkpoint_s FROM job_checkpoints WHERE k > 0").df()
    context.log.info(f"completion-time simulation over {len(COMPLETION_SEEDS)} seeds")
    completion = completion_table(tasks, predictions, checkpoints, seeds=COMPLETION_SEEDS)
    out = nurd.data_path / "reports"
    report = build_report(out, job_metrics, f1_time, completion, n_boot=nurd.n_boot, seed=nurd.seed,
                          completion_seeds=COMPLETION_SEEDS,
                          notes=f"Traces: {', '.join(sorted(job_metrics.trace.unique()))}. Bootstrap seed "
                                f"{nurd.seed}, {nurd.n_boot} resamples over jobs; completion-time seeds "
                                f"{list(COMPLETION_SEEDS)}.")
    t3 = pd.read_parquet(out / "table3.parquet")
    comparison = t3.reindex(columns=COMPARISON_COLUMNS)
    with duckdb.get_connection() as con:
        create_view(con, "comparison")
        with transaction(con):
            con.execute("DELETE FROM comparison")
            con.register("_rows", comparison)
            con.execute("INSERT INTO comparison BY NAME SELECT * FROM _rows")
    head = pd.read_parquet(out / "headline.parquet") if (out / "headline.parquet").exists() else None
    html = report.with_name("report.html")
    # first what a reader looks at: the headline numbers, the key figure, the full report
    meta: dict = {}
    if head is not None and len(head):
        meta["headline"] = dg.MetadataValue.md(headline_markdown(head))
    if (out / "f1_over_time.png").exists():
        meta["key_plot_f1_over_time"] = _image(out / "f1_over_time.png")
    meta |= {
        "report_html": dg.MetadataValue.url(html.resolve().as_uri()),
        "report_html_path": dg.MetadataValue.path(str(html.resolve())),
        "report": dg.MetadataValue.path(str(report)),
        "traces": ", ".join(sorted(job_metrics.trace.unique())),
        "methods": int(job_metrics.method.nunique()),
        "table3": md_table(comparison.drop(columns=[c for c in comparison if c.endswith(("_lo", "_hi"))]),
                           max_rows=200),
    }
    ft = pd.read_parquet(out / "f1_over_time.parquet") if (out / "f1_over_time.parquet").exists() else None
    if ft is not None:
        meta["f1_over_time"] = md_table(ft.pivot_table(index=["trace", "method"], columns="k", values="f1")
                                        .rename(columns=lambda k: f"F1 at t={k / 10:.1f}")
                                        .reset_index(), max_rows=200)
    cs = out / "completion_summary.parquet"
    if cs.exists():
        meta["completion_time"] = md_table(pd.read_parquet(cs), max_rows=200)
    for png in sorted(out.glob("*.png")):
        if png.name != "f1_over_time.png":
            meta[f"plot_{png.stem}"] = _image(png)
    return dg.MaterializeResult(metadata=meta)
