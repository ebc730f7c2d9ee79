"""The blocking Great Expectations check every table of the warehouse gets: one factory for all stages."""

from pathlib import Path
from typing import Callable

import dagster as dg
from dagster_duckdb import DuckDBResource

from stragglers.settings import SelectionSettings
from stragglers.warehouse import freshness, read_errors, staged_parts, storage, suites
from stragglers.warehouse.validation import validate_table
from .common import connected
from .resources import PipelineSettings

# the suites' code is part of what a cached pass depends on
SUITES_VERSION = freshness.digest(Path(suites.__file__).read_text())


def table_check(asset, suite: str, *, table: str | Callable[[SelectionSettings], str] | None = None, params=None,
                warehouse_params=None, max_rows: int | None = None,
                applies: Callable[[SelectionSettings], bool] | None = None, needs_usage: bool = False,
                description: str = "") -> dg.AssetChecksDefinition:
    """Check ``<suite>_valid`` on ``asset``: suite ``suite`` on the configured trace's rows of ``table``
    (default: the suite's name; a ``stg_`` view is read whole, up to ``max_rows``; a function of the
    selection settings where the table depends on the trace's format). ``params(nurd)``:
    the suite's parameters from the settings; ``warehouse_params(nurd, con)``: more of them read from
    the warehouse (merged over the first). A trace for which ``applies(selection)`` is false (default:
    the asset's own rule and reason, from google_format_only), or (``needs_usage``) without task_usage,
    passes with a note. A table unchanged since it passed (same inputs digest in the ledger) passes
    without being read again. The check's description is ``description``, else the suite's summary."""
    table_of = table if callable(table) else (lambda _s, table=table or suite: table)
    name = f"{suite}_valid"
    declared, because = asset.op.compute_fn.decorated_fn, ""    # google_format_only's rule and reason
    if applies is None and hasattr(declared, "applies"):
        applies, because = declared.applies, f": {declared.not_applicable_because}"

    @dg.asset_check(asset=asset, name=name, blocking=True, description=description or suites.suite_summary(suite))
    def _validate(context: dg.AssetCheckExecutionContext, nurd: PipelineSettings,
                  duckdb: DuckDBResource) -> dg.AssetCheckResult:
        s = nurd.selection()
        table = table_of(s)
        staged = table.startswith("stg_")
        if applies is not None and not applies(s):
            return dg.AssetCheckResult(passed=True, metadata={"note": f"not applicable to {s.trace}{because}"})
        with connected(nurd, duckdb) as con:
            no_usage = needs_usage and staged_parts.usage_absent_reason(con, s.trace)
            if no_usage:
                return dg.AssetCheckResult(passed=True, metadata={"note": f"not applicable: {no_usage}"})
            p = _suite_params(params, warehouse_params, nurd, con)
            built_from = freshness.recorded_inputs(con, "staged_trace" if staged else table, s.trace)
            key = freshness.digest([built_from, suite, p, max_rows, SUITES_VERSION])
            if built_from is not None and freshness.recorded_inputs(con, f"check:{name}", s.trace) == key:
                return dg.AssetCheckResult(passed=True, severity=dg.AssetCheckSeverity.ERROR, metadata={
                    "note": "table unchanged since it passed this suite (same inputs digest): not re-validated"})
            with read_errors.located_errors(con, f"check {name}"):   # a raw file that does not parse: where, what to do
                outcome = validate_table(suite, con, table, trace=None if staged else s.trace,
                                         docs_dir=nurd.data_path / "validation", params=p, max_rows=max_rows)
            if outcome.success and built_from is not None:
                with storage.transaction(con):
                    freshness.record_settings(con, f"check:{name}", s.trace, {"suite": suite}, key)
        explanation = outcome.explain()
        meta = {"expectations_evaluated": outcome.evaluated, "expectations_passed": outcome.passed,
                "expectations_failed": outcome.failed, "explanation": explanation,
                "offending_rows": sum(int(f.get("unexpected_count") or 0) for f in outcome.failures),
                "summary": dg.MetadataValue.md(outcome.to_markdown())}
        if outcome.failures:
            meta["failures"] = dg.MetadataValue.json(
                [{k: f.get(k) for k in ("expectation", "column", "unexpected_count", "failing_rows", "kwargs")}
                 for f in outcome.failures])
        if outcome.docs_path:
            meta["data_docs"] = dg.MetadataValue.url(f"file://{outcome.docs_path}")
        if not outcome.success:
            context.log.error(explanation)
        return dg.AssetCheckResult(passed=outcome.success, severity=dg.AssetCheckSeverity.ERROR,
                                   description=explanation, metadata=meta)

    return _validate


def _suite_params(params, warehouse_params, nurd, con) -> dict | None:
    if not params and not warehouse_params:
        return None
    return (params(nurd) if params else {}) | (warehouse_params(nurd, con) if warehouse_params else {})
