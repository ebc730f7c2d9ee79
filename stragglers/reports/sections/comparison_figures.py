"""The comparison report's figures: F1 over time (as the paper's Figures 2-3), the change in job
completion time under the paper's protocol (as its Figures 4-9; positive: longer), accuracy against
earliness, the protocol ablation and NURD's sensitivity. Each writes one PNG drawn at the page's
width (stragglers.reports.page.figures draws the shared layouts)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from stragglers.reports.page import figures
from stragglers.reports.sections.paper import PAPER_COMPLETION, PAPER_TRACE
from stragglers.reports.page.style import display_name, is_reference_rule, style_for
from stragglers.reports.sections.tables import completion_summary


def plot_f1_over_time(table: pd.DataFrame, path) -> Path:
    """Mean F1 against normalized time k/10, small multiples (stragglers.reports.page.figures)."""
    return figures.small_multiples(
        table.assign(t=table["k"] / 10), "t", "f1", path, label=display_name, ylim=(0, 1),
        xlabel="normalized time t = k/10 of [t0, tau] (fraction)",
        ylabel="F1 of flags raised so far (mean over jobs, 0-1)", title="F1 over normalized time")


def _paper_nurd(algorithm: str) -> dict[str, float]:
    pc = PAPER_COMPLETION.set_index(["paper_trace", "algorithm"])["nurd_reduction"]
    return {t: float(pc[(p, algorithm)]) for t, p in PAPER_TRACE.items() if (p, algorithm) in pc}


CHANGE_LABEL = "change in job completion time (%; positive: longer, negative: shorter)"


def _as_change(table: pd.DataFrame, column: str) -> pd.DataFrame:
    """``column`` (a reduction: positive = shorter) as the change in job completion time (positive = longer)."""
    return table.assign(**{column: -table[column]})


def plot_completion_unlimited(completion_df: pd.DataFrame, path) -> Path:
    """Bar per method, Algorithm 2 (as the paper's Figures 4-5); error bars: std over seeds."""
    sub = _as_change(completion_df[completion_df["algorithm"] == "unlimited"], "reduction_mean")
    paper = {t: -v for t, v in _paper_nurd("unlimited").items()}
    return figures.method_bars(sub, "reduction_mean", "reduction_std_over_seeds", path, label=display_name,
                               xlabel=CHANGE_LABEL + ", mean over jobs and seeds",
                               title="Unlimited machines (Algorithm 2)", paper=paper)


def plot_completion_limited_avg(completion_df: pd.DataFrame, path) -> Path:
    """Bar per method, Algorithm 3 averaged over machine counts (as the paper's Figures 8-9)."""
    s = _as_change(completion_summary(completion_df), "limited_avg")
    paper = {t: -v for t, v in _paper_nurd("limited_avg").items()}
    return figures.method_bars(s, "limited_avg", None, path, label=display_name,
                               xlabel=CHANGE_LABEL + ", mean over machine counts",
                               title="Limited machines, averaged (Algorithm 3)", paper=paper)


def plot_completion_limited(completion_df: pd.DataFrame, path) -> Path:
    """The change against the number of machines, small multiples (as the paper's Figures 6-7)."""
    sub = _as_change(completion_df[completion_df["algorithm"] == "limited"], "reduction_mean")
    return figures.small_multiples(sub, "machines", "reduction_mean", path, label=display_name, y_scale=100,
                                   xlabel="machines available to the job (count)",
                                   ylabel="change in job completion time (%; positive: longer)",
                                   title="Change in job completion time with limited machines (Algorithm 3)")


def _scatter_panels(traces):
    plt = figures._plt()
    fig, axes = plt.subplots(1, max(1, len(traces)), figsize=(figures.FIGURE_IN, 5.6), squeeze=False,
                             layout="constrained")
    return plt, fig, axes[0]


def accuracy_vs_earliness_figure(t3: pd.DataFrame):
    """F1 (x) against f1_auc (y) per method, one panel per trace: the Figure, labels placed."""
    traces = sorted(t3["trace"].unique())
    plt, fig, axes = _scatter_panels(traces)
    for ax, trace in zip(axes, traces):
        g = t3[t3["trace"] == trace].dropna(subset=["f1", "f1_auc"])
        for r in g.itertuples(index=False):
            st = style_for(r.method)
            ax.scatter(r.f1, r.f1_auc, color=st.color, marker=st.marker, s=40 if st.highlight else 22, zorder=3)
        ax.plot([0, 1], [0, 1], color="0.8", linewidth=0.8)
        ax.set_xlim(-0.03, 1.03)      # a point at 0 or 1 (the oracle, a rule that never flags) drawn whole
        ax.set_ylim(-0.07, 1.07)      # and room for their labels above and below
        ax.set_xlabel("final F1 (mean over jobs, 0-1)")
        ax.set_ylabel("F1 AUC: F1 averaged over normalized time (0-1)")
        ax.set_title(f"Accuracy vs earliness: {trace}")
        ax.grid(alpha=0.3)
    figures.freeze_layout(fig)
    for ax, trace in zip(axes, traces):
        g = t3[t3["trace"] == trace].dropna(subset=["f1", "f1_auc"])
        figures.label_points(ax, g["f1"], g["f1_auc"], [display_name(m) for m in g["method"]])
    return plt, fig


def plot_accuracy_vs_earliness(t3: pd.DataFrame, path) -> Path:
    return figures._save(*accuracy_vs_earliness_figure(t3), path)


def plot_ablation(ablation: pd.DataFrame, path) -> Path:
    """F1 and f1_auc per method under each protocol variant (rows of ``protocol_ablation``)."""
    plt = figures._plt()
    variants = list(dict.fromkeys(ablation["variant"]))
    methods = figures.ordered(ablation["method"])
    fig, axes = plt.subplots(1, 2, figsize=(figures.FIGURE_IN, 0.45 * len(variants) + 2.6), sharey=True,
                             layout="constrained")
    y = np.arange(len(variants))
    h = 0.8 / max(1, len(methods))
    for ax, metric in zip(axes, ("f1", "f1_auc")):
        for i, m in enumerate(methods):
            sub = ablation[ablation["method"] == m].groupby("variant")[metric].mean().reindex(variants)
            st = style_for(m)
            ax.barh(y + i * h - 0.4 + h / 2, sub.to_numpy(), height=h, color=st.color, label=display_name(m),
                    hatch="//" if is_reference_rule(m) else None)
        ax.set_xlim(0, 1)
        ax.set_xlabel(f"{'F1 AUC' if metric == 'f1_auc' else 'F1'} (mean over jobs, 0-1)")
        ax.grid(axis="x", alpha=0.3)
    axes[0].set_yticks(y, variants)
    axes[0].invert_yaxis()
    fig.legend(*axes[1].get_legend_handles_labels(), loc="outside lower center", ncol=4, frameon=False)
    fig.suptitle("Protocol ablation: the authors' preset, each setting switched back, and ours")
    return figures._save(plt, fig, path)


def plot_sensitivity(sens: pd.DataFrame, path) -> Path:
    """F1 and f1_auc against the straggler quantile, one line per method (NURD: per alpha)."""
    plt = figures._plt()
    fig, axes = plt.subplots(1, 2, figsize=(figures.FIGURE_IN, 5.5), sharey=True, layout="constrained")
    linestyles = ("-", "--", ":", "-.")
    for ax, metric in zip(axes, ("f1", "f1_auc")):
        for m in figures.ordered(sens["method"]):
            sm = sens[sens["method"] == m]
            alphas = sorted(sm["alpha"].dropna().unique()) or [np.nan]
            for j, a in enumerate(alphas):
                s2 = (sm if np.isnan(a) else sm[sm["alpha"] == a]).sort_values("quantile")
                kw = style_for(m).line_kwargs()
                if not np.isnan(a):
                    kw["linestyle"] = linestyles[j % len(linestyles)]
                label = display_name(m) + ("" if np.isnan(a) else f", alpha {a:g}")
                ax.plot(s2["quantile"], s2[metric], label=label, **kw)
        ax.set_xlabel("straggler quantile (tau = the job's latency quantile)")
        ax.set_ylabel(f"{'F1 AUC' if metric == 'f1_auc' else 'F1'} (mean over jobs, 0-1)")
        ax.set_ylim(0, 1)
        ax.grid(alpha=0.3)
    fig.legend(*axes[1].get_legend_handles_labels(), loc="outside lower center", ncol=4, frameon=False)
    fig.suptitle("NURD's sensitivity to alpha and the straggler quantile, beside the reference rules")
    return figures._save(plt, fig, path)
