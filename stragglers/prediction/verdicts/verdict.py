"""Who wins, if anyone: the comparison named before it is scored, with the power to see an effect.

The operator's question has two candidates per budget, a learned method and a free rule. Each is
named on earlier jobs and scored on later ones, and named only where the earlier jobs show it helps:

- **The split (rolling origin).** The jobs are ordered by their start (their first task's start:
  when the scheduler first acts on the job). A job is scored once at least ``warmup`` jobs ended
  before it started; its pair is named on exactly those jobs (its *choosing* jobs), so nothing a
  scored job's naming reads happened after the job started. A split with a gap (choose on the jobs
  that ended before some time S, score the jobs started after S) keeps exactly the same scored jobs
  when S is the warm-up's last end, and names every one of them on fewer jobs: the rolling origin
  is never worse, and it is what ``rolling_split`` builds (``Split.scheme`` says so).
- **No winner by a tie.** On its choosing jobs, each candidate's mean JCT cut (each job's cut at the
  method's point tuned on the jobs before it) is compared with that mean's minimum detectable
  effect, ``mde``: the smallest true mean a two-sided 5% test would tell from zero with 80% power,
  (z_0.975 + z_0.8) x sd / sqrt(n). The best candidate (the largest mean; equal means: the cheaper,
  then no winner) is named only where its mean exceeds its MDE; otherwise there is no winner, and a
  scored job without a named candidate gets no copy (a cut of 0). Methods that read the labels are
  never candidates.
- **The comparison.** Per scored job, the named learned method's cut minus the named free rule's
  (0 where none is named): the mean, its 95% bootstrap interval, its MDE over the scored jobs, and a
  bootstrap p-value, Holm-adjusted over every comparison of the family (every budget of every trace
  in the warehouse), with intervals at Holm's level (``holm_levels``). Where nothing is named on any
  scored job the difference is 0 by construction and not tested: the effect the data could have
  detected is then the best candidates' own minimum detectable effects on their choosing jobs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Collection, Mapping, Sequence

import numpy as np
import pandas as pd

from stragglers.prediction.replay.earlier import EarlierJobs

#: z-quantiles of the minimum detectable effect: a two-sided 5% test, 80% power.
Z_ALPHA, Z_POWER = 1.959963984540054, 0.8416212335729143
#: Jobs that must have ended before a job starts for it to be scored (and named on them).
WARMUP_JOBS = 10


def mde(values) -> float:
    """The minimum detectable effect of the mean of ``values`` (two-sided 5%, 80% power); NaN with
    fewer than two values."""
    v = np.asarray(values, dtype=float)
    if len(v) < 2:
        return math.nan
    return (Z_ALPHA + Z_POWER) * float(np.std(v, ddof=1)) / math.sqrt(len(v))


@dataclass(frozen=True)
class Split:
    """Which jobs of a trace are scored and, per scored job, the jobs it is named on."""
    scheme: str
    warmup: int
    choosing: Mapping[int, tuple[int, ...]]     # scored job -> the jobs that ended before it started

    @property
    def scored(self) -> list[int]:
        return sorted(self.choosing)

    def sizes(self, among: Collection[int] | None = None) -> tuple[int, int, int]:
        """(fewest, median, most) choosing jobs over the scored jobs (0s with none scored); ``among``:
        over the scored jobs of ``among``, counting the choosing jobs of ``among`` only (the jobs a
        choice reads)."""
        if among is None:
            n = [len(c) for c in self.choosing.values()]
        else:
            counts = (self.choosing.counts(among) if isinstance(self.choosing, EarlierJobs)
                      else {j: sum(1 for k in c if k in among) for j, c in self.choosing.items()})
            n = [c for j, c in counts.items() if j in among]
        return (min(n), int(np.median(n)), max(n)) if n else (0, 0, 0)


def rolling_split(times: pd.DataFrame, warmup: int = WARMUP_JOBS) -> Split:
    """The rolling origin (module doc) over ``times`` (job_id, start_us, end_us; a job without an end
    never ended in the record: it is scored if it qualifies, never chooses)."""
    return Split("rolling origin", warmup, EarlierJobs(times["job_id"].to_numpy().astype(int),
                                                       times["start_us"].to_numpy(dtype=float),
                                                       times["end_us"].to_numpy(dtype=float), warmup))


@dataclass(frozen=True)
class Naming:
    """A candidate named on some choosing jobs, or none (``name`` None: no winner) with why."""
    name: str | None
    best: str | None             # the best candidate there, named or not
    mean: float                  # its mean cut on the choosing jobs
    mde: float                   # that mean's minimum detectable effect
    n: int                       # choosing jobs

    def words(self) -> str:
        if self.best is None:
            return "no candidate was evaluated"
        if self.name is None:
            return (f"no winner: the best, {self.best}, cut {100 * self.mean:.2f}% on {self.n} earlier jobs, "
                    f"not above its minimum detectable effect {100 * self.mde:.2f}%")
        return f"{self.name}: {100 * self.mean:.2f}% on {self.n} earlier jobs (minimum detectable {100 * self.mde:.2f}%)"


def name_best(cut: pd.DataFrame, spend: pd.DataFrame, candidates: Sequence[str], jobs: Sequence[int]) -> Naming:
    """The candidate named on ``jobs`` (``cut``/``spend``: job x method, each job's cut and spend at the
    method's tuned point): the largest mean cut, equal means to the cheaper; named only where its
    mean exceeds its MDE and no other candidate equals it in mean and spend."""
    have = [m for m in candidates if m in cut.columns]
    rows = [j for j in jobs if j in cut.index]
    if not have or not rows:
        return Naming(None, None, math.nan, math.nan, len(rows))
    c, e = cut.loc[rows, have], spend.loc[rows, have]
    means, spends = c.mean(), e.mean()
    top = means.max()
    tied = [m for m in have if means[m] >= top - 1e-12]
    cheapest = min(spends[m] for m in tied)
    best = [m for m in tied if spends[m] <= cheapest + 1e-12]
    m = best[0] if len(best) == 1 else sorted(best)[0]
    d = mde(c[m].to_numpy())
    named = m if len(best) == 1 and np.isfinite(d) and means[m] > d else None
    return Naming(named, m, float(means[m]), d, len(rows))


def bootstrap_p(d: np.ndarray, n_boot: int, seed: int) -> tuple[np.ndarray, float]:
    """(the bootstrap means of ``d``, the two-sided bootstrap p-value of its mean: twice the smaller
    share of resampled means on either side of 0)."""
    d = np.asarray(d, dtype=float)
    rng = np.random.default_rng([seed, len(d)])
    boot = d[rng.integers(0, len(d), size=(n_boot, len(d)))].mean(axis=1)
    return boot, min(1.0, 2 * min(float((boot <= 0).mean()), float((boot >= 0).mean())))


def holm(p: Sequence[float]) -> np.ndarray:
    """Holm's step-down adjusted p-values (Holm 1979), in the input's order."""
    p = np.asarray(p, dtype=float)
    order = np.argsort(p, kind="stable")
    adjusted = np.empty(len(p))
    running = 0.0
    for k, i in enumerate(order):
        running = max(running, min(1.0, (len(p) - k) * p[i]))
        adjusted[i] = running
    return adjusted


def holm_levels(p: Sequence[float], alpha: float = 0.05) -> np.ndarray:
    """Each hypothesis' interval level under Holm: alpha / (m - k) for the k-th smallest p up to the
    first one Holm keeps, that one's level from there on (an interval excludes 0 exactly when Holm
    rejects, up to the resampling's resolution)."""
    p = np.asarray(p, dtype=float)
    order = np.argsort(p, kind="stable")
    levels = np.empty(len(p))
    running, kept_at = 0.0, None
    for k, i in enumerate(order):
        running = max(running, min(1.0, (len(p) - k) * p[i]))
        if kept_at is None and running > alpha:
            kept_at = k
        levels[i] = alpha / (len(p) - (k if kept_at is None else kept_at))
    return levels
