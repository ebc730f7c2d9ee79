"""The Definitions object: every asset, check, resource, job and schedule."""


import os

import dagster as dg
from dagster_duckdb import DuckDBResource

from assets import prediction, realism, reports, traces, warehouse
from assets.resources import settings_from_env, warehouse_path

nurd_settings = settings_from_env()

AUTOMATION_ON = os.environ.get("NURD_AUTOMATION", "on") != "off"

observe_trace_sources = dg.ScheduleDefinition(
    name="observe_trace_sources",
    target=traces.observe_trace_source,
    cron_schedule=os.environ.get("NURD_OBSERVE_CRON", "0 4 * * *"),
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
            warehouse.selection_funnel, warehouse.checkpoint_features, realism.trace_realism, prediction.nurd_eval,
            prediction.baseline_eval, reports.comparison_tables],
    asset_checks=warehouse.checks,
    jobs=[traces.observe_trace_source],
    schedules=[observe_trace_sources],
    sensors=[automation],
    resources={
        "nurd": nurd_settings,
        "duckdb": DuckDBResource(
            database=str(warehouse_path()),
            connection_config={"memory_limit": os.environ.get("NURD_DUCKDB_MEMORY_LIMIT", "4GB")},
        ),
    },
    # DuckDB allows one writer process: steps run one after another in the run's process,
    # and evaluations parallelize inside their step (process pool over jobs).
    executor=dg.in_process_executor,
)
