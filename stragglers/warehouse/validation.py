"""Runs a suite of ``SUITES`` on a table and renders its outcome for the Dagster check.

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
The suites are in ``stragglers/warehouse/suites.py``; GX's context, Data Docs and
locks in ``stragglers/warehouse/gx_context.py``.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from stragglers.warehouse.gx_context import _LOCK, _dir_lock, _gx_name, _make_context
from stragglers.warehouse.suites import DEFAULT_PARAMS, SUITES, _default_features

__all__ = [
    "ValidationOutcome",
    "validate_table",
]


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
