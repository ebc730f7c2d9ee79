"""A trace's whole warehouse in the staging order, the one way the scripts build one.

The assets run the same steps one asset each (staged_trace, then jobs, tasks and selection_funnel,
then checkpoint_features); a script that needs a warehouse calls ``build_warehouse`` instead of
repeating the order by hand.
"""

from __future__ import annotations

import time
from pathlib import Path

import duckdb

from stragglers.warehouse.build import build_features, build_selection
from stragglers.settings.warehouse import SelectionSettings
from stragglers.warehouse.staging import stage_trace

#: The steps in their order; ``until`` names the last one to run.
STEPS = ("staging", "selection", "features")


def build_warehouse(con: duckdb.DuckDBPyConnection, raw_path: Path | str, settings: SelectionSettings, *,
                    until: str = "features", seconds: dict[str, float] | None = None) -> dict[str, dict[str, int]]:
    """Stage the trace's raw files at ``raw_path`` (the typed views, staging.stage_trace), then build
    the selection (jobs -> task_outcomes -> tasks -> selection_funnel), then the features
    (job_checkpoints -> ... -> checkpoint_features and the operator's clock twins), on ``con`` (opened
    and configured by the caller: storage.configure). ``until``: stop after "staging" or "selection".
    Returns, per step run, what it reports: the parts per raw table (Google layout; {} for Alibaba's
    one file), then the rows per table built. ``seconds``, if given, receives each step's wall time
    (what the benchmarks report per step)."""
    if until not in STEPS:
        raise ValueError(f"build_warehouse: until={until!r} is not a step; use one of {', '.join(STEPS)}")
    steps = {"staging": lambda: stage_trace(con, Path(raw_path), settings),
             "selection": lambda: build_selection(con, settings),
             "features": lambda: build_features(con, settings)}
    done = {}
    for step in STEPS[: STEPS.index(until) + 1]:
        started = time.perf_counter()
        done[step] = steps[step]()
        if seconds is not None:
            seconds[step] = time.perf_counter() - started
    return done
