"""Great Expectations suites of the warehouse's tables (``SUITES``), the expectations per checked table.

Plain Python, no Dagster.  Suites (``SUITES``) are functions ``(params, columns) -> list[Frame]``.  A suite
may validate more than one DataFrame: the table itself (optionally with helper
columns) and derived aggregates (e.g. one row per job for the straggler share).
Each frame becomes its own GX expectation suite named ``<suite>[__<trace>][__<frame>]``
(run by ``stragglers.warehouse.validation.validate_table``).
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import pandas as pd

from stragglers.warehouse.gx_context import _gxe
from stragglers.settings.warehouse import WarehouseSettings
from stragglers.trace_formats import FORMATS, GOOGLE_FEATURES, RAW_COLUMNS

__all__ = [
    "DEFAULT_PARAMS",
    "SUITES",
    "WAREHOUSE_SUITES",
    "suite_summary",
    "Frame",
]

DEFAULT_PARAMS: dict[str, Any] = {
    # the pipeline's settings (stragglers/settings/__init__.py); the checks pass the run's values
    "min_tasks": WarehouseSettings.model_fields["min_tasks"].default,  # jobs: n_tasks >= min_tasks; tasks: sizes the global share tolerance
    "quantile": WarehouseSettings.model_fields["quantile"].default,  # straggler = latency above the per-job q-quantile
    "share_tol": 0.03,  # floor of the straggler-share tolerance
    "share_slack_tasks": 2,  # per-job tolerance is max(share_tol, slack / n_tasks)
    "straggler_share_mostly": 1.0,  # fraction of jobs that must be within tolerance
    "partial_unexpected_count": 5,  # how many failing values to report per expectation
}

INT_DTYPES = [
    "int64", "Int64", "int32", "Int32", "int16", "Int16", "int8", "Int8",
    "uint64", "UInt64", "uint32", "UInt32", "uint16", "UInt16", "uint8", "UInt8",
]

RAW_JOB_EVENTS_COLUMNS = list(RAW_COLUMNS["stg_job_events"])
RAW_TASK_EVENTS_COLUMNS = list(RAW_COLUMNS["stg_task_events"])
RAW_TASK_USAGE_KEYS = ["start_time", "end_time", "job_id", "task_index"]
RAW_TASK_USAGE_COLUMNS = [*RAW_TASK_USAGE_KEYS, "machine_id", "cpu_rate"]
# Google clusterdata-2011-2 resource-usage measurements, checked >= 0 when the
# column is present (names of the stg_task_usage view plus the long schema names).
RAW_TASK_USAGE_VALUES = [
    "cpu_rate", "canonical_memory", "assigned_memory", "unmapped_page_cache",
    "total_page_cache", "maximum_memory", "disk_io_time", "local_disk_space",
    "maximum_cpu_rate", "maximum_disk_io_time", "cpi", "mai", "sample_portion",
    "sampled_cpu_usage",
    "canonical_memory_usage", "assigned_memory_usage", "maximum_memory_usage",
    "local_disk_space_usage", "cycles_per_instruction", "memory_accesses_per_instruction",
]


# --------------------------------------------------------------------------- #
# Suite definitions
# --------------------------------------------------------------------------- #
@dataclass
class Frame:
    """One DataFrame validated against one GX expectation suite.

    ``derive`` maps the (fetched, trace-filtered) table to the frame to validate
    (``None`` = the table itself).  ``index_columns`` identify failing rows in
    the report (GX ``unexpected_index_column_names``; columns absent from the
    frame are ignored).
    """

    name: str | None
    expectations: list
    derive: Callable[[pd.DataFrame], pd.DataFrame] | None = None
    index_columns: list[str] = field(default_factory=list)


def _rows_nonempty():
    return _gxe().ExpectTableRowCountToBeBetween(min_value=1)


def _has_columns(cols):
    # exact_match=False: the listed columns must all exist; extra columns are fine.
    return _gxe().ExpectTableColumnsToMatchSet(column_set=list(cols), exact_match=False)


def _not_null(cols):
    return [_gxe().ExpectColumnValuesToNotBeNull(column=c) for c in cols]


def _is_int(cols):
    return [_gxe().ExpectColumnValuesToBeInTypeList(column=c, type_list=INT_DTYPES) for c in cols]


def _between(col, lo=None, hi=None, **kw):
    # GX column-map expectations skip NULLs, i.e. "where present".
    return _gxe().ExpectColumnValuesToBeBetween(column=col, min_value=lo, max_value=hi, **kw)


def _in_range(col, lo, hi):
    return _gxe().ExpectColumnValuesToBeInSet(column=col, value_set=list(range(lo, hi + 1)))


def _raw_events_suite(expected_columns: list[str], keys: list[str], coded: tuple[str, int, int]):
    """The suite of one raw event table: its columns, an integer time >= 0, the keys, time and
    event type (0..8) present, and ``coded`` (column, lo, hi) in lo..hi; failing rows named by
    the keys and time."""
    def suite(params: dict, columns: list[str]) -> list[Frame]:
        e = [
            _rows_nonempty(),
            _has_columns(expected_columns),
            *_is_int(["time"]),
            *_not_null([*keys, "time", "event_type"]),
            _in_range("event_type", 0, 8),
            _between("time", 0),
            _in_range(*coded),
        ]
        return [Frame(None, e, index_columns=[*keys, "time"])]
    return suite


suite_raw_job_events = _raw_events_suite(RAW_JOB_EVENTS_COLUMNS, ["job_id"], ("scheduling_class", 0, 3))
suite_raw_task_events = _raw_events_suite(RAW_TASK_EVENTS_COLUMNS, ["job_id", "task_index"], ("priority", 0, 11))


def suite_raw_task_usage(params: dict, columns: list[str]) -> list[Frame]:
    gxe = _gxe()
    e = [
        _rows_nonempty(),
        _has_columns(RAW_TASK_USAGE_COLUMNS),
        *_is_int(["start_time", "end_time"]),
        *_not_null(RAW_TASK_USAGE_KEYS),
        gxe.ExpectColumnPairValuesAToBeGreaterThanB(
            column_A="end_time", column_B="start_time", or_equal=True
        ),
        _between("start_time", 0),
        _between("end_time", 0),
    ]
    usage = params.get("usage_columns", RAW_TASK_USAGE_VALUES)
    e += [_between(c, 0) for c in usage if c in columns]
    return [Frame(None, e, index_columns=["job_id", "task_index", "start_time"])]


def suite_jobs(params: dict, columns: list[str]) -> list[Frame]:
    """n_tasks >= min_tasks, unique job ids."""
    gxe = _gxe()
    e = [
        gxe.ExpectTableRowCountToBeBetween(min_value=1),
        _has_columns(["trace", "job_id", "n_tasks", "n_finished"]),
        *_not_null(["trace", "job_id", "n_tasks"]),
        _between("n_tasks", params["min_tasks"]),
        _between("n_finished", 0),
        gxe.ExpectColumnPairValuesAToBeGreaterThanB(
            column_A="n_tasks", column_B="n_finished", or_equal=True
        ),
        gxe.ExpectCompoundColumnsToBeUnique(column_list=["trace", "job_id"]),
    ]
    return [Frame(None, e, index_columns=["trace", "job_id"])]


def straggler_share_per_job(tasks: pd.DataFrame, params: dict) -> pd.DataFrame:
    """One row per (trace, job_id): n_tasks, n_stragglers, straggler_share, ``straggler_share_untied``
    and ``straggler_share_z`` = (untied share - (1-q)) / max(share_tol, slack/n_tasks).

    A label ``latency >= quantile`` takes every task tied at the threshold: on a trace of coarse
    times (Spark's milliseconds, for stages of tasks of a few ms) a tie of many tasks there moves the
    share by the tie's size, which no label can avoid. The untied share is the share nearest 1-q that
    breaking that one tie gives (from the share less the tied stragglers but one, up to the share);
    without ties it is the share itself, so a label against another quantile still fails."""
    q = float(params["quantile"])
    keys = [k for k in ("trace", "job_id") if k in tasks.columns]
    if not keys or "is_straggler" not in tasks.columns:
        return pd.DataFrame(columns=[*keys, "n_tasks", "n_stragglers", "straggler_share"])
    s = tasks["is_straggler"].astype("boolean").fillna(False).astype(int)
    agg = (
        s.groupby([tasks[k] for k in keys], dropna=False)
        .agg(n_tasks="size", n_stragglers="sum")
        .reset_index()
    )
    agg["straggler_share"] = agg["n_stragglers"] / agg["n_tasks"]
    tied = _tied_at_threshold(tasks, keys, s)
    low = (agg["n_stragglers"] - (tied.reindex(pd.MultiIndex.from_frame(agg[keys])).fillna(1).to_numpy() - 1)
           if len(tied) else agg["n_stragglers"]) / agg["n_tasks"]
    agg["straggler_share_untied"] = np.clip(1.0 - q, low, agg["straggler_share"])
    tol = np.maximum(float(params["share_tol"]), float(params["share_slack_tasks"]) / agg["n_tasks"])
    agg["straggler_share_z"] = (agg["straggler_share_untied"] - (1.0 - q)) / tol
    return agg


def _tied_at_threshold(tasks: pd.DataFrame, keys: list[str], straggler: pd.Series) -> pd.Series:
    """Per job (indexed by ``keys``): how many stragglers share the job's smallest straggler latency."""
    if "latency_s" not in tasks.columns or not straggler.any():
        return pd.Series(dtype=float)
    st = tasks.loc[straggler.astype(bool).to_numpy(), [*keys, "latency_s"]]
    smallest = st.groupby(keys)["latency_s"].transform("min")
    tied = st[st["latency_s"] == smallest].groupby(keys).size().astype(float)
    if len(keys) == 1:
        tied.index = pd.MultiIndex.from_arrays([tied.index], names=keys)
    return tied


def suite_tasks(params: dict, columns: list[str]) -> list[Frame]:
    """Latency > 0, unique (job, task), straggler share close to 1 - quantile per job.

    Straggler share: with p = q-quantile by linear interpolation and
    straggler = latency > p (or >= p), a job of n tasks without ties has
    ceil((n-1)(1-q)) or one more/fewer stragglers, i.e. the share deviates from
    1-q by at most ~1/n (ties at the top only lower a '>' share).  Two checks on
    the per-job aggregate:

    * ``straggler_share_untied`` (``straggler_share_per_job``: the share with a tie at the
      threshold broken) in [(1-q) - T, (1-q) + T], T = max(share_tol,
      slack/min_tasks): one bound sized for the smallest admissible job;
    * ``straggler_share_z`` in [-1, 1]: the per-job tolerance
      max(share_tol, slack/n_tasks) (slack = 2 tasks), tight for large jobs.

    ``straggler_share_mostly`` (< 1) tolerates a fraction of tie-heavy jobs.
    """
    gxe = _gxe()
    q = float(params["quantile"])
    mostly = float(params["straggler_share_mostly"])
    tol = max(float(params["share_tol"]), float(params["share_slack_tasks"]) / float(params["min_tasks"]))
    rows = [
        _rows_nonempty(),
        _has_columns(["trace", "job_id", "task_id", "latency_s", "evictions", "failures", "is_straggler"]),
        *_not_null(["trace", "job_id", "task_id", "latency_s", "is_straggler"]),
        _between("latency_s", 0, strict_min=True),
        _between("evictions", 0),
        _between("failures", 0),
        gxe.ExpectCompoundColumnsToBeUnique(column_list=["trace", "job_id", "task_id"]),
    ]
    per_job = [
        _rows_nonempty(),
        _between("straggler_share_untied", (1 - q) - tol, (1 - q) + tol, mostly=mostly),
        _between("straggler_share_z", -1.0, 1.0, mostly=mostly),
    ]
    return [
        Frame(None, rows, index_columns=["trace", "job_id", "task_id"]),
        Frame(
            "per_job",
            per_job,
            derive=lambda df: straggler_share_per_job(df, params),
            index_columns=["trace", "job_id", "n_tasks", "straggler_share", "straggler_share_untied"],
        ),
    ]


def with_checkpoint_step(df: pd.DataFrame, order_by: str | None = None) -> pd.DataFrame:
    """Add ``checkpoint_step`` = checkpoint_s minus the previous row's value of the
    same (trace, job_id, task_id), in table order (or sorted by ``order_by``);
    NULL on a task's first row."""
    out = df.sort_values(order_by, kind="stable") if order_by else df.copy()
    keys = [k for k in ("trace", "job_id", "task_id") if k in out.columns]
    if "checkpoint_s" in out.columns and keys:
        cp = pd.to_numeric(out["checkpoint_s"], errors="coerce").astype("float64")
        out["checkpoint_step"] = cp.groupby([out[k] for k in keys], dropna=False).diff()
    return out


def suite_checkpoint_features(params: dict, columns: list[str]) -> list[Frame]:
    """No NULL after imputation, normalized values in [0, 1], checkpoints increasing (on the operator's clock's
    features where the paper's grid is not built: Spark)."""
    features = list(params["features"])
    # Order of checkpoints within a task: by the checkpoint index `k` when the
    # table has it (sql/checkpoint_features.sql), else table order; override
    # with params["checkpoint_order_by"] (None = table order).
    order_by = params.get("checkpoint_order_by", "k")
    if order_by is not None and order_by not in columns:
        order_by = None
    e = [
        _rows_nonempty(),
        _has_columns(["trace", "job_id", "task_id", "checkpoint_s", *features]),
        *_not_null(["trace", "job_id", "task_id", "checkpoint_s"]),
        _between("checkpoint_s", 0),
        # strictly increasing checkpoints per (job, task): every step > 0
        _between("checkpoint_step", 0, strict_min=True),
    ]
    for f in features:
        e += [*_not_null([f]), _between(f, 0.0, 1.0)]
    return [
        Frame(
            None,
            e,
            derive=lambda df: with_checkpoint_step(df, order_by),
            index_columns=["trace", "job_id", "task_id", "k", "checkpoint_s"],
        )
    ]


SUITES: dict[str, Callable[[dict, list[str]], list[Frame]]] = {
    "raw_job_events": suite_raw_job_events,
    "raw_task_events": suite_raw_task_events,
    "raw_task_usage": suite_raw_task_usage,
    "jobs": suite_jobs,
    "tasks": suite_tasks,
    "checkpoint_features": suite_checkpoint_features,
}
# The warehouse's own suites; the diagnosis, nodes and failures stages add theirs to SUITES on import.
WAREHOUSE_SUITES = tuple(SUITES)


def suite_summary(name: str) -> str:
    """What suite ``name`` holds its table to, in a line: its docstring's first paragraph ('' without one)."""
    doc = inspect.getdoc(SUITES[name]) or ""
    return " ".join(doc.split("\n\n")[0].split())


# checkpoint features default to the trace's feature set (validate_table)
def _default_features(trace: str | None) -> list[str]:
    return list(FORMATS[trace].columns if trace in FORMATS else GOOGLE_FEATURES)
