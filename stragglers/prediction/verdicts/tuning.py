"""Tuning on earlier jobs and intervals over jobs: a method's cost curve, the point it would choose
at a budget from the jobs that ended before each job, bootstrap intervals and Holm's adjustment.
Plain pandas and numpy, no method: the budget tables, the survival family and the operator's Spark
answer share them.

- ``curve_table``: each point's means over jobs: the method's cost curve;
- ``tuned_points``: at a budget of extra machine time, each job's point chosen on the jobs that
  ended before its first checkpoint (``history.earlier_jobs``, time order): the largest mean JCT
  cut whose mean extra machine time is within the budget, "no copy" when none is or while fewer
  than ``min_jobs`` jobs have ended;
- ``area_to_budget``: the area under a curve's upper envelope up to a budget, over the budget
  (the mean JCT cut over budgets 0..b);
- ``paired_interval``, ``holm_intervals``: 95% bootstrap intervals of a mean over jobs, and a
  family's Holm-adjusted ones.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd

#: Budgets of extra machine time (shares of the jobs' own) the operator's answer is given at.
BUDGETS: tuple[float, ...] = (0.005, 0.01, 0.02, 0.05)
#: The budget the first paragraph of the report answers at.
HEADLINE_BUDGET = 0.02
#: "no copy at all": what a tuned rule does when nothing fits the budget (zero cost, zero gain).
NO_COPY = "none"
#: The rule every learned method must beat, tuned like them (its difference has its own columns).
TUNED_RULE = "spark_speculation"

CURVE_COLUMNS = ["trace", "method", "point", "n_jobs", "jct_reduction", "extra_machine_share"]
CURVE_DTYPES = {"n_jobs": "int64"}


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


def _wide(outcomes: pd.DataFrame, method: str, column: str) -> pd.DataFrame:
    m = outcomes[outcomes["method"] == method]
    # a point a job lacks (its replay never reached it) costs and gains nothing there
    return m.pivot_table(index="job_id", columns="point", values=column, aggfunc="first").fillna(0.0)


def tuned_outcomes(outcomes: pd.DataFrame, earlier: Mapping[int, Sequence[int]], budget: float,
                   min_jobs: int) -> pd.DataFrame:
    """Per (method, job): the outcome of the point tuned on earlier jobs at ``budget`` (inf: the
    best mean JCT cut there, whatever it spent): its JCT cut, extra machine time and copies."""
    rows = []
    for method in sorted(outcomes["method"].unique()):
        jct, extra = _wide(outcomes, method, "jct_reduction"), _wide(outcomes, method, "extra_machine_share")
        copies = (_wide(outcomes, method, "n_copies") if "n_copies" in outcomes else
                  pd.DataFrame(np.nan, index=jct.index, columns=jct.columns))
        chosen = tuned_points(jct, extra, earlier, budget, min_jobs)
        for j, p in chosen.items():
            got = (0.0, 0.0, 0.0) if p == NO_COPY else (float(jct.at[j, p]), float(extra.at[j, p]),
                                                        float(copies.at[j, p]))
            rows.append((method, j, p, *got))
    return pd.DataFrame(rows, columns=["method", "job_id", "point", "jct_reduction", "extra_machine_share", "n_copies"])


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
