"""NURD_TRACE=spark_eventlog in Dagster: the sensor on the log directory (a real instance), the
assets that stage the logs and write the settings to set, on the logs a real Spark cluster wrote, and
the operator's whole chain (NURD and a baseline under the operator's protocol, the report opening with
the settings to set) on real logs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import dagster as dg
import duckdb

from nurd_pipeline.assets import budgets, completion, prediction, reports, spark, traces, warehouse
from nurd_pipeline.assets.resources import PipelineSettings, WarehouseResource
from stragglers.trace_formats import FORMATS
from stragglers.advice.spark import ANSWER_DIR, DEFAULT_OUT, REPORT_SUFFIX

#: The answer's two files under NURD_DATA_DIR/spark: the conf block and the report beside it.
CONF_FILE = DEFAULT_OUT.name
ANSWER_FILE = CONF_FILE + REPORT_SUFFIX

#: The operator's chain on Spark's logs, from the log directory to the report.
CHAIN = [traces.raw_trace, warehouse.staged_trace, warehouse.jobs, warehouse.tasks, warehouse.selection_funnel,
         warehouse.checkpoint_features, spark.spark_speculation, prediction.nurd_eval, prediction.baseline_eval,
         completion.completion_times, budgets.operator_budgets, reports.comparison_tables]
#: Real logs of the chain's test: two multi-host applications (Databricks 2 hosts, 15 stages of at least
#: 100 tasks; YARN 5 hosts, one), and a log with a line that is not JSON (a counted skip).
REAL_LOGS = ("nds_q88_photon_db_13_3.zstd", "rp_sql_eventlog.zstd", "malformed_json_eventlog.zstd")


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
        cursor = None

        def evaluate():
            return spark.spark_eventlog_sensor(dg.build_sensor_context(instance=instance, cursor=cursor,
                                                                       resources={"nurd": nurd}))

        first = evaluate()
        assert sorted(json.loads(first.cursor)) == complete      # the in-progress application is not one
        assert len(first.run_requests) == 1
        cursor = first.cursor
        assert isinstance(evaluate(), dg.SkipReason)          # nothing new
        # the in-progress log completes (Spark renames it): its application is added, alone
        written_app = written.name.removesuffix(".inprogress")
        (log_dir / written.name).rename(log_dir / written_app)
        again = evaluate()
        assert sorted(json.loads(again.cursor)) == sorted([*complete, written_app.split(".")[0]])
        assert again.run_requests[0].run_key == f"spark_applications:{written_app.split('.')[0]}"


def test_the_sensor_skips_another_trace(tmp_path):
    with dg.instance_for_test() as instance:
        ctx = dg.build_sensor_context(instance=instance, resources={"nurd": PipelineSettings(data_dir=str(tmp_path))})
        assert isinstance(spark.spark_eventlog_sensor(ctx), dg.SkipReason)


def test_the_assets_stage_the_logs_and_the_answer_waits_for_the_budgets(spark_eventlogs, tmp_path):
    """On the logs the cluster wrote: the staging counts the complete applications; the answer's files
    before operator_budgets made the answer stop with one line naming what to materialize first (the
    files themselves: the chain's test on real logs below)."""
    nurd = _nurd(tmp_path, spark_eventlogs.eventlog_dir, min_tasks=2)
    resources = {"nurd": nurd, "duckdb": WarehouseResource(nurd=nurd)}
    with dg.instance_for_test() as instance:
        staged = dg.materialize([traces.raw_trace, warehouse.staged_trace], resources=resources, instance=instance)
        early = dg.materialize([spark.spark_speculation], resources=resources, instance=instance, raise_on_error=False)
    meta = staged.asset_materializations_for_node("staged_trace")[0].metadata
    assert meta["applications"].value == len([a for a in spark_eventlogs.apps if not a["killed"]])
    failed = {e.step_key: e.step_failure_data.error.cause.message for e in early.all_events if e.is_step_failure}
    assert "materialize baseline_eval's partition spark_speculation and operator_budgets first" in \
        failed["spark_speculation"], failed
    assert "\n" not in failed["spark_speculation"].strip()
    assert not (tmp_path / "data" / ANSWER_DIR / CONF_FILE).exists()


def test_raw_trace_lists_the_logs_where_they_lie_and_copies_nothing(spark_eventlogs, tmp_path):
    nurd = _nurd(tmp_path, spark_eventlogs.eventlog_dir)
    result = dg.materialize([traces.raw_trace], resources={"nurd": nurd}, instance=dg.DagsterInstance.ephemeral())
    meta = result.asset_materializations_for_node("raw_trace")[0].metadata
    assert meta["path"].value == str(spark_eventlogs.eventlog_dir)
    assert meta["files"].value >= len(spark_eventlogs.apps) and meta["tables_missing"].value == "none"
    assert not (tmp_path / "data" / "raw").exists()


def test_the_operators_chain_runs_on_real_logs_and_the_report_opens_with_the_settings(spark_realdata, tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    for name in REAL_LOGS:
        (logs / name).symlink_to(spark_realdata / name)
    nurd = _nurd(tmp_path, logs, on_bad_rows="quarantine", workers=1, n_boot=50)
    with dg.instance_for_test() as instance:
        result = dg.materialize(CHAIN + warehouse.checks, partition_key="spark_speculation", instance=instance,
                                resources={"nurd": nurd, "duckdb": WarehouseResource(nurd=nurd)})
    assert result.success
    checks = {e.check_name: e.passed for e in result.get_asset_check_evaluations()}
    assert {"tasks_valid", "checkpoint_features_valid"} <= set(checks) and all(checks.values())
    meta = {node: result.asset_materializations_for_node(node)[0].metadata for node in ("staged_trace", "nurd_eval")}
    assert meta["staged_trace"]["applications"].value == 2 and meta["staged_trace"]["bad_lines"].value == 1
    # the paper's protocol says in one line why it does not apply; the operator's ran on every evaluable stage
    why = meta["nurd_eval"]["paper_protocol"].value
    assert "\n" not in why and "usage samples" in why
    with duckdb.connect(str(tmp_path / "data" / "warehouse.duckdb"), read_only=True) as con:
        evaluated = dict(con.execute("""SELECT method, count(DISTINCT job_id) FROM operator_job_metrics
                                        WHERE trace = 'spark_eventlog' GROUP BY method""").fetchall())
        stages = con.execute("SELECT count(*) FROM jobs WHERE trace = 'spark_eventlog'").fetchone()[0]
        paper_rows = con.execute("SELECT count(*) FROM job_metrics").fetchone()[0]
    assert stages == 16 and paper_rows == 0
    assert evaluated["nurd"] == evaluated["spark_speculation"] >= stages - 2
    # the report opens with the answer box: what to run in words, the block to copy, what it rests on,
    # the learned methods' named comparison; then Spark's own rule, the operator's evidence, the paper's
    report = (tmp_path / "data" / "reports" / "report.md").read_text()
    opening = report.split("## What this run shows\n\n")[1].split("\n## ")[0]
    conf = (tmp_path / "data" / ANSWER_DIR / CONF_FILE).read_text()
    md = (tmp_path / "data" / ANSWER_DIR / ANSWER_FILE).read_text()
    answer = result.asset_materializations_for_node("spark_speculation")[0].metadata["answer"].value
    assert answer and "\n" not in answer and answer in md and conf in md and conf.startswith("#")
    assert opening.startswith(f"### spark_eventlog (Spark event logs, {stages} stages): ")
    assert f"- **Rests on:** {stages} stages of 2 applications" in opening
    assert conf.strip() in opening and "- **Learned methods:**" in opening
    # the researcher's line: NURD's F1 under the operator's protocol, and why the paper's does not apply
    why = FORMATS["spark_eventlog"].paper_protocol_not_applicable
    assert "- **For the researcher:** NURD's F1 here is" in opening and why[1:] in opening
    assert (report.index("## What this run shows") < report.index("## Spark's own rule on your event logs")
            < report.index("## The operator's evidence"))
