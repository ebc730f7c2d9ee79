"""Every method at every budget of extra machine time, the operator's answer the report opens with:
each method's flag cut tuned on earlier jobs at each budget (stragglers.prediction.sweep), from the
warehouse's operator sweep, written to tables ``matched_budgets`` and ``sweep_curve``."""

from __future__ import annotations

from typing import Callable

import pandas as pd

from stragglers.prediction.methods import FREE_RULES, is_learned
from stragglers.prediction.protocol import typed_settings
from stragglers.prediction.sweep import budget_table, curve_table, earlier_by_trace
from stragglers.reports.budgets import flags_equal
from stragglers.reports.freshness import BUDGET_TABLES
from stragglers.settings import Settings
from stragglers.warehouse.results import replace_table
from stragglers.warehouse.sql_files import render
from stragglers.warehouse.storage import table_exists


def budget_tables(con, s: Settings) -> tuple[pd.DataFrame | None, pd.DataFrame | None]:
    """(matched_budgets, sweep_curve) from the warehouse's operator sweep; (None, None) without it."""
    sweep = (con.table("operator_sweep_outcomes").order("ALL").df()
             if table_exists(con, "operator_sweep_outcomes") else None)
    if sweep is None or not len(sweep):
        return None, None
    # the budget enforced at every decision when the sweep recorded it, else matched on earlier jobs
    capped = (con.table("operator_capped_outcomes").order("ALL").df()
              if table_exists(con, "operator_capped_outcomes") else None)
    earlier, choosing = earlier_by_trace(con, sorted(sweep["trace"].unique()))
    budgets = budget_table(sweep, earlier, FREE_RULES, typed_settings(s)[0].history_min_jobs,
                           n_boot=s.n_boot, seed=s.seed, choosing=choosing, learned=is_learned,
                           capped=capped if capped is not None and len(capped) else None)
    op_predictions = (con.execute(render("flag_times", predictions="operator_predictions")).df()
                      if table_exists(con, "operator_predictions") else None)
    if op_predictions is not None and len(op_predictions):
        budgets = budgets.merge(flags_equal(op_predictions), on=["trace", "method"], how="left")
    return budgets, curve_table(sweep)


def write_budget_tables(con, s: Settings, log: Callable[[str], None]
                        ) -> tuple[pd.DataFrame | None, pd.DataFrame | None]:
    """``budget_tables``, each replacing its table; without the operator's sweep both tables are
    empty (the report leaves their sections out)."""
    log("every method at every budget (operator's sweep, tuned on earlier jobs)")
    computed = budget_tables(con, s)
    for table, df in zip(BUDGET_TABLES, computed):
        replace_table(con, table, df if df is not None else pd.DataFrame())
    return computed
