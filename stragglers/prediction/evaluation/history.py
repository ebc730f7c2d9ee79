"""What a scheduler learns from earlier jobs (docs/EVALUATION.md "The survival family").

A method tagged ``learns_from_earlier_jobs`` gets, at each job, only the jobs that *ended* before
the job's first checkpoint: cutoff = the job's first SCHEDULE + t0, in trace time. From them:

- a **prior** (``HistoryPrior``): the within-job slopes of log-latency on the features and the
  within-job spread, by fixed-effects least squares over their tasks (each job's own mean of
  log-latency and of every feature removed; the features are those of each task at its job's
  last warehouse checkpoint). ``survival_history`` centres its per-job fit on it;
- a **cost-aware threshold**: the threshold q of the grid ``THRESHOLD_GRID`` that maximized, over
  those jobs, the mean JCT reduction minus lambda x the mean extra machine time (both as shares
  of the job's own) under speculative copies with a machine always free (the replay engine, uncapped,
  the copies of the completion tables: ``speculation.copy_draws``, setting ``copy_keeps``). Ties go to the higher threshold (fewer copies).

While fewer than ``history_min_jobs`` jobs have ended, a job gets no prior and the method's
fallback threshold (the first jobs of a trace).

One replay per job serves every threshold (``ThresholdGrid``): the survival methods' fits do not
depend on their flags (the training sets are the trace's), so the flags at threshold q are, for
each task, the first checkpoint at which its survival probability exceeds q. The chosen column is
the method's result; the others give each later job's choice and the curve over lambda
(``cost_curve``). Choosing needs the earlier jobs' outcomes only, so it runs in time order after
the (parallel) replays: the replays see no threshold.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import partial
from typing import Callable, Mapping, Sequence

import duckdb
import numpy as np
import pandas as pd

from stragglers.prediction.engine.draws import RELAUNCH_SEEDS, copy_draws
from stragglers.prediction.engine.caps import Uncapped
from stragglers.prediction.engine.job import CopyJob
from stragglers.prediction.engine.policies import from_flags
from stragglers.prediction.engine.replay import replay_all
from stragglers.prediction.replay.earlier import earlier_jobs, job_times
from stragglers.prediction.replay.workers import replay_jobs
from stragglers.prediction.methods import METHODS
from stragglers.prediction.methods.base import HistoryPrior, JobHistory, Method, MethodTags, TaskSet
from stragglers.prediction.replay.simulate import JobData, JobResult, ScoreRecorder
from stragglers.trace_formats import CLOCK_FEATURES, FORMATS

#: The thresholds one replay scores (P(T > tau | T > t, x) > q).
#: Finer towards 1: late in a job a long-running task's probability nears 1, and with a price on
#: machine time the best threshold sat at the old top, 0.95 (the grid was widened before any choice).
THRESHOLD_GRID: tuple[float, ...] = tuple(round(0.05 * i, 2) for i in range(1, 20)) + (0.97, 0.98, 0.99, 0.995, 0.999)
#: The prices of machine time the curve is reported at (the configured cost_lambda is added).
LAMBDA_GRID: tuple[float, ...] = (0.0, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0)

COST_CURVE_COLUMNS = ["trace", "method", "cost_lambda", "configured", "n_jobs", "n_jobs_with_history",
                      "threshold_mean", "jct_reduction", "extra_machine_share", "f1_mean"]


def grid_variant(method: str, q: float) -> str:
    return f"{method}@{q:g}"


# ----------------------------------------------------------------------------- which jobs came before

def task_latencies(con: duckdb.DuckDBPyConnection, trace: str, tasks: str = "tasks") -> dict[int, pd.Series]:
    """Per job, its tasks' latencies (s) by task_id: what the speculation outcomes are computed on
    (of ``tasks``: for the operator's tasks, how long each ran, however it ended)."""
    lat = con.execute(f"SELECT job_id, task_id, latency_s FROM {tasks} WHERE trace = ?", [trace]).df()
    return {int(j): g.set_index("task_id")["latency_s"] for j, g in lat.groupby("job_id")}


def task_finished(con: duckdb.DuckDBPyConnection, trace: str, tasks: str = "tasks") -> dict[int, pd.Series] | None:
    """Per job, whether each task finished, by task_id (None for the paper's tasks: all do)."""
    if tasks == "tasks":
        return None
    df = con.execute(f"SELECT job_id, task_id, finished FROM {tasks} WHERE trace = ?", [trace]).df()
    return {int(j): g.set_index("task_id")["finished"] for j, g in df.groupby("job_id")}


def task_starts(con: duckdb.DuckDBPyConnection, trace: str, tasks: str = "tasks") -> dict[int, pd.Series] | None:
    """Per job, each task's start on the job's wall clock (s) by task_id, where the copies of its
    flags are simulated on that clock (None for the paper's tasks: every task starts at 0)."""
    if tasks == "tasks":
        return None
    df = con.execute(f"SELECT job_id, task_id, start_us / 1e6 AS start_s FROM {tasks} WHERE trace = ?", [trace]).df()
    return {int(j): g.set_index("task_id")["start_s"] for j, g in df.groupby("job_id")}


# ----------------------------------------------------------------------------- the prior

def prior_rows(con: duckdb.DuckDBPyConnection, trace: str, features: Sequence[str]) -> pd.DataFrame:
    """Every task's features at its job's last warehouse checkpoint and its latency; on a format
    without the paper's grid (Spark's logs), every finished task's at its job's last decision of
    the operator's clock."""
    fmt = FORMATS.get(trace)   # a name of no format (a hand-made warehouse) has the paper's grid
    table, tasks, finished = (("operator_checkpoint_features", "operator_tasks", "AND t.finished")
                              if fmt is not None and fmt.paper_protocol_not_applicable
                              else ("checkpoint_features", "tasks", ""))
    cols = ", ".join(f"f.{c}" for c in features)
    return con.execute(f"""
        WITH last AS (SELECT job_id, max(k) AS k FROM {table} WHERE trace = ? GROUP BY job_id)
        SELECT f.job_id, f.task_id, t.latency_s, {cols}
        FROM {table} f JOIN last USING (job_id, k)
        JOIN {tasks} t ON t.trace = f.trace AND t.job_id = f.job_id AND t.task_id = f.task_id {finished}
        WHERE f.trace = ? ORDER BY f.job_id, f.task_id""", [trace, trace]).df()


@dataclass
class PriorFitter:
    """Within-job sufficient statistics per job; ``fit(ids)`` pools those of ``ids``."""

    features: tuple[str, ...]
    stats: dict[int, tuple[np.ndarray, np.ndarray, float, int]] = field(default_factory=dict)

    @classmethod
    def from_rows(cls, rows: pd.DataFrame, features: Sequence[str]) -> "PriorFitter":
        fitter = cls(tuple(features))
        use = np.array([f not in CLOCK_FEATURES for f in features])
        for job_id, g in rows.groupby("job_id", sort=True):
            y = g["latency_s"].to_numpy(float)
            ok = y > 0
            X = np.nan_to_num(g[list(features)].to_numpy(float)[ok]) * use
            z = np.log(y[ok])
            if len(z) < 3:
                continue
            Xc, zc = X - X.mean(axis=0), z - z.mean()
            fitter.stats[int(job_id)] = (Xc.T @ Xc, Xc.T @ zc, float(zc @ zc), len(z))
        return fitter

    def fit(self, ids: Sequence[int]) -> HistoryPrior | None:
        got = [self.stats[i] for i in ids if i in self.stats]
        if not got:
            return None
        A = sum(s[0] for s in got)
        b = sum(s[1] for s in got)
        c = sum(s[2] for s in got)
        n = sum(s[3] for s in got)
        d = A.shape[0]
        # a tiny ridge keeps columns without spread (all-zero, or left out) at slope 0
        beta = np.linalg.solve(A + 1e-6 * np.eye(d), b)
        rss = max(c - 2 * beta @ b + beta @ A @ beta, 0.0)
        dof = max(n - len(got) - int(np.sum(np.diag(A) > 1e-12)), 1)
        sigma = float(np.sqrt(rss / dof))
        if not np.isfinite(sigma) or sigma <= 0:
            return None
        return HistoryPrior(beta=beta, sigma=sigma, variance=np.diag(A) / n, n_jobs=len(got), n_tasks=int(n))


def build_histories(con: duckdb.DuckDBPyConnection, trace: str, features: Sequence[str], job_ids: Sequence[int],
                    min_jobs: int, tasks: str = "tasks") -> dict[int, JobHistory]:
    """Per job to replay: the earlier jobs (``job_times`` of ``tasks``) and the prior fitted on them
    (thresholds come later)."""
    times = job_times(con, trace, tasks)
    before = earlier_jobs(times)
    cutoff = dict(zip(times["job_id"].astype(int), times["cutoff_us"].astype(int)))
    fitter = PriorFitter.from_rows(prior_rows(con, trace, features), features)
    out = {}
    for j in job_ids:
        ids = before.get(int(j), ())
        prior = fitter.fit(ids) if len(ids) >= min_jobs else None
        out[int(j)] = JobHistory(earlier_jobs=ids, cutoff_us=cutoff.get(int(j), 0), prior=prior)
    return out


@dataclass(frozen=True)
class AttachHistory:
    """The engine's ``prepare``: the protocol's own first, then the job's history (picklable)."""

    histories: Mapping[int, JobHistory]
    then: Callable[[JobData], JobData] | None = None

    def __call__(self, job: JobData) -> JobData:
        if self.then is not None:
            job = self.then(job)
        return replace(job, history=self.histories.get(int(job.job_id)))

    def for_job(self, job_id: int) -> "AttachHistory":
        """The same for one job, holding only its history (what the engine ships with the job)."""
        then = self.then.for_job(job_id) if hasattr(self.then, "for_job") else self.then
        return AttachHistory({job_id: self.histories[job_id]} if job_id in self.histories else {}, then)


# ----------------------------------------------------------------------------- one replay, every threshold

class ThresholdGrid(Method):
    """A thresholded survival method replayed once for every threshold of ``grid``: variant
    ``<name>@<q>`` flags when the method's ``survival`` exceeds q."""

    tags = MethodTags(learns_from_earlier_jobs=True)

    def __init__(self, factory: Callable[[], Method], grid: Sequence[float] = THRESHOLD_GRID) -> None:
        super().__init__()
        self.inner = factory()
        self.grid = tuple(float(q) for q in grid)
        self.variants = tuple(grid_variant(self.inner.name, q) for q in self.grid)

    def reset(self, job) -> None:
        super().reset(job)
        self.inner.reset(job)
        self.scores_ = ScoreRecorder(job.task_ids)

    def begin(self, finished: TaskSet, running: TaskSet, t0: float) -> None:
        self.inner.begin(finished, running, t0)

    def fit(self, finished: TaskSet, running: TaskSet, t: float) -> None:
        self.inner.job = self.job          # tau_hat(t) under the online threshold
        self.inner.fit(finished, running, t)
        self.t_ = t

    def flag(self, candidates: TaskSet) -> dict[str, np.ndarray]:
        p = self.inner.survival(candidates)
        self.scores_.add(self.t_, candidates.task_ids, {self.inner.name: p})   # the order of its copies
        return {v: p > q for v, q in zip(self.variants, self.grid)}

    def hyperparameters(self) -> dict:
        return self.inner.hyperparameters()

    def score_trail(self):
        return self.scores_.trail()


# ----------------------------------------------------------------------------- the choice, in time order

def choose_threshold(outcomes: Mapping[int, np.ndarray], ids: Sequence[int], cost_lambda: float,
                     grid: Sequence[float] = THRESHOLD_GRID) -> float:
    """The q maximizing mean over ``ids`` of reduction(q) - lambda x extra(q); ties to the higher q.
    ``outcomes[i]``: (len(grid), 2) array of (reduction, extra) for job i."""
    m = np.mean([outcomes[i] for i in ids], axis=0)
    gain = m[:, 0] - cost_lambda * m[:, 1]
    best = np.flatnonzero(gain >= gain.max() - 1e-12)
    return float(grid[int(best[-1])])


@dataclass
class CostAwareSelection:
    """Collects the grid replays of the learning methods, then picks each job's threshold from the
    jobs that ended before it and returns the results under the methods' own names."""

    trace: str
    histories: Mapping[int, JobHistory]
    latency: Mapping[int, pd.Series]          # job -> latency_s by task_id
    cost_lambda: float
    min_jobs: int
    fallback: Mapping[str, float]             # method -> its fallback threshold
    copy_keeps: float = 0.0                   # the copy model (setting copy_keeps)
    grid: tuple[float, ...] = THRESHOLD_GRID
    results: dict[str, dict[int, JobResult]] = field(default_factory=dict)
    outcomes: dict[str, dict[int, np.ndarray]] = field(default_factory=dict)
    finished: Mapping[int, pd.Series] | None = None   # job -> finished by task_id (None: every task)
    start: Mapping[int, pd.Series] | None = None      # job -> start on its wall clock by task_id (None: task clock)

    def __post_init__(self) -> None:
        for method, q in self.fallback.items():
            if q not in self.grid:
                raise ValueError(f"{method}: fallback_threshold={q!r} is not on the threshold grid {self.grid}")

    @classmethod
    def from_warehouse(cls, con: duckdb.DuckDBPyConnection, trace: str, features: Sequence[str],
                       job_ids: Sequence[int], factories: Mapping[str, Callable[[], Method]], cost_lambda: float,
                       min_jobs: int, *, copy_keeps: float = 0.0, tasks: str = "tasks") -> "CostAwareSelection":
        """For ``factories`` (learning method name -> factory) on the jobs ``job_ids`` of ``trace``
        (``copy_keeps`` and ``tasks`` by keyword: a positional "operator_tasks" once landed in copy_keeps):
        their histories (``build_histories``), the tasks' latencies, each method's fallback; on the
        paper's tasks or the operator's (``tasks``)."""
        histories = build_histories(con, trace, features, job_ids, min_jobs, tasks)
        return cls(trace, histories, task_latencies(con, trace, tasks), cost_lambda, min_jobs,
                   {m: f().fallback_threshold for m, f in factories.items()}, copy_keeps,
                   finished=task_finished(con, trace, tasks), start=task_starts(con, trace, tasks))

    def owns(self, result: JobResult) -> bool:
        """A grid replay of one of the learning methods (the others' results pass by)."""
        return result.variants[0].method.split("@")[0] in self.fallback and "@" in result.variants[0].method

    def add(self, result: JobResult) -> None:
        method = result.variants[0].method.split("@")[0]
        job = self.copy_job(result)
        by_q = {v.method: v for v in result.variants}
        pos = pd.Index(job.task_ids).get_indexer(result.task_ids)
        policies = []
        for q in self.grid:
            f = np.full(len(job.task_ids), np.nan)
            f[pos] = by_q[grid_variant(method, q)].flagged_at
            policies.append(from_flags(method, f"{q:g}", f, job.checks))
        out = np.array([[o[0].jct_reduction, o[0].extra_machine_share] for _, o in replay_all(job, policies, [Uncapped()])])
        self.results.setdefault(method, {})[int(result.job_id)] = result
        self.outcomes.setdefault(method, {})[int(result.job_id)] = out

    def copy_job(self, result: JobResult) -> CopyJob:
        """The engine's job of ``result`` (its tasks as the replay saw them, checked at its decisions)."""
        j = int(result.job_id)
        ids = result.task_ids
        y = self.latency[j].reindex(ids).to_numpy(float)
        fin = np.ones(len(y), bool) if self.finished is None else self.finished[j].reindex(ids).to_numpy(bool)
        st = np.zeros(len(y)) if self.start is None else self.start[j].reindex(ids).to_numpy(float)
        checks = (result.checkpoints[1:] if result.checkpoints is not None else
                  np.unique(np.concatenate([v.flagged_at[~np.isnan(v.flagged_at)] for v in result.variants])))
        draws = tuple(copy_draws(y, self.trace, j, RELAUNCH_SEEDS, self.copy_keeps,
                                 finished=None if self.finished is None else fin))
        return CopyJob(self.trace, j, np.asarray(ids), st, y, fin, np.asarray(checks, dtype=float), draws)

    def chosen(self, method: str, cost_lambda: float) -> dict[int, float | None]:
        """Per job: the threshold chosen on its earlier jobs, None while too few have ended."""
        outcomes = self.outcomes.get(method, {})
        out = {}
        for j in outcomes:
            ids = [i for i in self.histories[j].earlier_jobs if i in outcomes]
            out[j] = choose_threshold(outcomes, ids, cost_lambda, self.grid) if len(ids) >= self.min_jobs else None
        return out

    def finish(self) -> tuple[list[JobResult], pd.DataFrame, dict[str, dict[int, float | None]]]:
        """(results under each method's name, the cost curve rows, the chosen thresholds)."""
        final, curve, chosen_all = [], [], {}
        for method, by_job in self.results.items():
            lambdas = sorted(set(LAMBDA_GRID) | {float(self.cost_lambda)})
            for lam in lambdas:
                chosen = self.chosen(method, lam)
                qs = {j: (q if q is not None else self.fallback[method]) for j, q in chosen.items()}
                idx = {j: self.grid.index(q) for j, q in qs.items()}
                o = np.array([self.outcomes[method][j][idx[j]] for j in sorted(qs)])
                f1 = [by_job[j].variants[idx[j]].scores["f1"] for j in sorted(qs)]
                curve.append({"trace": self.trace, "method": method, "cost_lambda": lam,
                              "configured": lam == float(self.cost_lambda), "n_jobs": len(qs),
                              "n_jobs_with_history": sum(q is not None for q in chosen.values()),
                              "threshold_mean": float(np.mean(list(qs.values()))),
                              "jct_reduction": float(o[:, 0].mean()), "extra_machine_share": float(o[:, 1].mean()),
                              "f1_mean": float(np.nanmean(f1))})
                if lam == float(self.cost_lambda):
                    chosen_all[method] = chosen
                    for j, r in by_job.items():
                        v = r.variants[idx[j]]
                        final.append(replace(r, variants=[replace(v, method=method)]))
        return final, pd.DataFrame(curve, columns=COST_CURVE_COLUMNS), chosen_all


def learning_methods(methods: Sequence[str]) -> list[str]:
    return [m for m in methods if METHODS[m].tags.learns_from_earlier_jobs]


def replay_with_history(con: duckdb.DuckDBPyConnection, trace: str, jobs: Sequence[JobData],
                        factory: Callable[[], Method], cost_lambda: float, min_jobs: int, *, seed: int = 0,
                        workers: int = 1) -> tuple[list[JobResult], pd.DataFrame]:
    """In memory (benchmarks, tests): replay ``factory``'s method on ``jobs`` (already under their
    protocol), each with the history of the jobs that ended before it, and choose its thresholds.
    Returns the method's results and its cost curve."""
    if not jobs:
        raise ValueError(f"trace {trace!r}: no job to replay")
    method = factory()
    sel = CostAwareSelection.from_warehouse(con, trace, jobs[0].feature_names, [j.job_id for j in jobs],
                                            {method.name: factory}, cost_lambda, min_jobs)
    attach = AttachHistory(sel.histories)
    for r in replay_jobs([attach(j) for j in jobs], [partial(ThresholdGrid, factory)], seed=seed, workers=workers):
        sel.add(r)
    final, curve, _ = sel.finish()
    return final, curve
