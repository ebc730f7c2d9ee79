"""The Definitions object: every asset, check, resource, job and schedule."""


import dagster as dg

from assets import diagnosis, failures, nodes, prediction, realism, reports, traces, warehouse
from assets.resources import WarehouseResource, settings_from_env
from stragglers.settings import Settings

# Every NURD_... variable is validated here, before any run: a bad value stops the load, naming it.
load_settings = Settings.from_env()
nurd_settings = settings_from_env()

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
            reports.comparison_tables, *diagnosis.assets,
            nodes.task_attempts, nodes.node_ranking, nodes.node_relaunch_gain,
            failures.failure_inputs, failures.failure_prediction, failures.proactive_cloning],
    asset_checks=[*warehouse.checks, *realism.checks, *diagnosis.checks, *nodes.checks, *failures.checks],
    jobs=[traces.observe_trace_source],
    schedules=[observe_trace_sources],
    sensors=[automation],
    resources={
        "nurd": nurd_settings,
        # <data_dir>/warehouse.duckdb of the run's settings (a launchpad data_dir moves it too)
        "duckdb": WarehouseResource(nurd=nurd_settings),
    },
    # DuckDB allows one writer process: steps run one after another in the run's process,
    # and evaluations parallelize inside their step (process pool over jobs).
    executor=dg.in_process_executor,
)
