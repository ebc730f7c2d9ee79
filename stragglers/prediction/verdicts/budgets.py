"""Every method at every budget, and the comparison named before it is scored (tables
``matched_budgets`` and ``named_comparisons``), from the engine's outcomes (``capped_outcomes``).

Per trace and budget b, on the trace's scored jobs (``verdict.rolling_split``):

- each method **tuned on earlier jobs**: each job's point is the one with the largest mean JCT cut
  under the cap b on the jobs that ended before the job's first decision (``sweep.tuned_outcomes``;
  the cap keeps every point within budget, so none is ruled out by its spend), scored on the job:
  the mean cut with its 95% bootstrap interval, the realized spend (mean, over b, the jobs above b,
  the 90th percentile), the point chosen most, the jobs it made no copy on;
- **Spark as Spark runs it** (``SPARK_AS_RUN``): Spark cannot hold a budget, so the setting an
  operator writes in spark-defaults.conf runs uncapped: each scored job's setting is the one whose
  copies spent within b on its choosing jobs (the largest mean cut among those), written only where
  named there, else the one it ran with (stragglers/prediction/verdicts/spark_answer.py ``as_run``): the row
  the operator's answer and spark-defaults.conf come from;
- **exploration**: every method minus the tuned Spark rule, and minus the free rule named last
  (``named_comparisons``), Holm-adjusted within the trace and budget;
- **hindsight**: each method's best point on the scored jobs themselves (an upper bound, chosen on
  what it is scored on), the area under its uncapped cost curve up to 5%;
- **headroom**, the bound by construction: per scored job, the largest cut of the oracle and of every
  point of every policy that does not read labels under the same cap, at the same checks; its mean,
  the oracle's own mean, and the scored jobs on which some policy beat the oracle.

``named_comparisons``: per trace and budget, the learned method and the free rule named on each
scored job's choosing jobs (stragglers/prediction/verdicts/verdict.py), their cuts on the scored jobs, the
paired difference with its interval, minimum detectable effect and Holm-adjusted p-value over
every budget of every trace.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from stragglers.prediction.engine.caps import Budget
from stragglers.prediction.engine.caps import Uncapped
from stragglers.prediction.engine.policies import CURRENT, ORACLE
from stragglers.prediction.verdicts.tuning import (
    BUDGETS, NO_COPY, TUNED_RULE, area_to_budget, curve_table, holm_intervals, paired_interval, tuned_outcomes,
)
from stragglers.prediction.verdicts.spark_answer import as_run
from stragglers.prediction.verdicts.verdict import (
    Naming, Split, bootstrap_p, holm, holm_levels, mde, name_best, rolling_split,
)

#: The row of Spark's rule as Spark runs it (uncapped, its setting matched within the budget on
#: earlier jobs): ``matched_budgets.cap_mode``; every other row's is ``ENFORCED``.
ENFORCED, SPARK_AS_RUN = "enforced", "as Spark runs it"

BUDGET_COLUMNS = [
    "trace", "method", "budget", "cap_mode", "reads_labels", "n_jobs", "jct_reduction", "jct_lo", "jct_hi",
    "extra_machine_share", "spend_over_budget", "jobs_over_budget", "extra_p90", "copies", "point_mode",
    "jobs_no_copy", "diff", "diff_lo", "diff_hi", "diff_p_holm", "spark_diff", "spark_diff_lo", "spark_diff_hi",
    "spark_diff_p_holm", "in_sample_jct_reduction", "in_sample_point", "area_to_5pct", "headroom", "oracle",
    "oracle_beaten_jobs",
]
BUDGET_DTYPES = {"n_jobs": "int64", "jobs_over_budget": "int64", "jobs_no_copy": "int64",
                 "oracle_beaten_jobs": "int64"}
COMPARISON_COLUMNS = [
    "trace", "budget", "scheme", "warmup", "n_scored", "n_choosing_min", "n_choosing_median", "n_choosing_max",
    "learned", "learned_mean", "learned_mde", "learned_words", "free_rule", "free_rule_mean", "free_rule_mde",
    "free_rule_words", "learned_named_jobs", "free_rule_named_jobs", "learned_names", "free_rule_names",
    "learned_cut", "free_rule_cut", "diff", "diff_lo", "diff_hi", "diff_mde", "diff_p", "diff_p_holm", "verdict",
]
COMPARISON_DTYPES = {"warmup": "int64", "n_scored": "int64", "n_choosing_min": "int64", "n_choosing_median": "int64",
                     "n_choosing_max": "int64", "learned_named_jobs": "int64", "free_rule_named_jobs": "int64"}


def _pivot(tuned: pd.DataFrame, column: str) -> pd.DataFrame:
    return tuned.pivot_table(index="job_id", columns="method", values=column, aggfunc="first")


def _named_per_job(cut: pd.DataFrame, spend: pd.DataFrame, split: Split, learned: Sequence[str],
                   free: Sequence[str]) -> tuple[dict, dict, Naming, Naming]:
    """Per scored job the named learned method and free rule (None: no winner), and the naming on
    the largest choosing set (the last scored job's: what would be named now)."""
    named_l, named_f = {}, {}
    last_l = last_f = Naming(None, None, np.nan, np.nan, 0)
    widest = -1
    for j, jobs in split.choosing.items():
        nl, nf = name_best(cut, spend, learned, jobs), name_best(cut, spend, free, jobs)
        named_l[j], named_f[j] = nl.name, nf.name
        if len(jobs) > widest:
            widest, last_l, last_f = len(jobs), nl, nf
    return named_l, named_f, last_l, last_f


def _verdict(row: dict) -> str:
    if row["learned_named_jobs"] == 0:
        return "no winner"
    if not np.isfinite(row["diff_lo"]):
        return ""
    if row["diff_lo"] > 0:
        return "learned above"
    if row["diff_hi"] < 0:
        return "learned below"
    return "tie"


def budget_tables(capped: pd.DataFrame, times: Mapping[str, pd.DataFrame],
                  earlier: Mapping[str, Mapping[int, Sequence[int]]], free_rules: Sequence[str],
                  learned: Callable[[str], bool], reads_labels: Callable[[str], bool], min_jobs: int,
                  budgets: Sequence[float] = BUDGETS, n_boot: int = 1000, seed: int = 0
                  ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(matched_budgets, named_comparisons) from the engine's outcomes ``capped`` (table
    ``capped_outcomes``) of every trace in it (module doc). ``times[trace]``: job_id, start_us,
    end_us; ``earlier[trace]``: per job, the jobs that ended before its first decision."""
    rows, comparisons, diffs = [], [], []
    if capped is None or capped.empty:
        return pd.DataFrame(columns=BUDGET_COLUMNS), pd.DataFrame(columns=COMPARISON_COLUMNS)
    for trace, c in capped.groupby("trace", sort=True):
        split = rolling_split(times[trace])
        scored = set(split.scored)
        uncapped = c[c["cap"] == Uncapped().label]
        area = {m: area_to_budget(g["extra_machine_share"].to_numpy(), g["jct_reduction"].to_numpy(), 0.05)
                for m, g in curve_table(uncapped[uncapped["job_id"].isin(scored)]).groupby("method")}
        for b in budgets:
            at = c[c["cap"] == Budget(b).label]
            policies = at[at["method"] != ORACLE]
            tuned = tuned_outcomes(policies, earlier[trace], np.inf, min_jobs)
            cut, spend = _pivot(tuned, "jct_reduction"), _pivot(tuned, "extra_machine_share")
            methods = sorted(tuned["method"].unique())
            cand_l = [m for m in methods if learned(m) and not reads_labels(m)]
            cand_f = [m for m in methods if m in free_rules]
            named_l, named_f, last_l, last_f = _named_per_job(cut, spend, split, cand_l, cand_f)
            ts = tuned[tuned["job_id"].isin(scored)]
            if ts.empty:
                continue
            jobs = sorted(set(ts["job_id"]))
            L = np.array([cut.at[j, named_l[j]] if named_l.get(j) else 0.0 for j in jobs])
            F = np.array([cut.at[j, named_f[j]] if named_f.get(j) else 0.0 for j in jobs])
            d = L - F
            named_any = any(named_l[j] or named_f[j] for j in jobs)
            # nobody named on any scored job: the difference is 0 by construction, no test of anything
            boot, p = bootstrap_p(d, n_boot, seed) if named_any else (None, np.nan)
            lo_n, mid_n, hi_n = split.sizes()
            comparisons.append({
                "trace": trace, "budget": b, "scheme": split.scheme, "warmup": split.warmup, "n_scored": len(jobs),
                "n_choosing_min": lo_n, "n_choosing_median": mid_n, "n_choosing_max": hi_n,
                "learned": last_l.name, "learned_mean": last_l.mean, "learned_mde": last_l.mde,
                "learned_words": last_l.words(), "free_rule": last_f.name, "free_rule_mean": last_f.mean,
                "free_rule_mde": last_f.mde, "free_rule_words": last_f.words(),
                "learned_named_jobs": sum(named_l[j] is not None for j in jobs),
                "free_rule_named_jobs": sum(named_f[j] is not None for j in jobs),
                "learned_names": json.dumps(Counter(named_l[j] or "no winner" for j in jobs)),
                "free_rule_names": json.dumps(Counter(named_f[j] or "no winner" for j in jobs)),
                "learned_cut": float(L.mean()), "free_rule_cut": float(F.mean()),
                "diff": float(d.mean()) if named_any else np.nan,
                "diff_lo": np.nan, "diff_hi": np.nan, "diff_mde": mde(d) if named_any else np.nan, "diff_p": p,
                "diff_p_holm": np.nan,
                "verdict": ""})
            diffs.append(boot)
            # exploration: every method against the free rule named now (or no copy) and the tuned Spark rule
            ref = ts[ts["method"] == last_f.name].set_index("job_id")["jct_reduction"] if last_f.name else \
                pd.Series(0.0, index=jobs)
            per = {m: ts[ts["method"] == m].set_index("job_id")["jct_reduction"] for m in methods}
            explore = holm_intervals({m: (per[m] - ref.reindex(per[m].index)).dropna().to_numpy()
                                      for m in methods if m != last_f.name}, n_boot, seed)
            spark = {}
            if TUNED_RULE in per:
                spark = holm_intervals({m: (per[m] - per[TUNED_RULE].reindex(per[m].index)).dropna().to_numpy()
                                        for m in methods if m != TUNED_RULE}, n_boot, seed)
            best = at[at["job_id"].isin(jobs) & ~at["method"].map(reads_labels)].groupby("job_id")["jct_reduction"].max()
            oracle = at[(at["method"] == ORACLE) & at["job_id"].isin(jobs)].set_index("job_id")["jct_reduction"]
            bound = pd.concat([best, oracle], axis=1).max(axis=1)
            beaten = int((best.reindex(oracle.index) > oracle + 1e-12).sum()) if len(oracle) else 0
            hindsight = at[at["job_id"].isin(jobs)].groupby(["method", "point"])["jct_reduction"].mean()
            none = (np.nan,) * 4
            for m in methods:
                t = ts[ts["method"] == m]
                rows.append(_row(trace, m, b, ENFORCED, reads_labels(m), t, n_boot, seed, explore.get(m, none),
                                 spark.get(m, none), hindsight.get(m), area.get(m, np.nan), bound, oracle, beaten))
            spark_run = _spark_as_run(uncapped, split, b, jobs)
            if spark_run is not None:
                rows.append(_row(trace, TUNED_RULE, b, SPARK_AS_RUN, False, spark_run, n_boot, seed, none, none,
                                 None, area.get(TUNED_RULE, np.nan), bound, oracle, beaten))
    comp = pd.DataFrame(comparisons, columns=COMPARISON_COLUMNS)
    tested = [i for i, boot in enumerate(diffs) if boot is not None]
    if tested:      # one family: every comparison with something named, every budget of every trace
        p = comp.loc[tested, "diff_p"].to_numpy()
        comp.loc[tested, "diff_p_holm"] = holm(p)
        for i, level in zip(tested, holm_levels(p)):
            lo, hi = np.percentile(diffs[i], [100 * level / 2, 100 * (1 - level / 2)])
            comp.loc[i, ["diff_lo", "diff_hi"]] = float(lo), float(hi)
    if len(comp):
        comp["verdict"] = [_verdict(r) for r in comp.to_dict("records")]
    return pd.DataFrame(rows, columns=BUDGET_COLUMNS), comp


def _spark_as_run(uncapped: pd.DataFrame, split: Split, b: float, jobs: Sequence[int]) -> pd.DataFrame | None:
    """Spark's rule as Spark runs it (``spark_answer.as_run``): uncapped, each scored job's setting
    chosen within ``b`` on its choosing jobs where named, else the one it ran with (point
    ``current``, shown as no copy where speculation was off)."""
    s = uncapped[uncapped["method"] == TUNED_RULE]
    if s.empty:
        return None
    procedure, _ = as_run(s, split, b)
    procedure["point"] = procedure["point"].where(procedure["changed"] | s["point"].eq(CURRENT).any(), NO_COPY)
    return procedure[procedure["job_id"].isin(jobs)]


def _row(trace, method, b, mode, labels, t: pd.DataFrame, n_boot, seed, explore, spark, hindsight, area,
         bound: pd.Series, oracle: pd.Series, beaten: int) -> tuple:
    lo, hi = paired_interval(t["jct_reduction"].to_numpy(), n_boot, seed)
    spend = t["extra_machine_share"]
    copies = t["point"] != NO_COPY
    if hindsight is not None and len(hindsight):
        best_point = hindsight.idxmax()
        in_sample, point = float(hindsight.max()), str(best_point)
    else:
        in_sample, point = np.nan, NO_COPY
    return (trace, method, b, mode, bool(labels), len(t), float(t["jct_reduction"].mean()), lo, hi,
            float(spend.mean()), float(spend.mean() / b), int((spend > b + 1e-12).sum()), float(spend.quantile(0.9)),
            float(t["n_copies"].mean()),
            t.loc[copies, "point"].mode().iloc[0] if copies.any() else NO_COPY, int((~copies).sum()),
            *explore, *spark,
            in_sample, point, area, float(bound.mean()) if len(bound) else np.nan,
            float(oracle.mean()) if len(oracle) else np.nan, beaten)
