"""Spark event logs (NURD_TRACE=spark_eventlog): stage the operator's logs, replay Spark's
speculation on them and write the settings to set; a sensor adds each application whose log is
complete as a dynamic partition and re-runs the chain. Glue only: stragglers.warehouse.spark_staging
and stragglers.prediction.spark_speculation do the work."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
from dagster_duckdb import DuckDBResource

from stragglers.prediction import spark_speculation as sp
from stragglers.traces.spark_eventlog import application_of, discover
from stragglers.warehouse.spark_staging import TRACE, stage_spark

from .resources import PipelineSettings

#: One partition per application whose event log is complete (added by spark_eventlog_sensor).
spark_applications = dg.DynamicPartitionsDefinition(name="spark_applications")


def _not_spark(nurd: PipelineSettings) -> dg.MaterializeResult | None:
    if nurd.trace != TRACE:
        return dg.MaterializeResult(metadata={"note": f"not applicable to {nurd.trace}: it reads Spark event logs "
                                                      f"(NURD_TRACE={TRACE})"})
    return None


@dg.asset(group_name="spark", kinds={"duckdb"},
          description="Every event log under NURD_TRACE_URL staged into the stg_spark_* tables (bad lines as "
                      "NURD_ON_BAD_ROWS says; skipped files counted in table quarantine).")
def spark_staged(nurd: PipelineSettings, duckdb: DuckDBResource) -> dg.MaterializeResult:
    skip = _not_spark(nurd)
    if skip:
        return skip
    s = nurd.settings()
    with duckdb.get_connection() as con:
        counts = stage_spark(con, Path(s.trace_url), min_tasks=s.min_tasks, on_bad_rows=s.on_bad_rows)
    return dg.MaterializeResult(metadata={k: int(v) for k, v in counts.items()})


@dg.asset(deps=[dg.AssetKey("spark_staged")], group_name="spark", kinds={"python"},
          description="Spark's speculation replayed on the staged stage attempts: the settings to set (chosen on "
                      "the earlier stages, scored on the later ones beside Spark's defaults), written to "
                      "reports/spark_speculation.md and reports/spark-defaults.conf.")
def spark_speculation(nurd: PipelineSettings, duckdb: DuckDBResource) -> dg.MaterializeResult:
    skip = _not_spark(nurd)
    if skip:
        return skip
    with duckdb.get_connection() as con:
        stages, slots = sp.load_stages(con), sp.load_slots(con)
    ans = sp.answer(stages, slots)
    md, conf = sp.write_answer(ans, nurd.data_path / "reports")
    return dg.MaterializeResult(metadata={
        "answer": dg.MetadataValue.md(ans.text()), "spark_defaults_conf": dg.MetadataValue.path(str(conf)),
        "report": dg.MetadataValue.path(str(md)), "stages": ans.stages, "applications": ans.applications,
        "set_aside_short": ans.set_aside, "set_aside_one_host": ans.one_host,
        "chosen": ans.chosen.name if ans.chosen else "none"})


@dg.sensor(name="spark_eventlog_sensor", target=[spark_staged, spark_speculation], minimum_interval_seconds=60,
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


assets = [spark_staged, spark_speculation]
