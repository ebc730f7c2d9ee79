"""The paper's comparison tables over every trace in the warehouse: read the evaluations' and the
simulations' tables, render the report and record it (stragglers/reports/compute/comparison_tables.py)."""

import dagster as dg
from dagster_duckdb import DuckDBResource

from stragglers.reports.compute.comparison_tables import (record_report, report_is_current, report_metadata, report_tables,
                                                  write_report)
from .resources import PipelineSettings

from .common import as_metadata, automated_asset, connected


# protocol_ablation and nurd_sensitivity are read when present, not deps: they are costly and run on
# request, and an eager automation condition waits for every dep to exist.
@automated_asset(deps=["nurd_eval", "baseline_eval", "completion_times", "operator_budgets", "spark_speculation"],
                 group_name="reports", kinds={"python", "duckdb"})
def comparison_tables(context: dg.AssetExecutionContext, nurd: PipelineSettings,
                      duckdb: DuckDBResource) -> dg.MaterializeResult:
    """The comparison with the NURD paper for every trace in the warehouse: its Table 3 (per method TPR/FPR/FNR/F1,
    means over jobs with 95% bootstrap intervals, the earliness of the flags (f1_auc, median_lead) and the
    completion-time reduction of every method, the paper's numbers beside ours for the real traces), F1 over
    normalized time (its Figures 2-3) and the reduction in job completion time when flagged tasks are relaunched
    (its Figures 4-9, mean over the simulation seeds: asset completion_times), every method at every budget of extra
    machine time (asset operator_budgets), with the free reference rules in their own band; the protocol ablation
    and NURD's sensitivity when those assets were materialized. On Spark event logs it opens with the settings to
    set and the spark-defaults.conf block (asset spark_speculation), and shows the operator's protocol only (the
    paper's needs usage samples: said in one line). Metadata starts with the headline numbers and the key figure;
    the whole report is one self-contained page, report.html, under $NURD_DATA_DIR/reports/ (also report.md, CSV,
    Parquet, PNG). Writes the table `comparison`."""
    s, out = nurd.settings(), nurd.data_path / "reports"
    with connected(nurd, duckdb) as con:
        current, inputs = report_is_current(con, s, out)
        if current:
            context.log.info("comparison_tables: up to date (same evaluations, tables and settings): not rebuilt")
            return dg.MaterializeResult(metadata={"rebuilt": False, "report": dg.MetadataValue.path(str(out))},
                                        data_version=dg.DataVersion(inputs))
        tables = report_tables(con)
    report = write_report(out, tables, s)
    with connected(nurd, duckdb) as con:
        record_report(con, report, s, inputs)
    return dg.MaterializeResult(metadata=as_metadata(report_metadata(report, tables)) | {"rebuilt": True},
                                data_version=dg.DataVersion(inputs))
