"""Are the tables computed from the evaluations current? Decided here, once, for all of them.

The simulations (``completion_times``), the budgets (``operator_budgets``) and the report
(``comparison_tables``) are computed from the evaluations' tables. Each family says what it is
computed from (``Derived``: its input tables and the settings that shape it); its digest is a hash
of those tables' contents and settings (``input_digest``), recorded in the ledger beside its rows.
Equal digests, equal tables: then nothing is computed again (``build_unless_current``), and a
consumer refuses a family whose recorded digest is not the current one (``require_current``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping

import duckdb

from stragglers.prediction.completion import RELAUNCH_SEEDS
from stragglers.prediction.protocol import typed_settings
from stragglers.prediction.tuning import BUDGETS
from stragglers.prediction.verdict import WARMUP_JOBS
from stragglers.settings import Settings
from stragglers.warehouse.ledger import code_digest, digest, recorded_inputs
from stragglers.warehouse.results import Kept, current_or_compute, trace_rows
from stragglers.warehouse.sql_files import render
from stragglers.warehouse.storage import table_exists

#: the ledger's trace for tables over every trace in the warehouse
EVERY_TRACE = "*"
#: how to rebuild what the report reads, in the order a run materializes it
REPORT_SELECTION = "completion_times,operator_budgets,comparison_tables"


@dataclass(frozen=True)
class Derived:
    """Tables computed from the evaluations' tables."""
    asset: str                                  # the asset that builds them
    counted: Mapping[str, tuple[str, ...]]      # ledger name -> the tables whose rows it counts
    inputs: tuple[str, ...]                     # the tables they are computed from
    shaping: Callable[[Settings], list]         # the settings that shape them (in the digest)
    recorded: Callable[[Settings], dict]        # the settings recorded beside them
    older_than: str                             # what an outdated record is older than (its error says)

    @property
    def ledger_name(self) -> str:
        """The first ledger name (the one an error names)."""
        return next(iter(self.counted))


SIMULATION_TABLES = ("completion_times", "speculation_times", "speculation_job_times")
COMPLETION_TIMES = Derived(
    asset="completion_times", counted={"completion_times": SIMULATION_TABLES},
    inputs=("job_metrics", "predictions", "tasks", "job_checkpoints", "operator_tasks", "operator_checkpoints",
            "operator_job_metrics", "operator_predictions"),
    shaping=lambda s: [list(RELAUNCH_SEEDS), s.copy_keeps, s.cause_aware_copies],
    recorded=lambda s: {"seeds": list(RELAUNCH_SEEDS), "copy_keeps": s.copy_keeps,
                        "cause_aware_copies": s.cause_aware_copies},
    older_than="the evaluations")

BUDGET_TABLES = ("matched_budgets", "named_comparisons", "sweep_curve", "spark_answer", "spark_answer_rows")
# earlier jobs (the operator's tasks and clock) choose each job's cut and name each comparison
OPERATOR_BUDGETS = Derived(
    asset="operator_budgets", counted={table: (table,) for table in BUDGET_TABLES},
    inputs=("operator_capped_outcomes", "operator_predictions", "operator_tasks", "operator_checkpoints", "jobs",
            "stg_spark_applications"),
    shaping=lambda s: [s.n_boot, s.seed, typed_settings(s)[0].history_min_jobs, list(BUDGETS), WARMUP_JOBS],
    recorded=lambda s: {"n_boot": s.n_boot, "seed": s.seed, "budgets": list(BUDGETS),
                        "history_min_jobs": typed_settings(s)[0].history_min_jobs, "warmup_jobs": WARMUP_JOBS},
    older_than="the operator's sweep")

COMPARISON = Derived(
    asset="comparison_tables", counted={"comparison": ("comparison",)},
    inputs=("job_metrics", "f1_over_time", "predictions", "tasks", "job_checkpoints", "operator_checkpoints",
            "protocol_ablation", "nurd_sensitivity", "operator_job_metrics", "operator_predictions",
            "reexecution_summary", "completion_times", "speculation_times", "speculation_job_times",
            "matched_budgets", "named_comparisons", "sweep_curve", "spark_answer", "spark_answer_rows"),
    shaping=lambda s: [s.n_boot, s.seed, list(RELAUNCH_SEEDS), s.copy_keeps, s.cause_aware_copies],
    recorded=lambda s: {"n_boot": s.n_boot, "seed": s.seed},
    older_than="the evaluations, simulations and budgets")


def table_contents(con: duckdb.DuckDBPyConnection, tables, settings: list) -> str:
    """A digest of the contents of those of ``tables`` that exist (a hash aggregate in DuckDB,
    sql/table_contents.sql: cheap next to the simulations and the bootstrap that read them) and of
    the ``settings`` that shape what is computed from them."""
    contents = [(name, con.execute(render("table_contents", table=name)).fetchone())
                for name in tables if table_exists(con, name)]
    return digest([contents, *settings])


def input_digest(con: duckdb.DuckDBPyConnection, derived: Derived, s: Settings) -> str:
    """What ``derived`` is computed from now: equal digests, equal tables (the code that computes
    them is part of it)."""
    return table_contents(con, derived.inputs, [*derived.shaping(s), code_digest("stragglers.prediction",
                                                                                   "stragglers.reports")])


def is_current(con: duckdb.DuckDBPyConnection, derived: Derived, s: Settings) -> tuple[bool, str]:
    """(whether ``derived`` was recorded from what it is computed from now, that digest): the one
    freshness decision of the tables computed from the evaluations."""
    version = input_digest(con, derived, s)
    return all(recorded_inputs(con, name, EVERY_TRACE) == version for name in derived.counted), version


def require_evaluations(con: duckdb.DuckDBPyConnection) -> None:
    """Stop with one line when no evaluation has run yet: what the simulations and the report read."""
    if not table_exists(con, "job_metrics"):
        raise LookupError("table job_metrics does not exist in the warehouse: materialize asset nurd_eval "
                          "(and baseline_eval partitions) first")


def require_current(con: duckdb.DuckDBPyConnection, derived: Derived, s: Settings) -> None:
    """Stop, naming the asset to materialize, unless ``derived`` is of the current evaluations and
    settings: never a consumer that mixes two runs."""
    if not is_current(con, derived, s)[0]:
        raise LookupError(f"table {derived.ledger_name} is missing or older than {derived.older_than} or "
                          f"settings: materialize asset {derived.asset} with it (--select {REPORT_SELECTION})")


def build_unless_current(con: duckdb.DuckDBPyConnection, derived: Derived, s: Settings,
                         compute: Callable[[], object]) -> tuple[Kept, str]:
    """``compute()`` runs, and writes every table of ``derived``, unless each of its ledger names
    was recorded from the current digest and settings with its tables' rows still there (the rows
    checked by ``current_or_compute``). Returns what was kept and the digest (the data version)."""
    require_evaluations(con)
    version = input_digest(con, derived, s)
    kept = current_or_compute(con, EVERY_TRACE, dict.fromkeys(derived.counted, version), compute,
                              rows=lambda name: {t: trace_rows(con, t)[t] for t in derived.counted[name]},
                              settings=derived.recorded(s))
    return kept, version
