"""GX suites of the node-ranking tables, registered in the warehouse's suite registry
(stragglers/warehouse/suites.py SUITES) under their table names."""

from __future__ import annotations

from stragglers.warehouse.gx_context import _gxe
from stragglers.warehouse.suites import SUITES, Frame, _between, _has_columns, _not_null, _rows_nonempty


def suite_task_attempts(params: dict, columns: list[str]) -> list[Frame]:
    """Attempt >= 1, end after start, terminal end event, unique (job, task, attempt)."""
    gxe = _gxe()
    e = [
        _rows_nonempty(),
        _has_columns(["trace", "job_id", "task_id", "attempt", "start_us", "end_us", "end_event"]),
        *_not_null(["trace", "job_id", "task_id", "attempt", "start_us"]),
        _between("attempt", 1),
        _between("end_event", 2, 6),
        gxe.ExpectColumnPairValuesAToBeGreaterThanB(column_A="end_us", column_B="start_us", or_equal=True,
                                                    ignore_row_if="either_value_is_missing"),
        gxe.ExpectCompoundColumnsToBeUnique(column_list=["trace", "job_id", "task_id", "attempt"]),
    ]
    return [Frame(None, e, index_columns=["trace", "job_id", "task_id", "attempt"])]


def suite_node_task_durations(params: dict, columns: list[str]) -> list[Frame]:
    """Durations >= 0, z defined, one row per finished task."""
    gxe = _gxe()
    e = [
        _rows_nonempty(),
        _has_columns(["trace", "job_id", "task_id", "machine_id", "duration_s", "z"]),
        *_not_null(["trace", "job_id", "task_id", "machine_id", "duration_s", "z"]),
        _between("duration_s", 0),
        gxe.ExpectCompoundColumnsToBeUnique(column_list=["trace", "job_id", "task_id"]),
    ]
    return [Frame(None, e, index_columns=["trace", "job_id", "task_id"])]


def suite_node_indicators(params: dict, columns: list[str]) -> list[Frame]:
    """One row per ranked machine, n_tasks >= node_min_tasks, interval lo <= hi, level >= 0."""
    gxe = _gxe()
    e = [
        _rows_nonempty(),
        _has_columns(["trace", "machine_id", "n_tasks", "mean_z", "ci_lo", "ci_hi", "p_extreme", "level"]),
        *_not_null(["trace", "machine_id", "n_tasks", "mean_z", "interval_lo", "interval_hi", "level"]),
        _between("n_tasks", params.get("min_tasks_per_node", 3)),
        _between("p_extreme", 0.0, 1.0),
        _between("level", 0),
        gxe.ExpectColumnPairValuesAToBeGreaterThanB(column_A="interval_hi", column_B="interval_lo", or_equal=True),
        gxe.ExpectColumnValuesToBeUnique(column="machine_id"),
    ]
    return [Frame(None, e, index_columns=["trace", "machine_id"])]


SUITES.update({
    "task_attempts": suite_task_attempts,
    "node_task_durations": suite_node_task_durations,
    "node_indicators": suite_node_indicators,
})
