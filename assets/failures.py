"""Failure and kill prediction with proactive cloning (El-Sayed, Zhu, Schroeder, ICDCS 2017)
over ALL jobs of the trace: SQL inputs, random forests, the Algorithm 1 replay; blocking GX
checks on every table; reports under $NURD_DATA_DIR/reports/failures/."""

import time
from pathlib import Path

import dagster as dg
from dagster_duckdb import DuckDBResource

import stragglers.failures.validation  # noqa: F401  (registers the failure suites)
from stragglers.failures import build as fb
from stragglers.settings.failures import FailureSettings
from stragglers.reports.sections.failures import write_cloning_report, write_prediction_report
from .checks import table_check
from .common import automated_asset, connected, google_format_only, md_table, report_metadata
from .resources import PipelineSettings


NEEDS = "it has no per-attempt events"


@automated_asset(deps=["task_attempts"], group_name="failures", kinds={"duckdb"})
@google_format_only(NEEDS)
def failure_inputs(nurd: PipelineSettings, duckdb: DuckDBResource) -> dg.MaterializeResult:
    """Table IV inputs over every job with task events: failure_tasks, failure_jobs, failure_attempts (configuration,
    outcomes, TaskFailFlag / AttemptFailFlag / PastAttemptsFlag) and early_usage (first 5 minutes; empty where the
    trace has no task_usage)."""
    s = nurd.selection()
    with connected(nurd, duckdb) as con:
        counts = fb.build_failure_inputs(con, s, nurd.failures())
        outcomes = con.execute("""SELECT coalesce(CAST(job_end_event AS VARCHAR), 'none') AS job_end_event,
            count(*) AS jobs, count(*) FILTER (WHERE task_fail_flag) AS with_failed_task
            FROM failure_jobs WHERE trace = ? GROUP BY 1 ORDER BY 1""", [s.trace]).df()
    return dg.MaterializeResult(metadata={f"rows_{k}": v for k, v in counts.items()}
                                | {"job_outcomes": md_table(outcomes), "usage_available": counts["early_usage"] > 0})


def _failure_step(name: str, description: str, compute) -> dg.AssetsDefinition:
    """A step of failure prediction after failure_inputs, as an asset: ``compute(con, trace, failure
    settings, report dir, log) -> (report, rows)`` on a trace with per-attempt events, timed; other
    traces get a not-applicable note."""
    @automated_asset(name=name, deps=["failure_inputs"], group_name="failures", kinds={"python", "duckdb"},
                     description=description)
    @google_format_only(NEEDS)
    def step(context: dg.AssetExecutionContext, nurd: PipelineSettings, duckdb: DuckDBResource) -> dg.MaterializeResult:
        s, fs = nurd.selection(), nurd.failures()
        started = time.perf_counter()
        with connected(nurd, duckdb) as con:
            report, rows = compute(con, s.trace, fs, nurd.data_path / "reports" / "failures", context.log.info)
        return dg.MaterializeResult(metadata=report_metadata(report) | {
            "dagster/row_count": rows, "seconds": round(time.perf_counter() - started, 1)})

    return step


def _predict(con, trace: str, fs: FailureSettings, out: Path, log) -> tuple[dict, int]:
    result = fb.run_prediction(con, trace, fs, log=log)
    return write_prediction_report(out, trace, result, fs.as_dict()), len(result["curves"])


def _clone(con, trace: str, fs: FailureSettings, out: Path, log) -> tuple[dict, int]:
    result = fb.run_cloning(con, trace, fs, log=log)
    curves = con.execute("SELECT * FROM failure_predictions WHERE trace = ?", [trace]).df() \
        if fb.table_exists(con, "failure_predictions") else None
    return write_cloning_report(out, trace, result, fs.as_dict(), curves), len(result["tasks"])


failure_prediction = _failure_step(
    "failure_prediction",
    "Random forests (50 trees, 70/30 split by job) for job kill, job failure, final task failure and "
    "task-attempt failure in the paper's four scenarios; precision and recall over thresholds 0.1-0.9 and "
    "training sampling ratios (Figs. 7, 8, 10), importances. Tables failure_predictions, failure_importances; "
    "report reports/failures/.",
    _predict)
proactive_cloning = _failure_step(
    "proactive_cloning",
    "Proactive cloning (Algorithm 1, R retries, C clones): tasks replayed as in the trace except that clones "
    "start when failure is first predicted; CDF of completion time relative to the trace (Fig. 11) and the "
    "overhead table (Table V). Tables cloning_tasks, cloning_overhead; report reports/failures/.",
    _clone)


checks = [
    table_check(failure_inputs, "failure_jobs"),
    table_check(failure_inputs, "failure_tasks"),
    table_check(failure_inputs, "failure_attempts"),
    table_check(failure_prediction, "failure_predictions"),
    table_check(proactive_cloning, "cloning_tasks"),
]
