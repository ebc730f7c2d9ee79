"""The completion-time simulations the report reads: what relaunching (the paper's Algorithms 2-3) and
speculative copies (the operator's protocol) of every evaluated method's flags do to the jobs, from the
warehouse's evaluations (stragglers/prediction/copies/completion_tables.py simulates; this module reads its
inputs and writes its tables)."""

from __future__ import annotations

from typing import Callable

import numpy as np
import pandas as pd

from stragglers.diagnosis.truth import load_truth
from stragglers.prediction.replay.clock import grid_tables
from stragglers.prediction.engine.draws import RELAUNCH_SEEDS
from stragglers.prediction.copies.completion_tables import completion_table, speculation_jobs, speculation_table
from stragglers.prediction.methods import FREE_RULES, SURVIVAL_FAMILY
from stragglers.settings.protocols import both_views, is_operator, typed_settings
from stragglers.prediction.copies.reexecution import cause_aware_copy_latency
from stragglers.settings import Settings
from stragglers.trace_formats import FORMATS
from stragglers.traces.fetch import truth_dir
from stragglers.warehouse.freshness import Derived
from stragglers.warehouse.storage import replace_table
from stragglers.warehouse.sql_files import render
from stragglers.warehouse.storage import table_exists


SIMULATION_TABLES = ("completion_times", "speculation_times", "speculation_job_times")
#: the simulations' tables, current while the evaluations, the copy model and the seeds are
COMPLETION_TIMES = Derived(
    counted={"completion_times": SIMULATION_TABLES},
    inputs=("job_metrics", "predictions", "tasks", "job_checkpoints", "operator_tasks", "operator_checkpoints",
            "operator_job_metrics", "operator_predictions"),
    shaping=lambda s: [list(RELAUNCH_SEEDS), s.copy_keeps, s.cause_aware_copies],
    recorded=lambda s: {"seeds": list(RELAUNCH_SEEDS), "copy_keeps": s.copy_keeps,
                        "cause_aware_copies": s.cause_aware_copies},
    older_than="the evaluations")


def with_cause_aware_copies(tasks: pd.DataFrame, s: Settings, log: Callable[[str], None]) -> pd.DataFrame:
    """Setting cause_aware_copies='on': each generated trace's tasks get the copy latency its truth gives
    (stragglers.prediction.copies.reexecution.cause_aware_copy_latency); real traces have no truth and draw."""
    if s.cause_aware_copies != "on":
        return tasks
    parts = []
    for trace in sorted(tasks["trace"].unique()):
        t = tasks[tasks["trace"] == trace].copy()
        if trace in FORMATS and FORMATS[trace].embedded and FORMATS[trace].is_google_layout:
            _jobs, truth_tasks = load_truth(truth_dir(s.data_dir, trace))
            copies = cause_aware_copy_latency(truth_tasks)
            # a task that does not finish keeps its copy that never does (copy_latency_s = +inf)
            kept = t.pop("copy_latency_s") if "copy_latency_s" in t.columns else None
            t = t.merge(copies, on=["job_id", "task_id"], how="left")
            if kept is not None:
                t["copy_latency_s"] = np.where(np.isposinf(kept.to_numpy(float)), np.inf,
                                               t["copy_latency_s"].to_numpy(float))
            log(f"cause-aware copies on {trace}: {int(t.copy_latency_s.notna().sum())} tasks' copies redo their work")
        else:
            log(f"cause-aware copies: {trace} has no truth of causes, its copies draw as by default")
        parts.append(t)
    return pd.concat(parts, ignore_index=True)


def simulations(con, s: Settings, log: Callable[[str], None]
                ) -> tuple[pd.DataFrame, pd.DataFrame | None, pd.DataFrame | None]:
    """(completion, speculation, speculation per job) of every evaluated method's flags, each table
    replaced in the warehouse; the operator's two are None (their tables empty) without its predictions."""
    predictions = con.execute(render("flag_times", predictions="predictions")).df()
    checkpoints = con.execute(render("checkpoint_times", grid="job_checkpoints")).df()
    # the operator's copies wait for a machine until its next decision: on its own clock's decisions
    op_grid = grid_tables(next(v for v in both_views(typed_settings(s)[0]) if is_operator(v)))[0]
    op_checkpoints = (con.execute(render("checkpoint_times", grid=op_grid)).df()
                      if table_exists(con, op_grid) else checkpoints)
    op_predictions = (con.execute(render("flag_times", predictions="operator_predictions")).df()
                      if table_exists(con, "operator_predictions") else None)
    both = (table_exists(con, "operator_job_metrics")
            and con.execute(render("table_contents", table="operator_job_metrics")).fetchone()[0] > 0)
    tasks = con.execute(render("evaluated_tasks__operator" if both else "evaluated_tasks")).df()
    log(f"completion-time simulation over {len(RELAUNCH_SEEDS)} seeds")
    completion = completion_table(tasks, predictions, checkpoints, seeds=RELAUNCH_SEEDS)
    speculation = speculation_per_job = None
    if op_predictions is not None and len(op_predictions):
        log("speculative-copy simulation (operator's protocol)")
        # every task the operator's replay saw, those that do not finish too (their copies buy nothing)
        op_tasks = con.execute(render("speculated_tasks")).df() if both else tasks
        copy_tasks = with_cause_aware_copies(op_tasks, s, log)
        speculation = speculation_table(copy_tasks, op_predictions, op_checkpoints, seeds=RELAUNCH_SEEDS,
                                        copy_keeps=s.copy_keeps)
        # per job, for the survival family's intervals against the free rules
        per_job = op_predictions[op_predictions["method"].isin([*SURVIVAL_FAMILY, *FREE_RULES])]
        speculation_per_job = speculation_jobs(copy_tasks, per_job, seeds=RELAUNCH_SEEDS,
                                               copy_keeps=s.copy_keeps) if len(per_job) else None
    # an absent simulation leaves its table empty (the report then leaves its sections out)
    for table, df in zip(SIMULATION_TABLES, (completion, speculation, speculation_per_job)):
        replace_table(con, table, df if df is not None else pd.DataFrame())
    return completion, speculation, speculation_per_job
