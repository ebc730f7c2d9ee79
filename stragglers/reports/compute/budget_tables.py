"""Every method at every budget of extra machine time, and the comparison named before it is scored:
the operator's answer the report opens with (stragglers.prediction.verdicts.budgets), from the warehouse's
operator sweep through the engine, written to tables ``matched_budgets``, ``named_comparisons`` and
``sweep_curve``."""

from __future__ import annotations

from typing import Callable

import pandas as pd

from stragglers.prediction.verdicts.budgets import budget_tables as compute_budget_tables
from stragglers.prediction.replay.earlier import earlier_jobs, job_times
from stragglers.prediction.methods import FREE_RULES, METHODS, is_learned
from stragglers.settings.protocols import typed_settings
from stragglers.prediction.verdicts.spark_answer import ANSWER_COLUMNS, ROW_COLUMNS, answer_table, rule_rows, spark_answers
from stragglers.prediction.verdicts.sweep import UNCAPPED
from stragglers.prediction.verdicts.tuning import BUDGETS, curve_table
from stragglers.reports.sections.budgets import flags_equal
from stragglers.settings import Settings
from stragglers.trace_formats import FORMATS
from stragglers.prediction.verdicts.verdict import WARMUP_JOBS
from stragglers.warehouse.freshness import Derived
from stragglers.warehouse.storage import replace_table
from stragglers.warehouse.sql_files import render
from stragglers.warehouse.storage import table_exists


BUDGET_TABLES = ("matched_budgets", "named_comparisons", "sweep_curve", "spark_answer", "spark_answer_rows")
#: the budgets' tables: earlier jobs (the operator's tasks and clock) choose each job's cut and name each comparison
OPERATOR_BUDGETS = Derived(
    counted={table: (table,) for table in BUDGET_TABLES},
    inputs=("operator_capped_outcomes", "operator_predictions", "operator_tasks", "operator_checkpoints", "jobs",
            "stg_spark_applications"),
    shaping=lambda s: [s.n_boot, s.seed, typed_settings(s)[0].history_min_jobs, list(BUDGETS), WARMUP_JOBS],
    recorded=lambda s: {"n_boot": s.n_boot, "seed": s.seed, "budgets": list(BUDGETS),
                        "history_min_jobs": typed_settings(s)[0].history_min_jobs, "warmup_jobs": WARMUP_JOBS},
    older_than="the operator's sweep")


def reads_labels(method: str) -> bool:
    return method in METHODS and METHODS[method].tags.reads_labels


def budget_tables(con, s: Settings) -> tuple[pd.DataFrame | None, ...]:
    """(matched_budgets, named_comparisons, sweep_curve, spark_answer, spark_answer_rows) from the
    warehouse's operator sweep; Nones without it (the Spark answer: on Spark event logs only)."""
    capped = (con.table("operator_capped_outcomes").order("ALL").df()
              if table_exists(con, "operator_capped_outcomes") else None)
    if capped is None or not len(capped):
        return (None,) * len(BUDGET_TABLES)
    traces = sorted(capped["trace"].unique())
    times = {t: job_times(con, t, "operator_tasks") for t in traces}
    earlier = {t: earlier_jobs(x) for t, x in times.items()}
    budgets, comparisons = compute_budget_tables(capped, times, earlier, FREE_RULES, is_learned, reads_labels,
                                                 typed_settings(s)[0].history_min_jobs, n_boot=s.n_boot,
                                                 seed=s.seed)
    op_predictions = (con.execute(render("flag_times", predictions="operator_predictions")).df()
                      if table_exists(con, "operator_predictions") else None)
    if op_predictions is not None and len(op_predictions):
        budgets = budgets.merge(flags_equal(op_predictions), on=["trace", "method"], how="left")
    uncapped = capped[capped["cap"] == UNCAPPED.label]
    answers = [a for t in traces if FORMATS.get(t) is not None and FORMATS[t].layout == "spark"
               for a in spark_answers(con, t, rule_rows(capped, t), BUDGETS, s.n_boot, s.seed)]
    heads, rows = zip(*[answer_table(a) for a in answers]) if answers else ((), ())
    return (budgets, comparisons, curve_table(uncapped), pd.DataFrame(list(heads), columns=ANSWER_COLUMNS),
            pd.DataFrame([r for group in rows for r in group], columns=ROW_COLUMNS))


def write_budget_tables(con, s: Settings, log: Callable[[str], None]):
    """``budget_tables``, each replacing its table; without the operator's sweep every table is empty
    (the report leaves their sections out)."""
    log("every method at every budget (operator's sweep through the engine, tuned on earlier jobs)")
    computed = budget_tables(con, s)
    for table, df in zip(BUDGET_TABLES, computed):
        replace_table(con, table, df if df is not None else pd.DataFrame())
    return computed
