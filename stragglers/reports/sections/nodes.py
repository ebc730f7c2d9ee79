"""Node-ranking report: tables and figures beside Ouyang et al. (SCC 2016), written under
``<reports>/nodes/`` (nodes.md, CSV, PNG)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from stragglers.nodes.ranking import best_fit_counts, level_table
from stragglers.reports.page.files import legend, md, pyplot, save_figure, write_text

# Ouyang et al., Table 4 (MapReduce jobs, 12,583 nodes) and Section V-A (132 sampled nodes).
PAPER_LEVELS = pd.DataFrame({"level": [0, 1, 2, 3, 4], "paper_nodes": [105, 1772, 7265, 3386, 55],
                             "paper_share": [0.0083, 0.1408, 0.5774, 0.2691, 0.0044]})
PAPER_LOGLOGISTIC3_BEST = (0.8485, 0.8864)   # two samples of 132 nodes


def truth_checks(ind: pd.DataFrame, planted: pd.DataFrame) -> pd.DataFrame:
    """A.6 on the embedded trace: Spearman rank correlation of each indicator with the
    planted slowdown, and precision / recall of level 0 against the chronically slow machines."""
    df = ind.merge(planted, on="machine_id", how="inner")
    rows = []
    for col in ("mean_z", "quantile_z", "p_extreme", "ci_hi"):
        rho = stats.spearmanr(df[col], df["slowdown"]).statistic if len(df) > 2 else np.nan
        rows.append({"check": f"spearman({col}, planted slowdown)", "value": float(rho), "nodes": len(df)})
    flagged = df["level"] == 0
    chronic = df["chronic"]
    tp = int((flagged & chronic).sum())
    rows.append({"check": "level-0 precision vs planted chronic", "value": tp / flagged.sum() if flagged.sum() else np.nan,
                 "nodes": int(flagged.sum())})
    rows.append({"check": "level-0 recall vs planted chronic", "value": tp / chronic.sum() if chronic.sum() else np.nan,
                 "nodes": int(chronic.sum())})
    return pd.DataFrame(rows)


def _trend(durations: pd.DataFrame, ind: pd.DataFrame, n_nodes: int = 5) -> tuple[pd.DataFrame, str]:
    """Mean z per node and period for the ranked nodes with most tasks (the paper's Fig. 7:
    days; hours when the events span less than 3 days)."""
    span_h = (durations["end_us"].max() - durations["end_us"].min()) / 3.6e9
    unit, per = ("day", 86_400e6) if span_h >= 72 else ("hour", 3_600e6)
    top = ind.nlargest(n_nodes, "n_tasks")["machine_id"]
    d = durations[durations["machine_id"].isin(top)].copy()
    d["period"] = (d["end_us"] // per).astype(int)
    return d.groupby(["machine_id", "period"])["z"].mean().rename("mean_z").reset_index(), unit


def write_node_report(out: Path, trace: str, ind: pd.DataFrame, fits: pd.DataFrame, durations: pd.DataFrame,
                      machines: pd.DataFrame | None, checks: pd.DataFrame | None, settings: dict,
                      gain: pd.DataFrame | None = None) -> dict:
    """Write ``out/nodes_<trace>.md`` with its CSV and PNG files; returns the tables and figure paths."""
    out.mkdir(parents=True, exist_ok=True)
    plt = pyplot()
    levels = level_table(ind).merge(PAPER_LEVELS, on="level", how="outer").sort_values("level")
    for col in ("level", "nodes", "paper_nodes"):
        levels[col] = levels[col].astype("Int64")
    best = best_fit_counts(fits) if len(fits) else pd.DataFrame()
    tables = {"levels": levels, "best_fit": best}
    figs = {}

    if len(best):
        fig, ax = plt.subplots(figsize=(7, 3.5))
        ax.barh(best["distribution"], best["best_fit_nodes"])
        ax.invert_yaxis()
        ax.set_xlabel(f"nodes where it is the best fit (of {fits.machine_id.nunique()})")
        ax.set_title(f"{trace}: best fit by Anderson-Darling (paper: 3p log-logistic 85-89%)")
        figs["best_fit"] = save_figure(fig, out / f"nodes_{trace}_best_fit.png")

    if machines is not None and len(machines) and len(ind):   # no node ranked (a short mirror): no table
        m = ind.merge(machines, on="machine_id", how="left")
        m["server_type"] = "CPU " + m["cpus"].map("{:.2f}".format) + " / mem " + m["memory"].map("{:.2f}".format)
        groups = m.groupby("server_type")
        cap = groups.agg(nodes=("machine_id", "size"), median_mean_z=("mean_z", "median"),
                         median_p_extreme=("p_extreme", "median"), level0_share=("level", lambda s: (s == 0).mean()))
        cap = cap.reset_index().sort_values("nodes", ascending=False)
        tables["by_capacity"] = cap
        shown = cap[cap.nodes >= 3]["server_type"].tolist()[:8]
        if shown:
            fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
            for ax, col, title in ((axes[0], "mean_z", "mean normalized duration"),
                                   (axes[1], "p_extreme", "extreme-value possibility")):
                ax.boxplot([m.loc[m.server_type == s, col].to_numpy() for s in shown], vert=False)
                ax.set_yticks(range(1, len(shown) + 1), shown, fontsize=7)
                ax.set_title(f"{title} by server type (Fig. 6)", fontsize=9)
            figs["by_capacity"] = save_figure(fig, out / f"nodes_{trace}_by_capacity.png")

    if len(durations):
        trend, unit = _trend(durations, ind)
        tables["trend"] = trend
        fig, ax = plt.subplots(figsize=(7, 3.5))
        for mid, g in trend.groupby("machine_id"):
            ax.plot(g["period"] - trend["period"].min(), g["mean_z"], marker="o", label=str(mid))
        ax.axhline(0, color="grey", lw=0.5)
        ax.set_xlabel(f"{unit} of the trace")
        ax.set_ylabel("mean z")
        ax.set_title(f"{trace}: node performance over time (Fig. 7), 5 busiest nodes", fontsize=9)
        legend(ax, fontsize=6)
        figs["trend"] = save_figure(fig, out / f"nodes_{trace}_trend.png")
    if checks is not None:
        tables["truth_checks"] = checks
    if gain is not None:
        tables["relaunch_gain"] = gain

    for name, df in tables.items():
        df.to_csv(out / f"nodes_{trace}_{name}.csv", index=False)
    ll3 = best[best.distribution == "3-parameter log-logistic"]["best_fit_share"] if len(best) else pd.Series([])
    text = [f"# Node ranking on `{trace}` (Ouyang et al., SCC 2016)", "",
            f"Settings: {settings}.", "",
            f"Ranked nodes: {len(ind)} (>= {settings.get('min_tasks_per_node')} finished tasks of selected jobs); "
            f"tasks: {len(durations)}; distribution fits on {fits.machine_id.nunique() if len(fits) else 0} nodes.", "",
            "## P-cores levels on the confidence interval (paper: Table 4, MapReduce jobs)", "", md(levels), "",
            "## Best-fit distribution by Anderson-Darling (paper: 3-parameter log-logistic best on "
            f"{PAPER_LOGLOGISTIC3_BEST[0]:.1%} / {PAPER_LOGLOGISTIC3_BEST[1]:.1%} of 132 nodes; here "
            f"{float(ll3.iloc[0]) if len(ll3) else float('nan'):.1%})", "", md(best), ""]
    if "by_capacity" in tables:
        text += ["## Performance by server type (paper: Fig. 6, capacity does not predict speed)", "",
                 md(tables["by_capacity"]), ""]
    if checks is not None:
        text += ["## Against the planted ground truth (embedded trace)", "", md(checks), ""]
    if gain is not None:
        text += ["## Relaunching only on machines above level 0 (completion time, Algorithm 2)", "", md(gain), ""]
    text += [f"![{k}]({p.name})" for k, p in figs.items()]
    report = write_text(out / f"nodes_{trace}.md", "\n".join(text) + "\n")
    return {"report": report, "tables": tables, "figures": figs}
