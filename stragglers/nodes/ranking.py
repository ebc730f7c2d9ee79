"""Indicators of node performance (Ouyang et al., Table 1) and the P-cores ranking
(Section III-E) on the per-node z-normalized task durations."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from stragglers.nodes.fitting import LOGLOGISTIC3, fit, rank_candidates
from stragglers.settings.nodes import NodeSettings

INDICATOR_COLUMNS = ["machine_id", "n_tasks", "mean_z", "sd_z", "ci_lo", "ci_hi", "quantile_z",
                     "p_extreme", "interval_lo", "interval_hi"]


def pcores_levels(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """P-cores levels of intervals [lo_i, hi_i] (Section III-E, after Sun et al. [25]).

    Edge i -> j when lo_j > hi_i (j is certainly slower than i). Round k removes
    every remaining node without an outgoing edge; those get level k. Level 0 =
    the slowest nodes. Node i has an outgoing edge among the remaining nodes iff
    max(lo_j) > hi_i, so a round costs O(n).
    """
    lo = np.asarray(lo, dtype=float)
    hi = np.asarray(hi, dtype=float)
    if lo.shape != hi.shape or np.any(lo > hi):
        raise ValueError("intervals need lo <= hi, one of each per node")
    level = np.full(len(lo), -1, dtype=int)
    remaining = np.ones(len(lo), dtype=bool)
    k = 0
    while remaining.any():
        top = lo[remaining].max()
        sinks = remaining & ~(top > hi)
        level[sinks] = k
        remaining &= ~sinks
        k += 1
    return level


def node_indicators(durations: pd.DataFrame, settings: NodeSettings) -> pd.DataFrame:
    """One row per machine with >= min_tasks_per_node tasks: the Table 1 indicators.

    mean, sd and the confidence interval of the mean (Student t) are of the sample;
    the quantile and P(z > extreme_z) of the node's fitted 3-parameter log-logistic
    (the paper's dominant best fit; Algorithm 1 line 8 takes indicators from the fit);
    ``interval_lo/hi`` is the interval P-cores ranks on (``settings.interval``)."""
    rows = []
    alpha = 1 - settings.confidence
    for machine, z in durations.groupby("machine_id", sort=True)["z"]:
        x = z.to_numpy(dtype=float)
        n = len(x)
        if n < settings.min_tasks_per_node:
            continue
        mean, sd = float(x.mean()), float(x.std(ddof=1))
        half = float(stats.t.ppf(1 - alpha / 2, n - 1) * sd / np.sqrt(n))
        frozen = fit(LOGLOGISTIC3, x)
        if frozen is None:      # a degenerate sample: fall back on the empirical values
            q, p_ext = float(np.quantile(x, settings.quantile)), float(np.mean(x > settings.extreme_z))
            f_lo, f_hi = (float(v) for v in np.quantile(x, [alpha / 2, 1 - alpha / 2]))
        else:
            q, p_ext = float(frozen.ppf(settings.quantile)), float(frozen.sf(settings.extreme_z))
            f_lo, f_hi = (float(v) for v in frozen.ppf([alpha / 2, 1 - alpha / 2]))
        lo, hi = (mean - half, mean + half) if settings.interval == "mean" else (f_lo, f_hi)
        rows.append((machine, n, mean, sd, mean - half, mean + half, q, p_ext, lo, hi))
    out = pd.DataFrame(rows, columns=INDICATOR_COLUMNS)
    out["level"] = pcores_levels(out["interval_lo"].to_numpy(), out["interval_hi"].to_numpy()) if len(out) else []
    return out


def sample_nodes(indicators: pd.DataFrame, machines: pd.DataFrame | None, settings: NodeSettings) -> list:
    """The nodes whose 9 distributions are fitted: all ranked nodes, or a seeded sample of
    ``fit_sample_nodes`` stratified by server type (CPU, memory) in proportion, as in
    the paper's Section IV-B."""
    ids = indicators["machine_id"].to_list()
    k = settings.fit_sample_nodes
    if k == 0 or k >= len(ids):
        return ids
    rng = np.random.default_rng(settings.seed)
    df = indicators[["machine_id"]].copy()
    if machines is not None and len(machines):
        df = df.merge(machines[["machine_id", "cpus", "memory"]], on="machine_id", how="left")
        df["stratum"] = df["cpus"].astype(str) + "/" + df["memory"].astype(str)
    else:
        df["stratum"] = "all"
    groups = [g["machine_id"].to_numpy() for _, g in df.groupby("stratum", sort=True)]
    # proportional allocation by largest remainder: the quotas sum to k exactly
    quota = np.array([k * len(g) / len(df) for g in groups])
    take = np.floor(quota).astype(int)
    take[np.argsort(-(quota - take), kind="stable")[: k - take.sum()]] += 1
    picked = []
    for g, m in zip(groups, take):
        picked += rng.choice(g, size=min(int(m), len(g)), replace=False).tolist()
    return sorted(picked)


def node_fits(durations: pd.DataFrame, nodes: list, log=None) -> pd.DataFrame:
    """For every node of ``nodes``: every candidate's A^2 and rank (1 = best fit)."""
    rows = []
    by_machine = dict(tuple(durations.groupby("machine_id")["z"]))
    for i, m in enumerate(nodes):
        ranked = rank_candidates(by_machine[m].to_numpy(dtype=float))
        for r, (name, a2, params) in enumerate(ranked, start=1):
            rows.append((m, name, a2, r if np.isfinite(a2) else None, ", ".join(f"{p:.4g}" for p in params)))
        if log and (i + 1) % 25 == 0:
            log(f"fitted 9 distributions on {i + 1}/{len(nodes)} nodes")
    out = pd.DataFrame(rows, columns=["machine_id", "distribution", "ad_statistic", "rank", "parameters"])
    out["rank"] = out["rank"].astype("Int64")
    return out


def best_fit_counts(fits: pd.DataFrame) -> pd.DataFrame:
    """How often each distribution is the best fit (rank 1) and in the top 3."""
    n = fits["machine_id"].nunique()
    g = fits.groupby("distribution")
    out = pd.DataFrame({"best_fit_nodes": g["rank"].apply(lambda r: int((r == 1).sum())),
                        "top3_nodes": g["rank"].apply(lambda r: int((r <= 3).sum()))}).reset_index()
    out["best_fit_share"] = out["best_fit_nodes"] / max(n, 1)
    out["top3_share"] = out["top3_nodes"] / max(n, 1)
    return out.sort_values(["best_fit_nodes", "distribution"], ascending=[False, True]).reset_index(drop=True)


def level_table(indicators: pd.DataFrame) -> pd.DataFrame:
    """Nodes per P-cores level and their share (the paper's Table 4)."""
    counts = indicators.groupby("level").size().rename("nodes").reset_index()
    counts["share"] = counts["nodes"] / max(len(indicators), 1)
    return counts
