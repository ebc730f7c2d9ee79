"""One Spark application from its event log to the report, the operator's whole chain in Dagster.

    python -m benchmarks.spark_report [--log FILE] [--repeats 1] [--write docs/BENCHMARKS.md]

The log (default: nds_q72_dataproc_2_2.zstd of the real logs, 13,504 task attempts) is linked alone
into a fresh directory and the chain runs on it in a fresh Python process with a fresh data
directory, as an operator's first run does: raw_trace, staged_trace, jobs, tasks, selection_funnel,
checkpoint_features (with their blocking checks), nurd_eval, baseline_eval's partition spark_speculation
(Spark's rule among the learned chain's methods), completion_times, operator_budgets (the answer's table),
spark_speculation (the answer's files: the settings to set) and comparison_tables (the report).
Every other setting is its default (NURD_WORKERS: the machine's cores).

Measured: the child process's wall clock from its start (imports included) to the report written,
its CPU time (user + system, with its worker processes), and each step's own duration from the run's
event log. The target: at most 60 s by the wall clock on a 2-core machine. With ``--write`` the
result replaces the section "Spark event logs: one application from log to report" of that file.
"""

from __future__ import annotations

import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.results import publish_section
from benchmarks.spark_read import parse_log_arguments

REPO = Path(__file__).resolve().parent.parent
SECTION = "## Spark event logs: one application from log to report"
TARGET_S = 60.0
PARTITION = "spark_speculation"


def child(log_dir: Path, data_dir: Path) -> None:
    """The chain in this process; prints the run's step durations as JSON (the last line)."""
    import dagster as dg

    from nurd_pipeline.assets import budgets, completion, prediction, reports, spark, traces, warehouse
    from nurd_pipeline.assets.resources import PipelineSettings, WarehouseResource

    nurd = PipelineSettings(data_dir=str(data_dir), trace="spark_eventlog", trace_url=str(log_dir))
    chain = [traces.raw_trace, warehouse.staged_trace, warehouse.jobs, warehouse.tasks, warehouse.selection_funnel,
             warehouse.checkpoint_features, prediction.nurd_eval, prediction.baseline_eval,
             completion.completion_times, budgets.operator_budgets, spark.spark_speculation, reports.comparison_tables]
    instance = dg.DagsterInstance.ephemeral()
    result = dg.materialize(chain + warehouse.checks, partition_key=PARTITION, instance=instance,
                            resources={"nurd": nurd, "duckdb": WarehouseResource(nurd=nurd)})
    started, steps = {}, {}
    for record in instance.get_records_for_run(result.run_id).records:
        entry = record.event_log_entry
        event = entry.dagster_event
        if event is None:
            continue
        if event.event_type_value == "STEP_START":
            started[event.step_key] = entry.timestamp
        elif event.event_type_value == "STEP_SUCCESS":
            steps[event.step_key] = entry.timestamp - started[event.step_key]
    report = (data_dir / "reports" / "report.md").read_text()
    opening = report.split("## What this run shows\n\n")[1].split("\n")[0]
    print(json.dumps({"success": result.success, "steps": steps, "opening": opening}))


def run_once(log: Path) -> dict:
    with tempfile.TemporaryDirectory(prefix="spark_report_") as tmp:
        log_dir = Path(tmp) / "logs"
        log_dir.mkdir()
        (log_dir / log.name).symlink_to(log.resolve())   # read where it is
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        load = os.getloadavg()[0]
        t0 = time.perf_counter()
        out = subprocess.run([sys.executable, "-m", "benchmarks.spark_report", "--child", str(log_dir),
                              str(Path(tmp) / "data")], check=True, capture_output=True, text=True, cwd=REPO)
        wall = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    res = json.loads(out.stdout.strip().splitlines()[-1])
    return res | {"wall": wall, "cpu": cpu, "load": (load + os.getloadavg()[0]) / 2}


def run(log: Path, repeats: int) -> dict:
    runs = [run_once(log) for _ in range(repeats)]
    best = min(runs, key=lambda r: r["wall"])
    return {"log": log.name, "bytes": log.stat().st_size, "runs": runs, "best": best,
            "wall_median": statistics.median(r["wall"] for r in runs),
            "cpu_median": statistics.median(r["cpu"] for r in runs), "cores": os.cpu_count(),
            "python": platform.python_version()}


#: The steps of the report's table, and what each groups (a check is timed with its asset).
GROUPS = {
    "staging (raw_trace, staged_trace)": ("raw_trace", "staged_trace"),
    "selection (jobs, tasks, selection_funnel)": ("jobs", "tasks", "selection_funnel"),
    "features (checkpoint_features)": ("checkpoint_features",),
    "blocking checks (Great Expectations)": ("_valid",),
    "Spark's answer (spark_speculation)": ("spark_speculation",),
    "NURD (nurd_eval: NURD, NURD-NC, GBTR and their sweep)": ("nurd_eval",),
    f"Spark's rule in the learned chain (baseline_eval[{PARTITION}])": ("baseline_eval",),
    "simulations and budgets (completion_times, operator_budgets)": ("completion_times", "operator_budgets"),
    "the report (comparison_tables)": ("comparison_tables",),
}


def grouped(steps: dict[str, float]) -> list[tuple[str, float]]:
    out = []
    for name, keys in GROUPS.items():
        if keys == ("_valid",):
            out.append((name, sum(v for k, v in steps.items() if k.endswith("_valid"))))
        else:
            out.append((name, sum(v for k, v in steps.items() if k in keys)))
    return out


def report(res: dict) -> str:
    best, wall = res["best"], res["best"]["wall"]
    steps = grouped(best["steps"])
    in_steps = sum(best["steps"].values())
    slowest = max(steps, key=lambda s: s[1])
    verdict = (f"**Met: {wall:.1f} s by the wall clock** (target {TARGET_S:g} s)." if wall <= TARGET_S else
               f"**Not met: {wall:.1f} s by the wall clock, {wall - TARGET_S:.1f} s over the {TARGET_S:g} s "
               f"target** ({wall / TARGET_S:.2f}x); the most time goes to {slowest[0]} ({slowest[1]:.1f} s).")
    if wall > TARGET_S and best["cpu"] <= TARGET_S and best["load"] > res["cores"]:
        verdict += (f" The machine was shared (load average {best['load']:.1f} on {res['cores']} cores): the "
                    f"run's own CPU time, {best['cpu']:.1f} s, is under the target, so on an idle machine the "
                    f"wall clock is expected under it too; this figure is to be measured again there.")
    return "\n".join([
        SECTION,
        "",
        f"Written by `python -m benchmarks.spark_report` ({res['cores']} cores, load average {best['load']:.1f} during "
        f"the fastest of {len(res['runs'])} run(s), Python {res['python']}): `{res['log']}` "
        f"({res['bytes'] / 1e6:.1f} MB compressed) from its event log to report.md, the operator's chain in one "
        f"Dagster run in a fresh process and data directory (imports included): staging, selection, features "
        f"and their checks, Spark's answer, NURD and Spark's rule (baseline_eval[{PARTITION}]) under the "
        f"operator's protocol, the simulations, the budgets and the report; every other setting its default.",
        "",
        "| part of the run | wall (s) |",
        "|---|---|",
        *[f"| {name} | {seconds:.1f} |" for name, seconds in steps],
        f"| process start, imports, Dagster's run and its event log (outside the steps) | {wall - in_steps:.1f} |",
        f"| **total** | **{wall:.1f}** |",
        "",
        f"CPU time (user + system, the process and its workers): {best['cpu']:.1f} s"
        + (f"; median wall over the runs {res['wall_median']:.1f} s." if len(res["runs"]) > 1 else ".")
        + f" {verdict}",
        "",
        f"The report opens: \"{best['opening'][:240]}...\"",
    ])


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        child(Path(sys.argv[2]), Path(sys.argv[3]))
        return
    a = parse_log_arguments("python -m benchmarks.spark_report", __doc__.splitlines()[0],
                            log_help="a Spark event log", repeats=1)
    publish_section(report(run(a.log, a.repeats)), a.write, SECTION)


if __name__ == "__main__":
    main()
