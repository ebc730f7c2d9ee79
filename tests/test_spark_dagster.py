"""NURD_TRACE=spark_eventlog in Dagster: the sensor on the log directory (a real instance), and the
assets that stage the logs and write the settings to set, on the logs a real Spark cluster wrote."""

from __future__ import annotations

import shutil
from pathlib import Path

import dagster as dg

from nurd_pipeline.assets import spark, traces
from nurd_pipeline.assets.resources import PipelineSettings, WarehouseResource
from stragglers.prediction.spark_speculation import ANSWER_FILE, CONF_FILE


def _nurd(tmp_path: Path, log_dir: Path, **kw) -> PipelineSettings:
    return PipelineSettings(data_dir=str(tmp_path / "data"), trace="spark_eventlog", trace_url=str(log_dir), **kw)


def test_the_sensor_adds_each_complete_log_once_and_waits_for_one_in_progress(spark_eventlogs, tmp_path):
    log_dir = tmp_path / "logs"
    shutil.copytree(spark_eventlogs.eventlog_dir, log_dir)
    written = next((spark_eventlogs.root / "eventlogs_inprogress").iterdir())
    shutil.copy(written, log_dir / written.name)
    complete = sorted(a["app_id"] for a in spark_eventlogs.apps if not a["killed"])
    nurd = _nurd(tmp_path, log_dir)
    with dg.instance_for_test() as instance:
        def evaluate():
            return spark.spark_eventlog_sensor(dg.build_sensor_context(instance=instance, resources={"nurd": nurd}))

        first = evaluate()
        (added,) = first.dynamic_partitions_requests
        assert sorted(added.partition_keys) == complete      # the in-progress application is not one
        assert len(first.run_requests) == 1
        instance.add_dynamic_partitions(spark.spark_applications.name, list(added.partition_keys))
        assert isinstance(evaluate(), dg.SkipReason)          # nothing new
        # the in-progress log completes (Spark renames it): its application is added, alone
        written_app = written.name.removesuffix(".inprogress")
        (log_dir / written.name).rename(log_dir / written_app)
        (added,) = evaluate().dynamic_partitions_requests
        assert list(added.partition_keys) == [written_app.split(".")[0]]


def test_the_sensor_skips_another_trace(tmp_path):
    with dg.instance_for_test() as instance:
        ctx = dg.build_sensor_context(instance=instance, resources={"nurd": PipelineSettings(data_dir=str(tmp_path))})
        assert isinstance(spark.spark_eventlog_sensor(ctx), dg.SkipReason)


def test_the_assets_stage_the_logs_and_write_the_settings_to_set(spark_eventlogs, tmp_path):
    nurd = _nurd(tmp_path, spark_eventlogs.eventlog_dir, min_tasks=2)
    with dg.instance_for_test() as instance:
        result = dg.materialize(spark.assets, resources={"nurd": nurd, "duckdb": WarehouseResource(nurd=nurd)},
                                instance=instance)
    assert result.success
    staged = result.asset_materializations_for_node("spark_staged")[0].metadata
    assert staged["applications"].value == len([a for a in spark_eventlogs.apps if not a["killed"]])
    reports = tmp_path / "data" / "reports"
    md, conf = (reports / ANSWER_FILE).read_text(), (reports / CONF_FILE).read_text()
    answer = result.asset_materializations_for_node("spark_speculation")[0].metadata["answer"].value
    assert answer.startswith("On your ") and answer in md and conf in md
    assert conf.startswith("#")


def test_the_trace_chain_says_it_does_not_read_spark_logs(spark_eventlogs, tmp_path):
    nurd = _nurd(tmp_path, spark_eventlogs.eventlog_dir)
    result = dg.materialize([traces.raw_trace], resources={"nurd": nurd}, raise_on_error=False,
                            instance=dg.DagsterInstance.ephemeral())
    assert not result.success
    failure = next(e for e in result.all_events if e.event_type_value == "STEP_FAILURE")
    assert "NURD_TRACE=spark_eventlog is read where NURD_TRACE_URL points, by the assets of group spark" \
        in failure.event_specific_data.error.message
