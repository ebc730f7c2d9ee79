"""Spark event logs (NURD_TRACE=spark_eventlog): the operator's answer as files, and the sensor that
re-runs the chain when an application's log becomes complete (the applications seen: its cursor). The logs
are staged by the chain's own staged_trace (stragglers.warehouse.spark_staging), the learned methods
and the free rules (Spark's rule among them) run on them through nurd_eval and baseline_eval under
the operator's protocol, and operator_budgets makes the answer (tables spark_answer and
spark_answer_rows, stragglers/prediction/verdicts/spark_answer.py), which the report opens with. Glue only:
stragglers.advice.spark writes the files, the same way as ``nurd-spark advise``."""

from __future__ import annotations

import json
from pathlib import Path

import dagster as dg
from dagster_duckdb import DuckDBResource

from stragglers.advice.spark import ANSWER_DIR, DEFAULT_OUT, answer_files
from stragglers.prediction.verdicts.tuning import HEADLINE_BUDGET
from stragglers.traces.spark_eventlog import application_of, discover
from stragglers.warehouse.spark_staging import TRACE

from .common import automated_asset, connected, format_only
from .resources import PipelineSettings



@automated_asset(deps=["operator_budgets"], group_name="spark", kinds={"python", "duckdb"})
@format_only(lambda s: s.trace == TRACE, f"it reads Spark event logs (NURD_TRACE={TRACE})")
def spark_speculation(nurd: PipelineSettings, duckdb: DuckDBResource) -> dg.MaterializeResult:
    """The operator's answer on Spark event logs as files: spark/spark-defaults.conf (the setting to write, or a
    comment saying to keep yours) and spark/spark-defaults.conf.md (the answer, what you run, Spark 4.0's defaults
    and the answer side by side) under NURD_DATA_DIR, at the report's budget, from table spark_answer
    (operator_budgets: the same numbers as the report and as `nurd-spark advise`). A new staging marks the
    previous files .stale. On another trace than Spark event logs: not applicable."""
    with connected(nurd, duckdb) as con:
        conf, report, verdict = answer_files(con, TRACE, HEADLINE_BUDGET, nurd.data_path / ANSWER_DIR / DEFAULT_OUT)
    return dg.MaterializeResult(metadata={"answer": dg.MetadataValue.md(verdict),
                                          "spark_defaults_conf": dg.MetadataValue.path(str(conf)),
                                          "report": dg.MetadataValue.path(str(report))})


#: What a new complete log re-runs at once: the staging; the chain after it by its automation
#: conditions (a new data version of staged_trace), as on the Google path, up to the answer's files.
SENSOR_TARGET = dg.AssetSelection.assets("raw_trace", "staged_trace")


@dg.sensor(name="spark_eventlog_sensor", target=SENSOR_TARGET, minimum_interval_seconds=60,
           description="Watches NURD_TRACE_URL (NURD_TRACE=spark_eventlog): an application whose event log is "
                       "complete is added to the sensor's cursor and the chain re-runs; a log still "
                       "being written (.inprogress, or a rolling folder whose status says so) waits.")
def spark_eventlog_sensor(context: dg.SensorEvaluationContext, nurd: PipelineSettings):
    if nurd.trace != TRACE:
        return dg.SkipReason(f"NURD_TRACE={nurd.trace}: no Spark event logs to watch")
    logs, _ = discover(Path(nurd.trace_url))
    complete = sorted({application_of(log) for log in logs if not log.in_progress})
    # the applications already run for: the sensor's own cursor (Dagster keeps it per sensor)
    known = set(json.loads(context.cursor)) if context.cursor else set()
    new = [app for app in complete if app not in known]
    if not new:
        return dg.SkipReason(f"no newly complete event log ({len(complete)} complete, "
                             f"{sum(log.in_progress for log in logs)} in progress)")
    return dg.SensorResult(run_requests=[dg.RunRequest(run_key=f"spark_applications:{','.join(new)}")],
                           cursor=json.dumps(sorted(known | set(new))))


assets = [spark_speculation]
