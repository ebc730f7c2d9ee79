"""Helpers shared by the asset modules (metadata rendering, DuckDB, the evaluations' tables' asset factory)."""


import functools
import os
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import dagster as dg
import duckdb
import pandas as pd
from dagster_duckdb import DuckDBResource

from stragglers.reports.evaluation_summary import Markdown, Url
from stragglers.reports.compute.budget_tables import BUDGET_TABLES
from stragglers.reports.page.render import markdown_image, markdown_table
from stragglers.reports.compute.simulations import SIMULATION_TABLES
from stragglers.warehouse.freshness import Derived, StaleTableError, build_unless_current
from stragglers.warehouse.sql_files import ALIBABA_VIEWS, GOOGLE_VIEWS
from stragglers.warehouse.staging import stage_trace
from stragglers.warehouse.storage import configure
from .resources import PipelineSettings

# Re-run when an upstream asset has a new *data version* (not merely a new materialization): every
# asset's data version is a digest of its inputs (raw files, settings, SQL), so re-running the main
# command on an unchanged trace launches nothing; a new trace version or changed settings re-run the
# chain. Otherwise eager(): nothing missing upstream, nothing in progress.
AUTOMATION = (
    dg.AutomationCondition.in_latest_time_window()
    & dg.AutomationCondition.any_deps_match(
        dg.AutomationCondition.data_version_changed() | dg.AutomationCondition.will_be_requested()
    ).since_last_handled()
    & ~dg.AutomationCondition.any_deps_missing()
    & ~dg.AutomationCondition.any_deps_in_progress()
    & ~dg.AutomationCondition.in_progress()
).with_label("on a new upstream data version")


def automated_asset(**asset_args):
    """``dg.asset`` with the AUTOMATION condition: an asset of the chain, re-run on a new upstream data
    version. The studies (protocol_ablation, nurd_sensitivity) are costly and run on request: plain
    ``dg.asset``."""
    return dg.asset(automation_condition=AUTOMATION, **asset_args)


def md_table(df: pd.DataFrame, floatfmt: str = ".3f", max_rows: int = 50) -> dg.MetadataValue:
    return dg.MetadataValue.md(markdown_table(df, floatfmt=floatfmt, max_rows=max_rows))


def md_image(image, alt: str) -> dg.MetadataValue:
    """A PNG (matplotlib Figure or file) embedded in Markdown metadata."""
    return dg.MetadataValue.md(markdown_image(image, alt))


def md_image_file(path) -> dg.MetadataValue:
    """A PNG file embedded in Markdown metadata, its name as the alt text."""
    return md_image(path, Path(path).stem)


def as_metadata(values: dict) -> dict:
    """Plain metadata (stragglers.reports.evaluation_summary) as Dagster's: Markdown text as Markdown,
    a ``Url`` as a link, a path as a path, dicts as JSON, other values as they are."""
    return {k: _metadata_value(v) for k, v in values.items()}


def _metadata_value(v):
    if isinstance(v, Markdown):
        return dg.MetadataValue.md(v)
    if isinstance(v, Url):
        return dg.MetadataValue.url(v)
    if isinstance(v, Path):
        return dg.MetadataValue.path(str(v))
    return dg.MetadataValue.json(v) if isinstance(v, dict) else v


def report_metadata(result: dict, tables_left_out: tuple[str, ...] = ()) -> dict:
    """A system's written report (``{"report": path, "tables": {name: frame}, "figures": {name: png}}``)
    as metadata: the path, every table but ``tables_left_out``, every figure (``plot_<name>``)."""
    meta = {"report": dg.MetadataValue.path(str(result["report"]))}
    meta |= {name: md_table(df, max_rows=60) for name, df in result["tables"].items() if name not in tables_left_out}
    return meta | {f"plot_{name}": md_image_file(p) for name, p in result["figures"].items()}


def prepare(con: duckdb.DuckDBPyConnection, nurd: PipelineSettings) -> None:
    """The run's DuckDB options (the one place they are set): memory limit, threads, spill directory;
    and staging views that read this run's trace (``restage_if_another_trace``)."""
    s = nurd.settings()
    configure(con, memory_limit=s.duckdb_memory_limit, threads=s.duckdb_threads or None,
              temp_directory=str(s.data_path / "duckdb_tmp"), slice_rows=s.duckdb_slice_rows)
    restage_if_another_trace(con, nurd)


#: The asset that writes each table or view of the warehouse: what a stale or missing table asks to
#: materialize (the domain's StaleTableError names the table only)
PRODUCED_BY = {
    **{v: "staged_trace" for v in (*GOOGLE_VIEWS, *ALIBABA_VIEWS, "stg_batch_instance", "job_candidates")},
    "task_lifecycle": "jobs", "jobs": "jobs", "usage_windows": "tasks", "task_outcomes": "tasks", "tasks": "tasks",
    "selection_funnel": "selection_funnel", "job_checkpoints": "checkpoint_features",
    "event_features": "checkpoint_features", "task_attempts": "checkpoint_features",
    "job_runs": "checkpoint_features", "machine_streams": "checkpoint_features",
    "checkpoint_features": "checkpoint_features", "quarantine": "staged_trace",
    "reexecution_pairs": "reexecutions",
    "operator_tasks": "checkpoint_features", "operator_checkpoints": "checkpoint_features",
    "operator_event_features": "checkpoint_features",
    "operator_checkpoint_features": "checkpoint_features",
    "job_metrics": "nurd_eval", "predictions": "nurd_eval", "hound_job_causes": "hound_job_causes",
    "hound_inputs": "hound_profiles",
    **dict.fromkeys(SIMULATION_TABLES, "completion_times"), **dict.fromkeys(BUDGET_TABLES, "operator_budgets"),
    "comparison": "comparison_tables",
}
#: how to rebuild what the report reads, in the order a run materializes it
REPORT_SELECTION = "completion_times,operator_budgets,comparison_tables"


def what_to_materialize(e: StaleTableError) -> StaleTableError:
    """``e`` with the asset that builds its table and the command that does it."""
    asset = PRODUCED_BY.get(e.table)
    if asset is None:
        return StaleTableError(e.table, f"{e.why}: materialize the assets upstream of this one first")
    select = REPORT_SELECTION if asset in REPORT_SELECTION.split(",") else f"*{asset}"
    return StaleTableError(e.table, f"{e.why}: materialize asset {asset} first (dagster asset materialize -m "
                                    f"pipeline --select '{select}')")


@contextmanager
def connected(nurd: PipelineSettings, resource: DuckDBResource) -> Iterator[duckdb.DuckDBPyConnection]:
    """A connection to the run's warehouse, prepared (``prepare``): what the assets build and read the
    tables through. A stale or missing table stops the step naming the asset to materialize."""
    with resource.get_connection() as con:
        prepare(con, nurd)
        try:
            yield con
        except StaleTableError as e:
            raise what_to_materialize(e) from e


def restage_if_another_trace(con: duckdb.DuckDBPyConnection, nurd: PipelineSettings) -> bool:
    """The stg_* views are one set per warehouse and read the raw files of the trace staged last.
    A warehouse holds several traces (trace_realism compares two), so a step of trace A run after
    trace B was staged would read B's files: here the views are pointed back at this run's trace
    (views only, cheap) and the log says so. Returns whether it re-staged."""
    s = nurd.selection()
    if s.format.read_in_place:
        return False    # read where it lies, staged into tables of its own: nothing to point back
    view = GOOGLE_VIEWS[0] if s.is_google_format else "stg_batch_instance"
    row = con.execute("SELECT sql FROM duckdb_views() WHERE view_name = ? AND NOT internal", [view]).fetchone()
    ours = str(nurd.raw_path.resolve()) + os.sep
    raw_root = str(nurd.raw_path.resolve().parent) + os.sep
    if row is None or raw_root not in row[0] or ours in row[0] or not nurd.raw_path.is_dir():
        return False    # not staged yet, not reading a raw trace directory, or already this trace
    dg.get_dagster_logger().info(f"the staging views read another trace than {nurd.trace}: re-staged them "
                                 f"over {nurd.raw_path}")
    stage_trace(con, nurd.raw_path, s)
    return True


def preview(con: duckdb.DuckDBPyConnection, table: str, trace: str, n: int = 10) -> dg.MetadataValue:
    return md_table(con.execute(f"SELECT * FROM {table} WHERE trace = ? LIMIT {n}", [trace]).df())


def evaluation_tables_asset(name: str, derived: Derived, compute, tables: tuple[str, ...], shown: tuple[str, ...],
                            description: str) -> dg.AssetsDefinition:
    """An asset whose tables are computed from the evaluations (nurd_eval, baseline_eval: the simulations,
    the budgets): ``compute(con, settings, log)`` runs and returns one frame per name of ``tables``, and
    writes them, unless they are current (decided by stragglers/warehouse/freshness.py). Its metadata
    counts every table's rows and shows the frames of ``shown`` when it computed them; its data version
    is the digest of the inputs."""
    @automated_asset(name=name, deps=["nurd_eval", "baseline_eval"], group_name="evaluation",
                     kinds={"python", "duckdb"}, description=description)
    def step(context: dg.AssetExecutionContext, nurd: PipelineSettings,
             duckdb: DuckDBResource) -> dg.MaterializeResult:
        s = nurd.settings()
        with connected(nurd, duckdb) as con:
            kept, version = build_unless_current(con, derived, s, lambda: compute(con, s, context.log.info))
        if not kept.rebuilt:
            context.log.info(f"{name}: up to date (same evaluations, tables and settings): not rebuilt")
        meta = {"rebuilt": kept.rebuilt, **{f"{t}_rows": n for rows in kept.rows.values() for t, n in rows.items()}}
        computed = dict(zip(tables, kept.computed)) if kept.computed is not None else {}
        meta |= {t: md_table(computed[t], max_rows=200) for t in shown if computed.get(t) is not None}
        return dg.MaterializeResult(metadata=meta, data_version=dg.DataVersion(version))

    return step


def google_format(s) -> bool:
    """Whether the configured trace has the Google 2011 tables (events per attempt, machines, usage)."""
    return s.is_google_format


def format_only(applies, why: str):
    """An asset that applies to some traces only (``applies(selection settings)``): on another trace it
    does nothing and its metadata says so, ``not applicable to <trace>: <why>`` (a normal situation, not
    an error: the systems that apply still run). The checks on the asset inherit the rule and the reason."""
    def decorate(compute):
        @functools.wraps(compute)    # Dagster reads the parameters (context, resources) of ``compute``
        def applicable_only(*args, **resources):
            s = resources["nurd"].selection()
            if not applies(s):
                return dg.MaterializeResult(metadata={"note": f"not applicable to {s.trace}: {why}"})
            return compute(*args, **resources)
        # declared on the asset once: its checks (assets/checks.py) take the same rule and reason
        applicable_only.applies, applicable_only.not_applicable_because = applies, why
        return applicable_only
    return decorate


def google_format_only(why: str):
    """``format_only`` for a system that reads the Google 2011 tables."""
    return format_only(google_format, why)
