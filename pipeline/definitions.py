"""The Definitions object: every asset, check, resource, job and schedule."""


import dagster as dg

from nurd_pipeline.assets import (budgets, completion, diagnosis, failures, nodes, prediction, realism, reports,
                                  spark, traces, warehouse)
from nurd_pipeline.assets.resources import InvalidSettings, WarehouseResource, settings_from_env, stop_on_bad_setting
from stragglers.settings import Settings, SettingError

# Every NURD_... variable is validated here, before any run. A bad value stops a command
# (`dagster asset materialize`, `dg launch`, `dg check defs`) with one line naming it; where the
# definitions serve runs (the UI's code server, a run worker) every run fails at its start with that line.
try:
    load_settings = Settings.from_env()
    nurd_settings = settings_from_env()
    run_resources = {
        "nurd": nurd_settings,
        # <data_dir>/warehouse.duckdb of the run's settings (a launchpad data_dir moves it too)
        "duckdb": WarehouseResource(nurd=nurd_settings),
    }
except SettingError as bad:
    stop_on_bad_setting(bad)
    load_settings = Settings()
    run_resources = {"nurd": InvalidSettings(error=str(bad)), "duckdb": InvalidSettings(error=str(bad))}

AUTOMATION_ON = load_settings.automation == "on"

observe_trace_sources = dg.ScheduleDefinition(
    name="observe_trace_sources",
    target=traces.observe_trace_source,
    cron_schedule=load_settings.observe_cron,
    default_status=dg.DefaultScheduleStatus.RUNNING if AUTOMATION_ON else dg.DefaultScheduleStatus.STOPPED,
    description="Observe the trace source (default daily, NURD_OBSERVE_CRON); a new data version "
                "re-materializes the chain through the assets' automation conditions.",
)

# Evaluates the assets' AutomationConditions (eager: re-run when upstream has new data).
automation = dg.AutomationConditionSensorDefinition(
    "nurd_automation",
    target=dg.AssetSelection.all(),
    default_status=dg.DefaultSensorStatus.RUNNING if AUTOMATION_ON else dg.DefaultSensorStatus.STOPPED,
    description="Re-materializes the chain, the evaluations and the tables when the trace source has a "
                "new data version (NURD_AUTOMATION=off starts it stopped).",
)

defs = dg.Definitions(
    assets=[traces.trace_source, traces.raw_trace, warehouse.staged_trace, warehouse.jobs, warehouse.tasks,
            warehouse.selection_funnel, warehouse.checkpoint_features, realism.trace_realism, realism.reexecutions,
            prediction.nurd_eval,
            prediction.baseline_eval, prediction.protocol_ablation, prediction.nurd_sensitivity,
            completion.completion_times, budgets.operator_budgets, reports.comparison_tables, *diagnosis.assets,
            nodes.task_attempts, nodes.node_ranking, nodes.node_relaunch_gain,
            failures.failure_inputs, failures.failure_prediction, failures.proactive_cloning, *spark.assets],
    asset_checks=[*warehouse.checks, *realism.checks, *realism.realism_checks, *diagnosis.checks, *nodes.checks, *failures.checks],
    jobs=[traces.observe_trace_source],
    schedules=[observe_trace_sources],
    sensors=[automation, spark.spark_eventlog_sensor],
    resources=run_resources,
    # DuckDB allows one writer process: steps run one after another in the run's process,
    # and evaluations parallelize inside their step (process pool over jobs).
    executor=dg.in_process_executor,
)
