"""Every method at every budget: the flag threshold's sweep (docs/EVALUATION.md "Cost curves").

Each method compares a continuous score of a running task with a cut (a predicted latency over
tau_hat, a probability, an outlier score's training percentile...; ``Method.sweep_flags``); the
rules sweep their own parameters (Spark: quantile x multiplier x minTaskRuntime; the KM rule: q;
wait-for-tau: its margin). Under the operator's protocol one replay per job scores every cut
(``SweepGrid``): the method's own variants are replayed exactly as alone, and the sweep's
variants ``<name>@<cut>`` beside them. Each point's outcome per job (``SweepCollector``): the JCT
reduction and the extra machine time (shares of the job's) with a speculative copy per flag and a
machine always free, mean over the completion seeds (the relaunch draws of the report).

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
from typing import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

import duckdb

from stragglers.prediction.completion import RELAUNCH_SEEDS, draw_relaunch_latencies, job_rng
from stragglers.prediction.speculation import speculation_outcome
from stragglers.prediction.history import earlier_jobs, job_times
from stragglers.prediction.methods.base import DEGENERATE_DATA_ERRORS, CannotFit, Method, TaskSet
from stragglers.prediction.simulate import JobResult

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
BUDGET_COLUMNS = ["trace", "method", "budget", "n_jobs", "jct_reduction", "jct_lo", "jct_hi", "extra_machine_share",
                  "point_mode",
                  "jobs_no_copy", "reference", "diff", "diff_lo", "diff_hi", "in_sample_jct_reduction",
                  "in_sample_extra_machine_share", "in_sample_point", "area_to_5pct", "spark_diff", "spark_diff_lo",
                  "spark_diff_hi"]
#: The integer columns' dtypes as the tables above are computed (DuckDB's INTEGER reads back
#: int32): a table read back from the warehouse is cast to them (warehouse.results.read_back).
CURVE_DTYPES = {"n_jobs": "int64"}
BUDGET_DTYPES = {"n_jobs": "int64", "jobs_no_copy": "int64"}
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

    def scored_task_ids(self, job):
        return self.inner.scored_task_ids(job)

    def begin(self, finished: TaskSet, running: TaskSet, t0: float) -> None:
        self.inner.begin(finished, running, t0)

    def fit(self, finished: TaskSet, running: TaskSet, t: float) -> None:
        self.inner.job = self.job          # tau_hat(t) under the online threshold
        self.error_ = None
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
        if self.error_ is None and self.points:
            try:
                swept = self.inner.sweep_flags(candidates)
            except _ERRORS:
                swept = {}                   # the sweep loses this checkpoint, the method's flags stand
            for p in self.points:
                if p in swept:
                    out[p] = np.asarray(swept[p], dtype=bool)
        return out

    def hyperparameters(self) -> dict:
        return self.inner.hyperparameters()


# ----------------------------------------------------------------------------- per job, each point's outcome

def outcome_rows(trace: str, result: JobResult, latency: pd.Series) -> list[tuple]:
    """One row per variant of ``result``: its speculation outcome on this job (``OUTCOME_COLUMNS``)."""
    y = latency.reindex(result.task_ids).to_numpy(float)
    if not len(y) or not np.isfinite(y).all() or float(y.max()) <= 0:
        return []
    draws = [draw_relaunch_latencies(y, job_rng(s, trace, result.job_id)) for s in RELAUNCH_SEEDS]
    rows = []
    for v in result.variants:
        method, point = split_variant(v.method)
        red, extra = speculation_outcome(y, v.flagged_at, draws)
        valid = ~np.isnan(v.flagged_at) & (v.flagged_at < y)
        rows.append((trace, method, point, int(result.job_id), red, extra, int(valid.sum())))
    return rows


@dataclass
class SweepCollector:
    """Takes each job's sweep replay, keeps every point's outcome and hands back the method's own
    variants (what the result tables store)."""

    trace: str
    latency: Mapping[int, pd.Series]          # job -> latency_s by task_id
    rows: list[tuple] = field(default_factory=list)

    def add(self, result: JobResult, own: Sequence[str] | None = None) -> JobResult:
        self.rows.extend(outcome_rows(self.trace, result, self.latency[int(result.job_id)]))
        if own is None:
            own = [v.method for v in result.variants if "@" not in v.method]
        return replace(result, variants=[v for v in result.variants if v.method in own])

    def add_points(self, method: str, job_id: int, points: Sequence[str], outcomes: np.ndarray) -> None:
        """Outcomes computed elsewhere (the survival family's threshold grid): (len(points), 2)."""
        for p, (red, extra) in zip(points, outcomes):
            self.rows.append((self.trace, method, p, int(job_id), float(red), float(extra), None))

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(self.rows, columns=OUTCOME_COLUMNS)


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
    """Per (method, job): the outcome of the point tuned on earlier jobs at ``budget``."""
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


def earlier_by_trace(con: duckdb.DuckDBPyConnection, traces: Sequence[str]) -> dict[str, dict[int, tuple[int, ...]]]:
    """Per trace, per job: the jobs that ended before its first checkpoint (``history.earlier_jobs``)."""
    return {t: earlier_jobs(job_times(con, t)) for t in traces}


def budget_table(outcomes: pd.DataFrame, earlier: Mapping[str, Mapping[int, Sequence[int]]],
                 free_rules: Sequence[str], min_jobs: int, budgets: Sequence[float] = BUDGETS,
                 n_boot: int = 1000, seed: int = 0) -> pd.DataFrame:
    """Per (trace, method, budget): the method tuned on earlier jobs (mean JCT cut, mean extra
    machine time, its most chosen point, jobs without a copy), its difference with the best free
    rule at that budget (``reference``: the free rule with the largest tuned mean) with a 95%
    paired bootstrap interval over jobs, the curve's best point within budget (in-sample) and the
    area under its curve to 5% (``area_to_budget``). ``earlier``: per trace, per job, the jobs
    that ended before its first checkpoint. ``spark_diff*``: the same against the tuned Spark rule
    (``TUNED_RULE``), the goal's yardstick, whichever free rule is best."""
    rows = []
    if outcomes.empty:
        return pd.DataFrame(columns=BUDGET_COLUMNS)
    curves = curve_table(outcomes)
    for trace, o in outcomes.groupby("trace", sort=True):
        c = curves[curves["trace"] == trace]
        area = {m: area_to_budget(g["extra_machine_share"].to_numpy(), g["jct_reduction"].to_numpy(), 0.05)
                for m, g in c.groupby("method")}
        for b in budgets:
            tuned = tuned_outcomes(o, earlier[trace], b, min_jobs)
            means = tuned.groupby("method")["jct_reduction"].mean()
            rules = [r for r in free_rules if r in means.index]
            ref = max(rules, key=lambda r: means[r]) if rules else None
            ref_by_job = tuned[tuned["method"] == ref].set_index("job_id")["jct_reduction"] if ref else None
            spark_by_job = (tuned[tuned["method"] == TUNED_RULE].set_index("job_id")["jct_reduction"]
                            if TUNED_RULE in means.index else None)

            def against(t: pd.DataFrame, other: pd.Series | None) -> tuple[float, float, float]:
                """Mean paired difference with ``other`` per job and its 95% interval (NaN: none)."""
                if other is None:
                    return np.nan, np.nan, np.nan
                both = t.set_index("job_id")["jct_reduction"].to_frame("m").join(other.rename("r"), how="inner")
                if not len(both):
                    return np.nan, np.nan, np.nan
                diff = (both["m"] - both["r"]).to_numpy()
                return (float(diff.mean()), *paired_interval(diff, n_boot, seed))

            for method, t in tuned.groupby("method", sort=True):
                g = c[c["method"] == method]
                best, i = envelope(g["extra_machine_share"].to_numpy(), g["jct_reduction"].to_numpy(), b)
                d, lo, hi = against(t, ref_by_job if method != ref else None)
                sd = against(t, spark_by_job if method != TUNED_RULE else None)
                copies = t[t["point"] != NO_COPY]["point"]
                own_lo, own_hi = paired_interval(t["jct_reduction"].to_numpy(), n_boot, seed)
                rows.append((trace, method, b, len(t), float(t["jct_reduction"].mean()), own_lo, own_hi,
                             float(t["extra_machine_share"].mean()),
                             copies.mode().iloc[0] if len(copies) else NO_COPY, int((t["point"] == NO_COPY).sum()),
                             ref, d, lo, hi, best, np.nan if i is None else float(g["extra_machine_share"].iloc[i]),
                             NO_COPY if i is None else g["point"].iloc[i], area.get(method, np.nan), *sd))
    return pd.DataFrame(rows, columns=BUDGET_COLUMNS)
