"""DuckDB's errors on reading, said plainly: a malformed raw file as a TraceFormatError naming
the file and line, a missing table as a StaleTableError naming the table."""

from __future__ import annotations

from contextlib import contextmanager

import duckdb

from stragglers.warehouse import locate
from stragglers.warehouse.freshness import missing_table


@contextmanager
def located_errors(con: duckdb.DuckDBPyConnection, what: str):
    """Turn DuckDB's errors on reading the raw files into a TraceFormatError naming the file and
    line (and a missing table into a StaleTableError naming it)."""
    try:
        yield
    except duckdb.CatalogException as e:
        missing = missing_table(e)
        if missing is None:
            raise
        raise missing from e
    except (duckdb.ConversionException, duckdb.InvalidInputException, duckdb.IOException) as e:
        located = locate.explain(con, e, what)   # which file and line, and what to do
        if located is None:
            raise
        raise located from e
