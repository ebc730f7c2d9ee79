"""Every method at every budget: the flag threshold's sweep (docs/EVALUATION.md "Cost curves").

Every method is a ranking: at each decision it gives each running task a score, higher for a
likelier straggler (``Method.sweep_scores``: a predicted latency over tau_hat, a probability, an
outlier score...; Spark's rule: elapsed time over the finished tasks' median; the KM rule:
P(latency > tau_hat | elapsed); wait-for-tau: (elapsed + step) / tau_hat), and its sweep's points
are cuts of that score (``Method.sweep_flags``; Spark's: quantile x multiplier x minTaskRuntime).
Under the operator's protocol one replay per job scores every cut (``SweepGrid``): the method's
own variants are replayed exactly as alone, and the sweep's variants ``<name>@<cut>`` beside them;
the replay keeps the scores (``simulate.ScoreTrail``), the order a scheduler with a budget copies
in (``capped_rows``). Each point's outcome per job (``SweepCollector``): the JCT reduction and the
extra machine time (shares of the job's) with a speculative copy per flag and a machine always
free, mean over the completion seeds (the relaunch draws of the report).

From those per-job outcomes (table ``sweep_outcomes``):

- ``curve_table``: each point's means over jobs: the method's cost curve;
- ``tuned_points``: at a budget of extra machine time, each job's point chosen on the jobs that
  ended before its first checkpoint (``history.earlier_jobs``, time order): the largest mean JCT
  cut whose mean extra machine time is within the budget, "no copy" when none is or while fewer
  than ``min_jobs`` jobs have ended. For Spark's rule this is the tuned Spark rule;
- ``budget_table``: per budget, each method tuned so, and the paired bootstrap interval over jobs
  of its difference with the best free rule at that budget (tuned the same way); beside it the
  best point of the curve within budget (chosen on the jobs it is scored on: an upper bound);
- ``area_to_budget``: the area under a curve's upper envelope up to a budget, over the budget
  (the mean JCT cut over budgets 0..b).

A method whose score depends on the candidate set (SOS, COF, SOD score candidates among
themselves) scores the sweep on the tasks that some cut has not flagged yet: its own variant is
replayed exactly, its sweep's points are what that scoring gives.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable, Collection, Mapping, Sequence

import numpy as np
import pandas as pd

import duckdb

from stragglers.prediction.completion import RELAUNCH_SEEDS
from stragglers.prediction.speculation import (
    HADOOP_CAP, capped_outcome, completion_time, copy_draws, copy_lease_seconds, ranked_by_cuts, ranked_by_score,
    ranked_by_truth, speculation_outcome, task_ends,
)
from stragglers.prediction.history import earlier_jobs, job_times
from stragglers.prediction.methods.base import DEGENERATE_DATA_ERRORS, CannotFit, Method, TaskSet
from stragglers.prediction.simulate import JobResult, ScoreRecorder

#: Budgets of extra machine time (shares of the jobs' own) the operator's answer is given at.
BUDGETS: tuple[float, ...] = (0.005, 0.01, 0.02, 0.05)
#: The budget the first paragraph of the report answers at.
HEADLINE_BUDGET = 0.02
#: A method's own flag rule (its default cut) in ``sweep_outcomes.point``.
DEFAULT_POINT = "default"
#: "no copy at all": what a tuned rule does when nothing fits the budget (zero cost, zero gain).
NO_COPY = "none"

OUTCOME_COLUMNS = ["trace", "method", "point", "job_id", "jct_reduction", "extra_machine_share", "n_flagged"]
CURVE_COLUMNS = ["trace", "method", "point", "n_jobs", "jct_reduction", "extra_machine_share"]
BUDGET_COLUMNS = ["trace", "method", "budget", "n_jobs", "n_jobs_choosing", "jct_reduction", "jct_lo", "jct_hi",
                  "extra_machine_share", "point_mode", "jobs_no_copy", "choosing_jct_reduction", "named", "reference",
                  "diff", "diff_lo", "diff_hi", "diff_p_holm", "named_diff", "named_diff_lo", "named_diff_hi",
                  "in_sample_jct_reduction", "in_sample_extra_machine_share", "in_sample_point", "area_to_5pct",
                  "spark_diff", "spark_diff_lo", "spark_diff_hi", "spark_diff_p_holm", "enforced", "jobs_over_budget",
                  "extra_p90", "headroom"]
#: ``budget_table.named``: the two methods named on the choosing half, before the scored half is read.
NAMED_LEARNED, NAMED_FREE_RULE = "learned method", "free rule"
#: The integer columns' dtypes as the tables above are computed (DuckDB's INTEGER reads back
#: int32): a table read back from the warehouse is cast to them (warehouse.results.read_back).
CURVE_DTYPES = {"n_jobs": "int64"}
BUDGET_DTYPES = {"n_jobs": "int64", "n_jobs_choosing": "int64", "jobs_no_copy": "int64", "jobs_over_budget": "int64"}
#: The oracle: under a cap it copies the tasks that truly end last first (the headroom at a budget).
ORACLE = "oracle"
#: The caps the replay's copies are scored under (``capped_rows``): each budget, and Hadoop's caps.
CAPS: tuple[str, ...] = tuple(f"{b:g}" for b in BUDGETS) + (HADOOP_CAP,)
#: The capped oracle's decisions: its first one, then this many evenly spaced up to the job's end.
ORACLE_DECISIONS = 200
CAPPED_COLUMNS = ["trace", "method", "point", "cap", "job_id", "jct_reduction", "extra_machine_share", "n_copies"]
#: The rule every learned method must beat, tuned like them (its difference has its own columns).
TUNED_RULE = "spark_speculation"

_ERRORS = (CannotFit, *DEGENERATE_DATA_ERRORS)


def split_variant(name: str) -> tuple[str, str]:
    """(method, point) of a replay variant: ``nurd@1.25`` -> (nurd, 1.25); ``nurd`` -> (nurd, default)."""
    method, _, point = name.partition("@")
    return method, point or DEFAULT_POINT


# ----------------------------------------------------------------------------- one replay, every cut

class SweepGrid(Method):
    """``factory``'s method replayed once for its own variants and every point of its sweep.

    The own variants see exactly the candidates they would alone (the tasks none of them has
    flagged yet), so their flags are the method's; a checkpoint where the method cannot fit or
    score is a fallback only where it would be one alone (some own candidate left)."""

    def __init__(self, factory: Callable[[], Method]) -> None:
        super().__init__()
        self.inner = factory()
        self.own = self.inner.variant_names
        self.points = self.inner.sweep_points()
        self.variants = self.own + self.points
        self.tags = self.inner.tags
        self.name = self.inner.name

    def reset(self, job) -> None:
        super().reset(job)
        self.inner.reset(job)
        self.flagged_ = {v: set() for v in self.own}
        self.scores_ = ScoreRecorder(job.task_ids)

    def scored_task_ids(self, job):
        return self.inner.scored_task_ids(job)

    def begin(self, finished: TaskSet, running: TaskSet, t0: float) -> None:
        self.inner.begin(finished, running, t0)

    def fit(self, finished: TaskSet, running: TaskSet, t: float) -> None:
        self.inner.job = self.job          # tau_hat(t) under the online threshold
        self.error_, self.t_ = None, t
        try:
            self.inner.fit(finished, running, t)
        except _ERRORS as e:
            self.error_ = e

    def flag(self, candidates: TaskSet) -> dict[str, np.ndarray]:
        ids = candidates.task_ids.tolist()
        own_open = np.array([any(i not in self.flagged_[v] for v in self.own) for i in ids], dtype=bool)
        out = {v: np.zeros(len(ids), dtype=bool) for v in self.variants}
        if own_open.any():
            if self.error_ is not None:
                raise self.error_            # a fallback, as alone
            got = self.inner.flag(candidates.take(own_open))
            for v in self.own:
                out[v][own_open] = np.asarray(got[v], dtype=bool)
                self.flagged_[v].update(np.asarray(ids)[out[v]].tolist())
        if self.error_ is None:
            try:
                scores = self.inner.sweep_scores(candidates)
                swept = self.inner.sweep_flags(candidates, scores) if self.points else {}
            except _ERRORS:
                scores, swept = {}, {}       # the sweep loses this checkpoint, the method's flags stand
            self.scores_.add(self.t_, candidates.task_ids, scores)
            for p in self.points:
                if p in swept:
                    out[p] = np.asarray(swept[p], dtype=bool)
        return out

    def hyperparameters(self) -> dict:
        return self.inner.hyperparameters()

    def score_trail(self):
        return self.scores_.trail()


# ----------------------------------------------------------------------------- per job, each point's outcome

def outcome_rows(trace: str, result: JobResult, latency: pd.Series, copy_keeps: float = 0.0,
                 finished: pd.Series | None = None, start: pd.Series | None = None) -> list[tuple]:
    """One row per variant of ``result``: its speculation outcome on this job (``OUTCOME_COLUMNS``),
    under the copy model ``copy_keeps`` (``speculation.copy_draws``); ``finished`` (by task_id) marks
    the tasks that finish (None: all); ``start`` (by task_id) the tasks' starts on the job's wall
    clock (None: the task clock)."""
    y = latency.reindex(result.task_ids).to_numpy(float)
    if not len(y) or not np.isfinite(y).all() or float(y.max()) <= 0:
        return []
    fin = None if finished is None else finished.reindex(result.task_ids).to_numpy(bool)
    st = None if start is None else start.reindex(result.task_ids).to_numpy(float)
    draws = copy_draws(y, trace, result.job_id, RELAUNCH_SEEDS, copy_keeps, finished=fin)
    rows = []
    for v in result.variants:
        method, point = split_variant(v.method)
        red, extra = speculation_outcome(y, v.flagged_at, draws, st)
        valid = ~np.isnan(v.flagged_at) & (v.flagged_at < task_ends(y, st))
        rows.append((trace, method, point, int(result.job_id), red, extra, int(valid.sum())))
    return rows


def capped_rows(trace: str, result: JobResult, latency: pd.Series, copy_keeps: float = 0.0,
                caps: Sequence[str] = CAPS, finished: pd.Series | None = None,
                start: pd.Series | None = None) -> list[tuple]:
    """One row per (variant of ``result``, cap): its outcome on this job when the copies its flags
    ask for start only as the cap allows (``speculation.speculate_capped``; ``CAPPED_COLUMNS``).

    The decisions are the times some variant of the method flagged (the replay's decisions that
    asked for a copy); at each, the variant's flagged tasks are ranked by the method's score, the
    latest each was given by then, highest first (``result.score_trail``, ``ranked_by_score``; a
    replay of several methods, the NURD family, ranks each by its own score); a method that gives
    no score (flag-all), by how many of its cuts flagged them (``ranked_by_cuts``). The oracle's own
    result gives one row per cap:
    from its first decision on, every running task that will finish, the ones that truly end last
    first (``ranked_by_truth``), at ``ORACLE_DECISIONS`` decisions up to the job's completion; it
    also knows how long each copy would run, so it copies only a task its copy would beat, each on
    a lease of exactly that run (``speculate_capped(knows_copies=True)``)."""
    y = latency.reindex(result.task_ids).to_numpy(float)
    if not len(y) or not np.isfinite(y).all() or float(y.max()) <= 0:
        return []
    st = None if start is None else start.reindex(result.task_ids).to_numpy(float)
    F = np.stack([v.flagged_at for v in result.variants]).astype(float)
    F[F >= task_ends(y, st)[None, :]] = np.nan  # a flag after the task ended asks for no copy
    fin = None if finished is None else finished.reindex(result.task_ids).to_numpy(bool)
    draws = copy_draws(y, trace, result.job_id, RELAUNCH_SEEDS, copy_keeps, finished=fin)
    job = int(result.job_id)

    def cap_value(cap: str):
        return cap if cap == HADOOP_CAP else float(cap)

    names = [split_variant(v.method) for v in result.variants]
    if names[0][0] == ORACLE:
        if np.isnan(F).all():                   # no straggler ran at a decision: nothing to copy
            return [(trace, ORACLE, "capped", cap, job, 0.0, 0.0, 0.0) for cap in caps]
        t1 = float(np.nanmin(F))
        # up to the job's completion: later, no copy moves it
        decisions = np.linspace(t1, max(t1, completion_time(task_ends(y, st), draws[0])), ORACLE_DECISIONS + 1)[:-1]
        ranked, lease = ranked_by_truth(y, fin, st), copy_lease_seconds(y, decisions, st, fin)
        return [(trace, ORACLE, "capped", cap, job,
                 *capped_outcome(y, decisions, ranked, draws, cap_value(cap), lease, st, knows_copies=True))
                for cap in caps]
    rows = []
    # one replay can hold several methods (the NURD family: NURD, NURD-NC, GBTR): each is ranked
    # by its own cuts, at the decisions where one of them flagged
    for method in dict.fromkeys(m for m, _ in names):
        own = [i for i, (m, _) in enumerate(names) if m == method]
        Fm = F[own]
        if np.isnan(Fm).all():
            rows += [(trace, method, names[i][1], cap, job, 0.0, 0.0, 0.0) for i in own for cap in caps]
            continue
        decisions = np.unique(Fm[~np.isnan(Fm)])
        lease = copy_lease_seconds(y, decisions, st, fin)
        trail = result.score_trail
        latest = trail.latest(method, decisions, len(y)) if trail is not None and method in trail.scores else None
        for c, i in enumerate(own):
            if np.isnan(Fm[c]).all():
                rows += [(trace, method, names[i][1], cap, job, 0.0, 0.0, 0.0) for cap in caps]
                continue
            ranked = ranked_by_cuts(Fm, c, decisions) if latest is None else ranked_by_score(Fm[c], latest)
            rows += [(trace, method, names[i][1], cap, job,
                      *capped_outcome(y, decisions, ranked, draws, cap_value(cap), lease, st)) for cap in caps]
    return rows


@dataclass
class SweepCollector:
    """Takes each job's sweep replay, keeps every point's outcome and hands back the method's own
    variants (what the result tables store)."""

    trace: str
    latency: Mapping[int, pd.Series]          # job -> latency_s by task_id
    copy_keeps: float = 0.0                   # the copy model (setting copy_keeps)
    rows: list[tuple] = field(default_factory=list)
    capped: list[tuple] = field(default_factory=list)
    finished: Mapping[int, pd.Series] | None = None   # job -> finished by task_id (None: every task)
    start: Mapping[int, pd.Series] | None = None      # job -> start on its wall clock by task_id (None: task clock)

    def _finished(self, job_id) -> pd.Series | None:
        return None if self.finished is None else self.finished[int(job_id)]

    def _start(self, job_id) -> pd.Series | None:
        return None if self.start is None else self.start[int(job_id)]

    def add(self, result: JobResult, own: Sequence[str] | None = None) -> JobResult:
        self.rows.extend(outcome_rows(self.trace, result, self.latency[int(result.job_id)], self.copy_keeps,
                                      self._finished(result.job_id), self._start(result.job_id)))
        self.add_capped(result)
        if own is None:
            own = [v.method for v in result.variants if "@" not in v.method]
        return replace(result, variants=[v for v in result.variants if v.method in own], score_trail=None)

    def add_points(self, method: str, job_id: int, points: Sequence[str], outcomes: np.ndarray) -> None:
        """Outcomes computed elsewhere (the survival family's threshold grid): (len(points), 2)."""
        for p, (red, extra) in zip(points, outcomes):
            self.rows.append((self.trace, method, p, int(job_id), float(red), float(extra), None))

    def add_capped(self, result: JobResult) -> None:
        """The capped outcomes of ``result``'s variants (``capped_rows``): every replay of the sweep,
        and the survival family's threshold grid (its ``<name>@<q>`` variants)."""
        self.capped.extend(capped_rows(self.trace, result, self.latency[int(result.job_id)], self.copy_keeps,
                                       finished=self._finished(result.job_id), start=self._start(result.job_id)))

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(self.rows, columns=OUTCOME_COLUMNS)

    def capped_frame(self) -> pd.DataFrame:
        return pd.DataFrame(self.capped, columns=CAPPED_COLUMNS)


# ----------------------------------------------------------------------------- curves, budgets, tuning

def curve_table(outcomes: pd.DataFrame) -> pd.DataFrame:
    """Each (trace, method, point): mean JCT reduction and extra machine time over its jobs."""
    if outcomes.empty:
        return pd.DataFrame(columns=CURVE_COLUMNS)
    g = outcomes.groupby(["trace", "method", "point"], sort=True)
    out = g.agg(n_jobs=("job_id", "nunique"), jct_reduction=("jct_reduction", "mean"),
                extra_machine_share=("extra_machine_share", "mean")).reset_index()
    return out[CURVE_COLUMNS]


def envelope(extra: np.ndarray, jct: np.ndarray, budget: float) -> tuple[float, int | None]:
    """(the largest JCT cut among points with extra <= budget, its index; 0 and None: none does,
    no copy). Ties go to the cheaper point."""
    ok = np.flatnonzero(extra <= budget + 1e-12)
    if not len(ok) or jct[ok].max() <= 0:
        return 0.0, None
    best = ok[jct[ok] >= jct[ok].max() - 1e-12]
    i = int(best[np.argmin(extra[best])])
    return float(jct[i]), i


def area_to_budget(extra: np.ndarray, jct: np.ndarray, budget: float) -> float:
    """Mean over budgets b in [0, ``budget``] of the curve's best JCT cut within b (its upper
    envelope, a step function of b; 0 below its cheapest point)."""
    order = np.argsort(extra)
    xs, ys = np.asarray(extra, float)[order], np.asarray(jct, float)[order]
    best, area, x_prev = 0.0, 0.0, 0.0
    for x, y in zip(xs, ys):
        if x >= budget:
            break
        area += best * (max(x, 0.0) - x_prev)
        x_prev = max(x, 0.0)
        best = max(best, y)
    area += best * (budget - x_prev)
    return area / budget


def tuned_points(wide_jct: pd.DataFrame, wide_extra: pd.DataFrame, earlier: Mapping[int, Sequence[int]],
                 budget: float, min_jobs: int) -> dict[int, str]:
    """Per job (rows of the wide tables: job x point): the point chosen on the jobs that ended
    before it (``earlier``; only those with outcomes count) at ``budget``, ``NO_COPY`` while fewer
    than ``min_jobs`` have ended or when no point is within budget. Reads no later job's row."""
    jobs = wide_jct.index.tolist()
    points = wide_jct.columns.tolist()
    J, E = wide_jct.to_numpy(float), wide_extra.to_numpy(float)
    pos = {j: i for i, j in enumerate(jobs)}
    out = {}
    for j in jobs:
        ids = [pos[i] for i in earlier.get(int(j), ()) if i in pos]
        if len(ids) < min_jobs:
            out[int(j)] = NO_COPY
            continue
        _, i = envelope(np.nanmean(E[ids], axis=0), np.nanmean(J[ids], axis=0), budget)
        out[int(j)] = NO_COPY if i is None else points[i]
    return out


def _wide(outcomes: pd.DataFrame, method: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    m = outcomes[outcomes["method"] == method]
    jct = m.pivot_table(index="job_id", columns="point", values="jct_reduction", aggfunc="first")
    extra = m.pivot_table(index="job_id", columns="point", values="extra_machine_share", aggfunc="first")
    # a point a job lacks (its replay never reached it) costs and gains nothing there
    return jct.fillna(0.0), extra.fillna(0.0)


def tuned_outcomes(outcomes: pd.DataFrame, earlier: Mapping[int, Sequence[int]], budget: float,
                   min_jobs: int) -> pd.DataFrame:
    """Per (method, job): the outcome of the point tuned on earlier jobs at ``budget`` (inf: the
    best mean JCT cut there, whatever it spent)."""
    rows = []
    for method in sorted(outcomes["method"].unique()):
        jct, extra = _wide(outcomes, method)
        chosen = tuned_points(jct, extra, earlier, budget, min_jobs)
        for j, p in chosen.items():
            got = (0.0, 0.0) if p == NO_COPY else (float(jct.at[j, p]), float(extra.at[j, p]))
            rows.append((method, j, p, *got))
    return pd.DataFrame(rows, columns=["method", "job_id", "point", "jct_reduction", "extra_machine_share"])


def paired_interval(d: np.ndarray, n_boot: int, seed: int) -> tuple[float, float]:
    """95% percentile bootstrap interval of the mean of ``d`` over its rows (jobs; a paired
    difference, or one method's own outcome)."""
    rng = np.random.default_rng([seed, len(d)])
    boot = d[rng.integers(0, len(d), size=(n_boot, len(d)))].mean(axis=1)
    lo, hi = np.percentile(boot, [2.5, 97.5])
    return float(lo), float(hi)


def holm_intervals(diffs: Mapping[str, np.ndarray], n_boot: int, seed: int, alpha: float = 0.05
                   ) -> dict[str, tuple[float, float, float, float]]:
    """Per hypothesis (a method's paired differences per job): (mean, lo, hi, Holm-adjusted p).

    One family: the bootstrap p-value of each mean (twice the smaller share of resampled means on
    either side of 0) is adjusted by Holm's step-down; the interval of the k-th smallest p is the
    percentile interval at level 1 - alpha / (m - k), and from the first hypothesis Holm keeps on,
    at that hypothesis' level, so an interval excludes 0 exactly when Holm rejects (up to the
    resampling's resolution)."""
    names = [n for n in diffs if len(diffs[n])]
    boots, p = {}, {}
    for n in names:
        d = np.asarray(diffs[n], float)
        rng = np.random.default_rng([seed, len(d)])
        boots[n] = d[rng.integers(0, len(d), size=(n_boot, len(d)))].mean(axis=1)
        p[n] = min(1.0, 2 * min(float((boots[n] <= 0).mean()), float((boots[n] >= 0).mean())))
    m = len(names)
    order = sorted(names, key=lambda n: p[n])
    out, running, kept_at = {}, 0.0, None
    for k, n in enumerate(order):
        running = max(running, min(1.0, (m - k) * p[n]))
        if kept_at is None and running > alpha:
            kept_at = k
        level = alpha / (m - (k if kept_at is None else kept_at))
        lo, hi = np.percentile(boots[n], [100 * level / 2, 100 * (1 - level / 2)])
        out[n] = (float(np.mean(diffs[n])), float(lo), float(hi), running)
    return out


def choosing_jobs(times: pd.DataFrame) -> frozenset[int]:
    """The jobs that choose the pre-named methods: the half of the trace's jobs that end first
    (end at or before the median end; ``job_times``). The others are the scored jobs. A job that
    never ended in the trace (no end) ends after every other: it is scored, never chooses."""
    end = times["end_us"].to_numpy(dtype=float)
    ended = end[~np.isnan(end)]
    if not len(ended):
        return frozenset()
    return frozenset(int(j) for j in times["job_id"].to_numpy()[end <= np.median(ended)])


def earlier_by_trace(con: duckdb.DuckDBPyConnection, traces: Sequence[str]
                     ) -> tuple[dict[str, dict[int, tuple[int, ...]]], dict[str, frozenset[int]]]:
    """Per trace: (per job, the jobs that ended before its first decision (``history.earlier_jobs`` on
    the operator's tasks: the sweep is the operator's); the jobs that choose, ``choosing_jobs``)."""
    times = {t: job_times(con, t, "operator_tasks") for t in traces}
    return {t: earlier_jobs(x) for t, x in times.items()}, {t: choosing_jobs(x) for t, x in times.items()}


def _per_job(t: pd.DataFrame, method: str) -> pd.Series:
    return t[t["method"] == method].set_index("job_id")["jct_reduction"]


def _paired(t: pd.DataFrame, method: str, other: pd.Series) -> np.ndarray:
    both = _per_job(t, method).to_frame("m").join(other.rename("r"), how="inner")
    return (both["m"] - both["r"]).to_numpy()


def budget_table(outcomes: pd.DataFrame, earlier: Mapping[str, Mapping[int, Sequence[int]]],
                 free_rules: Sequence[str], min_jobs: int, budgets: Sequence[float] = BUDGETS,
                 n_boot: int = 1000, seed: int = 0, *, choosing: Mapping[str, Collection[int]],
                 learned: Callable[[str], bool], capped: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per (trace, method, budget), on the trace's scored jobs (those not in ``choosing``): the
    method tuned on earlier jobs (mean JCT cut and its 95% interval, mean extra machine time, its
    most chosen point, jobs without a copy).

    Named before the scored jobs are read, on the choosing jobs (``choosing[trace]``, the half that
    ended first): at each budget the free rule (``reference``) and the learned method (``learned``)
    with the largest tuned mean there (``named``; ``choosing_jct_reduction``: that mean). The
    pre-named comparison: the named learned method minus the named free rule per scored job, with
    a 95% paired bootstrap interval (``named_diff*``, on the named learned method's row; one
    comparison per budget, so no adjustment, and "above at every budget" needs every one of them).
    Exploration: every method minus the named free rule (``diff*``) and minus the tuned Spark rule
    (``spark_diff*``), each a family per (trace, budget) with Holm-adjusted intervals and p-values
    (``holm_intervals``). Beside them, on the scored jobs: the curve's best point within budget
    (chosen on the jobs it is scored on: an upper bound) and the area under it to 5%.

    ``capped`` (``capped_rows``, the budget enforced): at budget b each method is scored on its
    rows under cap b, its point chosen on earlier jobs as the largest mean JCT cut there (the cap
    keeps every point within budget, so none is ruled out by its spend); ``enforced`` is then
    true, ``jobs_over_budget`` counts the scored jobs whose realized spend exceeded b (none where
    every copy held its lease, ``speculation.speculate_capped``; the count keeps that checked) and
    ``headroom`` is the capped oracle's mean on the scored jobs (the oracle is not ranked as a
    method). Without it, each point is matched on the earlier jobs' mean extra machine time (within
    b there)."""
    rows = []
    if outcomes.empty:
        return pd.DataFrame(columns=BUDGET_COLUMNS)
    for trace, o in outcomes.groupby("trace", sort=True):
        chooses = {int(j) for j in choosing.get(trace, ())}
        scored_o = o[~o["job_id"].astype(int).isin(chooses)]
        c = curve_table(scored_o)
        area = {m: area_to_budget(g["extra_machine_share"].to_numpy(), g["jct_reduction"].to_numpy(), 0.05)
                for m, g in c.groupby("method")}
        for b in budgets:
            if capped is not None:
                at = capped[(capped["trace"] == trace) & (capped["cap"] == f"{b:g}")]
                oracle = at[(at["method"] == ORACLE) & ~at["job_id"].astype(int).isin(chooses)]
                headroom = float(oracle["jct_reduction"].mean()) if len(oracle) else np.nan
                tuned = tuned_outcomes(at[at["method"] != ORACLE], earlier[trace], np.inf, min_jobs)
            else:
                headroom = np.nan
                tuned = tuned_outcomes(o, earlier[trace], b, min_jobs)
            first = tuned["job_id"].astype(int).isin(chooses)
            tc, ts = tuned[first], tuned[~first]
            if ts.empty:
                continue
            chosen_means = tc.groupby("method")["jct_reduction"].mean()
            rules = [r for r in free_rules if r in chosen_means.index]
            ref = max(rules, key=lambda r: (chosen_means[r], r)) if rules else None
            models = [m for m in chosen_means.index if learned(m)]
            named = max(models, key=lambda m: (chosen_means[m], m)) if models else None
            methods = sorted(ts["method"].unique())
            explore = {}
            if ref is not None:
                explore = holm_intervals({m: _paired(ts, m, _per_job(ts, ref)) for m in methods if m != ref},
                                         n_boot, seed)
            spark = {}
            if TUNED_RULE in methods:
                spark = holm_intervals({m: _paired(ts, m, _per_job(ts, TUNED_RULE)) for m in methods
                                        if m != TUNED_RULE}, n_boot, seed)
            none = (np.nan,) * 4
            for method in methods:
                t = ts[ts["method"] == method]
                g = c[c["method"] == method]
                best, i = envelope(g["extra_machine_share"].to_numpy(), g["jct_reduction"].to_numpy(), b)
                copies = t[t["point"] != NO_COPY]["point"]
                own_lo, own_hi = paired_interval(t["jct_reduction"].to_numpy(), n_boot, seed)
                role = NAMED_LEARNED if method == named else NAMED_FREE_RULE if method == ref else ""
                nd = (np.nan,) * 3
                if method == named and ref is not None:
                    d = _paired(ts, method, _per_job(ts, ref))
                    nd = (float(d.mean()), *paired_interval(d, n_boot, seed)) if len(d) else nd
                rows.append((trace, method, b, len(t), int(tc["job_id"].nunique()), float(t["jct_reduction"].mean()),
                             own_lo, own_hi, float(t["extra_machine_share"].mean()),
                             copies.mode().iloc[0] if len(copies) else NO_COPY, int((t["point"] == NO_COPY).sum()),
                             float(chosen_means.get(method, np.nan)), role, ref, *explore.get(method, none), *nd,
                             best, np.nan if i is None else float(g["extra_machine_share"].iloc[i]),
                             NO_COPY if i is None else g["point"].iloc[i], area.get(method, np.nan),
                             *spark.get(method, none), capped is not None,
                             int((t["extra_machine_share"] > b + 1e-12).sum()),
                             float(t["extra_machine_share"].quantile(0.9)), headroom))
    return pd.DataFrame(rows, columns=BUDGET_COLUMNS)
