"""The operator's budget curves: per trace, the best cut in job completion time each method reaches
within a budget of extra machine time, and the caption that says what is drawn.

Each method's line is the upper envelope of its sweep (a step line up to ``X_MAX``): free rules
dashed, learned methods solid (the ``LEGEND_LEARNED`` with the largest area to 5% in colour, any
others thin grey), Spark's rule tuned on earlier jobs bold black at each budget, the headroom gold
stars, the oracle a star. Lines that coincide (methods whose envelopes are equal everywhere) are
drawn once and named together, so none hides under another. Plain pandas in; a PNG and words out.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from stragglers.prediction.verdicts.budgets import ENFORCED
from stragglers.prediction.engine.policies import ORACLE
from stragglers.prediction.methods import FREE_RULES, is_learned
from stragglers.reports.page import figures
from stragglers.reports.page.style import display_name, style_for
from stragglers.reports.page.words import SPARK

#: the learned methods drawn in colour (by their area to 5%); any others are thin grey lines
LEGEND_LEARNED = 5
X_MAX = 0.1
_GRID = np.linspace(0, X_MAX, 201)


def _enforced(b: pd.DataFrame) -> pd.DataFrame:
    return b[b["cap_mode"] == ENFORCED] if "cap_mode" in b else b


def envelopes(curve: pd.DataFrame) -> dict[str, np.ndarray]:
    """Per method of one trace's sweep (not the oracle): its best cut within each extra machine time
    of ``_GRID`` (a share), 0 below its cheapest point."""
    out = {}
    for method, g in curve.groupby("method", sort=True):
        if method == ORACLE:
            continue
        ex, jc = g["extra_machine_share"].to_numpy(float), g["jct_reduction"].to_numpy(float)
        out[method] = np.array([max([0.0] + [y for x, y in zip(ex, jc) if x <= v + 1e-12]) for v in _GRID])
    return out


def _coloured(budgets: pd.DataFrame) -> set[str]:
    area = _enforced(budgets).groupby("method")["area_to_5pct"].first()
    learned = [m for m in area.sort_values(ascending=False).index if is_learned(m)]
    return set(learned[:LEGEND_LEARNED]) | {"nurd"}


def line_groups(curve: pd.DataFrame) -> list[list[str]]:
    """The lines drawn for one trace: each a group of methods whose envelopes coincide (within 0.01
    points), the free rules first."""
    env = envelopes(curve)
    order = sorted(env, key=lambda m: (m not in FREE_RULES, display_name(m)))
    return figures.coinciding({m: env[m] for m in order}, atol=1e-4)


def plot_budget_curves(curves: pd.DataFrame, budgets: pd.DataFrame, path) -> Path:
    """The figure (module doc), one panel per trace."""
    plt = figures._plt()
    traces = sorted(curves["trace"].unique())
    fig, axes = plt.subplots(len(traces), 1, figsize=(figures.FIGURE_IN, 5.6 * max(1, len(traces))),
                             squeeze=False, layout="constrained")
    for ax, trace in zip(axes[:, 0], traces):
        c = curves[curves["trace"] == trace]
        b = budgets[budgets["trace"] == trace]
        env, coloured = envelopes(c), _coloured(b)
        grey = False
        for group in line_groups(c):
            first = group[0]
            st = style_for(first)
            label = figures.together(group, display_name) + ("; 0 all along" if not env[first].any() else "")
            if all(m in FREE_RULES for m in group):
                ax.plot(_GRID * 100, env[first] * 100, linestyle="--", color=st.color, linewidth=1.6,
                        label=f"{label} (free rule)")
            elif any(m in coloured or m in FREE_RULES for m in group):
                ax.plot(_GRID * 100, env[first] * 100, color=st.color, linewidth=1.8, label=label)
            else:
                grey = True
                ax.plot(_GRID * 100, env[first] * 100, color="0.7", linewidth=0.8, zorder=1)
        if grey:
            ax.plot([], [], color="0.7", linewidth=0.8, label="other learned methods (grey)")
        tuned = _enforced(b)[_enforced(b)["method"] == SPARK].sort_values("budget")
        if len(tuned):
            ax.plot(tuned["extra_machine_share"] * 100, tuned["jct_reduction"] * 100, color="black", linewidth=3.0,
                    marker="o", label="Spark tuned on earlier jobs, at each budget", zorder=5)
        head = (b.groupby("budget")["headroom"].first().dropna() if "headroom" in b else pd.Series(dtype=float))
        if len(head):
            ax.plot(head.index * 100, head.to_numpy() * 100, color="goldenrod", linewidth=2.0, marker="*",
                    markersize=12, label="headroom at each budget", zorder=6)
        orc = c[c["method"] == ORACLE]
        if len(orc):
            o = orc.iloc[0]
            ax.scatter([min(o.extra_machine_share, X_MAX) * 100], [o.jct_reduction * 100], marker="*", s=220,
                       color="gold", edgecolor="black", zorder=6,
                       label=f"oracle, no budget ({o.extra_machine_share * 100:.1f}% extra)")
        for bud in sorted(b["budget"].unique()):
            ax.axvline(bud * 100, color="0.85", linewidth=0.8, zorder=0)
        ax.set_xlim(0, X_MAX * 100)
        ax.set_xlabel("extra machine time (% of the jobs' own)")
        ax.set_ylabel("jobs' completion time shortened by (%)")
        ax.set_title(f"{trace}: the best cut each method reaches within a budget of extra machine time")
        ax.grid(alpha=0.3)
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    return figures._save(plt, fig, path)


def budget_curves_notes(curves: pd.DataFrame) -> str:
    """What the figure draws as one line, and what sits at 0 throughout, per trace, in words."""
    out = []
    for trace in sorted(curves["trace"].unique()):
        c = curves[curves["trace"] == trace]
        env = envelopes(c)
        said = []
        for group in line_groups(c):
            names = ", ".join(display_name(m) for m in group)
            if not env[group[0]].any():
                said.append(f"at 0 all along (no setting within {X_MAX * 100:g}% extra machine time shortens "
                            f"jobs): {names}")
            elif len(group) > 1:
                said.append(f"one line for {names} (the same best cut at every budget)")
        if said:
            out.append(f"On {trace}: " + "; ".join(said) + ".")
    return " ".join(out)
