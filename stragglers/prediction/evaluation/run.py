"""Load jobs from the warehouse, replay methods on them, store the results.

Dagster-free: the assets call ``evaluate`` with a DuckDB connection.
"""

from __future__ import annotations

import contextlib
import json
import tempfile
import time
from pathlib import Path
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import partial
from typing import Callable, Sequence

import duckdb
import pandas as pd
from threadpoolctl import threadpool_limits

from stragglers.prediction.methods import METHODS, Method
from stragglers.prediction.methods.base import variant_names
from stragglers.prediction.replay.metrics import table3
from stragglers.prediction.replay.clock import TASKS_OF, clock_tables, evaluable_jobs, grid_tables, uses_online_clock
from stragglers.prediction.replay.protocol import job_transform
from stragglers.settings.protocols import is_operator
from stragglers.settings import EvaluationSettings
from stragglers.trace_formats import trace_format
from stragglers.prediction.replay.workers import EngineSettings, ProgressLog, ReplayStats, replay_batches
from stragglers.prediction.evaluation.history import (
    AttachHistory, CostAwareSelection, ThresholdGrid, learning_methods,
)
from stragglers.prediction.engine.jobs import copy_jobs
from stragglers.prediction.verdicts.sweep import SweepCollector, SweepGrid
from stragglers.prediction.replay.jobstore import export_batch, read_job
from stragglers.prediction.replay.simulate import JobData, results_frames
from stragglers.warehouse.freshness import code_digest, digest, recorded_inputs, require_settings
from stragglers.warehouse.sql_files import create_view
from stragglers.warehouse.staged_parts import usage_absent_reason
from stragglers.warehouse.storage import transaction
from stragglers.warehouse.freshness import Kept, current_or_compute
from stragglers.warehouse.storage import insert_frame

RESULT_TABLES = ("predictions", "job_metrics", "f1_over_time", "method_fallbacks", "evaluation_runs", "cost_curve",
                 "sweep_outcomes", "capped_outcomes")
#: The operator's protocol writes the same tables under this prefix, so one warehouse holds both views.
OPERATOR_PREFIX = "operator_"


def result_table(table: str, settings: EvaluationSettings) -> str:
    """Where ``settings``' results of ``table`` (one of RESULT_TABLES) are stored: the operator's
    protocol has its own tables, so the paper's rows stay as they were."""
    return OPERATOR_PREFIX + table if is_operator(settings) else table


def create_result_table(con: duckdb.DuckDBPyConnection, table: str, name: str) -> None:
    """Create result table ``table`` (its SQL file) under ``name``: the operator's tables are the
    same tables under a prefix, their columns copied from the paper's (one schema, in sql/)."""
    create_view(con, table)
    if name == table:
        return
    con.execute(f"CREATE TABLE IF NOT EXISTS {name} AS SELECT * FROM {table} LIMIT 0")
    have = {r[0] for r in con.execute(f"DESCRIBE {name}").fetchall()}
    for column, kind, *_ in con.execute(f"DESCRIBE {table}").fetchall():
        if column not in have:   # a column added to the paper's table later (sql/<table>.sql's ALTERs)
            con.execute(f'ALTER TABLE {name} ADD COLUMN "{column}" {kind}')


def result_rows(con: duckdb.DuckDBPyConnection, trace: str, method: str, settings: EvaluationSettings) -> dict:
    """How many rows ``method``'s variants have in each result table of ``settings``' view (what an
    up-to-date check compares with the record: a record alone does not prove the rows are there)."""
    names = list(variant_names(METHODS[method]))
    out = {}
    for table in ("predictions", "job_metrics", "f1_over_time"):
        name = result_table(table, settings)
        exists = con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = ?",
                             [name]).fetchone()[0]
        out[table] = int(con.execute(f"SELECT count(*) FROM {name} WHERE trace = ? AND method IN (SELECT unnest(?))",
                                     [trace, names]).fetchone()[0]) if exists else 0
    return out


def resolve_feature_set(con: duckdb.DuckDBPyConnection, trace: str, requested: str) -> tuple[str, str]:
    """(the feature set the methods see, why): 'auto' is 'usage' where the trace has task_usage
    and 'events' where it has none (a partial mirror) and the format has event features; a set
    the trace's format does not have is an error naming the setting."""
    fmt = trace_format(trace)
    if requested != "auto":
        fmt.feature_set(requested)   # raises on a set the format lacks
        return requested, f"feature_set={requested} (configured)"
    if not fmt.tables:   # staged from its own files (Spark event logs): no usage table to be absent
        return "usage", f"feature_set=auto: trace {trace}'s own features ({', '.join(fmt.features)})"
    absent = usage_absent_reason(con, trace)
    if absent is None or not fmt.event_features:
        return "usage", (f"feature_set=auto: trace {trace} has usage measurements, so its usage features "
                         f"({', '.join(fmt.features)})")
    return "events", (f"feature_set=auto: trace {trace} has no task_usage parts (a partial mirror), so the "
                      f"features computed from events (docs/EVENT_FEATURES.md)")


def feature_names(trace: str, feature_set: str = "usage") -> tuple[str, ...]:
    """The checkpoint_features columns of ``feature_set`` (resolved: usage, events or all)."""
    return trace_format(trace).feature_set(feature_set)


def load_jobs(con: duckdb.DuckDBPyConnection, trace: str, settings: EvaluationSettings
              ) -> tuple[list[JobData], pd.DataFrame]:
    """Every selected job of ``trace`` as JobData, and the jobs skipped (with why).

    Holds every job in memory: for benchmarks and tests. ``evaluate`` streams batches instead.
    """
    feats = feature_names(trace, resolve_feature_set(con, trace, settings.feature_set)[0])
    out = []
    with tempfile.TemporaryDirectory(prefix="nurd-jobs-") as tmp, clock_tables(con, trace, settings):
        jobs, skipped = selected_jobs(con, trace, settings)
        path = export_batch(con, trace, feats, jobs["job_id"].tolist(), Path(tmp), grid_tables(settings)[1])
        for row in jobs.itertuples(index=False):
            out.append(read_job(str(path), int(row.job_id), float(row.tau_s), int(row.n_tasks), feats))
    return out, skipped


def not_applicable(trace: str, settings: EvaluationSettings) -> str | None:
    """Why the evaluation under ``settings`` does not apply to ``trace`` (one line), or None: a format
    without the paper's grid (TraceFormat.paper_protocol_not_applicable) has only the operator's
    protocol on its online clock."""
    why = trace_format(trace).paper_protocol_not_applicable
    if why and not uses_online_clock(settings):
        return (f"the paper's protocol does not apply to trace {trace}: {why} (threshold='online', "
                f"decision_clock='online')")
    return None


def not_applicable_notes(trace: str, views: Sequence[EvaluationSettings]) -> dict[str, str]:
    """{"paper_protocol" or "operator_protocol": why} for each of ``views`` that does not apply to
    ``trace`` (the one line an evaluation's metadata shows)."""
    return {("operator" if is_operator(v) else "paper") + "_protocol": why
            for v in views for why in [not_applicable(trace, v)] if why}


def selected_jobs(con: duckdb.DuckDBPyConnection, trace: str, settings: EvaluationSettings
                  ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The jobs to replay (one row each) and the jobs skipped, after checking that the features
    were built with this evaluation's quantile (tau is the job's latency quantile); on the decision
    times and features of ``settings``' clock (stragglers/prediction/replay/clock.py)."""
    why = not_applicable(trace, settings)
    if why:
        raise ValueError(why)
    checkpoints, features = grid_tables(settings)
    expected = {"quantile": settings.quantile}
    if uses_online_clock(settings):   # the clock's timed decisions give the online methods their step
        expected |= {"clock_interval_s": settings.clock_interval_s,
                     "clock_doubling_after": settings.clock_doubling_after}
    require_settings(con, features, trace, expected)
    return evaluable_jobs(con, trace, settings.min_finished, checkpoints)


def method_factory(name: str, settings: EvaluationSettings) -> Callable[[], Method]:
    """A picklable zero-argument constructor for method ``name`` (a METHODS key): its
    hyperparameters from the settings it declares, and the authors' values where
    ``settings.baseline_params`` is "authors"."""
    if name not in METHODS:
        raise KeyError(f"unknown method {name!r}; known: {', '.join(METHODS)}")
    cls = METHODS[name]
    params = {p: getattr(settings, p) for p in cls.settings_params}
    if settings.baseline_params == "authors":
        params |= dict(cls.authors_params)
    return partial(cls, **params)


@dataclass
class EvaluationOutcome:
    frames: dict[str, pd.DataFrame]
    summary: pd.DataFrame
    hyperparameters: dict[str, dict]
    n_jobs: int
    skipped: pd.DataFrame
    seconds: float
    replay: ReplayStats | None = None    # engine, batches, replay seconds
    feature_set: str = "usage"           # the resolved feature set the methods saw


def evaluation_inputs(con: duckdb.DuckDBPyConnection, trace: str, method: str, settings: EvaluationSettings) -> str:
    """What an evaluation of ``method`` is computed from: the features (their own inputs digest),
    the evaluation settings, the method's name and its hyperparameters, and the replay's code (a
    changed default or simulation in the code re-runs the evaluation instead of keeping stale rows)."""
    kept = {k: v for k, v in settings.as_dict().items() if k != "workers"}  # results do not depend on it
    hyperparameters = method_factory(method, settings)().hyperparameters()
    return digest([recorded_inputs(con, grid_tables(settings)[1], trace), kept, method, hyperparameters,
                   code_digest("stragglers.prediction")])


def _view(settings: EvaluationSettings) -> str:
    return "operator's protocol" if is_operator(settings) else "paper's protocol"


def evaluate_unless_current(con: duckdb.DuckDBPyConnection, trace: str, methods: Sequence[str],
                            views: Sequence[EvaluationSettings], engine: EngineSettings,
                            log: Callable[[str], None]) -> tuple[list[tuple[EvaluationSettings, Kept]], str]:
    """Evaluate ``methods`` under each of ``views`` (``both_views``: the paper's protocol and the
    operator's), each unless it was last evaluated on the same features with the same settings
    (then its rows would be identical): stragglers/warehouse/freshness.py decides, per method, from
    the ledger. Returns per view its kept result (the EvaluationOutcome when it ran) and the data
    version (a digest of every view's inputs)."""
    kept, versions = [], []
    for why in filter(None, (not_applicable(trace, v) for v in views)):
        log(why)
    for settings in [v for v in views if not not_applicable(trace, v)]:
        key = "operator_evaluation" if is_operator(settings) else "evaluation"
        wanted = {m: evaluation_inputs(con, trace, m, settings) for m in methods}

        def run(settings: EvaluationSettings = settings) -> EvaluationOutcome:
            log(f"evaluating {list(methods)} on {trace} ({_view(settings)}): "
                f"{'Dask scheduler ' + engine.dask_address if engine.dask_address else 'local processes'}, "
                f"batches of {engine.batch_jobs} jobs via {engine.exchange_dir}")
            return evaluate(con, trace, methods, settings, progress=ProgressLog(log, list(methods)), engine=engine,
                            exchange=engine.exchange_dir)

        method_of = {f"{key}:{m}": m for m in methods}
        result = current_or_compute(
            con, trace, {f"{key}:{m}": v for m, v in wanted.items()}, run, settings=settings.as_dict(),
            rows=lambda name, settings=settings: result_rows(con, trace, method_of[name], settings),
            upstream=("checkpoint_features",))
        if not result.rebuilt:
            log(f"{list(methods)} ({_view(settings)}): up to date (same features and settings as the last "
                "evaluation): not re-run")
        kept.append((settings, result))
        versions.append(sorted(wanted.items()))
    return kept, digest(versions)


def evaluate(con: duckdb.DuckDBPyConnection, trace: str, methods: Sequence[str], settings: EvaluationSettings,
             progress: Callable[[int, int], None] | None = None, engine: EngineSettings | None = None,
             exchange: str | Path | None = None) -> EvaluationOutcome:
    """Replay ``methods`` (registry names; 'nurd' = the NURD family) on every job of ``trace``
    and replace their rows in the result tables (``result_table``: the operator's protocol has its own).

    Jobs are streamed in batches (``engine.batch_jobs``) through Parquet files in ``exchange``
    and replayed on local processes or a Dask cluster (stragglers/prediction/replay/workers.py).
    Finished jobs' predictions are spooled to Parquet files beside the batches (not held in
    memory, nor in a DuckDB transaction open for the whole replay);
    all writes are one transaction after the last job (old rows deleted, spooled rows inserted),
    so an interrupted evaluation writes nothing.
    """
    with clock_tables(con, trace, settings):   # the task clock's tables shadow the warehouse's
        return _evaluate(con, trace, methods, settings, progress, engine, exchange)


def _evaluate(con: duckdb.DuckDBPyConnection, trace: str, methods: Sequence[str], settings: EvaluationSettings,
              progress: Callable[[int, int], None] | None, engine: EngineSettings | None,
              exchange: str | Path | None) -> EvaluationOutcome:
    started = time.perf_counter()
    engine = engine or EngineSettings()
    feature_set, _ = resolve_feature_set(con, trace, settings.feature_set)
    feats = feature_names(trace, feature_set)
    jobs, skipped = selected_jobs(con, trace, settings)
    if jobs.empty:
        raise LookupError(f"trace {trace!r} has no job to evaluate (skipped: {len(skipped)})")
    factories = [method_factory(m, settings) for m in methods]
    hyper = {}
    for f in factories:
        m = f()
        for v in m.variant_names:
            hyper[v] = m.hyperparameters()
    variants = sorted(hyper)
    kept: dict[str, list[pd.DataFrame]] = {"job_metrics": [], "f1_over_time": [], "method_fallbacks": []}
    spool = PredictionSpool()
    prepare = job_transform(con, trace, settings)
    # methods that learn from earlier jobs: one replay per job scores every threshold, then each job's
    # threshold is chosen on the jobs that ended before it (stragglers/prediction/evaluation/history.py)
    learners = learning_methods(methods)
    tasks = TASKS_OF[grid_tables(settings)[0]]   # the tasks the replay sees (the paper's, or the operator's)
    selection = None
    if learners:
        selection = CostAwareSelection.from_warehouse(
            con, trace, feats, jobs["job_id"].tolist(), {m: f for m, f in zip(methods, factories) if m in learners},
            settings.cost_lambda, settings.history_min_jobs, copy_keeps=settings.copy_keeps, tasks=tasks)
        prepare = AttachHistory(selection.histories, prepare)
        factories = [partial(ThresholdGrid, f) if m in learners else f for m, f in zip(methods, factories)]
    # the operator's view: every cut of every other method's flag in the same replay (its cost curve,
    # stragglers/prediction/verdicts/sweep.py); the methods' own results are those of their plain replay
    sweep = None
    if is_operator(settings):
        sweep = SweepCollector(trace, copy_jobs(con, trace, settings.copy_keeps, jobs["job_id"].tolist()))
        factories = [f if m in learners else partial(SweepGrid, f) for m, f in zip(methods, factories)]

    def store(results) -> None:
        if selection is not None:
            for r in results:
                if selection.owns(r):
                    selection.add(r)
            results = [r for r in results if not selection.owns(r)]
        if sweep is not None:
            results = [sweep.add(r) for r in results]
        if not results:
            return
        frames = results_frames(results, trace)
        spool.add(frames["predictions"])   # the bulk: to disk, not kept here
        for table in kept:
            kept[table].append(frames[table])

    name = {t: result_table(t, settings) for t in RESULT_TABLES}
    for table in RESULT_TABLES:
        create_result_table(con, table, name[table])
    with contextlib.ExitStack() as stack:
        exchange = exchange or engine.exchange_dir or stack.enter_context(
            tempfile.TemporaryDirectory(prefix="nurd-exchange-"))
        Path(exchange).mkdir(parents=True, exist_ok=True)
        spool.directory = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="results-", dir=exchange)))
        # this process scores what the workers send back (the sweep's and the caps' copies, the cost-aware
        # choice): with one BLAS thread, as they have (a threaded BLAS on these small fits cost 3x the CPU)
        stack.enter_context(threadpool_limits(1))
        stats = replay_batches(con, trace, jobs, factories, features=feats,
                               seed=settings.seed, workers=settings.workers, settings=engine,
                               exchange=Path(exchange), on_job=store, progress=progress,
                               prepare=prepare, features_table=grid_tables(settings)[1])
        curve = None
        if selection is not None:
            final, curve, chosen = selection.finish()
            if sweep is not None:            # every threshold of the survival family through the engine
                for by_job in selection.results.values():
                    for r in by_job.values():
                        sweep.score(r)
            store(final)
            for m, by_job in chosen.items():
                got = [q for q in by_job.values() if q is not None]
                hyper[m] = hyper[m] | {"jobs_with_cost_aware_threshold": len(got),
                                       "jobs_with_fallback_threshold": len(by_job) - len(got),
                                       "chosen_threshold_median": float(pd.Series(got).median()) if got else None}
        frames = {t: _concat(kept[t], ["method", "job_id"] + (["k"] if t != "job_metrics" else []))
                  for t in kept}
        seconds = time.perf_counter() - started
        frames["evaluation_runs"] = pd.DataFrame([{
            "trace": trace, "method": v, "n_jobs": len(jobs), "n_jobs_skipped": len(skipped),
            "settings": json.dumps(settings.as_dict() | {"feature_set_resolved": feature_set}),
            "hyperparameters": json.dumps(hyper[v], default=str),
            "seconds": seconds, "finished_at": datetime.now(timezone.utc).replace(tzinfo=None)} for v in variants])
        frames["cost_curve"] = curve
        frames["sweep_outcomes"] = sweep.frame() if sweep is not None else None
        frames["capped_outcomes"] = sweep.capped_frame() if sweep is not None else None
        spool.flush()
        with transaction(con):
            _delete(con, trace, variants, [name[t] for t in RESULT_TABLES])
            if spool.files:
                con.execute(f"INSERT INTO {name['predictions']} BY NAME SELECT * FROM read_parquet(?)",
                            [[str(f) for f in spool.files]])
            for table in ("job_metrics", "f1_over_time", "method_fallbacks", "evaluation_runs", "cost_curve",
                          "sweep_outcomes", "capped_outcomes"):
                insert_frame(con, name[table], frames[table])
    summary = table3(frames["job_metrics"], n_boot=settings.n_boot, seed=settings.seed)
    return EvaluationOutcome(frames, summary, hyper, len(jobs), skipped, seconds, stats, feature_set)


class PredictionSpool:
    """Prediction rows written to Parquet files of about ``rows_per_file`` rows."""

    def __init__(self, rows_per_file: int = 200_000) -> None:
        self.rows_per_file, self.directory = rows_per_file, None
        self.buffer: list[pd.DataFrame] = []
        self.buffered = 0
        self.files: list[Path] = []

    def add(self, df: pd.DataFrame) -> None:
        if len(df):
            self.buffer.append(df)
            self.buffered += len(df)
            if self.buffered >= self.rows_per_file:
                self.flush()

    def flush(self) -> None:
        if self.buffer:
            path = self.directory / f"predictions-{len(self.files):05d}.parquet"
            pd.concat(self.buffer, ignore_index=True).to_parquet(path, index=False)
            self.files.append(path)
            self.buffer, self.buffered = [], 0


def _concat(parts: list[pd.DataFrame], order: list[str]) -> pd.DataFrame:
    parts = [p for p in parts if len(p)]
    if not parts:
        return pd.DataFrame()
    df = pd.concat(parts, ignore_index=True)
    return df.sort_values([c for c in order if c in df.columns], kind="stable", ignore_index=True)


def _delete(con: duckdb.DuckDBPyConnection, trace: str, methods: Sequence[str],
            tables: Sequence[str] = RESULT_TABLES) -> None:
    for table in tables:
        con.execute(f"DELETE FROM {table} WHERE trace = ? AND method IN (SELECT unnest(?))", [trace, list(methods)])
