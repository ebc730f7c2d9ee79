"""The report's figures, legible with 26+ methods.

Every method keeps its look from ``style.style_for`` in every figure. Line
figures are small multiples: one row per trace, one panel per group of
families with at most ``MAX_LINES_PER_PANEL`` methods of its own, and NURD
plus the reference rules drawn in every panel as yardsticks. Bar figures are
horizontal, one bar per method grouped by family, the reference rules on a
shaded band of their own. Units are on every axis.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from stragglers.reports.style import FAMILIES, REFERENCE_FAMILY, family_of, sort_key, style_for

MAX_LINES_PER_PANEL = 7
YARDSTICKS = ("nurd", *FAMILIES[REFERENCE_FAMILY])
# Families drawn together in one panel (each group is split further when crowded).
PANEL_GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("NURD family and reference rules", ("NURD family", REFERENCE_FAMILY)),
    ("outlier detectors", ("outlier detectors",)),
    ("PU learning, survival, Wrangler", ("PU learning", "survival / censored regression", "Wrangler")),
)


def _plt():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def ordered(methods) -> list[str]:
    return sorted(dict.fromkeys(methods), key=sort_key)


def panels(methods) -> list[tuple[str, list[str]]]:
    """[(title, methods drawn)] for the methods present; yardsticks in every panel."""
    present = ordered(methods)
    grouped = {f for _, fams in PANEL_GROUPS for f in fams}
    groups = [(title, [m for m in present if family_of(m) in fams]) for title, fams in PANEL_GROUPS]
    rest = [m for m in present if family_of(m) not in grouped]
    if rest:
        groups.append(("other methods", rest))
    out = []
    yard = [m for m in present if m in YARDSTICKS]
    for title, members in groups:
        own = [m for m in members if m not in YARDSTICKS]
        if not own and title != PANEL_GROUPS[0][0]:
            continue
        chunks = [own[i:i + MAX_LINES_PER_PANEL] for i in range(0, len(own), MAX_LINES_PER_PANEL)] or [[]]
        for n, chunk in enumerate(chunks, 1):
            label = title if len(chunks) == 1 else f"{title} ({n}/{len(chunks)})"
            drawn = ordered([*chunk, *yard])
            if drawn:
                out.append((label, drawn))
    return out


def _save(plt, fig, path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100, bbox_inches="tight", format="png")
    plt.close(fig)
    return path


def small_multiples(table: pd.DataFrame, x: str, y: str, path, *, xlabel: str, ylabel: str,
                    title: str, label: Callable[[str], str], ylim=None, y_scale: float = 1.0) -> Path:
    """Lines of ``y`` against ``x`` per method: rows = traces, columns = panels."""
    plt = _plt()
    traces = sorted(table["trace"].unique())
    layout = panels(table["method"].unique())
    ncols = max(1, len(layout))
    fig, axes = plt.subplots(len(traces), ncols, figsize=(4.6 * ncols, 3.9 * len(traces) + 0.9),
                             squeeze=False, sharey=True)
    for r, trace in enumerate(traces):
        sub = table[table["trace"] == trace]
        for c, (panel, methods) in enumerate(layout):
            ax = axes[r][c]
            for m in methods:
                s = sub[sub["method"] == m].sort_values(x)
                if len(s):
                    ax.plot(s[x], s[y] * y_scale, label=label(m), **style_for(m).line_kwargs())
            ax.set_title(f"{trace}: {panel}", fontsize=9)
            ax.set_xlabel(xlabel, fontsize=8)
            if c == 0:
                ax.set_ylabel(ylabel, fontsize=8)
            if ylim is not None:
                ax.set_ylim(*ylim)
            ax.grid(alpha=0.3)
            ax.tick_params(labelsize=7)
            if r == len(traces) - 1:
                ax.legend(fontsize=7, ncol=2, loc="upper center", bbox_to_anchor=(0.5, -0.2), frameon=False)
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    return _save(plt, fig, path)


def method_bars(table: pd.DataFrame, value: str, err: str | None, path, *, xlabel: str, title: str,
                label: Callable[[str], str], paper: dict[str, float] | None = None,
                scale: float = 100.0) -> Path:
    """Horizontal bars, one per method, grouped by family (top to bottom), one panel per trace.

    The reference rules sit on a shaded band; ``paper`` maps a trace to the
    paper's NURD value, drawn as a vertical dashed line.
    """
    plt = _plt()
    traces = sorted(table["trace"].unique())
    n_methods = table["method"].nunique()
    fig, axes = plt.subplots(1, len(traces), figsize=(6.2 * len(traces), 0.28 * n_methods + 1.6),
                             squeeze=False)
    for ax, trace in zip(axes[0], traces):
        sub = table[table["trace"] == trace].set_index("method")
        methods = ordered(sub.index)
        ypos = np.arange(len(methods))[::-1]
        vals = sub.loc[methods, value].to_numpy(dtype=float) * scale
        errs = sub.loc[methods, err].fillna(0).to_numpy(dtype=float) * scale if err and err in sub else None
        colors = [style_for(m).color for m in methods]
        rules = [i for i, m in enumerate(methods) if family_of(m) == REFERENCE_FAMILY]
        if rules:
            lo, hi = ypos[max(rules)] - 0.5, ypos[min(rules)] + 0.5
            ax.axhspan(lo, hi, color="#fde0c5", alpha=0.6, zorder=0, label="reference rules (no model)")
        for i in range(1, len(methods)):       # a rule between families
            if family_of(methods[i]) != family_of(methods[i - 1]):
                ax.axhline(ypos[i] + 0.5, color="#999999", linewidth=0.6, zorder=1)
        ax.barh(ypos, np.nan_to_num(vals), xerr=errs, color=colors, edgecolor="white", capsize=2, zorder=2,
                error_kw={"elinewidth": 0.8, "ecolor": "#555555"})
        for y_, v, m in zip(ypos, vals, methods):
            if np.isnan(v):
                ax.text(0, y_, " no value", va="center", fontsize=7, color="#777777")
        ax.set_yticks(ypos, [label(m) for m in methods], fontsize=8)
        for tick, m in zip(ax.get_yticklabels(), methods):
            if style_for(m).highlight:
                tick.set_fontweight("bold")
        ax.axvline(0, color="grey", linewidth=0.8)
        if paper and trace in paper and not pd.isna(paper[trace]):
            ax.axvline(paper[trace] * scale, color="black", linestyle="--", linewidth=1,
                       label=f"paper: NURD {paper[trace] * scale:.1f}")
        ax.set_xlabel(xlabel, fontsize=8)
        ax.set_title(f"{title}: {trace}", fontsize=10)
        ax.grid(axis="x", alpha=0.3)
        ax.set_ylim(-0.6, len(methods) - 0.4)
        handles, _ = ax.get_legend_handles_labels()
        if handles:
            ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    return _save(plt, fig, path)
