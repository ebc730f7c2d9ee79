"""Node ranking on the warehouse: SQL inputs (sql/machines.sql, sql/task_attempts.sql,
sql/node_task_durations.sql), then the Python tables node_indicators and node_fits."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import duckdb
import pandas as pd

from stragglers.nodes.ranking import node_fits, node_indicators, sample_nodes
from stragglers.settings.nodes import NodeSettings
from stragglers.settings import SelectionSettings
from stragglers.warehouse import locate
from stragglers.warehouse.build import build_task_attempts
from stragglers.warehouse.locate import TraceFormatError
from stragglers.warehouse.read_errors import located_errors
from stragglers.warehouse.runner import build_table, replace_trace_frame
from stragglers.warehouse.staging import create_google_view
from stragglers.warehouse.storage import table_exists, transaction


def stage_machine_events(con: duckdb.DuckDBPyConnection, raw_dir: Path, settings: SelectionSettings) -> bool:
    """The stg_machine_events view where the trace has machine_events (False where not:
    a partial mirror without it is normal; capacities are then unknown)."""
    raw_dir = Path(raw_dir).resolve()
    if not any((raw_dir / "machine_events").glob("part-*-of-*.csv.gz")):
        return False
    create_google_view(con, "machine_events", raw_dir)
    # a NaN or an infinity in a capacity, or an event twice: located (fail) or quarantined, as for the
    # other tables (machines.sql then reads only finite capacities and counts a removal once)
    first_only = settings.on_bad_rows != "quarantine"
    with located_errors(con, "machines"):
        rows = locate.value_anomalies(con, ("stg_machine_events",), first_only=first_only)
    if rows and first_only:
        raise TraceFormatError("building machines: " + rows[0].message())
    with transaction(con):
        locate.quarantine_rows(con, settings.trace, "machines", rows)
    return True


def build_attempts(con: duckdb.DuckDBPyConnection, raw_dir: Path, settings: SelectionSettings) -> dict[str, int]:
    """``machines`` (where machine_events exists) and ``task_attempts`` of every job."""
    counts = {}
    if stage_machine_events(con, raw_dir, settings):
        counts["machines"] = build_table(con, "machines", settings)
    counts["task_attempts"] = build_task_attempts(con, settings)   # current when the features built it
    return counts


def machines_frame(con: duckdb.DuckDBPyConnection, trace: str) -> pd.DataFrame | None:
    if not table_exists(con, "machines"):
        return None
    df = con.execute("SELECT machine_id, platform_id, cpus, memory FROM machines WHERE trace = ?", [trace]).df()
    return df if len(df) else None


def build_node_ranking(con: duckdb.DuckDBPyConnection, selection: SelectionSettings, settings: NodeSettings,
                       log: Callable[[str], None] = print) -> dict[str, int]:
    """node_task_durations (SQL) -> node_indicators (with the P-cores level) and node_fits."""
    trace = selection.trace
    counts = {"node_task_durations": build_table(con, "node_task_durations", selection)}
    durations = con.execute("SELECT machine_id, z FROM node_task_durations WHERE trace = ?", [trace]).df()
    ind = node_indicators(durations, settings)
    log(f"{len(ind)} of {durations.machine_id.nunique()} machines have >= {settings.min_tasks_per_node} tasks")
    counts["node_indicators"] = replace_trace_frame(con, "node_indicators", ind, trace)
    nodes = sample_nodes(ind, machines_frame(con, trace), settings)
    log(f"fitting the 9 distributions on {len(nodes)} nodes")
    fits = node_fits(durations, nodes, log=log)
    counts["node_fits"] = replace_trace_frame(con, "node_fits", fits, trace) if len(fits) else 0
    return counts
