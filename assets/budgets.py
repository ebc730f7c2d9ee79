"""Every method at every budget, the operator's answer the report opens with: each method's flag cut
tuned on earlier jobs at each budget of extra machine time, from the operator's sweep, written to
tables ``matched_budgets`` and ``sweep_curve`` (stragglers/reports/compute/budget_tables.py computes them)."""

from stragglers.reports.compute.budget_tables import BUDGET_TABLES, OPERATOR_BUDGETS, write_budget_tables

from .common import evaluation_tables_asset

operator_budgets = evaluation_tables_asset(
    "operator_budgets", OPERATOR_BUDGETS, write_budget_tables, BUDGET_TABLES, ("matched_budgets",),
    "Every method at every budget of extra machine time under the operator's protocol: each "
    "method's flag cut chosen per job on the jobs that ended before it (table "
    "`matched_budgets`, with its paired difference against the best free rule) and its cost "
    "curve (table `sweep_curve`), from the engine's outcomes (`operator_capped_outcomes`), "
    "for every trace in the warehouse; both empty without that sweep. comparison_tables "
    "reads them.")
