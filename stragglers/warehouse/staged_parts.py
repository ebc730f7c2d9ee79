"""Which raw tables and parts a staged trace has (table ``staged_tables``): parts per table, parts
with no rows, part numbers missing below the highest present, and what the steps that need one say."""

from __future__ import annotations

import duckdb

from stragglers.warehouse.storage import table_exists, transaction


def record_staged_tables(con: duckdb.DuckDBPyConnection, trace: str, n_parts: dict[str, int],
                         empty: dict[str, int] | None = None, missing: dict[str, int] | None = None) -> None:
    """``staged_tables``: which raw tables the trace has (parts per table; parts with no rows; part
    numbers missing below the highest present), read by the steps that need one to say what they skip."""
    empty, missing = empty or {}, missing or {}
    with transaction(con):
        con.execute("CREATE TABLE IF NOT EXISTS staged_tables (trace VARCHAR, table_name VARCHAR, parts INTEGER)")
        for column in ("empty_parts", "missing_parts"):   # warehouses written before these columns
            con.execute(f"ALTER TABLE staged_tables ADD COLUMN IF NOT EXISTS {column} INTEGER DEFAULT 0")
        con.execute("DELETE FROM staged_tables WHERE trace = ?", [trace])
        con.executemany("INSERT INTO staged_tables (trace, table_name, parts, empty_parts, missing_parts) "
                        "VALUES (?, ?, ?, ?, ?)",
                        [[trace, t, int(n), empty.get(t, 0), missing.get(t, 0)] for t, n in n_parts.items()])


def missing_parts(con: duckdb.DuckDBPyConnection, trace: str, table: str) -> int:
    """Part numbers of ``table`` missing below the highest present (0 where not recorded)."""
    if not table_exists(con, "staged_tables"):
        return 0
    row = con.execute("SELECT missing_parts FROM staged_tables WHERE trace = ? AND table_name = ?",
                      [trace, table]).fetchone()
    return int(row[0] or 0) if row else 0


def parts_note(con: duckdb.DuckDBPyConnection, trace: str) -> str | None:
    """What is unusual in the trace's parts (numbers missing below the highest present, parts with
    no rows), per table; None when nothing is. Lifecycles cut by a missing task_events part are
    counted in task_lifecycle (end states schedule_not_in_mirror, lifecycle_spans_gap) and the funnel."""
    if not table_exists(con, "staged_tables"):
        return None
    rows = con.execute("SELECT table_name, parts, empty_parts, missing_parts FROM staged_tables WHERE trace = ? "
                       "AND (empty_parts > 0 OR missing_parts > 0) ORDER BY table_name", [trace]).fetchall()
    notes = [f"{table}: {parts} parts" + (f", {missing} part numbers missing below the highest present (a gap "
                                          f"or a later first part)" if missing else "")
             + (f", {empty} parts with no rows (accepted)" if empty else "") for table, parts, empty, missing in rows]
    return ("Trace " + trace + ": " + "; ".join(notes) + ". Task lifecycles cut by a missing task_events part "
            "are counted, not timed (selection_funnel: schedule_not_in_mirror, lifecycle_spans_gap).") if notes else None


def usage_absent_reason(con: duckdb.DuckDBPyConnection, trace: str) -> str | None:
    """Why the trace has no usage measurements (None when it has them): a Google mirror
    without task_usage parts. Alibaba's batch_instance carries usage in every row."""
    if not table_exists(con, "staged_tables"):
        return None
    row = con.execute("SELECT parts FROM staged_tables WHERE trace = ? AND table_name = 'task_usage'",
                      [trace]).fetchone()
    if row is None or row[0] > 0:
        return None
    return (f"trace {trace} has no task_usage parts (a partial mirror): its usage features have no value "
            f"(0 in checkpoint_features; only EV, FL and the clock are informative). The event features "
            f"(docs/EVENT_FEATURES.md) need only events: with feature_set auto, events or all every method "
            f"runs on them; with feature_set=usage the feature-based methods are skipped and only the "
            f"time-only reference rules run")
