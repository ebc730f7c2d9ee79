"""GX suites of the failure-prediction tables, registered in the warehouse's suite registry
(stragglers/warehouse/suites.py SUITES) under their table names."""

from __future__ import annotations

from stragglers.warehouse.gx_context import _gxe
from stragglers.warehouse.suites import SUITES, Frame, _between, _has_columns, _not_null, _rows_nonempty


def suite_failure_jobs(params: dict, columns: list[str]) -> list[Frame]:
    """One row per job, n_tasks >= 1, job end event a terminal event where known."""
    e = [_rows_nonempty(),
         _has_columns(["trace", "job_id", "job_end_event", "n_tasks", "task_fail_flag", "cpu_request"]),
         *_not_null(["trace", "job_id", "n_tasks", "task_fail_flag"]),
         _between("n_tasks", 1), _between("job_end_event", 2, 6),
         _gxe().ExpectColumnValuesToBeUnique(column="job_id")]
    return [Frame(None, e, index_columns=["trace", "job_id"])]


def suite_failure_tasks(params: dict, columns: list[str]) -> list[Frame]:
    """One row per task, attempts >= failed attempts >= 0."""
    e = [_rows_nonempty(),
         _has_columns(["trace", "job_id", "task_id", "final_event", "attempts", "attempt_fail_flag"]),
         *_not_null(["trace", "job_id", "task_id", "attempts", "n_tasks"]),
         _between("attempts", 1), _between("final_event", 2, 6),
         _gxe().ExpectColumnPairValuesAToBeGreaterThanB(column_A="attempts", column_B="failed_attempts",
                                                        or_equal=True),
         _gxe().ExpectCompoundColumnsToBeUnique(column_list=["trace", "job_id", "task_id"])]
    return [Frame(None, e, index_columns=["trace", "job_id", "task_id"])]


def suite_failure_attempts(params: dict, columns: list[str]) -> list[Frame]:
    """One row per attempt, durations >= 0, PastAttemptsFlag set."""
    e = [_rows_nonempty(),
         _has_columns(["trace", "job_id", "task_id", "attempt", "end_event", "past_attempts_flag"]),
         *_not_null(["trace", "job_id", "task_id", "attempt", "past_attempts_flag"]),
         _between("duration_s", 0),
         _gxe().ExpectCompoundColumnsToBeUnique(column_list=["trace", "job_id", "task_id", "attempt"])]
    return [Frame(None, e, index_columns=["trace", "job_id", "task_id", "attempt"])]


def suite_failure_predictions(params: dict, columns: list[str]) -> list[Frame]:
    """Precision, recall and thresholds in [0, 1]."""
    e = [_rows_nonempty(), _has_columns(["trace", "target", "scenario", "available"]),
         *_not_null(["trace", "target", "scenario", "available"]),
         _between("precision", 0.0, 1.0), _between("recall", 0.0, 1.0), _between("threshold", 0.0, 1.0)]
    return [Frame(None, e, index_columns=["trace", "target", "scenario", "sampling_ratio", "threshold"])]


def suite_cloning_tasks(params: dict, columns: list[str]) -> list[Frame]:
    """One row per (threshold, clones, task), completion times >= 0."""
    e = [_rows_nonempty(),
         _has_columns(["trace", "threshold", "clones", "job_id", "task_id", "original_s", "replay_s"]),
         *_not_null(["trace", "threshold", "clones", "original_s", "replay_s", "relative_completion"]),
         _between("relative_completion", 0.0), _between("replay_s", 0.0), _between("clones", 1),
         _gxe().ExpectCompoundColumnsToBeUnique(column_list=["trace", "threshold", "clones", "job_id", "task_id"])]
    return [Frame(None, e, index_columns=["trace", "threshold", "clones", "job_id", "task_id"])]


SUITES.update({
    "failure_jobs": suite_failure_jobs,
    "failure_tasks": suite_failure_tasks,
    "failure_attempts": suite_failure_attempts,
    "failure_predictions": suite_failure_predictions,
    "cloning_tasks": suite_cloning_tasks,
})
