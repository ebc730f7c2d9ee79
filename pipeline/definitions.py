"""The Definitions object: every asset, check, resource, job and schedule."""


import importlib
import pkgutil

import dagster as dg

from nurd_pipeline import assets
from nurd_pipeline.assets import spark, traces
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

#: every module of assets/: the definitions are what they define (assets, and checks alone or in lists)
ASSET_MODULES = [importlib.import_module(f"{assets.__name__}.{m.name}") for m in pkgutil.iter_modules(assets.__path__)]

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
    assets=dg.load_assets_from_modules(ASSET_MODULES),
    asset_checks=dg.load_asset_checks_from_modules(ASSET_MODULES),
    jobs=[traces.observe_trace_source],
    schedules=[observe_trace_sources],
    sensors=[automation, spark.spark_eventlog_sensor],
    resources=run_resources,
    # DuckDB allows one writer process: steps run one after another in the run's process,
    # and evaluations parallelize inside their step (process pool over jobs).
    executor=dg.in_process_executor,
)
