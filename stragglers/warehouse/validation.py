"""Great Expectations (GX Core 1.x) suites for the pipeline's tables.

Plain Python, no Dagster.  Entry point::

    outcome = validate_table("tasks", con, "tasks", trace="google",
                             docs_dir=Path("data_docs"), params={"quantile": 0.9})
    outcome.success, outcome.failures, outcome.to_markdown()

``df_or_con`` is either a ``pandas.DataFrame`` or a DuckDB connection (then
``table`` names the table, fetched with ``SELECT * FROM table``; DuckDB keeps
insertion order, which the ``checkpoint_features`` monotonicity check relies on
unless the table has the checkpoint index ``k`` or ``params["checkpoint_order_by"]``
names an ordering column).

All rows are validated unless ``max_rows`` is given; a cap is always reported in
the outcome (``rows_total``/``rows_validated``/``row_cap``) and in the markdown.

Suites (``SUITES``) are functions ``(params, columns) -> list[Frame]``.  A suite
may validate more than one DataFrame: the table itself (optionally with helper
columns) and derived aggregates (e.g. one row per job for the straggler share).
Each frame becomes its own GX expectation suite named ``<suite>[__<trace>][__<frame>]``.

Data Docs: with ``docs_dir`` the GX expectation and validation-result stores are
file-backed under ``docs_dir/_gx`` and a local site writes HTML to ``docs_dir``
(``docs_dir/index.html``), so results of several suites / processes accumulate
in one index.  Without ``docs_dir`` everything stays in memory.  A fresh
ephemeral context is created per call (a few ms); calls are serialised by a
process lock and, for the docs build, a file lock on ``docs_dir``.
"""

from __future__ import annotations

import math
import os
import re
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

# GX must never phone home.  Set before great_expectations is imported.
os.environ["GX_ANALYTICS_ENABLED"] = "false"

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from stragglers.warehouse.settings import WarehouseSettings  # noqa: E402
from stragglers.trace_formats import FORMATS, GOOGLE_FEATURES, RAW_COLUMNS  # noqa: E402

try:  # POSIX file lock for the shared docs_dir (several Dagster processes).
    import fcntl
except ImportError:  # pragma: no cover - non-POSIX
    fcntl = None  # type: ignore[assignment]

__all__ = [
    "DEFAULT_PARAMS",
    "SUITES",
    "Frame",
    "ValidationOutcome",
    "validate_table",
]

DEFAULT_PARAMS: dict[str, Any] = {
    # the pipeline's settings (stragglers/settings.py); the checks pass the run's values
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


def _gxe():
    import great_expectations as gx

    return gx.expectations


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
    """One row per (trace, job_id): n_tasks, n_stragglers, straggler_share and
    ``straggler_share_z`` = (share - (1-q)) / max(share_tol, slack/n_tasks)."""
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
    tol = np.maximum(float(params["share_tol"]), float(params["share_slack_tasks"]) / agg["n_tasks"])
    agg["straggler_share_z"] = (agg["straggler_share"] - (1.0 - q)) / tol
    return agg


def suite_tasks(params: dict, columns: list[str]) -> list[Frame]:
    """Straggler share: with p = q-quantile by linear interpolation and
    straggler = latency > p (or >= p), a job of n tasks without ties has
    ceil((n-1)(1-q)) or one more/fewer stragglers, i.e. the share deviates from
    1-q by at most ~1/n (ties at the top only lower a '>' share).  Two checks on
    the per-job aggregate:

    * ``straggler_share`` in [(1-q) - T, (1-q) + T], T = max(share_tol,
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
        _between("straggler_share", (1 - q) - tol, (1 - q) + tol, mostly=mostly),
        _between("straggler_share_z", -1.0, 1.0, mostly=mostly),
    ]
    return [
        Frame(None, rows, index_columns=["trace", "job_id", "task_id"]),
        Frame(
            "per_job",
            per_job,
            derive=lambda df: straggler_share_per_job(df, params),
            index_columns=["trace", "job_id", "n_tasks", "straggler_share"],
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


# --------------------------------------------------------------------------- #
# Outcome
# --------------------------------------------------------------------------- #
@dataclass
class ValidationOutcome:
    suite: str
    success: bool
    evaluated: int
    passed: int
    failed: int
    failures: list[dict] = field(default_factory=list)
    docs_path: Path | None = None
    table: str | None = None
    trace: str | None = None
    rows_total: int = 0
    rows_validated: int = 0
    row_cap: int | None = None
    duration_s: float = 0.0

    @property
    def truncated(self) -> bool:
        return self.rows_validated < self.rows_total

    def to_markdown(self, max_failures: int = 20) -> str:
        name = self.suite + (f" ({self.trace})" if self.trace else "")
        status = "PASSED" if self.success else "FAILED"
        lines = [
            f"**GX suite `{name}`: {status}** - {self.passed}/{self.evaluated} expectations passed"
            f", {self.failed} failed; {self.rows_validated} rows validated in {self.duration_s:.2f}s.",
        ]
        if self.truncated:
            lines.append(
                f"\n> Row cap: only the first {self.rows_validated} of {self.rows_total} rows were validated "
                f"(max_rows={self.row_cap})."
            )
        if self.failures:
            lines += ["", "| expectation | column | failing | first failing values |", "|---|---|---|---|"]
            for f in self.failures[:max_failures]:
                vals = ", ".join(_short(v) for v in f.get("first_failing_values") or [])
                if not vals and f.get("observed_value") is not None:
                    vals = "observed: " + _short(f["observed_value"])
                cnt = f.get("unexpected_count")
                frac = f.get("unexpected_percent")
                failing = "" if cnt is None else f"{cnt}" + ("" if frac is None else f" ({frac:.2f}%)")
                lines.append(
                    f"| `{f['expectation']}` | {_md(f.get('column') or '')} | {failing} | {_md(vals)} |"
                )
            if len(self.failures) > max_failures:
                lines.append(f"\n... and {len(self.failures) - max_failures} more failures.")
        if self.docs_path is not None:
            lines.append(f"\nData Docs: `{self.docs_path}`")
        return "\n".join(lines)


    def explain(self, max_failures: int = 5, max_ids: int = 5) -> str:
        """One paragraph a failed check shows: each failing expectation (with its bounds), how many
        rows fail, a sample of their ids, and where the GX Data Docs page is."""
        name = self.suite + (f" ({self.trace})" if self.trace else "")
        if self.success:
            return f"GX suite {name}: all {self.evaluated} expectations passed on {self.rows_validated} rows."
        parts = []
        for f in self.failures[:max_failures]:
            bounds = {k: v for k, v in (f.get("kwargs") or {}).items()
                      if k in ("min_value", "max_value", "strict_min", "strict_max", "mostly", "value_set")}
            what = f"{f['expectation']}({f.get('column') or ''}" + (
                "".join(f", {k}={v}" for k, v in bounds.items())) + ")"
            ids = f.get("failing_rows") or []
            sample = ["/".join(f"{k} {v}" for k, v in r.items() if k != "trace") if isinstance(r, dict) else str(r)
                      for r in ids[:max_ids]]
            if not sample:
                sample = [_short(v, 60) for v in (f.get("first_failing_values") or [])[:max_ids]]
            count = f.get("unexpected_count")
            if count is not None:
                rows = f"{count} offending row(s) of {self.rows_validated}"
            else:
                rows = "observed " + _short(f.get("observed_value"), 60)
            parts.append(f"{what}: {rows}" + (f", e.g. {'; '.join(sample)}" if sample else ""))
        more = f" (and {len(self.failures) - max_failures} more)" if len(self.failures) > max_failures else ""
        docs = f" Data Docs: file://{self.docs_path}" if self.docs_path else ""
        return (f"GX suite {name} failed {self.failed} of {self.evaluated} expectations on "
                f"{'table ' + self.table if self.table else 'the data'}: " + " | ".join(parts) + more + "." + docs)


def _short(v: Any, n: int = 80) -> str:
    s = repr(v) if not isinstance(v, str) else v
    return s if len(s) <= n else s[: n - 3] + "..."


def _md(s: str) -> str:
    return s.replace("|", "\\|").replace("\n", " ")


def _plain(v: Any) -> Any:
    """numpy / pandas scalars and containers -> JSON-friendly Python values."""
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if v is None or v is pd.NA or v is pd.NaT:
        return None
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float) and math.isnan(v):
        return None
    if isinstance(v, (pd.Timestamp,)):
        return v.isoformat()
    return v


# --------------------------------------------------------------------------- #
# GX plumbing
# --------------------------------------------------------------------------- #
_LOCK = threading.RLock()


@contextmanager
def _dir_lock(docs_dir: Path | None) -> Iterator[None]:
    if docs_dir is None or fcntl is None:
        yield
        return
    docs_dir.mkdir(parents=True, exist_ok=True)
    with open(docs_dir / ".gx_lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _make_context(docs_dir: Path | None):
    import great_expectations as gx
    from great_expectations.data_context.types.base import (
        DataContextConfig,
        InMemoryStoreBackendDefaults,
        ProgressBarsConfig,
    )

    defaults = InMemoryStoreBackendDefaults(init_temp_docs_sites=False)
    stores = dict(defaults.stores)
    sites: dict = {}
    if docs_dir is not None:
        base = Path(docs_dir).resolve()
        for store_name, cls, sub in (
            (defaults.expectations_store_name, "ExpectationsStore", "expectations"),
            (defaults.validation_results_store_name, "ValidationResultsStore", "validations"),
        ):
            stores[store_name] = {
                "class_name": cls,
                "store_backend": {
                    "class_name": "TupleFilesystemStoreBackend",
                    "base_directory": str(base / "_gx" / sub),
                },
            }
        sites = {
            "local_site": {
                "class_name": "SiteBuilder",
                "show_how_to_buttons": False,
                "store_backend": {"class_name": "TupleFilesystemStoreBackend", "base_directory": str(base)},
                "site_index_builder": {"class_name": "DefaultSiteIndexBuilder"},
            }
        }
    config = DataContextConfig(
        store_backend_defaults=defaults,
        stores=stores,
        data_docs_sites=sites,
        analytics_enabled=False,
        progress_bars=ProgressBarsConfig(globally=False),
    )
    return gx.get_context(mode="ephemeral", project_config=config)


def _gx_name(*parts: str | None) -> str:
    # no dots: GX's filesystem stores turn dots in suite names into sub-folders
    return "__".join(re.sub(r"[^A-Za-z0-9_-]+", "_", p) for p in parts if p)


def _failure(er, frame_name: str | None) -> dict:
    cfg = er.expectation_config
    kw = dict(cfg.kwargs)
    res = er.result or {}
    column = kw.get("column")
    if column is None and "column_A" in kw:
        column = f"{kw['column_A']},{kw['column_B']}"
    if column is None and "column_list" in kw:
        column = ",".join(kw["column_list"])
    if column is None and "column_set" in kw:
        column = ",".join(kw["column_set"])
    out = {
        "expectation": cfg.type,
        "column": column,
        "first_failing_values": _plain(res.get("partial_unexpected_list", [])),
        "unexpected_count": _plain(res.get("unexpected_count")),
        "unexpected_percent": _plain(res.get("unexpected_percent")),
        "failing_rows": _plain(res.get("partial_unexpected_index_list", [])),
        "kwargs": _plain({k: v for k, v in kw.items() if k not in ("batch_id",)}),
    }
    if frame_name:
        out["frame"] = frame_name
    if "observed_value" in res:
        out["observed_value"] = _plain(res["observed_value"])
    if "details" in res:
        out["details"] = _plain(res["details"])
    if er.exception_info and er.exception_info.get("raised_exception"):
        out["exception"] = str(er.exception_info.get("exception_message"))
    return out


def _fetch(df_or_con, table: str | None, trace: str | None, max_rows: int | None) -> tuple[pd.DataFrame, int]:
    if isinstance(df_or_con, pd.DataFrame):
        df = df_or_con
        if trace is not None and "trace" in df.columns:
            df = df[df["trace"] == trace]
        total = len(df)
        if max_rows is not None:
            df = df.head(max_rows)
        return df.reset_index(drop=True), total
    if table is None:
        raise ValueError("validate_table: `table` is required when passing a DuckDB connection")
    con = df_or_con
    ident = ".".join('"' + p.replace('"', '""') + '"' for p in table.split("."))
    cols = [r[0] for r in con.execute(f"SELECT * FROM {ident} LIMIT 0").description]
    where, args = "", []
    if trace is not None and "trace" in cols:
        where, args = " WHERE trace = ?", [trace]
    total = con.execute(f"SELECT count(*) FROM {ident}{where}", args).fetchone()[0]
    limit = f" LIMIT {int(max_rows)}" if max_rows is not None else ""
    df = con.execute(f"SELECT * FROM {ident}{where}{limit}", args).df()
    return df, int(total)


def _default_features(trace: str | None) -> list[str]:
    return list(FORMATS[trace].columns if trace in FORMATS else GOOGLE_FEATURES)


def validate_table(
    suite: str,
    df_or_con,
    table: str | None = None,
    *,
    trace: str | None = None,
    docs_dir: Path | None = None,
    params: dict | None = None,
    max_rows: int | None = None,
) -> ValidationOutcome:
    """Validate a table (DataFrame, or DuckDB connection + ``table``) with suite
    ``SUITES[suite]``.  ``trace`` filters rows on a ``trace`` column when present
    and tags the GX names.  ``params`` override ``DEFAULT_PARAMS`` (checkpoint
    features default to the trace's feature set).  ``max_rows`` caps the rows
    validated (reported in the outcome)."""
    if suite not in SUITES:
        raise KeyError(f"unknown suite {suite!r}; known: {sorted(SUITES)}")
    t0 = time.perf_counter()
    p = {**DEFAULT_PARAMS, **(params or {})}
    if suite == "checkpoint_features" and not p.get("features"):
        p["features"] = _default_features(trace)
    docs_dir = Path(docs_dir) if docs_dir is not None else None

    df, total = _fetch(df_or_con, table, trace, max_rows)
    frames = SUITES[suite](p, list(df.columns))

    import great_expectations as gx
    from great_expectations.core.run_identifier import RunIdentifier
    from great_expectations.data_context.types.resource_identifiers import (
        ExpectationSuiteIdentifier,
    )

    failures: list[dict] = []
    evaluated = passed = 0
    docs_path: Path | None = None
    with _LOCK:
        ctx = _make_context(docs_dir)
        ds = ctx.data_sources.add_pandas("nurd")
        run_id = RunIdentifier(run_name=_gx_name(suite, trace))
        resource_ids: list = []
        for fr in frames:
            data = fr.derive(df) if fr.derive is not None else df
            name = _gx_name(suite, trace, fr.name)
            asset = ds.add_dataframe_asset(name)
            bd = asset.add_batch_definition_whole_dataframe("all")
            gsuite = ctx.suites.add_or_update(gx.ExpectationSuite(name=name, expectations=fr.expectations))
            vd = ctx.validation_definitions.add(gx.ValidationDefinition(name=name, data=bd, suite=gsuite))
            result_format = {
                "result_format": "COMPLETE",
                "partial_unexpected_count": int(p["partial_unexpected_count"]),
                "unexpected_index_column_names": [c for c in fr.index_columns if c in data.columns],
                "return_unexpected_index_query": False,
            }
            res = vd.run(batch_parameters={"dataframe": data}, result_format=result_format, run_id=run_id)
            for er in res.results:
                evaluated += 1
                if er.success:
                    passed += 1
                else:
                    failures.append(_failure(er, fr.name))
            resource_ids.append(ExpectationSuiteIdentifier(name=name))
        if docs_dir is not None:
            with _dir_lock(docs_dir):
                store = ctx.validation_results_store
                resource_ids += [k for k in store.list_keys() if k.run_id == run_id]
                urls = ctx.build_data_docs(resource_identifiers=resource_ids)
            docs_path = Path(docs_dir).resolve() / "index.html"
            if "local_site" in urls and urls["local_site"].startswith("file://"):
                docs_path = Path(urls["local_site"][len("file://"):])

    return ValidationOutcome(
        suite=suite,
        success=not failures,
        evaluated=evaluated,
        passed=passed,
        failed=len(failures),
        failures=failures,
        docs_path=docs_path,
        table=table,
        trace=trace,
        rows_total=total,
        rows_validated=len(df),
        row_cap=max_rows,
        duration_s=time.perf_counter() - t0,
    )
