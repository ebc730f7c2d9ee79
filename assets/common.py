"""Helpers shared by the asset modules (metadata rendering, DuckDB)."""


import dagster as dg
import duckdb
import pandas as pd

from stragglers.reports.render import markdown_image, markdown_table
from stragglers.warehouse.build import configure
from assets.resources import NurdSettings

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


def md_table(df: pd.DataFrame, floatfmt: str = ".3f", max_rows: int = 50) -> dg.MetadataValue:
    return dg.MetadataValue.md(markdown_table(df, floatfmt=floatfmt, max_rows=max_rows))


def md_image(image, alt: str) -> dg.MetadataValue:
    """A PNG (matplotlib Figure or file) embedded in Markdown metadata."""
    return dg.MetadataValue.md(markdown_image(image, alt))


def prepare(con: duckdb.DuckDBPyConnection, nurd: NurdSettings) -> None:
    """The run's DuckDB options (the one place they are set): memory limit, threads, spill directory."""
    s = nurd.settings()
    configure(con, memory_limit=s.duckdb_memory_limit, threads=s.duckdb_threads or None,
              temp_directory=str(s.data_path / "duckdb_tmp"))


def preview(con: duckdb.DuckDBPyConnection, table: str, trace: str, n: int = 10) -> dg.MetadataValue:
    return md_table(con.execute(f"SELECT * FROM {table} WHERE trace = ? LIMIT {n}", [trace]).df())
