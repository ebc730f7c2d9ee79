"""DuckDB's errors on reading, said plainly: a malformed raw file as a TraceFormatError naming
the file and line, a missing table as a StaleTableError naming the asset to materialize."""

from __future__ import annotations

import re
from contextlib import contextmanager

import duckdb

from stragglers.warehouse import locate
from stragglers.warehouse.ledger import StaleTableError
from stragglers.warehouse.sql_files import ALIBABA_VIEWS, GOOGLE_VIEWS


@contextmanager
def located_errors(con: duckdb.DuckDBPyConnection, what: str):
    """Turn DuckDB's errors on reading the raw files into a TraceFormatError naming the file and
    line (and a missing table into one naming the asset to materialize)."""
    try:
        yield
    except duckdb.CatalogException as e:
        missing = missing_upstream(e)
        if missing is None:
            raise
        raise missing from e
    except (duckdb.ConversionException, duckdb.InvalidInputException, duckdb.IOException) as e:
        located = locate.explain(con, e, what)   # which file and line, and what to do
        if located is None:
            raise
        raise located from e


# the asset that writes each table or view (what to materialize when it is missing)
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
}


_MISSING = re.compile(r"Table with name (\w+) does not exist")


def missing_upstream(e: duckdb.Error) -> StaleTableError | None:
    """'Table with name X does not exist' as an error naming the asset to materialize."""
    m = _MISSING.search(str(e))
    if not m:
        return None
    name = m.group(1)
    asset = PRODUCED_BY.get(name, "the upstream assets")
    return StaleTableError(f"table {name} does not exist in the warehouse: materialize asset {asset} first "
                           f"(e.g. dagster asset materialize -m pipeline --select '*{asset}')")
