"""Helpers shared by the asset modules (metadata rendering, DuckDB)."""


import dagster as dg
import duckdb
import pandas as pd

from stragglers.warehouse.build import configure
from assets.resources import NurdSettings

AUTOMATION = dg.AutomationCondition.eager()   # re-run when an upstream asset has new data


def md_table(df: pd.DataFrame, floatfmt: str = ".3f", max_rows: int = 50) -> dg.MetadataValue:
    """A Markdown table; integer columns print as integers (a float column that holds only
    whole numbers and NaN, e.g. a count read back through a NULL, prints as a count too)."""
    shown = df.head(max_rows).copy()
    for col in shown.columns:
        s = shown[col]
        if pd.api.types.is_float_dtype(s) and s.notna().any() and (s.dropna() % 1 == 0).all() \
                and (s.dropna().abs() > 1).any():      # not a 0/1 rate that happens to be whole
            shown[col] = s.astype("Int64")
    # object columns keep Python ints: tabulate would otherwise print every number with floatfmt
    text = shown.astype(object).where(shown.notna(), None).to_markdown(index=False, floatfmt=floatfmt,
                                                                        missingval="")
    if len(df) > max_rows:
        text += f"\n\n({len(df) - max_rows} more rows not shown)"
    return dg.MetadataValue.md(text)


def prepare(con: duckdb.DuckDBPyConnection, nurd: NurdSettings) -> None:
    """The run's DuckDB options (the one place they are set): memory limit, threads, spill directory."""
    s = nurd.settings()
    configure(con, memory_limit=s.duckdb_memory_limit, threads=s.duckdb_threads or None,
              temp_directory=str(s.data_path / "duckdb_tmp"))


def preview(con: duckdb.DuckDBPyConnection, table: str, trace: str, n: int = 10) -> dg.MetadataValue:
    return md_table(con.execute(f"SELECT * FROM {table} WHERE trace = ? LIMIT {n}", [trace]).df())
