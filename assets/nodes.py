"""Node-level stragglers (Ouyang et al., SCC 2016): task attempts of every job, per-node
models of the z-normalized durations, indicators and P-cores levels, with a blocking
GX check on every table and the report under $NURD_DATA_DIR/reports/nodes/."""


import time

import dagster as dg
from dagster_duckdb import DuckDBResource

import stragglers.nodes.validation  # noqa: F401  (registers the node suites)
from stragglers.nodes import build as nb
from stragglers.nodes.truth import planted_machines
from stragglers.reports.page.files import md, write_text
from stragglers.reports.sections.nodes import truth_checks, write_node_report
from .checks import table_check
from .common import automated_asset, connected, google_format_only, md_table, report_metadata
from .resources import PipelineSettings
from stragglers.prediction.engine.draws import RELAUNCH_SEEDS
from stragglers.prediction.copies.completion_tables import completion_table
from stragglers.warehouse.storage import table_exists



@automated_asset(deps=["staged_trace"], group_name="nodes", kinds={"duckdb"})
@google_format_only("it has no per-attempt events")
def task_attempts(nurd: PipelineSettings, duckdb: DuckDBResource) -> dg.MaterializeResult:
    """Every attempt of every task of every job (sql/task_attempts.sql: SCHEDULE to the next terminal event, machine,
    end event) and the machines' capacities (sql/machines.sql, where machine_events exists). Shared by node ranking
    and failure prediction."""
    s = nurd.selection()
    with connected(nurd, duckdb) as con:
        counts = nb.build_attempts(con, nurd.raw_path, s)
        ends = con.execute("""SELECT coalesce(CAST(end_event AS VARCHAR), 'running') AS end_event, count(*) AS attempts
            FROM task_attempts WHERE trace = ? GROUP BY 1 ORDER BY 1""", [s.trace]).df()
    return dg.MaterializeResult(metadata={"dagster/row_count": counts["task_attempts"],
                                          "machines": counts.get("machines", 0), "end_events": md_table(ends)})


@automated_asset(deps=["task_attempts", "jobs"],
                 group_name="nodes", kinds={"python", "duckdb"})
@google_format_only("it has no machine placement")
def node_ranking(context: dg.AssetExecutionContext, nurd: PipelineSettings,
                 duckdb: DuckDBResource) -> dg.MaterializeResult:
    """Ouyang et al.: z-scores of the finished tasks' durations within their selected job
    (sql/node_task_durations.sql), per node the Table 1 indicators and the P-cores level on the confidence interval
    (node_indicators), the 9 distributions ranked by Anderson-Darling on a sample of nodes (node_fits). Report:
    reports/nodes/."""
    s, ns = nurd.selection(), nurd.nodes()
    started = time.perf_counter()
    with connected(nurd, duckdb) as con:
        counts = nb.build_node_ranking(con, s, ns, log=context.log.info)
        ind = con.execute("SELECT * EXCLUDE (trace) FROM node_indicators WHERE trace = ?", [s.trace]).df()
        fits = con.execute("SELECT * EXCLUDE (trace) FROM node_fits WHERE trace = ?", [s.trace]).df() \
            if counts["node_fits"] else ind.iloc[0:0]
        durations = con.execute("SELECT machine_id, end_us, z FROM node_task_durations WHERE trace = ?",
                                [s.trace]).df()
        machines = nb.machines_frame(con, s.trace)
    checks = None
    if s.trace == "synthetic":
        checks = truth_checks(ind, planted_machines(seed=nurd.synthetic_seed))
    result = write_node_report(nurd.data_path / "reports" / "nodes", s.trace, ind, fits, durations, machines,
                               checks, ns.as_dict())
    meta = {f"rows_{k}": v for k, v in counts.items()} | report_metadata(result, tables_left_out=("trend",))
    return dg.MaterializeResult(metadata=meta | {"seconds": round(time.perf_counter() - started, 1),
                                                 "settings": str(ns.as_dict())})


@automated_asset(deps=["node_ranking", "nurd_eval", "baseline_eval"],
                 group_name="nodes", kinds={"python"})
def node_relaunch_gain(nurd: PipelineSettings, duckdb: DuckDBResource) -> dg.MaterializeResult:
    """Job completion time under Algorithm 2 when relaunched copies avoid the P-cores level-0 machines
    (relaunch latencies drawn only from tasks that ran above level 0) beside the default draw, for every method
    with predictions; gain = difference of the mean reductions (10 seeds, common random numbers)."""
    s = nurd.selection()
    with connected(nurd, duckdb) as con:
        if not (table_exists(con, "predictions") and table_exists(con, "node_indicators")):
            return dg.MaterializeResult(metadata={"note": "no predictions or node ranking yet: materialize "
                                                          "nurd_eval and node_ranking first"})
        tasks = con.execute("""SELECT t.trace, t.job_id, t.task_id, t.latency_s, d.machine_id FROM tasks t
            JOIN node_task_durations d USING (trace, job_id, task_id) WHERE t.trace = ?""", [s.trace]).df()
        preds = con.execute("SELECT trace, method, job_id, task_id, flagged_at_s FROM predictions WHERE trace = ?",
                            [s.trace]).df()
        slow = {int(r[0]) for r in con.execute(
            "SELECT machine_id FROM node_indicators WHERE trace = ? AND level = 0", [s.trace]).fetchall()}
    if preds.empty or tasks.empty:
        return dg.MaterializeResult(metadata={"note": f"no predictions for {s.trace}"})
    base = completion_table(tasks, preds, machines=[], seeds=RELAUNCH_SEEDS)
    avoid = completion_table(tasks, preds, machines=[], seeds=RELAUNCH_SEEDS, excluded_machines=frozenset(slow))
    gain = base[["method", "n_jobs", "reduction_mean"]].merge(
        avoid[["method", "reduction_mean"]], on="method", suffixes=("", "_avoiding_level0"))
    gain["gain"] = gain["reduction_mean_avoiding_level0"] - gain["reduction_mean"]
    out = nurd.data_path / "reports" / "nodes"
    out.mkdir(parents=True, exist_ok=True)
    gain.to_csv(out / f"nodes_{s.trace}_relaunch_gain.csv", index=False)
    write_text(out / f"nodes_{s.trace}_relaunch_gain.md",
               f"# Relaunches avoiding the {len(slow)} P-cores level-0 machines on `{s.trace}`\n\n"
               f"Job completion time reduction under Algorithm 2 (mean over jobs, then over seeds "
               f"{list(RELAUNCH_SEEDS)}); relaunch latencies drawn from every task (default) or only from "
               f"tasks that ran above level 0.\n\n{md(gain)}\n")
    return dg.MaterializeResult(metadata={"level0_machines": len(slow), "relaunch_gain": md_table(gain),
                                          "seeds": str(list(RELAUNCH_SEEDS))})


checks = [
    table_check(task_attempts, "task_attempts"),
    table_check(node_ranking, "node_task_durations"),
    table_check(node_ranking, "node_indicators",
                params=lambda n: {"min_tasks_per_node": n.node_min_tasks}),
]
