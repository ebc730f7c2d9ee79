"""The comparison's tables derived from the evaluations: F1 over time (Figures 2-3), the
completion-time summary (Figures 4-9) and Table 3 with each method's completion time.

Plain pandas in, frames out. Table 3 itself (per (trace, method) mean TPR / FPR / FNR / F1 over
jobs with 95% bootstrap intervals, pooled figures, best F1) is
``stragglers.prediction.replay.metrics.table3``; the paper's numbers beside it are
``stragglers.reports.sections.paper.compare_with_paper``. Decisions of Table 3:

- Bootstrap: percentile intervals, ``n_boot`` resamples of the jobs of each
  (trace, method) with replacement. The generator for a group is
  ``default_rng([seed, crc32(trace), crc32(method)])``, so a group's interval
  does not change when other methods or traces are added.
- Metrics undefined for a job (NaN, e.g. FPR of a job with no negatives)
  are left out of that metric's mean (``nanmean``), as in the mean itself.
- Pooled figures: tpr = sum tp / (sum tp + sum fn), fpr = sum fp / (sum fp +
  sum tn), fnr = 1 - tpr, f1 = 2 sum tp / (2 sum tp + sum fp + sum fn),
  columns ``pooled_<m>`` with the same
  bootstrap over jobs.
- ``best_f1`` marks the largest mean F1 per trace (every method on a tie).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from stragglers.prediction.replay.metrics import sort_by_method as _sort
from stragglers.reports.sections.paper import PAPER_COMPLETION, PAPER_TRACE


# ---------------------------------------------------------------------------
# F1 over time (Figures 2-3)
# ---------------------------------------------------------------------------

def f1_over_time_table(df: pd.DataFrame) -> pd.DataFrame:
    """Mean F1 over jobs per (trace, method, k); columns trace, method, k, f1, n_jobs."""
    need = {"trace", "method", "job_id", "k", "f1"}
    if not need <= set(df.columns):
        raise ValueError(f"needs columns {sorted(need)}")
    out = (
        df.groupby(["trace", "method", "k"], sort=False)
        .agg(f1=("f1", "mean"), n_jobs=("job_id", "nunique"))
        .reset_index()
    )
    out["k"] = out["k"].astype(int)
    return _sort(out, ["trace", "method", "k"])



# ---------------------------------------------------------------------------
# Job completion time (Figures 4-9)
# ---------------------------------------------------------------------------

def completion_summary(completion_df: pd.DataFrame) -> pd.DataFrame:
    """Per (trace, method): unlimited reduction and the mean over machine counts.

    Columns: trace, method, unlimited, unlimited_std, limited_avg (mean of
    the limited rows' reduction_mean over machine counts), limited_min_machines,
    limited_max_machines, best_unlimited, best_limited_avg, and the paper's
    NURD figures for google_2011 / Alibaba traces (paper_nurd_unlimited,
    paper_nurd_limited_avg).
    """
    c = completion_df
    unl = c[c["algorithm"] == "unlimited"].set_index(["trace", "method"])
    lim = c[c["algorithm"] == "limited"].groupby(["trace", "method"]).agg(
        limited_avg=("reduction_mean", "mean"),
        limited_min_machines=("machines", "min"),
        limited_max_machines=("machines", "max"),
    )
    out = pd.DataFrame({
        "unlimited": unl["reduction_mean"],
        "unlimited_std": unl["reduction_std_over_seeds"],
        "n_jobs": unl["n_jobs"],
    }).join(lim, how="outer").reset_index()
    for col in ("unlimited", "limited_avg"):
        best = out.groupby("trace")[col].transform("max")
        out[f"best_{col}"] = (out[col] == best) & out[col].notna()
    pt = out["trace"].map(PAPER_TRACE)
    pc = PAPER_COMPLETION.set_index(["paper_trace", "algorithm"])["nurd_reduction"]
    out["paper_nurd_unlimited"] = [pc.get((p, "unlimited"), np.nan) if isinstance(p, str) else np.nan for p in pt]
    out["paper_nurd_limited_avg"] = [pc.get((p, "limited_avg"), np.nan) if isinstance(p, str) else np.nan for p in pt]
    return _sort(out, ["trace", "method"])



def with_completion(t3: pd.DataFrame, completion_df: pd.DataFrame | None) -> pd.DataFrame:
    """Table 3 with each method's completion-time reduction (Algorithm 2; Algorithm 3 averaged
    over machine counts) as columns ``completion_unlimited`` and ``completion_limited_avg``."""
    if completion_df is None or completion_df.empty:
        return t3.assign(completion_unlimited=np.nan, completion_limited_avg=np.nan)
    cs = completion_summary(completion_df)[["trace", "method", "unlimited", "limited_avg"]].rename(
        columns={"unlimited": "completion_unlimited", "limited_avg": "completion_limited_avg"})
    return t3.merge(cs, on=["trace", "method"], how="left")

