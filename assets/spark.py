"""Spark event logs (NURD_TRACE=spark_eventlog): Spark's speculation replayed on the staged logs and
the settings to set; a sensor adds each application whose log is complete as a dynamic partition and
re-runs the chain. The logs are staged by the chain's own staged_trace (stragglers.warehouse.staging,
which hands them to stragglers.warehouse.spark_staging), and the learned methods run on them through
nurd_eval and baseline_eval under the operator's protocol. Glue only: stragglers.prediction.spark_speculation
does the work."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pandas as pd
from dagster_duckdb import DuckDBResource

from stragglers.prediction import spark_speculation as sp
from stragglers.traces.spark_eventlog import application_of, discover
from stragglers.warehouse.results import replace_table
from stragglers.warehouse.spark_staging import TRACE

from .common import automated_asset, connected, format_only
from .resources import PipelineSettings

#: One partition per application whose event log is complete (added by spark_eventlog_sensor).
spark_applications = dg.DynamicPartitionsDefinition(name="spark_applications")


@automated_asset(deps=[dg.AssetKey("staged_trace")], group_name="spark", kinds={"python", "duckdb"},
                 description="Spark's speculation replayed on the staged stage attempts: the settings to set "
                             "(chosen on the earlier stages, scored on the later ones beside Spark's defaults), "
                             "written to spark/spark_speculation.md and spark/spark-defaults.conf under "
                             "NURD_DATA_DIR and to table "
                             "spark_answer, which the report (comparison_tables) opens with. Another trace than "
                             f"NURD_TRACE={TRACE}: not applicable, said in its metadata.")
@format_only(lambda s: s.trace == TRACE, f"it reads Spark event logs (NURD_TRACE={TRACE})")
def spark_speculation(nurd: PipelineSettings, duckdb: DuckDBResource) -> dg.MaterializeResult:
    with connected(nurd, duckdb) as con:
        ans = sp.answer(sp.load_stages(con), sp.load_slots(con))
        replace_table(con, "spark_answer", pd.DataFrame([sp.answer_row(ans, TRACE)]), trace=TRACE)
    md, conf = sp.write_answer(ans, nurd.data_path / sp.ANSWER_DIR)
    return dg.MaterializeResult(metadata={
        "answer": dg.MetadataValue.md(ans.text()), "spark_defaults_conf": dg.MetadataValue.path(str(conf)),
        "report": dg.MetadataValue.path(str(md)), "stages": ans.stages, "applications": ans.applications,
        "set_aside_short": ans.set_aside, "set_aside_one_host": ans.one_host,
        "chosen": ans.chosen.name if ans.chosen else "none"})


#: What a new complete log re-runs at once: the staging and Spark's answer; the learned chain after
#: them by its automation conditions (a new data version of staged_trace), as on the Google path.
SENSOR_TARGET = dg.AssetSelection.assets("raw_trace", "staged_trace", "spark_speculation")


@dg.sensor(name="spark_eventlog_sensor", target=SENSOR_TARGET, minimum_interval_seconds=60,
           description="Watches NURD_TRACE_URL (NURD_TRACE=spark_eventlog): an application whose event log is "
                       "complete becomes a partition of spark_applications and the chain re-runs; a log still "
                       "being written (.inprogress, or a rolling folder whose status says so) waits.")
def spark_eventlog_sensor(context: dg.SensorEvaluationContext, nurd: PipelineSettings):
    if nurd.trace != TRACE:
        return dg.SkipReason(f"NURD_TRACE={nurd.trace}: no Spark event logs to watch")
    logs, _ = discover(Path(nurd.trace_url))
    complete = sorted({application_of(log) for log in logs if not log.in_progress})
    known = set(context.instance.get_dynamic_partitions(spark_applications.name))
    new = [app for app in complete if app not in known]
    if not new:
        return dg.SkipReason(f"no newly complete event log ({len(complete)} complete, "
                             f"{sum(log.in_progress for log in logs)} in progress)")
    return dg.SensorResult(
        run_requests=[dg.RunRequest(run_key=f"spark_applications:{','.join(new)}")],
        dynamic_partitions_requests=[spark_applications.build_add_request(new)])


assets = [spark_speculation]
